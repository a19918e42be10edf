"""Every notebook follows the course's anatomy, and nothing in it depends on one person's machine."""

import json
import re

import nbformat
import pytest

from conftest import ROOT
from tools.course import (
    CLASS_NOTE,
    EXERCISES,
    LECTURES,
    NAVIGATION_TAG,
    PREREQUISITE,
    SOLUTIONS,
    class_copy,
    colab_badge,
    exercises_name,
    lecture_name,
    navigation,
    notebooks,
    read,
    setup_cell,
)

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

ALL = notebooks(LECTURES, SOLUTIONS, EXERCISES)
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(/(home|Users|root|tmp|opt|work|content|usr|var)/|[A-Z]:\\\\)|site-packages")


def ids(path):
    return f"{path.parent.name}/{path.name}"


def test_there_are_notebooks():
    assert notebooks(LECTURES) and notebooks(SOLUTIONS)


@pytest.mark.parametrize("path", ALL, ids=ids)
def test_anatomy(path):
    nb = read(path)
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), "notebooks are named NN_topic.ipynb"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), "the first cell is the title"
    assert colab_badge(path) in first.source, "the title cell has this notebook's Open-in-Colab badge"
    assert "**Objectives.**" in first.source and "**Time:**" in first.source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].source == setup_cell(), (
        "the first code cell is the course's setup cell (python -m tools.course sync)")


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_lectures_end_with_takeaways_and_links(path):
    """The last section is the Takeaways (in one markdown cell or several: a slide each), then the way on."""
    cells = read(path).cells
    start = max(n for n, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## "))
    takeaways = cells[start:-1]
    assert takeaways[0].source.startswith("## Takeaways") and all(c.cell_type == "markdown" for c in takeaways)
    exercises = exercises_name(path.name)
    assert (f"../exercises/{exercises}" in "\n".join(c.source for c in takeaways)
            or not (EXERCISES / exercises).exists())


@pytest.mark.parametrize("path", notebooks(SOLUTIONS, EXERCISES), ids=ids)
def test_each_exercise_notebook_leads_back_to_its_lecture_and_on_to_the_next(path):
    from tools.course import exercises_navigation

    last = read(path).cells[-1]
    assert NAVIGATION_TAG in last.metadata.get("tags", []) and last.source == exercises_navigation(path), (
        "python -m tools.course sync, then python -m tools.make_exercises")
    assert f"](../notebooks/{lecture_name(path.name)})" in last.source


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_each_lecture_leads_on(path):
    """The last cell links this lecture's exercises and the next lecture; the prerequisites are links
    (both written by python -m tools.course sync)."""
    nb = read(path)
    last = nb.cells[-1]
    assert NAVIGATION_TAG in last.metadata.get("tags", []) and last.source == navigation(path), (
        "the last cell is the way on: python -m tools.course sync")
    lectures = notebooks(LECTURES)
    following = lectures[lectures.index(path) + 1:]
    assert f"]({following[0].name})" in last.source if following else "../README.md" in last.source
    prerequisites = nb.cells[0].source.partition("**Prerequisites.**")[2].partition("\n\n")[0]
    assert not PREREQUISITE.search(prerequisites), "a notebook named by its number only: python -m tools.course sync"


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_each_lecture_is_a_slideshow_a_section_a_slide(path):
    """RISE's slide metadata (tools/course.py, written by sync): the title and each section a slide,
    each subsection, and each new idea, a subslide, the setup cell on the title slide; every heading begins a cell."""
    from tools.course import RISE, slide_types, split_at_headings

    nb = read(path)
    assert len(split_at_headings(list(nb.cells))) == len(nb.cells), (
        "a markdown cell holds a section heading after other text: python -m tools.course sync")
    got = [c.metadata.get("slideshow", {}).get("slide_type") for c in nb.cells]
    assert got == slide_types(nb.cells), "python -m tools.course sync"
    first_code = next(n for n, c in enumerate(nb.cells) if c.cell_type == "code")
    assert got[first_code] != "skip", "the setup cell is shown, so that an instructor runs it first (issue 37)"
    assert got.count("slide") >= 5 and got[0] == "slide"
    assert nb.metadata.get("rise") == RISE, (
        "python -m tools.course sync: a long slide must scroll, and no 'Click to add a cell.' cover a title")


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_each_lecture_fits_an_hour_and_its_core_path_stands_alone(path):
    """Issue 23: the core path (everything not marked "(optional)") takes at most 60 minutes by
    tools/minutes.py, and skipping every optional part leaves no core cell reading a name that only
    an optional cell defines."""
    from tools.minutes import core_needs_optional, lecture_minutes

    nb = read(path)
    assert round(lecture_minutes(nb).core) <= 60, "mark depth (optional): python -m tools.minutes --sections NN"
    assert core_needs_optional(nb) == []


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_each_lecture_marks_its_45_minute_path_and_it_stands_alone(path):
    """Issue 37: every cell's path ("short", "core", "optional") in its metadata, as sync writes it
    from the guide's line "The 45-minute slides leave out ..." (each heading it names is in the
    lecture); the short path is within the core path and reads no name that only a cell off it defines,
    so that its slides run live."""
    from tools.course import INSTRUCTORS, SHORT_LINE, cell_paths, short_left_out
    from tools.minutes import core_needs_optional

    nb = read(path)
    guide = INSTRUCTORS / path.with_suffix(".md").name
    assert any(SHORT_LINE.match(line) for line in guide.read_text().splitlines()), (
        f"{guide.name}: say which parts the short slides leave out (\"The 45-minute slides leave out ...\")")
    left_out = short_left_out(guide)
    headings = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert [p for p in left_out if not any(h.startswith(p) for h in headings)] == [], "no such heading"
    paths = cell_paths(nb, left_out)
    assert [c.metadata.get("course", {}).get("path") for c in nb.cells] == paths, "python -m tools.course sync"
    assert core_needs_optional(nb, [p != "short" for p in paths]) == []


def test_the_slides_switch_presents_the_short_path_the_core_path_or_everything():
    """`python -m tools.course slides short|core|all`: the cells off the chosen path are `skip` in the
    slideshow, the others keep their slide types; `all` gives back what sync wrote."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from tools.course import cell_paths, present, set_slides

    nb = new_notebook(cells=[new_markdown_cell("# T"), new_code_cell("setup"), new_markdown_cell("## 1. Core"),
                             new_code_cell("a = 1"), new_markdown_cell("### 1.1 Cut for 45 minutes"),
                             new_code_cell("b = 2"), new_markdown_cell("## 2. Depth (optional)"),
                             new_code_cell("c = 3"), new_markdown_cell("## 3. Core again"), new_code_cell("d = 4")])
    set_slides(nb)
    paths = cell_paths(nb, ["### 1.1"])
    assert paths == ["short"] * 4 + ["core"] * 2 + ["optional"] * 2 + ["short"] * 2
    for cell, on in zip(nb.cells, paths, strict=True):
        cell.metadata["course"] = {"path": on}
    synced = [c.metadata.slideshow.slide_type for c in nb.cells]
    shown = {}
    for path in ("short", "core", "all"):
        present(nb, path)
        shown[path] = [c.metadata.slideshow.slide_type for c in nb.cells]
    assert shown["short"] == ["slide", "-", "slide", "-", "skip", "skip", "skip", "skip", "slide", "-"]
    assert shown["core"] == ["slide", "-", "slide", "-", "subslide", "-", "skip", "skip", "slide", "-"]
    assert synced == ["slide", "-", "slide", "-", "subslide", "-", "slide", "-", "slide", "-"]
    assert shown["all"] == synced


def test_core_needs_optional_finds_a_name_only_an_optional_part_defines():
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from tools.minutes import core_needs_optional, long_core_cells

    nb = new_notebook(cells=[new_markdown_cell("# T"), new_code_cell("a = 1"),
                             new_markdown_cell("## 1. Depth (optional)"),
                             new_code_cell("b = a + 1\ndef f(x):\n    return x"),
                             new_markdown_cell("## 2. Core again"), new_code_cell("%%requires cuda\nprint(a, b, f(2))"),
                             new_code_cell("\n".join(f"c{i} = {i}" for i in range(26))),
                             new_code_cell("try:\n    pass\nexcept OSError as err:\n    print(err)")])
    assert core_needs_optional(nb) == ["cell 5 reads `b`, defined in optional cell 3",
                                       "cell 5 reads `f`, defined in optional cell 3"]
    assert long_core_cells(nb) == ["cell 6: 26 lines"]
    nb.cells[2].source = "## 1. Depth"
    assert core_needs_optional(nb) == []


@pytest.mark.parametrize("path", [p for p in notebooks(LECTURES) if p.name > "01"], ids=ids)
def test_a_lecture_tells_a_student_without_a_gpu_where_to_run_it(path):
    from tools.course import NO_GPU

    assert NO_GPU in read(path).cells[0].source, "python -m tools.course sync"


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_a_fresh_lecture_says_its_outputs_are_the_reference_runs(path):
    """Issue 37: opened fresh, a lecture shows the reference run's outputs; the markdown cell under its setup
    cell (tools/course.py's reference_note, written by sync and by tools.reference when it stamps) names the
    run's GPU and date from the stamp, in JupyterLab, its slides, Colab and GitHub alike. It comes after the
    imports (the code cell after the setup cell), so that nothing stands between the two cells that an instructor
    runs first (instructor review of 04)."""
    from tools.course import REFERENCE_NOTE_TAG, reference_note

    nb = read(path)
    first_code = next(n for n, c in enumerate(nb.cells) if c.cell_type == "code")
    assert nb.cells[first_code + 1].cell_type == "code", "the imports follow the setup cell"
    note = nb.cells[first_code + 2]
    assert note.cell_type == "markdown" and REFERENCE_NOTE_TAG in note.metadata.get("tags", []), (
        "python -m tools.course sync")
    assert note.source == reference_note(nb), "python -m tools.course sync"
    assert [c for c in nb.cells if REFERENCE_NOTE_TAG in c.metadata.get("tags", [])] == [note]
    stamp = nb.metadata.get("course", {}).get("reference_run")
    if stamp is not None:
        assert stamp["gpu"] in note.source and stamp["date"] in note.source


def test_the_reference_note_follows_the_stamp():
    """A stamp's GPU and date (and versions) are in the note; without a stamp it says so; sync adds it once."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from tools.course import REFERENCE_NOTE_TAG, reference_note, set_reference_note

    nb = new_notebook(cells=[new_markdown_cell("# Title"), new_code_cell("setup"), new_code_cell("import x")])
    set_reference_note(nb)
    assert "not from the course's reference run yet" in nb.cells[3].source
    nb.metadata["course"] = {"reference_run": {"gpu": "NVIDIA H200", "date": "2026-11-28", "torch": "2.11.0",
                                               "cupy": None}}
    set_reference_note(nb)
    assert len(nb.cells) == 4 and REFERENCE_NOTE_TAG in nb.cells[3].metadata.tags
    assert nb.cells[3].source == reference_note(nb)
    assert "NVIDIA H200 (PyTorch 2.11.0) on 2026-11-28" in nb.cells[3].source
    nb.cells.insert(2, nb.cells.pop(3))  # an older lecture's note, between the setup and the imports: moved
    set_reference_note(nb)
    assert [c.source for c in nb.cells[1:3]] == ["setup", "import x"]
    assert REFERENCE_NOTE_TAG in nb.cells[3].metadata.tags


def test_slide_types_follow_the_headings_and_the_ideas_and_fit_a_screen():
    """A heading begins a slide or subslide; a markdown cell after code begins a subslide (a new idea);
    a cell that would make its slide taller than a screen (estimated) begins one."""
    from nbformat.v4 import new_code_cell, new_markdown_cell

    from tools.course import SLIDE_PX, estimated_px, slide_types, split_at_headings

    cells = split_at_headings([new_markdown_cell("# Title"), new_code_cell("x = 1"),
                               new_markdown_cell("text\n\n## 1. A section\nmore\n### 1.1 A part"),
                               new_code_cell("y = 2")])
    assert [c.source for c in cells] == ["# Title", "x = 1", "text", "## 1. A section\nmore", "### 1.1 A part",
                                         "y = 2"]
    assert slide_types(cells) == ["slide", "-", "subslide", "slide", "subslide", "-"]
    # the setup cell and the imports after it are on the title slide, however long (they show folded)
    imports = new_code_cell("\n".join(f"import m{i}" for i in range(40)))
    assert slide_types([new_markdown_cell("# Title"), new_code_cell("setup"), imports, new_markdown_cell("note")]) == [
        "slide", "-", "-", "subslide"]
    long = new_code_cell("\n".join(f"x{i} = {i}" for i in range(15)))
    assert 2 * estimated_px(long) > SLIDE_PX > estimated_px(long)
    cells = [new_markdown_cell("## 1. A section"), new_markdown_cell("an idea"), long, long, new_markdown_cell("next")]
    assert slide_types(cells) == ["slide", "-", "-", "subslide", "subslide"]
    # the code cell after a prediction begins a subslide: its stored output, the answer, is not under the question
    question = new_markdown_cell("**Predict.** ...", metadata={"tags": ["predict"]})
    assert slide_types([new_markdown_cell("## 1. A section"), question, new_code_cell("x = 1")]) == [
        "slide", "-", "subslide"]


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_each_lecture_states_the_time_the_formula_gives(path):
    from tools.minutes import lecture_minutes, with_time

    nb = read(path)
    assert "**Time:** about " in nb.cells[0].source
    assert nb.cells[0].source == with_time(nb.cells[0].source, lecture_minutes(nb)), (
        "the title cell's **Time:** is not what python -m tools.minutes computes: python -m tools.course sync")


@pytest.mark.parametrize("path", [p for p in notebooks(LECTURES) if p.name[:2] != "00"], ids=ids)
def test_predict_then_measure(path):
    """At least three cells tagged `predict` ask for a guess before a key measurement; one of the next
    code cells after each holds the measurement (its reference output), which settles the guess."""
    cells = read(path).cells
    predict = [n for n, c in enumerate(cells) if "predict" in c.get("metadata", {}).get("tags", [])]
    assert len(predict) >= 3, f"{len(predict)} cells tagged `predict`"
    for n in predict:
        assert cells[n].cell_type == "markdown" and cells[n].source.startswith("**Predict.**"), f"cell {n}"
        code_after = [c for c in cells[n + 1:] if c.cell_type == "code"][:3]  # "run the next cell (or cells)"
        assert any(c.outputs for c in code_after), f"cell {n}: no measured output after the prediction"


def _reveal(cells: list, n: int) -> list:
    """The cells from the one after predict cell `n` to the first code cell with an output (the reveal)."""
    shown = []
    for cell in cells[n + 1:]:
        shown.append(cell)
        if cell.cell_type == "code" and cell.outputs:
            break
    return shown


@pytest.mark.parametrize("path", [p for p in notebooks(LECTURES) if p.name[:2] != "00"], ids=ids)
def test_nothing_between_a_prediction_and_its_reveal_gives_the_answer(path):
    """CONTRIBUTING, "Predictions": between a predict cell and the output that answers it, no markdown, and no
    claim in the cells that run (a claim states the conclusion; it comes in a cell after the reveal). What a
    machine cannot see (telling names and comments) is for the reviewers."""
    cells = read(path).cells
    problems = []
    for n, cell in enumerate(cells):
        if "predict" not in cell.get("metadata", {}).get("tags", []):
            continue
        for k, shown in enumerate(_reveal(cells, n), start=n + 1):
            if shown.cell_type == "markdown":
                problems.append(f"cell {k}: markdown between predict cell {n} and its reveal")
            elif re.search(r"\bclaim\(", shown.source):
                problems.append(f"cell {k}: a claim before predict cell {n}'s answer is on screen")
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("guide", sorted((ROOT / "instructors").glob("*.md")), ids=lambda p: p.name)
def test_an_instructors_guide_states_its_lectures_minutes(guide):
    """An instructors' guide (instructors/NN_topic.md) is for a lecture that exists, links it, and
    its table of minutes is what tools/minutes.py computes (python -m tools.course sync writes it)."""
    from tools.minutes import MINUTES_BEGIN, sections_table

    lecture = LECTURES / guide.with_suffix(".ipynb").name
    text = guide.read_text()
    assert lecture.exists() and f"../notebooks/{lecture.name}" in text
    assert f"{MINUTES_BEGIN}\n{sections_table(read(lecture))}\n" in text, "python -m tools.course sync"


@pytest.mark.parametrize("path", notebooks(SOLUTIONS), ids=ids)
def test_solutions_are_titled_as_solutions(path):
    """A lecture's and its solutions' tabs are both named NN_topic.ipynb (the exercises' NN_topic_exercises.ipynb):
    the title says which is which, and a solution does not ask its
    reader to replace `raise NotImplementedError` (that instruction is the exercise's, in a comment)."""
    first = read(path).cells[0].source
    visible = re.sub(r"<!--.*?-->", "", first, flags=re.DOTALL)
    assert first.startswith(f"# Solutions {path.name[:2]} · ") and "raise NotImplementedError" not in visible
    exercise = read(EXERCISES / exercises_name(path.name)).cells[0].source
    assert exercise.startswith(f"# Exercises {path.name[:2]} · ") and "raise NotImplementedError" in exercise


@pytest.mark.parametrize("path", ALL, ids=ids)
def test_no_absolute_paths(path):
    for n, cell in enumerate(read(path).cells):
        texts = [cell.source] + [str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                                 for o in cell.get("outputs", [])]
        for text in texts:
            match = ABSOLUTE_PATH.search(text)
            assert match is None, (
                f"cell {n} holds a machine's path: ...{text[max(0, match.start() - 40):match.end() + 40]}...")


@pytest.mark.parametrize("path", ALL, ids=ids)
def test_no_errors_saved(path):
    for cell in read(path).cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"a saved error: {out.get('ename')}: {out.get('evalue')}"


@pytest.mark.parametrize("path", ALL, ids=ids)
def test_a_cell_with_outputs_has_an_execution_count(path):
    """nbval fails a cell that stores outputs without an execution count ("Unrun reference cell has outputs"), on a
    GPU as on a CPU: on 2026-12-02 five such cells, added by hand, cost three lectures their reference run."""
    unrun = [n for n, cell in enumerate(read(path).cells)
             if cell.cell_type == "code" and cell.outputs and cell.execution_count is None]
    assert unrun == [], f"cells {unrun} store outputs but no execution count: run them, or set one"


@pytest.mark.parametrize("path", notebooks(LECTURES, SOLUTIONS), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_stray_booleans_under_cells(path):
    """A cell's last line that returns True or False (a claim did, once) puts the bare value under the
    cell, where a student reads it as a result."""
    stray = [n for n, cell in enumerate(read(path).cells) if cell.cell_type == "code" for out in cell.outputs
             if out.output_type == "execute_result" and out.data.get("text/plain") in ("True", "False")]
    assert stray == [], f"cells {stray} show a bare True or False"


def test_the_repository_url_lives_in_one_place():
    from tools.course import SETTINGS

    url = SETTINGS["repository"]
    files = [p for p in ROOT.iterdir() if p.is_file()]
    files += [p for folder in ("utils", "tools", "tests", ".ci") for p in (ROOT / folder).rglob("*") if p.is_file()]
    for path in files:
        if path.name != "pyproject.toml":
            assert url not in path.read_text(errors="ignore"), f"{path.relative_to(ROOT)} repeats the URL"


def test_readme_lists_every_lecture():
    from tools.course import TOPICS_BEGIN, TOPICS_END, topics_table

    readme = (ROOT / "README.md").read_text()
    table = readme.split(TOPICS_BEGIN)[1].split(TOPICS_END)[0].strip()
    assert table == topics_table(), "README's topics table is stale: python -m tools.course sync"


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md"])
def test_local_links_exist(doc):
    text = (ROOT / doc).read_text()
    for target in re.findall(r"\]\((?!https?://)([^)#]+)\)", text):
        assert (ROOT / target).exists(), f"{doc} links to {target}, which does not exist"


@pytest.mark.parametrize("path", ALL, ids=ids)
def test_exercise_cells_are_tagged(path):
    """Tests and the generator find exercise cells by their tags (tools/make_exercises.py): a cell with
    solution markers is tagged `exercise`, a check cell `exercise-check`, and so on; lectures have none."""
    from tools.make_exercises import CHECK_TAG, DEFINITION_TAGS, calls_a_check, has_markers, tag_problems

    nb = read(path)
    if path.parent == LECTURES:
        exercise_tags = DEFINITION_TAGS | {CHECK_TAG}
        assert not [n for n, c in enumerate(nb.cells) if exercise_tags & set(c.get("metadata", {}).get("tags", []))
                    or has_markers(c) or calls_a_check(c)], "a lecture holds exercise cells or tags"
    else:
        assert tag_problems(nb, solution=path.parent == SOLUTIONS) == []


@pytest.mark.parametrize("path", notebooks(EXERCISES), ids=ids)
def test_exercises_keep_the_solutions_tags(path):
    from tools.make_exercises import DISCUSSION_TAG

    def tags(p):
        return [t for c in read(p).cells if DISCUSSION_TAG not in (t := c.get("metadata", {}).get("tags", []))]

    assert tags(path) == tags(SOLUTIONS / lecture_name(path.name))  # the solutions' discussions are left out


# What measures, or waits for the GPU: none of it may run in a notebook's first two code cells, beside
# which the course's pytest plugin starts the next notebook's kernel (KernelPool in tools/pytest_plugin.py).
MEASURES = {"benchmark", "timer", "compare", "claim", "Timer", "do_bench", "perf_counter", "time", "synchronize",
            "gpu_sleep", "cupy_sleep", "run_python", "run_process", "run_in_turn", "start_python", "start_process",
            "memory_state", "peak_memory", "max_memory_allocated", "memory_reserved", "profile"}


def measuring_calls(source: str) -> list[str]:
    """The calls in `source` to a function named in MEASURES (`utils.benchmark(...)`, `time.perf_counter()`)."""
    import ast

    from tools.fingerprint import cell_tree

    if source.startswith("%%"):
        return [source.splitlines()[0]]  # a cell magic: `%%requires cuda` runs GPU work
    tree = cell_tree(source)  # IPython's lines (`!git clone ...`) made calls
    assert tree is not None, f"not Python: {source[:80]}"
    return [ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in MEASURES]


@pytest.mark.parametrize("path", notebooks(LECTURES, SOLUTIONS), ids=ids)
def test_the_first_two_cells_measure_nothing(path):
    first_two = [cell.source for cell in read(path).cells if cell.cell_type == "code"][:2]
    found = {n: calls for n, source in enumerate(first_two) if (calls := measuring_calls(source))}
    assert found == {}, f"the setup cell and the imports measure nothing (the next kernel starts beside them): {found}"


def test_a_measuring_call_is_found():
    assert measuring_calls("import torch\nfmt = utils.format_time") == []
    assert measuring_calls("x = utils.benchmark(f).median") == ["utils.benchmark"]
    assert measuring_calls("t0 = time.perf_counter()") == ["time.perf_counter"]
    assert measuring_calls("%%requires cuda\nimport torch") == ["%%requires cuda"]


def test_class_copy_clears_outputs_only():
    """`slides ... --clear` (instructor review 8: a fresh deck showed the predictions' answers): the copy for a
    class has no outputs and no execution counts, the same code cells, and links that still reach notebooks/."""
    lecture = read(LECTURES / "04_streams_cupy.ipynb")
    before = nbformat.writes(lecture)
    copy = class_copy(lecture)
    assert nbformat.writes(lecture) == before, "the lecture itself is left as it is"
    code = [c for c in copy.cells if c.cell_type == "code"]
    assert [c.source for c in code] == [c.source for c in lecture.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    text = "\n".join(c.source for c in copy.cells if c.cell_type == "markdown")
    assert "](../notebooks/05_debugging.ipynb)" in text and "](../exercises/" in text
    assert not re.search(r"\]\((\d\d_|scripts/)", text)
    # instructor review of 04: the reference note ("The outputs below are the course's reference run ...") is
    # false in a copy without outputs: the copy says what is true in its place
    notes = [c.source for c in copy.cells if "reference-note" in c.metadata.get("tags", [])]
    assert notes == [CLASS_NOTE] and "reference run**" not in text


# A measured number with its unit, as the prose quotes one (5.33 ms, 7.9×, 0.46x, 55.4 GB/s, 9.39 times as long;
# "times" after a decimal only: "two times", "10 times" are counts).
MEASURED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s|\u00a0|\u202f)?"
                      r"(?:µs|μs|ms\b|ns\b|s\b|GB/s|TB/s|GiB|MiB|KiB|x\b|×(?!\s?\d))"  # 5000 × 5000: a shape
                      r"|(?<![\w.])(\d+\.\d+)(?:\s|\u00a0)times\b")


def stored_outputs(cells: list) -> str:
    """Every text a notebook's stored outputs print."""
    return "\n".join(
        "".join(output.get("text", "")) + "\n".join("".join(value) for kind, value in output.get("data", {}).items()
                                                    if kind.startswith("text/"))
        for cell in cells if cell.cell_type == "code" for output in cell.get("outputs", []))


def stale_quotes(text: str, stored: str) -> list[str]:
    """The measured numbers that `text`'s sentences quote from the reference run and `stored` does not print.
    Clauses quoting the seminar's own run (its T4) are another run's."""
    stale = []
    for sentence in re.split(r"(?<=[.;:])\s+(?=[A-Z(])", text):
        if "reference run" not in sentence.lower():
            continue
        ours = " ".join(part for part in re.split(r",\s+|;\s+", sentence) if not re.search(r"seminar|T4", part))
        stale += [m.group(0) for m in MEASURED.finditer(ours)
                  if not re.search(rf"(?<![\d.]){re.escape(m.group(1) or m.group(2))}(?!\d)", stored)]
    return stale


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_what_the_prose_quotes_from_the_reference_run_is_in_its_outputs(path):
    """CONTRIBUTING, "Numbers and claims": a sentence that quotes the reference run quotes the outputs stored
    under the notebook, as they are: after a new stamp, the numbers typed from the last one show here (a fresh
    engineer found six in 08 on 2026-11-29)."""
    cells = read(path).cells
    stored = stored_outputs(cells)
    stale = [f"cell {n}: {quote}" for n, cell in enumerate(cells) if cell.cell_type == "markdown"
             for quote in stale_quotes(cell.source, stored)]
    assert not stale, f"numbers quoted from the reference run that no stored output prints: {stale}"


@pytest.mark.parametrize("path", notebooks(LECTURES), ids=ids)
def test_what_a_guide_quotes_from_the_reference_run_is_in_its_lectures_outputs(path):
    """The same for the instructors' guide of the lecture (a fresh student found the guide of 06 quoting 9.39x,
    2026-11-29, after the lecture's new stamp printed 5.57x); the solutions' outputs count too, where the guide
    quotes them."""
    guide = ROOT / "instructors" / f"{path.stem}.md"
    lecture = read(path)
    stored = stored_outputs(lecture.cells) + json.dumps(lecture.metadata["course"]["reference_run"])  # its stamp
    solutions = ROOT / "solutions" / path.name
    if solutions.exists():
        stored += stored_outputs(read(solutions).cells)
    text = re.sub(r"\s*\n\s*", " ", guide.read_text())  # a guide's sentences run over lines
    stale = stale_quotes(text, stored)
    assert not stale, f"{guide.name}: numbers quoted from the reference run that no stored output prints: {stale}"


@pytest.mark.parametrize("guide", sorted((ROOT / "instructors").glob("*.md")), ids=lambda p: p.name)
def test_an_instructors_guide_paces_its_short_version_row_by_row(guide):
    """Instructor review 18 of 04: the short version's table ("| section | minutes | teach |") gives each
    row its minutes, the short slides' cells in the parts the row names by tools/minutes.py's formula
    (tools/course.py's teach_table; python -m tools.course sync writes them)."""
    from tools.course import TEACH_HEADER, short_left_out, teach_table

    text = guide.read_text()
    assert TEACH_HEADER[0] not in text.split("\n"), f"{guide.name}: python -m tools.course sync"
    assert teach_table(text, read(LECTURES / guide.with_suffix(".ipynb").name), short_left_out(guide)) == text, (
        f"{guide.name}: its short version's minutes are not what the formula gives: python -m tools.course sync")


DRAWS = re.compile(r"plt\.(show|subplots|figure|plot)\(|\bplot_\w+\(|\.savefig\(")


def figureless_plot_cells(nb: nbformat.NotebookNode) -> list[int]:
    """The code cells that draw (pyplot, a plot_ helper, savefig) but store no figure among their outputs."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and DRAWS.search(c.source)
            and not any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]


@pytest.mark.parametrize("path", notebooks(LECTURES, SOLUTIONS), ids=ids)
def test_a_cell_that_draws_stores_its_figure(path):
    """A reference run whose kernels drew nothing (2026-11-30: MPLBACKEND=Agg reached nbval's kernels, and five figures
    of 06, 08 and solutions 03 were stamped away) must not land: students, the slides and the website show the stored
    outputs."""
    assert not figureless_plot_cells(read(path)), "cells that draw but store no figure: run it again without MPLBACKEND"


def test_a_figureless_plot_cell_is_found():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("plt.plot(x)\nplt.show()"),
                                         nbformat.v4.new_code_cell("utils.plot_timings(t)"),
                                         nbformat.v4.new_code_cell("print(1)")])
    shown = {"image/png": "iVBOR", "text/plain": "<Figure>"}
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data=shown)]
    assert figureless_plot_cells(nb) == [0]
