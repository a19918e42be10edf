"""Checks for the exercises of notebook 06 (floating-point precision): a tolerance for dot products,
an fp16 overflow to fix, and a deterministic scatter-add on the GPU.

The checks measure rather than compare with one right answer:

- `check_dot_tolerance` computes thousands of random float32 dot products three ways (a sequential
  loop, torch.sum of the products, a batched matrix product), and asks the student's (rtol, atol)
  to accept every one of them against float64, and to reject most of those whose inputs were
  rounded to bfloat16 (what an autocast region does): a tolerance must pass correct results *and*
  catch a real loss of precision.
- `check_rms` feeds the student's fp16 RMS function rows whose squares overflow fp16 (values near
  1e4) and rows whose squares underflow it (values near 1e-4), and asks for an fp16 result within
  fp16's own rounding of the exact RMS.
- `check_deterministic_index_add` runs the student's scatter-add 20 times on inputs where atomic
  additions give different bits almost every run (2**20 values into 4 bins), and on inputs where
  even float64 atomic additions rounded to float32 differ (a bin holding +2**40 and -2**40), and
  times it against `index_add_`.  A nondeterministic answer fails every time: the chance that 20
  runs of contended atomics all agree bit for bit is negligible.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
import torch

from ..device import require_cuda
from ..timing import benchmark, compare, format_time
from . import Exercise, exercise, register

NOTEBOOK = "06_precision"
EPS32 = torch.finfo(torch.float32).eps


# ------------------------------------------------------------------------------------------
# Exercise 1: a tolerance for float32 dot products of length n
# ------------------------------------------------------------------------------------------
DOT_LENGTHS = (16, 256, 4096, 65536)
BF16_CAUGHT_UP_TO = 4096  # up to this length, a tolerance must catch inputs rounded to bfloat16
BF16_CAUGHT_SHARE = 0.5  # ... in at least this share of the draws
DOT_ELEMENTS = 2**22  # per length: 1000 draws of short products, fewer of long ones


@cache
def dot_products(n: int) -> tuple[torch.Tensor, dict[str, torch.Tensor], torch.Tensor]:
    """Random dot products of length n, with entries drawn from N(0, 1): (exact, computed, bf16).

    exact: the float64 results; computed: float32 results by three orders of addition; bf16: the
    results when the inputs are first rounded to bfloat16 (the rest exact).  All float64 tensors,
    one entry per draw.  The same draws every call (a fixed seed per length).
    """
    draws = min(1000, DOT_ELEMENTS // n)
    gen = torch.Generator().manual_seed(n)
    x, y = torch.randn(draws, n, generator=gen), torch.randn(draws, n, generator=gen)
    exact = (x.double() * y.double()).sum(1)
    computed = {
        "a sequential float32 loop": torch.from_numpy(np.cumsum((x * y).numpy(), axis=1, dtype=np.float32)[:, -1]),
        "torch.sum of the float32 products": (x * y).sum(1),
        "a batched float32 matrix product": (x[:, None, :] @ y[:, :, None]).flatten(),
    }
    bf16 = (x.bfloat16().double() * y.bfloat16().double()).sum(1)
    return exact, {how: got.double() for how, got in computed.items()}, bf16


def check_dot_tolerance(dot_tolerance: Callable[[int], tuple[float, float]]) -> None:
    """dot_tolerance(n) must return (rtol, atol) for comparing a float32 dot product of length n (entries
    N(0, 1)) with its float64 value, by assert_close's rule |actual - expected| <= atol + rtol * |expected|:
    loose enough to accept every float32 result, tight enough to catch inputs rounded to bfloat16."""
    with exercise("dot_tolerance") as ex:
        for n in DOT_LENGTHS:
            tolerance = dot_tolerance(n)
            ex.expect(isinstance(tolerance, tuple) and len(tolerance) == 2,
                      f"dot_tolerance({n}) returned {tolerance!r}, not a pair (rtol, atol)",
                      "return two numbers: return rtol, atol")
            ex.expect(all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in tolerance),
                      f"dot_tolerance({n}) returned {tolerance!r}: rtol and atol must be numbers",
                      "return two Python floats (float(...) turns a NumPy or 0-d tensor value into one)")
            rtol, atol = (float(t) for t in tolerance)
            ex.expect(all(math.isfinite(t) and t >= 0 for t in (rtol, atol)),
                      f"dot_tolerance({n}) returned rtol = {rtol}, atol = {atol}",
                      "both must be finite and not negative")
            exact, computed, bf16 = dot_products(n)
            allowed = atol + rtol * exact.abs()
            for how, got in computed.items():
                rejected = int(((got - exact).abs() > allowed).sum())
                ex.expect(
                    rejected == 0,
                    f"for n = {n}, (rtol, atol) = ({rtol:.3g}, {atol:.3g}) rejected {rejected} of "
                    f"{len(exact)} correct float32 results, computed by {how}",
                    "the error of a sum comes from its terms, not from its result (which can be near zero): about "
                    "sqrt(n) * eps times the sum of |x_i * y_i| (what is that sum for N(0, 1) entries, on average?); "
                    "put it into atol" if atol < EPS32 * n else
                    "the error of a sum of n terms grows with n: about sqrt(n) * eps times the sum of |x_i * y_i|",
                )
            if n <= BF16_CAUGHT_UP_TO:
                caught = float(((bf16 - exact).abs() > allowed).double().mean())
                ex.expect(
                    caught >= BF16_CAUGHT_SHARE,
                    f"for n = {n}, (rtol, atol) = ({rtol:.3g}, {atol:.3g}) accepted {1 - caught:.0%} of the dot "
                    "products whose inputs were rounded to bfloat16: it would not notice a loss of 16 bits",
                    "use float32's eps (2**-23), and sqrt(n) (rounding errors of random sign), not n (the worst "
                    "case, which almost never happens)",
                )


register(Exercise(NOTEBOOK, "dot_tolerance", check_dot_tolerance))


# ------------------------------------------------------------------------------------------
# Exercise 2: an fp16 overflow (and underflow) to find and fix
# ------------------------------------------------------------------------------------------
RMS_ROWS, RMS_WIDTH = 64, 1024
RMS_RELATIVE_ERROR = 2.0**-10  # fp16's own rounding: a float32 computation, rounded once, is within it


def rms_inputs() -> dict[str, torch.Tensor]:
    """fp16 batches (64 rows of 1024) for an RMS function, by what makes them hard."""
    base = torch.randn(RMS_ROWS, RMS_WIDTH, generator=torch.Generator().manual_seed(6))
    scales = torch.logspace(-4, 4, RMS_ROWS)[:, None]
    return {
        "values about 1": base.half(),
        "values about 1e4 (their squares are over 65504)": (base * 1e4).clamp(-6e4, 6e4).half(),
        "values about 1e-4 (their squares are under fp16's smallest number)": (base * 1e-4).half(),
        "rows from 1e-4 to 1e4": (base * scales).clamp(-6e4, 6e4).half(),
        "a padding row of zeros": torch.cat([torch.zeros(1, RMS_WIDTH), base[1:]]).half(),
    }


def check_rms(rms: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """rms(x) must return sqrt(mean(x**2)) along the last dimension of an fp16 tensor, as fp16, within
    fp16's rounding of the exact value, for values whose squares overflow or underflow fp16."""
    with exercise("rms") as ex:
        for name, x in rms_inputs().items():
            before = x.clone()
            got = rms(x)
            ex.expect(isinstance(got, torch.Tensor), f"returned a {type(got).__name__}, not a tensor",
                      "return a tensor: one RMS per row")
            ex.expect(torch.equal(x, before), "changed its input", "compute on a copy (x.float() makes one)")
            ex.expect(tuple(got.shape) == (RMS_ROWS,), f"for a {tuple(x.shape)} input, returned shape "
                      f"{tuple(got.shape)}, expected ({RMS_ROWS},)", "reduce the last dimension only: mean(dim=-1)")
            ex.expect(got.dtype == torch.float16,
                      f"returned {got.dtype}: the model around this function works in float16",
                      "compute in float32 inside, then convert the result back: .to(x.dtype)")
            ex.expect(bool(torch.isfinite(got).all()), f"with {name}, returned inf or NaN",
                      "a row of zeros has an RMS of 0: whatever you divide by must not be 0 there (0/0 is NaN)"
                      if "zeros" in name else
                      "x**2 overflows fp16 as soon as |x| > 255, before any sum: accumulating in float32 "
                      "(mean(dtype=...)) is too late; square in float32")
            want = x.double().pow(2).mean(-1).sqrt()
            ex.expect(bool((got[want == 0] == 0).all()), f"with {name}, a row of zeros got an RMS of "
                      f"{got[want == 0].tolist()}", "the RMS of a row of zeros is 0")
            error = float(((got.double() - want).abs() / want.clamp(min=1e-300))[want > 0].max())
            ex.expect(
                error <= RMS_RELATIVE_ERROR,
                f"with {name}, the largest relative error is {error:.1e}, more than fp16's rounding "
                f"(2**-10 = {RMS_RELATIVE_ERROR:.1e})",
                "squares of values near 1e-4 are below fp16's smallest number and become 0: square in float32"
                if bool((got == 0).any()) else
                "fp16 cannot hold such squares well (under 6e-5 they lose precision), and bfloat16 has the range "
                "but only 8 bits: compute the squares and the mean in float32",
            )


register(Exercise(NOTEBOOK, "rms", check_rms))


# ------------------------------------------------------------------------------------------
# Exercise 3: a deterministic scatter-add (GPU)
# ------------------------------------------------------------------------------------------
SCATTER_VALUES = 2**20
SCATTER_BINS = 4096
RUNS = 20
MAX_SLOWDOWN = 200  # a Python loop over the bins is thousands of times slower than index_add_


def scatter_inputs(bins: int, seed: int, huge: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """2**20 float32 values from N(0, 1) on the GPU, and a random bin for each.

    huge: bin 0 also holds +2**40 and -2**40 at random places.  Every value added to bin 0 between
    those two is rounded at their scale (float64's step at 2**40 is 2**-12), so the float64 sum of
    bin 0 depends on the order of the additions by far more than float32's step at the result.
    """
    gen = torch.Generator(device="cuda").manual_seed(seed)
    values = torch.randn(SCATTER_VALUES, device="cuda", generator=gen)
    index = torch.randint(0, bins, (SCATTER_VALUES,), device="cuda", generator=gen)
    if huge:
        places = torch.randperm(SCATTER_VALUES, generator=torch.Generator().manual_seed(seed))[:2].cuda()
        values[places] = torch.tensor([2.0**40, -(2.0**40)], device="cuda")
        index[places] = 0
    return values, index


def _atomic_index_add(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    return torch.zeros(bins, dtype=values.dtype, device=values.device).index_add_(0, index, values)


def check_deterministic_index_add(deterministic_index_add: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]
                                  ) -> None:
    """deterministic_index_add(values, index, bins) must return the per-bin sums of float32 `values`
    (as index_add_ into zeros would), with the same bits on every run, leave deterministic mode as it
    found it, and cost at most MAX_SLOWDOWN times index_add_."""
    with exercise("deterministic_index_add") as ex:
        require_cuda("check_deterministic_index_add")
        values, index = scatter_inputs(SCATTER_BINS, seed=1)
        mode_before = torch.are_deterministic_algorithms_enabled()
        got = deterministic_index_add(values, index, SCATTER_BINS)
        mode_after = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(mode_before)  # whatever the answer did, later checks start clean
        ex.expect(mode_after == mode_before,
                  f"left torch.use_deterministic_algorithms at {mode_after}: a global setting that changes every "
                  "later cell",
                  "remember torch.are_deterministic_algorithms_enabled() first and restore it in a `finally:`")
        ex.expect(isinstance(got, torch.Tensor), f"returned a {type(got).__name__}, not a tensor",
                  "return the tensor of the per-bin sums")
        ex.expect(tuple(got.shape) == (SCATTER_BINS,) and got.dtype == values.dtype and got.device == values.device,
                  f"returned {got.dtype} of shape {tuple(got.shape)} on {got.device}; expected {values.dtype} of "
                  f"shape ({SCATTER_BINS},) on {values.device}",
                  "one sum per bin (also for empty bins), in the values' dtype, on their device")
        exact = torch.zeros(SCATTER_BINS, dtype=torch.float64, device="cuda").index_add_(0, index, values.double())
        magnitude = torch.zeros(SCATTER_BINS, dtype=torch.float64, device="cuda").index_add_(
            0, index, values.double().abs())
        count = torch.bincount(index, minlength=SCATTER_BINS).double()
        wrong = int(((got.double() - exact).abs() > count * EPS32 * magnitude).sum())  # float32's worst case
        ex.expect(wrong == 0, f"{wrong} of {SCATTER_BINS} bins hold a wrong sum (beyond float32's worst-case "
                  "error for any order of additions)",
                  "bin b must hold the sum of values[i] for every i with index[i] == b")
        for case, (vals, idx, bins) in {
            "2**20 values into 4 bins": (*scatter_inputs(4, seed=2), 4),
            "a bin that also holds +2**40 and -2**40": (*scatter_inputs(4, seed=3, huge=True), 4),
        }.items():
            runs = {deterministic_index_add(vals, idx, bins).cpu().numpy().tobytes() for _ in range(RUNS)}
            torch.use_deterministic_algorithms(mode_before)
            ex.expect(len(runs) == 1, f"{RUNS} runs on {case} gave {len(runs)} different results",
                      "atomic additions (index_add_, scatter_add_, bincount with weights) add in the order the "
                      "threads arrive, in float64 too: put the values in a fixed order first (a stable sort by "
                      "bin), then add them with operations that do not use atomics")
        torch.use_deterministic_algorithms(True)  # a caller that had switched it on keeps it on
        try:
            deterministic_index_add(values, index, SCATTER_BINS)
            left_on = torch.are_deterministic_algorithms_enabled()
        finally:
            torch.use_deterministic_algorithms(mode_before)
        ex.expect(left_on, "called with deterministic mode on, it left the mode off",
                  "restore the setting you found (are_deterministic_algorithms_enabled() first), which is not always "
                  "off")
        empty = 16  # the last bins get no value: their sum is 0, and they are still bins
        vals, idx = scatter_inputs(SCATTER_BINS - empty, seed=5)
        got = deterministic_index_add(vals, idx, SCATTER_BINS)
        torch.use_deterministic_algorithms(mode_before)
        ex.expect(isinstance(got, torch.Tensor) and tuple(got.shape) == (SCATTER_BINS,)
                  and bool((got[-empty:] == 0).all()),
                  f"with the last {empty} bins empty, returned {type(got).__name__} of shape "
                  f"{tuple(getattr(got, 'shape', ()))}, expected ({SCATTER_BINS},) ending in {empty} zeros",
                  "every bin gets a sum, 0 for a bin no value falls in: counts and offsets need all `bins` of them "
                  "(bincount's minlength)")
        base = benchmark(_atomic_index_add, values, index, SCATTER_BINS, label="index_add_ (atomics)",
                         min_time=0.1, min_blocks=5)
        yours = benchmark(deterministic_index_add, values, index, SCATTER_BINS, label="deterministic_index_add",
                          min_time=0.1, min_blocks=5)
        torch.use_deterministic_algorithms(mode_before)
        print(compare([base, yours]))
        ex.expect(yours.median < MAX_SLOWDOWN * base.median,
                  f"took {format_time(yours.median)}, {yours.median / base.median:.0f} times index_add_'s "
                  f"{format_time(base.median)}",
                  "no Python loop over the bins: sort once, then use whole-tensor operations")


register(Exercise(NOTEBOOK, "deterministic_index_add", check_deterministic_index_add, gpu=True))
