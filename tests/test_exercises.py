"""Exercises: generated from the solutions, and each check accepts the solution and rejects wrong answers."""

import math
import shutil

import nbformat
import pytest

from conftest import definitions_of
from tools import make_exercises
from tools.course import EXERCISES, SOLUTIONS, read
from utils.exercises import ExerciseFailed, nb00


def test_exercises_are_up_to_date():
    assert make_exercises.stale() == []


def test_a_stale_exercise_is_detected(tmp_path):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    shutil.copytree(SOLUTIONS, solutions)
    exercises.mkdir()
    assert make_exercises.stale(solutions, exercises)  # nothing generated yet
    for path, text in make_exercises.expected(solutions, exercises).items():
        path.write_text(text)
    assert make_exercises.stale(solutions, exercises) == []
    nb_path = next(solutions.glob("*.ipynb"))
    nb = read(nb_path)
    next(c for c in nb.cells if c.cell_type == "code").source += "\n# changed"
    nbformat.write(nb, nb_path)
    assert make_exercises.stale(solutions, exercises) == [f"{nb_path.name}: differs from what its solution gives"]


def test_strip_solutions_keeps_indentation_and_the_rest():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n\nprint(f)"
    assert make_exercises.strip_solutions(source) == (
        'def f(x):\n    # TODO: your code here\n    raise NotImplementedError("exercise not done yet")\n\nprint(f)'
    )


def test_unclosed_solution_block_is_an_error():
    with pytest.raises(ValueError, match="END SOLUTION"):
        make_exercises.strip_solutions("### BEGIN SOLUTION\nx = 1")


@pytest.mark.parametrize("path", sorted(EXERCISES.glob("*.ipynb")), ids=lambda p: p.name)
def test_exercises_have_no_outputs_and_no_solutions(path):
    nb = read(path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            assert "BEGIN SOLUTION" not in cell.source
    assert "course" not in nb.metadata




# ---------------------------------------------------------------- notebook 00
NB00 = ["tensor_nbytes", "largest_square"]
CHECKS00 = [nb00.check_tensor_nbytes, nb00.check_largest_square]


@pytest.mark.parametrize("index", range(len(NB00)), ids=NB00)
def test_nb00_checks_accept_the_solution(index, capsys):
    solution = definitions_of(SOLUTIONS / "00_setup.ipynb", NB00)[index]
    CHECKS00[index](solution)
    assert capsys.readouterr().out.startswith(f"PASS {NB00[index]}")


@pytest.mark.parametrize("index", range(len(NB00)), ids=NB00)
def test_nb00_unfinished_exercise_says_todo(index, capsys):
    stub = definitions_of(EXERCISES / "00_setup.ipynb", NB00)[index]
    CHECKS00[index](stub)
    assert capsys.readouterr().out.startswith(f"TODO {NB00[index]}")


WRONG_NBYTES = {
    "counts elements, not bytes": lambda shape, dtype: math.prod(shape),
    "counts bits": lambda shape, dtype: math.prod(shape) * dtype.itemsize * 8,
    "assumes 4 bytes per element": lambda shape, dtype: math.prod(shape) * 4,
    "sums the shape": lambda shape, dtype: sum(shape) * dtype.itemsize,
    "returns a float": lambda shape, dtype: float(math.prod(shape) * dtype.itemsize),
}
WRONG_SQUARE = {
    "ignores the dtype": lambda budget, dtype: math.isqrt(budget),
    "rounds up": lambda budget, dtype: math.ceil(math.sqrt(budget / dtype.itemsize)),
    "off by one, too small": lambda budget, dtype: max(0, math.isqrt(budget // dtype.itemsize) - 1),
    "returns a float": lambda budget, dtype: math.sqrt(budget / dtype.itemsize),
    "assumes float32": lambda budget, dtype: math.isqrt(budget // 4),
}


@pytest.mark.parametrize("wrong", WRONG_NBYTES.values(), ids=WRONG_NBYTES.keys())
def test_nb00_tensor_nbytes_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL tensor_nbytes"):
        nb00.check_tensor_nbytes(wrong)


@pytest.mark.parametrize("wrong", WRONG_SQUARE.values(), ids=WRONG_SQUARE.keys())
def test_nb00_largest_square_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL largest_square.*\n.*hint: "):
        nb00.check_largest_square(wrong)


def test_a_failure_shows_its_message_not_a_traceback():
    err = ExerciseFailed("FAIL x: wrong\n     hint: think")
    assert err._render_traceback_() == ["FAIL x: wrong", "     hint: think"]
