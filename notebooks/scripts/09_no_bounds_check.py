"""Notebook 09, section 5: a CuPy kernel without its bounds check, for compute-sanitizer's memcheck.

    python 09_no_bounds_check.py pool|"no pool"
4 blocks of 256 threads write 1024 floats into an array of 1000. "no pool": every array is a cudaMalloc of
its own, exact size (cupy.cuda.set_allocator(None), first thing, before any array exists).
"""
import sys

import cupy as cp

if sys.argv[1] == "no pool":
    cp.cuda.set_allocator(None)
fill = cp.RawKernel(r"""
extern "C" __global__ void fill(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = 1.0f;  // no bounds check: i reaches 1023
}""", "fill")
n = 1000
y = cp.zeros(n, dtype=cp.float32)
fill(((n + 255) // 256,), (256,), (y, cp.int32(n)))
cp.cuda.Device().synchronize()
print("program finished", float(y.sum()))
