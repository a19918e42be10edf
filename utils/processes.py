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
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass


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


# Threads only wait on child processes; four at a time keeps a two-core laptop (or Colab) usable.
_BACKGROUND = ThreadPoolExecutor(max_workers=4, thread_name_prefix="course-process")


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
