"""Reference outputs: every lecture and solution is stamped by a run on the reference GPU, and current."""

import shutil

import nbformat
import pytest

from tools import reference
from tools.course import UTILS, code_hash, notebooks, read, utils_hash


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stamp_is_current(path):
    assert reference.problems(path) == []


@pytest.fixture
def stamped_copy(tmp_path):
    """A copy of a stamped notebook, made current (hashes of its code and of utils/ as they are now), to break."""
    source = next(p for p in notebooks() if reference.stamp_of(read(p)))
    path = tmp_path / source.name
    shutil.copy(source, path)
    nb = read(path)
    nb.metadata["course"]["reference_run"].update(code_hash=code_hash(nb), utils_hash=utils_hash(notebook=path))
    nbformat.write(nb, path)
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
    ("gpu", "Tesla T4", "not on a reference GPU (H100 or H200)"),
    ("seconds", 1000.0, "the budget is 90 s"),
    ("peak_gpu_memory_mib", 20000, "the budget is 12 GiB"),
])
def test_stamp_outside_the_course_limits(stamped_copy, field, value, complaint):
    edit(stamped_copy, lambda nb: nb.metadata["course"]["reference_run"].update({field: value}))
    assert any(complaint in p for p in reference.problems(stamped_copy))


def _others_checks(number: str) -> set[str]:
    """utils/ files that hold the exercise checks (and wrong answers) of notebooks other than `number`."""
    return {p.relative_to(UTILS).as_posix() for p in UTILS.glob("exercises/**/nb*.py") if p.stem != f"nb{number}"}


@pytest.mark.parametrize("changed", sorted(p.relative_to(UTILS).as_posix() for p in UTILS.rglob("*.py")))
def test_changing_a_file_in_utils_makes_the_stamps_that_use_it_stale(stamped_copy, tmp_path, changed):
    """The outputs were made by the notebook's code and by utils/: a change to either needs a new run,
    except a change to another notebook's exercise checks, which never run in this one."""
    utils_copy = tmp_path / "utils"
    shutil.copytree(UTILS, utils_copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert reference.problems(stamped_copy, utils_copy) == []
    path = utils_copy / changed
    path.write_text(path.read_text() + "\n# a comment is a change too\n")
    if changed in _others_checks(stamped_copy.name[:2]):
        assert reference.problems(stamped_copy, utils_copy) == []
    else:
        assert reference.problems(stamped_copy, utils_copy) == [
            "utils/ changed after its reference run: execute it again on the reference GPU"]


def test_a_notebooks_own_checks_are_part_of_its_stamp(stamped_copy, tmp_path):
    own = UTILS / "exercises" / f"nb{stamped_copy.name[:2]}.py"
    assert own.is_file() and own.relative_to(UTILS).as_posix() not in _others_checks(stamped_copy.name[:2])


def test_check_fails_when_utils_changed(tmp_path, monkeypatch, capsys):
    """`python -m tools.reference check` itself (its exit status), with utils/ changed."""
    utils_copy = tmp_path / "utils"
    shutil.copytree(UTILS, utils_copy, ignore=shutil.ignore_patterns("__pycache__"))
    (utils_copy / "memory.py").write_text((utils_copy / "memory.py").read_text().replace("GiB", "GB"))
    monkeypatch.setattr(reference, "UTILS", utils_copy)
    assert reference.main(["check"]) == 1
    assert "utils/ changed after its reference run" in capsys.readouterr().out
