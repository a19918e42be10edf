"""Lectures 04 and 05 start fresh processes in the background (utils.start_process): what must hold of them."""

import ast
import re
from pathlib import Path

import nbformat

from conftest import ROOT, host

LECTURE_05 = ROOT / "notebooks" / "05_debugging.ipynb"


def code_cells(path: Path) -> list[str]:
    """Each code cell's source, Python only: its cell magic line (`%%requires ...`) set aside, shell lines passed."""
    cells = nbformat.read(path, as_version=4).cells
    return [re.sub(r"(?m)^(\s*)!.*$", r"\1pass", re.sub(r"^%%.*\n", "", cell.source))
            for cell in cells if cell.cell_type == "code"]


def calls_of(source: str, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name]


@host
def test_sanitized_processes_with_caching_off_run_one_at_a_time():
    """Two compute-sanitizer processes with caching off once hung side by side: each goes to the one-at-a-time lane."""
    calls = [call for source in code_cells(LECTURE_05) for call in calls_of(source, "sanitized")]
    off = [call for call in calls
           if any(isinstance(k.value, ast.Name) and k.value.id == "NO_CACHING" for k in call.keywords if k.arg == "env")
           or any(isinstance(a, ast.Constant) and a.value == "no pool" for a in call.args)]
    assert len(off) >= 3, f"expected three runs with caching off, found {len(off)} of {len(calls)} sanitized() calls"
    for call in off:
        lane = [k for k in call.keywords if k.arg == "caching_off"]
        assert lane and isinstance(lane[0].value, ast.Constant) and lane[0].value.value is True, (
            f"sanitized(...) with caching off at line {call.lineno} of its cell does not pass caching_off=True")


@host
def test_every_process_started_in_the_background_is_read_by_a_later_cell():
    """Lecture 05 starts its untimed processes early and shows each in a later cell: none may be started and left."""
    sources = code_cells(LECTURE_05)
    keys: list[tuple[int, str]] = []
    for n, source in enumerate(sources):
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Assign):
                continue
            named = [t for t in node.targets if isinstance(t, ast.Name) and t.id.endswith("started")]
            if named and isinstance(node.value, ast.Dict):
                keys += [(n, k.value) for k in node.value.keys if isinstance(k, ast.Constant)]
            keys += [(n, t.slice.value) for t in node.targets if isinstance(t, ast.Subscript)
                     and isinstance(t.value, ast.Name) and t.value.id.endswith("started")
                     and isinstance(t.slice, ast.Constant)]
    assert len(keys) >= 15, f"expected the processes of sections 2 to 6, found {len(keys)}"
    for n, key in keys:
        assert any(f'"{key}"' in source for source in sources[n + 1:]), (
            f"the process {key!r}, started in code cell {n}, is never read by a later cell")
