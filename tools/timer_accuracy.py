"""How accurate is utils.benchmark?  Time workloads of known duration and print the error.

    python -m tools.timer_accuracy

CPU: a busy-wait of known length (sleep would add the OS's wake-up jitter).  GPU, when there is
one: torch.cuda._sleep, a kernel that spins for a number of clock cycles, whose true per-call time
is measured once over 2000 back-to-back calls between two CUDA events (gpu_time_per_call).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import utils  # noqa: E402
from utils.timing import gpu_time_per_call  # noqa: E402


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main() -> None:
    print(f"{'workload':<28} {'known':>9} {'median':>9} {'error':>7} {'IQR/median':>10}")
    cases = [(f"CPU spin {utils.format_time(s)}", s, lambda s=s: utils.benchmark(spin, s, backend="cpu"))
             for s in (50e-6, 200e-6, 2e-3, 10e-3)]
    if utils.has_cuda():
        for cycles in (20_000, 200_000, 2_000_000):
            truth = gpu_time_per_call(lambda c=cycles: torch.cuda._sleep(c), calls=2000)
            cases.append((f"GPU _sleep({cycles})", truth, lambda c=cycles: utils.benchmark(torch.cuda._sleep, c)))
    for name, known, run in cases:
        t = run()
        print(f"{name:<28} {utils.format_time(known):>9} {utils.format_time(t.median):>9} "
              f"{t.median / known - 1:>+7.2%} {t.iqr / t.median:>10.2%}")


if __name__ == "__main__":
    main()
