"""Round 22 adversary, notebook 03: new wrong and right answers for the checks of utils/exercises/nb03.py.

Run each against its check from /work/wt/ADV21b (see /work/adv22/brief-03.md).  GPU_ONLY holds answers whose
verdict only the GPU part of a check can give (they import torch inside the functions).
"""

from __future__ import annotations

import fractions

import numpy as np
import torch


# ------------------------------------------------------------------------------------------ exercise 1: fan_out
def _fan(x, fns, streams, *, prep=lambda x: x, ctx=None, after=None):
    """The solution's shape: fork, each fn on its stream, record_stream, join."""
    current = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(current)
    outs = []
    for fn, s in zip(fns, streams):
        with (ctx(s) if ctx else torch.cuda.stream(s)):
            out = fn(prep(x))
        out.record_stream(current)
        outs.append(out)
    for s in streams:
        current.wait_stream(s)
    if after:
        after()
    return outs


def fan_out_detached_leaf_per_stream(x, fns, streams):
    """WRONG: each stream gets `x.detach().requires_grad_(x.requires_grad)` ("a leaf of its own per stream, so that
    autograd records nothing across streams").  Every output requires grad and has the right values and dtype, but
    its graph ends at the new leaf: the caller's backward through any output never reaches x (x.grad stays None)."""
    return _fan(x, fns, streams, prep=lambda x: x.detach().requires_grad_(x.requires_grad))


def fan_out_no_grad_then_requires_grad(x, fns, streams):
    """WRONG: the heads run under torch.no_grad() ("the side streams need no autograd bookkeeping"), and each output
    is then marked `requires_grad_()` where x requires grad, to look like fns[i](x).  The outputs are leaves: the
    caller's loss.backward() gives x no gradient."""
    current = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(current)
    outs = []
    for fn, s in zip(fns, streams):
        with torch.cuda.stream(s), torch.no_grad():
            out = fn(x)
        if x.requires_grad and out.is_floating_point():
            out.requires_grad_()
        out.record_stream(current)
        outs.append(out)
    for s in streams:
        current.wait_stream(s)
    return outs


def fan_out_forces_enable_grad(x, fns, streams):
    """WRONG: each fns[i] run under torch.enable_grad() ("output i must keep its autograd history", the hint of the
    no_grad answers, taken too far): a caller under torch.no_grad() (an eval loop) gets outputs that require grad
    and hold their graphs (memory, and a backward the caller never asked for), where fns[i](x) there does not.  The
    check calls fan_out with grad mode on only."""
    return _fan(x, fns, streams, ctx=lambda s: _Both(torch.cuda.stream(s), torch.enable_grad()))


class _Both:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __enter__(self):
        self.a.__enter__()
        self.b.__enter__()

    def __exit__(self, *exc):
        self.b.__exit__(*exc)
        self.a.__exit__(*exc)


def fan_out_anomaly_mode_left_on(x, fns, streams):
    """WRONG (a global setting changed and left): autograd's anomaly detection turned on to debug the heads
    (torch.autograd.set_detect_anomaly(True)) and never turned off: every later backward of the caller runs with
    anomaly checks (slow, and NaN checks that raise)."""
    torch.autograd.set_detect_anomaly(True)
    return _fan(x, fns, streams)


def fan_out_threads_left_at_one(x, fns, streams):
    """WRONG (a global setting changed and left): torch.set_num_threads(1) ("the streams give the parallelism; the
    host only queues") and not put back: the caller's CPU work runs on one thread from then on."""
    torch.set_num_threads(1)
    return _fan(x, fns, streams)


def fan_out_in_device_context(x, fns, streams):
    """RIGHT: the solution inside `with torch.cuda.device(x.device):` (a multi-GPU habit: queue on x's GPU)."""
    with torch.cuda.device(x.device):
        return _fan(x, fns, streams)


def fan_out_stream_as_context(x, fns, streams):
    """RIGHT: each side stream entered with `with s:` (torch.Stream is a context manager since PyTorch 2.7),
    which makes it current and restores the caller's stream at the end."""
    return _fan(x, fns, streams, ctx=lambda s: s)


def fan_out_stream_context_class(x, fns, streams):
    """RIGHT: torch.cuda.StreamContext(s), the class that torch.cuda.stream(s) returns, written out."""
    return _fan(x, fns, streams, ctx=lambda s: torch.cuda.StreamContext(s))


def fan_out_events_on_x_device(x, fns, streams):
    """RIGHT: the caller's stream taken as torch.cuda.current_stream(x.device) and the joins through events made
    with torch.cuda.Event(); outputs returned as a tuple."""
    current = torch.cuda.current_stream(x.device)
    forked = torch.cuda.Event()
    forked.record(current)
    outs = []
    for fn, s in zip(fns, streams):
        s.wait_event(forked)
        with torch.cuda.stream(s):
            out = fn(x)
            done = torch.cuda.Event()
            done.record(s)
        out.record_stream(current)
        current.wait_event(done)
        outs.append(out)
    return tuple(outs)


# ------------------------------------------------------------------------------------------ exercise 2: prediction
_ANSWER = {"load 0": (0, 10), "load 1": (10, 20), "log": (0, 30), "step 0": (10, 25), "step 1": (25, 40),
           "report": (40, 45)}


def predicted_fractions():
    """RIGHT: the timeline in exact Fractions."""
    return {k: (fractions.Fraction(a), fractions.Fraction(b)) for k, (a, b) in _ANSWER.items()}


def predicted_numpy_int_arrays():
    """RIGHT: each pair a NumPy int64 array of two."""
    return {k: np.array(v, dtype=np.int64) for k, v in _ANSWER.items()}


def predicted_int_tensors():
    """RIGHT: each pair an int32 tensor of two."""
    return {k: torch.tensor(v, dtype=torch.int32) for k, v in _ANSWER.items()}


def predicted_in_seconds_times_1000():
    """RIGHT: worked out in seconds and converted back to ms (float error of 1e-15 ms)."""
    return {k: (a / 1000 * 1000 + 1e-14, b / 1000 * 1000 + 1e-14) for k, (a, b) in _ANSWER.items()}


def predicted_report_half_ns_late():
    """WRONG (a unit slip: 'report' starts 0.4 ns late, e.g. a 0.0000004 ms offset written for 'after the wait'):
    the seal rounds times to the nanosecond."""
    return {**_ANSWER, "report": (40 + 4e-7, 45 + 4e-7)}


# ------------------------------------------------------------------------------------------ exercise 3: simulate
def _rules(program, *, kernel=None):
    free_at, recorded, timeline = {}, {}, {}
    for op in program:
        if op[0] == "kernel":
            _, s, name, ms = op
            start = free_at.get(s, 0.0)
            end = start + ms if kernel is None else kernel(start, ms)
            free_at[s] = end
            timeline[name] = (start, end)
        elif op[0] == "record":
            recorded[op[2]] = free_at.get(op[1], 0.0)
        elif op[0] == "wait":
            if op[2] in recorded:
                free_at[op[1]] = max(free_at.get(op[1], 0.0), recorded[op[2]])
        elif op[0] == "wait_stream":
            free_at[op[1]] = max(free_at.get(op[1], 0.0), free_at.get(op[2], 0.0))
    return timeline


def simulate_in_integer_picoseconds(program):
    """WRONG (a rounding of the unit): times kept as whole picoseconds (round(ms * 1e9)), "exact integers instead of
    floats".  A kernel of 2**-20 ms is 953674.316... ps, so every fractional duration is off by up to half a
    picosecond; sums of them drift."""
    free_at, recorded, timeline = {}, {}, {}
    for op in program:
        if op[0] == "kernel":
            _, s, name, ms = op
            start = free_at.get(s, 0)
            free_at[s] = start + round(ms * 10**9)
            timeline[name] = (start / 1e9, free_at[s] / 1e9)
        elif op[0] == "record":
            recorded[op[2]] = free_at.get(op[1], 0)
        elif op[0] == "wait":
            if op[2] in recorded:
                free_at[op[1]] = max(free_at.get(op[1], 0), recorded[op[2]])
        elif op[0] == "wait_stream":
            free_at[op[1]] = max(free_at.get(op[1], 0), free_at.get(op[2], 0))
    return timeline


def simulate_event_dict_by_first_letter_stream(program):
    """WRONG (only the names the check draws): events and streams share one dict, keyed with a prefix of the kind
    ("stream:"/"event:") -- right -- but the wait for a never-recorded event reads the *stream* of that name
    (a fallback `recorded.get(event, free_at.get(event))`, "an event named after a stream stands for it")."""
    free_at, recorded, timeline = {}, {}, {}
    for op in program:
        if op[0] == "kernel":
            _, s, name, ms = op
            start = free_at.get(s, 0.0)
            free_at[s] = start + ms
            timeline[name] = (start, start + ms)
        elif op[0] == "record":
            recorded[op[2]] = free_at.get(op[1], 0.0)
        elif op[0] == "wait":
            t = recorded.get(op[2], free_at.get(op[2]))
            if t is not None:
                free_at[op[1]] = max(free_at.get(op[1], 0.0), t)
        elif op[0] == "wait_stream":
            free_at[op[1]] = max(free_at.get(op[1], 0.0), free_at.get(op[2], 0.0))
    return timeline


def simulate_fractions_as_float_sum_of_start(program):
    """RIGHT: each kernel's start found as the longest path in a graph of its dependencies, computed by recursion
    with functools.lru_cache inside the call (a cache local to the call)."""
    from functools import lru_cache
    deps = {}  # kernel index -> list of (kernel index) it must follow
    last_kernel, recorded = {}, {}
    stream_deps: dict[str, set] = {}
    kernels = []
    for op in program:
        if op[0] == "kernel":
            _, s, name, ms = op
            i = len(kernels)
            kernels.append((name, ms))
            deps[i] = set(stream_deps.get(s, set()))
            stream_deps[s] = {i}
        elif op[0] == "record":
            recorded[op[2]] = set(stream_deps.get(op[1], set()))
        elif op[0] == "wait":
            if op[2] in recorded:
                stream_deps[op[1]] = stream_deps.get(op[1], set()) | recorded[op[2]]
        elif op[0] == "wait_stream":
            stream_deps[op[1]] = stream_deps.get(op[1], set()) | stream_deps.get(op[2], set())

    @lru_cache(maxsize=None)
    def end(i):
        return start(i) + kernels[i][1]

    @lru_cache(maxsize=None)
    def start(i):
        return max((end(j) for j in deps[i]), default=0.0)

    return {name: (start(i), end(i)) for i, (name, _) in enumerate(kernels)}


# ------------------------------------------------------------------------------------------ exercise 4: prefetch_loop
def _double_buffer(batches, step, copy_stream, *, alloc=None):
    current = torch.cuda.current_stream()
    alloc = alloc or (lambda b: torch.empty_like(b, device="cuda"))
    buffers = [alloc(batches[0]) for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    consumed = [torch.cuda.Event() for _ in range(2)]
    copy_stream.wait_stream(current)

    def load(i):
        k = i % 2
        copy_stream.wait_event(consumed[k])
        with torch.cuda.stream(copy_stream):
            buffers[k].copy_(batches[i], non_blocking=True)
        copied[k].record(copy_stream)

    outs = []
    load(0)
    for i in range(len(batches)):
        k = i % 2
        if i + 1 < len(batches):
            load(i + 1)
        current.wait_event(copied[k])
        outs.append(step(buffers[k]))
        consumed[k].record(current)
    return outs


def prefetch_buffers_on_current_device_index(batches, step, copy_stream):
    """RIGHT: the buffers made with device=torch.cuda.current_device() (an int, the device's index: a common way
    to name "this GPU")."""
    b0 = batches[0]
    return _double_buffer(batches, step, copy_stream,
                          alloc=lambda b: torch.empty(b.shape, dtype=b.dtype, device=torch.cuda.current_device()))


def prefetch_in_device_context(batches, step, copy_stream):
    """RIGHT: the solution inside `with torch.cuda.device(copy_stream.device):`."""
    with torch.cuda.device(copy_stream.device):
        return _double_buffer(batches, step, copy_stream)


def prefetch_copy_stream_as_context(batches, step, copy_stream):
    """RIGHT: copy_stream entered with `with copy_stream:` (torch.Stream's context manager)."""
    current = torch.cuda.current_stream()
    buffers = [torch.empty_like(batches[0], device="cuda") for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    consumed = [torch.cuda.Event() for _ in range(2)]
    copy_stream.wait_stream(current)

    def load(i):
        k = i % 2
        copy_stream.wait_event(consumed[k])
        with copy_stream:
            buffers[k].copy_(batches[i], non_blocking=True)
            copied[k].record()
    outs = []
    load(0)
    for i in range(len(batches)):
        if i + 1 < len(batches):
            load(i + 1)
        current.wait_event(copied[i % 2])
        outs.append(step(buffers[i % 2]))
        consumed[i % 2].record(current)
    return outs


def prefetch_new_buffer_per_batch_by_resize(batches, step, copy_stream):
    """WRONG: a new GPU tensor for every batch (the lecture's loop, which the task forbids: memory for every batch),
    made as `torch.empty(0, device="cuda")` and grown with `.resize_(batch.shape)` ("allocate lazily"), with events
    only.  Eight batches take eight batches of memory."""
    current = torch.cuda.current_stream()
    copy_stream.wait_stream(current)
    outs, bufs = [], []
    for b in batches:
        buf = torch.empty(0, dtype=b.dtype, device="cuda")
        with torch.cuda.stream(copy_stream):
            buf.resize_(b.shape)
            buf.copy_(b, non_blocking=True)
        bufs.append(buf)
    for buf in bufs:
        current.wait_stream(copy_stream)
        outs.append(step(buf))
    return outs


_KEPT = {}


def prefetch_kept_buffers_grown_with_resize(batches, step, copy_stream):
    """WRONG (a result kept from an earlier call): two buffers per (shape, dtype) kept at module level from one call
    to the next ("allocate once"), made as torch.empty(0, device="cuda") and grown with resize_: shared by every
    caller and never given back (the known wrong "two buffers kept from one call to the next", which the CPU part
    catches when the buffers are made at their size)."""
    key = (tuple(batches[0].shape), batches[0].dtype)
    if key not in _KEPT:
        bufs = [torch.empty(0, dtype=batches[0].dtype, device="cuda") for _ in range(2)]
        for b in bufs:
            b.resize_(batches[0].shape)
        _KEPT[key] = bufs
    it = iter(_KEPT[key])
    return _double_buffer(batches, step, copy_stream, alloc=lambda b: next(it))


def prefetch_small_batches_one_at_a_time(batches, step, copy_stream):
    """WRONG (a special case of the sizes the check draws): for "small" batches (under 1000 elements, "not worth
    two buffers") a new GPU tensor per batch with .to('cuda') on the current stream, no copy_stream, no overlap;
    the two-buffer loop only for larger ones."""
    if batches[0].numel() < 1000:
        return [step(b.to("cuda", non_blocking=True)) for b in batches]
    return _double_buffer(batches, step, copy_stream)


def prefetch_steps_under_enable_grad(batches, step, copy_stream):
    """WRONG: each step run under torch.enable_grad() (to keep the steps' autograd history "whatever the caller"):
    a caller under no_grad or inference_mode gets outputs with graphs.  The check's callers always have grad on,
    so `modes` always matches."""
    current = torch.cuda.current_stream()
    buffers = [torch.empty_like(batches[0], device="cuda") for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    consumed = [torch.cuda.Event() for _ in range(2)]
    copy_stream.wait_stream(current)

    def load(i):
        k = i % 2
        copy_stream.wait_event(consumed[k])
        with torch.cuda.stream(copy_stream):
            buffers[k].copy_(batches[i], non_blocking=True)
        copied[k].record(copy_stream)

    outs = []
    load(0)
    for i in range(len(batches)):
        k = i % 2
        if i + 1 < len(batches):
            load(i + 1)
        current.wait_event(copied[k])
        with torch.enable_grad():
            outs.append(step(buffers[k]))
        consumed[k].record(current)
    return outs


def prefetch_anomaly_mode_left_on(batches, step, copy_stream):
    """WRONG (a global setting changed and left): torch.autograd.set_detect_anomaly(True) to debug the steps,
    never turned off."""
    torch.autograd.set_detect_anomaly(True)
    return _double_buffer(batches, step, copy_stream)


def prefetch_one_allocation_of_two(batches, step, copy_stream):
    """RIGHT: the two buffers as the two halves of one GPU tensor of shape (2, *batch.shape)."""
    pair = torch.empty((2, *batches[0].shape), dtype=batches[0].dtype, device="cuda")
    it = iter(pair)
    return _double_buffer(batches, step, copy_stream, alloc=lambda b: next(it))


def prefetch_last_batch_missing_on_device_index(batches, step, copy_stream):
    """WRONG (the last batch missing: `range(len(batches) - 1)`), with its buffers on
    device=torch.cuda.current_device(): the CPU part meets "Cannot access accelerator device" on the first call and
    skips itself (LeftForGPU), so the CPU says "skipped (needs cuda)" instead of FAIL for a mistake in the values."""
    outs = prefetch_buffers_on_current_device_index(batches, step, copy_stream)
    return outs[:-1]


# ------------------------------------------------------------------------------------------ exercise 5: queues
def queues_start_rule_on_ends(program, queues):
    """RIGHT: the rules written with dict.setdefault and tuple assignment (a plain re-spelling, as a control)."""
    queue_of, stream_free, stream_last_start, queue_started, tl = {}, {}, {}, {}, {}
    for _, s, name, ms in program:
        q = queue_of.setdefault(s, len(queue_of) % queues)
        start = max(stream_free.get(s, 0.0), queue_started.get(q, 0.0))
        stream_free[s], queue_started[q] = start + ms, start
        tl[name] = (start, start + ms)
    return tl


def queues_capped_at_sixteen(program, queues):
    """WRONG (a special case of the sizes drawn): queues = min(queues, 16) ("a GPU has 16 hardware queues by
    default"): 32 queues over 17+ streams give each stream a queue of its own on the GPU (CUDA allows 32), here not."""
    queues = min(queues, 16)
    queue_of, stream_free, queue_started, tl = {}, {}, {}, {}
    for _, s, name, ms in program:
        q = queue_of.setdefault(s, len(queue_of) % queues)
        start = max(stream_free.get(s, 0.0), queue_started.get(q, 0.0))
        stream_free[s], queue_started[q] = start + ms, start
        tl[name] = (start, start + ms)
    return tl


def queues_from_numpy_arrays(program, queues):
    """RIGHT: the rules over NumPy arrays indexed by stream number, times returned as a dict of float64 pairs."""
    names = list(dict.fromkeys(op[1] for op in program))
    idx = {s: i for i, s in enumerate(names)}
    stream_free = np.zeros(len(names))
    queue_started = np.zeros(max(queues, 1))
    tl = {}
    for _, s, name, ms in program:
        i = idx[s]
        q = i % queues
        start = max(stream_free[i], queue_started[q])
        stream_free[i], queue_started[q] = start + ms, start
        tl[name] = (start, start + ms)
    return tl


# ------------------------------------------------------------------------------------------ GPU-only answers
def gpu_fan_out_host_sync_for_small_x(x, fns, streams):
    """WRONG: for a small x (under 2**16 elements, "a few microseconds of work: events are not worth it") the fns
    run on their streams and the join is torch.cuda.synchronize() -- the host waits, which the task forbids, and no
    record_stream.  The check's values part is on tiny x and synchronizes before reading; its host-wait test (the
    races) only ever uses FAN_N = 4M elements."""
    import torch
    if x.numel() < 2**16:
        torch.cuda.current_stream().synchronize()  # x ready
        outs = []
        for fn, s in zip(fns, streams):
            with torch.cuda.stream(s):
                outs.append(fn(x))
        torch.cuda.synchronize()
        return outs
    return _fan(x, fns, streams)


def gpu_fan_out_record_stream_only_for_big_outputs(x, fns, streams):
    """WRONG: record_stream only on outputs of 1 MiB or more ("a scalar loss or a count is too small for the
    allocator to hand out again"): a freed small output returns to its side stream's pool and a tensor made there
    gets it while the caller's stream still reads it.  The check's race of freed outputs only uses x * (i + 2) of
    16 MiB."""
    import torch
    current = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(current)
    outs = []
    for fn, s in zip(fns, streams):
        with torch.cuda.stream(s):
            out = fn(x)
        if out.numel() * out.element_size() >= 2**20:
            out.record_stream(current)
        outs.append(out)
    for s in streams:
        current.wait_stream(s)
    return outs


def gpu_fan_out_cuda_seed_left(x, fns, streams):
    """WRONG (a global setting changed and left): torch.cuda.manual_seed(0) before each fns[i] ("the same dropout
    mask on every stream"): the CUDA generator is reset for the caller.  WATCHED reads torch.get_rng_state(), the
    CPU generator only (round 20's torch.manual_seed reseeded both)."""
    import torch
    current = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(current)
    outs = []
    for fn, s in zip(fns, streams):
        torch.cuda.manual_seed(0)
        with torch.cuda.stream(s):
            out = fn(x)
        out.record_stream(current)
        outs.append(out)
    for s in streams:
        current.wait_stream(s)
    return outs


def gpu_prefetch_sync_for_small_batches(batches, step, copy_stream):
    """WRONG: for small batches (under 2**16 elements) the loop synchronizes the host before each batch ("no
    overlap to gain"), a new tensor per batch: the host waits, and memory per batch.  The check's host-wait test, its
    races and its memory count on the GPU all use 2048 x 2048 batches; its values part, small ones."""
    import torch
    if batches[0].numel() < 2**16:
        outs = []
        for b in batches:
            torch.cuda.synchronize()
            with torch.cuda.stream(copy_stream):
                g = b.to("cuda", non_blocking=True)
            torch.cuda.current_stream().wait_stream(copy_stream)
            g.record_stream(torch.cuda.current_stream())
            outs.append(step(g))
        return outs
    return _double_buffer(batches, step, copy_stream)


def gpu_prefetch_copied_recorded_on_current(batches, step, copy_stream):
    """WRONG (a wait missing in one direction): `copied[k].record()` written after the `with copy_stream` block, so
    it records on the caller's stream: the step waits for nothing of the copy."""
    import torch
    current = torch.cuda.current_stream()
    buffers = [torch.empty_like(batches[0], device="cuda") for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    consumed = [torch.cuda.Event() for _ in range(2)]
    copy_stream.wait_stream(current)

    def load(i):
        k = i % 2
        copy_stream.wait_event(consumed[k])
        with torch.cuda.stream(copy_stream):
            buffers[k].copy_(batches[i], non_blocking=True)
        copied[k].record()  # the caller's stream, not copy_stream

    outs = []
    load(0)
    for i in range(len(batches)):
        k = i % 2
        if i + 1 < len(batches):
            load(i + 1)
        current.wait_event(copied[k])
        outs.append(step(buffers[k]))
        consumed[k].record(current)
    return outs


def gpu_prefetch_consumed_recorded_on_copy_stream(batches, step, copy_stream):
    """WRONG (a wait missing in one direction): `consumed[k].record(copy_stream)` -- the event meant to mark the end
    of the step that read buffer k is recorded on copy_stream, so the next copy into buffer k waits for nothing."""
    import torch
    current = torch.cuda.current_stream()
    buffers = [torch.empty_like(batches[0], device="cuda") for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    consumed = [torch.cuda.Event() for _ in range(2)]
    copy_stream.wait_stream(current)

    def load(i):
        k = i % 2
        copy_stream.wait_event(consumed[k])
        with torch.cuda.stream(copy_stream):
            buffers[k].copy_(batches[i], non_blocking=True)
        copied[k].record(copy_stream)

    outs = []
    load(0)
    for i in range(len(batches)):
        k = i % 2
        if i + 1 < len(batches):
            load(i + 1)
        current.wait_event(copied[k])
        outs.append(step(buffers[k]))
        consumed[k].record(copy_stream)
    return outs


def gpu_fan_out_record_stream_if_busy(x, fns, streams):
    """WRONG (a host read that hides a race): record_stream(current) only where the side stream is still busy at
    return (`not s.query()`: "if the side stream is done, the output is finished and nothing is pending").  The race
    is not the side stream's pending work but the caller's later read: once the caller drops the output, the side
    stream's pool hands its memory to a new tensor while the caller's (busy) stream has yet to read it.  In the
    check's freed-output race every side stream starts late (streams.widened), so query() is False and record_stream
    is always called; on a fast GPU, or with a short fn, it is skipped."""
    import torch
    current = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(current)
    outs = []
    for fn, s in zip(fns, streams):
        with torch.cuda.stream(s):
            outs.append(fn(x))
    for s in streams:
        current.wait_stream(s)
    for out, s in zip(outs, streams):
        if not s.query():
            out.record_stream(current)
    return outs


def gpu_fan_out_in_device_context(x, fns, streams):
    """RIGHT: the solution inside `with torch.cuda.device(x.device):`."""
    import torch
    with torch.cuda.device(x.device):
        return _fan(x, fns, streams)


WRONG = {
    "check_fan_out": {
        "each stream given x.detach().requires_grad_() (no gradient reaches x)": fan_out_detached_leaf_per_stream,
        "fns under no_grad, outputs marked requires_grad_() afterwards": fan_out_no_grad_then_requires_grad,
        "anomaly detection turned on and left on": fan_out_anomaly_mode_left_on,
        "each fn under torch.enable_grad() (a no_grad caller gets graphs)": fan_out_forces_enable_grad,
        "torch.set_num_threads(1) left": fan_out_threads_left_at_one,
    },
    "check_simulate": {
        "a never-recorded event named like a stream reads that stream": simulate_event_dict_by_first_letter_stream,
    },
    "check_prefetch_loop": {
        "a new buffer per batch, grown with resize_": prefetch_new_buffer_per_batch_by_resize,
        "small batches: a new tensor per batch on the current stream": prefetch_small_batches_one_at_a_time,
        "anomaly detection turned on and left on": prefetch_anomaly_mode_left_on,
        "each step under torch.enable_grad()": prefetch_steps_under_enable_grad,
        "two buffers kept at module level, grown with resize_": prefetch_kept_buffers_grown_with_resize,
        "last batch missing, buffers on device=torch.cuda.current_device()": (
            prefetch_last_batch_missing_on_device_index),
    },
    "check_simulate_queues": {
        "queues capped at 16": queues_capped_at_sixteen,
    },
}

ALSO_RIGHT = {
    "check_fan_out": {
        "inside with torch.cuda.device(x.device)": fan_out_in_device_context,
        "with s: (torch.Stream as a context manager)": fan_out_stream_as_context,
        "torch.cuda.StreamContext(s)": fan_out_stream_context_class,
        "events, current_stream(x.device), a tuple": fan_out_events_on_x_device,
    },
    "check_predicted_timeline": {
        "Fractions": predicted_fractions,
        "NumPy int64 arrays": predicted_numpy_int_arrays,
        "int32 tensors": predicted_int_tensors,
        "seconds and back": predicted_in_seconds_times_1000,
    },
    "check_simulate": {
        "longest path by recursion with a call-local lru_cache": simulate_fractions_as_float_sum_of_start,
    },
    "check_prefetch_loop": {
        "buffers on device=torch.cuda.current_device()": prefetch_buffers_on_current_device_index,
        "inside with torch.cuda.device(copy_stream.device)": prefetch_in_device_context,
        "with copy_stream: (torch.Stream as a context manager)": prefetch_copy_stream_as_context,
        "two buffers as halves of one (2, *shape) tensor": prefetch_one_allocation_of_two,
    },
    "check_simulate_queues": {
        "NumPy arrays indexed by stream number": queues_from_numpy_arrays,
        "queue kept as latest start (same rules)": queues_start_rule_on_ends,
    },
}

# Not counted (within the checks' stated tolerances, not mistakes a student would make): both PASS.
TOLERANCE_NOTES = {
    "check_simulate": {"times in whole picoseconds (off by < 1e-9 ms)": simulate_in_integer_picoseconds},
    "check_predicted_timeline": {"'report' 0.4 ns late (the seal rounds to the ns)": predicted_report_half_ns_late},
}

GPU_ONLY = {
    "fan_out_host_sync_for_small_x": (gpu_fan_out_host_sync_for_small_x, "wrong", "check_fan_out",
                                      "the host waits (synchronize) for x under 2**16 elements; every host-wait "
                                      "test of the check uses FAN_N elements"),
    "fan_out_record_stream_only_for_big_outputs": (gpu_fan_out_record_stream_only_for_big_outputs, "wrong",
                                                   "check_fan_out", "small outputs freed into the side stream's pool "
                                                   "while the caller still reads them; the freed-output race only uses "
                                                   "16 MiB outputs"),
    "fan_out_cuda_seed_left": (gpu_fan_out_cuda_seed_left, "wrong", "check_fan_out",
                               "resets the CUDA generator for the caller; WATCHED reads the CPU generator only"),
    "prefetch_sync_for_small_batches": (gpu_prefetch_sync_for_small_batches, "wrong", "check_prefetch_loop",
                                        "host waits and a tensor per batch for small batches; host-wait, race and "
                                        "memory tests on the GPU use 2048 x 2048 batches only"),
    "prefetch_copied_recorded_on_current": (gpu_prefetch_copied_recorded_on_current, "wrong", "check_prefetch_loop",
                                            "the copied event recorded on the caller's stream: steps read buffers "
                                            "before their copy"),
    "prefetch_consumed_recorded_on_copy_stream": (gpu_prefetch_consumed_recorded_on_copy_stream, "wrong",
                                                  "check_prefetch_loop", "the consumed event recorded on copy_stream: "
                                                  "a copy overwrites a buffer a step still reads"),
    "fan_out_record_stream_if_busy": (gpu_fan_out_record_stream_if_busy, "wrong", "check_fan_out",
                                      "record_stream skipped when the side stream is already idle at return: a "
                                      "host read that hides the freed-output race; the check's race widens every "
                                      "side stream, so query() is always False there"),
    "fan_out_in_device_context": (gpu_fan_out_in_device_context, "right", "check_fan_out",
                                  "the solution inside with torch.cuda.device(x.device)"),
}
