"""Make the repository's root importable (utils, tools) for every test."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import utils  # noqa: E402

gpu = pytest.mark.skipif(not utils.has_cuda(), reason=f"needs a CUDA GPU: {utils.cuda_status().reason}")
cpu_only = pytest.mark.skipif(utils.has_cuda(), reason="checks the behaviour on a machine without a GPU")


def definitions_of(path: Path, names: list[str]) -> list:
    """The named functions (or classes) of an exercise or solution notebook, defined as in the notebook.

    Runs the notebook's imports cell (the code cell after the setup cell) and its definition cells
    (those starting with def, class or a decorator), nothing else: what a check cell is given.
    """
    from tools.course import read

    code = [cell.source for cell in read(path).cells if cell.cell_type == "code"]
    namespace: dict = {}
    exec(code[1], namespace)
    for source in code[2:]:
        if source.startswith(("def ", "class ", "@")):
            exec(source, namespace)
    return [namespace[name] for name in names]
