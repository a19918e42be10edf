"""On a GPU with Nsight Compute: the hardware counters behind two of lecture 09's open questions (a lead, not yet in
the lecture).

Lecture 09 measures `silu1`'s share of the copy bandwidth falling above 256 threads a block, and `gather_cols` taking
about twice `gather_rows`' time, and says its runs do not show why.  This script launches the lecture's kernels (the
same CUDA C): `silu1` at 32 to 1024 threads a block on 2**26 floats, and the three gathers on 8192 x 8192, each twice
(the second launch is the one to read).  Run it under ncu from the repository root:

    ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section MemoryWorkloadAnalysis --csv python -m tools.ncu_probe_09 > ncu09.csv

(CONTRIBUTING, "The GPU regression", call BX, has the H200's table.)  Written by hand: the kernels are the lecture's,
and ncu is the tool; the script only launches them the way the lecture does.
"""

from __future__ import annotations

RAW = r"""
extern "C" __global__ void silu1(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v / (1.0f + expf(-v)); }
}
extern "C" __global__ void gather_cols(const float* x, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) { int r = i % rows, c = i / rows; y[i] = x[r * cols + c]; }
}
extern "C" __global__ void gather_rows(const float* x, float* y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] = x[i];
}
extern "C" __global__ void gather_rows_div(const float* x, float* y, int rows, int cols, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // with stride = rows, x[c * stride + r] is x[i]
    if (i < rows * cols) { int r = i % rows, c = i / rows; y[i] = x[c * stride + r]; }
}
"""


def main() -> None:
    import cupy as cp  # on the GPU machine only

    mod = cp.RawModule(code=RAW)
    N = 1 << 26
    x = cp.random.standard_normal(N, dtype=cp.float32)
    y = cp.empty_like(x)
    silu1 = mod.get_function("silu1")
    for threads in (32, 64, 128, 256, 512, 1024):
        for _ in range(2):  # the second launch is the one to read
            silu1(((N + threads - 1) // threads,), (threads,), (x, y, cp.int64(N)))
    rows = cols = 8192
    for name, extra in (("gather_rows", ()), ("gather_rows_div", (rows,)), ("gather_cols", ())):
        for _ in range(2):
            mod.get_function(name)(((rows * cols + 255) // 256,), (256,), (x, y, cp.int32(rows), cp.int32(cols),
                                                                            *(cp.int32(e) for e in extra)))
    cp.cuda.Device().synchronize()
    print("done")


if __name__ == "__main__":
    main()
