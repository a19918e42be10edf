"""Wrong answers, and another right one, to the exercises of notebook 01 (GPU memory), for the
tests: SPOILERS."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ..nb01 import block_and_segment, run_batches

MiB = 2**20


# ---------------------------------------------------------------- exercise 1: warm_up_sizes (CPU)
def _pool_of(n: int) -> str:
    return block_and_segment(n)[2]


def _largest_of_each_pool(sizes: list[int],
                          small: Callable[[int], bool] = lambda n: _pool_of(n) == "small") -> list[int]:
    large_sizes = [n for n in sizes if not small(n)]
    small_sizes = [n for n in sizes if small(n)]
    return [max(group) for group in (large_sizes, small_sizes) if group]


WRONG_WARM_UPS = {
    "no warm-up": lambda sizes: [],
    "the largest size only": lambda sizes: [max(sizes)],
    "the first size": lambda sizes: [sizes[0]],
    "every size, in the loop's order": lambda sizes: list(sizes),
    "the smallest of each pool": lambda sizes: [min(g) for g in ([n for n in sizes if _pool_of(n) == "large"],
                                                                   [n for n in sizes if _pool_of(n) == "small"]) if g],
    "1 MiB counted as large": lambda sizes: _largest_of_each_pool(sizes, small=lambda n: n < MiB),
    "sizes in MiB, not bytes": lambda sizes: [max(1, n // MiB) for n in _largest_of_each_pool(sizes)],
    "returns a tuple": lambda sizes: tuple(_largest_of_each_pool(sizes)),
}

ALSO_RIGHT_WARM_UPS = {
    "every size, largest first": lambda sizes: sorted(sizes, reverse=True),
    "small pool first": lambda sizes: _largest_of_each_pool(sizes)[::-1],
    "a 10 MiB tensor for large requests under 10 MiB": lambda sizes: [
        10 * MiB if _pool_of(n) == "large" and n <= 10 * MiB else n for n in _largest_of_each_pool(sizes)],
}


# ---------------------------------------------------------------- exercise 2: block_memory (GPU)
@dataclass
class Report:
    peak_allocated: int = 0
    reserved_growth: int = 0


def _block_memory(peak_allocated: Callable[[int, int], int], reserved_growth: Callable[[int, int], int],
                  reset: bool = True) -> Callable:
    """A block_memory built from two (possibly wrong) formulas of (start_allocated, start_reserved)."""
    @contextmanager
    def block_memory():
        if reset:
            torch.cuda.reset_peak_memory_stats()
        start = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        report = Report()
        yield report
        report.peak_allocated = peak_allocated(*start)
        report.reserved_growth = reserved_growth(*start)
    return block_memory


def _right_allocated(a: int, r: int) -> int:
    return torch.cuda.max_memory_allocated() - a


def _right_reserved(a: int, r: int) -> int:
    return torch.cuda.max_memory_reserved() - r


@contextmanager
def block_memory_from_stats():
    """Right too: the counters read from torch.cuda.memory_stats() (what max_memory_allocated() and the
    others read, torch/cuda/memory.py), after waiting for the GPU."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_stats()
    report = Report()
    yield report
    torch.cuda.synchronize()
    end = torch.cuda.memory_stats()
    report.peak_allocated = end["allocated_bytes.all.peak"] - start["allocated_bytes.all.current"]
    report.reserved_growth = end["reserved_bytes.all.peak"] - start["reserved_bytes.all.current"]


WRONG_BLOCKS = {
    "no reset of the peaks": _block_memory(_right_allocated, _right_reserved, reset=False),
    "absolute peak, start not subtracted": _block_memory(lambda a, r: torch.cuda.max_memory_allocated(),
                                                         _right_reserved),
    "allocated at the end, not the peak": _block_memory(lambda a, r: torch.cuda.memory_allocated() - a,
                                                        _right_reserved),
    "reserved at the end, not the peak": _block_memory(_right_allocated,
                                                       lambda a, r: torch.cuda.memory_reserved() - r),
    "absolute reserved peak": _block_memory(_right_allocated, lambda a, r: torch.cuda.max_memory_reserved()),
    "reserved instead of allocated": _block_memory(lambda a, r: torch.cuda.max_memory_reserved() - r,
                                                   _right_reserved),
}


# ---------------------------------------------------------------- exercise 3: run_batches_fixed (GPU)
def warm_up_with_first(lengths: list[int], width: int = 4096) -> list[float]:
    torch.empty(lengths[0], width, device="cuda")
    return run_batches(lengths, width)


def keep_the_warm_up_alive(lengths: list[int], width: int = 4096) -> list[float]:
    keep = torch.empty(max(lengths), width, device="cuda")  # never freed: the loop cannot reuse it
    sums = run_batches(lengths, width)
    del keep
    return sums


def empty_cache_every_batch(lengths: list[int], width: int = 4096) -> list[float]:
    sums = []
    for n in lengths:
        sums.append(float(torch.ones(n, width, device="cuda").sum()))
        torch.cuda.empty_cache()
    return sums


def largest_first_reordered(lengths: list[int], width: int = 4096) -> list[float]:
    return run_batches(sorted(lengths, reverse=True), width)


def power_of_two_buckets(lengths: list[int], width: int = 4096) -> list[float]:
    sums = []
    for n in lengths:
        padded = torch.zeros(1 << (n - 1).bit_length(), width, device="cuda")
        padded[:n] = 1.0
        sums.append(float(padded.sum()))
    return sums


def warm_up_then_the_original_loop(lengths: list[int], width: int = 4096) -> list[float]:
    torch.empty(max(lengths), width, device="cuda")  # freed at once: its segment stays cached...
    return run_batches(lengths, width)  # ...but `batch = ...` holds two batches at once


def warm_up_with_largest(lengths: list[int], width: int = 4096) -> list[float]:
    """The other right answer: warm the cache up, and free each batch before making the next."""
    torch.empty(max(lengths), width, device="cuda")  # freed at once: its segment stays cached
    sums = []
    for n in lengths:
        batch = torch.ones(n, width, device="cuda")
        sums.append(float(batch.sum()))
        del batch  # otherwise the next batch is made while this one is still alive
    return sums


WRONG_LOOPS = {
    "the original loop": run_batches,
    "warms up, but two batches are alive at once": warm_up_then_the_original_loop,
    "warms up with the first length": warm_up_with_first,
    "keeps the warm-up tensor alive": keep_the_warm_up_alive,
    "empties the cache every batch": empty_cache_every_batch,
    "sorts the batches, losing their order": largest_first_reordered,
    "pads to powers of two": power_of_two_buckets,
}

WRONG = {
    "check_warm_up_sizes": WRONG_WARM_UPS,
    "check_block_memory": WRONG_BLOCKS,
    "check_batches_without_growth": WRONG_LOOPS,
}
# The wrong answers of the GPU checks whose mistake a CPU shows too: without a GPU, the check's CPU part
# must reject them (tests/test_exercises.py).  The others are wrong only in what a GPU measures.
WRONG_ON_CPU = {
    "check_block_memory": set(WRONG_BLOCKS),  # the counters are imitated on the CPU: every formula shows
    "check_batches_without_growth": {"sorts the batches, losing their order"},
}
ALSO_RIGHT = {
    "check_warm_up_sizes": ALSO_RIGHT_WARM_UPS,
    "check_batches_without_growth": {"warms the cache up, frees each batch": warm_up_with_largest},
    "check_block_memory": {"reads memory_stats(), after a synchronize": block_memory_from_stats},
}
