"""Notebook 01, section 2 (optional): GPU memory outside PyTorch's allocator after each first step.

Run by utils.run_in_turn in fresh processes, one with CUDA_MODULE_LOADING=EAGER; prints a JSON dict.
"""
import ctypes
import json

import torch

MiB = 2**20


def outside_allocator():  # MiB in use on the whole GPU, minus what PyTorch's allocator holds
    free, total = torch.cuda.mem_get_info()
    return (total - free - torch.cuda.memory_reserved()) / MiB


steps = {}
x = torch.empty(256, 256, device="cuda")  # creates the context; an empty tensor runs no kernel
steps["context"] = outside_allocator()
x.zero_()                                  # a first kernel
torch.cuda.synchronize()
steps["first kernel"] = outside_allocator()
y = x @ x                                  # a first matrix product: cuBLAS
torch.cuda.synchronize()
steps["first matmul"] = outside_allocator()
try:  # Linux: ask libcuda (1 = eager, 2 = lazy) and the C library's environment
    mode = ctypes.c_int()
    ctypes.CDLL("libcuda.so.1").cuModuleGetLoadingMode(ctypes.byref(mode))
    steps["mode"] = {1: "eager", 2: "lazy"}.get(mode.value, str(mode.value))
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    value = libc.getenv(b"CUDA_MODULE_LOADING")
    steps["variable"] = value.decode() if value else "unset"
except (OSError, AttributeError):
    steps["mode"] = steps["variable"] = "unknown"
print(json.dumps(steps))
