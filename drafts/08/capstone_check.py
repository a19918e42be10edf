"""DRAFT (not run by any test): the capstone's check, for utils/exercises/nb08.py once notebook 08 exists.

The student's answer: `make_fast_step(model, data) -> (step, losses)`, where `step()` trains one step on
the next batch and `losses()` returns the losses so far as a tensor (read once, at the end).  The slow
step and the data are `slow_step`, `make_data`, `make_model` of notebooks/scripts/08_probe.py.  The
numbers marked PROBE come from the lead's run of that script; none of them is settled yet.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

import utils
from utils import profiling

RTOL_FLOOR = 8 * torch.finfo(torch.bfloat16).eps  # PROBE: graphed_vs_slow_max_relative_gap["bf16"]
SPEEDUP = 2.0  # PROBE: training.speedup on the H100, and the same under tools.smaller_gpu
LAUNCH_RATIO = 0.25  # PROBE: profile.fast.launches_per_step against profile.slow.launches_per_step


def correct(slow_losses: list[float], fast_losses: list[float], rtol: float) -> str | None:
    """A hint, or None: every step's loss within rtol of the slow step's (same weights, same batches)."""
    if len(fast_losses) != len(slow_losses):
        return f"{len(fast_losses)} losses for {len(slow_losses)} steps: does every call train one step?"
    worst = max(abs(f - s) / abs(s) for f, s in zip(fast_losses, slow_losses))
    if worst > rtol:
        return (f"a loss differs by {worst:.1%} from the slow step's (tolerance {rtol:.1%}): does each step "
                "read the batch it was given, and does rounding accumulate somewhere it should not?")
    return None


def fast(slow: Callable[[], object], step: Callable[[], object]) -> tuple[float, str | None]:
    """The speed-up, timed by the check with CUDA events (never by the student's own timer)."""
    ratio = utils.benchmark(slow, label="slow").median / utils.benchmark(step, label="yours").median
    hint = None if ratio >= SPEEDUP else f"{ratio:.1f}x faster than the slow step; the target is {SPEEDUP:.0f}x"
    return ratio, hint


def clean(slow: Callable[[], object], step: Callable[[], object]) -> str | None:
    """No synchronization in a step; copies under compute in its trace; far fewer launches than the slow step."""
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            step()
    except RuntimeError as err:
        return f"a step waits for the GPU: {str(err).splitlines()[0]}"
    finally:
        torch.cuda.set_sync_debug_mode("default")
    launches, overlap = {}, None
    for name, fn in (("slow", slow), ("yours", step)):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                with record_function("step"):
                    fn()
            torch.cuda.synchronize()
        with tempfile.TemporaryDirectory() as tmp:
            prof.export_chrome_trace(str(Path(tmp) / "trace.json"))
            trace = profiling.load_trace(Path(tmp) / "trace.json")
        launches[name] = sum(profiling.launches_per_range(trace, "step"))
        overlap = profiling.copy_compute_overlap(trace)
    if launches["yours"] > LAUNCH_RATIO * launches["slow"]:
        return f"{launches['yours'] / 5:.0f} launches a step against the slow step's {launches['slow'] / 5:.0f}"
    if overlap is None or overlap.both <= 0:
        return "no copy ran while a kernel ran: which stream copies the next batch, and does the host wait?"
    return None
