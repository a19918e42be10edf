"""Wrong answers, and other right ones, to the exercises of notebook 07 (CUDA graphs), for the
tests: SPOILERS.

Exercise 1 is checked on the CPU.  The other three need a GPU; each wrong answer below gives a
wrong (stale or overwritten) result, captures the wrong number of graphs, replays the wrong one, or
does not replay at all, on every run.  Without a GPU those three check nothing and say what a GPU
would check (WRONG_ON_CPU: no answer fails there).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import torch


# ---------------------------------------------------------------- exercise 1: predicted_speedup (CPU)
def _speedup(eager_per_kernel: Callable[[float, float], float], graph_call: Callable[[float, float], float],
             graph_per_kernel: Callable[[float, float, float], float] = lambda kernel, floor, host: max(kernel, floor),
             inverted: bool = False) -> Callable[..., float]:
    """A predicted_speedup built from (possibly wrong) rules."""
    def predicted_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us):
        eager = kernels * eager_per_kernel(host_us, kernel_us)
        graph = graph_call(replay_us, kernels * graph_per_kernel(kernel_us, graph_floor_us, host_us))
        return graph / eager if inverted else eager / graph
    return predicted_speedup


WRONG_SPEEDUPS = {
    "host and GPU times added, not overlapped": _speedup(lambda h, k: h + k, max),
    "eager counts the host only": _speedup(lambda h, k: h, max),
    "eager counts the GPU only": _speedup(lambda h, k: k, max),
    "no floor per kernel in a graph": _speedup(max, max, lambda kernel, floor, host: kernel),
    "the replay call ignored": _speedup(max, lambda replay, gpu: gpu),
    "the replay call added to the GPU time": _speedup(max, lambda replay, gpu: replay + gpu),
    "the graph still pays the host per kernel": _speedup(max, max,
                                                         lambda kernel, floor, host: max(kernel, floor, host)),
    "graph time over eager time": _speedup(max, max, inverted=True),
}


# ---------------------------------------------------------------- exercise 2: bucketed_graphs (GPU)
def _warm_up(fn, *args) -> None:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(*args)
    torch.cuda.current_stream().wait_stream(side)


def _captured(fn, static_inputs):
    _warm_up(fn, *static_inputs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = fn(*static_inputs)
    return graph, outputs


def _bucketed(choose=None, capture_lazily: bool = False, copy_in: bool = True, pad: bool = True,
              rows: str = "clone", share_pool: bool = False, too_large: str = "raise", zero_padding: bool = False,
              graph: bool = True):
    """A bucketed_graphs with one thing switched: how a bucket is chosen (choose(batch, sizes)), when the
    graphs are captured, whether the batch is copied in, padded, what is returned, what a batch larger
    than every bucket does."""
    def smallest(batch, sizes):
        return next((s for s in sizes if s >= batch), None)

    choose = choose or smallest

    def bucketed_graphs(fn, buckets, feature_shape):
        sizes = sorted(buckets)
        pool = torch.cuda.graph_pool_handle() if share_pool else None
        graphs = {}

        def build(size):
            static_x = torch.zeros(size, *feature_shape, device="cuda")
            _warm_up(fn, static_x)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                static_y = fn(static_x)
            graphs[size] = (g, static_x, static_y)

        if graph and not capture_lazily:
            for size in sizes:
                build(size)

        def run(x):
            batch = x.shape[0]
            size = choose(batch, sizes)
            if size is None:
                if too_large == "eager":
                    return fn(x)
                raise ValueError(f"a batch of {batch} rows is larger than the largest bucket, {sizes[-1]}")
            if not graph:
                return fn(x)
            if capture_lazily:
                build(batch)  # one graph per batch size, at call time
                size = batch
            g, static_x, static_y = graphs[size]
            if copy_in and pad:
                static_x[:batch].copy_(x)
                if zero_padding:
                    static_x[batch:].zero_()
            elif copy_in:
                static_x.copy_(x)  # no room made for a smaller batch
            g.replay()
            if rows == "view":
                return static_y[:batch]
            if rows == "all":
                return static_y.clone()
            return static_y[:batch].clone()
        return run
    return bucketed_graphs


def _bisect_bucket(batch, sizes):  # right: the same choice, by bisection
    i = bisect.bisect_left(sizes, batch)
    return sizes[i] if i < len(sizes) else None


WRONG_BUCKETED = {
    "one graph per batch size, captured at call time": _bucketed(capture_lazily=True),
    "returns a view of the graph's output": _bucketed(rows="view"),
    "always the largest bucket": _bucketed(choose=lambda batch, sizes: sizes[-1] if batch <= sizes[-1] else None),
    "no padding: copies the batch over the whole bucket": _bucketed(pad=False),
    "forgets to copy the batch in": _bucketed(copy_in=False),
    "the smallest bucket larger than the batch (off by one)":
        _bucketed(choose=lambda batch, sizes: next((s for s in sizes if s > batch), None)),
    "returns the padding rows too": _bucketed(rows="all"),
    "falls back to eager for a batch too large": _bucketed(too_large="eager"),
    "eager, no graph": _bucketed(graph=False),
}


# ---------------------------------------------------------------- exercise 3: graphed_standardize (GPU)
def _standardizer(stats_on_gpu: bool, copy_input: bool, clone_output: bool = False, graph: bool = True,
                  own_input: bool = True):
    """A graphed_standardize with the notebook's two bugs each fixed or not (own_input=False: captured on the
    caller's example itself, which every call of run then overwrites)."""
    def graphed_standardize(example):
        if not graph:
            return lambda x: (x - x.mean()) / x.std()
        static_x = example.clone() if own_input else example
        if stats_on_gpu:
            def fn(x):
                return (x - x.mean()) / x.std()
        else:
            mean, std = static_x.mean().item(), static_x.std().item()

            def fn(x):
                return (x - mean) / std
        g, static_y = _captured(fn, [static_x])

        def run(x):
            static_x.copy_(x)
            g.replay()
            return static_y.clone() if clone_output else static_y

        def run_rebinding(x):
            static_x = x  # noqa: F841  (a new local name: the graph never sees it)
            g.replay()
            return static_y
        return run if copy_input else run_rebinding
    return graphed_standardize


WRONG_STANDARDIZERS = {
    "the given code: statistics frozen and the input rebound": _standardizer(False, False),
    "only the rebinding fixed: statistics frozen at capture": _standardizer(False, True),
    "only the statistics fixed: the input rebound": _standardizer(True, False),
    "eager, no graph": _standardizer(True, True, graph=False),
    "returns a clone of the output": _standardizer(True, True, clone_output=True),
    "captured on the caller's example (run overwrites it)": _standardizer(True, True, own_input=False),
}


# ---------------------------------------------------------------- exercise 4: graphed_scheduled_step (GPU)
def _scheduled_step(lr_tensor: bool = True, zero_before_capture: bool = True, copy_data: bool = True,
                    graph: bool = True, tensor: bool = True, optimizer_in_graph: bool = True,
                    recapture: bool = False, set_lr=lambda lr_t, lr: lr_t.fill_(lr)):
    """A graphed_scheduled_step with one thing switched off (or, recapture: captured again at each new lr)."""
    def graphed_scheduled_step(model, optimizer, loss_fn, x_example, y_example):
        group = optimizer.param_groups[0]
        lr_t = torch.tensor(group["lr"], device="cuda")
        if lr_tensor:
            group["lr"] = lr_t  # the captured step reads it from GPU memory at every replay
        if not graph:
            def eager_step(x, y, lr):
                group["lr"] = lr
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
            return eager_step
        static_x, static_y = x_example.clone(), y_example.clone()

        def capture():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    optimizer.zero_grad(set_to_none=True)
                    loss_fn(model(static_x), static_y).backward()
                    optimizer.step()
            torch.cuda.current_stream().wait_stream(side)
            if zero_before_capture:
                optimizer.zero_grad(set_to_none=True)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_loss = loss_fn(model(static_x), static_y)
                static_loss.backward()
                if optimizer_in_graph:
                    optimizer.step()
            return g, static_loss

        captured = [capture()]

        def step(x, y, lr):
            if recapture:
                group["lr"] = lr
                captured[0] = capture()  # a new graph with the new number: warm-up steps and all
            elif lr_tensor:
                set_lr(lr_t, lr)
            else:
                group["lr"] = lr  # a Python number: the graph recorded the old one
            if copy_data:
                static_x.copy_(x)
                static_y.copy_(y)
            g, static_loss = captured[0]
            g.replay()
            if not optimizer_in_graph:
                optimizer.step()
            return static_loss if tensor else static_loss.item()
        return step
    return graphed_scheduled_step


WRONG_SCHEDULED_STEPS = {
    "the learning rate a Python number (frozen at capture)": _scheduled_step(lr_tensor=False),
    "a tensor learning rate, never updated": _scheduled_step(set_lr=lambda lr_t, lr: None),
    "captured again at every step": _scheduled_step(recapture=True),
    "gradients of the warm-up kept at capture": _scheduled_step(zero_before_capture=False),
    "the data never copied in": _scheduled_step(copy_data=False),
    "eager steps, no graph": _scheduled_step(graph=False),
    "returns the loss as a number (.item())": _scheduled_step(tensor=False),
    "optimizer.step() outside the graph": _scheduled_step(optimizer_in_graph=False),
}


WRONG = {
    "check_predicted_speedup": WRONG_SPEEDUPS,
    "check_bucketed_graphs": WRONG_BUCKETED,
    "check_graphed_standardize": WRONG_STANDARDIZERS,
    "check_graphed_scheduled_step": WRONG_SCHEDULED_STEPS,
}
WRONG_ON_CPU: dict[str, set[str]] = {  # CUDA graphs exist on a GPU only: no answer fails on a CPU
    "check_bucketed_graphs": set(), "check_graphed_standardize": set(), "check_graphed_scheduled_step": set()}
ALSO_RIGHT = {
    "check_predicted_speedup": {"the wrong models' builder, nothing broken": _speedup(max, max)},
    "check_bucketed_graphs": {"the wrong answers' builder, nothing switched": _bucketed(),
                              "the bucket found by bisection, padding zeroed": _bucketed(choose=_bisect_bucket,
                                                                                          zero_padding=True),
                              "the graphs share one memory pool": _bucketed(share_pool=True)},
    "check_graphed_standardize": {"the wrong answers' builder, both bugs fixed": _standardizer(True, True)},
    "check_graphed_scheduled_step": {
        "the wrong answers' builder, nothing switched off": _scheduled_step(),
        "the learning rate copied in from a tensor": _scheduled_step(set_lr=lambda lr_t, lr: lr_t.copy_(
            torch.tensor(lr))),
    },
}
