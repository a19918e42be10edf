"""utils.run_python / run_process: code in a fresh process, with the environment it is given."""

import pytest

import utils


def test_run_python_returns_what_the_child_printed():
    assert utils.run_python("import sys; print(sys.argv[1:], 6 * 7)", "a", "b") == "['a', 'b'] 42\n"


def test_the_child_sees_the_variables_set_and_not_those_unset(monkeypatch):
    monkeypatch.setenv("COURSE_TEST_KEEP", "kept")
    monkeypatch.setenv("COURSE_TEST_DROP", "dropped")
    code = "import os; print(os.environ.get('COURSE_TEST_KEEP'), os.environ.get('COURSE_TEST_DROP'), os.environ['NEW'])"
    assert utils.run_python(code, env={"NEW": "new"}, unset=["COURSE_TEST_DROP"]) == "kept None new\n"


def test_a_failing_child_raises_with_the_end_of_its_stderr():
    with pytest.raises(utils.ChildFailed, match=r"status 1:(.|\n)*ZeroDivisionError: division by zero"):
        utils.run_python("print('before'); 1 / 0")


def test_run_process_reports_the_failure_and_its_traceback():
    done = utils.run_process("import sys\nprint('out')\ndef f():\n    raise ValueError('bad index')\nf()")
    assert done.returncode == 1 and done.stdout == "out\n"
    assert done.traceback[0] == "Traceback (most recent call last):"
    assert done.traceback[-1] == "ValueError: bad index"
    assert any("line 4, in f" in line for line in done.traceback)


def test_no_traceback_when_the_child_succeeds():
    assert utils.run_process("print(1)").traceback == []
