"""Notebook 04, section 8: DLPack from PyTorch to CuPy, with or without the per-thread default stream.

CUPY_CUDA_PER_THREAD_DEFAULT_STREAM is read when CuPy starts, so in a fresh process:
    CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1 python 04_ptds_interop.py
prints, as JSON, CuPy's current stream and what cupy.from_dlpack(tensor) did on three streams.
"""

import json

import cupy as cp
import torch

tensor = torch.ones(8, device="cuda")


def export() -> str:
    try:
        cp.from_dlpack(tensor)  # passes CuPy's current stream to tensor.__dlpack__(stream=...)
        return "ok"
    except BufferError as err:
        return f"BufferError: {err}"


report = {"current stream": cp.cuda.get_current_stream().ptr, "from_dlpack": export()}
with cp.cuda.Stream.null:
    report["inside `with Stream.null:`"] = export()
with cp.cuda.Stream(non_blocking=True):
    report["inside `with Stream(non_blocking=True):`"] = export()
print(json.dumps(report))
