"""Checks for the exercises of notebook 03 (CUDA streams in PyTorch): work fanned out to several
streams, timelines, prefetching, hardware queues.

Every check is a property over inputs that Hypothesis generates (utils/exercises/properties.py),
and a failure names the smallest input that fails:

- the stream code (`fan_out`, `prefetch_loop`) is called from every kind of caller
  (utils/exercises/streams.py: the default stream, a side stream entered with `with`, one made
  current with `set_stream`, one still busy with earlier work), with any number of streams or
  batches, of any shape and dtype; each race window is made wide on purpose: one stream kept busy
  with `utils.gpu_sleep` (a kernel that spins for a known time), or every stream the answer
  switches to made to start late (`streams.widened`), so an answer that forgets a wait reads the
  wrong data every time, not once in a thousand runs.  The caller reads the outputs on its own
  stream, right after the call, with no synchronize in between, as a caller would;
- the simulators (`simulate`, `simulate_queues`) are compared with the check's own simulators of
  the same rules (`stream_rules`, `queue_rules`, locked: they run inside a check only) on
  generated programs: kernels, records, re-records, waits and wait_streams over a few streams and
  events; kernels over a few streams with a number of hardware queues.

The timeline exercises use a tiny program format, one tuple per operation, in the order the host
issues them.  Each tuple names the stream first, then what happens on it, as in PyTorch's
`stream.record_event(event)`, `stream.wait_event(event)` and `stream.wait_stream(other)`:

    ("kernel", stream, name, ms)      a kernel `name` that runs for `ms` milliseconds on `stream`
    ("record", stream, event)         record `event` on `stream`
    ("wait", stream, event)           `stream` waits for `event`
    ("wait_stream", stream, other)    `stream` waits for all work queued on `other` so far

Exercise 5 (hardware queues, CUDA_DEVICE_MAX_CONNECTIONS) uses kernels only, plus a number of queues.

Exercise 2's answer, the timeline of PROGRAM, is kept as one slow digest of the whole timeline
(`PROGRAM_SEALED`): reading this file does not give it away, and the check says only whether a
prediction is the timeline (and whether each kernel lasts its duration, which the program says), so
that trying predictions against it is no shortcut; the plain answers are in `answers/nb03.py`.

Without a GPU, `check_fan_out` and `check_prefetch_loop` run the answer on the CPU with the
streams in order (`utils.exercises.cuda_on_cpu`): its values, not its races or its speed;
`check_simulate_on_gpu` has nothing to add on a CPU to `check_simulate`, and says so.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import math
import random
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from functools import cache, partial
from typing import Any, TypeVar

import numpy as np
import torch
from matplotlib.lines import Line2D
from torch.overrides import TorchFunctionMode

from ..device import GPUUnavailableError, has_cuda, require_cuda
from ..plotting import Interval, StreamTimeline, plot_timeline
from ..timing import gpu_sleep, timer
from . import (
    Exercise,
    ExerciseFailed,
    LeftForGPU,
    cuda_on_cpu,
    exercise,
    is_stub,
    reference,
    register,
    what_returned,
)
from .properties import case_of, for_all, raised_on, real, shown, st
from .settings import BASIC, EVERY, keeping
from .streams import TORCH_CALLERS, Caller, calibrate_sleeps, torch_caller, torch_callers, widened

NOTEBOOK = "03_streams_pytorch"
R = TypeVar("R")

Op = tuple
Timeline = dict[str, tuple[float, float]]
GPU_BUDGET_S = 5.0  # seconds of shrinking a failure of a GPU check's races (each case runs for a second or less)
GPU_VALUES_BUDGET_S = 2.0  # and of its values (small cases: milliseconds each)
CPU_EXAMPLES = 6  # cases Hypothesis draws for a GPU check's CPU part (its values only), besides the chosen ones


# ------------------------------------------------------------------------------------------
# Timing on the GPU, and callers
# ------------------------------------------------------------------------------------------
def _elapsed_ms(fn: Callable[[], object]) -> float:
    """GPU milliseconds from before `fn()` to after it, on the current stream (utils.timer)."""
    with timer(backend="cuda", verbose=False) as elapsed:
        fn()
    return elapsed.seconds * 1e3


def _sleep_ms(ms: float, stream: torch.cuda.Stream | None = None) -> None:
    """Keep `stream` (default: the current one) busy for about `ms` milliseconds."""
    gpu_sleep(ms / 1e3, stream)


def _caller(kind: str | None) -> AbstractContextManager[Caller | None]:
    """Be a caller of `kind` (streams.TORCH_CALLERS) on a GPU; None: the CPU, where streams run in order.

    PyTorch hands out its streams from a pool of 32, round-robin: a check makes the streams it gives
    the answer right after entering the caller, so that none of them is the caller's own stream.
    """
    return nullcontext() if kind is None else torch_caller(kind)


def _at_once(ex: Any, prop: Callable[[Any], None], case: Any, describe: Callable[[Any], str]) -> None:
    """`prop(case)` before Hypothesis starts: an answer that fails there, or raises, stops the check at once
    (a run of Hypothesis costs tens of milliseconds, even for an answer that fails everywhere)."""
    try:
        prop(case)
    except ExerciseFailed:
        raise
    except Exception as error:
        if not (is_stub(error) or isinstance(error, (LeftForGPU, GPUUnavailableError))):
            error.add_note(f"{ex.name}: your function raised this for {describe(case_of(error, case))}")
        raise


def _brief(x: object) -> str:
    """What the student returned, on one line: a tensor or a list of them by its kind, anything else by its repr."""
    if isinstance(x, torch.Tensor):
        return what_returned(x)
    if isinstance(x, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in x):
        return f"a {type(x).__name__} of {len(x)} items"
    return " ".join(shown(x).split())


def _said(caller: Caller | None) -> str:
    """", called from a side stream entered with ...", or nothing on the CPU."""
    return "" if caller is None else f", {caller.says}"


# What every answer of this notebook has no reason to change for its caller: settings.BASIC (its float32 precisions
# read through both of PyTorch's APIs), and cuDNN's autotuning and determinism and the global generators (round 20's
# adversary left cudnn.benchmark on, or called torch.manual_seed(0) at every call, and passed); and every other
# process-wide setting that settings.py reads, not a list of those found so far (round 22's adversary left anomaly
# detection on, or torch.set_num_threads(1), and passed): autograd's and the threads', NumPy's errors, the Python
# process's (PROCESS) and other backends', hooks, the profiler, the function-mode stack, the generators (PROCESS_WIDE).
WATCHED = tuple(dict.fromkeys((*BASIC, *EVERY)))  # (round 24: the collector and flush-denormal, left changed, passed)
# prefetch_loop's GPU part reads every setting but the caching allocator's configuration, which settings.py reads
# through the allocator's snapshot where CUDA is initialized (with every setting, 6 of its right answers FAILed on the
# H200, 2026-11-30; round 26's adversary then left the collector disabled, or CUDA's sync debug mode set, and PASSed
# under the shorter list this replaced)
WATCHED_GPU = tuple(name for name in WATCHED if not name.startswith("the caching allocator's settings"))


# ------------------------------------------------------------------------------------------
# Exercise 1 (transfer): fan out independent work to several streams, and join it
# ------------------------------------------------------------------------------------------
WINDOW_MS = 40.0  # how long the checks keep one stream busy (at first: see TRIES)
HOLD_MS = 100.0  # prefetch_loop's races: copy_stream held busy while the loop queues (far longer than a host takes)
TRIES = 3  # a run that a slow or busy host spoiled is tried again; a wrong answer fails every try
FAN = 3  # the streams of the fan in the races
FAN_N = 4 * 2**20  # elements of x and of each output in the races: 16 MiB of float32, as in race 2 of the lecture
_values = itertools.count(1)  # each run fills x with a value of its own: stale memory never holds the right output

# (the caller, how many streams, x's elements, x's value, x's dtype[, the caller's grad mode: GRAD_MODES, "grad" if
# left out])
Fan = tuple[Any, ...]
# x's dtypes in the fans of the values: float32, float64 and int64 at first (round 20's adversary gave each fn
# x.float(), and passed: x was always float32).  A float x requires grad, as a model's activations do (the same
# adversary ran the fns under torch.no_grad, and passed: no output lost what the check looked at).  16-bit floats and
# narrow integers too (round 26's adversary gave the fns a float16 x as x.float(), an int32 x as x.long(), and passed:
# neither branch ever ran); a GPU and a CPU may round x * 0.1 in 16 bits differently, so 16-bit outputs are compared
# within their precision (SIXTEEN_BITS), their dtype exactly.
X_DTYPES = ("float32", "float64", "int64", "float16", "bfloat16", "int32", "int8")
SIXTEEN_BITS = {torch.float16: 2**-10, torch.bfloat16: 2**-7}  # a 16-bit float's relative spacing


def _autocast() -> AbstractContextManager[Any]:
    """A mixed-precision caller: autocast on for CUDA and for the CPU (where the check computes what fns[i](x) gives,
    and where cuda_on_cpu runs the answer: _cuda_autocast_on_cpu), to float16 both."""
    stack = ExitStack()
    for device in ("cuda", "cpu"):
        with warnings.catch_warnings():  # a CPU build: "CUDA is not available. Disabling" (the CPU's is on)
            warnings.simplefilter("ignore")
            stack.enter_context(torch.autocast(device, dtype=torch.float16))
    return stack


def _modes_now() -> tuple[bool, bool, bool]:
    """Autograd's mode, and autocast's for CUDA and for the CPU, now."""
    return torch.is_grad_enabled(), torch.is_autocast_enabled("cuda"), torch.is_autocast_enabled("cpu")


def _changed_mode(ran: tuple[bool, bool, bool], caller: tuple[bool, bool, bool]) -> str:
    """What a callback ran with that its caller did not: "autocast off", "autograd on", ..."""
    if ran[1:] != caller[1:]:
        return "autocast " + ("on" if any(r and not c for r, c in zip(ran[1:], caller[1:])) else "off")
    return "autograd " + ("on" if ran[0] else "off")


class _CudaAutocast(torch.amp.autocast):
    """torch.autocast("cuda", ...) as the CPU runs it inside cuda_on_cpu: the CPU's autocast, float16 by default as
    CUDA's (round 26's adversary turned a caller's CUDA autocast off around each fn, and passed: on a CPU build
    torch.autocast("cuda") disables itself, so no caller could run under it)."""

    def __init__(self, device_type: str, dtype: torch.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type == "cuda":
            device_type, dtype = "cpu", dtype or torch.float16
        super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


@contextmanager
def _cuda_autocast_on_cpu() -> Iterator[None]:
    """For the block, torch.autocast, torch.amp.autocast and torch.cuda.amp.autocast on "cuda" are the CPU's."""
    import torch.cuda.amp as cuda_amp

    saved = torch.autocast, torch.amp.autocast, cuda_amp.autocast

    def cuda_amp_autocast(enabled: bool = True, dtype: torch.dtype = torch.float16,
                          cache_enabled: bool = True) -> _CudaAutocast:
        return _CudaAutocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    torch.autocast = torch.amp.autocast = _CudaAutocast  # type: ignore[misc]
    cuda_amp.autocast = cuda_amp_autocast  # type: ignore[assignment, misc]
    try:
        yield
    finally:
        torch.autocast, torch.amp.autocast, cuda_amp.autocast = saved  # type: ignore[misc]


# The caller's autograd mode around the call (round 22's adversary ran each fn, or each step, under
# torch.enable_grad(), and passed: every caller had grad on, so that a mode forced on looked like the caller's): on,
# as a training step; off, as an evaluation loop; inference mode; autocast, as a mixed-precision training step.
GRAD_MODES: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    "grad": nullcontext, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode,
    # and a mixed-precision caller, autograd on (round 26's adversary turned autocast off around each fn or step, and
    # passed: no caller ran under autocast, so only autocast turned on could show)
    "autocast": _autocast}


def _grad_mode(case: tuple) -> str:
    """The caller's grad mode of a fan or a loop: its last item where it has one, else "grad"."""
    return case[-1] if isinstance(case[-1], str) and case[-1] in GRAD_MODES else "grad"


def _under(mode: str) -> str:
    """", called under torch.no_grad()", or nothing for a caller with grad on."""
    if mode == "autocast":
        return ", called under torch.autocast('cuda', dtype=torch.float16)"
    return "" if mode == "grad" else f", called under torch.{mode}()"


# Values of x that a narrower dtype changes (round 32's adversary gave the fns an int64 x as x.int(), or a float x
# through bfloat16, and passed: x held whole numbers from -3 to 9, exact in every dtype): an int64 x beyond int32 (and
# beyond float32's 24 bits), an int32 x beyond float32's 24 bits, a float32 x of 9 or 10 significant bits (beyond
# bfloat16's 8), a float64 x of 25 (beyond float32's 24).  Each keeps every head exact in any order of its sums (a
# GPU's and a CPU's alike): an integer that float32 rounds rounds to a power of two times a small one, and a float's
# squares and their sums over 9 elements need 24 bits at most.
LOSSY: dict[str, tuple[float, ...]] = {
    "int64": (2**40 + 5, -(2**33) - 7), "int32": (2**26 + 3, -(2**25) - 1),
    "float32": (1 + 2**-9, -2.5 - 2**-8), "float64": (1 + 2**-24, -3 - 2**-23)}
LARGE_X = 2**16  # x's elements in a fan the CPU part always tries (round 32's adversary gave the fns a float32 x of
# 2**16 elements or more as x.half(), and passed: x had 9 elements at most), of a value float16 rounds (12 bits)


def _x_values(dtype: str) -> st.SearchStrategy[float]:
    """x's value for a fan of `dtype`: a whole one from -3 to 9, or one of LOSSY's for that dtype."""
    whole = st.integers(-3, 9).map(float)
    return st.one_of(whole, st.sampled_from(LOSSY[dtype])) if dtype in LOSSY else whole


def fans(callers: st.SearchStrategy[str | None]) -> st.SearchStrategy[Fan]:
    """Fans of 1 to 4 streams, over an x of 0 to 9 elements (all of one value: a whole one, or one that a narrower
    dtype changes, LOSSY, each head exact in any order), of each of X_DTYPES, called in each of GRAD_MODES."""
    x = st.sampled_from(X_DTYPES).flatmap(lambda dtype: st.tuples(_x_values(dtype), st.just(dtype)))
    return st.tuples(callers, st.integers(1, 4), st.integers(0, 9), x, st.sampled_from(tuple(GRAD_MODES))).map(
        lambda fan: (*fan[:3], *fan[3], fan[4]))


def _fan_x(fan: Fan, device: str | None = None) -> torch.Tensor:
    """The fan's x: torch.full((n,), value) of its dtype, requiring grad where it is a float."""
    _, _, n, value, dtype = fan[:5]
    dtype = getattr(torch, dtype)
    return torch.full((n,), value, dtype=dtype, device=device, requires_grad=dtype.is_floating_point)


# What fns[i] computes in the fans of the values, as a model's heads and a batch's metrics do (round 19's adversary:
# with x * (i + 2) only, every output had x's shape and dtype, and whole values, exact in float16): outputs of x's
# shape and dtype, a scalar (a loss), an int64 count (a metric), and another shape with fractions.
HEADS: list[tuple[str, Callable[[torch.Tensor, int], torch.Tensor]]] = [
    ("x * {k}", lambda x, k: x * k),
    ("x.sum() * {k}", lambda x, k: x.sum() * k),
    ("(x > 0).sum() + {k}", lambda x, k: (x > 0).sum() + k),
    ("torch.stack((x, x * 0.1)) * {k}", lambda x, k: torch.stack((x, x * 0.1)) * k),
    # a matmul, as a head's Linear: autocast changes its dtype (round 20's adversary ran the fns under torch.autocast,
    # and passed: autocast leaves the others float32)
    ("x.float() @ x.float() * {k}", lambda x, k: x.float() @ x.float() * k),
]  # (x * 0.1, not x / 3: a GPU divides by a scalar as a product by its reciprocal, which may round otherwise)


def _heads(width: int, value: float) -> list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]]:
    """The fns of a fan of the values: fns[i] is a HEADS entry (which one: from i and x's value), with k = i + 2."""
    def head(i: int) -> tuple[str, Callable[[torch.Tensor], torch.Tensor]]:
        what, fn = HEADS[(i + int(value) + 1) % len(HEADS)]
        return what.format(k=i + 2), lambda x: fn(x, i + 2)
    return [head(i) for i in range(width)]


def _number(value: float) -> str:
    """A value of x as Python reads it back, exactly: 3, 1099511627781, 1.001953125."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _fan_call(fan: Fan) -> str:
    _, width, n, value, dtype = fan[:5]
    fns = ", ".join(f"lambda x: {what}" for what, _ in _heads(width, value))
    x = f"torch.full(({n},), {_number(value)}" + (f", dtype=torch.{dtype}" if dtype != "float32" else "") + (
        ", requires_grad=True)" if getattr(torch, dtype).is_floating_point else ")")
    return f"fan_out(x = {x}, fns = [{fns}], {width} streams){_under(_grad_mode(fan))}"


def _fan_fns(ran_on: list, count: int = FAN, busy_ms: float = 0.0, value: float | None = None,
             modes: list | None = None) -> list[Callable[[torch.Tensor], torch.Tensor]]:
    """The work of the fan: fns[i](x) = x * (i + 2), or with `value` (x's), the heads of `_heads`; each noting which
    stream was current when it was queued, and on which device x was (and in `modes`, autograd's and autocast's
    modes: _modes_now), and first keeping that stream busy for `busy_ms`."""
    heads = None if value is None else _heads(count, value)

    def make(i: int) -> Callable[[torch.Tensor], torch.Tensor]:
        def fn(x: torch.Tensor) -> torch.Tensor:
            ran_on.append((i, torch.cuda.current_stream(), x.device.type))
            if modes is not None:
                modes.append((i, _modes_now()))
            if busy_ms:
                _sleep_ms(busy_ms)
            return x * (i + 2) if heads is None else heads[i][1](x)
        return fn
    return [make(i) for i in range(count)]


def _outputs_problem(outs: object, count: int, n: int, gpu: bool,
                     want: Sequence[torch.Tensor] | None = None) -> str | None:
    """None if `outs` is a list (or tuple) of `count` tensors of n elements (or shaped like `want`'s) (on the GPU),
    else what is wrong."""
    if not isinstance(outs, (list, tuple)):
        return f"returned {_brief(outs)}, not a list of {count} outputs"
    if len(outs) != count:
        return f"returned {len(outs)} outputs for {count} fns"
    for i, out in enumerate(outs):
        shape = (n,) if want is None else tuple(want[i].shape)
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != shape:
            return (f"returned {what_returned(out, device=False)} as output {i}, not a tensor shaped like "
                    + (f"x, {shape}" if want is None else f"fns[{i}](x), {shape}"))
        if gpu and not out.is_cuda:
            return f"returned output {i} on {out.device}, not on the GPU where fns[{i}] computed it"
    return None


def _wrong_outputs(copies: Sequence[torch.Tensor], value: float) -> list[int]:
    """The indices i whose output is not fns[i](x) for an x full of `value`."""
    return [i for i, c in enumerate(copies) if not bool((c == value * (i + 2)).all())]


def _streams_problem(ran_on: list, streams: Sequence[torch.cuda.Stream]) -> str | None:
    """None if each fns[i] was queued (once at least) while streams[i] was current, on x on the GPU, else what
    is wrong."""
    on_host = sorted({i for i, _, device in ran_on if device != "cuda"})
    if on_host:
        return f"fns{on_host} got x in host memory: their work ran on the CPU"
    elsewhere = sorted({i for i, s, _ in ran_on if s != streams[i]})
    if elsewhere or len({i for i, _, _ in ran_on}) < len(streams):
        return f"fns{elsewhere or ''} did not run on their own streams"
    return None


def _fan_values(ex: Any, yours: Callable) -> Callable[[Fan], None]:
    """The property of any fan, from any caller: output i is fns[i](x), queued on streams[i], read by the
    caller on its own stream right after the call, and the caller's stream is current again."""

    def holds(fan: Fan) -> None:
        kind, width, n, value, _ = fan[:5]
        mode = _grad_mode(fan)
        ran_on: list = []
        x_host = _fan_x(fan)
        # on the host; under autocast, on the device the answer runs on: autocast's lists of operations differ by
        # device (on CUDA, x.sum() of float16 is float32; on the H200, 2026-11-30, every right answer FAILed against
        # a reference computed under the CPU's autocast)
        x_ref = _fan_x(fan, "cuda") if mode == "autocast" else x_host
        with GRAD_MODES[mode]():
            want = [fn(x_ref).cpu() for _, fn in _heads(width, value)]
        modes: list[tuple[int, tuple[bool, bool, bool]]] = []
        with _caller(kind) as caller:
            streams = [torch.cuda.Stream() for _ in range(width)]
            x = _fan_x(fan, "cuda")
            torch.cuda.synchronize()  # x is ready: here only the values count (the races are checked apart)
            with GRAD_MODES[mode]():  # the caller's grad mode, around the call and its reads
                caller_modes = _modes_now()
                outs = yours(x, _fan_fns(ran_on, width, value=value, modes=modes), streams)
                after = torch.cuda.current_stream()
                problem = _outputs_problem(outs, width, n, gpu=caller is not None, want=want)
                tracked = [o.requires_grad for o in outs] if problem is None else []
                with torch.cuda.stream(None if caller is None else caller.stream):  # read as the caller reads
                    copies = [o.clone() for o in outs] if problem is None else []
        torch.cuda.synchronize()
        call = _fan_call(fan) + _said(caller)
        ex.expect(problem is None, f"{call}: fan_out {problem}",
                  "return a list of the outputs of fns[0], fns[1], ..., in order, as each fns[i] returns it")
        # round 26's adversary ran each fns[i] twice (a warm-up first), and passed: no check counted the calls
        calls = [sum(j == i for j, _, _ in ran_on) for i in range(width)]
        again = [i for i, n in enumerate(calls) if n != 1]
        ex.expect(not again, f"{call}: fan_out called fns[{again[0] if again else 0}] "
                             f"{calls[again[0]] if again else 0} times",
                  "call each fns[i] once, on streams[i]: a second call doubles its work, and a fn with side effects "
                  "(a running statistic, a generator) applies them twice")
        changed = [(i, ran) for i, ran in modes if ran != caller_modes]
        ex.expect(not changed, f"{call}: fns{sorted({i for i, _ in changed})} ran with " + (
            _changed_mode(changed[0][1], caller_modes) if changed else ""),
                  "fns[i] runs as the caller would run it: under the caller's torch.no_grad(), inference_mode() or "
                  "autocast; a mode turned on or off inside fan_out changes what fns[i] returns")
        if caller is not None:
            ex.expect(after == caller.stream, f"{call}: after fan_out returned, the current stream was not the "
                                              "caller's", "leave the caller's stream current when you return: "
                                                          "`with torch.cuda.stream(s):` restores it at its end")
            problem = _streams_problem(ran_on, streams)
            ex.expect(problem is None, f"{call}: {problem}", "queue fns[i] while streams[i] is the current stream")
        untracked = [i for i, (t, w) in enumerate(zip(tracked, want)) if t != w.requires_grad]
        forced = [i for i in untracked if tracked[i]]
        ex.expect(not untracked, f"{call}: outputs {untracked} " + (
            "require grad, where fns[i](x) does not" if forced else "do not require grad, where fns[i](x) does"),
                  "fns[i] runs as the caller would run it: under the caller's torch.no_grad() or inference_mode() it "
                  "records no autograd graph, and torch.enable_grad() inside fan_out records one the caller did not "
                  "ask for" if forced else
                  "output i is what fns[i] returns, its autograd history too: fns[i] run under torch.no_grad() or "
                  "torch.inference_mode() (or its output detached or copied) gives the caller nothing to backward")
        lost = _gradients_lost(x, copies, x_host, want) if mode == "grad" and not untracked else []
        ex.expect(not lost, f"{call}: a backward through outputs {[i for i, _ in lost]} gives x " + (
            "no gradient, where one through fns[i](x) gives x one" if lost and lost[0][1] else
            "another gradient than one through fns[i](x)"),
                  "output i is what fns[i] returns, its autograd history too, back to x: fns[i] given a new leaf "
                  "(x.detach(), then requires_grad_()), or its output marked requires_grad_() after a no_grad, "
                  "requires grad but gives the caller's backward no way to x")
        wrong = [i for i, (c, w) in enumerate(zip(copies, want)) if c.dtype != w.dtype or not _equal(c.cpu(), w)]
        cast = [i for i in wrong if copies[i].dtype != want[i].dtype]
        ex.expect(not wrong, f"{call}: outputs {wrong} are not fns[i](x)" + "".join(
            f"; output {i} is {copies[i].dtype}, fns[{i}](x) is {want[i].dtype}" for i in cast[:1]),
                  "output i is what fns[i] returns, its dtype too: a cast, or a copy into a tensor of another dtype, "
                  "changes it" if cast else "each fns[i] gets x itself, and output i is what fns[i] returns")

    return holds


def _equal(got: torch.Tensor, want: torch.Tensor) -> bool:
    """got == want, exactly, or for 16-bit floats within two of their spacings (a GPU may round otherwise)."""
    if want.dtype not in SIXTEEN_BITS or got.dtype != want.dtype or got.shape != want.shape:
        return torch.equal(got, want)
    return torch.allclose(got.float(), want.float(), rtol=2 * SIXTEEN_BITS[want.dtype], atol=0.0, equal_nan=True)


def _gradients_lost(x: torch.Tensor, copies: Sequence[torch.Tensor], x_host: torch.Tensor,
                    want: Sequence[torch.Tensor]) -> list[tuple[int, bool]]:
    """The outputs i (with True where x gets no gradient at all) through which a backward gives x another gradient
    than one through fns[i](x) gives x_host: the outputs' autograd history, not its flag (round 22's adversary gave
    each stream x.detach().requires_grad_(), and passed: every output required grad, and none reached x)."""
    lost = []
    for i, (c, w) in enumerate(zip(copies, want, strict=True)):
        if not (w.requires_grad and c.requires_grad):
            continue  # the flags are compared apart
        with warnings.catch_warnings():
            # PyTorch warns when a leaf's AccumulateGrad node was made on another stream than the gradient now comes
            # from (autograd/input_buffer.cpp): here by design, the outputs come from the answer's side streams and
            # the check asks again; on the H200 (2026-11-29) the warning, with the machine's path, landed in
            # solutions/03's stored output and would in every student's
            warnings.filterwarnings("ignore", message="The AccumulateGrad node's stream does not match")
            (wanted,) = torch.autograd.grad(w.sum(), x_host, allow_unused=True, retain_graph=True)
            (got,) = torch.autograd.grad(c.sum(), x, allow_unused=True, retain_graph=True)
        torch.cuda.synchronize()
        if got is None or wanted is None:
            if (got is None) != (wanted is None):
                lost.append((i, got is None))
        elif got.shape != wanted.shape or not torch.allclose(got.cpu().to(wanted.dtype), wanted,
                                                             rtol=2 * SIXTEEN_BITS.get(wanted.dtype, 5e-6),
                                                             atol=1e-6):
            lost.append((i, False))
    return lost


# Whether the races' x requires grad, and the caller's autograd mode around the call and its reads (GRAD_MODES): round
# 79's adversary skipped the fork and record_stream where x requires grad ("autograd orders the streams"), and PASSed
# on the H200: every race made x without grad and called with autograd on, and the values part, where x does require
# grad, reads after a synchronize and frees nothing.  Each race of a kind of caller takes the next one in turn
# (`_in_turn`): over the four kinds, every race meets each of them, x with grad and without, autograd on and off.
FAN_RACE_GRADS: tuple[tuple[bool, str], ...] = ((False, "grad"), (True, "grad"), (True, "no_grad"),
                                                (False, "inference_mode"))


def _in_turn(kind: str, race: int, grads: Sequence[R]) -> R:
    """The `race`-th race's case of `grads` for a caller of `kind`: the next one for each race, and for each kind."""
    return grads[(list(TORCH_CALLERS).index(kind) + race) % len(grads)]


def _x_grad_said(grad: tuple[bool, str]) -> str:
    """", x requiring grad, called under torch.no_grad()", or less, for a race's (x requires grad, mode)."""
    return (", x requiring grad" if grad[0] else "") + _under(grad[1])


def _fan_race(ex: Any, yours: Callable, kind: str, slow: int | str, grad: tuple[bool, str] = (False, "grad")) -> None:
    """One race of fan_out, made wide: streams[slow] busy when the call comes, the caller's stream late to fill x
    ("producer"), or every stream fan_out queues work on starting late ("inside": streams.widened); `grad`: whether
    x requires grad, and the caller's autograd mode (FAN_RACE_GRADS)."""
    who = {"producer": "a slow producer (x filled late on the caller's stream)",
           "inside": "every stream that fan_out queues work on starting late"}.get(str(slow), f"streams[{slow}] busy")
    x_grad, mode = grad
    for k in range(TRIES):
        window_ms, value = WINDOW_MS * 2**k, float(next(_values))
        ran_on: list = []
        x = torch.zeros(FAN_N, device="cuda", requires_grad=x_grad)
        torch.cuda.synchronize()
        origin, window_end, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        origin.record()  # every stream is idle: the GPU's now, before any stream of this run
        with torch_caller(kind) as caller:
            current = caller.stream
            streams = [torch.cuda.Stream() for _ in range(FAN)]
            busy = current if slow == "producer" else streams[slow] if isinstance(slow, int) else None
            if busy is not None:
                _sleep_ms(window_ms, busy)
                window_end.record(busy)
            with torch.no_grad():  # (a leaf that requires grad is written in place outside autograd only)
                x.fill_(value)  # queued on the caller's stream: after the window if the producer is slow
            late = widened(window_ms, spare=(current,)) if slow == "inside" else nullcontext()
            with GRAD_MODES[mode]():  # the caller's autograd mode, around the call and its reads
                t0 = time.perf_counter()
                with late:
                    outs = yours(x, _fan_fns(ran_on), streams)
                host_ms = (time.perf_counter() - t0) * 1e3
                waited = busy is not None and window_end.query()
                after = torch.cuda.current_stream()
                problem = _outputs_problem(outs, FAN, FAN_N, gpu=True)
                with torch.cuda.stream(current):  # the caller's next work reads the outputs: no synchronize before it
                    copies = [o.clone() for o in outs] if problem is None else []
                    end.record(current)
        torch.cuda.synchronize()
        if not waited:
            break
    said = f"{caller.says}{_x_grad_said(grad)}, with {who}"
    ex.expect(problem is None, f"{said}: fan_out {problem}", "return the outputs of fns[0], fns[1], ... in order")
    ex.expect(after == current, f"{said}: after fan_out returned, the current stream was not the caller's",
              "leave the caller's stream current when you return: `with torch.cuda.stream(s):` restores it")
    ex.expect(not waited, f"{said}: fan_out returned only after the GPU had done {window_ms:.0f} ms of earlier work "
                          f"(the host waited {host_ms:.0f} ms)",
              "order the streams on the GPU, with waits between streams; do not make the host wait")
    problem = _streams_problem(ran_on, streams)
    ex.expect(problem is None, f"{said}: {problem}", "queue fns[i] while streams[i] is the current stream")
    wrong = _wrong_outputs(copies, value)
    if slow == "producer":
        early = [i for i in wrong if bool((copies[i] == 0).all())]  # x was still all zeros
        ex.expect(not early, f"{said}: outputs {early} were computed from x before the caller's stream had filled it",
                  "x is filled by work queued on the caller's current stream: what must each side stream do "
                  "before it reads x?")
    joined = busy is None or busy is current or origin.elapsed_time(end) >= origin.elapsed_time(window_end)
    ex.expect(joined and not wrong, f"{said}: the caller's stream read outputs {wrong or 'of fan_out'} before they "
                                    "were written",
              "work the caller queues on its current stream after fan_out must come after every side stream's "
              "work, all of it, not only one stream's")


def _fan_overlap(ex: Any, yours: Callable, kind: str, grad: tuple[bool, str] = (False, "grad")) -> None:
    """The fns run side by side: each keeps its stream busy for a window, and the fan takes less than FAN (x requiring
    grad or not, in the caller's autograd mode: `grad`, as in `_fan_race`)."""
    # One after another, the fns take FAN windows.  The bar is half a window under that: two side streams
    # that share a hardware queue (fewer connections, as MPS may grant) run one after the other even in a
    # right answer, which then takes two windows.
    bar = FAN - 0.5
    for k in range(TRIES):
        window_ms = WINDOW_MS * 2**k
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch_caller(kind) as caller, GRAD_MODES[grad[1]]():
            streams = [torch.cuda.Stream() for _ in range(FAN)]
            x = torch.ones(FAN_N, device="cuda", requires_grad=grad[0])
            start.record(caller.stream)
            outs = yours(x, _fan_fns([], busy_ms=window_ms), streams)
            end.record(caller.stream)  # after the join
        torch.cuda.synchronize()
        took_ms = start.elapsed_time(end)
        del outs, x
        if took_ms < bar * window_ms:
            break
    ex.expect(took_ms < bar * window_ms,
              f"{caller.says}{_x_grad_said(grad)}, with each fns[i] keeping its stream busy for {window_ms:.0f} ms, "
              f"the caller's stream waited {took_ms:.0f} ms: the {FAN} streams ran one after another",
              "a wait is transitive: once the caller's stream waits for one side stream, a side stream that "
              "then waits for the caller's stream waits for that one too")


def _fan_frees(ex: Any, yours: Callable, kind: str, grad: tuple[bool, str] = (False, "grad")) -> None:
    """The caller frees the outputs while its stream still has to read them (race 2 of the lecture), x requiring grad
    or not, in the caller's autograd mode (`grad`, as in `_fan_race`).

    Every stream the answer queues work on starts late, the caller's stream included (streams.widened, nothing
    spared): an answer that reads an output on the caller's stream inside the call (a copy of it, say) and
    drops it there reads it late too, after the side stream has handed its memory to a new tensor."""
    for k in range(TRIES):
        value = float(next(_values))
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # no free blocks left over: a freed output's block is the one a new tensor gets
        with torch_caller(kind) as caller:
            current = caller.stream
            streams = [torch.cuda.Stream() for _ in range(FAN)]
            x = torch.full((FAN_N,), value, device="cuda", requires_grad=grad[0])
            with GRAD_MODES[grad[1]]():  # the caller's autograd mode, around the call and its reads
                with widened(WINDOW_MS * 2**k):  # the caller's stream late too: its reads inside the call come late
                    outs = yours(x, _fan_fns([]), streams)
                _sleep_ms(WINDOW_MS * 2**k, current)  # the caller's stream is busy before it reads the outputs
                with torch.cuda.stream(current):
                    copies = [o.clone() for o in outs]
            del outs  # the caller is done with them on the host (the outputs' autograd graph holds none of them)
            junk = []
            for s in streams:  # new tensors on the side streams, written at once
                with torch.cuda.stream(s):
                    junk += [torch.full((FAN_N,), math.nan, device="cuda") for _ in range(2)]
        torch.cuda.synchronize()
        wrong = _wrong_outputs(copies, value)
        del junk, x
        if not wrong:
            break
    ex.expect(not wrong, f"{caller.says}{_x_grad_said(grad)}: the caller read outputs {wrong} on its stream after a "
                         "delay, and found them overwritten by tensors made later on the side streams",
              "each output was made on a side stream, and its memory goes back to that stream's pool when the "
              "caller frees it: how does the allocator learn that the caller's stream still uses it?")


def _fan_races(ex: Any, yours: Callable) -> Callable[[str], None]:
    """The property of fan_out's races, for one kind of caller: every window wide, and the fns side by side."""

    def holds(kind: str) -> None:
        races = (*range(FAN), "producer", "inside")  # a missing join first: its hint is the clearer
        for race, slow in enumerate(races):
            _fan_race(ex, yours, kind, slow, _in_turn(kind, race, FAN_RACE_GRADS))
        _fan_overlap(ex, yours, kind, _in_turn(kind, len(races), FAN_RACE_GRADS))
        _fan_frees(ex, yours, kind, _in_turn(kind, len(races) + 1, FAN_RACE_GRADS))

    return holds


def check_fan_out(fan_out: Callable[[torch.Tensor, list, list], list[torch.Tensor]]) -> None:
    """fan_out(x, fns, streams) must return [fns[i](x) queued on streams[i]], safely, without host waits,
    called from any stream.

    Two properties, over every kind of caller (streams.TORCH_CALLERS).  Values: fans of 1 to 4 streams over small x
    (X_DTYPES: 32-, 64- and 16-bit floats, a float one requiring grad, and integers of 8 to 64 bits; of values that
    a narrower dtype changes, LOSSY, too; on a CPU, an x of LARGE_X elements too), with fns as
    heads and metrics are (HEADS: outputs of x's shape and dtype, a scalar, an int64 count, another shape with
    fractions, a matmul); output i is fns[i](x), its shape, dtype, values, whether it requires grad and the gradient
    a backward through it gives x, queued on streams[i] (each fns[i] called once, in the caller's autograd and
    autocast modes), as the caller reads it on its stream, for a caller with autograd on, off (torch.no_grad()), in
    inference mode or under autocast.  No global setting (grad mode, the default dtype, the float32 precisions,
    cuDNN's switches, anomaly detection, the threads, the generators, ...: WATCHED) is left changed.
    Races, with FAN streams and windows made wide: each side stream in turn busy when the call comes;
    the caller's stream filling x late (a slow producer); every stream the answer queues work on
    starting late (streams.widened); every fns[i] keeping its stream busy (they must overlap); the
    caller's stream busy after the call, while the check frees the outputs and makes new tensors on
    the side streams.  Each race with x requiring grad or not, called with autograd on or off (FAN_RACE_GRADS, in
    turn: over the four kinds of caller, every race meets each).  No threshold on times but the overlap's: "the host
    waited" is "the busy window was over when the call returned" (an event's query), and "the caller's stream waited
    for a side stream" is "its next work ended after that stream's window".  In the race of the freed outputs, every
    stream the answer queues work on starts late, the caller's too, so that reading an output on the caller's
    stream inside the call and dropping it there shows as well.  A run that a slow or busy host
    spoiled is tried again with a window twice as long; a wrong answer fails every try.
    """
    if not has_cuda():
        return _check_fan_out_on_cpu(fan_out)
    with exercise("fan_out") as ex:
        require_cuda("check_fan_out")
        yours = keeping(ex, ex.answer(fan_out), WATCHED)
        warm = torch.ones(FAN_N, device="cuda")
        [(warm * (i + 2)).clone() for i in range(FAN)]  # load the kernels, so that the host's time is fair
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        torch.cuda.synchronize()
        holds = _fan_values(ex, yours)
        # a malformed answer: no Hypothesis on a GPU
        _at_once(ex, holds, ("default", FAN, 5, 3.0, "float32"), _fan_call)
        chosen = [(kind, 4, 5, 3.0, "float32") for kind in TORCH_CALLERS]
        for_all(ex, fans(torch_callers()), holds, examples=12, budget_s=GPU_VALUES_BUDGET_S,
                chosen=[*chosen, ("default", 1, 0, 1.0, "int64"), ("default", 4, 3, 2.0, "float64"),
                        ("default", 4, 3, 2.0, "float32", "no_grad"), ("with", 3, 2, 1.0, "float64", "inference_mode"),
                        ("default", 4, 3, 2.0, "float16"), ("with", 4, 3, 2.0, "int32", "autocast"),
                        # values that a narrower dtype changes (round 32): exact in any order of a sum, as above
                        ("default", 4, 3, LOSSY["int64"][0], "int64"), ("with", 4, 5, LOSSY["float32"][0], "float32")],
                describe=_fan_call)
        for_all(ex, torch_callers(), _fan_races(ex, yours), examples=len(TORCH_CALLERS), budget_s=GPU_BUDGET_S,
                describe=lambda kind: f"fan_out called from {TORCH_CALLERS[kind]}")
        _fan_keeps_nothing(ex, yours)


def _fan_keeps_nothing(ex: Any, yours: Callable) -> None:
    """The caller owns the outputs: once it drops them (after two calls), nothing else holds them.  An answer that
    keeps them (forever, or until its next call) never races in _fan_frees, since their memory is never freed, but
    it leaks, and a caller that reads call n's outputs after call n+1 meets the race the answer only postponed."""
    streams = [torch.cuda.Stream() for _ in range(FAN)]
    x = torch.full((FAN_N,), 1.0, device="cuda")
    alive = []
    for _ in range(2):
        outs = yours(x, _fan_fns([]), streams)
        alive += [weakref.ref(o) for o in outs if isinstance(o, torch.Tensor)]
        del outs
    torch.cuda.synchronize()
    gc.collect()
    kept = sum(ref() is not None for ref in alive)
    ex.expect(kept == 0, f"fan_out(x, {FAN} fns, {FAN} streams), called twice from the default stream: after the "
                         f"caller dropped both calls' outputs, {kept} of the {len(alive)} were still alive",
              "the caller owns the outputs and drops them when it likes: keeping them alive postpones the race of "
              "the freed memory (and leaks it); the allocator is told of another stream's use by record_stream")


register(Exercise(NOTEBOOK, "fan_out", check_fan_out, gpu=True, cpu_checks=19))


def _one_thread_for_a_large_x(holds: Callable[[Fan], None]) -> Callable[[Fan], None]:
    """`holds`, run on one of PyTorch's CPU threads for a fan of LARGE_X elements or more (an operation on 2**16
    elements runs on every thread, and took 30 ms instead of 0.02 on two cores that other processes kept busy)."""

    def on_one_thread(fan: Fan) -> None:
        if fan[2] < LARGE_X:
            return holds(fan)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return holds(fan)
        finally:
            torch.set_num_threads(threads)

    return on_one_thread


def _check_fan_out_on_cpu(fan_out: Callable) -> None:
    """check_fan_out's values on a CPU, where the streams run in order: output i must be fns[i](x)."""
    with (exercise("fan_out") as ex,
          ex.on_cpu("that output i is fns[i](x), its shape, dtype and values, whether it requires grad and the "
                    "gradient a backward through it gives x, that each fns[i] is called once, in the caller's modes, "
                    "for fans of 1 to 4 streams run in order on the CPU (which says it is a GPU), called with autograd "
                    "on, off, in inference mode or under autocast, that no global setting is left changed, and that "
                    "nothing keeps the outputs alive once the caller drops them",
                    "every kind of caller, the races (a slow producer, a busy side stream, streams that start late, "
                    "outputs freed while the caller's stream still reads them), that each fns[i] runs on "
                    "streams[i], and that the host never waits"),
          cuda_on_cpu(like_a_gpu=True), _cuda_autocast_on_cpu()):
        yours = keeping(ex, ex.answer(fan_out), WATCHED)
        holds = _one_thread_for_a_large_x(_fan_values(ex, yours))
        _at_once(ex, holds, (None, FAN, 5, LOSSY["float32"][1], "float32"), _fan_call)  # the heads of 3.0's
        # two draws fewer than CPU_EXAMPLES: the time of round 32's two chosen fans (a large x, an int64 beyond int32)
        for_all(ex, fans(st.none()), holds, examples=CPU_EXAMPLES - 2,
                chosen=[(None, 1, 0, 1.0, "int64"), (None, 4, 7, LOSSY["float64"][1], "float64"),
                        (None, 4, 3, 2.0, "float16"), (None, 4, 3, LOSSY["int32"][0], "int32", "no_grad"),
                        (None, 3, 2, 1.0, "bfloat16", "inference_mode"), (None, 4, 3, 2.0, "int8", "autocast"),
                        # values that a narrower dtype changes (LOSSY: round 32), and a large x, float16 rounding it
                        (None, 4, 3, LOSSY["int64"][0], "int64"), (None, 4, LARGE_X, 1 + 2**-11, "float32", "no_grad")],
                budget_s=0, describe=_fan_call)
        # weak references need no GPU (round 35's adversary: an answer that cached its outputs got PART here, and the
        # list of what needed a GPU did not name this)
        _fan_keeps_nothing(ex, yours)


# ------------------------------------------------------------------------------------------
# Timelines: what a simulator returns
# ------------------------------------------------------------------------------------------
def _pair(value: object) -> tuple[float, float] | None:
    """(start, end) as floats, if `value` is a pair of finite real numbers of any type (a tuple, a list, an
    array or a tensor of two), else None."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        if value.ndim != 1 or len(value) != 2:
            return None
        value = list(value)
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or len(value) != 2:
        return None
    start, end = real(value[0]), real(value[1])
    if start is None or end is None or not (math.isfinite(start) and math.isfinite(end)):
        return None
    return start, end


def _timeline_problem(got: object, kernels: Sequence[str]) -> str | None:
    """None if `got` maps exactly these kernels, each to a (start, end) pair of numbers, else what is wrong."""
    if not isinstance(got, Mapping):
        return f"returned {_brief(got)}, not a dict of name -> (start, end)"
    names = set(kernels)
    missing, extra = [k for k in kernels if k not in got], [k for k in got if k not in names]
    if missing or extra:
        return (f"has kernels {shown(sorted(map(str, got)))}, expected {shown(sorted(kernels))}"
                + (f" ({missing[0]!r} is missing)" if missing else f" ({extra[0]!r} is not one)"))
    for name in kernels:
        if _pair(got[name]) is None:
            return f"maps {name!r} to {_brief(got[name])}, not a (start, end) pair of numbers"
    return None


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _first_difference(got: Mapping, want: Timeline) -> tuple[str, tuple[float, float]] | None:
    """The first kernel (in the program's order) that `got` puts elsewhere than `want`, and where; None if none."""
    for name, (start, end) in want.items():
        pair = _pair(got[name])
        assert pair is not None
        if not (_same(pair[0], start) and _same(pair[1], end)):
            return name, pair
    return None


def _kernels(program: Sequence[Op]) -> list[str]:
    return [op[2] for op in program if op[0] == "kernel"]


_renames = itertools.count(1)


def _renamed(program: Sequence[Op]) -> list[Op]:
    """`program` with every name (of a stream, an event or a kernel) made new, by a prefix of its own (names alike
    stay alike, and in the same order): names the answer has never seen in any earlier call, in a program that the
    rules time as they time `program`."""
    tag = f"run{next(_renames)}:"
    return [tuple(tag + item if isinstance(item, str) and i else item for i, item in enumerate(op)) for op in program]


def _stale(fails: Callable[[list[Op]], bool], program: list[Op]) -> bool:
    """True if the answer, wrong on `program`, is right on it with its names made new (`_renamed`): what it returns
    then depends on what it kept from its earlier calls (a cache, a mutable default argument), not on the program.
    An error on the new names (an answer that reads its names) says nothing of the kind."""
    try:
        return not fails(_renamed(program))
    except Exception:  # noqa: BLE001 -- the answer's error on new names: not a sign of what it kept
        return False


STALE = (" (called on this program with every name made new, never seen before, your simulator gets it right: "
         "it returns what it kept from an earlier call)")
STALE_HINT = ("each call simulates its own program from nothing: a result, a stream's or an event's time kept from an "
              "earlier call (a cache, a dict as a default argument, a global) belongs to another program")


def _expect_timeline(ex: Any, called: Callable[[], str], got: object, want: Timeline,
                     hint: Callable[[bool], str], stale: Callable[[], bool] = lambda: False) -> None:
    """Expect the timeline `want`: first its kernels, each a pair of numbers, then each kernel's place.  The
    call is written, and the hint told whether the first kernel out of place starts too late, on a failure (or,
    if that kernel does not last its duration, the rule for a duration instead; or, where `stale()` says that the
    answer's result depends on its earlier calls, STALE_HINT: round 19's adversary, a cache by the kernels' names,
    got the hint of a duration)."""
    if not _misplaces(got, want):
        ex.expect(True, "", "")
        return
    problem, call, kept = _timeline_problem(got, list(want)), called(), stale()
    ex.expect(problem is None, f"{call} {problem}" + (STALE if kept else ""), STALE_HINT if kept else
              "return a dict with one (start_ms, end_ms) pair for each kernel of the program, keyed by its name")
    assert isinstance(got, Mapping)
    differs = _first_difference(got, want)
    if differs is not None:
        name, (start, end) = differs
        (want_start, want_end) = want[name]
        got_ms, want_ms = _distinct((start, end), (want_start, want_end))
        ex.expect(False, f"{call} puts {name!r} at {got_ms} ms; the rules put it at {want_ms} ms"
                  + (STALE if kept else ""), STALE_HINT if kept else
                  hint(start > want_start) if _same(end - start, want_end - want_start) else DURATION_HINT)


def _distinct(got: tuple[float, float], want: tuple[float, float]) -> tuple[str, str]:
    """"a to b" for each pair, with the fewest significant digits (6 at least) that tell the two apart (round 19's
    adversary: times off by float32's rounding read 13.8762 to 16.9969 against 13.8762 to 16.9969)."""
    for digits in range(6, 18):
        shown_got, shown_want = (f"{a:.{digits}g} to {b:.{digits}g}" for a, b in (got, want))
        if shown_got != shown_want:
            break
    return shown_got, shown_want


DURATION_HINT = ("each pair is (start, end) in ms, and a kernel runs for exactly its duration, a fraction of a "
                 "millisecond included: which operation of your simulator changes how long a kernel takes?")


KEPT_RESULT_HINT = ("return a new dict at each call: the caller keeps each timeline (the notebook compares one with "
                    "another), and a dict, or a pair, that the next call fills again changes under it")


class _Returned:
    """The last timeline an answer returned right, with the call and the timeline the rules give it: the next call
    must leave it as it was (round 20's adversary returned one module-level dict, cleared and filled again at each
    call, and passed: each result was compared before the next call, never after it)."""

    def __init__(self) -> None:
        self.last: tuple[str, object, Timeline] | None = None

    def expect_unchanged(self, ex: Any, call: str) -> None:
        """Expect the last timeline kept to be as the rules give it still, now that `call` returned."""
        if self.last is None:
            return
        earlier, got, want = self.last
        self.last = None
        if not _misplaces(got, want):
            return
        problem = _timeline_problem(got, list(want))
        differs = None if problem is not None else _first_difference(got, want)  # type: ignore[arg-type]
        if differs is not None:
            now_ms, was_ms = _distinct(differs[1], want[differs[0]])
            problem = f"puts {differs[0]!r} at {now_ms} ms, where it had put it, as the rules do, at {was_ms} ms"
        what = problem
        ex.expect(False, f"{earlier} returned the right timeline; after the next call, {call}, that timeline {what}",
                  KEPT_RESULT_HINT)

    def keep(self, call: str, got: object, want: Timeline) -> None:
        self.last = (call, got, want)


def _differs(got: object, want: Timeline) -> str:
    """How the timeline `got` differs from `want`, for a message: "puts 'a' at 0 to 2 ms; the rules put it at ..."."""
    problem = _timeline_problem(got, list(want))
    differs = None if problem is not None else _first_difference(got, want)  # type: ignore[arg-type]
    if differs is not None:
        got_ms, want_ms = _distinct(differs[1], want[differs[0]])
        problem = f"puts {differs[0]!r} at {got_ms} ms; the rules put it at {want_ms} ms"
    return problem or "is not the rules' timeline"


# A caller's program changed in place between two calls (round 32's adversary cached each result under id(program),
# the list kept with it, and passed: every call had a new list), and a caller's changes to a timeline it got (round
# 32's adversary returned the very dict it kept under the program, and passed: no caller changed one)
KERNELS_IN_PLACE = "the list of the call before, its kernels alone left in it in place (program[:] = kernels)"
REVERSED_IN_PLACE = "the list of the call before, its operations then reversed in place (program.reverse())"
IN_PLACE_HINT = ("a caller may change its program in place and simulate it again (program.append(op), as a notebook "
                 "cell builds one): a result kept under the list itself (its id, the list object) belongs to what the "
                 "list held then; simulate each call's program from nothing")
EDITS = "each pair set to (-1, -1) where it can be set in place, then the dict cleared"
EDITED_HINT = ("return a new dict, of new pairs, at each call: the caller owns the timeline it gets and may change it "
               "(drop a kernel, shift its times to compare them with a measurement); a dict or a pair that your "
               "simulator keeps and returns again carries those changes into its later results")
DEPTH_HINT = ("a program can hold thousands of operations (a trace of one training step does), and a recursion as "
              "deep as the program is long runs out of Python's stack: follow the operations in a loop instead")
_DEEP = object()  # what a call returned that raised RecursionError


def _edited(timeline: object) -> None:
    """What a caller may do to a timeline it got: each pair set to (-1, -1) in place, where a pair can be (a list, an
    array), then the dict cleared (a read-only mapping, and tuples, stay as they are)."""
    with suppress(Exception):
        pairs = list(timeline.values()) if isinstance(timeline, Mapping) else []
        for pair in pairs:
            with suppress(Exception):
                pair[0], pair[1] = -1.0, -1.0
        timeline.clear()  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------
# Exercises 2 and 3: predict a timeline, then write the simulator
# ------------------------------------------------------------------------------------------
PROGRAM: list[Op] = [
    ("kernel", "copy", "load 0", 10),
    ("record", "copy", "loaded 0"),
    ("kernel", "copy", "load 1", 10),
    ("record", "copy", "loaded 1"),
    ("kernel", "logger", "log", 30),
    ("wait", "compute", "loaded 0"),
    ("kernel", "compute", "step 0", 15),
    ("wait", "compute", "loaded 1"),
    ("kernel", "compute", "step 1", 15),
    ("wait_stream", "logger", "compute"),
    ("kernel", "logger", "report", 5),
]
# The whole timeline, as one slow digest (`_timeline_seal`): this file does not give the answer away, and the
# check says only whether a prediction is the timeline, never which kernels or how many are off, so that trying
# predictions against it is no quicker a way to the answer than working it out.
PROGRAM_SEALED = "30cf3d88b73460dc"  # tests/test_exercises_03.py holds it against the reference
SEAL_ROUNDS = 50_000  # PBKDF2 rounds of the seal: milliseconds a prediction, a search over many far longer


def _timeline_seal(timeline: Mapping) -> str:
    """The digest of a whole timeline (each kernel a pair of numbers of any type, `_pair`), to the nanosecond (times
    in ms), whatever the order of its kernels."""
    pairs = {name: _pair(span) or (-1.0, -1.0) for name, span in timeline.items()}
    spans = sorted((str(name), round(start * 1e6), round(end * 1e6)) for name, (start, end) in pairs.items())
    return hashlib.pbkdf2_hmac("sha256", repr(spans).encode(), b"nb03 PROGRAM", SEAL_ROUNDS).hex()[:16]


def _durations_problem(got: Mapping, program: Sequence[Op]) -> str | None:
    """None if each kernel of `got` lasts its duration in `program`, else which one does not (the program is on
    the page: this says nothing of where the kernels run)."""
    for op in program:
        if op[0] == "kernel":
            start, end = _pair(got[op[2]]) or (0.0, 0.0)
            if not _same(end - start, op[3]):
                return (f"gives {op[2]!r} ({start:g}, {end:g}), {end - start:g} ms long; the program runs it for "
                        f"{op[3]:g} ms")
    return None


def _prediction_problem(got: object) -> tuple[str, str] | None:
    """None if `got` is PROGRAM's timeline, else what is wrong and the hint, without saying where kernels run."""
    problem = _timeline_problem(got, _kernels(PROGRAM))
    if problem is not None:
        return problem, ("return a dict with one (start_ms, end_ms) pair of numbers for each kernel of PROGRAM, "
                         "keyed by its name as the program writes it")
    assert isinstance(got, Mapping)
    problem = _durations_problem(got, PROGRAM)
    if problem is not None:
        return problem, ("each pair is (start, end), both in milliseconds from the start of the program, and a "
                         "kernel runs for exactly its duration")
    if _timeline_seal(got) != PROGRAM_SEALED:
        return ("is not the timeline that the stream rules give PROGRAM",
                ("each stream runs its kernels one after another; a wait holds back only the work queued after it "
                 "on that stream, until the event's work is done; a wait_stream, until all work queued on the "
                 "other stream so far is done"))
    return None


def check_predicted_timeline(predicted_timeline: Callable[[], Timeline]) -> None:
    """predicted_timeline() must return PROGRAM's start and end times, worked out by hand."""
    with exercise("predicted_timeline") as ex:
        got = keeping(ex, ex.answer(predicted_timeline), WATCHED)()
        problem = _prediction_problem(got)
        ex.expect(problem is None, f"your prediction {problem and problem[0]}", problem[1] if problem else "")


register(Exercise(NOTEBOOK, "predicted_timeline", check_predicted_timeline))


@reference
def stream_rules(program: Sequence[Op]) -> Timeline:
    """The check's simulator of the stream rules (tests/test_exercises_03.py holds it against another
    formulation, and against the GPU)."""
    free_at: dict[str, float] = {}  # stream -> when the work queued on it so far ends
    recorded: dict[str, float] = {}  # event -> the moment its latest record stands for
    timeline = {}
    for op in program:
        if op[0] == "kernel":
            _, stream, name, ms = op
            start = free_at.get(stream, 0.0)
            free_at[stream] = start + ms
            timeline[name] = (start, start + ms)
        elif op[0] == "record":
            recorded[op[2]] = free_at.get(op[1], 0.0)
        elif op[0] == "wait":
            if op[2] in recorded:
                free_at[op[1]] = max(free_at.get(op[1], 0.0), recorded[op[2]])
        elif op[0] == "wait_stream":
            free_at[op[1]] = max(free_at.get(op[1], 0.0), free_at.get(op[2], 0.0))
        else:
            raise ValueError(f"unknown operation {op!r}")
    return timeline


KINDS = ("kernel", "record", "wait", "wait_stream")
MAX_OPS = 20  # operations of a generated program, before the kernels that close it


def _duration(rng: random.Random) -> float:
    """A kernel's milliseconds: whole ones, multiples of 2**-20 ms (about a nanosecond: a simulator that rounds
    its times to any number of decimals that a student would choose is off, and sums of them are exact in
    binary), and now and then 0 (a kernel that takes no time)."""
    draw = rng.random()
    return 0 if draw < 0.1 else rng.randint(1, 20 * 2**20) / 2**20 if draw < 0.4 else rng.randint(1, 20)


def _named(ops: Sequence[tuple], prefix: str = "k") -> list[Op]:
    """Name the kernels of a generated program k0, k1, ... (or s0, s1, ..., the names of streams), in the order they
    are queued."""
    count = itertools.count()
    return [("kernel", op[1], f"{prefix}{next(count)}", op[2]) if op[0] == "kernel" else op for op in ops]


def _closed(ops: list[tuple]) -> list[tuple]:
    """The operations, and a 1 ms kernel on each stream whose last operation is a wait: a wait then shows."""
    waiting: dict[str, bool] = {}
    for op in ops:
        if op[0] in ("kernel", "wait", "wait_stream"):
            waiting[op[1]] = op[0] != "kernel"
    return ops + [("kernel", stream, 1) for stream, waits in waiting.items() if waits]


def random_program(size: int, seed: int, streams: tuple[int, int] = (1, 6),
                   events: tuple[int, int] = (1, 3)) -> list[Op]:
    """A program of `size` operations drawn from `seed` (the same ones on every machine), over 1 to 6 streams
    and 1 to 3 events (or as many as `streams` and `events` say, at least and at most): kernels, records (an event
    recorded again included), waits (for an event recorded before, later, or never) and wait_streams; each program of
    a seed begins the longer ones of that seed.
    The events of an odd seed have the names of streams (s0, s1, ...), and those of a seed of 2 modulo 4 the names
    of kernels (k0, k1, ...); the kernels of a seed that 3 divides have the names of streams (round 19): the task
    does not make names distinct, and an event, a stream and a kernel of one name are three things."""
    rng = random.Random(seed)
    names = [f"s{i}" for i in range(rng.randint(*streams))]
    marks = [f"{'s' if seed % 2 else 'k' if seed % 4 == 2 else 'e'}{i}" for i in range(rng.randint(*events))]
    ops: list[tuple] = []
    for _ in range(size):
        kind, stream = rng.choices(KINDS, weights=(4, 2, 2, 1))[0], rng.choice(names)
        ops.append(("kernel", stream, _duration(rng)) if kind == "kernel" else
                   (kind, stream, rng.choice(names if kind == "wait_stream" else marks)))
    return _named(_closed(ops), "s" if seed % 3 == 0 else "k")


# Programs of many events (round 32's adversary kept 4 events, the least recently recorded evicted by a fifth, and
# passed: every program held 1 to 3 events), and long programs (its simulator recursed once per operation, and passed:
# no program held more than 20 operations and their closing kernels; a trace of a training step holds thousands).
MANY_EVENTS = 12  # programs of many_events_program that check_simulate tries
LONG_OPS = 3000  # operations of a long program, before its closing kernels


def many_events_program(size: int, seed: int) -> list[Op]:
    """5 + `size` events, drawn from `seed`: each recorded once after a kernel of one of 1 to 3 busy streams, then
    waited for, in a shuffled order, by a stream of its own that then runs a kernel (every wait holds that kernel
    back: a simulator that forgets any event, the earliest recorded or another, is off)."""
    rng = random.Random(seed)
    busy = [f"s{i}" for i in range(rng.randint(1, 3))]
    events = [f"e{i}" for i in range(5 + size)]
    ops: list[tuple] = []
    for event in events:
        stream = rng.choice(busy)
        ops += [("kernel", stream, rng.randint(1, 20)), ("record", stream, event)]
    rng.shuffle(events)
    for i, event in enumerate(events):
        ops += [("wait", f"w{i}", event), ("kernel", f"w{i}", _duration(rng) or 1)]
    return _named(ops)


@cache
def long_program(seed: int) -> list[Op]:
    """A program of LONG_OPS operations (and its closing kernels) drawn from `seed`: seed 0 over 100 to 300 streams and
    as many events (a table of a few hundred slots overflows), any other over 1 to 6 streams and 1 to 3 events (each
    stream's chain of kernels hundreds long)."""
    wide = (100, 300) if seed == 0 else None
    return random_program(LONG_OPS, 7919 + seed, *((wide, wide) if wide else ()))


LONG_SEEDS = (0,)


SEEDED = 290  # programs drawn from fixed seeds that check_simulate tries besides those Hypothesis draws (cheaper;
# 300 before round 26: the programs tried in reverse cost about as much as the 10 left out)
EXAMPLES = 10  # programs that Hypothesis draws (small ones first: the empty program, one operation, ...)


@cache
def seeded(draw: Callable[[int, int], Any], count: int = SEEDED) -> list[Any]:
    """`count` cases of `random_program` or `random_queue_case`, of every size from 0 to MAX_OPS in turn.

    The wrong answers of answers/nb03.py fail on one of the first 140 programs, or of the first 25 cases of
    queues: SEEDED, and SEEDED_QUEUES, leave twice that."""
    return [draw(seed % (MAX_OPS + 1), seed) for seed in range(count)]


def programs() -> st.SearchStrategy[list[Op]]:
    """Generated programs: Hypothesis draws the size and the seed (and shrinks a failing program to its
    shortest failing beginning).  Drawn op by op, programs hold many more waits that matter than lists of
    operations that Hypothesis would build itself (it mutates each example into near copies)."""
    return st.tuples(st.integers(0, MAX_OPS), st.integers(0, 2**32 - 1)).map(lambda case: random_program(*case))


SHOWN_OPS = 80  # a longer program is shown by its name, or by its length and first operations


def _shown_program(program: Sequence[Op]) -> str:
    """A program, for a message: its name if it is the exercise's or the lecture's, else its operations (a long one:
    its name, or its length and first operations)."""
    if len(program) == len(PROGRAM) and list(program) == PROGRAM:
        return "nb03.PROGRAM"
    for order in ("depth-first", "breadth-first"):
        if len(program) == 64 and list(program) == queues_experiment(order):  # 16 streams of 4 kernels
            return f"nb03.queues_experiment({order!r})"
    if len(program) <= SHOWN_OPS:
        return repr(list(program))
    for seed in LONG_SEEDS:
        whole = long_program(seed)
        if list(program) == whole[:len(program)]:
            return f"nb03.long_program({seed})" + ("" if len(program) == len(whole) else f"[:{len(program)}]")
    return f"[{', '.join(map(repr, program[:3]))}, ...] ({len(program)} operations)"


# The rules of the task, as the hints of check_simulate say them, by what a failing program holds.
RULES = {
    "names": "an event may have the name of a stream or of a kernel, and a kernel the name of a stream: they are "
             "different things, each with its own time",
    "early wait": "a wait for an event not yet recorded at that point of the program does nothing: CUDA does not "
                  "look ahead to a later record",
    "re-record": "recording an event again moves it: a wait takes the event as its latest record before the wait "
                 "left it, whichever stream that record was on",
    "wait": "an event stands for the work queued on its stream before the record; a wait holds back only the work "
            "queued after it on its stream, and never moves a stream back in time",
    "wait_stream": "wait_stream(stream, other) waits for the work queued on `other` so far, as if an event were "
                   "recorded on `other` at that point and waited for",
    "fraction": "a kernel may take a fraction of a millisecond: keep its duration as it is",
    "kernel": "each stream runs its kernels one after another, from 0 ms, and streams are independent of each "
              "other: what must you remember about each stream as you read the program?",
}


def _rules_hint(program: Sequence[Op]) -> str:
    """The rules that the smallest program on which a simulator fails is about (never where its kernels run)."""
    recorded: list[str] = []
    early_wait = False
    for op in program:
        if op[0] == "record":
            recorded.append(op[2])
        elif op[0] == "wait":
            early_wait = early_wait or op[2] not in recorded
    kinds = {op[0] for op in program}
    shared = ({op[2] for op in program if op[0] in ("record", "wait")} & {*_streams_of(program), *_kernels(program)}
              | set(_streams_of(program)) & set(_kernels(program)))
    found = [rule for rule, holds in (
        ("names", bool(shared)),
        ("early wait", early_wait), ("re-record", len(recorded) > len(set(recorded))), ("wait", "wait" in kinds),
        ("wait_stream", "wait_stream" in kinds),
        ("fraction", any(op[0] == "kernel" and op[3] != int(op[3]) for op in program))) if holds]
    return "; ".join(RULES[rule] for rule in found[:2] or ["kernel"])


# Programs the check always asks about too (after the generated ones): one per rule of the task, and
# exercise 2's program.
SIMULATE_CASES: list[list[Op]] = [
    [("kernel", "s1", "a", 2), ("kernel", "s1", "b", 3)],
    [("kernel", "s1", "a", 2), ("kernel", "s2", "b", 3)],
    [("kernel", "s1", "a", 4), ("record", "s1", "e"), ("wait", "s2", "e"), ("kernel", "s2", "b", 1)],
    [("kernel", "s1", "a", 2), ("record", "s1", "e"), ("kernel", "s1", "c", 5), ("wait", "s2", "e"),
     ("kernel", "s2", "b", 1)],
    [("kernel", "s2", "b", 5), ("kernel", "s1", "a", 1), ("record", "s1", "e"), ("wait", "s2", "e"),
     ("kernel", "s2", "c", 1)],
    [("wait", "s2", "e"), ("kernel", "s2", "b", 1), ("kernel", "s1", "a", 3), ("record", "s1", "e")],
    [("kernel", "s1", "a", 1), ("record", "s1", "e"), ("wait", "s2", "e"), ("kernel", "s2", "b", 1),
     ("kernel", "s1", "c", 5), ("record", "s1", "e"), ("wait", "s3", "e"), ("kernel", "s3", "d", 1)],
    [("kernel", "s1", "a", 1), ("record", "s1", "e"), ("wait", "s2", "e"), ("kernel", "s1", "c", 5),
     ("record", "s1", "e"), ("kernel", "s2", "b", 1)],
    [("kernel", "s1", "a", 3), ("kernel", "s1", "b", 2), ("wait_stream", "s2", "s1"), ("kernel", "s2", "c", 1),
     ("kernel", "s1", "d", 4)],
    [("kernel", "s1", "a", 3), ("kernel", "s1", "b", 2), ("wait_stream", "s2", "s1"), ("kernel", "s1", "d", 4),
     ("kernel", "s2", "c", 1)],
    [("kernel", "a", "k1", 2), ("kernel", "b", "k2", 5), ("record", "b", "a"), ("kernel", "a", "k3", 1),
     ("wait", "c", "a"), ("kernel", "c", "k4", 1)],  # an event with the name of a stream
    [("kernel", "s1", "a", 3), ("wait", "s2", "a"), ("kernel", "s2", "b", 1), ("kernel", "s1", "c", 2),
     ("record", "s1", "a"), ("wait", "s3", "a"), ("kernel", "s3", "d", 1)],  # an event with the name of a kernel
    [("kernel", "s1", "a", 4), ("record", "s1", "e"), ("wait", "s2", "e"), ("wait_stream", "s3", "s2"),
     ("kernel", "s3", "b", 1)],  # wait_stream on a stream whose only work is a wait (round 35's adversary)
    PROGRAM,
]


CHOSEN = {tuple(program) for program in SIMULATE_CASES if program is not PROGRAM}
REVERSED = 16  # one program in 16 of the others is also tried in reverse order (each call costs the check's time)


def _misplaces(got: object, want: Timeline) -> bool:
    """True if `got` is not the timeline `want` (not a timeline of its kernels, or one kernel elsewhere)."""
    try:
        if type(got) is dict and got == want:  # the common case, at once: the same numbers in tuples
            return False
    except Exception:  # noqa: BLE001, S110 -- values that do not compare (tensors): the checks below decide
        pass
    return _timeline_problem(got, list(want)) is not None or _first_difference(got, want) is not None  # type: ignore


def _fails_on(fails: Callable[[list[Op]], bool]) -> Callable[[list[Op]], bool]:
    """`fails`, where an error that the answer raises on a smaller program counts as not failing the same way."""

    def still(program: list[Op]) -> bool:
        try:
            return fails(program)
        except Exception:  # noqa: BLE001 -- another failure than the one being made smaller
            return False

    return still


def _smallest(program: list[Op], fails: Callable[[list[Op]], bool]) -> list[Op]:
    """A smaller program on which the answer still fails: each operation that the failure does not need left out
    (twice over), then each kernel made 1 ms, and the kernels named k0, k1, ... again, where the failure stays.
    The message then shows what matters.  A long program is first cut to a beginning that still fails (halving, in
    a few calls), and shown so if that is still long (each operation left out in turn would take too long)."""
    still = _fails_on(fails)
    if len(program) > SHRINKS_AT_MOST:
        program = _failing_beginning(program, still)
        if len(program) > SHRINKS_AT_MOST:
            return program
    for _ in range(2):
        i = 0
        while i < len(program):
            shorter = program[:i] + program[i + 1:]
            if still(shorter):
                program = shorter
            else:
                i += 1
    for i, op in enumerate(program):
        simpler = [*program[:i], (*op[:3], 1), *program[i + 1:]]
        if op[0] == "kernel" and op[3] != 1 and still(simpler):
            program = simpler
    renamed = _named([("kernel", op[1], op[3]) if op[0] == "kernel" else op for op in program])
    program = renamed if renamed != program and still(renamed) else program
    renamed = _events_renamed(program)
    return renamed if renamed != program and still(renamed) else program


SHRINKS_AT_MOST = 200  # operations of a program that _smallest makes smaller one operation at a time


def _failing_beginning(program: list[Op], still: Callable[[list[Op]], bool]) -> list[Op]:
    """A beginning of `program` (which fails) that still fails, found by halving: program[:hi] fails throughout."""
    lo, hi = 0, len(program)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if still(program[:mid]):
            hi = mid
        else:
            lo = mid
    return program[:hi]


def _events_renamed(program: list[Op]) -> list[Op]:
    """The program with its events named e0, e1, ... in the order they appear, none the name of a stream."""
    streams = set(_streams_of(program))
    fresh = (name for name in (f"e{i}" for i in itertools.count()) if name not in streams)
    names: dict[str, str] = {}
    for op in program:
        if op[0] in ("record", "wait") and op[2] not in names:
            names[op[2]] = next(fresh)
    return [(op[0], op[1], names[op[2]]) if op[0] in ("record", "wait") else op for op in program]


def check_simulate(simulate: Callable[[Sequence[Op]], Timeline]) -> None:
    """simulate(program) must return each kernel's (start, end) under the stream rules, for any program:
    compared with the check's own simulator (`stream_rules`) on generated programs, and on a failure, on the
    smallest program found that still fails."""
    with exercise("simulate") as ex:
        yours = keeping(ex, ex.answer(simulate), WATCHED)

        def fails(program: list[Op]) -> bool:
            return _misplaces(yours(list(program)), stream_rules(program))

        def raised(program: list[Op], kind: type[BaseException]) -> BaseException | None:
            """What the answer raises on `program`, if it is a `kind` of error."""
            try:
                yours(list(program))
            except kind as error:
                return error
            except Exception:  # noqa: BLE001 -- another error than the one being made smaller
                return None
            return None

        returned = _Returned()
        tried = itertools.count()

        def follows_the_rules(program: list[Op]) -> None:
            """The rules on `program`, and where it synchronizes, on its kernels alone (round 20's adversary kept
            each result under its kernels, and passed: no two programs of a check had the same kernels); and, for
            the chosen programs and one in REVERSED of the others, on its operations in reverse order (round 26's
            adversary kept each result under frozenset(program), and passed: no two programs of a check held the
            same operations in orders that time them otherwise).  All in one list, changed in place between the
            calls, as a caller's (round 32's adversary kept each result under the list's identity, and passed: every
            call had a new list); and, for the same programs, asked again after the caller changed the timeline it
            got (round 32's adversary returned the dict it kept, and passed: no caller changed one)."""
            given = list(program)
            again = len(program) > 1 and (tuple(program) in CHOSEN or next(tried) % REVERSED == REVERSED - 1)
            got = follows_the_rules_once(program, given)
            if again:
                asked_after_an_edit(program, given, got)
            if any(op[0] != "kernel" for op in program):
                follows_the_rules_once([op for op in program if op[0] == "kernel"], given, KERNELS_IN_PLACE)
            if again:
                follows_the_rules_once(program[::-1], given, REVERSED_IN_PLACE)

        def asked_after_an_edit(program: list[Op], given: list[Op], got: object) -> None:
            """simulate(program) again, once the caller has changed the timeline it got (`_edited`)."""
            _edited(got)
            returned.last = None  # the check's own change: not the answer's
            call = f"simulate({_shown_program(program)})"
            given[:] = program
            again, want = yours(given), stream_rules(program)
            if _misplaces(again, want):
                ex.expect(False, f"{call} returned the right timeline; the caller then changed it ({EDITS}), and "
                                 f"{call} again, on the same program, returned a timeline that {_differs(again, want)}",
                          EDITED_HINT)
            returned.keep(call, again, want)

        def follows_the_rules_once(program: list[Op], given: list[Op], how: str = "") -> object:
            """The rules on `program`, given in the list `given` (the list of the call before, changed in place as
            `how` says, if it says anything): what the answer returned."""
            given[:] = program
            got: object
            try:
                got = yours(given)
            except RecursionError:  # a recursion once an operation (round 32): a long program runs out of stack
                got = _DEEP
            except Exception as error:  # the answer's own error: shown on the smallest program that raises it
                if is_stub(error):
                    raise
                kind = type(error)
                smaller = [next((case for case in sorted(SIMULATE_CASES, key=len) if raised(case, kind)), program),
                           _smallest(program, lambda shorter: raised(shorter, kind) is not None)]
                smallest = min(smaller, key=len)
                again = raised(smallest, kind) if len(smallest) < len(program) else None
                if again is None:
                    raise
                raise raised_on(again, smallest) from None
            if got is _DEEP:
                ex.expect(False, f"simulate({_shown_program(program)}) raised RecursionError ({len(program)} "
                                 "operations)", DEPTH_HINT)
            returned.expect_unchanged(ex, f"simulate({_shown_program(program)})")
            want = stream_rules(program)
            if _misplaces(got, want):
                if how and not _fails_on(fails)(program):  # right on a new list of the same operations
                    ex.expect(False, f"simulate({_shown_program(program)}), given {how}, returned a timeline that "
                                     f"{_differs(got, want)}; given a new list of the same operations, your simulator "
                                     "gets it right: it returned what it kept under the list it was given",
                          IN_PLACE_HINT)
                program = _smallest(program, fails)
                got, want = yours(list(program)), stream_rules(program)
            _expect_timeline(ex, lambda: f"simulate({_shown_program(program)})", got, want,
                             lambda _: _rules_hint(program), stale=lambda: _stale(fails, program))
            returned.keep(f"simulate({_shown_program(program)})", got, want)
            return got

        _at_once(ex, follows_the_rules, PROGRAM, lambda program: f"simulate({_shown_program(program)})")
        for_all(ex, programs(), follows_the_rules, examples=EXAMPLES, budget_s=0,
                chosen=SIMULATE_CASES + seeded(many_events_program, MANY_EVENTS)
                + [long_program(seed) for seed in LONG_SEEDS] + seeded(random_program),
                describe=lambda program: f"simulate({_shown_program(program)})")


register(Exercise(NOTEBOOK, "simulate", check_simulate))


def _streams_of(program: Sequence[Op]) -> list[str]:
    """The streams a program names, in the order it names them."""
    names = []
    for op in program:
        if op[0] not in ("kernel", "record", "wait", "wait_stream"):
            raise ValueError(f"unknown operation {op!r}")
        names += [op[1], op[2]] if op[0] == "wait_stream" else [op[1]]
    return list(dict.fromkeys(names))


def _run_gated(program: Sequence[Op], gate_ms: float) -> tuple[list[Interval], float, float]:
    """Run a program on the GPU behind a gate: (its timeline, how late the host was, how long it took).

    The simulator's premise is that the host queues everything at time 0.  A real host queues one
    operation after the other, and a slow or busy one (two shared cores) can queue a kernel
    milliseconds after the GPU could have started it: then the GPU shows the host's pace, not the
    stream rules.  So every stream first waits for a gate, a kernel of `gate_ms` on a stream of its
    own, and the timeline starts when the gate opens.  The gate cannot start before the host queued
    it, so it opens at least its duration (measured on the GPU) after the host began; the host was
    late by its own time to queue the program (measured on the host) minus that duration, if
    positive (zero or less: the GPU saw the whole program before it started any of it).
    Returns the intervals, that lateness, and the host's time to queue the program, in ms.
    """
    require_cuda("run_on_gpu()")
    calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
    torch.cuda.synchronize()
    names = _streams_of(program)
    gate = torch.cuda.Stream()
    streams = {name: torch.cuda.Stream() for name in names}
    start, opened = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    with torch.cuda.stream(gate):
        start.record(gate)
        _sleep_ms(gate_ms)
        timeline = StreamTimeline()  # its origin is recorded on the gate stream: the gate's end
        opened.record(gate)
    for stream in streams.values():
        stream.wait_event(opened)
    events: dict[str, torch.cuda.Event] = {}
    for op in program:
        kind = op[0]
        if kind == "kernel":
            _, stream, name, ms = op
            with timeline.span(name, stream=streams[stream], lane=f"{stream} stream"):
                _sleep_ms(ms)
        elif kind == "record":
            _, stream, event = op
            events[event] = streams[stream].record_event()
        elif kind == "wait":
            _, stream, event = op
            if event in events:  # an event never recorded: nothing to wait for (CUDA does the same)
                streams[stream].wait_event(events[event])
        else:  # "wait_stream"
            _, stream, other = op
            streams[stream].wait_stream(streams[other])
    queue_ms = (time.perf_counter() - t0) * 1e3
    intervals = timeline.intervals()  # waits for the GPU
    return intervals, queue_ms - start.elapsed_time(opened), queue_ms


GATE_MS = 10.0  # the first gate; a host that needs longer to queue the program gets twice its time


def _run_in_time(program: Sequence[Op]) -> tuple[list[Interval], float]:
    """`_run_gated` with a gate long enough for this host: the intervals, and how late the host was."""
    gate_ms = GATE_MS
    for _ in range(TRIES):
        intervals, late_ms, queue_ms = _run_gated(program, gate_ms)
        if late_ms <= 0:
            break
        gate_ms = max(2 * queue_ms, 2 * gate_ms)
    return intervals, late_ms


def run_on_gpu(program: Sequence[Op]) -> list[Interval]:
    """Run a program on the GPU, each kernel a `gpu_sleep` of its duration, and time it.

    As `simulate` assumes, the GPU starts once the host has queued the whole program (a gate holds
    every stream back until then).  The timeline's lanes are the program's streams: "copy" becomes
    the lane "copy stream"; times are in ms from the moment the GPU starts.
    """
    return _run_in_time(program)[0]


# A program that measures the GPU's own delay between two kernels: on one stream (k1 then k2, with
# a record between them), and across streams through an event (k1, then k3 on another stream).
_GAP_PROGRAM: list[Op] = [
    ("kernel", "a", "k1", 1.0), ("record", "a", "e"), ("kernel", "a", "k2", 1.0),
    ("wait", "b", "e"), ("kernel", "b", "k3", 1.0),
]


def dependency_gap_ms(runs: int = 5) -> float:
    """The GPU's largest delay, in ms, between a kernel's end and the start of one that waits for it.

    Measured with `_GAP_PROGRAM`, the largest of `runs` runs: the start of a stream's first kernel
    after the gate opens, of a kernel after the one before it on its stream, and after an event it
    waits for.  A few microseconds on a big GPU; more on a shared one (MPS) or a slow driver.
    """
    gaps = []
    for _ in range(runs):
        iv = {i.name: i for i in _run_in_time(_GAP_PROGRAM)[0]}
        gaps += [iv["k1"].start_ms, iv["k2"].start_ms - iv["k1"].end_ms, iv["k3"].start_ms - iv["k1"].end_ms]
    return max(0.0, *gaps)


def allowed_difference_ms(kernels: int, gap_ms: float, late_ms: float) -> float:
    """How far, in ms, a kernel may run from where a right simulator puts it, given what was measured.

    The simulator is given the kernels' measured durations, so only start times can differ.  On the
    GPU, a kernel starts at the latest of: its stream's previous kernel's end, the moments of the
    events it waits for (other kernels' ends), and when the host had queued it (at most `late_ms`
    after the start, if the host was late); each of these dependencies adds the GPU's own delay, at
    most `gap_ms` as measured.  Along a chain of dependencies through at most all the program's
    kernels (and the gate), the delays add up: a kernel starts at most
    late_ms + (kernels + 1) * gap_ms after the simulator's start.  Four times the delays, for one
    larger than those measured (a wrong simulator is off by whole kernels, milliseconds).
    """
    return max(0.0, late_ms) + 4 * (kernels + 1) * gap_ms


def _add_to_legend(ax, handle, label: str) -> None:
    """Add one entry to the legend that plot_timeline drew (or start a legend)."""
    legend = ax.get_legend()
    handles = list(getattr(legend, "legend_handles", None) or getattr(legend, "legendHandles", [])) if legend else []
    labels = [t.get_text() for t in legend.get_texts()] if legend else []
    ax.legend(handles + [handle], labels + [label], loc="upper left", bbox_to_anchor=(1.0, 1.0))


def with_durations(program: Sequence[Op], measured: Sequence[Interval]) -> list[Op]:
    """The program with each kernel's duration replaced by the one it took on the GPU."""
    took = {iv.name: iv.end_ms - iv.start_ms for iv in measured}
    return [(*op[:3], took[op[2]]) if op[0] == "kernel" else op for op in program]


def check_simulate_on_gpu(simulate: Callable[[Sequence[Op]], Timeline], program: Sequence[Op] = PROGRAM) -> None:
    """Run `program` on the GPU, plot it, and compare it with simulate(program) (black lines).

    Tolerance from what this run measures, not a fixed number of ms (a fixed one, 10% + 1 ms, failed on
    a GPU shared through MPS with two host cores, at 10 ms): simulate is given the durations the
    kernels took on this GPU (a gpu_sleep runs longer on a slower or throttled clock), the program runs
    behind a gate so that the host's pace does not count (`_run_gated`), and what is left, the GPU's
    delay between dependent kernels, is measured (`dependency_gap_ms`) and bounded
    (`allowed_difference_ms`): a fraction of a millisecond, while a simulator that ignores a wait is
    off by the duration of the kernel waited for.  A run that a busy machine disturbed is tried again;
    a wrong simulator is off in every run.
    """
    if not has_cuda():
        with exercise("simulate on the GPU"):
            raise LeftForGPU("", "running the program on CUDA streams and comparing it with simulate(); on the "
                                 "CPU, check_simulate above has checked your simulator against the stream rules")
        return
    require_cuda("check_simulate_on_gpu")
    with exercise("simulate on the GPU") as ex:
        yours = ex.answer(simulate)
        kernels = _kernels(program)
        problem = _timeline_problem(yours(list(program)), kernels)
        ex.expect(problem is None, f"simulate {problem}",
                  "return one (start, end) pair for each kernel of the program")
        # the GPU runs one program; the stream rules first, on the check's chosen programs (round 35's adversary: a
        # wait_stream that ignored the other stream's waits was right on the notebook's program, and passed here)
        def follows_the_rules(case: list[Op]) -> None:
            _expect_timeline(ex, lambda: f"simulate({_shown_program(case)})", yours(list(case)), stream_rules(case),
                             lambda _: _rules_hint(case))

        for case in SIMULATE_CASES:
            follows_the_rules(case)
        for _ in range(TRIES):
            measured, late_ms = _run_in_time(program)
            allowed = allowed_difference_ms(len(kernels), dependency_gap_ms(), late_ms)
            timed = with_durations(program, measured)
            got = yours(timed)
            problem = _timeline_problem(got, kernels)
            ex.expect(problem is None, f"simulate(the program, with the durations this GPU measured) {problem}",
                      "return one (start, end) pair for each kernel of the program, whatever its durations")
            assert isinstance(got, Mapping)
            predicted = {name: _pair(got[name]) or (0.0, 0.0) for name in kernels}
            worst = max(max(abs(iv.start_ms - predicted[iv.name][0]), abs(iv.end_ms - predicted[iv.name][1]))
                        for iv in measured)
            if worst <= allowed:
                break
        ax = plot_timeline(measured, title="bars: the GPU; black lines: simulate()")
        lanes = list(dict.fromkeys(iv.lane for iv in measured))
        for iv in measured:
            start, end = predicted[iv.name]
            ax.plot([start, end], [lanes.index(iv.lane)] * 2, color="black", linewidth=3)
        _add_to_legend(ax, Line2D([], [], color="black", linewidth=3), "simulate()")
        total = max(iv.end_ms for iv in measured)
        print(f"largest difference between simulate() and the GPU: {worst:.2f} ms in {total:.0f} ms "
              f"(the GPU's own delays allow {allowed:.2f} ms)")
        ex.expect(worst <= allowed,
                  f"a kernel ran {worst:.1f} ms away from where simulate put it (the run took {total:.1f} ms; "
                  f"the GPU's own delays explain {allowed:.2f} ms)",
                  "compare the black lines (your prediction) with the bars (the GPU)")


register(Exercise(NOTEBOOK, "simulate", check_simulate_on_gpu, gpu=True, label="simulate on the GPU",
                  cpu_checks=0))


# ------------------------------------------------------------------------------------------
# Exercise 4: the prefetching loop
# ------------------------------------------------------------------------------------------
BATCHES, ROWS, COLS = 8, 2048, 2048  # the races: 8 batches of 16 MiB in pinned host memory
# (round 26's adversary copied float64 batches into float32 buffers, and passed: no batch was float64)
LOOP_DTYPES = (torch.float32, torch.float16, torch.int32, torch.uint8, torch.float64, torch.int64, torch.bfloat16)
_runs = itertools.count(1)

# (the caller, how many batches, their shape, dtype[, the caller's grad mode: GRAD_MODES, "grad" if left out])
Loop = tuple[Any, ...]


def loops(callers: st.SearchStrategy[str | None]) -> st.SearchStrategy[Loop]:
    """1 to 9 batches of one shape (1 to 3 dimensions, small) and one dtype (LOOP_DTYPES), called in each of
    GRAD_MODES."""
    shape = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)
    return st.tuples(callers, st.integers(1, 9), shape, st.sampled_from(LOOP_DTYPES),
                     st.sampled_from(tuple(GRAD_MODES)))


def _loop_call(loop: Loop) -> str:
    _, count, shape, dtype = loop[:4]
    return (f"prefetch_loop({count} batch{'es' * (count != 1)} of shape {shape}, {dtype}, step, copy_stream)"
            + _under(_grad_mode(loop)))


LARGE = ("allocation.large_pool.allocated", "allocated_bytes.large_pool.allocated")  # running count, running bytes


def _large_allocations(fn: Callable[[], object]) -> tuple[int, int]:
    """How many blocks over 1 MiB the caching allocator hands out while fn() runs, and their bytes (notebook 01):
    one allocation of eight batches is one block, but eight batches' worth of bytes."""
    before = [torch.cuda.memory_stats()[key] for key in LARGE]
    fn()
    torch.cuda.synchronize()
    count, size = (torch.cuda.memory_stats()[key] - was for key, was in zip(LARGE, before))
    return count, size


def _batches() -> list[torch.Tensor]:
    """The races' pinned host batches, whose values differ at every call, so stale GPU memory never matches."""
    gen = torch.Generator().manual_seed(1000 + next(_runs))
    return [torch.randn(ROWS, COLS, generator=gen).pin_memory() for _ in range(BATCHES)]


def _shifted(batches: list[torch.Tensor]) -> list[torch.Tensor]:
    """The same batches, each value moved by 1 in place: new values for the next run, for a few milliseconds
    instead of a new set (call it when no copy from them is in flight)."""
    for b in batches:
        b.add_(1.0)
    return batches


def _small_batches(count: int, shape: tuple[int, ...], dtype: torch.dtype, pinned: bool) -> list[torch.Tensor]:
    """`count` batches, new ones at every call, of values that a narrower dtype changes, and that doubling keeps
    exact: floats drawn with every bit of their mantissa (randn in float32, or float64 for float64 batches, then cast),
    integers up to half their dtype's range (beyond int32 and float64's 53 bits for int64, beyond float32's 24 bits for
    int32).  Round 32's adversary copied float32 batches as bfloat16, or int64 ones as int32, into buffers of the right
    dtype, and passed: the batches were whole numbers below 100, exact in every dtype."""
    gen = torch.Generator().manual_seed(next(_runs))
    if dtype.is_floating_point:
        drawn = torch.float64 if dtype == torch.float64 else torch.float32
        batches = [(torch.randn(shape, generator=gen, dtype=drawn) * 8).to(dtype) for _ in range(count)]
    else:
        high = torch.iinfo(dtype).max // 2
        low = 0 if torch.iinfo(dtype).min == 0 else -high
        batches = [torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype) for _ in range(count)]
    return [b.pin_memory() for b in batches] if pinned else batches


def _loop_outputs_problem(got: object, count: int, gpu: bool) -> str | None:
    """None if `got` is a list of `count` tensors (on the GPU), else what is wrong."""
    if not isinstance(got, (list, tuple)) or len(got) != count:
        return f"returned {_brief(got)}, not a list of {count} outputs"
    for i, out in enumerate(got):
        if not isinstance(out, torch.Tensor):
            return f"returned {what_returned(out)} as output {i}, not what step returned"
        if gpu and not out.is_cuda:
            return f"returned output {i} on {out.device}, not the output of step on the GPU"
    return None


def _steps_problem(seen: Sequence[tuple[Any, str, int]], current: Any, host: set[int]) -> str | None:
    """None if every step ran on the caller's stream (where one is known), with its batch in GPU memory."""
    if current is not None and any(stream != current for stream, _, _ in seen):
        return "called step on another stream than the caller's"
    if any(device != "cuda" and ptr in host for _, device, ptr in seen) or (
            current is not None and any(device != "cuda" for _, device, _ in seen)):
        return "called step on a batch in host memory"
    return None


def _noting(seen: list, work: Callable[[torch.Tensor], torch.Tensor],
            sleep_ms: Callable[[], float] = lambda: 0.0) -> Callable[[torch.Tensor], torch.Tensor]:
    """The check's step: notes where it ran and on what memory, keeps its stream busy for `sleep_ms()` first."""

    def step(x: torch.Tensor) -> torch.Tensor:
        seen.append((torch.cuda.current_stream() if has_cuda() else None, x.device.type,
                     x.untyped_storage().data_ptr()))
        if sleep_ms():
            _sleep_ms(sleep_ms())
        return work(x)

    return step


def _loop_values(ex: Any, yours: Callable, gpu: Any = None) -> Callable[[Loop], None]:
    """The property of any loop, from any caller: output i is step(batch i), step runs on the caller's stream on
    the GPU, and the caller reads the outputs on its stream right after the call.  On a CPU (`gpu`, cuda_on_cpu's
    GPUOnTheCPU), the GPU memory the loop asks for too, besides the steps', at every size drawn (round 22's adversary
    made a new tensor per batch for batches under 1000 elements, and passed: memory was counted on larger ones
    only)."""

    def holds(loop: Loop) -> None:
        kind, count, shape, dtype = loop[:4]
        mode = _grad_mode(loop)
        seen: list = []
        modes: list[tuple[bool, bool, bool]] = []  # autograd's mode and autocast's, as each step ran (_modes_now)
        by_steps: set[int] = set()  # the places in gpu.placed of the memory the steps asked for
        tracked: list[bool] = []  # whether each output step returned requires grad (it does where the caller's mode
        # records: step adds a parameter to a float batch, as a model's forward does)
        params: list[torch.Tensor | None] = []  # each step's parameter (None for an integer batch)

        def work(x: torch.Tensor) -> torch.Tensor:
            modes.append(_modes_now())
            first = len(gpu.placed) if gpu is not None else 0
            if x.is_floating_point():
                # A parameter added (0), not multiplied: the step saves nothing of its buffer for backward.  With two
                # buffers written again batch after batch, a step that saves its input (x * w: w's gradient needs x)
                # can be backpropagated only until the next copy into its buffer (autograd's version counter): after
                # the loop, for the last two batches only (round 79's adversary ran the course's own loop so).
                param = torch.zeros((), dtype=x.dtype, device=x.device, requires_grad=True)
                out = x * 2 + param
            else:
                param, out = None, x * 2
            by_steps.update(range(first, len(gpu.placed) if gpu is not None else 0))
            tracked.append(out.requires_grad)
            params.append(param)
            return out

        with _caller(kind) as caller:
            copy_stream = torch.cuda.Stream()
            batches = _small_batches(count, shape, dtype, pinned=True)  # on a CPU, pinned as cuda_on_cpu imitates it
            want = [b * 2 for b in batches]  # on the host
            placed = len(gpu.placed) if gpu is not None else 0
            with GRAD_MODES[mode]():  # the caller's grad mode, around the call and its reads
                caller_modes = _modes_now()
                got = yours(batches, _noting(seen, work), copy_stream)
                called = len(gpu.placed) if gpu is not None else 0  # what the call made, not the reads below
                after = torch.cuda.current_stream()
                problem = _loop_outputs_problem(got, count, gpu=caller is not None)
                with torch.cuda.stream(None if caller is None else caller.stream):  # read as the caller reads
                    copies = [g.clone() for g in got] if problem is None else []  # type: ignore[union-attr]
        torch.cuda.synchronize()
        call = _loop_call(loop) + _said(caller)
        ex.expect(problem is None, f"{call} {problem}", "append step(x) for every batch, in order, and return the list")
        if caller is not None:
            ex.expect(after == caller.stream, f"{call}: after prefetch_loop returned, the current stream was not the "
                                              "caller's", "leave the caller's stream current when you return: "
                                                          "`with torch.cuda.stream(s):` restores it at its end")
        # round 20's adversary ran the steps under torch.no_grad(), and passed: step's outputs had no autograd history
        # round 22's adversary ran them under torch.enable_grad(), and passed: every caller had grad on
        # round 26's adversary ran a warm-up step first (step called count + 1 times), and passed: no check counted
        ex.expect(len(seen) == count, f"{call}: prefetch_loop called step {len(seen)} times for {count} "
                                      f"batch{'es' * (count != 1)}",
                  "call step once per batch: a step is the caller's work (an optimizer's update, a metric), and a "
                  "warm-up or a second call applies it again")
        # round 133's adversary returned [y.detach() for y in outputs], and passed: no step's output required grad
        cut = [i for i, (g, r) in enumerate(zip(got or [], tracked)) if problem is None and r and not g.requires_grad]
        ex.expect(not cut, f"{call}: the outputs for batches {cut} do not require grad, though step's did",
                  HISTORY_HINT)
        # and a backward through each reaches step's parameter (an output detached, then marked requires_grad_(),
        # requires grad and reaches nothing)
        unreached = _params_unreached(got, params, tracked) if problem is None and not cut else []
        ex.expect(not unreached, f"{call}: a backward through the outputs for batches {unreached} does not reach "
                  "step's parameter, though one through step's own output does", HISTORY_HINT)
        changed = [i for i, ran in enumerate(modes) if ran != caller_modes]
        ex.expect(not changed, f"{call}: step ran with " + (
            _changed_mode(modes[changed[0]], caller_modes) if changed else "") + f" for batches {changed}",
                  "step runs as the caller would run it: under torch.no_grad(), inference_mode() or autocast, its "
                  "outputs lose their autograd history or change their dtype; under torch.enable_grad(), a caller "
                  "with autograd off gets graphs it did not ask for")
        if gpu is not None and count > 2:
            # The memory the loop asked for, the steps' left out, in blocks of a batch's bytes or more, each rounded
            # up as the GPU's allocator rounds it (512 bytes: two buffers cut from one allocation hold 2 batches)
            size = math.prod(shape) * batches[0].element_size()
            blocks = [n for i, n in enumerate(gpu.placed[placed:called], placed) if i not in by_steps and n >= size]
            held = sum(map(_rounded, blocks)) / _rounded(size)
            ex.expect(held <= HELD_AT_MOST, f"{call}: made GPU memory for {held:.3g} batches ({len(blocks)} blocks of "
                                            f"a batch's bytes or more); two buffers, made once, hold 2", BUFFERS_HINT)
        host = {b.untyped_storage().data_ptr() for b in batches}
        problem = _steps_problem(seen, None if caller is None else caller.stream, host)
        ex.expect(problem is None, f"{call} {problem}",
                  "step runs on the caller's current stream, on a batch that the copy stream has put in GPU memory")
        bad = [i for i, (c, w) in enumerate(zip(copies, want)) if c.dtype != w.dtype or c.shape != w.shape
               or not torch.equal(c.cpu(), w)]
        reshaped = any(copies[i].dtype != want[i].dtype or copies[i].shape != want[i].shape for i in bad)
        # outputs of no batch at all: the values changed on their way (round 32: a batch cast to a narrower dtype
        # before its copy into a buffer of the right one), not a buffer read before or after its batch was there
        altered = not reshaped and not any(torch.equal(copies[i].cpu(), w) for i in bad for w in want)
        ex.expect(not bad, f"{call}: the outputs of batches {bad} are not step(batch)",
                  "a buffer of another dtype or shape than the batches changes them: make the buffers like the "
                  "batches" if reshaped else
                  "each batch reaches step as the caller filled it, every bit of it: a conversion on its way to the "
                  "GPU changes its values, even into a buffer of the batch's own dtype"
                  if altered else
                  "output i is step(batch i on the GPU): which buffer holds batch i when step reads it?")

    return holds


HISTORY_HINT = ("return what step returned, its autograd history too (a caller's backward through it reaches step's "
                "parameters): .detach(), .data, a copy made without autograd, or a new leaf marked requires_grad_(), "
                "cuts it")


def _params_unreached(got: Sequence[torch.Tensor], params: Sequence[torch.Tensor | None],
                      tracked: Sequence[bool]) -> list[int]:
    """The batches i whose returned output, where step's own output required grad, gives step's parameter no gradient
    in a backward (the check's step saves nothing of its input: its backward needs no buffer, rewritten since)."""
    unreached = []
    for i, (out, param, required) in enumerate(zip(got, params, tracked, strict=False)):
        if param is None or not required:
            continue
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The AccumulateGrad node's stream does not match")  # (fan_out's)
            try:
                (grad,) = torch.autograd.grad(out.sum(), param, allow_unused=True)
            except RuntimeError:  # an output cut from the graph (no grad_fn), or one whose graph was freed
                grad = None
        if grad is None:
            unreached.append(i)
    torch.cuda.synchronize()
    return unreached


def _rounded(nbytes: int) -> int:
    """`nbytes` as the GPU's caching allocator asks for them: rounded up to a multiple of 512."""
    return -(-nbytes // 512) * 512


# Whether the races' step multiplies by a parameter (its output requires grad where autograd records), and the
# caller's autograd mode around the call and its reads (GRAD_MODES): round 79's adversary skipped the waits for the
# steps (the consumed events) where autograd is off ("evaluation: a step is done with its input once it returns"), and
# PASSed on the H200: every race called the loop with autograd on, and the values part, which runs no_grad and
# inference_mode, has tiny batches and no slow stream.  Each race of a kind of caller takes the next one in turn
# (`_in_turn`): over the four kinds, every race meets each.
LOOP_RACE_GRADS: tuple[tuple[bool, str], ...] = ((True, "grad"), (True, "no_grad"), (False, "grad"),
                                                 (True, "inference_mode"))


def _step_grad_said(grad: tuple[bool, str]) -> str:
    """", step without a parameter, called under torch.no_grad()", or less, for a race's (parameter, mode)."""
    return ("" if grad[0] else ", step without a parameter") + _under(grad[1])


def _loop_race(ex: Any, yours: Callable, kind: str, name: str, timing: dict[str, float],
               batches: list[torch.Tensor], grad: tuple[bool, str] = (False, "grad")) -> None:
    """One race of prefetch_loop, made wide: "slow copies" (every stream the loop queues work on, copy_stream
    included, starts late: streams.widened) or "slow steps" (each step keeps the caller's stream busy before
    it reads its batch; once the first step is done, a second call of the loop, from another stream, copies
    batches of -inf; and new tensors are made on copy_stream as soon as the loop returns).  `grad`: whether the
    step multiplies by a parameter, and the caller's autograd mode (LOOP_RACE_GRADS)."""
    step_ms = 0.0 if name == "slow copies" else max(4 * timing["copy_ms"], 4 * timing["host_ms"], 2.0)
    seen: list = []
    first_step = torch.cuda.Event()  # recorded after the first step's work, on the stream it ran on
    weight = torch.ones((), device="cuda", requires_grad=True) if grad[0] else None  # times 1: the same sums

    def work(x: torch.Tensor) -> torch.Tensor:
        out = x.sum(dim=1) if weight is None else x.sum(dim=1) * weight
        if len(seen) == 1:
            first_step.record()
        return out

    step = _noting(seen, work, lambda: step_ms)
    torch.cuda.synchronize()
    batches = _shifted(batches)
    again = torch.full((ROWS, COLS), -math.inf).pin_memory() if name == "slow steps" else None
    torch.cuda.empty_cache()  # the only free block of a batch's size will be the scratch below
    with torch_caller(kind) as caller:
        current = caller.stream
        copy_stream = torch.cuda.Stream()
        scratch = torch.empty(ROWS, COLS, device="cuda")  # the caller's earlier work, on its stream (late, if busy)
        want = [scratch.copy_(b, non_blocking=True).sum(dim=1) for b in batches]
        scratch.fill_(math.nan)  # a loop that writes this memory before the caller is done with it reads NaN
        del scratch
        late = widened(WINDOW_MS, spare=(current,)) if name == "slow copies" else nullcontext()
        # With slow copies (copy_stream starts late anyway), copy_stream is held busy while the loop queues its work:
        # what the loop queued there runs after `held`, and copy_to, recorded once the loop returns, marks its end
        # (an idle stream would time the host instead). Not with slow steps: there a first copy that does not wait
        # for the caller's earlier work must be free to run at once.
        held, copy_to = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if name == "slow copies":
            gpu_sleep(HOLD_MS / 1e3, copy_stream)
        held.record(copy_stream)
        with GRAD_MODES[grad[1]]():  # the caller's autograd mode, around the calls and the reads
            t0 = time.perf_counter()
            with late:
                got = yours(batches, step, copy_stream)
            timing.setdefault("host_ms", (time.perf_counter() - t0) * 1e3 / len(batches))
            copy_to.record(copy_stream)  # after the copies that the loop queued on copy_stream
            held_through = not held.query()  # the loop returned before copy_stream's hold ended: the timing counts
            after = torch.cuda.current_stream()
            problem = _loop_outputs_problem(got, len(batches), gpu=True)
            junk = []
            if name == "slow steps":
                # A second call, from another stream, once this call's first step is done: this call's later steps
                # still run (slow), and its buffers are its own.
                other, copy_again = torch.cuda.Stream(), torch.cuda.Stream()
                other.wait_event(first_step)
                with torch.cuda.stream(other):
                    yours([again] * len(batches), lambda x: x.sum(dim=1), copy_again)
                # Memory the loop freed, handed out again on copy_stream at once.
                with torch.cuda.stream(copy_stream):
                    junk = [torch.full((ROWS, COLS), math.inf, device="cuda") for _ in range(2)]
            with torch.cuda.stream(current):  # the caller reads the outputs: no synchronize before it
                copies = [g.clone() for g in got] if problem is None else []  # type: ignore[union-attr]
    torch.cuda.synchronize()
    del junk
    said = f"{caller.says}{_step_grad_said(grad)}, with {name}"
    ex.expect(problem is None, f"{said}: prefetch_loop {problem}", "append step(x) for every batch, in order")
    ex.expect(after == current, f"{said}: after prefetch_loop returned, the current stream was not the caller's",
              "leave the caller's stream current when you return: `with torch.cuda.stream(s):` restores it")
    problem = _steps_problem(seen, current, set())
    ex.expect(problem is None, f"{said}: prefetch_loop {problem}",
              "step runs on the caller's current stream, on a batch that the copy stream has put in GPU memory")
    bad = [i for i, (c, w) in enumerate(zip(copies, want)) if not torch.equal(c, w)]
    if name == "slow copies":
        hint = "a step read its buffer before the copy into it was done: which event must the caller's stream wait for?"
    elif any(bool((copies[i] == -math.inf).any()) for i in bad):
        hint = ("buffers kept from one call to the next are shared by every caller: a second call of your loop, from "
                "another stream, copied into them while this call's steps were still reading them")
    elif any(bool(copies[i].isnan().any()) for i in bad):
        hint = ("a copy wrote into memory that the caller's stream was still using for its earlier work (your buffers "
                "got that memory when the caller freed it): what must copy_stream wait for before its first copy?")
    elif any(bool(copies[i].isinf().any()) for i in bad):
        hint = ("a tensor made on copy_stream after your loop returned got the memory of a buffer that a step was "
                "still reading: on which stream's pool are your buffers, and which stream reads them?")
    else:
        hint = ("a copy overwrote a buffer that a step was still reading: which event must the copy stream wait for "
                "before it writes into a buffer again?")
    ex.expect(not bad, f"{said}: the caller read wrong outputs for batches {bad}", hint)
    # The copies of batches 1, 2, ... on copy_stream: there they take a copy's time each at least (and more here, where
    # copy_stream starts late or waits for slow steps); on a stream of the loop's own, copy_stream stays idle.
    on_copy_ms, copies_ms = held.elapsed_time(copy_to), (len(batches) - 1) * timing["copy_ms"]
    ex.expect(on_copy_ms >= copies_ms / 2 or not held_through or name != "slow copies",
              f"{said}: copy_stream had {on_copy_ms:.2f} ms of work while your loop queued its copies, where the "
              f"copies of {len(batches) - 1} batches take {copies_ms:.1f} ms: the copies ran on another stream",
              "copy each next batch on the copy_stream that the caller gives you: the caller may wait for that stream "
              "to know when it can fill its pinned batches again")


class _RecordStreams(TorchFunctionMode):
    """Notes every Tensor.record_stream call in the block (and lets it run)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[object] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if func is torch.Tensor.record_stream:
            self.calls.append(args[1:])
        return func(*args, **(kwargs or {}))


@contextmanager
def _counting_record_stream() -> Iterator[list[object]]:
    with _RecordStreams() as mode:
        yield mode.calls


# The batches' worth of GPU memory that two buffers may take, on a GPU and on a CPU alike: 2, and room for rounding
# a block up (the caching allocator's 512 bytes; round 20's adversary: two buffers cut from one allocation, each
# rounded up to 512 bytes, made 2.05 batches of 64 x 33 float32, and FAILed on the CPU only, where the bar was 2)
HELD_AT_MOST = 2.5
KEPT_HINT = ("allocate the two buffers in each call: buffers kept from one call to the next are shared by every "
             "caller, whatever stream it calls from, and their memory is never given back")
LEAK_HINT = ("the buffers are the call's own: let them go when it returns (memory kept alive at every call is never "
             "given back); the allocator reuses their memory safely if each stream's use of them is ordered by "
             "events, or joined by the caller's stream at the end")
BUFFERS_HINT = ("the GPU memory your loop asks for grows with the number of batches: every GPU tensor it makes (by "
                ".to('cuda'), .cuda(), torch.empty(...), or an operation's result) is an allocation; the task's two "
                "buffers are all the memory the batches get, however many batches come")
HOST_WAIT_HINT = ("the loop only queues the work and returns: something in it made the host wait for the GPU's earlier "
                  "work. A synchronize does, and so does every operation that needs a result or memory on the host "
                  "first: .item(), .cpu(), a copy between the GPU and pageable (not pinned) host memory")
SPEED_HINT = ("the copies and the steps took turns: to overlap, step(batch i) may wait for batch i's copy and nothing "
              "queued after it, and batch i+1's copy for the steps that read its buffer before and nothing later; a "
              "wait covers everything queued on the other stream before it (wait_stream, or an event recorded after "
              "more work), and a host that waits for the GPU cannot queue ahead")
TWO_HINT = ("with one buffer the next batch's copy must wait until the step has read the buffer, so copies and "
            "steps take turns: the copy stream fills one buffer while the step reads the other")


def _loop_host_waits(ex: Any, yours: Callable, batches: list[torch.Tensor],
                     grad: tuple[bool, str] = (False, "grad")) -> None:
    """The host does not wait: called from a caller whose stream is still busy with earlier work for a window,
    the loop returns before the window ends (an event's query, as in fan_out's races).  A run that a slow or busy
    host spoiled is tried again with a window twice as long; a loop that waits for the GPU fails every try.  `grad`:
    whether the step multiplies by a parameter, and the caller's autograd mode (LOOP_RACE_GRADS)."""
    weight = torch.ones((), device="cuda", requires_grad=True) if grad[0] else None
    for k in range(TRIES):
        window_ms = WINDOW_MS * 2**k
        torch.cuda.synchronize()
        with torch_caller("busy", busy_ms=window_ms) as caller, GRAD_MODES[grad[1]]():
            copy_stream = torch.cuda.Stream()
            t0 = time.perf_counter()
            yours(batches, lambda x: x.sum(dim=1) if weight is None else x.sum(dim=1) * weight, copy_stream)
            host_ms = (time.perf_counter() - t0) * 1e3
            waited = caller.busy_end.query()
        torch.cuda.synchronize()
        if not waited:
            break
    ex.expect(not waited, f"{caller.says}{_step_grad_said(grad)}: prefetch_loop returned only after the GPU had done "
                          f"the caller's {window_ms:.0f} ms of earlier work (the host waited {host_ms:.0f} ms)",
              HOST_WAIT_HINT)


def _loop_races(ex: Any, yours: Callable, timing: dict[str, float],
                batches: list[torch.Tensor]) -> Callable[[str], None]:
    """The property of prefetch_loop's races, for one kind of caller: slow copies, then slow steps."""

    def holds(kind: str) -> None:
        for race, name in enumerate(("slow copies", "slow steps")):
            _loop_race(ex, yours, kind, name, timing, batches, _in_turn(kind, race, LOOP_RACE_GRADS))

    return holds


def check_prefetch_loop(
    prefetch_loop: Callable[[Sequence[torch.Tensor], Callable[[torch.Tensor], torch.Tensor], torch.cuda.Stream],
                            list[torch.Tensor]],
) -> None:
    """prefetch_loop(batches, step, copy_stream) must return [step(batch on the GPU) for each batch],
    copying the next batch on copy_stream while step runs on the caller's stream: correct whatever the
    timing and whoever calls it, with two GPU buffers (not a new tensor per batch), and faster than
    copying and computing one after the other.

    Two properties over every kind of caller (streams.TORCH_CALLERS).  Values: 1 to 9 small batches of any shape and
    dtype, from a caller with autograd on, off, in inference mode or under autocast (step runs once per batch, in
    the caller's modes; on a CPU, the GPU memory the loop asks for is counted there too); output i is step(batch i),
    its autograd history too (a backward through it reaches step's parameter: the check's step adds one, and saves
    nothing of its buffer, which later copies overwrite), each step on the caller's stream with its batch in GPU
    memory, as the caller reads them on its stream.  Then,
    from a busy caller, the host does not wait: the loop returns before the caller's earlier work is done.  Races,
    with 8 batches of 16 MiB: slow copies (every stream the loop queues work on starts late) and slow steps (with a
    second call of the loop from another stream while the steps still run, and memory the loop frees, handed out
    again on copy_stream at once), with the caller's earlier work on the memory the buffers get (late, for a busy
    caller).  The host's wait and each race with step's output requiring grad or not, called with autograd on or off
    (LOOP_RACE_GRADS; the races in turn: over the four kinds of caller, every race meets each).  Then, from the
    default stream: the GPU memory the loop allocates, in batches (blocks of a batch's size
    or more, counted and summed: one tensor of every batch is one allocation, but not two buffers), and the speed.

    Durations and the bar for "faster" come from what the check measures on this machine: a copy's
    time on this GPU's link (copy_ms), and the host's time to queue one batch of your loop (host_ms).
    The steps are made at least twice as long as the host's time per batch, so that the host stays
    ahead of the GPU and the GPU's timeline shows the loop's overlap rather than the host's pace (a
    slow host otherwise makes any loop look serial); and the loop must save at least half of what a
    perfect overlap saves, one copy per batch but the first, rather than a fixed 20%.
    """
    if not has_cuda():
        return _check_prefetch_loop_on_cpu(prefetch_loop)
    with exercise("prefetch_loop") as ex:
        require_cuda("check_prefetch_loop")
        bare = ex.answer(prefetch_loop)  # timed alone, below
        yours = keeping(ex, bare, WATCHED_GPU)
        calibrate_sleeps()  # both libraries' sleeps, now: calibrating waits for the GPU
        holds = _loop_values(ex, yours)
        _at_once(ex, holds, ("default", BATCHES, (3, 5), torch.float32), _loop_call)
        for_all(ex, loops(torch_callers()), holds, examples=12, budget_s=GPU_VALUES_BUDGET_S,
                chosen=[(kind, BATCHES, (3, 5), torch.float32) for kind in TORCH_CALLERS]
                + [("default", 1, (1,), torch.uint8), ("with", 9, (2, 3, 4), torch.float16),
                   ("default", 3, (2, 2), torch.float32, "no_grad"), ("with", 4, (1,), torch.uint8, "inference_mode"),
                   ("default", 3, (2, 2), torch.float64), ("with", 3, (2, 3), torch.int64, "autocast")],
                describe=_loop_call)

        def copy_all(batches: Sequence[torch.Tensor]) -> list[torch.Tensor]:
            return [b.to("cuda", non_blocking=True) for b in batches]

        batches = _batches()
        copy_all(batches)  # warm-up: the allocator's first cudaMalloc calls
        timing = {"copy_ms": _elapsed_ms(lambda: copy_all(batches)) / len(batches)}  # host_ms: the first race
        for grad in LOOP_RACE_GRADS:  # first: a loop that waits would make host_ms long, and the bar easy
            _loop_host_waits(ex, yours, batches, grad)
        for_all(ex, torch_callers(), _loop_races(ex, yours, timing, batches), examples=len(TORCH_CALLERS),
                budget_s=GPU_BUDGET_S, describe=lambda kind: f"prefetch_loop called from {TORCH_CALLERS[kind]}")

        # Two buffers: the loop allocates GPU memory for two batches, not for every batch.
        copy_stream, step_ms = torch.cuda.Stream(), 0.0

        def step(x: torch.Tensor) -> torch.Tensor:
            if step_ms:
                _sleep_ms(step_ms)
            return x.sum(dim=1)

        def sequential(batches: Sequence[torch.Tensor]) -> list[torch.Tensor]:
            return [step(b.to("cuda", non_blocking=True)) for b in batches]

        torch.cuda.synchronize()
        batches = _shifted(batches)
        # A first call on this copy_stream: buffers kept from one call to the next (per copy_stream, say) are
        # kept by the measured call, which then allocates none.  And no record_stream, in either: events only.
        with _counting_record_stream() as recorded:
            yours(batches, step, copy_stream)
        torch.cuda.synchronize()
        batches = _shifted(batches)
        buffer = torch.empty(ROWS, COLS, device="cuda")
        steps_count, steps_bytes = _large_allocations(lambda: [step(buffer) for _ in batches])  # noqa: F821
        del buffer
        with _counting_record_stream() as recorded_too:
            loop_count, loop_bytes = _large_allocations(lambda: yours(batches, step, copy_stream))
        records = len(recorded) + len(recorded_too)
        ex.expect(records == 0, f"prefetch_loop called record_stream {records} time(s) in two calls of {len(batches)} "
                  "batches", "the task orders the buffers' reuse with events only: a buffer's next copy waits for "
                  "an event recorded after the step that read it")
        batch_bytes = batches[0].numel() * batches[0].element_size()
        by_loop, held = loop_count - steps_count, (loop_bytes - steps_bytes) / batch_bytes
        ex.expect(by_loop <= 2 and held <= HELD_AT_MOST,
                  f"allocated GPU memory for {held:.3g} batches ({by_loop} allocations of a batch's size or more) "
                  f"for {len(batches)} batches; two buffers, made once, hold 2", BUFFERS_HINT)
        # (round 73's adversary: one buffer, right values, no overlap, got the hint about buffers kept between calls)
        ex.expect(held >= 1.5, f"allocated GPU memory for {held:.3g} batches in a call that came after others with "
                               "batches of the same shape: fewer than two buffers, or buffers kept from one call to "
                               "the next", f"{TWO_HINT}; and {KEPT_HINT}")

        # Nothing kept after the call (round 17: every call's buffers kept in a module list never raced, since their
        # memory was never freed, and leaked two batches a call); the outputs are dropped too.
        torch.cuda.synchronize()
        gc.collect()
        allocated = torch.cuda.memory_allocated()
        yours(batches, step, copy_stream)
        torch.cuda.synchronize()
        gc.collect()
        kept = (torch.cuda.memory_allocated() - allocated) / batch_bytes
        ex.expect(kept < 1, f"prefetch_loop({len(batches)} batches): after it returned and its outputs were dropped, "
                            f"GPU memory for {kept:.3g} batches was still allocated", LEAK_HINT)

        # Faster: a step as long as a copy (or as two batches of the host's work, if longer).  One after
        # the other, each batch costs copy + step; overlapped, the copy of batch i+1 hides behind step i,
        # which saves a copy per batch but the first.  The loop must save at least half of that.
        # The timed calls are the answer's alone, and every setting is read around all of them together: read around
        # each call, inside the timed span, the reads (a millisecond and more, with PyTorch's functions among them)
        # held the GPU idle, and 5 right answers FAILed this bar on the H200 (2026-11-30, "took 11.56 ms; copying then
        # computing takes 12.60 ms; overlapping saves up to 2.15 ms"), where the loop under them saves the same.
        copy_ms = timing["copy_ms"]
        batches, step_ms = _shifted(batches), max(copy_ms, 2 * timing["host_ms"])
        keeping(ex, lambda: ex.expect_saving(
            _elapsed_ms, lambda: sequential(batches), lambda: bare(batches, step, copy_stream),
            saving_ms=(len(batches) - 1) * min(copy_ms, step_ms), tries=TRIES,
            describe=("copying then computing one batch at a time", "the copies with the steps"),
            hint=SPEED_HINT), WATCHED)()


register(Exercise(NOTEBOOK, "prefetch_loop", check_prefetch_loop, gpu=True, cpu_checks=25))


def _alive(gpu: Any, size: int) -> float:
    """How many batches of `size` bytes the GPU memory placed so far (`GPUOnTheCPU`) in blocks of that size or more,
    still alive, holds."""
    return sum(n for n, made in zip(gpu.placed, gpu.made, strict=True) if n >= size and not made.expired()) / size


def _check_prefetch_loop_on_cpu(prefetch_loop: Callable) -> None:
    """check_prefetch_loop's outputs and buffers on a CPU, where copies and steps run in order."""
    with (exercise("prefetch_loop") as ex,
          ex.on_cpu("the outputs, in order, and their autograd history (a backward through each reaches step's "
                    "parameter), for 1 to 9 batches of any shape and dtype, step called once per batch "
                    "in the caller's modes, from a caller with autograd on, off, in inference mode or under autocast, "
                    "and the GPU memory asked for (at every size drawn) in blocks of a "
                    "batch's bytes or more (device='cuda', .to, .cuda(), and new tensors made from "
                    "GPU ones), with the copies and steps run in order on the CPU",
                    "every kind of caller, that the host never waits, the races (slow copies, slow steps, a second "
                    "call from another stream, memory in use by the caller or freed too early), and the speed against "
                    "copying then computing one batch at a time"),
          cuda_on_cpu(like_a_gpu=True) as gpu, _cuda_autocast_on_cpu()):
        yours = keeping(ex, ex.answer(prefetch_loop), WATCHED)
        holds = _loop_values(ex, yours, gpu)
        _at_once(ex, holds, (None, BATCHES, (3, 5), torch.float32), _loop_call)
        chosen = [(None, 1, (1,), torch.uint8), (None, 9, (2, 3, 4), torch.float16), (None, 2, (5,), torch.int32),
                  (None, 3, (2, 2), torch.float64, "no_grad"), (None, 4, (1,), torch.bfloat16, "inference_mode"),
                  (None, 3, (2, 3), torch.int64, "autocast")]
        for_all(ex, loops(st.none()), holds, examples=CPU_EXAMPLES, chosen=chosen, budget_s=0, describe=_loop_call)
        gen = torch.Generator().manual_seed(1000)
        # small: nothing is timed; a shape of its own at every check, so that buffers kept from an earlier check
        # (the cell run again) do not count as made in this one
        cols = 32 + next(_runs) % 997
        batches = [torch.randn(64, cols, generator=gen).pin_memory() for _ in range(BATCHES)]  # imitated: a copy
        size, helds = batches[0].numel() * batches[0].element_size(), []  # bytes, as the GPU's count
        for call in ("", " on a second call with the same batches"):
            before = len(gpu.placed)
            yours(batches, lambda x: x.sum(dim=1), torch.cuda.Stream())
            large = [n for n in gpu.placed[before:] if n >= size]  # blocks of a batch's bytes or more
            helds.append(sum(large) / size)
            if not call:  # the first call: its buffers are new (round 73's adversary: one buffer got PART)
                ex.expect(helds[-1] >= 1.5, f"made GPU memory for {helds[-1]:.3g} batches ({len(large)} blocks of a "
                          f"batch's bytes or more) for {len(batches)} batches: fewer than two buffers", TWO_HINT)
            ex.expect(helds[-1] <= HELD_AT_MOST,
                      f"made GPU memory for {helds[-1]:.3g} batches ({len(large)} blocks of a batch's bytes or more) "
                      f"for {len(batches)} batches{call}; two buffers, made once, hold 2", BUFFERS_HINT)
        ex.expect(helds[1] >= helds[0],
                  f"made GPU memory for {helds[0]:.3g} batches on a first call, and for {helds[1]:.3g} on a second "
                  "call with batches of the same shape: buffers kept from one call to the next", KEPT_HINT)
        kept = _alive(gpu, size)
        if kept:  # a cycle may hold them until a collection, which takes long: only then
            gc.collect()
            kept = _alive(gpu, size)
        ex.expect(kept < 1, f"after two calls returned and their outputs were dropped, GPU tensors for {kept:.3g} "
                            "batches were still alive", LEAK_HINT)


# ------------------------------------------------------------------------------------------
# Exercise 5: hardware queues and false dependencies (CUDA_DEVICE_MAX_CONNECTIONS)
# ------------------------------------------------------------------------------------------
def queues_experiment(order: str = "depth-first", streams: int = 16, per_stream: int = 4, ms: float = 2.0) -> list[Op]:
    """The lecture's experiment: `streams` streams of `per_stream` kernels, queued depth- or breadth-first.

    Stream s is named f"s{s}" and its kernel j f"s{s}k{j}".
    """
    pairs = ([(s, j) for s in range(streams) for j in range(per_stream)] if order == "depth-first"
             else [(s, j) for j in range(per_stream) for s in range(streams)])
    return [("kernel", f"s{s}", f"s{s}k{j}", ms) for s, j in pairs]


@reference
def queue_rules(program: Sequence[Op], queues: int) -> Timeline:
    """The check's simulator of the stream rules and the hardware queues' rule (tests/test_exercises_03.py
    holds it against a simulation of the queues' heads, and against the lecture's closed form)."""
    queue_of: dict[str, int] = {}  # stream -> its queue: round-robin, in the order the streams first appear
    stream_free: dict[str, float] = {}  # stream -> when its last kernel ends
    queue_started: dict[int, float] = {}  # queue -> when its last kernel started
    timeline = {}
    for _, stream, name, ms in program:
        queue = queue_of.setdefault(stream, len(queue_of) % queues)
        start = max(stream_free.get(stream, 0.0), queue_started.get(queue, 0.0))
        stream_free[stream], queue_started[queue] = start + ms, start
        timeline[name] = (start, start + ms)
    return timeline


QueueCase = tuple[list[Op], int]  # (a program of kernels, a number of queues)
SEEDED_QUEUES = 100  # cases drawn from fixed seeds that check_simulate_queues tries besides those Hypothesis draws


def random_queue_case(size: int, seed: int) -> QueueCase:
    """`size` kernels drawn from `seed`, over 1 to 6 streams named in any order, and 1 to 8 queues; the kernels of a
    seed that 3 divides have the names of streams (s0, s1, ...: round 19)."""
    rng = random.Random(seed)
    streams = rng.sample([f"s{i}" for i in range(6)], rng.randint(1, 6))  # s3 may come before s0
    queues = rng.randint(1, 8)
    return _named([("kernel", rng.choice(streams), _duration(rng)) for _ in range(size)],
                  "s" if seed % 3 == 0 else "k"), queues  # a seed that 3 divides: kernels named like streams


def many_streams_queue_case(size: int, seed: int) -> QueueCase:
    """A case of 17 to 80 streams over 17 to 72 queues, drawn from `seed`: each stream, in a shuffled order, queues 1
    to 3 kernels in a row (depth-first: a stream's second kernel starts late, and holds back what its queue gets
    next), then `size` kernels more on any of them (round 22's adversary capped the queues at 16, and passed: no case
    had more than 16 streams over more than 16 queues; round 32's capped them at 32, the hardware's most, and passed:
    no case had more than 32 queues; the task's rules have no most)."""
    rng = random.Random(seed)
    streams = [f"s{i}" for i in range(rng.randint(17, 80))]
    rng.shuffle(streams)
    queues = rng.randint(17, 72)
    ops = [("kernel", stream, _duration(rng)) for stream in streams for _ in range(rng.randint(1, 3))]
    ops += [("kernel", rng.choice(streams), _duration(rng)) for _ in range(size)]
    return _named(ops), queues


MANY_STREAMS = 20  # cases of many_streams_queue_case that check_simulate_queues tries


def queue_cases() -> st.SearchStrategy[QueueCase]:
    """Generated cases: Hypothesis draws the size and the seed, and shrinks a failing case's size."""
    return st.tuples(st.integers(0, MAX_OPS), st.integers(0, 2**32 - 1)).map(lambda case: random_queue_case(*case))


# Cases the check always asks about too (after the generated ones): the task's rules one by one, and the
# lecture's experiment.
QUEUE_CASES: list[QueueCase] = [
    ([("kernel", "a", "a1", 2), ("kernel", "a", "a2", 2), ("kernel", "b", "b1", 3), ("kernel", "b", "b2", 3)], 2),
    ([("kernel", "a", "a1", 2), ("kernel", "a", "a2", 2), ("kernel", "b", "b1", 3), ("kernel", "b", "b2", 3)], 1),
    ([("kernel", "a", "a1", 2), ("kernel", "b", "b1", 3), ("kernel", "a", "a2", 2), ("kernel", "b", "b2", 3)], 1),
    ([("kernel", "a", "a1", 5), ("kernel", "b", "b1", 1), ("kernel", "b", "b2", 1), ("kernel", "a", "a2", 1)], 1),
    ([("kernel", "copy", "load", 4), ("kernel", "copy", "load 2", 1), ("kernel", "compute", "step", 1),
      ("kernel", "log", "write", 1)], 2),
    *[(queues_experiment(order), queues) for order in ("depth-first", "breadth-first") for queues in (1, 8, 32)],
]
# More streams than 16 over more queues than 16 (round 22), and than 32 over more than 32 (round 32), tried last: the
# lecture's experiment, and generated cases
MANY_STREAMS_CASES: list[QueueCase] = [
    (queues_experiment("depth-first", streams=streams, per_stream=2), queues) for streams, queues in
    ((20, 17), (40, 32), (33, 32), (40, 40), (130, 128))]
CHOSEN_QUEUES = {(tuple(program), queues) for program, queues in QUEUE_CASES + MANY_STREAMS_CASES}


def plural_queues(queues: int) -> str:
    """'1 queue', '8 queues'."""
    return f"{queues} queue" + ("" if queues == 1 else "s")


def _queues_hint(program: Sequence[Op], queues: int, too_late: bool) -> str:
    """The rule that the smallest case on which a simulator fails is about (never where its kernels run)."""
    streams = list(dict.fromkeys(op[1] for op in program))
    if queues >= len(streams):
        return ("with at least as many queues as streams, each stream has a queue of its own: only exercise 3's "
                "rule for one stream's kernels holds a kernel back")
    if too_late:
        return ("your simulator holds this kernel back longer than the rules do: a hardware queue waits only for "
                "the kernel queued before it to start; and which streams share a queue here?")
    return ("something holds this kernel back that your simulator misses: the previous kernel of its stream, or the "
            "kernel queued before it in its hardware queue; which streams share a queue here?")


# Round 35's adversary popped each kernel off the caller's list and PASSed; cell 25 passes one list three times
KEPT_PROGRAM_HINT = ("the caller keeps its program after your call (the notebook simulates one list with 1, 8 and 32 "
                     "queues): read the list you are given, and leave it as it was")


def check_simulate_queues(simulate_queues: Callable[[Sequence[Op], int], Timeline]) -> None:
    """simulate_queues(program, queues) must return each kernel's (start, end) under the stream rules and the
    hardware queues' rule, for any program of kernels and any number of queues: compared with the check's own
    simulator (`queue_rules`) on generated cases."""
    with exercise("simulate_queues") as ex:
        yours = keeping(ex, ex.answer(simulate_queues), WATCHED)

        def call(case: QueueCase) -> str:
            return f"simulate_queues({_shown_program(case[0])}, {case[1]})"

        def fails(program: list[Op], queues: int) -> bool:
            return _misplaces(yours(list(program), queues), queue_rules(program, queues))

        returned = _Returned()
        tried = itertools.count()

        def follows_the_rules(case: QueueCase) -> None:
            """The rules on `case`; and, for the chosen cases and one in REVERSED of the others, asked again once the
            caller changed the timeline it got, and on the same list, its kernels reversed in place (round 32's
            adversary kept each result under (id(program), queues), and passed: every call had a new list)."""
            program, queues = case
            given = list(program)
            again = len(program) > 1 and ((tuple(program), queues) in CHOSEN_QUEUES
                                          or next(tried) % REVERSED == REVERSED - 1)
            got = follows_the_rules_once(program, queues, given)
            if again:
                _edited(got)
                returned.last = None  # the check's own change: not the answer's
                given[:] = program
                asked, want = yours(given, queues), queue_rules(program, queues)
                ex.expect(not _misplaces(asked, want), f"{call(case)} returned the right timeline; the caller then "
                          f"changed it ({EDITS}), and {call(case)} again, on the same program, returned a timeline "
                          f"that {_differs(asked, want) if _misplaces(asked, want) else ''}", EDITED_HINT)
                returned.keep(call(case), asked, want)
                follows_the_rules_once(program[::-1], queues, given, REVERSED_IN_PLACE)

        def follows_the_rules_once(program: list[Op], queues: int, given: list[Op], how: str = "") -> object:
            """The rules on (program, queues), given in the list `given` (the list of the call before, changed in
            place as `how` says, if it says anything): what the answer returned."""
            case = program, queues
            given[:] = program
            got, want = yours(given, queues), queue_rules(program, queues)
            ex.expect(given == program, f"{call(case)} changed the list it was given: after the call it held "
                      f"{len(given)} operations, not the program's {len(program)} in their order", KEPT_PROGRAM_HINT)
            returned.expect_unchanged(ex, call(case))
            if _misplaces(got, want) and how and not _fails_on(partial(fails, queues=queues))(program):
                ex.expect(False, f"{call(case)}, given {how}, returned a timeline that {_differs(got, want)}; given "
                                 "a new list of the same kernels, your simulator gets it right: it returned what it "
                                 "kept under the list it was given", IN_PLACE_HINT)
            if _misplaces(got, want):  # the fewest queues, then the smallest program, that still fail
                queues = next(q for q in range(1, queues + 1) if _fails_on(partial(fails, queues=q))(program)
                              or q == queues)
                program = _smallest(program, partial(fails, queues=queues))
                case = program, queues
                got, want = yours(list(program), queues), queue_rules(program, queues)
            _expect_timeline(ex, lambda: f"with {plural_queues(queues)}, {call(case)}", got, want,
                             lambda late: _queues_hint(program, queues, late),
                             stale=lambda: _stale(partial(fails, queues=queues), program))
            returned.keep(call(case), got, want)
            return got

        _at_once(ex, follows_the_rules, QUEUE_CASES[4], call)
        for_all(ex, queue_cases(), follows_the_rules, examples=EXAMPLES, budget_s=0, describe=call,
                chosen=QUEUE_CASES + seeded(random_queue_case, SEEDED_QUEUES) + MANY_STREAMS_CASES
                + seeded(many_streams_queue_case, MANY_STREAMS))


register(Exercise(NOTEBOOK, "simulate_queues", check_simulate_queues))
