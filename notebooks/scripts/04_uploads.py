"""Notebook 04, section 6.2: how long `asarray` and `set` keep the host, and when their copies are done.

Like scripts/03_helpers.py, this one runs in the notebook's own process (it times the notebook's own
uploads), into a dict of its own, from which the notebook takes the function:
    helpers = {}
    exec(utils.script("04_uploads.py"), helpers)
"""

import statistics
import time

import cupy as cp
import numpy as np

from utils import cupy_sleep, format_time


def upload_times(call: str, source: np.ndarray, gpu: cp.ndarray, queued: float) -> tuple[float, float]:
    """(how long the call kept the host, how long until its copy was done), both from the call."""
    cp.cuda.Device().synchronize()
    if queued:
        cupy_sleep(queued)  # earlier work on the stream: the copy waits behind it
    t0 = time.perf_counter()
    if call == "asarray":
        cp.asarray(source)
    else:
        gpu.set(source)
    returned = time.perf_counter() - t0
    cp.cuda.get_current_stream().synchronize()  # so the host's clock also sees when the copy was done
    return returned, time.perf_counter() - t0


def time_uploads(uploads: dict, gpu: cp.ndarray, queued: float) -> tuple[dict, dict]:
    """Each upload (label: (call, source); `set` copies into `gpu`) three times on an idle stream, then
    three times behind `queued` seconds of work; prints and returns the medians, keyed (label, seconds queued)."""
    held, done = {}, {}
    for wait in (0.0, queued):
        for label, (call, source) in uploads.items():
            runs = [upload_times(call, source, gpu, wait) for _ in range(3)]
            held[label, wait] = statistics.median(r[0] for r in runs)
            done[label, wait] = statistics.median(r[1] for r in runs)
            where = f"behind {format_time(wait)}" if wait else "idle stream"
            print(f"{label:<18} {where:<15} returned after {format_time(held[label, wait]):>8}, "
                  f"copy done after {format_time(done[label, wait]):>8}")
    return held, done
