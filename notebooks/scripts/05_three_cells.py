"""Notebook 05: a notebook whose first cell queues a bad lookup, run by a Jupyter kernel (nbclient).

Prints, as JSON, for each cell whether it raised and what it wrote to stdout and stderr ("cells"), and
what the kernel process wrote to its own error output ("kernel stderr": what a terminal that started
Jupyter shows, ipykernel's copy of descriptor 2 included), and the ipykernel version installed here ("ipykernel"):
where the error surfaces, and where the GPU's assertion text lands, in a real kernel (ipykernel) that dies.
"""
import json
import tempfile
from importlib.metadata import PackageNotFoundError, version

import nbformat
from nbclient import NotebookClient

CELLS = [
    ("import torch\n"
     "weight = torch.zeros(1024, 8, device='cuda')\n"
     "ids = torch.tensor([3, 1024], device='cuda')\n"
     "vectors = torch.nn.functional.embedding(ids, weight)  # queued: the host does not wait\n"
     "print('cell 1 finished')"),
    "print(vectors.sum().item())  # the first synchronization",
    ("import time\n"
     "time.sleep(2)  # time for the kernel to forward what arrived late\n"
     "print(torch.zeros(1, device='cuda'))"),
]
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
with tempfile.TemporaryFile(mode="w+", errors="replace") as kernel_stderr:  # the kernel's descriptor 2
    NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True).execute(stderr=kernel_stderr)
    kernel_stderr.seek(0)
    kernel_text = kernel_stderr.read()
report = []
for cell in nb.cells:
    streams = {"stdout": "", "stderr": ""}
    error = None
    for out in cell.outputs:
        if out.output_type == "stream":
            streams[out.name] += out.text
        elif out.output_type == "error":
            error = f"{out.ename}: {out.evalue.splitlines()[0] if out.evalue else ''}"
    report.append({"error": error, **streams})
try:
    ipykernel_version = version("ipykernel")  # this environment's: nbclient's python3 kernel normally runs from it
except PackageNotFoundError:
    ipykernel_version = "not installed here"
print(json.dumps({"cells": report, "kernel stderr": kernel_text, "ipykernel": ipykernel_version}))
