"""Make the repository's root importable (utils, tools) for every test."""

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import utils

# Claims are strict here and in every notebook nbval runs: tools/pytest_plugin.py (loaded by pyproject.toml).

gpu = pytest.mark.skipif(not utils.has_cuda(), reason=f"needs a CUDA GPU: {utils.cuda_status().reason}")
host = pytest.mark.host  # the same on every machine: CI runs it; on a GPU only with --host-tests
cpu_only = pytest.mark.skipif(utils.has_cuda(), reason="checks the behaviour on a machine without a GPU")


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
            source = compile(cell.source, f"{path.parent.name}/{path.name}, cell {n}", "exec")
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
