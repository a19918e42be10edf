"""GPU-only notebook cells: `%%requires cuda` (or `cupy`, or `compute-sanitizer`, or several) as a
cell's first line.

With what the cell needs, the cell runs as usual.  Without it, the cell is not run and prints one
line saying what was missing and why, so Run All finishes on any machine:

    %%requires cuda
    x = torch.randn(4096, 4096, device="cuda")
    ...

prints on a laptop without an NVIDIA GPU:

    skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build

Keep everything that needs the GPU inside such cells, including code that reads variables those
cells define: on a CPU they are never created.

On such a machine the skipped cell then shows what it printed and plotted in the course's reference
run on a GPU (the executed notebooks committed in notebooks/ and solutions/), under a line naming
that run's GPU and date.  The reference is found by the cell's exact text: a cell you edited, or an
exercise whose answer is yours to write, shows nothing more.

How: importing `utils` adds an IPython input transformer, which sees each cell's text before it
runs.  It turns the `%%requires` line into a comment when the requirements are met (so the cell
runs as an ordinary cell: same tracebacks, same line numbers, its last value displayed) and
otherwise swaps the whole cell for the `print` of the reason.  The line must be the cell's first.
If a cell says "UsageError: Cell magic `%%requires` not found", the kernel has not imported
`utils` yet (after a restart, say): run the setup cell first.
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import cache
from pathlib import Path

from .device import cuda_status, cupy_status, sanitizer_status

_CHECKS = {"cuda": cuda_status, "cupy": cupy_status, "compute-sanitizer": sanitizer_status}
_MARK = "%%requires"


def missing(requirements: list[str]) -> str | None:
    """None when every requirement is met, else one line: which one is missing, and why."""
    unknown = [req for req in requirements if req not in _CHECKS]
    if unknown:  # checked first, so a typo fails on every machine, not only on a GPU
        raise ValueError(f"{_MARK}: unknown requirement {unknown[0]!r}; use {' or '.join(_CHECKS)}")
    for req in requirements:
        status = _CHECKS[req]()
        if not status.ok:
            return f"skipped (needs {req}): {status.reason}"
    return None


def transform(lines: list[str]) -> list[str]:
    """Rewrite a cell that starts with `%%requires ...` (IPython calls this with the cell's lines)."""
    if not lines or not lines[0].startswith(_MARK):
        return lines
    requirements = lines[0].split("#")[0].split()[1:] or ["cuda"]  # a trailing comment is allowed
    reason = missing(requirements)
    if reason is None:
        return ["# " + lines[0], *lines[1:]]  # a comment: the cell's line numbers stay as written
    show = f"__import__('utils.cells').cells.show_reference({source_key(''.join(lines))!r});\n"  # ; shows no value
    return [f"print({reason!r})\n", show]


# ------------------------------------------------------------------------------------------------
# Reference outputs: what a skipped cell printed and plotted in the course's run on a GPU
# ------------------------------------------------------------------------------------------------
COURSE_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_FOLDERS = ("notebooks", "solutions")  # executed and stamped on the reference GPU
EXERCISE_FOLDER = "exercises"  # generated, no outputs: a cell found here depends on the student's answer


def source_key(source: str) -> str:
    """A cell's identity for finding its reference outputs: a hash of its text, ends stripped."""
    return hashlib.sha256(source.strip().encode()).hexdigest()[:16]


def _cells(path: Path) -> list[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):  # a notebook being saved, or not a notebook: no references from it
        return []


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


@cache
def reference_index(root: Path = COURSE_ROOT) -> dict[str, tuple[list[dict], str]]:
    """Every reference output in the course: {source_key: (outputs, label)}, read once per session.

    Cells whose text also stands in an exercise notebook (a check, or a cell that uses the
    student's answer) are left out: their output depends on what the student wrote.
    """
    in_exercises = {source_key(_source(c)) for p in sorted((root / EXERCISE_FOLDER).glob("*.ipynb"))
                    for c in _cells(p) if c.get("cell_type") == "code"}
    index: dict[str, tuple[list[dict], str]] = {}
    for folder in REFERENCE_FOLDERS:
        for path in sorted((root / folder).glob("*.ipynb")):
            try:
                stamp = json.loads(path.read_text(encoding="utf-8"))["metadata"]["course"]["reference_run"]
            except (OSError, ValueError, KeyError):
                continue  # never executed on the reference GPU: nothing to show
            label = (f"reference output, from the course's run on {stamp['gpu']} ({stamp['date']}, "
                     f"{folder}/{path.name}):")
            for cell in _cells(path):
                key = source_key(_source(cell))
                outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "error"]
                if cell.get("cell_type") == "code" and outputs and key not in in_exercises:
                    index.setdefault(key, (outputs, label))
    return index


def show_reference(key: str) -> bool:
    """Display the reference outputs of the cell whose source_key is `key`; False if there are none."""
    found = reference_index().get(key)
    if found is None:
        return False
    outputs, label = found
    from IPython.display import publish_display_data

    print(f"↳ {label}")
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = out.get("text", "")
            stream = sys.stderr if out.get("name") == "stderr" else sys.stdout
            stream.write("".join(text) if isinstance(text, list) else text)
            stream.flush()
        elif kind in ("display_data", "execute_result"):
            data = {mime: "".join(v) if isinstance(v, list) and not mime.endswith("json") else v
                    for mime, v in out.get("data", {}).items()}  # nbformat stores text as a list of lines
            publish_display_data(data, out.get("metadata", {}))
    return True


def register() -> None:
    """Install `transform` in the running IPython kernel, once (a no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    if ip is not None and transform not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.insert(0, transform)
