"""Reference outputs: every lecture and solution is stamped by a run on the reference GPU, and current."""

import shutil

import nbformat
import pytest

from tools import reference
from tools.course import notebooks, read


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stamp_is_current(path):
    assert reference.problems(path) == []


@pytest.fixture
def stamped_copy(tmp_path):
    """A copy of a stamped notebook, to break."""
    source = next(p for p in notebooks() if reference.stamp_of(read(p)))
    path = tmp_path / source.name
    shutil.copy(source, path)
    return path


def edit(path, change):
    nb = read(path)
    change(nb)
    nbformat.write(nb, path)


def test_changed_code_makes_the_stamp_stale(stamped_copy):
    assert reference.problems(stamped_copy) == []

    def change_code(nb):
        cell = [c for c in nb.cells if c.cell_type == "code"][-1]
        cell.source += "\nprint('changed')"

    edit(stamped_copy, change_code)
    assert reference.problems(stamped_copy) == ["code changed after its reference run: execute it again on the reference GPU"]


def test_changed_prose_keeps_the_stamp(stamped_copy):
    edit(stamped_copy, lambda nb: nb.cells.append(nbformat.v4.new_markdown_cell("More prose.")))
    assert reference.problems(stamped_copy) == []


def test_missing_stamp(stamped_copy):
    edit(stamped_copy, lambda nb: nb.metadata.pop("course"))
    assert "never executed on the reference GPU" in reference.problems(stamped_copy)[0]


@pytest.mark.parametrize("field, value, complaint", [
    ("gpu", "Tesla T4", "not on the reference GPU"),
    ("seconds", 1000.0, "the budget is 90 s"),
    ("peak_gpu_memory_mib", 20000, "the budget is 12 GiB"),
])
def test_stamp_outside_the_course_limits(stamped_copy, field, value, complaint):
    edit(stamped_copy, lambda nb: nb.metadata["course"]["reference_run"].update({field: value}))
    assert any(complaint in p for p in reference.problems(stamped_copy))
