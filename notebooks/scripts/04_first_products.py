"""Notebook 04, section 5: the first five 4096 x 4096 matrix products of a fresh process, each timed
with two CuPy events; prints their milliseconds as JSON."""

import json

import cupy as cp

a = cp.random.rand(4096, 4096, dtype=cp.float32)
cp.cuda.Device().synchronize()
begin, end = cp.cuda.Event(), cp.cuda.Event()
times = []
for _ in range(5):
    begin.record()
    a @ a
    end.record()
    end.synchronize()
    times.append(cp.cuda.get_elapsed_time(begin, end))
print(json.dumps(times))
