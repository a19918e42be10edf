"""utils.timing: accuracy on workloads of known duration, spread, errors, and printed form."""

import re
import time

import numpy as np
import pytest
import torch

import utils
from conftest import ROOT, cpu_only, gpu
from utils.timing import BenchmarkError, Timing, format_time, gpu_cycles_per_second, gpu_time_per_call


def spin(seconds: float) -> None:
    """A CPU workload of known duration: busy-wait on the clock (sleep would add OS jitter)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@pytest.mark.parametrize("seconds", [2e-3, 200e-6])
def test_cpu_median_matches_known_duration(seconds):
    t = utils.benchmark(spin, seconds, backend="cpu")
    assert t.median == pytest.approx(seconds, rel=0.03)
    assert t.iqr < 0.05 * t.median, "a steady workload should have a small spread"


def test_short_calls_are_grouped_into_blocks():
    t = utils.benchmark(spin, 20e-6, backend="cpu", block_time=1e-3)
    assert t.calls_per_block >= 25  # 1 ms blocks of 20 us calls
    assert t.median == pytest.approx(20e-6, rel=0.05)


def test_spread_is_reported():
    durations = iter(np.tile([1e-3, 3e-3], 1000))
    t = utils.benchmark(lambda: spin(next(durations)), backend="cpu", block_time=0, min_blocks=40, min_time=0)
    assert len(t.times) >= 40
    assert t.q1 == pytest.approx(1e-3, rel=0.1) and t.q3 == pytest.approx(3e-3, rel=0.1)
    assert t.iqr == pytest.approx(2e-3, rel=0.15)


def test_warmup_calls_are_not_timed():
    calls = []

    def slow_first_call():
        spin(50e-3 if not calls else 1e-3)
        calls.append(1)

    t = utils.benchmark(slow_first_call, backend="cpu", min_blocks=5)
    assert t.median == pytest.approx(1e-3, rel=0.05)
    assert max(t.times) < 5e-3


def test_timing_keeps_raw_times_and_prints_one_line():
    t = Timing("x", np.array([1e-3, 2e-3, 3e-3]), calls_per_block=4)
    assert (t.median, t.mean) == (2e-3, 2e-3)
    assert str(t) == "x: median 2.00 ms, IQR 1.00 ms (3 blocks x 4 calls, cpu)"
    assert str(Timing("y", np.array([1e-3]))).endswith("(1 blocks x 1 call, cpu)")


def test_not_callable_is_a_clear_type_error():
    with pytest.raises(TypeError, match="lambda"):
        utils.benchmark(torch.ones(3))


def test_failing_function_names_itself_and_the_cause():
    def broken():
        raise ValueError("shapes do not match")

    with pytest.raises(BenchmarkError, match="broken raised ValueError.*shapes do not match"):
        utils.benchmark(broken, backend="cpu")


def test_unknown_backend():
    with pytest.raises(ValueError, match="backend must be"):
        utils.benchmark(spin, 0, backend="tpu")


@cpu_only
@pytest.mark.parametrize("backend, needs", [("cuda", "CUDA GPU"), ("cupy", "CuPy")])
def test_gpu_backend_without_gpu_says_why(backend, needs):
    with pytest.raises(utils.GPUUnavailableError, match=needs) as err:
        utils.benchmark(spin, 0, backend=backend)
    assert "\n" not in str(err.value)


@cpu_only
def test_cuda_tensor_without_gpu_is_a_clear_error():
    # PyTorch's own error here is an AssertionError from deep inside torch.cuda; ours names the call.
    with pytest.raises(BenchmarkError, match="make raised"):
        utils.benchmark(lambda: torch.ones(3, device="cuda"), label="make", backend="cpu")


def test_timer_block(capsys):
    with utils.timer("spin", backend="cpu") as t:
        spin(5e-3)
    assert t.seconds == pytest.approx(5e-3, rel=0.2)
    assert capsys.readouterr().out.startswith("spin: ")


@pytest.mark.parametrize("seconds, text", [
    (812e-9, "812 ns"), (12.34e-6, "12.3 us"), (2e-3, "2.00 ms"), (999.6e-6, "1.00 ms"), (1.0, "1.00 s"),
])
def test_format_time(seconds, text):
    assert format_time(seconds) == text


def test_compare_table():
    a = Timing("fast", np.array([1e-3] * 4))
    b = Timing("slow", np.array([3e-3] * 4))
    rows = utils.compare([a, b]).splitlines()
    assert rows[1].split()[:3] == ["fast", "1.00", "ms"] and rows[2].endswith("3.00x")


def test_printed_timings_are_masked_by_the_nbval_sanitizer():
    text = str(utils.benchmark(spin, 1e-4, backend="cpu")) + "\n" + utils.compare(
        [Timing("a", np.array([1e-6])), Timing("b", np.array([2.5]))])
    cfg = (ROOT / "tests" / "nbval_sanitize.cfg").read_text()
    for regex, repl in re.findall(r"regex: (.+)\nreplace: (.+)", cfg):
        text = re.sub(regex, repl, text)
    assert not re.search(r"\d\s(ns|us|ms|s)\b", text), text


# ---------------------------------------------------------------- on a GPU (nbval's GPU run)
@gpu
def test_gpu_median_matches_one_long_event_measurement():
    """A GPU workload of known duration: the same kernel, timed once over many back-to-back calls."""
    cycles = 200_000  # torch.cuda._sleep spins this many GPU clock cycles: ~0.1 ms
    truth = gpu_time_per_call(lambda: torch.cuda._sleep(cycles), calls=2000)
    t = utils.benchmark(torch.cuda._sleep, cycles)
    assert t.backend == "cuda"
    assert t.median == pytest.approx(truth, rel=0.03)


@gpu
def test_gpu_agrees_with_torch_utils_benchmark():
    from torch.utils.benchmark import Timer

    x = torch.randn(4096, 4096, device="cuda")
    ours = utils.benchmark(torch.mm, x, x)
    theirs = Timer("torch.mm(x, x)", globals={"x": x, "torch": torch}).blocked_autorange(min_run_time=0.5)
    assert ours.median == pytest.approx(theirs.median, rel=0.05)


@gpu
def test_gpu_timer_waits_for_the_kernels():
    cycles = 20_000_000  # ~10 ms of GPU time
    with utils.timer(verbose=False) as synced:
        torch.cuda._sleep(cycles)
    start = time.perf_counter()
    torch.cuda._sleep(cycles)
    launch = time.perf_counter() - start  # the host clock without synchronization: the launch alone
    torch.cuda.synchronize()
    assert synced.seconds > 10 * launch


@pytest.mark.skipif(not utils.has_cupy(), reason=f"needs CuPy on a GPU: {utils.cupy_status().reason}")
def test_cupy_backend_matches_one_long_event_measurement():
    import cupy as cp

    a = cp.random.rand(4096, 4096, dtype=cp.float32)
    ours = utils.benchmark(cp.matmul, a, a, backend="cupy")
    for _ in range(10):
        cp.matmul(a, a)
    begin, end = cp.cuda.Event(), cp.cuda.Event()
    begin.record()
    for _ in range(50):
        cp.matmul(a, a)
    end.record()
    end.synchronize()
    truth = cp.cuda.get_elapsed_time(begin, end) / 1e3 / 50
    assert ours.backend == "cupy"
    assert ours.median == pytest.approx(truth, rel=0.03)


@gpu
def test_gpu_sleep_lasts_what_it_says():
    gpu_cycles_per_second()  # the first gpu_sleep calibrates (~40 ms): keep that out of the timing
    with utils.timer(verbose=False) as t:
        utils.gpu_sleep(20e-3)
    assert t.seconds == pytest.approx(20e-3, rel=0.1)
    side = torch.cuda.Stream()
    with utils.timer(verbose=False) as t:  # on another stream: the current stream does not wait
        utils.gpu_sleep(20e-3, stream=side)
    assert t.seconds < 5e-3
    torch.cuda.synchronize()


@cpu_only
def test_gpu_sleep_without_gpu_says_why():
    with pytest.raises(utils.GPUUnavailableError, match="gpu_sleep"):
        utils.gpu_sleep(1e-3)


@cpu_only
def test_gpu_time_per_call_without_gpu_says_why():
    with pytest.raises(utils.GPUUnavailableError, match="gpu_time_per_call"):
        gpu_time_per_call(lambda: None)


@cpu_only
def test_flush_l2_without_gpu_says_why():
    with pytest.raises(utils.GPUUnavailableError, match="flush_l2"):
        utils.benchmark(spin, 0, flush_l2=True)


def test_out_of_memory_is_not_wrapped():
    def oom():
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(torch.cuda.OutOfMemoryError):
        utils.benchmark(oom, backend="cpu")


def test_compare_rejects_a_zero_baseline():
    with pytest.raises(ValueError, match="baseline"):
        utils.compare([Timing("zero", np.array([0.0]))])
