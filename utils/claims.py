"""Claims: a statement about GPU behaviour, checked right where it is measured.

A lecture does not just say "without a synchronization the loop times the launch": it measures both
times and then states the claim in code, next to the measurement:

    claim(no_sync < 0.1 * synced, "without a sync the loop times the launch, not the kernel",
          no_sync=utils.format_time(no_sync), synced=utils.format_time(synced))

which prints

    ✓ without a sync the loop times the launch, not the kernel

or, where this GPU behaves otherwise,

    ✗ without a sync the loop times the launch, not the kernel
      measured: no_sync = 3.10 µs, synced = 25.0 µs
      why it can differ: measured on Tesla T4 ...

and Run All goes on: on your GPU a claim may not hold, and that is worth seeing, not a crash.

Under the course's own tests and its reference run the same call is **strict**: a claim that does
not hold raises `ClaimFailed`, so that a regression on the reference GPU fails loudly.  Strict mode
is on when the environment variable COURSE_STRICT_CLAIMS is "1" (tests/conftest.py and
`python -m tools.reference run` set it; the notebook's kernel inherits it).

Why by hand: pytest's assert rewriting explains a failed assert, but only inside pytest and only by
stopping; a lecture needs the explanation for a student and the stop for a maintainer.
"""

from __future__ import annotations

import numbers
import os

from .formatting import three_digits

STRICT_VARIABLE = "COURSE_STRICT_CLAIMS"


class ClaimFailed(AssertionError):
    """A claim about GPU behaviour did not hold (raised in strict mode only)."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of printing a traceback: the message says everything.
        return str(self).splitlines()


def strict() -> bool:
    """True under the course's tests and reference run: a failed claim raises instead of printing."""
    return os.environ.get(STRICT_VARIABLE) == "1"


def _where() -> str:
    """The GPU (or CPU) these numbers were measured on, for the ✗ message."""
    from .device import cuda_status

    status = cuda_status()
    return status.reason.removeprefix("CUDA GPU: ") if status.ok else "a machine without a CUDA GPU"


def _show(value: object) -> str:
    """A measured value for the ✗ message: floats with 3 significant digits, anything else as str()."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return three_digits(float(value))  # also NumPy's floats
    return str(value)


def claim(
    holds: object,
    statement: str,
    *,
    why: str = "",
    applies: bool = True,
    not_applicable: str = "",
    **measured: object,
) -> None:
    """Check a claim about GPU behaviour; print ✓ or ✗ with the measured values.

    It returns nothing, so that a claim on a cell's last line adds no `True` under the cell.

    holds: the check itself, a comparison of quantities measured on this machine (a ratio with
        slack, never an absolute time).
    statement: the claim in words, as the lecture states it.
    why: why a GPU other than the reference one may differ (fewer SMs, a slower host, PCIe 3, ...).
    applies: False where the claim belongs to a class of hardware this machine is not in (TF32 needs
        compute capability 8.0, expandable segments need Linux); then nothing is checked and
        `not_applicable` says why.
    measured: the values behind the check, shown when it fails (format times with
        utils.format_time and sizes with utils.format_bytes first).

    In strict mode (COURSE_STRICT_CLAIMS=1) a claim that does not hold raises ClaimFailed.
    """
    if not applies:
        print(f"– not checked here: {statement} ({not_applicable or 'does not apply to this machine'})")
        return
    if bool(holds):
        print(f"✓ {statement}")
        return
    lines = [f"✗ {statement}"]
    if measured:
        lines.append("  measured: " + ", ".join(f"{name} = {_show(value)}" for name, value in measured.items()))
    lines.append(f"  why it can differ: measured on {_where()}" + (f"; {why}" if why else ""))
    message = "\n".join(lines)
    if strict():
        raise ClaimFailed(message)
    print(message)
