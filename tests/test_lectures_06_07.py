"""Statements of notebooks 06 and 07 that a CPU can check: a GPU cell's logic, and a library default."""

from pathlib import Path

import pytest
import torch

from tools.course import read

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def cell_containing(notebook: str, text: str) -> str:
    """The source of the one code cell of notebooks/<notebook> that contains text."""
    found = [c.source for c in read(NOTEBOOKS / notebook).cells if c.cell_type == "code" and text in c.source]
    assert len(found) == 1, f"{len(found)} code cells of {notebook} contain {text!r}"
    return found[0]


def test_the_gradscaler_cell_skips_the_step_with_an_inf_and_halves_the_scale(capsys):
    """Notebook 06's GradScaler cells (the step, then the three batches), run on the CPU: their claims raise here
    if a step behaves otherwise."""
    cells = [cell_containing("06_precision.ipynb", text)
             for text in ('torch.amp.GradScaler("cuda"', 'bad[0, 0] = float("inf")')]
    source = "\n".join(cell.removeprefix("%%requires cuda\n") for cell in cells)
    source = source.replace('"cuda"', '"cpu"').replace(".cuda()", "")
    import torch.nn.functional as F

    from utils import claim

    namespace = {"torch": torch, "F": F, "claim": claim}
    exec(compile(source, "06_precision: GradScaler cell", "exec"), namespace)  # noqa: S102 -- the notebook's own cell
    printed = capsys.readouterr().out
    assert "scale   1024 ->    512; parameters updated: False" in printed


def test_reduce_overhead_records_a_graph_per_shape_by_default():
    """Notebook 07, section 11: dynamic shapes are not skipped unless this flag is set."""
    import torch._inductor.config as inductor_config

    assert inductor_config.triton.cudagraph_skip_dynamic_graphs is False
    assert inductor_config.triton.cudagraph_trees is True
