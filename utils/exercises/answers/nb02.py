"""Wrong answers, and other right ones, to the exercises of notebook 02 (benchmarking), for the
tests: SPOILERS."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from ...timing import gpu_time_per_call


# ---------------------------------------------------------------- exercise 1: time_per_call (GPU)
def sync_each(fn: Callable[[], object], n: int = 100) -> float:
    fn()
    total = 0.0
    for _ in range(n):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        total += time.perf_counter() - start
    return total / n


def no_sync(fn: Callable[[], object], n: int = 100) -> float:  # the broken version of the notebook, with a warm-up
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def no_warmup(fn: Callable[[], object], n: int = 100) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n


def total_not_per_call(fn: Callable[[], object], n: int = 100) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def events_in_milliseconds(fn: Callable[[], object], n: int = 100) -> float:
    return gpu_time_per_call(fn, calls=n) * 1e3  # right measurement, wrong unit


def synchronize_before_only(fn: Callable[[], object], n: int = 100) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def with_events(fn: Callable[[], object], n: int = 100) -> float:
    """Right too: CUDA events around the calls (utils.timing.gpu_time_per_call), in seconds."""
    return gpu_time_per_call(fn, calls=n)


# ---------------------------------------------------------------- exercise 2: the floor (CPU)
def _bytes(b: int, i: int, o: int, s: int) -> int:
    return s * (b * i + o * i + b * o)


WRONG_LINEAR_COST = {
    "FLOPs without the factor 2": lambda b, i, o, s=4: (_bytes(b, i, o, s), b * i * o),
    "forgets the output": lambda b, i, o, s=4: (s * (b * i + o * i), 2 * b * i * o),
    "forgets the weight": lambda b, i, o, s=4: (s * (b * i + b * o), 2 * b * i * o),
    "counts elements, not bytes": lambda b, i, o, s=4: (b * i + o * i + b * o, 2 * b * i * o),
    "assumes float32": lambda b, i, o, s=4: (_bytes(b, i, o, 4), 2 * b * i * o),
    "returns a list": lambda b, i, o, s=4: [_bytes(b, i, o, s), 2 * b * i * o],
}
WRONG_FRACTION = {
    "adds the two times": lambda t, n, f, bw, r: (n / bw + f / r) / t,
    "takes the smaller time": lambda t, n, f, bw, r: min(n / bw, f / r) / t,
    "inverted": lambda t, n, f, bw, r: t / max(n / bw, f / r),
    "bytes only": lambda t, n, f, bw, r: (n / bw) / t,
    "FLOPs only": lambda t, n, f, bw, r: (f / r) / t,
    "clips at 1": lambda t, n, f, bw, r: min(1.0, max(n / bw, f / r) / t),
}


# ---------------------------------------------------------------- exercise 3: which is faster (CPU)
def bootstrap(a, b, confidence: float = 0.95, statistic: Callable = np.median, seed: int = 0) -> np.ndarray:
    """The ratio statistic(a*) / statistic(b*) over bootstrap resamples, and its central interval."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(a), np.asarray(b)
    ratios = statistic(a[rng.integers(0, a.size, (2000, a.size))], axis=1) / statistic(
        b[rng.integers(0, b.size, (2000, b.size))], axis=1)
    return np.quantile(ratios, [(1 - confidence) / 2, (1 + confidence) / 2])


def verdict_of(low: float, high: float) -> str:
    return "a" if high < 1 else "b" if low > 1 else "unclear"


def with_means(a, b, confidence=0.95):
    low, high = bootstrap(a, b, confidence, statistic=np.mean)
    return verdict_of(low, high), float(low), float(high)


def with_minima(a, b, confidence=0.95):
    low, high = bootstrap(a, b, confidence, statistic=np.min)
    return verdict_of(low, high), float(low), float(high)


def no_uncertainty(a, b, confidence=0.95):
    ratio = float(np.median(a) / np.median(b))
    return verdict_of(ratio, ratio), ratio, ratio


def five_percent_threshold(a, b, confidence=0.95):
    ratio = float(np.median(a) / np.median(b))
    return ("a" if ratio < 0.95 else "b" if ratio > 1.05 else "unclear"), ratio, ratio


def swapped_ratio(a, b, confidence=0.95):
    low, high = bootstrap(b, a, confidence)  # median(b) / median(a)
    return ("a" if low > 1 else "b" if high < 1 else "unclear"), float(low), float(high)


def ignores_confidence(a, b, confidence=0.95):
    low, high = bootstrap(a, b, 0.95)
    return verdict_of(low, high), float(low), float(high)


def raw_quantiles(a, b, confidence=0.95):
    """An interval from the raw times instead of from the medians' uncertainty: far too wide."""
    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    (a_lo, a_hi), (b_lo, b_hi) = np.quantile(a, q), np.quantile(b, q)
    low, high = a_lo / b_hi, a_hi / b_lo
    return verdict_of(low, high), float(low), float(high)


def bootstrap_with_seed(seed: int) -> Callable:
    """Right too: a bootstrap of the medians with 2000 resamples and another random seed."""
    def which_is_faster(a, b, confidence=0.95):
        low, high = bootstrap(a, b, confidence, seed=seed)
        return verdict_of(low, high), float(low), float(high)
    return which_is_faster


# ---------------------------------------------------------------- exercise 4: a loop of unequal kernels (CPU)
def _loop(kernels, launch, first_launch: bool = True) -> float:
    end = 0.0
    for i, kernel in enumerate(kernels):
        end = max(end, (i + first_launch) * launch) + kernel
    return end


WRONG_LOOP_TIME = {
    "the slower side of the totals": lambda kernels, launch: max(len(kernels) * launch, float(sum(kernels))),
    "launches plus kernels, no overlap": lambda kernels, launch: len(kernels) * launch + float(sum(kernels)),
    "the slower side of each call": lambda kernels, launch: float(sum(max(launch, k) for k in kernels)),
    "each call's slower side, after the first launch": lambda kernels, launch: (
        launch + float(sum(max(launch, k) for k in kernels[1:])) + (float(kernels[0]) if len(kernels) else 0.0)),
    "the first kernel starts at 0": lambda kernels, launch: _loop(kernels, launch, first_launch=False),
    "kernels only": lambda kernels, launch: float(sum(kernels)),
    "launches only": lambda kernels, launch: len(kernels) * launch,
    "in microseconds": lambda kernels, launch: _loop(kernels, launch) * 1e6,
}


def loop_time_closed_form(kernels, launch) -> float:
    """Right too: the last kernel ends after the slowest chain "launch j, then run kernels j..n-1"."""
    kernels = np.asarray(kernels, dtype=float)
    if kernels.size == 0:
        return 0.0
    tails = np.cumsum(kernels[::-1])[::-1]  # tails[j]: kernels j to n-1, back to back
    return float(np.max((np.arange(kernels.size) + 1) * launch + tails))


def loop_time_event_by_event(kernels, launch) -> float:
    """Right too: the host's launch times first, then the GPU's start and end of each kernel."""
    launched = [launch * (i + 1) for i in range(len(kernels))]
    end = 0.0
    for ready, kernel in zip(launched, kernels):
        start = max(end, ready)
        end = start + kernel
    return end


WRONG = {
    "check_time_per_call": {f.__name__.replace("_", " "): f for f in (
        sync_each, no_sync, no_warmup, total_not_per_call, events_in_milliseconds, synchronize_before_only)},
    "check_linear_cost": WRONG_LINEAR_COST,
    "check_fraction_of_floor": WRONG_FRACTION,
    "check_which_is_faster": {f.__name__.replace("_", " "): f for f in (
        with_means, with_minima, no_uncertainty, five_percent_threshold, swapped_ratio, ignores_confidence,
        raw_quantiles)},
    "check_loop_time": WRONG_LOOP_TIME,
}
# The wrong answers of the GPU check whose mistake a CPU shows too (a host function of known duration):
# without a GPU, the check's CPU part must reject them (tests/test_exercises.py).
WRONG_ON_CPU = {"check_time_per_call": {"no warmup", "total not per call"}}
ALSO_RIGHT = {
    "check_time_per_call": {"CUDA events": with_events},
    "check_which_is_faster": {f"bootstrap, seed {seed}": bootstrap_with_seed(seed) for seed in range(5)},
    "check_loop_time": {"closed form": loop_time_closed_form, "event by event": loop_time_event_by_event},
}
