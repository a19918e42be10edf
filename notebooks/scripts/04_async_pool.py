"""Notebook 04, section 7: CuPy's default pool beside its stream-ordered pool (cudaMallocAsync).

The allocator is chosen before any allocation, so each pool gets a fresh process:
    python 04_async_pool.py COURSE_ROOT default|async
prints, as JSON, what each experiment found.
"""

import json
import sys

sys.path.insert(0, sys.argv[1])
import cupy as cp

import utils

if sys.argv[2] == "async":
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
a, b = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
N = 2**22  # 16 MiB of float32
utils.timing.cupy_cycles_per_second()  # calibrate cupy_sleep now: it waits for the GPU
cp.ones(N, dtype=cp.float32).sum()  # compile the kernels used below, at their size (a sum's block size depends on it)


def reused_on(where: str) -> bool:
    """Free an array made on a; is the next allocation of that size, on `where`, the same memory?

    Stream a sleeps 50 ms before the free, so that the free is still queued when `where` asks,
    except in "b, no wait, after the free ran", where the host first waits for a."""
    with a:
        x = cp.ones(N, dtype=cp.float32)
        address = x.data.ptr
        utils.cupy_sleep(0.05)  # a is busy: the free below waits in its queue
        del x  # the default pool: back to a's free list; the async pool: cudaFreeAsync, queued on a
        freed = a.record()
    if where == "b, no wait, after the free ran":
        a.synchronize()
    stream = a if where == "a" else b
    with stream:
        if where == "b after an event":
            b.wait_event(freed)  # b's later work runs after the free
        y = cp.empty(N, dtype=cp.float32)
    same = y.data.ptr == address
    del y
    cp.cuda.Device().synchronize()
    return same


def unfenced_reader() -> float:
    """Section 7's race: b still reads x (after 50 ms) when Python frees it and a reuses it."""
    cp.cuda.Device().synchronize()
    with a:
        x = cp.ones(N, dtype=cp.float32)
    with b:
        b.wait_event(a.record())
        utils.cupy_sleep(0.05)
        total = x.sum()
    del x
    with a:
        sevens = cp.full(N, 7.0, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    del sevens
    return float(total) / N


with a:
    kind = type(cp.empty(1, dtype=cp.float32).data.mem).__name__
unfenced_reader()  # warm-up: the first call compiles the kernels, which would hold the host past the 50 ms
print(json.dumps({"memory": kind,
                  "reused on a": reused_on("a"),
                  "reused on b, after an event recorded on a after the free": reused_on("b after an event"),
                  "reused on b, no wait, the free still queued": reused_on("b, no wait"),
                  "reused on b, no wait, after the free ran": reused_on("b, no wait, after the free ran"),
                  "an unfenced reader on b saw (x held ones)": unfenced_reader()}))
