"""Checks for the exercises of notebook 00 (setup): the memory behind a view, and sizing a layer for the memory
you have.

Both are properties over generated inputs (utils/exercises/properties.py): views of up to 8 dimensions (and one of
10) with a size of 0 in any dimension, strides of 0, offsets, every dtype a view can have, up to views of exabytes,
and views of dense tensors permuted and sliced (nearly dense, which a shortcut for dense views mistakes);
layers of any width, odd ones included, and budgets from nothing to petabytes.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from numbers import Rational
from typing import Any, TypeVar

import numpy as np
import torch

from . import Checker, Exercise, exercise, is_stub, reference, register
from .properties import diagnose, for_all, integral, real, shown, st, time_limit, valueless
from .settings import BASIC, PROCESS, SEED_HINT, SETTINGS, generator_entry, keeping, not_put_back, seeding_watched

NOTEBOOK = "00_setup"

# Every dtype a view can have: the usual ones first (Hypothesis shrinks towards the first), then every other dtype of
# this PyTorch that a view can be made of (on the meta device, as the task allows): the 1-byte float8 and float4 kinds,
# the unsigned ones, the sub-byte integers int1 ... int7 and uint1 ... uint7 (one byte per element each), the bits
# kinds.  An answer that looks bytes up in a table of the usual ones, or counts sub-byte elements as packed bits, fails
# on the others.  The quantized dtypes (qint8, quint8, qint32, quint4x2, quint2x4) are left out: a quantized tensor
# needs a scale and a zero point besides its dtype, and PyTorch makes no view of one from a shape, strides and an
# offset alone (empty_strided refuses them, on the meta device and on the CPU; as_strided of a torch.empty of one
# fails an internal assert).
_USUAL = ("uint8", "int8", "bool", "float16", "bfloat16", "int32", "float32", "int64", "float64", "complex128", "int16",
          "uint16", "uint32", "uint64", "complex32", "complex64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2")


def _viewable(dtype: torch.dtype) -> bool:
    """Can PyTorch make a view of this dtype from a shape, strides and an offset (on the meta device)?"""
    try:
        with warnings.catch_warnings():  # complex32's "experimental" warning, printed once, not in the notebook
            warnings.simplefilter("ignore")
            torch.empty_strided((2,), (1,), dtype=dtype, device="meta")
    except (RuntimeError, TypeError):  # a NotImplementedError is a RuntimeError
        return False
    return dtype.itemsize > 0


_USUAL_DTYPES = tuple(getattr(torch, name) for name in _USUAL if hasattr(torch, name))
DTYPES = _USUAL_DTYPES + tuple(sorted(
    {dtype for dtype in vars(torch).values() if isinstance(dtype, torch.dtype) and dtype not in _USUAL_DTYPES
     and _viewable(dtype)}, key=str))
# The chosen cases ask about every dtype in turn, DTYPE_CASES of them (41 dtypes in PyTorch 2.13), so that a check
# prints the same count of checks on every PyTorch with at most that many dtypes (the notebook's saved output).
DTYPE_CASES = max(48, len(DTYPES))
RANK = 8  # the most dimensions a generated view has (PyTorch's tensors can have dozens)
LARGEST = 2**62  # bytes: the largest storage the check asks about (4 EiB; a storage's bytes are an int64)

R = TypeVar("R")

# What neither function has any reason to change for its caller: every setting that settings.py knows (round 23's
# adversary left the default device meta, torch.device("meta") entered, the default dtype float64, grad mode off,
# warnings silenced, print options, a decimal precision, a recursion limit, and passed: these checks called the answer
# bare, and every later cell and check ran under them), BASIC first (the default device before the function-mode stack
# it sits on).  The global generators' states are not compared (an answer may draw from them): seeding one is watched
# instead (settings.seeding_watched, as nb02's checks do).
_GENERATOR_STATES = ("torch.get_rng_state()", "np.random.get_state()", "random.getstate()")
WATCHED = (*BASIC, *PROCESS, *(name for name in SETTINGS if name not in (*BASIC, *PROCESS, *_GENERATOR_STATES)))


def _leaving_alone(ex: Checker, answer: Callable[..., R]) -> Callable[..., R]:
    """The answer as the checks call it: a setting of WATCHED that it changes is put back at once and FAILs
    (settings.keeping); a global generator that it seeds, or whose state it sets, and leaves otherwise than before,
    is put back and FAILs."""
    kept = keeping(ex, ex.answer(answer), WATCHED)

    def call(*args: Any) -> R:
        seeded: dict[str, list[Any]] = {}
        try:
            with seeding_watched(seeded, (answer,)):
                return kept(*args)
        finally:
            unrestored = not_put_back(seeded)
            for name, (_, state, _) in seeded.items():  # as before the first seeding call
                generator_entry(name)[1](state)
            if unrestored:
                ex.expect(False, f"{ex.name} seeds the global random generator {unrestored[0]}: it called "
                          f"{seeded[unrestored[0]][0]}(...), and did not set that generator's state back as it was "
                          "before", SEED_HINT)

    return call


def _not_a_number(got: object, unit: str) -> tuple[str, str]:
    """What the check says of a result that `integral` refuses, and its hint."""
    if isinstance(got, torch.Tensor) and valueless(got):
        where = "on the meta device" if got.is_meta else type(got).__name__
        return (f"a tensor without values ({where}), not a number of {unit}",
                "a tensor on the meta device has a shape and no values: compute the number itself, and return an int")
    if real(got) is None:
        return f"not a number of {unit}", f"return the number of {unit}, an int"
    kind = ("a float" if isinstance(got, (float, np.floating, torch.Tensor, np.ndarray)) else
            f"a {type(got).__name__} that is not a whole number" if isinstance(got, (decimal.Decimal, Rational)) else
            f"a {type(got).__name__}, not an int")
    return (f"{kind}: return an int",
            f"{unit} are a whole number: return an int (// divides whole numbers; int(x) converts a whole x)")


# ---------------------------------------------------------------- exercise 1: the memory behind a view
View = tuple[tuple[int, ...], tuple[int, ...], int, torch.dtype]


@reference
def fewest_bytes(shape: tuple[int, ...], stride: tuple[int, ...], offset: int, dtype: torch.dtype) -> int:
    """The check's reference (tests/test_exercises_00.py holds it against PyTorch's own bounds check)."""
    if 0 in shape:
        return 0
    return (offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))) * dtype.itemsize


# Where a number of fixed width stops being exact: 2**24 (a float32's significand), 2**31 and 2**32 (an int32, a
# uint32), 2**53 (a float64's significand): just below each, at it, and just past it (odd).
EDGES = tuple(2**k + j for k in (24, 31, 32, 53) for j in (-1, 0, 1))


def _dimension(small: int, large: int, far: bool) -> st.SearchStrategy[int]:
    """A size, stride or offset: mostly small ones (0, 1, 2, odd ones), and some up to `large`; in a `far` view, of
    `large`'s own magnitude, or at the EDGES up to `large`, instead.  (Round 23's adversary: what st.integers(0, large)
    drew stayed far below `large`, the largest offset drawn was 55,981,300 of 2**40, and an offset kept in an int32,
    or its bytes in a float32, passed.)"""
    if far:
        return st.one_of(st.integers(0, small), st.integers(large >> 8, large),
                         st.integers(0, large >> 8).map(lambda below: large - below),  # Hypothesis draws near the least
                         st.sampled_from([edge for edge in EDGES if edge <= large]))
    return st.one_of(st.integers(0, small), st.integers(0, large))


OFFSET = 2**58  # elements: the largest offset a far view has (of 16-byte elements, a storage of 4 EiB, LARGEST)


def views() -> st.SearchStrategy[View]:
    """Views of rank 0 to RANK: any size (0 included, in any dimension), stride (0 included), offset and dtype,
    with storages of at most LARGEST bytes and fewer than 2**63 elements (a tensor's numel is an int64: a view
    PyTorch cannot represent would reject an answer that asks a meta tensor, which the task allows).  Half of them
    ordinary, half far: sizes, strides and offsets near the top of their range, or at the EDGES (counts past 2**53
    in every dtype; ordinary ones of 8 dimensions seldom stay within LARGEST bytes with many such numbers)."""
    @functools.cache  # one strategy of each rank, made (and validated by Hypothesis) once: the same draws, faster
    def of_rank(r: int, far: bool) -> st.SearchStrategy[View]:
        return st.tuples(st.tuples(*[_dimension(7, 2**31, far) for _ in range(r)]),
                         st.tuples(*[_dimension(9, 2**31, far) for _ in range(r)]),
                         _dimension(20, OFFSET if far else 2**40, far), st.sampled_from(DTYPES))

    view = st.tuples(st.integers(0, RANK), st.booleans()).flatmap(lambda rank_far: of_rank(*rank_far))
    # One view in four is nearly dense (near_dense_views): the others almost never are
    mixed = st.integers(0, 3).flatmap(lambda k: view if k else near_dense_views())
    return mixed.filter(lambda v: fewest_bytes(*v) <= LARGEST and _counted(v[0]))


def _dense_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides of a dense (contiguous) tensor of this shape."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def near_dense_views() -> st.SearchStrategy[View]:
    """Views that a shortcut for dense ones ("offset + numel elements, one after another") can take for dense when
    they are not: a dense tensor's dimensions permuted (x.T, x.permute(...)), then each sliced (x[a:b], x[a::k]);
    and shapes whose strides are their own dense strides in another order, each no longer with its own size (round
    79's adversary's shortcut compared the sorted strides with the dense ones of the shape, sizes not sorted with
    them, and passed: of the generated views, almost none lined up so, and the one permuted view always asked,
    VIEW_KINDS', had all its sizes equal)."""
    def of_rank(r: int) -> st.SearchStrategy[View]:
        cuts = st.lists(st.tuples(st.integers(0, 5), st.integers(1, 6), st.integers(1, 3)), min_size=r, max_size=r)
        return st.tuples(st.lists(st.integers(1, 6), min_size=r, max_size=r), st.permutations(range(r)), cuts,
                         st.booleans(), st.integers(0, 20), st.sampled_from(DTYPES)).map(_near_dense)
    return st.integers(1, 5).flatmap(of_rank)


def _near_dense(case: tuple[list[int], list[int], list[tuple[int, int, int]], bool, int, torch.dtype]) -> View:
    """A dense tensor of `sizes` at `offset`, its dimensions taken in `order`; then each sliced by its cut (start,
    length, step), or (`shuffled`) the tensor's own shape with its dense strides taken in `order`."""
    sizes, order, cuts, shuffled, offset, dtype = case
    dense = _dense_strides(sizes)
    if shuffled:
        return tuple(sizes), tuple(dense[i] for i in order), offset, dtype
    shape, stride = [], []
    for i, (start, length, step) in zip(order, cuts, strict=True):
        start = min(start, sizes[i] - 1)
        shape.append(min(length, len(range(start, sizes[i], step))))
        stride.append(dense[i] * step)
        offset += start * dense[i]
    return tuple(shape), tuple(stride), offset, dtype


def _counted(shape: tuple[int, ...]) -> bool:
    """Can PyTorch count the elements of this shape?  It multiplies the sizes in order and refuses a product past an
    int64 ("numel: integer multiplication overflow") before it meets a size of 0: (2**31, 2**31, 2**31, 0) has no
    element, and no meta tensor."""
    elements = 1
    for size in shape:
        elements *= size
        if elements == 0:
            return True
        if elements >= 2**63:
            return False
    return True


def _call(shape: tuple[int, ...], stride: tuple[int, ...], offset: int, dtype: torch.dtype) -> str:
    return f"storage_nbytes({shape}, {stride}, {offset}, {dtype})"


# A huge view, which no machine can make to measure it: the check always asks about it (with the chosen views, after
# the generated ones).
HUGE_VIEW: View = ((2**30, 2**30), (2**30, 1), 0, torch.float32)

# One view of every dtype, which the check always asks about too (Hypothesis draws about a hundred views from dozens of
# dtypes, and can miss one: a table of sizes wrong only for complex32, or without bfloat16, passed then); after the
# last dtype, the first ones again on another view, up to DTYPE_CASES views.
DTYPE_VIEWS: list[View] = [((2, 3), (3, 1), 1, DTYPES[i]) if i < len(DTYPES) else
                           ((4,), (2,), 3, DTYPES[i % len(DTYPES)]) for i in range(DTYPE_CASES)]
# A view of more dimensions than an image batch (NCHW) or a video batch (NCDHW) has, each of them reaching further: the
# check always asks about it (the generated views have up to RANK dimensions; an answer that unpacked four passed when
# they had at most four).
# A view whose storage takes 2**53 + 3 bytes, an odd number past 2**53, which no float64 holds: an answer that computes
# in floats rounds it (the check always asks about it; the generated views seldom reach such a number).
BEYOND_FLOATS: View = ((2, 2), (2**53, 1), 1, torch.uint8)
MANY_DIMENSIONS: View = ((2, 3, 1, 4, 5, 2, 3, 2, 2, 3), (1000, 300, 7, 70, 13, 5, 2, 9000, 1, 40000), 11,
                         torch.float16)
# A view of 64 dimensions (PyTorch makes views of dozens), each reaching further, 2**48 elements: the check always asks
# about it too (round 26's adversary: nothing past 10 dimensions was asked, and an answer with fixed arrays of 10
# dimensions passed, and so did one that tries each of the 2**rank corners of the view).
DOZENS_OF_DIMENSIONS: View = (tuple(2 if i % 4 else 1 for i in range(64)), tuple(i % 7 + 1 for i in range(64)), 3,
                              torch.bfloat16)
# Views at the edges of fixed-width numbers, which the check always asks about too (round 23's adversary: the chosen
# views past 2**53 were one of uint8 and one of an exact power of two, and no offset reached 2**31): an odd offset
# past 2**31 (an int32 wraps), one past 2**24 (a float32 rounds its bytes), one past 2**53 of 2-byte elements, and
# BEYOND_FLOATS in dtypes of 2, 4, 8 and 16 bytes (finfo(dtype).bits / 8 is a float: the count then is one too).
EDGE_VIEWS: list[View] = [((), (), 2**31 + 1, torch.uint8), ((3,), (5,), 2**24 + 1, torch.uint8),
                          ((2,), (3,), 2**53 + 1, torch.float16),
                          *((*BEYOND_FLOATS[:3], dtype) for dtype in (torch.float16, torch.float32, torch.float64,
                                                                       torch.complex128))]
# Expanded views of more elements times bytes than 2**63 counts, which the check always asks about too (round 65's
# adversary: NumPy's as_strided and byte_bounds measured every view asked, and raise "array is too big" on these):
# 2**62 elements of 0 stride take one element's bytes, and so do 2**31 x 2**31.
EXPANDED_HUGE: list[View] = [((2**31, 2**31), (0, 0), 0, torch.float32), ((2**62,), (0,), 0, torch.float64)]
# Each kind of view in each size of element, which the check always asks about too (round 32's adversary: Hypothesis
# drew views of rank 0 only of 1-byte dtypes, no nonempty view of rank 1 or more whose sizes are all 1, views of rank 1
# only of 1, 2 and 4 bytes, of rank 4 and 5 only of 1 byte; DTYPE_VIEWS asks about every dtype on views of rank 1 and 2
# only.  A shortcut for one kind of view that counts elements, or the offset in bytes, or forgets the offset, or looks
# the size of an element up in a table, passed): a view of every rank from 0 to RANK (rank 2: DTYPE_VIEWS), and views
# of one element of ranks 1, 2 and 4, each at an offset other than 0, in a dtype of every size of element (of each
# size, the dtypes in turn).
VIEW_KINDS: list[tuple[tuple[int, ...], tuple[int, ...], int]] = [
    ((), (), 3),  # a 0-d view, x[i, j]
    ((1,), (4,), 10), ((1, 1), (7, 1), 5), ((1, 1, 1, 1), (24, 8, 2, 1), 9),  # one element: x[i:i+1, j:j+1]
    ((5,), (2,), 1), ((4,), (0,), 6),  # a slice, x[1::2]; an expanded one
    ((2, 3, 4), (0, 4, 1), 7), ((2, 3, 2, 2), (12, 1, 6, 3), 2),  # a broadcast; NCHW in channels-last order
    ((2, 1, 3, 2, 2), (24, 12, 4, 2, 1), 4), ((2, 2, 1, 2, 3, 2), (50, 20, 9, 6, 2, 1), 8),
    ((2,) * 7, (64, 1, 32, 2, 16, 4, 8), 3), ((3, 1, 2, 2, 1, 2, 2, 2), (100, 1, 40, 0, 7, 10, 3, 1), 6),
    # round 79's adversary: strides that are the shape's own dense strides in another order, not dense (a shortcut that
    # sorts the strides and not the sizes with them takes them for dense): x.T[:2] of a dense 3 x 3 x, 7 elements
    # reached for 6; and the dense strides of a (2, 3, 4) shuffled across its sizes
    ((2, 3), (1, 3), 1), ((2, 3, 4), (1, 12, 4), 5)]
ELEMENT_SIZES = sorted({dtype.itemsize for dtype in DTYPES})
_OF_SIZE = {size: [dtype for dtype in DTYPES if dtype.itemsize == size] for size in ELEMENT_SIZES}
KIND_VIEWS: list[View] = [(*kind, _OF_SIZE[size][i % len(_OF_SIZE[size])])
                          for i, kind in enumerate(VIEW_KINDS) for size in ELEMENT_SIZES]

# What PyTorch raises for a tensor larger than memory, or than its storage: the answer made the view to measure it.
_TOO_LARGE = re.compile(r"allocate|out of memory|overflow|out of bounds|too big")


def check_storage_nbytes(storage_nbytes: Callable[[tuple[int, ...], tuple[int, ...], int, torch.dtype], int]) -> None:
    """storage_nbytes(shape, stride, offset, dtype) must return the fewest bytes of storage that hold the view."""
    with exercise("storage_nbytes") as ex:
        yours, limits = _leaving_alone(ex, storage_nbytes), _Limits()

        def holds(view: View) -> None:
            call = _call(*view)
            got: object
            slow = ("a view can reach exabytes, in dozens of dimensions: compute the bytes from the shape, the strides "
                    "and the offset, without making the view or visiting its elements (or its corners)")
            try:
                with limits.timed(ex, call, slow):
                    got = yours(*view)
            except (RuntimeError, MemoryError, ValueError) as error:  # the answer made a tensor (or an array: NumPy
                # raises ValueError, "array is too big"), to measure it or its dtype
                if is_stub(error):  # (a NotImplementedError is a RuntimeError: PyTorch's, "fill_out" not
                    raise           # implemented for float4, gets the hint below; the stub's is a TODO)
                got = error
            if isinstance(got, (RuntimeError, MemoryError, ValueError)):
                too_large = isinstance(got, MemoryError) or _TOO_LARGE.search(str(got))
                ex.expect(False, f"{call} raised {type(got).__name__}: {str(got).splitlines()[0][:100]}",
                          "a view can span more bytes than any machine has: compute the bytes from the shape, "
                          "the strides and the offset, without making a tensor" if too_large else
                          f"PyTorch cannot make every tensor of every dtype ({view[3]} included): compute the bytes "
                          "from the shape, the strides, the offset and the dtype, without making a tensor")
            nbytes, want = integral(got), fewest_bytes(*view)
            if nbytes is None:
                problem, hint = _not_a_number(got, "bytes")
                ex.expect(False, f"{call} returned {shown(got)}, {problem}", hint)
            if nbytes != want:
                hint = (diagnose(yours, ORDINARY_VIEWS, fewest_bytes, VIEW_SHORTCUTS)
                        or _dtype_hint(yours, ORDINARY_VIEWS, fewest_bytes, view[3])
                        or _rounding_hint(yours, HUGE_VIEW, fewest_bytes, nbytes, want, want // view[3].itemsize)
                        or _large_hint(yours, ORDINARY_VIEWS, fewest_bytes,
                                       max(view[2], *view[0], *view[1], want // view[3].itemsize))
                        or (diagnose(yours, _in_every_size(view), fewest_bytes, VIEW_SHORTCUTS)
                            if 0 not in view[0] else None)
                        or _hint(view, nbytes))
                ex.expect(False, f"{call} returned {nbytes}: " +
                          ("too few: the view reaches past them" if nbytes is not None and nbytes < want else
                           "too many: a smaller storage holds the view too"), hint)

        for_all(ex, views(), holds, chosen=[HUGE_VIEW, BEYOND_FLOATS, ((3, 0, 2), (5, 1, 2), 7, torch.float32),
                                           MANY_DIMENSIONS, DOZENS_OF_DIMENSIONS, *EDGE_VIEWS, *EXPANDED_HUGE,
                                           *DTYPE_VIEWS,
                                           *KIND_VIEWS],
                describe=lambda view: _call(*view))


def _in_every_size(view: View) -> list[View]:
    """The failing view in a dtype of every size of element: where the answer is right on the ordinary views and
    wrong on a kind of view of its own (a 0-d one, one element: round 32's adversary), the mistake it makes there.
    (Not for a view without elements: there several shortcuts give what an answer that counts its offset gives.)"""
    return [(*view[:3], _OF_SIZE[size][0]) for size in ELEMENT_SIZES]


def _dtype_hint(yours: Callable[..., object], cases: Sequence[tuple], right: Callable[..., object],
                dtype: torch.dtype) -> str | None:
    """The hint for an answer that is right on `cases` in every one of a few dtypes of several bytes, and wrong on
    them in `dtype`: it counts that dtype's bytes per element wrong (a table, the bits of finfo, a number in the
    dtype's name).  Every one: right in one dtype can be a coincidence (rows rounded to a multiple of 8).  And wrong
    in `dtype` on a case of small numbers: an answer that computes in float32 is wrong on the large cases in the dtype
    of the most elements per byte only (round 32's adversary: it got this hint for uint8)."""
    def right_in(other: torch.dtype, small: bool = False) -> bool:
        recast = [(*case[:-1], other) for case in cases]
        try:
            return all(integral(yours(*case)) == right(*case) for case in recast if not small or _small(case, right))
        except Exception:  # noqa: BLE001 -- an answer that raises here is not right here
            return False

    if all(right_in(other) for other in (torch.float32, torch.int64, torch.float16) if other != dtype) and not (
            right_in(dtype, small=True)):
        return (f"every dtype has its own bytes per element, {dtype} too: dtype.itemsize says how many (what a "
                "tensor's element_size() reports)")
    return None


def _small(case: tuple, right: Callable[..., object]) -> bool:
    """Are the numbers of `case`, and its right result, small enough for any float to hold them (under 2**24)?"""
    def numbers(x: object) -> Iterator[int]:
        if isinstance(x, tuple):
            for item in x:
                yield from numbers(item)
        elif isinstance(x, int):
            yield x

    result = right(*case)
    return all(n < 2**24 for n in numbers((*case[:-1], result if isinstance(result, int) else 0)))


def _rounding_hint(yours: Callable[..., object], far: tuple, right: Callable[..., int], got: int | None, want: int,
                   elements: int) -> str | None:
    """The hint for an answer that computed in floating point, which rounds: wrong by a sliver (a millionth, or one) on
    a failing case of more than 2**24 elements, and within a millionth on the `far` case too.  Shrinking makes a
    failing case as small as it can, so a mistake of another kind fails on a small case, where this is silent; a
    search with a ceiling, or an int32 that wraps, fails by a sliver just past its limit, but is far off on `far`."""
    if got is None or elements < 2**24 or abs(got - want) > max(1, want // 2**20):
        return None
    try:
        there, far_want = integral(yours(*far)), right(*far)
    except Exception:  # noqa: BLE001 -- an answer that raises there gets another hint
        return None
    if there is None or abs(there - far_want) > far_want // 2**20:
        return None
    return ("the numbers here are large: compute in whole numbers (int, //), exactly; a float holds 24 bits (float32) "
            "or 53 (float64), and rounds a larger count")


def _large_hint(yours: Callable[..., object], cases: Sequence[tuple], right: Callable[..., object],
                largest: int) -> str | None:
    """The hint for an answer right on every one of the ordinary `cases` and wrong on a case with a number of
    `largest`, past 2**24: it computes in a number of fixed width, which wraps (an int32 past 2**31, a uint32 past
    2**32) or rounds (a float32 past 2**24) there (round 23's adversary: an offset in an int32, d * d in a uint32, got
    the hint of a miscount)."""
    if largest < 2**24:
        return None
    try:
        if not all(integral(yours(*case)) == right(*case) for case in cases):
            return None
    except Exception:  # noqa: BLE001 -- an answer that raises here gets another hint
        return None
    return ("the numbers here are large: compute in Python ints (int, //), exact at any size; a number of fixed width "
            "is not: an int32 wraps past 2**31, a uint32 past 2**32, a float32 rounds past 2**24, a float64 past "
            "2**53")


def _hint(view: View, got: int | None) -> str:
    """The hint when no usual mistake gives the answer's numbers on the ordinary views (diagnose, _dtype_hint): only
    what the failing view shows for sure (on a small view many mistakes give the same number, so none is named)."""
    if got is None:
        return "return the number of bytes"
    if 0 in view[0]:
        return "a view without elements reaches no element of its storage, wherever its size of 0 is"
    return ("a view's element at index (i0, i1, ...) lies at offset + i0 * stride0 + i1 * stride1 + ... in its "
            "storage: which element is the last one the view reaches, and how many bytes come up to its end? "
            "(every dimension counts, and every dtype has its own bytes per element)")


CALL_SECONDS = 2.0  # one call of an answer: arithmetic takes microseconds; a search through every index never ends
# An answer's call may pay a one-time cost that is no search: an import inside the function, PyTorch's lazy set-up
# (torch._prims_common's first call takes 1.3 s on an idle CPU), on a loaded machine more.  The first call gets
# FIRST_CALL_SECONDS; every later call gets LATER_ONE_TIME_SECONDS until one of them has taken more than CALL_SECONDS
# (round 26's adversary: a lazy import on the first view past 2**31, not on the first call, which Hypothesis makes the
# simplest view, FAILed as a search that never ends).  A search still FAILs: its first long call, after
# LATER_ONE_TIME_SECONDS (shorter than the first call's: each answer that never returns costs the suite that long).
FIRST_CALL_SECONDS = 10.0
LATER_ONE_TIME_SECONDS = 4.0


class _Limits:
    """The time limit of each call of an answer in turn (`timed`): FIRST_CALL_SECONDS for the first call,
    LATER_ONE_TIME_SECONDS for each later one until one of them has run past CALL_SECONDS, CALL_SECONDS after that."""

    def __init__(self) -> None:
        self.calls, self.spare = 0, True

    @contextmanager
    def timed(self, ex: Checker, call: str, hint: str) -> Iterator[None]:
        self.calls += 1
        first, started = self.calls == 1, time.process_time()
        limit = FIRST_CALL_SECONDS if first else LATER_ONE_TIME_SECONDS if self.spare else CALL_SECONDS
        with time_limit(ex, limit, call, hint, cpu=True):  # CPU seconds: a busy machine stretches no call
            yield
        if not first and time.process_time() - started > CALL_SECONDS:
            self.spare = False

# Views on which the usual mistakes give numbers of their own (diagnose: the hint for a failing answer); the last is
# a view of rank 0, one element.
ORDINARY_VIEWS: list[View] = [((3, 4), (4, 1), 2, torch.float32), ((5, 3), (1, 5), 0, torch.int16),
                              ((2, 3, 4), (0, 4, 1), 7, torch.float64), ((4, 6), (12, 2), 5, torch.bfloat16),
                              ((), (), 3, torch.float32)]


# The shortcuts below compute what the reference computes, each with one mistake: every one of them goes through a
# locked function (_last here, _elements for the layers), so that none is an unlocked piece of the reference that an
# answer could take and mend (round 79's adversary called nb00._last, the core of fewest_bytes, and passed: @reference
# was on fewest_bytes alone).
@reference
def _last(shape: tuple[int, ...], stride: Sequence[int], step: Callable[[int, int], int] = lambda n, s: (n - 1) * s,
          combine: Callable[[list[int]], int] = sum) -> int:
    """The steps of each dimension (`step` of its size and stride), combined (`combine`); 0 for a view without
    elements."""
    return 0 if 0 in shape else combine([step(n, s) for n, s in zip(shape, stride)])


VIEW_SHORTCUTS: list[tuple[Callable[..., object], str]] = [
    (lambda shape, stride, offset, dtype: (offset + 1 + _last(shape, stride)),
     "a storage of this dtype holds whole elements of several bytes each: count bytes, not elements"),
    (lambda shape, stride, offset, dtype: (1 + _last(shape, stride)) * dtype.itemsize,
     "the view starts `offset` elements into its storage: the storage holds those elements too"),
    (lambda shape, stride, offset, dtype: offset + (1 + _last(shape, stride)) * dtype.itemsize,
     "the offset counts elements, as the strides do, not bytes"),
    (lambda shape, stride, offset, dtype: (offset + 1 + _last(shape, [s or 1 for s in stride])) * dtype.itemsize,
     "a stride of 0 repeats the same elements: expand() copies nothing"),
    (lambda shape, stride, offset, dtype: (offset + _last(shape, stride, lambda n, s: n * s)) * dtype.itemsize,
     "a dimension of n elements takes n - 1 steps of its stride from its first element to its last"),
    # a shortcut for dense views taken where the view is not dense (round 79's adversary's; before the next one, which
    # gives the same numbers on the small views a failure shrinks to)
    (lambda shape, stride, offset, dtype: (offset + _last(shape, stride, lambda n, s: n, math.prod)) * dtype.itemsize,
     ("offset + numel elements hold a view only where its elements lie next to each other, each stride stepping over "
      "the sizes of the dimensions after it: which size goes with which stride here, and how far does the view "
      "reach?")),
    (lambda shape, stride, offset, dtype: (offset + _last(shape, stride)) * dtype.itemsize,
     "the last element the view reaches takes its own bytes too: the storage reaches its end, not its start"),
    (lambda shape, stride, offset, dtype: _last(shape, stride, lambda n, s: n, math.prod) * dtype.itemsize,
     "a view's elements need not be next to each other: the strides say where each one is"),
    (lambda shape, stride, offset, dtype: (offset + _last(shape, stride, combine=lambda steps: max(steps, default=0))
                                           + 1) * dtype.itemsize,
     ("an element's place in the storage depends on its index in every dimension at once, not in the one dimension "
      "that reaches furthest: where is the element whose index is the last in every dimension?")),
    (lambda shape, stride, offset, dtype: 0 if not shape else (offset + 1 + _last(shape, stride)) * dtype.itemsize,
     "a view of no dimensions (shape (), a 0-d tensor) holds one element"),
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
# Bytes (8 PiB): the largest budget the check asks about, and the task says so.  Past the 4 TiB of an earlier round: a
# search capped at 2**41 rows passed then.  Up to 2**53, a float division then floor is still exact (a right answer).
LARGEST_BUDGET = 2**53
WIDEST = 2**26  # the widest layer drawn: its weight, 2**52 elements, fits in the largest budget (1-byte elements)

# The far corner of the space: the largest budget, the narrowest layer, 1-byte elements: the most rows any case has
# (2**52 - 1), which budgets and widths drawn independently seldom reach; a search with a ceiling stops short there.
MOST_ROWS_LAYER: tuple[int, int, torch.dtype] = (LARGEST_BUDGET, 1, torch.uint8)


# Wide layers, which the check always asks about too (round 23's adversary: no width of 2**16 or more was asked): at
# 2**16, past it, and the widest with the largest budget.
WIDE_LAYERS: list[Layer] = [(2**40, 2**16, torch.uint8), (10**12, 70000, torch.float32),
                            (LARGEST_BUDGET, WIDEST, torch.uint8),
                            # a byte short of 5 rows of the widest width near an edge, 94906201 (round 26's
                            # adversary: rows within 1e-8 of a whole number, which a float rounded up by an epsilon
                            # makes whole; here within 1 / (2 d), 5.3e-9, the least any width within 8 PiB has)
                            (2 * 5 * 94906201 + 94906201**2 - 1, 94906201, torch.uint8)]


# One layer of every dtype, which the check always asks about too (as DTYPE_VIEWS: a bool taken as one bit passed
# when Hypothesis drew no bool); after the last dtype, the first ones again on another layer, up to DTYPE_CASES.
DTYPE_LAYERS: list[Layer] = [(10**6 + 7, 3, DTYPES[i]) if i < len(DTYPES) else
                             (3 * 10**6 + 1, 5, DTYPES[i % len(DTYPES)]) for i in range(DTYPE_CASES)]


# Widths where d * d stops being exact in a number of fixed width (2**24 in a float32, 2**31 in an int32, 2**32 in a
# uint32), just below and past each: drawn now and then (round 23's adversary: the widths drawn stopped at 65535, and
# d * d in a uint32, which wraps from d = 2**16, passed).
WIDTH_EDGES = (4096, 4097, 46340, 46341, 2**16 - 1, 2**16, 2**16 + 1)


def _widths(widest: int) -> st.SearchStrategy[int]:
    return st.one_of(st.integers(1, 2**16), st.integers(2**16, widest), st.sampled_from(WIDTH_EDGES))


WIDEST_AT_AN_EDGE = math.isqrt(LARGEST_BUDGET) - 64  # 1-byte elements: 64 rows of this width and its weight fit


def _at_an_edge(d: int, dtype: torch.dtype, rows: int, off: int) -> Layer:
    """A budget that fits x, w and y of `rows` rows exactly, `off` bytes from it, of width `d` or, where its 64 rows
    would pass LARGEST_BUDGET in this dtype, of the widest width whose 64 rows do not."""
    d = min(d, math.isqrt(LARGEST_BUDGET // dtype.itemsize) - 64)
    return max(0, layer_bytes(rows, d, dtype) + off), d, dtype


def layers() -> st.SearchStrategy[Layer]:
    """(budget, d, dtype): widths from 1 (odd ones too) to WIDEST, budgets from 0 bytes to 8 PiB, and budgets
    that x, w and y of up to 64 rows barely fit in, or miss by a byte or two, up to the widest width that fits in 8
    PiB (round 26's adversary: these stopped at widths of 2**24, where a row is more than 1e-8 of the rows'
    quotient, and floor(x + 1e-8) passed; 1-byte elements reach widths of 9.4 * 10**7 within 8 PiB)."""
    dtype = st.sampled_from(DTYPES)
    anywhere = st.tuples(st.integers(0, LARGEST_BUDGET), _widths(WIDEST), dtype)
    near_an_edge = st.tuples(_widths(WIDEST_AT_AN_EDGE), dtype, st.integers(0, 64), st.integers(-2, 2)).map(
        lambda case: _at_an_edge(*case))
    return st.one_of(near_an_edge, anywhere)


# Layers on which the usual mistakes give numbers of their own (diagnose: the hint for a failing answer); the fourth
# fills its budget to the byte with 7 rows; on the last, of an even width, round() rounds up (on the odd width 333 it
# gives what rounding the weight's d // 2 rows on their own gives); in the very last, the weight alone does not fit.
ORDINARY_LAYERS: list[Layer] = [(12 * 2**30, 4096, torch.bfloat16), (10**9 + 7, 333, torch.float32),
                                (5 * 10**8 + 3, 1000, torch.uint8), ((2 * 7 * 100 + 100**2) * 8, 100, torch.float64),
                                (3 * 10**9 + 1, 512, torch.float16), (10**6, 1024, torch.float32)]


@reference
def _elements(budget: int, dtype: torch.dtype) -> int:
    """The elements of `dtype` that `budget` bytes hold (locked: every shortcut below goes through it, _last's
    comment says why)."""
    return budget // dtype.itemsize


LAYER_SHORTCUTS: list[tuple[Callable[..., object], str]] = [
    (lambda budget, d, dtype: _elements(budget, dtype) // (2 * d), "the weight w is in memory too, next to x and y"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - d * d) // d),
     "the output y = x @ w is a tensor of its own, next to x and w"),
    (lambda budget, d, dtype: max(0, -(-(_elements(budget, dtype) - d * d) // (2 * d))),
     "a batch must fit whole: round the rows down"),
    (lambda budget, d, dtype: max(0, round((_elements(budget, dtype) - d * d) / (2 * d))),
     "a batch must fit whole: round the rows down"),
    (lambda budget, d, dtype: max(0, _elements(budget, dtype) // (2 * d) - d // 2),
     ("round down once, at the end: the weight's share of rows rounded on its own (d // 2 for an odd width) loses "
      "half a row")),
    (lambda budget, d, dtype: max(0, (_elements(budget, torch.float32) - d * d) // (2 * d)),
     "every element takes this dtype's bytes (dtype.itemsize), not four"),
    (lambda budget, d, dtype: max(0, (_elements(budget, torch.uint8) - d * d) // (2 * d * dtype.itemsize)),
     "every element takes this dtype's bytes, the weight's too"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - 2 * d * d) // (2 * d)),
     "the weight w is one tensor: count it once"),
    (lambda budget, d, dtype: _elements(budget, dtype) // (3 * d),
     "the weight w has d * d elements, not b * d as x and y: count every tensor once, at its own shape"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - d * d) // (2 * d) - 1),
     "the largest batch that fits, not one row fewer: round down once"),
    (lambda budget, d, dtype: max(0, (_elements(budget, dtype) - d * d - 1) // (2 * d)),
     "when x, w and y fill the budget to the byte, that batch still fits: may a budget be reached?"),
    (lambda budget, d, dtype: max(1, (_elements(budget, dtype) - d * d) // (2 * d)),
     "when even the weight and one row do not fit, no batch does: the answer is 0"),
]


def _layer_hint(got: int, want: int) -> str:
    """The hint when no usual mistake gives the answer's numbers on the ordinary layers (diagnose, _dtype_hint): on
    the small failing layer (one row of width 1) many mistakes give the same number, so none is named."""
    if got > want:
        return ("x, w and y are all in memory at once: count the bytes of all three, in this dtype's bytes per "
                "element, and round the rows down once")
    return ("count every tensor once, in this dtype's bytes per element, and keep every byte of the budget: "
            "rounding the budget, or the rows to a multiple, gives rows away, and so does a search that stops "
            "short of the largest batch")


def check_largest_batch(largest_batch: Callable[[int, int, torch.dtype], int]) -> None:
    """largest_batch(budget_bytes, d, dtype) must return the largest b for which x (b, d), w (d, d) and
    y = x @ w (b, d) fit in the budget together (0 when none does)."""
    with exercise("largest_batch") as ex:
        yours, limits = _leaving_alone(ex, largest_batch), _Limits()

        def fits(layer: Layer) -> None:
            budget, d, dtype = layer
            call = f"largest_batch({budget}, {d}, {dtype})"
            with limits.timed(ex, call, "a budget can be petabytes: compute the rows from the bytes, without "
                              "trying one batch size after another"):
                got = yours(budget, d, dtype)
            b = integral(got)
            if b is None:
                problem, hint = _not_a_number(got, "rows")
                ex.expect(False, f"{call} returned {shown(got)}, {problem}", hint)
            assert b is not None
            want = most_rows(budget, d, dtype)
            ex.expect(b >= 0, f"{call} returned {b}, a negative batch",
                      "when even the weight does not fit, no batch does: the answer is 0, not a negative number")
            if b != want:
                hint = (diagnose(yours, ORDINARY_LAYERS, most_rows, LAYER_SHORTCUTS)
                        or _dtype_hint(yours, ORDINARY_LAYERS, most_rows, dtype)
                        or _rounding_hint(yours, MOST_ROWS_LAYER, most_rows, b, want, budget // dtype.itemsize)
                        # (too many: a search capped short of the rows, right on every ordinary layer too, gives
                        # too few, and gets the hint of a search)
                        or (_large_hint(yours, ORDINARY_LAYERS, most_rows, max(budget // dtype.itemsize, d * d))
                            if b > want else None)
                        or _layer_hint(b, want))
                ex.expect(b <= want, f"{call} returned {b}: x, w and y then need {layer_bytes(b, d, dtype)} bytes, "
                                     "more than the budget", hint)
                ex.expect(False, f"{call} returned {b}, but {b + 1} {'row fits' if b == 0 else 'rows fit'} too", hint)

        for_all(ex, layers(), fits, chosen=[(12 * 2**30, 4096, torch.float32), (3 * 2**20, 1024, torch.float32),
                                            MOST_ROWS_LAYER, *WIDE_LAYERS, *DTYPE_LAYERS],
                describe=lambda layer: f"largest_batch({layer[0]}, {layer[1]}, {layer[2]})")


register(Exercise(NOTEBOOK, "largest_batch", check_largest_batch))
