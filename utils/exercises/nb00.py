"""Checks for the exercises of notebook 00 (setup): the memory behind a view, and sizing a layer for the memory
you have."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from . import Checker, Exercise, exercise, register

NOTEBOOK = "00_setup"


# ---------------------------------------------------------------- exercise 1: the memory behind a view
# (shape, stride, offset, dtype, the view it describes, what a wrong answer most likely missed).  For these
# views the check holds no expected numbers: PyTorch itself says whether a storage of the bytes you return
# holds the view (Tensor.as_strided refuses a view that reaches past its storage), and whether a storage one
# element smaller would too.
VIEW_CASES: list[tuple[tuple[int, ...], tuple[int, ...], int, torch.dtype, str, str]] = [
    ((64, 32), (32, 1), 0, torch.float32, "a contiguous (64, 32) tensor",
     "a contiguous tensor reaches every element of its storage once: elements times bytes per element"),
    ((1000, 1), (1000, 1), 0, torch.float64, "t[:, :1], the first column of a (1000, 1000) tensor",
     "the view's elements sit a whole row apart in its storage: the storage reaches up to its last element"),
    ((6,), (2,), 0, torch.uint8, "t[::2] of 11 elements",
     "a stride is the step, in elements, from one element to the next along a dimension: where is the last one?"),
    ((500, 300), (0, 1), 0, torch.float16, "v.expand(500, 300) of a vector v of 300 elements",
     "a stride of 0 repeats the same elements: expand() copies nothing"),
    ((3, 4), (1, 3), 0, torch.int32, "t.T, the transpose of a (4, 3) tensor",
     "a transpose reorders the steps, not the elements it reaches"),
    ((3, 5), (6, 1), 13, torch.int64, "t[2:, 1:] of a (5, 6) tensor",
     "the view starts `offset` elements into its storage: the storage holds those elements too"),
    ((), (), 3, torch.bfloat16, "t[3] of a vector: a scalar, 3 elements in",
     "a scalar is one element, `offset` elements into the storage"),
    ((0, 7), (7, 1), 5, torch.float32, "an empty view", "a view without elements reaches no element of its storage"),
]
# A contiguous view that no machine can allocate: 2**60 float32 elements, 4 EiB (x86-64 gives a process 128 TiB
# of addresses).
HUGE_VIEW = ((2**30, 2**30), (2**30, 1), 0, torch.float32)
_TOO_MUCH = 2**28  # bytes: more than any small case's view reaches


def _holds(nbytes: int, shape: tuple[int, ...], stride: tuple[int, ...], offset: int, dtype: torch.dtype) -> bool:
    """Does a storage of `nbytes` (whole elements of dtype, on the CPU) hold this view? PyTorch says."""
    try:
        torch.empty(nbytes // dtype.itemsize, dtype=dtype).as_strided(shape, stride, offset)
    except RuntimeError:  # "setStorage: ... out of bounds for storage of size ..."
        return False
    return True


def _whole_bytes(ex: Checker, got: object, call: str, dtype: torch.dtype) -> int:
    ex.expect(isinstance(got, int) and not isinstance(got, bool) and got >= 0,
              f"{call} returned {got!r}, not a number of bytes (an int >= 0)",
              "bytes are a whole number: return an int")
    assert isinstance(got, int)
    ex.expect(got % dtype.itemsize == 0, f"{call} returned {got} bytes, not a whole number of {dtype} elements",
              "a storage holds whole elements: count elements first, then their bytes")
    return got


def check_storage_nbytes(storage_nbytes: Callable[[tuple[int, ...], tuple[int, ...], int, torch.dtype], int]) -> None:
    """storage_nbytes(shape, stride, offset, dtype) must return the fewest bytes of storage that hold the view."""
    with exercise("storage_nbytes") as ex:
        for shape, stride, offset, dtype, view, missed in VIEW_CASES:
            call = f"storage_nbytes({shape}, {stride}, {offset}, {dtype}) for {view}"
            got = _whole_bytes(ex, storage_nbytes(shape, stride, offset, dtype), call, dtype)
            ex.expect(got <= _TOO_MUCH and _holds(got, shape, stride, offset, dtype),
                      f"{call} returned {got}: " + ("far more than the view reaches" if got > _TOO_MUCH else
                                                "too few, PyTorch refuses the view on a storage of that size"),
                      missed)
            ex.expect(got == 0 or not _holds(got - dtype.itemsize, shape, stride, offset, dtype),
                      f"{call} returned {got}: too many, a smaller storage holds the view too", missed)
        shape, stride, offset, dtype = HUGE_VIEW
        call = f"storage_nbytes({shape}, {stride}, {offset}, {dtype})"
        huge: object
        try:
            huge = storage_nbytes(shape, stride, offset, dtype)
        except (RuntimeError, MemoryError) as error:  # the student made the tensor to measure it
            huge = f"nothing: it raised {type(error).__name__}: {str(error).splitlines()[0][:100]}"
        ex.expect(isinstance(huge, int) and not isinstance(huge, bool), f"{call} returned {huge}",
                  "this view spans exabytes: no machine can make it to measure it; compute the bytes from the "
                  "shape, the strides and the offset")
        reaches = math.prod(shape) * dtype.itemsize  # contiguous: the lecture's count, elements times bytes
        ex.expect(huge == reaches, f"{call} returned {huge}, not the bytes this view reaches",
                  "the same reasoning as for the small views: does your arithmetic overflow, or round?")


register(Exercise(NOTEBOOK, "storage_nbytes", check_storage_nbytes))


# ---------------------------------------------------------------- exercise 2: a batch that fits next to its weights
# (budget, d, dtype, what a wrong answer most likely missed): y = x @ w with x (b, d), w (d, d), y (b, d)
BATCH_CASES: list[tuple[int, int, torch.dtype, str]] = [
    (12 * 2**30, 4096, torch.float32, "x, w and y are all in memory at once: count the bytes of all three"),
    (2**30, 8192, torch.bfloat16, "every element of every tensor takes the dtype's bytes, here 2"),
    ((2 * 5 * 1000 + 1000**2) * 8, 1000, torch.float64,
     "when x, w and y fill the budget to the byte, that batch still fits"),
    ((2 * 5 * 1000 + 1000**2) * 8 - 1, 1000, torch.float64, "one byte short, and the batch is one row smaller"),
    (3 * 2**20, 1024, torch.float32, "w alone (4 MiB) does not fit in 3 MiB: then no batch does, not a negative one"),
    (2**20 + 100, 512, torch.float16, "round down: a batch must fit whole"),
]


def _layer_bytes(b: int, d: int, dtype: torch.dtype) -> int:
    """What the task counts: x (b, d), w (d, d) and y (b, d), all of dtype."""
    return (2 * b * d + d * d) * dtype.itemsize


def check_largest_batch(largest_batch: Callable[[int, int, torch.dtype], int]) -> None:
    """largest_batch(budget_bytes, d, dtype) must return the largest b for which x (b, d), w (d, d) and
    y = x @ w (b, d) fit in the budget together (0 when none does)."""
    with exercise("largest_batch") as ex:
        for budget, d, dtype, missed in BATCH_CASES:
            call = f"largest_batch({budget}, {d}, {dtype})"
            got = largest_batch(budget, d, dtype)
            ex.expect(isinstance(got, int) and not isinstance(got, bool),
                      f"{call} returned {got!r}, not an int",
                      "a batch has a whole number of rows: return an int (// divides whole numbers)")
            ex.expect(got >= 0, f"{call} returned {got}, a negative batch", missed)
            ex.expect(got == 0 or _layer_bytes(got, d, dtype) <= budget,
                      f"{call} returned {got}: x, w and y then need {_layer_bytes(got, d, dtype)} bytes, more than "
                      "the budget", missed)
            ex.expect(_layer_bytes(got + 1, d, dtype) > budget, f"{call} returned {got}, but {got + 1} rows fit too",
                      missed)


register(Exercise(NOTEBOOK, "largest_batch", check_largest_batch))
