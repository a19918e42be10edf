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
message, not a traceback; an unfinished exercise only says so, so Run All goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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


@contextmanager
def exercise(name: str) -> Iterator[Checker]:
    """Run an exercise's checks: print PASS, print TODO if not attempted, or raise on FAIL."""
    checker = Checker(name)
    try:
        yield checker
    except NotImplementedError:
        print(f"TODO {name}: not done yet (it still raises NotImplementedError)")
        return
    print(f"PASS {name}: {checker.passed} checks passed")
