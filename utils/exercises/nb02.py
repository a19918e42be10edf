"""Checks for the exercises of notebook 02 (benchmarking): where a warm-up ends, where the GPU starts
to beat the CPU, a decision between two implementations with a confidence interval, and the time of
a loop of unequal kernels.

Every check runs on a CPU: the exercises reason about timings, and their notebook measures the GPU
around them.  A check compares your answer with its own only through a digest (`_sealed`), so that
reading this file does not give the answers away; the plain answers are in `answers/nb02.py`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable

import numpy as np

from ..timing import format_time
from . import Exercise, exercise, register

NOTEBOOK = "02_benchmarking"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)


def _sealed(value: object) -> str:
    """A digest of an answer: the check compares digests, and this file holds no answer in plain form."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def _ns(seconds: float) -> int:
    """Seconds as whole nanoseconds: the same digest for every way of adding up the same durations."""
    return round(seconds * 1e9)


# --------------------------------------------------------------------------------------------
# Exercise 1 (transfer): a warm-up of unknown length
# --------------------------------------------------------------------------------------------
def warmup_series(length: int, steady: int, pattern: str, seed: int) -> np.ndarray:
    """Times of `length` warm-up calls, then `steady` calls of about 1 ms, the same on every machine.

    The warm-up's calls are slow together (at least 1.3x the steady time, and its last five all
    slow): "decaying" slows from 20x down to 1.3x, "autotuning" tries algorithms, a quarter of them
    as fast as the steady state.  The steady calls vary by 3%, and a few of them, never two within
    ten calls, are disturbed (3x to 10x) or lucky (0.6x).
    """
    rng = np.random.default_rng(seed)
    base = 1e-3 * np.exp(0.03 * rng.standard_normal(length + steady))
    if pattern == "decaying":
        slow = np.geomspace(20.0, 1.3, length) if length else np.empty(0)
    else:
        slow = np.where(rng.random(length) < 0.25, 1.0, rng.uniform(1.3, 8.0, length))
        slow[-5:] = rng.uniform(1.3, 8.0, min(5, length))
    times = base.copy()
    times[:length] *= slow
    for k, at in enumerate(range(length + 3, length + steady - 1, 37)):  # isolated: 37 calls apart
        times[at] *= 0.6 if k % 4 == 3 else rng.uniform(3.0, 10.0)
    return times


# (what the case is, warm-up calls, steady calls, pattern, seed)
WARMUP_CASES: list[tuple[str, int, int, str, int]] = [
    ("a warm-up of 30 calls that slow down from 20x", 30, 200, "decaying", 1),
    ("no warm-up at all", 0, 200, "decaying", 2),
    ("one slow first call, as in the lecture", 1, 150, "decaying", 3),
    ("24 calls of autotuning, some of them as fast as the steady state", 24, 200, "autotuning", 4),
    ("a warm-up of 120 calls out of 300", 120, 180, "decaying", 5),
    ("60 calls of autotuning, then few steady calls", 60, 90, "autotuning", 6),
]
EARLY, LATE = 3, 6  # the warm-up end may be found this many calls early, or late


def _steady_median(times: np.ndarray, length: int) -> float:
    return float(np.median(times[length:]))


def check_warmup_end(warmup_end: Callable[[np.ndarray], tuple[int, float]]) -> None:
    """warmup_end(times) -> (k, steady): the first call of the steady state, and its typical time."""
    with exercise("warmup_end") as ex:
        for what, length, steady, pattern, seed in WARMUP_CASES:
            times = warmup_series(length, steady, pattern, seed)
            got = warmup_end(times.copy())
            ex.expect(isinstance(got, tuple) and len(got) == 2 and _is_number(got[0]) and _is_number(got[1])
                      and float(got[0]).is_integer() and math.isfinite(float(got[1])),
                      f"{what}: warmup_end returned {got!r}, not (first steady call, seconds)",
                      "return a pair: the index of the first call of the steady state (an int), and its time")
            k, typical = int(got[0]), float(got[1])
            ex.expect(k >= length - EARLY,
                      f"{what}: you say the steady state starts at call {k}, but calls after it are still "
                      "the warm-up's",
                      "a warm-up is several slow calls close together, and it can have fast calls in between: "
                      "is there a stretch of slow calls after the one you chose?")
            ex.expect(k <= length + LATE,
                      f"{what}: you say the steady state starts at call {k}, long after the slow calls end",
                      "a single slow call among steady ones is noise (another process, the clock), not warm-up: "
                      "judge a call together with its neighbours")
            want = _steady_median(times, length)
            ex.expect(abs(typical / want - 1) < 0.02,
                      f"{what}: a steady call takes {format_time(typical)} by your count, "
                      f"{abs(typical / want - 1):.0%} away from the typical steady call",
                      "the steady calls include a few disturbed and lucky ones (section 5 of the lecture): "
                      "which statistic do they not move?")


register(Exercise(NOTEBOOK, "warmup_end", check_warmup_end))


# --------------------------------------------------------------------------------------------
# Exercise 2 (transfer): from which batch on is the GPU faster?
# --------------------------------------------------------------------------------------------
# (what the case is, layer (in, out, itemsize), CPU (bandwidth, FLOP rate), GPU (bandwidth, FLOP rate, fixed
# seconds per call), link bytes per second, the largest batch tried, the answer's digest)
CrossoverCase = tuple[str, tuple[int, int, int], tuple[float, float], tuple[float, float, float], float, int, str]
CROSSOVER_CASES: list[CrossoverCase] = [
    ("a 256 x 256 float32 layer, a laptop CPU against an H100 over PCIe 5",
     (256, 256, 4), (50e9, 1e12), (3e12, 50e12, 10e-6), 50e9, 2**14, "28dae7c8bde2f3ca"),
    ("a 1024 x 1024 bfloat16 layer, a server CPU against a T4 over PCIe 3",
     (1024, 1024, 2), (200e9, 4e12), (300e9, 65e12, 20e-6), 12e9, 2**14, "a512db2741cd2069"),
    ("a 64 x 64 float32 layer: the link is slower than the CPU",
     (64, 64, 4), (100e9, 2e12), (3e12, 50e12, 10e-6), 12e9, 2**14, "dc937b59892604f5"),
    ("a 1024 x 16 float32 layer, a busy CPU against an H100 over PCIe 4",
     (1024, 16, 4), (20e9, 200e9), (3e12, 50e12, 8e-6), 25e9, 2**14, "85daaf6f7055cd57"),
]


def check_crossover_batch(crossover_batch: Callable[..., int | None]) -> None:
    """crossover_batch(layer, cpu, gpu, link, max_batch): the smallest batch at which the GPU is faster, or None."""
    with exercise("crossover_batch") as ex:
        for what, layer, cpu, gpu, link, max_batch, sealed in CROSSOVER_CASES:
            got = crossover_batch(layer, cpu, gpu, link, max_batch)
            ex.expect(got is None or (_is_number(got) and float(got).is_integer()),
                      f"{what}: crossover_batch returned {got!r}, not a batch size or None",
                      "return the batch size as an int, or None if the GPU is never faster up to max_batch")
            ok = _sealed(None if got is None else int(got)) == sealed
            never = sealed == _sealed(None)
            ex.expect(ok, f"{what}: crossover_batch returned {got!r}, which is not where the GPU starts to be faster",
                      "here the GPU never wins: can the input and the output get across the link faster than the "
                      "CPU does the whole layer?" if never else
                      "each side costs its floor (the larger of moving its bytes and doing its FLOPs); the GPU also "
                      "pays its fixed cost, and the link for what must cross it each call (not the weight, "
                      "which stays on the GPU): which batch is the first where the GPU's total is smaller?")


register(Exercise(NOTEBOOK, "crossover_batch", check_crossover_batch))


# --------------------------------------------------------------------------------------------
# Exercise 3: which of two implementations is faster, and how sure are we?
# --------------------------------------------------------------------------------------------
def _spread(median: float, sigma: float, n: int, rng: np.random.Generator) -> np.ndarray:
    return median * np.exp(sigma * rng.standard_normal(n))


def faster_cases() -> list[tuple[str, np.ndarray, np.ndarray, str]]:
    """(what it tests, times of a, times of b, the right verdict), the same on every machine."""
    rng = np.random.default_rng(2)
    a_clear, b_clear = _spread(1.0e-3, 0.02, 40, rng), _spread(1.2e-3, 0.02, 40, rng)
    noisy = _spread(1.0e-3, 0.05, 30, rng)
    outliers = _spread(1.0e-3, 0.01, 60, rng)
    outliers[::5] = 20e-3  # every fifth run was disturbed (another process, a clock change)
    lucky = _spread(1.1e-3, 0.01, 40, rng)
    lucky[7] = 0.5e-3  # one run much faster than the rest
    few = np.array([0.6, 0.9, 1.0, 1.3, 1.8]) * 1e-3
    return [
        ("a clearly faster", a_clear, b_clear, "a"),
        ("b clearly faster", b_clear, a_clear, "b"),
        ("0.3% apart, 5% noise", noisy, rng.permutation(noisy) * 1.003, "unclear"),
        ("a faster, with 20% outliers", outliers, _spread(1.1e-3, 0.01, 60, rng), "a"),
        ("1% apart, 0.1% noise", _spread(1.00e-3, 0.001, 50, rng), _spread(1.01e-3, 0.001, 50, rng), "a"),
        ("5 noisy runs each", few, rng.permutation(few) * 1.3, "unclear"),
        ("b faster, a had one lucky run", lucky, _spread(1.0e-3, 0.01, 40, rng), "b"),
    ]


def check_which_is_faster(which_is_faster: Callable[..., tuple[str, float, float]]) -> None:
    """which_is_faster(a, b, confidence) -> (verdict, low, high) for median(a) / median(b)."""
    with exercise("which_is_faster") as ex:
        for what, a, b, verdict in faster_cases():
            got = which_is_faster(a, b)
            ex.expect(isinstance(got, tuple) and len(got) == 3 and got[0] in ("a", "b", "unclear"),
                      f"which_is_faster returned {got!r}, not ('a' | 'b' | 'unclear', low, high)",
                      "return verdict, low, high")
            said, low, high = got
            ratio = float(np.median(a) / np.median(b))
            ex.expect(_is_number(low) and _is_number(high) and low <= ratio <= high,
                      f"{what}: median(a) / median(b) is {ratio:.4f}, outside your interval ({low:.4g}, {high:.4g})",
                      "give an interval for median(a) / median(b) (not b / a), around the measured ratio")
            ex.expect(said == verdict,
                      f"{what}: you said {said!r}, but {verdict!r} is right "
                      f"(median(a) / median(b) = {ratio:.4f}, your interval ({low:.4f}, {high:.4f}))",
                      "outliers and lucky runs mislead some statistics more than others (section 5 of the "
                      "lecture); and the verdict should follow from the whole interval, not from one ratio")
            if verdict != "unclear":
                ex.expect(high / low < 1.1, f"{what}: your interval ({low:.4f}, {high:.4f}) is too wide",
                          "the interval should reflect how much the medians move when the measurements are "
                          "resampled, not how much single times vary")
        a, b = faster_cases()[5][1:3]
        _, low50, high50 = which_is_faster(a, b, confidence=0.5)
        _, low99, high99 = which_is_faster(a, b, confidence=0.99)
        ex.expect(high99 - low99 > high50 - low50,
                  f"the 99% interval ({low99:.3g}, {high99:.3g}) is not wider than "
                  f"the 50% one ({low50:.3g}, {high50:.3g})",
                  "the interval must depend on `confidence`: a surer statement needs a wider interval")


register(Exercise(NOTEBOOK, "which_is_faster", check_which_is_faster))


# --------------------------------------------------------------------------------------------
# Exercise 4 (transfer): how long a loop of unequal kernels takes, queued back to back
# --------------------------------------------------------------------------------------------
US = 1e-6
# (what the case is, kernel durations in launch order, seconds per launch, the answer's digest), the same on
# every machine
LOOP_CASES: list[tuple[str, list[float], float, str]] = [
    ("kernels of 1, 100, 1, 1 and 50 µs, 10 µs per launch", [1 * US, 100 * US, 1 * US, 1 * US, 50 * US], 10 * US,
     "5487634664968175"),
    ("ten 1 µs kernels, 5 µs per launch (launch-bound)", [1 * US] * 10, 5 * US, "9c978dcb04837772"),
    ("ten 100 µs kernels, 5 µs per launch (GPU-bound)", [100 * US] * 10, 5 * US, "f64d9b7af447a954"),
    ("nine 1 µs kernels, then one of 100 µs, 10 µs per launch", [1 * US] * 9 + [100 * US], 10 * US, "b552e632666bbf61"),
    ("one 100 µs kernel, then nine of 1 µs, 10 µs per launch", [100 * US] + [1 * US] * 9, 10 * US, "8298dcd54acb4650"),
    ("50 µs and 1 µs kernels in turn, 20 µs per launch", [50 * US, 1 * US] * 5, 20 * US, "36dd775e507e2de1"),
    ("one 3 ms kernel, 5 µs per launch", [3e-3], 5 * US, "66d2bddbb9498830"),
    ("no kernels at all", [], 5 * US, "5feceb66ffc86f38"),
]


def _diagnosis(got: float, kernels: list[float], launch: float, sealed: str) -> str:
    """A hint for a wrong loop_time, from the shortcut its result matches (without giving the answer)."""
    n, work = len(kernels), float(sum(kernels))

    def matches(value: float) -> bool:
        return math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-12)

    if _sealed(_ns(got / 1e3)) == sealed or _sealed(_ns(got / 1e6)) == sealed:
        return "everything is in seconds: the kernels, the launch and your answer"
    if matches(max(n * launch, work)):
        return ("the slower side of the totals holds for equal calls; here the order matters: can a kernel start "
                "before the host has launched it, even if the GPU is idle?")
    if matches(n * launch + work):
        return "the host does not wait for the GPU: while a kernel runs, the host goes on launching the next ones"
    per_call = sum(max(launch, k) for k in kernels)
    if matches(per_call) or (n and matches(launch + kernels[0] + per_call - max(launch, kernels[0]))):
        return ("the slower side of each call is not enough: during a long kernel the host launches several short "
                "ones, which then run one after another without waiting for a launch each")
    if _sealed(_ns(got + launch)) == sealed:
        return "the first kernel cannot start at time 0: its launch has to return first"
    return ("follow the kernels in launch order: for each one, when can it start at the earliest (two things must "
            "have happened), and when does it end?")


def check_loop_time(loop_time: Callable[..., float]) -> None:
    """loop_time(kernels, launch): seconds from the start of the first launch until the last kernel ends."""
    with exercise("loop_time") as ex:
        for what, kernels, launch, sealed in LOOP_CASES:
            for given in (list(kernels), np.array(kernels, dtype=float)):
                got = loop_time(given, launch)
                ex.expect(_is_number(got) and math.isfinite(float(got)),
                          f"loop_time returned {got!r}, not a number of seconds", "return the seconds as a float")
                ex.expect(_sealed(_ns(float(got))) == sealed,
                          f"{what}: loop_time returned {format_time(float(got))}, which is not when the last "
                          "kernel ends", _diagnosis(float(got), kernels, launch, sealed))


register(Exercise(NOTEBOOK, "loop_time", check_loop_time))
