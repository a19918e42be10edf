"""utils.plotting: the plots render, stay small, and timelines are built from traces."""

import io

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import utils
from conftest import ROOT, gpu, host
from utils.plotting import Interval
from utils.timing import Timing


def png_bytes(ax) -> int:
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    plt.close(ax.figure)
    return buf.tell()


TIMINGS = [Timing("a", np.array([1e-3, 1.1e-3, 0.9e-3])), Timing("b", np.array([2e-3, 2.5e-3, 2.2e-3]))]


@host
@pytest.mark.parametrize("kind", ["bar", "box"])
def test_plot_timings(kind):
    ax = utils.plot_timings(TIMINGS, kind=kind)
    assert ax.get_xlabel() == "time per call (ms)"
    assert png_bytes(ax) < 100_000


@host
def test_plot_timings_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        utils.plot_timings(TIMINGS, kind="pie")


@host
def test_plot_timeline_one_row_per_lane():
    ivs = [Interval("stream 7", "copy", 0, 2), Interval("stream 8", "matmul", 1, 3), Interval("stream 7", "copy", 2, 4)]
    ax = utils.plot_timeline(ivs)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["stream 7", "stream 8"]
    assert len(ax.patches) == 3
    assert png_bytes(ax) < 100_000


@host
def test_plot_timeline_needs_intervals():
    with pytest.raises(ValueError, match="no intervals"):
        utils.plot_timeline([])


@host
def test_intervals_from_chrome_trace():
    trace = {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel<128, 4>(int)", "ts": 1010,
         "dur": 500, "args": {"stream": 7}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 1000, "dur": 2000, "args": {"stream": 13}},
    ]}
    assert utils.intervals_from_chrome_trace(trace) == [
        Interval("stream 13", "gpu_memcpy", 0.0, 2.0),
        Interval("stream 7", "elementwise_kernel", 0.01, 0.51),
    ]


@host
def test_a_cpu_profiler_trace_has_no_gpu_work():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        torch.ones(100).sum()
    assert utils.intervals_from_profiler(prof) == []


@gpu
def test_intervals_from_a_real_gpu_profiler_trace():
    x = torch.ones(2**20, device="cuda")
    with torch.profiler.profile() as prof:
        (x * 2).sum()
        torch.cuda.synchronize()
    intervals = utils.intervals_from_profiler(prof)
    assert len(intervals) >= 2, intervals  # the multiplication and the sum
    assert all(iv.lane.startswith("stream ") and iv.end_ms >= iv.start_ms for iv in intervals)


@gpu
def test_stream_timeline_sees_overlap():
    side = torch.cuda.Stream()
    tl = utils.StreamTimeline()
    with tl.span("sleep", lane="default"):
        torch.cuda._sleep(10_000_000)
    with tl.span("sleep", stream=side, lane="side"):
        torch.cuda._sleep(10_000_000)
    a, b = tl.intervals()
    assert a.lane == "default" and b.lane == "side"
    assert b.start_ms < a.end_ms, "two sleeps on two streams should run at the same time"


@host
def test_plot_timings_on_a_log_axis_draws_points_with_time_ticks():
    fast, slow = Timing("gpu", np.array([340e-6, 341e-6, 345e-6])), Timing("cpu", np.array([12e-3, 13e-3, 14e-3]))
    ax = utils.plot_timings([slow, fast], log=True)
    assert ax.get_xscale() == "log" and not ax.patches  # points, not bars
    ax.figure.canvas.draw()
    assert any(t.get_text().endswith(("µs", "ms")) for t in ax.get_xticklabels())
    assert png_bytes(ax) < 100_000


@pytest.mark.skipif(not utils.has_cupy(), reason=f"needs CuPy on a GPU: {utils.cupy_status().reason}")
def test_cupy_stream_timeline_sees_overlap_and_names_the_null_stream():
    import cupy as cp

    side = cp.cuda.Stream(non_blocking=True)
    tl = utils.StreamTimeline(backend="cupy")
    with tl.span("sleep", stream=cp.cuda.Stream.null):
        utils.cupy_sleep(10e-3)
    with tl.span("sleep", stream=side, lane="side"):
        utils.cupy_sleep(10e-3)
    a, b = tl.intervals()
    assert a.lane == "null stream" and b.lane == "side"
    assert b.start_ms < a.end_ms, "two sleeps on two non-blocking streams should run at the same time"
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null  # spans restore the current stream


@host
def test_stream_timeline_rejects_an_unknown_backend():
    with pytest.raises(ValueError, match="'cuda' or 'cupy'"):
        utils.StreamTimeline(backend="jax")


@host
def test_importing_utils_leaves_pyplot_for_the_first_plot_and_the_style_holds():
    """`import utils` (every notebook's setup cell) does not import pyplot, which costs about half a
    second; the course's style, set at import, is still there when pyplot comes."""
    check = ("import sys, utils\n"
             "print('matplotlib.pyplot' in sys.modules)\n"
             "import matplotlib.pyplot as plt\n"
             "size = tuple(plt.rcParams['figure.figsize'])\n"
             "print(size == utils.plotting.STYLE['figure.figsize'], plt.gca().spines['top'].get_visible())")
    printed = utils.run_python(check, env={"MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}).split("\n")
    assert printed[0] == "False", "importing utils imported pyplot"
    assert printed[1] == "True False", printed  # the course's figure size; no top spine
