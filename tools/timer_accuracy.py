"""How accurate is utils.benchmark?  Time workloads of known duration and print the error.

    python -m tools.timer_accuracy

CPU: a busy-wait of known length (sleep would add the OS's wake-up jitter).  GPU, when there is
one: torch.cuda._sleep, a kernel that spins for a number of clock cycles, whose true per-call time
is measured once over 2000 back-to-back calls between two CUDA events (gpu_time_per_call).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

import utils
from utils.timing import gpu_time_per_call


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main() -> None:
    print(f"{'workload':<28} {'known':>9} {'median':>9} {'error':>7} {'IQR/median':>10}")
    cases: list[tuple[str, float, Callable[[], utils.Timing]]] = [
        (f"CPU spin {utils.format_time(s)}", s, partial(utils.benchmark, spin, s, backend="cpu"))
        for s in (50e-6, 200e-6, 2e-3, 10e-3)
    ]
    if utils.has_cuda():
        for cycles in (20_000, 200_000, 2_000_000):
            truth = gpu_time_per_call(partial(torch.cuda._sleep, cycles), calls=2000)
            cases.append((f"GPU _sleep({cycles})", truth, partial(utils.benchmark, torch.cuda._sleep, cycles)))
    for name, known, run in cases:
        t = run()
        print(f"{name:<28} {utils.format_time(known):>9} {utils.format_time(t.median):>9} "
              f"{t.median / known - 1:>+7.2%} {t.iqr / t.median:>10.2%}")


if __name__ == "__main__":
    main()
