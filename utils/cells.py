"""GPU-only notebook cells: `%%requires cuda` (or `cupy`, or `compute-sanitizer`, or `triton`, or several)
as a cell's first line.  (`triton` alone also runs on a CPU, through Triton's interpreter.)

With what the cell needs, the cell runs as usual.  Without it, the cell is not run and prints one
line saying what was missing and why, so Run All finishes on any machine:

    %%requires cuda
    x = torch.randn(4096, 4096, device="cuda")
    ...

prints on a laptop without an NVIDIA GPU:

    skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build — run it on a GPU (Colab: ...)

Keep everything that needs the GPU inside such cells, including code that reads variables those
cells define: on a CPU they are never created.

On such a machine the skipped cell then shows what it printed and plotted in the course's reference
run on a GPU (the executed notebooks committed in notebooks/ and solutions/), in a tinted, framed
block labelled "Reference output", with that run's GPU, date and versions, so that it cannot pass
for this machine's output.  Where HTML is not shown (a terminal), the same block is plain text under
a line "↳ reference output, from the course's run on ...".  The reference is found by the cell's
exact text: a cell you edited, or an exercise whose answer is yours to write, shows nothing more.

JupyterLab saves what a student's run showed over the reference outputs in the file (autosave).  So
the block carries the reference itself in its output metadata (`course_reference`), and reading a
notebook takes a skipped cell's reference from there, never the block or the skip line as outputs:
after any number of run, save, restart, the cell shows one block, the reference run's.

How: importing `utils` adds an IPython input transformer, which sees each cell's text before it
runs.  It turns the `%%requires` line into a comment when the requirements are met (so the cell
runs as an ordinary cell: same tracebacks, same line numbers, its last value displayed) and
otherwise swaps the whole cell for the `print` of the reason.  The line must be the cell's first.
If a cell says "UsageError: Cell magic `%%requires` not found", the kernel has not imported
`utils` yet (after a restart, say): run the setup cell first.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from .device import cuda_status, cupy_status, sanitizer_status, triton_status

_CHECKS = {"cuda": cuda_status, "cupy": cupy_status, "compute-sanitizer": sanitizer_status, "triton": triton_status}
_RUNS_ON_A_CPU = {"triton"}  # runs without a GPU (its interpreter): its reason says how to install it
_MARK = "%%requires"


_HINT = " — run it on a GPU (Colab: Runtime → Change runtime type → T4 GPU)"


def missing(requirements: list[str]) -> str | None:
    """None when every requirement is met, else one line: which one is missing, why, and what to do."""
    unknown = [req for req in requirements if req not in _CHECKS]
    if unknown:  # checked first, so a typo fails on every machine, not only on a GPU
        raise ValueError(f"{_MARK}: unknown requirement {unknown[0]!r}; use {' or '.join(_CHECKS)}")
    for req in requirements:
        status = _CHECKS[req]()
        if not status.ok:
            # Where PyTorch has a GPU, the reason alone says what to fix; on Colab it has the hint already.
            no_gpu = (not cuda_status().ok and "Change runtime type" not in status.reason
                      and req not in _RUNS_ON_A_CPU)
            return f"skipped (needs {req}): {status.reason}{_HINT if no_gpu else ''}"
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


class Reference(NamedTuple):
    """A cell's outputs in the reference run, and the run they came from."""

    outputs: list[dict]
    label: str  # one line: "reference output, from the course's run on GPU (date, notebook):"
    versions: str  # "PyTorch 2.11.0+cu130, CuPy 14.2.0", as stamped


REFERENCE_METADATA = "course_reference"  # a shown block's output metadata: the reference it shows
_SKIP_LINE = re.compile(r"skipped \(needs [\w-]+\): .*", re.DOTALL)  # what `missing` printed, as one output


def carried_reference(value: object) -> Reference | None:
    """The Reference a shown block carries in its metadata; None if it is not one (or is malformed)."""
    if not isinstance(value, dict):
        return None
    outputs, label, versions = value.get("outputs"), value.get("label"), value.get("versions", "")
    if not (isinstance(outputs, list) and all(isinstance(o, dict) for o in outputs)
            and isinstance(label, str) and isinstance(versions, str)):
        return None
    return Reference(outputs, label, versions)


def _is_shown_block(out: dict) -> bool:
    """A reference block that show_reference displayed (saved by JupyterLab over the reference outputs),
    with its metadata or from before it had any."""
    data = out.get("data", {}) if isinstance(out.get("data"), dict) else {}
    return REFERENCE_METADATA in (out.get("metadata") or {}) \
        or 'class="course-reference-output"' in _joined(data.get("text/html", ""))[:80]


def _is_skip_line(out: dict) -> bool:
    return out.get("output_type") == "stream" and out.get("name") == "stdout" \
        and _SKIP_LINE.fullmatch(_joined(out.get("text", ""))) is not None


def saved_reference(cell: dict, label: str, versions: str) -> Reference | None:
    """The reference outputs a notebook's code cell holds, whether it ran on the reference GPU or a
    student's JupyterLab saved it after the cell was skipped (its skip line and the block shown).

    A skipped cell's reference is the one its block carries; the skip line, and a block from before
    blocks carried one, are not outputs of the cell.  None: nothing to show.
    """
    outputs = [o for o in cell.get("outputs", []) if isinstance(o, dict) and o.get("output_type") != "error"]
    if _source(cell).startswith(_MARK):
        for out in outputs:
            carried = carried_reference((out.get("metadata") or {}).get(REFERENCE_METADATA))
            if carried is not None:
                return carried if carried.outputs else None
        outputs = [o for o in outputs if not _is_skip_line(o) and not _is_shown_block(o)]
    return Reference(outputs, label, versions) if outputs else None


@cache
def reference_index(root: Path = COURSE_ROOT) -> dict[str, Reference]:
    """Every reference output in the course, by source_key, read once per session.

    Cells whose text also stands in an exercise notebook (a check, or a cell that uses the
    student's answer) are left out: their output depends on what the student wrote.
    """
    in_exercises = {source_key(_source(c)) for p in sorted((root / EXERCISE_FOLDER).glob("*.ipynb"))
                    for c in _cells(p) if c.get("cell_type") == "code"}
    index: dict[str, Reference] = {}
    for folder in REFERENCE_FOLDERS:
        for path in sorted((root / folder).glob("*.ipynb")):
            try:
                stamp = json.loads(path.read_text(encoding="utf-8"))["metadata"]["course"]["reference_run"]
            except (OSError, ValueError, KeyError):
                continue  # never executed on the reference GPU: nothing to show
            label = (f"reference output, from the course's run on {stamp['gpu']} ({stamp['date']}, "
                     f"{folder}/{path.name}):")
            versions = ", ".join(f"{name} {stamp[key]}" for key, name in (("torch", "PyTorch"), ("cupy", "CuPy"))
                                 if stamp.get(key))
            for cell in _cells(path):
                key = source_key(_source(cell))
                ref = saved_reference(cell, label, versions) if cell.get("cell_type") == "code" else None
                if ref is not None and key not in in_exercises:
                    index.setdefault(key, ref)
    return index


# ------------------------------------------------------------------------------------------------
# How a reference is shown: one block, HTML for JupyterLab and Colab, plain text for the rest
# ------------------------------------------------------------------------------------------------
# Colours: translucent tints over whatever the theme's background is, with the theme's own text
# colour, so that text keeps its contrast in light and dark themes alike (Colab has no JupyterLab
# CSS variables; the font variables have fallbacks).  The amber of the frame stands out from both
# a white and a near-black background (contrast about 3.3 and 5.8).
_AMBER = "#b8860b"
_BOX = (f"border: 2px dashed {_AMBER}; border-radius: 4px; background: rgba(255, 184, 0, 0.12); "
        "color: inherit; margin: 2px 0; overflow: hidden")
_LABEL = (f"background: rgba(255, 184, 0, 0.32); border-bottom: 1px solid {_AMBER}; color: inherit; "
          "padding: 3px 8px; font-family: var(--jp-ui-font-family, sans-serif); font-size: 0.9em")
_PRE = ("margin: 0; padding: 4px 8px; background: transparent; color: inherit; border: none; "
        "white-space: pre-wrap; overflow-wrap: anywhere; "
        "font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 13px)")
_STDERR = "background: rgba(255, 64, 64, 0.16); border-left: 4px solid #d32f2f"  # as a stderr output is tinted
_IMG = ("max-width: calc(100% - 16px); height: auto; margin: 4px 8px; display: block; "
        "background: white")  # white behind a transparent plot: its dark text stays legible in a dark theme
_IMAGES = ("image/png", "image/jpeg", "image/svg+xml")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colour codes in printed text: a terminal's, not HTML's


def _joined(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value  # nbformat stores text as a list of lines


def _streams(outputs: list[dict]) -> list[dict]:
    """The outputs, with consecutive text of one stream joined into one output (as Jupyter shows it)."""
    joined: list[dict] = []
    for out in outputs:
        if out.get("output_type") == "stream" and joined and joined[-1].get("output_type") == "stream" \
                and joined[-1].get("name") == out.get("name"):
            joined[-1] = {**joined[-1], "text": _joined(joined[-1].get("text", "")) + _joined(out.get("text", ""))}
        else:
            joined.append(out)
    return joined


def reference_text(ref: Reference) -> str:
    """The reference as plain text: the label line, then what the cell printed (and the text of what it
    displayed, other than plots)."""
    parts = [f"↳ {ref.label}\n"]
    for out in ref.outputs:
        kind, data = out.get("output_type"), out.get("data", {})
        if kind == "stream":
            parts.append(_joined(out.get("text", "")))
        elif kind in ("display_data", "execute_result") and "text/plain" in data \
                and not any(mime in data for mime in _IMAGES):
            parts.append(_joined(data["text/plain"]).rstrip("\n") + "\n")
    return "".join(parts)


def _pre(text: str, style: str = _PRE) -> str:
    return f'<pre style="{style}">{html.escape(_ANSI.sub("", text))}</pre>'


def _rich(data: dict, metadata: dict) -> str:
    """One displayed output as HTML: its HTML as it is, else its image at its own size, else its text."""
    if "text/html" in data:
        return f'<div style="padding: 4px 8px">{_joined(data["text/html"])}</div>'
    for mime in _IMAGES:
        if mime in data:
            text = _joined(data[mime])  # SVG is stored as text; PNG and JPEG as base64, in lines or not
            payload = base64.b64encode(text.encode()).decode() if mime.endswith("xml") else "".join(text.split())
            size = metadata.get(mime, {}) if isinstance(metadata.get(mime), dict) else {}
            attrs = "".join(f' {dim}="{int(size[dim])}"' for dim in ("width", "height") if dim in size)
            return (f'<img src="data:{mime};base64,{payload}"{attrs} style="{_IMG}" '
                    f'alt="a plot from the reference run">')
    return _pre(_joined(data["text/plain"])) if "text/plain" in data else ""


def reference_html(ref: Reference) -> str:
    """The reference as one marked block: a label naming the run, then each output as it was shown."""
    origin = ref.label.removeprefix("reference output, ").removesuffix(":")
    versions = f"; {ref.versions}" if ref.versions else ""
    label = f"{origin}{versions}"
    parts = [f'<div style="{_LABEL}"><b>Reference output</b>, not run on this machine: {html.escape(label)}</div>']
    for out in _streams(ref.outputs):
        kind = out.get("output_type")
        if kind == "stream":
            stderr = out.get("name") == "stderr"
            parts.append(_pre(_joined(out.get("text", "")), f"{_PRE}; {_STDERR}" if stderr else _PRE))
        elif kind in ("display_data", "execute_result"):
            parts.append(_rich(out.get("data", {}), out.get("metadata", {})))
    return f'<div class="course-reference-output" style="{_BOX}">{"".join(parts)}</div>'


def show_reference(key: str) -> bool:
    """Display the reference outputs of the cell whose source_key is `key`; False if there are none."""
    ref = reference_index().get(key)
    if ref is None:
        return False
    from IPython.display import publish_display_data

    carried = {"outputs": ref.outputs, "label": ref.label, "versions": ref.versions}  # what a saved copy reads
    publish_display_data({"text/plain": reference_text(ref), "text/html": reference_html(ref)},
                         metadata={REFERENCE_METADATA: carried})
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
