"""Wrong answers, and other right ones, to the exercises of notebook 06 (floating-point precision), for
the tests: SPOILERS."""

from __future__ import annotations

import math

import torch

EPS32 = torch.finfo(torch.float32).eps
TERMS = 2 / math.pi  # E|x * y| for independent N(0, 1) x and y


# ---------------------------------------------------------------- exercise 1: dot_tolerance (CPU)
WRONG_TOLERANCES = {
    "assert_close's float32 defaults": lambda n: (1.3e-6, 1e-5),
    "assert_close's bfloat16 defaults": lambda n: (1.6e-2, 1e-5),
    "relative only: rtol = sqrt(n) * eps": lambda n: (math.sqrt(n) * EPS32, 0.0),
    "without the size of the terms: atol = sqrt(n) * eps": lambda n: (0.0, math.sqrt(n) * EPS32),
    "the worst case: n * eps * sum|x_i y_i|": lambda n: (0.0, n * EPS32 * n * TERMS),
    "fp16's eps instead of float32's": lambda n: (0.0, math.sqrt(n) * 2.0**-10 * n * TERMS),
}
RIGHT_TOLERANCES = {
    "an rtol as well": lambda n: (math.sqrt(n) * EPS32, math.sqrt(n) * EPS32 * n * TERMS),
    "twice the slack": lambda n: (0.0, 2 * math.sqrt(n) * EPS32 * n * TERMS),
}


# ---------------------------------------------------------------- exercise 2: rms (CPU)
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
}
RIGHT_RMS = {
    "vector_norm in float32": lambda x: (torch.linalg.vector_norm(x.float(), dim=-1)
                                         / math.sqrt(x.shape[-1])).to(x.dtype),
    "float64 inside": lambda x: x.double().square().mean(-1).sqrt().to(x.dtype),
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
    """Right: the shifted formula, each row shifted by its own first value.  With K the shift, it cancels
    1 + ((K - mean) / std)**2 times the variance; K is a value of the row, so that is at most n + 1,
    and the check's rows whose first value is 60 standard deviations out (a factor of 3601) stay
    within the tolerance, as do rows of 2**16 values."""
    y = x - x[:, :1]
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


def linalg_norm(x):  # right: the norm of the deviations, squared, over n
    d = x - x.mean(dim=-1, keepdim=True)
    return torch.linalg.vector_norm(d, dim=-1).square() / x.shape[-1]


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
}
RIGHT_VARIANCE = {
    "shifted by each row's first value": shifted_by_first_value,
    "Welford's update, column by column": welford,
    "two passes in chunks, merged (Chan et al.)": merged_chunks,
    "the squared norm of the deviations": linalg_norm,
}

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
