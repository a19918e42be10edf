"""Checks for the exercises of notebook 06 (floating-point precision): a tolerance for dot products,
an fp16 overflow to fix, and a variance that survives a large mean.

The checks measure rather than compare with one right answer:

- `check_dot_tolerance` computes thousands of random float32 dot products three ways (a sequential
  loop, torch.sum of the products, a batched matrix product), and asks the student's (rtol, atol)
  to accept every one of them against float64, and to reject most of those whose inputs were
  rounded to bfloat16 (what an autocast region does): a tolerance must pass correct results *and*
  catch a real loss of precision.
- `check_rms` feeds the student's fp16 RMS function rows whose squares overflow fp16 (values near
  1e4) and rows whose squares underflow it (values near 1e-4), and asks for an fp16 result within
  fp16's own rounding of the exact RMS.
- `check_stable_variance` feeds the student's float32 variance rows where E[x**2] - E[x]**2 cancels
  catastrophically (mean 1e4, spread 1; rows of different means in one batch; constant rows), easy
  rows (mean 0, one value, short rows) and large batches, compares with float64 within a tolerance
  built from float32's eps and section 6's sqrt(n) rule (`variance_allowed`), and watches every torch
  operation of the answer (`OperationWatch`): float64 inside would only hide the cancellation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
import torch

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
# Exercise 3: a variance without catastrophic cancellation (CPU)
# ------------------------------------------------------------------------------------------
# Section 6's sqrt(n) rule is what errors typically are, not a bound; and Welford's running mean carries its
# rounding from one step to the next, so its errors add up less randomly (up to 2.8 times the estimate here).
VARIANCE_SLACK = 8
# What the exercise asks to write, from means and sums (torch.var's CPU kernel accumulates in float64, unseen)
LIBRARY_VARIANCE = frozenset({"var", "std", "var_mean", "std_mean", "cov", "corrcoef",
                              "layer_norm", "batch_norm", "group_norm", "instance_norm"})
LEAVES_TORCH = frozenset({"item", "tolist", "numpy", "__array__", "__float__"})  # to Python floats or NumPy
FLOAT64 = (torch.float64, torch.complex128)


def variance_inputs() -> dict[str, torch.Tensor]:
    """float32 batches for a variance along the last dimension, by what makes them hard; the same every call."""
    gen = torch.Generator().manual_seed(3)

    def normal(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen)

    large = 1e4 + normal(64, 4096)
    large[:4, 0] += 60  # four rows whose first value lies 60 standard deviations out
    means = torch.tensor([0.0, 1e4, -1e4, 3e3]).repeat(16)[:, None]
    return {
        "mean 0, std 1": normal(64, 4096),
        "mean 1e4, std 1": large,
        "means 0 to 1e4, std 0.1 to 10, in one batch": means + normal(64, 1024) * torch.logspace(-1, 1, 64)[:, None],
        "constant rows near 1e4": (1e4 + 100 * normal(16, 1)).expand(16, 1000).contiguous(),
        "rows of 8 values, mean 0": normal(64, 8),
        "rows of one value": 1e4 + normal(16, 1),
        "4096 rows of 64 values, mean 1e3": 1e3 + normal(4096, 64),
        "rows of 2**16 values, mean 1e3": 1e3 + normal(4, 2**16),
    }


def variance_exact(x: torch.Tensor) -> torch.Tensor:
    """The population variance of each row of x, computed in float64 (for comparing, not for the exercise)."""
    return x.double().var(dim=-1, correction=0)


def variance_allowed(x: torch.Tensor) -> torch.Tensor:
    """How far a float32 variance of each row of x may be from the exact one (float64, one per row).

    Section 6's rule: a reduction of n terms errs by about sqrt(n) eps times the sum of the magnitudes
    of its terms.  With v the variance and a = mean|x| of a row:
    - the sum of the n squared deviations d**2 errs by sqrt(n) eps v;
    - each deviation d = x - mean is computed from numbers of size |x|, so it errs by about eps |x|,
      and d**2 by 2 eps |x| |d|: added with random signs, 2 eps a sqrt(v / n);
    - the mean errs by about sqrt(n) eps a (a sum of numbers of size a), and the mean square about a
      wrong mean exceeds the variance by that error squared: n eps**2 a**2.
    A two-pass, Welford or shifted computation stays within these; E[x**2] - E[x]**2 does not: E[x**2]
    is about a**2, and its own rounding, eps a**2, is more than n eps**2 a**2 for any n below 1/eps.
    """
    n, xd = x.shape[-1], x.double()
    v, a = xd.var(dim=-1, correction=0), xd.abs().mean(dim=-1)
    return VARIANCE_SLACK * EPS32 * (math.sqrt(n) * v + 2 * a * (v / n).sqrt() + n * EPS32 * a**2)


class OperationWatch(torch.overrides.TorchFunctionMode):
    """Records what a function does with torch while active: which operations gave a float64 result,
    which left torch for Python floats or NumPy (both float64), and which computed a variance for it.

    Every torch function and Tensor method called from Python passes through a TorchFunctionMode, and a
    float64 computation has to make a float64 tensor at some point (x.double(), .to(), dtype=, a float64
    factory, or a promotion with one), so this sees it; kernels that use float64 inside and return
    float32, as torch.var on the CPU, it cannot see: those are named in LIBRARY_VARIANCE.
    """

    def __init__(self) -> None:
        super().__init__()
        self.float64: list[str] = []
        self.left_torch: list[str] = []
        self.library: list[str] = []

    def __torch_function__(self, func: Callable, types: object, args: tuple = (), kwargs: dict | None = None
                           ) -> object:
        result = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", repr(func))
        results = result if isinstance(result, (tuple, list)) else (result,)
        if any(isinstance(r, torch.Tensor) and r.dtype in FLOAT64 for r in results):
            self.float64.append(name)
        if name in LEAVES_TORCH and args and isinstance(args[0], torch.Tensor) and args[0].is_floating_point():
            self.left_torch.append(name)
        if name in LIBRARY_VARIANCE:
            self.library.append(name)
        return result


def _names(calls: list[str]) -> str:
    return ", ".join(dict.fromkeys(calls))  # each once, in the order of the first call


def check_stable_variance(stable_variance: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """stable_variance(x) must return the population variance of each row of a float32 2-D tensor, as
    float32, within `variance_allowed` of float64's, computed in float32: no float64 tensor, no Python
    floats or NumPy, no torch.var (OperationWatch sees each), and the input left as it was."""
    with exercise("stable_variance") as ex:
        for name, x in variance_inputs().items():
            rows = x.shape[0]
            before, watch = x.clone(), OperationWatch()
            with watch:
                got = stable_variance(x)
            ex.expect(isinstance(got, torch.Tensor), f"with {name}, returned a {type(got).__name__}, not a tensor",
                      "return a tensor: one variance per row")
            ex.expect(torch.equal(x, before), "changed its input", "compute on new tensors, not in place")
            ex.expect(got.dtype == torch.float32, f"with {name}, returned {got.dtype}",
                      "return float32, the dtype of the input: computing in float32 is the exercise")
            ex.expect(tuple(got.shape) == (rows,), f"for a {tuple(x.shape)} input, returned shape {tuple(got.shape)}, "
                      f"expected ({rows},)", "one variance per row: reduce the last dimension only")
            ex.expect(not watch.library, f"called {_names(watch.library)}",
                      "write the variance from means and sums yourself: torch.var and its relatives are what this "
                      "exercise is about (on the CPU they accumulate in float64)")
            ex.expect(not watch.left_torch, f"left torch for Python numbers or NumPy ({_names(watch.left_torch)})",
                      "Python floats and NumPy compute in float64: keep the computation in float32 tensors")
            ex.expect(not watch.float64, f"made float64 tensors ({_names(watch.float64)})",
                      "float64 only moves the problem to larger means: find a way that is accurate in float32 "
                      "(what does E[x**2] - E[x]**2 lose when the mean is large?)")
            ex.expect(bool(torch.isfinite(got).all()), f"with {name}, returned inf or NaN",
                      "a row whose values are all equal has variance 0: do not divide by something that is 0 "
                      "there (a row of one value included)")
            ex.expect(bool((got >= 0).all()), f"with {name}, returned a negative variance, {float(got.min()):.4g}",
                      "a mean of squares is never negative: a negative result is a difference of two nearly equal "
                      "numbers that lost its digits (catastrophic cancellation)")
            exact, allowed = variance_exact(x), variance_allowed(x)
            error = (got.double() - exact).abs()
            row = int((error / allowed).argmax())
            ex.expect(bool((error <= allowed).all()),
                      f"with {name}, row {row}: returned {float(got[row]):.6g}, the exact variance is "
                      f"{float(exact[row]):.6g} (allowed error {float(allowed[row]):.2g})",
                      _accuracy_hint(x, got, exact, allowed))


def _accuracy_hint(x: torch.Tensor, got: torch.Tensor, exact: torch.Tensor, allowed: torch.Tensor) -> str:
    """What a variance that is too far from the exact one most likely got wrong."""
    n = x.shape[-1]
    sample = exact * n / max(n - 1, 1)
    if n > 1 and bool(((got.double() - sample).abs() <= allowed + EPS32 * sample).all()):
        return "that is the sample variance (divided by n - 1): the population variance divides by n"
    relative = float(((got.double() - exact).abs() / exact.clamp(min=1e-30)).max())
    if float(x.double().mean(dim=-1).abs().max()) < 1 and relative > 1e-2:
        return ("with mean 0 there is no cancellation to fear: compute the mean of the squared deviations from "
                "each row's own mean, along the last dimension")
    return ("E[x**2] and E[x]**2 are both about mean**2, so their difference keeps only the digits below float32's "
            "rounding of mean**2 (catastrophic cancellation), and so does any sum of squares taken about a number "
            "far from a row's mean: subtract something close to each row's own mean before squaring")


register(Exercise(NOTEBOOK, "stable_variance", check_stable_variance))
