"""Checks for the exercises of notebook 07 (CUDA graphs): a model of the speed-up, a graphed function
with static buffers, a captured function that returns stale results, and a captured training step.

The GPU checks compare with eager PyTorch on fresh data at every call, so an answer that replays
on an old buffer, or with a number frozen at capture, returns stale values and fails every time,
not once in a while.  "No allocation per call" is read from the caching allocator's running count
of allocations (notebook 01): copying into a graph's inputs and replaying it allocates nothing,
while eager code, a clone or a new capture does.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from ..device import require_cuda
from ..timing import benchmark
from . import Exercise, exercise, register

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
# Exercise 2: a graphed function that runs on new inputs (GPU)
# ------------------------------------------------------------------------------------------
def mixing_chain(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The function the check graphs: about a hundred small kernels, two inputs, two outputs."""
    for _ in range(20):
        x = torch.tanh(x @ w) * 0.5 + x * 0.5
    return x, x.norm(dim=1)


def _mixing_inputs(seed: int, strided: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(64, 32 if strided else 16, device="cuda", generator=gen)[:, :16]  # a view, if strided
    w = torch.randn(16, 16, device="cuda", generator=gen) / 4
    return x, (w.t() if strided else w)


def check_graph_function(graph_function: Callable[..., Callable[..., object]]) -> None:
    """graph_function(fn, *examples) must return run(*inputs): fn(*inputs) computed by replaying a
    graph captured once, right on new inputs, with no allocation per call, faster than eager."""
    with exercise("graph_function") as ex:
        require_cuda("check_graph_function")
        examples = _mixing_inputs(0)
        kept = [e.clone() for e in examples]
        run = graph_function(mixing_chain, *examples)
        ex.expect(callable(run), f"graph_function returned a {type(run).__name__}, not a function",
                  "return the inner function run(*inputs)")
        for seed, strided in ((1, False), (2, True), (3, False)):
            x, w = _mixing_inputs(seed, strided)
            before = (x.clone(), w.clone())
            got: Any = run(x, w)
            want = mixing_chain(x, w)
            ex.expect(isinstance(got, (tuple, list)) and len(got) == 2,
                      f"run returned a {type(got).__name__}, not fn's two outputs", "return the graph's static outputs")
            right = all(torch.allclose(g, v, rtol=1e-4, atol=1e-5) for g, v in zip(got, want))
            ex.expect(right, f"run(x, w) on new inputs (call {seed}{', strided views' if strided else ''}) did not "
                             "return fn(x, w)",
                      "copy each new input into its captured buffer (static.copy_(new)), then replay; rebinding a "
                      "name does not change what the graph reads")
            ex.expect(torch.equal(x, before[0]) and torch.equal(w, before[1]), "run changed its inputs",
                      "copy the inputs into the graph's own buffers; do not capture on the caller's tensors")
        ex.expect(all(torch.equal(e, k) for e, k in zip(examples, kept)),
                  "run wrote into the example tensors that graph_function was given: the caller still owns them",
                  "capture on buffers of your own, made from the examples (clone), not on the examples themselves")
        x, w = _mixing_inputs(4)
        run(x, w)
        torch.cuda.synchronize()
        start = _allocations()
        for _ in range(5):
            run(x, w)
        torch.cuda.synchronize()
        allocated = _allocations() - start
        ex.expect(allocated == 0, f"5 calls of run allocated {allocated} blocks of GPU memory",
                  "capture once, outside run; in run only copy_ into the static inputs and replay, and return the "
                  "static outputs themselves (no clone, no eager fallback)")
        eager = benchmark(mixing_chain, x, w, min_time=0.1).median
        graphed = benchmark(run, x, w, min_time=0.1).median
        ex.expect(graphed < 0.6 * eager,
                  f"run took {graphed * 1e6:.0f} us per call, eager {eager * 1e6:.0f} us", "replay one graph per call")


register(Exercise(NOTEBOOK, "graph_function", check_graph_function, gpu=True))


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
    graph, right for inputs whose mean and spread differ from the example's, with no allocation."""
    with exercise("graphed_standardize") as ex:
        require_cuda("check_graphed_standardize")
        def sample(seed: int, mean: float, spread: float) -> torch.Tensor:
            return (mean + spread * torch.randn(4096, generator=torch.Generator().manual_seed(seed))).cuda()

        example = sample(7, 1.0, 2.0)
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
                             "(x - x.mean()) / x.std()", "" if right else _stale_hint(got, x, example))
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


register(Exercise(NOTEBOOK, "graphed_standardize", check_graphed_standardize, gpu=True))


# ------------------------------------------------------------------------------------------
# Exercise 4: capture a training step (GPU)
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


LR = 1e-2


def _number(loss: Any) -> float:
    """A loss as a Python float, whether it is a tensor (which may require grad) or a number."""
    return loss.detach().item() if isinstance(loss, torch.Tensor) else float(loss)


def check_graphed_training_step(
    graphed_training_step: Callable[..., Callable[[torch.Tensor, torch.Tensor], object]],
) -> None:
    """graphed_training_step(model, optimizer, loss_fn, x_example, y_example) must return step(x, y),
    which trains on (x, y) by replaying one captured step and returns the loss: the same losses as
    eager steps from the same state, and faster."""
    with exercise("graphed_training_step") as ex:
        require_cuda("check_graphed_training_step")
        model = _mlp(seed=3)
        optimizer = torch.optim.Adam(model.parameters(), lr=LR, capturable=True)
        gen = torch.Generator(device="cuda").manual_seed(11)
        data = [(torch.randn(32, 64, device="cuda", generator=gen), torch.randn(32, 8, device="cuda", generator=gen))
                for _ in range(13)]
        step = graphed_training_step(model, optimizer, F.mse_loss, *data[0])
        ex.expect(callable(step), f"graphed_training_step returned a {type(step).__name__}, not a function",
                  "return the inner function step(x, y)")
        twin = copy.deepcopy(model)  # the state the step starts from, whatever the warm-up did
        twin_optimizer = torch.optim.Adam(twin.parameters(), lr=LR, capturable=True)
        twin_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))
        optimizer_steps: list[int] = []  # optimizer.step() called by step(x, y), outside the graph
        eager_optimizer_step = optimizer.step

        def counted_step(*args: Any, **kwargs: Any) -> Any:
            optimizer_steps.append(1)
            return eager_optimizer_step(*args, **kwargs)

        optimizer.step = counted_step  # type: ignore[method-assign]  # on this optimizer object only
        got, want = [], []
        for x, y in data[1:]:
            loss = step(x, y)
            ex.expect(isinstance(loss, torch.Tensor),
                      f"step returned a {type(loss).__name__}, not a tensor",
                      "return the loss tensor that the graph writes: turning it into a number (.item(), float) "
                      "makes the host wait for the GPU on every step")
            got.append(_number(loss))
            want.append(_number(_eager_step(twin, twin_optimizer, F.mse_loss, x, y)))
        for n, (g, w) in enumerate(zip(got, want), 1):
            if n == 1:
                ex.expect(math.isclose(g, w, rel_tol=1e-4, abs_tol=1e-6),
                          f"the first step's loss was {g:.6f}, eager {w:.6f}",
                          "copy x and y into the captured inputs (copy_), then replay; a new name for the data "
                          "does not change what the graph reads")
            ex.expect(math.isclose(g, w, rel_tol=1e-4, abs_tol=1e-6),
                      f"step {n}: loss {g:.6f}, eager {w:.6f} (the first {n - 1} matched)",
                      "call optimizer.zero_grad(set_to_none=True) right before the capture: otherwise the captured "
                      "backward adds into gradients left from the warm-up, and every replay adds again")
        ex.expect(not optimizer_steps, f"step called optimizer.step() {len(optimizer_steps)} times, eagerly",
                  "the optimizer's update is part of the training step: capture it in the graph too")
        optimizer.step = eager_optimizer_step  # type: ignore[method-assign]
        x, y = data[1]
        # Timings are only ever too slow: the eager baseline is the better of two runs, and step gets three.
        eager = min(benchmark(_eager_step, twin, twin_optimizer, F.mse_loss, x, y, min_time=0.1).median
                    for _ in range(2))
        for _ in range(3):
            graphed = benchmark(step, x, y, min_time=0.1).median
            if graphed < 0.7 * eager:
                break
        ex.expect(graphed < 0.7 * eager, f"a step took {graphed * 1e6:.0f} us, an eager step {eager * 1e6:.0f} us",
                  "capture the forward, the backward and optimizer.step() in one graph, and only copy_ and "
                  "replay in step")


register(Exercise(NOTEBOOK, "graphed_training_step", check_graphed_training_step, gpu=True))
