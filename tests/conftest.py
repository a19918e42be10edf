"""Make the repository's root importable (utils, tools) for every test."""

import contextlib
import linecache
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import hypothesis
import pytest

# The checks' Hypothesis runs as on a student's machine. Where the environment names a CI service (CI=true, as
# .ci/run sets), Hypothesis loads its own "ci" settings profile at import (hypothesis/_settings.py, 6.170):
# print_blob=True adds a "You can reproduce this test case ... @reproduce_failure(...)" note to the answer's own
# error, which no student sees. The checks set print_blob=False and every other setting of that profile
# themselves (utils/exercises/properties.py, _settings); this keeps the tests' own @given tests as they run
# on a developer's machine.
hypothesis.settings.load_profile("default")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import utils

# Claims are strict here and in every notebook nbval runs: tools/pytest_plugin.py (loaded by pyproject.toml).

# Without a GPU, Triton's kernels (notebook 09) run through its interpreter, as the solutions notebook sets up before
# it imports Triton.  Triton reads TRITON_INTERPRET when a function is decorated, its own library functions (tl.max,
# tl.sum) too, at its import: so before anything here imports it (utils.device.triton_status does, for `_unmet`).
if not utils.has_cuda():
    os.environ.setdefault("TRITON_INTERPRET", "1")

gpu = pytest.mark.skipif(not utils.has_cuda(), reason=f"needs a CUDA GPU: {utils.cuda_status().reason}")
host = pytest.mark.host  # the same on every machine: CI runs it; on a GPU only with --host-tests
cpu_only = pytest.mark.skipif(utils.has_cuda(), reason="checks the behaviour on a machine without a GPU")

# The options of a pytest session run inside a test (pytest.main): pytest's unraisable-exception plugin left out, which
# ends each session with five gc.collect() calls, about 2 s of CPU apiece in a heap as large as a whole run's (measured
# 2026-12-01); the outer session's own plugin still reports what is raised unraisably meanwhile.
INNER = ("-p", "no:unraisableexception")


# ---------------------------------------------------------------- work that measures nothing, side by side
@dataclass
class Untimed:
    run: Callable[[list[pytest.Item]], object]  # given the session's tests that need it
    needed_by: Callable[[pytest.Item], bool]


UNTIMED: dict[str, Untimed] = {}

# How many notebooks, or answers, each untimed job runs at once: one per core this process may use
# (its affinity: `taskset`, as tools.smaller_gpu sets, counts; os.cpu_count() does not), at most 8.
# Each may hold a CUDA context: under tools.smaller_gpu (2 cores, MPS), 16 answers of 3 processes each
# beside 8 notebooks failed ("CUDA-capable device(s) is/are busy or unavailable", "out of memory").
AT_ONCE = max(2, min(8, len(os.sched_getaffinity(0))))


@contextlib.contextmanager
def verdict_only() -> Iterator[None]:
    """Checks run without shrinking (utils.exercises.properties.SHRINKING) inside: for the tests that ask only whether
    a check PASSes or FAILs an answer.  The verdict comes from the cases drawn, before any shrinking; shrinking finds
    a smaller failing case for the student's message (up to 20 s of it after each wrong answer's first failure)."""
    from utils.exercises import properties

    before, properties.SHRINKING = properties.SHRINKING, False
    try:
        yield
    finally:
        properties.SHRINKING = before


def untimed(needed_by: Callable[[pytest.Item], bool]):
    """A session fixture for work that times and measures nothing shared (notebooks run to their TODO
    lines, answers that run scripts in fresh processes, a fresh process's own allocator): the first
    test that asks for one of them starts every such job the session's tests need, side by side, and
    waits for them all, so that no test that times things runs beside them.  The fixture returns the
    job's result, or raises what the job raised.

    needed_by(item): whether that test reads this job's result (the job runs only if one of the
    session's tests does: `-k`, --exercises-of and a machine without a GPU leave jobs out).  Under
    pytest-xdist (a machine without a GPU) each worker sees every test and runs what they need: there,
    the other worker's tests run beside the jobs; the CPU's timings ask for no quiet machine.
    """

    def register(run: Callable[[list[pytest.Item]], object]):
        UNTIMED[run.__name__] = Untimed(run, needed_by)

        @pytest.fixture(scope="session", name=run.__name__)
        def fixture(untimed_results):
            outcome = untimed_results[run.__name__]
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

        return fixture

    return register


@pytest.fixture(scope="session")
def untimed_results(request) -> dict[str, object]:
    wanted = {name: [item for item in request.session.items if job.needed_by(item)] for name, job in UNTIMED.items()}
    wanted = {name: items for name, items in wanted.items() if items}
    with ThreadPoolExecutor(max(1, len(wanted)), thread_name_prefix="untimed") as pool:
        futures = {name: pool.submit(UNTIMED[name].run, items) for name, items in wanted.items()}
    results: dict[str, object] = {}
    for name, future in futures.items():
        try:
            results[name] = future.result()
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 -- raised again in the tests that read this job (a
            results[name] = error  # pytest.skip or SystemExit of one job must not end the others' tests)
    return results


def named(name: str, needs_gpu: bool = False) -> Callable[[pytest.Item], bool]:
    """needed_by for one test function (each of its parameters); needs_gpu: only where it would run."""
    return lambda item: getattr(item, "originalname", None) == name and (utils.has_cuda() or not needs_gpu)


def definitions_of(path: Path, names: list[str]) -> list:
    """The named functions (or classes) of an exercise or solution notebook, defined as in the notebook.

    Runs, in order, the notebook's cells tagged `imports`, `exercise-given` and `exercise` (see
    tools/make_exercises.py, which writes and checks the tags), nothing else: what a check cell is given.
    """
    from tools.course import read
    from tools.make_exercises import DEFINITION_TAGS

    namespace: dict = {}
    for n, cell in enumerate(read(path).cells):
        if cell.cell_type == "code" and DEFINITION_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            name = f"{path.parent.name}/{path.name}, cell {n}"
            # kept where inspect finds it, as IPython keeps a cell's source: @triton.jit reads its function's source
            linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(keepends=True), name)
            source = compile(cell.source, name, "exec")
            exec(source, namespace)  # noqa: S102 (the notebook's own cells, as Jupyter runs them)
    missing = [name for name in names if name not in namespace]
    assert not missing, f"{path.name} defines no {missing} in its cells tagged {sorted(DEFINITION_TAGS)}"
    return [namespace[name] for name in names]


# What a notebook needs to run in a copy of the course: the setup cell finds the course by
# tools/course.py, which reads pyproject.toml; utils/cells.py reads the references in notebooks/ and
# solutions/, and leaves out the cells that stand in exercises/.
COURSE_PARTS = ("notebooks", "exercises", "solutions", "utils", "tools", "pyproject.toml")


def copy_course(to: Path) -> Path:
    """A copy of the course's runnable parts in `to` (created), without scratch files and caches."""
    for name in COURSE_PARTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, to / name,
                            ignore=shutil.ignore_patterns("_scratch", ".ipynb_checkpoints", "__pycache__"))
        else:
            to.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, to / name)
    return to
