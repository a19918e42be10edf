"""Exercises: generated from the solutions, found by their cell tags, and each registered check
accepts the solution, says TODO for the stub, rejects its typical wrong answers and accepts its
other right answers (one test for them all, driven by `utils.exercises.registry()`).

A new exercise needs no test here: register its check next to it in utils/exercises/nbNN.py and
put its wrong answers in utils/exercises/answers/nbNN.py.
"""

import ast
import asyncio
import collections
import collections.abc
import contextlib
import dataclasses
import importlib
import io
import random
import re
import shutil
import sys
import threading
import types
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import nbformat
import numpy as np
import pytest
import torch
from zygote import answers_forked

import utils
from conftest import AT_ONCE, ROOT, cpu_only, definitions_of, gpu, host, named, untimed, verdict_only
from tools import make_exercises
from tools.course import EXERCISES, SOLUTIONS, exercises_name, lecture_name, notebooks, read
from tools.make_exercises import (
    CHECK_TAG,
    DISCUSSION_TAG,
    EXERCISE_TAG,
    IMPORTS_TAG,
    QUESTION_TAG,
    STUB_LINE,
    cells_tagged,
    check_calls,
)
from tools.pytest_plugin import params_of
from utils.exercises import (
    STUB_MESSAGE,
    Checker,
    Exercise,
    ExerciseFailed,
    attempt,
    exercise,
    inside_check,
    is_stub,
    register,
    registry,
)

REGISTRY = registry()


def ids(path):
    return f"{path.parent.name}/{path.name}"


# ---------------------------------------------------------------- every registered exercise
# The solutions pass: nbval runs every check cell of solutions/ (a check that fails raises, and fails
# the cell).  The stubs say TODO: the Run All test below reads every check cell of exercises/.  Here:
# every other right answer passes, every wrong answer fails with a hint.
def _unmet(ex: Exercise) -> list:
    """A skip mark where the check needs what this machine lacks besides a GPU (`requires`: Triton, say)."""
    from utils.cells import missing

    reason = missing(list(ex.requires)) if ex.requires else None
    return [pytest.mark.skip(reason=reason)] if reason else []


def _unmet_named(what: str) -> bool:
    from utils.cells import missing

    return bool(missing([what]))


def _known_misjudged(ex: Exercise, what: str) -> list:
    """A strict xfail on a GPU for an answer listed in its answers module's MISJUDGED_ON_A_GPU: a gap the GPU showed
    and no session has fixed yet.  Strict, so that the check's fix fails the test until the entry is removed."""
    reason = ex._answers("MISJUDGED_ON_A_GPU").get(what)
    return [pytest.mark.xfail(utils.has_cuda(), reason=f"known on a GPU: {reason}", strict=True)] if reason else []


def _known_misjudged_on_a_cpu(ex: Exercise, what: str) -> list:
    """For an answer listed in its answers module's MISJUDGED_ON_A_CPU (a gap a CPU showed, no session has fixed yet):
    a strict xfail where there is no GPU (where it was measured, so that the check's fix fails the test until the entry
    is removed), and a non-strict one on a GPU (not yet judged there) unless MISJUDGED_ON_A_GPU says what one does."""
    reason = ex._answers("MISJUDGED_ON_A_CPU").get(what)
    if not reason:
        return []
    marks = [pytest.mark.xfail(not utils.has_cuda(), reason=f"known on a CPU: {reason}", strict=True)]
    if what not in ex._answers("MISJUDGED_ON_A_GPU"):
        marks.append(pytest.mark.xfail(utils.has_cuda(), reason=f"misjudged on a CPU, not yet judged on a GPU: "
                                       f"{reason}", strict=False))
    return marks


def _needs_a_gpu(ex: Exercise, what: str) -> list:
    """For an answer of a check that runs on a CPU too, which itself needs a GPU to run at all (a CUDA stream, CuPy:
    its answers module's NEEDS_A_GPU names it, with what else it needs): the marks that run it on a GPU only."""
    from utils.cells import missing

    needs = ex._answers("NEEDS_A_GPU")
    if ex.gpu or what not in needs:
        return []
    reason = missing(list(needs[what])) if needs[what] else None
    return [gpu] + ([pytest.mark.skip(reason=reason)] if reason else [])


def _cases():
    for ex in REGISTRY:
        marks = ([gpu] if ex.gpu else []) + _unmet(ex)
        for what, answer in ex.wrong.items():
            yield pytest.param(ex, "wrong", what, answer,
                               marks=marks + _needs_a_gpu(ex, what) + _known_misjudged(ex, what)
                               + _known_misjudged_on_a_cpu(ex, what),
                               id=f"{ex.key}: wrong: {what}")
        for what, answer in ex.also_right.items():
            yield pytest.param(ex, "right", what, answer,
                               marks=marks + _needs_a_gpu(ex, what) + _known_misjudged(ex, what)
                               + _known_misjudged_on_a_cpu(ex, what),
                               id=f"{ex.key}: also right: {what}")


def test_every_answer_that_needs_a_gpu_is_an_answer_of_its_check():
    """NEEDS_A_GPU names answers by their labels: a label that matches none (renamed, removed) marks nothing."""
    stray = [f"{ex.key}: {what}" for ex in REGISTRY for what in ex._answers("NEEDS_A_GPU")
             if what not in ex.wrong and what not in ex.also_right]
    assert not stray, f"NEEDS_A_GPU lists answers that no WRONG or ALSO_RIGHT has: {stray}"


def test_every_answer_known_misjudged_on_a_gpu_is_an_answer_of_its_check():
    """MISJUDGED_ON_A_GPU names answers by their labels: a label that matches none (renamed, removed) marks nothing."""
    stray = [f"{ex.key}: {what}" for ex in REGISTRY for what in ex._answers("MISJUDGED_ON_A_GPU")
             if what not in ex.wrong and what not in ex.also_right]
    assert not stray, f"MISJUDGED_ON_A_GPU lists answers that no WRONG or ALSO_RIGHT has: {stray}"


def test_every_answer_known_misjudged_on_a_cpu_is_an_answer_of_its_check():
    """MISJUDGED_ON_A_CPU names answers by their labels: a label that matches none (renamed, removed) marks nothing."""
    stray = [f"{ex.key}: {what}" for ex in REGISTRY for what in ex._answers("MISJUDGED_ON_A_CPU")
             if what not in ex.wrong and what not in ex.also_right]
    assert not stray, f"MISJUDGED_ON_A_CPU lists answers that no WRONG or ALSO_RIGHT has: {stray}"


# Checks whose every answer runs in fresh processes (scripts that crash on purpose, a child process
# that may end in a device-side assert; `fresh_processes` in their registration): nothing but their
# output is shared, so their answers are checked side by side, ahead of the tests that read the results.
# Every other check runs alone, as a student's would: they time things, or switch global modes (sync
# debug mode, determinism).
SIDE_BY_SIDE = {ex.key for ex in REGISTRY if ex.fresh_processes}

# GPU checks that, without a GPU, check what a CPU can, and say what needs a GPU (`cpu_checks` in their
# registration: how many checks their CPU part makes; 0: nothing runs on a CPU, and the check says why).
# Their wrong answers that a CPU can see are WRONG_ON_CPU in utils/exercises/answers/nbNN.py.
CPU_PART = {ex.key: ex.cpu_checks for ex in REGISTRY if ex.gpu and ex.cpu_checks is not None}
CPU_PART_EXERCISES = [ex for ex in REGISTRY if ex.key in CPU_PART]
# ...those whose CPU part can run here (Triton's interpreter, for one, needs Triton installed)
CPU_PART_HERE = [pytest.param(ex, marks=_unmet(ex), id=ex.key) for ex in CPU_PART_EXERCISES]


@dataclass
class Outcome:
    printed: str
    error: BaseException | None


class _PrintsOfEachThread(io.TextIOBase):
    """sys.stdout for the threads below: what each thread prints goes to its own buffer."""

    def __init__(self, real):
        self.real, self.buffers = real, {}

    def write(self, text):
        return self.buffers.get(threading.get_ident(), self.real).write(text)

    def flush(self):
        self.real.flush()


def _outcome(prints, check, answer) -> Outcome:
    buffer = prints.buffers[threading.get_ident()] = io.StringIO()
    try:
        check(answer)
    except Exception as error:  # noqa: BLE001 -- the test that reads the outcome decides what was right
        return Outcome(buffer.getvalue(), error)
    return Outcome(buffer.getvalue(), None)


def _side_by_side(item) -> bool:  # the two tests that read side_by_side_outcomes, for a SIDE_BY_SIDE check
    ex = params_of(item).get("ex")
    return (getattr(item, "originalname", None) in ("test_exercise", "test_no_check_crashes_on_a_malformed_answer")
            and getattr(ex, "key", None) in SIDE_BY_SIDE and (utils.has_cuda() or not ex.gpu))


@untimed(needed_by=_side_by_side)
def side_by_side_outcomes(items):
    """The outcome of every answer of the SIDE_BY_SIDE checks the session tests, run at once on a few threads."""
    keys = {params_of(item)["ex"].key for item in items}
    cases = [(ex, what, answer) for ex in REGISTRY if ex.key in keys
             for what, answer in (ex.wrong | ex.also_right | _malformed(ex)).items()]
    prints = _PrintsOfEachThread(sys.stdout)
    # without CUDA, 05's answers run their cells in children forked from one Python that imported torch, not in fresh
    # ones (tests/zygote.py: the same runs, without about 1.5 s of CPU for torch's import in each of ~25 processes)
    forked = (answers_forked(importlib.import_module("utils.exercises.answers.nb05"))
              if not utils.has_cuda() and any(ex.notebook.startswith("05") for ex, _, _ in cases)
              else contextlib.nullcontext())
    with contextlib.redirect_stdout(prints), verdict_only(), forked, ThreadPoolExecutor(AT_ONCE) as pool:
        futures = {(ex.key, what): pool.submit(_outcome, prints, ex.check, answer) for ex, what, answer in cases}
        return {key: future.result() for key, future in futures.items()}


_ONE_ANSWER = """
import sys
from importlib import import_module

from utils.exercises import ExerciseFailed

nb, check, table, what = sys.argv[1:]
answer = getattr(import_module(f"utils.exercises.answers.{nb}"), table)[check][what]
try:
    getattr(import_module(f"utils.exercises.{nb}"), check)(answer)
except ExerciseFailed as failed:
    print(failed)
"""


def _in_a_process_of_its_own(ex: Exercise, kind: str, what: str) -> Outcome:
    """The check run on one answer in a fresh Python process, for an answer that ends the CUDA context of the process
    it runs in (ENDS_THE_PROCESS_ON_A_GPU in its answers module): the verdict it printed, as an Outcome."""
    nb, check = f"nb{ex.notebook[:2]}", ex.check.__name__
    table = "WRONG" if kind == "wrong" else "ALSO_RIGHT"
    done = utils.run_process(_ONE_ANSWER, nb, check, table, what, timeout=600)
    printed = done.stdout
    failed = re.search(rf"^FAIL {re.escape(ex.title)}: .*", printed, re.MULTILINE | re.DOTALL)
    if failed:
        return Outcome(printed[:failed.start()], ExerciseFailed(failed.group(0).rstrip()))
    return Outcome(printed, None if done.returncode == 0 else RuntimeError(done.stderr[-2000:]))


@pytest.mark.parametrize("ex, kind, what, answer", list(_cases()))
def test_exercise(ex: Exercise, kind, what, answer, request, capsys):
    """Every other right answer PASSes; every wrong answer FAILs with a hint (and no traceback of its
    own: ExerciseFailed)."""
    if ex.key in SIDE_BY_SIDE:
        outcome = request.getfixturevalue("side_by_side_outcomes")[ex.key, what]
    elif utils.has_cuda() and what in ex._answers("ENDS_THE_PROCESS_ON_A_GPU"):
        outcome = _in_a_process_of_its_own(ex, kind, what)
    else:
        # The global generators start each test from a state of its own, fixed by its id: an answer that draws from
        # them unseeded (a right bootstrap, 02) is judged on the same draws in every run and order; without it, one
        # CI run in many drew a resample the check's tolerance refused (2026-11-29).  A seed no answer uses.
        seed = zlib.crc32(request.node.nodeid.encode())
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        try:
            with verdict_only():
                ex.check(answer)
            outcome = Outcome(capsys.readouterr().out, None)
        except Exception as error:  # noqa: BLE001 -- judged below, as for the answers run side by side
            outcome = Outcome(capsys.readouterr().out, error)
    if kind == "wrong":
        assert isinstance(outcome.error, ExerciseFailed), f"a wrong answer was not rejected: {outcome}"
        assert re.match(rf"^FAIL {re.escape(ex.title)}: .+\n     hint: \S", str(outcome.error)), outcome.error
        return
    if outcome.error is not None:
        raise outcome.error
    lines = outcome.printed.splitlines()
    assert lines and lines[-1].startswith(f"PASS {ex.title}: "), lines
    assert not any(line.startswith(("FAIL", "TODO")) for line in lines)


# ---------------------------------------------------------------- the registry matches the notebooks
def _check_cells():
    """(notebook, module, check, argument, starts with %%requires cuda) of every check cell of solutions/."""
    for path in notebooks(SOLUTIONS):
        for cell in cells_tagged(read(path), CHECK_TAG):
            calls = check_calls(cell)
            assert len(calls) == 1, f"{path.name}: a check cell calls {len(calls)} checks:\n{cell.source}"
            first = cell.source.splitlines()[0]
            yield (path.stem, *calls[0], first.startswith("%%requires") and "cuda" in first)


MALFORMED = {"None": lambda *args, **kwargs: None, "a string": lambda *args, **kwargs: "x",
             "NaN": lambda *args, **kwargs: float("nan"), "an empty tensor": lambda *args, **kwargs: torch.empty(0),
             "a pair of None": lambda *args, **kwargs: (None, None), "an empty dict": lambda *args, **kwargs: {}}


# Checks that need a GPU, or a fresh process, cost seconds each: they get two malformed answers, the others all.
SHORT_MALFORMED = ("None", "an empty dict")


def _malformed(ex: Exercise) -> dict:
    """The malformed answers a check gets, by the name its outcome is kept under."""
    short = ex.gpu or ex.key in SIDE_BY_SIDE
    return {f"malformed: {what}": answer for what, answer in MALFORMED.items() if what in SHORT_MALFORMED or not short}


@pytest.mark.parametrize("ex, what", [pytest.param(ex, what, marks=([gpu] if ex.gpu else []) + _unmet(ex),
                                                  id=f"{ex.key}: {what}")
                                      for ex in REGISTRY for what in MALFORMED
                                      if f"malformed: {what}" in _malformed(ex)])
def test_no_check_crashes_on_a_malformed_answer(ex, what, request):
    """Whatever a student's function returns (None, a string, NaN, an empty tensor, a pair of None, an
    empty dict), the check FAILs with a hint: it never crashes with an error of its own."""
    if ex.key in SIDE_BY_SIDE:  # run with the other answers of its check, side by side
        error = request.getfixturevalue("side_by_side_outcomes")[ex.key, f"malformed: {what}"].error
    else:
        try:
            ex.check(MALFORMED[what])
            error = None
        except Exception as raised:  # noqa: BLE001 -- judged below
            error = raised
    assert isinstance(error, ExerciseFailed), f"the check did not FAIL with a hint: {error!r}"
    assert re.match(r"^FAIL .+\n     hint: \S", str(error)), error


# A wrong answer no one listed, made from the course's own solution: it returns the right values, and leaves one
# process-wide setting changed for its caller (round 23's adversaries found four checks that watched none: 00's,
# 04's as_meant, 07's predicted_speedup, and a short list in 09's).  Every check a CPU judges must FAIL it, with a hint,
# on the first call that leaves it (a GPU check, in the part a CPU runs): generated from every solution, so a check
# written later is held to it too.
@host
def test_every_check_cell_is_registered_and_every_registered_check_has_its_cell():
    cells = list(_check_cells())
    keys = [f"{notebook}:{check}" for notebook, _, check, _, _ in cells]
    assert [k for k, n in collections.Counter(keys).items() if n > 1] == [], "a check is called by two cells"
    registered = {ex.key: ex for ex in REGISTRY}
    assert sorted(set(keys) - set(registered)) == [], "check cells whose check is not registered"
    assert sorted(set(registered) - set(keys)) == [], "registered checks that no check cell calls"
    for notebook, module, check, argument, needs_gpu in cells:
        ex = registered[f"{notebook}:{check}"]
        assert (ex.module, ex.name, ex.gpu and ex.key not in CPU_PART) == (module, argument, needs_gpu), (
            f"{ex.key} is registered as {ex.module}, {ex.name}, gpu={ex.gpu}, but its cell calls "
            f"{module}.{check}({argument}){' under %%requires cuda' if needs_gpu else ''}")


@host
@pytest.mark.parametrize("ex", REGISTRY, ids=lambda ex: ex.key)
def test_each_registered_exercise_is_a_tagged_function_of_its_notebooks(ex):
    for path in (SOLUTIONS / f"{ex.notebook}.ipynb", EXERCISES / exercises_name(f"{ex.notebook}.ipynb")):
        defined = {node.name for cell in cells_tagged(read(path), EXERCISE_TAG)
                   for node in ast.parse(cell.source).body
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        assert ex.name in defined, f"no cell tagged `{EXERCISE_TAG}` of {ids(path)} defines {ex.name}"
        definitions_of(path, [ex.name])  # its imports suffice to define it


@host
@pytest.mark.parametrize("ex", REGISTRY, ids=lambda ex: ex.key)
def test_each_registered_exercise_has_wrong_answers(ex):
    assert ex.wrong, f"{ex.key}: add its typical wrong answers to utils/exercises/answers/{ex.module}.py"
    assert ex.notebook.startswith(ex.module[2:] + "_"), f"{ex.key} is registered by {ex.module}"


@host
def test_the_answers_are_for_registered_checks():
    import importlib.util

    checks = collections.defaultdict(set)
    for ex in REGISTRY:
        checks[ex.module].add(ex.check.__name__)
    for module, names in checks.items():
        if importlib.util.find_spec(f"utils.exercises.answers.{module}") is None:
            continue  # test_each_registered_exercise_has_wrong_answers says so
        answers = importlib.import_module(f"utils.exercises.answers.{module}")
        for kind in ("WRONG", "ALSO_RIGHT"):
            assert set(getattr(answers, kind, {})) <= names, f"answers/{module}.py {kind} names unknown checks"


@host
def test_two_exercises_cannot_share_a_key():
    ex = REGISTRY[0]
    with pytest.raises(ValueError, match=f"two exercises registered as {ex.key}"):
        register(dataclasses.replace(ex, name=f"{ex.name}_twin"))
    register(ex)  # the same exercise again (its module imported twice) is no conflict
    assert registry().count(ex) == 1


# ---------------------------------------------------------------- TODO means the stub, and only the stub
def _stub():
    raise NotImplementedError(STUB_MESSAGE)


@host
def test_the_generator_writes_the_checks_stub():
    stub = make_exercises.strip_solutions("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
    namespace: dict = {}
    exec(stub, namespace)  # noqa: S102 (the generated stub, run)
    with pytest.raises(NotImplementedError) as raised:
        namespace["f"]()
    assert is_stub(raised.value)


@host
def test_the_stub_says_todo(capsys):
    with exercise("f"):
        _stub()
    assert capsys.readouterr().out == "TODO f: not done yet (it still raises NotImplementedError)\n"


@pytest.mark.parametrize("error", [NotImplementedError("The operator 'aten::foo' is not implemented for 'MPS'"),
                                   NotImplementedError(), NotImplementedError(STUB_MESSAGE, "more")],
                         ids=["PyTorch's", "bare", "other arguments"])
@host
def test_another_not_implemented_error_reaches_the_student(error, capsys):
    """A NotImplementedError from PyTorch inside an answer is a real error, not "not done yet"."""
    with pytest.raises(NotImplementedError) as raised, exercise("f"):
        raise error
    assert raised.value is error
    with pytest.raises(NotImplementedError) as raised, attempt():
        raise error
    assert raised.value is error
    assert capsys.readouterr().out == ""


@host
def test_a_check_lets_a_foreign_not_implemented_error_through():
    """Only the stub's NotImplementedError is a TODO: another one (PyTorch's, an operator not implemented) reaches
    the student, raised as it is or named in a FAIL (nb00 gives it the hint of a tensor that PyTorch cannot make:
    filling a float4 tensor raises it)."""
    from utils.exercises import nb00

    def storage_nbytes(shape, stride, offset, dtype):
        raise NotImplementedError("The operator 'aten::foo' is not implemented")

    with pytest.raises((NotImplementedError, ExerciseFailed), match="aten::foo"):
        nb00.check_storage_nbytes(storage_nbytes)


@host
def test_attempt_names_the_unfinished_function_and_stops_the_block(capsys):
    def largest_square(budget, dtype):
        raise NotImplementedError(STUB_MESSAGE)

    ran = []
    with attempt():
        largest_square(1, None)
        ran.append(True)
    assert ran == []
    assert capsys.readouterr().out == "TODO largest_square: not done yet (it still raises NotImplementedError)\n"
    with attempt():
        ran.append(True)
    assert ran == [True] and capsys.readouterr().out == ""
    with pytest.raises(ZeroDivisionError), attempt():
        raise ZeroDivisionError


@host
def test_a_failure_shows_its_message_not_a_traceback():
    err = ExerciseFailed("FAIL x: wrong\n     hint: think")
    assert err._render_traceback_() == ["FAIL x: wrong", "     hint: think"]


def _expect_saving(yours_times, saving_ms=4.0):
    """Run Checker.expect_saving with a baseline of 10 ms and `yours` taking the given times in turn."""
    times = iter([10.0, 10.0, *yours_times])  # the baseline's two runs, then yours
    tries = []
    checker = Checker("overlap")
    checker.expect_saving(lambda fn: (fn(), next(times))[1], lambda: None, lambda: tries.append(1), saving_ms,
                          ("one at a time", "the copies"), "overlap them")
    return len(tries) - 1  # the warm-up call is not a try


@host
def test_expect_saving_needs_half_the_possible_saving_and_forgives_a_spoilt_run():
    assert _expect_saving([7.9]) == 1  # saved 2.1 of 4 ms: passes on the first try
    assert _expect_saving([12.0, 7.0]) == 2  # one run spoilt by a busy host, then fast enough
    with pytest.raises(ExerciseFailed, match="took 8.50 ms; one at a time takes 10.00 ms, and overlapping the "
                                             "copies saves up to 4.00 ms"):
        _expect_saving([8.5, 8.5, 8.5])  # a wrong answer is slow every time: saved 1.5 of 4 ms


# ---------------------------------------------------------------- Run All on an untouched exercise notebook
@untimed(needed_by=named("test_run_all_on_an_untouched_exercise_ends_without_a_traceback"))
def untouched_runs(items):
    """Every exercise notebook the session tests, run top to bottom (Run All) as a student first does,
    several at a time: they share nothing but the machine, and their checks of the stubs measure nothing."""
    from nbclient import NotebookClient

    async def run_all(paths, at_once):
        gate = asyncio.Semaphore(at_once)

        async def run(path):
            nb = read(path)
            async with gate:
                await NotebookClient(nb, kernel_name="python3", timeout=600, allow_errors=True,
                                     resources={"metadata": {"path": str(EXERCISES)}}).async_execute()
            return path, nb

        return dict(await asyncio.gather(*(run(p) for p in paths)))

    paths = [params_of(item)["path"] for item in items]
    return asyncio.run(run_all(paths, at_once=AT_ONCE))


@pytest.mark.parametrize("path", notebooks(EXERCISES), ids=ids)
def test_run_all_on_an_untouched_exercise_ends_without_a_traceback(path, untouched_runs):
    """What a student sees first: every cell runs; each check says TODO, the same line for every
    check (or, on a machine without a GPU, that its GPU cell was skipped)."""
    nb = untouched_runs[path]
    errors = [f"cell {n}: {out.ename}: {out.evalue}" for n, cell in enumerate(nb.cells)
              for out in cell.get("outputs", []) if out.output_type == "error"]
    assert errors == []
    registered = {ex.key: ex for ex in REGISTRY}
    for cell in cells_tagged(nb, CHECK_TAG):
        ((_, check, _),) = check_calls(cell)
        text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
        key = f"{lecture_name(path.name).removesuffix('.ipynb')}:{check}"  # the registry's notebook: NN_topic
        todo = f"TODO {registered[key].title}: not done yet (it still raises NotImplementedError)"
        needs = registered[key].requires  # e.g. Triton: where it is missing, the check says so
        skipped = (text.startswith("skipped (needs cuda)") and not utils.has_cuda()) or any(
            text.startswith(f"skipped (needs {what})") and _unmet_named(what) for what in needs)
        assert text.splitlines() == [todo] or skipped, f"{cell.source}\n-> {text}"


# ---------------------------------------------------------------- the generator and the tags
@host
def test_exercises_are_up_to_date():
    assert make_exercises.problems() == []


@host
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
    assert make_exercises.stale(solutions, exercises) == [
        f"{exercises_name(nb_path.name)}: differs from what its solution gives"]


@host
def test_strip_solutions_keeps_indentation_and_the_rest():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n\nprint(f)"
    assert make_exercises.strip_solutions(source) == (
        f'def f(x):\n    # TODO: your code here\n    {STUB_LINE}\n\nprint(f)'
    )


@host
def test_unclosed_solution_block_is_an_error():
    with pytest.raises(ValueError, match="END SOLUTION"):
        make_exercises.strip_solutions("### BEGIN SOLUTION\nx = 1")


@host
@pytest.mark.parametrize("path", notebooks(EXERCISES), ids=ids)
def test_exercises_have_no_outputs_and_no_solutions(path):
    nb = read(path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            assert "BEGIN SOLUTION" not in cell.source
    assert "course" not in nb.metadata


def _notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


SOLUTION_CELL = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION"


@host
def test_the_generator_tags_solutions_and_checks_and_the_exercise_keeps_the_tags(tmp_path):
    nb = _notebook("from utils.exercises import nb00", SOLUTION_CELL, "%%requires cuda\nnb00.check_f(f)", "print(1)")
    nb.cells[0].metadata["tags"] = [IMPORTS_TAG]
    assert make_exercises.tag_problems(nb) == ["cell 1: solution markers without the tag `exercise`",
                                              "cell 2: calls a check without the tag `exercise-check`"]
    assert make_exercises.add_tags(nb) and not make_exercises.add_tags(nb)
    assert [c.metadata.get("tags") for c in nb.cells] == [[IMPORTS_TAG], [EXERCISE_TAG], [CHECK_TAG], None]
    assert make_exercises.tag_problems(nb) == []
    exercise_nb = make_exercises.exercise_from(nb, tmp_path / "00_x.ipynb")
    assert [c.metadata.get("tags") for c in exercise_nb.cells] == [c.metadata.get("tags") for c in nb.cells]
    assert STUB_LINE in exercise_nb.cells[1].source
    assert make_exercises.tag_problems(exercise_nb, solution=False) == []


@host
def test_an_explanation_of_the_answer_stays_in_the_solutions(tmp_path):
    nb = _notebook("import math", SOLUTION_CELL, "nb00.check_f(f)")
    nb.cells[0].metadata["tags"] = [IMPORTS_TAG]
    make_exercises.add_tags(nb)
    nb.cells.insert(3, nbformat.v4.new_markdown_cell("Why it works: f returns x."))
    assert make_exercises.tag_problems(nb) == [
        ("cell 3: text right after a check, untagged: tag it `discussion` if it explains the answer (left out of "
         "exercises/), `question` if it is for the student")]
    nb.cells[3].metadata["tags"] = [DISCUSSION_TAG]
    nb.cells.append(nbformat.v4.new_markdown_cell("Now try it on a GPU."))
    nb.cells[4].metadata["tags"] = [QUESTION_TAG]
    assert make_exercises.tag_problems(nb) == []
    exercise_nb = make_exercises.exercise_from(nb, tmp_path / "00_x.ipynb")
    assert [c.source for c in exercise_nb.cells if c.cell_type == "markdown"] == ["Now try it on a GPU."]
    assert make_exercises.tag_problems(exercise_nb, solution=False) == []
    exercise_nb.cells.append(nb.cells[3])  # a discussion that reached an exercise notebook
    assert "cell 4: an exercise notebook holds a `discussion` cell (the answer explained)" in \
        make_exercises.tag_problems(exercise_nb, solution=False)


@pytest.mark.parametrize("cells, tags, problem", [
    ((SOLUTION_CELL, "def g():\n    return 1"), [[IMPORTS_TAG], [EXERCISE_TAG], [EXERCISE_TAG]],
     "cell 2: tagged `exercise` but holds no solution markers"),
    ((SOLUTION_CELL, "print(f(1))"), [[IMPORTS_TAG], [EXERCISE_TAG], [CHECK_TAG]],
     "cell 2: a check cell calls one check, as `nbNN.check_name(function)` on a line of its own (found 0 calls)"),
    ((SOLUTION_CELL, "nb00.check_f(f); nb00.check_g(f)"), [[IMPORTS_TAG], [EXERCISE_TAG], [CHECK_TAG]],
     "cell 2: a check cell calls one check, as `nbNN.check_name(function)` on a line of its own (found 2 calls)"),
    ((SOLUTION_CELL,), [[], [EXERCISE_TAG]],
     "0 cells tagged `imports`: a notebook with exercises has one, the cell that imports what they need"),
    (("%pip install x",), [[IMPORTS_TAG], [IMPORTS_TAG]],
     "cell 1: tagged ['imports'] but holds IPython syntax (% or !): the tests run these cells as plain Python"),
], ids=["exercise tag without markers", "check tag without a check", "two checks in a cell", "no imports cell",
        "magic in a definition cell"])
@host
def test_tag_problems_are_found(cells, tags, problem):
    nb = _notebook("import math", *cells)
    for cell, cell_tags in zip(nb.cells, tags):
        cell.metadata["tags"] = cell_tags
    assert problem in make_exercises.tag_problems(nb)


@host
def test_check_reports_a_missing_tag(tmp_path):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    for folder, copy in ((SOLUTIONS, solutions), (EXERCISES, exercises)):
        copy.mkdir()
        shutil.copy(folder / ("00_setup.ipynb" if folder == SOLUTIONS else exercises_name("00_setup.ipynb")), copy)
    assert make_exercises.problems(solutions, exercises) == []
    path = solutions / "00_setup.ipynb"
    nb = read(path)
    cell = cells_tagged(nb, CHECK_TAG)[0]
    cell.metadata["tags"].remove(CHECK_TAG)
    nbformat.write(nb, path)
    found = make_exercises.problems(solutions, exercises)
    assert any("calls a check without the tag `exercise-check`" in p for p in found)


# ---------------------------------------------------------------- special tests of some checks
def _random_sequences(count, seed=0):
    import random

    rng = random.Random(seed)
    for _ in range(count):
        yield [rng.choice([rng.randint(1, 2 * 2**20), rng.randint(1, 12 * 2**20), rng.randint(1, 64 * 2**20)])
               for _ in range(rng.randint(1, 8))]


MEASURE_IN_A_FRESH_PROCESS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from utils.exercises import nb01
print(json.dumps([nb01.measure_reserved(sizes) for sizes in json.loads(sys.argv[2])]))
"""


def _allocator_cases():
    from utils.exercises import nb01

    return [sizes for sizes, _ in nb01.PREDICT_CASES] + list(_random_sequences(200))


@untimed(needed_by=named("test_the_model_is_the_real_allocator", needs_gpu=True))
def reserved_by_the_real_allocator(items):
    """What the caching allocator reserved for each of the cases, in a fresh process: tensors that
    earlier tests keep alive hold small-pool segments that empty_cache() cannot release, and new small
    tensors would fit in them.  Its own allocator's numbers: other processes beside it change nothing."""
    import json

    return json.loads(utils.run_python(MEASURE_IN_A_FRESH_PROCESS, str(ROOT), json.dumps(_allocator_cases())))


@gpu
def test_the_model_is_the_real_allocator(reserved_by_the_real_allocator):
    """The CPU checks compare with nb01.model_reserved: here that model meets the real allocator."""
    from utils.exercises import nb01

    cases, measured = _allocator_cases(), reserved_by_the_real_allocator
    with inside_check():  # the model is the check's reference
        mismatches = [(s, nb01.model_reserved(s), real) for s, real in zip(cases, measured)
                      if nb01.model_reserved(s) != real]
    assert mismatches == []


@cpu_only
@pytest.mark.parametrize("ex", [ex for ex in REGISTRY if ex.gpu and ex.key not in CPU_PART], ids=lambda ex: ex.key)
def test_gpu_checks_say_why_without_a_gpu(ex):
    from utils import GPUUnavailableError

    with pytest.raises(GPUUnavailableError, match="needs a CUDA GPU"):
        ex.check(lambda *a: None)


# ---------------------------------------------------------------- GPU checks on a machine without a GPU
@cpu_only
@pytest.mark.parametrize("ex", [ex for ex in REGISTRY if ex.gpu and ex.cpu_checks == 0], ids=lambda ex: ex.key)
def test_without_a_gpu_a_check_with_no_cpu_part_says_what_a_gpu_would_check(ex):
    """Nothing of these checks runs on a CPU (CuPy's streams, CUDA graphs, the capstone's speed), and the
    student's function is not called: the check says what a GPU checks, in the skip's lines."""
    called = []
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ex.check(lambda *args: called.append(args))
    lines = printed.getvalue().splitlines()
    assert called == []
    assert lines[0] == f"skipped (needs cuda): {ex.title}: no part of this check could run on the CPU", lines
    assert lines[1].startswith("     needs a GPU: ") and len(lines[1]) > 30, lines


ON_A_GPU = "     run this check on a GPU (Colab: Runtime → Change runtime type → T4 GPU)"


def _wrong_on_cpu(ex: Exercise) -> set:
    return importlib.import_module(f"utils.exercises.answers.{ex.module}").WRONG_ON_CPU[ex.check.__name__]


def _torch_cuda_now() -> dict:
    """What the CPU parts replace while they run (utils.exercises.cuda_on_cpu, nb01.imitated_counters)."""
    return {(module.__name__, name): getattr(module, name) for module in (torch.cuda, torch.cuda.memory)
            for name in dir(module) if not name.startswith("__")}


def _on_this_cpu(ex: Exercise, answer) -> Outcome:
    """Run a check on this CPU; torch.cuda must be as it was afterwards, whatever the answer did."""
    before = _torch_cuda_now()
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), verdict_only():
            ex.check(answer)
        error = None
    except Exception as raised:  # noqa: BLE001 -- judged by the tests
        error = raised
    after = _torch_cuda_now()
    # A submodule imported meanwhile appears as a new attribute (entering a dispatch mode imports
    # torch.cuda._pin_memory_utils through torch._dynamo): an import, not an imitation.
    added = {key for key in after.keys() - before.keys() if not isinstance(after[key], types.ModuleType)}
    assert not added and {key: after.get(key) for key in before} == before, "the check left torch.cuda imitated"
    return Outcome(printed.getvalue(), error)


def _left_for_a_gpu(ex: Exercise, outcome: Outcome, cpu_checks: int | None = None) -> None:
    """The outcome says what passed on the CPU (`cpu_checks` checks, if given) and what needs a GPU, and is
    no PASS.  No part ran on the CPU when the check has none, or when the answer calls CUDA that it cannot follow."""
    if outcome.error is not None:
        raise outcome.error
    lines = outcome.printed.splitlines()
    assert not any(line.startswith(("PASS", "FAIL", "TODO")) for line in lines), lines
    count = str(cpu_checks) if cpu_checks else r"[1-9]\d*"
    part = rf"PART {re.escape(ex.title)}: {count} checks passed on the CPU; the rest needs a GPU$"
    nothing = rf"skipped \(needs cuda\): {re.escape(ex.title)}: no part of this check could run on the CPU$"
    first = nothing if cpu_checks == 0 else part if cpu_checks else f"{part}|{nothing}"
    assert lines and re.match(first, lines[0]), lines
    assert any(line.startswith("     needs a GPU: ") for line in lines) and lines[-1] == ON_A_GPU, lines


@host
def test_the_cpu_parts_are_of_gpu_checks_and_have_their_wrong_answers_named():
    assert sorted(ex.key for ex in CPU_PART_EXERCISES) == sorted(CPU_PART)
    for ex in CPU_PART_EXERCISES:
        assert ex.gpu and _wrong_on_cpu(ex) <= set(ex.wrong), ex.key


@cpu_only
@pytest.mark.parametrize("ex", CPU_PART_HERE)
def test_without_a_gpu_the_solution_passes_the_cpu_part_and_the_rest_is_left_for_a_gpu(ex):
    (solution,) = definitions_of(SOLUTIONS / f"{ex.notebook}.ipynb", [ex.name])
    _left_for_a_gpu(ex, _on_this_cpu(ex, solution), cpu_checks=CPU_PART[ex.key])


def _cpu_cases():
    """The answers of the GPU checks' CPU parts; one a CPU part misjudges (MISJUDGED_ON_A_CPU: a wrong one it leaves for
    a GPU, a right one it FAILs) is a strict xfail there."""
    for ex in CPU_PART_EXERCISES:
        marks = _unmet(ex)
        for what, answer in ex.wrong.items():
            yield pytest.param(ex, "wrong", what, answer, marks=marks + _known_misjudged_on_a_cpu(ex, what),
                               id=f"{ex.key}: wrong: {what}")
        for what, answer in ex.also_right.items():
            yield pytest.param(ex, "right", what, answer, marks=marks + _known_misjudged_on_a_cpu(ex, what),
                               id=f"{ex.key}: also right: {what}")
        for what, answer in MALFORMED.items():
            yield pytest.param(ex, "malformed", what, answer, marks=marks, id=f"{ex.key}: malformed: {what}")


@host
def test_the_cases_are_the_same_everywhere():
    from utils.exercises import nb02

    first, second = nb02.chosen_samples(), nb02.chosen_samples()
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(first, second))


def test_simulate_on_the_gpu_compares_with_the_measured_durations():
    """check_simulate_on_gpu gives simulate the kernels' durations on this GPU, and allows the GPU's
    measured delays along a chain of kernels, plus the host's lateness."""
    from utils.exercises import nb03
    from utils.plotting import Interval

    measured = [Interval("copy stream", "load 0", 0.0, 12.5), Interval("logger stream", "log", 0.0, 31.0)]
    program = [("kernel", "copy", "load 0", 10), ("record", "copy", "e"), ("kernel", "logger", "log", 30)]
    assert nb03.with_durations(program, measured) == [
        ("kernel", "copy", "load 0", 12.5), ("record", "copy", "e"), ("kernel", "logger", "log", 31.0)]
    assert nb03.allowed_difference_ms(kernels=6, gap_ms=0.01, late_ms=-3.0) == pytest.approx(0.28)
    assert nb03.allowed_difference_ms(kernels=6, gap_ms=0.01, late_ms=2.0) == pytest.approx(2.28)
    assert nb03._streams_of(nb03.PROGRAM) == ["copy", "logger", "compute"]
    with pytest.raises(ValueError, match="unknown operation"):
        nb03._streams_of([("sleep", "s", 1)])
    # On the reference program, a simulator that ignores waits is off by the 10 ms of "load 0": far
    # more than the GPU's delays allow on any GPU (tens of microseconds per dependency, even shared).
    from utils.exercises.answers.nb03 import PROGRAM_ANSWER, ignores_waits

    worst = max(abs(a - b) for name, (start, end) in PROGRAM_ANSWER.items()
                for a, b in zip((start, end), ignores_waits(nb03.PROGRAM)[name]))
    assert worst == 10 and nb03.allowed_difference_ms(6, gap_ms=0.1, late_ms=0.0) < worst / 3


def test_simulate_on_the_gpu_asks_the_stream_rules_before_the_gpu(monkeypatch):
    """Round 35's adversary: a wait_stream that ignores the other stream's waits is right on the notebook's
    program, the only one the GPU runs, and passed check_simulate_on_gpu; the check now asks the chosen programs
    first.  Here the GPU is faked away: a wrong simulator must FAIL before it runs, a right one must reach it."""
    from utils.exercises import ExerciseFailed, nb03
    from utils.exercises.answers.nb03 import WRONG_SIMULATORS, simulator

    class ReachedTheGPU(Exception):
        pass

    def no_gpu(*_args, **_kwargs):
        raise ReachedTheGPU

    monkeypatch.setattr(nb03, "has_cuda", lambda: True)
    monkeypatch.setattr(nb03, "require_cuda", lambda *_: None)
    monkeypatch.setattr(nb03, "_run_in_time", no_gpu)
    wrong = WRONG_SIMULATORS["wait_stream waits for the other stream's last kernel, not for its waits"]
    with pytest.raises(ExerciseFailed, match="wait_stream"):
        nb03.check_simulate_on_gpu(wrong)
    with pytest.raises(ReachedTheGPU):
        nb03.check_simulate_on_gpu(simulator())
