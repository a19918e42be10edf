"""Wrong answers, and other right ones, to the exercises of notebook 04 (CUDA streams in CuPy), for
the tests: SPOILERS.

Exercises 1 to 3 need a GPU: their checks delay one stream on purpose, so every racy answer below
must fail there, every time (exercise 2's also keep PyTorch's default stream busy, which an answer
on CuPy's null stream must wait for).  Without a GPU and CuPy they check nothing and say what a GPU
would check (WRONG_ON_CPU: no answer fails there).  Exercise 4 is checked on the CPU.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

from ..nb04 import STREAM_ANSWER


def _cp():
    import cupy

    return cupy


def _cupy_stream_of(torch_stream):
    cp = _cp()
    if hasattr(cp.cuda.Stream, "from_external") and hasattr(torch_stream, "__cuda_stream__"):
        return cp.cuda.Stream.from_external(torch_stream)
    return cp.cuda.ExternalStream(torch_stream.cuda_stream)


# ---------------------------------------------------------------- exercise 1: sum_on_stream (GPU)
def tutorial_code(a_np, s):  # the CuPy streams tutorial's code, as a function: s stays current
    cp = _cp()
    with s:
        a_cp = cp.asarray(a_np)
        b_cp = cp.sum(a_cp)
    s.use()
    return b_cp


def tutorial_back_to_null(a_np, s):  # use(), then "go back to the default stream": not back for every caller
    cp = _cp()
    s.use()
    total = cp.asarray(a_np).sum()
    cp.cuda.Stream.null.use()
    return total


def no_join(a_np, s):  # the caller's stream may read the result before s writes it
    cp = _cp()
    with s:
        return cp.asarray(a_np).sum()


def join_the_wrong_way(a_np, s):  # s waits for the caller, instead of the caller for s
    cp = _cp()
    s.wait_event(cp.cuda.get_current_stream().record())
    with s:
        return cp.asarray(a_np).sum()


def on_the_callers_stream(a_np, s):  # right values, but s is not used
    return _cp().asarray(a_np).sum()


def host_value(a_np, s):  # a float: the host waited for the GPU
    cp = _cp()
    with s:
        return float(cp.asarray(a_np).sum())


def wait_then_sum_on_the_caller(a_np, s):  # right values, but the work runs on the caller's stream
    cp = _cp()
    cp.cuda.get_current_stream().wait_event(s.record())
    return cp.asarray(a_np).sum()


def copy_on_s_sum_on_the_caller(a_np, s):  # the copy on s, the sum on the caller's stream after a wait
    cp = _cp()
    with s:
        x = cp.asarray(a_np)
        copied = s.record()
    cp.cuda.get_current_stream().wait_event(copied)
    return x.sum()


def use_and_restore(a_np, s):  # right: use() with the caller's stream restored by hand
    cp = _cp()
    caller = cp.cuda.get_current_stream()
    s.use()
    total = cp.asarray(a_np).sum()
    done = s.record()
    caller.use()
    caller.wait_event(done)
    return total


def host_synchronized(a_np, s):  # right, but the host waits for s
    cp = _cp()
    with s:
        total = cp.asarray(a_np).sum()
    s.synchronize()
    return total


WRONG_SUMS = {
    "the tutorial's code (s.use() leaks)": tutorial_code,
    "use(), then Stream.null.use()": tutorial_back_to_null,
    "no join": no_join,
    "s waits for the caller instead": join_the_wrong_way,
    "on the caller's stream": on_the_callers_stream,
    "returns a float": host_value,
    "waits for s, then sums on the caller's stream": wait_then_sum_on_the_caller,
    "copies on s, sums on the caller's stream": copy_on_s_sum_on_the_caller,
}


# ---------------------------------------------------------------- exercise 2: cupy_scale_on_current_stream (GPU)
def scale_on_the_callers_stream(t, factor):  # the solution's way, both exports inside the block
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


def on_the_null_stream(t, factor):  # DLPack's handshakes order it, but behind all of the default stream's work
    cp = _cp()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


def returned_outside_the_block(t, factor):  # the way back handshakes with CuPy's null stream
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        y = cp.from_dlpack(t) * factor
    return torch.from_dlpack(y)


def asarray_on_the_null_stream(t, factor):  # __cuda_array_interface__ v2 from PyTorch: no stream, no order
    cp = _cp()
    return torch.from_dlpack(cp.asarray(t) * factor)


def on_the_default_stream(t, factor):  # PyTorch's default stream made current: the caller's stream is left out
    cp = _cp()
    with torch.cuda.stream(torch.cuda.default_stream()):
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


def use_without_restoring(t, factor):  # right values, but CuPy's current stream is left changed
    cp = _cp()
    _cupy_stream_of(torch.cuda.current_stream()).use()
    return torch.from_dlpack(cp.from_dlpack(t) * factor)


def device_synchronize_first(t, factor):  # right values, but the host waits for the whole GPU
    cp = _cp()
    torch.cuda.synchronize()
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


def asarray_on_the_callers_stream(t, factor):  # right: on the producer's own stream, no handshake is needed
    cp = _cp()
    with _cupy_stream_of(torch.cuda.current_stream()):
        return torch.from_dlpack(cp.asarray(t) * factor)


def output_made_by_pytorch(t, factor):  # right: PyTorch allocates the result on its stream, CuPy writes it there
    cp = _cp()
    out = torch.empty_like(t)
    with _cupy_stream_of(torch.cuda.current_stream()):
        cp.multiply(cp.from_dlpack(t), factor, out=cp.from_dlpack(out))
    return out


def external_stream_by_handle(t, factor):  # right: the older API, a stream wrapped from its handle
    cp = _cp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # deprecated in CuPy 14, still there
        stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with stream:
        return torch.from_dlpack(cp.from_dlpack(t) * factor)


WRONG_SCALES = {
    "on CuPy's null stream (ordered by DLPack, behind the default stream)": on_the_null_stream,
    "torch.from_dlpack after leaving the caller's stream": returned_outside_the_block,
    "cupy.asarray on the null stream (no ordering)": asarray_on_the_null_stream,
    "PyTorch's default stream made current": on_the_default_stream,
    "use() without restoring CuPy's stream": use_without_restoring,
    "torch.cuda.synchronize() first": device_synchronize_first,
    "the stream synchronized at the end": stream_synchronize_at_the_end,
    "through the host (.cpu())": through_the_host,
    "returns a CuPy array": returns_cupy,
    "scales the input in place": in_place,
    "a tensor that does not own CuPy's result": not_owning_the_result,
}


# ---------------------------------------------------------------- exercise 3: pipelined (GPU)
def pipeline(chunks, compute, copy_stream, *, wait=True, fork=True):
    """The solution, with a switch for each of its two orderings."""
    cp = _cp()
    current = cp.cuda.get_current_stream()
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
    """A new array per chunk, made on copy_stream (cp.asarray inside `with copy_stream:`).

    keep=False: each chunk's array is freed as soon as the loop moves on, while its compute may still
    be queued: the next allocation on copy_stream gets the same memory.  keep=True keeps them to the
    end; fence=True also makes copy_stream wait for the computes before they are freed.
    """
    cp = _cp()
    current = cp.cuda.get_current_stream()

    def load(h):
        with copy_stream:
            return cp.asarray(h), copy_stream.record()

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
    results = []
    with copy_stream:
        for h in chunks:
            results.append(compute(cp.asarray(h)))
    cp.cuda.get_current_stream().wait_event(copy_stream.record())
    return results


def two_buffers(chunks, compute, copy_stream):
    """Right: two buffers reused in turn, an event for 'copied' and one for 'consumed' per buffer."""
    cp = _cp()
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


WRONG_PIPELINES = {
    "no wait for the copy": lambda c, f, s: pipeline(c, f, s, wait=False),
    "no fork: copies overwrite memory the current stream still reads": lambda c, f, s: pipeline(c, f, s, fork=False),
    "arrays made on copy_stream, freed while computes read them": allocate_on_copy_stream,
    "arrays made on copy_stream, kept, but freed unfenced": lambda c, f, s: allocate_on_copy_stream(c, f, s, keep=True),
    "everything on the current stream": all_on_current,
    "copy_stream waits for every compute": fork_every_chunk,
    "compute on copy_stream": compute_on_copy_stream,
    "last chunk missing": last_chunk_missing,
    "the host waits for each copy": host_waits_for_each_copy,
    "the device synchronized at the end": device_synchronize_at_the_end,
}


# ---------------------------------------------------------------- exercise 4: which_stream (CPU)
def _returns(mapping: object) -> Callable[[], object]:
    return lambda: mapping


WRONG_STREAMS = {
    "`with` restores the stream current at entry": {**STREAM_ANSWER, "k7": "b"},
    "`with` ends on the stream use() set inside it": {**STREAM_ANSWER, "k4": "b"},
    "use() ignored inside `with`": {**STREAM_ANSWER, "k3": "a", "k4": "null"},
    "use() ignored": {**STREAM_ANSWER, "k3": "a", "k5": "null"},
    "a kernel missing": {k: v for k, v in STREAM_ANSWER.items() if k != "k1"},
}

WRONG = {
    "check_sum_on_stream": WRONG_SUMS,
    "check_cupy_scale_on_current_stream": WRONG_SCALES,
    "check_pipelined": WRONG_PIPELINES,
    "check_which_stream": {what: _returns(mapping) for what, mapping in WRONG_STREAMS.items()},
}
WRONG_ON_CPU: dict[str, set[str]] = {  # without a GPU and CuPy these checks check nothing: no answer fails
    "check_sum_on_stream": set(), "check_cupy_scale_on_current_stream": set(), "check_pipelined": set()}
ALSO_RIGHT = {
    "check_sum_on_stream": {"use() with the caller's stream restored": use_and_restore,
                            "the host waits for s": host_synchronized},
    "check_cupy_scale_on_current_stream": {"the caller's stream, as in the solution": scale_on_the_callers_stream,
                                           "cupy.asarray on the caller's stream": asarray_on_the_callers_stream,
                                           "the output allocated by PyTorch": output_made_by_pytorch,
                                           "ExternalStream from the handle": external_stream_by_handle},
    "check_pipelined": {"the wrong pipelines' builder, nothing broken": pipeline,
                        "arrays made on copy_stream, kept and fenced":
                            lambda c, f, s: allocate_on_copy_stream(c, f, s, keep=True, fence=True),
                        "two buffers and events": two_buffers},
}
