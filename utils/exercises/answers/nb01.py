"""Wrong answers, and another right one, to the exercises of notebook 01 (GPU memory), for the
tests: SPOILERS."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ..nb01 import model_reserved, run_batches

MiB = 2**20


# ---------------------------------------------------------------- exercise 1: predict_reserved (CPU)
def _segments_model(round_block: Callable[[int], int], segment_of: Callable[[int], int], small_pool: bool = True,
                    reuse: bool = True) -> Callable[[list[int]], int]:
    """A predict_reserved built from (possibly wrong) rules."""
    def predict(sizes: list[int]) -> int:
        segments: list[tuple[str, int]] = []
        for n in sizes:
            block = round_block(n)
            pool = "small" if small_pool and block <= MiB else "large"
            if not (reuse and any(p == pool and s >= block for p, s in segments)):
                segments.append((pool, segment_of(block)))
        return sum(s for _, s in segments)
    return predict


def _up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def _right_segment(block: int) -> int:
    return 2 * MiB if block <= MiB else 20 * MiB if block < 10 * MiB else _up(block, 2 * MiB)


def _block(n: int) -> int:
    return _up(n, 512)


WRONG_PREDICTIONS = {
    "sum of the sizes": lambda sizes: sum(sizes),
    "largest size only": lambda sizes: max(sizes),
    "largest segment only": lambda sizes: max(_right_segment(_block(n)) for n in sizes),
    "no reuse of cached segments": _segments_model(_block, _right_segment, reuse=False),
    "segments as large as the request": _segments_model(_block, lambda b: b),
    "no 20 MiB segments for 1-10 MiB": _segments_model(_block, lambda b: 2 * MiB if b <= MiB else _up(b, 2 * MiB)),
    "large segments not rounded to 2 MiB": _segments_model(
        _block, lambda b: 2 * MiB if b <= MiB else 20 * MiB if b < 10 * MiB else b),
    "one pool for everything": _segments_model(_block, _right_segment, small_pool=False),
    "returns MiB, not bytes": lambda sizes: model_reserved(sizes) // MiB,
    "returns a float": lambda sizes: float(model_reserved(sizes)),
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
    "check_predict_reserved": WRONG_PREDICTIONS,
    "check_block_memory": WRONG_BLOCKS,
    "check_batches_without_growth": WRONG_LOOPS,
}
ALSO_RIGHT = {
    "check_batches_without_growth": {"warms the cache up, frees each batch": warm_up_with_largest},
}
