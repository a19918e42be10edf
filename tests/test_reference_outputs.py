"""Where a GPU cell is skipped, the student sees what that cell produced in the reference run."""

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT, cpu_only
from tools.course import LECTURES, notebooks, read
from utils import cells

LABEL = "↳ reference output, from the course's run on "


def _code(source, outputs=()):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def _notebook(path, cells_, stamped=True):
    nb = nbformat.v4.new_notebook(cells=cells_)
    if stamped:
        nb.metadata["course"] = {"reference_run": {"gpu": "NVIDIA H200", "date": "2026-11-22"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


PRINTED = {"output_type": "stream", "name": "stdout", "text": "42 TFLOP/s\n"}
PLOT = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
        "metadata": {}}


@pytest.fixture
def course(tmp_path):
    """A small course: a lecture and a solution, stamped, and an exercise that repeats one cell."""
    _notebook(tmp_path / "notebooks/01_x.ipynb", [
        _code("%%requires cuda\nprint(rate)", [PRINTED]),
        _code("%%requires cuda\nplot()", [PLOT]),
        _code("%%requires cuda\nnothing_printed()"),
    ])
    _notebook(tmp_path / "solutions/01_x.ipynb", [
        _code("%%requires cuda\ncheck(answer)", [PRINTED]),  # also in the exercise: depends on the answer
        _code("%%requires cuda\ndef answer():\n    return 1", [PRINTED]),
    ])
    _notebook(tmp_path / "exercises/01_x.ipynb", [_code("%%requires cuda\ncheck(answer)")], stamped=False)
    _notebook(tmp_path / "notebooks/02_y.ipynb", [_code("%%requires cuda\nprint(y)", [PRINTED])], stamped=False)
    return tmp_path


def test_the_index_holds_what_a_student_may_see(course):
    index = cells.reference_index(course)
    key = cells.source_key
    outputs, label = index[key("%%requires cuda\nprint(rate)")]
    assert label == "reference output, from the course's run on NVIDIA H200 (2026-11-22, notebooks/01_x.ipynb):"
    assert [(o["name"], "".join(o["text"])) for o in outputs] == [("stdout", PRINTED["text"])]
    assert index[key("%%requires cuda\nplot()\n")][0][0]["data"]["image/png"] == PLOT["data"]["image/png"]
    assert key("%%requires cuda\ndef answer():\n    return 1") in index
    assert key("%%requires cuda\nnothing_printed()") not in index  # no output: nothing to show
    assert key("%%requires cuda\ncheck(answer)") not in index  # an exercise's check: its output is the student's
    assert key("%%requires cuda\nprint(y)") not in index  # not stamped: not a reference run
    assert key("%%requires cuda\nprint(rate) # edited") not in index


@cpu_only
def test_a_skipped_cell_becomes_its_skip_line_and_its_reference():
    lecture = read(LECTURES / "01_memory.ipynb")
    source = next(c.source for c in lecture.cells if c.cell_type == "code" and c.source.startswith("%%requires")
                  and c.outputs)
    lines = cells.transform(source.splitlines(keepends=True))
    assert lines[0].startswith("print('skipped (needs cuda): ")
    assert lines[1] == f"__import__('utils.cells').cells.show_reference({cells.source_key(source)!r});\n"


def _stdout(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def _images(cell):
    return sum("image/png" in o.get("data", {}) for o in cell.outputs)


@cpu_only
@pytest.mark.parametrize("path", notebooks(LECTURES), ids=lambda p: p.name)
def test_every_skipped_lecture_cell_shows_its_reference_output(path):
    """Run the lecture here (no GPU), as a student would: each skipped cell shows the stored outputs."""
    committed = read(path)
    executed = read(path)
    NotebookClient(executed, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    index = cells.reference_index(ROOT)
    checked = 0
    for before, after in zip(committed.cells, executed.cells):
        if before.cell_type != "code" or not before.source.startswith("%%requires"):
            continue
        if cells.source_key(before.source) not in index:
            continue
        text = _stdout(after)
        assert text.startswith("skipped (needs "), text[:200]
        assert LABEL in text, f"no reference output shown for:\n{before.source[:200]}"
        assert _stdout(before) in text, f"the reference run's printed output is missing for:\n{before.source[:200]}"
        assert _images(after) == _images(before), f"the reference run's plots are missing for:\n{before.source[:200]}"
        checked += 1
    assert checked > 0
