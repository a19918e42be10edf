"""Checks for the exercises of notebook 00 (setup): the memory behind a view, and sizing a layer for the memory
you have.

Both are properties over generated inputs (utils/exercises/properties.py): views of any rank with a size of 0
in any dimension, strides of 0, offsets, every dtype, up to views of exabytes; layers of any width, odd ones
included, and budgets from nothing to terabytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from . import Exercise, exercise, reference, register
from .properties import diagnose, for_all, integral, real, shown, st, time_limit

NOTEBOOK = "00_setup"

# Every dtype a tensor of numbers can have, the 1-byte float8 and float4 kinds and the unsigned ones included (those
# this PyTorch has): an answer that looks bytes up in a table of the usual ones fails on the others.
DTYPES = tuple(getattr(torch, name) for name in (
    "uint8", "int8", "bool", "float16", "bfloat16", "int32", "float32", "int64", "float64", "complex128", "int16",
    "uint16", "uint32", "uint64", "complex32", "complex64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2") if hasattr(torch, name))
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
                with time_limit(ex, CALL_SECONDS, call, "a view can reach exabytes: compute the bytes from the shape, "
                                "the strides and the offset, without visiting its elements"):
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
            ex.expect(nbytes is not None, f"{call} returned {shown(got)}, " +
                      ("a float: return an int" if real(got) is not None else "not a number of bytes"),
                      "bytes are a whole number: return an int (// divides whole numbers)")
            if nbytes != want:
                hint = diagnose(yours, ORDINARY_VIEWS, fewest_bytes, VIEW_SHORTCUTS) or _hint(view, nbytes, want)
                ex.expect(False, f"{call} returned {nbytes}: " +
                          ("too few: the view reaches past them" if nbytes is not None and nbytes < want else
                           "too many: a smaller storage holds the view too"), hint)

        for_all(ex, views(), holds, chosen=[HUGE_VIEW, ((3, 0, 2), (5, 1, 2), 7, torch.float32)],
                describe=lambda view: _call(*view))


def _hint(view: View, got: int | None, want: int) -> str:
    """What the answer most likely missed: which shortcut gives its number on this view (never the number itself)."""
    shape, stride, offset, dtype = view
    if got is None:
        return "return the number of bytes"
    if 0 in shape:
        return "a view without elements reaches no element of its storage, wherever its size of 0 is"
    reach = [(n - 1) * s for n, s in zip(shape, stride)]
    shortcuts = [
        (lambda: want // dtype.itemsize, "a storage of this dtype holds whole elements: count bytes, not elements"),
        (lambda: (1 + sum(reach)) * dtype.itemsize,
         "the view starts `offset` elements into its storage: the storage holds those elements too"),
        (lambda: (offset + 1 + sum((n - 1) * (s or 1) for n, s in zip(shape, stride))) * dtype.itemsize,
         "a stride of 0 repeats the same elements: expand() copies nothing"),
        (lambda: (offset + sum(n * s for n, s in zip(shape, stride))) * dtype.itemsize,
         "a dimension of n elements takes n - 1 steps of its stride from its first element to its last"),
        (lambda: (offset + 1 + sum(reach)) * dtype.itemsize + 1, "the last element takes whole bytes, not one"),
    ]
    for shortcut, hint in shortcuts:
        if got == shortcut() != want:
            return hint
    return ("a view's element at index (i0, i1, ...) lies at offset + i0 * stride0 + i1 * stride1 + ... in its "
            "storage: which element is the last one the view reaches, and how many bytes come up to its end? "
            "(every dimension counts, and every dtype has its own bytes per element)")


CALL_SECONDS = 2.0  # one call of an answer: arithmetic takes microseconds; a search through every index never ends

# Views on which the usual mistakes give numbers of their own (diagnose: the hint for a failing answer).
ORDINARY_VIEWS: list[View] = [((3, 4), (4, 1), 2, torch.float32), ((5, 3), (1, 5), 0, torch.int16),
                              ((2, 3, 4), (0, 4, 1), 7, torch.float64), ((4, 6), (12, 2), 5, torch.bfloat16)]


def _last(shape: tuple[int, ...], stride: Sequence[int], step: Callable[[int, int], int] = lambda n, s: (n - 1) * s
          ) -> int:
    return 0 if 0 in shape else sum(step(n, s) for n, s in zip(shape, stride))


VIEW_SHORTCUTS: list[tuple[Callable[..., object], str]] = [
    (lambda shape, stride, offset, dtype: (offset + 1 + _last(shape, stride)),
     "a storage of this dtype holds whole elements of several bytes each: count bytes, not elements"),
    (lambda shape, stride, offset, dtype: (1 + _last(shape, stride)) * dtype.itemsize,
     "the view starts `offset` elements into its storage: the storage holds those elements too"),
    (lambda shape, stride, offset, dtype: (offset + 1 + _last(shape, [s or 1 for s in stride])) * dtype.itemsize,
     "a stride of 0 repeats the same elements: expand() copies nothing"),
    (lambda shape, stride, offset, dtype: (offset + _last(shape, stride, lambda n, s: n * s)) * dtype.itemsize,
     "a dimension of n elements takes n - 1 steps of its stride from its first element to its last"),
    (lambda shape, stride, offset, dtype: math.prod(shape) * dtype.itemsize,
     "a view's elements need not be next to each other: the strides say where each one is"),
    (lambda shape, stride, offset, dtype: (offset + max([(n - 1) * s for n, s in zip(shape, stride)], default=0) + 1)
     * dtype.itemsize, "every dimension takes its own steps from the first element: add them up"),
]


register(Exercise(NOTEBOOK, "storage_nbytes", check_storage_nbytes))


# ---------------------------------------------------------------- exercise 2: a batch that fits next to its weights
@reference
def layer_bytes(b: int, d: int, dtype: torch.dtype) -> int:
    """What the task counts: x (b, d), w (d, d) and y = x @ w (b, d), all of dtype."""
    return (2 * b * d + d * d) * dtype.itemsize


@reference
def most_rows(budget: int, d: int, dtype: torch.dtype) -> int:
    """The check's reference: the largest b whose layer fits in the budget, or 0."""
    return max(0, (budget // dtype.itemsize - d * d) // (2 * d))


Layer = tuple[int, int, torch.dtype]


def layers() -> st.SearchStrategy[Layer]:
    """(budget, d, dtype): widths from 1 (odd ones too) to 2**16, budgets from 0 bytes to a few TiB, and budgets
    that the weight alone barely fits in, or misses by a byte."""
    width, dtype = st.integers(1, 2**16), st.sampled_from(DTYPES)
    anywhere = st.tuples(st.integers(0, 2**42), width, dtype)
    near_an_edge = st.tuples(width, dtype, st.integers(0, 64), st.integers(-2, 2)).map(
        lambda case: (max(0, layer_bytes(case[2], case[0], case[1]) + case[3]), case[0], case[1]))
    return st.one_of(near_an_edge, anywhere)


# Layers on which the usual mistakes give numbers of their own (diagnose: the hint for a failing answer); the last
# fills its budget to the byte with 7 rows.
ORDINARY_LAYERS: list[Layer] = [(12 * 2**30, 4096, torch.bfloat16), (10**9 + 7, 333, torch.float32),
                                (5 * 10**8 + 3, 1000, torch.uint8), ((2 * 7 * 100 + 100**2) * 8, 100, torch.float64)]


def _elements(budget: int, dtype: torch.dtype) -> int:
    return budget // dtype.itemsize


LAYER_SHORTCUTS: list[tuple[Callable[..., object], str]] = [
    (lambda budget, d, dtype: _elements(budget, dtype) // (2 * d), "the weight w is in memory too, next to x and y"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - d * d) // d),
     "the output y = x @ w is a tensor of its own, next to x and w"),
    (lambda budget, d, dtype: max(0, -(-(_elements(budget, dtype) - d * d) // (2 * d))),
     "a batch must fit whole: round the rows down"),
    (lambda budget, d, dtype: max(0, (budget // 4 - d * d) // (2 * d)),
     "every element takes this dtype's bytes (dtype.itemsize), not four"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - 2 * d * d) // (2 * d)),
     "the weight w is one tensor: count it once"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - d * d) // (2 * d) - 1),
     "the largest batch that fits, not one row fewer: round down once"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - d * d - 1) // (2 * d)),
     "when x, w and y fill the budget to the byte, that batch still fits: may a budget be reached?"),
]


def _too_many(budget: int, d: int, dtype: torch.dtype, got: int) -> str:
    """The hint for a batch that does not fit: which tensor the answer's number leaves out."""
    size, elements = dtype.itemsize, budget // dtype.itemsize
    if got == elements // (2 * d):
        return "the weight w is in memory too, next to x and y"
    if got == max(0, (elements - d * d) // d):
        return "the output y = x @ w is a tensor of its own, next to x and w"
    if got == -(-(elements - d * d) // (2 * d)):
        return "a batch must fit whole: round the rows down"
    if size < 4 and got == max(0, (budget // 4 - d * d) // (2 * d)):
        return "every element takes this dtype's bytes, not four"
    return "x, w and y are all in memory at once: count the bytes of all three, in this dtype's bytes per element"


def _too_few(budget: int, d: int, dtype: torch.dtype, got: int, want: int) -> str:
    """The hint for a batch smaller than the largest that fits."""
    if got == want - 1 and layer_bytes(want, d, dtype) == budget:
        return "when x, w and y fill the budget to the byte, that batch still fits: may a budget be reached?"
    if got == max(0, (budget // dtype.itemsize - 2 * d * d) // (2 * d)):
        return "the weight w is one tensor: count it once"
    if dtype.itemsize < 4 and got == max(0, (budget // 4 - d * d) // (2 * d)):
        return "every element takes this dtype's bytes, not four"
    return ("count every tensor once, in this dtype's bytes per element, and keep every byte of the budget: "
            "rounding the budget, or the rows to a multiple, gives rows away")


def check_largest_batch(largest_batch: Callable[[int, int, torch.dtype], int]) -> None:
    """largest_batch(budget_bytes, d, dtype) must return the largest b for which x (b, d), w (d, d) and
    y = x @ w (b, d) fit in the budget together (0 when none does)."""
    with exercise("largest_batch") as ex:
        yours = ex.answer(largest_batch)

        def fits(layer: Layer) -> None:
            budget, d, dtype = layer
            call = f"largest_batch({budget}, {d}, {dtype})"
            with time_limit(ex, CALL_SECONDS, call, "a budget can be terabytes: compute the rows from the bytes, "
                            "without trying one batch size after another"):
                got = yours(budget, d, dtype)
            b = integral(got)
            ex.expect(b is not None, f"{call} returned {shown(got)}, " +
                      ("a float: return an int" if real(got) is not None else "not a number of rows"),
                      "a batch has a whole number of rows: return an int (// divides whole numbers)")
            assert b is not None
            want = most_rows(budget, d, dtype)
            ex.expect(b >= 0, f"{call} returned {b}, a negative batch",
                      "when even the weight does not fit, no batch does: the answer is 0, not a negative number")
            if b != want:
                hint = diagnose(yours, ORDINARY_LAYERS, most_rows, LAYER_SHORTCUTS)
                ex.expect(b <= want, f"{call} returned {b}: x, w and y then need {layer_bytes(b, d, dtype)} bytes, "
                                     "more than the budget", hint or _too_many(budget, d, dtype, b))
                ex.expect(False, f"{call} returned {b}, but {b + 1} {'row fits' if b == 0 else 'rows fit'} too",
                          hint or _too_few(budget, d, dtype, b, want))

        for_all(ex, layers(), fits, chosen=[(12 * 2**30, 4096, torch.float32), (3 * 2**20, 1024, torch.float32)])


register(Exercise(NOTEBOOK, "largest_batch", check_largest_batch))
