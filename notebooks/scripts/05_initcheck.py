"""Notebook 05, section 5: a read of torch.empty(...) that nothing wrote, for compute-sanitizer's initcheck.

    python 05_initcheck.py fresh|reused
"reused": a tensor is written and freed first, so that the caching allocator hands its block out again.
"""
import sys

import torch

if sys.argv[1] == "reused":
    y = torch.ones(65536, device="cuda")  # written, then freed
    del y
x = torch.empty(65536, device="cuda")  # nothing writes x
print("the sum of torch.empty(65536):", x.sum().item())
