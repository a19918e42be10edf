"""Checks for the exercises of notebook 09 (your own kernels): a fused elementwise kernel in CuPy, a row-wise
softmax in Triton, and a RawKernel whose bounds bug the student finds and fixes.

Each check is a property over generated cases (utils/exercises/properties.py) against a float64 reference.

- `check_bias_gelu` (GPU, CuPy): shapes of 0, 1, odd and large sizes, float32 and float64, contiguous,
  transposed and strided views, called from every kind of CuPy caller (utils/exercises/streams.py) right behind a
  write on the caller's stream that a window of earlier work delays, with every other stream late (those the answer
  creates too): values within assert_close's default tolerance for float32 (lecture 06), and for float64 within what
  float64 arithmetic can miss by (GELU_F64_EPS: a step through float is far outside it), read by the caller's
  stream at once; no host wait; the caller's next work not late behind another stream.  Every array the answer
  allocates comes with guards and starts as NaN (`_GuardedAllocations`): nothing written just outside it, and no
  more than EAGER arrays of x's size (CuPy's operators one at a time are not one kernel of your own).  Then two
  calls on one shape (the first result must survive the second) and one of more than 65535 blocks of 1024 threads
  (a 1-D grid holds 2**31 - 1 blocks: a kernel that caps its grid must loop); and one call that launches exactly
  one kernel (counted by CUPTI through torch.profiler, where it counts: in-place operators or `x + bias` before a
  kernel allocate too little for the EAGER rule).  Empty x and bias are views with memory behind them (a read past
  an empty array's end FAILs, not a lost context).  Nothing of it runs on a CPU (CuPy kernels need a GPU, and
  NVRTC, which compiles the source, needs CUDA): `cpu_checks=0`.
- `check_softmax_rows` (Triton): rows 0, 1 and odd, columns 1, odd, not a power of two and up to 4096, rows
  further apart than their length, each case from a caller whose default dtype is float64 (FLOAT64_CALLER): a
  float32 result within `softmax_rtol(cols)` (and a little more per unit below the row's max) of a float64 softmax,
  relatively for every output, and at least one launch; then three calls on one shape: every earlier result must
  survive every later call, with every value the answer's launches write replaced by NaN right after each launch the
  second call's result must not be right (its values come from the answer's kernel), and the third call, on the
  second call's tensor with new values written through `x.data` (no version bump) from a caller whose default dtype
  is float64, must return their softmax; on a GPU also a share of this GPU's own copy bandwidth (`y.copy_(x)`) on a
  large shape.  In every call, PyTorch may only allocate, view, copy or convert x and what is
  made from it (`_WhatPyTorchComputes`; what a Triton launch writes is made from x when a tensor it was given, at
  the top level or inside a tuple, is, and an operator the answer defined with `triton_op`, `custom_op` or
  torch.library's define and impl is watched as the answer's own code; wrap_triton's higher-order operator is let
  through to its launch), and a result that a launch wrote must be made from x; threads started during the call
  and jobs that ThreadPoolExecutor workers run during it are watched too, x's values handed outside PyTorch
  (`.numpy()`, `.tolist()`, DLPack, CUDA's array interface) FAIL, and the global settings (default dtype, grad
  mode, NumPy's error handling, anomaly detection, threads, flush-denormal, the default generator...) and x's
  requires_grad must be as they were (the settings are put back).  x often starts past its storage's first element;
  an empty x returned as the result is no new tensor.
  On a CPU with Triton installed, the values on small shapes run through Triton's interpreter
  (`TRITON_INTERPRET=1`, set before the kernel is defined), each launch on guarded copies of its tensors (a write
  past a tensor FAILs instead of corrupting the heap), @triton.autotune taking its first config; without Triton the
  check says it needs it (`requires=("triton",)`).  Each call has CALL_LIMIT_S (SIGALRM: the main thread of a POSIX
  process, and Python code only; a GPU kernel that never ends still hangs the synchronize after it).
- `check_scale_into` (GPU, CuPy): the fixed kernel writes `a * x` into `out` (`a` a Python float or int, or a NumPy
  scalar: FACTORS), `out` a view into a larger buffer whose guard regions on both sides must stay untouched (a write
  past the end shows without compute-sanitizer, which CuPy's pool hides small overruns from), for sizes of 0, 1,
  odd, around multiples of the block, large and more than 65535 blocks of 1024 threads (a 1-D grid holds 2**31 - 1
  blocks: a kernel that caps its grid must loop), called from every kind of CuPy caller right after its stream
  wrote x (in half the cases behind a window of earlier work longer than the lateness of the answer's streams: a
  kernel there that does not wait for the caller's stream reads the infinity x held), and read on the caller's
  stream right after the call (streams the answer creates or enters start late: a kernel there that the caller's
  stream does not wait for has not run yet); each call has CALL_LIMIT_S.
"""

from __future__ import annotations

import ast
import bisect
import contextvars
import dis
import gc
import inspect
import linecache
import math
import os
import signal
import sys
import textwrap
import threading
import time
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import thread as futures_thread
from contextlib import ExitStack, contextmanager, nullcontext
from copy import copy as shallow_copy
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import FunctionType
from typing import Any, Self, TypeGuard, TypeVar

import numpy as np
import torch
from torch._ops import HigherOrderOperator
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils import dlpack as torch_dlpack
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode
from torch.utils._pytree import tree_leaves, tree_map

from ..device import has_cuda, has_cupy, require_cuda, require_cupy
from ..timing import benchmark, cupy_sleep, gpu_sleep
from . import Exercise, ExerciseFailed, Findings, LeftForGPU, exercise, reference, register, what_returned
from .properties import for_all, shown, st, time_limit
from .settings import (
    BASIC,
    CUPY_ALLOCATORS,
    CUPY_STREAM,
    SEED_HINT,
    SETTINGS,
    keeping,
    not_put_back,
    put_back,
    read,
    seeding_watched,
)
from .streams import CUPY_CALLERS, TORCH_CALLERS, calibrate_sleeps, cupy_caller, cupy_callers, torch_caller, widened

NOTEBOOK = "09_kernels"
R = TypeVar("R")
WINDOW_MS = 40.0  # how long the checks keep a stream busy (at first: see TRIES)
TRIES = 3  # a case that a slow or busy host spoiled is tried again, with windows twice as long
GPU_CASES = 6  # generated cases of a GPU check, besides its chosen ones
GPU_BUDGET_S = 3.0  # seconds of shrinking a GPU check's failing case
GELU_DTYPES = ("float32", "float64")
# bias_gelu's values against the float64 reference, for float32 inputs: assert_close's default tolerance (lecture 06,
# section 6: torch.testing's table), (rtol, atol)
GELU_FLOAT32 = (1.3e-6, 1e-5)
# ...and for float64 inputs: what float64 arithmetic can miss by, GELU_F64_EPS epsilons of float64 (eps = 2**-52)
# times |v| + |gelu(v)|, v = x + bias.  Not assert_close's float64 default (rtol = atol = 1e-7), which is about
# float32's own precision (its epsilon, 1.2e-7): a body templated on T that calls tanhf computes tanh in float for
# float64 inputs and passed within it (adversary 106, on the H200).  The bound, with u = eps / 2 (a rounding's
# relative error at most; doubles in [0.5, 1) lie u apart, so an ulp of t is u at most): a right float64 computation
# of gelu(v) = 0.5 v (1 + t), t = tanh(z), z = c (v + 0.044715 v^3), errs by at most
#   - in z: 5 roundings and the two constants' own, no cancellation (v and v^3 share a sign): |dz| <= 7u |z|, which
#     moves t by sech(z)^2 |dz| <= 7u * max |z| sech(z)^2 = 7u * 0.45 = 3.2u;
#   - in t itself: a math library's double tanh errs by a few ulps; 4 allowed, each at most u below 1: 4u;
#   - in 1 + t: one rounding, u (the sum lies below 2);  so 1 + t within 8.2u, and 0.5 v (1 + t) within 4.1u |v|,
#   - plus the last product's rounding (0.5 v is exact): u |g|.
# The sigmoid form, v / (1 + exp(-2z)), errs less where 1 + t cancels (v below 0), at most 2.1u |v| + 2u |g| (exp's
# relative error 2 |z| |dz| times sigmoid(2z) sigmoid(-2z), whose product with |z| is at most 0.11).  So a right
# answer and the reference differ by at most 8.2u |v| + 2u |g| (both err), 4.1 eps |v| + eps |g|: GELU_F64_EPS = 16
# allows about 4 times that, for other orders of the formula (v (1 + 0.044715 v^2), pow(v, 3), FMA contractions).
# Simulated on the check's own float64 values (x ~ N(0, 3), bias ~ N(0, 1), a million of them), right forms (the
# reference's order, v (1 + 0.044715 v^2), the sigmoid form, tanh off by 2 ulps, z off by 4) stayed within 1 eps
# times |v| + |g|; a step through float (float's epsilon is 2**29 times float64's) broke the bound on 90% of the
# values (sqrt(2/pi) in float) to 98% (everything in float), tanh in float on 97%; the old bound, 1e-7, on 1% at
# most (tests/test_exercises_09.py).
GELU_F64_EPS = 16.0


def _seed(*parts: object) -> int:
    return zlib.crc32(repr(parts).encode())


def _cupy(what: str) -> Any:
    require_cuda(what)
    require_cupy(what)
    import cupy

    return cupy


def _left_for_a_gpu(name: str, needs: str) -> bool:
    """Without a GPU and CuPy: say what a GPU would check (exercise() prints it) and return True."""
    if has_cuda() and has_cupy():
        return False
    with exercise(name):
        raise LeftForGPU("", needs)
    return True


def _in_a_fresh_thread(fn: Callable[[], R]) -> R:
    """fn() in a new thread: CuPy's current stream and its stack of `with` blocks belong to a thread, so what an
    answer leaves current ends with its case (as in nb04)."""
    context = contextvars.copy_context()
    returned: list[R] = []
    raised: list[BaseException] = []

    def body() -> None:
        try:
            returned.append(context.run(fn))
        except BaseException as error:  # noqa: BLE001 -- raised again in the check's thread
            raised.append(error)

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    if raised:
        raise raised[0]
    return returned[0]


@contextmanager
def _queued_on(cp: Any, stream: Any) -> Iterator[None]:
    """Queue the block's CuPy work on `stream`, leaving the current stream and CuPy's `with` stack as they were."""
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        yield
    finally:
        before.use()


# ------------------------------------------------------------------------------------------
# Exercise 1: a fused bias + GELU (tanh) in CuPy
# ------------------------------------------------------------------------------------------
# (the CuPy caller, rows (None: x is 1-D), n, dtype, the layout of x, bias a strided view, the seed)
GeluCase = tuple[str, int | None, int, str, str, bool, int]
LAYOUTS = ("contiguous", "transposed", "strided")
GELU_LARGEST = 2**20  # elements of x
# _gelu_twice_and_large: one shape called twice, and one larger than a grid capped at 65535 blocks of 1024 threads
# covers (67,107,840 elements): 16385 x 4096 float32, 268 MB for x and as much for the result
GELU_TWICE = (33, 1000)
GELU_LARGE = (16385, 4096)
# more rows than a grid's second dimension holds (65535 blocks), few columns (round 27's adversary put the rows on
# blockIdx.y: x of 70000 rows cannot launch; the check's most rows were 16385): 2 MB of float32
GELU_MANY_ROWS = (65535 + 2, 8)
# What the CuPy checks read around each call of the answer, besides what they check themselves (the current stream
# after the call): CuPy's allocators, device and pinned (round 27's adversary of 09 left set_allocator(None), a
# MemoryAsyncPool's malloc, and passed: these checks read no setting), and CuPy's current stream of the answer's
# thread (round 27: Stream.null.use() left, in scale_into, passed)
CUPY_KEPT = (*CUPY_ALLOCATORS, CUPY_STREAM)
GUARD_BYTE = 0xA5
ALLOC_GUARD = 512  # bytes on each side of every array the answer allocates (_GuardedAllocations); CuPy's pool aligns
EAGER = 4  # more arrays of x's size than this, allocated in one call: CuPy's operators one at a time


class _GuardedAllocations:
    """CuPy's allocations while `alloc` is CuPy's allocator (cupy.cuda.using_allocator: this thread only): each one
    from CuPy's pool with ALLOC_GUARD bytes on both sides (0xA5 bytes: a small finite number, which no result a
    kernel computes from it writes back), the array itself filled with 0xFF bytes (NaN), on the current stream.  A
    write past the end (or before the start) of an array the answer allocated shows in its guards, an element its
    kernel never wrote reads NaN, and `sizes` says how many arrays of what size the call allocated."""

    def __init__(self, cp: Any) -> None:
        self.cp, self.blocks, self.sizes = cp, list[tuple[Any, int]](), list[int]()

    def alloc(self, size: int) -> Any:
        base = self.cp.get_default_memory_pool().malloc(size + 2 * ALLOC_GUARD)
        base.memset_async(GUARD_BYTE, ALLOC_GUARD)  # on the current stream, as the allocation is
        (base + ALLOC_GUARD).memset_async(0xFF, size)
        (base + (ALLOC_GUARD + size)).memset_async(GUARD_BYTE, ALLOC_GUARD)
        self.blocks.append((base, size))
        self.sizes.append(size)
        return base + ALLOC_GUARD

    def strayed(self) -> int:
        """Bytes written into the guards (after the work queued on them has finished)."""
        cp, bad = self.cp, 0
        for base, size in self.blocks:
            for start in (base, base + (ALLOC_GUARD + size)):
                guard = cp.ndarray((ALLOC_GUARD,), dtype=cp.uint8, memptr=start).get()
                bad += int((guard != GUARD_BYTE).sum())
        return bad

    def release(self) -> None:
        self.blocks.clear()


@reference
def gelu_reference(x: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """GELU's tanh form of x + bias, in float64."""
    v = x.astype(np.float64) + bias.astype(np.float64)
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3)))


def gelu_outside(got: np.ndarray, x: np.ndarray, bias: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Where `got` (any dtype) lies outside the tolerance of the inputs' dtype around `want`, the reference of x and
    bias: for float32, assert_close's default (GELU_FLOAT32); for float64, GELU_F64_EPS epsilons of float64 times
    |v| + |want|, v = x + bias (NaN is outside)."""
    off = np.abs(got.astype(np.float64) - want)
    if dtype == "float32":
        rtol, atol = GELU_FLOAT32
        return ~(off <= atol + rtol * np.abs(want))
    v = x.astype(np.float64) + bias.astype(np.float64)
    return ~(off <= GELU_F64_EPS * float(np.finfo(np.float64).eps) * (np.abs(v) + np.abs(want)))


def _gelu_tolerance(dtype: str) -> str:
    """The tolerance of `dtype`'s inputs, as a failure names it."""
    if dtype == "float32":
        rtol, atol = GELU_FLOAT32
        return f"assert_close's float32 tolerance (rtol {rtol:g}, atol {atol:g})"
    return (f"{GELU_F64_EPS:g} float64 epsilons times |v| + |gelu(v)| (v = x + bias: what float64 arithmetic can "
            "miss by)")


def _gelu_cases() -> st.SearchStrategy[GeluCase]:
    small = st.integers(0, 9)
    return st.tuples(cupy_callers(), st.one_of(st.none(), small, st.integers(1, 256)),
                     st.one_of(small, st.integers(1, 4096)), st.sampled_from(GELU_DTYPES),
                     st.sampled_from(LAYOUTS), st.booleans(), st.integers(0, 2**32 - 1))


def _gelu_shape(case: GeluCase) -> tuple[int, ...]:
    _, rows, n, *_ = case
    return (n,) if rows is None else (rows, n)


def _describe_gelu(case: GeluCase) -> str:
    kind, rows, n, dtype, layout, strided_bias, _ = case
    shape = _gelu_shape(case)
    view = {"contiguous": "", "transposed": " (a transposed view)", "strided": " (every other column of a wider "
            "array)"}[layout if not (layout == "transposed" and rows is None) else "contiguous"]
    return (f"bias_gelu(x of shape {shape}, {dtype}{view}, bias of shape ({n},)"
            f"{' (a strided view)' if strided_bias else ''}) called from {CUPY_CALLERS[kind]}")


def _gelu_values(case: GeluCase, attempt: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x and bias of the case (other values on each try: a result that an earlier try left in CuPy's pool, read
    before the answer's kernel ran, must not pass for this one)."""
    *_, dtype, _, _, seed = case
    rng = np.random.default_rng((seed, attempt))
    shape = _gelu_shape(case)
    return (rng.normal(0.0, 3.0, shape).astype(dtype), rng.normal(0.0, 1.0, shape[-1:]).astype(dtype))


def _nan_array(cp: Any, shape: tuple[int, ...], dtype: str) -> Any:
    """A NaN-filled array of `shape`, on the current stream, that has memory even when it is empty: a view of the
    first elements of one at least 1 long in every dimension.  CuPy gives an empty array no memory (its pointer is
    0), so a kernel reading one element past the end of an empty x would fault, and the lost CUDA context end the
    check with a CUDA error instead of a FAIL that names the bound."""
    base = cp.full(tuple(max(d, 1) for d in shape), math.nan, dtype=dtype)
    return base[tuple(slice(0, d) for d in shape)]


def _gelu_views(cp: Any, case: GeluCase, shape: tuple[int, ...], dtype: str) -> tuple[Any, Any]:
    """(x, bias): views of NaN-filled arrays of the case's layout, on the current stream (never without memory)."""
    _, rows, n, _, layout, strided_bias, _ = case
    if layout == "transposed" and rows is not None:
        x = _nan_array(cp, (n, rows), dtype).T
    elif layout == "strided":
        x = _nan_array(cp, (*shape[:-1], 2 * n), dtype)[..., ::2]
    else:
        x = _nan_array(cp, shape, dtype)
    bias = _nan_array(cp, (2 * n,), dtype)[::2] if strided_bias else _nan_array(cp, (n,), dtype)
    return x, bias


@dataclass
class _GeluRun:
    out: Any
    seen: np.ndarray | None  # what the caller's stream read from the result right after the call
    x_after: np.ndarray
    waited: bool
    spoiled: bool
    late_ms: float
    moved: bool  # CuPy's current stream after the call is not the caller's
    strayed: int  # bytes the call wrote outside the arrays it allocated
    large: int  # arrays of at least x's size (and of a byte or more) that the call allocated


def _gelu_run(cp: Any, yours: Callable, case: GeluCase, sources: tuple[Any, Any], window_ms: float) -> _GeluRun:
    """One call of yours(x, bias) from the case's caller, right behind the caller's write of x and bias, which a
    window of earlier work on the caller's stream delays (NaN until then); the null stream (when it is not the
    caller's) and every stream the answer enters are late by 3 windows."""
    kind, _, _, dtype, _, _, _ = case
    w = window_ms / 1e3
    # First, in this thread, a call from another caller, on a stream of its own (adversary 108: the caller's stream
    # looked up once per thread, threading.local, and every later kernel launched there, passed where each judged
    # call was its thread's first: a caller that calls on one stream and then on another in one thread gets its
    # second kernel on the first stream)
    with cp.cuda.Stream(non_blocking=True) as earlier:
        yours(cp.ones((2, 5), dtype=dtype), cp.ones(5, dtype=dtype))
    earlier.synchronize()
    cp.cuda.Device().synchronize()
    with cupy_caller(kind, busy_ms=window_ms) as caller:
        s = caller.stream
        if s.ptr != 0:
            with _queued_on(cp, cp.cuda.Stream.null):
                cupy_sleep(3 * w)
        x, bias = _gelu_views(cp, case, _gelu_shape(case), dtype)
        # The clock starts before the window is queued: `written` cannot be done before w has passed on it, so a
        # host slow to reach the call (a kernel compiled for the copies below) spoils the run (tried again with a
        # longer window), and is never taken for a wait inside the answer.
        t0 = time.perf_counter()
        cupy_sleep(w)  # on the caller's stream
        x[...] = sources[0]
        bias[...] = sources[1]
        written = s.record()
        seen = cp.full(_gelu_shape(case), math.inf, dtype=dtype)  # the caller's buffer, allocated before the call
        allocations = _GuardedAllocations(cp)
        with widened(3 * window_ms, spare=(s,), at_creation=True), cp.cuda.using_allocator(allocations.alloc):
            out = yours(x, bias)
        waited = written.done or time.perf_counter() - t0 > w / 2
        moved = cp.cuda.get_current_stream() != s
        usable = isinstance(out, cp.ndarray) and out.shape == seen.shape
        with _queued_on(cp, s):  # the caller's next work, on its stream
            if usable:
                seen[...] = out.astype(dtype, copy=False)
            consumed = s.record()
        spoiled = time.perf_counter() - t0 > w / 2
    cp.cuda.Device().synchronize()
    late_ms = cp.cuda.get_elapsed_time(written, consumed)
    strayed = allocations.strayed()
    allocations.release()
    large = sum(1 for size in allocations.sizes if size >= x.nbytes) if x.size >= 16 else 0  # (constants: smaller)
    return _GeluRun(out, seen.get() if usable else None, x.get(), waited, spoiled or late_ms > window_ms / 2,
                    late_ms, moved, strayed, large)


def check_bias_gelu(bias_gelu: Callable[[Any, Any], Any]) -> None:
    """bias_gelu(x, bias) must return GELU's tanh form of x + bias (bias over the last dimension) as a new CuPy
    array of x's shape and dtype, within assert_close's default tolerance for float32 and within GELU_F64_EPS
    epsilons of float64 times |v| + |gelu(v)| for float64, computed on CuPy's current stream without making the host
    wait."""
    if _left_for_a_gpu("bias_gelu", "CuPy on a GPU: float32 and float64 inputs of sizes 0, 1, odd and large, "
                                    "transposed and strided, from every kind of CuPy caller behind a slow write on "
                                    "its stream: the values against a float64 reference, no wait of the host, and "
                                    "the kernel on the caller's stream"):
        return
    with exercise("bias_gelu") as ex:
        cp = _cupy("check_bias_gelu")
        yours = keeping(ex, ex.answer(bias_gelu), CUPY_KEPT)
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        for dtype in GELU_DTYPES:  # first calls: the kernels compile (CuPy's, per dtype and layout), the pool fills
            transposed = " (a transposed view)"
            for x, what in ((cp.ones((3, 5), dtype=dtype), ""), (cp.ones((5, 3), dtype=dtype).T, transposed),
                            (cp.ones(5, dtype=dtype), "")):
                try:
                    _in_a_fresh_thread(partial(yours, x, cp.ones(5, dtype=dtype)))
                except Exception as error:
                    if not isinstance(error, ExerciseFailed):
                        error.add_note(f"bias_gelu: your function raised this for x of shape {x.shape}, {dtype}{what}"
                                       ", bias of shape (5,), all ones (one of the check's first calls)")
                    raise
        cp.cuda.Device().synchronize()

        def holds(case: GeluCase) -> None:
            for k in range(TRIES):
                x, bias = _gelu_values(case, k)
                sources = (cp.asarray(x), cp.asarray(bias))
                cp.cuda.Device().synchronize()
                window_ms = WINDOW_MS * 2**k
                run = _in_a_fresh_thread(partial(_gelu_run, cp, yours, case, sources, window_ms))
                if not run.spoiled:
                    break
            _judge_gelu(ex, cp, case, run, (x, bias), gelu_reference(x, bias), window_ms)

        chosen: list[GeluCase] = [(kind, 33, 1000, "float32", layout, i % 2 == 1, _seed("gelu", kind, layout))
                                  for i, kind in enumerate(CUPY_CALLERS) for layout in LAYOUTS[i % 3:i % 3 + 1]]
        chosen += [("null", None, 0, "float32", "contiguous", False, 1), ("with", 0, 7, "float64", "strided", True, 2),
                   ("busy", 1, GELU_LARGEST + 1, "float32", "contiguous", False, 3),
                   ("use", 1023, 1025, "float64", "transposed", True, 4), ("with", *GELU_MANY_ROWS, "float32",
                                                                           "contiguous", False, 5)]
        for_all(ex, _gelu_cases(), holds, examples=GPU_CASES, chosen=chosen, budget_s=GPU_BUDGET_S,
                describe=_describe_gelu)
        _gelu_twice_and_large(ex, cp, yours)
        _gelu_keeps_nothing(ex, cp, yours)
        _gelu_one_kernel(ex, cp, yours)


GELU_COUNTED = (33, 1000)  # the shape (float32, contiguous) on which the kernels of one call are counted
GELU_AGAIN = 8  # calls after the first on the same shape, whose result must survive them all (a ring of 8 shows)


def _kernels_launched(cp: Any, call: Callable[[], object]) -> int | None:
    """How many GPU kernels `call()` launched (memory copies and fills not counted), as CUPTI records them: through
    torch.profiler, which records every kernel of the process, CuPy's too (CuPy has no kernel counter of its own).
    None where it does not count a kernel of the check's own as exactly one (no CUPTI here, or another profiler on)."""
    from torch.profiler import ProfilerActivity, profile

    def count(fn: Callable[[], object]) -> int:
        cp.cuda.Device().synchronize()
        # acc_events: without it, PyTorch 2.11 warned, on the check's second profile, that a profiler clears its
        # events at the end of each cycle (a UserWarning under the student's check: solutions/09's stamp showed it)
        with warnings.catch_warnings(), profile(activities=[ProfilerActivity.CUDA], acc_events=True) as prof:
            warnings.filterwarnings("ignore", message=".*Profiler clears events")
            fn()
            cp.cuda.Device().synchronize()
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                   and not e.name.startswith(("Memcpy", "Memset")))

    own = cp.ElementwiseKernel("T x", "T y", "y = x + x", "course09_counted")
    probe = cp.ones(1024, dtype=cp.float32)
    own(probe)  # compiled before it is counted
    try:
        if count(lambda: own(probe)) != 1:
            return None
    except RuntimeError:  # the profiler cannot start (another one is running)
        return None
    return count(call)


def _gelu_one_kernel(ex: Any, cp: Any, yours: Callable) -> None:
    """One call on GELU_COUNTED, float32 and float64 (after a first call on the same shape, so that nothing compiles):
    it must launch exactly one kernel (the task asks for one kernel of the student's own for both dtypes: round 27's
    adversary fused float32 only and ran ten CuPy operators in place for float64, and passed).  CuPy's operators in
    place, or `x + bias` before a kernel, allocate no more than a fused kernel does, so the EAGER rule cannot see
    them; the kernel count does.  Skipped where CUPTI does not count."""
    # a 1-D x too (round 78's adversary: CuPy's operators for 1-D x, the kernel for 2-D only, passed)
    for shape, dtype in ((GELU_COUNTED, np.float32), (GELU_COUNTED, np.float64), (GELU_COUNTED[-1:], np.float32),
                         (GELU_COUNTED[-1:], np.float64)):
        rng = np.random.default_rng(_seed("gelu kernels"))
        x = cp.asarray(rng.normal(0.0, 3.0, shape).astype(dtype))
        bias = cp.asarray(rng.normal(0.0, 1.0, shape[-1:]).astype(dtype))
        _in_a_fresh_thread(partial(yours, x, bias))
        launched = _in_a_fresh_thread(partial(_kernels_launched, cp, partial(yours, x, bias)))
        if launched is None:
            return
        _one_kernel_expected(ex, launched, np.dtype(dtype).name, shape)


GELU_KEPT = (29, 1003)  # float64, a shape no other call of the check has: what a call on it keeps in CuPy's pool


def _gelu_keeps_nothing(ex: Any, cp: Any, yours: Callable) -> None:
    """One call on GELU_KEPT (float64, first calls on that shape and dtype: a buffer kept per shape or dtype is made
    in it), its result dropped: CuPy's pool must then hold no more than before.  A buffer the answer keeps from call
    to call (a scratch array its kernel writes, then a copy returned) is every caller's: two calls in flight on two
    streams that nothing orders write it at once (round 113's class, which no timing of the check's can make show
    reliably: the other call must land between the first's kernel and its copy).  A buffer kept from the check's
    earlier calls, or made outside CuPy's pool, is not seen here."""
    rng = np.random.default_rng(_seed("gelu kept"))
    x = cp.asarray(rng.normal(0.0, 3.0, GELU_KEPT))
    bias = cp.asarray(rng.normal(0.0, 1.0, GELU_KEPT[-1:]))
    pool = cp.get_default_memory_pool()

    def call() -> int:
        cp.cuda.Device().synchronize()
        before = pool.used_bytes()
        out = yours(x, bias)
        cp.cuda.Device().synchronize()
        del out
        gc.collect()
        return pool.used_bytes() - before

    kept = _in_a_fresh_thread(call)
    ex.expect(kept < x.nbytes, f"bias_gelu(x of shape {GELU_KEPT}, float64, bias of shape ({GELU_KEPT[-1]},)): after "
              f"it returned and its result was dropped, CuPy's pool held {kept} bytes more than before the call (x "
              f"has {x.nbytes})", "two callers at once (two threads, or two streams that nothing orders) each need "
              "their own memory: an array your function keeps from call to call, and its kernel writes, is every "
              "caller's")


def _one_kernel_expected(ex: Any, launched: int, dtype: str, shape: tuple[int, ...] = GELU_COUNTED) -> None:
    cols = shape[-1]
    ex.expect(launched == 1, f"bias_gelu(x of shape {shape}, {dtype}, bias of shape ({cols},)) launched "
              f"{launched} GPU kernels (counted by CUPTI, through torch.profiler)",
              "the task is one kernel of your own (cp.ElementwiseKernel or cp.RawKernel) that computes the whole "
              "formula for each element: every CuPy operator, x + bias too, is a kernel of its own")


def _gelu_twice_and_large(ex: Any, cp: Any, yours: Callable) -> None:
    """1 + GELU_AGAIN calls on GELU_TWICE (float32): the first result must survive the others (a new array each call);
    and one call on GELU_LARGE, more elements than a grid capped at 65535 blocks of 1024 threads covers: every
    element written (the answer's arrays start as NaN: _GuardedAllocations) and the last rows and a spread of others
    right.  Called from CuPy's null stream, in a fresh thread; the values are read after a synchronize."""
    rng = np.random.default_rng(_seed("gelu twice"))
    firsts = [rng.normal(0.0, 3.0, GELU_TWICE).astype(np.float32) for _ in range(2 + GELU_AGAIN)]
    b = rng.normal(0.0, 1.0, GELU_TWICE[-1:]).astype(np.float32)
    rows, cols = GELU_LARGE
    n = rows * cols
    picked = np.concatenate([np.arange(n - 2 * cols, n), np.linspace(0, n - 1, 4096).astype(np.int64)])

    def twice() -> tuple[Any, Any]:
        first = yours(cp.asarray(firsts[0]), cp.asarray(b))
        kept = first.copy() if isinstance(first, cp.ndarray) else None
        for again in firsts[1:]:  # more calls than two (round 78's adversary: two arrays per shape, in turn, passed)
            yours(cp.asarray(again), cp.asarray(b))
        cp.cuda.Device().synchronize()
        return (first.get() if kept is not None else None), (kept.get() if kept is not None else None)

    def large() -> tuple[int | None, np.ndarray, np.ndarray, np.ndarray]:
        x = ((cp.arange(n, dtype=cp.int32) % 9973).astype(cp.float32) * cp.float32(0.001)
             - cp.float32(5.0)).reshape(rows, cols)
        bias = cp.linspace(-1.0, 1.0, cols, dtype=cp.float32)
        allocations = _GuardedAllocations(cp)
        with cp.cuda.using_allocator(allocations.alloc):
            y = yours(x, bias)
        cp.cuda.Device().synchronize()
        allocations.release()
        if not (isinstance(y, cp.ndarray) and y.shape == x.shape):
            return None, picked, picked, picked
        where = cp.asarray(picked)
        unwritten = int(cp.count_nonzero(~cp.isfinite(y)))
        return (unwritten, y.ravel()[where].get(), x.ravel()[where].get(), bias[where % cols].get())

    first, kept = _in_a_fresh_thread(twice)
    call = f"bias_gelu(x of shape {GELU_TWICE}, float32, bias of shape ({GELU_TWICE[1]},))"
    ex.expect(first is not None and kept is not None and np.array_equal(first, kept, equal_nan=True),
              f"{call} returned an array whose values changed when your function was called again (on other values "
              "of the same shape)", "return a new array from each call: the caller keeps each result, and the next "
              "call must not overwrite it")
    unwritten, got, xs, bs = _in_a_fresh_thread(large)
    call = f"bias_gelu(x of shape {GELU_LARGE}, float32, bias of shape ({cols},))"
    ex.expect(unwritten is not None, f"{call} did not return a CuPy array of x's shape",
              "a large x needs the same care as a small one")
    ex.expect(unwritten == 0, f"{call}: {unwritten} of {n} elements of the result were never written (they still "
              "hold the NaN the check filled new arrays with)", "how many blocks does your launch have for "
              f"{n} elements, and how many elements does each thread cover? (a grid capped at some number of "
              "blocks leaves the rest to a loop in each thread)")
    want = gelu_reference(xs, bs)
    bad = np.flatnonzero(gelu_outside(got, xs, bs, want, "float32"))
    ex.expect(bad.size == 0, f"{call}: element {picked[bad[0]] if bad.size else 0} of the result is "
              f"{got[bad[0]] if bad.size else 0:.9g} where {want[bad[0]] if bad.size else 0:.9g} is right ({bad.size} "
              f"of the {picked.size} elements compared are wrong)",
              "compare the last elements' indices with the first ones': does every thread compute its own?")


def _judge_gelu(ex: Any, cp: Any, case: GeluCase, run: _GeluRun, inputs: tuple[np.ndarray, np.ndarray],
                want: np.ndarray, window_ms: float) -> None:
    call, out, dtype = _describe_gelu(case), run.out, case[3]
    x, bias = inputs
    ex.expect(isinstance(out, cp.ndarray) and out.shape == want.shape,
              f"{call} returned {shown(out) if not isinstance(out, cp.ndarray) else f'an array of shape {out.shape}'}"
              f", expected a CuPy array of shape {want.shape}",
              "return a new CuPy array of x's shape: the bias is added along the last dimension")
    ex.expect(out.dtype == np.dtype(dtype), f"{call} returned {out.dtype}, expected x's dtype, {dtype}",
              "the result keeps the inputs' dtype: where did a wider or narrower type come in?")
    found = Findings()
    found.expect(not run.waited, f"{call}: with {window_ms:.0f} ms of earlier work queued on the caller's stream, "
                 "the call kept the host waiting for the GPU",
                 "a kernel launch returns at once: no synchronize, .get(), asnumpy or float() in your function")
    found.expect(not run.moved, f"{call}: the call changed CuPy's current stream",
                 "leave the caller's current stream as you found it")
    found.expect(np.array_equal(run.x_after, x, equal_nan=True), f"{call}: x was changed",
                 "write the result into a new array; leave the inputs as they were")
    found.expect(run.strayed == 0, f"{call}: your function wrote {run.strayed} bytes just outside the arrays it "
                 "allocated", "which threads pass your bounds test? Each one that does writes an element")
    found.expect(run.large <= EAGER, f"{call}: your function allocated {run.large} arrays of x's size or larger: "
                 "CuPy's operators one at a time, each a kernel that writes a whole array",
                 "the task is one kernel of your own (cp.ElementwiseKernel or cp.RawKernel) that computes the whole "
                 "formula for each element: x read once, the result written once")
    if run.seen is not None:
        bad = gelu_outside(run.seen, x, bias, want, dtype)
        wrong = int(bad.sum())
        example = float(run.seen[bad].flat[0]) if wrong else 0.0
        expected = float(want[bad].flat[0]) if wrong else 0.0
        digits = 9 if dtype == "float32" else 17
        found.expect(wrong == 0, f"{call}: the caller's stream read {wrong} of {want.size} values outside "
                     f"{_gelu_tolerance(dtype)} of the float64 reference (for example {example:.{digits}g} where "
                     f"{expected:.{digits}g} is right)",
                     "NaN is what x or bias held before the caller's stream wrote them, and what each array your "
                     "function allocates holds until written: which stream did your kernel run on, and does it write "
                     "every element?" if math.isnan(example) else
                     "infinity is what the caller's buffer held before it read your result: your kernel had not run "
                     "yet on the caller's stream" if math.isinf(example) else
                     "compare with the formula term by term (the cube, the constants, tanh, the bias along the last "
                     "dimension, each element's own index in a view), and compute in the inputs' precision" + (
                         ": for float64, every step in double (a math function by its plain name, tanh, not tanhf; "
                         "constants with all of a double's 17 significant digits; no float on the way)"
                         if dtype == "float64" else ""))
    found.expect(run.late_ms <= window_ms / 2,
                 f"{call}: the caller's next work ran {run.late_ms:.0f} ms after its write, behind work queued on "
                 "another stream", "launch the kernel on CuPy's current stream, the caller's: any other stream ties "
                 "the caller's next work to what is queued there")
    found.report(ex)


register(Exercise(NOTEBOOK, "bias_gelu", check_bias_gelu, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 2: a row-wise softmax in Triton
# ------------------------------------------------------------------------------------------
# (rows, cols, extra elements between rows, scale of x (negative: values around it, all below 0), seed)
SoftmaxCase = tuple[int, int, int, float, int]
MAX_COLS = 4096  # what the task allows
CPU_MAX = (4, 160)  # rows and columns on a CPU, through Triton's interpreter (each row a program: ~10-50 ms a call)
CPU_CASES = 4  # generated cases on a CPU, besides the 5 chosen ones: the interpreter is slow
# float32 softmax against the float64 one, every output judged relatively (round 19's adversary: rtol 3e-5 and an
# atol of 1e-9 let through a sum + 2e-5 and log2(e) typed as 1.4427, which is off by 3.4e-6 per unit of x below the
# row's max: outputs below 3e-5 were judged by the atol alone).  What a right float32 kernel cannot avoid: exp's
# few ulps, a sum of up to 4096 positive terms in any order, a division (~1e-6 together, up to 7e-6 for a sum
# accumulated one column at a time), and the rounding of x - max and of its product with log2(e), about 1.2e-7 per
# unit of the distance d below the row's max (simulated with GPU-like 2-ulp ex2.approx and division, tree,
# sequential and online sums, 1 to 4096 columns, scales 1 to 1000: at most 6.8e-6 + 4e-7 * d).  SOFTMAX_ATOL is
# below float32's smallest normal number, which a GPU's exp and division flush to 0.
# The relative bound depends on the row's length (round 20's adversary: one rtol of 1.2e-5, sized for 4096 columns,
# let a sum + 1e-5 through on every shape a CPU checks, 160 columns or fewer, where a right kernel is within 1e-6):
# exp's and the division's few ulps, SOFTMAX_RTOL (2e-6, about 17 float32 ulps), plus the sum's rounding, which
# grows like sqrt(n) * eps for positive terms (lecture 06, section 2: errors that partly cancel), SOFTMAX_RTOL_SUM
# float32 epsilons per sqrt(column): 1.22e-5 at 4096 columns (the simulation's worst, 6.8e-6, within it), 4e-6 at
# 160, 2.2e-6 at 1.
SOFTMAX_RTOL, SOFTMAX_RTOL_SUM, SOFTMAX_RTOL_PER_UNIT, SOFTMAX_ATOL = 2e-6, 1.35, 4e-7, 2e-38
# Each row's sum, against 1 (round 22's adversary: e / (sum + 1e-6), every value 1e-6 low, 8 float32 epsilons, within
# the per-value floor of 2e-6 that exp's and the division's few ulps need): the errors of each value's own exp and
# division are independent and average out in the row's sum (the exps of the sum are the numerators' own: theirs
# cancel), while the sum's rounding, one factor for the whole row, does not.  So a row's sum may differ from 1 by
# the sum's rounding (SOFTMAX_RTOL_SUM epsilons per sqrt(column), as above) plus SOFTMAX_SUM_EPS epsilons for the
# division and what remains of exp's errors: 6.4e-7 on a row of 1 column, whose right softmax is exactly 1, where
# a bias of 1e-6 is 1e-6 (the sum is at least 1, and 1 where one value dominates the row).
SOFTMAX_SUM_EPS = 4.0
SOFTMAX_WINDOW_MS = 20.0  # on a GPU, the caller's stream writes x this long after the call starts: a kernel that
# does not wait for it reads NaN
MANY_ROWS = 65535 + 2  # more rows than a grid's second and third dimensions hold (CUDA caps them at 65535)
BIG = (32768, 2048)  # the shape timed on a GPU: 256 MiB of float32, rows long enough not to be launch-bound.  On
# (8192, 2048), 64 MiB, a copy took about 35 us on the H200, and two right answers that do more on the host each call
# than a plain launch (a stream of their own with events; wrap_triton called eagerly) reached 0.25 and 0.21 of copy
# (adversary 17's answers, H200, 2026-11-29): a call's host work showed as the kernel's time.  Four times the bytes
# give the GPU four times as long per call to hide it behind.
# The share of this GPU's copy bandwidth (y.copy_(x): read + write, the least a softmax moves) that the answer must
# reach on BIG, the best of three tries.  Measured (the lead's probes, /work/main/.gpu/k09/probe2.py, FACTS09):
# one-row-per-program softmaxes reached 0.57-0.66 of copy on (8192, 2048) on an H200 (num_warps 4 to 16), and
# 0.45-0.77 under MPS with 30% of the SMs (the T4-sized run); narrow rows are the weak case ((65536, 256): down to
# 0.09), so BIG has 2048 columns.  0.3 leaves every right variant measured there a margin of 1.5x or more, and
# fails what moves much more than the bytes (a kernel that launches per row from Python, or reads each row several
# times from memory with a small block).  The lead verifies on the GPU and adjusts.
SHARE_BAR = 0.3
GUARD_BYTES = 16384  # on a CPU, the least guard around each storage a launch gets (see _counting_launches)
CALL_LIMIT_S = 120.0  # one call of the answer (a first call on a GPU compiles: seconds); past it, a FAIL
OWN_CASE = (3, 37, 3, 1.0, 11)  # the shape of _softmax_new_and_own's calls
WIDER_GAP = 64  # its fourth call: the same shape, rows 101 elements apart
FAR_BELOW = -2e4  # masked rows whose finite values lie this far below 0 (one seed in four: `_masked_shift`)
OTHER_SHIFT = 200.0  # _softmax_two_callers: the other caller's values lie this far above the first's
# The scales a generated case draws.  -100: rows whose max lies between -10 (the clamp) and about -170, higher the
# longer the row, with values down to about -250 (round 73's adversary skipped the shift where |max| <= 80, since exp
# overflows only above 88, and passed: no row had its max inside (-87, -20) and values below -87, where exp(x)
# without the shift is a float32 denormal, or 0 on a GPU that flushes them; -1000's rows have their max at -100 or
# below, and the positive scales' rows, unless a column or two long, near or above 0)
SOFTMAX_SCALES = (1.0, 10.0, 1000.0, -100.0, -1000.0)
# _softmax_two_callers: the other caller's shape, OWN_CASE's rows with other columns and another row stride (round 72's
# second adversary kept cols and both row strides in one buffer that each call filled: a caller of the same shape wrote
# the same numbers).  One of the property's chosen cases on a CPU, so that its launches, run unguarded there, passed the
# guarded calls first; narrower and its rows closer than OWN_CASE's, so that the first call's programs, read with the
# other's numbers, stay inside x and y (a launch of the first call is unguarded there too)
OTHER_CALLER_SHAPE = (3, 5, 3)
OTHER_CALLER_S = 10.0  # _softmax_two_callers: how long the first caller waits for the other's call (OWN_CASE's shape)
SAME_THREAD_S = 3.0  # _softmax_one_thread_two_streams on a CPU: how long the second call may take inside the first
STUCK_S = 0.5  # _softmax_one_thread_two_streams on a CPU: a second call found this long on one bytecode of one frame
# waits (a threading.Lock that its own first call holds): stopped, as at SAME_THREAD_S (round 100's adversary and round
# 67's third's RLock waited the whole 3 s there, and _softmax_two_callers' 10 s before it: 13 s and 10 s of the tests)
OTHER_STUCK_S = 1.0  # _softmax_two_callers: the other caller's thread found this long on one bytecode of one frame
# waits for the first caller (a lock): the first goes on (a thread can also wait for the CPU: longer than STUCK_S)
PROGRAM_LIMIT_S = 2.0  # on a CPU, how long one program of a guarded launch may run (one of at most CPU_MAX[1]
# columns takes milliseconds in the interpreter): past it, it waits for something (another program of its launch)
TWO_STREAMS_WINDOW_MS = 200.0  # _softmax_one_thread_two_streams on a GPU: how long the first call's later work waits
# _softmax_released_together on a GPU: the shapes, the pairs of calls on each, and how long the gate holds both calls'
# launches.  Measured on the H200 (2026-12-01; calls BO and BQ, .gpu/overlap.py and overlap2.py), pairs whose second
# call waited on a side stream for the event after the sleep, while the first sat right behind the sleep: three
# answers' kept ticket counters gave a wrong result in 20, 31 and 31 of 32 pairs on (16, 4096), 24, 0 and 2 on
# (64, 4096) (10, 4 and 8 wrong results of 20 in call BO), 0 to 13 on (2, 4096), (3, 37) and (528, 1024); three
# answers' workspaces kept per shape in 32 of 32 on (528, 1024), none on the other shapes; with both calls on side
# streams waiting for the event, the counters 0 to 3 of 32; with the second call not held (it ran while the first
# waited), nothing; the right answers tried (a workspace, statistics or counters allocated in each call: four in call
# BO, three in BQ), nothing.
RELEASED_SHAPES = ((16, MAX_COLS), (64, MAX_COLS), (528, 1024))
RELEASED_PAIRS = 16
# the second call's (rows, cols, gap) where it is not the first's: on (64, MAX_COLS), which caught the fewest kept
# counters above, the second call on another shape (round 72's second adversary: cols and row strides kept in one buffer
# that each call fills, which a second call of the same shape fills with the same numbers)
RELEASED_OTHER = {(64, MAX_COLS): (48, MAX_COLS - 1095, 5)}
RELEASED_WINDOW_MS = 5.0  # longer than the host needs to queue both calls (~0.1 ms for a plain launch)
KEPT_CALLS = 12  # more calls on OWN_CASE's shape where an answer keeps its results: reuse in turn up to 14 apart shows
# Every case of the property is called from a caller whose default dtype is float64 (adversary 106: a result made
# without dtype= for an empty x alone, `torch.empty(x.shape, device=x.device)`, was float64 there, and passed: the
# float64 caller was the third call of _softmax_new_and_own, never on an empty shape).  Under float32, PyTorch's
# default, a tensor made without dtype= is float32 by chance; under float64, any branch of the answer that makes its
# result so shows, on whichever shape the property reaches it.  The other calls (_softmax_new_and_own's first,
# second and fourth, _softmax_two_callers) keep PyTorch's default.
FLOAT64_CALLER = ", from a caller whose default dtype is float64"


@reference
def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, in float64."""
    return torch.softmax(x.double(), dim=-1)


@contextmanager
def _default_dtype(dtype: torch.dtype) -> Iterator[None]:
    """PyTorch's default dtype `dtype` inside the block, as a caller of its own settings has it; put back after."""
    was = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(was)


def softmax_rtol(cols: int) -> float:
    """The relative tolerance of a softmax over rows of `cols` columns, before the distance below the row's max."""
    return SOFTMAX_RTOL + SOFTMAX_RTOL_SUM * float(np.finfo(np.float32).eps) * math.sqrt(max(cols, 1))


def softmax_sum_tol(cols: int) -> float:
    """How far from 1 a right float32 softmax's row of `cols` columns may sum (see SOFTMAX_SUM_EPS)."""
    return float(np.finfo(np.float32).eps) * (SOFTMAX_SUM_EPS + SOFTMAX_RTOL_SUM * math.sqrt(max(cols, 1)))


def _softmax_right(got: torch.Tensor, x: torch.Tensor, want: torch.Tensor | None = None) -> torch.Tensor:
    """Where `got` is softmax(x) within softmax_rtol(its columns), plus SOFTMAX_RTOL_PER_UNIT for each unit that x lies
    below its row's max (what rounding x - max and its product with log2(e) costs), relatively, down to
    SOFTMAX_ATOL."""
    want = softmax_reference(x) if want is None else want
    x = x.double()
    below = (x.amax(dim=-1, keepdim=True) - x) if x.numel() else x
    rtol = softmax_rtol(x.shape[-1])
    bound = SOFTMAX_ATOL + want.abs() * (rtol + SOFTMAX_RTOL_PER_UNIT * below.nan_to_num(0.0))
    return (got.double() - want).abs() <= bound


def _result_form(got: object, dtype: bool = True) -> str:
    """"" for a plain result, which the check's own code may read (its shape, arithmetic with it): a torch.Tensor,
    strided, not nested, not quantized, and (`dtype`) of a floating dtype; else what `got` is, in words.  Every site
    that reads a result before _judge_softmax has judged it asks this first (adversary 136: a result returned sparse
    COO or CSR, MKL-DNN, quantized or nested made the check's own arithmetic, or a nested tensor's `.shape`, raise,
    reported as the student's function raising).  A nested tensor of torch.nested's default layout reports
    `.layout == torch.strided` (torch 2.13), hence `is_nested` first."""
    if not isinstance(got, torch.Tensor):
        return what_returned(got)
    if got.is_nested:
        return f"a nested {got.dtype} tensor (layout {got.layout})"
    if got.layout != torch.strided:
        return f"a {got.dtype} tensor of layout {got.layout}"
    if got.is_quantized:
        return f"a quantized {got.dtype} tensor"
    if dtype and not got.dtype.is_floating_point:
        return f"a {got.dtype} tensor"
    return ""


def _plain_result(got: object) -> TypeGuard[torch.Tensor]:
    """Whether `got` is a plain result (_result_form)."""
    return not _result_form(got)


PLAIN_HINT = ("return a new float32 tensor of x's shape, on x's device, that your kernel wrote: a plain strided tensor "
              "(torch.empty((rows, cols), dtype=x.dtype, device=x.device)), not sparse, MKL-DNN, quantized or nested")


def _wrong_of_x_shape(got: object, x: torch.Tensor) -> bool:
    """A plain tensor of x's shape whose values are not x's softmax (what is not plain (_result_form), or of another
    shape, is judged by _judge_softmax, with its own message)."""
    return _plain_result(got) and got.shape == x.shape and not bool(_softmax_right(got, x).all())


def _softmax_cases(on_gpu: bool) -> st.SearchStrategy[SoftmaxCase]:
    rows, cols = (st.one_of(st.integers(0, 9), st.integers(1, 300)), st.one_of(st.integers(1, 9), st.integers(
        1, MAX_COLS))) if on_gpu else (st.integers(0, CPU_MAX[0]), st.integers(1, CPU_MAX[1]))
    return st.tuples(rows, cols, st.sampled_from((0, 1, 3, 64)), st.sampled_from(SOFTMAX_SCALES),
                     st.integers(0, 2**32 - 1))


def _softmax_start(case: SoftmaxCase) -> tuple[int, int]:
    """The row and the column of the wider tensor where x starts: from the seed, x often starts past its storage's
    first element (round 19's adversary: x always started there, and a launch on x._base passed)."""
    _, _, gap, _, seed = case
    return seed % 2, seed // 2 % (gap + 1)


def _describe_softmax(case: SoftmaxCase) -> str:
    rows, cols, gap, scale, _ = case
    row, column = _softmax_start(case)
    start = (row * (cols + gap) + column) if rows else 0
    view = f" (rows {cols + gap} elements apart: a slice of a wider tensor)" if gap else ""
    view += f" (starting {start} element{'s' * (start != 1)} into its storage)" if start else ""
    values = f"values around {scale:g}, all below 0" if scale < 0 else f"values up to about {scale:g}"
    if scale == -math.inf:
        around = f"values around {FAR_BELOW:g}" if _masked_shift(case[-1]) else "values up to about 1"
        values = (f"{around}, the first {_masked_columns(cols)} of each row and one more -inf (a masked "
                  "row, as attention's causal masks make)")
    return f"softmax_rows(x of shape ({rows}, {cols}){view}, {values})"


def _masked_columns(cols: int) -> int:
    """How many columns lead each row with -inf in a case of scale -inf: two thirds of the row, longer than any chunk
    an online softmax plausibly takes at a time, and at least one finite value left."""
    return min(2 * cols // 3, cols - 1)


def _masked_shift(seed: int) -> float:
    """Where a masked case's finite values lie: near FAR_BELOW for one seed in four (round 133's adversary filled -inf
    with -1e4, and passed), near 0 otherwise."""
    return FAR_BELOW if seed % 4 == 3 else 0.0


def _softmax_input(case: SoftmaxCase, device: str) -> torch.Tensor:
    rows, cols, gap, scale, seed = case
    row, column = _softmax_start(case)
    generator = torch.Generator().manual_seed(seed)
    if scale == -math.inf:  # a masked row (round 27's adversary: an online softmax that started its max at -inf
        # computed -inf - (-inf) = NaN for a row whose first chunk was all -inf; x never held a non-finite value)
        wide = torch.randn(row + rows, cols + gap, generator=generator)
        wide += _masked_shift(seed)
        x = wide[row:, column:column + cols]
        x[:, :_masked_columns(cols)] = -math.inf
        if cols > 2:  # one more, a lone one among the finite values
            x[:, int(torch.randint(_masked_columns(cols), cols, (1,), generator=generator))] = -math.inf
            x[:, -1] = x[:, -1].nan_to_num(neginf=_masked_shift(seed))  # (it stays finite)
        return wide.to(device)[row:, column:column + cols]
    wide = torch.randn(row + rows, cols + gap, generator=generator) * (abs(scale) / 3)
    if scale < 0:  # every value far below 0 (3 standard deviations from `scale` stay below 0)
        wide = (wide + scale).clamp(max=scale / 10)
    return wide.to(device)[row:, column:column + cols]


def _triton_version() -> str:
    """The installed Triton's version, as `Triton 3.9.0` ("Triton" where it says none)."""
    import triton

    return f"Triton {getattr(triton, '__version__', '')}".strip()


def triton_missing() -> str | None:
    """Why Triton cannot run here, or None."""
    try:
        import triton  # noqa: F401
    except ImportError as err:
        return f"Triton is not importable ({err}): on a CPU, pip install -r requirements-triton.txt"
    return None


def without_triton() -> tuple[Any, Any]:
    """Stand-ins for `triton` and `triton.language` where Triton is not installed: a cell that defines a kernel
    (`@triton.jit`, `tl.constexpr`, `triton.next_power_of_2(n)`...) still runs, and launching the kernel
    (`kernel[grid](...)`) raises an ImportError that says Triton is needed."""

    class _Launch:
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise ImportError(triton_missing() or "Triton is missing")

    class _Missing:
        def __getattr__(self, name: str) -> Any:
            return _Missing()

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return _Missing()

        def __getitem__(self, grid: Any) -> Any:
            return _Launch()

    return _Missing(), _Missing()


# What Triton raises on a CPU where TRITON_INTERPRET was not set in time: launching a kernel compiled for a GPU, or
# calling Triton's own functions (tl.max...), decorated for a GPU when Triton was imported, from an interpreted kernel
_PROBE_SOURCE = """
@triton.jit
def course09_probe(x_ptr):
    tl.store(x_ptr, 1.0)
"""


@dataclass
class _Launches:
    """What the check saw of the Triton launches in a block: how many, and what each wrote where it must not."""

    count: int = 0
    strayed: list[str] = field(default_factory=list)  # writes outside the tensors a launch was given (guarded)
    read_outside: list[str] = field(default_factory=list)  # loads outside them (guarded, Triton's interpreter)
    shared: list[str] = field(default_factory=list)  # elements that two programs of one launch stored (interpreter)
    crossed: list[str] = field(default_factory=list)  # elements one program stored and another loaded (interpreter)
    into_x: list[str] = field(default_factory=list)  # writes into the storage x lies in (interpreter)
    unfenced: list[str] = field(default_factory=list)  # a program's read-back of its own stores, no barrier (interp.)


def _storage_bytes(t: torch.Tensor) -> torch.Tensor:
    """A uint8 view of the whole storage under `t` (a view's base included)."""
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


# Each call's x: the bytes of its whole storage (the caller's wider tensor included) compared before and after the call
# (round 72's second adversary: the gap between x's rows filled with -inf through `torch.empty(0).set_(x's storage)`,
# an alias with a version counter of its own, which x._version and a compare of x's view both missed).  On a GPU the
# compare is queued on the caller's stream, unwaited (a wait there would let a kernel that the caller's stream does not
# wait for finish before the checks that read on that stream), and judged at the end of the check (_X_BYTES_PENDING).
_X_BYTES_PENDING: list[tuple[str, tuple[int, ...], tuple[int, ...], int, torch.Tensor]] = []


def _x_storage_kept(x: torch.Tensor) -> torch.Tensor | None:
    """A copy of the bytes of x's whole storage (None for an empty storage)."""
    with _check_at_work():
        return _storage_bytes(x).clone() if x.untyped_storage().nbytes() else None


def _x_bytes_changed(x: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
    """On x's device, unwaited: [elements of x's storage changed outside x's view, those changed in it, the first
    changed outside (or -1)], comparing its bytes now with `kept` (an element changed: any of its bytes)."""
    now = _storage_bytes(x)
    changed = now != kept if now.numel() == kept.numel() else torch.ones_like(kept, dtype=torch.bool)
    size = x.element_size()
    changed = torch.cat([changed, changed.new_zeros(-changed.numel() % size)]).view(-1, size).any(1)
    inside = torch.zeros_like(changed)
    if x.numel():
        inside.as_strided(x.shape, x.stride(), x.storage_offset()).fill_(True)
    outside = changed & ~inside
    first = torch.where(outside.any(), outside.to(torch.uint8).argmax(), -1)
    return torch.stack([outside.sum(), (changed & inside).sum(), first])


def _x_storage_judged(ex: Any, call: str, x: torch.Tensor, kept: torch.Tensor | None, on_gpu: bool) -> None:
    """x's storage as it was before the call (see _X_BYTES_PENDING): judged now on a CPU, queued on a GPU."""
    if kept is None:
        return
    with _check_at_work():
        counts = _x_bytes_changed(x, kept)
    if on_gpu:
        _X_BYTES_PENDING.append((call, tuple(x.shape), tuple(x.stride()), x.element_size(), counts))
    else:
        _x_bytes_said(ex, call, tuple(x.shape), tuple(x.stride()), x.element_size(), counts)


def _x_storage_pending_judged(ex: Any) -> None:
    """The GPU's queued compares of x's storage (_X_BYTES_PENDING), after all work on the GPU ended."""
    pending = list(_X_BYTES_PENDING)
    _X_BYTES_PENDING.clear()
    if pending:
        torch.cuda.synchronize()
    for call, shape, strides, size, counts in pending:
        _x_bytes_said(ex, call, shape, strides, size, counts)


def _x_bytes_said(ex: Any, call: str, shape: tuple[int, ...], strides: tuple[int, ...], size: int,
                  counts: torch.Tensor) -> None:
    with _check_at_work():  # (the check's own read: counts may lie where a freed tensor of another call's did)
        outside, inside, first = (int(v) for v in counts.tolist())
    where = (f", the first: element {first} of the storage (bytes {first * size} to {first * size + size - 1}; x's "
             f"rows are {strides[0]} elements apart and {shape[-1]} long)" if outside else "")
    ex.expect(not outside and not inside, f"{call} changed the memory under x: {outside} element"
              f"{'s' * (outside != 1)} of x's storage outside x's view (the caller's, between or around x's rows)"
              f"{where}, and {inside} of x's own",
              "x's storage is the caller's, all of it: the elements between x's rows belong to the wider tensor x "
              "is a slice of, and no alias of that memory (a view, `torch.empty(0).set_(x.untyped_storage(), ...)`) "
              "makes it yours to write; write only into tensors you allocate")


def _described(a: object) -> object:
    """The tensor a launch argument stands for: itself, or the `base` of a tensor descriptor (Triton's host-side
    TensorDescriptor, which a kernel loads and stores through: TMA on Hopper)."""
    return a if isinstance(a, torch.Tensor) else getattr(a, "base", None)


def _launch_leaves(args: tuple, kwargs: dict) -> list[object]:
    """A launch's arguments, those inside tuples and lists too (Triton takes tuples as kernel arguments since 3.3:
    round 20's adversary passed `(y, x)` as one argument, which neither the guards nor the taint saw), each leaf as
    the tensor it stands for (`_described`) where it stands for one."""
    return [_described(a) for a in tree_leaves((args, kwargs))]


def _storages(args: tuple, kwargs: dict) -> dict[int, list[torch.Tensor]]:
    """The tensors among a launch's arguments (a descriptor's base included: round 19's adversary, whose store
    through a TensorDescriptor was neither guarded nor poisoned; those inside a tuple too: round 20's), by the
    storage they lie in."""
    found: dict[int, list[torch.Tensor]] = {}
    for a in _launch_leaves(args, kwargs):
        if isinstance(a, torch.Tensor) and a.layout == torch.strided and a.device.type != "meta":
            found.setdefault(a.untyped_storage().data_ptr(), []).append(a)
    return found


def _in_guards(groups: dict[int, list[torch.Tensor]]) -> tuple[dict[int, torch.Tensor], list[tuple]]:
    """Stand-ins for a launch's tensors (by id): the same layout in a copy of their storage that has guard bytes
    (0xFF: NaN in float32) on both sides, as large as the storage and at least GUARD_BYTES; and, per storage, what
    the check needs afterwards: (the original storage's bytes, the copy, the guard's length)."""
    stand_in: dict[int, torch.Tensor] = {}
    kept = []
    for tensors in groups.values():
        original = _true_bytes(tensors[0])  # (a decoyed storage's shadow: _DECOYS)
        nbytes = original.numel()
        guard = -(-max(GUARD_BYTES, nbytes) // 64) * 64
        copy = torch.full((guard + nbytes + guard,), 0xFF, dtype=torch.uint8, device=original.device)
        copy[guard:guard + nbytes] = original
        for t in tensors:
            # An empty tensor's data_ptr() is 0, so a kernel that reads one row of it (a grid of rows + 1, no row
            # mask) read address 0 and killed the process (the 09 adversary of 2026-11-29): its stand-in is one
            # element deep in each dimension, inside the guard after the storage, where a write shows as a stray.
            size = t.size() if t.numel() else torch.Size(max(d, 1) for d in t.size())
            stand_in[id(t)] = torch.empty(0, dtype=t.dtype, device=t.device).set_(
                copy.untyped_storage(), guard // t.element_size() + t.storage_offset(), size, t.stride())
        kept.append((original, copy, guard))
    return stand_in, kept


def _standing_in(stand_in: dict[int, torch.Tensor], a: object) -> object:
    """A launch argument with its tensors replaced by their guarded stand-ins (a descriptor: a copy of it whose base
    is; a tuple or a list: the same kind of container, rebuilt)."""
    if isinstance(a, (tuple, list)):
        return tree_map(partial(_standing_in, stand_in), a)
    if isinstance(a, torch.Tensor):
        return stand_in.get(id(a), a)
    base = _described(a)
    if base is None or id(base) not in stand_in:
        return a
    described = shallow_copy(a)
    object.__setattr__(described, "base", stand_in[id(base)])
    return described


def _out_of_guards(kept: list[tuple], seen: _Launches, n: int) -> None:
    """Note the guard bytes a launch wrote, and copy what it wrote inside the storages back to the originals."""
    for i, (original, copy, guard) in enumerate(kept):
        nbytes = original.numel()
        before = int((copy[:guard] != 0xFF).sum())
        after = int((copy[guard + nbytes:] != 0xFF).sum())
        if before or after:
            seen.strayed.append(f"launch {n} wrote {before + after} bytes outside the memory of tensor argument "
                                f"{i + 1} (" + (f"{before} before its start" if before else "") +
                                (", " if before and after else "") + (f"{after} after its end" if after else "") +
                                ")")
        original.copy_(copy[guard:guard + nbytes])


# The memory a guarded launch may touch (Triton's interpreter, on a CPU): the storages of the tensors it was given, as
# [start, end) addresses inside their guarded copies; the guarded copies themselves; a count of the elements it
# loaded outside the storages; and a count of those it stored outside the guarded copies.  Round 27's adversary: a
# load without a mask (or without the row mask, or a grid of rows + 1) read the guard bytes past x, threw them away
# and passed: the guards saw writes only.  On a GPU such a read can leave the allocation (an illegal address: the
# process's CUDA context is lost); the interpreter's loads are seen before they read.  Round 44's adversary: a grid of
# columns, not rows, stored rows far past y's guard, into the process's heap (the Python process aborted, "corrupted
# double-linked list", with no verdict): a lane whose element lies outside every guarded copy neither loads nor stores
# here, and is counted.
_READS: list[tuple[list[tuple[int, int]], list[tuple[int, int]], list[int], list[int]]] = []
# Beside each _READS entry, the accesses of the guarded launch, in the order they ran: (the program, its kind: "load",
# "store", "atomic" (a read-modify-write that commutes: add, max, min, and, or, xor), "exchange" (tl.atomic_xchg,
# tl.atomic_cas: the last writer wins, as with a store), "atomic load" (tl.atomic_load, or a read-modify-write whose
# operand changes nothing, tl.atomic_add(p, 0): a read) or "atomic store" (tl.atomic_store: a store), the addresses,
# for an atomic whether it acquires and whether it releases (at a scope wider than the program's block), and for a
# store or an exchange the values it wrote).  The
# interpreter runs a launch's programs one after the other; a GPU runs them in no fixed order.  An element two programs
# store is right on the CPU only if the right program happens to store last (round 113's adversary: rows stored whole
# from a padded block, the row's tail past its end over the next row's head, which the next program, run later, stored
# again; on a GPU the order is a race).  An element one program reads (a load, or an atomic) and another program of the
# same launch writes (a store, or an atomic) is read in the interpreter's order only (adversary 108: one launch of 2 *
# rows programs, the first half storing each row's max and sum, the second half loading them; round 67's third
# adversary: the same with the first half's writes made by tl.atomic_add), unless an atomic orders the two: see
# _judged_accesses (round 67's third adversary: a split row whose last program, by an acq_rel tl.atomic_add ticket,
# combines the others' partials, is right).  An element two programs store (or exchange) is judged by the last value
# each program wrote there: where those are the same, the order changes nothing (round 69's adversary: a grid rounded
# up, its extra programs clamped onto the last row, storing its values again, is right); where they differ, the last
# writer wins (round 69's adversary: each program of a split row writing the whole row by tl.atomic_xchg).
Access = tuple[tuple[int, int, int], str, np.ndarray, bool, bool, np.ndarray | None]
_ACCESSES: list[list[Access]] = []
# Beside each _ACCESSES entry, the plain stores of the program running now, since its start or its last
# tl.debug_barrier() (the interpreter's create_barrier): [the program, [(the tile's shape, the addresses stored, the
# position of each in the tile), ...], the addresses it loaded back in a tile of another shape or at another position].
# Adversary 121: exp(x - max) stored into y with the row's BLOCK, read back in chunks of 64 to be summed, no barrier
# between: right on the interpreter, which runs a program's lanes as one NumPy step.  On a GPU a program is a block
# of threads, each owning some elements of a tile; Triton orders nothing between threads for global memory (its
# barriers, Membar, guard shared memory; triton-lang/triton#1097: the cross_entropy kernel's explicit
# tl.debug_barrier()), so a thread that loads an element another thread stored may read it before the store lands.
# Which thread owns which element is the tile's layout, which the compiler derives from the tile's shape and the
# program's num_warps (getDefaultBlockedEncoding(shape, numWarps, threadsPerWarp, ...) in ConvertTritonToTritonGPU;
# the Coalesce pass then sets a load's or store's elements per thread from its pointers' contiguity), so an element at
# the same position of a tile of the same shape is taken as the same thread's (the store and the load of one `offs`,
# as the stash answers of round 68's second adversary do), another shape or another position as another thread's.
# What this leaves out (read in Triton's main branch, third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/
# LoadStoreOpToLLVM.cpp, not checked against each release): a tile smaller than the block's threads is replicated,
# and its store is made by one replica only (the store's emitRedundantThreadPredicate) while every replica loads; and
# two tiles of one shape whose pointers' contiguity differs may get different layouts.  A scalar atomic whose result
# the kernel keeps counts as a barrier after it: Triton makes it in one thread and hands its result to the program's
# other threads through shared memory behind a barrier (AtomicRMWOpConversion and AtomicCASOpConversion,
# finalizeAtomicResults, same file; round 67's third adversary's split row: each program stores its partial, draws
# an acq_rel ticket, and the last one loads every partial, its own among them, in a tile of another shape; right).
# No other atomic does (round 71's second adversary): a tensor atomic's results stay in each thread's registers, and
# one whose result is dropped has nothing to hand over (a relaxed or release one becomes a `red`, the op erased:
# `useRed`, same file), whatever its sem (a sem orders the accesses of the thread that makes the atomic, not the
# other threads'); main's insertAtomicOrderingBarriers adds CTA barriers around scalar release/acquire atomics,
# which the reference run's Triton 3.6 is not known to have.  An atomic is otherwise an access as a load or a store
# is: one that writes (tl.atomic_add and the other read-modify-writes that write, tl.atomic_xchg, tl.atomic_cas,
# tl.atomic_store) is noted as a store, and one whose result is kept (tl.atomic_load, a read-modify-write's old
# values) is judged as a load (round 71's second adversary: a stash written by a tensor tl.atomic_add, and one read
# back by tl.atomic_add(p, zeros), each without a barrier, were not seen).
_STASHED: list[list] = []
# What Triton 3.9's interpreter raises for an atomic of a dtype its `_interpreter.atomic_rmw` lacks (a float32 or
# float64 tl.atomic_xchg, a bfloat16 tl.atomic_add), which a GPU makes; and the atomics it refused in this call
UNSUPPORTED_ATOMIC = "Unsupported data type"
_INTERPRETER_REFUSED: list[str] = []


def _stash_noted(builder: Any, ptrs: Any, lanes: np.ndarray) -> None:
    """Note a store of the running program, a plain one or an atomic that writes (its tile's shape, its addresses at
    `lanes`, their positions), into the innermost _STASHED."""
    if not _STASHED:
        return
    state = _STASHED[-1]
    program = tuple(getattr(builder, "grid_idx", None) or (0, 0, 0))
    if state[0] != program:
        state[0], state[1] = program, []
    addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    if lanes.any():
        state[1].append((addresses.shape, addresses[lanes].ravel(), np.flatnonzero(lanes.ravel())))


def _read_back_judged(builder: Any, ptrs: Any, lanes: np.ndarray) -> None:
    """For a load of the running program (a plain one, or an atomic whose result the kernel keeps): the addresses it
    stored since its start or its last barrier that it now loads in a tile of another shape, or at another position of
    one of the same shape, noted in the innermost _STASHED (the last store of an address is the one compared)."""
    if not _STASHED or not lanes.any():
        return
    state = _STASHED[-1]
    if state[0] != tuple(getattr(builder, "grid_idx", None) or (0, 0, 0)) or not state[1]:
        return
    addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    loaded, where = addresses[lanes].ravel(), np.flatnonzero(lanes.ravel())
    open_ = np.ones(loaded.shape, dtype=bool)  # load lanes not yet matched with a later store
    for shape, stored, at in reversed(state[1]):
        hit = open_ & np.isin(loaded, stored)
        if not hit.any():
            continue
        open_ &= ~hit
        if shape != addresses.shape:
            state[2].update(loaded[hit].tolist())
            continue
        order = np.argsort(stored, kind="stable")
        found = order[np.searchsorted(stored[order], loaded[hit], side="right") - 1]  # the last lane storing it
        state[2].update(loaded[hit][at[found] != where[hit]].tolist())
        if not open_.any():
            return


def _barrier_watched(original: Callable) -> Callable:
    """InterpreterBuilder.create_barrier (tl.debug_barrier(): a no-op in the interpreter, on a GPU a bar.sync of the
    program's threads, which orders their memory accesses): the running program's stores forgotten (_STASHED)."""
    def create_barrier(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _STASHED:
            _STASHED[-1][1] = []
        return original(self, *args, **kwargs)

    return create_barrier


def _lanes(ptrs: Any, mask: Any, *range_sets: list[tuple[int, int]]) -> tuple[np.ndarray, ...]:
    """(the active lanes of a masked access, and for each of `range_sets`, which lanes lie wholly inside one of its
    [start, end) ranges).  `mask` None: every lane is active (an atomic compare-and-swap has no mask)."""
    addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    active = (np.ones(addresses.shape, dtype=bool) if mask is None
              else np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape))
    size = max(int(getattr(ptrs.get_element_ty(), "primitive_bitwidth", 8)) // 8, 1)
    insides = []
    for ranges in range_sets:
        inside = np.zeros(addresses.shape, dtype=bool)
        for start, end in ranges:
            inside |= (addresses >= start) & (addresses + size <= end)
        insides.append(inside)
    return (active, *insides)


def _kept_inside(mask: Any, active: np.ndarray, safe: np.ndarray) -> Any:
    """The access's mask with the lanes outside the guarded copies turned off (the same mask where none is)."""
    if not (active & ~safe).any():
        return mask
    from triton.runtime.interpreter import TensorHandle

    return TensorHandle(np.ascontiguousarray(active & safe), mask.dtype)


def _bits(values: Any, shape: tuple[int, ...], lanes: np.ndarray) -> np.ndarray | None:
    """The bits of the values an access writes, at its recorded lanes (unsigned integers of the values' width)."""
    data = np.ascontiguousarray(np.broadcast_to(np.asarray(values.data), shape))
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(data.dtype.itemsize)
    return None if width is None else data.view(width)[lanes].ravel()


def _recorded(builder: Any, kind: str, ptrs: Any, lanes: np.ndarray, sem: Any = None, scope: Any = None,
              values: Any = None) -> None:
    """Note an access of the running program into the innermost _ACCESSES (its lanes inside the guarded copies, and
    the values it writes, if given); stop a program that has run PROGRAM_LIMIT_S (_ProgramWaits).  An atomic orders
    other programs' accesses only at the GPU's scope or the system's: scope="cta" orders the threads of its own
    program's block (round 69's adversary: a split row's acq_rel ticket drawn with scope="cta"; Triton's tl.atomic_add
    docstring, "scope"; PTX ISA, "Memory Consistency Model": https://docs.nvidia.com/cuda/parallel-thread-execution/)."""
    if time.process_time() - _PROGRAM_STARTED[0] > PROGRAM_LIMIT_S:
        raise _ProgramWaits
    if not _ACCESSES:
        return
    name = str(getattr(sem, "name", sem) or "").upper()  # tl.atomic_*'s sem: ACQUIRE_RELEASE unless the kernel says
    if str(getattr(scope, "name", scope) or "").upper() == "CTA":  # tl.atomic_*'s scope: GPU unless the kernel says
        name = ""
    addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    _ACCESSES[-1].append((tuple(getattr(builder, "grid_idx", None) or (0, 0, 0)), kind, addresses[lanes].ravel(),
                          "ACQUIRE" in name, "RELEASE" in name,
                          None if values is None else _bits(values, addresses.shape, lanes)))


def _scalar_atomic() -> bool:
    """Whether the running atomic's pointer is a scalar, not a block: read from the `ptr` argument of Triton's
    semantic function that made it (a tl.tensor whose type is_block or not); False where none is found."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        ptr = frame.f_locals.get("ptr")
        is_block = getattr(getattr(ptr, "type", None), "is_block", None)
        if callable(is_block):
            return not is_block()
        frame = frame.f_back
    return False


def _atomic_fenced(kept: bool) -> None:
    """After an atomic of the running program: a scalar one whose result the kernel keeps hands that result to the
    program's threads behind a barrier, which forgets the program's stores (see _STASHED); no other atomic does."""
    if _STASHED and kept and _scalar_atomic():
        _STASHED[-1][1] = []


# The memory order and scope of the tl.atomic_load or tl.atomic_store running in this thread (.given: (sem, scope)),
# for the masked load or store that Triton 3.9's interpreter makes of it (see _atomic_watched)
_ATOMIC_ORDER = threading.local()


def _atomic_order() -> tuple[Any, Any]:
    """(sem, scope) of the tl.atomic_load or tl.atomic_store whose masked load or store runs now, taken once; (None,
    None): a plain load or store."""
    given = getattr(_ATOMIC_ORDER, "given", None)
    _ATOMIC_ORDER.given = None
    return given or (None, None)


def _atomic_watched(original: Callable) -> Callable:
    """InterpreterBuilder.create_atomic_load and create_atomic_store (tl.atomic_load, tl.atomic_store: Triton 3.7 and
    later), which Triton 3.9's interpreter makes by its create_masked_load and create_masked_store: their sem and scope
    handed to that load or store (_atomic_order), which records them (a load's acquire, a store's release: Triton's
    atomic_load takes "acquire" or "relaxed", its atomic_store "release" or "relaxed").  Round 69's second adversary:
    a split row's arrivals counted by release tl.atomic_adds, the count read by tl.atomic_load(sem="acquire"), was
    judged as a plain load racing the adds, and FAILed; it is right."""
    def create_atomic(self: Any, *args: Any, **kwargs: Any) -> Any:
        sem, scope = (args[-2], args[-1]) if len(args) >= 4 else (kwargs.get("sem"), kwargs.get("scope"))
        _ATOMIC_ORDER.given = (sem, scope)
        try:
            return original(self, *args, **kwargs)
        finally:
            _ATOMIC_ORDER.given = None

    return create_atomic


def _load_watched(original: Callable) -> Callable:
    """InterpreterBuilder.create_masked_load (the loads of an interpreted kernel: tl.load, a descriptor's, and in
    Triton 3.9 tl.atomic_load, recorded with its sem and scope: _atomic_watched), counting into the innermost _READS
    the active lanes whose element lies outside the launch's storages, and loading none outside the guarded copies."""
    def create_masked_load(self: Any, ptrs: Any, mask: Any, *args: Any, **kwargs: Any) -> Any:
        sem, scope = _atomic_order()
        if _INSIDE:
            _other_call_before_read_back(self, ptrs, mask)
        if _READS:
            storages, copies, outside, _ = _READS[-1]
            try:
                active, inside, safe = _lanes(ptrs, mask, storages, copies)
                outside[0] += int((active & ~inside).sum())
                _recorded(self, "load" if sem is None else "atomic load", ptrs, active & safe, sem, scope)
                _read_back_judged(self, ptrs, active & safe)
                if sem is not None:  # tl.atomic_load
                    _atomic_fenced(not _result_dropped())
                mask = _kept_inside(mask, active, safe)
            except Exception:  # noqa: BLE001, S110 -- a Triton whose handles differ: the load is not judged
                pass
        return original(self, ptrs, mask, *args, **kwargs)

    return create_masked_load


def _store_watched(original: Callable) -> Callable:
    """InterpreterBuilder.create_masked_store (tl.store, a descriptor's, and in Triton 3.9 tl.atomic_store, recorded
    with its sem and scope: _atomic_watched): a lane whose element lies outside the launch's guarded copies stores
    nothing, and is counted into the innermost _READS (stores inside the guards are seen by _out_of_guards)."""
    def create_masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *args: Any, **kwargs: Any) -> Any:
        sem, scope = _atomic_order()
        given = mask
        if _READS:
            _, copies, _, wrote = _READS[-1]
            try:
                active, safe = _lanes(ptrs, mask, copies)
                wrote[0] += int((active & ~safe).sum())
                _recorded(self, "store" if sem is None else "atomic store", ptrs, active & safe, sem, scope,
                          values=value)
                _stash_noted(self, ptrs, active & safe)  # a plain store, or tl.atomic_store
                mask = _kept_inside(mask, active, safe)
            except Exception:  # noqa: BLE001, S110 -- a Triton whose handles differ: the store is not judged
                pass
        out = original(self, ptrs, value, mask, *args, **kwargs)
        _other_call_inside(self, ptrs, given)
        return out

    return create_masked_store


def _count_read_and_write(builder: Any, ptrs: Any, mask: Any, sem: Any, scope: Any = None, kind: str = "atomic",
                          values: Any = None) -> tuple[np.ndarray, np.ndarray] | None:
    """For an atomic, which reads and writes: count its active lanes outside the storages as loads outside, and those
    outside the guarded copies as stores outside, into the innermost _READS, and record its lanes inside them (a read
    and a write at once, with its memory order and scope; an "exchange" with the values it writes) into _ACCESSES;
    return (the active lanes, those inside the guarded copies) (None: no launch is watched)."""
    if not _READS:
        return None
    storages, copies, outside, wrote = _READS[-1]
    active, inside, safe = _lanes(ptrs, mask, storages, copies)
    outside[0] += int((active & ~inside).sum())
    wrote[0] += int((active & ~safe).sum())
    _recorded(builder, kind, ptrs, active & safe, sem, scope, values)
    return active, safe


def _changes_nothing(op: Any, value: Any, mask: Any) -> bool:
    """Whether a read-modify-write's operand leaves every active lane as it was (add, or, xor, unsigned max of 0; and,
    unsigned min of all ones; max of the lowest value, min of the highest): a read, as tl.atomic_add(p, 0) is."""
    name = str(getattr(op, "name", op)).upper()
    try:
        data = np.asarray(value.data)
        lanes = data if mask is None else data[np.broadcast_to(np.asarray(mask.data, dtype=bool), data.shape)]
    except Exception:  # noqa: BLE001 -- a Triton whose handles differ: a write
        return False
    if not lanes.size:
        return False
    if name in ("ADD", "FADD", "OR", "XOR", "UMAX"):
        return bool((lanes == 0).all())
    if name in ("AND", "UMIN") and lanes.dtype.kind in "iu":
        return bool((~lanes == 0).all())
    if name in ("MAX", "MIN") and lanes.dtype.kind in "iuf":
        kind = lanes.dtype.kind
        low, high = (-np.inf, np.inf) if kind == "f" else (np.iinfo(lanes.dtype).min, np.iinfo(lanes.dtype).max)
        return bool((lanes == (low if name == "MAX" else high)).all())
    return False


_OPS: dict[Any, tuple[list[int], list[str]]] = {}  # a kernel's code: its instructions' offsets, and their names
_CALLS: dict[Any, dict[tuple, ast.Call]] = {}  # a kernel's code: its calls in its source, by their span


def _kernel_frame() -> Any:
    """The innermost frame outside Triton and this module: the kernel's (or its @triton.jit helper's) line that is
    running the access; None where there is none."""
    import triton

    inside = (str(Path(triton.__file__).parent), __file__)
    frame: Any = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame = frame.f_back
    return frame


def _instruction(frame: Any) -> int:
    """The index, among the frame's code's instructions (_OPS), of the one running (f_lasti may point into the
    call's inline caches, which dis leaves out)."""
    code = frame.f_code
    if code not in _OPS:
        ops = list(dis.get_instructions(code))
        _OPS[code] = ([op.offset for op in ops], [op.opname for op in ops])
    return bisect.bisect_right(_OPS[code][0], frame.f_lasti) - 1


def _result_dropped() -> bool:
    """Whether the kernel line calling the running atomic drops its result (`tl.atomic_add(p, v)` as a statement: the
    instruction after the call, in _kernel_frame, is POP_TOP); False where unknown."""
    try:
        frame = _kernel_frame()
        if frame is None:
            return False
        after = _instruction(frame) + 1
        names = _OPS[frame.f_code][1]
        return after < len(names) and names[after] == "POP_TOP"
    except Exception:  # noqa: BLE001 -- another Python's frames: the result counted as used
        return False


def _calls_in(code: Any) -> dict[tuple, ast.Call]:
    """The calls of a kernel's source by their span (line, end line, column, end column), as Triton's interpreter
    compiled it (its FunctionRewriter: the function's block from its def line, dedented, at the file's lines)."""
    if code not in _CALLS:
        calls: dict[tuple, ast.Call] = {}
        try:
            lines = linecache.getlines(code.co_filename)
            block = inspect.getblock(lines[code.co_firstlineno - 1:])
            tree = ast.parse(textwrap.dedent("".join(block)))
            ast.increment_lineno(tree, code.co_firstlineno - 1)
            calls = {(node.lineno, node.end_lineno, node.col_offset, node.end_col_offset): node
                     for node in ast.walk(tree) if isinstance(node, ast.Call)}
        except Exception:  # noqa: BLE001, S110 -- no source: no call found
            pass
        _CALLS[code] = calls
    return _CALLS[code]


def _constant_as_written(node: ast.expr | None) -> bool:
    """Whether an operand, as the kernel writes it, is a constant: a number (0, -0.0, float("-inf")), or a tile
    of one (tl.zeros, tl.zeros_like, tl.full with a number)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Invert):
        return _constant_as_written(node.operand)
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in ("float", "int"):
            return len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and not node.keywords
        if name in ("zeros", "zeros_like"):
            return True
        if name == "full":
            value = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "value"), None)
            return _constant_as_written(value)
    return False


def _operand_constant() -> bool:
    """Whether the running read-modify-write's operand is written as a constant in the kernel (the call found by the
    span of the kernel frame's instruction, its `val`: the second argument or the keyword); False where unknown."""
    try:
        frame = _kernel_frame()
        if frame is None:
            return False
        offset = _OPS[frame.f_code][0][_instruction(frame)]
        span = list(frame.f_code.co_positions())[offset // 2]
        call = _calls_in(frame.f_code).get(span)
        if call is None:
            return False
        value = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "val"), None)
        return _constant_as_written(value)
    except Exception:  # noqa: BLE001 -- another Python's frames: a write
        return False


def _rmw_watched(original: Callable) -> Callable:
    """InterpreterBuilder.create_atomic_rmw (tl.atomic_add, _max, _min, _and, _or, _xor, _xchg), which in Triton 3.6
    and 3.9 reads and writes through `_interpreter.atomic_rmw`, not through the masked load and store above.  Round
    46's engineer: the softmax over columns with tl.atomic_add in place of tl.store aborted the Python process
    ("corrupted double-linked list") where the store's FAILed.  A lane outside the guarded copies does nothing here
    and is counted, as a store's is.  tl.atomic_xchg is an "exchange" (see Access); the others commute, and one whose
    operand is written as a constant that changes nothing (tl.atomic_add(p, 0), tl.atomic_add(p, tl.zeros(...)):
    _operand_constant, _changes_nothing) and whose result the kernel keeps (_result_dropped) is an "atomic load", an
    atomic read written as a read-modify-write.  An operand that only happens to change nothing is a write like any
    other (round 71's second adversary: `prev = tl.atomic_add(s, part)`, a chunk far below its row's max adding
    exactly 0.0, was judged a read racing the other programs' adds; atomics that commute on one address never race).
    Like a load and a store, an atomic makes the other caller's call before it reads back what its program stored;
    one whose result is kept is judged as a read-back of the program's stores, one that writes is noted as a store
    for a later read-back (round 69's adversary: a kept workspace stashed by stores and read back by
    tl.atomic_xchg(w, 0)), and a scalar one whose result is kept is a barrier after it (see _STASHED)."""
    def create_atomic_rmw(self: Any, op: Any, ptrs: Any, value: Any, mask: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSIDE:
            _other_call_before_read_back(self, ptrs, mask)
        given = mask
        name = str(getattr(op, "name", op)).upper()
        try:
            exchange = name.endswith("XCHG")
            kept = not _result_dropped()
            kind = ("exchange" if exchange else "atomic load"
                    if kept and _changes_nothing(op, value, mask) and _operand_constant() else "atomic")
            lanes = _count_read_and_write(self, ptrs, mask, args[0] if args else kwargs.get("sem"),
                                          args[1] if len(args) > 1 else kwargs.get("scope"), kind,
                                          value if exchange else None)
            if lanes is not None:
                if kept:
                    _read_back_judged(self, ptrs, lanes[0] & lanes[1])
                if kind != "atomic load":
                    _stash_noted(self, ptrs, lanes[0] & lanes[1])
                _atomic_fenced(kept)
                mask = _kept_inside(mask, *lanes)
        except Exception:  # noqa: BLE001, S110 -- a Triton whose handles differ: the atomic is not judged
            pass
        try:
            out = original(self, op, ptrs, value, mask, *args, **kwargs)
        except Exception as error:
            if UNSUPPORTED_ATOMIC in str(error):  # Triton 3.9's interpreter: a float32 tl.atomic_xchg, for one
                _INTERPRETER_REFUSED.append(f"tl.atomic_{name.lower().removeprefix('f')} on "
                                            f"{np.asarray(value.data).dtype}")
            raise
        _other_call_inside(self, ptrs, given)
        return out

    return create_atomic_rmw


def _cas_watched(original: Callable) -> Callable:
    """InterpreterBuilder.create_atomic_cas (tl.atomic_cas, through `_interpreter.atomic_cas`, and with no mask): a
    lane outside the guarded copies compares and swaps on a scratch element of its own instead, and is counted.  An
    "exchange" (see Access: its value recorded as written, whether the compare holds or not), with the read-back
    call, judging, notes and barrier of _rmw_watched."""
    def create_atomic_cas(self: Any, ptrs: Any, cmp: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSIDE:
            _other_call_before_read_back(self, ptrs, None)
        given = ptrs
        scratch = None
        try:
            lanes = _count_read_and_write(self, ptrs, None, args[0] if args else kwargs.get("sem"),
                                          args[1] if len(args) > 1 else kwargs.get("scope"), "exchange", value)
            if lanes is not None:
                kept = not _result_dropped()
                if kept:
                    _read_back_judged(self, ptrs, lanes[0] & lanes[1])
                _stash_noted(self, ptrs, lanes[0] & lanes[1])
                _atomic_fenced(kept)
            if lanes is not None and (lanes[0] & ~lanes[1]).any():
                from triton.runtime.interpreter import TensorHandle

                safe = lanes[1]
                addresses = np.array(ptrs.data, dtype=np.uint64)
                scratch = np.zeros(addresses.size + 1, dtype=np.uint64)  # 8 bytes a lane, 8-aligned
                lane = np.arange(addresses.size, dtype=np.uint64).reshape(addresses.shape)
                own = np.uint64(scratch.ctypes.data) + lane * np.uint64(8)
                ptrs = TensorHandle(np.where(safe, addresses, own).astype(np.asarray(ptrs.data).dtype), ptrs.dtype)
        except Exception:  # noqa: BLE001, S110 -- a Triton whose handles differ: the atomic is not judged
            pass
        try:
            out = original(self, ptrs, cmp, value, *args, **kwargs)
        finally:
            del scratch  # held until the swap has run
        _other_call_inside(self, given)
        return out

    return create_atomic_cas


class _ProgramWaits(BaseException):
    """A program of a guarded launch ran past PROGRAM_LIMIT_S (raised from its next access: see _recorded)."""


# How the interpreter's grid runs, on a CPU (_grid_watched): the innermost last; GRID_ORDERS' names: each launch's
# programs in the grid's order (""), in reversed order, the last program first ("reversed"), or with axis 0 fastest
# ("axis 0 fastest": program (1, 0, 0) right after (0, 0, 0)).  The interpreter (triton/runtime/interpreter.py,
# GridExecutor.__call__, in Triton 3.6 and 3.9) runs a launch's programs one after the other, `for x in range(grid[0]):
# for y ...: for z ...`, each after `interpreter_builder.set_grid_idx(x, y, z)`; a GPU runs them in no fixed order, at
# once or not.  Reversing the order turns every pair of programs around: a result that one order made right and the
# other makes wrong depends on the order (round 67's third adversary: a one-launch softmax whose second half read the
# statistics that its first half published by tl.atomic_add read zeros, and one whose second half spin-waited for a flag
# of the first half's never ended: CUDA promises no forward progress between the blocks of one launch).  A right split
# reduction ("the last program to draw a tl.atomic_add ticket combines"; CUDA's threadFenceReduction) is right in any
# order.  Axis 0 fastest: program_id(0) is blockIdx.x, and a GPU starts a launch's blocks in no promised order (CUDA C++
# Programming Guide, "Thread Hierarchy": "It must be possible to execute blocks in any order, in parallel or in series",
# https://docs.nvidia.com/cuda/cuda-c-programming-guide/), in practice about blockIdx.x first.  The grid's order and its
# reverse keep the programs of a row of a (rows, parts) grid together, this one spreads them (round 69's second
# adversary: one ticket counter for the whole launch, every 4th ticket combining its own row, was right only where a
# row's 4 programs ran one after the other).
GRID_ORDERS = {"": "", "reversed": ", the programs of each launch run last to first",
               "axis 0 fastest": ", the programs of each launch run with program_id(0) fastest (as a GPU hands them "
                                 "out)"}
_GRID_ORDER: list[str] = []
# When the running program started (set_grid_idx), in the process's CPU seconds (a busy machine stretches a clock's
# seconds, not the CPU a program uses; a program that spins uses CPU), for PROGRAM_LIMIT_S
_PROGRAM_STARTED = [math.inf]
# Another caller's call (_softmax_two_callers), made inside the programs of the first call's launches, in the
# interpreter: in each program of each counted launch, right after the program's first write (a store or an atomic),
# and right before its first load of an address it stored, at most OTHER_CALLS_INSIDE times a call.  Inside a
# program, not between two programs: round 68's adversary kept a workspace per shape that each program wrote and read
# back (a write and a read of one program are never split by a call made between programs).  After every program's
# first write, in every launch: round 67's third adversary kept a split row's ticket counters across calls, and round
# 68's escaped a call made at one point of one launch (a one-program launch in front of the split one; a grid
# rounded up so that the middle program began a row): a kept counter is off its start after a row's first ticket,
# until its last.
# Made from whichever thread runs the call's launches (round 68's second adversary: an answer that made its launches
# from a worker thread it joined escaped a call made only on the first caller's thread, and passed with no other call
# made); none while one is being made (the other call's own launches, from any thread, make none).  Also right before
# a program's first load of an address that it stored earlier (round 68's second adversary: a harmless first write,
# the row's max saved or y zeroed, then a workspace kept per shape stashed and read back, after the one call).
@dataclass
class _OtherCalls:
    call: Callable[[], None]
    made: int = 0
    busy: bool = False  # the other call is being made (its launches make none)
    programs: set = field(default_factory=set)  # (kind, launch, program) triples that made theirs
    stored: dict = field(default_factory=dict)  # (launch, program): the addresses it stored, until its read-back call


_INSIDE: list[_OtherCalls] = []
OTHER_CALLS_INSIDE = 16


def _inside_now(builder: Any) -> tuple[_OtherCalls, tuple] | None:
    """(_INSIDE's innermost, the running (launch, program)) where an other call may be made now (see _INSIDE)."""
    if not (_INSIDE and _COUNTING and getattr(_IN_A_LAUNCH, "running", False)):
        return None
    other = _INSIDE[-1]
    if other.busy or other.made >= OTHER_CALLS_INSIDE:
        return None
    return other, (_COUNTING[-1][0].count, tuple(getattr(builder, "grid_idx", None) or (0, 0, 0)))


def _make_other_call(other: _OtherCalls, builder: Any) -> None:
    """other's call, the interpreter's grid put back after it (another launch sets it)."""
    other.made += 1
    other.busy = True
    dim, idx = getattr(builder, "grid_dim", None), getattr(builder, "grid_idx", None)
    try:
        other.call()
    finally:
        other.busy = False
        builder.grid_dim, builder.grid_idx = dim, idx


def _other_call_inside(builder: Any, ptrs: Any = None, mask: Any = None) -> None:
    """_INSIDE's call, after the first write of the running program (see _INSIDE); the addresses a store wrote (ptrs
    and mask given) noted for _other_call_before_read_back."""
    now = _inside_now(builder)
    if now is None:
        return
    other, key = now
    if ptrs is not None and ("read", *key) not in other.programs:
        try:
            addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
            active = (np.ones(addresses.shape, dtype=bool) if mask is None
                      else np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape))
            other.stored.setdefault(key, []).append(addresses[active].ravel().copy())
        except Exception:  # noqa: BLE001, S110 -- a Triton whose handles differ: no read-back call
            pass
    if ("write", *key) in other.programs:
        return
    other.programs.add(("write", *key))
    _make_other_call(other, builder)


def _other_call_before_read_back(builder: Any, ptrs: Any, mask: Any) -> None:
    """_INSIDE's call, right before the running program's first load of an address that it stored earlier (see
    _INSIDE): a write and its read-back inside one program split by another caller's call."""
    now = _inside_now(builder)
    if now is None:
        return
    other, key = now
    stored = other.stored.get(key)
    if not stored or ("read", *key) in other.programs:
        return
    try:
        addresses = np.asarray(ptrs.data).astype(np.uint64, copy=False)
        active = (np.ones(addresses.shape, dtype=bool) if mask is None
                  else np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape))
        if not np.isin(addresses[active], np.concatenate(stored)).any():
            return
    except Exception:  # noqa: BLE001 -- a Triton whose handles differ: no read-back call
        return
    other.programs.add(("read", *key))
    del other.stored[key]
    _make_other_call(other, builder)


def _grid_watched(original: Callable) -> Callable:
    """InterpreterBuilder.set_grid_idx, which picks the program that runs next: in the order _GRID_ORDER names (the
    interpreter asks for program (x, y, z) as the `n`th, n = (x * ny + y) * nz + z; "axis 0 fastest" runs the one
    whose x = n % nx, y = n // nx % ny, z = n // (nx * ny) instead); the start of the program noted
    (_PROGRAM_STARTED)."""
    def set_grid_idx(self: Any, x: int, y: int, z: int) -> Any:
        nx, ny, nz = self.grid_dim
        order = _GRID_ORDER[-1] if _GRID_ORDER else ""
        if order == "reversed":
            x, y, z = nx - 1 - x, ny - 1 - y, nz - 1 - z
        elif order == "axis 0 fastest":
            n = (x * ny + y) * nz + z
            x, y, z = n % nx, n // nx % ny, n // (nx * ny)
        _PROGRAM_STARTED[0] = time.process_time()
        return original(self, x, y, z)

    return set_grid_idx


def _access_patches() -> list[tuple[type, str, Callable, Callable]]:
    """What _counting_launches patches to see a guarded launch's loads, stores and atomics: the interpreter's, where
    Triton has one, each with what it held and its watcher."""
    try:
        from triton.runtime.interpreter import InterpreterBuilder
    except Exception:  # noqa: BLE001 -- no interpreter in this Triton (or it cannot load): nothing to watch
        return []
    found = []
    for name, watcher in (("create_masked_load", _load_watched), ("create_masked_store", _store_watched),
                          ("create_atomic_rmw", _rmw_watched), ("create_atomic_cas", _cas_watched),
                          ("create_atomic_load", _atomic_watched), ("create_atomic_store", _atomic_watched),
                          ("create_barrier", _barrier_watched),
                          ("set_grid_idx", _grid_watched)):  # (a builder without atomic loads and stores: not patched)
        held = InterpreterBuilder.__dict__.get(name)
        if isinstance(held, FunctionType):
            found.append((InterpreterBuilder, name, held, watcher))
    return found  # type: ignore[return-value]  # list is invariant: mypy infers the tuples narrower than the annotation


_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # (by width in bytes)


def _poison_what_changed(groups: dict[int, list[torch.Tensor]], snapshots: list[torch.Tensor]) -> None:
    """Fill with all-ones bytes every element of a storage that the launch changed, whatever the dtype of the views
    it was given: 0xFF... is a NaN in float16, bfloat16, float32 and float64 alike, so a result the kernel wrote
    through an integer view (`y.view(torch.int32)`, its bits stored) reads as NaN through the float view returned
    (round 71's last adversary: only floating views were poisoned, and a right answer's y, handed over as int32, was
    taken for not the kernel's).  An element is as wide as the widest view the launch was given of that storage, and
    4 bytes at least (a float32 result written through a byte view is poisoned whole; two float16 neighbours share
    their poison), of a width that divides the storage's bytes; it counts as changed when any of its bytes did."""
    for tensors, before in zip(groups.values(), snapshots, strict=True):
        now = _true_bytes(tensors[0])
        if not now.numel():
            continue
        widest = max(4, *(t.element_size() for t in tensors))
        size = next((n for n in (widest, 8, 4, 2) if n <= widest and now.numel() % n == 0), 1)
        if size in _WORDS:  # compared and filled as integers of the element's width: as cheap as a float view's NaN
            words, was = now.view(_WORDS[size]), before.view(_WORDS[size])
            words.masked_fill_(words != was, -1 if size > 1 else 0xFF)
        else:
            now.view(-1, size).masked_fill_((now != before).view(-1, size).any(dim=1, keepdim=True), 0xFF)


# The _counting_launches blocks running (the innermost last), for every thread: a launch counts into the innermost's
# record, read when the kernel runs (round 26's adversary: a record bound when the grid was, `kernel[grid]`, missed
# a launcher kept from an earlier call and every `kernel.run(..., grid=...)`, so that a right answer FAILed and a
# store past y, or PyTorch's softmax of what such a launch copied, passed).  Each: (record, guarded, poisoned).
_COUNTING: list[tuple[_Launches, bool, bool]] = []
_IN_A_LAUNCH = threading.local()  # .running: a counted launch runs in this thread (a launcher's inner run is in one)
# The storage of the x being judged (its untyped storage's data_ptr, the innermost last): a guarded launch that writes
# into it, anywhere, is noted in `into_x` (round 68's adversary: x's row as the kernel's scratch, its values stored
# back before the program ended, which x compared after the call never shows; and each row's statistics stored into
# the elements after it, the caller's wider tensor's, outside x's view)
_X_STORAGE: list[int] = []


# What runs right after the next counted launch returns, once: another caller's call (_softmax_two_callers)
_BETWEEN: list[Callable[[], None]] = []


def _launched(launch: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """_launched_once, then what _BETWEEN holds, if anything (once); another caller's call's launch counted in its own
    record (_AnotherCall), and nothing else."""
    other = _another_call_of([a for a in _launch_leaves(args, kwargs) if isinstance(a, torch.Tensor)]) \
        if _OTHERS else None
    if other is not None:
        return other.launched(launch, args, kwargs)
    out = _launched_once(launch, args, kwargs)
    if not _COUNTING or getattr(_IN_A_LAUNCH, "running", False):
        return out
    if _INSIDE and not _INSIDE[-1].made and not _INSIDE[-1].busy:  # from any thread (see _INSIDE)
        _INSIDE[-1].made += 1  # where no program of the launch wrote (or the interpreter was not watched)
        _INSIDE[-1].busy = True
        try:
            _INSIDE[-1].call()
        finally:
            _INSIDE[-1].busy = False
    if _BETWEEN:
        _BETWEEN.pop()()
    return out


def _writes_into_x(groups: dict[int, list[torch.Tensor]], kept: list[tuple], accesses: list[Access]) -> int:
    """How many addresses of x's storage (the whole storage, x's view or not: see _X_STORAGE) a guarded launch wrote,
    by a store or an atomic."""
    if not _X_STORAGE or _X_STORAGE[-1] not in groups:
        return 0
    original, copy, guard = kept[list(groups).index(_X_STORAGE[-1])]
    start = copy.data_ptr() + guard
    end = start + original.numel()
    written: set[int] = set()
    for _, kind, addresses, *_ in accesses:
        if kind not in ("load", "atomic load"):
            written.update(a for a in np.unique(addresses).tolist() if start <= a < end)
    return len(written)


def _judged_accesses(accesses: list[Access]) -> tuple[int, int]:
    """(how many addresses two programs or more stored, by a plain store or an exchange (tl.atomic_xchg, tl.atomic_cas),
    with different last values: one program storing an address twice is its own business, two programs storing the
    same value leave it whatever their order, and atomics that commute (add, max, min, and, or, xor) are made to share;
    how many addresses a program read, by a load or an atomic, that another program of the same launch wrote, by a
    store or an atomic, with no atomic to order the two).

    Read and write are ordered where one program, after its access, releases (an atomic whose sem releases: Triton's
    default acq_rel does) an address that the other program, before its own access, acquires from it: the release
    first, in the interpreter's run (CUDA's threadFenceReduction, Triton's split-K semaphore: each program stores its
    part, then draws a ticket with tl.atomic_add; the one that draws the last ticket loads the others' parts).  Two
    atomics that commute on one address never race.  Whether a read sees the write, and not what was there before it,
    is left to the interpreter's order, which _GRID_ORDER turns around.

    An atomic read (tl.atomic_load, tl.atomic_add(p, 0)) of another program's atomic write is ordered by the same rule,
    but not by the two accesses themselves (the write releasing, the read acquiring: it acquires the write only if it
    reads it, which is the question): round 69's second adversary, a split row's ticket drawn first, the partials
    published by tl.atomic_max / tl.atomic_add and read back by tl.atomic_add(slot, 0) by the last ticket's holder,
    which on a GPU may read a slot before a slower program's atomics land there.  Except on an address the reading
    program counts into itself by an atomic (a ticket, an arrival count: its value tells how many came before, in any
    order; round 69's second adversary's right answer, the arrivals counted by release tl.atomic_adds and read by
    tl.atomic_load(sem="acquire")), where it is the atomics that commute above."""
    writes: dict[int, list[tuple[tuple[int, int, int], int, bool]]] = {}
    last: dict[int, dict[tuple[int, int, int], object]] = {}  # address: each program's last value stored there
    acquires: dict[tuple[int, int, int], list[tuple[int, set[int]]]] = {}
    releases: dict[tuple[int, int, int], list[tuple[int, set[int]]]] = {}
    counts: dict[int, set[tuple[int, int, int]]] = {}  # address: the programs that counted into it (an "atomic")
    for seq, (program, kind, addresses, acquire, release, values) in enumerate(accesses):
        unique = np.unique(addresses).tolist()
        if acquire or release:  # an atomic (a plain load or store has neither), tl.atomic_load, tl.atomic_store
            for orders, flag in ((acquires, acquire), (releases, release)):
                if flag:
                    orders.setdefault(program, []).append((seq, set(unique)))
        if kind in ("load", "atomic load"):
            continue
        for address in unique:
            writes.setdefault(address, []).append((program, seq, kind == "atomic"))
            if kind == "atomic":
                counts.setdefault(address, set()).add(program)
        # the last writer wins (values None: the bits unknown, each its own)
        if kind in ("store", "exchange", "atomic store"):
            for address, value in zip(addresses.tolist(), [seq] * addresses.size if values is None
                                      else values.tolist(), strict=True):
                last.setdefault(address, {})[program] = value
    shared = {address for address, by in last.items() if len(by) > 1 and len(set(by.values())) > 1}

    def ordered(first: tuple[int, int, int], done: int, then: tuple[int, int, int], starts: int,
                apart: bool = False) -> bool:
        """Whether `first`, after its access at `done`, releases what `then` acquires before its access at
        `starts`, the release first (`apart`: not by those two accesses themselves)."""
        return any(released < taken <= starts and common & took
                   and not (apart and released == done and taken == starts)
                   for released, common in releases.get(first, []) if released >= done
                   for taken, took in acquires.get(then, []))

    crossed: set[int] = set()
    if writes:
        for seq, (program, kind, addresses, *_) in enumerate(accesses):
            if kind in ("store", "atomic store"):
                continue
            apart = kind == "atomic load"
            for address in np.unique(addresses).tolist():
                for writer, wrote, atomic in writes.get(address, []):
                    if writer == program or (atomic and (kind == "atomic" or apart
                                                         and program in counts.get(address, ()))):
                        continue
                    if not (ordered(writer, wrote, program, seq, apart) if wrote < seq
                            else ordered(program, seq, writer, wrote, apart)):
                        crossed.add(address)
                        break
    return len(shared), len(crossed)


def _launched_once(launch: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """launch(*args, **kwargs), counted, tainted, guarded and poisoned as the innermost _counting_launches block
    asks; as it is where none runs, or inside a counted launch (an autotuner's or a heuristic's run of its kernel)."""
    if not _COUNTING or getattr(_IN_A_LAUNCH, "running", False):
        return launch(*args, **kwargs)
    seen, guarded, poisoned = _COUNTING[-1]
    _IN_A_LAUNCH.running = True
    given = (args, kwargs)
    try:
        seen.count += 1
        with _check_at_work():  # the launch, and the check's own copies: not PyTorch computing from x
            _taint_through(args, kwargs)
            groups = _storages(args, kwargs)
            if not (guarded or poisoned):
                with _flying(*given), _true_in_place(_launch_leaves(args, kwargs)):  # (a decoyed x: _DECOYS)
                    out = launch(*args, **kwargs)
                if _WATCHING:
                    _decoyed_after_a_launch(*given, _WATCHING[-1])
                return out
            snapshots = [_true_bytes(ts[0]).clone() for ts in groups.values()] if poisoned else []
            kept: list[tuple] = []
            if guarded:
                stand_in, kept = _in_guards(groups)
                args = tuple(_standing_in(stand_in, a) for a in args)
                kwargs = {k: _standing_in(stand_in, v) for k, v in kwargs.items()}
            outside, wrote = [0], [0]
            if guarded:  # the loads and stores are judged where the storages are guarded copies
                _READS.append(([(c.data_ptr() + g, c.data_ptr() + g + o.numel()) for o, c, g in kept],
                               [(c.data_ptr(), c.data_ptr() + c.numel()) for _, c, _ in kept], outside, wrote))
                _ACCESSES.append([])
                _STASHED.append([None, [], set()])
            try:
                with _flying(*given):
                    out = launch(*args, **kwargs)
            finally:
                if guarded:
                    _READS.pop()
                    accesses = _ACCESSES.pop()  # not judged where the launch was stopped (a program waiting)
                    unfenced = len(_STASHED.pop()[2])
                    if unfenced and sys.exc_info()[1] is None:
                        seen.unfenced.append(f"launch {seen.count}: {unfenced} element{'s' * (unfenced != 1)}")
                    shared, crossed = _judged_accesses(accesses) if sys.exc_info()[1] is None else (0, 0)
                    if crossed:
                        seen.crossed.append(f"launch {seen.count}: {crossed} element{'s' * (crossed != 1)} written "
                                            "by one of its programs and read by another, no atomic ordering the two")
                    if shared:
                        seen.shared.append(f"launch {seen.count}: {shared} element{'s' * (shared != 1)} stored by "
                                           "two of its programs or more, with different values")
                    into = _writes_into_x(groups, kept, accesses)
                    if into:
                        seen.into_x.append(f"launch {seen.count}: {into} element{'s' * (into != 1)}")
                if outside[0]:
                    seen.read_outside.append(f"launch {seen.count} loaded {outside[0]} element"
                                             f"{'s' * (outside[0] != 1)} outside the memory of its tensor arguments")
                if wrote[0]:
                    seen.strayed.append(f"launch {seen.count} stored {wrote[0]} element{'s' * (wrote[0] != 1)} "
                                        "past the guards of its tensor arguments (not written: the check kept them)")
                _out_of_guards(kept, seen, seen.count)
                if poisoned:
                    _poison_what_changed(groups, snapshots)
            if _WATCHING:
                _decoyed_after_a_launch(*given, _WATCHING[-1])
            return out
    finally:
        _IN_A_LAUNCH.running = False


def _decoyed_after_a_launch(args: tuple, kwargs: dict, watch: _WhatPyTorchComputes) -> None:
    """After a launch, each CPU storage it was given that is made from x (_taint_through: it may hold what the kernel
    wrote from x's values) behind a decoy of its own, as x is, its true bytes in a shadow that later launches and
    PyTorch's operators see, and back when `watch` ends, before anything judges y (adversary 144: a copy kernel's copy
    of x, read with TensorBase.numpy on the host, gave each row's max)."""
    for t in _launch_leaves(args, kwargs):
        if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.device.type == "cpu" and \
                _storage_of(t) in watch.tainted and _held_of(t) is None and not _in_flight(t):
            watch.spawned.enter_context(_decoyed(t))


# The storages that launches running now were given (start, end), from every thread: a storage shared by two callers'
# calls (a buffer kept across calls) is not decoyed under another thread's running launch, which reads it in place
# (the last launch on it to end decoys it)
_FLIGHT: list[tuple[int, int]] = []


def _in_flight(t: torch.Tensor) -> bool:
    start, end = _span_of(t)
    with _DECOY_LOCK:
        return any(s < end and start < e for s, e in _FLIGHT)


@contextmanager
def _flying(args: tuple, kwargs: dict) -> Iterator[None]:
    spans = [_span_of(t) for t in _launch_leaves(args, kwargs) if isinstance(t, torch.Tensor)]
    spans = [s for s in spans if s[0]]
    with _DECOY_LOCK:
        _FLIGHT.extend(spans)
    try:
        yield
    finally:
        with _DECOY_LOCK:
            for span in spans:
                _FLIGHT.remove(span)


def _launch_patches() -> list[tuple[type, str, Callable]]:
    """What _counting_launches patches: (class, name, what it held).  The `run` of every kind of Triton kernel
    (triton.runtime.jit.KernelInterface's subclasses: JITFunction, the interpreter's InterpretedFunction, Autotuner,
    Heuristics), where every launch goes (`kernel[grid](...)` calls it, when the kernel runs: a launcher kept from
    an earlier call too) and `kernel.run(..., grid=...)` itself; the `__getitem__` of the kernel interface (a Triton
    whose launcher bypassed `run` would still be seen) and of a compiled kernel (`kernel.warmup(...)`, then
    `compiled[grid](...)`: Triton's softmax tutorial)."""
    from triton.runtime.jit import KernelInterface

    try:
        from triton.compiler.compiler import CompiledKernel
    except ImportError:
        CompiledKernel = None
    kinds: list[type] = []
    todo: list[type] = [KernelInterface]
    while todo:
        kind = todo.pop()
        if kind not in kinds:
            kinds.append(kind)
            todo.extend(kind.__subclasses__())
    found = [(kind, "run", kind.__dict__["run"]) for kind in kinds
             if kind is not KernelInterface and isinstance(kind.__dict__.get("run"), FunctionType)]
    return found + [(cls, "__getitem__", cls.__dict__["__getitem__"]) for cls in (KernelInterface, CompiledKernel)
                    if cls is not None and "__getitem__" in cls.__dict__]


def _counted(name: str, original: Callable) -> Callable:
    if name == "run":
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("warmup"):  # compiles, launches nothing
                return original(self, *args, **kwargs)
            return _launched(partial(original, self), args, kwargs)

        return run

    def counted(self: Any, grid: Any) -> Any:
        launch = original(self, grid)
        return lambda *args, **kwargs: _launched(launch, args, kwargs)

    return counted


@contextmanager
def _counting_launches(guarded: bool = False, poisoned: bool = False) -> Iterator[_Launches]:
    """Count the launches of Triton kernels in the block (compiled, autotuned or interpreted; `kernel[grid](...)`,
    `kernel.run(..., grid=...)`, a launcher kept from before: see _launch_patches), from any thread.  Inside a
    _WhatPyTorchComputes block, a launch given a tensor made from x makes every tensor it was given one made from x
    (_taint_through).

    `guarded` (on a CPU, where Triton's interpreter runs the kernel on the process's own memory, and a write past a
    tensor would corrupt the heap and abort Python; on a GPU, in the poisoned call: round 26's adversary stored a
    marker one element past y's end from a leftover launch, and PASSed on the H200, where nothing guarded the caching
    allocator's blocks): each launch runs on copies of its tensors' storages with guard bytes on both sides; writes
    into the guards are noted in `strayed` (read on the host: the host waits for each launch), the rest is copied
    back.  `poisoned`: after
    each launch, every element that it changed in a floating tensor it was given becomes NaN, so a result whose
    values come from the answer's kernel comes out NaN, and one that PyTorch computed does not."""
    seen = _Launches()
    patched = _launch_patches() if not _COUNTING else []
    for cls, name, original in patched:
        setattr(cls, name, _counted(name, original))
    reads = _access_patches() if not _COUNTING else []  # inert but in a guarded launch
    for cls, name, original, watcher in reads:
        setattr(cls, name, watcher(original))
    patched += [(cls, name, original) for cls, name, original, _ in reads]
    _COUNTING.append((seen, guarded, poisoned))
    try:
        yield seen
    finally:
        del _COUNTING[next(i for i, (record, _, _) in enumerate(_COUNTING) if record is seen)]
        for cls, name, original in reversed(patched):
            setattr(cls, name, original)  # (the interpreter's load too)


# What PyTorch may do with x (or what it made from x) inside a right answer: allocate, view, copy, convert, pad,
# fill.  Anything else that reads x, or a tensor made from x, computes part of the softmax in PyTorch.
MOVES = frozenset((
    "alias", "as_strided", "cat", "chunk", "clone", "constant_pad_nd", "contiguous", "copy", "copy_", "detach",
    "empty", "empty_like", "empty_strided", "expand", "expand_as", "fill", "fill_", "flatten", "full_like",
    "index_select", "lift_fresh", "masked_fill", "masked_fill_", "narrow", "new_empty", "new_empty_strided",
    "new_full", "new_zeros", "ones_like", "pad", "permute", "record_stream", "reshape", "resize_", "select", "set_",
    "slice", "split", "split_with_sizes", "squeeze", "stack", "t", "to", "_to_copy", "transpose", "unbind",
    "unsqueeze", "_unsafe_view", "view", "view_as", "zero_", "zeros_like", "_reshape_alias"))
# The allocations whose values are whatever the memory held.  In the call whose launches are poisoned
# (_poison_what_changed: the elements a launch changed), they start as NaN: an output that the allocator placed where
# an earlier call left the same softmax was rewritten with the same bytes, not poisoned, and a wrong answer failed on
# a CPU once (a CI run of 2026-11-29; the order of the tests decides what the heap holds).
FRESH = frozenset(("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"))
_AT_WORK = contextvars.ContextVar("nb09_check_at_work", default=False)
# The _WhatPyTorchComputes blocks running (the innermost last), for every thread of the process: its storages made
# from x are shared with the launches that _counting_launches sees, which PyTorch's dispatch does not, in whichever
# thread they run (round 19's adversary: a contextvar, which a new thread does not inherit, left a right answer's
# launch from a worker thread unseen)
_WATCHING: list[_WhatPyTorchComputes] = []
# The Tensor methods that hand x's values to the host or to another library, outside PyTorch's dispatch (NumPy,
# Python lists, DLPack, CUDA's array interface: CuPy, Numba): reading x with them is computing from x outside the
# kernel (round 19's adversary: each row's max by NumPy, the rest by a kernel that was given x too)
HOST_READS = ("numpy", "tolist", "__array__", "__dlpack__", "__cuda_array_interface__")


def _taint_through(args: tuple, kwargs: dict, tainted: _Storages | None = None) -> None:
    """A launch given a tensor made from x writes what it computes from x into the tensors it was given: each of them
    is made from x too (by storage), so that PyTorch computing from what a kernel wrote (a softmax of the kernel's
    copy of x, the kernel's exponentials divided by PyTorch's sums) is seen.  A tensor descriptor (Triton's
    TensorDescriptor) counts as the tensor it describes (its `base`), a tuple as its tensors.  Into `tainted` (another
    caller's call's: _AnotherCall), or the innermost _WhatPyTorchComputes block's."""
    if tainted is None:
        if not _WATCHING:
            return
        tainted = _WATCHING[-1].tainted
    given = [t for t in _launch_leaves(args, kwargs) if isinstance(t, torch.Tensor)]
    storages = {_storage_of(t) for t in given} - {0}
    if not tainted.isdisjoint(storages):
        tainted.add_tensors(given)


@contextmanager
def _check_at_work() -> Iterator[None]:
    token = _AT_WORK.set(True)
    try:
        yield
    finally:
        _AT_WORK.reset(token)


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a and b share one storage (its StorageImpl, not its address: two empty storages both lie at 0)."""
    try:
        return bool(a.untyped_storage()._cdata == b.untyped_storage()._cdata)
    except (RuntimeError, NotImplementedError, AttributeError):
        return False


def _storage_of(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return 0


def _span_of(t: torch.Tensor) -> tuple[int, int]:
    """The [start, end) addresses of t's untyped storage ((0, 0) where it has none)."""
    try:
        storage = t.untyped_storage()
        return storage.data_ptr(), storage.data_ptr() + storage.nbytes()
    except (RuntimeError, NotImplementedError):
        return 0, 0


class _Storages(set):
    """Storages made from x, by their untyped storage's data_ptr, matched by address range (adversary 142): a storage
    that starts inside one of them (an alias made from a slice of x's storage, `x.untyped_storage()[k:]` with set_)
    is the same memory, although its start address is not."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.ends: dict[int, int] = {}

    def add_tensors(self, tensors: Iterable[object]) -> None:
        for t in tensors:
            if isinstance(t, torch.Tensor):
                start, end = _span_of(t)
                if start:
                    self.add(start)
                    self.ends[start] = max(end, self.ends.get(start, end))

    def __contains__(self, address: object) -> bool:
        if set.__contains__(self, address):
            return True
        return isinstance(address, int) and address > 0 and any(
            start < address < end for start, end in self.ends.items())

    def isdisjoint(self, other: Iterable[object]) -> bool:
        return not any(a in self for a in other)


# x's values behind a decoy, on a CPU (adversary 140): while the answer runs, x's storage holds DECOY values, and the
# true ones live in a shadow that only the answer's launches (their guarded stand-ins are filled from it, and what they
# write goes back into it; an unguarded launch finds the true values in place for its run) and PyTorch's operators
# that are not views (_on_true_values: a copy or a conversion of x holds x's values) see.  Every other read of x's
# memory reads the decoy: a Tensor method reached through torch._C.TensorBase, which nothing can patch, or taken
# before the check patched it; a DLPack capsule (torch._C._to_dlpack_versioned); pickle, torch.save, ctypes on
# data_ptr() (round 68's second adversary); a forked process.  Exits patched one by one left each new one open (round
# 75's adversary, adversary 140); a value computed from the decoy is wrong, which the value rules see.  What an
# operator makes from x's true values (a clone, a float64 copy) is decoyed in turn, with a shadow of its own
# (_decoyed_outputs; adversary 142 read a clone with TensorBase.numpy, ctypes, a forked process), and a storage that
# starts inside a decoyed one (a slice of x's storage set_ into a tensor) is matched by address range (_held_of).
# The true values are back before the check compares x's storage or reads x, or y, also where the answer raised.  Not
# on a GPU: there a kernel reads x's memory when the stream reaches it, after the call may have returned; a swap
# ordered on the caller's stream is possible but not built here.
DECOY_AROUND = 1e4  # the decoy's values: DECOY_AROUND + DECOY_SPREAD * a standard normal, independent of x's: a max
DECOY_SPREAD = 300.0  # taken from them makes exp(x - max) vanish (0 / 0: NaN), and their softmax is another one
DECOY_HINT = (f"on this CPU, while your function runs, x's memory holds decoy values (around {DECOY_AROUND:g}), and "
              "only your kernel's launches and PyTorch's operations on x see x's own: a value read from x any other "
              "way (NumPy, a Python list, its bytes, DLPack, pickle, another process) is the decoy's; and on a GPU "
              "such a read is work done outside your kernel: every value must come from your kernel's launches")


@dataclass
class _Decoy:
    """A storage behind a decoy: a uint8 view of it (`storage`), its true bytes (`shadow`), the decoy's (`decoy`),
    and how many unguarded launches run with the true bytes in place (`opened`)."""

    storage: torch.Tensor
    shadow: torch.Tensor
    decoy: torch.Tensor
    opened: int = 0
    closed: bool = False  # its block ended (a launch still open on it leaves the true bytes in place)

    def view_of(self, t: torch.Tensor, of: torch.Tensor) -> torch.Tensor:
        """t's view (offset, size, strides, dtype) into `of`, the shadow or the decoy; t's storage may start inside
        the decoyed one (a storage slice: adversary 142), at the same distance into `of`."""
        into = _storage_of(t) - self.storage.data_ptr()
        storage = of.untyped_storage()
        if into % t.element_size():
            storage, into = storage[into:], 0
        return torch.empty(0, dtype=t.dtype, device=t.device).set_(storage, t.storage_offset() + into //
                                                                    t.element_size(), t.size(), t.stride())


def _held_of(t: torch.Tensor) -> _Decoy | None:
    """The decoy whose storage holds t's storage (its start, or inside it: a storage slice, adversary 142)."""
    if not _DECOYS:
        return None
    address = _storage_of(t)
    held = _DECOYS.get(address)
    if held is not None or not address:
        return held
    return next((h for key, h in list(_DECOYS.items()) if key < address < key + h.storage.numel()), None)


# The storages behind a decoy now (by their untyped storage's data_ptr), for every thread: each call's x, the first
# caller's and each other caller's (_softmax_two_callers, _softmax_one_thread_two_streams), its own
_DECOYS: dict[int, _Decoy] = {}
_DECOY_LOCK = threading.Lock()


@contextmanager
def _decoyed(x: torch.Tensor) -> Iterator[_Decoy | None]:
    """x's whole storage holds decoy values in the block, its true bytes kept in a shadow (see _DECOYS); the true
    bytes back at its end, with what anything wrote into the storage meanwhile outside the launches and the operators
    (a byte that differs from the decoy's) kept, so that the compare of x's storage sees every write."""
    key = _storage_of(x)
    with _check_at_work():
        real = _storage_bytes(x) if key else None
        # the decoy's values in x's dtype where it is a floating one (a float64 copy of x reads values around
        # DECOY_AROUND too), else as float32 words; over every byte of the storage, whatever its size (adversary 144:
        # a uint8 copy of x with one spare byte, 4n+1 bytes, was left undecoyed, x's true bytes in it): as many words as
        # cover the storage, the last one cut at its last byte
        dtype = x.dtype if x.is_floating_point() and x.element_size() in (2, 4, 8) else torch.float32
        if real is not None and _held_of(x) is None and real.numel() and x.device.type == "cpu":
            shadow = real.clone()
            generator = torch.Generator().manual_seed(real.numel())
            decoy = torch.randn(-(-real.numel() // dtype.itemsize), generator=generator, dtype=torch.float32)
            decoy = decoy.mul_(DECOY_SPREAD).add_(DECOY_AROUND).to(dtype)
            decoy = decoy.view(torch.uint8)
            if decoy.numel() != real.numel():
                decoy = decoy[:real.numel()].clone()
            real.copy_(decoy)
        else:  # (empty, already decoyed by an enclosing block, or on a GPU)
            real = None
    if real is None:
        yield None
        return
    held = _Decoy(real, shadow, decoy)
    _DECOYS[key] = held
    try:
        yield held
    finally:
        with _DECOY_LOCK, _check_at_work():  # (a launch of another thread open on it: its true bytes stay in place)
            if _DECOYS.get(key) is held:
                del _DECOYS[key]
            held.closed = True
            if not held.opened:
                _kept_writes(held)
                real.copy_(shadow)


# A process forked while a storage is decoyed (adversary 140: each row's max by PyTorch in a forked worker) inherits
# the dispatch mode and _DECOYS; in it, nothing is the answer's launch or the check's, and every operator sees x's
# memory as it is there: the decoy
os.register_at_fork(after_in_child=_DECOYS.clear)


def _kept_writes(held: _Decoy) -> None:
    """Into the shadow, the bytes that something wrote into the decoyed storage (those that differ from the decoy)."""
    written = held.storage != held.decoy
    if bool(written.any()):
        held.shadow[written] = held.storage[written]


def _true_bytes(t: torch.Tensor) -> torch.Tensor:
    """The bytes of t's whole storage as a launch must find them: the shadow of a decoyed storage, the storage
    itself otherwise (_storage_bytes)."""
    held = _held_of(t)
    if held is None or held.opened:
        return _storage_bytes(t)
    start, end = _span_of(t)
    into = start - held.storage.data_ptr()
    return held.shadow if into == 0 and end - start == held.shadow.numel() else held.shadow[into:into + end - start]


@contextmanager
def _true_in_place(tensors: list[object]) -> Iterator[None]:
    """For an unguarded launch (its kernel reads the storages themselves): the true bytes of the decoyed storages
    among `tensors` in place for the block, the decoy back after it, what the launch wrote kept in the shadow."""
    opened = []
    with _DECOY_LOCK:  # (launches from two threads of one call: one opens, the last to end closes)
        found = (_held_of(t) for t in tensors if isinstance(t, torch.Tensor))
        for held in {id(h): h for h in found if h is not None}.values():
            if not held.opened:
                with _check_at_work():
                    _kept_writes(held)
                    held.storage.copy_(held.shadow)
            held.opened += 1
            opened.append(held)
    try:
        yield
    finally:
        with _DECOY_LOCK:
            for held in opened:
                held.opened -= 1
                if not held.opened and not held.closed:
                    with _check_at_work():
                        held.shadow.copy_(held.storage)
                        held.storage.copy_(held.decoy)


def _on_true_values(func: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A PyTorch operator's arguments, each tensor on a decoyed storage replaced by its alias into the shadow (the
    same offset, size and strides), unless the operator is a view (its schema's alias info: `Tensor(a)` returned),
    or `set_` (the alias a view makes stays on the decoy: its numpy() reads the decoy)."""
    if not _DECOYS or getattr(func, "is_view", False) or func.overloadpacket.__name__ == "set_":
        return args, kwargs

    def true(a: object) -> object:
        if not isinstance(a, torch.Tensor) or a.layout != torch.strided:
            return a
        held = _held_of(a)
        return a if held is None or held.opened else held.view_of(a, held.shadow)

    new_args, new_kwargs = tree_map(true, args), tree_map(true, kwargs)
    same = all(a is b for a, b in zip(tree_leaves((args, kwargs)), tree_leaves((new_args, new_kwargs)), strict=True))
    return (args, kwargs) if same else (new_args, new_kwargs)


# The operators whose outputs hold no value of their inputs (allocations, fills): a result made by
# torch.empty_like(x) is not behind a decoy
NO_VALUES = FRESH | frozenset(("empty", "fill", "fill_", "full_like", "new_full", "new_zeros", "ones_like", "zero_",
                               "zeros_like"))


def _decoyed_outputs(func: Any, given: tuple, ran: tuple, out: Any, spawned: ExitStack) -> Any:
    """What an operator made from a decoyed tensor's true values (it ran on the shadows: _on_true_values) is behind a
    decoy of its own, registered like x's (adversary 142: a clone or a float64 copy of x holds x's values, and
    TensorBase.numpy, ctypes or a forked process read them past the dispatcher), so that what is made from x is
    decoyed outside launches and PyTorch's operators, through any chain of operators; `spawned` puts the true bytes
    back.  An output that is one of the shadow's aliases the operator was given (an in-place operator's self, an
    out= argument) is handed back as the tensor it stands for."""
    stands_for = {id(b): a for a, b in zip(tree_leaves(given), tree_leaves(ran), strict=True) if a is not b}
    out = tree_map(lambda o: stands_for.get(id(o), o) if isinstance(o, torch.Tensor) else o, out)
    if func.overloadpacket.__name__ in NO_VALUES:
        return out
    for o in tree_leaves(out):
        if isinstance(o, torch.Tensor) and o.layout == torch.strided and o.device.type == "cpu" and \
                _held_of(o) is None and not any(_same_storage(o, h.shadow) for h in list(_DECOYS.values())):
            spawned.enter_context(_decoyed(o))
    return out


# On a GPU, x and everything PyTorch makes from it live on the GPU; an operator from x (or from what was made from x)
# whose output lies on the host is a copy of their values to the host: x.cpu(), .to('cpu'), a copy_ into a CPU tensor,
# and the copies that .numpy(), .tolist() (torch._C.TensorBase's too, which nothing patches: its C++ copies x to the
# host through the dispatcher), torch.save and a storage's .cpu() make; .item(), int(x[i]) and float(x[i]) read a value
# back (_local_scalar_dense).  Each is a host read of x's values, a FAIL at the first call that makes one, as the hint
# says (round 76's TensorBase.tolist on the H200 ran into the bandwidth bar's 32768 x 2048 case, minutes of Python
# lists; adversaries 140 and 142: a clone's or a float64 conversion's .cpu() read by TensorBase.numpy / tolist).
# The allocations of NO_VALUES carry no values, and a view stays where its base is.
def _to_the_host(func: Any, out: object) -> bool:
    name = func.overloadpacket.__name__
    if name == "_local_scalar_dense":
        return True
    return name not in NO_VALUES and not getattr(func, "is_view", False) and any(
        isinstance(o, torch.Tensor) and o.device.type == "cpu" for o in tree_leaves(out))


class _WhatPyTorchComputes:
    """The operators PyTorch ran, inside the block, on x or on a tensor made from x (through any chain of
    operators), other than MOVES; the launches of Triton kernels and the check's own work are not watched.

    Why by hand: the question is data flow through PyTorch's operators, which only a dispatch mode sees
    (`torch.utils._python_dispatch.TorchDispatchMode`, as PyTorch's own FlopCounterMode uses it)."""

    def __init__(self, x: torch.Tensor, fresh_as_nan: bool = False, on_gpu: bool | None = None) -> None:
        self.computed: list[str] = []
        self.host: list[str] = []  # HOST_READS of x or of what was made from x
        # on a GPU (x on one; `on_gpu` True: a CPU's imitation, where every tensor counts as the host's), the operators
        # that brought x's values, or those of what was made from x, to the host (TO_THE_HOST)
        self.to_host: list[str] = []
        gpu = x.is_cuda if on_gpu is None else on_gpu
        self.tainted = tainted = _Storages()
        tainted.add_tensors([x])
        # the storages decoyed in the block because an operator made them from x's values (_decoyed_outputs), their
        # true bytes back when the block ends (an _AnotherCall's: when _another_call_watched's block does)
        self.spawned = ExitStack()
        computed = self.computed
        owner = self

        class Mode(TorchDispatchMode):
            # wrap_triton(kernel)[grid](...) on a GPU, outside torch.compile, launches through a higher-order operator
            # (triton_kernel_wrapper_mutation), which refuses a dispatch mode that does not say it takes them
            supports_higher_order_operators = True

            def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
                kwargs = kwargs or {}
                if _AT_WORK.get():
                    return func(*args, **kwargs)
                ins = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
                other = _another_call_of(ins) if _OTHERS else None
                if other is not None and other.watch is not owner:  # another caller's call's work: its own record
                    return other.watch.mode.__torch_dispatch__(func, types, args, kwargs)
                from_x = any(_storage_of(t) in tainted for t in ins)
                if isinstance(func, HigherOrderOperator):  # its Triton launch, if any, is seen as a launch
                    out = func(*args, **kwargs)
                    if from_x and not func.name().startswith("triton_kernel_wrapper"):
                        computed.append(func.name())
                        tainted.add_tensors(tree_leaves(out))
                    return out
                body = _python_body(func, ins) if from_x else None
                if body is not None:  # an operator of the answer's own: its code is watched like the answer's
                    with Mode():
                        out = body(*args, **kwargs)
                else:
                    given = (args, kwargs)
                    args, kwargs = _on_true_values(func, args, kwargs)  # x's values, not its decoy's (_DECOYS)
                    out = func(*args, **kwargs)
                    if args is not given[0] or kwargs is not given[1]:  # from x's values: decoyed (_decoyed_outputs)
                        out = _decoyed_outputs(func, given, (args, kwargs), out, owner.spawned)
                if fresh_as_nan and func.overloadpacket.__name__ in FRESH and isinstance(out, torch.Tensor) and \
                        out.is_floating_point():
                    out.fill_(math.nan)  # what memory held before is no value of the answer's (see FRESH)
                if from_x:
                    name = func.overloadpacket.__name__
                    if gpu and _to_the_host(func, out):
                        owner.to_host.append(name)
                    if name not in MOVES and body is None:
                        computed.append(name)
                    tainted.add_tensors(tree_leaves(out))
                return out

        self.mode = Mode()

    def __enter__(self) -> Self:
        _WATCHING.append(self)
        self.patched = _watch_other_threads_and_host_reads()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.mode.__exit__(*exc)
        finally:
            try:
                self.spawned.close()  # (the true bytes back before anything judges them, also where the answer raised)
            finally:
                _put_back(self.patched)
                _WATCHING.remove(self)


class _InAnotherThread(TorchDispatchMode):
    """The dispatch mode of a thread started inside a _WhatPyTorchComputes block (a dispatch mode is its thread's
    only): what PyTorch runs there is watched as the block's own thread's work (round 19's adversary: each row's max by
    PyTorch in a worker thread went unseen), for as long as a block runs; after it, operators pass through."""

    supports_higher_order_operators = True

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        other = _another_call_of([t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]) \
            if _OTHERS else None
        if other is not None:  # (another caller's call, or a thread of its own)
            return other.watch.mode.__torch_dispatch__(func, types, args, kwargs)
        if not _WATCHING:
            return func(*args, **(kwargs or {}))
        return _WATCHING[-1].mode.__torch_dispatch__(func, types, args, kwargs)


def _host_read(name: str, t: object) -> None:
    """Note a read of t's values outside PyTorch's dispatch (`name`: a Tensor method of HOST_READS, or, starting with a
    space, what BYTE_EXITS calls it), where t is x, made from x, or the storage of either."""
    if _AT_WORK.get():
        return
    if isinstance(t, torch.Tensor):
        storage = _storage_of(t)
    elif isinstance(t, (torch.UntypedStorage, torch.TypedStorage)):
        storage = _storage_ptr(t)
    elif isinstance(t, int) and not isinstance(t, bool):  # an address (PyTorchFileWriter.write_record takes one)
        storage = t
    else:
        return
    other = _another_call_of([], {storage} - {0}) if _OTHERS else None
    watch = other.watch if other is not None else _WATCHING[-1] if _WATCHING else None
    if watch is not None and storage and storage in watch.tainted:
        watch.host.append(name.strip() if name.startswith(" ") else f".{name}" if name.startswith("_")
                          else f".{name}()")


def _storage_ptr(storage: torch.UntypedStorage | torch.TypedStorage) -> int:
    try:
        return storage.data_ptr()
    except (RuntimeError, NotImplementedError):
        return 0


# The exits of x's raw bytes that PyTorch's dispatch does not see (C++ reads the storage's memory itself), for the
# taint: (owner, attribute, which argument holds the tensor or storage read, what the check calls the read).  Copies
# made through them (pickle.loads(pickle.dumps(x)), copy.copy through copyreg, torch.save / torch.load) come back as
# storages nothing links to x, and a capsule of torch.utils.dlpack.to_dlpack hands x's memory to NumPy without
# Tensor.__dlpack__ (adversary 138: PyTorch's or NumPy's softmax of such a copy passed).  Patched here rather than
# pickle's or torch.save's entry points: every path writes its bytes through one of these (Tensor.__reduce_ex__ ->
# TypedStorage.__reduce__ -> torch.save(legacy) -> StorageBase._write_file; torch.save's zip file ->
# PyTorchFileWriter.write_record, after a dispatched copy to the CPU of a GPU storage, which the taint follows).
BYTE_EXITS = (
    (torch._C, "_to_dlpack", 0, " torch.utils.dlpack.to_dlpack()"),
    # Tensor.__dlpack__'s exit for a DLPack 1.x consumer (adversary 140: its capsule to np.from_dlpack); on a CPU x's
    # memory holds a decoy anyway (_DECOYS), on a GPU this note is what sees it
    (torch._C, "_to_dlpack_versioned", 0, " torch._C._to_dlpack_versioned()"),
    (torch, "to_dlpack", 0, " torch.utils.dlpack.to_dlpack()"),
    (torch_dlpack, "to_dlpack", 0, " torch.utils.dlpack.to_dlpack()"),
    (torch.UntypedStorage, "_write_file", 0, " pickle, copy or torch.save of the storage (its bytes written by C++)"),
    (torch._C.PyTorchFileWriter, "write_record", 2, " torch.save (the storage's bytes written by C++)"),
)


# CuPy's runtime calls that copy memory by address (round 76's adversary: NumPy on a cupy.cuda.runtime.memcpy of
# x.data_ptr() to the host): one whose source lies in x's storage, or in one made from x (matched by address range,
# _Storages), and whose destination is the host's is a host read of x's values.  Patched where CuPy is imported, or
# importable on a GPU; a device-to-device copy is a copy, which the task allows.
CUPY_COPIES = ("memcpy", "memcpyAsync")
CUPY_RUNTIME = "cupy_backends.cuda.api.runtime"


def _cupy_runtime() -> Any:
    """CuPy's runtime module (cupy.cuda.runtime is cupy_backends.cuda.api.runtime), or None."""
    if CUPY_RUNTIME not in sys.modules and has_cuda() and has_cupy():
        import cupy.cuda  # noqa: F401 -- (CuPy only where a GPU has it)
    return sys.modules.get(CUPY_RUNTIME)


def _into_the_host(runtime: Any, dst: int, kind: int) -> bool:
    """Whether a copy of `kind` into `dst` lands in the host's memory."""
    if kind == getattr(runtime, "memcpyDeviceToHost", 2):
        return True
    if kind != getattr(runtime, "memcpyDefault", 4):
        return False
    try:  # (cudaMemoryType: 0 unregistered host memory, 1 host, 2 device, 3 managed)
        return int(runtime.pointerGetAttributes(dst).type) in (0, 1)
    except Exception:  # noqa: BLE001 -- an address CUDA does not know is the host's
        return True


def _watch_other_threads_and_host_reads() -> list[tuple[Any, str, Any]]:
    """Patch, for a _WhatPyTorchComputes block: every thread started from now on runs in _InAnotherThread, and the
    HOST_READS of torch.Tensor note what they read; returns what _put_back needs: (owner, name, what it held, or None
    where the attribute was inherited)."""
    patched: list[tuple[Any, str, Any]] = []
    bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def in_another_thread(thread: threading.Thread) -> None:
        with _InAnotherThread():
            bootstrap(thread)

    patched.append((threading.Thread, "_bootstrap_inner", bootstrap))
    threading.Thread._bootstrap_inner = in_another_thread  # type: ignore[attr-defined]
    # A job submitted to a ThreadPoolExecutor whose worker started before the block (a pool made at import, or by
    # the notebook's trial call: round 20's adversary, each row's max by PyTorch there) runs in _InAnotherThread too
    # (in a worker started inside the block, it runs there already)
    item = futures_thread._WorkItem
    run = item.__dict__.get("run")
    if run is not None:
        def run_watched(work: Any) -> None:
            if isinstance(_get_current_dispatch_mode(), _InAnotherThread):
                return run(work)
            with _InAnotherThread():
                return run(work)

        patched.append((item, "run", run))
        item.run = run_watched  # type: ignore[method-assign, assignment]
    for owner, name, where, said in BYTE_EXITS:
        original = getattr(owner, name, None)
        if original is None:
            continue
        patched.append((owner, name, owner.__dict__.get(name)))

        def exit_read(*args: Any, _said: str = said, _where: int = where, _original: Any = original,
                      **kwargs: Any) -> Any:
            if len(args) > _where:
                _host_read(_said, args[_where])
            return _original(*args, **kwargs)

        setattr(owner, name, exit_read)
    runtime = _cupy_runtime()
    for name in CUPY_COPIES if runtime is not None else ():
        original = getattr(runtime, name, None)
        if original is None:
            continue
        patched.append((runtime, name, runtime.__dict__.get(name)))

        def copied(dst: int, src: int, size: int, kind: int, *args: Any, _original: Any = original,
                   _runtime: Any = runtime, **kwargs: Any) -> Any:
            if _into_the_host(_runtime, dst, kind):
                _host_read(" cupy.cuda.runtime.memcpy() of x's memory to the host", src)
            return _original(dst, src, size, kind, *args, **kwargs)

        setattr(runtime, name, copied)
    for name in HOST_READS:
        own = torch.Tensor.__dict__.get(name)
        original = getattr(torch.Tensor, name, None)
        if original is None:
            continue
        patched.append((torch.Tensor, name, own))
        if isinstance(own, property):
            getter = own.fget

            def read_property(t: torch.Tensor, _name: str = name, _get: Any = getter) -> Any:
                _host_read(_name, t)
                return _get(t)

            setattr(torch.Tensor, name, property(read_property))
        else:
            def read(t: torch.Tensor, *args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
                _host_read(_name, t)
                return _original(t, *args, **kwargs)

            setattr(torch.Tensor, name, read)
    return patched


def _put_back(patched: list[tuple[Any, str, Any]]) -> None:
    for owner, name, held in reversed(patched):
        if held is None:
            delattr(owner, name)
        else:
            setattr(owner, name, held)


# Another caller's call (_softmax_two_callers, and on a CPU _softmax_one_thread_two_streams's second call), judged as
# any call of the answer is (adversary 126: a non-blocking lock around the launch, and torch.softmax, or NumPy on
# x.cpu().numpy(), for a caller that found it held, passed: the other call ran as the check's own work, unwatched, and
# only its values were judged).  Its record is its own, not the first call's: the work of the thread that makes it
# (_OTHER_CALL, set there) and, in any other thread (one it starts), what flows from its x and not from the first
# call's (by storage, as _WhatPyTorchComputes follows x): its launches (counted, tainting what they are given),
# PyTorch's operators on what was made from its x, and its host reads.
_OTHERS: list[_AnotherCall] = []
_OTHER_CALL: contextvars.ContextVar[_AnotherCall | None] = contextvars.ContextVar("nb09_another_call", default=None)


class _AnotherCall:
    """The record of another caller's call on x (see _OTHERS): `watch`, what PyTorch computed from x and read of it on
    the host (a _WhatPyTorchComputes of x, never entered: its mode is called by the modes that route the call's
    operators to it), and `launches`, the Triton launches it made."""

    def __init__(self, x: torch.Tensor) -> None:
        self.watch = _WhatPyTorchComputes(x)
        self.launches = _Launches()

    def call(self, fn: Callable[[torch.Tensor], object], x: torch.Tensor) -> object:
        """fn(x), in this thread, as this call's work."""
        token = _OTHER_CALL.set(self)
        try:
            return fn(x)
        finally:
            _OTHER_CALL.reset(token)

    def launched(self, launch: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """A launch of the call's, as it is (unguarded: what two calls share in memory is shared), counted and tainting
        what it is given; an autotuner's runs of its kernel inside it counted once."""
        if getattr(_IN_A_LAUNCH, "another", False):
            return launch(*args, **kwargs)
        _IN_A_LAUNCH.another = True
        try:
            self.launches.count += 1
            with _check_at_work():  # (Triton's own work on the tensors: not PyTorch computing from x)
                _taint_through(args, kwargs, self.watch.tainted)
                with _flying(args, kwargs), _true_in_place(_launch_leaves(args, kwargs)):  # (its x: _DECOYS)
                    out = launch(*args, **kwargs)
                _decoyed_after_a_launch(args, kwargs, self.watch)
                return out
        finally:
            _IN_A_LAUNCH.another = False


def _another_call_of(tensors: list[torch.Tensor], storages: set[int] | None = None) -> _AnotherCall | None:
    """The _AnotherCall whose work this is: the thread's own (_OTHER_CALL), or where the thread makes none, the one
    whose x the tensors were made from, where the first call's x (the innermost _WhatPyTorchComputes's) is not."""
    mine = _OTHER_CALL.get()
    if mine is not None or not _OTHERS:
        return mine
    storages = ({_storage_of(t) for t in tensors} | (storages or set())) - {0}
    if not storages or (_WATCHING and not _WATCHING[-1].tainted.isdisjoint(storages)):
        return None
    return next((o for o in _OTHERS if not o.watch.tainted.isdisjoint(storages)), None)


@contextmanager
def _another_call_watched(*others: _AnotherCall) -> Iterator[None]:
    """others, other callers' calls' records, kept for the block: their launches seen and their host reads noted (and
    the threads started in the block watched) for the whole block, including after the first call's watches end (an
    other call may wait for the first's lock, and run after it)."""
    patched = _watch_other_threads_and_host_reads()
    _OTHERS.extend(others)
    try:
        with _counting_launches():
            yield
    finally:
        for other in others:
            _OTHERS.remove(other)
            other.watch.spawned.close()  # (what its operators made from its x: true again before it is judged)
        _put_back(patched)


def _judge_another_call(ex: Any, call: str, other: _AnotherCall, theirs: object) -> None:
    """Another caller's call, judged as call_yours's `judged` judges any call's work: no host read and no PyTorch
    computing from its x, launches of its own, a result that one of them wrote."""
    hint = ("a call that finds another call busy (a lock held, a buffer in use) must still compute with your kernel: "
            "wait for it (a blocking lock), or use memory of its own; every call's values are your kernel's, whichever "
            "caller makes it")
    ex.expect(not other.watch.host, f"{call}: the other caller's call read its x's values (or those of what was made "
              f"from it) outside PyTorch and your kernel ({', '.join(sorted(set(other.watch.host)))})", hint)
    if other.watch.to_host:  # (on a GPU: nothing counted where nothing was noted)
        ex.expect(False, f"{call}: the other caller's call copied its x's values (or those of what was made from it) "
                  f"from the GPU to the host ({', '.join(sorted(set(other.watch.to_host)))})", hint)
    ex.expect(not other.watch.computed, f"{call}: PyTorch computed from the other caller's x, or from what was made "
              f"from it, outside your kernel ({', '.join(sorted(set(other.watch.computed)))})", hint)
    ex.expect(other.launches.count > 0, f"{call}: the other caller's call launched no Triton kernel given its x (or a "
              "tensor made from it)", hint)
    ex.expect(not _plain_result(theirs) or theirs.numel() == 0
              or _storage_of(theirs) in other.watch.tainted, f"{call}: the other caller's call returned a tensor that "
              "nothing made from its x was written into: no launch given its x (or a tensor made from it) and no "
              "copy of it wrote it", hint)


# Operators registered through torch.library's older API (torch.library.define + torch.library.impl, or a
# torch.library.Library object's define and impl: PyTorch's tutorial before custom_op), which keeps no Python function
# that _python_body could find: qualified name ("ns::op") -> {dispatch key: the function}.  Recorded from nb09's
# import on (the notebook's imports cell, before the student defines anything: round 20's adversary, whose
# operators doing exactly the worked solution's launch FAILed as "PyTorch computed").
_LIBRARY_IMPLS: dict[str, dict[str, Callable]] = {}


def _recording_library_impls() -> None:
    """Wrap torch.library.Library.impl (which torch.library.impl goes through too) to record into _LIBRARY_IMPLS."""
    library: Any = getattr(torch.library, "Library", None)
    impl = getattr(library, "impl", None)
    if library is None or impl is None or getattr(impl, "_nb09_records", False):
        return

    def recorded(self: Any, op_name: Any, fn: Any, dispatch_key: str = "", *args: Any, **kwargs: Any) -> Any:
        out = impl(self, op_name, fn, dispatch_key, *args, **kwargs)
        try:
            if callable(fn) and not kwargs.get("with_keyset", False):
                name = op_name if isinstance(op_name, str) else op_name.name()
                name = (name if "::" in name else f"{self.ns}::{name}").split(".")[0]
                _LIBRARY_IMPLS.setdefault(name, {})[dispatch_key or getattr(self, "dispatch_key", "") or ""] = fn
        except Exception:  # noqa: BLE001, S110 -- a record missed: that operator counts as PyTorch computing, as before
            pass
        return out

    recorded._nb09_records = True  # type: ignore[attr-defined]
    library.impl = recorded


_recording_library_impls()


def _python_body(func: Any, tensors: list[torch.Tensor]) -> Callable | None:
    """The Python function behind an operator that the answer defined with `torch.library.triton_op` (the lecture's
    section 6) or `custom_op` (or torch.library's older define and impl: _LIBRARY_IMPLS), as PyTorch's dispatcher
    would run it for these tensors; None for PyTorch's own operators and where it cannot be found (then the operator
    counts as PyTorch computing).  The check runs that function instead of the operator, so that what it does, its
    Triton launches and PyTorch's operators, is judged as the answer's own code."""
    if getattr(func, "namespace", "aten") in ("aten", "prims"):
        return None
    try:
        from torch._library.custom_ops import OPDEFS

        kinds = {t.device.type for t in tensors}
        kind = kinds.pop() if len(kinds) == 1 else None
        opdef = OPDEFS.get(func._name)
        if opdef is None:
            impls = _LIBRARY_IMPLS.get(func._name, {})
            keys = ((kind or "").upper(), "CompositeExplicitAutograd", "CompositeImplicitAutograd", "")
            return next((impls[key] for key in keys if key in impls), None)
        kernels = getattr(opdef, "_backend_fns", {})
        found = kernels.get(kind) if kind is not None else None
        return found or kernels.get(None) or opdef._init_fn
    except Exception:  # noqa: BLE001 -- PyTorch's internals moved: the operator counts as PyTorch computing
        return None


class _KeysSeen(dict):
    """An autotuner's cache (config by key) that keeps the key last looked up in it: Autotuner.run asks `if key not in
    self.cache:` before it benchmarks the configs, so the stand-in for the benchmark knows which key it chooses for."""

    looked_up: Any = None

    def __contains__(self, key: object) -> bool:
        self.looked_up = key
        return super().__contains__(key)


@contextmanager
def _autotune_without_timing(choice: int | tuple[tuple[int, Any], int], configs: list[tuple[int, Any, int, str]],
                             kept: dict) -> Iterator[None]:
    """On a CPU: @triton.autotune picks its config number `choice` (modulo its number of configs) instead of timing
    each (timing needs a GPU driver, which Triton's interpreter has not), so an autotuned kernel runs through the
    interpreter too; each autotuned launch appends (id of its autotuner, its key, its number of configs, its kernel's
    name) to `configs`.  A `choice` of ((id, key), k) gives config k to that autotuner for that key alone and config 0
    to every other (autotuner, key): on a GPU each autotuner, and each key of one, keeps the config it timed fastest,
    independently of the others (round 70's adversary: two kernels autotuned over the same BLOCKs, each counting a
    row's chunks by its own BLOCK, and one kernel with a PHASE constexpr in its key launched for each phase, passed
    while config k went to every autotuner and key at once).  Its choices are kept per key as a GPU keeps them (`if
    key not in self.cache:` in Autotuner.run), in `kept`, one cache for each `choice`, across the calls of a check: a
    choice pruned and made for one case is the choice of every later case with the same key (round
    69's adversary: the configs narrower than the row pruned, key=["rows"], passed while the cache was emptied at
    every launch; on a GPU a later call of as many rows and longer ones reuses the narrow block).  The check calls
    again with each config (round 67's third adversary: an autotuner over BLOCK from 4096 down to 64 columns, one
    block of each row read, passed with its first config alone; on a GPU the autotuner keeps the fastest config,
    `builtins.min(timings, key=timings.get)` in triton/runtime/autotuner.py, not a right one).

    Each config the autotuner benchmarks runs once, as its own benchmark's kernel call (Autotuner._bench's
    kernel_call: the config's pre_hook, the autotuner's, which zeroes reset_to_zero's arguments and saves
    restore_value's, the run on the call's own arguments, the post_hook), in place of do_bench's timed runs, its
    accesses not judged with the launch's (round 69's second adversary: sums added by tl.atomic_add into an argument
    zeroed in each call, autotuned with no reset_to_zero, passed while the benchmark ran nothing; on a GPU each
    benchmark run adds into it once more, and with reset_to_zero=["s_ptr"] it is right)."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        yield
        return
    bench, run = Autotuner.__dict__.get("_bench"), Autotuner.__dict__.get("run")
    if bench is None or run is None:
        yield
        return

    def pick(self: Any) -> int:
        if isinstance(choice, int):
            return choice
        (who, key), k = choice
        seen = getattr(self.cache, "looked_up", None)
        try:
            same = bool(key == seen)
        except Exception:  # noqa: BLE001 -- a key holding tensors: the same objects or not
            same = key is seen
        return k if who == id(self) and same else 0

    def timed(self: Any, *args: Any, config: Any, **meta: Any) -> list[float]:
        chosen = self.configs.index(config) == pick(self) % len(self.configs) if config in self.configs else False
        timing = [0.0 if chosen else 1.0] * 3

        def run_once(kernel_call: Callable[[], Any], *_: Any, **__: Any) -> list[float]:
            _ACCESSES.append([])  # (its own run: not judged as programs of the launch's)
            try:
                kernel_call()
            finally:
                _ACCESSES.pop()
            return timing

        name = "_do_bench" if isinstance(getattr(type(self), "do_bench", None), property) else "do_bench"
        held = self.__dict__.get(name, timed)
        setattr(self, name, run_once)
        try:
            out = bench(self, *args, config=config, **meta)
        finally:
            if held is timed:
                delattr(self, name)
            else:
                setattr(self, name, held)
        return out if isinstance(out, list) and any(math.isinf(t) for t in out) else timing

    def tuned(self: Any, *args: Any, **kwargs: Any) -> Any:
        held = self.cache
        which = choice % max(len(self.configs), 1) if isinstance(choice, int) else choice
        self.cache = cache = kept.setdefault(id(self), (self, {}))[1].setdefault(which, _KeysSeen())
        try:
            return run(self, *args, **kwargs)
        finally:
            self.cache = held
            name = getattr(getattr(self, "base_fn", None), "__name__", None) or "your kernel"
            configs.append((id(self), cache.looked_up, len(self.configs), name))
            cache.looked_up = None

    Autotuner._bench, Autotuner.run = timed, tuned  # type: ignore[method-assign]
    try:
        yield
    finally:
        Autotuner._bench, Autotuner.run = bench, run  # type: ignore[method-assign]


def _launches_are_seen(device: str) -> bool:
    """Whether _counting_launches sees a launch of a kernel of the check's own, on this device, with this Triton: the
    check requires a launch of the answer only where it can see one (else it checks the values alone)."""
    try:
        import triton
        import triton.language as tl

        name = "<nb09: a Triton kernel of the check's own>"
        linecache.cache[name] = (len(_PROBE_SOURCE), None, _PROBE_SOURCE.splitlines(keepends=True), name)
        namespace = {"triton": triton, "tl": tl, "__name__": "utils.exercises.nb09_probe"}
        exec(compile(_PROBE_SOURCE, name, "exec"), namespace)  # noqa: S102 -- the check's own source, above
        target = torch.zeros(1, device=device)
        with _counting_launches() as seen:
            namespace["course09_probe"][(1,)](target)
        return seen.count == 1 and target.item() == 1.0
    except Exception:  # noqa: BLE001 -- any failure: the launches are not counted, the values still are
        return False


# The default generator's state, which nb09 reads its own way (torch.manual_seed(0) in every call, "for
# reproducibility": a softmax draws nothing, so its state must be as it was; the GPU's too, in SETTINGS, is left out).
# Flush-denormal (round 20's adversary: torch.set_flush_denormal(True) left on) is one of SETTINGS.
DEFAULT_GENERATOR = "torch.get_rng_state()"
# The global settings each call must leave as it found them: settings.BASIC first (a message names the first one
# changed), then every other setting settings.SETTINGS reads and puts back, this PyTorch's and the process's (round
# 20's adversary left np.seterr(all="ignore"), anomaly detection and one thread, each set and passed; round 22's, a
# hand-picked list read, left warnings silenced, logging disabled, NumPy's and Python's generators reseeded, print
# options, cuDNN's benchmark flag and a torch.device(...) context entered and never left, and passed: what one
# answer may touch by the way, another touches too)
WATCHED_SETTINGS = tuple(dict.fromkeys((*BASIC, "np.geterr()", "torch.is_anomaly_enabled()", "torch.get_num_threads()",
                                        *(name for name in SETTINGS if name != DEFAULT_GENERATOR))))


def _local_settings() -> dict[str, Any]:
    with _check_at_work():
        return {DEFAULT_GENERATOR: torch.get_rng_state()}


def _put_back_local(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Put back the default generator's state where it differs now; return its name then."""
    if torch.equal(now[DEFAULT_GENERATOR], before[DEFAULT_GENERATOR]):
        return []
    torch.set_rng_state(before[DEFAULT_GENERATOR])
    return [DEFAULT_GENERATOR]


def _shown_setting(value: object, state: str) -> str:
    """A setting's value as a message shows it (a generator's state as `state`: its bytes say nothing)."""
    return f"({state})" if isinstance(value, torch.Tensor) else str(value)


# What x is, besides its values, that a call must leave as it was (round 27's adversary: an in-place kernel on x, x
# copied back with x.copy_(saved), bumped x's version; `x.data = x.contiguous()` and x.set_(...) made x a copy, no
# longer a view of the caller's wider tensor; the check compared x's values alone).  A Triton write bumps no version:
# the values of a kernel's writes into x are poisoned instead (the second call of _softmax_new_and_own).
X_IS = ("storage", "storage offset", "strides", "version (in-place operations)")


def _what_x_is(x: torch.Tensor) -> tuple[object, ...]:
    with _check_at_work():
        return (_storage_of(x), x.storage_offset(), tuple(x.stride()), x._version)


AUTOTUNED_HINT = ("an autotuner keeps the fastest config, not a right one: every config it may choose must give the "
                  "right softmax, on every shape (a block narrower than the row leaves columns unread); and it times "
                  "each config by running your kernel on the call's own arguments, so what a kernel adds into an "
                  "argument adds up (@triton.autotune's reset_to_zero)")

# What tl.make_block_ptr raises in a Triton that removed block pointers (3.9's language/core.py; 3.6 has them)
BLOCK_POINTERS_GONE = "Block pointers have been removed"
_NO_DRIVER = ("active drivers", "cpu tensor", "Pointer argument", "outside of the scope of a kernel")
# A module of Triton's math for a GPU (triton.language.extra.libdevice, .cuda.libdevice): Triton 3.9's interpreter
# runs none of it.  libdevice.py's functions are stubs (`def exp(arg0): ...`, language/extra/libdevice.py:581, which
# return None: the compiler for a GPU fills them in), and the interpreter patches tl, tl.core, tl.math and the tensor
# descriptors only (_patch_lang, runtime/interpreter.py:1343-1355), so `libdevice.exp(v)` is None there and the launch
# fails further on (round 71's last adversary: "cannot convert None ... to tensor", shown as the student's error)
EXTRA_MATH = "triton.language.extra"
# Instructions from outside Triton's language that its interpreter cannot run at all: Triton 3.9's
# InterpreterBuilder.create_extern_elementwise and create_inline_asm raise NotImplementedError ("... not supported in
# interpreter mode", runtime/interpreter.py:871-875) for tl.inline_asm_elementwise (PTX in the kernel: adversary 126's
# ex2.approx.f32) and tl.extern_elementwise (a @core.extern function of the student's calls it)
FOREIGN_CODE = {"inline_asm_elementwise": "inline assembly (tl.inline_asm_elementwise)",
                "extern_elementwise": "an external library's functions (tl.extern_elementwise)"}
# What Triton raises for a tensor descriptor whose base or strides are not 16-byte aligned (its interpreter's
# TensorDescriptor.validate, runtime/interpreter.py:74-90, and the host-side triton.tools.tensor_descriptor's asserts)
DESCRIPTOR_MISALIGNED = "16-byte aligned"


def _chain(error: BaseException) -> list[BaseException]:
    """error, and the errors it was raised from or during (its __cause__ and __context__), each once."""
    found: list[BaseException] = []
    while error is not None and all(error is not e for e in found):
        found.append(error)
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return found


def _frames(error: BaseException) -> list[Any]:
    """The frames of the tracebacks of error's chain (_chain), outermost first."""
    return [frame for e in _chain(error) for frame, _ in traceback.walk_tb(e.__traceback__)]


def _in_triton(filename: str, *parts: str) -> bool:
    return os.path.join("triton", *parts) in filename


def _extra_math_used(error: BaseException) -> str:
    """Which module of triton.language.extra (EXTRA_MATH: libdevice) a failing launch's code uses, or which of
    FOREIGN_CODE's functions (their key), read from the code of the frames in error's tracebacks outside Triton,
    PyTorch and this check (the student's function and kernel), and of the @triton.jit functions (and @core.extern
    ones) they name, by their globals: "" where none does or no frame ran in Triton's interpreter (where the
    interpreter was not running, the error is the answer's)."""
    frames = _frames(error)
    if not any(_in_triton(frame.f_code.co_filename, "runtime", "interpreter.py") for frame in frames):
        return ""
    here = os.path.dirname(os.path.abspath(__file__))
    seen: set[int] = set()

    def used(code: Any, names: dict, depth: int) -> str:
        codes = [code] + [c for c in code.co_consts if inspect.iscode(c)]  # (nested functions, comprehensions)
        called = {name for c in codes for name in c.co_names}
        for name in called:
            value = names.get(name)
            module = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
            if isinstance(module, str) and module.startswith(EXTRA_MATH):
                return module
            if inspect.ismodule(value) and module == "triton.language" and "extra" in called:
                return EXTRA_MATH  # tl.extra.libdevice.exp(...)
            if isinstance(module, str) and module.startswith("triton.language"):
                foreign = next((n for n in FOREIGN_CODE if n in called and (inspect.ismodule(value) or n == name)),
                               "")  # tl.inline_asm_elementwise(...), core.extern_elementwise(...), or imported
                if foreign:
                    return foreign
            fn = getattr(value, "fn", None)  # a @triton.jit function it names (a helper, or the kernel it launches)
            if fn is None and getattr(value, "__triton_builtin__", False) and not str(module).startswith("triton"):
                fn = getattr(value, "__wrapped__", None)  # a @core.extern function of the student's
            if isinstance(fn, FunctionType) and id(fn) not in seen and depth < 8:
                seen.add(id(fn))
                found = used(fn.__code__, fn.__globals__, depth + 1)
                if found:
                    return found
        return ""

    for frame in frames:
        filename = frame.f_code.co_filename
        if os.path.dirname(os.path.abspath(filename)) == here or any(
                os.sep + package + os.sep in filename for package in ("triton", "torch")):
            continue
        found = used(frame.f_code, frame.f_globals, 0)
        if found:
            return found
    return ""


def _descriptor_misaligned(error: BaseException) -> str:
    """What Triton said, where error's chain holds its assert of a tensor descriptor's 16-byte alignment (raised in
    its interpreter or in the host-side TensorDescriptor); "" otherwise."""
    for e in _chain(error):
        frames = traceback.extract_tb(e.__traceback__)
        if isinstance(e, AssertionError) and DESCRIPTOR_MISALIGNED in str(e) and frames and (
                _in_triton(frames[-1].filename, "runtime", "interpreter.py")
                or _in_triton(frames[-1].filename, "tools", "tensor_descriptor.py")):
            return str(e)
    return ""


def check_softmax_rows(softmax_rows: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """softmax_rows(x) must return softmax(x) over the last dimension, as a new float32 tensor of x's shape, for
    any float32 2-D x whose rows are contiguous (rows may lie further apart), computed by the student's Triton
    kernel; on a GPU, at SHARE_BAR of the GPU's copy bandwidth or more on a large shape."""
    missing = triton_missing()
    if missing is not None:
        print(f"skipped (needs triton): softmax_rows: {missing}")
        return
    on_gpu = has_cuda()
    with exercise("softmax_rows") as ex:
        yours = ex.answer(softmax_rows)
        _X_BYTES_PENDING.clear()  # (a check that FAILed before judging its own)
        device = "cuda" if on_gpu else "cpu"
        counted = _launches_are_seen(device)

        decoys: list[_Decoy | None] = [None]  # the last call's x's decoy (on a CPU: _decoyed)
        tuned: list[tuple[int, Any, int, str]] = []  # each autotuned launch: autotuner, key, configs (on a CPU)
        choices: dict = {}  # what each autotuner chose, per config pass and key, through the check (on a CPU)

        def call_yours(x: torch.Tensor, call: str, poisoned: bool = False, order: str = "", config: Any = 0,
                       guarded: bool | None = None) -> tuple[object, _Launches]:
            """yours(x), its launches counted (on a CPU: run on guarded copies of their tensors, see
            _counting_launches), within CALL_LIMIT_S.  PyTorch's global settings (default dtype, grad mode...) are
            put back as they were, and a call that changed them FAILs (round 19's adversary: a default dtype of float64
            left set made the check's own inputs float64, and every test after it)."""
            settings, local = read(WATCHED_SETTINGS), _local_settings()
            was = _what_x_is(x)
            bytes_before = _x_storage_kept(x)
            # a seed is seen where it is made: the state left may equal the one before (a caller's generator just
            # seeded with 0 stays so after random.seed(0): one order of the tests passed it)
            seeded: dict[str, list[Any]] = {}
            try:
                with seeding_watched(seeded, (softmax_rows,)):
                    y, launches, watch = watched_call(x, call, poisoned, order, config, guarded)
            finally:
                now, local_now = read(WATCHED_SETTINGS), _local_settings()
                changed = put_back(settings) + _put_back_local(local, local_now)
                settings.update(local)
                now.update(local_now)
                reseeded = not_put_back(seeded)
            ex.expect(not reseeded, f"{call} seeds the global random generator {reseeded[0] if reseeded else ''}: it "
                      f"called {seeded[reseeded[0]][0] if reseeded else ''}(...), and did not set it back", SEED_HINT)
            ex.expect(not changed, f"{call} left global settings changed: " + ", ".join(
                f"{name} {_shown_setting(settings[name], 'as it was')} -> {_shown_setting(now[name], 'another state')}"
                for name in changed),
                "a function leaves the caller's settings as it found them: set what your own tensors need on them "
                "(dtype=, device=), and a context manager (with torch.no_grad():) ends with its block")
            now_x = _what_x_is(x)
            ex.expect(now_x == was, f"{call} changed x: its " + ", ".join(
                f"{what} {a} -> {b}" for what, a, b in zip(X_IS, was, now_x, strict=True) if a != b),
                "leave x itself as it was, not only its values: an in-place operation on x, even one that writes its "
                "values back, counts as a change of x (autograd refuses a saved tensor changed so, and another reader "
                "of x sees the change meanwhile), and `x.data = ...` or `x.set_(...)` make x another tensor's view")
            _x_storage_judged(ex, call, x, bytes_before, on_gpu)
            decoy = decoys[0]
            if decoy is not None and _plain_result(y) and tuple(y.shape) == tuple(x.shape) and x.numel():
                with _check_at_work():
                    decoy_x = decoy.view_of(x, decoy.decoy)
                    ex.expect(bool(_softmax_right(y, x).all()) or not bool(_softmax_right(y, decoy_x).all()),
                              f"{call}: your function's result is a softmax of values that are not x's: it read x "
                              "without PyTorch's operations or your kernel (on this CPU, while your function runs, x's "
                              f"memory holds decoy values around {DECOY_AROUND:g}, which only such reads see)",
                              DECOY_HINT)
            return judged(x, call, y, launches, watch)

        def watched_call(x: torch.Tensor, call: str, poisoned: bool, order: str, config: Any,
                         guarded: bool | None) -> tuple[object, _Launches, Any]:
            guarded = not on_gpu or poisoned if guarded is None else guarded
            watch = None
            try:
                with ExitStack() as stack:
                    launches = stack.enter_context(_counting_launches(guarded=guarded, poisoned=poisoned)
                                                   if counted else nullcontext(_Launches()))
                    if not on_gpu:
                        stack.enter_context(_autotune_without_timing(config, tuned, choices))
                        _GRID_ORDER.append(order)
                        stack.callback(_GRID_ORDER.pop)
                        if x.numel():
                            _X_STORAGE.append(x.untyped_storage().data_ptr())
                            stack.callback(_X_STORAGE.pop)
                        # x's values behind a decoy while the answer runs, back before anything compares or reads
                        # x (_DECOYS); on a GPU x stays as it is (a kernel reads it when its stream gets there)
                        decoys[:] = [stack.enter_context(_decoyed(x))]
                    stack.enter_context(time_limit(ex, CALL_LIMIT_S, call, "does every loop of your function and "
                                                   "your kernel end?"))
                    watch = stack.enter_context(_WhatPyTorchComputes(x, fresh_as_nan=poisoned))
                    _INTERPRETER_REFUSED.clear()
                    y = yours(x)
            except _ProgramWaits:
                ex.expect(False, f"{call}: a program of your kernel ran for more than {PROGRAM_LIMIT_S:g} s of CPU: it "
                          "waits for something that only another program of the same launch can do",
                          "programs of one launch run in no fixed order and cannot wait on each other: a GPU runs "
                          "as many at once as fit, and promises a waiting program no progress of the others (it "
                          "may hold the place the awaited one needs); what a program needs from the others comes "
                          "from an earlier launch, which ends before the next one starts")
                raise
            except Exception as error:  # raised again unless it is Triton's, on a CPU
                if not on_gpu and any(s in str(error) for s in _NO_DRIVER):
                    raise LeftForGPU("nothing: Triton compiled the kernel for a GPU", _needs_a_driver(error)) from None
                if not on_gpu and BLOCK_POINTERS_GONE in str(error):  # adversary 121: Triton 3.9 (this CPU's)
                    raise LeftForGPU(  # raises it for every tl.make_block_ptr; Triton 3.6, the reference run's, not
                        f"nothing: the Triton installed here ({_triton_version()}) has no block pointers "
                        "(tl.make_block_ptr raised \"" + BLOCK_POINTERS_GONE + "\"), so its interpreter cannot run "
                        "your kernel", "the kernel, on a GPU whose Triton still has block pointers (the reference "
                        "run's 3.6 does); or rewrite its loads and stores with pointers and a mask, as the lecture "
                        "does, which this Triton runs (a tensor descriptor, tl.make_tensor_descriptor, only where its "
                        "base and row strides are multiples of 16 bytes: the check's x need not be, nor is a y of an "
                        "odd width)") from None
                extra = "" if on_gpu else _extra_math_used(error)
                if extra in FOREIGN_CODE:  # adversary 126: PTX's ex2.approx.f32 through tl.inline_asm_elementwise
                    limit = (f"the interpreter of the Triton installed here ({_triton_version()}) cannot run "
                             f"{FOREIGN_CODE[extra]}, which your kernel uses (it raises NotImplementedError for it): "
                             "a limit of the interpreter, not an error of your kernel; Triton compiles it for a GPU")
                    raise LeftForGPU(f"nothing: {limit}", f"the kernel, on a GPU ({limit})") from None
                if extra:  # round 71's last adversary: libdevice.exp, as Triton's tutorials write it
                    limit = (f"the interpreter of the Triton installed here ({_triton_version()}) cannot run "
                             f"{extra}'s functions, which your kernel calls (they are stubs there, filled in only "
                             "when Triton compiles for a GPU): a limit of the interpreter, not an error of your "
                             "kernel; tl.exp and tl.math's functions run on it")
                    raise LeftForGPU(f"nothing: {limit}", f"the kernel, on a GPU ({limit})") from None
                misaligned = "" if on_gpu else _descriptor_misaligned(error)
                if misaligned:  # round 71's last adversary: the task's x, through tl.make_tensor_descriptor
                    ex.expect(False, f"{call}: Triton stopped your kernel's tensor descriptor (\"{misaligned}\"): a "
                              "descriptor (tl.make_tensor_descriptor, or a host-side TensorDescriptor) needs a base "
                              "address and strides (all but the last) that are multiples of 16 bytes, 4 float32 "
                              "elements, which this x, or the y made for it, does not have (a GPU's TMA unit needs "
                              "them too)",
                              "the task takes any x whose rows are contiguous: any width, rows any distance apart, "
                              "x starting anywhere in its storage; address the rows with pointers and a mask, as the "
                              "lecture does (a descriptor only where base and row strides are 16-byte aligned, "
                              "pointers otherwise)")
                if not on_gpu and _INTERPRETER_REFUSED and UNSUPPORTED_ATOMIC in str(error):  # round 71's second
                    limit = (f"the interpreter of the Triton installed here ({_triton_version()}) cannot run "
                             f"{_INTERPRETER_REFUSED[0]} (it raised \"{UNSUPPORTED_ATOMIC}\"): a limit of the "
                             "interpreter, not an error of your kernel; Triton compiles it for a GPU")
                    raise LeftForGPU(f"nothing: {limit}", f"the kernel, on a GPU ({limit})") from None
                if on_gpu and "Triton Error [CUDA]" in str(error):  # the driver refused the launch (a grid too large)
                    ex.expect(False, f"{call}: the GPU refused your kernel's launch ({error})",
                              "a grid has limits per dimension: the first holds up to 2**31 - 1 programs, the second "
                              "and third 65535 each; which dimension carries your rows?")
                if watch is not None and not isinstance(error, (ExerciseFailed, LeftForGPU)):
                    # a host read of x came first, and FAILs by itself (round 75's adversary on the H200: NumPy on
                    # to_dlpack(x)'s capsule raised, since NumPy refuses a GPU's memory, and the error went through)
                    _host_reads_judged(ex, call, watch, error)
                raise
            return y, launches, watch

        def judged(x: torch.Tensor, call: str, y: object, launches: _Launches, watch: Any
                   ) -> tuple[object, _Launches]:
            ex.expect(not launches.strayed, f"{call}: your kernel wrote outside the tensors it was given: "
                      f"{'; '.join(launches.strayed)}",
                      "which rows can your programs reach (the grid's size, and what program_id stands for), how "
                      "far does each pointer move (its own tensor's row stride), and which lanes does your mask let "
                      "store?")
            ex.expect(not launches.shared, f"{call}: more than one program of your kernel stored the same elements "
                      f"({'; '.join(launches.shared)}): Triton's interpreter runs programs one after the other, so "
                      "the value left is that of whichever program it ran last; on a GPU the programs of a launch run "
                      "in no fixed order, and the last writer wins, by a plain store or by tl.atomic_xchg or "
                      "tl.atomic_cas alike (an atomic makes a write indivisible, not last)",
                      "which elements does each program store? Each element of y should be stored by one program "
                      "alone: look at what a store's mask lets through past the end of a program's own row, and "
                      "whether a program writes what only another program has finished")
            ex.expect(not launches.crossed, f"{call}: a program of your kernel read what another program of the "
                      f"same launch wrote ({'; '.join(launches.crossed)}): Triton's interpreter runs programs one "
                      "after the other, so the write came first here; on a GPU the programs of a launch run in no "
                      "fixed order, and the read may come first (an atomic write is indivisible, not early)",
                      "programs of one launch run in no fixed order and cannot wait on each other: what one program "
                      "computes (a row's max and sum) is used by that program, or by a later launch, which starts "
                      "after this one ends")
            if not on_gpu:  # (the interpreter's record: a GPU's count of checks stays as it was)
                ex.expect(not launches.into_x, f"{call}: your kernel wrote into x's memory, or into the tensor x is a "
                          f"view of ({'; '.join(launches.into_x)}), even if what was there is back by the end",
                          "x is the caller's, and so is the tensor it is a slice of: write the result, and anything "
                          "else your kernel keeps, into memory of your own (another reader of x may read it while your "
                          "kernel runs)")
            if not on_gpu:  # (the interpreter's record)
                ex.expect(not launches.unfenced, f"{call}: a program of your kernel loaded elements that it had "
                          f"stored earlier in the same launch (a load or store made by an atomic counts as one), in "
                          f"a tile of another shape (or at another place of the tile), with no tl.debug_barrier() "
                          f"between the two ({'; '.join(launches.unfenced)}): "
                          "Triton's interpreter runs a program's lanes as one step, so the store came first here; "
                          "on a GPU a program is a block of threads, each holding some elements of a tile, and the "
                          "thread that loads an element may not be the one that stored it",
                          "Triton orders nothing between the threads of a program for global memory: a value your "
                          "program stored and loads back in another tile (another shape, or other offsets) needs "
                          "tl.debug_barrier() between the store and the load (an atomic is no barrier, but for a "
                          "scalar one whose result you use: Triton hands that result to the threads behind one); or "
                          "load it back with the store's own offsets, or keep it in registers")
            ex.expect(not launches.read_outside, f"{call}: your kernel read outside the tensors it was given: "
                      f"{'; '.join(launches.read_outside)} (on a GPU, a read past the end of an allocation can stop "
                      "the process: an illegal memory access)",
                      "a lane whose value you throw away still reads its address: mask every load (`mask=` and "
                      "`other=` for the lanes past the row, and the rows past the last one), not only the store")
            _host_reads_judged(ex, call, watch)  # (on a GPU; nothing counted where none was noted)
            ex.expect(not watch.host, _handed_outside(call, watch), HANDED_HINT)
            ex.expect(not launches.count or not _plain_result(y)
                      or y.numel() == 0 or _storage_of(y) in watch.tainted,
                      f"{call} returned a tensor that nothing made from x was written into: no launch given x (or a "
                      "tensor made from x) and no copy of x wrote it",
                      "pass x (or a copy of it) to your kernel and return the tensor it writes: values computed "
                      "outside PyTorch and Triton (NumPy on x.numpy(), Python on x.tolist()) are not your kernel's")
            ex.expect(not watch.computed, f"{call}: PyTorch computed from x, or from what was made from x, outside "
                      f"your kernel ({', '.join(sorted(set(watch.computed)))})",
                      "PyTorch may allocate the result and view, copy or convert x; whatever computes from x's values "
                      "belongs in your Triton kernel: every step of the softmax, PyTorch's work on what your kernel "
                      "wrote, and checks of the input too (torch.isfinite(x).all() reads x once more, and its answer "
                      "makes the host wait for the GPU)")
            return y, launches

        def call_from_a_float64_caller(x: torch.Tensor, call: str, order: str = "", config: Any = 0
                                       ) -> tuple[object, _Launches]:
            """call_yours(x), from a caller whose default dtype is float64 (FLOAT64_CALLER)."""
            with _default_dtype(torch.float64):
                return call_yours(x, call, order=order, config=config)

        def from_a_caller(case: SoftmaxCase, x: torch.Tensor, before: torch.Tensor, call: str
                          ) -> tuple[object, object, _Launches, str]:
            """On a GPU: yours(x) from a PyTorch caller of the case's kind (its default dtype float64), right after
            the caller's stream wrote x (NaN until then, behind a window of earlier work); the result read on the
            caller's stream at once (a kernel on another stream that the caller's stream does not wait for has not
            run by then).  The current stream after the call must be the caller's (round 26's adversary:
            torch.cuda.set_stream(side) left current; the check read y on the current stream, the side one, in
            order behind the kernel)."""
            kind = tuple(TORCH_CALLERS)[case[-1] % len(TORCH_CALLERS)]
            x.fill_(math.nan)
            calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
            torch.cuda.synchronize()
            with torch_caller(kind) as caller:
                call = f"{call}, {caller.says}, right after that stream wrote x"
                gpu_sleep(SOFTMAX_WINDOW_MS / 1e3)  # on the caller's stream
                x.copy_(before)
                y, launches = call_from_a_float64_caller(x, call)
                left = torch.cuda.current_stream()
                with torch.cuda.stream(caller.stream):  # read on the caller's stream, whichever is current now
                    seen = y.clone() if _plain_result(y) else y
            torch.cuda.synchronize()
            ex.expect(left.cuda_stream == caller.stream.cuda_stream, f"{call}: the call changed PyTorch's current "
                      "CUDA stream: the caller's stream was no longer current after it",
                      "leave the caller's current stream as you found it: a stream of your own is entered with "
                      "`with torch.cuda.stream(s):`, which ends with its block, and the caller's stream waits for it "
                      "before you return")
            return y, seen, launches, call

        def holds(case: SoftmaxCase) -> None:
            x = _softmax_input(case, device)
            before = x.clone()
            call = _describe_softmax(case) + FLOAT64_CALLER
            # on a CPU, the cases of an even seed run each launch's programs last to first, those of a seed 3 more than
            # a multiple of 4 with axis 0 fastest, the others in the grid's order (see _GRID_ORDER)
            order = "" if on_gpu else ("reversed", "", "reversed", "axis 0 fastest")[case[-1] % 4]
            if on_gpu:
                y, seen, launches, call = from_a_caller(case, x, before, call)
            else:
                del tuned[:]
                y, launches = call_yours_reordered(x, call, order)
                seen = y
            ex.expect(not counted or launches.count > 0 or case[0] == 0, f"{call} launched no Triton kernel",
                      "the task is a Triton kernel of your own, launched as softmax_kernel[grid](...) with a program "
                      "for each row (or for a few rows): PyTorch's operations do not count")
            _judge_softmax(ex, call, x, before, y, seen)
            launched = {(who, key): (n, name) for who, key, n, name in tuned if n > 1}  # each (autotuner, key)
            most = max((n for n, _ in launched.values()), default=1)
            for config in range(1, most):  # every config an autotuner may keep, on the same x
                said = f"{call}, with config {config + 1} of your @triton.autotune's {most} kept"
                y, _ = call_from_a_float64_caller(x, said, order, config)
                ex.expect(not _wrong_of_x_shape(y, x), f"{said}: the result is wrong", AUTOTUNED_HINT)
                _judge_softmax(ex, said, x, before, y)
            # two autotuned launches or more: each, in turn, on each of its other configs, the others on their first
            # (each autotuner, and each key of one, keeps its own choice on a GPU: round 70's adversary)
            for at, (launch, (n, name)) in enumerate(launched.items() if len(launched) > 1 else ()):
                for config in range(1, n):
                    said = (f"{call}, with config {config + 1} of {n} kept by your autotuned launch {at + 1} of "
                            f"{len(launched)} ({name}), config 1 by the others")
                    y, _ = call_from_a_float64_caller(x, said, order, (launch, config))
                    ex.expect(not _wrong_of_x_shape(y, x), f"{said}: the result is wrong", AUTOTUNED_HINT + (
                        "; each @triton.autotune, and each key of one, keeps its own fastest config, whatever "
                        "another keeps: launches whose configs must agree (the chunks one writes and another "
                        "reads) need one value given to both, not two choices"))
                    _judge_softmax(ex, said, x, before, y)

        def call_yours_reordered(x: torch.Tensor, call: str, order: str) -> tuple[object, _Launches]:
            """On a CPU: the call with each launch's programs in the order named (GRID_ORDERS); a wrong result there
            whose call in the grid's order is right FAILs with what the order changed."""
            said = call + GRID_ORDERS[order]
            y, launches = call_from_a_float64_caller(x, said, order)
            if not order or not _wrong_of_x_shape(y, x):
                return y, launches
            again, _ = call_from_a_float64_caller(x, call)
            ex.expect(not _plain_result(again) or again.shape != x.shape
                      or not bool(_softmax_right(again, x).all()),
                      f"{said}: the result is wrong, and right with the programs run in the grid's order: your kernel "
                      "depends on the order its programs run in",
                      "programs of one launch run in no fixed order and cannot wait on each other: a value one "
                      "program writes and another reads (even through an atomic, which makes a write indivisible, not "
                      "early) comes from an earlier launch, which ends before the next one starts")
            return y, launches

        # (2, 9, 0, -1e7, 8): values around -1e7, below any finite fill a student may give masked lanes (round 20's
        # adversary: around -1e5, a fill of -1e6 passed); (2, 9, 0, -1e37, 8): around -1e37, where float32 ends
        # (round 27's: a fill of -1e9 passed, and the class "a finite fill" was open below -2.3e7); (2, 100, 3,
        # -inf, 12): masked rows, -inf in x (round 27's: an online softmax gave NaN for a row whose first 16 were);
        # (2, 40, 1, -inf, 15): masked rows whose finite values lie near FAR_BELOW (round 133's: -inf read as -1e4);
        # (2, 40, 0, -100, 8): rows whose max is -28.6 and -10, values down to -158 (round 73's: the shift skipped
        # where |max| <= 80; see SOFTMAX_SCALES)
        chosen = [(1, 1, 0, 1.0, 1), (3, 5, 3, 1000.0, 2), (0, 7, 0, 1.0, 3), (CPU_MAX[0], CPU_MAX[1], 64, 10.0, 4),
                  (2, 9, 0, -1e7, 8), (2, 9, 0, -1e37, 8), (2, 100, 3, -math.inf, 12),
                  (2, 3, 0, -1000.0, 8), (2, 40, 1, -math.inf, 15), (2, 40, 0, -100.0, 8)]
        if on_gpu:
            chosen += [(7, 1025, 1, 10.0, 5), (3, MAX_COLS, 64, 1000.0, 6), (301, 781, 3, 1.0, 7),
                       (MANY_ROWS, 3, 1, 1.0, 9)]
        else:  # 3 rows again, longer than (3, 5)'s: an autotuner's choice kept for a key without cols (round 69's)
            chosen += [(3, 150, 1, 10.0, 5)]
        for_all(ex, _softmax_cases(on_gpu), holds, examples=12 if on_gpu else CPU_CASES, chosen=chosen,
                budget_s=GPU_BUDGET_S if on_gpu else 0.5,
                describe=lambda case: _describe_softmax(case) + FLOAT64_CALLER)
        seen_on_cpu = None
        if counted:
            _softmax_new_and_own(ex, call_yours, device)
            _softmax_two_callers(ex, call_yours, yours, device)
            seen_on_cpu = _softmax_one_thread_two_streams(ex, call_yours, yours, device)
            if on_gpu:
                _softmax_released_together(ex, call_yours, yours)
        _x_storage_pending_judged(ex)
        if not on_gpu:
            raise LeftForGPU(f"the values on {ex.passed} small shapes, through Triton's interpreter, that each "
                             "result is a new tensor and that its values come from your kernel",
                             f"the kernel compiled for a GPU: shapes up to {MAX_COLS} columns, and its speed against "
                             f"this GPU's copy bandwidth on a {BIG[0]} x {BIG[1]} tensor, and two calls whose "
                             "kernels run at the same time on two streams"
                             + (f"; and {seen_on_cpu}" if seen_on_cpu else ""))
        _softmax_speed(ex, yours, counted)


HANDED_HINT = ("every step of the softmax belongs in your Triton kernel, and around it PyTorch alone may allocate, "
               "view, copy or convert: NumPy on x.numpy(), Python on x.tolist(), CuPy on x through DLPack compute "
               "outside it, and even a view made through NumPy (torch.from_numpy(x.numpy())) hands x to NumPy, which "
               "refuses a GPU tensor (on a GPU, x.cpu().numpy() is also a copy to the host and a wait for the GPU)")


def _handed_outside(call: str, watch: _WhatPyTorchComputes, raised: str = "") -> str:
    return (f"{call}: your function handed x's memory or values (or those of what was made from x) to code outside "
            f"PyTorch and your kernel ({', '.join(sorted(set(watch.host)))}){raised}")


def _host_reads_judged(ex: Any, call: str, watch: _WhatPyTorchComputes, error: BaseException | None = None) -> None:
    """FAIL a call that brought x's values, or those of what was made from x, to the host (watch.to_host, on a GPU),
    or, where it raised (`error`), one that handed them to code outside PyTorch and the kernel before (watch.host):
    the read came first, and is wrong by itself.  Nothing is counted where nothing was noted."""
    said = (str(error).splitlines() or [""])[0][:200]
    raised = "" if error is None else f"; then it raised {type(error).__name__}: {said}"
    if watch.to_host:
        ex.expect(False, f"{call}: your function copied x's values, or those of what it made from x, from the GPU to "
                  f"the host ({', '.join(f'aten.{name}' for name in sorted(set(watch.to_host)))}; .cpu(), "
                  f".to('cpu'), .numpy(), .tolist(), .item() and torch.save each make one){raised}",
                  "every step of the softmax belongs in your Triton kernel: a copy to the host waits for the GPU, "
                  "moves x over the bus, and what reads it there (NumPy, Python) computes outside your kernel; "
                  "around the kernel, PyTorch may allocate, view, copy or convert on the GPU only")
    if error is not None and watch.host:
        ex.expect(False, _handed_outside(call, watch, raised), HANDED_HINT)


def _needs_a_driver(error: BaseException) -> str:
    """What a GPU must check, where Triton on this CPU asked for a GPU's driver (`error`), and why it did."""
    frames = [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
    if any(name.endswith("autotuner.py") for name in frames):
        return ("the kernel, which Triton's autotuner times on a GPU: Triton's interpreter cannot time it (the check "
                "lets @triton.autotune pick its first config here; something in yours still asks for a GPU)")
    return ("the kernel, compiled for a GPU (to run it on this CPU, set os.environ['TRITON_INTERPRET'] = '1' before "
            "Triton is first imported: restart the kernel and run the cells from the top)")


def _softmax_new_and_own(ex: Any, call_yours: Callable, device: str) -> None:
    """Three more calls on one shape: every earlier result must survive every later call (a new tensor each call:
    round 20's adversary used two output tensors in turn, which the check, comparing the first result after the
    second call only, never saw); with every value the answer's kernels write replaced by NaN right after their
    launch, the second call's result must change (its values come from the answer's kernel, not from PyTorch); then
    the third call on the second call's very tensor, new values written into it through `x.data`, which PyTorch's
    version counter does not see: the softmax of the new values (nothing kept by the tensor's address, its version
    or the tensor itself: round 20's adversary kept results by address and `x._version`, and the last call's)."""
    first, second, third = OWN_CASE, (*OWN_CASE[:-1], OWN_CASE[-1] + 1), (*OWN_CASE[:-1], OWN_CASE[-1] + 2)
    call = _describe_softmax(first)
    x1, x2, x3 = (_softmax_input(case, device) for case in (first, second, third))
    before1, before2 = x1.clone(), x2.clone()
    y1, _ = call_yours(x1, call)
    _judge_softmax(ex, call, x1, before1, y1)
    assert isinstance(y1, torch.Tensor)
    kept = [y1.clone()]
    # The caller keeps the first result's memory, not the tensor (round 27's adversary reused its output when
    # sys.getrefcount said nobody held it: a caller's `.detach()` or `.numpy()` of it holds the memory, not the tensor)
    y1 = y1.detach()
    y2, _ = call_yours(x2, call + ", a second time, other values", poisoned=True)
    _kept_unchanged(ex, call, [y1], kept, "a second time")
    ex.expect(_plain_result(y2) and tuple(y2.shape) == tuple(x2.shape),
              f"{call}, a second time, returned {_result_form(y2) or what_returned(y2)}", PLAIN_HINT)
    assert isinstance(y2, torch.Tensor)
    want = softmax_reference(x2)
    right = _softmax_right(y2, x2, want)
    ex.expect(torch.equal(x2, before2) and not bool(right.all()),
              f"{call}: with every value your kernel wrote replaced by NaN right after its launch, your function "
              "still returned the right softmax: the values it returns do not come from your kernel",
              "return the tensor your kernel wrote: the values must be your kernel's, not another function's")
    kept.append(y2.clone())
    with torch.no_grad():  # the check's own write: new values in the second call's tensor, its version unchanged
        x2.data.copy_(x3)
    again = x2.clone()
    more = (", a third time, on the second call's tensor with new values written into it, from a caller whose "
            "default dtype is float64")
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # a caller of its own settings (round 20's adversary: an answer that set
    try:  # float32 as the default in every call changed nothing a caller with PyTorch's defaults could see)
        y3, _ = call_yours(x2, call + more)
    finally:
        torch.set_default_dtype(dtype)
    _kept_unchanged(ex, call, [y1, y2], kept, "a third time")
    _judge_softmax(ex, call + more, x2, again, y3)
    # the same shape again, its rows farther apart (round 133's adversary kept each shape's row stride from its first
    # call, and passed: every later call on a shape had that shape's gap)
    wider = (*OWN_CASE[:2], WIDER_GAP, *OWN_CASE[3:-1], OWN_CASE[-1] + 3)
    x4 = _softmax_input(wider, device)
    before4 = x4.clone()
    said = _describe_softmax(wider) + f", after three calls on rows {OWN_CASE[1] + OWN_CASE[2]} elements apart"
    y4, _ = call_yours(x4, said)
    _judge_softmax(ex, said, x4, before4, y4)
    del y4
    # Where the answer keeps its results (the third's storage outlives the check's last reference to it), KEPT_CALLS
    # more calls, each earlier result compared after each (round 26's adversary: three output tensors in turn passed
    # three calls; an answer that keeps nothing costs no call more)
    left = StorageWeakRef(y3.untyped_storage())
    del y3
    if left.expired():
        return
    dropped = [left]
    for k in range(4, 4 + KEPT_CALLS):
        x = _softmax_input((*OWN_CASE[:-1], OWN_CASE[-1] + k), device)
        y, _ = call_yours(x, f"{call}, call {k}, on other values")
        _kept_unchanged(ex, call, [y1, y2], kept, f"{k} times")
        if _plain_result(y):
            dropped.append(StorageWeakRef(y.untyped_storage()))
        del y
    # Every result the check dropped still in memory, none reused: the answer keeps them all (round 27's adversary
    # appended each to a module-level list: on a GPU, memory that only grows; adversary 121 carved each result out of
    # a slab of 1 MiB that it kept, a new slab when one was full: bounded, but each result a view into the answer's
    # memory, which the task's text rules out: a result is a tensor of its own, freed once the caller drops it)
    alive = sum(not ref.expired() for ref in dropped)
    ex.expect(alive < len(dropped), f"{call}: the memory of every one of the {len(dropped)} results the caller "
              "dropped is still held after your function returned", "each result is a tensor of its own, whose "
              "memory belongs to the caller and is freed once the caller drops it: not a view into memory your "
              "function keeps (a buffer that results are carved from, a list or a cache of results)")


class _SameSpot:
    """Whether a thread stays `limit` seconds on one bytecode of one frame (it waits: a lock), from the frames seen."""

    def __init__(self, limit: float) -> None:
        self.limit, self.since = limit, time.perf_counter()
        self.where: tuple[Any, int] | None = None

    def stuck(self, frame: Any) -> bool:
        now = time.perf_counter()
        if frame is None or self.where is None or frame is not self.where[0] or frame.f_lasti != self.where[1]:
            self.where, self.since = ((frame, frame.f_lasti) if frame is not None else None), now
            return False
        return now - self.since >= self.limit

    def forget(self) -> None:
        """Drop the frame held (a frame keeps its locals alive)."""
        self.where = None


def _joined_unless_waiting(thread: threading.Thread, seconds: float) -> None:
    """thread.join(seconds), given up early where the thread stays OTHER_STUCK_S on one bytecode of one frame (it
    waits: a lock the caller holds)."""
    started = time.perf_counter()
    spot = _SameSpot(OTHER_STUCK_S)
    while thread.is_alive() and time.perf_counter() - started < seconds:
        thread.join(0.05)
        frame = sys._current_frames().get(thread.ident or -1)  # the one way to see where another thread is
        if spot.stuck(frame):
            spot.forget()
            return
        del frame
    spot.forget()


@dataclass
class _OtherCaller:
    """One of _softmax_two_callers' other callers: its case, its x (and a copy), the record of its calls (_AnotherCall),
    what they returned or raised, and the threads that made them."""
    said: str
    case: SoftmaxCase
    x: torch.Tensor
    before: torch.Tensor
    record: _AnotherCall
    results: list = field(default_factory=list)
    threads: list = field(default_factory=list)


def _softmax_two_callers(ex: Any, call_yours: Callable, yours: Callable, device: str) -> None:
    """A call on OWN_CASE's shape with two other callers' whole calls made right after its first launch (on a CPU,
    inside each program of each of its launches, after the program's first write: see _INSIDE; the first call's
    launches unguarded, so that what the calls share in memory is shared: round 67's third adversary kept the tickets
    of a split row's tl.atomic_add counters from call to call, which two calls whose launches overlap draw from both):
    what two threads, or two streams that nothing orders, do when they call at once.  Each time, one after the other:
    a caller on the same shape (rounds 27, 68 and 69: a scratch buffer or a workspace kept per shape, or per row
    count, written by one call's program and read back after the other caller's call had written it), then one on
    OTHER_CALLER_SHAPE (round 72's second adversary: cols and row strides in one buffer that each call fills, which a
    caller of the same shape fills with the same numbers; last, so that what it leaves is what the first call's later
    programs read).  Every result must be right, each against its own x.  The other calls run as the answer's own code
    would from another caller: their launches as they are (both shapes passed the guarded calls before); each is
    judged as any call is, in its caller's own record (_AnotherCall: adversary 126's caller that found a lock held and
    computed with PyTorch, or NumPy, passed when only its values were)."""
    first = (*OWN_CASE[:-1], OWN_CASE[-1] + 20)
    others = []
    for said, case in (("on x of the same shape", (*OWN_CASE[:-1], OWN_CASE[-1] + 24)),
                       ("on another shape", (*OTHER_CALLER_SHAPE, OWN_CASE[3], OWN_CASE[-1] + 21))):
        x_other = _softmax_input(case, device)
        x_other.add_(OTHER_SHIFT)  # in place: the view stays a view (round 65's adversary: a max kept between
        # launches, replaced by the other caller's of values alike, changed no softmax, which no shift of a row changes)
        others.append(_OtherCaller(said, case, x_other, x_other.clone(), _AnotherCall(x_other)))
    x = _softmax_input(first, device)
    before = x.clone()

    def another_caller(other: _OtherCaller, stream: object) -> None:
        _IN_A_LAUNCH.running = True
        try:
            if stream is not None:
                torch.cuda.set_stream(stream)  # type: ignore[arg-type]  # the first caller's: x_other was written there
            other.results.append(other.record.call(yours, other.x))
        except Exception as error:  # noqa: BLE001 -- judged below: no result
            other.results.append(error)
        finally:
            _IN_A_LAUNCH.running = False

    def between() -> None:
        # Each call in a thread of its own (round 100's adversary: a right answer that holds a threading.Lock around
        # its launch waited forever for itself when the other call ran in the first caller's thread), waited for: a
        # call that is not back in OTHER_CALLER_S waits for the first caller (a lock), which goes on, and is joined
        # after it; the next caller's call is then started and not waited for (it would wait for the same lock).
        stream = torch.cuda.current_stream() if device != "cpu" else None
        waits = False
        for other in others:
            thread = threading.Thread(target=another_caller, args=(other, stream), daemon=True)
            thread.start()
            other.threads.append(thread)
            if not waits:
                _joined_unless_waiting(thread, OTHER_CALLER_S)
                waits = thread.is_alive()
        if waits and _INSIDE:  # a call waits for the first caller (a lock): the calls after it would too
            _INSIDE[-1].made = OTHER_CALLS_INSIDE

    on_gpu = device != "cpu"
    call = (f"{_describe_softmax(first)}, with two other callers' calls, softmax_rows(x of the same shape) and "
            f"{_describe_softmax(others[1].case)}, made one after the other "
            + ("between its launches" if on_gpu
               else "inside the programs of its launches (in each, after its first write, and before its first load of "
                  "what it stored)"))
    inside = _OtherCalls(between)
    with ExitStack() as decoys, _another_call_watched(*(other.record for other in others)):
        if not on_gpu:  # each other caller's x behind a decoy of its own (see _DECOYS), back before it is judged
            for other in others:
                decoys.enter_context(_decoyed(other.x))
        if on_gpu:
            _BETWEEN.append(between)
        else:
            _INSIDE.append(inside)
        try:
            y, _ = call_yours(x, call, guarded=None if on_gpu else False)
        finally:
            _BETWEEN.clear()
            _INSIDE.clear()
            for other in others:
                for thread in other.threads:
                    thread.join(OTHER_CALLER_S)
    # No other call made (round 68's second adversary: launches from a thread the probe did not follow passed 0 == 0)
    if not on_gpu:  # (on a GPU, _BETWEEN's call follows any counted launch, from any thread)
        ex.expect(inside.made > 0, f"{call}: no other caller's call could be made during it (no launch of yours ran "
                  "where the check could see it)", "two callers at once: a call's work must be launches the caller "
                  "can see run (a kernel launched from your function, or from a thread it joins), each call with its "
                  "own memory")
    hint = ("two callers at once (two threads, or two streams that nothing orders) each need their own memory: "
            "whatever one call writes and a later launch of it reads (a buffer kept from call to call, whether per "
            "shape or for every shape) is another caller's too")
    theirs_all: list[object] = []
    for other in others:
        raised = next((r for r in other.results if isinstance(r, Exception)), None)
        ex.expect(len(other.results) == len(other.threads), f"{call}: the other caller's call {other.said} had not "
                  f"returned {OTHER_CALLER_S:g} s after the first call's end",
                  "two callers at once: does a call of yours wait for something only another call can release?")
        ex.expect(raised is None, f"{call}: the other caller's call {other.said} raised {raised!r}",
                  "two callers at once: each call must work on its own, whatever the other is doing")
        theirs = other.results[0] if other.results and raised is None else None
        wrong = next((r for r in other.results if _wrong_of_x_shape(r, other.x)), None)
        theirs_all.append(theirs if wrong is None else wrong)
    ex.expect(not _wrong_of_x_shape(y, x), f"{call}: the first caller's result is wrong", hint)
    for other, theirs in zip(others, theirs_all):
        ex.expect(not _wrong_of_x_shape(theirs, other.x), f"{call}: the other caller's result {other.said} is wrong",
                  hint)
    _judge_softmax(ex, call, x, before, y)
    for other, theirs in zip(others, theirs_all):
        if theirs is not None:
            _judge_another_call(ex, f"{call} ({other.said})", other.record, theirs)
            _judge_softmax(ex, f"{call} (the other caller's, {other.said})", other.x, other.before, theirs)


class _SecondCallStopped(BaseException):
    """_softmax_one_thread_two_streams: the second call, made inside the first, did not return in SAME_THREAD_S."""


@contextmanager
def _stopped_after(seconds: float) -> Iterator[bool]:
    """Raise _SecondCallStopped in the block after `seconds`, or once it has stayed STUCK_S on one bytecode of one frame
    (a Lock's acquire that waits for its own thread; SIGALRM every 0.1 s, which interrupts the acquire), the timer
    of an enclosing time_limit put back afterwards, less the time spent.  Yields False, and runs nothing, where no
    timer can be set (not the main thread, or no setitimer)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield False
        return

    spot = _SameSpot(STUCK_S)

    def stop(_: int, frame: Any) -> None:
        if spot.stuck(frame) or time.perf_counter() - started >= seconds:
            spot.forget()
            raise _SecondCallStopped

    left, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)  # a look every 0.1 s
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.perf_counter() - started), 1e-3))


def _second_call_in_a_thread(call: Callable[[], None], stopped: list[bool]) -> None:
    """call() in a thread of its own, waited for SAME_THREAD_S at most (no timer can stop a call off the main thread:
    _stopped_after); `stopped` noted where it has not returned (it waits: a lock its caller holds)."""
    def run() -> None:
        _IN_A_LAUNCH.running = True
        try:
            call()
        except Exception as error:  # noqa: BLE001 -- kept for the caller: no result
            failures.append(error)
        finally:
            _IN_A_LAUNCH.running = False

    failures: list[Exception] = []
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    _joined_unless_waiting(thread, SAME_THREAD_S)
    if thread.is_alive():
        stopped.append(True)
    elif failures:
        raise failures[0]


def _softmax_one_thread_two_streams(ex: Any, call_yours: Callable, yours: Callable, device: str) -> str | None:
    """One thread, two calls in flight (adversary 108: a scratch buffer kept per thread, `threading.local`, which
    _softmax_two_callers, whose other call comes from a thread of its own, never shared).  A caller that calls on one
    stream and then, at once, on another (lectures 03 and 04) has both calls' work queued: the second call's kernels
    may run while the first's later work still waits.  On a GPU: right after the first call's first launch, a sleep
    of TWO_STREAMS_WINDOW_MS is queued on its stream (no code of the answer runs there), so its later work waits;
    then, from the same thread, the second call on a new stream that waits for nothing.  On a CPU, where the
    interpreter runs each launch at once: the second call made in the same thread right after the first call's
    first launch, before the rest of the first call runs; a second call that is not back in SAME_THREAD_S (round
    100's adversary: a threading.Lock held around the launch waits for itself, which no caller in one thread can
    make happen) is stopped, and judges nothing.  Both results must be right; on a CPU, a wrong one is left for a GPU
    (returned: what the CPU saw)."""
    first, other = ((*OWN_CASE[:-1], OWN_CASE[-1] + k) for k in (22, 23))
    x, x_other = _softmax_input(first, device), _softmax_input(other, device)
    x_other.add_(OTHER_SHIFT)
    before, before_other = x.clone(), x_other.clone()
    on_gpu = device != "cpu"
    results: list[object] = []
    stopped: list[bool] = []
    if on_gpu:
        calibrate_sleeps()
        torch.cuda.synchronize()  # x_other written: the second call's stream need wait for nothing

        def between() -> None:
            gpu_sleep(TWO_STREAMS_WINDOW_MS / 1e3)  # on the first call's stream, behind its first launch
    else:
        def between() -> None:
            _IN_A_LAUNCH.running = True  # its launches as they are (the same shape passed the guarded calls)
            try:
                with _stopped_after(SAME_THREAD_S) as timed:  # (its work is its own: second.call, _AnotherCall)
                    if timed:
                        results.append(second.call(yours, x_other))
                    else:  # a launch from a worker thread: the second call from it, in a thread of its own, waited for
                        _second_call_in_a_thread(lambda: results.append(second.call(yours, x_other)), stopped)
            except _SecondCallStopped:
                stopped.append(True)
            except Exception as error:  # noqa: BLE001 -- judged below: no result
                results.append(error)
            finally:
                _IN_A_LAUNCH.running = False

    call = (f"{_describe_softmax(first)}, then from the same thread at once a second call on x of the same shape, "
            + ("on another stream, the first call's later work still queued behind earlier work on its stream"
               if on_gpu else "made right after the first call's first launch (as its later work would wait on a "
               "GPU's stream)"))
    second = _AnotherCall(x_other)  # (on a GPU, the second call is call_yours's)
    with nullcontext() if on_gpu else _another_call_watched(second), \
            nullcontext() if on_gpu else _decoyed(x_other):  # (its own decoy: _DECOYS)
        _BETWEEN.append(between)
        try:
            y, _ = call_yours(x, call)
        finally:
            _BETWEEN.clear()
    if on_gpu:
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            theirs, _ = call_yours(x_other, call + " (the second call)")
        torch.cuda.synchronize()
    else:
        theirs = results[0] if results and not isinstance(results[0], Exception) else None
        ex.expect(not (results and isinstance(results[0], Exception)),
                  f"{call}: the second call raised {results[0]!r}" if results else "",
                  "two calls in flight from one thread: each call must work on its own")
        if stopped:  # nothing to judge the first call against
            return None
        ex.expect(bool(results), f"{call}: no second call could be made during it (no launch of yours ran where "
                  "the check could see it)", "two calls in flight from one thread: a call's work must be launches "
                  "the caller can see run (a kernel launched from your function, or from a thread it joins)")
        if theirs is not None:  # (on a GPU, the second call is call_yours's)
            _judge_another_call(ex, call + " (the second call)", second, theirs)
        # A CPU has no stream: a second call from the same thread inside the first is the GPU's second stream
        # emulated, which no answer on a CPU can tell from its first call's (round 67's third adversary: scratch kept
        # per (device, current stream, rows), right on a GPU, has one key on a CPU, as a buffer kept per thread has).
        # A wrong result here is left for a GPU, with what the CPU saw.
        wrong = [what for what, got, xs in (("first", y, x), ("second", theirs, x_other))
                 if _wrong_of_x_shape(got, xs)]
        if wrong:
            return (f"two calls in flight from one thread on two streams (on this CPU, which has no streams, a second "
                    f"call made inside the first, from the same thread, made the {' and '.join(wrong)} call's result "
                    "wrong: a buffer kept from call to call, even one kept per thread, is the other stream's call's "
                    "too)")
    for what, got, xs in (("the first call's", y, x), ("the second call's", theirs, x_other)):
        ex.expect(not _wrong_of_x_shape(got, xs),
                  f"{call}: {what} result is wrong", "two calls in flight from one thread (one stream, then another, "
                  "with nothing between them) each need their own memory: a buffer kept from call to call, even one "
                  "kept per thread, is the other call's too; allocate what a call writes in that call")
    _judge_softmax(ex, call, x, before, y)
    if isinstance(theirs, torch.Tensor):
        _judge_softmax(ex, call + " (the second call)", x_other, before_other, theirs)
    return None


def _softmax_released_together(ex: Any, call_yours: Callable, yours: Callable) -> None:
    """On a GPU: two calls whose kernels run at the same time (round 67's third adversary's and round 68's kept
    ticket counters and kept workspaces have one launch a call, which no other call came between: they PASSed on
    the H200 in calls BK, BL and BN).  Each pair: a sleep of RELEASED_WINDOW_MS on the caller's stream and an event
    after it; the first call on the caller's stream, right behind the sleep, and the second on a side stream that
    waits for the event: both calls' launches queued behind the same gate, started together when it opens.
    RELEASED_PAIRS pairs on each of RELEASED_SHAPES, each shape's first call judged in full first (a first call
    compiles); both results of each pair must be right, each against its own x (the second call on RELEASED_OTHER's
    shape where it names one)."""
    side = torch.cuda.Stream()
    for k, (rows, cols) in enumerate(RELEASED_SHAPES):
        first, other = (rows, cols, 0, 1.0, 30 + 2 * k), (*RELEASED_OTHER.get((rows, cols), (rows, cols, 0)), 1.0,
                                                          31 + 2 * k)
        x, x_other = _softmax_input(first, "cuda"), _softmax_input(other, "cuda")
        x_other.add_(OTHER_SHIFT)
        before = x.clone()
        second = "x of the same shape" if other[:3] == first[:3] else f"x of shape {tuple(x_other.shape)} (rows " \
            f"{x_other.stride(0)} elements apart)"
        call = (f"{_describe_softmax(first)} and a second call on {second} from a side stream, both calls' kernels "
                "held behind one event and started together")
        y, _ = call_yours(x, call + " (its first call, alone)")
        _judge_softmax(ex, call + " (its first call, alone)", x, before, y)
        if other[:3] != first[:3]:  # (a first call on a shape compiles: not inside a pair)
            before_other = x_other.clone()
            theirs, _ = call_yours(x_other, call + " (its second call, alone)")
            _judge_softmax(ex, call + " (its second call, alone)", x_other, before_other, theirs)
        calibrate_sleeps()
        torch.cuda.synchronize()
        for pair in range(RELEASED_PAIRS):
            gpu_sleep(RELEASED_WINDOW_MS / 1e3)
            gate = torch.cuda.Event()
            gate.record()
            results: list[object] = []
            try:
                with _check_at_work():
                    results.append(yours(x))
                    side.wait_event(gate)
                    with torch.cuda.stream(side):
                        results.append(yours(x_other))
            except Exception as error:  # noqa: BLE001 -- judged below: the same shape passed alone
                ex.expect(False, f"{call}: pair {pair + 1} raised {error!r}",
                          "two calls at once (two streams that nothing orders): each call must work on its own")
            torch.cuda.synchronize()
            wrong = [what for what, got, xs in (("first", results[0], x), ("second", results[1], x_other))
                     if not _plain_result(got) or got.shape != xs.shape
                     or not bool(_softmax_right(got, xs).all())]
            ex.expect(not wrong, f"{call}: the {' and '.join(wrong)} call's result was wrong in pair {pair + 1} of "
                      f"{RELEASED_PAIRS}", "two calls whose kernels run at the same time (two streams that nothing "
                      "orders) each need their own memory: counters or a workspace kept from call to call are the "
                      "other call's too, while both run; allocate what a call's kernel writes in that call")


def _kept_unchanged(ex: Any, call: str, results: list[torch.Tensor], kept: list[torch.Tensor], when: str) -> None:
    """Each earlier result as it was when returned (NaN where the poisoned call left it: NaN equals NaN here)."""
    for k, (y, was) in enumerate(zip(results, kept, strict=True)):
        ex.expect(y.shape == was.shape and bool(torch.isclose(y, was, rtol=0, atol=0, equal_nan=True).all()),
                  f"{call}: the result of call {k + 1} changed when your function was called {when} (on other "
                  "values of the same shape)", "return a new tensor from each call: the caller keeps each result, "
                  "and no later call may overwrite it")


def _judge_softmax(ex: Any, call: str, x: torch.Tensor, before: torch.Tensor, y: object, seen: object = None
                   ) -> None:
    """`seen`: y's values as the caller's stream read them right after the call (default: y itself)."""
    want = softmax_reference(x)
    form = _result_form(y, dtype=False)  # (a dtype other than float32: the next test's message)
    ex.expect(not form and isinstance(y, torch.Tensor) and tuple(y.shape) == tuple(x.shape) and y.device == x.device,
              f"{call} returned {form or what_returned(y)}, expected a float32 tensor of shape {tuple(x.shape)} on "
              f"{x.device}", PLAIN_HINT)
    assert isinstance(y, torch.Tensor)
    ex.expect(y.dtype == torch.float32, f"{call} returned a {y.dtype} tensor, expected float32",
              "the result keeps x's dtype, on every path of your function: a tensor made without dtype= takes the "
              "caller's default dtype, which need not be float32")
    # y's autograd state (round 26's adversary: y.requires_grad_(), or the work under torch.inference_mode(): the
    # caller's next in-place write into y raised, and autograd could not use y)
    state = "an inference tensor" if y.is_inference() else "a tensor that requires grad, for an x that requires " \
        "none" if y.requires_grad and not before.requires_grad else ""
    ex.expect(not state, f"{call} returned {state}",
              "return a plain tensor, as PyTorch's own operations do for such an x: the caller may write into it in "
              "place and use it where autograd records (what do requires_grad and inference mode make of a tensor?)")
    ex.expect(torch.equal(x, before) and y.data_ptr() != x.data_ptr() or x.numel() == 0,
              f"{call} changed x", "write the result into a new tensor; leave x as it was")
    # x's autograd flag too (round 20's adversary: x.requires_grad_() "so that the result can be differentiated";
    # the caller's next in-place write into x raised, the check's own first)
    ex.expect(x.requires_grad == before.requires_grad, f"{call} changed x: x.requires_grad is {x.requires_grad} "
              f"after the call, {before.requires_grad} before", "leave x as it was, its requires_grad too: the "
              "caller's next in-place write into x (x.copy_(next_batch)) raises when x is a leaf that requires grad")
    # an empty x has no values to change, and its data_ptr() may be any other tensor's: x itself, or a view of x or
    # of what x is a view of, returned is no new tensor (round 19's adversary: `if x.numel() == 0: return x`)
    # and x's storage itself, whatever tensor holds it (adversary 108: `x.detach()` for an empty x, whose _base is
    # None and whose data_ptr() the test above skips: the same storage and version counter, so that the caller's
    # in-place write into y changed x's version)
    ex.expect(y is not x and (y._base is None or (y._base is not x and (x._base is None or y._base is not x._base)))
              and not _same_storage(x, y),
              f"{call} returned x itself (or a view of it, or a tensor on x's storage), not a new tensor",
              "return a new tensor, for an empty x too: the caller keeps both, and may change one of them")
    got = (seen if isinstance(seen, torch.Tensor) else y).double()
    bad = ~_softmax_right(got, x, want)
    wrong = int(bad.sum())
    if wrong:
        r, c = (int(i) for i in bad.nonzero()[0])
        ex.expect(False, f"{call}: {wrong} of {want.numel()} values wrong, the first at row {r}, column {c}: "
                  f"{got[r, c].item():.9g} where {want[r, c].item():.9g} is right (within a relative "
                  f"{softmax_rtol(x.shape[-1]):.2g} for rows of {x.shape[-1]}, plus {SOFTMAX_RTOL_PER_UNIT:g} for "
                  "each unit x lies below its row's max)",
                  "NaN or infinity: exp overflows unless something is subtracted first; or a lane read outside its "
                  "row (what does your mask let load?)" + ("; or x read before the caller's stream wrote it (NaN "
                                                           "until then: which stream did your kernel run on?)"
                                                           if x.is_cuda else "; or a max taken from x outside your "
                                                           "kernel and PyTorch's operations: " + DECOY_HINT)
                  if not math.isfinite(
                      got[r, c].item()) else
                  "check each row's start (its stride, not its length), the mask of the last columns (what do masked "
                  "lanes contribute to the max and to the sum?), and that every column of a long row is read; a "
                  "small error on every value is a bias: each row must sum to 1 (nothing added to the sum), "
                  "constants such as log2(e) need all of float32's digits, and x - max comes first (x - (max + "
                  "log(sum)) rounds max + log(sum) at x's magnitude: 6e-5 apart near 1000)")
    if got.numel():  # every value within its tolerance: each row's sum, within the sum's own (SOFTMAX_SUM_EPS)
        off = (got.sum(dim=-1) - want.sum(dim=-1)).abs()
        r = int(off.argmax())
        tol = softmax_sum_tol(x.shape[-1])
        ex.expect(not bool(off[r] > tol), f"{call}: row {r} sums to {got[r].sum().item():.9g}, {off[r].item():.2g} "
                  f"from 1, where a right float32 softmax of rows of {x.shape[-1]} sums to 1 within {tol:.2g}: every "
                  "value of the row is off the same way", "a small error shared by every value of a row is a bias: "
                  "each row must sum to 1, so nothing may be added to the sum (after the max is subtracted, the sum "
                  "is at least 1: nothing to guard against)")


def _softmax_speed(ex: Any, yours: Callable, counted: bool) -> None:
    """The answer's share of this GPU's copy bandwidth on BIG: copy time over the answer's time (both move the
    same bytes at least: read x, write y), the best of three tries; `counted`: whether launches are seen here
    (_launches_are_seen)."""
    x = torch.randn(BIG, device="cuda", generator=torch.Generator("cuda").manual_seed(9))
    y = torch.empty_like(x)
    want = softmax_reference(x[:64])
    out = yours(x)
    ex.expect(_plain_result(out) and out.shape == x.shape and bool(_softmax_right(
        out[:64], x[:64], want).all()),
        f"softmax_rows(x of shape {BIG}) returned wrong values", "a large shape needs the same care as a small one")
    share = 0.0
    for _ in range(3):
        copy = benchmark(lambda: y.copy_(x), backend="cuda", min_time=0.05).median
        took = benchmark(lambda: yours(x), backend="cuda", min_time=0.05).median
        share = max(share, copy / took)
        if share >= SHARE_BAR:
            break
    if counted:  # once more on the x just timed (round 68's second adversary: a result kept by x's
        # address, shape, strides and version above 2**22 elements gave the timed calls a kept tensor, no kernel)
        with _counting_launches() as seen:
            yours(x)
        torch.cuda.synchronize()
        ex.expect(seen.count > 0, f"softmax_rows(x of shape {BIG}), called again on the x it was just timed on, "
                  "launched no Triton kernel: it gave back what an earlier call kept, and the time measured was not "
                  "your kernel's", "each call computes its result with a launch of your kernel: a result kept from "
                  "an earlier call (by x's address, shape, strides or version) is the same tensor another caller "
                  "holds, or stale once x's memory changes in a way the key does not see")
    print(f"softmax_rows on a {BIG[0]} x {BIG[1]} float32 tensor: {share:.2f} of this GPU's copy bandwidth "
          f"(y.copy_(x) moves the same bytes); the bar is {SHARE_BAR}")
    ex.expect(share >= SHARE_BAR, f"softmax_rows reached {share:.2f} of this GPU's copy bandwidth on a "
              f"{BIG[0]} x {BIG[1]} tensor, below {SHARE_BAR}",
              "a softmax needs to move each row through memory no more than a copy does: one launch, one program "
              "per row (or a few rows), the whole row in one block (a power of two at least as long as the row); "
              "and the host's work in each call should take less time than the kernel, or the GPU waits for it")


register(Exercise(NOTEBOOK, "softmax_rows", check_softmax_rows, gpu=True, cpu_checks=184, requires=("triton",)))


# ------------------------------------------------------------------------------------------
# Exercise 3: a RawKernel's bounds bug, found and fixed
# ------------------------------------------------------------------------------------------
Factor = float | np.floating[Any] | np.integer[Any]  # a real number as a caller passes it (FACTORS)
ScaleCase = tuple[int, Factor, int]  # (n, a, seed)
GUARD = 4096  # elements of each guard region: more than a block of 1024 threads writes, twice
SENTINEL = -12345.0  # what the guard regions hold
# a, as a caller may pass a real number: the checks are liberal in types, strict in values (CONTRIBUTING, "How a check
# decides").  Adversary 106's kernel declared `double a` and was given a as it came, and passed: every a was a Python
# float, which CuPy passes as a double.  CuPy passes a Python int as an int64 and a NumPy scalar as its own type
# (np.float32: 4 bytes), and a kernel reads each as the type its signature declares (cupy/_core/_scalar.pyx, CScalar;
# cupy/cuda/function.pyx, _pointer; v14.2.0): each case's a is one of these kinds, and the chosen cases hold every
# kind.  No 0-d array: CuPy's own operators, which the task lets an answer use in place of the kernel, refuse a 0-d
# NumPy array (CScalar raises 'Unsupported type'), and a 0-d CuPy array lives on the GPU (its value on the host is
# a copy that waits for the GPU).
FACTORS = (1.5, -0.75, 3.0, 0.1, 2.5, 2, -3, np.float32(0.1), np.float32(-2.5), np.float64(1.25), np.int64(3),
           np.int32(-2))
SCALE_RTOL = 2.5e-7  # two float32 ulps against the float64 product: a rounded first, or not
SCALE_FULL = 2**21  # up to this size, every element of out is compared; beyond, the last ones and a spread of others
# more than a grid capped at 65535 blocks of 1024 threads covers, or at 65536 (round 27's adversary capped it at 2**16,
# "the grid limit", and passed the earlier 65535 * 1024 + 257): 268 MB a buffer, about 1.3 GB for the case in all
SCALE_LARGE = 65536 * 1024 + 257
# check_scale_into's chosen cases: every kind of a (FACTORS) on a size of 1 or more; seed 11: a busy caller (round
# 113's adversary split the large case over two blocking streams of its own, no waits, and passed from the null
# stream, seed 8)
SCALE_CHOSEN: list[ScaleCase] = [
    (0, 1.5, 1), (1, -3, 2), (255, np.float32(0.1), 3), (256, np.int64(3), 4), (257, np.float64(1.25), 5),
    (511, np.int32(-2), 6), (2**20 + 1, -0.75, 7), (SCALE_LARGE, 2.5, 11)]


@reference
def scale_reference(x: np.ndarray, a: Factor) -> np.ndarray:
    """a * x, in float64."""
    return float(a) * x.astype(np.float64)


def _scale_cases() -> st.SearchStrategy[ScaleCase]:
    blocks = st.builds(lambda k, d: max(0, 256 * k + d), st.integers(1, 16), st.integers(-2, 2))
    return st.tuples(st.one_of(st.integers(0, 9), blocks, st.integers(1, 2**20 + 1)), st.sampled_from(FACTORS),
                     st.integers(0, 2**32 - 1))


def _scale_caller(case: ScaleCase) -> str:
    """The kind of CuPy caller of the case (a key of CUPY_CALLERS), from its seed."""
    return tuple(CUPY_CALLERS)[case[2] % len(CUPY_CALLERS)]


def _scale_written_late(case: ScaleCase) -> bool:
    """Whether the caller's stream writes x behind a window of 3 * WINDOW_MS (half the cases, from the seed, whatever
    the caller's kind).  Two waits can be missing, and each shows in one order of the streams only: with x written
    late, a stream of the answer's (late by WINDOW_MS) runs before x is written unless it waits for the caller's;
    with x written at once, the caller's next work runs before that stream's kernel unless it waits for it."""
    return case[2] // len(CUPY_CALLERS) % 2 == 0


def _shown_factor(a: object) -> str:
    """a as Python code that makes it: `2`, `1.5`, `np.float32(0.1)`."""
    return f"np.{type(a).__name__}({a})" if isinstance(a, np.generic) else repr(a)


def _describe_scale(case: ScaleCase) -> str:
    n, a, _ = case
    late = ", right behind a slow write of x on that stream" if _scale_written_late(case) else ""
    return (f"scale_into(out, x, {_shown_factor(a)}) with x and out of {n} elements, called from "
            f"{CUPY_CALLERS[_scale_caller(case)]}{late}")


@dataclass
class _ScaleRun:
    got: np.ndarray  # out's values as the caller's stream read them right after the call (a sample, when large)
    later: np.ndarray  # the same, after the whole device finished
    x: np.ndarray  # x's values at the same elements
    picked: np.ndarray | None  # the elements compared (None: all)
    guards: np.ndarray  # both guard regions, as the caller's stream read them
    unwritten: int  # elements of out that still hold SENTINEL, as the caller's stream read them
    again: np.ndarray | None = None  # out after a second call on the same out and x, x negated (None: large)


def _scale_run(ex: Any, cp: Any, yours: Callable, case: ScaleCase) -> _ScaleRun:
    """One call of yours(out, x, a) from the case's caller, right after the caller's stream wrote x (in half the
    cases behind a window of 3 * WINDOW_MS: x holds infinity until then, see _scale_written_late); out is read on the
    caller's stream at once, then again after a synchronize of the whole device.  Streams the answer creates or
    enters start late by WINDOW_MS (widened()): with x written at once, a kernel there that the caller's stream does
    not wait for has not run when the caller reads; with x written late, one that does not wait for the caller's
    stream has run before x was written."""
    n, a, seed = case
    large = n > SCALE_FULL
    picked = (np.concatenate([np.arange(n - 2 * GUARD, n), np.linspace(0, n - 1, 4096).astype(np.int64)])
              if large else None)
    with cupy_caller(_scale_caller(case), busy_ms=WINDOW_MS) as caller:
        s = caller.stream
        x_base = cp.full(n + 2 * GUARD, np.inf, dtype=cp.float32)
        out_base = cp.full(n + 2 * GUARD, SENTINEL, dtype=cp.float32)
        x, out = x_base[GUARD:GUARD + n], out_base[GUARD:GUARD + n]
        if large:  # made on the GPU: 268 MB of NumPy's normal numbers would take seconds on the host
            source = (cp.arange(n, dtype=cp.int32) % 9973).astype(cp.float32) * cp.float32(0.01) - cp.float32(50.0)
        else:
            source = cp.asarray(np.random.default_rng(seed).normal(0.0, 10.0, n).astype(np.float32))
        where = None if picked is None else cp.asarray(picked)  # on the caller's stream, before the call
        if _scale_written_late(case):  # a window, then x written (a copy on the GPU): nothing the host sends waits
            cupy_sleep(3 * WINDOW_MS / 1e3)  # on the caller's stream
        x[...] = source
        with widened(WINDOW_MS, spare=(s,), at_creation=True), time_limit(
                ex, CALL_LIMIT_S, _describe_scale(case), "does every loop of your function end?"):
            yours(out, x, a)

        def read() -> np.ndarray:
            return (out if where is None else out[where]).get()

        with _queued_on(cp, s):  # the caller's next work, on its stream
            got = read()
            guards = cp.concatenate([out_base[:GUARD], out_base[GUARD + n:]]).get()
            unwritten = int(cp.count_nonzero(out == SENTINEL))
    cp.cuda.Device().synchronize()
    run = _ScaleRun(got, read(), (x if where is None else x[where]).get(), picked, guards, unwritten)
    if large or not n:
        return run
    # The same call again, on the same out and x (so the same addresses, n and a), after the caller's stream wrote new
    # values into x: a result kept from the last call (round 69's second adversary's memo by address) shows here.
    with cupy_caller(_scale_caller(case), busy_ms=WINDOW_MS) as caller:
        cp.negative(x, out=x)  # on the caller's stream, as the caller's own next write
        with widened(WINDOW_MS, spare=(caller.stream,), at_creation=True), time_limit(
                ex, CALL_LIMIT_S, _describe_scale(case) + ", called again", "does every loop of your function end?"):
            yours(out, x, a)
        with _queued_on(cp, caller.stream):
            run.again = out.get()
    cp.cuda.Device().synchronize()
    return run


def check_scale_into(scale_into: Callable[[Any, Any, Any], object]) -> None:
    """scale_into(out, x, a) must write a * x into out (float32, 1-D, n elements, out a view into a larger array; a
    any real number: a Python float or int, or a NumPy scalar), and nothing outside out, on CuPy's current stream (the
    caller reads out on its stream right after the call)."""
    if _left_for_a_gpu("scale_into", "CuPy on a GPU: sizes of 0, 1, odd, around multiples of the block and large, "
                                     "out a view into a larger array whose guard regions must stay untouched, and "
                                     "the values against a float64 reference, read on the caller's stream"):
        return
    with exercise("scale_into") as ex:
        cp = _cupy("check_scale_into")
        yours = keeping(ex, ex.answer(scale_into), CUPY_KEPT)
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU

        def holds(case: ScaleCase) -> None:
            n, a, _ = case
            run = _scale_run(ex, cp, yours, case)
            call = _describe_scale(case)
            touched = np.flatnonzero(run.guards != SENTINEL)
            where = ("" if not touched.size else
                     f"{touched[0] - GUARD if touched[0] < GUARD else touched[0] - GUARD + n}")
            ex.expect(touched.size == 0,
                      f"{call}: {touched.size} elements outside out were written (the first at out[{where}])",
                      "which threads pass your bounds test, and does it cover every element each thread writes?")
            want = scale_reference(run.x, a)

            def wrong_in(got: np.ndarray) -> np.ndarray:
                return np.flatnonzero(~(np.abs(got.astype(np.float64) - want) <= SCALE_RTOL * np.abs(want)))

            bad, bad_later = wrong_in(run.got), wrong_in(run.later)
            ex.expect(bad.size == 0 or bad_later.size > 0,
                      f"{call}: the caller's stream read out right after the call, before your kernel had written it "
                      f"({bad.size} of {run.got.size} elements compared still wrong then, all right later)",
                      "launch on CuPy's current stream (the caller's), or make the caller's stream wait for the "
                      "stream your kernel ran on")
            ex.expect(run.unwritten == 0 or bad.size > 0, f"{call}: {run.unwritten} of {n} elements of out were never "
                      f"written (they still hold {SENTINEL:g})", "how many blocks does your launch have for n "
                      "elements, and how many elements does each thread cover? (a grid capped at some number of "
                      "blocks leaves the rest to a loop in each thread)")
            first = int(bad[0]) if bad.size else 0
            index = first if run.picked is None else int(run.picked[first])
            compared = "" if run.picked is None else "compared "
            ex.expect(bad.size == 0, f"{call}: {bad.size} of {run.got.size} elements of out {compared}wrong, the "
                      f"first out[{index}] = {run.got[first] if bad.size else 0:.9g}, "
                      f"where {want[first] if bad.size else 0:.9g} is right",
                      f"{SENTINEL:g} is what out held before: those elements were never written (how many blocks, "
                      "and how many elements does each thread cover?)" if bad.size and run.got[first] == SENTINEL else
                      "infinity is what x holds before the caller's stream writes it (right before the call, behind "
                      "earlier work) and what lies just outside x: does the stream your kernel runs on wait for the "
                      "caller's, and does each thread read its own element?" if bad.size and not np.isfinite(
                          run.got[first]) else
                      "the kernel reads its arguments as the C types of its signature: what type does CuPy pass a "
                      "Python float, a Python int or a NumPy scalar (np.float32, np.int64) as, and what does your "
                      "signature declare?")

            if run.again is not None and not bad.size:
                kept = np.flatnonzero(~(np.abs(run.again.astype(np.float64) + want) <= SCALE_RTOL * np.abs(want)))
                at = int(kept[0]) if kept.size else 0
                ex.expect(kept.size == 0,
                          f"{call}, then called again with the same out, x and a after the caller wrote -x into x: "
                          f"{kept.size} of {n} elements of out wrong after the second call, the first out[{at}] = "
                          f"{run.again[at]:.9g}, where {-want[at]:.9g} is right",
                          "each call must compute out from the values x holds now: the same addresses can hold new "
                          "values (the caller writes x in place, and CuPy's pool hands freed memory out again)")

        for_all(ex, _scale_cases(), holds, examples=24, chosen=SCALE_CHOSEN, budget_s=GPU_BUDGET_S,
                describe=_describe_scale)


register(Exercise(NOTEBOOK, "scale_into", check_scale_into, gpu=True, cpu_checks=0))
