"""Wrong answers to the exercises of notebook 00 (setup), for the tests: SPOILERS."""

from __future__ import annotations

import math

WRONG = {
    "check_tensor_nbytes": {
        "counts elements, not bytes": lambda shape, dtype: math.prod(shape),
        "counts bits": lambda shape, dtype: math.prod(shape) * dtype.itemsize * 8,
        "assumes 4 bytes per element": lambda shape, dtype: math.prod(shape) * 4,
        "sums the shape": lambda shape, dtype: sum(shape) * dtype.itemsize,
        "returns a float": lambda shape, dtype: float(math.prod(shape) * dtype.itemsize),
    },
    "check_largest_square": {
        "ignores the dtype": lambda budget, dtype: math.isqrt(budget),
        "rounds up": lambda budget, dtype: math.ceil(math.sqrt(budget / dtype.itemsize)),
        "off by one, too small": lambda budget, dtype: max(0, math.isqrt(budget // dtype.itemsize) - 1),
        "returns a float": lambda budget, dtype: math.sqrt(budget / dtype.itemsize),
        "assumes float32": lambda budget, dtype: math.isqrt(budget // 4),
    },
    "check_largest_batch": {
        "forgets the weight": lambda budget, d, dtype: budget // dtype.itemsize // (2 * d),
        "forgets the output": lambda budget, d, dtype: max(0, (budget // dtype.itemsize - d * d) // d),
        "assumes float32": lambda budget, d, dtype: max(0, (budget // 4 - d * d) // (2 * d)),
        "negative when the weight does not fit": lambda budget, d, dtype: (budget // dtype.itemsize - d * d) // (2 * d),
        "rounds up": lambda budget, d, dtype: max(0, math.ceil((budget / dtype.itemsize - d * d) / (2 * d))),
        "returns a float": lambda budget, d, dtype: max(0.0, (budget / dtype.itemsize - d * d) / (2 * d)),
        "the largest square instead": lambda budget, d, dtype: math.isqrt(budget // dtype.itemsize),
    },
}
