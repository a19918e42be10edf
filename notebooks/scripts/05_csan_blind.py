"""Notebook 05: two stream bugs that PyTorch's CUDA Stream Sanitizer does not see (run it with
TORCH_CUDA_SANITIZER=1).  argv[1]: the cycles a sleeping kernel spins, about a second.

1. A tensor read on a side stream, freed without record_stream: the allocator hands its memory to
   the next tensor at once, which the default stream fills while the side stream's read is queued.
   Done twice: first with the sum's kernel never used before in this process, then again once it
   has been.  CUDA loads a kernel's code when it is first launched (lazy loading, PyTorch's
   default), and a load may wait for the kernels already running: the host's time to queue the
   side stream's work shows whether it waited for the sleep.
2. The host reads a non_blocking copy into pinned memory before the copy has run.
"""
import json
import os
import sys
import time

import torch

cycles = int(sys.argv[1])
side = torch.cuda.Stream()


def freed_while_read() -> dict:
    a = torch.ones(1 << 20, device="cuda")
    a_pointer = a.data_ptr()
    side.wait_stream(torch.cuda.current_stream())  # fork: the side stream waits for a's fill
    t0 = time.perf_counter()
    with torch.cuda.stream(side):
        torch.cuda._sleep(cycles)  # the side stream is busy: the sum below runs later
        total = a.sum()
    queued = time.perf_counter() - t0
    del a  # no a.record_stream(side): the block is free for the next tensor at once
    b = torch.zeros(1 << 20, device="cuda")  # filled on the default stream
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return {"b got a's memory": b.data_ptr() == a_pointer, "the side stream's sum": total.item(),
            "seconds to queue the sleep and the sum": round(queued, 3)}


first = freed_while_read()  # the sum's kernel is loaded at its first launch, here
again = freed_while_read()  # loaded already

pinned = torch.zeros(4, pin_memory=True)
torch.cuda._sleep(cycles)  # the default stream is busy
pinned.copy_(torch.ones(4, device="cuda"), non_blocking=True)  # queued behind the sleep
read_early = pinned.tolist()  # the host does not wait
torch.cuda.synchronize()
print(json.dumps({"CUDA_MODULE_LOADING": os.environ.get("CUDA_MODULE_LOADING"),
                  "first launch of the sum": first, "sum already loaded": again,
                  "the host read": read_early, "after a synchronize": pinned.tolist()}))
