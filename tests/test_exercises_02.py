"""Exercises of notebook 02: each check accepts the solution, says TODO for the stub, and rejects wrong answers."""

import time

import numpy as np
import pytest
import torch

from conftest import definitions_of, gpu
from tools.course import EXERCISES, SOLUTIONS
from utils.exercises import ExerciseFailed, nb02
from utils.timing import gpu_time_per_call

NAME = "02_benchmarking.ipynb"




CPU_EXERCISES = ["linear_cost", "fraction_of_floor", "which_is_faster"]
CPU_CHECKS = [nb02.check_linear_cost, nb02.check_fraction_of_floor, nb02.check_which_is_faster]


@pytest.mark.parametrize("index", range(len(CPU_EXERCISES)), ids=CPU_EXERCISES)
def test_checks_accept_the_solution(index, capsys):
    solution = definitions_of(SOLUTIONS / NAME, CPU_EXERCISES)[index]
    CPU_CHECKS[index](solution)
    assert capsys.readouterr().out.startswith(f"PASS {CPU_EXERCISES[index]}")


@pytest.mark.parametrize("index", range(len(CPU_EXERCISES)), ids=CPU_EXERCISES)
def test_unfinished_exercise_says_todo(index, capsys):
    stub = definitions_of(EXERCISES / NAME, CPU_EXERCISES)[index]
    CPU_CHECKS[index](stub)
    assert capsys.readouterr().out.startswith(f"TODO {CPU_EXERCISES[index]}")


# ---------------------------------------------------------------- exercise 2: the floor
def _bytes(b, i, o, s):
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


@pytest.mark.parametrize("wrong", WRONG_LINEAR_COST.values(), ids=WRONG_LINEAR_COST.keys())
def test_linear_cost_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL linear_cost.*\n.*hint: "):
        nb02.check_linear_cost(wrong)


@pytest.mark.parametrize("wrong", WRONG_FRACTION.values(), ids=WRONG_FRACTION.keys())
def test_fraction_of_floor_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL fraction_of_floor.*\n.*hint: "):
        nb02.check_fraction_of_floor(wrong)


# ---------------------------------------------------------------- exercise 3: which is faster
def bootstrap(a, b, confidence=0.95, statistic=np.median, seed=0):
    """The ratio statistic(a*) / statistic(b*) over bootstrap resamples, and its central interval."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(a), np.asarray(b)
    ratios = statistic(a[rng.integers(0, a.size, (2000, a.size))], axis=1) / statistic(
        b[rng.integers(0, b.size, (2000, b.size))], axis=1)
    return np.quantile(ratios, [(1 - confidence) / 2, (1 + confidence) / 2])


def verdict_of(low, high):
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


WRONG_FASTER = [with_means, with_minima, no_uncertainty, five_percent_threshold, swapped_ratio,
                ignores_confidence, raw_quantiles]


@pytest.mark.parametrize("wrong", WRONG_FASTER, ids=lambda f: f.__name__)
def test_which_is_faster_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL which_is_faster.*\n.*hint: "):
        nb02.check_which_is_faster(wrong)


@pytest.mark.parametrize("seed", range(5))
def test_which_is_faster_accepts_other_correct_bootstraps(seed, capsys):
    def other(a, b, confidence=0.95):
        low, high = bootstrap(a, b, confidence, seed=seed)
        return verdict_of(low, high), float(low), float(high)

    nb02.check_which_is_faster(other)
    assert capsys.readouterr().out.startswith("PASS which_is_faster")


def test_the_cases_are_the_same_everywhere():
    first, second = nb02.faster_cases(), nb02.faster_cases()
    assert all(np.array_equal(x[1], y[1]) and np.array_equal(x[2], y[2]) for x, y in zip(first, second))


# ---------------------------------------------------------------- exercise 1: on a GPU
def _sync_each(fn, n=100):
    fn()
    total = 0.0
    for _ in range(n):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        total += time.perf_counter() - start
    return total / n


def _no_sync(fn, n=100):  # the broken version of the notebook, with a warm-up
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def _no_warmup(fn, n=100):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n


def _total_not_per_call(fn, n=100):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def _events_in_milliseconds(fn, n=100):
    return gpu_time_per_call(fn, calls=n) * 1e3  # right measurement, wrong unit


def _synchronize_before_only(fn, n=100):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


WRONG_TIME_PER_CALL = [_sync_each, _no_sync, _no_warmup, _total_not_per_call, _events_in_milliseconds,
                       _synchronize_before_only]


@gpu
def test_time_per_call_accepts_the_solution(capsys):
    (solution,) = definitions_of(SOLUTIONS / NAME, ["time_per_call"])
    nb02.check_time_per_call(solution)
    assert capsys.readouterr().out.startswith("PASS time_per_call")


@gpu
def test_time_per_call_accepts_events(capsys):
    def with_events(fn, n=100):
        return gpu_time_per_call(fn, calls=n)

    nb02.check_time_per_call(with_events)
    assert capsys.readouterr().out.startswith("PASS time_per_call")


@gpu
def test_time_per_call_stub_says_todo(capsys):
    (stub,) = definitions_of(EXERCISES / NAME, ["time_per_call"])
    nb02.check_time_per_call(stub)
    assert capsys.readouterr().out.startswith("TODO time_per_call")


@gpu
@pytest.mark.parametrize("wrong", WRONG_TIME_PER_CALL, ids=lambda f: f.__name__.strip("_"))
def test_time_per_call_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL time_per_call.*\n.*hint: "):
        nb02.check_time_per_call(wrong)
