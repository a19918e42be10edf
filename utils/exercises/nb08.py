"""Checks for the exercises of notebook 08 (profiling): the capstone, a slow training step made fast,
its given code and its checks.

Exercise 1, `fast_loss(model, x, n, y, bf16)` (CPU and GPU): the slow step's arithmetic without its
Python loop over positions, on the padded, static shape.  Exercise 2, `make_fast_step(model, data)`
(GPU) -> `(step, losses)`: `step()` trains one step on the next batch, `losses()` returns every loss so
far as a tensor (read once, at the end).  The check of exercise 2 has three parts:

- correct: the same steps on the same batches from the same weights as the slow step; each loss, and
  the weights' total update, within tolerances derived as in notebook 06 (a multiple of the gap that
  the eager bf16 version of the same arithmetic shows on this device, with a floor);
- fast: the speed-up over the slow step, timed by the check with CUDA events (utils.benchmark);
- clean: no synchronization in three steps (sync debug mode "error"); in a profiled run of five, no
  synchronizing CUDA call inside a step (sync debug mode does not see torch.cuda.synchronize()), fewer
  than LAUNCH_RATIO of the slow step's launches, and some time when a copy from the host ran under a
  kernel.

The constants below were set from runs on an H100 (PyTorch 2.11) and under `tools.smaller_gpu` on it
(30% of the SMs, two host cores): see README's measurements for the numbers and how to repeat them.
"""

from __future__ import annotations

import copy
import itertools
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

from .. import profiling
from ..device import has_cuda
from ..timing import benchmark, format_time
from . import Checker, Exercise, Findings, LeftForGPU, exercise, register

NOTEBOOK = "08_profiling"

# Sizes: 8 MiB of tokens a batch on a GPU, small ones on a CPU.
GPU_SIZES = {"batch": 512, "length": 64, "features": 64, "width": 1024, "classes": 10, "batches": 8}
CPU_SIZES = {"batch": 64, "length": 32, "features": 16, "width": 128, "classes": 10, "batches": 4}
LR = 0.01
STEPS = 16  # two passes over the 8 batches: a step that reuses one batch shows in the second pass

LOSS_GAP_FACTOR = 8  # the fast step's losses may lie this many times further from the slow step's than eager bf16
UPDATE_GAP_FACTOR = 4  # the same for the weights' total update
FLOAT32_FLOOR = 64 * torch.finfo(torch.float32).eps  # where eager bf16 happens to agree (nearly) exactly
UPDATE_FLOOR = 0.05  # H100: eager bf16 against the slow step 0.023; the wrong answers 0.77 (every other batch) and more
SPEEDUP = 3.0  # the solution: 19-24x on the H100, 20-21x under tools.smaller_gpu; a T4's PCIe 3 link costs more
LAUNCH_RATIO = 0.25  # the solution: 1 launch a step (one cudaGraphLaunch) against the slow step's 105


def sizes(device: str) -> dict[str, int]:
    return GPU_SIZES if device == "cuda" else CPU_SIZES


# ------------------------------------------------------------------------------------------------
# The given code: data, model, the slow step
# ------------------------------------------------------------------------------------------------
def make_data(device: str = "cuda", seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Variable-length sequences zero-padded to `length`, their lengths, their labels: on the host."""
    s = sizes(device)
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randn(s["batches"], s["batch"], s["length"], s["features"], generator=g)
    lengths = torch.randint(s["length"] // 8, s["length"] + 1, (s["batches"], s["batch"]), generator=g)
    labels = torch.randint(0, s["classes"], (s["batches"], s["batch"]), generator=g)
    tokens *= (torch.arange(s["length"]) < lengths[..., None])[..., None]  # zero padding: sums ignore it
    return tokens, lengths, labels


def make_model(device: str = "cuda", seed: int = 0) -> torch.nn.Module:
    s = sizes(device)
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(s["features"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU(),
        torch.nn.Linear(s["width"], s["classes"])).to(device)


def slow_step(model, opt, data, i: int, device: str) -> float:
    """Every mistake at once: a new shape each step, pageable copies, a Python loop of tiny kernels, .item()."""
    tokens, lengths, labels = data
    longest = int(lengths[i].max())  # shapes follow the data: a new size every step
    x = tokens[i, :, :longest].contiguous().to(device)  # pageable: the host waits for the copy
    n = lengths[i].to(device, torch.float32)
    y = labels[i].to(device)
    pooled = torch.zeros(x.shape[0], x.shape[2], device=device)
    for t in range(longest):  # one tiny kernel per position
        pooled = pooled + x[:, t]
    loss = F.cross_entropy(model(pooled / n[:, None]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()  # the host waits for the GPU, every step


class SlowStep:
    """The slow step as a callable: each call trains on the next batch and returns its loss (a float)."""

    def __init__(self, model: torch.nn.Module, data, device: str) -> None:
        self.model, self.data, self.device = model, data, device
        self.opt = torch.optim.SGD(model.parameters(), lr=LR, foreach=False)  # one small kernel per parameter
        self.batches = itertools.cycle(range(len(data[0])))

    def __call__(self) -> float:
        return slow_step(self.model, self.opt, self.data, next(self.batches), self.device)


def slow_losses(device: str, steps: int, data=None, model=None) -> tuple[list[float], torch.nn.Module]:
    """The slow step's losses over `steps` steps in float32 without TF32 (the reference), and its model."""
    data = data if data is not None else make_data(device)
    model = model if model is not None else make_model(device)
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 as written: no TF32 in the reference
    try:
        slow = SlowStep(model, data, device)
        return [slow() for _ in range(steps)], model
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def eager_bf16_losses(fast_loss: Callable, device: str, steps: int, data) -> tuple[list[float], torch.nn.Module]:
    """The same steps with `fast_loss` in bf16, eagerly: the gap a correct bf16 answer may show on this device."""
    model = make_model(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    tokens, lengths, labels = data
    found = []
    for i in range(steps):
        k = i % len(tokens)
        loss = fast_loss(model, tokens[k].to(device), lengths[k].float().to(device), labels[k].to(device), True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        found.append(loss.item())
    return found, model


def reference_fast_loss(model, x, n, y, bf16: bool):
    """The solution of exercise 1, for the check's own measurement of bf16's gap (not shown to students)."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def relative_gap(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b, strict=True))


def update_gap(start: torch.nn.Module, reference: torch.nn.Module, other: torch.nn.Module) -> float:
    """How far `other`'s total update of the weights lies from `reference`'s, relative to the latter's size."""
    diff = torch.stack([((o.detach().float() - r.detach().float()) ** 2).sum()
                        for o, r in zip(other.parameters(), reference.parameters(), strict=True)]).sum()
    size = torch.stack([((r.detach().float() - s.detach().float()) ** 2).sum()
                        for r, s in zip(reference.parameters(), start.parameters(), strict=True)]).sum()
    return float((diff / size).sqrt())


# ------------------------------------------------------------------------------------------------
# Exercise 1: the slow step's arithmetic on a static shape (CPU and GPU)
# ------------------------------------------------------------------------------------------------
def _ops_in(fn: Callable[[], object]) -> dict[str, int]:
    """How many times each operator ran in fn(), by the CPU profiler (the notebook's section 1)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
    return {e.key: e.count for e in prof.key_averages()}


def _compare_losses(ex: Checker, found: Findings, fast_loss: Callable[..., torch.Tensor], model: torch.nn.Module,
                    exact_model: torch.nn.Module, data: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                    device: str) -> None:
    """Each batch's loss, in float32 and in bf16, against the exact (float64) loss."""
    tokens, lengths, labels = data
    for k in range(len(tokens)):
        x, n, y = tokens[k].to(device), lengths[k].float().to(device), labels[k].to(device)
        longest = int(lengths[k].max())
        pooled = x[:, :longest].double().sum(1) / n.double()[:, None]  # float64: the exact value (notebook 06)
        with torch.no_grad():
            exact = F.cross_entropy(exact_model(pooled), y).item()
        got = {bf16: fast_loss(model, x, n, y, bf16) for bf16 in (False, True)}
        ex.expect(all(isinstance(v, torch.Tensor) and v.numel() == 1 and v.dtype == torch.float32
                      for v in got.values()),
                  f"fast_loss returned {[type(v).__name__ for v in got.values()]}",
                  "return the loss as a float32 tensor of one element, as F.cross_entropy does")
        f32_tol = 64 * torch.finfo(torch.float32).eps  # a few thousand additions' rounding, with room
        # Loose: the loss barely depends on the pooled features.  On the H100 the solution's bf16 gap was
        # 3.7e-6, and a sum rounded in bf16 too gave 6.1e-6 (2026-11-27): no tolerance tells those apart.
        bf16_tol = 4 * torch.finfo(torch.bfloat16).eps
        found.expect(abs(got[False].item() - exact) <= f32_tol * abs(exact),
                     f"batch {k}, float32: loss {got[False].item():.6f}, exact {exact:.6f}",
                     "what does the slow step divide each sequence's sum by?")
        found.expect(abs(got[True].item() - exact) <= bf16_tol * abs(exact),
                     f"batch {k}, bf16: loss {got[True].item():.6f}, exact {exact:.6f}",
                     "where does rounding accumulate? keep the reduction and the loss in float32 (notebook 06)")


def check_fast_loss(fast_loss: Callable[..., torch.Tensor]) -> None:
    """fast_loss(model, x, n, y, bf16) on the padded batch: the slow step's loss, without its loop."""
    with exercise("fast_loss") as ex:
        device = "cuda" if has_cuda() else "cpu"
        tokens, lengths, labels = make_data(device, seed=5)
        model = make_model(device)
        exact_model = copy.deepcopy(model).double()
        found = Findings()
        saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 as written: TF32 would round the products
        try:
            _compare_losses(ex, found, fast_loss, model, exact_model, (tokens, lengths, labels), device)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        x, n, y = tokens[0].to(device), lengths[0].float().to(device), labels[0].to(device)
        ops = _ops_in(lambda: fast_loss(model, x, n, y, False))
        adds = ops.get("aten::add", 0) + ops.get("aten::add_", 0)
        found.expect(adds <= 2, f"the profiler counted {adds} additions in one call",
                     "one reduction over the padded positions: no Python loop of tiny kernels")
        found.report(ex)


# ------------------------------------------------------------------------------------------------
# Exercise 2: the fast step (GPU)
# ------------------------------------------------------------------------------------------------
SYNC_CALLS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize")


@dataclass(frozen=True)
class Profiled:
    """What five profiled calls of a step showed: launches per call, the host's waits for the GPU inside
    the calls, copies from the host against kernels, and whether those copies ran on streams of their own."""

    launches: int
    waits: int
    overlap: profiling.CopyOverlap
    copies_apart: bool


def _profiled(fn: Callable[[], object], calls: int = 5) -> Profiled:
    """Read from a torch.profiler trace of `calls` calls of fn.  The waits are read from the trace because
    sync debug mode does not see them all: torch.cuda.synchronize() never reports to it."""
    torch.cuda.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], acc_events=True) as prof:
            for _ in range(calls):
                with record_function("step"):
                    fn()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        prof.export_chrome_trace(str(Path(tmp) / "trace.json"))
        trace = profiling.load_trace(Path(tmp) / "trace.json")
    steps = profiling.ranges(trace, "step")
    waits = [w for w in profiling.host_waits(trace) if w.call in SYNC_CALLS and any(a <= w.start < b for a, b in steps)]
    kernel_streams = {profiling.stream_of(e) for e in profiling.events(trace, "kernel")}
    copy_streams = {profiling.stream_of(e) for e in profiling.events(trace, "gpu_memcpy")
                    if "HtoD" in str(e.get("name"))}
    return Profiled(launches=sum(profiling.launches_per_range(trace, "step")) // calls, waits=len(waits),
                    overlap=profiling.copy_compute_overlap(trace, kind="HtoD"),
                    copies_apart=bool(copy_streams) and not copy_streams & kernel_streams)


def _correct(ex: Checker, found: Findings, make_fast_step: Callable, device: str = "cuda") -> tuple[Callable, Callable]:
    """Part 1: the same losses and the same update as the slow step. Returns the student's step and a slow one."""
    data = make_data(device)
    reference, slow_model = slow_losses(device, STEPS, data)
    bf16, bf16_model = eager_bf16_losses(reference_fast_loss, device, STEPS, data)
    start = make_model(device)
    loss_tol = max(LOSS_GAP_FACTOR * relative_gap(reference, bf16), FLOAT32_FLOOR)
    update_tol = max(UPDATE_GAP_FACTOR * update_gap(start, slow_model, bf16_model), UPDATE_FLOOR)
    model = make_model(device)
    made = make_fast_step(model, data)
    ex.expect(isinstance(made, tuple) and len(made) == 2 and all(callable(f) for f in made),
              f"make_fast_step returned {type(made).__name__}, not two functions",
              "return (step, losses): step() trains one step, losses() gives every loss so far")
    step, losses = made
    for _ in range(STEPS):
        step()
    returned = losses()
    try:
        got = [float(v) for v in (returned.flatten().tolist() if isinstance(returned, torch.Tensor) else returned)]
    except (TypeError, ValueError, RuntimeError):
        got = None
    ex.expect(got is not None, f"losses() returned {type(returned).__name__}, not the losses",
              "return every step's loss, as a tensor read once at the end")
    assert got is not None
    if found.expect(len(got) == STEPS, f"losses() gave {len(got)} losses for {STEPS} steps",
                    "one step trains on one batch, and losses() returns every step's loss"):
        gap = relative_gap(reference, got)
        worst = max(range(STEPS), key=lambda i: abs(got[i] - reference[i]) / abs(reference[i]))
        found.expect(gap <= loss_tol, f"step {worst}'s loss {got[worst]:.6f} against the slow step's "
                     f"{reference[worst]:.6f} ({gap:.1e} relative; tolerance {loss_tol:.1e})",
                     "each step must read the batch it is given: a graph reads the memory it captured")
    moved = update_gap(start, slow_model, model)
    found.expect(moved <= update_tol, f"the weights moved {moved:.1%} away from the slow step's update "
                 f"(tolerance {update_tol:.1%})",
                 "same steps, same data, same updates: is every batch trained on, and does the update "
                 "keep its small increments (notebook 06)?")
    return step, SlowStep(make_model(device), data, device)


def check_fast_step(make_fast_step: Callable[..., tuple[Callable[[], object], Callable[[], object]]]) -> None:
    """make_fast_step(model, data) -> (step, losses): correct, fast and clean against the slow step."""
    if not has_cuda():
        with exercise("make_fast_step"):
            raise LeftForGPU("", "the fast step against the slow one: the same losses and update, a speed-up "
                                 f"of {SPEEDUP:.0f}x or more, no synchronization, copies under kernels")
        return
    with exercise("make_fast_step") as ex:
        found = Findings()
        step, slow = _correct(ex, found, make_fast_step)
        found.report(ex)  # a wrong answer's speed means nothing: stop here
        found = Findings()

        ratio = benchmark(slow, label="slow").median / benchmark(step, label="yours").median
        print(f"     your step is {ratio:.1f}x faster than the slow step on this GPU")
        found.expect(ratio >= SPEEDUP, f"{ratio:.1f}x faster than the slow step; the target is {SPEEDUP:.0f}x",
                     "profile your step: what does the GPU wait for, the host or the copies?")

        torch.cuda.synchronize()
        waited = ""
        with warnings.catch_warnings():  # the mode's own "prototype" warning: notebook 05 said so already
            warnings.filterwarnings("ignore", message="Synchronization debug mode is a prototype")
            torch.cuda.set_sync_debug_mode("error")
            try:
                for _ in range(3):
                    step()
            except RuntimeError as err:
                waited = str(err).splitlines()[0]
            finally:
                torch.cuda.set_sync_debug_mode("default")
        found.expect(not waited, f"a step waits for the GPU: {waited}", "any wait for the GPU inside the step")
        slow_launches = _profiled(slow).launches
        seen = _profiled(step)
        found.expect(seen.waits == 0,
                     f"in the profiler's trace the host waited for the GPU {seen.waits} times in 5 steps",
                     "sync debug mode does not report every wait: read your step's trace (section 4 of the lecture)")
        found.expect(seen.launches <= LAUNCH_RATIO * slow_launches,
                     f"{seen.launches} launches a step against the slow step's {slow_launches}",
                     "how many times does the host launch work in one step?")
        # A right answer's copies do not run under a kernel in every profiled run: under tools.smaller_gpu
        # (an H100, 2026-11-27) the solution's did in one run and at no moment of another.  Copies on a
        # stream that ran no kernels, with no wait for them (checked above), pass too.
        found.expect(seen.overlap.both > 0 or seen.copies_apart,
                     f"no copy from the host ran while a kernel ran (copies {format_time(seen.overlap.copies)}), "
                     "and they ran on a stream that ran kernels too",
                     "which stream copies the next batch, and does the host wait for it?")
        found.report(ex)


register(Exercise(NOTEBOOK, "fast_loss", check_fast_loss),
         Exercise(NOTEBOOK, "make_fast_step", check_fast_step, gpu=True, cpu_checks=0))
