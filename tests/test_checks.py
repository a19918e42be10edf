"""How every exercise check decides (utils/exercises/properties.py, streams.py, `reference`): a property over
generated inputs, shrunk to the smallest failing one; numbers of any type; references that no answer can use;
and stream code called from every kind of caller.  Each check's own answers are in tests/test_exercises.py.
"""

import contextlib
import functools
import gc
import importlib
import inspect
import io
import math
import re
import sys
import time
import types
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch

import utils
from conftest import gpu, host, verdict_only
from utils.exercises import (
    STUB_MESSAGE,
    ExerciseFailed,
    LeftForGPU,
    ReferenceLocked,
    _Lock,
    exercise,
    inside_check,
    reference,
    registry,
)
from utils.exercises.properties import for_all, integral, real, st

REGISTRY = registry()


# ---------------------------------------------------------------- for_all
def _sum_below(limit):
    """A property over lists of integers that fails when their sum exceeds `limit`, and what it was called with."""
    seen = []

    def prop(xs):
        seen.append(list(xs))
        ex.expect(sum(xs) <= limit, f"sum({xs}) = {sum(xs)}", "keep it small")

    with contextlib.redirect_stdout(io.StringIO()), exercise("sums") as ex:
        for_all(ex, st.lists(st.integers(0, 1000), max_size=6), prop, examples=60)
    return seen


@host
def test_for_all_fails_on_the_smallest_failing_case_it_can_find():
    with pytest.raises(ExerciseFailed) as failed:
        _sum_below(500)
    assert str(failed.value) == "FAIL sums: sum([501]) = 501\n     hint: keep it small"


@host
def test_for_all_is_the_same_every_time_and_counts_each_case_once(capsys):
    assert _sum_below(10**9) == _sum_below(10**9)
    with exercise("sums") as ex:
        for_all(ex, st.integers(), lambda x: ex.expect(True, "", ""), examples=40, chosen=[7, 8])
    assert capsys.readouterr().out == "PASS sums: 42 checks passed\n"


@host
def test_for_all_draws_the_same_cases_whatever_modules_are_imported(tmp_path, monkeypatch):
    """Hypothesis also draws constants found in the source of local modules imported so far (since 6.131): the same
    check drew other inputs, and another smallest failure, under pytest (which imports every check module) than in
    a notebook.  The checks turn that off: a module of odd constants, imported between two runs, changes nothing."""
    def drawn():
        seen = []
        with contextlib.redirect_stdout(io.StringIO()), exercise("draws") as ex:
            for_all(ex, st.integers(0, 10**12), seen.append, examples=200)
        return seen

    before = drawn()
    (tmp_path / "odd_constants.py").write_text(f"CONSTANTS = {list(range(987654321, 987654321 + 400))}\n")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.delitem(sys.modules, "odd_constants", raising=False)
    importlib.import_module("odd_constants")
    assert drawn() == before


@host
def test_for_all_tries_the_chosen_cases_after_the_generated_ones():
    seen = []
    with contextlib.redirect_stdout(io.StringIO()), exercise("order") as ex:
        for_all(ex, st.integers(0, 5), seen.append, examples=5, chosen=[100, 200])
    assert seen[-2:] == [100, 200] and max(seen[:-2]) <= 5


@host
def test_for_all_says_todo_for_the_stub_and_passes_a_gpu_skip_through(capsys):
    def stub(x):
        raise NotImplementedError(STUB_MESSAGE)

    with exercise("f") as ex:
        for_all(ex, st.integers(), stub)
    assert capsys.readouterr().out.startswith("TODO f: not done yet")
    with pytest.raises(LeftForGPU):
        for_all(ex, st.integers(), lambda x: (_ for _ in ()).throw(LeftForGPU("cpu", "gpu")))


@host
def test_an_error_of_the_answer_reaches_the_student_with_the_smallest_input_that_raises_it():
    def answer(xs):
        return 1 / (len(xs) - 3)

    with pytest.raises(ZeroDivisionError) as raised, exercise("f") as ex:
        for_all(ex, st.lists(st.integers(0, 9)), answer)
    note = "f: your function raised this for [0, 0, 0] (the smallest input found that makes it raise)"
    assert raised.value.__notes__ == [note]


@host
@pytest.mark.parametrize("error", [ExerciseFailed("FAIL flaky: failed once\n     hint: keep no state"),
                                   ValueError("failed once")], ids=["a FAIL", "its own error"])
def test_an_answer_that_fails_once_and_not_again_fails_with_that_failure(error):
    """An answer that keeps state between calls (a list it never empties after an error) can fail on a case and
    pass it when Hypothesis tries it again: its failure stands, not Hypothesis's FlakyFailure."""
    calls = []

    def once(x):
        calls.append(x)
        if len(calls) == 3:
            raise error

    with pytest.raises(type(error), match="failed once") as raised, exercise("flaky") as ex:
        for_all(ex, st.integers(0, 100), once, examples=20)
    assert raised.value is error
    link: BaseException | None = raised.value  # an exception group in its context: IPython would print a traceback
    while link is not None:  # with the machine's paths, not the FAIL's message (contains_exceptiongroup, ipython)
        assert not isinstance(link, BaseExceptionGroup), f"{type(link).__name__} in the failure's context chain"
        link = link.__context__


@host
def test_shrinking_stops_after_its_budget_with_the_smallest_failure_found_so_far():
    def slow(x):
        time.sleep(0.01)
        ex.expect(x < 1000, f"{x} is too large", "smaller")

    started = time.perf_counter()
    with pytest.raises(ExerciseFailed, match="is too large") as budgeted, exercise("slow") as ex:
        for_all(ex, st.integers(0, 10**9), slow, examples=200, budget_s=0.1)
    assert time.perf_counter() - started < 5
    with pytest.raises(ExerciseFailed, match="FAIL slow: 1000 is too large") as unbounded, exercise("slow") as ex:
        for_all(ex, st.integers(0, 10**9), slow, examples=200)
    assert str(budgeted.value) != str(unbounded.value), "the budget stopped the shrinking before its end"


# ---------------------------------------------------------------- numbers of any type, strict values
class _OnAGpu:
    """What real() and integral() see of a CuPy array, on any machine: the CUDA array interface and item() (round
    23's adversary: a right answer of notebook 07 in CuPy returned a 0-d cupy.ndarray, refused as not a number)."""

    def __init__(self, value: object) -> None:
        self.host = np.asarray(value)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.host.shape, "typestr": self.host.dtype.str, "data": (0, True), "version": 3}

    def item(self) -> object:
        return self.host.item()

    def __repr__(self) -> str:
        return f"_OnAGpu({self.host!r})"


INTEGRAL = [(3, 3), (np.int64(3), 3), (np.uint8(3), 3), (torch.tensor(3), 3), (torch.tensor([3]), 3),
            (np.array(3), 3), (np.array([3]), 3), (np.array([3], dtype=np.uint16), 3),  # as a tensor (round 19)
            (2**70, 2**70), (-4, -4), (_OnAGpu(3), 3), (_OnAGpu([3]), 3), (_OnAGpu(np.uint8(3)), 3),
            (Decimal(3), 3), (Decimal("3.0"), 3), (Decimal("1E+3"), 1000), (Fraction(6, 2), 3)]  # exact (round 26)
NOT_INTEGRAL = [3.0, np.float32(3), torch.tensor(3.0), True, np.bool_(True), torch.tensor(True), "3", None,
                torch.tensor([1, 2]), 3 + 0j, [3], np.array([3.0]), np.array([True]), np.array([1, 2]),
                np.array([[3]]), torch.tensor([[3]]), _OnAGpu(3.0), _OnAGpu(True), _OnAGpu([1, 2]), _OnAGpu([[3]]),
                Decimal("2.5"), Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"), Fraction(5, 2)]
REAL = [(3, 3.0), (2.5, 2.5), (Fraction(5, 2), 2.5), (np.float32(2.5), 2.5), (np.int16(-2), -2.0),
        (torch.tensor(2.5), 2.5), (torch.tensor([2.5], dtype=torch.float16), 2.5), (np.array(2.5), 2.5),
        (np.array([2.5]), 2.5), (np.array(Fraction(5, 2), dtype=object), 2.5),  # round 32's adversary of 07
        (np.array([Decimal("2.5")], dtype=object), 2.5),
        (float("inf"), float("inf")), (Decimal("2.5"), 2.5), (Decimal("-Infinity"), float("-inf")),
        (_OnAGpu(2.5), 2.5), (_OnAGpu([np.float32(2.5)]), 2.5), (_OnAGpu(-2), -2.0)]
NOT_REAL = [True, np.bool_(False), "2.5", None, 1j, torch.tensor([1.0, 2.0]), [2.5], np.array([1.0, 2.0]),
            np.array([[2.5]]), torch.tensor([[2.5]]), torch.tensor(1j), _OnAGpu(True), _OnAGpu(1j), _OnAGpu([1.0, 2.0]),
            _OnAGpu([[2.5]]), np.array("2.5", dtype=object), np.array(True, dtype=object),
            np.array([Fraction(1), Fraction(2)], dtype=object), np.array([[Fraction(5, 2)]], dtype=object)]


@host
@pytest.mark.parametrize("x, value", INTEGRAL, ids=repr)
def test_integral_takes_every_kind_of_integer(x, value):
    assert integral(x) == value and type(integral(x)) is int


@host
@pytest.mark.parametrize("x", NOT_INTEGRAL, ids=repr)
def test_integral_refuses_what_is_not_an_integer(x):
    assert integral(x) is None


@host
@pytest.mark.parametrize("x, value", REAL, ids=repr)
def test_real_takes_every_kind_of_real_number(x, value):
    assert real(x) == value and type(real(x)) is float


@host
@pytest.mark.parametrize("x", [float("nan"), Decimal("NaN"), Decimal("sNaN")], ids=repr)
def test_real_keeps_a_nan_for_the_value_to_decide(x):
    assert math.isnan(real(x))


@host
@pytest.mark.parametrize("x", NOT_REAL, ids=repr)
def test_real_refuses_what_is_not_a_real_number(x):
    assert real(x) is None


@gpu
def test_real_and_integral_take_a_cupy_scalar():
    """A CuPy array of one element, 0-d or 1-d, is a number: what the CPU's _OnAGpu imitates (round 23)."""
    import cupy as cp

    assert real(cp.asarray(2.5)) == 2.5 and type(real(cp.asarray([2.5], dtype=cp.float32))) is float
    assert integral(cp.asarray(3)) == 3 and integral(cp.asarray([3], dtype=cp.uint8)) == 3
    assert real(cp.asarray([1.0, 2.0])) is None and integral(cp.asarray(3.0)) is None and real(cp.asarray(True)) is None


@host
@pytest.mark.parametrize("make", [lambda: torch.Generator(device="cuda"), lambda: __import__("cupy")],
                         ids=["a CUDA generator", "import cupy"])
def test_a_cpu_part_leaves_what_a_cpu_cannot_follow_to_a_gpu(make):
    """On a CPU, an answer that makes a CUDA generator or imports CuPy (where neither is there) leaves the rest of
    the check to a GPU, with what passed so far; it is neither a FAIL nor a crash of the check."""
    with contextlib.suppress(Exception):  # the error this machine gives is the case
        make()
        pytest.skip("this machine has it")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), exercise("cpu part") as ex, ex.on_cpu("a CPU's part", "the rest"):
        make()
    assert printed.getvalue().startswith("skipped (needs cuda): cpu part:"), printed.getvalue()
    assert "your function calls CUDA where the CPU cannot follow" in printed.getvalue()


# ---------------------------------------------------------------- references are the checks' own
@reference
def _twice(x):
    return 2 * x


@host
def test_a_reference_runs_inside_a_check_only():
    with pytest.raises(ReferenceLocked, match="runs inside the check only"):
        _twice(2)
    with inside_check():
        assert _twice(2) == 4
    assert not hasattr(_twice, "__wrapped__"), "the unlocked function stays out of a student's reach"


@host
@pytest.mark.parametrize("answer", [lambda x: _twice(x), lambda x: _catches(x)], ids=["calls it", "catches its error"])
def test_an_answer_that_calls_a_reference_fails(answer):
    with pytest.raises(ExerciseFailed, match="your function calls test_checks._twice, the check's own reference"), \
            exercise("f") as ex:
        yours = ex.answer(answer)
        ex.expect(yours(3) == _twice(3), "wrong", "hint")


def _catches(x):
    try:
        return _twice(x)
    except Exception:  # noqa: BLE001 -- what a student might write
        return 2 * x


@reference
@functools.cache
def _cached_twice(x):
    return 2 * x


def _lock_in(fn):
    """The lock a reference runs first: a constant of its code, or (a reference with decorators below
    `@reference`) a cell of the wrapper that locks it; None for any other function."""
    if not inspect.isfunction(fn):
        return None
    held = [*fn.__code__.co_consts, *(cell.cell_contents for cell in fn.__closure__ or ())]
    return next((x for x in held if type(x) is _Lock), None)


def _references():
    """Every check's reference, and this module's two, by the module's name for it."""
    modules = sorted({importlib.import_module(ex.check.__module__) for ex in REGISTRY}, key=lambda m: m.__name__)
    for module in [*modules, sys.modules[__name__]]:
        for name, value in vars(module).items():
            if callable(value) and _lock_in(value) is not None and value.__module__ == module.__name__:
                yield pytest.param(value, id=f"{module.__name__.rsplit('.', 1)[-1]}.{name}")


def _code_of(x):
    """The code that `x` runs, if it is a function or a cache of one; else None (asking anything else for an
    attribute may run code of its own: a lazy module imports)."""
    if type(x) is functools._lru_cache_wrapper:  # type(), not isinstance(): that asks some objects for __class__
        x = x.__wrapped__
    return x.__code__ if type(x) is types.FunctionType else None


@functools.cache
def _everything_alive():
    """What the garbage collector holds, as a student's code could scan it: the functions, by their code's name."""
    alive = {}
    for x in gc.get_objects():
        code = _code_of(x)
        if code is not None:
            alive.setdefault((code.co_filename, code.co_name), []).append(x)
    return alive


def _reaches(ref):
    """Each way to a reference's code that a student could write without editing the module or the framework."""
    yield "the reference", ref
    for i, cell in enumerate(ref.__closure__ or ()):
        yield f"__closure__[{i}].cell_contents", cell.cell_contents
    yield "__wrapped__", getattr(ref, "__wrapped__", ref)
    yield "inspect.unwrap", inspect.unwrap(ref)
    yield "__globals__[name]", ref.__globals__.get(ref.__name__, ref)  # a wrapper's: the framework's globals
    plain = inspect.unwrap(ref)
    if inspect.isfunction(plain):
        yield "types.FunctionType of its code", types.FunctionType(
            plain.__code__, plain.__globals__, plain.__name__, plain.__defaults__, plain.__closure__)
    seen, layer = set(), [ref]
    for depth in range(3):  # gc.get_referents, three steps out (its globals, and what they hold, included)
        layer = [x for y in layer for x in gc.get_referents(y) if id(x) not in seen and not seen.add(id(x))]
        for x in layer:
            if getattr(_code_of(x), "co_name", None) == ref.__name__:
                yield f"gc.get_referents, {depth + 1} steps out", x
    code = plain.__code__
    for x in _everything_alive().get((code.co_filename, code.co_name), []):
        yield "gc.get_objects()", x


def _call(fn):
    """`fn` called with its arguments, each None (a lock raises before any is read); a cache below `@reference`
    called through to what it caches (the values it already holds are the checks' own)."""
    fn = fn.__wrapped__ if isinstance(fn, functools._lru_cache_wrapper) else fn
    parameters = inspect.signature(fn).parameters.values()
    return fn(*(None for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                                p.POSITIONAL_OR_KEYWORD)),
              **{p.name: None for p in parameters if p.default is p.empty and p.kind is p.KEYWORD_ONLY})


@host
@pytest.mark.parametrize("ref", list(_references()))
def test_no_unlocked_copy_of_a_reference_is_within_reach(ref):
    """Round 17's adversary called `nb03.stream_rules.__closure__[0].cell_contents(program)`: the wrapper kept the
    unlocked function in its closure.  The lock is now the reference's own first statement: every way to its code
    that a student could write (its closure, __wrapped__, inspect.unwrap, its __globals__, a function made again
    from its code, gc.get_referents, gc.get_objects) raises outside a check, and FAILs an answer that takes it."""
    reached = list(_reaches(ref))
    assert len(reached) >= 6
    for how, fn in reached:
        with pytest.raises(ReferenceLocked):
            _call(fn)
        with pytest.raises(ExerciseFailed, match="the check's own reference"), exercise("f") as ex:
            ex.answer(_call)(fn)
            pytest.fail(f"{how}: the answer ran the reference")


# ---------------------------------------------------------------- no answer reachable
def _held_by(module):
    """What a student can take from a check module as an answer: each function or class it defines (called with
    the answer's arguments), and each constant it holds (returned whatever the arguments)."""
    for name, value in vars(module).items():
        if name.startswith(("__", "check_")) or inspect.ismodule(value):
            continue
        if callable(value) and getattr(value, "__module__", None) == module.__name__:
            yield name, value
        elif not callable(value) and isinstance(value, (dict, list, tuple, int, float, str)):
            yield name, _returning(value)


def _returning(constant):
    return lambda *args, **kwargs: constant


def _nothing_held_cases():
    import importlib

    for ex in REGISTRY:
        module = importlib.import_module(ex.check.__module__)
        for name, answer in _held_by(module):
            marks = [gpu] if ex.gpu else []
            yield pytest.param(ex, answer, marks=marks, id=f"{ex.key}: {ex.module}.{name}")


@pytest.mark.parametrize("ex, answer", list(_nothing_held_cases()))
def test_nothing_a_check_module_holds_passes_as_the_answer(ex, answer):
    """`nb04.STREAM_ANSWER` once passed `which_stream` as it was, `nb08.reference_fast_loss` passed `fast_loss`:
    no function, class or constant of a check's module may PASS as its answer, called as a student would."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.suppress(Exception), verdict_only():
        ex.check(answer)
    assert not re.search(rf"^PASS {re.escape(ex.title)}:", printed.getvalue(), re.MULTILINE), printed.getvalue()


@host
def test_the_reachable_answers_test_can_fail():
    """A module constant that is the answer: the test above would find it (its check PASSes)."""
    from utils.exercises import nb00

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        nb00.check_largest_batch(lambda budget, d, dtype: max(0, (budget // dtype.itemsize - d * d) // (2 * d)))
    assert printed.getvalue().startswith("PASS largest_batch:")


# ---------------------------------------------------------------- stream code from every caller (GPU)
@gpu
@pytest.mark.parametrize("kind", ["default", "with", "set_stream", "busy"])
def test_a_torch_caller_is_current_during_the_call_and_restored_after_it(kind):
    from utils.exercises.streams import torch_caller

    before = torch.cuda.current_stream()
    with torch_caller(kind) as caller:
        assert torch.cuda.current_stream() == caller.stream
        assert (caller.stream == torch.cuda.default_stream()) == (kind == "default")
        if kind == "busy":
            assert not caller.busy_end.query(), "the busy caller's stream is still busy when the call comes"
        torch.cuda.set_stream(torch.cuda.Stream())  # what a careless answer does
    assert torch.cuda.current_stream() == before


@gpu
def test_widened_makes_each_stream_the_answer_switches_to_start_late():
    """A missing wait inside the answer shows: the side stream's write lands after the caller reads."""
    from utils.exercises.streams import widened

    utils.gpu_sleep(0.001)
    torch.cuda.synchronize()
    x = torch.zeros(1, device="cuda")
    side = torch.cuda.Stream()
    with widened(50.0, spare=(torch.cuda.current_stream(),)):
        with torch.cuda.stream(side):
            x.fill_(1.0)  # no wait between the side stream and the caller: a race
        seen = x.clone()
    torch.cuda.synchronize()
    assert seen.item() == 0.0 and x.item() == 1.0


def test_late_at_each_entry_makes_a_given_stream_late_at_every_entry_and_record_and_restores_cupy(monkeypatch):
    """Each `with s:` and s.use() of a listed stream queues one spin there first (the spin's own entry is not
    counted), each event recorded on it (s.record(), event.record(s), event.record() with s current) one spin
    after; other streams none; CuPy's current stream after a spin is the one before it, though the spin's `with`
    block ends on the stack's top (a caller that used use() is not on the stack); CuPy's methods are as they were
    afterwards (a stand-in for CuPy, which keeps its stack and current stream as stream.pyx does: no GPU here)."""
    from types import SimpleNamespace

    from utils.exercises import streams

    done: list[tuple[str, int]] = []

    class Stream:
        def __init__(self, ptr: int) -> None:
            self.ptr = ptr

        def __enter__(self):
            done.append(("enter", self.ptr))
            stack.append(self)
            current[:] = [self]
            return self

        def __exit__(self, *exc):
            done.append(("exit", self.ptr))
            stack.pop()
            current[:] = [stack[-1]]  # the stack's top, as CuPy's pop_stream

        def use(self):
            done.append(("use", self.ptr))
            current[:] = [self]
            return self

        def record(self, event=None):
            done.append(("record", self.ptr))
            return event

    class Event:
        def record(self, stream=None):
            done.append(("event", (stream or current[0]).ptr))

    def spin(seconds, stream):
        done.append(("spin", stream.ptr))
        with stream:
            pass

    null = Stream(0)
    stack, current = [null], [null]
    fake = SimpleNamespace(cuda=SimpleNamespace(stream=SimpleNamespace(_BaseStream=Stream, Event=Event),
                                                get_current_stream=lambda: current[0]))
    monkeypatch.setattr(streams, "_cupy_or_none", lambda: fake)
    monkeypatch.setattr(streams, "cupy_sleep", spin)
    methods = (Stream.__enter__, Stream.use, Stream.record, Event.record)
    s, other, caller = Stream(1), Stream(2), Stream(3)
    with streams.late_at_each_entry(5.0, (s,)):
        with s:
            pass
        other.use()
        other.record()
        Event().record(other)
        Event().record()
        s.use()
        s.record()
        Event().record(s)
        Event().record()  # s is current
        with other:
            pass
        caller.use()  # a caller that used use(): an event recorded on s keeps it current
        s.record()
        assert current == [caller]
    spins = [what for what in done if what[0] == "spin"]
    assert spins == [("spin", 1)] * 6
    assert done[:4] == [("spin", 1), ("enter", 1), ("exit", 1), ("use", 0)]
    each_spin_after_its_event = [("spin", 1), ("enter", 1), ("exit", 1), ("use", 1)]
    assert done[-23:-8] == [("record", 1), *each_spin_after_its_event, ("event", 1), *each_spin_after_its_event,
                            ("event", 1), *each_spin_after_its_event]
    assert done[-8:] == [("enter", 2), ("exit", 2), ("use", 3), ("record", 1), ("spin", 1), ("enter", 1),
                         ("exit", 1), ("use", 3)]
    assert (Stream.__enter__, Stream.use, Stream.record, Event.record) == methods


@gpu
def test_widened_leaves_a_capturing_stream_alone():
    """An answer that captures a graph inside the widened block: a sleep queued during the capture would be
    recorded, and every replay would sleep (notebook 07's checks widen the calls of answers that capture)."""
    from utils.exercises.streams import widened

    utils.timing.gpu_cycles_per_second()  # calibrated before: calibrating waits for the GPU, which a capture forbids
    x = torch.zeros(1, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with widened(50.0, spare=(torch.cuda.current_stream(),)), torch.cuda.graph(graph):
        x.add_(1.0)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) < 10.0 and x.item() == 1.0


# ---------------------------------------------------------------- an answer that never returns; which mistake
@host
def test_a_call_that_never_returns_fails_after_its_time_limit_without_shrinking():
    from utils.exercises.properties import TooSlow, time_limit

    calls = []

    def forever(x):
        calls.append(x)
        while True:
            pass

    started = time.perf_counter()
    with pytest.raises(TooSlow, match=r"FAIL f: forever\(\d+\) ran for more than 0.2 s without returning"), \
            exercise("f") as ex:
        def prop(x):
            with time_limit(ex, 0.2, f"forever({x})", "compute it"):
                forever(x)

        for_all(ex, st.integers(0, 10**9), prop)
    assert len(calls) == 1 and time.perf_counter() - started < 5



@host
def test_a_cpu_time_limit_counts_the_processs_cpu_not_the_clock():
    """With cpu=True the limit is CPU seconds: a call that spins past it FAILs; one that waits (as a call does on a
    machine busy with other processes) as long on the clock, using no CPU, does not."""
    from utils.exercises.properties import TooSlow, time_limit

    with exercise("f") as ex, time_limit(ex, 0.2, "waits()", "compute it", cpu=True):
        time.sleep(0.6)
    with pytest.raises(TooSlow, match=r"FAIL f: spins\(\) ran for more than 0.2 s of CPU time without returning"), \
            exercise("f") as ex:
        started = time.perf_counter()
        with time_limit(ex, 0.2, "spins()", "compute it", cpu=True):
            while time.perf_counter() - started < 30:
                pass

@host
def test_diagnose_names_the_shortcut_that_gives_the_answers_numbers_on_ordinary_cases():
    from utils.exercises.properties import diagnose

    def right(a, b):
        return a + b

    shortcuts = [(lambda a, b: a - b, "subtract?"), (lambda a, b: a * b, "multiply?")]
    cases = [(3, 4), (5, 7)]
    assert diagnose(lambda a, b: a * b, cases, right, shortcuts) == "multiply?"
    assert diagnose(lambda a, b: a * b + (a == 5), cases, right, shortcuts) is None  # matches on one case only
    assert diagnose(lambda a, b: 1 / 0, cases, right, shortcuts) is None


@host
def test_a_cuda_error_that_ends_the_process_fails_with_a_hint_to_restart():
    """Round 44's adversary: a kernel's illegal address on the H200 escaped check_softmax_rows as PyTorch's own
    AcceleratorError; any check now FAILs it, says the process must restart, and lets other errors through."""
    from utils.exercises import ExerciseFailed, exercise

    with pytest.raises(ExerciseFailed, match=r"^FAIL x: .*restart the kernel.*\n     hint: "), exercise("x"):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    with pytest.raises(ValueError), exercise("x"):
        raise ValueError("not CUDA's")


class _CodedError(RuntimeError):
    """An error that carries a CUDA error code, as PyTorch's AcceleratorError may (its error_code)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.error_code = code


@pytest.mark.parametrize(("message", "code", "sticky"), [
    ("CUDA error: an illegal memory access was encountered", None, True),
    ("CUDA error: misaligned address", None, True),
    ("CUDA error: unspecified launch failure", None, True),
    ("CUDA error: device-side assert triggered", None, True),
    ("CUDA error: an illegal instruction was encountered", None, True),
    ("cudaErrorIllegalAddress: an illegal memory access was encountered", None, True),
    ("CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure", None, True),
    ("CUDA error: invalid configuration argument", None, False),
    ("CUDA error: out of memory", None, False),
    ("CUDA error: invalid argument", None, False),
    ("CUDA error: something", 700, True),
    ("CUDA error: something", 719, True),
    ("CUDA error: an illegal memory access was encountered", 9, False),  # the code decides where there is one
    ("CUDA error: invalid configuration argument", 9, False),
])
def test_only_a_sticky_cuda_error_is_read_as_the_gpu_lost(message: str, code: int | None, sticky: bool) -> None:
    """Round 46's engineer: PyTorch raises AcceleratorError for every CUDA error that reaches C10_CUDA_CHECK, and the
    check read each as the process's GPU lost ("restart the kernel", an illegal address's hint).  Only the codes that
    the CUDA runtime's reference calls sticky are; a non-sticky error goes through as the error it is."""
    from utils.exercises import ExerciseFailed, exercise, lost_the_gpu

    error = RuntimeError(message) if code is None else _CodedError(message, code)
    accelerator = getattr(torch, "AcceleratorError", None)
    if accelerator is not None and code is None:
        error = accelerator(message)
    assert lost_the_gpu(error) is sticky
    if sticky:
        with pytest.raises(ExerciseFailed, match="restart the kernel"), exercise("x"):
            raise error
    else:
        with pytest.raises(type(error)), exercise("x"):
            raise error
