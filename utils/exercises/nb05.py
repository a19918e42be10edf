"""Checks for the exercises of notebook 05 (debugging asynchronous CUDA errors): find the failing
line of a script, fail on the host before a scatter-add's device-side assert, and a training loop
without hidden synchronizations.

Whatever could kill a process runs in a fresh one: the scripts of exercise 1 crash on purpose,
and exercise 2 runs your function in a child process (a device-side assert there leaves the
notebook's own CUDA context alone; on a CPU, that process makes index_add_ as blind to a bad index
as a GPU launch is, so that an answer that counts on the operation's own error fails there too).
Exercise 3 runs in this process, under
`torch.cuda.set_sync_debug_mode("error")`, which raises at the first synchronizing call.  Without a
GPU, it runs on the CPU with torch.cuda imitated (`utils.exercises.cuda_on_cpu`): the same losses and
parameters, and every call that would make the host wait for a GPU counted by `HostWaits`.
"""

from __future__ import annotations

import json
import marshal
import random
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ..device import has_cuda, require_cuda
from ..processes import run_process
from ..timing import gpu_sleep
from . import STUB_MESSAGE, Exercise, Findings, InOrder, cuda_on_cpu, exercise, register, what_returned

NOTEBOOK = "05_debugging"

# ------------------------------------------------------------------------------------------
# Exercise 1: the line that fails (CPU; the same scripts run on a GPU)
# ------------------------------------------------------------------------------------------
ROWS = 100  # rows of every table the scripts look up: valid indices are 0..99

SCRIPT_HEAD = f'''import os
import torch

device = os.environ.get("DEVICE", "cuda")
torch.manual_seed(0)
emb = torch.nn.Embedding({ROWS}, 16).to(device)
table = torch.randn({ROWS}, 16, device=device)
h = torch.randn(1024, 1024, device=device)
'''

SCRIPT_MIDDLE = '''

def earlier_layers(h):  # keeps the GPU busy: the host runs ahead, as in a real model
    for _ in range(30 if h.is_cuda else 1):
        h = torch.tanh(h @ h / 32)
    return h


def forward(step):
    out = earlier_layers(h).mean()
'''

SCRIPT_TAIL = '''    return out


for step in range(2):  # step 0 is fine; one lookup of step 1 reads a row that does not exist
    loss = forward(step)
    print(f"step {step}: loss {loss.item():.4f}")
'''

LOOKUPS = (  # one line each; {v} is the result's name, {ids} the name of its indices
    "{v} = emb({ids}[step])",
    "{v} = table[{ids}[step]]",
    "{v} = torch.index_select(table, 0, {ids}[step])",
    "{v} = torch.nn.functional.embedding({ids}[step], table)",
)
FILLERS = ("out = out * 0.5", "out = out + h[0, 0]", "out = torch.tanh(out)")


def failing_script(case: int) -> tuple[str, int]:
    """A script whose step 1 reads row >= ROWS in one of its lookups, and that lookup's line (1-based).

    Each case puts a different lookup, at a different line, out of range; the same case always
    gives the same script.
    """
    rng = random.Random(case)
    count = 3 + case % 2
    bad = case % count
    kinds = rng.sample(LOOKUPS, count)
    lines = SCRIPT_HEAD.splitlines()
    for k in range(count):
        good = [rng.randrange(ROWS) for _ in range(4)]
        later = [rng.randrange(ROWS) for _ in range(4)]
        if k == bad:
            later[rng.randrange(4)] = ROWS + rng.randrange(3)  # one past the end, or a little more
        lines.append(f"ids_{k} = torch.tensor([{good}, {later}], device=device)")
    lines += SCRIPT_MIDDLE.splitlines()
    want = 0
    for k, kind in enumerate(kinds):
        for _ in range(rng.randrange(3)):
            lines.append("    " + rng.choice(FILLERS))
        lines.append("    " + kind.format(v=f"v{k}", ids=f"ids_{k}"))
        if k == bad:
            want = len(lines)
        lines.append(f"    out = out + v{k}.sum()")
    lines += SCRIPT_TAIL.splitlines()
    return "\n".join(lines) + "\n", want


SCRIPT_CASES = (0, 1, 2)


def check_find_failing_line(find_failing_line: Callable[[str], int]) -> None:
    """find_failing_line(script) must return the line of the lookup that reads out of range.

    Three scripts, each with the bad lookup at another line; the check knows the line because it
    wrote the script.
    """
    with exercise("find_failing_line") as ex:
        for case in SCRIPT_CASES:
            script, want = failing_script(case)
            got = find_failing_line(script)
            ex.expect(isinstance(got, int) and not isinstance(got, bool),
                      f"returned {got!r}, not a line number", "return an int, the line as the traceback counts it")
            text = script.splitlines()
            said = text[got - 1].strip() if 1 <= got <= len(text) else "(no such line)"
            if "loss.item()" in said:
                ex.expect(False, f"script {case}: returned line {got}, `{said}`: where the error surfaced, not where "
                                 "it happened", "the GPU runs behind the host: make every launch wait (an environment "
                                                "variable read when CUDA starts), or run the script on the CPU")
            ex.expect(got == want, f"script {case}: returned line {got}, `{said}`; the lookup that reads out of range "
                                   f"is line {want}, `{text[want - 1].strip()}`",
                      "run the script where the error is raised by the operation that makes it (DEVICE=cpu, or "
                      "CUDA_LAUNCH_BLOCKING=1 on a GPU) and take the last frame of the traceback that is in the "
                      'script, File "<string>"')


register(Exercise(NOTEBOOK, "find_failing_line", check_find_failing_line, fresh_processes=True))


# ------------------------------------------------------------------------------------------
# Exercise 2: fail on the host, before the launch (CPU or GPU, in a fresh process)
# ------------------------------------------------------------------------------------------
TARGET_SHAPE = (1000, 40)  # index_add_ along dim 0 takes indices 0..999, along dim 1 (or -1) 0..39

CHILD = r"""
import json, marshal, math, sys, types, warnings

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

code = marshal.loads(bytes.fromhex(sys.argv[1]))
shape = tuple(json.loads(sys.argv[2]))
device = "cuda" if torch.cuda.is_available() else "cpu"
report = {"device": device, "cases": []}
safe_index_add = types.FunctionType(code, {"torch": torch, "F": F, "math": math, "__builtins__": __builtins__})


def arguments(func, args, kwargs):
    # index_add(input, dim, index, source) and Tensor.index_add(dim, index, source): self is args[0]
    names = ("input", "dim", "index", "source")
    given = dict(zip(names, args))
    given.update({("input" if k == "self" else k): v for k, v in kwargs.items() if k in names or k == "self"})
    return given


class HostBlind(TorchFunctionMode):
    # On the CPU, index_add_ raises by itself for an index out of range; on a GPU the host learns nothing
    # at the launch, and the kernel ends in a device-side assert. So, on the CPU, a call with a bad index
    # is recorded and computed with the index clamped, as if on a GPU: an answer may not count on its error.
    def __init__(self, entry):
        super().__init__()
        self.entry = entry

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") in ("index_add", "index_add_"):
            given = arguments(func, args, kwargs)
            target, dim, index = given.get("input"), given.get("dim"), given.get("index")
            if isinstance(target, torch.Tensor) and isinstance(index, torch.Tensor) and isinstance(dim, int):
                size = target.shape[dim]
                bad = (index < 0) | (index >= size)
                if bool(bad.any()):
                    self.entry["launched_bad"] = True
                    clamped = index.clamp(0, size - 1)
                    args = tuple(clamped if a is index else a for a in args)
                    kwargs = {k: (clamped if v is index else v) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def inputs(index, dim):
    g = torch.Generator().manual_seed(len(index))
    target = torch.randn(shape, generator=g).to(device)
    source_shape = list(shape)
    source_shape[dim] = len(index)
    source = torch.randn(source_shape, generator=g).to(device)
    return target, torch.tensor(index, device=device), source


def case(index, dim):
    entry = {"index": index, "dim": dim}
    report["cases"].append(entry)
    target, t, source = inputs(index, dim)
    before = target.clone()
    try:
        if device == "cpu":
            with HostBlind(entry):
                out = safe_index_add(target, dim, t, source)
        else:
            out = safe_index_add(target, dim, t, source)
        sync()
    except Exception as error:
        entry["raised"], entry["message"] = type(error).__name__, (str(error).splitlines() or [""])[0][:300]
        if "device-side assert" in str(error) or type(error).__name__ == "AcceleratorError":
            entry["device_assert"] = True
        return
    entry["target_kept"] = bool(torch.equal(target, before))
    size = shape[dim]
    want = before.index_add(dim, t.clamp(0, size - 1), source)
    entry["right"] = isinstance(out, torch.Tensor) and tuple(out.shape) == shape and bool(
        torch.allclose(out, want, rtol=1e-5, atol=1e-5))


def reference(target, dim, index, source):
    bad = (index < 0) | (index >= target.shape[dim])
    if bad.any():
        raise IndexError("out of range")
    return target.index_add(dim, index, source)


class HostReads(TorchFunctionMode):
    # Counts the calls that bring a tensor's values to the host: on a GPU each one waits for the GPU
    # (a synchronization); on the CPU they cost nothing, but they are counted just the same.
    READS = frozenset({"__bool__", "item", "__int__", "__float__", "__index__", "tolist", "numpy", "cpu",
                       "nonzero", "__array__"})

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += getattr(func, "__name__", "") in self.READS
        return func(*args, **(kwargs or {}))


def host_reads(fn, args):
    with HostReads() as counter:
        fn(*args)
    return counter.count


def syncs(fn, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn(*args)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("called a synchronizing" in str(w.message) for w in caught)


def run():
    for index, dim in json.loads(sys.argv[3]):
        case(index, dim)
        if report["cases"][-1].get("device_assert"):
            return
    valid = torch.randint(0, shape[0], (4096,), generator=torch.Generator().manual_seed(1))
    target, index, source = inputs(valid.tolist(), 0)
    many = (target, 0, index, source)
    reference(*many), safe_index_add(*many)  # warm-up
    report["reads"], report["reference_reads"] = host_reads(safe_index_add, many), host_reads(reference, many)
    if device == "cuda":
        report["syncs"], report["reference_syncs"] = syncs(safe_index_add, many), syncs(reference, many)


try:
    run()
finally:
    print("REPORT " + json.dumps(report))
"""

TARGET_ROWS, TARGET_COLUMNS = TARGET_SHAPE
# (index, dim, the first bad position or None): valid ones first, so that a device-side assert comes last
INDEX_ADD_CASES: list[tuple[list[int], int, int | None]] = [
    ([0, 5, 17, TARGET_ROWS - 1], 0, None),
    ([3, 1, 4, 1, 5, 9, 2, 6], 1, None),  # 1 twice: both rows add up
    ([TARGET_COLUMNS - 1, 0, 7], -1, None),
    ([7, TARGET_ROWS, 2], 0, 1),  # one past the end
    ([-1, 4, 8], 0, 0),  # index_add_ does not count from the end
    ([2, 11, TARGET_COLUMNS, 12, TARGET_COLUMNS + 5], 1, 2),  # too large for dim 1, fine for dim 0
    ([3, 2, -7, TARGET_ROWS + 3], 0, 2),  # the first bad one is negative, a later one too large
]


def portable(fn: Callable) -> str:
    """fn's code, for a fresh process: marshal's hex (the same Python reads it back).

    Only the code travels, not the notebook's variables: a function that uses other names than
    torch, F (torch.nn.functional) and math fails there with a NameError.
    """
    if fn.__closure__:
        raise ValueError(f"{fn.__name__} uses variables of an enclosing function: define it at the top level")
    return marshal.dumps(fn.__code__).hex()


def names(value: int) -> Callable[[str], bool]:
    """Whether a message names `value` as a number of its own (1000 is not in 10005, -1 is not 1)."""
    return lambda message: re.search(rf"(?<![\d.-]){value}(?![\d.])", message) is not None


def check_safe_index_add(safe_index_add: Callable[[torch.Tensor, int, torch.Tensor, torch.Tensor], torch.Tensor]
                         ) -> None:
    """safe_index_add(target, dim, index, source) must return target.index_add(dim, index, source), leave
    target as it was, and raise IndexError, naming the position and the value of the first bad index,
    before index_add runs when an index is outside 0..target.shape[dim]-1.

    Runs in a fresh process (on the GPU if there is one): a device-side assert would make every later
    CUDA call of this notebook fail.  On the CPU, index_add raises by itself; there the fresh process
    makes it behave as on a GPU (no error on the host, see CHILD's HostBlind) and records the call.
    """
    with exercise("safe_index_add") as ex:
        try:
            code = portable(safe_index_add)
        except ValueError as error:
            ex.expect(False, str(error), "write safe_index_add as a plain function at the top level of a cell")
        cases = [[index, dim] for index, dim, _ in INDEX_ADD_CASES]
        done = run_process(CHILD, code, json.dumps(TARGET_SHAPE), json.dumps(cases), timeout=300)
        lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
        if not lines:
            ex.expect(False, "the fresh process that ran safe_index_add failed:\n" + "\n".join(done.traceback[-6:]),
                      "safe_index_add may use torch, F (torch.nn.functional) and math; nothing else of the notebook "
                      "reaches the fresh process")
        report = json.loads(lines[-1].removeprefix("REPORT "))
        if any(got.get("raised") == "NotImplementedError" and got.get("message") == STUB_MESSAGE
               for got in report["cases"]):
            raise NotImplementedError(STUB_MESSAGE)  # the stub, run in the fresh process: not done yet
        for (index, dim, bad), got in zip(INDEX_ADD_CASES, report["cases"]):
            call = f"safe_index_add(target, {dim}, {index}, source)"
            size = TARGET_SHAPE[dim]
            if got.get("device_assert"):
                ex.expect(False, f"{call} ended in a device-side assert ({got['message'][:80]}...)",
                          "check the indices on the host before index_add runs: a device-side assert, "
                          "torch._assert_async's too, kills the process's CUDA context")
            if bad is None:
                ex.expect("raised" not in got, f"{call} raised {got.get('raised')}: {got.get('message')}",
                          f"along dim {dim} of a {TARGET_SHAPE} target, 0..{size - 1} are all valid")
                ex.expect(got.get("right", False), f"{call} returned the wrong result",
                          "return target.index_add(dim, index, source): a new tensor, source's slices added "
                          "to target's at index")
                ex.expect(got.get("target_kept", False), f"{call} changed target",
                          "index_add returns a new tensor; index_add_ changes target in place")
                continue
            value = index[bad]
            ex.expect(not got.get("launched_bad"),
                      f"{call} ran index_add with index[{bad}] = {value}, out of range for dimension {dim} of "
                      f"size {size}" + (f", then raised {got['raised']}" if "raised" in got else ""),
                      "on a GPU that launch ends in a device-side assert, and the process is dead: check the "
                      "indices before the operation, not after it or by catching its error (on the CPU the "
                      "operation raises by itself; on a GPU the host learns nothing at the launch)")
            ex.expect("raised" in got, f"{call} raised nothing: index {value} is not a valid index along "
                                       f"dimension {dim} of size {size}",
                      "valid indices of index_add_ are 0..size-1 along dim (it does not count from the end): "
                      "check both ends, against the size of that dimension")
            ex.expect(got["raised"] == "IndexError", f"{call} raised {got['raised']}: {got['message']}",
                      "raise IndexError yourself (an assert disappears under python -O, and a RuntimeError from "
                      "the operation is not one a caller can tell from others)")
            ex.expect(names(bad)(got["message"]) and names(value)(got["message"]),
                      f"{call} raised IndexError('{got['message']}'), which does not name the first bad "
                      f"index, index[{bad}] = {value}",
                      "say where the first bad index is (its position in index) and what it is: the error is for a "
                      "person, who has to find it in a batch")
        ex.expect("reads" in report, "on 4096 valid indices the fresh process failed:\n"
                  + "\n".join(done.traceback[-6:]), "safe_index_add must work for any number of valid indices")
        ex.expect(report["reads"] <= max(1, report["reference_reads"]),
                  f"on 4096 valid indices safe_index_add brought values to the host {report['reads']} times "
                  "(bool(), .item(), int(), .tolist(), nonzero(), ...): on a GPU each one makes the host wait",
                  "one check of all indices, then one question to the GPU: not a question per index")
        if "syncs" in report:
            ex.expect(report["syncs"] <= report["reference_syncs"],
                      f"on 4096 valid indices safe_index_add made the host wait for the GPU {report['syncs']} "
                      f"times; a check of all indices at once waits {report['reference_syncs']} time(s)",
                      "one synchronization is enough: ask once whether any index is bad")


register(Exercise(NOTEBOOK, "safe_index_add", check_safe_index_add, fresh_processes=True))


# ------------------------------------------------------------------------------------------
# Exercise 3: a training loop without hidden synchronizations (GPU)
# ------------------------------------------------------------------------------------------
FEATURES, BATCH, STEPS, LR = 16, 64, 12, 0.05


def training_batches(device: str = "cuda") -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The exercise's batches, the same every time: (x, y), y = -1 where a row has no target.

    Batch 4 has no target at all, and batch 8 a NaN in a row that has one: both give a NaN loss.
    """
    g = torch.Generator().manual_seed(5)
    batches = []
    for step in range(STEPS):
        x = torch.randn(BATCH, FEATURES, generator=g)
        y = (x[:, :1] * 0.5 + 0.1 * torch.randn(BATCH, 1, generator=g)).abs()
        y[torch.rand(BATCH, 1, generator=g) < 0.25] = -1.0
        if step == 4:
            y[:] = -1.0
        if step == 8:
            row = int((y[:, 0] >= 0).nonzero()[0])
            x[row, 3] = float("nan")
        batches.append((x.to(device), y.to(device)))
    return batches


def training_model(device: str = "cuda") -> torch.nn.Module:
    """The exercise's model, the same every time: one linear layer, FEATURES -> 1."""
    g = torch.Generator().manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1)
    with torch.no_grad():
        model.weight.copy_(torch.randn(1, FEATURES, generator=g) * 0.1)
        model.bias.zero_()
    return model.to(device)


def train_steps_sync(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]],
                     lr: float = LR) -> torch.Tensor:
    """The given loop: one SGD step per batch on the rows that have a target; a batch whose loss is
    NaN is skipped.  Returns every step's loss (NaN where skipped).  It synchronizes four times a step."""
    losses = []
    for x, y in batches:
        keep = y >= 0  # y = -1: this row has no target
        loss = F.mse_loss(model(x)[keep], y[keep])  # a boolean mask: the host must learn how many rows
        losses.append(loss.item())  # for the log: the host waits for the GPU
        if torch.isnan(loss):  # no target in the batch, or a NaN input: skip it (bool(): the host waits)
            continue
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p.sub_(lr * p.grad)
    return torch.tensor(losses)


def _where_it_synced(error: BaseException, fn: Callable) -> str:
    """The line of `fn` that was running when the error was raised, as text."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == fn.__code__.co_filename]
    if not frames:
        return "somewhere in a function it called"
    frame = frames[-1]
    return f"line {frame.lineno}" + (f": `{frame.line.strip()}`" if frame.line else "")


def check_train_steps_no_sync(train_steps_no_sync: Callable[..., torch.Tensor]) -> None:
    """train_steps_no_sync(model, batches, lr) must do what train_steps_sync does (same losses, same
    parameters after the loop) without a single synchronization: it runs under
    torch.cuda.set_sync_debug_mode("error")."""
    if not has_cuda():
        return _check_train_steps_no_sync_on_cpu(train_steps_no_sync)
    with exercise("train_steps_no_sync") as ex:
        require_cuda("check_train_steps_no_sync")
        batches = training_batches()
        reference, yours = training_model(), training_model()
        want = train_steps_sync(reference, batches)
        torch.cuda.synchronize()
        previous = torch.cuda.get_sync_debug_mode()
        synced = None
        with warnings.catch_warnings():  # the mode's own "prototype" warning: the lecture said so already
            warnings.filterwarnings("ignore", message="Synchronization debug mode is a prototype")
            try:
                torch.cuda.set_sync_debug_mode("error")
                t0 = time.perf_counter()
                got = train_steps_no_sync(yours, batches, LR)
                host_seconds = time.perf_counter() - t0
            except RuntimeError as error:
                if "called a synchronizing" not in str(error):
                    raise
                synced = _where_it_synced(error, train_steps_no_sync)
            finally:
                torch.cuda.set_sync_debug_mode(previous)
        ex.expect(synced is None, f"the host waited for the GPU at {synced}",
                  "keep everything on the GPU: stack the losses instead of .item(), torch.where or a 0/1 weight "
                  "instead of a boolean mask, and a 0/1 factor instead of `if`")
        ex.expect(isinstance(got, torch.Tensor) and got.shape == want.shape,
                  f"returned {type(got).__name__} {tuple(getattr(got, 'shape', ()))}, expected a tensor of "
                  f"{len(batches)} losses", "return torch.stack(losses): one loss per batch, NaN where skipped")
        got = got.detach().cpu()
        bad = [i for i in range(len(want)) if not torch.allclose(got[i], want[i], rtol=1e-4, atol=1e-6,
                                                                   equal_nan=True)]
        ex.expect(not bad, f"the losses of batches {bad} differ: {got[bad[0]].item() if bad else 0:.5g}, "
                           f"expected {want[bad[0]].item() if bad else 0:.5g}",
                  "the loss is the mean squared error over the rows that have a target (y >= 0): a sum over "
                  "them, divided by their number")
        for (name, p), q in zip(yours.named_parameters(), reference.parameters()):
            ex.expect(torch.allclose(p.detach(), q.detach(), rtol=1e-4, atol=1e-6),
                      f"after the loop, the model's {name} differs from the given loop's"
                      + (" (it holds NaN)" if p.isnan().any() else ""),
                      "a batch whose loss is NaN must change nothing: 0 * NaN is NaN, so scale the gradients "
                      "with torch.where(ok, p.grad, 0), not with a multiplication")
        # Sync debug mode does not report every wait: torch.cuda.synchronize(), for one, passes it. So the
        # loop runs again behind a GPU kept busy for ten times its host time: a host that waited for the GPU
        # returns after that, one that never waited long before.
        again = training_model()  # made first: copying its weights to the GPU would wait for the busy GPU
        torch.cuda.synchronize()
        gpu_sleep(max(0.2, 10 * host_seconds))
        busy_until = torch.cuda.Event()
        busy_until.record()
        train_steps_no_sync(again, batches, LR)
        waited = busy_until.query()
        torch.cuda.synchronize()
        ex.expect(not waited, "the host waited for the GPU: with the GPU busy, your loop returned only after the GPU "
                              "had finished", "torch.cuda.synchronize(), and a stream's or an event's synchronize(), "
                                              "make the host wait too, even where sync debug mode stays silent")


register(Exercise(NOTEBOOK, "train_steps_no_sync", check_train_steps_no_sync, gpu=True, cpu_checks=5))


def _is_mask(index: object) -> bool:
    """A boolean tensor used as an index (alone or in a tuple): the result's size is the count of True."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, torch.Tensor) and p.dtype == torch.bool for p in parts)


class HostWaits(TorchFunctionMode):
    """On the CPU, notes every call that, on a GPU, makes the host wait for it: a tensor's value on the
    host (.item(), bool() of an `if`, .tolist(), ...), a size that depends on values (a boolean mask,
    nonzero()), and, inside cuda_on_cpu(), synchronize() of the device, a stream or an event.  Each
    note says what and where, in `fn`'s code: "<what> at line N: `code`", in order, in `waits`."""

    READS = frozenset({"__bool__", "item", "__int__", "__float__", "__index__", "tolist", "numpy", "cpu",
                       "__array__", "__format__", "__repr__", "nonzero", "argwhere", "masked_select", "unique"})
    SAID: ClassVar[dict[str, str]] = {  # how a message names a call; others are named `.name()`
        "__bool__": "bool() of a tensor (an `if`, `not`, `and`)", "__int__": "int() of a tensor",
        "__float__": "float() of a tensor", "__index__": "a tensor used as a Python int",
        "__array__": "a tensor made a NumPy array", "__format__": "a tensor formatted", "__repr__": "a tensor printed",
        "__getitem__": "a boolean mask", "__setitem__": "a boolean mask"}

    def __init__(self, fn: Callable) -> None:
        super().__init__()
        self.fn = fn
        self.waits: list[str] = []

    def note(self, what: str) -> None:
        frames = [f for f in traceback.extract_stack() if f.filename == self.fn.__code__.co_filename]
        if not frames:
            self.waits.append(f"{what} in a function it calls")
            return
        code = (frames[-1].line or "").strip()
        self.waits.append(f"{what} at line {frames[-1].lineno}" + (f": `{code}`" if code else ""))

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = getattr(func, "__name__", "")
        if name in self.READS or (name in ("__getitem__", "__setitem__") and len(args) > 1 and _is_mask(args[1])):
            self.note(self.SAID.get(name, f".{name}()"))
        return func(*args, **(kwargs or {}))

    @contextmanager
    def counting_synchronize(self) -> Iterator[None]:
        """Inside cuda_on_cpu(): torch.cuda.synchronize(), and a stream's or an event's synchronize(), noted."""
        mode = self

        class Noted(InOrder):
            def synchronize(self) -> None:
                mode.note("a stream's or an event's synchronize()")

        current = Noted()
        imitations = {"synchronize": lambda device=None: self.note("torch.cuda.synchronize()"),
                      "Stream": Noted, "Event": Noted, "current_stream": lambda device=None: current,
                      "default_stream": lambda device=None: current}
        saved = {name: getattr(torch.cuda, name) for name in imitations}
        try:
            for name, imitation in imitations.items():
                setattr(torch.cuda, name, imitation)
            yield
        finally:
            for name, original in saved.items():
                setattr(torch.cuda, name, original)


def _check_train_steps_no_sync_on_cpu(train_steps_no_sync: Callable[..., torch.Tensor]) -> None:
    """check_train_steps_no_sync on the CPU: the same losses and parameters as the given loop, and no call
    that would make the host wait on a GPU (HostWaits)."""
    with (exercise("train_steps_no_sync") as ex,
          ex.on_cpu("the losses and the parameters against the given loop's, and no call that makes the host "
                    "wait for a GPU (.item(), an `if` on a tensor, a boolean mask, nonzero(), synchronize())",
                    "sync debug mode on the GPU, and the loop run behind a busy GPU: the host must return "
                    "before the GPU is done")):
        batches = training_batches("cpu")
        reference, yours = training_model("cpu"), training_model("cpu")
        want = train_steps_sync(reference, batches)
        with cuda_on_cpu(), HostWaits(train_steps_no_sync) as host, host.counting_synchronize():
            got = train_steps_no_sync(yours, batches, LR)
        found = Findings()
        found.expect(not host.waits, f"on a GPU the host would wait for it {len(host.waits)} time(s); the first: "
                                     f"{host.waits[0] if host.waits else ''}",
                     "on a GPU, a value needed on the host (.item(), an `if` on a tensor, a boolean mask's size) "
                     "or a synchronize() makes the host wait: keep the decisions on the GPU, as tensors")
        if found.expect(isinstance(got, torch.Tensor) and got.shape == want.shape,
                        f"returned {what_returned(got, device=False)}, expected a tensor of {len(batches)} losses",
                        "return one loss per batch, as one tensor, NaN where a batch was skipped"):
            got = got.detach().cpu()
            bad = [i for i in range(len(want))
                   if not torch.allclose(got[i], want[i], rtol=1e-4, atol=1e-6, equal_nan=True)]
            found.expect(not bad, f"the losses of batches {bad} differ: {got[bad[0]].item() if bad else 0:.5g}, "
                                  f"expected {want[bad[0]].item() if bad else 0:.5g}",
                         "the loss is the mean squared error over the rows that have a target (y >= 0)")
        for (name, p), q in zip(yours.named_parameters(), reference.parameters()):
            found.expect(torch.allclose(p.detach(), q.detach(), rtol=1e-4, atol=1e-6),
                         f"after the loop, the model's {name} differs from the given loop's"
                         + (" (it holds NaN)" if p.isnan().any() else ""),
                         "a batch whose loss is NaN must change nothing, even where its gradients are NaN")
        found.report(ex)


if __name__ == "__main__":  # print a script of exercise 1, with its answer
    text, line = failing_script(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(text, f"\n# the failing lookup: line {line}")
