"""Checks for the exercises of notebook 04 (CUDA streams in CuPy, and CuPy beside PyTorch): the
tutorial's stream code made correct, a CuPy kernel applied to a PyTorch tensor on the caller's
stream, a pipeline of copies and computes, and which stream a CuPy call runs on.

The GPU checks make every race window wide on purpose: they keep one stream busy with
`utils.cupy_sleep` (CuPy) or `utils.gpu_sleep` (PyTorch), kernels that spin for a known time, so an
answer that forgets a wait reads the wrong data every time, not once in a thousand runs.  Each
trial uses data of its own, so a stale result (left in memory by an earlier trial) is never right.

Without a GPU and CuPy, exercises 1 to 3 say what a GPU would check, and check nothing: every value
they compare is computed by CuPy on a GPU, and every mistake they look for is an order of streams
(exercise 4's stream rules are checked anywhere).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..device import has_cuda, has_cupy, require_cuda, require_cupy
from ..timing import cupy_cycles_per_second, cupy_sleep, gpu_cycles_per_second, gpu_sleep, timer
from . import Exercise, Findings, LeftForGPU, exercise, register, what_returned

NOTEBOOK = "04_streams_cupy"
WINDOW_MS = 60.0  # how long the checks keep a stream busy (at first: see TRIES)
TRIES = 3  # a run that a slow or busy host spoiled is tried again; a wrong answer fails every try


def _cupy(what: str) -> Any:
    """CuPy, once we know that PyTorch and CuPy can both use the GPU (else a one-line error)."""
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


def _cupy_elapsed_ms(fn: Callable[[], object]) -> float:
    """GPU milliseconds from before `fn()` to after it, on CuPy's current stream (utils.timer)."""
    with timer(backend="cupy", verbose=False) as elapsed:
        fn()
    return elapsed.seconds * 1e3


# ------------------------------------------------------------------------------------------
# Exercise 1: the tutorial's stream code, made correct
# ------------------------------------------------------------------------------------------
@dataclass
class _SumRun:
    result: Any  # what sum_on_stream returned
    seen: float | None  # what the caller's stream read from it right after the call
    current_after: Any  # CuPy's current stream after the call
    after_window: bool  # the caller's next work ran after s's busy window (so it waited for s)
    probed: float | None  # what a third stream read from the result between s's window and the caller's
    host_ms: float  # how long the call kept the host


def _value(cp: Any, x: Any) -> float | None:
    return float(x.ravel()[0]) if isinstance(x, cp.ndarray) and x.size == 1 else None


def _sum_run(cp: Any, sum_on_stream: Callable, a_np: np.ndarray, s: Any, caller: Any,
             caller_busy: bool = False) -> _SumRun:
    """One call of sum_on_stream(a_np, s) from `caller` (CuPy's current stream), while s is busy.

    caller_busy: the caller's stream is busy too, twice as long as s; a third stream reads the result
    halfway between the two windows' ends, when a sum queued on s has been written and a sum queued on
    the caller's stream has not (unless the host returned later than that: a copy from pageable memory
    makes the host wait for the stream it is queued on).
    """
    cp.cuda.Device().synchronize()
    window_end = cp.cuda.Event()
    probe = cp.cuda.Stream(non_blocking=True)
    with caller:
        origin = caller.record()  # the GPU is idle: this is now
        t0 = time.perf_counter()
        cupy_sleep(WINDOW_MS / 1e3, s)
        s.record(window_end)
        if caller_busy:
            cupy_sleep(2 * WINDOW_MS / 1e3, caller)
        result = sum_on_stream(a_np, s)
        host_ms = (time.perf_counter() - t0) * 1e3
        current_after = cp.cuda.get_current_stream()
        with caller:  # the caller's next work (on the caller's stream even if the answer changed it)
            seen = result.copy() if isinstance(result, cp.ndarray) else None
            consumed = caller.record()
        probed = None
        if caller_busy and isinstance(result, cp.ndarray):
            with probe:  # reads at 1.5 windows after `origin`, however long the host took
                cupy_sleep(max(0.0, 1.5 * WINDOW_MS / 1e3 - (time.perf_counter() - t0)))
                probed = result.copy()
    cp.cuda.Device().synchronize()
    after_window = cp.cuda.get_elapsed_time(origin, consumed) >= cp.cuda.get_elapsed_time(origin, window_end)
    return _SumRun(result, _value(cp, seen), current_after, after_window, _value(cp, probed), host_ms)


def check_sum_on_stream(sum_on_stream: Callable[[np.ndarray, Any], Any]) -> None:
    """sum_on_stream(a_np, s) must copy a NumPy array to the GPU and sum it on stream s, return the
    sum as a CuPy array that work on the caller's current stream may use at once, and leave the
    caller's current stream as it was.

    It is called from the null stream and from another stream, each time while s is busy with a
    kernel of 60 ms: a sum queued on s is written only after it, so a caller's stream that does not
    wait for s reads the result too early (a value left in memory by an earlier trial), and a sum
    that was not queued on s is read before s's window ends (the order of two CUDA events).
    """
    if _left_for_a_gpu("sum_on_stream", "CuPy on a GPU: the sum, copied and computed on s while s is busy, read "
                                        "right away on the caller's stream (which must wait for s on the GPU, not "
                                        "on the host), with the caller's current stream left as it was"):
        return
    with exercise("sum_on_stream") as ex:
        cp = _cupy("check_sum_on_stream")
        rng = np.random.default_rng(2024)
        n = 2**20
        warm = rng.integers(0, 1000, n).astype(np.float64)
        cp.asarray(warm).sum().copy()  # load the kernels an answer uses, so that the host is not slow now
        cupy_cycles_per_second()  # calibrate cupy_sleep now: it waits for the GPU
        s = cp.cuda.Stream(non_blocking=True)
        callers = {"the null stream": cp.cuda.Stream.null, "a non-blocking stream": cp.cuda.Stream(non_blocking=True)}
        for where, caller in callers.items():
            a_np = rng.integers(0, 1000, n).astype(np.float64)  # integers: the sum is exact in any order
            want = float(a_np.sum())
            run = _sum_run(cp, sum_on_stream, a_np, s, caller)
            ex.expect(isinstance(run.result, cp.ndarray) and run.result.size == 1,
                      f"called from {where}, sum_on_stream returned a {type(run.result).__name__}, "
                      "expected a CuPy array holding the sum",
                      "return the CuPy array that .sum() gives (a 0-d array); float() or .get() would make "
                      "the host wait for the GPU")
            ex.expect(run.current_after == caller,
                      f"called from {where}, sum_on_stream left {run.current_after} as CuPy's current stream "
                      f"instead of {caller}",
                      "`s.use()` makes s current until something else is used, and `Stream.null.use()` is "
                      "not 'back' for a caller that was on another stream: use `with s:`, which restores "
                      "the caller's stream when the block ends")
            ex.expect(run.seen == want,
                      f"called from {where}, the caller's stream read {run.seen} right after the call, "
                      f"expected {want}: it read the result before s had written it",
                      "the sum is queued on s, behind s's earlier work: record an event on s after the sum, "
                      "and make the caller's stream wait for it (caller.wait_event(...)), without making "
                      "the host wait")
            ex.expect(run.after_window,
                      f"called from {where}, the sum did not run on s: the caller's stream had it before s's "
                      "earlier work was done",
                      "queue the copy and the sum on s: inside `with s:`")
        # Where did the sum run? The caller's stream busy for longer than s: a sum queued on s is written
        # when s's window ends; one queued on the caller's stream (after a wait for s) only after the caller's.
        caller = callers["a non-blocking stream"]
        for _ in range(TRIES):  # new data each try: a result left in memory by the last try is never right
            a_np = rng.integers(0, 1000, n).astype(np.float64)
            want = float(a_np.sum())
            run = _sum_run(cp, sum_on_stream, a_np, s, caller, caller_busy=True)
            on_s = run.probed == want and run.host_ms < 1.5 * WINDOW_MS
            if on_s or run.seen != want:
                break  # a sum on s; or a wrong answer that the checks below will name
        ex.expect(run.seen == want, f"with the caller's stream busy, the caller read {run.seen}, expected {want}",
                  "make the caller's stream wait for an event recorded on s after the sum")
        # A copy from pageable memory waits for its stream on the host: a host kept past the caller's window
        # copied on the caller's stream.
        ex.expect(on_s,
                  "the sum was not computed on s: with the caller's stream busy for longer than s, the result "
                  "appeared only when the caller's stream was free",
                  "the copy and the sum belong on s (so that they run as soon as s is free, whatever the caller's "
                  "stream is doing); the caller's stream only waits for the result")


register(Exercise(NOTEBOOK, "sum_on_stream", check_sum_on_stream, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 2: a CuPy kernel on the caller's PyTorch stream
# ------------------------------------------------------------------------------------------
FACTOR = 3.0
SCALE_N = 2**20  # float32 elements: 4 MiB


def _cupy_stream_of(cp: Any, stream: torch.cuda.Stream) -> Any:
    """A CuPy stream object for a PyTorch stream (the same CUDA stream), as in the lecture's section 8.2."""
    if hasattr(cp.cuda.Stream, "from_external") and hasattr(stream, "__cuda_stream__"):
        return cp.cuda.Stream.from_external(stream)
    return cp.cuda.ExternalStream(stream.cuda_stream)  # CuPy before 14


@dataclass
class _ScaleRun:
    out: Any  # what the answer returned
    seen: torch.Tensor | None  # what the caller's stream read from it, after the caller's next allocations
    input_after: torch.Tensor | None  # the input, read at the end (when the caller kept it)
    waited: bool  # the producer's busy window had ended when the call returned: the host waited
    host_ms: float
    torch_after: torch.cuda.Stream  # PyTorch's current stream after the call
    cupy_moved: bool  # CuPy's current stream after the call is not the one before it
    late: bool  # the caller's next work ran only after unrelated work queued on PyTorch's default stream


def _scale_run(cp: Any, fn: Callable, caller: torch.cuda.Stream, value: float, window_ms: float,
               keep_input: bool, busy_default: bool) -> _ScaleRun:
    """One call of fn(t, FACTOR) with `caller` as PyTorch's current stream, queued right behind a
    producer that spends `window_ms` on other work and then fills t with `value`.

    keep_input=False: the caller drops t right after the call and allocates tensors of its size (which
    may take t's memory), and CuPy arrays of its size on its stream (which may take the memory of a
    result that nothing owns). busy_default: PyTorch's default stream (CuPy's null stream) is busy
    with unrelated work for twice the window.
    """
    torch.cuda.synchronize()
    cupy_before = cp.cuda.get_current_stream()
    default = torch.cuda.default_stream()
    origin, default_end, consumed = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    slept = torch.cuda.Event()
    origin.record(default)
    if busy_default:
        gpu_sleep(2 * window_ms / 1e3, default)
    default_end.record(default)
    try:
        with torch.cuda.stream(caller):
            t = torch.full((SCALE_N,), math.nan, device="cuda")
            gpu_sleep(window_ms / 1e3)
            slept.record()
            t.fill_(value)
            t0 = time.perf_counter()
            out = fn(t, FACTOR)
            host_ms = (time.perf_counter() - t0) * 1e3
            waited = slept.query()
            torch_after = torch.cuda.current_stream()
            cupy_moved = cp.cuda.get_current_stream().ptr != cupy_before.ptr
            with torch.cuda.stream(caller):  # the caller's next work, on its own stream
                kept = t if keep_input else None
                del t
                held: list = []  # the caller's new allocations, alive until its stream has read the result
                if not keep_input:
                    held += [torch.full((SCALE_N,), -1.0, device="cuda") for _ in range(2)]
                    with _cupy_stream_of(cp, caller):  # CuPy's pool: the arena of the caller's stream
                        held += [cp.full(SCALE_N, -2.0, dtype=cp.float32) for _ in range(4)]
                usable = isinstance(out, torch.Tensor) and out.is_cuda and out.shape == (SCALE_N,)
                seen = out.clone() if usable else None
                consumed.record()
    finally:
        cupy_before.use()  # whatever the answer did to CuPy's current stream, the next trial starts clean
    torch.cuda.synchronize()
    held.clear()
    late = busy_default and origin.elapsed_time(consumed) >= origin.elapsed_time(default_end)
    input_after = kept.clone() if kept is not None else None
    return _ScaleRun(out, seen, input_after, waited, host_ms, torch_after, cupy_moved, late)


def check_cupy_scale_on_current_stream(
    cupy_scale_on_current_stream: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """cupy_scale_on_current_stream(t, factor) must return factor * t, computed by CuPy, as a new PyTorch
    tensor that work on PyTorch's current stream may read at once, with CuPy's work queued on that same
    stream, and without making the host wait.

    The tensor is written by a producer that first spends 60 ms on other work, on the caller's stream.
    Three calls: from PyTorch's default stream; from another stream, after which the caller drops t and
    allocates memory of its size at once (PyTorch's and CuPy's); and from another stream while PyTorch's
    default stream (CuPy's null stream) is busy with unrelated work for 120 ms, which the caller's next
    work must not wait for.
    """
    if _left_for_a_gpu("cupy_scale_on_current_stream",
                       "CuPy and PyTorch on a GPU: the values read on the caller's stream behind a slow producer, "
                       "no wait of the host, both libraries' current streams left as they were, the result's "
                       "memory after the caller drops its input, and no wait for PyTorch's busy default stream"):
        return
    with exercise("cupy_scale_on_current_stream") as ex:
        cp = _cupy("check_cupy_scale_on_current_stream")
        gpu_cycles_per_second()  # calibrate gpu_sleep now: it waits for the GPU
        side = torch.cuda.Stream()
        warm = torch.ones(SCALE_N, device="cuda")
        side.wait_stream(torch.cuda.default_stream())
        cupy_current = cp.cuda.get_current_stream()
        try:
            with torch.cuda.stream(side):  # a first call: CuPy compiles its kernels, the pools fill
                cupy_scale_on_current_stream(warm, FACTOR)
        finally:
            cupy_current.use()
        torch.cuda.synchronize()
        trials = [  # (where, caller, value, keep_input, busy_default)
            ("PyTorch's default stream", torch.cuda.default_stream(), 3.0, True, False),
            ("a side stream", side, 5.0, False, False),
            ("a side stream, with the default stream busy", side, 7.0, True, True),
        ]
        found = Findings()
        for where, caller, value, keep_input, busy_default in trials:
            for k in range(TRIES):  # a slow host spoils a try now and then; a wrong answer fails every try
                run = _scale_run(cp, cupy_scale_on_current_stream, caller, value, WINDOW_MS * 2**k, keep_input,
                                 busy_default)
                if not (run.waited or run.late):
                    break
            out, want = run.out, value * FACTOR
            is_tensor = isinstance(out, torch.Tensor) and out.is_cuda
            if not found.expect(is_tensor and out.shape == (SCALE_N,) and out.dtype == torch.float32,
                                f"from {where}: returned {what_returned(out)}, expected a float32 CUDA tensor of "
                                f"{SCALE_N} elements",
                                "hand CuPy's result back to PyTorch without a copy (DLPack)"):
                continue
            found.expect(not run.waited,
                         f"from {where}: the call returned only after the producer's {WINDOW_MS * 2**k:.0f} ms "
                         f"of earlier work had run (the host waited {run.host_ms:.0f} ms)",
                         "the host must not wait for the GPU (no synchronize, .cpu(), .item(), .get(), "
                         "asnumpy): order the work on the GPU, by queuing it on the stream that already orders it")
            found.expect(run.torch_after == caller and not run.cupy_moved,
                         f"from {where}: the call changed the current stream "
                         f"({'PyTorch' if run.torch_after != caller else 'CuPy'}'s)",
                         "leave both libraries' current streams as you found them: a `with` block restores the "
                         "stream at its end; use() does not")
            assert run.seen is not None
            wrong = int((run.seen != want).sum())
            example = f" (for example {run.seen[(run.seen != want).nonzero()[0, 0]].item():g})" if wrong else ""
            found.expect(wrong == 0,
                         f"from {where}: the caller's stream read {wrong} of {SCALE_N} values other than "
                         f"{want:g}{example}",
                         "CuPy read the input before the producer had written it, or the caller read the result "
                         "before CuPy had written it (or after its memory was given to someone else): which "
                         "stream was CuPy's work queued on, and what ordered it with the caller's stream?")
            if run.input_after is not None:
                found.expect(bool((run.input_after == value).all()), f"from {where}: the input tensor was changed",
                             "return a new tensor; leave the caller's input as it was")
            if busy_default:
                found.expect(not run.late,
                             f"from {where}: the caller's next work waited for the unrelated "
                             f"{2 * WINDOW_MS * 2**k:.0f} ms of work queued on PyTorch's default stream",
                             "CuPy's null stream *is* PyTorch's default stream: work queued there, or a handshake "
                             "made while it is CuPy's current stream, ties the caller to everything queued on it. "
                             "Which stream should CuPy's kernel, and both DLPack exports, see as current?")
        found.report(ex)



register(Exercise(NOTEBOOK, "cupy_scale_on_current_stream", check_cupy_scale_on_current_stream, gpu=True,
                  cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 3: copies on a copy stream, computes on the current stream
# ------------------------------------------------------------------------------------------
ROWS, COLS, NCHUNKS = 2048, 2048, 8  # chunks of 16 MiB (float32)


def _pinned_chunks(cp: Any, base: np.ndarray, trial: int) -> list[np.ndarray]:
    """NCHUNKS pinned host arrays, different in each trial: chunk i is base + 16 * i + trial."""
    import cupyx

    chunks = []
    for i in range(NCHUNKS):
        h = cupyx.empty_pinned((ROWS, COLS), dtype=np.float32)
        np.add(base, 16 * i + trial, out=h)
        chunks.append(h)
    return chunks


def _wrong_chunks(got: object, chunks: Sequence[np.ndarray], cp: Any) -> list[int] | str:
    """The chunks whose result is not the row sums of the chunk; a string if the answer's shape is wrong."""
    if not isinstance(got, list) or len(got) != len(chunks):
        return f"returned a {type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'} items, " \
               f"expected a list of {len(chunks)} results"
    bad = []
    for i, (g, h) in enumerate(zip(got, chunks)):
        if not isinstance(g, cp.ndarray) or not np.array_equal(cp.asnumpy(g), h.sum(axis=1)):
            bad.append(i)
    return bad


def check_pipelined(pipelined: Callable[[Sequence[np.ndarray], Callable[[Any], Any], Any], list]) -> None:
    """pipelined(chunks, compute, copy_stream) must return [compute(chunk on the GPU) for each chunk],
    with compute called on the current stream, copying the chunks on copy_stream while compute runs:
    correct whatever the timing, and faster than copying and computing one chunk after the other.

    Four runs: the copies late (copy_stream busy when the call comes: a compute that does not wait
    for its copy reads a stale buffer, and a host that waits for a copy returns late); the computes
    late, with copy_stream used again right after the call (a buffer that was allocated on
    copy_stream and freed while a compute still reads it is handed out again, and overwritten: CuPy
    has no record_stream); earlier work on the current
    stream still reading memory that the answer's buffers reuse (a copy that does not wait for the
    current stream overwrites it); and a timed run, whose bar comes from this machine, as in
    notebook 03's prefetching exercise: the computes are made as long as a copy (or twice the
    host's time per chunk, if longer), and the answer must save at least half of what a perfect
    overlap saves.
    """
    if _left_for_a_gpu("pipelined", "CuPy on a GPU: the results with slow copies, with slow computes and with "
                                    "earlier work still reading reused memory, no wait of the host, and the time "
                                    "saved against copying then computing one chunk at a time"):
        return
    with exercise("pipelined") as ex:
        cp = _cupy("check_pipelined")
        current = cp.cuda.get_current_stream()
        copy_stream = cp.cuda.Stream(non_blocking=True)
        base = np.random.default_rng(4).integers(0, 16, (ROWS, COLS)).astype(np.float32)
        compute_ms = 0.0  # how long compute() keeps the current stream busy before it reads its chunk
        called_on: list = []

        def compute(x: Any) -> Any:
            called_on.append(cp.cuda.get_current_stream())
            if compute_ms:
                cupy_sleep(compute_ms / 1e3)
            return x.sum(axis=1)

        def sequential(chunks: Sequence[np.ndarray]) -> list:
            return [compute(cp.asarray(h)) for h in chunks]

        chunks = _pinned_chunks(cp, base, 0)
        sequential(chunks)  # warm-up: kernels, the pool's first allocations
        cupy_cycles_per_second()  # calibrate cupy_sleep now: it waits for the GPU
        copy_ms = _cupy_elapsed_ms(lambda: [cp.asarray(h) for h in chunks]) / NCHUNKS
        host_ms = 0.0
        import cupyx

        poison_h = cupyx.empty_pinned((ROWS, COLS), dtype=np.float32)  # what copy_stream's next user copies
        poison_h[...] = math.nan
        for trial, name in enumerate(("slow copies", "slow computes", "earlier work"), start=1):
            chunks = _pinned_chunks(cp, base, trial)
            compute_ms = max(4 * copy_ms, 4 * host_ms, 2.0) if name == "slow computes" else 0.0
            cp.cuda.Device().synchronize()
            called_on.clear()
            if name == "slow copies":
                cupy_sleep(WINDOW_MS / 1e3, copy_stream)
            if name == "earlier work":  # the current stream still reads `victim` when its memory is freed
                cp.get_default_memory_pool().free_all_blocks()
                victim = cp.empty((ROWS, COLS), dtype=cp.float32)
                victim.set(base)
                cupy_sleep(WINDOW_MS / 1e3)
                earlier = victim.sum(axis=1)
                del victim
            t0 = time.perf_counter()
            got = pipelined(chunks, compute, copy_stream)
            call_ms = (time.perf_counter() - t0) * 1e3
            if name == "slow copies":
                host_ms = call_ms / NCHUNKS
            junk = []
            if name == "slow computes":  # copy_stream's next user: the same sizes again
                with copy_stream:
                    junk = [cp.asarray(poison_h) for _ in range(NCHUNKS)]
            cp.cuda.Device().synchronize()
            del junk
            ex.expect(len(called_on) == NCHUNKS and all(st == current for st in called_on),
                      f"compute was called {len(called_on)} times, on "
                      f"{sorted({str(st) for st in called_on}) or 'no stream'}; expected {NCHUNKS} calls, all on "
                      f"the current stream {current}",
                      "call compute(x) once per chunk, outside any `with copy_stream:` block")
            bad = _wrong_chunks(got, chunks, cp)
            ex.expect(not isinstance(bad, str), str(bad), "return compute(x) of every chunk, in order")
            if name == "slow copies":  # copy_stream is busy for WINDOW_MS: a host waiting for a copy waits that long
                ex.expect(call_ms < WINDOW_MS / 2,
                          f"with copy_stream busy for {WINDOW_MS:.0f} ms, your function returned after "
                          f"{call_ms:.0f} ms: the host waited for the GPU",
                          "order the streams on the GPU only (events and wait_event); synchronize(), asnumpy(), "
                          ".get() and float() make the host wait")
            hints = {
                "slow copies": "a compute read its buffer before the copy into it was done: record an event on "
                               "copy_stream after each copy, and make the current stream wait for it",
                "slow computes": "a buffer was overwritten while a compute still read it: CuPy has no "
                                 "record_stream, so memory allocated on copy_stream and freed while the current "
                                 "stream still uses it is handed out again on copy_stream. Allocate the buffers "
                                 "on the current stream, or keep them and make copy_stream wait for the current "
                                 "stream before they are freed",
                "earlier work": "",
            }
            ex.expect(not bad, f"with {name}, the results of chunks {bad} are wrong",
                      hints[name] or hints["slow copies"])
            if name == "earlier work":
                ex.expect(np.array_equal(cp.asnumpy(earlier), base.sum(axis=1)),
                          "your copies overwrote memory that earlier work on the current stream was still reading",
                          "buffers allocated on the current stream may reuse memory that the current stream's "
                          "earlier work still reads: make copy_stream wait for the current stream (an event "
                          "recorded on it) before the first copy")

        # Faster: computes as long as a copy (or as two chunks of the host's work, if longer).  One after
        # the other, each chunk costs copy + compute; overlapped, the copy of chunk i+1 hides behind
        # compute i, which saves a copy per chunk but the first.  The answer must save at least half of that.
        chunks, compute_ms = _pinned_chunks(cp, base, 9), max(copy_ms, 2 * host_ms)
        ex.expect_saving(_cupy_elapsed_ms, lambda: sequential(chunks),
                         lambda: pipelined(chunks, compute, copy_stream),
                         saving_ms=(NCHUNKS - 1) * min(copy_ms, compute_ms), tries=TRIES,
                         describe=("copying then computing one chunk at a time", "the copies with the computes"),
                         hint="queue the copy of chunk i+1 on copy_stream before compute(chunk i) (or all copies "
                              "first), and never make the host wait")


register(Exercise(NOTEBOOK, "pipelined", check_pipelined, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 4: which stream does each line run on? (no GPU needed)
# ------------------------------------------------------------------------------------------
STREAM_PROGRAM = """\
a, b = cp.cuda.Stream(), cp.cuda.Stream()
x = cp.ones(3)          # k1
with a:
    y = x * 2           # k2
    b.use()
    z = y + 1           # k3
w = z * 3               # k4
b.use()
v = w - 1               # k5
with a:
    u = v / 2           # k6
t = u + 4               # k7
"""
STREAM_ANSWER = {"k1": "null", "k2": "a", "k3": "b", "k4": "null", "k5": "b", "k6": "a", "k7": "null"}


def check_which_stream(which_stream: Callable[[], dict[str, str]]) -> None:
    """which_stream() must say, for each kernel k1..k7 of STREAM_PROGRAM (run in a fresh thread, so
    it starts on the null stream), the stream it is queued on: "null", "a" or "b"."""
    with exercise("which_stream") as ex:
        got = which_stream()
        ex.expect(isinstance(got, dict) and set(got) == set(STREAM_ANSWER),
                  f"returned {got!r}; expected a dict with the keys {sorted(STREAM_ANSWER)}",
                  'map each kernel to "null", "a" or "b", e.g. {"k1": "null", ...}')
        wrong = [kernel for kernel, want in STREAM_ANSWER.items() if got[kernel] != want]
        after_with = [kernel for kernel in wrong if kernel in ("k4", "k7")]  # the first line after a `with` block
        ex.expect(not wrong, f"{len(wrong)} of the {len(STREAM_ANSWER)} kernels are on another stream than you said",
                  ("look again at what a `with` block makes current when it ends: CuPy keeps a stack of the streams "
                   "of the `with` blocks, which `use()` never changes" if after_with else
                   "inside `with a:` work goes to a until a `use()` changes the current stream; a `use()` lasts "
                   "until the next change"))


register(Exercise(NOTEBOOK, "which_stream", check_which_stream))
