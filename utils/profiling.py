"""Read a torch.profiler trace from code: what ran on each GPU stream, when the GPU idled, whether
copies overlapped compute, where the host waited, and how many launches each `record_function` made.

    with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        train_step()
    prof.export_chrome_trace("trace.json.gz")      # .gz: torch.profiler gzips it itself
    trace = profiling.load_trace("trace.json.gz")
    profiling.work_per_stream(trace)                # {7: StreamWork(kernels=12, copies=0, ...), ...}

The trace is the Chrome-trace JSON that Kineto writes (pytorch/kineto, `libkineto/src/output_json.cpp`;
each event's "args" from `CuptiActivity.cpp`).  What this module reads of it:

- complete events, `"ph": "X"`, with a start `ts` and a duration `dur` in microseconds;
- their category `cat`: `kernel`, `gpu_memcpy`, `gpu_memset` (GPU work: `args["stream"]`, and
  `args["correlation"]`, the id of the host call that queued it); `cuda_runtime` and `cuda_driver`
  (host calls into CUDA: `cudaLaunchKernel`, `cuLaunchKernel`, `cudaGraphLaunch`,
  `cudaStreamSynchronize`...; `args["correlation"]` again); `cpu_op` (`aten::mm`...) and
  `user_annotation` (`record_function` ranges, and the `ProfilerStep#N` of a schedule), by host
  thread `tid`.  The `ac2g` flow events link the same pairs that `correlation` links; they are not needed.

Times are returned in seconds on the trace's clock (print them with `utils.format_time`).

Why by hand: `prof.key_averages()` totals time per operator but says nothing about *when*: no idle
gaps, no overlap, no waits in order.  Holistic Trace Analysis (PyPI `HolisticTraceAnalysis`) has
idle-time and temporal breakdowns and launch statistics, but its overlap is between NCCL
communication and compute kernels (not copies), it reads a folder of per-rank traces into pandas,
and it requires pandas, plotly, networkx, pydot, jupyterlab and pytest: too much to install, and to
read, for the five questions above, which take a page of plain Python.
"""

from __future__ import annotations

import bisect
import dataclasses
import gzip
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .plotting import Interval, intervals_from_chrome_trace

Event = dict[str, Any]
Trace = dict[str, Any]
Span = tuple[float, float]  # (start, end) in seconds on the trace's clock

GPU_WORK = ("kernel", "gpu_memcpy", "gpu_memset")
HOST_CALLS = ("cuda_runtime", "cuda_driver")
# Host calls that can block until the GPU catches up (a copy to or from pageable memory does, too).
WAITS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
         "cudaMemcpyAsync")
# Host calls that queue kernels (a graph's launch among them).
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
            "cuLaunchKernelEx", "cudaGraphLaunch")
# Host calls that wait for the GPU whatever they take: synchronizations, and copies of the synchronous API.
SYNCHRONIZING = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
                 "cudaMemcpy2D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cuCtxSynchronize",
                 "cuStreamSynchronize", "cuEventSynchronize", "cuMemcpy", "cuMemcpyHtoD", "cuMemcpyDtoH")
# Host calls that only queue work: they return at once, unless the queue of launched work is full.
QUEUING = (*LAUNCHES, "cudaMemcpyAsync", "cudaMemsetAsync", "cudaEventRecord", "cudaEventRecordWithFlags",
           "cudaStreamWaitEvent", "cudaLaunchHostFunc", "cuMemcpyAsync", "cuMemcpyHtoDAsync", "cuEventRecord",
           "cuStreamWaitEvent")


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------
def load_trace(trace: Trace | str | os.PathLike[str]) -> Trace:
    """The trace as a dict: from a path (`.json`, or `.json.gz` as export_chrome_trace writes it) or as given."""
    if isinstance(trace, dict):
        return trace
    opener = gzip.open if os.fspath(trace).endswith(".gz") else open
    with opener(trace, "rt") as f:
        data: Trace = json.load(f)
    return data


def events(trace: Trace, *categories: str) -> list[Event]:
    """The trace's complete events ('ph' == 'X') of these categories, in order of their start."""
    found = [e for e in load_trace(trace).get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") in categories]
    return sorted(found, key=lambda e: float(e["ts"]))


def span(event: Event) -> Span:
    """An event's (start, end) in seconds."""
    start = float(event["ts"]) * 1e-6
    return start, start + float(event.get("dur", 0.0)) * 1e-6


def call_name(event: Event) -> str:
    """A CUDA call's name without its variant: 'cudaMemcpyAsync_ptsz_v7000' -> 'cudaMemcpyAsync'."""
    return re.sub(r"(_ptsz|_ptds|_v\d+)+$", "", str(event.get("name", "")))


def stream_of(event: Event) -> int:
    """The GPU stream an event ran on (its 'args', else its row: Kineto puts GPU work in row = stream)."""
    return int(event.get("args", {}).get("stream", event.get("tid", -1)))


# --------------------------------------------------------------------------------------------
# Time on sets of intervals
# --------------------------------------------------------------------------------------------
def union(spans: Iterable[Span]) -> list[Span]:
    """Merge intervals that touch or overlap: the time when at least one of them was active."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def total(spans: Iterable[Span]) -> float:
    """Seconds covered by at least one interval."""
    return sum(end - start for start, end in union(spans))


def both(a: Iterable[Span], b: Iterable[Span]) -> float:
    """Seconds during which something of `a` and something of `b` were active at the same time."""
    a, b = union(a), union(b)
    i = j = 0
    shared = 0.0
    while i < len(a) and j < len(b):
        shared += max(0.0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return shared


def clip(spans: Iterable[Span], window: Span) -> list[Span]:
    """The parts of the intervals inside the window."""
    return [(max(s, window[0]), min(e, window[1])) for s, e in spans if e > window[0] and s < window[1]]


# --------------------------------------------------------------------------------------------
# The questions
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StreamWork:
    """What one GPU stream ran: how many kernels, copies and memsets, and for how long (seconds)."""

    kernels: int
    copies: int
    memsets: int
    busy: float


def work_per_stream(trace: Trace | str | os.PathLike[str]) -> dict[int, StreamWork]:
    """For each GPU stream in the trace: its kernels, copies and memsets, and the time it was busy."""
    by_stream: dict[int, list[Event]] = {}
    for e in events(load_trace(trace), *GPU_WORK):
        by_stream.setdefault(stream_of(e), []).append(e)
    return {stream: StreamWork(kernels=sum(e["cat"] == "kernel" for e in work),
                               copies=sum(e["cat"] == "gpu_memcpy" for e in work),
                               memsets=sum(e["cat"] == "gpu_memset" for e in work),
                               busy=total(span(e) for e in work))
            for stream, work in sorted(by_stream.items())}


def gpu_window(trace: Trace | str | os.PathLike[str]) -> Span:
    """From the start of the first GPU work to the end of the last (ValueError if there is none)."""
    spans = [span(e) for e in events(load_trace(trace), *GPU_WORK)]
    if not spans:
        raise ValueError("the trace holds no GPU work: was it recorded with ProfilerActivity.CUDA on a GPU?")
    return min(s for s, _ in spans), max(e for _, e in spans)


def gpu_idle(trace: Trace | str | os.PathLike[str], window: Span | None = None) -> float:
    """Seconds in the window (default: `gpu_window`) when no stream ran anything."""
    trace = load_trace(trace)
    window = window or gpu_window(trace)
    busy = total(clip((span(e) for e in events(trace, *GPU_WORK)), window))
    return (window[1] - window[0]) - busy


@dataclass(frozen=True)
class CopyOverlap:
    """Seconds when copies ran, when kernels ran, and when both ran at once (on different streams)."""

    copies: float
    kernels: float
    both: float

    @property
    def hidden(self) -> float:
        """The fraction of the copies' time that kernels ran alongside (0 when there were no copies)."""
        return self.both / self.copies if self.copies else 0.0


def copy_compute_overlap(trace: Trace | str | os.PathLike[str], window: Span | None = None,
                         kind: str = "") -> CopyOverlap:
    """Did copies overlap compute? Times of copies, of kernels, and of both at once (in the window).

    `kind` keeps the copies whose name contains it: "HtoD" for copies from the host only (a trace names
    them "Memcpy HtoD (Pinned -> Device)"), leaving out copies within the GPU ("Memcpy DtoD ...")."""
    trace = load_trace(trace)
    window = window or (float("-inf"), float("inf"))
    copies = clip((span(e) for e in events(trace, "gpu_memcpy") if kind in str(e.get("name", ""))), window)
    kernels = clip((span(e) for e in events(trace, "kernel")), window)
    return CopyOverlap(copies=total(copies), kernels=total(kernels), both=both(copies, kernels))


@dataclass(frozen=True)
class HostWait:
    """A host call that can wait for the GPU: its name, the operator it ran in, when, and how long."""

    call: str
    op: str
    start: float
    seconds: float


def host_waits(trace: Trace | str | os.PathLike[str], at_least: float = 0.0) -> list[HostWait]:
    """Synchronizing CUDA calls (`WAITS`) that lasted `at_least` seconds, in order, each with the
    innermost operator (`cpu_op` or `record_function` range) of its thread that it ran in."""
    trace = load_trace(trace)
    ops: dict[Any, list[Event]] = {}
    for e in events(trace, "cpu_op", "user_annotation"):
        ops.setdefault(e.get("tid"), []).append(e)
    starts = {tid: [float(e["ts"]) for e in found] for tid, found in ops.items()}
    waits = []
    for e in events(trace, *HOST_CALLS):
        start, end = span(e)
        if call_name(e) not in WAITS or end - start < at_least:
            continue
        found, op = ops.get(e.get("tid"), []), ""
        for k in range(bisect.bisect_right(starts.get(e.get("tid"), []), float(e["ts"])) - 1, -1, -1):
            if span(found[k])[1] >= end:  # the latest-starting op that contains the call: the innermost
                op = str(found[k]["name"])
                break
        waits.append(HostWait(call=call_name(e), op=op, start=start, seconds=end - start))
    return waits


@dataclass(frozen=True)
class HostSplit:
    """A window of the host's time, split three ways (seconds): in CUDA calls (`calls`: by name, how many
    and how long, longest first), in operators outside those calls, and in neither (Python, the profiler's
    own work, ...). Printed: the window's length, then the three."""

    calls: dict[str, tuple[int, float]]
    in_calls: float
    in_ops: float
    neither: float

    def __str__(self) -> str:
        from .formatting import format_time  # imported here: only this printout needs it

        names = ", ".join(f"{n} {name} {format_time(s)}" for name, (n, s) in self.calls.items())
        return (f"{format_time(self.in_calls + self.in_ops + self.neither)}: in CUDA calls "
                f"{format_time(self.in_calls)}{f' ({names})' if names else ''}, in operators outside them "
                f"{format_time(self.in_ops)}, in neither {format_time(self.neither)}")


def host_split(trace: Trace | str | os.PathLike[str], window: Span) -> HostSplit:
    """How the host spent `window`: the CUDA calls (runtime and driver) that started in it, before its end,
    by name; the time inside operators (`cpu_op`) but outside those calls; the rest.  Calls and operators
    are clipped to the window and counted on every thread, a moment once (as `union`)."""
    trace = load_trace(trace)
    length = max(0.0, window[1] - window[0])
    calls = [e for e in events(trace, *HOST_CALLS) if window[0] <= span(e)[0] < window[1]]
    by_name: dict[str, tuple[int, float]] = {}
    for e in calls:
        n, seconds = by_name.get(call_name(e), (0, 0.0))
        by_name[call_name(e)] = (n + 1, seconds + total(clip([span(e)], window)))
    in_calls = clip((span(e) for e in calls), window)
    busy = total(in_calls + clip((span(e) for e in events(trace, "cpu_op")), window))
    return HostSplit(calls=dict(sorted(by_name.items(), key=lambda item: -item[1][1])), in_calls=total(in_calls),
                     in_ops=busy - total(in_calls), neither=length - busy)


def ranges(trace: Trace | str | os.PathLike[str], name: str) -> list[Span]:
    """The spans of every `record_function(name)` range (or `ProfilerStep#N`) in the trace, in order."""
    return [span(e) for e in events(load_trace(trace), "user_annotation") if e.get("name") == name]


def launches_per_range(trace: Trace | str | os.PathLike[str], name: str) -> list[int]:
    """For each `record_function(name)` range: how many kernel launches (`LAUNCHES`) the host made in it.

    Counted by time, on every host thread: backward runs on autograd's own thread, inside the range
    of the thread that called `.backward()`.
    """
    trace = load_trace(trace)
    calls = [span(e)[0] for e in events(trace, *HOST_CALLS) if call_name(e) in LAUNCHES]
    return [bisect.bisect_right(calls, end) - bisect.bisect_left(calls, start) for start, end in ranges(trace, name)]


def kernels_per_range(trace: Trace | str | os.PathLike[str], name: str) -> list[int]:
    """For each `record_function(name)` range: how many GPU kernels the host calls made in it queued
    (matched by their correlation id)."""
    trace = load_trace(trace)
    queued: dict[int, int] = {}
    for e in events(trace, "kernel"):
        key = int(e.get("args", {}).get("correlation", -1))
        queued[key] = queued.get(key, 0) + 1
    calls = [(span(e)[0], int(e.get("args", {}).get("correlation", -1))) for e in events(trace, *HOST_CALLS)]
    return [sum(queued.get(c, 0) for t, c in calls if start <= t <= end) for start, end in ranges(trace, name)]


def host_calls(trace: Trace | str | os.PathLike[str], within: Iterable[Span]) -> list[Event]:
    """The host's CUDA calls (runtime and driver) that started inside one of the spans, on any thread, in order."""
    spans = union(within)
    starts = [s for s, _ in spans]
    found = []
    for e in events(load_trace(trace), *HOST_CALLS):
        t = span(e)[0]
        k = bisect.bisect_right(starts, t) - 1
        if k >= 0 and t <= spans[k][1]:
            found.append(e)
    return found


def queued_by(trace: Trace | str | os.PathLike[str], calls: Iterable[Event], *categories: str) -> list[Event]:
    """The GPU work (default: kernels, copies and memsets) that these host calls queued, matched by their
    correlation id: a graph's kernels belong to its cudaGraphLaunch, a copy to its cudaMemcpyAsync."""
    ids = {int(e.get("args", {}).get("correlation", -1)) for e in calls} - {-1}
    return [e for e in events(load_trace(trace), *(categories or GPU_WORK))
            if int(e.get("args", {}).get("correlation", -1)) in ids]


def overlap_of(copies: Iterable[Event], kernels: Iterable[Event]) -> CopyOverlap:
    """`copy_compute_overlap` for chosen events: the time of these copies, of these kernels, and of both at once."""
    a, b = [span(e) for e in copies], [span(e) for e in kernels]
    return CopyOverlap(copies=total(a), kernels=total(b), both=both(a, b))


KINDS = {"gpu_memcpy": "copy", "gpu_memset": "memset"}


def timeline(trace: Trace | str | os.PathLike[str], kernel_names: bool = False) -> list[Interval]:
    """The GPU work as intervals for `utils.plot_timeline`, one lane per stream (gzipped traces too).

    Named by kind ("kernel", "copy", "memset"), so that the legend stays short; `kernel_names=True`
    names each kernel instead (cuBLAS's run to a hundred characters)."""
    found = intervals_from_chrome_trace(load_trace(trace))
    if kernel_names:
        return found
    return [dataclasses.replace(iv, name=KINDS.get(iv.name, "kernel")) for iv in found]


def summary(trace: Trace | str | os.PathLike[str], step: str | None = None, at_least: float = 50e-6) -> dict[str, Any]:
    """The answers in one JSON-ready dict (seconds), for a trace with GPU work; `step` names the
    record_function range to count launches and kernels in; waits shorter than `at_least` are left out."""
    trace = load_trace(trace)
    overlap = copy_compute_overlap(trace)
    window = gpu_window(trace)
    found: dict[str, Any] = {
        "streams": {str(s): vars(w) for s, w in work_per_stream(trace).items()},
        "gpu_window": window[1] - window[0],
        "gpu_idle": gpu_idle(trace, window),
        "copies": overlap.copies, "kernels": overlap.kernels, "copies_and_kernels": overlap.both,
        "host_waits": [vars(w) for w in host_waits(trace, at_least)],
    }
    if step is not None:
        found["launches_per_step"] = launches_per_range(trace, step)
        found["kernels_per_step"] = kernels_per_range(trace, step)
    return found

