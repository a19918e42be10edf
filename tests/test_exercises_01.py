"""Exercises of notebook 01 (GPU memory): each check accepts the solution and rejects typical wrong answers."""

import random
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import torch

from conftest import definitions_of, gpu
from tools.course import EXERCISES, SOLUTIONS
from utils.exercises import ExerciseFailed, nb01

MiB = 2**20
NOTEBOOK = "01_memory.ipynb"




# ---------------------------------------------------------------- exercise 1 (CPU check)
def test_predict_reserved_accepts_the_solution(capsys):
    (solution,) = definitions_of(SOLUTIONS / NOTEBOOK, ["predict_reserved"])
    nb01.check_predict_reserved(solution)
    assert capsys.readouterr().out.startswith("PASS predict_reserved")


def test_predict_reserved_stub_says_todo(capsys):
    (stub,) = definitions_of(EXERCISES / NOTEBOOK, ["predict_reserved"])
    nb01.check_predict_reserved(stub)
    assert capsys.readouterr().out.startswith("TODO predict_reserved")


def _segments_model(round_block, segment_of, small_pool=True, reuse=True):
    """A predict_reserved built from (possibly wrong) rules, for the wrong answers below."""
    def predict(sizes):
        segments = []
        for n in sizes:
            block = round_block(n)
            pool = "small" if small_pool and block <= MiB else "large"
            if not (reuse and any(p == pool and s >= block for p, s in segments)):
                segments.append((pool, segment_of(block)))
        return sum(s for _, s in segments)
    return predict


def _up(n, multiple):
    return -(-n // multiple) * multiple


def _right_segment(block):
    return 2 * MiB if block <= MiB else 20 * MiB if block < 10 * MiB else _up(block, 2 * MiB)


WRONG_PREDICTIONS = {
    "sum of the sizes": lambda sizes: sum(sizes),
    "largest size only": lambda sizes: max(sizes),
    "largest segment only": lambda sizes: max(_right_segment(_up(n, 512)) for n in sizes),
    "no reuse of cached segments": _segments_model(lambda n: _up(n, 512), _right_segment, reuse=False),
    "segments as large as the request": _segments_model(lambda n: _up(n, 512), lambda b: b),
    "no 20 MiB segments for 1-10 MiB": _segments_model(
        lambda n: _up(n, 512), lambda b: 2 * MiB if b <= MiB else _up(b, 2 * MiB)),
    "large segments not rounded to 2 MiB": _segments_model(
        lambda n: _up(n, 512), lambda b: 2 * MiB if b <= MiB else 20 * MiB if b < 10 * MiB else b),
    "one pool for everything": _segments_model(lambda n: _up(n, 512), _right_segment, small_pool=False),
    "returns MiB, not bytes": lambda sizes: nb01.model_reserved(sizes) // MiB,
    "returns a float": lambda sizes: float(nb01.model_reserved(sizes)),
}


@pytest.mark.parametrize("wrong", WRONG_PREDICTIONS.values(), ids=WRONG_PREDICTIONS.keys())
def test_predict_reserved_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL predict_reserved.*\n.*hint: "):
        nb01.check_predict_reserved(wrong)


def _random_sequences(count, seed=0):
    rng = random.Random(seed)
    for _ in range(count):
        yield [rng.choice([rng.randint(1, 2 * MiB), rng.randint(1, 12 * MiB), rng.randint(1, 64 * MiB)])
               for _ in range(rng.randint(1, 8))]


@gpu
def test_the_model_is_the_real_allocator():
    """The CPU check compares with nb01.model_reserved: here that model meets the real allocator."""
    cases = [sizes for sizes, _ in nb01.PREDICT_CASES] + list(_random_sequences(200))
    mismatches = [(s, nb01.model_reserved(s), nb01.measure_reserved(s)) for s in cases
                  if nb01.model_reserved(s) != nb01.measure_reserved(s)]
    assert mismatches == []


# ---------------------------------------------------------------- exercise 2 (GPU check)
@dataclass
class Report:
    peak_allocated: int = 0
    reserved_growth: int = 0


def _block_memory(peak_allocated, reserved_growth, reset=True):
    """A block_memory built from two (possibly wrong) formulas of (start_allocated, start_reserved)."""
    @contextmanager
    def block_memory():
        if reset:
            torch.cuda.reset_peak_memory_stats()
        start = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        report = Report()
        yield report
        report.peak_allocated = peak_allocated(*start)
        report.reserved_growth = reserved_growth(*start)
    return block_memory


def right_alloc(a, r):
    return torch.cuda.max_memory_allocated() - a


def right_res(a, r):
    return torch.cuda.max_memory_reserved() - r


WRONG_BLOCKS = {
    "no reset of the peaks": _block_memory(right_alloc, right_res, reset=False),
    "absolute peak, start not subtracted": _block_memory(lambda a, r: torch.cuda.max_memory_allocated(), right_res),
    "allocated at the end, not the peak": _block_memory(lambda a, r: torch.cuda.memory_allocated() - a, right_res),
    "reserved at the end, not the peak": _block_memory(right_alloc, lambda a, r: torch.cuda.memory_reserved() - r),
    "absolute reserved peak": _block_memory(right_alloc, lambda a, r: torch.cuda.max_memory_reserved()),
    "reserved instead of allocated": _block_memory(lambda a, r: torch.cuda.max_memory_reserved() - r, right_res),
}


@gpu
def test_block_memory_accepts_the_solution(capsys):
    (solution,) = definitions_of(SOLUTIONS / NOTEBOOK, ["block_memory"])
    nb01.check_block_memory(solution)
    assert capsys.readouterr().out.startswith("PASS block_memory")


@gpu
def test_block_memory_stub_says_todo(capsys):
    (stub,) = definitions_of(EXERCISES / NOTEBOOK, ["block_memory"])
    nb01.check_block_memory(stub)
    assert capsys.readouterr().out.startswith("TODO block_memory")


@gpu
@pytest.mark.parametrize("wrong", WRONG_BLOCKS.values(), ids=WRONG_BLOCKS.keys())
def test_block_memory_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL block_memory.*\n.*hint: "):
        nb01.check_block_memory(wrong)


# ---------------------------------------------------------------- exercise 3 (GPU check)
def warm_up_with_first(lengths, width=4096):
    torch.empty(lengths[0], width, device="cuda")
    return nb01.run_batches(lengths, width)


def keep_the_warm_up_alive(lengths, width=4096):
    keep = torch.empty(max(lengths), width, device="cuda")  # never freed: the loop cannot reuse it
    sums = nb01.run_batches(lengths, width)
    del keep
    return sums


def empty_cache_every_batch(lengths, width=4096):
    sums = []
    for n in lengths:
        sums.append(float(torch.ones(n, width, device="cuda").sum()))
        torch.cuda.empty_cache()
    return sums


def largest_first_reordered(lengths, width=4096):
    return nb01.run_batches(sorted(lengths, reverse=True), width)


def power_of_two_buckets(lengths, width=4096):
    sums = []
    for n in lengths:
        padded = torch.zeros(1 << (n - 1).bit_length(), width, device="cuda")
        padded[:n] = 1.0
        sums.append(float(padded.sum()))
    return sums


def warm_up_then_the_original_loop(lengths, width=4096):
    torch.empty(max(lengths), width, device="cuda")  # freed at once: its segment stays cached...
    return nb01.run_batches(lengths, width)  # ...but `batch = ...` holds two batches at once


WRONG_LOOPS = {
    "the original loop": nb01.run_batches,
    "warms up, but two batches are alive at once": warm_up_then_the_original_loop,
    "warms up with the first length": warm_up_with_first,
    "keeps the warm-up tensor alive": keep_the_warm_up_alive,
    "empties the cache every batch": empty_cache_every_batch,
    "sorts the batches, losing their order": largest_first_reordered,
    "pads to powers of two": power_of_two_buckets,
}


def warm_up_with_largest(lengths, width=4096):
    """The other right answer: warm the cache up, and free each batch before making the next."""
    torch.empty(max(lengths), width, device="cuda")  # freed at once: its segment stays cached
    sums = []
    for n in lengths:
        batch = torch.ones(n, width, device="cuda")
        sums.append(float(batch.sum()))
        del batch  # otherwise the next batch is made while this one is still alive
    return sums


@gpu
def test_batches_accepts_the_solution(capsys):
    (solution,) = definitions_of(SOLUTIONS / NOTEBOOK, ["run_batches_fixed"])
    nb01.check_batches_without_growth(solution)
    assert capsys.readouterr().out.startswith("PASS run_batches_fixed")


@gpu
def test_batches_accepts_the_warm_up_answer(capsys):
    nb01.check_batches_without_growth(warm_up_with_largest)
    assert capsys.readouterr().out.startswith("PASS run_batches_fixed")


@gpu
def test_batches_stub_says_todo(capsys):
    (stub,) = definitions_of(EXERCISES / NOTEBOOK, ["run_batches_fixed"])
    nb01.check_batches_without_growth(stub)
    assert capsys.readouterr().out.startswith("TODO run_batches_fixed")


@gpu
@pytest.mark.parametrize("wrong", WRONG_LOOPS.values(), ids=WRONG_LOOPS.keys())
def test_batches_rejects(wrong):
    with pytest.raises(ExerciseFailed, match="FAIL run_batches_fixed.*\n.*hint: "):
        nb01.check_batches_without_growth(wrong)


def test_gpu_checks_say_why_without_a_gpu():
    if torch.cuda.is_available():
        pytest.skip("checks the behaviour on a machine without a GPU")
    from utils import GPUUnavailableError

    for check in (nb01.check_block_memory, nb01.check_batches_without_growth):
        with pytest.raises(GPUUnavailableError, match="needs a CUDA GPU"):
            check(lambda *a: None)
