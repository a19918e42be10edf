"""Wrong answers, and other right ones, to the exercises of notebook 03 (CUDA streams), for the
tests: SPOILERS.

The timeline exercises are checked on the CPU.  The race and prefetching exercises need a GPU: their
checks delay one stream on purpose, so every racy answer below must fail there, every time.  Without
a GPU their checks run the answer with the streams in order; WRONG_ON_CPU says which answers that rejects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


# ---------------------------------------------------------------- exercise 1: fan_out (GPU)
def fan_out_solution(x, fns, streams, *, fork=True, join="all", record=True, where="own"):
    """The solution, with a switch for each of its safeguards, and for where it queues the work.

    join: "all" (right), "none", "last" (only the last stream), "in the loop" (joins each stream right after
    queuing it, so the next fork waits for it: the streams run one after another), "host" (synchronizes
    the device).  where: "own" (streams[i], right), "current", "first" (streams[0] for all).
    record: True (record_stream on the current stream, right), False, or "side" (on the output's own stream).
    """
    current = torch.cuda.current_stream()
    placed = [current if where == "current" else streams[0] if where == "first" else s for s in streams]
    if fork and join != "in the loop":
        for s in placed:
            s.wait_stream(current)  # fork: x is ready before any side stream reads it
    outs = []
    for fn, s in zip(fns, placed):
        if join == "in the loop" and fork:
            s.wait_stream(current)
        with torch.cuda.stream(s):
            out = fn(x)
        if record is True:
            out.record_stream(current)  # the caller uses and frees it on the current stream
        elif record == "side":
            out.record_stream(s)
        if join == "in the loop":
            current.wait_stream(s)
        outs.append(out)
    if join == "all":
        for s in placed:
            current.wait_stream(s)  # join: the caller's next work comes after every side stream's
    elif join == "last":
        current.wait_stream(placed[-1])
    elif join == "host":
        torch.cuda.synchronize()
    return outs


def fan_out_with_events(x, fns, streams):
    """Right too: one event for the fork, one per stream for the join."""
    current = torch.cuda.current_stream()
    ready = current.record_event()
    outs, done = [], []
    for fn, s in zip(fns, streams):
        s.wait_event(ready)
        with torch.cuda.stream(s):
            outs.append(fn(x))
            done.append(s.record_event())
        outs[-1].record_stream(current)
    for event in done:
        current.wait_event(event)
    return outs


def chain(x, fns, streams):  # each fn applied to the output before it: a chain, not a fan
    current = torch.cuda.current_stream()
    outs = []
    for fn, s in zip(fns, streams):
        s.wait_stream(current)
        with torch.cuda.stream(s):
            x = fn(x)
        x.record_stream(current)
        current.wait_stream(s)
        outs.append(x)
    return outs


WRONG_FANS = {
    "no fork": lambda x, f, s: fan_out_solution(x, f, s, fork=False),
    "no join": lambda x, f, s: fan_out_solution(x, f, s, join="none"),
    "joins only the last stream": lambda x, f, s: fan_out_solution(x, f, s, join="last"),
    "joins each stream in the loop (one after another)": lambda x, f, s: fan_out_solution(x, f, s, join="in the loop"),
    "the host synchronizes": lambda x, f, s: fan_out_solution(x, f, s, join="host"),
    "no record_stream": lambda x, f, s: fan_out_solution(x, f, s, record=False),
    "record_stream on the side stream": lambda x, f, s: fan_out_solution(x, f, s, record="side"),
    "everything on the current stream": lambda x, f, s: fan_out_solution(x, f, s, where="current"),
    "everything on streams[0]": lambda x, f, s: fan_out_solution(x, f, s, where="first"),
    "a chain, not a fan": chain,
    "only the last output": lambda x, f, s: fan_out_solution(x, f, s)[-1:],
}


# ---------------------------------------------------------------- exercise 2: predicted_timeline (CPU)
ANSWER = PROGRAM_ANSWER = {  # the timeline of nb03.PROGRAM (nb03.PROGRAM_SEALED holds its digests)
    "load 0": (0, 10), "load 1": (10, 20), "log": (0, 30),
    "step 0": (10, 25), "step 1": (25, 40), "report": (40, 45),
}
WRONG_PREDICTIONS = {
    "everything on one queue": {
        "load 0": (0, 10), "load 1": (10, 20), "log": (20, 50), "step 0": (50, 65), "step 1": (65, 80),
        "report": (80, 85)},
    "waits ignored": {**ANSWER, "step 0": (0, 15), "step 1": (15, 30), "report": (30, 35)},
    "step 1 waits for load 1 only": {**ANSWER, "step 1": (20, 35), "report": (35, 40)},
    "wait_stream ignored": {**ANSWER, "report": (30, 35)},
    "a kernel missing": {k: v for k, v in ANSWER.items() if k != "log"},
    "durations instead of times": {k: v[1] - v[0] for k, v in ANSWER.items()},
}


def _returns(timeline: object) -> Callable[[], object]:
    return lambda: timeline


# ---------------------------------------------------------------- exercise 3: simulate (CPU, and on the GPU)
def simulator(*, in_order: bool = True, waits: bool = True, eager_events: bool = True, use_max: bool = True,
              late_records_count: bool = False, wait_stream: bool = True) -> Callable[[Sequence[tuple]], dict]:
    """The solution's rules, each of which can be broken to make a typical wrong simulator.

    Operations name the stream first: ("kernel", stream, name, ms), ("record", stream, event),
    ("wait", stream, event), ("wait_stream", stream, other).  With nothing broken, it is right.
    """

    def simulate(program):
        free_at, recorded, timeline = {}, {}, {}
        if late_records_count:  # every record is known from the start (CUDA does not look ahead)
            recorded = {op[2]: None for op in program if op[0] == "record"}
        final = {}  # for lazy events: a stream's final time
        for op in program:
            if op[0] == "kernel":
                final[op[1]] = final.get(op[1], 0.0) + op[3]
        for op in program:
            if op[0] == "kernel":
                _, stream, name, ms = op
                start = free_at.get(stream, 0.0) if in_order else 0.0
                free_at[stream] = start + ms
                timeline[name] = (start, start + ms)
            elif op[0] == "record":
                _, stream, event = op
                recorded[event] = free_at.get(stream, 0.0) if eager_events else final.get(stream, 0.0)
            elif op[0] == "wait" and waits:
                _, stream, event = op
                if event in recorded:
                    when = recorded[event]
                    if when is None:  # recorded later in the program: take that record's stream's end
                        when = max(final.values())
                    free_at[stream] = max(free_at.get(stream, 0.0), when) if use_max else when
            elif op[0] == "wait_stream" and wait_stream:
                _, stream, other = op
                free_at[stream] = max(free_at.get(stream, 0.0), free_at.get(other, 0.0))
        return timeline

    return simulate


def one_queue(program):
    """Every kernel on one queue, in program order: streams ignored."""
    t, timeline = 0.0, {}
    for op in program:
        if op[0] == "kernel":
            timeline[op[2]] = (t, t + op[3])
            t += op[3]
    return timeline


def record_event_stream_swapped(program):
    """Reads ("record", stream, event) the other way round, as ("record", event, stream)."""
    swapped = [(op[0], op[2], op[1]) if op[0] == "record" else op for op in program]
    return simulator()(swapped)


ignores_waits = simulator(waits=False, wait_stream=False)

WRONG_SIMULATORS = {
    "streams ignored (one queue)": one_queue,
    "kernels of a stream all start at 0": simulator(in_order=False),
    "waits ignored": ignores_waits,
    "wait_stream ignored": simulator(wait_stream=False),
    "an event stands for its stream's end": simulator(eager_events=False),
    "a wait moves the stream back in time": simulator(use_max=False),
    "waits for events recorded later": simulator(late_records_count=True),
    "returns durations": lambda program: {k: v[1] - v[0] for k, v in simulator()(program).items()},
    "record's stream and event swapped": record_event_stream_swapped,
}


# ---------------------------------------------------------------- exercise 4: prefetch_loop (GPU)
def lecture_loop(batches, step, copy_stream, *, wait=True, record=True):
    """The lecture's loop (a new tensor per batch, record_stream), with a switch for each safeguard."""
    main = torch.cuda.current_stream()

    def load(b):
        with torch.cuda.stream(copy_stream):
            x = b.to("cuda", non_blocking=True)
        return x, copy_stream.record_event()

    outputs, upcoming = [], load(batches[0])
    for i in range(len(batches)):
        x, copied = upcoming
        if i + 1 < len(batches):
            upcoming = load(batches[i + 1])
        if wait:
            main.wait_event(copied)
        if record:
            x.record_stream(main)
        outputs.append(step(x))
    return outputs


def double_buffer(batches, step, copy_stream, *, wait_copied=True, wait_consumed=True, nbuffers=2):
    """The exercise's solution, with a switch for each of its two events, and for its number of buffers."""
    main = torch.cuda.current_stream()
    buffers = [torch.empty_like(batches[0], device="cuda") for _ in range(nbuffers)]
    copied = [torch.cuda.Event() for _ in range(nbuffers)]
    consumed = [torch.cuda.Event() for _ in range(nbuffers)]
    copy_stream.wait_stream(main)

    def load(i):
        k = i % nbuffers
        if wait_consumed:
            copy_stream.wait_event(consumed[k])
        with torch.cuda.stream(copy_stream):
            buffers[k].copy_(batches[i], non_blocking=True)
        copied[k].record(copy_stream)

    outputs = []
    load(0)
    for i in range(len(batches)):
        k = i % nbuffers
        if i + 1 < len(batches):
            load(i + 1)
        if wait_copied:
            main.wait_event(copied[k])
        outputs.append(step(buffers[k]))
        consumed[k].record(main)
    return outputs


def all_on_current(batches, step, copy_stream):  # correct, but copies and steps alternate
    return [step(b.to("cuda", non_blocking=True)) for b in batches]


def fork_every_batch(batches, step, copy_stream):  # correct, but each copy waits for the last step
    main = torch.cuda.current_stream()
    outputs = []
    for b in batches:
        copy_stream.wait_stream(main)
        with torch.cuda.stream(copy_stream):
            x = b.to("cuda", non_blocking=True)
        main.wait_stream(copy_stream)
        x.record_stream(main)
        outputs.append(step(x))
    return outputs


def double_buffer_serial(batches, step, copy_stream):  # two buffers, but each copy waits for the previous step
    main = torch.cuda.current_stream()
    buffers = [torch.empty_like(batches[0], device="cuda") for _ in range(2)]
    outputs = []
    for i, b in enumerate(batches):
        copy_stream.wait_stream(main)
        with torch.cuda.stream(copy_stream):
            buffers[i % 2].copy_(b, non_blocking=True)
        main.wait_stream(copy_stream)
        outputs.append(step(buffers[i % 2]))
    return outputs


def last_batch_missing(batches, step, copy_stream):
    return double_buffer(batches[:-1], step, copy_stream)


WRONG_LOOPS = {
    "the lecture's loop (a new tensor per batch, record_stream)": lecture_loop,
    "no wait for the copy": lambda b, s, c: lecture_loop(b, s, c, wait=False),
    "no record_stream": lambda b, s, c: lecture_loop(b, s, c, record=False),
    "double buffer, no wait for the copy": lambda b, s, c: double_buffer(b, s, c, wait_copied=False),
    "double buffer, overwrites a buffer still read": lambda b, s, c: double_buffer(b, s, c, wait_consumed=False),
    "one buffer": lambda b, s, c: double_buffer(b, s, c, nbuffers=1),
    "everything on the current stream": all_on_current,
    "the copy stream waits for every step": fork_every_batch,
    "two buffers, the copy stream waits for every step": double_buffer_serial,
    "last batch missing": last_batch_missing,
}

# ---------------------------------------------------------------- exercise 5: simulate_queues (CPU)
def queue_simulator(*, queue_order: bool = True, queue_waits_for_end: bool = False, stream_order: bool = True,
                    mapping: str = "round-robin") -> Callable[[Sequence[tuple], int], dict]:
    """The solution's rules, each of which can be broken to make a typical wrong simulator.

    mapping: how streams get their queue: "round-robin" in the order they first appear (right),
    "sorted" round-robin over the sorted stream names, "blocks" contiguous blocks of streams.
    """

    def simulate_queues(program, queues):
        names = list(dict.fromkeys(op[1] for op in program))
        if mapping == "sorted":
            queue_of = {name: i % queues for i, name in enumerate(sorted(names))}
        elif mapping == "blocks":
            per_queue = -(-len(names) // queues)  # ceil
            queue_of = {name: i // per_queue for i, name in enumerate(names)}
        else:
            queue_of = {name: i % queues for i, name in enumerate(names)}
        stream_free, queue_free, timeline = {}, {}, {}
        for _, stream, name, ms in program:
            q = queue_of[stream]
            start = stream_free.get(stream, 0.0) if stream_order else 0.0
            if queue_order:
                start = max(start, queue_free.get(q, 0.0))
            stream_free[stream] = start + ms
            queue_free[q] = start + ms if queue_waits_for_end else start
            timeline[name] = (start, start + ms)
        return timeline

    return simulate_queues


WRONG_QUEUE_SIMULATORS = {
    "hardware queues ignored (exercise 3's rules)": queue_simulator(queue_order=False),
    "a queue waits for each kernel to finish": queue_simulator(queue_waits_for_end=True),
    "a stream's kernels do not wait for each other": queue_simulator(stream_order=False),
    "streams numbered in sorted order, not in order of appearance": queue_simulator(mapping="sorted"),
    "streams given to the queues in blocks": queue_simulator(mapping="blocks"),
    "returns durations": lambda program, queues: {k: v[1] - v[0]
                                                  for k, v in queue_simulator()(program, queues).items()},
}

WRONG = {
    "check_fan_out": WRONG_FANS,
    "check_predicted_timeline": {what: _returns(timeline) for what, timeline in WRONG_PREDICTIONS.items()},
    "check_simulate": WRONG_SIMULATORS,
    "check_simulate_on_gpu": {"waits ignored": ignores_waits},
    "check_prefetch_loop": WRONG_LOOPS,
    "check_simulate_queues": WRONG_QUEUE_SIMULATORS,
}
# The wrong answers of the GPU checks whose mistake a CPU shows too, with the copies and steps run in
# order: without a GPU, the check's CPU part must reject them (tests/test_exercises.py).  The others
# are wrong only in a race or in speed.  check_simulate_on_gpu has no CPU part (check_simulate is it).
WRONG_ON_CPU = {
    "check_fan_out": {"a chain, not a fan", "only the last output"},
    "check_prefetch_loop": {  # a new GPU tensor per batch, one buffer overwritten before its step, a batch missing
        "the lecture's loop (a new tensor per batch, record_stream)", "no wait for the copy", "no record_stream",
        "everything on the current stream", "the copy stream waits for every step", "one buffer",
        "last batch missing"},
    "check_simulate_on_gpu": set(),
}
ALSO_RIGHT = {
    "check_fan_out": {"events instead of wait_stream": fan_out_with_events},
    # With nothing switched off, the builders of the wrong answers are right: each wrong one breaks one thing.
    "check_simulate": {"the wrong simulators' builder, nothing broken": simulator()},
    "check_prefetch_loop": {"the wrong loops' double_buffer, nothing broken": double_buffer},
    "check_simulate_queues": {"the wrong simulators' builder, nothing broken": queue_simulator()},
}
