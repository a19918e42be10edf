"""Reference outputs: every lecture and solution is stamped by a run on the reference GPU, and current;
a stamp follows what the code does, not how it is written."""

import json
import re
import shutil
import sys
import textwrap

import nbformat
import pytest

from conftest import INNER, ROOT
from tools import fingerprint, reference
from tools.course import notebooks, read
from tools.fingerprint import UTILS, code_hash, utils_hash

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

STALE_CODE = "code changed after its reference run: execute it again on the reference GPU"
STALE_UTILS = "utils/ changed after its reference run: execute it again on the reference GPU"


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stamp_is_current(path):
    assert reference.problems(path) == []


# ---------------------------------------------------------------- a stamped notebook, made current, to break
def _stamped(tmp_path, folder: str):
    utils_copy = tmp_path / "utils"
    shutil.copytree(UTILS, utils_copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "00_setup.ipynb"
    shutil.copy(ROOT / folder / path.name, path)
    nb = read(path)
    nb.metadata["course"]["reference_run"].update(code_hash=code_hash(nb), utils_hash=utils_hash(nb, path, utils_copy))
    nbformat.write(nb, path)
    assert reference.problems(path, utils_copy) == []
    return path, utils_copy


@pytest.fixture
def stamped_copy(tmp_path):
    """A copy of lecture 00 (it uses utils.benchmark and utils.format_bytes; a small notebook) and of
    utils/, stamped as current against that copy of utils/."""
    return _stamped(tmp_path, "notebooks")


@pytest.fixture
def stamped_solution_copy(tmp_path):
    """The same for the solutions of notebook 00, which import utils.exercises."""
    return _stamped(tmp_path, "solutions")


def edit_notebook(path, change):
    nb = read(path)
    change(nb)
    nbformat.write(nb, path)


def last_code_cell(nb):
    return [c for c in nb.cells if c.cell_type == "code"][-1]


@pytest.mark.parametrize("change, stale", [
    (lambda src: src + "\nprint('changed')", True),
    (lambda src: src.replace("(", "( ", 1), False),  # formatting
    (lambda src: src + "\n# a comment\n\n", False),
    (lambda src: "# a comment first\n" + src, False),
], ids=["a new statement", "formatting", "a comment after", "a comment before"])
def test_the_code_hash_follows_what_the_cells_do(stamped_copy, change, stale):
    path, utils_copy = stamped_copy

    def edit(nb):
        last_code_cell(nb).source = change(last_code_cell(nb).source)

    edit_notebook(path, edit)
    assert reference.problems(path, utils_copy) == ([STALE_CODE] if stale else [])


def test_a_requirement_is_code_too():
    cell = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[cell("%%requires cuda\nx = 1")])
    other = nbformat.v4.new_notebook(cells=[cell("%%requires cuda cupy\nx = 1")])
    same = nbformat.v4.new_notebook(cells=[cell("%%requires cuda  # a comment\n\nx = 1  # another")])
    assert code_hash(nb) != code_hash(other) and code_hash(nb) == code_hash(same)


def test_changed_prose_keeps_the_stamp(stamped_copy):
    path, utils_copy = stamped_copy
    edit_notebook(path, lambda nb: nb.cells.append(nbformat.v4.new_markdown_cell("More prose.")))
    assert reference.problems(path, utils_copy) == []


def edit_utils(utils_copy, relative, old, new):
    module = utils_copy / relative
    text = module.read_text()
    assert old in text, f"{relative} no longer holds {old!r}: update this test"
    module.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("relative, old, new, stale", [
    ("timing.py", "\n\n", "\n\n# a comment is not a change\n", False),
    ("memory.py", '"""', '"""One more sentence in a docstring. ', False),
    ("timing.py", "    min_time: float = 0.2,", "    min_time: float = 0.2,  # a comment in a signature", False),
    ("timing.py", "    min_time: float = 0.2,", "    min_time: float = 0.3,", True),  # a default argument
    ("formatting.py", "abs(value) < 1024", "abs(value) < 1000", True),  # a constant in code it runs (format_bytes)
    ("memory.py", "_EVENT_EFFECT = {", "_EVENT_EFFECT = {'planted': (0, 0), ", False),  # in code it never runs
    ("timing.py", "\ndef gpu_sleep(", "\ndef a_new_helper_nothing_calls():\n    return 1\n\n\ndef gpu_sleep(", False),
    ("exercises/nb00.py", "ex.expect(b >= 0,", "ex.expect(b > 0,", False),  # a lecture never imports utils.exercises
], ids=["a comment", "a docstring", "a comment in a signature", "a default argument", "a constant",
        "an unreached constant", "a new helper", "the exercises' checks, in a lecture"])
def test_the_utils_hash_follows_the_code_the_notebook_can_run(stamped_copy, relative, old, new, stale):
    path, utils_copy = stamped_copy
    edit_utils(utils_copy, relative, old, new)
    assert reference.problems(path, utils_copy) == ([STALE_UTILS] if stale else [])


@pytest.mark.parametrize("relative, old, new, stale", [
    ("exercises/answers/nb00.py", "\n\n", "\nWRONG_TOO = 1\n\n", False),  # wrong answers run in tests only
    ("exercises/nb05.py", "ROWS = 100", "ROWS = 101", False),  # another notebook's checks
    ("exercises/nb00.py", "ex.expect(b >= 0,", "ex.expect(b > 0,", True),  # its own checks (registered on import)
    ("exercises/nb00.py", "\nNOTEBOOK = ", "\nNOTHING_USES_THIS = 1\nNOTEBOOK = ", False),  # a constant nothing reads
    ("exercises/nb00.py", "\nNOTEBOOK = ", "\nprint('on import')\nNOTEBOOK = ", True),  # code that runs on import
], ids=["the wrong answers", "another notebook's checks", "its own checks", "an unused constant",
        "code run on import"])
def test_a_solution_counts_its_own_checks(stamped_solution_copy, relative, old, new, stale):
    path, utils_copy = stamped_solution_copy
    edit_utils(utils_copy, relative, old, new)
    assert reference.problems(path, utils_copy) == ([STALE_UTILS] if stale else [])


def test_a_helper_counts_once_a_cell_reaches_it(tmp_path):
    (tmp_path / "helpers.py").write_text(textwrap.dedent('''
        LIMIT = 3

        def used(x):
            """Called by the notebook."""
            return inner(x) + LIMIT

        def inner(x):
            return 2 * x

        def unused():
            return "never"

        def named_in_a_string():
            return 0

        def registered_on_import(name):
            return name

        UNREAD = "a constant that nothing reads"
        registered_on_import("named_in_a_string")
        '''))
    cells = [nbformat.v4.new_code_cell("import utils\nprint(utils.used(1))")]
    nb, path = nbformat.v4.new_notebook(cells=cells), tmp_path / "09_x.ipynb"
    reached = {name for _, name, _ in fingerprint.reachable_code(tmp_path, fingerprint.notebook_words(nb), "09")}
    assert reached == {"", "used", "inner", "LIMIT", "registered_on_import", "named_in_a_string"}
    before = utils_hash(nb, path, tmp_path)
    edit_utils(tmp_path, "helpers.py", '"never"', '"changed"')
    assert utils_hash(nb, path, tmp_path) == before
    edit_utils(tmp_path, "helpers.py", "2 * x", "3 * x")
    assert utils_hash(nb, path, tmp_path) != before


SAMPLE = '''
import torch


class Box:
    """A docstring."""

    def scaled(self, a, *, b=2, **rest):
        return [x async for x in a] if b else f"{a!r:>{b}} and {rest}" f"{b:.2f}" "!"
'''


def test_the_hash_is_the_same_on_every_python():
    """Stamps are made with the GPU machine's Python (3.12) and checked with a laptop's (3.11 and up):
    the canonical tree leaves out positions, docstrings, and what one version has and the other lacks
    (`type_params=[]` in 3.12).  The constant is this sample's hash; the GPU regression runs this test too."""
    tree = fingerprint.canonical(fingerprint.tree_of(SAMPLE))
    assert "type_params" not in repr(tree) and "lineno" not in repr(tree) and "docstring" not in repr(tree)
    assert fingerprint._digest([tree]) == "7fdb00674127bbf8", f"Python {sys.version}"


def test_missing_stamp(stamped_copy):
    path, utils_copy = stamped_copy
    edit_notebook(path, lambda nb: nb.metadata.pop("course"))
    assert "never executed on the reference GPU" in reference.problems(path, utils_copy)[0]


@pytest.mark.parametrize("field, value, complaint", [
    ("gpu", "Tesla T4", "not on a reference GPU (H100 or H200)"),
    ("seconds", 1000.0, "the budget is 90 s"),
    ("peak_gpu_memory_mib", 20000, "the budget is 12 GiB"),
])
def test_stamp_outside_the_course_limits(stamped_copy, field, value, complaint):
    path, utils_copy = stamped_copy
    edit_notebook(path, lambda nb: nb.metadata["course"]["reference_run"].update({field: value}))
    assert any(complaint in p for p in reference.problems(path, utils_copy))


def test_a_notebook_with_a_budget_of_its_own(stamped_copy, monkeypatch):
    """[tool.course.max_seconds_of] gives one notebook another time budget; the others keep max_seconds."""
    path, utils_copy = stamped_copy
    monkeypatch.setitem(reference.SETTINGS, "max_seconds_of", {path.stem: 150})
    edit_notebook(path, lambda nb: nb.metadata["course"]["reference_run"].update(seconds=120.0))
    assert reference.problems(path, utils_copy) == []
    edit_notebook(path, lambda nb: nb.metadata["course"]["reference_run"].update(seconds=151.0))
    assert any("the budget is 150 s" in p for p in reference.problems(path, utils_copy))
    monkeypatch.setitem(reference.SETTINGS, "max_seconds_of", {})
    edit_notebook(path, lambda nb: nb.metadata["course"]["reference_run"].update(seconds=120.0))
    assert any("the budget is 90 s" in p for p in reference.problems(path, utils_copy))


def test_check_fails_when_utils_changed(tmp_path, monkeypatch, capsys):
    """`python -m tools.reference check` itself (its exit status), with utils/ changed."""
    utils_copy = tmp_path / "utils"
    shutil.copytree(UTILS, utils_copy, ignore=shutil.ignore_patterns("__pycache__"))
    edit_utils(utils_copy, "claims.py", 'print(f"✓ {statement}")', 'print(f"OK {statement}")')
    monkeypatch.setattr(reference, "UTILS", utils_copy)
    assert reference.main(["check"]) == 1
    assert STALE_UTILS in capsys.readouterr().out


def test_stale_takes_the_solutions_of_stale_lectures(monkeypatch):
    lecture = ROOT / "notebooks" / "04_streams_cupy.ipynb"
    monkeypatch.setattr(reference, "problems", lambda p: ["stale"] if p == lecture else [])
    assert reference.stale() == [lecture, ROOT / "solutions" / "04_streams_cupy.ipynb"]
    assert reference.pytest_arguments("update", reference.stale()) == [
        "--stamp", "notebooks/04_streams_cupy.ipynb", "solutions/04_streams_cupy.ipynb",
        "--exercises-of", "04_streams_cupy", "tests"]
    assert reference.pytest_arguments("update", reference.stale(), every_test=True)[-2:] == [
        "solutions/04_streams_cupy.ipynb", "tests"]
    assert reference.pytest_arguments("update", []) == ["--stamp", "tests"]


def test_exercises_of_keeps_the_exercise_tests_of_those_notebooks_alone():
    """`update` after a change to lecture 04 runs 04's exercise tests, no other notebook's, and every other test."""
    # Collected in this process, as `pytest --collect-only -q` lists them (the tests that remain after the plugin's
    # deselection): its modules are imported already, so a collection costs its parametrization alone, where a fresh
    # `python -m pytest --collect-only` process spent seconds of CPU importing torch and the checks (2026-12-01).
    class Collected:
        def __init__(self):
            self.ids: list[str] = []

        def pytest_collection_finish(self, session):
            self.ids = [item.nodeid for item in session.items]

    def collected(*options):
        seen = Collected()
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(ROOT)
            status = pytest.main(["tests/test_exercises.py", "tests/test_timing.py", "--collect-only", "-q",
                                  "--host-tests", "--rootdir", str(ROOT), *INNER, *options], plugins=[seen])
        assert status == 0, f"the collection with {options} failed"
        return seen.ids

    every, only = collected(), collected("--exercises-of", "04_streams_cupy")
    exercise_tests = [t for t in every if re.search(r"\[\d\d_\w+:", t) or "test_run_all_on_an_untouched" in t]
    assert any("04_streams_cupy" in t for t in exercise_tests) and any("05_debugging" in t for t in exercise_tests)
    assert set(only) == {t for t in every if t not in exercise_tests or "04_streams_cupy" in t}


# ---------------------------------------------------------------- --stamp: nbval's run is the reference run
class FakeSampler:
    def stop(self):
        return 123


def _stamp_in_a_fresh_session(tmp_path, cells):
    """pytest --stamp over a notebook made of `cells`, with the GPU parts faked; the notebook, and pytest's status."""
    import pytest as pytest_

    path = tmp_path / "00_fake.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    env = {k: "?" for k in ("gpu", "compute_capability", "driver", "cuda_runtime", "torch", "cupy", "triton")}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reference, "require_reference_gpu", lambda: None)
        mp.setattr(reference, "environment_of_this_machine", lambda: env | {"gpu": "NVIDIA H100", "python": "3"})
        mp.setattr(reference, "GpuMemorySampler", FakeSampler)
        mp.setattr(reference, "ROOT", tmp_path)
        status = pytest_.main(["-p", "tools.pytest_plugin", "--stamp", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               *INNER, "--nbval-lax", "--nbval-current-env",
                               "--rootdir", str(tmp_path), str(path)])
    return read(path), status


def test_stamp_saves_the_outputs_of_a_notebook_that_passed(tmp_path):
    nb, status = _stamp_in_a_fresh_session(tmp_path, ["x = 6 * 7\nprint(x)", "x + 1", "x + 2;"])
    assert status == 0
    first, second, quiet = [c for c in nb.cells if c.cell_type == "code"]
    assert quiet.outputs == []  # a closing `;` hides the value, as in JupyterLab
    assert [(o.output_type, o.text) for o in first.outputs] == [("stream", "42\n")]
    assert second.outputs[0].output_type == "execute_result" and second.outputs[0].data["text/plain"] == "43"
    assert [first.execution_count, second.execution_count, second.outputs[0].execution_count] == [1, 2, 2]
    stamp = nb.metadata["course"]["reference_run"]
    assert stamp["gpu"] == "NVIDIA H100" and stamp["peak_gpu_memory_mib"] == 123 and stamp["seconds"] > 0
    assert stamp["code_hash"] == code_hash(nb) and json.dumps(stamp)


def test_stamp_leaves_a_notebook_with_a_failing_cell_as_it_was(tmp_path):
    nb, status = _stamp_in_a_fresh_session(tmp_path, ["print(1)", "1 / 0"])
    assert status == pytest.ExitCode.TESTS_FAILED  # cell 1 failed; cell 0 passed, and is not saved either
    assert "course" not in nb.metadata and all(c.outputs == [] for c in nb.cells)


def test_saved_outputs_keep_text_and_plots_in_their_order():
    from tools.pytest_plugin import outputs_of

    def message(kind, parent="run", **content):
        return {"msg_type": kind, "parent_header": {"msg_id": parent}, "content": content}

    plot = {"data": {"image/png": "iVBOR"}, "metadata": {}}
    outputs = outputs_of([
        message("status", execution_state="busy"), message("execute_input", code="...", execution_count=1),
        message("stream", name="stdout", text="before "), message("stream", name="stdout", text="the plot\n"),
        message("display_data", **plot), message("stream", name="stdout", text="after it\n"),
        message("stream", name="stdout", parent="another cell", text="not this cell's\n"),
    ])
    assert outputs == [{"output_type": "stream", "name": "stdout", "text": "before the plot\n"},
                       {"output_type": "display_data", **plot},
                       {"output_type": "stream", "name": "stdout", "text": "after it\n"}]


def test_a_run_is_not_saved_over_code_that_changed_meanwhile(tmp_path):
    path = tmp_path / "00_fake.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")]), path)
    ran = code_hash(read(path))
    edit_notebook(path, lambda nb: setattr(nb.cells[0], "source", "print(2)"))
    with pytest.raises(reference.NotSaved, match="changed on disk"):
        reference.save_run(path, ran, {0: []}, {}, 1.0, 0, {})
    with pytest.raises(reference.NotSaved, match=r"cells \[0\] did not run"):
        reference.save_run(path, code_hash(read(path)), {}, {}, 1.0, 0, {})


def test_a_module_the_package_does_not_import_counts_only_where_a_cell_names_it(tmp_path):
    (tmp_path / "__init__.py").write_text("from .loaded import used\n")
    (tmp_path / "loaded.py").write_text("from . import deeper\n\ndef used():\n    return deeper.K\n")
    (tmp_path / "deeper.py").write_text("K = 1\n")
    (tmp_path / "optional.py").write_text("def used():\n    return 2\n")  # the same name, not imported
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import utils\nutils.used()")])
    naming = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("from utils import optional\noptional.used()")])
    path = tmp_path / "09_x.ipynb"
    before_plain, before_naming = utils_hash(plain, path, tmp_path), utils_hash(naming, path, tmp_path)
    edit_utils(tmp_path, "optional.py", "return 2", "return 3")
    assert utils_hash(plain, path, tmp_path) == before_plain
    assert utils_hash(naming, path, tmp_path) != before_naming
    edit_utils(tmp_path, "deeper.py", "K = 1", "K = 2")  # imported through another module: counts
    assert utils_hash(plain, path, tmp_path) != before_plain
