"""Wrong answers, and other right ones, to the exercises of notebook 00 (setup), for the tests: SPOILERS."""

from __future__ import annotations

import math

import numpy as np
import torch


# ---------------------------------------------------------------- exercise 1: storage_nbytes
def _reach(shape, stride, offset, dtype, last=lambda n, s: (n - 1) * s, first=1) -> int:
    """Bytes up to the view's last element, with a (possibly wrong) step per dimension."""
    if 0 in shape and last(0, 1) < 0:  # the right step: a view without elements reaches nothing
        return 0
    return (offset + first + sum(last(n, s) for n, s in zip(shape, stride))) * dtype.itemsize


def made_to_measure(shape, stride, offset, dtype):
    """Makes the storage and the view to measure them: fine for small views, impossible for large ones."""
    view = torch.empty(0, dtype=dtype).new_empty_strided(shape, stride)
    return view.untyped_storage().nbytes() + (offset * dtype.itemsize if view.numel() else 0)


def on_the_meta_device(shape, stride, offset, dtype):
    """Right: PyTorch computes the storage of a meta tensor (a shape without memory), allocating nothing."""
    view = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    return view.untyped_storage().nbytes() + (offset * dtype.itemsize if view.numel() else 0)


def with_numpy(shape, stride, offset, dtype):
    """Right too, with NumPy's int64 (the bytes of these views fit in it)."""
    if 0 in shape:
        return 0
    return int((offset + 1 + np.dot(np.array(shape, dtype=np.int64) - 1, np.array(stride, dtype=np.int64)))
               * dtype.itemsize)


WRONG_VIEWS = {
    "elements times bytes, strides ignored": lambda shape, stride, offset, dtype: math.prod(shape) * dtype.itemsize,
    "the offset forgotten": lambda shape, stride, offset, dtype: _reach(shape, stride, 0, dtype),
    "the offset counted for an empty view": lambda shape, stride, offset, dtype: (
        _reach(shape, stride, offset, dtype) or offset * dtype.itemsize),
    "one element too many (size times stride)": lambda shape, stride, offset, dtype: _reach(
        shape, stride, offset, dtype, last=lambda n, s: n * s, first=0),
    "elements, not bytes": lambda shape, stride, offset, dtype: _reach(shape, stride, offset, dtype) // dtype.itemsize,
    "the largest stride times its size": lambda shape, stride, offset, dtype: (
        0 if 0 in shape else (offset + max([n * s for n, s in zip(shape, stride)], default=1)) * dtype.itemsize),
    "a stride of 0 counted as 1": lambda shape, stride, offset, dtype: _reach(
        shape, [s or 1 for s in stride], offset, dtype),
    "makes the tensor to measure it": made_to_measure,
    "returns a float": lambda shape, stride, offset, dtype: float(_reach(shape, stride, offset, dtype)),
    "empty only when the first size is 0": lambda shape, stride, offset, dtype: (
        0 if shape and shape[0] == 0 else _reach(shape, [s if n else 0 for n, s in zip(shape, stride)], offset, dtype,
                                                 last=lambda n, s: max(n - 1, 0) * s)),
}

ALSO_RIGHT_VIEWS = {
    "asks PyTorch on the meta device": on_the_meta_device,
    "NumPy's dot product": with_numpy,
}


# ---------------------------------------------------------------- exercise 2: largest_batch
WRONG_BATCHES = {
    "forgets the weight": lambda budget, d, dtype: budget // dtype.itemsize // (2 * d),
    "forgets the output": lambda budget, d, dtype: max(0, (budget // dtype.itemsize - d * d) // d),
    "assumes float32": lambda budget, d, dtype: max(0, (budget // 4 - d * d) // (2 * d)),
    "negative when the weight does not fit": lambda budget, d, dtype: (budget // dtype.itemsize - d * d) // (2 * d),
    "rounds up": lambda budget, d, dtype: max(0, math.ceil((budget / dtype.itemsize - d * d) / (2 * d))),
    "returns a float": lambda budget, d, dtype: max(0.0, (budget / dtype.itemsize - d * d) / (2 * d)),
    "the largest square instead": lambda budget, d, dtype: math.isqrt(budget // dtype.itemsize),
    "one row short": lambda budget, d, dtype: max(0, (budget // dtype.itemsize - d * d) // (2 * d) - 1),
    "the weight as d // 2 rows of x and y (right for even widths only)": lambda budget, d, dtype: max(
        0, budget // dtype.itemsize // (2 * d) - d // 2),
}

WRONG = {
    "check_storage_nbytes": WRONG_VIEWS,
    "check_largest_batch": WRONG_BATCHES,
}
ALSO_RIGHT = {
    "check_storage_nbytes": ALSO_RIGHT_VIEWS,
    "check_largest_batch": {
        "by bytes, without dividing into elements first": lambda budget, d, dtype: max(
            0, (budget - d * d * dtype.itemsize) // (2 * d * dtype.itemsize)),
        "a NumPy integer": lambda budget, d, dtype: np.int64(max(0, (budget // dtype.itemsize - d * d) // (2 * d))),
        "a 0-d tensor": lambda budget, d, dtype: torch.tensor(max(0, (budget // dtype.itemsize - d * d) // (2 * d))),
    },
}
