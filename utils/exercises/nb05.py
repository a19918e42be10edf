"""Checks for the exercises of notebook 05 (debugging asynchronous CUDA errors): find the failing
line of a script, fail on the host before a device-side assert, and a training loop without
hidden synchronizations.

Whatever could kill a process runs in a fresh one: the scripts of exercise 1 crash on purpose,
and exercise 2 runs your function in a child process (a device-side assert there leaves the
notebook's own CUDA context alone).  Exercise 3 runs in this process, under
`torch.cuda.set_sync_debug_mode("error")`, which raises at the first synchronizing call.
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
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..device import require_cuda
from ..processes import run_process
from ..timing import gpu_sleep
from . import STUB_MESSAGE, Exercise, exercise, register

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


register(Exercise(NOTEBOOK, "find_failing_line", check_find_failing_line))


# ------------------------------------------------------------------------------------------
# Exercise 2: fail on the host, before the launch (CPU or GPU, in a fresh process)
# ------------------------------------------------------------------------------------------
LOOKUP_ROWS = 1000
SLOWER_AT_MOST = 20  # a check of all indices at once costs about one synchronization; one per index, thousands

CHILD = r'''
import json, marshal, math, sys, time, types, warnings

import torch
import torch.nn.functional as F

code = marshal.loads(bytes.fromhex(sys.argv[1]))
rows = int(sys.argv[2])
device = "cuda" if torch.cuda.is_available() else "cpu"


class HostBlindF:
    """torch.nn.functional, except that embedding does not raise on the host for a bad index: on a GPU
    the host learns nothing at the launch, so an answer may not count on the lookup's own error."""

    def __getattr__(self, name):
        return getattr(F, name)

    @staticmethod
    def embedding(ids, weight, *args, **kwargs):
        return F.embedding(ids.clamp(0, weight.shape[0] - 1), weight, *args, **kwargs)


given_F = HostBlindF() if device == "cpu" else F
safe_lookup = types.FunctionType(code, {"torch": torch, "F": given_F, "math": math, "__builtins__": __builtins__})
torch.manual_seed(0)
weight = torch.randn(rows, 8, device=device)
report = {"device": device, "cases": []}


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def case(ids):
    entry = {"ids": ids}
    report["cases"].append(entry)
    t = torch.tensor(ids, device=device)
    try:
        out = safe_lookup(weight, t)
        sync()
    except Exception as error:
        entry["raised"], entry["message"] = type(error).__name__, str(error).splitlines()[0][:300]
        if "device-side assert" in str(error) or type(error).__name__ == "AcceleratorError":
            entry["device_assert"] = True
        return
    entry["right"] = isinstance(out, torch.Tensor) and out.shape == (len(ids), 8) and bool(
        torch.equal(out, F.embedding(t.clamp(0, rows - 1), weight)))


def reference(weight, ids):
    if ((ids < 0) | (ids >= weight.shape[0])).any():
        raise IndexError("out of range")
    return F.embedding(ids, weight)


def seconds(fn, ids, repeat=5):
    times = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        fn(weight, ids)
        sync()
        times.append(time.perf_counter() - t0)
    return sorted(times)[repeat // 2]


def run():
    for ids in json.loads(sys.argv[3]):
        case(ids)
        if report["cases"][-1].get("device_assert"):
            return
    many = torch.randint(0, rows, (4096,), device=device)
    reference(weight, many), safe_lookup(weight, many)  # warm-up
    report["yours_s"], report["reference_s"] = seconds(safe_lookup, many), seconds(reference, many)
    if device == "cuda":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                safe_lookup(weight, many)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        report["syncs"] = sum("called a synchronizing" in str(w.message) for w in caught)


try:
    run()
finally:
    print("REPORT " + json.dumps(report))
'''

# (indices, the bad index or None): valid ones first, so that a device-side assert comes last
LOOKUP_CASES: list[tuple[list[int], int | None]] = [
    ([0, 5, 17, LOOKUP_ROWS - 1], None),
    ([3, 1, 4, 1, 5, 9, 2, 6], None),
    ([7, LOOKUP_ROWS, 2], LOOKUP_ROWS),  # one past the end
    ([-1, 4, 8], -1),
    ([2, LOOKUP_ROWS + 5, 11, 12], LOOKUP_ROWS + 5),
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


def check_safe_lookup(safe_lookup: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """safe_lookup(weight, ids) must return F.embedding(ids, weight), and raise IndexError or ValueError,
    naming a bad index, before launching anything when an index is outside 0..rows-1.

    Runs in a fresh process (on the GPU if there is one): a device-side assert would make every
    later CUDA call of this notebook fail.
    """
    with exercise("safe_lookup") as ex:
        try:
            code = portable(safe_lookup)
        except ValueError as error:
            ex.expect(False, str(error), "write safe_lookup as a plain function at the top level of a cell")
        done = run_process(CHILD, code, str(LOOKUP_ROWS), json.dumps([ids for ids, _ in LOOKUP_CASES]), timeout=300)
        lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
        if not lines:
            ex.expect(False, "the fresh process that ran safe_lookup failed:\n" + "\n".join(done.traceback[-6:]),
                      "safe_lookup may use torch, F (torch.nn.functional) and math; nothing else of the notebook "
                      "reaches the fresh process")
        report = json.loads(lines[-1].removeprefix("REPORT "))
        if any(got.get("raised") == "NotImplementedError" and got.get("message") == STUB_MESSAGE
               for got in report["cases"]):
            raise NotImplementedError(STUB_MESSAGE)  # the stub, run in the fresh process: not done yet
        for (ids, bad), got in zip(LOOKUP_CASES, report["cases"]):
            if got.get("device_assert"):
                ex.expect(False, f"safe_lookup(weight, {ids}) ended in a device-side assert ({got['message'][:80]}...)",
                          "check the indices on the host before the lookup: a device-side assert, "
                          "torch._assert_async's too, kills the process's CUDA context")
            if bad is None:
                ex.expect("raised" not in got, f"safe_lookup(weight, {ids}) raised {got.get('raised')}: "
                                              f"{got.get('message')}", f"0..{LOOKUP_ROWS - 1} are all valid rows")
                ex.expect(got.get("right", False), f"safe_lookup(weight, {ids}) returned the wrong rows",
                          "return F.embedding(ids, weight), the rows of weight at ids")
                continue
            ex.expect("raised" in got, f"safe_lookup(weight, {ids}) raised nothing: index {bad} does not exist "
                                       f"in {LOOKUP_ROWS} rows", "valid rows are 0..rows-1: check both ends")
            ex.expect(got["raised"] in ("IndexError", "ValueError"),
                      f"safe_lookup(weight, {ids}) raised {got['raised']}: {got['message']}",
                      "raise IndexError (or ValueError) yourself, with a message that says which index is bad")
            ex.expect(names(bad)(got["message"]),
                      f"safe_lookup(weight, {ids}) raised {got['raised']}('{got['message']}'), which does not "
                      f"name the bad index {bad}",
                      "say which index is out of range (and how many rows there are): the error is for a person")
        slower = report["yours_s"] / report["reference_s"]
        ex.expect(slower < SLOWER_AT_MOST,
                  f"on 4096 valid indices safe_lookup took {slower:.0f} times as long as a lookup checked with one "
                  f"comparison of all indices at once", "one check of all indices, then one question to the GPU: "
                                                        "not a question per index")
        if "syncs" in report:
            ex.expect(report["syncs"] <= 3, f"on 4096 valid indices safe_lookup made the host wait for the GPU "
                                            f"{report['syncs']} times", "one synchronization is enough: ask once "
                                                                        "whether any index is bad")


register(Exercise(NOTEBOOK, "safe_lookup", check_safe_lookup))


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


register(Exercise(NOTEBOOK, "train_steps_no_sync", check_train_steps_no_sync, gpu=True))

if __name__ == "__main__":  # print a script of exercise 1, with its answer
    text, line = failing_script(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(text, f"\n# the failing lookup: line {line}")
