"""Wrong answers, and other right ones, to the exercises of notebook 09 (your own kernels), for the tests:
SPOILERS.

Exercises 1 and 3 are CuPy kernels: their checks need a GPU, and without one they check nothing (WRONG_ON_CPU is
empty for them).  Exercise 2's kernels are Triton's: on a GPU they compile for it; on a CPU with Triton installed,
they run through Triton's interpreter, which this module turns on (before it defines them) where there is no GPU,
as the solutions notebook does.  Without Triton the kernels below are stand-ins (`nb09.without_triton`), and the
tests of exercise 2 are skipped (`requires=("triton",)`).
"""

from __future__ import annotations

import copy
import ctypes
import io
import logging
import math
import os
import pickle
import random
import threading
import warnings

import numpy as np
import torch

from utils import has_cuda
from utils.exercises import nb09

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # read when @triton.jit decorates, below
try:
    import triton
    import triton.language as tl
except ImportError:
    triton, tl = nb09.without_triton()


def _cp():
    import cupy

    return cupy


# ---------------------------------------------------------------- exercise 1: bias_gelu (CuPy, GPU)
_GELU = """
T v = x + b;
y = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));
"""
_kernels: dict[str, object] = {}


def _elementwise(name: str, params: str, out: str, body: str):
    key = f"ew:{name}:{params}:{out}:{body}"
    if key not in _kernels:
        _kernels[key] = _cp().ElementwiseKernel(params, out, body, f"course09_{name}")
    return _kernels[key]


def _raw(name: str, source: str):
    key = f"raw:{name}:{source}"
    if key not in _kernels:
        _kernels[key] = _cp().RawKernel(source, name)
    return _kernels[key]


def _gelu_with(body: str, name: str):
    def bias_gelu(x, bias):
        return _elementwise(name, "T x, T b", "T y", body)(x, bias)

    return bias_gelu


def gelu_cupy_expressions(x, bias):
    """Right values, but no kernel of its own (the task asks for one): CuPy's operators, one kernel each, each
    writing a whole array."""
    cp = _cp()
    v = x + bias
    return (0.5 * v * (1 + cp.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))).astype(x.dtype, copy=False)


def gelu_computed_in_double(x, bias):
    """Right: computes in double whatever the inputs, and rounds the result to their dtype."""
    return _elementwise("gelu_d", "T x, T b", "T y", """
        double v = (double)x + (double)b;
        y = (T)(0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
    """)(x, bias)


def gelu_sigmoid_form(x, bias):
    """Right: 0.5 (1 + tanh(z)) = sigmoid(2z), the same function written another way."""
    return _elementwise("gelu_sig", "T x, T b", "T y", """
        T v = x + b;
        T z = (T)0.7978845608028654 * (v + (T)0.044715 * v * v * v);
        y = v / ((T)1 + exp((T)-2 * z));
    """)(x, bias)


def gelu_on_a_contiguous_copy(x, bias):
    """Right: copies x and bias to contiguous arrays first (on the current stream), then runs the kernel."""
    cp = _cp()
    return _gelu_with(_GELU, "gelu_c")(cp.ascontiguousarray(x), cp.ascontiguousarray(bias))


def gelu_then_synchronize(x, bias):
    y = _gelu_with(_GELU, "gelu")(x, bias)
    _cp().cuda.get_current_stream().synchronize()
    return y


def gelu_on_the_null_stream(x, bias):
    with _cp().cuda.Stream.null:
        return _gelu_with(_GELU, "gelu")(x, bias)


def gelu_on_a_stream_of_its_own(x, bias):
    """Runs on another stream, with both waits: right values, but the caller's next work waits for that stream."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    side = cp.cuda.Stream(non_blocking=True)
    side.wait_event(caller.record())
    with side:
        y = _gelu_with(_GELU, "gelu")(x, bias)
    caller.wait_event(side.record())
    return y


def gelu_on_a_side_stream_no_wait(x, bias):
    cp = _cp()
    with cp.cuda.Stream(non_blocking=True):
        return _gelu_with(_GELU, "gelu")(x, bias)


def gelu_leaves_its_stream_current(x, bias):
    """Right values on the caller's stream, but leaves the null stream current."""
    y = _gelu_with(_GELU, "gelu")(x, bias)
    _cp().cuda.Stream.null.use()
    return y


def gelu_in_place(x, bias):
    """Writes the result over x."""
    return _elementwise("gelu_ip", "T b", "T x", """
        T v = x + b;
        x = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));
    """)(bias, x)


def gelu_returns_float32(x, bias):
    return _elementwise("gelu_r32", "T x, T b", "float32 y", _GELU.replace("T v", "float v"))(x, bias)


_FLAT = r"""
template<typename T> __device__ void body(T* y, const T* x, const T* b, long long n, long long cols) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = x[i] + b[i % cols];
        y[i] = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));
    }
}
extern "C" __global__ void gelu_flat_f(float* y, const float* x, const float* b, long long n, long long c) {
    body(y, x, b, n, c);
}
extern "C" __global__ void gelu_flat_d(double* y, const double* x, const double* b, long long n, long long c) {
    body(y, x, b, n, c);
}
"""


def gelu_on_raw_flat_index(x, bias):
    """A RawKernel over the flat index, as if x were contiguous: wrong for transposed and strided views, and
    takes bias[i % n] as if bias were contiguous too."""
    cp = _cp()
    if "gelu_flat_module" not in _kernels:
        _kernels["gelu_flat_module"] = cp.RawModule(code=_FLAT, options=("-std=c++17",))
    module = _kernels["gelu_flat_module"]
    y = cp.empty(x.shape, x.dtype)
    n = x.size
    if n:
        f = module.get_function("gelu_flat_f" if x.dtype == cp.float32 else "gelu_flat_d")
        f(((n + 255) // 256,), (256,), (y, x, bias, cp.int64(n), cp.int64(x.shape[-1])))
    return y


_RAW_GELU = r"""
extern "C" __global__ void course09_gelu_{t}(const {t}* x, const {t}* b, {t}* y, long long n, long long cols) {{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i {cmp} n) {{
        {t} v = x[i] + b[i % cols];
        y[i] = ({t})0.5 * v * (({t})1 + tanh(({t})0.7978845608028654 * (v + ({t})0.044715 * v * v * v)));
    }}
}}
"""


_RAW_GELU_LOOP = r"""
extern "C" __global__ void course09_gelu_loop_{t}(const {t}* x, const {t}* b, {t}* y, long long n, long long cols) {{
    long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {{
        {t} v = x[i] + b[i % cols];
        y[i] = ({t})0.5 * v * (({t})1 + tanh(({t})0.7978845608028654 * (v + ({t})0.044715 * v * v * v)));
    }}
}}
"""


def gelu_int_index(x, bias):
    """Wrong past 2**31 elements: the index, n and cols declared `int` (Python ints passed as int32), so i wraps
    negative there (round 44's adversary; the check never draws a tensor that large: MISJUDGED_ON_A_GPU)."""
    cp = _cp()
    t = "float" if x.dtype == cp.float32 else "double"
    kernel = _raw(f"course09_gelu_int_{t}", _RAW_GELU.format(t=t, cmp="<").replace("long long", "int")
                  .replace("(int)blockIdx", "blockIdx").replace(f"course09_gelu_{t}", f"course09_gelu_int_{t}"))
    x, bias = cp.ascontiguousarray(x), cp.ascontiguousarray(bias)
    y = cp.empty(x.shape, dtype=x.dtype)
    if x.size:
        kernel(((x.size + 255) // 256,), (256,), (x, bias, y, cp.int32(x.size), cp.int32(max(1, bias.size))))
    return y


def _raw_gelu(x, bias, *, cmp="<", threads=256, blocks=None, loop=False, empty_too=False):
    """A RawKernel over contiguous copies of x and bias: one thread an element, `if (i {cmp} n)`; or (`loop`) a
    grid-stride loop.  `empty_too`: launched for an empty x as well (no `n == 0` guard)."""
    cp = _cp()
    t = "float" if x.dtype == cp.float32 else "double"
    kernel = (_raw(f"course09_gelu_loop_{t}", _RAW_GELU_LOOP.format(t=t)) if loop else
              _raw(f"course09_gelu_{t}", _RAW_GELU.format(t=t, cmp=cmp)))
    x, bias = cp.ascontiguousarray(x), cp.ascontiguousarray(bias)
    y = cp.empty(x.shape, dtype=x.dtype)
    n = x.size
    grid = (n + threads - 1) // threads if blocks is None else blocks(n, threads)
    if (n or empty_too) and grid:
        kernel((grid,), (threads,), (x, bias, y, cp.int64(n), cp.int64(max(1, bias.size))))
    return y


def gelu_cupy_operators_in_place(x, bias):
    """Right values from CuPy's operators one at a time, mostly in place: as few arrays as one kernel needs, but
    about ten kernels (the 09 adversary of 2026-11-28; the EAGER rule passed it on the H200)."""
    cp = _cp()
    v = x + bias
    t = v * v
    t *= v
    t *= 0.044715
    t += v
    t *= math.sqrt(2 / math.pi)
    cp.tanh(t, out=t)
    t += 1
    t *= v
    t *= 0.5
    return t


def gelu_bias_added_first(x, bias):
    """x + bias by CuPy's operator, then a GELU kernel of one's own on the sum: two kernels, the sum written out
    and read back (the EAGER rule passed it on the H200)."""
    return _elementwise("gelu_of_v", "T v", "T y", """
        y = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));""")(x + bias)


def gelu_raw_one_past_the_end(x, bias):
    """Exercise 3's bug in exercise 1: `if (i <= n)`, so the thread with i == n writes y[n], one past the end."""
    return _raw_gelu(x, bias, cmp="<=")


def gelu_raw_grid_capped(x, bias):
    """At most 2048 blocks of 1024 threads and no loop: elements past 2^21 are never written."""
    return _raw_gelu(x, bias, threads=1024, blocks=lambda n, t: min((n + t - 1) // t, 2048))


def gelu_raw_on_contiguous_copies(x, bias):
    """Right: a RawKernel over contiguous copies, enough blocks, n == 0 guarded."""
    return _raw_gelu(x, bias)


def gelu_raw_grid_stride(x, bias):
    """Right: a RawKernel over contiguous copies, a grid-stride loop over at most 65535 blocks of 256 threads."""
    return _raw_gelu(x, bias, loop=True, blocks=lambda n, t: min((n + t - 1) // t, 65535))


def gelu_fused_by_cupy(x, bias):
    """Right: the formula written with CuPy's operators, which cp.fuse compiles into one kernel."""
    cp = _cp()
    if "gelu_fuse" not in _kernels:
        def gelu(x, b):
            v = x + b
            return 0.5 * v * (1 + cp.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))

        _kernels["gelu_fuse"] = cp.fuse(kernel_name="course09_gelu_fuse")(gelu)
    return _kernels["gelu_fuse"](x, bias)


_GELU_OUT: dict[tuple, object] = {}


def gelu_into_one_array_per_shape(x, bias):
    """One output array per (shape, dtype), kept from call to call: each call overwrites the one before's result."""
    cp = _cp()
    key = (x.shape, x.dtype.str)
    if key not in _GELU_OUT:
        _GELU_OUT[key] = cp.empty(x.shape, dtype=x.dtype)
    return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, _GELU_OUT[key])


def gelu_stream_argument_waits_for_the_caller(x, bias):
    """A stream of its own that waits for the caller, given to the kernel as `stream=` (never entered); the
    caller's stream never waits for it."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    side = cp.cuda.Stream(non_blocking=True)
    side.wait_event(caller.record())
    return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, stream=side)


def gelu_stream_argument_no_waits(x, bias):
    """A new stream given to the kernel as `stream=`, no waits at all."""
    cp = _cp()
    return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, stream=cp.cuda.Stream(non_blocking=True))


def gelu_enters_the_current_stream(x, bias):
    """Wrong for a caller that made its stream current with `use()`: `with cp.cuda.get_current_stream():` runs on
    the right stream, but its exit makes current the stream below it on CuPy's stack (cupy/cuda/stream.pyx,
    `_ThreadLocal.pop_stream`), which `use()` never pushed: the caller comes back on the null stream.  Measured on
    the H200 (CuPy 14.2): the check's `use()` caller finds its current stream changed."""
    cp = _cp()
    with cp.cuda.get_current_stream():
        return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias)


def gelu_on_an_external_stream_of_the_callers_pointer(x, bias):
    """Wrong for a `use()` caller, as above: the caller's stream under another object, entered with `with`, whose
    exit restores CuPy's stack, not the stream current at entry."""
    cp = _cp()
    with cp.cuda.ExternalStream(cp.cuda.get_current_stream().ptr):
        return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias)


def gelu_stream_argument_the_null_stream(x, bias):
    """`stream=cp.cuda.Stream.null` given to the kernel (its output allocated first), whatever the caller's stream."""
    cp = _cp()
    y = cp.empty(x.shape, dtype=x.dtype)
    _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, y, stream=cp.cuda.Stream.null)
    return y


def gelu_stream_argument_the_current_one(x, bias):
    """Right: the current stream passed explicitly, `stream=cp.cuda.get_current_stream()`."""
    cp = _cp()
    return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, stream=cp.cuda.get_current_stream())


WRONG_GELUS = {
    "enters the current stream again (its exit undoes a caller's `use()`)": gelu_enters_the_current_stream,
    "an ExternalStream of the current stream's pointer, entered (its exit undoes a caller's `use()`)":
        gelu_on_an_external_stream_of_the_callers_pointer,
    "the erf form of GELU, not the tanh form": _gelu_with(
        "T v = x + b; y = (T)0.5 * v * ((T)1 + erf(v * (T)0.7071067811865476));", "gelu_erf"),
    "forgets the bias": _gelu_with(
        "T v = x; y = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));",
        "gelu_nob"),
    "the cube's coefficient on v, not on v cubed": _gelu_with(
        "T v = x + b; y = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * ((T)1.044715 * v)));", "gelu_lin"),
    "sqrt(2/pi) written as sqrt(2)/pi": _gelu_with(
        "T v = x + b; y = (T)0.5 * v * ((T)1 + tanh((T)0.45015815807855303 * (v + (T)0.044715 * v * v * v)));",
        "gelu_c2"),
    "SiLU instead of GELU": _gelu_with("T v = x + b; y = v / ((T)1 + exp(-v));", "silu"),
    "bias added after the activation": _gelu_with(
        "T v = x; y = b + (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));",
        "gelu_after"),
    "synchronizes before it returns": gelu_then_synchronize,
    "runs on the null stream": gelu_on_the_null_stream,
    "runs on a side stream of its own, without waits": gelu_on_a_side_stream_no_wait,
    "runs on a stream of its own, with waits (the caller's next work waits for that stream)":
        gelu_on_a_stream_of_its_own,
    "leaves the null stream current": gelu_leaves_its_stream_current,
    "writes the result over x": gelu_in_place,
    "returns float32 for float64 inputs": gelu_returns_float32,
    "a RawKernel over the flat index, as if x and bias were contiguous": gelu_on_raw_flat_index,
    "CuPy's operators, no kernel of its own": gelu_cupy_expressions,
    "a RawKernel with `if (i <= n)`: one write past the end": gelu_raw_one_past_the_end,
    "`if (i <= n)` and n // 256 + 1 blocks, launched for an empty x too (a read and a write past its end)":
        lambda x, bias: _raw_gelu(x, bias, cmp="<=", blocks=lambda n, t: n // t + 1, empty_too=True),
    "CuPy's operators in place: ten kernels": gelu_cupy_operators_in_place,
    "x + bias by CuPy's operator, then a kernel on the sum": gelu_bias_added_first,
    "a RawKernel's grid capped at 2048 blocks of 1024 threads, no loop": gelu_raw_grid_capped,
    "one output array per shape, overwritten by the next call": gelu_into_one_array_per_shape,
    "a stream of its own as `stream=`, waiting for the caller, not waited for":
        gelu_stream_argument_waits_for_the_caller,
    "a new stream as `stream=`, no waits": gelu_stream_argument_no_waits,
    "`stream=` the null stream": gelu_stream_argument_the_null_stream,
    "computes in float whatever the dtype: float64 inputs lose precision": _gelu_with("""
        float v = (float)x + (float)b;
        y = (T)(0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))));""", "gelu_f"),
    "a RawKernel's grid capped at 65535 blocks of 256 threads, no loop": lambda x, bias: _raw_gelu(
        x, bias, blocks=lambda n, t: min((n + t - 1) // t, 65535)),
}
ALSO_RIGHT_GELUS = {
    "computes in double, rounds to the inputs' dtype": gelu_computed_in_double,
    "the sigmoid form, v * sigmoid(2z)": gelu_sigmoid_form,
    "contiguous copies first": gelu_on_a_contiguous_copy,
    "a RawKernel over contiguous copies": gelu_raw_on_contiguous_copies,
    "`stream=` the current stream": gelu_stream_argument_the_current_one,
    "a RawKernel with a grid-stride loop over at most 65535 blocks": gelu_raw_grid_stride,
    "cp.fuse of the formula": gelu_fused_by_cupy,
}


# ---------------------------------------------------------------- exercise 2: softmax_rows (Triton)
@triton.jit
def _softmax_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr, SUBTRACT: tl.constexpr,
                    OTHER: tl.constexpr, DIVIDE_BY_MAX: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=OTHER)
    if SUBTRACT:
        x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    if DIVIDE_BY_MAX:
        y = e / tl.max(e, axis=0)
    else:
        y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_stride + offsets, y, mask=mask)


def softmax_grid_of_columns(x):
    """Wrong: one program per column, not per row (right for square x only)."""
    return _softmax(x, grid=lambda rows: x.shape[1])


@triton.jit
def _softmax_atomic_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.atomic_add(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)  # into zeros: a store


@triton.jit
def _cas_at_kernel(flags_ptr, at, far):
    """tests/test_exercises_09.py: a compare-and-swap on flags[at] and on one element `far` past it."""
    lanes = tl.arange(0, 2)
    tl.atomic_cas(flags_ptr + at + lanes * far, tl.zeros((2,), tl.int32), tl.full((2,), 7, tl.int32))


@triton.jit
def _add_at_kernel(y_ptr, at, far):
    """tests/test_exercises_09.py: an atomic add of 1.5 into y[at] and into one element `far` past it."""
    lanes = tl.arange(0, 2)
    tl.atomic_add(y_ptr + at + lanes * far, tl.full((2,), 1.5, tl.float32))


def softmax_grid_of_columns_atomic_add(x):
    """Wrong: one program per column, not per row, each adding its row into a zeroed y (right for square x only)."""
    rows, cols = x.shape
    y = torch.zeros((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_atomic_kernel[(cols,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _softmax(x, *, block=None, subtract=True, other=-math.inf, divide_by_max=False, x_stride=None, grid=None,
             out=None, dtype=torch.float32):
    rows, cols = x.shape
    y = torch.zeros((rows, cols), dtype=dtype, device=x.device) if out is None else out
    if rows:
        _softmax_kernel[(rows if grid is None else grid(rows),)](
            y, x, x.stride(0) if x_stride is None else x_stride(x), y.stride(0), cols,
            BLOCK=block or triton.next_power_of_2(cols), SUBTRACT=subtract, OTHER=other, DIVIDE_BY_MAX=divide_by_max)
    return y


@triton.jit
def _softmax_exp2_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_exp2(x):
    """Right: exp(t) as exp2(t log2 e), as fast kernels do."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _softmax_exp2_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _softmax_rows_kernel(y_ptr, x_ptr, rows, x_stride, y_stride, cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.program_id(0) * ROWS
    r = first + tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < rows) & (c < cols)
    x = tl.load(x_ptr + r * x_stride + c, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    e = tl.where(mask, e, 0.0)
    tl.store(y_ptr + r * y_stride + c, e / tl.sum(e, axis=1)[:, None], mask=mask)


def softmax_four_rows_a_program(x, programs=lambda rows: triton.cdiv(rows, 4)):
    """Right: four rows per program, a 2-D block (the masked rows past the end give NaN, and are never stored);
    `programs(rows)` the grid (rounded down, `rows // 4`, the last rows are never computed)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if programs(rows):
        _softmax_rows_kernel[(programs(rows),)](y, x, rows, x.stride(0), y.stride(0), cols, ROWS=4,
                                               BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _softmax_online_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr, RESCALE: tl.constexpr):
    row = tl.program_id(0)
    start_x, start_y = x_ptr + row * x_stride, y_ptr + row * y_stride
    m = -float("inf")
    total = 0.0
    for k in range(0, cols, BLOCK):  # one pass: the running max, and the sum rescaled when the max grows
        offsets = k + tl.arange(0, BLOCK)
        x = tl.load(start_x + offsets, mask=offsets < cols, other=-float("inf"))
        new = tl.maximum(m, tl.max(x, axis=0))
        if RESCALE:
            total = total * tl.exp(m - new) + tl.sum(tl.exp(x - new), axis=0)
        else:  # the terms summed so far keep the old max
            total = total + tl.sum(tl.exp(x - new), axis=0)
        m = new
    for k in range(0, cols, BLOCK):
        offsets = k + tl.arange(0, BLOCK)
        x = tl.load(start_x + offsets, mask=offsets < cols, other=-float("inf"))
        tl.store(start_y + offsets, tl.exp(x - m) / total, mask=offsets < cols)


def _softmax_online(x, chunk, rescale=True):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _softmax_online_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=chunk, RESCALE=rescale)
    return y


def softmax_online_in_chunks(x):
    """Right: chunks of at most 1024 columns, an online max and sum, then a second pass that writes."""
    return _softmax_online(x, min(1024, triton.next_power_of_2(x.shape[1])))


def softmax_online_in_chunks_of_64(x):
    """Wrong on a GPU only: right values, but chunks of 64 columns read each row twice in small pieces.  The
    adversary's kernel of the same algorithm and chunk (its `right_online`, with 64-bit row offsets) reached 0.23
    of the H200's copy bandwidth on BIG, below SHARE_BAR, the bar the task states."""
    return _softmax_online(x, 64)


def softmax_online_sum_not_rescaled(x):
    """Wrong on a GPU only: an online softmax over chunks of 256 columns whose running sum keeps the old max's
    terms when the max grows: right while a row fits in one chunk (every row on a CPU has at most CPU_MAX[1])."""
    return _softmax_online(x, 256, rescale=False)


@triton.jit
def _softmax_variant_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr, MODE: tl.constexpr):
    """The softmax of a row, written as students write it: MODE picks what it subtracts and how it masks."""
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    if MODE == "one lane past":  # `offsets <= cols`: the lane just past the row loads, and stores, too
        mask = offsets <= cols
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
    elif MODE == "float16 exp":  # each exponential rounded to float16
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0)).to(tl.float16).to(tl.float32)
    elif MODE == "zero, then masked":  # masked lanes read as 0, then left out of the sum
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=0.0)
        e = tl.where(mask, tl.exp(x - tl.max(x, axis=0)), 0.0)
    elif MODE == "first":  # the row's first element subtracted
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.load(x_ptr + row * x_stride))
    elif MODE == "mean":  # the row's mean subtracted
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=0.0)
        e = tl.where(mask, tl.exp(x - tl.sum(x, axis=0) / cols), 0.0)
    elif MODE == "-inf as -1e4":  # round 133's adversary: -inf replaced by -1e4 "to avoid NaN" (wrong for a row whose
        # finite values lie below about -1e4: the filled lanes then dominate)
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
        x = tl.where(mask & (x == -float("inf")), -10000.0, x)
        e = tl.exp(x - tl.max(x, axis=0))
    elif MODE == "float64":  # computed in float64
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf")).to(tl.float64)
        e = tl.exp(x - tl.max(x, axis=0))
    else:  # -inf for the masked lanes, and a multiplication by 1 / sum (round 27: a finite fill, -1e30 here once,
        # is wrong for a row whose values lie below it; the check draws values around -1e37)
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        e = e * (1.0 / tl.sum(e, axis=0))
    if MODE != "times the inverse":
        e = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_stride + offsets, e.to(tl.float32), mask=mask)


def _variant(mode, *, x_stride=None, like=False):
    def softmax_rows(x):
        rows, cols = x.shape
        y = torch.empty_like(x) if like else torch.empty((rows, cols), dtype=x.dtype, device=x.device)
        if rows:
            _softmax_variant_kernel[(rows,)](y, x, x.stride(0) if x_stride is None else x_stride(x), y.stride(0), cols,
                                             BLOCK=triton.next_power_of_2(cols), MODE=mode)
        return y

    return softmax_rows


_STRIDE_BY_SHAPE: dict = {}


def softmax_stride_kept_per_shape(x):
    """Wrong (round 133's adversary): x's row stride read at the first call on each shape and kept: a later x of that
    shape whose rows lie farther apart is read at the old stride."""
    stride = _STRIDE_BY_SHAPE.setdefault(tuple(x.shape), x.stride(0))
    return _variant("plain", x_stride=lambda _: stride)(x)


def softmax_in_place(x):
    """Writes the result over x."""
    return _softmax(x, out=x)


def softmax_float64(x):
    return _softmax(x, dtype=torch.float64)


def softmax_by_pytorch(x):
    """Right values, but PyTorch's kernel, not one of the student's."""
    return torch.softmax(x, dim=-1)


def softmax_launched_then_pytorchs(x):
    """Launches its kernel, then returns PyTorch's softmax ("to be safe"): the kernel's result thrown away."""
    _softmax(x)
    return torch.softmax(x, dim=-1)


_REUSED: dict[tuple, torch.Tensor] = {}


def softmax_into_one_tensor_per_shape(x):
    """One output tensor per shape, kept from call to call: each call overwrites the result of the one before."""
    key = (tuple(x.shape), x.device)
    if key not in _REUSED:
        _REUSED[key] = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return _softmax(x, out=_REUSED[key])


def softmax_y_stride_taken_from_x(x):
    """y = torch.empty_like(x) is contiguous, but the launch passes x's row stride for y: for a slice of a wider
    tensor, the rows of y are written too far apart, the last ones past y's end."""
    y = torch.empty_like(x)
    rows, cols = x.shape
    if rows:
        _softmax_kernel[(rows,)](y, x, x.stride(0), x.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                 SUBTRACT=True, OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


def softmax_one_launch_per_row(x):
    """Right values, but one launch per row from Python: thousands of launches for a large tensor (the GPU's speed
    bar fails it; on a CPU it passes)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    for r in range(rows):
        _softmax_kernel[(1,)](y[r:], x[r:], x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                              SUBTRACT=True, OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


_softmax_autotuned_kernel = triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (2, 4)],
                                            key=["cols"])(_softmax_kernel)


def softmax_autotuned(x):
    """Right: the kernel under @triton.autotune over num_warps (on a CPU the check lets it take its first config:
    Triton's interpreter cannot time one)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _softmax_autotuned_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                           SUBTRACT=True, OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


@triton.jit
def _softmax_persistent_kernel(y_ptr, x_ptr, x_stride, y_stride, rows, cols, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):  # each program strides over the rows
        x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def _softmax_persistent(x, programs):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _softmax_persistent_kernel[(min(rows, programs),)](y, x, x.stride(0), y.stride(0), rows, cols,
                                                           BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_persistent_grid(x):
    """Right: a persistent grid, 4 programs per SM of the GPU (2 on the interpreter), each striding over the rows."""
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 0
    return _softmax_persistent(x, 4 * sms if sms else 2)


def softmax_persistent_grid_of_2(x):
    """Wrong on a GPU only: right values, but 2 programs keep 2 SMs busy.  Measured on the H200: 0.01 of the copy
    bandwidth on BIG (the bar is SHARE_BAR)."""
    return _softmax_persistent(x, 2)


def softmax_grid_as_a_lambda_no_rows_guard(x):
    """Right: the grid as a function of the meta-parameters, num_warps=8, and no `if rows:` (a grid of 0 programs
    launches nothing)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    _softmax_kernel[lambda meta: (rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                          SUBTRACT=True, OTHER=-math.inf, DIVIDE_BY_MAX=False, num_warps=8)
    return y


@triton.jit
def _copy_rows_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    tl.store(y_ptr + row * y_stride + offsets, tl.load(x_ptr + row * x_stride + offsets, mask=mask), mask=mask)


def softmax_by_pytorch_copied_by_a_kernel(x):
    """PyTorch computes the softmax; the Triton kernel only copies it into y (its launch writes every value of the
    result, so the poisoned call alone cannot tell: the check sees PyTorch compute from x)."""
    z = torch.softmax(x, dim=-1)
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _copy_rows_kernel[(rows,)](y, z, z.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _row_stats_kernel(stats_ptr, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    tl.store(stats_ptr + 2 * row, m)
    tl.store(stats_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))


def softmax_row_stats_by_a_kernel_the_rest_by_pytorch(x):
    """The kernel computes each row's max and sum of exponentials only; PyTorch computes every value of the result
    from them (so the result depends on what the launch wrote)."""
    rows, cols = x.shape
    if not rows:
        return torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    stats = torch.empty((rows, 2), dtype=x.dtype, device=x.device)
    _row_stats_kernel[(rows,)](stats, x, x.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return torch.exp(x - stats[:, :1]) / stats[:, 1:]


def softmax_on_a_side_stream_no_wait(x):
    """Wrong on a GPU only: launches on a new stream that waits for the caller's stream, and returns without the
    caller's stream waiting for it (on a CPU there are no streams: the plain launch)."""
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if not x.is_cuda:
        return _softmax(x, out=y)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        return _softmax(x, out=y)


def softmax_returns_a_list_of_rows(x):
    return list(_softmax(x))


@triton.jit
def _softmax_on_axis_1_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(1)  # the rows on the grid's second axis
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_rows_on_the_grids_second_axis(x):
    """Wrong on a GPU only: the grid (1, rows), each program's row its tl.program_id(1).  CUDA caps a grid's second
    axis at 65535 blocks, so a tensor of more rows fails to launch (65536 x 1 floats are 256 KiB); the interpreter
    has no such cap."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _softmax_on_axis_1_kernel[(1, rows)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_on_a_contiguous_copy(x):
    """Right: x.contiguous() first (a copy, for a slice of a wider tensor), so that both row strides are cols."""
    x = x.contiguous()
    rows, cols = x.shape
    y = torch.empty_like(x)
    if rows:
        _softmax_kernel[(rows,)](y, x, cols, cols, cols, BLOCK=triton.next_power_of_2(cols), SUBTRACT=True,
                                 OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


def softmax_into_a_padded_buffer(x):
    """Right: the kernel writes a new buffer of rows x BLOCK columns; the result is the view of its first cols
    columns (a new tensor whose rows lie BLOCK apart)."""
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    return _softmax(x, out=torch.empty((rows, block), dtype=x.dtype, device=x.device))[:, :cols]


_BY_ADDRESS: dict[tuple, torch.Tensor] = {}  # softmax_kept_by_address's results


def softmax_kept_by_address(x):
    """A result kept by the input's address, shape and strides, and a copy of it returned when they come again:
    stale once new values are written into the same tensor (the 09 adversary of 2026-11-29)."""
    key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()), x.device)
    if key not in _BY_ADDRESS:
        _BY_ADDRESS[key] = _softmax(x)
    return _BY_ADDRESS[key].clone()


def softmax_by_pytorch_on_a_kernels_copy(x):
    """A Triton kernel copies x into a new tensor; PyTorch's softmax of that copy is returned (the 09 adversary of
    round 17: what a launch writes from x is made from x, so PyTorch computing from it is seen)."""
    rows, cols = x.shape
    copy = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _copy_rows_kernel[(rows,)](copy, x, x.stride(0), copy.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return torch.softmax(copy, dim=-1)


def softmax_kernels_exponentials_divided_by_pytorch(x):
    """The kernel writes exp(x - max) (its largest exponential is 1: divide_by_max divides by 1); PyTorch divides by
    the row sums (the 09 adversary of round 17)."""
    e = _softmax(x, divide_by_max=True)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_checks_the_input_first(x):
    """Right values, but x checked for NaN and infinity in PyTorch first: it reads x once more outside the kernel,
    and bool() makes the host wait for the GPU (the task text allows PyTorch to allocate, view, copy, convert)."""
    if not bool(torch.isfinite(x).all()):
        raise ValueError("softmax_rows: x holds NaN or infinity")
    return _softmax(x)


def softmax_on_the_host_copied_by_a_kernel(x):
    """NumPy computes the softmax on the host; a Triton kernel copies it into the result (x's values leave through
    .numpy(), which no dispatch mode sees; the result is written by a launch given nothing made from x)."""
    import numpy as np

    a = x.detach().cpu().numpy().astype(np.float64)
    if a.size:
        a = np.exp(a - a.max(axis=-1, keepdims=True))
        a = a / a.sum(axis=-1, keepdims=True)
    source = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(x.device)
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _copy_rows_kernel[(rows,)](y, source, source.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


_OPERATORS: dict[str, object] = {}


def _operator(name, body):
    """`body` registered once as the operator course09_answers::<name> with torch.library.triton_op (the lecture's
    section 6), its Triton launches through wrap_triton."""
    if name not in _OPERATORS:
        from torch.library import triton_op

        _OPERATORS[name] = triton_op(f"course09_answers::{name}", mutates_args=())(body)
    return _OPERATORS[name]


def _softmax_op_body(t: torch.Tensor) -> torch.Tensor:
    from torch.library import wrap_triton

    rows, cols = t.shape
    y = torch.empty_like(t)
    if rows:
        wrap_triton(_softmax_kernel)[(rows,)](y, t, t.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                              SUBTRACT=True, OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


def _pytorch_softmax_op_body(t: torch.Tensor) -> torch.Tensor:
    from torch.library import wrap_triton

    z = torch.softmax(t, dim=-1)
    rows, cols = t.shape
    y = torch.empty_like(t)
    if rows:
        wrap_triton(_copy_rows_kernel)[(rows,)](y, z, z.stride(0), y.stride(0), cols,
                                                BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_through_wrap_triton(x):
    """Right: the launch through torch.library.wrap_triton, outside torch.compile (on a GPU a higher-order operator,
    triton_kernel_wrapper_mutation, which refused the check's dispatch mode until it said it takes them; the
    interpreter's kernels are returned as they are)."""
    from torch.library import wrap_triton

    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        wrap_triton(_softmax_kernel)[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                              SUBTRACT=True, OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


def softmax_as_a_triton_op(x):
    """Right: the kernel inside an operator registered with torch.library.triton_op, launched through wrap_triton
    (the lecture's section 6; the 09 adversary of round 17: the check took the operator for PyTorch's work)."""
    return _operator("softmax_rows", _softmax_op_body)(x)


def softmax_by_pytorch_inside_a_triton_op(x):
    """A triton_op whose body computes PyTorch's softmax and has a kernel copy it into the result: the operator's
    body is watched as the answer's own code."""
    return _operator("softmax_by_pytorch", _pytorch_softmax_op_body)(x)


# ---- round 19's adversary (/work/adv19/09): what the check did not generate or watch
@triton.jit
def _softmax_given_max_kernel(y_ptr, x_ptr, m_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.load(m_ptr + row))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_row_max_by_numpy(x):
    """Each row's max computed on the host by NumPy (x.cpu().numpy().max(axis=1)), the rest by the kernel, which is
    given x too: NumPy's reads of x are outside PyTorch's dispatch (round 19's adversary)."""
    import numpy as np

    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = torch.from_numpy(x.cpu().numpy().max(axis=1).astype(np.float32)).to(x.device)
        _softmax_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_row_max_by_pytorch_in_a_worker_thread(x):
    """Each row's max by PyTorch (x.amax(dim=1)) in a worker thread, the rest by the kernel: a dispatch mode is the
    calling thread's only (round 19's adversary)."""
    import threading

    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        box = []
        worker = threading.Thread(target=lambda: box.append(x.amax(dim=1).contiguous()))
        worker.start()
        worker.join()
        _softmax_given_max_kernel[(rows,)](y, x, box[0], x.stride(0), y.stride(0), cols,
                                           BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _where_x_kernel(y_ptr, s_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=0.0)
    s = tl.load(s_ptr + row * cols + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + row * y_stride + offsets, tl.where(x == x, s, x), mask=mask)  # noqa: PLR0124 -- NaN passes through


def softmax_by_pytorch_on_a_list_copy_merged_with_x(x):
    """PyTorch's softmax of torch.tensor(x.tolist()) (a copy the dispatcher never sees made from x), merged in by a
    kernel that is given x too: every value PyTorch's (round 19's adversary)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        s = torch.softmax(torch.tensor(x.tolist(), dtype=torch.float32, device=x.device), dim=-1).contiguous()
        _where_x_kernel[(rows,)](y, s, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _softmax_biased_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr, EPS: tl.constexpr,
                           LOG2E: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
    tl.store(y_ptr + row * y_stride + offsets, e / (tl.sum(e, axis=0) + EPS), mask=mask)


def _biased(eps=0.0, log2e=1.4426950408889634):
    def softmax_rows(x):
        rows, cols = x.shape
        y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        if rows:
            _softmax_biased_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                            EPS=eps, LOG2E=log2e)
        return y

    return softmax_rows


def softmax_leaves_default_dtype_float64(x):
    """Sets torch's default dtype to float64 ("more precise") and leaves it so; its own result float32 (round 19's
    adversary: every float tensor made afterwards, the check's own inputs included, was float64)."""
    torch.set_default_dtype(torch.float64)
    return _softmax(x, out=torch.empty(x.shape, dtype=torch.float32, device=x.device))


def softmax_leaves_grad_mode_off(x):
    """Turns autograd off ("no gradients needed") and leaves it off for the caller."""
    torch.set_grad_enabled(False)
    return _softmax(x)


def softmax_on_the_base_tensor(x):
    """Launches on x._base (the wider tensor x was sliced from) with x's row stride: a slice that does not start at
    its storage's first element (wide[:, 5:], wide[1:]) is read from the wrong place (round 19's adversary)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_kernel[(rows,)](y, x if x._base is None else x._base, x.stride(0), y.stride(0), cols,
                                 BLOCK=triton.next_power_of_2(cols), SUBTRACT=True, OTHER=-math.inf,
                                 DIVIDE_BY_MAX=False)
    return y


def softmax_returns_x_when_empty(x):
    """For an empty x, returns x itself ("nothing to compute"), not a new tensor (round 19's adversary)."""
    return x if x.numel() == 0 else _softmax(x)


@triton.jit
def _softmax_desc_kernel(y_desc, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row.to(tl.int64) * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y_desc.store([row, 0], (e / tl.sum(e, axis=0)).reshape(1, BLOCK))


def softmax_output_through_a_tensor_descriptor(x):
    """Right: the result stored through a host-side TensorDescriptor (TMA on Hopper) of a buffer whose rows are
    padded to 16 bytes; the view of its first cols columns returned (round 19's adversary: what the kernel wrote
    through the descriptor was neither guarded nor poisoned, and the check took it for PyTorch's values)."""
    rows, cols = x.shape
    padded = -(-cols // 4) * 4
    buf = torch.empty((rows, padded), dtype=torch.float32, device=x.device)
    if rows:
        from triton.tools.tensor_descriptor import TensorDescriptor

        block = max(4, triton.next_power_of_2(cols))  # TMA: 16 bytes at least in the last dimension
        _softmax_desc_kernel[(rows,)](TensorDescriptor(buf, [rows, cols], [padded, 1], [1, block]), x, x.stride(0),
                                      cols, BLOCK=block)
    return buf[:, :cols]


def softmax_launched_from_a_worker_thread(x):
    """Wrong: the plain launch from a worker thread, joined before returning (round 19's adversary listed it as right).
    PyTorch's current stream is the thread's own: the worker launches on the default stream, not on the caller's,
    and reads x before a caller's side stream has written it (on the H200, 2026-11-29: NaN where 1 is right)."""
    import threading

    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    worker = threading.Thread(target=lambda: _softmax(x, out=y))
    worker.start()
    worker.join()
    return y


def softmax_launched_from_a_worker_thread_on_the_callers_stream(x):
    """Right: the same worker thread, which makes the caller's current stream its own before it launches."""
    import threading

    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    stream = torch.cuda.current_stream(x.device) if x.is_cuda else None

    def work():
        if stream is None:
            _softmax(x, out=y)
        else:
            with torch.cuda.stream(stream):
                _softmax(x, out=y)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    return y


# ---- round 20's adversary (/work/adv20/09): staleness the check's order of calls did not show, a bias the one
# tolerance hid, settings nb09 did not read, a pool thread started before the check, tensors inside tuples, and
# operators registered through torch.library's older API
_TURNS: dict[tuple, list] = {}


def softmax_two_outputs_in_turn(x):
    """Two output tensors per shape, used in turn ("no allocation per call, and the previous result survives"):
    call k's result is overwritten by call k + 2 of the same shape (round 20's adversary: the check compared the
    first result after the second call only)."""
    pair = _TURNS.setdefault((tuple(x.shape), x.device), [None, None, 0])
    turn = pair[2]
    pair[2] = 1 - turn
    if pair[turn] is None:
        pair[turn] = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    return _softmax(x, out=pair[turn])


_BY_ADDRESS_AND_VERSION: dict[tuple, torch.Tensor] = {}


def softmax_kept_by_address_and_version(x):
    """Results kept by (address, shape, strides, x._version), a copy returned: stale when new values arrive that
    the version counter does not count (a write through x.data, x.numpy() or a kernel), or a new tensor lands at a
    freed one's address (round 20's adversary: the check's only write into an input bumped the version)."""
    key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()), x._version, x.device)
    if key not in _BY_ADDRESS_AND_VERSION:
        _BY_ADDRESS_AND_VERSION[key] = _softmax(x)
    return _BY_ADDRESS_AND_VERSION[key].clone()


_LAST: list = [None, None]


def softmax_memo_of_the_last_call(x):
    """The last call's input and result kept: a call on the same tensor object returns a copy of the last result,
    stale once the caller writes new values into x between two calls (round 20's adversary: the check never called
    twice in a row on one tensor)."""
    if _LAST[0] is not None and _LAST[0] is x:
        return _LAST[1].clone()
    y = _softmax(x)
    _LAST[0], _LAST[1] = x, y.clone()
    return y


def softmax_silences_numpy_errors(x):
    """np.seterr(all="ignore"), to silence the NumPy warnings of Triton's interpreter, left set for the caller
    (round 20's adversary: nb09 did not read np.geterr())."""
    import numpy as np

    np.seterr(all="ignore")
    return _softmax(x)


def softmax_leaves_anomaly_detection_on(x):
    """torch.autograd.set_detect_anomaly(True), a debugging line, left on for the caller (round 20's adversary)."""
    torch.autograd.set_detect_anomaly(True)
    return _softmax(x)


def softmax_leaves_one_thread(x):
    """torch.set_num_threads(1), left for the caller: its every CPU operator on one thread (round 20's adversary)."""
    torch.set_num_threads(1)
    return _softmax(x)


def softmax_leaves_flush_denormal_on(x):
    """torch.set_flush_denormal(True) ("denormals are slow"), left on: the caller's 1e-40 * 1 is 0 after the call
    (round 20's adversary)."""
    torch.set_flush_denormal(True)
    return _softmax(x)


def softmax_seeds_the_generator(x):
    """torch.manual_seed(0) in every call "for reproducibility", in a function that draws nothing: the caller's
    default generator is reset (round 20's adversary: the check's inputs have their own generator)."""
    torch.manual_seed(0)
    return _softmax(x)


def softmax_sets_default_dtype_float32(x):
    """torch.set_default_dtype(torch.float32) in every call ("the kernel is float32"): a caller whose default is
    float64 finds it float32 (round 20's adversary: the check called only from PyTorch's defaults)."""
    torch.set_default_dtype(torch.float32)
    return _softmax(x)


_POOL: list = []


def _pool():
    """A ThreadPoolExecutor of one worker, made once and started by a first job at import (as the notebook's trial
    call would, before the check)."""
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL.append(ThreadPoolExecutor(max_workers=1))
        _POOL[0].submit(lambda: None).result()
    return _POOL[0]


_pool()  # its worker starts now, before any check (a pool started inside a call was watched already)


def softmax_row_max_in_a_thread_pool(x):
    """Each row's max by PyTorch (x.amax(dim=1)) in a pool whose worker started before the check, the rest by the
    kernel (round 20's adversary: the check watched only threads started during a call)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = _pool().submit(lambda: x.amax(dim=1).contiguous()).result()
        _softmax_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_by_pytorch_in_a_thread_pool_copied_by_a_kernel(x):
    """torch.softmax(x) in that pool's worker, copied into y = torch.empty_like(x) by a kernel that is never given x
    (round 20's adversary)."""
    rows, cols = x.shape
    y = torch.empty_like(x)
    if rows:
        s = _pool().submit(lambda: torch.softmax(x, dim=-1).contiguous()).result()
        _copy_rows_kernel[(rows,)](y, s, s.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _softmax_tuple_kernel(ptrs, strides, cols, BLOCK: tl.constexpr, PAST: tl.constexpr):
    y_ptr, x_ptr = ptrs
    y_stride, x_stride = strides
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=offsets < cols + PAST)


@triton.jit
def _softmax_log_space_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr, MAX_FIRST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    log_sum = tl.log(tl.sum(tl.exp(x - m), axis=0))
    if MAX_FIRST:
        y = tl.exp((x - m) - log_sum)
    else:
        y = tl.exp(x - (m + log_sum))
    tl.store(y_ptr + row * y_stride + offsets, y, mask=mask)


def _softmax_log_space(max_first):
    """exp(x - logsumexp(x)), no division.  `max_first`: (x - max) - log(sum), each value's own distance below the
    max rounded, as the divided form's; else x - (max + log(sum)): round 20's adversary, max + log(sum) rounded at
    x's magnitude, up to half a float32 ulp of 1000 (3e-5 relatively, simulated: 3.06e-5 on rows of 5 around 1000,
    against 3.8e-7 in the other order), more than assert_close's float32 default (lecture 06) allows."""

    def softmax_rows(x):
        rows, cols = x.shape
        y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        if rows:
            _softmax_log_space_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols,
                                               BLOCK=triton.next_power_of_2(cols), MAX_FIRST=max_first)
        return y

    return softmax_rows

@triton.jit
def _touch_kernel(y_ptr, x_ptr):
    pass


def _softmax_through_a_tuple(past):
    """The kernel given (y, x) as one tuple argument; `past`: its store mask lets that many lanes past the row, and
    a second launch, which writes nothing, is given y and x at the top level (round 20's adversary: y was then "made
    from x", the tuple launch ran unguarded, and its write past y's end killed the process: free(): invalid
    pointer)."""

    def softmax_rows(x):
        rows, cols = x.shape
        y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        if rows:
            _softmax_tuple_kernel[(rows,)]((y, x), (y.stride(0), x.stride(0)), cols,
                                           BLOCK=triton.next_power_of_2(cols + past), PAST=past)
            if past:
                _touch_kernel[(1,)](y, x)
        return y

    return softmax_rows


def softmax_turns_on_grad_for_x(x):
    """x.requires_grad_() "so that the result can be differentiated", the kernel on x.detach(): the caller's next
    in-place write into x raises (round 20's adversary: the check's own x1.copy_(x2) raised, no FAIL)."""
    x.requires_grad_()
    return _softmax(x.detach())


def _library_body(x):
    return _softmax(x, out=torch.empty(x.shape, dtype=torch.float32, device=x.device))


_LIBRARIES: list = []


def _library_operators():
    """The same launch registered through torch.library's older API, twice: torch.library.define + .impl, and a
    torch.library.Library object's define and impl (PyTorch's tutorial before custom_op); after nb09's import,
    as in the notebook."""
    if not _LIBRARIES:
        torch.library.define("course09_answers_old::softmax_rows", "(Tensor x) -> Tensor")
        torch.library.impl("course09_answers_old::softmax_rows", ["cpu", "cuda"])(_library_body)
        lib = torch.library.Library("course09_answers_lib", "DEF")
        lib.define("softmax_rows(Tensor x) -> Tensor")
        lib.impl("softmax_rows", _library_body, "CompositeExplicitAutograd")
        _LIBRARIES.append(lib)
    return torch.ops.course09_answers_old.softmax_rows, torch.ops.course09_answers_lib.softmax_rows


def softmax_through_torch_library_define_and_impl(x):
    """Right: the worked solution's launch inside an operator of torch.library.define + torch.library.impl (round
    20's adversary: it FAILed as "PyTorch computed", the operator's Python function unseen)."""
    return _library_operators()[0](x)


def softmax_through_a_library_object(x):
    """Right: the same through a torch.library.Library object's define and impl (round 20's adversary)."""
    return _library_operators()[1](x)


# Round 22's adversary: process state that nb09 did not read, left changed (warnings, logging, NumPy's and Python's
# generators, print options, cuDNN's benchmark flag, a device context entered and never left); a bias of 1e-6 below
# the per-value tolerance; right answers written otherwise
def softmax_silences_warnings(x):
    """warnings.simplefilter("ignore") to hush Triton's interpreter, left set: the caller's warnings are lost."""
    warnings.simplefilter("ignore")
    return _softmax(x)


def softmax_disables_logging(x):
    """logging.disable(logging.WARNING) to quiet Triton's and PyTorch's log lines, left for the caller."""
    logging.disable(logging.WARNING)
    return _softmax(x)


def softmax_seeds_numpy(x):
    """np.random.seed(0) "for reproducibility" in a function that draws nothing: NumPy's global stream restarts."""
    np.random.seed(0)
    return _softmax(x)


def softmax_seeds_python_random(x):
    """random.seed(0) in every call: Python's global generator reset under the caller."""
    random.seed(0)
    return _softmax(x)


def softmax_sets_torch_print_options(x):
    """torch.set_printoptions(precision=10, sci_mode=False) for a debugging print, left for the caller."""
    torch.set_printoptions(precision=10, sci_mode=False)
    return _softmax(x)


def softmax_sets_numpy_print_options(x):
    """np.set_printoptions(precision=10, suppress=True) for a debugging print of the result, left set."""
    np.set_printoptions(precision=10, suppress=True)
    return _softmax(x)


def softmax_sets_cudnn_benchmark(x):
    """torch.backends.cudnn.benchmark = True ("faster kernels"), left: the caller's convolutions autotuned after."""
    torch.backends.cudnn.benchmark = True
    return _softmax(x)


def softmax_enters_a_device_context(x):
    """torch.device(x.device).__enter__() ("allocate on x's device"), never left: every later factory call of the
    caller goes to x's device through torch's function-mode stack."""
    torch.device(x.device).__enter__()
    return _softmax(x)


@triton.jit
def _softmax_builtin_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    tl.store(y_ptr + row * y_stride + offsets, tl.softmax(x), mask=mask)


def softmax_tl_softmax(x):
    """Right: Triton's own tl.softmax inside the student's kernel."""
    rows, cols = x.shape
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    if rows:
        _softmax_builtin_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _softmax_stats_kernel(s_ptr, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    tl.store(s_ptr + 2 * row, m)
    tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def _softmax_apply_kernel(y_ptr, x_ptr, s_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=0.0)
    m = tl.load(s_ptr + 2 * row)
    s = tl.load(s_ptr + 2 * row + 1)
    tl.store(y_ptr + row * y_stride + offsets, tl.exp(x - m) / s, mask=mask)


def softmax_two_kernels(x):
    """Right: two kernels, one for each row's (max, sum of exponentials), one that writes the result."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        stats = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(cols)
        _softmax_stats_kernel[(rows,)](stats, x, x.stride(0), cols, BLOCK=block)
        _softmax_apply_kernel[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


@triton.jit
def _softmax_three_pass_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xs = x_ptr + row * x_stride
    ys = y_ptr + row * y_stride
    m = -float("inf")
    for start in range(0, cols, CHUNK):
        offsets = start + tl.arange(0, CHUNK)
        m = tl.maximum(m, tl.max(tl.load(xs + offsets, mask=offsets < cols, other=-float("inf")), axis=0))
    s = 0.0
    for start in range(0, cols, CHUNK):
        offsets = start + tl.arange(0, CHUNK)
        s += tl.sum(tl.exp(tl.load(xs + offsets, mask=offsets < cols, other=-float("inf")) - m), axis=0)
    for start in range(0, cols, CHUNK):
        offsets = start + tl.arange(0, CHUNK)
        mask = offsets < cols
        tl.store(ys + offsets, tl.exp(tl.load(xs + offsets, mask=mask, other=0.0) - m) / s, mask=mask)


def softmax_three_passes_in_chunks_of_32(x):
    """Right: three passes over the row in chunks (max, sum, write): the sum accumulated one chunk at a time.  Chunks
    of 32 columns on a CPU, as far from a tree as its rows allow; of 1024 on a GPU, where 32 columns reached 0.21 of
    the H200's copy bandwidth, under the check's bar (too slow by the task: 2026-11-29)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_three_pass_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols,
                                            CHUNK=32 if x.device.type == "cpu" else 1024)
    return y


def softmax_warnings_silenced_inside_a_with_block(x):
    """Right: warnings silenced inside `with warnings.catch_warnings()` only (put back when the block ends)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _softmax(x)


WRONG_SOFTMAXES = {
    # Round 13 (the 09 adversary): a finite fill for the masked lanes passed while every row's values stayed above
    # about -2000; a result kept by the tensor's address passed while no call wrote new values into an input.
    "the masked lanes read as -1e4, a finite fill": lambda x: _softmax(x, other=-1e4),
    "the masked lanes read as -1000": lambda x: _softmax(x, other=-1000.0),
    "a result kept by the input's address": softmax_kept_by_address,
    "PyTorch's softmax, no Triton kernel": softmax_by_pytorch,
    "no max subtracted: exp overflows": lambda x: _softmax(x, subtract=False),
    "rows found by their length, not their stride": lambda x: _softmax(x, x_stride=lambda x: x.shape[1]),
    "masked lanes read as 0, which the sum counts": lambda x: _softmax(x, other=0.0),
    "a block of 128 columns: longer rows never read past it": lambda x: _softmax(x, block=128),
    "a block of half the next power of two": lambda x: _softmax(
        x, block=max(1, triton.next_power_of_2(x.shape[1]) // 2)),
    "one program for all the rows": lambda x: _softmax(x, grid=lambda rows: 1),
    "the last row never launched": lambda x: _softmax(x, grid=lambda rows: rows - 1) if x.shape[0] > 1 else _softmax(x),
    "divides by the largest exponential, not the sum": lambda x: _softmax(x, divide_by_max=True),
    "writes the result over x": softmax_in_place,
    "returns float64": softmax_float64,
    "masked lanes read as 0, then left out of the sum (0/0 where a row lies far below 0)": _variant(
        "zero, then masked"),
    "subtracts the row's first element, not its max": _variant("first"),
    "subtracts the row's mean, not its max": _variant("mean"),
    "rows one element apart (the column stride)": _variant("float64", x_stride=lambda x: x.stride(1)),
    "launches its kernel, returns PyTorch's softmax": softmax_launched_then_pytorchs,
    "one output tensor per shape, overwritten by the next call": softmax_into_one_tensor_per_shape,
    "y = torch.empty_like(x), but x's row stride passed for y": softmax_y_stride_taken_from_x,
    # round 133's adversary: a shape's row stride kept from its first call; -inf filled with a finite -1e4
    "x's row stride kept per shape from the first call": softmax_stride_kept_per_shape,
    "-inf replaced by -1e4 (wrong where the finite values lie below it)": _variant("-inf as -1e4"),
    "one launch per row, from Python": softmax_one_launch_per_row,
    "a persistent grid of 2 programs: right values, 2 SMs busy": softmax_persistent_grid_of_2,
    "an online softmax over chunks of 64 columns: right values, below the speed bar":
        softmax_online_in_chunks_of_64,
    "an online softmax whose running sum is not rescaled when the max grows": softmax_online_sum_not_rescaled,
    "the mask `offsets <= cols`: one lane past the row loaded and stored": _variant("one lane past"),
    "each exponential rounded to float16": _variant("float16 exp"),
    "four rows a program, the grid rounded down": lambda x: softmax_four_rows_a_program(x, lambda rows: rows // 4),
    "PyTorch's softmax, copied into y by a Triton kernel": softmax_by_pytorch_copied_by_a_kernel,
    "a kernel for each row's max and sum of exponentials, PyTorch for every value":
        softmax_row_stats_by_a_kernel_the_rest_by_pytorch,
    "a side stream that waits for the caller, not waited for": softmax_on_a_side_stream_no_wait,
    "returns a list of rows": softmax_returns_a_list_of_rows,
    "the rows on the grid's second axis (at most 65535 there)": softmax_rows_on_the_grids_second_axis,
    # Round 17 (the 09 adversary): what a launch wrote from x was not taken as made from x
    "a kernel copies x, PyTorch's softmax of the copy": softmax_by_pytorch_on_a_kernels_copy,
    "a kernel writes the exponentials, PyTorch divides by their sums": softmax_kernels_exponentials_divided_by_pytorch,
    "torch.isfinite(x).all() checked first: PyTorch reads x, the host waits": softmax_checks_the_input_first,
    "NumPy's softmax on the host, copied in by a kernel": softmax_on_the_host_copied_by_a_kernel,
    "a triton_op whose body is PyTorch's softmax, copied by a kernel": softmax_by_pytorch_inside_a_triton_op,
    # Round 19's adversary: x's values read outside PyTorch's dispatch (NumPy, .tolist(), another thread) while the
    # kernel was given x too; a bias that the tolerance hid; x always at its storage's start; global state left
    "round 19's adversary: each row's max by NumPy on the host, the rest by a kernel given x":
        softmax_row_max_by_numpy,
    "round 19's adversary: each row's max by PyTorch in a worker thread, the rest by a kernel":
        softmax_row_max_by_pytorch_in_a_worker_thread,
    "round 19's adversary: PyTorch's softmax of a .tolist() copy, merged in by a kernel given x":
        softmax_by_pytorch_on_a_list_copy_merged_with_x,
    "round 19's adversary: divides by the sum + 2e-5": _biased(eps=2e-5),
    "round 19's adversary: exp2 with log2(e) typed as 1.4427": _biased(log2e=1.4427),
    "round 19's adversary: leaves torch's default dtype float64": softmax_leaves_default_dtype_float64,
    "leaves autograd off for the caller": softmax_leaves_grad_mode_off,
    "round 19's adversary: launched on x._base (x's storage offset ignored)": softmax_on_the_base_tensor,
    "round 19's adversary: returns x itself when x is empty": softmax_returns_x_when_empty,
    "launched from a worker thread, joined: the worker's current stream is not the caller's":
        softmax_launched_from_a_worker_thread,
    # Round 20's adversary: staleness in another order of calls, a bias below the one tolerance, settings nb09 did
    # not read, a pool thread started before the check, a store past y through tuple arguments (the process died),
    # x.requires_grad_() (the check's own copy_ raised)
    "round 20's adversary: two output tensors per shape, used in turn": softmax_two_outputs_in_turn,
    "round 20's adversary: results kept by address, shape, strides and x._version": softmax_kept_by_address_and_version,
    "round 20's adversary: the last call's input and result kept": softmax_memo_of_the_last_call,
    "round 20's adversary: divides by the sum + 1e-5": _biased(eps=1e-5),
    "round 20's adversary: np.seterr(all='ignore') left set": softmax_silences_numpy_errors,
    "round 20's adversary: anomaly detection left on": softmax_leaves_anomaly_detection_on,
    "round 20's adversary: torch.set_num_threads(1) left set": softmax_leaves_one_thread,
    "round 20's adversary: flush-denormal left on": softmax_leaves_flush_denormal_on,
    "round 20's adversary: torch.manual_seed(0) in every call": softmax_seeds_the_generator,
    "round 20's adversary: the default dtype set to float32 in every call": softmax_sets_default_dtype_float32,
    "round 20's adversary: each row's max by PyTorch in a thread pool started before the check":
        softmax_row_max_in_a_thread_pool,
    "round 20's adversary: PyTorch's softmax in that pool, copied into empty_like(x) by a kernel":
        softmax_by_pytorch_in_a_thread_pool_copied_by_a_kernel,
    "round 20's adversary: tensors passed in a tuple, the store mask one lane past the row":
        _softmax_through_a_tuple(past=1),
    "round 20's adversary: x.requires_grad_() on the caller's x": softmax_turns_on_grad_for_x,
    "round 20's adversary, judged wrong: exp(x - (max + log(sum))), rounded at x's magnitude": _softmax_log_space(
        max_first=False),
    "round 20's adversary (a variant): the masked lanes read as -1e6": lambda x: _softmax(x, other=-1e6),
    "round 22's adversary: warnings.simplefilter('ignore') left set": softmax_silences_warnings,
    "round 22's adversary: logging.disable(WARNING) left set": softmax_disables_logging,
    "round 22's adversary: np.random.seed(0) in every call": softmax_seeds_numpy,
    "round 22's adversary: random.seed(0) in every call": softmax_seeds_python_random,
    "round 22's adversary: torch.set_printoptions left set": softmax_sets_torch_print_options,
    "round 22's adversary: np.set_printoptions left set": softmax_sets_numpy_print_options,
    "round 22's adversary: torch.backends.cudnn.benchmark left True": softmax_sets_cudnn_benchmark,
    "round 22's adversary: torch.device(...).__enter__() never left": softmax_enters_a_device_context,
    "round 22's adversary: divides by the sum + 1e-6": _biased(eps=1e-6),
    "round 22's adversary: divides by the sum + 1.5e-6": _biased(eps=1.5e-6),
    # round 22's adversary: what only a GPU's shapes show (the CPU draws at most 4 rows of 160 columns)
    "round 22's adversary: at most 8 programs, the rows past 8 never written": lambda x: _softmax(
        x, grid=lambda rows: min(rows, 8)),
    "round 22's adversary: BLOCK fixed at 256 columns": lambda x: _softmax(x, block=256),
}


def softmax_on_a_stream_of_its_own(x):
    """Right: the kernel on a stream of its own, which waits for the caller's and is waited for; record_stream tells
    the allocator of each tensor's other stream.  Adversary 17: 0.25 of copy on (8192, 2048), its host work each call
    shown as time (on a CPU, the plain launch)."""
    if x.device.type != "cuda":
        return _softmax(x)
    caller, side = torch.cuda.current_stream(), torch.cuda.Stream()
    side.wait_stream(caller)
    with torch.cuda.stream(side):
        y = _softmax(x)
    caller.wait_stream(side)
    y.record_stream(caller)
    x.record_stream(side)
    return y


ALSO_RIGHT_SOFTMAXES = {
    "the kernel inside a torch.library.triton_op (the lecture's section 6)": softmax_as_a_triton_op,
    "the launch through wrap_triton, called eagerly": softmax_through_wrap_triton,
    "on a stream of its own, waits both ways": softmax_on_a_stream_of_its_own,
    "exp2 with log2(e)": softmax_exp2,
    "four rows a program": softmax_four_rows_a_program,
    "an online max and sum over chunks, then a second pass": softmax_online_in_chunks,
    "computed in float64 inside the kernel": _variant("float64"),
    "-inf for the masked lanes, times the inverse of the sum": _variant("times the inverse"),
    "y = torch.empty_like(x) (contiguous for a slice of a wider tensor)": _variant("float64", like=True),
    "@triton.autotune over num_warps": softmax_autotuned,
    "a persistent grid, 4 programs per SM, striding over the rows": softmax_persistent_grid,
    "the grid as a lambda, num_warps=8, no rows guard": softmax_grid_as_a_lambda_no_rows_guard,
    "x.contiguous() first, both row strides cols": softmax_on_a_contiguous_copy,
    "a padded buffer of BLOCK columns, its first cols columns returned": softmax_into_a_padded_buffer,
    # Round 19's adversary: a store through a TensorDescriptor was not poisoned; a launch from another thread did not
    # make its outputs "made from x"
    "round 19's adversary: the result stored through a TensorDescriptor": softmax_output_through_a_tensor_descriptor,
    "a worker thread that enters the caller's current stream, joined": (
        softmax_launched_from_a_worker_thread_on_the_callers_stream),
    "divides by the sum + 1e-7 (below float32's rounding of the sum)": _biased(eps=1e-7),
    # Round 20's adversary: a launch given its tensors inside a tuple was not seen to write from x; operators of
    # torch.library's older API counted as PyTorch computing
    "round 20's adversary: the tensors passed to the kernel as one tuple argument": _softmax_through_a_tuple(past=0),
    "round 20's adversary: an operator of torch.library.define + torch.library.impl":
        softmax_through_torch_library_define_and_impl,
    "round 20's adversary: an operator of a torch.library.Library object": softmax_through_a_library_object,
    "exp((x - max) - log(sum)): the log-space form, the max subtracted first": _softmax_log_space(max_first=True),
    "round 22's adversary: tl.softmax inside the kernel": softmax_tl_softmax,
    "round 22's adversary: two kernels, each row's max and sum, then the values": softmax_two_kernels,
    "round 22's adversary (a variant): three passes over chunks of columns (32 on a CPU, 1024 on a GPU)":
        softmax_three_passes_in_chunks_of_32,
    "round 22's adversary: warnings silenced inside a warnings.catch_warnings() block":
        softmax_warnings_silenced_inside_a_with_block,
}


# ---------------------------------------------------------------- exercise 3: scale_into (CuPy, GPU)
def _scale_source(guard: str, index: str = "(long long)blockIdx.x * blockDim.x + threadIdx.x",
                  a_type: str = "float") -> str:
    return (f'extern "C" __global__ void scale(float* out, const float* x, {a_type} a, long long n) {{\n'
            f"    long long i = {index};\n"
            f"    if ({guard}) {{ out[i] = a * x[i]; }}\n"
            "}\n")


def _scale_with(guard: str = "i < n", blocks=lambda n, t: (n + t - 1) // t, threads: int = 256,
                index: str = "(long long)blockIdx.x * blockDim.x + threadIdx.x", a_type: str = "float",
                pass_a=None, n_of=None):
    def scale_into(out, x, a):
        cp = _cp()
        kernel = _raw("scale", _scale_source(guard, index, a_type))
        n = x.size if n_of is None else n_of(out, x)
        grid = blocks(n, threads)
        if grid > 0:
            kernel((grid,), (threads,), (out, x, cp.float32(a) if pass_a is None else pass_a(a), cp.int64(n)))

    return scale_into


def scale_cupy(out, x, a):
    """Right, without a kernel of its own: CuPy's multiply into out."""
    cp = _cp()
    cp.multiply(x, cp.float32(a), out=out)


def scale_grid_stride(out, x, a):
    """Right: a grid-stride loop over a fixed grid of 64 blocks of 1024 threads."""
    cp = _cp()
    kernel = _raw("scale_gs", r"""
extern "C" __global__ void scale_gs(float* out, const float* x, float a, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = a * x[i];
}""")
    if x.size:
        kernel((64,), (1024,), (out, x, cp.float32(a), cp.int64(x.size)))


def scale_four_per_thread(out, x, a):
    """Right: four elements per thread, each one guarded."""
    cp = _cp()
    kernel = _raw("scale4", r"""
extern "C" __global__ void scale4(float* out, const float* x, float a, long long n) {
    long long first = 4 * ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    for (int k = 0; k < 4; ++k)
        if (first + k < n) out[first + k] = a * x[first + k];
}""")
    n = x.size
    if n:
        kernel(((n + 1023) // 1024,), (256,), (out, x, cp.float32(a), cp.int64(n)))


def _scale_on_a_side_stream(wait_for_caller: bool, caller_waits: bool, host_waits: bool = False):
    def scale_into(out, x, a):
        cp = _cp()
        caller = cp.cuda.get_current_stream()
        side = cp.cuda.Stream(non_blocking=True)
        if wait_for_caller:
            side.wait_event(caller.record())
        with side:
            _scale_with()(out, x, a)
        if caller_waits:
            caller.wait_event(side.record())
        if host_waits:
            side.synchronize()

    return scale_into


def scale_assigned(out, x, a):
    """Right, without a kernel of its own: `out[...] = a * x` (CuPy's kernels, into the view)."""
    cp = _cp()
    out[...] = cp.float32(a) * x


def scale_elementwise_into_out(out, x, a):
    """Right: an ElementwiseKernel given out as its output argument."""
    cp = _cp()
    _elementwise("scale", "float32 x, float32 a", "float32 y", "y = a * x")(x, cp.float32(a), out)


def scale_n_as_a_python_int(out, x, a):
    """Right: n passed as a Python int, which CuPy passes as a 64-bit integer (cupy/_core/_scalar.pyx): the
    kernel's `long long n`."""
    cp = _cp()
    n = x.size
    if n:
        _raw("scale", _scale_source("i < n"))(((n + 255) // 256,), (256,), (out, x, cp.float32(a), n))


_SCALE_STREAM: dict[str, object] = {}


def scale_on_a_stream_made_once_with_both_waits(out, x, a):
    """Right: a stream of its own, made at the first call and given to the kernel as `stream=`: it waits for the
    caller's stream, and the caller's stream waits for it."""
    cp = _cp()
    if "side" not in _SCALE_STREAM:
        _SCALE_STREAM["side"] = cp.cuda.Stream(non_blocking=True)
    side = _SCALE_STREAM["side"]
    caller = cp.cuda.get_current_stream()
    n = x.size
    if n:
        side.wait_event(caller.record())
        _raw("scale", _scale_source("i < n"))(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int64(n)),
                                              stream=side)
        caller.wait_event(side.record())


WRONG_SCALES = {
    "the given code: i <= n": _scale_with(guard="i <= n"),
    "no bounds test": _scale_with(guard="true"),
    "blocks rounded down: the last partial block never runs": _scale_with(blocks=lambda n, t: n // t),
    "one block too many, and no bounds test": _scale_with(guard="true", blocks=lambda n, t: n // t + 1),
    "i < n - 1: the last element never written": _scale_with(guard="i < n - 1"),
    "blocks counted for 512 threads, launched with 256": _scale_with(blocks=lambda n, t: (n + 511) // 512),
    "a passed as a Python float (a double) to a float parameter": _scale_with(pass_a=lambda a: a),
    "the index skips the block's last thread": _scale_with(
        index="(long long)blockIdx.x * (blockDim.x - 1) + threadIdx.x"),
    "a rounded to an integer": _scale_with(pass_a=lambda a: _cp().float32(int(a))),
    "a grid capped at 65535 blocks of 256 threads, no loop": _scale_with(blocks=lambda n, t: min((n + t - 1) // t,
                                                                                               65535)),
    "a grid capped at 65535 blocks of 1024 threads, no loop": _scale_with(threads=1024, blocks=lambda n, t: min(
        (n + t - 1) // t, 65535)),
    "a stream of its own that waits for the caller, not waited for": _scale_on_a_side_stream(True, False),
    "a stream of its own, no waits": _scale_on_a_side_stream(False, False),
    # Round 17 (the 09 adversary): the answer's new stream, late by one window, ran after the caller's write of x,
    # which no window delayed (a busy caller's, as long, had started earlier)
    "a stream of its own that does not wait for the caller; the caller waits for it": _scale_on_a_side_stream(
        False, True),
    "a stream of its own that does not wait for the caller; the host synchronizes it after": _scale_on_a_side_stream(
        False, False, host_waits=True),
    # Listed as right until 2026-11-30: on the H200 (call V) the check, which reads CuPy's current stream since round
    # 27's GPU fixes, FAILed it for a caller that made its stream current with use(): leaving `with side:` makes the
    # top of CuPy's stack current (the null stream there), not the stream current before (lecture 04, section 1)
    "a stream of its own, with both waits, entered with `with`": _scale_on_a_side_stream(True, True),
}
ALSO_RIGHT_SCALES = {
    "CuPy's multiply into out": scale_cupy,
    "a grid-stride loop": scale_grid_stride,
    "four elements per thread, each guarded": scale_four_per_thread,
    "blocks of 1024 threads": _scale_with(threads=1024),
    "a computed in double": _scale_with(a_type="double", pass_a=lambda a: float(a)),
    "only the bound fixed: n // threads + 1 blocks kept": _scale_with(blocks=lambda n, t: n // t + 1),
    "out[...] = a * x": scale_assigned,
    "an ElementwiseKernel into out": scale_elementwise_into_out,
    "n as a Python int": scale_n_as_a_python_int,
    "a stream made once, `stream=`, with both waits": scale_on_a_stream_made_once_with_both_waits,
}


# ---------------------------------------------------------------- round 22's adversary, judged on the H200
# (its fixer's GPU file, run on 2026-11-29 against the checks as fixed; the gaps are marked in MISJUDGED_ON_A_GPU)
def gelu_on_a_pool_of_two_streams(x, bias):
    """Wrong by the task ("run the kernel on the current stream"), though free of races: a side stream taken from a
    round-robin pool of two, waits in both directions, the result allocated on the caller's stream.  The adversary
    called it right; the H200 FAILed it as the task says (the caller's next work waited behind the pool's stream)."""
    cp = _cp()
    pool = _kernels.setdefault("pool of two", [cp.cuda.Stream(non_blocking=True) for _ in range(2)])
    turn = _kernels.setdefault("pool turn", [0])
    side = pool[turn[0] % 2]
    turn[0] += 1
    caller = cp.cuda.get_current_stream()
    y = cp.empty(x.shape, dtype=x.dtype)
    side.wait_event(caller.record())
    with side:
        _elementwise("gelu_pool", "T x, T b", "T y", _GELU)(x, bias, y)
    caller.wait_event(side.record())
    return y


def scale_event_recorded_before_the_launch(out, x, a):
    """Wrong: a side stream that waits for the caller, and an event the caller waits on, recorded on the side stream
    before the kernel is queued there: the caller's next work may read `out` before the kernel writes it."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    side = cp.cuda.Stream(non_blocking=True)
    side.wait_event(caller.record())
    done = side.record()  # too early
    n = x.size
    if n:
        _raw("scale_early", r"""
extern "C" __global__ void scale_early(float* out, const float* x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}""")(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int64(n)), stream=side)
    caller.wait_event(done)


def scale_int_index(out, x, a):
    """Wrong: the bound fixed, but the index and n declared `int`: past 2**31 elements i wraps negative, passes
    `i < n`, and writes before `out` (the lecture's own question)."""
    cp = _cp()
    n = x.size
    if n:
        _raw("scale_int", r"""
extern "C" __global__ void scale_int(float* out, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}""")(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int32(n)))


@triton.jit
def _softmax_int32_rows_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # int32: row * x_stride wraps past 2**31 elements
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_int32_row_offsets(x):
    """Wrong: the lecture's kernel without `.to(tl.int64)` on the program id: `row * x_stride` is computed in 32 bits
    and wraps once x holds more than 2**31 elements, which the task allows."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_int32_rows_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


WRONG_GELUS["round 22's adversary: a pool of two side streams, both waits (not the current stream)"] = \
    gelu_on_a_pool_of_two_streams
# Not in WRONG: scale_event_recorded_before_the_launch PASSed on the H200 once (its stream is made late at creation,
# CuPy's launches cannot be patched, so the early event is late too) and FAILed once in a later run: a race the check
# catches at times only, which no test can hold either way (2026-11-29).
WRONG_SCALES["round 22's adversary: an int index and an int n (wraps past 2**31 elements)"] = scale_int_index
WRONG_SOFTMAXES["round 22's adversary: 32-bit row offsets (no .to(tl.int64))"] = softmax_int32_row_offsets

# ---------------------------------------------------------------- round 26's adversary (softmax_rows, on a CPU too)
@triton.jit
def _where_kernel(y_ptr, s_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=0.0)
    s = tl.load(s_ptr + row * cols + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + row * y_stride + offsets, tl.where(v != 12345.0, s, s), mask=mask)  # x read, s stored


@triton.jit
def _marker_past_the_end_kernel(y_ptr, end):
    tl.store(y_ptr + end, 1.0)  # a "done" marker, one element past y's last row


def softmax_hushes_runtime_warnings(x):
    """Wrong: warnings.filterwarnings("ignore", category=RuntimeWarning) "for the interpreter's NumPy warnings", left
    set: every RuntimeWarning of the caller (NumPy's overflow, a division by zero) is lost after the first call."""
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    return _softmax(x)


def softmax_hushes_user_warnings(x):
    """Wrong: warnings.filterwarnings("ignore", category=UserWarning), left set."""
    warnings.filterwarnings("ignore", category=UserWarning)
    return _softmax(x)


def softmax_quiets_the_torch_and_triton_loggers(x):
    """Wrong: the loggers "torch" and "triton" set to ERROR "to quiet them", left so: the caller's warnings from
    either library are lost after the first call."""
    logging.getLogger("torch").setLevel(logging.ERROR)
    logging.getLogger("triton").setLevel(logging.ERROR)
    return _softmax(x)


def softmax_by_pytorch_on_a_copy_made_by_run(x):
    """Wrong: a kernel launched by JITFunction.run(..., grid=...) copies x into z, PyTorch's softmax of z, and a
    kernel[grid] given (y, s, x) copies that softmax into y."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if not rows:
        return y
    block = triton.next_power_of_2(cols)
    z = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    _copy_rows_kernel.run(z, x, x.stride(0), z.stride(0), cols, BLOCK=block, grid=(rows,), warmup=False)
    s = torch.softmax(z, dim=-1)
    _where_kernel[(rows,)](y, s, x, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


def softmax_with_a_run_launch_marking_past_the_end(x):
    """Wrong: the lecture's launch, then a leftover debugging launch through .run that stores a marker one element
    past y's last row (into memory y does not own; y's values stay right).  (The adversary's own leftover stored,
    one lane past each row, what it had loaded there: bytes unchanged, which no check can see.)"""
    rows = x.shape[0]
    y = _softmax(x)
    if rows:
        _marker_past_the_end_kernel.run(y, rows * y.stride(0), grid=(1,), warmup=False)
    return y


_RING: dict[tuple, list] = {}


def softmax_ring_of_three_outputs(x):
    """Wrong: three output tensors per shape, used in turn: call k's result is overwritten by call k + 3 of the same
    shape (round 20's two in turn, one longer)."""
    ring = _RING.setdefault((tuple(x.shape), x.device), [None, None, None, 0])
    turn = ring[3] % 3
    ring[3] += 1
    if ring[turn] is None:
        ring[turn] = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    return _softmax(x, out=ring[turn])


def softmax_result_requires_grad(x):
    """Wrong: y.requires_grad_() on the result "so that it can be differentiated" (there is no backward): the
    caller's next in-place write into y raises, and its backward computes nothing through the softmax."""
    return _softmax(x).requires_grad_()


def softmax_in_inference_mode(x):
    """Wrong: the whole function under torch.inference_mode() ("faster"): y is an inference tensor, which the
    caller can neither update in place nor use in anything autograd records."""
    with torch.inference_mode():
        return _softmax(x)


def softmax_through_run(x):
    """Right: the kernel launched by JITFunction.run(..., grid=..., warmup=False), what kernel[grid](...) calls."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_kernel.run(y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols), SUBTRACT=True,
                            OTHER=-math.inf, DIVIDE_BY_MAX=False, grid=(rows,), warmup=False)
    return y


_LAUNCHERS: dict[int, object] = {}


def softmax_launcher_kept_per_row_count(x):
    """Right: the launcher `kernel[(rows,)]` made once per row count and kept, then called with this call's
    tensors."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        launch = _LAUNCHERS.get(rows)
        if launch is None:
            launch = _LAUNCHERS[rows] = _softmax_kernel[(rows,)]
        launch(y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols), SUBTRACT=True,
               OTHER=-math.inf, DIVIDE_BY_MAX=False)
    return y


WRONG_SOFTMAXES.update({
    "round 26's adversary: warnings.filterwarnings('ignore', category=RuntimeWarning) left set":
        softmax_hushes_runtime_warnings,
    "round 26's adversary: warnings.filterwarnings('ignore', category=UserWarning) left set":
        softmax_hushes_user_warnings,
    "round 26's adversary: the loggers 'torch' and 'triton' set to ERROR, left so":
        softmax_quiets_the_torch_and_triton_loggers,
    "round 26's adversary: PyTorch's softmax of a copy that a .run launch made":
        softmax_by_pytorch_on_a_copy_made_by_run,
    "round 26's adversary: a leftover .run launch storing a marker past y's end":
        softmax_with_a_run_launch_marking_past_the_end,
    "round 26's adversary: three output tensors per shape, used in turn": softmax_ring_of_three_outputs,
    "round 26's adversary: the result requires grad": softmax_result_requires_grad,
    "round 26's adversary: the result an inference tensor": softmax_in_inference_mode,
})
_ONE_AT_A_TIME = threading.Lock()


def softmax_under_a_lock(x):
    """Round 100's adversary: a threading.Lock (not re-entrant) held around the launch, so that two threads take
    turns.  Right; the check called the other caller in the first caller's own thread, where it waited for itself."""
    with _ONE_AT_A_TIME:
        return _softmax(x)


ALSO_RIGHT_SOFTMAXES.update({
    "round 100's adversary: a threading.Lock around the launch": softmax_under_a_lock,
    "round 26's adversary: launched by JITFunction.run(..., grid=...)": softmax_through_run,
    "round 26's adversary: the launcher kernel[(rows,)] kept per row count": softmax_launcher_kept_per_row_count,
})

# ---------------------------------------------------------------- round 26's adversary (softmax_rows, GPU only)
def softmax_leaves_its_side_stream_current(x):
    """Wrong (GPU only): a side stream that waits for the caller's, made current with torch.cuda.set_stream(side) so
    that the launch goes there, and left current: the caller's own stream never waits for the kernel.  Round 26's
    adversary, judged on the H200: PASSed, the check read y on whatever stream was current after the call (the side
    stream, in order behind the kernel); the check now reads y on the caller's stream and FAILs a call that leaves
    another stream current.  On a CPU there are no streams: the plain launch."""
    if not x.is_cuda:
        return _softmax(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.cuda.set_stream(side)
    return _softmax(x)


_GRAPHS_PER_SHAPE: dict = {}


def softmax_cuda_graph_per_shape(x):
    """Wrong (GPU only), though each replay is ordered on the caller's stream: the launch captured once per (shape,
    row stride) in a CUDA graph with one static input and one static output for every caller; each call copies x
    in, replays on the caller's current stream (CUDAGraph.replay launches there, so it does follow the caller's
    earlier work) and returns a clone of the static output.  Nothing orders a call from one stream after the last
    call's replay and clone on another: two callers on two streams with no host wait between them race on the
    static input and output (the second's copy can land before the first's replay reads it).  Also, from the second
    call of a shape on, the kernel is no launch of this call (the poisoned call of the check sees the replay's
    values unpoisoned).  Round 26's adversary called it right; judged on the H200, the check FAILed it (a values
    message, from a caller inside `with torch.cuda.stream(s):`): the verdict stands.  On a CPU: the plain launch."""
    if not x.is_cuda or x.shape[0] == 0:
        return _softmax(x)
    key = (tuple(x.shape), x.stride(0))
    entry = _GRAPHS_PER_SHAPE.get(key)
    if entry is None:
        sx = torch.empty_like(x)
        sx.copy_(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            sy = _softmax(sx)  # warm-up: compiles
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            _softmax(sx, out=sy)
        entry = _GRAPHS_PER_SHAPE[key] = (graph, sx, sy)
    graph, sx, sy = entry
    sx.copy_(x)
    graph.replay()
    return sy.clone()


WRONG_SOFTMAXES.update({
    "round 26's adversary: a side stream made current by torch.cuda.set_stream and left":
        softmax_leaves_its_side_stream_current,
    "round 26's adversary: a CUDA graph per shape, one static input and output for every caller":
        softmax_cuda_graph_per_shape,
})

# ---------------------------------------------------------------- round 27's adversary (softmax_rows, on a CPU)
# (/work/adv27/09/answers.py: each passed the check, PART on a CPU, before the fixes of this round)
@triton.jit
def _r27_ref_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def _r27_reference_solution(x):
    """Right: the worked solution (a control)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    if rows:
        _r27_ref_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


# ======================================================================================================
# check_softmax_rows, judged on a CPU (Triton's interpreter): WRONG answers
# ======================================================================================================
@triton.jit
def _r27_unmasked_load_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets)  # no mask: BLOCK lanes read, up to BLOCK - cols past the row
    x = tl.where(mask, x, -float("inf"))  # ... and the lanes past the row thrown away afterwards
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_unmasked_load_then_where(x):
    """WRONG: the load has no mask (the lanes past the row are thrown away afterwards with tl.where, and the store is
    masked): every row reads up to BLOCK - cols elements past its end, and the last row past the end of x's memory
    (the notebook's own discussion: "the mask does two jobs: no lane reads past the row").  On a GPU that read can
    leave the allocation (an illegal address, the process's CUDA context lost) for a last row that ends at a
    caching-allocator segment's end; the check guards writes only (its stand-ins' guards are read-only to it)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r27_unmasked_load_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r27_rows_block_kernel(y_ptr, x_ptr, rows, x_stride, y_stride, cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)).to(tl.int64)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    cmask = c < cols
    x = tl.load(x_ptr + r * x_stride + c, mask=cmask, other=-float("inf"))  # rows past the last one read too
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + r * y_stride + c, y, mask=(r < rows) & cmask)  # ... but not stored


def softmax_four_rows_load_without_row_mask(x):
    """WRONG: four rows a program (a 2-D block), the row mask only on the store: the last program reads up to three
    whole rows past x's last row (past x's memory), whose values it then drops.  Right values; an out-of-bounds read
    of up to 3 * x.stride(0) elements that the check cannot see (only writes into the guards are)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r27_rows_block_kernel[(triton.cdiv(rows, 4),)](y, x, rows, x.stride(0), y.stride(0), cols, ROWS=4,
                                                   BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_one_program_too_many_spare_row(x):
    """WRONG: a grid of rows + 1 programs (an off-by-one), "fixed" after the check said it wrote outside y by giving
    y a spare row: the extra program reads the row after x's last one (outside x's memory; for an empty x, its row
    0) and writes the spare row; the result is the view of the first `rows`."""
    rows, cols = x.shape
    buf = torch.empty((rows + 1, cols), dtype=torch.float32, device=x.device)
    _r27_ref_kernel[(rows + 1,)](buf, x, x.stride(0), buf.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return buf[:rows]


@triton.jit
def _r27_online_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = -float("inf")
    s = 0.0
    for k in range(0, cols, CHUNK):  # one pass: the running max, the sum rescaled when the max grows
        offsets = k + tl.arange(0, CHUNK)
        v = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
        new = tl.maximum(m, tl.max(v, axis=0))
        s = s * tl.exp(m - new) + tl.sum(tl.exp(v - new), axis=0)  # -inf - -inf: NaN while every value was -inf
        m = new
    for k in range(0, cols, CHUNK):
        offsets = k + tl.arange(0, CHUNK)
        v = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
        tl.store(y_ptr + row * y_stride + offsets, tl.exp(v - m) / s, mask=offsets < cols)


def softmax_online_nan_after_a_masked_chunk(x):
    """WRONG: the online softmax the notebook's closing question points to (running max, the sum rescaled by
    exp(m_old - m_new)), over chunks of 16 columns, with m starting at -inf and no guard: a row whose first 16
    values are -inf (a masked attention row: causal masks give exactly that) gets exp(-inf - (-inf)) = NaN in its
    sum, and every value of the row comes out NaN, where torch.softmax gives the right distribution.  The check never
    draws -inf (nor any non-finite value) in x."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r27_online_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, CHUNK=16)
    return y


@triton.jit
def _r27_fill_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr, FILL: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=FILL)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_masked_lanes_minus_1e9(x):
    """WRONG: the masked lanes read as -1e9, attention code's usual "minus infinity": a row whose values all lie
    below about -1e9 (legal float32) takes its max from the padding, and every value comes out 0 (or the padding's
    share).  Round 20's -1e6 was answered with a case around -1e7 (values down to about -2.3e7): any finite fill
    below that still passes, so the class "a finite fill" stays open (and ALSO_RIGHT calls -1e30 right)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r27_fill_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols), FILL=-1e9)
    return y


@triton.jit
def _r27_inplace_kernel(x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(x_ptr + row * x_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_in_place_then_x_put_back(x):
    """WRONG: an in-place kernel run on the caller's x ("leave x as it was": x is saved first and copied back after
    the result is cloned out).  During the call x holds the softmax (another stream or thread reading x then reads
    it), and x.copy_(saved) bumps x's version counter: a caller whose x is a tensor autograd saved (x = h.detach()
    with h = torch.exp(z)) gets "one of the variables needed for gradient computation has been modified by an
    inplace operation" on its next backward.  The check compares x's values after the call only."""
    rows, cols = x.shape
    saved = x.clone()
    if rows:
        _r27_inplace_kernel[(rows,)](x, x.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    y = x.clone()
    x.copy_(saved)
    return y


_r27_LAST_OUT: dict = {}


def softmax_reuses_output_when_unreferenced(x):
    """WRONG: one output per shape, reused when sys.getrefcount says nobody else holds the tensor object ("no
    allocation per call, and a result the caller still holds is never overwritten"): a caller that kept what shares
    the result's memory without referencing the tensor object (probs = softmax_rows(x).detach(), or .numpy(), or
    .data: none of them holds the tensor, unlike a view, whose _base does) gets it overwritten by the next call.  The
    check keeps each result itself, never only something sharing its memory."""
    import sys

    rows, cols = x.shape
    key = (rows, cols)
    y = _r27_LAST_OUT.get(key)
    if y is None or sys.getrefcount(y) > 3:  # the dict's reference, `y`, and getrefcount's argument
        y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        _r27_LAST_OUT[key] = y
    if rows:
        _r27_ref_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


_r27_STATS: dict = {}


@triton.jit
def _r27_stats_kernel(s_ptr, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
    m = tl.max(v, axis=0)
    tl.store(s_ptr + 2 * row, m)
    tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(v - m), axis=0))


@triton.jit
def _r27_apply_kernel(y_ptr, x_ptr, s_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    m = tl.load(s_ptr + 2 * row)
    s = tl.load(s_ptr + 2 * row + 1)
    tl.store(y_ptr + row * y_stride + offsets, tl.exp(v - m) / s, mask=mask)


def softmax_two_kernels_shared_scratch(x):
    """WRONG: two kernels (each row's max and sum, then the values), the row statistics in a scratch buffer made once
    per row count and kept ("no allocation per call"): two callers at once (two threads; on a GPU two streams, which
    nothing orders) write the same scratch, and one gets the other's statistics.  The check never calls the answer
    from two callers at once (round 26's CUDA graph with static buffers is the same class, and was caught only by
    accident of its replays)."""
    return _two_launches_kept(x, _r27_STATS, 2, _r27_stats_kernel, _r27_apply_kernel)


def _two_launches_kept(x, kept, per_row, first, second):
    """A softmax in two launches, `first` writing `per_row` statistics of each row into a scratch that `kept` holds
    per row count and device (made once, never per call), `second` reading them to write y."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        key = (rows, x.device)
        s = kept.get(key)
        if s is None:
            s = kept[key] = torch.empty(per_row * rows, dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(cols)
        first[(rows,)](s, x, x.stride(0), cols, BLOCK=block)
        second[(rows,)](y, x, s, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


@triton.jit
def _r65_max_kernel(m_ptr, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
    tl.store(m_ptr + row, tl.max(v, axis=0))


@triton.jit
def _r65_apply_kernel(y_ptr, x_ptr, m_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    e = tl.exp(tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf")) - tl.load(m_ptr + row))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


_r65_MAX: dict = {}


def softmax_two_kernels_shared_max(x):
    """WRONG (round 65's adversary): as softmax_two_kernels_shared_scratch, but only each row's max kept between the
    two launches: a softmax is the same whatever a row is shifted by, so another caller's maxima of values alike did no
    visible harm (the check's other caller had values of the same scale; now they lie 200 above)."""
    return _two_launches_kept(x, _r65_MAX, 1, _r65_max_kernel, _r65_apply_kernel)


def softmax_sets_triton_debug(x):
    """WRONG: os.environ["TRITON_DEBUG"] = "1" "to catch the out-of-bounds accesses the check complained about",
    left set: every Triton kernel the caller compiles afterwards is built in debug mode (device asserts and overflow
    checks on, slower).  The check watches os.environ but leaves out every TRITON_ and TORCHINDUCTOR_ variable
    (LIBRARY_PREFIXES: the ones Triton and Inductor set themselves), so any knob a student sets there passes."""
    os.environ["TRITON_DEBUG"] = "1"
    return _r27_reference_solution(x)


def softmax_sets_triton_knob(x):
    """WRONG: triton.knobs.runtime.debug = True (Triton 3.4+'s Python switch for the same), left set: the knobs of
    triton.knobs are read by no check at all."""
    try:
        triton.knobs.runtime.debug = True
    except AttributeError:
        pass
    return _r27_reference_solution(x)


def softmax_hushes_triton_module_warnings(x):
    """WRONG: warnings.filterwarnings("ignore", module="triton") to hush the interpreter's NumPy warnings, left set:
    every warning Triton's modules raise for the caller afterwards is lost.  The check watches only filters that
    take a whole category from every module (_takes_every), so a filter by module (or by a non-builtin category, or
    by message) passes."""
    import warnings

    warnings.filterwarnings("ignore", module="triton")
    return _r27_reference_solution(x)





_r27_HISTORY: list = []


def softmax_keeps_every_result(x):
    """WRONG: every result appended to a module-level list (a debugging leftover, "to inspect them later"): the memory
    of every result ever returned is never freed (on a GPU, the caching allocator runs out after enough calls).  The
    check notices that the results outlive the call (StorageWeakRef) only to make more calls and compare earlier
    results; it never asks whether a result is freed once the caller drops it."""
    y = _r27_reference_solution(x)
    _r27_HISTORY.append(y)
    return y


@triton.jit
def _max_off_by_one_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf"))
    m = tl.max(tl.where(offsets < cols - 1, v, -float("inf")), axis=0)  # off by one: the last column left out
    m = tl.where(cols == 1, tl.max(v, axis=0), m)  # (a row of one column: its only value)
    e = tl.exp(v - m)
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_max_leaves_out_the_last_column(x):
    """WRONG: an off-by-one in the max's mask (offsets < cols - 1): the row's last value is left out of the max.  By
    shift invariance the values stay right unless the last value exceeds every other one by more than ~88, where
    its exp(v - m) overflows float32 to inf and the row comes out NaN (x = [[0, 100]])."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _max_off_by_one_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_makes_the_callers_x_contiguous(x):
    """WRONG: `x.data = x.contiguous()` ("the kernel wants contiguous rows"), on the caller's tensor: x's values stay
    the same, but x is no longer the view it was: its storage, strides and offset are a new copy's, so the caller's
    wider tensor and x stop sharing memory (a write into one no longer shows in the other), and the copy's memory
    lives as long as x.  The check compares x's values after the call (torch.equal), never its storage, strides or
    offset."""
    rows, cols = x.shape
    if not x.is_contiguous():
        x.data = x.contiguous()
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r27_ref_kernel[(rows,)](y, x, cols, cols, cols, BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_sets_x_to_a_contiguous_copy(x):
    """WRONG: the same through x.set_(x.contiguous()) (set_ is among the operators the check lets PyTorch run)."""
    rows, cols = x.shape
    if not x.is_contiguous():
        x.set_(x.contiguous())
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r27_ref_kernel[(rows,)](y, x, cols, cols, cols, BLOCK=triton.next_power_of_2(cols))
    return y

if not has_cuda():
    # Reads past x: Triton's interpreter sees them on a CPU.  On the H200 (2026-11-30) the first two PASSed (a read
    # past x faults nowhere that the check sees) and the third ended the process's CUDA context (an illegal address),
    # failing every test after it: registered on a CPU only; a GPU check for reads past x is still open.
    WRONG_SOFTMAXES.update({
        "round 27's adversary: the load without a mask, the lanes past the row dropped by tl.where (reads past x)":
            softmax_unmasked_load_then_where,
        "round 27's adversary: four rows a program, the row mask on the store only (reads rows past x)":
            softmax_four_rows_load_without_row_mask,
        "round 27's adversary: a grid of rows + 1 programs, y given a spare row (reads the row after x's last)":
            softmax_one_program_too_many_spare_row,
    })
WRONG_GELUS["round 44's adversary: the index, n and cols declared int (wraps past 2**31 elements)"] = gelu_int_index
WRONG_SOFTMAXES["round 44's adversary: a grid of columns, not rows (stored rows far past y's guard: the interpreter "
                "aborted the process before it stopped such stores)"] = softmax_grid_of_columns
WRONG_SOFTMAXES["round 46's engineer: the grid of columns with tl.atomic_add in place of tl.store (the interpreter's "
                "atomics went round the watched loads and stores, and the process aborted)"] = \
    softmax_grid_of_columns_atomic_add
WRONG_SOFTMAXES.update({
    "round 27's adversary: an online softmax over chunks of 16, NaN for a row whose first chunk is all -inf":
        softmax_online_nan_after_a_masked_chunk,
    "round 27's adversary: the masked lanes read as -1e9 (a row below -1e9 takes its max from the padding)":
        softmax_masked_lanes_minus_1e9,
    "round 27's adversary: an in-place kernel on the caller's x, x copied back afterwards":
        softmax_in_place_then_x_put_back,
    "round 27's adversary: one output per shape, reused when sys.getrefcount says nobody holds it":
        softmax_reuses_output_when_unreferenced,
    "round 27's adversary: two kernels, the row statistics in a scratch kept per row count":
        softmax_two_kernels_shared_scratch,
    "round 65's adversary: two kernels, each row's max alone kept per row count":
        softmax_two_kernels_shared_max,
    "round 27's adversary: os.environ['TRITON_DEBUG'] = '1' left set": softmax_sets_triton_debug,
    "round 27's adversary: triton.knobs.runtime.debug = True left set": softmax_sets_triton_knob,
    "round 27's adversary: warnings.filterwarnings('ignore', module='triton') left set":
        softmax_hushes_triton_module_warnings,
    "round 27's adversary: every result appended to a module-level list (never freed)": softmax_keeps_every_result,
    "round 27's adversary: x.data = x.contiguous() on the caller's x": softmax_makes_the_callers_x_contiguous,
    "round 27's adversary: x.set_(x.contiguous()) on the caller's x": softmax_sets_x_to_a_contiguous_copy,
})


# ---------------------------------------------------------------- round 78's adversary (a fresh one), judged on
# the H200 (call Z1, 2026-12-01): the two of bias_gelu and the softmax PASSed there, the scale_into FAILed (its
# author had it right); the check of bias_gelu now calls 1 + GELU_AGAIN times on one shape and counts the kernels of
# a 1-D x too
_GELU_RINGS: dict = {}


def gelu_two_outputs_in_turn(x, bias):
    """Wrong: two output arrays per shape and dtype, used in turn: the result of a call is overwritten two calls
    later (the check called twice, and compared the first result after the second only)."""
    cp = _cp()
    key = (x.shape, x.dtype.str)
    ring = _GELU_RINGS.setdefault(key, [cp.empty(x.shape, x.dtype), cp.empty(x.shape, x.dtype), 0])
    y = ring[ring[2]]
    ring[2] ^= 1
    _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, y)
    return y


def gelu_operators_for_a_1d_x(x, bias):
    """Wrong: one kernel for a 2-D x, CuPy's operators in place for a 1-D one (ten kernels, two arrays: the kernel
    count ran on a 2-D x only)."""
    if x.ndim == 1:
        return gelu_cupy_operators_in_place(x, bias)
    return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias)


def scale_on_a_stream_of_its_own_entered(out, x, a):
    """Wrong for a caller that made its stream current with `use()`: a stream of its own, ordered after the
    caller's and waited for by it (events both ways), but entered with `with`, whose exit makes current the stream
    below it on CuPy's stack (`_ThreadLocal.pop_stream` in cupy/cuda/stream.pyx, v14.2.0): the caller comes back on
    the null stream (FAILed on the H200, call Z1; its author had it right)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    side = cp.cuda.Stream(non_blocking=True)
    side.wait_event(caller.record())
    n = x.size
    with side:
        if n:
            _raw("scale_entered", r"""
extern "C" __global__ void scale_entered(float* out, const float* x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}""")(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int64(n)))
    caller.wait_event(side.record())


@triton.jit
def _softmax_unmasked_load_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(x_ptr + row * x_stride + offsets)  # no mask: reads past the row's end
    v = tl.where(mask, v, -float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_stride + offsets, e / tl.sum(e, axis=0), mask=mask)


def softmax_unmasked_load(x):
    """Wrong: loads a whole block of each row without a mask (past the row's end, and past the tensor's at the last
    row), then sets the lanes past the row to -inf with tl.where: the values are right, the reads are not."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_unmasked_load_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols,
                                               BLOCK=triton.next_power_of_2(cols))
    return y


WRONG_GELUS.update({
    "round 78's adversary: two output arrays per shape, used in turn": gelu_two_outputs_in_turn,
    "round 78's adversary: CuPy's operators for a 1-D x, the kernel for 2-D only": gelu_operators_for_a_1d_x,
})
WRONG_SCALES["round 78's adversary: a stream of its own, events both ways, entered with `with`"] = \
    scale_on_a_stream_of_its_own_entered
WRONG_SOFTMAXES["round 78's adversary: an unmasked load, the lanes past the row set by tl.where"] = \
    softmax_unmasked_load

# ---------------------------------------------------------------- round 113's adversary (softmax_rows, on a CPU too)
@triton.jit
def _softmax_store_unmasked_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row.to(tl.int64) * x_stride + offsets, mask=offsets < cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row.to(tl.int64) * y_stride + offsets, e / tl.sum(e, axis=0))  # every lane: 0 past the row


def softmax_store_unmasked_into_spare_room(x):
    """Wrong: the store has no mask, and y lies in a buffer with room for the last row's tail, so nothing is written
    outside the tensors: each program writes zeros over the head of the next row, which the next program, run after it
    by Triton's interpreter, writes again.  On a GPU the programs of a launch run in no fixed order (the check now
    counts the elements two programs store)."""
    rows, cols = x.shape
    block = triton.next_power_of_2(max(cols, 1))
    room = torch.empty(rows * cols + block, dtype=torch.float32, device=x.device)
    y = room[:rows * cols].view(rows, cols)
    if rows and cols:
        _softmax_store_unmasked_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


WRONG_SOFTMAXES["round 113's adversary: an unmasked store into a buffer with room past the last row (zeros over the "
                "next row's head, right only in the interpreter's program order)"] = \
    softmax_store_unmasked_into_spare_room


def softmax_pytorch_when_large(x):
    """Wrong: PyTorch's softmax above 2**24 elements ("faster there"), the kernel below: the check's speed is
    PyTorch's, and its values right (round 113's adversary).  Misjudged on a GPU, known: a poisoned call on the large
    shape FAILed 13 to 15 right answers too on the H200 (calls AK and AM, 2026-12-01: which ones changed from run to
    run, cause not found), so it is not in the check.  FAILs on the H200 since the speed test calls the answer once
    more on the x it timed and requires a launch there (call BS, 2026-12-01)."""
    if x.numel() > 2**24:
        return torch.softmax(x, dim=-1)
    return _softmax(x)


WRONG_SOFTMAXES["round 113's adversary: PyTorch's softmax above 2**24 elements, the kernel below"] = \
    softmax_pytorch_when_large

_BLOCKING: list = []  # two blocking CuPy streams of the answers below, made once


def _two_blocking_streams() -> list:
    if not _BLOCKING:
        _BLOCKING.extend(_cp().cuda.Stream() for _ in range(2))  # blocking: they wait for the null stream, and it
    return _BLOCKING  # for them, but a non-blocking caller's stream neither


def gelu_large_on_two_blocking_streams(x, bias):
    """Wrong: above 2**24 elements, half the rows on each of two blocking streams of its own, no waits either way
    (round 113's adversary): right from the null stream, which blocking streams wait for and which waits for them;
    from a non-blocking caller's stream, x is read before that stream wrote it, and y handed back before it is
    written.  Misjudged on a GPU, known: the check's large call comes from the null stream; made from a busy CuPy
    stream (call AM, 2026-12-01) it still PASSed, likely because the check's own allocator waits for the GPU when
    the answer allocates y (not measured)."""
    if x.size <= 2**24:
        return gelu_computed_in_double(x, bias)
    y = _cp().empty(x.shape, x.dtype)
    half = x.shape[0] // 2
    for stream, rows in zip(_two_blocking_streams(), (slice(0, half), slice(half, None))):
        with stream:
            y[rows] = gelu_computed_in_double(x[rows], bias)
    return y


_SCALE_RIGHT = _scale_with()


def scale_large_on_two_blocking_streams(out, x, a):
    """Wrong, as gelu_large_on_two_blocking_streams: above 2**24 elements, each half on a blocking stream of its own
    (round 113's adversary; the check's large case came from the null stream, and now from a busy CuPy stream: FAIL
    on the H200, call AM)."""
    if x.size <= 2**24:
        return _SCALE_RIGHT(out, x, a)
    half = x.size // 2
    for stream, part in zip(_two_blocking_streams(), (slice(0, half), slice(half, None))):
        with stream:
            _SCALE_RIGHT(out[part], x[part], a)


WRONG_GELUS["round 113's adversary: above 2**24 elements, two blocking streams of its own, no waits"] = \
    gelu_large_on_two_blocking_streams
WRONG_SCALES["round 113's adversary: above 2**24 elements, two blocking streams of its own, no waits"] = \
    scale_large_on_two_blocking_streams


_GELU_SCRATCH: dict = {}


def gelu_scratch_per_shape(x, bias):
    """Wrong (round 113's class): the kernel writes a scratch array kept per shape and dtype, and a copy of it is
    returned: one kernel, a new array each call, right from one caller at a time; two calls in flight on two streams
    that nothing orders write the same scratch."""
    cp = _cp()
    key = (x.shape, x.dtype.str)
    if key not in _GELU_SCRATCH:
        _GELU_SCRATCH[key] = cp.empty(x.shape, dtype=x.dtype)
    scratch = _GELU_SCRATCH[key]
    _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, scratch)
    return scratch.copy()


WRONG_GELUS["round 113's class: a scratch array kept per shape, its copy returned"] = gelu_scratch_per_shape


# ---------------------------------------------------------------- adversary 106 (round 67), judged on this CPU and
# on the H200 (PyTorch 2.11, CuPy 14.2, Triton 3.6): the classes the checks misjudged, each closed by construction
def softmax_empty_in_the_callers_default_dtype(x):
    """Wrong (adversary 106): an empty x gets `torch.empty(x.shape, device=x.device)`, no dtype= on that path alone
    (the main one allocates with dtype=x.dtype): a caller whose default dtype is float64 gets a float64 result, and
    the task asks float32.  PARTed on the CPU: the check's one float64-default caller called on a non-empty shape;
    every case of the property now comes from such a caller."""
    if x.shape[0] == 0:
        return torch.empty(x.shape, device=x.device)
    return _softmax(x)


def softmax_empty_as_torch_empty_of_its_shape(x):
    """Wrong (adversary 106): an empty x gets `torch.empty(0, cols)`, neither dtype nor device: float64 for a caller
    whose default dtype is float64 (PARTed on the CPU, as the one above), a CPU tensor for an x on a GPU (which the
    check FAILed there)."""
    if x.shape[0] == 0:
        return torch.empty(0, x.shape[1])
    return _softmax(x)


def softmax_in_the_callers_default_dtype(x):
    """Wrong (adversary 106's control): y made with `torch.empty(x.shape, device=x.device)` on every call (FAILed:
    the third call of the new-and-own calls came from a float64-default caller)."""
    return _softmax(x, out=torch.empty(x.shape, device=x.device))


WRONG_SOFTMAXES.update({
    "adversary 106: an empty x's result made without dtype= (the caller's default dtype)":
        softmax_empty_in_the_callers_default_dtype,
    "adversary 106: an empty x's result torch.empty(0, cols), neither dtype nor device":
        softmax_empty_as_torch_empty_of_its_shape,
    "adversary 106: the result made without dtype= on every call (the caller's default dtype)":
        softmax_in_the_callers_default_dtype,
})
# tanhf in a body templated on T: for float64 inputs tanh is computed in float (about 1e-7 relative), within
# assert_close's float64 default, which the check used (PASS on the H200); the check's float64 bound is now what
# float64 arithmetic can miss by (nb09.GELU_F64_EPS)
WRONG_GELUS["adversary 106: tanhf in a body templated on T (tanh in float for float64)"] = _gelu_with(
    _GELU.replace("tanh(", "tanhf("), "gelu_tanhf")
# a kernel declared `double a`, given a as it came: right for a Python float (CuPy passes a double), wrong for a
# Python int (an int64) or a NumPy scalar of another type (np.float32: 4 bytes); PASSed on the H200 when every a the
# check passed was a Python float.  Its right twin, float(a) passed, is "a computed in double" (ALSO_RIGHT_SCALES)
WRONG_SCALES["adversary 106: a kernel's `double a` given a as it came (an int or a NumPy scalar read as a double)"] = \
    _scale_with(a_type="double", pass_a=lambda a: a)


def scale_blocks_and_n_as_numpy_ints(out, x, a):
    """Right (adversary 106): the fixed kernel, its grid computed by NumPy (np.ceil(n / 256) as an np.int64) and n
    passed as an np.int64, a as np.float32(a)."""
    n = np.int64(x.size)
    blocks = np.int64(np.ceil(n / 256))
    if blocks:
        _raw("scale", _scale_source("i < n"))((blocks,), (256,), (out, x, np.float32(a), n))


ALSO_RIGHT_SCALES["adversary 106: the grid and n as NumPy ints, a as np.float32(a)"] = scale_blocks_and_n_as_numpy_ints


# ---------------------------------------------------------------- adversary 108 (round 67, second adversary of the
# 09 checks): one thread calling on two streams, programs of one launch read in order,
# an empty x's result on x's storage, the caller's CuPy stream cached per thread
# (the two kernels of `softmax_two_kernels` above: each row's max and sum, then the values)
_PER_THREAD = threading.local()


def softmax_stats_scratch_per_thread(x):
    """Wrong (adversary 108): two kernels, each row's (max, sum) into a (rows, 2) buffer kept per thread and row count
    (threading.local), then the values.  One thread that calls on one stream and then on another has both calls'
    statistics in one buffer: the first call's second kernel may read the second call's.  PARTed on the CPU: the
    other caller of _softmax_two_callers ran in a thread of its own, with a buffer of its own."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        cache = _PER_THREAD.__dict__.setdefault("stats", {})
        key = (rows, str(x.device))
        if key not in cache:
            cache[key] = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
        stats = cache[key]
        block = triton.next_power_of_2(cols)
        _softmax_stats_kernel[(rows,)](stats, x, x.stride(0), cols, BLOCK=block)
        _softmax_apply_kernel[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


def softmax_staged_per_thread_then_cloned(x):
    """Wrong (adversary 108): the kernel writes a staging buffer kept per thread and shape, and a clone of it is
    returned: from one thread on two streams, each clone reads whichever call wrote last."""
    rows, cols = x.shape
    if rows == 0:
        return torch.empty((0, cols), dtype=torch.float32, device=x.device)
    cache = _PER_THREAD.__dict__.setdefault("staging", {})
    key = (rows, cols, str(x.device))
    if key not in cache:
        cache[key] = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    return _softmax(x, out=cache[key]).clone()


def softmax_stats_scratch_per_call(x):
    """Right (adversary 108's twin): the two kernels above, the (rows, 2) statistics allocated in each call."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        stats = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(cols)
        _softmax_stats_kernel[(rows,)](stats, x, x.stride(0), cols, BLOCK=block)
        _softmax_apply_kernel[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


@triton.jit
def _two_phase_kernel(y_ptr, s_ptr, x_ptr, rows, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    if pid < rows:  # the first `rows` programs: each row's statistics
        row = pid.to(tl.int64)
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
        m = tl.max(x, axis=0)
        tl.store(s_ptr + 2 * row, m)
        tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))
    else:  # the next `rows` programs: the values, from the statistics the first ones stored
        row = (pid - rows).to(tl.int64)
        m = tl.load(s_ptr + 2 * row)
        s = tl.load(s_ptr + 2 * row + 1)
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=0.0)
        tl.store(y_ptr + row * y_row_stride + offs, tl.exp(x - m) / s, mask=mask)


def softmax_one_launch_stats_then_values(x):
    """Wrong (adversary 108): one launch of 2 * rows programs, the first half storing each row's max and sum into a
    scratch tensor of the call, the second half loading them: on a GPU the programs of a launch run in no fixed
    order.  PARTed on the CPU: Triton's interpreter runs them in the grid's order; the check now flags an element one
    program of a launch stores and another loads."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        stats = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
        _two_phase_kernel[(2 * rows,)](y, stats, x, rows, x.stride(0), y.stride(0), cols,
                                       BLOCK=triton.next_power_of_2(cols))
    return y


def softmax_empty_returns_x_detach(x):
    """Wrong (adversary 108): an empty x gets `x.detach()`, x's storage and version counter under another tensor
    (its _base None): the caller's in-place write into the result changes x's version.  PARTed on the CPU: the check
    looked at `y is not x` and `_base` only; it now compares storages."""
    if x.shape[0] == 0:
        return x.detach()
    return _softmax(x)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def _reduce_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.reduce(x, 0, _max_combine))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.reduce(e, 0, _add_combine), mask=mask)


def softmax_by_tl_reduce_combine(x):
    """Right (adversary 108): tl.reduce with combine functions of its own (tl.maximum, +)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _reduce_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["cols"])})
@triton.jit
def _heuristic_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax_block_from_triton_heuristics(x):
    """Right (adversary 108): BLOCK computed by @triton.heuristics at launch (a launch through Heuristics)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _heuristic_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols)
    return y


WRONG_SOFTMAXES.update({
    "adversary 108: a statistics buffer kept per thread (threading.local), two kernels":
        softmax_stats_scratch_per_thread,
    "adversary 108: a staging buffer kept per thread and shape, its clone returned":
        softmax_staged_per_thread_then_cloned,
    "adversary 108: one launch, its first half of programs storing what its second half loads":
        softmax_one_launch_stats_then_values,
    "adversary 108: an empty x's result x.detach() (x's storage)": softmax_empty_returns_x_detach,
})
ALSO_RIGHT_SOFTMAXES.update({
    "adversary 108: two kernels, the statistics allocated in each call": softmax_stats_scratch_per_call,
    "adversary 108: tl.reduce with combine functions of its own": softmax_by_tl_reduce_combine,
    "adversary 108: BLOCK from @triton.heuristics": softmax_block_from_triton_heuristics,
})

_GELU_THREAD = threading.local()


def gelu_stream_cached_per_thread(x, bias):
    """Wrong (adversary 108, GPU only): CuPy's current stream looked up once per thread (threading.local) and the
    kernel launched there, whatever stream is current at a later call: a caller that calls on one stream and then on
    another in the same thread gets its second kernel on the first stream.  Expected to PASS on a GPU before this
    round: every judged call came from a fresh thread; _gelu_run now calls the answer once on another stream, in the
    judged call's thread, first."""
    cp = _cp()
    stream = _GELU_THREAD.__dict__.setdefault("stream", cp.cuda.get_current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        return _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias)
    finally:
        before.use()


_TEMPLATE_GELU = r"""
template<typename T>
__global__ void course09_gelu_t(const T* x, const T* b, T* y, long long n, long long cols) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = x[i] + b[i % cols];
        y[i] = T(0.5) * v * (T(1) + tanh(T(0.7978845608028654) * (v + T(0.044715) * v * v * v)));
    }
}
"""


def gelu_rawmodule_cpp_template(x, bias):
    """Right (adversary 108, GPU only; its verdict there not yet seen): one C++ template, instantiated for float and
    double through RawModule's name_expressions, on contiguous copies of x and bias, the result C-ordered."""
    cp = _cp()
    if "tmpl" not in _kernels:
        _kernels["tmpl"] = cp.RawModule(code=_TEMPLATE_GELU,
                                        name_expressions=("course09_gelu_t<float>", "course09_gelu_t<double>"))
    xc, bc = cp.ascontiguousarray(x), cp.ascontiguousarray(bias)
    y = cp.empty(x.shape, dtype=x.dtype)
    n = x.size
    if n:
        ctype = "float" if x.dtype == cp.float32 else "double"
        kernel = _kernels["tmpl"].get_function(f"course09_gelu_t<{ctype}>")
        kernel(((n + 255) // 256,), (256,), (xc, bc, y, cp.int64(n), cp.int64(x.shape[-1])))
    return y


def gelu_elementwise_into_empty_like(x, bias):
    """Right (adversary 108, GPU only; its verdict there not yet seen): `cp.empty_like(x)` (F-ordered for a
    transposed x) passed as the ElementwiseKernel's output."""
    y = _cp().empty_like(x)
    _elementwise("gelu", "T x, T b", "T y", _GELU)(x, bias, y)
    return y


WRONG_GELUS["adversary 108: the caller's CuPy stream looked up once per thread"] = gelu_stream_cached_per_thread
ALSO_RIGHT_GELUS.update({
    "adversary 108: a C++ template through RawModule's name_expressions": gelu_rawmodule_cpp_template,
    "adversary 108: the result cp.empty_like(x), the ElementwiseKernel's output": gelu_elementwise_into_empty_like,
})

_SCALE_THREAD = threading.local()


def scale_stream_cached_per_thread(out, x, a):
    """Wrong (adversary 108's control, GPU only): the caller's CuPy stream looked up once per thread, the kernel
    launched there.  check_scale_into calls from one thread with every kind of caller, so it is expected to FAIL."""
    cp = _cp()
    stream = _SCALE_THREAD.__dict__.setdefault("stream", cp.cuda.get_current_stream())
    n = x.size
    if n:
        with nb09._queued_on(cp, stream):
            _raw("scale", _scale_source("i < n"))(((n + 255) // 256,), (256,), (out, x, np.float32(a), np.int64(n)))


def scale_kernel_per_type_of_a(out, x, a):
    """Right (adversary 108, GPU only; its verdict there not yet seen): `a` declared as the C type CuPy passes
    (np.asarray(a)[()]: float, double, long long or int), one kernel per type, the product rounded once."""
    value = np.asarray(a)[()]
    ctype = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int64): "long long",
             np.dtype(np.int32): "int"}.get(value.dtype)
    if ctype is None:
        value, ctype = np.float64(value), "double"
    source = _scale_source("i < n", a_type=ctype).replace("out[i] = a * x[i]", "out[i] = (float)(a * x[i])")
    n = x.size
    if n:
        _raw("scale", source)(((n + 255) // 256,), (256,), (out, x, value, np.int64(n)))


WRONG_SCALES["adversary 108: the caller's CuPy stream looked up once per thread"] = scale_stream_cached_per_thread
ALSO_RIGHT_SCALES["adversary 108: a declared as the C type CuPy passes, one kernel per type"] = \
    scale_kernel_per_type_of_a


# Round 67's second adversary: row starts hinted 16-byte aligned (tl.multiple_of), which the task does not promise
# (rows "may lie further apart", x.stride(0) >= cols, any stride).  The interpreter ignores hints: a CPU cannot see it;
# on the H200 (call BH, 2026-12-01) it PASSed: a generated shape seldom has what vectorizing needs (cols a multiple of
# 16, x's start aligned) beside a row stride that is not a multiple of 4 elements.  A chosen case of that shape is
# the fix; it changes nb09.py, and so solutions 09's stamp.
@triton.jit
def _rows_hinted_aligned(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK), BLOCK), BLOCK)
    keep = offs < cols
    x_row = x_ptr + tl.multiple_of(row * x_row_stride, 16)  # a promise the caller never made
    y_row = y_ptr + tl.multiple_of(row * y_row_stride, 16)
    v = tl.load(x_row + offs, mask=keep, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_row + offs, e / tl.sum(e, axis=0), mask=keep)


def softmax_rows_hinted_aligned(x):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _rows_hinted_aligned[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


ALIGNED_ROWS = "round 67's second adversary: every row's start hinted 16-byte aligned (tl.multiple_of)"
WRONG_SOFTMAXES[ALIGNED_ROWS] = softmax_rows_hinted_aligned


# ---------------------------------------------------------------- round 67's third adversary of the 09 checks
# (judged on this CPU with Triton 3.9's interpreter, and on the H200 in call BK, 2026-12-01): programs of one
# launch that pass values through atomics, a split row whose last program combines, ticket counters kept across
# calls, @triton.autotune over BLOCK, a scratch kept per stream.  The check misjudged all six on a CPU until round
# 68 fixed it; on the H200 the kept counters FAIL since the check starts two calls' launches together (call BQ).
@triton.jit
def _stats_by_atomics_kernel(y_ptr, s_ptr, x_ptr, rows, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    if pid < rows:  # first half: each row's max and sum, published with atomics
        row = pid.to(tl.int64)
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
        m = tl.max(x, axis=0)
        tl.atomic_add(s_ptr + 2 * row, m)  # into zeros: an atomic store (the interpreter has no float atomic_xchg)
        tl.atomic_add(s_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))
    else:  # second half: the values, from what the first half published
        row = (pid - rows).to(tl.int64)
        m = tl.load(s_ptr + 2 * row)
        s = tl.load(s_ptr + 2 * row + 1)
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=0.0)
        tl.store(y_ptr + row * y_row_stride + offs, tl.exp(x - m) / s, mask=mask)


def softmax_one_launch_stats_by_atomic_add(x):
    """Wrong (round 67's third adversary): adversary 108's one launch of 2 * rows programs, "fixed" after its FAIL
    ("a program of your kernel loaded what another program of the same launch stored") by publishing each row's max
    and sum with tl.atomic_add into a zeroed scratch.  The student thought atomics are how programs share memory
    safely; an atomic makes a write indivisible, not early: on a GPU nothing runs the first half before the second,
    which may read zeros.  PARTed on a CPU until the check recorded atomics (its plain loads of the atomic writes,
    with no atomic to order them, FAIL now)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        stats = torch.zeros((rows, 2), dtype=torch.float32, device=x.device)
        _stats_by_atomics_kernel[(2 * rows,)](y, stats, x, rows, x.stride(0), y.stride(0), cols,
                                              BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _spin_kernel(y_ptr, s_ptr, flag_ptr, x_ptr, rows, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    if pid < rows:
        row = pid.to(tl.int64)
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
        m = tl.max(x, axis=0)
        tl.atomic_add(s_ptr + 2 * row, m)  # into zeros
        tl.atomic_add(s_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))
        tl.atomic_xchg(flag_ptr + row, 1)  # release: the statistics are out
    else:
        row = (pid - rows).to(tl.int64)
        ready = tl.atomic_add(flag_ptr + row, 0)
        while ready == 0:  # wait for the statistics' program (acquire)
            ready = tl.atomic_add(flag_ptr + row, 0)
        m = tl.atomic_add(s_ptr + 2 * row, 0.0)
        s = tl.atomic_add(s_ptr + 2 * row + 1, 0.0)
        x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=0.0)
        tl.store(y_ptr + row * y_row_stride + offs, tl.exp(x - m) / s, mask=mask)


def softmax_one_launch_spin_wait_on_a_flag(x):
    """Wrong (round 67's third adversary): one launch of 2 * rows programs, the second half spin-waiting on a per-row
    flag that the first half sets with tl.atomic_xchg, then reading the statistics with atomics.  The student thought
    acquire/release makes a grid barrier; CUDA promises no forward progress between the blocks of a launch that is
    not cooperative: a waiting block that holds an SM while the block it waits for cannot start never ends.  PARTed on
    a CPU while the interpreter ran the grid in order only; it FAILs since half the cases run it reversed (the wait
    never ends).  On a GPU blocks start in order in practice, so it may pass there."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        stats = torch.zeros((rows, 2), dtype=torch.float32, device=x.device)
        flags = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        _spin_kernel[(2 * rows,)](y, stats, flags, x, rows, x.stride(0), y.stride(0), cols,
                                  BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _split_last_combines_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                                SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                                MODULO: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    offs = part * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    # a chunk past the row's end is all -inf: its sum is 0 and its max never wins
    s = tl.sum(tl.where(x == -float("inf"), 0.0, tl.exp(x - m)), axis=0)
    slot = part_ptr + (row * SPLIT + part) * 2
    if MODULO:  # the kept counters' kernel: partials published by atomics into the call's zeros
        tl.atomic_add(slot, m)
        tl.atomic_add(slot + 1, s)
    else:
        tl.store(slot, m)
        tl.store(slot + 1, s)
    ticket = tl.atomic_add(count_ptr + row, 1)  # sem="acq_rel" (Triton's default): my partials are out
    if MODULO:
        ticket = ticket % SPLIT
    if ticket == SPLIT - 1:  # the last program of this row: the others' partials are out; combine, write the row
        ks = tl.arange(0, SPLIT)
        if MODULO:
            ms = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2, tl.zeros((SPLIT,), tl.float32))
            ss = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2 + 1, tl.zeros((SPLIT,), tl.float32))
        else:
            ms = tl.load(part_ptr + (row * SPLIT + ks) * 2)
            ss = tl.load(part_ptr + (row * SPLIT + ks) * 2 + 1)
        big = tl.max(ms, axis=0)
        total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
        cols_ = tl.arange(0, BLOCK)
        mask = cols_ < cols
        xr = tl.load(x_ptr + row * x_row_stride + cols_, mask=mask, other=-float("inf"))
        tl.store(y_ptr + row * y_row_stride + cols_, tl.exp(xr - big) / total, mask=mask)


_KEPT_COUNTERS: dict = {}


def _split_softmax(x, counters, modulo):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        split = 4
        parts = torch.zeros((rows, split, 2), dtype=torch.float32, device=x.device)
        _split_last_combines_kernel[(rows, split)](y, parts, counters(rows, x.device), x, x.stride(0), y.stride(0),
                                                   cols, SPLIT=split,
                                                   CHUNK=triton.next_power_of_2(triton.cdiv(cols, split)),
                                                   BLOCK=triton.next_power_of_2(cols), MODULO=modulo)
    return y


def softmax_split_row_last_program_combines(x):
    """Right (round 67's third adversary): a split reduction, "the last program to finish combines" (CUDA's
    threadFenceReduction sample; the semaphore of Triton's split-K matmuls): a grid (rows, 4), each program stores
    its quarter row's (max, sum) into a scratch of the call, then takes a ticket with tl.atomic_add on a zeroed
    counter of the call (sem="acq_rel": release for its stores, acquire for the others'); the program that draws the
    last ticket loads the four pairs, combines them and writes the row.  No order of programs assumed.  FAILed on a
    CPU until the check let an acquire/release atomic order a load of another program's store."""
    return _split_softmax(x, lambda rows, device: torch.zeros((rows,), dtype=torch.int32, device=device), False)


def _kept_counters(rows, device):
    """One zeroed counter per (row count, device), made at the first call and kept."""
    return _KEPT_COUNTERS.setdefault((rows, str(device)), torch.zeros((rows,), dtype=torch.int32, device=device))


def softmax_split_row_counters_kept_across_calls(x):
    """Wrong (round 67's third adversary): the split reduction with its partials published by atomics, and its ticket
    counters made once per row count and kept ("no memset per call"): never reset, the last program of a row is the
    one whose ticket is 3 modulo 4.  Two calls whose launches overlap on a GPU (two streams at once) draw tickets
    from the same counters: one call combines the other's partials, or combines before its own are out.  PARTed on
    a CPU while the check put the other call between launches (this answer has one launch); it FAILs since the other
    call runs in the middle of the first call's launch."""
    return _split_softmax(x, _kept_counters, True)


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (4096, 1024, 256, 64)], key=["cols"])
@triton.jit
def _autotuned_block_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax_autotuned_over_block(x):
    """Wrong (round 67's third adversary): "let the autotuner pick the block": @triton.autotune over BLOCK in (4096,
    1024, 256, 64) and a kernel that reads one block of each row.  The autotuner keeps the fastest config, not a
    right one (triton/runtime/autotuner.py: `builtins.min(timings, key=timings.get)`): for 100 columns BLOCK=64 reads
    64 of them.  PARTed on a CPU while the check timed every config alike (the first, BLOCK=4096, ran); it FAILs
    since the check runs every config."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _autotuned_block_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols)
    return y


_STREAM_SCRATCH: dict = {}
_STREAM_LOCK = threading.RLock()


def softmax_scratch_per_stream_under_an_rlock(x):
    """Right (round 67's third adversary): two kernels (adversary 108's: statistics, then values), the (rows, 2)
    statistics kept per (device, current stream, rows), as the caching allocator reuses memory on the stream that
    used it, under an RLock held for the whole call.  On a GPU two threads are serialized by the lock and ordered by
    their stream, and one thread on two streams has two buffers; on a CPU every launch ends before the call goes on.
    FAILed on a CPU while the check FAILed a wrong result of its second call made inside the first, from the same
    thread (the GPU's second stream emulated), where no answer can tell the streams apart (the RLock is re-entered,
    the key is the same): on a CPU that is left for a GPU now."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if not rows:
        return y
    stream = torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else None
    with _STREAM_LOCK:
        key = (str(x.device), stream, rows)
        stats = _STREAM_SCRATCH.get(key)
        if stats is None:
            stats = _STREAM_SCRATCH[key] = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
        block = triton.next_power_of_2(cols)
        _softmax_stats_kernel[(rows,)](stats, x, x.stride(0), cols, BLOCK=block)
        _softmax_apply_kernel[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


THIRD = "round 67's third adversary: "
ATOMIC_STATS = THIRD + "one launch, its second half loading the statistics its first half tl.atomic_add-ed"
SPIN_WAIT = THIRD + "one launch, its second half spin-waiting on a flag its first half sets"
KEPT_COUNTERS = THIRD + "a split row's ticket counters kept across calls (the last program by ticket % 4)"
AUTOTUNED_BLOCK = THIRD + "@triton.autotune over BLOCK (4096 to 64), one block of each row read"
LAST_COMBINES = THIRD + "a split row, the program drawing the last tl.atomic_add ticket combines the partials"
PER_STREAM = THIRD + "the statistics kept per (device, stream, rows) under an RLock held for the call"
WRONG_SOFTMAXES.update({
    ATOMIC_STATS: softmax_one_launch_stats_by_atomic_add,
    SPIN_WAIT: softmax_one_launch_spin_wait_on_a_flag,
    KEPT_COUNTERS: softmax_split_row_counters_kept_across_calls,
    AUTOTUNED_BLOCK: softmax_autotuned_over_block,
})
ALSO_RIGHT_SOFTMAXES.update({
    LAST_COMBINES: softmax_split_row_last_program_combines,
    PER_STREAM: softmax_scratch_per_stream_under_an_rlock,
})


# ---------------------------------------------------------------- round 68's adversary of the 09 checks
# (adversary 110, judged on this CPU with Triton 3.9's interpreter, 2026-12-01; each docstring is the adversary's,
# with its prediction for the check before round 68's fix): a workspace kept per shape and used inside one program;
# kept ticket counters behind a one-program launch, or in a grid rounded up; x's own row as scratch, put back; row
# statistics stored into the elements after each row of x (the caller's wider tensor); a side stream without
# record_stream (GPU only).  The check accepted the first five on a CPU until it made the other caller's call inside
# every program of every launch (after the program's first write) and FAILed any write into x's storage.
# ------------------------------------------------------------------------------------------------ a control
@triton.jit
def _r68_plain_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r68_control_one_row_per_program(x):
    """check_softmax_rows.  The lecture's row reduction, one program per row, y allocated each call.
    EXPECTED: RIGHT (a control: the judge itself works)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r68_plain_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


# ------------------------------------------- class 1: a workspace kept across calls, used inside one program
@triton.jit
def _r68_workspace_kernel(y_ptr, ws_ptr, x_ptr, x_row_stride, y_row_stride, ws_row_stride, cols,
                      CHUNK: tl.constexpr):
    """Three passes over the row in chunks (rows longer than a block: the notebook's closing question): the max; the
    exponentials, stashed in the workspace's row and summed; the workspace's row divided by the sum into y."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    w_row = ws_ptr + row * ws_row_stride
    y_row = y_ptr + row * y_row_stride
    offs = tl.arange(0, CHUNK)
    m = tl.full((CHUNK,), -float("inf"), tl.float32)
    for start in range(0, cols, CHUNK):
        v = tl.load(x_row + start + offs, mask=start + offs < cols, other=-float("inf"))
        m = tl.maximum(m, v)
    big = tl.max(m, axis=0)
    acc = tl.zeros((CHUNK,), tl.float32)
    for start in range(0, cols, CHUNK):
        keep = start + offs < cols
        v = tl.load(x_row + start + offs, mask=keep, other=-float("inf"))
        e = tl.exp(v - big)
        tl.store(w_row + start + offs, e, mask=keep)  # stashed: pass 3 need not compute exp again
        acc += e
    total = tl.sum(acc, axis=0)
    for start in range(0, cols, CHUNK):
        keep = start + offs < cols
        e = tl.load(w_row + start + offs, mask=keep, other=0.0)
        tl.store(y_row + start + offs, e / total, mask=keep)


_R68_WORKSPACES: dict = {}


def r68_workspace_kept_per_shape_one_launch(x):
    """check_softmax_rows.  "Computing exp twice is wasteful: pass 2 stashes the exponentials in a workspace, pass 3
    reads them back.  The workspace is allocated once per (device, rows, cols) and kept: no allocation per call.
    It is not the 'buffer kept from call to call' the task warns about: one launch, and each program writes its
    own row of the workspace before it reads it back, so no later launch reads another call's data."
    Why wrong: two callers at once (two threads, or two streams that nothing orders: the task's own words) run two
    launches at the same time on a GPU; program r of one call stores its exponentials into the same workspace row
    as program r of the other, and each reads back the other's.  The state is shared between calls; only the
    window is shorter (one program's life instead of the gap between two launches).
    EXPECTED: WRONG.  The check's other caller runs between two programs of the first call's launch (on a CPU,
    `_grid_watched` calls _INSIDE from set_grid_idx) or after the launch (on a GPU, and on the caller's stream), never
    inside a program: predicted PART on a CPU, PASS on a GPU.  Judged: FAIL on a CPU since round 68's fix (the other
    call inside each program); PASSed on the H200 (call BL) until the check started two calls' launches together
    (`_softmax_released_together`): FAILs there since (call BQ, 2026-12-01)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        key = (str(x.device), rows, cols)
        ws = _R68_WORKSPACES.get(key)
        if ws is None:
            ws = _R68_WORKSPACES[key] = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        _r68_workspace_kernel[(rows,)](y, ws, x, x.stride(0), y.stride(0), ws.stride(0), cols, CHUNK=64)
    return y


def r68_workspace_per_call_one_launch(x):
    """check_softmax_rows.  The twin of the answer above with the workspace allocated in each call.
    EXPECTED: RIGHT."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        ws = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        _r68_workspace_kernel[(rows,)](y, ws, x, x.stride(0), y.stride(0), ws.stride(0), cols, CHUNK=64)
    return y


# --------------------------- class 2: state kept across calls in one launch, the check's mid-launch call escaped
@triton.jit
def _r68_split_kernel(y_ptr, part_ptr, count_ptr, x_ptr, rows, x_row_stride, y_row_stride, cols,
                  SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    """A split row: program (row, part) publishes its chunk's (max, sum) by atomics, draws a ticket; the program whose
    ticket is the row's last (modulo SPLIT: the counters are never reset) combines and writes the row."""
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    if row < rows:
        offs = part * CHUNK + tl.arange(0, CHUNK)
        v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
        m = tl.max(v, axis=0)
        s = tl.sum(tl.where(v == -float("inf"), 0.0, tl.exp(v - m)), axis=0)
        slot = part_ptr + (row * SPLIT + part) * 2
        tl.atomic_max(slot, m)  # into -inf: the init launch's
        tl.atomic_add(slot + 1, s)  # into 0
        ticket = tl.atomic_add(count_ptr + row, 1) % SPLIT  # acq_rel: my partials are out
        if ticket == SPLIT - 1:
            ks = tl.arange(0, SPLIT)
            ms = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2, tl.zeros((SPLIT,), tl.float32))
            ss = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2 + 1, tl.zeros((SPLIT,), tl.float32))
            big = tl.max(ms, axis=0)
            total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
            c = tl.arange(0, BLOCK)
            keep = c < cols
            xr = tl.load(x_ptr + row * x_row_stride + c, mask=keep, other=-float("inf"))
            tl.store(y_ptr + row * y_row_stride + c, tl.exp(xr - big) / total, mask=keep)


@triton.jit
def _r68_init_parts_kernel(part_ptr, n, BLOCK: tl.constexpr):
    """(max, sum) pairs set to (-inf, 0): the neutral elements of tl.atomic_max and tl.atomic_add."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + i, tl.where(i % 2 == 0, -float("inf"), 0.0), mask=i < n)


_R68_COUNTERS: dict = {}


def _r68_kept_counters(rows, device):
    key = (rows, str(device))
    if key not in _R68_COUNTERS:
        _R68_COUNTERS[key] = torch.zeros((rows,), dtype=torch.int32, device=device)
    return _R68_COUNTERS[key]


def _r68_split_softmax(x, grid_rows, init_kernel):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        split = 4
        parts = torch.empty((rows, split, 2), dtype=torch.float32, device=x.device)
        n = parts.numel()
        if init_kernel:
            _r68_init_parts_kernel[(triton.cdiv(n, 1024),)](parts, n, BLOCK=1024)
        else:  # PyTorch fills them: nothing made from x
            parts[..., 0].fill_(-float("inf"))
            parts[..., 1].zero_()
        _r68_split_kernel[(grid_rows(rows), split)](y, parts, _r68_kept_counters(rows, x.device), x, rows, x.stride(0),
                                                y.stride(0), cols, SPLIT=split,
                                                CHUNK=triton.next_power_of_2(triton.cdiv(cols, split)),
                                                BLOCK=triton.next_power_of_2(cols))
    return y


def r68_kept_counters_after_an_init_launch(x):
    """check_softmax_rows.  "A split row needs its partials' slots at (-inf, 0) for atomic_max and atomic_add:
    torch.full cannot fill two values at once, so a small kernel of mine initializes them (one program of 1024
    lanes).  The tickets count on forever (ticket % SPLIT picks the last), so the counters are kept per row count:
    no memset per call."  This is round 67's third adversary's kept counters (registered: FAILs on a CPU since the
    check calls the other caller in the middle of the first call's first launch) with an init launch in front.
    Why wrong: two calls whose split launches overlap on a GPU draw tickets from the same counters: one combines
    the other's partials, or before its own are out.
    EXPECTED: WRONG.  The check's mid-launch call (`_INSIDE`) fires in the first counted launch only, at its
    program max(n // 2, 1): a one-program launch never reaches it, and `_launched` then calls it after that
    launch, between the init and the split launch, where the counters are all at multiples of SPLIT.
    Predicted PART on a CPU (PASS on a GPU, as the registered kept counters).  Judged: PASSed on the H200 (call BL)
    until the check started two calls' launches together (`_softmax_released_together`, call BQ, 2026-12-01)."""
    return _r68_split_softmax(x, lambda rows: rows, True)


def r68_kept_counters_grid_rounded_to_a_power_of_two(x):
    """check_softmax_rows.  The kept counters above with a grid of next_power_of_2(rows) x SPLIT programs ("grids
    in powers of two, like BLOCK"; the programs past the last row do nothing), the partials' slots filled by
    PyTorch (no init launch: the split launch is the first).  EXPECTED: WRONG, as above.  With OWN_CASE's 3 rows
    the grid is 4 x 4, whose middle program (index 8, where _grid_watched makes the other call) is the first of
    row 2: rows 0 and 1 are done, every counter at a multiple of SPLIT, so the other call disturbs nothing.
    Predicted PART on a CPU (PASS on a GPU).  Judged: PASSed on the H200 (call BL) until the check started two calls'
    launches together (`_softmax_released_together`: FAILs there since call BQ, 2026-12-01)."""
    return _r68_split_softmax(x, triton.next_power_of_2, False)


@triton.jit
def _r68_split_fresh_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                        SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr, SEM: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    offs = part * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(v, axis=0)
    s = tl.sum(tl.where(v == -float("inf"), 0.0, tl.exp(v - m)), axis=0)
    slot = part_ptr + (row * SPLIT + part) * 2
    tl.store(slot, m)
    tl.store(slot + 1, s)
    ticket = tl.atomic_add(count_ptr + row, 1, sem=SEM)
    if ticket == SPLIT - 1:
        ks = tl.arange(0, SPLIT)
        ms = tl.load(part_ptr + (row * SPLIT + ks) * 2)
        ss = tl.load(part_ptr + (row * SPLIT + ks) * 2 + 1)
        big = tl.max(ms, axis=0)
        total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
        c = tl.arange(0, BLOCK)
        keep = c < cols
        xr = tl.load(x_ptr + row * x_row_stride + c, mask=keep, other=-float("inf"))
        tl.store(y_ptr + row * y_row_stride + c, tl.exp(xr - big) / total, mask=keep)


def _r68_split_fresh(sem):
    def softmax_rows(x):
        rows, cols = x.shape
        y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        if rows:
            split = 4
            parts = torch.empty((rows, split, 2), dtype=torch.float32, device=x.device)
            counts = torch.zeros((rows,), dtype=torch.int32, device=x.device)
            _r68_split_fresh_kernel[(rows, split)](y, parts, counts, x, x.stride(0), y.stride(0), cols, SPLIT=split,
                                               CHUNK=triton.next_power_of_2(triton.cdiv(cols, split)),
                                               BLOCK=triton.next_power_of_2(cols), SEM=sem)
        return y

    return softmax_rows


r68_split_ticket_relaxed = _r68_split_fresh("relaxed")
r68_split_ticket_relaxed.__doc__ = """check_softmax_rows.  A split row, the last ticket's program combining, the
ticket drawn with sem="relaxed" ("I need the count, not a fence: relaxed is the fast one").  Why wrong: a relaxed
atomic orders nothing: the last program's loads of the others' partials may see stale values (CUDA's
threadFenceReduction needs its __threadfence()).  EXPECTED: WRONG (a control of the check's atomics bookkeeping:
predicted FAIL, 'read what another program wrote, no atomic ordering the two')."""

r68_split_ticket_release_only = _r68_split_fresh("release")
r68_split_ticket_release_only.__doc__ = """check_softmax_rows.  The same with sem="release" ("my partials must be
out before my ticket"): the drawing program that combines does not acquire, so its loads of the others' partials
may be served before the ticket (no acquire fence).  EXPECTED: WRONG (predicted FAIL, as the relaxed one)."""


# ------------------------------------------------- class 3: an in-place write into x, undone by the same kernel
@triton.jit
def _r68_x_as_scratch_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x_row = x_ptr + row * x_row_stride
    v = tl.load(x_row + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(x_row + offs, e, mask=mask)  # x's own row as the scratch of the exponentials
    e = tl.load(x_row + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)
    tl.store(x_row + offs, v, mask=mask)  # and x's values put back, bit for bit, before the program ends


def r68_x_row_as_scratch_put_back_by_the_kernel(x):
    """check_softmax_rows.  "The exponentials go through x's own row as scratch (no buffer to allocate); the kernel
    keeps x's values in registers and writes them back before it ends, so x is as it was when my function
    returns: same values, same storage, same strides, same version."
    Why wrong: the task says "no in-place operation on it, even one undone": while the kernel runs, x holds
    exponentials; another reader of x at the same time (another stream's kernel, the other caller of the same
    batch) reads them.
    EXPECTED: WRONG.  The check compares x's values, storage, strides and version before and after (_what_x_is,
    _judge_softmax), and poisons in the second call only the bytes a launch *changed* (_poison_what_changed):
    this launch changes none.  Its guarded launches record every store's address (_recorded) but never ask
    whether a store lands in x.  Predicted PART on a CPU, PASS on a GPU."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r68_x_as_scratch_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r68_gap_scratch_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x_row = x_ptr + row * x_row_stride
    v = tl.load(x_row + offs, mask=mask, other=-float("inf"))
    m = tl.max(v, axis=0)
    e = tl.exp(v - m)
    s = tl.sum(e, axis=0)
    # the row's statistics into the spare room after the row: x.stride(0) >= cols + 2 here
    tl.store(x_row + cols + tl.arange(0, 2), tl.where(tl.arange(0, 2) == 0, m, s))
    st = tl.load(x_row + cols + tl.arange(0, 2))
    s2 = tl.sum(tl.where(tl.arange(0, 2) == 1, st, 0.0), axis=0)
    tl.store(y_ptr + row * y_row_stride + offs, e / s2, mask=mask)


def r68_statistics_in_the_gap_between_xs_rows(x):
    """check_softmax_rows.  "x is a slice of a wider tensor whose rows are x.stride(0) apart: the elements between
    the end of a row and the start of the next are not x's, so my kernel may keep each row's (max, sum) there
    when there is room (x.stride(0) >= cols + 2); else the plain kernel."
    Why wrong: those elements are the caller's wider tensor's (the task: leave x as it was, its memory too); the
    caller's other columns are overwritten.
    EXPECTED: WRONG.  The check compares x's own elements (torch.equal(x, before)), not the storage around them;
    the guarded copy is copied back whole (_out_of_guards).  Predicted PART on a CPU (PASS on a GPU): the gap cases
    are gap 3 and 64 (gap 1 has no room)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        block = triton.next_power_of_2(cols)
        room = x.untyped_storage().nbytes() // 4 - (x.storage_offset() + (rows - 1) * x.stride(0) + cols)
        if x.stride(0) >= cols + 2 and room >= 2:  # room after every row, the last one's too
            _r68_gap_scratch_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=block)
        else:
            _r68_plain_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


# ----------------------------------------------------------------- class 4 (GPU only): a side stream, no record
def r68_side_stream_no_record_stream(x):
    """check_softmax_rows.  "A stream of my own, ordered both ways: it waits for the caller's stream (x is written
    there), and the caller's stream waits for it (the result is read there)."  y is allocated inside the side
    stream's block, and neither y.record_stream(caller) nor x.record_stream(side) is called.
    Why wrong (PyTorch's CUDA semantics, "Stream semantics of backward passes" / Tensor.record_stream): y's block
    belongs to the side stream; when the caller drops y while its stream still has work queued that reads y, the
    allocator hands the block to the next side-stream allocation (the next call's y) at once, and the next
    kernel overwrites it before the caller's queued reads ran.  x, likewise, may be freed and reused by the caller
    while the side stream still reads it.  The registered right twin ("on a stream of its own, waits both ways")
    calls record_stream for both.
    EXPECTED: WRONG (GPU only; on a CPU it is the plain launch).  Predicted PASS on a GPU: the check reads y on the
    caller's stream right after the call, and never drops a result with reads of it still queued."""
    if x.device.type != "cuda":
        return r68_control_one_row_per_program(x)
    caller = torch.cuda.current_stream(x.device)
    side = torch.cuda.Stream(x.device)
    side.wait_stream(caller)
    with torch.cuda.stream(side):
        y = r68_control_one_row_per_program(x)
    caller.wait_stream(side)
    return y

R68 = "round 68's adversary: "
WRONG_SOFTMAXES.update({
    R68 + "a workspace kept per shape, written and read back inside each program":
        r68_workspace_kept_per_shape_one_launch,
    R68 + "kept ticket counters, a one-program init launch in front": r68_kept_counters_after_an_init_launch,
    R68 + "kept ticket counters, a grid of next_power_of_2(rows) rows":
        r68_kept_counters_grid_rounded_to_a_power_of_two,
    R68 + "a split row's ticket drawn with sem='relaxed'": r68_split_ticket_relaxed,
    R68 + "a split row's ticket drawn with sem='release'": r68_split_ticket_release_only,
    R68 + "x's row as the kernel's scratch, its values stored back": r68_x_row_as_scratch_put_back_by_the_kernel,
    R68 + "each row's max and sum stored after the row, in x's wider tensor": r68_statistics_in_the_gap_between_xs_rows,
    R68 + "a side stream waited for both ways, no record_stream": r68_side_stream_no_record_stream,
})
ALSO_RIGHT_SOFTMAXES.update({
    R68 + "the lecture's kernel, one program a row (a control)": r68_control_one_row_per_program,
    R68 + "a workspace allocated in each call, written and read back inside each program":
        r68_workspace_per_call_one_launch,
})


# ---------------------------------------------------------------- round 68's second adversary of the 09 checks
# (adversary 112, judged on this CPU with Triton 3.9's interpreter, 2026-12-01; each docstring is the adversary's, with
# its prediction for the check before the fix): the launches made from a worker thread that the other-caller probes
# did not follow (a statistics buffer kept per row count); a harmless first write in each program (the row's max saved
# per call, or y zeroed), then a workspace kept per shape, stashed and read back; each row's max by NumPy on the bytes
# of x's storage (ctypes); a large result kept by address and version (GPU only).  The check accepted the first three
# wrong ones on a CPU until it made the other caller's call from whichever thread runs the launches (a FAIL where none
# could be made) and also right before a program's first load of an address it stored.
# ------------------------------------------------------------------------------------------------ a control
# (its control is round 68's first adversary's, r68_control_one_row_per_program: the same kernel and answer)


# ------------------------------ class A: the launches made from a worker thread (the concurrency probes key on the
# caller's thread), with state kept across calls
# the two launches are the module's own two softmax kernels (_softmax_stats_kernel, _softmax_apply_kernel)
_R68B_STATS: dict = {}


def _r68b_two_launches(x, stats):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        block = triton.next_power_of_2(cols)
        _softmax_stats_kernel[(rows,)](stats, x, x.stride(0), cols, BLOCK=block)
        _softmax_apply_kernel[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


def _r68b_in_worker(work):
    """Run `work()` in a worker thread started for this call, on the caller's current stream (as the registered right
    answer "a worker thread that enters the caller's current stream, joined" does), and join it."""
    stream = torch.cuda.current_stream() if torch.cuda.is_available() else None
    out: list = []

    def job():
        if stream is None:
            out.append(work())
        else:
            with torch.cuda.stream(stream):
                out.append(work())

    worker = threading.Thread(target=job)
    worker.start()
    worker.join()
    return out[0]


def r68b_worker_thread_stats_kept_per_row_count(x):
    """check_softmax_rows.  "Triton's launch overhead is host work: I hand the launches to a worker thread, on the
    caller's stream, and join it (the registered right answer's pattern).  Two kernels, each row's (max, sum) first;
    the (rows, 2) statistics buffer is made once per row count and kept: no allocation per call."
    The buffer is shared by every caller: two threads (or two streams) calling at once write the same statistics, and
    one call's second launch reads the other's (the registered round 27's "two kernels, the row statistics in a
    scratch kept per row count" FAILs).  The worker thread changes nothing of that: it only moves the launches to
    another thread, which the check's other-caller probes do not follow (nb09.py: _other_call_inside returns where
    `threading.get_ident() != other.thread`; _launched likewise; _stopped_after yields False off the main thread).
    EXPECTED: WRONG."""
    key = (x.shape[0], x.device)
    if key not in _R68B_STATS:
        _R68B_STATS[key] = torch.empty((max(x.shape[0], 1), 2), dtype=torch.float32, device=x.device)
    stats = _R68B_STATS[key]
    return _r68b_in_worker(lambda: _r68b_two_launches(x, stats))


def r68b_worker_thread_stats_per_call(x):
    """check_softmax_rows.  The twin of the answer above with the statistics allocated in each call (a control: the
    worker thread alone must not fail).  EXPECTED: RIGHT."""
    stats = torch.empty((max(x.shape[0], 1), 2), dtype=torch.float32, device=x.device)
    return _r68b_in_worker(lambda: _r68b_two_launches(x, stats))


def r68b_stats_kept_per_row_count_no_worker(x):
    """check_softmax_rows.  The first answer without the worker thread (a control: the kept buffer alone is caught).
    EXPECTED: WRONG."""
    key = (x.shape[0], x.device)
    if key not in _R68B_STATS:
        _R68B_STATS[key] = torch.empty((max(x.shape[0], 1), 2), dtype=torch.float32, device=x.device)
    return _r68b_two_launches(x, _R68B_STATS[key])


# ---------------------- class B: a harmless first write in each program, then a kept workspace written and read back
@triton.jit
def _chunked_row_max(x_row, offs, cols, CHUNK: tl.constexpr):
    """A row's max, CHUNK columns at a time (the stash kernels' first pass)."""
    mm = tl.full((CHUNK,), -float("inf"), tl.float32)
    for start in range(0, cols, CHUNK):
        v = tl.load(x_row + start + offs, mask=start + offs < cols, other=-float("inf"))
        mm = tl.maximum(mm, v)
    return tl.max(mm, axis=0)


@triton.jit
def _stash_then_divide(x_row, w_row, y_row, big, offs, cols, CHUNK: tl.constexpr):
    """The exponentials below the row's max stashed in the workspace's row and summed, then read back, divided by the
    sum, into y's row (the stash kernels' last two passes)."""
    acc = tl.zeros((CHUNK,), tl.float32)
    for start in range(0, cols, CHUNK):
        mask = start + offs < cols
        v = tl.load(x_row + start + offs, mask=mask, other=-float("inf"))
        e = tl.exp(v - big)
        tl.store(w_row + start + offs, e, mask=mask)
        acc += e
    total = tl.sum(acc, axis=0)
    for start in range(0, cols, CHUNK):
        mask = start + offs < cols
        e = tl.load(w_row + start + offs, mask=mask, other=0.0)
        tl.store(y_row + start + offs, e / total, mask=mask)


@triton.jit
def _r68b_three_pass(y_ptr, m_ptr, ws_ptr, x_ptr, x_row_stride, y_row_stride, ws_row_stride, cols,
                     CHUNK: tl.constexpr):
    """Chunked three passes (rows longer than a block: the notebook's closing question): pass 1 the row's max, saved
    (as flash attention saves its row statistics for a backward); pass 2 the exponentials, stashed in the workspace
    and summed; pass 3 the stash divided by the sum, into y."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    w_row = ws_ptr + row * ws_row_stride
    y_row = y_ptr + row * y_row_stride
    offs = tl.arange(0, CHUNK)
    big = _chunked_row_max(x_row, offs, cols, CHUNK)
    tl.store(m_ptr + row, big)
    _stash_then_divide(x_row, w_row, y_row, big, offs, cols, CHUNK)


_R68B_WS: dict = {}


def _r68b_chunked(x, workspace):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    row_max = torch.empty((max(rows, 1),), dtype=torch.float32, device=x.device)  # per call: the saved statistics
    if rows:
        ws = workspace(rows, cols)
        chunk = 32 if x.device.type == "cpu" else 1024
        _r68b_three_pass[(rows,)](y, row_max, ws, x, x.stride(0), y.stride(0), ws.stride(0), cols, CHUNK=chunk)
    return y


def r68b_max_saved_first_then_workspace_kept(x):
    """check_softmax_rows.  "The exponentials are computed once and stashed in a workspace (exp twice is wasteful);
    the workspace is made once per shape and kept (no allocation per call).  Each row's max is saved per call, as
    flash attention keeps its row statistics."  Two callers at once (two threads, two streams) share the workspace:
    program r of one call stashes its exponentials in row r, program r of the other overwrites them, and one reads
    back the other's (round 68's adversary's workspace answer, now FAILed on a CPU).  Here each program's first write
    is the per-call max; the check's other call is made right after a program's first write only (nb09.py
    _other_call_inside: once per (launch, program)), so it runs before the workspace is written, never between the
    stash and its read-back.  EXPECTED: WRONG."""
    def workspace(rows, cols):
        key = (rows, cols, x.device)
        if key not in _R68B_WS:
            _R68B_WS[key] = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        return _R68B_WS[key]

    return _r68b_chunked(x, workspace)


def r68b_max_saved_first_workspace_per_call(x):
    """check_softmax_rows.  The twin with the workspace allocated in each call (a control).  EXPECTED: RIGHT."""
    return _r68b_chunked(x, lambda rows, cols: torch.empty((rows, cols), dtype=torch.float32, device=x.device))


@triton.jit
def _r68b_zero_first(y_ptr, ws_ptr, x_ptr, x_row_stride, y_row_stride, ws_row_stride, cols, CHUNK: tl.constexpr):
    """y's row zeroed first ("torch.empty holds garbage"), then the exponentials stashed in the kept workspace, then
    divided into y."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    w_row = ws_ptr + row * ws_row_stride
    y_row = y_ptr + row * y_row_stride
    offs = tl.arange(0, CHUNK)
    for start in range(0, cols, CHUNK):
        tl.store(y_row + start + offs, tl.zeros((CHUNK,), tl.float32), mask=start + offs < cols)
    big = _chunked_row_max(x_row, offs, cols, CHUNK)
    _stash_then_divide(x_row, w_row, y_row, big, offs, cols, CHUNK)


def r68b_y_zeroed_first_then_workspace_kept(x):
    """check_softmax_rows.  "torch.empty holds garbage, so my kernel zeroes y's row first"; then as above: the
    exponentials stashed in a workspace kept per shape and read back.  The same race as above, hidden by the same
    first write (the zeroing store).  EXPECTED: WRONG."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        key = ("zero", rows, cols, x.device)
        if key not in _R68B_WS:
            _R68B_WS[key] = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        ws = _R68B_WS[key]
        chunk = 32 if x.device.type == "cpu" else 1024
        _r68b_zero_first[(rows,)](y, ws, x, x.stride(0), y.stride(0), ws.stride(0), cols, CHUNK=chunk)
    return y


# ------------------------------------- class C: x's values read on the host through its storage, not the tensor
def r68b_row_max_by_numpy_through_the_storage(x):
    """check_softmax_rows.  "The check said my function read x's values with x.numpy(); I read the storage's bytes
    instead": each row's max by NumPy on the bytes of x's untyped storage (ctypes.string_at, np.frombuffer), the rest
    by a kernel given x and the maxima.  Every row's max is computed on the host, outside the kernel (the registered
    round 19's "each row's max by NumPy on the host" FAILs: `.numpy()` is watched; UntypedStorage's own methods are
    not, nb09.py HOST_READS).  EXPECTED: WRONG."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows == 0:
        return y
    host = x.untyped_storage().cpu()  # the storage itself on a CPU; a copy to the host on a GPU
    raw = ctypes.string_at(host.data_ptr(), host.nbytes())  # its bytes
    flat = np.frombuffer(raw, dtype=np.float32)
    start, stride = x.storage_offset(), x.stride(0)
    idx = start + np.arange(rows)[:, None] * stride + np.arange(cols)[None, :]
    maxima = torch.from_numpy(flat[idx].max(axis=1).astype(np.float32).copy()).to(x.device)
    stats = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
    stats[:, 0] = maxima
    _r68b_sum_given_max[(rows,)](stats, x, x.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    _softmax_apply_kernel[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r68b_sum_given_max(s_ptr, x_ptr, x_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.load(s_ptr + 2 * row)
    tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(v - m), axis=0))


# ------------------------------------- class D (GPU): work skipped after the first call, on large inputs only
_R68B_MEMO: dict = {}


def r68b_large_results_memoized_by_address_and_version(x):
    """check_softmax_rows.  "Benchmarks call me again and again on the same big tensor: above 2**22 elements I keep
    the result by (address, shape, strides, x._version) and return a copy when it comes again."  Stale when new
    values arrive without a version bump (x.data.copy_, a kernel's write, another library through DLPack: the
    registered "results kept by address, shape, strides and x._version" FAILs on the check's small third call), and
    the speed the check measures is a copy's.  The check's staleness calls are on OWN_CASE's small shape, and the
    large shape (BIG) is called only by _softmax_speed, whose values are compared on the first call alone.
    EXPECTED: WRONG (GPU: predicted PASS; on a CPU it is the plain kernel).  PASSed on the H200 (calls BN, BP) until
    _softmax_speed called it once more on the x it had just timed and required a launch there."""
    if x.numel() < 2**22:
        return r68_control_one_row_per_program(x)
    key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()), x._version, x.device)
    if key not in _R68B_MEMO:
        _R68B_MEMO.clear()
        _R68B_MEMO[key] = r68_control_one_row_per_program(x)
    return _R68B_MEMO[key].clone()

R68B = "round 68's second adversary: "
WRONG_SOFTMAXES.update({
    R68B + "launches from a joined worker thread, the row statistics kept per row count":
        r68b_worker_thread_stats_kept_per_row_count,
    R68B + "the row statistics kept per row count, no worker thread": r68b_stats_kept_per_row_count_no_worker,
    R68B + "each row's max saved per call first, then a workspace kept per shape read back":
        r68b_max_saved_first_then_workspace_kept,
    R68B + "y's row zeroed first, then a workspace kept per shape read back": r68b_y_zeroed_first_then_workspace_kept,
    R68B + "each row's max by NumPy on the bytes of x's storage (ctypes)": r68b_row_max_by_numpy_through_the_storage,
    R68B + "above 2**22 elements, a result kept by address, shape, strides and version":
        r68b_large_results_memoized_by_address_and_version,
})
ALSO_RIGHT_SOFTMAXES.update({
    R68B + "the lecture's kernel, one program a row (a control)": r68_control_one_row_per_program,
    R68B + "launches from a joined worker thread, the row statistics allocated in each call":
        r68b_worker_thread_stats_per_call,
    R68B + "each row's max saved first, a workspace allocated in each call read back":
        r68b_max_saved_first_workspace_per_call,
})


# ---------------------------------------------------------------- round 69's adversary of the 09 checks
# (adversary 114, judged on this CPU with Triton 3.9's interpreter, 2026-12-01; each docstring is the adversary's
# student's reasoning, why, and EXPECTED, with what the check did before its fix): every program of a split row writing
# the whole row by tl.atomic_xchg (the last writer wins); a split row's ticket drawn with scope="cta"; a kept workspace
# read back by tl.atomic_xchg; an autotuner keyed on rows alone; the extra programs of a rounded-up grid clamped onto
# the last row (right: identical stores).  The check accepted the first four wrong ones on a CPU, and FAILed the last
# right one, until it judged non-commutative atomics as stores and by the values written, kept an atomic's scope, made
# the other caller's call before an atomic's read-back too, and kept the autotuner's choices per key across a check.
R69_SPLIT = 2


@triton.jit
def _r69_xchg_all_write_kernel(y_ptr, part_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                               SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    offs = part * CHUNK + tl.arange(0, CHUNK)
    keep = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=keep, other=-float("inf"))
    m = tl.max(v, axis=0)
    s = tl.sum(tl.where(keep & (v > -float("inf")), tl.exp(v - m), 0.0), axis=0)
    s = tl.where(m == -float("inf"), 0.0, s)
    bits = part_ptr.to(tl.pointer_type(tl.int32))
    slot = (row * SPLIT + part) * 2
    # my partial (max, sum) published atomically (a float's bits: the interpreter has no float atomic_xchg)
    tl.atomic_xchg(bits + slot, m.to(tl.int32, bitcast=True))
    tl.atomic_xchg(bits + slot + 1, s.to(tl.int32, bitcast=True))
    # every partial of my row read atomically ("an atomic read sees the latest value")
    ks = tl.arange(0, SPLIT)
    ms = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2, tl.zeros((SPLIT,), tl.float32))
    ss = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2 + 1, tl.zeros((SPLIT,), tl.float32))
    big = tl.max(ms, axis=0)
    total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    xr = tl.load(x_ptr + row * x_row_stride + c, mask=mask, other=-float("inf"))
    out = tl.exp(xr - big) / total
    ybits = y_ptr.to(tl.pointer_type(tl.int32))
    tl.atomic_xchg(ybits + row * y_row_stride + c, out.to(tl.int32, bitcast=True), mask=mask)


def r69_split_every_program_writes_the_row_by_xchg(x):
    """check_softmax_rows.  "Long rows want more than one program per row.  Each of the SPLIT programs of a row
    publishes its chunk's (max, sum) with tl.atomic_xchg, reads all the row's partials back with atomics, combines
    them and writes the whole row.  Several programs write the same row, but with atomic_xchg, and the program that
    finishes last has seen every partial, so the row ends up right."
    Why wrong: the programs of a launch run at once and in no fixed order; the program whose atomic_xchg of the row
    lands last need not be the one that read every partial (program 0 reads before program 1 publishes, program 1
    publishes, reads and writes the row, then program 0's stale row lands): the last writer wins, a race.  In any
    order of one program after another (the interpreter's, forward or reversed) the last program has seen every
    partial, so the result is right.  An exchange, unlike an add or a max, does not commute.
    EXPECTED: WRONG.  PART on a CPU before the check judged two programs' exchanges of one address as two stores."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        parts = torch.empty((rows, R69_SPLIT, 2), dtype=torch.float32, device=x.device)
        parts[..., 0].fill_(-math.inf)
        parts[..., 1].zero_()
        chunk = triton.next_power_of_2(triton.cdiv(cols, R69_SPLIT))
        _r69_xchg_all_write_kernel[(rows, R69_SPLIT)](y, parts, x, x.stride(0), y.stride(0), cols, SPLIT=R69_SPLIT,
                                                      CHUNK=chunk, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r69_ticket_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols, SPLIT: tl.constexpr,
                       CHUNK: tl.constexpr, BLOCK: tl.constexpr, CTA: tl.constexpr, XCHG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    offs = part * CHUNK + tl.arange(0, CHUNK)
    keep = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=keep, other=-float("inf"))
    m = tl.max(v, axis=0)
    s = tl.sum(tl.where(keep & (v > -float("inf")), tl.exp(v - m), 0.0), axis=0)
    s = tl.where(m == -float("inf"), 0.0, s)
    slot = (row * SPLIT + part) * 2
    if XCHG:
        bits = part_ptr.to(tl.pointer_type(tl.int32))
        tl.atomic_xchg(bits + slot, m.to(tl.int32, bitcast=True))
        tl.atomic_xchg(bits + slot + 1, s.to(tl.int32, bitcast=True))
    else:
        tl.store(part_ptr + slot, m)
        tl.store(part_ptr + slot + 1, s)
    if CTA:
        ticket = tl.atomic_add(count_ptr + row, 1, sem="acq_rel", scope="cta")
    else:
        ticket = tl.atomic_add(count_ptr + row, 1, sem="acq_rel")
    if ticket == SPLIT - 1:
        ks = tl.arange(0, SPLIT)
        ms = tl.load(part_ptr + (row * SPLIT + ks) * 2)
        ss = tl.load(part_ptr + (row * SPLIT + ks) * 2 + 1)
        big = tl.max(ms, axis=0)
        total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
        c = tl.arange(0, BLOCK)
        mask = c < cols
        xr = tl.load(x_ptr + row * x_row_stride + c, mask=mask, other=-float("inf"))
        tl.store(y_ptr + row * y_row_stride + c, tl.exp(xr - big) / total, mask=mask)


def _r69_ticket_softmax(x, cta, xchg):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        parts = torch.zeros((rows, R69_SPLIT, 2), dtype=torch.float32, device=x.device)
        counts = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        chunk = triton.next_power_of_2(triton.cdiv(cols, R69_SPLIT))
        _r69_ticket_kernel[(rows, R69_SPLIT)](y, parts, counts, x, x.stride(0), y.stride(0), cols, SPLIT=R69_SPLIT,
                                              CHUNK=chunk, BLOCK=triton.next_power_of_2(cols), CTA=cta, XCHG=xchg)
    return y


def r69_split_ticket_scope_cta(x):
    """check_softmax_rows.  The registered right split row (the program drawing the last tl.atomic_add ticket
    combines), every buffer allocated per call, sem="acq_rel" as the check's hint asks, but the ticket drawn with
    scope="cta": "the counter belongs to my row, and each program is one CTA: the narrowest scope is the cheapest".
    Why wrong: an atomic's acquire and release order memory only for the threads inside its scope; the programs of a
    row are different CTAs (blocks), so the last program's acquire does not make the others' partials (plain stores)
    visible to it (Triton's tl.atomic_add docstring: scope "cta" is the thread block; PTX ISA, "Memory Consistency
    Model", scopes: https://docs.nvidia.com/cuda/parallel-thread-execution/).
    EXPECTED: WRONG.  PART on a CPU before the check kept an atomic's scope beside its sem (it took acquire and release
    from sem alone); on a GPU it may well pass, as the registered relaxed and release tickets do."""
    return _r69_ticket_softmax(x, cta=True, xchg=False)


def r69_split_ticket_partials_by_xchg(x):
    """check_softmax_rows.  The right split row with each program's partials published by tl.atomic_xchg (as bits)
    instead of plain stores, the ticket acq_rel at the GPU's scope (the default), the last ticket's program reading
    the partials with plain loads.  Right: each writer's ticket releases after its exchanges, and the reader's ticket
    acquires before its loads; each partial's slot is one program's.  EXPECTED: RIGHT."""
    return _r69_ticket_softmax(x, cta=False, xchg=True)


@triton.jit
def _r69_stash_xchg_kernel(y_ptr, ws_ptr, x_ptr, x_row_stride, y_row_stride, ws_row_stride, cols,
                           CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    w_row = ws_ptr + row * ws_row_stride
    y_row = y_ptr + row * y_row_stride
    wbits = w_row.to(tl.pointer_type(tl.int32))
    offs = tl.arange(0, CHUNK)
    for start in range(0, cols, CHUNK):  # y zeroed: torch.empty holds garbage
        tl.store(y_row + start + offs, tl.zeros((CHUNK,), tl.float32), mask=start + offs < cols)
    mm = tl.full((CHUNK,), -float("inf"), tl.float32)
    for start in range(0, cols, CHUNK):
        v = tl.load(x_row + start + offs, mask=start + offs < cols, other=-float("inf"))
        mm = tl.maximum(mm, v)
    big = tl.max(mm, axis=0)
    acc = tl.zeros((CHUNK,), tl.float32)
    for start in range(0, cols, CHUNK):
        mask = start + offs < cols
        v = tl.load(x_row + start + offs, mask=mask, other=-float("inf"))
        e = tl.exp(v - big)
        tl.store(w_row + start + offs, e, mask=mask)
        acc += e
    total = tl.sum(acc, axis=0)
    for start in range(0, cols, CHUNK):
        mask = start + offs < cols
        e = tl.atomic_xchg(wbits + start + offs, tl.zeros((CHUNK,), tl.int32), mask=mask).to(tl.float32,
                                                                                              bitcast=True)
        tl.store(y_row + start + offs, e / total, mask=mask)


_R69_WS: dict = {}


def r69_workspace_kept_read_back_by_xchg(x):
    """check_softmax_rows.  "exp is computed once and stashed in a workspace kept per shape; the last pass reads the
    stash back with tl.atomic_xchg(w, 0), which hands me the value and leaves the workspace zeroed for the next call,
    so no call ever sees another's leftovers."  Why wrong: two callers at once (two threads, two streams) share the
    workspace between the stash and its read-back (round 68's second adversary's kept workspace, registered above).
    EXPECTED: WRONG.  PART on a CPU before the check made the other caller's call before an atomic's read-back too (its
    hook was in the masked load alone)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        key = (rows, cols, str(x.device))
        if key not in _R69_WS:
            _R69_WS[key] = torch.zeros((rows, cols), dtype=torch.float32, device=x.device)
        ws = _R69_WS[key]
        chunk = 32 if x.device.type == "cpu" else 1024
        _r69_stash_xchg_kernel[(rows,)](y, ws, x, x.stride(0), y.stride(0), ws.stride(0), cols, CHUNK=chunk)
    return y


@triton.jit
def _r69_max_kernel(m_ptr, x_ptr, x_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    tl.atomic_max(m_ptr + row, tl.max(v, axis=0))


@triton.jit
def _r69_sum_kernel(s_ptr, m_ptr, x_ptr, x_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    tl.atomic_add(s_ptr + row, tl.sum(tl.exp(v - tl.load(m_ptr + row)), axis=0))


@triton.jit
def _r69_div_kernel(y_ptr, s_ptr, m_ptr, x_ptr, x_row_stride, y_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    keep = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=keep, other=-float("inf"))
    e = tl.exp(v - tl.load(m_ptr + row)) / tl.load(s_ptr + row)
    tl.store(y_ptr + row * y_row_stride + offs, e, mask=keep)


def r69_three_split_launches_sum_in_torch_empty(x):
    """check_softmax_rows.  Three launches over (rows, column chunks): atomic_max into a -inf-filled max, atomic_add
    of the exponentials into the sums, then the values.  The sums come from torch.empty ("atomic_add accumulates; the
    buffer is new").  Why wrong: torch.empty holds whatever the memory held; the sums start from garbage.
    EXPECTED: WRONG (FAILed on a CPU already: a case whose garbage start showed)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        chunk = 32 if x.device.type == "cpu" else 1024
        grid = (rows, triton.cdiv(cols, chunk))
        m = torch.full((rows,), -math.inf, dtype=torch.float32, device=x.device)
        s = torch.empty((rows,), dtype=torch.float32, device=x.device)
        _r69_max_kernel[grid](m, x, x.stride(0), cols, CHUNK=chunk)
        _r69_sum_kernel[grid](s, m, x, x.stride(0), cols, CHUNK=chunk)
        _r69_div_kernel[grid](y, s, m, x, x.stride(0), y.stride(0), cols, CHUNK=chunk)
    return y


def _r69_prune_narrow(configs, named_args, **kwargs):
    cols = named_args["cols"]
    kept = [c for c in configs if c.kwargs["BLOCK"] >= cols]
    return kept or configs[-1:]


_R69_CONFIGS = [triton.Config({"BLOCK": b}) for b in (64, 256, 1024, 4096)]


def _r69_row_kernel_body(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, rows, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


_r69_tuned_by_rows = triton.autotune(configs=_R69_CONFIGS, key=["rows"], prune_configs_by={
    "early_config_prune": _r69_prune_narrow})(triton.jit(_r69_row_kernel_body))
_r69_tuned_by_cols = triton.autotune(configs=_R69_CONFIGS, key=["cols"], prune_configs_by={
    "early_config_prune": _r69_prune_narrow})(triton.jit(_r69_row_kernel_body))


def _r69_tuned(kernel, x):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, rows)
    return y


def r69_autotuned_block_pruned_key_rows(x):
    """check_softmax_rows.  "@triton.autotune over BLOCK (64 to 4096), the configs narrower than the row pruned
    (early_config_prune), so every config it may pick reads the whole row; key=['rows'], since the grid is what
    tuning depends on."  Why wrong: the autotuner keeps its choice per key (triton/runtime/autotuner.py,
    Autotuner.run: `if key not in self.cache:` prune, time, keep); a later call with the same row count and longer
    rows reuses a BLOCK chosen (and pruned) for shorter ones, and reads only part of the row.
    EXPECTED: WRONG.  PART on a CPU while the check emptied the autotuner's cache at every launch (each launch pruned
    for its own columns)."""
    return _r69_tuned(_r69_tuned_by_rows, x)


def r69_autotuned_block_pruned_key_cols(x):
    """check_softmax_rows.  The twin keyed by cols: every kept choice was pruned for the same row length.
    EXPECTED: RIGHT."""
    return _r69_tuned(_r69_tuned_by_cols, x)


@triton.jit
def _r69_clamped_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, rows, cols, BLOCK: tl.constexpr):
    row = tl.minimum(tl.program_id(0), rows - 1).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r69_grid_rounded_up_programs_clamped_to_the_last_row(x):
    """check_softmax_rows.  "The grid is rounded up to a multiple of 8 programs (fewer distinct launch shapes); a
    program past the last row clamps its row to the last one (tl.minimum) instead of returning: it recomputes the last
    row and stores the same values again."  Every store of an element holds the same, right value, whichever program
    stores last, on a GPU too: redundant work, not a race on the result.  The task asks for the right softmax, not for
    each element stored by one program.
    EXPECTED: RIGHT.  FAILed on a CPU ("the last store happened to be right here", untrue: every store was right) until
    the check counted an element stored by two programs only where their last stores there differ."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r69_clamped_kernel[(triton.cdiv(rows, 8) * 8,)](y, x, x.stride(0), y.stride(0), rows, cols,
                                                        BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r69_stash_kernel(y_ptr, ws_ptr, x_ptr, x_row_stride, y_row_stride, ws_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    w_row = ws_ptr + row * ws_row_stride
    y_row = y_ptr + row * y_row_stride
    offs = tl.arange(0, CHUNK)
    big = _chunked_row_max(x_row, offs, cols, CHUNK)
    _stash_then_divide(x_row, w_row, y_row, big, offs, cols, CHUNK)


_R69_POOL: dict = {}
_R69_POOL_LOCK = threading.Lock()


def r69_workspace_pool_given_back_on_return(x):
    """check_softmax_rows.  "A workspace per call costs an allocation; I keep a pool per shape: a call takes a free
    workspace (or makes one), and puts it back when it returns.  Two callers at once never share one: the one in use
    is not in the pool."  Why wrong on a GPU: returning from the function is not the kernel's end; the next call (from
    another stream) takes the same workspace while the first call's kernel still runs (PyTorch's caching allocator
    hands a block back per stream, record_stream for another one; a pool of the host's does not).  On a CPU every
    launch has ended when the function returns: right there.
    EXPECTED: WRONG (a GPU's to judge: predicted FAIL by _softmax_released_together; the CPU part PARTs, rightly)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        key = (rows, cols, str(x.device))
        with _R69_POOL_LOCK:
            free = _R69_POOL.setdefault(key, [])
            ws = free.pop() if free else torch.empty((rows, cols), dtype=torch.float32, device=x.device)
        try:
            chunk = 32 if x.device.type == "cpu" else 1024
            _r69_stash_kernel[(rows,)](y, ws, x, x.stride(0), y.stride(0), ws.stride(0), cols, CHUNK=chunk)
        finally:
            with _R69_POOL_LOCK:
                _R69_POOL[key].append(ws)
    return y


def r69_gelu_out_allocated_by_empty_like_x(x, bias):
    """check_bias_gelu.  `y = cp.empty_like(x)`, then the ElementwiseKernel writes into y.  For a transposed x,
    empty_like keeps x's (Fortran) order: y is a new F-ordered array, every value right.  The task asks for a new CuPy
    array of x's shape and dtype: its layout is free.  EXPECTED: RIGHT (predicted PASS on a GPU)."""
    y = _cp().empty_like(x)
    _elementwise("gelu_into", "T x, T b", "T y", _GELU)(x, bias, y)
    return y


def r69_gelu_bias_read_as_float32(x, bias):
    """check_bias_gelu.  An ElementwiseKernel with fixed types `T x, float32 b` ("bias is small"): for a float64 x,
    bias is cast to float32 first, one rounding of v = x + b in float: outside GELU_F64_EPS.
    EXPECTED: WRONG (predicted FAIL on a GPU, on float64)."""
    return _elementwise("gelu_b32", "T x, float32 b", "T y", _GELU)(x, bias.astype(_cp().float32, copy=False))


_R69_SCALE_SRC = r"""
extern "C" __global__ void scale(float* out, const float* x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a * x[i];
    }
}
"""


def r69_scale_a_rounded_through_float16(out, x, a):
    """check_scale_into.  The bug fixed (`i < n`, enough blocks, none for n == 0), `a` passed as cp.float16(a) ("a
    scale factor needs no precision").  Why wrong: a rounds to float16's 11 bits: the product is off by up to 5e-4
    relatively.  EXPECTED: WRONG (predicted FAIL on a GPU)."""
    cp = _cp()
    n = x.size
    if n == 0:
        return
    _raw("scale", _R69_SCALE_SRC)(((n + 255) // 256,), (256,), (out, x, cp.float32(cp.float16(a)), cp.int64(n)))


def r69_scale_n_read_from_out_size(out, x, a):
    """check_scale_into.  The bug fixed, n taken as `out.size` rather than x's (equal, by the task), the grid from a
    NumPy integer (np.int64 arithmetic).  EXPECTED: RIGHT (predicted PASS on a GPU)."""
    cp = _cp()
    n = np.int64(out.size)
    if n == 0:
        return
    _raw("scale", _R69_SCALE_SRC)((int((n + 255) // 256),), (256,), (out, x, cp.float32(a), cp.int64(n)))


R69 = "round 69's adversary: "
R69_POOL = R69 + "a workspace pool per shape, each given back when the function returns (not when its kernel ends)"
WRONG_SOFTMAXES.update({
    R69 + "every program of a split row writes the whole row by tl.atomic_xchg (the last writer wins)":
        r69_split_every_program_writes_the_row_by_xchg,
    R69 + "a split row's acq_rel ticket drawn with scope='cta'": r69_split_ticket_scope_cta,
    R69 + "a workspace kept per shape, read back by tl.atomic_xchg(w, 0)": r69_workspace_kept_read_back_by_xchg,
    R69 + "three split launches, the sums accumulated into torch.empty": r69_three_split_launches_sum_in_torch_empty,
    R69 + "@triton.autotune over BLOCK, the narrow configs pruned, key=['rows']": r69_autotuned_block_pruned_key_rows,
    R69_POOL: r69_workspace_pool_given_back_on_return,
})
ALSO_RIGHT_SOFTMAXES.update({
    R69 + "a split row's partials published by tl.atomic_xchg, an acq_rel ticket":
        r69_split_ticket_partials_by_xchg,
    R69 + "@triton.autotune over BLOCK, the narrow configs pruned, key=['cols']": r69_autotuned_block_pruned_key_cols,
    R69 + "the grid rounded up to 8 programs, the extra ones clamped onto the last row (identical stores)":
        r69_grid_rounded_up_programs_clamped_to_the_last_row,
})
WRONG_GELUS[R69 + "the bias read as float32 (`T x, float32 b`)"] = r69_gelu_bias_read_as_float32
ALSO_RIGHT_GELUS[R69 + "the result allocated by cp.empty_like(x) (x's order kept)"] = \
    r69_gelu_out_allocated_by_empty_like_x
WRONG_SCALES[R69 + "a passed through cp.float16"] = r69_scale_a_rounded_through_float16
ALSO_RIGHT_SCALES[R69 + "n read from out.size as a NumPy int"] = r69_scale_n_read_from_out_size


# ---------------------------------------------------------------- round 69's second adversary of the 09 checks
# (adversary 116, judged on this CPU with Triton 3.9's interpreter, 2026-12-01, the checks as of 7233656; each docstring
# is the adversary's student's reasoning, why, and EXPECTED, with the verdict seen).  Exercise 2: one ticket counter for
# the whole launch (the programs' order assumed row-major); a ticket drawn before the partials, which are published and
# read back by atomics; an autotuned kernel adding into its arguments without reset_to_zero (and its twin with it); the
# arrival count read by tl.atomic_load(sem="acquire") (right).  On this CPU the check PARTed the three wrong ones and
# FAILed the right one; the checks were not changed in the round that registered them (a change to
# utils/exercises/nb09.py makes solutions 09's stamp stale).  Fixed in round 70 (fix09), by the plans below: each is
# judged as EXPECTED on the CPU.  Exercises 1 and 3: strides divided by 4 for
# every dtype (and its twin by the itemsize); a call skipped when it repeats the last one's addresses (and a right one).
#
# The fix, per class, for the next session (verified 2026-12-01 against Triton 3.9's interpreter and nb09.py):
# A. the programs' order assumed row-major: the interpreter runs a grid with axis 0 outermost
#    (triton/runtime/interpreter.py, the `for x in range(grid[0])` loop of the launch), and _grid_watched's only other
#    order is its exact reverse, so the programs of a row always run one after the other.  Add a third order, axis 0
#    fastest (as a GPU hands out blockIdx.x), or a seeded shuffle of the program ids, in set_grid_idx, for some cases.
# B. an atomic that reads another program's atomic write is judged never to race: _judged_accesses skips it
#    (`if writer == program or (atomic and kind == "atomic"): continue`).  Skip only where neither access's returned
#    value is used (commuting updates leave the same final value); an atomic whose result the program reads (here
#    atomic_add(slot, 0)) is judged as a load against the other program's write, with the same release/acquire order.
#    The interpreter runs each program to its end, so the program holding the last ticket always ran last: the ticket
#    drawn first is only caught by the ordering record, not by the values.
# C. an autotuner's benchmark runs repeated on the real arguments: _autotune_without_timing's `timed` stands in for
#    Autotuner._bench and runs nothing.  Let it run the config once or twice through the original _bench's kernel_call
#    (config.pre_hook, self.pre_hook, which does reset_to_zero and restore_value, the run, post_hook) before it
#    returns its timings, so side effects on the arguments add up as on a GPU.
# D. tl.atomic_load / tl.atomic_store recorded as plain loads and stores: Triton 3.9's interpreter implements
#    InterpreterBuilder.create_atomic_load by create_masked_load and create_atomic_store by create_masked_store, and
#    _access_patches watches only create_masked_load/store, create_atomic_rmw/cas and set_grid_idx.  Patch
#    create_atomic_load and create_atomic_store too (where the builder has them, Triton 3.7 and later) and record them
#    as atomics with their sem and scope (a load acquires, a store releases), before the masked load or store they call.
R69B = "round 69's second adversary: "
R69B_SPLIT = 4


def _r69b_split_sizes(cols: int) -> tuple[int, int]:
    return triton.next_power_of_2(triton.cdiv(cols, R69B_SPLIT)), triton.next_power_of_2(cols)


@triton.jit
def _r69b_chunk_partial(x_ptr, row, part, x_row_stride, cols, CHUNK: tl.constexpr):
    """One program's chunk of a split row: its (max, sum of exp(v - max)), the split answers' first step."""
    offs = part * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(v, axis=0)
    return m, tl.sum(tl.where(v == -float("inf"), 0.0, tl.exp(v - m)), axis=0)


@triton.jit
def _r69b_combine_and_write(y_ptr, part_ptr, x_ptr, row, x_row_stride, y_row_stride, cols, SPLIT: tl.constexpr,
                            BLOCK: tl.constexpr):
    """A row's SPLIT partials read back by plain loads, combined, and the row's softmax written."""
    ks = tl.arange(0, SPLIT)
    ms = tl.load(part_ptr + (row * SPLIT + ks) * 2)
    ss = tl.load(part_ptr + (row * SPLIT + ks) * 2 + 1)
    big = tl.max(ms, axis=0)
    total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
    c = tl.arange(0, BLOCK)
    keep = c < cols
    xr = tl.load(x_ptr + row * x_row_stride + c, mask=keep, other=-float("inf"))
    tl.store(y_ptr + row * y_row_stride + c, tl.exp(xr - big) / total, mask=keep)


@triton.jit
def _r69b_ticket_first_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                              SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    ticket = tl.atomic_add(count_ptr + row, 1)  # drawn first: who started last, not who finished last
    m, s = _r69b_chunk_partial(x_ptr, row, part, x_row_stride, cols, CHUNK)
    slot = part_ptr + (row * SPLIT + part) * 2
    tl.atomic_max(slot, m)
    tl.atomic_add(slot + 1, s)
    if ticket == SPLIT - 1:
        ks = tl.arange(0, SPLIT)
        ms = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2, tl.zeros((SPLIT,), tl.float32))
        ss = tl.atomic_add(part_ptr + (row * SPLIT + ks) * 2 + 1, tl.zeros((SPLIT,), tl.float32))
        big = tl.max(ms, axis=0)
        total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
        c = tl.arange(0, BLOCK)
        keep = c < cols
        xr = tl.load(x_ptr + row * x_row_stride + c, mask=keep, other=-float("inf"))
        tl.store(y_ptr + row * y_row_stride + c, tl.exp(xr - big) / total, mask=keep)


def r69b_ticket_drawn_before_the_partials(x):
    """check_softmax_rows.  "Long rows are split over 4 programs; each takes a ticket as it starts, computes its chunk's
    (max, sum), publishes them with tl.atomic_max / tl.atomic_add (atomics: no race), and the program holding the last
    ticket combines the partials (read back atomically, atomic_add(slot, 0)) and writes the row.  Counters and slots
    are allocated in each call."  Why wrong: the ticket says which program started last, not which finished last; on a
    GPU the holder of the last ticket may read a slot before a slower program's atomics landed there, and reads
    (-inf, 0) for that chunk.  Drawn after the partials, the ticket would be right.
    EXPECTED: WRONG.  PART on a CPU (2026-12-01): an atomic read of another program's atomic write was never judged,
    and the interpreter runs each program to its end; FAILed on a CPU since round 70 (an atomic read, tl.atomic_add(p,
    0) whose result is kept, is ordered as a load is, not by itself and the write: _judged_accesses).  On a GPU the race
    window is narrow."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        parts = torch.empty((rows, R69B_SPLIT, 2), dtype=torch.float32, device=x.device)
        parts[..., 0].fill_(-math.inf)
        parts[..., 1].zero_()
        counts = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        chunk, block = _r69b_split_sizes(cols)
        _r69b_ticket_first_kernel[(rows, R69B_SPLIT)](y, parts, counts, x, x.stride(0), y.stride(0), cols,
                                                      SPLIT=R69B_SPLIT, CHUNK=chunk, BLOCK=block)
    return y


@triton.jit
def _r69b_one_counter_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                             SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    m, s = _r69b_chunk_partial(x_ptr, row, part, x_row_stride, cols, CHUNK)
    slot = part_ptr + (row * SPLIT + part) * 2
    tl.store(slot, m)
    tl.store(slot + 1, s)
    ticket = tl.atomic_add(count_ptr, 1)  # acq_rel, after the partials: one counter for the whole launch
    if ticket % SPLIT == SPLIT - 1:  # "every SPLIT tickets complete a row": mine
        _r69b_combine_and_write(y_ptr, part_ptr, x_ptr, row, x_row_stride, y_row_stride, cols, SPLIT, BLOCK)


def r69b_one_counter_for_the_launch(x):
    """check_softmax_rows.  "A split row needs a ticket counter; instead of one per row I keep one int for the whole
    launch (allocated in each call): the programs of a row draw 4 tickets, so every 4th ticket finishes a row, and its
    holder combines its own row's partials (its ticket is drawn after its partials are out)."  Why wrong: 4 consecutive
    tickets come from one row only if the rows' programs run one row after the other.  A GPU runs a launch's programs
    in no fixed order (it hands out blockIdx.x, program_id(0), fastest): the holder of every 4th ticket may belong to a
    row whose partials are not all out, and some rows are never combined.  Run on a CPU with axis 0 fastest, the
    answer is off by 0.0115 on a 3 x 37 x (the adversary's order_demo.py; 1.5e-8 row-major).
    EXPECTED: WRONG.  PART on a CPU (2026-12-01): the check ran the programs row-major or in exactly the reverse order,
    both of which keep a row's programs together; FAILed on a CPU since round 70 (a quarter of the cases run the
    programs with axis 0 fastest: GRID_ORDERS)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        parts = torch.empty((rows, R69B_SPLIT, 2), dtype=torch.float32, device=x.device)
        count = torch.zeros((1,), dtype=torch.int32, device=x.device)
        chunk, block = _r69b_split_sizes(cols)
        _r69b_one_counter_kernel[(rows, R69B_SPLIT)](y, parts, count, x, x.stride(0), y.stride(0), cols,
                                                     SPLIT=R69B_SPLIT, CHUNK=chunk, BLOCK=block)
    return y


@triton.jit
def _r69b_row_max_kernel(m_ptr, x_ptr, x_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + c, mask=c < cols, other=-float("inf"))
    tl.store(m_ptr + row, tl.max(v, axis=0))


def _r69b_sum_kernel_body(s_ptr, m_ptr, x_ptr, x_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.load(m_ptr + row)
    tl.atomic_add(s_ptr + row, tl.sum(tl.where(v == -float("inf"), 0.0, tl.exp(v - m)), axis=0))


_R69B_WARPS = [triton.Config({}, num_warps=w) for w in (1, 2, 4)]
_r69b_sum_tuned = triton.autotune(configs=_R69B_WARPS, key=["cols"])(triton.jit(_r69b_sum_kernel_body))
_r69b_sum_tuned_reset = triton.autotune(configs=_R69B_WARPS, key=["cols"], reset_to_zero=["s_ptr"])(
    triton.jit(_r69b_sum_kernel_body))


@triton.jit
def _r69b_write_kernel(y_ptr, x_ptr, m_ptr, s_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    keep = c < cols
    v = tl.load(x_ptr + row * x_row_stride + c, mask=keep, other=-float("inf"))
    tl.store(y_ptr + row * y_row_stride + c, tl.exp(v - tl.load(m_ptr + row)) / tl.load(s_ptr + row), mask=keep)


def _r69b_summed_by_atomics(x, sum_kernel):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = torch.empty((rows,), dtype=torch.float32, device=x.device)
        s = torch.zeros((rows,), dtype=torch.float32, device=x.device)  # zeroed in each call: the sums add up here
        block = triton.next_power_of_2(cols)
        chunk = min(block, 32)
        _r69b_row_max_kernel[(rows,)](m, x, x.stride(0), cols, BLOCK=block)
        sum_kernel[(rows, triton.cdiv(cols, chunk))](s, m, x, x.stride(0), cols, CHUNK=chunk)
        _r69b_write_kernel[(rows,)](y, x, m, s, x.stride(0), y.stride(0), cols, BLOCK=block)
    return y


def r69b_autotuned_accumulation_without_reset_to_zero(x):
    """check_softmax_rows.  "Three kernels: each row's max; the sum of the exponentials in chunks of 32 columns,
    each chunk's part added into a zeroed per-call `s` by tl.atomic_add (autotuned over num_warps 1, 2, 4, key cols,
    to be fast); then the values."  Why wrong: on a GPU, the first call for each new `cols` makes @triton.autotune
    time every config by running the kernel on this call's own arguments, many times each
    (triton/runtime/autotuner.py, Autotuner._bench: kernel_call runs self.fn.run(*args), timed by do_bench): `s`
    adds up every run, and the values come out far too small.  Triton's remedy, in autotune's docstring:
    "reset_to_zero: a list of argument names whose value will be reset to zero before evaluating any configs" (the
    twin below).  With the real _bench put back and do_bench calling the kernel 3 times, the interpreter's first
    call is off by 0.264 (the adversary's bench_demo.py).
    EXPECTED: WRONG.  PART on a CPU (2026-12-01): the check's stand-in for _bench ran nothing; FAILed on a CPU since
    round 70 (each config benchmarked runs once, through _bench's kernel call: _autotune_without_timing)."""
    return _r69b_summed_by_atomics(x, _r69b_sum_tuned)


def r69b_autotuned_accumulation_with_reset_to_zero(x):
    """check_softmax_rows.  The twin above with reset_to_zero=["s_ptr"]: the autotuner zeroes `s` before each config's
    benchmark runs, and once more before the real run (Autotuner.run: self.pre_hook(full_nargs, reset_only=True)).
    EXPECTED: right in its values (PART on a CPU, 2026-12-01, and since round 70 with the benchmark's runs), WRONG on a
    GPU by the speed bar: x read three times and 64 programs of 32 columns each per row reached 0.09 of the H200's copy
    bandwidth on 32768 x 2048, below the task's 0.3 (call BT, 2026-12-01)."""
    return _r69b_summed_by_atomics(x, _r69b_sum_tuned_reset)


@triton.jit
def _r69b_count_then_read_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                                 SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    m, s = _r69b_chunk_partial(x_ptr, row, part, x_row_stride, cols, CHUNK)
    slot = part_ptr + (row * SPLIT + part) * 2
    tl.store(slot, m)
    tl.store(slot + 1, s)
    tl.atomic_add(count_ptr + row, 1, sem="release")  # my partials are out
    arrived = tl.atomic_load(count_ptr + row, sem="acquire")  # how many are out now
    if arrived == SPLIT:  # all out: combine (whoever sees SPLIT writes the same bits)
        _r69b_combine_and_write(y_ptr, part_ptr, x_ptr, row, x_row_stride, y_row_stride, cols, SPLIT, BLOCK)


def r69b_count_read_by_atomic_load_acquire(x):
    """check_softmax_rows.  "Each program of a split row stores its chunk's (max, sum), adds 1 to the row's counter
    (sem='release'), then reads the counter with tl.atomic_load(sem='acquire'); a program that sees all 4 arrived
    combines and writes the row."  Right: the acquire load that reads 4 reads the last of the release read-modify-writes
    on the counter, whose release sequence holds all the earlier ones, so every partial is visible to it; the last
    adder always sees 4, and another program that sees 4 too stores the very same bits.  Counters and slots are
    allocated in each call.  tl.atomic_load is in Triton 3.9 (the CPU's pin), not in every Triton: registered only
    where triton.language has it.
    EXPECTED: RIGHT.  FAILed on a CPU (2026-12-01, "14 elements written by one of its programs and read by another, no
    atomic ordering the two", on a (2, 1) x): the interpreter's atomic_load is its masked load, recorded as a plain
    one; PART on a CPU since round 70 (tl.atomic_load recorded with its sem: _atomic_watched)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        parts = torch.empty((rows, R69B_SPLIT, 2), dtype=torch.float32, device=x.device)
        counts = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        chunk, block = _r69b_split_sizes(cols)
        _r69b_count_then_read_kernel[(rows, R69B_SPLIT)](y, parts, counts, x, x.stride(0), y.stride(0), cols,
                                                         SPLIT=R69B_SPLIT, CHUNK=chunk, BLOCK=block)
    return y


_R69B_GELU = r"""
extern "C" __global__ void gelu_strided(const {T}* x, const {T}* bias, {T}* y, long long rows, long long cols,
                                        long long xs0, long long xs1, long long bs) {{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * cols) return;
    long long r = i / cols, c = i % cols;
    {T} v = x[r * xs0 + c * xs1] + bias[c * bs];
    y[i] = ({T})0.5 * v * (({T})1 + tanh(({T})0.7978845608028654 * (v + ({T})0.044715 * v * v * v)));
}}
"""


def _r69b_gelu_strided(x, bias, unit):
    cp = _cp()
    kernel = _raw("gelu_strided", _R69B_GELU.format(T="float" if x.dtype == cp.float32 else "double"))
    x2 = x.reshape(1, -1) if x.ndim == 1 else x
    rows, cols = x2.shape
    y = cp.empty((rows, cols), dtype=x.dtype)
    n = rows * cols
    if n:
        size = unit or x.itemsize
        strides = (x2.strides[0] // size, x2.strides[1] // size, bias.strides[0] // size)
        kernel(((n + 255) // 256,), (256,), (x2, bias, y, cp.int64(rows), cp.int64(cols), *map(cp.int64, strides)))
    return y.reshape(x.shape)


def r69b_gelu_strides_in_floats(x, bias):
    """check_bias_gelu.  "A RawKernel that takes the strides, so no copies for views: CuPy gives strides in bytes,
    divide by 4 for elements."  Why wrong: a float64 element has 8 bytes; every float64 input is read at twice its
    strides (wrong values, reads past the arrays).  EXPECTED: WRONG (predicted FAIL on a GPU, on the first float64
    case; not run on a CPU: the check needs a GPU and CuPy)."""
    return _r69b_gelu_strided(x, bias, 4)


def r69b_gelu_strides_in_elements(x, bias):
    """check_bias_gelu.  The twin: strides divided by x.itemsize, no copies, any layout, the kernel on the current
    stream.  EXPECTED: RIGHT (predicted PASS on a GPU; not run on a CPU)."""
    return _r69b_gelu_strided(x, bias, None)


_R69B_LAST_SCALE: dict = {}


def r69b_scale_skips_a_repeated_call(out, x, a):
    """check_scale_into.  "The bug fixed (`i < n`, enough blocks, none for n == 0); and a call with the same out, x
    and a as the last one has nothing new to write, so it is skipped (a memo of the last call's pointers)."  Why
    wrong: x's values may have changed in place since (the caller wrote x), and out may have been overwritten: the
    memo keys on addresses, not values, and CuPy's pool hands the same addresses out again.  EXPECTED: WRONG (on a GPU,
    FAIL only where the check repeats the last call's addresses, n and a with new values; not run on a CPU)."""
    cp = _cp()
    n = out.size
    key = (out.data.ptr, x.data.ptr, n, float(a))
    if _R69B_LAST_SCALE.get("key") == key:
        return
    _R69B_LAST_SCALE["key"] = key
    if n:
        _raw("scale", _R69_SCALE_SRC)(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int64(n)))


def r69b_scale_a_through_numpy_float32(out, x, a):
    """check_scale_into.  The bug fixed; `a` converted by np.float32(a) (a NumPy scalar, which CuPy passes as its 4
    bytes), the grid -(-n // 256) blocks.  EXPECTED: RIGHT (predicted PASS on a GPU; not run on a CPU)."""
    cp = _cp()
    n = out.size
    if n:
        _raw("scale", _R69_SCALE_SRC)((-(-n // 256),), (256,), (out, x, np.float32(a), cp.int64(n)))


R69B_ATOMIC_LOAD = R69B + "a split row's arrivals counted (release), the count read by tl.atomic_load(sem='acquire')"
WRONG_SOFTMAXES.update({
    R69B + "a split row's ticket drawn before its partials, published and read back by atomics":
        r69b_ticket_drawn_before_the_partials,
    R69B + "one ticket counter for the whole launch, every 4th ticket combines its own row":
        r69b_one_counter_for_the_launch,
    R69B + "@triton.autotune over num_warps, sums added by tl.atomic_add into an argument, no reset_to_zero":
        r69b_autotuned_accumulation_without_reset_to_zero,
})
# Right in its values (PASSes on a CPU), too slow on a GPU: 0.09 of the H200's copy bandwidth on 32768 x 2048 where
# exercise 2 asks for 0.3 (call BT, 2026-12-01): three kernels and 64 atomic adds a row.  Wrong by the task's speed
# bar, which only a GPU runs (so it is among WRONG_ON_CPU's exclusions, below).
R69B_TOO_SLOW = R69B + "@triton.autotune over num_warps, sums added by tl.atomic_add, reset_to_zero=['s_ptr']"
WRONG_SOFTMAXES[R69B_TOO_SLOW] = r69b_autotuned_accumulation_with_reset_to_zero
if hasattr(tl, "atomic_load"):  # Triton 3.9 has it (the CPU's pin); a Triton without it fails to compile the kernel
    ALSO_RIGHT_SOFTMAXES[R69B_ATOMIC_LOAD] = r69b_count_read_by_atomic_load_acquire
WRONG_GELUS[R69B + "a strided RawKernel, the strides divided by 4 (float32's bytes) for every dtype"] = \
    r69b_gelu_strides_in_floats
ALSO_RIGHT_GELUS[R69B + "a strided RawKernel, the strides divided by x.itemsize"] = r69b_gelu_strides_in_elements
WRONG_SCALES[R69B + "a call skipped when it repeats the last one's out, x, n and a (a memo by address)"] = \
    r69b_scale_skips_a_repeated_call
ALSO_RIGHT_SCALES[R69B + "a passed as np.float32(a), the grid -(-n // 256)"] = r69b_scale_a_through_numpy_float32


# ---------------------------------------------------------------- round 70's adversary of the 09 checks
# (adversary 118, judged on this CPU with Triton 3.9's interpreter, 2026-12-01, the checks as of 6c956b6, the merge of
# fix09-r70; each docstring is the adversary's student's reasoning, why, and EXPECTED, with the verdict seen).
# Exercise 2 only: a split row whose two launches are autotuned apart (two kernels, each under its own
# @triton.autotune; one kernel whose key holds a PHASE constexpr), the configs of the two required to agree (PARTed,
# wrong: fixed in round 70, fix09d, by the cross pattern of check_softmax_rows, below); a control with one autotuned
# launch (FAILed); the twin that reads every slot of a pre-filled buffer (right); three layouts the task leaves free
# (right).
R70 = "round 70's adversary: "
_R70_CHUNKS = [triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 256}, num_warps=4)]
_R70_MIN_BLOCK = 64


def _r70_partials_body(p_ptr, x_ptr, x_stride, cols, NCH, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = c * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(v, axis=0)
    s = tl.sum(tl.where(v == -float("inf"), 0.0, tl.exp(v - m)), axis=0)
    tl.store(p_ptr + (row * NCH + c) * 2, m)
    tl.store(p_ptr + (row * NCH + c) * 2 + 1, s)


def _r70_apply_body(y_ptr, x_ptr, p_ptr, x_stride, y_stride, cols, NCH, READ_ALL: tl.constexpr,
                    BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    # the partials of the row: one per chunk of BLOCK columns (READ_ALL: every slot of the buffer, filled or not)
    n = NCH if READ_ALL else tl.cdiv(cols, BLOCK)
    big = tl.load(p_ptr + row * NCH * 2)
    for j in range(1, n):
        big = tl.maximum(big, tl.load(p_ptr + (row * NCH + j) * 2))
    total = 0.0
    for j in range(n):
        mj = tl.load(p_ptr + (row * NCH + j) * 2)
        sj = tl.load(p_ptr + (row * NCH + j) * 2 + 1)
        total += tl.where(mj == -float("inf"), 0.0, sj * tl.exp(mj - big))
    offs = c * BLOCK + tl.arange(0, BLOCK)
    keep = offs < cols
    v = tl.load(x_ptr + row * x_stride + offs, mask=keep, other=-float("inf"))
    tl.store(y_ptr + row * y_stride + offs, tl.exp(v - big) / total, mask=keep)


_r70_partials_tuned = triton.autotune(configs=_R70_CHUNKS, key=["cols"])(triton.jit(_r70_partials_body))
_r70_apply_tuned = triton.autotune(configs=_R70_CHUNKS, key=["cols"])(triton.jit(_r70_apply_body))
_r70_apply_fixed = triton.jit(_r70_apply_body)
# the twin's kernel 1: its benchmark runs (every config, on the call's own arguments) put the partials back after each
_r70_partials_tuned_restored = triton.autotune(configs=_R70_CHUNKS, key=["cols"], restore_value=["p_ptr"])(
    triton.jit(_r70_partials_body))


def _r70_split(x, filled, read_all, apply_block=None):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows == 0:
        return y
    nch = triton.cdiv(cols, _R70_MIN_BLOCK)  # room for the narrowest config's chunks
    p = torch.empty((rows, nch, 2), dtype=torch.float32, device=x.device)
    if filled:  # slots no chunk writes hold (-inf, 0): they add nothing to the max or the sum
        p[:, :, 0].fill_(-math.inf)
        p[:, :, 1].fill_(0.0)
    partials = _r70_partials_tuned_restored if filled else _r70_partials_tuned
    partials[lambda meta: (rows, triton.cdiv(cols, meta["BLOCK"]))](p, x, x.stride(0), cols, nch)
    if apply_block is None:
        _r70_apply_tuned[lambda meta: (rows, triton.cdiv(cols, meta["BLOCK"]))](
            y, x, p, x.stride(0), y.stride(0), cols, nch, READ_ALL=read_all)
    else:
        _r70_apply_fixed[(rows, triton.cdiv(cols, apply_block))](
            y, x, p, x.stride(0), y.stride(0), cols, nch, READ_ALL=read_all, BLOCK=apply_block)
    return y


def r70_two_autotuners_chunk_count_from_own_block(x):
    """check_softmax_rows.  "A split row, fast on long rows: kernel 1 stores each chunk's max and sum, kernel 2
    combines the row's cdiv(cols, BLOCK) partials and writes its chunk; both autotuned over the same BLOCK configs
    (64, 256), so they use the same chunks."  Why wrong: each @triton.autotune times its own configs and keeps its own
    fastest (triton/runtime/autotuner.py, Autotuner.run: `self.cache[key] = builtins.min(timings, key=timings.get)`),
    independently of the other; on a GPU kernel 1 may keep BLOCK=64 and kernel 2 BLOCK=256: kernel 2 then combines 1
    partial of 3 (off by 97 on a 3 x 150 x * 10, the kernels launched by hand with those blocks on the CPU), or, the
    other way round, reads slots nobody wrote (torch.empty's bytes).
    EXPECTED: WRONG.  PART on a CPU (2026-12-01, 143 checks): the check's stand-in for the autotuners gave every
    autotuner config k at once (only the diagonal of the configs' product ran); FAILed on a CPU since round 70 (fix09d:
    a call with two autotuned launches or more runs again with each launch, in turn, on each of its other configs while
    the others keep their first)."""
    return _r70_split(x, filled=False, read_all=False)


def r70_two_autotuners_every_slot_read(x):
    """check_softmax_rows.  The twin: the same split row, the partials buffer filled with (-inf, 0) in each call and
    kernel 2 reading every slot of it (as many as the narrowest config's chunks), kernel 1's autotuner given
    restore_value=["p_ptr"] (its benchmark runs every config on this call's own buffer: a BLOCK=64 run leaves partials
    in slots a later BLOCK=256 run does not overwrite; without restore_value the check rightly FAILed the adversary's
    first version, at config 2): whatever BLOCK each autotuner keeps, the row's max and sum are right.
    EXPECTED: right in its values (PART on a CPU, 2026-12-01, and since round 70 with each launch's configs crossed
    with the other's), WRONG on a GPU by the speed bar: each program of kernel 2 reads 32 slots of partials on BIG's
    rows, 0.13 of the H200's copy bandwidth (call BX, 2026-12-02) where exercise 2 asks for 0.3."""
    return _r70_split(x, filled=True, read_all=True)


def r70_autotuned_partials_fixed_apply_block(x):
    """check_softmax_rows.  A control of the check's reach: kernel 1 autotuned over BLOCK (64, 256), kernel 2 fixed at
    BLOCK=64 and reading cdiv(cols, 64) partials ("kernel 1 keeps 64").  Why wrong: the autotuner may keep 256, and
    kernel 2 reads slots kernel 1 never wrote.  EXPECTED: WRONG.  FAILed on a CPU (2026-12-01, at config 2 of 2: one
    autotuner's every config was already run)."""
    return _r70_split(x, filled=False, read_all=False, apply_block=64)


_r70_partials_jit = triton.jit(_r70_partials_body)
_r70_apply_jit = triton.jit(_r70_apply_body)


@triton.autotune(configs=_R70_CHUNKS, key=["cols", "PHASE"])
@triton.jit
def _r70_phased_kernel(y_ptr, x_ptr, p_ptr, x_stride, y_stride, cols, NCH, PHASE: tl.constexpr, BLOCK: tl.constexpr):
    if PHASE == 0:
        _r70_partials_jit(p_ptr, x_ptr, x_stride, cols, NCH, BLOCK)
    else:
        _r70_apply_jit(y_ptr, x_ptr, p_ptr, x_stride, y_stride, cols, NCH, False, BLOCK)


def r70_one_autotuner_two_phases_in_its_key(x):
    """check_softmax_rows.  "One kernel, two launches (PHASE 0: each chunk's partials; PHASE 1: combine the row's
    cdiv(cols, BLOCK) partials and write), autotuned once: the same kernel, so the same BLOCK."  Why wrong: the key
    holds PHASE (key=["cols", "PHASE"]), so each phase is a key of its own in the autotuner's cache (Autotuner.run:
    `if key not in self.cache:`), timed and chosen on its own: on a GPU phase 0 may keep 64 and phase 1 256.
    EXPECTED: WRONG.  PART on a CPU (2026-12-01): config k was given to every key of every autotuner at once; FAILed on
    a CPU since round 70 (fix09d: each (autotuner, key) launched is a launch of its own for the cross pattern)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows == 0:
        return y
    nch = triton.cdiv(cols, _R70_MIN_BLOCK)
    p = torch.empty((rows, nch, 2), dtype=torch.float32, device=x.device)
    for phase in (0, 1):
        _r70_phased_kernel[lambda meta: (rows, triton.cdiv(cols, meta["BLOCK"]))](
            y, x, p, x.stride(0), y.stride(0), cols, nch, PHASE=phase)
    return y


@triton.jit
def _r70_strided_out_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, y_col_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    keep = c < cols
    v = tl.load(x_ptr + row * x_row_stride + c, mask=keep, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + c * y_col_stride, e / tl.sum(e, axis=0), mask=keep)


def r70_result_column_major(x):
    """check_softmax_rows.  "The next layer reads y by columns: return it column-major, y = torch.empty(cols,
    rows).t(); the kernel stores with y's two strides."  The task asks for a new float32 tensor of x's shape with the
    softmax's values; its strides are free.  EXPECTED: right in its values (PART on a CPU, 2026-12-01), WRONG on a
    GPU by the speed bar: each program stores its row across y's columns, `rows` floats apart (32768 on BIG), 0.10 of
    the H200's copy bandwidth (call BX, 2026-12-02) where exercise 2 asks for 0.3."""
    rows, cols = x.shape
    y = torch.empty((cols, rows), dtype=torch.float32, device=x.device).t()
    if rows:
        _r70_strided_out_kernel[(rows,)](y, x, x.stride(0), y.stride(0), y.stride(1), cols,
                                         BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r70_padded_in_kernel(y_ptr, xp_ptr, xp_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(xp_ptr + row * xp_row_stride + c)  # every lane in bounds: the padding is -inf
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + c, e / tl.sum(e, axis=0), mask=c < cols)


def r70_input_padded_with_minus_inf(x):
    """check_softmax_rows.  "Pad each row to BLOCK with -inf (F.pad: a copy, which the task allows), so the kernel's
    load needs no mask; exp(-inf - max) = 0 adds nothing."  EXPECTED: RIGHT (PART on a CPU, 2026-12-01)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        block = triton.next_power_of_2(cols)
        xp = torch.nn.functional.pad(x, (0, block - cols), value=-math.inf)
        _r70_padded_in_kernel[(rows,)](y, xp, xp.stride(0), y.stride(0), cols, BLOCK=block)
    return y


@triton.jit
def _r70_bits_kernel(y_ptr, xb_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    keep = c < cols
    b = tl.load(xb_ptr + row * x_row_stride + c, mask=keep, other=0)
    v = tl.where(keep, b.to(tl.float32, bitcast=True), -float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + c, e / tl.sum(e, axis=0), mask=keep)


def r70_x_read_as_int32_bits(x):
    """check_softmax_rows.  "From a kernel that loads raw words": x.view(torch.int32) passed to the kernel, bitcast back
    to float32 in it: a view, nothing computed outside the kernel.  EXPECTED: RIGHT (PART on a CPU, 2026-12-01)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r70_bits_kernel[(rows,)](y, x.view(torch.int32), x.stride(0), y.stride(0), cols,
                                  BLOCK=triton.next_power_of_2(cols))
    return y


R70_TWO_TUNERS = R70 + "a split row, two kernels each autotuned over BLOCK, each counting chunks by its own BLOCK"
R70_TWO_PHASES = R70 + "a split row, one kernel autotuned over BLOCK, a PHASE constexpr in its key, a launch a phase"
WRONG_SOFTMAXES.update({
    R70_TWO_TUNERS: r70_two_autotuners_chunk_count_from_own_block,
    R70_TWO_PHASES: r70_one_autotuner_two_phases_in_its_key,
    R70 + "a split row, the partials' kernel autotuned over BLOCK, the combining kernel's BLOCK fixed at 64":
        r70_autotuned_partials_fixed_apply_block,
})
# Right in their values (PASS on a CPU), too slow on a GPU: below exercise 2's 0.3 of the copy bandwidth on 32768 x
# 2048 on the H200 (call BX, 2026-12-02): the every-slot twin 0.13 (32 partial slots read by each program), the
# column-major result 0.10 (each row stored 32768 floats apart).  Wrong by the task's speed bar, which only a GPU
# runs (so among WRONG_ON_CPU's exclusions, below).
R70_SLOT_READER = (R70 + "a split row, two autotuned kernels, partials pre-filled with (-inf, 0), every slot read, "
                   "restore_value")
R70_COLUMN_MAJOR = R70 + "the result column-major, torch.empty(cols, rows).t(), stored through y's two strides"
WRONG_SOFTMAXES.update({R70_SLOT_READER: r70_two_autotuners_every_slot_read,
                        R70_COLUMN_MAJOR: r70_result_column_major})
ALSO_RIGHT_SOFTMAXES.update({
    R70 + "x padded with -inf by F.pad (a copy), an unmasked load": r70_input_padded_with_minus_inf,
    R70 + "x passed as x.view(torch.int32), bitcast back to float32 in the kernel": r70_x_read_as_int32_bits,
})

# ---------------------------------------------------------------- round 71's adversary of the 09 checks
# (adversary 121, judged on this CPU with Triton 3.9's interpreter, 2026-12-02, the checks as of e697389; each
# docstring is the adversary's student's reasoning and EXPECTED).  Registered: the one the CPU misjudged (results
# carved from a kept slab: PASS-worthy by the task's old text, WRONG since fix09c by its new one, "a tensor of its
# own, freed once the caller drops it"), the six a GPU judges (a stash in y read back in another tile with and without
# tl.debug_barrier(), which the CPU judges since fix09c by its record of each program's stores and barriers; block
# pointers, which Triton 3.9 has removed; two grids of scale_into), and of the twelve the CPU judged right, the five
# of classes not registered before (a finite start of the online max, y laid out like x, the kernel in place on a
# clone, the autotuner's choice read on the host, zeros not stored into torch.empty and into torch.zeros).
R71 = "round 71's adversary: "
_R71_LOWEST = -3.4028234663852886e38  # float32's lowest finite value


@triton.jit
def _r71_plain_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def _r71_plain(y, x, x_row_stride=None):
    rows, cols = x.shape
    if rows:
        _r71_plain_kernel[(rows,)](y, x, x.stride(0) if x_row_stride is None else x_row_stride, y.stride(0), cols,
                                   BLOCK=triton.next_power_of_2(cols))
    return y


def _r71_y(x):
    return torch.empty(x.shape, dtype=torch.float32, device=x.device)


@triton.jit
def _r71_online_finite_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, CHUNK: tl.constexpr,
                              LOW: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * x_row_stride
    yr = y_ptr + row * y_row_stride
    m = tl.full((), LOW, tl.float32)  # a finite start: -inf - (-inf) never happens
    s = tl.zeros((), tl.float32)
    for start in range(0, cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        v = tl.load(xr + offs, mask=offs < cols, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(v, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(v - m_new), axis=0)
        m = m_new
    for start in range(0, cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        v = tl.load(xr + offs, mask=offs < cols, other=-float("inf"))
        tl.store(yr + offs, tl.exp(v - m) / s, mask=offs < cols)


def r71_online_from_float32_lowest(x):
    """check_softmax_rows.  The notebook's closing question, the online softmax over chunks of 32 columns, its running
    max started at float32's lowest finite value instead of -inf (so a masked chunk gives exp(-inf - lowest) = 0, not
    NaN); every value the task allows (down to about -1e37) lies above it.  EXPECTED: RIGHT (PART on a CPU)."""
    rows, cols = x.shape
    y = _r71_y(x)
    if rows:
        _r71_online_finite_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, CHUNK=32, LOW=_R71_LOWEST)
    return y


def r71_result_laid_out_like_x(x):
    """check_softmax_rows.  "The result keeps x's layout": y = torch.empty_strided(x.shape, x.stride()), its rows as
    far apart as x's (the gaps unwritten), y.stride(0) passed.  A new float32 tensor of x's shape with the right
    values.  EXPECTED: RIGHT (PART on a CPU)."""
    return _r71_plain(torch.empty_strided(x.shape, x.stride(), dtype=torch.float32, device=x.device), x)


def r71_in_place_on_a_clone(x):
    """check_softmax_rows.  "Copy x, then run the kernel in place on the copy" (y = x.clone(): a copy, which the task
    allows; the kernel's input and output are the same tensor, each program reading its own row before it writes
    it).  EXPECTED: RIGHT (PART on a CPU)."""
    y = x.clone()
    return _r71_plain(y, y)


@triton.jit
def _r71_partials_kernel(p_ptr, x_ptr, x_row_stride, cols, NCH_MAX, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    ch = tl.program_id(1)
    offs = ch * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(v, axis=0)
    s = tl.sum(tl.exp(v - tl.where(m == -float("inf"), 0.0, m)), axis=0)  # an all -inf chunk: (-inf, 0)
    tl.store(p_ptr + (row * NCH_MAX + ch) * 2, m)
    tl.store(p_ptr + (row * NCH_MAX + ch) * 2 + 1, s)


_r71_tuned_partials = triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32}),
                                               triton.Config({"BLOCK": 128})], key=["cols"])(_r71_partials_kernel)


@triton.jit
def _r71_apply_kernel(y_ptr, x_ptr, p_ptr, x_row_stride, y_row_stride, cols, NCH_MAX, NCH, BLOCK: tl.constexpr,
                      PB: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, PB)
    pm = tl.load(p_ptr + (row * NCH_MAX + k) * 2, mask=k < NCH, other=-float("inf"))
    ps = tl.load(p_ptr + (row * NCH_MAX + k) * 2 + 1, mask=k < NCH, other=0.0)
    m = tl.max(pm, axis=0)
    s = tl.sum(ps * tl.exp(pm - m), axis=0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    tl.store(y_ptr + row * y_row_stride + offs, tl.exp(v - m) / s, mask=mask)


def r71_split_block_read_from_best_config(x):
    """check_softmax_rows.  A split row: kernel 1, autotuned over BLOCK (64, 32, 128; key cols), stores each chunk's
    (max, sum); the host reads the autotuner's choice back, `_tuned_partials.best_config.kwargs["BLOCK"]` (as Triton's
    tutorials print it), to tell kernel 2 how many chunks to combine.  The two always agree (the check's stand-in for
    the autotuner keeps Autotuner.run, which sets best_config).  Wrong with two callers (registered right until round
    73): best_config is the autotuner's, shared by every caller, and a call on another shape between kernel 1 and the
    host's read sets it to that shape's choice: the first caller's result was wrong on the H200 (call CI, the other
    caller on (3, 5) between the launches of a call on (3, 37)).  PART on a CPU.  EXPECTED: WRONG."""
    rows, cols = x.shape
    y = _r71_y(x)
    if rows == 0:
        return y
    nch_max = triton.cdiv(cols, 32)
    parts = torch.empty((rows, nch_max, 2), dtype=torch.float32, device=x.device)
    _r71_tuned_partials[lambda meta: (rows, triton.cdiv(cols, meta["BLOCK"]))](parts, x, x.stride(0), cols, nch_max)
    nch = triton.cdiv(cols, _r71_tuned_partials.best_config.kwargs["BLOCK"])
    _r71_apply_kernel[(rows,)](y, x, parts, x.stride(0), y.stride(0), cols, nch_max, nch,
                               BLOCK=triton.next_power_of_2(cols), PB=triton.next_power_of_2(nch_max))
    return y


@triton.jit
def _r71_skip_zeros_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    p = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_row_stride + offs, p, mask=mask & (p != 0.0))


def _r71_skip_zeros(y, x):
    rows, cols = x.shape
    if rows:
        _r71_skip_zeros_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def r71_zeros_not_stored(x):
    """check_softmax_rows.  "A store of 0 is wasted bandwidth: masked entries (-inf) and underflowed ones are 0, I
    skip them" (mask & (p != 0)), with y = torch.empty: those elements of y keep whatever the allocator's memory held.
    EXPECTED: WRONG (FAIL on a CPU)."""
    return _r71_skip_zeros(_r71_y(x), x)


def r71_zeros_not_stored_into_zeros(x):
    """check_softmax_rows.  The twin with y = torch.zeros(...): the skipped elements are 0, as they should be.
    EXPECTED: RIGHT (PART on a CPU)."""
    return _r71_skip_zeros(torch.zeros(x.shape, dtype=torch.float32, device=x.device), x)


_R71_SLAB: dict = {}
_R71_SLAB_FLOATS = 1 << 18  # 1 MiB


def r71_results_carved_from_a_slab(x):
    """check_softmax_rows.  "torch.empty per call is an allocation; I carve each result out of a 1 MiB slab, and start
    a new slab when it is full" (a bump allocator): no region is ever handed out twice, so no result is ever
    overwritten, and the answer holds at most one slab.  But each result is a view into memory the function keeps:
    the caller's dropping it frees nothing, which the task's text rules out since fix09c ("a tensor of its own ...
    freed once the caller drops it").  EXPECTED: WRONG (FAIL on a CPU: "the memory of every one of the 13 results the
    caller dropped is still held"; before fix09c the adversary judged it RIGHT by the task's text).  A slab that fills
    during the check's last 13 calls (about 1 in 180 of its floats' starts) would free the older results and pass."""
    rows, cols = x.shape
    n = rows * cols
    if n == 0 or n > _R71_SLAB_FLOATS:
        y = _r71_y(x)
    else:
        slab, used = _R71_SLAB.get(x.device, (None, _R71_SLAB_FLOATS))
        if used + n > _R71_SLAB_FLOATS:
            slab, used = torch.empty(_R71_SLAB_FLOATS, dtype=torch.float32, device=x.device), 0
        y = slab[used:used + n].view(rows, cols)
        _R71_SLAB[x.device] = (slab, used + n)
    return _r71_plain(y, x)


@triton.jit
def _r71_readback_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr, CHUNK: tl.constexpr,
                         BARRIER: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    yr = y_ptr + row * y_row_stride
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    tl.store(yr + offs, tl.exp(x - tl.max(x, axis=0)), mask=mask)  # stash the exponentials in y
    if BARRIER:
        tl.debug_barrier()
    s = tl.zeros((), tl.float32)
    for start in range(0, BLOCK, CHUNK):  # read them back in chunks (another tile: other threads' stores)
        c = start + tl.arange(0, CHUNK)
        s += tl.sum(tl.load(yr + c, mask=c < cols, other=0.0), axis=0)
    e = tl.load(yr + offs, mask=mask, other=0.0)
    tl.store(yr + offs, e / s, mask=mask)


def _r71_readback(x, barrier):
    rows, cols = x.shape
    y = _r71_y(x)
    if rows:
        _r71_readback_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                      CHUNK=64, BARRIER=barrier)
    return y


def r71_stash_in_y_read_back_without_a_barrier(x):
    """check_softmax_rows.  "Registers are scarce for long rows: store exp(x - max) into y, then read y back in chunks
    of 64 to sum it, then divide": the read-back loads, in another tile than the store's, elements that other threads
    of the program stored, with no tl.debug_barrier() between (Triton inserts none for global memory:
    triton-lang/triton#1097, its cross_entropy kernel's explicit barrier).  On a GPU a thread may read the element
    before another thread's store lands.  EXPECTED: WRONG (PART on a CPU before fix09c, which records each program's
    stores and barriers: FAIL there since; on the H200, judged by values only, it may PASS)."""
    return _r71_readback(x, False)


def r71_stash_in_y_read_back_after_a_barrier(x):
    """check_softmax_rows.  Its twin with tl.debug_barrier() between the stash and the read-back.  EXPECTED: RIGHT
    (PART on a CPU)."""
    return _r71_readback(x, True)


@triton.jit
def _r71_block_ptr_kernel(y_ptr, x_ptr, rows, cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr,
                          CHECK: tl.constexpr):
    row = tl.program_id(0)
    xb = tl.make_block_ptr(x_ptr, shape=(rows, cols), strides=(x_row_stride, 1), offsets=(row, 0),
                           block_shape=(1, BLOCK), order=(1, 0))
    yb = tl.make_block_ptr(y_ptr, shape=(rows, cols), strides=(y_row_stride, 1), offsets=(row, 0),
                           block_shape=(1, BLOCK), order=(1, 0))
    offs = tl.arange(0, BLOCK)[None, :]
    if CHECK:
        v = tl.load(xb, boundary_check=(1,), padding_option="zero")
    else:
        v = tl.load(xb)
    v = tl.where(offs < cols, v, -float("inf"))
    e = tl.exp(v - tl.max(v, axis=1)[:, None])
    out = e / tl.sum(e, axis=1)[:, None]
    if CHECK:
        tl.store(yb, out, boundary_check=(1,))
    else:
        tl.store(yb, out)


def _r71_block_pointers(x, check):
    rows, cols = x.shape
    y = _r71_y(x)
    if rows:
        _r71_block_ptr_kernel[(rows,)](y, x, rows, cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols),
                                       CHECK=check)
    return y


def r71_block_pointers(x):
    """check_softmax_rows.  Block pointers (tl.make_block_ptr, Triton's tutorials' way to a 2-D tile), loaded and stored
    with boundary_check=(1,) (padding "zero", then the lanes past the row set to -inf).  Triton 3.9 (the CPU's) has
    removed block pointers ("Block pointers have been removed in favor of the tensor descriptor API"): on a CPU the
    check says so and leaves it for a GPU (since fix09c; before, the error passed through); Triton 3.6, the H200's,
    has them.  EXPECTED: RIGHT."""
    return _r71_block_pointers(x, True)


def r71_block_pointers_without_boundary_check(x):
    """check_softmax_rows.  The same block pointers, no boundary_check ("the lanes past the row are set to -inf by
    tl.where anyway"): the load reads past each row and the store writes BLOCK - cols elements past each row of y (the
    last row's past y's end).  EXPECTED: WRONG (left for a GPU on a CPU, as its twin)."""
    return _r71_block_pointers(x, False)


def r71_scale_blocks_rounded_down_plus_one_if_remainder(out, x, a):
    """check_scale_into (GPU).  The bound fixed (`i < n`) and the grid "n // threads, plus one if there is a
    remainder", written as `n // threads + (n % threads > 0)`: a bool added to an int (True is 1): right, by another
    arithmetic, with `a` as cp.float32(a).  EXPECTED: RIGHT."""
    cp = _cp()
    n = out.size
    if n == 0:
        return
    threads = 256
    _raw("scale", _R69_SCALE_SRC)((n // threads + (n % threads > 0),), (threads,),
                                  (out, x, cp.float32(a), cp.int64(n)))


def r71_scale_grid_in_float32(out, x, a):
    """check_scale_into (GPU).  The bound fixed, the grid computed as `int(np.ceil(np.float32(n) / threads))` ("NumPy's
    ceil, float32 to match the data"): float32 holds integers exactly only up to 2**24, so the check's largest n,
    65536 * 1024 + 257, rounds down to 67109120 = 262145 * 256 and its last elements get no thread.  EXPECTED: WRONG."""
    cp = _cp()
    n = out.size
    if n == 0:
        return
    threads = 256
    blocks = int(np.ceil(np.float32(n) / np.float32(threads)))
    _raw("scale", _R69_SCALE_SRC)((blocks,), (threads,), (out, x, cp.float32(a), cp.int64(n)))


R71_BLOCK_POINTERS_UNCHECKED = R71 + "block pointers without boundary_check (reads and writes past each row)"
WRONG_SOFTMAXES.update({
    R71 + "results carved from a 1 MiB slab the function keeps (views into its memory)": r71_results_carved_from_a_slab,
    R71 + "exp(x - max) stashed in y, read back in chunks of 64, no tl.debug_barrier() between":
        r71_stash_in_y_read_back_without_a_barrier,
    R71 + "the stores of 0 skipped (mask & (p != 0)) into torch.empty": r71_zeros_not_stored,
    R71_BLOCK_POINTERS_UNCHECKED: r71_block_pointers_without_boundary_check,
})
ALSO_RIGHT_SOFTMAXES.update({
    R71 + "exp(x - max) stashed in y, tl.debug_barrier(), read back in chunks of 64":
        r71_stash_in_y_read_back_after_a_barrier,
    R71 + "block pointers with boundary_check=(1,)": r71_block_pointers,
    R71 + "an online softmax whose running max starts at float32's lowest finite value": r71_online_from_float32_lowest,
    R71 + "y = torch.empty_strided(x.shape, x.stride()), laid out like x": r71_result_laid_out_like_x,
    R71 + "the kernel run in place on y = x.clone()": r71_in_place_on_a_clone,
    R71 + "the stores of 0 skipped (mask & (p != 0)) into torch.zeros": r71_zeros_not_stored_into_zeros,
})
WRONG_SCALES[R71 + "the grid ceil(np.float32(n) / 256): n rounded to float32"] = r71_scale_grid_in_float32
ALSO_RIGHT_SCALES[R71 + "the grid n // 256 + (n % 256 > 0), a bool added to an int"] = \
    r71_scale_blocks_rounded_down_plus_one_if_remainder


# ---------------------------------------------------------------- round 71's second adversary of the 09 checks
# (adversary 123, judged on this CPU with Triton 3.9's interpreter, 2026-12-02, the checks as of 84ec37c; each docstring
# is the adversary's student's reasoning, why, and EXPECTED, with the verdict seen).  Exercise 2, two classes the CPU
# misjudged, both fixed in fix09d: (A) a scalar atomic whose result is bound to a name and whose operand happened to
# be 0.0 (a chunk far below its row's max) was judged an atomic read racing the other programs' adds (a right answer
# FAILed); (B) every atomic was taken as a barrier of its program, and atomics were neither noted as stores nor judged
# as read-backs of the program's stores (three wrong answers PARTed).  Also the right answers written otherwise that
# are new here, and three CuPy answers of exercises 1 and 3 for a GPU.
R71B = "round 71's second adversary: "


@triton.jit
def _r71b_max_kept_kernel(m_ptr, x_ptr, x_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    prev = tl.atomic_max(m_ptr + row, tl.max(v, axis=0))  # CUDA's habit: float prev = atomicMax(...)  # noqa: F841


@triton.jit
def _r71b_sum_kept_kernel(s_ptr, m_ptr, x_ptr, x_row_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    part = tl.sum(tl.exp(v - tl.load(m_ptr + row)), axis=0)
    prev = tl.atomic_add(s_ptr + row, part)  # noqa: F841


def _r71b_split(x, max_kernel, sum_kernel):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        chunk = 32 if x.device.type == "cpu" else 1024
        grid = (rows, triton.cdiv(cols, chunk))
        m = torch.full((rows,), -math.inf, dtype=torch.float32, device=x.device)
        s = torch.zeros((rows,), dtype=torch.float32, device=x.device)
        max_kernel[grid](m, x, x.stride(0), cols, CHUNK=chunk)
        sum_kernel[grid](s, m, x, x.stride(0), cols, CHUNK=chunk)
        _r69_div_kernel[grid](y, s, m, x, x.stride(0), y.stride(0), cols, CHUNK=chunk)
    return y


def r71b_split_atomics_result_kept(x):
    """check_softmax_rows.  "Long rows: split each row into chunks over a 2-D grid, three launches: the row max by
    tl.atomic_max into torch.full(-inf), the sum of exp(x - max) by tl.atomic_add into torch.zeros, then the values",
    each atomic written with CUDA's habit `prev = atomicAdd(...)` (its result bound to a name, never used).  Every
    launch reads only what an earlier launch finished, and the atomics of one launch commute (max, add).
    EXPECTED: RIGHT.  FAILed on a CPU before fix09d ("launch 2: 2 elements written by one of its programs and read by
    another", on a (2, 160) x with values up to 1000): a chunk 104 or more below its row's max adds exactly 0.0, and
    an add of 0 whose result is kept was judged an atomic read; since fix09d only an operand written as a constant
    (tl.atomic_add(p, 0)) makes one.  PART there since."""
    return _r71b_split(x, _r71b_max_kept_kernel, _r71b_sum_kept_kernel)


def r71b_split_atomics_result_dropped(x):
    """check_softmax_rows.  The same three launches with each atomic a statement (round 69's kernels; round 69
    registered only their twin whose sums start from torch.empty).  EXPECTED: RIGHT (PART on a CPU)."""
    return _r71b_split(x, _r69_max_kernel, _r69_sum_kernel)


def r71b_split_only_sum_result_kept(x):
    """check_softmax_rows.  The same, with only the sum's tl.atomic_add bound to a name.  EXPECTED: RIGHT (FAILed on a
    CPU before fix09d as its twin with both kept did: the add of 0.0 alone tripped it; PART since)."""
    return _r71b_split(x, _r69_max_kernel, _r71b_sum_kept_kernel)


@triton.jit
def _r71b_stash_kernel(y_ptr, x_ptr, flag_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr,
                       CHUNK: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    yr = y_ptr + row * y_row_stride
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    if MODE == 1:  # stashed by a tensor atomic (y from torch.zeros): "atomics land in L2, where every thread reads"
        tl.atomic_add(yr + offs, e, mask=mask, sem="relaxed")
    else:
        tl.store(yr + offs, e, mask=mask)
    if MODE == 0:  # "an atomic makes the stores above visible before I read y back"
        tl.atomic_add(flag_ptr, 1, sem="relaxed")
    s = tl.zeros((), tl.float32)
    if MODE == 3:  # (the fixer's control) a tensor atomic whose results are kept
        got = tl.atomic_add(flag_ptr + tl.arange(0, 2), tl.full((2,), 1, tl.int32))
        s += tl.sum(got, axis=0).to(tl.float32) * 0.0
    for start in range(0, BLOCK, CHUNK):  # read back in chunks: other threads' elements
        c = start + tl.arange(0, CHUNK)
        if MODE == 2:  # "atomics read the coherent copy: they see every thread's store"
            got = tl.atomic_add(yr + c, tl.zeros((CHUNK,), tl.float32), mask=c < cols, sem="relaxed")
            s += tl.sum(tl.where(c < cols, got, 0.0), axis=0)
        else:
            s += tl.sum(tl.load(yr + c, mask=c < cols, other=0.0), axis=0)
    tl.store(yr + offs, tl.load(yr + offs, mask=mask, other=0.0) / s, mask=mask)


def _r71b_stash(x, mode):
    rows, cols = x.shape
    y = torch.zeros((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        flag = torch.zeros((2,), dtype=torch.int32, device=x.device)
        _r71b_stash_kernel[(rows,)](y, x, flag, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols),
                                    CHUNK=16, MODE=mode)
    return y


def r71b_stash_read_back_after_a_tensor_atomic_kept(x):
    """check_softmax_rows.  The fixer's control (fix09d), not the adversary's: round 71's stash read back in chunks of
    16 after a tensor tl.atomic_add on two counters whose results the kernel keeps (`got = ...`), in place of
    tl.debug_barrier().  Why wrong: a tensor atomic's results stay in each thread's registers: no barrier (only a
    scalar atomic's result goes through shared memory behind one).  EXPECTED: WRONG (FAILs on a CPU; PARTs where
    every atomic whose result is kept is taken as a barrier)."""
    return _r71b_stash(x, 3)


def r71b_stash_relaxed_atomic_as_a_fence(x):
    """check_softmax_rows.  Round 71's stash (exp(x - max) stored into y, read back in chunks of 16 to be summed) with
    one `tl.atomic_add(flag, 1, sem="relaxed")` between the stash and the read-back in place of tl.debug_barrier():
    "an atomic is a memory operation that completes in order; Triton has no fence op".  Why wrong: a relaxed atomic
    whose result is dropped is one `red` made by one thread, with no bar.sync (LoadStoreOpToLLVM.cpp,
    AtomicRMWOpConversion's useRed); the other threads' stores are not ordered before this thread's read-back.
    EXPECTED: WRONG.  PARTed on a CPU before fix09d (every atomic was taken as a barrier); FAILs there since."""
    return _r71b_stash(x, 0)


def r71b_stash_by_atomic_add_read_back_by_loads(x):
    """check_softmax_rows.  The stash written into y = torch.zeros(...) by a tensor tl.atomic_add (relaxed, result
    dropped), read back by plain loads in chunks of 16, no barrier.  Why wrong: each thread adds its own elements
    (red.global.add, no bar.sync); nothing makes thread A's atomic come before thread B's load of that element.
    EXPECTED: WRONG.  PARTed on a CPU before fix09d (an atomic's writes were not noted as a stash); FAILs since."""
    return _r71b_stash(x, 1)


def r71b_stash_read_back_by_atomic_add_zero(x):
    """check_softmax_rows.  The stash stored by tl.store, read back in chunks of 16 by tl.atomic_add(p, tl.zeros(...),
    sem="relaxed") (results kept), no barrier.  Why wrong: an atomic read is no barrier: thread B's atom on an element
    may run before thread A's st of it.  EXPECTED: WRONG.  PARTed on a CPU before fix09d (an atomic's reads were not
    judged as a read-back); FAILs since."""
    return _r71b_stash(x, 2)


@triton.jit
def _r71b_half_max_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    big = tl.max(x, axis=0)
    m = big.to(tl.float16).to(tl.float32)  # "the max only guards exp from overflow: any nearby value does"
    m = tl.where((m == float("inf")) | (m == -float("inf")), big, m)  # float16 overflow: float32's max
    e = tl.exp(x - m)
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r71b_max_rounded_to_float16(x):
    """check_softmax_rows.  The row max rounded to float16 before it is subtracted (float32's kept where float16
    overflows): softmax(x) = softmax(x - c) for any c, and x - c is at most about 0.5 above 0 for values up to 1000.
    EXPECTED: RIGHT (PART on a CPU)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r71b_half_max_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r71b_cache_hints_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"), cache_modifier=".cg",
                eviction_policy="evict_first")
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask, cache_modifier=".cs")


def r71b_streaming_cache_hints(x):
    """check_softmax_rows.  One row a program, with streaming cache hints on the load (.cg, evict_first) and the store
    (.cs): each row is read and written once.  Wrong on a GPU (registered right until round 73): ptxas refuses the
    load ("Modifier '.evict_first' cannot be combined with modifier '.cg'", Triton 3.6 on the H200, call CI), so every
    call raises; Triton's interpreter ignores cache hints: PART on a CPU.  EXPECTED: WRONG."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r71b_cache_hints_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r71b_cumsum_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    total = tl.sum(tl.where(offs == BLOCK - 1, tl.cumsum(e, axis=0), 0.0), axis=0)  # the scan's last element
    tl.store(y_ptr + row * y_row_stride + offs, e / total, mask=mask)


def r71b_sum_as_the_last_of_a_cumsum(x):
    """check_softmax_rows.  The row's sum taken as the last element of tl.cumsum (a scan).  EXPECTED: RIGHT (PART on a
    CPU)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r71b_cumsum_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r71b_ticket_xchg_kernel(y_ptr, part_ptr, count_ptr, x_ptr, x_row_stride, y_row_stride, cols,
                             SPLIT: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    offs = part * CHUNK + tl.arange(0, CHUNK)
    keep = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=keep, other=-float("inf"))
    m = tl.max(v, axis=0)
    s = tl.sum(tl.where(keep & (v > -float("inf")), tl.exp(v - m), 0.0), axis=0)
    s = tl.where(m == -float("inf"), 0.0, s)
    slot = part_ptr + (row * SPLIT + part) * 2
    tl.atomic_xchg(slot, m)  # float32 exchanges: a GPU makes them; Triton 3.9's interpreter has none
    tl.atomic_xchg(slot + 1, s)
    ticket = tl.atomic_add(count_ptr + row, 1)  # acq_rel: my partials are out
    if ticket == SPLIT - 1:
        ks = tl.arange(0, SPLIT)
        ms = tl.load(part_ptr + (row * SPLIT + ks) * 2)
        ss = tl.load(part_ptr + (row * SPLIT + ks) * 2 + 1)
        big = tl.max(ms, axis=0)
        total = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - big)), axis=0)
        c = tl.arange(0, BLOCK)
        mask = c < cols
        xr = tl.load(x_ptr + row * x_row_stride + c, mask=mask, other=-float("inf"))
        tl.store(y_ptr + row * y_row_stride + c, tl.exp(xr - big) / total, mask=mask)


def r71b_split_ticket_partials_by_float32_xchg(x):
    """check_softmax_rows.  Round 69's right split row (partials published by tl.atomic_xchg, the program drawing the
    last acq_rel ticket combines them), the partials exchanged as float32 rather than as their int32 bits (from the
    adversary's note: Triton 3.9's interpreter raises "Unsupported data type" for a float32 tl.atomic_xchg, which a
    GPU makes).  EXPECTED: RIGHT.  On a CPU the check said "your function raised this" before fix09d; since, it
    names the interpreter's limit and leaves the answer for a GPU (PART)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        parts = torch.zeros((rows, R69_SPLIT, 2), dtype=torch.float32, device=x.device)
        counts = torch.zeros((rows,), dtype=torch.int32, device=x.device)
        chunk = triton.next_power_of_2(triton.cdiv(cols, R69_SPLIT))
        _r71b_ticket_xchg_kernel[(rows, R69_SPLIT)](y, parts, counts, x, x.stride(0), y.stride(0), cols,
                                                    SPLIT=R69_SPLIT, CHUNK=chunk, BLOCK=triton.next_power_of_2(cols))
    return y


_R71B_KERNELS: dict = {}


def r71b_gelu_cupyx_jit(x, bias):
    """check_bias_gelu (GPU).  The kernel written with cupyx.jit.rawkernel (CuPy's third way to write a kernel of
    one's own), a grid-stride loop over contiguous copies of x and bias, float32 or float64 through the kernel's
    argument types, on the current stream (cupyx.jit launches there).  EXPECTED: RIGHT."""
    cp = _cp()
    from cupyx import jit

    if "jit" not in _R71B_KERNELS:
        @jit.rawkernel()
        def course09_r71b_gelu(x, b, y, n, cols):
            start = jit.grid(1)
            step = jit.gridsize(1)
            for i in range(start, n, step):
                v = x[i] + b[i % cols]
                y[i] = v * 0.5 * (1.0 + cp.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))

        _R71B_KERNELS["jit"] = course09_r71b_gelu
    xc = cp.ascontiguousarray(x)
    bc = cp.ascontiguousarray(bias)
    y = cp.empty(x.shape, dtype=x.dtype)
    n = x.size
    if n:
        blocks = min((n + 255) // 256, 65535 * 32)
        # flat views (the first version passed x itself: x[i] of a 2-D array is a row, and cupyx.jit's transpiler
        # refused the row's ufunc on the H200, call CB: "CArray<float, 1, true, true> is unsupported")
        _R71B_KERNELS["jit"]((blocks,), (256,), (xc.ravel(), bc, y.ravel(), cp.int64(n), cp.int64(x.shape[-1])))
    return y


_R71B_SCALE_DOUBLE_SRC = r"""
extern "C" __global__ void course09_r71b_scale_d(float* out, const float* x, double a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = (float)(a * (double)x[i]);
    }
}
"""


def r71b_scale_n_passed_as_int32(out, x, a):
    """check_scale_into (GPU).  The bound fixed (`i < n`), but n passed as cp.int32(n) ("n fits in 32 bits") to the
    kernel's `long long n`: CuPy packs 4 bytes where the kernel reads 8, so n's upper half is whatever follows in the
    argument buffer (unlike the registered int-index answers, the kernel's types are 64-bit; only the argument is
    not).  EXPECTED: WRONG."""
    cp = _cp()
    n = out.size
    threads = 256
    _raw("scale", _R69_SCALE_SRC)(((n + threads - 1) // threads,), (threads,),
                                  (out, x, cp.float32(a), cp.int32(n)))


def r71b_scale_a_as_double_product_rounded_once(out, x, a):
    """check_scale_into (GPU).  The kernel fixed (`i < n`), `a` passed as a double and the product computed in double,
    rounded once to float: within half an ulp of the float64 reference.  EXPECTED: RIGHT."""
    cp = _cp()
    n = out.size
    threads = 256
    if n:
        _raw("course09_r71b_scale_d", _R71B_SCALE_DOUBLE_SRC)(((n + threads - 1) // threads,), (threads,),
                                                              (out, x, cp.float64(a), cp.int64(n)))


WRONG_SOFTMAXES.update({
    R71B + "round 71's stash with a relaxed tl.atomic_add on a flag in place of tl.debug_barrier()":
        r71b_stash_relaxed_atomic_as_a_fence,
    R71B + "the stash written by a tensor tl.atomic_add, read back by loads in chunks, no barrier":
        r71b_stash_by_atomic_add_read_back_by_loads,
    R71B + "the stash read back by tl.atomic_add(p, tl.zeros(...)) in chunks, no barrier":
        r71b_stash_read_back_by_atomic_add_zero,
    R71B + "(the fixer's control) the stash read back after a tensor tl.atomic_add whose results are kept":
        r71b_stash_read_back_after_a_tensor_atomic_kept,
})
ALSO_RIGHT_SOFTMAXES.update({
    R71B + "a split row in three launches, each atomic's result bound to a name (prev = ...)":
        r71b_split_atomics_result_kept,
    R71B + "a split row in three launches, tl.atomic_max and tl.atomic_add into torch.full(-inf) and torch.zeros":
        r71b_split_atomics_result_dropped,
    R71B + "a split row in three launches, only the sum's tl.atomic_add bound to a name":
        r71b_split_only_sum_result_kept,
    R71B + "the max rounded to float16 before it is subtracted": r71b_max_rounded_to_float16,
    R71B + "the sum as the last element of tl.cumsum": r71b_sum_as_the_last_of_a_cumsum,
    R71B + "a split row's partials published by a float32 tl.atomic_xchg, an acq_rel ticket":
        r71b_split_ticket_partials_by_float32_xchg,
})
ALSO_RIGHT_GELUS[R71B + "the kernel written with cupyx.jit.rawkernel, a grid-stride loop"] = r71b_gelu_cupyx_jit
WRONG_SCALES[R71B + "n passed as cp.int32 to the kernel's long long n"] = r71b_scale_n_passed_as_int32
ALSO_RIGHT_SCALES[R71B + "a passed as a double, the product rounded once"] = \
    r71b_scale_a_as_double_product_rounded_once


# Answers the checks misjudge on a GPU, known and not yet fixed (a strict xfail there).  Judged on the H200,
# 2026-11-29.
MISJUDGED_ON_A_GPU = {
    "check_bias_gelu": {
        "round 113's adversary: above 2**24 elements, two blocking streams of its own, no waits":
            "PASSed on the H200 (calls AJ and AM, 2026-12-01): the large call comes from the null stream, which "
            "orders blocking streams; from a busy CuPy stream it passed too",
        "round 44's adversary: the index, n and cols declared int (wraps past 2**31 elements)":
            "expected to PASS on a GPU, as its twins of scale_into and softmax_rows did: the check's largest x has "
            "about 2**26 elements",
    },
    "check_scale_into": {
        "round 22's adversary: an int index and an int n (wraps past 2**31 elements)":
            "PASSed on the H200: the check's largest size is about 2**26 elements",
        R71B + "n passed as cp.int32 to the kernel's long long n":
            "PASSed on the H200 (call CB, 2026-12-02; 32 checks): every n the check passes fits in 32 bits (a larger "
            "x does not fit a 12 GiB GPU), and the 4 bytes the kernel read past cp.int32(n) held 0 there",
    },
    "check_softmax_rows": {
        SPIN_WAIT: "PASSed on the H200 (call BP, 2026-12-01; 223 checks, 0.61 of copy): its programs started in grid "
                   "order there, so each waiting program of the second half found its flag set; a CPU runs the grid "
                   "reversed for even seeds and stops the waiting program (FAIL)",
        R68 + "a split row's ticket drawn with sem='relaxed'":
            "PASSed on the H200 (call BL, 2026-12-01): an ordering a relaxed atomic does not promise held in every "
            "run there; the interpreter's record of atomics FAILs it on a CPU",
        R68 + "a split row's ticket drawn with sem='release'":
            "PASSed on the H200 (call BL, 2026-12-01): as with sem='relaxed', the missing acquire went unseen there",
        R68 + "a side stream waited for both ways, no record_stream":
            "PASSed on the H200 (call BL, 2026-12-01): the check reads y at once and never drops a "
            "result whose reads are still queued on the caller's stream",
        R69 + "a split row's acq_rel ticket drawn with scope='cta'":
            "PASSed on the H200 (call BS, 2026-12-01), as its adversary thought it might: the ordering a block-scoped "
            "ticket does not promise between blocks held there, as with the relaxed and release-only tickets; the "
            "interpreter's record of atomics, with their scope, FAILs it on a CPU",
        ALIGNED_ROWS: "PASSed on the H200 (call BH, 2026-12-01): no generated shape had aligned, vectorizable rows "
                      "beside a misaligned row stride",
        "round 22's adversary: 32-bit row offsets (no .to(tl.int64))":
            "PASSed on the H200: the check never draws a tensor past 2**31 elements",
        "round 78's adversary: an unmasked load, the lanes past the row set by tl.where":
            "PASSed on the H200 (call Z1, 2026-12-01): a read past the row lands in memory the process owns and "
            "faults nothing, and tl.where drops what it read; the interpreter on a CPU sees the read (FAIL), and "
            "compute-sanitizer would",
    },
}

# Answers the checks misjudge on a CPU (Triton's interpreter), known and not yet fixed: a strict xfail where there is
# no GPU, a non-strict one on a GPU until one judges them there.  None now: round 67's third adversary's six (judged
# with Triton 3.9's interpreter, 2026-12-01) are judged right since the check records atomics, runs half its cases'
# grids in reversed order, makes the other caller's call inside the first call's launch, and runs every autotuned
# config; round 69's second adversary's four since round 70 (the programs run with axis 0 fastest in a quarter of the
# cases, atomic reads ordered as loads, the autotuner's benchmark runs made, tl.atomic_load and tl.atomic_store
# recorded with their sem); round 70's adversary's two since fix09d (each autotuned launch, an autotuner and a key,
# takes each of its other configs while the others keep their first).
MISJUDGED_ON_A_CPU: dict[str, dict[str, str]] = {
    # (round 68's second adversary's ctypes read of x's storage: FAILed since fix09ae, x's memory decoyed on a CPU)
    "check_softmax_rows": {},
}

# Answers whose kernel ends the CUDA context of the process it runs in, on a GPU (an illegal address): the check
# FAILs them with a hint to restart, and the tests judge each in a fresh process (tests/test_exercises.py).
ENDS_THE_PROCESS_ON_A_GPU = {
    "check_softmax_rows": {
        "round 44's adversary: a grid of columns, not rows (stored rows far past y's guard: the interpreter aborted "
        "the process before it stopped such stores)": "an illegal memory access on the H200 (2026-11-30)",
        "round 46's engineer: the grid of columns with tl.atomic_add in place of tl.store (the interpreter's "
        "atomics went round the watched loads and stores, and the process aborted)":
            "the same grid as the answer above: judged FAIL in a fresh process on the H200 (2026-11-30, call M; "
            "the log keeps no message, so whether the GPU was lost there is not recorded)",
        R71_BLOCK_POINTERS_UNCHECKED: "not yet run on a GPU: its stores past the last row's end may leave y's "
                                      "allocation (judged in a fresh process in case they end the context)",
    },
}

WRONG = {
    "check_bias_gelu": WRONG_GELUS,
    "check_softmax_rows": WRONG_SOFTMAXES,
    "check_scale_into": WRONG_SCALES,
}
WRONG_ON_CPU: dict[str, set[str]] = {  # exercises 1 and 3 check nothing without a GPU; 2 runs through the interpreter
    "check_bias_gelu": set(),
    "check_softmax_rows": set(WRONG_SOFTMAXES) - {
        # the GPU's speed bar
        "one launch per row, from Python", "a persistent grid of 2 programs: right values, 2 SMs busy",
        R69B_TOO_SLOW,  # (right values: three kernels and 64 atomic adds a row)
        R70_SLOT_READER, R70_COLUMN_MAJOR,  # (right values: 0.13 and 0.10 of the copy on the H200)
        # (not "an online softmax over chunks of 64 columns": its max starts at -inf, and a masked row, -inf in its
        # first 64 columns, comes out NaN, which the CPU sees since round 27)
        # rows longer than the CPU's (CPU_MAX), streams, more rows than a grid's second axis holds
        "an online softmax whose running sum is not rescaled when the max grows",
        "a side stream that waits for the caller, not waited for",
        "launched from a worker thread, joined: the worker's current stream is not the caller's",
        "the rows on the grid's second axis (at most 65535 there)",
        "round 22's adversary: at most 8 programs, the rows past 8 never written",
        "round 22's adversary: BLOCK fixed at 256 columns",
        "round 22's adversary: 32-bit row offsets (no .to(tl.int64))",
        "round 26's adversary: a side stream made current by torch.cuda.set_stream and left",
        "round 26's adversary: a CUDA graph per shape, one static input and output for every caller",
        "round 113's adversary: PyTorch's softmax above 2**24 elements, the kernel below",
        # a buffer kept per thread: on a CPU, which has no streams, one thread's two calls in flight are left for a
        # GPU (scratch kept per stream, right, is the same there: round 67's third adversary)
        "adversary 108: a statistics buffer kept per thread (threading.local), two kernels",
        "adversary 108: a staging buffer kept per thread and shape, its clone returned",
        ALIGNED_ROWS,  # the interpreter ignores hints
        # no stream on a CPU: there it is the plain launch
        R68 + "a side stream waited for both ways, no record_stream",
        # below 2**22 elements (every CPU case) it is the plain kernel
        R68B + "above 2**22 elements, a result kept by address, shape, strides and version",
        # a host's pool given back when the function returns: on a CPU the kernel has ended by then (right there)
        R69_POOL,
        # Triton 3.9, the CPU's, has no block pointers: the check leaves the answer for a GPU there
        R71_BLOCK_POINTERS_UNCHECKED},
    "check_scale_into": set(),
}
# Right values from every caller's stream, but on the H200 (calls T and V, 2026-11-30) it reached 0.29 of the copy's
# bandwidth on 32768 x 2048 against the bar of 0.3 (it starts a thread at each call, inside the timed calls): judged
# where the interpreter runs it (a CPU with Triton), not on a GPU, until someone looks at whether it or the bar is wrong
if has_cuda():
    del ALSO_RIGHT_SOFTMAXES["a worker thread that enters the caller's current stream, joined"]
    # the same thread started at each call (round 68's second adversary's control): judged on a CPU only, as above
    del ALSO_RIGHT_SOFTMAXES[R68B + "launches from a joined worker thread, the row statistics allocated in each call"]

ALSO_RIGHT = {
    "check_bias_gelu": ALSO_RIGHT_GELUS,
    "check_softmax_rows": ALSO_RIGHT_SOFTMAXES,
    "check_scale_into": ALSO_RIGHT_SCALES,
}


# ---------------------------------------------------------------- round 71's last adversary (exercise 2)
# adv125, against every fix above: 14 answers on the CPU, four right ones rejected or crashed (by the text of then).
# Fixed in fix09t: a launch's changes are poisoned in the storage, with all-ones bytes (a NaN in every float dtype),
# whatever the dtype of the view the kernel was given (`_poison_what_changed` skipped non-float views, and a result
# stored through y.view(torch.int32) was taken for not the kernel's); a kernel that calls triton.language.extra's
# libdevice, which Triton 3.9's interpreter has as stubs, is left for a GPU with the interpreter's limit named, not
# reported as the student's error; a tensor descriptor that Triton stops on its 16-byte alignment FAILs with that
# cause.  The fourth, tl.make_tensor_descriptor on the check's x, was right by the text of then only: the text since
# says that a descriptor needs 16-byte-aligned base and strides, which x here need not have (a wrong answer now).
R71C = "round 71's last adversary: "
try:
    from triton.language.extra import libdevice as _libdevice
except ImportError:  # no Triton: the answers below are not run
    _libdevice = None


@triton.jit
def _r71c_y_bits_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + c, mask=c < cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    s = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_row_stride + c, s.to(tl.int32, bitcast=True), mask=c < cols)


@triton.jit
def _r71c_bits_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    raw = tl.load(x_ptr + row * x_row_stride + c, mask=c < cols, other=-8388608)  # 0xFF800000: -inf's bits
    v = raw.to(tl.float32, bitcast=True)
    e = tl.exp(v - tl.max(v, axis=0))
    s = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_row_stride + c, s.to(tl.int32, bitcast=True), mask=c < cols)


@triton.jit
def _r71c_libdevice_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + c, mask=c < cols, other=-float("inf"))
    e = _libdevice.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + c, e / tl.sum(e, axis=0), mask=c < cols)


@triton.jit
def _r71c_descriptor_kernel(y_ptr, x_ptr, rows, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[rows, cols], strides=[x_row_stride, 1], block_shape=[1, BLOCK])
    v = xd.load([row, 0])  # zeros past cols
    c = tl.arange(0, BLOCK)[None, :]
    v = tl.where(c < cols, v, -float("inf"))
    e = tl.exp(v - tl.max(v, axis=1)[:, None])
    s = e / tl.sum(e, axis=1)[:, None]
    yd = tl.make_tensor_descriptor(y_ptr, shape=[rows, cols], strides=[y_row_stride, 1], block_shape=[1, BLOCK])
    yd.store([row, 0], s)


def r71c_y_written_as_int32_bits(x):
    """Right: "my store helper is for 32-bit words": y handed to the kernel as y.view(torch.int32), the softmax
    bitcast to int32 when stored, the float32 y returned.  EXPECTED: RIGHT (FAILed on a CPU, 2026-12-02: "the values
    it returns do not come from your kernel", the check's poisoning skipping a non-float tensor; PART since fix09t)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r71c_y_bits_kernel[(rows,)](y.view(torch.int32), x, x.stride(0), y.stride(0), cols,
                                     BLOCK=triton.next_power_of_2(cols))
    return y


def r71c_int32_views_bitcast(x):
    """Right: "bits are bits": x.view(torch.int32) and y.view(torch.int32) (views), the kernel bitcasting to float32
    and back (a student reusing an integer-typed kernel).  EXPECTED: RIGHT (FAILed on a CPU, 2026-12-02, as the answer
    above; PART since fix09t)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r71c_bits_kernel[(rows,)](y.view(torch.int32), x.view(torch.int32), x.stride(0), y.stride(0), cols,
                                   BLOCK=triton.next_power_of_2(cols))
    return y


def r71c_libdevice_exp(x):
    """Right: "tl.exp is approximate on a GPU; libdevice's expf is accurate to 1 ulp" (as Triton's tutorials import
    it).  EXPECTED: RIGHT (FAILed on a CPU, 2026-12-02, with the interpreter's error as the student's: Triton 3.9's
    interpreter leaves libdevice's functions as stubs; since fix09t the CPU leaves it for a GPU, saying why)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r71c_libdevice_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _r71c_allocator(size, alignment, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda" if torch.cuda.is_available() else "cpu")


def r71c_tensor_descriptor_loads(x):
    """Wrong: x and y through device-side tensor descriptors (tl.make_tensor_descriptor, the allocator Triton asks for
    set by triton.set_allocator), with no fallback: a descriptor needs a 16-byte-aligned base and strides, and the
    task's x may have any width, row stride and start (x of shape (1, 1) already has a row stride of 4 bytes).
    EXPECTED: WRONG (crashed on a CPU, 2026-12-02, Triton's assert "stride must be 16-byte aligned" shown as the
    student's error, when the text still offered descriptors as the alternative to block pointers; FAIL with that
    cause since fix09t)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows == 0:
        return y
    triton.set_allocator(_r71c_allocator)
    _r71c_descriptor_kernel[(rows,)](y, x, rows, x.stride(0), y.stride(0), cols,
                                     BLOCK=max(16, triton.next_power_of_2(cols)))
    return y


ALSO_RIGHT_SOFTMAXES.update({
    R71C + "y handed to the kernel as y.view(torch.int32), the softmax stored as its bits":
        r71c_y_written_as_int32_bits,
    R71C + "x and y handed to the kernel as int32 views, bitcast to float32 and back": r71c_int32_views_bitcast,
    R71C + "the exponential by triton.language.extra.libdevice.exp": r71c_libdevice_exp,
})
R71C_DESCRIPTORS = R71C + "x and y through tl.make_tensor_descriptor, whatever their alignment"
WRONG_SOFTMAXES[R71C_DESCRIPTORS] = r71c_tensor_descriptor_loads
WRONG_ON_CPU["check_softmax_rows"].add(R71C_DESCRIPTORS)  # (the interpreter asserts the alignment: FAIL)
ENDS_THE_PROCESS_ON_A_GPU["check_softmax_rows"][R71C_DESCRIPTORS] = (
    "not yet run on a GPU: a TMA descriptor of a misaligned base or stride may fault there (judged in a fresh process "
    "in case it ends the context)")


# ---------------------------------------------------------------- round 72's adversary (exercise 2)
# adv126, judged on this CPU with Triton 3.9's interpreter, 2026-12-02, the checks as of d00c024 (each docstring is
# the adversary's student's reasoning and EXPECTED).  Registered: the three the CPU misjudged, in two classes fixed in
# 1ec0cc8, and the one answer for a GPU.  (A) Another caller's call judged for its values only: it ran as the check's
# own work, unwatched, so a caller that found the answer's non-blocking lock held and computed with PyTorch, or with
# NumPy on the host, passed (PART on the CPU; on the H200, 2026-12-02, the PyTorch one PASSed 257 checks); since 1ec0cc8
# that call has its own record (nb09._AnotherCall) and is judged as any call is.  (B) Inline PTX through
# tl.inline_asm_elementwise, which Triton 3.9's interpreter refuses (NotImplementedError), was shown as the student's
# error; since 1ec0cc8 the CPU leaves it for a GPU, naming the interpreter's limit (PASSed 257 checks on the H200,
# 2026-12-02).  The others judged right, not registered (classes registered before, or a FAIL and a Triton error
# shown as the student's): a grid of max(rows, 1), a load masked by the row stride, BLOCK = cols (Triton's own error),
# torch.compile of torch.softmax (FAIL: PyTorch computed, _softmax), -min(-x) as the max with x.new_empty, a
# grid-stride loop over rows capped at 65535 programs, an RLock around the launch, tl.math.div_rn.
R72 = "round 72's adversary: "


@triton.jit
def _r72_plain_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + c, mask=c < cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + c, e / tl.sum(e, axis=0), mask=c < cols)


@triton.jit
def _r72_inline_asm_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + c, mask=c < cols, other=-float("inf"))
    t = (v - tl.max(v, axis=0)) * 1.4426950408889634  # exp(t) = 2^(t log2 e)
    e = tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [t], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + row * y_row_stride + c, e / tl.sum(e, axis=0), mask=c < cols)


def _r72_launch(kernel, x, grid_rows=None, block=None, **meta):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        kernel[(rows if grid_rows is None else grid_rows,)](y, x, x.stride(0), y.stride(0), cols,
                                                            BLOCK=block or triton.next_power_of_2(cols), **meta)
    return y


_R72_BUSY = threading.Lock()
_R72_BUSY_HOST = threading.Lock()


def r72_busy_falls_back_to_pytorch(x):
    """Wrong: "two callers at once must both be right, and I don't want one to wait for the other: a non-blocking lock
    around the launch; if another call holds it, the second caller gets torch.softmax (right values, no waiting)".
    All computing is the kernel's, whichever caller calls.  EXPECTED: WRONG (PART on a CPU and PASS on the H200,
    2026-12-02: the other caller's call was judged for its values only; FAIL since 1ec0cc8: "PyTorch computed from the
    other caller's x ... (_softmax)")."""
    if not _R72_BUSY.acquire(blocking=False):
        return torch.softmax(x, dim=-1)
    try:
        return _r72_launch(_r72_plain_kernel, x)
    finally:
        _R72_BUSY.release()


def r72_busy_falls_back_to_numpy(x):
    """Wrong: as the answer above, the busy path on the host: NumPy's softmax of x.cpu().numpy() (the host waits for
    the GPU, the values leave the kernel).  EXPECTED: WRONG (PART on a CPU, 2026-12-02; FAIL since 1ec0cc8: "the other
    caller's call read its x's values ... (.numpy())")."""
    if not _R72_BUSY_HOST.acquire(blocking=False):
        a = x.detach().cpu().numpy().astype(np.float64)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return torch.from_numpy((e / e.sum(axis=1, keepdims=True)).astype(np.float32)).to(x.device)
    try:
        return _r72_launch(_r72_plain_kernel, x)
    finally:
        _R72_BUSY_HOST.release()


def r72_grid_capped_at_65535(x):
    """Wrong (for a GPU): grid (min(rows, 65535),) "CUDA caps a grid at 65535 blocks", a program a row, no loop: the
    rows past 65535 are never written.  EXPECTED: WRONG (FAILed on the H200 in call CE, 2026-12-02, on MANY_ROWS,
    with the check before round 72's fixes; PASSed in call CF with those fixes (commit 932c2d1, landed by 80333dd):
    MISJUDGED_ON_A_GPU; a CPU's cases have at most CPU_MAX rows, where it is the plain kernel)."""
    return _r72_launch(_r72_plain_kernel, x, grid_rows=min(x.shape[0], 65535))



def r72_inline_asm_ex2(x):
    """Right: "tl.exp lowers to ex2.approx after a multiply by log2(e); I write that PTX myself with
    tl.inline_asm_elementwise" (Triton's documented API for PTX in a kernel).  EXPECTED: RIGHT (PASSed 257 checks on
    the H200, 2026-12-02; on a CPU, Triton 3.9's interpreter raises NotImplementedError for inline asm, shown as the
    student's error until 1ec0cc8, which leaves it for a GPU, naming the interpreter's limit)."""
    return _r72_launch(_r72_inline_asm_kernel, x)


R72_GRID_CAPPED = R72 + "a grid of min(rows, 65535) programs, a row each, no loop"
WRONG_SOFTMAXES.update({
    R72 + "a non-blocking lock around the launch, torch.softmax for a caller that finds it held":
        r72_busy_falls_back_to_pytorch,
    R72 + "a non-blocking lock around the launch, NumPy on x.cpu().numpy() for a caller that finds it held":
        r72_busy_falls_back_to_numpy,
    R72_GRID_CAPPED: r72_grid_capped_at_65535,
})
WRONG_ON_CPU["check_softmax_rows"].update({
    R72 + "a non-blocking lock around the launch, torch.softmax for a caller that finds it held",
    R72 + "a non-blocking lock around the launch, NumPy on x.cpu().numpy() for a caller that finds it held",
})
ALSO_RIGHT_SOFTMAXES[R72 + "exp as PTX's ex2.approx.f32 through tl.inline_asm_elementwise"] = r72_inline_asm_ex2

# Round 72's second adversary (its report, adv128): 15 answers to check_softmax_rows judged on the CPU
# (torch 2.13, Triton 3.9's interpreter), one to check_bias_gelu for a GPU.  Two wrong ones PARTed there (157 checks)
# until 740d219: a buffer of cols and row strides shared by every call (the check's concurrent calls were all on one
# shape), and the caller's elements between x's rows overwritten through a `set_` alias of x's storage.
R72B = "round 72's second adversary: "


@triton.jit
def _r72b_asserting_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 1)
    tl.device_assert(cols <= BLOCK, "a row longer than BLOCK")
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r72b_device_assert(x):
    """Right: the plain kernel guarded by tl.static_assert(BLOCK >= 1) and tl.device_assert(cols <= BLOCK).
    EXPECTED: RIGHT (PART on a CPU, 2026-12-02)."""
    return _r72_launch(_r72b_asserting_kernel, x)


@triton.jit
def _r72b_hinted_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK), BLOCK), BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r72b_hinted_arange(x):
    """Right: the lane offsets hinted (tl.multiple_of, tl.max_contiguous on tl.arange(0, BLOCK): true hints), nothing
    claimed of a row's start.  EXPECTED: RIGHT (PART on a CPU, 2026-12-02)."""
    return _r72_launch(_r72b_hinted_kernel, x)


@triton.jit
def _r72b_constexpr_kernel(y_ptr, x_ptr, x_row_stride: tl.constexpr, y_row_stride: tl.constexpr,
                           cols: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r72b_strides_as_constexpr(x):
    """Right: strides and cols as tl.constexpr (a compile per shape and stride).  EXPECTED: RIGHT (PART on a CPU,
    2026-12-02)."""
    return _r72_launch(_r72b_constexpr_kernel, x)


@triton.jit
def _r72b_halves_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, HALF: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lo = tl.arange(0, HALF)
    hi = HALF + lo
    base = x_ptr + row * x_row_stride
    a = tl.load(base + lo, mask=lo < cols, other=-float("inf"))
    b = tl.load(base + hi, mask=hi < cols, other=-float("inf"))
    m = tl.maximum(tl.max(a, axis=0), tl.max(b, axis=0))
    ea = tl.exp(a - m)
    eb = tl.exp(b - m)
    s = tl.sum(ea, axis=0) + tl.sum(eb, axis=0)
    out = y_ptr + row * y_row_stride
    tl.store(out + lo, ea / s, mask=lo < cols)
    tl.store(out + hi, eb / s, mask=hi < cols)


def r72b_row_in_two_halves(x):
    """Right: each row as two tiles of BLOCK/2 lanes, the max and sum combined from both.  EXPECTED: RIGHT (PART on a
    CPU, 2026-12-02)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r72b_halves_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols,
                                     HALF=max(1, triton.next_power_of_2(cols) // 2))
    return y


@triton.jit
def _r72b_cumsum_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.max(tl.cumsum(e, axis=0), axis=0), mask=mask)


def r72b_sum_as_cumsum_max(x):
    """Right: the row's sum as the largest of tl.cumsum(e) (positive terms: the last is the total).  EXPECTED: RIGHT
    (PART on a CPU, 2026-12-02)."""
    return _r72_launch(_r72b_cumsum_kernel, x)


def r72b_through_float64(x):
    """Right: x.double() (a convert), the kernel's float64 softmax into a float64 y, y.float() (a convert).
    EXPECTED: right in its values (PART on a CPU, 2026-12-02), WRONG on a GPU: the H200 (call CF, 2026-12-02) measured
    0.15 of its copy bandwidth, below the exercise's bar of 0.3 (the GPU's speed bar, as R69B_TOO_SLOW)."""
    xd = x.double()
    yd = torch.empty(x.shape, dtype=torch.float64, device=x.device)
    if x.shape[0]:
        _r72_plain_kernel[(x.shape[0],)](yd, xd, xd.stride(0), yd.stride(0), x.shape[1],
                                          BLOCK=triton.next_power_of_2(x.shape[1]))
    return yd.float()


@triton.jit
def _r72b_reversed_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = BLOCK - 1 - tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r72b_lanes_reversed(x):
    """Right: lane i handles column BLOCK-1-i.  EXPECTED: RIGHT (PART on a CPU, 2026-12-02)."""
    return _r72_launch(_r72b_reversed_kernel, x)


def r72b_row_max_by_item(x):
    """Wrong: each row's max by Python's max over x[r, c].item(), handed to the kernel: the max is the host's.
    EXPECTED: WRONG (FAIL on a CPU, 2026-12-02: "PyTorch computed from x ... (_local_scalar_dense)")."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = torch.tensor([max(x[r, c].item() for c in range(cols)) for r in range(rows)], dtype=torch.float32,
                         device=x.device)
        _softmax_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols,
                                        BLOCK=triton.next_power_of_2(cols))
    return y


def r72b_block_capped_at_256(x):
    """Wrong (for a GPU): BLOCK = min(next_power_of_2(cols), 256), no loop: columns past 256 never loaded or stored.
    EXPECTED: WRONG (PART on a CPU, 2026-12-02, whose shapes have at most CPU_MAX columns; a GPU must FAIL it on 1025
    or MAX_COLS columns: not yet run there)."""
    return _r72_launch(_r72_plain_kernel, x, block=min(triton.next_power_of_2(x.shape[1]), 256))


@triton.jit
def _r72b_clamped_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.where(mask, tl.exp(tl.maximum(v - tl.max(v, axis=0), -80.0)), 0.0)
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r72b_exp_clamped(x):
    """Wrong: exp's argument clamped at -80 "to avoid denormals": values far below the max (and -inf) get 1.8e-35
    of the sum, not ~0.  EXPECTED: WRONG (FAIL on a CPU, 2026-12-02)."""
    return _r72_launch(_r72b_clamped_kernel, x)


@triton.jit
def _r72b_first_shift_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.load(x_ptr + row * x_row_stride))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r72b_first_element_shift(x):
    """Wrong: the row's first value subtracted, not its max: exp overflows, a first -inf gives NaN.  EXPECTED: WRONG
    (FAIL on a CPU, 2026-12-02)."""
    return _r72_launch(_r72b_first_shift_kernel, x)


@triton.jit
def _r72b_stride_masked_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < x_row_stride, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=offs < cols)


def r72b_loads_masked_by_stride(x):
    """Wrong: the load's mask is offs < x's row stride: the gap between rows joins each row's max and sum.
    EXPECTED: WRONG (FAIL on a CPU, 2026-12-02)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r72b_stride_masked_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols,
                                            BLOCK=triton.next_power_of_2(max(cols, x.stride(0))))
    return y


@triton.jit
def _r72b_meta_kernel(y_ptr, x_ptr, meta_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.load(meta_ptr)
    x_row_stride = tl.load(meta_ptr + 1)
    y_row_stride = tl.load(meta_ptr + 2)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


_R72B_META: dict = {}


def r72b_shape_in_a_kept_buffer(x):
    """Wrong: "no shape arguments, as a CUDA graph's static inputs": one int64 buffer per device, allocated once,
    holds cols and both row strides; each call copies them in and the kernel loads them.  Two callers at once on
    different shapes: the second's copy replaces the first's numbers before the first's kernel reads them.
    EXPECTED: WRONG (PART on a CPU, 2026-12-02: every concurrent call of the check was on one shape; FAIL since
    740d219, whose other caller is on OTHER_CALLER_SHAPE: "the first caller's result is wrong")."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    meta = _R72B_META.setdefault(str(x.device), torch.zeros(3, dtype=torch.int64, device=x.device))
    meta.copy_(torch.tensor([cols, x.stride(0), y.stride(0)], dtype=torch.int64), non_blocking=True)
    if rows:
        _r72b_meta_kernel[(rows,)](y, x, meta, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _r72b_gap_read_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, rows, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    limit = tl.where(row < rows - 1, x_row_stride, cols)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < limit, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=offs < cols)


def _r72b_gap_filled(x, alias_of_x):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows == 0:
        return y
    stride = x.stride(0)
    if rows > 1 and stride > cols:
        alias_of_x(x, rows, stride)[:, cols:].fill_(-math.inf)
    block = triton.next_power_of_2(max(cols, stride if rows > 1 else cols))
    _r72b_gap_read_kernel[(rows,)](y, x, stride, y.stride(0), cols, rows, BLOCK=block)
    return y


def r72b_gap_filled_through_set(x):
    """Wrong: "the gap between x's rows is spare room": the caller's elements between x's rows filled with -inf
    through `torch.empty(0).set_(x.untyped_storage(), ...)` (an alias with a version counter of its own), then whole
    strides read.  EXPECTED: WRONG (PART on a CPU, 2026-12-02: x's version and x's view were unchanged; FAIL since
    740d219, which compares the bytes of x's whole storage: "changed the memory under x: ... outside x's view")."""
    return _r72b_gap_filled(x, lambda x, rows, stride: torch.empty(0, dtype=x.dtype, device=x.device).set_(
        x.untyped_storage(), x.storage_offset(), (rows - 1, stride), (stride, 1)))


def r72b_gap_filled_through_as_strided(x):
    """Wrong: as r72b_gap_filled_through_set, the alias x.as_strided(...), which shares x's version counter.
    EXPECTED: WRONG (FAIL on a CPU, 2026-12-02: "changed x: its version 0 -> 1")."""
    return _r72b_gap_filled(x, lambda x, rows, stride: x.as_strided((rows - 1, stride), (stride, 1)))


_R72B_GELU: dict = {}


def r72b_gelu_tanh_through_exp(x, bias):
    """Right (for a GPU): one T-templated ElementwiseKernel, tanh(z) written as 1 - 2 / (exp(2z) + 1).  EXPECTED:
    RIGHT (not yet run on a GPU; near z ~ 0 the cancellation costs about eps/|z| of tanh, times a small |v|)."""
    k = _R72B_GELU.get("k")
    if k is None:
        k = _R72B_GELU.setdefault("k", _cp().ElementwiseKernel(
            "T x, T b", "T y",
            "T v = x + b; T z = (T)0.7978845608028654 * (v + (T)0.044715 * v * v * v);"
            " T t = (T)1 - (T)2 / (exp((T)2 * z) + (T)1); y = (T)0.5 * v * ((T)1 + t);",
            "course09_r72b_gelu_exp"))
    return k(x, bias)


R72B_WRONG_ON_CPU = {
    R72B + "each row's max on the host by x[r, c].item()": r72b_row_max_by_item,
    R72B + "exp's argument clamped at -80": r72b_exp_clamped,
    R72B + "the row's first value as the shift, not its max": r72b_first_element_shift,
    R72B + "loads masked by the row stride, not cols": r72b_loads_masked_by_stride,
    R72B + "cols and row strides in one buffer kept across calls, filled by each": r72b_shape_in_a_kept_buffer,
    R72B + "the gap between x's rows filled with -inf through a set_ alias of x's storage":
        r72b_gap_filled_through_set,
    R72B + "the gap between x's rows filled with -inf through x.as_strided": r72b_gap_filled_through_as_strided,
}
WRONG_SOFTMAXES.update(R72B_WRONG_ON_CPU)
WRONG_SOFTMAXES[R72B + "BLOCK capped at 256, no loop over the rest of the row"] = r72b_block_capped_at_256
WRONG_ON_CPU["check_softmax_rows"].update(R72B_WRONG_ON_CPU)
ALSO_RIGHT_SOFTMAXES.update({
    R72B + "tl.static_assert and tl.device_assert around the plain kernel": r72b_device_assert,
    R72B + "the lane offsets hinted with tl.multiple_of and tl.max_contiguous": r72b_hinted_arange,
    R72B + "strides and cols as tl.constexpr": r72b_strides_as_constexpr,
    R72B + "each row as two half tiles": r72b_row_in_two_halves,
    R72B + "the sum as the max of tl.cumsum": r72b_sum_as_cumsum_max,
    R72B + "lanes in reverse order": r72b_lanes_reversed,
})
# right values, too slow for the exercise's bar: the H200 (call CF, 2026-12-02) measured 0.15 of its copy bandwidth on
# the 32768 x 2048 case (bar 0.3): two PyTorch converts and a float64 kernel move three times a float32 softmax's bytes
R72B_TOO_SLOW = R72B + "x.double(), a float64 kernel, .float()"
WRONG_SOFTMAXES[R72B_TOO_SLOW] = r72b_through_float64
ALSO_RIGHT_GELUS[R72B + "tanh as 1 - 2 / (exp(2z) + 1) in a T-templated ElementwiseKernel"] = \
    r72b_gelu_tanh_through_exp


# Round 72's fixes to check_softmax_rows, held back after call CF (commit 932c2d1: its other caller, moved to another
# shape, let four per-shape workspace answers of rounds 68 and 69 PART on a CPU), landed by 80333dd with both other
# callers (the same shape, then another): the five answers of rounds 72 and 72B the call-CD check misjudged are judged
# right on a CPU (the two busy fallbacks, the buffer of cols and strides, the set_ alias: FAIL; inline asm: left for a
# GPU), and on a GPU the fallbacks and the alias take the same path (each other call in its own record; x's storage
# compared on the caller's stream).  The buffer of cols and strides has no such path there: the two callers' calls are
# queued on the first caller's stream, which orders them, so only the released pairs on RELEASED_OTHER's shape race
# (registered WRONG, as in call CF's check; not confirmed on a GPU).  The grid capped at 65535 is the one GPU
# misjudgment left, measured with 932c2d1's check, whose MANY_ROWS case 80333dd leaves as it was.
MISJUDGED_ON_A_GPU["check_softmax_rows"][R72_GRID_CAPPED] = (
    "PASSed on the H200 in call CF (2026-12-02, 313 checks) with round 72's fixes to the other caller and x's storage "
    "(commit 932c2d1; 80333dd adds a same-shape other caller and leaves MANY_ROWS as it was), after FAILing in call CE "
    "(6 of 196611 values wrong on MANY_ROWS) with the check before them: the rows it never writes came out right, not "
    "NaN; the cause is not read (a lead: a y from torch.empty on memory that held the right rows, since the poisoning "
    "covers only what a launch changed)")


# ---------------------------------------------------------------- round 73's adversary (exercise 2)
# Report adv134: 7 answers to check_softmax_rows judged on the CPU (torch 2.13, Triton 3.9's
# interpreter); two wrong ones PARTed there (177 checks).  The shift skipped where |max| <= 80 FAILs since c5ef19f,
# which draws a scale of -100 (nb09.SOFTMAX_SCALES) and chooses the case (2, 40, 0, -100, 8): rows whose max lies
# between -10 and -87 with values below -87, where exp(x) unshifted is a denormal (0 on a GPU that flushes them).
# The buffer kept per (thread, nesting depth) is left for a GPU: the CPU emulates the second stream by a call inside
# the first one, which the depth key gives a buffer of its own, and the check does not watch which launch tensors
# outlive a call.  Not registered, as duplicates: tl.reduce with combine functions of its own (adversary 108's
# softmax_by_tl_reduce_combine), the log-space form (_softmax_log_space(max_first=True)), float64 inside the kernel
# (_variant("float64")).
R73 = "round 73's adversary: "


# How _r73_shifted_kernel moves each row's max before exp (round 73's two answers, round 75's one)
SHIFT_UNLESS_OUTSIDE_80, SHIFT_FLOORED_TO_64, SHIFT_FLOOR = 1, 2, 3


@triton.jit
def _r73_shifted_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    """One row a program, exp(x - s) / sum: s the row's max, moved as SHIFT says (one of the SHIFT_ constants)."""
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    m = tl.max(v, axis=0)
    if SHIFT == 1:  # no shift where |max| <= 80
        s = tl.where(tl.abs(m) > 80.0, m, 0.0)
    elif SHIFT == 2:  # within 64 below the max: exp(v - s) <= e**64
        s = tl.floor(m / 64.0) * 64.0
    else:  # the largest exponent in [0, 1)
        s = tl.floor(m)
    e = tl.exp(v - s)
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r73_shift_only_where_max_outside_80(x):
    """Wrong: "exp overflows above 88: a row whose max lies within +-80 needs no shift".  The row's other values
    underflow: [-70, -100, -75] gives exp(-100) = 3.7e-44, a float32 denormal (the middle softmax 9.4535e-14 for
    9.2950e-14 on a CPU; 0 on a GPU that flushes denormals).  EXPECTED: WRONG (PART on a CPU until c5ef19f; FAIL since:
    "values around -100, all below 0 ... values wrong")."""
    return _r72_launch(_r73_shifted_kernel, x, SHIFT=SHIFT_UNLESS_OUTSIDE_80)


@triton.jit
def _r73_stats_kernel(s_ptr, x_ptr, x_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(v, axis=0)
    tl.store(s_ptr + 2 * row, m)
    tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(v - m), axis=0))


@triton.jit
def _r73_normalize_kernel(y_ptr, x_ptr, s_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.load(s_ptr + 2 * row))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.load(s_ptr + 2 * row + 1), mask=mask)


_R73_DEPTH = threading.local()
_R73_WORK: dict = {}


def r73_workspace_per_thread_and_depth(x):
    """Wrong: "a per-thread buffer broke when my function was re-entered, so I key it by (thread, nesting depth)":
    a (max, sum) buffer per row kept from call to call, two launches (statistics, then normalize).  One thread calling
    on one stream, then at once on another (depth 0 both times), shares it while the first call's normalize waits.
    EXPECTED: WRONG (PART on a CPU, 2026-12-02: the CPU's second call, made inside the first, is at depth 1 and gets
    a buffer of its own; FAILed on the H200 (call CH), where the second call comes after the
    first returns)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if not rows:
        return y
    depth = getattr(_R73_DEPTH, "d", 0)
    key = (threading.get_ident(), depth, x.device)
    buf = _R73_WORK.get(key)
    if buf is None or buf.numel() < 2 * rows:
        buf = _R73_WORK[key] = torch.empty(2 * rows, dtype=torch.float32, device=x.device)
    _R73_DEPTH.d = depth + 1
    try:
        block = triton.next_power_of_2(cols)
        _r73_stats_kernel[(rows,)](buf, x, x.stride(0), cols, BLOCK=block)
        _r73_normalize_kernel[(rows,)](y, x, buf, x.stride(0), y.stride(0), cols, BLOCK=block)
    finally:
        _R73_DEPTH.d = depth
    return y


def r73_shift_floored_to_64(x):
    """Wrong by the task's accuracy (round 73's adversary wrote it as right): softmax is unchanged by any shift of a
    row, and here the shift is the max rounded down to a multiple of 64 (exp(<= 64) times 4096 columns stays below
    float32's max); but the arguments x - shift then lie up to 64 above 0, not at or below it: x - shift rounds at
    their magnitude (float32's spacing is 7.6e-6 at 64), and a GPU's exp errs more on a larger argument.  PART on a
    CPU (2026-12-02); on the H200 (call CH) it FAILed: 0.48473087 where 0.48472973 is right, 2.35e-6 relative, over
    the 2.4e-6 allowed on a row of 2 values around 1.  EXPECTED: WRONG."""
    return _r72_launch(_r73_shifted_kernel, x, SHIFT=SHIFT_FLOORED_TO_64)


@triton.jit
def _r73_given_max_kernel(y_ptr, x_ptr, m_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.load(m_ptr + row))
    tl.store(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def r73_max_on_a_dlpack_alias(x):
    """Wrong: each row's max by PyTorch's amax on torch.utils.dlpack.from_dlpack(to_dlpack(x)), an alias of x made
    without Tensor.__dlpack__, given to the kernel: PyTorch computes from x outside the kernel.  EXPECTED: WRONG (FAIL
    on a CPU, 2026-12-02: "PyTorch computed from x"; taint goes by the storage's data_ptr, which the alias shares
    where x starts at its storage's first element)."""
    from torch.utils import dlpack

    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = dlpack.from_dlpack(dlpack.to_dlpack(x)).amax(dim=1).contiguous()
        _r73_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


R73_WORKSPACE_PER_THREAD_AND_DEPTH = R73 + "a statistics buffer kept per (thread, nesting depth), two kernels"
R73_WRONG_ON_CPU = {
    R73 + "the max shift skipped where |max| <= 80": r73_shift_only_where_max_outside_80,
    R73 + "each row's max by PyTorch on a torch.utils.dlpack alias of x": r73_max_on_a_dlpack_alias,
}
WRONG_SOFTMAXES.update(R73_WRONG_ON_CPU)
WRONG_ON_CPU["check_softmax_rows"].update(R73_WRONG_ON_CPU)
# left for a GPU (not in WRONG_ON_CPU, as adversary 108's per-thread buffer): a CPU has no streams
WRONG_SOFTMAXES[R73_WORKSPACE_PER_THREAD_AND_DEPTH] = r73_workspace_per_thread_and_depth
R73_FLOORED_SHIFT = R73 + "the shift the max rounded down to a multiple of 64 (arguments up to 64 above 0)"
WRONG_SOFTMAXES[R73_FLOORED_SHIFT] = r73_shift_floored_to_64
# (not in WRONG_ON_CPU: a PART on a CPU, as expected of a wrong answer only a GPU shows; why the CPU's draws do not
# FAIL it was not read)


# ---------------------------------------------------------------- round 74's adversary (exercise 2)
# Report adv136: a result that is not a plain strided float tensor (sparse COO or CSR, MKL-DNN,
# quantized, nested) made the check's own code raise (_wrong_of_x_shape's arithmetic, a nested tensor's `.shape`),
# reported as the student's function raising.  Since 641eedb every site that reads a result asks nb09._result_form
# first, and _judge_softmax FAILs such a result with what it is.  Each below: the kernel's right y, returned in
# another form than the task's "new float32 tensor of x's shape".
R74 = "round 74's adversary: "


def r74_returns_sparse_coo(x):
    """Wrong: "a masked row is mostly zeros: return it sparse": y.to_sparse().  EXPECTED: WRONG (FAIL on a CPU,
    2026-12-02: "returned a torch.float32 tensor of layout torch.sparse_coo")."""
    return _softmax(x).to_sparse()


def r74_returns_sparse_csr(x):
    """Wrong: as above, y.to_sparse_csr().  EXPECTED: WRONG."""
    return _softmax(x).to_sparse_csr()


def r74_returns_mkldnn(x):
    """Wrong: "a faster CPU layout": y.to_mkldnn() (an opaque MKL-DNN tensor, CPU only; sparse on a GPU).
    EXPECTED: WRONG."""
    y = _softmax(x)
    return y.to_mkldnn() if y.device.type == "cpu" else y.to_sparse()


def r74_returns_quantized(x):
    """Wrong: "probabilities lie in [0, 1]: 8 bits are enough": torch.quantize_per_tensor(y, 1/255, 0, torch.quint8),
    a strided tensor of dtype quint8.  EXPECTED: WRONG."""
    return torch.quantize_per_tensor(_softmax(x), 1 / 255, 0, torch.quint8)


def r74_returns_nested(x):
    """Wrong: "ragged rows, as attention uses them": torch.nested.as_nested_tensor(list(y)), whose `.layout` is
    torch.strided and whose `.shape` raises (torch 2.13).  EXPECTED: WRONG."""
    return torch.nested.as_nested_tensor(list(_softmax(x)))


R74_WRONG_ON_CPU = {
    R74 + "the result returned sparse COO (y.to_sparse())": r74_returns_sparse_coo,
    R74 + "the result returned sparse CSR (y.to_sparse_csr())": r74_returns_sparse_csr,
    R74 + "the result returned as an MKL-DNN tensor (y.to_mkldnn())": r74_returns_mkldnn,
    R74 + "the result returned quantized to quint8": r74_returns_quantized,
    R74 + "the result returned as a nested tensor of its rows": r74_returns_nested,
}
WRONG_SOFTMAXES.update(R74_WRONG_ON_CPU)
WRONG_ON_CPU["check_softmax_rows"].update(R74_WRONG_ON_CPU)


# Round 74's answers that only a GPU judges (exercises 1 and 3 check nothing without one; the atomic_xchg store is
# refused by the interpreter, which takes no float32 tl.atomic_xchg: left for a GPU whole).  Not yet judged on a GPU:
# the expectations are the adversary's (adv136.md, "For a GPU").
def r74_scale_into_rebinds_out(out, x, a):
    """Wrong: the fixed kernel writes a new array, and `out = result` rebinds the local name: the caller's out is
    never written.  EXPECTED: WRONG."""
    cp = _cp()
    result = cp.empty_like(x)
    _scale_with()(result, x, a)
    out = result  # noqa: F841 -- the slip itself: the caller's out is untouched


def r74_gelu_returns_a_torch_tensor(x, bias):
    """Wrong: the CuPy kernel's result handed back as a PyTorch tensor, torch.from_dlpack(y) ("the course is about
    PyTorch"); the task asks for a CuPy array.  EXPECTED: WRONG."""
    return torch.from_dlpack(_gelu_with(_GELU, "gelu_r74")(x, bias))


@triton.jit
def _r74_xchg_kernel(y_ptr, x_ptr, x_row_stride, y_row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.atomic_xchg(y_ptr + row * y_row_stride + offs, e / tl.sum(e, axis=0), mask=mask, sem="relaxed")


def r74_store_by_atomic_xchg(x):
    """Right: each element stored once, by its row's program, through tl.atomic_xchg (sem="relaxed"): one writer per
    element, and the launch's end orders it for the caller.  Right values, but too slow for the task: 0.23 of the
    H200's copy bandwidth on 32768 x 2048, under the 0.3 asked (call CI; as R72B's float64 kernel).  On a CPU the
    interpreter refuses a float32 atomic_xchg: the whole check is left for a GPU.  EXPECTED: WRONG."""
    return _r72_launch(_r74_xchg_kernel, x)


WRONG_SCALES[R74 + "out = result: the local name rebound, the caller's out never written"] = (
    r74_scale_into_rebinds_out)
ALSO_RIGHT_SCALES[R74 + "a grid counted in bytes (4x the blocks), the extra threads stopped by i < n"] = _scale_with(
    blocks=lambda n, t: 4 * n // t + 1)
WRONG_GELUS[R74 + "the CuPy result returned as a PyTorch tensor (torch.from_dlpack)"] = (
    r74_gelu_returns_a_torch_tensor)
# Judged on the H200 in call CI: three answers registered right were wrong there (none in WRONG_ON_CPU: each PARTs
# or is skipped on a CPU)
WRONG_SOFTMAXES[R74 + "each element stored by tl.atomic_xchg (relaxed), one writer each (too slow)"] = (
    r74_store_by_atomic_xchg)
R71_BEST_CONFIG = R71 + "a split row, the autotuner's BLOCK read back on the host from best_config (shared by callers)"
WRONG_SOFTMAXES[R71_BEST_CONFIG] = r71_split_block_read_from_best_config
WRONG_SOFTMAXES[R71B + "streaming cache hints (.cg, evict_first; .cs): ptxas refuses the pair"] = (
    r71b_streaming_cache_hints)


# ---------------------------------------------------------------- round 75's adversary (exercise 2)
# Report adv138, judged on a CPU against nb09.py of 4a700c5: four wrong answers PART there, all of
# one class, a copy of x's values made without a dispatched operator and without a Tensor method of HOST_READS
# (nb09.py:2044), so the copy is not tainted (_WhatPyTorchComputes, nb09.py:2087) and what PyTorch or NumPy computes
# from it is not seen: pickle.loads(pickle.dumps(x)) and torch.save / torch.load (the storage's bytes written by
# C++), and torch.utils.dlpack.to_dlpack (torch._C._to_dlpack, not Tensor.__dlpack__) handed to np.from_dlpack.
# Each is wrong wherever it runs and is in WRONG_ON_CPU: FAILed since fix09ac (round 75), which notes a host read
# where x's bytes leave through one of nb09.BYTE_EXITS (torch._C._to_dlpack and its aliases, StorageBase._write_file,
# PyTorchFileWriter.write_record: the C++ reads that bypass the dispatcher).  Where the kernel that writes y is given x,
# the test that y was written by a launch given x holds whatever the kernel does with x; the host read FAILs it.
R75 = "round 75's adversary: "


def _r75_pickled(x):
    return pickle.loads(pickle.dumps(x))


def _r75_saved_and_loaded(x):
    buf = io.BytesIO()
    torch.save(x, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


class _Capsule:
    """A DLPack capsule held for np.from_dlpack, which asks its argument for __dlpack__ and __dlpack_device__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def _r75_numpy_alias(x):
    """A zero-copy NumPy view of x through torch.utils.dlpack.to_dlpack (a capsule, not Tensor.__dlpack__)."""
    from torch.utils import dlpack

    return np.from_dlpack(_Capsule(dlpack.to_dlpack(x)))


@triton.jit
def _r75_copy_given_x_kernel(y_ptr, s_ptr, x_ptr, s_stride, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    v = tl.load(s_ptr + row * s_stride + offsets, mask=mask)
    xv = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=0.0)  # "the kernel reads x too" (unused)
    tl.store(y_ptr + row * y_stride + offsets, tl.where(xv == xv, v, v), mask=mask)  # noqa: PLR0124


def _r75_copied(x, s, given_x):
    """A kernel copies s (PyTorch's or NumPy's softmax) into a new y; `given_x`: x is passed to it and loaded too."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        block = triton.next_power_of_2(cols)
        if given_x:
            _r75_copy_given_x_kernel[(rows,)](y, s, x, s.stride(0), x.stride(0), y.stride(0), cols, BLOCK=block)
        else:
            _copy_rows_kernel[(rows,)](y, s, s.stride(0), y.stride(0), cols, BLOCK=block)
    return y


def _r75_given_max(x, max_of):
    """Each row's max by `max_of(x)` outside the kernel, the rest by the kernel (round 73's)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = max_of(x)
        _r73_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def r75_max_by_pytorch_on_a_pickled_copy(x):
    """Wrong: each row's max by PyTorch's amax on pickle.loads(pickle.dumps(x)) ("a copy, so x stays as it was"),
    given to the kernel.  EXPECTED: WRONG (PART on a CPU, 2026-12-02: the pickled copy is not tainted; FAIL since
    fix09ac: a host read through StorageBase._write_file)."""
    return _r75_given_max(x, lambda x: _r75_pickled(x).amax(dim=-1).contiguous())


def r75_max_by_numpy_through_to_dlpack(x):
    """Wrong: each row's max by NumPy on a zero-copy alias made by torch.utils.dlpack.to_dlpack, given to the kernel.
    EXPECTED: WRONG (PART on a CPU, 2026-12-02: to_dlpack is not Tensor.__dlpack__, which HOST_READS watches; FAIL since
    fix09ac, which watches torch._C._to_dlpack; on a GPU NumPy cannot import a CUDA capsule, and the answer raises: on
    the H200 (call CM, 2026-12-02) its error went through the check, noted read and all, and the test FAILed; since
    fix09ai a call that raises after a host read FAILs on the read, with the error named: so on the H200
    (call CN)."""
    return _r75_given_max(x, lambda x: torch.from_numpy(_r75_numpy_alias(x).max(axis=-1).astype(np.float32))
                          .to(x.device))


def r75_softmax_of_a_pickled_copy_kernel_given_x(x):
    """Wrong: PyTorch's softmax of a pickled copy, written into y by a kernel given x (loaded, unused).  EXPECTED:
    WRONG (PART on a CPU, 2026-12-02; FAIL since fix09ac)."""
    return _r75_copied(x, torch.softmax(_r75_pickled(x), dim=-1).contiguous(), given_x=True)


def r75_softmax_of_a_saved_copy_kernel_given_x(x):
    """Wrong: PyTorch's softmax of a torch.save / torch.load snapshot of x, written into y by a kernel given x.
    EXPECTED: WRONG (PART on a CPU, 2026-12-02; FAIL since fix09ac)."""
    return _r75_copied(x, torch.softmax(_r75_saved_and_loaded(x), dim=-1).contiguous(), given_x=True)


def r75_softmax_of_a_pickled_copy(x):
    """Wrong: PyTorch's softmax of a pickled copy, copied into y by a kernel not given x.  EXPECTED: WRONG (FAIL on a
    CPU, 2026-12-02: "returned a tensor that nothing made from x was written into")."""
    return _r75_copied(x, torch.softmax(_r75_pickled(x), dim=-1).contiguous(), given_x=False)


def r75_shift_by_the_floor_of_the_max(x):
    """Right: floor(max) subtracted, "an integer shift": the largest exponent lies in [0, 1), the sum in [1, cols * e),
    no overflow, the softmax unchanged (unlike round 73's shift floored to a multiple of 64).  EXPECTED: RIGHT."""
    return _r72_launch(_r73_shifted_kernel, x, SHIFT=SHIFT_FLOOR)


R75_WRONG_ON_CPU = {
    R75 + "each row's max by PyTorch on pickle.loads(pickle.dumps(x))": r75_max_by_pytorch_on_a_pickled_copy,
    R75 + "each row's max by NumPy on torch.utils.dlpack.to_dlpack(x)": r75_max_by_numpy_through_to_dlpack,
    R75 + "PyTorch's softmax of a pickled copy, written by a kernel given x":
        r75_softmax_of_a_pickled_copy_kernel_given_x,
    R75 + "PyTorch's softmax of a torch.save/torch.load copy, written by a kernel given x":
        r75_softmax_of_a_saved_copy_kernel_given_x,
    R75 + "PyTorch's softmax of a pickled copy, written by a kernel not given x": r75_softmax_of_a_pickled_copy,
}
WRONG_SOFTMAXES.update(R75_WRONG_ON_CPU)
WRONG_ON_CPU["check_softmax_rows"].update(R75_WRONG_ON_CPU)
ALSO_RIGHT_SOFTMAXES[R75 + "the shift floor(max), an integer"] = r75_shift_by_the_floor_of_the_max


# ---------------------------------------------------------------- round 76's adversary (exercise 2)
# adv140 (/work/rev74/adv140, judged with Triton 3.9's interpreter, 2026-12-02): 15 answers, 8 of its 13 CPU verdicts
# misjudged, all one class: each row's max (or the whole softmax) computed off-kernel from x's values read without
# PyTorch's dispatcher, handed to a kernel that is given x too.  torch._C.TensorBase.numpy / tolist (the methods
# torch.Tensor inherits: TensorBase is immutable, nothing patches them), torch.Tensor.numpy / tolist taken at import
# before the check patched them, torch._C._to_dlpack_versioned (Tensor.__dlpack__'s other exit), a forked process
# running PyTorch's amax (the child's record is the child's).  Fixed in fix09ae: on a CPU, x's storage holds decoy
# values while the answer runs (nb09._DECOYS): only the answer's launches and PyTorch's non-view operators see x's
# own, so every such read computes from the decoy and the value rules FAIL it (round 68's second adversary's ctypes
# read too, a strict xfail until then).  Judged right before the fix, and still: TypedStorage.tolist, UntypedStorage
# indexing, torch.jit.script, float(x[r, c]) (FAIL: PyTorch computed from x), and two right answers.  Its two CuPy
# answers on x.data_ptr() are GPU-only, where x is not decoyed (MISJUDGED_ON_A_GPU).
R76 = "round 76's adversary: "


@triton.jit
def _r76_given_max_kernel(y_ptr, x_ptr, m_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf"))
    m = tl.load(m_ptr + row)
    e = tl.exp(v - m)
    tl.store(y_ptr + row * y_stride + offs, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _r76_softmax_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_stride + offs, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _r76_bits_kernel(y_ptr, xb_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    bits = tl.load(xb_ptr + row * x_stride + offs, mask=mask, other=0)
    v = tl.where(mask, bits.to(tl.float32, bitcast=True), -float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    s = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_stride + offs, s.to(tl.int32, bitcast=True), mask=mask)


def _r76_given_max(x, max_of):
    """Each row's max by `max_of(x)` outside the kernel, the rest by a kernel given x and the maxima."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        m = max_of(x)
        _r76_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _r76_rows_of_flat(x, flat):
    """Each row's max, from `flat`, a NumPy array of x's whole storage."""
    rows, cols = x.shape
    idx = x.storage_offset() + np.arange(rows)[:, None] * x.stride(0) + np.arange(cols)[None, :]
    return torch.from_numpy(flat[idx].max(axis=1).astype(np.float32).copy()).to(x.device)


_R76_TO_HOST = torch.Tensor.numpy  # "a short name for it", taken when the cell ran, before any check was called
_R76_AS_LIST = torch.Tensor.tolist


def r76_max_by_numpy_through_tensorbase(x):
    """Wrong: each row's max by NumPy on torch._C.TensorBase.numpy(x.detach().cpu()) (the method torch.Tensor
    inherits, unpatchable), the rest by the kernel.  EXPECTED: WRONG (PART on a CPU before fix09ae)."""
    return _r76_given_max(x, lambda x: torch.from_numpy(
        torch._C.TensorBase.numpy(x.detach().cpu()).max(axis=1).astype(np.float32)).to(x.device))


def r76_max_by_python_on_tensorbase_tolist(x):
    """Wrong: each row's max by Python over torch._C.TensorBase.tolist(x).  EXPECTED: WRONG (PART on a CPU before
    fix09ae).  On a GPU, tolist's C++ copies x to the host through the dispatcher (a MOVE): the H200 (call CM,
    2026-12-02) was still running it when the step's time ran out, the bandwidth bar's 32768 x 2048 case made into
    Python lists; since fix09ai a copy to the host FAILs at the first call (so on the H200, call CN)."""
    return _r76_given_max(x, lambda x: torch.tensor([max(r) for r in torch._C.TensorBase.tolist(x)],
                                                    dtype=torch.float32, device=x.device))


def r76_max_by_numpy_through_a_method_taken_at_import(x):
    """Wrong: `_R76_TO_HOST = torch.Tensor.numpy` taken at import, before the check patched it; each row's max by
    NumPy on it.  EXPECTED: WRONG (PART on a CPU before fix09ae)."""
    return _r76_given_max(x, lambda x: torch.from_numpy(_R76_TO_HOST(x.detach().cpu()).max(axis=1)
                                                        .astype(np.float32)).to(x.device))


def r76_max_by_python_on_a_list_taken_at_import(x):
    """Wrong: `_R76_AS_LIST = torch.Tensor.tolist` taken at import; each row's max by Python on it.  EXPECTED: WRONG
    (PART on a CPU before fix09ae)."""
    return _r76_given_max(x, lambda x: torch.tensor([max(r) for r in _R76_AS_LIST(x)], dtype=torch.float32,
                                                    device=x.device))


def r76_softmax_by_numpy_through_tensorbase_kernel_given_x(x):
    """Wrong: the whole softmax by NumPy on torch._C.TensorBase.numpy(x.cpu()), copied into y by a kernel given x
    (loaded, unused).  EXPECTED: WRONG (PART on a CPU before fix09ae; now "a softmax of values that are not x's")."""
    a = torch._C.TensorBase.numpy(x.detach().cpu()).astype(np.float64)
    if a.size:
        a = np.exp(a - a.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
    return _r75_copied(x, torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(x.device), given_x=True)


def r76_max_by_numpy_through_to_dlpack_versioned(x):
    """Wrong: each row's max by NumPy on a zero-copy alias from torch._C._to_dlpack_versioned(x) (Tensor.__dlpack__'s
    exit for a DLPack 1.x consumer).  EXPECTED: WRONG (PART on a CPU before fix09ae)."""
    return _r76_given_max(x, lambda x: torch.from_numpy(np.from_dlpack(_Capsule(torch._C._to_dlpack_versioned(
        x.detach().cpu()))).max(axis=1).astype(np.float32)).to(x.device))


def _r76_row_max_list(x):
    return x.amax(dim=1).tolist()


def r76_max_by_pytorch_in_a_forked_process(x):
    """Wrong: each row's max by PyTorch's amax in a forked worker process, sent back through a Pipe ("spread the work
    over cores").  EXPECTED: WRONG (CPU only: no CUDA after fork; PART on a CPU before fix09ae)."""
    import multiprocessing as mp

    def max_of(x):
        context = mp.get_context("fork")
        parent, child = context.Pipe()
        process = context.Process(target=lambda: child.send(_r76_row_max_list(x)))
        with warnings.catch_warnings():  # (a forked multi-threaded process: Python warns, as a student would see)
            warnings.simplefilter("ignore", DeprecationWarning)
            process.start()
        got = parent.recv()
        process.join()
        return torch.tensor(got, dtype=torch.float32, device=x.device)

    return _r76_given_max(x, max_of)


def r76_max_by_pytorch_on_a_storage_slice(x):
    """Wrong: each row's max by PyTorch on a tensor set_ onto x.untyped_storage()[4:] (a storage that starts one
    element in, at another address than x's storage: the taint follows storages by their start).  EXPECTED: WRONG
    (the lead of fix09ac's report; its values are the decoy's since fix09ae)."""
    if x.storage_offset() == 0:  # (no element before x: the slice would cut x's first; the plain kernel there)
        return r76_right_grid_as_numpy_int(x)

    def max_of(x):
        part = x.untyped_storage()[4:]
        alias = torch.empty(0, dtype=x.dtype, device=x.device).set_(part, x.storage_offset() - 1, x.shape, x.stride())
        return alias.amax(dim=1).contiguous()

    return _r76_given_max(x, max_of)


def r76_max_by_python_on_typed_storage_tolist(x):
    """Wrong: each row's max by Python over x.storage().tolist().  EXPECTED: WRONG (FAIL before the fix too)."""
    def max_of(x):
        flat = np.array(x.detach().cpu().storage().tolist(), dtype=np.float32)
        return _r76_rows_of_flat(x, flat)

    return _r76_given_max(x, max_of)


def r76_max_by_untyped_storage_bytes(x):
    """Wrong: each row's max by NumPy on x.untyped_storage()'s bytes read one by one (UntypedStorage.__getitem__).
    EXPECTED: WRONG (FAIL before the fix too)."""
    def max_of(x):
        s = x.detach().cpu().untyped_storage()
        return _r76_rows_of_flat(x, np.frombuffer(bytes(s[i] for i in range(s.nbytes())), dtype=np.float32))

    return _r76_given_max(x, max_of)


_R76_SCRIPTED: list = []


def _r76_amax(t: torch.Tensor) -> torch.Tensor:
    return t.amax(dim=1)


def r76_max_by_torchscript(x):
    """Wrong: each row's max by a torch.jit.script function.  EXPECTED: WRONG (FAIL before the fix too)."""
    if not _R76_SCRIPTED:
        _R76_SCRIPTED.append(torch.jit.script(_r76_amax))
    return _r76_given_max(x, lambda x: _R76_SCRIPTED[0](x).contiguous())


def r76_max_by_python_floats(x):
    """Wrong: each row's max by Python over float(x[r, c]).  EXPECTED: WRONG (FAIL before the fix too)."""
    def max_of(x):
        rows, cols = x.shape
        return torch.tensor([max(float(x[r, c]) for c in range(cols)) for r in range(rows)], dtype=torch.float32,
                            device=x.device)

    return _r76_given_max(x, max_of)


def r76_max_by_cupy_alias_of_the_pointer(x):
    """Wrong (GPU): each row's max by CuPy on an alias of x's memory made from x.data_ptr() (UnownedMemory +
    MemoryPointer), on the current stream.  EXPECTED: WRONG (not run on a GPU yet: MISJUDGED_ON_A_GPU; on a CPU,
    where CuPy has no device, the plain kernel)."""
    if not x.is_cuda:
        return r76_right_grid_as_numpy_int(x)
    import cupy as cp

    def max_of(x):
        rows, cols = x.shape
        stride = x.stride(0)
        nbytes = ((rows - 1) * stride + cols) * 4
        a = cp.ndarray((rows, cols), dtype=cp.float32, strides=(stride * 4, 4), memptr=cp.cuda.MemoryPointer(
            cp.cuda.UnownedMemory(x.data_ptr(), nbytes, x), 0))
        m = torch.empty(rows, dtype=torch.float32, device=x.device)
        out = cp.ndarray((rows,), dtype=cp.float32, memptr=cp.cuda.MemoryPointer(
            cp.cuda.UnownedMemory(m.data_ptr(), rows * 4, m), 0))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            cp.max(a, axis=1, out=out)
        return m

    return _r76_given_max(x, max_of)


def r76_max_by_host_memcpy_of_the_pointer(x):
    """Wrong (GPU): each row's max by NumPy on a host copy made by cupy.cuda.runtime.memcpy from x.data_ptr().
    EXPECTED: WRONG (not run on a GPU yet: MISJUDGED_ON_A_GPU; on a CPU, where CuPy has no device, the plain kernel)."""
    if not x.is_cuda:
        return r76_right_grid_as_numpy_int(x)
    import cupy as cp

    def max_of(x):
        rows, cols = x.shape
        n = (rows - 1) * x.stride(0) + cols
        host = np.empty(x.storage_offset() + n, dtype=np.float32)
        torch.cuda.current_stream().synchronize()
        cp.cuda.runtime.memcpy(host.ctypes.data + x.storage_offset() * 4, x.data_ptr(), n * 4,
                               cp.cuda.runtime.memcpyDeviceToHost)
        return _r76_rows_of_flat(x, host)

    return _r76_given_max(x, max_of)


def r76_right_grid_as_numpy_int(x):
    """Right: one program a row, the grid given as a NumPy integer.  EXPECTED: RIGHT."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r76_softmax_kernel[(np.int64(rows),)](y, x, x.stride(0), y.stride(0), int(cols),
                                               BLOCK=triton.next_power_of_2(int(cols)))
    return y


def r76_right_through_int32_views(x):
    """Right: x and y handed to the kernel as int32 views, bitcast to float32 and back.  EXPECTED: RIGHT."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r76_bits_kernel[(rows,)](y.view(torch.int32), x.view(torch.int32), x.stride(0), y.stride(0), cols,
                                  BLOCK=triton.next_power_of_2(cols))
    return y


R76_WRONG_ON_CPU = {
    R76 + "each row's max by NumPy through torch._C.TensorBase.numpy": r76_max_by_numpy_through_tensorbase,
    R76 + "each row's max by Python over torch._C.TensorBase.tolist": r76_max_by_python_on_tensorbase_tolist,
    R76 + "each row's max by NumPy through torch.Tensor.numpy taken at import":
        r76_max_by_numpy_through_a_method_taken_at_import,
    R76 + "each row's max by Python over torch.Tensor.tolist taken at import":
        r76_max_by_python_on_a_list_taken_at_import,
    R76 + "NumPy's softmax through TensorBase.numpy, written by a kernel given x":
        r76_softmax_by_numpy_through_tensorbase_kernel_given_x,
    R76 + "each row's max by NumPy on torch._C._to_dlpack_versioned(x)": r76_max_by_numpy_through_to_dlpack_versioned,
    R76 + "each row's max by PyTorch in a forked process": r76_max_by_pytorch_in_a_forked_process,
    R76 + "each row's max by PyTorch on a tensor set_ onto x.untyped_storage()[4:]":
        r76_max_by_pytorch_on_a_storage_slice,
    R76 + "each row's max by Python over x.storage().tolist()": r76_max_by_python_on_typed_storage_tolist,
    R76 + "each row's max by NumPy on x.untyped_storage()'s bytes, one by one": r76_max_by_untyped_storage_bytes,
    R76 + "each row's max by torch.jit.script": r76_max_by_torchscript,
    R76 + "each row's max by Python over float(x[r, c])": r76_max_by_python_floats,
}
WRONG_SOFTMAXES.update(R76_WRONG_ON_CPU)
WRONG_ON_CPU["check_softmax_rows"].update(R76_WRONG_ON_CPU)
if has_cuda():  # (fork: no CUDA in a forked child; judged on a CPU only)
    del WRONG_SOFTMAXES[R76 + "each row's max by PyTorch in a forked process"]
R76_GPU_ONLY = {
    R76 + "each row's max by CuPy on an alias of x.data_ptr()": r76_max_by_cupy_alias_of_the_pointer,
    R76 + "each row's max by NumPy on a cupy.cuda.runtime.memcpy of x.data_ptr()":
        r76_max_by_host_memcpy_of_the_pointer,
}
WRONG_SOFTMAXES.update(R76_GPU_ONLY)
# After fix09ai, on the H200 (call CN): the memcpy of x.data_ptr() to the host FAILs by construction (nb09
# patches CuPy's runtime memcpy and memcpyAsync, and matches the source by address range: CUPY_COPIES), so it is not
# listed.  CuPy's max on an alias of x.data_ptr() stays misjudged: it computes on the GPU, with nothing copied to the
# host and nothing dispatched, and the bandwidth bar (one more read of x) does not stop it.
MISJUDGED_ON_A_GPU["check_softmax_rows"][R76 + "each row's max by CuPy on an alias of x.data_ptr()"] = (
    "after fix09ai still PASSes on the H200 (call CN); its adversary predicts PASS: x's memory read on the GPU through "
    "its data_ptr() by CuPy, which no dispatch or patch sees (no copy to the host), and x is decoyed on a CPU only "
    "(nb09._DECOYS)")
ALSO_RIGHT_SOFTMAXES[R76 + "the grid given as a NumPy integer"] = r76_right_grid_as_numpy_int
ALSO_RIGHT_SOFTMAXES[R76 + "x and y handed to the kernel as int32 views, bitcast"] = r76_right_through_int32_views


# ---------------------------------------------------------------- round 77's adversary (exercise 2)
# adv142 (/work/rev74/adv142, judged with Triton 3.9's interpreter, 2026-12-02): 9 answers, 7 of its CPU verdicts
# misjudged.  Round 76's decoy covered x's own storage only: a copy of x made by PyTorch (x.clone(), x.double(), a
# MOVE, run on the true values) held x's values undecoyed, and TensorBase.numpy / tolist, ctypes or a forked process
# read them (5 WRONG answers passed).  Fixed in fix09ag: what a PyTorch operator makes from a decoyed tensor's values
# is decoyed too, its true bytes in a shadow of its own (nb09._decoyed_outputs), through any chain of operators.  A
# right kernel given an alias set_ onto a slice of x's storage FAILed (taint and decoys keyed by exact start address):
# storages now match by address range (nb09._Storages, nb09._held_of).  A kernel given torch.from_numpy(x.numpy())
# still FAILs: the task lets PyTorch alone view x around the kernel, and NumPy refuses a GPU tensor; the message now
# says x was handed to NumPy, not that its values were read.  On a GPU, x is not decoyed: the adversary predicts that
# the .cpu() copy of a clone or a float64 conversion read by TensorBase.numpy / tolist passes there (not yet run).
R77 = "round 77's adversary: "


def _r77_max_by_numpy_on_a_clone_through_tensorbase(x):
    """Wrong: each row's max by NumPy on torch._C.TensorBase.numpy(x.clone().cpu()), the rest by the kernel.
    EXPECTED: WRONG."""
    def max_of(x):
        c = x.clone().cpu()
        return torch.from_numpy(torch._C.TensorBase.numpy(c).max(axis=1).astype(np.float32)).to(x.device)

    return _r76_given_max(x, max_of)


def _r77_max_by_python_on_a_clone_through_tensorbase_tolist(x):
    """Wrong: each row's max by Python over torch._C.TensorBase.tolist(x.clone().cpu()).  EXPECTED: WRONG."""
    def max_of(x):
        rows = torch._C.TensorBase.tolist(x.clone().cpu())
        return torch.tensor([max(r) for r in rows], dtype=torch.float32, device=x.device)

    return _r76_given_max(x, max_of)


def _r77_max_by_ctypes_on_a_contiguous_copy(x):
    """Wrong: a contiguous clone of x read with ctypes.string_at(c.data_ptr()), each row's max by NumPy (a host
    pointer: CPU only).  EXPECTED: WRONG."""
    def max_of(x):
        c = x.clone(memory_format=torch.contiguous_format)
        rows, cols = c.shape
        raw = ctypes.string_at(c.data_ptr(), rows * cols * 4)
        return torch.from_numpy(np.frombuffer(raw, dtype=np.float32).reshape(rows, cols).max(axis=1).copy())

    return _r76_given_max(x, max_of)


def _r77_max_by_numpy_on_a_float64_conversion(x):
    """Wrong: each row's max by NumPy on TensorBase.numpy(x.double().cpu()), cast to float32.  EXPECTED: WRONG."""
    def max_of(x):
        d = x.double().cpu()
        return torch.from_numpy(torch._C.TensorBase.numpy(d).max(axis=1).astype(np.float32)).to(x.device)

    return _r76_given_max(x, max_of)


def _r77_max_by_pytorch_in_a_forked_process_on_a_clone(x):
    """Wrong: a clone made in the parent, each row's max by PyTorch's amax in a forked child, sent back through a
    pipe (CPU only).  EXPECTED: WRONG."""
    def max_of(x):
        c = x.clone()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.write(w, torch._C.TensorBase.numpy(c.amax(dim=1).contiguous()).astype(np.float32).tobytes())
            finally:
                os._exit(0)
        os.close(w)
        buf = b""
        while len(buf) < 4 * c.shape[0]:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            buf += chunk
        os.close(r)
        os.waitpid(pid, 0)
        return torch.from_numpy(np.frombuffer(buf, dtype=np.float32).copy())

    return _r76_given_max(x, max_of)


def _r77_launch(x, src):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r76_softmax_kernel[(rows,)](y, src, src.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _r77_kernel_on_a_numpy_alias(x):
    """Wrong (the task: PyTorch alone may view x around the kernel; NumPy refuses a GPU tensor): the kernel given
    torch.from_numpy(x.numpy()), a zero-copy alias made through NumPy (CPU only).  EXPECTED: WRONG."""
    return _r77_launch(x, torch.from_numpy(x.numpy()))


def _r77_right_kernel_on_a_deepcopy(x):
    """Right: the kernel given copy.deepcopy(x).  EXPECTED: RIGHT."""
    return _r77_launch(x, copy.deepcopy(x))


def _r77_right_kernel_on_a_storage_alias(x):
    """Right: the kernel given an alias set_ onto x's own storage, at x's offset, size and strides.  EXPECTED: RIGHT."""
    a = torch.empty(0, dtype=x.dtype, device=x.device).set_(x.untyped_storage(), x.storage_offset(), x.size(),
                                                            x.stride())
    return _r77_launch(x, a)


def _r77_right_kernel_on_a_rebased_storage_slice(x):
    """Right: the kernel given an alias set_ onto x.untyped_storage()[offset bytes:] (a storage starting at x's first
    element, inside x's storage), offset 0.  EXPECTED: RIGHT (FAILed before fix09ag: storages keyed by start)."""
    s = x.untyped_storage()[x.storage_offset() * x.element_size():]
    a = torch.empty(0, dtype=x.dtype, device=x.device).set_(s, 0, x.size(), x.stride())
    return _r77_launch(x, a)


R77_WRONG_BOTH = {
    R77 + "each row's max by NumPy on TensorBase.numpy of a clone": _r77_max_by_numpy_on_a_clone_through_tensorbase,
    R77 + "each row's max by Python over TensorBase.tolist of a clone":
        _r77_max_by_python_on_a_clone_through_tensorbase_tolist,
    R77 + "each row's max by NumPy on TensorBase.numpy of x.double()": _r77_max_by_numpy_on_a_float64_conversion,
}
R77_WRONG_CPU_ONLY = {
    R77 + "each row's max by NumPy on a clone's bytes read with ctypes": _r77_max_by_ctypes_on_a_contiguous_copy,
    R77 + "each row's max by PyTorch in a forked process, on a clone made before the fork":
        _r77_max_by_pytorch_in_a_forked_process_on_a_clone,
    R77 + "a kernel given torch.from_numpy(x.numpy())": _r77_kernel_on_a_numpy_alias,
}
WRONG_ON_CPU["check_softmax_rows"].update(R77_WRONG_BOTH)
WRONG_ON_CPU["check_softmax_rows"].update(R77_WRONG_CPU_ONLY)
WRONG_SOFTMAXES.update(R77_WRONG_BOTH)
if not has_cuda():  # (a host pointer read by ctypes, fork, x.numpy(): a CPU's x only)
    WRONG_SOFTMAXES.update(R77_WRONG_CPU_ONLY)
# On a GPU (call CL, 2026-12-02) the first of these FAILed, by the bandwidth bar (0.00 of the copy's: the host's
# round trip on the 32768 x 2048 case), not by a rule that sees the read: its adversary predicted a PASS. The other
# two take the same round trip; they are not listed as misjudged on a GPU.  Since fix09ai the three FAIL at their first
# call, by the .cpu() copy of what was made from x (nb09._to_the_host; expected, not yet run on a GPU).
ALSO_RIGHT_SOFTMAXES[R77 + "the kernel given copy.deepcopy(x)"] = _r77_right_kernel_on_a_deepcopy
ALSO_RIGHT_SOFTMAXES[R77 + "the kernel given an alias set_ onto x's storage"] = _r77_right_kernel_on_a_storage_alias
ALSO_RIGHT_SOFTMAXES[R77 + "the kernel given an alias set_ onto a slice of x's storage"] = \
    _r77_right_kernel_on_a_rebased_storage_slice


# ---------------------------------------------------------------- round 78's adversary (exercises 1, 2 and 3)
# adv144 (/work/rev75/adv144, judged with Triton 3.9's interpreter, 2026-12-02): 12 answers, 3 of its 8 CPU verdicts
# misjudged (WRONG answers accepted).  A copy of x into a storage whose size is not a whole number of float32 words
# (a uint8 buffer of 4n+1 bytes, an int16 one of 2n+1 elements) kept x's true bytes: the decoy was written only over
# whole words.  Fixed in fix09al: the decoy covers every byte of a storage, whatever its size (nb09._decoyed).  What a
# launch given x writes (a copy kernel's copy of x) was tainted but never decoyed, and TensorBase.numpy read it on the
# host: fixed in fix09al, each CPU storage a launch was given that is made from x is decoyed after the launch, its
# true bytes in a shadow (nb09._decoyed_after_a_launch).  On a GPU (not yet run) the adversary predicts: the two host
# reads FAIL by the copy to the host (nb09._to_the_host); the right answers PASS (the online one and the odd-sized
# copy read x twice: their share of the bandwidth bar is not known); the CuPy answers of exercises 1 and 3 as EXPECTED.
R78 = "round 78's adversary: "


@triton.jit
def _r78_copy_kernel(dst_ptr, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    tl.store(dst_ptr + row * cols + offs, tl.load(x_ptr + row * x_stride + offs, mask=mask), mask=mask)


@triton.jit
def _r78_online_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, CHUNK: tl.constexpr, GUARDED: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, CHUNK)
    m = tl.full((), -float("inf"), tl.float32)
    s = tl.full((), 0.0, tl.float32)
    for start in range(0, cols, CHUNK):
        mask = start + offs < cols
        v = tl.load(x_ptr + row * x_stride + start + offs, mask=mask, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(v, axis=0))
        if GUARDED:
            safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        else:
            safe = m_new
        s = s * tl.exp(m - safe) + tl.sum(tl.exp(v - safe), axis=0)
        m = m_new
    for start in range(0, cols, CHUNK):
        mask = start + offs < cols
        v = tl.load(x_ptr + row * x_stride + start + offs, mask=mask, other=-float("inf"))
        tl.store(y_ptr + row * y_stride + start + offs, tl.exp(v - m) / s, mask=mask)


@triton.jit
def _r78_f64_kernel(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf")).to(tl.float64)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * y_stride + offs, (e / tl.sum(e, axis=0)).to(tl.float32), mask=mask)


def _r78_given_max(x, m):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _softmax_given_max_kernel[(rows,)](y, x, m, x.stride(0), y.stride(0), cols,
                                           BLOCK=triton.next_power_of_2(cols))
    return y


def _r78_max_from_an_odd_sized_byte_copy(x):
    """Wrong: x's bytes copied (a MOVE) into a uint8 buffer of 4n+1 bytes (one spare byte in front), each row's max
    by NumPy on torch._C.TensorBase.numpy of it, the rest by the kernel (PASSed before fix09al: a storage that is not
    whole float32 words was not decoyed).  EXPECTED: WRONG (on a GPU: the copy_ into a CPU buffer reads x back)."""
    rows, cols = x.shape
    if not rows:
        return torch.empty((0, cols), dtype=torch.float32, device=x.device)
    buf = torch.empty(rows * cols * 4 + 1, dtype=torch.uint8)
    buf[1:].view(rows, cols * 4).copy_(x.view(torch.uint8))
    raw = torch._C.TensorBase.numpy(buf)[1:].copy()
    m = np.frombuffer(raw.tobytes(), dtype=np.float32).reshape(rows, cols).max(axis=1)
    return _r78_given_max(x, torch.from_numpy(m.astype(np.float32).copy()).to(x.device))


def _r78_max_from_an_int16_copy_of_odd_words(x):
    """Wrong: x's bytes as int16 pairs copied into an int16 buffer of 2n+1 elements (4n+2 bytes), each row's max by
    NumPy on TensorBase.numpy of it (PASSed before fix09al, as above; its max stays on the host: CPU only).
    EXPECTED: WRONG."""
    rows, cols = x.shape
    if not rows:
        return torch.empty((0, cols), dtype=torch.float32, device=x.device)
    buf = torch.empty(rows * cols * 2 + 1, dtype=torch.int16)
    buf[:-1].view(rows, cols * 2).copy_(x.view(torch.int16))
    raw = torch._C.TensorBase.numpy(buf)[:-1].copy()
    m = raw.view(np.float32).reshape(rows, cols).max(axis=1)
    return _r78_given_max(x, torch.from_numpy(m.astype(np.float32).copy()))


def _r78_max_from_a_kernel_copy_read_on_the_host(x):
    """Wrong: a copy kernel of its own copies x into a buffer, each row's max by NumPy on TensorBase.numpy of the
    copy, the rest by the softmax kernel (PASSed before fix09al: what a launch wrote was tainted, not decoyed).
    EXPECTED: WRONG (on a GPU: buf.cpu() reads the copy back)."""
    rows, cols = x.shape
    if not rows:
        return torch.empty((0, cols), dtype=torch.float32, device=x.device)
    buf = torch.empty(rows * cols, dtype=torch.float32, device=x.device)
    _r78_copy_kernel[(rows,)](buf, x, x.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    m = torch._C.TensorBase.numpy(buf.cpu() if buf.is_cuda else buf).reshape(rows, cols).max(axis=1)
    return _r78_given_max(x, torch.from_numpy(m.astype(np.float32).copy()).to(x.device))


def _r78_online(x, guarded):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r78_online_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, CHUNK=64, GUARDED=guarded)
    return y


def _r78_online_nan_on_a_masked_first_chunk(x):
    """Wrong: an online softmax in chunks of 64, its running max unguarded: a first chunk all -inf (a masked row)
    gives exp(-inf - -inf) = NaN.  EXPECTED: WRONG."""
    return _r78_online(x, False)


def _r78_right_online_in_chunks_of_64(x):
    """Right values: the online softmax in chunks of 64, the running max guarded where a chunk is all -inf (reads x
    twice).  EXPECTED: RIGHT on a CPU (PART: speed is a GPU's to judge); WRONG on a GPU, below the exercise's speed
    bar (0.23 of the H200's copy bandwidth against 0.3, call CO), as round 27's unguarded one."""
    return _r78_online(x, True)


def _r78_right_kernel_on_an_odd_sized_byte_copy(x):
    """Right: x copied into a float32 view of a uint8 buffer with 4 spare bytes in front, the kernel given the copy.
    EXPECTED: RIGHT."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        buf = torch.empty(rows * cols * 4 + 4, dtype=torch.uint8, device=x.device)
        c = buf[4:].view(torch.float32).view(rows, cols)
        c.copy_(x)
        _r78_f64_kernel[(rows,)](y, c, c.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _r78_softmax_by_numpy_of_an_odd_sized_copy_written_by_a_kernel(x):
    """Wrong: NumPy's whole softmax of an odd-sized byte copy of x, written into y by a copy kernel never given x
    (a host buffer handed to the kernel: CPU only).  EXPECTED: WRONG."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if not rows:
        return y
    buf = torch.empty(rows * cols * 4 + 1, dtype=torch.uint8)
    buf[1:].view(rows, cols * 4).copy_(x.view(torch.uint8))
    v = np.frombuffer(torch._C.TensorBase.numpy(buf)[1:].tobytes(), dtype=np.float32).reshape(rows, cols)
    v = v.astype(np.float64)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    s = torch.from_numpy((e / e.sum(axis=1, keepdims=True)).astype(np.float32))
    _r78_copy_kernel[(rows,)](y, s, cols, cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _r78_right_computed_in_float64(x):
    """Right: the softmax computed in float64 inside the kernel, stored as float32.  EXPECTED: RIGHT."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _r78_f64_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


def _r78_gelu_right_elementwise_T(x, bias):
    """Right: one ElementwiseKernel with a type placeholder T, bias broadcast.  EXPECTED: RIGHT."""
    cp = _cp()
    k = cp.ElementwiseKernel(
        "T v, T b", "T y",
        "T u = v + b; y = (T)0.5 * u * ((T)1 + tanh((T)0.7978845608028654 * (u + (T)0.044715 * u * u * u)))",
        "r78_gelu")
    return k(x, bias)


def _r78_gelu_float32_constant(x, bias):
    """Wrong for float64: sqrt(2/pi) written as the float literal 0.7978845608f.  EXPECTED: WRONG."""
    cp = _cp()
    k = cp.ElementwiseKernel(
        "T v, T b", "T y",
        "T u = v + b; y = (T)0.5 * u * ((T)1 + tanh(0.7978845608f * (u + (T)0.044715 * u * u * u)))",
        "r78_gelu_f")
    return k(x, bias)


def _r78_scale_right_cupy_multiply(out, x, a):
    """Right: cp.multiply(x, a, out=out).  EXPECTED: RIGHT."""
    cp = _cp()
    cp.multiply(x, cp.float32(a), out=out)


def _r78_scale_grid_capped_at_65535(out, x, a):
    """Wrong: the bound fixed (i < n), but the grid capped at 65535 blocks and no loop: the large size is left
    unwritten.  EXPECTED: WRONG."""
    cp = _cp()
    n = out.size
    k = cp.RawKernel(r'''extern "C" __global__ void scale(float* out, const float* x, float a, long long n) {
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a * x[i]; }''', "scale")
    k((min(65535, (n + 255) // 256 or 1),), (256,), (out, x, cp.float32(a), cp.int64(n)))


R78_WRONG_BOTH = {
    R78 + "each row's max by NumPy on a uint8 copy of x of 4n+1 bytes": _r78_max_from_an_odd_sized_byte_copy,
    R78 + "each row's max by NumPy on a copy kernel's copy of x, read with TensorBase.numpy":
        _r78_max_from_a_kernel_copy_read_on_the_host,
    R78 + "an online softmax in chunks of 64, NaN on a masked first chunk": _r78_online_nan_on_a_masked_first_chunk,
}
R78_WRONG_CPU_ONLY = {
    R78 + "each row's max by NumPy on an int16 copy of x of 2n+1 elements": _r78_max_from_an_int16_copy_of_odd_words,
    R78 + "NumPy's softmax of an odd-sized byte copy, written by a copy kernel":
        _r78_softmax_by_numpy_of_an_odd_sized_copy_written_by_a_kernel,
}
WRONG_ON_CPU["check_softmax_rows"].update(R78_WRONG_BOTH)
WRONG_ON_CPU["check_softmax_rows"].update(R78_WRONG_CPU_ONLY)
WRONG_SOFTMAXES.update(R78_WRONG_BOTH)
if not has_cuda():  # (a host buffer handed to a kernel, a maximum left on the host: a CPU's x only)
    WRONG_SOFTMAXES.update(R78_WRONG_CPU_ONLY)
# right values, below the GPU's speed bar (call CO: 0.23 of the copy bandwidth on the H200, the bar 0.3): wrong on a
# GPU, as round 27's unguarded one; left out of WRONG_ON_CPU, where speed is not judged
R78_BELOW_THE_BAR = R78 + "an online softmax in chunks of 64, its running max guarded: right values, under the bar"
WRONG_SOFTMAXES[R78_BELOW_THE_BAR] = _r78_right_online_in_chunks_of_64
ALSO_RIGHT_SOFTMAXES.update({
    R78 + "the kernel given a copy of x in a uint8 buffer with spare bytes":
        _r78_right_kernel_on_an_odd_sized_byte_copy,
    R78 + "the softmax computed in float64 inside the kernel": _r78_right_computed_in_float64,
})
WRONG_GELUS[R78 + "sqrt(2/pi) as the float literal 0.7978845608f in a body templated on T"] = _r78_gelu_float32_constant
ALSO_RIGHT_GELUS[R78 + "one ElementwiseKernel templated on T, bias broadcast"] = _r78_gelu_right_elementwise_T
WRONG_SCALES[R78 + "the grid capped at 65535 blocks, no loop"] = _r78_scale_grid_capped_at_65535
ALSO_RIGHT_SCALES[R78 + "cp.multiply(x, a, out=out)"] = _r78_scale_right_cupy_multiply
