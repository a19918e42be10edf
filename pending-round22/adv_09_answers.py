"""Adversary 22, notebook 09: new wrong and right answers.

Only check_softmax_rows is judged on a CPU (Triton's interpreter); bias_gelu and scale_into are in GPU_ONLY.
"""

from __future__ import annotations

import logging
import math
import os
import random
import warnings

import numpy as np
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


# ------------------------------------------------------------------ a plain right kernel, used by several answers
@triton.jit
def _k(y_ptr, x_ptr, x_stride, y_stride, y_col_stride, cols, BLOCK: tl.constexpr, EPS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    s = tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_stride + offs * y_col_stride, e / (s + EPS), mask=mask)


def _launch(x, y, eps=0.0):
    rows, cols = x.shape
    if rows and cols:
        _k[(rows,)](y, x, x.stride(0), y.stride(0), y.stride(1), cols, BLOCK=triton.next_power_of_2(cols), EPS=eps)
    return y


def _plain(x):
    return _launch(x, torch.empty(x.shape, dtype=torch.float32, device=x.device))


# ------------------------------------------------------------------ wrong: 32-bit row offsets (never > 2**31 elements)
@triton.jit
def _k32(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # int32: row * x_stride wraps past 2**31 elements
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax_int32_row_offsets(x):
    """WRONG: the lecture's kernel without `.to(tl.int64)` on the program id: `row * x_stride` is computed in 32
    bits, and wraps once x holds more than 2**31 elements (e.g. 600,000 rows of 4096 columns, 9.8 GB, which the task
    allows: rows >= 0, cols <= 4096).  The notebook's own discussion names the bug; the check never draws a tensor
    past 2**31 elements (largest: BIG, 2**26), on a CPU or a GPU."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _k32[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


# ------------------------------------------------------------------ wrong: process state changed and left
def softmax_silences_warnings(x):
    """WRONG: warnings.simplefilter("ignore") to hush Triton's interpreter, left set: every warning of the caller's
    program (DeprecationWarning, UserWarning of PyTorch...) is lost after the first call.  Same class as
    np.seterr(all='ignore'), which the check watches; the warnings filters it does not."""
    warnings.simplefilter("ignore")
    return _plain(x)


def softmax_disables_logging(x):
    """WRONG: logging.disable(logging.WARNING) to quiet Triton's/PyTorch's log lines, left for the caller: the
    caller's own logging.warning(...) prints nothing after the call."""
    logging.disable(logging.WARNING)
    return _plain(x)


def softmax_seeds_numpy(x):
    """WRONG: np.random.seed(0) "for reproducibility" in a function that draws nothing: the caller's NumPy global
    stream restarts at every call (the check watches torch.manual_seed's generator, not NumPy's)."""
    np.random.seed(0)
    return _plain(x)


def softmax_seeds_python_random(x):
    """WRONG: random.seed(0) in every call, same class: Python's global generator reset under the caller."""
    random.seed(0)
    return _plain(x)


def softmax_sets_print_options(x):
    """WRONG: torch.set_printoptions(precision=10, sci_mode=False) for a debugging print, left for the caller."""
    torch.set_printoptions(precision=10, sci_mode=False)
    return _plain(x)


def softmax_sets_interop_env(x):
    """WRONG (weak): os.environ['TORCH_SHOW_CPP_STACKTRACES'] = '1' set inside the function for debugging, left:
    the process environment changed for the caller and every subprocess it starts (the check reads no env var)."""
    os.environ["TORCH_SHOW_CPP_STACKTRACES"] = "1"
    return _plain(x)


def softmax_sets_cudnn_benchmark(x):
    """WRONG: torch.backends.cudnn.benchmark = True ("faster kernels"), left for the caller: its convolutions are
    autotuned and nondeterministic after the call.  settings.py knows this setting; nb09 does not read it."""
    torch.backends.cudnn.benchmark = True
    return _plain(x)


def softmax_sets_numpy_printoptions(x):
    """WRONG: np.set_printoptions(precision=10, suppress=True) for a debugging print of the result, left set."""
    np.set_printoptions(precision=10, suppress=True)
    return _plain(x)


def softmax_enters_a_device_context(x):
    """WRONG: torch.device(x.device).__enter__() ("allocate on x's device"), never left: every later factory call of
    the caller (torch.empty, torch.arange) goes to x's device through the function-mode stack, which the check does
    not read (it reads torch.set_default_device's, not the stack's depth)."""
    torch.device(x.device).__enter__()
    return _plain(x)


# ------------------------------------------------------------------ wrong: a bias below the tolerance
def softmax_eps_in_the_denominator(x):
    """WRONG (borderline): e / (sum + 1e-6), the habitual "avoid a division by zero" epsilon.  The sum is >= 1
    after the max is subtracted, so every output is biased low by up to 1e-6 relatively (8 float32 ulps, the same
    in every value: rows sum to 1 - 1e-6), below softmax_rtol's 2.16e-6 floor.  Round 19/20 caught 2e-5 and
    1e-5; the class is 'a systematic bias below the per-value tolerance'."""
    return _launch(x, torch.empty(x.shape, dtype=torch.float32, device=x.device), eps=1e-6)


def softmax_eps_1_5e6(x):
    """WRONG (borderline): e / (sum + 1.5e-6): 12 ulps of systematic bias, still below the floor."""
    return _launch(x, torch.empty(x.shape, dtype=torch.float32, device=x.device), eps=1.5e-6)


# ------------------------------------------------------------------ wrong: the sizes the CPU draws
def softmax_grid_capped_at_8_rows(x):
    """WRONG: at most 8 programs ("enough for the examples"), rows past 8 never written: the CPU draws at most 4
    rows, so only a GPU sees it (GPU-judged: 301 and 65537 rows)."""
    rows, cols = x.shape
    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    r = min(rows, 8)
    if r:
        _k[(r,)](y, x, x.stride(0), y.stride(0), 1, cols, BLOCK=triton.next_power_of_2(cols), EPS=0.0)
    return y


def softmax_block_256(x):
    """WRONG: BLOCK fixed at 256 ("rows are short"): rows longer than 256 never read past it; the CPU draws at most
    160 columns (GPU-judged)."""
    rows, cols = x.shape
    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    if rows:
        _k[(rows,)](y, x, x.stride(0), y.stride(0), 1, cols, BLOCK=256, EPS=0.0)
    return y


# ------------------------------------------------------------------ right, written differently
def softmax_column_major_result(x):
    """RIGHT: the result in column-major layout (torch.empty(cols, rows).t()), the kernel given y's column stride."""
    rows, cols = x.shape
    return _launch(x, torch.empty(cols, rows, dtype=torch.float32, device=x.device).t())


def softmax_flat_buffer_viewed(x):
    """RIGHT: a flat buffer of rows*cols, the kernel writes it, returned as .view(rows, cols)."""
    rows, cols = x.shape
    flat = torch.empty(rows * cols, dtype=torch.float32, device=x.device)
    y = flat.view(rows, cols)
    _launch(x, y)
    return y


def softmax_into_a_clone(x):
    """RIGHT: y = x.clone(), the kernel overwrites the clone in place (reads y, writes y)."""
    y = x.clone()
    rows, cols = y.shape
    if rows and cols:
        _k[(rows,)](y, y, y.stride(0), y.stride(0), 1, cols, BLOCK=triton.next_power_of_2(cols), EPS=0.0)
    return y


@triton.jit
def _k_builtin(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf"))
    tl.store(y_ptr + row * y_stride + offs, tl.softmax(x), mask=mask)


def softmax_tl_softmax(x):
    """RIGHT: Triton's own tl.softmax inside the student's kernel."""
    rows, cols = x.shape
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    if rows:
        _k_builtin[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _k_f64(y_ptr, x_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=-float("inf")).to(tl.float64)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + offs, (e / tl.sum(e, axis=0)).to(tl.float32), mask=mask)


def softmax_float64_inside(x):
    """RIGHT: the kernel computes in float64 and stores float32."""
    rows, cols = x.shape
    y = x.new_empty(x.shape)
    if rows:
        _k_f64[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return y


@triton.jit
def _stats(s_ptr, x_ptr, x_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    tl.store(s_ptr + 2 * row, m)
    tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def _apply(y_ptr, x_ptr, s_ptr, x_stride, y_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * x_stride + offs, mask=mask, other=0.0)
    m = tl.load(s_ptr + 2 * row)
    s = tl.load(s_ptr + 2 * row + 1)
    tl.store(y_ptr + row * y_stride + offs, tl.exp(x - m) / s, mask=mask)


def softmax_two_kernels(x):
    """RIGHT: two Triton kernels, one for each row's (max, sum of exponentials), one that writes the result."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        stats = torch.empty((rows, 2), dtype=torch.float32, device=x.device)
        b = triton.next_power_of_2(cols)
        _stats[(rows,)](stats, x, x.stride(0), cols, BLOCK=b)
        _apply[(rows,)](y, x, stats, x.stride(0), y.stride(0), cols, BLOCK=b)
    return y


@triton.jit
def _k_three_pass(y_ptr, x_ptr, x_stride, y_stride, cols, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xs = x_ptr + row * x_stride
    ys = y_ptr + row * y_stride
    m = -float("inf")
    for start in range(0, cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        m = tl.maximum(m, tl.max(tl.load(xs + offs, mask=offs < cols, other=-float("inf")), axis=0))
    s = 0.0
    for start in range(0, cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        s += tl.sum(tl.exp(tl.load(xs + offs, mask=offs < cols, other=-float("inf")) - m), axis=0)
    for start in range(0, cols, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        mask = offs < cols
        tl.store(ys + offs, tl.exp(tl.load(xs + offs, mask=mask, other=0.0) - m) / s, mask=mask)


def softmax_three_passes(x):
    """RIGHT: three passes over the row in chunks of up to 1024 columns (max, sum, write)."""
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float32, device=x.device)
    if rows:
        _k_three_pass[(rows,)](y, x, x.stride(0), y.stride(0), cols, CHUNK=min(triton.next_power_of_2(cols), 1024))
    return y


def softmax_under_inference_mode(x):
    """RIGHT: the whole call inside torch.inference_mode() (put back by the with block); the result is an inference
    tensor."""
    with torch.inference_mode():
        return _plain(x)


def softmax_grid_lambda_detached(x):
    """RIGHT: x.detach().contiguous() first, a grid given as a lambda of META, warnings silenced only inside a
    `with warnings.catch_warnings()` block."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xc = x.detach().contiguous()
        rows, cols = xc.shape
        y = torch.empty_strided((rows, cols), (max(cols, 1), 1), dtype=torch.float32, device=x.device)
        if rows:
            _k[lambda meta: (rows,)](y, xc, xc.stride(0), y.stride(0), 1, cols,
                                     BLOCK=triton.next_power_of_2(cols), EPS=0.0)
        return y


WRONG = {
    "warnings.simplefilter('ignore') left set": softmax_silences_warnings,
    "logging.disable(WARNING) left set": softmax_disables_logging,
    "np.random.seed(0) in every call": softmax_seeds_numpy,
    "random.seed(0) in every call": softmax_seeds_python_random,
    "torch.set_printoptions left set": softmax_sets_print_options,
    "os.environ changed and left": softmax_sets_interop_env,
    "torch.backends.cudnn.benchmark left True": softmax_sets_cudnn_benchmark,
    "np.set_printoptions left set": softmax_sets_numpy_printoptions,
    "torch.device(...).__enter__() never left": softmax_enters_a_device_context,
    "e / (sum + 1e-6)": softmax_eps_in_the_denominator,
    "e / (sum + 1.5e-6)": softmax_eps_1_5e6,
    "32-bit row offsets (no .to(tl.int64))": softmax_int32_row_offsets,
}
ALSO_RIGHT = {
    "column-major result": softmax_column_major_result,
    "flat buffer viewed": softmax_flat_buffer_viewed,
    "kernel in place on a clone": softmax_into_a_clone,
    "tl.softmax": softmax_tl_softmax,
    "float64 inside the kernel": softmax_float64_inside,
    "two kernels: stats, then apply": softmax_two_kernels,
    "three passes in chunks": softmax_three_passes,
    "inside torch.inference_mode()": softmax_under_inference_mode,
    "detach+contiguous, grid lambda, catch_warnings": softmax_grid_lambda_detached,
}


# ================================================================== GPU-only answers (bias_gelu, scale_into, softmax)
_GELU = "T v = x + b; y = (T)0.5 * v * ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v)));"
_cache: dict = {}


def _gelu_kernel():
    import cupy as cp

    if "gelu" not in _cache:
        _cache["gelu"] = cp.ElementwiseKernel("T x, T b", "T y", _GELU, "adv22_gelu")
    return _cache["gelu"]


def gelu_on_ptds(x, bias):
    """WRONG: the kernel queued on CuPy's per-thread default stream (cp.cuda.Stream.ptds), not the caller's current
    stream: neither waits for the other."""
    import cupy as cp

    with cp.cuda.Stream.ptds:
        return _gelu_kernel()(x, bias)


def gelu_done_event_recorded_before_launch(x, bias):
    """WRONG: a side stream that waits for the caller, and an event the caller waits on, but the event is recorded
    on the side stream BEFORE the kernel is queued there (an event recorded too early)."""
    import cupy as cp

    caller = cp.cuda.get_current_stream()
    side = cp.cuda.Stream(non_blocking=True)
    side.wait_event(caller.record())
    done = side.record()  # too early
    with side:
        y = _gelu_kernel()(x, bias)
    caller.wait_event(done)
    return y


def gelu_waits_on_the_event_of_the_last_call(x, bias):
    """WRONG: a stream made once; the caller waits on the event recorded at the end of the *previous* call (kept in
    a dict), and the side stream waits for the caller: the first call waits on nothing, each later call on a stale
    event."""
    import cupy as cp

    if "side" not in _cache:
        _cache["side"] = cp.cuda.Stream(non_blocking=True)
    side, caller = _cache["side"], cp.cuda.get_current_stream()
    side.wait_event(caller.record())
    if "done" in _cache:
        caller.wait_event(_cache["done"])
    with side:
        y = _gelu_kernel()(x, bias)
    _cache["done"] = side.record()
    return y


def gelu_right_with_a_stream_pool_and_both_waits(x, bias):
    """RIGHT: a side stream taken from a round-robin pool of two, waits in both directions, and the result's memory
    allocated on the caller's stream before the side stream writes it (no pool reuse race)."""
    import cupy as cp

    pool = _cache.setdefault("pool", [cp.cuda.Stream(non_blocking=True) for _ in range(2)])
    side = pool[_cache.setdefault("turn", [0])[0] % 2]
    _cache["turn"][0] += 1
    caller = cp.cuda.get_current_stream()
    y = cp.empty(x.shape, dtype=x.dtype)  # on the caller's stream
    side.wait_event(caller.record())
    with side:
        _gelu_kernel()(x, bias, y)
    caller.wait_event(side.record())
    return y


def scale_on_ptds(out, x, a):
    """WRONG: the fixed RawKernel launched inside `with cp.cuda.Stream.ptds:`: not the caller's stream, no waits."""
    import cupy as cp

    k = _cache.setdefault("scale", cp.RawKernel(r"""
extern "C" __global__ void scale(float* out, const float* x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}""", "scale"))
    n = x.size
    if n:
        with cp.cuda.Stream.ptds:
            k(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int64(n)))


def scale_event_too_early(out, x, a):
    """WRONG: side stream waits for the caller; the caller waits on an event recorded on the side stream before the
    launch."""
    import cupy as cp

    caller = cp.cuda.get_current_stream()
    side = cp.cuda.Stream(non_blocking=True)
    side.wait_event(caller.record())
    done = side.record()
    n = x.size
    if n:
        k = cp.RawKernel(r"""
extern "C" __global__ void scale2(float* out, const float* x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}""", "scale2")
        k(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int64(n)), stream=side)
    caller.wait_event(done)


def scale_host_waits_for_caller_only(out, x, a):
    """WRONG: cp.cuda.get_current_stream().synchronize() first (a host wait for the caller's stream, which hides
    the incoming race), then the kernel on the null stream, which the caller's (non-blocking) stream does not wait
    for: the outgoing race stays."""
    import cupy as cp

    cp.cuda.get_current_stream().synchronize()
    with cp.cuda.Stream.null:
        cp.multiply(x, cp.float32(a), out=out)


def scale_int_index(out, x, a):
    """WRONG: the bound fixed, but the index declared `int i = blockIdx.x * blockDim.x + threadIdx.x` (and n as
    int): past 2**31 elements i wraps negative, passes `i < n`, and writes before out (the notebook's own question
    in cell 17).  The check's largest n is 65535 * 1024 + 257 (~2**26), so this passes on a GPU too."""
    import cupy as cp

    k = _cache.setdefault("scale_int", cp.RawKernel(r"""
extern "C" __global__ void scale_int(float* out, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i];
}""", "scale_int"))
    n = x.size
    if n:
        k(((n + 255) // 256,), (256,), (out, x, cp.float32(a), cp.int32(n)))


def softmax_on_the_default_stream(x):
    """WRONG (GPU): the launch inside `with torch.cuda.stream(torch.cuda.default_stream()):` ("to be safe"): a caller
    on a side stream is neither waited for nor waits."""
    with torch.cuda.stream(torch.cuda.default_stream(x.device)):
        return _plain(x)


def softmax_side_stream_caller_waits_only(x):
    """WRONG (GPU): a side stream the caller waits for, which does not wait for the caller's write of x."""
    caller = torch.cuda.current_stream(x.device)
    side = torch.cuda.Stream(x.device)
    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    with torch.cuda.stream(side):
        _launch(x, y)
    caller.wait_stream(side)
    y.record_stream(caller)
    return y


def softmax_event_recorded_before_launch(x):
    """WRONG (GPU): side stream waits for the caller; the event the caller waits on is recorded before the launch."""
    caller = torch.cuda.current_stream(x.device)
    side = torch.cuda.Stream(x.device)
    side.wait_stream(caller)
    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    done = torch.cuda.Event()
    done.record(side)
    with torch.cuda.stream(side):
        _launch(x, y)
    caller.wait_event(done)
    return y


def softmax_grid_capped_8(x):
    """WRONG: see softmax_grid_capped_at_8_rows."""
    return softmax_grid_capped_at_8_rows(x)


GPU_ONLY = {
    "gelu on Stream.ptds": (gelu_on_ptds, "wrong", "check_bias_gelu", "per-thread default stream: no waits"),
    "gelu event recorded before launch": (gelu_done_event_recorded_before_launch, "wrong", "check_bias_gelu",
                                          "the caller waits on an event that precedes the kernel"),
    "gelu waits on last call's event": (gelu_waits_on_the_event_of_the_last_call, "wrong", "check_bias_gelu",
                                        "a stale event: the caller never waits for this call's kernel"),
    "gelu stream pool, both waits, y on caller": (gelu_right_with_a_stream_pool_and_both_waits, "right",
                                                  "check_bias_gelu", "waits both ways, result allocated on caller"),
    "scale on Stream.ptds": (scale_on_ptds, "wrong", "check_scale_into", "per-thread default stream: no waits"),
    "scale event recorded before launch": (scale_event_too_early, "wrong", "check_scale_into",
                                           "the caller waits on an event that precedes the kernel"),
    "scale: host waits for the caller, kernel on the null stream": (scale_host_waits_for_caller_only, "wrong",
                                                                    "check_scale_into",
                                                                    "a host read hides the incoming race only"),
    "scale: 32-bit int index": (scale_int_index, "wrong", "check_scale_into",
                                "wraps past 2**31 elements; largest n drawn ~2**26: passes on a GPU too"),
    "softmax: 32-bit row offsets": (softmax_int32_row_offsets, "wrong", "check_softmax_rows",
                                    "wraps past 2**31 elements; largest drawn 2**26: passes on a GPU too"),
    "softmax on torch's default stream": (softmax_on_the_default_stream, "wrong", "check_softmax_rows",
                                          "not the caller's current stream"),
    "softmax side stream, only the caller waits": (softmax_side_stream_caller_waits_only, "wrong",
                                                   "check_softmax_rows", "reads x before the caller wrote it"),
    "softmax event recorded before launch": (softmax_event_recorded_before_launch, "wrong", "check_softmax_rows",
                                             "caller reads y before the kernel ran"),
    "softmax grid capped at 8 programs": (softmax_grid_capped_8, "wrong", "check_softmax_rows",
                                          "rows past 8 unwritten; CPU draws <= 4 rows"),
    "softmax BLOCK fixed at 256": (softmax_block_256, "wrong", "check_softmax_rows",
                                   "rows past 256 columns; CPU draws <= 160 columns"),
    "softmax three passes in chunks": (softmax_three_passes, "right", "check_softmax_rows",
                                       "right values; speed bar to see"),
}
