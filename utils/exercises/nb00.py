"""Checks for the exercises of notebook 00 (setup): sizing tensors for the memory you have."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from . import Exercise, exercise, register

NOTEBOOK = "00_setup"

# (shape, dtype) pairs, chosen so that each common mistake gives a wrong number on at least one.
NBYTES_CASES: list[tuple[tuple[int, ...], torch.dtype]] = [
    ((4096, 2048), torch.float32),  # the Efficient Deep Learning Systems seminar's tensor: 32 MiB
    ((10,), torch.float16),
    ((3, 4, 5), torch.int64),
    ((), torch.bfloat16),  # a scalar still has one element
    ((0, 7), torch.float32),  # an empty tensor has none
    ((1000,), torch.uint8),
]


def _expected_nbytes(shape: tuple[int, ...], dtype: torch.dtype) -> int:
    return math.prod(shape) * torch.empty((), dtype=dtype).element_size()


def check_tensor_nbytes(tensor_nbytes: Callable[[tuple[int, ...], torch.dtype], int]) -> None:
    """tensor_nbytes(shape, dtype) must return the bytes a dense tensor of that shape holds."""
    with exercise("tensor_nbytes") as ex:
        for shape, dtype in NBYTES_CASES:
            got, want = tensor_nbytes(shape, dtype), _expected_nbytes(shape, dtype)
            ex.expect(
                isinstance(got, int) and not isinstance(got, bool),
                f"tensor_nbytes({shape}, {dtype}) returned a {type(got).__name__}, not an int",
                "bytes are a whole number: return an int (math.prod of the shape is one)",
            )
            ex.expect(
                got == want,
                f"tensor_nbytes({shape}, {dtype}) returned {got}, expected {want}",
                "how many elements does the shape hold, and how many bytes does one element of this "
                "dtype take? (a torch.dtype knows its own size)",
            )


register(Exercise(NOTEBOOK, "tensor_nbytes", check_tensor_nbytes))


BUDGET_CASES: list[tuple[int, torch.dtype]] = [
    (2**30, torch.float32),  # exactly 16384 x 16384
    (1000, torch.float32),  # 15 x 15 fits (900 B); 16 x 16 (1024 B) does not
    (12 * 2**30, torch.float16),
    (12 * 2**30, torch.float64),
    (3, torch.float32),  # not even one element fits
]


def check_largest_square(largest_square: Callable[[int, torch.dtype], int]) -> None:
    """largest_square(budget_bytes, dtype) must return the largest n whose n x n tensor fits."""
    with exercise("largest_square") as ex:
        for budget, dtype in BUDGET_CASES:
            item = torch.empty((), dtype=dtype).element_size()
            got = largest_square(budget, dtype)
            ex.expect(
                isinstance(got, int) and not isinstance(got, bool),
                f"largest_square({budget}, {dtype}) returned a {type(got).__name__}, not an int",
                "a side length is a whole number: math.isqrt gives an exact integer square root",
            )
            ex.expect(
                got * got * item <= budget,
                f"largest_square({budget}, {dtype}) returned {got}: {got}x{got} needs "
                f"{got * got * item} bytes, more than the budget",
                "round down, never up: the tensor must fit",
            )
            ex.expect(
                (got + 1) ** 2 * item > budget,
                f"largest_square({budget}, {dtype}) returned {got}, but {got + 1}x{got + 1} fits too",
                "the budget counts bytes, the side of the square counts elements: convert before the "
                "square root",
            )


register(Exercise(NOTEBOOK, "largest_square", check_largest_square))


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


def _expected_batch(budget: int, d: int, dtype: torch.dtype) -> int:
    elements = budget // torch.empty((), dtype=dtype).element_size()  # whole elements within the budget
    return max(0, (elements - d * d) // (2 * d))  # x and y: 2 * b * d elements, w: d * d


def check_largest_batch(largest_batch: Callable[[int, int, torch.dtype], int]) -> None:
    """largest_batch(budget_bytes, d, dtype) must return the largest b for which x (b, d), w (d, d) and
    y = x @ w (b, d) fit in the budget together."""
    with exercise("largest_batch") as ex:
        for budget, d, dtype, missed in BATCH_CASES:
            got, want = largest_batch(budget, d, dtype), _expected_batch(budget, d, dtype)
            ex.expect(
                isinstance(got, int) and not isinstance(got, bool),
                f"largest_batch({budget}, {d}, {dtype}) returned a {type(got).__name__}, not an int",
                "a batch has a whole number of rows: return an int (// divides whole numbers)",
            )
            ex.expect(got == want, f"largest_batch({budget}, {d}, {dtype}) returned {got}, expected {want}", missed)


register(Exercise(NOTEBOOK, "largest_batch", check_largest_batch))
