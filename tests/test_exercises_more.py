"""The exercise checks' generated wrong answers (a solution that leaves a setting changed) and their CPU parts' answers:
tests of tests/test_exercises.py's registry, in a module of their own so that pytest-xdist (`--dist loadscope`, one
worker per module) runs them beside that module's tests rather than after them (2026-11-30: the suite went past 600 s
with them all in one module)."""
import re
import zlib

import numpy as np
import pytest
import torch
from test_exercises import (
    CPU_PART,
    REGISTRY,
    SIDE_BY_SIDE,
    _cpu_cases,
    _left_for_a_gpu,
    _on_this_cpu,
    _unmet,
    _wrong_on_cpu,
)

from conftest import cpu_only, definitions_of, verdict_only
from tools.course import SOLUTIONS
from utils.exercises import ExerciseFailed

LEFT_CHANGED = {
    "np.set_printoptions(precision=2)": lambda: np.set_printoptions(precision=2),
    "torch.set_grad_enabled(False)": lambda: torch.set_grad_enabled(False),
    "torch.set_default_dtype(torch.float64)": lambda: torch.set_default_dtype(torch.float64),
    "warnings.simplefilter('ignore')": lambda: __import__("warnings").simplefilter("ignore"),
    # Round 24's adversaries (02, 05) left these changed, and passed checks that watched a hand-picked list
    "gc.disable()": lambda: __import__("gc").disable(),
    "torch.set_flush_denormal(True)": lambda: torch.set_flush_denormal(True),
    # another count than the caller's (one that is 1 already would change nothing)
    "torch.set_num_threads(1)": lambda: torch.set_num_threads(1 if torch.get_num_threads() != 1 else 2),
    "torch.backends.cudnn.benchmark = True": lambda: setattr(torch.backends.cudnn, "benchmark", True),
    "np.seterr(all='ignore')": lambda: np.seterr(all="ignore"),
}


def _leaving(solution, change):
    def answer(*args, **kwargs):
        result = solution(*args, **kwargs)
        change()
        return result
    return answer


# Each check is given the first four leftovers, and two of the others chosen by its key (each of the five later ones
# then reaches about nine checks): all nine for every check cost about 20 s more of the suite's time (2026-11-30),
# and every check watches the same registry (settings.EVERY), so a check that misses one misses it through its list.
FIRST_LEFTOVERS = 4


def _leftovers(ex) -> list[str]:
    later = list(LEFT_CHANGED)[FIRST_LEFTOVERS:]
    start = zlib.crc32(ex.key.encode()) % len(later)
    return [*list(LEFT_CHANGED)[:FIRST_LEFTOVERS], later[start], later[(start + 1) % len(later)]]


@pytest.mark.parametrize("ex, change", [pytest.param(ex, change, marks=_unmet(ex), id=f"{ex.key}: {change}")
                                        for ex in REGISTRY if ex.key not in SIDE_BY_SIDE
                                        and (not ex.gpu or CPU_PART.get(ex.key)) for change in _leftovers(ex)])
def test_every_check_fails_its_solution_when_it_leaves_a_setting_changed(ex, change):
    from utils.exercises import settings

    (solution,) = definitions_of(SOLUTIONS / f"{ex.notebook}.ipynb", [ex.name])  # its cells may seed, set TF32
    before = settings.read(settings.SETTINGS)
    try:
        with verdict_only():
            ex.check(_leaving(solution, LEFT_CHANGED[change]))
        error = None
    except Exception as raised:  # noqa: BLE001 -- judged below
        error = raised
    finally:
        left = settings.put_back(before)
    assert isinstance(error, ExerciseFailed), f"the check did not FAIL an answer that leaves {change}: {error!r}"
    assert re.match(r"^FAIL .+\n     hint: \S", str(error)), error
    # (the float32 matmul precision may read "ieee" where it read "none": TF32 off either way, settings.tf32_restore)
    left = [name for name in left if name not in settings.PRECISIONS]
    assert not left, f"the check left {left} changed after it FAILed"



@cpu_only
@pytest.mark.parametrize("ex, kind, what, answer", list(_cpu_cases()))
def test_without_a_gpu_what_a_cpu_can_see_fails_and_the_rest_is_left_for_a_gpu(ex, kind, what, answer):
    """A wrong answer whose mistake a CPU shows (WRONG_ON_CPU), or a malformed one, FAILs with a hint;
    any other answer is left for a GPU, never a PASS, never a FAIL."""
    outcome = _on_this_cpu(ex, answer)
    fails = (kind == "wrong" and what in _wrong_on_cpu(ex)) or (kind == "malformed" and CPU_PART[ex.key])
    if fails:
        assert isinstance(outcome.error, ExerciseFailed), f"not rejected on the CPU: {outcome}"
        assert re.match(rf"^FAIL {re.escape(ex.title)}: .+\n     hint: \S", str(outcome.error)), outcome.error
    else:
        _left_for_a_gpu(ex, outcome)


def test_reading_every_setting_runs_no_method_of_matplotlibs_rcparams(monkeypatch):
    """Every check reads settings.EVERY around each call of the answer, matplotlib's rcParams among them.  That read
    must not go through RcParams' own methods: its getter of "backend" imports pyplot (which a student's first plot
    should do, not a check), and copying through them made a read about 80 times slower (dict.copy does that for a
    dict subclass that defines __iter__; measured 2026-11-30)."""
    import matplotlib

    from utils.exercises import settings

    called = []
    rc = type(matplotlib.rcParams)
    for name in ("__getitem__", "__iter__", "keys", "items"):
        original = getattr(rc, name)
        monkeypatch.setattr(rc, name, lambda self, *args, _name=name, _original=original: (
            called.append(_name), _original(self, *args))[1])
    before = settings.read(settings.EVERY)
    assert settings.read(settings.EVERY) == before
    assert not called, f"a settings read called RcParams.{called[0]}"
