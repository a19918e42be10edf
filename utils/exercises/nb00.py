"""Checks for the exercises of notebook 00 (setup): sizing tensors for the memory you have."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from . import Exercise, exercise, register

NOTEBOOK = "00_setup"

# (shape, dtype) pairs, chosen so that each common mistake gives a wrong number on at least one.
NBYTES_CASES: list[tuple[tuple[int, ...], torch.dtype]] = [
    ((4096, 2048), torch.float32),  # the seed seminar's tensor: 32 MiB
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
                "multiply the number of elements by the bytes per element "
                "(torch.empty((), dtype=dtype).element_size() or dtype.itemsize)",
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
                "divide the budget by the bytes per element before taking the square root",
            )


register(Exercise(NOTEBOOK, "largest_square", check_largest_square))
