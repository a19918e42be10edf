"""Checks for the exercises of notebook 08 (profiling): the capstone, a slow training step made fast,
its given code and its checks.

Exercise 1, `fast_loss(model, x, n, y, bf16)` (CPU and GPU): the slow step's arithmetic without its
Python loop over positions, on the padded, static shape.  A property over generated batches (any batch
size, padded length and lengths, MLPs of one to four layers, logits from tiny to large, positions whose
large values cancel, real tokens of zeros; one batch's x a view of a larger tensor, `as_a_view`): the loss
within the most that rounding can move it (a first-order bound from the format actually used, as in notebook 06),
a float32 loss whose backward() reaches every
weight (the last bias with the slow step's gradient), inputs and PyTorch's global settings left as they were, bf16
matrix products only when asked (each Linear's, the loss computed from them with a gradient that is not zero, and no
float32 arithmetic on the weights beside them), no other arithmetic in bf16
(anything but casts, views and selections that returns bf16), and the same operations whatever the lengths and
however long the padding, large the batch or wide the features, grown past the GPU's sizes (no value read on the
host, no tensor copied there from the host or made from Python data, no loop).  On a GPU, the course batch also
from other callers' streams (`_from_other_streams`): PyTorch's default stream and a side stream made current, each
busy right before it writes new values into x, n and y, the loss and its gradient read on it right after (every other
stream the answer queues work on starting late, `streams.widened`), in both modes: the loss as the same call gives it
with the caller's stream idle, and the call back before the caller's earlier work ends (no wait on the host, by any
API); from the side stream, the default stream busy longer, which no work of the call may wait for.

Exercise 2, `make_fast_step(model, data)` (GPU) -> `(step, losses)`: `step()` trains one step on the
next batch, `losses()` returns every loss so far as a tensor on the GPU.  The check runs its own slow
step and an eager bf16 step (the references, once per process), then yours, 40 steps, in one run that is
checked, timed and profiled at once, so that no call is observed differently from another:

- every stream the answer can take from PyTorch starts the run busy (a kernel of BUSY_S seconds that
  they all wait for), so a host that never waits for the GPU queues the whole run before the GPU starts;
- the steps are called from four callers in turn (the default stream, a side stream entered with `with`,
  one made current with `set_stream`, the default stream again), `losses()` at the end of each;
- correct: after every step the weights are copied on the caller's stream, and each parameter's update of
  each step, and every loss that each `losses()` call returned, lie within a multiple of the gap that the
  eager bf16 step shows on this device (each with a floor); then the same again from a second
  `make_fast_step` on a fresh model, with every stream but the caller's starting LATE_MS late in each
  step (`streams.widened`), so that kernels that do not wait for their batch's copy read it too early
  (profiled too, so that the runs look alike to the answer; skipped when the first run's trace shows a wait,
  which fails the check below at once: a polling answer's profile holds a call per query(), and a second run
  cost it as long as the first);
- the training inside the calls: the kernels that the calls of `step()` and `losses()` queue (a graph's
  belong to its launch) add up to at least WORK_SHARE of the eager bf16 step's kernel time, step for step;
- fast: the run's time (the slower of the host's, less any time a full launch queue blocked it, and the
  GPU's), against the slow step's, under the same profiler: at least SPEEDUP;
- clean, from the run's trace: no host call that waits for the GPU, and the host never still inside a call
  when the GPU finished its head start; at most LAUNCH_RATIO of the slow step's launches in any step; and,
  where batches are copied from the host, at least HIDDEN of the copies' time that kernels could cover
  (the shorter of the two) ran under the step's kernels.

SPEEDUP and LAUNCH_RATIO were set from runs on an H100 (PyTorch 2.11) and under `tools.smaller_gpu` on it
(30% of the SMs, two host cores), with the earlier check's timing (CUDA events, no profiler): see README's
measurements.  BUSY_S, HIDDEN, NEGLIGIBLE, LATE_MS, WORK_SHARE and the gap factors and floors of the tolerances
are not yet measured on a GPU with this run.
"""

from __future__ import annotations

import ast
import bisect
import copy
import dis
import functools
import inspect
import itertools
import linecache
import math
import os
import random
import re
import sys
import sysconfig
import tempfile
import threading
import time
import types
import warnings
import weakref
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils._python_dispatch import TorchDispatchMode

from .. import profiling

# The given code (the capstone's data, model and slow step) lives in utils/capstone.py, which lecture 08 imports without
# these checks (so that a change to a check leaves the lecture's reference outputs current); its names are the
# exercises' too (nb08.SlowStep, nb08.make_data...).
from ..capstone import CPU_SIZES, GPU_SIZES, LR, SlowStep, make_data, make_model, sizes, slow_step  # noqa: F401
from ..device import has_cuda
from ..formatting import format_time
from ..timing import gpu_sleep
from . import Checker, Exercise, Findings, LeftForGPU, exercise, reference, register, what_returned
from .properties import for_all, st
from .settings import (
    EVERY,
    FP32_PRECISIONS,
    MATMUL,
    PROCESS,
    PROCESS_WIDE,
    TF32_OFF,
    TF32_SETTING,
    TORCH_FUNCTIONS,
    default_device,
    flushes_denormals,
    keeping,
    precision,
    put_back,
    set_precision,
    tf32_restore,
    tf32_saved,
)
from .settings import (
    read as read_settings,
)
from .streams import _LateStreams, calibrate_sleeps, widened

NOTEBOOK = "08_profiling"

# ------------------------------------------------------------------------------------------------
# Exercise 1: the slow step's arithmetic on a static shape (CPU and GPU)
# ------------------------------------------------------------------------------------------------
EPS32 = torch.finfo(torch.float32).eps
BF16_ROUNDING = 2.0**-8  # bf16 keeps 8 significant bits: rounding to nearest moves a number by at most 2**-8 of it
EXAMPLES_1 = 20
MATRIX_PRODUCTS = {"linear", "matmul", "__matmul__", "__rmatmul__", "mm", "addmm", "bmm", "baddbmm", "addbmm",
                   "einsum", "mv", "addmv", "dot", "vdot", "inner", "tensordot", "bilinear"}
# ...and as PyTorch's dispatcher runs them, beneath those names (measured on PyTorch 2.13: F.linear is addmm, @ is mm,
# einsum bmm, inner, tensordot and multi_dot mm, F.bilinear _trilinear): where `_Beneath` reads the precision that each
# float32 product runs in (`_float32_precisions`), whatever function of PyTorch's the answer reached it through
GEMMS = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "_addmm_activation", "_trilinear"}
# print(t), f"{t}" and torch.allclose read values on the host too
HOST_READS = {"item", "tolist", "numpy", "cpu", "__int__", "__float__", "__bool__", "__index__", "__complex__",
              "__array__", "__format__", "__repr__", "__str__", "allclose", "equal", "is_nonzero"}
# ...and a tensor's storage, whose values Python reads without any operation of PyTorch's (round 32's adversary: the
# reads of a storage, or of a DLPack export, went unseen): naming one is refused as a read, a storage in Python's hands
# being readable there by means no mode sees (its elements, bytes(), tolist(), a copy to the host), while x needs none;
# with a hint of its own (STORAGE_HINT; round 73's adversary: x rebuilt by set_(x.untyped_storage(), offset, size,
# stride), which reads nothing, FAILed with the hint about reading values)
STORAGES = {"untyped_storage", "storage", "_typed_storage"}
HOST_READS |= STORAGES
# A tensor's memory handed to another library by DLPack: on the host (NumPy's from_dlpack, the CPU standing in for the
# GPU) a read of its values there, unless torch.from_dlpack takes it (round 32's adversary: `np.from_dlpack(n) > 0`
# PASSed on a CPU; on a GPU NumPy refuses device memory)
EXPORTS = {"__dlpack__"}
# Functions that make a tensor from nothing: without device=, on the host
CREATIONS = {"arange", "tensor", "as_tensor", "zeros", "ones", "full", "empty", "linspace", "logspace", "eye", "rand",
             "randn", "randint", "randperm", "asarray", "scalar_tensor", "empty_strided", "tril_indices",
             "triu_indices"}
# ...except those of FROM_DATA given a tensor: as_tensor, asarray and tensor return it (or a cast or copy of it) where
# it is (round 32's adversary: `n = torch.as_tensor(n, dtype=x.dtype)` FAILed as "made on the host")
MOVES = {"to", "cuda", "copy_", "type_as"}  # what copies a tensor to another device
# Functions that make a tensor from Python data (a list, a number, a NumPy array), and where the data sits in their
# arguments: made on the host and copied to the device named, at every call, with device= too (the 08 adversary of
# round 17: torch.tensor(list(range(T)), device=x.device) passed; a CUDA graph's capture refuses the copy)
FROM_DATA = {"tensor": 0, "as_tensor": 0, "asarray": 0, "new_tensor": 1}
# ...and beneath the names (round 20's adversary: `0 in n`, Tensor.__contains__, read n on the host inside its own
# Python code, unseen by a TorchFunctionMode; x.new(list) and torch.tensor(data=list) made tensors from Python data,
# FROM_DATA's names and positions missing them): what PyTorch's dispatcher runs inside any function, seen by a
# TorchDispatchMode.  A value read on the host, a result sized by the values, inside a function written in Python
# (its reads are Python code, the same on any device: PyTorch's C++ reads some values on a CPU only, F.one_hot checking
# its labels, and not on a GPU), and a tensor made from Python data (every route there, torch.tensor, as_tensor,
# Tensor.new, new_tensor, by any argument, lifts it so).
READ_OPS = {"_local_scalar_dense", "equal", "is_nonzero", "_assert_async"}
SIZED_OPS = {"nonzero", "masked_select", "_unique", "_unique2", "unique_dim", "unique_consecutive", "bincount",
             "argwhere", "nonzero_numpy"}
LIFT_OPS = {"lift_fresh", "lift_fresh_copy"}
# What a bf16 tensor may go through without being rounded again (besides the matrix products): casts, views, copies,
# selections and ReLU, which return values of their inputs.  Any other operation that returns bf16 is arithmetic in
# bf16, however it is spelled (in place or not): a list of the rounding ones would miss one (div_ passed).
EXACT_IN_BF16 = {"to", "type", "type_as", "bfloat16", "half", "clone", "detach", "detach_", "contiguous", "view",
                 "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze", "t", "transpose",
                 "permute", "movedim", "swapaxes", "expand", "expand_as", "broadcast_to", "__getitem__", "__setitem__",
                 "__get__", "gather", "index_select", "take_along_dim", "select", "narrow", "split", "chunk", "unbind",
                 "cat", "concat", "concatenate", "stack", "copy_", "requires_grad_", "retain_grad", "relu", "relu_",
                 "threshold", "clamp", "clip", "clamp_min", "clamp_max", "max", "amax", "maximum", "min", "amin",
                 "minimum", "abs", "neg", "__neg__", "negative", "where", "masked_fill", "pad", "flip", "roll",
                 "repeat", "tile", "sort", "topk", "zeros_like", "ones_like", "empty_like", "full_like", "new_zeros",
                 "new_ones", "new_empty", "new_full", "fill_", "zero_", *CREATIONS}
# ...in place too, and ReLU by its other names (round 19's adversary: clamp_(min=0), masked_fill_, F.threshold, whose
# function is _threshold, and F.hardtanh(a, 0, inf) FAILed as bf16 arithmetic)
EXACT_IN_BF16 |= {f"{name}_" for name in EXACT_IN_BF16 if not name.endswith("_")} | {
    "_threshold", "hardtanh", "hardtanh_", "relu6"}
# A product by a boolean mask (a * (a > 0)) returns values of its input, or zeros: exact too
MASK_PRODUCTS = {"mul", "mul_", "__mul__", "__rmul__", "__imul__", "multiply"}
# Formats narrower than float32: any arithmetic outside the matrix products that returns one rounds (round 19: float16
# division with bf16=True passed, its rounding under bf16's bound, and a sum past 65504 overflows)
NARROW = (torch.bfloat16, torch.float16)
# Operations whose result's size depends on the values (a boolean index, nonzero...): on a GPU the size is read on the
# host, a wait, and a CUDA graph's capture refuses it, whatever the data happen to keep (round 19's adversary:
# x[n > 0] passed, every drawn length being 1 or more).  Conditional ones: `_data_shaped`.
DATA_SHAPED = {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "_unique", "_unique2",
               "bincount", "nonzero_numpy"}
# Casts to bf16 (copy_ into a bf16 tensor is one), and casts back to a wider float: a value that a cast to bf16 has
# rounded (changed) may reach a matrix product through casts and EXACT_IN_BF16's operations, and nothing else (round
# 18: x.sum(1) rounded by .to(torch.bfloat16), then divided in float32, passed: the cast was taken for exact).
CASTS = {"to", "type", "type_as", "bfloat16", "half", "copy_"}
UPCASTS = {"float", "double"}
# Of EXACT_IN_BF16's operations that take two tensors, those whose second gives only a dtype or a shape: the result
# stands for the first alone (`Operations._behind`)
FIRST_ONLY = {"to", "type_as", "view_as", "expand_as", "reshape_as"}
# ...and any other operation that passes values on (EXACT_IN_BF16's) into a narrow tensor from a wider float that the
# narrow format cannot hold rounds as a cast does, whether it returns that tensor or writes it (round 32's adversary:
# `buf[:] = s`, torch.cat([s], out=buf) and torch.as_tensor(s, dtype=torch.bfloat16) rounded the sums, unseen; and a
# rounded value written into a float32 buffer by __setitem__, which returns None, lost its mark).  Not these, which
# take a tensor for its shape, dtype or device only, never its values:
SHAPE_ONLY = {"zeros_like", "ones_like", "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full",
              "zero_", *(CREATIONS - set(FROM_DATA))}
# A batch grown (its loss the same) must run the same operations.  It grows past the GPU's sizes (GPU_SIZES), so that a
# loop over blocks as large as the task's own batch (64 positions, 512 sequences: one block there) runs once on the
# smallest batch and more than once grown: growing by a few only missed blocks larger than the few (the 08 adversary
# of round 17: blocks of 64 positions, micro-batches of 128 and of 256 sequences passed)
MORE_PADDING = 3  # positions of zeros added to a batch at least, and up to more than GPU_SIZES["length"] in all
MORE_FEATURES = 2  # features of zeros (with zero weights) added to a batch
# ...and the model grown where the batch does not reach (round 21's adversary: cross-entropy with a Python loop over
# the classes passed, the classes never grown): classes whose logits lie far below (zero weights, a bias of
# -UNLIKELY), and hidden units of zero weights in and out (the loss the same, or as near as makes no difference)
MORE_CLASSES, MORE_HIDDEN, UNLIKELY = 3, 2, 1e4


@dataclass(frozen=True)
class Batch:
    """A padded batch and an MLP for fast_loss: built from these numbers (`build`), on any device."""

    lengths: tuple[int, ...]  # each sequence's length, 1 to `padded`
    padded: int
    features: int
    hidden: tuple[int, ...]  # the widths of the MLP's hidden layers (none: one Linear)
    classes: int
    scale: float  # the last layer's weights and bias times this: logits from tiny to large
    cancel: float  # 0, or a value added at one position and subtracted at another of each sequence
    seed: int
    zeros: bool = False  # the last real position of each sequence all zeros: a real token, counted in n
    strided: bool = False  # x a view of a larger tensor, not contiguous, at a storage offset (`as_a_view`); else a
    # contiguous slice of one at a storage offset (`as_a_slice`)

    def __str__(self) -> str:
        widths = "→".join(str(w) for w in (self.features, *self.hidden, self.classes))
        lengths = (list(self.lengths) if len(self.lengths) <= 64 else  # (the task's 512: their range)
                   f"{min(self.lengths)} to {max(self.lengths)}")
        text = (f"{len(self.lengths)} sequence{'s' if len(self.lengths) > 1 else ''} of lengths {lengths} "
                f"padded to {self.padded}, {self.features} feature{'s' if self.features > 1 else ''}, an MLP {widths}")
        if self.scale != 1:
            text += f" (last layer ×{self.scale:g})"
        if self.cancel:
            text += f", values ±{self.cancel:g} at two positions of each sequence"
        if self.zeros:
            text += ", the last real position of each sequence all zeros"
        if self.strided:
            strides, offset = view_layout(len(self.lengths), self.padded)
            text += (f", x a view of a larger tensor (not contiguous: strides {strides}, storage offset {offset}, as a "
                     "slice of a padded buffer)")
        else:
            offset = slice_offset(self.padded, self.features)
            text += f", x a contiguous slice of a larger tensor (storage offset {offset})"
        return text


AROUND_THE_VIEW = 1e4  # the memory around a case's x (`as_a_view`, `as_a_slice`): a read of it moves the loss far


def view_layout(batch: int, padded: int) -> tuple[tuple[int, int, int], int]:
    """The strides and storage offset of a strided case's x (`as_a_view`)."""
    return (padded + 1, 1, (batch + 1) * (padded + 1)), padded + 2


def as_a_view(x: torch.Tensor) -> torch.Tensor:
    """x's values (batch × padded length × features) in a view of a larger tensor, where x lies as a slice of a padded
    buffer may: the features outermost in memory, one sequence and one position more than x's (at the front: a storage
    offset), every other element AROUND_THE_VIEW; on x's device.  Strides no contiguous batch has (`view_layout`): an
    answer that assumes a contiguous batch's reads other memory (round 72's last adversary, adv129: x read through
    x.as_strided((B, T, F), (T*F, F, 1), x.storage_offset()) PASSed, every batch the check built being contiguous)."""
    b, t, f = x.shape
    view = x.new_full((f, b + 1, t + 1), AROUND_THE_VIEW).permute(1, 2, 0)[1:, 1:]
    with torch.no_grad():
        view.copy_(x)
    assert (view.stride(), view.storage_offset()) == view_layout(b, t) and view.shape == x.shape
    return view


def slice_offset(padded: int, features: int) -> int:
    """The storage offset of a contiguous case's x (`as_a_slice`): one sequence's elements."""
    return padded * features


def as_a_slice(x: torch.Tensor) -> torch.Tensor:
    """x's values (batch × padded length × features) in a contiguous slice of a larger tensor, as tokens[i] of a
    (batches, B, T, F) buffer is: one sequence more before x's (a storage offset, `slice_offset`) and one after, every
    other element AROUND_THE_VIEW; on x's device.  Round 73's adversary (adv133): x.contiguous() then read through
    as_strided(..., storage_offset=0) PASSed, every contiguous x the check built starting its storage (the strided
    case's .contiguous() copies), where the task says x may lie anywhere in its memory; it read the sequence before."""
    b, t, f = x.shape
    view = x.new_full((b + 2, t, f), AROUND_THE_VIEW)[1:-1]
    with torch.no_grad():
        view.copy_(x)
    assert view.is_contiguous() and view.storage_offset() == slice_offset(t, f) and view.shape == x.shape
    return view


def laid_as(case: Batch) -> Callable[[torch.Tensor], torch.Tensor]:
    """How a case lays its x out in memory (`build`), for the check's other batches of the case: the same layout, so
    that their calls are compared with calls on it (an operation that copies a strided batch, x.contiguous(), does
    nothing on a contiguous one)."""
    return as_a_view if case.strided else as_a_slice


def batches() -> st.SearchStrategy[Batch]:
    """Batches of 1 to 9 sequences of any lengths (1 and the padded length included) padded to 1 to 40 positions,
    MLPs of one to four layers, logits scaled from 0.01 to 100 times (round 24's adversary: an unstable cross-entropy
    passed, no logit gap above ~8.6 ever drawn), sums whose large terms cancel, and real tokens of zeros."""
    padded = st.integers(1, 40)
    return padded.flatmap(lambda length: st.builds(
        Batch, lengths=st.lists(st.integers(1, length), min_size=1, max_size=9).map(tuple), padded=st.just(length),
        features=st.integers(1, 12), hidden=st.lists(st.integers(1, 16), max_size=3).map(tuple),
        classes=st.integers(2, 10), scale=st.sampled_from([1.0, 0.01, 10.0, 100.0]),
        cancel=st.sampled_from([0.0, 2.0**10, 2.0**14]), seed=st.integers(0, 2**16), zeros=st.booleans()))


# The smallest batch (where Hypothesis shrinks to), and the task's own sizes on the CPU: the course's model and
# a batch like make_data's.
SMALLEST_BATCH = Batch(lengths=(1,), padded=1, features=1, hidden=(), classes=2, scale=1.0, cancel=0.0, seed=0)
COURSE_BATCH = Batch(lengths=tuple(range(1, 33)) * 2, padded=32, features=16, hidden=(128, 128, 128), classes=10,
                     scale=1.0, cancel=0.0, seed=5)
# Real tokens of zeros: a length counted from the nonzero positions comes out short
ZERO_TOKENS_BATCH = Batch(lengths=(3, 1, 4, 2), padded=5, features=2, hidden=(4,), classes=3, scale=1.0, cancel=0.0,
                          seed=7, zeros=True)
# One token, a large weight and a confidently wrong label: the loss as steep in the pooled input as it gets, so that
# dividing by n plus a small constant (n + 1e-5: ~100 float32 ulps of the mean) lies outside what rounding can do
STEEP_BATCH = Batch(lengths=(1,), padded=1, features=1, hidden=(), classes=2, scale=10.0, cancel=0.0, seed=106)
# A hidden layer whose units all lie far from zero in bf16 (`exact_gradients` marks no gradient as able to jump): the
# hidden layers' gradients judged with bf16=True on a fixed case (round 69's second adversary: a fused bf16 Linear+ReLU
# whose backward divides by the batch again, and the body's gradient scaled by 1024 and never unscaled, FAILed only on
# a drawn MLP whose units happened to lie far from zero, every fixed case's being skipped as able to jump).  Its x is
# a view of a larger tensor (`as_a_view`: not contiguous, at a storage offset; its other batches too, so that its calls
# are compared with calls on the same layout), as the task allows: a layout assumed reads other memory (round 72's last
# adversary, adv129: x through as_strided with a contiguous batch's strides PASSed, every batch being contiguous)
FAR_FROM_ZERO_BATCH = Batch(lengths=(3, 1, 4, 2, 5), padded=6, features=3, hidden=(4,), classes=3, scale=1.0,
                            cancel=0.0, seed=2, strided=True)
# Real tokens past the GPU's padded length: an answer that sums the first GPU_SIZES["length"] positions only passed
# (round 19's adversary), every generated token lying at position 40 or before
LONG_BATCH = Batch(lengths=(GPU_SIZES["length"] + 8, 1, GPU_SIZES["length"] + 3), padded=GPU_SIZES["length"] + 8,
                   features=3, hidden=(4,), classes=3, scale=1.0, cancel=0.0, seed=11)
# Real tokens past any cap a student might think safe: an answer that sums the first 128 positions only passed (round
# 71's last adversary, adv124: "a static shape, twice the course's padding"), no case judged by value being padded past
# LONG_BATCH's 72 positions and the grown batches being compared by their operations only; cheap (2 x 300 x 1)
FAR_PADDED_BATCH = Batch(lengths=(300, 131), padded=300, features=1, hidden=(), classes=2, scale=1.0, cancel=0.0,
                         seed=12)  # (even: bf16=False first, where the cap at 128 is off by ~480 times the bound)

# The task's own sizes, as the notebook states them and make_data makes them on a GPU (GPU_SIZES: "sequences of 8 to
# 64 positions of 64 features, zero-padded to 64, in batches of 512"), in one case judged for its value, with the
# weights changed and x, n and y refilled as every case is: an answer that branches on one of those sizes takes that
# branch here (round 72's adversary, adv127: a mask built once and kept when x.shape[1] == 64, stale once n is
# refilled, PASSed, no case judged by value being padded to 64 positions, nor having 512 sequences or 64 features: the
# grown batches go past them).  The lengths span make_data's range, short and long in turn (the refill moves each
# sequence one place: every other one's real positions reach past its place's old length, so anything kept from the
# old lengths drops real tokens), with values ±1024 at two real positions of each sequence (a dropped one moves the
# mean by 16, where noise moves a mean of 64 positions by 1/8) and one Linear (ReLU layers of random weights blunt
# that): a mask kept from the old lengths moves the loss by 120 to 330 times bf16's bound over seeds 14-20, by 0.3 to 9
# times with three hidden layers or without the ±1024.  ~0.5 s of a check's CPU time
TASK_LENGTHS = range(GPU_SIZES["length"] // 8, GPU_SIZES["length"] + 1)
TASK_BATCH = Batch(lengths=tuple(TASK_LENGTHS[(k // 2 if k % 2 == 0 else -1 - k // 2) % len(TASK_LENGTHS)]
                                 for k in range(GPU_SIZES["batch"])),
                   padded=GPU_SIZES["length"], features=GPU_SIZES["features"], hidden=(), classes=GPU_SIZES["classes"],
                   scale=1.0, cancel=2.0**10, seed=14)  # (even: bf16=False first)


# Large logits, chosen (round 24's adversary: cross-entropy by hand with exp() and no max subtracted, -log(softmax +
# 1e-8), and logits clamped to [-30, 30] passed, the largest gap between a row's max logit and its label's being 8.55):
# a row's max above 88.7 (exp() overflows float32) and labels 30 and more below their row's max
LARGE_LOGITS_BATCH = Batch(lengths=(1, 2, 1, 3), padded=3, features=4, hidden=(), classes=5, scale=100.0, cancel=0.0,
                           seed=3)


def build(case: Batch, device: str) -> tuple[torch.nn.Sequential, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The case's MLP, padded batch x (zeros past each length), lengths n (float) and labels y, on `device`."""
    g = torch.Generator().manual_seed(case.seed)
    batch = len(case.lengths)
    n = torch.tensor(case.lengths, dtype=torch.float32)
    x = torch.randn(batch, case.padded, case.features, generator=g)
    if case.cancel:
        for b, length in enumerate(case.lengths):
            if length - case.zeros >= 2:  # not at the zero token
                up, down = torch.randperm(length - case.zeros, generator=g)[:2].tolist()
                x[b, up] += case.cancel
                x[b, down] -= case.cancel
    x *= (torch.arange(case.padded) < n[:, None])[..., None]
    if case.zeros:
        x[torch.arange(batch), n.long() - 1] = 0.0
    widths = (case.features, *case.hidden, case.classes)
    layers: list[torch.nn.Module] = []
    for k, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
        linear = torch.nn.Linear(fan_in, fan_out)
        scale = (case.scale if k == len(widths) - 2 else 1.0) / math.sqrt(fan_in)
        with torch.no_grad():  # PyTorch's default initialization, from the case's generator
            linear.weight.copy_((torch.rand(fan_out, fan_in, generator=g) * 2 - 1) * scale)
            linear.bias.copy_((torch.rand(fan_out, generator=g) * 2 - 1) * scale)
        layers += [linear, torch.nn.ReLU()]
    y = torch.randint(0, case.classes, (batch,), generator=g)
    x = laid_as(case)(x.to(device))  # (the view made on the device: .to() copies)
    return torch.nn.Sequential(*layers[:-1]).to(device), x, n.to(device), y.to(device)


@reference
def loss_and_bound(model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor, y: torch.Tensor,
                   bf16: bool) -> tuple[float, float]:
    """The slow step's loss for this batch, exactly (float64), and the most that rounding can move it, to first
    order: float32's for the sum over positions and the loss; for each Linear, its format's rounding of the
    inputs, weights and bias and of the output, and float32's accumulation, each weighted by how much the loss
    depends on it (its gradient, taken after the ReLU: a rounding that crosses zero moves the output as much)."""
    u = BF16_ROUNDING if bf16 else EPS32
    xd, nd, y = x.detach().double().cpu(), n.detach().double().cpu(), y.detach().cpu()
    pooled = (xd.sum(1) / nd[:, None]).requires_grad_()
    a, linears, after = pooled, [], []
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            w, b = layer.weight.detach().double().cpu(), layer.bias.detach().double().cpu()
            z = a @ w.T + b
            z.retain_grad()
            linears.append((a.detach(), w, b, z))
            a = z
        else:
            a = layer(a)
            a.retain_grad()
            after.append(a)
    loss = F.cross_entropy(a, y)
    loss.backward()
    assert pooled.grad is not None
    bound = (pooled.grad.abs() * (x.shape[1] * EPS32 * xd.abs().sum(1) / nd[:, None]
                                  + 4 * EPS32 * pooled.detach().abs())).sum()
    for k, (inputs, w, b, z) in enumerate(linears):
        grad = after[k].grad if k < len(after) else z.grad
        assert grad is not None
        terms = inputs.abs() @ w.abs().T  # sum_i |a_i w_ji|: what the products of each output add up
        error = (2 * u + w.shape[1] * EPS32) * terms + u * (b.abs() + z.detach().abs())
        bound = bound + (grad.abs() * error).sum()
    bound = bound + 8 * EPS32 * (loss.detach().abs() + linears[-1][3].detach().abs().max())
    return float(loss.detach()), float(bound)


# The gradient of the loss for the last Linear's bias is the batch's mean of softmax(logits) - one_hot(labels): a
# gradient that drops the softmax's normalizer (its logsumexp detached, say) is off by the mean of the softmax's rows,
# 1 in L1 exactly, while each row of the right one is 2 at most in L1.  Within this share of the exact gradient's L1
# norm plus the floor, a right answer's lies far inside (0.0083 at most in L1 over 300 generated batches on the CPU,
# in bf16; 1.7e-4 in float32), a missing normalizer far outside (1 > 0.25 * 2 + 0.05).  The logits are continuous in the
# weights, ReLU or not, so that a rounding cannot move this gradient far (an earlier layer's can jump).
BIAS_GRADIENT_SHARE, BIAS_GRADIENT_FLOOR = 0.25, 0.05


@reference
def last_bias_gradient(model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor, y: torch.Tensor
                       ) -> torch.Tensor:
    """The slow step's gradient of its loss for the model's last bias, exactly (float64, on the host)."""
    a = x.detach().double().cpu().sum(1) / n.detach().double().cpu()[:, None]
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            a = a @ layer.weight.detach().double().cpu().T + layer.bias.detach().double().cpu()
        else:
            a = layer(a)
    return (F.softmax(a, dim=1) - F.one_hot(y.detach().cpu(), a.shape[1]).double()).mean(0)


# Every other parameter's gradient (round 20's adversary: a custom autograd.Function whose backward forgot ReLU's mask
# had the right loss and last bias's gradient, and earlier layers' gradients off by 79% to 290%): within this share of
# the exact gradient's L1 norm, plus this share of the L1 norm of its terms' magnitudes (what the batch's examples add
# up to before they cancel), plus what the Linear's inputs moved by DOUBT times the slow step's rounding add, for each
# Linear whose gradient no rounding can make jump: one with no ReLU nearer the loss holding a unit that lies within
# that of zero (a rounding that crosses zero switches its unit, and the gradients flowing back through it).
GRADIENT_SHARE, GRADIENT_TERMS_SHARE, DOUBT = 0.25, 0.05, 8.0
SOFTMAX_ROUNDING = 4.0  # ulps of 1 that float32 may move each element of softmax(logits) - one_hot(y) by
# ...with bf16=False, float32 throughout: both shares float32-sized (round 69's second adversary: the saved tensors
# packed to float8_e4m3fn or to int8 with a scale, and the logits' gradient quantized to 255 levels by float32 round(),
# passed within 0.25, their gradients off by 0.13, 0.24 and 0.029 of their L1 norm on the course batch, the solution's
# by 2.6e-7).  What float32's rounding of the pooled mean and of the logits may move is added to every bound (DOUBT
# times the slow step's, carried back through the weights), so that these shares cover the accumulations only.
FLOAT32_GRADIENT_SHARE = FLOAT32_GRADIENT_TERMS_SHARE = 1e-4


@reference
def exact_gradients(model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor, y: torch.Tensor, bf16: bool
                    ) -> list[tuple[torch.Tensor, float, bool]]:
    """For each parameter, in model.parameters()'s order: the slow step's gradient exactly (float64, on the host);
    GRADIENT_TERMS_SHARE of the L1 norm of its terms' magnitudes, plus what moving each Linear's inputs by DOUBT times
    the slow step's rounding of them may add; and whether a rounding in `bf16`'s formats can make it jump (a unit of
    a ReLU nearer the loss lies within DOUBT times the slow step's own rounding, in those formats, of zero)."""
    xd, nd, yc = x.detach().double().cpu(), n.detach().double().cpu(), y.detach().cpu()
    a: torch.Tensor = xd.sum(1) / nd[:, None]
    rounded = _rounded_activations(model, x, n, bf16)
    inputs, outputs, doubtful = [], [], []
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    # how far rounding may move each element of a Linear's input: DOUBT times the slow step's (ReLU moves none further),
    # for the jumps and, with bf16=True, the tolerances (the first Linear's input, the pooled mean, rounded in float32
    # only: GRADIENT_SHARE covers it); with bf16=False, where the shares are float32's, the tolerances take that plus
    # what the earlier inputs' moves carry through |weights| (and units not far off), from the pooled mean's: float32's
    # bound for a sum of the padded length's terms in any order, (length - 1) unit roundoffs (EPS32 / 2) of their
    # magnitudes, and the division's (a right answer that sums in another order rounds otherwise than the slow step, by
    # up to 1e-3 of the mean where values of 2**14 cancel)
    off, moved = 0.0, torch.zeros_like(a)  # moved: each element's, for the tolerances
    if not bf16:
        moved = (x.shape[1] - 1) * EPS32 / 2 * xd.abs().sum(1) / nd[:, None] + 2 * EPS32 * a.abs()
    for k, layer in enumerate(linears):
        w, b = layer.weight.detach().double().cpu().requires_grad_(), layer.bias.detach().double().cpu()
        b.requires_grad_()
        z = a @ w.T + b
        z.retain_grad()
        inputs.append((a.detach().abs(), moved, w, b))
        outputs.append(z)
        off = DOUBT * float((rounded[k] - z.detach()).abs().max()) if rounded[k].numel() else 0.0
        moved = torch.full_like(z.detach(), off) if bf16 else off + moved @ w.detach().abs().T
        if k < len(linears) - 1:
            if not bf16:
                moved = moved * (z.detach() > -moved)  # a unit that stays off moves nothing on
            doubtful.append(bool((z.detach().abs() <= off + 1e-30).any()))
            a = torch.relu(z)
    F.cross_entropy(outputs[-1], yc).backward()
    # float32's own rounding of softmax(logits) - one_hot(y), SOFTMAX_ROUNDING ulps of 1 per logit (a right answer's
    # error where a label is near certain, p = 1 - 4e-8: the exact gradient smaller than that), carried back through
    # each Linear's |weights| and ReLU's mask: an absolute floor under each gradient's relative tolerance (round 21's
    # adversary: the course's own solution FAILed on a drawn batch, off by 1.9e-8 in a gradient of 3.9e-8)
    floors: list[torch.Tensor] = []
    # ...and, with bf16=False, what the logits' moves (`moved`, now theirs) may move it by: a softmax moves by at most
    # as much as its inputs
    err = (SOFTMAX_ROUNDING * EPS32 + (0.0 if bf16 else moved.max(1, keepdim=True).values)) / outputs[-1].shape[0]
    err = torch.zeros_like(outputs[-1]) + err
    for k in range(len(linears) - 1, -1, -1):
        floors.insert(0, err)
        inp, _, w, _ = inputs[k]
        err = (err @ w.detach().abs()) * (inp > 0)
    result, share = [], GRADIENT_TERMS_SHARE if bf16 else FLOAT32_GRADIENT_TERMS_SHARE
    for k, ((inp, moved, w, b), z) in enumerate(zip(inputs, outputs, strict=True)):
        assert z.grad is not None and w.grad is not None and b.grad is not None
        jumps = any(doubtful[k:])
        terms = z.grad.abs().T @ inp  # the weight's gradient's terms, and what rounding its input may add to them
        result.append((w.grad, float(share * terms.sum() + (z.grad.abs().T @ moved).sum()
                                     + (floors[k].T @ inp).sum()), jumps))
        result.append((b.grad, float(share * z.grad.abs().sum() + floors[k].sum()), jumps))
    return result


def _rounded_activations(model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor, bf16: bool
                                    ) -> list[torch.Tensor]:
    """Each Linear's output as the slow step computes it (in bf16 under autocast where `bf16`), float64 on the host."""
    outputs = []
    with torch.no_grad(), torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        a = x.sum(1) / n[:, None]
        for layer in model:
            a = layer(a)
            if isinstance(layer, torch.nn.Linear):
                outputs.append(a.double().cpu())
    return outputs


# The tensors that the check gave an answer (its batches, its models' parameters and buffers) or that a recorded call of
# the answer made, kept while they live: a tensor on the host that a call takes and that is none of these came from
# outside the calls, made when the answer's module was imported or its function defined (round 21's adversary: an arange
# kept as a module's constant, or as a default argument, passed on a CPU, where the recorder knew only the host tensors
# made during a call; on a GPU each is a copy from the host, or a RuntimeError beside the batch)
_KNOWN: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()
_IN_BACKWARD = [0]  # inside `_backward_of`: the engine hands a backward tensors that no recorded call made


def _library_caller() -> str | None:
    """The module of PyTorch's own Python code that called the function being recorded, or None where other code (the
    answer's) did: round 67's adversary's torch.masked.mean made its reduction's identity with torch.tensor(0,
    device=) at each call, and the hint asked the student about a torch.tensor they never wrote."""
    frame: Any = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") in (__name__, "torch.overrides"):
        frame = frame.f_back
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    return module if module == "torch" or module.startswith("torch.") else None


# A raw address taken by the answer's own code (round 77's adversary: ctypes.string_at(n.data_ptr(), size), and NumPy
# over ctypes' from_address(n.data_ptr()), read n's values on the host with no operation of PyTorch's, and PASSed on a
# CPU: on the meta rerun data_ptr() is 0 and ctypes reads whatever lies there without raising).  Taking an address reads
# no value (a key, an alias or alignment test), so it is not refused as a read; what the answer does with it no mode
# follows, so on a CPU the check ends PART, not PASS, naming the tensor (x, n, y, a parameter, or what shares their
# memory).  Only calls from the answer's own code (`_LinesRun._own`) count: Triton's and CuPy's launchers, and
# PyTorch's own Python, take addresses themselves.  On a GPU nothing is noted: the run there decides (a ctypes read of
# a device address may kill the process).  One list per check_fast_loss on a CPU, by the labels of the tensors.
_ADDRESSES: list[list[str]] = []
ANONYMOUS = "a tensor of your function's"


def _own_call() -> bool:
    """Whether the function being recorded was called from the answer's own code (`_LinesRun._own`): the first frame
    outside this module and torch.overrides, on a CPU (`_LINES`)."""
    frame: Any = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") in (__name__, "torch.overrides"):
        frame = frame.f_back
    return frame is not None and bool(_LINES) and _LINES[-1]._own(frame.f_code.co_filename)


def _know(*values: object) -> None:
    """Note the tensors among `values` (in lists and tuples, and a module's parameters and buffers) in _KNOWN."""
    for value in values:
        if isinstance(value, torch.Tensor):
            _KNOWN[id(value)] = value
        elif isinstance(value, torch.nn.Module):
            _know(*value.parameters(), *value.buffers())
        elif isinstance(value, (list, tuple)):
            _know(*value)


# The switches that set the precision a float32 matrix product runs in: cuBLAS's (a GPU's) and oneDNN's (a CPU's).  On
# PyTorch 2.9 and later each reads as it resolves what it inherits (its backend's "all", then the generic
# torch.backends.fp32_precision; "none" where nothing is set: IEEE), so that reading the two tells what a product runs
# in, whichever switch set it (measured on PyTorch 2.13's CPU build: torch.backends.fp32_precision = "bf16", oneDNN's
# own switch, or set_float32_matmul_precision("medium") each made oneDNN's read "bf16", and F.linear's products of
# 64x128 by 128x128 off by 0.11 against 1.8e-5); before 2.9, set_float32_matmul_precision's one value stands behind
# both (TF32 for "high" and "medium" on a GPU, oneDNN's bf16 for "medium").  Round 67's adversary: TF32, and oneDNN's
# bf16, turned on for the call and put back in `finally` passed, the settings being read before and after each call
# only; bf16's rounding moved the course batch's loss by 2.5e-6, under the bound of 4.7e-5, whose term for the
# cross-entropy's own float32 rounding alone (8 epsilons of the loss and the largest logit) is 2.4e-6 there: no bound
# that every right float32 answer keeps to can tell the two apart by the value (the solution is off by 8.6e-8).  Both
# switches on either device: the same code runs on the other, and the check on a CPU stands for the student's GPU.
_PRODUCT_PRECISIONS = ((("cuda.matmul.fp32_precision",) if TF32_SETTING == "fp32_precision" else ())
                       + tuple(path for path in FP32_PRECISIONS if path == "mkldnn.matmul.fp32_precision"))
FULL_PRECISION = ("ieee", "none", "highest")  # the values of these switches that keep float32 products in float32


def _float32_precisions() -> dict[str, str]:
    """The switches that set the precision of a float32 matrix product, as they read now (_PRODUCT_PRECISIONS)."""
    if _PRODUCT_PRECISIONS:
        return {f"torch.backends.{path}": str(precision(path)) for path in _PRODUCT_PRECISIONS}
    return {"torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision()}


class Operations(TorchFunctionMode):
    """Every PyTorch function called inside the block (one call of the answer's own, not the functions those call):
    its name and the shapes of its tensors; each read of a value on the host (`.item()`, `int()`, `.tolist()`,
    `.cpu()`...) or copy from the GPU to the host; each copy to another device of a tensor made on the host (made
    without device=, or computed from such tensors only: on a CPU too) or held there, and each tensor made from
    Python data with device= (FROM_DATA: a copy from the host too); each operation that takes
    such a tensor (not 0-d, not copied) with the batch's or the model's (a GPU raises there: on a CPU it runs); the
    matrix products in bf16 (with the tensors each one was computed from: the weights behind casts and views), and the
    other arithmetic in bf16."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, tuple[tuple[int, ...], ...]]] = []
        self.host_reads: list[str] = []
        # reads that raised where the tensor is (a GPU's: Tensor.__array__ refuses device memory), with their errors,
        # and exports by DLPack of a tensor not on the host (NumPy refuses a GPU's capsule after the export): where the
        # answer then raises that error, or any after such an export, `_recorded` names the read (`raised_in_read`)
        self.raised_reads: list[tuple[str, BaseException]] = []
        self.exported: list[str] = []
        self.raised_in_read = ""
        self.threads: list[str] = []  # threads the answer started: work this thread-local mode cannot see (round 21)
        self.settings_left: list[str] = []  # settings the call left changed that the check's own hides (`_recorded`)
        self.transfers: list[str] = []
        self.bf16_products = 0
        self.cached_products = 0  # bf16 products under an autocast that keeps its cache (cache_enabled=True)
        self.bf16_arithmetic: list[str] = []
        self.host_mixed: list[str] = []  # operations that took a tensor made on the host with the batch's
        self._on_host: dict[int, torch.Tensor] = {}  # made on the host, by id (held: ids stay unique)
        # each bf16 matrix product's result, and the ids of the tensors it was computed from (behind casts and views)
        self.bf16_uses: list[tuple[torch.Tensor, frozenset[int]]] = []
        self._behind: dict[int, tuple[torch.Tensor, frozenset[int]]] = {}  # a cast's or view's result: its sources
        self.cast_rounded: list[str] = []  # operations (not matrix products) that took a value a cast rounded to bf16
        # operations that took or returned a 16-bit float, named with its format (bf16=False allows none, and neither
        # mode float16: round 69's adversary's bf16 saved tensors and bf16 gradient hooks with bf16=False, and a float16
        # value beside the bf16 gradient, passed, these being judged by the 16-bit results of arithmetic other than
        # bf16 matrix products only)
        self.narrow: list[str] = []  # "name (formats)"; the float16 ones: `float16`
        # float32 or float64 arithmetic (a matrix product or any other, not a cast or a view): its name, and the ids
        # behind its inputs
        self.wide_uses: list[tuple[str, frozenset[int]]] = []
        self._rounded: dict[int, torch.Tensor] = {}  # rounded to bf16 by a cast, or a view or cast of such (held)
        # what the dispatcher ran inside the function being called (READ_OPS, SIZED_OPS, LIFT_OPS): `_Beneath`
        self.beneath: list[str] = []
        self.own = False  # the recorder's own operations: not the answer's
        self.importing = 0  # inside torch.from_dlpack (`_unseen_watched`): its __dlpack__ call is no export
        self.calling = False  # inside a function that this mode sees
        # bf16 products made without autograd (inside an autograd.Function's forward, or under no_grad), and the
        # tensors computed from them there, with the ids behind them: where such a tensor goes on into autograd's
        # graph (the Function's output), the result stands for the products (round 20's adversary: a right answer's
        # Linear in bf16 as a custom Function FAILed, its products never feeding the loss by autograd)
        self._untracked: dict[int, tuple[torch.Tensor, frozenset[int]]] = {}
        # the float32 precision switches as the call found them (`_recorded` makes the recorder just before it), and
        # the float32 matrix products that ran while one of them read lower than that (`note_precision`)
        self.precisions = _float32_precisions()
        self.lowered: list[str] = []
        # where a narrow format's exactness is judged by value on the meta device, which has none (`_gpu_branch`)
        self.unvalued: list[str] = []
        # the caller's memory (x's, n's, y's and each parameter's storage, by its address: `_callers_memory`), and each
        # operator that wrote into it (in place or out=, through any view or alias: `_Beneath`)
        self.guarded: dict[int, str] = {}
        self.written: list[str] = []
        # the calls that fill by a mask with a tensor value (`_fill_value`): read on the host or not by where the value
        # is, so on a CPU, where every tensor is, the run beside a GPU's batch judges them (`_gpu_branch`)
        self.fills: list[str] = []

    def note_precision(self, name: str) -> None:
        """A float32 matrix product (`name`, as the dispatcher runs it) ran: note each precision switch that reads
        lower than it did when the call began (TF32, oneDNN's bf16)."""
        for switch, value in _float32_precisions().items():
            was = self.precisions.get(switch)
            if value != was and value not in FULL_PRECISION:
                self.lowered.append(f"{name} while {switch} read {value!r}, {was!r} when the call began")

    def _exact_by_value(self, func: Any, wide: tuple[tuple, dict], out: torch.Tensor) -> bool:
        """`_rounds_nothing`, its own operations not recorded (on the meta device, beside a GPU's batch: no values, so
        arithmetic in a narrow format is taken for what it is, `_gpu_branch`)."""
        if out.device.type == "meta":
            self.unvalued.append(getattr(func, "__name__", str(func)))
            return False
        own, self.own = self.own, True
        try:
            return _rounds_nothing(func, wide, out)
        finally:
            self.own = own

    def _note_rounding(self, name: str, given: list[torch.Tensor], out: torch.Tensor, exact: bool = False,
                       written: bool = False) -> None:
        """Follow the values that a rounding to a narrow format changed: a cast (CASTS), or any operation that passes
        values on (EXACT_IN_BF16 but SHAPE_ONLY) into the narrow `out` from a wider float that it cannot hold; what they
        reach other than a matrix product (an operation that returns a narrow format and rounds nothing, `exact`,
        passes them on).  `written`: `out` is a tensor that the operation wrote (__setitem__, in place, out=) and
        may be a view: the tensor it views is marked too."""
        if out.dtype in NARROW and (name in CASTS or (name in EXACT_IN_BF16 and name not in SHAPE_ONLY)) and any(
                t is not out and t.is_floating_point() and t.dtype != out.dtype and not self._holds(out.dtype, t)
                for t in given):
            self._mark(out, written)
        elif self._rounded and any(self._is_rounded(t) for t in given):
            if name in CASTS or name in UPCASTS or name in EXACT_IN_BF16 or exact:
                self._mark(out, written)
            elif name not in MATRIX_PRODUCTS and out.is_floating_point():
                self.cast_rounded.append(name)

    def _mark(self, t: torch.Tensor, written: bool) -> None:
        self._rounded[id(t)] = t
        if written and t._base is not None:  # a write into a view writes the tensor it views
            self._rounded[id(t._base)] = t._base

    def _is_rounded(self, t: torch.Tensor) -> bool:
        return id(t) in self._rounded or (t._base is not None and id(t._base) in self._rounded)

    def _holds(self, dtype: torch.dtype, t: torch.Tensor) -> bool:
        """Whether `dtype` holds every value of `t` exactly (NaN as NaN): the recorder's own operations (on the meta
        device, no values: a cast to a narrower format rounds)."""
        if t.device.type == "meta":
            self.unvalued.append(f"a cast to {str(dtype).removeprefix('torch.')}")
            return False
        own, self.own = self.own, True
        try:
            with torch.no_grad():
                wide = t.detach()
                back = wide.to(dtype).to(wide.dtype)
                return bool(((back == wide) | (back.isnan() & wide.isnan())).all())
        finally:
            self.own = own

    def outside(self) -> None:
        """Note the reads that the dispatcher ran outside the functions this mode sees (the legacy constructors, say)
        among the host reads."""
        outside = sorted(set(self.beneath) & (READ_OPS | SIZED_OPS))
        if outside:
            self.host_reads.append(f"{', '.join(outside)}, a read on the host")
        self.beneath = []

    def _sources(self, t: torch.Tensor) -> frozenset[int]:
        return self._behind[id(t)][1] if id(t) in self._behind else frozenset({id(t)})

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        if name == "data_ptr" and _ADDRESSES and args and isinstance(args[0], torch.Tensor) and _own_call():
            _ADDRESSES[-1].append(self.guarded.get(_address(args[0]), ANONYMOUS))
        given = [t for a in (*args, *kwargs.values())
                 for t in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(t, torch.Tensor)]
        if not _IN_BACKWARD[0]:  # a tensor on the host from outside the calls: made there (_KNOWN)
            for t in given:
                if t.device.type == "cpu" and _KNOWN.get(id(t)) is not t and id(t) not in self._on_host:
                    self._on_host[id(t)] = t
        if name not in MOVES and any(id(t) in self._on_host and t.dim() > 0 for t in given) and any(
                id(t) not in self._on_host for t in given):  # noted before the call: on a GPU the call raises
            self.host_mixed.append(name)
        self.outside()
        # an operation outside the allowed ones that takes a narrow float: judged by value (`_exact_by_value`), from
        # float32 copies of its inputs taken before it runs (an in-place one changes them)
        wide = None
        if name not in MATRIX_PRODUCTS and name not in EXACT_IN_BF16 and any(t.dtype in NARROW for t in given):
            own, self.own = self.own, True  # the recorder's own copies: not among the answer's operations (`seen`)
            try:
                wide = _widened(args, kwargs)
            finally:
                self.own = own
        self.calling = True
        try:
            out = func(*args, **kwargs)
        except Exception as error:
            if name in HOST_READS or name in EXPORTS:
                self.raised_reads.append((name, error))
            raise
        finally:
            self.calling = False
        beneath, self.beneath = set(self.beneath), []
        if not isinstance(func, FunctionType):  # PyTorch's C++: reads of its own that depend on the device
            beneath -= READ_OPS | SIZED_OPS
        tensors = [*given, *(t for t in (out if isinstance(out, (list, tuple)) else [out])
                             if isinstance(t, torch.Tensor))]
        _know(out)
        self.seen.append((name, tuple(tuple(t.shape) for t in tensors)))
        formats = sorted({str(t.dtype).removeprefix("torch.") for t in tensors if t.dtype in NARROW})
        if formats:
            self.narrow.append(f"{name} ({', '.join(formats)})")
        if name in EXPORTS and not self.importing and given and given[0].device.type != "cpu":
            self.exported.append(f"{name}, its memory handed to another library")
        if name in EXPORTS and not self.importing and given and given[0].device.type == "cpu":
            self.host_reads.append(f"{name}, its memory handed to another library (NumPy reads it on the host)")
        elif name in HOST_READS or (isinstance(out, torch.Tensor) and out.device.type == "cpu"
                                  and any(t.is_cuda for t in tensors)) or (
                                      name == "to" and _names_host(args, kwargs)):
            # a read by PyTorch's own Python code, said so: not the student's call (round 74's adversary: a storage
            # named inside torch.nested's constructor FAILed with STORAGE_HINT, as if the answer had named it)
            library = _library_caller() if name in HOST_READS else None
            self.host_reads.append(name + (f", inside {library}" if library else ""))
        elif _data_shaped(name, args, kwargs) or beneath & SIZED_OPS:
            self.host_reads.append(f"{name}, whose size comes from the values")
        elif name == "segment_reduce" and not kwargs.get("unsafe", False):
            # ATen's segment_reduce_kernel checks its lengths on the host unless unsafe=True (`lengths.min().item()`,
            # `lengths.sum().item()`): round 72's adversary's segment_reduce pooling PASSed on a CPU, where reads inside
            # PyTorch's C++ are set aside, and waited twice on the H200 (call CG)
            self.host_reads.append("segment_reduce, which checks its lengths on the host unless unsafe=True")
        elif beneath & READ_OPS:
            self.host_reads.append(f"{name}, which reads a value on the host inside ({', '.join(beneath & READ_OPS)})")
        fill = _fill_value(name, args, kwargs)
        if fill is not None:  # where it is decides the read: on a CPU, the meta rerun judges it (`_gpu_branch`)
            self.fills.append(name)
            read = _fill_read(name, args, kwargs, fill)
            if read:
                self.host_reads.append(read)
        if not isinstance(out, torch.Tensor):
            if name == "__setitem__" and args and isinstance(args[0], torch.Tensor):  # written, not returned
                self._note_rounding(name, given, args[0], written=True)
            return out
        moved = False
        # made from Python data: by the names (FROM_DATA), or by what ran beneath; where the batch is when a method of
        # a tensor made it (x.new(list), x.new_tensor(list)), or a device was named
        method = bool(args) and isinstance(args[0], torch.Tensor)
        data = FROM_DATA.get(name)
        lifted = beneath & LIFT_OPS or (data is not None and len(args) > data
                                        and not isinstance(args[data], torch.Tensor))
        if lifted and (method or "device" in kwargs) and not _names_host((), kwargs):
            library = _library_caller()  # where PyTorch's own Python code made it, the student wrote no such call
            self.transfers.append(f"{name} from Python data" + (f", inside {library}" if library else ""))
            moved = True
        elif lifted and not method:
            self._on_host[id(out)] = out
        # ...and a tensor given to as_tensor, asarray or tensor (FROM_DATA) with a device named is one of MOVES too: a
        # host-made one is copied there
        of_a_tensor = data is not None and isinstance(
            args[data] if len(args) > data else kwargs.get("data", kwargs.get("obj")), torch.Tensor)
        if (name in MOVES or (of_a_tensor and data == 0)) and given:
            source = args[1] if name == "copy_" and len(args) > 1 else given[0]
            to_device = (name != "to" or "device" in kwargs or any(
                isinstance(a, (torch.device, str, torch.Tensor)) for a in args[1:])) if name in MOVES else (
                "device" in kwargs or any(isinstance(a, (torch.device, str)) for a in args[1:]))
            on_host = id(source) in self._on_host or (source.device.type == "cpu" and out.device.type != "cpu")
            if to_device and on_host:
                self.transfers.append(name)
                self._on_host.pop(id(out), None)  # flagged once, as a copy: the copy is where the batch is
                moved = True
        # made from nothing but Python or NumPy data without device= (any function: torch.from_numpy, torch.range
        # passed, round 19), or from host-made tensors only
        if not moved and ((((name in CREATIONS and not of_a_tensor) or not given)
                           and ("device" not in kwargs or _names_host((), kwargs)))
                          or (given and all(id(t) in self._on_host for t in given))):
            self._on_host[id(out)] = out
        exact = (wide is not None and isinstance(out, torch.Tensor) and out.dtype in NARROW
                 and self._exact_by_value(func, wide, out))
        self._note_rounding(name, given, out, exact, written=name.endswith("_") or "out" in kwargs)
        # a cast or a view of one tensor; a cast that takes a second tensor for its dtype (to(other), type_as: round
        # 20's adversary, a right answer FAILed) or copies into one (dst.copy_(src)) is one of its first or its source;
        # one that takes a second tensor for its shape only (view_as, expand_as, reshape_as) is one of its first; any
        # other of several tensors (cat, stack, where...) is one of them all (round 70's adversary: the weights
        # flattened by parameters_to_vector, torch.cat of their views, made a vector behind which no weight stood, and
        # float32 products on its slices passed as no weight's)
        behind = ([args[1]] if name == "copy_" and len(args) > 1 and isinstance(args[1], torch.Tensor) else
                  [] if not given or out is given[0] else
                  [given[0]] if len(given) == 1 or name in FIRST_ONLY else [t for t in given if t is not out])
        if (name in EXACT_IN_BF16 or name in UPCASTS) and behind:
            self._behind[id(out)] = (out, frozenset().union(*(self._sources(t) for t in behind)))
        untracked = [self._untracked[id(t)][1] for t in given if id(t) in self._untracked]
        if untracked and torch.is_grad_enabled() and out.requires_grad:  # the untracked products go on into the graph
            self.bf16_uses.append((out, frozenset().union(*untracked)))
        elif untracked and not torch.is_grad_enabled():
            self._untracked[id(out)] = (out, frozenset().union(*untracked))
        if out.dtype in NARROW:
            if name in MATRIX_PRODUCTS and out.dtype == torch.bfloat16:
                self.bf16_products += 1
                sources = frozenset().union(*(self._sources(t) for t in given))
                self.bf16_uses.append((out, sources))
                if not torch.is_grad_enabled():
                    self._untracked[id(out)] = (out, sources.union(*untracked))
                if out.device.type != "meta" and torch.is_autocast_enabled(out.device.type) and \
                        torch.is_autocast_cache_enabled():  # (autocast knows no meta device: beside a GPU's batch)
                    self.cached_products += 1
            elif name not in MATRIX_PRODUCTS and name not in EXACT_IN_BF16 and not exact and not (
                    name in MASK_PRODUCTS and any(t.dtype == torch.bool for t in given)):
                self.bf16_arithmetic.append(f"{name} in {str(out.dtype).removeprefix('torch.')}")
        elif out.dtype in (torch.float32, torch.float64) and name not in EXACT_IN_BF16 and name not in UPCASTS:
            # any float32 or float64 arithmetic, not only a matrix product's name (round 68's adversary: each Linear
            # written as (a.unsqueeze(1) * W).sum(-1) + b in float32, beside the bf16 products, passed); the casts and
            # views of EXACT_IN_BF16 and UPCASTS pass their sources on (`_behind`) to the arithmetic that follows
            self.wide_uses.append((name, frozenset().union(*(self._sources(t) for t in given))))
        return out

    def names(self) -> list[str]:
        return [name for name, _ in self.seen]

    @property
    def float16(self) -> list[str]:
        """The operations that took or returned a float16 (of `narrow`), by name."""
        return [name for name, formats in (entry[:-1].rsplit(" (", 1) for entry in self.narrow)
                if "float16" in formats.split(", ")]

    def made_on_host(self, name: str, out: torch.Tensor) -> None:
        """A tensor made on the host by a function this mode does not see (UNSEEN_CREATIONS)."""
        self.seen.append((name, (tuple(out.shape),)))
        self._on_host[id(out)] = out

    def feeding(self, loss: object, weights: Sequence[torch.Tensor] = ()) -> frozenset[int]:
        """The ids of the tensors (the weights, say) behind the bf16 matrix products that `loss` depends on: a bf16
        product computed beside the loss, and not used for it, does not count; nor does one whose gradient is zero
        (round 68's adversary: `loss32 + 0.0 * loss16` passed, a zero gradient being a gradient), unless the loss
        moves with it through a product whose gradient is not zero (a ReLU whose every unit is off sends a zero
        gradient back), or the loss's gradient for the model's `weights` is zero too (a softmax saturated in float32):
        there autograd's graph alone tells."""
        uses = [(out, sources) for out, sources in self.bf16_uses if out.requires_grad]
        if not isinstance(loss, torch.Tensor) or not loss.requires_grad or not uses:
            return frozenset()
        outs = [out for out, _ in uses]
        try:
            grads = torch.autograd.grad(loss.sum(), outs, allow_unused=True, retain_graph=True)
            moving = [g is not None and bool(g.detach().ne(0).any()) for g in grads]
            if not any(moving):
                trained = [w for w in weights if w.requires_grad]
                moves = trained and any(g is not None and bool(g.detach().ne(0).any()) for g in torch.autograd.grad(
                    loss.sum(), trained, allow_unused=True, retain_graph=True))
                return frozenset() if moves else frozenset().union(
                    *(sources for (_, sources), g in zip(uses, grads, strict=True) if g is not None))
            still = [k for k, (g, m) in enumerate(zip(grads, moving, strict=True)) if g is not None and not m]
            total = torch.stack([out.float().sum() for out, m in zip(outs, moving, strict=True) if m]).sum()
            behind = torch.autograd.grad(total, [outs[k] for k in still], allow_unused=True,
                                         retain_graph=True) if still else ()
        except RuntimeError:  # a graph autograd cannot walk twice: backward() on it FAILs below, with its error
            return frozenset().union(*(sources for _, sources in uses))
        fed = [m for m in moving]
        for k, g in zip(still, behind, strict=True):
            fed[k] = g is not None
        return frozenset().union(*(sources for (_, sources), f in zip(uses, fed, strict=True) if f))


# The operators (as the dispatcher names them) that return values of their inputs, or make a tensor: outside the
# functions the recorder sees, a narrow result of any other is arithmetic in its format unless exact by value
# (`_Beneath.unseen`)
EXACT_BENEATH = EXACT_IN_BF16 | GEMMS | MATRIX_PRODUCTS | LIFT_OPS | {
    "_to_copy", "_copy_from", "_copy_from_and_resize", "alias", "as_strided", "_unsafe_view", "_reshape_alias", "slice",
    "index", "_unsafe_index", "index_put", "index_put_", "slice_scatter", "select_scatter", "empty_strided",
    "new_empty_strided", "fill", "constant_pad_nd", "scalar_tensor"}
COPIES_BENEATH = {"_to_copy": 0, "copy_": 1, "_copy_from": 0}  # an operator that copies, and its source's place
_WRITES: dict[Any, tuple[tuple[int, str], ...]] = {}  # each operator's arguments that it writes (`_written_by`)


def _written_by(func: Any, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The tensors whose elements the operator `func` writes: the arguments its schema marks written (`Tensor(a!)`:
    self of an in-place operator, out=), less those of operators that change a tensor's metadata only (tagged
    inplace_view: unsqueeze_, as_strided_, set_, resize_)."""
    if func not in _WRITES:
        schema = getattr(func, "_schema", None)
        _WRITES[func] = () if schema is None or torch.Tag.inplace_view in getattr(func, "tags", ()) else tuple(
            (k, a.name) for k, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write)
    written = []
    for k, name in _WRITES[func]:
        value = args[k] if k < len(args) else kwargs.get(name)
        written += [t for t in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(t, torch.Tensor)]
    return written


def _address(t: torch.Tensor) -> int:
    """The address of t's storage (0 where it has none: sparse, meta)."""
    with torch._C.DisableTorchFunction():
        try:
            return t.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):
            return 0


def _callers_memory(args: tuple) -> dict[int, str]:
    """For a call of the answer, (model, x, n, y, ...): the address of each storage the caller's x, n, y and the
    model's parameters lie in (a view's: the tensor it views), and which it is."""
    if len(args) < 4 or not isinstance(args[0], torch.nn.Module):
        return {}
    named = [*zip(("x", "n", "y"), args[1:4], strict=True),
             *((f"the model's {name}", p) for name, p in args[0].named_parameters())]
    memory = {_address(t): label for label, t in reversed(named) if isinstance(t, torch.Tensor)}
    memory.pop(0, None)  # (no memory: nothing to write)
    return memory


class _Beneath(TorchDispatchMode):
    """What the dispatcher runs inside each function that `ops` records (READ_OPS, SIZED_OPS, LIFT_OPS), noted for
    it in ops.beneath; outside any (a function that a TorchFunctionMode does not see), a read among its host reads,
    and the forward's rules for formats and copies (`unseen`)."""

    def __init__(self, ops: Operations) -> None:
        super().__init__()
        self.ops = ops

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        kwargs = kwargs or {}
        if not self.ops.own and name in READ_OPS | SIZED_OPS | LIFT_OPS:
            self.ops.beneath.append(name)
        unseen = not self.ops.own and not self.ops.calling and not _IN_BACKWARD[0]
        if self.ops.guarded and not self.ops.own and not _IN_BACKWARD[0]:
            # a write into the caller's memory, before it runs (round 73's adversary: n.data.clamp_(min=1) and
            # x.data.mul_(mask) PASSed, .data's version counter being its own and the values not moving): any view or
            # alias of x, n, y or a parameter written in place or by out=, whatever its version counter says
            hit = [self.ops.guarded[ptr] for t in _written_by(func, args, kwargs)
                   if (ptr := _address(t)) in self.ops.guarded]
            self.ops.written += [f"aten.{name} into {label}" for label in hit]
        wide = (_widened(args, kwargs) if unseen and name not in EXACT_BENEATH and any(
            isinstance(t, torch.Tensor) and t.dtype in NARROW for a in (*args, *kwargs.values())
            for t in (a if isinstance(a, (list, tuple)) else [a])) else None)
        with torch._C.DisableTorchFunction():  # an operator called here is the dispatcher's, not the answer's
            out = func(*args, **kwargs)
            if unseen:
                self.unseen(name, func, args, kwargs, out, wide)
        if name in GEMMS and not self.ops.own and isinstance(out, torch.Tensor) and out.dtype == torch.float32:
            self.ops.note_precision(name)
        if not self.ops.own:
            # made during the call, whether the mode saw the function or not (round 24's adversary: torch.vmap's and
            # a TorchScript function's results were taken for tensors made before the call, on the host); and outside
            # any function the mode sees (TorchScript's interpreter), the operator itself among the operations (a
            # loop over positions inside @torch.jit.script passed, unseen: 0 operations); not the engine's backward
            _know(out)
            if not self.ops.calling and not _IN_BACKWARD[0] and name not in LIFT_OPS:
                shapes = tuple(tuple(t.shape) for t in (*args, *(out if isinstance(out, (list, tuple)) else [out]))
                               if isinstance(t, torch.Tensor))
                self.ops.seen.append((f"aten.{name}", shapes))
        if name in LIFT_OPS and not self.ops.calling and isinstance(out, torch.Tensor):
            # made from Python data by a function that the mode does not see, the legacy constructors
            # (torch.Tensor(list), torch.FloatTensor(list)): on the host (round 20's adversary copied one to the
            # batch's device with .to(x.device), which only a GPU had caught)
            self.ops.made_on_host("a legacy constructor from Python data", out)
        return out

    def unseen(self, name: str, func: Any, args: tuple, kwargs: dict, out: object, wide: tuple | None) -> None:
        """An operator run outside any function the recorder sees (TorchScript's interpreter runs them so), judged
        as `Operations` judges a function: its 16-bit formats (ops.narrow), a narrow result of arithmetic other than
        the matrix products (EXACT_BENEATH; or exact by value, from `wide`, float32 copies of its inputs taken before
        it ran), and a copy of a tensor on the host to another device (round 70's adversary: the pooled mean divided in
        bf16, and positions made by torch.arange on the host and copied by .to(x.device), inside @torch.jit.script,
        passed, this mode noting names and shapes only)."""
        tensors = [t for a in (*args, *kwargs.values(), out) for t in (a if isinstance(a, (list, tuple)) else [a])
                   if isinstance(t, torch.Tensor)]
        formats = sorted({str(t.dtype).removeprefix("torch.") for t in tensors if t.dtype in NARROW})
        if formats:
            self.ops.narrow.append(f"aten.{name} ({', '.join(formats)})")
        results = [t for t in (out if isinstance(out, (list, tuple)) else [out]) if isinstance(t, torch.Tensor)]
        if name not in EXACT_BENEATH and any(t.dtype in NARROW for t in results) and not (
                wide is not None and isinstance(out, torch.Tensor) and self.ops._exact_by_value(func, wide, out)):
            narrow = next(t.dtype for t in results if t.dtype in NARROW)
            self.ops.bf16_arithmetic.append(f"aten.{name} in {str(narrow).removeprefix('torch.')}, unseen "
                                            "by name (inside TorchScript?)")
        at = COPIES_BENEATH.get(name)
        source = args[at] if at is not None and len(args) > at else None
        if isinstance(source, torch.Tensor) and source.device.type == "cpu" and any(
                t.device.type != "cpu" for t in results):
            self.ops.transfers.append(f"aten.{name} of a tensor on the host, unseen by name (inside TorchScript?)")


def _rounds_nothing(func: Any, wide: tuple[tuple, dict], out: torch.Tensor) -> bool:
    """Whether `func`, which returned the narrow `out`, rounded nothing: run again in float32 on the float32 copies
    of its inputs (`wide`), autocast off, it gives out's values exactly (NaN where out holds NaN).  Round 21's
    adversary: exact spellings of ReLU by other names, a * (a > 0).type_as(a), (a + a.abs()) / 2,
    F.leaky_relu(a, 0.0), torch.fmax(a, 0), FAILed as bf16 arithmetic, the names allowed being a list."""
    try:
        with torch.no_grad(), torch.autocast(out.device.type, enabled=False):
            ref = func(*wide[0], **wide[1])
            if not isinstance(ref, torch.Tensor) or ref.shape != out.shape or not ref.is_floating_point():
                return False
            got, ref = out.detach().double(), ref.double()
            return bool(((got == ref) | (got.isnan() & ref.isnan())).all())
    except Exception:  # noqa: BLE001 (what float32 refuses is no evidence of exactness)
        return False


class _StepArithmetic(TorchDispatchMode):
    """Exercise 1's rule for formats applied to exercise 2's step, whose loss is fast_loss with bf16=True: the
    operators that return a 16-bit float (NARROW) other than casts, views, selections and the matrix products
    (EXACT_BENEATH), and that rounded something (`_rounds_nothing`), noted in `arithmetic`.  Not in autograd's
    backward (there the graph task id is not -1: the backward of a bf16 product sums its bias gradient in bf16, as
    PyTorch's own does), and not while a stream captures (judging by value reads a result on the host, which a
    capture refuses: a warm-up runs the captured code eagerly first).  Round 70's adversary: the solution's step with
    the pooled mean divided in bf16 inside TorchScript PASSed on the H200 (call BX, 2026-12-02), its error within the
    step's tolerances of values.
    ...and exercise 1's rule for float16, none in the call nor in its backward (`_no_16_bit_floats_but_bf16s`): every
    operator that takes or returns a float16 tensor noted in `float16`, the matrix products and casts included,
    anywhere in the run (make_fast_step, its warm-ups, the steps, autograd's backward, the updates, a capture: a
    dtype read, no value).  Round 71's last adversary: the solution's step whose loss runs its matrix products in
    float16 on batches of 256 sequences or more (the GPU's 512) PASSed on the H200 (2026-12-02), this mode exempting
    the products (and the casts, ReLU, views) whatever their format.  No operator is exempt: a float16 tensor in
    the step comes from an operator the step ran (a cast, a product, a creation with dtype=), and no right step
    makes one."""

    def __init__(self) -> None:
        super().__init__()
        self.arithmetic: list[str] = []
        self.float16: list[str] = []  # "aten.name" of each operator that took or returned a float16 tensor
        self.error = ""  # what the run under this mode raised, if anything (`_step_arithmetic`)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        judged = (name not in EXACT_BENEATH and torch._C._current_graph_task_id() == -1
                  and not (torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()))
        # copies of the inputs before an operator that may write a narrow one (in place, out=); with none narrow,
        # the inputs are as they were after it
        wide = _widened(args, kwargs) if judged and any(
            isinstance(t, torch.Tensor) and t.dtype in NARROW for a in (*args, *kwargs.values())
            for t in (a if isinstance(a, (list, tuple)) else [a])) else None
        out = func(*args, **kwargs)
        if any(isinstance(t, torch.Tensor) and t.dtype == torch.float16
               for a in (*args, *kwargs.values(), out) for t in (a if isinstance(a, (list, tuple)) else [a])):
            self.float16.append(f"aten.{name}")
        if judged:
            results = [t for t in (out if isinstance(out, (list, tuple)) else [out])
                       if isinstance(t, torch.Tensor) and t.dtype in NARROW]
            if results and not (isinstance(out, torch.Tensor) and _rounds_nothing(
                    func, wide if wide is not None else _widened(args, kwargs), out)):
                self.arithmetic.append(f"aten.{name} in {str(results[0].dtype).removeprefix('torch.')}")
        return out


def _widened(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """args and kwargs with each narrow float tensor (NARROW) copied to float32, and every other tensor copied (an
    in-place operation run on them changes the copies only), detached: for `Operations._exact_by_value`."""
    def wide(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            with torch._C.DisableTorchFunction():
                return a.detach().float() if a.dtype in NARROW else a.detach().clone()
        if isinstance(a, (list, tuple)):
            return type(a)(wide(b) for b in a)
        return a
    return tuple(wide(a) for a in args), {key: wide(a) for key, a in kwargs.items()}


def _data_shaped(name: str, args: tuple, kwargs: dict) -> bool:
    """An operation whose result's size depends on the values (DATA_SHAPED, a boolean index, torch.where(mask),
    repeat_interleave by a tensor without output_size=): a GPU reads that size on the host."""
    if name in DATA_SHAPED:
        return True
    if name == "__getitem__" and len(args) > 1:
        index = args[1] if isinstance(args[1], (tuple, list)) else (args[1],)
        return any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) and i.dim() > 0
                   for i in index)
    if name == "where":
        return len(args) + len(kwargs) == 1
    if name == "one_hot":  # without num_classes (-1), its width is the labels' max + 1, read on the host on any device
        # (ATen's one_hot: `self.max().item()`; round 65's adversary's F.one_hot(y) passed: reads inside PyTorch's C++
        # are set aside, as one_hot with num_classes reads its labels on a CPU only)
        classes = args[1] if len(args) > 1 else kwargs.get("num_classes", -1)
        return not isinstance(classes, int) or classes < 0
    if name == "repeat_interleave":
        repeats = args[1] if len(args) > 1 else kwargs.get("repeats", args[0] if len(args) == 1 else None)
        return isinstance(repeats, torch.Tensor) and repeats.numel() > 1 and kwargs.get("output_size") is None
    return False


# Fills by a mask whose value PyTorch reads on the host where the value is a tensor elsewhere (round 74's adversary:
# x.masked_fill(~mask, x.new_zeros(())), xz[~mask] = x.new_zeros(()), index_put_ by a boolean mask, PASSed on a
# CPU): CUDA's masked_fill_ with a Tensor value is `masked_fill__cuda(self, mask, value.item())`
# (aten/src/ATen/native/cuda/Indexing.cu), a wait where the value is on the GPU; an index put by a boolean mask takes
# the masked_fill route only where canDispatchToMaskedFill holds (ATen/native/TensorAdvancedIndexingUtils.h: one mask,
# on self's device, and `value.numel() == 1 && value.device().is_cpu()`; `_index_put_impl_` asks only without
# accumulate), else expandTensors replaces the mask by `index.nonzero()` (ATen/native/IndexingUtils.h), whose count a
# GPU reads on the host.  A Python number travels as a CPU value (a kernel argument): no read.  Name -> the position of
# the value (and of the indices, for the index puts).
MASK_FILLS = {"masked_fill": 2, "masked_fill_": 2}
INDEX_PUTS = {"__setitem__": 2, "index_put": 2, "index_put_": 2}


def _fill_value(name: str, args: tuple, kwargs: dict) -> torch.Tensor | None:
    """The tensor value of a fill by a mask (MASK_FILLS; an index put, INDEX_PUTS, by an index that holds a boolean
    mask), or None: a call whose read on the host depends on where that value is (`_fill_read`)."""
    if name in MASK_FILLS:
        value = args[2] if len(args) > 2 else kwargs.get("value")
        return value if isinstance(value, torch.Tensor) else None
    if name in INDEX_PUTS and len(args) > 1:
        value = args[2] if len(args) > 2 else kwargs.get("values", kwargs.get("value"))
        index = args[1] if isinstance(args[1], (tuple, list)) else (args[1],)
        masks = any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) and i.dim() > 0
                    for i in index)
        return value if masks and isinstance(value, torch.Tensor) else None
    return None


def _fill_read(name: str, args: tuple, kwargs: dict, value: torch.Tensor) -> str:
    """Why PyTorch reads on the host in the fill `name` with the tensor `value` (`_fill_value`), or "" where it does
    not: the rule of PyTorch's C++ (MASK_FILLS), by the value's device (the meta device reads as the GPU)."""
    elsewhere = value.device.type != "cpu"
    if name in MASK_FILLS:
        return (f"{name}, whose fill value is a tensor on the GPU: PyTorch reads the value on the host to fill"
                if elsewhere else "")
    index = args[1] if isinstance(args[1], (tuple, list)) else (args[1],)
    tensors = [i for i in index if isinstance(i, torch.Tensor)]
    accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    masked_fill = (not accumulate and not elsewhere and value.numel() == 1 and len(tensors) == 1
                   and tensors[0].device == args[0].device)
    return "" if masked_fill else (
        f"{name} by a boolean mask with a fill value that is not a Python number (nor one on the host): PyTorch "
        "turns the mask into nonzero() positions, whose count it reads on the host")


# Where the check put the batch (check_fast_loss sets it): a device named is the host only where the batch is elsewhere
_BATCH_DEVICE = ["cuda"]


def _is_host(d: object) -> bool:
    """Whether `d` names the host: a string ("cpu", "cpu:0") or a torch.device (torch.device("cpu"),
    torch.get_default_device()): round 24's adversary passed with a device object, known by the string only."""
    try:
        return isinstance(d, (str, torch.device)) and torch.device(d).type == "cpu"
    except (RuntimeError, TypeError, ValueError):
        return False


def _names_host(args: tuple, kwargs: dict) -> bool:
    """A device named as the host (.to("cpu"), device=torch.device("cpu")) while the batch is elsewhere.  On a CPU the
    batch's device is the host too, and nothing tells device="cpu" from device=x.device.type or the notebook's
    `device` (round 24's adversary: both right, both FAILed on a CPU): there the check runs the answer once on another
    device, PyTorch's meta device, which refuses what a GPU refuses (`_elsewhere`)."""
    return _BATCH_DEVICE[0] != "cpu" and any(_is_host(d) for d in (*args[1:], kwargs.get("device")))


# Functions that make a tensor on the host and that a TorchFunctionMode does not see (measured on PyTorch 2.13; round
# 19's adversary: positions from torch.from_numpy and from torch.range passed): watched by replacing them during the
# call.  (The legacy constructors, torch.Tensor(list) and torch.FloatTensor(...), cannot be replaced so: `_Beneath`
# sees what they make from Python data.)
UNSEEN_CREATIONS = ("from_numpy", "frombuffer", "from_dlpack", "range")
# The host's waits for the GPU, which the mode does not see either, and which read no value (round 19's adversary:
# torch.cuda.synchronize() when the batch is on a GPU, a timing leftover, would pass there): the owner of each, and
# its name.  On a CPU an answer cannot call them (they raise), so that only a GPU runs these watches.
# ...and the device-generic torch.accelerator.synchronize, and the polls of a CUDA stream's or event's progress,
# `query` (round 68's adversary: `while not ev.query(): pass`, a wait by another name; and a capture refuses the
# query of a capturing stream's work).  torch.Stream's and torch.Event's own methods (what torch.accelerator's
# current_stream() returns) cannot be replaced, being an immutable type's: the calls from a busy caller's stream
# catch a wait through them, or through anything else (`_from_other_streams`, `blocked`).
WAITS = ((torch.cuda, "synchronize"), (torch.cuda.Stream, "synchronize"), (torch.cuda.Event, "synchronize"),
         (torch.accelerator, "synchronize"), (torch.cuda.Stream, "query"), (torch.cuda.Event, "query"))


@contextmanager
def _unseen_watched(ops: Operations) -> Iterator[None]:
    """UNSEEN_CREATIONS replaced by functions that note what they make on the host (without device=) in `ops`,
    WAITS by functions that note each wait among its host reads, and threading.Thread.start by one that notes each
    thread that the calling thread starts (not PyTorch's own) in ops.threads."""
    originals: list[tuple[Any, str, Any]] = [(torch, name, getattr(torch, name)) for name in UNSEEN_CREATIONS
                                             if hasattr(torch, name)]
    waits: list[tuple[Any, str, Any]] = [(owner, name, getattr(owner, name)) for owner, name in WAITS
                                         if hasattr(owner, name)]

    def creation(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def call(*args: Any, **kwargs: Any) -> Any:
            ops.importing += 1
            try:
                out = original(*args, **kwargs)
            finally:
                ops.importing -= 1
            if isinstance(out, torch.Tensor) and out.device.type == "cpu" and (
                    "device" not in kwargs or _names_host((), kwargs)):
                ops.made_on_host(name, out)
            return out
        return call

    def wait(label: str, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def call(*args: Any, **kwargs: Any) -> Any:
            ops.host_reads.append(f"{label}, " + ("a read of the GPU's progress on the host" if label.endswith(".query")
                                                  else "a wait for the GPU"))
            return original(*args, **kwargs)
        return call

    started, caller = threading.Thread.start, threading.get_ident()

    @functools.wraps(started)
    def start(thread: threading.Thread, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == caller and not _started_by_torch():
            ops.threads.append(getattr(thread, "name", "a thread"))
        return started(thread, *args, **kwargs)

    threading.Thread.start = start  # type: ignore[method-assign,assignment]
    originals.append((threading.Thread, "start", started))
    for owner, name, original in originals:
        if owner is threading.Thread:
            continue
        setattr(owner, name, creation(name, original))
    for owner, name, original in waits:
        setattr(owner, name, wait(f"{getattr(owner, '__name__', owner)}.{name}", original))
    try:
        yield
    finally:
        for owner, name, original in (*originals, *waits):
            setattr(owner, name, original)


# Modules whose frames start threads for those who call them (a thread pool's): looked through for the code that asked
THREADING = ("threading", "concurrent.futures", "concurrent.futures.thread", "concurrent.futures._base",
             "multiprocessing.pool")


def _started_by_torch() -> bool:
    """Whether the code that asked for the thread being started (the first frame outside the threading modules) is
    PyTorch's own (torch.compile's pool of compile workers), not the answer's."""
    frame: Any = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "") in THREADING:
        frame = frame.f_back
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    return module == "torch" or module.startswith("torch.")


# The caller's number of host threads (check_fast_loss sets it): what torch.get_num_threads() reads during a call of the
# answer, and what its torch.set_num_threads() sets, the check's own work running in one thread (round 24: an answer
# that left torch.set_num_threads(1) passed, one being the check's own setting; running the answer with the caller's
# threads instead made each case several times slower on a shared machine)
_CALLER_THREADS: list[int] = []


@contextmanager
def _threads_as_the_callers(ops: Operations) -> Iterator[None]:
    """During the block, torch.get_num_threads() and torch.set_num_threads() read and set the caller's number (not the
    check's); a number left otherwise than the caller's noted in ops.settings_left."""
    if not _CALLER_THREADS:
        yield
        return
    caller, seen = _CALLER_THREADS[-1], [_CALLER_THREADS[-1]]
    get, put = torch.get_num_threads, torch.set_num_threads

    @functools.wraps(get)
    def get_num_threads() -> int:
        return seen[0]

    @functools.wraps(put)
    def set_num_threads(number: int) -> None:
        seen[0] = int(number)

    torch.get_num_threads, torch.set_num_threads = get_num_threads, set_num_threads  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.get_num_threads, torch.set_num_threads = get, put
        if seen[0] != caller:
            ops.settings_left.append(f"torch.get_num_threads(): {caller} -> {seen[0]}")


def _recorded(fn: Callable[..., object], *args: object) -> tuple[object, Operations]:
    """fn(*args), and the operations it ran; where fn took a tensor made on the host with the batch's and then
    raised a RuntimeError (a GPU refuses a CPU tensor of one dimension or more beside its own), that error in place
    of fn's result, for the check to report as the same mistake that a CPU runs through.  The caller's number of
    threads as fn sees it (`_threads_as_the_callers`)."""
    ops = Operations()
    ops.guarded = _callers_memory(args)
    _know(*args)
    # (TorchScript runs unoptimized throughout check_fast_loss, its functions' earlier plans dropped:
    # `_scripts_unoptimized`)
    with _threads_as_the_callers(ops), _Beneath(ops), ops, _unseen_watched(ops):
        try:
            got = fn(*args)
        except Exception as error:
            if isinstance(error, RuntimeError) and ops.host_mixed:
                got = error
            else:
                ops.raised_in_read = _raised_in_read(error, ops)
                if not ops.raised_in_read:
                    raise
                got = error
        finally:
            ops.outside()
    return got, ops


def _raised_in_read(error: BaseException, ops: Operations) -> str:
    """The read that `error`, raised by the answer, came from (`Operations.raised_reads`: the same error, or one it
    was raised from or while handling), or the export by DLPack of a tensor not on the host that preceded it; "" if
    neither.  On a GPU, np.asarray(x) (Tensor.__array__) raises there, and NumPy's from_dlpack refuses the capsule
    that x.__dlpack__() handed it: round 76's NumPy poolings, which FAIL on a CPU as host reads, showed an error
    there instead of a FAIL (call CL).  Only an answer that raised is judged so: it PASSes in no case."""
    chain: list[BaseException | None] = [error]
    seen: set[int] = set()
    while chain:
        e = chain.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        for name, raised in ops.raised_reads:
            if raised is e:
                return f"{name}, which raised ({_first_line(e)})"
        chain += [e.__cause__, e.__context__]
    return f"{ops.exported[0]}, then your function raised {_first_line(error)}" if ops.exported else ""


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0][:100]}" if text else type(error).__name__


def _padded_further(x: torch.Tensor) -> torch.Tensor:
    """MORE_PADDING more positions of zeros, and more up to one past the GPU's padded length (the same loss)."""
    more = max(MORE_PADDING, GPU_SIZES["length"] + 1 - x.shape[1])
    return torch.cat([x, x.new_zeros(x.shape[0], more, x.shape[2])], dim=1)


def _more_sequences(x: torch.Tensor, n: torch.Tensor, y: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The batch repeated (twice at least) to more sequences than the GPU's batch (the same loss)."""
    times = max(2, GPU_SIZES["batch"] // x.shape[0] + 1)
    return x.repeat(times, 1, 1), n.repeat(times), y.repeat(times)


def _wider(model: torch.nn.Sequential, x: torch.Tensor) -> tuple[torch.nn.Sequential, torch.Tensor]:
    """MORE_FEATURES more features of zeros, and the model with zero weights for them (the same loss)."""
    first, *rest = list(model)
    assert isinstance(first, torch.nn.Linear)
    wide = torch.nn.Linear(first.in_features + MORE_FEATURES, first.out_features, device=x.device)
    with torch.no_grad():
        wide.weight.copy_(F.pad(first.weight, (0, MORE_FEATURES)))
        wide.bias.copy_(first.bias)
    return torch.nn.Sequential(wide, *rest), F.pad(x, (0, MORE_FEATURES))


def _more_classes(model: torch.nn.Sequential) -> torch.nn.Sequential:
    """MORE_CLASSES more outputs of the last Linear, of zero weights and a bias of -UNLIKELY (no label is one)."""
    *rest, last = list(model)
    assert isinstance(last, torch.nn.Linear)
    wide = torch.nn.Linear(last.in_features, last.out_features + MORE_CLASSES, device=last.weight.device)
    with torch.no_grad():
        wide.weight.copy_(F.pad(last.weight, (0, 0, 0, MORE_CLASSES)))
        wide.bias.copy_(F.pad(last.bias, (0, MORE_CLASSES), value=-UNLIKELY))
    return torch.nn.Sequential(*rest, wide)


def _more_hidden(model: torch.nn.Sequential) -> torch.nn.Sequential:
    """MORE_HIDDEN more units in the first hidden layer, of zero weights in and out (a model without one: as it is)."""
    layers = list(model)
    at = [k for k, m in enumerate(layers) if isinstance(m, torch.nn.Linear)]
    if len(at) < 2:
        return model
    first, second = layers[at[0]], layers[at[1]]
    assert isinstance(first, torch.nn.Linear) and isinstance(second, torch.nn.Linear)
    into = torch.nn.Linear(first.in_features, first.out_features + MORE_HIDDEN, device=first.weight.device)
    out = torch.nn.Linear(second.in_features + MORE_HIDDEN, second.out_features, device=second.weight.device)
    with torch.no_grad():
        into.weight.copy_(F.pad(first.weight, (0, 0, 0, MORE_HIDDEN)))
        into.bias.copy_(F.pad(first.bias, (0, MORE_HIDDEN)))
        out.weight.copy_(F.pad(second.weight, (0, MORE_HIDDEN)))
        out.bias.copy_(second.bias)
    layers[at[0]], layers[at[1]] = into, out
    return torch.nn.Sequential(*layers)


_MATMUL = MATMUL
# The float32 matmul setting (TF32_SETTING, read through the API that reads without raising) and the other float32
# precision switches (FP32_PRECISIONS): settings.py, which every check's `keeping` reads them with too.
_tf32_saved, _tf32_restore, _precision, _set_precision = tf32_saved, tf32_restore, precision, set_precision


# Lecture 06's other global switches, read and written as plain booleans (PyTorch 2.13 keeps a split-K flag beside
# each reduced-precision one: written back only where an answer changed the first), and float16 accumulation where
# this PyTorch has it (round 19's adversary left it on, and passed)
REDUCED_PRECISION = ("allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction",
                     *(("allow_fp16_accumulation",) if hasattr(_MATMUL, "allow_fp16_accumulation") else ()))


Switches = tuple[tuple[bool, ...], tuple[bool, bool], tuple[object, ...]]


def _switches_saved() -> Switches:
    """The reduced-precision reductions' flags, deterministic algorithms (on, warn only), and FP32_PRECISIONS."""
    return (tuple(getattr(_MATMUL, name) for name in REDUCED_PRECISION),
            (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()),
            tuple(_precision(path) for path in FP32_PRECISIONS))


def _switches_restore(saved: Switches) -> None:
    """Put back what _switches_saved read, where an answer changed it (and only there), in FP32_PRECISIONS's order."""
    for name, was in zip(REDUCED_PRECISION, saved[0], strict=True):
        if getattr(_MATMUL, name) != was:
            setattr(_MATMUL, name, was)
    if _switches_saved()[1] != saved[1]:
        torch.use_deterministic_algorithms(saved[1][0], warn_only=saved[1][1])
    for path, value in zip(FP32_PRECISIONS, saved[2], strict=True):
        if _precision(path) != value:
            _set_precision(path, value)


def _attribute(owner: Any, name: str) -> tuple[str, Callable[[], object], Callable[[object], None]]:
    return (f"{owner.__name__}.{name}", lambda: getattr(owner, name), lambda value: setattr(owner, name, value))


def _global_hooks() -> Iterator[tuple[str, dict]]:
    """nn.Module's global hooks (register_module_forward_hook...), a dict each, by name."""
    module = torch.nn.modules.module
    return ((name, hooks) for name, hooks in vars(module).items()
            if name.startswith("_global_") and name.endswith("hooks") and isinstance(hooks, dict))


def _set_hooks(name: str, keys: object) -> None:
    """Remove the global hooks added since `keys` were read (an answer that added one FAILed)."""
    hooks = vars(torch.nn.modules.module)[name]
    for key in [key for key in hooks if key not in keys]:  # type: ignore[operator]
        del hooks[key]


# The global switches that lecture 06 names beside TF32 and the reduced-precision flags (round 20's adversary left
# cudnn.benchmark, cudnn.deterministic, fill_uninitialized_memory and mkldnn.enabled changed, and passed), and the
# other process-wide switches and hooks of the same kind: read before each call and after, and put back (label, read,
# write).  A switch this PyTorch lacks is left out.
OTHER_SWITCHES = tuple(
    [_attribute(torch.backends.cudnn, name) for name in ("benchmark", "deterministic", "enabled")
     if hasattr(torch.backends.cudnn, name)]
    + [_attribute(owner, name) for owner, name in ((torch.backends.mkldnn, "enabled"),
                                                   (torch.backends.opt_einsum, "enabled"),
                                                   (torch.backends.opt_einsum, "strategy"))
       if hasattr(owner, name)]
    + ([("torch.utils.deterministic.fill_uninitialized_memory",
         lambda: torch.utils.deterministic.fill_uninitialized_memory,  # type: ignore[attr-defined]
         lambda value: setattr(torch.utils.deterministic, "fill_uninitialized_memory", value))]
       if hasattr(getattr(torch.utils, "deterministic", None), "fill_uninitialized_memory") else [])
    + [("torch.autograd.is_multithreading_enabled()", torch.autograd.is_multithreading_enabled,
        lambda value: torch._C._set_multithreading_enabled(bool(value)))]
    + [(f"torch.backends.cuda.{kind}_sdp_enabled()", getattr(torch.backends.cuda, f"{kind}_sdp_enabled"),
        getattr(torch.backends.cuda, f"enable_{kind}_sdp"))
       for kind in ("flash", "mem_efficient", "math", "cudnn")
       if hasattr(torch.backends.cuda, f"{kind}_sdp_enabled") and hasattr(torch.backends.cuda, f"enable_{kind}_sdp")]
    + [(f"torch.nn.modules.module.{name}", lambda name=name: frozenset(vars(torch.nn.modules.module)[name]),
        lambda keys, name=name: _set_hooks(name, keys)) for name, _ in _global_hooks()])


def _others_saved() -> tuple[object, ...]:
    return tuple(read() for _, read, _ in OTHER_SWITCHES)


def _others_restore(saved: tuple[object, ...]) -> None:
    """Put back what _others_saved read, where an answer changed it (and only there)."""
    for (_, read, write), was in zip(OTHER_SWITCHES, saved, strict=True):
        if read() != was:
            write(was)


def _rng_states(device: str) -> tuple[torch.Tensor, ...]:
    """The global generators' states (the host's, and the GPU's on a GPU)."""
    return (torch.get_rng_state(), *((torch.cuda.get_rng_state(),) if device == "cuda" else ()))


def _checksum(states: Sequence[torch.Tensor]) -> str:
    return f"state {zlib.crc32(b''.join(bytes(s.numpy()) for s in states)):08x}"


def _state_saved(device: str) -> tuple[object, ...]:
    """What _state_restore puts back: anomaly detection, the default device, denormals, the generators."""
    return ((torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()), default_device(),
            flushes_denormals(), _rng_states(device))


def _state_restore(saved: tuple[object, ...], device: str) -> None:
    """Put back what _state_saved read (an answer that changed it FAILed: the tests after it must not inherit it)."""
    anomaly, device_set, flushes, rng = saved
    assert isinstance(anomaly, tuple) and isinstance(rng, tuple)
    torch.autograd.set_detect_anomaly(*anomaly)
    if default_device() != device_set:
        torch.set_default_device(device_set)  # type: ignore[arg-type]
    torch.set_flush_denormal(bool(flushes))
    torch.set_rng_state(rng[0])
    if device == "cuda":
        torch.cuda.set_rng_state(rng[1])


def _settings(device: str) -> dict[str, object]:
    """PyTorch's global settings that an answer could change for everyone after it: TF32, grad mode, autocast's, the
    default dtype, lecture 06's reduced-precision reductions and deterministic algorithms (the 08 adversary of
    round 17 left those changed, and passed), and the other float32 precision switches (round 18's); anomaly
    detection, the default device, the generators' state, denormals and the host's threads (round 19's)."""
    own = {"torch.is_anomaly_enabled()": torch.is_anomaly_enabled(),
            "torch.is_anomaly_check_nan_enabled()": torch.is_anomaly_check_nan_enabled(),
            "torch.set_default_device(...)": default_device(),
            "torch.get_rng_state()": _checksum(_rng_states(device)),
            "torch.set_flush_denormal(...)": flushes_denormals(),
            "torch.get_num_threads()": torch.get_num_threads(),
            f"torch.backends.cuda.matmul.{TF32_SETTING}": getattr(_MATMUL, TF32_SETTING),
            **{f"torch.backends.cuda.matmul.{name}": getattr(_MATMUL, name) for name in REDUCED_PRECISION},
            "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
            "torch.is_deterministic_algorithms_warn_only_enabled()":
                torch.is_deterministic_algorithms_warn_only_enabled(),
            "torch.is_grad_enabled()": torch.is_grad_enabled(),
            f"torch.is_autocast_enabled({device!r})": torch.is_autocast_enabled(device),
            f"torch.get_autocast_dtype({device!r})": torch.get_autocast_dtype(device),
            "torch.is_autocast_cache_enabled()": torch.is_autocast_cache_enabled(),
            "torch.get_default_dtype()": torch.get_default_dtype(),
            **{f"torch.backends.{path}": _precision(path) for path in FP32_PRECISIONS},
            **{label: read() for label, read, _ in OTHER_SWITCHES}}
    # other backends', hooks, profiler, warnings, generators (round 21); the Python process's own: print options, the
    # decimal context, logging, the recursion limit (round 23's test of every check); every other setting settings.py
    # reads (round 24's adversary left the collector off, NumPy's errors ignored, "warn always" on and torch.compile's
    # recompile limit raised, and passed): those not read above under the same name
    # (PyTorch's functions and classes, replaced: read around each case instead, `_loss_holds`, a fifth of a millisecond
    # a read)
    return {**own, **read_settings(name for name in WATCHED if name not in own and name != TORCH_FUNCTIONS)}


WATCHED = tuple(dict.fromkeys((*PROCESS_WIDE, *PROCESS, *EVERY)))


# The general guard, on a CPU: a list of device questions (DEVICE_FUNCTIONS, `_device_reads`) will always miss one, and
# a path of the answer's taken on a GPU only is then judged by nothing (round 75's adversary's three).  The lines of the
# answer's own code (`_LinesRun._own`: not this package's, PyTorch's, NumPy's or any installed library's, nor the
# standard library's; a notebook's cells and the test's answers module are) that ran in each case's call on the host's
# batch and in the reruns beside a GPU's (`_beside_a_gpus_batch`) are noted; a line that ran in neither is left for a
# GPU (PART, not PASS).  A `raise` or `assert` statement is exempt: a refusal of bad input, which a right answer never
# reaches on the check's batches.  On a GPU the check judges every path itself: nothing is traced there.
_UTILS = Path(__file__).resolve().parents[1]
_ANSWERS = Path(__file__).resolve().parent / "answers"


class _LinesRun:
    """The lines of the answer's own code run during `watching()`, by code object; `blind` where another tracer (a
    debugger, coverage) held sys.settrace at a call, so that nothing can be concluded."""

    def __init__(self, answer: Callable[..., object]) -> None:
        self.answer = getattr(inspect.unwrap(answer), "__code__", None)
        self.ran: dict[Any, set[int]] = {}
        self.reached: dict[Any, set[int]] = {}  # the offsets of the instructions run, by code object
        self.blind = False
        self._files: dict[str, bool] = {}
        paths = sysconfig.get_paths()
        roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(key)}
        roots |= {str(_UTILS), os.path.dirname(torch.__file__), os.path.dirname(np.__file__)}
        self._roots = tuple(sorted({os.path.join(os.path.realpath(r), "") for r in roots} |
                                   {os.path.join(os.path.abspath(r), "") for r in roots}))
        self._answers = (os.path.join(str(_ANSWERS), ""), os.path.join(os.path.realpath(_ANSWERS), ""))

    def _own(self, filename: str) -> bool:
        own = self._files.get(filename)
        if own is None:
            if filename.startswith("<"):  # frozen, exec'd and generated code; a terminal IPython's cells are own
                own = filename.startswith("<ipython-input-")
            else:
                path = os.path.abspath(filename)
                own = path.startswith(self._answers) or not path.startswith(self._roots)
            self._files[filename] = own
        return own

    def _called(self, frame: Any, event: str, arg: object) -> Any:
        if event != "call" or not self._own(frame.f_code.co_filename):
            return None
        lines = self.ran.setdefault(frame.f_code, set())
        offsets = self.reached.setdefault(frame.f_code, set())
        frame.f_trace_opcodes = True  # this frame's only: its calls too (`_calls`)

        def line(frame: Any, event: str, arg: object) -> Any:
            if event == "opcode":
                offsets.add(frame.f_lasti)
            elif event == "line":
                lines.add(frame.f_lineno)
            return line
        return line

    @contextmanager
    def watching(self) -> Iterator[None]:
        if sys.gettrace() is not None:
            self.blind = True
            yield
            return
        sys.settrace(self._called)
        try:
            yield
        finally:
            sys.settrace(None)

    def unrun(self) -> list[str]:
        """Each own line that the code objects entered hold and that ran in no watched call, as a sentence."""
        if self.blind:
            return []
        found = []
        for code, seen in self.ran.items():
            held = {line for *_, line in code.co_lines() if line is not None and line != code.co_firstlineno}
            for line in sorted(held - seen - _exempt_lines(code.co_filename)):
                text = linecache.getline(code.co_filename, line).strip()
                whose = "your function" if code is self.answer else f"your {code.co_qualname}"
                found.append(f"line {line} of {whose}{f' (`{text[:80]}`)' if text else ''} ran in neither run, on the "
                             "host's batch nor beside a GPU's: only a GPU judges it")
            # a line runs without all its calls: `a() if c else b()`, `c and f()` (round 78's adversary: the GPU's
            # pooling in a helper, called in a conditional expression's other arm, PASSed)
            reached = self.reached.get(code, set())
            # (a `finally` body is compiled twice, for the normal exit and for an exception's: a call whose source
            # position one instruction that ran shares has run)
            done = {where for line, start, where, text in _calls(code) if start in reached}
            for line, _, where, text in _calls(code):
                if line in seen and where not in done and line not in _exempt_lines(code.co_filename):
                    done.add(where)
                    whose = "your function" if code is self.answer else f"your {code.co_qualname}"
                    found.append(f"the call `{text[:80]}` on line {line} of {whose} ran in neither run, on the host's "
                                 "batch nor beside a GPU's: only a GPU judges it")
        return found


@functools.lru_cache(maxsize=256)
def _calls(code: Any) -> tuple[tuple[int, int, Any, str], ...]:
    """The calls that `code` makes (its CALL and CALL_FUNCTION_EX instructions; Python 3.11's PRECALL before a CALL),
    each as (its line, the offset of its first instruction, its source position, its source text where one line holds
    it).  An instruction's line is where its expression starts (co_positions)."""
    found, precall = [], None
    for ins in dis.get_instructions(code):
        if ins.opname == "PRECALL":
            precall = ins.offset
            continue
        where = ins.positions
        line = where.lineno if where is not None else None
        if ins.opname in ("CALL", "CALL_FUNCTION_EX") and where is not None and line is not None:
            text = linecache.getline(code.co_filename, line)
            text = (text[where.col_offset:where.end_col_offset] if where.end_lineno == line and
                    where.col_offset is not None and where.end_col_offset is not None else text).strip()
            found.append((line, ins.offset if precall is None else precall, tuple(where), text))
        precall = None
    return tuple(found)


@functools.lru_cache(maxsize=64)
def _exempt_lines(filename: str) -> frozenset[int]:
    """The lines of `filename`'s raise and assert statements (by its source in linecache: a notebook cell's too)."""
    lines = linecache.getlines(filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):  # (a cell's magics): the lines that start a raise or an assert
        return frozenset(i for i, text in enumerate(lines, 1) if re.match(r"\s*(raise|assert)\b", text))
    return frozenset(line for node in ast.walk(tree) if isinstance(node, (ast.Raise, ast.Assert))
                     for line in range(node.lineno, (node.end_lineno or node.lineno) + 1))


_LINES: list[_LinesRun] = []  # the check's, on a CPU (`check_fast_loss`)


def _lines_watched() -> Any:
    """The lines the block runs noted for the check's guard (`_LinesRun`), on a CPU; nothing on a GPU."""
    return _LINES[-1].watching() if _LINES else nullcontext()


def _first_difference(a: Operations, b: Operations) -> str:
    for (name, shapes), (other, other_shapes) in zip(a.seen, b.seen):
        if (name, shapes) != (other, other_shapes):
            return f"{name}{list(shapes)} against {other}{list(other_shapes)}"
    return f"{len(a.seen)} operations against {len(b.seen)}"


def check_fast_loss(fast_loss: Callable[..., torch.Tensor]) -> None:
    """fast_loss(model, x, n, y, bf16) on the padded batch: the slow step's loss, without its loop.  TorchScript runs
    unoptimized throughout, its functions' plans made before the check dropped (`_scripts_unoptimized`)."""
    with exercise("fast_loss") as ex, _scripts_unoptimized():
        yours = ex.answer(fast_loss)
        device = "cuda" if has_cuda() else "cpu"
        saved = (_tf32_saved(), torch.get_num_threads(), torch.get_autocast_dtype("cpu"),
                 torch.get_autocast_dtype("cuda"), _switches_saved(), _state_saved(device), _others_saved(),
                 read_settings(WATCHED))
        grad_mode, default_dtype = torch.is_grad_enabled(), torch.get_default_dtype()
        _BATCH_DEVICE[0] = device
        _CALLER_THREADS.append(saved[1])
        setattr(_MATMUL, TF32_SETTING, TF32_OFF)  # float32 as written: TF32 would round the products
        torch.set_num_threads(1)  # thousands of tiny operations: a pool of threads only waits for its slowest
        # autocast's default dtype is float16 on a GPU and bfloat16 on a CPU: as a GPU's here, so that an autocast
        # without dtype= (float16 on the student's GPU) does not pass on a CPU
        torch.set_autocast_dtype("cpu", torch.float16)
        _LEFT_FOR_A_GPU.pop(id(ex), None)
        if device == "cpu":
            _LINES.append(_LinesRun(fast_loss))
            _ADDRESSES.append([])
            # a path chosen before the check ran (a helper picked when its cell ran, by torch.cuda.is_available()) is
            # the host's here, and no rerun can choose again (round 78's adversary): a CPU's PASS says what it covers
            # (a line of its own above PASS, printed here: a change to the PASS line in utils.exercises would make every
            # solution's stamp stale)
        try:
            # The global generators start from a state that no answer's seed gives: an answer's np.random.seed(0)
            # PASSed in a full test run, where an earlier test had left NumPy's generator just seeded with 0, so the
            # call changed nothing the check compares (round 21, on the H200 and on a CPU).  Put back in `finally`.
            fresh = int.from_bytes(os.urandom(8), "little")
            np.random.seed(fresh % 2**32)
            random.seed(fresh)
            torch.manual_seed(fresh % 2**63)
            before = ex.passed
            _loss_holds(ex, yours, SMALLEST_BATCH, device)  # where shrinking ends for most wrong answers: try it first
            ex.passed = before + 1  # one case, one check, as for_all counts them
            # the generated cases from a caller whose cuDNN switch is not PyTorch's default (True; set through the
            # legacy flag, which every API reads without raising): an answer that "puts back" the default, not the
            # caller's value, FAILs there, and one that leaves it off FAILs on the case above (round 74's adversary)
            torch.backends.cudnn.allow_tf32 = False
            for_all(ex, batches(), lambda case: _loss_holds(ex, yours, case, device), examples=EXAMPLES_1,
                    chosen=[COURSE_BATCH, ZERO_TOKENS_BATCH, STEEP_BATCH, LONG_BATCH, LARGE_LOGITS_BATCH,
                            FAR_FROM_ZERO_BATCH, FAR_PADDED_BATCH, TASK_BATCH],
                    budget_s=0.5,
                    describe=lambda case: f"fast_loss on {case}")
            before = ex.passed
            _long_run_holds(ex, yours, device)  # one batch passed at every step of exercise 2's run, refilled in place
            ex.passed = before + 1
            # (one line per tensor named; beside a GPU's batch a meta tensor has no memory to name it by)
            named = dict.fromkeys(_ADDRESSES[-1] if device == "cpu" else [])
            taken = [f"your function took a raw address of {label} (data_ptr()): what it did with it only a GPU run "
                     "can show" for label in (named if len(named) == 1 else [k for k in named if k != ANONYMOUS])]
            left = [*taken, *_LEFT_FOR_A_GPU.pop(id(ex), []), *(_LINES[-1].unrun() if device == "cpu" else [])]
            if left:  # a path for a GPU's batch that the meta device could not judge: PART, not PASS
                raise LeftForGPU(
                    "every check on the host's batch; beside a GPU's batch (the meta device), host reads, copies from "
                    "the host and 16-bit arithmetic", f"{left[0]}" + (f" (and {len(left) - 1} more)" if len(left) > 1
                                                                      else ""))
            if device == "cpu":
                print("fast_loss: judged on this CPU, with a rerun as a GPU would answer its device questions")
        finally:
            _LEFT_FOR_A_GPU.pop(id(ex), None)
            if device == "cpu":
                _LINES.pop()
                _ADDRESSES.pop()
            _CALLER_THREADS.pop()
            _tf32_restore(saved[0])
            _switches_restore(saved[4])  # where an answer changed them (it FAILed then)
            torch.set_num_threads(saved[1])
            torch.set_autocast_dtype("cpu", saved[2])
            torch.set_autocast_dtype("cuda", saved[3])  # where an answer set the global default (it FAILed then)
            torch.set_grad_enabled(grad_mode)  # where an answer changed them (it FAILed then)
            torch.set_default_dtype(default_dtype)
            _state_restore(saved[5], device)
            _others_restore(saved[6])
            put_back(saved[7])  # type: ignore[arg-type]


def _hooks(owner: object) -> dict[str, tuple[object, ...]]:
    """The hooks that `owner` (a module, a tensor) holds, by the attribute that holds them: their keys."""
    return {name: tuple(hooks) for name, hooks in sorted(vars(owner).items())
            if name.endswith("hooks") and isinstance(hooks, dict) and hooks} if isinstance(owner, torch.nn.Module) \
        else {name: tuple(hooks) for name in ("_backward_hooks", "_post_accumulate_grad_hooks")
              if isinstance(hooks := getattr(owner, name, None), dict) and hooks}


def _caller_state(model: torch.nn.Module, x: torch.Tensor, n: torch.Tensor, y: torch.Tensor) -> dict[str, object]:
    """What of the caller's x, n, y and model an answer could change besides their values (compared apart): whether
    each tensor requires a gradient, its hooks; the model's submodules, parameters and buffers (their names), the hooks
    of each module and of each parameter (round 20's adversary: x.requires_grad_(), a forward hook, gradient hooks and
    a buffer left on the caller's model passed; a submodule added crashed the check), and each module's own
    attributes (round 21's: model.forward replaced)."""
    state: dict[str, object] = {}
    for label, t in (("x", x), ("n", n), ("y", y)):
        state[f"{label}.requires_grad"] = t.requires_grad
        state[f"{label}'s hooks"] = _hooks(t)
    state["the model's submodules"] = [name for name, _ in model.named_modules()]
    state["the model's parameters"] = [name for name, _ in model.named_parameters()]
    state["the model's buffers"] = [name for name, _ in model.named_buffers()]
    for name, module in model.named_modules():
        state[f"the hooks of {name or 'the model'}"] = _hooks(module)
        # its own attributes (round 21's adversary: model.forward wrapped in autocast, left on the caller's model)
        state[f"the attributes of {name or 'the model'}"] = sorted(vars(module))
    for name, p in model.named_parameters():
        state[f"{name}.requires_grad"] = p.requires_grad
        state[f"the hooks of {name}"] = _hooks(p)
    return state


def _state_changes(state: dict[str, object], now: dict[str, object]) -> list[str]:
    return [name for name in dict.fromkeys([*state, *now]) if state.get(name) != now.get(name)]


# round 67's adversary: TF32, or oneDNN's bf16, switched on for the call and put back in `finally`
PRECISION_HINT = ("bf16=False asks for the slow step's arithmetic, float32 products in float32 (no TF32), and "
                  "bf16=True for everything but the model's products as with bf16=False: a lower precision switched "
                  "on for the call rounds the inputs of every float32 product that runs while it holds (TF32 keeps 10 "
                  "bits of their mantissas, oneDNN's bf16 7), even when the setting is put back after: in which "
                  "precision do your float32 products run?")


def _lowered(ops: Operations) -> str:
    """How many float32 matrix products `ops` ran at a lower precision than its call began with, and the first."""
    count = len(ops.lowered)
    return (f"{count} float32 matrix product{'s' if count > 1 else ''} ran at a lower precision than the call began "
            f"with ({ops.lowered[0] if ops.lowered else ''})")


STORAGE_HINT = ("a tensor's storage handed to Python can be read there, on the host, in ways no check can follow (its "
                "elements, its bytes, a copy; on a GPU each a wait), so naming one counts as a read: PyTorch's "
                "operations on x itself follow its strides and storage offset, and x needs no rebuilding from its "
                "storage")


def _storages_named(ex: Checker, said: str, reads: Sequence[str]) -> None:
    """FAIL, with STORAGE_HINT, where `reads` (a recording's host reads) name a storage (STORAGES): said so, not as a
    read of a value."""
    named = [read for read in dict.fromkeys(reads) if read in STORAGES]
    ex.expect(not named, f"{said} handed a tensor's storage to Python ({', '.join(named)})", STORAGE_HINT)


# round 73's adversary: n.data.clamp_(min=1), x.data.mul_(mask), values and version counters unmoved
WRITE_HINT = ("x, n, y and the model's weights are the caller's, to read only: an in-place operation or out= on any "
              "tensor that shares their memory (a view, an alias) writes the caller's data, even where the values "
              "come out the same on this batch (exercise 2's graph would write its static inputs at every replay): "
              "compute into tensors of your own")


STATE_HINT = ("the caller uses x, n and the model again: leave them as they were (no requires_grad_(), no hooks, no "
              "new buffers, parameters, submodules or attributes such as a wrapped forward on them: a bf16 copy of "
              "the model is autocast's to make)")


# round 21's adversary: the loop over positions, and int(n.max()), moved into worker threads, passed unseen
THREAD_HINT = ("a CUDA graph (exercise 2) records the kernels of the thread that captures, and a thread's work is "
               "host-side Python, launched and joined at every call: do the whole computation in one call's tensor "
               "operations, in the calling thread")


PRODUCTS_HINT = ("bf16=True asks for the model's matrix products in bfloat16 (torch.autocast with "
                 "dtype=torch.bfloat16: without dtype=, a GPU's autocast runs float16), bf16=False for float32 "
                 "throughout")


def _later_clean(ex: Checker, call: str, when: str, ops: Operations, settings: dict[str, object], device: str,
                 bf16: bool, used: int) -> None:
    """What the first call of each case must not do, on a later call too (round 20's adversary: caches revalidated
    with torch.equal, a host read from the second call on, passed, the check looking at the first call only): every
    rule of the first call that one recording can be judged by, `ops` being any later call's (on a batch grown too,
    with its backward); `used`: the model's Linear layers (as many in the grown models).  The formats as well (round
    71's last adversary, adv124: autocast on with bf16=False, and float16 products with bf16=True, for batches of 256
    sequences or more passed, the grown batches being compared by their operations' names only)."""
    changed = [f"{name}: {was} -> {now}" for (name, was), now in
               zip(settings.items(), _settings(device).values(), strict=True) if was != now] + ops.settings_left
    ex.expect(not changed, f"{call}, called again ({when}), changed PyTorch's global settings "
              f"({', '.join(changed)})", "leave PyTorch's settings as the caller had them, at every call")
    ex.expect(not ops.lowered, f"{call}, called again ({when}): {_lowered(ops)}", PRECISION_HINT)
    ex.expect(not ops.written, f"{call}, called again ({when}), wrote into the memory of what the caller passed "
              f"({', '.join(dict.fromkeys(ops.written))})", WRITE_HINT)
    ex.expect(not ops.threads, f"{call}, called again ({when}), started a thread ({', '.join(ops.threads[:3])})",
              THREAD_HINT)
    _storages_named(ex, f"{call}, called again ({when}),", ops.host_reads)
    ex.expect(not ops.host_reads, f"{call}, called again ({when}), read a value on the host "
              f"({', '.join(dict.fromkeys(ops.host_reads))})",
              "a CUDA graph (exercise 2) replays kernels, not Python: at no call may anything be read or copied on "
              "the host, nor waited for (a cache checked by its values is a read at every call after the first)")
    ex.expect(not ops.transfers and not ops.host_mixed, f"{call}, called again ({when}), copied or used a tensor "
              f"made on the host ({', '.join([*ops.transfers, *ops.host_mixed])})", HOST_MADE_HINT)
    ex.expect(not ops.bf16_arithmetic and not ops.cast_rounded, f"{call}, called again ({when}): "
              f"{(ops.bf16_arithmetic or ops.cast_rounded or [''])[0]} in bf16 outside the matrix products",
              "bf16=True asks for the matrix products in bfloat16, and everything else as with bf16=False, at every "
              "call")
    ex.expect(not ops.cached_products, f"{call}, called again ({when}): autocast kept its cache",
              "pass cache_enabled=False to torch.autocast, at every call")
    _no_16_bit_floats_but_bf16s(ex, f"{call}, called again ({when})", bf16, ops)  # (in the first call's order)
    ex.expect(ops.bf16_products >= used if bf16 else ops.bf16_products == 0, f"{call}, called again ({when}): "
              f"{ops.bf16_products} matrix products in bfloat16 for the model's {used} Linear layers",
              PRODUCTS_HINT + ", at every call, whatever the batch's size")


def _loss_holds(ex: Checker, yours: Callable[..., object], case: Batch, device: str) -> None:
    """The property of exercise 1 for one batch, in float32 and in bf16."""
    model, x, n, y = build(case, device)
    large = case.scale >= LARGE_LOGITS_BATCH.scale  # a wrong value's hint: the cross-entropy's stability
    kept = [t.clone() for t in (x, n, y, *model.parameters())]
    for p in model.parameters():  # gradients a caller is adding up (round 19: backward() and zero_grad() inside passed)
        p.grad = torch.full_like(p, 0.5)
    held = [(p.grad, torch.full_like(p, 0.5)) for p in model.parameters()]
    # a case's other batches laid out as its x is (`laid_as`): a call's operations are compared with calls on the same
    # layout (an operation that copies a strided batch, x.contiguous(), does nothing on a contiguous one)
    laid = laid_as(case)
    unpadded = laid(torch.randn(x.shape, generator=torch.Generator().manual_seed(case.seed)).to(device))
    other = (model, unpadded, torch.full_like(n, case.padded), y)
    more = (model, *_more_sequences(x, n, y))
    more = (model, laid(more[1]), *more[2:])
    widened = _wider(model, x)
    further, wider = (model, laid(_padded_further(x)), n, y), (widened[0], laid(widened[1]), n, y)
    classes, hidden = (_more_classes(model), x, n, y), (_more_hidden(model), x, n, y)
    widened = _wider(_more_hidden(_more_classes(model)), _padded_further(more[1]))
    grown = (widened[0], laid(widened[1]), *more[2:])  # all at once
    for bigger in (wider[0], classes[0], hidden[0], grown[0]):  # their new layers hold a .grad too, as the caller's
        # (round 71's adversary: model.to(x.device) and model.float(), which convert each parameter's .grad as well,
        # ran 16 operations more on the caller's model than on a wider one without .grad, and FAILed as a loop)
        for param in bigger.parameters():
            if param.grad is None:
                param.grad = torch.full_like(param, 0.5)
    positions = f"{further[1].shape[1] - x.shape[1]} more padded positions"
    sequences = f"{more[1].shape[0] - x.shape[0]} more sequences"
    # bf16=False after bf16=True too, on the same model (round 21's adversary: bf16 latched by a bf16=True call, a set
    # of the models' ids or model.forward wrapped in autocast, passed, every bf16=False call coming first)
    library = read_settings((TORCH_FUNCTIONS,))  # compared after the case's calls, below
    for bf16 in ((False, True) if case.seed % 2 == 0 else (True, False)):
        call = f"fast_loss(..., bf16={bf16}) on {case}"
        settings, modes = _settings(device), [m.training for m in model.modules()]
        state = _caller_state(model, x, n, y)
        # An in-place write that leaves the values as they were (x.mul_(1.0), n.clamp_(min=1)) still writes the
        # caller's tensor (round 76's adversary): its version counter says so where the values cannot
        versions = [t._version for t in (x, n, y, *model.parameters())]
        layouts = [(t.shape, t.stride()) for t in (x, n, y, *model.parameters())]
        # where the batch is elsewhere than the host, on a CPU, below: whether the answer read where its inputs are, or
        # asked for a GPU, and the autocasts it entered (`_gpu_branch`)
        probed = case in PROBED_CASES and bf16 == (case.seed % 2 == 0) and device == "cpu"
        reads, host_named = list[str](), list[tuple[str, bool, object, object]]()
        with _device_reads(reads, as_cuda=False) if probed else nullcontext(), \
                _autocasts_named(host_named) if probed else nullcontext(), _lines_watched():
            got, ops = _recorded(yours, model, x, n, y, bf16)
        returned = getattr(got, "_version", None)  # a later write into the loss returned (round 78's adversary)
        restated = _state_changes(state, _caller_state(model, x, n, y))
        feeding = ops.feeding(got, list(model.parameters()))  # before the backward() below, which frees the graph
        mixed = (f"{call} used a tensor made on the host with the batch's tensors "
                 f"({ops.host_mixed[0] if ops.host_mixed else ''}"
                 f"{': ' + str(got).splitlines()[0][:120] if isinstance(got, RuntimeError) else ''})")
        if ops.raised_in_read and not ops.host_mixed:  # (a FAIL only: the count of checks as before)
            ex.expect(False, f"{call} read a value on the host ({ops.raised_in_read})",
                      "a CUDA graph (exercise 2) replays kernels, not Python: nothing may be read or copied on the "
                      "host (a GPU's memory cannot be read there at all), nor waited for")
        ex.expect(not isinstance(got, RuntimeError), mixed, HOST_MADE_HINT)
        changed_settings = [f"{name}: {was} -> {now}" for (name, was), now in
                            zip(settings.items(), _settings(device).values(), strict=True) if was != now
                            ] + ops.settings_left
        ex.expect(isinstance(got, torch.Tensor) and got.numel() == 1 and got.is_floating_point(),
                  f"{call} returned {what_returned(got)}, not the loss",
                  "return the mean loss over the batch as a tensor of one element, as F.cross_entropy does")
        assert isinstance(got, torch.Tensor)
        ex.expect(not restated, f"{call} changed what the caller passed ({', '.join(restated[:3])})", STATE_HINT)
        ex.expect(got.dtype == torch.float32, f"{call} returned a {got.dtype} loss",
                  "where does rounding accumulate? the loss, a reduction over the batch, stays float32 (notebook 06)"
                  if got.dtype.itemsize < 4 else "the loss in float32, as F.cross_entropy gives it for float32 logits")
        ex.expect(got.device == x.device, f"{call} returned a loss on {got.device}, the batch is on {x.device}",
                  "compute where the batch is: a copy to the host makes the host wait, and a graph cannot hold it")
        ex.expect(not changed_settings, f"{call} changed PyTorch's global settings ({', '.join(changed_settings)})",
                  "leave PyTorch's settings as the caller had them: they hold for all the code that runs after yours "
                  "(TF32, for one, rounds every float32 matrix product on a GPU)")
        ex.expect(not ops.lowered, f"{call}: {_lowered(ops)}", PRECISION_HINT)
        ex.expect(got.requires_grad, f"{call} returned a loss that does not depend on the model's weights",
                  "exercise 2 calls backward() on this loss: compute it from model(...), without .detach(), "
                  ".item() or torch.no_grad()")
        changed = [name for name, before, now in zip(("x", "n", "y", *(f"model's {p}" for p, _ in
                                                                    model.named_parameters())),
                                                     kept, (x, n, y, *model.parameters()), strict=True)
                   if before.dtype != now.dtype or not torch.equal(before, now)]
        changed += [name for name, layout, now in zip(("x", "n", "y", *(f"model's {p}" for p, _ in
                                                                      model.named_parameters())),
                                                      layouts, (x, n, y, *model.parameters()), strict=True)
                    if (now.shape, now.stride()) != layout and name not in changed]
        # only the version moved, the values, dtype, shape and strides as they were (round 75's adversary: n.unsqueeze_
        # then n.squeeze_ was told it "changed" n): an in-place operation all the same, put back or not
        moved = [name for name, version, now in zip(("x", "n", "y", *(f"model's {p}" for p, _ in
                                                                     model.named_parameters())),
                                                    versions, (x, n, y, *model.parameters()), strict=True)
                 if now._version != version and name not in changed]
        ex.expect(not changed and not moved, f"{call} changed its input {changed[0]}" if changed else
                  f"{call} ran an in-place operation on {moved[0] if moved else ''} (its version moved, though its "
                  "values, dtype, shape and strides are as they were)",
                  "the caller uses x, n and the model again: leave them as they were (no in-place operation on "
                  "them, no model.to(...))")
        ex.expect(not ops.written, f"{call} wrote into the memory of what the caller passed "
                  f"({', '.join(dict.fromkeys(ops.written))})", WRITE_HINT)
        regraded = [name for (name, p), (grad, was) in zip(model.named_parameters(), held, strict=True)
                    if p.grad is None or p.grad is not grad or not torch.equal(p.grad, was)]
        ex.expect(not regraded, f"{call} changed the gradient that the model's {regraded[0] if regraded else ''} held "
                  "(its .grad)",
                  "the caller runs backward() on your loss, and may be adding up the gradients of several losses: "
                  "return the loss and leave .grad as it was (no backward() or zero_grad() inside)")
        moded = [name or "the model" for (name, m), was in zip(model.named_modules(), modes, strict=True)
                 if m.training != was]
        ex.expect(not moded, f"{call} changed the training mode of {moded[0] if moded else ''} "
                  "(model.train() / model.eval())",
                  "exercise 2 trains this model after your call: leave its mode as the caller set it (round 18)")
        ex.expect(not ops.threads, f"{call} started a thread ({', '.join(ops.threads[:3])})", THREAD_HINT)
        _storages_named(ex, call, ops.host_reads)
        ex.expect(not ops.host_reads, f"{call} read a value on the host ({', '.join(dict.fromkeys(ops.host_reads))})",
                  "a CUDA graph (exercise 2) replays kernels, not Python: nothing may be read or copied on the "
                  "host, nor waited for, and the shapes must not depend on the data")
        ex.expect(not ops.transfers, f"{call} copied a tensor made on the host to the batch's device "
                  f"({', '.join(ops.transfers)})",
                  "a function of PyTorch's that you call makes a tensor from Python data at each call, on the host, "
                  "and copies it where the batch is: the copy is your call's all the same (the host waits, and a "
                  "CUDA graph, exercise 2, cannot hold it); which operations do that function's work on the "
                  "batch's own tensors?" if any(", inside torch" in t for t in ops.transfers) else
                  "a tensor made from Python data (a list, a number, a NumPy array) is made on the host and copied, "
                  "device= or not: which functions fill a tensor where the batch is? A copy from the host makes the "
                  "host wait, and a CUDA graph (exercise 2) cannot hold it" if any("Python data" in t for t in
                                                                                    ops.transfers) else
                  "make tensors where the batch is (device=x.device): a copy from the host makes the host wait, and "
                  "a CUDA graph (exercise 2) cannot hold it")
        ex.expect(not ops.host_mixed, mixed, HOST_MADE_HINT)
        # a second loss, of another batch, made before the first one's backward (round 21's adversary: the pooled
        # mean written into a buffer kept from call to call passed, the check running each backward before the next
        # call; a caller that adds up the gradients of several losses got an error, or the gradient of the last)
        _, beside = _recorded(yours, *other, bf16)
        # and a third of the same shapes (round 71's adversary: the pooled mean written into two buffers kept from
        # call to call, in turn, passed with two losses held; a caller holding three got an error from backward())
        _recorded(yours, model, -unpadded, n, y, bf16)
        params = [p for _, p in model.named_parameters()]
        grads: Sequence[torch.Tensor | None] = [None] * len(params)
        backward = Operations()  # the backward recorded too (round 21's adversary: a hook reading on the host, and
        # a custom Function's backward looping over positions, passed: exercise 2 captures the backward as well)
        try:
            grads, backward = _recorded(_backward_of, got, params)  # type: ignore[assignment]
            untrained = [name for (name, _), g in zip(model.named_parameters(), grads, strict=True) if g is None]
        except RuntimeError as error:
            ex.expect("inplace" not in str(error) and "in-place" not in str(error),
                      f"{call}: backward() on its loss raised once it had been called again, on another batch "
                      f"({str(error).splitlines()[0][:120]})", OVERWRITTEN_HINT)
            untrained = [f"any weight (backward() raised: {str(error).splitlines()[0][:100]})"]
        ex.expect(not backward.threads, f"{call}: the loss's backward started a thread "
                  f"({', '.join(backward.threads[:3])})", THREAD_HINT)
        _storages_named(ex, f"{call}: the loss's backward", backward.host_reads)
        ex.expect(not backward.host_reads, f"{call}: the loss's backward read a value on the host "
                  f"({', '.join(dict.fromkeys(backward.host_reads))})",
                  "exercise 2 captures backward() in the CUDA graph too: a hook or a backward of yours may not read a "
                  "value on the host, nor wait for the GPU, nor make a shape from the data")
        ex.expect(not backward.lowered, f"{call}: in the loss's backward, {_lowered(backward)}", PRECISION_HINT)
        _no_16_bit_floats_but_bf16s(ex, call, bf16, ops, backward)
        ex.expect(not backward.transfers and not backward.host_mixed, f"{call}: the loss's backward copied or used a "
                  f"tensor made on the host ({', '.join([*backward.transfers, *backward.host_mixed])})",
                  HOST_MADE_HINT)
        ex.expect(not untrained, f"{call}: no gradient reaches the model's {untrained[0] if untrained else ''}",
                  "exercise 2 trains every weight with backward() on this loss: compute it from the weights themselves "
                  "(a cast such as .to(torch.bfloat16) passes the gradient on; .detach() and torch.no_grad() cut it)")
        wanted, used = ops.bf16_products, sum(isinstance(m, torch.nn.Linear) for m in model)
        ex.expect(wanted >= used if bf16 else wanted == 0,
                  f"{call}: {wanted} matrix products in bfloat16 for the model's {used} Linear layers", PRODUCTS_HINT)
        weights = {id(m.weight): name for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
        wide = [f"{weights[i]}.weight ({name})" for name, uses in ops.wide_uses for i in uses if i in weights]
        ex.expect(not bf16 or not wide, f"{call}: float32 arithmetic on the model's {wide[0] if wide else ''} "
                  "beside the bf16 matrix products",
                  "bf16=True asks for each of the model's matrix products in bfloat16 only: run the model once, under "
                  "torch.autocast(..., dtype=torch.bfloat16)")
        unrounded = [f"{name}.weight" for name, m in model.named_modules()
                     if isinstance(m, torch.nn.Linear) and id(m.weight) not in feeding]
        ex.expect(not bf16 or not unrounded,
                  f"{call}: the loss does not come from a bfloat16 matrix product of the model's "
                  f"{unrounded[0] if unrounded else ''}",
                  "bf16=True asks for each of the model's matrix products in bfloat16, and for the loss computed from "
                  "their results: run the whole model under torch.autocast(..., dtype=torch.bfloat16), and compute the "
                  "loss from what it returns")
        ex.expect(not ops.cached_products, f"{call}: autocast kept its cache (cache_enabled=True) for "
                  f"{ops.cached_products} matrix products",
                  "exercise 2 captures this code in a CUDA graph, where autocast must not keep its bf16 copies of the "
                  "weights: pass cache_enabled=False to torch.autocast (and leave the global setting as it was)")
        exact, bound = loss_and_bound(model, x, n, y, bf16)
        loss = float(got.detach())
        off = abs(loss - exact)
        # a loss written after the call returned it, by a later call (one kept buffer, returned each call): its value
        # when returned is gone; the cause named, as check_fast_step's `changed_later` does for losses()
        later = off > bound and returned is not None and got._version != returned
        ex.expect(off <= bound,
                  f"{call} returned {loss:.7g}; the slow step's loss is {exact:.7g}, off by {off:.1e}, and rounding in "
                  f"{'bf16' if bf16 else 'float32'} can move it by {bound:.1e} at most" + (
                      " -- the tensor it returned was written after it returned, by a later call of your function"
                      if later else ""),
                  "return a new tensor from each call: a caller that keeps a loss (exercise 2's losses()) sees a "
                  "tensor that a later call writes into change under it" if later else
                  (_layout_hint(yours, model, x, n, y, bf16, exact, bound) if not off <= bound else "")
                  or _value_hint(bf16, large))
        # the gradient once the value is right (a wrong value moves it too: its hint comes first)
        _gradients_hold(ex, call, model, x, n, y, bf16, dict(zip(params, grads, strict=True)))
        with torch.no_grad():  # the weights changed in place, as an optimizer step changes them
            for p in model.parameters():
                p.mul_(-0.5)  # (a power of 2: undone exactly below)
        try:
            settings = _settings(device)
            stepped, later = _recorded(yours, model, x, n, y, bf16)
            _later_clean(ex, call, "after the model's weights changed in place", later, settings, device, bf16, used)
            exact_stepped, bound_stepped = loss_and_bound(model, x, n, y, bf16)
        finally:
            with torch.no_grad():
                for p in model.parameters():
                    p.mul_(-2.0)
        again = float(stepped.detach()) if isinstance(stepped, torch.Tensor) and stepped.numel() == 1 else math.nan
        off = abs(again - exact_stepped) if math.isfinite(again) else math.inf
        # stale only where it is the old weights' loss: an answer off on any weights may first show it here (the 08
        # adversary of round 17: n + 1e-5 got the staleness hint)
        stale = abs(again - exact) <= bound
        ex.expect(off <= bound_stepped, f"{call}, again after the model's weights changed in place (as an optimizer "
                  f"step changes them), returned {again:.7g}; the slow step's loss for the new weights is "
                  f"{exact_stepped:.7g}, off by {off:.1e}, and rounding can move it by {bound_stepped:.1e} at most" +
                  (f" (for the weights before the change it was {exact:.7g}: your value)" if stale else ""),
                  "compute from the model's weights as they are at each call: anything kept from an earlier call is "
                  "stale once the optimizer has stepped" if stale else _value_hint(bf16, large))
        # new values in x, n and y, in place, as exercise 2 refills its static inputs each step: the sequences moved
        # one place along (x with its lengths: n too, round 19's adversary kept 1/n by n's identity), new labels
        with torch.no_grad():
            x.copy_(x.roll(1, 0)).mul_(-0.5)  # (a power of 2: undone exactly below; the padding stays zeros)
            n.copy_(n.roll(1, 0))
            y.copy_(y.flip(0))
        try:
            settings = _settings(device)
            refilled, later = _recorded(yours, model, x, n, y, bf16)
            _later_clean(ex, call, "after x, n and y were refilled in place", later, settings, device, bf16, used)
            exact_refilled, bound_refilled = loss_and_bound(model, x, n, y, bf16)
        finally:
            with torch.no_grad():
                x.copy_(x.mul_(-2.0).roll(-1, 0))
                n.copy_(n.roll(-1, 0))
                y.copy_(y.flip(0))
        again = float(refilled.detach()) if isinstance(refilled, torch.Tensor) and refilled.numel() == 1 else math.nan
        off = abs(again - exact_refilled) if math.isfinite(again) else math.inf
        stale = abs(again - exact) <= bound  # the loss of the values before the refill (round 18's adversary)
        ex.expect(off <= bound_refilled, f"{call}, again after x, n and y were refilled in place with new values (as "
                  f"exercise 2 refills its static inputs), returned {again:.7g}; the slow step's loss for the new "
                  f"values is {exact_refilled:.7g}, off by {off:.1e}, and rounding can move it by "
                  f"{bound_refilled:.1e} at most" + (f" (for the values before the refill it was {exact:.7g}: your "
                                                     "value)" if stale else ""),
                  "compute from the values the tensors hold at each call: anything kept by a tensor's identity is "
                  "stale once the caller refills it in place" if stale else _value_hint(bf16, large))
        ex.expect(not ops.bf16_arithmetic, f"{call}: {ops.bf16_arithmetic[0] if ops.bf16_arithmetic else ''}, "
                  "outside the matrix products",
                  "bf16=True asks for the matrix products in bfloat16, and everything else as with bf16=False: which "
                  "of your operations rounds its result to 16 bits?")
        ex.expect(not ops.cast_rounded, f"{call}: {ops.cast_rounded[0] if ops.cast_rounded else ''} took a value that "
                  "a cast or a copy had rounded to bfloat16, outside the matrix products",
                  "bf16=True asks for the matrix products in bfloat16, and everything else as with bf16=False: which "
                  "of your casts, or copies into a bf16 tensor (buf[:] = t, out=, as_tensor(dtype=)), rounds a value "
                  "that goes on to something other than a matrix product?")
        settings, recorded = _settings(device), list[Operations]()
        named: dict[int, str] = {}  # each later recording's batch, for `_later_clean`'s messages (`_batch_of`)
        static = _settled(yours, other, bf16, ops, lambda o: o.seen, recorded, beside)
        _batch_of(named, recorded, "on a batch of the same shape and other values")
        warm = ops if static.seen == ops.seen else _recorded(yours, model, x, n, y, bf16)[1]
        recorded.append(warm)
        _batch_of(named, recorded, "on the same batch")
        ex.expect(static.seen == warm.seen,
                  f"{call}: the operations differ between calls on two batches of one shape, this one and one of "
                  f"other values, every sequence full length ({_first_difference(warm, static)})",
                  "a CUDA graph (exercise 2) records one call's operations and replays them for every batch: run the "
                  "same operations at every call, whatever the lengths (work on the whole padded batch: zeros add "
                  "nothing to a sum) and whatever earlier calls did (work that a call skips because an earlier one "
                  "kept its result is missing from every replay)")
        # the grown batches with their backward: the operations of the call and of its backward (`backward`, above)
        both, warm_both = _WithBackward(yours), Operations()
        warm_both.seen = [*warm.seen, *backward.seen]
        largest = _settled(both, grown, bf16, warm_both, Operations.names, recorded)
        _batch_of(named, recorded, "on a batch and model grown: longer, larger and wider")
        _backward_raised(ex, call, both)
        if largest.names() != warm_both.names():  # the batch itself in one recording too, as the grown ones (a
            # backward recorded apart ran some bookkeeping of its own: activation checkpointing's, round 21)
            warm_both = _recorded(both, model, x, n, y, bf16)[1]
            recorded.append(warm_both)
            _batch_of(named, recorded, "on the same batch, with its backward")
            _backward_raised(ex, call, both)
        if largest.names() != warm_both.names():
            for grew, args, hint in ((positions, further, POSITIONS_HINT), (sequences, more, LOOP_HINT),
                                     (f"{MORE_FEATURES} more features", wider, LOOP_HINT),
                                     (f"{MORE_CLASSES} more classes", classes, LOOP_HINT),
                                     (f"{MORE_HIDDEN} more hidden units", hidden, LOOP_HINT),
                                     ("a longer, larger and wider batch and model", grown, LOOP_HINT)):  # each alone
                longer = _settled(both, args, bf16, warm_both, Operations.names, recorded)
                _batch_of(named, recorded, f"on a batch grown: {grew}")
                _backward_raised(ex, call, both)
                ex.expect(longer.names() == warm_both.names(),
                          f"{call}: {_more_operations(longer, warm_both)} for {grew}",
                          hint)
        for later in recorded:  # every rule of a recording, on every recording (the formats too: round 71's last)
            _later_clean(ex, call, named[id(later)], later, settings, device, bf16, used)
        restated = _state_changes(state, _caller_state(model, x, n, y))
        ex.expect(not restated, f"{call}, called again, changed what the caller passed ({', '.join(restated[:3])})",
                  STATE_HINT)
        # the caller's state otherwise than the defaults, and (on a CPU) the batch elsewhere than the host: on the
        # smallest and the chosen cases, the latter one mode a case (the run's time about as it was)
        # (the evaluating caller in both modes: round 69's second adversary's padded mean for a bf16=True evaluation
        # passed, its probes being SMALLEST_BATCH and STEEP_BATCH, one unpadded sequence of length 1 and one Linear;
        # LONG_BATCH's padded sequences of several lengths and hidden layer tell it, by the value)
        if case in PROBED_CASES:
            _callers_state_kept(ex, yours, call, model, x, n, y, bf16, device)
            _callers_state_kept(ex, yours, call, model, x, n, y, bf16, device, grad=True)
        if probed:
            _elsewhere(ex, yours, call, model, x, n, y, bf16)
            if reads or ops.fills:  # (a fill by a mask reads where its value is on the GPU: MASK_FILLS)
                _gpu_branch(ex, yours, call, model, x, n, y, bf16, (ops, warm), host_named)
        if device != "cpu" and case == COURSE_BATCH:  # in both modes: exercise 2 calls with bf16=True (round 68's
            # adversary: the model on a private stream never joined, with bf16=True only, passed, this ran in the
            # course batch's one probed mode, bf16=False)
            _from_other_streams(ex, yours, call, model, x, n, y, bf16)
    # PyTorch's own functions and classes, replaced during the case's calls and left so (round 32's adversary:
    # torch.nn.Linear.forward replaced by one under autocast, switched by the last call's bf16: every Linear of the
    # process after it ran in bf16): read around each case (a fifth of a millisecond a read), put back when the check
    # ends
    replaced = read_settings((TORCH_FUNCTIONS,))
    ex.expect(replaced == library, f"fast_loss on {case}, called with bf16=False and bf16=True, replaced PyTorch's own "
              f"functions and left them so ({replaced[TORCH_FUNCTIONS]})",
              "a function or class of PyTorch replaced inside yours is replaced for all the code after it (every "
              "model's layers, the caller's, the optimizer's): change the computation in your own function, not in "
              "the library")


# One small batch called LONG_RUN_STEPS times over (round 76's adversary, adv139: the reciprocal of n kept once one n
# had been passed 16 times, keyed by its identity, address and shape, PASSed: no case handed the answer one n more than
# 14 times, and the kept value ran on one line with the fresh one, so `_LinesRun` saw nothing unrun).  The same x, n and
# y at every step, as exercise 2's eager steps pass their static inputs, refilled in place with new values before each
# step (new lengths in n, a new batch in x, new labels in y), each step in both modes, bf16=True (exercise 2's) first;
# every LONG_RUN_WEIGHTS_EVERY steps the weights changed in place, as an optimizer step changes them, and the answer
# called once more on the same, unchanged x, n and y, as exercise 2's graph is captured from a call after warm-up calls
# on unchanged static inputs whose updates changed the weights.  Every loss against the slow step's (`loss_and_bound`);
# a few calls recorded (`_recorded`) and their operations compared with a refilled step's: a cache keyed by the
# inputs' version counters (which an in-place refill moves) gives right values, but its call on unchanged inputs skips
# work, which a graph captured from such a call never runs (its replays write new values and move no version counter).
# Its cost on the CPU: ~0.12 s with the solution (660 calls, 330 references), 6-7% of a check run after another.
LONG_RUN_BATCH = Batch(lengths=(2, 5, 1, 4), padded=5, features=3, hidden=(), classes=3, scale=1.0, cancel=0.0,
                       seed=21)
LONG_RUN_WEIGHTS_EVERY = 10
LONG_RUN_HINT = ("compute from the values that x, n, y and the weights hold at each call, however many calls came "
                 "before: a value computed from an earlier call's inputs, kept by the tensors' identity, address or "
                 "shape, is stale once the caller writes new values into the same tensors (exercise 2 does so at "
                 "every step)")
LONG_RUN_WORK_HINT = ("exercise 2 captures its CUDA graph from a call after warm-up calls on the same, unchanged "
                      "static inputs, and replays that call's operations for every batch, writing new values into the "
                      "inputs without running any Python: work that a call skips because an earlier call on the same "
                      "tensors kept its result is missing from every replay; run the same operations at every call")


class _Knowing(TorchFunctionMode):
    """Notes every tensor a call makes in _KNOWN, as `_recorded` does, and records nothing else: a tensor that the
    long run's first, unrecorded calls made and kept (a cache of the batch's shape) is the answer's, not one made on
    the host, where a later recorded call meets it."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        _know(out)
        return out


def _long_run_holds(ex: Checker, yours: Callable[..., object], device: str) -> None:
    """LONG_RUN_BATCH, called at each of LONG_RUN_STEPS steps on the same x, n and y refilled in place, in both modes,
    the weights changed every LONG_RUN_WEIGHTS_EVERY steps and the answer called again on the unchanged batch then:
    every loss within the bound, its graph reaching the weights, the inputs left unwritten; a few calls recorded and
    judged as a later call of a case is (`_later_clean`), their operations the same as a refilled step's, and the
    last calls' gradients (see LONG_RUN_BATCH)."""
    model, x, n, y = build(LONG_RUN_BATCH, device)
    params = list(model.parameters())
    inputs = (x, n, y, *params)
    names = ("x", "n", "y", *(f"model's {name}" for name, _ in model.named_parameters()))
    used = sum(isinstance(m, torch.nn.Linear) for m in model)
    g = torch.Generator().manual_seed(LONG_RUN_BATCH.seed)
    batch, padded, features = x.shape
    classes = [m for m in model if isinstance(m, torch.nn.Linear)][-1].out_features
    lengths = n.detach().cpu().long()
    last = LONG_RUN_STEPS // LONG_RUN_WEIGHTS_EVERY * LONG_RUN_WEIGHTS_EVERY  # the last step whose weights change
    # the calls recorded, by (step, again): a refilled step's twice (the second's operations, those to compare with),
    # the first call on an unchanged batch, and the last one
    recorded_at = {(2, False), (3, False), (LONG_RUN_WEIGHTS_EVERY, True), (last, True)}
    reference: dict[bool, Operations] = {}
    settings = _settings(device)  # as the run found them: each recorded call's are compared with them
    # the slow step's loss for the values the tensors hold now, with bf16's bound, the larger (u is 2**-8, not
    # float32's epsilon; the rest is the same): one reference a step for both modes' calls
    slow: list[tuple[float, float]] = []
    # the first step's calls note the tensors they make (a cache of the batch's shape, made on the first call: on a CPU
    # a recorded call would take it for a tensor made on the host); a tensor made later and kept is compared by the
    # operations that made it (a recorded call's operations against step 3's, below, before its other rules)
    knowing = _Knowing if device == "cpu" else nullcontext
    widths = "→".join(str(w) for w in (features, *LONG_RUN_BATCH.hidden, classes))
    run = (f"on a batch of {batch} sequences padded to {padded} positions of {features} features (an MLP {widths}), "
           f"called at each of {LONG_RUN_STEPS} steps on the same x, n and y (as exercise 2's "
           f"steps pass their static inputs), refilled in place with new values before each step, the weights changed "
           f"in place every {LONG_RUN_WEIGHTS_EVERY} steps and the function called again then")

    def judged(step: int, again: bool, bf16: bool) -> torch.Tensor:
        call = f"fast_loss(..., bf16={bf16}) {run}"
        at = (f"step {step}, called again on the unchanged x, n and y after the weights changed in place" if again else
              f"step {step}, right after x, n and y were refilled in place")
        versions = [t._version for t in inputs]
        if (step, again) in recorded_at:
            got, ops = _recorded(yours, model, x, n, y, bf16)
            if step == 3 and not again:
                reference[bf16] = ops
            elif step > 3:
                ex.expect(ops.seen == reference[bf16].seen, f"{call}: at {at}, it ran other operations than at step 3 "
                          f"({_first_difference(ops, reference[bf16])})", LONG_RUN_WORK_HINT)
            _later_clean(ex, call, at, ops, settings, device, bf16, used)
        elif step == 1:
            with knowing():
                got = yours(model, x, n, y, bf16)
        else:
            got = yours(model, x, n, y, bf16)
        if not (isinstance(got, torch.Tensor) and got.numel() == 1 and got.is_floating_point()):
            ex.expect(False, f"{call}: at {at}, it returned {what_returned(got)}, not the loss", LONG_RUN_HINT)
        assert isinstance(got, torch.Tensor)
        moved = [name for name, t, version in zip(names, inputs, versions, strict=True) if t._version != version]
        if moved:
            ex.expect(False, f"{call}: at {at}, it ran an in-place operation on {moved[0]}",
                      "the caller uses x, n and the model again: leave them as they were (no in-place operation on "
                      "them), at every call")
        if not got.requires_grad:
            ex.expect(False, f"{call}: at {at}, it returned a loss that does not depend on the model's weights",
                      "exercise 2 calls backward() on this loss at every step: compute it from model(...) at every "
                      "call, without .detach() or anything kept from an earlier call")
        if not slow:
            slow.append(loss_and_bound(model, x, n, y, True))
        exact, bound = slow[0]
        loss = float(got.detach())
        off = abs(loss - exact)
        if not off <= bound:  # (with bf16=False, outside float32's bound too: it says that one)
            exact, bound = loss_and_bound(model, x, n, y, bf16)
            ex.expect(False, f"{call}: at {at}, it returned {loss:.7g}; the slow step's loss for that step's values "
                      f"is {exact:.7g}, off by {off:.1e}, and rounding in {'bf16' if bf16 else 'float32'} can move it "
                      f"by {bound:.1e} at most", _value_hint(bf16) if step == 1 and not again else LONG_RUN_HINT)
        return got

    for step in range(1, LONG_RUN_STEPS + 1):
        new = torch.randint(1, padded + 1, (batch,), generator=g)
        lengths = new if not torch.equal(new, lengths) else new % padded + 1  # (new lengths at every step)
        real = (torch.arange(padded) < lengths[:, None])[..., None]
        values = torch.randn(batch, padded, features, generator=g) * real  # (the padding zeros)
        labels = torch.randint(0, classes, (batch,), generator=g)
        with torch.no_grad():
            x.copy_(values)
            n.copy_(lengths)
            y.copy_(labels)
        slow.clear()
        for bf16 in (True, False):
            judged(step, False, bf16)
        if step % LONG_RUN_WEIGHTS_EVERY == 0:
            with torch.no_grad():  # in place, as an optimizer's step writes them
                for p in params:
                    p.add_(torch.randn(p.shape, generator=g).to(device), alpha=0.3)
            slow.clear()
            for bf16 in (True, False):
                got = judged(step, True, bf16)
                if step == last:  # the gradients of the last calls too
                    call = f"fast_loss(..., bf16={bf16}) {run}, at step {step}"
                    grads: Sequence[torch.Tensor | None] = [None] * len(params)
                    try:
                        grads = torch.autograd.grad(got, params, allow_unused=True)
                    except RuntimeError as error:
                        ex.expect(False, f"{call}: backward() on its loss raised ({str(error).splitlines()[0][:120]})",
                                  LONG_RUN_HINT)
                    untrained = [name for name, grad in zip(names[3:], grads, strict=True) if grad is None]
                    ex.expect(not untrained, f"{call}: no gradient reaches the {untrained[0] if untrained else ''}",
                              "exercise 2 trains every weight with backward() on this loss, at every step: compute it "
                              "from the weights themselves at every call")
                    _gradients_hold(ex, call, model, x, n, y, bf16, dict(zip(params, grads, strict=True)))


def _gradients_hold(ex: Checker, call: str, model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor,
                    y: torch.Tensor, bf16: bool, grads: dict[torch.Tensor, torch.Tensor | None]) -> None:
    """The loss's gradients (`grads`, by parameter: those asked for) against the slow step's: the last layer's bias,
    then every other parameter asked for whose gradient no rounding can make jump."""
    last = [m for m in model if isinstance(m, torch.nn.Linear)][-1].bias
    grad = grads.get(last)
    exact_grad = last_bias_gradient(model, x, n, y)
    off_grad = float((grad.detach().double().cpu() - exact_grad).abs().sum()) if grad is not None else math.inf
    ex.expect(off_grad <= BIAS_GRADIENT_SHARE * float(exact_grad.abs().sum()) + BIAS_GRADIENT_FLOOR,
              f"{call}: the loss's gradient for the last layer's bias is off by {off_grad:.2g} (summed over its "
              f"elements) from the slow step's, {float(exact_grad.abs().sum()):.2g} in all",
              "exercise 2 trains with backward() on this loss: its gradient must be the slow step's too, not only "
              "its value; which part of your loss did you take out of autograd's graph?")
    for (name, p), (exact_g, terms, jumps) in zip(model.named_parameters(), exact_gradients(model, x, n, y, bf16),
                                                   strict=True):
        g = grads.get(p)
        if jumps or g is None:
            continue
        off_g = float((g.detach().double().cpu() - exact_g).abs().sum())
        share = GRADIENT_SHARE if bf16 else FLOAT32_GRADIENT_SHARE
        ex.expect(off_g <= share * float(exact_g.abs().sum()) + terms,
                  f"{call}: the loss's gradient for the model's {name} is off by {off_g:.2g} (summed over its "
                  f"elements) from the slow step's, {float(exact_g.abs().sum()):.2g} in all",
                  "exercise 2 trains every weight with backward() on this loss: each gradient must be the slow "
                  "step's too; where a backward is yours, does it pass on what the forward did (ReLU's mask)?")


def _callers_state_kept(ex: Checker, yours: Callable[..., object], call: str, model: torch.nn.Sequential,
                        x: torch.Tensor, n: torch.Tensor, y: torch.Tensor, bf16: bool, device: str,
                        grad: bool = False) -> None:
    """A caller whose state is not the defaults (round 24's adversary: model.train(), requires_grad_(True) on every
    parameter and torch.set_grad_enabled(True), forced inside, passed, the check calling with a model in training mode,
    every parameter trainable, grad mode on): the model in eval mode, its first layer frozen, the call under
    torch.no_grad(), an evaluation's; what the call finds is what the caller finds after it.  With `grad`, grad mode
    on: a caller that trains the model in eval mode (fine-tuning with a frozen first layer), whose loss must reach the
    other weights with the slow step's gradients (round 72's adversary: torch.inference_mode() and .detach() whenever
    `not model.training` passed, eval mode being asked for under torch.no_grad() only)."""
    modes = [m.training for m in model.modules()]
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    first = linears[0]
    frozen = not grad or len(linears) > 1  # (a caller training in eval mode trains some layer: the only one here)
    model.eval()
    first.requires_grad_(not frozen)
    where = ("with the model in eval mode" + (", its first layer frozen (requires_grad_(False))" if frozen else "") +
             (", grad mode on (a caller training in eval mode)" if grad else ", under torch.no_grad()"))
    asks = "a caller training in eval mode (grad on)" if grad else "an evaluation (eval mode, torch.no_grad())"
    trained = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    try:
        with torch.enable_grad() if grad else torch.no_grad():
            settings, state = _settings(device), _caller_state(model, x, n, y)
            evaluating = [m.training for m in model.modules()]
            earlier = set(_KNOWN.keys())  # the tensors that earlier calls made, and the check's own
            got, ops = _recorded(yours, model, x, n, y, bf16)
            changed = [f"{name}: {was} -> {now}" for (name, was), now in
                       zip(settings.items(), _settings(device).values(), strict=True) if was != now
                       ] + ops.settings_left
            restated = _state_changes(state, _caller_state(model, x, n, y))
            moded = [name or "the model" for (name, m), was in zip(model.named_modules(), evaluating, strict=True)
                     if m.training != was]
            # the backward while the caller's state holds (a checkpoint's recompute runs in it: with the first layer
            # unfrozen it saw other metadata, and raised)
            grads: Sequence[torch.Tensor | None] = ()
            raised = ""
            if grad and isinstance(got, torch.Tensor) and got.requires_grad:
                try:
                    grads = _backward_of(got, [p for _, p in trained])
                except RuntimeError as error:
                    raised = str(error).strip().splitlines()[0][:120] if str(error).strip() else "RuntimeError"
    finally:
        torch.set_grad_enabled(True)  # as the check calls (an answer that changed it FAILs below)
        for m, was in zip(model.modules(), modes, strict=True):
            m.training = was
        first.requires_grad_(True)
    ex.expect(not changed, f"{call}, called {where}, changed PyTorch's global settings ({', '.join(changed)})",
              "leave PyTorch's settings as the caller had them: grad mode too (a caller's torch.no_grad() evaluation "
              "would record graphs after your call); a `with` block puts a setting back")
    ex.expect(not moded, f"{call}, called {where}, changed the training mode of {moded[0] if moded else ''}",
              "leave the model's mode as the caller set it (round 18): a caller evaluates in eval mode")
    ex.expect(not ops.written, f"{call}, called {where}, wrote into the memory of what the caller passed "
              f"({', '.join(dict.fromkeys(ops.written))})", WRITE_HINT)
    ex.expect(not restated, f"{call}, called {where}, changed what the caller passed ({', '.join(restated[:3])})",
              "leave the model as the caller set it: a frozen layer stays frozen (no requires_grad_() on its "
              "parameters; autograd reaches the weights that require a gradient without it)")
    # the loss itself, and how it was computed (round 69's adversary: bf16 products whenever grad mode was off, and the
    # padded mean in eval mode, passed: this call's loss was never read)
    exact, bound = loss_and_bound(model, x, n, y, bf16)
    value = float(got.detach()) if isinstance(got, torch.Tensor) and got.numel() == 1 else math.nan
    off = abs(value - exact) if math.isfinite(value) else math.inf
    ex.expect(off <= bound, f"{call}, called {where}, returned {value:.7g}; the slow step's loss is {exact:.7g}, off "
              f"by {off:.1e}, and rounding can move it by {bound:.1e} at most",
              f"{asks} asks for the same loss, computed the same way: does your function change what it computes "
              "with the caller's mode?")
    _no_16_bit_floats_but_bf16s(ex, f"{call}, called {where}", bf16, ops)
    # ...and with bf16=True its products in bf16, every weight's among them (round 69's second adversary: float32
    # products under torch.no_grad() or in eval mode passed, more exact than the bf16 bound asks); under no_grad
    # nothing requires a gradient, so the products' sources tell, not autograd's graph (`Operations.feeding`)
    used = sum(isinstance(m, torch.nn.Linear) for m in model)
    sources = frozenset().union(*(s for _, s in ops.bf16_uses))
    unrounded = [f"{name}.weight" for name, m in model.named_modules()
                 if isinstance(m, torch.nn.Linear) and id(m.weight) not in sources]
    # ...a product of bf16 copies that an earlier call made and kept is a cast this call skipped (round 70's adversary:
    # copies kept until a weight's version changed got the hint about the caller's mode)
    params = {id(p) for p in model.parameters()}
    kept = ops.bf16_products >= used and any(i in earlier and i not in params and _KNOWN.get(i) is not None
                                             for i in sources)
    ex.expect(not bf16 or (ops.bf16_products >= used and not unrounded),
              f"{call}, called {where}: {ops.bf16_products} matrix products in bfloat16 for the model's {used} Linear "
              f"layers{', none of ' + unrounded[0] if unrounded else ''}",
              "bf16=True asks for each call's matrix products of the weights as they are at that call: a bf16 copy "
              "kept from an earlier call is a cast that a call skips, so a CUDA graph captured right after a call "
              "holds none (the task's reason for cache_enabled=False)" if kept else
              f"bf16=True asks for the model's matrix products in bfloat16 whatever the caller's mode: {asks} asks "
              "for the same loss, computed the same way")
    ex.expect(not ops.bf16_arithmetic and not ops.cast_rounded, f"{call}, called {where}: "
              f"{(ops.bf16_arithmetic or ops.cast_rounded or [''])[0]} in bf16 outside the matrix products",
              "bf16=True asks for the matrix products in bfloat16, and everything else as with bf16=False, whatever "
              "the caller's mode")
    if not grad:
        return
    # ...a caller training in eval mode: a loss that backward() can use, and the slow step's gradients for the weights
    # it trains (a frozen first layer's are not asked for)
    ex.expect(isinstance(got, torch.Tensor) and got.requires_grad,
              f"{call}, called {where}, returned a loss that does not depend on the model's weights",
              "exercise 2 calls backward() on this loss, and a caller may train with the model in eval mode (frozen "
              "statistics, a frozen layer): whatever the model's mode, compute it from model(...), without .detach(), "
              "torch.no_grad() or torch.inference_mode()")
    ex.expect(not raised, f"{call}, called {where}: backward() on its loss raised ({raised})",
              "exercise 2 calls backward() on this loss: whatever the model's mode, compute it from model(...), "
              "with autograd's graph")
    _gradients_hold(ex, f"{call}, called {where}", model, x, n, y, bf16,
                    {p: g for (_, p), g in zip(trained, grads, strict=True)})


def _no_16_bit_floats_but_bf16s(ex: Checker, call: str, bf16: bool, *recorded: Operations) -> None:
    """No float16 in the operations `recorded` (a call, its backward); with bf16=False, no 16-bit float at all."""
    halves = [name for ops in recorded for name in ops.float16]
    # (the task says float16 nowhere, an exact cast included: round 72's adversary's lengths cast to float16, exact for
    # every length under 2049, got the autocast's hint; they are WRONG by the task's text since then, and the hint names
    # the operation: a matrix product in float16 is the autocast's format, anything else a cast or arithmetic of yours)
    products = [name for name in halves if name in MATRIX_PRODUCTS]
    ex.expect(not halves, f"{call}: {(products or halves or [''])[0]} in float16 (in the call or in its loss's "
              "backward)",
              "bf16=True asks for bfloat16, and float16 is another 16-bit format (5 exponent bits to bf16's 8): "
              "torch.autocast takes the format as dtype=" if products else
              "the task allows no float16 tensor at all, not even a cast that changes no value (bfloat16 is its one "
              "16-bit format, for the matrix products): keep that operation's tensors in float32")
    narrow = [name for ops in recorded for name in ops.narrow]
    ex.expect(bf16 or not narrow, f"{call}, bf16=False: {narrow[0] if narrow else ''} (in the call or in its loss's "
              "backward)", "bf16=False asks for float32 throughout: the forward, the backward, and what a hook saves "
              "for the backward or does to a gradient; which of your operations makes or takes a 16-bit float?")



# Exercise 1 from other callers' streams, on a GPU (round 67's adversary: the whole loss on a private stream that never
# waited for the caller's, nor the caller's for it, and the pooling done by CuPy on its current stream, the legacy null
# stream, both PASSed on the H200, the check calling from the default stream only, idle; both FAIL since call BI,
# 2026-12-01).  Exercise 2 captures
# fast_loss on the caller's current stream: its work must run there, in that stream's order.
STREAM_CALLERS = {"default": "PyTorch's default stream",
                  "set_stream": "a side stream made current with `torch.cuda.set_stream(s)`"}
CALLER_SPIN_MS = 30.0  # the caller's stream busy at least this long right before it writes x, n and y
# (scale, shift) of `_refilled` for each caller: new values whose loss differs from the values before the write, and
# from the other caller's (where a caller reads the loss's memory before the answer writes it, it may hold the last)
STREAM_REFILLS = ((-0.5, 1), (0.25, 2))
STREAMS_HINT = ("exercise 2 captures fast_loss into a CUDA graph on the caller's current stream, and a caller writes "
                "x, n and y on that stream right before the call and reads the loss and its gradients on it right "
                "after: on which stream does your work run, and does it wait for what the caller queued before the "
                "call, and the caller's stream for it?")
DEFAULT_STREAM_HINT = ("exercise 2 captures fast_loss on the caller's current stream (torch.cuda.current_stream()), "
                       "and a CUDA graph holds only the work queued there, or on streams that wait for it: which "
                       "stream does each library you call queue its work on? CuPy's current stream is its own "
                       "setting, the legacy default stream unless you change it, not PyTorch's current stream")


def _refilled(x: torch.Tensor, n: torch.Tensor, y: torch.Tensor, scale: float, shift: int
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """New values for x, n and y, as exercise 2 refills its static inputs: the sequences moved `shift` places along
    (with their lengths), x times `scale` (a power of 2: exact; the padding stays zeros), the labels moved and
    reversed."""
    return x.roll(shift, 0).mul(scale), n.roll(shift, 0), y.roll(shift, 0).flip(0)


def _from_other_streams(ex: Checker, yours: Callable[..., object], call: str, model: torch.nn.Sequential,
                        x: torch.Tensor, n: torch.Tensor, y: torch.Tensor, bf16: bool) -> None:
    """On a GPU, the answer called as exercise 2 calls it, from each of STREAM_CALLERS: the caller's stream busy
    (a spin of CALLER_SPIN_MS at least) right before it writes new values into its x, n and y there, the call,
    then the loss and its last bias's gradient read on the caller's stream right after, against the slow step's
    for the new values.  During the call every other stream that the answer queues PyTorch work on starts a third
    of the spin late (`streams.widened`): work that does not wait for the caller's stream reads x before the write
    (the values before it, which give another loss), and a caller that does not wait for that work reads the loss
    before it is written.  From the side stream, PyTorch's default stream (the legacy null stream, CuPy's current
    stream unless set) is kept busy for longer than the caller's work needs (a side stream of PyTorch's does not wait
    for it): the loss and its gradient must be ready on the caller's stream before that spin ends, so no part of the
    work waited for the default stream.  And the call must return while the caller's earlier work still runs (the spin
    outlasts twice the host time of a call and its backward): one that returns only after it, twice, waited on the
    host (round 68's adversary: torch.accelerator's stream's synchronize() and a poll of query() in a loop passed,
    unwatched).  In both modes (exercise 2 calls with bf16=True).  Each caller gets its own copy of the model, made on
    its stream: autograd runs
    a leaf's AccumulateGrad node, and ends the backward, on the stream that node was made on (PyTorch's warning in
    torch/csrc/autograd/input_buffer.cpp), and the course model's nodes, made and kept alive on the default stream,
    made this check's own backward wait for the default stream (call BG, 2026-12-01: every right answer FAILed)."""
    calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
    before_exact, before_bound = loss_and_bound(model, x, n, y, bf16)
    before = torch.cuda.current_stream()
    for (kind, who), (scale, shift) in zip(STREAM_CALLERS.items(), STREAM_REFILLS, strict=True):
        with torch.no_grad():
            new = _refilled(x, n, y, scale, shift)
            # the caller's x, n, y: the values before the write (x laid out as the case's is: `laid_as`)
            mine = [(as_a_slice if x.is_contiguous() else as_a_view)(x), n.clone(), y.clone()]
        exact, bound = loss_and_bound(model, *new, bf16)
        exact_grad = last_bias_gradient(model, *new)
        stream = torch.cuda.default_stream() if kind == "default" else torch.cuda.Stream()
        where = (f"{call}, called from {who} while that stream was still busy with earlier work, right after the "
                 "caller wrote new values into x, n and y there")
        torch.cuda.synchronize()
        try:
            torch.cuda.set_stream(stream)
            theirs = copy.deepcopy(model)  # this caller's model: its AccumulateGrad nodes made on its stream
            params: list[torch.Tensor] = list(theirs.parameters())
            last = [m for m in theirs if isinstance(m, torch.nn.Linear)][-1].bias
            at = next(k for k, p in enumerate(params) if p is last)
            # a call and its backward on this stream first (their memory cached for this stream: no allocation from
            # the device in the calls below, which might wait for the GPU), timed: the spins must outlast their host
            # time
            began = time.perf_counter()
            warm = yours(theirs, *mine, bf16)
            if isinstance(warm, torch.Tensor) and warm.requires_grad:
                _backward_of(warm, params)
            host_s = time.perf_counter() - began
            del warm
            torch.cuda.synchronize()
            spin_s = max(CALLER_SPIN_MS / 1e3, 2 * host_s)
            default_end = None
            if kind != "default":  # the default stream busy past the end of the caller's work
                gpu_sleep(2 * spin_s + 4 * host_s, torch.cuda.default_stream())
                default_end = torch.cuda.Event()
                default_end.record(torch.cuda.default_stream())
            gpu_sleep(spin_s, stream)  # the caller's earlier work
            spun = torch.cuda.Event()  # the end of the caller's earlier work (before its write of x, n and y)
            spun.record(stream)
            with torch.no_grad():
                for t, value in zip(mine, new, strict=True):
                    t.copy_(value)
            with widened(spin_s / 3 * 1e3, spare=(stream,)):
                got = yours(theirs, *mine, bf16)
                blocked = spun.query()  # the call returned only once the caller's earlier work had ended
            switched = torch.cuda.current_stream() != stream
            torch.cuda.set_stream(stream)  # where the answer left another stream current (it FAILs below)
            ok = isinstance(got, torch.Tensor) and got.numel() == 1 and got.requires_grad
            read = grad = None
            if isinstance(got, torch.Tensor) and ok:  # read on the caller's stream, right after the call
                read = got.detach().reshape(()).clone()
                last_grad = _backward_of(got, params)[at]
                grad = last_grad.detach().clone() if last_grad is not None else None
            done = torch.cuda.Event()
            done.record(stream)
            done.synchronize()
            waited = default_end is not None and default_end.query()  # the default stream's spin ended first
            torch.cuda.synchronize()
            # the answer's own value for the same values, called again with the caller's stream idle: with bf16=True
            # the bound is wider than the move of the loss that the write makes (on the course batch, 0.0027 against
            # 0.023), so that a value read before the write, or before the answer's work had written it, lies inside
            # the bound; it lies far from this value (the same code on the same values)
            idle = yours(theirs, *mine, bf16)
            own = (float(idle.detach().reshape(())) if isinstance(idle, torch.Tensor) and idle.numel() == 1
                   else math.nan)
            del idle
            torch.cuda.synchronize()
            if blocked and not switched:  # once more, the same write and call: a host that was late by chance (a
                # pause of its own as long as the spin) is not late twice
                gpu_sleep(spin_s, stream)
                spun = torch.cuda.Event()
                spun.record(stream)
                with torch.no_grad():
                    for t, value in zip(mine, new, strict=True):
                        t.copy_(value)
                again = yours(theirs, *mine, bf16)
                blocked = spun.query()
                del again
                torch.cuda.synchronize()
        finally:
            torch.cuda.set_stream(before)
        ex.expect(not switched, f"{where}, left another stream current",
                  "the caller's current stream is the caller's setting: leave it as you found it (a `with` block "
                  "puts it back)")
        ex.expect(ok, f"{where}, returned {what_returned(got)}, not a loss that backward() can use",
                  STREAMS_HINT)
        ex.expect(not blocked, f"{where}, returned only once the caller's earlier work had ended on the GPU (twice): "
                  "the call waited on the host for the GPU (a synchronize by any API, a poll of an event's or a "
                  "stream's query() in a loop, a value read)",
                  "a CUDA graph (exercise 2) replays kernels, not Python: your call may queue work on the caller's "
                  "stream, never wait for it on the host; the stream's own order already runs your kernels after the "
                  "caller's")
        assert read is not None
        loss = float(read)
        off = abs(loss - exact) if math.isfinite(loss) else math.inf
        stale = abs(loss - before_exact) <= before_bound
        ex.expect(off <= bound, f"{where}, returned {loss:.7g} (read on the caller's stream right after the "
                  f"call); the slow step's loss for the new values is {exact:.7g}, off by {off:.1e}, and rounding "
                  f"can move it by {bound:.1e} at most" +
                  (f" (for the values before the write it was {before_exact:.7g}: your value, computed before the "
                   "caller's stream had written them)" if stale else ""), STREAMS_HINT)
        apart = abs(exact - before_exact) / 2  # halfway between the values before and after the write
        ex.expect(math.isfinite(own) and abs(loss - own) <= apart, f"{where}, returned {loss:.7g} (read on the "
                  f"caller's stream right after the call); called again on the same values with that stream idle, it "
                  f"returned {own:.7g}: the first value was read before your work had written it, or computed from x, "
                  f"n and y before the caller's write (their loss moved by {2 * apart:.1e} there)", STREAMS_HINT)
        off_grad = float((grad.double().cpu() - exact_grad).abs().sum()) if grad is not None else math.inf
        ex.expect(off_grad <= BIAS_GRADIENT_SHARE * float(exact_grad.abs().sum()) + BIAS_GRADIENT_FLOOR,
                  f"{where}: the loss's gradient for the last layer's bias, read on the caller's stream right after "
                  f"backward(), is off by {off_grad:.2g} (summed over its elements) from the slow step's for the new "
                  f"values, {float(exact_grad.abs().sum()):.2g} in all", STREAMS_HINT)
        ex.expect(not waited, f"{where}, PyTorch's default stream busy meanwhile with longer work: the loss and its "
                  "gradient were ready on the caller's stream only after the default stream's work had ended, so part "
                  "of the call's work ran on the default stream (the legacy null stream), or waited for it",
                  DEFAULT_STREAM_HINT)


# What the meta device says where an answer mixes a tensor on the host with the batch's, or copies to the host
ELSEWHERE_ERRORS = ("is not on the expected device cpu", "devices, meta and cpu", "devices, cpu and meta",
                    "Cannot copy out of meta tensor")


# The cases where the caller's state is not the defaults (`_callers_state_kept`) and, on a CPU, where the answer runs on
# the meta device too (`_elsewhere`, 10 ms a call): the smallest and the chosen ones, both modes among them (a mode a
# case, by its seed's parity): what these catch is no matter of shapes
PROBED_CASES = (SMALLEST_BATCH, COURSE_BATCH, ZERO_TOKENS_BATCH, STEEP_BATCH, LONG_BATCH, LARGE_LOGITS_BATCH)


class _AutocastOnMeta(torch.amp.autocast):
    """torch.autocast, the meta device as the host's (autocast knows no "meta", the batch's device type there)."""

    def __init__(self, device_type: str, *args: Any, **kwargs: Any) -> None:
        _NAMED_META[0] += device_type == "meta"
        super().__init__("cpu" if device_type == "meta" else device_type, *args, **kwargs)


@contextmanager
def _as_if_cuda() -> Iterator[None]:
    """During the block, torch.cuda.is_available() says True: an answer that picks the batch's device type from it
    ("cuda" if torch.cuda.is_available() else "cpu") picks what it would beside a GPU's batch (round 65's adversary's
    right answer), and its autocast for "cuda", disabled on a machine without one, is not taken for the host's."""
    original = torch.cuda.is_available
    torch.cuda.is_available = lambda: True
    try:
        yield
    finally:
        torch.cuda.is_available = original


_NAMED_META = [0]  # autocasts the meta rerun entered naming the batch's device ("meta"), by `_AutocastOnMeta`


@contextmanager
def _autocasts_named(named: list[tuple[str, bool, object, object]]) -> Iterator[None]:
    """During the block, each autocast made (torch.autocast, torch.amp.autocast, torch.cpu.amp.autocast: every one is a
    torch.amp.autocast) noted in `named` as (the device type it runs on, whether it is enabled, its dtype, whether it
    keeps its cache), with "meta" for one that named the batch's device in the meta rerun (`_AutocastOnMeta`, which
    runs it on "cpu")."""
    base = torch.amp.autocast_mode.autocast
    original = base.__init__

    def noting(self: Any, device_type: str, *args: Any, **kwargs: Any) -> None:
        meta, _NAMED_META[0] = _NAMED_META[0], 0
        original(self, device_type, *args, **kwargs)
        named.append(("meta" if meta else device_type, bool(getattr(self, "_enabled", True)),
                      getattr(self, "fast_dtype", None), getattr(self, "_cache_enabled", None)))

    base.__init__ = noting  # type: ignore[method-assign]
    try:
        yield
    finally:
        base.__init__ = original  # type: ignore[method-assign]


# The meta rerun's batch: this many padded positions more than the batch's, a length that no call of the check used
# (the grown batches reach one past GPU_SIZES["length"]): a cache keyed by the shape misses there, and what the call
# makes for it is judged (`_elsewhere`)
ELSEWHERE_PADDING = 2 * GPU_SIZES["length"] + 1


class _KeptWhereTheBatchIs(TorchDispatchMode):
    """In the meta rerun (`_elsewhere`): a tensor on the host that an earlier call of the answer made (_KNOWN), met
    with the meta batch's, taken to the meta device first.  On a CPU the batch is on the host, and a tensor that an
    earlier call made with device=x.device and kept (an arange of positions cached by length) is on the host too:
    on a GPU it would be where the batch is (round 68's adversary's right answer FAILed, the hint telling it to do
    what it did).  Only what the rerun's own call makes on the host is judged: its copies from the host to the meta
    device too, noted in `copied` (round 70's adversary: positions made by torch.arange on the host and copied by
    .to(x.device) inside @torch.jit.script passed, the copy being allowed)."""

    def __init__(self) -> None:
        super().__init__()
        self.copied: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        at = COPIES_BENEATH.get(name)
        source = args[at] if at is not None and len(args) > at else None
        if isinstance(source, torch.Tensor) and source.device.type == "cpu" and _KNOWN.get(id(source)) is not source:
            out = func(*args, **kwargs)
            if isinstance(out, torch.Tensor) and out.device.type == "meta":
                self.copied.append(f"aten.{name} of a tensor made on the host to the batch's device")
            return out
        leaves = [*args, *kwargs.values()]
        leaves = [t for a in leaves for t in (a if isinstance(a, (list, tuple)) else [a])]
        if any(isinstance(t, torch.Tensor) and t.device.type == "meta" for t in leaves):
            def there(a: Any) -> Any:
                if isinstance(a, torch.Tensor) and a.device.type == "cpu" and a.dim() > 0 and _KNOWN.get(id(a)) is a:
                    return a.to("meta")
                if isinstance(a, (list, tuple)):
                    return type(a)(there(b) for b in a)
                return a
            args, kwargs = tuple(there(a) for a in args), {key: there(a) for key, a in kwargs.items()}
        return func(*args, **kwargs)


class _FirstAutocast(Exception):
    """Raised by the probe's autocast (`_autocast_beside_a_gpus_batch`): the device type it names is all it wants."""


def _answers_frame(depth: int) -> bool:
    """Whether the frame `depth` up from the caller is the answer's code: outside PyTorch's own Python (its meta kernels
    read a tensor's device too, and must see the meta device they compute on) and outside this check."""
    name = str(sys._getframe(depth + 1).f_globals.get("__name__", ""))
    return not (name == "torch" or name.startswith("torch.") or name == __name__)


_TENSOR_BASE = torch._C.TensorBase
_GPU = torch.device("cuda", 0)  # made here: torch.device(...) called during a recorded call is one of its functions
# What an answer reads to learn where the batch is, or whether there is a GPU: a tensor's (every input's, and what the
# answer computes from them), and PyTorch's functions (torch.accelerator's where this PyTorch has them)
DEVICE_ATTRIBUTES = ("is_cuda", "is_cpu", "device")
# (and what the reference run's H200 answers: round 75's adversary branched on torch.backends.cuda.is_built(); the
# others, which no answer has used yet, as cheap to answer; get_device_properties by the fields a branch would read)
_H200 = ("NVIDIA H200", (9, 0))
_H200_BYTES, _IN_USE = 150_109_880_320, 2 * 2**30  # an H200's memory (139.8 GiB); what a course's process holds
_H200_STATS = {f"{kind}.{pool}.{stat}": 2**20 if pool == "small_pool" else _IN_USE
               for kind in ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes")
               for pool in ("all", "large_pool", "small_pool") for stat in ("current", "peak", "allocated", "freed")}
_H200_STATS.update({"num_alloc_retries": 0, "num_ooms": 0, "num_sync_all_streams": 0, "num_device_alloc": 12,
                    "num_device_free": 0})
_H200_MEMORY = {
    **dict.fromkeys(("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                     "memory_cached", "max_memory_cached"), _IN_USE),
    "mem_get_info": (_H200_BYTES - _IN_USE, _H200_BYTES), "memory_stats": _H200_STATS,
    "memory_stats_as_nested_dict": {kind: {pool: {stat: _H200_STATS[f"{kind}.{pool}.{stat}"]
                                                  for stat in ("current", "peak", "allocated", "freed")}
                                           for pool in ("all", "large_pool", "small_pool")}
                                    for kind in ("allocated_bytes", "reserved_bytes", "active_bytes",
                                                 "requested_bytes")},
    "get_per_process_memory_fraction": 1.0, "get_allocator_backend": "native",
    "list_gpu_processes": "GPU:0\nprocess 1 uses 2048.000 MB GPU memory",
    "memory_summary": "|  Allocated memory      |   2048 MiB |   2048 MiB |", "memory_snapshot": []}
DEVICE_FUNCTIONS = ((torch.cuda, "is_available", True), (torch.cuda, "device_count", 1),
                    (torch.cuda, "is_initialized", True), (torch.cuda, "current_device", 0),
                    (torch.cuda, "get_device_name", _H200[0]), (torch.cuda, "get_device_capability", _H200[1]),
                    (torch.cuda, "get_device_properties", types.SimpleNamespace(
                        name=_H200[0], major=_H200[1][0], minor=_H200[1][1], multi_processor_count=132)),
                    (torch.cuda, "is_bf16_supported", True), (torch.backends.cuda, "is_built", True),
                    (torch.backends.cudnn, "is_available", True),
                    # torch.cuda.memory's queries (PyTorch 2.13's torch/cuda/memory.py), answered as an H200 holding
                    # the batch and the model would: memory in use, nonzero (round 78's adversary: `_pool_trimmed(x, n)
                    # if torch.cuda.memory_allocated() > 0 else _pool_full(x, n)`, 0 on a CPU build, PASSed)
                    *((owner, name, value) for owner in (torch.cuda, torch.cuda.memory)
                      for name, value in _H200_MEMORY.items()),
                    *((torch.accelerator, name, value) for name, value in (
                        ("is_available", True), ("current_accelerator", _GPU), ("device_count", 1))
                      if hasattr(torch, "accelerator") and hasattr(torch.accelerator, name)))
CUDA_VERSION = "13.0"  # torch.version.cuda on the reference run's H200 (PyTorch 2.11's CUDA 13.0 build)


class _VersionRead(types.ModuleType):
    """torch.version's class during `_device_reads`: a read of torch.version.cuda by the answer's own code noted, and
    with `as_cuda` answered as a CUDA build's (round 75's adversary: `if torch.version.cuda is not None and
    torch.backends.cuda.is_built()`, on a CPU build never the GPU's path)."""

    noted: ClassVar[list[str]] = []
    as_cuda = False

    @property
    def cuda(self) -> str | None:
        if _answers_frame(1):
            _VersionRead.noted.append("torch.version.cuda")
            if _VersionRead.as_cuda:
                return CUDA_VERSION
        return vars(self)["cuda"]


@contextmanager
def _device_reads(noted: list[str], as_cuda: bool) -> Iterator[None]:
    """During the block, each read of a tensor's is_cuda, is_cpu, device or get_device() by the answer's own code
    (`_answers_frame`), and each call of DEVICE_FUNCTIONS, noted in `noted`; with `as_cuda`, a meta tensor reads as
    on the GPU there ("cuda", is_cuda True) and DEVICE_FUNCTIONS say there is one: every input of the call (x, n, y,
    the model's parameters and buffers) and what the answer computes from them reads as a GPU's batch (round 71's
    second adversary: "cuda" if n.is_cuda, if the first weight's is_cuda, if y.device.type == "cuda", or
    torch.accelerator.current_accelerator(), read "cpu" where only x read as a GPU's)."""
    def on_gpu(t: torch.Tensor) -> bool:
        return as_cuda and _TENSOR_BASE.device.__get__(t).type == "meta"  # type: ignore[attr-defined]

    def is_cuda(t: torch.Tensor) -> bool:
        if _answers_frame(1):
            noted.append("is_cuda")
            return on_gpu(t) or _TENSOR_BASE.is_cuda.__get__(t)  # type: ignore[attr-defined]
        return _TENSOR_BASE.is_cuda.__get__(t)  # type: ignore[attr-defined]

    def is_cpu(t: torch.Tensor) -> bool:
        if _answers_frame(1):
            noted.append("is_cpu")
            return not on_gpu(t) and _TENSOR_BASE.is_cpu.__get__(t)  # type: ignore[attr-defined]
        return _TENSOR_BASE.is_cpu.__get__(t)  # type: ignore[attr-defined]

    def device(t: torch.Tensor) -> torch.device:
        if _answers_frame(1):
            noted.append("device")
            return _GPU if on_gpu(t) else _TENSOR_BASE.device.__get__(t)  # type: ignore[attr-defined]
        return _TENSOR_BASE.device.__get__(t)  # type: ignore[attr-defined]

    def get_device(t: torch.Tensor) -> int:
        if _answers_frame(1):
            noted.append("get_device")
            if on_gpu(t):
                return 0
        return _TENSOR_BASE.get_device(t)

    def type_(t: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        """Tensor.type(): without an argument its name, "torch.cuda.FloatTensor" for a GPU's (the meta device's
        "torch.meta.FloatTensor" there); with one a conversion, a GPU's type name meaning the dtype on the batch's
        device (round 75's adversary: `if x.type().startswith("torch.cuda")`)."""
        if not _answers_frame(1):
            return original_type(t, *args, **kwargs)
        if not args and not kwargs:
            noted.append("type")
            named = original_type(t)  # through the recorder, as on the host
            return named.replace("torch.meta.", "torch.cuda.", 1) if on_gpu(t) else named
        first = args[0] if args else kwargs.get("dtype")
        if on_gpu(t) and isinstance(first, (str, type)) and str(getattr(first, "__module__", first)).startswith(
                "torch.cuda"):  # "torch.cuda.HalfTensor", torch.cuda.HalfTensor: that dtype, where the batch is
            legacy = (first if isinstance(first, str) else first.__name__).rsplit(".", 1)[-1]
            args, kwargs = (getattr(torch, legacy).dtype, *args[1:]), {k: v for k, v in kwargs.items() if k != "dtype"}
        return original_type(t, *args, **kwargs)

    def interface(t: torch.Tensor) -> dict[str, object]:
        """Tensor.__cuda_array_interface__ (PyTorch 2.13's torch/_tensor.py): for a GPU's tensor its description, or a
        RuntimeError where it requires grad; for any other an AttributeError, so that hasattr() says False (round 75's
        adversary: `if hasattr(x, "__cuda_array_interface__")`)."""
        if _answers_frame(1):
            noted.append("__cuda_array_interface__")
            if on_gpu(t):
                if t.requires_grad:
                    raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If "
                                       "gradients aren't required, use var.detach() to get Variable that doesn't "
                                       "require grad.")
                typestr = torch._tensor._dtype_to_typestr(t.dtype)  # type: ignore[attr-defined]
                strides = None if t.is_contiguous() else tuple(s * t.element_size() for s in t.stride())
                return {"typestr": typestr, "shape": tuple(t.shape), "strides": strides, "data": (0, False),
                        "version": 2}
        return original_interface.__get__(t)

    def function(owner: Any, name: str, value: object, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def call(*args: Any, **kwargs: Any) -> Any:
            if _answers_frame(1):
                noted.append(f"{getattr(owner, '__name__', owner)}.{name}")
                if as_cuda:
                    return copy.deepcopy(value) if isinstance(value, (dict, list)) else value  # the answer's own
            return original(*args, **kwargs)
        return call

    functions = [(owner, name, value, getattr(owner, name)) for owner, name, value in DEVICE_FUNCTIONS]
    original_type, original_interface = _TENSOR_BASE.type, vars(torch.Tensor)["__cuda_array_interface__"]
    version_class, version_reads = type(torch.version), (_VersionRead.noted, _VersionRead.as_cuda)
    torch.Tensor.is_cuda, torch.Tensor.is_cpu = property(is_cuda), property(is_cpu)  # type: ignore[assignment,method-assign]
    torch.Tensor.device = property(device)  # type: ignore[assignment,method-assign]
    torch.Tensor.get_device = get_device  # type: ignore[method-assign,assignment]
    torch.Tensor.type = functools.wraps(original_type)(type_)  # type: ignore[method-assign,assignment]
    torch.Tensor.__cuda_array_interface__ = property(interface)  # type: ignore[method-assign,assignment]
    _VersionRead.noted, _VersionRead.as_cuda = noted, as_cuda
    try:
        torch.version.__class__ = _VersionRead
        for owner, name, value, original in functions:
            setattr(owner, name, function(owner, name, value, original))
        yield
    finally:
        for attribute in (*DEVICE_ATTRIBUTES, "get_device", "type"):
            delattr(torch.Tensor, attribute)  # TensorBase's own again
        torch.Tensor.__cuda_array_interface__ = original_interface  # type: ignore[method-assign]  # Tensor's own
        torch.version.__class__ = version_class
        _VersionRead.noted, _VersionRead.as_cuda = version_reads
        for owner, name, _, original in functions:
            setattr(owner, name, original)


def _autocast_beside_a_gpus_batch(yours: Callable[..., object], model: torch.nn.Module, x: torch.Tensor,
                                  n: torch.Tensor, y: torch.Tensor, bf16: bool) -> str | None:
    """The device type of the first autocast the answer enters when its (meta) batch and model read as on a GPU
    (`_device_reads`), or None where it raised before entering one.  The meta rerun's batch reads as neither host nor
    GPU: an answer that spells the batch's device for the course's two devices ("cuda" if x.is_cuda else "cpu", or
    from x.device.type == "cuda") names "cpu" there, which beside a GPU's batch it never would (round 69's second
    adversary's right answers FAILed).  Only the name is asked: the probe stops there."""
    base = torch.amp.autocast_mode.autocast
    original = base.__init__
    seen: list[str] = []

    def first(self: Any, device_type: str, *args: Any, **kwargs: Any) -> None:
        seen.append(device_type)
        raise _FirstAutocast

    settings = read_settings(WATCHED)
    base.__init__ = first  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings(), _device_reads([], as_cuda=True), _KeptWhereTheBatchIs():
            warnings.simplefilter("ignore")
            yours(model, x, n, y, bf16)
    except Exception:  # noqa: BLE001, S110 -- _FirstAutocast, or an error before any autocast: only the name counts
        pass
    finally:
        base.__init__ = original  # type: ignore[method-assign]
        put_back(settings)
    return seen[0] if seen else None


def _elsewhere(ex: Checker, yours: Callable[..., object], call: str, model: torch.nn.Sequential, x: torch.Tensor,
               n: torch.Tensor, y: torch.Tensor, bf16: bool) -> None:
    """On a CPU, the answer called once more with the batch and a copy of the model on PyTorch's meta device (shapes,
    no values), as a GPU's stand-in: where it makes a tensor on the host and uses it with the batch's (device="cpu",
    device=torch.get_default_device()), or copies to the host (.to(torch.device("cpu"))), the meta device refuses it
    as a GPU does; where it names the batch's own device (x.device, x.device.type, the notebook's global `device`, read
    as "meta" here), it runs.  Only those refusals count: any other error on the meta device tells nothing.  The
    meta batch is ELSEWHERE_PADDING positions longer (a cache keyed by the shape misses), and a tensor that an earlier
    call made and kept is taken where the batch is (`_KeptWhereTheBatchIs`): only what this call makes is judged."""
    meta = [x.new_empty((x.shape[0], x.shape[1] + ELSEWHERE_PADDING, *x.shape[2:]), device="meta"),
            *(t.detach().to("meta") for t in (n, y))]
    twin = copy.deepcopy(model).to("meta")
    patched: list[tuple[Any, str, Any]] = [(owner, "autocast", owner.autocast) for owner in (torch, torch.amp)]
    namespace = getattr(inspect.unwrap(yours), "__globals__", None)
    if isinstance(namespace, dict) and "device" in namespace and _is_host(namespace["device"]):
        patched.append((namespace, "device", namespace["device"]))  # the notebook's: where it puts the batch
    refused = ""
    named: list[tuple[str, bool, object, object]] = []
    kept = _KeptWhereTheBatchIs()
    settings = read_settings(WATCHED)
    try:
        for owner, name, _ in patched:
            if isinstance(owner, dict):
                owner[name] = "meta"
            else:
                setattr(owner, name, _AutocastOnMeta)
        with warnings.catch_warnings(), _autocasts_named(named), _as_if_cuda(), kept:
            warnings.simplefilter("ignore")
            yours(twin, *meta[:2], meta[2], bf16)
    except Exception as error:  # noqa: BLE001 -- only the device's refusals are judged
        text = str(error)
        refused = text.splitlines()[0][:120] if any(words in text for words in ELSEWHERE_ERRORS) else ""
    finally:
        for owner, name, original in patched:
            if isinstance(owner, dict):
                owner[name] = original
            else:
                setattr(owner, name, original)
        put_back(settings)
    refused = refused or (kept.copied[0] if kept.copied else "")
    host = sorted({device for device, enabled, *_ in named if enabled and device == "cpu"})
    if bf16 and host and _autocast_beside_a_gpus_batch(yours, twin, meta[0], meta[1], meta[2], bf16) == "cuda":
        host = []  # the "cpu" came from the batch's device: beside a GPU's batch the answer names "cuda"
    ex.expect(not (bf16 and host), f"{call}, with the batch on another device than the host (PyTorch's meta device, "
              "as a GPU's stand-in), entered an autocast for the host (\"cpu\"): on a GPU it would leave every matrix "
              "product in float32 (round 65's adversary: torch.autocast(\"cpu\", ...), torch.cpu.amp.autocast)",
              "autocast works on one device type, the one it names: name the batch's (x.device.type)")
    ex.expect(not refused, f"{call}, with the batch on another device than the host (PyTorch's meta device, as a "
              f"GPU's stand-in), used or made a tensor on the host ({refused})",
              "make tensors where the batch is (device=x.device) and compute there: on a GPU, PyTorch refuses a "
              "tensor made on the host beside the batch's, and a copy to the host makes the host wait")


# What the meta device raises where a GPU would read a value on the host, or make a shape from the values (PyTorch
# 2.13: .item(), int(), bool() and .tolist() of a meta tensor; nonzero, masked_select, unique have no meta kernel)
META_READS = ("cannot be called on meta tensors", "Cannot copy out of meta tensor", "can't convert meta device type",
              "data-independent implementation does not exist")


def _meta_for_cuda(a: object) -> object:
    """A device argument that names the GPU ("cuda", "cuda:0", torch.device("cuda")), as the meta device."""
    if isinstance(a, (str, torch.device)):
        try:
            if torch.device(a).type == "cuda":
                return torch.device("meta")
        except (RuntimeError, TypeError, ValueError):
            return a
    return a


class _CudaOnMeta(TorchFunctionMode):
    """In the run beside a GPU's batch (`_beside_a_gpus_batch`), beneath the recorder: a device argument naming the GPU
    (device=x.device, .to(x.device), .cuda() is not one) made the meta device, where the batch is; the first function
    that raised, noted by name, and whether it raised for the recorder's own judging by value (`ops.own`: the meta
    device has no values), which is no read of the answer's."""

    def __init__(self, ops: Operations) -> None:
        super().__init__()
        self.ops, self.failed_at, self.own_failed = ops, "", False

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        args = tuple(_meta_for_cuda(a) for a in args)
        kwargs = {key: _meta_for_cuda(a) for key, a in (kwargs or {}).items()}
        try:
            return func(*args, **kwargs)
        except Exception:
            if self.ops.own:
                self.own_failed = True
            elif not self.own_failed:
                self.failed_at = self.failed_at or getattr(func, "__name__", str(func))
            raise


@contextmanager
def _autocasts_noted(named: list[tuple[str, bool, object, object]]) -> Iterator[None]:
    """During the block, each autocast is only noted in `named`, as `_autocasts_named` notes them, and changes nothing
    (autocast casts no meta tensor, and one for "cuda" raises in a build without CUDA)."""
    base = torch.amp.autocast_mode.autocast
    originals = (base.__init__, base.__enter__, base.__exit__)

    def init(self: Any, device_type: str, dtype: torch.dtype | None = None, enabled: bool = True,
             cache_enabled: bool | None = None) -> None:
        self.device, self._enabled = device_type, bool(enabled)
        try:
            self.fast_dtype = dtype if dtype is not None else torch.get_autocast_dtype(device_type)
        except RuntimeError:
            self.fast_dtype = dtype
        self._cache_enabled = torch.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        named.append((device_type, self._enabled, self.fast_dtype, self._cache_enabled))

    base.__init__ = init  # type: ignore[method-assign]
    base.__enter__ = lambda self: self  # type: ignore[method-assign,assignment]
    base.__exit__ = lambda self, *exc: False  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        base.__init__, base.__enter__, base.__exit__ = originals  # type: ignore[method-assign]


@dataclass
class _BesideAGPU:
    """What the answer did in one call beside a GPU's batch: its operations, its autocasts, its copies of tensors made
    on the host (`_KeptWhereTheBatchIs`), and the error it raised with the function that raised it."""
    ops: Operations
    named: list[tuple[str, bool, object, object]]
    copied: list[str]
    error: str
    failed_at: str


def _on_meta(t: torch.Tensor) -> torch.Tensor:
    """t on the meta device (no values), laid out as t is: its strides and storage offset in a storage as large."""
    whole = torch.empty(t.untyped_storage().nbytes() // t.element_size(), dtype=t.dtype, device="meta")
    return whole.as_strided(t.shape, t.stride(), t.storage_offset())


def _beside_a_gpus_batch(yours: Callable[..., object], model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor,
                         y: torch.Tensor, bf16: bool) -> _BesideAGPU:
    """The answer called once more, to its end, with the batch and a copy of the model on the meta device (the same
    shapes), every input reading as on the GPU (`_device_reads`), device arguments naming the GPU made the meta device
    (`_CudaOnMeta`) and autocasts only noted (`_autocasts_noted`), under the check's recorder as `_recorded` runs it."""
    meta = [_on_meta(t) for t in (x, n, y)]
    twin = copy.deepcopy(model).to("meta")
    for mine, theirs in zip(model.parameters(), twin.parameters(), strict=True):  # the caller's .grad, as held
        if mine.grad is not None:
            theirs.grad = mine.grad.detach().to("meta")
    ops, kept, named = Operations(), _KeptWhereTheBatchIs(), list[tuple[str, bool, object, object]]()
    remap = _CudaOnMeta(ops)
    _know(twin, *meta)
    settings = read_settings(WATCHED)
    error = ""
    try:
        with warnings.catch_warnings(), _autocasts_noted(named), _device_reads([], as_cuda=True), kept, \
                _threads_as_the_callers(ops), _Beneath(ops), remap, ops, _unseen_watched(ops):
            warnings.simplefilter("ignore")
            try:
                with _lines_watched():
                    yours(twin, *meta, bf16)
            finally:
                ops.outside()
    except Exception as raised:  # noqa: BLE001 -- judged by the caller, by what raised it
        error = f"{type(raised).__name__}: {str(raised).splitlines()[0][:120] if str(raised) else ''}"
    finally:
        put_back(settings)
    if remap.own_failed:  # the recorder's judging by value: nothing of the answer's, and nothing judged
        error = f"the meta device has no values to judge 16-bit arithmetic by ({error})"
    return _BesideAGPU(ops, named, kept.copied, error, remap.failed_at)


def _as_on_a_gpu(named: Sequence[tuple[str, bool, object, object]]) -> list[tuple[str, object, object]]:
    """The enabled autocasts of a call on the host, as beside a GPU's batch they would be named ("cpu" as "cuda")."""
    return [("cuda" if device == "cpu" else device, dtype, cache) for device, enabled, dtype, cache in named
            if enabled and dtype in NARROW]  # (autocast turns itself off for another dtype, on either device)


def _work(ops: Operations) -> list[tuple[str, tuple[tuple[int, ...], ...]]]:
    """The operations of a call less reads of an attribute (`__get__`: x.device, x.shape) and torch.device(...): what
    PyTorch's own Python reads of where a tensor is differs between the host and the meta device (activation
    checkpointing's), and is no work."""
    return [entry for entry in ops.seen if entry[0] not in ("__get__", "device")]


# The run beside a GPU's batch: what it could not judge, by check (id of its Checker): PART, not PASS, at the end
_LEFT_FOR_A_GPU: dict[int, list[str]] = {}


def _gpu_branch(ex: Checker, yours: Callable[..., object], call: str, model: torch.nn.Sequential, x: torch.Tensor,
                n: torch.Tensor, y: torch.Tensor, bf16: bool, host_runs: Sequence[Operations],
                host_named: Sequence[tuple[str, bool, object, object]]) -> None:
    """On a CPU, for an answer that read where its inputs are, or asked whether there is a GPU (`_device_reads`), during
    its call on the host: that call's path is all the other checks judged, and beside a GPU's batch it may take
    another (round 71's second adversary: int(n.max()), a bf16 bmm pooling, positions from a list, each under
    `if x.is_cuda`, PASSed).  The answer runs once more as on a GPU (`_beside_a_gpus_batch`), judged by the rules that
    hold on the meta device: host reads and shapes from the values (an error of the meta device's where a GPU would
    read a value is that read), copies of tensors made on the host or mixing them with the batch's, 16-bit arithmetic
    other than the products; where it ran the same functions on the same shapes, with the same autocasts for the GPU,
    as on the host, the host's run judged it; where not, what the meta device cannot judge (values, gradients) is left
    for a GPU (PART)."""
    where = (f"{call}, with the batch and the model reading as on a GPU (x.is_cuda True, x.device \"cuda\"; PyTorch's "
             "meta device underneath)")
    beside = _beside_a_gpus_batch(yours, model, x, n, y, bf16)
    read = bool(beside.failed_at) and (any(words in beside.error for words in META_READS)
                                       or beside.failed_at in HOST_READS | DATA_SHAPED | SIZED_OPS)
    reads = [*beside.ops.host_reads, *([beside.failed_at or beside.error] if read else [])]
    ex.expect(not reads, f"{where} read a value on the host ({', '.join(dict.fromkeys(reads))})",
              "a CUDA graph (exercise 2) replays kernels, not Python: nothing may be read or copied on the host, nor "
              "waited for, and the shapes must not depend on the data; your function's path for a GPU's batch too")
    mixed = any(words in beside.error for words in ELSEWHERE_ERRORS if words not in META_READS)
    made = [*beside.ops.transfers, *beside.copied, *beside.ops.host_mixed, *([beside.error] if mixed else [])]
    ex.expect(not made, f"{where} copied a tensor made on the host to the batch's device, or used one with the "
              f"batch's ({', '.join(made)})",
              "make tensors where the batch is, by functions that fill them there (device=x.device; no Python data): "
              "a copy from the host makes the host wait, and a CUDA graph (exercise 2) cannot hold it")
    same = not beside.error and _as_on_a_gpu(beside.named) == _as_on_a_gpu(host_named) and any(
        _work(beside.ops) == _work(run) for run in host_runs)
    narrow = [*beside.ops.bf16_arithmetic, *beside.ops.cast_rounded]
    ex.expect(same or not narrow or bool(beside.ops.unvalued),
              f"{where}: {narrow[0] if narrow else ''}"
              ", outside the matrix products",
              "bf16=True asks for the matrix products in bfloat16, and everything else as with bf16=False: which "
              "of your operations rounds its result to 16 bits on your function's path for a GPU's batch?")
    if not same and not beside.error:  # a cache of the answer's own, filled by the first call: once more
        again = _beside_a_gpus_batch(yours, model, x, n, y, bf16)
        same = not again.error and _as_on_a_gpu(again.named) == _as_on_a_gpu(host_named) and any(
            _work(again.ops) == _work(run) for run in host_runs)
    if not same:
        _LEFT_FOR_A_GPU.setdefault(id(ex), []).append(
            f"{call}: beside a GPU's batch your function " +
            (f"raised on the meta device ({beside.error})" if beside.error else
             "runs other operations, or other autocasts, than beside the host's") +
            ", so its values and gradients there are a GPU's to judge")


def _backward_of(loss: torch.Tensor, params: list[torch.Tensor]) -> Sequence[torch.Tensor | None]:
    """The gradients of loss.sum() for `params`, as backward() would give them, from autograd's engine itself: a
    TorchFunctionMode that saw torch.autograd.grad would run it whole with the mode off, so that `_recorded` would see
    nothing of a backward of the answer's own, nor of its hooks (PyTorch 2.13's autograd.grad, less its checks)."""
    total = loss.sum()
    run = getattr(torch.autograd.graph, "_engine_run_backward", None)
    _IN_BACKWARD[0] += 1
    try:
        if run is None:
            return torch.autograd.grad(total, params, allow_unused=True)
        return run((total,), (torch.ones_like(total),), False, False, tuple(params), True, accumulate_grad=False)
    finally:
        _IN_BACKWARD[0] -= 1


class _WithBackward:
    """The answer as the grown batches' comparison calls it: its loss, then that loss's backward, in one recording
    (a loop in a backward of the answer's own grows with the batch too: round 21's adversary).  A backward that
    raises is noted in `raised` (its first line), for the check to FAIL with (round 68's adversary: a loss returned in
    a tensor kept from call to call, written with copy_, chained each call's graph onto the last one's, freed by its
    backward, and the check ended in a traceback of its own)."""

    def __init__(self, yours: Callable[..., object]) -> None:
        self.yours = yours
        self.raised: list[str] = []

    def __call__(self, model: torch.nn.Module, *args: object) -> object:
        got = self.yours(model, *args)
        with torch._C.DisableTorchFunction():  # the check's own question, not recorded
            trains = isinstance(got, torch.Tensor) and got.requires_grad
        if trains:
            try:
                _backward_of(got, list(model.parameters()))  # type: ignore[arg-type]
            except RuntimeError as error:
                self.raised.append(str(error).strip().splitlines()[0][:120] if str(error).strip() else "RuntimeError")
        return got


OVERWRITTEN_HINT = ("the caller may hold several losses before backward() (adding up their gradients): nothing that "
                    "one call's loss depends on may be overwritten by the next call (a buffer kept from call to call)")


def _backward_raised(ex: Checker, call: str, both: _WithBackward) -> None:
    """FAIL where a backward that `both` ran raised (`_WithBackward.raised`)."""
    error = both.raised[0] if both.raised else ""
    ex.expect(not both.raised, f"{call}: backward() on its loss raised, on a batch grown or on the same batch again, "
              f"after earlier calls and their backward ({error})",
              OVERWRITTEN_HINT if any(words in error for words in ("inplace", "in-place", "second time")) else
              "exercise 2 calls backward() on this loss at every step: compute it afresh at each call, from the "
              "model(...) of that call, so that its backward runs on any batch the task allows")


def _batch_of(named: dict[int, str], recorded: list[Operations], batch: str) -> None:
    """Name the batch of each recording in `recorded` that `named` does not name yet (by its id)."""
    for later in recorded:
        named.setdefault(id(later), batch)


def _settled(yours: Callable, args: tuple, bf16: bool, like: Operations, key: Callable[[Operations], object],
             recorded: list[Operations], first: Operations | None = None) -> Operations:
    """The operations of yours(*args, bf16) (`first` where they were recorded already), recorded a second time where
    the first differ from `like`'s: an answer may fill a cache on its first call of a shape (a mask's positions,
    kept), which is no work that grows with the shape (the 08 adversary of 2026-11-29: a right answer FAILed so).
    Each recording is added to `recorded`, for what no call may do (`_later_clean`)."""
    recorded.append(first if first is not None else _recorded(yours, *args, bf16)[1])
    if key(recorded[-1]) != key(like):
        recorded.append(_recorded(yours, *args, bf16)[1])
    return recorded[-1]


HOST_MADE_HINT = ("make tensors where the batch is (device=x.device): on a GPU, PyTorch refuses a tensor made on "
                  "the host beside the batch's, and a copy of it to the GPU makes the host wait, which a CUDA graph "
                  "(exercise 2) cannot hold")
POSITIONS_HINT = ("a CUDA graph (exercise 2) replays one call's operations for every batch: one reduction over the "
                  "padded positions, whatever their number (no Python loop of tiny kernels, no branch on the "
                  "padded length)")
LOOP_HINT = ("a CUDA graph (exercise 2) replays one call's operations for every batch: one operation works on the "
             "whole batch, every sequence, feature and class at once, whatever their numbers (no Python loop of "
             "small kernels, no branch on the batch's shape)")


def _counted(names: Counter[str]) -> str:
    return ", ".join(f"{name} x{count}" if count > 1 else name for name, count in names.most_common(6)) + (
        f" and {len(names) - 6} more" if len(names) > 6 else "")


def _more_operations(longer: Operations, ops: Operations) -> str:
    """How the grown call's operations differ from the call's: how many more, and which (round 71's last adversary:
    a divisor clamped to the padded length on large batches only got "+1 operations" and the loop hint, with no loop
    to find)."""
    if len(longer.seen) != len(ops.seen):
        more, fewer = Counter(longer.names()) - Counter(ops.names()), Counter(ops.names()) - Counter(longer.names())
        which = [f"{label}: {_counted(names)}" for label, names in (("more", more), ("fewer", fewer)) if names]
        return f"{len(longer.seen) - len(ops.seen):+d} operations" + (f" ({'; '.join(which)})" if which else "")
    differ = [pair for pair in zip(longer.names(), ops.names(), strict=True) if pair[0] != pair[1]]
    return f"other operations ({differ[0][0]} against {differ[0][1]})" if differ else "the same operations"


LAYOUT_HINT = ("x may be any view of a larger tensor, and your function returned the right loss for the same values "
               "in a tensor of their own (contiguous, at the start of its memory): which of your operations assumes a "
               "contiguous batch's strides, or a storage offset of 0? PyTorch's operations on x itself follow its "
               "strides and offset")


def _layout_hint(yours: Callable[..., object], model: torch.nn.Sequential, x: torch.Tensor, n: torch.Tensor,
                 y: torch.Tensor, bf16: bool, exact: float, bound: float) -> str:
    """LAYOUT_HINT where the answer, wrong on x (a view of a larger tensor: `as_a_view`, `as_a_slice`), is right on a
    copy of it that is contiguous and starts its own storage (called once more, as `_recorded` calls it); else ""
    (another mistake: the value's own hint).  A copy, not x.contiguous(), which returns a contiguous slice as it is, at
    its offset (round 73's adversary: storage offset 0 assumed after x.contiguous())."""
    try:
        own = x.clone(memory_format=torch.contiguous_format)
        assert own.is_contiguous() and own.storage_offset() == 0
        got, _ = _recorded(yours, model, own, n, y, bf16)
        value = float(got.detach()) if isinstance(got, torch.Tensor) and got.numel() == 1 else math.nan
    except Exception:  # noqa: BLE001 -- the answer's own error on a contiguous batch: no hint about the layout
        return ""
    return LAYOUT_HINT if abs(value - exact) <= bound else ""


def _value_hint(bf16: bool, large: bool = False) -> str:
    """The hint of a wrong value; `large`: on a batch of large logits (round 24's adversary: an unstable cross-entropy
    passed where no logit gap above ~8.6 was drawn)."""
    if large:
        return ("with logits this large (rows whose labels lie 30 and more below their max), is your cross-entropy "
                "still exact? exp() overflows past 88.7, and an epsilon or a clamp caps the loss: the log-sum-exp "
                "with each row's max subtracted does neither")
    if bf16:
        return ("where does bf16's rounding accumulate, and what do the positions of a sequence add up to? "
                "(notebook 06: under autocast, reductions stay float32)")
    return "the slow step's arithmetic: what does it divide each sequence's sum by?"


# ------------------------------------------------------------------------------------------------
# Exercise 2: the fast step (GPU)
# ------------------------------------------------------------------------------------------------
STEPS = 40  # five passes over the 8 batches: a step that reuses, skips or stops shows, and a history of 32
CALLERS = (("default", "PyTorch's default stream"), ("with", "a side stream entered with `with torch.cuda.stream(s):`"),
           ("set_stream", "a side stream made current with `torch.cuda.set_stream(s)`"),
           ("default", "PyTorch's default stream, again"))  # STEPS // 4 steps each, then losses()
# The first run continued, unprofiled, to this many steps, then losses() once more (round 71's last adversary, adv124:
# losses kept in a ring of 41 or 48 passed, no run being longer than STEPS).  Its cost on the H200: the solution's step
# at 15.7x the slow step's 1.2 ms (solutions 08 and notebook 08 as stamped), under 0.1 ms a step, 260 steps ~25 ms; a
# right answer at the slow step's pace ~0.3 s.  A ring longer than this still passes.
LONG_RUN_STEPS = 300
BUSY_S = 0.5  # the GPU's head start: far longer than any host takes to queue the run
# The check's record_function ranges, named so that an answer's own ranges do not mix with them
STEP_RANGE, LOSSES_RANGE, HEAD_START_RANGE = "nb08: step()", "nb08: losses()", "nb08: head start"

LOSS_GAP_FACTOR = 8  # each loss may lie this many times further from the slow step's than eager bf16's worst
UPDATE_GAP_FACTOR = 4  # each parameter's update of each step: this many times eager bf16's worst for it
LOSS_FLOOR = 64 * EPS32  # where eager bf16 happens to agree (nearly) exactly
UPDATE_FLOOR = 0.01
SPEEDUP = 3.0  # the solution, unprofiled: 19-24x on the H100, 20-21x under tools.smaller_gpu; a T4's PCIe 3 costs more
LAUNCH_RATIO = 0.25  # the solution: 1 launch a step (one cudaGraphLaunch) against the slow step's 105
HIDDEN = 0.5  # the share of the copies' time that ran under the step's kernels, of what kernels could cover
NEGLIGIBLE = 0.05  # copies left outside the kernels that take less than this share of the kernels' time pass
BLOCKED_CALL_S = 1e-3  # a call that only queues work and lasts this long was blocked by a full queue
AFTER_CAPTURE_MS = 100.0  # the second run: make_fast_step's side streams after a capture start this late (far more
# than the host takes from the answer's last work to the caller's next write: the settings' reads between them)
LOAD_MS = 300.0  # the first run: the caller's write of the weights lands this long after make_fast_step is called
LATE_MS = 5.0  # the second run: each step, every stream but the caller's starts this late (longer than a step)
CALLER_BUSY_MS = 4 * LATE_MS  # the second run: the caller's stream before a step, longer than a late step takes
CALLER_BUSY_STEPS = 2  # ... before each caller's first two steps (one caller of each kind)
WORK_SHARE = 0.25  # the kernels the steps queue, at least this share of the eager bf16 step's kernel time a step


@reference
def reference_fast_loss(model, x, n, y, bf16: bool):
    """The check's bf16 step arithmetic (exercise 1's), for the eager bf16 run that sets the tolerances."""
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
        logits = model(x.sum(1) / n[:, None])
    return F.cross_entropy(logits.float(), y)


# ---------------------------------------------------------------- correct: what the runs left, compared
@dataclass(frozen=True)
class Run:
    """What a run of steps left: each step's loss, and every weight before the first step and after each."""

    losses: torch.Tensor  # (steps,), float64
    weights: torch.Tensor  # (steps + 1, parameters' elements), float32, the parameters flattened in order


def loss_gaps(losses: torch.Tensor, slow: torch.Tensor) -> torch.Tensor:
    """Each loss's distance from the slow step's, relative to it."""
    return (losses.double() - slow.double()).abs() / slow.double().abs().clamp_min(1e-12)


def update_gaps(weights: torch.Tensor, slow: torch.Tensor, numels: Sequence[int]) -> torch.Tensor:
    """(steps, parameters): how far each parameter's update of each step lies from the slow step's, relative to
    the slow step's (the norm of the difference of the two updates over the norm of the slow one)."""
    gaps = []
    for mine, theirs in zip(weights.split(list(numels), dim=1), slow.split(list(numels), dim=1), strict=True):
        mine, theirs = mine.double().diff(dim=0), theirs.double().diff(dim=0)  # one parameter at a time: less memory
        gaps.append((mine - theirs).norm(dim=1) / theirs.norm(dim=1).clamp_min(1e-30))
    return torch.stack(gaps, dim=1).cpu()


def tolerances(slow: Run, bf16: Run, numels: Sequence[int]) -> tuple[float, torch.Tensor]:
    """The losses' tolerance, and each parameter's, from the worst gap of the eager bf16 run on this device."""
    loss = max(LOSS_GAP_FACTOR * float(loss_gaps(bf16.losses, slow.losses).max()), LOSS_FLOOR)
    update = (UPDATE_GAP_FACTOR * update_gaps(bf16.weights, slow.weights, numels).amax(dim=0)).clamp_min(UPDATE_FLOOR)
    return loss, update


def as_losses(returned: object) -> list[float] | None:
    """What losses() returned, as floats: a tensor of any shape, a NumPy array, or a list of numbers or 0-d tensors."""
    try:
        if isinstance(returned, torch.Tensor):
            return [float(v) for v in returned.detach().double().cpu().flatten().tolist()]
        if isinstance(returned, np.ndarray):
            return [float(v) for v in returned.astype(np.float64).flatten().tolist()]
        if isinstance(returned, (list, tuple)):
            return [float(v.detach().cpu()) if isinstance(v, torch.Tensor) else float(v) for v in returned]
    except (TypeError, ValueError, RuntimeError):
        return None
    return None


COUNT_HINT = "losses() returns every step's loss so far, one per step, as a tensor on the GPU"
LATE_HINT = ("on the GPU, what makes the kernels that read a batch start only once its copy has landed, whichever "
             "stream copied it, and only after the work the caller queued on its current stream before the call? "
             "And does each step read the model's weights as they are when it is called (a copy of them made "
             "earlier, such as the bf16 casts an autocast with its cache on keeps, is stale)?")
STREAM_HINT = ("the current stream belongs to the caller: a step that works on a stream of its own enters it with "
               "`with torch.cuda.stream(s):`, which puts the caller's back")
# Round 46's engineer: a wrong step 1 does not tell the arithmetic from the data flow (a loss kept before the replay
# computed it, or one buffer read for every step, is wrong at step 1 too), so the hint names both.
FIRST_LOSS_HINT = ("step 1's loss comes from the weights the model was given and the first batch: either the "
                   "arithmetic differs from the slow step's by more than bf16 matrix products explain "
                   "(check_fast_loss, on this GPU, judges your loss function alone), or the value losses() returned "
                   "is not the one step 1 computed (read before the step wrote it, or written over since: a graph "
                   "reads and writes the memory it captured)")
LOSSES_HINT = ("each step must read the batch it is given, and losses() what each step computed: a graph reads the "
               "memory it captured")


def _wrong_losses(returned: Sequence[tuple[int, str, object]], slow: torch.Tensor, tolerance: float) -> tuple[str, str]:
    """The first losses() call whose losses are wrong, described, with a hint; ("", "") if none."""
    for done, caller, got in returned:
        call = f"losses() after step {done}, called from {caller},"
        losses = as_losses(got)
        if losses is None or len(losses) != done:
            count = f" of {len(losses)} losses" if losses is not None else ""
            return f"{call} returned {what_returned(got)}{count}", COUNT_HINT
        gaps = loss_gaps(torch.tensor(losses, dtype=torch.float64), slow[:done])
        bad = [k for k in range(done) if not gaps[k] <= tolerance]  # NaN is bad too
        if bad:
            k = bad[0]
            problem = (f"{call} gave step {k + 1}'s loss as {losses[k]:.6f}; the slow step's was "
                       f"{float(slow[k]):.6f} ({float(gaps[k]):.1e} relative; tolerance {tolerance:.1e})")
            return problem, (FIRST_LOSS_HINT if k == 0 else LOSSES_HINT)
    return "", ""


def judge_correct(found: Findings, weights: torch.Tensor, returned: Sequence[tuple[int, str, object]], slow: Run,
                  bf16: Run, names: Sequence[str], numels: Sequence[int]) -> None:
    """Every losses() call's losses, and every parameter's update of every step, against the slow step's.

    `weights`: the weights before the first step and after each; `returned`: for each losses() call, how many steps
    had run, who called it, and what it returned (as its caller holds it)."""
    loss_tol, update_tol = tolerances(slow, bf16, numels)
    problem, hint = _wrong_losses(returned, slow.losses, loss_tol)
    found.expect(not problem, problem, hint)
    gaps = update_gaps(weights, slow.weights, numels)
    bad: list[list[int]] = (~(gaps <= update_tol)).nonzero().tolist()  # step by step; NaN is bad too
    k, j = bad[0] if bad else (0, 0)
    found.expect(not bad, f"step {k + 1}'s update of {names[j]} differs from the slow step's by "
                 f"{float(gaps[k, j]):.0%} of it (tolerance {float(update_tol[j]):.0%})",
                 "same steps, same data, same updates: does every step train every parameter, on its own batch, from "
                 "the weights it was given, and keep the update's small increments (notebook 06)?")


# ---------------------------------------------------------------- clean and fast: the run's trace, read
@dataclass(frozen=True)
class Seen:
    """What the trace of a run shows: each step's launches, the host's first wait for the GPU (described, or
    ""), the steps' copies from the host against their kernels, and the seconds the host spent blocked in calls
    that only queue work (a full queue: the GPU set the pace, not the host)."""

    launches: list[int]
    wait: str
    copies: profiling.CopyOverlap
    blocked: float = 0.0
    work: float = 0.0  # seconds of kernels that the calls of step() and losses() queued (a graph's: its launch's)


def _lasted(event: profiling.Event) -> float:
    start, end = profiling.span(event)
    return end - start


def first_wait(trace: profiling.Trace, calls: Sequence[str]) -> str:
    """The first wait of the host for the GPU inside a STEP_RANGE or LOSSES_RANGE, described; "" if none.

    `calls` names those ranges, in order.  A wait is a synchronizing call (`profiling.SYNCHRONIZING`) on the
    range's thread, a copy from pageable memory, or the host still inside a call when the GPU ran out of the
    head start that the HEAD_START_RANGE queued (a wait of any kind, polling too), unless the host was only
    queuing work then (a full queue)."""
    ranges = sorted((profiling.span(e), e.get("tid")) for e in profiling.events(trace, "user_annotation")
                    if e.get("name") in (STEP_RANGE, LOSSES_RANGE))
    named = [(span, call) for (span, _), call in zip(ranges, calls)]
    # The host's calls, sorted once, and each range's found by bisection (profiling.host_calls for one span): a
    # polling answer's trace holds hundreds of thousands of query calls, and a scan of them all per range (41 ranges)
    # took longer than the run itself
    every_call = profiling.events(trace, *profiling.HOST_CALLS)
    starts = [profiling.span(e)[0] for e in every_call]
    copies = profiling.events(trace, "gpu_memcpy")

    def calls_in(start: float, end: float) -> list[profiling.Event]:
        return every_call[bisect.bisect_left(starts, start):bisect.bisect_right(starts, end)]

    for ((start, end), thread), call in zip(ranges, calls):
        inside = calls_in(start, end)
        syncs = [e for e in inside if profiling.call_name(e) in profiling.SYNCHRONIZING and e.get("tid") == thread]
        if syncs:
            return f"{call} waited in {profiling.call_name(syncs[0])} for {format_time(_lasted(syncs[0]))}"
        ids = {int(e.get("args", {}).get("correlation", -1)) for e in inside} - {-1}
        pageable = [e for e in copies if int(e.get("args", {}).get("correlation", -1)) in ids
                    and re.search(r"pag(e)?able", str(e.get("name")), re.IGNORECASE)]  # CUPTI's samples spell it so
        if pageable:
            return f"{call} copied from pageable memory ({pageable[0].get('name')}), which the host waits for"
    head_start = profiling.queued_by(trace, profiling.host_calls(trace, profiling.ranges(trace, HEAD_START_RANGE)))
    if not head_start:
        return ""
    free = max(profiling.span(e)[1] for e in head_start)  # when the GPU ran out of the head start
    late = [(span, call) for span, call in named if span[1] > free]
    if not late:
        return ""
    (start, end), call = late[0]
    inside = calls_in(start, end)
    blocked = [e for e in inside if profiling.span(e)[0] <= free <= profiling.span(e)[1]]
    if blocked and profiling.call_name(blocked[0]) in profiling.QUEUING:
        return ""  # the queue of launched work was full: the host was ahead of the GPU, not waiting for it
    polls = [e for e in inside if profiling.call_name(e) in ("cudaEventQuery", "cudaStreamQuery")]
    how = (f"{len(polls)} calls of {profiling.call_name(polls[0])}" if len(polls) > 1 else
           f"in {profiling.call_name(blocked[0])}" if blocked else "outside any CUDA call")
    return (f"{call} was still running when the GPU had done the {format_time(free - named[0][0][0])} of work "
            f"queued before the first step ({how})")


def read_run(trace: profiling.Trace, calls: Sequence[str]) -> Seen:
    """What the trace of the answer's run shows: launches per step, the first wait, the steps' copies from the
    host against the steps' kernels (the GPU work that the host calls inside the ranges queued)."""
    spans = profiling.ranges(trace, STEP_RANGE) + profiling.ranges(trace, LOSSES_RANGE)
    calls_made = profiling.host_calls(trace, spans)
    work = profiling.queued_by(trace, calls_made)
    copies = [e for e in work if e.get("cat") == "gpu_memcpy" and "HtoD" in str(e.get("name"))]
    kernels = [e for e in work if e.get("cat") == "kernel"]
    blocked = sum(_lasted(e) for e in calls_made
                  if profiling.call_name(e) in profiling.QUEUING and _lasted(e) >= BLOCKED_CALL_S)
    return Seen(launches=profiling.launches_per_range(trace, STEP_RANGE), wait=first_wait(trace, calls),
                copies=profiling.overlap_of(copies, kernels), blocked=blocked, work=sum(map(_lasted, kernels)))


def kernel_seconds(trace: profiling.Trace) -> float:
    """The seconds of kernels that the host calls inside the STEP_RANGE ranges of a trace queued."""
    calls = profiling.host_calls(trace, profiling.ranges(trace, STEP_RANGE))
    return sum(map(_lasted, profiling.queued_by(trace, calls, "kernel")))


def hidden_share(copies: profiling.CopyOverlap) -> float:
    """The share of the copies' time that ran under kernels, of what the kernels could cover (1.0: all of it)."""
    coverable = min(copies.copies, copies.kernels)
    return copies.both / coverable if coverable > 0 else 0.0


def judge_streams(found: Findings, switched: Sequence[str]) -> None:
    """Every call leaves the caller's stream current."""
    found.expect(not switched, f"{len(switched)} calls left another stream current than their caller's (the first: "
                 f"{switched[0] if switched else ''})", STREAM_HINT)


def judge_clean(found: Findings, seen: Seen, slow_launches: float) -> None:
    """No wait, few launches, and copies from the host under the kernels (unless they take next to nothing)."""
    found.expect(not seen.wait, f"the host waited for the GPU: {seen.wait}",
                 "the check gives the GPU work to do before your first step, so that a host that never waits queues "
                 "every step before the GPU gets there: which call in yours can return only once the GPU caught up? "
                 "(lecture, section 4: waits in the trace)")
    most = max(seen.launches, default=0)
    found.expect(most <= LAUNCH_RATIO * slow_launches,
                 f"up to {most} launches in a step, against the slow step's {slow_launches:.0f}",
                 "how many times does the host launch work in one step?")
    copies, share = seen.copies, hidden_share(seen.copies)
    found.expect(share >= HIDDEN or copies.copies - copies.both <= NEGLIGIBLE * copies.kernels,
                 f"{share:.0%} of the copies from the host that the kernels could have covered ran under them (copies "
                 f"{format_time(copies.copies)}, kernels {format_time(copies.kernels)}, both at once "
                 f"{format_time(copies.both)}); the target is {HIDDEN:.0%}",
                 "which stream copies the next batch, and what does it wait for?")


def judge_work(found: Findings, seen: Seen, steps: int, bf16_kernel_s: float) -> None:
    """The steps' own GPU work: at least WORK_SHARE of the eager bf16 step's kernel time, step for step."""
    found.expect(seen.work >= WORK_SHARE * steps * bf16_kernel_s,
                 f"the calls of step() and losses() queued {format_time(seen.work / steps)} of kernels a step; the "
                 f"eager bf16 step queues {format_time(bf16_kernel_s)} of them",
                 "step() trains one step: where does each step's forward, backward and update run?")


def judge_fast(found: Findings, slow_s: float, yours_s: float) -> None:
    """The speed-up per step, printed, and at least SPEEDUP."""
    ratio = slow_s / yours_s
    print(f"     your step is {ratio:.1f}x faster than the slow step on this GPU (both profiled)")
    found.expect(ratio >= SPEEDUP, f"{ratio:.1f}x faster than the slow step; the target is {SPEEDUP:.0f}x",
                 "profile your step: what does the GPU wait for, the host or the copies?")


# ---------------------------------------------------------------- the runs, on the GPU
def _parameters(model: torch.nn.Module) -> tuple[list[str], list[int]]:
    named = list(model.named_parameters())
    return [name for name, _ in named], [p.numel() for _, p in named]


def _snapshot(params: Sequence[torch.Tensor], row: torch.Tensor) -> None:
    """Copy every parameter into `row`, on the current stream (no wait)."""
    torch.cat([p.detach().reshape(-1).float() for p in params], out=row)


def _trace_of(prof: Any) -> profiling.Trace:
    with tempfile.TemporaryDirectory() as tmp:
        prof.export_chrome_trace(str(Path(tmp) / "trace.json"))
        return profiling.load_trace(Path(tmp) / "trace.json")


@contextmanager
def _profiled() -> Iterator[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], acc_events=True) as prof:
            yield prof


def _slow_run(data, steps: int) -> tuple[Run, float, float]:
    """The slow step, float32 without TF32, profiled: its Run, seconds per step, launches per step."""
    model = make_model("cuda")
    params = list(model.parameters())
    weights = torch.empty(steps + 1, sum(p.numel() for p in params), device="cuda")
    _snapshot(params, weights[0])
    slow, losses = SlowStep(model, data, "cuda"), []
    saved = _tf32_saved()
    setattr(_MATMUL, TF32_SETTING, TF32_OFF)  # float32 as written: no TF32 in the reference
    try:
        slow()  # warm: the first call loads kernels
        model.load_state_dict(make_model("cuda").state_dict())
        slow.opt, slow.batches = torch.optim.SGD(params, lr=LR, foreach=False), itertools.cycle(range(len(data[0])))
        with _profiled() as prof:
            torch.cuda.synchronize()
            started = time.perf_counter()
            for k in range(steps):
                with record_function(STEP_RANGE):
                    losses.append(slow())
                _snapshot(params, weights[k + 1])
            torch.cuda.synchronize()
            seconds = (time.perf_counter() - started) / steps
    finally:
        _tf32_restore(saved)
    launches = profiling.launches_per_range(_trace_of(prof), STEP_RANGE)
    return Run(torch.tensor(losses, dtype=torch.float64), weights), seconds, sum(launches) / max(len(launches), 1)


def _bf16_run(data, steps: int) -> tuple[Run, float]:
    """The same steps with the check's fast_loss in bf16, eagerly: the gaps a right bf16 answer shows here, and
    the seconds of kernels a step queues (profiled)."""
    model = make_model("cuda")
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=LR)
    weights = torch.empty(steps + 1, sum(p.numel() for p in params), device="cuda")
    _snapshot(params, weights[0])
    tokens, lengths, labels = data
    losses = []
    with _profiled() as prof:
        for k in range(steps):
            b = k % len(tokens)
            with record_function(STEP_RANGE):
                loss = reference_fast_loss(model, tokens[b].cuda(), lengths[b].float().cuda(), labels[b].cuda(), True)
                opt.zero_grad()
                loss.backward()
                opt.step()
            losses.append(loss.detach())
            _snapshot(params, weights[k + 1])
        torch.cuda.synchronize()
    return Run(torch.stack(losses).double().cpu(), weights), kernel_seconds(_trace_of(prof)) / steps


@functools.cache
def _references(device: int) -> tuple[Run, float, float, Run, float]:
    """The slow run (its Run, seconds and launches per step) and the eager bf16 run (its Run, kernel seconds per
    step), on this GPU: measured at the first check of a process, then kept (they do not depend on the answer; a
    re-run check is quicker)."""
    data = make_data("cuda")
    return (*_slow_run(data, STEPS), *_bf16_run(data, STEPS))


def _every_stream() -> list[torch.cuda.Stream]:
    """The default stream and every stream of PyTorch's pools (torch.cuda.Stream() hands them out in turn)."""
    default = torch.cuda.default_stream()
    found: dict[int, torch.cuda.Stream] = {default.cuda_stream: default}
    least, greatest = default.priority_range()
    for priority in range(least, greatest - 1, -1):
        for _ in range(64):  # a pool holds 32 streams: going round twice finds them all
            stream = torch.cuda.Stream(priority=priority)
            found.setdefault(stream.cuda_stream, stream)
    return list(found.values())


def _head_start(streams: Sequence[torch.cuda.Stream], seconds: float) -> torch.cuda.Event:
    """Keep the GPU busy for `seconds` before any work queued from now on, on any of `streams`; returns an event
    at the end of the head start (on the default stream)."""
    default = torch.cuda.default_stream()
    gpu_sleep(seconds, default)
    start = torch.cuda.Event(enable_timing=True)
    start.record(default)
    for stream in streams:
        stream.wait_event(start)
    return start


@contextmanager
def _caller(kind: str, previous: torch.cuda.Stream, side: torch.cuda.Stream) -> Iterator[torch.cuda.Stream]:
    """Be a caller of `kind` (CALLERS), ordered after the previous caller's work, as a caller that switches streams
    must be; restores the current stream afterwards."""
    stream = torch.cuda.default_stream() if kind == "default" else side
    stream.wait_stream(previous)
    before = torch.cuda.current_stream()
    try:
        if kind == "set_stream":
            torch.cuda.set_stream(stream)
            yield stream
        else:
            with torch.cuda.stream(stream):
                yield stream
    finally:
        torch.cuda.set_stream(before)


def _as_read(returned: object) -> object:
    """What losses() returned, as its caller holds it: a GPU tensor copied on the caller's stream now (its values
    as they will be once the stream gets there), a host tensor copied now; lists and tuples item by item."""
    if isinstance(returned, torch.Tensor):
        return returned.detach().clone()
    if isinstance(returned, (list, tuple)):
        return [_as_read(v) for v in returned]
    return returned


def _rewrite(params: Sequence[torch.Tensor], row: torch.Tensor) -> None:
    """Write `row` (a `_snapshot`) back into the parameters, on the current stream (no wait): the values they hold
    once the stream's earlier work is done, written again (a caller's own use of the model, in stream order)."""
    at = 0
    with torch.no_grad():
        for p in params:
            p.copy_(row[at:at + p.numel()].view(p.shape))
            at += p.numel()


@dataclass
class AnswerRun:
    weights: torch.Tensor
    returned: list[tuple[int, str, object]]
    host_s: float
    gpu_s: float
    trace: profiling.Trace
    calls: list[str]
    switched: list[str]  # the calls after which the current stream was not the caller's
    changed_later: list[str] = field(default_factory=list)  # losses() calls whose result changed later
    drew: list[str] = field(default_factory=list)  # the calls after which a global generator had moved (`_generators`)


def _answer_run(step: Callable[[], object], losses: Callable[[], object], params: Sequence[torch.Tensor],
                given: torch.Tensor, steps: int, late_ms: float = 0.0, traced: bool = True) -> AnswerRun:
    """Run the answer's steps from every caller, checked, timed and profiled at once (see the module's docstring).

    With `late_ms`, in each step every stream other than the caller's starts `late_ms` late on the GPU, from the
    first operation the step queues there (`streams.widened`): a step's kernels that do not wait for the copy
    of their batch read the memory before the copy lands.  Also with it, before each caller's first
    CALLER_BUSY_STEPS steps, the caller's own stream spins CALLER_BUSY_MS and then writes the parameters again with
    the values they hold (`_rewrite`): a step that does not wait for its caller's stream updates them during the
    spin, and the write undoes the update (round 21's adversary: a private stream that the caller waited for, but
    that never waited for the caller, passed).  Without `traced`, the run is profiled all the same, but its trace is
    not exported (an empty one is returned).  After every call, the current stream is compared with the caller's
    (round 21's: `torch.cuda.set_stream(private)` in step(), never undone, passed); the caller's is made current
    again."""
    weights = torch.empty(steps + 1, given.numel(), device="cuda")
    weights[0].copy_(given)
    calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
    streams, sides = _every_stream(), [torch.cuda.Stream() for _ in CALLERS]
    returned: list[tuple[int, str, object]] = []
    held: list[object] = []  # what each losses() call returned, kept as a caller may keep it
    calls: list[str] = []
    switched: list[str] = []
    drew: list[str] = []
    torch.cuda.synchronize()
    with _profiled() as prof:
        with record_function(HEAD_START_RANGE):
            start = _head_start(streams, BUSY_S)
        began = time.perf_counter()
        previous, done = torch.cuda.default_stream(), 0
        for (kind, who), side in zip(CALLERS, sides, strict=True):
            with _caller(kind, previous, side) as previous:
                for turn in range(steps // len(CALLERS)):
                    calls.append(f"step {done + 1} (called from {who})")
                    if late_ms and turn < CALLER_BUSY_STEPS:
                        gpu_sleep(CALLER_BUSY_MS / 1e3)
                        _rewrite(params, weights[done])
                    generators = _generators()
                    with record_function(STEP_RANGE), widened(late_ms, spare=(previous,)) if late_ms else nullcontext():
                        step()
                    _same_stream(previous, calls[-1], switched)
                    _drew(generators, calls[-1], drew)
                    done += 1
                    _snapshot(params, weights[done])
                calls.append(f"losses() after step {done} (called from {who})")
                generators = _generators()
                with record_function(LOSSES_RANGE):
                    got = losses()
                _same_stream(previous, calls[-1], switched)
                _drew(generators, calls[-1], drew)
                returned.append((done, who, _as_read(got)))
                held.append(got)
        host_s = time.perf_counter() - began
        end = torch.cuda.Event(enable_timing=True)
        end.record(previous)
        torch.cuda.synchronize()
    trace = _trace_of(prof) if traced else {"traceEvents": []}
    # Round 100's adversary returned its own history list, which later steps kept appending to: a caller that kept
    # the result of losses() after step 10 held 40 losses by the end, and the check, which copied each result at once,
    # passed it.  Each result is read again now, once every step has run.
    changed_later = [f"losses() after step {done} (called from {who}) returned {_count_losses(read)} losses; by the "
                     f"end of the run the same object held {_count_losses(_as_read(got))}"
                     if _count_losses(read) != _count_losses(_as_read(got)) else
                     f"losses() after step {done} (called from {who}): the values it returned changed later"
                     for (done, who, read), got in zip(returned, held, strict=True)
                     if not _same_read(read, _as_read(got))]
    return AnswerRun(weights, returned, host_s, start.elapsed_time(end) / 1e3, trace, calls, switched, changed_later,
                     drew)


def _generators() -> list[torch.Tensor]:
    """The states of the global generators that a step could draw from: the CPU's and each GPU's default one (read on
    the host, no wait).  A graph that captured a draw (dropout) moves its GPU's generator at every replay: the capture
    registers the default generator (CUDAGraph::capture_begin), and each replay adds the capture's whole-graph
    increment to its offset (CUDAGeneratorState::replay_prologue), so that torch.cuda.get_rng_state() differs after
    it.  (A draw outside any graph moves it too.)"""
    return [torch.get_rng_state(), *(g.get_state() for g in torch.cuda.default_generators)]


def _drew(before: Sequence[torch.Tensor], call: str, drew: list[str]) -> None:
    """Note `call` in `drew` where a global generator's state differs from `before` (`_generators`).  The slow step
    draws no random number (no dropout, no sampling: its batches come in order), so a right step leaves every
    generator as it found it: the rule holds by construction, whatever the tolerance of the values (round 77's
    adversary: F.dropout(p=1e-7) in the captured step PASSed on the H200, call CL, its losses within the tolerance)."""
    if any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(before, _generators(), strict=True)):
        drew.append(call)


def _losses_kept(step: Callable[[], object], losses: Callable[[], object], done: int, last: object, total: int
                 ) -> str:
    """step() called on from step `done` to step `total`, then losses(): what is wrong with what it returns ("" if
    nothing): not `total` losses, or its first `done` other than those that `last` (losses() after step `done`, as
    read, `_as_read`) held.  A history kept in a ring of fewer than `total` losses shows (round 71's last adversary);
    the values past step `done` are not judged (no slow run that long)."""
    for _ in range(total - done):
        step()
    returned = losses()
    got, before = as_losses(_as_read(returned)), as_losses(last)
    if got is None or len(got) != total:
        count = f" of {len(got)} losses" if got is not None else ""
        return f"losses() after step {total} returned {what_returned(returned)}{count}"
    if before is not None and not all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(got, before)):
        k = next(k for k, (a, b) in enumerate(zip(got, before)) if not (a == b or (math.isnan(a) and math.isnan(b))))
        return (f"losses() after step {total} gave step {k + 1}'s loss as {got[k]:.6f}; after step {done} it gave "
                f"{before[k]:.6f}")
    return ""


def _count_losses(read: object) -> int | str:
    """How many losses a losses() result holds as read (`_as_read`): its elements, or '?' for anything else."""
    if isinstance(read, torch.Tensor):
        return read.numel()
    if isinstance(read, list):
        return sum(v.numel() if isinstance(v, torch.Tensor) else 1 for v in read)
    return "?"


def _same_read(a: object, b: object) -> bool:
    """Whether two reads of a losses() result (`_as_read`) hold the same values, NaN equal to NaN."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a.isnan(), b.isnan())) and bool(
            torch.equal(a.nan_to_num(), b.nan_to_num()))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_read(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and (a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                                              and math.isnan(b)))


def _same_stream(caller: torch.cuda.Stream, call: str, switched: list[str]) -> None:
    """Note `call` in `switched` if it left a stream other than the caller's current, and make the caller's current."""
    if torch.cuda.current_stream() != caller:
        switched.append(call)
        torch.cuda.set_stream(caller)


def check_fast_step(make_fast_step: Callable[..., tuple[Callable[[], object], Callable[[], object]]]) -> None:
    """make_fast_step(model, data) -> (step, losses): correct, fast and clean against the slow step.

    Two runs of STEPS steps from four callers (the second with other streams late), the first continued to
    LONG_RUN_STEPS steps and losses() read once more (`_losses_kept`): a history of losses kept in a ring of more than
    LONG_RUN_STEPS losses is the limit that remains (it passes)."""
    if not has_cuda():
        with exercise("make_fast_step"):
            raise LeftForGPU("", "the fast step against the slow one, 40 steps called from four callers: every loss "
                                 "and every update, a speed-up of 3x or more, no wait for the GPU, copies hidden")
        return
    with exercise("make_fast_step") as ex:
        yours = ex.answer(make_fast_step)
        step, losses, params, given, (names, numels) = _made(ex, yours, again=False)
        slow, slow_s, slow_launches, bf16, bf16_kernel_s = _references(torch.cuda.current_device())
        run = _answer_run(step, losses, params, given, STEPS)

        found = Findings()
        judge_correct(found, run.weights, run.returned, slow, bf16, names, numels)
        judge_streams(found, run.switched)
        found.expect(not run.drew, f"{len(run.drew)} calls moved PyTorch's global random generator (the first: "
                     f"{run.drew[0] if run.drew else ''})",
                     "the slow step draws no random numbers: a step that does (dropout, a sampling) is another "
                     "step, however little it changes the losses (a graph that captured the draw draws again at "
                     "every replay)")
        found.expect(not run.changed_later, "; ".join(run.changed_later[:1]),
                     "the caller keeps what losses() returns: later steps must not change it (return a new list, or "
                     "a tensor that later steps do not write)")
        found.report(ex)  # a wrong answer's speed means nothing: stop here
        kept = _losses_kept(step, losses, STEPS, run.returned[-1][2], LONG_RUN_STEPS)
        ex.expect(not kept, f"the caller went on stepping after the run, from the default stream: {kept}", COUNT_HINT)
        seen = read_run(run.trace, run.calls)
        if not seen.wait:  # a host that waited fails below at once: a second run of a polling answer costs as much
            late, found = _late_run(ex, yours), Findings()  # again (each query() is a call in the profile)
            judge_correct(found, late.weights, late.returned, slow, bf16, names, numels)
            late_by = (f"with every stream but the caller's started {LATE_MS:g} ms late in each step, and each "
                       f"caller's stream busy {CALLER_BUSY_MS:g} ms before its first {CALLER_BUSY_STEPS} steps, then "
                       f"writing the parameters their own values (a second run, whose parameters were negated while "
                       f"make_fast_step ran and given their values back, in place, before the first step)")
            found.failed = [(f"{late_by}: {problem}", LATE_HINT) for problem, _ in found.failed]
            found.report(ex)
        found = Findings()
        judge_work(found, seen, STEPS, bf16_kernel_s)
        judge_fast(found, slow_s, max(run.host_s - seen.blocked, run.gpu_s) / STEPS)  # blocked: the GPU's pace
        judge_clean(found, seen, slow_launches)
        found.report(ex)
        arithmetic, halves = _step_arithmetic(ex, yours)
        if halves:  # float16 first (outside the products, its operators are noted as bf16 arithmetic's too)
            names = sorted(dict.fromkeys(halves), key=lambda a: a.removeprefix("aten.") not in GEMMS)  # products first
            more = f" and {len(names) - 3} more operators" if len(names) > 3 else ""
            problem = (f"make_fast_step and step() (on a fresh model, the backward and the updates included): "
                       f"{', '.join(names[:3])}{more} took or returned float16 ({len(halves)} calls)")
            hint = ("the step's loss is exercise 1's fast_loss with bf16=True: bf16 matrix products, and float16 "
                    "nowhere, whatever the batch's size (torch.autocast takes the format as dtype=: without it, a "
                    "GPU's autocast runs float16)")
        else:
            more = f" and {len(arithmetic) - 1} more" if len(arithmetic) > 1 else ""
            problem = f"step() (on a fresh model, outside the backward): {arithmetic[0] if arithmetic else ''}{more}"
            hint = ("the step's loss is exercise 1's fast_loss with bf16=True: bf16 matrix products, and no other "
                    "arithmetic in bf16 (an operation that rounds its result to bf16, inside TorchScript too)")
        ex.expect(not halves and not arithmetic, problem, hint)


def _step_arithmetic(ex: Checker, yours: Callable[..., object]) -> tuple[list[str], list[str]]:
    """make_fast_step on a fresh model and data, then two steps and losses(), under `_StepArithmetic`: its notes (bf16
    arithmetic, float16's operators).  An answer that raises under it, or a setting it changes, is judged by the runs
    before (this run judges formats only: an exception here is the mode's, e.g. a library refusing a dispatch mode,
    not the answer's)."""
    saved = _switches_saved()
    mode = _StepArithmetic()
    caller = torch.cuda.current_stream()
    try:
        with _scripts_unoptimized(), mode:
            made: Any = yours(make_model("cuda"), make_data("cuda"))
            step, losses = made
            for _ in range(2):
                step()
            losses()
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 (see the docstring)
        mode.error = f"{type(error).__name__}: {error}"
        return [], []
    finally:
        torch.cuda.set_stream(caller)
        _switches_restore(saved)
    return mode.arithmetic, mode.float16


@contextmanager
def _scripts_unoptimized() -> Iterator[None]:
    """TorchScript run unoptimized inside (torch.jit.optimized_execution(False)), every @torch.jit.script function's
    plans made before dropped on entering (`_script_plans_flushed`), and those made inside dropped on leaving (compiled
    again, optimized, at their next calls).  An optimized plan, once made, is what a function runs even under
    optimized_execution(False) (PyTorch's ProfilingGraphExecutorImpl::getPlanFor returns it first), and on a GPU its
    fuser runs the function's elementwise operators as one generated kernel that no mode sees: for check_fast_loss
    (round 71's second adversary: a scripted bf16 division, called first in a cell of the student's own) and for
    `_step_arithmetic` (round 70's TorchScript division in the step)."""
    _script_plans_flushed()
    try:
        with torch.jit.optimized_execution(False):
            yield
    finally:
        _script_plans_flushed()


def _script_plans_flushed() -> None:
    """Every @torch.jit.script function's compiled plans dropped (the Python compilation unit's functions), so that
    under torch.jit.optimized_execution(False) its next call runs its graph as it is, an operator at a time through
    the dispatcher, where `_StepArithmetic` sees them.  On a GPU, TorchScript's fuser runs a profiled function's
    elementwise operators as one generated kernel, which no dispatch mode sees, and keeps that plan until it is
    flushed (round 70's TorchScript division in the step PASSed on the H200 after the first version of this check,
    call BY, 2026-12-02: the check's runs before had called the function many times).  Scripted modules' methods are
    not flushed."""
    try:
        functions = torch.jit._state._python_cu.get_functions()  # type: ignore[func-returns-value]  # (its stub says None: a list here)
    except AttributeError:  # a PyTorch without it: nothing flushed
        return
    for function in functions:  # type: ignore[attr-defined]
        flush = getattr(function, "_debug_flush_compilation_cache", None)
        if flush is not None:
            flush()


def _made(ex: Checker, yours: Callable[..., object], *, again: bool) -> tuple[
        Callable[[], object], Callable[[], object], list[torch.Tensor], torch.Tensor, tuple[list[str], list[int]]]:
    """make_fast_step on a fresh model and fresh data, its return checked: (step, losses, the model's parameters,
    the values they were given, flattened into one tensor, and their names and sizes), the last three read before
    the call.  `again`: the check's second call (the late run)."""
    data, model = make_data("cuda"), make_model("cuda")
    named = _parameters(model)
    params: list[torch.Tensor] = list(model.parameters())
    given = torch.cat([p.detach().reshape(-1) for p in params])
    kept = [t.clone() for t in data]
    # every setting watched around make_fast_step (round 24's adversary: TF32 and the sync debug mode "error" left on
    # by it, unread: expected to PASS and to crash the check's own reads), the generators' states left out (a warm-up
    # or a graph's capture may draw from them); GPU only, to be verified there
    if again:  # the parameters negated while make_fast_step runs, then the given values written back in place, as a
        # caller loading a checkpoint into a model does: a step must train the weights as they are when it is called
        # (round 113's adversary captured under an autocast that kept its cache: the graph read the bf16 copies its
        # warm-up had cast, and passed; on the H200, 2026-12-01, a replay after weight.mul_(2) differed from a fresh
        # call by 2.33, of outputs up to 4.59, and by 0 with the cache off: a Linear captured inside the autocast, its
        # weight doubled after the capture; the answer is registered, cached_autocast)
        with torch.no_grad():
            for p in params:
                p.neg_()
    caller = torch.cuda.default_stream()  # (the check's own stream, current here: the answer is called from it)
    if not again:  # the first run: the caller's stream still busy writing the weights when make_fast_step is called,
        # as after a checkpoint loaded in place, non-blocking: they hold other values (negated) until LOAD_MS after the
        # call; make_fast_step must see the written ones, as every step must.  Round 66's adversary (a set-up on a side
        # stream that never waits for the caller's snapshots the old weights and writes them back after the capture)
        # still PASSed with it on the H200 (calls BA, BB, 2026-12-01; MISJUDGED_ON_A_GPU): the snapshot there read the
        # written weights.  Not separated why; CUDA's programming guide lists a device memory allocation (the first
        # blocks of a new stream's pool) and a page-locked host allocation among the operations that serialize
        # streams.  (A set-up that takes longer than LOAD_MS on the host before it reads the weights goes unseen too:
        # no right answer can FAIL for it.)
        with torch.no_grad():
            for p in params:
                p.neg_()
        torch.cuda.synchronize()
        gpu_sleep(LOAD_MS / 1e3)
        _rewrite(params, given)
    with _LateAfterCapture(AFTER_CAPTURE_MS, caller) if again else nullcontext():
        made: Any = keeping(ex, yours, STEP_WATCHED)(model, data)
    torch.cuda.set_stream(caller)  # whatever the answer left current: the check calls anew
    if again:  # the caller's write, queued on its stream at once: what make_fast_step left queued elsewhere must be
        # ordered before it by the answer (a side stream's work after the capture is late: _LateAfterCapture)
        _rewrite(params, given)
        torch.cuda.synchronize()
        now = torch.cat([p.detach().reshape(-1) for p in params])
        ex.expect(now.dtype != given.dtype or torch.equal(now, given),
                  f"after make_fast_step returned, the caller wrote the model's weights on its stream; once every "
                  f"stream had finished, {int((now != given).sum())} of {now.numel()} weights held other values: "
                  "work that make_fast_step left queued on another stream wrote them after the caller's write",
                  "when make_fast_step returns, what it queued on other streams must come before "
                  "whatever the caller queues next on its own (the caller's stream waits for them)")
    changed = [name for name, t, was in zip(("tokens", "lengths", "labels"), data, kept, strict=True)
               if t.dtype != was.dtype or t.shape != was.shape or not torch.equal(t, was)]
    ex.expect(not changed, f"make_fast_step changed the caller's data ({', '.join(changed)})",
              "the data set is the caller's: read it, copy it, but leave it as it was (no in-place operation on it)")
    ex.expect(isinstance(made, tuple) and len(made) == 2 and all(callable(f) for f in made),
              f"make_fast_step returned {what_returned(made)}, not two functions" +
              (", when called a second time" if again else ""),
              "return (step, losses) each time make_fast_step is called, for the model and data it is given" if again
              else "return (step, losses): step() trains one step, losses() gives every loss so far")
    step, losses = (ex.answer(f) for f in made)
    torch.cuda.synchronize()
    return step, losses, params, given, named


class _LateAfterCapture(_LateStreams):
    """While make_fast_step runs in the late run: after each capture the answer makes, the first PyTorch operation on
    each stream other than the caller's starts `ms` late on the GPU (streams.widened's rule, re-armed by each capture),
    so that work the answer leaves queued on a side stream after its capture (undoing its warm-up, a first copy) ends
    after whatever the caller queues next on its own stream, unless the answer orders it before (round 65's adversary:
    the warm-up undone on the side stream after the capture, never joined to the caller's stream, passed: the check
    synchronized after make_fast_step).  A capture synchronizes the device before it starts (torch.cuda.graph), so
    work queued before it is done by then."""

    def __init__(self, ms: float, caller: torch.cuda.Stream) -> None:
        super().__init__(ms, {caller.cuda_stream})
        self.captured = False

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if torch.cuda.is_current_stream_capturing():
            self.captured = True
            self.made_late.clear()  # each stream late again after this capture
        elif self.captured:
            return super().__torch_function__(func, types, args, kwargs)
        return func(*args, **(kwargs or {}))


STEP_WATCHED = tuple(name for name in EVERY
                     if name not in ("torch.get_rng_state()", "np.random.get_state()", "random.getstate()"))


def _late_run(ex: Checker, yours: Callable[..., object]) -> AnswerRun:
    """A fresh make_fast_step on a fresh model, its steps run with every stream but the caller's late each step;
    profiled as the first run is (an answer cannot tell the runs apart), its trace left unread."""
    step, losses, params, given, _ = _made(ex, yours, again=True)
    return _answer_run(step, losses, params, given, STEPS, late_ms=LATE_MS, traced=False)


register(Exercise(NOTEBOOK, "fast_loss", check_fast_loss),
         Exercise(NOTEBOOK, "make_fast_step", check_fast_step, gpu=True, cpu_checks=0))

