"""Measured numbers as the course prints them: 3 significant digits and a unit.

`format_time` (seconds) and `format_bytes` (bytes) always print '<number> <unit>' ('12.3 µs',
'1.50 KiB'), so that one pattern in tests/nbval_sanitize.cfg masks every measured value before nbval
compares a cell's output; `three_digits` is the number alone (a claim's ✗ line shows measured floats
with it, utils/claims.py).  The timing, memory and claims modules all print through these, so they
live here, in a module that imports none of them.
"""

from __future__ import annotations

import math

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def three_digits(value: float) -> str:
    """A number with 3 significant digits, trailing zeros kept: 2.00, 12.5, 812."""
    if value == 0 or not math.isfinite(value):
        return f"{value:.2f}"
    rounded = float(f"{value:.3g}")  # round first: 0.9996 -> 1.0, which needs two decimals, not three
    decimals = max(0, 2 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"


def format_time(seconds: float) -> str:
    """A duration with 3 significant digits and a unit: '812 ns', '12.3 µs', '4.50 ms', '1.23 s'.

    Always '<number> <unit>', so that one pattern (tests/nbval_sanitize.cfg) masks every timing.
    """
    for unit, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        text = three_digits(seconds / scale)
        if abs(float(text)) < 1000:
            return f"{text} {unit}"
    return f"{three_digits(seconds)} s"


def format_bytes(n: float) -> str:
    """Bytes in binary units, 3 significant digits: 512 B, 1.50 KiB, 32.0 MiB, 1.25 GiB."""
    value, unit = float(n), _UNITS[0]
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            break
        value /= 1024
    return f"{int(value)} B" if unit == "B" else f"{three_digits(value)} {unit}"
