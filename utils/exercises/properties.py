"""How a check decides: a property of the answer, over inputs that Hypothesis generates, against a reference.

A check does not hold a list of examples with their answers.  It says what must hold for *every* input
the task allows (the answer equals the check's reference, within a tolerance where rounding is allowed;
the result fits; the stream waited), and Hypothesis (https://hypothesis.readthedocs.io) draws the inputs:
boundaries and small cases first, then larger ones.  When the property fails, Hypothesis shrinks the
input to the smallest one it can find that still fails, and the student sees that one:

    FAIL largest_batch: largest_batch(budget=1023, d=1, dtype=torch.float16) returned 255, but 256 rows fit too
         hint: ...

Why Hypothesis, and not generators of our own: it generates from the whole space a strategy describes
(sizes of 0 and 1, odd sizes, the largest allowed value) without a list we would have to keep complete,
and it shrinks a failing input, which no seeded generator of ours would do without writing a shrinker.
It runs with a fixed seed and no example database, so a check is the same on every run and writes no
files; `examples` bounds the inputs tried, and `budget_s` bounds the shrinking of a slow answer.

- `for_all(ex, cases, prop)`: the property `prop(case)`, for every generated case (then for the `chosen`
  ones); a failing generated case FAILs as the smallest failing case Hypothesis can find.
- `integral(x)`, `real(x)`: a number the student returned, of any type that is one (int, NumPy scalar,
  0-d tensor), or None: liberal in types, strict in values.
"""

from __future__ import annotations

import decimal
import math
import numbers
import operator
import signal
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import torch
from torch._subclasses.fake_tensor import is_fake

from ..device import GPUUnavailableError
from . import STUB_MESSAGE, Checker, ExerciseFailed, LeftForGPU, is_stub

try:
    import hypothesis
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover -- requirements.txt installs it; Colab does not have it
    from ._install import hypothesis_for_colab

    hypothesis = hypothesis_for_colab()
    from hypothesis import strategies as st

T = TypeVar("T")


def _draw_no_local_constants() -> None:
    """Hypothesis (since 6.131) also draws, now and then, constants that it finds in the source of each module of
    this repository imported so far: a check would draw other inputs in a notebook than under pytest, which imports
    every check module.  The checks draw from their strategies alone.  (A private hook of the pinned version;
    tests/test_checks.py fails if it goes.)"""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants") and hasattr(providers, "CONSTANTS_CACHE"):
        none = providers.Constants()
        providers._get_local_constants = lambda: none
        providers.CONSTANTS_CACHE.cache.clear()  # what was drawn from local constants before


_draw_no_local_constants()

EXAMPLES = 100  # generated cases per property, unless a check asks for fewer (a GPU check: a few seconds)
BUDGET_S = 20.0  # seconds of shrinking after the first failure; then the smallest failure found so far stands
# Shrinking gives a student the smallest failing case.  Whether an answer FAILs is decided before it, by the cases
# drawn; but where the first failure is the answer's own error, a smaller case may FAIL with a hint instead, and the
# student sees that.  The course's tests that ask only for the verdict (tests/test_exercises.py's answers) set this
# False: a first failure that is a FAIL then stands at once, without the budget above; an error of the answer's own
# is shrunk as for a student.
SHRINKING = True


class _Escape(BaseException):
    """Carries out of Hypothesis what is not a failure of the answer: the stub (TODO), the end of a CPU part
    (LeftForGPU), a GPU that is missing.  Hypothesis lets a BaseException through without shrinking."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class _OutOfTime(BaseException):
    """Stops Hypothesis once shrinking has spent its budget: the smallest failure found so far stands.  (Each case
    Hypothesis tries is smaller than its smallest failure so far, so the last failure found is that one; without
    this, Hypothesis would go on drawing and discarding cases, which costs about as much as trying them.)"""


def _settings(examples: int, shrink: bool = True) -> Any:
    return hypothesis.settings(
        database=None,  # write no files, replay nothing from earlier runs: the same check every time
        derandomize=False,  # the seed below makes it deterministic, one seed per check
        max_examples=examples,
        deadline=None,  # a student's first call may compile, allocate, or wait for a GPU
        suppress_health_check=list(hypothesis.HealthCheck),
        report_multiple_bugs=False,  # one failure, the smallest, not a group of them
        verbosity=hypothesis.Verbosity.quiet,  # the check prints its own message
        print_blob=False,  # no "@reproduce_failure" note on the answer's error (Hypothesis's "ci" profile sets one)
        phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate) + ((hypothesis.Phase.shrink,) if shrink else ()),
    )


def _alone(error: BaseException) -> BaseException:
    """`error` with no exception group left in the chain of its `__context__`.

    Raised inside a handler, an error keeps the handled exception as its context, and Hypothesis's FlakyFailure is an
    ExceptionGroup: IPython then prints the chain with the standard library's traceback instead of the error's own
    `_render_traceback_` (`contains_exceptiongroup` in IPython/core/interactiveshell.py), and a FAIL shows as a
    long traceback with the machine's paths.  Hence raised outside the handlers, and its chain cut at a group."""
    link = error
    while link.__context__ is not None:
        if isinstance(link.__context__, BaseExceptionGroup):
            link.__context__ = None
            break
        link = link.__context__
    return error


def raised_on(error: BaseException, case: object) -> BaseException:
    """`error`, marked as raised by the answer on `case`: a smaller case than the one drawn, which a property that
    makes its failing cases smaller itself found (for_all's note, and nb03's _at_once, then name that case)."""
    error._raised_on = (case,)  # type: ignore[attr-defined]
    return error


def case_of(error: BaseException, case: T) -> T:
    """The case that `error` names (raised_on), or `case`, the one the answer was given."""
    return getattr(error, "_raised_on", (case,))[0]


def for_all(ex: Checker, cases: st.SearchStrategy[T], prop: Callable[[T], None], *, examples: int = EXAMPLES,
            chosen: Sequence[T] = (), budget_s: float = BUDGET_S, describe: Callable[[T], str] = repr,
            first: Sequence[T] = ()) -> None:
    """Check `prop(case)` for `examples` cases drawn from `cases`, then for the `chosen` ones (and before all, the
    `first` ones: small cases on which a slow wrong answer fails at once, not after many generated ones).

    `prop` raises ExerciseFailed (through `ex.expect`) when the answer is wrong for that case.  Each case
    that passes counts as one check passed.  On a failure, Hypothesis shrinks the case to the smallest
    that still fails, and that failure is raised: the message names the case, since `prop` writes it.
    `budget_s=0` shrinks nothing (a check that makes a failing case smaller itself, where Hypothesis's
    shrinking would only cost time: tens of milliseconds even for an answer that fails everywhere).
    An exception that the answer itself raises is shrinking's target too, and reaches the student as it
    is, with a note naming the smallest case that raises it (`describe(case)`).
    """
    seed = zlib.crc32(f"{ex.name}:{getattr(prop, '__qualname__', '')}".encode())
    passed, tried = ex.passed, [0]
    first_failure: list[float] = []
    outcomes: dict[str, BaseException | None] = {}
    cases_of: dict[int, T] = {}
    failures: list[tuple[T, Exception]] = []  # every failure, in the order found (the last is the smallest)

    def run(case: T) -> None:
        key = repr(case)
        if first_failure and time.perf_counter() - first_failure[0] > (
                budget_s if SHRINKING or not isinstance(failures[0][1], ExerciseFailed) else 0):
            known = outcomes.get(key)  # out of time: shrink no further
            if known is not None:
                raise known
            raise _OutOfTime
        ex.passed = 0
        try:
            prop(case)
        except Exception as error:  # a failure of the answer: Hypothesis shrinks it
            if is_stub(error) or isinstance(error, (LeftForGPU, GPUUnavailableError, TooSlow)):
                raise _Escape(error) from None
            first_failure[:] = first_failure or [time.perf_counter()]
            outcomes[key], cases_of[id(error)] = error, case_of(error, case)
            failures.append((case_of(error, case), error))
            raise
        outcomes[key] = None
        tried[0] += 1

    test = hypothesis.seed(seed)(_settings(examples, shrink=budget_s > 0)(hypothesis.given(cases)(run)))
    stands: BaseException | None = None  # the failure to raise, outside the handlers (see _alone)
    try:
        for case in first:
            run(case)
        test()  # generated cases first: a failure among them is shrunk (Hypothesis's explicit examples are not)
        for case in chosen:
            run(case)
    except _Escape as escape:
        stands = escape.error
    except _OutOfTime:
        smallest, smallest_failure = failures[-1]
        if not isinstance(smallest_failure, ExerciseFailed):  # the answer's own error, not a FAIL
            smallest_failure.add_note(f"{ex.name}: your function raised this for {describe(smallest)} (the smallest "
                                      "input found that makes it raise)")
        stands = smallest_failure
    except Exception as error:
        flaky = isinstance(error, hypothesis.errors.Flaky) and bool(failures)
        # Flaky: the answer failed on a case, and not when Hypothesis tried it again (it keeps state from one call
        # to the next, or what it measures changed): that failure stands, the smallest one found.
        failed_on, failure = failures[-1] if flaky else (cases_of.get(id(error)), error)
        if failed_on is not None and not isinstance(failure, ExerciseFailed):  # the answer's own error, not a FAIL
            failure.add_note(f"{ex.name}: your function raised this for {describe(failed_on)} (the smallest input "
                             "found that makes it raise)")
        if not flaky:
            raise
        stands = failure
    finally:
        outcomes.clear()
        cases_of.clear()
        failures.clear()
    if stands is not None:
        raise _alone(stands) from None
    ex.passed = passed + tried[0]


# ------------------------------------------------------------------------------------------
# An answer that does not return
# ------------------------------------------------------------------------------------------
class TooSlow(ExerciseFailed):
    """One call of the answer ran past its time limit: a FAIL that no smaller case would make clearer, so it is
    not shrunk (shrinking would call the slow answer again and again)."""


@contextmanager
def time_limit(ex: Checker, seconds: float, call: str, hint: str, cpu: bool = False) -> Iterator[None]:
    """FAIL (TooSlow) if the block runs longer than `seconds`: a search that tries every value of a range the task
    allows to be huge otherwise never returns, and the student sees neither PASS nor FAIL.  With `cpu`, seconds of
    the process's CPU time (user and system), not of the clock: a machine busy with other work (a 2-core CI runner,
    a laptop compiling) then stretches no call past its limit (a run beside eight busy processes failed two right
    answers of 00 on the clock's 4 s, 2026-12-01); only for work on the CPU (a wait for a GPU may spend none).

    Python has no way to stop a thread from outside, so the limit is a timer signal (SIGALRM, or SIGPROF with
    `cpu`), which only the main thread of a POSIX process can set (JupyterLab and Colab run a cell there); elsewhere
    (Windows, a thread) the block runs without a limit, and a call that returns late still FAILs.
    """
    unit = " of CPU time" if cpu else ""

    def too_slow(*_: object) -> None:
        raise TooSlow(f"FAIL {ex.name}: {call} ran for more than {seconds:g} s{unit} without returning\n     hint: "
                      f"{hint}")

    timer: int = getattr(signal, "ITIMER_PROF" if cpu else "ITIMER_REAL", -1)
    signum: int = getattr(signal, "SIGPROF" if cpu else "SIGALRM", -1)
    clock = time.process_time if cpu else time.perf_counter
    alarm = (hasattr(signal, "setitimer") and timer != -1 and signum != -1
             and threading.current_thread() is threading.main_thread())
    if alarm:
        previous = signal.signal(signum, too_slow)
        signal.setitimer(timer, seconds)
    started = clock()
    try:
        yield
    finally:
        if alarm:
            signal.setitimer(timer, 0)
            signal.signal(signum, previous)
    if clock() - started > seconds:
        too_slow()


# ------------------------------------------------------------------------------------------
# Hints: which mistake gives the answer's numbers
# ------------------------------------------------------------------------------------------
def diagnose(yours: Callable[..., object], cases: Sequence[tuple], right: Callable[..., object],
             shortcuts: Sequence[tuple[Callable[..., object], str]]) -> str | None:
    """The hint of the first shortcut that gives the answer's numbers on every one of `cases`, or None.

    Shrinking makes a failing case as small as it can, and on a small case many mistakes give the same number
    (with one row of width 1, forgetting the weight or the output costs the same row): a hint read from the failing
    case points at the wrong mistake.  So the answer is asked again on a few ordinary cases, where the shortcuts
    (each a function of the same arguments, and the hint it deserves) differ from each other and from `right`.
    A case on which the answer raises tells nothing, and a shortcut that is right on a case is not tried there.
    """
    got = []
    for case in cases:
        try:
            got.append(yours(*case))
        except Exception:  # noqa: BLE001 -- an answer that raises on an ordinary case gets the general hint
            got.append(None)
    for shortcut, hint in shortcuts:
        told = [(g, shortcut(*case)) for g, case in zip(got, cases, strict=True) if shortcut(*case) != right(*case)]
        if told and all(g is not None and g == value for g, value in told):
            return hint
    return None


# ------------------------------------------------------------------------------------------
# Numbers the student returns: any type that is one
# ------------------------------------------------------------------------------------------
def _device_scalar(x: object, kinds: str) -> object:
    """An array on a GPU of another library (CuPy: a 0-d or one-element array, what CuPy code returns where NumPy code
    returns a NumPy scalar; round 23's adversary: refused as not a number), as a Python number read back to the host:
    one element, at most one dimension, of a dtype kind of `kinds` (the array interface's typestr); else None.  (A
    torch tensor is not one: it is read as a tensor.)"""
    interface = getattr(x, "__cuda_array_interface__", None)
    if not isinstance(interface, dict):
        return None
    shape = tuple(interface.get("shape", ()))
    typestr = str(interface.get("typestr", ""))
    if len(shape) > 1 or math.prod(shape) != 1 or typestr[1:2] not in tuple(kinds):
        return None
    try:
        value = x.item()  # type: ignore[attr-defined]  # CuPy's: a Python number, copied to the host
    except Exception:  # noqa: BLE001 -- an array that cannot be read on the host is no number here
        return None
    return value if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_)) else None


def valueless(x: torch.Tensor) -> bool:
    """A tensor with a shape and no values: on the meta device, or a FakeTensor (its .item() raises, or makes a value
    up).  Round 23's adversary returned a 0-d meta tensor: the check's own .item() raised, and the note said the
    answer had."""
    return x.is_meta or x.device.type == "meta" or is_fake(x)


def integral(x: object) -> int | None:
    """`x` as an int if it is an integer of any kind (int, NumPy integer, an integer tensor or NumPy array of one
    element and at most one dimension), or an exact number whose value is a whole one (a Decimal or a Fraction: round
    26's adversary of 00 returned the Decimal that exact Decimal arithmetic gives, and was refused);
    None for anything else, a bool or a float such as 3.0 included (a count is not a measurement), and a tensor
    without values (`valueless`: a meta tensor has a shape and no number)."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, decimal.Decimal):
        return int(x) if x.is_finite() and x == x.to_integral_value() else None
    if isinstance(x, numbers.Rational) and not isinstance(x, numbers.Integral):  # a Fraction
        return int(x.numerator) if x.denominator == 1 else None
    if isinstance(x, torch.Tensor):
        if (valueless(x) or x.numel() != 1 or x.dim() > 1 or x.dtype == torch.bool or x.is_floating_point()
                or x.is_complex()):
            return None
        return int(x.item())
    if isinstance(x, np.ndarray):  # as a tensor (operator.index refuses a 1-d array of one: round 19's adversary)
        return int(x.reshape(())) if x.size == 1 and x.ndim <= 1 and x.dtype.kind in "iu" else None
    on_gpu = _device_scalar(x, "iu")
    if on_gpu is not None:
        return int(on_gpu)  # type: ignore[call-overload]
    try:
        return operator.index(x)  # type: ignore[arg-type]  # int, NumPy integers, whatever says it is one
    except TypeError:
        return None


def real(x: object) -> float | None:
    """`x` as a float if it is a real number of any kind (int, float, Fraction, Decimal, NumPy scalar, a one-element
    tensor or NumPy array of at most one dimension, an object array's one number among them); None for anything else
    (a bool, a complex number, a string, a tensor without values).  NaN and infinities stay: the value decides."""
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, torch.Tensor):
        if valueless(x) or x.numel() != 1 or x.dim() > 1 or x.dtype == torch.bool or x.is_complex():
            return None
        return float(x.item())
    if isinstance(x, np.ndarray):
        if x.size == 1 and x.ndim <= 1 and x.dtype.kind == "O":  # one exact number (a Fraction) in an object array,
            item = x.reshape(()).item()  # as np.asarray of it gives: round 32's adversary of 07, refused
            return None if isinstance(item, np.ndarray) else real(item)
        return float(x.reshape(())) if x.size == 1 and x.ndim <= 1 and x.dtype.kind in "iuf" else None  # as a tensor
    if isinstance(x, (numbers.Real, np.integer, np.floating)):  # int, float, Fraction, NumPy scalars
        return float(x)  # type: ignore[arg-type]
    if isinstance(x, decimal.Decimal):  # a real number too, though not a numbers.Real (it does not mix with float)
        return math.nan if x.is_nan() else float(x)  # float() refuses a signalling NaN
    on_gpu = _device_scalar(x, "iuf")
    return None if on_gpu is None else float(on_gpu)  # type: ignore[arg-type]


def finite(x: float | None) -> bool:
    """A number, and neither NaN nor infinite."""
    return x is not None and math.isfinite(x)


def shown(x: object, limit: int = 80) -> str:
    """What the student returned, for a message: its repr, cut at `limit` characters."""
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["EXAMPLES", "STUB_MESSAGE", "finite", "for_all", "integral", "real", "shown", "st"]
