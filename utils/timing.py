"""Timing code correctly on the CPU and on a GPU.

GPU work is asynchronous: a PyTorch or CuPy call returns as soon as its kernel is *queued*, so a
host clock read right after it measures the launch, not the work.  `benchmark` avoids the usual
mistakes in one place:

1. **Warm-up.** The first calls pay for CUDA context creation, library loading and kernel
   compilation; they are run and discarded.
2. **Synchronization.** On a GPU each timed block is bracketed by CUDA events recorded on the
   current stream, and the host waits for the end event before reading the time.
3. **Blocks of calls.** Each timed block runs the function `calls_per_block` times back to back, so
   one block lasts at least `block_time`. That hides the event resolution (~0.5 µs) and the cost of
   synchronizing, and measures what a real program sees: calls queued one after another.
   On a GPU each block starts with one more, untimed, call: the start event waits behind it, so
   the clock does not also count the host launching the first timed call onto an idle GPU (on an
   H100 that launch added 1% to 1 ms blocks of short kernels, and 5% for a Linear layer).  For a
   call shorter than its own launch the GPU idles between calls anyway: such code is launch-bound,
   and the time per call is then the host's pace, which is what a real program would see too.
   So `fn` runs `calls_per_block + 1` times per block: it must be safe to repeat (no in-place
   accumulation whose cost grows), and only work it queues on the current stream is timed.
4. **Repeats and spread.** Blocks are repeated until `min_time` has passed (and at least
   `min_blocks` times).  The median per-call time is the answer, the interquartile range (IQR) its
   spread, and every block's raw time is kept for plots.
5. **Optionally, a cold cache.** With `flush_l2=True` every timed call starts with an empty L2
   cache: a large buffer is read before each call (triton.testing.do_bench overwrites one instead,
   which leaves the cache full of dirty lines), and each block is that one call.

`torch.utils.benchmark.Timer.blocked_autorange` does the same for PyTorch alone; this helper also
times CuPy and plain Python, keeps the raw times, and prints in one fixed format (`format_time`,
in utils/formatting.py) that tests/nbval_sanitize.cfg can mask.  `as_timing` wraps other tools'
results (torch.utils.benchmark, cupyx.profiler.benchmark, triton.testing.do_bench) as a `Timing`,
so `compare` and `plot_timings` show them side by side.  (Fresh processes that each measure alone,
their slow start-ups side by side: `utils.run_in_turn`, in utils/processes.py.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

import numpy as np
import torch

from .claims import claim
from .device import has_cuda, require_cuda, require_cupy
from .formatting import format_time

Backend = Literal["auto", "cpu", "cuda", "cupy"]


class BenchmarkError(RuntimeError):
    """The function being timed failed; the message says when and how."""


# --------------------------------------------------------------------------------------------
# Clocks: start() then stop() -> elapsed seconds, with the synchronization each device needs.
# --------------------------------------------------------------------------------------------
class _HostClock:
    """perf_counter: right for CPU code, which is finished when the call returns."""

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def stop(self) -> float:
        return time.perf_counter() - self._t0


class _TorchCudaClock:
    """CUDA events recorded on PyTorch's current stream: they time the GPU's work, not the launches."""

    def __init__(self) -> None:
        self._begin = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def start(self) -> None:
        self._begin.record()

    def stop(self) -> float:
        self._end.record()
        self._end.synchronize()  # the host waits here for everything queued before the event
        return self._begin.elapsed_time(self._end) / 1e3  # elapsed_time is in milliseconds


class _CupyClock:
    """The same with CuPy's events, on CuPy's current stream."""

    def __init__(self) -> None:
        import cupy

        self._cupy = cupy
        self._begin = cupy.cuda.Event()
        self._end = cupy.cuda.Event()

    def start(self) -> None:
        self._begin.record()

    def stop(self) -> float:
        self._end.record()
        self._end.synchronize()
        return self._cupy.cuda.get_elapsed_time(self._begin, self._end) / 1e3


def _resolve(backend: str) -> str:
    if backend == "auto":
        return "cuda" if has_cuda() else "cpu"
    if backend == "cuda":
        require_cuda("backend='cuda'")
    elif backend == "cupy":
        require_cupy("backend='cupy'")
    elif backend != "cpu":
        raise ValueError(f"backend must be 'auto', 'cpu', 'cuda' or 'cupy', not {backend!r}")
    return backend


def _clock(backend: str) -> _HostClock | _TorchCudaClock | _CupyClock:
    if backend == "cuda":
        return _TorchCudaClock()
    return _CupyClock() if backend == "cupy" else _HostClock()


FLUSH_BYTES = 256 * 2**20  # as much as triton.testing.do_bench uses; at least twice the L2 is used


def l2_flusher(backend: str = "cuda") -> Callable[[], object]:
    """A function that evicts the GPU's L2 cache: it reads a buffer of 256 MiB (or twice the
    cache's size, if larger), summing it.

    The read is queued on the current stream like any kernel, so a kernel queued after it finds
    none of its own data in L2 (a "cold cache").  Reading, not writing: a flush that writes
    (do_bench zeroes its buffer) leaves L2 full of dirty lines, which the timed kernel must then
    write back to memory as it evicts them, so its "cold" time includes that traffic.  A read also
    forces the timed kernel's own dirty lines from the previous call out *before* the clock starts.
    Reading 256 MiB keeps the GPU busy (~0.1 ms on an H100) while the host queues the timed call,
    so its launch is not timed either.
    backend: 'cuda' (PyTorch) or 'cupy'.
    """
    if backend == "cuda":
        require_cuda("flushing the L2 cache")
        l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        words = torch.zeros(max(FLUSH_BYTES, 2 * l2_bytes) // 4, dtype=torch.int32, device="cuda")
        return words.sum
    if backend == "cupy":
        require_cupy("flushing the L2 cache")
        import cupy

        l2_bytes = cupy.cuda.Device().attributes["L2CacheSize"]
        cupy_words = cupy.zeros(max(FLUSH_BYTES, 2 * l2_bytes) // 4, dtype=cupy.int32)
        return cupy_words.sum
    raise ValueError(f"flushing the L2 cache needs a GPU backend ('cuda' or 'cupy'), not {backend!r}")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
@dataclass
class Timing:
    """Per-call times of one benchmark: `times[i]` is block i's duration divided by its calls."""

    label: str
    times: np.ndarray
    calls_per_block: int = 1
    backend: str = "cpu"

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def q1(self) -> float:
        return float(np.percentile(self.times, 25))

    @property
    def q3(self) -> float:
        return float(np.percentile(self.times, 75))

    @property
    def iqr(self) -> float:
        """Interquartile range: the width of the middle half of the measurements."""
        return self.q3 - self.q1

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    def __str__(self) -> str:
        return (
            f"{self.label}: median {format_time(self.median)}, IQR {format_time(self.iqr)} "
            f"({len(self.times)} blocks x {self.calls_per_block} call{'s' * (self.calls_per_block != 1)}, "
            f"{self.backend})"
        )


def benchmark(
    fn: Callable[..., Any],
    *args: Any,
    label: str | None = None,
    backend: Backend = "auto",
    warmup: float = 0.05,
    block_time: float = 1e-3,
    min_time: float = 0.2,
    min_blocks: int = 10,
    flush_l2: bool = False,
    **kwargs: Any,
) -> Timing:
    """Time `fn(*args, **kwargs)` and return its per-call `Timing`.

    backend: 'cpu' (host clock), 'cuda' (PyTorch's CUDA events), 'cupy' (CuPy's events), or
        'auto': 'cuda' when PyTorch sees a GPU, else 'cpu'.
    warmup: seconds of discarded calls before timing (at least one call, which pays for any
        initialization: CUDA context, library loading, kernel compilation).
    block_time: the shortest timed block; calls are grouped so each block lasts at least this.
    min_time, min_blocks: keep timing blocks until both are reached.
    flush_l2: on a GPU, evict the L2 cache before every timed call (see `l2_flusher`); each block
        is then a single call, so the function should take well over the events' ~1 µs resolution.
    """
    if not callable(fn):
        raise TypeError(
            f"benchmark() needs something to call, got a {type(fn).__name__}. "
            "Pass the function, or wrap an expression: benchmark(lambda: x @ x)."
        )
    name = str(label or getattr(fn, "__name__", "function"))
    device = _resolve(backend)
    if flush_l2 and device == "cpu":
        require_cuda("benchmark(flush_l2=True)")  # says why there is no GPU, where there is none
        raise ValueError("flush_l2=True needs a GPU backend ('cuda' or 'cupy'), not 'cpu'")
    clock = _clock(device)
    flush = l2_flusher(device) if flush_l2 else None

    def timed(calls: int) -> float:
        """Seconds for `calls` back-to-back calls, waiting for the device at the end."""
        try:
            if flush is not None:
                flush()  # queued before the start event: evicts L2, and is not timed
            elif device != "cpu":
                fn(*args, **kwargs)  # untimed: the GPU works on it while the timed calls are queued
            clock.start()
            for _ in range(calls):
                fn(*args, **kwargs)
            return clock.stop()
        except torch.cuda.OutOfMemoryError:
            raise  # left as it is, so that `except torch.cuda.OutOfMemoryError` still catches it
        except Exception as err:
            note = " (a CUDA error may also come from earlier, asynchronous work)" if device != "cpu" else ""
            raise BenchmarkError(f"{name} raised {type(err).__name__} while being timed{note}: {err}") from err

    # Warm-up: the first call pays for initialization; then warm up for `warmup` seconds.
    first = timed(1)
    spent, calls = first, 1
    while spent < warmup:
        spent += timed(calls)
        calls = min(2 * calls, 1000)

    # Calibrate: enough calls per block that a block lasts at least `block_time`.
    probe = max(timed(1), 1e-9)
    per_block = max(1, math.ceil(block_time / probe))
    per_block = max(1, math.ceil(block_time / max(timed(per_block) / per_block, 1e-9)))
    if flush is not None:
        per_block = 1  # only the first call after a flush finds a cold cache

    times: list[float] = []
    started = time.perf_counter()
    while len(times) < min_blocks or time.perf_counter() - started < min_time:
        times.append(timed(per_block) / per_block)
    return Timing(name, np.asarray(times), per_block, device)


# --------------------------------------------------------------------------------------------
# A timer for a block of code, and a side-by-side table
# --------------------------------------------------------------------------------------------
@dataclass
class Elapsed:
    """Filled in when the `timer` block ends."""

    label: str
    seconds: float = field(default=float("nan"))

    def __str__(self) -> str:
        return f"{self.label}: {format_time(self.seconds)}"


@contextmanager
def timer(label: str = "block", backend: Backend = "auto", verbose: bool = True) -> Iterator[Elapsed]:
    """Time one run of a `with` block, waiting for the device's work queued inside it.

    >>> with timer("matmul") as t:   # doctest: +SKIP
    ...     y = x @ x
    matmul: 1.23 ms

    One run includes whatever that run pays for (warm-up, allocation); use `benchmark` for a
    steady-state number.
    """
    clock = _clock(_resolve(backend))
    result = Elapsed(label)
    clock.start()
    yield result
    result.seconds = clock.stop()
    if verbose:
        print(result)


def as_timing(result: Any, label: str | None = None, unit: float = 1.0, backend: str = "cuda") -> Timing:
    """Another tool's measurements as a `Timing`, for `compare` and `plot_timings`.

    result may be
    - a torch.utils.benchmark `Measurement`: its per-call times (`.times`, in seconds);
    - the result of cupyx.profiler.benchmark: its GPU times on the first device (`.gpu_times[0]`,
      in seconds); pass `result.cpu_times` to get the host's times instead;
    - a sequence of per-call times, in units of `unit` seconds: triton.testing.do_bench(...,
      return_mode="all") returns milliseconds, so pass unit=1e-3.
    backend is only a note, printed in the one-line summary.
    """
    if hasattr(result, "number_per_run") and hasattr(result, "times"):  # torch.utils.benchmark
        return Timing(label or result.title, np.asarray(result.times, dtype=float), result.number_per_run, backend)
    if hasattr(result, "gpu_times") and hasattr(result, "cpu_times"):  # cupyx.profiler.benchmark
        return Timing(label or result.name, np.asarray(result.gpu_times[0], dtype=float), 1, backend)
    times = np.asarray(result, dtype=float).ravel() * unit
    if times.size == 0:
        raise ValueError("as_timing() got no times")
    return Timing(label or "times", times, 1, backend)


def compare(timings: Sequence[Timing], baseline: int = 0) -> str:
    """A fixed-width table of several timings; 'relative' is each median over `timings[baseline]`'s."""
    if not timings:
        raise ValueError("compare() needs at least one Timing")
    base = timings[baseline].median
    if base <= 0:
        raise ValueError(f"compare(): the baseline {timings[baseline].label!r} has a median of {base}")
    width = max(12, *(len(t.label) for t in timings))
    rows = [f"{'':<{width}}  {'median':>9}  {'IQR':>9}  {'IQR/med':>7}  {'relative':>9}"]
    for t in timings:
        rows.append(
            f"{t.label:<{width}}  {format_time(t.median):>9}  {format_time(t.iqr):>9}  "
            f"{t.iqr / t.median:>7.1%}  {_ratio(t.median / base):>8}x"
        )
    return "\n".join(rows)


def _ratio(ratio: float) -> str:
    """Two decimals, or two significant digits below 0.1 (so that 72 µs against 15 ms is not 0.00x)."""
    return f"{ratio:.2f}" if ratio >= 0.095 else f"{ratio:.2g}"


# --------------------------------------------------------------------------------------------
# A GPU workload of known duration
# --------------------------------------------------------------------------------------------
def _spin_rate(spin: Callable[[int], object], clock: _TorchCudaClock | _CupyClock) -> float:
    """Cycles per second of a kernel that spins for a given number of clock cycles: the median of
    three 20-million-cycle runs (~10 ms each), each between two events of `clock`, after a first
    one that loads (or compiles) the kernel and lets the clock ramp up."""
    cycles, rates = 20_000_000, []
    spin(cycles)
    for _ in range(3):
        clock.start()
        spin(cycles)
        rates.append(cycles / clock.stop())
    return float(np.median(rates))


@cache
def gpu_cycles_per_second() -> float:
    """How many clock cycles `torch.cuda._sleep` spins per second on this GPU (measured once).

    torch.cuda._sleep(cycles) queues a kernel that spins for `cycles` clock cycles: PyTorch's own
    test suite uses it to keep a stream busy.  Its duration follows the SM clock, so we measure it
    (`_spin_rate`).  A card that later throttles (a 70 W T4 under load) spins slower, so treat
    durations from `gpu_sleep` as approximate.
    """
    require_cuda("gpu_sleep()")
    return _spin_rate(torch.cuda._sleep, _TorchCudaClock())


def gpu_time_per_call(fn: Callable[[], object], calls: int = 200) -> float:
    """Seconds per call of GPU work queued back to back: one pair of CUDA events around `calls`
    calls, after as many warm-up calls.

    The simplest correct GPU measurement, and the reference the course checks `benchmark` against:
    no per-block boundaries, so nothing but the work (and any launch gaps) is counted.
    """
    require_cuda("gpu_time_per_call()")
    for _ in range(calls):
        fn()
    clock = _TorchCudaClock()
    clock.start()
    for _ in range(calls):
        fn()
    return clock.stop() / calls


def gpu_sleep(seconds: float, stream: torch.cuda.Stream | None = None) -> None:
    """Queue one kernel that keeps `stream` (default: the current one) busy for about `seconds`.

    Used to make a race window wide on purpose, or as a GPU workload of known duration.  The first
    call calibrates (about 40 ms, waiting for the GPU): call `gpu_cycles_per_second()` before a
    region you time.
    """
    cycles = int(seconds * gpu_cycles_per_second())
    if stream is None:  # the common case, kept cheap: entering a stream context costs ~20 µs of host time
        torch.cuda._sleep(cycles)
        return
    with torch.cuda.stream(stream):
        torch.cuda._sleep(cycles)


# CuPy's counterpart.  CuPy has no `_sleep`, so the course writes the spinning kernel itself: one
# thread reads the SM's cycle counter (clock64) until `cycles` have passed.  Notebook 04 uses it
# to make stream effects visible and races deterministic, as notebook 03 uses gpu_sleep.
_SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""
_spin_kernel: Any = None


def _cupy_spin(cycles: int) -> None:
    """Queue the spinning kernel (one block of one thread) on CuPy's current stream."""
    global _spin_kernel
    if _spin_kernel is None:
        import cupy

        _spin_kernel = cupy.RawKernel(_SPIN_SOURCE, "spin")
    _spin_kernel((1,), (1,), (np.int64(cycles),))


@cache
def cupy_cycles_per_second() -> float:
    """How many cycles the spinning kernel counts per second on this GPU (measured once, as for
    `gpu_cycles_per_second`, between CuPy events)."""
    require_cupy("cupy_sleep()")
    return _spin_rate(_cupy_spin, _CupyClock())


def cupy_sleep(seconds: float, stream: Any = None) -> None:
    """Queue one CuPy kernel that keeps `stream` (a cupy.cuda.Stream; default: CuPy's current
    stream) busy for about `seconds`.  The first call calibrates (about 40 ms, waiting for the GPU):
    call `cupy_cycles_per_second()` before a region you time."""
    cycles = int(seconds * cupy_cycles_per_second())
    if stream is None:
        _cupy_spin(cycles)
        return
    with stream:
        _cupy_spin(cycles)


def check_overlap(copies: float, computes: float, overlapped: float, chunks: int, library: str = "") -> None:
    """Print how much of the shorter stage (copies or computes) hid behind the longer one, and claim
    that more than half of it did.

    Times in seconds, each stage measured alone. One stream takes copies + computes; a perfect
    pipeline of `chunks` chunks takes the longer stage plus one chunk of the shorter one (the first
    copy, or the last compute, has nothing to hide behind), so at most 1 - 1/chunks of the shorter
    stage can hide (a little more shows when the stages, timed apart, vary by a few percent). The bar,
    half of it, follows what this machine measured, whichever stage is longer.
    """
    (longer, long_name), (shorter, short_name) = sorted([(copies, "copies"), (computes, "computes")], reverse=True)
    hidden = (longer + shorter - overlapped) / shorter
    prefix = f"{library}: " if library else ""
    print(f"{prefix}the {short_name} ({format_time(shorter)} alone) ran beside the {long_name} "
          f"({format_time(longer)} alone): overlapped took {format_time(overlapped)}, {overlapped / longer:.2f} "
          f"times the {long_name} alone; {min(hidden, 1.0):.0%} of the {short_name}' time hid "
          f"(at most {1 - 1 / chunks:.0%} can, on paper: one chunk of it has nothing to hide behind)")
    claim(hidden > 0.5,
          f"{prefix}copies and computes overlap: more than half of the shorter stage hid behind the longer",
          why="a GPU with one copy engine, or a host too slow to queue the chunks ahead, hides less",
          copies=format_time(copies), computes=format_time(computes), overlapped=format_time(overlapped))
