"""The course's pytest plugin gives a run two workers (pytest-xdist) only where that is safe: no GPU."""

import os

import pytest

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
