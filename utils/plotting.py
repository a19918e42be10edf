"""The course's plots: one style, small PNGs, legible from the back of a lecture room.

- `plot_timings`: medians with their interquartile range, or the whole distributions.
- `plot_memory`: bytes over a sequence of steps (allocated, reserved...), one line per series.
- `plot_timeline`: a Gantt chart of work on streams, one lane per stream.  Its intervals come from
  CUDA events (`StreamTimeline`, recorded by your code) or from a torch.profiler trace
  (`intervals_from_profiler`, recorded by the profiler, kernel by kernel).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib  # the style needs only this; pyplot is imported at the first plot (`_new_axes`)
import numpy as np
import torch

from .device import require_cuda, require_cupy
from .formatting import format_time
from .timing import Timing

if TYPE_CHECKING:
    from matplotlib.axes import Axes

STYLE: dict[str, Any] = {
    "figure.figsize": (7.0, 3.2),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 14,  # legible on a slide, where a figure is shown smaller than its 100 dpi size
    "axes.titlesize": 15,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
}


TICK_BELOW = 150  # plot_timeline marks a bar narrower than this fraction of the time axis with a tick


def use_course_style() -> None:
    """Apply the course's matplotlib style (called once when `utils` is imported)."""
    matplotlib.rcParams.update(STYLE)  # type: ignore[arg-type]  # matplotlib types the keys as literals


def _new_axes() -> Axes:
    """The axes of a new figure.  pyplot is imported here, not with `utils`: it costs half a second
    of every notebook's start, and not every notebook draws."""
    import matplotlib.pyplot as plt

    return plt.figure().gca()


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def plot_timings(timings: Sequence[Timing], kind: str = "bar", ax: Axes | None = None, title: str = "",
                 log: bool = False) -> Axes:
    """Compare timings: kind='bar' draws medians with IQR whiskers, kind='box' the distributions.

    log=True uses a logarithmic time axis, for timings that differ by orders of magnitude.
    """
    if kind not in ("bar", "box"):
        raise ValueError(f"kind must be 'bar' or 'box', not {kind!r}")
    ax = ax or _new_axes()
    unit, scale = _unit(max(t.median for t in timings))
    labels = [t.label for t in timings]
    if kind == "bar":
        medians = np.array([t.median for t in timings]) / scale
        errors = np.array([[t.median - t.q1, t.q3 - t.median] for t in timings]).T / scale
        if log:  # a bar needs a zero to start from, and a log axis has none: draw points instead
            ax.errorbar(medians, range(len(timings)), xerr=errors, fmt="o", markersize=9, capsize=5,
                        color="tab:blue")
            ax.set_yticks(range(len(timings)), labels)
            ax.set_ylim(-0.5, len(timings) - 0.5)
        else:
            ax.barh(labels, medians, xerr=errors, color="tab:blue", capsize=4)
        for y, t in enumerate(timings):  # the median, written next to its bar or point
            ax.annotate(format_time(t.median), (t.median / scale, y), xytext=(8, 8),
                        textcoords="offset points", fontsize=12)
    else:
        ax.boxplot([t.times / scale for t in timings], orientation="horizontal", tick_labels=labels)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
        low, high = min(t.q1 for t in timings) / scale, max(t.q3 for t in timings) / scale
        ax.set_xlim(low / 2, high * 3)
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v * scale)))
        ax.set_xlabel("time per call (log scale)")
    else:
        ax.set_xlim(left=0)
        ax.set_xlabel(f"time per call ({unit})")
    ax.set_title(title or ("median and IQR" if kind == "bar" else "distribution of block times"))
    return ax


def plot_memory(series: Mapping[str, Sequence[float]], x: Sequence[float] | None = None, xlabel: str = "step",
                ax: Axes | None = None, title: str = "") -> Axes:
    """Memory over a sequence of steps, in MiB: one stepped line per series (values in bytes).

    >>> plot_memory({"reserved": reserved, "allocated": allocated})   # doctest: +SKIP

    x: the value of each step (default 0, 1, 2, ...), e.g. the size of the tensor made at that step.
    """
    if not series:
        raise ValueError("plot_memory() got no series to draw")
    ax = ax or _new_axes()
    for label, values in series.items():
        steps = list(x) if x is not None else list(range(len(values)))
        ax.step(steps, np.asarray(values, dtype=float) / 2**20, where="post", label=label, linewidth=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")
    ax.set_title(title or "GPU memory")
    return ax


# --------------------------------------------------------------------------------------------
# Timelines
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """One piece of work on one lane (a stream), in milliseconds from the timeline's start."""

    lane: str
    name: str
    start_ms: float
    end_ms: float


def plot_timeline(intervals: Sequence[Interval], ax: Axes | None = None, title: str = "") -> Axes:
    """A Gantt chart: one row per lane, one bar per interval, coloured by name."""
    if not intervals:
        raise ValueError("plot_timeline() got no intervals: nothing was recorded")
    ax = ax or _new_axes()
    lanes = list(dict.fromkeys(i.lane for i in intervals))
    names = list(dict.fromkeys(i.name for i in intervals))
    colors = {n: matplotlib.colormaps["tab10"](k % 10) for k, n in enumerate(names)}
    span = max(i.end_ms for i in intervals) - min(i.start_ms for i in intervals)
    for iv in intervals:
        ax.barh(lanes.index(iv.lane), iv.end_ms - iv.start_ms, left=iv.start_ms, height=0.6,
                color=colors[iv.name], edgecolor="black", linewidth=0.3)
        if iv.end_ms - iv.start_ms < span / TICK_BELOW:  # narrower than a pixel or two: its edge alone would show,
            # in grey; a tick of its own colour marks where it ran (the bar keeps its true width)
            ax.plot([(iv.start_ms + iv.end_ms) / 2], [lanes.index(iv.lane)], marker="|", markersize=16,
                    markeredgewidth=3, color=colors[iv.name])
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.grid(axis="y", visible=False)
    if len(names) <= 8:
        from matplotlib.patches import Rectangle

        handles = [Rectangle((0, 0), 1, 1, color=colors[n]) for n in names]
        ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title or "work on streams")
    return ax


class StreamTimeline:
    """Record when pieces of GPU work ran, with CUDA events, for `plot_timeline`.

    >>> tl = StreamTimeline()                       # doctest: +SKIP
    >>> with tl.span("copy", stream=copy_stream):   # events recorded on copy_stream
    ...     x_gpu.copy_(x_pinned, non_blocking=True)
    >>> plot_timeline(tl.intervals())               # waits for the GPU, then converts

    Events time the *stream*: a span starts when the stream reaches its start event, so a span
    queued behind other work on its stream starts when that work ends.

    backend="cupy" does the same with CuPy's streams and events (`stream` is then a
    cupy.cuda.Stream, by default CuPy's current one): notebook 04 draws CuPy's streams with it.
    """

    def __init__(self, backend: str = "cuda") -> None:
        if backend not in ("cuda", "cupy"):
            raise ValueError(f"StreamTimeline backend must be 'cuda' or 'cupy', not {backend!r}")
        self._backend = backend
        if backend == "cupy":
            require_cupy("StreamTimeline(backend='cupy')")
            import cupy

            self._cupy: Any = cupy
        else:
            require_cuda("StreamTimeline")
        self._origin = self._event()
        self._origin.record()
        self._spans: list[tuple[str, str, Any, Any]] = []

    def _event(self) -> Any:
        return self._cupy.cuda.Event() if self._backend == "cupy" else torch.cuda.Event(enable_timing=True)

    @contextmanager
    def span(self, name: str, stream: Any = None, lane: str | None = None) -> Iterator[None]:
        """Run the block on `stream` (default: the current one) and record its start and end."""
        begin, end = self._event(), self._event()
        if self._backend == "cupy":
            stream = stream or self._cupy.cuda.get_current_stream()
            with stream:
                begin.record(stream)
                yield
                end.record(stream)
            default_lane = _cupy_stream_name(stream)
        else:
            stream = stream or torch.cuda.current_stream()
            with torch.cuda.stream(stream):
                begin.record(stream)
                yield
                end.record(stream)
            default_lane = _stream_name(stream)
        self._spans.append((lane or default_lane, name, begin, end))

    def _ms(self, begin: Any, end: Any) -> float:
        if self._backend == "cupy":
            return float(self._cupy.cuda.get_elapsed_time(begin, end))
        return float(begin.elapsed_time(end))

    def intervals(self) -> list[Interval]:
        """Wait for the GPU, then return the recorded spans in milliseconds since construction."""
        if self._backend == "cupy":
            self._cupy.cuda.Device().synchronize()
        else:
            torch.cuda.synchronize()
        return [Interval(lane, name, self._ms(self._origin, b), self._ms(self._origin, e))
                for lane, name, b, e in self._spans]


def _stream_name(stream: torch.cuda.Stream) -> str:
    default = stream == torch.cuda.default_stream(stream.device)
    return "default stream" if default else f"stream {stream.stream_id}"


def _cupy_stream_name(stream: Any) -> str:
    names = {0: "null stream", 2: "per-thread default stream"}  # cudaStreamLegacy is 0 in CuPy, cudaStreamPerThread 2
    return names.get(stream.ptr, f"stream {stream.ptr:#x}")


def intervals_from_chrome_trace(trace: dict[str, Any] | str | os.PathLike[str],
                                categories: Sequence[str] = ("kernel", "gpu_memcpy", "gpu_memset")) -> list[Interval]:
    """GPU work from a Chrome trace (torch.profiler's export_chrome_trace), one lane per stream.

    Each trace event of one of `categories` has a start 'ts' and a duration 'dur' in microseconds
    and the stream in args['stream'].  Times are shifted so the first event starts at 0.
    """
    if isinstance(trace, dict):
        data = trace
    else:
        with open(trace) as f:
            data = json.load(f)
    events = [e for e in data.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") in categories]
    if not events:
        return []
    t0 = min(float(e["ts"]) for e in events)
    return [
        Interval(
            lane=f"stream {e.get('args', {}).get('stream', '?')}",
            name=e["cat"] if e["cat"] != "kernel" else _short_kernel_name(e["name"]),
            start_ms=(float(e["ts"]) - t0) / 1e3,
            end_ms=(float(e["ts"]) + float(e["dur"]) - t0) / 1e3,
        )
        for e in sorted(events, key=lambda e: float(e["ts"]))
    ]


def _short_kernel_name(name: str) -> str:
    """'void at::native::vectorized_elementwise_kernel<4, ...>(...)' -> 'vectorized_elementwise_kernel'."""
    head = name.split("(")[0].split("<")[0]
    return head.split("::")[-1].replace("void ", "").strip() or name[:40]


def intervals_from_profiler(prof: torch.profiler.profile) -> list[Interval]:
    """GPU kernels and copies recorded by a finished torch.profiler.profile, one lane per stream."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        return intervals_from_chrome_trace(path)
