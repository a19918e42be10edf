"""utils.profiling: the answers read from a real CPU trace recorded here, and from a tiny GPU trace.

The GPU trace is written by hand in the schema Kineto's ChromeTraceLogger writes (pytorch/kineto,
libkineto/src/output_json.cpp: "ph", "cat", "name", "pid", "tid", "ts" and "dur" in µs; the "args" of
kernels, copies and runtime calls from libkineto/src/CuptiActivity.cpp, `metadataJson`; `ac2g` flows
from `handleLink`).  Its times are round numbers so that every answer can be worked out by hand
(below each test); a copy of it from a real H100 trace would be megabytes.
"""

import gzip
import itertools
import json

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function

from conftest import host
from utils import profiling

pytestmark = host  # traces are read the same way on every machine


def meta(name, pid, tid, value):
    return {"name": name, "ph": "M", "ts": 900.0, "pid": pid, "tid": tid, "args": {"name": value}}


def x(cat, name, ts, dur, pid=1234, tid=1234, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": float(ts), "dur": float(dur),
            "args": args}


def runtime(name, ts, dur, correlation, tid=1234):
    return x("cuda_runtime", name, ts, dur, tid=tid, cbid=0, correlation=correlation)


def gpu(cat, name, ts, dur, stream, correlation):
    extra = {"bytes": 1 << 20} if cat != "kernel" else {"grid": [1, 1, 1], "block": [128, 1, 1]}
    return x(cat, name, ts, dur, pid=0, tid=stream, device=0, context=1, stream=stream, correlation=correlation,
             **extra)


# Host thread 1234 runs two `record_function("step")` ranges; thread 5678 is autograd's, launching backward.
GPU_TRACE = {
    "schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": 1_700_000_000_000_000_000,
    "traceEvents": [
        meta("process_name", 1234, 0, "python"), meta("process_name", 0, 0, "GPU 0"),
        meta("thread_name", 0, 7, "stream 7"), meta("thread_name", 0, 13, "stream 13"),
        x("user_annotation", "step", 1000, 1000),
        x("cpu_op", "aten::mm", 1010, 20), runtime("cudaLaunchKernel", 1015, 5, 11),
        {"ph": "s", "id": 11, "pid": 1234, "tid": 1234, "ts": 1015.0, "cat": "ac2g", "name": "ac2g"},
        x("cpu_op", "aten::copy_", 1040, 30), runtime("cudaMemcpyAsync", 1045, 6, 12),
        x("cpu_op", "aten::add", 1080, 10), runtime("cudaLaunchKernel", 1082, 4, 13),
        runtime("cudaLaunchKernel", 1100, 5, 14, tid=5678),
        x("cpu_op", "aten::item", 1200, 700), x("cpu_op", "aten::_local_scalar_dense", 1205, 690),
        runtime("cudaMemcpyAsync", 1210, 10, 15), runtime("cudaStreamSynchronize", 1225, 660, 16),
        x("user_annotation", "step", 2000, 600),
        runtime("cudaGraphLaunch", 2010, 8, 21), runtime("cudaMemsetAsync", 2050, 4, 22),
        runtime("cudaDeviceSynchronize", 2100, 400, 23),
        gpu("kernel", "void at::native::gemm_kernel<float>(float*)", 1030, 300, 7, 11),
        {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 1030.0, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 1050, 200, 13, 12),
        gpu("kernel", "void at::native::vectorized_elementwise_kernel<4>(int)", 1330, 100, 7, 13),
        gpu("kernel", "void at::native::reduce_kernel<512>(int)", 1430, 50, 7, 14),
        gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1500, 5, 7, 15),
        gpu("kernel", "graph_kernel_a", 2020, 40, 7, 21), gpu("kernel", "graph_kernel_b", 2060, 40, 7, 21),
        gpu("gpu_memset", "Memset (Device)", 2200, 10, 7, 22),
        x("gpu_user_annotation", "step", 1029, 452, pid=0, tid=7),  # GPU-side shadow of a range: not work
    ],
}
US = 1e-6


def test_work_per_stream():
    # stream 7: kernels 1030-1480 (450) + copy 5 + graph kernels 80 + memset 10; stream 13: one 200 µs copy
    assert profiling.work_per_stream(GPU_TRACE) == {
        7: profiling.StreamWork(kernels=5, copies=1, memsets=1, busy=pytest.approx(545 * US)),
        13: profiling.StreamWork(kernels=0, copies=1, memsets=0, busy=pytest.approx(200 * US)),
    }


def test_gpu_idle_in_the_whole_window_and_in_a_part_of_it():
    # window 1030-2210 (1180 µs), busy 1030-1480, 1500-1505, 2020-2100, 2200-2210 (545 µs)
    assert profiling.gpu_window(GPU_TRACE) == pytest.approx((1030 * US, 2210 * US))
    assert profiling.gpu_idle(GPU_TRACE) == pytest.approx(635 * US)
    assert profiling.gpu_idle(GPU_TRACE, window=(1400 * US, 1600 * US)) == pytest.approx(115 * US)


def test_copies_overlapped_compute():
    # the 200 µs copy on stream 13 ran under stream 7's kernels; the 5 µs copy back ran alone
    found = profiling.copy_compute_overlap(GPU_TRACE)
    assert (found.copies, found.kernels, found.both) == pytest.approx((205 * US, 530 * US, 200 * US))
    assert found.hidden == pytest.approx(200 / 205)
    assert profiling.copy_compute_overlap(GPU_TRACE, window=(1490 * US, 1600 * US)).both == 0
    from_host = profiling.copy_compute_overlap(GPU_TRACE, kind="HtoD")  # the copy back to the host left out
    assert (from_host.copies, from_host.both) == pytest.approx((200 * US, 200 * US))
    assert profiling.copy_compute_overlap(GPU_TRACE, kind="DtoD").copies == 0


def test_host_waits_name_the_call_and_the_operator_it_ran_in():
    waits = profiling.host_waits(GPU_TRACE)
    assert [(w.call, w.op) for w in waits] == [
        ("cudaMemcpyAsync", "aten::copy_"), ("cudaMemcpyAsync", "aten::_local_scalar_dense"),
        ("cudaStreamSynchronize", "aten::_local_scalar_dense"), ("cudaDeviceSynchronize", "step")]
    long = profiling.host_waits(GPU_TRACE, at_least=100 * US)
    assert [(w.call, w.start, w.seconds) for w in long] == [
        ("cudaStreamSynchronize", pytest.approx(1225 * US), pytest.approx(660 * US)),
        ("cudaDeviceSynchronize", pytest.approx(2100 * US), pytest.approx(400 * US))]


def test_launches_and_kernels_per_range():
    # step 1: three launches (one from autograd's thread), three kernels; step 2: one graph launch, two kernels
    assert profiling.ranges(GPU_TRACE, "step") == pytest.approx([(1000 * US, 2000 * US), (2000 * US, 2600 * US)])
    assert profiling.launches_per_range(GPU_TRACE, "step") == [3, 1]
    assert profiling.kernels_per_range(GPU_TRACE, "step") == [3, 2]


def test_host_calls_queued_work_and_overlap_of_chosen_events():
    # step 1 (1000-2000 µs) made five CUDA calls, one on autograd's thread; they queued three kernels and one copy
    step1 = [profiling.ranges(GPU_TRACE, "step")[0]]
    calls = profiling.host_calls(GPU_TRACE, step1)
    assert [(profiling.call_name(e), e["tid"]) for e in calls] == [
        ("cudaLaunchKernel", 1234), ("cudaMemcpyAsync", 1234), ("cudaLaunchKernel", 1234),
        ("cudaLaunchKernel", 5678), ("cudaMemcpyAsync", 1234), ("cudaStreamSynchronize", 1234)]
    queued = profiling.queued_by(GPU_TRACE, calls)
    assert sorted(e["name"] for e in queued if e["cat"] == "kernel") == [
        "void at::native::gemm_kernel<float>(float*)", "void at::native::reduce_kernel<512>(int)",
        "void at::native::vectorized_elementwise_kernel<4>(int)"]
    assert [e["name"] for e in profiling.queued_by(GPU_TRACE, calls, "gpu_memcpy")] == [
        "Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH (Device -> Pageable)"]
    step2 = profiling.host_calls(GPU_TRACE, [profiling.ranges(GPU_TRACE, "step")[1]])  # a graph: its two kernels
    assert [e["name"] for e in profiling.queued_by(GPU_TRACE, step2, "kernel")] == ["graph_kernel_a", "graph_kernel_b"]
    # the HtoD copy (1050-1250) against the first step's kernels (1030-1480): all of it under them
    kernels = [e for e in queued if e["cat"] == "kernel"]
    found = profiling.overlap_of([e for e in queued if "HtoD" in e["name"]], kernels)
    assert (found.copies, found.kernels, found.both) == pytest.approx((200 * US, 450 * US, 200 * US))
    assert profiling.overlap_of([], kernels).hidden == 0.0


def test_host_split_names_the_calls_and_the_operator_time_around_them():
    # 1000-1100 µs: launches at 1015 (5 µs) and 1082 (4 µs), a copy at 1045 (6 µs), inside operators covering
    # 60 µs (1010-1030, 1040-1070, 1080-1090); the launch at 1100, on the end, is left out
    found = profiling.host_split(GPU_TRACE, (1000 * US, 1100 * US))
    assert found.calls == {"cudaLaunchKernel": (2, pytest.approx(9 * US)),
                           "cudaMemcpyAsync": (1, pytest.approx(6 * US))}
    assert (found.in_calls, found.in_ops, found.neither) == pytest.approx((15 * US, 45 * US, 40 * US))
    assert str(found) == ("100 µs: in CUDA calls 15.0 µs (2 cudaLaunchKernel 9.00 µs, 1 cudaMemcpyAsync 6.00 µs), "
                          "in operators outside them 45.0 µs, in neither 40.0 µs")
    # 1220-1300 µs: the synchronize (1225-1885) is clipped to 75 µs, inside `aten::item` (clipped to 80 µs)
    clipped = profiling.host_split(GPU_TRACE, (1220 * US, 1300 * US))
    assert clipped.calls == {"cudaStreamSynchronize": (1, pytest.approx(75 * US))}
    assert (clipped.in_calls, clipped.in_ops, clipped.neither) == pytest.approx((75 * US, 5 * US, 0))
    assert str(profiling.host_split(GPU_TRACE, (3000 * US, 3100 * US))) == (
        "100 µs: in CUDA calls 0.00 ns, in operators outside them 0.00 ns, in neither 100 µs")


def test_synchronizing_and_queuing_calls_are_told_apart():
    assert {"cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize", "cudaMemcpy"} <= set(
        profiling.SYNCHRONIZING)
    assert "cudaMemcpyAsync" not in profiling.SYNCHRONIZING and "cudaEventQuery" not in profiling.SYNCHRONIZING
    assert {"cudaGraphLaunch", "cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamWaitEvent"} <= set(profiling.QUEUING)
    assert not set(profiling.SYNCHRONIZING) & set(profiling.QUEUING)


def test_timeline_and_summary():
    lanes = {iv.lane for iv in profiling.timeline(GPU_TRACE)}
    assert lanes == {"stream 7", "stream 13"} and len(profiling.timeline(GPU_TRACE)) == 8
    assert {iv.name for iv in profiling.timeline(GPU_TRACE)} <= {"kernel", "copy", "memset"}
    assert {iv.name for iv in profiling.timeline(GPU_TRACE, kernel_names=True)} - {"gpu_memcpy", "gpu_memset"}
    found = profiling.summary(GPU_TRACE, step="step", at_least=100 * US)
    json.dumps(found)  # JSON-ready
    assert found["kernels_per_step"] == [3, 2] and len(found["host_waits"]) == 2
    assert found["gpu_idle"] == pytest.approx(635 * US) and found["copies_and_kernels"] == pytest.approx(200 * US)


def test_call_names_lose_their_variants():
    assert profiling.call_name({"name": "cudaMemcpyAsync_ptsz_v7000"}) == "cudaMemcpyAsync"
    assert profiling.call_name({"name": "cudaLaunchKernel"}) == "cudaLaunchKernel"


def test_time_on_sets_of_intervals():
    assert profiling.union([(3, 4), (0, 1), (0.5, 2)]) == [(0, 2), (3, 4)]
    assert profiling.union([(0, 3), (1, 2)]) == [(0, 3)]  # one inside another
    assert profiling.total([(0, 1), (0.5, 2), (3, 4)]) == 3
    assert profiling.both([(0, 2), (3, 4)], [(1, 3.5)]) == pytest.approx(1.5)


# --------------------------------------------------------------------------------------------
# A real trace, recorded here (CPU activities work on every machine)
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cpu_trace(tmp_path_factory):
    """Three `record_function("step")` ranges of a matmul, exported gzipped as torch.profiler does it."""
    a = torch.randn(64, 64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            with record_function("step"):
                (a @ a).relu().sum()
            torch.add(a, 1)  # between the steps
    path = tmp_path_factory.mktemp("trace") / "cpu.json.gz"
    prof.export_chrome_trace(str(path))
    return path


def test_a_gzipped_trace_loads(cpu_trace):
    with gzip.open(cpu_trace, "rt") as f:
        assert profiling.load_trace(cpu_trace) == json.load(f)


def test_record_function_ranges_hold_their_operators(cpu_trace):
    trace = profiling.load_trace(cpu_trace)
    steps = profiling.ranges(trace, "step")
    assert len(steps) == 3 and all(a[1] <= b[0] for a, b in itertools.pairwise(steps))
    ops = [(e["name"], profiling.span(e)) for e in profiling.events(trace, "cpu_op")]
    for start, end in steps:
        inside = [name for name, (s, e) in ops if start <= s and e <= end]
        assert inside.count("aten::matmul") == 1 and "aten::add" not in inside, inside
    assert sum(name == "aten::add" for name, _ in ops) == 3  # recorded, outside the ranges


def test_a_cpu_trace_has_no_gpu_work_and_no_launches(cpu_trace):
    assert profiling.work_per_stream(cpu_trace) == {}
    assert profiling.launches_per_range(cpu_trace, "step") == [0, 0, 0]
    assert profiling.host_waits(cpu_trace) == []
    (start, _), *_, (_, end) = profiling.ranges(cpu_trace, "step")
    split = profiling.host_split(cpu_trace, (start, end))  # no CUDA calls: operators and the rest
    assert split.calls == {} and split.in_calls == 0 and split.in_ops > 0 and split.neither >= 0
    assert split.in_ops + split.neither == pytest.approx(end - start)
    with pytest.raises(ValueError, match="no GPU work"):
        profiling.gpu_idle(cpu_trace)
