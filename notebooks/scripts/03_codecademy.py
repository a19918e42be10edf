"""Codecademy's example of `torch.cuda.Stream()`, as its page runs it (notebook 03, section 9.1): two attempts, each
timing the call with streams and then the one without; prints the times and the allocator's peak as JSON.
"""
import json
import sys
import time

import torch

device = torch.device("cuda")


def heavy_computation(tensor):
    return tensor ** 2 + tensor ** 3 ** tensor.sin() ** tensor.cos() + tensor.tan()


size = int(sys.argv[1])
data = torch.randn(size, device=device)
stream1 = torch.cuda.Stream()
stream2 = torch.cuda.Stream()
times = []
for attempt in range(2):
    torch.cuda.synchronize()
    start_time = time.time()
    with torch.cuda.stream(stream1):
        result1 = heavy_computation(data[:size // 2])
    with torch.cuda.stream(stream2):
        result2 = heavy_computation(data[size // 2:])
    torch.cuda.synchronize()
    times.append(time.time() - start_time)
    torch.cuda.synchronize()
    start_time = time.time()
    result1_seq = heavy_computation(data[:size // 2])
    result2_seq = heavy_computation(data[size // 2:])
    torch.cuda.synchronize()
    times.append(time.time() - start_time)
    if attempt == 0:
        peak = torch.cuda.max_memory_allocated()  # the most the script held at once, so far
print(json.dumps({"times": times, "peak": peak}))
