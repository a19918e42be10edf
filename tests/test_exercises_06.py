"""Exercise checks of notebook 06: the checks' references against independent oracles, the inputs they draw
against the findings that shaped them, and answers that the generic tests cannot judge (ones that raise).

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.
"""

import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
import torch

from conftest import host
from utils.exercises import ExerciseFailed, inside_check, nb06
from utils.exercises.answers import nb06 as answers06

U32 = 2.0**-24  # float32's unit of rounding
EPS32 = 2 * U32


def _gamma(n: int) -> float:
    return n * U32 / (1 - n * U32)


def _sequential_result(x: torch.Tensor, y: torch.Tensor) -> float:
    """The check's own running float32 sum of x * y."""
    with inside_check():
        return nb06.float32_results(x, y, 0)["a sequential float32 loop"]


def _exact_and_terms(x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """x . y and sum |x_i y_i|, exactly (math.fsum of float32 products, which float64 holds exactly)."""
    products = [float(a) * float(b) for a, b in zip(x.tolist(), y.tolist())]
    return math.fsum(products), math.fsum(abs(p) for p in products)


class Test06_precision:
    """The checks of solutions/06_precision.ipynb (the notebook's stem in the test ids: `pytest -k 06_precision`)."""

    # ------------------------------------------------------------ exercise 1: dot_tolerance
    @host
    @pytest.mark.parametrize(("n", "times_sqrt_n"), [(2**10, 2.5), (2**20, 80)])
    def test_a_running_sum_of_equal_terms_errs_past_the_sqrt_n_estimate_and_within_the_guarantee(self, n, times_sqrt_n):
        """The review's finding (reviews/2026-11-28/engineer-06-07.md, W6-1), measured again: n copies of 0.1 added one
        after another err by 2.5 times sqrt(n) eps sum|x_i y_i| at 2**10, and by 81 times at 2**20; the check's chosen
        cases stand on it.  gamma_n, the guarantee, holds."""
        x, y = (t[0] for t in nb06.Dot("full", n, 0.1, 1.0, 0).inputs())
        got = _sequential_result(x, y)
        exact, terms = float(x.double().sum()), float(x.double().abs().sum())  # y is all ones: the products are exact
        assert abs(got - exact) > times_sqrt_n * math.sqrt(n) * EPS32 * terms
        assert abs(got - exact) <= _gamma(n) * terms


    @host
    @pytest.mark.parametrize("kind", nb06.DOT_KINDS)
    @pytest.mark.parametrize("n", [0, 1, 17, 100])
    def test_a_dot_products_description_is_the_code_that_makes_it(self, kind, n):
        """A failure names its input as code a student can run: that code makes the very x and y the check used."""
        dot = nb06.Dot(kind, n, 0.7, -3.7, 5)
        made: dict = {"torch": torch}
        exec(str(dot), made)  # noqa: S102 -- the check's own description of its input
        x, y = (t[0] for t in dot.inputs())
        assert torch.equal(made["x"], x) and torch.equal(made["y"], y), str(dot)

    @host
    def test_the_worst_value_at_99_terms_errs_past_the_sqrt_n_estimate(self):
        """The chosen case just past 64 terms: its value's running sum errs by more than sqrt(n) eps sum|x_i|."""
        x, y = (t[0] for t in nb06.Dot("worst", 99, 1.0, 1.0, 0).inputs())
        got = _sequential_result(x, y)
        exact, terms = _exact_and_terms(x, y)
        assert math.sqrt(99) * EPS32 * terms < abs(got - exact) <= _gamma(99) * terms


    @host
    def test_a_balance_that_climbs_and_falls_back_errs_by_far_more_than_gamma_n_times_its_largest_term(self):
        """The chosen balance case: a running total of 3072 copies of 0.1, then 1024 of -0.3, ends near 0 and errs by
        over 100 times gamma_n times its largest term, which is why atol must come from the sum of the terms."""
        x, y = (t[0] for t in nb06.Dot("balance", 2**12, 0.1, 1.0, 0).inputs())
        got = _sequential_result(x, y)
        exact, terms = _exact_and_terms(x, y)
        assert abs(got - exact) > 100 * _gamma(2**12) * float(x.abs().max())
        assert abs(got - exact) <= _gamma(2**12) * terms


    @host
    @pytest.mark.parametrize("kind", nb06.DOT_KINDS)
    @pytest.mark.parametrize("n", [0, 1, 2, 7, 100, 4097])
    def test_every_order_the_check_uses_is_a_float32_sum_within_the_guarantee(self, kind, n):
        """Each of the check's float32 results of x . y lies within gamma_n sum|x_i y_i| of the exact value (against
        math.fsum), and the sequential one is a float32 loop written out."""
        x, y = (t[0].contiguous() for t in nb06.Dot(kind, n, 0.7, -3.7, 5).inputs())
        exact, terms = _exact_and_terms(x, y)
        with inside_check():
            results = nb06.float32_results(x, y, 5)
        assert len(results) == 7
        for how, got in results.items():
            assert abs(got - exact) <= _gamma(n) * terms, how
        if n <= 100:
            total = np.float32(0)
            for p in (x * y).numpy():
                total = np.float32(total + p)
            assert results["a sequential float32 loop"] == float(total)


    @host
    def test_the_guarantee_catches_bfloat16_inputs_with_room_to_spare_and_sixteen_times_it_does_not(self):
        """At the longest length the bfloat16 part asks about (256), of 16 draws (half must fail): gamma_n sum|x_i y_i|
        rejects at least 12 in each of 10 seeds, twice it at least 10, and 16 times it fewer than 7 on average."""
        caught = {1: [], 2: [], 16: []}
        for seed in range(10):
            xs, ys = nb06.Dot("randn", nb06.CATCH_UP_TO, 1.0, 1.0, seed).inputs(nb06.CATCH_DRAWS)
            errors = []
            for x, y in zip(xs, ys):
                exact, terms = _exact_and_terms(x, y)
                bf16, _ = _exact_and_terms(x.bfloat16().float(), y.bfloat16().float())
                errors.append(abs(bf16 - exact) / (_gamma(nb06.CATCH_UP_TO) * terms))
            for times, counts in caught.items():
                counts.append(sum(error > times for error in errors))
        assert min(caught[1]) >= 12 and min(caught[2]) >= 10 and sum(caught[16]) < 7 * len(caught[16]), caught


    # ---------------------------------------------------------------- exercise 2: rms
    @host
    @pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
    def test_rms_exact_is_the_rms_of_each_row(self, layout):
        """rms_exact against math.fsum, row by row, on a tensor with a row of fp16's largest values and rows of its
        smallest."""
        x = nb06.Activations((2, 3, 5), -7.5, 4.5, "largest", layout, 1).tensor()
        assert x.dtype == torch.float16 and (layout == "contiguous") == x.is_contiguous()
        with inside_check():
            got = nb06.rms_exact(x)
        for index in np.ndindex(*x.shape[:-1]):
            row = [float(v) for v in x[index]]
            assert float(got[index]) == pytest.approx(math.sqrt(math.fsum(v * v for v in row) / len(row)), rel=1e-14)


    @host
    @pytest.mark.parametrize(("answer", "raised", "named"), [
        (lambda x: x.float().pow(2).mean(dim=1).sqrt().half(), IndexError, "shape (1,)"),
        (lambda x: x.view(-1, x.shape[-1]).float().pow(2).mean(-1).sqrt().half().view(x.shape[:-1]), RuntimeError,
         "view"),
    ], ids=["mean over dim 1: 2-D only", "view(-1, d) of a view"])
    def test_an_rms_that_raises_reaches_the_student_with_the_input_that_made_it_raise(self, answer, raised, named):
        """Answers that the generic tests cannot hold (they raise rather than FAIL): an RMS over dim 1 raises for a 1-D
        input, and view() for a transposed one; the student sees the error with the smallest such input."""
        with pytest.raises(raised) as error:
            nb06.check_rms(answer)
        assert not isinstance(error.value, ExerciseFailed)
        notes = " ".join(getattr(error.value, "__notes__", []))
        assert "rms: your function raised this for an fp16 tensor of" in notes and named in notes, notes


    # ---------------------------------------------------------------- exercise 3: stable_variance
    ROWS = (nb06.Row("normal", 1e4, 1.0), nb06.Row("ramp", -3.2, 0.5), nb06.Row("constant", 1e6, 0.0),
            nb06.Row("spike", 0.0, 1.0), nb06.Row("outlier last", 1e3, 1e-3))


    @host
    @pytest.mark.parametrize("transposed", [False, True])
    def test_variance_exact_is_the_population_variance_in_exact_arithmetic(self, transposed):
        """variance_exact against statistics.pvariance of the float32 values as fractions (exact)."""
        x = nb06.Readings(37, self.ROWS, transposed, 3).tensor()
        with inside_check():
            got = nb06.variance_exact(x)
        for i in range(x.shape[0]):
            want = float(statistics.pvariance([Fraction(float(v)) for v in x[i]]))
            assert float(got[i]) == pytest.approx(want, rel=1e-12, abs=1e-300)


    @host
    def test_variance_allowed_admits_two_passes_and_welford_and_not_the_one_pass_formula(self):
        """On rows of mean 1e4 and spread 1 (n = 100): two passes and Welford's update err by less than a tenth of
        what variance_allowed admits, and E[x**2] - E[x]**2 by more than ten times it."""
        x = nb06.Readings(100, (nb06.Row("normal", 1e4, 1.0), nb06.Row("sorted", -1e4, 1.0)), False, 0).tensor()
        with inside_check():
            exact, allowed = nb06.variance_exact(x), nb06.variance_allowed(x)
        for right in (answers06.two_pass, answers06.welford):
            assert bool(((right(x).double() - exact).abs() < allowed / 10).all()), right.__name__
        assert bool(((answers06.one_pass(x).double() - exact).abs() > 10 * allowed).all())
