"""Checks for the exercises of notebook 03 (CUDA streams in PyTorch): races, timelines, prefetching.

The GPU checks make every race window wide on purpose: they keep one stream busy with
`utils.gpu_sleep` (a kernel that spins for a known time), so an answer that forgets a wait reads
the wrong data every time, not once in a thousand runs.

The timeline exercises use a tiny program format, one tuple per operation, in the order the host
issues them.  Each tuple names the stream first, then what happens on it, as in PyTorch's
`stream.record_event(event)`, `stream.wait_event(event)` and `stream.wait_stream(other)`:

    ("kernel", stream, name, ms)      a kernel `name` that runs for `ms` milliseconds on `stream`
    ("record", stream, event)         record `event` on `stream`
    ("wait", stream, event)           `stream` waits for `event`
    ("wait_stream", stream, other)    `stream` waits for all work queued on `other` so far
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence

import torch
from matplotlib.lines import Line2D

from ..device import require_cuda
from ..plotting import Interval, StreamTimeline, plot_timeline
from ..timing import gpu_sleep, timer
from . import exercise

Op = tuple
Timeline = dict[str, tuple[float, float]]

# ------------------------------------------------------------------------------------------
# Timing on the GPU
# ------------------------------------------------------------------------------------------
def _elapsed_ms(fn: Callable[[], object]) -> float:
    """GPU milliseconds from before `fn()` to after it, on the current stream (utils.timer)."""
    with timer(backend="cuda", verbose=False) as elapsed:
        fn()
    return elapsed.seconds * 1e3


# ------------------------------------------------------------------------------------------
# Exercise 1: fix the race of the seed seminar (sum on a side stream)
# ------------------------------------------------------------------------------------------
WINDOW_MS = 40.0  # how long the checks keep one stream busy


def _sleep_ms(ms: float, stream: torch.cuda.Stream | None = None) -> None:
    """Keep `stream` (default: the current one) busy for about `ms` milliseconds."""
    gpu_sleep(ms / 1e3, stream)


def check_side_stream_sum(side_stream_sum: Callable[[torch.Tensor, torch.Tensor, torch.cuda.Stream], None]) -> None:
    """side_stream_sum(x, out, side) must write x.sum() into `out` on stream `side`, safely.

    Two schedules: the current stream fills x late (a slow producer), then the side stream is
    busy when the call comes (a slow consumer).  In both, what the current stream reads from
    `out` right after the call must be the sum, and the host must not have waited.
    """
    with exercise("side_stream_sum") as ex:
        require_cuda("check_side_stream_sum")
        side = torch.cuda.Stream()
        n = 2**20
        warm = torch.ones(n, device="cuda")  # load the kernels an answer may use, so the host's time is fair
        torch.empty((), device="cuda").copy_(warm.sum()).clone()
        torch.cuda.synchronize()
        for value, slow in ((1.0, "producer"), (2.0, "side stream")):
            x = torch.zeros(n, device="cuda")
            out = torch.full((), math.nan, device="cuda")
            torch.cuda.synchronize()
            if slow == "producer":
                _sleep_ms(WINDOW_MS)  # the current stream is busy, so x is filled late
            x.fill_(value)
            if slow == "side stream":
                _sleep_ms(WINDOW_MS, side)  # the side stream is busy with earlier work
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            t0 = time.perf_counter()
            side_stream_sum(x, out, side)
            host_ms = (time.perf_counter() - t0) * 1e3
            seen = out.clone()  # what the next work on the current stream sees
            end.record()
            torch.cuda.synchronize()
            got, want = seen.item(), n * value
            ex.expect(
                host_ms < WINDOW_MS / 2,
                f"with a slow {slow}, side_stream_sum kept the host waiting for {host_ms:.0f} ms",
                "order the streams on the GPU (side.wait_stream, current.wait_stream); "
                "do not synchronize the host",
            )
            if math.isnan(got):
                ex.expect(False, f"with a slow {slow}, the current stream read `out` before the side stream wrote it",
                          "after the sum, make the current stream wait: torch.cuda.current_stream().wait_stream(side)")
            if got == 0.0:
                ex.expect(False, f"with a slow {slow}, the sum was 0: the side stream read x before the current "
                                 "stream had filled it",
                          "before reading x on side, make side wait: side.wait_stream(torch.cuda.current_stream())")
            ex.expect(got == want, f"with a slow {slow}, out held {got}, expected {want}",
                      "write the sum into out, out.copy_(x.sum()), inside `with torch.cuda.stream(side):`")
            if slow == "side stream":
                ex.expect(
                    begin.elapsed_time(end) > 0.5 * WINDOW_MS,
                    "the sum did not run on the side stream (the current stream never waited for it)",
                    "run the sum inside `with torch.cuda.stream(side):`",
                )


# ------------------------------------------------------------------------------------------
# Exercises 2 and 3: predict a timeline, then write the simulator
# ------------------------------------------------------------------------------------------
PROGRAM: list[Op] = [
    ("kernel", "copy", "load 0", 10),
    ("record", "copy", "loaded 0"),
    ("kernel", "copy", "load 1", 10),
    ("record", "copy", "loaded 1"),
    ("kernel", "logger", "log", 30),
    ("wait", "compute", "loaded 0"),
    ("kernel", "compute", "step 0", 15),
    ("wait", "compute", "loaded 1"),
    ("kernel", "compute", "step 1", 15),
    ("wait_stream", "logger", "compute"),
    ("kernel", "logger", "report", 5),
]
PROGRAM_ANSWER: Timeline = {
    "load 0": (0, 10), "load 1": (10, 20), "log": (0, 30),
    "step 0": (10, 25), "step 1": (25, 40), "report": (40, 45),
}


def _same_timeline(got: object, want: Timeline) -> str | None:
    """None if `got` is the timeline `want`, else what differs (one line)."""
    if not isinstance(got, dict):
        return f"returned a {type(got).__name__}, not a dict of name -> (start, end)"
    if set(got) != set(want):
        return f"has kernels {sorted(got)}, expected {sorted(want)}"
    for name, (start, end) in want.items():
        try:
            g_start, g_end = (float(v) for v in got[name])
        except (TypeError, ValueError):
            return f"{name!r} maps to {got[name]!r}, not a (start, end) pair"
        if not (math.isclose(g_start, start, abs_tol=1e-9) and math.isclose(g_end, end, abs_tol=1e-9)):
            return f"{name!r} runs from {g_start:g} to {g_end:g} ms, expected {start:g} to {end:g} ms"
    return None


def check_predicted_timeline(predicted_timeline: Callable[[], Timeline]) -> None:
    """predicted_timeline() must return PROGRAM's start and end times, worked out by hand."""
    with exercise("predicted_timeline") as ex:
        got = predicted_timeline()
        problem = _same_timeline(got, PROGRAM_ANSWER)
        ex.expect(problem is None, f"your prediction {problem}",
                  "each stream runs its kernels one after another; a wait holds back only the work queued "
                  "after it on that stream, until the event's work is done")


# Each case: a program and its timeline; together they reject the usual wrong rules.
SIMULATE_CASES: list[tuple[str, list[Op], Timeline]] = [
    ("one stream runs its kernels in order",
     [("kernel", "s1", "a", 2), ("kernel", "s1", "b", 3)],
     {"a": (0, 2), "b": (2, 5)}),
    ("two streams run at the same time",
     [("kernel", "s1", "a", 2), ("kernel", "s2", "b", 3)],
     {"a": (0, 2), "b": (0, 3)}),
    ("a wait holds back the waiting stream",
     [("kernel", "s1", "a", 4), ("record", "s1", "e"), ("wait", "s2", "e"), ("kernel", "s2", "b", 1)],
     {"a": (0, 4), "b": (4, 5)}),
    ("an event marks the moment it was recorded, not the end of its stream",
     [("kernel", "s1", "a", 2), ("record", "s1", "e"), ("kernel", "s1", "c", 5), ("wait", "s2", "e"),
      ("kernel", "s2", "b", 1)],
     {"a": (0, 2), "c": (2, 7), "b": (2, 3)}),
    ("a wait never moves a stream back in time",
     [("kernel", "s2", "b", 5), ("kernel", "s1", "a", 1), ("record", "s1", "e"), ("wait", "s2", "e"),
      ("kernel", "s2", "c", 1)],
     {"b": (0, 5), "a": (0, 1), "c": (5, 6)}),
    ("waiting for an event not yet recorded does nothing (as in CUDA)",
     [("wait", "s2", "e"), ("kernel", "s2", "b", 1), ("kernel", "s1", "a", 3), ("record", "s1", "e")],
     {"b": (0, 1), "a": (0, 3)}),
    ("a wait sees the latest record before it",
     [("kernel", "s1", "a", 1), ("record", "s1", "e"), ("wait", "s2", "e"), ("kernel", "s2", "b", 1),
      ("kernel", "s1", "c", 5), ("record", "s1", "e"), ("wait", "s3", "e"), ("kernel", "s3", "d", 1)],
     {"a": (0, 1), "b": (1, 2), "c": (1, 6), "d": (6, 7)}),
    ("wait_stream waits for everything queued on the other stream so far",
     [("kernel", "s1", "a", 3), ("kernel", "s1", "b", 2), ("wait_stream", "s2", "s1"), ("kernel", "s2", "c", 1),
      ("kernel", "s1", "d", 4)],
     {"a": (0, 3), "b": (3, 5), "c": (5, 6), "d": (5, 9)}),
    ("the exercise's program", PROGRAM, PROGRAM_ANSWER),
]


def check_simulate(simulate: Callable[[Sequence[Op]], Timeline]) -> None:
    """simulate(program) must return each kernel's (start, end) under the stream rules."""
    with exercise("simulate") as ex:
        for rule, program, want in SIMULATE_CASES:
            problem = _same_timeline(simulate(program), want)
            ex.expect(problem is None, f"{rule}: simulate {problem}",
                      f"the rule: {rule}; keep, per stream, the time it is free, and per event, that time "
                      "when it was recorded")


def run_on_gpu(program: Sequence[Op]) -> list[Interval]:
    """Run a program on the GPU, each kernel a `gpu_sleep` of its duration, and time it.

    The timeline's lanes are the program's streams: "copy" becomes the lane "copy stream".
    """
    require_cuda("run_on_gpu()")
    torch.cuda.synchronize()
    streams: dict[str, torch.cuda.Stream] = {}
    events: dict[str, torch.cuda.Event] = {}
    timeline = StreamTimeline()
    for op in program:
        kind = op[0]
        if kind == "kernel":
            _, stream, name, ms = op
            s = streams.setdefault(stream, torch.cuda.Stream())
            with timeline.span(name, stream=s, lane=f"{stream} stream"):
                _sleep_ms(ms)
        elif kind == "record":
            _, stream, event = op
            events[event] = streams.setdefault(stream, torch.cuda.Stream()).record_event()
        elif kind == "wait":
            _, stream, event = op
            if event in events:  # an event never recorded: nothing to wait for (CUDA does the same)
                streams.setdefault(stream, torch.cuda.Stream()).wait_event(events[event])
        elif kind == "wait_stream":
            _, stream, other = op
            streams.setdefault(stream, torch.cuda.Stream()).wait_stream(streams.setdefault(other, torch.cuda.Stream()))
        else:
            raise ValueError(f"unknown operation {op!r}")
    return timeline.intervals()


def _add_to_legend(ax, handle, label: str) -> None:
    """Add one entry to the legend that plot_timeline drew (or start a legend)."""
    legend = ax.get_legend()
    handles = list(getattr(legend, "legend_handles", None) or getattr(legend, "legendHandles", [])) if legend else []
    labels = [t.get_text() for t in legend.get_texts()] if legend else []
    ax.legend(handles + [handle], labels + [label], loc="upper left", bbox_to_anchor=(1.0, 1.0))


def check_simulate_on_gpu(simulate: Callable[[Sequence[Op]], Timeline], program: Sequence[Op] = PROGRAM) -> None:
    """Run `program` on the GPU, plot it, and compare it with simulate(program) (black lines)."""
    with exercise("simulate on the GPU") as ex:
        measured = run_on_gpu(program)
        ax = plot_timeline(measured, title="bars: the GPU; black lines: simulate()")
        predicted = simulate(program)
        problem = _same_timeline(predicted, {iv.name: (0.0, 0.0) for iv in measured})
        ex.expect(problem is None or "runs from" in problem, f"simulate {problem}",
                  "return one (start, end) pair for each kernel of the program")
        lanes = list(dict.fromkeys(iv.lane for iv in measured))
        for iv in measured:
            start, end = predicted[iv.name]
            ax.plot([start, end], [lanes.index(iv.lane)] * 2, color="black", linewidth=3)
        _add_to_legend(ax, Line2D([], [], color="black", linewidth=3), "simulate()")
        total = max(iv.end_ms for iv in measured)
        worst = max(max(abs(iv.start_ms - predicted[iv.name][0]), abs(iv.end_ms - predicted[iv.name][1]))
                    for iv in measured)
        print(f"largest difference between simulate() and the GPU: {worst:.1f} ms in {total:.0f} ms")
        ex.expect(worst < 0.1 * total + 1.0,
                  f"a kernel ran {worst:.1f} ms away from where simulate put it (the run took {total:.1f} ms)",
                  "compare the black lines (your prediction) with the bars (the GPU)")


# ------------------------------------------------------------------------------------------
# Exercise 4: the prefetching loop
# ------------------------------------------------------------------------------------------
BATCHES, ROWS, COLS = 8, 2048, 2048  # 8 batches of 16 MiB in pinned host memory
_runs = itertools.count(1)


def _large_allocations(fn: Callable[[], object]) -> int:
    """How many blocks over 1 MiB the caching allocator hands out while fn() runs (notebook 01)."""
    key = "allocation.large_pool.allocated"  # a running count of such allocations
    before = torch.cuda.memory_stats()[key]
    fn()
    torch.cuda.synchronize()
    return torch.cuda.memory_stats()[key] - before


def _batches() -> list[torch.Tensor]:
    """Pinned host batches whose values differ at every call, so stale GPU memory never matches."""
    gen = torch.Generator().manual_seed(1000 + next(_runs))
    return [torch.randn(ROWS, COLS, generator=gen).pin_memory() for _ in range(BATCHES)]


def check_prefetch_loop(
    prefetch_loop: Callable[[Sequence[torch.Tensor], Callable[[torch.Tensor], torch.Tensor], torch.cuda.Stream],
                            list[torch.Tensor]],
) -> None:
    """prefetch_loop(batches, step, copy_stream) must return [step(batch on the GPU) for each batch],
    copying the next batch on copy_stream while step runs on the current stream: correct whatever
    the timing, with two GPU buffers (not a new tensor per batch), and faster than copying and
    computing one after the other."""
    with exercise("prefetch_loop") as ex:
        require_cuda("check_prefetch_loop")
        copy_stream = torch.cuda.Stream()
        step_ms = 0.0  # how long step() keeps the current stream busy before it reads its batch

        def step(x: torch.Tensor) -> torch.Tensor:
            if step_ms:
                _sleep_ms(step_ms)
            return x.sum(dim=1)

        def sequential(batches: Sequence[torch.Tensor]) -> list[torch.Tensor]:
            return [step(b.to("cuda", non_blocking=True)) for b in batches]

        def copy_all(batches: Sequence[torch.Tensor]) -> list[torch.Tensor]:
            return [b.to("cuda", non_blocking=True) for b in batches]

        batches = _batches()
        copy_all(batches)  # warm-up: the allocator's first cudaMalloc calls
        copy_ms = _elapsed_ms(lambda: copy_all(batches)) / len(batches)

        # Correct whatever the timing: the copies late, then the steps late.
        for name, step_ms, busy_copies in (("slow copies", 0.0, True), ("slow steps", max(4 * copy_ms, 2.0), False)):
            batches, want = _batches(), []
            scratch = torch.empty(ROWS, COLS, device="cuda")
            for b in batches:
                want.append(scratch.copy_(b).sum(dim=1))
            scratch.fill_(math.nan)  # stale memory that a racy loop may read: never a batch
            del scratch
            torch.cuda.synchronize()
            if busy_copies:
                _sleep_ms(WINDOW_MS, copy_stream)
            got = prefetch_loop(batches, step, copy_stream)
            torch.cuda.synchronize()
            ex.expect(isinstance(got, list) and len(got) == len(batches),
                      f"returned a {type(got).__name__}, expected a list of {len(batches)} outputs",
                      "append step(x) for every batch, in order")
            bad = [i for i, (g, w) in enumerate(zip(got, want)) if not torch.equal(g, w)]
            ex.expect(not bad, f"with {name}, the outputs of batches {bad} are wrong",
                      "a buffer must not be overwritten while a step still reads it: after each step, record "
                      "an event on the current stream, and make copy_stream wait for it before the next copy "
                      "into that buffer" if name == "slow steps" else
                      "a step must wait for its batch's copy: after each copy, record an event on copy_stream, "
                      "and make the current stream wait for it before the step")

        # Two buffers: the loop allocates GPU memory for two batches, not for every batch.
        batches, step_ms = _batches(), 0.0
        buffer = torch.empty(ROWS, COLS, device="cuda")
        by_steps = _large_allocations(lambda: [step(buffer) for _ in batches])  # what step() allocates itself
        del buffer
        by_loop = _large_allocations(lambda: prefetch_loop(batches, step, copy_stream)) - by_steps
        ex.expect(by_loop <= 2,
                  f"made {by_loop} GPU allocations of a batch's size for {len(batches)} batches; "
                  "two buffers, made once, need 2",
                  "allocate two GPU buffers before the loop (torch.empty_like(batches[0], device='cuda')) and "
                  "copy each batch into one of them, buffer.copy_(batch, non_blocking=True): no .to('cuda') "
                  "in the loop")

        # Faster: with step as long as a copy, overlapping them should save close to half the time.
        batches, step_ms = _batches(), copy_ms
        sequential(batches), prefetch_loop(batches, step, copy_stream)  # warm-up
        seq_ms = _elapsed_ms(lambda: sequential(batches))
        yours_ms = _elapsed_ms(lambda: prefetch_loop(batches, step, copy_stream))
        ex.expect(yours_ms < 0.8 * seq_ms,
                  f"took {yours_ms:.2f} ms; copying then computing one batch at a time takes {seq_ms:.2f} ms",
                  "queue the copy of batch i+1 on copy_stream before step(batch i), and never block the host "
                  "(no synchronize in the loop)")
