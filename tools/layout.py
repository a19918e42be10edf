"""Where the course's files are, and how its tools read and write a notebook: what every tool rests on.

tools/course.py (sync, slides), tools/minutes.py and tools/fingerprint.py all need these; they live here, below
all three, so that each of those imports in one direction (tests/test_imports.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["course"]
LECTURES, SOLUTIONS, EXERCISES = ROOT / "notebooks", ROOT / "solutions", ROOT / "exercises"
INSTRUCTORS = ROOT / "instructors"  # a guide per lecture: NN_topic.md
# A lecture notebooks/NN_topic.ipynb, its solutions solutions/NN_topic.ipynb (the stamps' paths: never renamed),
# its exercises exercises/NN_topic_exercises.ipynb: JupyterLab names a tab by its file, so that the lecture and
# its exercises, open side by side, are told apart at a glance (issue 37).
EXERCISES_SUFFIX = "_exercises"


def exercises_name(name: str) -> str:
    """The file name of the exercises of a lecture or solutions notebook named `name` (NN_topic.ipynb)."""
    return f"{name.removesuffix('.ipynb')}{EXERCISES_SUFFIX}.ipynb"


def lecture_name(name: str) -> str:
    """The lecture's (and solutions') file name, NN_topic.ipynb, of any of its three notebooks."""
    return f"{name.removesuffix('.ipynb').removesuffix(EXERCISES_SUFFIX)}.ipynb"


def notebooks(*folders: Path) -> list[Path]:
    """The .ipynb files in the given folders (default: lectures and solutions), sorted."""
    return sorted(p for folder in (folders or (LECTURES, SOLUTIONS)) for p in folder.glob("*.ipynb"))


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    nbformat.write(nb, path)
