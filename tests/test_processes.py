"""utils.run_python / run_process: code in a fresh process, with the environment it is given."""

import pytest

import utils

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests


def test_run_python_returns_what_the_child_printed():
    assert utils.run_python("import sys; print(sys.argv[1:], 6 * 7)", "a", "b") == "['a', 'b'] 42\n"


def test_the_child_sees_the_variables_set_and_not_those_unset(monkeypatch):
    monkeypatch.setenv("COURSE_TEST_KEEP", "kept")
    monkeypatch.setenv("COURSE_TEST_DROP", "dropped")
    code = "import os; print(os.environ.get('COURSE_TEST_KEEP'), os.environ.get('COURSE_TEST_DROP'), os.environ['NEW'])"
    assert utils.run_python(code, env={"NEW": "new"}, unset=["COURSE_TEST_DROP"]) == "kept None new\n"


def test_a_failing_child_raises_with_the_end_of_its_stderr():
    with pytest.raises(utils.ChildFailed, match=r"status 1:(.|\n)*ZeroDivisionError: division by zero"):
        utils.run_python("print('before'); x = 1 / 0")


def test_run_process_reports_the_failure_and_its_traceback():
    done = utils.run_process("print('out')\ndef f():\n    raise ValueError('bad index')\nf()")
    assert done.returncode == 1 and done.stdout == "out\n"
    assert done.traceback[0] == "Traceback (most recent call last):"
    assert done.traceback[-1] == "ValueError: bad index"
    assert any("line 3, in f" in line for line in done.traceback)


def test_no_traceback_when_the_child_succeeds():
    assert utils.run_process("print(1)").traceback == []


def test_prefix_runs_the_child_under_another_command(tmp_path):
    """prefix= is how notebook 05 runs code under compute-sanitizer; here a tiny wrapper stands in."""
    wrapper = tmp_path / "wrapper"
    wrapper.write_text('#!/bin/sh\necho "wrapped: $#"\nexec "$@"\n')
    wrapper.chmod(0o755)
    done = utils.run_process("print('child')", prefix=[str(wrapper)])
    assert done.returncode == 0 and done.stdout == "wrapped: 3\nchild\n"  # python, -c, code


def _fake_tool(folder, body):
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / "compute-sanitizer"
    tool.write_text("#!/bin/sh\n" + body)
    tool.chmod(0o755)
    return str(tool)


def test_compute_sanitizer_is_found_on_path_or_in_a_toolkit(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    in_toolkit = _fake_tool(tmp_path / "cuda" / "bin", "exit 0\n")
    assert utils.compute_sanitizer() == in_toolkit
    on_path = _fake_tool(tmp_path / "empty", "exit 0\n")
    assert utils.compute_sanitizer() == on_path  # PATH first


@pytest.mark.parametrize("body, ok, reason", [
    ('echo "========= ERROR SUMMARY: 0 errors"\n', True, "compute-sanitizer at"),
    ('echo "========= Error: Device not supported"; exit 1\n', False, "exit status 1: ========= Error: Device not"),
])
def test_sanitizer_status_needs_a_clean_run_not_just_the_file(tmp_path, monkeypatch, body, ok, reason):
    from utils import device

    monkeypatch.setattr(device, "has_cuda", lambda: True)
    monkeypatch.setattr(device, "shared_through_mps", lambda: False)  # also under tools.smaller_gpu
    monkeypatch.setattr(device, "compute_sanitizer", lambda: _fake_tool(tmp_path, body))
    device.sanitizer_status.cache_clear()
    try:
        status = device.sanitizer_status()
    finally:
        device.sanitizer_status.cache_clear()
    assert status.ok is ok and reason in status.reason


def test_sanitizer_status_does_not_run_the_tool_on_a_gpu_shared_through_mps(tmp_path, monkeypatch):
    from utils import device

    ran = tmp_path / "ran"
    monkeypatch.setattr(device, "has_cuda", lambda: True)
    monkeypatch.setattr(device, "shared_through_mps", lambda: True)
    monkeypatch.setattr(device, "compute_sanitizer",
                        lambda: _fake_tool(tmp_path, f'touch {ran}; echo "========= ERROR SUMMARY: 0 errors"\n'))
    device.sanitizer_status.cache_clear()
    try:
        status = device.sanitizer_status()
    finally:
        device.sanitizer_status.cache_clear()
    assert not status.ok and "shared through NVIDIA MPS" in status.reason
    assert not ran.exists()  # under MPS even the tiny probe run is not risked


def test_without_a_cuda_driver_nobody_knows_about_mps(monkeypatch):
    from utils import device

    def no_library(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(device.ctypes, "CDLL", no_library)
    assert device.shared_through_mps() is None


def test_started_processes_run_side_by_side_and_give_their_results():
    import time

    started = time.perf_counter()
    later = [utils.start_python("import time, sys; time.sleep(2); print(sys.argv[1])", str(i)) for i in range(2)]
    assert [f.result().strip() for f in later] == ["0", "1"]
    assert time.perf_counter() - started < 3.8  # two two-second sleeps (two workers at least), not one after the other
    assert utils.start_process("raise SystemExit(3)").result().returncode == 3


def test_a_started_python_that_fails_raises_when_its_result_is_asked():
    later = utils.start_python("import sys; sys.exit('broken')")
    with pytest.raises(utils.ChildFailed, match="broken"):
        later.result()
