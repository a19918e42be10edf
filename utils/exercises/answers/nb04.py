"""Wrong answers, and other right ones, to the exercises of notebook 04 (CUDA streams in CuPy), for the tests:
SPOILERS.

Exercises 1 to 3 need a GPU: their checks call each answer from every kind of caller and keep the other streams
late on purpose, so every answer below that queues work on the wrong stream, or forgets a wait, fails there,
every time.  Without a GPU and CuPy they check nothing and say what a GPU would check (WRONG_ON_CPU: no answer
fails there).  Exercise 4 is checked on the CPU (against CuPy's rules) and on a GPU (against CuPy itself).
"""

from __future__ import annotations

import collections
import contextlib
import warnings
from typing import Any

import numpy as np
import torch


def _cp():
    import cupy

    return cupy


def _cupy_stream_of(torch_stream):
    cp = _cp()
    if hasattr(cp.cuda.Stream, "from_external") and hasattr(torch_stream, "__cuda_stream__"):
        return cp.cuda.Stream.from_external(torch_stream)
    return cp.cuda.ExternalStream(torch_stream.cuda_stream)


# ---------------------------------------------------------------- exercise 1: sum_on_stream (GPU)
def on_s(x, ready, s, *, fork=True, join=True, restore=True, join_on=None, fork_on=None):
    """The solution's way, with a switch for each of its parts: s waits for `ready` (fork), the sum is queued on
    s inside `with s:`, the caller's stream waits for it (join), and the caller's stream is made current again."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    if fork:
        (fork_on or s).wait_event(ready)
    with s:
        total = x.sum()
        done = s.record()
    if restore:
        caller.use()
    if join:
        (join_on or caller).wait_event(done)
    return total


def tutorial_use(x, ready, s):  # the tutorial's s.use(): s stays current
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.use()
    total = x.sum()
    caller.wait_event(s.record())
    return total


def back_to_null(x, ready, s):  # use(), then "go back to the default stream": not back for a caller elsewhere
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.use()
    total = x.sum()
    done = s.record()
    cp.cuda.Stream.null.use()
    caller.wait_event(done)
    return total


def enters_s_by_hand(x, ready, s):  # s.__enter__() without its __exit__: the caller's stream is current, the stack not
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.__enter__()
    total = x.sum()
    done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


def on_the_callers_stream(x, ready, s):  # right values, but the sum is the caller's stream's work, not s's
    cp = _cp()
    cp.cuda.get_current_stream().wait_event(ready)
    return x.sum()


def on_the_null_stream(x, ready, s):  # the "default stream" instead of s, joined back correctly
    cp = _cp()
    caller, null = cp.cuda.get_current_stream(), cp.cuda.Stream.null
    null.wait_event(ready)
    with null:
        total = x.sum()
        done = null.record()
    caller.use()
    caller.wait_event(done)
    return total


def on_a_stream_of_its_own(x, ready, s):  # a new stream instead of s, ordered both ways
    cp = _cp()
    caller, own = cp.cuda.get_current_stream(), cp.cuda.Stream(non_blocking=True)
    own.wait_event(ready)
    with own:
        total = x.sum()
        done = own.record()
    caller.use()
    caller.wait_event(done)
    return total


def summed_on_the_host(x, ready, s):  # waits for the producer, sums on the host, copies the number back on s
    cp = _cp()
    ready.synchronize()
    value = cp.asnumpy(x).sum()
    caller = cp.cuda.get_current_stream()
    with s:
        total = cp.asarray(value)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


def host_value(x, ready, s):  # a float: the host waited for the GPU
    return float(on_s(x, ready, s))


def host_synchronized(x, ready, s):  # right values, but the host waits for s
    total = on_s(x, ready, s)
    s.synchronize()
    return total


def join_the_wrong_way(x, ready, s):  # s waits for the caller, instead of the caller for s
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.wait_event(caller.record())
    with s:
        total = x.sum()
    caller.use()
    return total


def s_synchronized_first(x, ready, s):  # the host waits for s's earlier work, then all on the GPU
    s.synchronize()
    return on_s(x, ready, s)


def join_recorded_before_the_sum(x, ready, s):  # the event marks s before the sum: the caller waits for too little
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    done = s.record()
    with s:
        total = x.sum()
    caller.use()
    caller.wait_event(done)
    return total


def event_recorded_on_s_before_entering_it(x, ready, s):
    """The fourth adversary's: s waits for `ready`, an event is recorded on s, and only then is s entered for the
    sum; the caller waits for that event, which marks s before the sum.  On an H200 it passed: the sum, queued right
    behind the event, ran a few microseconds before the caller's read (late_at_each_entry now makes s late at the
    entry, so the sum runs W/4 after the event)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    ev = s.record()
    with s:
        y = x.sum()
    caller.use()
    caller.wait_event(ev)
    return y


def fork_after_the_sum(x, ready, s):  # s waits for `ready` only after the sum is queued
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    with s:
        total = x.sum()
    s.wait_event(ready)
    done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


def _summed_as(x, ready, s, *, dtype=None, cast=None, back=None):  # the solution, in another dtype
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        total = (x.astype(cast) if cast else x).sum(dtype=dtype)
        if back:
            total = total.astype(back)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


_ONE_OUTPUT: dict = {}


def into_one_output(x, ready, s):  # "no allocation per call": every call writes the same array, which it returns
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        out = _ONE_OUTPUT.setdefault("out", cp.empty((), dtype=cp.float64))
        cp.sum(x, out=out)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return out


_IN_TURN: dict = {}


def into_two_outputs_in_turn(x, ready, s):  # "double buffering" of the result: the third call writes the first's
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        outputs = _IN_TURN.setdefault("outputs", [cp.empty((), dtype=cp.float64) for _ in range(2)])
        _IN_TURN["calls"] = _IN_TURN.get("calls", 0) + 1
        out = outputs[_IN_TURN["calls"] % 2]
        cp.sum(x, out=out)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return out


_PER_INPUT: dict = {}


def into_one_output_per_input(x, ready, s):  # an output per input array: a data loader's next batch in the same x
    cp = _cp()                                # writes the result the caller kept
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        out = _PER_INPUT.setdefault((x.data.ptr, x.shape), cp.empty((), dtype=cp.float64))
        cp.sum(x, out=out)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return out


def s_waits_for_the_caller_too(x, ready, s):  # "to be safe": the sum on s also waits for the caller's earlier work
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(caller.record())
    return on_s(x, ready, s)


def output_on_the_callers_stream(x, ready, s):  # "the caller's result": memory of the caller's stream, written on s
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    total = cp.empty((), dtype=x.dtype)  # from the caller's stream's pool: its earlier work may still use it
    s.wait_event(ready)
    with s:
        cp.sum(x, out=total)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


WRONG_SUMS = {
    "the tutorial's s.use(): s stays current": tutorial_use,
    "use(), then Stream.null.use()": back_to_null,
    "`with s:` alone: a use() caller ends on the stack's top": lambda x, r, s: on_s(x, r, s, restore=False),
    "s entered by hand and never left": enters_s_by_hand,
    "no fork: the sum does not wait for `ready`": lambda x, r, s: on_s(x, r, s, fork=False),
    "the fork on the caller's stream instead of s": lambda x, r, s: on_s(x, r, s, fork_on=_cp().cuda.
                                                                         get_current_stream()),
    "no join": lambda x, r, s: on_s(x, r, s, join=False),
    "the join on the null stream instead of the caller's": lambda x, r, s: on_s(x, r, s,
                                                                                join_on=_cp().cuda.Stream.null),
    "s waits for the caller instead": join_the_wrong_way,
    "on the caller's stream after waiting for `ready`": on_the_callers_stream,
    "on the null stream": on_the_null_stream,
    "on a stream of its own": on_a_stream_of_its_own,
    "summed on the host, copied back on s": summed_on_the_host,
    "returns a float": host_value,
    "the host waits for s": host_synchronized,
    "s synchronized first (the host waits for s's earlier work)": s_synchronized_first,
    "the join recorded before the sum": join_recorded_before_the_sum,
    "an event recorded on s, then s entered for the sum (the fourth adversary's)":
        event_recorded_on_s_before_entering_it,
    "the fork after the sum": fork_after_the_sum,
    "a sum over the first axis only": lambda x, r, s: _sum_axis0(x, r, s),
    "sums in float32": lambda x, r, s: _summed_as(x, r, s, dtype="float32"),
    "x cast to int64 first": lambda x, r, s: _summed_as(x, r, s, cast="int64"),
    "accumulated in float32, returned as float64": lambda x, r, s: _summed_as(x, r, s, dtype="float32",
                                                                             back="float64"),
    "x cast to int64, the sum returned as float64": lambda x, r, s: _summed_as(x, r, s, cast="int64",
                                                                              back="float64"),
    "one output array kept for every call": into_one_output,
    "two output arrays, used in turn": into_two_outputs_in_turn,
    "one output array per input array": into_one_output_per_input,
    "s also waits for the caller's earlier work": s_waits_for_the_caller_too,
    "the output allocated on the caller's stream, written on s": output_on_the_callers_stream,
}


def _sum_axis0(x, ready, s):  # right for 1-D arrays only
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        total = x.sum(axis=0) if x.ndim else x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


def use_and_restore(x, ready, s):  # right: use() with the caller's stream restored by hand
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.use()
    try:
        total = x.sum()
        done = s.record()
    finally:
        caller.use()
    caller.wait_event(done)
    return total


def events_made_first(x, ready, s):  # right: an Event made beforehand and recorded on s, cupy.sum, a float64 sum
    cp = _cp()
    caller, done = cp.cuda.get_current_stream(), cp.cuda.Event(disable_timing=True)
    s.wait_event(ready)
    with s:
        total = cp.sum(x, dtype=cp.float64)
    done.record(s)
    caller.use()
    caller.wait_event(done)
    return total


ALSO_RIGHT_SUMS = {
    "use() with the caller's stream restored": use_and_restore,
    "`with s:`, then the caller's stream made current again": on_s,
    "an Event made first, cupy.sum with a dtype": events_made_first,
    "a one-element array (reshape(1))": lambda x, r, s: on_s(x, r, s).reshape(1),
    "keepdims=True (a one-element array of x's rank)": lambda x, r, s: _keepdims(x, r, s),
}


def _keepdims(x, ready, s):
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        total = x.sum(keepdims=True)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


# ---------------------------------------------------------------- exercise 2: cupy_scale_on_current_stream (GPU)
@contextlib.contextmanager
def _callers_stream():
    """CuPy on PyTorch's current stream for the block, and CuPy's current stream current again afterwards."""
    cp = _cp()
    before = cp.cuda.get_current_stream()
    try:
        with _cupy_stream_of(torch.cuda.current_stream()) as stream:
            yield stream
    finally:
        before.use()


def scale_on_the_callers_stream(t, factor):  # the solution's way, both exports inside the block
    cp = _cp()
    with _callers_stream():
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


def with_alone(t, factor):  # the old solution: the block ends on CuPy's stack's top, not on a use() caller's stream
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


def on_cupys_current_stream(t, factor):  # DLPack's handshakes order it, but behind everything on CuPy's stream
    cp = _cp()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


def returned_outside_the_block(t, factor):  # the way back handshakes with CuPy's current stream
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        y = cp.from_dlpack(t) * factor
    return torch.from_dlpack(y)


def asarray_on_cupys_current_stream(t, factor):  # __cuda_array_interface__ v2 from PyTorch: no stream, no order
    cp = _cp()
    return torch.from_dlpack(cp.asarray(t) * factor)


def on_the_default_stream(t, factor):  # PyTorch's default stream made current: the caller's stream is left out
    cp = _cp()
    with torch.cuda.stream(torch.cuda.default_stream()):
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


def default_stream_wrapped(t, factor):  # CuPy on PyTorch's default stream rather than the current one
    cp = _cp()
    with _cupy_stream_of(torch.cuda.default_stream()):
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


def on_a_cupy_stream_of_its_own(t, factor):  # a new CuPy stream, ordered both ways with the caller's
    cp = _cp()
    caller, own = _cupy_stream_of(torch.cuda.current_stream()), cp.cuda.Stream(non_blocking=True)
    with caller:
        x = cp.from_dlpack(t)
        own.wait_event(caller.record())
    with own:
        y = x * factor
        done = own.record()
    with caller:
        caller.wait_event(done)
        return torch.from_dlpack(y)


def use_without_restoring(t, factor):  # right values, but CuPy's current stream is left changed
    cp = _cp()
    _cupy_stream_of(torch.cuda.current_stream()).use()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


def restored_to_null(t, factor):  # use(), then Stream.null.use(): not back for a CuPy caller elsewhere
    cp = _cp()
    _cupy_stream_of(torch.cuda.current_stream()).use()
    out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    cp.cuda.Stream.null.use()
    return out


def device_synchronize_first(t, factor):  # right values, but the host waits for the whole GPU
    cp = _cp()
    torch.cuda.synchronize()
    with _cupy_stream_of(torch.cuda.current_stream()):
        return torch.from_dlpack(cp.asarray(t) * factor)


def stream_synchronize_at_the_end(t, factor):  # right values, but the host waits for the caller's stream
    cp = _cp()
    stream = _cupy_stream_of(torch.cuda.current_stream())
    with stream:
        y = cp.from_dlpack(t) * factor
        stream.synchronize()
        return torch.from_dlpack(y)


def through_the_host(t, factor):  # .cpu() waits for the producer, and the data crosses the bus twice
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        y = cp.asarray(t.cpu().numpy()) * factor
        return torch.from_dlpack(y)


def in_pytorch(t, factor):  # right values on the right stream, but PyTorch computes them
    return t * factor


def pytorch_then_cupy(t, factor):  # PyTorch computes, CuPy only carries the result
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        return torch.from_dlpack(cp.from_dlpack(t.mul(factor)))


def returns_cupy(t, factor):  # a CuPy array, not a tensor
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        return cp.from_dlpack(t) * factor


def in_place(t, factor):  # scales the caller's input and returns it
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        x = cp.from_dlpack(t)
        x *= factor
    return t


class _Interface:  # an object that has nothing but the interface's dictionary
    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


def not_owning_the_result(t, factor):  # a tensor over CuPy's memory that does not keep it alive
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        y = cp.from_dlpack(t) * factor
        interface = {k: v for k, v in y.__cuda_array_interface__.items() if k != "stream"}
        return torch.as_tensor(_Interface(interface), device="cuda")  # y is freed when the function returns


def mul_with_out(t, factor):  # PyTorch computes into its own output
    out = torch.empty_like(t)
    torch.mul(t, factor, out=out)
    return out


def in_float64(t, factor):  # the factor applied in float64: the result is twice as wide as t
    cp = _cp()
    with _callers_stream():
        return torch.from_dlpack(cp.from_dlpack(t).astype(cp.float64) * factor)


def t_itself_for_factor_one(t, factor):  # "scaling by 1 changes nothing"
    return t if factor == 1.0 else scale_on_the_callers_stream(t, factor)


_OUTPUTS: dict = {}


def into_one_output_per_shape(t, factor):  # "no allocation per call": one output per shape, written by every call
    cp = _cp()
    out = _OUTPUTS.setdefault(tuple(t.shape), torch.empty(t.shape, device="cuda"))
    with _callers_stream():
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    return out


_IN_TURN_PER_SHAPE: dict = {}


def two_outputs_per_shape_in_turn(t, factor):  # "double buffering": two outputs per shape, written in turn
    cp = _cp()
    outputs = _IN_TURN_PER_SHAPE.setdefault(tuple(t.shape), [torch.empty(t.shape, device="cuda") for _ in range(2)])
    _IN_TURN_PER_SHAPE["calls"] = _IN_TURN_PER_SHAPE.get("calls", 0) + 1
    out = outputs[_IN_TURN_PER_SHAPE["calls"] % 2]
    with _callers_stream():
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    return out


_PER_INPUT_TENSOR: dict = {}


def one_output_per_input(t, factor):  # an output per input tensor: the caller's next values in the same t write it
    cp = _cp()
    out = _PER_INPUT_TENSOR.setdefault((t.data_ptr(), tuple(t.shape), t.stride()), torch.empty(t.shape, device="cuda"))
    with _callers_stream():
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    return out


def strides_ignored(t, factor):  # t's pointer wrapped as a C-contiguous array: a transposed view is read out of order
    cp = _cp()
    memory = cp.cuda.UnownedMemory(t.data_ptr(), t.numel() * t.element_size(), t)
    x = cp.ndarray(tuple(t.shape), dtype=cp.float32, memptr=cp.cuda.MemoryPointer(memory, 0))
    with _callers_stream():
        return torch.from_dlpack(x * factor)


def enters_the_callers_stream_by_hand(t, factor):  # __enter__() without __exit__: CuPy's current stream restored,
    cp = _cp()                                     # its stack of `with` blocks not
    before = cp.cuda.get_current_stream()
    _cupy_stream_of(torch.cuda.current_stream()).__enter__()
    try:
        return torch.from_dlpack(cp.from_dlpack(t) * factor)
    finally:
        before.use()


def output_on_cupys_current_stream(t, factor):  # the output from CuPy's current stream's pool, written on the caller's
    cp = _cp()
    x = cp.from_dlpack(t)
    out = cp.empty(x.shape, dtype=cp.float32)  # CuPy's current stream's memory: work queued there may still use it
    with _callers_stream():
        cp.multiply(x, factor, out=out)
        return torch.from_dlpack(out)


WRONG_SCALES = {
    "`with` alone: a CuPy caller's use() stream is not current afterwards": with_alone,
    "on CuPy's current stream (ordered by DLPack, behind that stream's work)": on_cupys_current_stream,
    "torch.from_dlpack after leaving the caller's stream": returned_outside_the_block,
    "cupy.asarray on CuPy's current stream (no ordering)": asarray_on_cupys_current_stream,
    "PyTorch's default stream made current": on_the_default_stream,
    "PyTorch's default stream wrapped, not the current one": default_stream_wrapped,
    "on a CuPy stream of its own, ordered both ways": on_a_cupy_stream_of_its_own,
    "use() without restoring CuPy's stream": use_without_restoring,
    "use(), then Stream.null.use()": restored_to_null,
    "torch.cuda.synchronize() first": device_synchronize_first,
    "the stream synchronized at the end": stream_synchronize_at_the_end,
    "through the host (.cpu())": through_the_host,
    "PyTorch alone": in_pytorch,
    "PyTorch computes, CuPy carries": pytorch_then_cupy,
    "torch.mul with out=": mul_with_out,
    "returns a CuPy array": returns_cupy,
    "scales the input in place": in_place,
    "a tensor that does not own CuPy's result": not_owning_the_result,
    "computed in float64": in_float64,
    "t itself when the factor is 1": t_itself_for_factor_one,
    "one output per shape, kept for every call": into_one_output_per_shape,
    "two outputs per shape, used in turn": two_outputs_per_shape_in_turn,
    "one output per input tensor": one_output_per_input,
    "t's memory wrapped as a contiguous array (strides ignored)": strides_ignored,
    "the caller's stream entered and never left": enters_the_callers_stream_by_hand,
    "the output allocated on CuPy's current stream, written on the caller's": output_on_cupys_current_stream,
}


def asarray_on_the_callers_stream(t, factor):  # right: on the producer's own stream, no handshake is needed
    cp = _cp()
    with _callers_stream():
        return torch.from_dlpack(cp.asarray(t) * factor)


def output_made_by_pytorch(t, factor):  # right: PyTorch allocates the result on its stream, CuPy writes it there
    cp = _cp()
    out = torch.empty_like(t)
    with _callers_stream():
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    return out


def external_stream_by_handle(t, factor):  # right: the older API, a stream wrapped from its handle
    cp = _cp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # deprecated in CuPy 14, still there
        stream, before = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream), cp.cuda.get_current_stream()
    with stream:
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    before.use()
    return out


def use_and_restore_cupy(t, factor):  # right: use(), and CuPy's current stream made current again
    cp = _cp()
    before = cp.cuda.get_current_stream()
    _cupy_stream_of(torch.cuda.current_stream()).use()
    try:
        return torch.from_dlpack(cp.from_dlpack(t) * factor)
    finally:
        before.use()


_SCALE_KERNEL = None


def elementwise_kernel(t, factor):  # right: a CuPy kernel of its own
    global _SCALE_KERNEL
    cp = _cp()
    if _SCALE_KERNEL is None:
        _SCALE_KERNEL = cp.ElementwiseKernel("float32 x, float32 f", "float32 y", "y = x * f", "scale_by")
    with _callers_stream():
        return torch.from_dlpack(_SCALE_KERNEL(cp.from_dlpack(t), cp.float32(factor)))


def scales_a_clone_in_place(t, factor):  # right: PyTorch copies t, CuPy scales the copy in place
    cp = _cp()
    out = t.clone()
    with _callers_stream():
        cp.from_dlpack(out).__imul__(factor)
    return out


ALSO_RIGHT_SCALES = {
    "the caller's stream, as in the solution": scale_on_the_callers_stream,
    "cupy.asarray on the caller's stream": asarray_on_the_callers_stream,
    "the output allocated by PyTorch": output_made_by_pytorch,
    "ExternalStream from the handle": external_stream_by_handle,
    "use(), with CuPy's stream restored": use_and_restore_cupy,
    "an ElementwiseKernel of its own": elementwise_kernel,
    "CuPy scales a PyTorch clone in place": scales_a_clone_in_place,
    "views made by PyTorch on the way in and out (unsqueeze, squeeze)": lambda t, f: scale_on_the_callers_stream(
        t.unsqueeze(0), f).squeeze(0),
}


# ---------------------------------------------------------------- exercise 3: pipelined (GPU)
def pipeline(chunks, compute, copy_stream, *, wait=True, fork=True, current=None):
    """The solution, with a switch for each of its two orderings, and for the stream it takes as current."""
    cp = _cp()
    current = current or cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    if fork:
        copy_stream.wait_event(current.record())
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        copied.append(copy_stream.record())
    results = []
    for d, event in zip(buffers, copied):
        if wait:
            current.wait_event(event)
        results.append(compute(d))
    return results


def allocate_on_copy_stream(chunks, compute, copy_stream, *, keep=False, fence=False):
    """A new array per chunk, made on copy_stream (cp.asarray inside a switch to copy_stream, by use()).

    keep=False: each chunk's array is freed as soon as the loop moves on, while its compute may still
    be queued: the next allocation on copy_stream gets the same memory.  keep=True keeps them to the
    end; fence=True also makes copy_stream wait for the computes before they are freed.
    """
    cp = _cp()
    current = cp.cuda.get_current_stream()

    def load(h):
        copy_stream.use()
        try:
            return cp.asarray(h), copy_stream.record()
        finally:
            current.use()

    if not chunks:
        return []
    copy_stream.wait_event(current.record())
    kept, results, upcoming = [], [], load(chunks[0])
    for i in range(len(chunks)):
        x, copied = upcoming
        if keep:
            kept.append(x)
        if i + 1 < len(chunks):
            upcoming = load(chunks[i + 1])
        current.wait_event(copied)
        results.append(compute(x))
    if fence:
        copy_stream.wait_event(current.record())
    return results


def all_on_current(chunks, compute, copy_stream):  # right values, no overlap
    cp = _cp()
    return [compute(cp.asarray(h)) for h in chunks]


def fork_every_chunk(chunks, compute, copy_stream):  # right values, but each copy waits for the last compute
    cp = _cp()
    current = cp.cuda.get_current_stream()
    results = []
    for h in chunks:
        d = cp.empty(h.shape, h.dtype)
        copy_stream.wait_event(current.record())
        d.set(h, stream=copy_stream)
        current.wait_event(copy_stream.record())
        results.append(compute(d))
    return results


def compute_on_copy_stream(chunks, compute, copy_stream):  # right values, but compute runs on copy_stream
    cp = _cp()
    current = cp.cuda.get_current_stream()
    results = []
    with copy_stream:
        for h in chunks:
            results.append(compute(cp.asarray(h)))
    current.use()
    current.wait_event(copy_stream.record())
    return results


def computes_on_the_null_stream(chunks, compute, copy_stream):  # assumes the null stream is the current one
    cp = _cp()
    null = cp.cuda.Stream.null
    with null:
        results = pipeline(chunks, compute, copy_stream, current=null)
    return results


def copies_in_with_blocks(chunks, compute, copy_stream):  # `with copy_stream:` per chunk: a use() caller ends on null
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    results = []
    for h, d in zip(chunks, buffers):
        with copy_stream:
            d.set(h)
            copied = copy_stream.record()
        cp.cuda.get_current_stream().wait_event(copied)
        results.append(compute(d))
    return results


def copies_on_a_stream_of_its_own(chunks, compute, copy_stream):  # a new stream instead of copy_stream
    return pipeline(chunks, compute, _cp().cuda.Stream(non_blocking=True))


def two_buffers(chunks, compute, copy_stream):
    """Right: two buffers reused in turn, an event for 'copied' and one for 'consumed' per buffer."""
    cp = _cp()
    if not chunks:
        return []
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(chunks[0].shape, chunks[0].dtype) for _ in range(2)]
    copied, consumed = [cp.cuda.Event() for _ in range(2)], [None, None]
    copy_stream.wait_event(current.record())

    def load(i):
        k = i % 2
        if consumed[k] is not None:
            copy_stream.wait_event(consumed[k])
        buffers[k].set(chunks[i], stream=copy_stream)
        copy_stream.record(copied[k])

    results = []
    load(0)
    for i in range(len(chunks)):
        k = i % 2
        if i + 1 < len(chunks):
            load(i + 1)
        current.wait_event(copied[k])
        results.append(compute(buffers[k]))
        consumed[k] = current.record()
    return results


def host_waits_for_each_copy(chunks, compute, copy_stream):  # right values, but the host waits
    cp = _cp()
    current = cp.cuda.get_current_stream()
    copy_stream.wait_event(current.record())
    results = []
    for h in chunks:
        d = cp.empty(h.shape, h.dtype)
        d.set(h, stream=copy_stream)
        copy_stream.synchronize()
        results.append(compute(d))
    return results


def device_synchronize_at_the_end(chunks, compute, copy_stream):  # right values and overlap, but the host waits
    results = pipeline(chunks, compute, copy_stream)
    _cp().cuda.Device().synchronize()
    return results


def last_chunk_missing(chunks, compute, copy_stream):
    return pipeline(chunks[:-1], compute, copy_stream)


def waits_for_the_previous_copy(chunks, compute, copy_stream):  # compute i waits for copy i - 1 (off by one)
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        copied.append(copy_stream.record())
    results = []
    for i, d in enumerate(buffers):
        if i:
            current.wait_event(copied[i - 1])
        results.append(compute(d))
    return results


def current_synchronized_first(chunks, compute, copy_stream):  # the host waits for the caller's earlier work
    _cp().cuda.get_current_stream().synchronize()
    return pipeline(chunks, compute, copy_stream)


_KEPT_FOR_THE_NEXT_CALL: list = []


def kept_until_the_next_call(chunks, compute, copy_stream):
    """Arrays made on copy_stream (no fork needed: the current stream's earlier work never reads them), kept in a
    global list until the next call frees them, unfenced: the next call's copies overwrite them while this call's
    computes may still read them."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
    _KEPT_FOR_THE_NEXT_CALL.clear()
    copy_stream.use()
    try:
        loaded = [(cp.asarray(h), copy_stream.record()) for h in chunks]
    finally:
        current.use()
    _KEPT_FOR_THE_NEXT_CALL.extend(x for x, _ in loaded)
    results = []
    for x, copied in loaded:
        current.wait_event(copied)
        results.append(compute(x))
    return results


_CACHED_BUFFERS: dict = {}


def buffers_kept_for_the_next_call(chunks, compute, copy_stream):
    """Device buffers made once per shape and kept for every later call, copy_stream forked from the current
    stream: right for one caller, but a later caller on another stream overwrites them while the earlier caller's
    computes still read them."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
    if not chunks:
        return []
    buffers = _CACHED_BUFFERS.setdefault((len(chunks), chunks[0].shape),
                                         [cp.empty(h.shape, h.dtype) for h in chunks])
    copy_stream.wait_event(current.record())
    results = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        current.wait_event(copy_stream.record())
        results.append(compute(d))
    return results


def computes_in_float64(chunks, compute, copy_stream):  # each chunk widened to float64 before compute: not the chunk
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    results = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        current.wait_event(copy_stream.record())
        results.append(compute(d.astype(cp.float64)))
    return results


def copy_stream_entered_by_hand(chunks, compute, copy_stream):  # __enter__() without __exit__, the caller made
    cp = _cp()                                                  # current again by use(): the stack keeps copy_stream
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    copy_stream.__enter__()
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h)
        copied.append(copy_stream.record())
    current.use()
    results = []
    for d, event in zip(buffers, copied):
        current.wait_event(event)
        results.append(compute(d))
    return results


WRONG_PIPELINES = {
    "no wait for the copy": lambda c, f, s: pipeline(c, f, s, wait=False),
    "no fork: copies overwrite memory the current stream still reads": lambda c, f, s: pipeline(c, f, s, fork=False),
    "the null stream taken as the current one": lambda c, f, s: pipeline(c, f, s, current=_cp().cuda.Stream.null),
    "computes on the null stream": computes_on_the_null_stream,
    "copies in `with copy_stream:` blocks: a use() caller ends on the stack's top": copies_in_with_blocks,
    "arrays made on copy_stream, freed while computes read them": allocate_on_copy_stream,
    "arrays made on copy_stream, kept, but freed unfenced": lambda c, f, s: allocate_on_copy_stream(c, f, s, keep=True),
    "everything on the current stream": all_on_current,
    "copies on a stream of its own": copies_on_a_stream_of_its_own,
    "copy_stream waits for every compute": fork_every_chunk,
    "compute on copy_stream": compute_on_copy_stream,
    "last chunk missing": last_chunk_missing,
    "compute i waits for copy i - 1": waits_for_the_previous_copy,
    "the current stream synchronized first": current_synchronized_first,
    "the host waits for each copy": host_waits_for_each_copy,
    "the device synchronized at the end": device_synchronize_at_the_end,
    "arrays made on copy_stream, kept in a global until the next call": kept_until_the_next_call,
    "copy_stream entered and never left": copy_stream_entered_by_hand,
    "device buffers kept for every later call": buffers_kept_for_the_next_call,
    "each chunk widened to float64 before compute": computes_in_float64,
}


def copies_in_one_with_block(chunks, compute, copy_stream):  # right: one `with` block, the caller's stream back after
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    with copy_stream:
        copied = []
        for h, d in zip(chunks, buffers):
            d.set(h)
            copied.append(copy_stream.record())
    current.use()
    results = []
    for d, event in zip(buffers, copied):
        current.wait_event(event)
        results.append(compute(d))
    return results


ALSO_RIGHT_PIPELINES = {
    "the wrong pipelines' builder, nothing broken": pipeline,
    "arrays made on copy_stream, kept and fenced": lambda c, f, s: allocate_on_copy_stream(c, f, s, keep=True,
                                                                                          fence=True),
    "two buffers and events": two_buffers,
    "copies in one `with copy_stream:` block, the caller's stream made current again": copies_in_one_with_block,
}



# ---------------------------------------------------------------- exercise 4: as_meant (CPU, and GPU)
def rewrite(program, *, cupy_ends="top", meant_ends="entry", put="before the kernel", when="needed", nested=True,
            names="meant", stack_size=None):
    """A rewriting of the program with use() lines added, right by default; each switch is a misreading.

    cupy_ends: what the answer thinks CuPy makes current at a block's end: "top" (the enclosing block's stream:
    right), "null" (always the null stream), "inner" (the stream current at the block's end), "entry" (the stream
    current at its start, PyTorch's rule).  meant_ends: what the author meant there: "entry" (right), "inner".
    put: where the use() goes: "before the kernel" (right), "after the block" (right too: nothing runs between),
    "before the block" (wrong), "inside the block" (its last line: wrong).  when: "needed" (right), "after every
    block", "kernel next" (after a block whose next statement is a kernel, whatever CuPy's stream).  nested: False
    leaves the bodies of `with` blocks unchanged.  names: the stream a use() names: "meant" (right), "block" (the
    block's own).  stack_size: CuPy's stack kept in a deque of that many entries (None: the recursion's own).
    """
    stack = collections.deque(["null"], maxlen=stack_size) if stack_size else None

    def needs(body, i, on, meant):
        """Whether a kernel after statement i runs, before the next change, on another stream than meant."""
        if when == "after every block":
            return True
        if when == "kernel next":
            return i + 1 < len(body) and body[i + 1][0] == "kernel"
        for statement in body[i + 1:]:
            if statement[0] == "kernel":
                return on != meant
            return False
        return False

    def run(body, meant, top, depth):
        out, on = [], meant
        for i, statement in enumerate(body):
            if statement[0] == "kernel" and on != meant and put == "before the kernel" and when == "needed":
                out.append(("use", meant))
                on = meant
            if statement[0] == "use":
                meant = on = statement[1]
                out.append(statement)
            elif statement[0] != "with":
                out.append(statement)
            else:
                entry, stream = meant, statement[1]
                if stack is not None:
                    stack.append(stream)
                inner, inner_end, inner_meant = run(statement[2], stream, stream, depth + 1)
                if stack is not None:
                    if stack:
                        stack.pop()
                    top_now = stack[-1] if stack else "null"
                else:
                    top_now = top
                on = {"top": top_now, "null": "null", "inner": inner_end, "entry": entry}[cupy_ends]
                meant = entry if meant_ends == "entry" else inner_meant
                name = meant if names == "meant" else stream
                fix = (put != "before the kernel" or when != "needed") and needs(body, i, on, meant)
                if fix and put == "before the block":
                    out.append(("use", name))
                if fix and put == "inside the block":
                    inner = (*inner, ("use", name))
                out.append(("with", stream, inner))
                if fix and put in ("after the block", "before the kernel"):
                    out.append(("use", name))
                    on = name
        return tuple(out), on, meant

    return run(program, "null", "null", 0)[0] if nested else _top_level_only(program)


def _top_level_only(program):  # the bodies of `with` blocks left as they are
    out, on, meant = [], "null", "null"
    for statement in program:
        if statement[0] == "kernel" and on != meant:
            out.append(("use", meant))
            on = meant
        if statement[0] == "use":
            meant = on = statement[1]
        if statement[0] == "with":
            on = "null"
        out.append(statement)
    return tuple(out)


def which_stream(program):  # the exercise as it once was: the stream of each kernel, by CuPy's rules
    stack, current, streams = ["null"], ["null"], {}

    def run(body):
        for statement in body:
            if statement[0] == "kernel":
                streams[statement[1]] = current[0]
            elif statement[0] == "use":
                current[0] = statement[1]
            else:
                stack.append(statement[1])
                current[0] = statement[1]
                run(statement[2])
                stack.pop()
                current[0] = stack[-1]

    run(program)
    return streams


def kernels_renamed(program):  # right uses, but the kernels numbered again from k0
    count = [0]

    def rename(body):
        out = []
        for statement in body:
            if statement[0] == "kernel":
                out.append(("kernel", f"k{count[0]}"))
                count[0] += 1
            elif statement[0] == "with":
                out.append(("with", statement[1], rename(statement[2])))
            else:
                out.append(statement)
        return tuple(out)

    return rename(rewrite(program))


def every_use_dropped_then_added(program):  # the author's own use() lines replaced by the ones that are needed
    def strip(body):
        return tuple(("with", s[1], strip(s[2])) if s[0] == "with" else s for s in body if s[0] != "use")

    return rewrite(strip(program))


WRONG_AS_MEANT = {
    "the program unchanged": lambda p: p,
    "a use() after every `with` block": lambda p: rewrite(p, put="after the block", when="after every block"),
    "a use() after every block that a kernel follows, whatever CuPy's stream":
        lambda p: rewrite(p, put="after the block", when="kernel next"),
    "CuPy's `with` taken to end on the null stream": lambda p: rewrite(p, cupy_ends="null"),
    "CuPy's `with` taken to end on the stream current at its end": lambda p: rewrite(p, cupy_ends="inner"),
    "CuPy's `with` taken to restore the stream current at its start": lambda p: rewrite(p, cupy_ends="entry"),
    "the author's meaning taken as the stream current at the block's end": lambda p: rewrite(p, meant_ends="inner"),
    "the use() before the block": lambda p: rewrite(p, put="before the block"),
    "the use() as the block's last line": lambda p: rewrite(p, put="inside the block"),
    "the use() names the block's own stream": lambda p: rewrite(p, put="after the block", names="block"),
    "nested bodies left as they are": lambda p: rewrite(p, nested=False),
    "CuPy's stack in a deque of four entries": lambda p: rewrite(p, put="after the block", stack_size=4),
    "CuPy's stack in a deque of eleven entries": lambda p: rewrite(p, put="after the block", stack_size=11),
    "the streams of the kernels (the exercise as it once was)": which_stream,
    "the kernels named again": kernels_renamed,
    "the author's use() lines dropped": every_use_dropped_then_added,
}


def after_the_block(program):  # right: the use() right after the block's end, where a kernel comes before a change
    return rewrite(program, put="after the block")


def as_lists(program):  # right: lists instead of tuples
    def listed(body):
        return [["with", s[1], listed(s[2])] if s[0] == "with" else list(s) for s in body]

    return listed(rewrite(program))


def explicit_stack(program):  # right: CuPy's stack kept in a list of its own, unbounded
    return rewrite(program, put="after the block", stack_size=10**6)


ALSO_RIGHT_AS_MEANT = {
    "the use() right after the block": after_the_block,
    "lists instead of tuples": as_lists,
    "CuPy's stack kept in a list": explicit_stack,
}


# ================================================================ the tenth round's adversary (2026-11-29)
# Its answers, kept as written (names and dicts its own; merged into WRONG and ALSO_RIGHT below).  The answers of
# exercises 1 to 3 were written without a GPU; their verdicts come from the GPU run of tests/test_exercises.py.
# Exercise 4's three that passed while a block's end was always followed by a kernel (`as_meant_when_anything_follows`,
# `as_meant_when_kernel_later`, `as_meant_dirty_until_kernel`) fail since small_programs() and programs() let a use(),
# a `with` or nothing come between an end and the next kernel.

# ======================================================================================================
# Exercise 1: sum_on_stream(x, ready, s)
# ======================================================================================================
def sum_right_with_then_use(x, ready, s):
    """Reference-like right answer: s waits for ready, sum inside `with s:`, event after the sum, caller waits."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum()  # allocated from s's pool, written on s
        done = s.record()
    caller.use()  # `with` ended on the stack's top: a use() caller is not on it
    caller.wait_event(done)
    return y


# ---- wrong ----------------------------------------------------------------------------------------
def sum_no_ready(x, ready, s):
    """forgets the producer's event (reads NaN)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    with s:
        y = x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_ready_on_caller(x, ready, s):
    """the wait for `ready` put on the caller's stream instead of s."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    caller.wait_event(ready)
    with s:
        y = x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_event_before_entry(x, ready, s):
    """the 'done' event recorded on s before the sum is queued (one line too early)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    done = s.record()
    with s:
        y = x.sum()
    caller.use()
    caller.wait_event(done)
    return y


def sum_caller_never_waits(x, ready, s):
    """the caller's stream never waits for the sum (wait missing in one direction)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum()
    caller.use()
    return y


def sum_waits_for_ready_only(x, ready, s):
    """the caller waits for `ready` instead of for the sum."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum()
    caller.use()
    caller.wait_event(ready)
    return y


def sum_s_waits_for_caller(x, ready, s):
    """s also waits for the caller's stream (the worker runs behind its caller)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.wait_event(caller.record())
    with s:
        y = x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_on_caller_stream(x, ready, s):
    """the work done on the caller's stream, not on s."""
    cp = _cp()
    cp.cuda.get_current_stream().wait_event(ready)
    return x.sum()


def sum_on_null_stream(x, ready, s):
    """the work done on the null stream ("the default")."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    null = cp.cuda.Stream.null
    null.wait_event(ready)
    with null:
        y = x.sum()
        done = null.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_own_stream(x, ready, s):
    """the work done on a fresh stream of its own (\"s is busy, take another\")."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    own = cp.cuda.Stream(non_blocking=True)
    own.wait_event(ready)
    with own:
        y = x.sum()
        done = own.record()
    caller.use()
    caller.wait_event(done)
    return y


_SUM_KERNEL = None


def _sum_kernel():
    global _SUM_KERNEL
    if _SUM_KERNEL is None:
        cp = _cp()
        _SUM_KERNEL = cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "adv04_sum")
    return _SUM_KERNEL


_OWN: list = []


def sum_own_stream_by_argument(x, ready, s):
    """the work done on a stream of its own, created once and passed as stream= (never entered), the output taken
    from s's pool: work on another stream than s, which the task forbids."""
    cp = _cp()
    if not _OWN:
        _OWN.append(cp.cuda.Stream(non_blocking=True))
    own = _OWN[0]
    caller = cp.cuda.get_current_stream()
    s.use()
    out = cp.empty((), dtype=x.dtype)  # s's pool: nobody else's earlier work
    caller.use()
    own.wait_event(ready)
    _sum_kernel()(x, out=out, stream=own)
    caller.wait_event(own.record())
    return out


def sum_kernel_stream_arg_caller_pool(x, ready, s):
    """launched on s with stream=s, but the output from the caller's pool (memory the caller's earlier work may
    still write)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    y = _sum_kernel()(x, stream=s)  # y: allocated on the caller's current stream's pool
    caller.wait_event(s.record())
    return y


def sum_out_from_caller_pool(x, ready, s):
    """output buffer allocated on the caller's stream, written on s."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    out = cp.empty((), dtype=x.dtype)
    s.wait_event(ready)
    with s:
        cp.sum(x, out=out)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return out


_ONE_OUT: dict = {}


def sum_one_output_reused(x, ready, s):
    """one output buffer for every call (a stale buffer the next call writes again)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        if x.dtype not in _ONE_OUT:
            _ONE_OUT[x.dtype] = cp.empty((), dtype=x.dtype)
        cp.sum(x, out=_ONE_OUT[x.dtype])
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return _ONE_OUT[x.dtype]


def sum_copy_on_caller_temp_freed(x, ready, s):
    """sum on s into a temporary, then copied on the caller's stream; the temporary freed at once (back to s's
    pool while the caller's copy may still have to read it)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        tmp = x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return tmp.copy()


def sum_with_no_restore(x, ready, s):
    """`with s:` only: ends on the stack's top, not on a caller that used use()."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum()
        done = s.record()
    caller.wait_event(done)
    return y


def sum_restores_null(x, ready, s):
    """s.use(), then Stream.null.use() at the end (\"back to the default\")."""
    cp = _cp()
    s.wait_event(ready)
    s.use()
    y = x.sum()
    done = s.record()
    cp.cuda.Stream.null.use()
    cp.cuda.get_current_stream().wait_event(done)
    return y


def sum_enter_without_exit(x, ready, s):
    """s.__enter__() without __exit__, then caller.use(): CuPy's stack keeps s."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.__enter__()
    y = x.sum()
    done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_float32(x, ready, s):
    """sums in float32 (a narrower dtype: rounds)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum(dtype=cp.float32)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_axis0(x, ready, s):
    """x.sum(axis=0): right only for the 1-D examples.  Not among the wrong answers: it raises NumPy's AxisError on a
    0-d x, which the check shows as the answer's own error (the H200, 2026-11-29); "a sum over the first axis only"
    is the same mistake without the error."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum(axis=0)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_synchronize(x, ready, s):
    """ready.synchronize() on the host before the sum."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    ready.synchronize()
    with s:
        y = x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return y


def sum_returns_float(x, ready, s):
    """returns float(...) (the host waits)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.sum()
    caller.use()
    return float(y)


def sum_record_inside_before_sum(x, ready, s):
    """inside `with s:`, the 'done' event recorded one line before the sum (the caller reads too early:
    late_at_each_entry spins s after each event recorded on it, so the sum runs a quarter window after `done`)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    with s:
        s.wait_event(ready)
        done = s.record()
        y = x.sum()
    caller.use()
    caller.wait_event(done)
    return y


# ---- also right -----------------------------------------------------------------------------------
def sum_use_try_finally(x, ready, s):
    """s.use() and caller.use() in try/finally (no `with` at all); the event waited inside."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.use()
    try:
        s.wait_event(ready)
        y = cp.sum(x)
        done = s.record()
    finally:
        caller.use()
    caller.wait_event(done)
    return y


_DONE: list = []


def sum_reused_event(x, ready, s):
    """one Event object, created once and recorded again at each call (wait_event takes its latest record)."""
    cp = _cp()
    if not _DONE:
        _DONE.append(cp.cuda.Event(disable_timing=True))
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = x.ravel().sum()
    _DONE[0].record(s)
    caller.use()
    caller.wait_event(_DONE[0])
    return y


def sum_kernel_stream_arg_s_pool(x, ready, s):
    """a ReductionKernel launched with stream=s, its output allocated while s is current (s's pool)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    s.use()
    try:
        out = cp.empty((), dtype=x.dtype)
    finally:
        caller.use()
    _sum_kernel()(x, out=out, stream=s)
    caller.wait_event(s.record())
    return out


def sum_stream_wait_event_on_current(x, ready, s):
    """reads the caller's stream after the block (`get_current_stream` again after use())."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        y = cp.add.reduce(x.ravel()) if hasattr(cp.add, "reduce") else x.sum()
    done = s.record()  # after the sum on s, recorded from outside the block
    caller.use()
    cp.cuda.get_current_stream().wait_event(done)
    return y


# ======================================================================================================
# Exercise 2: cupy_scale_on_current_stream(t, factor)
# ======================================================================================================
def _adv_cupy_stream_of(cp, torch_stream):
    if hasattr(cp.cuda.Stream, "from_external") and hasattr(torch_stream, "__cuda_stream__"):
        return cp.cuda.Stream.from_external(torch_stream)
    return cp.cuda.ExternalStream(torch_stream.cuda_stream)


def scale_right_dlpack(t, factor):
    """Reference-like: CuPy's current stream made PyTorch's with use(), DLPack both ways, use() back."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        y = cp.from_dlpack(t) * factor
        out = torch.from_dlpack(y)
    finally:
        before.use()
    return out


# ---- wrong ----------------------------------------------------------------------------------------
def scale_on_cupy_current(t, factor):
    """no stream switch: CuPy works on its own current stream (DLPack orders it, but behind that stream)."""
    cp = _cp()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


def scale_on_default_stream(t, factor):
    """PyTorch's default stream (CuPy's null stream) instead of the current one."""
    cp = _cp()
    before = cp.cuda.get_current_stream()
    cp.cuda.Stream.null.use()
    try:
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    finally:
        before.use()
    return out


def scale_with_block(t, factor):
    """`with stream:` around the work: ends on CuPy's stack top, not on a CuPy stream made current by use()."""
    cp = _cp()
    with _adv_cupy_stream_of(cp, torch.cuda.current_stream()):
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    return out


def scale_hand_back_outside(t, factor):
    """the kernel on the caller's stream, but the hand-back to PyTorch after CuPy's stream went back (the
    hand-back ties the caller to CuPy's other current stream)."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        y = cp.from_dlpack(t) * factor
    finally:
        before.use()
    return torch.from_dlpack(y)


def scale_out_from_cupy_pool(t, factor):
    """the output allocated on CuPy's (other) current stream's pool, written on the caller's stream."""
    cp = _cp()
    out = cp.empty(tuple(t.shape), dtype=cp.float32)  # CuPy's current stream's pool
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        cp.multiply(cp.from_dlpack(t), factor, out=out)
        result = torch.from_dlpack(out)
    finally:
        before.use()
    return result


def scale_in_place(t, factor):
    """scales t in place and returns it."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        x = cp.from_dlpack(t)
        x *= factor
    finally:
        before.use()
    return t


def scale_pytorch_computes(t, factor):
    """PyTorch computes, CuPy only copies."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        out = torch.from_dlpack(cp.from_dlpack(t * factor).copy())
    finally:
        before.use()
    return out


def scale_factor_one_clone(t, factor):
    """factor 1.0 short-cut: t.clone() (PyTorch's copy, not CuPy's kernel; right since the text lets PyTorch copy:
    a copy of t is 1.0 * t, exactly)."""
    if factor == 1.0:
        return t.clone()
    return scale_right_dlpack(t, factor)


def scale_factor_zero_zeros(t, factor):
    """factor 0.0 short-cut: torch.zeros_like(t) (+0.0 where factor * t is -0.0 or NaN; no CuPy): wrong, the check
    compares the signs of zeros."""
    if factor == 0.0:
        return torch.zeros_like(t)
    return scale_right_dlpack(t, factor)


def scale_through_host(t, factor):
    """a trip through host memory."""
    cp = _cp()
    y = cp.asarray(t.detach().cpu().numpy()) * factor
    return torch.as_tensor(cp.asnumpy(y)).cuda()


def scale_synchronize(t, factor):
    """torch.cuda.synchronize() first (\"to be safe\"), then CuPy on its own stream."""
    cp = _cp()
    torch.cuda.synchronize()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


_SCALE_OUT: dict = {}


def scale_cached_output(t, factor):
    """one output per shape, kept from call to call (stale buffer)."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        key = tuple(t.shape)
        if key not in _SCALE_OUT:
            _SCALE_OUT[key] = cp.empty(key, dtype=cp.float32)
        cp.multiply(cp.from_dlpack(t), factor, out=_SCALE_OUT[key])
        out = torch.from_dlpack(_SCALE_OUT[key])
    finally:
        before.use()
    return out


def scale_float64(t, factor):
    """computes in float64 (numpy-style promotion by a float64 factor) and returns float64."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        y = cp.from_dlpack(t).astype(cp.float64) * cp.float64(factor)
        out = torch.from_dlpack(y)
    finally:
        before.use()
    return out


def scale_own_stream(t, factor):
    """a CuPy stream of its own that waits for PyTorch's current stream; the caller waits for it."""
    cp = _cp()
    torch_stream = torch.cuda.current_stream()
    own = cp.cuda.Stream(non_blocking=True)
    own.wait_event(_adv_cupy_stream_of(cp, torch_stream).record())
    before = cp.cuda.get_current_stream()
    own.use()
    try:
        y = cp.from_dlpack(t) * factor
        done = own.record()
    finally:
        before.use()
    _adv_cupy_stream_of(cp, torch_stream).wait_event(done)
    return torch.as_tensor(y, device=t.device)


def scale_sets_torch_default(t, factor):
    """right kernel on PyTorch's current stream, then torch.cuda.set_stream(default) at the end."""
    out = scale_right_dlpack(t, factor)
    torch.cuda.set_stream(torch.cuda.default_stream())
    return out


def scale_raw_pointer(t, factor):
    """a CuPy array made from t.data_ptr() and t's shape (a transposed view's elements are not in that order)."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        memory = cp.cuda.UnownedMemory(t.data_ptr(), t.numel() * t.element_size(), t)
        x = cp.ndarray(tuple(t.shape), dtype=cp.float32, memptr=cp.cuda.MemoryPointer(memory, 0))
        out = torch.from_dlpack(x * factor)
    finally:
        before.use()
    return out


def scale_no_cupy_restore(t, factor):
    """CuPy's current stream made PyTorch's with use(), and left so."""
    cp = _cp()
    _adv_cupy_stream_of(cp, torch.cuda.current_stream()).use()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


_SCALE_OWN: list = []


def scale_own_stream_by_argument(t, factor):
    """an ElementwiseKernel on a CuPy stream of its own (created once, passed as stream=, never entered), ordered
    with events both ways; the output from PyTorch on the caller's stream.  Not "queued on PyTorch's current
    stream" as the task says, though every value and wait is right."""
    cp = _cp()
    if not _SCALE_OWN:
        _SCALE_OWN.append(cp.cuda.Stream(non_blocking=True))
    own = _SCALE_OWN[0]
    caller = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    kernel = cp.ElementwiseKernel("float32 x, float32 f", "float32 y", "y = x * f", "adv04_scale")
    out = torch.empty(tuple(t.shape), dtype=torch.float32, device=t.device)
    own.wait_event(caller.record())
    kernel(cp.asarray(t), np.float32(factor), cp.asarray(out), stream=own)
    caller.wait_event(own.record())
    return out


# ---- also right -----------------------------------------------------------------------------------
def scale_cai_with_restore(t, factor):
    """__cuda_array_interface__ both ways (cp.asarray, torch.as_tensor), `with` + use() of the old stream."""
    cp = _cp()
    before = cp.cuda.get_current_stream()
    with _adv_cupy_stream_of(cp, torch.cuda.current_stream()):
        y = cp.asarray(t) * factor
        out = torch.as_tensor(y, device=t.device)
    before.use()
    return out


def scale_torch_allocates(t, factor):
    """the output allocated by PyTorch (empty_like, on the caller's stream), written by cp.multiply(out=)."""
    cp = _cp()
    out = torch.empty_like(t, memory_format=torch.contiguous_format)
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    finally:
        before.use()
    return out


def scale_elementwise_kernel(t, factor):
    """an ElementwiseKernel of its own, launched with stream= the caller's (CuPy's current stream never touched);
    the output allocated by PyTorch on the caller's stream."""
    cp = _cp()
    kernel = cp.ElementwiseKernel("float32 x, float32 f", "float32 y", "y = x * f", "adv04_scale")
    out = torch.empty(tuple(t.shape), dtype=torch.float32, device=t.device)
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    kernel(cp.asarray(t), np.float32(factor), cp.asarray(out), stream=stream)
    return out


def scale_utils_dlpack(t, factor):
    """torch.utils.dlpack: a legacy capsule in (to_dlpack, which CuPy's from_dlpack still takes), from_dlpack out."""
    from torch.utils import dlpack as torch_dlpack

    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        x = cp.from_dlpack(torch_dlpack.to_dlpack(t))  # a capsule: no handshake, same stream anyway
        out = torch_dlpack.from_dlpack(x * factor)
    finally:
        before.use()
    return out


def scale_cai_in_dlpack_out(t, factor):
    """cp.asarray(t) (the CUDA array interface, no handshake) under use(), torch.from_dlpack back, use() back."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        y = cp.multiply(cp.asarray(t), cp.float32(factor))
        out = torch.from_dlpack(y)
    finally:
        before.use()
    return out


def scale_contiguous_first(t, factor):
    """t.contiguous() first (a PyTorch copy, on the caller's stream), then CuPy."""
    cp = _cp()
    stream = _adv_cupy_stream_of(cp, torch.cuda.current_stream())
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        out = torch.from_dlpack(cp.from_dlpack(t.contiguous()) * factor)
    finally:
        before.use()
    return out


def scale_external_stream(t, factor):
    """cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream) (deprecated in CuPy 14: a warning)."""
    cp = _cp()
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    finally:
        before.use()
    return out


# ======================================================================================================
# Exercise 3: pipelined(chunks, compute, copy_stream)
# ======================================================================================================
def pipe_right(chunks, compute, copy_stream):
    """Buffers from the caller's pool; copy_stream waits for the caller once; an event per chunk."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())  # our buffers may reuse memory the caller's earlier work still reads
    buffers, copied = [], []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        buffers.append(g)
        copied.append(copy_stream.record())
    results = []
    for g, event in zip(buffers, copied):
        caller.wait_event(event)
        results.append(compute(g))
    return results


# ---- wrong ----------------------------------------------------------------------------------------
def pipe_no_fork(chunks, compute, copy_stream):
    """copy_stream never waits for the caller (memory the caller's earlier work still reads is overwritten)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    buffers, copied = [], []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        buffers.append(g)
        copied.append(copy_stream.record())
    results = []
    for g, event in zip(buffers, copied):
        caller.wait_event(event)
        results.append(compute(g))
    return results


def pipe_no_join(chunks, compute, copy_stream):
    """computes never wait for their copies."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    buffers = []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        buffers.append(g)
    return [compute(g) for g in buffers]


def pipe_first_event_only(chunks, compute, copy_stream):
    """waits for the first copy's event only (work skipped after the first step)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    buffers, copied = [], []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        buffers.append(g)
        copied.append(copy_stream.record())
    if copied:
        caller.wait_event(copied[0])
    return [compute(g) for g in buffers]


def pipe_last_event_only(chunks, compute, copy_stream):
    """one wait for the last copy, before every compute: right values, no overlap."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    buffers = []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        buffers.append(g)
    caller.wait_event(copy_stream.record())
    return [compute(g) for g in buffers]


def pipe_fork_each_chunk(chunks, compute, copy_stream):
    """copy_stream waits for the caller before each copy: copy i+1 waits for compute i (serial)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    results = []
    for h in chunks:
        copy_stream.wait_event(caller.record())
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        caller.wait_event(copy_stream.record())
        results.append(compute(g))
    return results


def pipe_copies_on_current(chunks, compute, copy_stream):
    """copies on the current stream (copy_stream unused): right values, no overlap."""
    cp = _cp()
    return [compute(cp.asarray(h)) for h in chunks]


def pipe_alloc_on_copy_stream(chunks, compute, copy_stream):
    """buffers allocated inside `with copy_stream:` and dropped at return (CuPy has no record_stream)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    buffers, copied = [], []
    with copy_stream:
        for h in chunks:
            buffers.append(cp.asarray(h))
            copied.append(copy_stream.record())
    caller.use()
    results = []
    for g, event in zip(buffers, copied):
        caller.wait_event(event)
        results.append(compute(g))
    return results


def pipe_double_buffer_no_free_event(chunks, compute, copy_stream):
    """two buffers in turn (notebook 03's prefetching), without waiting for the compute that read a buffer."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    if not chunks:
        return []
    copy_stream.wait_event(caller.record())
    buffers = [cp.empty(chunks[0].shape, dtype=chunks[0].dtype) for _ in range(2)]
    results = []
    for i, h in enumerate(chunks):
        g = buffers[i % 2]
        g.set(h, stream=copy_stream)
        caller.wait_event(copy_stream.record())
        results.append(compute(g))
    return results


_KEPT: dict = {}


def pipe_buffers_kept(chunks, compute, copy_stream):
    """buffers kept from call to call (allocated once, written again by the next call's copies)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    results = []
    for i, h in enumerate(chunks):
        key = (i, h.shape, h.dtype.str)
        if key not in _KEPT:
            _KEPT[key] = cp.empty(h.shape, dtype=h.dtype)
        g = _KEPT[key]
        g.set(h, stream=copy_stream)
        caller.wait_event(copy_stream.record())
        results.append(compute(g))
    return results


def pipe_with_no_restore(chunks, compute, copy_stream):
    """`with copy_stream:` for the copies, compute after the block: for a use() caller, on the stack's top."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    buffers = [cp.empty(h.shape, dtype=h.dtype) for h in chunks]
    copied = []
    with copy_stream:
        for g, h in zip(buffers, chunks):
            g.set(h)
            copied.append(copy_stream.record())
    results = []
    for g, event in zip(buffers, copied):
        cp.cuda.get_current_stream().wait_event(event)
        results.append(compute(g))
    return results


def pipe_synchronize(chunks, compute, copy_stream):
    """copy_stream.synchronize() after the copies (the host waits)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    buffers = []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=copy_stream)
        buffers.append(g)
    copy_stream.synchronize()
    return [compute(g) for g in buffers]


def pipe_float64(chunks, compute, copy_stream):
    """copies into float64 buffers (a dtype change)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    results = []
    for h in chunks:
        with copy_stream:
            g = cp.asarray(h, dtype=cp.float64)
            done = copy_stream.record()
        caller.use()
        caller.wait_event(done)
        results.append(compute(g))
    return results


def pipe_empty_returns_none(chunks, compute, copy_stream):
    """returns None for no chunks (only the examples' non-empty lists handled)."""
    if not chunks:
        return None
    return pipe_right(chunks, compute, copy_stream)


def pipe_compute_on_copy_stream(chunks, compute, copy_stream):
    """everything on copy_stream (compute called inside `with copy_stream:`), the caller joins at the end."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    with copy_stream:
        results = [compute(cp.asarray(h)) for h in chunks]
        done = copy_stream.record()
    caller.use()
    caller.wait_event(done)
    return results


def pipe_event_before_copy(chunks, compute, copy_stream):
    """each chunk's event recorded on copy_stream one line before its copy (off by one)."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    buffers, copied = [], []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        copied.append(copy_stream.record())
        g.set(h, stream=copy_stream)
        buffers.append(g)
    results = []
    for g, event in zip(buffers, copied):
        caller.wait_event(event)
        results.append(compute(g))
    return results


def pipe_own_copy_stream(chunks, compute, copy_stream):
    """the copies on a stream of its own (\"copy_stream may be busy\"), ordered right with events."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    own = cp.cuda.Stream(non_blocking=True)
    own.wait_event(caller.record())
    buffers, copied = [], []
    for h in chunks:
        g = cp.empty(h.shape, dtype=h.dtype)
        g.set(h, stream=own)
        buffers.append(g)
        copied.append(own.record())
    results = []
    for g, event in zip(buffers, copied):
        caller.wait_event(event)
        results.append(compute(g))
    return results


# ---- also right -----------------------------------------------------------------------------------
def pipe_copy_stream_pool_then_join_back(chunks, compute, copy_stream):
    """buffers allocated on copy_stream's pool (use()), and before returning copy_stream waits for the computes
    (the lecture's 'what must your function do before it returns')."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    buffers, copied = [], []
    copy_stream.use()
    try:
        for h in chunks:
            g = cp.empty(h.shape, dtype=h.dtype)
            g.set(h)
            buffers.append(g)
            copied.append(copy_stream.record())
    finally:
        caller.use()
    results = []
    for g, event in zip(buffers, copied):
        caller.wait_event(event)
        results.append(compute(g))
    copy_stream.wait_event(caller.record())  # nothing copy_stream does later may touch our buffers before this
    return results


def pipe_double_buffer_with_events(chunks, compute, copy_stream):
    """two buffers in turn, each copy waiting for the compute that last read its buffer."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    if not chunks:
        return []
    copy_stream.wait_event(caller.record())
    buffers = [cp.empty(chunks[0].shape, dtype=chunks[0].dtype) for _ in range(2)]
    read = [None, None]
    results = []
    for i, h in enumerate(chunks):
        k = i % 2
        if read[k] is not None:
            copy_stream.wait_event(read[k])
        buffers[k].set(h, stream=copy_stream)
        caller.wait_event(copy_stream.record())
        results.append(compute(buffers[k]))
        read[k] = caller.record()
    return results


def pipe_one_big_buffer(chunks, compute, copy_stream):
    """one buffer for all chunks (caller's pool), copies by MemoryPointer.copy_from_host_async, views computed."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    if not chunks:
        return []
    big = cp.empty((len(chunks),) + chunks[0].shape, dtype=chunks[0].dtype)
    copy_stream.wait_event(caller.record())
    copied = []
    for i, h in enumerate(chunks):
        big[i].data.copy_from_host_async(h.ctypes.data, h.nbytes, copy_stream)
        copied.append(copy_stream.record())
    results = []
    for i, event in enumerate(copied):
        caller.wait_event(event)
        results.append(compute(big[i]))
    return results


def pipe_interleaved_use(chunks, compute, copy_stream):
    """Wrong, though the course listed it as right until round 23: copies queued one ahead of the computes, switching
    with use() (copy i+1 queued before compute i).  Each chunk's GPU buffer comes from copy_stream's pool, and is
    dropped once its compute is queued on the caller's stream: the pool hands that memory to a later upload on
    copy_stream, which waits for no compute until the call ends, while the compute may still read it.  The H200
    FAILed it (2026-11-29) once round 23's check ran a call of 1024 chunks, where the pool comes round."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())

    def upload(h):
        copy_stream.use()
        try:
            g = cp.empty(h.shape, dtype=h.dtype)  # copy_stream's pool...
            g.set(h)
            return g, copy_stream.record()
        finally:
            caller.use()

    results, pending = [], None
    for h in list(chunks) + [None]:
        nxt = upload(h) if h is not None else None
        if pending is not None:
            g, event = pending
            caller.wait_event(event)
            results.append(compute(g))
        pending = nxt
    copy_stream.wait_event(caller.record())  # ...so copy_stream must wait for the computes before its next work
    return results


_GUARDED: dict[str, Any] = {"buffers": {}, "last": None}


def pipe_kept_buffers_guarded(chunks, compute, copy_stream):
    """buffers kept from call to call, and copy_stream waits for the caller now and for the last call's computes
    (an event recorded on that caller's stream) before writing them again."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    copy_stream.wait_event(caller.record())
    if _GUARDED["last"] is not None:
        copy_stream.wait_event(_GUARDED["last"])
    results = []
    for i, h in enumerate(chunks):
        key = (i, h.shape, h.dtype.str)
        if key not in _GUARDED["buffers"]:
            _GUARDED["buffers"][key] = cp.empty(h.shape, dtype=h.dtype)
        g = _GUARDED["buffers"][key]
        g.set(h, stream=copy_stream)
        caller.wait_event(copy_stream.record())
        results.append(compute(g))
    _GUARDED["last"] = caller.record()
    return results


# ======================================================================================================
# Exercise 4: as_meant(program)  (CPU)
# ======================================================================================================
def as_meant_right(program):
    """use(meant) just before a kernel whenever CuPy is elsewhere (after a block's end)."""
    def run(body, meant, top):
        on, out = meant, []
        for statement in body:
            if statement[0] == "kernel":
                if on != meant:
                    out.append(("use", meant))
                    on = meant
                out.append(statement)
            elif statement[0] == "use":
                meant = on = statement[1]
                out.append(statement)
            else:
                out.append(("with", statement[1], run(statement[2], statement[1], statement[1])))
                on = top
        return tuple(out)

    return run(tuple(program), "null", "null")


# ---- wrong ----------------------------------------------------------------------------------------
def _after_ends(program, needed):
    """use(meant) right after a block's end when needed(rest_of_body, meant, cupy_top) says so."""
    def run(body, meant, top):
        out = []
        for i, statement in enumerate(body):
            if statement[0] == "kernel":
                out.append(statement)
            elif statement[0] == "use":
                meant = statement[1]
                out.append(statement)
            else:
                out.append(("with", statement[1], run(statement[2], statement[1], statement[1])))
                if needed(body[i + 1:], meant, top):
                    out.append(("use", meant))
        return tuple(out)

    return run(tuple(program), "null", "null")


def as_meant_after_every_with(program):
    """use(meant) after every `with` block."""
    return _after_ends(program, lambda rest, meant, top: True)


def as_meant_when_cupy_differs(program):
    """use(meant) after every block whose end leaves CuPy elsewhere, kernel to come or not."""
    return _after_ends(program, lambda rest, meant, top: top != meant)


def as_meant_when_anything_follows(program):
    """use(meant) after a block whose end leaves CuPy elsewhere, when any statement follows in the body (even a
    use() or a `with`, which change the stream before any kernel)."""
    return _after_ends(program, lambda rest, meant, top: top != meant and len(rest) > 0)


def as_meant_when_kernel_later(program):
    """use(meant) after such a block when a kernel comes anywhere later in the body (even after a use() or a
    `with` that changes the stream first)."""
    def kernel_later(rest):
        return any(s[0] == "kernel" for s in rest)

    return _after_ends(program, lambda rest, meant, top: top != meant and kernel_later(rest))


def as_meant_dirty_until_kernel(program):
    """after a block's end that leaves CuPy elsewhere, a use(meant) before the next kernel, even when the author's
    own use() came in between (and already put CuPy where meant)."""
    def run(body, meant, top):
        dirty, out = False, []
        for statement in body:
            if statement[0] == "kernel":
                if dirty:
                    out.append(("use", meant))
                    dirty = False
                out.append(statement)
            elif statement[0] == "use":
                meant = statement[1]  # dirty left as it is
                out.append(statement)
            else:
                out.append(("with", statement[1], run(statement[2], statement[1], statement[1])))
                dirty = dirty or top != meant
        return tuple(out)

    return run(tuple(program), "null", "null")


def as_meant_end_to_null(program):
    """believes a `with` block's end always goes back to the null stream."""
    def run(body, meant):
        on, out = meant, []
        for statement in body:
            if statement[0] == "kernel":
                if on != meant:
                    out.append(("use", meant))
                    on = meant
                out.append(statement)
            elif statement[0] == "use":
                meant = on = statement[1]
                out.append(statement)
            else:
                out.append(("with", statement[1], run(statement[2], statement[1])))
                on = "null"
        return tuple(out)

    return run(tuple(program), "null")


def as_meant_end_restores(program):
    """believes CuPy's `with` restores the stream current at its start, like PyTorch (adds nothing)."""
    return tuple(program)


def as_meant_compares_block_stream(program):
    """compares the block's own stream with the meant one (not the stack's top)."""
    def run(body, meant):
        on, out = meant, []
        for statement in body:
            if statement[0] == "kernel":
                if on != meant:
                    out.append(("use", meant))
                    on = meant
                out.append(statement)
            elif statement[0] == "use":
                meant = on = statement[1]
                out.append(statement)
            else:
                out.append(("with", statement[1], run(statement[2], statement[1])))
                on = statement[1]
        return tuple(out)

    return run(tuple(program), "null")


def as_meant_top_level_only(program):
    """fixes only the top level, the nested bodies copied as they are (the lecture's example has no nesting)."""
    on, meant, out = "null", "null", []
    for statement in program:
        if statement[0] == "kernel":
            if on != meant:
                out.append(("use", meant))
                on = meant
            out.append(statement)
        elif statement[0] == "use":
            meant = on = statement[1]
            out.append(statement)
        else:
            out.append(statement)
            on = "null"
    return tuple(out)


def as_meant_bounded_stack(program):
    """simulates CuPy with a stack of at most 12 entries (collections.deque(maxlen=12)), null when it runs empty."""
    import collections

    stack = collections.deque(["null"], maxlen=12)

    def run(body, meant):
        on, out = meant, []
        for statement in body:
            if statement[0] == "kernel":
                if on != meant:
                    out.append(("use", meant))
                    on = meant
                out.append(statement)
            elif statement[0] == "use":
                meant = on = statement[1]
                out.append(statement)
            else:
                stack.append(statement[1])
                out.append(("with", statement[1], run(statement[2], statement[1])))
                if stack:
                    stack.pop()
                on = stack[-1] if stack else "null"
        return tuple(out)

    return run(tuple(program), "null")


def as_meant_meant_is_last_use(program):
    """takes the author's stream after a block to be the last use() inside it (CuPy's use() model, not
    PyTorch's restore)."""
    def run(body, meant, top):
        on, out = meant, []
        for statement in body:
            if statement[0] == "kernel":
                if on != meant:
                    out.append(("use", meant))
                    on = meant
                out.append(statement)
            elif statement[0] == "use":
                meant = on = statement[1]
                out.append(statement)
            else:
                inner, inner_meant = run(statement[2], statement[1], statement[1])
                out.append(("with", statement[1], inner))
                on, meant = top, inner_meant
        return tuple(out), meant

    return run(tuple(program), "null", "null")[0]


def as_meant_use_at_block_start(program):
    """also puts a use() of the block's stream first in every block ("to be sure")."""
    fixed = as_meant_right(program)

    def add(body):
        return tuple(("with", s[1], (("use", s[1]),) + add(s[2])) if s[0] == "with" else s for s in body)

    return add(fixed)


def as_meant_use_before_every_kernel(program):
    """a use(meant) before every kernel that follows a block's end anywhere later, without tracking CuPy."""
    def run(body, meant):
        after_end, out = False, []
        for statement in body:
            if statement[0] == "kernel":
                if after_end:
                    out.append(("use", meant))
                out.append(statement)
            elif statement[0] == "use":
                meant = statement[1]
                out.append(statement)
            else:
                out.append(("with", statement[1], run(statement[2], statement[1])))
                after_end = True
        return tuple(out)

    return run(tuple(program), "null")


# ---- also right -----------------------------------------------------------------------------------
def as_meant_use_right_after_end(program):
    """the use() right after the block's end, when a kernel comes before the stream changes again."""
    def needed(rest, meant, top):
        if top == meant:
            return False
        for statement in rest:
            return statement[0] == "kernel"  # not when a use() or a `with` comes first
        return False

    return _after_ends(program, needed)


def as_meant_explicit_stack(program):
    """an explicit (unbounded) stack, iterative, lists instead of tuples."""
    out_top = []
    # frames: (statements, index, output list, meant, on)
    stack_streams = ["null"]
    frames = [[list(program), 0, out_top, "null", "null"]]
    while frames:
        frame = frames[-1]
        body, i, out, meant, on = frame
        if i == len(body):
            frames.pop()
            if frames:
                stack_streams.pop()
                frames[-1][4] = stack_streams[-1]  # CuPy: the end goes back to the stack's top
            continue
        statement = body[i]
        frame[1] += 1
        if statement[0] == "kernel":
            if on != meant:
                out.append(["use", meant])
                frame[4] = meant
            out.append(list(statement))
        elif statement[0] == "use":
            frame[3] = frame[4] = statement[1]
            out.append(["use", statement[1]])
        else:
            inner = []
            out.append(["with", statement[1], inner])
            stack_streams.append(statement[1])
            frames.append([list(statement[2]), 0, inner, statement[1], statement[1]])
    return out_top


def as_meant_by_difference(program):
    """computes both stream maps first (PyTorch's and CuPy's rules), then adds use() where they differ, one per
    stretch, placed before the first kernel of the stretch."""
    def meant_of(body, current, result):
        for s in body:
            if s[0] == "kernel":
                result[s[1]] = current
            elif s[0] == "use":
                current = s[1]
            else:
                meant_of(s[2], s[1], result)
        return result

    meant = meant_of(program, "null", {})

    def run(body, top, on):
        out = []
        for s in body:
            if s[0] == "kernel":
                if on != meant[s[1]]:
                    out.append(("use", meant[s[1]]))
                    on = meant[s[1]]
                out.append(s)
            elif s[0] == "use":
                on = s[1]
                out.append(s)
            else:
                out.append(("with", s[1], run(s[2], s[1], s[1])))
                on = top
        return tuple(out)

    return run(program, "null", "null")


_ADV10_WRONG: dict[str, dict[str, Any]] = {
    "check_sum_on_stream": {
        "no wait for the producer's ready": sum_no_ready,
        "ready waited on the caller's stream, not on s": sum_ready_on_caller,
        "done event recorded on s before the sum is queued": sum_event_before_entry,
        "caller's stream never waits for the sum": sum_caller_never_waits,
        "caller waits for ready instead of the sum": sum_waits_for_ready_only,
        "s also waits for the caller's stream": sum_s_waits_for_caller,
        "sum on the caller's stream": sum_on_caller_stream,
        "sum on the null stream": sum_on_null_stream,
        "sum on a fresh stream of its own": sum_own_stream,
        "sum on a stream of its own passed as stream= (never entered)": sum_own_stream_by_argument,
        "ReductionKernel(stream=s), output from the caller's pool": sum_kernel_stream_arg_caller_pool,
        "output allocated on the caller's stream, written on s": sum_out_from_caller_pool,
        "one output buffer for every call": sum_one_output_reused,
        "temporary on s copied on the caller, freed at once": sum_copy_on_caller_temp_freed,
        "with block only: a use() caller not restored": sum_with_no_restore,
        "null stream made current at the end": sum_restores_null,
        "s entered without exit": sum_enter_without_exit,
        "sum in float32": sum_float32,
        "host waits on ready.synchronize()": sum_synchronize,
        "returns float(...)": sum_returns_float,
        "done recorded inside the block, one line before the sum": sum_record_inside_before_sum,
    },
    "check_cupy_scale_on_current_stream": {
        "CuPy on its own current stream": scale_on_cupy_current,
        "CuPy on the null stream (PyTorch's default)": scale_on_default_stream,
        "with block: a CuPy use() not restored": scale_with_block,
        "hand-back to PyTorch after CuPy's stream went back": scale_hand_back_outside,
        "output from CuPy's other current stream's pool": scale_out_from_cupy_pool,
        "scales t in place": scale_in_place,
        "PyTorch computes t * factor": scale_pytorch_computes,
        "factor 1.0 short-cut t.clone() (no CuPy kernel)": scale_factor_one_clone,
        "factor 0.0 short-cut zeros_like (no CuPy kernel, +0.0 for -0.0)": scale_factor_zero_zeros,
        "trip through host memory": scale_through_host,
        "torch.cuda.synchronize() first": scale_synchronize,
        "one output per shape kept between calls": scale_cached_output,
        "float64 result": scale_float64,
        "a CuPy stream of its own": scale_own_stream,
        "PyTorch's default stream made current at the end": scale_sets_torch_default,
        "raw data_ptr with t's shape (transposed view misread)": scale_raw_pointer,
        "CuPy's current stream left as PyTorch's": scale_no_cupy_restore,
        "kernel on a stream of its own passed as stream=, events both ways": scale_own_stream_by_argument,
    },
    "check_pipelined": {
        "copy_stream never waits for the caller": pipe_no_fork,
        "computes never wait for their copies": pipe_no_join,
        "only the first copy waited for": pipe_first_event_only,
        "one wait for the last copy (no overlap)": pipe_last_event_only,
        "copy_stream waits for the caller before each copy (serial)": pipe_fork_each_chunk,
        "copies on the current stream": pipe_copies_on_current,
        "buffers from copy_stream's pool, dropped at return": pipe_alloc_on_copy_stream,
        "two buffers in turn, no wait for the computes": pipe_double_buffer_no_free_event,
        "buffers kept from call to call": pipe_buffers_kept,
        "with copy_stream: a use() caller not restored": pipe_with_no_restore,
        "copy_stream.synchronize()": pipe_synchronize,
        "float64 buffers": pipe_float64,
        "None for no chunks": pipe_empty_returns_none,
        "compute on copy_stream": pipe_compute_on_copy_stream,
        "event recorded before each copy": pipe_event_before_copy,
        "copies on a stream of its own": pipe_own_copy_stream,
    },
    "check_as_meant": {
        "use() after every with block": as_meant_after_every_with,
        "use() after every block that leaves CuPy elsewhere, kernel or not": as_meant_when_cupy_differs,
        "use() after such a block when any statement follows": as_meant_when_anything_follows,
        "use() after such a block when a kernel comes anywhere later": as_meant_when_kernel_later,
        "CuPy 'off' after an end until the next kernel, author's use() ignored": as_meant_dirty_until_kernel,
        "end of with always goes back to null": as_meant_end_to_null,
        "CuPy's with restores like PyTorch's (nothing added)": as_meant_end_restores,
        "compares the block's own stream, not the stack's top": as_meant_compares_block_stream,
        "top level only": as_meant_top_level_only,
        "stack bounded at 12 entries": as_meant_bounded_stack,
        "author's stream after a block = last use() inside it": as_meant_meant_is_last_use,
        "use() of the block's stream first in every block": as_meant_use_at_block_start,
        "use() before every kernel after an end, CuPy not tracked": as_meant_use_before_every_kernel,
    },
}

_ADV10_ALSO_RIGHT: dict[str, dict[str, Any]] = {
    "check_sum_on_stream": {
        "use()/use() in try/finally, no with": sum_use_try_finally,
        "one Event object recorded again each call": sum_reused_event,
        "ReductionKernel(stream=s), output from s's pool": sum_kernel_stream_arg_s_pool,
        "event recorded on s outside the block, add.reduce": sum_stream_wait_event_on_current,
        "(reference-like) with s, caller.use(), wait": sum_right_with_then_use,
    },
    "check_cupy_scale_on_current_stream": {
        "__cuda_array_interface__ both ways, with + use() back": scale_cai_with_restore,
        "output allocated by PyTorch, cp.multiply(out=)": scale_torch_allocates,
        "ElementwiseKernel(stream=), CuPy's current stream untouched": scale_elementwise_kernel,
        "torch.utils.dlpack capsules": scale_utils_dlpack,
        "cp.asarray in, torch.from_dlpack out": scale_cai_in_dlpack_out,
        "t.contiguous() first": scale_contiguous_first,
        "ExternalStream (deprecated)": scale_external_stream,
        "(reference-like) use(), DLPack both ways, use() back": scale_right_dlpack,
    },
    "check_pipelined": {
        "copy_stream's pool, copy_stream joins the computes before returning": pipe_copy_stream_pool_then_join_back,
        "two buffers in turn with events": pipe_double_buffer_with_events,
        "one big buffer, copy_from_host_async, views": pipe_one_big_buffer,
        "buffers kept between calls, guarded by the last call's event": pipe_kept_buffers_guarded,
        "(reference-like) buffers from the caller's pool": pipe_right,
    },
    "check_as_meant": {
        "(reference-like) use() before the kernel": as_meant_right,
        "use() right after the block's end": as_meant_use_right_after_end,
        "explicit stack, lists": as_meant_explicit_stack,
    },
}


# Classified by the task text (solutions/04_streams_cupy.ipynb):
# - exercise 2 lets PyTorch copy, allocate and make views, and no more: a copy of t for the factor 1.0 is factor * t,
#   so `t.clone()` there is right; `zeros_like` for 0.0 is not factor * t (0.0 times a negative value is -0.0), and
#   the check compares the signs of zeros.
# - a kernel on a stream of the answer's own, passed as `stream=` (never entered, never made current), breaks "queue
#   CuPy's work on PyTorch's current stream" (exercise 2) and "sum on s" (exercise 1).  Exercise 1's check sees it:
#   s's earlier work ends after `ready`, and a sum that does not queue behind it is written too early.  Exercise 2's
#   cannot: with events both ways the kernel's stream is ordered exactly as the caller's would be, and no value or
#   time differs (only a profiler's stream column would show it); kept here, not tested.
WRONG_UNSEEN = {
    "check_cupy_scale_on_current_stream": {
        "kernel on a stream of its own passed as stream=, events both ways":
            _ADV10_WRONG["check_cupy_scale_on_current_stream"].pop(
                "kernel on a stream of its own passed as stream=, events both ways"),
    },
}
_ADV10_ALSO_RIGHT["check_cupy_scale_on_current_stream"]["factor 1.0 short-cut t.clone() (no CuPy kernel)"] = \
    _ADV10_WRONG["check_cupy_scale_on_current_stream"].pop("factor 1.0 short-cut t.clone() (no CuPy kernel)")

# ================================================================ the seventeenth round's adversary (2026-11-29)
# Answers that passed (as_meant, on the CPU) or that the adversary expected to pass (exercises 1 to 3, on a GPU).
# Exercise 4's fail on the chosen programs `AT_EACH_LEVEL` (the rule needed twice in a stretch, inside 1 to 12
# blocks); rings of outputs fail in the kept-results runs, whose KEPT_CALLS calls (65) outnumber the ring; the 0.0
# short-cut fails on the chosen case with the factor 0.0.
def as_meant_first_fix_taken_to_hold(program):  # once a use() is added in a stretch, a later end is taken to keep it
    def body(statements, meant, top):
        out, on, fixed = [], meant, False
        for statement in statements:
            if statement[0] == "kernel" and on != meant:
                out.append(("use", meant))
                on, fixed = meant, True
            if statement[0] == "use":
                meant = on = statement[1]
                fixed = False
            if statement[0] == "with":
                out.append(("with", statement[1], body(statement[2], statement[1], statement[1])))
                on = on if fixed else top
            else:
                out.append(statement)
        return tuple(out)

    return body(program, "null", "null")


def as_meant_down_to(depth):  # "nested three deep": one loop per level, the bodies deeper than `depth` left as given
    def as_meant(program):
        def body(statements, meant, top, level):
            if level > depth:
                return tuple(statements)
            out, on = [], meant
            for statement in statements:
                if statement[0] == "kernel" and on != meant:
                    out.append(("use", meant))
                    on = meant
                if statement[0] == "use":
                    meant = on = statement[1]
                if statement[0] == "with":
                    out.append(("with", statement[1], body(statement[2], statement[1], statement[1], level + 1)))
                    on = top
                else:
                    out.append(statement)
            return tuple(out)

        return body(program, "null", "null", 0)

    return as_meant


_SUM_RING: dict = {"outputs": [], "calls": 0}


def into_a_ring_of_outputs(x, ready, s, size=16):  # outputs allocated once on s and used in turn: call size+1 writes
    cp = _cp()                                       # the result the caller kept from the first
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        if not _SUM_RING["outputs"]:
            _SUM_RING["outputs"] = [cp.empty((), dtype=cp.float64) for _ in range(size)]
        out = _SUM_RING["outputs"][_SUM_RING["calls"] % size]
        _SUM_RING["calls"] += 1
        cp.sum(x, out=out)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return out


_SCALE_RING: dict = {}


def scale_into_a_ring_of_outputs(t, factor, size=16):  # outputs per shape used in turn: call size+1 of a shape writes
    cp = _cp()                                           # the result the caller kept from the first
    ring = _SCALE_RING.setdefault(tuple(t.shape), {"outputs": [], "calls": 0})
    if len(ring["outputs"]) < size:
        ring["outputs"].append(torch.empty(t.shape, device="cuda"))
    out = ring["outputs"][ring["calls"] % size]
    ring["calls"] += 1
    with _callers_stream():
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    return out


def zeros_for_factor_zero(t, factor):  # "scaling by 0 gives zeros": zeros_like holds 0.0 where 0.0 * t is -0.0
    return torch.zeros_like(t) if factor == 0.0 else scale_on_the_callers_stream(t, factor)


_PIPE_RING: dict = {}


def pipe_ring_of_buffers(chunks, compute, copy_stream, size=16):  # buffers per shape kept across calls, used in turn:
    cp = _cp()                                                      # copy_stream waits only for this caller's stream
    current = cp.cuda.get_current_stream()
    copy_stream.wait_event(current.record())
    results = []
    for h in chunks:
        ring = _PIPE_RING.setdefault((size, h.shape, h.dtype.str), {"buffers": [], "calls": 0})  # a ring per size
        if len(ring["buffers"]) < size:
            ring["buffers"].append(cp.empty(h.shape, h.dtype))
        g = ring["buffers"][ring["calls"] % size]
        ring["calls"] += 1
        g.set(h, stream=copy_stream)
        current.wait_event(copy_stream.record())
        results.append(compute(g))
    return results


WRONG_SUMS["a ring of 16 outputs used in turn (adversary 17)"] = into_a_ring_of_outputs
WRONG_SCALES["a ring of 16 outputs per shape used in turn (adversary 17)"] = scale_into_a_ring_of_outputs
WRONG_SCALES["zeros_like for the factor 0.0 only (adversary 17)"] = zeros_for_factor_zero
WRONG_PIPELINES["a ring of 16 buffers per shape kept across calls (adversary 17)"] = pipe_ring_of_buffers
WRONG_AS_MEANT |= {
    "the first use() added in a stretch taken to hold past a later end (adversary 17)":
        as_meant_first_fix_taken_to_hold,
    "bodies fixed inside at most 2 blocks (adversary 17)": as_meant_down_to(2),
    "bodies fixed inside at most 3 blocks, the text's \"three deep\" (adversary 17)": as_meant_down_to(3),
}

# ================================================================ the twenty-third round's adversary (2026-11-29)
# A process-wide setting changed and left (nb04 watched none: `settings.keeping` now wraps every answer, with CuPy's
# allocator and threading's stack size among the settings), values and sizes the checks never drew (NaN and
# infinities, fractions of t, a one-element x), and rings of outputs larger than the kept-results runs.  Exercises 1 to
# 3's answers were judged on an H200 by the adversary (all passed then); their verdicts now come from the GPU run.
def _as_meant_rewrite(program):  # the course's right rewrite, for the answers below
    return rewrite(program)


def as_meant_recursion_limit_raised(program):  # round 23's adversary: "blocks may be nested to any depth"
    import sys

    sys.setrecursionlimit(100_000)  # raised for good: the caller's limit changed
    return _as_meant_rewrite(program)


def as_meant_deep_recursion_thread(program):  # round 23's adversary: the deep-recursion recipe, the stack size left
    import sys
    import threading

    threading.stack_size(256 * 2**20)  # every thread the caller starts later reserves 256 MiB
    result, old = [], sys.getrecursionlimit()

    def work():
        sys.setrecursionlimit(200_000)
        try:
            result.append(_as_meant_rewrite(program))
        finally:
            sys.setrecursionlimit(old)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    return result[0]


def _on_s_with(x, ready, s, total):  # the solution's order around a sum that `total(x)` queues on s
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        out = total(x)
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return out


def sum_nansum(x, ready, s):  # round 23's adversary: "robust against NaN": a NaN in x dropped, where x.sum() is NaN
    return _on_s_with(x, ready, s, lambda x: _cp().nansum(x))


def sum_one_element_is_itself(x, ready, s):  # round 23's adversary: "the sum of one element is that element": a view
    return _on_s_with(x, ready, s, lambda x: x.reshape(()) if x.size == 1 else x.sum())  # of x, which the producer
    #                                                                                     writes again


def sum_pool_disabled(x, ready, s):  # round 23's adversary: CuPy's pool switched off for good
    _cp().cuda.set_allocator(None)
    return on_s(x, ready, s)


def sum_async_pool_for_good(x, ready, s):  # round 23's adversary: "CuPy's pool has no record_stream": MemoryAsyncPool
    cp = _cp()                                # set for good
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    return on_s(x, ready, s)


_SUM_RING_256: dict = {"outputs": [], "calls": 0}


def sum_ring_of_256(x, ready, s):  # round 23's adversary: a ring of 256 outputs, more than the kept calls (65)
    def total(x):
        cp = _cp()
        if not _SUM_RING_256["outputs"]:
            _SUM_RING_256["outputs"] = [cp.empty(()) for _ in range(256)]
        out = _SUM_RING_256["outputs"][_SUM_RING_256["calls"] % 256]
        _SUM_RING_256["calls"] += 1
        cp.sum(x, out=out)
        return out

    return _on_s_with(x, ready, s, total)


def _scaled_on_the_callers_stream(t, compute):  # the solution's container path around `compute(cupy array)`
    cp = _cp()
    with _callers_stream():
        return torch.from_dlpack(compute(cp.from_dlpack(t)))


def scale_nan_to_num(t, factor):  # round 23's adversary: "to be safe": NaN and infinities of t not propagated
    return _scaled_on_the_callers_stream(t, lambda x: _cp().nan_to_num(x) * factor)


def scale_through_integers(t, factor):  # round 23's adversary: a kernel that reads t as int ("whole numbers")
    cp = _cp()
    kernel = cp.ElementwiseKernel("float32 x, float32 f", "float32 y", "y = (float)(int)x * f", "adv23_int_scale")
    return _scaled_on_the_callers_stream(t, lambda x: kernel(x, cp.float32(factor)))


def scale_pool_disabled(t, factor):  # round 23's adversary: CuPy's pool switched off for good
    _cp().cuda.set_allocator(None)
    return scale_on_the_callers_stream(t, factor)


def scale_grad_mode_off(t, factor):  # round 23's adversary: "no autograd here": grad mode left off
    torch.set_grad_enabled(False)
    return scale_on_the_callers_stream(t, factor)


def pipe_async_pool_for_good(chunks, compute, copy_stream):  # round 23's adversary: MemoryAsyncPool set for good
    cp = _cp()
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    return pipeline(chunks, compute, copy_stream)


def pipe_float32_buffers_raw_bytes(chunks, compute, copy_stream):  # round 23's adversary's float32 buffers ("the
    cp = _cp()                                                         # examples are float32"), copied as raw bytes
    current = cp.cuda.get_current_stream()                             # (set() would refuse another dtype)
    buffers = [cp.empty(h.shape, cp.float32) for h in chunks]
    copy_stream.wait_event(current.record())
    copied = []
    for h, d in zip(chunks, buffers):
        d.data.copy_from_host_async(h.ctypes.data, d.nbytes, stream=copy_stream)
        copied.append(copy_stream.record())
    results = []
    for d, e in zip(buffers, copied):
        current.wait_event(e)
        results.append(compute(d))
    return results


def pipe_ring_of_128(chunks, compute, copy_stream):  # round 23's adversary: 128 buffers per shape and dtype, more than
    return pipe_ring_of_buffers(chunks, compute, copy_stream, size=128)  # the kept calls' 69 chunks


WRONG_SUMS |= {
    "cp.nansum (adversary 23)": sum_nansum,
    "a one-element x returned as a view of x (adversary 23)": sum_one_element_is_itself,
    "CuPy's pool switched off for good (adversary 23)": sum_pool_disabled,
    "MemoryAsyncPool set as CuPy's allocator for good (adversary 23)": sum_async_pool_for_good,
    "a ring of 256 outputs used in turn (adversary 23)": sum_ring_of_256,
}
WRONG_SCALES |= {
    "cp.nan_to_num first (adversary 23)": scale_nan_to_num,
    "an ElementwiseKernel that truncates t to int (adversary 23)": scale_through_integers,
    "CuPy's pool switched off for good (adversary 23)": scale_pool_disabled,
    "grad mode left off (adversary 23)": scale_grad_mode_off,
}
WRONG_PIPELINES |= {
    "MemoryAsyncPool set as CuPy's allocator for good (adversary 23)": pipe_async_pool_for_good,
    "float32 buffers whatever the chunks' dtype (adversary 23)": pipe_float32_buffers_raw_bytes,
    "a ring of 128 buffers per shape kept across calls (adversary 23)": pipe_ring_of_128,
}
WRONG_AS_MEANT |= {
    "the recursion limit raised for good (adversary 23)": as_meant_recursion_limit_raised,
    "threading.stack_size raised for good (adversary 23)": as_meant_deep_recursion_thread,
}

# ================================================================ the twenty-sixth round's adversary (2026-11-30)
# Process state that `settings.keeping` did not read (os.environ, the stack rlimit, the switch interval, sys.path, a
# warnings filter for one category), and sizes the check never drew (a long body; a stack deeper than 64 blocks).
def as_meant_environment_left(program):  # round 26's adversary: "make sure the thread starts on the null stream"
    import os

    os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "0"  # left set for the caller and every process it starts
    return _as_meant_rewrite(program)


def as_meant_stack_rlimit_raised(program):  # round 26's adversary: the deep-recursion recipe, the rlimit left
    import resource
    import sys

    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))  # every later thread and child: as large as allowed
    else:  # (a machine whose soft limit is its hard one already: lowered, which is as much a change)
        resource.setrlimit(resource.RLIMIT_STACK, (2**26 if soft == resource.RLIM_INFINITY else soft // 2, hard))
    old = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(old, 10_000))
        return _as_meant_rewrite(program)
    finally:
        sys.setrecursionlimit(old)


def as_meant_switch_interval(program):  # round 26's adversary: "the check calls it in a thread": the GIL kept longer
    import sys

    sys.setswitchinterval(1e-6)  # left for the whole process: every thread switches 5000 times as often
    return _as_meant_rewrite(program)


def as_meant_sys_path_grown(program):  # round 26's adversary: the course's root put on sys.path at every call
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # one entry more a call, thousands over the check
    return _as_meant_rewrite(program)


def as_meant_warnings_category_silenced(program):  # round 26's adversary: two categories silenced for good
    warnings.simplefilter("ignore", UserWarning)  # the usual way to silence a library's warning, left for the caller
    warnings.simplefilter("ignore", DeprecationWarning)
    return _as_meant_rewrite(program)


def as_meant_recursive_over_statements(program):  # round 26's adversary: one Python frame per statement of a body
    def walk(body, meant, on, top):  # (a body of about a thousand statements raises RecursionError)
        if not body:
            return ()
        first, *rest = body
        if first[0] == "kernel":
            if on != meant:
                return (("use", meant), first, *walk(rest, meant, meant, top))
            return (first, *walk(rest, meant, on, top))
        if first[0] == "use":
            return (first, *walk(rest, first[1], first[1], top))
        inner = walk(list(first[2]), first[1], first[1], first[1])
        return (("with", first[1], inner), *walk(rest, meant, top, top))

    return walk(list(program), "null", "null", "null")


WRONG_AS_MEANT |= {
    "os.environ's CUPY_CUDA_PER_THREAD_DEFAULT_STREAM set and left (adversary 26)": as_meant_environment_left,
    "the stack rlimit changed and left (adversary 26)": as_meant_stack_rlimit_raised,
    "sys.setswitchinterval changed and left (adversary 26)": as_meant_switch_interval,
    "sys.path grown by one entry a call (adversary 26)": as_meant_sys_path_grown,
    "warnings of two categories silenced for good (adversary 26)": as_meant_warnings_category_silenced,
    "recursion over the statements of a body (adversary 26)": as_meant_recursive_over_statements,
    # round 26's adversary's variant: a bound of 64 passed, the check's deepest program being 64 blocks deep
    "CuPy's stack in a deque of 64 entries (adversary 26)":
        lambda p: rewrite(p, put="after the block", stack_size=64),
}

WRONG_PIPELINES["copies one ahead of the computes, use() switches (a dropped chunk's memory reused on copy_stream)"] = \
    pipe_interleaved_use

# ---------------------------------------------------------------- round 26's adversary, judged on the H200
# (/work/notes/AF26-04-gpu.py, run on 2026-11-30: the seven wrong ones PASSed there; the checks are fixed for six, and
# the seventh is marked in MISJUDGED_ON_A_GPU)
def sum_restores_only_non_null(x, ready, s):  # "the end of `with s:` gives back the null stream anyway"
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        total = x.sum()
        done = s.record()
    if caller.ptr != 0:  # a caller with the null stream current under another stream on CuPy's stack is left there
        caller.use()
    cp.cuda.get_current_stream().wait_event(done)
    return total


def sum_runtime_api(x, ready, s):  # right: cudaStreamWaitEvent both ways, an Event made first
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    done = cp.cuda.Event(block=False, disable_timing=True)
    cp.cuda.runtime.streamWaitEvent(s.ptr, ready.ptr, 0)
    with s:
        total = x.sum()
    done.record(s)
    caller.use()
    cp.cuda.runtime.streamWaitEvent(caller.ptr, done.ptr, 0)
    return total


def _adv26_callers_cupy_stream(cp):
    current = torch.cuda.current_stream()
    if hasattr(cp.cuda.Stream, "from_external"):
        return cp.cuda.Stream.from_external(current)
    return cp.cuda.ExternalStream(current.cuda_stream)


def scale_empty_returns_t(t, factor):  # "nothing to scale": an empty t returned as it came (the task: a new tensor)
    cp = _cp()
    if t.numel() == 0:
        return t
    stream = _adv26_callers_cupy_stream(cp)
    before = cp.cuda.get_current_stream()
    with stream:
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    before.use()
    return out


def scale_restores_only_non_null(t, factor):  # CuPy's stream made current again only when it is not the null stream
    cp = _cp()
    stream = _adv26_callers_cupy_stream(cp)
    before = cp.cuda.get_current_stream()
    with stream:
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    if before.ptr != 0:
        before.use()
    return out


def scale_deprecation_silenced(t, factor):  # the older API's DeprecationWarning silenced for the whole process, left
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return scale_external_stream(t, factor)


def pipe_results_in_one_float32_array(chunks, compute, copy_stream):  # float64 results rounded into one float32 array
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        copied.append(copy_stream.record())
    gathered = None
    for i, (d, event) in enumerate(zip(buffers, copied)):
        current.wait_event(event)
        r = compute(d)
        if gathered is None:
            gathered = cp.empty((len(chunks), *r.shape), dtype=cp.float32)
        gathered[i] = r
    return [] if gathered is None else list(gathered)


def pipe_with_block_restores_only_non_null(chunks, compute, copy_stream):  # the caller's stream restored if not null
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(current.record())
    copied = []
    with copy_stream:
        for h, d in zip(chunks, buffers):
            d.set(h)
            copied.append(copy_stream.record())
    if current.ptr != 0:
        current.use()
    results = []
    for d, event in zip(buffers, copied):
        current.wait_event(event)
        results.append(compute(d))
    return results


def pipe_one_ahead(chunks, compute, copy_stream):  # right: the copy of chunk i+1 queued before compute i
    cp = _cp()
    current = cp.cuda.get_current_stream()
    copy_stream.wait_event(current.record())
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    events = [None] * len(chunks)

    def copy(i):
        buffers[i].set(chunks[i], stream=copy_stream)
        events[i] = copy_stream.record()

    if chunks:
        copy(0)
    results = []
    for i in range(len(chunks)):
        if i + 1 < len(chunks):
            copy(i + 1)
        current.wait_event(events[i])
        results.append(compute(buffers[i]))
    return results


def as_meant_cupy_taught_pytorchs_rule(program):
    """Wrong: instead of adding use() lines, CuPy is taught PyTorch's rule (cupy.cuda.Stream's __enter__ and __exit__
    replaced, on the subclass, by ones that make the stream current at the start current again at the end), and the
    program is returned unchanged.  Without CuPy (a CPU), the unchanged program: CuPy's rules FAIL it."""
    try:
        import cupy as cp
    except ImportError:
        return tuple(program)
    import threading

    base, saved = cp.cuda.stream._BaseStream, threading.local()

    def __enter__(self):
        if not hasattr(saved, "stack"):
            saved.stack = []
        saved.stack.append(cp.cuda.get_current_stream())
        return base.__enter__(self)

    def __exit__(self, *args):
        result = base.__exit__(self, *args)
        saved.stack.pop().use()  # PyTorch's rule: the stream current at the start
        return result

    cp.cuda.Stream.__enter__, cp.cuda.Stream.__exit__ = __enter__, __exit__  # left so (the check puts CuPy back)
    return tuple(program)


WRONG_SUMS["the caller's stream made current again only when it is not the null stream (adversary 26)"] = \
    sum_restores_only_non_null  # round 26's adversary, judged on the H200: PASSed (no caller had the null stream
#   current under another stream); the checks now call from such a caller too (CUPY_CALLERS_MORE)
ALSO_RIGHT_SUMS["CUDA's runtime calls both ways, an Event made first (adversary 26)"] = sum_runtime_api
WRONG_SCALES |= {  # round 26's adversary, judged on the H200: all three PASSed
    # fixed: the check calls from CuPy's null stream made current inside a `with` block too
    "CuPy's stream made current again only when it is not the null stream (adversary 26)": scale_restores_only_non_null,
    # fixed: outside pytest the filter is Python's own default, moved first: the whole-category filters read the same;
    # the GPU checks now watch the order of warnings.filters
    "the older API's DeprecationWarning silenced for the process, left (adversary 26)": scale_deprecation_silenced,
    # fixed: the check draws empty tensors, and compares an empty result's storage with t's (no pointer to compare)
    "an empty t returned as it came (adversary 26)": scale_empty_returns_t,
}
WRONG_PIPELINES |= {  # round 26's adversary, judged on the H200: both PASSed
    # fixed: the results' dtype is compared (np.array_equal ignores it)
    "float64 results rounded into one float32 array (adversary 26)": pipe_results_in_one_float32_array,
    # fixed: the check calls from CuPy's null stream made current inside a `with` block too
    "copies in one `with` block, the caller's stream restored only when not null (adversary 26)":
        pipe_with_block_restores_only_non_null,
}
ALSO_RIGHT_PIPELINES["copies one ahead of the computes, no switch of the current stream (adversary 26)"] = \
    pipe_one_ahead
# round 26's adversary, judged on the H200: PASSed (CuPy then ran the unchanged programs as meant); the check now notes
# CuPy's stream methods replaced during a call, FAILs, and puts them back
WRONG_AS_MEANT["CuPy's Stream taught PyTorch's rule, the program unchanged (adversary 26)"] = \
    as_meant_cupy_taught_pytorchs_rule

# ================================================================ the thirty-second round's adversary (2026-11-30)
# Kernel names the check never drew (repeated, or not numbered in line order), programs without kernels, stream names
# that are not the interned literals, and a stack bounded past the deepest chosen program: all five PASSed.
def as_meant_fixes_by_kernel_name(program):  # round 32's adversary: the fixes noted by kernel name, {name: stream}
    fixes = {}  # (a name launched twice gets the use() before both: `k; b.use(); with a: {}; k` runs the first on b)

    def find(body, meant, top):
        on = meant
        for st in body:
            if st[0] == "kernel" and on != meant:
                fixes[st[1]] = meant
                on = meant
            elif st[0] == "use":
                meant = on = st[1]
            elif st[0] == "with":
                find(st[2], st[1], st[1])
                on = top

    def put(body):
        out = []
        for st in body:
            if st[0] == "kernel" and st[1] in fixes:
                out.append(("use", fixes[st[1]]))
            out.append(("with", st[1], put(st[2])) if st[0] == "with" else st)
        return tuple(out)

    find(program, "null", "null")
    return put(program)


def as_meant_indexed_by_kernel_number(program):  # round 32's adversary: the fix of kernel kN kept at index N - 1
    kernels = []  # (names not numbered in line order put the use() before the wrong kernel; "matmul" raises)

    def count(body):
        for st in body:
            if st[0] == "kernel":
                kernels.append(st[1])
            elif st[0] == "with":
                count(st[2])

    count(program)
    need = [None] * (len(kernels) + 1)
    order = iter(range(len(kernels)))

    def find(body, meant, top):
        on = meant
        for st in body:
            if st[0] == "kernel":
                i = next(order)  # position in line order
                if on != meant:
                    need[i] = meant
                    on = meant
            elif st[0] == "use":
                meant = on = st[1]
            elif st[0] == "with":
                find(st[2], st[1], st[1])
                on = top

    find(program, "null", "null")

    def put(body):
        out = []
        for st in body:
            if st[0] == "kernel":
                fix = need[int(st[1][1:]) - 1]  # "k7" -> index 6
                if fix is not None:
                    out.append(("use", fix))
            out.append(("with", st[1], put(st[2])) if st[0] == "with" else st)
        return tuple(out)

    return put(program)


def as_meant_nothing_to_run(program):  # round 32's adversary: "no kernel, nothing to run": its blocks and use() dropped
    def has_kernel(body):
        return any(st[0] == "kernel" or (st[0] == "with" and has_kernel(st[2])) for st in body)

    return _as_meant_rewrite(program) if has_kernel(program) else ()


def as_meant_streams_compared_by_identity(program):  # round 32's adversary: the solution with `is not` for `!=`
    def rewrite_body(body, meant, top):  # (a "null" that is not the interned literal, read from a file or built with
        out, on = [], meant              # str methods, gets a use() where CuPy already runs the kernel as meant)
        for st in body:
            if st[0] == "kernel" and on is not meant:
                out.append(("use", meant))
                on = meant
            if st[0] == "use":
                meant = on = st[1]
            if st[0] == "with":
                out.append(("with", st[1], rewrite_body(st[2], st[1], st[1])))
                on = top
            else:
                out.append(st)
        return tuple(out)

    return rewrite_body(program, "null", "null")


def as_meant_iterative_stack_512(program):  # round 32's adversary: iterative, CuPy's stack a deque of 512 entries
    stack = collections.deque(["null"], maxlen=512)  # ("more than Python could nest anyway": a block more than 511
    out_top = []                                     # deep ends on the null stream, not on the stack's top)
    frames = [[program, 0, out_top, "null", "null"]]  # body, index, out, meant, on
    while frames:
        f = frames[-1]
        body, i, out, meant, on = f
        if i == len(body):
            frames.pop()
            if frames and stack:
                stack.pop()
            if frames:
                frames[-1][4] = stack[-1] if stack else "null"
            continue
        st = body[i]
        f[1] += 1
        if st[0] == "kernel":
            if on != meant:
                out.append(("use", meant))
                f[4] = meant
            out.append(st)
        elif st[0] == "use":
            f[3] = f[4] = st[1]
            out.append(st)
        else:
            inner = []
            out.append(("with", st[1], inner))
            stack.append(st[1])
            frames.append([st[2], 0, inner, st[1], st[1]])

    def freeze(body):
        return tuple(("with", s[1], freeze(s[2])) if s[0] == "with" else s for s in body)

    return freeze(out_top)


WRONG_AS_MEANT |= {
    "the fixes noted by kernel name, a use() before every kernel of that name (adversary 32)":
        as_meant_fixes_by_kernel_name,
    "the fixes indexed by the kernel's number, int(name[1:]) (adversary 32)": as_meant_indexed_by_kernel_number,
    "a program without kernels returned as () (adversary 32)": as_meant_nothing_to_run,
    "the streams compared by identity, `is not` (adversary 32)": as_meant_streams_compared_by_identity,
    "iterative, CuPy's stack a deque of 512 entries (adversary 32)": as_meant_iterative_stack_512,
}
# round 32's adversary: round 10's "both stream maps first" keys the author's streams by kernel name (the last
# kernel of a name wins): wrong for a kernel launched twice, which the check now draws
WRONG_AS_MEANT["the author's streams keyed by kernel name, then the differences (adversary 10, 32)"] = \
    as_meant_by_difference

# ---------------------------------------------------------------- round 32's adversary: exercises 1 to 3, not run by it
# (no GPU) nor by its fixer: judged real by reading (/work/notes/AF32-04.md); their verdicts come from the GPU run
def sum_done_recorded_by_default(x, ready, s):
    """WRONG (a wait missing in one direction).  The join's event is made up front and recorded with
    `done.record()` after the caller's stream is current again: Event.record() with no stream records on the
    *current* stream, the caller's, so the caller waits for its own work and never for the sum on s."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    done = cp.cuda.Event(disable_timing=True)
    s.wait_event(ready)
    with s:
        total = x.sum()
    caller.use()
    done.record()  # meant: on s; records on the caller's stream
    caller.wait_event(done)
    return total


def sum_fast_path_when_ready(x, ready, s):
    """WRONG (a result that depends on the GPU's speed).  "If the producer has already finished there is nothing to
    wait for: skip the worker": when `ready.done` at the call, the sum is queued on the caller's stream (its memory
    from the caller's pool, behind the caller's earlier work); otherwise the solution's way.  The task: the sum on s,
    whatever the producer's progress."""
    cp = _cp()
    if ready.done:
        return x.sum()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        total = x.sum()
        done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


def sum_join_inside_block(x, ready, s):
    """WRONG (the join on the wrong stream).  The caller's stream restored by use() at the end, but the join written
    inside `with s:` as `cp.cuda.get_current_stream().wait_event(s.record())`: the current stream there is s, so s
    waits for itself and the caller's stream never waits for the sum."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.wait_event(ready)
    with s:
        total = x.sum()
        cp.cuda.get_current_stream().wait_event(s.record())  # the "caller" here is s
    caller.use()
    return total


def sum_waits_only_when_pending(x, ready, s):
    """RIGHT.  Each wait queued only when its event is still pending (Event.done is a query: the host does not
    wait): a completed `ready` means x is written, a completed `done` means the sum is, so skipping either wait
    changes no order that matters."""
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    if not ready.done:
        s.wait_event(ready)
    with s:
        total = x.sum()
        done = s.record()
    caller.use()
    if not done.done:
        caller.wait_event(done)
    return total


def scale_in_float64_rounded_back(t, factor):
    """WRONG (a rounding the check's values never show).  Computed in float64 and rounded back to float32:
    float32(x * factor) with factor a double, where factor * t in PyTorch (and CuPy's float32 kernel) multiplies by
    float32(factor).  For factor 0.1 or 1/3 the two differ in about 20% and 33% of the elements (checked on the CPU
    with torch); every factor the check draws (3, -0.5, 0.25, 2, 1, -1, 0) is exact in float32, and t's values are
    multiples of 1/8, so both roundings agree there."""
    cp = _cp()
    caller = _adv26_callers_cupy_stream(cp)
    before = cp.cuda.get_current_stream()
    with caller:
        x = cp.from_dlpack(t)
        out = torch.from_dlpack((x.astype(cp.float64) * factor).astype(cp.float32))
    before.use()
    return out


_WRAPPERS: dict = {}


def scale_stream_wrappers_cached(t, factor):
    """RIGHT.  CuPy's wrapper of PyTorch's current stream made once per CUDA stream handle and kept in a dict
    (`from_external` at each call is what the solution does; the handle is what matters, and a handle reused by a
    later PyTorch stream is the same CUDA stream to wrap)."""
    cp = _cp()
    current = torch.cuda.current_stream()
    key = (current.device.index, current.cuda_stream)
    if key not in _WRAPPERS:
        _WRAPPERS[key] = _adv26_callers_cupy_stream(cp)
    before = cp.cuda.get_current_stream()
    with _WRAPPERS[key]:
        out = torch.from_dlpack(cp.from_dlpack(t) * factor)
    before.use()
    return out


def pipe_fork_from_the_null_stream(chunks, compute, copy_stream):
    """WRONG (an implicit wait hides the race).  The fork's event recorded on the null stream instead of the current
    one: `copy_stream.wait_event(cp.cuda.Stream.null.record())`.  The legacy null stream waits for every blocking
    stream's earlier work, so for a caller on the null stream or on a blocking cp.cuda.Stream() the fork happens to
    cover the caller's work; for a caller on a non_blocking stream (or a per-thread default stream) it covers nothing,
    and copy_stream overwrites memory the caller's queued work still reads."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copy_stream.wait_event(cp.cuda.Stream.null.record())
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        copied.append(copy_stream.record())
    results = []
    for d, event in zip(buffers, copied):
        current.wait_event(event)
        results.append(compute(d))
    return results


def pipe_events_recorded_by_default(chunks, compute, copy_stream):
    """WRONG (a wait missing in one direction).  One Event per chunk made up front, recorded with `event.record()`
    right after each `d.set(h, stream=copy_stream)`: record() with no stream records on the current stream, so each
    compute waits for an event on its own stream, and never for its copy."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    events = [cp.cuda.Event(disable_timing=True) for _ in chunks]
    copy_stream.wait_event(current.record())
    for h, d, event in zip(chunks, buffers, events):
        d.set(h, stream=copy_stream)
        event.record()  # meant: on copy_stream
    results = []
    for d, event in zip(buffers, events):
        current.wait_event(event)
        results.append(compute(d))
    return results


def pipe_fork_then_allocate(chunks, compute, copy_stream):
    """RIGHT.  The fork recorded on the current stream first, the buffers allocated on it afterwards: the event
    follows every piece of work queued before the call, and a block freed before the call is read only by such work,
    so copies that wait for the event never overwrite memory still being read."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
    copy_stream.wait_event(current.record())
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        copied.append(copy_stream.record())
    results = []
    for d, event in zip(buffers, copied):
        current.wait_event(event)
        results.append(compute(d))
    return results


def pipe_fork_after_the_copies(chunks, compute, copy_stream):
    """WRONG (a wait one step late).  The fork written after the copy loop ("copy_stream must wait for the caller"):
    `copy_stream.wait_event(current.record())` then orders only copy_stream's *later* work, and every copy, already
    queued, may overwrite memory that the caller's earlier work still reads."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
    buffers = [cp.empty(h.shape, h.dtype) for h in chunks]
    copied = []
    for h, d in zip(chunks, buffers):
        d.set(h, stream=copy_stream)
        copied.append(copy_stream.record())
    copy_stream.wait_event(current.record())  # too late: the copies are queued already
    results = []
    for d, event in zip(buffers, copied):
        current.wait_event(event)
        results.append(compute(d))
    return results


WRONG_SUMS |= {
    "the join's event recorded by record()'s default, the caller's stream (adversary 32)": sum_done_recorded_by_default,
    "on the caller's stream when ready is already done (adversary 32)": sum_fast_path_when_ready,
    "the join written inside `with s:`, s waits for itself (adversary 32)": sum_join_inside_block,
}
ALSO_RIGHT_SUMS["each wait queued only while its event is pending (adversary 32)"] = sum_waits_only_when_pending
WRONG_SCALES["in float64, rounded back to float32 (adversary 32)"] = scale_in_float64_rounded_back
ALSO_RIGHT_SCALES["CuPy's wrappers of PyTorch's streams cached by handle (adversary 32)"] = scale_stream_wrappers_cached
WRONG_PIPELINES |= {
    "the fork recorded on the null stream (adversary 32)": pipe_fork_from_the_null_stream,
    "copy events recorded by record()'s default, the current stream (adversary 32)": pipe_events_recorded_by_default,
    "the fork queued after the copies (adversary 32)": pipe_fork_after_the_copies,
}
ALSO_RIGHT_PIPELINES["the fork first, then the buffers allocated on the current stream (adversary 32)"] = \
    pipe_fork_then_allocate


def pipe_last_chunk_on_the_callers_stream(chunks, compute, copy_stream):
    """Round 35's adversary: every chunk but the last through the pipeline; the last copied on the caller's stream,
    so its copy waits for the compute before it.  Right values, and more than half of the overlap: it PASSed."""
    if not chunks:
        return []
    return [*pipeline(chunks[:-1], compute, copy_stream), compute(_cp().asarray(chunks[-1]))]


WRONG_PIPELINES["the last chunk copied on the caller's stream (adversary 35)"] = pipe_last_chunk_on_the_callers_stream

# Answers that a GPU judged wrongly, no fix closed yet: a strict xfail on a GPU (tests/test_exercises.py)
MISJUDGED_ON_A_GPU: dict[str, dict[str, str]] = {
    # round 32's adversary, on the H200 (call Q): PASSed.  When `ready` has already passed, the sum on the caller's
    # stream is ordered after it anyway; the check's cases never reach this branch while it matters
    "check_sum_on_stream": {
        "on the caller's stream when ready is already done (adversary 32)": "PASSed on the H200 (2026-11-30): no case "
        "finds ready done while the caller's stream is behind the sum's inputs",
    },
}

WRONG: dict[str, dict[str, Any]] = {
    "check_sum_on_stream": WRONG_SUMS,
    "check_cupy_scale_on_current_stream": WRONG_SCALES,
    "check_pipelined": WRONG_PIPELINES,
    "check_as_meant": WRONG_AS_MEANT,
}
WRONG_ON_CPU: dict[str, set[str]] = {  # without a GPU and CuPy these checks check nothing: no answer fails
    "check_sum_on_stream": set(), "check_cupy_scale_on_current_stream": set(), "check_pipelined": set()}
ALSO_RIGHT: dict[str, dict[str, Any]] = {
    "check_sum_on_stream": ALSO_RIGHT_SUMS,
    "check_cupy_scale_on_current_stream": ALSO_RIGHT_SCALES,
    "check_pipelined": ALSO_RIGHT_PIPELINES,
    "check_as_meant": ALSO_RIGHT_AS_MEANT,
}

for _kept, _theirs in ((WRONG, _ADV10_WRONG), (ALSO_RIGHT, _ADV10_ALSO_RIGHT)):
    for _check, _answers in _theirs.items():  # a name already taken gets the round's mark
        _kept[_check] |= {f"{what} (adversary 10)" if what in _kept[_check] else what: answer
                          for what, answer in _answers.items()}


# Round 66's adversary: each PASSed on the H200 (call AY) while every x was contiguous and no t was 0-d
def sum_of_a_flat_copy(x, ready, s):
    """x.ravel() before the wait: for a non-contiguous x it is a copy, queued on the caller's stream, which reads x
    before the producer writes it; the sum itself is the solution's."""
    return on_s(x.ravel(), ready, s)


def sum_of_x_as_it_is(x, ready, s):  # the same sum over x as it is, a view or not: right
    return on_s(x, ready, s).reshape(())


def scale_zero_d_by_pytorch(t, factor):
    """PyTorch's own t * factor for a 0-d t ("one number is not worth a CuPy kernel"), CuPy otherwise."""
    return t * factor if t.dim() == 0 else scale_on_the_callers_stream(t, factor)


WRONG_SUMS["x.ravel() before the wait for ready: a copy of a view on the caller's stream"] = sum_of_a_flat_copy
ALSO_RIGHT_SUMS["the sum of x as it is, whatever its strides, reshaped to ()"] = sum_of_x_as_it_is
WRONG_SCALES["PyTorch's t * factor for a 0-d t only"] = scale_zero_d_by_pytorch


def as_meant_from_a_known_stream(program):
    """Wrong (round 78's adversary): the right rewrite, with a ("use", "null") put first "to start from a known
    stream": CuPy is on the null stream at the start already, and the task asks for the fewest use() lines."""
    return (("use", "null"), *as_meant_right(program))


# Round 78's adversary: its other answer here (the rewrite as lists of lists) is "lists instead of tuples" above.
WRONG_AS_MEANT["a use('null') first, to start from a known stream (round 78's adversary)"] = \
    as_meant_from_a_known_stream
