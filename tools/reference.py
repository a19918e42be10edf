"""Reference outputs: execute notebooks on the reference GPU and stamp where and with what.

    python -m tools.reference run [NOTEBOOK ...]    # execute in place and stamp (needs a GPU);
                                                    # a notebook with a failing cell is left as it was
    python -m tools.reference check [NOTEBOOK ...]  # is every stamp there and current?

Default: every notebook in notebooks/ and solutions/.  `run` executes each notebook top to bottom
in a fresh kernel (nbclient, as Run All would), while sampling nvidia-smi for the peak GPU memory
used, then writes the outputs and, under metadata["course"]["reference_run"], the stamp: GPU, its
compute capability, driver, CUDA runtime, torch, CuPy, Triton, Python, date, the run's duration and
peak GPU memory, a hash of the code cells and a hash of utils/ (the code the cells call; other
notebooks' exercise checks left out, see tools.course.utils_hash).  Strict
claims (utils.claims) are on, so a claim that does not hold stops the run.  `check` fails when a
notebook's code or utils/ changed after its stamp (a hash differs), or when the stamp is not from a
reference GPU or breaks the course's budgets (pyproject.toml, [tool.course]).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools.course import ROOT, SETTINGS, UTILS, code_hash, notebooks, read, utils_hash, write

sys.path.insert(0, str(ROOT))
STAMP = "reference_run"


def stamp_of(nb: nbformat.NotebookNode) -> dict | None:
    return nb.metadata.get("course", {}).get(STAMP)


class GpuMemorySampler:
    """Sample the GPU's used memory (all processes: kernels, subprocesses, CUDA contexts) with nvidia-smi."""

    def __init__(self, interval_ms: int = 100) -> None:
        self._proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", f"-lms={interval_ms}"],
            stdout=subprocess.PIPE, text=True,
        )
        self.peak_mib = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.strip().isdigit():
                self.peak_mib = max(self.peak_mib, int(line))

    def stop(self) -> int:
        self._proc.terminate()
        self._thread.join(timeout=5)
        return self.peak_mib


def run(path: Path) -> dict:
    """Execute one notebook in place and stamp it; return the stamp."""
    import utils

    utils.require_cuda("tools.reference run")
    os.environ[utils.claims.STRICT_VARIABLE] = "1"  # the kernel inherits it: a claim that fails stops the run
    nb = read(path)
    sampler = GpuMemorySampler()
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    env = utils.environment()
    stamp = {
        "gpu": env["gpu"], "compute_capability": env["compute_capability"], "driver": env["driver"],
        "cuda_runtime": env["cuda_runtime"], "torch": env["torch"], "cupy": env["cupy"],
        "triton": env["triton"], "python": env["python"],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "seconds": round(seconds, 1), "peak_gpu_memory_mib": sampler.stop(),
        "code_hash": code_hash(nb), "utils_hash": utils_hash(notebook=path),
    }
    nb.metadata.setdefault("course", {})[STAMP] = stamp
    write(nb, path)
    return stamp


def problems(path: Path, utils_folder: Path = UTILS) -> list[str]:
    """Why this notebook's reference outputs cannot be trusted; empty when they can."""
    stamp = stamp_of(read(path))
    if stamp is None:
        return ["never executed on the reference GPU (no stamp): run `python -m tools.reference run` there"]
    found = []
    if stamp["code_hash"] != code_hash(read(path)):
        found.append("code changed after its reference run: execute it again on the reference GPU")
    if stamp.get("utils_hash") != utils_hash(utils_folder, notebook=path):
        found.append("utils/ changed after its reference run: execute it again on the reference GPU")
    if not any(gpu in str(stamp["gpu"]) for gpu in SETTINGS["reference_gpus"]):
        found.append(f"executed on {stamp['gpu']}, not on a reference GPU ({' or '.join(SETTINGS['reference_gpus'])})")
    if stamp["seconds"] > SETTINGS["max_seconds"]:
        found.append(f"took {stamp['seconds']} s on the reference GPU; the budget is {SETTINGS['max_seconds']} s")
    if stamp["peak_gpu_memory_mib"] > SETTINGS["max_gpu_memory_gib"] * 1024:
        found.append(f"peaked at {stamp['peak_gpu_memory_mib']} MiB of GPU memory; "
                     f"the budget is {SETTINGS['max_gpu_memory_gib']} GiB")
    return found


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "check"):
        print(__doc__)
        return 2
    paths = [Path(p).resolve() for p in argv[1:]] or notebooks()
    failed = 0
    for path in paths:
        name = path.relative_to(ROOT)
        if argv[0] == "run":
            try:
                print(f"{name}: {run(path)}", flush=True)
            except CellExecutionError as err:  # a failed claim, or an error: not stamped; go on with the rest
                print(f"{name}: NOT STAMPED, a cell failed:\n{err}", flush=True)
                failed += 1
        else:
            for problem in problems(path, UTILS):
                print(f"{name}: {problem}")
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
