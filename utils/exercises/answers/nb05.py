"""Wrong answers, and other right ones, to the exercises of notebook 05 (debugging asynchronous
CUDA errors), for the tests: SPOILERS.

Exercises 1 and 2 are checked on the CPU and on the GPU alike (their scripts and children pick the
device); exercise 3 needs a GPU (sync debug mode).  The functions of exercise 2 travel to a fresh
process as code only: each is a plain top-level function that uses torch, F and math alone.
"""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F

from ...processes import run_process


# ---------------------------------------------------------------- exercise 1: find_failing_line (CPU)
def _string_lines(traceback_lines: list[str]) -> list[int]:
    return [int(n) for n in re.findall(r'File "<string>", line (\d+)', "\n".join(traceback_lines))]


def hard_coded(script):  # the line of the first script, whatever the script
    return 23


def as_is(script):  # no CUDA_LAUNCH_BLOCKING, default device: the line where the error surfaced
    return _string_lines(run_process(script).traceback)[-1]


def first_frame(script):  # the first frame of the script is the caller, `loss = forward(step)`
    return _string_lines(run_process(script, env={"DEVICE": "cpu"}).traceback)[0]


def zero_based(script):  # counts lines from 0
    return _string_lines(run_process(script, env={"DEVICE": "cpu"}).traceback)[-1] - 1


def any_file_last_line(script):  # the last "line N" of the traceback: a line of PyTorch's own code
    return int(re.findall(r"line (\d+)", "\n".join(run_process(script, env={"DEVICE": "cpu"}).traceback))[-1])


def first_lookup_in_text(script):  # reads the script, not the traceback: the first lookup
    for n, line in enumerate(script.splitlines(), 1):
        if "[step]" in line and line.startswith("    "):
            return n
    return 0


def blocking_or_cpu(script):  # right: CUDA_LAUNCH_BLOCKING=1 on a GPU, the CPU elsewhere
    env = {"CUDA_LAUNCH_BLOCKING": "1"} if torch.cuda.is_available() else {"DEVICE": "cpu"}
    return _string_lines(run_process(script, env=env).traceback)[-1]


# ---------------------------------------------------------------- exercise 2: safe_lookup (CPU or GPU)
def no_check(weight, ids):
    return F.embedding(ids, weight)


def off_by_one(weight, ids):
    if bool((ids < 0).any() | (ids > weight.shape[0]).any()):
        bad = ids[(ids < 0) | (ids > weight.shape[0])][0].item()
        raise IndexError(f"index {bad} is out of range for {weight.shape[0]} rows")
    return F.embedding(ids, weight)


def negatives_forgotten(weight, ids):
    if bool((ids >= weight.shape[0]).any()):
        bad = ids[ids >= weight.shape[0]][0].item()
        raise IndexError(f"index {bad} is out of range for {weight.shape[0]} rows")
    return F.embedding(ids, weight)


def one_sync_per_index(weight, ids):  # right answers, but the host asks the GPU once per index
    for i in range(len(ids)):
        if ids[i] < 0 or ids[i] >= weight.shape[0]:
            raise IndexError(f"index {ids[i].item()} is out of range for {weight.shape[0]} rows")
    return F.embedding(ids, weight)


def assert_async(weight, ids):  # still a device-side assert: asynchronous, and fatal to the process
    torch._assert_async(((ids >= 0) & (ids < weight.shape[0])).all())
    return F.embedding(ids, weight)


def vague_message(weight, ids):
    if bool(((ids < 0) | (ids >= weight.shape[0])).any()):
        raise IndexError("index out of range")
    return F.embedding(ids, weight)


def clamps(weight, ids):  # hides the bug: a wrong row instead of an error
    return F.embedding(ids.clamp(0, weight.shape[0] - 1), weight)


def lets_the_lookup_fail(weight, ids):  # the CPU's lookup raises by itself; on a GPU: a device-side assert
    try:
        return F.embedding(ids, weight)
    except IndexError:
        rows = weight.shape[0]
        bad = ids[(ids < 0) | (ids >= rows)][0].item()
        raise IndexError(f"index {bad} is out of range for {rows} rows") from None


def value_error_aminmax(weight, ids):  # right: one synchronization for both ends
    low, high = torch.stack(torch.aminmax(ids)).tolist()
    rows = weight.shape[0]
    if low < 0 or high >= rows:
        raise ValueError(f"indices must be in 0..{rows - 1}; got {low if low < 0 else high}")
    return F.embedding(ids, weight)


def tolist_then_loop(weight, ids):  # right: one copy to the host, then Python checks each index
    rows = weight.shape[0]
    for i in ids.tolist():
        if not 0 <= i < rows:
            raise IndexError(f"index {i} is out of range for {rows} rows")
    return F.embedding(ids, weight)


# ---------------------------------------------------------------- exercise 3: train_steps_no_sync (GPU)
def _no_sync(model, batches, lr, *, log_item=False, bool_guard=False, mask=False, guard=True, per_row_mean=False,
             guard_loss_only=False):
    """The solution, with a switch for each typical mistake."""
    losses = []
    for x, y in batches:
        keep = y >= 0
        pred = model(x)
        if mask:
            loss = F.mse_loss(pred[keep], y[keep])
        elif per_row_mean:
            loss = torch.where(keep, (pred - y) ** 2, 0.0).mean()
        else:
            loss = torch.where(keep, (pred - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(torch.tensor(loss.item()) if log_item else loss.detach())
        ok = ~torch.isnan(loss)
        if bool_guard and not ok:
            continue
        model.zero_grad()
        (torch.where(ok, loss, 0.0) if guard_loss_only else loss).backward()
        with torch.no_grad():
            for p in model.parameters():
                step = torch.where(ok, p.grad, 0.0) if guard and not guard_loss_only else p.grad
                p -= lr * step
    return torch.stack([t.to(losses[0].device) for t in losses])


def item_each_step(model, batches, lr):
    return _no_sync(model, batches, lr, log_item=True)


def if_isnan(model, batches, lr):
    return _no_sync(model, batches, lr, bool_guard=True)


def boolean_mask(model, batches, lr):
    return _no_sync(model, batches, lr, mask=True)


def no_nan_guard(model, batches, lr):
    return _no_sync(model, batches, lr, guard=False)


def mean_over_all_rows(model, batches, lr):
    return _no_sync(model, batches, lr, per_row_mean=True)


def where_on_the_loss(model, batches, lr):  # 0 * (1/0) in the backward pass: the gradients are NaN anyway
    return _no_sync(model, batches, lr, guard_loss_only=True)


def synchronize_each_step(model, batches, lr):  # sync debug mode does not report torch.cuda.synchronize()
    losses = []
    for batch in batches:
        losses.append(_no_sync(model, [batch], lr)[0])
        torch.cuda.synchronize()
    return torch.stack(losses)


def event_synchronize_at_the_end(model, batches, lr):  # the host waits once, at the end
    losses = _no_sync(model, batches, lr)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    return losses


def given_loop(model, batches, lr):
    from ..nb05 import train_steps_sync

    return train_steps_sync(model, batches, lr)


def nonzero_indices(model, batches, lr):
    losses = []
    for x, y in batches:
        rows = (y[:, 0] >= 0).nonzero()[:, 0]  # nonzero: the host must learn how many
        loss = F.mse_loss(model(x)[rows], y[rows])
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, 0.0)
    return torch.stack(losses)


def weights_and_clamp(model, batches, lr):  # right: a 0/1 weight per row, and the mean written out
    losses = []
    for x, y in batches:
        w = (y >= 0).float()
        loss = (w * (model(x) - y) ** 2).sum() / w.sum()
        losses.append(loss.detach())
        ok = torch.isfinite(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(lr * torch.where(ok, p.grad, torch.zeros_like(p.grad)))
    return torch.stack(losses)


WRONG = {
    "check_find_failing_line": {
        "a hard-coded line": hard_coded,
        "runs the script as it is and reads the last frame (where the error surfaced)": as_is,
        "the first frame of the script (the caller)": first_frame,
        "counts lines from 0": zero_based,
        "the last line number of the traceback, in PyTorch's files": any_file_last_line,
        "the first lookup of the script's text": first_lookup_in_text,
    },
    "check_safe_lookup": {
        "no check (a device-side assert on a GPU)": no_check,
        "off by one: index == rows passes": off_by_one,
        "negative indices forgotten": negatives_forgotten,
        "one synchronization per index": one_sync_per_index,
        "torch._assert_async": assert_async,
        "a message that does not name the index": vague_message,
        "clamps the indices": clamps,
        "lets the lookup fail, then names the index": lets_the_lookup_fail,
    },
    "check_train_steps_no_sync": {
        "the given loop, unchanged": given_loop,
        "still calls .item() every step": item_each_step,
        "still `if torch.isnan(loss)`": if_isnan,
        "still a boolean mask": boolean_mask,
        "nonzero() for the rows": nonzero_indices,
        "no NaN guard: updates on every batch": no_nan_guard,
        "the mean over all rows, not over the rows with a target": mean_over_all_rows,
        "torch.where on the loss, not on the gradients": where_on_the_loss,
        "torch.cuda.synchronize() every step": synchronize_each_step,
        "an event's synchronize() at the end": event_synchronize_at_the_end,
    },
}
ALSO_RIGHT = {
    "check_find_failing_line": {"CUDA_LAUNCH_BLOCKING=1 on a GPU, the CPU elsewhere": blocking_or_cpu},
    "check_safe_lookup": {"ValueError, torch.aminmax, one .tolist()": value_error_aminmax,
                          "one .tolist(), then a Python loop": tolist_then_loop},
    "check_train_steps_no_sync": {"0/1 weights, p.sub_": weights_and_clamp,
                                  "the wrong answers' builder, nothing switched": _no_sync},
}
