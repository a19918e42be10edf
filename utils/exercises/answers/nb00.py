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
}
