"""The setup cell on Colab: it clones the course's branch, or stops with one line that says what to do."""

import shutil
import subprocess

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from conftest import ROOT
from tools.course import SETTINGS, setup_cell

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

FAKE_COLAB = "import sys, types\nsys.modules['google.colab'] = types.ModuleType('google.colab')"
AFTER = "print(Path(utils.__file__).parent.parent.name, utils.has_cuda() in (True, False))"


def _redirect_clone(monkeypatch, target):
    """Make `git clone <the course's URL>` clone `target` instead, through git's url.<base>.insteadOf."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{target}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", SETTINGS["repository"])


def _run_on_colab(workdir):
    """The fake google.colab module, the setup cell, then a cell that uses utils, run in `workdir`."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (FAKE_COLAB, setup_cell(), AFTER)])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


@pytest.fixture
def published(tmp_path):
    """A git repository holding the course's code on the configured branch: what GitHub would serve."""
    repo = tmp_path / "published"
    for folder in ("utils", "tools"):
        shutil.copytree(ROOT / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=course", "-c", "user.email=course@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", SETTINGS["branch"], str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "."], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "the course"], check=True)
    return repo


def test_a_clone_that_works_gives_the_course_utils(tmp_path, published, monkeypatch):
    content = tmp_path / "content"  # Colab's working directory
    (content / "utils").mkdir(parents=True)  # an unrelated utils/ lying there is not taken
    (content / "utils" / "__init__.py").write_text("raise ImportError('not the course')")
    _redirect_clone(monkeypatch, published)
    nb = _run_on_colab(content)
    name = SETTINGS["repository"].rstrip("/").split("/")[-1]
    assert (content / name / "tools" / "course.py").is_file()
    assert nb.cells[2].outputs[0].text == f"{name} True\n"


def test_a_clone_that_fails_stops_with_one_line(tmp_path, monkeypatch):
    content = tmp_path / "content"
    (content / "utils").mkdir(parents=True)
    (content / "utils" / "__init__.py").write_text("")
    _redirect_clone(monkeypatch, tmp_path / "no-such-repository")
    with pytest.raises(CellExecutionError) as err:
        _run_on_colab(content)
    assert err.value.ename == "CourseSetupError"
    assert f"clone {SETTINGS['repository']} (branch {SETTINGS['branch']})" in err.value.evalue
    assert "Restart session" in err.value.evalue
    # what the student sees: the one line, not a traceback
    assert "Traceback" not in str(err.value) and "CourseSetupError: the course's files are not here" in str(err.value)


def test_the_clone_takes_the_configured_branch():
    assert "!git clone --quiet --depth 1 --branch {BRANCH} {REPOSITORY}" in setup_cell()
    assert f'REPOSITORY, BRANCH = "{SETTINGS["repository"]}", "{SETTINGS["branch"]}"' in setup_cell()
