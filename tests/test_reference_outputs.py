"""Where a GPU cell is skipped, the student sees what that cell produced in the reference run."""

import nbformat
import pytest

from conftest import ROOT, cpu_only
from tools.course import LECTURES, read
from tools.pytest_plugin import reference_not_shown
from utils import cells

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests


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


def _a_lecture_cell_with_text_and_a_plot():
    index = cells.reference_index(ROOT)
    for cell in read(LECTURES / "02_benchmarking.ipynb").cells:
        found = index.get(cells.source_key(cell.source)) if cell.cell_type == "code" else None
        if found and cell.source.startswith("%%requires") and any("image/png" in o.get("data", {}) for o in found[0]) \
                and any(o.get("name") == "stdout" for o in found[0]):
            return cell.source, found
    raise AssertionError("notebook 02 has no skipped cell with printed text and a plot to test with")


def test_nbvals_run_checks_that_a_skipped_cell_shows_its_reference():
    """tools/pytest_plugin.py checks each cell nbval runs: skipped, it must show the reference run's text and plots."""
    source, (saved, label) = _a_lecture_cell_with_text_and_a_plot()
    printed = "".join("".join(o["text"]) for o in saved if o.get("name") == "stdout")
    plots = [o for o in saved if "image/png" in o.get("data", {})]

    def shown(text, images):
        return [{"output_type": "stream", "name": "stdout", "text": text}, *images]

    skip = "skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build\n"
    assert reference_not_shown(source, shown(f"{skip}↳ {label}\n{printed}", plots)) is None
    assert "under '↳ reference output" in reference_not_shown(source, shown(skip, plots))
    assert "not the reference run's printed output" in reference_not_shown(source, shown(f"{skip}↳ {label}\n", plots))
    assert "shows 0 plots" in reference_not_shown(source, shown(f"{skip}↳ {label}\n{printed}", []))
    assert reference_not_shown(source, shown("it ran here\n", [])) is None  # on a GPU: nothing to check
    assert reference_not_shown(source + "\n# edited", shown(skip, [])) is None  # no reference for edited code
