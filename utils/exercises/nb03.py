"""Checks for the exercises of notebook 03 (CUDA streams in PyTorch): work fanned out to several
streams, timelines, prefetching, hardware queues.

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

Exercise 5 (hardware queues, CUDA_DEVICE_MAX_CONNECTIONS) uses kernels only, plus a number of queues.

Exercise 2's answer, the timeline of PROGRAM, is kept as a digest per kernel (`PROGRAM_SEALED`), so
that reading this file does not give it away; the plain answers are in `answers/nb03.py`.

Without a GPU, `check_fan_out` and `check_prefetch_loop` run the answer on the CPU with the
streams in order (`utils.exercises.cuda_on_cpu`): its values, not its races or its speed;
`check_simulate_on_gpu` has nothing to add on a CPU to `check_simulate`, and says so.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import time
from collections.abc import Callable, Sequence

import torch
from matplotlib.lines import Line2D

from ..device import has_cuda, require_cuda
from ..plotting import Interval, StreamTimeline, plot_timeline
from ..timing import gpu_cycles_per_second, gpu_sleep, timer
from . import Exercise, LeftForGPU, cuda_on_cpu, exercise, register

NOTEBOOK = "03_streams_pytorch"

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
# Exercise 1 (transfer): fan out independent work to several streams, and join it
# ------------------------------------------------------------------------------------------
WINDOW_MS = 40.0  # how long the checks keep one stream busy (at first: see TRIES)
TRIES = 3  # a run that a slow or busy host spoiled is tried again; a wrong answer fails every try
FAN = 3  # the streams of the fan
FAN_N = 4 * 2**20  # elements of x and of each output: 16 MiB of float32, as in race 2 of the lecture


def _sleep_ms(ms: float, stream: torch.cuda.Stream | None = None) -> None:
    """Keep `stream` (default: the current one) busy for about `ms` milliseconds."""
    gpu_sleep(ms / 1e3, stream)


def _fan_fns(ran_on: list, busy_ms: float = 0.0) -> list[Callable[[torch.Tensor], torch.Tensor]]:
    """The work of the fan: fns[i](x) = x * (i + 2), each noting which stream was current when it was queued,
    and first keeping that stream busy for `busy_ms`."""
    def make(i: int) -> Callable[[torch.Tensor], torch.Tensor]:
        def fn(x: torch.Tensor) -> torch.Tensor:
            ran_on.append((i, torch.cuda.current_stream()))
            if busy_ms:
                _sleep_ms(busy_ms)
            return x * (i + 2)
        return fn
    return [make(i) for i in range(FAN)]


def _outputs_problem(outs: object, n: int) -> str | None:
    """None if `outs` is a list (or tuple) of FAN tensors of n elements, else what is wrong (one line)."""
    if not isinstance(outs, (list, tuple)) or len(outs) != FAN:
        return f"fan_out returned {type(outs).__name__} {outs!r:.60}, not a list of {FAN} outputs"
    if not all(isinstance(o, torch.Tensor) and o.shape == (n,) for o in outs):
        return f"fan_out returned {[type(o).__name__ for o in outs]}, not {FAN} tensors shaped like x"
    return None


def _wrong_outputs(copies: Sequence[torch.Tensor], value: float) -> list[int]:
    """The indices i whose output is not fns[i](x) for an x full of `value`."""
    return [i for i, c in enumerate(copies) if not bool((c == value * (i + 2)).all())]


def _streams_problem(ran_on: list, streams: Sequence[torch.cuda.Stream]) -> str | None:
    """None if each fns[i] was queued while streams[i] was current, else what is wrong."""
    elsewhere = sorted({i for i, s in ran_on if s != streams[i]})
    if elsewhere or len({i for i, _ in ran_on}) < FAN:
        return f"fns{elsewhere or ''} did not run on their own streams"
    return None


def check_fan_out(fan_out: Callable[[torch.Tensor, list, list], list[torch.Tensor]]) -> None:
    """fan_out(x, fns, streams) must return [fns[i](x) queued on streams[i]], safely, without host waits.

    Four kinds of run, with streams made slow on purpose (`utils.gpu_sleep`): each side stream in turn
    is busy when the call comes; the current stream fills x late (a slow producer); every fns[i] keeps
    its stream busy (they must overlap); the current stream is busy after the call, while the check
    frees the outputs and makes new tensors on the side streams (the allocator must not hand out an
    output's memory before the current stream has read it).  No threshold on times but the overlap's:
    "the host waited" is "the busy window was over when the call returned" (an event's query), and
    "the current stream waited for a side stream" is "its next work ended after that stream's window".
    A run that a slow or busy host spoiled is tried again with a window twice as long; a wrong answer
    fails every try.
    """
    if not has_cuda():
        return _check_fan_out_on_cpu(fan_out)
    with exercise("fan_out") as ex:
        require_cuda("check_fan_out")
        streams = [torch.cuda.Stream() for _ in range(FAN)]
        warm = torch.ones(FAN_N, device="cuda")
        [(warm * (i + 2)).clone() for i in range(FAN)]  # load the kernels, so that the host's time is fair
        gpu_cycles_per_second()  # calibrate gpu_sleep now: it waits for the GPU
        torch.cuda.synchronize()
        for run, slow in enumerate([*range(FAN), "producer"]):  # a missing join first: its hint is the clearer
            who = "a slow producer" if slow == "producer" else f"streams[{slow}] busy"
            for k in range(TRIES):
                window_ms, value = WINDOW_MS * 2**k, float(run + 1 + 10 * k)
                current = torch.cuda.current_stream()
                ran_on: list[tuple[int, torch.cuda.Stream]] = []
                x = torch.zeros(FAN_N, device="cuda")
                torch.cuda.synchronize()
                origin, window_end, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
                origin.record(current)
                busy = current if slow == "producer" else streams[slow]
                _sleep_ms(window_ms, busy)
                window_end.record(busy)
                x.fill_(value)  # queued on the current stream, after the window if the producer is slow
                t0 = time.perf_counter()
                outs = fan_out(x, _fan_fns(ran_on), streams)
                host_ms = (time.perf_counter() - t0) * 1e3
                waited = window_end.query()
                problem = _outputs_problem(outs, FAN_N)
                copies = [o.clone() for o in outs] if problem is None else []  # the current stream's next work
                end.record(current)
                torch.cuda.synchronize()
                if not waited:
                    break
            ex.expect(problem is None, f"with {who}, {problem}", "return the outputs of fns[0], fns[1], ... in order")
            ex.expect(not waited, f"with {who}, fan_out returned only after the GPU had done {window_ms:.0f} ms of "
                                  f"earlier work (the host waited {host_ms:.0f} ms)",
                      "order the streams on the GPU, with waits between streams; do not make the host wait")
            ex.expect(_streams_problem(ran_on, streams) is None, f"with {who}, {_streams_problem(ran_on, streams)}",
                      "queue fns[i] while streams[i] is the current stream")
            wrong = _wrong_outputs(copies, value)
            if slow == "producer":
                early = [i for i in wrong if bool((copies[i] == 0).all())]  # x was still all zeros
                ex.expect(not early, f"with a slow producer, outputs {early} were computed from x before the current "
                                     "stream had filled it",
                          "x is filled by work queued on the current stream: what must each side stream do before "
                          "it reads x?")
                ex.expect(not wrong, f"with a slow producer, the current stream read outputs {wrong} before they "
                                     "were written",
                          "work the caller queues on the current stream after fan_out must come after every side "
                          "stream's work")
            else:
                joined = origin.elapsed_time(end) >= origin.elapsed_time(window_end)
                ex.expect(joined and not wrong, f"with {who}, the current stream read the outputs before that stream "
                                                "had written them",
                          "work the caller queues on the current stream after fan_out must come after every side "
                          "stream's work, not only one's")

        # Side by side: each fns[i] keeps its stream busy for a window; one after another, they take FAN windows.
        # The bar is half a window under that: two side streams that share a hardware queue (fewer connections,
        # as MPS may grant) run one after the other even in a right answer, which then takes two windows.
        bar = FAN - 0.5
        for k in range(TRIES):
            window_ms, current = WINDOW_MS * 2**k, torch.cuda.current_stream()
            x = torch.ones(FAN_N, device="cuda")
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(current)
            outs = fan_out(x, _fan_fns([], busy_ms=window_ms), streams)
            end.record(current)  # after the join
            torch.cuda.synchronize()
            took_ms = start.elapsed_time(end)
            if took_ms < bar * window_ms:
                break
        ex.expect(took_ms < bar * window_ms,
                  f"with each fns[i] keeping its stream busy for {window_ms:.0f} ms, the current stream waited "
                  f"{took_ms:.0f} ms: the {FAN} streams ran one after another",
                  "a wait is transitive: once the current stream waits for one side stream, a side stream that "
                  "then waits for the current stream waits for that one too")
        del outs

        # The caller frees the outputs while its current stream still has to read them (race 2 of the lecture).
        for k in range(TRIES):
            ran_on, value = [], 100.0 + k
            x = torch.full((FAN_N,), value, device="cuda")
            torch.cuda.synchronize()
            torch.cuda.empty_cache()  # no free blocks left over: a freed output's block is the one a new tensor gets
            outs = fan_out(x, _fan_fns(ran_on), streams)
            _sleep_ms(WINDOW_MS * 2**k)  # the caller's current stream is busy before it reads the outputs
            copies = [o.clone() for o in outs]
            del outs  # the caller is done with them on the host
            junk = []
            for s in streams:  # new tensors on the side streams, written at once
                with torch.cuda.stream(s):
                    junk += [torch.full((FAN_N,), math.nan, device="cuda") for _ in range(2)]
            torch.cuda.synchronize()
            wrong = _wrong_outputs(copies, value)
            del junk
            if not wrong:
                break
        ex.expect(not wrong, f"the caller read outputs {wrong} on its current stream after a delay, and found them "
                             "overwritten by tensors made later on the side streams",
                  "each output was made on a side stream, and its memory goes back to that stream's pool when the "
                  "caller frees it: how does the allocator learn that another stream still uses it?")


register(Exercise(NOTEBOOK, "fan_out", check_fan_out, gpu=True, cpu_checks=4))


def _check_fan_out_on_cpu(fan_out: Callable) -> None:
    """check_fan_out's values on a CPU, where the streams run in order: output i must be fns[i](x)."""
    with (exercise("fan_out") as ex,
          ex.on_cpu(f"that output i is fns[i](x), for {FAN} streams run in order on the CPU",
                    "the races (a slow producer, a busy side stream, outputs freed while the current stream still "
                    "reads them), that each fns[i] runs on streams[i], and that the host never waits"),
          cuda_on_cpu()):
        n = 2**10
        for value in (1.0, 2.0):
            outs = fan_out(torch.full((n,), value), _fan_fns([]), [torch.cuda.Stream() for _ in range(FAN)])
            problem = _outputs_problem(outs, n)
            ex.expect(problem is None, problem or "", "return the outputs of fns[0], fns[1], ... in order")
            wrong = _wrong_outputs(outs, value)
            ex.expect(not wrong, f"outputs {wrong} are not fns[i](x)",
                      "each fns[i] gets x itself, and output i is what fns[i] returns")


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
# Each kernel's (start, end), as a digest (`_kernel_seal`): this file does not give the answer away.
PROGRAM_SEALED: dict[str, str] = {
    "load 0": "49622b124ab7a713",
    "load 1": "a607e7411818948e",
    "log": "b876edbd5c4c347d",
    "step 0": "3662e5248a60fe70",
    "step 1": "2cab3b8ac93a29ef",
    "report": "aa4602b50fe25f8b",
}


def _sealed(value: object) -> str:
    """A digest of an answer: the check compares digests, and this file holds no answer in plain form."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def _kernel_seal(name: str, start: float, end: float) -> str:
    """The digest of one kernel's place in a timeline, to the nanosecond (times in ms)."""
    return _sealed((name, round(start * 1e6), round(end * 1e6)))


def _sealed_timeline_problem(got: object, sealed: dict[str, str]) -> str | None:
    """None if `got` places every kernel where `sealed` says, else what is wrong, without saying where they run."""
    problem = _same_timeline(got, {name: (0.0, 0.0) for name in sealed}, shape_only=True)
    if problem is not None:
        return problem  # not a timeline of these kernels
    assert isinstance(got, dict)
    wrong = [name for name in sealed if _kernel_seal(name, *(float(v) for v in got[name])) != sealed[name]]
    if wrong:
        return f"places {len(wrong)} of its {len(sealed)} kernels where the stream rules do not put them"
    return None


def _same_timeline(got: object, want: Timeline, shape_only: bool = False) -> str | None:
    """None if `got` is the timeline `want` (with `shape_only`: has its kernels, each a pair of numbers), else
    what differs (one line)."""
    if not isinstance(got, dict):
        return f"returned a {type(got).__name__}, not a dict of name -> (start, end)"
    if set(got) != set(want):
        return f"has kernels {sorted(got)}, expected {sorted(want)}"
    for name, (start, end) in want.items():
        try:
            g_start, g_end = (float(v) for v in got[name])
        except (TypeError, ValueError):
            return f"{name!r} maps to {got[name]!r}, not a (start, end) pair"
        if not (math.isfinite(g_start) and math.isfinite(g_end)):
            return f"{name!r} maps to {got[name]!r}, not a (start, end) pair of numbers"
        if shape_only:
            continue
        if not (math.isclose(g_start, start, abs_tol=1e-9) and math.isclose(g_end, end, abs_tol=1e-9)):
            return f"{name!r} runs from {g_start:g} to {g_end:g} ms, expected {start:g} to {end:g} ms"
    return None


def check_predicted_timeline(predicted_timeline: Callable[[], Timeline]) -> None:
    """predicted_timeline() must return PROGRAM's start and end times, worked out by hand."""
    with exercise("predicted_timeline") as ex:
        got = predicted_timeline()
        problem = _sealed_timeline_problem(got, PROGRAM_SEALED)
        ex.expect(problem is None, f"your prediction {problem}",
                  "each stream runs its kernels one after another; a wait holds back only the work queued "
                  "after it on that stream, until the event's work is done")


register(Exercise(NOTEBOOK, "predicted_timeline", check_predicted_timeline))


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
]


def check_simulate(simulate: Callable[[Sequence[Op]], Timeline]) -> None:
    """simulate(program) must return each kernel's (start, end) under the stream rules."""
    with exercise("simulate") as ex:
        for rule, program, want in SIMULATE_CASES:
            problem = _same_timeline(simulate(program), want)
            ex.expect(problem is None, f"{rule}: simulate {problem}",
                      f"the rule: {rule}; what must you remember about each stream, and about each event, "
                      "as you read the program?")
        problem = _sealed_timeline_problem(simulate(PROGRAM), PROGRAM_SEALED)  # exercise 2's program
        ex.expect(problem is None, f"the exercise's program: simulate {problem}",
                  "each case above passed: which operation of this program does none of them use the way it does?")


register(Exercise(NOTEBOOK, "simulate", check_simulate))


def _streams_of(program: Sequence[Op]) -> list[str]:
    """The streams a program names, in the order it names them."""
    names = []
    for op in program:
        if op[0] not in ("kernel", "record", "wait", "wait_stream"):
            raise ValueError(f"unknown operation {op!r}")
        names += [op[1], op[2]] if op[0] == "wait_stream" else [op[1]]
    return list(dict.fromkeys(names))


def _run_gated(program: Sequence[Op], gate_ms: float) -> tuple[list[Interval], float, float]:
    """Run a program on the GPU behind a gate: (its timeline, how late the host was, how long it took).

    The simulator's premise is that the host queues everything at time 0.  A real host queues one
    operation after the other, and a slow or busy one (two shared cores) can queue a kernel
    milliseconds after the GPU could have started it: then the GPU shows the host's pace, not the
    stream rules.  So every stream first waits for a gate, a kernel of `gate_ms` on a stream of its
    own, and the timeline starts when the gate opens.  The gate cannot start before the host queued
    it, so it opens at least its duration (measured on the GPU) after the host began; the host was
    late by its own time to queue the program (measured on the host) minus that duration, if
    positive (zero or less: the GPU saw the whole program before it started any of it).
    Returns the intervals, that lateness, and the host's time to queue the program, in ms.
    """
    require_cuda("run_on_gpu()")
    gpu_cycles_per_second()  # calibrate gpu_sleep now: it waits for the GPU
    torch.cuda.synchronize()
    names = _streams_of(program)
    gate = torch.cuda.Stream()
    streams = {name: torch.cuda.Stream() for name in names}
    start, opened = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    with torch.cuda.stream(gate):
        start.record(gate)
        _sleep_ms(gate_ms)
        timeline = StreamTimeline()  # its origin is recorded on the gate stream: the gate's end
        opened.record(gate)
    for stream in streams.values():
        stream.wait_event(opened)
    events: dict[str, torch.cuda.Event] = {}
    for op in program:
        kind = op[0]
        if kind == "kernel":
            _, stream, name, ms = op
            with timeline.span(name, stream=streams[stream], lane=f"{stream} stream"):
                _sleep_ms(ms)
        elif kind == "record":
            _, stream, event = op
            events[event] = streams[stream].record_event()
        elif kind == "wait":
            _, stream, event = op
            if event in events:  # an event never recorded: nothing to wait for (CUDA does the same)
                streams[stream].wait_event(events[event])
        else:  # "wait_stream"
            _, stream, other = op
            streams[stream].wait_stream(streams[other])
    queue_ms = (time.perf_counter() - t0) * 1e3
    intervals = timeline.intervals()  # waits for the GPU
    return intervals, queue_ms - start.elapsed_time(opened), queue_ms


GATE_MS = 10.0  # the first gate; a host that needs longer to queue the program gets twice its time


def _run_in_time(program: Sequence[Op]) -> tuple[list[Interval], float]:
    """`_run_gated` with a gate long enough for this host: the intervals, and how late the host was."""
    gate_ms = GATE_MS
    for _ in range(TRIES):
        intervals, late_ms, queue_ms = _run_gated(program, gate_ms)
        if late_ms <= 0:
            break
        gate_ms = max(2 * queue_ms, 2 * gate_ms)
    return intervals, late_ms


def run_on_gpu(program: Sequence[Op]) -> list[Interval]:
    """Run a program on the GPU, each kernel a `gpu_sleep` of its duration, and time it.

    As `simulate` assumes, the GPU starts once the host has queued the whole program (a gate holds
    every stream back until then).  The timeline's lanes are the program's streams: "copy" becomes
    the lane "copy stream"; times are in ms from the moment the GPU starts.
    """
    return _run_in_time(program)[0]


# A program that measures the GPU's own delay between two kernels: on one stream (k1 then k2, with
# a record between them), and across streams through an event (k1, then k3 on another stream).
_GAP_PROGRAM: list[Op] = [
    ("kernel", "a", "k1", 1.0), ("record", "a", "e"), ("kernel", "a", "k2", 1.0),
    ("wait", "b", "e"), ("kernel", "b", "k3", 1.0),
]


def dependency_gap_ms(runs: int = 5) -> float:
    """The GPU's largest delay, in ms, between a kernel's end and the start of one that waits for it.

    Measured with `_GAP_PROGRAM`, the largest of `runs` runs: the start of a stream's first kernel
    after the gate opens, of a kernel after the one before it on its stream, and after an event it
    waits for.  A few microseconds on a big GPU; more on a shared one (MPS) or a slow driver.
    """
    gaps = []
    for _ in range(runs):
        iv = {i.name: i for i in _run_in_time(_GAP_PROGRAM)[0]}
        gaps += [iv["k1"].start_ms, iv["k2"].start_ms - iv["k1"].end_ms, iv["k3"].start_ms - iv["k1"].end_ms]
    return max(0.0, *gaps)


def allowed_difference_ms(kernels: int, gap_ms: float, late_ms: float) -> float:
    """How far, in ms, a kernel may run from where a right simulator puts it, given what was measured.

    The simulator is given the kernels' measured durations, so only start times can differ.  On the
    GPU, a kernel starts at the latest of: its stream's previous kernel's end, the moments of the
    events it waits for (other kernels' ends), and when the host had queued it (at most `late_ms`
    after the start, if the host was late); each of these dependencies adds the GPU's own delay, at
    most `gap_ms` as measured.  Along a chain of dependencies through at most all the program's
    kernels (and the gate), the delays add up: a kernel starts at most
    late_ms + (kernels + 1) * gap_ms after the simulator's start.  Four times the delays, for one
    larger than those measured (a wrong simulator is off by whole kernels, milliseconds).
    """
    return max(0.0, late_ms) + 4 * (kernels + 1) * gap_ms


def _add_to_legend(ax, handle, label: str) -> None:
    """Add one entry to the legend that plot_timeline drew (or start a legend)."""
    legend = ax.get_legend()
    handles = list(getattr(legend, "legend_handles", None) or getattr(legend, "legendHandles", [])) if legend else []
    labels = [t.get_text() for t in legend.get_texts()] if legend else []
    ax.legend(handles + [handle], labels + [label], loc="upper left", bbox_to_anchor=(1.0, 1.0))


def with_durations(program: Sequence[Op], measured: Sequence[Interval]) -> list[Op]:
    """The program with each kernel's duration replaced by the one it took on the GPU."""
    took = {iv.name: iv.end_ms - iv.start_ms for iv in measured}
    return [(*op[:3], took[op[2]]) if op[0] == "kernel" else op for op in program]


def check_simulate_on_gpu(simulate: Callable[[Sequence[Op]], Timeline], program: Sequence[Op] = PROGRAM) -> None:
    """Run `program` on the GPU, plot it, and compare it with simulate(program) (black lines).

    Tolerance from what this run measures, not a fixed number of ms (a fixed one, 10% + 1 ms, failed on
    a GPU shared through MPS with two host cores, at 10 ms): simulate is given the durations the
    kernels took on this GPU (a gpu_sleep runs longer on a slower or throttled clock), the program runs
    behind a gate so that the host's pace does not count (`_run_gated`), and what is left, the GPU's
    delay between dependent kernels, is measured (`dependency_gap_ms`) and bounded
    (`allowed_difference_ms`): a fraction of a millisecond, while a simulator that ignores a wait is
    off by the duration of the kernel waited for.  A run that a busy machine disturbed is tried again;
    a wrong simulator is off in every run.
    """
    if not has_cuda():
        with exercise("simulate on the GPU"):
            raise LeftForGPU("", "running the program on CUDA streams and comparing it with simulate(); on the "
                                 "CPU, check_simulate above has checked your simulator against the stream rules")
        return
    require_cuda("check_simulate_on_gpu")
    with exercise("simulate on the GPU") as ex:
        predicted = simulate(program)
        kernels = [op[2] for op in program if op[0] == "kernel"]
        problem = _same_timeline(predicted, {name: (0.0, 0.0) for name in kernels})
        ex.expect(problem is None or "runs from" in problem, f"simulate {problem}",
                  "return one (start, end) pair for each kernel of the program")
        for _ in range(TRIES):
            measured, late_ms = _run_in_time(program)
            allowed = allowed_difference_ms(len(kernels), dependency_gap_ms(), late_ms)
            predicted = simulate(with_durations(program, measured))
            worst = max(max(abs(iv.start_ms - float(predicted[iv.name][0])),
                            abs(iv.end_ms - float(predicted[iv.name][1]))) for iv in measured)
            if worst <= allowed:
                break
        ax = plot_timeline(measured, title="bars: the GPU; black lines: simulate()")
        lanes = list(dict.fromkeys(iv.lane for iv in measured))
        for iv in measured:
            start, end = predicted[iv.name]
            ax.plot([start, end], [lanes.index(iv.lane)] * 2, color="black", linewidth=3)
        _add_to_legend(ax, Line2D([], [], color="black", linewidth=3), "simulate()")
        total = max(iv.end_ms for iv in measured)
        print(f"largest difference between simulate() and the GPU: {worst:.2f} ms in {total:.0f} ms "
              f"(the GPU's own delays allow {allowed:.2f} ms)")
        ex.expect(worst <= allowed,
                  f"a kernel ran {worst:.1f} ms away from where simulate put it (the run took {total:.1f} ms; "
                  f"the GPU's own delays explain {allowed:.2f} ms)",
                  "compare the black lines (your prediction) with the bars (the GPU)")


register(Exercise(NOTEBOOK, "simulate", check_simulate_on_gpu, gpu=True, label="simulate on the GPU",
                  cpu_checks=0))


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
    computing one after the other.

    Durations and the bar for "faster" come from what the check measures on this machine: a copy's
    time on this GPU's link (copy_ms), and the host's time to queue one batch of your loop (host_ms).
    The steps are made at least twice as long as the host's time per batch, so that the host stays
    ahead of the GPU and the GPU's timeline shows the loop's overlap rather than the host's pace (a
    slow host otherwise makes any loop look serial); and the loop must save at least half of what a
    perfect overlap saves, one copy per batch but the first, rather than a fixed 20%.
    """
    if not has_cuda():
        return _check_prefetch_loop_on_cpu(prefetch_loop)
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
        gpu_cycles_per_second()  # calibrate gpu_sleep now: it waits for the GPU
        copy_ms = _elapsed_ms(lambda: copy_all(batches)) / len(batches)
        host_ms = 0.0  # the host's time per batch in your loop, measured in the first run below

        # Correct whatever the timing: the copies late, then the steps late.
        for name in ("slow copies", "slow steps"):
            step_ms = 0.0 if name == "slow copies" else max(4 * copy_ms, 4 * host_ms, 2.0)
            batches, want = _batches(), []
            scratch = torch.empty(ROWS, COLS, device="cuda")
            for b in batches:
                want.append(scratch.copy_(b).sum(dim=1))
            scratch.fill_(math.nan)  # stale memory that a racy loop may read: never a batch
            del scratch
            torch.cuda.synchronize()
            if name == "slow copies":
                _sleep_ms(WINDOW_MS, copy_stream)
            t0 = time.perf_counter()
            got = prefetch_loop(batches, step, copy_stream)
            if name == "slow copies":
                host_ms = (time.perf_counter() - t0) * 1e3 / len(batches)
            torch.cuda.synchronize()
            ex.expect(isinstance(got, list) and len(got) == len(batches),
                      f"returned a {type(got).__name__}, expected a list of {len(batches)} outputs",
                      "append step(x) for every batch, in order")
            bad = [i for i, (g, w) in enumerate(zip(got, want)) if not torch.equal(g, w)]
            ex.expect(not bad, f"with {name}, the outputs of batches {bad} are wrong",
                      "a copy overwrote a buffer that a step was still reading: which event must the copy "
                      "stream wait for before it writes into a buffer again?" if name == "slow steps" else
                      "a step read its buffer before the copy into it was done: which event must the current "
                      "stream wait for?")

        # Two buffers: the loop allocates GPU memory for two batches, not for every batch.
        batches, step_ms = _batches(), 0.0
        buffer = torch.empty(ROWS, COLS, device="cuda")
        by_steps = _large_allocations(lambda: [step(buffer) for _ in batches])  # noqa: F821 (runs before del)
        del buffer
        by_loop = _large_allocations(lambda: prefetch_loop(batches, step, copy_stream)) - by_steps
        ex.expect(by_loop <= 2,
                  f"made {by_loop} GPU allocations of a batch's size for {len(batches)} batches; "
                  "two buffers, made once, need 2",
                  "allocate the two buffers once, before the loop, and copy each batch into one of them: "
                  "copying into an existing tensor allocates nothing, while .to('cuda') makes a new one")

        # Faster: a step as long as a copy (or as two batches of the host's work, if longer).  One after
        # the other, each batch costs copy + step; overlapped, the copy of batch i+1 hides behind step i,
        # which saves a copy per batch but the first.  The loop must save at least half of that.
        batches, step_ms = _batches(), max(copy_ms, 2 * host_ms)
        ex.expect_saving(_elapsed_ms, lambda: sequential(batches), lambda: prefetch_loop(batches, step, copy_stream),
                         saving_ms=(len(batches) - 1) * min(copy_ms, step_ms), tries=TRIES,
                         describe=("copying then computing one batch at a time", "the copies with the steps"),
                         hint="queue the copy of batch i+1 on copy_stream before step(batch i), and never block "
                              "the host (no synchronize in the loop)")


register(Exercise(NOTEBOOK, "prefetch_loop", check_prefetch_loop, gpu=True, cpu_checks=3))


def _check_prefetch_loop_on_cpu(prefetch_loop: Callable) -> None:
    """check_prefetch_loop's outputs and buffers on a CPU, where copies and steps run in order."""
    with (exercise("prefetch_loop") as ex,
          ex.on_cpu("the outputs, in order, and the tensors of a batch's size made for the GPU, with the copies "
                    "and steps run in order on the CPU",
                    "the race (slow copies, then slow steps), and the speed against copying then computing "
                    "one batch at a time"),
          cuda_on_cpu() as gpu):
        gen = torch.Generator().manual_seed(1000)
        batches = [torch.randn(64, 32, generator=gen) for _ in range(BATCHES)]  # small: nothing is timed
        want = [b.sum(dim=1) for b in batches]
        before = len(gpu.placed)
        got = prefetch_loop(batches, lambda x: x.sum(dim=1), torch.cuda.Stream())
        ex.expect(isinstance(got, list) and len(got) == len(batches),
                  f"returned a {type(got).__name__}, expected a list of {len(batches)} outputs",
                  "append step(x) for every batch, in order")
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if not (isinstance(g, torch.Tensor) and torch.equal(g, w))]
        ex.expect(not bad, f"the outputs of batches {bad} are wrong, with copies and steps run in order",
                  "output i is step(batch i on the GPU): which buffer holds batch i when step reads it?")
        made = sum(n >= batches[0].numel() for n in gpu.placed[before:])
        ex.expect(made <= 2,
                  f"made {made} GPU tensors of a batch's size for {len(batches)} batches; two buffers, made once, "
                  "need 2",
                  "allocate the two buffers once, before the loop, and copy each batch into one of them: "
                  "copying into an existing tensor allocates nothing, while .to('cuda') makes a new one")


# ------------------------------------------------------------------------------------------
# Exercise 5: hardware queues and false dependencies (CUDA_DEVICE_MAX_CONNECTIONS)
# ------------------------------------------------------------------------------------------
def queues_experiment(order: str = "depth-first", streams: int = 16, per_stream: int = 4, ms: float = 2.0) -> list[Op]:
    """The lecture's experiment: `streams` streams of `per_stream` kernels, queued depth- or breadth-first.

    Stream s is named f"s{s}" and its kernel j f"s{s}k{j}".
    """
    pairs = ([(s, j) for s in range(streams) for j in range(per_stream)] if order == "depth-first"
             else [(s, j) for j in range(per_stream) for s in range(streams)])
    return [("kernel", f"s{s}", f"s{s}k{j}", ms) for s, j in pairs]


def _grid_answer(streams: int, per_stream: int, ms: float, order: str, queues: int) -> Timeline:
    """The timeline of `queues_experiment`, worked out by hand for this one family of programs (not a simulator).

    Breadth-first, or with a queue per stream, kernel j of every stream starts at j * ms.  Depth-first,
    the streams that share a queue follow one another: the next stream's first kernel starts with the
    previous stream's last one, so the r-th stream of a queue (r = 0, 1, ...) starts r * (per_stream - 1)
    kernels late.
    """
    timeline = {}
    for s in range(streams):
        rank = s // queues if order == "depth-first" else 0  # streams ahead of s in its queue
        for j in range(per_stream):
            start = (rank * (per_stream - 1) + j) * ms
            timeline[f"s{s}k{j}"] = (start, start + ms)
    return timeline


# Each case: a program, a number of queues, and the timeline; together they reject the usual wrong rules.
QUEUE_CASES: list[tuple[str, list[Op], int, Timeline]] = [
    ("with a queue per stream, the streams are independent",
     [("kernel", "a", "a1", 2), ("kernel", "a", "a2", 2), ("kernel", "b", "b1", 3), ("kernel", "b", "b2", 3)], 2,
     {"a1": (0, 2), "a2": (2, 4), "b1": (0, 3), "b2": (3, 6)}),
    ("one queue: a kernel starts only once the kernel queued before it has started (a false dependency)",
     [("kernel", "a", "a1", 2), ("kernel", "a", "a2", 2), ("kernel", "b", "b1", 3), ("kernel", "b", "b2", 3)], 1,
     {"a1": (0, 2), "a2": (2, 4), "b1": (2, 5), "b2": (5, 8)}),
    ("a queue does not wait for a kernel to finish: kernels of other streams start beside it",
     [("kernel", "a", "a1", 2), ("kernel", "b", "b1", 3), ("kernel", "a", "a2", 2), ("kernel", "b", "b2", 3)], 1,
     {"a1": (0, 2), "b1": (0, 3), "a2": (2, 4), "b2": (3, 6)}),
    ("a kernel still waits for the previous kernel of its own stream",
     [("kernel", "a", "a1", 5), ("kernel", "b", "b1", 1), ("kernel", "b", "b2", 1), ("kernel", "a", "a2", 1)], 1,
     {"a1": (0, 5), "b1": (0, 1), "b2": (1, 2), "a2": (5, 6)}),
    ("streams go to the queues round-robin, in the order they first appear in the program",
     [("kernel", "copy", "load", 4), ("kernel", "copy", "load 2", 1), ("kernel", "compute", "step", 1),
      ("kernel", "log", "write", 1)], 2,
     {"load": (0, 4), "load 2": (4, 5), "step": (0, 1), "write": (4, 5)}),
    ("the lecture's experiment: 16 streams of four 2 ms kernels, depth-first, one queue",
     queues_experiment("depth-first"), 1, _grid_answer(16, 4, 2, "depth-first", 1)),
    ("the lecture's experiment, depth-first, 8 queues (the default)",
     queues_experiment("depth-first"), 8, _grid_answer(16, 4, 2, "depth-first", 8)),
    ("the lecture's experiment, depth-first, 32 queues",
     queues_experiment("depth-first"), 32, _grid_answer(16, 4, 2, "depth-first", 32)),
    ("the lecture's experiment, breadth-first, one queue",
     queues_experiment("breadth-first"), 1, _grid_answer(16, 4, 2, "breadth-first", 1)),
]


def plural_queues(queues: int) -> str:
    """'1 queue', '8 queues'."""
    return f"{queues} queue" + ("" if queues == 1 else "s")


def check_simulate_queues(simulate_queues: Callable[[Sequence[Op], int], Timeline]) -> None:
    """simulate_queues(program, queues) must return each kernel's (start, end) under the stream rules
    and the hardware queues' rule, for programs of kernels only."""
    with exercise("simulate_queues") as ex:
        for rule, program, queues, want in QUEUE_CASES:
            problem = _same_timeline(simulate_queues(program, queues), want)
            ex.expect(problem is None, f"{rule}: with {plural_queues(queues)}, simulate_queues {problem}",
                      f"the rule: {rule}; a kernel starts at the later of two moments: which ones?")


register(Exercise(NOTEBOOK, "simulate_queues", check_simulate_queues))
