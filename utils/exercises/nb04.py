"""Checks for the exercises of notebook 04 (CUDA streams in CuPy, and CuPy beside PyTorch): a sum on a worker
stream between a producer and its caller, a CuPy kernel on the caller's PyTorch stream, a pipeline of copies and
computes, and a program written with PyTorch's `with` in mind, made to run as meant on CuPy.

Each check is a property over generated cases (utils/exercises/properties.py), and each GPU check calls the
answer from every kind of caller (utils/exercises/streams.py: the null stream, `with s:`, `s.use()`, a busy
stream; PyTorch's default stream, `with torch.cuda.stream(s):`, `set_stream`).  Every race window is wide on
purpose: the checks keep streams busy with `utils.cupy_sleep` (CuPy) or `utils.gpu_sleep` (PyTorch), kernels
that spin for a known time, so an answer that forgets a wait, or queues work on another stream than the task
says, reads the wrong data (or gets it late) every time, not once in a thousand runs.  Each case uses data of
its own, so a stale result (left in memory by an earlier case) is never right.

Without a GPU and CuPy, exercises 1 to 3 say what a GPU would check, and check nothing: every value they
compare is computed by CuPy on a GPU, and every mistake they look for is an order of streams.  Exercise 4 runs
anywhere: its reference runs the answer's program on CuPy's own stream stack where CuPy can use a GPU, and follows the
rules of CuPy 14.2's cupy/cuda/stream.pyx elsewhere (tests/test_exercises_04.py holds the two together).
"""

from __future__ import annotations

import contextvars
import itertools
import math
import sys
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any, TypeVar

import numpy as np
import torch
from torch.overrides import TorchFunctionMode, resolve_name

from ..device import has_cuda, has_cupy, require_cuda, require_cupy
from ..timing import cupy_sleep, gpu_sleep, timer
from . import (
    Exercise,
    ExerciseFailed,
    Findings,
    LeftForGPU,
    exercise,
    is_stub,
    reference,
    register,
    settings,
    what_returned,
)
from .properties import for_all, shown, st
from .streams import (
    CUPY_CALLERS,
    CUPY_CALLERS_MORE,
    TORCH_CALLERS,
    calibrate_sleeps,
    cupy_caller,
    cupy_callers,
    late_at_each_entry,
    torch_caller,
    torch_callers,
    widened,
)

NOTEBOOK = "04_streams_cupy"
R = TypeVar("R")
WINDOW_MS = 60.0  # how long the checks keep a stream busy (at first: see TRIES)
TRIES = 3  # a case that a slow or busy host spoiled is tried again, with windows twice as long; a wrong answer fails
GPU_CASES = 4  # generated cases of a GPU check, besides its chosen ones (every kind of caller): each costs ~0.3 s
GPU_BUDGET_S = 3.0  # seconds of shrinking a GPU check's failing case
KEPT_CALLS = 65  # calls in a row whose results the caller keeps, all compared at the end: more than any ring of outputs
# chunks of pipelined's fourth kept call: round 23's adversary kept a ring of 128 buffers, more than 65 chunks in all
KEPT_CHUNKS = 1024
# The process-wide settings an answer has no reason to change (round 23's adversary left the recursion limit raised,
# threading's stack size, CuPy's allocator switched, grad mode off, and passed: nb04 watched none): read before each
# call of an answer (exercise 4: before and after each run of thousands of calls), put back after it, and a change
# FAILs, naming it (`settings.keeping`)
KEPT_SETTINGS = tuple(dict.fromkeys((*settings.BASIC, *settings.EVERY)))  # every one (round 24's generated test)
# On a GPU, the settings read before the widened and timed work: BASIC and the process's (on the H200, with every
# setting read there, the solution of cupy_scale_on_current_stream was taken for PyTorch work and pipelined's for too
# slow, 2026-11-30)
KEPT_SETTINGS_GPU = (*settings.BASIC, *settings.PROCESS, *settings.CUPY)
# Every kind of CuPy caller the GPU checks call from: CUPY_CALLERS (drawn, and chosen), and CUPY_CALLERS_MORE (chosen
# only: round 26's adversary of 04 made the caller's stream current again only when it was not the null stream, and
# passed: no caller had the null stream current under another stream on CuPy's stack)
ALL_CUPY_CALLERS = {**CUPY_CALLERS, **CUPY_CALLERS_MORE}


def _shown_filter(f: tuple[Any, ...]) -> str:
    return (f"({f[0]!r}, message={getattr(f[1], 'pattern', f[1])!r}, {getattr(f[2], '__name__', f[2])}, "
            f"module={getattr(f[3], 'pattern', f[3])!r})")


def _filters_kept_in_order(ex: Any, yours: Callable[..., R]) -> Callable[..., R]:
    """The answer as the GPU checks call it (inside `settings.keeping`): warnings.filters in another order after the
    call FAILs, and is put back.  The settings' warnings watch reads the filters that take a whole category; a filter
    added again (filterwarnings and simplefilter put it first, even where it is already in the list) goes ahead of the
    filters that came before it, and silences what they let through: round 26's adversary of 04 added
    ("ignore", DeprecationWarning), which Python's defaults hold already, and passed (outside pytest it is the first
    whole-category filter: the watch read the same ones), where the process's deprecations of __main__ were shown.
    A library's own new filters (an import's) leave the order of the others as it was."""

    def call(*args: Any, **kwargs: Any) -> R:
        before = list(warnings.filters)
        try:
            return yours(*args, **kwargs)
        finally:
            after = list(warnings.filters)
            if after != before:
                now = [f for f in after if f in before]
                was = [f for f in before if f in after]
                if now != was:
                    moved = next(f for f, g in zip(now, was) if f != g)
                    warnings.filters[:] = [f for f in after if f not in before] + before  # type: ignore[index]
                    mutated = getattr(warnings, "_filters_mutated", None) or getattr(
                        __import__("_warnings"), "_filters_mutated", None)
                    if mutated is not None:
                        mutated()
                    ex.expect(False, f"{ex.name} left warnings.filters in another order after it returned: the "
                                     f"filter {_shown_filter(moved)} now comes before filters it came after (adding "
                                     "a filter again puts it first)", settings.HINT)

    return call


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


@contextmanager
def _queued_on(cp: Any, stream: Any) -> Iterator[None]:
    """Queue the block's CuPy work on `stream`, and leave CuPy's current stream and its stack of `with` blocks as
    they were (use() and back: a `with` block would end on the stack's top, not on a caller's use())."""
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        yield
    finally:
        before.use()


def _stack_top(cp: Any) -> Any:
    """The stream that a `with` block entered now would end on (the top of CuPy's stack); the current stream
    stays as it is."""
    current = cp.cuda.get_current_stream()
    with cp.cuda.Stream.null:
        pass
    top = cp.cuda.get_current_stream()
    current.use()
    return top


def _in_a_fresh_thread(fn: Callable[[], R]) -> R:
    """fn() in a new thread, which starts on the default streams with a stack of `with` blocks of its own (CuPy's
    and PyTorch's current streams belong to a thread): whatever an answer leaves current, or on CuPy's stack, ends
    with the thread, and the next case starts clean.  The check's context (its references) goes along."""
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


def _seed(*parts: object) -> int:
    return zlib.crc32(repr(parts).encode())


def _shapes(largest: int) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes of rank 0 to 2 with at most `largest` elements: sizes of 0 and 1, odd ones, large ones."""
    small = st.integers(0, 9)
    return st.one_of(st.tuples(), st.tuples(st.one_of(small, st.integers(0, largest))),
                     st.tuples(st.one_of(small, st.integers(0, 1024)), small),
                     st.tuples(small, st.integers(0, largest // 16)))


# ------------------------------------------------------------------------------------------
# Exercise 1: a sum on a worker stream, between a producer and its caller
# ------------------------------------------------------------------------------------------
# (the kind of caller, the shape of x, the seed of its values, what one of them is instead: "" (nothing), "nan", "inf",
# x's layout: "contiguous", or a view that is not: "transposed" (x.T of an array of the reversed shape), "strided"
# (every other element of its last dimension); round 66's adversary: x.ravel() before the wait for `ready` (a copy of
# a non-contiguous x, queued on the caller's stream, reads x before the producer's write) passed: every x was
# contiguous, where ravel() copies nothing)
SumCase = tuple[str, tuple[int, ...], int, str, str]
LAYOUTS = ("contiguous", "transposed", "strided")
SUM_LARGEST = 2**20  # elements of x (float64: 8 MiB)
# One value of x made NaN or an infinity, in some cases: x.sum() propagates both (round 23's adversary summed with
# cp.nansum and passed: x held no NaN once written)
SPECIALS = {"": None, "nan": math.nan, "inf": math.inf}


def _sum_cases() -> st.SearchStrategy[SumCase]:
    return st.tuples(cupy_callers(), _shapes(SUM_LARGEST), st.integers(0, 2**32 - 1), st.sampled_from(list(SPECIALS)),
                     st.sampled_from(LAYOUTS))


def _describe_sum(case: SumCase) -> str:
    kind, shape, _, special, layout = case
    holding = f" holding a {'NaN' if special == 'nan' else 'value inf'} among its values" if special else ""
    view = {"contiguous": "", "transposed": ", a transposed view", "strided": ", a view of every other element"}[layout]
    return f"sum_on_stream(x of shape {shape}{view}{holding}, ready, s), called from {ALL_CUPY_CALLERS[kind]}"


def _laid_out(cp: Any, shape: tuple[int, ...], layout: str) -> Any:
    """x, NaN everywhere, of `shape` and `layout` (`SumCase`): a view where the layout is not contiguous."""
    if layout == "transposed":
        return cp.full(shape[::-1], math.nan).T
    if layout == "strided" and shape:
        return cp.full((*shape[:-1], 2 * shape[-1]), math.nan)[..., ::2]
    return cp.full(shape, math.nan)


def _same_number(a: float | None, b: float) -> bool:
    """a == b, NaN equal to NaN."""
    return a is not None and (a == b or (math.isnan(a) and math.isnan(b)))


@dataclass
class _SumRun:
    result: Any  # what sum_on_stream returned
    spoiled: bool  # the host took too long for the windows: try again with longer ones
    waited: bool  # the call kept the host past half a window, or past the producer's event: it waited for the GPU
    caller: Any  # the caller's stream
    current_after: Any  # CuPy's current stream right after the call
    top_before: Any  # the top of CuPy's stack of `with` blocks before the call
    top_after: Any  # and after it
    seen: float | None  # what the caller's stream read from the result, right after the call
    in_time: float | None  # what a third stream read from it once a sum queued on s had run (and nothing later)
    s_free_ms: float  # when s's earlier work ended, on the GPU's clock (from the call)
    caller_on_ms: float  # when the caller's stream went on past what the answer made it wait for
    aliases_x: bool  # the result is a view of x (its memory is x's, which the producer writes again)


def _one_number(cp: Any, x: object) -> bool:
    return isinstance(x, cp.ndarray) and x.size == 1 and x.dtype.kind in "iuf"


def _sum_run(cp: Any, yours: Callable, case: SumCase, x: Any, source: Any, s: Any, producer: Any, probe: Any,
             window_ms: float) -> _SumRun:
    """One call of yours(x, ready, s) from a caller of `case`'s kind, with every other stream late.

    On the GPU, from the moment the call comes (W = window_ms): the producer writes x only at 2W (x holds NaN until
    then) and records `ready`; s is busy with earlier work until 2.5W, after `ready`; the caller's stream, when busy,
    and the null stream, when it is not the caller's, are busy until 4W; any other stream the answer enters or uses
    starts 4W late (`widened`); and each time the answer enters s (`with s:`, `s.use()`) or records an event on it,
    s spins for W/4 (`late_at_each_entry`).  A sum queued on s after `ready` is written after 2.5W and by 3.25W (three
    entries or records): a probe stream reads it at 3.5W (`in_time`), and a caller's stream that is not busy goes on
    past its wait for the sum after 2.5W (the GPU's clock, CUDA events: `s_free_ms`, `caller_on_ms`).  A sum queued
    on a stream of the answer's own that waits for `ready` only, however the stream is handed to the kernel, lets
    that caller go on at about 2W; one queued on a late stream is written at 4W or later; one queued on a stream that
    is free before 2W (not s) and did not wait for `ready` reads NaN (a sum queued on s without that wait runs after
    s's earlier work, when x is written: `_sums_kept` shows that one, where x is written again after the call); and
    a caller's stream that did not wait for the sum reads it before the sum ran: before 2.5W,
    or, if it waited for an event recorded on s before the sum was queued, W/4 before.  (A probe that reads the
    result between 2W and 2.5W could wait, on the GPU, behind other streams' work: with more streams than CUDA's
    hardware queues, streams share them.  An event can only come later for that, never earlier.)
    """
    kind = case[0]
    w = window_ms / 1e3
    with _queued_on(cp, producer):
        x.fill(math.nan)  # unwritten again (an earlier try wrote it)
    cp.cuda.Device().synchronize()
    with cupy_caller(kind, busy_ms=4 * window_ms) as caller:
        c = caller.stream
        t0 = time.perf_counter()
        zero = probe.record()  # the probe is idle: this is the GPU's time of the call, near enough
        with _queued_on(cp, producer):
            cupy_sleep(2 * w)
            cp.copyto(x, source)  # the producer writes x...
            ready = producer.record()  # ...and says so
        with _queued_on(cp, s):
            cupy_sleep(2.5 * w)  # s's earlier work, which ends after `ready`
        s_free = s.record()
        if c != cp.cuda.Stream.null:
            with _queued_on(cp, cp.cuda.Stream.null):
                cupy_sleep(4 * w)
        seen = cp.full((), math.inf)  # the caller's and the probe's buffers, allocated now: none after the call
        with _queued_on(cp, probe):
            in_time = cp.full((), math.inf)
        top_before = _stack_top(cp)
        with widened(4 * window_ms, spare=(c, s)), late_at_each_entry(window_ms / 4, (s,)):
            called = time.perf_counter()
            result = yours(x, ready, s)
            host_ms = (time.perf_counter() - called) * 1e3
        waited = ready.done or host_ms > window_ms / 2  # a wait for any stream, the producer's or not
        current_after = cp.cuda.get_current_stream()
        top_after = _stack_top(cp)
        c.use()  # the caller's next work, on its own stream whatever the answer left current
        usable = _one_number(cp, result)
        if usable:
            cp.copyto(seen, result.reshape(()), casting="unsafe")
        caller_on = c.record()  # the caller's stream, past every wait the answer queued on it
        spoiled = time.perf_counter() - t0 > w / 2
        if usable:
            with _queued_on(cp, probe):
                cupy_sleep(max(0.0, 3.5 * w - (time.perf_counter() - t0)))
                cp.copyto(in_time, result.reshape(()), casting="unsafe")
    cp.cuda.Device().synchronize()
    return _SumRun(result, spoiled, waited, c, current_after, top_before, top_after,
                   float(seen) if usable else None, float(in_time) if usable else None,
                   cp.cuda.get_elapsed_time(zero, s_free), cp.cuda.get_elapsed_time(zero, caller_on),
                   usable and bool(cp.may_share_memory(result, x)))


def check_sum_on_stream(sum_on_stream: Callable[[Any, Any, Any], Any]) -> None:
    """sum_on_stream(x, ready, s) must queue x.sum() on stream s, after the producer's event `ready`, and return it
    as a CuPy array that work on the caller's current stream may use at once; without making the host wait, and
    with the caller's current stream current again at the end, whatever it is and however the caller made it so.

    Called from every kind of caller (utils/exercises/streams.py), on x of every shape (0-d, empty, odd, up to
    2**20 elements), with the producer, s, the caller's stream, the null stream and any stream of the answer's
    own late by different amounts (`_sum_run`): the values read on the caller's stream and by a third stream,
    the time the call took on the host, and CuPy's current stream and stack after the call show each mistake.
    """
    if _left_for_a_gpu("sum_on_stream", "CuPy on a GPU: the sum, queued on s after the producer's event while s, "
                                        "the caller's stream and the null stream are busy, read right away on the "
                                        "caller's stream from every kind of caller, no wait of the host, and the "
                                        "caller's current stream current again after the call"):
        return
    with exercise("sum_on_stream") as ex:
        cp = _cupy("check_sum_on_stream")
        yours = settings.keeping(ex, _filters_kept_in_order(ex, ex.answer(sum_on_stream)), KEPT_SETTINGS_GPU)
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        s, producer, probe = (cp.cuda.Stream(non_blocking=True) for _ in range(3))
        warm = cp.arange(5, dtype=cp.float64)  # a first call: CuPy compiles the answer's kernels, which holds the host
        _in_a_fresh_thread(lambda: yours(warm, cp.cuda.Stream.null.record(), s))
        cp.cuda.Device().synchronize()

        def holds(case: SumCase) -> None:
            _, shape, seed, special, layout = case
            values = _sum_values(shape, seed, special)
            want = float(values.sum())  # exact in any order (_sum_values)
            source = cp.asarray(values)
            with _queued_on(cp, producer):
                x = _laid_out(cp, shape, layout)  # x's memory is the producer's, as a data loader's would be
            for k in range(TRIES):
                window_ms = WINDOW_MS * 2**k
                run = _in_a_fresh_thread(partial(_sum_run, cp, yours, case, x, source, s, producer, probe, window_ms))
                if not run.spoiled:
                    break
            _judge_sum(ex, cp, case, run, want)

        shapes = {"null": (1000,), "with": (37, 29), "use": (), "busy": (SUM_LARGEST,)}
        layouts = {"null": "contiguous", "with": "transposed", "use": "contiguous", "busy": "strided"}
        every_caller = [(kind, shapes[kind], _seed("sum", kind), "", layouts.get(kind, "strided"))
                        for kind in CUPY_CALLERS]
        every_caller += [("with", (3, 0), _seed("sum", "empty"), "", "contiguous"),
                         ("null", (1,), _seed("sum", "one"), "", "contiguous"),
                         ("use", (1000,), _seed("sum", "nan"), "nan", "strided"),
                         ("with", (37, 29), _seed("sum", "inf"), "inf", "contiguous"),
                         ("null_in_with", (1000,), _seed("sum", "null in with"), "", "contiguous")]
        for_all(ex, _sum_cases(), holds, examples=GPU_CASES, chosen=every_caller, budget_s=GPU_BUDGET_S,
                describe=_describe_sum)
        _sums_kept(ex, cp, yours, s, producer)


def _sum_values(shape: tuple[int, ...], seed: int, special: str = "") -> np.ndarray:
    """x's values: multiples of 2**-10 in [-1024, 1024), so that every partial sum of up to 2**20 of them is exact in
    float64 (at most 40 significant bits), in any order; a sum in float32 rounds, one in integers drops fractions.
    With a `special`, one of them (where x has any) is NaN or inf instead (`SPECIALS`)."""
    rng = np.random.default_rng(seed)
    values = np.array(rng.integers(-2**20, 2**20, shape) / 1024, dtype=np.float64)  # 0-d: an array too
    if SPECIALS[special] is not None and values.size:
        values.flat[int(rng.integers(values.size))] = SPECIALS[special]
    return values


def _sums_kept(ex: Any, cp: Any, yours: Callable, s: Any, producer: Any) -> None:
    """KEPT_CALLS calls in a row, from a fresh thread (the null stream, late by a window when they come), every result
    kept while the later calls run: the first two on two x's already written, each later one on one of the same two
    x's, written again by the producer once the caller's stream is done with the sums that read it (a data loader that
    reuses its buffers).  Once the GPU is done, each result must still hold its own sum (all differ): a result that a
    later call writes again (one output for every call, a ring of fewer than KEPT_CALLS, one per input array) is not
    the caller's to keep, and neither is memory that the answer freed while the caller's stream still had to read it
    (CuPy's pool, emptied of free blocks first, may hand it to the next call's work on s at once, and the caller's
    stream reads only after its window).  A sum that did not wait for `ready` reads the values that its x held
    before the producer wrote it again: an earlier call's sum.

    The caller's earlier work, after its window, writes a 0-d float64 array that the caller freed just before the
    calls: a result allocated on the caller's stream (the first such allocation gets that memory from CuPy's pool)
    and written on s, which does not wait for the caller's stream, is overwritten by that earlier work."""
    sources, wants = [], []
    for k in range(KEPT_CALLS):
        values = _sum_values((1000,), _seed("sum", "kept", k))
        with _queued_on(cp, producer):
            sources.append(cp.asarray(values))
        wants.append(float(values.sum()))
    with _queued_on(cp, producer):
        xs = [sources[0].copy(), sources[1].copy()]
    cp.cuda.Device().synchronize()

    def in_a_row() -> tuple[list[float | None], int, int]:
        caller = cp.cuda.get_current_stream()
        cp.get_default_memory_pool().free_all_blocks()
        cupy_sleep(WINDOW_MS / 1e3)  # the caller's stream reads each result only after the later calls
        earlier = cp.full((), -1.0)  # the caller's earlier work writes memory of a result's size, after its window...
        del earlier  # ...freed before the calls: CuPy's pool hands it to the next allocation on the caller's stream
        results = []
        for k, source in enumerate(sources):
            x = xs[k % 2]
            if k >= 2:  # the producer writes x again once the caller's stream has waited for the sums that read it
                producer.wait_event(caller.record())
                with _queued_on(cp, producer):
                    cp.copyto(x, source)
            results.append(yours(x, producer.record(), s))
        cp.cuda.Device().synchronize()
        values = [float(r.reshape(())) if _one_number(cp, r) else None for r in results]
        pool = cp.get_default_memory_pool()  # the results' memory, given back once the caller drops them (below)
        held, owned = pool.used_bytes(), sum(r.nbytes for r in results if _one_number(cp, r))
        del results
        return values, owned, held - pool.used_bytes()

    got, owned, freed = _in_a_fresh_thread(in_a_row)
    wrong = [k for k, (have, want) in enumerate(zip(got, wants)) if have != want]
    stale = [k for k in wrong if got[k] in wants[k % 2:k:2]]  # the sum of values its x held before (an earlier x)
    first = wrong[0] if wrong else 0
    ex.expect(not wrong,
              f"sum_on_stream called {KEPT_CALLS} times in a row (x of shape (1000,), from the null stream, late, its "
              f"earlier work still writing memory it had just freed; from the third call on, each on one of the first "
              f"two x's, written again by the producer), every result kept: once the GPU was done, the results of "
              f"{len(wrong)} calls held other values (call {first + 1}: {got[first]}, expected {wants[first]})",
              "each call's sum read the values its x held before the producer wrote it again: the sum ran before "
              "the producer's event `ready`. Which stream must wait for it, before the sum is queued?" if stale else
              "the caller keeps your result as long as it likes: return an array that no later call writes again, "
              "whatever x it gets, and whose memory nothing else may take while the caller's stream still has to "
              "read it (CuPy's pool hands freed memory back to its stream at once: CuPy has no record_stream); and "
              "memory from the caller's stream's pool may still be in use by work queued there, which s does not "
              "wait for")
    # A ring of outputs larger than KEPT_CALLS (round 23's adversary: 256) writes no kept result again here, but keeps
    # every output it returned: once the caller drops the results, their memory does not go back to CuPy's pool.
    ex.expect(freed >= owned,
              f"sum_on_stream called {KEPT_CALLS} times in a row, every result kept, then all dropped by the caller: "
              f"{freed} bytes went back to CuPy's pool, fewer than the results' {owned}: your function keeps the "
              "arrays it returned",
              "the result is the caller's, as long as it likes and no longer: an output that your function keeps and "
              "writes again (in turn with others, however many) changes a result that a caller may still hold. "
              "Return the new array that each sum gives")


def _judge_sum(ex: Any, cp: Any, case: SumCase, run: _SumRun, want: float) -> None:
    call, result = _describe_sum(case), run.result
    if not _one_number(cp, result):
        on_the_host = isinstance(result, (int, float, np.number, np.ndarray))
        ex.expect(False, f"{call} returned {what_returned(result)} {shown(result, 40)}, expected a CuPy array "
                         "holding the sum",
                  "a number on the host exists only once the host has waited for the GPU: return the CuPy array "
                  "that .sum() gives (a 0-d array)" if on_the_host else
                  "return the CuPy array that .sum() gives (a 0-d array)")
    ex.expect(result.dtype == np.float64,
              f"{call} returned a CuPy array of dtype {result.dtype}, expected x's dtype, float64",
              "x.sum() keeps x's dtype: a narrower float rounds the sum, an integer type drops the fractions")
    ex.expect(not run.aliases_x, f"{call} returned a view of x (x's own memory)",  # round 23's adversary: x.reshape(())
              "x is the producer's: it writes x again, and the caller keeps your result as long as it likes. Return "
              "the new array that the sum gives, whatever x's size")
    ex.expect(not run.waited,
              f"{call}: with every stream late, the call kept the host waiting for the GPU",
              "order the streams on the GPU only (events and wait_event): synchronize(), float(), .get() and "
              "asnumpy make the host wait")
    ex.expect(run.current_after == run.caller,
              f"{call}: your function left {run.current_after} as CuPy's current stream instead of the caller's "
              f"{run.caller}",
              "a `with` block ends on the stream below it on CuPy's stack; use() makes a stream current without "
              "touching that stack, so a caller that used use() is not on it. What can your function read when it "
              "starts, and make current again before it returns?")
    ex.expect(run.top_after == run.top_before,
              f"{call}: your function changed CuPy's stack of `with` blocks (a `with` block entered now would end "
              f"on {run.top_after}, not on {run.top_before})",
              "leave every `with` block you enter, once: enter and exit belong together")
    if not _same_number(run.seen, want):
        unwritten = run.seen is not None and math.isnan(run.seen)
        settled = run.seen is not None and _same_number(run.in_time, run.seen)  # a later reader read the same value
        ex.expect(False, f"{call}: the caller's stream read {run.seen} right after the call, expected {want}",
                  "NaN is what x held before the producer wrote it: the sum ran before the event `ready`. Which "
                  "stream must wait for it, before the sum is queued?" if unwritten else
                  "a third stream read the same value later: the sum itself differs from x.sum(), which is exact "
                  "here (x's values are multiples of 2**-10), and NaN or inf wherever x holds one (x.sum() propagates "
                  "both). What did your function sum, and in which dtype?"
                  if settled else
                  "the caller's stream read the result before the sum on s had written it: which stream must wait "
                  "for which, after the sum is queued?")
    ex.expect(case[0] == "busy" or run.caller_on_ms >= run.s_free_ms,  # a busy caller goes on at 4W anyway
              f"{call}: the caller's stream had its sum {run.s_free_ms - run.caller_on_ms:.1f} ms before s's earlier "
              f"work was done: it did not run on s",
              "queue the sum on s itself: work queued on s runs after what s already holds, work on any other "
              "stream does not, whatever events it waits for")
    ex.expect(_same_number(run.in_time, want),
              f"{call}: the sum was not written when a sum queued on s would have been, with the caller's stream, "
              f"the null stream and any stream of your own late (it read {run.in_time})",
              "the sum must run on s as soon as the producer's `ready` and s's earlier work allow: queue it on s "
              "itself, whatever stream the caller is on, and make s wait for `ready` only (the caller's stream "
              "waits for the sum, not the other way round)")


register(Exercise(NOTEBOOK, "sum_on_stream", check_sum_on_stream, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 2: a CuPy kernel on the caller's PyTorch stream
# ------------------------------------------------------------------------------------------
# (PyTorch caller, CuPy's current stream, the caller drops t after the call, the shape of t, t transposed, factor,
# the seed of t's values, what one of them is instead: `SPECIALS`)
ScaleCase = tuple[str, str, bool, tuple[int, ...], bool, float, int, str]
SCALE_LARGEST = 2**20  # elements of t (float32: 4 MiB)
FACTORS = (3.0, -0.5, 0.25, 2.0, 1.0, -1.0, 0.0)  # exact in float32 on t's values (`_scale_values`)
# Not float32 numbers, in chosen cases: factor * t multiplies by float32(factor) in float32, and a product in float64
# rounded back differs in about a fifth of the elements (round 32's and round 35's adversaries returned it, and PASSed
# on the exact factors alone)
INEXACT_FACTORS = (0.1, 1 / 3)


def _scale_cases() -> st.SearchStrategy[ScaleCase]:
    small = st.integers(0, 9)  # 0: an empty t (round 26's adversary returned an empty t itself, and passed)
    # a 0-d t too (round 66's adversary: PyTorch's own t * factor for a 0-d t only passed: no shape was 0-d)
    shape = st.one_of(st.tuples(), st.tuples(st.one_of(small, st.integers(1, SCALE_LARGEST))),
                      st.tuples(st.one_of(small, st.integers(1, 1024)), st.one_of(small, st.integers(1, 1024))))
    return st.tuples(torch_callers(), cupy_callers(), st.booleans(), shape, st.booleans(), st.sampled_from(FACTORS),
                     st.integers(0, 2**32 - 1), st.sampled_from(list(SPECIALS)))


def _scale_values(shape: tuple[int, ...], seed: int, special: str = "") -> torch.Tensor:
    """t's values: multiples of 1/8 in [-1024, 1024) (fractions: round 23's adversary truncated t to integers, and
    passed on whole numbers), exact in float32 times every factor of FACTORS; with a `special`, one of them is NaN or
    inf."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randint(-2**13, 2**13, shape, generator=generator).float() / 8
    value = SPECIALS[special]
    if value is not None and values.numel():
        values.view(-1)[int(torch.randint(values.numel(), (), generator=generator))] = value
    return values


def _same_values(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Where a == b, NaN equal to NaN (elementwise)."""
    return (a == b) | (a.isnan() & b.isnan())


def _describe_scale(case: ScaleCase) -> str:
    torch_kind, cupy_kind, drops, shape, transposed, factor, _, special = case
    t = f"t of shape {shape}{' (a transposed view)' if transposed and len(shape) == 2 else ''}"
    t += f" holding a {'NaN' if special == 'nan' else 'value inf'} among its values" if special else ""
    return (f"cupy_scale_on_current_stream({t}, {factor}) called from {TORCH_CALLERS[torch_kind]}, with CuPy's "
            f"current stream {ALL_CUPY_CALLERS[cupy_kind]}{', and t dropped right after the call' if drops else ''}")


# What an answer may ask of PyTorch: shapes, views, memory and the hand-overs; no arithmetic (CuPy computes).
_HAND_OVERS = {
    "torch.Tensor.__dlpack__", "torch.Tensor.__dlpack_device__", "torch.Tensor.__cuda_array_interface__.__get__",
    "torch.from_dlpack", "torch.device", "torch.as_tensor", "torch.asarray", "torch.empty", "torch.empty_like",
    "torch.empty_strided",
    "torch.zeros", "torch.zeros_like", "torch.ones", "torch.ones_like", "torch.full", "torch.full_like",
    "torch.Tensor.new_empty", "torch.Tensor.new_zeros", "torch.Tensor.data_ptr", "torch.Tensor.size",
    "torch.Tensor.stride", "torch.Tensor.dim", "torch.Tensor.numel", "torch.Tensor.nelement",
    "torch.Tensor.storage_offset", "torch.Tensor.element_size", "torch.Tensor.is_contiguous",
    "torch.Tensor.is_floating_point", "torch.Tensor.get_device", "torch.Tensor.__len__", "torch.Tensor.contiguous",
    "torch.Tensor.view", "torch.Tensor.view_as", "torch.Tensor.reshape", "torch.Tensor.flatten",
    "torch.Tensor.ravel", "torch.Tensor.detach", "torch.Tensor.__getitem__", "torch.Tensor.clone",
    "torch.Tensor.copy_", "torch.Tensor.to", "torch.Tensor.float", "torch.Tensor.cuda", "torch.Tensor.record_stream",
    "torch.Tensor.untyped_storage", "torch.Tensor.__repr__", "torch.Tensor.__format__", "torch.Tensor.__hash__",
    "torch.Tensor.is_conj", "torch.Tensor.is_neg",
    # grad mode (torch.no_grad(), set_grad_enabled) computes nothing; left changed, `settings.keeping` names it (round
    # 23's adversary left it off, and the FAIL said "PyTorch computed")
    "_set_grad_enabled", "torch._C._set_grad_enabled", "torch.set_grad_enabled",
    # views and copies: no arithmetic either
    *(f"torch{where}.{name}" for where in ("", ".Tensor") for name in ("permute", "transpose", "t", "squeeze",
                                                                        "unsqueeze", "swapaxes", "movedim", "clone")),
    "torch.Tensor.expand", "torch.Tensor.unflatten", "torch.Tensor.narrow", "torch.Tensor.select", "torch.tensor",
    "torch.Tensor.new_tensor", "torch.Tensor.new_full", "torch.Tensor.new_ones",
    *(f"torch.Tensor.{name}.__get__" for name in ("shape", "dtype", "device", "is_cuda", "ndim", "itemsize",
                                                  "nbytes", "requires_grad", "layout", "T", "mT", "data")),
}


class _PyTorchWork(TorchFunctionMode):
    """Notes the PyTorch functions an answer calls that compute (anything but `_HAND_OVERS`)."""

    def __init__(self) -> None:
        super().__init__()
        self.computed: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = resolve_name(func) or getattr(func, "__name__", repr(func))
        if name not in _HAND_OVERS:
            self.computed.append(name)
        return func(*args, **(kwargs or {}))


def _cupy_stream_of(cp: Any, stream: torch.cuda.Stream) -> Any:
    """A CuPy stream object for a PyTorch stream (the same CUDA stream), as in the lecture's section 8.2."""
    if hasattr(cp.cuda.Stream, "from_external") and hasattr(stream, "__cuda_stream__"):
        return cp.cuda.Stream.from_external(stream)
    return cp.cuda.ExternalStream(stream.cuda_stream)  # CuPy before 14


@dataclass
class _ScaleRun:
    out: Any  # what the answer returned
    t_ptr: int  # where t's elements are
    shares_t: bool  # the result is t, or a view of t's memory (an empty t has no address: its storage is compared)
    computed: list[str]  # PyTorch functions the answer computed with
    spoiled: bool  # the host took too long, or the result came late: try again with longer windows
    waited: bool  # the call kept the host past half a window, or past the producer's window: the host waited
    torch_after: Any  # PyTorch's current stream after the call
    cupy_moved: bool  # CuPy's current stream after the call is not the one before it
    stack_moved: bool  # the top of CuPy's stack of `with` blocks after the call is not the one before it
    seen: torch.Tensor | None  # what the caller's stream read from the result, after its next allocations
    input_after: torch.Tensor | None  # t, read at the end (when the caller kept it)
    late_ms: float  # how long after the producer's write the caller's next work ran
    caller: Any  # the caller's PyTorch stream


def _scale_run(cp: Any, yours: Callable, case: ScaleCase, source: torch.Tensor, window_ms: float) -> _ScaleRun:
    """One call of yours(t, factor) from `case`'s callers, queued right behind a producer on the caller's stream
    that spends `window_ms` on other work and then writes t (NaN until then).

    Every other stream is late by 3 windows: PyTorch's default stream (CuPy's null stream) when it is not the
    caller's, CuPy's current stream when it is not the caller's, and any stream that the answer queues PyTorch
    work on or enters with CuPy (`widened`).  CuPy work queued on any of them, however well ordered, makes the
    caller's next work late; CuPy work not ordered after the producer reads NaN.
    """
    torch_kind, cupy_kind, drops, shape, transposed, factor, *_ = case
    transposed = transposed and len(shape) == 2
    w = window_ms / 1e3
    torch.cuda.synchronize()
    cupy_before = cp.cuda.get_current_stream()
    kept = held = None
    with cupy_caller(cupy_kind, busy_ms=3 * window_ms) as cupy_side, torch_caller(torch_kind) as caller:
        c, other = caller.stream, cupy_side.stream
        if c != torch.cuda.default_stream():  # CuPy's null stream too
            gpu_sleep(3 * w, torch.cuda.default_stream())
        if other.ptr not in (c.cuda_stream, 0) and cupy_kind != "busy":  # (a busy one is busy already)
            with _queued_on(cp, other):
                cupy_sleep(3 * w)
        cupy_current = cp.cuda.get_current_stream()
        base = torch.full(shape[::-1] if transposed else shape, math.nan, device="cuda")  # on the caller's stream
        t = base.T if transposed else base
        gpu_sleep(w)
        written = torch.cuda.Event(enable_timing=True)
        t.copy_(source)
        written.record()
        seen = torch.full(source.shape, math.inf, device="cuda")  # the caller's buffer: no allocation after the call
        top_before = _stack_top(cp)
        t0 = time.perf_counter()
        with widened(3 * window_ms, spare=(c,)), _PyTorchWork() as pytorch_work:
            out = yours(t, factor)
        waited = written.query() or time.perf_counter() - t0 > w / 2  # a wait for any stream
        torch_after = torch.cuda.current_stream()
        cupy_moved = cp.cuda.get_current_stream() != cupy_current
        stack_moved = _stack_top(cp) != top_before
        torch.cuda.set_stream(c)  # the caller's next work, on its own stream
        t_ptr = t.data_ptr()
        shares_t = isinstance(out, torch.Tensor) and (
            out is t or (t_ptr != 0 and out.data_ptr() == t_ptr)
            or out.untyped_storage()._cdata == t.untyped_storage()._cdata)
        if drops:  # ...drops t, and takes memory of its size: PyTorch's, and CuPy's on the caller's stream
            del t, base
            held = [torch.full(shape, -1.0, device="cuda") for _ in range(2)]
            with _queued_on(cp, _cupy_stream_of(cp, c)):
                held += [cp.full(shape, -2.0, dtype=cp.float32) for _ in range(4)]
        else:
            kept = t
        usable = isinstance(out, torch.Tensor) and out.is_cuda and out.shape == source.shape
        if usable:
            seen.copy_(out)
        consumed = torch.cuda.Event(enable_timing=True)
        consumed.record()
        spoiled = time.perf_counter() - t0 > w / 2
    cupy_before.use()
    torch.cuda.synchronize()
    held = None
    late_ms = written.elapsed_time(consumed)
    input_after = kept.clone() if kept is not None else None
    return _ScaleRun(out, t_ptr, shares_t, pytorch_work.computed, spoiled or late_ms > window_ms / 2, waited,
                     torch_after, cupy_moved, stack_moved, seen if usable else None, input_after, late_ms, c)


def check_cupy_scale_on_current_stream(
    cupy_scale_on_current_stream: Callable[[torch.Tensor, float], torch.Tensor],
) -> None:
    """cupy_scale_on_current_stream(t, factor) must return factor * t, computed by CuPy (PyTorch computes nothing),
    as a new PyTorch tensor that work on PyTorch's current stream may read at once, with CuPy's work queued on that
    same stream, without making the host wait, and with both libraries' current streams as they were.

    Called from every kind of PyTorch caller with every kind of CuPy current stream (utils/exercises/streams.py),
    on tensors of odd and large shapes, transposed or not, behind a producer on the caller's stream and with
    every other stream late (`_scale_run`); the caller then drops t or keeps it.
    """
    if _left_for_a_gpu("cupy_scale_on_current_stream",
                       "CuPy and PyTorch on a GPU: from every kind of PyTorch caller and with CuPy's current stream "
                       "elsewhere, the values read on the caller's stream behind a slow producer, CuPy's work on "
                       "the caller's stream and not late behind any other, no wait of the host, no arithmetic in "
                       "PyTorch, both libraries' current streams left as they were, and the result's memory after "
                       "the caller drops its input"):
        return
    with exercise("cupy_scale_on_current_stream") as ex:
        cp = _cupy("check_cupy_scale_on_current_stream")
        yours = settings.keeping(ex, _filters_kept_in_order(ex, ex.answer(cupy_scale_on_current_stream)),
                                 KEPT_SETTINGS_GPU)
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        warm = torch.ones(SCALE_LARGEST, device="cuda")  # a first call: CuPy compiles its kernels, the pools fill
        torch.cuda.synchronize()
        _in_a_fresh_thread(lambda: yours(warm, 3.0))
        torch.cuda.synchronize()

        def holds(case: ScaleCase) -> None:
            *_, shape, _, factor, seed, special = case
            values = _scale_values(shape, seed, special)
            source, want = values.cuda(), (values * factor).cuda()
            for k in range(TRIES):
                window_ms = WINDOW_MS * 2**k
                run = _in_a_fresh_thread(partial(_scale_run, cp, yours, case, source, window_ms))
                if not run.spoiled:
                    break
            _judge_scale(ex, case, run, source, want, window_ms)

        cupy_kinds = [kind for kind in CUPY_CALLERS if kind != "null"]
        every_caller: list[ScaleCase] = [
            (torch_kind, cupy_kind, drops, (4096,), False, 3.0, _seed("scale", torch_kind, cupy_kind), "")
            for i, torch_kind in enumerate(TORCH_CALLERS)
            for cupy_kind, drops in (("null", i % 2 == 0), (cupy_kinds[i % 3], i % 2 == 1))]
        every_caller += [  # a transposed view (its elements are not in the order of its shape), the factor 1.0, and
            # the factor 0.0 on negative values too (factor * t holds -0.0 there, and 0.0 elsewhere)
            ("with", "use", False, (333, 130), True, -0.5, _seed("scale", "transposed"), ""),
            ("default", "null", False, (4096,), False, 1.0, _seed("scale", "factor 1"), ""),
            *(("with", "null", False, (4096,), False, factor, _seed("scale", f"factor {factor}"), "")
              for factor in INEXACT_FACTORS),
            ("set_stream", "with", False, (4096,), False, 0.0, _seed("scale", "factor 0"), ""),
            # NaN and an infinity, which factor * t keeps (0.0 * inf is NaN)
            ("with", "null", False, (4096,), False, -0.5, _seed("scale", "nan"), "nan"),
            ("default", "use", False, (64, 64), False, 0.0, _seed("scale", "inf"), "inf"),
            ("set_stream", "null", False, (4096,), False, 3.0, _seed("scale", "inf 3"), "inf"),
            # CuPy's null stream current under another stream on CuPy's stack
            ("set_stream", "null_in_with", False, (4096,), False, 3.0, _seed("scale", "null in with"), ""),
            # an empty t, and one with no columns: factor * t is a new empty tensor all the same; a 0-d t
            ("with", "use", False, (0,), False, 3.0, _seed("scale", "empty"), ""),
            ("default", "with", True, (), False, -0.5, _seed("scale", "0-d"), ""),
            ("default", "null", True, (5, 0), True, -0.5, _seed("scale", "no columns"), ""),
        ]
        for_all(ex, _scale_cases(), holds, examples=GPU_CASES, chosen=every_caller, budget_s=GPU_BUDGET_S,
                describe=_describe_scale)
        _scales_kept(ex, cp, yours)


def _scales_kept(ex: Any, cp: Any, yours: Callable) -> None:
    """KEPT_CALLS calls in a row, from a fresh thread (PyTorch's default stream; CuPy's current stream a stream of its
    own, made current with use()), every result kept while the later calls run: the first two on two t's already
    written, each later one on one of the same two t's, written again by the caller in between (on its stream, after
    the earlier calls' work there).  Once the GPU is done, each result must still hold its own values (an output that
    a later call writes again, one for every call, a ring of fewer than KEPT_CALLS or one per input tensor, is not the
    caller's to keep).

    CuPy's current stream, late by a window, then writes memory of a result's size that was freed on it just before
    the calls: a result allocated there (the first such allocation gets that memory from CuPy's pool, emptied of
    free blocks first) and written on the caller's stream is overwritten by that earlier work."""
    sources = [torch.randint(-1000, 1000, (4096,), generator=torch.Generator().manual_seed(k)).float().cuda()
               for k in range(KEPT_CALLS)]
    wants = [3.0 * source for source in sources]
    ts = [sources[0].clone(), sources[1].clone()]
    torch.cuda.synchronize()

    def in_a_row() -> list[bool]:
        cp.get_default_memory_pool().free_all_blocks()
        other = cp.cuda.Stream(non_blocking=True)
        other.use()  # CuPy's current stream: not the caller's...
        cupy_sleep(WINDOW_MS / 1e3)
        earlier = cp.full((4096,), -2.0, dtype=cp.float32)  # ...whose earlier work writes memory of a result's size...
        del earlier  # ...freed before the calls: CuPy's pool hands it to the next allocation on that stream
        results = []
        for k, source in enumerate(sources):
            t = ts[k % 2]
            if k >= 2:  # the caller writes t again, on its stream: after the work that read it there
                t.copy_(source)
            results.append(yours(t, 3.0))
        torch.cuda.synchronize()
        return [isinstance(out, torch.Tensor) and out.is_cuda and out.shape == want.shape
                and torch.equal(out.double(), want.double()) for out, want in zip(results, wants)]

    right = _in_a_fresh_thread(in_a_row)
    wrong = [k + 1 for k, ok in enumerate(right) if not ok]
    ex.expect(not wrong,
              f"cupy_scale_on_current_stream called {KEPT_CALLS} times in a row (t of shape (4096,), factor 3.0, from "
              "PyTorch's default stream, with CuPy's current stream another one, late, whose earlier work still wrote "
              "memory it had just freed; from the third call on, each on one of the first two t's, written again by "
              f"the caller), every result kept: once the GPU was done, the results of {len(wrong)} calls held other "
              f"values (calls {shown(wrong, 60)})",
              "the caller keeps your result as long as it likes: return a tensor that no later call writes again, "
              "whatever t it gets, and whose memory no other stream's work may still use (CuPy's pool hands out "
              "memory per stream: memory from another stream's pool may still be in use by work queued there)")


def _judge_scale(ex: Any, case: ScaleCase, run: _ScaleRun, source: torch.Tensor, want: torch.Tensor,
                 window_ms: float) -> None:
    call, out = _describe_scale(case), run.out
    if not (isinstance(out, torch.Tensor) and out.is_cuda and out.shape == want.shape and out.is_floating_point()):
        ex.expect(False, f"{call} returned {what_returned(out)}, expected a CUDA tensor of shape {tuple(want.shape)}",
                  "hand CuPy's result back to PyTorch without a copy (DLPack)")
    ex.expect(out.dtype == torch.float32, f"{call} returned a tensor of dtype {out.dtype}, expected t's, float32",
              "factor * t keeps t's dtype (a Python float is no wider than t): what made your result wider or "
              "narrower?")
    found = Findings()
    found.expect(not run.computed, f"{call}: PyTorch computed ({', '.join(sorted(set(run.computed)))})",
                 "the work is CuPy's: hand the tensor to CuPy without a copy, compute there, and hand the result back")
    found.expect(not run.shares_t, f"{call} returned t's own memory",
                 "return a new tensor; leave the caller's input as it was")
    found.expect(not run.waited,
                 f"{call}: with the producer's {window_ms:.0f} ms of earlier work queued, and every other stream "
                 "busy, the call kept the host waiting for the GPU",
                 "the host must not wait for the GPU (no synchronize, .cpu(), .item(), .get(), asnumpy): order the "
                 "work on the GPU, by queuing it on the stream that already orders it")
    found.expect(run.torch_after == run.caller and not run.cupy_moved,
                 f"{call}: the call changed the current stream ({'CuPy' if run.cupy_moved else 'PyTorch'}'s)",
                 "leave both libraries' current streams as you found them: a `with` block ends on the stream below "
                 "it on its library's stack, and use() (or set_stream) changes the current stream until the next "
                 "change")
    found.expect(not run.stack_moved, f"{call}: the call changed CuPy's stack of `with` blocks",
                 "leave every `with` block you enter, once: enter and exit belong together")
    if run.seen is not None:
        bad = ~_same_values(run.seen.double(), want.double())
        # and zeros of the other sign: 0.0 * t is -0.0 where t < 0, which == takes for 0.0 (zeros_like is not 0.0 * t)
        signs = (run.seen == 0) & (want == 0) & (torch.signbit(run.seen) != torch.signbit(want))
        if not bool(bad.any()) and bool(signs.any()):
            found.expect(False,
                         f"{call}: the caller's stream read {int(signs.sum())} of {want.numel()} zeros with the "
                         f"other sign (for example {run.seen[signs][0].item():g} where factor * t is "
                         f"{want[signs][0].item():g})",
                         "IEEE 754 keeps the sign of a product: 0.0 times a negative value is -0.0. Was every value "
                         "of your result computed from t by CuPy's kernel?")
        wrong = int(bad.sum())
        example = run.seen[bad][0].item() if wrong else 0.0
        # the result read again once the GPU is done holds the same wrong values: CuPy computed them so
        settled = wrong and bool(_same_values(run.out.detach().double()[bad], run.seen.double()[bad]).all())
        found.expect(wrong == 0,
                     f"{call}: the caller's stream read {wrong} of {want.numel()} values wrong (for example "
                     f"{example:g} where factor * t is {want[bad][0].item() if wrong else 0.0:g})",
                     "factor * t keeps NaN and infinities (IEEE 754), and t's fractions: the result, read again once "
                     "the GPU was done, holds the same values. What did your kernel compute, and from what?"
                     if settled and not math.isnan(example) else
                     "NaN is what t held before the producer wrote it: CuPy read t before that. Which stream was "
                     "CuPy's work queued on, and what ordered it after the producer?" if math.isnan(example) else
                     "the caller read the result before CuPy had written it, or after its memory went to someone "
                     "else: which stream was CuPy's work queued on, what ordered it with the caller's stream, and "
                     "what keeps the result's memory alive?")
    if run.input_after is not None:
        found.expect(bool(_same_values(run.input_after, source).all()), f"{call}: the input tensor was changed",
                     "return a new tensor; leave the caller's input as it was")
    found.expect(run.late_ms <= window_ms / 2,
                 f"{call}: the caller's next work ran {run.late_ms:.0f} ms after the producer's write, behind work "
                 "queued on another stream",
                 "CuPy's kernel, and the hand-back to PyTorch, must see the caller's PyTorch stream as CuPy's current "
                 "stream: any other stream (CuPy's null stream, which is PyTorch's default stream; CuPy's current "
                 "stream; a stream of your own) ties the caller's next work to everything queued there")
    found.report(ex)


register(Exercise(NOTEBOOK, "cupy_scale_on_current_stream", check_cupy_scale_on_current_stream, gpu=True,
                  cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 3: copies on a copy stream, computes on the current stream
# ------------------------------------------------------------------------------------------
ROWS, COLS, NCHUNKS = 2048, 2048, 8  # chunks of 16 MiB (float32): the chosen cases and the timed run
TRIALS = ("slow copies", "slow computes", "earlier work")
# (the kind of caller, the trial, how many chunks, a chunk's shape, the chunks' dtype: float64 too, as the task names
# none: round 23's adversary made its buffers float32 and passed)
PipeCase = tuple[str, str, int, tuple[int, int], str]


def _pipe_cases() -> st.SearchStrategy[PipeCase]:
    """Every caller and trial; from no chunk to NCHUNKS, of odd shapes and small ones."""
    shape = st.tuples(st.one_of(st.integers(1, 9), st.integers(1, 64)), st.one_of(st.integers(1, 9),
                                                                                   st.integers(1, 300)))
    return st.tuples(cupy_callers(), st.sampled_from(TRIALS), st.integers(0, NCHUNKS), shape,
                     st.sampled_from(("float32", "float64")))


def _describe_pipe(case: PipeCase) -> str:
    kind, trial, n, shape, dtype = case
    return (f"pipelined({n} chunks of shape {shape}, {dtype}, compute, copy_stream) with {trial}, called from "
            f"{ALL_CUPY_CALLERS[kind]}")


def _pinned_chunks(base: np.ndarray, n: int, offset: int) -> list[np.ndarray]:
    """n pinned host arrays of base's dtype, different in each run: chunk i is base + 16 * i + offset."""
    import cupyx

    chunks = []
    for i in range(n):
        h = cupyx.empty_pinned(base.shape, dtype=base.dtype)
        np.add(base, 16 * i + offset, out=h)
        chunks.append(h)
    return chunks


def _wrong_chunks(got: object, chunks: Sequence[np.ndarray], cp: Any) -> list[int] | str:
    """The chunks whose result is not the row sums of the chunk; a string if the answer's shape is wrong."""
    if not isinstance(got, (list, tuple)) or len(got) != len(chunks):
        return f"returned {what_returned(got)} of {len(got) if hasattr(got, '__len__') else '?'} items, " \
               f"expected a list of {len(chunks)} results"
    bad = []
    for i, (g, h) in enumerate(zip(got, chunks)):
        want = h.sum(axis=1)  # np.array_equal ignores dtypes (round 26's adversary: float64 results rounded to float32)
        if not isinstance(g, cp.ndarray) or g.dtype != want.dtype or not np.array_equal(cp.asnumpy(g), want):
            bad.append(i)
    return bad


@dataclass
class _Compute:
    """The `compute` a check hands the answer: it notes the current stream and the array of each call, and spends
    `ms` on it before it reads its chunk."""

    cp: Any
    ms: float = 0.0
    called_on: list = field(default_factory=list)
    given: list = field(default_factory=list)  # the dtype and shape of each array it was called on

    def __call__(self, x: Any) -> Any:
        self.called_on.append(self.cp.cuda.get_current_stream())
        self.given.append((getattr(x, "dtype", type(x).__name__), tuple(getattr(x, "shape", ()))))
        if self.ms:
            cupy_sleep(self.ms / 1e3)
        return x.sum(axis=1)


@dataclass
class _PipeRun:
    got: Any
    chunks: list[np.ndarray]
    caller: Any  # the caller's stream
    called_on: list  # the current stream of each call of compute
    given: list  # the dtype and shape of the array of each call of compute
    current_after: Any  # CuPy's current stream after the call
    top_before: Any  # the top of CuPy's stack of `with` blocks before the call
    top_after: Any  # and after it
    call_ms: float  # how long the call kept the host
    copies_late: bool | None  # slow copies: the computes ran only after copy_stream's busy window
    earlier: np.ndarray | None  # earlier work: what the caller's earlier work read
    base: np.ndarray


def _pipe_run(cp: Any, yours: Callable, case: PipeCase, copy_stream: Any, compute: _Compute, window_ms: float,
              offset: int, per_chunk_ms: float) -> _PipeRun:
    """One call of yours(chunks, compute, copy_stream) from a caller of `case`'s kind, in one of three trials:

    - slow copies: copy_stream is busy for window_ms when the call comes; a compute that does not wait for its
      copy reads a stale buffer, and a host that waits for a copy returns late;
    - slow computes: each compute spends per_chunk_ms before it reads its chunk, and copy_stream is used again
      right after the call (chunks of the same size, NaN): a buffer allocated on copy_stream and freed while a
      compute still reads it is handed out again, and overwritten (CuPy has no record_stream);
    - earlier work: the caller's stream still reads, for window_ms, memory that the answer's allocations on the
      current stream reuse: a copy that does not wait for the current stream overwrites it.
    """
    import cupyx

    kind, trial, n, shape, dtype = case
    w = window_ms / 1e3
    base = np.random.default_rng(_seed("pipe", case)).integers(0, 16, shape).astype(dtype)
    chunks = _pinned_chunks(base, n, offset)
    poison = cupyx.empty_pinned(shape, dtype=dtype) if trial == "slow computes" else None
    if poison is not None:
        poison[...] = math.nan  # what copy_stream's next user copies
    compute.ms = per_chunk_ms if trial == "slow computes" else 0.0
    compute.called_on.clear()
    compute.given.clear()
    origin_stream = cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()
    earlier = junk = window_end = None
    with cupy_caller(kind) as caller:
        c = caller.stream
        origin = origin_stream.record()  # the GPU is idle: this is now
        if trial == "slow copies":
            with _queued_on(cp, copy_stream):
                cupy_sleep(w)
                window_end = copy_stream.record()
        if trial == "earlier work":  # the caller's stream still reads `victim` when its memory is freed
            cp.get_default_memory_pool().free_all_blocks()
            victim = cp.empty(shape, dtype=dtype)
            victim.set(base)
            cupy_sleep(w)
            earlier = victim.sum(axis=1)
            del victim
        top_before = _stack_top(cp)
        t0 = time.perf_counter()
        got = yours(chunks, compute, copy_stream)
        call_ms = (time.perf_counter() - t0) * 1e3
        current_after = cp.cuda.get_current_stream()
        top_after = _stack_top(cp)
        if trial == "slow computes":  # copy_stream's next user: the same sizes again
            with _queued_on(cp, copy_stream):
                junk = [cp.asarray(poison) for _ in range(n)]
        c.use()
        consumed = c.record()
    cp.cuda.Device().synchronize()
    del junk
    copies_late = None
    if window_end is not None:
        copies_late = cp.cuda.get_elapsed_time(origin, consumed) >= cp.cuda.get_elapsed_time(origin, window_end)
    return _PipeRun(got, chunks, c, list(compute.called_on), list(compute.given), current_after, top_before, top_after,
                    call_ms, copies_late, None if earlier is None else cp.asnumpy(earlier), base)


def check_pipelined(pipelined: Callable[[Sequence[np.ndarray], Callable[[Any], Any], Any], list]) -> None:
    """pipelined(chunks, compute, copy_stream) must return [compute(chunk on the GPU) for each chunk], with compute
    called on the caller's current stream and the chunks copied on copy_stream while compute runs: correct
    whatever the timing, the current stream current again at the end, and faster than copying and computing one
    chunk after the other.

    Called from every kind of caller, on no chunk to NCHUNKS chunks of odd and large shapes, in three trials
    (`_pipe_run`: slow copies, slow computes, earlier work); then timed, with a bar from this machine, as in
    notebook 03's prefetching exercise: the computes are made as long as a copy (or twice the host's time per
    chunk, if longer), and the answer must save at least half of what a perfect overlap saves.
    """
    if _left_for_a_gpu("pipelined", "CuPy on a GPU: from every kind of caller, the results with slow copies, with "
                                    "slow computes and with earlier work still reading reused memory, compute on the "
                                    "caller's stream and copies on copy_stream, no wait of the host, and the time "
                                    "saved against copying then computing one chunk at a time"):
        return
    with exercise("pipelined") as ex:
        cp = _cupy("check_pipelined")
        bare = _filters_kept_in_order(ex, ex.answer(pipelined))  # timed alone, at the end
        yours = settings.keeping(ex, bare, KEPT_SETTINGS_GPU)
        copy_stream = cp.cuda.Stream(non_blocking=True)
        compute = _Compute(cp)

        def sequential(chunks: Sequence[np.ndarray]) -> list:
            return [compute(cp.asarray(h)) for h in chunks]

        base = np.random.default_rng(4).integers(0, 16, (ROWS, COLS)).astype(np.float32)
        chunks = _pinned_chunks(base, NCHUNKS, 0)
        sequential(chunks)  # warm-up: kernels, the pool's first allocations
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        copy_ms = _cupy_elapsed_ms(lambda: [cp.asarray(h) for h in chunks]) / NCHUNKS

        def host_ms_per_chunk() -> float:
            yours(chunks, compute, copy_stream)  # a first call: CuPy compiles what the answer uses
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            yours(chunks, compute, copy_stream)
            return (time.perf_counter() - t0) * 1e3 / NCHUNKS

        host_ms = _in_a_fresh_thread(host_ms_per_chunk)
        cp.cuda.Device().synchronize()
        runs = [0]

        def holds(case: PipeCase) -> None:
            shape = case[3]
            per_chunk_ms = max(4 * copy_ms * shape[0] * shape[1] / (ROWS * COLS), 4 * host_ms, 2.0)
            for k in range(TRIES):
                runs[0] += 1
                window_ms = WINDOW_MS * 2**k
                run = _in_a_fresh_thread(partial(_pipe_run, cp, yours, case, copy_stream, compute, window_ms, runs[0],
                                                 per_chunk_ms))
                if run.call_ms < window_ms / 2:
                    break
            _judge_pipe(ex, cp, case, run, window_ms)

        every_caller = [(kind, trial, NCHUNKS, (ROWS, COLS), "float32") for kind in CUPY_CALLERS for trial in TRIALS]
        every_caller += [("use", "slow copies", 3, (37, 300), "float64"),  # chunks of another dtype
                         ("with", "earlier work", 2, (64, 9), "float64"),
                         ("null_in_with", "slow copies", 3, (64, 9), "float32")]  # the null stream under another
        for_all(ex, _pipe_cases(), holds, examples=GPU_CASES, chosen=every_caller, budget_s=GPU_BUDGET_S,
                describe=_describe_pipe)
        _pipelines_kept(ex, cp, yours, copy_stream)
        _last_copy_overlaps(ex, cp, yours, copy_stream)

        # Faster: computes as long as a copy (or as two chunks of the host's work, if longer).  One after
        # the other, each chunk costs copy + compute; overlapped, the copy of chunk i+1 hides behind
        # compute i, which saves a copy per chunk but the first.  The answer must save at least half of that.
        # The timed calls are the answer's alone, and every setting (KEPT_SETTINGS) is read around all of them
        # together, outside the timed spans (read around each call, the reads held the GPU idle inside them)
        chunks, compute.ms = _pinned_chunks(base, NCHUNKS, 9), max(copy_ms, 2 * host_ms)
        settings.keeping(ex, lambda: ex.expect_saving(
            _cupy_elapsed_ms, lambda: sequential(chunks), lambda: bare(chunks, compute, copy_stream),
            saving_ms=(NCHUNKS - 1) * min(copy_ms, compute.ms), tries=TRIES,
            describe=("copying then computing one chunk at a time", "the copies with the computes"),
            hint="the copy of chunk i+1 belongs on copy_stream while compute works on chunk i, and the host must never "
                 "wait"), KEPT_SETTINGS)()


@dataclass
class _WritesTheLastChunk(_Compute):
    """A slow `compute` that, once it has read the chunk before the last, writes other values into the last chunk's
    host memory, on the current stream: a copy of the last chunk that overlaps that compute read the chunk's own
    values; one queued after it reads the new ones."""

    last: Any = None  # the last chunk (pinned host memory)
    new_values: Any = None  # on the GPU: what the compute before it writes there
    n: int = 0

    def __call__(self, x: Any) -> Any:
        result = super().__call__(x)
        if len(self.called_on) == self.n - 1:  # this was the chunk before the last
            self.cp.cuda.runtime.memcpyAsync(self.last.ctypes.data, self.new_values.data.ptr, self.last.nbytes,
                                             self.cp.cuda.runtime.memcpyDeviceToHost,
                                             self.cp.cuda.get_current_stream().ptr)
        return result


def _last_copy_overlaps(ex: Any, cp: Any, yours: Callable, copy_stream: Any) -> None:
    """The copy of the last chunk overlaps the compute of the chunk before it (round 35's adversary copied the last
    chunk on the caller's stream, after that compute, and passed: every other chunk overlapped, which saved more than
    half of a perfect overlap, and its values were right).  From every kind of caller, 4 chunks with slow computes
    (WINDOW_MS each, before they read their chunk); the third compute then writes other values into the last chunk's
    host memory, on the caller's stream: a copy on copy_stream, which waits for nothing after that compute's start,
    has read the chunk by then."""
    shape, n = (16, 64), 4
    base = np.random.default_rng(_seed("pipe", "last")).integers(0, 16, shape).astype(np.float32)
    for kind, who in ALL_CUPY_CALLERS.items():
        chunks = _pinned_chunks(base, n, 2000)
        want, new_values = chunks[-1].sum(axis=1), cp.asarray(chunks[-1] + 1000)
        compute = _WritesTheLastChunk(cp, WINDOW_MS, last=chunks[-1], new_values=new_values, n=n)
        cp.cuda.Device().synchronize()

        def call(kind: str = kind, compute: _WritesTheLastChunk = compute, chunks: list = chunks) -> object:
            with cupy_caller(kind):
                got = yours(chunks, compute, copy_stream)
            cp.cuda.Device().synchronize()
            return got

        got = _in_a_fresh_thread(call)
        last = got[-1] if isinstance(got, (list, tuple)) and len(got) == n else None
        read_late = isinstance(last, cp.ndarray) and np.array_equal(cp.asnumpy(last), want + 1000 * shape[1])
        ex.expect(not read_late,
                  f"pipelined({n} chunks of shape {shape}, slow computes), called from {who}: the copy of the last "
                  "chunk ran only after the compute of the chunk before it (that compute then wrote other "
                  "values into the last chunk's host memory, and your result of the last chunk holds those)",
                  "every chunk's copy belongs on copy_stream, the last one too: it then runs while compute works on "
                  "the chunk before it")
        if read_late:
            return


def _pipelines_kept(ex: Any, cp: Any, yours: Callable, copy_stream: Any) -> None:
    """Four calls in a row, from a fresh thread: the first two from the null stream and the third from a side stream
    entered with `with`, each of 3 chunks with slow computes (WINDOW_MS each, before they read their chunk), each
    while the earlier calls' computes still wait to read; the fourth from another side stream, of KEPT_CHUNKS chunks
    with quick computes, while the second and third calls' computes still wait to read.  Each call's results must hold
    its own chunks' sums once the GPU is done (buffers that one call keeps for the next, a ring that comes round
    within the fourth call's chunks while the second call's computes still wait, and frees or writes again there while
    the earlier computes still read them, are overwritten; a later caller on another stream orders nothing with the
    earlier callers' computes).

    First a call with no chunks (it frees what an answer kept from the checks before) and CuPy's pool emptied of
    free blocks: the memory that the second call frees is then the only free memory of its size on its stream."""
    shape = (16, 64)
    base = np.random.default_rng(_seed("pipe", "kept")).integers(0, 16, shape).astype(np.float32)
    chunks = [_pinned_chunks(base, 3, 1000 + 100 * k) for k in range(3)]
    chunks.append(_pinned_chunks(base, KEPT_CHUNKS, 1300))  # every chunk's values its own: 16 apart, from 1300
    compute, quick = _Compute(cp, WINDOW_MS), _Compute(cp)
    side, other_side = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    cp.cuda.Device().synchronize()

    def in_a_row() -> list:
        yours([], compute, copy_stream)
        cp.cuda.Device().synchronize()
        cp.get_default_memory_pool().free_all_blocks()
        results = [yours(one, compute, copy_stream) for one in chunks[:2]]
        with side:
            results.append(yours(chunks[2], compute, copy_stream))
        with other_side:
            results.append(yours(chunks[3], quick, copy_stream))
        cp.cuda.Device().synchronize()
        return results

    results = _in_a_fresh_thread(in_a_row)
    bad = [_wrong_chunks(got, one, cp) for got, one in zip(results, chunks)]
    ex.expect(not any(bad),
              f"pipelined called four times in a row (chunks of shape {shape}; the first two calls from the null "
              f"stream and the third from a side stream, 3 chunks each with slow computes; the fourth from another "
              f"side stream, {KEPT_CHUNKS} chunks): once the GPU was done, the results of chunks {bad[0]} of the "
              f"first call, {bad[1]} of the second, {bad[2]} of the third and {shown(bad[3], 80)} of the fourth were "
              "wrong",
              "each call came while the earlier calls' computes still had to read their buffers: memory freed while "
              "a compute still reads it goes back at once to the stream that allocated it (CuPy has no "
              "record_stream), and a buffer kept from one call to the next is written again by the next call's "
              "copies, which wait only for that caller's stream. What must copy_stream wait for before it writes "
              "into memory that an earlier compute may still read?")


def _judge_pipe(ex: Any, cp: Any, case: PipeCase, run: _PipeRun, window_ms: float) -> None:
    call, (_, trial, n, _, _) = _describe_pipe(case), case
    ex.expect(len(run.called_on) == n and all(on == run.caller for on in run.called_on),
              f"{call}: compute was called {len(run.called_on)} times, on "
              f"{sorted({str(on) for on in run.called_on}) or 'no stream'}; expected {n} calls, all on the caller's "
              f"current stream {run.caller}",
              "call compute(x) once per chunk, on the stream that was current when your function was called: "
              "a `with` block ends on the stream below it on CuPy's stack, not on one the caller made current "
              "with use()")
    chunk = (np.dtype(case[4]), case[3])
    other = sorted({f"{dtype} {shape}" for dtype, shape in run.given if (dtype, shape) != chunk})
    ex.expect(not other,
              f"{call}: compute was called on arrays of {', '.join(other)}; expected the chunks as they are "
              f"({case[4]}, shape {case[3]})",
              "compute gets each chunk on the GPU as it is: the same dtype and shape as the host array")
    bad = _wrong_chunks(run.got, run.chunks, cp)
    ex.expect(not isinstance(bad, str), f"{call} {bad}", "return compute(x) of every chunk, in order")
    dtypes = sorted({str(g.dtype) for g in run.got if isinstance(g, cp.ndarray) and g.dtype != np.dtype(case[4])})
    ex.expect(not dtypes, f"{call} returned results of dtype {', '.join(dtypes)}; compute's results are {case[4]}",
              "return what compute(x) returns for each chunk, as it is: no array of another dtype gathers them")
    ex.expect(run.current_after == run.caller,
              f"{call}: your function left {run.current_after} as CuPy's current stream instead of the caller's "
              f"{run.caller}",
              "leave the caller's current stream current: a `with` block ends on the stream below it on CuPy's "
              "stack, which is not the caller's stream if the caller made it current with use()")
    ex.expect(run.top_after == run.top_before,
              f"{call}: your function changed CuPy's stack of `with` blocks (a `with` block entered now would end "
              f"on {run.top_after}, not on {run.top_before})",
              "leave every `with` block you enter, once: enter and exit belong together")
    ex.expect(run.call_ms < window_ms / 2,
              f"{call}: with streams busy for {window_ms:.0f} ms, your function returned after {run.call_ms:.0f} ms: "
              "the host waited for the GPU",
              "order the streams on the GPU only (events and wait_event); synchronize(), asnumpy(), .get() and "
              "float() make the host wait")
    hints = {
        "slow copies": "a compute read its buffer before the copy into it was done: what must the current stream "
                       "wait for before each compute, and where is that recorded?",
        "slow computes": "a buffer was overwritten while a compute still read it: CuPy has no record_stream, so "
                         "a buffer freed (or handed out again) while a compute still reads it goes back at once to the "
                         "stream that allocated it, and that stream's next allocation may get it. Which of your "
                         "buffers were freed or reused before the computes that read them had run, and what must "
                         "copy_stream wait for before it writes into memory a compute may still read?",
        "earlier work": "a copy overwrote a buffer whose memory earlier work on the current stream was still "
                        "reading: what must copy_stream wait for before its first copy?",
    }
    ex.expect(not bad, f"{call}: the results of chunks {bad} are wrong", hints[trial])
    if trial == "slow copies" and n:
        ex.expect(bool(run.copies_late),
                  f"{call}: the computes ran before copy_stream's earlier work was done: the copies were not queued "
                  "on copy_stream",
                  "copy the chunks on copy_stream (ndarray.set(h, stream=copy_stream), or inside a switch to it), so "
                  "that they overlap the computes on the current stream")
    if run.earlier is not None:
        ex.expect(np.array_equal(run.earlier, run.base.sum(axis=1)),
                  f"{call}: your copies overwrote memory that earlier work on the current stream was still reading",
                  "buffers allocated on the current stream may reuse memory that the current stream's earlier work "
                  "still reads: copy_stream must not write them before that work is done")


register(Exercise(NOTEBOOK, "pipelined", check_pipelined, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 4: a program written with PyTorch's `with` in mind, made to run as meant on CuPy (no GPU needed)
# ------------------------------------------------------------------------------------------
# A program is a tuple of statements: ("kernel", "k1") queues a kernel on the current stream, ("use", "b") is
# `b.use()`, and ("with", "a", (...)) is `with a:` around a block of statements.  It runs in a fresh thread, on the
# streams STREAMS ("null" is cp.cuda.Stream.null, where a fresh thread starts).  Its author meant each `with` block's
# end to make current again the stream current at its start (PyTorch's rule); the answer adds the fewest use() lines
# that make CuPy run every kernel there.
STREAMS = ("null", "a", "b", "c")
Program = tuple[tuple[Any, ...], ...]
EXAMPLE_PROGRAM: Program = (  # an example mixing section 2's patterns
    ("kernel", "k1"),
    ("with", "a", (("kernel", "k2"), ("use", "b"), ("kernel", "k3"))),
    ("kernel", "k4"),
    ("use", "b"),
    ("kernel", "k5"),
    ("with", "a", (("kernel", "k6"),)),
    ("kernel", "k7"),
)


def _numbered(program: Program) -> Program:
    """The program with its kernels named k1, k2, ... in the order of their lines."""
    count = [0]

    def number(body: Program) -> Program:
        statements: list[tuple[Any, ...]] = []
        for statement in body:
            if statement[0] == "kernel":
                count[0] += 1
                statements.append(("kernel", f"k{count[0]}"))
            elif statement[0] == "with":
                statements.append(("with", statement[1], number(statement[2])))
            else:
                statements.append(statement)
        return tuple(statements)

    return number(program)


def _kernel_names(program: Program) -> list[str]:
    """The names of the program's kernels, in the order of their lines."""
    names: list[str] = []

    def add(body: Program) -> None:
        for s in body:
            if s[0] == "kernel":
                names.append(s[1])
            elif s[0] == "with":
                add(s[2])

    add(program)
    return names


def _fresh(text: str) -> str:
    """A string equal to `text`, and a new object (but for one character: CPython keeps one object for each)."""
    return "".join(list(text))


def _as_read(program: Program) -> Program:
    """The program as if read from a file: every string in it a new object (round 32's adversary compared streams
    with `is`, and passed: every program's "null" was the interned literal of the answer's own code), and its kernels
    named again from the last, two to a name (..., k2, k2, k1, k1: round 32's adversary kept its fixes by kernel name,
    or at the index a name's number gives, and passed: every program's kernels were k1, k2, ... in line order, where
    the task names no rule, and a real program launches one kernel many times)."""
    names = iter(f"k{(n + 1) // 2}" for n in range(len(_kernel_names(program)), 0, -1))

    def read(body: Program) -> Program:
        return tuple((_fresh(s[0]), _fresh(next(names))) if s[0] == "kernel" else
                     (_fresh(s[0]), _fresh(s[1]), read(s[2])) if s[0] == "with" else
                     (_fresh(s[0]), _fresh(s[1])) for s in body)

    return read(program)


# A program is drawn as a flat list of lines, which Hypothesis draws and shrinks fast: each is the end of the
# innermost open `with` block (nothing when none is open), the start of a `with` block, or a use(), and each may be
# followed by a kernel, which sees the stream that line made current.  The end of a block may be followed by none:
# then a use(), a `with` or another end comes before the next kernel (or nothing does), and whether a line is needed
# after that end depends on what comes next (an answer that adds one whenever anything follows is wrong there).
# Blocks still open at the end end there.  The weights (`with` twice, three ends) make wrong rules show within a few
# dozen programs (tests/test_exercises_04.py).
LINES = (("end",), ("end",), ("end",), *(("with", s) for s in STREAMS * 2), *(("use", s) for s in STREAMS))


def _from_lines(first_kernel: bool, lines: Sequence[tuple[tuple[str, ...], bool]]) -> Program:
    """The program that a list of (line, a kernel follows) stands for, its kernels named k1, k2, ... in order."""
    blocks: list[tuple[str, list]] = [("", [("kernel",)] if first_kernel else [])]
    for line, kernel in lines:
        if line[0] == "end":
            if len(blocks) > 1:
                stream, body = blocks.pop()
                blocks[-1][1].append(("with", stream, tuple(body)))
        elif line[0] == "with":
            blocks.append((line[1], []))
        else:
            blocks[-1][1].append(line)
        if kernel:
            blocks[-1][1].append(("kernel",))
    while len(blocks) > 1:
        stream, body = blocks.pop()
        blocks[-1][1].append(("with", stream, tuple(body)))
    return _numbered(tuple(blocks[0][1]))


# Pieces of a body, for nested programs: a kernel, a use(), an empty block and a kernel after its end, a block
# holding a kernel.  Drawn a few to a stretch, they put a use() before a block's end, and two ends in one stretch,
# often: there the rule is needed (CuPy's end goes back elsewhere than the author meant), at every depth.
_PIECES: tuple[Program, ...] = (
    (("kernel",),), *((("use", s),) for s in STREAMS), *((("with", s, ()), ("kernel",)) for s in STREAMS),
    *((("with", s, (("kernel",),)),) for s in STREAMS))


def _nested(levels: Sequence[tuple[str, str, Program, Program]], innermost: Program) -> Program:
    """`innermost` inside one `with` block for each level (the first innermost), each block between a use() and a
    kernel, with pieces before and after them; its kernels named k1, k2, ... in order.  Unless the use() names the
    stream of the block around (the thread's at the top), the kernel after the block needs the rule."""
    body = innermost
    for stream, used, before, after in levels:
        body = (*before, ("use", used), ("with", stream, body), ("kernel",), *after)
    return _numbered(body)


def programs(length: int = 12, deepest: int = 8) -> st.SearchStrategy[Program]:
    """Programs of two kinds, half of each.  Flat: three to `length` lines besides kernels, `with` blocks nested at
    any depth (empty ones too; two programs in five nest three deep or more, typically), use() calls and kernels, in
    any order.  Nested: one to `deepest` blocks inside each other, each after a use() and before a kernel, with a few
    pieces (`_PIECES`) around them (`_nested`): these need the rule at most levels, so often inside three blocks or
    more, and often twice in one stretch of a body (tests/test_exercises_04.py counts them).  Hypothesis shrinks a
    failing one towards fewer lines, and fewer kernels."""
    line = st.sampled_from([(line, kernel) for kernel in (False, True) for line in LINES])  # one choice a line
    flat = st.builds(_from_lines, st.booleans(), st.lists(line, min_size=3, max_size=length))
    pieces = st.lists(st.sampled_from(_PIECES), max_size=3).map(lambda drawn: tuple(s for piece in drawn
                                                                                     for s in piece))
    level = st.tuples(st.sampled_from(STREAMS), st.sampled_from(STREAMS), pieces, pieces)
    return st.one_of(flat, st.builds(_nested, st.lists(level, min_size=1, max_size=deepest), pieces))


def as_code(program: Program) -> str:
    """The program as the CuPy code it stands for (x: a CuPy array; a, b, c: three cp.cuda.Stream())."""
    lines = ["null = cp.cuda.Stream.null", "a, b, c = cp.cuda.Stream(), cp.cuda.Stream(), cp.cuda.Stream()"]

    def write(body: Program, indent: str) -> None:
        for statement in body:
            if statement[0] == "kernel":
                lines.append(f"{indent}x = x + 1  # {statement[1]}")
            elif statement[0] == "use":
                lines.append(f"{indent}{statement[1]}.use()")
            else:
                lines.append(f"{indent}with {statement[1]}:")
                write(statement[2], indent + "    ")
                if not statement[2]:
                    lines.append(f"{indent}    pass")

    write(program, "")
    return "\n".join(lines)


def _on_one_line(program: Program, longest: int = 1200) -> str:
    """The program in one line, for a message: `k1; with a: {k2; b.use()}; k3`; one longer than `longest` characters
    (the chosen long and deep ones, `LONG_PROGRAM`, `DEEP_AND_BACK`'s last) cut, with its number of statements."""
    def line(body: Program) -> str:
        return "; ".join(s[1] if s[0] == "kernel" else f"{s[1]}.use()" if s[0] == "use" else
                         f"with {s[1]}: {{{line(s[2])}}}" for s in body)

    def statements(body: Program) -> int:
        return sum(1 + (statements(s[2]) if s[0] == "with" else 0) for s in body)

    text = line(program)
    return text if len(text) <= longest else f"{text[:300]} ... ({statements(program)} statements in all)"


def _kernels(program: Program) -> list[str]:
    """The names of the program's kernels: those of its body first, then each block's (one list, appended to: a
    list made for each block and copied into the one around it took a time of the depth squared)."""
    names: list[str] = []

    def add(body: Program) -> None:
        blocks = []
        for s in body:
            if s[0] == "kernel":
                names.append(s[1])
            elif s[0] == "with":
                blocks.append(s[2])
        for block in blocks:
            add(block)

    add(program)
    return names


@reference
def stream_rules(program: Program) -> dict[str, str]:
    """The stream of each kernel, by CuPy 14.2's rules (cupy/cuda/stream.pyx, `_ThreadLocal`): a thread starts with
    the null stream current and on its stack; `with s:` pushes s and makes it current; the end of the block pops
    the stack and makes its new top current; `s.use()` makes s current and leaves the stack alone."""
    stack, current, streams = ["null"], ["null"], {}

    def run(body: Program) -> None:
        for statement in body:
            if statement[0] == "kernel":
                streams[statement[1]] = current[0]
            elif statement[0] == "use":
                current[0] = statement[1]
            else:
                stack.append(statement[1])
                current[0] = statement[1]
                run(statement[2])
                stack.pop()
                current[0] = stack[-1]

    run(program)
    return streams


@reference
def cupy_runs(program: Program) -> dict[str, str]:
    """The stream of each kernel, as CuPy itself has it: the program run in a fresh thread on CuPy's streams,
    reading the current stream at each kernel's line (needs CuPy on a GPU)."""
    return cupy_runs_each([program])[0]


@reference
def cupy_runs_each(programs: Sequence[Program]) -> list[dict[str, str]]:
    """`cupy_runs` for many programs, one after the other in one fresh thread: a program's `with` blocks all end,
    so its stack is as it found it, and the thread's first stream is made current again before the next."""
    import cupy as cp

    def run_all() -> list[dict[str, str]]:
        objects = {"null": cp.cuda.Stream.null, **{name: cp.cuda.Stream() for name in STREAMS[1:]}}
        first = cp.cuda.get_current_stream()
        names = {stream.ptr: name for name, stream in objects.items()}
        names.setdefault(first.ptr, "null")  # where the thread starts (the per-thread default stream too)

        def run(block: Program, streams: dict[str, str]) -> dict[str, str]:
            for statement in block:
                if statement[0] == "kernel":
                    streams[statement[1]] = names.get(cp.cuda.get_current_stream().ptr, "another stream")
                elif statement[0] == "use":
                    objects[statement[1]].use()
                else:
                    with objects[statement[1]]:
                        run(statement[2], streams)
            return streams

        each = []
        for program in programs:
            each.append(run(program, {}))
            first.use()
        return each

    return _in_a_fresh_thread(run_all)


@reference
def streams_of(program: Program) -> dict[str, str]:
    """The check's reference: CuPy itself where it can run, CuPy 14.2's rules elsewhere."""
    return cupy_runs(program) if has_cupy() else stream_rules(program)


_KINDS = (("end",), *(("with", s) for s in STREAMS), *(("use", s) for s in STREAMS))


def _in_first_use_order(lines: Sequence[tuple[str, ...]]) -> bool:
    """True when the streams other than null first appear in the order a, b, c (programs that differ only by the
    names of those streams behave alike: one of them is enough)."""
    order: list[str] = []
    for line in lines:
        if len(line) > 1 and line[1] != "null" and line[1] not in order:
            order.append(line[1])
    return order == list(STREAMS[1:1 + len(order)])


@cache
def small_programs(every: int = 3, observed: int = 4) -> tuple[Program, ...]:
    """Every program of up to `every` lines (a `with`, its end, a use(), each followed by a kernel or not), and
    every program of `observed` lines with a kernel after each line but an end, which is followed by one or not (so
    that a use() or a `with` may come between a block's end and the next kernel), in order of their number of lines
    (the streams named in the order of their first use): a few thousand, which cover every way of nesting three
    blocks.  Programs without a kernel too, the empty one first (round 32's adversary returned () for them, its
    blocks and use() lines dropped: none was judged)."""
    programs, seen = [SMALLEST_PROGRAM], {SMALLEST_PROGRAM}
    for n in range(1, observed + 1):
        for lines in itertools.product(_KINDS, repeat=n):
            if not _in_first_use_order(lines):
                continue
            after = [(False, True) if n <= every or line[0] == "end" else (True,) for line in lines]
            for kernels in itertools.product(*after):
                program = _from_lines(False, list(zip(lines, kernels)))
                if program not in seen:
                    seen.add(program)
                    programs.append(program)
    return tuple(programs)


@cache
def read_programs() -> tuple[Program, ...]:
    """The small programs of up to three lines with two kernels or more, and the example, as read from a file
    (`_as_read`: kernels named again, two to a name, from the last; every string a new object)."""
    return tuple(_as_read(p) for p in (*small_programs(every=3, observed=3), EXAMPLE_PROGRAM, DEEP_PROGRAM)
                 if len(_kernel_names(p)) > 1)


@reference
def streams_of_each(programs: Sequence[Program]) -> list[dict[str, str]]:
    """`streams_of` for many programs at once (on CuPy, in one thread: each program leaves the stack as it found
    it, and the thread's first stream is made current again after each)."""
    if not has_cupy():
        return [stream_rules(program) for program in programs]
    return cupy_runs_each(programs)


def _last_change(program: Program) -> dict[str, str]:
    """What last changed the current stream before each kernel: "start", "with", "end of with", "use", or "use
    inside with" (for a hint: where the answer's model of the rules went wrong)."""
    last, depth, changes = ["start"], [0], {}

    def run(body: Program) -> None:
        for statement in body:
            if statement[0] == "kernel":
                changes[statement[1]] = last[0]
            elif statement[0] == "use":
                last[0] = "use inside with" if depth[0] else "use"
            else:
                last[0], depth[0] = "with", depth[0] + 1
                run(statement[2])
                last[0], depth[0] = "end of with", depth[0] - 1

    run(program)
    return changes


_STREAM_HINTS = {
    "end of with": "what does CuPy make current at the end of a `with` block? CuPy keeps a stack of the streams of the "
                   "`with` blocks you are in, and use() never changes that stack: is that the stream the author meant "
                   "for the kernel after the block?",
    "use inside with": "a use() lasts until the next change of the current stream, and the end of the `with` block "
                       "around it is one: where must a use() stand to reach the kernel?",
    "use": "a use() makes its stream current until the next change: which stream did the author mean there?",
    "with": "inside `with s:` CuPy queues work on s until a use() changes the current stream",
    "start": "a fresh thread starts on the null stream",
}


_ABSENT = object()


@contextmanager
def _cupy_streams_switched() -> Iterator[list]:
    """Notes each `with s:` and `s.use()` on CuPy's streams during the block (where CuPy can run); and, as a string
    naming it, each of CuPy's stream methods and functions that the block replaced (put back at the end: round 26's
    adversary of 04 gave cupy.cuda.Stream PyTorch's rule, and left it so: CuPy then ran its unchanged programs as
    meant)."""
    switched: list = []
    if not has_cupy():
        yield switched
        return
    import cupy

    base = cupy.cuda.stream._BaseStream
    enter, use = base.__enter__, base.use

    def noted_enter(self: Any) -> Any:
        switched.append(self)
        return enter(self)

    def noted_use(self: Any) -> Any:
        switched.append(self)
        return use(self)

    # (read from the module's dict: no attribute of CuPy's that warns is touched)
    owners = [base, *(vars(cupy.cuda.stream)[name] for name in ("Stream", "ExternalStream")
                      if isinstance(vars(cupy.cuda.stream).get(name), type))]
    places = [(owner, name) for owner in owners for name in ("__enter__", "__exit__", "use")]
    places += [(cupy.cuda, "get_current_stream"), (cupy.cuda.stream, "get_current_stream")]
    base.__enter__, base.use = noted_enter, noted_use
    kept = [vars(owner).get(name, _ABSENT) for owner, name in places]  # base's two: the noting ones
    try:
        yield switched
    finally:
        for (owner, name), was in zip(places, kept):
            if vars(owner).get(name, _ABSENT) is not was:
                switched.append(f"{getattr(owner, '__qualname__', owner.__name__)}.{name}")
                if was is _ABSENT:
                    delattr(owner, name)
                else:
                    setattr(owner, name, was)
        base.__enter__, base.use = enter, use


SMALLEST_PROGRAM: Program = (("kernel", "k1"),)
DEEP_PROGRAM: Program = _numbered((
    ("with", "a", (("with", "b", (("use", "c"), ("with", "a", (("kernel",),)), ("kernel",))), ("kernel",))),
    ("kernel",),
))


def deep_and_back(depth: int) -> Program:
    """`depth` blocks nested (a, b, c, a, b, ...), a kernel in the innermost and one after each block's end: a model
    that keeps fewer than `depth` entries of CuPy's stack (a bounded deque) forgets where some end goes back to."""
    block: Program = (("kernel", "k1"),)  # its kernels in line order: the innermost first, then one after each end
    for level in range(depth, 0, -1):
        block = (("with", STREAMS[1 + (level - 1) % 3], block), ("kernel", f"k{depth - level + 2}"))
    return block


# Deeper than the small programs, and than most generated ones, and each ends every block on the way back out (a
# generated program seldom does): stacks bounded at fewer than 12 entries fail on the first of these that is deeper.
# The last two are far deeper than any generated program (at most 12 lines): a stack bounded at 12 to 63 entries, with
# the null stream once it runs empty, is right for every program up to 12 deep, and wrong for the first; one bounded
# at 64 to 299 (round 26's adversary: a deque of 64, "plenty"; 100, 128 and 256 are as round) for the second.  (300
# blocks: the solution's recursion takes one frame a block, well within Python's limit of 1000.)
DEEP_AND_BACK: tuple[Program, ...] = tuple(deep_and_back(depth) for depth in (*range(4, 13), 64, 300))
# Round 32's adversary kept CuPy's stack in a deque of 512 ("more than Python could nest anyway"), iterative, and
# passed: nested tuples are built as deep as one likes in a loop, and the task says "nested to any depth".  Deeper than
# Python's recursion limit (1000) and the bounds a student takes from it (512, 1000, 1024, 2048): judged with the limit
# raised by `ROOM_A_BLOCK` frames a block (`_recursion_room`), so that an answer that recurses a few frames a block
# (the solution: one) has the room, and the check's own references too; put back after.
DEEPEST: Program = deep_and_back(3000)
ROOM_A_BLOCK = 8


@contextmanager
def _recursion_room(depth: int) -> Iterator[None]:
    """Python's recursion limit raised by ROOM_A_BLOCK frames for each of `depth` blocks, put back at the end."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + ROOM_A_BLOCK * depth)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def long_program(repeats: int) -> Program:
    """A program as long as a loop unrolled: `repeats` times a stretch that needs a use() (b.use(); a block; a kernel;
    an empty block; two kernels), and in its middle a `with c:` block whose body is as long: a body of thousands of
    statements, at the top and inside a block (an answer that recurses once a statement runs out of Python's stack)."""
    stretch: Program = (("use", "b"), ("with", "a", (("kernel",),)), ("kernel",), ("with", "c", ()), ("kernel",),
                        ("kernel",))
    half = stretch * (repeats // 2)
    return _numbered((*half, ("with", "c", stretch * repeats), *half))


# Round 26's adversary recursed once a statement of a body (`first, *rest = body`), and passed: no body of the check
# was longer than a few dozen statements, where the task bounds no program's length.  1200 statements at the top and
# as many inside a block: more than Python's recursion limit (1000) in each.
LONG_PROGRAM: Program = long_program(200)


def the_rule_at_each_level(depth: int) -> Program:
    """`depth` blocks nested, and in each body (the program's too) a use() of a stream other than the block's, then a
    block (the next level, or an empty one innermost) and a kernel after its end, then an empty block and a kernel
    after its end: each body needs a use() after each of its two ends, inside every number of blocks from 0 to
    `depth` (an answer that fixes only the first end of a stretch, or bodies down to some depth, fails)."""
    def body(level: int) -> Program:  # the body inside `level` blocks: its block's stream is a, b, c, a, ...
        own = STREAMS[1 + (level - 1) % 3] if level else "null"  # (the thread's at the top)
        used = STREAMS[1 + level % 3]  # never the block's own; the next block's
        inner = ("with", used, body(level + 1) if level < depth else ())
        return (("use", used), inner, ("kernel",), ("with", own, ()), ("kernel",))

    return _numbered(body(0))


# Kernels named as a program's author may name them (round 32's adversary parsed the number of `k7`): names that are
# no k and a number, one launched more than once, and numbers not in line order.
NAMED_OTHERWISE: tuple[Program, ...] = (
    (("kernel", "k"), ("use", "b"), ("with", "a", ()), ("kernel", "k")),
    (("kernel", "k2"), ("use", "b"), ("with", "a", ()), ("kernel", "k1")),
    (("kernel", "matmul"), ("use", "b"), ("with", "a", (("kernel", "relu"),)), ("kernel", "matmul"),
     ("with", "c", (("use", "a"), ("with", "b", ()), ("kernel", "x = x + 1"))), ("kernel", "relu")),
)


# The rule needed inside 0 to 12 blocks, twice in each stretch: fixed-depth loops and a first fix taken for the last
# fail on the first of these that goes deeper than they look (generated programs show it too, but less surely).
AT_EACH_LEVEL: tuple[Program, ...] = tuple(the_rule_at_each_level(depth) for depth in (1, 2, 3, 4, 6, 12))


@reference
def meant_streams(program: Program) -> dict[str, str]:
    """The stream the author meant for each kernel: a `with` block's end makes current again the stream that was
    current at its start (as PyTorch's `with torch.cuda.stream(s):` does); `with` and use() otherwise as in CuPy."""
    streams: dict[str, str] = {}

    def run(body: Program, current: str) -> None:
        for statement in body:
            if statement[0] == "kernel":
                streams[statement[1]] = current
            elif statement[0] == "use":
                current = statement[1]
            else:
                run(statement[2], statement[1])  # the block's end: `current` is what it was at the start

    run(program, "null")
    return streams


@reference
def fewest_uses(program: Program) -> int:
    """How few use() lines make CuPy run every kernel where the author meant: one for each stretch of a body from a
    `with` block's end to the next use(), `with` or end of the body, in which a kernel comes and the block's end
    leaves CuPy on another stream (the enclosing block's, the top of its stack) than the author meant."""
    count = [0]

    def run(body: Program, meant: str, top: str) -> None:
        on = meant  # CuPy's current stream: at the start of a body, the one the author meant
        for statement in body:
            if statement[0] == "kernel" and on != meant:
                count[0] += 1
                on = meant
            elif statement[0] == "use":
                meant = on = statement[1]
            elif statement[0] == "with":
                run(statement[2], statement[1], statement[1])
                on = top

    run(program, "null", "null")
    return count[0]


def _as_program(x: object) -> Program | None:
    """`x` as a program (lists taken for tuples), or None when it is not one: statements ("kernel", name),
    ("use", stream) and ("with", stream, body), streams of STREAMS."""
    if not isinstance(x, (tuple, list)):
        return None
    body: list[tuple[Any, ...]] = []
    for statement in x:
        if not isinstance(statement, (tuple, list)) or not statement:
            return None
        kind = statement[0]
        if kind == "kernel" and len(statement) == 2 and isinstance(statement[1], str):
            body.append(("kernel", statement[1]))
        elif kind == "use" and len(statement) == 2 and statement[1] in STREAMS:
            body.append(("use", statement[1]))
        elif kind == "with" and len(statement) == 3 and statement[1] in STREAMS:
            inner = _as_program(statement[2])
            if inner is None:
                return None
            body.append(("with", statement[1], inner))
        else:
            return None
    return tuple(body)


def _added_uses(got: Program, given: Program) -> int | None:
    """How many use() lines `got` adds to `given`, or None when it differs from `given` in anything else (a
    statement left out, changed, moved, or added that is not a use())."""
    added, i = 0, 0
    for statement in got:
        mate = given[i] if i < len(given) else None
        if mate is not None and statement[0] == "with" and mate[0] == "with" and statement[1] == mate[1]:
            inner = _added_uses(statement[2], mate[2])
            if inner is None:
                return None
            added, i = added + inner, i + 1
        elif statement == mate:
            i += 1
        elif statement[0] == "use":
            added += 1
        else:
            return None
    return added if i == len(given) else None


def _read_back(got: object, given: Program) -> tuple[Program | None, int | None]:
    """`got` as a program (None where it is not one), and how many use() lines it adds to `given` (None where it
    changes more)."""
    program = _as_program(got)
    return program, None if program is None else _added_uses(program, given)


def _each_kernel(program: Program, names: Sequence[str]) -> Program:
    """The program itself where no two of its kernels' `names` are one; else the program with its kernels named k1,
    k2, ... in line order, as every program is that `_as_read` did not name (the references give a stream a name)."""
    return program if len(set(names)) == len(names) else _numbered(program)


# For each program: its kernels' names (`_kernels`), the program as the references name its kernels (`_each_kernel`),
# the stream its author meant for each kernel, and the fewest use() lines
_Expected = tuple[tuple[str, ...], Program, dict[str, str], int]
_KEPT: dict[int, tuple[Sequence[Program], list[_Expected]]] = {}


def _expectations(programs: Sequence[Program], keep: bool = False) -> list[_Expected]:
    """`_Expected` for each of `programs`; with `keep`, kept for the next call with the same object (the check's own
    cached lists, judged again at every call: the small programs, and those as read)."""
    kept = _KEPT.get(id(programs))
    if kept is not None and kept[0] is programs:
        return kept[1]
    made = []
    for program in programs:
        names = tuple(_kernels(program))
        given = _each_kernel(program, names)
        made.append((names, given, meant_streams(given), fewest_uses(program)))
    if keep:
        _KEPT[id(programs)] = (programs, made)
    return made


DEPTH_HINT = ("a program may be thousands of statements long, and its blocks nested thousands deep: a recursion one "
              "call deeper for each statement of a body runs out of Python's stack. Walk a body's statements in a "
              "loop, and go one call deeper for each block only")


def check_as_meant(as_meant: Callable[[Program], Program]) -> None:
    """as_meant(program) must return the program with use() lines added, as few as can do it, so that CuPy (run in a
    fresh thread: it starts on the null stream) queues each kernel on the stream the author meant (`meant_streams`:
    a `with` block's end gives back the stream current at its start).

    Compared with CuPy (`streams_of`: CuPy itself where it runs, its rules elsewhere) and with `fewest_uses`, each
    kernel by its place, on every small program (`small_programs()`, fewest lines first: the first that fails is
    named; those without kernels too), then on those as read from a file (`read_programs()`: kernel names repeated,
    strings not the interned literals), then on chosen larger ones (`AT_EACH_LEVEL`: the rule needed twice in a
    stretch, inside up to 12 blocks; `DEEP_AND_BACK`, up to 300 blocks deep; `LONG_PROGRAM`, bodies of 1200
    statements: a RecursionError there FAILs; `NAMED_OTHERWISE`; `DEEPEST`, 3000 blocks deep, with the recursion limit
    raised for it), then on generated ones (`programs()`: `with` blocks nested at any depth, use() anywhere), shrunk
    to the smallest that fails."""
    with exercise("as_meant") as ex:
        answer = ex.answer(as_meant)
        yours = settings.keeping(ex, answer, KEPT_SETTINGS)
        cupy_here = has_cupy()

        def expect(ok: bool, problem: Callable[[], str], hint: str) -> None:
            """ex.expect, with the problem written only when there is one (thousands of programs, each a message)."""
            ex.expect(ok, "" if ok else problem(), hint)

        def rewrite(program: Program, call: Callable[[Program], object] = yours) -> object:
            """Your program for `program`, with an error of yours noted with the program it came from."""
            try:
                if cupy_here:
                    with _cupy_streams_switched() as switched:
                        got = call(program)
                else:  # (nothing to watch: thousands of calls)
                    switched, got = [], call(program)
            except ExerciseFailed:
                raise
            except RecursionError:  # a body thousands of statements long, or blocks thousands deep (rounds 26, 32)
                ex.expect(False, f"for the program `{_on_one_line(program)}`, your function raised RecursionError",
                          DEPTH_HINT)
                raise
            except Exception as error:
                if not is_stub(error):
                    error.add_note(f"as_meant: your function raised this for the program `{_on_one_line(program)}` "
                                   "(the small programs come first, fewest lines first)")
                raise
            replaced = [str(place) for place in switched if isinstance(place, str)]
            expect(not replaced, lambda: f"for the program `{_on_one_line(program)}`, your function replaced CuPy's "
                                         f"{', '.join(replaced)} (the check put "
                                         f"{'it' if len(replaced) == 1 else 'them'} back)",
                   "the program runs on CuPy as CuPy is, for the caller too: leave CuPy's streams as they are, and "
                   "add use() lines to the program")
            expect(not switched, lambda: f"for the program `{_on_one_line(program)}`, your function switched CuPy's "
                                         "streams itself",
                   "work it out from CuPy's rules, without running the program: the check runs your program on "
                   "CuPy to compare")
            return got

        def judged(program: Program, got: object, on_cupy: Mapping[str, str] | None = None,
                   read: tuple[Program | None, int | None] | None = None, expected: _Expected | None = None) -> None:
            """`on_cupy`: CuPy's streams for the kernels of `got` (`_each_kernel`'s names); `read`: `got` as a
            program, and the use() lines it adds (`_read_back`); `expected`: `_expectations`; where known already."""
            rewritten, added = _read_back(got, program) if read is None else read
            expect(rewritten is not None,
                   lambda: f"for the program `{_on_one_line(program)}`, as_meant returned {shown(got)}; expected a "
                           "program like the one given (nested tuples)",
                   'return the given program with statements ("use", stream) added to its bodies')
            assert rewritten is not None
            expect(added is not None,
                   lambda: f"for the program `{_on_one_line(program)}`, as_meant returned "
                           f"`{_on_one_line(rewritten)}`, which changes more than use() lines",
                   "keep every kernel, use() and `with` block of the program, in its place; only add use() lines")
            assert added is not None
            # each kernel judged by its place, whatever its name: a name may come more than once (`_as_read`); the
            # answer's kernels are the program's, in the same order (`_added_uses`)
            names, given, want, fewest = _expectations([program])[0] if expected is None else expected
            yours_named = rewritten if given is program else _numbered(rewritten)
            have = streams_of(yours_named) if on_cupy is None else on_cupy
            wrong = [k for k in (names if given is program else _kernels(given)) if have[k] != want[k]]
            if wrong:
                first = wrong[0]
                name = first if given is program else (
                    f"{_kernel_names(program)[int(first[1:]) - 1]} (kernel {first[1:]} in line order)")
                ex.expect(False, f"for the program `{_on_one_line(program)}`, you returned "
                                 f"`{_on_one_line(rewritten)}`: CuPy queues {name} on {have[first]}, and the author "
                                 f"meant {want[first]}" + (f" ({len(wrong)} kernels elsewhere)" if len(wrong) > 1 else
                                                           ""),
                          _STREAM_HINTS[_last_change(yours_named)[first]])
            expect(added <= fewest,
                   lambda: f"for the program `{_on_one_line(program)}`, you returned `{_on_one_line(rewritten)}`: "
                           f"{added} use() {'line' if added == 1 else 'lines'} added, where {fewest} can do it",
                   "after the end of which blocks does CuPy's stack already give back the stream the author "
                   "meant? And is a kernel still to come there before the stream changes again?")

        def judged_in_order(fixed: Sequence[Program], keep: bool = False) -> None:
            """Each of `fixed` judged in order (on CuPy, in one thread): the first that fails is named.  `keep`: what
            the author meant, kept for the next call (`_expectations`: the check's own cached lists)."""
            passed = ex.passed
            # the settings read before the run and after it, not at each call (thousands: 90 us a call)
            rewritten = settings.keeping(ex, lambda: [rewrite(program, answer) for program in fixed], KEPT_SETTINGS)()
            read = [_read_back(got, program) for program, got in zip(fixed, rewritten)]
            expected = _expectations(fixed, keep)
            well_formed = []  # CuPy runs the answer's programs up to the first that is not one (judged() names it)
            for program, (as_program, added), (_, given, _, _) in zip(fixed, read, expected):
                if as_program is None or added is None:
                    break
                well_formed.append(as_program if given is program else _numbered(as_program))
            on_cupy = streams_of_each(well_formed)
            for k, (program, got) in enumerate(zip(fixed, rewritten)):
                judged(program, got, on_cupy[k] if k < len(on_cupy) else None, read[k], expected[k])
            ex.passed = passed + len(fixed)  # one check a program, as for_all counts them

        judged(SMALLEST_PROGRAM, rewrite(SMALLEST_PROGRAM))  # first, alone: an unfinished answer says TODO at once
        judged_in_order(small_programs(), keep=True)
        judged_in_order(read_programs(), keep=True)  # as read from a file: kernel names repeated, new strings
        # then the chosen larger ones, before the generated ones: a rule applied down to some depth only, or a stack
        # bounded, fails here at once, on the first program that goes deeper (no generated program to shrink)
        judged_in_order([EXAMPLE_PROGRAM, DEEP_PROGRAM, *AT_EACH_LEVEL, *DEEP_AND_BACK, LONG_PROGRAM,
                         *NAMED_OTHERWISE])
        with _recursion_room(3000):
            judged_in_order([DEEPEST])
        for_all(ex, programs(), lambda program: judged(program, rewrite(program)), examples=30,
                describe=_on_one_line)


register(Exercise(NOTEBOOK, "as_meant", check_as_meant))


