"""utils.timing additions: a cold L2 cache (flush_l2) and other tools' results as a Timing (as_timing)."""

import numpy as np
import pytest
import torch

import utils
from conftest import cpu_only, gpu, host
from utils.timing import Timing, as_timing, gpu_time_per_call, l2_flusher


# ---------------------------------------------------------------- as_timing
@host
def test_as_timing_from_a_torch_utils_benchmark_measurement():
    from torch.utils.benchmark import Timer

    m = Timer("x + 1", globals={"x": torch.ones(4)}, label="add",
              sub_label="small").blocked_autorange(min_run_time=0.01)
    t = as_timing(m, backend="cpu")
    assert isinstance(t, Timing) and t.label == "add: small"
    assert np.allclose(t.times, m.times) and t.calls_per_block == m.number_per_run
    assert t.median == pytest.approx(m.median)


class FakeCupyxResult:
    """What cupyx.profiler.benchmark returns: cpu_times (n,) and gpu_times (devices, n), in seconds."""

    name = "f"
    cpu_times = np.array([1e-6, 2e-6, 3e-6])
    gpu_times = np.array([[10e-6, 20e-6, 30e-6]])


@host
def test_as_timing_from_cupyx_takes_the_gpu_times():
    t = as_timing(FakeCupyxResult())
    assert t.label == "f" and t.median == pytest.approx(20e-6)
    assert as_timing(FakeCupyxResult().cpu_times, label="cpu").median == pytest.approx(2e-6)


@host
def test_as_timing_from_milliseconds():
    t = as_timing([1.0, 2.0, 4.0], label="do_bench", unit=1e-3)  # triton.testing.do_bench(..., return_mode="all")
    assert t.median == pytest.approx(2e-3) and t.calls_per_block == 1
    assert "do_bench" in utils.compare([t, as_timing([2.0], label="b", unit=1e-3)])


@host
def test_as_timing_needs_times():
    with pytest.raises(ValueError, match="no times"):
        as_timing([], label="empty")


# ---------------------------------------------------------------- flush_l2
def test_flush_needs_a_gpu_backend():
    with pytest.raises(ValueError, match="GPU backend"):
        l2_flusher("cpu")
    # Without a GPU, the reason there is none; with one, that backend='cpu' cannot flush.
    expected = ValueError if utils.has_cuda() else utils.GPUUnavailableError
    with pytest.raises(expected, match="flush_l2"):
        utils.benchmark(lambda: None, backend="cpu", flush_l2=True)


@cpu_only
def test_flush_without_gpu_says_why():
    with pytest.raises(utils.GPUUnavailableError, match="L2"):
        l2_flusher("cuda")


@gpu
def test_flushed_timing_of_a_kernel_that_touches_no_memory_is_unchanged():
    sleep = lambda: torch.cuda._sleep(100_000)
    t = utils.benchmark(sleep, flush_l2=True, min_time=0.1)
    assert t.calls_per_block == 1
    # 10%: the two are measured at different moments, and the SM clock (which sets a sleep's time)
    # moved 6% between them once (H200, 2026-11-27); flushing's own time would add 30% or more.
    assert t.median == pytest.approx(gpu_time_per_call(sleep), rel=0.1)


@gpu
def test_flushing_makes_a_cache_resident_working_set_slower():
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    a = torch.randn(l2 // 16, device="cuda")  # a and out together: a quarter of L2
    out = torch.empty_like(a)
    # Warm, such a small kernel is shorter than its launch, so any host-clocked or blocked timing
    # measures the launch pace: take the kernels' own durations from the profiler instead.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as prof:
        for _ in range(20):
            torch.mul(a, 2, out=out)
        torch.cuda.synchronize()
    warm = float(np.median([iv.end_ms - iv.start_ms for iv in utils.intervals_from_profiler(prof)])) / 1e3
    cold = utils.benchmark(torch.mul, a, 2, out=out, min_time=0.1, flush_l2=True)  # the flush keeps the GPU busy
    assert cold.median > 1.2 * warm


@gpu
def test_as_timing_of_the_other_gpu_tools_agrees_with_benchmark():
    triton_testing = pytest.importorskip("triton.testing")
    sleep = lambda: torch.cuda._sleep(200_000)
    ours = utils.benchmark(sleep, min_time=0.1)
    theirs = as_timing(triton_testing.do_bench(sleep, rep=50, return_mode="all"), label="do_bench", unit=1e-3)
    assert theirs.median == pytest.approx(ours.median, rel=0.05)
    if utils.has_cupy():
        from cupyx.profiler import benchmark as cupyx_benchmark

        gpu = as_timing(cupyx_benchmark(sleep, n_repeat=200))
        # cupyx records events around each call on an otherwise idle GPU, so its GPU times also
        # hold each call's launch gap (notebook 02): never below ours, and not by much above.
        assert 0.98 * ours.median < gpu.median < 1.3 * ours.median


# ---------------------------------------------------------------- run_in_turn
SLOW_IMPORT = """
import time
with open(LOG, "a") as log:
    log.write("import starts\\n")
time.sleep(1.5)  # a slow import, as PyTorch's is
with open(LOG, "a") as log:
    log.write("imported\\n")
"""

TURN = """
import sys, time
with open(sys.argv[1], "a") as log:
    log.write(f"{sys.argv[2]} begins\\n")
time.sleep(0.1)
with open(sys.argv[1], "a") as log:
    log.write(f"{sys.argv[2]} ends\\n")
print(sys.argv[2], end="")
"""


@host
def test_run_in_turn_imports_side_by_side_then_measures_one_at_a_time(tmp_path):
    import time

    from utils.processes import run_in_turn

    log = tmp_path / "log"
    (tmp_path / "slow_import.py").write_text(f"LOG = {str(log)!r}\n" + SLOW_IMPORT)
    runs = {name: {"args": [str(log), name], "env": {"PYTHONPATH": str(tmp_path)}} for name in ("a", "b", "c")}
    start = time.perf_counter()
    printed = run_in_turn(TURN, runs, imports="slow_import")
    took = time.perf_counter() - start
    assert printed == {"a": "a", "b": "b", "c": "c"}
    lines = log.read_text().splitlines()
    assert lines[:6] == ["import starts"] * 3 + ["imported"] * 3, lines  # all three imported at once...
    assert lines[6:] == ["a begins", "a ends", "b begins", "b ends", "c begins", "c ends"], lines  # ...then took turns
    assert took < 3.8, f"three imports of 1.5 s side by side took {took:.1f} s (one after another: over 4.5 s)"


@host
def test_run_in_turn_reports_a_failure_and_stops_the_others(tmp_path):
    from utils.processes import run_in_turn

    fails = "import sys\nif sys.argv[1] == 'bad':\n    raise SystemExit('no luck')\nprint('fine')"
    with pytest.raises(utils.ChildFailed, match="'bad' exited with status 1:\nno luck"):
        run_in_turn(fails, {"good": {"args": ["good"]}, "bad": {"args": ["bad"]}, "late": {"args": ["late"]}},
                    imports="json")
    with pytest.raises(utils.ChildFailed, match="ModuleNotFoundError"):  # a failed import does not hang the others
        run_in_turn("print(1)", {"a": {}, "b": {}}, imports="no_such_module_here")
