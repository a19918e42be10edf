"""Wrong answers, and another right one, to the exercises of notebook 01 (GPU memory), for the
tests: SPOILERS."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

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


@dataclass
class _Open:
    """A block that has started and not ended: where it started, and its peaks so far (absolute bytes)."""

    start_allocated: int
    start_reserved: int
    peak_allocated: int = 0
    peak_reserved: int = 0


def _block_memory(peak_allocated: Callable[[_Open], int] = lambda b: b.peak_allocated - b.start_allocated,
                  reserved_growth: Callable[[_Open], int] = lambda b: b.peak_reserved - b.start_reserved,
                  reset: Callable[[list[_Open]], bool] = lambda open_blocks: True,
                  keep_allocated: bool = True, keep_reserved: bool = True) -> Callable:
    """A block_memory that keeps the open blocks' peaks through a nested block's reset, built from (possibly
    wrong) formulas and with parts of it switchable: when to reset, which peaks to keep."""
    open_blocks: list[_Open] = []

    def keep_peaks(blocks: list[_Open]) -> None:
        for block in blocks:
            block.peak_allocated = max(block.peak_allocated, torch.cuda.max_memory_allocated())
            block.peak_reserved = max(block.peak_reserved, torch.cuda.max_memory_reserved())

    @contextmanager
    def block_memory():
        saved = [(b.peak_allocated, b.peak_reserved) for b in open_blocks]
        keep_peaks(open_blocks)  # before the reset erases them
        for block, (allocated, reserved) in zip(open_blocks, saved):
            block.peak_allocated = block.peak_allocated if keep_allocated else allocated
            block.peak_reserved = block.peak_reserved if keep_reserved else reserved
        if reset(open_blocks):
            torch.cuda.reset_peak_memory_stats()
        block = _Open(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
        block.peak_allocated, block.peak_reserved = block.start_allocated, block.start_reserved
        open_blocks.append(block)
        report = Report()
        try:
            yield report
        finally:
            keep_peaks([block])
            open_blocks.remove(block)
        report.peak_allocated, report.reserved_growth = peak_allocated(block), reserved_growth(block)
    return block_memory


@contextmanager
def not_nested():
    """The answer for a block on its own: right, until a block nested in it resets the counters."""
    torch.cuda.reset_peak_memory_stats()
    start_allocated, start_reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    report = Report()
    yield report
    report.peak_allocated = torch.cuda.max_memory_allocated() - start_allocated
    report.reserved_growth = torch.cuda.max_memory_reserved() - start_reserved


class BlockMemoryClass:
    """Right too: a class with __enter__ and __exit__, its open blocks in a class attribute, its counters read
    from torch.cuda.memory_stats() (what max_memory_allocated() and the others read, torch/cuda/memory.py)
    after waiting for the GPU."""

    open_blocks: ClassVar[list[BlockMemoryClass]] = []
    starts: list[int]
    peaks: list[int]
    report: Report

    def __enter__(self) -> Report:
        torch.cuda.synchronize()
        stats = torch.cuda.memory_stats()
        for block in self.open_blocks:
            block.peaks = [max(block.peaks[0], stats["allocated_bytes.all.peak"]),
                           max(block.peaks[1], stats["reserved_bytes.all.peak"])]
        torch.cuda.reset_peak_memory_stats()
        self.starts = [torch.cuda.memory_stats()[f"{what}_bytes.all.current"] for what in ("allocated", "reserved")]
        self.peaks = list(self.starts)
        self.open_blocks.append(self)
        self.report = Report()
        return self.report

    def __exit__(self, *exc) -> None:
        torch.cuda.synchronize()
        stats = torch.cuda.memory_stats()
        self.open_blocks.remove(self)
        self.report.peak_allocated = max(self.peaks[0], stats["allocated_bytes.all.peak"]) - self.starts[0]
        self.report.reserved_growth = max(self.peaks[1], stats["reserved_bytes.all.peak"]) - self.starts[1]


WRONG_BLOCKS = {
    "not nested: the inner block's reset erases the outer's peak": not_nested,
    "no reset of the peaks": _block_memory(reset=lambda open_blocks: False),
    "resets only in the outermost block": _block_memory(reset=lambda open_blocks: not open_blocks),
    "keeps the allocated peak through the inner reset, not the reserved one": _block_memory(keep_reserved=False),
    "keeps the reserved peak through the inner reset, not the allocated one": _block_memory(keep_allocated=False),
    "absolute peak, start not subtracted": _block_memory(peak_allocated=lambda b: b.peak_allocated),
    "allocated at the end, not the peak": _block_memory(
        peak_allocated=lambda b: torch.cuda.memory_allocated() - b.start_allocated),
    "reserved at the end, not the peak": _block_memory(
        reserved_growth=lambda b: torch.cuda.memory_reserved() - b.start_reserved),
    "absolute reserved peak": _block_memory(reserved_growth=lambda b: b.peak_reserved),
    "reserved instead of allocated": _block_memory(peak_allocated=lambda b: b.peak_reserved - b.start_reserved),
}
RIGHT_BLOCKS = {
    "open blocks in a list, their peaks kept before each reset": _block_memory(),
    "a class, reading memory_stats() after a synchronize": BlockMemoryClass,
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
    "check_block_memory": RIGHT_BLOCKS,
}
