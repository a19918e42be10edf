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
from utils.exercises import Checker, ExerciseFailed, inside_check, nb06
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
    @pytest.mark.parametrize("kind", (*nb06.DOT_KINDS, "apart", "met"))
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
        # adversary 06, round 9: a loop over the rows, whose torch.stack of no rows raises
        (lambda x: torch.stack([row.float().pow(2).mean().sqrt() for row in x.reshape(-1, x.shape[-1])]).half().reshape(
            x.shape[:-1]), RuntimeError, "shape (0,"),
    ], ids=["mean over dim 1: 2-D only", "view(-1, d) of a view", "a loop over the rows: none"])
    def test_an_rms_that_raises_reaches_the_student_with_the_input_that_made_it_raise(self, answer, raised, named):
        """Answers that the generic tests cannot hold (they raise rather than FAIL): an RMS over dim 1 raises for a 1-D
        input, view() for a transposed one, and torch.stack for no rows; the student sees the error with the smallest
        such input."""
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


    # ------------------------------------------------ the adversary's findings (round 1), as the checks' inputs
    @host
    def test_at_the_longest_length_256_draws_tell_a_bound_that_catches_half_from_one_that_does_not(self):
        """The bfloat16 part at n = 256, on the check's own 256 draws: 4 n eps sum|x_i y_i| (it catches about 59%)
        rejects more than half, 6 times it (about 42%: 16 draws saw 8 of 16, and it passed) fewer than half."""
        xs, ys = nb06.Dot("randn", nb06.CATCH_UP_TO, 1.0, 1.0, 0).inputs(nb06.CATCH_DRAWS_LONGEST)
        exact = (xs.double() * ys.double()).sum(-1)
        terms = (xs.double() * ys.double()).abs().sum(-1)
        rounded = (xs.bfloat16().double() * ys.bfloat16().double()).sum(-1)
        share = {times: float(((rounded - exact).abs() > times * nb06.CATCH_UP_TO * EPS32 * terms).double().mean())
                 for times in (4, 6)}
        assert share[4] > 0.5 > share[6], share

    @host
    @pytest.mark.parametrize("kind", ["flipped", "near"])
    def test_at_the_longest_length_equal_terms_that_do_not_look_alike_err_past_every_sqrt_n_bound_that_catches(
            self, kind):
        """Adversary 06, round 2: tolerances that keep the guarantee for inputs of one sign, of exactly equal or of
        equally large terms, and take C sqrt(n) eps otherwise, passed. The chosen cases at 2**20: one term of the other
        sign, and nearly equal terms, err by more than 80 sqrt(n) eps sum|x_i y_i| (C = 80 catches about half of the
        bfloat16 inputs at n = 256: a larger C cannot pass), and within gamma_n."""
        n = nb06.DOT_LONGEST
        x, y = (t[0] for t in nb06.Dot(kind, n, 0.7, 1.0, 0).inputs())
        products = (x * y).numpy()
        got = float(np.cumsum(products, dtype=np.float32)[-1])
        exact = float((x.double() * y.double()).sum())
        terms = float((x.double() * y.double()).abs().sum())
        assert bool((x < 0).any()) == (kind == "flipped") and len(set(products.tolist())) > 1
        assert 80 * math.sqrt(n) * EPS32 * terms < abs(got - exact) <= _gamma(n) * terms

    @host
    def test_one_value_far_out_then_terms_of_both_signs_err_by_most_of_the_guarantee(self):
        """Adversary 06, round 4: min(n, C sqrt(n)) eps with C = 150 or 200 (above every case at 2**20 but this one),
        and sqrt(n) for products of both signs, passed. One value far out, then terms of both signs in equal number
        that each round by nearly half a step the same way: a running sum errs by over 0.75 of gamma_n sum|x_i y_i|
        at 2**20 (over 400 times the sqrt(n) estimate), and by over 50 times it at 2**14; within gamma_n."""
        for n, times_sqrt_n in ((2**14, 50), (nb06.DOT_LONGEST, 400)):
            x, y = (t[0] for t in nb06.Dot("far", n, 0.7, 1.0, 0).inputs())
            got = _sequential_result(x, y)
            exact, terms = _exact_and_terms(x, y)
            assert abs(float((x > 0).double().mean()) - 0.5) < 0.01
            assert max(times_sqrt_n * math.sqrt(n) * EPS32, 0.75 * _gamma(n)) * terms < abs(got - exact)
            assert abs(got - exact) <= _gamma(n) * terms

    @host
    def test_x_dot_x_of_a_decaying_vector_errs_past_what_the_means_of_x_and_y_predict(self):
        """x = y = 1 / (1 + i): a running float32 sum errs by more than gamma_n n mean|x| mean|y| (the adversary's
        tolerance), and within gamma_n sum|x_i y_i|."""
        n = 2**14
        x, y = (t[0] for t in nb06.Dot("decay", n, 1.0, 1.0, 0).inputs())
        got = _sequential_result(x, y)
        exact, terms = _exact_and_terms(x, y)
        means = n * float(x.double().abs().mean() * y.double().abs().mean())
        assert 10 * _gamma(n) * means < abs(got - exact) <= _gamma(n) * terms

    @host
    def test_zero_padding_in_front_hides_every_term_from_the_first_1024(self):
        """The chosen padded case: its first 1024 terms are 0 (a size taken from them is 0); its float32 sum errs."""
        x, y = (t[0] for t in nb06.Dot("padded", 2**12 + 1, 0.1, 1.0, 0).inputs())
        got = _sequential_result(x, y)
        exact, terms = _exact_and_terms(x, y)
        assert not bool(x[:1024].any()) and 0 < abs(got - exact) <= _gamma(x.numel()) * terms

    @host
    @pytest.mark.parametrize(("shape", "seed"), [((6553, 5), 4), ((5461, 6), 5)])
    def test_many_short_rows_show_fp16_roundings_adding_up_past_one(self, shape, seed):
        """The chosen cases of short rows: scaling each row by its largest value in fp16 errs past 2**-10 in at least
        one row of each; the float32 solution stays within one fp16 rounding, 2**-11, of every row."""
        x = nb06.Activations(shape, -1.0, 3.0, "", "contiguous", seed).tensor()
        assert x.numel() < 32768  # no threads in PyTorch's CPU reductions
        with inside_check():
            want = nb06.rms_exact(x)
        wrong = (answers06.scaled_by_largest_in_fp16(x).double() - want).abs() / want
        right = (x.float().pow(2).mean(dim=-1).sqrt().half().double() - want).abs() / want
        assert float(wrong.max()) > 2.0**-10 and float(right.max()) <= 2.0**-11 * (1 + 2.0**-10)

    @host
    @pytest.mark.parametrize(("shape", "seed"), [((4095, 8), 6), ((3276, 10), 7)])
    def test_short_rows_with_their_rms_just_above_a_power_of_2_show_three_fp16_roundings(self, shape, seed):
        """The chosen cases of short rows whose RMS lies just above a power of 2 (adversary 06, round 3): the RMS does,
        in every row; scaling by the largest value in fp16, with the squares in float32 and the product in fp16, errs
        past 2**-10 in at least one row of each; the float32 solution stays within 2**-11, and an exact power-of-2
        scale with the rest in fp16 within 2**-10."""
        x = nb06.Activations(shape, -1.0, 3.0, "", "contiguous", seed, True).tensor()
        assert x.numel() < 32768  # no threads in PyTorch's CPU reductions
        with inside_check():
            want = nb06.rms_exact(x)
        above = want / torch.exp2(torch.floor(torch.log2(want)))
        assert bool(((above > 1) & (above < 1 + 2.0**-9)).all())
        wrong = (answers06.scaled_by_largest_in_fp16_squares_in_float32(x).double() - want).abs() / want
        right = (x.float().pow(2).mean(dim=-1).sqrt().half().double() - want).abs() / want
        scaled = (answers06.rms_scaled_by_a_power_of_2(x).double() - want).abs() / want
        assert float(wrong.max()) > 2.0**-10 and float(right.max()) <= 2.0**-11 and float(scaled.max()) <= 2.0**-10

    @host
    @pytest.mark.parametrize("n", [2, 3])
    def test_short_rows_of_large_means_catch_a_shift_by_the_mean_rounded_to_bfloat16(self, n):
        """The chosen batches of 128 rows of n values, means 1e5 to 1e6, spread 0.1: the shift by a bfloat16-rounded
        mean errs past variance_allowed in some row; two passes and Welford's update stay below a tenth of it."""
        rows = tuple(nb06.Row("normal", (-1) ** k * 10 ** (5 + k / 127), 0.1) for k in range(128))
        x = nb06.Readings(n, rows, False, n).tensor()
        with inside_check():
            exact, allowed = nb06.variance_exact(x), nb06.variance_allowed(x)
        assert bool(((answers06.shifted_by_bfloat16_mean(x).double() - exact).abs() > allowed).any())
        for right in (answers06.two_pass, answers06.welford):
            assert bool(((right(x).double() - exact).abs() < allowed / 10).all()), right.__name__

    @host
    @pytest.mark.parametrize(("n", "rows", "spread"), [(1000, 32, 1.0), (2000, 16, 0.1)])
    def test_wide_rows_of_large_means_catch_the_one_pass_formula(self, n, rows, spread):
        """Adversary 06, round 2: two passes up to 512 values, the one-pass formula beyond, passed. The chosen batches
        of wide rows (means 1e4 to 1e6): E[x**2] - E[x]**2 errs past variance_allowed in some rows of each; two passes,
        Welford's update and the shifts stay below a tenth of it; each batch under 32768 values (no threads)."""
        step = 15 if rows == 32 else 7.5
        x = nb06.Readings(n, tuple(nb06.Row("normal", (-1) ** k * 10 ** (4 + k / step), spread) for k in range(rows)),
                          False, n).tensor()
        assert x.numel() < 32768
        with inside_check():
            exact, allowed = nb06.variance_exact(x), nb06.variance_allowed(x)
        assert int(((answers06.one_pass(x).double() - exact).abs() > allowed).sum()) >= 3
        for right in (answers06.two_pass, answers06.welford, answers06.shifted_by_first_value, answers06.merged_chunks):
            assert bool(((right(x).double() - exact).abs() < allowed / 10).all()), right.__name__

    @host
    @pytest.mark.parametrize(("call", "seen"), [
        (lambda x: torch.ops.aten.var.correction(x, [-1], correction=0), ("library", "var")),
        (lambda x: torch.ops.aten.std_mean.correction(x, [-1], correction=0), ("library", "std_mean")),
        (lambda x: torch.native_layer_norm(x, [x.shape[-1]], None, None, 0.0), ("library", "native_layer_norm")),
        (lambda x: torch.nn.functional.group_norm(x[None], 1), ("library", "group_norm")),
        (lambda x: np.from_dlpack(x), ("left_torch", "__dlpack__")),
        (lambda x: torch.ops.aten._local_scalar_dense(x[0, 0]), ("left_torch", "_local_scalar_dense")),
        (lambda x: x.bfloat16(), ("narrow", "bfloat16")),
        (lambda x: hasattr(x, "__cuda_array_interface__"), ("left_torch", "__cuda_array_interface__")),
        (lambda x: x.view(torch.int32).numpy(), ("left_torch", "numpy")),
        (lambda x: (x * 2**10).long().contiguous().reshape(-1)[:4].tolist(), ("left_torch", "tolist")),
        (lambda x: torch.empty(x.shape, dtype=torch.int32).copy_(x).sum().item(), ("left_torch", "item")),
        (lambda x: x.untyped_storage().tolist(), ("left_torch", "untyped_storage")),
    ], ids=["aten.var.correction", "aten.std_mean", "native_layer_norm", "group_norm", "np.from_dlpack",
            "aten._local_scalar_dense", "bfloat16", "__cuda_array_interface__", "int32 view", "long", "copy_ to int32",
            "untyped_storage"])
    def test_the_operation_watch_sees_what_computes_a_variance_or_leaves_float32(self, call, seen):
        """OperationWatch names an operator overload by its name before the '.', counts every normalization as a
        library variance, and DLPack and item's kernel as leaving torch (each passed the old check); and the CUDA
        array interface, through which cupy.asarray reads a CUDA tensor (adversary 06, round 2: a float64 CuPy
        variance was unseen; here a CPU tensor only asks for it, which is what the watch records); and an integer
        tensor made from x's values or bits, and x's storage, leaving torch (adversary 06, round 32)."""
        watch = nb06.OperationWatch()
        with watch:
            call(torch.randn(3, 5) + 1e4)
        what, name = seen
        assert name in getattr(watch, what), vars(watch)

    @host
    @pytest.mark.parametrize("call", [
        lambda x: x.argmax(dim=-1).tolist(),
        lambda x: int((x > 1e4).sum()),
        lambda x: x.sort(dim=-1).indices[0, 0].item(),
        lambda x: len(torch.nonzero(x > 0).tolist()),
    ], ids=["argmax", "a count", "sort's indices", "nonzero"])
    def test_positions_and_counts_of_a_float_tensor_may_leave_torch(self, call):
        """An integer tensor of positions or counts (argmax, a sum of a comparison, sort's indices) holds no values of
        x: a right answer may read it into Python (adversary 06, round 32's fix counts the integers that carry x)."""
        watch = nb06.OperationWatch()
        with watch:
            call(torch.randn(3, 5) + 1e4)
        assert not watch.left_torch, vars(watch.seen)

    @host
    def test_a_thread_of_the_low_level_module_is_watched(self):
        """A thread started by _thread.start_new_thread, the caller waiting on a _thread lock, runs under the watch
        (adversary 06, round 32: torch.var there PASSed)."""
        import _thread

        watch = nb06.OperationWatch()
        done = _thread.allocate_lock()
        done.acquire()

        def work():
            try:
                torch.var(torch.randn(3, 5), dim=-1)
            finally:
                done.release()

        with watch, nb06._in_new_threads(watch):
            _thread.start_new_thread(work, ())
            done.acquire()
        assert "var" in watch.library, vars(watch.seen)

    @host
    def test_the_rearranged_rows_share_every_float32_sum_and_not_their_results(self):
        """The again steps' rows, then the same rows in another order (adversary 06, round 32: a result kept by the
        bits of x's float32 sum PASSed): every float32 sum of the values, of their magnitudes and of their squares is
        the same, and the variances and RMS of the rows are not in the same order."""
        pairs = [(nb06.Readings(17, nb06.RAMPS, False, 0).tensor(),
                  nb06.Readings(17, nb06.RAMPS[1:] + nb06.RAMPS[:1], False, 0).tensor()),
                 (nb06.Given(nb06.GIVEN_ROWS).tensor().float(),
                  nb06.Given(nb06.GIVEN_ROWS[1:] + nb06.GIVEN_ROWS[:1]).tensor().float())]
        for x, y in pairs:
            for f in (lambda t: t.sum(), lambda t: t.abs().sum(), lambda t: t.square().sum()):
                assert torch.equal(f(x), f(y))
            with inside_check():
                assert not torch.equal(nb06.variance_exact(x), nb06.variance_exact(y))
                assert not torch.equal(nb06.rms_exact(x), nb06.rms_exact(y))
        made: dict = {"torch": torch}
        exec(str(nb06.Given(nb06.GIVEN_ROWS)), made)  # noqa: S102 -- the check's own description of its input
        assert torch.equal(made["x"], nb06.Given(nb06.GIVEN_ROWS).tensor())

    @host
    def test_a_generator_state_set_back_at_each_call_repeats_and_drawing_does_not(self):
        """settings.Repeats (adversary 06, round 32: a state saved at import, set back at each call, PASSed): with a
        draw of the caller's before each call, a state after a call equal to one after an earlier call is a state set
        back; drawing, or drawing nothing, never repeats."""
        from utils.exercises import settings

        saved = torch.get_rng_state()
        try:
            for answer, repeats_at in ((lambda: torch.rand(3), None), (lambda: None, None),
                                       (lambda: (torch.set_rng_state(saved), torch.rand(3)), 1)):
                repeats, seen = settings.Repeats(), []
                for _ in range(3):
                    repeats.draw()
                    answer()
                    seen.append(repeats.repeated())
                assert seen.index(True) == repeats_at if repeats_at is not None else not any(seen), seen
        finally:
            torch.set_rng_state(saved)

    @host
    @pytest.mark.parametrize("hidden", [
        (lambda x: torch.var(x, dim=-1), ("library", "var")),
        (lambda x: x.double(), ("float64", "_to_copy")),
        (lambda x: x.to(torch.float64), ("float64", "_to_copy")),
        (lambda x: x[0, 0].item(), ("left_torch", "_local_scalar_dense")),
        (lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]), ("library", "native_layer_norm")),
    ], ids=["torch.var", "double", "to(float64)", "item", "layer_norm"])
    def test_the_operation_watch_sees_calls_made_with_torch_function_handling_turned_off(self, hidden):
        """Under torch._C.DisableTorchFunction() no TorchFunctionMode sees a call (adversary 06, round 14: torch.var and
        float64 passed); the watch's TorchDispatchMode still does, by the aten operator's name."""
        call, (what, name) = hidden
        watch = nb06.OperationWatch()
        with watch, torch._C.DisableTorchFunction():
            call(torch.randn(3, 5) + 1e4)
        assert not getattr(watch.seen, what)  # unseen at the torch-function level ...
        assert name in getattr(watch, what), vars(watch.below.seen)  # ... and seen at the dispatcher

    @host
    @pytest.mark.parametrize(("check", "name"), [(check, name) for check, table in answers06.KNOWN_EVASIONS.items()
                                                 for name in table])
    def test_the_known_evasions_are_still_unseen(self, check, name, capsys):
        """The evasions the answers module lists as known still PASS (when one FAILs, it belongs in WRONG)."""
        getattr(nb06, check)(answers06.KNOWN_EVASIONS[check][name])
        assert capsys.readouterr().out.startswith("PASS")

    @host
    @pytest.mark.parametrize("n", sorted(nb06.PINNED))
    def test_two_or_three_products_that_round_the_same_way_err_past_n_minus_1_roundings(self, n):
        """The chosen "pinned" dot products (adversary 06, round 14): a running float32 sum errs by more than
        (n - 1) u sum|x_i y_i|, the additions without the products (at n = 2 by more than u max|x_i y_i| on top), and
        within the guarantee."""
        x, y = (t[0] for t in nb06.Dot("pinned", n, 1.0, 1.0, 0).inputs())
        exact, terms = _exact_and_terms(x, y)
        error = abs(_sequential_result(x, y) - exact)
        largest = max(abs(float(a) * float(b)) for a, b in zip(x.tolist(), y.tolist()))
        assert (n - 1) * U32 * terms + (U32 * largest if n == 2 else 0.0) < error <= _gamma(n) * terms

    @host
    def test_rows_of_5003_values_catch_a_dropped_tail_and_a_negative_one_pass_variance(self):
        """The chosen rows of 5003 values (adversary 06, round 14: no row was wider than 4096): two passes over the
        first 4096 values are off by more than allowed, and E[x**2] - E[x]**2 is negative in a constant row."""
        x = nb06.Readings(5003, (nb06.Row("outlier last", 0.0, 1.0), nb06.Row("ramp", 0.0, 1.0),
                                 nb06.Row("sorted", 1.0, 1.0), nb06.Row("constant", 1e4, 0.0),
                                 nb06.Row("constant", -3.7, 0.0), nb06.Row("constant", 0.003162, 0.0)),
                          False, 5003).tensor()
        with inside_check():
            exact, allowed = nb06.variance_exact(x), nb06.variance_allowed(x)
        first = x[:, :4096]
        dropped = (first - first.mean(dim=-1, keepdim=True)).square().mean(dim=-1)
        assert bool(((dropped.double() - exact).abs() > allowed).any())
        assert bool((x.square().mean(dim=-1) - x.mean(dim=-1).square() < 0).any())

    @host
    def test_rows_past_8192_values_catch_a_tail_dropped_past_the_last_whole_chunk_of_8192(self):
        """The chosen rows of 12287 values (adversary 06, round 32: chunks of 8192, the tail dropped, PASSed rows of
        5003): two passes over the first 8192 values are off by more than allowed."""
        x = nb06.Readings(nb06.VARIANCE_WIDE, (nb06.Row("ramp", 0.0, 1.0), nb06.Row("outlier last", 0.0, 1.0)), False,
                          nb06.VARIANCE_WIDE).tensor()
        with inside_check():
            exact, allowed = nb06.variance_exact(x), nb06.variance_allowed(x)
        first = x[:, :8192]
        dropped = (first - first.mean(dim=-1, keepdim=True)).square().mean(dim=-1)
        assert bool(((dropped.double() - exact).abs() > allowed).all())

    @host
    def test_one_product_of_length_1_errs_by_almost_u_of_itself(self):
        """The chosen case (1 + 2**-12)**2 = 1 + 2**-11 + 2**-24: float32 rounds the tie to even, down by 2**-24, more
        than 0.99 u of the product: a constant below 1 times n u sum|x_i y_i| fails there (adversary 06, round 9)."""
        x, y = (t[0] for t in nb06.Dot("full", 1, 1 + 2**-12, 1 + 2**-12, 0).inputs())
        exact, terms = _exact_and_terms(x, y)
        error = abs(_sequential_result(x, y) - exact)
        assert 0.99 * U32 * terms < error <= _gamma(1) * terms

    @host
    @pytest.mark.parametrize(("n", "seed", "draws"), [(1, 2, nb06.CATCH_DRAWS), (16, 0, nb06.CATCH_DRAWS),
                                                     (nb06.CATCH_UP_TO, 1, nb06.CATCH_DRAWS_LONGEST)])
    def test_at_the_smallest_scales_a_fixed_atol_lets_bfloat16_through_and_the_guarantee_does_not(self, n, seed, draws):
        """The chosen catch cases of both factors 2**-10 (adversary 06, round 9): the guarantee still catches more than
        half of the bfloat16 inputs there, and n eps sum|x_i y_i| with an atol of 1e-5 or 1e-6 of its own (added, or as
        its floor) catches fewer than half; the floor 1e-8 too, at n = 1 and 16."""
        x, y = nb06.Dot("randn", n, 2**-10, 2**-10, seed).inputs(draws)
        floors = (1e-6, 1e-8) if n < nb06.CATCH_UP_TO else (1e-6,)
        caught = {name: 0 for name in ("guarantee", "added", *floors)}
        for xi, yi in zip(x, y):
            exact, terms = _exact_and_terms(xi, yi)
            bfloat16 = _exact_and_terms(xi.bfloat16().float(), yi.bfloat16().float())[0]
            bound = n * EPS32 * terms
            for name, allowed in (("guarantee", _gamma(n) * terms), ("added", bound + 1e-5),
                                  *((f, max(bound, f)) for f in floors)):
                caught[name] += abs(bfloat16 - exact) > allowed
        assert 2 * caught.pop("guarantee") >= draws
        assert all(2 * c < draws for c in caught.values()), caught

    @host
    @pytest.mark.parametrize("first", [1024, 4096, 8192])
    def test_a_wide_row_shows_an_rms_that_reads_its_first_values_only(self, first):
        """The chosen rows of 10007 values (adversary 06, round 9: no row was wider than 1000; round 14: than 3000):
        the RMS of the first 1024, 4096 or 8192 values (a tail past whole chunks dropped), even computed exactly, is off
        the row's by more than one fp16 step."""
        x = nb06.Activations((3, 10007), -1.0, 1.0, "", "contiguous", 8).tensor().double()
        whole, part = x.square().mean(dim=-1).sqrt(), x[:, :first].square().mean(dim=-1).sqrt()
        assert bool(((part - whole).abs() > 2 * nb06.RMS_RELATIVE_ERROR * whole).any())

    @host
    def test_a_row_of_2_17_small_values_and_one_large_shows_squares_that_fp16_loses(self):
        """The chosen row of 2**17 values, 1.7e-4 but one 1.0 (adversary 06, round 14): scaled by a power of 2
        (exact), the squares in fp16 lose the small ones, off by more than one fp16 step; in float32 they do not."""
        x = nb06.Activations((1, 2**17), 0.0, 0.0, "one large", "contiguous", 9).tensor()
        assert float(x.abs().max()) == 1.0 and float(x.abs().min()) == pytest.approx(1.7e-4, rel=1e-3)
        with inside_check():
            exact = nb06.rms_exact(x)
        fp16 = x.pow(2).float().mean(dim=-1).sqrt()  # the largest is 1: scaled by a power of 2, the same squares
        float32 = x.float().pow(2).mean(dim=-1).sqrt()
        assert float((fp16 - exact).abs() / exact) > 1.5 * nb06.RMS_RELATIVE_ERROR  # past one step after rounding
        assert float((float32 - exact).abs() / exact) < nb06.RMS_RELATIVE_ERROR / 4

    @host
    @pytest.mark.parametrize(("check", "answer", "hinted"), [
        ("check_rms", lambda x: (x.float().square().sum(dim=-1) / (x.shape[-1] - 1)).sqrt().half(), "a division"),
        ("check_rms", lambda x: x.float().abs().mean(dim=-1).half(), "the formula is off"),
        ("check_rms", answers06.scaled_by_largest_in_fp16, "each step computed in fp16"),
        ("check_stable_variance", answers06.squares_about_first_value, "twice the variance"),
        ("check_stable_variance", answers06.shifted_by_fp16_mean, "fp16 ends at 65504"),
        ("check_stable_variance", answers06.two_pass_in_fp16, "computed in fp16 or bfloat16"),
        ("check_stable_variance", answers06.shifted_by_bfloat16_mean, "computed in fp16 or bfloat16"),
        ("check_stable_variance", answers06.mean_without_keepdim, "which number do your squares measure from"),
        ("check_rms", answers06.WRONG_RMS["the fp16 norm, then divides"], "a norm"),
        # adversary 06, round 9: a row read in part was called a precision bug; a tolerance a factor n short was told
        # that equal terms round the same way; a fixed atol, that it was too loose
        ("check_rms", answers06.WRONG_RMS["the first 1024 values of a row only"], "every value of the last dimension"),
        ("check_rms", answers06.WRONG_RMS["the first 512 values of a row only"], "every value of the last dimension"),
        ("check_dot_tolerance", answers06.WRONG_TOLERANCES["n u max|x| max|y|: a factor n short of the terms"],
         "every product and every addition rounds"),
        ("check_dot_tolerance", answers06.WRONG_TOLERANCES["n eps sum|x_i y_i|, at least 1e-8"],
         "does not shrink with the terms"),
        ("check_dot_tolerance", answers06.WRONG_TOLERANCES["n eps sum|x_i y_i| plus assert_close's atol 1e-5"],
         "does not shrink with the terms"),
        # either hint fits (squares about a number far from the row's mean cancel; they measure from the wrong number),
        # and which one a student sees depends on the row that shrinking reaches within its time budget: on a busy
        # machine, a row of mean 0 beside one of a large mean, where the result is off by more than three digits
        ("check_stable_variance", answers06.shifted_by_the_batch_mean,
         ("catastrophic cancellation", "which number do your squares measure from")),
    ], ids=["rms: d - 1", "rms: mean |x|", "rms: scaled in fp16", "variance: about the first value",
            "variance: fp16 shift", "variance: fp16 two passes", "variance: bfloat16 shift", "variance: no keepdim",
            "rms: fp16 norm", "rms: first 1024 values", "rms: first 512 values", "dot: n u max|x| max|y|",
            "dot: atol at least 1e-8", "dot: atol 1e-5 added", "variance: batch-mean shift"])
    def test_a_hint_names_the_mistake_the_answer_made(self, check, answer, hinted):
        """Hints the adversary found misleading (an inf from a division blamed on overflow, a formula error on fp16's
        bits, twice the variance at n = 2 called the sample variance, an fp16 inf called a division by 0, fp16 steps
        and a missing keepdim blamed on the formula's cancellation), each on its answer."""
        with pytest.raises(ExerciseFailed) as failed:
            getattr(nb06, check)(answer)
        hint = str(failed.value).split("hint:")[1]
        assert any(h in hint for h in ((hinted,) if isinstance(hinted, str) else hinted)), failed.value

    @host
    def test_a_plateau_of_cancelling_terms_errs_past_any_sqrt_n_bound_that_catches_bfloat16(self):
        """The chosen "plateau" dot product at 2**20 (round 23's adversary: c sqrt(n) eps for products that cancel with
        no term far out PASSed for c up to 30): its terms cancel (|x . y| < sum|x_i y_i| / 4), no term is 1000 times the
        median, and a running float32 sum errs by more than 80 sqrt(n) eps sum|x_i y_i| (80: the largest C whose
        sqrt(n) bound still catches half of the bfloat16 inputs at n = 256), within the guarantee."""
        n = nb06.DOT_LONGEST
        x, y = (t[0] for t in nb06.Dot("plateau", n, 0.1, 1.0, 0).inputs())
        products = x.double() * y.double()
        exact, terms = float(products.sum()), float(products.abs().sum())
        error = abs(_sequential_result(x, y) - exact)
        assert abs(exact) < terms / 4
        assert float(products.abs().max()) < 1000 * float(products.abs().median())
        assert 80 * math.sqrt(n) * EPS32 * terms < error <= _gamma(n) * terms

    @pytest.mark.parametrize("check", ["check_rms", "check_stable_variance"])
    def test_a_result_on_another_device_fails_and_does_not_crash_the_check(self, check):
        """A result returned on another device than x's (round 23's adversary, on a GPU: x.cuda() and the result left
        there crashed both checks with a cross-device subtraction): FAIL, naming the device.  The meta device stands in
        for a GPU on a machine without one."""
        right = {"check_rms": lambda x: x.float().pow(2).mean(-1).sqrt().half(),
                 "check_stable_variance": lambda x: (x - x.mean(-1, keepdim=True)).square().mean(-1)}[check]
        with pytest.raises(ExerciseFailed, match="returned a tensor on meta"):
            getattr(nb06, check)(lambda x: right(x).to("meta"))

    # ------------------------------------------------------------ round 79's adversary
    @host
    def test_a_thread_running_before_the_block_that_waits_in_c_is_watched_in_it_and_not_after(self):
        """A worker thread started before the block, fed through a queue.SimpleQueue (its get waits in C, not on a
        threading.Condition), runs under the watch in the block (round 79's adversary: float64 there PASSed); woken
        again after the block, it records nothing."""
        import queue
        import threading

        jobs: queue.SimpleQueue = queue.SimpleQueue()

        def work():
            while (job := jobs.get()) is not None:
                job[1].put(job[0].double().sum())

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        try:
            watch = nb06.OperationWatch()
            done: queue.SimpleQueue = queue.SimpleQueue()
            with watch, nb06._in_new_threads(watch):
                jobs.put((torch.randn(3, 5), done))
                done.get()
            assert "double" in watch.float64, vars(watch.seen)
            seen = list(watch.float64)
            jobs.put((torch.randn(3, 5), done))
            done.get()
            assert watch.float64 == seen
        finally:
            jobs.put(None)
            worker.join()

    @host
    def test_bytes_sent_through_multiprocessing_count_as_another_process_unless_read_back_here_or_none(self):
        """Bytes written to a connection of multiprocessing in the block and not read back in this process count as
        sent to another process; bytes read back here, and a pickled None (a ThreadPool's signal to itself), do not
        (round 79's adversary: a right answer in a ThreadPool FAILed as "sent data to another process")."""
        import multiprocessing

        for send, read, elsewhere in ((b"rows", True, False), (b"rows", False, True), (None, False, False)):
            reader, writer = multiprocessing.Pipe(duplex=False)
            watch = nb06.OperationWatch()
            with nb06._in_this_process(Checker("stable_variance"), watch):
                if send is None:
                    writer.send(None)
                else:
                    writer.send_bytes(send)
                if read:
                    assert reader.recv_bytes() == send
            assert bool(watch.seen.elsewhere) == elsewhere, (send, read, watch.seen.elsewhere)
            reader.close()
            writer.close()

    @host
    def test_a_thread_pool_of_multiprocessing_made_for_the_call_is_this_process(self):
        """multiprocessing's ThreadPool, made and closed in the block, computes in threads of this process: nothing
        counts as sent elsewhere, and its threads' work is watched."""
        from multiprocessing.pool import ThreadPool

        watch = nb06.OperationWatch()
        with (watch, nb06._in_new_threads(watch), nb06._in_this_process(Checker("stable_variance"), watch),
              ThreadPool(2) as pool):
            pool.map(lambda row: row.double().sum(), list(torch.randn(4, 5).unbind(0)))
        assert not watch.seen.elsewhere and "double" in watch.float64, vars(watch.seen)

    @host
    @pytest.mark.parametrize("change", [
        lambda x: x.requires_grad_(True),
        lambda x: (x.requires_grad_(True), (x * 2).sum().backward(), x.requires_grad_(False)),
        lambda x: setattr(x, "data", x.data.clone()),
        lambda x: setattr(x, "kept", 1),
    ], ids=["requires grad", "a .grad left", "memory rebound", "an attribute"])
    def test_what_the_caller_sees_of_a_tensor_besides_its_values_is_compared(self, change):
        """A tensor handed back requiring grad, with a .grad, in other memory or with an attribute of the answer's is
        not as given, though its values are (round 79's adversary left x requiring grad, its .grad set: PASSed)."""
        x = torch.randn(5)
        before, values = nb06._as_given(x), x.clone()
        change(x)
        assert torch.equal(x.detach(), values)
        assert nb06._left_as_given("x", before, x), nb06._as_given(x)
        assert not nb06._left_as_given("x", nb06._as_given(values), values)

    @host
    def test_the_again_step_writes_through_data_without_a_version_bump(self):
        """The again steps' third call: x's values changed through x.data, which leaves id, data_ptr and x._version as
        they were (round 79's adversary kept results under x._version and PASSed)."""
        seen = []

        def judged(case, x, again=""):
            seen.append((case, id(x), x.data_ptr(), x._version, x.clone()))

        cases = [nb06.Readings(16, (nb06.Row("normal", 10.0 * k, 1.0 + k),), False, 21 + k) for k in range(4)]
        nb06._again(judged, *cases)
        (_, id1, ptr1, v1, _), (_, id2, ptr2, v2, values2), (_, id3, ptr3, v3, values3) = seen[:3]
        assert id1 == id2 == id3 and ptr1 == ptr2 == ptr3 and v1 < v2 == v3
        assert torch.equal(values3, cases[2].tensor()) and not torch.equal(values2, values3)

    @host
    def test_rows_of_zeros_but_one_value_wider_than_fp16s_range_overflow_a_scale_by_the_mean_magnitude(self):
        """The chosen rows of 2**17 zeros but one value (nb06.SPIKES) and of ones: each row's largest value is its
        width times its mean magnitude, past 65504, so dividing by the mean magnitude in fp16 gives inf (round 79's
        adversary PASSed: no row held more than 5630 times its mean magnitude), and the row of ones sums past fp16's
        range; the exact RMS is finite, and float32 gets it within a step."""
        x = nb06.Activations((5, 2**17), 0.0, 0.0, "spikes", "contiguous", 11).tensor()
        assert [int((row != 0).sum()) for row in x] == [1, 1, 1, 1, 2**17]
        assert [float(row.abs().max()) for row in x[:4]] == list(nb06.SPIKES)
        scaled = x / x.abs().mean(dim=-1, keepdim=True)
        assert not bool(torch.isfinite(scaled[0]).all()) and not bool(torch.isfinite(x[4].sum()))
        with inside_check():
            exact = nb06.rms_exact(x)
        float32 = x.float().square().mean(dim=-1).sqrt().half().double()
        assert bool(((float32 - exact).abs() <= nb06.RMS_RELATIVE_ERROR * exact + nb06.RMS_SMALLEST_STEP).all())

    @host
    def test_the_again_step_asks_the_longest_length_with_a_quiet_dot_product_first(self):
        """At 2**20 the again step's first call of that length has the smallest terms of its calls there (round 79's
        adversary kept the terms' size per length past 2**16, and PASSed), and a twin then errs past the guarantee for
        the quiet one's terms in some float32 order."""
        n = nb06.DOT_LONGEST
        assert n in nb06.DOT_AGAIN_LENGTHS
        quiet, twin = (tuple(t[0] for t in nb06.Dot(kind, n, 0.1, 1.0, 0).inputs()) for kind in ("quiet", "twin"))
        quiet_terms = float((quiet[0].double() * quiet[1].double()).abs().sum())
        assert quiet_terms < float((twin[0].double() * twin[1].double()).abs().sum())
        exact = float((twin[0].double() * twin[1].double()).sum())
        with inside_check():
            errors = [abs(v - exact) for v in nb06.float32_results(*twin, 0).values()]
        assert max(errors) > _gamma(n) * quiet_terms
