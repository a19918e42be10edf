"""Reference outputs: notebooks executed on the reference GPU, stamped with where and with what.

    python -m tools.reference run [--all | NOTEBOOK ...]   # execute and stamp what is stale (needs a GPU)
    python -m tools.reference update                      # run, then the unit tests: the regression of a change
    python -m tools.reference check [NOTEBOOK ...]         # is every stamp there and current?

`run` executes notebooks through nbval, as the regression test does (strict claims, cells tagged
`nbval-check-output` compared with their saved outputs), and writes back, stamped, each notebook
whose cells all passed (tools/pytest_plugin.py, `--stamp`); a notebook with a failing cell is left
as it was.  Without arguments it runs what `check` finds stale, with the solutions of the lectures
among them; `--all` runs every notebook.  `update` does the same and then runs tests/ in the same
pytest session, with the exercise tests of the notebooks it ran only (all of them with `--all`):
what a change to a lecture or to utils/ costs on the GPU.

The stamp, under metadata["course"]["reference_run"], records the GPU, its compute capability, the
driver, CUDA runtime, torch, CuPy, Triton and Python versions, the date, the run's duration and its
peak GPU memory (nvidia-smi, all processes, less what was in use before the run), and two hashes of
what the outputs depend on (tools/fingerprint.py): the notebook's code and the code of utils/ it
can run.  `check` fails when either changed since, or when the stamp is not from a reference GPU or
breaks the course's budgets (pyproject.toml, [tool.course]).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
from nbformat.v4 import output_from_msg

from tools.course import LECTURES, ROOT, SETTINGS, SOLUTIONS, notebooks, read, set_reference_note, write
from tools.fingerprint import UTILS, code_hash, utils_hash

sys.path.insert(0, str(ROOT))
STAMP = "reference_run"


class NotSaved(Exception):
    """A run's outputs cannot be saved: a cell did not run, or the code changed on disk meanwhile."""


def stamp_of(nb: nbformat.NotebookNode) -> dict | None:
    return nb.metadata.get("course", {}).get(STAMP)


class GpuMemorySampler:
    """The GPU's used memory over a run (nvidia-smi, every process: kernels, subprocesses, contexts),
    less what was in use when it started (another process's cache, say)."""

    def __init__(self, interval_ms: int = 100) -> None:
        # On a machine of several GPUs, read only the one the run uses: CUDA_VISIBLE_DEVICES names it (by
        # index or UUID, as nvidia-smi's --id takes them; CUDA_DEVICE_ORDER=PCI_BUS_ID makes the indices
        # agree).  Unset, every GPU is read, which on a machine of one GPU is that one.
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
        which = [f"--id={visible}"] if visible else []
        self._proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", f"-lms={interval_ms}",
             *which],
            stdout=subprocess.PIPE, text=True,
        )
        self.baseline_mib: int | None = None
        self.peak_mib = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.strip().isdigit():
                used = int(line)
                self.baseline_mib = used if self.baseline_mib is None else self.baseline_mib
                self.peak_mib = max(self.peak_mib, used - self.baseline_mib)

    def stop(self) -> int:
        self._proc.terminate()
        self._thread.join(timeout=5)
        return self.peak_mib


def require_reference_gpu() -> None:
    """Stop unless this machine may make reference outputs: a reference GPU, all of it (not through MPS)."""
    import utils

    utils.require_cuda("a reference run (--stamp)")
    gpu = utils.cuda_status().reason
    if not any(name in gpu for name in SETTINGS["reference_gpus"]):
        raise SystemExit(f"a reference run needs one of {SETTINGS['reference_gpus']}; this is {gpu}")
    if utils.device.shared_through_mps():
        raise SystemExit("a reference run needs the whole GPU: this one is shared through MPS (tools.smaller_gpu?)")


ENVIRONMENT_PROBE = "import json, utils; print(json.dumps(utils.environment()))"


def environment_of_this_machine() -> dict:
    """utils.environment(), asked of a fresh process: this one then never holds a CUDA context of its own."""
    import utils

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return json.loads(utils.run_python(ENVIRONMENT_PROBE, env={"PYTHONPATH": path}))


def _output(out: dict) -> nbformat.NotebookNode:
    """An output as nbval collected it (kernel messages' content), as the notebook format stores it."""
    kind = out["output_type"]
    content = {key: value for key, value in out.items() if key != "output_type"}
    return output_from_msg({"msg_type": kind, "header": {"msg_type": kind}, "content": content})


def save_run(path: Path, ran: str, outputs: dict[int, list], timing: dict[int, dict], seconds: float,
             peak_mib: int, environment: dict) -> dict:
    """Write a run's outputs (by code cell number) into the notebook at `path`, and stamp it; return the stamp.

    `ran`: the code hash of the notebook as it was run; the file must still hold that code.
    """
    nb = read(path)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if code_hash(nb) != ran:
        raise NotSaved("its code changed on disk while it ran")
    missing = [n for n in range(len(code)) if n not in outputs]
    if missing:
        raise NotSaved(f"cells {missing} did not run")
    for number, cell in enumerate(code):
        cell.outputs = [_output(out) for out in outputs[number]]
        cell.execution_count = number + 1
        for out in cell.outputs:
            if out.output_type == "execute_result":
                out.execution_count = number + 1
        cell.metadata["execution"] = timing.get(number, {})
    stamp = {key: environment[key] for key in ("gpu", "compute_capability", "driver", "cuda_runtime", "torch",
                                               "cupy", "triton", "python")}
    stamp.update(date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"), seconds=round(seconds, 1),
                 peak_gpu_memory_mib=peak_mib, code_hash=code_hash(nb), utils_hash=utils_hash(nb, path))
    nb.metadata.setdefault("course", {})[STAMP] = stamp
    if path.parent == LECTURES:  # the note under the setup cell names the run (markdown: the stamp stays)
        set_reference_note(nb)
    nbformat.validate(nb)
    write(nb, path)
    return stamp


def problems(path: Path, utils_folder: Path = UTILS) -> list[str]:
    """Why this notebook's reference outputs cannot be trusted; empty when they can."""
    nb = read(path)
    stamp = stamp_of(nb)
    if stamp is None:
        return ["never executed on the reference GPU (no stamp): run `python -m tools.reference run` there"]
    found = []
    if stamp["code_hash"] != code_hash(nb):
        found.append("code changed after its reference run: execute it again on the reference GPU")
    if stamp.get("utils_hash") != utils_hash(nb, path, utils_folder):
        found.append("utils/ changed after its reference run: execute it again on the reference GPU")
    if not any(gpu in str(stamp["gpu"]) for gpu in SETTINGS["reference_gpus"]):
        found.append(f"executed on {stamp['gpu']}, not on a reference GPU ({' or '.join(SETTINGS['reference_gpus'])})")
    budget = SETTINGS.get("max_seconds_of", {}).get(path.stem, SETTINGS["max_seconds"])
    if stamp["seconds"] > budget:
        found.append(f"took {stamp['seconds']} s on the reference GPU; the budget is {budget} s")
    if stamp["peak_gpu_memory_mib"] > SETTINGS["max_gpu_memory_gib"] * 1024:
        found.append(f"peaked at {stamp['peak_gpu_memory_mib']} MiB of GPU memory; "
                     f"the budget is {SETTINGS['max_gpu_memory_gib']} GiB")
    return found


def stale(paths: list[Path] | None = None) -> list[Path]:
    """The notebooks to run again: those with a problem, and the solutions of the lectures among them."""
    found = [p for p in (paths or notebooks()) if problems(p)]
    found += [SOLUTIONS / p.name for p in found if p.parent == LECTURES and (SOLUTIONS / p.name).exists()]
    return sorted(set(found))


def pytest_arguments(command: str, paths: list[Path], every_test: bool = False) -> list[str]:
    """The pytest command line of `run` (the notebooks, stamped) or `update` (then tests/).

    `update` runs the exercise tests of the notebooks it re-runs, not the others': a check lives in
    utils/, which the stamp of its solutions follows, so a changed check makes its solutions stale.
    With no notebook to run, or `every_test`, it runs all of tests/.
    """
    names = [str(p.relative_to(ROOT)) for p in paths]
    if command != "update":
        return ["--stamp", *names]
    only = [] if every_test or not paths else ["--exercises-of", ",".join(sorted({p.stem for p in paths}))]
    return ["--stamp", *names, *only, "tests"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "update", "check"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "check":
        failed = 0
        for path in [Path(p).resolve() for p in rest] or notebooks():
            for problem in problems(path, UTILS):
                print(f"{path.relative_to(ROOT)}: {problem}")
                failed += 1
        return 1 if failed else 0
    if rest == ["--all"]:
        paths = notebooks()
    elif rest:
        paths = [Path(p).resolve() for p in rest]
    else:
        paths = stale()
    if not paths and command == "run":
        print("every reference output is current: nothing to run (--all runs every notebook)")
        return 0
    print("running: " + (", ".join(str(p.relative_to(ROOT)) for p in paths) or "no notebook (all current)"), flush=True)
    import pytest

    return int(pytest.main(pytest_arguments(command, paths, every_test=rest == ["--all"])))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
