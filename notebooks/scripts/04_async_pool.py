"""Notebook 04, section 7: CuPy's stream-ordered pool (cudaMallocAsync), chosen before any allocation,
so in a fresh process: a free queued on a stream, and the next allocation on it."""

import cupy as cp

pool = cp.cuda.MemoryAsyncPool()
cp.cuda.set_allocator(pool.malloc)
s = cp.cuda.Stream(non_blocking=True)
with s:
    x = cp.ones(2**20, dtype=cp.float32)
    print("memory of type", type(x.data.mem).__name__, "| used bytes:", pool.used_bytes())
    address = x.data.ptr
    del x  # cudaFreeAsync, queued on s
    y = cp.ones(2**20, dtype=cp.float32)  # cudaMallocAsync on s: may take the same memory at once
    print("same stream, same size, same address:", y.data.ptr == address, "| sum:", float(y.sum()))
