"""GPU-only notebook cells: `%%requires cuda` (or `cupy`, or both) as a cell's first line.

With what the cell needs, the cell runs as usual.  Without it, the cell is not run and prints one
line saying what was missing and why, so Run All finishes on any machine:

    %%requires cuda
    x = torch.randn(4096, 4096, device="cuda")
    ...

prints on a laptop without an NVIDIA GPU:

    skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build

Keep everything that needs the GPU inside such cells, including code that reads variables those
cells define: on a CPU they are never created.

How: importing `utils` adds an IPython input transformer, which sees each cell's text before it
runs.  It turns the `%%requires` line into a comment when the requirements are met (so the cell
runs as an ordinary cell: same tracebacks, same line numbers, its last value displayed) and
otherwise swaps the whole cell for the `print` of the reason.  The line must be the cell's first.
If a cell says "UsageError: Cell magic `%%requires` not found", the kernel has not imported
`utils` yet (after a restart, say): run the setup cell first.
"""

from __future__ import annotations

from .device import cuda_status, cupy_status

_CHECKS = {"cuda": cuda_status, "cupy": cupy_status}
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
    return [f"print({reason!r})\n"]


def register() -> None:
    """Install `transform` in the running IPython kernel, once (a no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    if ip is not None and transform not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.insert(0, transform)
