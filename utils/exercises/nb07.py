"""Checks for the exercises of notebook 07 (CUDA graphs): a model of the speed-up, one graph per bucket
of batch sizes, new weights for a captured model, and a captured training step whose learning rate
follows a schedule.

Each check is a property over inputs that Hypothesis generates (utils/exercises/properties.py):

1. `predicted_speedup` (CPU): any number of kernels, any host, kernel, floor and replay times, against
   the check's reference model (locked: `speedup`), within float32's rounding.
2. `bucketed_graphs` (GPU): buckets in any order, feature shapes of any rank, batches from 1 row to the
   largest bucket (both always), called from every kind of caller (utils/exercises/streams.py).  Which
   graph each call replays is counted by patching torch.cuda.CUDAGraph for the duration of the check,
   and the check's function notes the shape and dtype of its input in each capture (fn's contract:
   (size, *feature_shape), float32), and counts its calls outside a capture: a call must replay the graph
   of the smallest bucket that holds its batch, call fn eagerly never, and return float32 rows.  One call of
   each case gets its batch as a view that is not contiguous, at an offset in its storage; in the chosen
   cases one result is dropped while the caller's stream still reads it, and the allocator's snapshot must
   not show its memory back in another stream's pool (`_handed_back`).
3. `graphed_model` (GPU): new weights from checkpoints of every dtype, on the GPU or the host, between
   runs, from every kind of caller; every run against an eager twin of the check's own (made before the
   answer runs, never a copy of the caller's model) loaded with the same checkpoint; a forward pre-hook on
   each layer of the caller's model counts its eager forwards during run.
4. `graphed_scheduled_step` (GPU): schedules of learning rates, from every kind of caller; losses and
   parameters against eager float32 and float64 twins; the given optimizer's step counts must advance by
   one a step; forward pre-hooks count the model's eager forwards during the steps (exercise 3's); the
   caller's stream is kept busy while the steps
   are called, so a step that makes the host wait for the GPU (a value read on the host, a synchronize,
   a blocking copy) is seen as the host coming back after the GPU's earlier work has ended.

In exercises 2 to 4, the functions the answer returns are called from another stream than the one the answer was
called from (the same kind of caller; the default stream stays itself), as a server that builds on one stream and
serves requests on others calls them; a call at the end is given the tensor(s) of the call before, refilled in
place with new values (an input whose address repeats: a reused buffer, or a freed batch's memory handed to the
next); and before each call of a busy caller its stream is busy again, so that a call that makes the host wait for
the GPU (exercises 2 and 3: two calls of run or more; exercise 4: any step) is seen as the host coming back after
that work.

Values are compared with a float64 run of the same arithmetic, within a few times the distance of
eager float32 from it (notebook 06): a graph and an eager call of another shape may sum in another
order, so the bits may differ; a stale or foreign value is off by O(1).  Every call the check makes
of a caller's stream comes after its earlier work ends on the GPU (a busy caller), and every stream the
answer switches to starts late (`widened`): a missing wait shows in the values every time.

Without a GPU, exercises 2 to 4 say what a GPU would check, and check nothing: each of them is about
what a replay reads and writes, and CUDA graphs (capturable Adam's too) exist on a GPU only.
"""

from __future__ import annotations

import copy
import gc
import itertools
import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..device import has_cuda, require_cuda
from ..timing import gpu_sleep
from . import (
    Checker,
    Exercise,
    ExerciseFailed,
    Findings,
    LeftForGPU,
    exercise,
    is_stub,
    reference,
    register,
    what_returned,
)
from .properties import finite, for_all, real, shown, st
from .settings import (
    BASIC,
    HINT,
    SEED_HINT,
    SETTINGS,
    generator_states,
    keeping,
    not_put_back,
    put_back,
    put_generator_states,
    read,
    seeding_watched,
)
from .streams import TORCH_CALLERS, Caller, calibrate_sleeps, torch_caller, torch_callers, widened

NOTEBOOK = "07_cuda_graphs"
EPS32 = torch.finfo(torch.float32).eps


# ------------------------------------------------------------------------------------------
# Exercise 1: predict the speed-up of a graph (CPU)
# ------------------------------------------------------------------------------------------
Costs = tuple[int, float, float, float, float]  # kernels, host_us, kernel_us, graph_floor_us, replay_us
SPEEDUP_TOLERANCE = 1e-6  # relative: float32 arithmetic of the right model errs by a few 1e-7 at most
SPEEDUP_EXAMPLES = 25  # generated cases, besides the chosen grid of regimes: the model has five terms, not fifty


@reference
def speedup(kernels: int, host_us: float, kernel_us: float, graph_floor_us: float, replay_us: float) -> float:
    """The check's reference (tests/test_exercises_07.py holds it against a simulation of calls back to back)."""
    eager = kernels * max(host_us, kernel_us)
    graph = max(replay_us, kernels * max(kernel_us, graph_floor_us))
    return eager / graph


def _micros() -> st.SearchStrategy[float]:
    """A time in microseconds: round ones (so that the host's and the GPU's times tie now and then), and any
    from 10 ns to 10 ms."""
    return st.one_of(st.sampled_from((0.5, 1.0, 1.25, 2.0, 5.0, 9.0, 10.0, 20.0, 50.0)),
                     st.floats(0.01, 1e4, allow_nan=False, allow_infinity=False),
                     # uniform in the logarithm: non-round times at every scale, tens of ns included (round 19: every
                     # time under 1 ms drawn was a whole number of ns)
                     st.floats(math.log(0.01), math.log(1e4)).map(lambda t: min(max(math.exp(t), 0.01), 1e4)))


LONGEST_CHAIN = 2_000_000  # 20 times the longest chain drawn (SPEEDUP_LONG)


def _chains() -> st.SearchStrategy[int]:
    """Chains of 1 to 100,000 kernels, short ones often.  (Round 32: drawing chains up to LONGEST_CHAIN too made the
    check's shrinking of every wrong answer slower, about 40% of the CPU suite's time for this check; SPEEDUP_LONG
    asks two such chains whatever the draw instead.)"""
    return st.one_of(st.integers(1, 20), st.integers(1, 100_000))


def _replay_bound(case: tuple[int, float, float, float, float]) -> Costs:
    """A chain whose replay() call costs the host `factor` times what its kernels cost the GPU."""
    kernels, host_us, kernel_us, floor_us, factor = case
    return kernels, host_us, kernel_us, floor_us, kernels * max(kernel_us, floor_us) * factor


def costs() -> st.SearchStrategy[Costs]:
    """Chains of 1 to 100,000 kernels (short ones often), any times; and chains of any length whose replay() call
    costs more than their kernels (drawn independently, a replay time rarely exceeds the GPU time of more than a
    few kernels: an answer that drops the replay() term for longer chains would pass)."""
    return st.one_of(st.tuples(_chains(), _micros(), _micros(), _micros(), _micros()),
                     st.tuples(_chains(), _micros(), _micros(), _micros(), st.floats(1.0, 50.0)).map(_replay_bound))


def _regime_grid() -> list[Costs]:
    """Every pair of regimes (eager: host-bound or GPU-bound; replayed: bound by the replay() call, by the floor, or by
    the kernels) for a chain of 1 kernel, of a few, and of many: a rule that is wrong in one regime for some chain
    lengths only (a floor that a single kernel does not pay, a replay() call dropped for long chains) meets its case."""
    grid: list[Costs] = []
    # 100,000 kernels: the longest chain drawn until round 32 (round 18: a replay() call dropped above 65,536 kernels
    # passed); SPEEDUP_LONG asks two longer ones whatever the draw (round 32)
    for kernels in (1, 7, 5000, 100_000):
        # 20 µs: a kernel longer than the 5 µs below which a rule might keep the floor (the 07 adversary's); 1000 µs,
        # longer than the 25 µs of round 18's
        for host_us, kernel_us in ((9.0, 1.0), (1.0, 4.0), (60.0, 20.0), (9.0, 1000.0)):
            for floor_us in (kernel_us / 2, kernel_us * 2.5):
                grid.append((kernels, host_us, kernel_us, floor_us, kernels * max(kernel_us, floor_us) / 2))
            grid.append((kernels, host_us, kernel_us, 1.25, kernels * max(kernel_us, 1.25) * 3))
    return grid


SHORT = 1 / 729  # the grid's times scaled to tens of ns, none of them a whole number of ns (round 19)
# Cases the check always asks about too: one per regime (host-bound, GPU-bound, replay-bound, floor-bound), then every
# pair of regimes for short and long chains, and for the short chains the same with times of tens of ns.
SPEEDUP_CASES: list[Costs] = [(2000, 9.0, 1.0, 1.25, 30.0), (2000, 20.0, 1.0, 1.25, 60.0), (100, 9.0, 50.0, 1.25, 20.0),
                              (2, 9.0, 1.0, 1.25, 25.0), (500, 10.0, 4.0, 1.25, 15.0), *_regime_grid(),
                              *((k, h * SHORT, g * SHORT, f * SHORT, r * SHORT) for k, h, g, f, r in _regime_grid()
                                if k <= 7)]


# Asked after the chosen cases: a chain 20 times the longest drawn, bound by its replay() call, and bound by its floor
# with a replay() call of half its GPU time (round 32's adversary simulated calls kernel by kernel, cut at 100,000
# kernels "to bound the time", and passed: the grid's longest chain was the longest drawn, 100,000).  A rule that
# changes above some chain length shorter than these meets them whatever the draw: any cut-off, in the first; one below
# half of it, in the second.  (Not among SPEEDUP_CASES: tests/test_exercises_07.py simulates those call by call.)
SPEEDUP_LONG: list[Costs] = [(LONGEST_CHAIN, 9.0, 1.0, 1.25, LONGEST_CHAIN * 1.25 * 2.7),
                             (LONGEST_CHAIN, 1.0, 3.0, 7.0, LONGEST_CHAIN * 7.0 / 2)]


def _speedup_call(case: Costs) -> str:
    """The call, with the times to 12 digits: a nudged case of the again step differs from its case in the sixth."""
    return "predicted_speedup({}, {:.12g}, {:.12g}, {:.12g}, {:.12g})".format(*case)


def _speedup_hint(case: Costs, got: float, want: float) -> str:
    """What this case is about, in the quantities of the task (never the formula)."""
    kernels, host_us, kernel_us, floor_us, replay_us = case
    if kernels > 100_000:  # a failure that shrinking left on a long chain (round 32: a simulation cut at 100,000)
        return (f"the chain here has {kernels} kernels: the model of the task holds for any number of kernels; does "
                "your function treat long chains otherwise (a cut-off, a loop over a bounded number of kernels)?")
    if got and math.isclose(got * want, 1.0, rel_tol=1e-3):
        return "a speed-up says how many times faster the graph is: which of the two times divides the other?"
    if math.isclose(got, want, rel_tol=1e-2):
        return ("within 1% of the model's value, but not within rounding: is the result rounded, or computed in a "
                "low precision?")
    eager = ("each kernel's launch takes the host longer than the GPU takes to run it" if host_us > kernel_us else
             "each kernel runs longer on the GPU than the host takes to launch it" if host_us < kernel_us else
             "launching a kernel takes the host as long as running it takes the GPU")
    per_kernel = max(kernel_us, floor_us)
    graph = ("the replay() call alone takes the host longer than the graph's kernels take the GPU"
             if replay_us > kernels * per_kernel else
             "a kernel of the graph is shorter than the graph's floor" if floor_us > kernel_us else
             "the graph's kernels are longer than its floor" if floor_us < kernel_us else
             "the graph's kernels are as long as its floor")
    return (f"here {eager}, and {graph}: with calls back to back, the host and the GPU work at the same time; "
            "what, then, sets the length of one call, eagerly and replayed?")


# Every process-wide setting that settings.py knows (round 23's adversary turned on TF32 through either API,
# deterministic algorithms or anomaly detection, or set the default device to cuda, left it so, and passed: the check
# watched the default dtype and grad mode only; the exercises after this one compute and train under such a setting),
# but the global generators' states: an answer may draw from them, and so advance them (settings.py's rule; round 26's
# adversary simulated calls from an unseeded random phase, a right answer, and FAILed); a seed is watched where it is
# made (`seeds=True`), and the states are put back when the check ends, as nb02's checks do.
GENERATOR_STATES = ("torch.get_rng_state()", "np.random.get_state()", "random.getstate()")
SPEEDUP_WATCHED = tuple(name for name in SETTINGS if name not in GENERATOR_STATES)
GPU_CHECKS_WATCHED = SPEEDUP_WATCHED  # the GPU checks' too, read once around the whole check (`_every_setting_kept`)


@contextmanager
def _every_setting_kept(ex: Checker) -> Iterator[None]:
    """Every setting of GPU_CHECKS_WATCHED read when a GPU check starts and when it ends: one left changed FAILs, named,
    and is put back.  Read around the whole check, not around each call (BASIC is, with `keeping`): read around each
    call, the reads would fall inside the timed windows and the captures.  Round 32's adversary of 07 left
    cudnn.benchmark on, cudnn.enabled off, the collector disabled, or sync debug mode on 'warn', and PASSed on the
    H200: the three GPU checks watched BASIC alone."""
    before = read(GPU_CHECKS_WATCHED)
    failing = False
    try:
        yield
    except BaseException:
        failing = True
        raise
    finally:
        after = read(GPU_CHECKS_WATCHED)
        changed = put_back(before, after)
        if changed and not failing:
            ex.expect(False, f"{ex.name} left {changed[0]} {after[changed[0]]} after it returned (it was "
                             f"{before[changed[0]]})", HINT)


# Relative nudges of the again step: far above the tolerance (1e-6), within the 4 or 5 digits that a rounded memo keeps;
# and just above it, within what a memo of 6 significant digits (or of 19 bits) keeps of a time whose first digits are
# 1 to 3.3 (1.0, 1.25, 20.0, 30.0: 29 of the 64 chosen cases that a nudge moves; a 6-digit key keeps a time of larger
# first digits to about the tolerance), so that a value kept under a rounding of the times coarse enough to be off by
# more than the tolerance is asked for again (round 79's adversary memoized under 6 digits, and passed: the one nudge of
# 3e-5 changed a 6-digit key; a rounding to 7 digits, or 20 bits, errs within the tolerance)
AGAIN_NUDGES = (3e-5, 1.5e-6)


def _nudged(case: Costs, nudge: float) -> Costs:
    """The case with the one time that sets its speed-up moved by `nudge`: the host's time where the eager call is
    host-bound, else the replay() call's where the graph is bound by it, else the floor's where it is above the
    kernel's; so that the right value moves by about `nudge`, and a value kept from the case itself does not."""
    kernels, host_us, kernel_us, floor_us, replay_us = case
    up = 1 + nudge
    if host_us > kernel_us:
        return kernels, host_us * up, kernel_us, floor_us, replay_us
    if replay_us > kernels * max(kernel_us, floor_us):
        return kernels, host_us, kernel_us, floor_us, replay_us * up
    return kernels, host_us, kernel_us, floor_us * up if floor_us > kernel_us else floor_us, replay_us


# Asked again after the sweep, in reverse order: each chosen case, nudged by each of AGAIN_NUDGES (round 26's adversary
# memoized under times rounded to 4 digits, or dropped the replay() call after 150 calls, and passed: each case was
# asked once, about 100 calls in all)
SPEEDUP_AGAIN: list[Costs] = [_nudged(case, nudge) for nudge in AGAIN_NUDGES for case in reversed(SPEEDUP_CASES)]


def check_predicted_speedup(predicted_speedup: Callable[..., float]) -> None:
    """predicted_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us) must return the
    eager time over the graph time of one call, with calls back to back (host and GPU overlap)."""
    # the process's settings as the caller had them: each call must leave them so (`settings.keeping`), and so must the
    # whole check (a setting changed after a call returned, by a thread the answer started, is seen at the end)
    state, generators = read(SPEEDUP_WATCHED), generator_states()
    with exercise("predicted_speedup") as ex:
        yours = keeping(ex, ex.answer(predicted_speedup), SPEEDUP_WATCHED, seeds=True)
        # each tensor or array returned, and its value then: read again at the end (round 26's adversary returned one
        # buffer, filled in place at every call, and passed: each result was read at once and never again)
        returned: list[tuple[Costs, Any, float]] = []

        def number(case: Costs, answer: Callable[..., Any] = yours) -> float:
            got = answer(*case)
            value = real(got)
            ex.expect(value is not None, f"{_speedup_call(case)} returned {shown(got)}, not a number",
                      "return eager time / graph time, a number (a float, a NumPy float, or a tensor or array of one "
                      "element)")
            assert value is not None
            if isinstance(got, (torch.Tensor, np.ndarray)):
                returned.append((case, got, value))
            return value

        try:  # a function that returns no number, or raises, for a typical case: no input to make smaller
            number(SPEEDUP_CASES[0])
        except Exception as error:
            put_back(state)
            if not isinstance(error, ExerciseFailed) and not is_stub(error):
                error.add_note(f"predicted_speedup: your function raised this for {_speedup_call(SPEEDUP_CASES[0])}")
            raise

        def holds(case: Costs) -> None:
            call = _speedup_call(case)
            value = number(case)
            want = speedup(*case)
            # Enough digits to show the two apart: 6 for most wrong answers; an answer off by less (one rounded
            # to 6 digits) would print the same 6 digits twice.
            digits = next(d for d in (6, 9, 17) if f"{value:.{d}g}" != f"{want:.{d}g}" or d == 17)
            ex.expect(finite(value) and math.isclose(value, want, rel_tol=SPEEDUP_TOLERANCE),
                      f"{call} predicted {value:.{digits}g}x; the model of the task gives {want:.{digits}g}x",
                      _speedup_hint(case, value, want))

        try:
            for_all(ex, costs(), holds, examples=SPEEDUP_EXAMPLES, chosen=[*SPEEDUP_CASES, *SPEEDUP_LONG],
                    describe=_speedup_call)
            _asked_again(ex, predicted_speedup, number)
            changed = next(((case, value, later) for case, got, value in returned
                            if (later := real(got)) != value and not (math.isnan(later or 0) and math.isnan(value))),
                           None)
            ex.expect(changed is None, "the result that {} returned read {:.9g} then, and {} once the later calls "
                      "were done".format(_speedup_call(changed[0]), *changed[1:]) if changed else "",
                      "each call's result must stay its own: a tensor or array that the next call writes into "
                      "changes every result returned before it")
        finally:
            now = read(SPEEDUP_WATCHED)
            left = put_back(state)
            put_generator_states(generators)
        first = left[0] if left else ""
        ex.expect(not left, f"predicted_speedup changed {first} while the check ran: {now.get(first)} (it was "
                  f"{state.get(first)})",
                  "leave the process's settings as the caller had them: the exercises after this one make tensors "
                  "and train with them")


# Calls made after the sweep and before SPEEDUP_AGAIN, every result read at once (round 32's adversary returned views
# of a ring of 512 preallocated results, and passed: the check made 180 calls in all, so that no result it kept was
# overwritten before it read it again; the rule of round 26's, the model for 150 calls only, with any count above 180).
# With them, a ring of up to about 800 results is overwritten before the re-read (the adversary's: 512).  A few
# microseconds a call for an answer in Python floats, 30 to 150 for one of tensors (the course's slowest right answer:
# 0.1 s); measured on the CPU suite (2 shared cores, 2026-11-30): 4096 calls cost about 5 s more, 1024 about 3 s.
SPEEDUP_BURST = 640


def _burst(ex: Checker, answer: Callable[..., Any]) -> None:
    """Call the answer SPEEDUP_BURST times on the chosen cases of at most 20 kernels in turn (cheap for an answer that
    simulates kernel by kernel too), each value against the model's."""
    wants = [(case, speedup(*case)) for case in SPEEDUP_CASES if case[0] <= 20]
    for n in range(SPEEDUP_BURST):
        case, want = wants[n % len(wants)]
        got = answer(*case)
        value = real(got)
        if value is None or not (finite(value) and math.isclose(value, want, rel_tol=SPEEDUP_TOLERANCE)):
            ex.expect(False, f"{_speedup_call(case)}, call {n + 1} of {SPEEDUP_BURST} made after the check's other "
                             f"cases, " + (f"returned {shown(got)}, not a number" if value is None else
                                           f"predicted {value:.9g}x; the model of the task gives {want:.9g}x"),
                      "each call's result must come from its own arguments: a rule that changes after some calls, or "
                      "a value kept from an earlier call, is wrong later")


def _asked_again(ex: Checker, predicted_speedup: Callable[..., Any], number: Callable[..., float]) -> None:
    """Ask SPEEDUP_AGAIN after the sweep and SPEEDUP_BURST calls more: each call watched as one (the settings it leaves
    are read when the check ends; a seed is watched over them all), the cheap way, so that the check's time grows by
    little."""
    seeded: dict[str, list[Any]] = {}
    answer = ex.answer(predicted_speedup)
    try:
        with seeding_watched(seeded, (predicted_speedup,)):
            _burst(ex, answer)
            for case in SPEEDUP_AGAIN:
                value, want = number(case, answer), speedup(*case)
                ex.expect(finite(value) and math.isclose(value, want, rel_tol=SPEEDUP_TOLERANCE),
                          f"{_speedup_call(case)}, asked after the check's other cases, "
                          f"predicted {value:.9g}x; the model of the task gives {want:.9g}x",
                          "each call's result must come from its own arguments: a value kept from an earlier call "
                          "(of nearly the same times), or a rule that changes after some calls, is wrong later")
    finally:
        unrestored = not_put_back(seeded)
    ex.expect(not unrestored, f"predicted_speedup seeds the global random generator {(unrestored or [''])[0]}",
              SEED_HINT)


register(Exercise(NOTEBOOK, "predicted_speedup", check_predicted_speedup))


# ------------------------------------------------------------------------------------------
# What the GPU checks share: counting graphs, calling the answer, tolerances, callers
# ------------------------------------------------------------------------------------------
@dataclass
class _GraphCalls:
    """What torch.cuda.CUDAGraph did while counted: captures, the graph of each replay, (exercise 2) the rows of
    the input the check's function saw while each graph was being captured, and the eager calls of the check's
    function (exercise 2) or of the model's layers (exercise 3): calls outside any capture."""

    captures: int = 0  # capture_begin() calls, by torch.cuda.graph or by hand
    replayed: list[int] = field(default_factory=list)  # id() of the graph of each replay(), in order
    rows: dict[int, int] = field(default_factory=dict)  # id() of a graph -> rows of fn's input during its capture
    inputs: dict[int, tuple[tuple[int, ...], torch.dtype]] = field(default_factory=dict)  # -> its shape and dtype
    capturing: Any = None  # the graph being captured now
    graphs: list[Any] = field(default_factory=list)  # every graph captured: kept alive, so that ids stay unique
    eager: int = 0  # calls of the check's function, or forwards of the model's layers, outside any capture
    eager_before_capture: int = 0  # of those, the ones made before the first capture began (a warm-up)

    def noting_rows(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
        """fn, noting the rows of its input when it is called during a capture, and counting its eager calls."""
        def noted(x: torch.Tensor) -> torch.Tensor:
            capturing = torch.cuda.is_current_stream_capturing()
            if self.capturing is not None and capturing:
                self.rows[id(self.capturing)] = int(x.shape[0]) if x.dim() else 0
                self.inputs[id(self.capturing)] = (tuple(x.shape), x.dtype)
            elif not capturing:
                self.eager += 1
            return fn(x)
        return noted

    def counting_forwards(self, model: torch.nn.Module) -> list[Any]:
        """Count the eager forwards of the model's layers (exercises 3 and 4: a pre-hook on each child, so that
        a forward inside a capture is not counted, and a replay calls none; make_graphed_callables refuses
        a module with hooks of its own, and replaces only the module's own forward); the hooks' handles."""
        def counted(module: torch.nn.Module, args: Any) -> None:
            if not torch.cuda.is_current_stream_capturing():
                self.eager += 1
        return [layer.register_forward_pre_hook(counted) for layer in model.children()]


@contextmanager
def _counting_graphs() -> Iterator[_GraphCalls]:
    """Inside the block, count every torch.cuda.CUDAGraph's captures and replays (the class is patched, and
    restored at the end): torch.cuda.graph, make_graphed_callables and torch.compile all go through them."""
    calls = _GraphCalls()
    cls = torch.cuda.CUDAGraph
    own = {name: cls.__dict__.get(name) for name in ("capture_begin", "capture_end", "replay")}
    begin, end, replay = cls.capture_begin, cls.capture_end, cls.replay

    def counted_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.captures += 1
        if calls.captures == 1:
            calls.eager_before_capture = calls.eager
        calls.capturing = self
        calls.graphs.append(self)
        return begin(self, *args, **kwargs)

    def counted_end(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.capturing = None
        return end(self, *args, **kwargs)

    def counted_replay(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.replayed.append(id(self))
        return replay(self, *args, **kwargs)

    setattr(cls, "capture_begin", counted_begin)  # noqa: B010 -- setattr: mypy refuses to assign to a method
    setattr(cls, "capture_end", counted_end)  # noqa: B010 -- as above
    setattr(cls, "replay", counted_replay)  # noqa: B010 -- as above
    try:
        yield calls
    finally:
        for name, original in own.items():
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)


def _call(fn: Callable[..., Any], *args: Any) -> tuple[Any, Exception | None]:
    """fn(*args) and None, or None and the error it raised (the exercise's own stub still raises)."""
    try:
        return fn(*args), None
    except Exception as error:  # a wrong answer's error is reported as a failed sub-check
        if is_stub(error) or isinstance(error, ExerciseFailed):  # TODO; or the answer called a reference
            raise
        return None, error


def _restored(caller: Caller) -> bool:
    """Whether the caller's stream is still current after the answer's call; if not, make it current again."""
    if torch.cuda.current_stream() == caller.stream:
        return True
    torch.cuda.set_stream(caller.stream)
    return False


LEFT_STREAM = ("the caller's work after the call goes to the stream current then, which must be the caller's own: "
               "which stream does the way your function switches streams leave current when it returns?")


def _raised(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"


def _left_for_a_gpu(name: str, needs: str) -> bool:
    """Without a GPU: say what a GPU would check (exercise() prints it) and return True."""
    if has_cuda():
        return False
    with exercise(name):
        raise LeftForGPU("", needs)
    return True


def _close(got: torch.Tensor, want32: torch.Tensor, want64: torch.Tensor) -> bool:
    """`got` is `want64` up to rounding: within 4 times eager float32's distance from float64, plus 16 eps."""
    gap = (want32.double() - want64).abs().max().item() if want64.numel() else 0.0
    scale = want64.abs().max().item() if want64.numel() else 0.0
    allowed = 4 * gap + 16 * EPS32 * max(scale, 1.0)
    return bool(got.shape == want64.shape and (got.double() - want64).abs().max().item() <= allowed) \
        if got.numel() else got.shape == want64.shape


WIDEN_MS = 20.0  # every stream the answer switches to starts this late
REBUSY_MS = 10.0  # the caller's stream is busy this long before each call of a busy caller


def _rebusy(caller: Caller) -> torch.cuda.Event | None:
    """A busy caller is busy again before each call: what the check then writes for the call is written late.  The
    event marks the end of that work (None: not a busy caller): a call that returns after it has passed made the host
    wait for the GPU, as exercise 4's steps are judged."""
    if caller.kind != "busy":
        return None
    gpu_sleep(REBUSY_MS / 1e3, caller.stream)
    return caller.stream.record_event()


@contextmanager
def _turn(n: int, kind: str, first: Caller) -> Iterator[Caller]:
    """The caller of a case's call number `n`: `first` for an even `n`; for an odd one another caller of the same kind,
    on a stream of its own (the default stream stays itself), which waits for `first`'s earlier work, and for whose
    work `first` waits afterwards, as an application that calls from two streams in turn orders them.  A function that
    keeps queuing on the stream of its first caller (round 26's adversary of 07) then reads what the second caller
    writes late, before it is written."""
    if n % 2 == 0 or kind == "default":
        yield first
        return
    with torch_caller(kind, busy_ms=REBUSY_MS) as other:
        other.stream.wait_stream(first.stream)
        if kind != "busy":  # busy: torch_caller made it so; any other kind has earlier work too, so that it is late
            gpu_sleep(REBUSY_MS / 1e3, other.stream)
        yield other
    first.stream.wait_stream(other.stream)


def _generator(case: object) -> torch.Generator:
    """The data of one case, drawn on the GPU from a seed of its own: memory that a race reads too early holds
    an earlier case's data, never this one's."""
    return torch.Generator(device="cuda").manual_seed(zlib.crc32(repr(case).encode()))


def _says(kind: str) -> str:
    if kind == "default":
        return f"called from {TORCH_CALLERS[kind]}"
    return f"built from {TORCH_CALLERS[kind]}, its functions called from another such stream"


# ------------------------------------------------------------------------------------------
# Exercise 2: one graph per bucket of batch sizes (GPU)
# ------------------------------------------------------------------------------------------
HIDDEN, OUTPUTS = 64, 16
LARGEST_BUCKET = 160


@cache
def _row_weights(features: int, device: str = "cuda") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """row_mlp's weights for rows of `features` numbers (drawn on the CPU: the same on every device)."""
    gen = torch.Generator().manual_seed(7 + features)
    w1 = torch.randn(features, HIDDEN, generator=gen) / features**0.5
    w2 = torch.randn(HIDDEN, OUTPUTS, generator=gen) / HIDDEN**0.5
    b1, b2 = torch.randn(HIDDEN, generator=gen), torch.randn(OUTPUTS, generator=gen)
    return w1.to(device), b1.to(device), w2.to(device), b2.to(device)


def row_mlp(x: torch.Tensor) -> torch.Tensor:
    """The function exercise 2's check graphs: a small MLP applied to each row of x (its features flattened),
    each row on its own; (batch, *feature_shape) in, (batch, 16) out, on x's device."""
    w1, b1, w2, b2 = (w.to(x.dtype) for w in _row_weights(math.prod(x.shape[1:]), str(x.device)))
    return torch.tanh(x.reshape(x.shape[0], -1) @ w1 + b1) @ w2 + b2


@reference
def smallest_bucket(buckets: tuple[int, ...], batch: int) -> int | None:
    """The bucket a batch must be padded to: the smallest that holds it (None: none does)."""
    return min((b for b in buckets if b >= batch), default=None)


BucketCase = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, str]  # buckets, feature shape, batches,
# a batch too large, the caller


def _batches(buckets: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    """Batch sizes from 1 to the largest bucket, at and beside every bucket's edge or anywhere; always 1 and the
    largest; and the first one again at the end, so that every case calls one bucket twice."""
    largest = max(buckets)
    edges = sorted({b + d for b in buckets for d in (-1, 0, 1) if 1 <= b + d <= largest})
    some = st.lists(st.one_of(st.sampled_from(edges), st.integers(1, largest)), max_size=8)
    return st.tuples(some, st.integers(0, 8), st.integers(0, 9)).map(
        lambda t: _with_ends(t[0], t[1], t[2], largest))


def _with_ends(some: list[int], at: int, at_too: int, largest: int) -> tuple[int, ...]:
    batches = list(some)
    batches.insert(min(at, len(batches)), 1)
    batches.insert(min(at_too, len(batches)), largest)
    return (*batches, batches[0])


def bucket_cases() -> st.SearchStrategy[BucketCase]:
    """1 to 4 distinct buckets of 1 to LARGEST_BUCKET rows, in any order; feature shapes of rank 0 to 3."""
    buckets = st.lists(st.integers(1, LARGEST_BUCKET), min_size=1, max_size=4, unique=True).map(tuple)
    shapes = st.lists(st.integers(1, 6), max_size=3).map(tuple)
    return st.tuples(buckets, shapes).flatmap(lambda bs: st.tuples(
        st.just(bs[0]), st.just(bs[1]), _batches(bs[0]), st.integers(1, 64).map(lambda k: max(bs[0]) + k),
        torch_callers()))


BUCKET_CASES: list[BucketCase] = [
    ((8, 32, 128), (32,), (1, 8, 5, 9, 32, 20, 33, 128, 100, 7, 31, 127, 8, 64, 1), 129, "default"),
    ((128, 8, 32), (4, 8), (9, 1, 8, 128, 33, 32, 9), 200, "busy"),
]


def _bucket_call(case: BucketCase) -> str:
    buckets, shape, _, _, kind = case
    return f"bucketed_graphs(fn, {buckets}, {shape}), {_says(kind)}"


@dataclass(eq=False)  # compared by identity: its tensors have no truth value
class _RunCall:
    """One call of run(x) as the check made it, and what it saw."""

    batch: int
    x: torch.Tensor
    given: torch.Tensor  # x as it was before the call
    out: Any
    first: torch.Tensor | None  # a copy of out made right after the call, on the caller's stream
    replayed: list[int]
    captures: int
    error: Exception | None
    kept_stream: bool  # the caller's stream was still current after the call
    eager: int = 0  # eager calls of the check's function (or of the model's layers) during the call
    waited: bool = False  # the call returned after the busy caller's work queued before it had ended: a host wait
    refilled: bool = False  # x was the tensor of the call before, refilled in place with new values
    strided: bool = False  # x was a view that is not contiguous, or starts past the start of its storage


# A burst of calls of run, every result held by the caller: an answer that hands out one of a ring of output buffers
# fewer than this overwrites an early result within the burst (round 32's ring of 32 per bucket and round 35's ring
# of 16 PASSed on the H200: a case called run at most 8 times, and each bucket fewer)
RING_CALLS = 72


def _held_results(run: Callable, make_x: Callable[[], torch.Tensor],
                  caller: Caller) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """RING_CALLS calls of run on new inputs, back to back from the caller's stream, each result held as returned:
    (a copy of the input as given, the result) of each call, until one raises or returns no tensor (the case's other
    calls judge those)."""
    held: list[tuple[torch.Tensor, torch.Tensor]] = []
    for _ in range(RING_CALLS):
        x = make_x()
        given = x.clone()
        out, error = _call(run, x)
        _restored(caller)
        if error is not None or not isinstance(out, torch.Tensor):
            break
        held.append((given, out))
    return held


RING_HINT = ("each replay overwrites the graph's output, and a buffer of yours that run hands out again is overwritten "
             "too: what run returns must be the caller's own, however many results the caller holds")


# A result made on another stream than the caller's and dropped by the caller while its stream still reads it: the
# caching allocator hands a freed block to the next allocation on the stream it was made on without waiting for any
# other stream's work, unless it was told of that use (Tensor.record_stream), in which case the freed block waits
# ("active_pending_free" in torch.cuda.memory_snapshot(): a block that is not allocated but has events pending;
# "inactive": back in the pool).  Round 32's adversary (a side stream, waits both ways, no record_stream) PASSed on
# the H200 (calls T and U), and round 78's again: the check holds every result to the end, so no block was reused.
# A block on the caller's own stream needs nothing (the pool's next user is that stream, in order), and a block of a
# graph's private pool (a view of its static output) is judged by the rows changing (`overwritten`).
HANDBACK_MS = 50.0  # the caller's stream is busy at least this long while the check drops a result and reads a snapshot
HANDBACK_TRIES = 3  # a snapshot the host took after that work had ended says nothing: tried again, the time doubled
HANDBACK_HINT = ("memory handed back to the pool while another stream still reads it: the caching allocator gives a "
                 "freed block to the next allocation on the stream it was made on, without waiting for the work other "
                 "streams queued on it; a result that the caller uses on its stream must not return to another "
                 "stream's pool before that use ends")


def _block_of(address: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The segment and the block of torch.cuda.memory_snapshot() that hold `address`, or None (no block of the
    caching allocator's holds it)."""
    for segment in torch.cuda.memory_snapshot():
        start = int(segment["address"])
        if not start <= address < start + int(segment["total_size"]):
            continue
        for block in segment["blocks"]:
            if int(block["address"]) <= address < int(block["address"]) + int(block["size"]):
                return segment, block
    return None


def _handed_back(run: Callable, make_x: Callable[[], torch.Tensor], caller: Caller) -> int | None:
    """Call run once more from the caller's stream, queue a sleep and then a read of the result there, drop the result
    (the check holds no other reference), and read the allocator's snapshot while that read is still to come: the
    batch's rows if the result's block, made on another stream than the caller's outside a graph's private pool, was
    back in the pool ("inactive"), else None (kept by the answer, or held back until the caller's work ends; no
    tensor; a result of the caller's stream or of a graph's pool; or every snapshot came after that work ended)."""
    for tried in range(HANDBACK_TRIES):
        x = make_x()
        batch = int(x.shape[0])
        out, error = _call(run, x)
        _restored(caller)
        if error is not None or not isinstance(out, torch.Tensor) or not out.is_cuda or out.layout != torch.strided:
            return None  # judged by the other sub-checks
        address = out.untyped_storage().data_ptr()
        gpu_sleep(HANDBACK_MS * 2**tried / 1e3, caller.stream)
        with torch.no_grad():
            read = out.detach().sum()  # on the caller's stream, after the sleep
        end = caller.stream.record_event()
        del out  # the last reference: the allocator now frees the block, or holds it back for the caller's work
        found = _block_of(address)
        busy = not end.query()  # after the snapshot: it was taken while the read was still to come
        del read, x
        if found is None:
            return None
        segment, block = found
        pool = segment.get("segment_pool_id")
        if int(segment["stream"]) == int(caller.stream.cuda_stream) or (pool is not None and tuple(pool) != (0, 0)):
            return None
        if block["state"] != "inactive":
            return None
        if busy:
            return batch
    return None


def _call_run(run: Callable, x: torch.Tensor, graphs: _GraphCalls, caller: Caller,
              busy_end: torch.cuda.Event | None = None, refilled: bool = False) -> _RunCall:
    """run(x), and what the check sees of it: a copy of the result made right away, on the caller's stream, and
    whether the host came back after `busy_end` (_rebusy's event, recorded before x was written) had passed."""
    given = x.clone()
    replays, captures, eager = len(graphs.replayed), graphs.captures, graphs.eager
    out, error = _call(run, x)
    waited = busy_end is not None and bool(busy_end.query())
    kept = _restored(caller)
    first = out.detach().clone() if isinstance(out, torch.Tensor) else None
    return _RunCall(int(x.shape[0]), x, given, out, first, graphs.replayed[replays:], graphs.captures - captures,
                    error, kept, graphs.eager - eager, waited, refilled,
                    not x.is_contiguous() or x.storage_offset() != 0)


# Round 32's adversary copied each batch in through flat views, `x.view(-1)`, which raises for a batch whose rows are
# not laid out one after the other, and PASSed on the H200 (calls T and U): every x the check gave was a fresh
# contiguous torch.randn.  The task takes any tensor of shape (batch, *feature_shape): one call of each case is given
# its batch in another layout, the same values.
STRIDED_CALL = 1  # the call of a case given its batch as a view in another layout (a case makes 3 calls or more)


def _strided(x: torch.Tensor) -> torch.Tensor:
    """x's values in a view of a buffer of the check's own that is neither contiguous nor at its storage's start: its
    axes laid out in reverse order (a transpose's layout), every other element, from the buffer's second element."""
    buffer = torch.empty(2 * x.numel() + 1, dtype=x.dtype, device=x.device)
    view = buffer[1::2].view(tuple(reversed(x.shape))).permute(tuple(range(x.dim() - 1, -1, -1)))
    return view.copy_(x)


def _said_of_x(call: _RunCall) -> str:
    """What a failure message says of the call's x, if it was not a fresh contiguous tensor."""
    if call.refilled:
        return " (x was the tensor of the call before, refilled in place with new rows)"
    if call.strided:
        return (f" (x was a view of shape {tuple(call.x.shape)} with strides {call.x.stride()}, at offset "
                f"{call.x.storage_offset()} in its storage)")
    return ""


STRIDED_HINT = ("x may be any tensor of shape (batch, *feature_shape), a view among them (a slice, a transpose, a part "
                "of a larger buffer): its rows need not lie one after the other in memory, so copy it in by its shape "
                "and strides, as PyTorch's copies do, not through a flat view of its memory")


def _refilled(call: _RunCall, fresh: torch.Tensor) -> torch.Tensor:
    """The tensor `call` was given, refilled in place with `fresh`'s values, on the caller's stream (a server's input
    buffer, or a freed batch's memory that the allocator hands the next one): an input whose address repeats with new
    values.  `call` keeps a copy of it as it was, which the judge compares with what it was given."""
    tensor, call.x = call.x, call.x.clone()
    return tensor.copy_(fresh)


# A host wait is judged over a case's calls: an answer that makes the host wait does so at every call; a host that
# stalls once (the OS, a garbage collection) for longer than a busy caller's window (REBUSY_MS) is no such answer.
WAITS_SEEN = 2


def _waits_hint(function: str) -> str:
    return (f"{function} only queues work on the caller's current stream, as PyTorch's own operations do: a "
            "synchronize, a value of the GPU read on the host, or a copy from pageable host memory makes the host wait "
            "for everything queued before")


def _row_mlp64(x: torch.Tensor) -> torch.Tensor:
    w1, b1, w2, b2 = (w.double() for w in _row_weights(math.prod(x.shape[1:]), str(x.device)))
    return torch.tanh(x.double().reshape(x.shape[0], -1) @ w1 + b1) @ w2 + b2


def _rows_right(got: torch.Tensor, given: torch.Tensor, bucket: int | None) -> bool:
    """Rows of fn(given), within rounding: eager float32 on the batch and on the batch padded to its bucket
    may each sum in their own order (notebook 06), and the graph computed the padded one."""
    want64 = _row_mlp64(given)
    padded = torch.zeros(max(bucket or 0, given.shape[0]), *given.shape[1:], device=given.device)
    padded[: given.shape[0]] = given
    return (_close(got, row_mlp(given), want64) or _close(got, row_mlp(padded)[: given.shape[0]], want64))


def check_bucketed_graphs(bucketed_graphs: Callable[..., Callable[[torch.Tensor], torch.Tensor]]) -> None:
    """bucketed_graphs(fn, buckets, feature_shape) must capture one graph of fn per bucket size, up front,
    and return run(x): fn(x) for a batch x of 1 to max(buckets) rows, by replaying the graph of the
    smallest bucket that holds it, as a tensor that the next call does not overwrite; a larger batch
    raises ValueError."""
    if _left_for_a_gpu("bucketed_graphs", "one graph captured per bucket, each batch replayed on the smallest "
                                          "bucket that holds it, every result compared with eager fn, a batch "
                                          "too large refused, from every kind of caller: CUDA graphs exist on "
                                          "a GPU only"):
        return
    with exercise("bucketed_graphs") as ex, _every_setting_kept(ex):
        require_cuda("check_bucketed_graphs")
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        yours = keeping(ex, ex.answer(bucketed_graphs), BASIC)

        def holds(case: BucketCase) -> None:
            buckets, shape, batches, too_large, kind = case
            where = _bucket_call(case)
            _row_weights(math.prod(shape), f"cuda:{torch.cuda.current_device()}")  # now: outside the answer's captures
            gen = _generator(case)
            with torch_caller(kind) as builder, _counting_graphs() as graphs:
                run, error = _call(yours, graphs.noting_rows(row_mlp), buckets, shape)
                kept_stream = _restored(builder)
                ex.expect(error is None, f"{where} raised {_raised(error) if error else ''}",
                          "capture one graph per bucket, on inputs of your own of the bucket's size, before "
                          "returning run")
                ex.expect(callable(run), f"{where} returned {what_returned(run)}, not a function",
                          "return the inner function run(x)")
                # Round 66's adversary: captures with no warm-up PASSed, though the task asks for one (section 4's
                # rule); at least one call of fn outside a capture must come before the first capture.
                ex.expect(graphs.captures == 0 or graphs.eager_before_capture > 0,
                          f"{where} began its first capture before it had called fn once outside a capture",
                          "section 4's rule: warm up before you capture, on the side stream you capture on (a "
                          "first call may allocate memory, choose kernels or set up a library, which a capture must "
                          "not record)")
                run = keeping(ex, ex.answer(run), BASIC)  # the student's too: no reference inside
                built, rows, inputs = graphs.captures, dict(graphs.rows), dict(graphs.inputs)
                torch.cuda.synchronize()  # the building's work is done before another stream uses what it made
                calls = []
                # run is called from a stream of its own (the same kind of caller; the default stream stays itself):
                # a run that works on the stream current when it was built races with its callers.
                with torch_caller(kind) as caller:
                    collecting = gc.isenabled()
                    gc.disable()  # during the calls: a long garbage collection would look like a host wait
                    try:
                        with widened(WIDEN_MS, spare=(caller.stream,)):
                            for n, batch in enumerate(batches):
                                with _turn(n, kind, caller) as now:
                                    busy_end = _rebusy(now)
                                    x = torch.randn(batch, *shape, device="cuda", generator=gen)
                                    calls.append(_call_run(run, _strided(x) if n == STRIDED_CALL else x, graphs,
                                                           now, busy_end))
                                    del x
                            # The last batch once more, with new rows in the same tensor.
                            with _turn(len(batches), kind, caller) as now:
                                busy_end = _rebusy(now)
                                again = _refilled(calls[-1], torch.randn(calls[-1].batch, *shape, device="cuda",
                                                                         generator=gen))
                                calls.append(_call_run(run, again, graphs, now, busy_end, refilled=True))
                    finally:
                        if collecting:
                            gc.enable()
                    big = _call_run(run, torch.randn(too_large, *shape, device="cuda", generator=gen), graphs,
                                    caller)
                    burst = _held_results(
                        run, lambda: torch.randn(batches[0], *shape, device="cuda", generator=gen), caller)
                    # a result dropped while the caller's stream still reads it, and the allocator's snapshot: it
                    # costs a snapshot, so in the chosen cases only (a default-stream caller, a busy one on a stream
                    # of its own)
                    handed_back = _handed_back(run, lambda: torch.randn(batches[0], *shape, device="cuda",
                                                                        generator=gen), caller) \
                        if case in BUCKET_CASES else None
                    torch.cuda.synchronize()
            _judge_buckets(ex, where, buckets, (built, rows, kept_stream), dict(graphs.rows), calls, big,
                           feature_shape=shape, inputs=inputs, burst=burst, handed_back=handed_back)

        for_all(ex, bucket_cases(), holds, examples=8, chosen=BUCKET_CASES, budget_s=4.0, describe=_bucket_call)


def _judge_buckets(ex: Checker, where: str, buckets: tuple[int, ...], building: tuple[int, dict[int, int], bool],
                   rows: dict[int, int], calls: list[_RunCall], big: _RunCall, *, feature_shape: tuple[int, ...],
                   inputs: dict[int, tuple[tuple[int, ...], torch.dtype]],
                   burst: Sequence[tuple[torch.Tensor, torch.Tensor]] = (), handed_back: int | None = None) -> None:
    """Every sub-check of one case: `building` is what building saw (captures, their rows, the caller's stream
    current after it), `rows` the rows of every graph captured, by its id; `inputs` the shape and dtype of fn's
    input in each capture of building, by the graph's id; `burst`, `_held_results`'s inputs and held results;
    `handed_back`, `_handed_back`'s finding (None: nothing seen, or not probed)."""
    found = Findings()
    built, rows_built, kept_stream = building
    captured = sorted(rows_built.values())
    found.expect(built == len(buckets) and captured == sorted(buckets),
                 f"{where}: captured {built} graph(s), on inputs of {captured} rows, for the buckets {buckets}",
                 "capture exactly one graph per bucket size, each on an input of that many rows, all of them "
                 "before run is returned")
    odd = [(shape, dtype) for shape, dtype in inputs.values()
           if tuple(shape[1:]) != tuple(feature_shape) or dtype != torch.float32]
    want = f"({', '.join(['rows', *map(str, feature_shape)])}{',' if not feature_shape else ''})"
    found.expect(not odd, f"{where}: fn was captured on an input of shape {odd[0][0]} in {odd[0][1]}, not {want} in "
                 "torch.float32" if odd else "",
                 "capture fn on what it is given in use: inputs of shape (size, *feature_shape), float32; fn may "
                 "read every axis of its rows, and a graph computes in the dtype it was captured in")
    raised = sorted((c for c in calls if c.error is not None), key=lambda c: c.strided)  # a contiguous x's first
    found.expect(not raised, f"{where}: run raised for a batch of {raised[0].batch} rows{_said_of_x(raised[0])} "
                 f"({_raised(raised[0].error)})" if raised and raised[0].error else "",
                 STRIDED_HINT if raised and raised[0].strided else
                 "a graph only knows the shapes it was captured with: a batch smaller than its bucket fills part "
                 "of the bucket's static input")
    answered = [c for c in calls if c.error is None]
    shaped = [c for c in answered if isinstance(c.out, torch.Tensor) and c.out.device == c.x.device
              and c.out.shape == (c.batch, OUTPUTS) and c.out.dtype == torch.float32]
    misshaped = [c for c in answered if c not in shaped]
    found.expect(not misshaped, f"{where}: for a batch of {misshaped[0].batch} rows run returned "
                 f"{what_returned(misshaped[0].out)}" if misshaped else "",
                 f"return the batch's own rows of fn(x), (batch, {OUTPUTS}) in fn's float32, on the GPU: the "
                 "bucket's padding rows are nobody's results")
    found.expect(kept_stream and all(c.kept_stream for c in calls),
                 f"{where}: after {'a call of run' if kept_stream else 'bucketed_graphs'}, another stream than the "
                 "caller's was current", LEFT_STREAM)

    def graph_rows(c: _RunCall) -> int | None:
        return rows.get(c.replayed[0]) if len(c.replayed) == 1 else None

    bucket_of = {c.batch: smallest_bucket(buckets, c.batch) for c in calls}
    stale = [c for c in shaped if c.first is not None
             and not _rows_right(c.first, c.given, graph_rows(c) or bucket_of[c.batch])]
    found.expect(not stale, f"{where}: run returned wrong rows for a batch of {stale[0].batch} rows"
                 + _said_of_x(stale[0]) if stale else "",
                 "a graph reads the memory it was captured on: each new batch must be copied into that memory before "
                 "the replay reads it, whatever its address, and the result must be complete before the caller reads "
                 "it, on the stream current when run is called")
    waited = [c for c in calls if c.waited]
    found.expect(len(waited) < WAITS_SEEN, f"{where}: {len(waited)} calls of run (the first for a batch of "
                 f"{waited[0].batch} rows) returned only after the GPU had finished the caller's earlier work: the "
                 "host waited for the GPU" if waited else "", _waits_hint("run"))
    overwritten = [c for c in shaped if c not in stale
                   and not _rows_right(c.out, c.given, graph_rows(c) or bucket_of[c.batch])]
    found.expect(not overwritten, f"{where}: the result returned for a batch of {overwritten[0].batch} rows had "
                 "changed by the time the later calls were done" if overwritten else "",
                 "each replay overwrites the graph's output: what run returns must be the caller's own")
    ring = next((n for n, (given, out) in enumerate(burst)  # (a result on the host is misshaped's: above)
                 if out.shape == (given.shape[0], OUTPUTS) and out.dtype == torch.float32 and out.device == given.device
                 and not _rows_right(out, given, smallest_bucket(buckets, given.shape[0]))), None)
    found.expect(ring is None, f"{where}: of {len(burst)} results of run held at once (batches of "
                 f"{burst[0][0].shape[0] if burst else 0} rows), result {(ring or 0) + 1} had changed by the time "
                 "the later calls were done", RING_HINT)
    found.expect(handed_back is None, f"{where}: the result of run for a batch of {handed_back} rows was made on "
                 "another stream than the caller's; when the caller dropped it while its stream was still to read it, "
                 "its memory was back in the allocator's pool at once (torch.cuda.memory_snapshot(): 'inactive'), for "
                 "the next allocation on that stream to take and overwrite" if handed_back is not None else "",
                 HANDBACK_HINT)
    changed = [c.batch for c in calls if not torch.equal(c.x, c.given)]
    found.expect(not changed, f"{where}: run changed its input x (a batch of {changed[0] if changed else 0} rows)",
                 "copy the batch into the graph's own input; leave the caller's tensor alone")
    captured_late = sum(c.captures for c in calls)
    found.expect(captured_late == 0, f"{where}: the {len(calls)} calls of run captured {captured_late} graphs",
                 "capture every bucket's graph once, up front: a capture per call, or per new size, costs far "
                 "more than the launches a replay saves")
    not_one = [c for c in answered if len(c.replayed) != 1]
    found.expect(not not_one, f"{where}: the call for a batch of {not_one[0].batch} rows replayed "
                 f"{len(not_one[0].replayed)} graphs" if not_one else "",
                 "run should replay the graph of one bucket, not compute eagerly")
    eager = [c for c in answered if c.eager]
    found.expect(not eager, f"{where}: the call for a batch of {eager[0].batch} rows called fn {eager[0].eager} "
                 "time(s) outside a capture" if eager else "",
                 "the graph's replay computes fn: what run returns must be the graph's output, not fn computed "
                 "again eagerly")
    wrong = [c for c in answered if len(c.replayed) == 1 and graph_rows(c) != bucket_of[c.batch]]
    found.expect(not wrong, f"{where}: for a batch of {wrong[0].batch} rows run replayed "
                 + (f"the graph captured on {graph_rows(wrong[0])} rows" if graph_rows(wrong[0]) else
                    "a graph whose capture did not call fn") if wrong else "",
                 "pad each batch to the smallest bucket that holds it (a bucket of exactly the batch's size holds "
                 "it), whatever order the buckets come in: a larger bucket computes rows that nobody reads")
    found.expect(isinstance(big.error, ValueError),
                 f"{where}: for a batch of {big.batch} rows (more than the largest bucket) run "
                 + (f"raised {type(big.error).__name__}" if big.error else f"returned {what_returned(big.out)}"),
                 "a batch larger than every bucket must raise ValueError (the task's contract), not fall back "
                 "to something else")
    found.report(ex)


register(Exercise(NOTEBOOK, "bucketed_graphs", check_bucketed_graphs, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 3: new weights for a captured model (GPU)
# ------------------------------------------------------------------------------------------
SERVED = (24, 48, 8)  # features in, hidden, out


def served_model(seed: int, device: str = "cuda") -> torch.nn.Module:
    """Exercise 3's model, in eval mode: Linear, BatchNorm1d, ReLU, Linear; every weight and running
    statistic drawn from `seed` (PyTorch's global random state is left alone)."""
    features, hidden, outputs = SERVED
    with torch.random.fork_rng(devices=[]):  # the layers' own initialization draws from it; overwritten below
        model = torch.nn.Sequential(torch.nn.Linear(features, hidden), torch.nn.BatchNorm1d(hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(hidden, outputs))
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.state_dict().items():
            drawn = torch.randn(t.shape, generator=gen) if t.is_floating_point() else None
            if drawn is None:
                t.zero_()  # num_batches_tracked
            elif name.endswith("running_var"):
                t.copy_(0.5 + drawn.abs())
            elif name == "1.weight":
                t.copy_(1.0 + 0.2 * drawn)
            elif name.endswith("weight"):
                t.copy_(drawn / t.shape[1] ** 0.5)
            else:
                t.copy_(0.3 * drawn)
    return model.to(device).eval()


# Where a checkpoint's tensors are, and in which dtype (its integer tensors keep theirs).
SOURCES: tuple[tuple[str, torch.dtype], ...] = (("cuda", torch.float32), ("cpu", torch.float32),
                                                ("cuda", torch.float16), ("cpu", torch.bfloat16),
                                                ("cpu", torch.float64))
ServeCase = tuple[str, int, tuple[tuple[int, int], ...]]  # the caller, the example's rows, (source, runs) per update


def serve_cases() -> st.SearchStrategy[ServeCase]:
    """Examples of 1 to 64 rows; 1 to 3 updates, each from any source, each followed by 1 or 2 runs."""
    plan = st.lists(st.tuples(st.integers(0, len(SOURCES) - 1), st.integers(1, 2)), min_size=1, max_size=3)
    return st.tuples(torch_callers(), st.one_of(st.integers(1, 4), st.integers(1, 64)), plan.map(tuple))


# Always: a busy caller with checkpoints from the GPU and the host; one row; a busy caller with two checkpoints
# from the host in a row (a host buffer reused by the next update is rewritten before the GPU copied it).
SERVE_CASES: list[ServeCase] = [("busy", 16, ((2, 1), (0, 1), (4, 1))), ("default", 1, ((3, 2),)),
                                ("busy", 8, ((1, 1), (4, 1)))]


def _source(index: int) -> str:
    device, dtype = SOURCES[index]
    return f"{str(dtype).removeprefix('torch.')} tensors on the {'GPU' if device == 'cuda' else 'host'}"


def _serve_call(case: ServeCase) -> str:
    kind, rows, plan = case
    updates = ", ".join(f"update({_source(s)})" for s, _ in plan)
    return f"graphed_model(model, example of {rows} rows), {_says(kind)}, then {updates}"


def _checkpoint(seed: int, source: int, before: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    """The weights of `served_model(seed)`, in `SOURCES[source]`'s device and dtype.  Given `before` (the weights
    loaded before, on the host), about half of each floating tensor's entries, drawn from the seed, keep the values
    they had there (the first entry among them or not): a fine-tune leaves many weights as they were, and an update
    that skips a tensor by a sample of its values (round 26's adversary of 07 compared the first entries) loads too
    little."""
    device, dtype = SOURCES[source]
    drawn = served_model(seed, "cpu").state_dict()
    if before is not None:
        gen = torch.Generator().manual_seed(seed)
        drawn = {k: torch.where(torch.rand(v.shape, generator=gen) < 0.5, before[k].to(v.dtype), v)
                 if v.is_floating_point() else v for k, v in drawn.items()}
    # In an order of its own (a dict from names to tensors, as the task says): round 113's adversary matched the
    # checkpoint to the model by position, not by name, and passed while every checkpoint kept the model's order.
    order = torch.randperm(len(drawn), generator=torch.Generator().manual_seed(seed)).tolist()
    names = list(drawn)
    return {k: (v.to(device, dtype) if v.is_floating_point() else v.to(device))
            for k, v in ((names[i], drawn[names[i]]) for i in order)}


def _checkpoints(plan: tuple[tuple[int, int], ...]) -> list[dict[str, torch.Tensor]]:
    """A checkpoint for each update of `plan`, each sharing about half of its entries with the weights before it."""
    made, before = [], served_model(0, "cpu").state_dict()
    for n, (source, _) in enumerate(plan, 1):
        made.append(_checkpoint(100 + n, source, before))
        before = {k: v.cpu() for k, v in made[-1].items()}
    return made


def _twins(checkpoint: dict[str, torch.Tensor] | None = None) -> tuple[torch.nn.Module, torch.nn.Module]:
    """Eager float32 and float64 models of the check's own, as the caller's model was before the answer ran, given
    `checkpoint` if any.  Never copies of the caller's model: a deep copy shares a forward the answer patched onto
    it (make_graphed_callables does), and would hold whatever the answer did to its weights."""
    twin, twin64 = served_model(0), served_model(0).double()
    if checkpoint is not None:
        twin.load_state_dict(checkpoint)
        twin64.load_state_dict(checkpoint)
    return twin, twin64


@dataclass(eq=False)  # compared by identity: its tensors have no truth value
class _Served:
    """One run after `updates` updates: the input, the results, and the eager results of the weights loaded
    last and of the weights the graph was captured with."""

    updates: int
    call: _RunCall
    want32: torch.Tensor
    want64: torch.Tensor
    old32: torch.Tensor
    old64: torch.Tensor


def check_graphed_model(graphed_model: Callable[..., Any]) -> None:
    """graphed_model(model, example) must return (run, update): run(x) is model(x) by replaying one graph, as
    the caller's own tensor; update(state_dict) gives the model new weights, and every later run uses them,
    without capturing again."""
    if _left_for_a_gpu("graphed_model", "runs replayed before and after new weights are loaded from checkpoints "
                                        "of every dtype, on the GPU and on the host, against eager PyTorch, "
                                        "from every kind of caller: CUDA graphs exist on a GPU only"):
        return
    with exercise("graphed_model") as ex, _every_setting_kept(ex):
        require_cuda("check_graphed_model")
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        yours = keeping(ex, ex.answer(graphed_model), BASIC)

        def holds(case: ServeCase) -> None:
            kind, rows, plan = case
            where = _serve_call(case)
            features = SERVED[0]
            gen = _generator(case)
            model = served_model(0)  # before the caller: its copies to the GPU make the host wait
            # The checkpoints, and eager twins with each one loaded, before the caller too: a copy to the GPU from
            # the host makes the host wait for the caller's stream, which would close every race across updates.
            checkpoints = _checkpoints(plan)
            twins = [_twins(), *(_twins(checkpoint) for checkpoint in checkpoints)]
            torch.cuda.synchronize()
            tensors_were = _model_tensors(model)
            with torch_caller(kind) as builder, _counting_graphs() as graphs:
                hooks = graphs.counting_forwards(model)  # before the answer: a private copy it makes has them too
                example = torch.randn(rows, features, device="cuda", generator=gen)  # late, for a busy caller
                kept = example.clone()
                made, error = _call(yours, model, example)
                kept_stream = [_restored(builder)]
                ex.expect(error is None, f"{where}: graphed_model raised {_raised(error) if error else ''}",
                          "warm up, capture the model's forward once, and return (run, update)")
                ex.expect(isinstance(made, tuple) and len(made) == 2 and all(callable(f) for f in made),
                          f"{where}: graphed_model returned {what_returned(made)}, not two functions",
                          "return the pair (run, update)")
                run, update = (keeping(ex, ex.answer(f), BASIC) for f in made)
                built = graphs.captures
                torch.cuda.synchronize()
                served: list[_Served] = []
                update_errors: list[tuple[int, Exception]] = []
                captured_late = 0
                # run and update are called from a stream of their own (the same kind of caller; the default stream
                # stays itself): functions that work on the stream current when they were built race with callers.
                with torch_caller(kind) as caller:

                    turns = itertools.count()  # run's and update's calls, in order: every other one from `caller`

                    def run_once(updates: int, refill: _RunCall | None = None) -> None:
                        with _turn(next(turns), kind, caller) as now:
                            busy_end = _rebusy(now)
                            x = torch.randn(rows, features, device="cuda", generator=gen)
                            if refill is not None:  # new values in the tensor of the call before
                                x = _refilled(refill, x)
                            call = _call_run(run, x, graphs, now, busy_end, refilled=refill is not None)
                        (twin, twin64), (original, original64) = twins[updates], twins[0]
                        with torch.no_grad():  # cloned: nothing the check keeps is a buffer that anything overwrites
                            served.append(_Served(updates, call, twin(call.given).clone(),
                                                  twin64(call.given.double()).clone(), original(call.given).clone(),
                                                  original64(call.given.double()).clone()))

                    collecting = gc.isenabled()
                    gc.disable()  # during the calls: a long garbage collection would look like a host wait
                    try:
                        with widened(WIDEN_MS, spare=(caller.stream,)):
                            run_once(0)
                            for n, (source, runs) in enumerate(plan, 1):
                                with _turn(next(turns), kind, caller) as now:
                                    _rebusy(now)
                                    given = {k: v.clone() for k, v in checkpoints[n - 1].items()}  # the caller's, late
                                    captures = graphs.captures
                                    _, error = _call(update, given)
                                    kept_stream.append(_restored(now))
                                    captured_late += graphs.captures - captures
                                if error is not None:
                                    update_errors.append((n, error))
                                    break
                                for _ in range(runs):
                                    run_once(n)
                            if not update_errors:  # the last run once more, with a new x in the same tensor
                                run_once(served[-1].updates, refill=served[-1].call)
                    finally:
                        if collecting:
                            gc.enable()
                    burst = [] if update_errors else _held_results(
                        run, lambda: torch.randn(rows, features, device="cuda", generator=gen), caller)
                    torch.cuda.synchronize()
                for hook in hooks:
                    hook.remove()
            kept_stream += [s.call.kept_stream for s in served]
            changed = [f"{name} {was} became {now}" for (name, was), (_, now)
                       in zip(tensors_were, _model_tensors(model), strict=False) if was != now]
            with torch.no_grad():  # the burst's results against the weights loaded last
                twin, twin64 = twins[served[-1].updates]
                held = [(out, twin(given), twin64(given.double())) for given, out in burst]
            _judge_served(ex, where, plan, (built, captured_late, all(kept_stream)), served, update_errors,
                          torch.equal(example, kept), changed, held)

        for_all(ex, serve_cases(), holds, examples=6, chosen=SERVE_CASES, budget_s=4.0, describe=_serve_call)


def _model_tensors(model: torch.nn.Module) -> list[tuple[str, tuple[object, ...]]]:
    """Each parameter's and buffer's dtype, device and requires_grad, by name: the caller's model as it stands."""
    return [(name, (t.dtype, t.device, t.requires_grad))
            for name, t in [*model.named_parameters(), *model.named_buffers()]]


def _judge_served(ex: Checker, where: str, plan: tuple[tuple[int, int], ...], counts: tuple[int, int, bool],
                  served: list[_Served], update_errors: list[tuple[int, Exception]], example_kept: bool,
                  model_changed: Sequence[str] = (),
                  burst: Sequence[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = ()) -> None:
    """Every sub-check of one case: `counts` holds the graphs captured by building and by the updates, and
    whether the caller's stream stayed current after every call; `model_changed`: what became of the caller's model's
    tensors (dtype, device, requires_grad), if anything (round 32's adversary converted it with model.double(), or
    turned its gradients off, and PASSed on the H200)."""
    found = Findings()
    found.expect(not model_changed, f"{where}: after the calls, the caller's model had changed: {model_changed[0]}"
                 if model_changed else "", "graphed_model may copy the model or capture it as it is, but the caller's "
                 "model stays as it was for its other uses (training it, saving it): a conversion (.double(), .half()) "
                 "or requires_grad_(False) on the model given changes it for all of them")
    built, captured_late, kept_stream = counts
    found.expect(kept_stream, f"{where}: after a call of yours, another stream than the caller's was current",
                 LEFT_STREAM)
    found.expect(built == 1, f"{where}: graphed_model captured {built} graphs", "capture the model's forward once")
    n, error = update_errors[0] if update_errors else (0, None)
    found.expect(error is None, f"{where}: update number {n} ({_source(plan[n - 1][0])}) raised "
                 f"{_raised(error) if error else ''}",
                 "update only gives the model's tensors new values: a checkpoint may come in another dtype or from "
                 "the host, and autograd has nothing to record in a copy of weights")
    found.expect(captured_late == 0, f"{where}: the updates captured {captured_late} graphs",
                 "give the model its new weights without capturing again (a large model's capture takes seconds)")
    raised = [s for s in served if s.call.error is not None]
    found.expect(not raised, f"{where}: run raised {_raised(raised[0].call.error)}" if raised and raised[0].call.error
                 else "", "run only copies the new input into the graph's input, replays, and returns the output")
    answered = [s for s in served if s.call.error is None]
    shaped = [s for s in answered if isinstance(s.call.out, torch.Tensor) and s.call.out.device == s.call.x.device
              and s.call.out.shape == s.want64.shape]
    typed = [s for s in shaped if s.call.out.dtype != s.want32.dtype]
    found.expect(not typed, f"{where}: run returned {typed[0].call.out.dtype}; the model's output is "
                 f"{typed[0].want32.dtype}" if typed else "", "the graph computes what the model computes, in its own "
                 "dtype: the caller goes on with the output in the dtype its model gives")
    found.expect(len(shaped) == len(answered), f"{where}: run returned "
                 f"{what_returned(next(s.call.out for s in answered if s not in shaped))}, not the model's output"
                 if len(shaped) < len(answered) else "", "return the model's output for x, as a tensor on the GPU")
    not_one = [s for s in answered if len(s.call.replayed) != 1]
    found.expect(not not_one, f"{where}: a call of run replayed {len(not_one[0].call.replayed)} graphs"
                 if not_one else "", "run replays the captured graph, once a call")
    eager = [s for s in answered if s.call.eager]
    found.expect(not eager, f"{where}: a call of run ran the model's layers eagerly ({eager[0].call.eager} of them)"
                 if eager else "", "the replay computes the model: what run returns must be the graph's output, not "
                 "the model called again")
    waited = [s for s in served if s.call.waited]
    found.expect(len(waited) < WAITS_SEEN, f"{where}: {len(waited)} calls of run returned only after the GPU had "
                 "finished the caller's earlier work: the host waited for the GPU", _waits_hint("run"))
    wrong = [s for s in shaped if s.call.first is not None and not _close(s.call.first, s.want32, s.want64)]
    first_wrong = wrong[0] if wrong else None
    found.expect(first_wrong is None, _served_problem(where, plan, first_wrong), _served_hint(first_wrong))
    overwritten = [s for s in shaped if s not in wrong and not _close(s.call.out, s.want32, s.want64)]
    found.expect(not overwritten, f"{where}: a result of run had changed by the time the later calls were done",
                 "each replay overwrites the graph's output: what run returns must be the caller's own")
    ring = next((n for n, (out, want32, want64) in enumerate(burst)
                 if out.shape == want64.shape and out.dtype == want32.dtype and not _close(out, want32, want64)), None)
    found.expect(ring is None, f"{where}: of {len(burst)} results of run held at once, result {(ring or 0) + 1} had "
                 "changed by the time the later calls were done", RING_HINT)
    found.expect(all(torch.equal(s.call.x, s.call.given) for s in served), f"{where}: run changed its input x",
                 "copy x into the graph's own input; leave the caller's tensor alone")
    found.expect(example_kept, f"{where}: after the calls, the caller's example holds other values",
                 "every replay reads the buffer the graph was captured on, and each run writes into it: that buffer "
                 "must be your own, not a tensor the caller still holds")
    found.report(ex)


def _near(got: torch.Tensor, want64: torch.Tensor) -> bool:
    """Within 1 % of the results' scale: another dtype's rounding (float16's, bfloat16's), not a stale value."""
    scale = want64.abs().max().item() if want64.numel() else 0.0
    return bool(got.shape == want64.shape and (got.double() - want64).abs().max().item() <= 1e-2 * max(scale, 1.0))


def _served_problem(where: str, plan: tuple[tuple[int, int], ...], wrong: _Served | None) -> str:
    if wrong is None:
        return ""
    again = " (x was the tensor of the call before, refilled in place with new values)" if wrong.call.refilled else ""
    if wrong.updates == 0:
        return f"{where}: before any update, run did not return model(x){again}"
    return (f"{where}: after update number {wrong.updates} ({_source(plan[wrong.updates - 1][0])}), run did not "
            f"return what the model with the new weights returns{again}")


def _served_hint(wrong: _Served | None) -> str:
    if wrong is None:
        return ""
    got = wrong.call.first
    assert got is not None
    if wrong.updates == 0 and _near(got, wrong.want64):
        return ("near model(x), but farther than float32's rounding: does the graph compute in the model's own "
                "dtype, with the model's own weights and statistics?")
    if wrong.call.refilled:
        return ("a graph reads the memory it was captured on: each call's x must be copied into it before the replay, "
                "even when x is the tensor of the call before with new values in it")
    if wrong.updates == 0:
        return ("a graph reads the memory it was captured on: each new x must be in that memory before the replay, on "
                "the stream current when run is called")
    if _close(got, wrong.old32, wrong.old64):
        return ("run still returned what the weights it was captured with give: a graph reads the memory it "
                "recorded, whatever tensors a module's names point to later")
    if _near(got, wrong.want64):
        return ("near the model's results, but farther than float32's rounding: does the graph compute in float32, "
                "and does every tensor the forward reads hold the checkpoint's values?")
    return ("neither the new weights' results nor the old ones': does every tensor that the forward reads "
            "(a checkpoint holds them all) get its new values, where the graph reads them, before the next replay?")


register(Exercise(NOTEBOOK, "graphed_model", check_graphed_model, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 4: a captured training step with a learning-rate schedule (GPU)
# ------------------------------------------------------------------------------------------
def _mlp(seed: int) -> torch.nn.Module:
    with torch.random.fork_rng(devices=[]):  # the global random state, as the student left it
        torch.manual_seed(seed)
        return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                   torch.nn.ReLU(), torch.nn.Linear(256, 8)).cuda()


def _eager_step(model, optimizer, loss_fn, x, y) -> torch.Tensor:
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


LR = 1e-3  # the optimizer's learning rate when the check creates it: a Python float
# The rates a schedule draws from: 1e-4 to 3e-2, by factors of about 3 (none is 0: capturable Adam divides by
# the learning rate).  A rate frozen at any one of them is off by a factor of 3 or more on the others.
RATES = (3e-3, 1e-2, 3e-2, 1e-3, 3e-4, 1e-4)
SCHEDULE = (3e-3, 1e-2, 3e-2, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-2, 1e-2, 1e-3)
WAIT_MS = 200.0  # the caller's stream is busy this long when the steps are called: a host wait ends it


def _allowed(float32: float, float64: float, noise: float) -> float:
    """How far the graph may be from the eager float32 run: rounding, as notebook 06 measures it.

    The graph and the eager run differ by rounding only (the same kernels; a learning rate held in a tensor
    rather than a Python float).  Its size is measured here, by the eager float32 run's distance from a
    float64 run of the same steps (`noise`, the largest so far); four times that, plus a few eps.
    """
    return 4 * max(noise, abs(float32 - float64)) + 16 * EPS32 * abs(float64)


def _param_groups(model: torch.nn.Module, groups: int) -> Any:
    """The parameters of `model` for its optimizer: one group, or two (the weights with weight decay, the biases
    without, as training code often does; round 26's adversary of 07 put the learning-rate tensor in the first
    group only, and passed while the check's optimizer had one)."""
    if groups == 1:
        return model.parameters()
    named = list(model.named_parameters())
    return [{"params": [p for name, p in named if name.endswith("weight")], "weight_decay": 1e-2},
            {"params": [p for name, p in named if not name.endswith("weight")], "weight_decay": 0.0}]


def _snapshot(model: torch.nn.Module, optimizer: torch.optim.Optimizer, dtype: torch.dtype,
              capturable: bool, groups: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """An eager copy of the model and of the Adam optimizer's state (in `groups` param groups), in `dtype`."""
    twin = copy.deepcopy(model).to(dtype)
    twin_optimizer = torch.optim.Adam(_param_groups(twin, groups), lr=LR, capturable=capturable)
    state = copy.deepcopy(optimizer.state_dict())
    for group in state["param_groups"]:
        group["lr"] = LR  # the answer may hold it in a tensor; the twins are given each rate as a number
    twin_optimizer.load_state_dict(state)  # casts the moments to dtype
    for group in twin_optimizer.param_groups:
        group["capturable"] = capturable  # load_state_dict took the flags of `optimizer`
    if not capturable:
        for s in twin_optimizer.state.values():
            s["step"] = s["step"].cpu()  # where plain Adam keeps it
    return twin, twin_optimizer


def _steps_taken(optimizer: torch.optim.Optimizer) -> list[float | None]:
    """The step count Adam keeps for each parameter of `optimizer` (None: none, or not a number); reads the GPU."""
    return [real(optimizer.state[p].get("step")) if p in optimizer.state else None
            for group in optimizer.param_groups for p in group["params"]]


StepCase = tuple[str, tuple[float, ...], int]  # the caller, the learning rate of each step, the param groups


def step_cases() -> st.SearchStrategy[StepCase]:
    return st.tuples(torch_callers(), st.lists(st.sampled_from(RATES), min_size=2, max_size=12).map(tuple),
                     st.sampled_from((1, 2)))


STEP_CASES: list[StepCase] = [("busy", SCHEDULE, 2), ("set_stream", SCHEDULE[:6], 1)]


def _step_call(case: StepCase) -> str:
    kind, schedule, groups = case
    return (f"graphed_scheduled_step(...) with an optimizer of {groups} param group{'s' if groups > 1 else ''}, "
            f"then {len(schedule)} steps with the learning rates {', '.join(f'{lr:g}' for lr in schedule)}, "
            f"{_says(kind)}")


def check_graphed_scheduled_step(
    graphed_scheduled_step: Callable[..., Callable[[torch.Tensor, torch.Tensor, float], object]],
) -> None:
    """graphed_scheduled_step(model, optimizer, loss_fn, x_example, y_example) must return step(x, y, lr),
    which trains on (x, y) with learning rate lr by replaying one captured step (forward, backward and
    optimizer.step()), without making the host wait for the GPU, and returns the loss tensor: the same
    losses and parameters as eager steps with the same schedule of learning rates, from the same state."""
    if _left_for_a_gpu("graphed_scheduled_step",
                       "replays of the captured step, each with a new learning rate, against eager training from "
                       "the same state (losses and parameters), the optimizer steps taken outside the graph, and "
                       "the host's waits for the GPU, from every kind of caller: CUDA graphs and capturable Adam "
                       "exist on a GPU only"):
        return
    with exercise("graphed_scheduled_step") as ex, _every_setting_kept(ex):
        require_cuda("check_graphed_scheduled_step")
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        # Each call of the answer, and of the function it returns, must leave the BASIC settings as it found them
        # (round 23's adversary turned TF32 on before the capture and left it on, and passed: the check's eager twins
        # then ran under TF32 too); the same for exercises 2 and 3.
        yours = keeping(ex, ex.answer(graphed_scheduled_step), BASIC)

        _first_calls(yours)
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU

        def holds(case: StepCase) -> None:
            _step_holds(ex, yours, case)

        for_all(ex, step_cases(), holds, examples=4, chosen=STEP_CASES, budget_s=4.0, describe=_step_call)


def _first_calls(yours: Callable) -> None:
    """One build and two steps of the answer, not judged: what only a process's first call costs lands here, not in a
    judged step, whose host time against the caller's WAIT_MS of earlier work tells a wait.  Round 100's adversary
    filled the learning rate with CuPy, on the caller's stream, right: CuPy compiling its fill kernel at that first
    use took longer than WAIT_MS, and the check read it as a wait of the host (FAIL on an H200)."""
    model = _mlp(seed=4)
    optimizer = torch.optim.Adam(_param_groups(model, 1), lr=LR, capturable=True)
    x, y = torch.randn(32, 64, device="cuda"), torch.randn(32, 8, device="cuda")
    step, error = _call(yours, model, optimizer, F.mse_loss, x, y)
    for lr in RATES[:2]:
        if error is None and callable(step):
            _, error = _call(step, x, y, lr)
    torch.cuda.synchronize()


def _hyperparameters(optimizer: torch.optim.Optimizer) -> list[dict[str, object]]:
    """Each param group's settings but its parameters and learning rate (round 23's adversary changed Adam's eps in the
    caller's optimizer before capturing, and passed: the check's twins copy the param groups after the answer ran)."""
    return [{key: value for key, value in group.items() if key not in ("params", "lr")}
            for group in optimizer.param_groups]


def _same(a: object, b: object) -> bool:
    """Whether two hyperparameters are equal (tuples like Adam's betas, tensors, numbers)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and bool(torch.equal(a.detach().cpu(), b.detach().cpu())))
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _step_holds(ex: Checker, yours: Callable, case: StepCase) -> None:
    """One case of exercise 4's check: build, the steps of `case`'s schedule from its caller, then judge."""
    kind, schedule, groups = case
    where = _step_call(case)
    found = Findings()
    model = _mlp(seed=3)  # before the caller: its copies to the GPU make the host wait
    optimizer = torch.optim.Adam(_param_groups(model, groups), lr=LR, capturable=True)
    gen = _generator(case)
    with torch_caller(kind) as builder, _counting_graphs() as graphs:
        data = [(torch.randn(32, 64, device="cuda", generator=gen), torch.randn(32, 8, device="cuda", generator=gen))
                for _ in range(len(schedule) + 1)]
        settings = _hyperparameters(optimizer)
        step, error = _call(yours, model, optimizer, F.mse_loss, *data[0])
        kept_stream = _restored(builder)
        now = _hyperparameters(optimizer)
        changed = next(((key, was, mine.get(key)) for group, mine in zip(settings, now, strict=False)
                        for key, was in group.items() if not _same(mine.get(key), was)),
                       None if len(now) == len(settings) else ("param groups", len(settings), len(now)))
        ex.expect(changed is None, f"{where}: graphed_scheduled_step changed the caller's optimizer's {changed[0]} "
                                   f"from {changed[1]!r} to {changed[2]!r}" if changed else "",
                  "train with the optimizer's settings as the caller gave them (only the learning rate may become a "
                  "tensor the graph reads): the caller chose them")
        ex.expect(error is None, f"{where}: graphed_scheduled_step raised {_raised(error) if error else ''}",
                  "warm up, then capture one training step, before returning step")
        ex.expect(callable(step), f"{where}: graphed_scheduled_step returned {what_returned(step)}, not a function",
                  "return the inner function step(x, y, lr)")
        step = keeping(ex, ex.answer(step), BASIC)
        built = graphs.captures
        torch.cuda.synchronize()
        ex.expect(all(bool(p.isfinite().all()) for p in model.parameters()),
                  f"{where}: after graphed_scheduled_step, the model's parameters hold NaN or infinity",
                  "the warm-up trains on the example batch: is it there, on the GPU, when the warm-up reads it?")
        # The state the steps start from, whatever the warm-up did: an eager float32 twin with the same
        # optimizer settings, and a float64 one (plain Adam) that measures float32's rounding.
        twin, twin_optimizer = _snapshot(model, optimizer, torch.float32, capturable=True, groups=groups)
        exact, exact_optimizer = _snapshot(model, optimizer, torch.float64, capturable=False, groups=groups)
        steps_before = _steps_taken(optimizer)
        eager_steps: list[int] = []  # optimizer.step() called by step(x, y, lr): outside any graph
        hook = optimizer.register_step_pre_hook(lambda *args: eager_steps.append(1))
        forwards = graphs.counting_forwards(model)  # after the twins' deep copies: they must not count
        forwards_before = graphs.eager
        kept: list[torch.Tensor | None] = []
        returned: list[str] = []
        failure: Exception | None = None
        waited_at = 0  # the first step after which the caller's earlier work had ended: the host waited for it
        collecting = gc.isenabled()
        gc.disable()  # during the steps: a long garbage collection would look like a wait
        try:
            # step is called from a stream of its own (the same kind of caller; the default stream stays itself):
            # a step that works on the stream current when it was built races with its callers.
            with torch_caller(kind) as caller:
                gpu_sleep(WAIT_MS / 1e3, caller.stream)
                busy_end = caller.stream.record_event()
                if kind != "default":
                    # PyTorch's default stream busy for the whole schedule: CuPy's null stream is that stream, and no
                    # hook sees CuPy's work queued there (`widened` makes late only the streams it can see). Round
                    # 100's adversary filled the learning rate with CuPy there, unordered with a side-stream caller,
                    # and passed: the fill ran on an idle stream before the replay read it.
                    gpu_sleep((WAIT_MS + WIDEN_MS * len(schedule)) / 1e3, torch.cuda.default_stream())
                batches = [(x.clone(), y.clone()) for x, y in data[1:]]  # written on the caller's stream, late
                replays = len(graphs.replayed)
                with widened(WIDEN_MS, spare=(caller.stream,)):
                    for n, ((x, y), lr) in enumerate(zip(batches, schedule), 1):
                        with _turn(n - 1, kind, caller) as turn:
                            if turn is not caller:  # the other caller's batch, written on its stream, late
                                _rebusy(turn)
                                x, y = x.clone(), y.clone()
                            if n == len(schedule):  # the last batch in the tensors of the step before, refilled
                                x, y = batches[n - 2][0].copy_(x), batches[n - 2][1].copy_(y)
                            loss, failure = _call(step, x, y, lr)
                            if not waited_at and busy_end.query():
                                waited_at = n
                            kept_stream = _restored(turn) and kept_stream
                            if failure is not None:
                                break
                            ok = isinstance(loss, torch.Tensor) and loss.is_cuda and loss.numel() == 1
                            kept.append(loss.detach().reshape(()).double().clone() if ok else None)
                            if not ok:
                                returned.append(what_returned(loss))
                torch.cuda.synchronize()
        finally:
            hook.remove()
            for handle in forwards:
                handle.remove()
            if collecting:
                gc.enable()
        replayed, captured_late = len(graphs.replayed) - replays, graphs.captures - built
        eager_forwards = graphs.eager - forwards_before
    advanced = {None if a is None or b is None else a - b for a, b in zip(_steps_taken(optimizer), steps_before)}
    found.expect(kept_stream, f"{where}: after a call of yours, another stream than the caller's was current",
                 LEFT_STREAM)
    found.expect(failure is None, f"{where}: step {len(kept) + 1} raised {_raised(failure) if failure else ''}",
                 "step(x, y, lr) only puts new values where the graph reads them, then replays")
    found.expect(not waited_at, f"{where}: step {waited_at} returned only after the GPU had finished the caller's "
                                "earlier work: the host waited for the GPU",
                 "the GPU runs a step's work after the host has queued it: anything that needs a value of the GPU on "
                 "the host (a Python number or `if` from a tensor, a synchronize, a copy from pageable host memory) "
                 "makes the host wait for everything queued before")
    found.expect(not returned, f"{where}: step returned {returned[0] if returned else ''}, not the loss as a CUDA "
                               "tensor",
                 "return the loss tensor the graph writes: a Python number (.item(), float) makes the host wait for "
                 "the GPU at every step")
    found.expect(built >= 1 and replayed == len(schedule) and captured_late == 0,
                 f"{where}: building captured {built} graph(s); the {len(schedule)} steps captured {captured_late} "
                 f"and replayed {replayed}",
                 "capture the training step once, before returning step; each step is then one replay")
    found.expect(not eager_steps, f"{where}: the steps called optimizer.step() {len(eager_steps)} times, outside the "
                                  "graph", "the optimizer's update belongs in the captured step")
    found.expect(not eager_forwards, f"{where}: the steps ran the model's layers eagerly ({eager_forwards} layer "
                                     "forwards), outside the graph",
                 "the replay computes the forward and the loss: what step returns is the loss the graph wrote, not "
                 "the model called again (a second forward costs the launches the graph saves)")
    if failure is None:
        by = ", ".join(sorted("nothing" if a is None else f"{a:g}" for a in advanced))
        found.expect(advanced == {len(schedule)}, f"{where}: after the {len(schedule)} steps, the given optimizer's "
                     f"step counts had advanced by {by}",
                     "train with the optimizer you are given: its state (moments, step counts) is what the caller "
                     "saves, resumes and schedules from; a copy of it leaves that state behind")
    got = [float(t.item()) if t is not None else None for t in kept]
    noise, first_off = 0.0, None
    for n, ((x, y), lr, g) in enumerate(zip(data[1:], schedule, got), 1):
        stale = math.nan  # the last step: the loss of the step before's batch, what a step that kept that batch gives
        if n == len(schedule):
            with torch.no_grad():
                stale = float(F.mse_loss(twin(data[n - 1][0]), data[n - 1][1]).item())
        for opt in (twin_optimizer, exact_optimizer):
            for group in opt.param_groups:
                group["lr"] = lr
        e32 = float(_eager_step(twin, twin_optimizer, F.mse_loss, x, y).item())
        e64 = float(_eager_step(exact, exact_optimizer, F.mse_loss, x.double(), y.double()).item())
        allowed = _allowed(e32, e64, noise)
        noise = max(noise, abs(e32 - e64))
        if first_off is None and g is not None and not abs(g - e32) <= allowed:
            first_off = (n, g, e32, allowed, abs(g - stale) <= allowed)
    n, g, e32, allowed, kept_batch = first_off or (0, 0.0, 0.0, 0.0, False)
    again = (f", the loss of step {n - 1}'s batch: step {n} was given step {n - 1}'s tensors, refilled in place with "
             "a new batch" if kept_batch else "")
    found.expect(first_off is None, f"{where}: step {n} (lr {schedule[n - 1] if n else 0:g}): loss {g:.7g}, eager "
                                    f"{e32:.7g} (allowed: {allowed:.1e}); the first {n - 1} matched{again}",
                 "each batch must be in the captured inputs before the replay reads it, on the stream current when "
                 "step is called" if n == 1 else
                 "a graph reads the memory it was captured on: each batch must be copied into the captured inputs, "
                 "whatever its address" if kept_batch else
                 "a graph replays the exact kernels and arguments it recorded: what did it record for the "
                 "learning rate, and do the gradients start from zero at every replay?")
    if got and len(got) == len(schedule):
        worst = max(((p - q).abs().max().item() - (4 * (q - r).abs().max().item()
                                                    + 16 * EPS32 * r.abs().max().item()))
                    for p, q, r in zip(model.parameters(), twin.parameters(), exact.parameters()))
        found.expect(worst <= 0, f"{where}: after the steps the parameters differ from the eager run's by more than "
                                 "rounding",
                     "every step must apply its own learning rate: a graph replays the numbers it recorded")
    found.report(ex)


register(Exercise(NOTEBOOK, "graphed_scheduled_step", check_graphed_scheduled_step, gpu=True,
                  cpu_checks=0))
