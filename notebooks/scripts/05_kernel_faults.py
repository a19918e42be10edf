"""Notebook 05: a kernel of our own that faults (CuPy), in a fresh process.

argv[1]: "illegal address" (a write where no allocation is) or "misaligned address" (a float4 store
4 bytes off its 16-byte alignment).  Prints, as JSON, what each step raised: the launch, the first
synchronization, then a little more CuPy and PyTorch work in the same process.
"""
import json
import sys

import cupy as cp
import torch

KERNELS = r"""
extern "C" __global__ void write_to(float* p) {
    p[threadIdx.x] = 1.0f;
}
extern "C" __global__ void write_float4(float4* p) {
    p[threadIdx.x] = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
}
"""
module = cp.RawModule(code=KERNELS)
x = cp.zeros(1024, dtype=cp.float32)
if sys.argv[1] == "illegal address":
    kernel, pointer = module.get_function("write_to"), cp.uint64(256)  # address 256: nothing is allocated there
else:
    kernel, pointer = module.get_function("write_float4"), cp.uint64(x.data.ptr + 4)  # x + 1 float
report = []


def step(name, fn):
    try:
        fn()
        report.append((name, "ok"))
    except Exception as error:  # noqa: BLE001 -- printed: which error, raised where, is the point
        report.append((name, f"{type(error).__module__}.{type(error).__name__}: {str(error).splitlines()[0]}"))


step("launch", lambda: kernel((1,), (32,), (pointer,)))
step("cp.cuda.Device().synchronize()", cp.cuda.Device().synchronize)
step("then float(cp.ones(4).sum())", lambda: float(cp.ones(4).sum()))
step("then torch.ones(4, device='cuda').sum().item()", lambda: torch.ones(4, device="cuda").sum().item())
print(json.dumps(report))
