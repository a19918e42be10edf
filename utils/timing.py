"""Timing code correctly on the CPU and on a GPU.

GPU work is asynchronous: a PyTorch or CuPy call returns as soon as its kernel is *queued*, so a
host clock read right after it measures the launch, not the work.  `benchmark` avoids the usual
mistakes in one place:

1. **Warm-up.** The first calls pay for CUDA context creation, library loading and kernel
   compilation; they are run and discarded.
2. **Synchronization.** On a GPU each timed block is bracketed by CUDA events recorded on the
   current stream, and the host waits for the end event before reading the time.
3. **Blocks of calls.** Each timed block runs the function `calls_per_block` times back to back, so
   one block lasts at least `block_time`. That hides the event resolution (~0.5 us) and the cost of
   synchronizing, and measures what a real program sees: calls queued one after another.
4. **Repeats and spread.** Blocks are repeated until `min_time` has passed (and at least
   `min_blocks` times).  The median per-call time is the answer, the interquartile range (IQR) its
   spread, and every block's raw time is kept for plots.

`torch.utils.benchmark.Timer.blocked_autorange` does the same for PyTorch alone; this helper also
times CuPy and plain Python, keeps the raw times, and prints in one fixed format (see
`format_time`) that tests/nbval_sanitize.cfg can mask.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from .device import has_cuda, require_cuda, require_cupy

Backend = Literal["auto", "cpu", "cuda", "cupy"]


class BenchmarkError(RuntimeError):
    """The function being timed failed; the message says when and how."""


def three_digits(value: float) -> str:
    """A number with 3 significant digits, trailing zeros kept: 2.00, 12.5, 812."""
    if value == 0 or not math.isfinite(value):
        return f"{value:.2f}"
    rounded = float(f"{value:.3g}")  # round first: 0.9996 -> 1.0, which needs two decimals, not three
    decimals = max(0, 2 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"


def format_time(seconds: float) -> str:
    """A duration with 3 significant digits and a unit: '812 ns', '12.3 us', '4.50 ms', '1.23 s'.

    Always '<number> <unit>', so that one pattern (tests/nbval_sanitize.cfg) masks every timing.
    """
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        text = three_digits(seconds / scale)
        if abs(float(text)) < 1000:
            return f"{text} {unit}"
    return f"{three_digits(seconds)} s"


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


def _resolve(backend: Backend) -> str:
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
    return {"cpu": _HostClock, "cuda": _TorchCudaClock, "cupy": _CupyClock}[backend]()


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
            f"({len(self.times)} blocks x {self.calls_per_block} calls, {self.backend})"
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
    **kwargs: Any,
) -> Timing:
    """Time `fn(*args, **kwargs)` and return its per-call `Timing`.

    backend: 'cpu' (host clock), 'cuda' (PyTorch's CUDA events), 'cupy' (CuPy's events), or
        'auto': 'cuda' when PyTorch sees a GPU, else 'cpu'.
    warmup: seconds of discarded calls before timing (at least one call).
    block_time: the shortest timed block; calls are grouped so each block lasts at least this.
    min_time, min_blocks: keep timing blocks until both are reached.
    """
    if not callable(fn):
        raise TypeError(
            f"benchmark() needs something to call, got a {type(fn).__name__}. "
            "Pass the function, or wrap an expression: benchmark(lambda: x @ x)."
        )
    name = label or getattr(fn, "__name__", "function")
    backend = _resolve(backend)
    clock = _clock(backend)

    def timed(calls: int) -> float:
        """Seconds for `calls` back-to-back calls, waiting for the device at the end."""
        try:
            clock.start()
            for _ in range(calls):
                fn(*args, **kwargs)
            return clock.stop()
        except Exception as err:
            raise BenchmarkError(f"{name} raised {type(err).__name__} while being timed: {err}") from err

    # Warm-up: the first call alone pays for initialization; then warm up for `warmup` seconds.
    first = timed(1)
    spent, calls = first, 1
    while spent < warmup:
        spent += timed(calls)
        calls = min(2 * calls, 1000)

    # Calibrate: enough calls per block that a block lasts at least `block_time`.
    probe = max(timed(1), 1e-9)
    per_block = max(1, math.ceil(block_time / probe))
    per_block = max(1, math.ceil(block_time / max(timed(per_block) / per_block, 1e-9)))

    times: list[float] = []
    started = time.perf_counter()
    while len(times) < min_blocks or time.perf_counter() - started < min_time:
        times.append(timed(per_block) / per_block)
    return Timing(name, np.asarray(times), per_block, backend)


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


def compare(timings: Sequence[Timing], baseline: int = 0) -> str:
    """A fixed-width table of several timings; 'relative' is each median over `timings[baseline]`'s."""
    if not timings:
        raise ValueError("compare() needs at least one Timing")
    base = timings[baseline].median
    width = max(12, *(len(t.label) for t in timings))
    rows = [f"{'':<{width}}  {'median':>9}  {'IQR':>9}  {'IQR/med':>7}  {'relative':>9}"]
    for t in timings:
        rows.append(
            f"{t.label:<{width}}  {format_time(t.median):>9}  {format_time(t.iqr):>9}  "
            f"{t.iqr / t.median:>7.1%}  {t.median / base:>8.2f}x"
        )
    return "\n".join(rows)
