"""Checks for the exercises of notebook 01 (GPU memory): warm up, measure and tame the caching allocator.

- `check_warm_up_sizes` runs on a CPU: it plays a warm-up and the loop after it on `model_reserved`,
  a model of PyTorch's caching allocator for one simple case (each tensor freed before the next).
  The model is checked against the real allocator on a GPU by tests/test_exercises.py (on
  `PREDICT_CASES` and random sequences), and the solutions run the warm-up on the real allocator.
- `check_block_memory` and `check_batches_without_growth` need a GPU: they measure.  Without one they
  check what a CPU can, and say what is left: block_memory's arithmetic on the same two blocks, with
  the allocator's counters imitated (`ImitatedCounters`), and run_batches_fixed's sums, its tensors
  for the GPU made on the CPU (`utils.exercises.cuda_on_cpu`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import torch

from ..device import has_cuda, require_cuda
from ..memory import format_bytes
from . import Checker, Exercise, cuda_on_cpu, exercise, register

NOTEBOOK = "01_memory"

KiB, MiB = 2**10, 2**20


# ---------------------------------------------------------------- exercise 1: a warm-up for any loop
def block_and_segment(nbytes: int) -> tuple[int, int, str]:
    """(block, segment, pool) for a request of `nbytes` > 0 bytes when no cached block can serve it.

    PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, default settings):
    - every request is rounded up to a multiple of 512 bytes: that is the block;
    - blocks of at most 1 MiB come from the small pool, whose segments are 2 MiB;
    - larger blocks come from the large pool: a block under 10 MiB gets a 20 MiB segment (later
      requests can share it), a larger one a segment rounded up to a multiple of 2 MiB.
    """
    block = max(512, -(-nbytes // 512) * 512)
    if block <= 1 * MiB:
        return block, 2 * MiB, "small"
    if block < 10 * MiB:
        return block, 20 * MiB, "large"
    return block, -(-block // (2 * MiB)) * 2 * MiB, "large"


def model_reserved(sizes: list[int]) -> int:
    """Bytes reserved after tensors of these sizes are made and freed one after another, from an empty cache.

    A freed segment is whole again, so a request reuses any cached segment of its pool that is large
    enough; otherwise the allocator calls cudaMalloc for a new segment, and keeps it.
    """
    segments: list[tuple[str, int]] = []
    for nbytes in sizes:
        block, segment, pool = block_and_segment(nbytes)
        if not any(p == pool and size >= block for p, size in segments):
            segments.append((pool, segment))
    return sum(size for _, size in segments)


# Sequences on which model_reserved is checked against the real allocator (tests/test_exercises.py),
# each with the rule it exercises.
PREDICT_CASES: list[tuple[list[int], str]] = [
    ([32 * MiB], "a request of 10 MiB or more gets a segment of its own size, rounded up to 2 MiB"),
    ([4 * MiB], "a request between 1 MiB and 10 MiB gets a 20 MiB segment"),
    ([1000, 3000, 5000], "requests of at most 1 MiB share 2 MiB segments of the small pool"),
    ([25 * MiB + 1], "segments for requests of 10 MiB or more are rounded up to a multiple of 2 MiB"),
    ([48 * MiB, 4 * MiB, 40 * MiB], "a freed segment is reused by any smaller request of the same pool"),
    ([4 * MiB, 8 * MiB, 12 * MiB, 24 * MiB, 16 * MiB],
     "4, 8 and 12 MiB fit the first 20 MiB segment; 24 MiB needs a new one; 16 MiB reuses a cached one"),
    ([100, 2 * MiB], "the small and the large pool never share segments"),
    ([30 * MiB, 500], "a small request never uses a large-pool segment: it needs a 2 MiB segment"),
    ([4 * MiB, 30 * MiB, 8 * MiB, 60 * MiB, 2 * MiB + 1, 600],
     "walk through the sizes in order: reuse a cached segment when one is large enough, else add one"),
]


def loop_needs(warm_up: list[int], sizes: list[int]) -> list[int]:
    """The requests of the loop `sizes` that still need a new segment after `warm_up` (both made and
    freed one tensor at a time, from an empty cache), by the rules of `model_reserved`."""
    segments: list[tuple[str, int]] = []
    needs = []
    for i, nbytes in enumerate([*warm_up, *sizes]):
        block, segment, pool = block_and_segment(nbytes)
        if not any(p == pool and size >= block for p, size in segments):
            segments.append((pool, segment))
            if i >= len(warm_up):
                needs.append(nbytes)
    return needs


def warm_up_budget(sizes: list[int]) -> int:
    """What a good warm-up reserves at most: the least that any warm-up of one or two of the loop's own sizes
    reserves, among those after which the loop needs no new segment (found by trying them all)."""
    tries = [[n] for n in sizes] + [[n, m] for i, n in enumerate(sizes) for m in sizes[i + 1:]]
    return min(model_reserved(warm) for warm in tries if not loop_needs(warm, sizes))


WARM_UP_CASES: list[list[int]] = [
    [4 * MiB * k for k in range(1, 17)],  # the lecture's growing loop, up to 64 MiB
    [4000, 4 * MiB, 500, 12 * MiB, 1 * MiB],  # both pools
    [100, 2000, 300_000],  # the small pool only
    [1 * MiB, 1 * MiB + 1, 3 * MiB],  # 1 MiB is still small; one byte more is not
    [2 * MiB, 9 * MiB, 5 * MiB],  # large requests under 10 MiB
    [40 * MiB, 8 * MiB, 30 * MiB],  # the largest comes first
    [25 * MiB + 1, 3 * MiB, 700],  # a large segment rounded up to 2 MiB
]


def check_warm_up_sizes(warm_up_sizes: Callable[[list[int]], list[int]]) -> None:
    """warm_up_sizes(sizes) must give tensors to make and free before the loop so that the loop needs no
    new segment, reserving no more than a good warm-up does."""
    with exercise("warm_up_sizes") as ex:
        for sizes in WARM_UP_CASES:
            warm = warm_up_sizes(list(sizes))
            ex.expect(
                isinstance(warm, list) and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in warm),
                f"warm_up_sizes({_sizes_text(sizes)}) returned {warm!r}, not a list of sizes in bytes (ints > 0)",
                "return a list of the byte sizes of the tensors to make and free, in order",
            )
            needs = loop_needs(warm, sizes)
            ex.expect(
                not needs,
                _growth_problem(warm, sizes, needs),
                "which cached segment could have served that request, and which tensor of the warm-up would "
                "have left it there?",
            )
            reserved, budget = model_reserved(warm), warm_up_budget(sizes)
            ex.expect(
                reserved <= budget,
                f"the warm-up {_sizes_text(warm)} stops the growth of {_sizes_text(sizes)} but reserves "
                f"{format_bytes(reserved)}, where {format_bytes(budget)} is enough",
                "which of the warm-up's segments does the loop never need?",
            )


register(Exercise(NOTEBOOK, "warm_up_sizes", check_warm_up_sizes))


def _growth_problem(warm: list[int], sizes: list[int], needs: list[int]) -> str:
    if not needs:
        return ""
    pool = block_and_segment(needs[0])[2]
    return (f"after the warm-up {_sizes_text(warm)}, the loop {_sizes_text(sizes)} still needed a new segment "
            f"for a request of {_size_text(needs[0])} ({pool} pool)")


def _size_text(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n // MiB} MiB + {n % MiB}" if n > MiB else str(n)


def _sizes_text(sizes: list[int]) -> str:
    return "[" + ", ".join(_size_text(n) for n in sizes) + "]"


def measure_reserved(sizes: list[int]) -> int:
    """On the GPU: the bytes that making and freeing tensors of these sizes adds to the empty cache."""
    require_cuda("measure_reserved()")
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    for nbytes in sizes:
        tensor = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        del tensor
    return torch.cuda.memory_reserved() - before


class ImitatedCounters:
    """PyTorch's memory counters of one GPU, imitated on the CPU for check_block_memory's CPU part.

    The check makes and frees tensors by their size: a freed tensor's memory stays cached (reserved)
    and serves later requests that fit in it, until empty_cache().  Enough for the check's blocks,
    not a model of the allocator (that is `model_reserved`).
    """

    def __init__(self) -> None:
        self.allocated = self.reserved = self.cached = self.peak_allocated = self.peak_reserved = 0

    def make(self, nbytes: int) -> None:
        self.allocated += nbytes
        if self.cached >= nbytes:
            self.cached -= nbytes
        else:
            self.reserved += nbytes  # a new segment
        self.peak_allocated, self.peak_reserved = (max(self.peak_allocated, self.allocated),
                                                   max(self.peak_reserved, self.reserved))

    def free(self, nbytes: int) -> None:
        self.allocated -= nbytes
        self.cached += nbytes

    def empty_cache(self) -> None:
        self.reserved -= self.cached
        self.cached = 0

    def reset_peaks(self) -> None:
        self.peak_allocated, self.peak_reserved = self.allocated, self.reserved

    def stats(self) -> dict[str, int]:
        return {"allocated_bytes.all.current": self.allocated, "allocated_bytes.all.peak": self.peak_allocated,
                "reserved_bytes.all.current": self.reserved, "reserved_bytes.all.peak": self.peak_reserved}


@contextmanager
def imitated_counters() -> Iterator[ImitatedCounters]:
    """torch.cuda's memory counters (torch.cuda.memory_allocated() and the others) read an ImitatedCounters."""
    counters = ImitatedCounters()
    imitations = {
        "memory_allocated": lambda device=None: counters.allocated,
        "memory_reserved": lambda device=None: counters.reserved,
        "max_memory_allocated": lambda device=None: counters.peak_allocated,
        "max_memory_reserved": lambda device=None: counters.peak_reserved,
        "reset_peak_memory_stats": lambda device=None: counters.reset_peaks(),
        "memory_stats": lambda device=None: counters.stats(),
        "empty_cache": counters.empty_cache,
    }
    saved = [(module, name, getattr(module, name)) for module in (torch.cuda, torch.cuda.memory) for name in imitations]
    try:
        for module, name, _ in saved:
            setattr(module, name, imitations[name])
        yield counters
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


# ---------------------------------------------------------------- exercise 2: the peak of a block, nested
# Hints by the direction of the mistake: a report larger than the block's own bytes counted what came before it;
# a smaller one lost the peak.
_TOO_MUCH = ("more than the block itself held: PyTorch's counters count the whole process since their last reset; "
             "what they counted before the block started (tensors alive then, an earlier peak) is not the block's")
_TOO_LITTLE = "less than the block held at its peak: which counter remembers the most, and since when?"
_RELEASED = "the block released what it reserved before it ended: a value read at its end misses the growth"
_OUTER = ("the inner block's reset erased the outer block's peak so far from PyTorch's counters: where must that "
          "peak be kept, and when, so that the outer block still knows it at its end?")


class RealMemory:
    """Tensors made and freed by their size, on the GPU: the steps of check_block_memory's blocks."""

    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}

    def make(self, name: str, nbytes: int) -> None:
        self.tensors[name] = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    def free(self, *names: str) -> None:
        for name in names:
            del self.tensors[name]

    def empty_cache(self) -> None:
        torch.cuda.empty_cache()


class ImitatedMemory(RealMemory):
    """The same steps on an `ImitatedCounters`, for the CPU part of check_block_memory."""

    def __init__(self, counters: ImitatedCounters) -> None:
        super().__init__()
        self.counters, self.sizes = counters, dict[str, int]()

    def make(self, name: str, nbytes: int) -> None:
        self.counters.make(nbytes)
        self.sizes[name] = nbytes

    def free(self, *names: str) -> None:
        for name in names:
            self.counters.free(self.sizes.pop(name))

    def empty_cache(self) -> None:
        self.counters.empty_cache()


def _manager(ex: Checker, block_memory: Callable[[], AbstractContextManager[Any]]) -> AbstractContextManager[Any]:
    manager = block_memory()
    ex.expect(hasattr(manager, "__enter__") and hasattr(manager, "__exit__"),
              f"block_memory() returned {manager!r}, not something to use in a `with` block",
              "decorate it with @contextlib.contextmanager, and yield the report inside it")
    return manager


def _report(ex: Checker, report: Any, which: str = "the") -> Any:
    numbers = all(type(getattr(report, field, None)) is int for field in ("peak_allocated", "reserved_growth"))
    ex.expect(numbers, f"{which} `with` block gave {report!r}, without integer peak_allocated and reserved_growth",
              "yield an object whose fields are filled in when the block ends")
    return report


def _expect_report(ex: Checker, report: Any, block: str, peak: int, growth: int, too_little: str = _TOO_LITTLE) -> None:
    for field, want in (("peak_allocated", peak), ("reserved_growth", growth)):
        got = getattr(report, field)
        ex.expect(got == want, f"{block} reported {field} = {format_bytes(got)}, expected {format_bytes(want)}",
                  _TOO_MUCH if got > want else too_little)


def _blocks(ex: Checker, block_memory: Callable[[], AbstractContextManager[Any]], memory: RealMemory) -> None:
    """Three blocks, each made of tensors whose sizes fix the right report, after 8 MiB already live.

    Python's garbage collector is off meanwhile, so that no tensor of earlier code, left in a reference
    cycle, is freed inside a block and lowers its peak below what its own tensors make.  That is one way a
    right answer could report 276 MiB for 300, as one did once in the course's GPU test run (2026-11-27,
    an H100, in the same process as the tests before it); the failure was not reproduced."""
    gc.collect()
    gc.disable()
    try:
        _blocks_without_gc(ex, block_memory, memory)
    finally:
        gc.enable()


def _blocks_without_gc(ex: Checker, block_memory: Callable[[], AbstractContextManager[Any]],
                       memory: RealMemory) -> None:
    memory.empty_cache()
    memory.make("live", 8 * MiB)  # live before every block: none of them counts it

    # 1. Served from the cache, after an earlier, higher peak of the process.
    memory.make("earlier", 256 * MiB)
    memory.free("earlier")  # its 256 MiB segment stays cached: the next block reuses it
    with _manager(ex, block_memory) as report:
        memory.make("x", 64 * MiB)
        memory.make("y", 32 * MiB)
        memory.free("x", "y")
    _expect_report(ex, _report(ex, report), "a block that held 64 MiB + 32 MiB at once, from the cache,", 96 * MiB, 0)

    # 2. Grows the cache, and gives it back before it ends.
    memory.empty_cache()  # only the live tensor's segment is left
    with _manager(ex, block_memory) as report:
        memory.make("x", 64 * MiB)
        memory.make("y", 300 * MiB)
        memory.free("x", "y")
        memory.empty_cache()  # at the end, nothing more is reserved than at the start
    _expect_report(ex, _report(ex, report), "a block that made two new segments (64 + 300 MiB) and released them "
                   "before it ended", 364 * MiB, 364 * MiB, too_little=_RELEASED)

    # 3. Nested: the outer block's peak comes before the inner block starts (and resets the counters).
    memory.empty_cache()
    with _manager(ex, block_memory) as outer:
        memory.make("a", 300 * MiB)
        memory.free("a")
        memory.empty_cache()  # the outer block's 300 MiB are reserved no more when the inner block starts
        with _manager(ex, block_memory) as inner:
            memory.make("b", 96 * MiB)
            memory.make("c", 48 * MiB)  # two new segments: no cached one is free for them
            memory.free("b", "c")
    _report(ex, inner, "the inner")
    _report(ex, outer, "the outer")
    _expect_report(ex, inner, "an inner block that held 96 MiB + 48 MiB in two new segments", 144 * MiB, 144 * MiB)
    _expect_report(ex, outer, "an outer block that held 300 MiB in a new segment, released it, then ran an inner "
                   "block of 144 MiB,", 300 * MiB, 300 * MiB, too_little=_OUTER)

    memory.free("live")


def check_block_memory(block_memory: Callable[[], AbstractContextManager[Any]]) -> None:
    """block_memory() must report a block's peak allocated bytes and reserved growth beyond its start, also when
    blocks are nested."""
    if not has_cuda():
        return _check_block_memory_on_cpu(block_memory)
    require_cuda("check_block_memory()")
    with exercise("block_memory") as ex:
        _blocks(ex, block_memory, RealMemory())
        torch.cuda.empty_cache()


register(Exercise(NOTEBOOK, "block_memory", check_block_memory, gpu=True, cpu_checks=16))


def _check_block_memory_on_cpu(block_memory: Callable[[], AbstractContextManager[Any]]) -> None:
    """check_block_memory's blocks, on imitated counters: the arithmetic of the reports, not the allocator."""
    with (exercise("block_memory") as ex,
          ex.on_cpu("the reports of all three blocks, nested ones too, with the allocator's counters imitated "
                    "(ImitatedCounters)", "the same blocks on PyTorch's caching allocator"),
          cuda_on_cpu(), imitated_counters() as counters):
        _blocks(ex, block_memory, ImitatedMemory(counters))


# ---------------------------------------------------------------- exercise 3: a loop without growth
def run_batches(lengths: list[int], width: int = 4096) -> list[float]:
    """The loop the exercise fixes: one (n, width) float32 batch of ones per length; each batch's sum."""
    sums = []
    for n in lengths:
        batch = torch.ones(n, width, device="cuda")
        sums.append(float(batch.sum()))
    return sums


GROWING_LENGTHS = [256 * k for k in range(1, 17)]  # 4 MiB ... 64 MiB batches of width 4096
MIXED_LENGTHS = [1024, 3072, 512, 4096, 2048, 256, 3584]  # 16, 48, 8, 64, 32, 4, 56 MiB


def batches_footprint(fn: Callable[[list[int]], list[float]], lengths: list[int]) -> tuple[list[float], int, int]:
    """Run fn(lengths) from an empty cache: (its results, growth of peak reserved bytes, new segments)."""
    require_cuda("batches_footprint()")
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_reserved()
    segments = torch.cuda.memory_stats().get("segment.all.allocated", 0)
    result = fn(list(lengths))
    torch.cuda.synchronize()
    growth = torch.cuda.max_memory_reserved() - start
    new_segments = torch.cuda.memory_stats()["segment.all.allocated"] - segments
    torch.cuda.empty_cache()
    return result, growth, new_segments


def check_batches_without_growth(run_batches_fixed: Callable[[list[int]], list[float]]) -> None:
    """run_batches_fixed(lengths) must return what run_batches does, reserving little beyond the largest batch."""
    if not has_cuda():
        return _check_batches_on_cpu(run_batches_fixed)
    require_cuda("check_batches_without_growth()")
    with exercise("run_batches_fixed") as ex:
        for lengths in (GROWING_LENGTHS, MIXED_LENGTHS):
            largest = max(lengths) * 4096 * 4
            got, growth, segments = batches_footprint(run_batches_fixed, lengths)
            want = run_batches(lengths)
            ex.expect(
                isinstance(got, list) and got == want,
                f"for {len(lengths)} batches the sums differ from run_batches' (first ones: "
                f"{got[:3] if isinstance(got, list) else got!r} "
                f"instead of {want[:3]})",
                "keep the batches in their order and give each its own sum; only the memory may change",
            )
            ex.expect(
                growth <= 1.1 * largest + 4 * MiB,
                f"reserved memory grew by {format_bytes(growth)} for a largest batch of {format_bytes(largest)}",
                "how many batches are alive at once at each step of your loop, and which cached memory can "
                "the next one reuse?",
            )
            ex.expect(
                segments <= 3,
                f"the loop asked the driver for {segments} new segments (cudaMalloc calls)",
                "every new segment is a cudaMalloc (an emptied cache pays one per batch): how few could "
                "serve the whole loop?",
            )


register(Exercise(NOTEBOOK, "run_batches_fixed", check_batches_without_growth, gpu=True, cpu_checks=2))


def _check_batches_on_cpu(run_batches_fixed: Callable[[list[int]], list[float]]) -> None:
    """check_batches_without_growth's sums, with the batches made on the CPU: the values, not the memory."""
    with (exercise("run_batches_fixed") as ex,
          ex.on_cpu("the sums of both loops, in order, with the batches made on the CPU",
                    "how much the reserved memory grows, and how many new segments (cudaMalloc calls) the loop needs")):
        for lengths in (GROWING_LENGTHS, MIXED_LENGTHS):
            with cuda_on_cpu():
                got, want = run_batches_fixed(list(lengths)), run_batches(lengths)
            ex.expect(
                isinstance(got, list) and got == want,
                f"for {len(lengths)} batches the sums differ from run_batches' (first ones: "
                f"{got[:3] if isinstance(got, list) else got!r} "
                f"instead of {want[:3]})",
                "keep the batches in their order and give each its own sum; only the memory may change",
            )
