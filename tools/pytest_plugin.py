"""The course's pytest plugin, loaded by every `python -m pytest` here (pyproject.toml: `-p tools.pytest_plugin`).

It adds three things to nbval's run of the notebooks, which it runs as JupyterLab does (a cell's
history stored, so that a closing `;` hides its value):

- **Strict claims**: COURSE_STRICT_CLAIMS=1 in this process and so in every kernel nbval starts, so
  a claim about GPU behaviour that no longer holds fails its cell (utils/claims.py).
- **Reference outputs on a machine without the GPU**: a `%%requires` cell that nbval's kernel
  skipped must show what the same cell produced in the reference run (its printed text under the
  reference label, and as many plots), or that cell fails.  nbval runs the notebook once for both.
- **`--stamp`**: nbval's run of a notebook is its reference run.  Where every cell of a notebook
  passed, the notebook is written back with that run's outputs and stamped (tools/reference.py);
  the others are left as they were.  Only on a reference GPU, not shared through MPS.
  `--stamp-stale` does the same for the notebooks whose stamps are stale when the session starts
  (the whole regression, and new reference outputs where they are due, in one run).

- **The next notebook's kernel, started early**: in a run on one process (a GPU's), the kernel of the
  next notebook starts while a notebook's first two cells (the setup cell and the imports) run, and
  waits, idle, until its notebook begins (see KernelPool).

- **Two workers on a machine without a GPU**: where no `-n` is given, no NVIDIA driver is present and
  pytest-xdist is installed, the run gets `-n 2 --dist loadscope` (a notebook's cells, and a test
  module's tests, stay on one worker, in order).  On a GPU the tests run one at a time, as timings
  need; `-n 0` does so anywhere.

Why by hand: nbval checks a run against saved outputs but cannot save them, and nbclient can save
them but checks nothing; this keeps one execution for both.
"""

from __future__ import annotations

import collections
import datetime as dt
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


def _nvidia_driver() -> bool:
    import shutil

    return shutil.which("nvidia-smi") is not None or Path("/proc/driver/nvidia").exists()


def _workers_wanted(args: list[str], driver: bool | None = None) -> bool:
    """Run on two workers: on a machine without an NVIDIA driver (CI, a laptop), with two cores or more,
    pytest-xdist installed, none of `-n`, `--dist`, `--pdb`, `--collect-only` or `-p no:xdist` given,
    and not in one of xdist's workers (which get the options as they are)."""
    import importlib.util

    serial = ("-n", "--numprocesses", "--dist", "--pdb", "--collect-only", "--co", "-pno:xdist")
    given = "no:xdist" in args or any(a.startswith(serial) for a in args)
    driver = _nvidia_driver() if driver is None else driver
    return (not given and not driver and "PYTEST_XDIST_WORKER" not in os.environ
            and importlib.util.find_spec("xdist") is not None and len(os.sched_getaffinity(0)) >= 2)


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # pytest's documented way to add options from a plugin before they are parsed.  Why not addopts in
    # pyproject.toml: on a GPU, tests that time kernels must not share the GPU or the host with others.
    if _workers_wanted(args):
        args[:] = ["-n", "2", "--dist", "loadscope", *args]


# The exercise modules' tests, one work unit per notebook for xdist's loadscope (the rest of a module stays one
# unit): as one unit, tests/test_exercises.py kept one worker busy for over half the run (2026-11-30). Notebook 05's
# stay with the rest of tests/test_exercises.py: they and the untouched exercises' Run All read the session's untimed
# jobs (tests/conftest.py), which the first test that needs one starts, all of them, in the worker it runs in.
SPLIT_BY_NOTEBOOK = {"tests/test_exercises.py": {"05_debugging"}, "tests/test_exercises_more.py": set()}
_NOTEBOOK_PARAM = re.compile(r"\[(\d\d_[a-z0-9_]+)[:\]-]")


# The longest units, started first (the slowest of one worker's run beside eight helpers, 2026-11-30: the live slides
# 75 s, the rest of test_exercises.py with 05's fresh processes and the untouched exercises' Run All 60 s or more, the
# browser tests 112 s in all, 08's fast_loss answers 46 s): the browser units mostly wait, the others compute.
FIRST = ("tests/test_browser_live.py", "tests/test_exercises.py", "tests/test_browser.py",
         "tests/test_exercises.py::08_profiling")


def work_unit(nodeid: str) -> str:
    """xdist's loadscope unit of a test: its module (or class), as xdist's, but a notebook's exercise tests apart."""
    scope = nodeid.rsplit("::", 1)[0]
    kept = SPLIT_BY_NOTEBOOK.get(scope)
    found = _NOTEBOOK_PARAM.search(nodeid)
    if kept is None or found is None or found.group(1) in kept:
        return scope
    return f"{scope}::{found.group(1)}"


@pytest.hookimpl(optionalhook=True)  # without xdist (-p no:xdist) no such hook exists
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's loadscope with `work_unit`'s units (xdist's documented hook for a scheduler of one's own)."""
    if config.getoption("dist", None) != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class ByNotebook(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.workqueue = _FirstAhead()  # xdist fills it, then hands its units out from the front

    return ByNotebook(config, log)


class _FirstAhead(collections.OrderedDict):
    """xdist's queue of work units, which it fills ordered by their number of tests, most first: the browser tests,
    few and the longest, came last, both workers mostly waiting on Chromium and kernels. FIRST's units go in front, in
    FIRST's order; the others keep xdist's. (Only the queue is reordered: xdist sends a worker its tests as positions in
    the collection, which must stay as every worker collected it.)"""

    def __setitem__(self, unit: str, tests: Any) -> None:
        super().__setitem__(unit, tests)
        if unit in FIRST:
            for first in sorted((u for u in self if u in FIRST), key=FIRST.index, reverse=True):
                self.move_to_end(first, last=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--stamp", action="store_true", default=False,
                     help="save the outputs of each notebook whose cells all pass, and stamp it as a reference run "
                          "(needs a reference GPU; see tools/reference.py)")
    parser.addoption("--stamp-stale", action="store_true", default=False,
                     help="the same, for the notebooks whose stamps are stale when the session starts")
    parser.addoption("--host-tests", action="store_true", default=False,
                     help="on a machine with a GPU, also run the tests marked `host` (the same on every machine: "
                          "CI runs them on every commit); without a GPU they always run")
    parser.addoption("--exercises-of", default=None, metavar="NN_TOPIC,...",
                     help="run the exercise tests of these notebooks only (tools.reference update passes the "
                          "notebooks it re-runs: a check can change only with its solution's stamp)")


def _execute_as_jupyter(kernel, cell_input: str, allow_stdin: bool | None = None) -> str:
    """nbval's RunningKernel.execute_cell_input, with the history stored as JupyterLab stores it.

    nbval sends store_history=False; IPython decides whether a cell's closing `;` hides its value
    by reading the last input stored in the history (DisplayHook.quiet), so nbval's kernels showed
    values (`True`, `<Legend ...>`) that a student's JupyterLab hides.
    """
    return kernel.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)


def pytest_configure(config: pytest.Config) -> None:
    from nbval.kernel import RunningKernel

    import utils

    os.environ[utils.claims.STRICT_VARIABLE] = "1"  # nbval's kernels inherit it
    RunningKernel.execute_cell_input = _execute_as_jupyter  # type: ignore[method-assign]
    if not (_has_workers(config) or config.pluginmanager.is_blocked(KernelPool.NAME)):
        config.pluginmanager.register(KernelPool(config), KernelPool.NAME)  # -p no:course-kernel-pool: without
    if config.getoption("--stamp") or config.getoption("--stamp-stale"):
        from tools import reference

        reference.require_reference_gpu()
        only = None if config.getoption("--stamp") else {p.resolve() for p in reference.notebooks()
                                                        if reference.problems(p)}
        config.pluginmanager.register(Stamper(reference.environment_of_this_machine(), only), "course-stamper")


def _has_workers(config: pytest.Config) -> bool:
    """xdist's controller (its workers run the tests), or one of its workers (which runs some of them)."""
    return "PYTEST_XDIST_WORKER" in os.environ or bool(getattr(config.option, "numprocesses", None))


# ------------------------------------------------------------------------------------------------
# The next notebook's kernel, started while the current notebook imports
# ------------------------------------------------------------------------------------------------
OVERLAP_CELLS = 2  # the setup cell and the imports: nothing a notebook times runs in them


class KernelPool:
    """Start the next notebook's kernel while the current notebook's first cells run.

    nbval starts a notebook's kernel when the notebook begins: one to two seconds on the reference
    GPU's host, eighteen times a run.  Here, when a notebook's kernel is handed out, the next
    notebook's kernel starts in a thread, during the current notebook's setup cell and imports
    (seconds: PyTorch's import); before the current notebook's third cell, the start must have
    finished, so nothing else runs while a notebook measures.  The kernel runs nothing before its
    notebook does (importing PyTorch ahead too would only move the wait: the imports it overlaps
    would then be gone).  A kernel is used only for the notebook it was started for (same kernel
    name, same folder); any other is stopped, and nbval starts one itself.  Why by hand: nbval
    starts its kernels itself and has no option for this.
    """

    NAME = "course-kernel-pool"

    def __init__(self, config: pytest.Config) -> None:
        from concurrent.futures import ThreadPoolExecutor

        import nbval.kernel
        import nbval.plugin

        self.config = config
        self.notebooks: list = []  # nbval's IPyNbFile nodes, in the order they run
        self.current: Any = None  # the notebook (IPyNbFile) that runs now
        self.waiting: tuple | None = None  # (notebook node, Future of a RunningKernel)
        self.started = self.reused = 0
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="course-next-kernel")
        self._start = nbval.kernel.RunningKernel  # nbval's own start
        self._before = nbval.plugin.RunningKernel  # what IPyNbFile.setup() calls (a session's in a session: its pool)
        nbval.plugin.RunningKernel = self.kernel_for

    def kernel_name(self, notebook) -> str:  # nbval's choice (IPyNbFile.setup), for a notebook not yet begun
        from nbval.kernel import CURRENT_ENV_KERNEL_NAME

        option = self.config.option
        if option.nbval_current_env:
            return CURRENT_ENV_KERNEL_NAME
        return option.nbval_kernel_name or notebook.nb.metadata.get("kernelspec", {}).get("name", "python")

    def _started(self, notebook):
        return self._start(self.kernel_name(notebook), cwd=str(notebook.fspath.dirname),
                           startup_timeout=self.config.option.nbval_kernel_startup_timeout)

    def kernel_for(self, kernel_name: str, cwd: str | None = None, startup_timeout: float = 60):
        kernel = None
        if self.waiting is not None:
            notebook, future = self.waiting
            try:
                ready = future.result()
            except Exception:  # noqa: BLE001 -- nbval starts one itself below, and reports its error if any
                ready = None
            self.waiting = None  # only now: interrupted above, the session's end still stops that kernel
            if ready is not None and notebook is self.current \
                    and (self.kernel_name(notebook), str(notebook.fspath.dirname)) == (kernel_name, cwd):
                kernel, self.reused = ready, self.reused + 1
            elif ready is not None:
                ready.stop()
        if kernel is None:
            kernel = self._start(kernel_name, cwd=cwd, startup_timeout=startup_timeout)
        following = self.notebooks.index(self.current) + 1 if self.current in self.notebooks else len(self.notebooks)
        if following < len(self.notebooks):
            self.waiting = (self.notebooks[following], self._thread.submit(self._started, self.notebooks[following]))
            self.started += 1
        return kernel

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.notebooks = list(dict.fromkeys(item.parent for item in items if _is_cell(item)))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if _is_cell(item) and item.parent is not self.current:
            self.current = item.parent  # nbval's setup of this notebook, next, asks kernel_for for its kernel

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        # After the setup (which may have just started the next kernel), before the cell runs: from the third
        # cell on, or the first selected one if `-k` left out the first two, nothing may run beside it.
        if _is_cell(item) and item.cell_num >= OVERLAP_CELLS and self.waiting is not None:  # type: ignore[attr-defined]
            from concurrent.futures import wait

            wait([self.waiting[1]])

    def pytest_sessionfinish(self) -> None:
        if self.waiting is not None:
            try:
                self.waiting[1].result().stop()
            except Exception:  # noqa: BLE001, S110 -- a kernel that failed to start has nothing to stop
                pass
            self.waiting = None
        self._thread.shutdown(wait=True)

    def pytest_unconfigure(self) -> None:
        import nbval.plugin

        nbval.plugin.RunningKernel = self._before

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.started:
            terminalreporter.write_line(f"kernels started ahead of their notebooks: {self.started}, "
                                        f"used: {self.reused}")


def params_of(item: pytest.Item) -> dict:
    """A parametrized test's parameters, by name ({} for any other test, or a notebook's cell)."""
    return getattr(getattr(item, "callspec", None), "params", {})


def exercise_notebook(item: pytest.Item) -> str | None:
    """The notebook (stem, "04_streams_cupy") whose exercises a test checks; None for any other test."""
    params = params_of(item)
    if hasattr(params.get("ex"), "notebook"):
        return params["ex"].notebook
    if "untouched_runs" in getattr(item, "fixturenames", ()) and isinstance(params.get("path"), Path):
        from tools.course import lecture_name  # exercises/NN_topic_exercises.ipynb checks NN_topic's exercises

        return lecture_name(params["path"].name).removesuffix(".ipynb")
    return None


def _deselect(config: pytest.Config, items: list[pytest.Item], leave_out) -> None:
    gone = [item for item in items if leave_out(item)]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = [item for item in items if not leave_out(item)]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a GPU, leave out the tests marked `host`: their outcome does not depend on the machine, and
    CI (no GPU) runs them on every commit; the GPU's time goes to what only a GPU can check.
    With --exercises-of, leave out the exercise tests of the other notebooks."""
    import utils

    only = config.getoption("--exercises-of")
    if only is not None:
        keep = set(filter(None, only.split(",")))
        _deselect(config, items, lambda item: exercise_notebook(item) not in (None, *keep))
    if not config.getoption("--host-tests") and utils.has_cuda():
        _deselect(config, items, lambda item: item.get_closest_marker("host") is not None)


def _is_cell(item: pytest.Item) -> bool:
    from nbval.plugin import IPyNbCell

    return isinstance(item, IPyNbCell)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    result = yield
    if _is_cell(item):
        problem = reference_not_shown(item.cell.source, item.test_outputs or [])  # type: ignore[attr-defined]
        if problem:
            raise AssertionError(problem)
    return result


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value  # a saved notebook keeps text as a list of lines


def _stdout(outputs: list) -> str:
    return "".join(_text(o.get("text", "")) for o in outputs
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _images(outputs: list) -> int:
    return sum("image/png" in o.get("data", {}) for o in outputs)


def reference_not_shown(source: str, outputs: list) -> str | None:
    """Why a skipped `%%requires` cell fails to show its reference outputs; None if it shows them
    (or ran, or has none to show).  They are shown as one block (utils.cells.show_reference): its
    plain text holds the label and what the reference run printed, its HTML the plots, its metadata
    the reference itself (JupyterLab saves the block over the reference: the next run reads it there)."""
    from utils import cells

    if not source.startswith("%%requires") or not _stdout(outputs).startswith("skipped (needs "):
        return None
    ref = cells.reference_index().get(cells.source_key(source))
    if ref is None:
        return None
    blocks = [o for o in outputs if o.get("output_type") == "display_data"
              and _text(o.get("data", {}).get("text/plain", "")).startswith("↳ reference output")]
    if not blocks or not _text(blocks[0]["data"]["text/plain"]).startswith(f"↳ {ref.label}"):
        return f"the skipped cell does not show its reference output under '↳ {ref.label}'"
    if len(blocks) > 1 or _text(blocks[0]["data"]["text/plain"]).count("↳ reference output") > 1:
        return "the skipped cell shows more than one reference block (a saved block read as the reference?)"
    data = blocks[0]["data"]
    if _stdout(ref.outputs) not in _text(data["text/plain"]):
        return "the skipped cell shows its reference label, but not the reference run's printed output"
    drawn = _text(data.get("text/html", "")).count('src="data:image/png;base64,')
    if drawn != _images(ref.outputs):
        return f"the skipped cell shows {drawn} plots; the reference run made {_images(ref.outputs)}"
    carried = cells.carried_reference((blocks[0].get("metadata") or {}).get(cells.REFERENCE_METADATA))
    if carried != ref:
        return (f"the skipped cell's block does not carry its reference in its metadata "
                f"({cells.REFERENCE_METADATA!r}): saved, the next run would show a block inside a block")
    return None


# ------------------------------------------------------------------------------------------------
# --stamp: keep the outputs of each notebook that passed, and stamp it
# ------------------------------------------------------------------------------------------------
def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


def outputs_of(messages: list[dict]) -> list[dict]:
    """A cell's outputs, in order, from the kernel's messages about its execution (as Jupyter builds them).

    nbval's own list merges all of a cell's printed text into one output, ahead of its plots; saved
    outputs keep text and plots in the order they came.  Consecutive text of one stream is one output.
    """
    parent = next((m["parent_header"].get("msg_id") for m in messages if m["msg_type"] == "execute_input"), None)
    outputs: list[dict] = []
    for message in messages:
        kind, content = message["msg_type"], message["content"]
        if message["parent_header"].get("msg_id") != parent:
            continue
        if kind == "clear_output":
            outputs.clear()
        elif kind == "stream" and outputs and outputs[-1]["output_type"] == "stream" \
                and outputs[-1]["name"] == content["name"]:
            outputs[-1]["text"] += content["text"]
        elif kind in ("stream", "display_data", "execute_result", "error"):
            outputs.append({"output_type": kind, **content})
    return outputs


@dataclass
class NotebookRun:
    """What nbval's run of one notebook produced, cell by cell."""

    path: Path
    code_hash: str  # of the code nbval read when it collected the notebook: what the outputs belong to
    started: float = field(default_factory=time.perf_counter)
    sampler: object = None
    outputs: dict[int, list] = field(default_factory=dict)
    timing: dict[int, dict[str, str]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)


class Stamper:
    """Hooks that collect each notebook's outputs from nbval and stamp the notebooks that passed."""

    def __init__(self, environment: dict, only: set[Path] | None = None) -> None:
        self.environment = environment
        self.only = only  # stamp these notebooks alone (None: every notebook that runs)
        self.runs: dict[str, NotebookRun] = {}  # by the notebook's node id, "notebooks/04_streams_cupy.ipynb"
        self.stamped: list[str] = []
        self.not_stamped: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item):
        path = Path(item.parent.path) if _is_cell(item) and item.parent is not None else None
        if path is not None and (self.only is None or path.resolve() in self.only) \
                and item.parent.nodeid not in self.runs:  # type: ignore[union-attr]
            from tools.fingerprint import code_hash
            from tools.reference import GpuMemorySampler

            # nbval gets the notebook's kernel in this setup (starts it, or takes the one KernelPool started
            # ahead): the run's clock starts here, and leaves out a kernel's start made ahead
            self.runs[item.parent.nodeid] = NotebookRun(path, code_hash(item.parent.nb),  # type: ignore[union-attr]
                                                        sampler=GpuMemorySampler())
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        if not _is_cell(item) or item.parent.nodeid not in self.runs:  # type: ignore[union-attr]
            return (yield)
        notebook, start, messages = item.parent, _now(), []
        read = notebook.get_kernel_message  # type: ignore[union-attr]

        def recording(*args, **kwargs):  # nbval reads the kernel's messages through this
            message = read(*args, **kwargs)
            messages.append(message)
            return message

        notebook.get_kernel_message = recording  # type: ignore[union-attr]
        try:
            return (yield)
        finally:
            del notebook.get_kernel_message  # type: ignore[union-attr]
            run = self.runs[notebook.nodeid]  # type: ignore[union-attr]
            run.timing[item.cell_num] = {"iopub.execute_input": start, "shell.execute_reply": _now()}  # type: ignore[attr-defined]
            run.outputs[item.cell_num] = outputs_of(messages)  # type: ignore[attr-defined]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        run = self.runs.get(report.nodeid.split("::")[0])
        if run is not None and report.failed:
            run.failed.append(f"{report.nodeid} ({report.when})")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None):
        result = yield
        run = self.runs.get(item.parent.nodeid) if _is_cell(item) else None  # type: ignore[union-attr]
        if run is not None and (nextitem is None or nextitem.parent is not item.parent):  # the kernel has stopped
            self.finish(run)
        return result

    def finish(self, run: NotebookRun) -> None:
        from tools import reference

        seconds = time.perf_counter() - run.started
        peak = run.sampler.stop()  # type: ignore[attr-defined]
        name = run.path.relative_to(reference.ROOT).as_posix()
        if run.failed:
            self.not_stamped.append(f"{name}: not stamped, failed: {run.failed}")
            return
        try:
            stamp = reference.save_run(run.path, run.code_hash, run.outputs, run.timing, seconds, peak,
                                       self.environment)
        except reference.NotSaved as error:
            self.not_stamped.append(f"{name}: not stamped, {error}")
            return
        self.stamped.append(f"{name}: stamped, {stamp['seconds']} s, peak {stamp['peak_gpu_memory_mib']} MiB")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminalreporter.section("reference runs (--stamp)")
        for line in self.stamped + self.not_stamped:
            terminalreporter.write_line(line)
        if not self.stamped and not self.not_stamped:
            terminalreporter.write_line("no notebook ran")
