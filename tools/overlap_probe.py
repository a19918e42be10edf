"""On a GPU: do two calls of a softmax answer run their kernels at the same time, and which of them come out wrong?

`check_softmax_rows` (utils/exercises/nb09.py, `_softmax_released_together`) holds two calls' launches behind one gate
so that they start together; this probe measured which gate does that (calls BO and BQ of CONTRIBUTING's "The GPU
regression", 2026-12-01, on an H200).  For each answer of nb09's registry whose label names kept counters or a kept
workspace (wrong), or counters or a workspace allocated in each call (right), and each shape, it runs pairs of calls:

- gate A: a sleep on the caller's stream and an event after it; the first call on the caller's stream, right behind
  the sleep, the second on a side stream that waits for the event (what the check does);
- gate B: both calls on side streams that wait for the event.

It prints how many pairs of PAIRS gave a wrong result (either call's), per answer, shape and gate.  Run it from the
repository root on a machine with a GPU and Triton: `python -m tools.overlap_probe`.  Written by hand: no library
measures whether two CUDA streams' kernels overlap from the values they leave.
"""

from __future__ import annotations

import time

import torch

PAIRS = 32
SHAPES = ((64, 4096), (528, 1024), (2, 4096), (3, 37), (16, 4096))
SLEEP_S = 0.005
WRONG_WORDS = ("counters kept", "kept ticket counters", "workspace kept")
RIGHT_WORDS = ("last tl.atomic_add", "workspace allocated in each call")


def _right(y: object, x: torch.Tensor) -> bool:
    want = torch.softmax(x.double(), 1)
    return isinstance(y, torch.Tensor) and y.shape == x.shape and bool(torch.allclose(y.double(), want, rtol=1e-4,
                                                                                     atol=1e-7))


def main() -> None:
    from utils.exercises.answers import nb09 as answers
    from utils.timing import gpu_cycles_per_second, gpu_sleep

    wrong, right = answers.WRONG["check_softmax_rows"], answers.ALSO_RIGHT["check_softmax_rows"]
    chosen = [(label, wrong[label], "W") for label in wrong if any(w in label for w in WRONG_WORDS)]
    chosen += [(label, right[label], "R") for label in right if any(w in label for w in RIGHT_WORDS)]
    gpu_cycles_per_second()  # calibrates the sleep now, waiting for the GPU
    sides = torch.cuda.Stream(), torch.cuda.Stream()
    started = time.perf_counter()
    for label, answer, kind in chosen:
        for shape in SHAPES:
            x1 = torch.randn(shape, device="cuda")
            x2 = torch.randn(shape, device="cuda") + 200
            answer(x1)  # compiles
            torch.cuda.synchronize()
            bad = {"A": 0, "B": 0}
            for pair in range(2 * PAIRS):
                gate_kind = "AB"[pair % 2]
                gpu_sleep(SLEEP_S)
                gate = torch.cuda.Event()
                gate.record()
                caller = torch.cuda.current_stream()
                streams = (caller, sides[1]) if gate_kind == "A" else sides
                results = []
                for stream, x in zip(streams, (x1, x2), strict=True):
                    if stream != caller:
                        stream.wait_event(gate)
                    with torch.cuda.stream(stream):
                        results.append(answer(x))
                torch.cuda.synchronize()
                bad[gate_kind] += not (_right(results[0], x1) and _right(results[1], x2))
            print(f"{kind} {label[:75]:75s} {shape!s:12s} gate A {bad['A']}/{PAIRS}  gate B {bad['B']}/{PAIRS}",
                  flush=True)
    print(f"done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
