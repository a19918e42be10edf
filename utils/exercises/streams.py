"""Stream code called as its callers call it: from every kind of caller, with every race window made wide.

A function that queues work on streams is right only if it is right for *every* caller: one on the
default stream, one inside `with torch.cuda.stream(s):`, one that made a stream current with
`torch.cuda.set_stream(s)` (CuPy: `s.use()`), and one whose stream is still busy with earlier work when
the call comes.  An answer that uses the default stream where it should use the caller's passes when
called from the default stream, and only there; so a check calls it from each of them (`TORCH_CALLERS`,
`CUPY_CALLERS`, as Hypothesis draws them: `torch_callers()`, `cupy_callers()`).

A race shows only when one side is late.  `caller(...)` makes the caller's stream late when it is busy
(work queued on it before the call ends after a window of `busy_ms`); `widened(ms)` makes every stream
that the answer itself switches to start late, by queuing a spinning kernel (`utils.gpu_sleep`,
`utils.cupy_sleep`) on it the first time the answer queues work there.  So a wait that is missing,
between the caller and the answer or inside the answer, reads the wrong data every time.
`late_at_each_entry(ms, (s,))` makes a stream that the check hands the answer late at every entry and after every
event recorded on it (CuPy): an event the answer records on it before the work it should follow then fires well
before that work runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..timing import cupy_cycles_per_second, cupy_sleep, gpu_cycles_per_second, gpu_sleep
from .properties import st

# What each kind of caller is, in a message: "called from a side stream entered with ..."
TORCH_CALLERS = {
    "default": "PyTorch's default stream",
    "with": "a side stream entered with `with torch.cuda.stream(s):`",
    "set_stream": "a side stream made current with `torch.cuda.set_stream(s)`",
    "busy": "a side stream still busy with earlier work",
}
CUPY_CALLERS = {
    "null": "CuPy's null stream (PyTorch's default stream)",
    "with": "a CuPy stream entered with `with s:`",
    "use": "a CuPy stream made current with `s.use()`",
    "busy": "a CuPy stream still busy with earlier work",
}
# A kind of CuPy caller that only the checks naming it call from (notebook 04's; not drawn by `cupy_callers()`): CuPy's
# null stream current, made so with use() inside a `with c:` block, so that c, not the null stream, is on top of CuPy's
# stack (round 26's adversary of 04 made the caller's stream current again only when it was not the null stream: a
# `with` block of the answer ends on c, and every other kind of caller passed)
CUPY_CALLERS_MORE = {
    "null_in_with": "CuPy's null stream, made current with `Stream.null.use()` inside a `with s:` block",
}
BUSY_MS = 40.0  # how long a busy caller's earlier work keeps its stream busy


def torch_callers() -> st.SearchStrategy[str]:
    """Every kind of PyTorch caller, for Hypothesis to draw (and shrink towards the default stream)."""
    return st.sampled_from(list(TORCH_CALLERS))


def cupy_callers() -> st.SearchStrategy[str]:
    """Every kind of CuPy caller, for Hypothesis to draw (and shrink towards the null stream)."""
    return st.sampled_from(list(CUPY_CALLERS))


@dataclass
class Caller:
    """Who calls the answer: `kind` (a key of TORCH_CALLERS or CUPY_CALLERS), the stream that is current
    during the call, and, for a busy caller, an event recorded when its earlier work ends."""

    library: str  # "torch" or "cupy"
    kind: str
    stream: Any
    busy_end: Any = None  # an event (of the caller's library) at the end of the busy window, or None
    saw: dict[str, Any] = field(default_factory=dict)  # the current streams right after the call

    @property
    def says(self) -> str:
        """"called from a side stream entered with ...", for a message."""
        return "called from " + (TORCH_CALLERS if self.library == "torch" else {**CUPY_CALLERS, **CUPY_CALLERS_MORE})[
            self.kind]

    def current_now(self) -> dict[str, Any]:
        """The current stream of PyTorch (and of CuPy, where it is installed) now."""
        now = {"torch": torch.cuda.current_stream()}
        cupy = _cupy_or_none()
        if cupy is not None:
            now["cupy"] = cupy.cuda.get_current_stream()
        return now

    def note_after_call(self) -> None:
        """Note the current streams right after the answer returned (compare them with `before`)."""
        self.saw = self.current_now()


def _cupy_or_none() -> Any:
    try:
        import cupy
    except ImportError:
        return None
    return cupy


@contextmanager
def torch_caller(kind: str, busy_ms: float = BUSY_MS) -> Iterator[Caller]:
    """Be a PyTorch caller of `kind` (a key of TORCH_CALLERS) for the block, and restore the current
    stream afterwards, whatever the answer did to it.

    `torch.cuda.Stream()` hands out PyTorch's pool of 32 streams round-robin: a stream made long before
    the block may be the caller's own.  Make the streams you give the answer inside the block.
    """
    before = torch.cuda.current_stream()
    stream = torch.cuda.default_stream() if kind == "default" else torch.cuda.Stream()
    try:
        if kind == "set_stream":
            torch.cuda.set_stream(stream)
            yield Caller("torch", kind, stream)
            return
        with torch.cuda.stream(stream):
            busy_end = None
            if kind == "busy":
                gpu_sleep(busy_ms / 1e3, stream)
                busy_end = stream.record_event(torch.cuda.Event(enable_timing=True))
            yield Caller("torch", kind, stream, busy_end)
    finally:
        torch.cuda.set_stream(before)


@contextmanager
def cupy_caller(kind: str, busy_ms: float = BUSY_MS) -> Iterator[Caller]:
    """Be a CuPy caller of `kind` (a key of CUPY_CALLERS or CUPY_CALLERS_MORE) for the block, and restore CuPy's
    current stream afterwards, whatever the answer did to it (`use()` included)."""
    import cupy

    before = cupy.cuda.get_current_stream()
    stream = cupy.cuda.Stream.null if kind in ("null", "null_in_with") else cupy.cuda.Stream(non_blocking=True)
    try:
        if kind == "use":
            stream.use()
            yield Caller("cupy", kind, stream)
            return
        if kind == "null_in_with":
            with cupy.cuda.Stream(non_blocking=True):  # on top of CuPy's stack...
                stream.use()  # ...and the null stream current
                yield Caller("cupy", kind, stream)
            return
        with stream:
            busy_end = None
            if kind == "busy":
                cupy_sleep(busy_ms / 1e3, stream)
                busy_end = stream.record()
            yield Caller("cupy", kind, stream, busy_end)
    finally:
        before.use()


def calibrate_sleeps() -> None:
    """Both libraries' sleeps calibrated now, before a check's timed or widened calls: widened() spins PyTorch streams
    with gpu_sleep and CuPy streams (an answer's, entered or made current) with cupy_sleep, and the first call of each
    calibrates, waiting for the GPU.  Inside a judged call that wait would read as the answer's own host wait (round
    100: a right answer filling a learning rate with CuPy on the caller's stream FAILed 07's graphed step so).  Every
    check that uses widened() calls this first, so an answer that enters a CuPy stream meets no calibration."""
    gpu_cycles_per_second()
    if _cupy_or_none() is not None:  # installed with the GPU extras; without it no answer enters a CuPy stream
        cupy_cycles_per_second()


# ------------------------------------------------------------------------------------------
# Races inside the answer, made wide
# ------------------------------------------------------------------------------------------
class _LateStreams(TorchFunctionMode):
    """Before the first PyTorch operation the answer queues on a stream other than `spared`, that stream
    spins for `ms`: work queued there afterwards starts late, by that much, on the GPU."""

    def __init__(self, ms: float, spared: set[Any]) -> None:
        super().__init__()
        self.ms, self.spared, self.made_late = ms, spared, set[int]()

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        stream = torch.cuda.current_stream()
        if torch.cuda.is_current_stream_capturing():  # a sleep queued now would be recorded: every replay would sleep
            return func(*args, **(kwargs or {}))
        if stream.cuda_stream not in self.spared and stream.cuda_stream not in self.made_late:
            self.made_late.add(stream.cuda_stream)
            gpu_sleep(self.ms / 1e3, stream)  # inside the mode's handler: not seen by the mode again
        return func(*args, **(kwargs or {}))


@contextmanager
def widened(ms: float, spare: tuple[Any, ...] = (), at_creation: bool = False) -> Iterator[None]:
    """For the block, every stream that the answer queues work on (PyTorch) or makes current (CuPy:
    `with s:` or `s.use()`; with `at_creation`, also `cupy.cuda.Stream()`) starts late by `ms`, except the streams
    in `spare` (typically the caller's):
    a wait missing between two streams inside the answer then shows in its values.

    Each stream is made late once, the first time: a right answer loses at most `ms` per stream it uses.
    A stream that is capturing a CUDA graph is left alone (PyTorch): the sleep would become part of the graph.
    """
    spared = {getattr(s, "cuda_stream", getattr(s, "ptr", None)) for s in spare}
    with ExitStack() as stack:
        if torch.cuda.is_available():
            stack.enter_context(_LateStreams(ms, spared))
        cupy = _cupy_or_none()
        if cupy is not None:
            stack.enter_context(_late_cupy_streams(cupy, ms, spared, at_creation))
        yield


@contextmanager
def _late_cupy_streams(cupy: Any, ms: float, spared: set[Any], at_creation: bool = False) -> Iterator[None]:
    """CuPy has no operation hook: a stream starts late when the answer enters it or makes it current, and with
    `at_creation` when the answer creates it (`cupy.cuda.Stream(...)`: a stream only passed to a kernel as
    `stream=s`, never entered, is late too).  A stream created before the block and only passed as `stream=` is
    not made late: CuPy's kernels are Cython classes, whose calls cannot be patched."""
    base = cupy.cuda.stream._BaseStream
    stream_class = cupy.cuda.Stream
    enter, use, init = base.__enter__, base.use, stream_class.__init__
    made_late: set[int] = set()

    def late(stream: Any) -> None:
        if stream.ptr not in spared and stream.ptr not in made_late:
            made_late.add(stream.ptr)
            _sleep_keeping_current(cupy, use, ms, stream)

    def late_enter(self: Any) -> Any:
        late(self)
        return enter(self)

    def late_use(self: Any) -> Any:
        late(self)
        return use(self)

    def late_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        late(self)

    base.__enter__, base.use = late_enter, late_use
    if at_creation:
        stream_class.__init__ = late_init
    try:
        yield
    finally:
        base.__enter__, base.use, stream_class.__init__ = enter, use, init


def _sleep_keeping_current(cupy: Any, use: Any, ms: float, stream: Any) -> None:
    """cupy_sleep on `stream`, with CuPy's current stream what it was: cupy_sleep enters the stream, and leaving a
    `with` block makes the top of CuPy's stack current, which is not the current stream of a caller that used
    use() (after an answer's `s.record()`, its next `caller.use()` would not have come yet).  `use` is CuPy's own."""
    current = cupy.cuda.get_current_stream()
    cupy_sleep(ms / 1e3, stream)
    use(current)


@contextmanager
def late_at_each_entry(ms: float, streams: tuple[Any, ...]) -> Iterator[None]:
    """For the block, each time the answer enters one of the CuPy `streams` (`with s:` or `s.use()`), that stream
    spins for `ms` first, and each time the answer records an event on it (`s.record()`, `event.record(s)`, or
    `event.record()` with s current), it spins for `ms` after the event: the work the answer queues there next starts
    late, every time, by that much.

    widened() spares the streams a check hands the answer (their earlier work is the check's own window) and makes
    any other stream late once.  Neither shows an event recorded on a given stream too early, before the work it
    should follow was queued (`ev = s.record()`, then `with s: y = x.sum()`, or the record one line before the sum
    inside the block): the event completes when s reaches it and the work runs right after, so a stream that waits
    for the event reads the result a few microseconds early, which a small sum survives.  Made late at the entry and
    after the record, the work runs `ms` after the event: the race shows.  A right answer, which records its event
    after the work, loses `ms` for each entry and record (keep `ms` well under the check's windows).  Nest it inside
    widened(): both patch the same methods, and each restores what it found.
    """
    cupy = _cupy_or_none()
    if cupy is None or not streams:
        yield
        return
    base, event_class = cupy.cuda.stream._BaseStream, cupy.cuda.stream.Event
    enter, use, record, event_record = base.__enter__, base.use, base.record, event_class.record
    late, spinning = {s.ptr for s in streams}, [False]

    def make_late(stream: Any) -> None:
        if spinning[0] or stream.ptr not in late:
            return
        spinning[0] = True  # cupy_sleep enters the stream itself: that entry is not the answer's
        try:
            _sleep_keeping_current(cupy, use, ms, stream)
        finally:
            spinning[0] = False

    def late_enter(self: Any) -> Any:
        make_late(self)
        return enter(self)

    def late_use(self: Any) -> Any:
        make_late(self)
        return use(self)

    def late_record(self: Any, *args: Any, **kwargs: Any) -> Any:
        event = record(self, *args, **kwargs)
        make_late(self)
        return event

    def late_event_record(self: Any, stream: Any = None) -> None:
        event_record(self, stream)
        make_late(stream if stream is not None else cupy.cuda.get_current_stream())

    base.__enter__, base.use, base.record, event_class.record = late_enter, late_use, late_record, late_event_record
    try:
        yield
    finally:
        base.__enter__, base.use, base.record, event_class.record = enter, use, record, event_record
