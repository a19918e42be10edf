"""Notebook 06, section 2: Kahan's compensated sum in float32, with NumPy.

It runs in the notebook's own process, into a dict of its own, from which the notebook keeps the function:
    kahan = {}
    exec(utils.script("06_kahan.py"), kahan)
"""

import numpy as np


def kahan_sum(x: np.ndarray, lanes: int = 1024) -> np.float32:
    """Kahan's compensated sum in float32: `lanes` sums side by side, then those sums, by the same rule."""
    def add(total, lost, value):
        value = value - lost  # put back what the previous addition lost
        new = total + value
        lost = (new - total) - value  # what this addition lost to rounding (computed exactly)
        return new, lost

    rows = np.pad(x, (0, -len(x) % lanes)).reshape(-1, lanes)
    total, lost = np.zeros(lanes, np.float32), np.zeros(lanes, np.float32)
    for row in rows:
        total, lost = add(total, lost, row)
    s, s_lost = np.float32(0), np.float32(0)
    for t, t_lost in zip(total, lost):
        s, s_lost = add(s, s_lost, t)
        s, s_lost = add(s, s_lost, -t_lost)
    return s - s_lost
