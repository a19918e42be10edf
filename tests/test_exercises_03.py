"""Exercise checks of notebook 03: their references against other formulations of the same rules (and, on a
GPU, against CUDA itself), the timeline they keep sealed, and what the generic tests cannot say: that every
kind of caller is tried, and that a failing program is made smaller before it is shown.

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.
"""

import ast
import contextlib
import io
import re
from collections import defaultdict, deque

import pytest
import torch

from conftest import gpu, host
from utils.exercises import ExerciseFailed, exercise, inside_check, nb03
from utils.exercises.answers import nb03 as answers03
from utils.exercises.properties import for_all
from utils.exercises.streams import TORCH_CALLERS, torch_callers

SEEDS = 400  # generated programs each reference is held against


@pytest.fixture(autouse=True, params=[nb03.NOTEBOOK])
def notebook(request):
    """The notebook's stem in every test's id: `-k 03_streams_pytorch` selects these tests with its checks'."""
    return request.param


@host
def test_the_program_digests_are_its_timeline():
    with inside_check():
        timeline = nb03.stream_rules(nb03.PROGRAM)
    assert timeline == answers03.PROGRAM_ANSWER
    assert nb03._timeline_seal(timeline) == nb03.PROGRAM_SEALED


@host
def test_the_prediction_check_is_no_oracle_for_a_search():
    """Round 17's adversary found each kernel's place by brute force against its own digest (5,000 tries each), and
    the message counted the kernels out of place: one slow digest of the whole timeline now, and one message for
    every wrong timeline whose kernels last their durations, however many kernels are off."""
    right = answers03.PROGRAM_ANSWER
    one_off = {**right, "report": (41, 46)}
    all_off = {name: (start + 1, end + 1) for name, (start, end) in right.items()}
    said = {nb03._prediction_problem(timeline) for timeline in (one_off, all_off)}
    assert len(said) == 1 and nb03._prediction_problem(right) is None, said
    assert nb03.SEAL_ROUNDS >= 10_000 and not hasattr(nb03, "_kernel_seal")


def cuda_like(program):
    """The stream rules as CUDA runs them: each stream a queue of commands run in order against its own clock;
    a wait is bound, when the host queues it, to the latest record of its event so far (cudaStreamWaitEvent),
    a wait for an event never recorded is dropped, and wait_stream records a marker on the other stream there
    and then.  The streams then run, each as far as it can, until all are done."""
    queued, latest = defaultdict(list), {}
    for op in program:
        if op[0] == "kernel":
            queued[op[1]].append(("kernel", op[2], op[3]))
        elif op[0] == "record":
            latest[op[2]] = (op[2], len(queued[op[1]]), op[1])  # this record, and no other
            queued[op[1]].append(("record", latest[op[2]]))
        elif op[0] == "wait" and op[2] in latest:
            queued[op[1]].append(("wait", latest[op[2]]))
        elif op[0] == "wait_stream":
            marker = ("stream", len(queued[op[2]]), op[2])
            queued[op[2]].append(("record", marker))
            queued[op[1]].append(("wait", marker))
    clock, done, reached, timeline = defaultdict(float), {}, defaultdict(int), {}
    moved = True
    while moved:
        moved = False
        for stream, commands in queued.items():
            while reached[stream] < len(commands):
                kind, *what = commands[reached[stream]]
                if kind == "wait" and what[0] not in done:
                    break  # its record has not run yet
                if kind == "kernel":
                    name, ms = what
                    timeline[name] = (clock[stream], clock[stream] + ms)
                    clock[stream] += ms
                elif kind == "record":
                    done[what[0]] = clock[stream]
                else:
                    clock[stream] = max(clock[stream], done[what[0]])
                reached[stream] += 1
                moved = True
    assert all(reached[s] == len(c) for s, c in queued.items()), "a wait whose record never ran"
    return timeline


def _same_timelines(a, b):
    return set(a) == set(b) and all(abs(a[k][0] - b[k][0]) < 1e-9 and abs(a[k][1] - b[k][1]) < 1e-9 for k in a)


def _programs():
    return [*nb03.SIMULATE_CASES, *(nb03.random_program(seed % 31, seed) for seed in range(SEEDS))]


@host
def test_the_stream_rules_are_cudas_queues_of_commands():
    with inside_check():
        differ = [p for p in _programs() if not _same_timelines(nb03.stream_rules(p), cuda_like(p))]
    assert differ == []


def hardware_queues(program, queues):
    """The hardware queues' rule as a simulation in time: each queue hands out its kernels in order, the one at
    its head as soon as the kernel before it in the queue has started and its stream's previous kernel has ended;
    time moves to the next moment at which a kernel ends or starts."""
    heads, queue_of = defaultdict(deque), {}
    for _, stream, name, ms in program:
        heads[queue_of.setdefault(stream, len(queue_of) % queues)].append((stream, name, ms))
    stream_free, timeline, now = defaultdict(float), {}, 0.0
    while any(heads.values()):
        started = False
        for queue in heads.values():
            if queue and stream_free[queue[0][0]] <= now:
                stream, name, ms = queue.popleft()
                timeline[name] = (now, now + ms)
                stream_free[stream] = now + ms
                started = True
        if not started:
            now = min(stream_free[q[0][0]] for q in heads.values() if q)
    return timeline


def grid_answer(streams, per_stream, ms, order, queues):
    """The lecture's experiment worked out by hand: breadth-first, or with a queue per stream, kernel j of every
    stream starts at j * ms; depth-first, the r-th stream of a queue starts r * (per_stream - 1) kernels late."""
    timeline = {}
    for s in range(streams):
        rank = s // queues if order == "depth-first" else 0
        for j in range(per_stream):
            start = (rank * (per_stream - 1) + j) * ms
            timeline[f"s{s}k{j}"] = (start, start + ms)
    return timeline


@host
def test_the_queue_rules_are_queues_handing_out_kernels_in_time():
    cases = [*nb03.QUEUE_CASES, *(nb03.random_queue_case(seed % 31, seed) for seed in range(SEEDS))]
    with inside_check():
        differ = [c for c in cases if not _same_timelines(nb03.queue_rules(*c), hardware_queues(*c))]
        lecture = {(order, q): nb03.queue_rules(nb03.queues_experiment(order), q)
                   for order in ("depth-first", "breadth-first") for q in (1, 2, 8, 16, 32)}
    assert differ == []
    assert all(_same_timelines(t, grid_answer(16, 4, 2.0, order, q)) for (order, q), t in lecture.items())


@host
def test_the_generated_programs_hold_what_the_rules_are_about():
    """Re-records after a wait, waits before any record, wait_streams, kernels of 0 ms and of multiples of
    2**-20 ms (a simulator that rounds to 0.01 ms, or to 0.001 ms, is off: round 18), up to 6 streams, kernels
    named like streams (round 19): each in many of the programs a check tries (the classes of issue 34 need
    them)."""
    programs = [nb03.random_program(seed % (nb03.MAX_OPS + 1), seed) for seed in range(nb03.SEEDED)]

    def rerecord_after_wait(p):
        waited = set()
        for op in p:
            if op[0] == "wait":
                waited.add(op[2])
            elif op[0] == "record" and op[2] in waited:
                return True
        return False

    def wait_before_record(p):
        recorded = set()
        for op in p:
            if op[0] == "record":
                recorded.add(op[2])
            elif op[0] == "wait" and op[2] not in recorded:
                return True
        return False

    kinds = {
        "re-record after a wait": rerecord_after_wait,
        "wait before a record": wait_before_record,
        "wait_stream": lambda p: any(op[0] == "wait_stream" for op in p),
        "kernel of 0 ms": lambda p: any(op[0] == "kernel" and op[3] == 0 for op in p),
        "kernel of a fraction of a ms": lambda p: any(op[0] == "kernel" and op[3] != int(op[3]) for op in p),
        "kernel that rounding to 0.01 ms changes": lambda p: any(op[0] == "kernel" and op[3] != round(op[3], 2)
                                                                 for op in p),
        "kernel that rounding to 0.000001 ms changes": lambda p: any(op[0] == "kernel" and op[3] != round(op[3], 6)
                                                                     for op in p),
        "4 streams": lambda p: len(nb03._streams_of(p)) == 4,
        "5 or 6 streams": lambda p: len(nb03._streams_of(p)) >= 5,
        "a kernel named like a stream": lambda p: bool(set(nb03._streams_of(p)) & set(nb03._kernels(p))),
        "empty": lambda p: p == [],
    }
    counts = {what: sum(map(holds, programs)) for what, holds in kinds.items()}
    assert all(n >= (1 if what == "empty" else 40) for what, n in counts.items()), counts


@host
def test_a_failing_program_is_made_smaller_before_it_is_shown():
    """An answer that fails wherever a wait comes before a kernel of its stream: the program shown is that wait
    and one such kernel, of 1 ms, named k0."""
    def fails(p):
        return any(a[0] == "wait" and b[0] == "kernel" and b[1] == a[1] for i, a in enumerate(p) for b in p[i + 1:])

    program = next(p for p in (nb03.random_program(20, seed) for seed in range(100)) if fails(p) and len(p) > 10)
    smallest = nb03._smallest(program, fails)
    assert len(smallest) == 2 and smallest[0][0] == "wait" and smallest[1] == ("kernel", smallest[0][1], "k0", 1)


@host
@pytest.mark.parametrize("name", ["fan_out", "prefetch_loop"])
def test_a_property_over_the_callers_calls_the_answer_from_every_kind_of_caller(name):
    """The race properties draw torch_callers() with as many examples as there are kinds: Hypothesis then
    tries each kind once (it stops when a strategy has no new value left)."""
    seen = []
    with contextlib.redirect_stdout(io.StringIO()), exercise(name) as ex:
        for_all(ex, torch_callers(), seen.append, examples=len(TORCH_CALLERS))
    assert sorted(seen) == sorted(TORCH_CALLERS)


@gpu
def test_the_stream_rules_are_what_cuda_does():
    """Generated programs (re-records, waits before records, wait_streams, kernels of 0 ms) run on CUDA streams
    (nb03._run_in_time), each kernel where the stream rules put it, within the GPU's own measured delays."""
    gap_ms = nb03.dependency_gap_ms()
    worst = []
    for seed in range(8):
        program = nb03.random_program(12, 1000 + seed)
        kernels = [op[2] for op in program if op[0] == "kernel"]
        if not kernels:
            continue
        measured, late_ms = nb03._run_in_time(program)
        with inside_check():
            predicted = nb03.stream_rules(nb03.with_durations(program, measured))
        off = max(max(abs(iv.start_ms - predicted[iv.name][0]), abs(iv.end_ms - predicted[iv.name][1]))
                  for iv in measured)
        worst.append((off, nb03.allowed_difference_ms(len(kernels), gap_ms, late_ms), program))
    assert [w for w in worst if w[0] > w[1]] == []


@host
def test_an_error_of_the_answer_is_shown_on_the_smallest_program_that_raises_it():
    """A fourth adversary's simulator raises KeyError on a wait for an event not yet recorded: the note named the first
    generated program that raised it (9 operations, its event named like a stream, s1); now the smallest one."""
    from utils.exercises.answers.nb03 import unrecorded_wait_raises

    with pytest.raises(KeyError) as raised:
        nb03.check_simulate(unrecorded_wait_raises)
    note = "".join(raised.value.__notes__)
    shown = ast.literal_eval(note.split("simulate(", 1)[1].rsplit(") (the smallest", 1)[0])
    assert shown == [("wait", shown[0][1], "e0")], note
    assert raised.value.args == ("e0",)



@host
def test_a_simulator_that_keeps_results_from_earlier_calls_is_told_so():
    """Round 19's adversary: a simulator that caches its results by the kernels' names FAILed with the hint of a
    duration; the program with its names made new passes, and the message says what the answer kept."""
    with pytest.raises(ExerciseFailed) as failed:
        nb03.check_simulate(answers03.simulate_cached_by_kernels)
    assert nb03.STALE in str(failed.value) and nb03.STALE_HINT in str(failed.value), failed.value


@host
def test_a_time_off_by_float32s_rounding_shows_in_the_message():
    """Round 19's adversary: float32 times printed with 6 digits read as the rules' own interval."""
    with pytest.raises(ExerciseFailed) as failed:
        nb03.check_simulate(answers03.simulate_float32_tensor)
    got, want = re.search(r"at (.+?) ms; the rules put it at (.+?) ms", str(failed.value)).groups()
    assert got != want, failed.value
    assert nb03._distinct((0.0, 13.87624), (0.0, 13.876241)) == ("0 to 13.87624", "0 to 13.876241")


@host
def test_the_cpu_parts_imitation_says_it_is_a_gpu():
    """Round 19's adversary: under cuda_on_cpu, an answer saw a CPU (x.is_cuda, stream.device,
    torch.cuda.is_available()) and took its CPU branch, or asked for memory the count missed; its buffers were counted
    in elements, and its batches were not pinned.  With like_a_gpu, nothing says CPU, and the count is in bytes."""
    from utils.exercises import cuda_on_cpu

    host_tensor, available = torch.ones(4), torch.cuda.is_available
    with cuda_on_cpu(like_a_gpu=True) as gpu:
        assert torch.cuda.is_available() and torch.cuda.current_stream().device.type == "cuda"
        x = torch.ones(4, device="cuda")
        raw = torch.empty(16, dtype=torch.uint8, device=torch.cuda.Stream().device)
        assert x.is_cuda and not x.is_cpu and x.device == torch.device("cuda", 0) and x.get_device() == 0
        assert not host_tensor.is_cuda and host_tensor.is_cpu and host_tensor.device.type == "cpu"
        y = x * 2  # new memory made from GPU memory: on the GPU too
        assert y.is_cuda and raw.view(torch.float32).is_cuda and not x.cpu().is_cuda and not x.to("cpu").is_cuda
        assert x.cpu().data_ptr() != x.data_ptr()  # a copy, as from a GPU
        assert torch.empty_like(host_tensor, device=x.device).is_cuda
        assert not host_tensor.is_pinned() and host_tensor.pin_memory().is_pinned()
        assert gpu.placed == [16, 16, 16, 16]  # bytes: x, raw, y, and empty_like's
    assert torch.cuda.is_available is available


@host
def test_every_race_meets_inputs_with_and_without_grad_and_autograd_on_and_off(monkeypatch):
    """Round 79's adversary: a fan_out that skips the fork and record_stream where x requires grad, and a loop that
    skips the waits for the steps where autograd is off, PASSed on the H200: every race made x without grad, gave a
    step without parameters, and called with autograd on.  Over the four kinds of caller, each race of fan_out now
    meets every case of FAN_RACE_GRADS (x with grad and without, autograd on and off), and each of prefetch_loop's
    every case of LOOP_RACE_GRADS (its host's wait is asked in each)."""
    met: defaultdict = defaultdict(set)
    monkeypatch.setattr(nb03, "_fan_race", lambda ex, yours, kind, slow, grad: met[f"fan_out, race {slow}"].add(grad))
    monkeypatch.setattr(nb03, "_fan_overlap", lambda ex, yours, kind, grad: met["fan_out, overlap"].add(grad))
    monkeypatch.setattr(nb03, "_fan_frees", lambda ex, yours, kind, grad: met["fan_out, frees"].add(grad))
    monkeypatch.setattr(nb03, "_loop_race", lambda ex, yours, kind, name, timing, batches, grad: met[
        f"prefetch_loop, {name}"].add(grad))
    fan_out_races, loop_races = nb03._fan_races(None, None), nb03._loop_races(None, None, {}, [])
    for kind in TORCH_CALLERS:
        fan_out_races(kind)
        loop_races(kind)
    assert len(met) == nb03.FAN + 6, sorted(met)
    for race, grads in met.items():
        assert grads == set(nb03.FAN_RACE_GRADS if race.startswith("fan_out") else nb03.LOOP_RACE_GRADS), race
    for cases in (nb03.FAN_RACE_GRADS, nb03.LOOP_RACE_GRADS):
        assert {grad for grad, _ in cases} == {True, False}  # x requires grad or not; a step with a parameter or not
        assert {mode == "grad" for _, mode in cases} == {True, False}  # autograd on and off
        assert {mode for _, mode in cases} >= {"grad", "no_grad", "inference_mode"}


@host
def test_after_the_loop_a_step_that_saves_its_buffer_cannot_be_backpropagated_and_the_checks_step_can():
    """Round 79's adversary: with two buffers written again batch after batch, a step that saves its input for
    backward (x * w: w's gradient needs x) can be backpropagated after the loop for the last two batches only, since
    autograd's version counter sees the copies into its buffer since.  The check's step adds its parameter, saves
    nothing of its buffer, and a backward through every output of the course's loop reaches it."""
    from utils.exercises import cuda_on_cpu

    with cuda_on_cpu(like_a_gpu=True):
        batches = [torch.randn(3, 5).pin_memory() for _ in range(4)]
        weight = torch.full((), 2.0, requires_grad=True)
        backward = []
        for out in answers03.double_buffer(batches, lambda x: x * weight, torch.cuda.Stream()):
            try:
                out.sum().backward()
                backward.append(True)
            except RuntimeError as error:
                assert "modified by an inplace operation" in str(error)
                backward.append(False)
        assert backward == [False, False, True, True]
        params: list = []

        def step(x):
            params.append(torch.zeros((), requires_grad=True))
            return x * 2 + params[-1]

        outs = answers03.double_buffer(batches, step, torch.cuda.Stream())
        assert nb03._params_unreached(outs, params, [True] * len(outs)) == []
        assert nb03._params_unreached(answers03.prefetch_outputs_made_new_leaves(batches, step, torch.cuda.Stream()),
                                      params[len(outs):], [True] * len(outs)) == list(range(len(outs)))


# What an answer may do to the float32 precisions (round 20's adversary: the new API's switch, set inside fan_out, made
# settings.read() raise, and every later check with it), from each state a caller may be in: read, and put back, as
# it was, through both APIs (the legacy getters reading as before, raising where they raised).
PRECISION_STATES = ['torch.set_float32_matmul_precision("high")', 'torch.set_float32_matmul_precision("medium")',
                    'torch.backends.cuda.matmul.fp32_precision = "tf32"', 'torch.backends.fp32_precision = "tf32"',
                    'torch.backends.cudnn.allow_tf32 = False',
                    'torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cuda.matmul.fp32_precision = "none"']
PRECISION_ANSWERS = [*PRECISION_STATES, 'torch.set_float32_matmul_precision("highest")',
                     'torch.backends.cuda.matmul.fp32_precision = "ieee"',
                     'torch.backends.cuda.matmul.allow_tf32 = False',
                     'torch.backends.fp32_precision = "ieee"', 'torch.backends.cudnn.conv.fp32_precision = "ieee"',
                     'torch.backends.mkldnn.matmul.fp32_precision = "bf16"']


@pytest.mark.parametrize("state", ["pass", *PRECISION_STATES])
def test_the_float32_precisions_are_read_and_put_back_through_both_apis(state):
    from utils.exercises import settings

    def legacy() -> list[object]:
        return [settings.LEGACY_PRECISIONS[name][0]() for name in settings.LEGACY_PRECISIONS]

    fresh = settings.read()
    try:
        exec(state)  # noqa: S102 -- the caller's state, from the list above
        before, readings = settings.read(), legacy()
        for answer in PRECISION_ANSWERS:
            exec(answer)  # noqa: S102 -- what an answer does, from the list above
            changed = settings.put_back(before)
            assert settings.read() == before and legacy() == readings, (state, answer, changed)
    finally:
        settings.put_back(fresh)
    assert settings.read() == fresh and settings.LEGACY_PRECISIONS["torch.get_float32_matmul_precision()"][0]() != (
        settings.MIXED)


@host
def test_the_handler_that_logging_info_adds_to_a_root_logger_without_one_is_no_change(monkeypatch):
    """Round 32's adversary: logging.info() calls basicConfig() itself where the root logger has no handler, and every
    check blamed the answer for that handler (in a fresh process; pytest's own handlers hid it here).  An explicit
    basicConfig() of a format of its own is still a change."""
    import logging

    from utils.exercises import settings

    monkeypatch.setattr(logging.root, "handlers", [])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        nb03.check_prefetch_loop(answers03.prefetch_logs_its_calls)  # the CPU part, or the whole check on a GPU
    assert not printed.getvalue().startswith(("FAIL", "TODO")) and len(logging.root.handlers) == 1, printed.getvalue()
    monkeypatch.setattr(logging.root, "handlers", [])
    before = settings.read(["logging.root.handlers"])
    logging.basicConfig(format="%(levelname)s %(message)s")
    assert settings.put_back(before) == ["logging.root.handlers"] and logging.root.handlers == []
