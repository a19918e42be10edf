"""Notebook 05, section 3: which CUDA errors leave the process usable, and which kill it (sticky).

Each attempt runs a step, then a synchronize; the report lists what each step raised, as JSON.
"""
import json

import torch

report = []


def attempt(name, fn):
    try:
        fn()
        torch.cuda.synchronize()
        report.append((name, "ok"))
    except Exception as error:  # noqa: BLE001 - any error is a result to report
        report.append((name, f"{type(error).__name__}: {str(error).splitlines()[0]}"))


def a_little_work():
    return (torch.ones(1024, device="cuda") * 2).sum().item()


def bad_lookup():
    torch.nn.functional.embedding(torch.tensor([1024], device="cuda"), torch.zeros(1024, 8, device="cuda"))


total = torch.cuda.get_device_properties(0).total_memory
attempt("allocate twice the GPU's memory", lambda: torch.empty(2 * total, dtype=torch.uint8, device="cuda"))
attempt("  then a little work", a_little_work)
attempt("look up row 1024 of 1024", bad_lookup)
attempt("  then torch.zeros(1, device='cuda')", lambda: torch.zeros(1, device="cuda"))
attempt("  then torch.cuda.synchronize()", torch.cuda.synchronize)
print(json.dumps(report))
