"""Wrong answers, and other right ones, to the capstone: SPOILERS.

Exercise 1 (fast_loss) is checked on the CPU too; exercise 2 (make_fast_step) on a GPU only.  Each wrong
fast step is the solution with one wrong turn that looks right: `solution_step` builds them from flags, so
that each differs from the right answer in that one place.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import ctypes
import functools
import gc
import io
import math
import time
import warnings
import weakref
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

from .. import nb08


# ---------------------------------------------------------------- exercise 1: fast_loss (CPU and GPU)
def _loss(model, pooled, y, bf16):
    """The solution's tail: the model under autocast, the loss in float32."""
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def fast_loss(model, x, n, y, bf16):
    """The solution (the exercise 2 answers below use it)."""
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def _looped(x):
    pooled = torch.zeros(x.shape[0], x.shape[2], device=x.device)
    for t in range(x.shape[1]):  # right numbers, one tiny kernel per position
        pooled = pooled + x[:, t]
    return pooled


def padded_mean(model, x, n, y, bf16):
    return _loss(model, x.mean(1), y, bf16)  # divides by the padded length, not each sequence's own


def kept_loop(model, x, n, y, bf16):
    return _loss(model, _looped(x) / n[:, None], y, bf16)


def bf16_branch(wrong_pooling):
    """Right in float32; `wrong_pooling(x, n)` in bf16 only (the old check counted operators in float32 only)."""
    return lambda model, x, n, y, bf16: _loss(model, wrong_pooling(x, n) if bf16 else x.sum(1) / n[:, None], y, bf16)


def bf16_sum(model, x, n, y, bf16):
    """Rounds the sum over positions in bf16: its inputs lose all but 8 bits, and what cancels is lost."""
    return _loss(model, (x.bfloat16() if bf16 else x).sum(1).float() / n[:, None], y, bf16)


def bf16_pooling_product(model, x, n, y, bf16):
    """The mean as a batched matrix product inside autocast: autocast rounds x to bf16 for it."""
    weights = (torch.arange(x.shape[1], device=x.device) < n[:, None]) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(torch.bmm(weights[:, None, :], x).squeeze(1))
    return F.cross_entropy(logits.float(), y)


def host_truncated(model, x, n, y, bf16):
    return _loss(model, x[:, :int(n.max())].sum(1) / n[:, None], y, bf16)  # the slow step's cut: a host read


def host_truncated_tolist(model, x, n, y, bf16):
    longest = int(max(n.tolist()))  # no .item(), but still a read on the host, and a new shape every batch
    return _loss(model, x[:, :longest].sum(1) / n[:, None], y, bf16)


def loss_in_bf16(model, x, n, y, bf16):
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits, y)  # outside autocast: a bf16 loss from bf16 logits


def loss_rounded_to_bf16(model, x, n, y, bf16):
    return loss_in_bf16(model, x, n, y, bf16).float()  # float32 again, after the rounding


def model_to_bf16(model, x, n, y, bf16):
    pooled = x.sum(1) / n[:, None]
    if bf16:
        model.to(torch.bfloat16)  # changes the caller's model for good
        pooled = pooled.bfloat16()
    return F.cross_entropy(model(pooled).float(), y)


def ignores_bf16(model, x, n, y, bf16):
    return _loss(model, x.sum(1) / n[:, None], y, False)


def always_bf16(model, x, n, y, bf16):
    return _loss(model, x.sum(1) / n[:, None], y, True)


def constant_ln10(model, x, n, y, bf16):
    """The loss of an untrained 10-class model is about ln 10: within 4 bf16 epsilons of every loss of the old check."""
    return torch.full((), math.log(10), device=x.device, requires_grad=True)  # filled there: no copy from the host


def constant_in_bf16(model, x, n, y, bf16):
    """Right in float32; in bf16, ln 10 (the old check's bf16 tolerance, 3% of the loss, took it)."""
    return constant_ln10(model, x, n, y, bf16) if bf16 else fast_loss(model, x, n, y, bf16)


def detached(model, x, n, y, bf16):
    return fast_loss(model, x, n, y, bf16).detach()


def divides_x_in_place(model, x, n, y, bf16):
    x /= n[:, None, None]  # the caller's batch, divided for good: the next call divides again
    return _loss(model, x.sum(1), y, bf16)


def by_the_longest(model, x, n, y, bf16):
    return _loss(model, x.sum(1) / n.max(), y, bf16)


def per_sequence(model, x, n, y, bf16):
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y, reduction="none")


def as_a_float(model, x, n, y, bf16):
    return fast_loss(model, x, n, y, bf16).item()


# The adversary's (round 1) that the check took: each now FAILs by construction
def loops_over_the_batch(model, x, n, y, bf16):
    """The task says without a loop: the check grows the batch (past the GPU's 512 sequences), counts the operations."""
    return _loss(model, torch.stack([x[b].sum(0) / n[b] for b in range(x.shape[0])]), y, bf16)


def loops_over_the_features(model, x, n, y, bf16):
    """The same, over the features: the check adds features of zeros (zero weights) and counts the operations."""
    return _loss(model, torch.stack([x[:, :, f].sum(1) for f in range(x.shape[2])], dim=1) / n[:, None], y, bf16)


def lengths_from_nonzero_positions(model, x, n, y, bf16):
    """Ignores n: a real token of zeros counts as padding (the check's batches now hold real tokens of zeros)."""
    counted = (x != 0).any(2).sum(1).clamp_min(1).to(x.dtype)
    return _loss(model, x.sum(1) / counted[:, None], y, bf16)


def divides_in_bf16(model, x, n, y, bf16):
    """bf16=True rounds the sum and the division to bf16: only the matrix products may (the recorder sees it)."""
    s = x.sum(1)
    return _loss(model, s.bfloat16() / n.bfloat16()[:, None] if bf16 else s / n[:, None], y, bf16)


def detached_bf16_weights(model, x, n, y, bf16):
    """bf16 copies of the weights made with .detach(): backward() trains the biases only."""
    a = x.sum(1) / n[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            w = layer.weight.detach().bfloat16() if bf16 else layer.weight
            a = F.linear(a.to(w.dtype), w, layer.bias.to(w.dtype))
        else:
            a = layer(a)
    return F.cross_entropy(a.float(), y)


def host_made_mask(model, x, n, y, bf16):
    """A mask from an arange made on the host and copied to the batch's device at every call (a CUDA graph cannot
    hold the copy): made without device=, then .to(x.device)."""
    mask = torch.arange(x.shape[1]).to(x.device)[None, :] < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def host_made_mask_not_copied(model, x, n, y, bf16):
    """The same arange made on the host, compared with n as it is: right on a CPU, a RuntimeError on a GPU (a CPU
    tensor of one dimension beside CUDA tensors), which the CPU check took (adversary, round 2)."""
    mask = torch.arange(x.shape[1]) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def pools_on_the_host(model, x, n, y, bf16):
    """x.cpu(): on a GPU a copy to the host; on a CPU it changes nothing, but it is the same call."""
    return _loss(model, (x.cpu().sum(1) / n.cpu()[:, None]).to(x.device), y, bf16)


def turns_tf32_on(model, x, n, y, bf16):
    """Global state changed for everyone after it (on a GPU, TF32 also rounds the float32 products)."""
    torch.backends.cuda.matmul.allow_tf32 = True
    return fast_loss(model, x, n, y, bf16)


def sets_the_autocast_dtype(model, x, n, y, bf16):
    """bfloat16 made autocast's default for the device (torch.set_autocast_dtype), and left so: every later
    `torch.autocast(device)` without dtype= runs in bfloat16 (the 08 adversary of 2026-11-29)."""
    torch.set_autocast_dtype(x.device.type, torch.bfloat16)
    with torch.autocast(x.device.type, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def turns_tf32_on_with_the_new_api(model, x, n, y, bf16):
    """TF32 on through the API of lecture 06 (fp32_precision), and left on."""
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    return fast_loss(model, x, n, y, bf16)


def keeps_bf16_reductions_in_float32(model, x, n, y, bf16):
    """Lecture 06's switch for bf16 products' split-K partial sums, turned off and left so (the 08 adversary of round
    17: the check read TF32 and autocast's settings only)."""
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    return fast_loss(model, x, n, y, bf16)


def turns_deterministic_algorithms_on(model, x, n, y, bf16):
    """Lecture 06's deterministic algorithms, turned on and left on (the 08 adversary of round 17).  Warn only: with
    errors, cuBLAS raises on a GPU without CUBLAS_WORKSPACE_CONFIG, before the check could read the setting."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    return fast_loss(model, x, n, y, bf16)


_BF16_WEIGHTS: dict[int, tuple] = {}  # bf16_weights_kept's copies, by the id of the weight


def bf16_weights_kept(model, x, n, y, bf16):
    """The bf16 copies of the weights made on the first call and kept: stale once an optimizer step has changed
    the weights (the 08 adversary of 2026-11-29; it failed, but for a wrong reason, before the check changed the
    weights between two calls)."""
    a = x.sum(1) / n[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear) and bf16:
            if id(layer.weight) not in _BF16_WEIGHTS:
                _BF16_WEIGHTS[id(layer.weight)] = (layer.weight, layer.weight.to(torch.bfloat16),
                                                   layer.bias.to(torch.bfloat16))
            _, w, b = _BF16_WEIGHTS[id(layer.weight)]
            a = F.linear(a.to(torch.bfloat16), w, b)
        else:
            a = layer(a)
    return F.cross_entropy(a.float(), y)


_POSITIONS: dict[tuple, torch.Tensor] = {}  # positions_kept's aranges, by length and device


def positions_kept(model, x, n, y, bf16):
    """A mask of the real positions (the zeros would do), its arange made once per length and device and kept:
    right (the first call of a length makes one operation more than the next ones)."""
    key = (x.shape[1], x.device)
    if key not in _POSITIONS:
        _POSITIONS[key] = torch.arange(x.shape[1], device=x.device)
    mask = _POSITIONS[key] < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def divides_in_place_in_bf16(model, x, n, y, bf16):
    """bf16=True: the sum cast to bf16, then divided in place (div_): arithmetic in bf16 outside the matrix products,
    within the value's bound (one more rounding of the input); a list of rounding operations had no in-place names
    (adversary, round 4)."""
    pooled = x.sum(1)
    if bf16:
        pooled = pooled.to(torch.bfloat16)
        pooled.div_(n[:, None])
        return _loss(model, pooled, y, bf16)
    return _loss(model, pooled / n[:, None], y, bf16)


def divides_by_length_plus_epsilon(model, x, n, y, bf16):
    """A "safe" division by n + 1e-5: ~100 float32 ulps off the mean, which the bound hid where the loss is flat
    (adversary, round 4; the check's steep case: one token, a large weight, a wrong label)."""
    return _loss(model, x.sum(1) / (n[:, None] + 1e-5), y, bf16)


def returns_the_float32_loss(model, x, n, y, bf16):
    """Runs the model under autocast, but returns the loss of a float32 run of it beside (a wrong variable): the bf16
    products were counted, not followed to the loss (adversary, round 4)."""
    pooled = x.sum(1) / n[:, None]
    logits32 = model(pooled)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    assert logits.shape == logits32.shape
    return F.cross_entropy(logits32, y)


def last_layer_only_in_bf16(model, x, n, y, bf16):
    """Only the last Linear under autocast, and as many other bf16 products, of no weight, as the model has layers
    (adversary, round 4: the count of bf16 products passed)."""
    layers, a = list(model), x.sum(1) / n[:, None]
    for layer in layers[:-1]:
        a = layer(a)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = layers[-1](a)
        if bf16:
            for _ in range(sum(isinstance(m, torch.nn.Linear) for m in layers) - 1):
                a @ torch.ones(a.shape[1], 1, device=a.device)
    return F.cross_entropy(logits.float(), y)


def loops_over_blocks_of_positions(model, x, n, y, bf16, block=64):
    """A Python loop over blocks of 64 positions: one block at the GPU's padded length, more for longer data.  The
    check grew the padding by 3 only, to 43 at most, where the loop runs once (the 08 adversary of round 17)."""
    pooled = sum(x[:, t:t + block].sum(1) for t in range(0, x.shape[1], block))
    return _loss(model, pooled / n[:, None], y, bf16)


def micro_batches(block):
    """Micro-batches of `block` sequences, their summed losses divided by the batch: one at the check's batches of
    128 at most, 4 at the GPU's 512 with 128 (the 08 adversary of round 17)."""
    def loss(model, x, n, y, bf16):
        total = 0.0
        for k in range(0, x.shape[0], block):
            with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
                logits = model(x[k:k + block].sum(1) / n[k:k + block, None])
            total = total + F.cross_entropy(logits.float(), y[k:k + block], reduction="sum")
        return total / x.shape[0]
    return loss


def detached_normalizer(model, x, n, y, bf16):
    """A "stable" log-softmax with its logsumexp detached: the loss's value is right, its gradient is not (the
    softmax's part of it is lost); the check tested that a gradient reached each weight, not its value (the 08
    adversary of round 17)."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logits = logits.float()
    log_p = logits - torch.logsumexp(logits, 1, keepdim=True).detach()
    return -log_p.gather(1, y[:, None]).mean()


# Right ones, written differently
def one_hot_cross_entropy(model, x, n, y, bf16):
    """Cross-entropy spelled out: the log-softmax of the float32 logits against one-hot labels."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1).div(n[:, None]))
    log_p = F.log_softmax(logits.float(), dim=1)
    return -(F.one_hot(y, logits.shape[1]).to(log_p.dtype) * log_p).sum(1).mean()


def bf16_by_hand(model, x, n, y, bf16):
    """Each Linear's input, weight and bias cast to bf16 by hand, as autocast does: the casts pass the gradient on."""
    a = x.sum(1) / n[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear) and bf16:
            a = F.linear(a.to(torch.bfloat16), layer.weight.to(torch.bfloat16), layer.bias.to(torch.bfloat16))
        else:
            a = layer(a)
    return F.nll_loss(F.log_softmax(a.float(), dim=1), y)


def bias_by_hand(model, x, n, y, bf16):
    """The MLP spelled out: each product under autocast, then its bias added (refused once: operators were counted)."""
    a = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        for layer in model:
            a = a @ layer.weight.T + layer.bias if isinstance(layer, torch.nn.Linear) else layer(a)
    return F.cross_entropy(a.float(), y)


def masked_mean(model, x, n, y, bf16):
    mask = torch.arange(x.shape[1], device=x.device) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def mean_times_length(model, x, n, y, bf16):
    return _loss(model, x.mean(1) * (x.shape[1] / n[:, None]), y, bf16)


def float32_pooling_product(model, x, n, y, bf16):
    weights = (torch.arange(x.shape[1], device=x.device) < n[:, None]) / n[:, None]
    return _loss(model, torch.bmm(weights[:, None, :], x).squeeze(1), y, bf16)  # outside autocast: float32


# Not among exercise 1's answers: the loss computed inside autocast.  Its verdict depends on the device's autocast:
# AutocastCPU has a float32 kernel for aten::cross_entropy_loss and AutocastCUDA none (torch 2.13:
# torch._C._dispatch_has_kernel_for_dispatch_key), so on a GPU cross_entropy decomposes into
# log_softmax(logits, dim, logits.dtype) (cross_entropy_loss_symint, aten/src/ATen/native/LossNLL.cpp): the
# log-probabilities of bf16 logits come out in bf16.  It PASSed on the CPU build (torch 2.13) and FAILed on an H200
# (torch 2.11, 2026-11-28: off by 6.8e-4 against a bound of 2.6e-5, for an MLP 1 -> 2).  Exercise 2 (GPU only)
# lists it among its wrong answers.
def loss_inside_autocast(model, x, n, y, bf16):
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        return F.cross_entropy(model(x.sum(1) / n[:, None]), y)  # cross_entropy is on autocast's float32 list


def _pooled_loss(model, pooled, y, bf16, **autocast):
    """The solution's tail with autocast's arguments changed."""
    with torch.autocast(pooled.device.type, enabled=bf16, **autocast):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def autocast_without_dtype(model, x, n, y, bf16):
    """dtype= left out: autocast's default is bfloat16 on a CPU but float16 on a GPU (the check sets a CPU's to
    float16 while it runs, as a GPU's)."""
    return _pooled_loss(model, x.sum(1) / n[:, None], y, bf16, cache_enabled=False)


def autocast_with_its_cache(model, x, n, y, bf16):
    """cache_enabled left at its default, True: the task asks for False (exercise 2 captures this code)."""
    return _pooled_loss(model, x.sum(1) / n[:, None], y, bf16, dtype=torch.bfloat16)


def autocast_cache_off_for_everyone(model, x, n, y, bf16):
    """torch.set_autocast_cache_enabled(False), left so: a global setting changed for all the code after it."""
    torch.set_autocast_cache_enabled(False)
    return _pooled_loss(model, x.sum(1) / n[:, None], y, bf16, dtype=torch.bfloat16)


def prints_the_loss(model, x, n, y, bf16):
    """A debugging print left in: formatting a GPU tensor copies it to the host and waits (print(t), f"{t}")."""
    loss = fast_loss(model, x, n, y, bf16)
    print(f"loss {loss}", end="\r")
    return loss


def asserts_zero_padding(model, x, n, y, bf16):
    """torch.allclose returns a Python bool: read on the host, a wait for the GPU at every call."""
    mask = torch.arange(x.shape[1], device=x.device)[None, :, None] < n[:, None, None]
    assert torch.allclose(x * mask, x), "the padding is not zeros"
    return fast_loss(model, x, n, y, bf16)


def pools_on_the_host_with_to(model, x, n, y, bf16):
    """x.to("cpu"): a copy to the host on a GPU; on a CPU the same tensor, but the words say where it goes."""
    return _loss(model, (x.to("cpu").sum(1) / n.to("cpu")[:, None]).to(x.device), y, bf16)


def host_ones_from_asarray(model, x, n, y, bf16):
    """Ones made with torch.asarray, no device=: on the host, beside the batch in a product (a GPU raises)."""
    ones = torch.asarray([1.0] * x.shape[1])
    return _loss(model, (x.transpose(1, 2) @ ones) / n[:, None], y, bf16)


def mask_made_on_cpu_by_name(model, x, n, y, bf16):
    """An arange made with device="cpu": on the host by name, beside the batch (a GPU raises)."""
    mask = torch.arange(x.shape[1], device="cpu")[None, :] < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def positions_from_a_list(model, x, n, y, bf16):
    """The mask's positions made from a Python list with device=x.device: made on the host and copied at every call,
    which a CUDA graph's capture refuses (the 08 adversary of round 17: the check flagged creations without device=
    only)."""
    positions = torch.tensor(list(range(x.shape[1])), device=x.device)
    return _loss(model, (x * (positions < n[:, None])[..., None]).sum(1) / n[:, None], y, bf16)


def positions_from_new_tensor(model, x, n, y, bf16):
    """The same with x.new_tensor(list): on x's device, copied from the host's list."""
    positions = x.new_tensor(list(range(x.shape[1])))
    return _loss(model, (x * (positions < n[:, None])[..., None]).sum(1) / n[:, None], y, bf16)


def positions_under_device_context(model, x, n, y, bf16):
    """torch.arange without device=, inside `with torch.device(x.device):`: made where the batch is."""
    with torch.device(x.device):
        mask = torch.arange(x.shape[1]) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def cumsum_at_the_length(model, x, n, y, bf16):
    """Each sequence's running sum, read at its last real position (a gather: no value read on the host)."""
    index = (n.long() - 1)[:, None, None].expand(-1, 1, x.shape[2])
    return _loss(model, x.cumsum(1).gather(1, index).squeeze(1) / n[:, None], y, bf16)


def shaped_one(model, x, n, y, bf16):
    return fast_loss(model, x, n, y, bf16).reshape(1)


# ---------------------------------------------------------------- exercise 2: make_fast_step (GPU)
def solution_step(model, data, *, stale=False, every_other=False, no_update=False, bf16_weights=False,
                  sync=False, copy_on_default=False, same_stream=False, stop_after=0, deferred=False, polls=False,
                  sync_every=0, losses_on_host=False, tiny_side_copy=False, frozen_first_layer=False,
                  half_updates=False, waits_for_whole_step=False, pageable=False, synchronizes_copy_stream=False,
                  default_stream_only=False, warmup_kept=False, loss_before_replay=False, resident=False,
                  list_of_losses=False, no_consumed_event=False, copy_current_batch=False, eager_optimizer=False,
                  history=4096, no_copy_wait=False, poll_pause_s=1e-4, autocast_loss=False, cached_autocast=False,
                  undo_on_side: bool | str = False, setup_on_side: bool | str = False):
    """The notebook's solution, with one wrong turn (or one other right way) switched on by a flag."""
    if bf16_weights:
        model.to(torch.bfloat16)
    params = list(model.parameters())
    side = torch.cuda.Stream()
    if setup_on_side:  # the snapshot taken first, on the side stream, which waits for the caller's if "waits" (later,
        # the blocking copy of batch 0 below makes the host wait for the caller's stream: the warm-up sees its writes)
        if setup_on_side == "waits":
            side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            saved = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params[2:] if frozen_first_layer else params, lr=nb08.LR, foreach=True)
    tokens, lengths, labels = data
    if resident:  # the whole data set on the GPU: no copy from the host at all
        host = [tokens.cuda(), lengths.float().cuda(), labels.cuda()]
    elif pageable:
        host = [tokens, lengths.float(), labels]
    else:
        host = [tokens.pin_memory(), lengths.float().pin_memory(), labels.pin_memory()]
    if bf16_weights:
        host[0] = host[0].to(torch.bfloat16).pin_memory()
    static = [t[0].to("cuda", copy=True) for t in host]  # resident: .to("cuda") alone would alias batch 0
    staged = [torch.empty_like(t) for t in static]
    copy_stream = torch.cuda.current_stream() if copy_on_default else torch.cuda.Stream()
    copied, consumed = torch.cuda.Event(), torch.cuda.Event()
    kept = torch.zeros(history, device="cuda")  # a ring of `history` losses
    kept_list: list[torch.Tensor] = []
    count, pending = 0, False

    def train(update=True):
        if cached_autocast:  # autocast's cache left on (inside the outer autocast below)
            loss = _pooled_loss(model, static[0].sum(1) / static[1][:, None], static[2], True, dtype=torch.bfloat16)
        else:
            loss = (loss_inside_autocast if autocast_loss else fast_loss)(model, *static, bf16=True)
        loss.backward()
        if update and not no_update:
            opt.step()
        return loss

    if not setup_on_side:
        saved = [p.detach().clone() for p in params]
    outer = torch.autocast("cuda", dtype=torch.bfloat16) if cached_autocast else contextlib.nullcontext()
    outer.__enter__()  # cached_autocast: around the warm-up and the capture, its cache on
    if setup_on_side is not True:  # (the flag is also a string)
        side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            train()
    torch.cuda.current_stream().wait_stream(side)
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = train(update=not eager_optimizer)  # eager_optimizer: the update after each replay instead
    outer.__exit__(None, None, None)
    graphs = [graph]
    if half_updates:  # a second graph without the optimizer's step, replayed every other step
        opt.zero_grad(set_to_none=True)
        no_step = torch.cuda.CUDAGraph()
        with torch.cuda.graph(no_step):
            no_step_loss = train(update=False)
        graphs.append(no_step)
    if not warmup_kept:  # undo_on_side: on the side stream, after the capture (joined to the caller's if "joined")
        with torch.no_grad(), torch.cuda.stream(side) if undo_on_side else contextlib.nullcontext():
            for p, s in zip(params, saved, strict=True):
                p.copy_(s)
        if undo_on_side == "joined":
            torch.cuda.current_stream().wait_stream(side)

    main_of = [torch.cuda.current_stream()]  # the stream of the latest step

    def prefetch(i):
        if resident:
            return
        if tiny_side_copy:  # the small tensors on a side stream, the large one where the step computes
            main_of[0].wait_event(consumed)
            staged[0].copy_(host[0][i % len(host[0])], non_blocking=True)
        stream = main_of[0] if same_stream else copy_stream  # same_stream: the step's own, whoever calls
        with torch.cuda.stream(stream):
            if waits_for_whole_step:
                stream.wait_stream(main_of[0])  # everything queued there so far: the replay too
            elif not no_consumed_event:  # without it, the next copy may overwrite the batch the step still reads
                stream.wait_event(consumed)
            for k, (dst, src) in enumerate(zip(staged, host, strict=True)):
                if not (tiny_side_copy and k == 0):
                    dst.copy_(src[i % len(src)], non_blocking=not copy_on_default)
            copied.record(stream)
        if synchronizes_copy_stream:
            copy_stream.synchronize()
        if polls:
            while not copied.query():  # no synchronize(): the host polls every 0.1 ms, and waits all the same
                if poll_pause_s:
                    time.sleep(poll_pause_s)

    def record(k, loss):
        if list_of_losses:
            kept_list.append(loss.detach().clone())
        else:
            kept[k % len(kept)].copy_(loss.float())

    def train_on_static(k):
        """Step k's work on the GPU, its batch already in `static`."""
        g, loss = (graphs[k % 2], (static_loss, no_step_loss)[k % 2]) if half_updates else (graph, static_loss)
        if loss_before_replay:
            record(k, loss)  # still the previous step's loss
        if not (stop_after and k >= stop_after):
            g.replay()
            if eager_optimizer:
                opt.step()  # reads the gradients that the replay wrote: a few launches, outside the graph
        if not loss_before_replay:
            record(k, loss)

    def step():
        nonlocal count, pending
        main = torch.cuda.default_stream() if default_stream_only else torch.cuda.current_stream()
        main_of[0] = main
        with torch.cuda.stream(main):
            if pending:  # the previous step's work, done only now
                train_on_static(count - 1)
                pending = False
            if copy_current_batch:  # this step's batch, copied now on the side stream: the host runs ahead anyway
                prefetch(count)
            if not no_copy_wait:  # without it, the step reads the staged batch while its copy may still be running
                main.wait_event(copied)
            if resident:
                for dst, src in zip(static, host, strict=True):
                    dst.copy_(src[count % len(src)])
            elif stale:
                static[:] = staged  # rebinds the names: the graph still reads the first batch
            else:
                for dst, src in zip(static, staged, strict=True):
                    dst.copy_(src)
            consumed.record(main)
            if deferred:
                pending = True
            else:
                train_on_static(count)
            count += 1
            if not copy_current_batch:
                prefetch(2 * count if every_other else count)  # every other: skips half the batches
            if sync or (sync_every and count % sync_every == 0):
                torch.cuda.synchronize()  # no .item(), but the host still waits

    def losses():
        nonlocal pending
        if pending:
            with torch.cuda.stream(main_of[0]):
                train_on_static(count - 1)
            pending = False
        got = torch.stack(kept_list) if list_of_losses else kept[:min(count, len(kept))]
        return got.cpu() if losses_on_host else got

    if not copy_current_batch:
        prefetch(0)
    return step, losses


def polls_without_a_pause(model, data):
    """The fourth adversary's (their _build(poll=True)): the host spins on the copy's event, `while not
    copied.query(): pass`, with no pause.  Right values, and a wait as real as a synchronize(); but each query() is a
    CUDA call in the profile, hundreds of thousands of them while the GPU works off its head start, and the check
    took more than 25 s on an H200 to fail it (two profiled runs, the trace scanned once per step).  It fails after
    the first run now, its trace read in one pass."""
    return solution_step(model, data, polls=True, poll_pause_s=0.0)


def _variant(**flags):
    return lambda model, data: solution_step(model, data, **flags)


def live_history(model, data):
    """Round 100's adversary: losses() hands out one list of its own, refilled at each call, so a list returned after
    step 10 holds 40 losses by the end (the check copied each result at once, and passed it)."""
    step, losses0 = solution_step(model, data)
    history: list = []

    def losses():
        history[:] = list(losses0().unbind())
        return history

    return step, losses


def precomputed_step(model, data, horizon=64):
    """Trains `horizon` steps eagerly inside make_fast_step, keeping every loss and weight; step() only copies the
    next stored weights into the model (the training moved out of step(): right values, and nothing to time)."""
    params = list(model.parameters())
    start = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params, lr=nb08.LR)
    tokens, lengths, labels = data
    stored, kept = [], torch.empty(horizon, device="cuda")
    for k in range(horizon):
        b = k % len(tokens)
        loss = fast_loss(model, tokens[b].cuda(), lengths[b].float().cuda(), labels[b].cuda(), True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        kept[k] = loss.detach()
        stored.append([p.detach().clone() for p in params])
    with torch.no_grad():
        torch._foreach_copy_(params, start)
    done = [0]

    def step():
        with torch.no_grad():
            torch._foreach_copy_(params, stored[done[0]])
        done[0] += 1

    return step, lambda: kept[:done[0]]


# Round 18's adversary: each passed the check as it was.
_BY_INPUT: dict = {}


def cached_by_input(model, x, n, y, bf16):
    """Keeps each batch's pooled mean by the identity of x (and the weights' versions, so that an optimizer step
    recomputes the loss): stale once the caller refills x in place, as exercise 2's static input is refilled."""
    key = (id(x), x.shape, x.device, bf16)
    if key not in _BY_INPUT:
        _BY_INPUT.clear()
        _BY_INPUT[key] = (x, x.sum(1) / n[:, None])
    return _loss(model, _BY_INPUT[key][1], y, bf16)


def _sets_precision(path, value):
    def answer(model, x, n, y, bf16):
        owner, _, name = ("torch.backends." + path).rpartition(".")
        obj = torch
        for part in owner.split(".")[1:]:
            obj = getattr(obj, part)
        setattr(obj, name, value)
        return fast_loss(model, x, n, y, bf16)
    return answer


def rounds_x_by_a_cast(model, x, n, y, bf16):
    """Rounds the tokens to bf16 with a cast and back, then sums in float32: the rounding of bf16_sum, spelled as
    casts, which the check took for exact."""
    return _loss(model, (x.to(torch.bfloat16).float() if bf16 else x).sum(1) / n[:, None], y, bf16)


def rounds_the_sums_by_a_cast(model, x, n, y, bf16):
    """The sums over positions rounded to bf16 by a cast and back, then divided in float32 (round 18: passed)."""
    sums = x.sum(1)
    return _loss(model, (sums.to(torch.bfloat16).float() if bf16 else sums) / n[:, None], y, bf16)


def pooled_mean_cast_to_bf16(model, x, n, y, bf16):
    """Right: the pooled mean cast to bf16 before the model, which autocast's first product would round the same."""
    pooled = x.sum(1) / n[:, None]
    return _loss(model, pooled.to(torch.bfloat16).float() if bf16 else pooled, y, bf16)


def lengths_cast_to_bf16(model, x, n, y, bf16):
    """Right for the check: the lengths cast to bf16, a cast that changes no length under 257."""
    return _loss(model, x.sum(1) / (n.to(torch.bfloat16) if bf16 else n)[:, None], y, bf16)


def leaves_eval_mode(model, x, n, y, bf16):
    """Switches the model to eval mode (the right loss: it has no dropout) and leaves it there."""
    model.eval()
    return fast_loss(model, x, n, y, bf16)


# ---------------------------------------------------------------- round 19's adversary
_RECIPROCALS: dict = {}


def reciprocal_kept_by_n(model, x, n, y, bf16):
    """round 19's adversary: 1/n computed once for the static lengths buffer, kept by n's identity: stale once the
    caller refills n in place (exercise 2 does at every step)."""
    key = id(n)
    if key not in _RECIPROCALS:
        _RECIPROCALS.clear()
        _RECIPROCALS[key] = (n, (1.0 / n)[:, None])  # n held: its id stays unique while cached
    return _loss(model, x.sum(1) * _RECIPROCALS[key][1], y, bf16)


_POOLING: dict = {}


def pooling_weights_kept_by_n(model, x, n, y, bf16):
    """round 19's adversary: the pooling weights mask/n kept by (n's identity, the padded length)."""
    key = (id(n), x.shape[1])
    if key not in _POOLING:
        _POOLING.clear()
        mask = torch.arange(x.shape[1], device=x.device) < n[:, None]
        _POOLING[key] = (n, (mask / n[:, None])[..., None])
    return _loss(model, (x * _POOLING[key][1]).sum(1), y, bf16)


def drops_empty_sequences(model, x, n, y, bf16):
    """round 19's adversary: x[n > 0], a boolean index: its size is read on the host (nonzero), a GPU waits."""
    keep = n > 0
    xs, ns, ys = x[keep], n[keep], y[keep]
    return _loss(model, xs.sum(1) / ns[:, None], ys, bf16)


def drops_empty_sequences_masked_select(model, x, n, y, bf16):
    """round 19's adversary: the same with nonzero, index_select and masked_select."""
    keep = torch.nonzero(n > 0).squeeze(1)
    xs, ns = x.index_select(0, keep), n.index_select(0, keep)
    ys = torch.masked_select(y, n > 0)
    return _loss(model, xs.sum(1) / ns[:, None], ys, bf16)


def detect_anomaly_left_on(model, x, n, y, bf16):
    """round 19's adversary: anomaly detection turned on and left on (every later backward runs checked)."""
    torch.autograd.set_detect_anomaly(True)
    return fast_loss(model, x, n, y, bf16)


def anomaly_mode_entered_and_left(model, x, n, y, bf16):
    """round 19's adversary: detect_anomaly() entered with __enter__() and never exited."""
    torch.autograd.detect_anomaly(check_nan=True).__enter__()
    return fast_loss(model, x, n, y, bf16)


def reseeds_the_rng(model, x, n, y, bf16):
    """round 19's adversary: torch.manual_seed(0) inside the loss: the caller's random numbers repeat."""
    torch.manual_seed(0)
    return fast_loss(model, x, n, y, bf16)


def sets_the_default_device_and_names_it(model, x, n, y, bf16):
    """round 19's adversary: torch.set_default_device(x.device) left set (device= named anyway)."""
    torch.set_default_device(x.device)
    mask = torch.arange(x.shape[1], device=x.device) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def flushes_denormals(model, x, n, y, bf16):
    """round 19's adversary: torch.set_flush_denormal(True) left set."""
    torch.set_flush_denormal(True)
    return fast_loss(model, x, n, y, bf16)


def fp16_accumulation_left_on(model, x, n, y, bf16):
    """round 19's adversary: torch.backends.cuda.matmul.allow_fp16_accumulation = True, left so."""
    torch.backends.cuda.matmul.allow_fp16_accumulation = True
    return fast_loss(model, x, n, y, bf16)


def sets_many_threads(model, x, n, y, bf16):
    """round 19's adversary: torch.set_num_threads(more) "for speed", left set."""
    torch.set_num_threads(torch.get_num_threads() + 1)
    return fast_loss(model, x, n, y, bf16)


def backward_inside(model, x, n, y, bf16):
    """round 19's adversary: backward() inside the loss (retain_graph): each call adds a gradient to .grad."""
    loss = fast_loss(model, x, n, y, bf16)
    loss.backward(retain_graph=True)
    return loss


def zeroes_the_gradients(model, x, n, y, bf16):
    """round 19's adversary: model.zero_grad() inside the loss: a caller's accumulated gradients are lost."""
    model.zero_grad(set_to_none=True)
    return fast_loss(model, x, n, y, bf16)


def mask_from_numpy_copied(model, x, n, y, bf16):
    """round 19's adversary: positions from torch.from_numpy(np.arange), copied to the batch's device each call."""
    positions = torch.from_numpy(np.arange(x.shape[1], dtype=np.float32)).to(x.device)
    mask = positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def mask_from_numpy_not_copied(model, x, n, y, bf16):
    """round 19's adversary: the same positions, not copied (a GPU raises)."""
    positions = torch.from_numpy(np.arange(x.shape[1], dtype=np.float32))
    mask = positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def mask_from_torch_range(model, x, n, y, bf16):
    """round 19's adversary: positions from torch.range, made on the host (a GPU raises)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        positions = torch.range(0, x.shape[1] - 1)
    mask = positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def divides_in_float16(model, x, n, y, bf16):
    """round 19's adversary: with bf16=True, the sums and lengths to float16 and divided there (a sum past 65504
    overflows)."""
    s = x.sum(1)
    pooled = (s.half() / n.half()[:, None]).float() if bf16 else s / n[:, None]
    return _loss(model, pooled, y, bf16)


def float32_fallback_beside_bf16(model, x, n, y, bf16):
    """round 19's adversary: a float32 run of the whole model beside the bf16 one, chosen where bf16's is not
    finite: every Linear runs in float32 too with bf16=True."""
    pooled = x.sum(1) / n[:, None]
    loss32 = F.cross_entropy(model(pooled), y)
    if not bf16:
        return loss32
    loss16 = _loss(model, pooled, y, True)
    return torch.where(torch.isfinite(loss16), loss16, loss32)


def first_64_positions(model, x, n, y, bf16):
    """round 19's adversary: sums the first 64 positions only (the GPU data's padded length)."""
    return _loss(model, x[:, :64].sum(1) / n[:, None], y, bf16)


def _mlp_by_hand(relu):
    """The MLP unrolled under autocast, its ReLU spelled `relu(a)`."""
    def answer(model, x, n, y, bf16):
        a = x.sum(1) / n[:, None]
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            for layer in model:
                a = layer(a) if isinstance(layer, torch.nn.Linear) else relu(a)
        return F.cross_entropy(a.float(), y)
    return answer


# ---- round 20's adversary (each passed, or crashed the check, or a right one FAILed)
def sets_cudnn_benchmark(model, x, n, y, bf16):
    """round 20's adversary: cudnn.benchmark = True "for speed", left on (notebook 06: keep it False, autotuning picks
    other kernels in each process); the check did not read cuDNN's own switches."""
    torch.backends.cudnn.benchmark = True
    return fast_loss(model, x, n, y, bf16)


def sets_cudnn_deterministic(model, x, n, y, bf16):
    """round 20's adversary: cudnn.deterministic = True, one of notebook 06's switches, left on."""
    torch.backends.cudnn.deterministic = True
    return fast_loss(model, x, n, y, bf16)


def turns_off_uninitialized_fill(model, x, n, y, bf16):
    """round 20's adversary: torch.utils.deterministic.fill_uninitialized_memory = False (notebook 06's gotcha),
    left off."""
    torch.utils.deterministic.fill_uninitialized_memory = False
    return fast_loss(model, x, n, y, bf16)


def disables_onednn(model, x, n, y, bf16):
    """round 20's adversary: torch.backends.mkldnn.enabled = False, left off for everyone after it."""
    torch.backends.mkldnn.enabled = False
    return fast_loss(model, x, n, y, bf16)


def asserts_no_empty_sequence_with_in(model, x, n, y, bf16):
    """round 20's adversary: `assert 0 not in n`: Tensor.__contains__, Python code, reads (n == 0).any() on the host
    inside (.item()), which the recorder did not see (only the outermost call)."""
    assert 0 not in n, "a sequence of length 0"
    return fast_loss(model, x, n, y, bf16)


def positions_from_x_new(model, x, n, y, bf16):
    """round 20's adversary: positions made with the legacy x.new(list): from Python data, copied from the host at
    every call; FROM_DATA knew neither the name nor where its data sits."""
    positions = x.new(list(range(x.shape[1])))
    mask = positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def positions_from_data_keyword(model, x, n, y, bf16):
    """round 20's adversary: torch.tensor(data=list, device=x.device): the data passed by keyword."""
    positions = torch.tensor(data=list(range(x.shape[1])), device=x.device)
    mask = positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def positions_from_legacy_tensor(model, x, n, y, bf16):
    """round 20's adversary (left for a GPU then): torch.Tensor(list).to(x.device): made on the host by a legacy
    constructor, which the recorder did not see, and copied at every call (on a CPU, a copy to the same device)."""
    positions = torch.Tensor(list(range(x.shape[1]))).to(x.device)
    mask = positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


_W16_KEPT: dict[int, tuple] = {}


def bf16_weights_revalidated_with_equal(model, x, n, y, bf16):
    """round 20's adversary: a copy of each weight kept and revalidated with torch.equal (a host read, a GPU wait) at
    every call after the first; the check inspected the first call of each case only."""
    if not bf16:
        return fast_loss(model, x, n, y, bf16)
    a = x.sum(1) / n[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            w = layer.weight
            kept = _W16_KEPT.get(id(w))
            if kept is None or not torch.equal(kept[1], w):
                _W16_KEPT[id(w)] = (w, w.detach().clone())
            a = F.linear(a.to(torch.bfloat16), w.to(torch.bfloat16), layer.bias.to(torch.bfloat16))
        else:
            a = layer(a)
    return F.cross_entropy(a.float(), y)


_RECIPROCAL_KEPT: list = []


def reciprocal_revalidated_with_equal(model, x, n, y, bf16):
    """round 20's adversary: 1/n kept for n and revalidated with torch.equal: right values, a host read at every call
    after the first with the same n."""
    if not (_RECIPROCAL_KEPT and _RECIPROCAL_KEPT[0] is n and torch.equal(_RECIPROCAL_KEPT[1], n)):
        _RECIPROCAL_KEPT[:] = [n, n.clone(), (1.0 / n)[:, None]]  # n held: its id stays unique
    return _loss(model, x.sum(1) * _RECIPROCAL_KEPT[2], y, bf16)


def leaves_x_requiring_grad(model, x, n, y, bf16):
    """round 20's adversary: x.requires_grad_() on the caller's batch, left so (exercise 2's in-place refill then
    raises); the check compared x's values and dtype only."""
    x.requires_grad_()
    return fast_loss(model, x, n, y, bf16)


def float_output_hook_once(model, x, n, y, bf16):
    """round 20's adversary: a forward hook registered once on the caller's model (casting its output to float32),
    never removed: every later forward of the model runs it."""
    if not getattr(model, "_float_hooked", False):
        model.register_forward_hook(lambda module, args, out: out.float())
        model._float_hooked = True
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits, y)


def positions_buffer_on_the_model(model, x, n, y, bf16):
    """round 20's adversary: the positions kept as a buffer registered on the caller's model: its state_dict gains a
    key."""
    if "positions" not in model._buffers or model.positions.numel() != x.shape[1]:
        model.register_buffer("positions", torch.arange(x.shape[1], device=x.device))
    mask = model.positions < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def clips_gradients_with_hooks(model, x, n, y, bf16):
    """round 20's adversary: a gradient-clipping hook registered (once) on each of the caller's parameters, left
    there for every later backward."""
    for p in model.parameters():
        if not getattr(p, "_clipped", False):
            p.register_hook(lambda g: g.clamp(-1.0, 1.0))
            p._clipped = True
    return fast_loss(model, x, n, y, bf16)


def bf16_model_copy_attached(model, x, n, y, bf16):
    """round 20's adversary: a bf16 copy of the model attached to the caller's model (a submodule), stale after an
    optimizer step, backward never reaching the caller's weights: the check crashed on it (its own zip(strict=True)
    of the parameters before and after), where it must FAIL."""
    pooled = x.sum(1) / n[:, None]
    if not bf16:
        return F.cross_entropy(model(pooled), y)
    if "bf16_copy" not in model._modules:
        model.bf16_copy = copy.deepcopy(model).to(torch.bfloat16)
    a = pooled.to(torch.bfloat16)
    for layer in model.bf16_copy.children():
        a = layer(a)
    return F.cross_entropy(a.float(), y)


def _mlp_cast_by_hand(cast):
    """The MLP unrolled, each Linear's input, weight and bias cast to bf16 by `cast(tensor, a16)` (bf16=True)."""
    def answer(model, x, n, y, bf16):
        a = x.sum(1) / n[:, None]
        for layer in model:
            if isinstance(layer, torch.nn.Linear) and bf16:
                a16 = a.to(torch.bfloat16)
                a = F.linear(a16, cast(layer.weight, a16), cast(layer.bias, a16))
            else:
                a = layer(a)
        return F.cross_entropy(a.float(), y)
    return answer


class _Bf16Linear(torch.autograd.Function):
    """A Linear (and the ReLU after it, if asked) with its product in bf16, saving only the bf16 inputs: manual mixed
    precision.  `mask_relu=False` forgets the ReLU's mask in backward (the classic bug)."""

    @staticmethod
    def forward(ctx, a, w, b, relu, mask_relu):
        a16, w16 = a.to(torch.bfloat16), w.to(torch.bfloat16)
        z = F.linear(a16, w16, b.to(torch.bfloat16))
        out = torch.relu(z) if relu else z
        ctx.save_for_backward(a16, w16, out)
        ctx.relu, ctx.mask_relu = relu, mask_relu
        return out

    @staticmethod
    def backward(ctx, g):
        a16, w16, out = ctx.saved_tensors
        g = g.float()
        if ctx.relu and ctx.mask_relu:
            g = g * (out > 0)
        return g @ w16.float(), g.t() @ a16.float(), g.sum(0), None, None


def _custom_function_mlp(mask_relu):
    """round 20's adversary: the MLP's Linear(+ReLU) layers in bf16 as a custom autograd.Function (bf16=True).  With
    the ReLU's mask in backward, right: it FAILed, its products (made with autograd off, inside the Function) never
    counted as feeding the loss.  Without it (the classic bug), wrong: the value and the last bias's gradient right,
    every earlier layer's gradient wrong, which the check, comparing the last bias's only, would have passed."""
    def answer(model, x, n, y, bf16):
        a = x.sum(1) / n[:, None]
        layers = list(model)
        for i, layer in enumerate(layers):
            if isinstance(layer, torch.nn.Linear) and bf16:
                relu = i + 1 < len(layers) and isinstance(layers[i + 1], torch.nn.ReLU)
                a = _Bf16Linear.apply(a, layer.weight, layer.bias, relu, mask_relu)
            elif not (isinstance(layer, torch.nn.ReLU) and bf16):  # (applied inside the Function)
                a = layer(a)
        return F.cross_entropy(a.float(), y)
    return answer



# ---- round 21's adversary (each passed, or a right one FAILed)
def _f21(model, x, n, y, bf16):
    """The solution, as round 21's adversary's answers call it."""
    return fast_loss(model, x, n, y, bf16)


def autocast_forward_patched_on_model(model, x, n, y, bf16):
    """round 21's adversary: WRONG. Wraps the caller's model.forward with autocast once ("decorate forward", the
    AMP/DataParallel recipe) and leaves it there: from the first bf16=True call on, every later model(...) of the caller
    -- a bf16=False call of fast_loss, an evaluation -- runs its products in bf16. A module's instance attribute
    (forward) is no hook, parameter, buffer or submodule."""
    if bf16 and not getattr(model, "_autocast_wrapped", False):
        model.forward = torch.autocast(x.device.type, dtype=torch.bfloat16, cache_enabled=False)(model.forward)
        model._autocast_wrapped = True
    logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def bf16_latched_per_model(model, x, n, y, bf16):
    """round 21's adversary: WRONG. Remembers which models were ever asked for bf16 (a set of ids, "the model is in bf16
    mode now") and keeps running them in bf16 afterwards, even when called with bf16=False."""
    if bf16:
        _BF16_MODELS.add(id(model))
    return _loss(model, x.sum(1) / n[:, None], y, bf16 or id(model) in _BF16_MODELS)


_BF16_MODELS: set[int] = set()


def silences_all_warnings(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global setting changed and left): warnings.simplefilter("ignore") to hide
    autocast's warning, left on for the whole process -- every later warning (PyTorch's deprecations, the profiler's) is
    lost."""
    warnings.simplefilter("ignore")
    return _f21(model, x, n, y, bf16)


def allows_reduced_math_sdp(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global setting of notebook 06's kind changed and left): reduced-precision
    reductions in the math SDPA kernel turned on, left."""
    torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
    return _f21(model, x, n, y, bf16)


def disables_mha_fastpath(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global setting changed and left): torch.backends.mha.set_fastpath_enabled(False),
    left."""
    torch.backends.mha.set_fastpath_enabled(False)
    return _f21(model, x, n, y, bf16)


def disables_nnpack(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global setting changed and left): torch.backends.nnpack.set_flags(False), left."""
    torch.backends.nnpack.set_flags(False)
    return _f21(model, x, n, y, bf16)


def saved_tensors_to_host_left_on(model, x, n, y, bf16):
    """round 21's adversary: WRONG. torch.autograd.graph.save_on_cpu() entered "to save GPU memory" and never exited:
    every later forward of the process copies its saved tensors to the host (and back in backward)."""
    torch.autograd.graph.save_on_cpu().__enter__()
    return _f21(model, x, n, y, bf16)


_PROFILER: list = []


def profiler_left_running(model, x, n, y, bf16):
    """round 21's adversary: WRONG (notebook 08's own tool left on): a torch.profiler started inside the function while
    timing it (prof.start()), its stop() forgotten: every later operation of the process is recorded (memory and time
    grow without end), and exercise 2's check, which profiles, cannot start its own."""
    if not _PROFILER:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        prof.start()
        _PROFILER.append(prof)
    return _f21(model, x, n, y, bf16)


def seeds_numpy(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global generator reseeded): np.random.seed(0) "for reproducibility" inside the
    function: the caller's NumPy random numbers repeat after every call (the check reads torch's generators only)."""
    np.random.seed(0)
    return _f21(model, x, n, y, bf16)


def mkldnn_deterministic_left_on(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global setting changed and left): torch.backends.mkldnn.deterministic = True,
    oneDNN's deterministic switch (notebook 06's kind), left on."""
    torch.backends.mkldnn.deterministic = True
    return _f21(model, x, n, y, bf16)


def device_context_entered_and_left_open(model, x, n, y, bf16):
    """round 21's adversary: WRONG (global state): `torch.device(x.device).__enter__()` "so the arange lands where the
    batch is", never exited: a DeviceContext mode stays pushed on PyTorch's mode stack, and every tensor made without
    device= after the call, anywhere in the process, lands on the batch's device (on a GPU: the caller's host tensors go
    to the GPU). The check reads torch.set_default_device's global, not the mode stack."""
    torch.device(x.device).__enter__()
    mask = torch.arange(x.shape[1]) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def loop_in_a_worker_thread(model, x, n, y, bf16):
    """round 21's adversary: WRONG. The slow step's loop over positions, "parallelized" in a thread pool: each
    position's slice added in worker threads. Still a kernel per position (and a host-side join); the check's recorder
    is a TorchFunctionMode, which is thread-local: nothing a worker thread runs is seen."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(lambda t: x[:, t], range(x.shape[1])))
        pooled = pool.submit(lambda: sum(parts, torch.zeros_like(x[:, 0]))).result()
    return _loss(model, pooled / n[:, None], y, bf16)


def truncates_in_a_worker_thread(model, x, n, y, bf16):
    """round 21's adversary: WRONG. The slow step's pooling, int(n.max()) cut included, moved into a helper thread (the
    host read and the data-dependent shape both happen there): a wait for the GPU and a shape that follows the data,
    unseen by a thread-local mode."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pooled = pool.submit(lambda: x[:, :int(n.max())].sum(1) / n[:, None]).result()
    return _loss(model, pooled, y, bf16)


def _finite_or_zero(g):
    # a "skip the bad step" guard, as fp16 loss scaling does it: a host read (bool) at every backward
    return g if bool(torch.isfinite(g).all()) else torch.zeros_like(g)



def guards_backward_with_a_host_read(model, x, n, y, bf16):
    """round 21's adversary: WRONG. A "safe mixed precision" guard: a hook on the logits that zeroes a non-finite
    gradient, decided with bool(torch.isfinite(g).all()) -- a value read on the host (a GPU wait; a CUDA graph's capture
    refuses it) at every backward(). The forward is clean; the check never records the backward."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logits = logits.float()
    logits.register_hook(_finite_or_zero)
    return F.cross_entropy(logits, y)


class _PooledLinear(torch.autograd.Function):
    """The first Linear with its weight gradient accumulated by a Python loop over the positions (x itself never
    pooled before the product): right numbers, a loop of tiny kernels that grows with the padding, in backward."""

    @staticmethod
    def forward(ctx, x, n, w, b, bf16):
        ctx.save_for_backward(x, n)
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            return F.linear(x.sum(1) / n[:, None], w, b)

    @staticmethod
    def backward(ctx, g):
        x, n = ctx.saved_tensors
        g = g.float()
        gw = torch.zeros(g.shape[1], x.shape[2], dtype=g.dtype, device=g.device)
        scaled = g / n[:, None]
        for t in range(x.shape[1]):  # one small matrix product per position
            gw = gw + scaled.t() @ x[:, t]
        return None, None, gw, g.sum(0), None


def loops_in_backward(model, x, n, y, bf16):
    """round 21's adversary: WRONG. The first Linear as a custom autograd.Function whose backward keeps the slow step's
    loop over the positions (one matrix product per position): the forward has no loop, the backward launches a kernel
    per padded position. The check compares the forward's operations only."""
    layers = list(model)
    a = _PooledLinear.apply(x, n, layers[0].weight, layers[0].bias, bf16)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        for layer in layers[1:]:
            a = layer(a)
    return F.cross_entropy(a.float(), y)


def cross_entropy_looped_over_classes(model, x, n, y, bf16):
    """round 21's adversary: WRONG (the task: no loop). Cross-entropy spelled out with a Python loop over the classes to
    pick each label's logit: a tiny kernel per class; the check grows the padding, the batch and the features, never the
    classes, so the loop stays unseen."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logits = logits.float()
    picked = torch.zeros_like(logits[:, 0])
    for c in range(logits.shape[1]):
        picked = picked + logits[:, c] * (y == c)
    return (torch.logsumexp(logits, 1) - picked).mean()


_POOLED_BUFFERS: dict = {}


def pools_into_a_kept_buffer(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a stale buffer). "No allocation per call, as a CUDA graph wants": the pooled mean
    written into one buffer per shape (torch.sum(..., out=buf), then div_), kept from call to call and fed to the model.
    The float32 first Linear saves that buffer for its weight's gradient, so the next call overwrites what the previous
    loss's backward needs: a caller that adds up two losses before backward() (gradient accumulation) gets a
    RuntimeError (a tensor modified in place). The check runs backward() on each loss before the next call."""
    key = (tuple(x.shape), x.device)
    buf = _POOLED_BUFFERS.get(key)
    if buf is None:
        buf = _POOLED_BUFFERS[key] = torch.empty(x.shape[0], x.shape[2], device=x.device)
    torch.sum(x, 1, out=buf)
    buf.div_(n[:, None])
    return _loss(model, buf, y, bf16)


def checkpointed_model(model, x, n, y, bf16):
    """round 21's adversary: RIGHT. The model under activation checkpointing (use_reentrant=False): recomputed in
    backward, same loss and gradients."""
    import torch.utils.checkpoint as cp

    def run(p):
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            return model(p)
    logits = cp.checkpoint(run, x.sum(1) / n[:, None], use_reentrant=False)
    return F.cross_entropy(logits.float(), y)


def autocast_by_the_function_api(model, x, n, y, bf16):
    """round 21's adversary: RIGHT. Autocast's state set by the function API (set_autocast_enabled/dtype/cache) and put
    back in finally."""
    dev = x.device.type
    saved = (torch.is_autocast_enabled(dev), torch.get_autocast_dtype(dev), torch.is_autocast_cache_enabled())
    pooled = x.sum(1) / n[:, None]
    try:
        if bf16:
            torch.set_autocast_enabled(dev, True)
            torch.set_autocast_dtype(dev, torch.bfloat16)
            torch.set_autocast_cache_enabled(False)
        logits = model(pooled)
    finally:
        torch.set_autocast_enabled(dev, saved[0])
        torch.set_autocast_dtype(dev, saved[1])
        torch.set_autocast_cache_enabled(saved[2])
    return F.cross_entropy(logits.float(), y)


_HOST_POSITIONS = torch.arange(4096)  # made once, at import, on the host


def positions_from_a_module_constant(model, x, n, y, bf16):
    """round 21's adversary: WRONG: a module-level arange made once on the host, sliced and copied with .to(x.device) at
    every call (a copy from the host: a wait, and a CUDA graph's capture refuses it). The recorder knows host-made
    tensors only when they are made during the call; on a CPU the .to() is a copy to the same device."""
    mask = _HOST_POSITIONS[:x.shape[1]].to(x.device) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def positions_from_a_module_constant_not_copied(model, x, n, y, bf16):
    """round 21's adversary: WRONG: the same host-made module constant compared with n as it is: a GPU raises (a CPU
    tensor beside CUDA ones); on a CPU it runs, and the recorder does not know the constant was made on the host."""
    mask = _HOST_POSITIONS[:x.shape[1]] < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def positions_as_a_default_argument(model, x, n, y, bf16,
                                    positions=torch.arange(4096, dtype=torch.float32)):  # noqa: B008 (the mistake)
    """round 21's adversary: WRONG: the positions as a default argument (made once, on the host), copied to the batch's
    device each call."""
    mask = positions[:x.shape[1]].to(x.device) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def pooled_without_grad(model, x, n, y, bf16):
    """round 21's adversary: RIGHT. The pooled mean under torch.no_grad() (x needs no gradient), the model with
    autograd."""
    with torch.no_grad():
        pooled = x.sum(1) / n[:, None]
    return _loss(model, pooled, y, bf16)


def functional_call_model(model, x, n, y, bf16):
    """round 21's adversary: RIGHT. The model run through torch.func.functional_call with its own parameters (a
    stateless call)."""
    params = dict(model.named_parameters())
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = torch.func.functional_call(model, params, (x.sum(1) / n[:, None],))
    return F.cross_entropy(logits.float(), y)


def nanmean_over_real_positions(model, x, n, y, bf16):
    """round 21's adversary: RIGHT. The padding marked NaN (from the lengths, not the values: real tokens of zeros
    stay), then nanmean."""
    real = torch.arange(x.shape[1], device=x.device) < n[:, None]
    pooled = x.masked_fill(~real[..., None], float("nan")).nanmean(1)
    return _loss(model, pooled, y, bf16)


def cudnn_tf32_off_legacy(model, x, n, y, bf16):
    """round 21's adversary: WRONG (a global setting changed and left): torch.backends.cudnn.allow_tf32 = False "for
    exact float32", left (lecture 06's legacy switch for cuDNN)."""
    torch.backends.cudnn.allow_tf32 = False
    return _f21(model, x, n, y, bf16)


def cudnn_tf32_put_back_to_the_default(model, x, n, y, bf16):
    """WRONG (round 74's adversary): TF32 off for the call, then both legacy switches set to PyTorch's defaults
    (cuDNN's True), not to the caller's values: it passed while every case started from the defaults."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    loss = _f21(model, x, n, y, bf16)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    return loss


def matmul_precision_saved_by_the_legacy_getter(model, x, n, y, bf16):
    """WRONG (round 74's adversary wrote it as right): saved with get_float32_matmul_precision() and put back with
    set_float32_matmul_precision(), TF32 off in between. The pair does not give back a per-backend "none" (which follows
    its parent): the switches come back "ieee", and a later change of the parent no longer reaches them."""
    saved = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        return _f21(model, x, n, y, bf16)
    finally:
        torch.set_float32_matmul_precision(saved)


# ---- round 21's adversary, exercise 2 (judged on a GPU only: the lead runs them)
def _solution_variant(replacements):
    """The course's own solution_step, its source edited in exactly the places named (each edit applies once)."""
    import inspect
    import sys
    source = inspect.getsource(solution_step)
    for old, new in replacements:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    namespace = dict(vars(sys.modules[__name__]))
    exec(compile(source, "<solution_step variant>", "exec"), namespace)  # noqa: S102 (the course's own source)
    return namespace["solution_step"]


def private_stream_without_entry_wait(model, data):
    """round 21's adversary: WRONG (a wait missing in one direction). The whole step runs on the answer's own stream; at
    the end of each call the caller's stream waits for it (so the caller sees the new weights and losses), but at the
    start the private stream never waits for the caller's stream: work the caller queued before step() -- new weights
    loaded, a learning-rate change, its own reads of the weights -- is not ordered before the step. The check queues
    nothing on the caller's stream that the step must see, and its snapshot of step k (microseconds) always beats the
    update of step k+1 (after its forward and backward), so the race never shows; the late run only delays the private
    stream further."""
    private = torch.cuda.Stream()
    private.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(private):
        step0, losses0 = solution_step(model, data)
    torch.cuda.current_stream().wait_stream(private)

    def step():
        caller = torch.cuda.current_stream()
        with torch.cuda.stream(private):  # missing: private.wait_stream(caller)
            step0()
        caller.wait_stream(private)

    def losses():
        caller = torch.cuda.current_stream()
        with torch.cuda.stream(private):
            got = losses0()
        caller.wait_stream(private)
        return got

    return step, losses


def leaves_its_stream_current(model, data):
    """round 21's adversary: WRONG (global state: the caller's current stream). step() switches to the answer's stream
    with torch.cuda.set_stream(private) (ordered after the caller's stream) and never switches back: everything the
    caller queues after step() goes to the answer's stream, no longer ordered with the caller's own earlier or later
    work on its stream. The check restores the current stream itself after each caller and never compares it; its own
    snapshots and clones simply follow onto the answer's stream, and its end event, recorded on the caller's stream,
    then no longer measures the GPU's time of the run."""
    private = torch.cuda.Stream()
    private.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(private):
        step0, losses0 = solution_step(model, data)
    torch.cuda.current_stream().wait_stream(private)

    def step():
        private.wait_stream(torch.cuda.current_stream())
        torch.cuda.set_stream(private)  # never restored
        step0()

    def losses():
        private.wait_stream(torch.cuda.current_stream())
        torch.cuda.set_stream(private)
        return losses0()

    return step, losses


def storage_copy_without_wait(model, data):
    """round 21's adversary: WRONG (a missing wait the check cannot widen). The course's solution with the step's wait
    for its batch's copy left out (as the course's no_copy_wait), and the copy spelled as a byte copy of per-batch
    pinned storages, dst.untyped_storage().copy_(src.untyped_storage(), non_blocking=True), on the side stream. The late
    run makes a stream late at the first *torch function* queued on it (a TorchFunctionMode); a storage's copy_ is not
    one, nor are event records and graph replays, so the copy stream is never made late and the race stays as narrow as
    in the first run."""
    build = _solution_variant([
        ("    staged = [torch.empty_like(t) for t in static]\n",
         ("    staged = [torch.empty_like(t) for t in static]\n"
          "    per_batch = [[t[j].clone().pin_memory() for j in range(len(t))] for t in host]\n")),
        ("                    dst.copy_(src[i % len(src)], non_blocking=not copy_on_default)\n",
         ("                    dst.untyped_storage().copy_(per_batch[k][i % len(src)].untyped_storage(),\n"
          "                                                non_blocking=True)\n")),
    ])
    return build(model, data, no_copy_wait=True)


def event_recorded_before_the_copy(model, data):
    """round 21's adversary: WRONG (an event recorded too early). The copy stream records its `copied` event before
    queuing the copies: the step waits on an event that fires as soon as the stream reaches it, not when the batch has
    landed."""
    build = _solution_variant([
        ("            for k, (dst, src) in enumerate(zip(staged, host, strict=True)):\n",
         ("            copied.record(stream)\n"
          "            for k, (dst, src) in enumerate(zip(staged, host, strict=True)):\n")),
        (("                    dst.copy_(src[i % len(src)], non_blocking=not copy_on_default)\n"
          "            copied.record(stream)\n"),
         "                    dst.copy_(src[i % len(src)], non_blocking=not copy_on_default)\n"),
    ])
    return build(model, data)


def takes_the_batch_only_if_landed(model, data):
    """round 21's adversary: WRONG (a result that depends on the GPU's speed). "Never wait": the step asks
    copied.query() and takes the staged batch only if its copy has already landed, otherwise trains on the batch it
    already holds (the previous one). On a fast, idle GPU every copy has landed and the losses are right; behind any
    queue they are not."""
    build = _solution_variant([
        (("            if not no_copy_wait:  # without it, the step reads the staged batch while its copy may still be "
          "running\n                main.wait_event(copied)\n"),
         "            fresh = copied.query()  # no wait: the batch is taken only if its copy has landed\n"),
        (("            else:\n                for dst, src in zip(static, staged, strict=True):\n"
          "                    dst.copy_(src)\n"),
         ("            elif fresh:\n                for dst, src in zip(static, staged, strict=True):\n"
          "                    dst.copy_(src)\n")),
    ])
    return build(model, data)


# ---------------------------------------------------------------- round 24's adversary (exercise 1, on the CPU)
# the notebook's own global (cell 4 of 08_profiling.ipynb): "cuda" on a GPU machine, "cpu" without one
device = "cuda" if torch.cuda.is_available() else "cpu"


def _r24_logits(model, x, n, bf16):
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        return model(x.sum(1) / n[:, None]).float()


def naive_softmax(model, x, n, y, bf16):
    """Wrong (round 24's adversary: the check never drew a logit gap above ~8.6): cross-entropy by hand with exp() and
    no max subtracted, NaN for any logit above 88.7 (logits [100, 0], label 0: the slow step's loss is 0)."""
    e = _r24_logits(model, x, n, bf16).exp()
    return -(e.gather(1, y[:, None]).squeeze(1) / e.sum(1)).log().mean()


def log_of_softmax_plus_eps(model, x, n, y, bf16):
    """Wrong (round 24's adversary): -log(softmax + 1e-8), the loss of a confidently wrong sequence capped at 18.4."""
    return -(F.softmax(_r24_logits(model, x, n, bf16), 1) + 1e-8).log().gather(1, y[:, None]).mean()


def clamps_the_logits(model, x, n, y, bf16):
    """Wrong (round 24's adversary): logits clamped to [-30, 30] "against overflow": off past a logit of 30."""
    return F.cross_entropy(_r24_logits(model, x, n, bf16).clamp(-30.0, 30.0), y)


def mask_on_default_device(model, x, n, y, bf16):
    """Wrong (round 24's adversary): the mask's positions made on torch.get_default_device(), the host unless the
    caller set a default device (a GPU raises beside the batch); the check knew the host only by the string "cpu"."""
    mask = torch.arange(x.shape[1], device=torch.get_default_device()) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


_R24_HOST = torch.device("cpu")


def pools_on_host_by_device_object(model, x, n, y, bf16):
    """Wrong (round 24's adversary): pooled on the host with .to(torch.device("cpu")) (the known x.to("cpu") FAILed)."""
    pooled = x.to(_R24_HOST).sum(1) / n.to(_R24_HOST)[:, None]
    return _loss(model, pooled.to(x.device), y, bf16)


def forces_train_mode(model, x, n, y, bf16):
    """Wrong (round 24's adversary): model.train() at the top; the check only passed models in training mode."""
    model.train()
    return fast_loss(model, x, n, y, bf16)


def unfreezes_every_parameter(model, x, n, y, bf16):
    """Wrong (round 24's adversary): requires_grad_(True) on every parameter: a layer the caller froze trains again."""
    for p in model.parameters():
        p.requires_grad_(True)
    return fast_loss(model, x, n, y, bf16)


def forces_grad_mode_on(model, x, n, y, bf16):
    """Wrong (round 24's adversary): torch.set_grad_enabled(True) as a call: a caller's no_grad() evaluation records
    graphs from then on (the check only called with grad mode on)."""
    torch.set_grad_enabled(True)
    return fast_loss(model, x, n, y, bf16)


def turns_the_garbage_collector_off(model, x, n, y, bf16):
    """Wrong (round 24's adversary): gc.disable(), left off."""
    gc.disable()
    return fast_loss(model, x, n, y, bf16)


def numpy_errors_silenced(model, x, n, y, bf16):
    """Wrong (round 24's adversary): np.seterr(all="ignore"), left set."""
    np.seterr(all="ignore")
    return fast_loss(model, x, n, y, bf16)


def warns_always(model, x, n, y, bf16):
    """Wrong (round 24's adversary): torch.set_warn_always(True), left on."""
    torch.set_warn_always(True)
    return fast_loss(model, x, n, y, bf16)


def raises_dynamo_recompile_limit(model, x, n, y, bf16):
    """Wrong (round 24's adversary): torch._dynamo.config.recompile_limit raised to 1024 and left."""
    import torch._dynamo
    torch._dynamo.config.recompile_limit = 1024
    return fast_loss(model, x, n, y, bf16)


def mask_on_device_type(model, x, n, y, bf16):
    """Right (round 24's adversary: FAILed on a CPU, the string "cpu" taken for the host): the mask made with
    device=x.device.type, the spelling the task gives for autocast."""
    mask = torch.arange(x.shape[1], device=x.device.type) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def mask_on_notebook_device(model, x, n, y, bf16):
    """Right (round 24's adversary: FAILed on a CPU): the mask made with device=device, the notebook's own global (cell
    4), where the notebook puts the batch."""
    mask = torch.arange(x.shape[1], device=device) < n[:, None]
    return _loss(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def vmap_per_sequence_mean(model, x, n, y, bf16):
    """Right (round 24's adversary: FAILed on a CPU, vmap's result unseen by the recorder and taken for a tensor made
    on the host): each sequence's mean, vectorized with torch.vmap."""
    return _loss(model, torch.vmap(lambda xi, ni: xi.sum(0) / ni)(x, n), y, bf16)


@torch.jit.script
def _r24_scripted_mean(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    return x.sum(1) / n.unsqueeze(1)


def torchscript_mean(model, x, n, y, bf16):
    """Right (round 24's adversary: FAILed on a CPU, for the same reason): the pooled mean in a TorchScript helper."""
    return _loss(model, _r24_scripted_mean(x, n), y, bf16)


@torch.jit.script
def _r24_scripted_loop(x: torch.Tensor) -> torch.Tensor:
    pooled = torch.zeros_like(x[:, 0])
    for t in range(x.shape[1]):  # the slow step's loop over positions, inside TorchScript
        pooled = pooled + x[:, t]
    return pooled


def torchscript_loop(model, x, n, y, bf16):
    """Wrong (round 24's adversary: the recorder saw none of TorchScript's operations; it FAILed on a CPU only as "made
    on the host"): the slow step's loop over positions moved into a @torch.jit.script helper."""
    return _loss(model, _r24_scripted_loop(x) / n[:, None], y, bf16)


# Round 24's adversary of 08 (GPU-only answers, judged on the H200 on 2026-11-30)
def tf32_on_in_make_fast_step(model, data):
    """WRONG (a global setting changed and left; lecture 06's first rule, which check_fast_loss enforces). The
    course's solution, with torch.backends.cuda.matmul.fp32_precision = "tf32" (and cuDNN's) set "for speed" in
    make_fast_step and never put back: every float32 product of the caller's program after it is rounded to TF32.
    Judged on the H200 (2026-11-30): FAIL, the setting named."""
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    torch.backends.cudnn.conv.fp32_precision = "tf32"
    return solution_step(model, data)


def sync_debug_error_left_in_make_fast_step(model, data):
    """WRONG (a global setting changed and left). make_fast_step ends with torch.cuda.set_sync_debug_mode("error"), so
    that "any synchronization in step() raises" (notebook 05, section 7), and never sets "default" back.  step() and
    losses() never synchronize, so the answer itself runs; the check's own code after make_fast_step does (the slow
    reference's loss.item(), as_losses' .cpu()).  Judged on the H200 (2026-11-30): FAIL, the setting named (the
    check crashed before)."""
    made = solution_step(model, data)
    torch.cuda.set_sync_debug_mode("error")
    return made


def divides_the_callers_tokens_in_place(model, data):
    """WRONG (the caller's data changed). "One-time work in make_fast_step": the tokens divided by their lengths in
    place (tokens.div_(lengths)), so that a step only sums; the lengths passed to fast_loss are then ones.  The
    losses and updates are the slow step's (within rounding), but the caller's `data` now holds other tokens.
    Judged on the H200 (2026-11-30): FAIL."""
    tokens, lengths, labels = data
    tokens.div_(lengths[..., None, None].float())  # in place, on the caller's host tensor
    return solution_step(model, (tokens, torch.ones_like(lengths), labels))


def consumed_recorded_before_the_copy(model, data):
    """WRONG (an event recorded too early, the other direction from round 21's `copied`). The step records `consumed`
    (the event the copy stream waits for before overwriting the staged batch) right after its wait for `copied`, before
    its own device-to-device copy out of the staged buffer: the next batch's H2D copy may start writing the staged
    buffer while this step is still reading it.  The first run's race window is the few microseconds of the D2D copy;
    the late run makes the copy stream late (5 ms), which closes the window.  On the H200 (2026-11-30): PASS,
    misjudged (a race the check cannot widen: it would need the caller's stream made late *after* the record, as
    late_at_each_entry does for CuPy)."""
    build = _solution_variant([
        ("            consumed.record(main)\n            if deferred:\n", "            if deferred:\n"),
        ("            if resident:\n                for dst, src in zip(static, host, strict=True):\n",
         ("            consumed.record(main)  # too early: the staged batch is read by the copies below\n"
          "            if resident:\n                for dst, src in zip(static, host, strict=True):\n")),
    ])
    return build(model, data)


# ---- round 32's adversary, exercise 1 (fast_loss): roundings to bf16 the recorder did not follow, a host read through
# DLPack, tensors of tensors taken for host-made ones, and a library class patched and left
def _r32_tail(model, pooled, y, bf16):
    """The solution's tail (autocast's model, float32 cross-entropy), as round 32's adversary's answers call it."""
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def sums_rounded_into_a_bf16_buffer(model, x, n, y, bf16):
    """round 32's adversary: WRONG. With bf16=True, each sequence's sum stored into a bf16 buffer (`buf[:] = s`, which
    returns None) and divided in float32: `rounds_the_sums_by_a_cast` done by __setitem__ instead of a cast."""
    s = x.sum(1)
    if bf16:
        buf = torch.empty_like(s, dtype=torch.bfloat16)
        buf[:] = s
        s = buf.float()
    return _r32_tail(model, s / n[:, None], y, bf16)


def cast_sums_laundered_through_float32_buffer(model, x, n, y, bf16):
    """round 32's adversary: WRONG. The sums cast to bf16 (a cast the recorder marks), written into a float32 buffer
    by __setitem__ (which it did not follow), then divided in float32."""
    s = x.sum(1)
    if bf16:
        wide = torch.empty_like(s)
        wide[:] = s.to(torch.bfloat16)
        s = wide
    return _r32_tail(model, s / n[:, None], y, bf16)


def sums_rounded_by_as_tensor(model, x, n, y, bf16):
    """round 32's adversary: WRONG. The sums rounded to bf16 by torch.as_tensor(s, dtype=torch.bfloat16,
    device=x.device) (a creation, taken for exact), then divided in float32."""
    s = x.sum(1)
    if bf16:
        s = torch.as_tensor(s, dtype=torch.bfloat16, device=x.device).float()
    return _r32_tail(model, s / n[:, None], y, bf16)


def sums_rounded_by_cat_out(model, x, n, y, bf16):
    """round 32's adversary: WRONG. The sums rounded to bf16 by torch.cat into a bf16 out= buffer."""
    s = x.sum(1)
    if bf16:
        buf = torch.empty_like(s, dtype=torch.bfloat16)
        torch.cat([s], out=buf)
        s = buf.float()
    return _r32_tail(model, s / n[:, None], y, bf16)


def guards_lengths_by_a_dlpack_read(model, x, n, y, bf16):
    """round 32's adversary: WRONG. A guard against empty sequences that reads n on the host through DLPack at every
    call (`assert (np.from_dlpack(n) > 0).all()`): on a GPU NumPy cannot even take device memory."""
    assert (np.from_dlpack(n.detach()) > 0).all(), "a sequence of length 0"
    return _r32_tail(model, x.sum(1) / n[:, None], y, bf16)


_R32_LINEAR_BF16 = [False]
_R32_LINEAR_FORWARD = torch.nn.Linear.forward


def _r32_linear_forward(self, a):
    if _R32_LINEAR_BF16[0]:
        with torch.autocast(a.device.type, dtype=torch.bfloat16, cache_enabled=False):
            return _R32_LINEAR_FORWARD(self, a)
    return _R32_LINEAR_FORWARD(self, a)


def patches_the_linear_class(model, x, n, y, bf16):
    """round 32's adversary: WRONG (a library class patched and left). torch.nn.Linear.forward replaced by one that
    runs under autocast when a module-level flag is set, the flag set from `bf16` at each call: after a bf16=True call
    every Linear of the process runs in bf16.  The check compared each module's own attributes, never its class's."""
    torch.nn.Linear.forward = _r32_linear_forward
    _R32_LINEAR_BF16[0] = bf16
    logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def lengths_as_tensor(model, x, n, y, bf16):
    """round 32's adversary: RIGHT. `n = torch.as_tensor(n, dtype=x.dtype)`, a defensive "make sure n is float": n
    itself, where it is (FAILed: as_tensor's result taken for a tensor made on the host)."""
    n = torch.as_tensor(n, dtype=x.dtype)
    return _r32_tail(model, x.sum(1) / n[:, None], y, bf16)


def labels_as_tensor(model, x, n, y, bf16):
    """round 32's adversary: RIGHT. `y = torch.as_tensor(y, dtype=torch.long)`: y itself, where it is."""
    y = torch.as_tensor(y, dtype=torch.long)
    return _r32_tail(model, x.sum(1) / n[:, None], y, bf16)


def lengths_asarray(model, x, n, y, bf16):
    """round 32's adversary: RIGHT. torch.asarray(n, dtype=x.dtype): n itself, on its own device."""
    n = torch.asarray(n, dtype=x.dtype)
    return _r32_tail(model, x.sum(1) / n[:, None], y, bf16)


def lengths_as_tensor_then_to(model, x, n, y, bf16):
    """round 32's adversary: RIGHT. torch.as_tensor(n).to(x.dtype): n itself, on its own device."""
    n = torch.as_tensor(n).to(x.dtype)
    return _r32_tail(model, x.sum(1) / n[:, None], y, bf16)


# ---- round 32's adversary, exercise 2 (make_fast_step: judged on a GPU only, not yet run there; the lead runs them)
def _r32_fast_loss(model, x, n, y, bf16):
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def _r32_step_builder(model, data, *, fresh_staging=False, pin_each_step=False, consumed_on_default=False,
                      main_waits_default=False, loss_on_copy_stream=False, wait_stream=False, double_buffer=False):
    """The notebook's solution (graph, staged prefetch, two events), with one change switched on by a flag."""
    opt = torch.optim.SGD(model.parameters(), lr=nb08.LR, foreach=True)
    tokens, lengths, labels = data
    if pin_each_step:
        host = (tokens, lengths.float(), labels)  # pinned batch by batch, in step()
    else:
        host = (tokens.pin_memory(), lengths.float().pin_memory(), labels.pin_memory())
    static = [t[0].to("cuda", copy=True) for t in host]
    nbuf = 2 if double_buffer else 1
    staged = [[torch.empty_like(t) for t in static] for _ in range(nbuf)]
    copy_stream = torch.cuda.Stream()
    copied = [torch.cuda.Event() for _ in range(nbuf)]
    consumed = [torch.cuda.Event() for _ in range(nbuf)]
    kept, state = torch.zeros(4096, device="cuda"), {"count": 0, "staged": None}

    def train():
        loss = _r32_fast_loss(model, *static, bf16=True)
        loss.backward()
        opt.step()
        return loss

    saved = [p.detach().clone() for p in model.parameters()]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            train()
    torch.cuda.current_stream().wait_stream(side)
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = train()
    with torch.no_grad():
        for p, s in zip(model.parameters(), saved):
            p.copy_(s)

    def source(t, i):
        b = t[i % len(t)]
        return b.pin_memory() if pin_each_step else b

    def prefetch(i):
        k = i % nbuf
        with torch.cuda.stream(copy_stream):
            if fresh_staging:  # a new buffer each step: "no reuse, so no event needed"
                state["staged"] = [source(src, i).to("cuda", non_blocking=True) for src in host]
            else:
                copy_stream.wait_event(consumed[k])
                for dst, src in zip(staged[k], host):
                    dst.copy_(source(src, i), non_blocking=True)
                state["staged"] = staged[k]
            copied[k].record(copy_stream)

    def step():
        count = state["count"]
        k = count % nbuf
        main = torch.cuda.current_stream()
        if main_waits_default:
            torch.cuda.default_stream().wait_event(copied[k])
        elif wait_stream:
            main.wait_stream(copy_stream)
        else:
            main.wait_event(copied[k])
        for dst, src in zip(static, state["staged"]):
            dst.copy_(src)
        consumed[k].record(torch.cuda.default_stream() if consumed_on_default else main)
        graph.replay()
        if loss_on_copy_stream:
            with torch.cuda.stream(copy_stream):
                kept[count % len(kept)].copy_(static_loss)
        else:
            kept[count % len(kept)].copy_(static_loss)
        prefetch(count + 1)
        state["count"] = count + 1

    prefetch(0)
    return step, lambda: kept[:min(state["count"], len(kept))]


def fresh_staging_without_record_stream(model, data):
    """round 32's adversary (GPU only, H200: FAIL): WRONG (a stale buffer, the allocator's): each prefetch allocates
    its staged batch anew on the copy stream and drops the last one, with no `consumed` wait and no record_stream(main):
    the caching allocator hands the freed block to a later copy on the copy stream while the step's stream may still be
    copying out of it."""
    return _r32_step_builder(model, data, fresh_staging=True)


def pins_each_batch_in_step(model, data):
    """round 32's adversary (GPU only, H200: FAIL): WRONG (one-time work done at every call): each batch pinned
    inside step() (pin_memory() of pageable memory: a host memcpy of the batch per step, cudaHostAlloc the first times);
    the values are right, the task says pinning is make_fast_step's one-time work."""
    return _r32_step_builder(model, data, pin_each_step=True)


def consumed_recorded_on_the_default_stream(model, data):
    """round 32's adversary (GPU only, H200: FAIL): WRONG (a wait missing in one direction): `consumed` recorded on
    torch.cuda.default_stream(), not the caller's current stream: for a side-stream caller the copy stream waits for
    nothing of the step's copy out of the staged buffer, and may overwrite it while the caller's stream reads it."""
    return _r32_step_builder(model, data, consumed_on_default=True)


def default_stream_waits_for_the_copy(model, data):
    """round 32's adversary (GPU only, H200: FAIL): WRONG (a wait on the wrong stream): the default stream waits for
    `copied`, the caller's stream does not: a side-stream caller reads the staged batch before its copy lands."""
    return _r32_step_builder(model, data, main_waits_default=True)


def loss_kept_on_the_copy_stream(model, data):
    """round 32's adversary (GPU only, H200: FAIL): WRONG (work queued on a stream that did not wait): each step's
    loss copied into the history on the copy stream, which waited for nothing of the replay: it reads the graph's loss
    before the replay writes it (the last step's), or after, depending on the GPU's speed."""
    return _r32_step_builder(model, data, loss_on_copy_stream=True)


def waits_for_the_copy_stream(model, data):
    """round 32's adversary (GPU only; PASSed on the H200, call T): RIGHT: main.wait_stream(copy_stream) in place of
    wait_event(copied): at that point the copy stream holds the batch's copy only."""
    return _r32_step_builder(model, data, wait_stream=True)


def double_buffered_staging(model, data):
    """round 32's adversary (GPU only; PASSed on the H200, call T): RIGHT: two staging buffers used in turn, each with
    its own `copied` and `consumed` events."""
    return _r32_step_builder(model, data, double_buffer=True)


WRONG = {
    "check_fast_loss": {
        "sets autocast's default dtype to bfloat16 and leaves it": sets_the_autocast_dtype,
        "turns TF32 on with fp32_precision and leaves it": turns_tf32_on_with_the_new_api,
        "turns bf16 products' reduced-precision reductions off and leaves them": keeps_bf16_reductions_in_float32,
        "turns deterministic algorithms on and leaves them": turns_deterministic_algorithms_on,
        "bf16 copies of the weights kept from the first call": bf16_weights_kept,
        "divides by the padded length": padded_mean,
        "keeps the loop over positions": kept_loop,
        "keeps the loop over positions, in bf16 only": bf16_branch(lambda x, n: _looped(x) / n[:, None]),
        "divides by the padded length, in bf16 only": bf16_branch(lambda x, n: x.mean(1)),
        "a constant ln 10": constant_ln10,
        "a constant ln 10, in bf16 only": constant_in_bf16,
        "sums the positions in bf16": bf16_sum,
        "pools with a batched matrix product inside autocast": bf16_pooling_product,
        "cuts each batch to its longest sequence, read with int()": host_truncated,
        "cuts each batch to its longest sequence, read with tolist()": host_truncated_tolist,
        "returns a bf16 loss": loss_in_bf16,
        "rounds the loss to bf16": loss_rounded_to_bf16,
        "converts the model to bf16": model_to_bf16,
        "ignores bf16": ignores_bf16,
        "bf16 whatever bf16 says": always_bf16,
        "returns a detached loss": detached,
        "divides x in place": divides_x_in_place,
        "divides by the longest sequence's length": by_the_longest,
        "returns one loss per sequence": per_sequence,
        "returns loss.item()": as_a_float,
        "a Python loop over the sequences of the batch": loops_over_the_batch,
        "a Python loop over the features": loops_over_the_features,
        "counts each length from the nonzero positions": lengths_from_nonzero_positions,
        "rounds the sums to bf16 and divides in bf16 with bf16=True": divides_in_bf16,
        "detached bf16 copies of the weights": detached_bf16_weights,
        "a mask made on the host, copied to the batch's device": host_made_mask,
        "a mask from an arange made on the host, not copied (a GPU raises)": host_made_mask_not_copied,
        "pools on the host with x.cpu()": pools_on_the_host,
        "turns TF32 on": turns_tf32_on,
        "autocast without dtype= (float16 on a GPU)": autocast_without_dtype,
        "autocast with its cache on (cache_enabled left True)": autocast_with_its_cache,
        "turns autocast's cache off for everyone": autocast_cache_off_for_everyone,
        "prints the loss (formats it on the host)": prints_the_loss,
        "asserts the padding is zeros with torch.allclose": asserts_zero_padding,
        "pools on the host with x.to('cpu')": pools_on_the_host_with_to,
        "ones made on the host with torch.asarray": host_ones_from_asarray,
        "a mask made with device='cpu'": mask_made_on_cpu_by_name,
        "a mask's positions made from a Python list with device=": positions_from_a_list,
        "a mask's positions made with x.new_tensor(list)": positions_from_new_tensor,
        "divides in place in bf16 (div_)": divides_in_place_in_bf16,
        "divides by n + 1e-5": divides_by_length_plus_epsilon,
        "returns the loss of a float32 run beside the bf16 one": returns_the_float32_loss,
        "only the last layer in bf16, unused bf16 products for the count": last_layer_only_in_bf16,
        "a Python loop over blocks of 64 positions": loops_over_blocks_of_positions,
        "micro-batches of 256 sequences": micro_batches(256),
        "micro-batches of 128 sequences": micro_batches(128),
        "log-softmax with its normalizer detached (the right value, the wrong gradient)": detached_normalizer,
        # round 18
        "keeps the pooled mean by the identity of x": cached_by_input,
        "sets torch.backends.fp32_precision to tf32 and leaves it": _sets_precision("fp32_precision", "tf32"),
        "sets cuDNN's convolutions' fp32_precision to ieee and leaves it": _sets_precision(
            "cudnn.conv.fp32_precision", "ieee"),
        "sets oneDNN's matmul fp32_precision to bf16 and leaves it": _sets_precision("mkldnn.matmul.fp32_precision",
                                                                                      "bf16"),
        "leaves the model in eval mode": leaves_eval_mode,
        "rounds x to bf16 with a cast, then sums in float32": rounds_x_by_a_cast,
        "rounds the sums to bf16 with a cast, then divides in float32": rounds_the_sums_by_a_cast,
        # round 19's adversary
        "1/n kept by the identity of n (n refilled in place later)": reciprocal_kept_by_n,
        "pooling weights mask/n kept by the identity of n": pooling_weights_kept_by_n,
        "drops empty sequences by boolean indexing x[n > 0]": drops_empty_sequences,
        "drops empty sequences with nonzero/index_select/masked_select": drops_empty_sequences_masked_select,
        "turns anomaly detection on and leaves it": detect_anomaly_left_on,
        "detect_anomaly() entered and never exited": anomaly_mode_entered_and_left,
        "torch.manual_seed(0) inside the loss": reseeds_the_rng,
        "torch.set_default_device(x.device) left set, device= named too": sets_the_default_device_and_names_it,
        "torch.set_flush_denormal(True) left set": flushes_denormals,
        "allow_fp16_accumulation turned on and left": fp16_accumulation_left_on,
        "torch.set_num_threads(more) left set": sets_many_threads,
        "calls backward() itself (retain_graph): .grad accumulates": backward_inside,
        "model.zero_grad() inside the loss": zeroes_the_gradients,
        "positions from torch.from_numpy(np.arange), copied with .to(x.device)": mask_from_numpy_copied,
        "positions from torch.from_numpy(np.arange), not copied (a GPU raises)": mask_from_numpy_not_copied,
        "positions from torch.range without device= (a GPU raises)": mask_from_torch_range,
        "bf16=True: sums and lengths to float16, divided there": divides_in_float16,
        "a float32 loss beside the bf16 one, chosen by torch.where(isfinite)": float32_fallback_beside_bf16,
        "sums the first 64 positions only": first_64_positions,
        # round 20's adversary
        "torch.backends.cudnn.benchmark = True left on": sets_cudnn_benchmark,
        "torch.backends.cudnn.deterministic = True left on": sets_cudnn_deterministic,
        "torch.utils.deterministic.fill_uninitialized_memory = False left off": turns_off_uninitialized_fill,
        "torch.backends.mkldnn.enabled = False left off": disables_onednn,
        "assert 0 not in n (Tensor.__contains__ reads on the host)": asserts_no_empty_sequence_with_in,
        "a mask's positions made with the legacy x.new(list)": positions_from_x_new,
        "a mask's positions made with torch.tensor(data=list, device=)": positions_from_data_keyword,
        "a mask's positions made with torch.Tensor(list).to(x.device)": positions_from_legacy_tensor,
        "bf16 weights revalidated with torch.equal at each later call": bf16_weights_revalidated_with_equal,
        "1/n revalidated with torch.equal at each later call": reciprocal_revalidated_with_equal,
        "x.requires_grad_() left on the caller's batch": leaves_x_requiring_grad,
        "a forward hook left on the caller's model": float_output_hook_once,
        "a buffer registered on the caller's model": positions_buffer_on_the_model,
        "gradient hooks left on the caller's parameters": clips_gradients_with_hooks,
        "a bf16 copy of the model attached to the caller's model": bf16_model_copy_attached,
        "a custom autograd.Function in bf16 whose backward forgets ReLU's mask": _custom_function_mlp(False),
        # round 21's adversary: state latched by a bf16=True call, and process-wide state left changed
        "model.forward wrapped with autocast on the first bf16 call, left on the caller's model":
            autocast_forward_patched_on_model,
        "bf16 latched per model (a set of ids)": bf16_latched_per_model,
        "warnings.simplefilter('ignore') left": silences_all_warnings,
        "allow_fp16_bf16_reduction_math_sdp(True) left": allows_reduced_math_sdp,
        "mha fastpath disabled and left": disables_mha_fastpath,
        "nnpack disabled and left": disables_nnpack,
        "save_on_cpu() entered and never exited": saved_tensors_to_host_left_on,
        "a torch.profiler started and never stopped": profiler_left_running,
        "np.random.seed(0) inside": seeds_numpy,
        "mkldnn.deterministic = True left": mkldnn_deterministic_left_on,
        "torch.device(x.device).__enter__() never exited": device_context_entered_and_left_open,
        "cudnn.allow_tf32 = False (the legacy switch) left": cudnn_tf32_off_legacy,
        "both TF32 switches put back to PyTorch's defaults, not the caller's (round 74)":
            cudnn_tf32_put_back_to_the_default,
        "get/set_float32_matmul_precision around the call: per-backend 'none' comes back 'ieee' (round 74)":
            matmul_precision_saved_by_the_legacy_getter,
        "the loop over positions run in a worker thread pool": loop_in_a_worker_thread,
        "int(n.max()) truncation in a helper thread": truncates_in_a_worker_thread,
        "a backward hook that reads on the host (finite guard)": guards_backward_with_a_host_read,
        "the loop over positions kept in a custom backward": loops_in_backward,
        "cross-entropy with a Python loop over the classes": cross_entropy_looped_over_classes,
        "the pooled mean written into a buffer kept from call to call": pools_into_a_kept_buffer,
        "positions from a module-level host arange, copied with .to(x.device)": positions_from_a_module_constant,
        "positions from a module-level host arange, not copied": positions_from_a_module_constant_not_copied,
        "positions as a host-made default argument": positions_as_a_default_argument,
        # round 24's adversary: large logits never drawn, the host named by a device object, the caller's state only
        # ever the defaults, settings nb08 did not read, a loop inside TorchScript
        "cross-entropy by hand, exp() without the max subtracted (NaN past a logit of 88.7)": naive_softmax,
        "-log(softmax + 1e-8): the loss capped at 18.4": log_of_softmax_plus_eps,
        "logits clamped to [-30, 30] before cross-entropy": clamps_the_logits,
        "a mask made on torch.get_default_device() (the host)": mask_on_default_device,
        "pooled on the host with .to(torch.device('cpu'))": pools_on_host_by_device_object,
        "model.train() forced inside": forces_train_mode,
        "requires_grad_(True) forced on every parameter": unfreezes_every_parameter,
        "torch.set_grad_enabled(True) left": forces_grad_mode_on,
        "gc.disable() left": turns_the_garbage_collector_off,
        "np.seterr(all='ignore') left": numpy_errors_silenced,
        "torch.set_warn_always(True) left": warns_always,
        "torch._dynamo.config.recompile_limit raised and left": raises_dynamo_recompile_limit,
        "the loop over positions inside @torch.jit.script": torchscript_loop,
        # round 32's adversary: roundings to bf16 by __setitem__, out= and as_tensor, a read through DLPack, a class
        # patched and left
        "sums rounded into a bf16 buffer by __setitem__": sums_rounded_into_a_bf16_buffer,
        "sums cast to bf16 and laundered through a float32 buffer": cast_sums_laundered_through_float32_buffer,
        "sums rounded by torch.as_tensor(dtype=bf16)": sums_rounded_by_as_tensor,
        "sums rounded by torch.cat(out=bf16 buffer)": sums_rounded_by_cat_out,
        "a guard that reads n through DLPack": guards_lengths_by_a_dlpack_read,
        "torch.nn.Linear.forward patched, bf16 flag left set": patches_the_linear_class,
    },
    "check_fast_step": {
        "graph reads stale inputs (static = batch rebinds)": _variant(stale=True),
        "trains on every other batch": _variant(every_other=True),
        "optimizer.step() left out (of the graph, and of the step)": _variant(no_update=True),
        "weights and updates in bf16": _variant(bf16_weights=True),
        "torch.cuda.synchronize() every step": _variant(sync=True),
        "pinned, but copied on the default stream with non_blocking=False": _variant(copy_on_default=True),
        "pinned and non_blocking, but copied on the step's own stream": _variant(same_stream=True),
        "stops training after 16 steps": _variant(stop_after=16),
        "each step's work done in the next call (and the last in losses())": _variant(deferred=True),
        "polls the copy's event until it is done": _variant(polls=True),
        "polls the copy's event with no pause (a query() call after another)": polls_without_a_pause,
        "torch.cuda.synchronize() every eighth step": _variant(sync_every=8),
        "losses() returns the losses copied to the host": _variant(losses_on_host=True),
        "losses() returns one list of its own, which later calls refill (round 100)": live_history,
        "lengths and labels on a side stream, the tokens on the step's own": _variant(tiny_side_copy=True),
        "the first layer left out of the optimizer": _variant(frozen_first_layer=True),
        "every other step without the optimizer's step": _variant(half_updates=True),
        "the copy stream waits for the whole step (wait_stream) before copying": _variant(waits_for_whole_step=True),
        "copies from pageable memory, non_blocking, on a side stream": _variant(pageable=True),
        "copy_stream.synchronize() after each copy": _variant(synchronizes_copy_stream=True),
        "runs on the default stream, whatever the caller's": _variant(default_stream_only=True),
        "keeps the warm-up's updates": _variant(warmup_kept=True),
        "keeps each step's loss before the replay computes it": _variant(loss_before_replay=True),
        "prefetches without waiting for the step to take the staged batch (a race)": _variant(no_consumed_event=True),
        "keeps the last 32 losses only (the check runs 40 steps)": _variant(history=32),
        "the step's kernels never wait for the copy of their batch": _variant(no_copy_wait=True),
        # round 39's adversary (2026-11-30), following the exercise's text of then ("losses such as cross_entropy run
        # in float32"): on a GPU cross_entropy is not on autocast's float32 list, and its log-softmax ran in bf16;
        # step 1's loss on the H200 was 2.303558 against the slow step's 2.303837 (tolerance 2.8e-5 relative)
        "the loss computed inside autocast (on a GPU, a bf16 log-softmax)": _variant(autocast_loss=True),
        "trains every step in make_fast_step, step() only copies the stored weights": precomputed_step,
        # round 21's adversary (not yet run on a GPU: the first three were expected to PASS the round-20 check)
        "a private stream that the caller waits for, but that never waits for the caller":
            private_stream_without_entry_wait,
        "torch.cuda.set_stream(private) in step(), never restored": leaves_its_stream_current,
        "the batch copied as untyped storages, no wait for the copy": storage_copy_without_wait,
        "the copied event recorded before the copies": event_recorded_before_the_copy,
        "the batch taken only if copied.query() says it landed": takes_the_batch_only_if_landed,
        # round 24's adversary's (judged on the H200)
        "TF32 turned on in make_fast_step and left": tf32_on_in_make_fast_step,
        "sync debug mode 'error' set in make_fast_step and left": sync_debug_error_left_in_make_fast_step,
        "the caller's tokens divided by their lengths in place": divides_the_callers_tokens_in_place,
        "consumed recorded before the step's copy out of the staged buffer": consumed_recorded_before_the_copy,
        # round 32's adversary's (not yet run on a GPU)
        "fresh staging tensors each step, no record_stream, no consumed event": fresh_staging_without_record_stream,
        "each batch pinned inside step() (one-time work at every call)": pins_each_batch_in_step,
        "consumed recorded on the default stream, not the caller's": consumed_recorded_on_the_default_stream,
        "the default stream waits for the copy, not the caller's": default_stream_waits_for_the_copy,
        "each step's loss copied into the history on the copy stream": loss_kept_on_the_copy_stream,
        # round 113's adversary: the graph reads the bf16 casts the warm-up's autocast kept (PASSed on the H200 until
        # the late run negated the weights while make_fast_step ran)
        "warm-up and capture inside torch.autocast, its cache on": _variant(cached_autocast=True),
    },
}
# without a GPU the check of the fast step runs nothing, so nothing fails there
WRONG_ON_CPU: dict[str, set[str]] = {"check_fast_step": set()}
ALSO_RIGHT = {
    "check_fast_loss": {
        "the pooled mean cast to bf16 before the model (autocast rounds it the same)": pooled_mean_cast_to_bf16,
        "the lengths cast to bf16 (exact below 257)": lengths_cast_to_bf16,
        "adds each layer's bias by hand": bias_by_hand,
        "a masked mean": masked_mean,
        "the mean times the padded length over each length": mean_times_length,
        "pools with a float32 batched matrix product outside autocast": float32_pooling_product,
        "returns the loss with shape (1,)": shaped_one,
        "each Linear cast to bf16 by hand": bf16_by_hand,
        "an arange without device= inside `with torch.device(x.device)`": positions_under_device_context,
        "the running sum read at each length": cumsum_at_the_length,
        "cross-entropy spelled out with one-hot labels": one_hot_cross_entropy,
        "a mask whose positions are kept from one call to the next": positions_kept,
        # round 19's adversary: exact spellings of ReLU (in place, renamed) taken for bf16 arithmetic
        "MLP by hand, ReLU as clamp_(min=0)": _mlp_by_hand(lambda a: a.clamp_(min=0)),
        "MLP by hand, ReLU as clamp_min_(0)": _mlp_by_hand(lambda a: a.clamp_min_(0)),
        "MLP by hand, ReLU as masked_fill_(a < 0, 0)": _mlp_by_hand(lambda a: a.masked_fill_(a < 0, 0)),
        "MLP by hand, ReLU as F.threshold(inplace=True)": _mlp_by_hand(lambda a: F.threshold(a, 0.0, 0.0, True)),
        "MLP by hand, ReLU as F.threshold(a, 0, 0)": _mlp_by_hand(lambda a: F.threshold(a, 0.0, 0.0)),
        "MLP by hand, ReLU as F.hardtanh(a, 0, inf)": _mlp_by_hand(lambda a: F.hardtanh(a, 0.0, math.inf)),
        "ReLU as a * (a > 0)": _mlp_by_hand(lambda a: a * (a > 0)),
        # round 20's adversary: casts that take a second tensor, and a custom autograd.Function, FAILed
        "each Linear cast to bf16 by hand with type_as(a16)": _mlp_cast_by_hand(lambda t, a16: t.type_as(a16)),
        "each Linear cast to bf16 by hand with .to(a16)": _mlp_cast_by_hand(lambda t, a16: t.to(a16)),
        "each Linear cast to bf16 by copy_ into an empty bf16 tensor": _mlp_cast_by_hand(
            lambda t, a16: torch.empty(t.shape, dtype=torch.bfloat16, device=t.device).copy_(t)),
        "the Linear layers in bf16 as a custom autograd.Function": _custom_function_mlp(True),
        # round 21's adversary: more exact spellings of ReLU, FAILed as bf16 arithmetic (judged by name, not value)
        "ReLU as a * (a > 0).type_as(a)": _mlp_by_hand(lambda a: a * (a > 0).type_as(a)),
        "ReLU as a * (a > 0).to(a.dtype)": _mlp_by_hand(lambda a: a * (a > 0).to(a.dtype)),
        "ReLU as (a + |a|) / 2": _mlp_by_hand(lambda a: (a + a.abs()) / 2),
        "ReLU as F.leaky_relu(a, 0.0)": _mlp_by_hand(lambda a: F.leaky_relu(a, 0.0)),
        "activation checkpointing (use_reentrant=False: saved-tensor hooks pushed and popped)": checkpointed_model,
        "autocast by the function API, restored in finally": autocast_by_the_function_api,
        "the pooled mean under torch.no_grad()": pooled_without_grad,
        "the model through torch.func.functional_call": functional_call_model,
        "padding marked NaN from the lengths, then nanmean": nanmean_over_real_positions,
        "ReLU as torch.fmax(a, 0) on bf16 activations": _mlp_by_hand(
            lambda a: a.clamp(0) if a.dtype != torch.bfloat16 else torch.fmax(a, a.new_zeros(()))),
        # round 24's adversary: FAILed on a CPU (a device named "cpu" taken for the host; results the recorder missed)
        "a mask made with device=x.device.type": mask_on_device_type,
        "a mask made with the notebook's global `device`": mask_on_notebook_device,
        "each sequence's mean by torch.vmap": vmap_per_sequence_mean,
        "the pooled mean in a TorchScript helper": torchscript_mean,
        # round 32's adversary: FAILed on a CPU (as_tensor/asarray of a tensor taken for a tensor made on the host)
        "n = torch.as_tensor(n, dtype=x.dtype)": lengths_as_tensor,
        "y = torch.as_tensor(y, dtype=torch.long)": labels_as_tensor,
        "n = torch.asarray(n, dtype=x.dtype)": lengths_asarray,
        "torch.as_tensor(n).to(x.dtype)": lengths_as_tensor_then_to,
    },
    "check_fast_step": {
        "the wrong answers' builder, nothing switched": _variant(),
        "the whole data set kept on the GPU: no copy from the host": _variant(resident=True),
        "a list of each step's loss, stacked by losses()": _variant(list_of_losses=True),
        "copies each step's own batch on the side stream, at the start of the step": _variant(copy_current_batch=True),
        "the optimizer's step after the replay, outside the graph": _variant(eager_optimizer=True),
        # round 32's adversary's (both PASS on the H200, 2026-11-30)
        "main.wait_stream(copy_stream) instead of the copied event": waits_for_the_copy_stream,
        "double-buffered staging, events per buffer": double_buffered_staging,
        # (round 32's "the data set resident, the batch picked in the graph by a device counter",
        # resident_with_a_device_counter in commit 9c910ea, is left out: on the H200, calls T and U, its replays raised
        # a device-side assert inside the check's profiled run, which leaves the process's CUDA unusable, and the next
        # test failed on it; whether the answer or the check is wrong there is not yet known)
    },
}

# Answers the checks misjudge on a GPU, known and not yet fixed: the tests expect them to be misjudged there (a strict
# xfail, so that the fix turns them into failures to remove from here).  Round 21's two (a private stream that never
# waited for the caller; `torch.cuda.set_stream(private)` left current) were fixed in round 22: the late run keeps the
# caller's stream busy before a step, and every call's current stream is compared with the caller's.
MISJUDGED_ON_A_GPU: dict[str, dict[str, str]] = {
    "check_fast_step": {
        "the snapshot and the warm-up on a side stream that never waits for the caller's":
            "PASSed on the H200 (calls BA, BB, 2026-12-01), as round 66's adversary's own did, with the caller's write "
            "of the weights queued 300 ms behind a spin when make_fast_step was called: the snapshot read the written "
            "weights. Not separated why (a new stream's first allocation, or a page-locked one, may serialize streams)",
        "consumed recorded before the step's copy out of the staged buffer":
            "PASSed on the H200 (2026-11-30): the late run makes the copy stream late, which closes the window; the "
            "caller's stream would have to be made late after the record",
    },
}


def _one_hot_loss(num_classes: bool):
    """Round 65's adversary: the cross-entropy through F.one_hot(y), with num_classes (right) or without it (wrong: its
    width is the labels' max + 1, read on the host at every call on any device, and too narrow where the batch lacks
    the last class; it passed, as reads inside PyTorch's own operators were set aside)."""
    def fast_loss(model, x, n, y, bf16):
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            logits = model(x.sum(dim=1) / n[:, None])
        z = logits.float()
        # (-1: one_hot's default, the width read from the labels; one call, so that no arm of it runs in neither run)
        onehot = F.one_hot(y, num_classes=z.shape[1] if num_classes else -1).to(z.dtype)
        return -(torch.log_softmax(z, dim=1)[:, :onehot.shape[1]] * onehot).sum(dim=1).mean()

    return fast_loss


WRONG["check_fast_loss"]["one_hot(y) without num_classes: its width read on the host"] = _one_hot_loss(False)
ALSO_RIGHT["check_fast_loss"]["one_hot(y, num_classes=...), log_softmax of float32 logits"] = _one_hot_loss(True)


# Round 65's adversary: the warm-up undone on the side stream after the capture, never joined to the caller's stream,
# passed (the check synchronized after make_fast_step; the late run now makes a side stream late after a capture)
WRONG["check_fast_step"]["the warm-up undone on the side stream after the capture, never joined"] = _variant(
    undo_on_side=True)
ALSO_RIGHT["check_fast_step"]["the warm-up undone on the side stream after the capture, joined to the caller's"] = \
    _variant(undo_on_side="joined")

# Round 66's adversary: a set-up whose side stream never waited for the caller's before it snapshotted the weights and
# warmed up on them passed (the weights were written when make_fast_step was called); the first run now leaves the
# caller's write of them queued behind LOAD_MS, and the wrong one still PASSed on the H200 (MISJUDGED_ON_A_GPU)
WRONG["check_fast_step"]["the snapshot and the warm-up on a side stream that never waits for the caller's"] = _variant(
    setup_on_side=True)
ALSO_RIGHT["check_fast_step"]["the snapshot and the warm-up on a side stream that waits for the caller's"] = _variant(
    setup_on_side="waits")


def _pooled_then(autocast_of):
    """The plain loss (the pooled mean, the model under the autocast `autocast_of(bf16)` gives, float32 logits)."""
    def fast_loss(model, x, n, y, bf16):
        pooled = x.sum(dim=1) / n[:, None]
        with autocast_of(bf16):
            logits = model(pooled)
        return F.cross_entropy(logits.float(), y)

    return fast_loss


# Round 65's adversary: each passed (on a CPU the batch is on the host, and the check's meta rerun, its GPU stand-in,
# judged only what the device refused: an autocast for the host leaves a GPU's products in float32)
WRONG["check_fast_loss"].update({
    "torch.autocast(\"cpu\", ...) hard-coded": _pooled_then(
        lambda bf16: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16, cache_enabled=False)),
    "torch.cpu.amp.autocast (the host's only)": _pooled_then(
        lambda bf16: torch.cpu.amp.autocast(enabled=bf16, dtype=torch.bfloat16, cache_enabled=False)),
})
ALSO_RIGHT["check_fast_loss"]["autocast's device type from torch.cuda.is_available(), inline"] = _pooled_then(
    lambda bf16: torch.autocast("cuda" if torch.cuda.is_available() else "cpu", dtype=torch.bfloat16, enabled=bf16,
                                cache_enabled=False))


# Round 67's adversary: a float32 precision turned down for the call only, the caller's value put back in `finally`:
# both passed, the settings read before and after each call only (the check now reads them at each float32 product)
def _precision_for_the_call(path, value):
    """fast_loss with torch.backends.<path> set to `value` during the call, put back after: TF32 ("TF32 makes float32
    products fast, and I leave no setting changed"), or oneDNN's bf16 for float32 products on a CPU.  With bf16=False
    the task asks for the slow step's float32 arithmetic, without TF32: oneDNN's bf16 moved the course batch's loss by
    2.5e-6 on a CPU with AMX (under the value bound, 4.7e-5), TF32 changes nothing on a CPU."""
    owner_path, _, name = path.rpartition(".")

    def fast_loss_(model, x, n, y, bf16):
        owner = torch.backends
        for part in owner_path.split("."):
            owner = getattr(owner, part)
        was = getattr(owner, name)
        setattr(owner, name, value)
        try:
            return fast_loss(model, x, n, y, bf16)
        finally:
            setattr(owner, name, was)

    return fast_loss_


def pooled_cached_by_version(model, x, n, y, bf16):
    """Round 67's adversary (a right rejection whose hint blamed the lengths): the pooled mean kept, and recomputed only
    when x's or n's version counter says they were written.  No host read, and a refill in place is seen; but exercise
    2 warms up on its static inputs and then captures with no write in between, so the capture hits the cache, and the
    graph holds no pooling: every replay trains on the warm-up batch's mean."""
    key, version = (id(x), id(n)), (x._version, n._version)
    hit = _POOLED_BY_VERSION.get(key)
    if hit is None or hit[0] is not x or hit[1] is not n or hit[2] != version:
        hit = _POOLED_BY_VERSION[key] = (x, n, version, x.sum(1) / n[:, None])
    return _loss(model, hit[3], y, bf16)


_POOLED_BY_VERSION: dict = {}


def masked_mean_api(model, x, n, y, bf16):
    """Round 67's adversary (a right rejection whose hint asked about a torch.tensor the answer never wrote):
    torch.masked.mean over the real positions makes its reduction's identity with torch.tensor(0, device=) at each
    call (torch/masked/_ops.py, PyTorch 2.13), a copy from the host that a CUDA graph's capture cannot hold."""
    real = torch.arange(x.shape[1], device=x.device) < n[:, None]
    return _loss(model, torch.masked.mean(x, dim=1, mask=real[..., None].expand_as(x)), y, bf16)


WRONG["check_fast_loss"].update({
    "TF32 switched on for the call, put back in finally (round 67)": _precision_for_the_call(
        "cuda.matmul.fp32_precision", "tf32"),
    "oneDNN's bf16 for float32 products switched on for the call, put back in finally (round 67)":
        _precision_for_the_call("mkldnn.matmul.fp32_precision", "bf16"),
    "the pooled mean kept until x's or n's version counter changes (round 67)": pooled_cached_by_version,
    "torch.masked.mean over the real positions: its identity made from Python data (round 67)": masked_mean_api,
})


# Round 67's adversary, judged on the H200 (PyTorch 2.11, CuPy 14.2): both wrong ones PASSed, the check calling from the
# default stream only, idle.  The check now calls from other callers' streams, each busy right before it writes x, n
# and y (nb08._from_other_streams).  Each needs a GPU to run at all (a CUDA stream, CuPy): NEEDS_A_GPU, below.
_PRIVATE_STREAMS: dict = {}


def _private_stream(device):
    """The answer's own stream for `device`, made once."""
    if device not in _PRIVATE_STREAMS:
        _PRIVATE_STREAMS[device] = torch.cuda.Stream(device)
    return _PRIVATE_STREAMS[device]


def side_stream_without_waits(model, x, n, y, bf16):
    """"Notebook 03: work on a stream of my own overlaps with the caller's": the whole loss on a private stream that
    never waits for the caller's stream (where x, n and y were just written), and that the caller's never waits for
    (the loss and its backward are read there).  A race an idle caller's stream never shows; in exercise 2's capture
    the private stream is not captured at all."""
    with torch.cuda.stream(_private_stream(x.device)):
        return fast_loss(model, x, n, y, bf16)


def side_stream_with_waits(model, x, n, y, bf16):
    """The pooling on a private stream, ordered both ways: it waits for the caller's stream, the caller's waits for
    it, and the pooled mean is marked as used on the caller's (record_stream).  Right, and capturable (a fork and a
    join of the capturing stream)."""
    caller = torch.cuda.current_stream(x.device)
    private = _private_stream(x.device)
    private.wait_stream(caller)
    with torch.cuda.stream(private):
        pooled = x.sum(1) / n[:, None]
    caller.wait_stream(private)
    pooled.record_stream(caller)
    return _loss(model, pooled, y, bf16)


def pooled_by_cupy(model, x, n, y, bf16):
    """"The pooling is no PyTorch operation the check can count: CuPy does it on the GPU, zero-copy through DLPack."
    CuPy queues it on its own current stream, the legacy default stream, not on the caller's: DLPack orders the two
    (each side's export makes the other's stream wait), so the values are right in eager code, but the work waits for
    whatever the default stream holds, and exercise 2's capture, on the caller's stream, cannot hold it.  FAILs on the
    H200 since the check keeps the default stream busy past the call from a side-stream caller (call BI, 2026-12-01)."""
    import cupy as cp

    pooled = cp.from_dlpack(x.detach()).sum(axis=1) / cp.from_dlpack(n.detach())[:, None]
    return _loss(model, torch.from_dlpack(pooled), y, bf16)


WRONG["check_fast_loss"].update({
    "the whole loss on a private stream, no wait either way (round 67)": side_stream_without_waits,
    "the pooling by CuPy through DLPack, on CuPy's current stream (round 67)": pooled_by_cupy,
})
ALSO_RIGHT["check_fast_loss"]["the pooling on a private stream, waits both ways and record_stream (round 67)"] = \
    side_stream_with_waits

# Answers of a check that runs on a CPU too, which need a GPU to run at all, by check: label -> what else they need
# (a requirement of utils.cells.missing).  tests/test_exercises.py runs them on a GPU only.  (WRONG_ON_CPU names the
# wrong answers that a GPU check's CPU part can see; check_fast_loss is no GPU check: a CPU runs all of its answers.)
NEEDS_A_GPU: dict[str, dict[str, tuple[str, ...]]] = {
    "check_fast_loss": {
        "the whole loss on a private stream, no wait either way (round 67)": (),
        "the pooling by CuPy through DLPack, on CuPy's current stream (round 67)": ("cupy",),
        "the pooling on a private stream, waits both ways and record_stream (round 67)": (),
    },
}


# ---------------------------------------------------------------- round 68's adversary (exercise 1)
# Judged on a CPU before the fix: two wrong answers PASSed (float32 arithmetic on the weights not spelled as a matrix
# product went unrecorded, and a zero gradient counted as the loss coming from the bf16 products), a right one FAILed
# (an arange cached by length, made with device=x.device, refused by the meta rerun: the cache held the CPU's), and
# one ended in a traceback of the check's own (a backward of the grown batches, unguarded).  Predicted on a GPU: the
# stream callers ran in bf16=False only, torch.accelerator's stream and a poll of query() went unwatched.
_POSITIONS_BY_LENGTH: dict = {}
_KEPT_OUTPUT: dict = {}
_COMPILED_MEAN: list = []


def positions_cached_by_length(model, x, n, y, bf16):
    """An arange of positions made once per padded length, on the batch's device (device=x.device), kept in a dict
    keyed by the length alone (one device per notebook): right, made before exercise 2's capture and only read."""
    t = x.shape[1]
    if t not in _POSITIONS_BY_LENGTH:
        _POSITIONS_BY_LENGTH[t] = torch.arange(t, device=x.device)
    real = _POSITIONS_BY_LENGTH[t] < n[:, None]
    return _loss(model, (x * real[..., None]).sum(1) / n[:, None], y, bf16)


def _mlp_float32_by_hand(model, a):
    """The model in float32, each Linear spelled as a broadcast product and a sum (no matrix product's name)."""
    for layer in model:
        a = (a.unsqueeze(1) * layer.weight).sum(-1) + layer.bias if isinstance(layer, torch.nn.Linear) else layer(a)
    return a


def straight_through_float32_value(model, x, n, y, bf16):
    """With bf16=True, the value of a float32 forward written by hand (under no_grad) and the gradient of the bf16 one
    (`exact.detach() + (low - low.detach())`): the value is not computed from the bf16 products, and every weight runs
    in float32 arithmetic beside them."""
    pooled = x.sum(1) / n[:, None]
    if not bf16:
        return _loss(model, pooled, y, False)
    low = _loss(model, pooled, y, True)
    with torch.no_grad():
        exact = F.cross_entropy(_mlp_float32_by_hand(model, pooled), y)
    return exact + (low - low.detach())


def float32_by_hand_plus_zero_times_bf16(model, x, n, y, bf16):
    """With bf16=True, the loss (value and gradient) of a float32 MLP written by hand, plus 0.0 times the bf16 one: the
    bf16 products sit in the loss's graph with a zero gradient."""
    pooled = x.sum(1) / n[:, None]
    if not bf16:
        return _loss(model, pooled, y, False)
    return F.cross_entropy(_mlp_float32_by_hand(model, pooled), y) + 0.0 * _loss(model, pooled, y, True)


def float16_loss_plus_zero_times_bf16(model, x, n, y, bf16):
    """Not the adversary's (the check's fix, a zero gradient, alone catches it): with bf16=True, the loss of the model
    under a float16 autocast (no float32 arithmetic on the weights, no bf16 product), plus 0.0 times the bf16 one."""
    pooled = x.sum(1) / n[:, None]
    if not bf16:
        return _loss(model, pooled, y, False)
    with torch.autocast(x.device.type, dtype=torch.float16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y) + 0.0 * _loss(model, pooled, y, True)


def log_softmax_to_float32(model, x, n, y, bf16):
    """log_softmax(dtype=torch.float32) of the logits, bf16 or not: the cast is exact, the log-softmax in float32."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.nll_loss(torch.log_softmax(logits, dim=1, dtype=torch.float32), y)


def loss_in_a_kept_output(model, x, n, y, bf16):
    """The loss returned in a 0-d tensor kept from call to call ("static, as in a graph"), written with copy_: a caller
    that holds two losses finds the first one overwritten, and each call's graph chained onto the last one's."""
    out = _KEPT_OUTPUT.get(x.device)
    if out is None:
        out = _KEPT_OUTPUT[x.device] = torch.empty((), device=x.device)
    return out.copy_(fast_loss(model, x, n, y, bf16))


def compiled_pooling(model, x, n, y, bf16):
    """The pooling through torch.compile(dynamic=True): one fused kernel for the sum and the division."""
    if not _COMPILED_MEAN:
        _COMPILED_MEAN.append(torch.compile(lambda x, n: x.sum(1) / n[:, None], dynamic=True))
    return _loss(model, _COMPILED_MEAN[0](x, n), y, bf16)


def mask_on_the_models_device(model, x, n, y, bf16):
    """The mask's positions made where the model's weights are (device=next(model.parameters()).device)."""
    real = torch.arange(x.shape[1], device=next(model.parameters()).device) < n[:, None]
    return _loss(model, (x * real[..., None]).sum(1) / n[:, None], y, bf16)


def bf16_model_on_a_private_stream_no_join(model, x, n, y, bf16):
    """With bf16=True only (the mode exercise 2 uses), the model on a private stream that waits for the caller's, and
    that the caller's never waits for: the caller reads the loss before it is written."""
    if not (bf16 and x.is_cuda):
        return fast_loss(model, x, n, y, bf16)
    pooled = x.sum(1) / n[:, None]
    private = _private_stream(x.device)
    private.wait_stream(torch.cuda.current_stream(x.device))
    with torch.cuda.stream(private):
        return _loss(model, pooled, y, True)


def private_stream_no_join(model, x, n, y, bf16):
    """The whole loss on a private stream that waits for the caller's on entry; the caller's never waits for it."""
    private = _private_stream(x.device)
    private.wait_stream(torch.cuda.current_stream(x.device))
    with torch.cuda.stream(private):
        return fast_loss(model, x, n, y, bf16)


def private_stream_no_entry_wait(model, x, n, y, bf16):
    """The whole loss on a private stream that the caller's waits for at the end (the loss marked as used there), but
    that never waits for the caller's before it reads x, n and y."""
    caller = torch.cuda.current_stream(x.device)
    private = _private_stream(x.device)
    with torch.cuda.stream(private):
        loss = fast_loss(model, x, n, y, bf16)
    caller.wait_stream(private)
    loss.record_stream(caller)
    return loss


def syncs_through_torch_accelerator(model, x, n, y, bf16):
    """torch.accelerator.current_stream(x.device).synchronize() "to be sure the pooled mean is ready": a host wait at
    every call, through a torch.Stream, whose methods no check can replace."""
    pooled = x.sum(1) / n[:, None]
    torch.accelerator.current_stream(x.device).synchronize()
    return _loss(model, pooled, y, bf16)


def polls_the_callers_stream(model, x, n, y, bf16):
    """No synchronize: an event recorded on the caller's stream, polled with query() until the pooled mean is done."""
    pooled = x.sum(1) / n[:, None]
    done = torch.cuda.Event()
    done.record(torch.cuda.current_stream(x.device))
    while not done.query():
        pass
    return _loss(model, pooled, y, bf16)


def polls_a_generic_event(model, x, n, y, bf16):
    """The same poll through the device-generic torch.Event, whose query() no check can replace."""
    pooled = x.sum(1) / n[:, None]
    done = torch.Event(device=x.device)
    done.record(torch.accelerator.current_stream(x.device))
    while not done.query():
        pass
    return _loss(model, pooled, y, bf16)


def cupy_pooling_on_torchs_current_stream(model, x, n, y, bf16):
    """The pooling by CuPy through DLPack, inside cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
    on the caller's stream, in its order."""
    import cupy as cp

    stream = torch.cuda.current_stream(x.device)
    with cp.cuda.ExternalStream(stream.cuda_stream, x.device.index or 0):
        pooled = cp.from_dlpack(x.detach()).sum(axis=1) / cp.from_dlpack(n.detach())[:, None]
        pooled = torch.from_dlpack(pooled)
    return _loss(model, pooled, y, bf16)


WRONG["check_fast_loss"].update({
    "round 68's adversary: bf16=True, a float32 forward's value, the bf16 one's gradient (straight-through)":
        straight_through_float32_value,
    "round 68's adversary: bf16=True, a float32 MLP by hand, plus 0.0 times the bf16 loss":
        float32_by_hand_plus_zero_times_bf16,
    "round 68's adversary (the class): bf16=True, a float16 autocast's loss, plus 0.0 times the bf16 loss":
        float16_loss_plus_zero_times_bf16,
    "round 68's adversary: the loss written with copy_ into a tensor kept from call to call": loss_in_a_kept_output,
    "round 68's adversary: the model on a private stream never joined, with bf16=True only":
        bf16_model_on_a_private_stream_no_join,
    "round 68's adversary: the whole loss on a private stream, waited for on entry, never joined":
        private_stream_no_join,
    "round 68's adversary: the whole loss on a private stream, joined, never waiting for the caller's":
        private_stream_no_entry_wait,
    "round 68's adversary: torch.accelerator.current_stream().synchronize()": syncs_through_torch_accelerator,
    "round 68's adversary: an event on the caller's stream polled with query() in a loop": polls_the_callers_stream,
    "round 68's adversary (the class): a torch.Event polled with query() in a loop": polls_a_generic_event,
})
ALSO_RIGHT["check_fast_loss"].update({
    "round 68's adversary: an arange of positions cached by padded length, made with device=x.device":
        positions_cached_by_length,
    "round 68's adversary: log_softmax(dtype=torch.float32) of the logits": log_softmax_to_float32,
    "round 68's adversary: the pooling through torch.compile(dynamic=True)": compiled_pooling,
    "round 68's adversary: the mask made on the model's device": mask_on_the_models_device,
    "round 68's adversary: the pooling by CuPy on PyTorch's current stream (ExternalStream)":
        cupy_pooling_on_torchs_current_stream,
})
NEEDS_A_GPU["check_fast_loss"].update({
    "round 68's adversary: the model on a private stream never joined, with bf16=True only": (),
    "round 68's adversary: the whole loss on a private stream, waited for on entry, never joined": (),
    "round 68's adversary: the whole loss on a private stream, joined, never waiting for the caller's": (),
    "round 68's adversary: torch.accelerator.current_stream().synchronize()": (),
    "round 68's adversary: an event on the caller's stream polled with query() in a loop": (),
    "round 68's adversary (the class): a torch.Event polled with query() in a loop": (),
    "round 68's adversary: the pooling by CuPy on PyTorch's current stream (ExternalStream)": ("cupy",),
})


# The meta rerun judges only what its own call makes on the host (round 68): what a host-named cache still shows there
_HOST_NAMED_BY_LENGTH: dict = {}
_HOST_NAMED_ONCE: list = []


def positions_cached_on_the_host_by_length(model, x, n, y, bf16):
    """An arange cached by padded length, made with device="cpu": on a GPU it meets the batch's tensors from the host.
    The meta rerun's longer batch misses the cache, and the arange it makes there is judged."""
    t = x.shape[1]
    if t not in _HOST_NAMED_BY_LENGTH:
        _HOST_NAMED_BY_LENGTH[t] = torch.arange(t, device="cpu")
    real = _HOST_NAMED_BY_LENGTH[t] < n[:, None]
    return _loss(model, (x * real[..., None]).sum(1) / n[:, None], y, bf16)


def positions_sliced_from_one_kept_on_the_host(model, x, n, y, bf16):
    """One arange of 4096 positions made once with device="cpu", sliced at each call: the slice, made by the rerun's
    own call, is judged there."""
    if not _HOST_NAMED_ONCE:
        _HOST_NAMED_ONCE.append(torch.arange(4096, device="cpu"))
    real = _HOST_NAMED_ONCE[0][:x.shape[1]] < n[:, None]
    return _loss(model, (x * real[..., None]).sum(1) / n[:, None], y, bf16)


WRONG["check_fast_loss"].update({
    "round 68 (the class): an arange cached by padded length, made with device=\"cpu\"":
        positions_cached_on_the_host_by_length,
    "round 68 (the class): one arange kept, made with device=\"cpu\", sliced at each call":
        positions_sliced_from_one_kept_on_the_host,
})


# ---------------------------------------------------------------- round 68's second adversary (exercise 1)
# Fourteen answers (report adv113), judged on a CPU against the check as of 3ece4d6/add817a: one wrong answer PASSed
# (the sums truncated to bf16's bits: MISJUDGED_ON_A_CPU); two wrong ones FAILed for another reason than theirs (a host
# tensor), and are expected to PASS on a GPU (MISJUDGED_ON_A_GPU).  The adversary ran those two once more as its "GPU"
# answers: here each is registered once, and runs on both machines.  Two more need a GPU to run at all (NEEDS_A_GPU).
R68B = "round 68's second adversary: "
_R68B_KEPT: dict = {}


def _r68b_logits(model, pooled, bf16):
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        return model(pooled)


def _r68b_loss(model, pooled, y, bf16):
    return F.cross_entropy(_r68b_logits(model, pooled, bf16).float(), y)


def float32_value_from_a_deepcopy(model, x, n, y, bf16):
    """"The bf16 gradient trains well enough, but the loss I log should be exact": with bf16=True, the value of the
    float32 loss of copy.deepcopy(model) (so that the model's own graph stays bf16-only), with the bf16 loss's gradient
    (`exact.detach() + (low - low.detach())`).  Wrong: the value is not computed from the bf16 products, the class of
    round 68's straight_through_float32_value, by a copy whose weights the recorder cannot trace to the model's (a
    Parameter is built by torch.Tensor._make_subclass, which no TorchFunctionMode sees; nb08.py's `_behind`, at
    lines 747-751, follows casts and views only).  On a CPU it FAILs for another reason: the copy's weights are host
    tensors no recorded call made, and the hint speaks of a tensor made on the host (nb08.py:673, 677); on a GPU they
    are CUDA tensors, and it is expected to PASS (with the copy marked known, it PASSes on a CPU too)."""
    pooled = x.sum(1) / n[:, None]
    low = _r68b_loss(model, pooled, y, bf16)
    if not bf16:
        return low
    exact = F.cross_entropy(copy.deepcopy(model)(pooled), y)
    return exact.detach() + (low - low.detach())


def float32_value_from_rebuilt_parameters(model, x, n, y, bf16):
    """The same float32 value with the bf16 gradient, the weights taken as new Parameters (nn.Parameter(p.detach()))
    through torch.func.functional_call: wrong for the same reason, unseen for the same reason (the new Parameters carry
    ids of their own).  On a CPU it FAILs for another reason, the host-tensor hint (nb08.py:673, 677); expected to PASS
    on a GPU."""
    pooled = x.sum(1) / n[:, None]
    low = _r68b_loss(model, pooled, y, bf16)
    if not bf16:
        return low
    params = {k: torch.nn.Parameter(v.detach()) for k, v in model.named_parameters()}
    exact = F.cross_entropy(torch.func.functional_call(model, params, (pooled,)), y)
    return exact.detach() + (low - low.detach())


def sums_truncated_to_bf16_by_bits(model, x, n, y, bf16):
    """"The GPU rounds to bf16 anyway, so I emulate it cheaply": with bf16=True, each sum over positions keeps only
    bf16's 8 significant bits, by a mask on its bits (`s.view(torch.int32) & -65536`, viewed back as float32), before
    the division in float32.  Wrong: the task keeps everything but the model's matrix products as with bf16=False, and
    the truncation rounds toward zero, a bias a cast (to nearest) lacks: the class of rounds_the_sums_by_a_cast.  It
    PASSes on a CPU (MISJUDGED_ON_A_CPU): no dtype narrower than float32 ever appears, so no rounding is noted, and its
    error lies within the value's bf16 bound."""
    s = x.sum(1)
    if bf16:
        s = (s.view(torch.int32) & -65536).view(torch.float32)
    return _r68b_loss(model, s / n[:, None], y, bf16)


def sums_rounded_through_float8(model, x, n, y, bf16):
    """"Lower precision is the point, and float8 is the newest format": with bf16=True, the pooled mean rounded through
    float8_e4m3fn (3 significant bits) and back.  Wrong: a rounding outside the products, in a format that nb08.py's
    NARROW does not name; only the value test catches it (off by 3.7e-3 against a bound of 2.5e-3 on a CPU), so a
    format whose rounding stays within the bound would not be (the answer above)."""
    pooled = x.sum(1) / n[:, None]
    if bf16 and hasattr(torch, "float8_e4m3fn"):
        pooled = pooled.to(torch.float8_e4m3fn).float()
    return _r68b_loss(model, pooled, y, bf16)


def average_pool_rescaled(model, x, n, y, bf16):
    """"One reduction": avg_pool1d over the whole padded length gives the sum over T, times T/n the sum over n.  Right:
    another algorithm, one kernel, a static shape."""
    t = x.shape[1]
    mean = F.avg_pool1d(x.transpose(1, 2), kernel_size=t).squeeze(-1)
    return _r68b_loss(model, mean * (t / n)[:, None], y, bf16)


def pooling_in_float64(model, x, n, y, bf16):
    """"To be safe": the sum and the division in float64, then float32 for the model.  Right: never less exact than
    the slow step."""
    return _r68b_loss(model, (x.double().sum(1) / n.double()[:, None]).float(), y, bf16)


def padding_zeroed_by_a_0d_host_scalar(model, x, n, y, bf16):
    """The padding zeroed with torch.where(mask, x, torch.zeros(())): a 0-d tensor made on the host, which the student
    took for the exception the task allows (a host scalar that an operation reads as a number).  Wrong on a GPU:
    torch.where copies a 0-d operand on another device to the output's device first (`where_self_out`,
    aten/src/ATen/native/TensorCompare.cpp: "allow CPU scalars on non-cpu device", `other_.to(device)`), and a copy
    from the host without non_blocking waits for the stream (`copy_kernel_cuda`, aten/src/ATen/native/cuda/Copy.cu:
    `memcpy_and_sync`, a cudaStreamSynchronize).  Submitted as right by round 68's second adversary;
    FAILed on the H200 (calls BN and BP, 2026-12-01) with "returned only once the caller's earlier work ended".  On a
    CPU there is no copy and it is right, so it runs on a GPU only."""
    real = torch.arange(x.shape[1], device=x.device) < n[:, None]
    kept = torch.where(real[..., None], x, torch.zeros(()))
    return _r68b_loss(model, kept.sum(1) / n[:, None], y, bf16)


def autocast_by_position(model, x, n, y, bf16):
    """torch.autocast(device_type, dtype, enabled, cache_enabled), every argument by position.  Right."""
    pooled = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, torch.bfloat16, bf16, False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def bias_added_in_float32(model, x, n, y, bf16):
    """"Only the matrix products in bf16": each Linear's product F.linear(a, weight) under autocast, its bias added
    after it in float32 (more exact than autocast's addmm, which adds it in bf16).  Right."""
    a = x.sum(1) / n[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
                a = F.linear(a, layer.weight)
            a = a.float() + layer.bias
        else:
            a = layer(a)
    return F.cross_entropy(a, y)


def cross_entropy_with_a_detached_max(model, x, n, y, bf16):
    """The cross-entropy by hand, the stable way: the row max detached (its gradient cancels exactly), the log-sum-exp
    of the shifted logits, minus the label's logit.  Right."""
    logits = _r68b_logits(model, x.sum(1) / n[:, None], bf16).float()
    m = logits.max(1, keepdim=True).values.detach()
    lse = (logits - m).exp().sum(1).log() + m.squeeze(1)
    return (lse - logits.gather(1, y[:, None]).squeeze(1)).mean()


def stream_cached_at_the_first_call(model, x, n, y, bf16):
    """"I keep the stream my work runs on, taken at the first call, and order it both ways with whoever calls me":
    from a later caller on another stream, the work runs on the first caller's stream (the check's default stream),
    not the caller's, which exercise 2's capture on a side stream cannot hold.  Wrong; expected to FAIL on a GPU
    through the check's callers from other streams (nb08._from_other_streams).  Needs a GPU (a CUDA stream)."""
    caller = torch.cuda.current_stream(x.device)
    mine = _R68B_KEPT.setdefault("stream", caller)
    mine.wait_stream(caller)
    with torch.cuda.stream(mine):
        loss = _r68b_loss(model, x.sum(1) / n[:, None], y, bf16)
    caller.wait_stream(mine)
    loss.record_stream(caller)
    return loss


def _r68b_pooling_kernel():
    """A Triton kernel: one program per (sequence, block of features), a loop over the padded positions."""
    if "triton" not in _R68B_KEPT:
        import triton
        import triton.language as tl

        @triton.jit
        def pool(x_ptr, n_ptr, out_ptr, T, F_, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
            keep = cols < F_
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for t in range(T):
                acc += tl.load(x_ptr + row * T * F_ + t * F_ + cols, mask=keep, other=0.0)
            tl.store(out_ptr + row * F_ + cols, acc / tl.load(n_ptr + row), mask=keep)

        _R68B_KEPT["triton"] = pool
    return _R68B_KEPT["triton"]


def triton_pooling(model, x, n, y, bf16):
    """"The pooling as one Triton kernel (lecture 09), on PyTorch's current stream": the check sees no PyTorch
    operation for it but the torch.empty of its output (device=x.device); x needs no gradient, so the kernel needs no
    backward.  Right; expected to PASS on a GPU, the first compile falling in the check's first, idle call.  Needs a
    GPU (and Triton)."""
    b, t, f = x.shape
    out = torch.empty(b, f, device=x.device, dtype=torch.float32)
    block = 64
    _r68b_pooling_kernel()[(b, (f + block - 1) // block)](x.contiguous(), n, out, t, f, BLOCK=block)
    return _r68b_loss(model, out, y, bf16)


WRONG["check_fast_loss"].update({
    R68B + "bf16=True, the float32 value of a deepcopy of the model, the bf16 loss's gradient":
        float32_value_from_a_deepcopy,
    R68B + "bf16=True, the float32 value through functional_call with nn.Parameter(p.detach()), the bf16 gradient":
        float32_value_from_rebuilt_parameters,
    R68B + "bf16=True, the sums truncated to bf16's 8 significant bits by a mask on their bits":
        sums_truncated_to_bf16_by_bits,
    R68B + "bf16=True, the pooled mean rounded through float8_e4m3fn": sums_rounded_through_float8,
    R68B + "the stream taken at the first call, kept, ordered both ways with the caller's":
        stream_cached_at_the_first_call,
    R68B + "the padding zeroed by torch.where with a 0-d host tensor": padding_zeroed_by_a_0d_host_scalar,
})
ALSO_RIGHT["check_fast_loss"].update({
    R68B + "avg_pool1d over the padded length, times T/n": average_pool_rescaled,
    R68B + "the pooling in float64, then float32": pooling_in_float64,
    R68B + "torch.autocast with every argument by position": autocast_by_position,
    R68B + "each Linear's product under autocast, its bias added in float32": bias_added_in_float32,
    R68B + "the cross-entropy by hand with a detached row max": cross_entropy_with_a_detached_max,
    R68B + "the pooling as one Triton kernel on PyTorch's current stream": triton_pooling,
})
NEEDS_A_GPU["check_fast_loss"].update({
    R68B + "the stream taken at the first call, kept, ordered both ways with the caller's": (),
    R68B + "the pooling as one Triton kernel on PyTorch's current stream": ("triton",),
    R68B + "the padding zeroed by torch.where with a 0-d host tensor": (),
})
MISJUDGED_ON_A_GPU["check_fast_loss"] = {
    R68B + "bf16=True, the float32 value of a deepcopy of the model, the bf16 loss's gradient":
        "PASSed on the H200 (call BN, 2026-12-01), as predicted: the copy's Parameters are made by torch.Tensor."
        "_make_subclass, which the recorder does not see, so its float32 products carry no weight of the model "
        "(nb08.py:747-751, 773); on a CPU the copy's host tensors FAIL it with the host-tensor hint (nb08.py:673, 677)",
    R68B + "bf16=True, the float32 value through functional_call with nn.Parameter(p.detach()), the bf16 gradient":
        "PASSed on the H200 (call BN, 2026-12-01), as predicted: the new Parameters are made by torch.Tensor."
        "_make_subclass, which the recorder does not see, so their float32 products carry no weight of the model "
        "(nb08.py:747-751, 773); on a CPU their host tensors FAIL it with the host-tensor hint (nb08.py:673, 677)",
}
# A gap a CPU showed and no session has fixed yet (tests/test_exercises.py: a strict xfail on a CPU)
MISJUDGED_ON_A_CPU: dict[str, dict[str, str]] = {
    "check_fast_loss": {
        R68B + "bf16=True, the sums truncated to bf16's 8 significant bits by a mask on their bits":
            "PASSed on a CPU (adversary 113, 2026-12-01): a rounding is noted only into a dtype of NARROW "
            "(nb08.py:243; _note_rounding, nb08.py:626), and view(torch.int32), & and view(torch.float32) never "
            "make one; the truncation (at most 2u) lies within the bf16 bound of the first Linear's inputs",
    },
}


# ---------------------------------------------------------------- round 69's adversary (exercises 1 and 2)
# Eighteen answers (report adv115), sixteen to check_fast_loss and two to check_fast_step, judged on a CPU against the
# check as of d2018c8: all seven right ones PASS, and five wrong ones PASS (MISJUDGED_ON_A_CPU), in three classes no
# earlier round registered.  The check is left as it is here (a change to nb08.py stales lecture 08's stamp); the fix
# is planned for a session with GPU time, and these are the plans (each verified against nb08.py at d2018c8):
# - A, a rounding inside the backward (a bf16 saved-tensors hook; a hook rounding the logits' gradient to bf16): the
#   backward is recorded (nb08.py:1495) but only its threads, host reads, lowered precision and transfers are tested
#   (nb08.py:1502-1512); its bf16_arithmetic and cast_rounded are collected and never read, and the pack hook's cast
#   in the forward reaches nothing there (_note_rounding, nb08.py:619-631).  The gradients' tolerance, 25 % of each
#   gradient's L1 norm plus terms (nb08.py:407, 429), is ~10^3 times bf16's rounding.  Fix: test the backward's
#   recording as the forward's (not backward.bf16_arithmetic, not backward.cast_rounded), in both modes; with
#   bf16=True autocast's own bf16 backward of its products stays allowed, while a cast to bf16 of a float32 gradient
#   or of a saved float32 tensor must not be (a cast in a hook: a CASTS entry into NARROW from a float32 input while the
#   backward runs).  Or, with bf16=False, a gradient tolerance from float32's rounding (the float32 solution's error is
#   ~10^-4 of the present share on the course batch, the two answers' 2e3-2e4 times the solution's).
# - B, another computation for a caller of another kind (bf16 products under torch.no_grad(), x.mean(1) in eval mode):
#   _callers_state_kept (nb08.py:1682-1715), the only call in eval mode or under no_grad, discards the loss it gets
#   (nb08.py:1697, `_, ops = _recorded(...)`) and tests settings, modes and the caller's state only.  Fix: keep the
#   loss, compare it with loss_and_bound(model, x, n, y, bf16) (the model's value does not depend on its mode: Linear
#   and ReLU only), and apply _loss_holds's tests of `ops` there too (the bf16 product count, `wanted == 0` with
#   bf16=False; bf16_arithmetic, cast_rounded, host_reads, transfers); no gradient needed.
# - C, float16 matrix products: a product that returns float16 is counted nowhere: the bf16 count takes bfloat16 only
#   (nb08.py:758), the narrow-arithmetic branch skips every MATRIX_PRODUCTS name (nb08.py:766), and autocast casts the
#   weights inside the dispatcher, so no float32 arithmetic on them reaches wide_uses (nb08.py:769-773).  Fix: in
#   Operations.__torch_function__, note a matrix product returning a NARROW dtype other than bfloat16 (a list of its
#   own) and FAIL on it in both modes: the task asks for bf16 products with bf16=True and float32 throughout otherwise.
# Five need a GPU to run at all (NEEDS_A_GPU; the two of check_fast_step, a GPU check, run on a GPU only anyway).
# torch.mm(a16, w16, out_dtype=torch.float32) is WRONG by the task text, though not for its float32 output (the task
# asks for products "in bfloat16" and a loss within the bound; an unrounded product is nearer the exact one, as
# round 68's bias_added_in_float32 is right): "Return the loss as a float32 tensor that backward() can use", and
# aten::mm.dtype has no derivative (torchgen's derivatives.yaml names mm(Tensor self, Tensor mat2) only; backward on
# meta tensors with PyTorch 2.13 raises "derivative for aten::mm is not implemented").
R69 = "round 69's adversary: "


def saved_activations_in_bf16(model, x, n, y, bf16):
    """"Activation compression to save memory, a standard trick": every float32 tensor that autograd saves for the
    backward is packed to bf16 by torch.autograd.graph.saved_tensors_hooks, in both modes, and unpacked to its dtype.
    The forward is exact, but with bf16=False every weight's gradient comes from inputs rounded to 8 bits (L1 error of
    2.weight's gradient against float64 on the course batch 1.1e-2, the float32 solution's 6.5e-7), not "float32
    throughout"; with bf16=True a rounding outside the products.  EXPECTED: WRONG.  Seen: PASSed on a CPU
    (class A) until round 69's fix; FAILs since."""
    def pack(t):
        return (t.dtype, t.to(torch.bfloat16)) if t.dtype == torch.float32 else (t.dtype, t)

    def unpack(packed):
        dtype, t = packed
        return t.to(dtype)

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        return _loss(model, x.sum(1) / n[:, None], y, bf16)


def gradient_rounded_by_a_hook(model, x, n, y, bf16):
    """"bf16 gradients, as large-scale training uses, to halve the traffic": a hook on the float32 logits rounds their
    gradient to bf16 (g.to(torch.bfloat16).float()), in both modes: with bf16=False the whole backward starts from a
    gradient rounded to 8 bits (L1 error of 2.weight's gradient 3.7e-3, 5700 times the float32 solution's).
    EXPECTED: WRONG.  Seen: PASSed on a CPU (class A) until round 69's fix; FAILs since."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logits = logits.float()
    if logits.requires_grad:
        logits.register_hook(lambda g: g.to(torch.bfloat16).float())
    return F.cross_entropy(logits, y)


def bf16_whenever_no_gradient(model, x, n, y, bf16):
    """"Evaluation needs no float32: when nobody trains, bf16 is free speed": the products in bf16 when bf16=True or
    torch.is_grad_enabled() is False.  A caller's torch.no_grad() evaluation with bf16=False gets bf16 products (off
    the exact loss by 2.1e-5 on the course batch, the float32 solution by 8.6e-8): the task's "the slow step's loss"
    has no exception for an evaluation.  EXPECTED: WRONG.  Seen: PASSed on a CPU (class B) until round 69's fix;
    FAILs since."""
    return _loss(model, x.sum(1) / n[:, None], y, bf16 or not torch.is_grad_enabled())


def padded_mean_in_eval_mode(model, x, n, y, bf16):
    """"In eval mode the loss is only logged: the plain mean over the padded length will do": with model.training
    False it divides by the padded length, not each sequence's own (2.299418 on the course batch in eval mode, the
    exact 2.301618): the registered padded_mean's mistake, for one kind of caller.  EXPECTED: WRONG.  Seen: PASSed on
    a CPU (class B) until round 69's fix; FAILs since."""
    pooled = x.sum(1) / n[:, None] if model.training else x.mean(1)
    return _loss(model, pooled, y, bf16)


def float16_value_bf16_gradient(model, x, n, y, bf16):
    """"float16 keeps 3 more bits than bf16, so the loss I log is better; bf16 trains": with bf16=True, the value of
    the model under a float16 autocast (under no_grad), the gradient of the bf16 loss (`value + (low - low.detach())`).
    The value does not come from the bf16 products (round 68's straight_through_float32_value's class), and it runs
    matrix products in float16, which the task never asks for.  EXPECTED: WRONG.  Seen: PASSed on a CPU
    (class C) until round 69's fix; FAILs since."""
    pooled = x.sum(1) / n[:, None]
    low = _loss(model, pooled, y, bf16)
    if not bf16:
        return low
    with torch.no_grad(), torch.autocast(x.device.type, dtype=torch.float16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y) + (low - low.detach())


def float16_loss_plus_the_bf16_gradient(model, x, n, y, bf16):
    """The control of the answer above: the float16 forward kept in the graph, so that the gradient is the sum of the
    float16 run's and the bf16 run's, about twice the slow step's.  EXPECTED: WRONG.  Seen: FAILs on a CPU (the last
    bias's gradient)."""
    pooled = x.sum(1) / n[:, None]
    low = _loss(model, pooled, y, bf16)
    if not bf16:
        return low
    with torch.autocast(x.device.type, dtype=torch.float16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y) + (low - low.detach())


def lengths_floored_by_a_0d_host_tensor(model, x, n, y, bf16):
    """"Guard against an empty sequence without reading n": torch.maximum(n, torch.tensor(1.0)), a 0-d host tensor,
    the exception the task allows (TensorIterator hands it to the kernel as a number: maximum is a binary op with CPU
    scalars allowed, no copy).  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    return _loss(model, x.sum(1) / torch.maximum(n, torch.tensor(1.0))[:, None], y, bf16)


def lengths_clamped_by_a_numpy_scalar(model, x, n, y, bf16):
    """The same guard with a NumPy scalar: n.clamp(min=np.float32(1)), a Scalar argument, no tensor.  EXPECTED:
    RIGHT.  Seen: PASSes on a CPU."""
    return _loss(model, x.sum(1) / n.clamp(min=np.float32(1.0))[:, None], y, bf16)


def reciprocal_from_a_numpy_scalar(model, x, n, y, bf16):
    """The sum times np.float32(1) / n: a NumPy scalar on the left of a tensor (torch.Tensor's __array_priority__ makes
    NumPy hand the division to Tensor.__rtruediv__).  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    return _loss(model, x.sum(1) * (np.float32(1.0) / n)[:, None], y, bf16)


def autocast_dtype_by_the_flag(model, x, n, y, bf16):
    """One autocast, its dtype picked by the flag: bfloat16, or float32, which autocast refuses with a warning and
    turns itself off for (float32 throughout).  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    dtype = torch.bfloat16 if bf16 else torch.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast(x.device.type, dtype=dtype, cache_enabled=False):
            logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def asserts_lengths_asynchronously(model, x, n, y, bf16):
    """"Validate without a sync": torch._assert_async((n > 0).all()), on a GPU a device-side assert (no host read; a
    graph captures it); on a CPU its read is inside C++, as any CPU kernel's.  EXPECTED: RIGHT.  Seen: PASSes on a
    CPU."""
    torch._assert_async((n > 0).all())
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def pooled_by_an_einsum_outside_autocast(model, x, n, y, bf16):
    """The masked mean as one einsum of x with the pooling weights mask / n, outside autocast (float32), the model
    inside.  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    weights = (torch.arange(x.shape[1], device=x.device) < n[:, None]).to(x.dtype) / n[:, None]
    return _loss(model, torch.einsum("btf,bt->bf", x, weights), y, bf16)


def inplace_relu_mlp(model, x, n, y, bf16):
    """The MLP unrolled with F.relu(inplace=True) "to save memory", under autocast: ReLU's backward reads its output,
    so writing over its input is safe.  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    a = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        for layer in model:
            a = layer(a) if isinstance(layer, torch.nn.Linear) else F.relu(a, inplace=True)
    return F.cross_entropy(a.float(), y)


def mm_with_float32_output(model, x, n, y, bf16):
    """"bf16 inputs, float32 out, as the tensor cores accumulate anyway": with bf16=True each Linear as
    torch.mm(a.bfloat16(), w.bfloat16().t(), out_dtype=torch.float32) + bias, float32 products otherwise.  Submitted as
    right ("arguably").  EXPECTED: WRONG: the loss must be one "that backward() can use", and aten::mm.dtype has no
    derivative (not in derivatives.yaml; backward raises "derivative for aten::mm is not implemented"); its float32
    output alone would not make it wrong.  Predicted on a GPU: FAILs (no gradient reaches the weights; 0 products in
    bfloat16, nb08.py:758).  Needs a GPU: aten::mm.dtype has no CPU kernel."""
    a = x.sum(1) / n[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            if bf16:
                a = torch.mm(a.to(torch.bfloat16), layer.weight.to(torch.bfloat16).t(),
                             out_dtype=torch.float32) + layer.bias
            else:
                a = F.linear(a, layer.weight, layer.bias)
        else:
            a = layer(a)
    return F.cross_entropy(a, y)


def empties_the_cache(model, x, n, y, bf16):
    """"Free what the last step left, the batch is large": torch.cuda.empty_cache() at every call.  Freeing cached
    blocks (cudaFree) synchronizes the device: a host wait by an API that the check's WAITS (nb08.py:919) does not
    name.  EXPECTED: WRONG.  Predicted on a GPU: FAILs through the busy caller's test of a call that returned only once
    the caller's work ended, if the allocator holds a free block at that call (worth watching: with none, nothing
    waits).  Needs a GPU."""
    torch.cuda.empty_cache()
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def private_stream_joined_by_an_early_event(model, x, n, y, bf16):
    """The loss on a private stream that waits for the caller's; the caller's waits for an event recorded on the
    private stream right after entering it, before the work, so that the join joins nothing: the caller reads the loss
    before it is written.  EXPECTED: WRONG.  Predicted on a GPU: FAILs (the check's widened streams).  Needs a GPU."""
    caller = torch.cuda.current_stream(x.device)
    private = _private_stream(x.device)
    private.wait_stream(caller)
    with torch.cuda.stream(private):
        ready = torch.cuda.Event()
        ready.record(private)
        loss = _loss(model, x.sum(1) / n[:, None], y, bf16)
    caller.wait_event(ready)
    loss.record_stream(caller)
    return loss


def step_that_empties_the_cache(model, data):
    """The course's solution, and torch.cuda.empty_cache() after each step "to keep memory down": freeing cached
    blocks synchronizes, the host waits for the GPU at each step.  EXPECTED: WRONG.  Predicted on the H200: FAILs
    (clean: a call waits)."""
    step, losses = solution_step(model, data)

    def emptied():
        step()
        torch.cuda.empty_cache()

    return emptied, losses


def losses_as_a_list_of_views(model, data):
    """The course's solution, losses() returning a list of 0-d GPU tensors, one a step (the task allows a list), as
    list(t.clone().unbind()) of the solution's tensor: a copy on the GPU, no wait, and later steps do not write it.
    EXPECTED: RIGHT.  Predicted on the H200: PASSes."""
    step, losses = solution_step(model, data)
    return step, lambda: list(losses().clone().unbind())


WRONG["check_fast_loss"].update({
    R69 + "every saved float32 tensor packed to bf16 by saved_tensors_hooks, in both modes": saved_activations_in_bf16,
    R69 + "a hook rounds the logits' gradient to bf16, in both modes": gradient_rounded_by_a_hook,
    R69 + "bf16 products whenever grad mode is off": bf16_whenever_no_gradient,
    R69 + "x.mean(1) over the padded length in eval mode": padded_mean_in_eval_mode,
    R69 + "bf16=True, the value of a float16 autocast's forward, the bf16 loss's gradient": float16_value_bf16_gradient,
    R69 + "bf16=True, a float16 autocast's loss plus the bf16 loss's gradient (twice the gradient)":
        float16_loss_plus_the_bf16_gradient,
    R69 + "bf16=True, torch.mm(..., out_dtype=torch.float32) of bf16 inputs (no derivative)": mm_with_float32_output,
    R69 + "torch.cuda.empty_cache() at every call": empties_the_cache,
    R69 + "the loss on a private stream, joined by an event recorded before the work":
        private_stream_joined_by_an_early_event,
})
ALSO_RIGHT["check_fast_loss"].update({
    R69 + "the lengths floored by torch.maximum(n, torch.tensor(1.0)), a 0-d host tensor":
        lengths_floored_by_a_0d_host_tensor,
    R69 + "the lengths clamped by n.clamp(min=np.float32(1))": lengths_clamped_by_a_numpy_scalar,
    R69 + "the sum times np.float32(1) / n": reciprocal_from_a_numpy_scalar,
    R69 + "one autocast, dtype bfloat16 or float32 by the flag (float32 turns it off)": autocast_dtype_by_the_flag,
    R69 + "torch._assert_async((n > 0).all())": asserts_lengths_asynchronously,
    R69 + "the masked mean as one einsum outside autocast": pooled_by_an_einsum_outside_autocast,
    R69 + "the MLP unrolled with F.relu(inplace=True) under autocast": inplace_relu_mlp,
})
NEEDS_A_GPU["check_fast_loss"].update({
    R69 + "bf16=True, torch.mm(..., out_dtype=torch.float32) of bf16 inputs (no derivative)": (),
    R69 + "torch.cuda.empty_cache() at every call": (),
    R69 + "the loss on a private stream, joined by an event recorded before the work": (),
})
WRONG["check_fast_step"][R69 + "torch.cuda.empty_cache() after each step"] = step_that_empties_the_cache
ALSO_RIGHT["check_fast_step"][R69 + "losses() as list(t.clone().unbind()) of the solution's tensor"] = \
    losses_as_a_list_of_views
MISJUDGED_ON_A_GPU["check_fast_loss"][R69 + "torch.cuda.empty_cache() at every call"] = (
    "PASSed on the H200 (call BS, 2026-12-01; 26 checks): no call of it was seen to wait for the GPU there; the "
    "caching allocator's empty_cache frees only the cached blocks no tensor holds, and whether any were free at the "
    "check's calls, the run does not show")
# The five that PASSed on a CPU (classes A to C, above) FAIL since round 69's fixes: a 16-bit float anywhere in the call
# or its backward with bf16=False, float16 in either mode (`_no_16_bit_floats_but_bf16s`), and the evaluating caller's
# loss compared and its operations judged (`_callers_state_kept`).


# ---------------------------------------------------------------- round 69's second adversary (exercise 1)
# Seventeen answers to check_fast_loss (report adv117), judged against the check as of 6708174 (round 69's fix): on a
# CPU, fourteen, of which six wrong ones PASS and two right ones FAIL (MISJUDGED_ON_A_CPU), in three classes no round
# registered; three need a GPU.  The check is left as it is here (a change to nb08.py stales solutions 08's stamp, and
# no GPU time was left to restamp it); the fix is for the next session, and these are the plans (each verified against
# nb08.py at 6708174):
# - D, a rounding in the backward to a format other than bf16 and float16 (saved tensors packed to float8_e4m3fn or to
#   int8 with a scale; the logits' gradient quantized to 255 levels by float32 round()): round 69's fix flags formats,
#   not values: `_no_16_bit_floats_but_bf16s` (nb08.py:1687-1700) reads ops.narrow and ops.float16, filled only for a
#   dtype of NARROW = (bfloat16, float16) (nb08.py:185, 643-646), and float32 round() makes no narrow dtype at all.
#   What is left is the gradients' tolerance, GRADIENT_SHARE = 0.25 of each gradient's L1 norm plus terms
#   (nb08.py:371, tested at 1510-1519).  With bf16=False on COURSE_BATCH against float64 the largest relative L1 error
#   over the parameters is 2.6e-7 for the solution, 0.13 (float8), 0.24 (int8), 0.029 (the quantized gradient).  Fix:
#   with bf16=False, a tolerance for each gradient that cannot jump from float32's rounding (round 69's plan A's
#   alternative), which catches all three; a cast into any dtype narrower than float32 (float8_*, an integer dtype from
#   a float) noted as a rounding in both modes would catch the two packers, not the float32 round().
# - F, bf16=True computed otherwise for an evaluating caller (float32 products under no_grad or in eval mode; the
#   padded mean under no_grad): the mirror of round 69's class B.  `_callers_state_kept` (nb08.py:1636-1684) tests that
#   call's value (1676) and, with bf16=True, no dtype at all: `_no_16_bit_floats_but_bf16s` flags a 16-bit float only
#   with bf16=False (1694), and `_loss_holds`'s bf16 product count and weights fed (nb08.py:1469-1488) are not applied
#   there; float32 products lie within the bf16 bound.  And the call runs in one mode a case, bf16 == (seed even)
#   (nb08.py:1616): of PROBED_CASES (1872) only SMALLEST_BATCH (seed 0) and STEEP_BATCH (106) probe bf16=True, each
#   one sequence of length 1, padded to 1, no hidden layer (nb08.py:256, 264), where the padded mean is the right one.
#   Fix: with bf16=True, require there ops.bf16_products >= the Linear count and every weight among the bf16 products'
#   sources (as `_loss_holds`), and probe at least one padded batch of several lengths (COURSE_BATCH, or each case in
#   both modes) with bf16=True.
# - G, the autocast's device type spelled for the course's two devices ("cuda" if x.is_cuda else "cpu"; the same from
#   x.device.type == "cuda"): right on a CPU and on a GPU, but the meta rerun (`_elsewhere`, nb08.py:1947-1993), a GPU's
#   stand-in, reads False from a meta tensor's is_cuda and "meta" from its device.type, so the answer names "cpu" and
#   FAILs "entered an autocast for the host" (1985-1990); `_as_if_cuda` (1884) patches torch.cuda.is_available only.
#   Fix: a stand-in that says it is a GPU (in this CPU build of PyTorch 2.13, a FakeTensorMode tensor made with
#   device="cuda" reads is_cuda True and device.type "cuda"), or count an autocast for "cpu" as wrong only where the
#   answer names "cpu" whatever the batch's device (a literal), not where the name comes from the batch.
# - E (judged right, a gap to close): with bf16=True `exact_gradients` marks every parameter but the last Linear's as
#   able to jump on COURSE_BATCH (nb08.py:1511 skips them), so a wrong backward of the hidden layers (a fused bf16
#   Linear+ReLU whose backward divides by the batch again; loss scaling by 1024 below the head, never undone) FAILs
#   only on a drawn MLP where some hidden unit lies far from zero (here 6→1→3→8→3, 6→1→3→8→2 on 9 sequences: 4.bias).
#   Fix: one fixed bf16=True case with a hidden layer whose units all lie far from zero.
# Round 70 fixed D (a float32-sized gradient tolerance with bf16=False, `exact_gradients`), F (the evaluating call's
# bf16 products and weights, and that call in both modes on every probed case) and E (FAR_FROM_ZERO_BATCH); and G
# otherwise than planned: a FakeTensorMode tensor on "cuda" reads is_cuda True in this CPU build, but any indexing of
# it (n[:, None]) raises "PyTorch is not linked with support for cuda devices"; so where the meta rerun sees an
# autocast for "cpu", `_autocast_beside_a_gpus_batch` calls the answer once more with a meta batch whose is_cuda and
# device, read by the answer's own code, say "cuda" (`_ReadsAsCuda`), and stops it at its first autocast: "cuda" there
# means the "cpu" came from the batch's device.
R69B = "round 69's second adversary: "


def _loss_with_saved_tensors_scaled(model, x, n, y, bf16, peak, encode):
    """The loss with every float32 tensor autograd saves stored as encode(t / scale), scale = its largest magnitude /
    peak, and turned back into float32 times scale for the backward (the two 8-bit activation compressions below)."""
    def pack(t):
        if t.dtype != torch.float32:
            return None, t
        scale = t.detach().abs().amax().clamp(min=1e-30) / peak
        return scale, encode(t.detach() / scale)

    def unpack(packed):
        scale, t = packed
        return t if scale is None else t.to(torch.float32) * scale

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        return _loss(model, x.sum(1) / n[:, None], y, bf16)


def saved_tensors_in_float8(model, x, n, y, bf16):
    """"FP8 activation compression (torchao, COAT) saves memory": every float32 tensor autograd saves is packed by
    saved_tensors_hooks to float8_e4m3fn with a per-tensor scale (amax / 448), unpacked to float32, in both modes.  The
    forward is exact; every gradient comes from activations rounded to 3 significant bits (the largest relative L1
    error over the parameters 0.13 on the course batch with bf16=False, the solution's 2.6e-7): not the slow step's
    gradient, not float32 throughout.  Round 69's saved_activations_in_bf16 in a format that NARROW does not name.
    EXPECTED: WRONG.  Seen: PASSed on a CPU (class D); FAILs since round 70's fix (float32's gradient tolerance)."""
    return _loss_with_saved_tensors_scaled(model, x, n, y, bf16, 448.0, lambda t: t.to(torch.float8_e4m3fn))


def saved_tensors_in_int8(model, x, n, y, bf16):
    """"ActNN-style 8-bit activation compression": each saved float32 tensor quantized to int8 with a per-tensor scale
    (round(t / amax * 127)), dequantized in the backward; integer and float32 arithmetic only.  The largest relative L1
    error of a gradient on the course batch with bf16=False is 0.24, about 10^6 times the solution's.  EXPECTED: WRONG.
    Seen: PASSed on a CPU (class D); FAILs since round 70's fix."""
    return _loss_with_saved_tensors_scaled(model, x, n, y, bf16, 127.0, lambda t: torch.round(t).to(torch.int8))


def logits_gradient_quantized_to_8_bits(model, x, n, y, bf16):
    """"8-bit gradients, as distributed training compresses them": a hook on the float32 logits quantizes their
    gradient to 255 levels of its largest magnitude by float32 round(), in both modes: with bf16=False the whole
    backward starts from a gradient rounded to 8 bits (largest relative L1 error 0.029 on the course batch), and no
    narrow dtype appears.  EXPECTED: WRONG.  Seen: PASSed on a CPU (class D); FAILs since round 70's fix."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logits = logits.float()

    def compress(g):
        scale = g.abs().amax().clamp(min=1e-30) / 127.0
        return torch.round(g / scale) * scale

    if logits.requires_grad:
        logits.register_hook(compress)
    return F.cross_entropy(logits, y)


class _FusedBf16LinearRelu(torch.autograd.Function):
    """Linear and ReLU with the product in bf16, the backward written by hand "as the batch's mean gradient": the
    weight's and bias's gradients divided by the batch size, which the loss's mean already did."""

    @staticmethod
    def forward(ctx, a, w, b):
        a16, w16 = a.to(torch.bfloat16), w.to(torch.bfloat16)
        out = torch.relu(F.linear(a16, w16, b.to(torch.bfloat16)))
        ctx.save_for_backward(a16, w16, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a16, w16, out = ctx.saved_tensors
        g = g.float() * (out > 0)
        return g @ w16.float(), g.t() @ a16.float() / g.shape[0], g.sum(0) / g.shape[0]


def fused_hidden_layers_averaged_twice(model, x, n, y, bf16):
    """"One kernel less a layer": with bf16=True each hidden Linear and its ReLU run as one bf16 autograd.Function
    whose backward averages the weight's and bias's gradients over the batch a second time: every hidden layer's
    gradient is 1/B of the slow step's; the last Linear, under autocast, and the value are right.  bf16=False: the
    solution.  EXPECTED: WRONG.  Seen: FAILs on a CPU, only on a drawn MLP (6→1→3→8→3 on 9 sequences, 4.bias):
    with bf16=True the hidden layers' gradients are marked as able to jump, unchecked on the fixed cases (class E);
    since round 70, on FAR_FROM_ZERO_BATCH too."""
    if not bf16:
        return _loss(model, x.sum(1) / n[:, None], y, False)
    a, layers, i = x.sum(1) / n[:, None], list(model), 0
    while i < len(layers):
        if (isinstance(layers[i], torch.nn.Linear) and i + 1 < len(layers)
                and isinstance(layers[i + 1], torch.nn.ReLU)):
            a = _FusedBf16LinearRelu.apply(a, layers[i].weight, layers[i].bias)
            i += 2
            continue
        with torch.autocast(x.device.type, dtype=torch.bfloat16, cache_enabled=False):
            a = layers[i](a)
        i += 1
    return F.cross_entropy(a.float(), y)


class _ScaledGradient(torch.autograd.Function):
    """The identity forward; the backward multiplies the gradient by `scale` (loss scaling's first half)."""

    @staticmethod
    def forward(ctx, a, scale):
        ctx.scale = scale
        return a.view_as(a)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None


def loss_scaled_below_the_head_never_unscaled(model, x, n, y, bf16):
    """"Mixed precision needs loss scaling so that small gradients survive": with bf16=True the gradient entering the
    model's body (below the last Linear) is multiplied by 1024 and never divided back: every hidden layer's gradient is
    1024 times the slow step's; the value and the last Linear's gradients are right.  bf16=False: the solution.
    EXPECTED: WRONG.  Seen: FAILs on a CPU, only on a drawn MLP (6→1→3→8→2 on 9 sequences, 4.bias; class E); since
    round 70, on FAR_FROM_ZERO_BATCH too."""
    a, layers = x.sum(1) / n[:, None], list(model)
    linears = [k for k, m in enumerate(layers) if isinstance(m, torch.nn.Linear)]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        for k, layer in enumerate(layers):
            if bf16 and k == linears[-1] and len(linears) > 1:
                a = _ScaledGradient.apply(a, 1024.0)
            a = layer(a)
    return F.cross_entropy(a.float(), y)


def float32_for_evaluation_under_no_grad(model, x, n, y, bf16):
    """"Validation metrics in full precision, bf16 is for training speed": with bf16=True the products run in bf16
    only while grad mode is on; a caller's torch.no_grad() evaluation gets float32 products.  The task's bf16=True asks
    for the model's matrix products in bfloat16, whatever the caller's mode (round 69's bf16_whenever_no_gradient,
    mirrored).  EXPECTED: WRONG.  Seen: PASSed on a CPU (class F); FAILs since round 70's fix (the evaluating call's
    bf16 product count)."""
    return _loss(model, x.sum(1) / n[:, None], y, bf16 and torch.is_grad_enabled())


def float32_in_eval_mode(model, x, n, y, bf16):
    """The same keyed on the module's mode: bf16 products only while model.training.  EXPECTED: WRONG.  Seen: PASSed
    on a CPU (class F); FAILs since round 70's fix."""
    return _loss(model, x.sum(1) / n[:, None], y, bf16 and model.training)


def padded_mean_for_a_bf16_evaluation(model, x, n, y, bf16):
    """"The fast path under no_grad is only for logging: the plain mean over the padded length will do": with
    bf16=True and grad mode off it divides by the padded length (round 69's padded_mean_in_eval_mode, for one mode).
    EXPECTED: WRONG.  Seen: PASSed on a CPU (class F: the bf16=True probes were one sequence of length 1, unpadded);
    FAILs since round 70's fix (the evaluating call in both modes, LONG_BATCH's value)."""
    pooled = x.mean(1) if bf16 and not torch.is_grad_enabled() else x.sum(1) / n[:, None]
    return _loss(model, pooled, y, bf16)


def autocast_device_from_is_cuda(model, x, n, y, bf16):
    """The autocast's device type written "cuda" if x.is_cuda else "cpu": the batch's device, spelled for the two
    devices the course has; right on a CPU and on a GPU.  EXPECTED: RIGHT.  Seen: FAILed on a CPU until round 70
    (class G: the meta rerun's batch reads is_cuda False, and the answer's autocast for "cpu" was taken for the
    host's); PASSes since `_autocast_beside_a_gpus_batch` asks again with a batch that reads as a GPU's."""
    with torch.autocast("cuda" if x.is_cuda else "cpu", dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def autocast_device_from_device_type_compare(model, x, n, y, bf16):
    """The same as "cuda" if x.device.type == "cuda" else "cpu".  EXPECTED: RIGHT.  Seen: FAILed on a CPU until round 70
    (class G: the meta batch's device.type is "meta"); PASSes since `_autocast_beside_a_gpus_batch`."""
    kind = "cuda" if x.device.type == "cuda" else "cpu"
    with torch.autocast(kind, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def functional_call_with_bf16_parameters(model, x, n, y, bf16):
    """bf16 by hand without autocast: torch.func.functional_call of the model with its parameters cast to bf16 (a
    cast passes the gradient on) and the pooled mean cast to bf16, the logits back to float32 for the loss: autocast's
    arithmetic (a bf16 addmm, ReLU on bf16).  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    pooled = x.sum(1) / n[:, None]
    if not bf16:
        return F.cross_entropy(model(pooled), y)
    params = {name: p.to(torch.bfloat16) for name, p in model.named_parameters()}
    logits = torch.func.functional_call(model, params, (pooled.to(torch.bfloat16),))
    return F.cross_entropy(logits.float(), y)


def nll_of_log_softmax_and_masked_sum(model, x, n, y, bf16):
    """The padding masked explicitly (x times a mask from an arange on x's device and n), summed, divided by n; the
    loss as nll_loss(log_softmax(logits, 1, dtype=torch.float32)).  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    mask = (torch.arange(x.shape[1], device=x.device)[None, :] < n[:, None]).to(x.dtype)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model((x * mask[..., None]).sum(1) / n[:, None])
    return F.nll_loss(F.log_softmax(logits, 1, dtype=torch.float32), y)


def reciprocal_lengths_then_sum(model, x, n, y, bf16):
    """Each position scaled by 1/n first, then summed, (x * n.reciprocal()[:, None, None]).sum(1): another order of
    the same float32 arithmetic.  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    return _loss(model, (x * n.reciprocal()[:, None, None]).sum(1), y, bf16)


def loss_module_made_per_call(model, x, n, y, bf16):
    """nn.CrossEntropyLoss(reduction="none") made at each call, the per-sequence losses averaged by .mean().
    EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return torch.nn.CrossEntropyLoss(reduction="none")(logits.float(), y).mean()


def model_on_a_private_stream_handed_over_by_to(model, x, n, y, bf16):
    """The pooling on the caller's stream, the model and the loss on a private stream that waits for the caller's,
    and the loss "handed over" by loss.to(x.device, non_blocking=True): on the same device .to returns the tensor
    itself, so nothing joins, and the caller reads the loss before the private stream has written it.  EXPECTED: WRONG.
    Predicted on a GPU: FAILs (the callers from other streams).  Needs a GPU (a CUDA stream)."""
    caller = torch.cuda.current_stream(x.device)
    private = _private_stream(x.device)
    pooled = x.sum(1) / n[:, None]
    private.wait_stream(caller)
    with torch.cuda.stream(private):
        loss = _loss(model, pooled, y, bf16)
    return loss.to(x.device, non_blocking=True)


def whole_loss_on_a_private_stream_joined(model, x, n, y, bf16):
    """The whole loss on a private stream that waits for the caller's, the caller's waiting for it, and record_stream
    on the loss for the caller: ordered both ways, a fork and a join that a capture on the caller's stream follows
    (round 67's side_stream_with_waits, for the whole loss).  EXPECTED: RIGHT.  Predicted on a GPU: PASSes.  Needs a
    GPU (a CUDA stream)."""
    caller = torch.cuda.current_stream(x.device)
    private = _private_stream(x.device)
    private.wait_stream(caller)
    with torch.cuda.stream(private):
        loss = _loss(model, x.sum(1) / n[:, None], y, bf16)
    caller.wait_stream(private)
    loss.record_stream(caller)
    return loss


def waits_by_cupy_device_synchronize(model, x, n, y, bf16):
    """"Make sure the batch's copy has landed": cupy.cuda.Device().synchronize() at each call, a host wait for the
    whole device by a library whose API the check's WAITS (nb08.py:872) do not name; exercise 2's capture cannot
    hold it.  EXPECTED: WRONG.  Predicted on a GPU: FAILs through the busy caller's test (nb08.py's `blocked`); a
    PASS would show that test blind to another library's device-wide wait.  Needs a GPU and CuPy."""
    import cupy as cp

    cp.cuda.Device(x.device.index or 0).synchronize()
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


WRONG["check_fast_loss"].update({
    R69B + "every saved float32 tensor packed to float8_e4m3fn with a scale, in both modes": saved_tensors_in_float8,
    R69B + "every saved float32 tensor quantized to int8 with a scale, in both modes": saved_tensors_in_int8,
    R69B + "a hook quantizes the logits' gradient to 255 levels by float32 round(), in both modes":
        logits_gradient_quantized_to_8_bits,
    R69B + "bf16=True, a fused Linear+ReLU Function whose backward divides by the batch again":
        fused_hidden_layers_averaged_twice,
    R69B + "bf16=True, the body's gradient scaled by 1024 below the last Linear, never unscaled":
        loss_scaled_below_the_head_never_unscaled,
    R69B + "bf16=True, float32 products under torch.no_grad()": float32_for_evaluation_under_no_grad,
    R69B + "bf16=True, float32 products in eval mode": float32_in_eval_mode,
    R69B + "bf16=True, x.mean(1) over the padded length under torch.no_grad()": padded_mean_for_a_bf16_evaluation,
    R69B + "the model on a private stream, the loss handed back by .to(x.device, non_blocking=True), no join":
        model_on_a_private_stream_handed_over_by_to,
    R69B + "cupy.cuda.Device().synchronize() at every call": waits_by_cupy_device_synchronize,
})
ALSO_RIGHT["check_fast_loss"].update({
    R69B + "autocast's device type \"cuda\" if x.is_cuda else \"cpu\"": autocast_device_from_is_cuda,
    R69B + "autocast's device type \"cuda\" if x.device.type == \"cuda\" else \"cpu\"":
        autocast_device_from_device_type_compare,
    R69B + "bf16=True by functional_call with the parameters and the pooled mean cast to bf16":
        functional_call_with_bf16_parameters,
    R69B + "the padding masked by an arange, nll_loss of log_softmax(dtype=torch.float32)":
        nll_of_log_softmax_and_masked_sum,
    R69B + "each position times 1/n, then the sum": reciprocal_lengths_then_sum,
    R69B + "nn.CrossEntropyLoss(reduction='none') made at each call, then .mean()": loss_module_made_per_call,
    R69B + "the whole loss on a private stream, waits both ways and record_stream":
        whole_loss_on_a_private_stream_joined,
})
NEEDS_A_GPU["check_fast_loss"].update({
    R69B + "the model on a private stream, the loss handed back by .to(x.device, non_blocking=True), no join": (),
    R69B + "cupy.cuda.Device().synchronize() at every call": ("cupy",),
    R69B + "the whole loss on a private stream, waits both ways and record_stream": (),
})


# ---------------------------------------------------------------- round 70's adversary (exercises 1 and 2)
# Fourteen answers (report adv119), thirteen to check_fast_loss and one to check_fast_step, judged on a CPU against the
# check as of 42d07d9 (round 70's fixes): ten on a CPU, of which three wrong ones PASSed, in two classes:
# - H, the work hidden inside TorchScript (@torch.jit.script): a TorchScript function's operations run in its
#   interpreter, which no TorchFunctionMode sees; `_Beneath` (a TorchDispatchMode) noted only their names and shapes.
#   A division in bf16 and a mask made on the host and copied to the batch's device at every call PASSed.
# - I, the weights' identity lost through an operation of several tensors: `_behind` passed a cast's or view's sources
#   on only for an operation of one tensor, and torch.nn.utils.parameters_to_vector (torch.cat of the weights' views)
#   made a vector behind which no weight stood: float32 products on its slices were no weight's.
# Round 70's second fix: outside the functions the recorder sees (and outside the backward), `_Beneath` judges each
# narrow result as `Operations` does (bf16 arithmetic unless a cast, a view, a matrix product, or exact by value) and
# notes a copy of a tensor on the host to another device; the meta rerun (`_elsewhere`) notes a copy from the host to
# the meta device (`_KeptWhereTheBatchIs`); and an operation of EXACT_IN_BF16 or UPCASTS of several tensors passes on
# the sources of them all.
R70 = "round 70's adversary: "


@torch.jit.script
def _r70_scripted_mean_bf16(x: torch.Tensor, n: torch.Tensor, half: bool) -> torch.Tensor:
    s = x.sum(1)
    if half:  # "the model runs in bf16 anyway: divide there, half the traffic"
        return (s.to(torch.bfloat16) / n.to(torch.bfloat16)[:, None]).float()
    return s / n[:, None]


def scripted_division_in_bf16(model, x, n, y, bf16):
    """"TorchScript fuses the pooling (notebook 07); with bf16=True I divide in bf16, the model rounds its input to bf16
    anyway": the pooled mean divided in bf16 inside a @torch.jit.script helper.  The task: with bf16=True only the
    matrix products in bf16, everything else as with bf16=False; this is the registered `divides_in_bf16` inside
    TorchScript, whose interpreter runs aten operations that the TorchFunctionMode never sees; its rounding (at most
    4.5e-3 on the course batch's pooled mean) lies within the bf16 loss bound.  EXPECTED: WRONG.  Seen: PASSed on a CPU
    (class H); FAILs since round 70's second fix (`_Beneath` judges a bf16 result outside the functions seen)."""
    return _loss(model, _r70_scripted_mean_bf16(x, n, bool(bf16)), y, bf16)


@torch.jit.script
def _r70_scripted_head(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits, y).float()  # log_softmax keeps its input's dtype: bf16 with bf16 logits


def scripted_cross_entropy_in_bf16(model, x, n, y, bf16):
    """"A scripted loss head": with bf16=True the cross-entropy of the bf16 logits runs in bf16 inside TorchScript (the
    registered `loss_in_bf16`, scripted).  EXPECTED: WRONG.  Seen: FAILed on a CPU by its value only (off 1.2e-3, the
    bound 5.5e-5); since round 70's second fix, as bf16 arithmetic too."""
    pooled = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return _r70_scripted_head(logits, y) if bf16 else F.cross_entropy(logits, y)


@torch.jit.script
def _r70_scripted_real_positions(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    positions = torch.arange(x.size(1)).to(x.device)  # made on the host, copied where the batch is, every call
    real = (positions[None, :] < n[:, None]).to(x.dtype)
    return (x * real[:, :, None]).sum(1) / n[:, None]


def scripted_mask_copied_from_the_host(model, x, n, y, bf16):
    """"The masked mean, scripted": the positions made by torch.arange without device= (on the host) and copied by
    .to(x.device) at every call, inside TorchScript: the registered `host_made_mask` (on a GPU a copy from the host at
    every call, which a CUDA graph's capture refuses), its operations unseen by the TorchFunctionMode.  On a CPU the
    .to(x.device) copies nothing.  EXPECTED: WRONG.  Seen: PASSed on a CPU (class H); FAILs since round 70's second
    fix (the meta rerun notes a copy from the host to the meta device; on a GPU `_Beneath` notes the copy itself)."""
    return _loss(model, _r70_scripted_real_positions(x, n), y, bf16)


def _r70_mlp_from_vector(model, vec, a):
    """The model's Linear layers run in float32 from slices of one flat vector of its parameters (their order)."""
    at = 0
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            w = vec[at:at + layer.weight.numel()].view_as(layer.weight)
            at += layer.weight.numel()
            b = vec[at:at + layer.bias.numel()]
            at += layer.bias.numel()
            a = F.linear(a, w, b)
        else:
            a = layer(a)
    return a


def float32_value_via_parameters_to_vector(model, x, n, y, bf16):
    """"bf16 trains, but the loss I log should be exact": with bf16=True the bf16 loss's gradient and the value of a
    float32 forward, the weights flattened by torch.nn.utils.parameters_to_vector (torch.cat of their views), returned
    as loss16 + (loss32 - loss16).detach().  Round 68's second adversary's straight-through class (the value not the
    bf16 products'), the weights' identity lost through an operation of several tensors that the recorder sees.
    EXPECTED: WRONG.  Seen: PASSed on a CPU (class I: 2.3016181 returned on the course batch, float32's 2.3016181,
    bf16's 2.3016388); FAILs since round 70's second fix (cat passes on the sources of all its tensors)."""
    pooled = x.sum(1) / n[:, None]
    loss16 = _loss(model, pooled, y, bf16)
    if not bf16:
        return loss16
    with torch.no_grad():
        vec = torch.nn.utils.parameters_to_vector(model.parameters())
        loss32 = F.cross_entropy(_r70_mlp_from_vector(model, vec, pooled), y)
    return loss16 + (loss32 - loss16).detach()


def float32_value_via_stacked_weights(model, x, n, y, bf16):
    """The same straight-through value, each weight taken through torch.stack([p])[0] ("a batched copy"): one tensor,
    whose sources `_behind` passed on already.  EXPECTED: WRONG.  Seen: FAILs on a CPU ("float32 arithmetic on the
    model's 0.weight")."""
    pooled = x.sum(1) / n[:, None]
    loss16 = _loss(model, pooled, y, bf16)
    if not bf16:
        return loss16
    with torch.no_grad():
        a = pooled
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                a = F.linear(a, torch.stack([layer.weight])[0], torch.stack([layer.bias])[0])
            else:
                a = layer(a)
        loss32 = F.cross_entropy(a, y)
    return loss16 + (loss32 - loss16).detach()


_R70_W16: dict = {}


def _r70_w16(p):
    hit = _R70_W16.get(id(p))
    if hit is None or hit[0]() is not p or hit[1] != p._version:
        hit = _R70_W16[id(p)] = (weakref.ref(p), p._version, p.to(torch.bfloat16))
    return hit[2]


def bf16_weights_cached_by_version(model, x, n, y, bf16):
    """"Autocast's cache is unsafe because it never checks the weights; mine does, by the version counter": bf16 copies
    of the weights kept per parameter and remade when p._version changes.  The work that a call skips because an
    earlier one kept its result: exercise 2 captures right after a warm-up with no step between, so the graph holds no
    cast, and every replay reads the bf16 weights of before the capture (the task's own reason for
    cache_enabled=False; the registered `pooled_cached_by_version`, for the weights).  EXPECTED: WRONG.  Seen: FAILed
    on a CPU, the evaluating call's products made from copies of an earlier call, with a hint about the caller's mode;
    since round 70's second fix the hint names the copies kept from an earlier call."""
    a = x.sum(1) / n[:, None]
    if not bf16:
        return F.cross_entropy(model(a), y)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            a = F.linear(a.to(torch.bfloat16), _r70_w16(layer.weight), _r70_w16(layer.bias))
        else:
            a = layer(a)
    return F.cross_entropy(a.float(), y)


def scatter_add_pooling(model, x, n, y, bf16):
    """Another algorithm: each position's row added into its sequence's by index_add_ (a scatter), the index made with
    device=x.device.  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    b, t, f = x.shape
    seq = torch.arange(b, device=x.device).repeat_interleave(t)
    pooled = torch.zeros(b, f, device=x.device, dtype=x.dtype).index_add_(0, seq, x.reshape(b * t, f))
    return _loss(model, pooled / n[:, None], y, bf16)


def embedding_bag_pooling(model, x, n, y, bf16):
    """Another library routine: F.embedding_bag in "sum" mode over the padded positions (the bags are the sequences),
    divided by n.  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    b, t, f = x.shape
    idx = torch.arange(b * t, device=x.device)
    offsets = torch.arange(0, b * t, t, device=x.device)
    pooled = F.embedding_bag(idx, x.reshape(b * t, f), offsets, mode="sum")
    return _loss(model, pooled / n[:, None], y, bf16)


def sum_by_a_ones_vector_product(model, x, n, y, bf16):
    """The sum over positions as a float32 product with a vector of ones, outside autocast: x.transpose(1, 2) @ ones.
    EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    ones = x.new_ones(x.shape[1])
    return _loss(model, (x.transpose(1, 2) @ ones) / n[:, None], y, bf16)


_R70_COMPILED: dict = {}


def compiled_whole_loss(model, x, n, y, bf16):
    """Lecture 07's torch.compile on the whole loss (pooling, autocast model, cross-entropy), dynamic=True: one
    compiled function.  EXPECTED: RIGHT.  Seen: PASSes on a CPU."""
    fn = _R70_COMPILED.get("f")
    if fn is None:
        def whole(model, x, n, y, bf16: bool):
            pooled = x.sum(1) / n[:, None]
            with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
                logits = model(pooled)
            return F.cross_entropy(logits.float(), y)
        fn = _R70_COMPILED["f"] = torch.compile(whole, dynamic=True)
    return fn(model, x, n, y, bf16)


def step_with_scripted_bf16_division(model, data):
    """The course's solution step (`solution_step`: a graph, staged prefetch) whose fast_loss is
    `scripted_division_in_bf16` (the pooled mean divided in bf16 inside TorchScript) while make_fast_step runs (warm-up
    and capture: the graph holds it).  EXPECTED: WRONG (bf16 arithmetic outside the products).  Predicted on a GPU
    (adversary 119): PASSes, check_fast_step judging the losses and updates only within 8x/4x eager bf16's gap, and a
    division in bf16 moves the pooled mean by about 2^-9 relative: exercise 2's check leans on exercise 1's for the
    precision rule.  It did PASS there (call BX); `_StepArithmetic` now judges the step's formats."""
    global fast_loss
    saved = fast_loss
    fast_loss = scripted_division_in_bf16
    try:
        return solution_step(model, data)
    finally:
        fast_loss = saved


WRONG["check_fast_loss"].update({
    R70 + "bf16=True, the pooled mean divided in bf16 inside @torch.jit.script": scripted_division_in_bf16,
    R70 + "bf16=True, the cross-entropy of the bf16 logits inside @torch.jit.script": scripted_cross_entropy_in_bf16,
    R70 + "positions by torch.arange on the host, .to(x.device) inside @torch.jit.script":
        scripted_mask_copied_from_the_host,
    R70 + "bf16=True, the float32 value through parameters_to_vector, the bf16 loss's gradient":
        float32_value_via_parameters_to_vector,
    R70 + "bf16=True, the float32 value through torch.stack([p])[0], the bf16 loss's gradient":
        float32_value_via_stacked_weights,
    R70 + "bf16 copies of the weights kept until a weight's version counter changes": bf16_weights_cached_by_version,
})
ALSO_RIGHT["check_fast_loss"].update({
    R70 + "the pooling by index_add_ with an index made on x's device": scatter_add_pooling,
    R70 + "the pooling by F.embedding_bag(mode='sum')": embedding_bag_pooling,
    R70 + "the sum over positions as a float32 product with a vector of ones": sum_by_a_ones_vector_product,
    R70 + "torch.compile(dynamic=True) of the whole loss": compiled_whole_loss,
})
WRONG["check_fast_step"][R70 + "the solution's step with the pooled mean divided in bf16 inside TorchScript"] = \
    step_with_scripted_bf16_division
# It PASSed on the H200 (call BX, 2026-12-02; 16 checks, 11.2x faster than the slow step): check_fast_step judged the
# step's values within its tolerances, and the bf16 division (off by up to 4.5e-3 of the pooled mean, adversary 119)
# lay within them.  Since then the check's last run applies exercise 1's rule for formats to the step
# (`_StepArithmetic`), and it FAILs there.


# ---------------------------------------------------------------- round 71's adversary (exercise 1)
# Fifteen answers (report adv120) to check_fast_loss, judged against the check as of 7cc6a8d: twelve on a CPU, of which
# one wrong answer PASSed and two right ones FAILed, in two classes:
# - J, a kept buffer that survives one more call: the pooled mean written into two buffers kept per shape, in turn,
#   PASSed; the check held two losses before the first one's backward (a caller holding three gets an error from it).
#   The check now makes a third loss of the same shapes before that backward.
# - K, harmless conversions counted as work: model.to(x.device) and model.float() convert each parameter's .grad as
#   well (the check gives the caller's model gradients to add to), and the wider and larger models that the check
#   compares operation counts with had new layers without .grad: 16 operations more on the caller's model, FAILed as a
#   loop.  Their parameters now hold a .grad too.
# Three need a GPU (two wrong: the loss forced onto the default stream, with and without waits; one right, CuPy on
# PyTorch's current stream, registered already as round 68's).
R71 = "round 71's adversary: "
_R71_RINGS: dict = {}


def pooled_mean_in_two_buffers(model, x, n, y, bf16):
    """Wrong: "a graph wants static buffers, and the caller may keep the previous loss while it makes the next, so two
    buffers per shape, used in turn".  The first Linear saves its input, the buffer, for its weight's gradient: the
    third call overwrites the first call's, and that loss's backward() raises (one-buffer version: round 21's).
    EXPECTED: WRONG (FAILs since round 71: the check holds three losses before a backward)."""
    key = (tuple(x.shape), x.device)
    ring = _R71_RINGS.get(key)
    if ring is None:
        ring = _R71_RINGS[key] = [[x.new_empty(x.shape[0], x.shape[2]) for _ in range(2)], 0]
    buffers, turn = ring
    ring[1] = 1 - turn
    pooled = torch.sum(x, 1, out=buffers[turn])
    pooled.div_(n[:, None])
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def model_and_batch_moved_where_the_batch_is(model, x, n, y, bf16):
    """Right: "make sure everything is where the batch is, in float32": model.to(x.device), x.float(), n.to(x),
    y.to(x.device), each returning what it was given here (a module's .to converts each parameter's .grad too).
    EXPECTED: RIGHT (FAILed as a loop until round 71: the compared models' new layers had no .grad)."""
    model = model.to(x.device)
    x, n, y = x.float(), n.to(x), y.to(x.device)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def model_float_first(model, x, n, y, bf16):
    """Right: model.float() "in case a caller gave a half model", which changes nothing on a float32 model.
    EXPECTED: RIGHT (FAILed as a loop until round 71, as the one above)."""
    model.float()
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def loss_on_the_default_stream_joined(model, x, n, y, bf16):
    """Wrong: "side streams are risky: everything on the default stream, with waits both ways".  Right values, but not
    on the caller's current stream, where exercise 2 captures it: from a side-stream caller, work on another stream.
    EXPECTED: WRONG (GPU only)."""
    caller, main = torch.cuda.current_stream(x.device), torch.cuda.default_stream(x.device)
    main.wait_stream(caller)
    with torch.cuda.stream(main):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            logits = model(x.sum(1) / n[:, None])
        loss = F.cross_entropy(logits.float(), y)
    caller.wait_stream(main)
    return loss


def loss_on_the_default_stream(model, x, n, y, bf16):
    """Wrong: the same on the default stream, no wait: from a side-stream caller still writing x, n and y, the loss
    reads them before the write.  EXPECTED: WRONG (GPU only)."""
    with torch.cuda.stream(torch.cuda.default_stream(x.device)):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            logits = model(x.sum(1) / n[:, None])
        return F.cross_entropy(logits.float(), y)


WRONG["check_fast_loss"].update({
    R71 + "the pooled mean in two buffers kept per shape, used in turn": pooled_mean_in_two_buffers,
    R71 + "the whole loss on the default stream, waits both ways": loss_on_the_default_stream_joined,
    R71 + "the whole loss on the default stream, no wait": loss_on_the_default_stream,
})
ALSO_RIGHT["check_fast_loss"].update({
    R71 + "model.to(x.device), x.float(), n.to(x), y.to(x.device) first": model_and_batch_moved_where_the_batch_is,
    R71 + "model.float() first": model_float_first,
})
NEEDS_A_GPU["check_fast_loss"].update({
    R71 + "the whole loss on the default stream, waits both ways": (),
    R71 + "the whole loss on the default stream, no wait": (),
})


# ---------------------------------------------------------------- round 71's second adversary (exercise 1)
# Thirteen answers (report adv122) to check_fast_loss, judged against the check as of 84ec37c: nine on a CPU, of which
# four right ones FAILed and three wrong ones PASSed, in two classes:
# - G2, the autocast's device type read from another input than x (n.is_cuda, the first weight's is_cuda,
#   y.device.type, torch.accelerator.current_accelerator()): told they "entered an autocast for the host", the probe
#   beside a GPU's batch making x alone read as "cuda" and faking torch.cuda.is_available only.  The probe now makes
#   every tensor read as on the GPU to the answer's code, and fakes torch.accelerator's functions too (`_device_reads`).
# - L, the host's right code and a known mistake under `if x.is_cuda`: a CPU ran the host's path only and said PASS.
#   Where the answer reads where its inputs are, or asks for a GPU, during its call on the host, the check now runs it
#   once more to its end with every input reading as on a GPU (`_gpu_branch`, on the meta device) and judges the host
#   reads, copies from the host and 16-bit arithmetic it records; where that path runs other operations than the
#   host's, a CPU says PART (its values need a GPU).
# And a GPU gap: a @torch.jit.script function called a few times before the check may run fused on a GPU, unseen by
# the recorder; every recorded call now runs TorchScript unoptimized, its plans made before the check flushed.
R71B = "round 71's second adversary: "


def _r71b_tail(model, pooled, y, bf16, device_type):
    """The solution's tail with the autocast's device type given."""
    with torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def autocast_device_from_torch_accelerator(model, x, n, y, bf16):
    """Right: "torch.accelerator is the device-generic API: the autocast's device is the machine's accelerator, or the
    host where there is none"; the notebook puts the batch on the GPU whenever there is one, so this names the batch's
    device on both of the course's machines.  EXPECTED: RIGHT (FAILed on a CPU until round 71: the probe beside a
    GPU's batch faked torch.cuda.is_available only)."""
    acc = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, acc.type if acc is not None else "cpu")


def autocast_device_from_the_lengths(model, x, n, y, bf16):
    """Right: "cuda" if n.is_cuda else "cpu" (n is on the batch's device by the task): round 69's second adversary's
    `autocast_device_from_is_cuda` with n for x.  EXPECTED: RIGHT (FAILed on a CPU until round 71: only x read as a
    GPU's in the probe)."""
    return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, "cuda" if n.is_cuda else "cpu")


def autocast_device_from_the_weights(model, x, n, y, bf16):
    """Right: "autocast casts the weights, so name the weights' device": "cuda" if the first parameter is_cuda else
    "cpu" (the model is where the batch is).  EXPECTED: RIGHT (FAILed on a CPU until round 71, as the one above)."""
    on_gpu = next(model.parameters()).is_cuda
    return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, "cuda" if on_gpu else "cpu")


def autocast_device_from_the_labels_type(model, x, n, y, bf16):
    """Right: the same from y.device.type == "cuda" (the labels are on the batch's device).  EXPECTED: RIGHT (FAILed on
    a CPU until round 71, as the one above)."""
    return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, "cuda" if y.device.type == "cuda" else "cpu")


def trims_the_padding_on_the_gpu_only(model, x, n, y, bf16):
    """Wrong: "on a CPU the padding is cheap; on the GPU I cut the batch to its longest sequence": the slow step's own
    host read (int(n.max())) and a shape from the data, behind `if x.is_cuda` (`host_truncated` on the GPU's path).
    EXPECTED: WRONG (PASSed on a CPU until round 71; now the run beside a GPU's batch reads n.max() on the host)."""
    return _padding_trimmed_if(x.is_cuda, model, x, n, y, bf16)


def _padding_trimmed_if(on_a_gpu, model, x, n, y, bf16):
    """The pooled loss, the padding first cut at int(n.max()) where `on_a_gpu` (the answer's own test) says so."""
    if on_a_gpu:
        x = x[:, :int(n.max())]
    return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, x.device.type)


def pools_by_a_bmm_on_the_gpu_only(model, x, n, y, bf16):
    """Wrong: "on the GPU the masked mean is fastest as one batched product on the tensor cores, inside the autocast
    with the model": with bf16=True the GPU's pooling rounds every token to bf16 (`bf16_pooling_product` on the GPU's
    path only).  EXPECTED: WRONG on a GPU (by the value, as `bf16_pooling_product`); on a CPU, PART since round 71
    (PASS before): the meta device shows other operations beside a GPU's batch, but no value."""
    if x.device.type != "cuda":
        return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, x.device.type)
    weights = (torch.arange(x.shape[1], device=x.device) < n[:, None]) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(torch.bmm(weights[:, None, :], x).squeeze(1))
    return F.cross_entropy(logits.float(), y)


def positions_from_a_list_on_the_gpu_only(model, x, n, y, bf16):
    """Wrong: "CUDA kernels like an explicit mask": on the GPU only, the mask's positions made from a Python list with
    device=x.device, made on the host and copied at every call (`positions_from_a_list` on the GPU's path).
    EXPECTED: WRONG (PASSed on a CPU until round 71; now the run beside a GPU's batch sees the copy)."""
    if not x.is_cuda:
        return _r71b_tail(model, x.sum(1) / n[:, None], y, bf16, x.device.type)
    positions = torch.tensor(list(range(x.shape[1])), device=x.device)
    real = (positions < n[:, None]).to(x.dtype)
    return _r71b_tail(model, (x * real[..., None]).sum(1) / n[:, None], y, bf16, x.device.type)


def nll_picked_by_a_range(model, x, n, y, bf16):
    """Wrong: the cross-entropy by hand, log_softmax(...)[range(B), y]: the index range(B) is Python data, made on the
    host and copied to the batch's device at every call.  EXPECTED: WRONG (a control: FAILed before round 71 too)."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logp = F.log_softmax(logits.float(), dim=1)
    return -logp[range(x.shape[0]), y].mean()


def logsumexp_minus_picked_logit(model, x, n, y, bf16):
    """Right: the cross-entropy as logsumexp(logits) - the label's logit (gather), averaged, in float32.
    EXPECTED: RIGHT (a control: PASSed before round 71 too)."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logits = logits.float()
    return (torch.logsumexp(logits, 1) - logits.gather(1, y[:, None]).squeeze(1)).mean()


@torch.jit.script
def _r71b_scripted_mean(x: torch.Tensor, n: torch.Tensor, half: bool) -> torch.Tensor:
    s = x.sum(1)
    if half:
        return (s.to(torch.bfloat16) / n.to(torch.bfloat16)[:, None]).float()
    return s / n[:, None]


_R71B_WARMED: list = []


def scripted_bf16_division_tried_first(model, x, n, y, bf16):
    """Wrong: round 70's `scripted_division_in_bf16`, by a student who tried the scripted function in a cell of their
    own first (here: at its first call, on five shapes, both modes, before anything is recorded): on a GPU,
    TorchScript's profiling executor fuses the elementwise tail after its profiled runs, into kernels no dispatch mode
    sees.  EXPECTED: WRONG (on a CPU the bf16 division is seen beneath; on a GPU since round 71 every recorded call
    runs TorchScript unoptimized, the plans made before the check flushed)."""
    if not _R71B_WARMED:
        _R71B_WARMED.append(True)
        if x.is_cuda:
            with torch._C.DisableTorchFunction():
                for b, t, f in ((3, 5, 2), (7, 9, 4), (2, 11, 3), (5, 4, 6), (4, 6, 5)):
                    for _ in range(4):
                        _r71b_scripted_mean(torch.randn(b, t, f, device=x.device), torch.ones(b, device=x.device),
                                            True)
                        _r71b_scripted_mean(torch.randn(b, t, f, device=x.device), torch.ones(b, device=x.device),
                                            False)
    return _r71b_tail(model, _r71b_scripted_mean(x, n, bool(bf16)), y, bf16, x.device.type)


WRONG["check_fast_loss"].update({
    R71B + "the padding trimmed by int(n.max()) under `if x.is_cuda`": trims_the_padding_on_the_gpu_only,
    R71B + "the pooling as a bmm inside the autocast under `if x.device.type == 'cuda'`":
        pools_by_a_bmm_on_the_gpu_only,
    R71B + "positions from a Python list under `if x.is_cuda`": positions_from_a_list_on_the_gpu_only,
    R71B + "log_softmax(...)[range(B), y]": nll_picked_by_a_range,
    R71B + "a scripted bf16 division called on other shapes before the check": scripted_bf16_division_tried_first,
})
ALSO_RIGHT["check_fast_loss"].update({
    R71B + "the autocast's device from torch.accelerator": autocast_device_from_torch_accelerator,
    R71B + "the autocast's device from n.is_cuda": autocast_device_from_the_lengths,
    R71B + "the autocast's device from the first weight's is_cuda": autocast_device_from_the_weights,
    R71B + "the autocast's device from y.device.type": autocast_device_from_the_labels_type,
    R71B + "the cross-entropy as logsumexp minus the label's logit": logsumexp_minus_picked_logit,
})
NEEDS_A_GPU["check_fast_loss"].update({
    # on a CPU: PART (the GPU's path runs other operations, its values need a GPU)
    R71B + "the pooling as a bmm inside the autocast under `if x.device.type == 'cuda'`": (),
})


# Round 71's second fix runs every recorded call of check_fast_loss with TorchScript's plans flushed and unoptimized
# (torch.jit.optimized_execution(False)), so that a scripted function warmed up before the check cannot hide its
# operators in a fused kernel on a GPU (its answer above FAILs there, call CC).  In the same call the right
# `torchscript_mean` FAILed on the H200 (2026-12-02, call CC): "+9 operations for 512 more sequences", on a case whose
# batch grows from 64 to 576 sequences; on a CPU it PASSes.  Which operators the unoptimized plan added for the larger
# batch was not read (no device time was left in that session): a GPU run with the check's operation lists printed
# for this case settles it.  Round 72 (fix08v), the likely cause, shown on a CPU with TorchScript's fuser forced on
# (/work/rev72/ts_probe.py --fuse-on-cpu): once calls made with TorchScript optimized have left an optimized plan, the
# function runs it even under optimized_execution(False): one fused kernel for the shapes it was made for (unseen),
# its fallback (the operators one by one) for 576 sequences: +7 operations there.  On the H200, `_from_other_streams`
# calls the answer directly (outside `_recorded`), after COURSE_BATCH's bf16=True pass (its seed is odd: bf16=False
# second).  check_fast_loss now runs TorchScript unoptimized throughout (`_scripts_unoptimized`).  On the H200
# (2026-12-02, after round 72's fix08v) it PASSes, its strict xfail XPASSed, and the probe confirmed the cause: the
# old check's +9 operations were `__get__` x7, aten.unsqueeze and aten.div on the 576-sequence batch (the plan made
# optimized by the earlier direct calls), and with everything inside `_scripts_unoptimized` the names are the same.
# Its MISJUDGED_ON_A_GPU entry is removed.


# ---------------------------------------------------------------- round 71's last adversary (exercise 1)
# adv124, against every fix above: 21 answers, 17 on the CPU, three wrong ones PASSed, one class: an answer that
# branches on the batch's size is judged for its values and formats only on the case's own batch (at most 64
# sequences and 72 positions); the grown batches (512 more sequences, more padding, more features) are compared by
# their operations' names only, and `_later_clean` applied neither the "bf16 products only when bf16=True" rule nor
# the float16 one to them.  Fixed in round 72 (fix08v): `_later_clean` judges every later recording (the grown ones
# too) by the first call's format rules, and FAR_PADDED_BATCH (2 sequences padded to 300 positions) is judged for its
# value: all three FAIL on a CPU (the first two on the grown batch, the cap by the value).
R71C = "round 71's last adversary: "


def autocast_on_for_large_batches(model, x, n, y, bf16):
    """Wrong: "autocast pays off on a GPU's batch, not on toy ones": autocast on when bf16=True or when the batch has
    256 sequences or more, so with bf16=False the products of a large batch run in bf16.  EXPECTED: WRONG."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16 or x.shape[0] >= 256, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def float16_products_for_large_batches(model, x, n, y, bf16):
    """Wrong: "float16 keeps more mantissa bits than bf16": with bf16=True, autocast to float16 on batches of 256
    sequences or more, bf16 below.  EXPECTED: WRONG."""
    wide = x.shape[0] >= 256
    with torch.autocast(x.device.type, dtype=torch.float16 if wide else torch.bfloat16, enabled=bf16,
                        cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def positions_capped_at_128(model, x, n, y, bf16):
    """Wrong: "a static shape, as a graph wants": x[:, :128], twice the course's padding "for safety"; positions past
    128 are dropped (the registered cap at 64 FAILs on a fixed case of 72 positions; 128 lies past every padded
    length judged by value).  EXPECTED: WRONG."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x[:, :128].sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


WRONG["check_fast_loss"].update({
    R71C + "autocast on for batches of 256 sequences or more, bf16=False too": autocast_on_for_large_batches,
    R71C + "float16 products for batches of 256 sequences or more": float16_products_for_large_batches,
    R71C + "positions capped at 128": positions_capped_at_128,
})


# ...and its four answers to check_fast_step (report adv124), run on the H200 (PyTorch 2.11, 2026-12-02): the rings of
# 48 and 41 losses FAIL (the first run is continued to LONG_RUN_STEPS steps and losses() read again: "the caller went
# on stepping after the run"), and the cap at 128 PASSes (right for exercise 2: the course's 64 positions lie under it).
# The solution's step with float16 products for large batches PASSed ("18 checks passed"): `_StepArithmetic` exempted
# the matrix products, and the casts and ReLU, whatever their format.  Since round 72 (fix08x) it notes every operator
# that takes or returns a float16, anywhere in its run (the products, the backward and a capture included): expected
# to FAIL there (on a CPU, tests/test_exercises_08.py shows it under the mode and in the imitated whole check).
def _solution_step_with_loss(loss, model, data):
    """The course's solution step (`solution_step`: a graph, staged prefetch) whose fast_loss is `loss` while
    make_fast_step runs (its warm-up and capture: the graph holds it)."""
    global fast_loss
    saved = fast_loss
    fast_loss = loss
    try:
        return solution_step(model, data)
    finally:
        fast_loss = saved


def step_with_float16_products_for_large_batches(model, data):
    """Wrong: the solution's step whose loss is `float16_products_for_large_batches`: on the GPU's 512-sequence
    batches every matrix product runs in float16, not bf16 (exercise 1's rule: float16 nowhere).  EXPECTED: WRONG.
    PASSed on the H200 (2026-12-02) before round 72's fix08x."""
    return _solution_step_with_loss(float16_products_for_large_batches, model, data)


def step_with_positions_capped_at_128(model, data):
    """Right for exercise 2: the solution's step whose loss caps the positions at 128 (`positions_capped_at_128`,
    exercise 1's fault for paddings past 128): the course's 64 positions lie under the cap.  EXPECTED: RIGHT.
    PASSes on the H200 (2026-12-02)."""
    return _solution_step_with_loss(positions_capped_at_128, model, data)


WRONG["check_fast_step"].update({
    R71C + "a ring of 48 losses (the check's runs have 40 steps)": _variant(history=48),
    R71C + "a ring of 41 losses": _variant(history=41),
    R71C + "the solution's step with float16 products for batches of 256 sequences or more":
        step_with_float16_products_for_large_batches,
})
ALSO_RIGHT["check_fast_step"][R71C + "the solution's step with the positions capped at 128"] = \
    step_with_positions_capped_at_128


# ---------------------------------------------------------------- round 72's adversary (exercise 1)
# adv127: 19 answers to check_fast_loss (16 judged on a CPU) and one to check_fast_step, against the check as of
# 49c55e2: five misjudged on the CPU, in three classes, all fixed in round 72 (fix08z):
# - the task's own sizes never a case: a mask built once and kept when x.shape[1] == 64 PASSed (no case judged by value
#   was padded to 64, nor had 512 sequences or 64 features).  TASK_BATCH, built from GPU_SIZES, is one now.
# - an eval-mode caller with grad on never asked for a gradient: torch.inference_mode() or .detach() whenever
#   `not model.training` PASSed (the eval-mode probe ran under torch.no_grad() only).  `_callers_state_kept` now also
#   calls in eval mode with grad on and judges the loss's graph and gradients.
# - float16 refused on sight, an exact cast of the lengths included, with the autocast's hint, though the task's text
#   said nothing of float16.  The text now forbids any float16 tensor, an exact cast included (as exercise 2's check
#   does since fix08x: a step whose loss passed exercise 1 would have FAILed there), and the hint names the operation:
#   both answers are WRONG by the text.
R72 = "round 72's adversary: "


def _r72_tail(model, pooled, y, bf16):
    """The solution's tail: the model under autocast, the loss in float32."""
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


_R72_MASKS: dict = {}


def mask_kept_for_the_course_length(model, x, n, y, bf16):
    """Wrong: "exercise 2 replays with its static 512x64 buffers (make_data pads to 64): for that length I build the
    real-position mask once and keep it (a graph wants static buffers); other lengths build it at each call".  The
    kept mask holds the first call's lengths: stale once the caller refills n in place, as exercise 2 does at every
    step.  EXPECTED: WRONG (PASSed until round 72: no case judged by value was padded to 64; TASK_BATCH is, and its
    refill drops real tokens under the kept mask)."""
    T = x.shape[1]
    if T == 64:  # make_data's padded length on a GPU (GPU_SIZES["length"])
        key = (x.device, T)
        if key not in _R72_MASKS:
            _R72_MASKS[key] = (torch.arange(T, device=x.device) < n[:, None]).to(x.dtype)
        mask = _R72_MASKS[key]
    else:
        mask = (torch.arange(T, device=x.device) < n[:, None]).to(x.dtype)
    return _r72_tail(model, (x * mask[..., None]).sum(1) / n[:, None], y, bf16)


def loss_in_inference_mode_when_evaluating(model, x, n, y, bf16):
    """Wrong: "in eval mode nobody trains: torch.inference_mode() skips autograd's bookkeeping, the loss is only
    logged".  A caller that trains with the model in eval mode (fine-tuning with frozen statistics) gets a loss that
    backward() cannot use; the task: "Return the loss as a float32 tensor that backward() can use".  EXPECTED: WRONG
    (PASSed until round 72: the check called in eval mode under torch.no_grad() only)."""
    if not model.training:
        with torch.inference_mode():
            return _r72_tail(model, x.sum(1) / n[:, None], y, bf16)
    return _r72_tail(model, x.sum(1) / n[:, None], y, bf16)


def loss_detached_when_evaluating(model, x, n, y, bf16):
    """Wrong: the same with .detach(), "an evaluation's loss needs no graph".  EXPECTED: WRONG (PASSed until round 72,
    as the one above)."""
    loss = _r72_tail(model, x.sum(1) / n[:, None], y, bf16)
    return loss if model.training else loss.detach()


def gradient_halved_when_evaluating(model, x, n, y, bf16):
    """Wrong (round 72's fix, not the adversary's: the eval-mode caller's gradients judged, not only its graph): "in
    eval mode the updates should be gentler", the loss's value kept and its gradient halved,
    loss.detach() + 0.5 * (loss - loss.detach()).  EXPECTED: WRONG (by the gradient of the caller training in eval
    mode)."""
    loss = _r72_tail(model, x.sum(1) / n[:, None], y, bf16)
    return loss if model.training else loss.detach() + 0.5 * (loss - loss.detach())


_R72_BUFFERS: dict = {}


def pooled_into_a_kept_buffer_through_data(model, x, n, y, bf16):
    """Wrong: "a graph wants static buffers: the pooled mean goes into one buffer per shape, written through .data so
    that autograd's version check does not complain".  A caller holding two losses before backward() gets the last
    batch's gradient for the first layer.  EXPECTED: WRONG (a control: FAILs on the held losses' gradients)."""
    key = (x.device, x.shape[0], x.shape[2])
    if key not in _R72_BUFFERS:
        _R72_BUFFERS[key] = torch.empty(x.shape[0], x.shape[2], device=x.device)
    buf = _R72_BUFFERS[key]
    buf.data.copy_(x.sum(1) / n[:, None])
    return _r72_tail(model, buf, y, bf16)


def lengths_as_float16(model, x, n, y, bf16):
    """The student: "the lengths are small integers: half holds them exactly (up to 2048), and the division promotes
    to float32"; the values are those of dividing by n, bit for bit.  EXPECTED: WRONG by the task's text since round 72
    ("no float16 tensor at all, not even a cast that changes no value", and with bf16=False no 16-bit tensor); it
    FAILed before too, with the autocast's hint."""
    return _r72_tail(model, x.sum(1) / n.half()[:, None], y, bf16)


def lengths_as_float16_with_bf16_only(model, x, n, y, bf16):
    """The student: "with bf16=True the arithmetic is 16-bit anyway: the lengths in half" (n.half() with bf16=True
    only), exact for every length under 2049, the same values as the ALSO_RIGHT `lengths_cast_to_bf16`.  EXPECTED:
    WRONG by the task's text since round 72 (float16 nowhere; bfloat16 is the task's one half-width format)."""
    return _r72_tail(model, x.sum(1) / (n.half() if bf16 else n)[:, None], y, bf16)


def reentrant_checkpoint(model, x, n, y, bf16):
    """Wrong: torch.utils.checkpoint with use_reentrant=True (the old default): the pooled input needs no gradient, so
    the reentrant checkpoint's output needs none and no gradient reaches any weight.  EXPECTED: WRONG (a control)."""
    from torch.utils.checkpoint import checkpoint
    pooled = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = checkpoint(model, pooled, use_reentrant=True)
    return F.cross_entropy(logits.float(), y)


def pooled_by_conv1d(model, x, n, y, bf16):
    """Right: each feature's sum as a 1-d convolution with a kernel of ones as long as the padding, in float32
    outside the autocast, divided by n.  EXPECTED: RIGHT."""
    B, T, Fe = x.shape
    ones = torch.ones(1, 1, T, device=x.device, dtype=x.dtype)
    s = F.conv1d(x.transpose(1, 2).reshape(B * Fe, 1, T), ones).reshape(B, Fe)
    return _r72_tail(model, s / n[:, None], y, bf16)


def pooled_by_segment_reduce(model, x, n, y, bf16, unsafe=False):
    """Wrong as written (round 72's adversary wrote it as right): torch.segment_reduce sums each sequence's padded
    positions as one segment (zeros add nothing), divided by n; right values, but ATen's segment_reduce checks its
    lengths on the host (their min and their sum, `.item()` each) unless unsafe=True: it PASSed on a CPU and waited
    twice on the H200 (call CG).  With unsafe=True (`functools.partial` below): right.  EXPECTED: WRONG."""
    B, T, Fe = x.shape
    lengths = torch.full((B,), T, device=x.device, dtype=torch.long)
    s = torch.segment_reduce(x.reshape(B * T, Fe), "sum", lengths=lengths, axis=0, unsafe=unsafe)
    return _r72_tail(model, s / n[:, None], y, bf16)


def pooled_by_linalg_vecdot(model, x, n, y, bf16):
    """Right: the masked mean as torch.linalg.vecdot of each feature column with the pooling weights (mask / n), in
    float32 outside the autocast.  EXPECTED: RIGHT."""
    T = x.shape[1]
    w = (torch.arange(T, device=x.device) < n[:, None]).to(x.dtype) / n[:, None]
    return _r72_tail(model, torch.linalg.vecdot(x.transpose(1, 2), w[:, None, :]), y, bf16)


def lengths_times_a_0d_one_made_where_x_is(model, x, n, y, bf16):
    """Right: the lengths in x's dtype by x.new_ones(()) * n, a 0-d factor made where the batch is.  EXPECTED:
    RIGHT."""
    return _r72_tail(model, x.sum(1) / (x.new_ones(()) * n)[:, None], y, bf16)


def autocast_from_the_device_modules(model, x, n, y, bf16):
    """Right: the autocast of older tutorials, torch.cuda.amp.autocast if x.is_cuda else torch.cpu.amp.autocast, with
    dtype=torch.bfloat16, enabled=bf16, cache_enabled=False (deprecated names: a FutureWarning only).  EXPECTED:
    RIGHT."""
    pooled = x.sum(1) / n[:, None]
    ac = torch.cuda.amp.autocast if x.is_cuda else torch.cpu.amp.autocast
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ac(dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def autocast_or_nullcontext(model, x, n, y, bf16):
    """Right: `with torch.autocast(...) if bf16 else contextlib.nullcontext():`.  EXPECTED: RIGHT."""
    pooled = x.sum(1) / n[:, None]
    ctx = (torch.autocast(x.device.type, dtype=torch.bfloat16, cache_enabled=False) if bf16
           else contextlib.nullcontext())
    with ctx:
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def autocast_as_a_decorator(model, x, n, y, bf16):
    """Right: torch.autocast as the decorator of an inner function (the documentation shows it).  EXPECTED: RIGHT."""
    @torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False)
    def run(a):
        return model(a)
    return F.cross_entropy(run(x.sum(1) / n[:, None]).float(), y)


def autocast_device_from_str(model, x, n, y, bf16):
    """Right: the autocast's device type parsed from str(x.device) ("cuda:0" -> "cuda").  EXPECTED: RIGHT."""
    pooled = x.sum(1) / n[:, None]
    with torch.autocast(str(x.device).split(":")[0], dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def loss_summed_over_the_batch_size(model, x, n, y, bf16):
    """Right: cross_entropy(reduction="sum") / y.numel(), the mean spelled out.  EXPECTED: RIGHT."""
    pooled = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y, reduction="sum") / y.numel()


def step_with_the_mask_kept_for_the_course_length(model, data):
    """Wrong: the solution's step (a graph, staged prefetch) whose fast_loss keeps its mask at the padded length 64
    (`mask_kept_for_the_course_length`): the warm-up's first batch's lengths hold for every batch.  EXPECTED: WRONG
    (by the values; not yet run on a GPU)."""
    return _solution_step_with_loss(mask_kept_for_the_course_length, model, data)


WRONG["check_fast_loss"].update({
    R72 + "a mask built once and kept when x.shape[1] == 64": mask_kept_for_the_course_length,
    R72 + "the loss under torch.inference_mode() when not model.training": loss_in_inference_mode_when_evaluating,
    R72 + "the loss detached when not model.training": loss_detached_when_evaluating,
    R72 + "(the fix's own) the gradient halved when not model.training": gradient_halved_when_evaluating,
    R72 + "the pooled mean in a buffer kept per shape, written through .data": pooled_into_a_kept_buffer_through_data,
    R72 + "the lengths cast to float16 (exact), both modes": lengths_as_float16,
    R72 + "the lengths cast to float16 (exact) with bf16=True": lengths_as_float16_with_bf16_only,
    R72 + "a reentrant checkpoint of the model": reentrant_checkpoint,
})
ALSO_RIGHT["check_fast_loss"].update({
    R72 + "the pooling by F.conv1d with a kernel of ones": pooled_by_conv1d,
    R72 + "the pooling by torch.segment_reduce, unsafe=True (no check of the lengths)":
        functools.partial(pooled_by_segment_reduce, unsafe=True),
    R72 + "the pooling by torch.linalg.vecdot with mask / n": pooled_by_linalg_vecdot,
    R72 + "the lengths times x.new_ones(())": lengths_times_a_0d_one_made_where_x_is,
    R72 + "torch.cuda.amp.autocast / torch.cpu.amp.autocast by the batch's device": autocast_from_the_device_modules,
    R72 + "the autocast if bf16 else contextlib.nullcontext()": autocast_or_nullcontext,
    R72 + "the autocast as a decorator": autocast_as_a_decorator,
    R72 + "the autocast's device type from str(x.device)": autocast_device_from_str,
    R72 + "cross_entropy(reduction='sum') / y.numel()": loss_summed_over_the_batch_size,
})
WRONG["check_fast_loss"][R72 + "the pooling by torch.segment_reduce (its lengths checked on the host)"] = \
    pooled_by_segment_reduce
WRONG["check_fast_step"][R72 + "the solution's step with the mask kept at 64 positions"] = \
    step_with_the_mask_kept_for_the_course_length


# ---------------------------------------------------------------- round 72's last adversary (report adv129)
# Thirteen answers, twelve judged on a CPU against the check of fe28dfb: eleven as expected, one WRONG answer PASSed
# (a layout assumed; every batch the check built was contiguous).  Round 73's fix (aacfbe6): the task says x may be any
# view of a larger tensor, and FAR_FROM_ZERO_BATCH's x is one (`nb08.as_a_view`: not contiguous, at a storage offset,
# the same values), where the answer FAILs with the hint about strides (nb08.LAYOUT_HINT).  Its other answers repeat
# registered classes.
R72C = "round 72's last adversary: "


def pooled_through_as_strided(model, x, n, y, bf16):
    """Wrong: "a view costs nothing": x.as_strided((B, T, F), (T*F, F, 1)) before the sum, the layout of a contiguous
    batch assumed (a caller's transposed or sliced batch reads other memory: on a hand-made transposed batch 1.1016
    against the solution's 1.0529).  EXPECTED: WRONG (the task says x may be any view of a larger tensor since round
    73).  FAILs on FAR_FROM_ZERO_BATCH, whose x is such a view (strides (7, 1, 42), storage offset 8), with the hint
    about strides (on a CPU, 2026-12-02: 154.0855 against the slow step's 1.279481, bf16=False)."""
    b, t, f = x.shape
    xs = x.as_strided((b, t, f), (t * f, f, 1), x.storage_offset())
    return _pooled_loss(model, xs.sum(1) / n[:, None], y, bf16, dtype=torch.bfloat16, cache_enabled=False)


R72C_AS_STRIDED = R72C + "x read through as_strided with a contiguous batch's strides"
WRONG["check_fast_loss"][R72C_AS_STRIDED] = pooled_through_as_strided


# ---------------------------------------------------------------- round 73's adversary (report adv133)
# Eight answers for check_fast_loss, judged on a CPU against the check of 38ebe39: three WRONG ones PASSed and one
# RIGHT one FAILed with a false hint.  Round 73's fix (6badad6): every case's x lies at a storage offset (a contiguous
# slice of a larger tensor, `nb08.as_a_slice`, other elements far values; the strided case as before), the layout hint
# reruns on a copy that starts its own storage; any in-place or out= write into the memory of x, n, y or a parameter
# FAILs (`nb08.WRITE_HINT`), whatever the version counter says; naming a storage stays refused, with a hint that says
# why (`nb08.STORAGE_HINT`).
R73 = "round 73's adversary: "


def contiguous_then_storage_from_its_start(model, x, n, y, bf16):
    """Wrong: "as_strided with a contiguous batch's strides is wrong on a strided view, so I make x contiguous first; a
    contiguous tensor's elements then start its storage": x.contiguous(), then read through as_strided(...,
    storage_offset=0).  On tokens[i] of a (batches, B, T, F) buffer it reads batch i - 1.  EXPECTED: WRONG (FAILs on
    every case, x being a contiguous slice at an offset, with the layout hint; on a CPU, 2026-12-02)."""
    xc = x.contiguous()
    xs = xc.as_strided(xc.shape, xc.stride(), 0)
    return _loss(model, xs.sum(1) / n[:, None], y, bf16)


def contiguous_then_storage_set(model, x, n, y, bf16):
    """Wrong: the same reading of memory from its start by set_(x.contiguous().untyped_storage(), 0, ...).
    EXPECTED: WRONG (FAILs as a storage handed to Python, STORAGE_HINT)."""
    xc = x.contiguous()
    whole = xc.new_empty(0).set_(xc.untyped_storage(), 0, (xc.numel(),))
    return _loss(model, whole.view(xc.shape).sum(1) / n[:, None], y, bf16)


def lengths_clamped_through_data(model, x, n, y, bf16):
    """Wrong: "guard against an empty sequence, through .data so autograd does not complain": n.data.clamp_(min=1)
    writes the caller's n; .data's version counter is its own and no case has n == 0, so neither n's values nor its
    version move.  EXPECTED: WRONG (FAILs: aten.clamp_ into n, WRITE_HINT)."""
    n.data.clamp_(min=1)
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def padding_zeroed_through_data(model, x, n, y, bf16):
    """Wrong: "make sure the padding is zero": x.data.mul_(mask) writes the caller's x (exercise 2's graph input) in
    place; its padding is zero already.  EXPECTED: WRONG (FAILs: aten.mul_ into x, WRITE_HINT)."""
    mask = torch.arange(x.shape[1], device=x.device) < n[:, None]
    x.data.mul_(mask[..., None])
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def lengths_clamped_under_detach(model, x, n, y, bf16):
    """Wrong (a control): n.detach().clamp_(min=1), detach() sharing n's version counter.  EXPECTED: WRONG (FAILs:
    changed its input n)."""
    n.detach().clamp_(min=1)
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def lengths_clamped_out_into_n_data(model, x, n, y, bf16):
    """Wrong (the fix's own, the out= form of the class): torch.clamp(n, min=1, out=n.data), the caller's n written by
    out= through an alias with a version counter of its own.  EXPECTED: WRONG (FAILs: aten.clamp into n)."""
    torch.clamp(n, min=1, out=n.data)
    return _loss(model, x.sum(1) / n[:, None], y, bf16)


def fft_dc_pooling(model, x, n, y, bf16):
    """Right: the sum over positions as the zero-frequency term of a real FFT along them (torch.fft.rfft(x, dim=1)[:,
    0].real / n): one operation on the static shape, its rounding within a sum's bound.  EXPECTED: RIGHT."""
    return _loss(model, torch.fft.rfft(x, dim=1)[:, 0].real / n[:, None], y, bf16)


def rebuilt_view_from_its_storage(model, x, n, y, bf16):
    """Refused by rule: x rebuilt from its own storage, offset, size and strides (x.new_empty(0).set_(
    x.untyped_storage(), ...)) is x's elements, nothing read; but a storage in Python's hands can be read there unseen,
    so naming one counts as a read (round 73's choice: the rule stays, its hint says why).  EXPECTED: WRONG (FAILs as a
    storage handed to Python, STORAGE_HINT, not as a read of a value)."""
    xs = x.new_empty(0).set_(x.untyped_storage(), x.storage_offset(), x.shape, x.stride())
    return _loss(model, xs.sum(1) / n[:, None], y, bf16)


def pooled_by_a_sparse_matrix(model, x, n, y, bf16):
    """Wrong on a GPU (expected): a COO (B, B*T) averaging matrix, uncoalesced, times x flattened (torch.sparse.mm);
    values right, but CUDA's coalescing reads the new nnz on the host (a wait at every call; a CUDA graph cannot
    capture it).  On a CPU: PART (the meta rerun has no sparse addmm).  EXPECTED: WRONG (needs a GPU)."""
    b, t, f = x.shape
    rows = torch.arange(b, device=x.device).repeat_interleave(t)
    cols = torch.arange(b * t, device=x.device)
    vals = ((torch.arange(t, device=x.device) < n[:, None]) / n[:, None]).reshape(-1)
    s = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (b, b * t))
    return _loss(model, torch.sparse.mm(s, x.reshape(b * t, f)), y, bf16)


WRONG["check_fast_loss"].update({
    R73 + "x.contiguous() then as_strided(..., storage_offset=0)": contiguous_then_storage_from_its_start,
    R73 + "x.contiguous()'s storage set_ from its start": contiguous_then_storage_set,
    R73 + "n.data.clamp_(min=1)": lengths_clamped_through_data,
    R73 + "x.data.mul_(mask)": padding_zeroed_through_data,
    R73 + "n.detach().clamp_(min=1) (a control)": lengths_clamped_under_detach,
    R73 + "(the fix's own) torch.clamp(n, min=1, out=n.data)": lengths_clamped_out_into_n_data,
    R73 + "x rebuilt by set_(x.untyped_storage(), ...) (refused: a storage named)": rebuilt_view_from_its_storage,
    R73 + "the pooling by an uncoalesced sparse COO matrix (torch.sparse.mm)": pooled_by_a_sparse_matrix,
})
ALSO_RIGHT["check_fast_loss"][R73 + "the pooling as the DC term of torch.fft.rfft along the positions"] = \
    fft_dc_pooling
NEEDS_A_GPU["check_fast_loss"][R73 + "the pooling by an uncoalesced sparse COO matrix (torch.sparse.mm)"] = ()


# ---------------------------------------------------------------- round 74's adversary (report adv135)
# Thirteen answers for check_fast_loss, judged on a CPU against the check of 6badad6: five WRONG ones PASSed, all of
# one class, a fill by a mask whose value is a tensor where the batch is (made with device=x.device, x.new_zeros(())):
# CUDA's masked_fill with a Tensor value reads it by .item(), and an index put by a boolean mask takes the masked_fill
# route only for a value on the host, else nonzero(), its count read on the host.  Round 74's fix (3f95b66): such a
# fill is a host read where its value is not on the host (`nb08.MASK_FILLS`, `nb08.INDEX_PUTS`, PyTorch's own rule),
# judged on a CPU by the run beside a GPU's batch, which any such fill now starts (`Operations.fills`); a read inside
# PyTorch's own Python code is said to be (torch.nested's constructor named a storage, and the hint blamed the answer).
R74 = "round 74's adversary: "


def _below_lengths(x, n):
    return torch.arange(x.shape[1], device=x.device) < n[:, None]


def padding_zeroed_by_masked_fill_device_zero(model, x, n, y, bf16):
    """Wrong: "no host tensors, so the fill value on the device too": x.masked_fill(~mask[..., None], x.new_zeros(())).
    CUDA's masked_fill_ with a Tensor value calls value.item() (aten/src/ATen/native/cuda/Indexing.cu): a wait at every
    call; a CUDA graph's capture refuses it.  EXPECTED: WRONG (on a CPU, FAILs beside a GPU's batch)."""
    xz = x.masked_fill(~_below_lengths(x, n)[..., None], x.new_zeros(()))
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def padding_zeroed_by_masked_fill_python_zero(model, x, n, y, bf16):
    """Right (a control): x.masked_fill(~mask[..., None], 0.0), a Python number: a kernel argument, no read.
    EXPECTED: RIGHT."""
    xz = x.masked_fill(~_below_lengths(x, n)[..., None], 0.0)
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def lengths_guarded_by_masked_fill_device_one(model, x, n, y, bf16):
    """Wrong: "guard empty sequences without a host value": n.masked_fill(n == 0, n.new_ones(())), read by .item() on a
    GPU.  EXPECTED: WRONG."""
    safe = n.masked_fill(n == 0, n.new_ones(()))
    return _loss(model, x.sum(1) / safe[:, None], y, bf16)


def padding_zeroed_by_index_put_bool(model, x, n, y, bf16):
    """Wrong: xz = x.clone(); xz.index_put_((~mask,), torch.zeros((), device=x.device)): a boolean index with a value
    not on the host, which ATen turns into nonzero() (canDispatchToMaskedFill asks for a value on the CPU): the count of
    Trues read on the host on a GPU.  EXPECTED: WRONG."""
    xz = x.clone()
    xz.index_put_((~_below_lengths(x, n),), torch.zeros((), device=x.device, dtype=x.dtype))
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def pooled_by_index_put_out_of_place(model, x, n, y, bf16):
    """Wrong: torch.index_put(x, (~mask,), x.new_zeros(())), out of place: the same nonzero() route.
    EXPECTED: WRONG."""
    xz = torch.index_put(x, (~_below_lengths(x, n),), x.new_zeros(()))
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def padding_zeroed_by_setitem_bool_tensor_value(model, x, n, y, bf16):
    """Wrong: xz = x.clone(); xz[~mask] = x.new_zeros(()): Python indexing lowers it to index_put_ by a boolean index
    with a value where the batch is: nonzero(), a read on a GPU.  EXPECTED: WRONG."""
    xz = x.clone()
    xz[~_below_lengths(x, n)] = x.new_zeros(())
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def padding_zeroed_by_setitem_bool_python_zero(model, x, n, y, bf16):
    """Right (a control): xz[~mask] = 0, a Python number: index_put_ takes the masked_fill route, no read.  EXPECTED:
    RIGHT."""
    xz = x.clone()
    xz[~_below_lengths(x, n)] = 0
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def padding_zeroed_by_setitem_bool_host_zero(model, x, n, y, bf16):
    """Right (the fix's own control): xz[~mask] = torch.zeros(()), a 0-d value on the host: canDispatchToMaskedFill
    holds, the masked_fill route, no read (the value's device decides, not its being a tensor).  EXPECTED: RIGHT."""
    xz = x.clone()
    xz[~_below_lengths(x, n)] = torch.zeros((), dtype=x.dtype)
    return _loss(model, xz.sum(1) / n[:, None], y, bf16)


def nested_jagged_pooling(model, x, n, y, bf16):
    """Wrong: torch.nested.narrow(x, 1, 0, n.long(), layout=torch.jagged), the mean over the ragged dim: torch.nested's
    constructor reads the lengths' min and max by .item() (torch/nested/_internal/nested_tensor.py).  EXPECTED: WRONG
    (FAILs as a read on the host inside torch.nested, no longer with the hint about a storage the answer named)."""
    nt = torch.nested.narrow(x.contiguous(), 1, 0, n.long(), layout=torch.jagged)
    return _loss(model, nt.sum(dim=1) / n[:, None], y, bf16)


def masked_scatter_pooling(model, x, n, y, bf16):
    """Wrong: torch.zeros_like(x).masked_scatter(mask, x) takes x's elements in order, not in place: wrong values.
    EXPECTED: WRONG."""
    m = _below_lengths(x, n)[..., None].expand_as(x)
    return _loss(model, torch.zeros_like(x).masked_scatter(m, x).sum(1) / n[:, None], y, bf16)


def cross_entropy_ignore_index_zero(model, x, n, y, bf16):
    """Wrong: ignore_index=0 "so padding does not count" drops class 0's labels.  EXPECTED: WRONG."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y, ignore_index=0)


def as_strided_with_xs_own_layout(model, x, n, y, bf16):
    """Right: x.as_strided(x.shape, x.stride(), x.storage_offset()), the identical view.  EXPECTED: RIGHT."""
    return _loss(model, x.as_strided(x.shape, x.stride(), x.storage_offset()).sum(1) / n[:, None], y, bf16)


def pooled_by_unfold(model, x, n, y, bf16):
    """Right: the sum over positions by x.unfold(1, T, 1) summed on its last dim.  EXPECTED: RIGHT."""
    return _loss(model, x.unfold(1, x.shape[1], 1).sum(-1).squeeze(1) / n[:, None], y, bf16)


def pooled_by_cumsum_last(model, x, n, y, bf16):
    """Right: x.cumsum(1)[:, -1], the last running sum (padding adds zero).  EXPECTED: RIGHT."""
    return _loss(model, x.cumsum(1)[:, -1] / n[:, None], y, bf16)


WRONG["check_fast_loss"].update({
    R74 + "x.masked_fill(~mask, x.new_zeros(())) (a fill value on the GPU)": padding_zeroed_by_masked_fill_device_zero,
    R74 + "n.masked_fill(n == 0, n.new_ones(())) (a fill value on the GPU)": lengths_guarded_by_masked_fill_device_one,
    R74 + "xz.index_put_((~mask,), zeros((), device=x.device))": padding_zeroed_by_index_put_bool,
    R74 + "torch.index_put(x, (~mask,), x.new_zeros(()))": pooled_by_index_put_out_of_place,
    R74 + "xz[~mask] = x.new_zeros(())": padding_zeroed_by_setitem_bool_tensor_value,
    R74 + "torch.nested.narrow(..., layout=torch.jagged) pooling": nested_jagged_pooling,
    R74 + "zeros_like(x).masked_scatter(mask, x)": masked_scatter_pooling,
    R74 + "cross_entropy(..., ignore_index=0)": cross_entropy_ignore_index_zero,
})
ALSO_RIGHT["check_fast_loss"].update({
    R74 + "x.masked_fill(~mask, 0.0) (a control)": padding_zeroed_by_masked_fill_python_zero,
    R74 + "xz[~mask] = 0 (a control)": padding_zeroed_by_setitem_bool_python_zero,
    R74 + "(the fix's own) xz[~mask] = torch.zeros(()) on the host (a control)":
        padding_zeroed_by_setitem_bool_host_zero,
    R74 + "x.as_strided(x.shape, x.stride(), x.storage_offset())": as_strided_with_xs_own_layout,
    R74 + "the pooling by x.unfold(1, T, 1)": pooled_by_unfold,
    R74 + "x.cumsum(1)[:, -1]": pooled_by_cumsum_last,
})


# ---------------------------------------------------------------- round 75's adversary (report adv137)
# Eight answers for check_fast_loss, judged on a CPU against the check of d9cfe99: three wrong ones PASS, all of one
# class, round 71's `trims_the_padding_on_the_gpu_only` (int(n.max()), a host read and a shape from the data, on the
# GPU's path only) behind a device test that the rerun beside a GPU's batch does not answer as a GPU's: that rerun
# (`_device_reads`, nb08.py:2490) patches only DEVICE_ATTRIBUTES (is_cuda, is_cpu, device; nb08.py:2483) and
# get_device(), and DEVICE_FUNCTIONS (torch.cuda.is_available and device_count, torch.accelerator's; nb08.py:
# 2484-2487), so x.type(), hasattr(x, "__cuda_array_interface__") and torch.version.cuda / torch.backends.cuda.
# is_built() keep the host's answer there and the GPU's branch is never run on a CPU.  Fixed in round 75: in the
# rerun, Tensor.type() with no argument gives "torch.cuda.<X>Tensor" for a meta input, __cuda_array_interface__ exists
# for one, torch.version.cuda / torch.backends.cuda.is_built() read as the H200's ("13.0", True), with torch.cuda's
# other cheap questions; and a line of the answer's own code that ran neither on the host's batch nor beside a GPU's
# leaves the check PART (`_LinesRun`), whatever device question took it there.
# The fourth, n.unsqueeze_(1) ... n.squeeze_(1) in a finally, FAILs with "changed its input n" (the version test,
# nb08.py:1819-1822).  Registered WRONG: the task asks that x, n and y be left as they were, and n's version counter,
# which autograd reads to refuse a backward through a tensor saved and then modified in place, has moved; while the
# call runs, n is (B, 1) for any other code that holds it.  The message is inexact, though: n's values, dtype and
# shape are as they were, only its version moved: since round 75's fix the check says "ran an in-place operation on n
# (its version moved ...)".
R75 = "round 75's adversary: "


def trims_the_padding_when_the_type_says_cuda(model, x, n, y, bf16):
    """Wrong: the old tutorials' test, `if x.type().startswith("torch.cuda")`, then the padding cut at int(n.max()): a
    host read and a shape from the data on the GPU only.  EXPECTED: WRONG (PASSed on a CPU, x.type() not answered as
    a GPU's in the rerun beside a GPU's batch; FAILs there since round 75's fix, which answers it as the H200's)."""
    return _padding_trimmed_if(x.type().startswith("torch.cuda"), model, x, n, y, bf16)


def trims_the_padding_when_x_has_a_cuda_array_interface(model, x, n, y, bf16):
    """Wrong: CuPy's way to ask, `if hasattr(x, "__cuda_array_interface__")` (the property raises for a tensor not on
    a GPU), then the padding cut at int(n.max()).  EXPECTED: WRONG (FAILs on a CPU since round 75's fix, as above)."""
    return _padding_trimmed_if(hasattr(x, "__cuda_array_interface__"), model, x, n, y, bf16)


def trims_the_padding_when_torch_is_a_cuda_build(model, x, n, y, bf16):
    """Wrong: `if torch.version.cuda is not None and torch.backends.cuda.is_built()` (true for any CUDA build of
    PyTorch, a GPU or not), then the padding cut at int(n.max()).  EXPECTED: WRONG (FAILs on a CPU build of PyTorch
    since round 75's fix: the rerun beside a GPU's batch answers both as the H200's CUDA build, "13.0" and True)."""
    return _padding_trimmed_if(torch.version.cuda is not None and torch.backends.cuda.is_built(), model, x, n, y, bf16)


def lengths_unsqueezed_in_place(model, x, n, y, bf16):
    """Wrong: n.unsqueeze_(1) "to save an allocation for the broadcast", left (B, 1) for the caller.  EXPECTED:
    WRONG."""
    n.unsqueeze_(1)
    return _loss(model, x.sum(1) / n, y, bf16)


def lengths_unsqueezed_in_place_then_put_back(model, x, n, y, bf16):
    """Wrong: n.unsqueeze_(1) for the broadcast, n.squeeze_(1) in a finally: n's shape and values as they were, its
    version moved (see the comment above this round).  EXPECTED: WRONG (FAILs with "ran an in-place operation on n")."""
    n.unsqueeze_(1)
    try:
        pooled = x.sum(1) / n
    finally:
        n.squeeze_(1)
    return _loss(model, pooled, y, bf16)


def batch_transposed_in_place(model, x, n, y, bf16):
    """Wrong: x.transpose_(1, 2) "to sum over the last dim", x left (B, F, T) for the caller.  EXPECTED: WRONG."""
    x.transpose_(1, 2)
    return _loss(model, x.sum(-1) / n[:, None], y, bf16)


def loss_by_kl_div_to_the_one_hot_labels(model, x, n, y, bf16):
    """Right: the cross-entropy as F.kl_div of the float32 log-softmax to one_hot(y, C) (the target's entropy is 0),
    reduction="batchmean"; one_hot with its width given reads nothing on the host.  EXPECTED: RIGHT."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    logp = F.log_softmax(logits.float(), dim=1)
    return F.kl_div(logp, F.one_hot(y, logp.shape[1]).to(logp.dtype), reduction="batchmean")


def pooled_by_attention_with_equal_scores(model, x, n, y, bf16):
    """Right: the masked mean as F.scaled_dot_product_attention with a zero query and key (equal scores) and a boolean
    mask of the real positions: weights 1/n on them, in float32 outside the autocast.  EXPECTED: RIGHT."""
    B, T, _ = x.shape
    q, k = x.new_zeros(B, 1, 1), x.new_zeros(B, T, 1)
    pooled = F.scaled_dot_product_attention(q, k, x, attn_mask=_below_lengths(x, n)[:, None, :])[:, 0]
    return _loss(model, pooled, y, bf16)


WRONG["check_fast_loss"].update({
    R75 + "the padding trimmed by int(n.max()) under `if x.type().startswith('torch.cuda')`":
        trims_the_padding_when_the_type_says_cuda,
    R75 + "the padding trimmed by int(n.max()) under `if hasattr(x, '__cuda_array_interface__')`":
        trims_the_padding_when_x_has_a_cuda_array_interface,
    R75 + "the padding trimmed by int(n.max()) under `if torch.version.cuda and torch.backends.cuda.is_built()`":
        trims_the_padding_when_torch_is_a_cuda_build,
    R75 + "n.unsqueeze_(1), left so": lengths_unsqueezed_in_place,
    R75 + "n.unsqueeze_(1), put back by n.squeeze_(1) before returning": lengths_unsqueezed_in_place_then_put_back,
    R75 + "x.transpose_(1, 2), left so": batch_transposed_in_place,
})
ALSO_RIGHT["check_fast_loss"].update({
    R75 + "the loss as F.kl_div to one_hot(y, C), batchmean": loss_by_kl_div_to_the_one_hot_labels,
    R75 + "the pooling by scaled_dot_product_attention with equal scores and a mask":
        pooled_by_attention_with_equal_scores,
})


# ---------------------------------------------------------------- round 76's adversary (report adv139)
# Nineteen answers (eighteen for check_fast_loss, one for check_fast_step), judged on a CPU against the check of
# 9eb6bd5: one wrong answer PASSed, a class of its own: work skipped after the first calls.  Its reciprocal of n, keyed
# by n's identity, address and shape, was kept from the 17th call with one n on, stale once the caller refilled n in
# place (as exercise 2's eager steps do at every step); no case handed the answer one n more than 14 times, and the kept
# value ran on the same line as the fresh one, so the line guard (`_LinesRun`) saw nothing unrun.  Fixed in round 76
# (fix08ak): one small batch is called at each of exercise 2's LONG_RUN_STEPS steps on the same x, n and y, refilled in
# place before each step, in both modes, the weights changed in place every LONG_RUN_WEIGHTS_EVERY steps and the
# answer called again then on the unchanged batch; every loss is compared with the slow step's, and a few calls'
# operations with a refilled step's (`nb08._long_run_holds`).  A cache keyed by the version counters as well (which an
# in-place refill moves) gives right values there, and is WRONG all the same (the fix's own answer below): exercise 2's
# graph is captured from a call after warm-up calls on the unchanged static inputs, which finds the cache valid and
# skips its work, and the graph's replays write new values and move no version counter.  It PASSed before the fix and
# FAILs with "it ran other operations than at step 3".  The answers that a CPU leaves PART (a device question that the
# rerun beside a GPU's batch does not answer as an H200's: total_memory, L2_cache_size, mem_get_info,
# is_current_stream_capturing, or autocast's device from str(x.device)) run on a GPU only (NEEDS_A_GPU).
R76 = "round 76's adversary: "


def _r76_tail(model, pooled, y, bf16):
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


@functools.cache
def _r76_cached(model, x, n, y, bf16):
    return _r76_tail(model, x.sum(1) / n[:, None], y, bf16)


def lru_cached_loss(model, x, n, y, bf16):
    """Wrong: "exercise 2 calls me with the same buffers every step: memoize" with functools.lru_cache (tensors hash by
    identity): the first call's loss (and graph) comes back after every refill of x, n, y in place and every optimizer
    step.  EXPECTED: WRONG (FAILs on the second call)."""
    return _r76_cached(model, x, n, y, bool(bf16))


def pooled_in_numpy_by_dlpack(model, x, n, y, bf16):
    """Wrong: the pooling in NumPy through DLPack ("zero copy"), brought back by from_numpy and .to(x.device): on a GPU
    np.from_dlpack refuses device memory; host work either way.  EXPECTED: WRONG."""
    s = torch.from_numpy(np.from_dlpack(x.detach()).sum(1)).to(x.device)
    return _r76_tail(model, s / n[:, None], y, bf16)


def pooled_in_numpy_by_asarray(model, x, n, y, bf16):
    """Wrong: np.asarray(x) (Tensor.__array__, a read of x on the host), summed in NumPy.  EXPECTED: WRONG."""
    s = torch.as_tensor(np.asarray(x.detach()).sum(1), device=x.device)
    return _r76_tail(model, s / n[:, None], y, bf16)


def mask_from_tril_rows(model, x, n, y, bf16):
    """Right: the mask of real positions as rows of a lower-triangular matrix made on x's device, picked by the lengths
    (n >= 1) on the device: no host read, a static shape.  EXPECTED: RIGHT."""
    t = x.shape[1]
    tri = torch.ones(t, t, device=x.device, dtype=x.dtype).tril()
    mask = tri[n.long() - 1]  # (B, T): row k has k + 1 ones
    return _r76_tail(model, (x * mask[:, :, None]).sum(1) / n[:, None], y, bf16)


def sets_default_dtype_float64(model, x, n, y, bf16):
    """Wrong: torch.set_default_dtype(torch.float64) "for an exact mean", left so for the caller.  EXPECTED: WRONG."""
    torch.set_default_dtype(torch.float64)
    s = x.sum(1).to(torch.get_default_dtype()) / n[:, None].to(torch.get_default_dtype())
    return _r76_tail(model, s.float(), y, bf16)


def autograd_multithreading_off(model, x, n, y, bf16):
    """Wrong: torch.autograd.set_multithreading_enabled(False) "for determinism", left off for every later backward of
    the caller's.  EXPECTED: WRONG."""
    torch.autograd.set_multithreading_enabled(False)
    return _r76_tail(model, x.sum(1) / n[:, None], y, bf16)


_R76_OPERATOR: list = []


def _r76_masked_mean():
    """The pooling registered once as the operator course08_answers::r76_masked_mean (torch.library.custom_op, with a
    fake kernel, as torch.compile wants)."""
    if not _R76_OPERATOR:
        @torch.library.custom_op("course08_answers::r76_masked_mean", mutates_args=())
        def masked_mean(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
            return x.sum(1) / n[:, None]

        @masked_mean.register_fake
        def _(x, n):
            return x.new_empty(x.shape[0], x.shape[2])

        _R76_OPERATOR.append(masked_mean)
    return _R76_OPERATOR[0]


def pooled_by_a_custom_op(model, x, n, y, bf16):
    """Right: the pooling packaged as a torch.library.custom_op: the same sum and division in float32, no host read
    (x needs no gradient).  EXPECTED: RIGHT."""
    return _r76_tail(model, _r76_masked_mean()(x, n), y, bf16)


def pooled_by_index_add(model, x, n, y, bf16):
    """Right: the positions' rows summed by index_add into zeros on x's device (an index of the batch's rows, repeated
    per position).  EXPECTED: RIGHT."""
    b, t, f = x.shape
    rows = torch.arange(b, device=x.device).repeat_interleave(t)
    s = torch.zeros(b, f, device=x.device, dtype=x.dtype).index_add(0, rows, x.reshape(b * t, f))
    return _r76_tail(model, s / n[:, None], y, bf16)


def reduction_sum_over_len_y(model, x, n, y, bf16):
    """Right: cross_entropy(..., reduction="sum") / len(y), the mean spelled out (len is a shape).  EXPECTED: RIGHT."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y, reduction="sum") / len(y)


def divides_by_the_stride(model, x, n, y, bf16):
    """Wrong: "the padded length is stride(0) // stride(1)" (true of a contiguous batch only): x.mean(1) * L / n with L
    from the layout.  EXPECTED: WRONG (the strided case)."""
    length = x.stride(0) // x.stride(1)
    return _r76_tail(model, x.mean(1) * length / n[:, None], y, bf16)


def sum_in_float64_by_dtype_kw(model, x, n, y, bf16):
    """Right: x.sum(1, dtype=torch.float64) / n, then .float(): the sum accumulated in float64 by the reduction's
    dtype=, never less exact.  EXPECTED: RIGHT."""
    s = x.sum(1, dtype=torch.float64) / n[:, None].double()
    return _r76_tail(model, s.float(), y, bf16)


def bf16_arg_as_truthy_string(model, x, n, y, bf16):
    """Right: autocast's device type from str(x.device), "cuda:0" on a GPU.  Its adversary expected autocast to refuse
    "cuda:0"; the H200 (PyTorch 2.11, call CK, 2026-12-02) PASSed it, and on torch 2.13 `torch.autocast("cpu:0")`
    enables CPU autocast: the index is accepted.  EXPECTED: RIGHT (a CPU leaves it PART)."""
    with torch.autocast(str(x.device), dtype=torch.bfloat16, enabled=bool(bf16), cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


def pooled_under_no_grad_and_weights_detached_for_eval(model, x, n, y, bf16):
    """Right: the weights detached through torch.func.functional_call in eval mode under no_grad only (the same
    number, no graph asked for); the solution otherwise.  EXPECTED: RIGHT (a CPU leaves it PART)."""
    pooled = x.sum(1) / n[:, None]
    if not model.training and not torch.is_grad_enabled():
        params = {k: v.detach() for k, v in model.named_parameters()}
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            logits = torch.func.functional_call(model, params, (pooled,))
        return F.cross_entropy(logits.float(), y)
    return _r76_tail(model, pooled, y, bf16)


def warns_on_a_small_gpu(model, x, n, y, bf16):
    """Right: a warning on a GPU of less than 16 GiB, read from get_device_properties(...).total_memory (a property, no
    wait); the solution's arithmetic.  EXPECTED: RIGHT (a CPU leaves it PART)."""
    if x.is_cuda and torch.cuda.get_device_properties(x.device).total_memory < 16 * 2**30:
        warnings.warn("a small GPU: the course's sizes may not fit", stacklevel=2)
    return _r76_tail(model, x.sum(1) / n[:, None], y, bf16)


def mask_made_where_memory_allows(model, x, n, y, bf16):
    """Right: a branch on torch.cuda.mem_get_info (a driver query, no wait for the stream) whose two sides are the same
    exact sum.  EXPECTED: RIGHT (a CPU leaves it PART)."""
    room = (not x.is_cuda) or torch.cuda.mem_get_info(x.device)[0] > 4 * x.numel() * x.element_size()
    pooled = x.sum(1) if room else torch.sum(x, 1)  # (the same sum)
    return _r76_tail(model, pooled / n[:, None], y, bf16)


def sm_count_picks_nothing(model, x, n, y, bf16):
    """Right: the GPU's L2 size read (get_device_properties(...).L2_cache_size, a property) and used for nothing.
    EXPECTED: RIGHT (a CPU leaves it PART)."""
    if x.is_cuda:
        _ = torch.cuda.get_device_properties(x.device).L2_cache_size
    return _r76_tail(model, x.sum(1) / n[:, None], y, bf16)


def trims_when_not_capturing_one_line(model, x, n, y, bf16):
    """Wrong: "a graph cannot read on the host, so trim to the longest only outside a capture, on a GPU": int(n.max())
    when x.is_cuda and no capture is under way, on one line: a host read at every eager call on a GPU.  EXPECTED: WRONG
    (a CPU leaves it PART)."""
    length = int(n.max()) if x.is_cuda and not torch.cuda.is_current_stream_capturing() else x.shape[1]
    return _r76_tail(model, x[:, :length].sum(1) / n[:, None], y, bf16)


_R76_STATIC: dict = {}


def reciprocal_cached_once_static(model, x, n, y, bf16):
    """Wrong: "a lengths buffer handed to me again and again is exercise 2's static input: after 16 calls with the same
    one, keep its reciprocal" (keyed by n's identity, address and shape; no host read).  Every line runs at every call;
    from the 17th call with one n on, 1/n is the 16th call's, stale once the caller refills n in place.  EXPECTED:
    WRONG (PASSed before round 76's fix; FAILs in the long run at the 17th call, step 9, bf16=True)."""
    key = (id(n), n.data_ptr(), tuple(n.shape))
    hits, r = _R76_STATIC.get(key, (0, None))
    r = r if hits >= 16 else 1 / n[:, None]
    _R76_STATIC[key] = (hits + 1, r)
    return _r76_tail(model, x.sum(1) * r, y, bf16)


_R76_BY_VERSION: dict = {}


def reciprocal_kept_by_version(model, x, n, y, bf16):
    """Wrong (the fix's own): the reciprocal of n kept while n is the same tensor at the same version (n held, so its
    id stays unique): a refill in place moves the version, so every value is right, but a call on an unchanged n skips
    the division, and exercise 2's graph, captured from such a call after its warm-up calls, never divides: its
    replays read the warm-up's reciprocal.  EXPECTED: WRONG (PASSed before round 76's fix; FAILs at step 10 of the long
    run, "it ran other operations than at step 3")."""
    kept = _R76_BY_VERSION.get("n")
    if kept is not None and kept[0] is n and kept[1] == n._version:
        r = kept[2]
    else:
        r = 1 / n[:, None]
        _R76_BY_VERSION["n"] = (n, n._version, r)
    return _r76_tail(model, x.sum(1) * r, y, bf16)


WRONG["check_fast_loss"].update({
    R76 + "functools.lru_cache on (model, x, n, y, bf16)": lru_cached_loss,
    R76 + "the pooling in NumPy through np.from_dlpack": pooled_in_numpy_by_dlpack,
    R76 + "the pooling in NumPy through np.asarray(x)": pooled_in_numpy_by_asarray,
    R76 + "torch.set_default_dtype(torch.float64), left so": sets_default_dtype_float64,
    R76 + "torch.autograd.set_multithreading_enabled(False), left so": autograd_multithreading_off,
    R76 + "the padded length from x.stride(0) // x.stride(1)": divides_by_the_stride,
    R76 + "int(n.max()) on a GPU outside a capture, on one line": trims_when_not_capturing_one_line,
    R76 + "the reciprocal of n kept after 16 calls with one n": reciprocal_cached_once_static,
    R76 + "(the fix's own) the reciprocal of n kept while n's version is unchanged": reciprocal_kept_by_version,
})
ALSO_RIGHT["check_fast_loss"].update({
    R76 + "the mask as rows of a tril matrix picked by n - 1": mask_from_tril_rows,
    R76 + "autocast's device type from str(x.device)": bf16_arg_as_truthy_string,
    R76 + "the pooling as a torch.library.custom_op": pooled_by_a_custom_op,
    R76 + "the pooling by index_add": pooled_by_index_add,
    R76 + "cross_entropy(..., reduction='sum') / len(y)": reduction_sum_over_len_y,
    R76 + "x.sum(1, dtype=torch.float64) / n": sum_in_float64_by_dtype_kw,
    R76 + "the weights detached in eval mode under no_grad": pooled_under_no_grad_and_weights_detached_for_eval,
    R76 + "a warning on a GPU of less than 16 GiB (total_memory)": warns_on_a_small_gpu,
    R76 + "a branch on torch.cuda.mem_get_info with the same sum on both sides": mask_made_where_memory_allows,
    R76 + "the GPU's L2_cache_size read and unused": sm_count_picks_nothing,
})
NEEDS_A_GPU["check_fast_loss"].update({  # on a CPU: PART (a device question the rerun does not answer as an H200's)
    R76 + "autocast's device type from str(x.device)": (),
    R76 + "int(n.max()) on a GPU outside a capture, on one line": (),
    R76 + "the weights detached in eval mode under no_grad": (),
    R76 + "a warning on a GPU of less than 16 GiB (total_memory)": (),
    R76 + "a branch on torch.cuda.mem_get_info with the same sum on both sides": (),
    R76 + "the GPU's L2_cache_size read and unused": (),
})
# ...and its answer to check_fast_step (a GPU's to judge), with the variant it names as right for the check's horizon
WRONG["check_fast_step"][R76 + "a ring of 256 losses (the check's first run goes on to 300 steps)"] = _variant(
    history=256)
ALSO_RIGHT["check_fast_step"][R76 + "a history of 301 losses (the check's horizon is 300 steps)"] = _variant(
    history=301)


# ---------------------------------------------------------------- round 77's adversary (exercises 1 and 2)
# adv141, judged on this CPU, 2026-12-02, the checks as of round 76 (each docstring is the adversary's student's
# reasoning and EXPECTED).  Two wrong answers PASSed, one class: n's values read on the host through its raw address
# (n.data_ptr() handed to ctypes.string_at, or to NumPy over ctypes' from_address), no operation of PyTorch's reading
# them; on the meta rerun data_ptr() is 0 and ctypes reads whatever lies there without raising.  The fix
# (`nb08._ADDRESSES`): a data_ptr() called by the answer's own code leaves the check PART on a CPU (taking an address
# reads no value; what is done with it no mode follows), so both are NEEDS_A_GPU, and judged there in a process of
# their own: a host read of a device address may kill the process (SIGSEGV), which is no FAIL.  The others were
# judged right on the CPU (its x.view(B, P*F) answer raises on the strided case, an error the check shows, as the
# notebook says, and judges not: left out here, its test wanting a FAIL), and three answers to exercise 2 are a GPU's.
R77 = "round 77's adversary: "


def _r77_tail(model, pooled, y, bf16, **ce):
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y, **ce)


def shortest_by_torch_save(model, x, n, y, bf16):
    """Wrong: "a guard against empty sequences, and no .item()/.tolist()/.numpy()": the lengths serialized with
    torch.save into a BytesIO, their raw float32 bytes read back from the zip archive by NumPy, the shortest length (a
    host value) used as a clamp floor (all lengths >= 1: no value changes).  torch.save copies n to the host.
    EXPECTED: WRONG (FAILs: untyped_storage, inside torch._tensor)."""
    buf = io.BytesIO()
    torch.save(n.detach(), buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        raw = z.read(next(name for name in z.namelist() if "/data/" in name))
    shortest = float(np.frombuffer(raw, dtype=np.float32).min())
    return _r77_tail(model, x.sum(1) / n.clamp(min=min(shortest, 1.0))[:, None], y, bf16)


def shortest_by_ctypes_pointer(model, x, n, y, bf16):
    """Wrong: the same guard, the lengths read straight from memory, ctypes.string_at(n.data_ptr(), bytes): "no tensor
    method at all".  On a GPU the host reads at a device address (a crash, or garbage); a host read in any case.
    EXPECTED: WRONG (PASSed on a CPU before round 77's fix; PART there since, the address taken; a GPU's to judge)."""
    nn_ = n.detach().contiguous()
    raw = ctypes.string_at(nn_.data_ptr(), nn_.numel() * nn_.element_size())
    shortest = float(np.frombuffer(raw, dtype=np.float32).min())
    return _r77_tail(model, x.sum(1) / n.clamp(min=min(shortest, 1.0))[:, None], y, bf16)


def shortest_by_ctypes_from_address(model, x, n, y, bf16):
    """Wrong: the raw-pointer class again, by NumPy: np.ctypeslib.as_array over a ctypes array made
    from_address(n.data_ptr()), the meta rerun's null pointer stepped around on the same line; the shortest length the
    clamp floor.  EXPECTED: WRONG (PASSed on a CPU before round 77's fix; PART there since; a GPU's to judge)."""
    nn_ = n.detach().contiguous()
    arr = np.ctypeslib.as_array((ctypes.c_float * nn_.numel()).from_address(nn_.data_ptr()))
    shortest = float(np.nan_to_num(arr, nan=1.0).min()) if nn_.data_ptr() else 1.0
    return _r77_tail(model, x.sum(1) / n.clamp(min=min(shortest, 1.0))[:, None], y, bf16)


def empty_guard_by_in(model, x, n, y, bf16):
    """Wrong: "no empty sequence may divide by zero": `0.0 in n` (Tensor.__contains__, an .item() inside
    torch/_tensor.py) in a conditional expression.  A host read.  EXPECTED: WRONG."""
    d = n.clamp(min=1) if 0.0 in n else n
    return _r77_tail(model, x.sum(1) / d[:, None], y, bf16)


def empty_guard_by_builtin_min(model, x, n, y, bf16):
    """Wrong: "the shortest length": Python's min() over the lengths (iterates n, compares 0-d tensors: __lt__ then
    __bool__, a host read per sequence), used as the clamp floor.  EXPECTED: WRONG."""
    shortest = min(n.detach())
    return _r77_tail(model, x.sum(1) / n.clamp(min=shortest)[:, None], y, bf16)


def dropout_tiny(model, x, n, y, bf16):
    """Wrong: "a little regularization does not hurt": F.dropout(p=1e-7) on the pooled means: the global generator
    moves (a graph replays the capture's offsets), and a feature is dropped now and then.  EXPECTED: WRONG."""
    pooled = F.dropout(x.sum(1) / n[:, None], p=1e-7, training=True)
    return _r77_tail(model, pooled, y, bf16)


def label_smoothing_tiny(model, x, n, y, bf16):
    """Wrong: cross_entropy(label_smoothing=1e-4), "the trainer's default": not the slow step's loss.
    EXPECTED: WRONG."""
    return _r77_tail(model, x.sum(1) / n[:, None], y, bf16, label_smoothing=1e-4)


def loop_through_torch_ops(model, x, n, y, bf16):
    """Wrong: the slow step's loop over positions, spelled with ATen's operators (torch.ops.aten.select.int,
    add.Tensor): a kernel per position.  EXPECTED: WRONG."""
    aten = torch.ops.aten
    pooled = aten.zeros_like.default(aten.select.int(x, 1, 0))
    for t in range(x.shape[1]):
        pooled = aten.add.Tensor(pooled, aten.select.int(x, 1, t))
    return _r77_tail(model, pooled / n[:, None], y, bf16)


def weights_by_repeat_interleave(model, x, n, y, bf16):
    """Wrong: each position weighted by 1/length, laid out by torch.repeat_interleave with a tensor of repeats and no
    output_size: the output's size is read on the host.  EXPECTED: WRONG."""
    b, p, _ = x.shape
    reps = torch.full_like(n, p, dtype=torch.long)
    w = torch.repeat_interleave(1.0 / n, reps).reshape(b, p)
    return _r77_tail(model, (x * w[:, :, None]).sum(1), y, bf16)


def weights_by_repeat_interleave_sized(model, x, n, y, bf16):
    """Right: the same weights with output_size= given (no read of the size).  EXPECTED: RIGHT."""
    b, p, _ = x.shape
    reps = torch.full_like(n, p, dtype=torch.long)
    w = torch.repeat_interleave(1.0 / n, reps, output_size=b * p).reshape(b, p)
    return _r77_tail(model, (x * w[:, :, None]).sum(1), y, bf16)


def cumsum_last(model, x, n, y, bf16):
    """Right: the running sum over positions, its last entry (the padding adds zeros at the end).  EXPECTED: RIGHT."""
    return _r77_tail(model, x.cumsum(1)[:, -1] / n[:, None], y, bf16)


def sum_of_transpose(model, x, n, y, bf16):
    """Right: the sum over the last axis of x.transpose(1, 2), divided by n.unsqueeze(-1), the loss by
    F.nll_loss(F.log_softmax(logits.float(), -1), y).  EXPECTED: RIGHT."""
    pooled = x.transpose(1, 2).sum(-1) / n.unsqueeze(-1)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.nll_loss(F.log_softmax(logits.float(), -1), y)


def divide_then_sum(model, x, n, y, bf16):
    """Right: every position divided by its sequence's length, then summed: (x / n[:, None, None]).sum(1).
    EXPECTED: RIGHT."""
    return _r77_tail(model, (x / n[:, None, None]).sum(1), y, bf16)


def loss_by_logsumexp_gather(model, x, n, y, bf16):
    """Right: cross-entropy by hand in float32, logsumexp minus the gathered logit, mean.  EXPECTED: RIGHT."""
    pooled = x.sum(1) / n[:, None]
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled).float()
    return (torch.logsumexp(logits, -1) - logits.gather(1, y[:, None]).squeeze(1)).mean()


R77_CTYPES_POINTER = R77 + "n's lengths read through ctypes.string_at(n.data_ptr())"
R77_CTYPES_FROM_ADDRESS = R77 + "n's lengths read by NumPy over ctypes' from_address(n.data_ptr())"
WRONG["check_fast_loss"].update({
    R77 + "the lengths read back by NumPy from torch.save's bytes": shortest_by_torch_save,
    R77_CTYPES_POINTER: shortest_by_ctypes_pointer,
    R77_CTYPES_FROM_ADDRESS: shortest_by_ctypes_from_address,
    R77 + "`0.0 in n` as an empty-sequence guard": empty_guard_by_in,
    R77 + "Python's min() over n as the clamp floor": empty_guard_by_builtin_min,
    R77 + "F.dropout(p=1e-7) on the pooled means": dropout_tiny,
    R77 + "cross_entropy(label_smoothing=1e-4)": label_smoothing_tiny,
    R77 + "the loop spelled with torch.ops.aten.select.int / add.Tensor": loop_through_torch_ops,
    R77 + "weights by repeat_interleave without output_size": weights_by_repeat_interleave,
})
ALSO_RIGHT["check_fast_loss"].update({
    R77 + "weights by repeat_interleave with output_size=": weights_by_repeat_interleave_sized,
    R77 + "the running sum's last entry (cumsum)": cumsum_last,
    R77 + "the sum over x.transpose(1, 2), nll_loss of log_softmax": sum_of_transpose,
    R77 + "each position divided by its length, then summed": divide_then_sum,
    R77 + "cross-entropy by logsumexp minus the gathered logit": loss_by_logsumexp_gather,
})
NEEDS_A_GPU["check_fast_loss"].update({  # on a CPU: PART (the address taken, `nb08._ADDRESSES`)
    R77_CTYPES_POINTER: (),
    R77_CTYPES_FROM_ADDRESS: (),
})
# Answers that may end the process they run in on a GPU: there the host reads at a device address (most likely SIGSEGV,
# no FAIL); the tests judge each in a fresh process (tests/test_exercises.py), where a crash shows as not rejected.
ENDS_THE_PROCESS_ON_A_GPU: dict[str, dict[str, str]] = {"check_fast_loss": {
    R77_CTYPES_POINTER: "not yet run on a GPU: ctypes.string_at at a device address, a host read there (SIGSEGV is "
                        "likely, which is no FAIL)",
    R77_CTYPES_FROM_ADDRESS: "not yet run on a GPU: NumPy reads at a device address (SIGSEGV is likely)",
}}
# ...and its answers to check_fast_step (a GPU's to judge): the course's graph step with one of the losses above
def step_with_label_smoothing_tiny(model, data):
    """Wrong: the course's graph step whose loss carries label_smoothing=1e-4.  EXPECTED: WRONG (perhaps within the
    bf16-derived tolerance on a GPU; exercise 1 FAILs the loss)."""
    return _solution_step_with_loss(label_smoothing_tiny, model, data)


def step_with_dropout_tiny(model, data):
    """Wrong: the graph step with F.dropout(p=1e-7) on the pooled means.  EXPECTED: WRONG."""
    return _solution_step_with_loss(dropout_tiny, model, data)


def step_with_cumsum_last(model, data):
    """Right: the graph step with the cumsum pooling.  EXPECTED: RIGHT."""
    return _solution_step_with_loss(cumsum_last, model, data)


WRONG["check_fast_step"][R77 + "the graph step whose loss carries label_smoothing=1e-4"] = \
    step_with_label_smoothing_tiny
WRONG["check_fast_step"][R77 + "the graph step with F.dropout(p=1e-7) on the pooled means"] = step_with_dropout_tiny
ALSO_RIGHT["check_fast_step"][R77 + "the graph step with the cumsum pooling"] = step_with_cumsum_last


# Call CL (the H200, PyTorch 2.11, 2026-12-02): rounds 76 and 77's answers on a GPU. The step's time ran out before
# pytest's summary, so for the first four the test's failure was recorded without its message: what the check said
# (a verdict other than FAIL, or an error of its own) is not known, only that the test did not see a FAIL with a hint.
_CL_UNSEEN = ("the test failed on the H200 (call CL, 2026-12-02): no FAIL with a hint was seen; the message was "
              "cut off with the step's time, so whether the check PASSed it or raised is not known")
# After fix08an, on the H200 (call CN): round 76's two NumPy poolings FAIL there. np.asarray(x) raises in
# Tensor.__array__ (a GPU's memory), and NumPy's from_dlpack refuses the capsule that x.__dlpack__() handed it; the
# recorder now names such a read when the answer raises its error, or raises after such an export
# (`nb08._raised_in_read`), where the error was shown unjudged before.  Their entries are removed.  The ctypes reads
# stay: no guard stops a host read at a device address soundly on this Python (3.11: no sys.monitoring, whose CALL
# event would give ctypes' calls their address; from_address lives on ctypes' immutable metatypes, and a profile hook
# sees a C call without its arguments), so they may still end the process (ENDS_THE_PROCESS_ON_A_GPU).
MISJUDGED_ON_A_GPU.setdefault("check_fast_loss", {}).update({
    R77_CTYPES_POINTER: ("ends its process with signal 11 (SIGSEGV) on the H200 (round 77's judge, call CL): "
                         "ctypes reads a device address on the host; a notebook's kernel would die instead of a FAIL"),
    R77_CTYPES_FROM_ADDRESS: _CL_UNSEEN + " (its twin ends its process with SIGSEGV)",
})
# After fix08an, on the H200 (call CN): the graph step with F.dropout(p=1e-7) FAILs there (it PASSed on the
# H200, call CL): every call of step() and losses() is judged by the global generators' states before and after it
# (`nb08._drew`), and a replay of a graph that captured a draw moves the GPU's generator.  Its entry is removed.  The
# smoothing of 1e-4 stays: fix08an built no case where it exceeds the bf16-derived tolerance of the step's losses.
MISJUDGED_ON_A_GPU["check_fast_step"].update({
    R77 + "the graph step whose loss carries label_smoothing=1e-4":
        "PASSed on the H200 (round 77's judge, call CL): a smoothing of 1e-4 moves the loss less than the step's "
        "tolerance, and the step's check does not compare against exercise 1's operators (still expected after "
        "fix08an; still so on the H200 in call CN)",
})


# ---------------------------------------------------------------- round 78's adversary (exercise 1)
# adv143, judged on this CPU, 2026-12-02, the checks as of round 77 (each docstring is the adversary's student's
# reasoning and EXPECTED).  Eleven answers; two wrong ones PASSed.  (1) `_pool_trimmed(x, n) if
# torch.cuda.memory_allocated() > 0 else _pool_full(x, n)`: torch.cuda.memory's queries were no device questions
# (0 on a CPU build), and the line guard (`nb08._LinesRun`) saw the line run, the helper never entered.  The fixes:
# the memory queries answered as an H200 holding the batch would (nonzero; `nb08._H200_MEMORY`), so it FAILs by the
# rerun's host read; and, more generally, the calls of the answer's own code that ran in neither run are left for a
# GPU (opcode tracing of its own frames, `nb08._calls`), as its lines are: the fix's own answer below (a device
# question no list answers, torch.cuda.get_arch_list(), [] on a CPU build) is PART on a CPU.  (2) a helper chosen
# when the cell ran, by torch.cuda.is_available(): on a CPU the answer is the host's path, and no rerun can choose
# again (MISJUDGED_ON_A_CPU; a CPU's PASS line now says what it covers).  The static loss buffer's FAIL now names its
# cause (the tensor returned was written by a later call).
R78 = "round 78's adversary: "


def _r78_tail(model, pooled, y, bf16):
    with torch.autocast(pooled.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(pooled)
    return F.cross_entropy(logits.float(), y)


def _r78_pool_trimmed(x, n):
    """(the GPU's path) 'cut to the longest sequence first': int(n.max()), the slow step's host read."""
    longest = int(n.max())
    return x[:, :longest].sum(1) / n[:, None]


def _r78_pool_full(x, n):
    return x.sum(1) / n[:, None]


# chosen once, when the cell runs (as the notebook's cell 4 chooses `device`): on a CPU machine _r78_pool_full
_R78_POOL = _r78_pool_trimmed if torch.cuda.is_available() else _r78_pool_full


def pool_chosen_when_the_cell_ran(model, x, n, y, bf16):
    """Wrong: 'pick the pooling once, at definition, like the notebook picks `device`': on a GPU the trimmed pooling
    (int(n.max()) on the host).  EXPECTED: WRONG (no CPU run can see it: MISJUDGED_ON_A_CPU)."""
    return _r78_tail(model, _R78_POOL(x, n), y, bf16)


def trims_by_storage_device_one_line(model, x, n, y, bf16):
    """Wrong: the device read from the storage, the GPU's pooling in a helper.  EXPECTED: WRONG (untyped_storage)."""
    pooled = _r78_pool_trimmed(x, n) if x.untyped_storage().device.type == "cuda" else _r78_pool_full(x, n)
    return _r78_tail(model, pooled, y, bf16)


def trims_when_cuda_memory_in_use(model, x, n, y, bf16):
    """Wrong: 'when CUDA memory is in use we are on the GPU: trim there'.  EXPECTED: WRONG (PASSed on a CPU before
    round 78's fix)."""
    pooled = _r78_pool_trimmed(x, n) if torch.cuda.memory_allocated() > 0 else _r78_pool_full(x, n)
    return _r78_tail(model, pooled, y, bf16)


def trims_when_cuda_memory_in_use_two_lines(model, x, n, y, bf16):
    """Wrong: the same, the trim inline in an if block.  EXPECTED: WRONG."""
    if torch.cuda.memory_allocated() > 0:
        x = x[:, :int(n.max())]
    return _r78_tail(model, x.sum(1) / n[:, None], y, bf16)


def trims_when_built_for_a_gpu(model, x, n, y, bf16):
    """Wrong (the fix's own, for the call guard): the same one-line choice on a device question that no list answers,
    torch.cuda.get_arch_list() ([] on a CPU build).  EXPECTED: WRONG (PART on a CPU: `_r78_pool_trimmed(x, n)` ran
    in neither run)."""
    pooled = _r78_pool_trimmed(x, n) if torch.cuda.get_arch_list() else _r78_pool_full(x, n)
    return _r78_tail(model, pooled, y, bf16)


_R78_LOSS_BUFFER: dict = {}


def loss_into_a_static_buffer(model, x, n, y, bf16):
    """Wrong: 'exercise 2's graph needs a static output: write the loss into one kept buffer and return it': a loss
    the caller keeps is overwritten by the next call.  EXPECTED: WRONG (its FAIL names the later write)."""
    loss = _r78_tail(model, x.sum(1) / n[:, None], y, bf16)
    key = (loss.device, loss.dtype)
    if key not in _R78_LOSS_BUFFER:
        _R78_LOSS_BUFFER[key] = torch.zeros((), device=loss.device, dtype=loss.dtype)
    buf = _R78_LOSS_BUFFER[key]
    buf.copy_(loss)
    return buf


def loss_as_a_one_element_vector(model, x, n, y, bf16):
    """Right: the loss reshaped to shape (1,).  EXPECTED: RIGHT."""
    return _r78_tail(model, x.sum(1) / n[:, None], y, bf16).reshape(1)


def pooled_by_sum_to_size(model, x, n, y, bf16):
    """Right: the sum over positions by Tensor.sum_to_size.  EXPECTED: RIGHT."""
    b, _, f = x.shape
    return _r78_tail(model, x.sum_to_size(b, 1, f).squeeze(1) / n[:, None], y, bf16)


def guards_by_is_nonzero(model, x, n, y, bf16):
    """Wrong: 'guard against empty sequences' with torch.is_nonzero, a host read.  EXPECTED: WRONG."""
    if not torch.is_nonzero((n > 0).all()):
        raise ValueError("empty sequence")
    return _r78_tail(model, x.sum(1) / n[:, None], y, bf16)


def pooled_by_trapezoid_plus_ends(model, x, n, y, bf16):
    """Right: sum = trapezoid + (first + last) / 2 over the padded positions.  EXPECTED: RIGHT."""
    s = torch.trapezoid(x, dim=1) + (x[:, 0] + x[:, -1]) / 2
    return _r78_tail(model, s / n[:, None], y, bf16)


def pooled_by_avg_pool1d(model, x, n, y, bf16):
    """Right: F.avg_pool1d over the padded length, times the length, over n.  EXPECTED: RIGHT."""
    t = x.shape[1]
    m = F.avg_pool1d(x.transpose(1, 2), kernel_size=t).squeeze(-1)
    return _r78_tail(model, m * t / n[:, None], y, bf16)


def nondeterministic_only_on_large_batches(model, x, n, y, bf16):
    """Wrong: 'for big batches, pool in bf16 to save bandwidth'.  EXPECTED: WRONG."""
    if x.shape[0] >= 256 and bf16:
        pooled = (x.bfloat16().sum(1) / n[:, None].bfloat16()).float()
    else:
        pooled = x.sum(1) / n[:, None]
    return _r78_tail(model, pooled, y, bf16)


R78_CHOSEN_AT_DEFINITION = R78 + "the pooling helper chosen by torch.cuda.is_available() when the cell ran"
R78_ARCH_LIST = R78 + "(the fix's own) int(n.max()) in a helper, if torch.cuda.get_arch_list(), on one line"
WRONG["check_fast_loss"].update({
    R78_CHOSEN_AT_DEFINITION: pool_chosen_when_the_cell_ran,
    R78 + "int(n.max()) in a helper, if x.untyped_storage().device is a GPU's, on one line":
        trims_by_storage_device_one_line,
    R78 + "int(n.max()) in a helper, if torch.cuda.memory_allocated() > 0, on one line": trims_when_cuda_memory_in_use,
    R78 + "int(n.max()) inline, if torch.cuda.memory_allocated() > 0": trims_when_cuda_memory_in_use_two_lines,
    R78_ARCH_LIST: trims_when_built_for_a_gpu,
    R78 + "every loss written into one kept buffer and returned": loss_into_a_static_buffer,
    R78 + "torch.is_nonzero((n > 0).all()) as an empty-sequence guard": guards_by_is_nonzero,
    R78 + "the pooling in bf16 for batches of 256 or more": nondeterministic_only_on_large_batches,
})
ALSO_RIGHT["check_fast_loss"].update({
    R78 + "the loss reshaped to shape (1,)": loss_as_a_one_element_vector,
    R78 + "the sum over positions by Tensor.sum_to_size": pooled_by_sum_to_size,
    R78 + "the sum as torch.trapezoid plus half the two ends": pooled_by_trapezoid_plus_ends,
    R78 + "the mean by F.avg_pool1d, times the padded length": pooled_by_avg_pool1d,
})
NEEDS_A_GPU["check_fast_loss"][R78_ARCH_LIST] = ()  # on a CPU: PART (a call of its own code ran in neither run)
MISJUDGED_ON_A_CPU["check_fast_loss"][R78_CHOSEN_AT_DEFINITION] = (
    "PASSes on a CPU (round 78's adversary, 2026-12-02): the helper was chosen when the answers' module was imported, "
    "by torch.cuda.is_available(), False there; the check's reruns as a GPU's answer its device questions during the "
    "call only, and no CPU run can make that choice again: only a GPU sees its path: FAIL there, a host read, "
    "on the H200 in call CO)")
