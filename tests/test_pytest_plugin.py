"""The course's pytest plugin gives a run two workers (pytest-xdist) only where that is safe: no GPU;
a run on one process starts each notebook's kernel ahead, and each notebook still gets its own."""

import os
import re

import nbformat
import pytest

from conftest import INNER
from tools import pytest_plugin

pytestmark = pytest.mark.host

TWO_CORES = len(os.sched_getaffinity(0)) >= 2


@pytest.mark.parametrize("args, driver, wanted", [
    ([], False, TWO_CORES),
    (["tests", "-q", "-k", "timing"], False, TWO_CORES),
    ([], True, False),  # a GPU machine: timings must not share the GPU or the host
    (["-n", "0"], False, False),
    (["-n4"], False, False),
    (["--dist", "load"], False, False),
    (["-p", "no:xdist"], False, False),
    (["--pdb"], False, False),
    (["--collect-only"], False, False),
])
def test_two_workers_where_no_gpu_and_nothing_else_asked(monkeypatch, args, driver, wanted):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert pytest_plugin._workers_wanted(args, driver=driver) is wanted


def test_a_worker_of_xdist_keeps_its_options(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert pytest_plugin._workers_wanted([], driver=False) is False


def test_the_options_come_first_and_the_rest_is_kept(monkeypatch):
    monkeypatch.setattr(pytest_plugin, "_workers_wanted", lambda args: True)
    args = ["tests", "-q"]
    pytest_plugin.pytest_load_initial_conftests(None, None, args)
    assert args == ["-n", "2", "--dist", "loadscope", "tests", "-q"]


def test_the_kernel_pool_stays_out_of_a_run_on_workers(monkeypatch):
    config = pytest.Config.__new__(pytest.Config)  # only its options are read
    config.option = type("Options", (), {"numprocesses": 2})()
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert pytest_plugin._has_workers(config)  # the controller
    config.option.numprocesses = 0
    assert not pytest_plugin._has_workers(config)  # -n 0: one process
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert pytest_plugin._has_workers(config)  # a worker runs some notebooks, not the next in the list


def _notebook(path, *cells):
    path.parent.mkdir(exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_each_notebook_gets_a_kernel_of_its_own_started_ahead_in_its_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the session below runs on one process
    fresh = ("import os, pathlib\nassert 'x' not in globals(), 'a kernel that ran another notebook'\n"
             "assert len(In) == 2, f'a kernel that ran cells before: {In}'")
    here = "assert pathlib.Path(os.getcwd()).name == {!r}, os.getcwd()"
    _notebook(tmp_path / "a" / "1.ipynb", fresh, here.format("a"), "x = 1", "assert x == 1")
    _notebook(tmp_path / "b" / "2.ipynb", fresh, here.format("b"), "x = 2")
    _notebook(tmp_path / "b" / "3.ipynb", fresh, here.format("b"))
    status = pytest.main(["-p", "tools.pytest_plugin", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *INNER,
                          "--nbval-lax", "--nbval-current-env", "--rootdir", str(tmp_path),
                          str(tmp_path / "a"), str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.search(r"kernels started ahead of their notebooks: 2, used: 2", out), out


class _Recorder:
    """Whether the kernel started ahead had finished starting when each cell began to run."""

    def __init__(self):
        self.seen = {}

    @pytest.hookimpl(trylast=True)  # after KernelPool's own pytest_runtest_call
    def pytest_runtest_call(self, item):
        pool = item.config.pluginmanager.get_plugin(pytest_plugin.KernelPool.NAME)
        self.seen[item.nodeid] = pool.waiting is None or pool.waiting[1].done()


def test_no_cell_from_the_third_on_runs_beside_a_kernel_start(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    for name in ("a", "b", "c"):
        _notebook(tmp_path / f"{name}.ipynb", "x = 0", "y = 1", "z = 2", "import time\ntime.sleep(0.01)")
    recorder = _Recorder()
    status = pytest.main(["-p", "tools.pytest_plugin", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *INNER,
                          "--nbval-lax", "--nbval-current-env", "--rootdir", str(tmp_path), "-k", "Cell and 3",
                          str(tmp_path)], plugins=[recorder])
    assert status == 0
    assert len(recorder.seen) == 3 and all(recorder.seen.values()), recorder.seen  # each notebook's Cell 3 alone


def test_the_exercise_modules_are_split_by_notebook_for_xdist():
    unit = pytest_plugin.work_unit
    assert unit("tests/test_exercises.py::test_exercise[08_profiling:check_fast_loss: wrong: x]") == \
        "tests/test_exercises.py::08_profiling"
    assert unit("tests/test_exercises_more.py::test_x[09_kernels:check_softmax_rows: y]") == \
        "tests/test_exercises_more.py::09_kernels"
    # 05's stay with the rest of the module (they share its untimed jobs), as do tests of no notebook
    assert unit("tests/test_exercises.py::test_exercise[05_debugging:check_find_failing_cell: wrong: x]") == \
        "tests/test_exercises.py"
    assert unit("tests/test_exercises.py::test_exercises_are_up_to_date") == "tests/test_exercises.py"
    assert unit("tests/test_checks.py::test_x[00_setup:a]") == "tests/test_checks.py"  # other modules whole
    assert unit("notebooks/06_precision.ipynb::Cell 3") == "notebooks/06_precision.ipynb"


def test_xdist_hands_out_the_longest_units_first():
    queue = pytest_plugin._FirstAhead()
    for unit in ("tests/test_checks.py", "tests/test_exercises.py::08_profiling", "tests/test_browser.py",
                 "notebooks/00_setup.ipynb", "tests/test_exercises.py", "tests/test_browser_live.py"):  # by tests
        queue[unit] = {}
    assert list(queue) == [*pytest_plugin.FIRST, "tests/test_checks.py", "notebooks/00_setup.ipynb"]
    assert queue.popitem(last=False)[0] == "tests/test_browser_live.py"
