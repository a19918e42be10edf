"""Notebook 05, section 5: a block-sum kernel whose threads share memory, for compute-sanitizer's racecheck.

    python 05_racecheck.py "with barriers"|"without barriers"
Prints the distinct sums of the 64 blocks (each block sums 256 ones: 256 when nothing races).
"""
import sys

import cupy as cp

barrier = "__syncthreads();" if sys.argv[1] == "with barriers" else ""
block_sum = cp.RawKernel(r"""
extern "C" __global__ void block_sum(const float* x, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    BARRIER
    for (int half = 128; half > 0; half /= 2) {
        if (t < half) s[t] += s[t + half];
        BARRIER
    }
    if (t == 0) out[blockIdx.x] = s[0];
}""".replace("BARRIER", barrier), "block_sum")
x = cp.ones(256 * 64, dtype=cp.float32)
out = cp.zeros(64, dtype=cp.float32)
block_sum((64,), (256,), (x, out))
print(sorted(set(out.get().tolist())))
