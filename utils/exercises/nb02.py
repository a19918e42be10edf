"""Checks for the exercises of notebook 02 (benchmarking): a GPU benchmark that measures the work,
an operation's floor, and a decision between two implementations with a confidence interval.

`check_time_per_call` needs a GPU: without one it checks the arithmetic of the timing on a host
function of known duration, with torch.cuda.synchronize() doing nothing (`utils.exercises.cuda_on_cpu`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import torch

from ..device import has_cuda, require_cuda
from ..timing import format_time, gpu_cycles_per_second, gpu_time_per_call
from . import Exercise, cuda_on_cpu, exercise, register

NOTEBOOK = "02_benchmarking"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)


# --------------------------------------------------------------------------------------------
# Exercise 1: time_per_call(fn, n) on a GPU
# --------------------------------------------------------------------------------------------
def _gpu_sleep(seconds: float) -> Callable[[], None]:
    """A function that queues one kernel of known duration: torch.cuda._sleep with the cycles of
    `utils.timing.gpu_cycles_per_second` (calibrated once), computed here once rather than on every
    call, so that a call costs the host as little as it can."""
    cycles = int(seconds * gpu_cycles_per_second())
    return lambda: torch.cuda._sleep(cycles)


def launch_seconds(calls: int = 50) -> float:
    """The host's pace: seconds to queue one tiny kernel through `_gpu_sleep`'s function (median of 5 rounds).

    The kernels are shorter than their launch, so the GPU never holds the host back: this is the
    host's cost of a call, which a slow host (two shared cores, a busy machine) makes larger.
    """
    require_cuda("launch_seconds")
    tiny = _gpu_sleep(0.0)
    tiny()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            tiny()
        rounds.append((time.perf_counter() - start) / calls)
        torch.cuda.synchronize()
    return float(np.median(rounds))


# Tolerances, from what the check measures on this machine rather than fixed durations:
# - the short kernel lasts KERNEL_PER_LAUNCH times the host's measured launch (at least 20 us), so
#   that calls queued back to back keep the GPU busy: the GPU, not the host, sets the pace, and
#   time_per_call and the reference (CUDA events) measure the same thing, the kernel.  With 20 us
#   fixed, a host that needs more than 20 us per launch (a slow Colab host) starves the GPU, and
#   both numbers measure the host's jitter instead: 10% apart by chance.
# - an answer that synchronizes after each call adds at least a launch to every call: at least
#   1 / KERNEL_PER_LAUNCH = 25% of the short kernel, well beyond the 10% allowed;
# - an answer that never waits measures the launches: at most 1 / KERNEL_PER_LAUNCH of the kernel,
#   well under the 50% required;
# - a right answer adds one launch and one synchronization to n = 100 calls: about 1%.
KERNEL_PER_LAUNCH = 4
TRIES = 3  # a measurement that a busy host disturbed is tried again; a wrong answer fails every try


def check_time_per_call(time_per_call: Callable[..., float]) -> None:
    """time_per_call(fn, n) must return the GPU's seconds per call of fn, after a warm-up."""
    if not has_cuda():
        return _check_time_per_call_on_cpu(time_per_call)
    require_cuda("check_time_per_call")
    with exercise("time_per_call") as ex:
        short = max(20e-6, KERNEL_PER_LAUNCH * launch_seconds())
        for seconds in (short, 10 * short):
            kernel = _gpu_sleep(seconds)
            truth = gpu_time_per_call(kernel)
            for _ in range(TRIES):
                got = time_per_call(kernel, n=100)
                if not _is_number(got) or 0.5 * truth < got < 1.1 * truth:
                    break
            ex.expect(_is_number(got), f"time_per_call returned a {type(got).__name__}, not a number",
                      "return the seconds per call as a float")
            ex.expect(got > 0.5 * truth,
                      f"for a kernel that runs {format_time(truth)}, time_per_call returned {format_time(got)}: "
                      "that is the time to launch it, not to run it",
                      "a call on the GPU returns once its kernel is queued: when you read the clock, has the "
                      "GPU finished the work you are timing?")
            ex.expect(got < 1.1 * truth,
                      f"for a kernel that runs {format_time(truth)}, time_per_call returned {format_time(got)}",
                      "waiting for the GPU after every call adds a wait to each call (section 8 of the lecture); "
                      "and check the unit: seconds per call")
        # A first call slower by half of the 100 calls' time: counted, it adds 50% to the result.
        first_call_seconds = max(0.05, 50 * truth)

        def slow_first_call() -> Callable[[], None]:
            first_call: list[bool] = []

            def fn() -> None:
                if not first_call:  # like a first call that loads kernels or creates a library handle
                    time.sleep(first_call_seconds)
                    first_call.append(True)
                kernel()

            return fn

        for _ in range(TRIES):
            got = time_per_call(slow_first_call(), n=100)
            if got < 1.1 * truth:
                break
        ex.expect(got < 1.1 * truth,
                  f"for a function whose first call takes {format_time(first_call_seconds)} longer, "
                  f"time_per_call returned {format_time(got)}, not about {format_time(truth)}",
                  "a first call can pay one-time costs (section 10 of the lecture): keep it out of the calls "
                  "you time")


register(Exercise(NOTEBOOK, "time_per_call", check_time_per_call, gpu=True))

HOST_CALL_SECONDS = 1e-3  # the host function that stands in for GPU work on a CPU


def _host_seconds_per_call(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def _check_time_per_call_on_cpu(time_per_call: Callable[..., float]) -> None:
    """check_time_per_call's arithmetic on a CPU: a host function of known duration, whose first call is slow."""
    with (exercise("time_per_call") as ex,
          ex.on_cpu("the seconds per call of a host function, its slow first call left out, with "
                    "torch.cuda.synchronize() doing nothing",
                    "that the time covers the GPU's work, not only the launches, and adds no wait to each call"),
          cuda_on_cpu()):
        def work() -> None:
            time.sleep(HOST_CALL_SECONDS)

        truth = min(_host_seconds_per_call(work, 100) for _ in range(2))
        for _ in range(TRIES):  # a busy host makes a run slow now and then; a wrong answer, every time
            got = time_per_call(work, n=100)
            if not _is_number(got) or 0.5 * truth < got < 1.5 * truth:
                break
        ex.expect(_is_number(got), f"time_per_call returned a {type(got).__name__}, not a number",
                  "return the seconds per call as a float")
        ex.expect(0.5 * truth < got < 1.5 * truth,
                  f"for a function that takes {format_time(truth)} a call, time_per_call returned {format_time(got)}",
                  "time the n calls together, from before the first to after the last, and divide by n: "
                  "seconds per call")
        first_call_seconds = 100 * truth  # counted, it doubles the result

        def slow_first_call() -> Callable[[], None]:
            first_call: list[bool] = []

            def fn() -> None:
                if not first_call:  # like a first call that loads kernels or creates a library handle
                    time.sleep(first_call_seconds)
                    first_call.append(True)
                work()

            return fn

        for _ in range(TRIES):
            got = time_per_call(slow_first_call(), n=100)
            if _is_number(got) and got < 1.5 * truth:
                break
        ex.expect(_is_number(got) and got < 1.5 * truth,
                  f"for a function whose first call takes {format_time(first_call_seconds)} longer, "
                  f"time_per_call returned {format_time(got) if _is_number(got) else repr(got)}, "
                  f"not about {format_time(truth)}",
                  "a first call can pay one-time costs (section 10 of the lecture): keep it out of the calls "
                  "you time")


# --------------------------------------------------------------------------------------------
# Exercise 2: the floor of a Linear layer
# --------------------------------------------------------------------------------------------
LINEAR_CASES: list[tuple[int, int, int, int]] = [
    (10000, 512, 1024, 4),  # the Efficient Deep Learning Systems seminar's Linear in float32
    (1, 4096, 4096, 2),  # one token through a 4096 x 4096 bfloat16 layer: reading W is nearly everything
    (64, 3, 7, 8),  # float64, small and lopsided
]


def check_linear_cost(linear_cost: Callable[[int, int, int, int], tuple[int, int]]) -> None:
    """linear_cost(batch, in_features, out_features, itemsize) must return (bytes, FLOPs)."""
    with exercise("linear_cost") as ex:
        for batch, n_in, n_out, itemsize in LINEAR_CASES:
            call = f"linear_cost({batch}, {n_in}, {n_out}, {itemsize})"
            got = linear_cost(batch, n_in, n_out, itemsize)
            ex.expect(isinstance(got, tuple) and len(got) == 2, f"{call} returned {got!r}, not (bytes, flops)",
                      "return a pair: return nbytes, flops")
            nbytes, flops = got
            want_bytes = itemsize * (batch * n_in + n_out * n_in + batch * n_out)
            want_flops = 2 * batch * n_in * n_out
            ex.expect(nbytes == want_bytes, f"{call} says {nbytes} bytes, expected {want_bytes}",
                      "count every tensor the layer must read or write, once each, from its shape; "
                      "then turn elements into bytes")
            ex.expect(flops == want_flops, f"{call} says {flops} FLOPs, expected {want_flops}",
                      "how many outputs are there, how long is the dot product behind each, and how many "
                      "operations does each of its terms cost?")


register(Exercise(NOTEBOOK, "linear_cost", check_linear_cost))


# (seconds, bytes, flops, bandwidth, flop_rate): memory-bound, compute-bound, and faster than the floor
FLOOR_CASES: list[tuple[float, float, float, float, float]] = [
    (1e-3, 2e9, 1e9, 3e12, 50e12),  # floor: 0.667 ms of memory traffic
    (0.3e-3, 6.35e7, 1.05e10, 2.9e12, 50e12),  # floor: 0.21 ms of arithmetic
    (1e-4, 6e8, 1e6, 3e12, 50e12),  # measured beats the floor: the assumed bandwidth was too low
]


def check_fraction_of_floor(fraction_of_floor: Callable[[float, float, float, float, float], float]) -> None:
    """fraction_of_floor(seconds, nbytes, flops, bandwidth, flop_rate) = floor / seconds."""
    with exercise("fraction_of_floor") as ex:
        for seconds, nbytes, flops, bandwidth, rate in FLOOR_CASES:
            got = fraction_of_floor(seconds, nbytes, flops, bandwidth, rate)
            want = max(nbytes / bandwidth, flops / rate) / seconds
            ex.expect(_is_number(got), f"fraction_of_floor returned a {type(got).__name__}, not a number",
                      "return floor / seconds as a float")
            ex.expect(math.isclose(got, want, rel_tol=1e-6),
                      f"fraction_of_floor({seconds}, {nbytes:.3g}, {flops:.3g}, {bandwidth:.3g}, {rate:.3g}) "
                      f"returned {got:.4g}, expected {want:.4g}",
                      "reread how the exercise defines the floor: moving data and computing overlap, so which "
                      "of the two times bounds the operation? And keep a value above 1: it says something")


register(Exercise(NOTEBOOK, "fraction_of_floor", check_fraction_of_floor))


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
def _loop_end(kernels: list[float], launch: float) -> float:
    """The model of the exercise: kernel i can start once its launch has returned, (i + 1) * launch,
    and once the kernel before it has ended; the GPU runs them in order, one at a time."""
    end = 0.0
    for i, kernel in enumerate(kernels):
        end = max(end, (i + 1) * launch) + kernel
    return end


US = 1e-6
# (what the case is, kernel durations in launch order, seconds per launch), the same on every machine
LOOP_CASES: list[tuple[str, list[float], float]] = [
    ("kernels of 1, 100, 1, 1 and 50 µs, 10 µs per launch", [1 * US, 100 * US, 1 * US, 1 * US, 50 * US], 10 * US),
    ("ten 1 µs kernels, 5 µs per launch (launch-bound)", [1 * US] * 10, 5 * US),
    ("ten 100 µs kernels, 5 µs per launch (GPU-bound)", [100 * US] * 10, 5 * US),
    ("nine 1 µs kernels, then one of 100 µs, 10 µs per launch", [1 * US] * 9 + [100 * US], 10 * US),
    ("one 100 µs kernel, then nine of 1 µs, 10 µs per launch", [100 * US] + [1 * US] * 9, 10 * US),
    ("50 µs and 1 µs kernels in turn, 20 µs per launch", [50 * US, 1 * US] * 5, 20 * US),
    ("one 3 ms kernel, 5 µs per launch", [3e-3], 5 * US),
    ("no kernels at all", [], 5 * US),
]


def _diagnosis(got: float, kernels: list[float], launch: float) -> str:
    """A hint for a wrong loop_time, from the shortcut its result matches (without giving the answer)."""
    n, work = len(kernels), float(sum(kernels))

    def matches(value: float) -> bool:
        return math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-12)

    if matches(_loop_end(kernels, launch) * 1e3) or matches(_loop_end(kernels, launch) * 1e6):
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
    if matches(_loop_end(kernels, launch) - launch):
        return "the first kernel cannot start at time 0: its launch has to return first"
    return ("follow the kernels in launch order: for each one, when can it start at the earliest (two things must "
            "have happened), and when does it end?")


def check_loop_time(loop_time: Callable[..., float]) -> None:
    """loop_time(kernels, launch): seconds from the start of the first launch until the last kernel ends."""
    with exercise("loop_time") as ex:
        for what, kernels, launch in LOOP_CASES:
            want = _loop_end(kernels, launch)
            for given in (list(kernels), np.array(kernels, dtype=float)):
                got = loop_time(given, launch)
                ex.expect(_is_number(got), f"loop_time returned a {type(got).__name__}, not a number",
                          "return the seconds as a float")
                ex.expect(math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12),
                          f"{what}: loop_time returned {format_time(got)}, expected {format_time(want)}",
                          _diagnosis(got, kernels, launch))


register(Exercise(NOTEBOOK, "loop_time", check_loop_time))
