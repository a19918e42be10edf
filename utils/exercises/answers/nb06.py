"""Wrong answers, and other right ones, to the exercises of notebook 06 (floating-point precision), for
the tests: SPOILERS."""

from __future__ import annotations

import math

import numpy as np
import torch

from ...device import has_cuda

EPS32 = torch.finfo(torch.float32).eps  # 2**-23
U32 = EPS32 / 2  # float32's unit of rounding
TERMS = 2 / math.pi  # E|x * y| for independent N(0, 1) x and y


# ---------------------------------------------------------------- exercise 1: dot_tolerance (CPU)
def _terms(x, y) -> float:
    """sum |x_i y_i|, the size of the terms, in float64."""
    return float((x.double() * y.double()).abs().sum())


def _gamma(n: int, u: float = U32) -> float:
    """gamma_n = n u / (1 - n u): the guaranteed relative error of a sum of n terms, in any order."""
    return n * u / (1 - n * u)


def guaranteed(x, y):
    """The solution's answer: float32's guarantee for any order and any input, from the terms of these x and y."""
    return 0.0, _gamma(x.numel()) * _terms(x, y)


def largest_measured_error(x, y):
    """Measures instead of bounding: twice the largest error of the orders it knows (a sequential loop,
    torch.sum, torch.dot). Another order, one a GPU uses, errs more."""
    exact = float((x.double() * y.double()).sum())
    products = (x * y).numpy()
    sequential = float(np.cumsum(products, dtype=np.float32)[-1]) if products.size else 0.0
    errors = [abs(float(got) - exact) for got in (sequential, (x * y).sum(), torch.dot(x, y))]
    return 0.0, 2 * max(errors)


def the_checks_own_orders(x, y):
    """Twice the largest error of the check's own seven orders, over 20 shuffles: it would bound those orders,
    not every order (the check's float32_results is locked as its reference)."""
    from utils.exercises import nb06

    exact = float((x.double() * y.double()).sum())
    return 0.0, 2 * max(abs(v - exact) for seed in range(20) for v in nb06.float32_results(x, y, seed).values())


def means_for_the_terms(x, y):
    """n * mean|x| * mean|y| for sum |x_i y_i|: right when x and y are independent, or y constant; for x . x of a
    decaying vector (large x_i meet large y_i) far below the terms (adversary 06, round 1: it PASSed)."""
    n = x.numel()
    return 0.0, _gamma(n) * n * float(x.double().abs().mean() * y.double().abs().mean()) if n else 0.0


def first_1024_terms(x, y):
    """The terms' size from the first 1024 products only, scaled up to n: 0 for zero padding in front (adversary 06,
    round 1: it PASSed)."""
    n, k = x.numel(), min(x.numel(), 1024)
    return 0.0, _gamma(n) * _terms(x[:k], y[:k]) * n / k if k else 0.0


def _estimate_unless(recognized):
    """gamma_n for the inputs `recognized(products)` calls adversarial, the sqrt(n) estimate with a slack of 10
    otherwise (adversary 06, round 2: each PASSed; the check had equal terms only of one sign, and none at the longest
    length but torch.full)."""
    def tolerance(x, y):
        products = x.double() * y.double()
        n, terms = x.numel(), float(products.abs().sum())
        if n and recognized(products):
            return 0.0, _gamma(n) * terms
        return 0.0, 10 * math.sqrt(n) * EPS32 * terms
    return tolerance


WRONG_TOLERANCES = {
    "sqrt(n) * eps * sum|x_i y_i|: the typical error of random rounding, not a bound":
        lambda x, y: (0.0, math.sqrt(x.numel()) * EPS32 * _terms(x, y)),
    "sqrt(n) * eps * sum|x_i y_i|, with a slack of 4": lambda x, y: (
        0.0, 4 * math.sqrt(x.numel()) * EPS32 * _terms(x, y)),
    "assert_close's float32 defaults": lambda x, y: (1.3e-6, 1e-5),
    "assert_close's bfloat16 defaults": lambda x, y: (1.6e-2, 1e-5),
    "relative only: rtol = gamma_n, no atol": lambda x, y: (_gamma(x.numel()), 0.0),
    "the size of the result, not of the terms: gamma_n * |x . y|": lambda x, y: (
        0.0, _gamma(x.numel()) * abs(float((x.double() * y.double()).sum()))),
    "from n alone, for N(0, 1) entries (the guarantee times E|x y| = 2/pi)": lambda x, y: (
        0.0, _gamma(x.numel()) * x.numel() * TERMS),
    "n - 1 roundings: the additions only, not the products": lambda x, y: (0.0, _gamma(x.numel() - 1) * _terms(x, y)),
    "fp16's unit of rounding instead of float32's": lambda x, y: (0.0, x.numel() * 2.0**-11 * _terms(x, y)),
    "the product of the 1-norms, sum|x_i| * sum|y_i|, for the terms": lambda x, y: (
        0.0, _gamma(x.numel()) * float(x.double().abs().sum() * y.double().abs().sum())),
    "the guarantee times sqrt(n), for safety": lambda x, y: (
        0.0, math.sqrt(x.numel()) * _gamma(x.numel()) * _terms(x, y)),
    "twice the largest error measured in three orders": largest_measured_error,
    "twice the largest error of the check's own orders (nb06.float32_results)": the_checks_own_orders,
    "atol and rtol swapped": lambda x, y: (_gamma(x.numel()) * _terms(x, y), 0.0),
    "rtol gamma_n, and atol gamma_n times the largest term (not the sum of them)": lambda x, y: (
        _gamma(x.numel()), _gamma(x.numel()) * float((x.double() * y.double()).abs().max()) if x.numel() else 0.0),
    "sqrt(n) below 100 terms, the guarantee above": lambda x, y: (
        0.0, (math.sqrt(x.numel()) * EPS32 if x.numel() < 100 else _gamma(x.numel())) * _terms(x, y)),
    "n * mean|x| * mean|y| for the terms (right for independent x and y, not for x . x)": means_for_the_terms,
    "the terms of the first 1024 products, scaled up to n": first_1024_terms,
    # a bound that catches about 42% of bfloat16 inputs at n = 256 (half are caught up to about 5 n eps): the old
    # 16 draws saw 8 of 16 (adversary 06, round 1: it PASSed)
    "6 n eps sum|x_i y_i|, too loose to catch half of the bfloat16 inputs at n = 256": lambda x, y: (
        0.0, 6 * x.numel() * EPS32 * _terms(x, y)),
    "the guarantee for terms of one sign, 10 sqrt(n) eps for mixed signs (their rounding taken as random)":
        _estimate_unless(lambda p: bool((p >= 0).all()) or bool((p <= 0).all())),
    "the guarantee for exactly equal terms, 10 sqrt(n) eps otherwise":
        _estimate_unless(lambda p: bool((p == p[0]).all())),
    "the guarantee for terms of equal magnitude, 70 sqrt(n) eps otherwise (still catching bfloat16 at n = 256)":
        lambda x, y: (0.0, (_gamma(x.numel()) if x.numel() and bool((x * y).abs().eq((x[0] * y[0]).abs()).all())
                            else 70 * math.sqrt(x.numel()) * EPS32) * _terms(x, y)),
    # adversary 06, round 4: each PASSed (the longest case had equal terms only, none far larger than the rest, and no
    # generated case had long runs of terms of both signs that round the same way)
    "the tighter of section 6's two sizes, min(n, 150 sqrt(n)) eps, C fit to the longest cases": lambda x, y: (
        0.0, min(x.numel(), 150 * math.sqrt(x.numel())) * EPS32 * _terms(x, y)),
    "4 sqrt(n) eps when 10% to 90% of the products are positive (taken as random), the guarantee otherwise":
        lambda x, y: (0.0, (4 * math.sqrt(x.numel()) * EPS32
                            if 0.1 < float((x.double() * y.double() > 0).double().mean()) < 0.9 else _gamma(x.numel()))
                      * _terms(x, y)),
}
RIGHT_TOLERANCES = {
    "4 n eps sum|x_i y_i|: loose, and still catching more than half of the bfloat16 inputs": lambda x, y: (
        0.0, 4 * x.numel() * EPS32 * _terms(x, y)),
    "n * eps (twice the guarantee), in a list, the terms summed in float32": lambda x, y: [
        0.0, x.numel() * EPS32 * float((x * y).abs().sum())],
    "a NumPy rtol and a 0-d tensor atol": lambda x, y: (np.float64(0.0), torch.tensor(guaranteed(x, y)[1])),
    "an rtol as well, and the norms instead of the terms (Cauchy-Schwarz)": lambda x, y: (
        _gamma(x.numel()), _gamma(x.numel()) * float(x.double().norm() * y.double().norm())),
    # adversary 06, round 2
    "gamma_k for the k nonzero products only (zeros add exactly)": lambda x, y: (
        0.0, _gamma(int((x.double() * y.double()).ne(0).sum())) * _terms(x, y)),
    "rtol alone when the products share one sign (then sum|x_i y_i| = |x . y|)": lambda x, y: (
        (1.01 * _gamma(x.numel()), 0.0) if x.numel() and (bool(((x * y) >= 0).all()) or bool(((x * y) <= 0).all()))
        else (0.0, _gamma(x.numel()) * _terms(x, y))),
}


# ---------------------------------------------------------------- exercise 2: rms (CPU)
def rms_numpy(x):
    """Right: NumPy in float32 (torch.as_tensor, not from_numpy: a 1-D input gives a NumPy scalar)."""
    values = x.numpy().astype(np.float32)
    return torch.as_tensor(np.sqrt(np.mean(np.square(values), axis=-1))).to(x.dtype)


def rms_guarded_scale(x):
    """Right: each row scaled by its largest |value| (1 for a row of zeros), in float32."""
    xf = x.float()
    scale = xf.abs().amax(dim=-1, keepdim=True).clamp(min=1e-30)
    return ((xf / scale).square().mean(dim=-1).sqrt() * scale.squeeze(-1)).to(x.dtype)


def scaled_by_largest_in_fp16(x):
    """Each row scaled by its largest |value| (1 for a row of zeros), but all in fp16: no overflow, no underflow, and
    up to five fp16 roundings, which exceed 2**-10 together in a row of about 1600 short ones (adversary 06, round 1:
    it PASSed)."""
    scale = x.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    return (x / scale).square().mean(dim=-1).sqrt() * scale.squeeze(-1)


def scaled_by_largest_in_fp16_squares_in_float32(x):
    """Each row scaled by its largest |value| in fp16 (1 for a row of zeros), the squares, mean and root in float32,
    back in fp16, then times that value in fp16: three fp16 roundings, which exceed 2**-10 together in about one row of
    10**5 short ones, and in a few of each thousand whose RMS lies just above a power of 2 (adversary 06, round 3: it
    PASSed)."""
    scale = x.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    return (x / scale).float().square().mean(dim=-1).sqrt().to(x.dtype) * scale.squeeze(-1)


def rms_scaled_in_fp16_then_float32(x):
    """Right: each row scaled by its largest |value| in fp16 (one rounding of each value, 2**-11 at most), everything
    after it in float32 and rounded to fp16 once: within 2**-10 (adversary 06, round 3: within 0.67 of it on 3.7 * 10**6
    rows of 2 to 24 values)."""
    scale = x.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    return ((x / scale).float().square().mean(dim=-1).sqrt() * scale.squeeze(-1).float()).to(x.dtype)


def rms_scaled_by_a_power_of_2(x):
    """Each row scaled by the power of 2 at or below its largest |value| (exact in fp16), then squares, mean and root in
    fp16: no overflow, and roundings that stay within 2**-10 on short rows (adversary 06, round 2: within 0.93 of it on
    10**6 rows of 1 to 64 values, so it was filed as right); but squares of values under 2**-12.5 of the largest are 0,
    and in a row of 2**17 values they add up past fp16's rounding (adversary 06, round 14: the task allows any
    sizes)."""
    largest = x.abs().amax(dim=-1, keepdim=True).float()
    power = torch.where(largest > 0, torch.floor(torch.log2(largest.clamp(min=2.0**-24))), torch.zeros_like(largest))
    scale = torch.exp2(power).to(x.dtype)
    return (x / scale).pow(2).mean(dim=-1).sqrt() * scale.squeeze(-1)


WRONG_RMS = {
    "the original: squares in fp16": lambda x: x.pow(2).mean(-1).sqrt(),
    "accumulates in float32, but squares in fp16": lambda x: x.pow(2).mean(-1, dtype=torch.float32).sqrt().to(x.dtype),
    "returns float32": lambda x: x.float().pow(2).mean(-1).sqrt(),
    "a fixed scale of 1/256": lambda x: (x / 256).pow(2).mean(-1).sqrt() * 256,
    "bfloat16 instead of float32": lambda x: x.bfloat16().pow(2).mean(-1).sqrt().to(x.dtype),
    "the fp16 norm, then divides": lambda x: torch.linalg.vector_norm(x, dim=-1) / math.sqrt(x.shape[-1]),
    "scaled by each row's largest value (0/0 on a row of zeros)": lambda x: (
        (x.float() / x.float().abs().amax(-1, keepdim=True)).square().mean(-1).sqrt()
        * x.float().abs().amax(-1)).to(x.dtype),
    "over every dimension after the first (right for 1-D and 2-D only)": lambda x: x.float().pow(2).mean(
        dim=tuple(range(1, x.dim()))).sqrt().to(x.dtype),
    "rows flattened to (-1, d): a flat result (right for 2-D only)": lambda x: x.reshape(-1, x.shape[-1]).float().pow(
        2).mean(-1).sqrt().to(x.dtype),
    "keepdim=True": lambda x: x.float().pow(2).mean(-1, keepdim=True).sqrt().to(x.dtype),
    "the mean of the squares back in fp16 before the square root": lambda x: x.float().pow(2).mean(-1).to(
        x.dtype).sqrt(),
    "squares in float32, back in fp16 before the mean": lambda x: x.float().pow(2).to(x.dtype).mean(
        -1, dtype=torch.float32).sqrt().to(x.dtype),
    "the mean absolute value": lambda x: x.float().abs().mean(-1).to(x.dtype),
    "an eps of 1e-6 under the root, as rms_norm has": lambda x: (x.float().pow(2).mean(-1) + 1e-6).sqrt().to(x.dtype),
    "squeeze() after keepdim=True (drops every dimension of size 1)": lambda x: x.float().pow(2).mean(
        -1, keepdim=True).sqrt().squeeze().to(x.dtype),
    "scaled by each row's largest value, all in fp16": scaled_by_largest_in_fp16,
    "scaled by each row's largest value in fp16, squares in float32, the product with it in fp16":
        scaled_by_largest_in_fp16_squares_in_float32,
}
RIGHT_RMS = {
    "vector_norm in float32": lambda x: (torch.linalg.vector_norm(x.float(), dim=-1)
                                         / math.sqrt(x.shape[-1])).to(x.dtype),
    "float64 inside": lambda x: x.double().square().mean(-1).sqrt().to(x.dtype),
    "NumPy in float32": rms_numpy,
    "scaled by each row's largest value, with a guard for zeros": rms_guarded_scale,
    "scaled by each row's largest value in fp16, the rest in float32": rms_scaled_in_fp16_then_float32,
}


# ---------------------------------------------------------------- exercise 3: stable_variance (CPU)
def two_pass(x):
    """The solution's way: the mean first, then the mean of the squared deviations from it."""
    return (x - x.mean(dim=-1, keepdim=True)).square().mean(dim=-1)


def one_pass(x):  # E[x^2] - E[x]^2: both about mean^2, their difference cancels
    return x.square().mean(dim=-1) - x.mean(dim=-1).square()


def one_pass_clamped(x):  # no longer negative, still wrong: the digits are gone before the clamp
    return one_pass(x).clamp(min=0)


def upcast(x):  # right values, but float64 inside: it only moves the cancellation to larger means
    return one_pass(x.double()).float()


def returns_float64(x):
    return two_pass(x).double()


def library_var_unbiased(x):  # torch.var's default divides by n - 1 (and is the library's, not yours)
    return x.var(dim=-1)


def library_var(x):
    """Accurate (on this CPU within 1e-7 of float64: its kernel is Welford's with float64 accumulators,
    aten/src/ATen/native/cpu/ReduceOpsKernel.cpp), but float64 inside, and what the exercise asks to write."""
    return x.var(dim=-1, correction=0)


def divides_by_n_minus_1(x):
    return (x - x.mean(dim=-1, keepdim=True)).square().sum(dim=-1) / (x.shape[-1] - 1)


def mean_over_rows(x):  # the mean of each column, not of each row
    return (x - x.mean(dim=0, keepdim=True)).square().mean(dim=-1)


def shifted_by_one_number(x):
    """The shifted formula with one shift for the whole batch: fine for rows whose mean is near that
    number, catastrophic for the others (a batch of rows of different means)."""
    y = x - x[0, 0]
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def shifted_by_first_value(x):
    """Wrong (round 77's adversary; registered right until then): the shifted formula, each row shifted by its own
    first value.  With K the shift, it cancels 1 + ((K - mean) / std)**2 times the variance, at most n + 1 for a value
    of the row; where the first value holds all of the variance, the roundings of the two means then cost more than
    the rule allows (up to 1.8 times, rows of 8192)."""
    y = x - x[:, :1]
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def shifted_by_value_at(x, at):
    """Wrong (round 133's adversary): the shifted formula, each row shifted by its value at one fixed place (`at`: -1,
    the last; None, the middle), which cancels as the first value's shift does when the far value sits there."""
    at = x.shape[-1] // 2 if at is None else at % x.shape[-1]
    y = x - x[:, at:at + 1]
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def shifted_by_median(x):
    """Right: the shifted formula, each row shifted by its median (a value of the row, near its mean)."""
    y = x - x.median(dim=-1, keepdim=True).values
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def shifted_by_largest(x):
    """Wrong (round 77's adversary): the shifted formula, each row shifted by its largest value, which in a row
    whose variance is all in one value far above the rest cancels up to n + 1 times it."""
    y = x - x.amax(dim=-1, keepdim=True)
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def scaled_by_largest_deviation(x):  # right for most rows, but 0/0 = NaN on a row whose values are equal
    d = x - x.mean(dim=-1, keepdim=True)
    scale = d.abs().amax(dim=-1, keepdim=True)
    return (d / scale).square().mean(dim=-1) * scale.squeeze(-1).square()


def python_floats(x):  # right values, but Python floats are float64 (and it is slow)
    out = []
    for row in x.tolist():
        mean = sum(row) / len(row)
        out.append(sum((v - mean) ** 2 for v in row) / len(row))
    return torch.tensor(out, dtype=torch.float32)


def welford(x):
    """Right: Welford's update, one column at a time for all rows (slow in Python: a loop over the columns)."""
    mean = torch.zeros(x.shape[0], dtype=x.dtype)
    m2 = torch.zeros(x.shape[0], dtype=x.dtype)
    for k in range(x.shape[1]):
        delta = x[:, k] - mean
        mean = mean + delta / (k + 1)
        m2 = m2 + delta * (x[:, k] - mean)
    return m2 / x.shape[1]


def welford_old_mean(x):
    """Welford's update with the second factor taken about the old mean too: m2 += delta**2, too large."""
    mean = torch.zeros(x.shape[0], dtype=x.dtype)
    m2 = torch.zeros(x.shape[0], dtype=x.dtype)
    for k in range(x.shape[1]):
        delta = x[:, k] - mean
        mean = mean + delta / (k + 1)
        m2 = m2 + delta * delta
    return m2 / x.shape[1]


def merged_chunks(x, chunk=256):
    """Right: two passes within chunks of columns, merged by Chan, Golub and LeVeque's update of the mean
    and the sum of squared deviations (one pass over the data, what parallel reductions do)."""
    count, mean, m2 = 0, None, None
    for block in x.split(chunk, dim=-1):
        size = block.shape[-1]
        block_mean = block.mean(dim=-1)
        block_m2 = (block - block_mean[:, None]).square().sum(dim=-1)
        if mean is None:
            count, mean, m2 = size, block_mean, block_m2
            continue
        total = count + size
        delta = block_mean - mean
        mean = mean + delta * (size / total)
        m2 = m2 + block_m2 + delta.square() * (count * size / total)
        count = total
    return m2 / count


def chunks_tail_dropped(x, chunk=8):
    """Chunks of 8 values (fewer for a shorter row), each in two passes, merged exactly; but the last values
    of a row whose width is not a multiple of the chunk are dropped (every width of the old check was one)."""
    chunk = min(chunk, x.shape[-1])
    n = x.shape[-1] // chunk * chunk
    blocks = x[:, :n].reshape(x.shape[0], -1, chunk)
    means = blocks.mean(dim=-1)
    m2 = (blocks - means[..., None]).square().sum(dim=-1)
    mean = means.mean(dim=-1, keepdim=True)
    return (m2.sum(dim=-1) + chunk * (means - mean).square().sum(dim=-1)) / n


def chunk_variances_averaged(x, chunk=16):
    """The mean of the variances of chunks of 16 values: the spread of the chunks' means is left out."""
    pad = -x.shape[-1] % chunk
    if pad:
        return two_pass(x)  # rows that do not split evenly: two passes (the check's widths are mostly odd)
    blocks = x.reshape(x.shape[0], -1, chunk)
    return two_pass(blocks).mean(dim=-1)


def one_pass_unless_large_mean(x):
    """The one-pass formula, and two passes only for rows whose mean is over 1000 in magnitude."""
    large = x.mean(dim=-1).abs() > 1000
    return torch.where(large, two_pass(x), one_pass(x))


def every_other_value(x):  # half the work: two passes over every other value
    return two_pass(x[:, ::2])


def sequential_mean_two_pass(x):
    """Right: two passes, the mean summed column by column in float32 (its error enters squared only)."""
    total = torch.zeros(x.shape[0], dtype=x.dtype)
    for k in range(x.shape[1]):
        total = total + x[:, k]
    return (x - (total / x.shape[1])[:, None]).square().mean(dim=-1)


def deviations_in_place(x):  # right values, but x itself now holds the deviations
    return x.sub_(x.mean(dim=-1, keepdim=True)).square().mean(dim=-1)


def about_a_prefix_mean(x, prefix=100):
    """Squared deviations from the mean of the first 100 values, as if that were the mean: off by its error squared."""
    return (x - x[:, :prefix].mean(dim=-1, keepdim=True)).square().mean(dim=-1)


def linalg_norm(x):  # right: the norm of the deviations, squared, over n
    d = x - x.mean(dim=-1, keepdim=True)
    return torch.linalg.vector_norm(d, dim=-1).square() / x.shape[-1]


def shifted_by_bfloat16_mean(x):
    """The shifted formula, each row shifted by its mean rounded to bfloat16: off the mean by up to 2**-9 of it, which
    on a short row of a large mean and a small spread cancels far more than float32's sums may err (adversary 06,
    round 1: it PASSed; its rows of 2 or 3 values at means near 10**5.5 were rarely drawn)."""
    y = x - x.mean(dim=-1, keepdim=True).bfloat16().float()
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def two_passes_then_one_pass(x, widest=512):
    """Two passes up to 512 values a row, the one-pass formula beyond (to read x once): on rows of 1000 values and means
    of 1e4 and more it errs past float32's sums (adversary 06, round 2: it PASSed; wide rows of large means were rarely
    drawn)."""
    return two_pass(x) if x.shape[-1] <= widest else one_pass(x)


def shifted_by_the_batch_mean(x):
    """The shifted formula with the mean of the whole batch as the shift: rows far from it cancel (its hint blamed the
    formula for an error of 3e-6 of the variance)."""
    y = x - x.mean()
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def shifted_by_smallest(x):  # wrong (round 77's adversary): shifted by the smallest value, far below the rest
    y = x - x.amin(dim=-1, keepdim=True)
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def corrected_two_pass(x):
    """Right: the corrected two-pass algorithm, (sum d**2 - (sum d)**2 / n) / n for d the deviations from the mean."""
    d = x - x.mean(dim=-1, keepdim=True)
    return (d.square().sum(dim=-1) - d.sum(dim=-1).square() / x.shape[-1]) / x.shape[-1]


def aten_var(x):
    """torch.var through its operator, torch.ops.aten.var.correction: its name is "var.correction" (adversary 06,
    round 1: it PASSed)."""
    return torch.ops.aten.var.correction(x, [-1], correction=0)


def layer_norm_statistics(x):
    """The variance a layer norm computes inside, as 1 / rstd**2 of torch.native_layer_norm with eps 0 (adversary 06,
    round 1: it PASSed)."""
    _, _, rstd = torch.native_layer_norm(x, [x.shape[-1]], None, None, 0.0)
    return rstd.squeeze(-1).pow(-2)


def numpy_through_dlpack(x):
    """NumPy's float64 variance, reached through np.from_dlpack (adversary 06, round 1: it PASSed)."""
    return torch.from_numpy(np.from_dlpack(x).astype(np.float64).var(axis=-1).astype(np.float32))


def two_pass_in_fp16(x):  # fp16 keeps 11 bits: far from float32's accuracy (its hint blamed the formula)
    h = x.half()
    return (h - h.mean(dim=-1, keepdim=True)).square().mean(dim=-1).float()


def shifted_by_fp16_mean(x):  # the mean rounded to fp16 is inf past 65504 (its hint blamed a division by 0)
    y = x - x.mean(dim=-1, keepdim=True).half().float()
    return y.square().mean(dim=-1) - y.mean(dim=-1).square()


def mean_without_keepdim(x):  # (rows, n) - (rows,): each row's values less every row's mean, for n == rows
    return (x - x.mean(dim=-1)).square().mean(dim=-1)


def squares_about_first_value(x):  # no correction: twice the variance for two values (its hint said n - 1)
    return (x - x[:, :1]).square().mean(dim=-1)


def wide_rows_in_chunks_tail_dropped(x, chunk=1024):
    """Two passes; rows wider than 1024 values in chunks of 1024, merged exactly, but the values after the last whole
    chunk dropped (adversary 06, round 4: it PASSed; rows over 1024 were only 2000 values of large means, where the
    error allowed is far above the variance, and 4096, a multiple of the chunk)."""
    rows, n = x.shape
    if n <= chunk:
        return two_pass(x)
    whole = n // chunk * chunk
    c = x[:, :whole].reshape(rows, -1, chunk)
    means = c.mean(dim=-1)
    m2 = (c - means[..., None]).square().sum(dim=(-1, -2))
    return (m2 + ((means - means.mean(dim=-1, keepdim=True)).square() * chunk).sum(dim=-1)) / whole


WRONG_VARIANCE = {
    "the one-pass formula E[x^2] - E[x]^2": one_pass,
    "the one-pass formula, clamped at 0": one_pass_clamped,
    "the one-pass formula in float64": upcast,
    "returns float64": returns_float64,
    "torch.var, unbiased (n - 1)": library_var_unbiased,
    "torch.var(correction=0): accurate, but float64 accumulators inside, and the library's": library_var,
    "two passes, divided by n - 1": divides_by_n_minus_1,
    "the mean over the wrong dimension": mean_over_rows,
    "shifted by one number for the whole batch": shifted_by_one_number,
    "scaled by the largest deviation (NaN on constant rows)": scaled_by_largest_deviation,
    "a Python loop in Python floats (float64)": python_floats,
    "chunks of 8 merged, each row's tail dropped": chunks_tail_dropped,
    "the chunks' variances averaged, their means' spread left out": chunk_variances_averaged,
    "Welford's update about the old mean only": welford_old_mean,
    "the one-pass formula unless the mean is over 1000": one_pass_unless_large_mean,
    "every other value only": every_other_value,
    "the deviations computed in place (x.sub_)": deviations_in_place,
    "squared deviations from the mean of the first 100 values": about_a_prefix_mean,
    "shifted by each row's mean rounded to bfloat16": shifted_by_bfloat16_mean,
    "torch.ops.aten.var.correction (torch.var by its operator)": aten_var,
    "1 / rstd**2 of torch.native_layer_norm": layer_norm_statistics,
    "NumPy in float64, through np.from_dlpack": numpy_through_dlpack,
    "two passes in fp16": two_pass_in_fp16,
    "shifted by each row's mean rounded to fp16": shifted_by_fp16_mean,
    "the mean without keepdim (broadcast across rows)": mean_without_keepdim,
    "squares about each row's first value, uncorrected": squares_about_first_value,
    "two passes up to 512 values a row, the one-pass formula beyond": two_passes_then_one_pass,
    "two passes up to 1024 values a row (the widest drawn), the one-pass formula beyond":
        lambda x: two_passes_then_one_pass(x, widest=1024),
    "shifted by the mean of the whole batch": shifted_by_the_batch_mean,
    "two passes; rows over 1024 values in chunks of 1024, the tail dropped": wide_rows_in_chunks_tail_dropped,
    # round 77's adversary: a shift by a value of the row far from its mean (registered right until then)
    "shifted by each row's first value": shifted_by_first_value,
    "shifted by each row's smallest value": shifted_by_smallest,
    "shifted by each row's largest value": shifted_by_largest,
    # round 133's adversary: the same shift by a value at another fixed place
    "shifted by each row's last value": lambda x: shifted_by_value_at(x, -1),
    "shifted by each row's middle value": lambda x: shifted_by_value_at(x, None),
}
RIGHT_VARIANCE = {
    "shifted by each row's median": shifted_by_median,
    "Welford's update, column by column": welford,
    "two passes in chunks, merged (Chan et al.)": merged_chunks,
    "two passes, the mean summed column by column": sequential_mean_two_pass,
    "the squared norm of the deviations": linalg_norm,
    "the corrected two-pass algorithm": corrected_two_pass,
    "mse_loss against each row's mean": lambda x: torch.nn.functional.mse_loss(
        x, x.mean(dim=-1, keepdim=True).expand_as(x), reduction="none").mean(dim=-1),
}

# ---------------------------------------------------------------- adversary 06, round 9 (a fresh one): its answers
# that the course did not have, each with the verdict the checks give it now
def _guarantee_with_atol(floor: float, added: bool = False):
    """n eps sum|x_i y_i|, and a fixed atol "for results near 0": added to it, or as its floor.  Where the terms are
    small (both factors 2**-10, as the task allows), that atol lets every bfloat16 input through (adversary 06, round
    9: each PASSed, the check caught bfloat16 at those scales in no chosen case)."""
    def tolerance(x, y):
        bound = x.numel() * EPS32 * _terms(x, y)
        return 0.0, bound + floor if added else max(bound, floor)
    return tolerance


def _times_the_guarantee(c: float):
    """c n u sum|x_i y_i|: for c below 1, not a bound (one product can err by almost u of itself)."""
    return lambda x, y: (0.0, c * x.numel() * U32 * _terms(x, y))


def _measured_error_times(factor: float):
    """`factor` times the largest error of five orders it can run (torch.dot, torch.sum, a running sum both ways and
    pairwise by halves) against float64: the orders it cannot run (a GPU's) err more."""
    def tolerance(x, y):
        if not x.numel():
            return 0.0, 0.0
        exact, products = float((x.double() * y.double()).sum()), x * y
        results = [float(torch.dot(x, y)), float(products.sum()), float(products.cumsum(0)[-1]),
                   float(products.flip(0).cumsum(0)[-1])]
        halves = products
        while halves.numel() > 1:
            if halves.numel() % 2:
                halves = torch.cat([halves, halves.new_zeros(1)])
            halves = halves[0::2] + halves[1::2]
        results.append(float(halves[0]))
        return 0.0, factor * max(abs(r - exact) for r in results)
    return tolerance


def strided_sample_of_the_terms(x, y):
    """sum|x_i y_i| estimated from every 16th product from the second one on (times 16): a far term at index 0, or
    zeros where the sample falls, is missed."""
    n = x.numel()
    if n <= 64:
        return 0.0, n * EPS32 * _terms(x, y)
    return 0.0, n * EPS32 * 16 * _terms(x[1::16], y[1::16])


def abs_in_place(x, y):
    """The terms' size through x.abs_(): it changes the caller's x."""
    return 0.0, x.numel() * EPS32 * float((x.abs_() * y.abs()).sum())


def split_between_rtol_and_atol(x, y):
    """Right: n eps split between rtol and atol, atol + rtol |x . y| = n eps sum|x_i y_i| (and a millionth more)."""
    n, products = x.numel(), x.double() * y.double()
    terms, result = float(products.abs().sum()), abs(float(products.sum()))
    return n * EPS32, n * EPS32 * (terms - result) + n * EPS32 * 1e-6 * terms


def a_tensor_pair(x, y):
    """Right too: a tensor [rtol, atol], rtol n u as well, the terms by torch.dot of the magnitudes."""
    return torch.tensor([x.numel() * U32,
                         float(x.numel() * U32 * 1.0001 * torch.dot(x.abs().double(), y.abs().double()))])


WRONG_TOLERANCES.update({
    "the pairwise bound, log2(n) eps sum|x_i y_i|, as if every order were pairwise": lambda x, y: (
        0.0, max(math.log2(x.numel()), 1.0) * EPS32 * _terms(x, y) if x.numel() else 0.0),
    "one bfloat16 rounding (2**-8) of the terms, and as rtol": lambda x, y: (2.0**-8, 2.0**-8 * _terms(x, y)),
    "n**2 eps times the largest product: far too loose": lambda x, y: (
        0.0, x.numel() ** 2 * EPS32 * float((x * y).abs().max()) if x.numel() else 0.0),
    "eps sum|x_i| sum|y_i|, without n": lambda x, y: (
        0.0, EPS32 * float(x.double().abs().sum()) * float(y.double().abs().sum())),
    "the terms' size from every 16th product, from the second one": strided_sample_of_the_terms,
    "n u max|x| max|y|: a factor n short of the terms": lambda x, y: (
        0.0, x.numel() * U32 * float(x.abs().max()) * float(y.abs().max()) if x.numel() else 0.0),
    "half the guarantee, as if half of the errors cancelled": _times_the_guarantee(0.5),
    "0.9 n u sum|x_i y_i|: just below the guarantee": _times_the_guarantee(0.9),
    "0.8 n u sum|x_i y_i|": _times_the_guarantee(0.8),
    "10 n eps sum|x_i y_i|: too loose to catch bfloat16": lambda x, y: (0.0, 10 * x.numel() * EPS32 * _terms(x, y)),
    "the terms through x.abs_(), in place": abs_in_place,
    "n eps sum|x_i y_i| plus assert_close's atol 1e-5": _guarantee_with_atol(1e-5, added=True),
    "n eps sum|x_i y_i|, at least 1e-6": _guarantee_with_atol(1e-6),
    "n eps sum|x_i y_i|, at least 1e-8": _guarantee_with_atol(1e-8),
    "twice the largest error measured in five orders": _measured_error_times(2),
    "100 times the largest error measured in five orders": _measured_error_times(100),
})
RIGHT_TOLERANCES.update({
    "gamma_n times the terms summed in float32, and 1% more": lambda x, y: (
        0.0, 1.01 * _gamma(x.numel()) * float((x * y).abs().sum())),
    "n u sum|x_i y_i| (without 1 / (1 - n u)), the terms by math.fsum": lambda x, y: (
        0.0, x.numel() * U32 * math.fsum(abs(a * b) for a, b in zip(x.tolist(), y.tolist(), strict=True))),
    "a tensor (rtol, atol), rtol n u too": a_tensor_pair,
    "a list, rtol n u and atol (n + 1) u sum|x_i y_i|": lambda x, y: [
        x.numel() * U32, (x.numel() + 1) * U32 * _terms(x, y)],
    "split between rtol and atol": split_between_rtol_and_atol,
    # on the CPU, PyTorch sums bfloat16 in float32 and rounds the total once (2**-9), within n eps's margin
    "n eps, the terms' magnitudes summed in bfloat16": lambda x, y: (
        0.0, x.numel() * EPS32 * float((x * y).abs().bfloat16().cumsum(0)[-1]) if x.numel() else 0.0),
})


def rms_in_place(x):
    """Scales x in place by its largest |value|, to save a copy: the caller's x changes."""
    largest = float(x.abs().max()) if x.numel() else 1.0
    largest = largest if largest > 0 else 1.0
    x.div_(largest)
    return (x.float().pow(2).mean(dim=-1).sqrt() * largest).half()


def rms_float32_where_a_square_leaves_fp16(x):
    """float32 only where some |x| is over 255 or under 2.4e-4 (a square over or under fp16's range), fp16 otherwise:
    its roundings add up past 2**-10 in ordinary rows."""
    if x.numel():
        magnitudes = x.abs()
        nonzero = magnitudes[magnitudes > 0]
        if float(magnitudes.max()) > 255 or (nonzero.numel() and float(nonzero.min()) < 2.4e-4):
            return x.float().pow(2).mean(dim=-1).sqrt().half()
    return x.pow(2).mean(dim=-1).sqrt()


def rms_fp16_where_nothing_leaves_it(x):
    """Right, as the task words it: float32 where some |x| is over 255 or under 2**-7, fp16 otherwise: there its
    roundings stay within one fp16 step (adversary 06, round 9: within 0.95 of 2**-10 on 800 000 rows of each width)."""
    if x.numel():
        magnitudes = x.abs()
        nonzero = magnitudes[magnitudes > 0]
        if float(magnitudes.max()) > 255 or (nonzero.numel() and float(nonzero.min()) < 2.0**-7):
            return x.float().pow(2).mean(dim=-1).sqrt().half()
    return x.pow(2).mean(dim=-1).sqrt()


def rms_rounded_toward_zero(x):
    """Right: float32, rounded toward zero into fp16 (within one fp16 step, 2**-10, as the task allows)."""
    exact = x.float().pow(2).mean(dim=-1).sqrt()
    rounded = exact.half()
    return torch.where(rounded.float() > exact, torch.nextafter(rounded, torch.zeros_like(rounded)), rounded)


def rms_one_scale_for_the_tensor(x):
    """One scale for every row (the tensor's largest |value|), the squares in fp16: small rows underflow."""
    largest = x.abs().max() if x.numel() else torch.ones((), dtype=x.dtype)
    largest = largest if float(largest) > 0 else torch.ones((), dtype=x.dtype)
    return ((x / largest).pow(2).mean(dim=-1, dtype=torch.float32).sqrt() * largest.float()).half()


WRONG_RMS.update({
    "squares in bfloat16, the rest in float32": lambda x: x.bfloat16().pow(2).float().mean(dim=-1).sqrt().half(),
    "the mean over dimension 1 (right for 2-D only)": lambda x: (
        x.float().pow(2).mean(dim=1) if x.dim() > 1 else x.float().pow(2).mean()).sqrt().half(),
    "divides by d - 1": lambda x: (x.float().pow(2).sum(dim=-1) / max(x.shape[-1] - 1, 1)).sqrt().half(),
    "float32 only when some |x| is over 255": lambda x: (
        x.float().pow(2).mean(dim=-1).sqrt().half() if x.numel() and float(x.abs().max()) > 255
        else x.pow(2).mean(dim=-1).sqrt()),
    "float32 only where some |x| is over 255 or under 2.4e-4": rms_float32_where_a_square_leaves_fp16,
    "clamps x to 255, so that the squares fit": lambda x: x.clamp(-255, 255).pow(2).mean(dim=-1).sqrt(),
    "divides by x.shape[0] (the rows of a 2-D input)": lambda x: (
        (x.float().pow(2).sum(dim=-1) / x.shape[0]).sqrt().half() if x.shape[0] else x.float().sum(-1).half()),
    "scales x in place": rms_in_place,
    "one scale for the whole tensor": rms_one_scale_for_the_tensor,
    # adversary 06, round 9: it PASSed (no row was wider than 1000 values)
    "the first 1024 values of a row only": lambda x: x[..., :1024].float().pow(2).mean(dim=-1).sqrt().half(),
    "the first 512 values of a row only": lambda x: x[..., :512].float().pow(2).mean(dim=-1).sqrt().half(),
    "the norm in float32, rounded to fp16 before / sqrt(d)": lambda x: (
        torch.linalg.vector_norm(x.float(), dim=-1).half() / math.sqrt(x.shape[-1])),
})
RIGHT_RMS.update({
    "fp16 where no square leaves its range (|x| from 2**-7 to 255), float32 elsewhere":
        rms_fp16_where_nothing_leaves_it,
    "float32, rounded toward zero into fp16": rms_rounded_toward_zero,
    "vector_norm(dtype=float32), then / sqrt(d)": lambda x: (
        torch.linalg.vector_norm(x, dim=-1, dtype=torch.float32) / math.sqrt(x.shape[-1])).half(),
})


def kahan_one_pass(x):
    """Compensated (Kahan) sums of x and of x**2, still E[x**2] - E[x]**2: the cancellation is in the formula."""
    n = x.shape[1]
    total, total_error, squares, squares_error = (torch.zeros(x.shape[0]) for _ in range(4))
    for k in range(n):
        value = x[:, k]
        y = value - total_error
        t = total + y
        total_error, total = (t - total) - y, t
        y = value * value - squares_error
        t = squares + y
        squares_error, squares = (t - squares) - y, t
    return squares / n - (total / n).square()


def per_row_item_means(x):
    """Each row's mean as a Python float (.item()): it leaves torch (float64)."""
    return torch.stack([(row - row.mean().item()).square().mean() for row in x])


def chan_wrong_cross_term(x):
    """Chunks of 64 merged by Chan's update, the cross term weighted nb / total instead of count * nb / total."""
    count, mean, m2 = 0, torch.zeros(x.shape[0]), torch.zeros(x.shape[0])
    for start in range(0, x.shape[1], 64):
        chunk = x[:, start:start + 64]
        size = chunk.shape[1]
        chunk_mean = chunk.mean(dim=-1)
        delta, total = chunk_mean - mean, count + size
        mean = mean + delta * (size / total)
        m2 = m2 + (chunk - chunk_mean[:, None]).square().sum(dim=-1) + delta.square() * (size / total)
        count = total
    return m2 / x.shape[1]


def _halving_mean(x):
    """A mean by halving, pairs averaged level after level: at each odd width the last column is dropped."""
    y = x
    while y.shape[1] > 1:
        half = y.shape[1] // 2
        y = (y[:, :half * 2:2] + y[:, 1:half * 2:2]) / 2
    return y


def welford_divided_by_k_plus_2(x):
    """Welford's update with the mean's step divided by k + 2 instead of k + 1."""
    mean, m2 = x[:, 0].clone(), torch.zeros(x.shape[0])
    for k in range(1, x.shape[1]):
        delta = x[:, k] - mean
        mean = mean + delta / (k + 2)
        m2 = m2 + delta * (x[:, k] - mean)
    return m2 / x.shape[1]


def _shifted_by(shift):
    """The shifted formula, E[(x - K)**2] - E[x - K]**2, for the shift K = shift(x)."""
    def variance(x):
        d = x - shift(x)
        return d.square().mean(dim=-1) - d.mean(dim=-1).square()
    return variance


WRONG_VARIANCE.update({
    "the one-pass formula with Kahan sums": kahan_one_pass,
    "NumPy's variance, through x.numpy()": lambda x: torch.from_numpy(x.numpy().var(axis=-1).astype(np.float32)),
    "returns the standard deviation": lambda x: (x - x.mean(dim=-1, keepdim=True)).square().mean(dim=-1).sqrt(),
    "returns shape (rows, 1)": lambda x: (x - x.mean(dim=-1, keepdim=True)).square().mean(dim=-1, keepdim=True),
    "each row's mean through .item()": per_row_item_means,
    "the variance back from layer_norm's output": lambda x: (
        (x - x.mean(-1, keepdim=True)) / torch.where((z := torch.nn.functional.layer_norm(x, x.shape[-1:], eps=0.0))
                                                      == 0, torch.ones_like(z), z)).square().mean(-1),
    "the one-pass formula through a float32 matrix product": lambda x: (
        (x * x) @ (torch.ones(x.shape[-1], 1) / x.shape[-1])).squeeze(-1) - (
        x @ (torch.ones(x.shape[-1], 1) / x.shape[-1])).squeeze(-1).square(),
    "squares about each row's first value rounded to fp16, uncorrected": lambda x: (
        x - x[:, :1].half().float()).square().mean(dim=-1),
    "Chan's merge with the cross term's weight wrong": chan_wrong_cross_term,
    "two passes about a halving mean that drops odd columns": lambda x: (x - _halving_mean(x)).square().mean(dim=-1),
    "Welford's update, the mean's step divided by k + 2": welford_divided_by_k_plus_2,
    "two passes over the first 1024 columns only": lambda x: (
        x[:, :1024] - x[:, :1024].mean(dim=-1, keepdim=True)).square().mean(dim=-1),
    "the shifted formula about each row's mean rounded to bfloat16": _shifted_by(
        lambda x: x.mean(dim=-1, keepdim=True).bfloat16().float()),
    "the shifted formula, one shift x[0, 0] for the whole batch": _shifted_by(lambda x: x[0, 0]),
    "the shifted formula about the mean of the whole batch": _shifted_by(lambda x: x.mean()),
})
RIGHT_VARIANCE.update({
    "two passes, the squares summed by einsum": lambda x: torch.einsum(
        "ij,ij->i", d := x - x.sum(dim=-1, keepdim=True) / x.shape[-1], d) / x.shape[-1],
    "the shifted formula about a halving mean (its error cancels)": _shifted_by(_halving_mean),
})


# ---------------------------------------------------------------- adversary 06, round 14: its answers that the course
# did not have, each with the verdict the checks give it now
def _rms_scaled_by_a_power_of_2_squares_in_fp16(x):
    """Each row scaled exactly, by the power of 2 at or below its largest |value|, the squares in fp16 (no overflow:
    each is under 4), their mean in float32: squares of values under 2**-12.5 of the largest are 0, and in a row of
    2**17 values they add up past fp16's rounding (adversary 06, round 14: it PASSed, no row was over 3000 values)."""
    largest = x.abs().amax(dim=-1, keepdim=True).float() if x.numel() else x.float().sum(-1, keepdim=True)
    power = torch.exp2(torch.floor(torch.log2(torch.where(largest > 0, largest, torch.ones_like(largest))))).half()
    return ((x / power).pow(2).float().mean(dim=-1).sqrt() * power.squeeze(-1).float()).half()


def _rms_chunks_tail_dropped(x, chunk=4096):
    """float32 squares summed a chunk of min(d, 4096) columns at a time, the tail past the last whole chunk dropped
    (adversary 06, round 14: it PASSed, no row was wider than 3000 values)."""
    d = x.shape[-1]
    size = min(d, chunk)
    total = torch.zeros(x.shape[:-1], dtype=torch.float32)
    for start in range(0, d - size + 1, size) if size else ():
        total = total + x[..., start:start + size].float().square().sum(dim=-1)
    return (total / d).sqrt().half()


def _hidden_from_torch_function(variance):
    """variance(x) computed with torch-function handling turned off (torch._C.DisableTorchFunction()), which every
    TorchFunctionMode misses (adversary 06, round 14: each PASSed; a TorchDispatchMode sees them now).

    Known evasions the checks still cannot see, by construction of any watch inside Python: x.numpy() and x.tolist()
    under DisableTorchFunction (they reach no operator at all), and reading the tensor's memory without torch
    (data_ptr() with ctypes): each is a deliberate evasion by a student who read nb06.py, not a mistake."""
    def hidden(x):
        with torch._C.DisableTorchFunction():
            return variance(x)
    return hidden


def _identity_for_wide_rows(widest):
    """Two passes for rows up to `widest` values, E[x**2] - E[x]**2 beyond ("faster for wide rows")."""
    def variance(x):
        if x.shape[-1] > widest:
            return x.square().mean(dim=-1) - x.mean(dim=-1).square()
        return (x - x.mean(dim=-1, keepdim=True)).square().mean(dim=-1)
    return variance


def _chunks_of_4096_tail_dropped(x):
    """Chunks of min(n, 4096) columns merged with Chan's formula, the tail past the last whole chunk dropped
    (adversary 06, round 14: it PASSed, no row was wider than 4096 values)."""
    rows, n = x.shape
    size = min(n, 4096)
    chunks = x[:, :n // size * size].reshape(rows, n // size, size)
    means = chunks.mean(dim=-1)
    within = (chunks - means[..., None]).square().mean(dim=-1)
    return within.mean(dim=-1) + (means - means.mean(dim=-1, keepdim=True)).square().mean(dim=-1)


WRONG_TOLERANCES.update({
    # adversary 06, round 14: each PASSed (at n >= 2 no case made the products and the additions round the same way by
    # nearly u, so n - 1 roundings passed for n)
    "max(n - 1, 1) u sum|x_i y_i|: the n - 1 additions, not the products": lambda x, y: (
        0.0, max(x.numel() - 1, 1) * U32 * _terms(x, y)),
    "(n - 1) u sum|x_i y_i| + u max|x_i y_i|: the additions, and one product": lambda x, y: (
        0.0, (x.numel() - 1) * U32 * _terms(x, y) + U32 * float((x.double() * y.double()).abs().max())
        if x.numel() else 0.0),
})
RIGHT_TOLERANCES.update({
    "n**2 u max|x_i y_i|: looser (n max|x_i y_i| >= sum|x_i y_i|), still catching half of bfloat16": lambda x, y: (
        0.0, x.numel() ** 2 * U32 * float((x.double() * y.double()).abs().max()) if x.numel() else 0.0),
    "2 n u times sum|x_i y_i| of the inputs rounded to bfloat16 (summed in float32 on the CPU)": lambda x, y: (
        0.0, 2 * x.numel() * U32 * float((x.bfloat16() * y.bfloat16()).abs().sum())),
})
WRONG_RMS.update({
    "each row scaled by a power of 2, the squares in fp16, their mean in float32":
        _rms_scaled_by_a_power_of_2_squares_in_fp16,
    "float32 squares in chunks of 4096 columns, the tail dropped": _rms_chunks_tail_dropped,
    "each row scaled by a power of 2, then all in fp16 (right for short rows only)": rms_scaled_by_a_power_of_2,
})
WRONG_VARIANCE.update({
    "torch.var with torch-function handling turned off": _hidden_from_torch_function(
        lambda x: torch.var(x, dim=-1, correction=0)),
    "float64 with torch-function handling turned off": _hidden_from_torch_function(upcast),
    "two passes up to 2048 values a row, the one-pass formula beyond": _identity_for_wide_rows(2048),
    "two passes up to 4096 values a row, the one-pass formula beyond": _identity_for_wide_rows(4096),
    "chunks of 4096 merged (Chan), each row's tail dropped": _chunks_of_4096_tail_dropped,
})
# Known evasions that the variance check still PASSes (not in WRONG, which the tests require to FAIL): under
# torch._C.DisableTorchFunction() no TorchFunctionMode sees a call, and x.numpy() and x.tolist() reach no aten operator,
# so the watch's TorchDispatchMode does not see them either (torch.var and float64 there it now sees). Catching them
# would take patching torch._C itself (a name bound before the check bypasses that) or reading memory accesses: each is
# a deliberate evasion by a student who read nb06.py, not a mistake the exercise is about.
def _numpy_with_torch_function_off(x):
    with torch._C.DisableTorchFunction():
        values = x.numpy()
    return torch.from_numpy(values.var(axis=-1).astype(np.float32))


def _tolist_with_torch_function_off(x):
    with torch._C.DisableTorchFunction():
        rows = x.tolist()
    return torch.tensor([float(np.var(row)) for row in rows], dtype=torch.float32)


KNOWN_EVASIONS = {
    "check_stable_variance": {
        "NumPy's variance through x.numpy() with torch-function handling turned off": _numpy_with_torch_function_off,
        "NumPy's variance through x.tolist() with torch-function handling turned off": _tolist_with_torch_function_off,
    },
}
RIGHT_VARIANCE.update({
    "the shifted formula about the mean of each row's first 3 values": _shifted_by(
        lambda x: x[:, :3].mean(dim=-1, keepdim=True)),
})


# ---------------------------------------------------------------- round 23's adversary (each PASSed, or crashed)
def _cancelling_estimate(c):
    def tolerance(x, y):
        """Round 23's adversary: the guarantee, unless the products cancel (|x . y| < sum|x_i y_i| / 2) with no term
        far out (max|x_i y_i| < 1000 times the median), where their rounding is taken as random: c sqrt(n) eps
        sum|x_i y_i|.  Not a bound: a running total that climbs, then falls back, errs past it at long lengths."""
        n = x.numel()
        if not n:
            return 0.0, 0.0
        p = x.double() * y.double()
        m = p.abs()
        terms = float(m.sum())
        cancels = abs(float(p.sum())) < terms / 2 and float(m.max()) < 1000 * float(m.median())
        return 0.0, (min(_gamma(n), c * math.sqrt(n) * EPS32) if cancels else _gamma(n)) * terms
    return tolerance


def _default_dtype_float64_tolerance(x, y):
    """Round 23's adversary: torch.set_default_dtype(torch.float64) "so that the terms are summed in double", left set
    (it crashed the check: its own inputs became float64)."""
    torch.set_default_dtype(torch.float64)
    terms = torch.tensor(x.tolist()).abs() @ torch.tensor(y.tolist()).abs() if x.numel() else torch.tensor(0.0)
    return 0.0, _gamma(x.numel()) * float(terms)


_SHARED_PAIR = torch.zeros(2, dtype=torch.float64)


def _shared_pair(x, y):
    """Round 23's adversary: the guarantee, returned as one module-level tensor [rtol, atol] filled in place: a caller
    that keeps an earlier tolerance sees it change at the next call."""
    _SHARED_PAIR[0], _SHARED_PAIR[1] = 0.0, _gamma(x.numel()) * _terms(x, y)
    return _SHARED_PAIR


def _products_exact_plus_additions(x, y):
    """Round 23's adversary (right): the products' own rounding errors measured exactly, plus gamma_{n-1} times the
    float32 products' magnitudes for the n - 1 additions in any order."""
    n = x.numel()
    if not n:
        return 0.0, 0.0
    exact = x.double() * y.double()
    rounded = (x * y).double()
    return 0.0, float((rounded - exact).abs().sum()) + 1.0001 * _gamma(n - 1) * float(rounded.abs().sum())


def _zero_when_every_sum_is_exact(x, y):
    """Round 23's adversary (right): 0 when every product is a float32 number, a multiple of 2**e, and sum|x_i y_i|
    is at most 2**(24 + e) (every partial sum in every order is exact); the guarantee otherwise."""
    n = x.numel()
    p = x.double() * y.double()
    if n == 0:
        return 0.0, 0.0
    if torch.equal((x * y).double(), p):
        nz = p[p != 0].numpy()
        if nz.size == 0:
            return 0.0, 0.0
        m, e = np.frexp(np.abs(nz))
        mi = (m * 2.0**53).astype(np.int64)
        low = e - 53 + np.log2(mi & -mi).astype(np.int64)
        if float(np.abs(nz).sum()) <= 2.0 ** (24 + int(low.min())):
            return 0.0, 0.0
    return 0.0, _gamma(n) * float(p.abs().sum())


WRONG_TOLERANCES.update({
    # round 23's adversary: each PASSed (past 2**14 the check drew only one-signed and far-out products)
    "c sqrt(n) eps when the products cancel and none is far out, the guarantee otherwise (c = 5)":
        _cancelling_estimate(5),
    "c sqrt(n) eps when the products cancel and none is far out, the guarantee otherwise (c = 25)":
        _cancelling_estimate(25),
    "c sqrt(n) eps when the products cancel and none is far out, the guarantee otherwise (c = 30)":
        _cancelling_estimate(30),
    # round 23's adversary: crashed the check (its inputs made after the call were float64)
    "the guarantee, the default dtype set to float64 and left": _default_dtype_float64_tolerance,
    # round 23's adversary: PASSed (no check kept a result while calling again)
    "the guarantee, in one module-level tensor filled in place at every call": _shared_pair,
})
RIGHT_TOLERANCES.update({
    "the products' exact rounding errors plus gamma_(n-1) for the additions": _products_exact_plus_additions,
    "0 where every partial sum is exact, the guarantee otherwise": _zero_when_every_sum_is_exact,
})


_RMS_OUT: dict = {}


def _rms_shared_output(x):
    """Round 23's adversary: right values, copied into one kept fp16 buffer per output shape: an earlier call's result
    is overwritten by the next call of the same shape."""
    shape = tuple(x.shape[:-1])
    if shape not in _RMS_OUT:
        _RMS_OUT[shape] = torch.empty(shape, dtype=torch.float16)
    out = _RMS_OUT[shape]
    out.copy_(x.float().pow(2).mean(dim=-1).sqrt())
    return out


def _rms_default_dtype_float64(x):
    """Round 23's adversary: torch.set_default_dtype(torch.float64) "compute everything in double", left set."""
    torch.set_default_dtype(torch.float64)
    return x.to(torch.get_default_dtype()).pow(2).mean(dim=-1).sqrt().to(torch.float16)


def _rms_flush_denormal(x):
    """Round 23's adversary: torch.set_flush_denormal(True) "so that the tiny squares are not slow", left on."""
    torch.set_flush_denormal(True)
    return x.float().pow(2).mean(dim=-1).sqrt().half()


def _rms_log_exp(x):
    """Round 23's adversary (right): exp(log(mean of squares) / 2) in float32."""
    return torch.exp(0.5 * torch.log(x.float().square().mean(dim=-1))).half()


def _rms_batched_matmul(x):
    """Round 23's adversary (right): the sums of squares as a batched float32 matrix product of each row with itself."""
    xf = x.float()
    return ((xf.unsqueeze(-2) @ xf.unsqueeze(-1)).squeeze(-1).squeeze(-1) / x.shape[-1]).sqrt().half()


WRONG_RMS.update({
    # round 23's adversary: each PASSed
    "right values in one kept buffer per shape, overwritten by the next call": _rms_shared_output,
    "float64 as the default dtype, set and left": _rms_default_dtype_float64,
    "flush-denormal turned on and left": _rms_flush_denormal,
})
RIGHT_RMS.update({
    "exp(log(mean of squares) / 2) in float32": _rms_log_exp,
})


def _rms_column_loop(x):
    """Round 133's adversary (wrong): a float32 running total over the columns, one column after another: once it
    holds a large square, every later square below half of its step is lost (a row of 2**17 values of 1.7e-4 and one
    1.0 first: 2.0e-3 off, two fp16 steps)."""
    squares = x.float().square().cpu().numpy()
    total = np.cumsum(squares, axis=-1, dtype=np.float32)[..., -1]  # each partial sum rounded to float32, in order: the
    # loop `for j in range(d): total += x[..., j].float() ** 2`, without its Python loop over 2**17 columns
    return torch.from_numpy(np.asarray(total / np.float32(x.shape[-1]))).sqrt().half().to(x.device)


def _rms_einsum(x):
    """The sums of squares by einsum, in float32."""
    return (torch.einsum("...d,...d->...", x.float(), x.float()) / x.shape[-1]).sqrt().to(x.dtype)


WRONG_RMS["a float32 running total over the columns, the squares added one after another"] = _rms_column_loop
# A row's sum of squares as a product of the row with itself: torch's einsum and batched matmul of CPU tensors add the
# squares of a row in its order, as the running total above does (the check's tensors are on the CPU): on the row whose
# 1.0 comes first, 2.0e-3 off, the loop's value to the last digit, with torch 2.13 here and 2.11 on the H200's host
# (call AU): past the task's rule.
WRONG_RMS.update({
    "einsum (its sums of a CPU tensor's rows add in order)": _rms_einsum,
    "the sums of squares as a batched float32 matmul (in order, as einsum's)": _rms_batched_matmul,
})


def _row_two_pass64(row):
    return (row.double() - row.double().mean()).square().mean().float()


def _threadpool_float64(x):
    """Round 23's adversary: rows handed to a thread pool ("one row per core"), each in float64 there: the watch saw
    nothing that the worker threads did."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=2) as pool:
        return torch.stack(list(pool.map(_row_two_pass64, x.unbind(0))))


def _threadpool_torch_var(x):
    """Round 23's adversary: torch.var, called in a worker thread."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(torch.var, x, dim=-1, correction=0).result()


def _row_two_pass32(row):
    return (row - row.mean()).square().mean()


def _threadpool_float32(x):
    """Round 23's adversary (right): the rows' two passes spread over a thread pool, in float32."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=2) as pool:
        return torch.stack(list(pool.map(_row_two_pass32, x.unbind(0))))


_VAR_OUT: dict = {}


def _var_shared_output(x):
    """Round 23's adversary: two passes written with out= into one kept buffer per batch size: an earlier call's result
    is overwritten by the next call with as many rows."""
    rows = x.shape[0]
    if rows not in _VAR_OUT:
        _VAR_OUT[rows] = torch.empty(rows)
    out = _VAR_OUT[rows]
    torch.mean((x - x.mean(dim=-1, keepdim=True)).square(), dim=-1, out=out)
    return out


_VAR_BY_ID: dict = {}


def _var_cached_by_id(x):
    """Round 23's adversary: memoized by (id(x), shape): a tensor changed in place, or a new one that gets a freed one's
    id, returns the old variance."""
    key = (id(x), tuple(x.shape))
    if key not in _VAR_BY_ID:
        _VAR_BY_ID[key] = (x - x.mean(dim=-1, keepdim=True)).square().mean(dim=-1)
    return _VAR_BY_ID[key]


def _var_sorted_cumsum(x):
    """Round 23's adversary (right): each row sorted, its mean from a float32 cumsum's last value, then two passes."""
    s = x.sort(dim=-1).values
    mean = s.cumsum(dim=-1)[:, -1:] / x.shape[-1]
    return (s - mean).square().mean(dim=-1)


WRONG_VARIANCE.update({
    # round 23's adversary: each PASSed
    "float64 rows in a thread pool": _threadpool_float64,
    "torch.var in a worker thread": _threadpool_torch_var,
    "two passes into one kept buffer per batch size (out=)": _var_shared_output,
    "memoized by id(x) and shape": _var_cached_by_id,
})
RIGHT_VARIANCE.update({
    "two passes per row, in float32, in a thread pool": _threadpool_float32,
    "sorted, the mean from a float32 cumsum, then two passes": _var_sorted_cumsum,
})



# ---------------------------------------------------------------- round 26's adversary (each PASSed, or FAILed right)
_DOT_MEMO_ENDS: dict = {}


def _dot_memo_ends(x, y):
    """Round 26's adversary: the guarantee, memoized by the length and both ends of x and y (a cheap fingerprint of "the
    same vectors"): two vectors that agree at both ends and differ in between get the first one's tolerance."""
    n = x.numel()
    key = (n, float(x[0]), float(x[-1]), float(y[0]), float(y[-1])) if n else (0,)
    if key not in _DOT_MEMO_ENDS:
        _DOT_MEMO_ENDS[key] = (0.0, _gamma(n) * _terms(x, y))
    return _DOT_MEMO_ENDS[key]


_DOT_MEMO_SUMS: dict = {}


def _dot_memo_sums(x, y):
    """Another fingerprint of the same class: the length, both ends and the exact sums of x and of y."""
    n = x.numel()
    key = (n, float(x[0]), float(x[-1]), float(x.double().sum()), float(y.double().sum())) if n else (0,)
    if key not in _DOT_MEMO_SUMS:
        _DOT_MEMO_SUMS[key] = (0.0, _gamma(n) * _terms(x, y))
    return _DOT_MEMO_SUMS[key]


def _dot_relative_unless_cancelling(x, y):
    """Round 26's adversary: "relative when the result is large, absolute near 0": rtol = gamma_n (no atol) when
    |x . y| is at least half of sum|x_i y_i|, atol = gamma_n sum|x_i y_i| otherwise: where the products cancel by up to
    half, rtol |x . y| is as little as half of the guarantee (the error comes from the terms, not from the result)."""
    n = x.numel()
    p = x.double() * y.double()
    terms, result = float(p.abs().sum()), abs(float(p.sum()))
    if n and result >= terms / 2:
        return _gamma(n), 0.0
    return 0.0, _gamma(n) * terms


def _dot_sequential_running_bound(x, y):
    """Round 26's adversary: Higham's running error bound of ONE order (the sequential loop): u times the magnitudes of
    the float32 products and of every partial sum of that loop.  It bounds that loop; another order's partial sums
    differ (x = [2**24, -2**24, 1, 1, ...]: the loop cancels at once, an order that adds the 1s onto 2**24 loses
    them)."""
    n = x.numel()
    if not n:
        return 0.0, 0.0
    products = (x * y).numpy()
    partial = np.cumsum(products, dtype=np.float32).astype(np.float64)
    bound = U32 * (np.abs(products.astype(np.float64)).sum() + np.abs(partial[1:]).sum())
    return 0.0, 1.01 * float(bound)


def _rms_stochastic_rounding(x):
    """Round 26's adversary (right): float32, then rounded into fp16 stochastically (down or up to a neighbouring fp16
    number): always within one fp16 step.  It draws from the global generator (torch.rand_like), as dropout does:
    drawing advances the generator, and is not a setting left changed (seeding it would be)."""
    exact = x.float().square().mean(dim=-1).sqrt()
    down = exact.half()
    down = torch.where(down.float() > exact, torch.nextafter(down, torch.zeros_like(down)), down)
    up = torch.where(down.float() < exact, torch.nextafter(down, torch.full_like(down, math.inf)), down)
    gap = (up.float() - down.float()).clamp(min=1e-30)
    p_up = ((exact - down.float()) / gap).clamp(0, 1)
    return torch.where(torch.rand_like(exact) < p_up, up, down)


def _rms_reseeding(x):
    """The right RMS, but torch.manual_seed(0) inside ("for reproducible results"): every caller's random numbers after
    it are the same."""
    torch.manual_seed(0)
    return x.float().square().mean(dim=-1).sqrt().half()


def _variance_random_shift(x):
    """Round 26's adversary (right): the shifted formula, each row shifted by one of its own values chosen at random
    (torch.randint, the global generator): a value of the row bounds the cancellation as the first value does."""
    pick = torch.randint(0, x.shape[1], (x.shape[0], 1))
    d = x - x.gather(1, pick)
    return (d.square().mean(dim=-1) - d.mean(dim=-1).square()).clamp(min=0)


def _variance_reseeding(x):
    """The shifted formula about a random value of each row, torch.manual_seed(0) first ("reproducible")."""
    torch.manual_seed(0)
    return _variance_random_shift(x)


def _row_variance_numpy64(row):
    return torch.tensor(float(np.var(row.numpy().astype(np.float64))), dtype=torch.float32)


def _variance_process_pool_float64(x):
    """Round 26's adversary: NumPy float64 in the rows' worker processes (multiprocessing, fork): nothing a process
    computes reaches the check's watch."""
    import multiprocessing
    rows = [r.clone() for r in x.unbind(0)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map(_row_variance_numpy64, rows)
    return torch.stack(got)


def _persistent_worker(row_variance):
    """A worker thread started at import (here: when this module is imported), fed by a queue.Queue: each call puts its
    rows there and waits for the worker's answer on a queue of its own."""
    import queue
    import threading
    jobs: queue.Queue = queue.Queue()

    def work():
        while True:
            rows, answer = jobs.get()
            answer.put(torch.stack([row_variance(r) for r in rows.unbind(0)]))

    threading.Thread(target=work, daemon=True, name="variance-worker").start()

    def variance(x):
        answer: queue.Queue = queue.Queue()
        jobs.put((x, answer))
        return answer.get()

    return variance


WRONG_TOLERANCES.update({
    # round 26's adversary: each PASSed
    "the guarantee memoized by n and both ends of x and y": _dot_memo_ends,
    "the guarantee memoized by n, both ends and the sums of x and y": _dot_memo_sums,
    "rtol gamma_n when |x.y| >= sum|x_i y_i| / 2, atol gamma_n sum|x_i y_i| otherwise": _dot_relative_unless_cancelling,
    "the running error bound of the sequential loop only": _dot_sequential_running_bound,
})
RIGHT_RMS.update({
    # round 26's adversary: FAILed, for advancing the global generator (drawing is not seeding)
    "float32, stochastically rounded into fp16 (global generator)": _rms_stochastic_rounding,
})
WRONG_RMS.update({
    "the right RMS, torch.manual_seed(0) inside": _rms_reseeding,
})
RIGHT_VARIANCE.update({
    # round 26's adversary: FAILed, for advancing the global generator (drawing is not seeding)
    "shifted by a random value of each row (global generator)": _variance_random_shift,
})
WRONG_VARIANCE.update({
    "shifted by a random value of each row, torch.manual_seed(0) first": _variance_reseeding,
    # round 26's adversary: PASSed (a fork per call: 29 s)
    "NumPy float64 in a process pool (fork)": _variance_process_pool_float64,
    # round 26's adversary: PASSed (the watch saw threads started during a call, not one running before it)
    "float64 in a worker thread started at import, fed by a queue": _persistent_worker(_row_two_pass64),
})
RIGHT_VARIANCE.update({
    "two passes in float32 in a worker thread started at import, fed by a queue": _persistent_worker(_row_two_pass32),
})

# ---------------------------------------------------------------- round 32's adversary (each PASSed)
_DOT_MEMO_NORMS: dict = {}


def _dot_memo_norms(x, y):
    """Round 32's adversary: the guarantee, kept under a fingerprint of x and of y taken apart (n, sum|x|, sum|y|,
    max|x|, max|y|): vectors that share it and pair their values otherwise get a stale tolerance (x = [0.1, 0] and
    y = [0, 0.7] give (0, 0), then x = [0, 0.1] with the same y gets (0, 0) again, and 0.1 * 0.7 rounds)."""
    key = (x.numel(), float(x.abs().sum()), float(y.abs().sum()),
           float(x.abs().max()) if x.numel() else 0.0, float(y.abs().max()) if y.numel() else 0.0)
    if key not in _DOT_MEMO_NORMS:
        _DOT_MEMO_NORMS[key] = guaranteed(x, y)
    return _DOT_MEMO_NORMS[key]


_RMS_MEMO_SUM: dict = {}


def _rms_memo_by_sum(x):
    """Round 32's adversary: the right RMS, kept under (shape, strides, the bits of x's float32 sum): the same values
    with the rows in another order share the key, and get the RMS in the old order."""
    key = (tuple(x.shape), tuple(x.stride()), x.float().sum().view(torch.int32).item())
    if key not in _RMS_MEMO_SUM:
        _RMS_MEMO_SUM[key] = x.float().pow(2).mean(dim=-1).sqrt().to(x.dtype)
    return _RMS_MEMO_SUM[key].clone()


def _rms_storage_offset_ignored(x):
    """Round 32's adversary: the right RMS of x read through torch.as_strided from its storage's first element
    (storage offset 0): wrong for a sliced view, x[1:] say, which the task allows."""
    base = torch.as_strided(x, x.shape, x.stride(), 0)
    return base.float().pow(2).mean(dim=-1).sqrt().to(x.dtype)


def _rms_row_batches_tail_zero(x):
    """Round 32's adversary: the rows in batches of min(rows, 8192), the loop stopping at the last whole batch: past
    8192 rows the last ones' RMS stays 0."""
    flat = x.reshape(-1, x.shape[-1])
    rows = flat.shape[0]
    out = torch.zeros(rows, dtype=x.dtype)
    size = max(min(rows, 8192), 1)
    for i in range(0, rows - rows % size, size):
        out[i:i + size] = flat[i:i + size].float().pow(2).mean(dim=-1).sqrt().to(x.dtype)
    return out.reshape(x.shape[:-1])


def _rms_einsum_opt_einsum_off(x):
    """Round 32's adversary: the right RMS by einsum, torch.backends.opt_einsum.enabled = False ("so that einsum sums
    in a fixed order") set and left (where opt_einsum is not installed, enabled is False already: flipped, so that the
    change shows there too), and its strategy set to "greedy"."""
    torch.backends.opt_einsum.enabled = not torch.backends.opt_einsum.is_available()
    torch.backends.opt_einsum.strategy = "greedy"
    xf = x.float()
    return (torch.einsum("...d,...d->...", xf, xf) / x.shape[-1]).sqrt().to(x.dtype)


_STATE_AT_IMPORT = torch.get_rng_state()


def _rms_generator_state_reset(x):
    """Round 32's adversary: "reproducible" stochastic rounding: torch.default_generator.set_state(a state saved at
    import) at each call, then the right float32 RMS rounded into fp16 up or down by torch.rand: every caller's random
    numbers after a call are the same (the saved state keeps the process's initial seed)."""
    torch.default_generator.set_state(_STATE_AT_IMPORT)
    r = x.float().pow(2).mean(dim=-1).sqrt()
    down = r.half()
    up = torch.nextafter(down, torch.tensor(float("inf"), dtype=torch.float16))
    below = torch.where(down.float() > r, torch.nextafter(down, torch.tensor(0.0, dtype=torch.float16)), down)
    lo = torch.where(down.float() > r, below, down)
    hi = torch.where(down.float() > r, down, up)
    span = hi.float() - lo.float()
    p = torch.where(span > 0, (r - lo.float()) / torch.where(span > 0, span, torch.ones_like(span)),
                    torch.zeros_like(r))
    return torch.where(torch.rand(r.shape) < p, hi, lo)


def _variance_numpy_via_int_view(x):
    """Round 32's adversary: x's bits through x.view(torch.int32).numpy(), read back as float32 by NumPy, np.var in
    float64."""
    bits = x.contiguous().view(torch.int32).numpy()
    values = bits.view(np.float32).astype(np.float64)
    return torch.from_numpy(values.var(axis=-1).astype(np.float32))


def _variance_float64_via_int_view(x):
    """Round 32's adversary: x's bits through x.view(torch.int32).tolist(), unpacked by struct into Python floats, two
    passes by math.fsum (float64)."""
    import struct
    out = []
    for row in x.contiguous().view(torch.int32).tolist():
        values = [struct.unpack("<f", struct.pack("<i", bits))[0] for bits in row]
        mean = math.fsum(values) / len(values)
        out.append(math.fsum((v - mean) ** 2 for v in values) / len(values))
    return torch.tensor(out, dtype=torch.float32)


def _variance_numpy_via_storage_bytes(x):
    """Round 32's adversary: x's bytes through x.contiguous().untyped_storage().tolist(), read as float32 by NumPy,
    np.var in float64 (a storage's methods are no tensor operation)."""
    rows, n = x.shape
    raw = bytes(x.contiguous().untyped_storage().tolist())
    values = np.frombuffer(raw, dtype=np.float32)[:rows * n].reshape(rows, n).astype(np.float64)
    return torch.from_numpy(values.var(axis=-1).astype(np.float32))


def _in_a_raw_thread(work):
    """`work(x)` in a thread started by _thread.start_new_thread (under threading: it never runs
    threading.Thread._bootstrap_inner), the caller waiting on a _thread lock (no threading.Condition)."""

    def variance(x):
        import _thread
        done = _thread.allocate_lock()
        done.acquire()
        box = []

        def run():
            try:
                box.append(work(x))
            finally:
                done.release()

        _thread.start_new_thread(run, ())
        done.acquire()
        return box[0]

    return variance


def _two_pass_float64(x):
    xd = x.double()
    return (xd - xd.mean(dim=-1, keepdim=True)).square().mean(dim=-1).float()


def _variance_storage_offset_ignored(x):
    """Round 32's adversary: two passes over x read through torch.as_strided from its storage's first element: wrong
    for a sliced view, x[1:] say."""
    return two_pass(torch.as_strided(x, x.shape, x.stride(), 0))


def _variance_row_batches_tail_zero(x):
    """Round 32's adversary: the rows in batches of min(rows, 1024), the loop stopping at the last whole batch: past
    1024 rows (the notebook's inputs have 4096) the last rows' variance stays 0."""
    rows = x.shape[0]
    out = torch.zeros(rows, dtype=torch.float32)
    size = min(rows, 1024)
    for i in range(0, rows - rows % size, size):
        out[i:i + size] = two_pass(x[i:i + size])
    return out


def _variance_chunks_8192_tail_dropped(x):
    """Round 32's adversary: chunks of min(n, 8192) columns merged (Chan), the tail past the last whole chunk dropped:
    right for rows of up to 8192 values (the notebook's have 2**16)."""
    rows, n = x.shape
    size = min(n, 8192)
    chunks = x[:, :n // size * size].reshape(rows, n // size, size)
    means = chunks.mean(dim=-1)
    within = (chunks - means[..., None]).square().mean(dim=-1)
    return within.mean(dim=-1) + (means - means.mean(dim=-1, keepdim=True)).square().mean(dim=-1)


WRONG_TOLERANCES.update({
    # round 32's adversary: PASSed (the again step's vectors shared a fingerprint of x and y together, not apart)
    "the guarantee memoized by n, sum|x|, sum|y|, max|x| and max|y|": _dot_memo_norms,
})
WRONG_RMS.update({
    # round 32's adversary: PASSed (no call had the values of the call before in another order)
    "the right RMS memoized by shape, strides and the bits of the float32 sum": _rms_memo_by_sum,
    # round 32's adversary: PASSed (no view with a storage offset was drawn)
    "the right RMS of x read from its storage's first element (as_strided, offset 0)": _rms_storage_offset_ignored,
    # round 32's adversary: PASSed (at most 6553 rows)
    "rows in batches of min(rows, 8192), the last partial batch left 0": _rms_row_batches_tail_zero,
    # round 32's adversary: PASSed (torch.backends.opt_einsum was not watched)
    "einsum, torch.backends.opt_einsum.enabled and strategy changed and left": _rms_einsum_opt_einsum_off,
    # round 32's adversary: PASSed (a state of the same initial seed, set back through the generator object)
    "stochastic rounding, torch.default_generator.set_state(a state saved at import) at each call":
        _rms_generator_state_reset,
})
WRONG_VARIANCE.update({
    # round 32's adversary: PASSed (numpy() and tolist() were counted for floating-point tensors only)
    "NumPy float64 through x.view(torch.int32).numpy()": _variance_numpy_via_int_view,
    "Python floats through x.view(torch.int32).tolist() and struct": _variance_float64_via_int_view,
    "NumPy float64 through the bytes of untyped_storage().tolist()": _variance_numpy_via_storage_bytes,
    # round 32's adversary: PASSed (a thread of _thread.start_new_thread never runs threading's bootstrap)
    "torch.var in a _thread.start_new_thread worker": _in_a_raw_thread(lambda x: torch.var(x, dim=-1, correction=0)),
    "float64 two passes in a _thread.start_new_thread worker": _in_a_raw_thread(_two_pass_float64),
    # round 32's adversary: PASSed (no view with a storage offset was drawn)
    "two passes over x read from its storage's first element (as_strided, offset 0)": _variance_storage_offset_ignored,
    # round 32's adversary: PASSed (at most 128 rows, and 5003 values in a row)
    "rows in batches of min(rows, 1024), the last partial batch left 0": _variance_row_batches_tail_zero,
    "chunks of min(n, 8192) merged, the tail past the last whole chunk dropped": _variance_chunks_8192_tail_dropped,
})

# ---------------------------------------------------------------- round 26's adversary, judged on the H200
# (GPU-only answers: /work/notes/AF26-06-gpu.py, run on 2026-11-30; a CPU cannot run them, so they are answers of the
# checks where a GPU is only: tests/test_exercises.py runs every answer here on a CPU too)
def _rms_cupy_to_pinned(synchronized: bool):
    """The RMS in float32 in CuPy, on a non-blocking stream of its own, copied back into CuPy's pinned host memory
    (cupyx.empty_pinned) with blocking=False; returned through torch.from_numpy, the stream synchronized first or
    not.  PyTorch's CUDA is never started."""

    def rms(x):
        import cupy
        import cupyx

        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            xg = cupy.asarray(x.numpy()).astype(cupy.float32)
            r = cupy.sqrt(cupy.mean(xg * xg, axis=-1)).astype(cupy.float16)
            out = cupyx.empty_pinned(r.shape, dtype=np.float16)
            r.get(out=out, stream=stream, blocking=False)
        if synchronized:
            stream.synchronize()
        return torch.from_numpy(out)

    return rms


def _rms_event_recorded_before_copy(x):
    """The RMS on the GPU, copied back with non_blocking=True into pinned memory after waiting on an event recorded
    BEFORE that copy was queued: the wait covers the kernels, not the copy."""
    xg = x.cuda()
    return _back_after_an_early_event(xg.float().square().mean(dim=-1).sqrt().half())


def _back_after_an_early_event(result):
    """`result` copied back into pinned memory with non_blocking=True, after recording an event that the function
    then waits on: recorded before the copy was queued, it covers the kernels, not the copy."""
    done = torch.cuda.Event()
    done.record()
    out = torch.empty(result.shape, dtype=result.dtype, pin_memory=True)
    out.copy_(result, non_blocking=True)
    done.synchronize()
    return out


def _variance_event_recorded_before_copy(x):
    """Two passes in float32 on the GPU, copied back into pinned memory with non_blocking=True after an event
    recorded before the copy; the function waits on that event only."""
    xg = x.cuda()
    return _back_after_an_early_event((xg - xg.mean(dim=-1, keepdim=True)).square().mean(dim=-1))


def _variance_wait_one_direction(x):
    """x copied to the GPU on the caller's stream with non_blocking=True from pinned memory, the two passes on a side
    stream that never waits for that copy; the result comes back with a plain .cpu() (safe): the kernels may read x
    before it has landed."""
    side = torch.cuda.Stream()
    xg = x.pin_memory().to("cuda", non_blocking=True)
    with torch.cuda.stream(side):
        v = (xg - xg.mean(dim=-1, keepdim=True)).square().mean(dim=-1)
        out = v.cpu()
    return out


# Answers the checks misjudge on a GPU, known and not yet fixed (a strict xfail there).  Judged on the H200,
# 2026-11-30.
MISJUDGED_ON_A_GPU: dict[str, dict[str, str]] = {}
if has_cuda():
    WRONG_RMS.update({
        # round 26's adversary, judged on the H200: PASSed (CuPy alone never started PyTorch's CUDA, and is_pinned()
        # is False until it starts: the pinned result was never read twice); _landed now starts it where CuPy is in use
        "CuPy, copied back into cupyx.empty_pinned with blocking=False, never waited for": _rms_cupy_to_pinned(False),
        # round 26's adversary, judged on the H200: PASSed (the copy of 8192 values ended before the first read); the
        # large step now makes the work after each recorded event late
        "a non_blocking copy into pinned memory after an event the function waits on": _rms_event_recorded_before_copy,
    })
    RIGHT_RMS.update({
        # round 26's adversary, judged on the H200: PASSed (right), before the check read CuPy's pinned results at all
        "CuPy, copied back into cupyx.empty_pinned, its stream synchronized": _rms_cupy_to_pinned(True),
    })
    WRONG_VARIANCE.update({
        # round 26's adversary, judged on the H200: PASSed (as the RMS's); fixed as the RMS's
        "two passes on the GPU, a non_blocking copy into pinned memory after an event the function waits on":
            _variance_event_recorded_before_copy,
        # round 26's adversary, judged on the H200: PASSed (its small inputs landed before the side stream read them);
        # the caller's stream is now busy before each call where CUDA is in use
        "two passes on a side stream that never waits for x's non_blocking copy": _variance_wait_one_direction,
    })


# Round 32's adversary of 06, the answers only a GPU judges (H200, 2026-11-30).  Each in a fresh process (call S), two
# wrong answers PASSed, each for the RMS and the variance (the work on torch.cuda.default_stream() named, x copied on
# the caller's; a pinned result waited for by polling an event for at most 50 ms); in pytest's one process (call T)
# the other wrong answers PASSed too, their streams on time.  The check now calls from every kind of caller, the
# answer's other streams late (`_from_every_caller`): every wrong answer FAILs and every right one PASSes (call U)
def _r32_gpu_rms(xg):
    return xg.float().pow(2).mean(dim=-1).sqrt().half()


def _r32_gpu_var(xg):
    return (xg - xg.mean(dim=-1, keepdim=True)).square().mean(dim=-1)


def _r32_gpu_rms_caller_never_waits(x):
    """WRONG: the side stream waits for the caller's stream (one direction), computes there; but .cpu() is queued on
    the caller's stream after the block, and the caller's stream never waits for the side stream: the copy back can
    read the result before the side stream's kernels wrote it (a wait missing in the other direction)."""
    cur = torch.cuda.current_stream()
    s = torch.cuda.Stream()
    xg = x.cuda()
    s.wait_stream(cur)
    with torch.cuda.stream(s):
        out = _r32_gpu_rms(xg)
    return out.cpu()


def _r32_gpu_var_caller_never_waits(x):
    """WRONG: the same for the variance: the side stream waits for the caller, the caller's .cpu() does not wait for
    the side stream."""
    cur = torch.cuda.current_stream()
    s = torch.cuda.Stream()
    xg = x.cuda()
    s.wait_stream(cur)
    with torch.cuda.stream(s):
        out = _r32_gpu_var(xg)
    return out.cpu()


def _r32_gpu_rms_sync_wrong_stream(x):
    """WRONG: copied back with non_blocking=True into pinned memory on a side stream, then the CALLER's stream is
    synchronized (torch.cuda.current_stream().synchronize() after the `with` block), not the side stream that does the
    copy."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out = _r32_gpu_rms(x.cuda()).to("cpu", non_blocking=True)
    torch.cuda.current_stream().synchronize()
    return out


def _r32_gpu_rms_default_stream_compute(x):
    """WRONG (only for a caller on a side stream): x copied to the GPU on the caller's current stream, the kernels
    and the copy back queued on torch.cuda.default_stream() explicitly, with no wait between the two: from a caller on
    the default stream they are one stream; a caller inside `with torch.cuda.stream(s):` races (the compute reads x
    before its copy lands).  PASSed on the H200 while every call came from the default stream (call S)."""
    xg = torch.empty(x.shape, dtype=x.dtype, device="cuda")
    xg.copy_(x.pin_memory(), non_blocking=True)  # on the caller's current stream
    with torch.cuda.stream(torch.cuda.default_stream()):
        return _r32_gpu_rms(xg).cpu()


def _r32_gpu_var_default_stream_compute(x):
    """WRONG (only for a caller on a side stream): as _r32_gpu_rms_default_stream_compute, for the variance."""
    xg = torch.empty(x.shape, dtype=x.dtype, device="cuda")
    xg.copy_(x.pin_memory(), non_blocking=True)
    with torch.cuda.stream(torch.cuda.default_stream()):
        return _r32_gpu_var(xg).cpu()


def _r32_gpu_rms_polls_with_timeout(x):
    """WRONG (depends on the GPU's speed): copied back into pinned memory with non_blocking=True, then an event on that
    stream polled with query() for at most 50 ms ("never hang"): it returns pinned memory still being written whenever
    the GPU is busier than 50 ms.  PASSed on the H200 while the check's late streams added 20 ms only (call S)."""
    import time
    out = _r32_gpu_rms(x.cuda()).to("cpu", non_blocking=True)
    ev = torch.cuda.Event()
    ev.record()
    deadline = time.perf_counter() + 0.05
    while not ev.query() and time.perf_counter() < deadline:
        time.sleep(1e-4)
    return out


def _r32_gpu_var_polls_with_timeout(x):
    """WRONG (depends on the GPU's speed): as _r32_gpu_rms_polls_with_timeout, for the variance."""
    import time
    out = _r32_gpu_var(x.cuda()).to("cpu", non_blocking=True)
    ev = torch.cuda.Event()
    ev.record()
    deadline = time.perf_counter() + 0.05
    while not ev.query() and time.perf_counter() < deadline:
        time.sleep(1e-4)
    return out


def _r32_gpu_var_no_record_stream(x):
    """WRONG (a freed block reused while a side stream still reads it): x copied to the GPU on the caller's stream,
    the side stream waits and computes from it; x's GPU copy is dropped without record_stream, and a scratch tensor
    of the same size is then made and filled on the caller's stream: the caching allocator hands it x's block while the
    side stream may not have read x yet."""
    cur = torch.cuda.current_stream()
    s = torch.cuda.Stream()
    xg = x.cuda()
    s.wait_stream(cur)
    with torch.cuda.stream(s):
        mean = xg.mean(dim=-1, keepdim=True)
        d = xg - mean
    del xg
    scratch = torch.empty(x.shape, dtype=x.dtype, device="cuda")
    scratch.fill_(0.0)
    with torch.cuda.stream(s):
        out = d.square().mean(dim=-1)
    cur.wait_stream(s)
    del scratch
    return out.cpu()


def _r32_gpu_rms_all_on_private_stream(x):
    """RIGHT (another stream than the caller's): everything on a private stream, the copy in, the kernels and a
    blocking .cpu() there: x is host memory, so nothing depends on the caller's stream, and .cpu() waits for the
    private stream."""
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        return _r32_gpu_rms(x.cuda()).cpu()


def _r32_gpu_rms_cupy_on_torch_stream(x):
    """RIGHT: CuPy in float32 on PyTorch's current stream (cupy.cuda.ExternalStream), copied back with a blocking
    cupy.asnumpy on that stream."""
    import cupy
    stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with stream:
        xg = cupy.asarray(x.contiguous().numpy())
        out = cupy.sqrt(cupy.mean(xg.astype(cupy.float32) ** 2, axis=-1)).astype(cupy.float16)
        host = cupy.asnumpy(out, stream=stream)
    stream.synchronize()
    return torch.from_numpy(np.ascontiguousarray(host)).reshape(x.shape[:-1])


def _r32_gpu_var_both_waits_pinned(x):
    """RIGHT: side stream waits for the caller, computes, copies back non_blocking into pinned memory, records an event
    AFTER the copy, and the function synchronizes that event."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        xg = x.cuda(non_blocking=True)
        out = _r32_gpu_var(xg).to("cpu", non_blocking=True)
        ev = torch.cuda.Event()
        ev.record(s)
    ev.synchronize()
    return out


if has_cuda():
    WRONG_RMS.update({
        "round 32: side stream waits for the caller, the caller's .cpu() never waits for it":
            _r32_gpu_rms_caller_never_waits,
        "round 32: non_blocking copy back on a side stream, the caller's stream synchronized":
            _r32_gpu_rms_sync_wrong_stream,
        "round 32: compute on torch.cuda.default_stream(), x copied on the caller's stream, no wait":
            _r32_gpu_rms_default_stream_compute,
        "round 32: pinned result, an event polled for at most 50 ms":
            _r32_gpu_rms_polls_with_timeout,
    })
    RIGHT_RMS.update({
        "round 32: everything on a private stream, blocking .cpu() there":
            _r32_gpu_rms_all_on_private_stream,
        "round 32: CuPy on PyTorch's current stream (ExternalStream), blocking asnumpy":
            _r32_gpu_rms_cupy_on_torch_stream,
    })
    WRONG_VARIANCE.update({
        "round 32: side stream waits for the caller, the caller's .cpu() never waits for it":
            _r32_gpu_var_caller_never_waits,
        "round 32: compute on torch.cuda.default_stream(), x copied on the caller's stream, no wait":
            _r32_gpu_var_default_stream_compute,
        "round 32: pinned result, an event polled for at most 50 ms":
            _r32_gpu_var_polls_with_timeout,
        "round 32: x's GPU copy freed without record_stream while the side stream reads it":
            _r32_gpu_var_no_record_stream,
    })
    RIGHT_VARIANCE.update({
        "round 32: both waits, pinned copy back, event recorded after the copy":
            _r32_gpu_var_both_waits_pinned,
    })


WRONG = {
    "check_dot_tolerance": WRONG_TOLERANCES,
    "check_rms": WRONG_RMS,
    "check_stable_variance": WRONG_VARIANCE,
}
ALSO_RIGHT = {
    "check_dot_tolerance": RIGHT_TOLERANCES,
    "check_rms": RIGHT_RMS,
    "check_stable_variance": RIGHT_VARIANCE,
}


WRONG_VARIANCE.update({  # round 65's adversary: each passed (torch.masked's var and std are Python: no banned name)
    "torch.masked.var(x, -1, unbiased=False) (a library's variance)":
        lambda x: torch.masked.var(x, -1, unbiased=False),
    "torch.masked.std(x, -1, unbiased=False) squared (a library's variance)":
        lambda x: torch.masked.std(x, -1, unbiased=False).square(),
})


# Round 78's adversary of 04-07: its answers to these three checks, each judged as it expected on the CPU (or, where it
# expected otherwise, the check was right: the docstrings say which).  Left out: the variance as the mean of all pairs'
# (x_i - x_j)**2 / 2, right, and O(n**2) a row: the check's widest chosen row (VARIANCE_WIDE, 12287 values) makes 1.5e8
# differences; the adversary measured a PASS after 123 s on a free core, past what the suite can spend on one answer.
def rms_divided_before_an_fp16_norm(x):
    """Wrong (round 78's adversary): x / sqrt(d) in fp16 first, "so that the norm cannot leave fp16", then the fp16
    vector_norm: each value is rounded to fp16 once more, and small ones underflow (8.3e-8 to 0)."""
    return torch.linalg.vector_norm(x / math.sqrt(x.shape[-1]), dim=-1)


def rms_from_a_cumsum(x):
    """Right (round 78's adversary wrote it as wrong, "a running total swallows small squares"): the sum of the float32
    squares read off cumsum's last column.  On the CPU cumsum carries its total in at::acc_type<float, false>, a double
    (aten/src/ATen/native/cpu/ReduceOpsKernel.cpp, cumsum_cpu_kernel), and rounds each output once: on the check's
    row of 1.0 and 131071 values of 1.7e-4, its last column is 1.0037880, float64's sum 1.00378795."""
    return (x.float().square().cumsum(dim=-1)[..., -1] / x.shape[-1]).sqrt().half()


def rms_by_hypot_folding(x):
    """Right (round 78's adversary): the norm by torch.hypot of column pairs in float32, halving the width each level
    (hypot never overflows), an odd last column carried to the next level; then / sqrt(d)."""
    v = x.float().abs()
    while v.shape[-1] > 1:
        even = v.shape[-1] // 2 * 2
        v = torch.cat([torch.hypot(v[..., 0:even:2], v[..., 1:even:2]), v[..., even:]], dim=-1)
    norm = v[..., 0] if v.shape[-1] else v.sum(-1)
    return (norm / math.sqrt(x.shape[-1])).half()


def rms_from_the_mean_and_spread_of_abs(x):
    """Right (round 78's adversary): mean(x**2) = mean(|x|)**2 + mean((|x| - mean|x|)**2), both parts in float32:
    exact algebra, and each part a sum of terms of one sign."""
    a = x.float().abs()
    m = a.mean(-1, keepdim=True)
    return (m.squeeze(-1).square() + (a - m).square().mean(-1)).sqrt().half()


def rms_rounded_away_from_zero(x):
    """Right (round 78's adversary): float32, then rounded away from zero into fp16 (nextafter where the cast rounded
    down): within one fp16 step, as the task allows; the other side of "rounded toward zero"."""
    exact = x.float().square().mean(-1).sqrt()
    near = exact.half()
    return torch.where(near.float() < exact, torch.nextafter(near, torch.full_like(near, math.inf)), near)


def squares_about_the_median(x):
    """Wrong (round 78's adversary): the mean of (x - median)**2, "the median is a robust center", with no correction:
    the variance plus (mean - median)**2."""
    return (x - x.median(dim=-1, keepdim=True).values).square().mean(-1)


def squares_about_the_midrange(x):
    """Wrong (round 78's adversary): two passes about the midrange (max + min) / 2, "the center of the values", with no
    correction: the variance plus (mean - midrange)**2."""
    center = (x.amax(-1, keepdim=True) + x.amin(-1, keepdim=True)) / 2
    return (x - center).square().mean(-1)


def terms_summed_in_float32_as_tensors(x, y):
    """Right (round 78's adversary): the guarantee gamma_n sum|x_i y_i|, the terms summed in float32 (no margin: the
    registered one adds 1%), returned as two 0-d tensors.  The float32 sum can fall short of the exact one by about
    gamma_n of it: a bound short by (n u)**2 of itself, which no float32 order reaches."""
    return torch.tensor(0.0), _gamma(x.numel()) * (x * y).abs().sum()


WRONG_RMS["round 78's adversary: x / sqrt(d) in fp16, then the fp16 norm"] = rms_divided_before_an_fp16_norm
RIGHT_RMS.update({
    "round 78's adversary: the float32 squares' cumsum, its last column": rms_from_a_cumsum,
    "round 78's adversary: torch.hypot of column pairs, folded": rms_by_hypot_folding,
    "round 78's adversary: mean(|x|)**2 + the spread of |x|": rms_from_the_mean_and_spread_of_abs,
    "round 78's adversary: float32, rounded away from zero into fp16": rms_rounded_away_from_zero,
})
WRONG_VARIANCE.update({
    "round 78's adversary: squares about each row's median, uncorrected": squares_about_the_median,
    "round 78's adversary: squares about each row's midrange, uncorrected": squares_about_the_midrange,
})
RIGHT_TOLERANCES["round 78's adversary: gamma_n times the terms summed in float32, as 0-d tensors"] = \
    terms_summed_in_float32_as_tensors


# ---------------------------------------------------------------- round 79's adversary of 06 and 07
# Its 18 answers to these three checks, each judged in a fresh process on the CPU (commit 3ae58f1).  Six PASSed that
# are wrong, and one FAILed that is right, each now judged right by construction (the docstrings say how); one wrong
# answer FAILed for a wrong reason ("sent data to another process", for a thread pool), and now FAILs for float64.
def dot_sensitivity_by_autograd(x, y):
    """Wrong (round 79's adversary; PASSed): the guarantee, with each |y_i| found as the sensitivity of x . y to x_i,
    by autograd: x.requires_grad_() and backward() hand x back to the caller requiring grad, its .grad set ("leave x
    and y as they are": the caller's next torch.dot builds a graph, and a second call adds into x.grad).  The check
    compared x's values only; it now compares what autograd keeps on x and y too (nb06._as_given)."""
    x.requires_grad_(True)
    (x * y).sum().backward()
    return 0.0, _gamma(x.numel()) * float((x.detach().double() * x.grad.double()).abs().sum())


_TERMS_PER_LENGTH: dict[int, float] = {}


def dot_terms_kept_per_length_when_long(x, y):
    """Wrong (round 79's adversary; PASSed): the guarantee, but for long vectors (n >= 2**16, where sum |x_i y_i| in
    float64 "costs milliseconds") the size of the terms kept per length from the first call of that length: a later
    call of that length with larger terms (torch.full((2**20,), 0.1), then torch.full((2**20,), 100.0)) gets a
    tolerance 1000 times too small.  The check asked its again step at 2**12 alone, and its first call of 2**20 had the
    largest terms of its length; the again step now runs at 2**20 too, a quiet dot product first."""
    n = x.numel()
    if n < 2**16:
        return 0.0, _gamma(n) * _terms(x, y)
    if n not in _TERMS_PER_LENGTH:
        _TERMS_PER_LENGTH[n] = _terms(x, y)
    return 0.0, _gamma(n) * _TERMS_PER_LENGTH[n]


def dot_the_checks_orders_found_by_its_seed(x, y):
    """Wrong (round 79's adversary; FAILed, as it should): the largest error of the check's seven orders of addition
    (nb06.float32_results, its source copied: the function is locked, its text is not), with the seed of its shuffle
    and slices read from the check's frame (a local `case` with a seed and a kind), plus 0.01%: it bounds the orders
    the check adds in, not a GPU's.  Without such a frame, the guarantee.  It FAILs where the check's torch.dot of a
    row of a batch adds otherwise than the same dot on the contiguous copy the answer gets."""
    import inspect

    frame, seed = inspect.currentframe(), None
    while frame is not None and seed is None:
        case = frame.f_locals.get("case")
        if hasattr(case, "seed") and hasattr(case, "kind"):
            seed = int(case.seed)
        frame = frame.f_back
    del frame
    if seed is None:
        return guaranteed(x, y)
    n, products = x.numel(), x * y
    terms = products.numpy()
    rng = np.random.default_rng(seed)
    slices = int(rng.choice([2, 32, 1024]))
    padded = np.zeros(-(-n // slices) * slices, dtype=np.float32)
    padded[:n] = terms

    def sequential(t):
        return float(np.cumsum(t, dtype=np.float32)[-1]) if t.size else 0.0

    slice_sums = np.cumsum(padded.reshape(-1, slices), axis=0, dtype=np.float32)[-1] if n else padded
    results = [sequential(terms), sequential(terms[::-1]), sequential(terms[rng.permutation(n)]),
               sequential(slice_sums), float(torch.dot(x, y)), float(products.sum()), float(x[None] @ y[:, None])]
    exact = float((x.double() * y.double()).sum())
    return 0.0, 1.0001 * max((abs(v - exact) for v in results), default=0.0)


def dot_finfo_resolution_as_the_unit(x, y):
    """Wrong (round 79's adversary; FAILed, as it should): n * torch.finfo(float32).resolution * sum |x_i y_i|:
    `resolution` is 1e-6, the decimal digits float32 keeps, 8.4 times eps: too loose to catch half of the bfloat16
    inputs at n = 256."""
    return 0.0, x.numel() * torch.finfo(x.dtype).resolution * _terms(x, y)


def dot_guarantee_as_decimals(x, y):
    """Right (round 79's adversary): the guarantee in decimal arithmetic, rtol and atol as decimal.Decimal (the float64
    sum of the terms converted exactly, gamma_n in a local context of 40 digits): properties.real takes any real
    number, a Decimal too."""
    import decimal

    with decimal.localcontext() as context:
        context.prec = 40
        n, u = decimal.Decimal(x.numel()), decimal.Decimal(2) ** -24
        return decimal.Decimal(0), n * u / (1 - n * u) * decimal.Decimal(_terms(x, y))


def dot_holder_bound(x, y):
    """Right (round 79's adversary): Hoelder's inequality for the size of the terms, sum |x_i y_i| <= max|x_i| sum|y_i|:
    looser by max|x| / mean|x| (about 3.5 for random vectors of 256 values), still under the 5 n eps that catches half
    of the bfloat16 inputs."""
    n = x.numel()
    if n == 0:
        return 0.0, 0.0
    return 0.0, _gamma(n) * float(x.double().abs().max()) * float(y.double().abs().sum())


def rms_scaled_by_the_mean_magnitude_in_fp16(x):
    """Wrong (round 79's adversary; PASSed): each row divided in fp16 by its mean |value| (1 for a row of zeros), then
    squares, mean and root in float32, times that mean: no square overflows or underflows, and each scaled value is
    rounded to fp16 once.  But a scaled value is up to d (the row's width) when the row's weight lies in a few values:
    past 65504 values, a row of zeros but one divides to inf in fp16 (torch.zeros(70000), x[0] = 1.0: inf, where the
    RMS is 0.0038).  The check's rows stopped at 5630 times their mean magnitude; its rows of 2**17 now hold one value
    among zeros (nb06.SPIKES)."""
    scale = x.abs().mean(dim=-1, keepdim=True)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    return ((x / scale).float().square().mean(dim=-1).sqrt() * scale.squeeze(-1).float()).to(x.dtype)


def _kept_by_version(compute):
    """`compute(x)`, kept per tensor object (held, so that its id is not reused) under x._version, which every
    operation of torch in place on x bumps; a write through x.data, x.numpy() or another view made from .data does
    not, and the next call returns the result of the values before it."""
    kept = {}  # id(x): (x, x._version, the result)

    def answer(x):
        held = kept.get(id(x))
        if held is not None and held[0] is x and held[1] == x._version:
            return held[2].clone()
        got = compute(x)
        if len(kept) > 64:
            kept.clear()
        kept[id(x)] = (x, x._version, got.clone())
        return got

    return answer


def rms_kept_by_version(x):
    """Wrong (round 79's adversary; PASSed): the right RMS, kept per tensor under x._version ("the model calls it
    again on the same activations"): x.numpy()[:] = new values, or x.data.copy_(new), leaves x._version as it was, and
    the next call returns the RMS of the old values.  The check's one change in place was a copy_ into x, which bumps
    the version; its again step now writes through x.data too."""
    return _RMS_KEPT_BY_VERSION(x)


_RMS_KEPT_BY_VERSION = _kept_by_version(lambda x: x.float().square().mean(dim=-1).sqrt().to(x.dtype))

_FP16_SAFE_PER_SHAPE: dict[tuple, bool] = {}


def rms_format_decided_per_shape(x):
    """Wrong (round 79's adversary; FAILed, as it should): whether fp16 is safe (every nonzero |x| from 2**-7 to 255:
    no square leaves fp16's range) decided at the first call of each shape and kept ("a model's shapes repeat"): a
    later batch of that shape with larger values overflows in fp16; and squares in fp16 round past one fp16 step even
    where they stay in range (it FAILs on its first row)."""
    key = tuple(x.shape)
    if key not in _FP16_SAFE_PER_SHAPE:
        magnitudes = x.abs()
        nonzero = magnitudes[magnitudes > 0]
        _FP16_SAFE_PER_SHAPE[key] = bool(nonzero.numel() == 0 or (nonzero.max() <= 255 and nonzero.min() >= 2.0**-7))
    if _FP16_SAFE_PER_SHAPE[key]:
        return x.pow(2).mean(dim=-1).sqrt()
    return x.float().pow(2).mean(dim=-1).sqrt().to(x.dtype)


def rms_from_var_mean(x):
    """Right (round 79's adversary): mean(x**2) = Var[x] + E[x]**2, from torch.var_mean in float32: both parts are not
    negative and added, so nothing cancels."""
    variance, mean = torch.var_mean(x.float(), dim=-1, correction=0)
    return (variance + mean.square()).sqrt().to(x.dtype)


def rms_reciprocal_of_rsqrt(x):
    """Right (round 79's adversary): 1 / rsqrt(the mean of the float32 squares): rsqrt(0) is inf and 1 / inf is 0, so
    a row of zeros needs no guard."""
    return x.float().square().mean(dim=-1).rsqrt().reciprocal().to(x.dtype)


def variance_kept_by_version(x):
    """Wrong (round 79's adversary; PASSed): two passes, kept per tensor under x._version ("the monitoring job passes
    the same buffer again and again"): a job that refills its buffer through NumPy (buf.numpy()[:] = readings) or
    x.data gets the variance of the old readings.  Fixed as the RMS's (nb06._again writes through x.data)."""
    return _VARIANCE_KEPT_BY_VERSION(x)


_VARIANCE_KEPT_BY_VERSION = _kept_by_version(two_pass)


def _row_variance_numpy64_float(row) -> float:
    return float(np.var(row.numpy().astype(np.float64)))


def _thread_pool_at_import(row_variance, wrap):
    """An answer that maps `row_variance` over x's rows in a multiprocessing.pool.ThreadPool made when this module is
    imported (its threads were running before any call, and wait in a queue.SimpleQueue's get), `wrap` making the
    tensor of the rows' results."""
    from multiprocessing.pool import ThreadPool

    pool = ThreadPool(2)

    def variance(x):
        return wrap(pool.map(row_variance, list(x.unbind(0))), x)

    return variance


def variance_float32_in_a_thread_pool_made_for_the_call(x):
    """Right (round 79's adversary; FAILed as "sent data to another process"): each row's two passes in float32, in a
    multiprocessing.pool.ThreadPool made for the call: its workers are threads of this process, watched as the
    threads a call starts are.  The pool writes a pickled None to a pipe of its own when its tasks are done, which the
    check took for data sent to another process (it counted every pickling of multiprocessing's); it now counts bytes
    written to a connection of multiprocessing that this process does not read back, a pickled None aside."""
    from multiprocessing.pool import ThreadPool

    with ThreadPool(2) as pool:
        return torch.stack(pool.map(_row_two_pass32, list(x.unbind(0))))


def _simple_queue_worker(row_variance, wrap):
    """A worker thread started at import (here: when this module is imported), fed through a queue.SimpleQueue, whose
    get waits in C, not on a threading.Condition: each call puts its rows there and waits for the worker's results on
    a SimpleQueue of its own, `wrap` making the tensor of them."""
    import queue
    import threading

    jobs = queue.SimpleQueue()

    def work():
        while True:
            rows, answers = jobs.get()
            answers.put([row_variance(row) for row in rows])

    threading.Thread(target=work, daemon=True, name="variance-simple-queue-worker").start()

    def variance(x):
        answers = queue.SimpleQueue()
        jobs.put((list(x.unbind(0)), answers))
        return wrap(answers.get(), x)

    return variance


_ROWS_IN_A_POOL_AT_IMPORT_64 = _thread_pool_at_import(
    _row_variance_numpy64_float, lambda got, x: torch.tensor(got, dtype=torch.float32).reshape(x.shape[0]))
_ROWS_IN_A_POOL_AT_IMPORT_32 = _thread_pool_at_import(_row_two_pass32, lambda got, x: torch.stack(got))
_ROWS_IN_A_WORKER_64 = _simple_queue_worker(
    _row_variance_numpy64_float, lambda got, x: torch.tensor(got, dtype=torch.float32).reshape(x.shape[0]))
_ROWS_IN_A_WORKER_32 = _simple_queue_worker(_row_two_pass32, lambda got, x: torch.stack(got))


def variance_float64_in_a_thread_pool_made_at_import(x):
    """Wrong (round 79's adversary; FAILed, for another reason than its own): each row's variance by NumPy in float64,
    in a multiprocessing.pool.ThreadPool made at import ("rows in parallel"): its workers were running before the call,
    waiting in a queue.SimpleQueue, which the check's watch did not reach; it FAILed as "sent data to another process"
    (the pool's pickled None), and now FAILs for NumPy, seen in the pool's threads (nb06._on_running_threads)."""
    return _ROWS_IN_A_POOL_AT_IMPORT_64(x)


def variance_float32_in_a_thread_pool_made_at_import(x):
    """Right (round 79's fix, the other side of the answer above): each row's two passes in float32 torch tensors, in
    a multiprocessing.pool.ThreadPool made at import: watched in its threads, nothing leaves float32 or the process."""
    return _ROWS_IN_A_POOL_AT_IMPORT_32(x)


def variance_float64_in_a_worker_fed_by_a_simple_queue(x):
    """Wrong (round 79's adversary; PASSed): NumPy's float64 variance of each row, in a worker thread started at import
    and fed through a queue.SimpleQueue: round 26's worker, fed by a queue.Queue, FAILs (a threading.Condition's wake
    was watched); a SimpleQueue's get waits in C, and its worker went unwatched.  Now every thread that runs Python in
    the call is watched (nb06._on_running_threads)."""
    return _ROWS_IN_A_WORKER_64(x)


def variance_float32_in_a_worker_fed_by_a_simple_queue(x):
    """Right (round 79's fix, the other side of the answer above): each row's two passes in float32 torch tensors, in a
    worker thread started at import and fed through a queue.SimpleQueue."""
    return _ROWS_IN_A_WORKER_32(x)


def variance_clamped_at_tiny(x):
    """Wrong (round 79's adversary; FAILed, as it should): two passes, clamped at float32's smallest normal number "so
    that a later rsqrt or log never sees 0": a row of equal values, whose variance is 0, gets 1.2e-38, which the
    rule (|r - v| within a bound that is 0 for a row of zeros) rejects."""
    return two_pass(x).clamp(min=torch.finfo(torch.float32).tiny)


def variance_shifted_by_the_midpoint_of_the_ends(x):
    """Right (round 79's adversary): the shifted formula E[(x - K)**2] - E[x - K]**2 about K, the midpoint of each
    row's first and last values: a far value at one end is halved in K, and far values at both ends, the worst for it,
    stayed within the rule (0.77 of it on rows of 8192, spreads 1e2 to 1e4)."""
    shift = (x[:, :1] + x[:, -1:]) / 2
    d = x - shift
    return (d.square().mean(dim=-1) - d.mean(dim=-1).square()).clamp(min=0)


def variance_of_rows_scaled_by_a_power_of_2(x):
    """Right (round 79's adversary): each row scaled exactly by the power of 2 at or below its largest |value|
    (frexp, then ldexp), two passes there, the result scaled back by that power squared (exact)."""
    largest = x.abs().amax(dim=-1, keepdim=True)
    _, exponent = torch.frexp(torch.where(largest > 0, largest, torch.ones_like(largest)))
    scale = torch.ldexp(torch.ones_like(largest), exponent - 1)
    return two_pass(x / scale) * scale.squeeze(-1).square()


R79 = "round 79's adversary: "
# Not registered: dot_the_checks_orders_found_by_its_seed (it reads the check's frame, a class the course does not
# close: see nb02's MISJUDGED_ON_A_CPU).  Its verdict depends on the machine: it FAILed on this course's CPU (Python
# 3.11, torch 2.13), where a batch row's torch.dot adds otherwise than on a contiguous copy, and PASSed on the H200's
# host (Python 3.12, torch 2.11, 2026-12-02, call CS), where the two agree.
WRONG_TOLERANCES.update({
    R79 + "the guarantee, |y| as x's gradient by autograd (x left requiring grad, its .grad set)":
        dot_sensitivity_by_autograd,
    R79 + "the guarantee, the terms' size kept per length for n >= 2**16": dot_terms_kept_per_length_when_long,
    R79 + "n * finfo(float32).resolution * sum|x_i y_i|": dot_finfo_resolution_as_the_unit,
})
RIGHT_TOLERANCES.update({
    R79 + "the guarantee as decimal.Decimal values": dot_guarantee_as_decimals,
    R79 + "Hoelder: gamma_n * max|x| * sum|y|": dot_holder_bound,
})
WRONG_RMS.update({
    R79 + "each row divided in fp16 by its mean |x|, the rest in float32": rms_scaled_by_the_mean_magnitude_in_fp16,
    R79 + "the right RMS kept per tensor under x._version": rms_kept_by_version,
    R79 + "fp16 or float32 decided at the first call of each shape": rms_format_decided_per_shape,
})
RIGHT_RMS.update({
    R79 + "sqrt(var + mean**2) from torch.var_mean in float32": rms_from_var_mean,
    R79 + "1 / rsqrt(the mean of the float32 squares)": rms_reciprocal_of_rsqrt,
})
WRONG_VARIANCE.update({
    R79 + "two passes kept per tensor under x._version": variance_kept_by_version,
    R79 + "NumPy float64 per row in a multiprocessing ThreadPool made at import":
        variance_float64_in_a_thread_pool_made_at_import,
    R79 + "NumPy float64 per row in a worker thread started at import, fed by a queue.SimpleQueue":
        variance_float64_in_a_worker_fed_by_a_simple_queue,
    R79 + "two passes clamped at finfo(float32).tiny": variance_clamped_at_tiny,
})
RIGHT_VARIANCE.update({
    R79 + "two passes per row in float32, in a multiprocessing ThreadPool made for the call":
        variance_float32_in_a_thread_pool_made_for_the_call,
    R79 + "the shifted formula about the midpoint of each row's first and last values":
        variance_shifted_by_the_midpoint_of_the_ends,
    R79 + "two passes on each row scaled by a power of 2 (frexp, ldexp)": variance_of_rows_scaled_by_a_power_of_2,
    # the fix's own: right arithmetic in the two kinds of thread running before the call that the wrong answers above
    # use, where every operation is now watched (and seen to stay in float32 torch tensors)
    "two passes per row in float32, in a multiprocessing ThreadPool made at import (round 79's fix)":
        variance_float32_in_a_thread_pool_made_at_import,
    "two passes per row in float32, in a worker thread started at import, fed by a queue.SimpleQueue (round 79's fix)":
        variance_float32_in_a_worker_fed_by_a_simple_queue,
})
