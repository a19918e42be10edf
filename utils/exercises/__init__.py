"""The exercise notebooks' checks: a clear pass or fail, with a hint, for each exercise.

Each exercise notebook ends an exercise with a check cell such as

    from utils.exercises import nb00
    nb00.check_tensor_nbytes(tensor_nbytes)

which prints one of

    PASS tensor_nbytes: 6 checks passed
    TODO tensor_nbytes: not done yet (it still raises NotImplementedError)
    FAIL tensor_nbytes: tensor_nbytes((10,), torch.float16) returned 10, expected 20
         hint: multiply the number of elements by the bytes per element

A failing check raises `ExerciseFailed` (so a test, or Run All, stops there) but shows only its
message, not a traceback; an unfinished exercise only says so, so Run All goes on.  Only the
exercise's own stub, `raise NotImplementedError(STUB_MESSAGE)`, counts as unfinished: any other
error, a NotImplementedError from PyTorch included, reaches the student as it is.  A cell that only
uses an exercise's function wraps that use in `with attempt():`, which says TODO in the same way.

Each check is registered, next to it in `nbNN.py`, as an `Exercise`: its notebook, the function the
student writes, and whether the check needs a GPU.  Its typical wrong answers (and any other right
answers) live in `answers/nbNN.py`; tests/test_exercises.py runs every registered check on the
solution, the stub, and each of those answers.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType

# What an exercise's stub raises: tools/make_exercises.py writes `raise NotImplementedError(STUB_MESSAGE)`
# in place of each solution, and only a NotImplementedError with this message means "not done yet".
STUB_MESSAGE = "exercise not done yet"


class ExerciseFailed(AssertionError):
    """An exercise's answer is wrong; the message says how, and gives a hint."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of printing a traceback: the student needs the message only.
        return str(self).splitlines()


class Checker:
    """Collects an exercise's expectations; the first one that fails raises ExerciseFailed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.passed = 0

    def expect(self, ok: bool, problem: str, hint: str) -> None:
        """Count a passed expectation, or fail with `problem` (what went wrong) and `hint`."""
        if not ok:
            raise ExerciseFailed(f"FAIL {self.name}: {problem}\n     hint: {hint}")
        self.passed += 1

    def expect_saving(self, elapsed_ms: Callable[[Callable[[], object]], float], baseline: Callable[[], object],
                      yours: Callable[[], object], saving_ms: float, describe: tuple[str, str], hint: str,
                      tries: int = 3) -> None:
        """Expect `yours` to run at least `saving_ms / 2` faster than `baseline`, timed by `elapsed_ms`.

        For the overlap exercises (notebooks 03 and 04): `saving_ms` is what overlapping can save at
        most, and half of it must show.  Timings on a shared machine are only ever too slow, never too
        fast, so the baseline is the best of two runs, and yours gets `tries` runs: a busy host spoils
        one now and then, a wrong answer spoils every one.  `describe` names the baseline and what
        overlaps, for the message: ("copying then computing one batch at a time", "the copies with
        the steps").
        """
        baseline(), yours()  # warm-up: first calls allocate, compile, fill caches
        baseline_ms = min(elapsed_ms(baseline) for _ in range(2))
        for _ in range(tries):
            yours_ms = elapsed_ms(yours)
            if yours_ms < baseline_ms - saving_ms / 2:
                break
        self.expect(yours_ms < baseline_ms - saving_ms / 2,
                    f"took {yours_ms:.2f} ms; {describe[0]} takes {baseline_ms:.2f} ms, and overlapping "
                    f"{describe[1]} saves up to {saving_ms:.2f} ms", hint)


def is_stub(error: BaseException) -> bool:
    """True for the NotImplementedError of an exercise's stub, and for nothing else."""
    return type(error) is NotImplementedError and error.args == (STUB_MESSAGE,)


def _todo(name: str) -> None:
    print(f"TODO {name}: not done yet (it still raises NotImplementedError)")


@contextmanager
def exercise(name: str) -> Iterator[Checker]:
    """Run an exercise's checks: print PASS, print TODO if not attempted, or raise on FAIL.

    Any other exception than the stub's, a NotImplementedError of PyTorch's too, passes through.
    """
    checker = Checker(name)
    try:
        yield checker
    except NotImplementedError as error:
        if not is_stub(error):
            raise
        _todo(name)
        return
    print(f"PASS {name}: {checker.passed} checks passed")


def _raised_by(tb: TracebackType | None) -> str:
    """The name of the function whose frame raised (the last one of the traceback)."""
    frames = traceback.extract_tb(tb)
    return frames[-1].name if frames else "an exercise"


@contextmanager
def attempt() -> Iterator[None]:
    """Run a cell that uses exercises' functions: an unfinished one makes it print TODO, not a traceback.

        with attempt():
            n = largest_square(12 * 2**30, torch.float16)
            print(n)

    prints `TODO largest_square: not done yet ...` while largest_square is the stub, and stops the
    block there.  Any other exception passes through unchanged.
    """
    try:
        yield
    except NotImplementedError as error:
        if not is_stub(error):
            raise
        _todo(_raised_by(error.__traceback__))


# ------------------------------------------------------------------------------------------
# The registry of exercises
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Exercise:
    """One check of one exercise, as its check cell in solutions/<notebook>.ipynb calls it:

        nbNN.<check.__name__>(<name>)

    - notebook: the notebook's stem, "01_memory" (solutions/ and exercises/ hold one each);
    - name: the function the student writes (a cell tagged `exercise` defines it);
    - check: the check, a function of the student's function;
    - gpu: the check needs a CUDA GPU (its cell starts with `%%requires cuda`);
    - label: what the check prints after PASS, TODO or FAIL (default: `name`).

    Its typical wrong answers, and any other right answers, are in `answers/nbNN.py`, in the dicts
    WRONG and ALSO_RIGHT under the check's name: `wrong` and `also_right` read them.
    """

    notebook: str
    name: str
    check: Callable[[Callable], None]
    gpu: bool = False
    label: str = ""

    @property
    def title(self) -> str:
        """What the check prints after PASS, TODO or FAIL."""
        return self.label or self.name

    @property
    def key(self) -> str:
        """A unique name: the notebook and the check, "01_memory:check_block_memory"."""
        return f"{self.notebook}:{self.check.__name__}"

    @property
    def module(self) -> str:
        """The check's module's short name, "nb01"."""
        return self.check.__module__.rsplit(".", 1)[-1]

    def _answers(self, kind: str) -> dict[str, Callable]:
        name = f"{__name__}.answers.{self.module}"
        if importlib.util.find_spec(name) is None:  # none yet: the tests say what is missing
            return {}
        return dict(getattr(importlib.import_module(name), kind, {}).get(self.check.__name__, {}))

    @property
    def wrong(self) -> dict[str, Callable]:
        """Typical wrong answers, by what is wrong with them: each must FAIL with a hint."""
        return self._answers("WRONG")

    @property
    def also_right(self) -> dict[str, Callable]:
        """Right answers other than the solution, by what they do differently: each must PASS."""
        return self._answers("ALSO_RIGHT")


_REGISTRY: dict[str, Exercise] = {}


def register(*exercises: Exercise) -> None:
    """Add exercises to the registry (each check module registers its own, when imported)."""
    for ex in exercises:
        if _REGISTRY.get(ex.key, ex) != ex:
            raise ValueError(f"two exercises registered as {ex.key}")
        _REGISTRY[ex.key] = ex


CHECK_MODULE = re.compile(r"nb\d\d")


def registry() -> list[Exercise]:
    """Every registered exercise of every notebook, in the order notebook by notebook.

    Imports every check module `utils/exercises/nbNN.py`, each of which registers its exercises.
    """
    for info in pkgutil.iter_modules(__path__):
        if CHECK_MODULE.fullmatch(info.name):
            importlib.import_module(f"{__name__}.{info.name}")
    return sorted(_REGISTRY.values(), key=lambda ex: ex.notebook)
