"""tools.lint reads what plain ruff skips: cells behind `%%requires`, and scripts kept in strings."""

import subprocess
import sys

import nbformat
import pytest

from tools import lint
from tools.course import ROOT

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

pytest.importorskip("ruff", reason="no ruff here (the GPU machine has only what the notebooks need)")

CELLS = [
    "import utils",
    "%%requires cuda\nx = torch_that_nobody_defined.ones(3)",  # a planted undefined name
    "%%requires cuda\nSCRIPT = '''\nimport torch\nprint(undefined_in_the_script)\n'''\nutils.run_python(SCRIPT)",
    "utils.run_process(f'print({1 + 1}, also_undefined)')",
]


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "09_planted.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A title"),
                                         *(nbformat.v4.new_code_cell(c) for c in CELLS)])
    nbformat.write(nb, path)
    return path


def test_plain_ruff_skips_a_requires_cell(notebook):
    """Why tools.lint exists: ruff, as it stands, reports nothing in a cell that starts with a cell magic."""
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821", str(notebook)],
                          capture_output=True, text=True, check=False)
    assert "torch_that_nobody_defined" not in done.stdout


def test_an_undefined_name_in_a_requires_cell_is_found_in_its_cell(notebook):
    found = lint.lint_notebook(notebook)
    assert any(f.startswith(f"{notebook}:cell 3:2:") and "F821" in f and "torch_that_nobody_defined" in f
               for f in found), found


def test_scripts_kept_in_strings_are_linted(notebook):
    found = lint.lint_scripts(lint.notebook_trees(notebook))
    assert any(f.startswith(f"{notebook}:cell 4, the script SCRIPT:3:") and "undefined_in_the_script" in f
               for f in found), found
    assert any("the script line 1" in f and "also_undefined" in f for f in found), found  # an f-string, directly


def test_a_planted_name_makes_the_tool_fail(notebook, monkeypatch, capsys):
    """`python -m tools.lint` itself (its exit status), on a course of one notebook; CI runs it on the real one."""
    monkeypatch.setattr(lint, "notebooks", lambda *folders: [notebook] if not folders else [])
    monkeypatch.setattr(lint, "lint_files", list)
    monkeypatch.setattr(lint, "file_trees", list)
    monkeypatch.setattr(lint, "mypy", lambda: 0)
    assert lint.main([]) == 1
    assert "torch_that_nobody_defined" in capsys.readouterr().out


def test_ruff_check_as_a_contributor_types_it_finds_nothing():
    """`ruff check .` from the root, with the repository's settings (pyproject.toml), agrees with tools.lint: it
    reads the Python files with the same rules and leaves the notebooks, whose `%%requires` cells it would skip
    (and so misread the imports cell's imports as unused), to tools.lint."""
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--show-files", "."],
                            capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert ".ipynb" not in listed and "claims.py" in listed, listed  # the Python files are read


def test_tools_lint_still_reads_a_notebook_that_plain_ruff_leaves_to_it(notebook, monkeypatch):
    """The notebooks are excluded from `ruff check .` (pyproject.toml); tools.lint hands each to ruff on stdin,
    named by its path, where that exclusion must not apply (it would under `force-exclude`)."""
    name = "notebooks/09_planted.ipynb"  # where a lecture lies: a name the exclusion matches
    monkeypatch.setattr(lint, "shown_path", lambda path: name)
    found = lint.lint_notebook(notebook)
    assert any(f.startswith(f"{name}:cell 3:2:") and "torch_that_nobody_defined" in f for f in found), found
