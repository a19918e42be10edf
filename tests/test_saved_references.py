"""Issue 24: a student runs a lecture on a laptop, JupyterLab saves it (autosave) over the reference
outputs, the kernel restarts, Run All: each skipped GPU cell must still show one reference block,
the reference run's, not a block inside a block.

Run as it happens, on a temporary copy of the course: nbclient executes the lecture in a fresh
kernel (the kernel imports the copy's `utils`, which reads the copy's notebooks), the executed
notebook is written over the file as JupyterLab saves it, and the next run starts another kernel.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import copy_course, cpu_only
from tools.fingerprint import code_hash
from tools.pytest_plugin import reference_not_shown
from utils import cells

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

LECTURE = "notebooks/00_setup.ipynb"  # small, with skipped cells that print and one that plots
RUNS = 2  # run, save, restart, run: the second reads what the first saved; equal to it, so would a third


def run_and_save(path: Path) -> nbformat.NotebookNode:
    """Run All in a fresh kernel (a restart: the kernel reads the references anew), then save over the file."""
    nb = nbformat.read(path, as_version=4)
    # coalesce_streams: one text output per stream, as JupyterLab shows and saves it; on a busy machine
    # ipykernel sent one print in two messages, and nbclient alone kept them as two outputs
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False, coalesce_streams=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)  # as JupyterLab's save: the outputs this machine showed replace the file's
    return nb


def plain(value):
    """Outputs as one form: text as one string, as nbformat reads it (a file stores it as a list of lines)."""
    if isinstance(value, dict):
        return {k: "".join(v) if k in ("text", "text/plain", "text/html", "image/png") and isinstance(v, list)
                else plain(v) for k, v in value.items()}
    return [plain(v) for v in value] if isinstance(value, list) else value


def blocks(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [o for o in cell.outputs if o.output_type == "display_data"
            and 'class="course-reference-output"' in o.get("data", {}).get("text/html", "")]


def shown(cell: nbformat.NotebookNode) -> tuple[int, int, str, str, dict]:
    """What a skipped cell shows: blocks as outputs, blocks inside its HTML, its text, its HTML, its metadata."""
    (block,) = blocks(cell)
    html = block.data["text/html"]
    return (len(blocks(cell)), html.count('class="course-reference-output"'), block.data["text/plain"], html,
            block.metadata.get(cells.REFERENCE_METADATA))


@cpu_only
def test_run_save_restart_keeps_one_block_with_the_reference_runs_outputs(tmp_path, monkeypatch):
    course = copy_course(tmp_path)
    path = course / LECTURE
    original = nbformat.read(path, as_version=4)
    # The lecture's set-up cell and its GPU cells alone: the other cells have nothing to do with the
    # references, and each run costs a kernel's start and these cells only.
    first_code = next(c for c in original.cells if c.cell_type == "code")
    original.cells = [first_code] + [c for c in original.cells if c.cell_type == "code"
                                     and c.source.startswith("%%requires") and c.outputs]
    nbformat.write(original, path)
    read_index = cells.reference_index.__wrapped__  # uncached: reads the files as they are now
    before = read_index(course)  # what nbval's check expects: the reference run's
    monkeypatch.setattr(cells, "reference_index", lambda: before)
    skipped = [n for n, c in enumerate(original.cells) if c.cell_type == "code"
               and c.source.startswith("%%requires") and c.outputs]
    assert len(skipped) >= 3, f"{LECTURE} has too few GPU cells with reference outputs to test with"
    runs = [run_and_save(path) for _ in range(RUNS)]
    for n in skipped:
        cell = original.cells[n]
        first = None
        for number, nb in enumerate(runs, 1):
            out = nb.cells[n].outputs
            where = f"{LECTURE}, cell {n} ({cell.source.splitlines()[0]!r}), run {number}"
            assert out and out[0].output_type == "stream" and out[0].text.startswith("skipped (needs "), where
            assert len(blocks(nb.cells[n])) == 1 and len(out) == 2, f"{where}: {[o.output_type for o in out]}"
            now = shown(nb.cells[n])
            assert now[1] == 1 and now[2].count("↳ reference output") == 1, f"{where}: a block inside a block"
            first = first or now
            assert reference_not_shown(cell.source, [dict(o) for o in out]) is None, where  # nbval's check
            assert now == first, f"{where}: shows another block than the first run"
        carried = first[4] if first else None  # the reference the block carries, for the next run to read
        assert carried and plain(carried["outputs"]) == plain(cell.outputs), f"cell {n}: not the reference's outputs"
    saved = nbformat.read(path, as_version=4)  # the stamp still holds: it follows the code, not the outputs
    assert code_hash(saved) == code_hash(original) and saved.metadata["course"] == original.metadata["course"]
    # what was saved is still read as the reference run's (the index of a fresh process)
    index = read_index(course)
    for n in skipped:
        assert plain(index[cells.source_key(original.cells[n].source)].outputs) == plain(original.cells[n].outputs)
