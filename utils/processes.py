"""Run Python code in a fresh process: for what a notebook's own process cannot show.

Some lessons need a process that starts from nothing:
- settings read once, when CUDA or a library starts (CUDA_MODULE_LOADING, CUDA_LAUNCH_BLOCKING,
  PYTORCH_CUDA_ALLOC_CONF, CUDA_DEVICE_MAX_CONNECTIONS, CUPY_TF32, ...);
- one-time costs (the first CUDA call, the first call of a kernel), which a warm process has paid;
- errors that leave a process unusable (a device-side assert poisons the CUDA context), which must
  not kill the notebook's own kernel.

    out = utils.run_python("import torch; print(torch.zeros(1, device='cuda'))",
                           env={"CUDA_LAUNCH_BLOCKING": "1"})

`run_python` returns what the child printed, and raises `ChildFailed` (with the end of its stderr)
if it failed; `run_process` returns the exit status, output and error output whatever happened, for
a lesson about the failure itself.  `start_process` and `start_python` do the same in the
background and return at once, so that independent processes (which measure no time) run side by
side: `later = utils.start_python(code)`, then `later.result()` where the output is needed.
`script(name)` reads a script kept beside the notebooks.  Why not
plain subprocess.run: every notebook needs the same four details right (this Python, the environment
with changes, a time limit, the error shown).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any


class ChildFailed(RuntimeError):
    """The fresh process exited with an error; the message ends with the end of its stderr."""


@dataclass(frozen=True)
class Finished:
    """What a fresh process did: its exit status, what it printed, and what it wrote to stderr."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def traceback(self) -> list[str]:
        """The lines of the last Python traceback in stderr (empty if there is none)."""
        lines = self.stderr.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
        return lines[starts[-1]:] if starts else []


def _environment(env: Mapping[str, str] | None, unset: Iterable[str]) -> dict[str, str]:
    removed = set(unset)
    return {k: v for k, v in os.environ.items() if k not in removed} | dict(env or {})


def run_process(code: str, *args: str, env: Mapping[str, str] | None = None, unset: Iterable[str] = (),
                timeout: float = 300, prefix: Sequence[str] = ()) -> Finished:
    """Run `python -c code args...` with this notebook's Python, and return what happened.

    env: environment variables to set (on top of this process's); unset: variables to remove, so
    the child sees the default (e.g. unset=["CUDA_MODULE_LOADING"]); timeout: seconds; prefix: a
    command that runs the child Python, such as a checker (notebook 05:
    prefix=[utils.compute_sanitizer(), "--tool", "memcheck"]).
    """
    done = subprocess.run([*prefix, sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=_environment(env, unset), timeout=timeout, check=False)
    return Finished(done.returncode, done.stdout, done.stderr)


def run_python(code: str, *args: str, env: Mapping[str, str] | None = None, unset: Iterable[str] = (),
               timeout: float = 300, prefix: Sequence[str] = ()) -> str:
    """Run `code` in a fresh Python process and return what it printed; raise ChildFailed if it failed."""
    done = run_process(code, *args, env=env, unset=unset, timeout=timeout, prefix=prefix)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-20:])
        raise ChildFailed(f"the fresh Python process exited with status {done.returncode}:\n{tail}")
    return done.stdout


# Threads only wait on child processes: as many at a time as this process may use cores (its
# affinity: `taskset` counts), at most eight (two on Colab or a laptop, which stay usable).
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
_BACKGROUND = ThreadPoolExecutor(max_workers=max(2, min(8, _CORES)), thread_name_prefix="course-process")


def start_process(code: str, *args: str, **options: object) -> Future[Finished]:
    """`run_process` in the background: returns at once; `.result()` waits and returns its Finished.

    Only for processes whose timing is not the lesson: processes side by side share the GPU and the
    host's cores.  Options as for run_process (env, unset, timeout, prefix).
    """
    return _BACKGROUND.submit(run_process, code, *args, **options)  # type: ignore[arg-type]


def start_python(code: str, *args: str, **options: object) -> Future[str]:
    """`run_python` in the background: `.result()` returns what it printed, or raises ChildFailed."""
    return _BACKGROUND.submit(run_python, code, *args, **options)  # type: ignore[arg-type]


def script(name: str) -> str:
    """The text of a script beside the notebooks, `notebooks/scripts/<name>`, for run_python or run_process.

    A script longer than a few lines lives there, where a reader and a linter see it as a file;
    run from its text, its traceback still names it `File "<string>"`, as one kept in a cell does.
    """
    from pathlib import Path

    return (Path(__file__).resolve().parent.parent / "notebooks" / "scripts" / name).read_text()


# --------------------------------------------------------------------------------------------
# Fresh processes that measure one at a time, started side by side
# --------------------------------------------------------------------------------------------
# What each process runs first: import the slow part, say so, then wait for its turn.
_TURN = """import os, sys, time
_ready, _turn = sys.argv.pop(1), sys.argv.pop(1)
import {imports}
open(_ready, "w").close()
while not os.path.exists(_turn):
    time.sleep(0.005)
del _ready, _turn
"""


def run_in_turn(code: str, runs: Mapping[str, Mapping[str, Any]], imports: str = "torch",
                timeout: float = 300) -> dict[str, str]:
    """Run `code` in one fresh Python process per entry of `runs`, each alone while it measures.

    runs: {name: {"args": [...], "env": {...}, "unset": [...]}} (every key optional), as for
    utils.run_python.  The processes start together and import `imports` (PyTorch: seconds each)
    side by side; once all have, each in turn runs `code` and exits before the next one starts, so
    what one times or measures (a first call, GPU memory, a queue) meets no other process's work.
    Returns what each printed, by name; raises ChildFailed if one failed.
    """
    import tempfile
    from contextlib import ExitStack
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="course-turns-"))
    children: dict[str, tuple[int, subprocess.Popen, Any, Any]] = {}
    with ExitStack() as files:
        try:
            for n, (name, run) in enumerate(runs.items()):  # outputs go to files: a full pipe cannot block a child
                out, err = (files.enter_context(open(folder / f"{n}.{kind}", "w+")) for kind in ("out", "err"))
                argv = [sys.executable, "-c", _TURN.format(imports=imports) + code,
                        str(folder / f"{n}.ready"), str(folder / f"{n}.turn"), *run.get("args", ())]
                env = _environment(run.get("env"), run.get("unset", ()))
                children[name] = (n, subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env), out, err)
            deadline = time.monotonic() + timeout
            while not all((folder / f"{n}.ready").exists() or child.poll() is not None
                          for n, child, _, _ in children.values()):  # until all have imported (or failed)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"run_in_turn: the processes did not import {imports} in {timeout} s")
                time.sleep(0.01)
            printed = {}
            for name, (n, child, out, err) in children.items():  # one at a time, in the order of `runs`
                (folder / f"{n}.turn").touch()
                status = child.wait(timeout=timeout)
                out.seek(0)
                err.seek(0)
                if status != 0:
                    tail = "\n".join(err.read().strip().splitlines()[-20:])
                    raise ChildFailed(f"the fresh Python process {name!r} exited with status {status}:\n{tail}")
                printed[name] = out.read()
            return printed
        finally:
            for _, child, _, _ in children.values():
                if child.poll() is None:  # after a failure, the others would wait for their turn forever
                    child.kill()
                    child.wait()
            shutil.rmtree(folder, ignore_errors=True)
