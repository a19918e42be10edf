"""Wrong answers, and other right ones, to the exercises of notebook 07 (CUDA graphs), for the
tests: SPOILERS.

Exercise 1 is checked on the CPU.  The other three need a GPU; each wrong answer below gives a
wrong (stale) result, allocates at every call, or is no faster than eager, on every run.
"""

from __future__ import annotations

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


# ---------------------------------------------------------------- exercise 2: graph_function (GPU)
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


def graph_function_rebinding(fn, *examples):
    static_inputs = [e.clone() for e in examples]
    graph, outputs = _captured(fn, static_inputs)

    def run(*inputs):
        static_inputs = list(inputs)  # noqa: F841  (a new local name: the graph never sees it)
        graph.replay()
        return outputs
    return run


def graph_function_without_replay(fn, *examples):
    static_inputs = [e.clone() for e in examples]
    _graph, outputs = _captured(fn, static_inputs)

    def run(*inputs):
        for static, new in zip(static_inputs, inputs):
            static.copy_(new)
        return outputs
    return run


def graph_function_first_input_only(fn, *examples):
    static_inputs = [e.clone() for e in examples]
    graph, outputs = _captured(fn, static_inputs)

    def run(*inputs):
        static_inputs[0].copy_(inputs[0])
        graph.replay()
        return outputs
    return run


def graph_function_eager(fn, *examples):
    return lambda *inputs: fn(*inputs)


def graph_function_capturing_every_call(fn, *examples):
    static_inputs = [e.clone() for e in examples]
    _warm_up(fn, *static_inputs)

    def run(*inputs):
        for static, new in zip(static_inputs, inputs):
            static.copy_(new)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = fn(*static_inputs)
        graph.replay()
        run.graphs.append(graph)  # kept alive, as its outputs need
        return outputs
    run.graphs = []
    return run


def graph_function_returning_clones(fn, *examples):
    static_inputs = [e.clone() for e in examples]
    graph, outputs = _captured(fn, static_inputs)

    def run(*inputs):
        for static, new in zip(static_inputs, inputs):
            static.copy_(new)
        graph.replay()
        return tuple(o.clone() for o in outputs)
    return run


def graph_function_warm_up_on_current_stream(fn, *examples):
    """Right too: warming up on the current stream works as well here."""
    static_inputs = [e.clone() for e in examples]
    for _ in range(3):
        fn(*static_inputs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = fn(*static_inputs)

    def run(*inputs):
        for static, new in zip(static_inputs, inputs):
            static.copy_(new)
        graph.replay()
        return outputs
    return run


def graph_function_on_the_examples(fn, *examples):  # the caller's tensors become the graph's inputs
    graph, outputs = _captured(fn, examples)

    def run(*inputs):
        for static, new in zip(examples, inputs):
            static.copy_(new)
        graph.replay()
        return outputs
    return run


WRONG_GRAPH_FUNCTIONS = {
    "rebinds the inputs' names": graph_function_rebinding,
    "copies the inputs but forgets to replay": graph_function_without_replay,
    "copies the first input only": graph_function_first_input_only,
    "eager, no graph": graph_function_eager,
    "captures at every call": graph_function_capturing_every_call,
    "returns clones of the outputs": graph_function_returning_clones,
    "captures on the caller's example tensors": graph_function_on_the_examples,
}


# ---------------------------------------------------------------- exercise 3: graphed_standardize (GPU)
def _standardizer(stats_on_gpu: bool, copy_input: bool, clone_output: bool = False, graph: bool = True):
    """A graphed_standardize with the notebook's two bugs each fixed or not."""
    def graphed_standardize(example):
        if not graph:
            return lambda x: (x - x.mean()) / x.std()
        static_x = example.clone()
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
}


# ---------------------------------------------------------------- exercise 4: graphed_training_step (GPU)
def _training_step(zero_before_capture: bool = True, copy_data: bool = True, graph: bool = True,
                   tensor: bool = True, optimizer_in_graph: bool = True):
    """A graphed_training_step with one thing switched off."""
    def graphed_training_step(model, optimizer, loss_fn, x_example, y_example):
        if not graph:
            def eager_step(x, y):
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
            return eager_step
        static_x, static_y = x_example.clone(), y_example.clone()
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

        def step(x, y):
            if copy_data:
                static_x.copy_(x)
                static_y.copy_(y)
            g.replay()
            if not optimizer_in_graph:
                optimizer.step()
            return static_loss if tensor else static_loss.item()
        return step
    return graphed_training_step


WRONG_TRAINING_STEPS = {
    "gradients of the warm-up kept at capture": _training_step(zero_before_capture=False),
    "the data never copied in": _training_step(copy_data=False),
    "eager steps, no graph": _training_step(graph=False),
    "returns the loss as a number (.item())": _training_step(tensor=False),
    "optimizer.step() outside the graph": _training_step(optimizer_in_graph=False),
}


WRONG = {
    "check_predicted_speedup": WRONG_SPEEDUPS,
    "check_graph_function": WRONG_GRAPH_FUNCTIONS,
    "check_graphed_standardize": WRONG_STANDARDIZERS,
    "check_graphed_training_step": WRONG_TRAINING_STEPS,
}
ALSO_RIGHT = {
    "check_predicted_speedup": {"the wrong models' builder, nothing broken": _speedup(max, max)},
    "check_graph_function": {"warm-up on the current stream": graph_function_warm_up_on_current_stream},
    "check_graphed_standardize": {"the wrong answers' builder, both bugs fixed": _standardizer(True, True)},
    "check_graphed_training_step": {"the wrong answers' builder, nothing switched off": _training_step()},
}
