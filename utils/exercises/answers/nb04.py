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

WRONG = {
    "check_sum_on_stream": WRONG_SUMS,
    "check_cupy_scale_on_current_stream": WRONG_SCALES,
    "check_pipelined": WRONG_PIPELINES,
    "check_as_meant": WRONG_AS_MEANT,
}
WRONG_ON_CPU: dict[str, set[str]] = {  # without a GPU and CuPy these checks check nothing: no answer fails
    "check_sum_on_stream": set(), "check_cupy_scale_on_current_stream": set(), "check_pipelined": set()}
ALSO_RIGHT = {
    "check_sum_on_stream": ALSO_RIGHT_SUMS,
    "check_cupy_scale_on_current_stream": ALSO_RIGHT_SCALES,
    "check_pipelined": ALSO_RIGHT_PIPELINES,
    "check_as_meant": ALSO_RIGHT_AS_MEANT,
}
