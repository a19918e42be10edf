"""Notebook 05, section 6: the race of 05_csan_race.py fixed (fork and join), then the same race in CuPy.

Run with TORCH_CUDA_SANITIZER=1: CSAN should report nothing, since it sees PyTorch's operators only.
"""
import cupy as cp
import torch

cuda = torch.device("cuda")
s = torch.cuda.Stream()
A = torch.empty((100, 100), device=cuda).normal_(0.0, 1.0)
s.wait_stream(torch.cuda.current_stream())  # fork: s waits for normal_()
with torch.cuda.stream(s):
    B = torch.sum(A)
torch.cuda.current_stream().wait_stream(s)  # join: the default stream waits for the sum
print("PyTorch, fixed:", B.item(), flush=True)

side = cp.cuda.Stream(non_blocking=True)
a = cp.random.standard_normal((100, 100), dtype=cp.float32)  # on CuPy's current stream
with side:
    total = a.sum()  # the same race in CuPy: nothing makes `side` wait
side.synchronize()
print("CuPy, racy (other data):", float(total))
