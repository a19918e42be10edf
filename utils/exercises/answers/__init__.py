"""Answers to the exercises that are not the solution, for the tests: SPOILERS.

`answers/nbNN.py` holds, for the checks of `utils/exercises/nbNN.py`,

    WRONG = {"check_name": {"what is wrong with it": answer, ...}, ...}
    ALSO_RIGHT = {"check_name": {"what it does differently": answer, ...}, ...}

the typical wrong answers, each of which its check must reject with a hint, and right answers other
than the solution, which it must accept.  Some wrong answers are built from a right one with one
thing switched off, so these modules hold right answers too: do the exercises first.
tests/test_exercises.py runs them all (see `utils.exercises.Exercise`).
"""
