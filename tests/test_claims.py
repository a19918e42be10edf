"""utils.claim: ✓ when a claim holds; when it does not, strict mode raises and a student's run goes on."""

import numpy as np
import pytest

import utils
from utils.claims import STRICT_VARIABLE, ClaimFailed, claim

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests


@pytest.fixture
def student(monkeypatch):
    """A student's notebook: no strict mode."""
    monkeypatch.delenv(STRICT_VARIABLE, raising=False)


@pytest.fixture
def strict(monkeypatch):
    """The tests' and the reference run's mode."""
    monkeypatch.setenv(STRICT_VARIABLE, "1")


def test_the_tests_run_in_strict_mode():
    assert utils.claims.strict(), "conftest.py switches strict mode on, for the tests and the notebooks nbval runs"


@pytest.mark.parametrize("mode", ["student", "strict"])
def test_a_claim_that_holds_prints_a_tick(mode, request, capsys):
    request.getfixturevalue(mode)
    two, three = 2, 3
    assert claim(two < three, "two is less than three", a=two, b=three) is None  # no `True` under a cell
    assert capsys.readouterr().out == "✓ two is less than three\n"


def test_a_false_claim_raises_in_strict_mode(strict, capsys):
    with pytest.raises(ClaimFailed) as err:
        claim(5.0 < 0.2 * 10.0, "no sync times the launch", why="a slow host", no_sync="5.00 ms", synced=10.0)
    message = str(err.value)
    assert message.splitlines()[0] == "✗ no sync times the launch"
    assert "measured: no_sync = 5.00 ms, synced = 10.0" in message
    assert "why it can differ: measured on " in message and message.endswith("; a slow host")
    assert capsys.readouterr().out == ""  # the message travels in the exception, once
    assert err.value._render_traceback_() == message.splitlines()  # IPython shows it without a traceback


def test_a_false_claim_prints_a_cross_and_goes_on_for_a_student(student, capsys):
    claim(np.float64(5.0) < 1.0, "five is less than one", five=np.float32(5.0), one=1)
    out = capsys.readouterr().out
    assert out.startswith("✗ five is less than one\n")
    assert "measured: five = 5.00, one = 1" in out


def test_numpy_booleans_are_claims_too(strict, capsys):
    claim(np.array([1.0, 2.0]).mean() > 1.0, "the mean is above one")
    with pytest.raises(ClaimFailed):
        claim(np.bool_(False), "a NumPy False is false")


@pytest.mark.parametrize("mode", ["student", "strict"])
def test_a_claim_that_does_not_apply_is_not_checked(mode, request, capsys):
    request.getfixturevalue(mode)
    claim(False, "TF32 changes the result", applies=False, not_applicable="needs compute capability 8.0")
    assert capsys.readouterr().out == "– not checked here: TF32 changes the result (needs compute capability 8.0)\n"


def test_only_the_variable_set_to_1_is_strict(monkeypatch):
    for value, expected in (("1", True), ("0", False), ("", False), ("yes", False)):
        monkeypatch.setenv(STRICT_VARIABLE, value)
        assert utils.claims.strict() is expected


def test_in_a_notebook_strict_mode_stops_at_the_claim_and_a_student_goes_on():
    """One kernel, started as nbval starts its kernels: it inherits strict mode from the tests, so a
    claim that does not hold is an error (shown as its message alone); without strict mode, as for a
    student, the claim prints its cross and the next cell runs."""
    import nbformat
    from nbclient import NotebookClient

    from conftest import ROOT

    cell = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        cell(f"import os, sys; sys.path.insert(0, {str(ROOT)!r}); import utils\nprint(utils.claims.strict())"),
        cell("utils.claim(3 < 2, 'three is less than two', three=3)"),
        cell(f"del os.environ[{STRICT_VARIABLE!r}]\nutils.claim(3 < 2, 'three is less than two', three=3)"),
        cell("print('Run All went on')"),
    ])
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    assert nb.cells[0].outputs[0].text == "True\n"
    (error,) = nb.cells[1].outputs
    assert error.output_type == "error" and error.ename == "ClaimFailed"
    assert error.traceback[0] == "✗ three is less than two" and error.traceback[1] == "  measured: three = 3"
    assert nb.cells[2].outputs[0].text.startswith("✗ three is less than two\n  measured: three = 3\n")
    assert [out.output_type for out in nb.cells[2].outputs] == ["stream"]  # no `False` under the cell
    assert nb.cells[3].outputs[0].text == "Run All went on\n"
