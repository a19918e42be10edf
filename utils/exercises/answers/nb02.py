"""Wrong answers, and other right ones, to the exercises of notebook 02 (benchmarking), for the
tests: SPOILERS."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch


# ---------------------------------------------------------------- exercise 1: warmup_end (CPU)
def rolling_median_end(times, window: int = 5, tolerance: float = 0.2, slow_start: bool = False) -> tuple[int, float]:
    """The solution's rule: after the last slow window (a median of `window` calls above the steady time); and,
    with `slow_start`, after the slow calls at the very start too."""
    times = np.asarray(times, dtype=float)
    steady = np.median(times[times.size // 2:])
    windows = np.lib.stride_tricks.sliding_window_view(times, window) if times.size >= window else np.empty((0, 1))
    medians = np.median(windows, axis=1)
    slow = np.flatnonzero(medians > (1 + tolerance) * steady)
    k = int(slow[-1]) + 1 if slow.size else 0
    while slow_start and k < times.size // 2 and times[k] > (1 + tolerance) * steady:
        k += 1
    return k, float(np.median(times[k:]))


def _rule(first_steady: Callable[[np.ndarray, float], int], typical: Callable = np.median) -> Callable:
    """A warmup_end built from a rule for the first steady call, and a statistic of the calls from there."""
    def warmup_end(times):
        times = np.asarray(times, dtype=float)
        k = first_steady(times, float(np.median(times[times.size // 2:])))
        return k, float(typical(times[k:]))
    return warmup_end


def _last_slow(times, steady) -> int:
    slow = np.flatnonzero(times > 1.2 * steady)
    return int(slow[-1]) + 1 if slow.size else 0


def _rolling_mean(times, steady) -> int:
    means = np.convolve(times, np.ones(5) / 5, mode="valid")
    slow = np.flatnonzero(means > 1.2 * steady)
    return int(slow[-1]) + 1 if slow.size else 0


def _k(times, steady) -> int:
    return rolling_median_end(times)[0]


def _filtered_mean(times) -> float:
    """The mean of the calls within 0.7x to 1.5x of their median: outliers left out."""
    median = np.median(times)
    return float(np.mean(times[(times > 0.7 * median) & (times < 1.5 * median)]))


def _first_half_slow_end(times, steady) -> int:
    """After the last call of the first half that is slow, next to a slow neighbour (a threshold `steady` seconds)."""
    slow = times > 1.15 * steady
    k = 0
    for i in range(times.size // 2 + 1):
        if i < times.size and slow[i] and (i == 0 or slow[i - 1]):
            k = i + 1
    return k


def fixed_threshold(times):
    """A slow call is one over 1.15 ms, read off the notebook's series (its steady calls take about 1 ms)."""
    times = np.asarray(times, dtype=float)
    k = _first_half_slow_end(times, 1e-3)
    return k, float(np.median(times[k:]))


def threshold_from_the_last_call(times):
    """Slow against the last call, which may itself be disturbed."""
    times = np.asarray(times, dtype=float)
    k = _first_half_slow_end(times, float(times[-1]))
    return k, float(np.median(times[k:]))


def index_of_the_last_warmup_call(times):
    """The index of the last warm-up call (-1 when there is none), not of the first steady one."""
    k, steady = rolling_median_end(times)
    return k - 1, steady


def first_five_fast_in_a_row(times):
    """The warm-up ends at the first five calls in a row within 20% of the steady time (an autotuning warm-up can
    have a run of fast calls)."""
    times = np.asarray(times, dtype=float)
    fast = times < 1.2 * np.median(times[times.size // 2:])
    k = next((i for i in range(times.size - 4) if fast[i:i + 5].all()), 0)
    return k, float(np.median(times[k:]))


def _mean_below_one_and_a_half(times) -> float:
    """The mean of the calls under 1.5x their median: the disturbed calls left out, the lucky ones kept."""
    return float(np.mean(times[times < 1.5 * np.median(times)]))


WRONG_WARMUP = {
    "the first five fast calls in a row": first_five_fast_in_a_row,
    "the median of the first ten steady calls": _rule(_k, lambda t: np.median(t[:10])),
    "the mean without the slow calls, the lucky ones kept": _rule(
        lambda t, s: rolling_median_end(t, slow_start=True)[0], _mean_below_one_and_a_half),
    "the typical time rounded to microseconds": lambda t: (_k(np.asarray(t), 0.0), round(float(np.median(
        np.asarray(t)[_k(np.asarray(t), 0.0):])), 6)),
    "a threshold of 1.15 ms, whatever the function": fixed_threshold,
    "slow against the last call": threshold_from_the_last_call,
    "the index of the last warm-up call, -1 for none": index_of_the_last_warmup_call,
    "one warm-up call, as in the lecture": _rule(lambda t, s: 1),
    "a fixed warm-up of 10 calls": _rule(lambda t, s: 10),
    "the first call within 20% of the steady time": _rule(lambda t, s: int(np.argmax(t < 1.2 * s))),
    "after the last slow call, outliers included": _rule(_last_slow),
    "a rolling mean, which one outlier moves": _rule(_rolling_mean),
    "the mean of the steady calls": _rule(_k, np.mean),
    "the fastest steady call": _rule(_k, np.min),
    "the median of all calls, warm-up included": lambda t: (_k(np.asarray(t), 0.0), float(np.median(t))),
    "a window is slow only at twice the steady time": lambda t: rolling_median_end(t, tolerance=1.0),
}


# ---------------------------------------------------------------- exercise 2: crossover_batch (CPU)
def crossover(layer, cpu, gpu, link, max_batch=2**14, *, two_flops: bool = True, crossing: tuple[str, ...] = ("x", "y"),
              floor: Callable = np.maximum, strict_last: bool = False, never=None, itemsize_in_bytes: bool = True,
              batches: Callable = lambda max_batch: np.arange(1, max_batch + 1)):
    """The solution's model, each of whose parts can be broken to make a typical wrong answer."""
    n_in, n_out, itemsize = layer
    size = itemsize if itemsize_in_bytes else 1
    b = np.asarray(batches(max_batch), dtype=np.float64)

    def floor_time(bandwidth, rate):
        nbytes = size * (b * n_in + n_in * n_out + b * n_out)
        return floor(nbytes / bandwidth, (2 if two_flops else 1) * b * n_in * n_out / rate)

    crossed = {"x": b * n_in, "y": b * n_out, "W": np.full_like(b, n_in * n_out)}
    link_time = size * sum(crossed[name] for name in crossing) / link
    faster = gpu[2] + link_time + floor_time(gpu[0], gpu[1]) < floor_time(*cpu)
    if not faster.any():
        return never
    return int(b[np.argmax(faster)]) - (1 if strict_last else 0)


def crossover_batch_loop(layer, cpu, gpu, link, max_batch=2**14):
    """Right too: a plain loop over the batch sizes."""
    n_in, n_out, itemsize = layer

    def floor(batch, bandwidth, rate):
        return max(itemsize * (batch * n_in + n_in * n_out + batch * n_out) / bandwidth,
                   2 * batch * n_in * n_out / rate)

    for batch in range(1, max_batch + 1):
        if gpu[2] + itemsize * batch * (n_in + n_out) / link + floor(batch, gpu[0], gpu[1]) < floor(batch, *cpu):
            return batch
    return None


def _gpu_faster(layer, cpu, gpu, link, batch) -> bool:
    n_in, n_out, itemsize = layer

    def floor(bandwidth, rate):
        nbytes = itemsize * (batch * n_in + n_in * n_out + batch * n_out)
        return max(nbytes / bandwidth, 2 * batch * n_in * n_out / rate)

    return gpu[2] + itemsize * batch * (n_in + n_out) / link + floor(gpu[0], gpu[1]) < floor(*cpu)


def up_to_max_batch_excluded(layer, cpu, gpu, link, max_batch=2**14):
    """A loop over range(1, max_batch): the largest allowed batch is never tried."""
    for batch in range(1, max_batch):
        if _gpu_faster(layer, cpu, gpu, link, batch):
            return batch
    return None


def powers_of_two(layer, cpu, gpu, link, max_batch=2**14):
    """Tries batches of 1, 2, 4, 8, ... only."""
    batch = 1
    while batch <= max_batch:
        if _gpu_faster(layer, cpu, gpu, link, batch):
            return batch
        batch *= 2
    return None


def bisection(layer, cpu, gpu, link, max_batch=2**14):
    """Bisects for the first batch where the GPU wins, as if it stayed faster once it is: None unless it wins at
    max_batch."""
    if not _gpu_faster(layer, cpu, gpu, link, max_batch):
        return None
    low, high = 1, max_batch
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if _gpu_faster(layer, cpu, gpu, link, middle) else (middle + 1, high)
    return low


def bisection_after_batch_1(layer, cpu, gpu, link, max_batch=2**14):
    """Bisects where the GPU wins at max_batch; else tries batch 1 (the small-batch wins the task mentions): the GPU
    faster at batch 1, slower over a stretch, then faster again, gets the later crossover."""
    if not _gpu_faster(layer, cpu, gpu, link, max_batch):
        return 1 if _gpu_faster(layer, cpu, gpu, link, 1) else None
    return bisection(layer, cpu, gpu, link, max_batch)


def last_stretch(layer, cpu, gpu, link, max_batch=2**14):
    """From max_batch down: where the GPU's last winning stretch begins (what "from which batch on" could mean)."""
    if not _gpu_faster(layer, cpu, gpu, link, max_batch):
        return None
    batch = max_batch
    while batch > 1 and _gpu_faster(layer, cpu, gpu, link, batch - 1):
        batch -= 1
    return batch


def batch_1_then_bisection(layer, cpu, gpu, link, max_batch=2**14):
    """Tries batch 1; else None unless the GPU wins at max_batch, and bisects: a window of wins between is missed."""
    if _gpu_faster(layer, cpu, gpu, link, 1):
        return 1
    return bisection(layer, cpu, gpu, link, max_batch)


def galloping(layer, cpu, gpu, link, max_batch=2**14):
    """Doubles the batch until the GPU wins (or max_batch), then scans the last doubling: a window of wins between
    two powers of two is missed."""
    batch = 1
    while batch < max_batch and not _gpu_faster(layer, cpu, gpu, link, batch):
        batch *= 2
    batch = min(batch, max_batch)
    if not _gpu_faster(layer, cpu, gpu, link, batch):
        return None
    return next(b for b in range(max(1, batch // 2), batch + 1) if _gpu_faster(layer, cpu, gpu, link, b))


def by_breakpoints(layer, cpu, gpu, link, max_batch=2**14):
    """Right too: the margin is linear between the batches where either side turns compute-bound; within each piece
    the GPU, once faster, stays faster, so a bisection finds the first win there."""
    n_in, n_out, itemsize = layer
    weight, row, flops = itemsize * n_in * n_out, itemsize * (n_in + n_out), 2 * n_in * n_out
    cuts = {1, max_batch}
    for bandwidth, rate in (cpu, gpu[:2]):
        if flops / rate > row / bandwidth:  # compute-bound from weight / bandwidth / (flops / rate - row / bandwidth)
            turn = weight / bandwidth / (flops / rate - row / bandwidth)
            cuts |= {c for c in (int(turn), int(turn) + 1) if 1 <= c <= max_batch}
    cuts = sorted(cuts)
    for low, high in zip(cuts, cuts[1:] + [max_batch]):
        if _gpu_faster(layer, cpu, gpu, link, low):
            return low
        if _gpu_faster(layer, cpu, gpu, link, high):
            while high - low > 1:  # slower at low, faster at high
                middle = (low + high) // 2
                low, high = (low, middle) if _gpu_faster(layer, cpu, gpu, link, middle) else (middle, high)
            return high
    return None


WRONG_CROSSOVER = {
    "the link forgotten": lambda *a: crossover(*a, crossing=()),
    "the weight copied every call": lambda *a: crossover(*a, crossing=("x", "y", "W")),
    "the output left on the GPU": lambda *a: crossover(*a, crossing=("x",)),
    "bytes and FLOPs added, not overlapped": lambda *a: crossover(*a, floor=np.add),
    "FLOPs without the factor 2": lambda *a: crossover(*a, two_flops=False),
    "elements, not bytes": lambda *a: crossover(*a, itemsize_in_bytes=False),
    "the last batch where the CPU is faster": lambda *a: crossover(*a, strict_last=True),
    "max_batch when the GPU never wins": lambda layer, cpu, gpu, link, max_batch=2**14: crossover(
        layer, cpu, gpu, link, max_batch, never=max_batch),
    "a float": lambda *a: None if (r := crossover(*a)) is None else r + 0.5,
    "a whole float": lambda *a: None if (r := crossover(*a)) is None else float(r),
    "never tries max_batch itself": up_to_max_batch_excluded,
    "bisects, as if the GPU stayed faster once it is": bisection,
    "bisects where the GPU wins at max_batch, else tries batch 1": bisection_after_batch_1,
    "powers of two only": powers_of_two,
    "tries batch 1, then bisects": batch_1_then_bisection,
    "doubles the batch until the GPU wins, then scans back": galloping,
    "scans to 2**14 whatever max_batch": lambda layer, cpu, gpu, link, max_batch=2**14: crossover(
        layer, cpu, gpu, link),
    "where the last winning stretch begins": last_stretch,
    "a default max_batch of 2**10": lambda layer, cpu, gpu, link, max_batch=2**10: crossover(
        layer, cpu, gpu, link, max_batch),
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


def reversed_ratio(a, b, confidence=0.95):
    """The interval for median(b) / median(a), its verdict consistent with it: with one run each, every resampled
    ratio is the same, and the interval is a single value turned round."""
    low, high = bootstrap(b, a, confidence)
    return verdict_of(low, high), float(low), float(high)


def ignores_confidence(a, b, confidence=0.95):
    low, high = bootstrap(a, b, 0.95)
    return verdict_of(low, high), float(low), float(high)


def raw_quantiles(a, b, confidence=0.95):
    """An interval from the raw times instead of from the medians' uncertainty: far too wide."""
    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    (a_lo, a_hi), (b_lo, b_hi) = np.quantile(a, q), np.quantile(b, q)
    low, high = a_lo / b_hi, a_hi / b_lo
    return verdict_of(low, high), float(low), float(high)


def paired_resamples(a, b, confidence=0.95):
    """One draw of run numbers for both samples, as if a[i] and b[i] were a pair (cut to the shorter sample)."""
    rng = np.random.default_rng(0)
    n = min(len(a), len(b))
    a, b = np.asarray(a)[:n], np.asarray(b)[:n]
    runs = rng.integers(0, n, (2000, n))
    ratios = np.median(a[runs], axis=1) / np.median(b[runs], axis=1)
    low, high = np.quantile(ratios, [(1 - confidence) / 2, (1 + confidence) / 2])
    return verdict_of(low, high), float(low), float(high)


def paired_ratios(a, b, confidence=0.95):
    """The bootstrap of the median of the ratios a[i] / b[i] (cut to the shorter sample)."""
    rng = np.random.default_rng(0)
    n = min(len(a), len(b))
    ratios = np.asarray(a)[:n] / np.asarray(b)[:n]
    medians = np.median(ratios[rng.integers(0, n, (2000, n))], axis=1)
    low, high = np.quantile(medians, [(1 - confidence) / 2, (1 + confidence) / 2])
    return verdict_of(low, high), float(low), float(high)


def one_sided_ends(a, b, confidence=0.95):
    """Ends at the quantiles 1 - confidence and confidence: a 90% interval when 95% is asked for."""
    low, high = bootstrap(a, b, 2 * confidence - 1)
    return verdict_of(low, high), float(low), float(high)


def both_resampled_to_the_size_of_a(a, b, confidence=0.95):
    rng = np.random.default_rng(0)
    a, b = np.asarray(a), np.asarray(b)
    ratios = np.median(a[rng.integers(0, a.size, (2000, a.size))], axis=1) / np.median(
        b[rng.integers(0, b.size, (2000, a.size))], axis=1)
    low, high = np.quantile(ratios, [(1 - confidence) / 2, (1 + confidence) / 2])
    return verdict_of(low, high), float(low), float(high)


def with_choice(a, b, confidence=0.95):
    """Right too: rng.choice, 3000 resamples, percentiles."""
    rng = np.random.default_rng(1)
    medians_a = np.median(rng.choice(a, size=(3000, len(a))), axis=1)
    medians_b = np.median(rng.choice(b, size=(3000, len(b))), axis=1)
    low, high = np.percentile(medians_a / medians_b, [50 * (1 - confidence), 50 * (1 + confidence)])
    return ("a" if high < 1 else "b" if low > 1 else "unclear"), low, high


def torch_median(a, b, confidence=0.95):
    """torch.median: for an even number of times, the lower of the two middle ones (np.median takes their mean)."""
    generator = torch.Generator().manual_seed(0)
    a, b = torch.as_tensor(a), torch.as_tensor(b)
    medians_a = a[torch.randint(0, len(a), (3000, len(a)), generator=generator)].median(dim=1).values
    medians_b = b[torch.randint(0, len(b), (3000, len(b)), generator=generator)].median(dim=1).values
    ends = torch.tensor([(1 - confidence) / 2, (1 + confidence) / 2], dtype=medians_a.dtype)
    low, high = torch.quantile(medians_a / medians_b, ends).tolist()
    return verdict_of(low, high), low, high


def float32_tensors(a, b, confidence=0.95):
    """Right too: the ends as 0-d float32 tensors (rounded to 7 digits), the verdict a NumPy string."""
    low, high = bootstrap(a, b, confidence)
    ends = torch.tensor(low, dtype=torch.float32), torch.tensor(high, dtype=torch.float32)
    return (np.str_(verdict_of(low, high)), *ends)


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
    "rounded to whole microseconds": lambda kernels, launch: round(_loop(kernels, launch) * 1e6) / 1e6,
    "kernels of no work left out": lambda kernels, launch: _loop([k for k in kernels if k > 0], launch),
    "a kernel's end is the later of its launch and the end before it plus itself": lambda kernels, launch: (
        _max_inside(kernels, launch)),
}


def _max_inside(kernels, launch) -> float:
    end = 0.0
    for i, kernel in enumerate(kernels):
        end = max(end + kernel, (i + 1) * launch)
    return end


def loop_time_float32(kernels, launch):
    """Right too: in float32 (7 digits)."""
    end = np.float32(0)
    for i, kernel in enumerate(kernels):
        end = max(end, np.float32((i + 1) * launch)) + np.float32(kernel)
    return end


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


def loop_time_if_not_kernels(kernels, launch) -> float:
    """Right too: `if not kernels` for the empty loop (kernels is a list, as the task says)."""
    if not kernels:
        return 0.0
    return _loop(kernels, launch)


def loop_time_reference(kernels, launch) -> float:
    """The solution's model: kernel i starts once its launch has returned and the kernel before it has ended."""
    return _loop(kernels, launch)


WRONG = {
    "check_warmup_end": WRONG_WARMUP,
    "check_crossover_batch": WRONG_CROSSOVER,
    "check_which_is_faster": {f.__name__.replace("_", " "): f for f in (
        with_means, with_minima, no_uncertainty, five_percent_threshold, swapped_ratio, reversed_ratio,
        ignores_confidence,
        raw_quantiles, paired_resamples, paired_ratios, one_sided_ends, both_resampled_to_the_size_of_a,
        torch_median)},
    "check_loop_time": WRONG_LOOP_TIME,
}
ALSO_RIGHT = {
    "check_warmup_end": {"a rolling median of 7 calls": lambda t: rolling_median_end(t, window=7),
                         "a rolling median of 5 calls, 30% above the steady time": (
                             lambda t: rolling_median_end(t, tolerance=0.3)),
                         "a rolling median of 3 calls": lambda t: rolling_median_end(t, window=3),
                         "the mean of the steady calls near their median": _rule(
                             lambda t, s: rolling_median_end(t, slow_start=True)[0], _filtered_mean),
                         "a list [k, steady]": lambda t: list(rolling_median_end(t))},
    "check_crossover_batch": {"a loop over the batch sizes": crossover_batch_loop, "vectorized": crossover,
                              "bisected between the breakpoints of the margin": by_breakpoints},
    "check_which_is_faster": {**{f"bootstrap, seed {seed}": bootstrap_with_seed(seed) for seed in range(3)},
                              "rng.choice and percentiles": with_choice,
                              "float32 tensors and a NumPy string": float32_tensors,
                              "a list [verdict, low, high]": lambda a, b, confidence=0.95: list(
                                  bootstrap_with_seed(0)(a, b, confidence))},
    "check_loop_time": {"closed form": loop_time_closed_form, "event by event": loop_time_event_by_event,
                        "in float32": loop_time_float32, "`if not kernels` for none": loop_time_if_not_kernels},
}
