"""Notebook 04, section 4: four host threads, each sleeping 20 ms on its default stream.

Run in a fresh process, because CUPY_CUDA_PER_THREAD_DEFAULT_STREAM is read when CuPy starts:
    python 04_threads.py COURSE_ROOT
prints, as JSON, the default stream's handle and the GPU milliseconds from the first sleep's start
to the last one's end (the median of three rounds).
"""

import json
import statistics
import sys
import threading

sys.path.insert(0, sys.argv[1])
import cupy as cp

import utils


def one_round(threads=4, seconds=0.02):
    """Each thread sleeps on its current (default) stream; GPU ms from the first start to the last end."""
    origin = cp.cuda.Event()
    origin.record()
    spans = []

    def work():
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record()  # on this thread's current stream
        utils.cupy_sleep(seconds)
        end.record()
        spans.append((begin, end))

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    cp.cuda.Device().synchronize()
    start = min(cp.cuda.get_elapsed_time(origin, b) for b, _ in spans)
    return max(cp.cuda.get_elapsed_time(origin, e) for _, e in spans) - start


utils.timing.cupy_cycles_per_second()
one_round()  # warm-up
print(json.dumps({"default stream": cp.cuda.get_current_stream().ptr,
                  "ms": statistics.median(one_round() for _ in range(3))}))
