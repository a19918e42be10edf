"""Exercise checks of notebook 02: the answers its checks keep sealed are the right ones, its check module
does not hold them in plain form, and the timings exercise 02.1 is checked on look as its task says.

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.
"""

import inspect

import numpy as np
import pytest

from conftest import host
from utils.exercises import nb02, nb03
from utils.exercises.answers import nb02 as answers02
from utils.exercises.answers import nb03 as answers03


@host
@pytest.mark.parametrize("case", nb02.CROSSOVER_CASES, ids=lambda case: case[0])
def test_each_crossover_digest_is_the_answer_of_its_case(case):
    what, layer, cpu, gpu, link, max_batch, sealed = case
    answer = answers02.crossover_batch_loop(layer, cpu, gpu, link, max_batch)
    assert nb02._sealed(answer) == sealed, f"{what}: the plain answer is {answer}"


@host
@pytest.mark.parametrize("case", nb02.LOOP_CASES, ids=lambda case: case[0])
def test_each_loop_digest_is_the_answer_of_its_case(case):
    what, kernels, launch, sealed = case
    assert nb02._sealed(nb02._ns(answers02.loop_time_closed_form(kernels, launch))) == sealed, what


@host
@pytest.mark.parametrize("module, answers", [
    (nb02, [answers02.loop_time_reference(kernels, launch) for _, kernels, launch, _ in nb02.LOOP_CASES]),
    (nb03, [f"{span}".replace(" ", "") for span in answers03.PROGRAM_ANSWER.values()]),
], ids=["nb02", "nb03"])
def test_a_check_module_holds_no_answer_in_plain_form(module, answers):
    """Neither the answers' values nor a function that computes them: a student may open the module."""
    source = inspect.getsource(module).replace(" ", "")
    shown = [a for a in answers if isinstance(a, str) and a in source]
    assert shown == [], f"{module.__name__} shows the answers {shown}"
    for name, fn in vars(module).items():
        if inspect.isfunction(fn) and fn.__module__ == module.__name__ and len(inspect.signature(fn).parameters) == 2:
            try:
                got = [fn(list(kernels), launch) for _, kernels, launch, _ in nb02.LOOP_CASES]
            except Exception:  # noqa: BLE001 -- not a function of (kernels, launch): it computes no answer
                got = None
            assert got != pytest.approx(answers), f"{module.__name__}.{name} computes loop_time's answers"


@host
@pytest.mark.parametrize("case", nb02.WARMUP_CASES, ids=lambda case: case[0])
def test_the_warmup_series_look_as_the_task_says(case):
    """Its warm-up ends with slow calls close together and takes at most half of the calls; later slow or
    fast calls are alone (ten calls apart at least)."""
    _, length, steady_calls, pattern, seed = case
    times = nb02.warmup_series(length, steady_calls, pattern, seed)
    steady = np.median(times[length:])
    assert times.size == length + steady_calls and length <= times.size // 2
    assert (times[max(0, length - 5):length] > 1.25 * steady).all(), "the warm-up's last five calls are slow"
    odd = np.flatnonzero(np.abs(np.log(times[length:] / steady)) > np.log(1.2))
    assert odd.size and np.diff(odd).min(initial=99) >= 10, "outliers in the steady calls are alone"
    k, typical = answers02.rolling_median_end(times)
    assert length - nb02.EARLY <= k <= length + nb02.LATE and abs(typical / steady - 1) < 0.02
