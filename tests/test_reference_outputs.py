"""Where a GPU cell is skipped, the student sees what that cell produced in the reference run."""

import re

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

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
    ref = index[key("%%requires cuda\nprint(rate)")]
    assert ref.label == "reference output, from the course's run on NVIDIA H200 (2026-11-22, notebooks/01_x.ipynb):"
    assert ref.versions == ""  # the small course's stamp names none; a real one does (below)
    assert [(o["name"], "".join(o["text"])) for o in ref.outputs] == [("stdout", PRINTED["text"])]
    assert index[key("%%requires cuda\nplot()\n")].outputs[0]["data"]["image/png"] == PLOT["data"]["image/png"]
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
        if found and cell.source.startswith("%%requires") \
                and any("image/png" in o.get("data", {}) for o in found.outputs) \
                and any(o.get("name") == "stdout" for o in found.outputs):
            return cell.source, found
    raise AssertionError("notebook 02 has no skipped cell with printed text and a plot to test with")


# ---------------------------------------------------------------- how a reference is shown
def _printed_before_issue_24(ref):
    """What show_reference printed before the reference became a marked block: the label line, then
    each stream's text (stdout and stderr, in order); plots were separate outputs."""
    return f"↳ {ref.label}\n" + "".join("".join(o["text"]) for o in ref.outputs if o["output_type"] == "stream")


def _pres(block):
    """(style, text) of each <pre> in an HTML block."""
    return re.findall(r'<pre style="([^"]*)">(.*?)</pre>', block, re.DOTALL)


def test_a_real_reference_is_one_marked_block_whose_plain_text_is_the_old_text():
    source, ref = _a_lecture_cell_with_text_and_a_plot()
    InteractiveShell.instance()  # displays go to a kernel's display publisher, which capture_output replaces
    with capture_output() as shown:
        assert cells.show_reference(cells.source_key(source)) is True
    assert shown.stdout == "" and shown.stderr == ""  # nothing that looks like this machine's output
    (block,) = shown.outputs  # one display, not a stream per output
    assert block.data["text/plain"] == _printed_before_issue_24(ref)
    html = block.data["text/html"]
    assert html.startswith('<div class="course-reference-output" style="border: 2px dashed')
    assert "<b>Reference output</b>, not run on this machine: from the course&#x27;s run on " in html
    stamp = read(LECTURES / "02_benchmarking.ipynb").metadata["course"]["reference_run"]
    assert f"({stamp['date']}, notebooks/02_benchmarking.ipynb); PyTorch {stamp['torch']}" in html
    plots = ["".join(o["data"]["image/png"].split()) for o in ref.outputs if "image/png" in o.get("data", {})]
    assert re.findall(r'<img src="data:image/png;base64,([^"]+)"', html) == plots  # every plot, in order
    printed = "".join("".join(o["text"]) for o in ref.outputs if o.get("name") == "stdout")
    assert "".join(text for _, text in _pres(html)).replace("&#x27;", "'") == printed.replace("&", "&amp;") \
        .replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    assert cells.show_reference("0" * 16) is False  # no reference (an edited cell): nothing shown


SCRIPT = "<script>alert('x')</script> & <b>not bold</b>\n"


def _shown(outputs, stamp=True):
    versions = "PyTorch 2.11.0+cu130, CuPy 14.2.0" if stamp else ""
    ref = cells.Reference(outputs, "reference output, from the course's run on GPU <1> & co (2026-11-25, x.ipynb):",
                          versions)
    return ref, cells.reference_text(ref), cells.reference_html(ref)


def test_printed_text_is_escaped_and_stays_text():
    ref, text, html = _shown([{"output_type": "stream", "name": "stdout", "text": [SCRIPT, "1 < 2\n"]}])
    assert text == _printed_before_issue_24(ref) == f"↳ {ref.label}\n{SCRIPT}1 < 2\n"  # plain text: as printed
    assert "<script>" not in html and "<b>not" not in html and "GPU <1>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;b&gt;not bold&lt;/b&gt;\n1 &lt; 2\n" in html
    assert "run on GPU &lt;1&gt; &amp; co (2026-11-25, x.ipynb); PyTorch 2.11.0+cu130, CuPy 14.2.0</div>" in html
    assert "(2026-11-25, x.ipynb)</div>" in _shown([], stamp=False)[2]  # no versions stamped: none named
    assert "\x1b" not in _shown([{"output_type": "stream", "name": "stdout", "text": "\x1b[31mred\x1b[0m\n"}])[2]


def test_stderr_is_marked_apart_from_stdout():
    outputs = [{"output_type": "stream", "name": "stdout", "text": "out 1\n"},
               {"output_type": "stream", "name": "stdout", "text": "out 2\n"},  # one stream: one block
               {"output_type": "stream", "name": "stderr", "text": "UserWarning: careful\n"},
               {"output_type": "stream", "name": "stdout", "text": "out 3\n"}]
    ref, text, html = _shown(outputs)
    assert text == _printed_before_issue_24(ref)
    assert [(text, "border-left" in style) for style, text in _pres(html)] == [
        ("out 1\nout 2\n", False), ("UserWarning: careful\n", True), ("out 3\n", False)]
    stderr_style = _pres(html)[1][0]
    assert "background: rgba(255, 64, 64, 0.16)" in stderr_style.split("; background: transparent")[-1]


def test_plots_keep_their_size_and_tables_their_html():
    png = "iVBORw0KGgo\nAAAA\n"  # stored as base64 in lines
    outputs = [{"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Figure>"},
                "metadata": {"image/png": {"width": 640, "height": 480}}},
               {"output_type": "display_data", "data": {"image/png": ["iVBOR", "w0K"], "text/plain": "<Figure>"}},
               {"output_type": "execute_result", "execution_count": 3, "metadata": {},
                "data": {"text/html": "<table><tr><td>1 &amp; 2</td></tr></table>", "text/plain": "   a\n0  1 & 2"}},
               {"output_type": "display_data", "data": {"image/svg+xml": "<svg></svg>"}}]
    ref, text, html = _shown(outputs)
    assert '<img src="data:image/png;base64,iVBORw0KGgoAAAA" width="640" height="480" style="' in html
    assert '<img src="data:image/png;base64,iVBORw0K" style="' in html  # no size saved: its own pixels
    assert '<img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=" style="' in html
    assert "<table><tr><td>1 &amp; 2</td></tr></table>" in html  # a table's own HTML, as the reference showed it
    assert text == f"↳ {ref.label}\n   a\n0  1 & 2\n"  # a terminal gets the table's text, not "<Figure>"


def test_an_unknown_output_is_left_out_without_an_error():
    outputs = [{"output_type": "a_future_kind", "text": "??"},
               {"output_type": "display_data", "data": {"application/x-unknown": "??"}, "metadata": {}},
               {"output_type": "stream", "name": "stdout", "text": "kept\n"}]
    ref, text, html = _shown(outputs)
    assert text == f"↳ {ref.label}\nkept\n"
    assert "??" not in html and [t for _, t in _pres(html)] == ["kept\n"]


# ---------------------------------------------------------------- the skip line
def test_the_skip_line_says_what_to_do_where_there_is_no_gpu(monkeypatch):
    from utils.device import Availability

    def statuses(cuda, cupy):
        monkeypatch.setitem(cells._CHECKS, "cuda", lambda: cuda)
        monkeypatch.setitem(cells._CHECKS, "cupy", lambda: cupy)
        monkeypatch.setattr(cells, "cuda_status", lambda: cuda)

    hint = " — run it on a GPU (Colab: Runtime → Change runtime type → T4 GPU)"
    statuses(Availability(False, "PyTorch 2.13.0+cpu is a CPU-only build"), Availability(False, "no GPU"))
    assert cells.missing(["cuda", "cupy"]) == f"skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build{hint}"
    colab = "PyTorch has CUDA support but finds no usable NVIDIA GPU or driver; on Colab: Runtime > Change " \
            "runtime type > T4 GPU"
    statuses(Availability(False, colab), Availability(False, "no GPU"))
    assert cells.missing(["cuda"]) == f"skipped (needs cuda): {colab}"  # the reason has the hint already
    statuses(Availability(True, "CUDA GPU: T4"), Availability(False, "CuPy is not importable (x)"))
    assert cells.missing(["cuda", "cupy"]) == "skipped (needs cupy): CuPy is not importable (x)"  # a GPU: no hint


def test_nbvals_run_checks_that_a_skipped_cell_shows_its_reference():
    """tools/pytest_plugin.py checks each cell nbval runs: skipped, it must show the reference run's
    text and plots, in one marked block."""
    source, ref = _a_lecture_cell_with_text_and_a_plot()
    skip = {"output_type": "stream", "name": "stdout",
            "text": "skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build — run it on a GPU (...)\n"}

    def block(text=None, html=None, carried=True):
        data = {"text/plain": cells.reference_text(ref) if text is None else text,
                "text/html": cells.reference_html(ref) if html is None else html}
        metadata = {cells.REFERENCE_METADATA: {"outputs": ref.outputs, "label": ref.label,
                                               "versions": ref.versions}} if carried else {}
        return {"output_type": "display_data", "data": data, "metadata": metadata}

    assert reference_not_shown(source, [skip, block()]) is None
    assert "does not carry its reference in its metadata" in reference_not_shown(source, [skip, block(carried=False)])
    assert "more than one reference block" in reference_not_shown(source, [skip, block(), block()])
    nested = block(text=cells.reference_text(ref) + cells.reference_text(ref))
    assert "more than one reference block" in reference_not_shown(source, [skip, nested])
    assert "under '↳ reference output" in reference_not_shown(source, [skip])
    assert "not the reference run's printed output" in reference_not_shown(source, [skip, block(f"↳ {ref.label}\n")])
    assert "shows 0 plots" in reference_not_shown(source, [skip, block(html="<div></div>")])
    ran = {"output_type": "stream", "name": "stdout", "text": "it ran here\n"}
    assert reference_not_shown(source, [ran]) is None  # on a GPU: nothing to check
    assert reference_not_shown(source + "\n# edited", [skip]) is None  # no reference for edited code


# ---------------------------------------------------------------- a notebook that JupyterLab saved (issue 24)
def test_a_shown_block_carries_its_reference_and_the_index_reads_it_back(course, monkeypatch):
    """A student's JupyterLab saves the skip line and the block over a lecture's reference outputs:
    the index then reads the reference from the block's metadata, not the block as an output."""
    read_index = cells.reference_index.__wrapped__  # uncached: each call reads the files as they are now
    key = cells.source_key("%%requires cuda\nprint(rate)")
    ref = read_index(course)[key]
    monkeypatch.setattr(cells, "reference_index", lambda: read_index(course))  # what show_reference reads
    InteractiveShell.instance()
    with capture_output() as shown:
        assert cells.show_reference(key) is True
    (block,) = shown.outputs
    assert block.metadata == {cells.REFERENCE_METADATA: {"outputs": ref.outputs, "label": ref.label,
                                                        "versions": ref.versions}}
    skip = {"output_type": "stream", "name": "stdout", "text": "skipped (needs cuda): no GPU\n"}
    saved = {"output_type": "display_data", "data": block.data, "metadata": block.metadata}
    _notebook(course / "notebooks/01_x.ipynb", [
        _code("%%requires cuda\nprint(rate)", [skip, saved]),  # saved after a run on a laptop
        _code("%%requires cuda\nplot()", [skip]),  # skipped, its block not shown (the index was stale): nothing
        _code("%%requires cuda\nnothing_printed()", [skip, {**saved, "metadata": {}}]),  # a block from before
        _code("print('skipped (needs cuda): x')", [skip]),  # not a `%%requires` cell: what it printed is output
    ])
    index = read_index(course)
    assert index[key] == ref  # the reference run's outputs, label and versions, as if never saved over
    assert cells.source_key("%%requires cuda\nplot()") not in index
    assert cells.source_key("%%requires cuda\nnothing_printed()") not in index
    (kept,) = index[cells.source_key("print('skipped (needs cuda): x')")].outputs
    assert "".join(kept["text"]) == skip["text"]


def test_a_malformed_carried_reference_is_not_shown():
    skip = {"output_type": "stream", "name": "stdout", "text": "skipped (needs compute-sanitizer): x\ny\n"}
    for carried in ({"outputs": "x", "label": "l"}, {"outputs": [], "label": "l"}, {"label": "l"}, "x"):
        block = {"output_type": "display_data", "data": {"text/plain": "↳ x"},
                 "metadata": {cells.REFERENCE_METADATA: carried}}
        assert cells.saved_reference({"source": "%%requires cuda\nf()", "outputs": [skip, block]}, "l", "") is None
