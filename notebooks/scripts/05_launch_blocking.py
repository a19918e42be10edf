"""Notebook 05, section 2: when does CUDA_LAUNCH_BLOCKING take effect?

The host's time to queue one long sleeping kernel tells: microseconds when launches are
asynchronous, the kernel's whole duration when each launch waits for its kernel.
    python 05_launch_blocking.py COURSE_ROOT SECONDS [set before CUDA]
Run it with CUDA_LAUNCH_BLOCKING=1 in its environment from the start, and without it: then, once
CUDA has started, it sets os.environ["CUDA_LAUNCH_BLOCKING"] = "1" itself and queues the kernel
again.  With the third argument "set before CUDA" (and the variable not in its environment), it
sets os.environ["CUDA_LAUNCH_BLOCKING"] = "1" after `import torch`, before its first CUDA call.
Prints, as JSON, for each phase: the variable's value then, and the seconds the host took.
"""

import json
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
import torch

import utils

seconds = float(sys.argv[2])


def seconds_to_queue() -> float:
    """The host's time to queue one kernel of about `seconds` on an idle GPU."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    utils.gpu_sleep(seconds)
    queued = time.perf_counter() - t0
    torch.cuda.synchronize()
    return queued


set_before_cuda = sys.argv[3:] == ["set before CUDA"]
if set_before_cuda:  # torch is imported; no CUDA call yet (PyTorch starts CUDA at the first call that needs it)
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
torch.cuda.init()
torch.zeros(1, device="cuda")  # a first tensor: CUDA has started in this process
utils.timing.gpu_cycles_per_second()  # calibrate gpu_sleep (it waits for the GPU), which loads its kernel
first = "set after import torch, before CUDA started" if set_before_cuda else "from the start"
phases = {first: [os.environ.get("CUDA_LAUNCH_BLOCKING"), seconds_to_queue()]}
if "CUDA_LAUNCH_BLOCKING" not in os.environ:
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # too late?
    phases["set after CUDA started"] = [os.environ.get("CUDA_LAUNCH_BLOCKING"), seconds_to_queue()]
print(json.dumps(phases))
