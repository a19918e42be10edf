"""Checks for the exercises of notebook 07 (CUDA graphs): a model of the speed-up, one graph per bucket
of batch sizes, a captured function that returns stale results, and a captured training step whose
learning rate follows a schedule.

The GPU checks compare with eager PyTorch on fresh data at every call, so an answer that replays
on an old buffer, or with a number frozen at capture, returns stale values and fails every time,
not once in a while.  How many graphs an answer captures, and which one each call replays, is
counted by patching torch.cuda.CUDAGraph's capture_begin and replay for the duration of the check.
"No allocation per call" (exercise 3) is read from the caching allocator's running count of
allocations (notebook 01).  The checks of exercises 2 and 4 report every sub-check that failed.

Without a GPU, exercises 2 to 4 say what a GPU would check, and check nothing: each of them is about
what a replay reads and writes, and CUDA graphs (capturable Adam's too) exist on a GPU only.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F

from ..device import has_cuda, require_cuda
from . import Exercise, Findings, LeftForGPU, exercise, is_stub, register, what_returned

NOTEBOOK = "07_cuda_graphs"


def _allocations() -> int:
    """How many blocks the caching allocator has handed out so far, in this process."""
    return torch.cuda.memory_stats().get("allocation.all.allocated", 0)


# ------------------------------------------------------------------------------------------
# Exercise 1: predict the speed-up of a graph (CPU)
# ------------------------------------------------------------------------------------------
# (what the case shows, the arguments, eager time / graph time worked out by hand)
SPEEDUP_CASES: list[tuple[str, dict[str, float], float]] = [
    ("2000 tiny kernels, a fast host",
     {"kernels": 2000, "host_us": 9.0, "kernel_us": 1.0, "graph_floor_us": 1.25, "replay_us": 30.0}, 7.2),
    ("the same kernels, a slower host",
     {"kernels": 2000, "host_us": 20.0, "kernel_us": 1.0, "graph_floor_us": 1.25, "replay_us": 60.0}, 16.0),
    ("100 large kernels: the GPU sets the pace either way",
     {"kernels": 100, "host_us": 9.0, "kernel_us": 50.0, "graph_floor_us": 1.25, "replay_us": 20.0}, 1.0),
    ("2 tiny kernels: the replay call costs more than the launches it saves",
     {"kernels": 2, "host_us": 9.0, "kernel_us": 1.0, "graph_floor_us": 1.25, "replay_us": 25.0}, 0.72),
    ("500 medium kernels",
     {"kernels": 500, "host_us": 10.0, "kernel_us": 4.0, "graph_floor_us": 1.25, "replay_us": 15.0}, 2.5),
]


def check_predicted_speedup(predicted_speedup: Callable[..., float]) -> None:
    """predicted_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us) must return the
    eager time over the graph time of one call, with calls back to back (host and GPU overlap)."""
    with exercise("predicted_speedup") as ex:
        for what, args, want in SPEEDUP_CASES:
            got = predicted_speedup(**args)
            ex.expect(isinstance(got, (int, float)) and not isinstance(got, bool),
                      f"returned a {type(got).__name__}, not a number", "return eager time / graph time, a float")
            ex.expect(math.isclose(got, want, rel_tol=1e-6),
                      f"{what}: predicted {got:.4g}x, expected {want:g}x ({args})",
                      "eager: each kernel costs the slower of its launch (host) and its run (GPU); graph: each "
                      "kernel costs the slower of its run and the graph's floor, and the whole call costs at "
                      "least the host's replay() call; the speed-up is eager / graph")


register(Exercise(NOTEBOOK, "predicted_speedup", check_predicted_speedup))


# ------------------------------------------------------------------------------------------
# Counting the graphs an answer captures and replays
# ------------------------------------------------------------------------------------------
@dataclass
class _GraphCalls:
    captures: int = 0  # capture_begin() calls, by torch.cuda.graph or by hand
    replayed: list[int] = field(default_factory=list)  # id() of the graph of each replay(), in order


@contextmanager
def _counting_graphs() -> Iterator[_GraphCalls]:
    """Inside the block, count every torch.cuda.CUDAGraph's captures and replays (the class is patched, and
    restored at the end): torch.cuda.graph, make_graphed_callables and torch.compile all go through them."""
    calls = _GraphCalls()
    cls = torch.cuda.CUDAGraph
    own = {name: cls.__dict__.get(name) for name in ("capture_begin", "replay")}
    begin, replay = cls.capture_begin, cls.replay

    def counted_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.captures += 1
        return begin(self, *args, **kwargs)

    def counted_replay(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.replayed.append(id(self))
        return replay(self, *args, **kwargs)

    setattr(cls, "capture_begin", counted_begin)  # noqa: B010 -- setattr: mypy refuses to assign to a method
    setattr(cls, "replay", counted_replay)  # noqa: B010 -- as above
    try:
        yield calls
    finally:
        for name, original in own.items():
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)


def _call(fn: Callable[..., Any], *args: Any) -> tuple[Any, Exception | None]:
    """fn(*args) and None, or None and the error it raised (the exercise's own stub still raises)."""
    try:
        return fn(*args), None
    except Exception as error:  # a wrong answer's error is reported as a failed sub-check
        if is_stub(error):
            raise
        return None, error


def _left_for_a_gpu(name: str, needs: str) -> bool:
    """Without a GPU: say what a GPU would check (exercise() prints it) and return True."""
    if has_cuda():
        return False
    with exercise(name):
        raise LeftForGPU("", needs)
    return True


# ------------------------------------------------------------------------------------------
# Exercise 2: one graph per bucket of batch sizes (GPU)
# ------------------------------------------------------------------------------------------
BUCKETS = (8, 32, 128)
FEATURES, HIDDEN, OUTPUTS = 32, 64, 16
# Batch sizes at, below and above every bucket's edge, each bucket used several times (so that a result
# overwritten by a later call of the same bucket shows).
BATCHES = (1, 8, 5, 9, 32, 20, 33, 128, 100, 7, 31, 127, 8, 64)
# Graph and eager compute the same rows with matrix products of other heights, which cuBLAS may sum in
# another order: float32 rounding (notebook 06), or TF32's 2**-10 if a notebook switched it on. A stale or
# foreign row is off by O(1).
ROW_TOLERANCE = 1e-2


@cache
def _row_weights() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(7)
    w1 = torch.randn(FEATURES, HIDDEN, device="cuda", generator=gen) / FEATURES**0.5
    w2 = torch.randn(HIDDEN, OUTPUTS, device="cuda", generator=gen) / HIDDEN**0.5
    return w1, torch.randn(HIDDEN, device="cuda", generator=gen), w2, torch.randn(OUTPUTS, device="cuda", generator=gen)


def row_mlp(x: torch.Tensor) -> torch.Tensor:
    """The function the check graphs: a small MLP applied to each row of x on its own (row-wise)."""
    w1, b1, w2, b2 = _row_weights()
    return torch.tanh(x @ w1 + b1) @ w2 + b2


def _bucket_of(batch: int) -> int:
    return min(b for b in BUCKETS if b >= batch)


def _same_rows(got: object, want: torch.Tensor) -> bool:
    return (isinstance(got, torch.Tensor) and got.shape == want.shape and got.device == want.device
            and bool(torch.allclose(got, want, rtol=ROW_TOLERANCE, atol=ROW_TOLERANCE)))


def _bucket_problems(graph_of: dict[int, int]) -> tuple[str, str] | None:
    """(problem, hint) if the graphs replayed for the batch sizes do not follow the smallest bucket that
    holds each batch; graph_of maps each batch size to the id of the one graph its call replayed."""
    by_graph: dict[int, set[int]] = {}
    by_bucket: dict[int, set[int]] = {}
    for batch, graph in graph_of.items():
        by_graph.setdefault(graph, set()).add(batch)
        by_bucket.setdefault(_bucket_of(batch), set()).add(graph)
    for batches in by_graph.values():
        buckets = sorted({_bucket_of(b) for b in batches})
        if len(buckets) > 1:
            small, large = (min(b for b in batches if _bucket_of(b) == k) for k in buckets[:2])
            problem = (f"batches of {small} and {large} rows replayed the same graph, but the smallest buckets "
                       f"that hold them are {_bucket_of(small)} and {_bucket_of(large)}")
            return problem, ("pad each batch to the smallest bucket that holds it (a bucket of exactly the "
                             "batch's size holds it): a larger bucket computes rows that nobody reads")
    for bucket, graphs in by_bucket.items():
        if len(graphs) > 1:
            return (f"batches that all fit the bucket of {bucket} replayed {len(graphs)} different graphs",
                    "one graph per bucket: every batch that fits a bucket replays that bucket's graph")
    return None


def check_bucketed_graphs(bucketed_graphs: Callable[..., Callable[[torch.Tensor], torch.Tensor]]) -> None:
    """bucketed_graphs(fn, buckets, feature_shape) must capture one graph of fn per bucket size, up front,
    and return run(x): fn(x) for a batch x of 1 to max(buckets) rows, by replaying the graph of the
    smallest bucket that holds it, as a tensor that the next call does not overwrite; a larger batch
    raises ValueError."""
    if _left_for_a_gpu("bucketed_graphs", "one graph captured per bucket, each batch replayed on the smallest "
                                          "bucket that holds it, every result compared with eager fn, a batch "
                                          "too large refused: CUDA graphs exist on a GPU only"):
        return
    with exercise("bucketed_graphs") as ex:
        require_cuda("check_bucketed_graphs")
        _row_weights()  # made now, outside any capture of the student's
        with _counting_graphs() as built:
            run, error = _call(bucketed_graphs, row_mlp, BUCKETS, (FEATURES,))
        ex.expect(error is None, f"bucketed_graphs raised {type(error).__name__}: {error}",
                  "capture one graph per bucket, on inputs of your own of the bucket's size, before returning run")
        ex.expect(callable(run), f"bucketed_graphs returned {what_returned(run)}, not a function",
                  "return the inner function run(x)")
        found = Findings()
        found.expect(built.captures == len(BUCKETS),
                     f"bucketed_graphs captured {built.captures} graphs for the {len(BUCKETS)} buckets {BUCKETS}",
                     "capture exactly one graph per bucket size, all of them before run is returned")
        gen = torch.Generator(device="cuda").manual_seed(1)
        calls = []  # (batch, x, x as given, what run returned, a copy of it made at once, eager fn(x), replays)
        with _counting_graphs() as called:
            for batch in BATCHES:
                x = torch.randn(batch, FEATURES, device="cuda", generator=gen)
                given = x.clone()
                before = len(called.replayed)
                out, error = _call(run, x)
                replays = called.replayed[before:]
                first = out.clone() if isinstance(out, torch.Tensor) else out
                calls.append((batch, x, given, out, first, row_mlp(given), replays, error))
            too_large, too_large_error = _call(run, torch.randn(BUCKETS[-1] + 1, FEATURES, device="cuda"))
        raised = [(batch, error) for batch, *_, error in calls if error is not None]
        found.expect(not raised, f"run raised for batches of {[b for b, _ in raised]} rows"
                                 + (f" ({type(raised[0][1]).__name__}: {raised[0][1]})" if raised else ""),
                     "a graph only knows the shapes it was captured with: a batch smaller than its bucket must "
                     "fill part of the bucket's static input")
        answered = [c for c in calls if c[-1] is None]
        shaped = [c for c in answered if isinstance(c[3], torch.Tensor) and c[3].shape == (c[0], OUTPUTS)]
        misshaped = [c for c in answered if not (isinstance(c[3], torch.Tensor) and c[3].shape == (c[0], OUTPUTS))]
        found.expect(not misshaped,
                     "for a batch of b rows run must return b rows of fn(x); it returned "
                     + "".join(f"{what_returned(c[3])} for b = {c[0]}" for c in misshaped[:1]),
                     "return the batch's own rows only: the bucket's padding rows are nobody's results")
        stale = [c[0] for c in shaped if not _same_rows(c[4], c[5])]
        found.expect(not stale, f"run returned wrong rows for batches of {stale} rows",
                     "a graph reads the memory it was captured on: copy each new batch into that memory before "
                     "replaying (a new name, or a new tensor, is never seen by the graph)")
        overwritten = [c[0] for c in shaped if c[0] not in stale and not _same_rows(c[3], c[5])]
        found.expect(not overwritten,
                     f"results returned for batches of {overwritten} rows had changed by the time the later "
                     "calls were done",
                     "each replay overwrites the graph's output: what run returns must be the caller's own, "
                     "not a view of the graph's output")
        changed = [c[0] for c in calls if not torch.equal(c[1], c[2])]
        found.expect(not changed, f"run changed its input x (batches of {changed} rows)",
                     "copy the batch into the graph's own input; leave the caller's tensor alone")
        found.expect(called.captures == 0, f"the {len(BATCHES)} calls of run captured {called.captures} graphs",
                     "capture every bucket's graph once, up front: a capture per call, or per new size, costs far "
                     "more than the launches a replay saves")
        not_one = [c[0] for c in answered if len(c[6]) != 1]
        found.expect(not not_one, f"calls for batches of {not_one} rows did not replay exactly one graph",
                     "run should replay the graph of one bucket, not compute eagerly")
        graph_of = {c[0]: c[6][0] for c in answered if len(c[6]) == 1}
        wrong_bucket = _bucket_problems(graph_of)
        found.expect(wrong_bucket is None, *(wrong_bucket or ("", "")))
        found.expect(isinstance(too_large_error, ValueError),
                     f"for a batch of {BUCKETS[-1] + 1} rows (more than the largest bucket) run "
                     + (f"raised {type(too_large_error).__name__}" if too_large_error else f"returned "
                        f"{what_returned(too_large)}"),
                     "a batch larger than every bucket must raise ValueError (the prompt's contract), not fall "
                     "back to something else")
        found.report(ex)


register(Exercise(NOTEBOOK, "bucketed_graphs", check_bucketed_graphs, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 3: a captured function that returns stale results (GPU)
# ------------------------------------------------------------------------------------------
def standardized(x: torch.Tensor) -> torch.Tensor:
    """What graphed_standardize's run(x) must return."""
    return (x - x.mean()) / x.std()


def _stale_hint(got: torch.Tensor, x: torch.Tensor, example: torch.Tensor) -> str:
    """A hint about the concept behind a stale replay, told apart by what the replay returned."""
    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        return a.shape == b.shape and bool(torch.allclose(a, b, rtol=1e-4, atol=1e-4))

    if close(got, standardized(example)):
        return ("the replay computed on the example, not on x: a graph reads the memory it was captured on, "
                "whatever a name points to when it replays")
    if close(got, (x - example.mean()) / example.std()):
        return ("the replay used the example's mean and spread: a number read on the host while capturing "
                "(.item(), float()) is a constant of the graph from then on")
    return ("two things make a replay stale: the memory it reads (the one it was captured on), and numbers read "
            "on the host while capturing (constants from then on)")


def check_graphed_standardize(
    graphed_standardize: Callable[[torch.Tensor], Callable[[torch.Tensor], torch.Tensor]],
) -> None:
    """graphed_standardize(example) must return run(x) = (x - x.mean()) / x.std() by replaying one
    graph, right for inputs whose mean and spread differ from the example's, with no allocation, and
    leave the caller's example as it was."""
    if _left_for_a_gpu("graphed_standardize", "replays on inputs whose mean and spread differ from the example's, "
                                              "against eager PyTorch, the example left as it was, and the "
                                              "allocations of run: CUDA graphs exist on a GPU only"):
        return
    with exercise("graphed_standardize") as ex:
        require_cuda("check_graphed_standardize")
        def sample(seed: int, mean: float, spread: float) -> torch.Tensor:
            return (mean + spread * torch.randn(4096, generator=torch.Generator().manual_seed(seed))).cuda()

        example = sample(7, 1.0, 2.0)
        kept = example.clone()  # the caller's example, as it was: run must not write into it
        run = graphed_standardize(example)
        ex.expect(callable(run), f"graphed_standardize returned a {type(run).__name__}, not a function",
                  "return the inner function run(x)")
        for seed, (mean, spread) in enumerate(((3.0, 2.0), (-5.0, 0.1), (0.0, 10.0)), 8):
            x = sample(seed, mean, spread)
            got = run(x)
            ex.expect(isinstance(got, torch.Tensor), f"run returned a {type(got).__name__}, not a tensor",
                      "return the graph's static output")
            right = torch.allclose(got, standardized(x), rtol=1e-4, atol=1e-4)
            ex.expect(right, f"for an input of mean {mean} and spread {spread}, run did not return "
                             "(x - x.mean()) / x.std()", "" if right else _stale_hint(got, x, kept))
        ex.expect(torch.equal(example, kept), "after the calls of run, the caller's example tensor holds other values",
                  "every replay reads the buffer the graph was captured on, and each call of run writes into it: "
                  "that buffer must be your own, not a tensor the caller still holds")
        x = sample(11, 0.0, 1.0)
        run(x)
        torch.cuda.synchronize()
        start = _allocations()
        for _ in range(5):
            run(x)
        torch.cuda.synchronize()
        allocated = _allocations() - start
        ex.expect(allocated == 0, f"5 calls of run allocated {allocated} blocks of GPU memory",
                  "capture once; in run only copy_, replay, and return the static output itself")


register(Exercise(NOTEBOOK, "graphed_standardize", check_graphed_standardize, gpu=True, cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 4: a captured training step with a learning-rate schedule (GPU)
# ------------------------------------------------------------------------------------------
def _mlp(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 8)).cuda()


def _eager_step(model, optimizer, loss_fn, x, y) -> torch.Tensor:
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


LR = 1e-3  # the optimizer's learning rate when the check creates it: a Python float
# One learning rate per step: up, down, and up again, by factors of 3 to 300 (none is 0: capturable Adam
# divides by the learning rate).  A rate frozen at any one value is off by a factor of 3 or more on most steps.
SCHEDULE = (3e-3, 1e-2, 3e-2, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-2, 1e-2, 1e-3)
EPS32 = torch.finfo(torch.float32).eps


def _allowed(float32: float, float64: float, noise: float) -> float:
    """How far the graph may be from the eager float32 run: rounding, as notebook 06 measures it.

    The graph and the eager run differ by rounding only (the same kernels; a learning rate held in a tensor
    rather than a Python float).  Its size is measured here, by the eager float32 run's distance from a
    float64 run of the same steps (`noise`, the largest so far); four times that, plus a few eps.
    """
    return 4 * max(noise, abs(float32 - float64)) + 16 * EPS32 * abs(float64)


def _snapshot(model: torch.nn.Module, optimizer: torch.optim.Optimizer, dtype: torch.dtype,
              capturable: bool) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """An eager copy of the model and of the Adam optimizer's state, in `dtype`."""
    twin = copy.deepcopy(model).to(dtype)
    twin_optimizer = torch.optim.Adam(twin.parameters(), lr=LR, capturable=capturable)
    twin_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))  # casts the moments to dtype
    for group in twin_optimizer.param_groups:
        group["capturable"] = capturable  # load_state_dict took the flags of `optimizer`
    if not capturable:
        for state in twin_optimizer.state.values():
            state["step"] = state["step"].cpu()  # where plain Adam keeps it
    return twin, twin_optimizer


def check_graphed_scheduled_step(
    graphed_scheduled_step: Callable[..., Callable[[torch.Tensor, torch.Tensor, float], object]],
) -> None:
    """graphed_scheduled_step(model, optimizer, loss_fn, x_example, y_example) must return step(x, y, lr),
    which trains on (x, y) with learning rate lr by replaying one captured step (forward, backward and
    optimizer.step()), and returns the loss tensor: the same losses and parameters as eager steps with
    the same schedule of learning rates, from the same state."""
    if _left_for_a_gpu("graphed_scheduled_step",
                       f"{len(SCHEDULE)} replays of the captured step, each with a new learning rate, against eager "
                       "training from the same state (losses and parameters), and the optimizer steps taken outside "
                       "the graph: CUDA graphs and capturable Adam exist on a GPU only"):
        return
    with exercise("graphed_scheduled_step") as ex:
        require_cuda("check_graphed_scheduled_step")
        model = _mlp(seed=3)
        optimizer = torch.optim.Adam(model.parameters(), lr=LR, capturable=True)
        gen = torch.Generator(device="cuda").manual_seed(11)
        data = [(torch.randn(32, 64, device="cuda", generator=gen), torch.randn(32, 8, device="cuda", generator=gen))
                for _ in range(len(SCHEDULE) + 1)]
        with _counting_graphs() as built:
            step, error = _call(graphed_scheduled_step, model, optimizer, F.mse_loss, *data[0])
        ex.expect(error is None, f"graphed_scheduled_step raised {type(error).__name__}: {error}",
                  "warm up, then capture one training step, before returning step")
        ex.expect(callable(step), f"graphed_scheduled_step returned {what_returned(step)}, not a function",
                  "return the inner function step(x, y, lr)")
        # The state the steps start from, whatever the warm-up did: an eager float32 twin with the same
        # optimizer settings, and a float64 one (plain Adam) that measures float32's rounding.
        twin, twin_optimizer = _snapshot(model, optimizer, torch.float32, capturable=True)
        exact, exact_optimizer = _snapshot(model, optimizer, torch.float64, capturable=False)
        eager_steps: list[int] = []  # optimizer.step() called by step(x, y, lr): outside any graph
        hook = optimizer.register_step_pre_hook(lambda *args: eager_steps.append(1))
        got: list[float | None] = []
        returned: list[str] = []
        failure: Exception | None = None
        try:
            with _counting_graphs() as called:
                for (x, y), lr in zip(data[1:], SCHEDULE):
                    loss, failure = _call(step, x, y, lr)
                    if failure is not None:
                        break
                    ok = isinstance(loss, torch.Tensor) and loss.is_cuda and loss.numel() == 1
                    got.append(float(loss.detach().double().item()) if ok else None)
                    if not ok:
                        returned.append(what_returned(loss))
        finally:
            hook.remove()
        found = Findings()
        found.expect(failure is None, f"step {len(got) + 1} raised {type(failure).__name__}: {failure}",
                     "step(x, y, lr) only puts new values where the graph reads them, then replays")
        found.expect(not returned, f"step returned {returned[0] if returned else ''}, not the loss as a CUDA tensor",
                     "return the loss tensor the graph writes: a Python number (.item(), float) makes the host "
                     "wait for the GPU at every step")
        found.expect(built.captures >= 1 and len(called.replayed) == len(SCHEDULE) and called.captures == 0,
                     f"building captured {built.captures} graph(s); the {len(SCHEDULE)} steps captured "
                     f"{called.captures} and replayed {len(called.replayed)}",
                     "capture the training step once, before returning step; each step is then one replay")
        found.expect(not eager_steps, f"the {len(SCHEDULE)} steps called optimizer.step() {len(eager_steps)} times, "
                                      "outside the graph",
                     "the optimizer's update belongs in the captured step")
        noise, first_off = 0.0, None
        for n, ((x, y), lr, g) in enumerate(zip(data[1:], SCHEDULE, got), 1):
            for opt in (twin_optimizer, exact_optimizer):
                opt.param_groups[0]["lr"] = lr
            e32 = float(_eager_step(twin, twin_optimizer, F.mse_loss, x, y).item())
            e64 = float(_eager_step(exact, exact_optimizer, F.mse_loss, x.double(), y.double()).item())
            allowed = _allowed(e32, e64, noise)
            noise = max(noise, abs(e32 - e64))
            if first_off is None and g is not None and not abs(g - e32) <= allowed:
                first_off = (n, g, e32, allowed)
        n, g, e32, allowed = first_off or (0, 0.0, 0.0, 0.0)
        found.expect(first_off is None, f"step {n} (lr {SCHEDULE[n - 1]:g}): loss {g:.7g}, eager {e32:.7g} "
                                        f"(allowed: {allowed:.1e}); the first {n - 1} matched",
                     "copy each batch into the captured inputs before replaying" if n == 1 else
                     "a graph replays the exact kernels and arguments it recorded: what did it record for the "
                     "learning rate, and do the gradients start from zero at every replay?")
        worst = max(((p - q).abs().max().item() - (4 * (q - r).abs().max().item() + 16 * EPS32 * r.abs().max().item()))
                    for p, q, r in zip(model.parameters(), twin.parameters(), exact.parameters()))
        found.expect(worst <= 0, f"after {len(SCHEDULE)} steps the parameters differ from the eager run's by more "
                                 "than rounding",
                     "every step must apply its own learning rate: a graph replays the numbers it recorded")
        found.report(ex)


register(Exercise(NOTEBOOK, "graphed_scheduled_step", check_graphed_scheduled_step, gpu=True,
                  cpu_checks=0))
