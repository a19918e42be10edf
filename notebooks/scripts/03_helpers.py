"""Notebook 03, section 9: helpers that read what one call ran on the GPU, and time the host alone.

Unlike the other scripts here, this one runs in the notebook's own process (the functions profile and
time the notebook's own work), into a dict of its own, from which the notebook keeps the functions:
    helpers = {}
    exec(utils.script("03_helpers.py"), helpers)
"""

import json
import math
import os
import tempfile
import time

import torch

import utils
from utils import Interval


def profile_of(fn) -> list[Interval]:
    """The kernels and copies of one call of fn, as the GPU ran them, one lane per stream."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as prof:
        fn()
        torch.cuda.synchronize()
    return utils.intervals_from_profiler(prof)


def kernels_of(fn) -> list[dict]:
    """Each kernel of one call of fn: name, blocks, threads (per block), registers (per thread),
    shared (bytes of shared memory per block) and us (duration), from a torch.profiler trace."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    return [{"name": e["name"], "blocks": math.prod(e["args"]["grid"]), "threads": math.prod(e["args"]["block"]),
             "registers": e["args"].get("registers per thread", 0), "shared": e["args"].get("shared memory", 0),
             "us": e["dur"]} for e in events]


def short_name(name: str, width: int = 36) -> str:
    """'void at::native::vectorized_elementwise_kernel<4, ...>(...)' -> 'vectorized_elementwise_kernel'."""
    head = name.replace("void ", "").split("(")[0].split("<")[0].split("::")[-1]
    return head if len(head) <= width else head[: width - 3] + "..."


def plural(count: int, word: str) -> str:
    """'1 thread block', '2 thread blocks'."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def host_time_per_call(fn, calls: int = 100, rounds: int = 5) -> float:
    """Seconds the host spends queuing one call of fn, without waiting for the GPU: the median of
    `rounds` rounds of `calls` calls (a hiccup of the host spoils one round, not the answer)."""
    fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - t0) / calls)
        torch.cuda.synchronize()
    return sorted(per_call)[rounds // 2]
