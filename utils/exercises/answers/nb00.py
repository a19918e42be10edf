"""Wrong answers, and other right ones, to the exercises of notebook 00 (setup), for the tests: SPOILERS."""

from __future__ import annotations

import decimal
import fractions
import math
import re
import time

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


# Bytes per element from a table of the usual dtypes, any other taken as 4 (a float32): wrong for the float8 kinds,
# uint16, uint64, complex32 (found by an adversary: the check drew only the usual dtypes then).
_SIZES = {torch.float64: 8, torch.float32: 4, torch.float16: 2, torch.bfloat16: 2, torch.int64: 8, torch.int32: 4,
          torch.int16: 2, torch.int8: 1, torch.uint8: 1, torch.bool: 1, torch.complex64: 8, torch.complex128: 16}


def table_of_sizes(shape, stride, offset, dtype):
    if 0 in shape:
        return 0
    return (offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))) * _SIZES.get(dtype, 4)


def bits_from_the_name(shape, stride, offset, dtype):
    """Bytes per element from the last number of the dtype's name: float8_e4m3fn gives 3 bits."""
    if 0 in shape:
        return 0
    numbers = re.findall(r"\d+", str(dtype))
    return (offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))) * (int(numbers[-1]) // 8 if numbers else 1)



# Found by a second adversary (each FAILed; most with a hint that named another mistake, read from the shrunk case).
def _elements_to_the_last(shape, stride, offset):
    return offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))


def _bytes_from_bits(dtype):
    """Bytes per element from finfo / iinfo bits, bool as 1: a complex dtype's finfo is its real part's.  A dtype of
    neither (int1 ... int7, bits16 ...: both raise TypeError) is taken as one byte."""
    if dtype == torch.bool:
        return 1
    try:
        return torch.finfo(dtype).bits // 8
    except TypeError:
        try:
            return torch.iinfo(dtype).bits // 8
        except TypeError:
            return 1


def bits_of_finfo(shape, stride, offset, dtype):
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * _bytes_from_bits(dtype)


def fp4_as_half_a_byte(shape, stride, offset, dtype):
    """float4_e2m1fn_x2 packs two 4-bit numbers in each element: taken as half a byte per element."""
    if 0 in shape:
        return 0
    n = _elements_to_the_last(shape, stride, offset)
    return -(-n // 2) if dtype == getattr(torch, "float4_e2m1fn_x2", None) else n * dtype.itemsize


def numpy_float_for_a_scalar(shape, stride, offset, dtype):
    """np.array(()) is a float array: a view of rank 0 gives 4.0 bytes."""
    if 0 in shape:
        return 0
    return (offset + 1 + np.dot(np.array(shape) - 1, np.array(stride))) * dtype.itemsize


def meta_set(shape, stride, offset, dtype):
    """Right: set_ on the meta device grows the (empty) meta storage to hold the view, as PyTorch sizes storages."""
    view = torch.empty(0, dtype=dtype, device="meta")
    view.set_(view.untyped_storage(), offset, shape, stride)
    return view.untyped_storage().nbytes()


def bits_with_complex_doubled(shape, stride, offset, dtype):
    """finfo / iinfo bits, a complex number as two reals, a bool as a byte, and a dtype of neither (int1 ... int7, uint1
    ... uint7, bits16 ...: iinfo raises TypeError for them) taken as one byte: wrong for bits16.  Right for the 22
    dtypes the check asked about until round 17; the check asks about every dtype a view can have since."""
    if 0 in shape:
        return 0
    if dtype == torch.bool:
        size = 1
    elif dtype.is_complex:
        size = 2 * torch.finfo(dtype).bits // 8
    elif dtype.is_floating_point:
        size = torch.finfo(dtype).bits // 8
    else:
        try:
            size = torch.iinfo(dtype).bits // 8
        except TypeError:
            size = 1
    return _elements_to_the_last(shape, stride, offset) * size


_SET_UP: list[bool] = []


def set_up_on_the_first_call(shape, stride, offset, dtype):
    """Right: its first call pays a one-time cost of 2.1 s (as an import inside the function, or PyTorch's lazy set-up,
    does on a loaded machine: torch._prims_common.compute_required_storage_length's first call takes 1.3 s idle); a
    third adversary found the 2 s limit of every call FAILing it as a search that never ends."""
    if not _SET_UP:
        time.sleep(2.1)
        _SET_UP.append(True)
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * dtype.itemsize


def one_row_at_a_time(budget, d, dtype):
    """Right on a small budget; on a budget of terabytes it never returns (the check stops it)."""
    b = 0
    if d * d * dtype.itemsize > budget:
        return 0
    while (2 * (b + 1) * d + d * d) * dtype.itemsize <= budget:
        b += 1
    return b


def searches_with_the_checks_count(budget, d, dtype):
    """A search on nb00.layer_bytes, the check's own byte count (locked: it FAILs)."""
    from utils.exercises import nb00

    if nb00.layer_bytes(0, d, dtype) > budget:
        return 0
    lo, hi = 0, 1
    while nb00.layer_bytes(hi, d, dtype) <= budget:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if nb00.layer_bytes(mid, d, dtype) <= budget else (lo, mid)
    return lo


def galloping(budget, d, dtype):
    """Right: an exponential, then a binary search on whether b rows fit."""
    def fits(b):
        return (2 * b * d + d * d) * dtype.itemsize <= budget

    if not fits(0):
        return 0
    hi = 1
    while fits(hi):
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


WRONG_VIEWS = {
    "a table of the usual dtypes' sizes, others taken as 4 bytes": table_of_sizes,
    "bytes from the last number of the dtype's name": bits_from_the_name,
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
    "ends at the start of the last element (no + 1)": lambda shape, stride, offset, dtype: (
        0 if 0 in shape else (_elements_to_the_last(shape, stride, offset) - 1) * dtype.itemsize),
    "the offset counted in bytes": lambda shape, stride, offset, dtype: (
        0 if 0 in shape else offset + (_elements_to_the_last(shape, stride, 0)) * dtype.itemsize),
    "a 0-d view counted as empty": lambda shape, stride, offset, dtype: (
        0 if not shape or 0 in shape else _elements_to_the_last(shape, stride, offset) * dtype.itemsize),
    "bytes from finfo / iinfo bits (a complex dtype's are its real part's)": bits_of_finfo,
    "float4_e2m1fn_x2 as half a byte per element": fp4_as_half_a_byte,
    "NumPy's float for a view of rank 0": numpy_float_for_a_scalar,
}

ALSO_RIGHT_VIEWS = {
    "asks PyTorch on the meta device": on_the_meta_device,
    "NumPy's dot product": with_numpy,
    "set_ on the meta device": meta_set,
    "a one-time set-up of 2.1 s on its first call": set_up_on_the_first_call,
}


# ---------------------------------------------------------------- exercise 2: largest_batch
def _bisect(budget, d, dtype, most):
    """The largest b in 0 .. most whose layer fits: a search with a ceiling."""
    lo, hi = 0, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if (2 * mid * d + d * d) * dtype.itemsize <= budget else (lo, mid - 1)
    return lo


WRONG_BATCHES = {
    "a table of the usual dtypes' sizes, others taken as 4 bytes": lambda budget, d, dtype: max(
        0, (budget - d * d * _SIZES.get(dtype, 4)) // (2 * d * _SIZES.get(dtype, 4))),
    "tries one batch size after another (never ends on terabytes)": one_row_at_a_time,
    "searches with the check's own nb00.layer_bytes": searches_with_the_checks_count,
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
    "round() to the nearest row": lambda budget, d, dtype: max(0, round((budget / dtype.itemsize - d * d) / (2 * d))),
    "at least one row": lambda budget, d, dtype: max(1, (budget // dtype.itemsize - d * d) // (2 * d)),
    "the weight's d * d taken from bytes, not elements": lambda budget, d, dtype: max(
        0, (budget - d * d) // (2 * d * dtype.itemsize)),
    "strictly under the budget": lambda budget, d, dtype: max(0, ((budget - 1) // dtype.itemsize - d * d) // (2 * d)),
    "w counted as (b, d), like x and y": lambda budget, d, dtype: budget // dtype.itemsize // (3 * d),
    "rows rounded down to a multiple of 8": lambda budget, d, dtype: max(
        0, (budget // dtype.itemsize - d * d) // (2 * d)) // 8 * 8,
    "bytes from finfo / iinfo bits (a complex dtype's are its real part's)": lambda budget, d, dtype: max(
        0, (budget // _bytes_from_bits(dtype) - d * d) // (2 * d)),
    "float4_e2m1fn_x2 as half a byte per element": lambda budget, d, dtype: max(0, int(
        (budget / (0.5 if dtype == getattr(torch, "float4_e2m1fn_x2", None) else dtype.itemsize) - d * d) // (2 * d))),
    "a bisection over 0 .. 2**31 rows": lambda budget, d, dtype: _bisect(budget, d, dtype, 2**31),
    # A third adversary: short only past 2 TiB with 1-byte elements of width 1, a corner the check then never drew.
    "a bisection over 0 .. 2**40 rows": lambda budget, d, dtype: _bisect(budget, d, dtype, 2**40),
    "rows capped at 10**12": lambda budget, d, dtype: min(
        10**12, max(0, (budget // dtype.itemsize - d * d) // (2 * d))),
}

WRONG = {
    "check_storage_nbytes": WRONG_VIEWS,
    "check_largest_batch": WRONG_BATCHES,
}
ALSO_RIGHT_BATCHES = {
    "by bytes, without dividing into elements first": lambda budget, d, dtype: max(
        0, (budget - d * d * dtype.itemsize) // (2 * d * dtype.itemsize)),
    "a NumPy integer": lambda budget, d, dtype: np.int64(max(0, (budget // dtype.itemsize - d * d) // (2 * d))),
    "galloping search on whether b rows fit": galloping,
    "a 0-d tensor": lambda budget, d, dtype: torch.tensor(max(0, (budget // dtype.itemsize - d * d) // (2 * d))),
    "float division, then floor (exact for budgets under 2**53 bytes)": lambda budget, d, dtype: max(
        0, math.floor((budget / dtype.itemsize - d * d) / (2 * d))),
    "floor divisions nested": lambda budget, d, dtype: max(
        0, (budget - d * d * dtype.itemsize) // (2 * d) // dtype.itemsize),
}
ALSO_RIGHT = {
    "check_storage_nbytes": ALSO_RIGHT_VIEWS,
    "check_largest_batch": ALSO_RIGHT_BATCHES,
}


# Found by a fourth adversary: the check drew about a hundred views and layers from 22 dtypes, and missed some (no
# complex32 or bfloat16 among the views, no bool, int8 or int32 among the layers): each dtype is now asked once.
_FULL_TABLE = {torch.bool: 1, torch.uint8: 1, torch.int8: 1, torch.int16: 2, torch.int32: 4, torch.int64: 8,
               torch.float16: 2, torch.bfloat16: 2, torch.float32: 4, torch.float64: 8, torch.complex32: 8,
               torch.complex64: 8, torch.complex128: 16}
_FULL_TABLE.update({getattr(torch, name): size for name, size in (
    ("uint16", 2), ("uint32", 4), ("uint64", 8), ("float8_e4m3fn", 1), ("float8_e5m2", 1), ("float8_e4m3fnuz", 1),
    ("float8_e5m2fnuz", 1), ("float8_e8m0fnu", 1), ("float4_e2m1fn_x2", 1)) if hasattr(torch, name)})
_WITHOUT_HALVES = {dtype: size for dtype, size in _FULL_TABLE.items() if dtype not in (torch.complex32, torch.bfloat16)}


def full_table_complex32_as_8(shape, stride, offset, dtype):
    """A table of every usual dtype, complex32 taken as two float32s (it is two float16s: 4 bytes), any other as one
    byte."""
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * _FULL_TABLE.get(dtype, 1)


def table_without_complex32_and_bfloat16(shape, stride, offset, dtype):
    """A table that lacks complex32 and bfloat16: its KeyError reaches the student (tests/test_exercises_00.py)."""
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * _WITHOUT_HALVES[dtype]


def _bits_bool_as_one(dtype):
    return 1 if dtype == torch.bool else dtype.itemsize * 8


def bool_as_one_bit(shape, stride, offset, dtype):
    """A bool taken as one bit, the bits rounded up to whole bytes."""
    return 0 if 0 in shape else -(-_elements_to_the_last(shape, stride, offset) * _bits_bool_as_one(dtype) // 8)


def element_size_of_ones(shape, stride, offset, dtype):
    """element_size() of torch.ones(1, dtype): float4_e2m1fn_x2 cannot be filled (PyTorch's NotImplementedError)."""
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * torch.ones(1, dtype=dtype).element_size()


def by_stride(shape, stride, offset, dtype):
    """A dict from stride to size: two dimensions of the same stride collapse into one."""
    if 0 in shape:
        return 0
    return (offset + 1 + sum((n - 1) * s for s, n in dict(zip(stride, shape)).items())) * dtype.itemsize


def meta_view_and_offset(shape, stride, offset, dtype):
    """Right: a meta tensor of the view (its storage starts at the view's first element), plus the offset's bytes."""
    if 0 in shape:
        return 0
    view = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    return view.untyped_storage().nbytes() + offset * view.element_size()


def last_element_in_a_loop(shape, stride, offset, dtype):
    """Right: a loop to the index of the last element reached."""
    last = offset
    for n, s in zip(shape, stride):
        if n == 0:
            return 0
        last += (n - 1) * s
    return (last + 1) * dtype.itemsize


def an_int64_tensor(shape, stride, offset, dtype):
    """Right: int64 tensors, a 0-d tensor returned."""
    if math.prod(shape) == 0:
        return torch.tensor(0)
    sizes = torch.tensor(list(shape) or [1], dtype=torch.int64)
    strides = torch.tensor(list(stride) or [0], dtype=torch.int64)
    return ((sizes - 1) * strides).sum().add(offset + 1).mul(dtype.itemsize)


def numpy_uint64(shape, stride, offset, dtype):
    """Right: NumPy uint64 (sizes, strides and offsets are never negative)."""
    if 0 in shape:
        return 0
    sizes, strides = np.asarray(shape, dtype=np.uint64), np.asarray(stride, dtype=np.uint64)
    return (offset + 1 + (int(((sizes - np.uint64(1)) * strides).sum()) if shape else 0)) * dtype.itemsize


def _budget_search(budget, d, dtype):
    """Right: a binary search on b, its ceiling from the budget."""
    lo, hi = 0, budget // (2 * d * dtype.itemsize) + 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if (2 * mid * d + d * d) * dtype.itemsize <= budget else (lo, mid - 1)
    return lo


def _decimal_floor(budget, d, dtype):
    """Right: Decimal with 50 digits, then floor."""
    with decimal.localcontext() as context:
        context.prec = 50
        return max(0, math.floor((decimal.Decimal(budget // dtype.itemsize) - d * d) / (2 * d)))


def _meta_bytes(budget, d, dtype):
    """Right: a meta tensor's nbytes for the weight, and for one row of x and y."""
    weight = torch.empty(d, d, dtype=dtype, device="meta").nbytes
    return max(0, (budget - weight) // (2 * torch.empty(1, d, dtype=dtype, device="meta").nbytes))


WRONG_VIEWS.update({
    "a full table of sizes, complex32 as 8 bytes (two float32s)": full_table_complex32_as_8,
    "a bool taken as one bit, rounded up to whole bytes": bool_as_one_bit,
    "element_size of torch.ones(1, dtype) (float4 cannot be filled)": element_size_of_ones,
    "only the first 3 dimensions": lambda shape, stride, offset, dtype: (
        0 if 0 in shape else _elements_to_the_last(shape[:3], stride[:3], offset) * dtype.itemsize),
    "a dict from stride to size (two dimensions of one stride collapse)": by_stride,
})
ALSO_RIGHT_VIEWS.update({
    "a meta tensor of the view, and the offset's bytes": meta_view_and_offset,
    "torch._prims_common.compute_required_storage_length": lambda shape, stride, offset, dtype: (
        torch._prims_common.compute_required_storage_length(shape, stride, offset) * dtype.itemsize),
    "a loop to the last element reached": last_element_in_a_loop,
    "int64 tensors, a 0-d tensor returned": an_int64_tensor,
    "NumPy uint64": numpy_uint64,
    "in bytes throughout": lambda shape, stride, offset, dtype: 0 if 0 in shape else (
        offset * dtype.itemsize + sum((n - 1) * s * dtype.itemsize for n, s in zip(shape, stride)) + dtype.itemsize),
})
WRONG_BATCHES.update({
    "a full table of sizes, complex32 as 8 bytes (two float32s)": lambda budget, d, dtype: max(
        0, (budget // _FULL_TABLE.get(dtype, 1) - d * d) // (2 * d)),
    "a bool taken as one bit": lambda budget, d, dtype: max(
        0, (budget * 8 // _bits_bool_as_one(dtype) - d * d) // (2 * d)),
    "d * d in an int32 (wraps from d = 46341)": lambda budget, d, dtype: max(
        0, (budget // dtype.itemsize - int(np.int32(d) * np.int32(d))) // (2 * d)),
})
ALSO_RIGHT_BATCHES.update({
    "a binary search, its ceiling from the budget": _budget_search,
    "Fraction, then floor": lambda budget, d, dtype: max(
        0, math.floor((fractions.Fraction(budget, dtype.itemsize) - d * d) / (2 * d))),
    "Decimal, then floor": _decimal_floor,
    "(E // d - d) // 2": lambda budget, d, dtype: max(0, (budget // dtype.itemsize // d - d) // 2),
    "meta tensors' nbytes for the weight and a row": _meta_bytes,
    "int64 tensors, clamped at 0": lambda budget, d, dtype: torch.clamp(
        (torch.tensor(budget) // dtype.itemsize - d * d) // (2 * d), min=0),
})


# Found by the round-17 adversary: the check drew views of at most 4 dimensions, from 22 dtypes, and budgets of at most
# 4 TiB; it draws up to 8 dimensions (and always asks about a view of 10), every dtype a view can have (41 in PyTorch
# 2.13: the sub-byte integers and the bits kinds too), and budgets up to 8 PiB now.
_USUAL_22 = {**_FULL_TABLE, torch.complex32: 4}


def last_four_dimensions(shape, stride, offset, dtype):
    """Views taken as at most NCHW: the last four dimensions only, any before them ignored."""
    return 0 if 0 in shape else _elements_to_the_last(shape[-4:], stride[-4:], offset) * dtype.itemsize


def usual_22_others_one_byte(shape, stride, offset, dtype):
    """A table of the 22 usual dtypes (complex32 right), any other dtype taken as one byte: wrong for bits16."""
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * _USUAL_22.get(dtype, 1)


def sub_byte_integers_packed(shape, stride, offset, dtype):
    """int1 ... int7 and uint1 ... uint7 counted as packed bits, rounded up to whole bytes (each takes one byte)."""
    if 0 in shape:
        return 0
    bits = re.fullmatch(r"torch\.u?int([1-7])", str(dtype))
    elements = _elements_to_the_last(shape, stride, offset)
    return -(-elements * int(bits[1]) // 8) if bits else elements * dtype.itemsize


def in_float64(shape, stride, offset, dtype):
    """The count in float64 (math.fsum of float products): exact up to 2**53 only."""
    if 0 in shape:
        return 0
    return int((float(offset) + 1.0 + math.fsum(float(n - 1) * float(s) for n, s in zip(shape, stride)))
               * dtype.itemsize)


def bytes_from_the_name_rounded_up(shape, stride, offset, dtype):
    """Right: the bits in the dtype's name (its last number; 8 for bool and the float8 and float4 kinds, whose
    elements are a byte each), rounded up to whole bytes, a complex number as two reals."""
    if 0 in shape:
        return 0
    name = str(dtype).removeprefix("torch.")
    numbers = re.findall(r"\d+", name)
    bits = 8 if name == "bool" or name.startswith(("float8", "float4")) else int(numbers[-1])
    return _elements_to_the_last(shape, stride, offset) * -(-bits // 8)


def _float32_rows(budget, d, dtype):
    """The rows in float32 (a torch scalar): exact up to 2**24 elements only."""
    elements = torch.tensor(float(budget), dtype=torch.float32) / dtype.itemsize
    return max(0, int(torch.floor((elements - d * d) / (2 * d))))


WRONG_VIEWS.update({
    "the last four dimensions only (NCHW at most)": last_four_dimensions,
    "a table of the 22 usual dtypes, any other taken as one byte": usual_22_others_one_byte,
    "sub-byte integers as packed bits (uint4 as half a byte)": sub_byte_integers_packed,
    "finfo / iinfo bits, a complex number as two reals, others as one byte": bits_with_complex_doubled,
    "float64 arithmetic (math.fsum)": in_float64,
})
ALSO_RIGHT_VIEWS.update({
    "bits from the dtype's name, rounded up to bytes": bytes_from_the_name_rounded_up,
})
WRONG_BATCHES.update({
    "a bisection over 0 .. 2**41 rows (the 4 TiB of an earlier round)": lambda budget, d, dtype: _bisect(
        budget, d, dtype, 2**41),
    "a table of the 22 usual dtypes, any other taken as one byte": lambda budget, d, dtype: max(
        0, (budget // _USUAL_22.get(dtype, 1) - d * d) // (2 * d)),
    "float32 arithmetic": _float32_rows,
})
ALSO_RIGHT_BATCHES.update({
    "a bisection over 0 .. 2**53 rows (the task's largest budget)": lambda budget, d, dtype: _bisect(
        budget, d, dtype, 2**53),
})


# Found by round 23's adversary.  (A) A global setting changed inside the answer and left: the checks of 00 called the
# answer bare, and every later cell (and check) ran under it; (B) inputs the fixed seed never drew: offsets past 2**31
# (or an odd one past 2**24), counts past 2**53 in a dtype of 2 bytes or more, widths of 2**16 or more; (C) a meta
# tensor returned, which the check's own integral() called .item() on, and crashed.
def _meta_view_bytes(shape, stride, offset, dtype):
    view = torch.empty_strided(shape, stride, dtype=dtype)
    return 0 if view.numel() == 0 else view.untyped_storage().nbytes() + offset * dtype.itemsize


def meta_made_the_default_device(shape, stride, offset, dtype):
    """round 23's adversary: torch.set_default_device("meta") to make the view there, left for every later tensor."""
    torch.set_default_device("meta")
    return _meta_view_bytes(shape, stride, offset, dtype)


def complex32_warning_silenced(shape, stride, offset, dtype):
    """round 23's adversary: warnings.simplefilter("ignore") against complex32's warning, left for the session."""
    import warnings

    warnings.simplefilter("ignore")
    view = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    return 0 if view.numel() == 0 else view.untyped_storage().nbytes() + offset * dtype.itemsize


def recursion_limit_raised(shape, stride, offset, dtype):
    """round 23's adversary: a recursive walk over the dimensions, sys.setrecursionlimit(100_000) left."""
    import sys

    sys.setrecursionlimit(100_000)

    def reach(dims):
        if not dims:
            return 0
        (n, s), *rest = dims
        return (n - 1) * s + reach(rest)

    return 0 if 0 in shape else (offset + 1 + reach(list(zip(shape, stride)))) * dtype.itemsize


def meta_device_context_entered(shape, stride, offset, dtype):
    """round 23's adversary: torch.device("meta").__enter__(), never left: meta stays on the function-mode stack."""
    torch.device("meta").__enter__()
    return _meta_view_bytes(shape, stride, offset, dtype)


def meta_tensor_arithmetic(shape, stride, offset, dtype):
    """round 23's adversary: the arithmetic on meta tensors, a 0-d meta tensor (a shape, no value) returned."""
    if 0 in shape:
        return 0
    sizes = torch.tensor(list(shape), dtype=torch.int64, device="meta")
    strides = torch.tensor(list(stride), dtype=torch.int64, device="meta")
    return (((sizes - 1) * strides).sum() + offset + 1) * dtype.itemsize


def offset_in_int32(shape, stride, offset, dtype):
    """round 23's adversary: the offset in an int32 (as a CUDA kernel indexes), which wraps from 2**31."""
    if 0 in shape:
        return 0
    start = int(np.int64(offset).astype(np.int32))
    return (start + 1 + sum((n - 1) * s for n, s in zip(shape, stride))) * dtype.itemsize


def offset_bytes_in_float32(shape, stride, offset, dtype):
    """round 23's adversary: the offset's bytes through a float32 tensor: exact up to 24 significant bits only."""
    if 0 in shape:
        return 0
    start = int(torch.tensor(float(offset * dtype.itemsize), dtype=torch.float32).item())
    return start + (1 + sum((n - 1) * s for n, s in zip(shape, stride))) * dtype.itemsize


def bits_over_eight_for_floats(shape, stride, offset, dtype):
    """round 23's adversary: finfo(dtype).bits / 8 (a true division) for floating dtypes, int() at the end: the count
    is a float64 for them, rounded past 2**53 bytes."""
    if 0 in shape:
        return 0
    size = torch.finfo(dtype).bits / 8 if dtype.is_floating_point else dtype.itemsize
    return int(_elements_to_the_last(shape, stride, offset) * size)


def float64_made_the_default_dtype(budget, d, dtype):
    """round 23's adversary: torch.set_default_dtype(torch.float64) for exact tensor arithmetic, left."""
    torch.set_default_dtype(torch.float64)
    elements = torch.floor(torch.tensor(budget) / dtype.itemsize)
    return max(0, int(torch.floor((elements - d * d) / (2 * d)).item()))


def decimal_precision_left(budget, d, dtype):
    """round 23's adversary: decimal.getcontext().prec = 60, on the process's context, left."""
    decimal.getcontext().prec = 60
    return max(0, int((decimal.Decimal(budget) // dtype.itemsize - d * d) // (2 * d)))


def print_options_for_debugging(budget, d, dtype):
    """round 23's adversary: torch.set_printoptions(sci_mode=False, precision=0) of a debugging print, left."""
    torch.set_printoptions(sci_mode=False, precision=0)
    return max(0, (budget // dtype.itemsize - d * d) // (2 * d))


def grad_mode_off(budget, d, dtype):
    """round 23's adversary: torch.set_grad_enabled(False) "no autograd for sizes", left."""
    torch.set_grad_enabled(False)
    return max(0, int((torch.tensor(budget) // dtype.itemsize - d * d) // (2 * d)))


def meta_tensor_rows(budget, d, dtype):
    """round 23's adversary: the rows on meta tensors, the meta tensor (no value) returned."""
    elements = torch.tensor(budget, device="meta") // dtype.itemsize
    return torch.clamp((elements - d * d) // (2 * d), min=0)


def d_squared_in_uint32(budget, d, dtype):
    """round 23's adversary: d * d in NumPy uint32, which wraps from d = 2**16, a width the task allows."""
    weight = int(np.uint32(d) * np.uint32(d)) if d < 2**32 else d * d
    return max(0, (budget // dtype.itemsize - weight) // (2 * d))


WRONG_VIEWS.update({
    "round 23: torch.set_default_device('meta') left": meta_made_the_default_device,
    "round 23: warnings.simplefilter('ignore') left (complex32's warning)": complex32_warning_silenced,
    "round 23: sys.setrecursionlimit raised and left": recursion_limit_raised,
    "round 23: torch.device('meta').__enter__() left pushed": meta_device_context_entered,
    "round 23: meta tensors' arithmetic, a meta tensor returned": meta_tensor_arithmetic,
    "round 23: the offset in int32": offset_in_int32,
    "round 23: the offset's bytes in float32": offset_bytes_in_float32,
    "round 23: finfo bits / 8 for floating dtypes, int() at the end": bits_over_eight_for_floats,
})
WRONG_BATCHES.update({
    "round 23: torch.set_default_dtype(torch.float64) left": float64_made_the_default_dtype,
    "round 23: decimal.getcontext().prec left": decimal_precision_left,
    "round 23: torch.set_printoptions left": print_options_for_debugging,
    "round 23: torch.set_grad_enabled(False) left": grad_mode_off,
    "round 23: meta tensors, a meta tensor returned": meta_tensor_rows,
    "round 23: d * d in uint32 (wraps at d = 65536)": d_squared_in_uint32,
})


def seeds_for_reproducibility(budget, d, dtype):
    """torch.manual_seed(0) "for reproducibility" in a function that draws nothing: the caller's random numbers after
    every call are the same (the class of round 23's settings left changed: the checks of 00 watch the seeding too)."""
    torch.manual_seed(0)
    return max(0, (budget // dtype.itemsize - d * d) // (2 * d))


WRONG_BATCHES["round 23: torch.manual_seed(0) at every call"] = seeds_for_reproducibility


# Found by round 26's adversary.  (A) Process-wide state left changed that the checks did not watch: a warnings filter
# for a whole category (only catch-all filters were watched), a dispatch mode left pushed (only the function-mode stack
# was watched); (B) inputs never asked: views of more than 10 dimensions, exact fits of layers wider than 2**24; (C)
# right answers refused: an exact Decimal returned, a one-time cost paid on a later call than the first.
def _meta_storage_bytes(shape, stride, offset, dtype, device="meta"):
    view = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    return 0 if view.numel() == 0 else view.untyped_storage().nbytes() + offset * dtype.itemsize


def meta_userwarnings_silenced(shape, stride, offset, dtype):
    """round 26's adversary: warnings.filterwarnings("ignore", category=UserWarning) against complex32's warning,
    left: every UserWarning of the session is silenced after the call."""
    import warnings

    warnings.filterwarnings("ignore", category=UserWarning)
    return _meta_storage_bytes(shape, stride, offset, dtype)


def _counting_mode():
    """A dispatch mode that counts the operations it sees (an op counter, the kind of torch.utils._python_dispatch's
    modes; FakeTensorMode is one too, whose first construction takes seconds: round 26's adversary entered one)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Counting(TorchDispatchMode):
        operations = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Counting.operations += 1
            return func(*args, **(kwargs or {}))

    return Counting()


def dispatch_mode_left_entered(shape, stride, offset, dtype):
    """round 26's adversary: a dispatch mode entered with __enter__() (FakeTensorMode, "tensors without memory", in
    its answer; an op counter here, entered after the count: the first operation through a Python dispatch mode
    imports for seconds), never left: every later operation of the session goes through it."""
    nbytes = 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * dtype.itemsize
    _counting_mode().__enter__()
    return nbytes


def ten_dimensions_at_most(shape, stride, offset, dtype):
    """round 26's adversary: fixed arrays of 10 dimensions (a CUDA kernel's MAX_DIMS), dimensions past 10 dropped."""
    if 0 in shape:
        return 0
    return _elements_to_the_last(shape[:10], stride[:10], offset) * dtype.itemsize


def every_corner(shape, stride, offset, dtype):
    """round 26's adversary: the farthest of the view's 2**rank corners: right, and exponential in the rank (a view of
    40 dimensions never returns)."""
    import itertools

    if 0 in shape:
        return 0
    far = max((offset + sum(i * s for i, s in zip(corner, stride))
               for corner in itertools.product(*[(0, n - 1) for n in shape])), default=offset)
    return (far + 1) * dtype.itemsize


def decimal_bytes(shape, stride, offset, dtype):
    """round 26's adversary: exact Decimal arithmetic (28 digits: every count here has at most 19), a Decimal of a
    whole number returned."""
    if 0 in shape:
        return 0
    last = decimal.Decimal(offset) + sum(decimal.Decimal(n - 1) * s for n, s in zip(shape, stride))
    return (last + 1) * dtype.itemsize


_LARGE_SET_UP: list[bool] = []


def set_up_on_the_first_large_view(shape, stride, offset, dtype):
    """round 26's adversary: a one-time cost of 2.1 s on the first view whose numbers pass 2**31 (a lazy import for
    large numbers, sympy's say), not on the answer's first call."""
    if max((offset, *shape, *stride), default=0) >= 2**31 and not _LARGE_SET_UP:
        time.sleep(2.1)
        _LARGE_SET_UP.append(True)
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * dtype.itemsize


def floor_with_an_epsilon(budget, d, dtype):
    """round 26's adversary: float division, then floor(x + 1e-8) "against float error": one row too many where the
    exact quotient is within 1e-8 below a whole number (widths past 5 * 10**7, a budget a byte short of a fit)."""
    return max(0, math.floor((budget / dtype.itemsize - d * d) / (2 * d) + 1e-8))


def meta_rows_userwarnings_silenced(budget, d, dtype):
    """round 26's adversary: meta tensors' nbytes, warnings.simplefilter("ignore", UserWarning) left."""
    import warnings

    warnings.simplefilter("ignore", UserWarning)
    return _meta_bytes(budget, d, dtype)


def dispatch_mode_rows(budget, d, dtype):
    """round 26's adversary: a dispatch mode (FakeTensorMode in its answer) entered, left pushed (as above)."""
    _counting_mode().__enter__()
    return max(0, (budget // dtype.itemsize - d * d) // (2 * d))


def decimal_rows(budget, d, dtype):
    """round 26's adversary: exact Decimal arithmetic, a Decimal of a whole number returned."""
    rest = decimal.Decimal(budget) // dtype.itemsize - d * d
    return decimal.Decimal(0) if rest < 0 else rest // (2 * d)


WRONG_VIEWS.update({
    "round 26: warnings.filterwarnings('ignore', category=UserWarning) left": meta_userwarnings_silenced,
    "round 26: a dispatch mode (FakeTensorMode's kind) left pushed": dispatch_mode_left_entered,
    "round 26: at most 10 dimensions (fixed arrays)": ten_dimensions_at_most,
    "round 26: the farthest of all 2**rank corners": every_corner,
})
ALSO_RIGHT_VIEWS.update({
    "round 26: Decimal arithmetic, a Decimal returned": decimal_bytes,
    "round 26: a one-time set-up of 2.1 s on the first view past 2**31": set_up_on_the_first_large_view,
})
WRONG_BATCHES.update({
    "round 26: floor(x + 1e-8) against float error": floor_with_an_epsilon,
    "round 26: warnings.simplefilter('ignore', UserWarning) left": meta_rows_userwarnings_silenced,
    "round 26: a dispatch mode (FakeTensorMode's kind) left pushed": dispatch_mode_rows,
})
ALSO_RIGHT_BATCHES.update({
    "round 26: Decimal arithmetic, a Decimal returned": decimal_rows,
})


# Found by round 32's adversary: the check drew some kinds of view only in some sizes of element (a view of rank 0 only
# of 1-byte dtypes; no nonempty view of rank 1 or more whose sizes are all 1; views of rank 1 only of 1, 2 and 4 bytes,
# of rank 4 and 5 only of 1 byte), and asked about every dtype on views of rank 1 and 2 only: a branch for one kind of
# view that miscounts a size of element passed.  It asks about each kind of view in each size of element now.
def _right_bytes(shape, stride, offset, dtype):
    return 0 if 0 in shape else _elements_to_the_last(shape, stride, offset) * dtype.itemsize


def scalar_shortcut_in_elements(shape, stride, offset, dtype):
    """round 32's adversary: a shortcut for a 0-d view ("one element after `offset` of them") that counts elements,
    not bytes: right for 1-byte dtypes only."""
    if not shape:
        return offset + 1
    return _right_bytes(shape, stride, offset, dtype)


def one_element_offset_in_bytes(shape, stride, offset, dtype):
    """round 32's adversary: a shortcut for a view of one element (x[i, j], x[i:i+1, j:j+1], a 0-d view): its offset
    taken as bytes, plus the element's bytes: right for 1-byte dtypes only."""
    if 0 in shape:
        return 0
    if math.prod(shape) == 1:
        return offset + dtype.itemsize
    return _right_bytes(shape, stride, offset, dtype)


def one_element_no_offset(shape, stride, offset, dtype):
    """round 32's adversary: a view of one element of rank 1 or more "needs one element": the elements before it
    forgotten (wrong in every dtype, where the offset is not 0)."""
    if shape and math.prod(shape) == 1:
        return dtype.itemsize
    return _right_bytes(shape, stride, offset, dtype)


def rank1_fast_path_size_table(shape, stride, offset, dtype):
    """round 32's adversary: a fast path for 1-d views (slices, x[::k]) with the bytes per element from a table of
    the 1- and 2-byte sizes, any other taken as 4 (wrong for every 1-d view of 8 or 16 bytes per element)."""
    if 0 in shape:
        return 0
    if len(shape) == 1:
        size = {1: 1, 2: 2}.get(dtype.itemsize, 4)
        return (offset + 1 + (shape[0] - 1) * stride[0]) * size
    return _right_bytes(shape, stride, offset, dtype)


WRONG_VIEWS.update({
    "round 32: a 0-d shortcut counting elements, not bytes": scalar_shortcut_in_elements,
    "round 32: a one-element shortcut with the offset in bytes": one_element_offset_in_bytes,
    "round 32: a one-element (rank >= 1) shortcut forgetting the offset": one_element_no_offset,
    "round 32: a 1-d fast path with a table of 1/2/4-byte sizes": rank1_fast_path_size_table,
})


def rows_divided_in_float32(budget, d, dtype):
    """round 32's adversary: the rows divided on a float32 tensor, exact up to 2**24 elements only: it FAILed, with the
    hint of a dtype's bytes per element (on the ordinary layers, its error showed in uint8 alone, the dtype of the most
    elements per byte); the hint names the float now (tests/test_exercises_00.py: its verdict was right already, so it
    is no WRONG entry)."""
    x = torch.tensor(budget // dtype.itemsize - d * d, dtype=torch.float64)
    rows = torch.div(x.to(torch.float32), 2 * d, rounding_mode="floor")
    return max(0, int(rows.item()))



def numpy_byte_bounds(shape, stride, offset, dtype):
    """Wrong (round 65's adversary): NumPy measures the view (as_strided over one element of the same size, nothing
    read, then byte_bounds): right wherever NumPy can make the view, an error where its elements times their bytes
    pass 2**63 (an expanded view of 2**62 elements: "array is too big")."""
    import numpy as np
    from numpy.lib.stride_tricks import as_strided
    try:
        from numpy.lib.array_utils import byte_bounds
    except ImportError:  # NumPy before 2.0
        byte_bounds = np.byte_bounds
    size = dtype.itemsize
    if any(n == 0 for n in shape):
        return 0
    view = as_strided(np.zeros(1, dtype=f"V{size}"), shape=tuple(shape), strides=tuple(s * size for s in stride))
    low, high = byte_bounds(view)
    return offset * size + (high - low)


WRONG_VIEWS["NumPy measures the view (as_strided, byte_bounds): too big for NumPy past 2**63 bytes"] = \
    numpy_byte_bounds


# ---------------------------------------------------------------- round 79's adversary
# Twelve answers (report adv145), judged on a CPU: two wrong ones PASSed.  A dense shortcut that paired the sorted
# strides with unsorted sizes: no view the check asked had strides that were its own shape's dense strides in another
# order with unequal sizes (nb00.near_dense_views and two VIEW_KINDS now ask such views); and the check's unlocked
# helper nb00._last, the core of fewest_bytes (every helper that computes part of a reference is locked now: _last,
# _elements, and every shortcut goes through one of them).
def _dense_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _dense(shape, stride):
    """Dense (C-contiguous), a dimension of size 1 taking any stride (it steps nowhere)."""
    return all(n == 1 or s == c for n, s, c in zip(shape, stride, _dense_strides(shape)))


def dense_shortcut_without_the_offset(shape, stride, offset, dtype):
    """Wrong (round 79's adversary): a shortcut for dense views, numel elements one after another, that forgets the
    elements before the view (x[i:] of a dense x has an offset); the general formula for any other view."""
    if 0 in shape:
        return 0
    if _dense(shape, stride):
        return math.prod(shape) * dtype.itemsize
    return _right_bytes(shape, stride, offset, dtype)


def dense_shortcut(shape, stride, offset, dtype):
    """Right (round 79's adversary): a dense view reaches offset + numel elements; any other, the general formula."""
    if 0 in shape:
        return 0
    if _dense(shape, stride):
        return (offset + math.prod(shape)) * dtype.itemsize
    return _right_bytes(shape, stride, offset, dtype)


def permuted_dense_shortcut(shape, stride, offset, dtype):
    """Wrong (round 79's adversary; PASSed): a shortcut for permuted dense views too (x.T, x.permute(...): offset +
    numel elements), found by comparing the sorted strides with the dense strides of the view's own shape, the sizes
    not sorted with them.  A view whose strides are those in another order is taken as dense when it is not: x.T[:2]
    of a dense 3 x 3 x, shape (2, 3) and strides (1, 3), reaches its storage's element 7 (32 bytes of float32), and
    this says 6 (24 bytes)."""
    if 0 in shape:
        return 0
    if sorted(stride) == sorted(_dense_strides(shape)):
        return (offset + math.prod(shape)) * dtype.itemsize
    return _right_bytes(shape, stride, offset, dtype)


def tensors_without_an_int_dtype(shape, stride, offset, dtype):
    """Wrong (round 79's adversary): the sizes and strides in torch.tensor(...) without dtype=torch.int64: of a 0-d
    view, torch.tensor(()) is an empty float32 tensor, and the bytes a float tensor (an int64 one for rank 1 up)."""
    if 0 in shape:
        return 0
    sizes, strides = torch.tensor(shape), torch.tensor(stride)
    return ((sizes - 1) * strides).sum().add(offset + 1).mul(dtype.itemsize)


def element_size_of_an_empty_tensor(shape, stride, offset, dtype):
    """Right (round 79's adversary): the bytes per element from an empty CPU tensor of the dtype (nothing to fill, so
    every dtype of a view can be made so: float4_e2m1fn_x2 too), the count in Python ints."""
    if 0 in shape:
        return 0
    return _elements_to_the_last(shape, stride, offset) * torch.tensor([], dtype=dtype).element_size()


def the_checks_sum_of_steps(shape, stride, offset, dtype):
    """Wrong by the course's rule (round 79's adversary; PASSed): the sum of the steps, sum((n - 1) * s), and 0 for a
    view without elements, from the check's own helper nb00._last (the core of its reference, fewest_bytes, which
    alone was locked): the known "searches with the check's own nb00.layer_bytes" FAILs for the same reason."""
    from utils.exercises import nb00

    if 0 in shape:
        return 0
    return (offset + 1 + nb00._last(shape, stride)) * dtype.itemsize


def sizes_in_numpy_int32(shape, stride, offset, dtype):
    """Wrong (round 79's adversary): sizes and strides in NumPy int32 arrays ("sizes fit in 32 bits"): a product past
    2**31 wraps (the check FAILs it there), and NumPy refuses a size or stride of 2**31 or more (an OverflowError of
    the answer's own, which reaches the student where it comes first: it did for the adversary, before the check drew
    nearly dense views)."""
    if 0 in shape:
        return 0
    sizes, strides = np.array(shape, dtype=np.int32), np.array(stride, dtype=np.int32)
    return (offset + 1 + int(((sizes - 1) * strides).sum())) * dtype.itemsize


def exact_in_sympy(budget, d, dtype):
    """Right (round 79's adversary): exact rational arithmetic in SymPy, the floor of the rows, a sympy.Integer
    returned (it has __index__)."""
    import sympy  # type: ignore[import-untyped]

    rows = sympy.floor((sympy.Rational(budget, dtype.itemsize) - d * d) / (2 * d))
    return max(sympy.Integer(0), rows)


def in_numpy_uint64(budget, d, dtype):
    """Right (round 79's adversary): NumPy uint64 arithmetic, the weight compared first (a uint64 cannot go below 0),
    an np.uint64 returned."""
    elements, weight = np.uint64(budget // dtype.itemsize), np.uint64(d) * np.uint64(d)
    if weight > elements:
        return np.uint64(0)
    return (elements - weight) // np.uint64(2 * d)


WRONG_VIEWS.update({
    "round 79's adversary: a dense shortcut that forgets the offset": dense_shortcut_without_the_offset,
    "round 79's adversary: a dense shortcut for permuted views, the strides sorted apart from their sizes":
        permuted_dense_shortcut,
    "round 79's adversary: torch.tensor(shape) without an int dtype (a float for a 0-d view)":
        tensors_without_an_int_dtype,
    "round 79's adversary: the sum of steps from the check's own nb00._last": the_checks_sum_of_steps,
    "round 79's adversary: sizes and strides in NumPy int32": sizes_in_numpy_int32,
})
ALSO_RIGHT_VIEWS.update({
    "round 79's adversary: a dense shortcut, offset + numel": dense_shortcut,
    "round 79's adversary: bytes per element from torch.tensor([], dtype=dtype).element_size()":
        element_size_of_an_empty_tensor,
})
def _rows(budget, d, dtype):
    return max(0, (budget // dtype.itemsize - d * d) // (2 * d))


def weight_bytes_from_elements(budget, d, dtype):
    """Wrong (round 79's adversary): the budget turned into elements, then the weight's bytes (not its elements) taken
    from them: right for 1-byte dtypes only."""
    return max(0, (budget // dtype.itemsize - d * d * dtype.itemsize) // (2 * d))


def rows_in_pairs(budget, d, dtype):
    """Wrong (round 79's adversary): the rows rounded down to an even number ("x and y come in pairs of rows"): an odd
    largest batch loses a row."""
    return _rows(budget, d, dtype) // 2 * 2


def rows_capped_for_int32_indexing(budget, d, dtype):
    """Wrong (round 79's adversary): the rows capped so that x has fewer than 2**31 elements ("a kernel indexes in
    int32"): the task asks for the largest batch that fits, and a budget of petabytes holds far more rows of a narrow
    layer."""
    return min(_rows(budget, d, dtype), (2**31 - 1) // d)


WRONG_BATCHES.update({
    "round 79's adversary: the weight's bytes taken from the budget's elements": weight_bytes_from_elements,
    "round 79's adversary: rows rounded down to an even number": rows_in_pairs,
    "round 79's adversary: rows capped so that x stays under 2**31 elements": rows_capped_for_int32_indexing,
})
ALSO_RIGHT_BATCHES.update({
    "round 79's adversary: SymPy's exact rationals, a sympy.Integer returned": exact_in_sympy,
    "round 79's adversary: NumPy uint64, an np.uint64 returned": in_numpy_uint64,
})
