"""Notebook 05: a notebook whose first cell queues a bad lookup, run by a Jupyter kernel (nbclient).

Prints, for each cell, whether it raised and what it wrote to stdout and stderr, as JSON: where the
error surfaces, and where the GPU's assertion text lands, in a real kernel (ipykernel) that dies.
"""
import json

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
NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True).execute()
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
print(json.dumps(report))
