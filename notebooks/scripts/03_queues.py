"""Notebook 03, section 9.6 (optional): 16 streams of short sleeps queued depth-first, then breadth-first;
prints each order's GPU time as JSON.  Run with CUDA_DEVICE_MAX_CONNECTIONS set, or not.
"""
import json
import sys

import torch

cycles, n_streams, per_stream = (int(arg) for arg in sys.argv[1:4])
streams = [torch.cuda.Stream() for _ in range(n_streams)]
main = torch.cuda.current_stream()
begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda._sleep(cycles)  # load the kernel's code
times = {}
for order in ("depth-first", "breadth-first"):
    torch.cuda.synchronize()
    torch.cuda._sleep(cycles)  # the GPU waits while the host queues everything below
    begin.record()
    for st in streams:
        st.wait_stream(main)  # fork
    if order == "depth-first":  # stream by stream
        for st in streams:
            with torch.cuda.stream(st):
                for _ in range(per_stream):
                    torch.cuda._sleep(cycles)
    else:  # kernel by kernel
        for _ in range(per_stream):
            for st in streams:
                with torch.cuda.stream(st):
                    torch.cuda._sleep(cycles)
    for st in streams:
        main.wait_stream(st)  # join
    end.record()
    end.synchronize()
    times[order] = begin.elapsed_time(end) / 1e3
print(json.dumps(times))
