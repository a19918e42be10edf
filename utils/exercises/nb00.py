"""Checks for the exercises of notebook 00 (setup): the memory behind a view, and sizing a layer for the memory
you have.

Both are properties over generated inputs (utils/exercises/properties.py): views of any rank with a size of 0
in any dimension, strides of 0, offsets, every dtype, up to views of exabytes; layers of any width, odd ones
included, and budgets from nothing to terabytes.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import Exercise, exercise, reference, register
from .properties import for_all, integral, shown, st

NOTEBOOK = "00_setup"

DTYPES = (torch.uint8, torch.int8, torch.bool, torch.float16, torch.bfloat16, torch.int32, torch.float32,
          torch.int64, torch.float64, torch.complex128)
LARGEST = 2**62  # bytes: the largest storage the check asks about (4 EiB; a storage's bytes are an int64)


# ---------------------------------------------------------------- exercise 1: the memory behind a view
View = tuple[tuple[int, ...], tuple[int, ...], int, torch.dtype]


@reference
def fewest_bytes(shape: tuple[int, ...], stride: tuple[int, ...], offset: int, dtype: torch.dtype) -> int:
    """The check's reference (tests/test_exercises_00.py holds it against PyTorch's own bounds check)."""
    if 0 in shape:
        return 0
    return (offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))) * dtype.itemsize


def _dimension(small: int, large: int) -> st.SearchStrategy[int]:
    """A size, stride or offset: mostly small ones (0, 1, 2, odd ones), some up to `large`."""
    return st.one_of(st.integers(0, small), st.integers(0, large))


def views() -> st.SearchStrategy[View]:
    """Views of rank 0 to 4: any size (0 included, in any dimension), stride (0 included), offset and dtype,
    with storages of at most LARGEST bytes."""
    rank = st.integers(0, 4)
    view = rank.flatmap(lambda r: st.tuples(st.tuples(*[_dimension(7, 2**31) for _ in range(r)]),
                                            st.tuples(*[_dimension(9, 2**31) for _ in range(r)]),
                                            _dimension(20, 2**40), st.sampled_from(DTYPES)))
    return view.filter(lambda v: fewest_bytes(*v) <= LARGEST)


def _call(shape: tuple[int, ...], stride: tuple[int, ...], offset: int, dtype: torch.dtype) -> str:
    return f"storage_nbytes({shape}, {stride}, {offset}, {dtype})"


# Views the check always asks about first: a huge one, which no machine can make to measure it.
HUGE_VIEW: View = ((2**30, 2**30), (2**30, 1), 0, torch.float32)


def check_storage_nbytes(storage_nbytes: Callable[[tuple[int, ...], tuple[int, ...], int, torch.dtype], int]) -> None:
    """storage_nbytes(shape, stride, offset, dtype) must return the fewest bytes of storage that hold the view."""
    with exercise("storage_nbytes") as ex:
        yours = ex.answer(storage_nbytes)

        def holds(view: View) -> None:
            call = _call(*view)
            got: object
            try:
                got = yours(*view)
            except NotImplementedError:
                raise  # the stub (TODO), or PyTorch's: not the answer's making a tensor
            except (RuntimeError, MemoryError) as error:  # the answer made the tensor to measure it
                got = error
            if isinstance(got, (RuntimeError, MemoryError)):
                ex.expect(False, f"{call} raised {type(got).__name__}: {str(got).splitlines()[0][:100]}",
                          "a view can span more bytes than any machine has: compute the bytes from the shape, "
                          "the strides and the offset, without making a tensor")
            nbytes, want = integral(got), fewest_bytes(*view)
            ex.expect(nbytes is not None, f"{call} returned {shown(got)}, not a whole number of bytes",
                      "bytes are a whole number: return an int")
            ex.expect(nbytes == want, f"{call} returned {nbytes}: " +
                      ("too few: the view reaches past them" if nbytes is not None and nbytes < want else
                       "too many: a smaller storage holds the view too"),
                      _hint(view, nbytes, want))

        for_all(ex, views(), holds, chosen=[HUGE_VIEW, ((3, 0, 2), (5, 1, 2), 7, torch.float32)],
                describe=lambda view: _call(*view))


def _hint(view: View, got: int | None, want: int) -> str:
    """What the answer most likely missed, from the view it failed on (never the number itself)."""
    shape, stride, offset, dtype = view
    if 0 in shape:
        return "a view without elements reaches no element of its storage, wherever its size of 0 is"
    if got is not None and got * dtype.itemsize == want:
        return "a storage of this dtype holds whole elements of several bytes each: count bytes, not elements"
    if 0 in stride:
        return "a stride of 0 repeats the same elements: expand() copies nothing"
    if offset and got is not None and got < want:
        return "the view starts `offset` elements into its storage: the storage holds those elements too"
    return ("a view's element at index (i0, i1, ...) lies at offset + i0 * stride0 + i1 * stride1 + ... in its "
            "storage: which element is the last one the view reaches, and how many bytes come up to its end?")


register(Exercise(NOTEBOOK, "storage_nbytes", check_storage_nbytes))


# ---------------------------------------------------------------- exercise 2: a batch that fits next to its weights
def layer_bytes(b: int, d: int, dtype: torch.dtype) -> int:
    """What the task counts: x (b, d), w (d, d) and y = x @ w (b, d), all of dtype."""
    return (2 * b * d + d * d) * dtype.itemsize


Layer = tuple[int, int, torch.dtype]


def layers() -> st.SearchStrategy[Layer]:
    """(budget, d, dtype): widths from 1 (odd ones too) to 2**16, budgets from 0 bytes to a few TiB, and budgets
    that the weight alone barely fits in, or misses by a byte."""
    width, dtype = st.integers(1, 2**16), st.sampled_from(DTYPES)
    anywhere = st.tuples(st.integers(0, 2**42), width, dtype)
    near_an_edge = st.tuples(width, dtype, st.integers(0, 64), st.integers(-2, 2)).map(
        lambda case: (max(0, layer_bytes(case[2], case[0], case[1]) + case[3]), case[0], case[1]))
    return st.one_of(near_an_edge, anywhere)


def check_largest_batch(largest_batch: Callable[[int, int, torch.dtype], int]) -> None:
    """largest_batch(budget_bytes, d, dtype) must return the largest b for which x (b, d), w (d, d) and
    y = x @ w (b, d) fit in the budget together (0 when none does)."""
    with exercise("largest_batch") as ex:
        yours = ex.answer(largest_batch)

        def fits(layer: Layer) -> None:
            budget, d, dtype = layer
            call = f"largest_batch({budget}, {d}, {dtype})"
            got = yours(budget, d, dtype)
            b = integral(got)
            ex.expect(b is not None, f"{call} returned {shown(got)}, not a whole number of rows",
                      "a batch has a whole number of rows: return an int (// divides whole numbers)")
            assert b is not None
            weight_fits = layer_bytes(0, d, dtype) <= budget
            ex.expect(b >= 0, f"{call} returned {b}, a negative batch",
                      "when even the weight does not fit, no batch does: the answer is 0, not a negative number")
            ex.expect(b == 0 or layer_bytes(b, d, dtype) <= budget,
                      f"{call} returned {b}: x, w and y then need {layer_bytes(b, d, dtype)} bytes, more than the "
                      "budget", "x, w and y are all in memory at once: count the bytes of all three, in this "
                                "dtype's bytes per element, and round down: a batch must fit whole")
            ex.expect(not weight_fits or layer_bytes(b + 1, d, dtype) > budget,
                      f"{call} returned {b}, but {b + 1} row{'s' if b else ''} fit too",
                      "when x, w and y fill the budget to the byte, that batch still fits: is a budget an "
                      "upper bound you may reach?" if layer_bytes(b + 1, d, dtype) == budget else
                      "count every tensor once, in this dtype's bytes: which of them did you count twice, or "
                      "in another dtype?")

        for_all(ex, layers(), fits, chosen=[(12 * 2**30, 4096, torch.float32), (3 * 2**20, 1024, torch.float32)])


register(Exercise(NOTEBOOK, "largest_batch", check_largest_batch))


