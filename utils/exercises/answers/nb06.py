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


# ---------------------------------------------------------------- exercise 3: deterministic_index_add (GPU)
def atomic_index_add(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    return torch.zeros(bins, dtype=values.dtype, device=values.device).index_add_(0, index, values)


def bincount_weights(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    return torch.bincount(index, weights=values, minlength=bins).to(values.dtype)


def float64_atomics(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    """Reproducible in practice, not guaranteed: float32 rounding hides most of float64's differences."""
    return (torch.zeros(bins, dtype=torch.float64, device=values.device)
            .index_add_(0, index, values.double()).to(values.dtype))


def sorted_then_atomics(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    order = torch.argsort(index, stable=True)
    return atomic_index_add(values[order], index[order], bins)


def deterministic_mode_left_on(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    torch.use_deterministic_algorithms(True)
    return atomic_index_add(values, index, bins)


def loop_over_bins(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    return torch.stack([values[index == b].sum() for b in range(bins)])


def deterministic_mode_restored(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    """Right too: PyTorch's own deterministic index_add_, with the global mode restored."""
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        return atomic_index_add(values, index, bins)
    finally:
        torch.use_deterministic_algorithms(was)


def deterministic_mode_without_minlength(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    """PyTorch's deterministic index_add_, into as many bins as bincount finds: too few when the last are empty."""
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        found = len(torch.bincount(index))  # without minlength: the largest bin that holds a value, plus one
        return torch.zeros(found, dtype=values.dtype, device=values.device).index_add_(0, index, values)
    finally:
        torch.use_deterministic_algorithms(was)


def mode_switched_off(values: torch.Tensor, index: torch.Tensor, bins: int) -> torch.Tensor:
    """Switches deterministic mode on, then off: not what a caller who had it on set."""
    torch.use_deterministic_algorithms(True)
    try:
        return atomic_index_add(values, index, bins)
    finally:
        torch.use_deterministic_algorithms(False)


WRONG_SCATTER = {
    "index_add_ (atomic additions)": atomic_index_add,
    "bincount with weights (atomic additions)": bincount_weights,
    "float64 atomic additions, rounded to float32": float64_atomics,
    "sorted, then index_add_": sorted_then_atomics,
    "deterministic mode, left on": deterministic_mode_left_on,
    "a Python loop over the bins": loop_over_bins,
    "deterministic mode on, then off (not restored)": mode_switched_off,
    "bins counted by bincount without minlength": deterministic_mode_without_minlength,
}

WRONG = {
    "check_dot_tolerance": WRONG_TOLERANCES,
    "check_rms": WRONG_RMS,
    "check_deterministic_index_add": WRONG_SCATTER,
}
ALSO_RIGHT = {
    "check_dot_tolerance": RIGHT_TOLERANCES,
    "check_rms": RIGHT_RMS,
    "check_deterministic_index_add": {"PyTorch's deterministic mode, restored": deterministic_mode_restored},
}
