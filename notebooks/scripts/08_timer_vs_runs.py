"""Notebook 08, appendix A6: section 4's timer against section 5's plain runs, in a process that starts clean.

    python 08_timer_vs_runs.py COURSE_ROOT SCRATCH profiles|none

Times section 4's `tiny_chain` both ways, taking turns, five rounds: `utils.benchmark` (CUDA events around blocks of
calls, each block after an untimed call) and ten calls on the host's clock from an idle GPU to an idle GPU (section 5's
`steps_time`). Then, with "profiles", five profiles of ten calls each (CPU and CUDA activities), each exported to a
trace in SCRATCH, as section 5's `overhead` does; with "none", the same fifty calls without a profile; then five
rounds again. Prints, as JSON, seconds a call: {"before": {"timer": [...], "runs": [...]}, "after": {...}}. A fresh
process, so that no earlier profile of the notebook's own process (which may leave CUPTI attached: the environment
variable TEARDOWN_CUPTI, pytorch#144455) and no earlier work sits under the first rounds.
"""

import json
import sys
import time

sys.path.insert(0, sys.argv[1])
import torch
from torch.profiler import ProfilerActivity, profile

import utils


def tiny_chain(v):
    for _ in range(200):
        v = torch.relu(torch.sigmoid(v * 2) + 5.0)  # as section 4's
    return v


def runs(calls: int = 10) -> float:
    """Seconds a call, for `calls` calls from an idle GPU to an idle GPU, on the host's clock (section 5's way)."""
    start = time.perf_counter()
    torch.cuda.synchronize()
    for _ in range(calls):
        tiny_chain(v)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls


def rounds(count: int = 5) -> dict:
    timer, plain = [], []
    for round_ in range(count):  # the two ways take turns to go first
        for way in (("timer", "runs") if round_ % 2 == 0 else ("runs", "timer")):
            if way == "timer":
                timer.append(utils.benchmark(tiny_chain, v, label="eager").median)
            else:
                runs(1)  # one untimed call first, as section 5's runs
                plain.append(runs())
    return {"timer": timer, "runs": plain}


v = torch.ones(5, device="cuda")
tiny_chain(v)
torch.cuda.synchronize()
before = rounds()
for i in range(5):
    if sys.argv[3] == "profiles":
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            runs()
        p.export_chrome_trace(f"{sys.argv[2]}/08_fresh_{i}.json.gz")
    else:
        runs()
after = rounds()
print(json.dumps({"before": before, "after": after}))
