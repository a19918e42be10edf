"""GPU memory in readable units: what PyTorch's caching allocator holds, and the peak of a block.

Two numbers matter (notebook 01 measures both):
- *allocated*: bytes in live tensors;
- *reserved*: bytes the allocator has taken from the driver (cudaMalloc) and keeps cached for
  reuse. reserved >= allocated; nvidia-smi shows reserved plus the CUDA context.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from .device import require_cuda
from .formatting import format_bytes


@dataclass(frozen=True)
class MemoryState:
    """A snapshot of the allocator's counters for one device, in bytes."""

    allocated: int
    reserved: int
    peak_allocated: int

    def __str__(self) -> str:
        return (
            f"allocated {format_bytes(self.allocated)}, reserved {format_bytes(self.reserved)}, "
            f"peak allocated {format_bytes(self.peak_allocated)}"
        )


def memory_state(device: int | torch.device | None = None) -> MemoryState:
    """The caching allocator's counters now (raises GPUUnavailableError without a GPU)."""
    require_cuda("memory_state()")
    return MemoryState(
        allocated=torch.cuda.memory_allocated(device),
        reserved=torch.cuda.memory_reserved(device),
        peak_allocated=torch.cuda.max_memory_allocated(device),
    )


@dataclass
class Peak:
    """Filled in when a `peak_memory` block ends: bytes above what was allocated at its start."""

    label: str
    start: int = 0
    peak: int = 0

    @property
    def extra(self) -> int:
        """The block's own peak: the most it held at once beyond what was live before it."""
        return self.peak - self.start

    def __str__(self) -> str:
        return f"{self.label}: peak {format_bytes(self.extra)} above the {format_bytes(self.start)} live before"


@contextmanager
def peak_memory(label: str = "block", verbose: bool = True) -> Iterator[Peak]:
    """Measure the most GPU memory a `with` block held at once, beyond what was live before it.

    Resets PyTorch's peak counter on entry (torch.cuda.reset_peak_memory_stats), so an enclosing
    measurement of the peak is reset too.
    """
    require_cuda("peak_memory()")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    result = Peak(label, start=torch.cuda.memory_allocated())
    yield result
    torch.cuda.synchronize()
    result.peak = torch.cuda.max_memory_allocated()
    if verbose:
        print(result)


COURSE_BUDGET = 12 * 2**30  # every notebook fits in 12 GiB of GPU memory (a Colab T4 has 15 GB)


def gpu_budget(fraction: float = 0.8) -> int:
    """Bytes of GPU memory a notebook may use: 12 GiB, or `fraction` of a smaller card's memory.

    Notebooks size their tensors from this, so the same code runs on a T4 and on an H100.  It does
    not see memory that other processes hold on a shared GPU: there, check
    torch.cuda.mem_get_info() (free and total bytes) first.
    """
    require_cuda("gpu_budget()")
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    return min(COURSE_BUDGET, int(fraction * total))


# Allocator events of a memory snapshot (torch.cuda.memory._snapshot), and how each moves the totals:
# (sign for allocated, sign for reserved).  segment_map/unmap are expandable segments growing/shrinking.
_EVENT_EFFECT = {
    "alloc": (1, 0), "free_completed": (-1, 0),
    "segment_alloc": (0, 1), "segment_free": (0, -1),
    "segment_map": (0, 1), "segment_unmap": (0, -1),
}


def memory_timeline(snapshot: dict, device: int = 0) -> dict[str, list[int]]:
    """Allocated and reserved bytes before the history, then after each event that changes them.

    `snapshot` is what torch.cuda.memory._snapshot() returns while the history is being recorded
    (torch.cuda.memory._record_memory_history()).  Its `segments` give the totals at the end; the
    recorded events (alloc, free_completed, segment_alloc, segment_free, ...) are replayed backwards
    from there, so the series is right even when the history started with memory already in use.
    """
    segments = [s for s in snapshot["segments"] if s.get("device", device) == device]
    allocated = sum(s["allocated_size"] for s in segments)
    reserved = sum(s["total_size"] for s in segments)
    changes = [
        (_EVENT_EFFECT[e["action"]][0] * e["size"], _EVENT_EFFECT[e["action"]][1] * e["size"])
        for e in snapshot["device_traces"][device] if e["action"] in _EVENT_EFFECT
    ]
    timeline = {"allocated": [allocated], "reserved": [reserved]}
    for d_alloc, d_res in reversed(changes):  # walk back from the end state to the start
        allocated, reserved = allocated - d_alloc, reserved - d_res
        timeline["allocated"].append(allocated)
        timeline["reserved"].append(reserved)
    return {key: values[::-1] for key, values in timeline.items()}
