"""Adversary's answers to notebook 01's checks (round 22): new wrong ones and new right ones.

Each function's docstring says why it is wrong or right.  Run one against its check:
    cd /work/wt/ADV21b && python -c "import sys; sys.path.insert(0, '/work/adv22/01'); from utils.exercises import nb01;
        from answers import f; nb01.check_x(f)"
"""

from __future__ import annotations

import gc
import math
import os
import types
from contextlib import contextmanager

import numpy as np

KiB, MiB, GiB = 2**10, 2**20, 2**30


# ---------------------------------------------------------------- warm_up_sizes: helpers (a student's own rules)
def _block(n: int) -> int:
    return max(512, -(-n // 512) * 512)


def _least(sizes, skip_zero=True, large_round=1):
    """The right recipe: one tensor per pool used, the large one at least 10 MiB."""
    small = [n for n in sizes if (n > 0 or not skip_zero) and _block(n) <= MiB]
    large = [n for n in sizes if _block(n) > MiB]
    warm = []
    if large:
        warm.append(max(-(-max(large) // large_round) * large_round, 10 * MiB))
    if small:
        warm.append(max(small))
    return warm


# ---------------------------------------------------------------- warm_up_sizes: WRONG
def wu_zero_as_a_small_block(sizes):
    """Wrong: a request of 0 bytes counted as a 512-byte block of the small pool, so a loop with an empty tensor
    (an empty batch, [0, 4 MiB]) gets a small-pool tensor in its warm-up: a 2 MiB segment that the loop never uses
    (a tensor of 0 bytes asks the allocator for nothing, as nb01.segments_made itself says)."""
    return _least([n or 512 for n in sizes], skip_zero=False)


def wu_floats_in_place(sizes):
    """Wrong: "normalises" the caller's loop in place to floats (sizes[:] = ...): the values compare equal, but the
    notebook then makes torch.empty(4194304.0, dtype=torch.uint8) for `warm + loop`, a TypeError."""
    sizes[:] = [float(n) for n in sizes]
    return [int(n) for n in _least(sizes)]


def wu_alloc_conf_left_set(sizes):
    """Wrong: the right warm-up, but it also turns on expandable segments for the process "so that nothing
    fragments" (PYTORCH_CUDA_ALLOC_CONF, left set): with them the allocator maps memory in pages of its own and the
    rules the warm-up was computed by (20 MiB, 2 MiB multiples) are no longer the allocator's; a global setting
    changed and left."""
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    return _least(sizes)


_MEMO: dict = {}


def wu_memo_by_pools(sizes):
    """Wrong: a result kept from an earlier call: memoised by which pools the loop uses, not by its sizes."""
    key = frozenset(_block(n) > MiB for n in sizes)
    if key not in _MEMO:
        _MEMO[key] = _least(sizes)
    return list(_MEMO[key])


def wu_int32_numpy(sizes):
    """Wrong: NumPy with a 32-bit dtype; a size over 2 GiB wraps around."""
    arr = np.asarray(sizes, dtype=np.int32)
    return _least([int(x) for x in arr])


def wu_round_up_to_4_mib(sizes):
    """Wrong: the large request rounded up to 4 MiB ("segments come in MiB multiples"): 24 MiB + 1 asks 28 MiB, a
    28 MiB segment, where 26 MiB would do."""
    return _least(sizes, large_round=4 * MiB)


def wu_examples_only(sizes):
    """Wrong: only the case of the exercise's text handled by hand; anything else gets the largest size."""
    if sorted(sizes) == sorted([4000, 4 * MiB, 500, 12 * MiB, 1 * MiB]):
        return [12 * MiB, 1 * MiB]
    return [max(sizes)]


# ---------------------------------------------------------------- warm_up_sizes: ALSO_RIGHT
def wu_numpy_masks(sizes):
    """Right: NumPy int64 arrays and masks, the result back as Python ints in a list."""
    arr = np.asarray(sizes, dtype=np.int64)
    blocks = np.maximum(512, -(-arr // 512) * 512)
    warm = []
    large = blocks > MiB
    if large.any():
        warm.append(int(max(arr[large].max(), 10 * MiB)))
    if (~large).any():
        warm.append(int(arr[~large].max()))
    return warm


def wu_round_up_to_mib(sizes):
    """Right: the large request rounded up to whole MiB (a 2 MiB multiple is a MiB multiple, so its segment is the
    same), the small one to 1 MiB (still the small pool, a 2 MiB segment)."""
    warm = _least(sizes, large_round=MiB)
    return [MiB if _block(n) <= MiB else n for n in warm]


def wu_segment_sized(sizes):
    """Right: asks each pool for the segment size itself where a request gets a segment of its own size: the large
    pool's largest block rounded up to 2 MiB (at least 10 MiB), the small pool's 512 bytes."""
    warm = []
    large = [_block(n) for n in sizes if _block(n) > MiB]
    if large:
        warm.append(max(-(-max(large) // (2 * MiB)) * 2 * MiB, 10 * MiB))
    if any(_block(n) <= MiB for n in sizes):
        warm.append(512)
    return warm


def wu_torch_tensor(sizes):
    """Right: the arithmetic in a torch int64 tensor, .tolist() at the end."""
    import torch
    t = torch.tensor(sizes, dtype=torch.int64)
    blocks = torch.clamp((t + 511) // 512 * 512, min=512)
    large = blocks > MiB
    warm = []
    if bool(large.any()):
        warm.append(max(int(t[large].max()), 10 * MiB))
    if bool((~large).any()):
        warm.append(int(t[~large].max()))
    return warm


def wu_float_ceil(sizes):
    """Right: blocks worked out with math.ceil(n / 512) (exact below 2**53 bytes), one tensor per pool."""
    blocks = [max(512, math.ceil(n / 512) * 512) for n in sizes]
    warm = []
    large = [b for b in blocks if b > MiB]
    if large:
        warm.append(max(max(large), 10 * MiB))
    if len(large) < len(blocks):
        warm.append(1)
    return warm


# ---------------------------------------------------------------- block_memory: a right answer to build on
def _bm(on_enter=None, on_exit=None):
    """A right block_memory: open blocks in a list; before a block resets the peak counters, every open block takes
    the peaks so far; each report a SimpleNamespace filled in when its block ends, however it ends."""
    open_blocks: list = []

    @contextmanager
    def block_memory():
        import torch
        for b in open_blocks:
            b[2] = max(b[2], torch.cuda.max_memory_allocated())
            b[3] = max(b[3], torch.cuda.max_memory_reserved())
        report = types.SimpleNamespace(peak_allocated=0, reserved_growth=0)
        me = [torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), 0, 0]
        torch.cuda.reset_peak_memory_stats()
        me[2], me[3] = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
        open_blocks.append(me)
        undo = on_enter() if on_enter else None
        try:
            yield report
        finally:
            if on_exit:
                on_exit(undo)
            peak_a = max(me[2], torch.cuda.max_memory_allocated())
            peak_r = max(me[3], torch.cuda.max_memory_reserved())
            del open_blocks[next(i for i, b in enumerate(open_blocks) if b is me)]
            for b in open_blocks:  # the blocks around it keep what it saw
                b[2], b[3] = max(b[2], peak_a), max(b[3], peak_r)
            report.peak_allocated = peak_a - me[0]
            report.reserved_growth = peak_r - me[1]
    return block_memory


bm_simple_namespace = _bm()
bm_simple_namespace.__doc__ = """Right: open blocks in a closure's list, reports as SimpleNamespace, peaks handed
to every block around one when it ends."""


def _gc_off():
    was = gc.isenabled()
    gc.disable()
    return was


bm_gc_off_inside = _bm(on_enter=_gc_off, on_exit=lambda was: gc.enable())
bm_gc_off_inside.__doc__ = """Wrong: turns Python's garbage collector off in the block "so nothing is freed behind
the measurement's back", and on at its end whatever it was before: the measured code runs without cycle collection
(tensors in reference cycles stay alive: a higher peak than without the measurement), and a caller that had the
collector off (as the check's GPU part has) finds it on after the first block ends (an inner block turns it on
inside the outer one too)."""


def _seed():
    import torch
    torch.manual_seed(0)


bm_reseeds = _bm(on_enter=_seed)
bm_reseeds.__doc__ = """Wrong: seeds PyTorch's generator when a block starts ("a reproducible measurement"): the
measured code draws other numbers than without block_memory(), and the program after it too; a global state
changed and left (the generators' state is not among the settings the check compares)."""


def _threads():
    import torch
    torch.set_num_threads(1)


bm_one_thread = _bm(on_enter=_threads)
bm_one_thread.__doc__ = """Wrong: torch.set_num_threads(1) in the block ("steadier numbers") and left so: the
measured code, and all the code after it, runs single-threaded; a global setting changed and left."""


# ---------------------------------------------------------------- run_batches_fixed: CPU-judged sums
def rb_uniform_into_empty(lengths, width=4096):
    """Right: a warm-up with the largest batch, then each batch made with torch.empty(...).uniform_() (what
    torch.rand does inside), freed before the next; the sums as floats."""
    import torch
    warm = torch.empty(max(lengths), width, device="cuda")
    del warm
    sums = []
    for n in lengths:
        batch = torch.empty(n, width, device="cuda").uniform_()
        sums.append(batch.sum().item())
        del batch
    return sums


def rb_flat_draws(lengths, width=4096):
    """Right: one flat buffer of the largest batch's elements; each batch drawn 1-D into its first n*width
    elements (the same numbers as an (n, width) draw), sums in float64 on the host via NumPy."""
    import torch
    buf = torch.empty(max(lengths) * width, device="cuda")
    out = []
    for n in lengths:
        view = buf[: n * width]
        torch.rand(n * width, device="cuda", out=view)
        out.append(float(view.sum()))
    return np.array(out, dtype=np.float64)


def rb_sums_cached_by_lengths(lengths, width=4096, _memo={}):
    """Wrong: keeps the sums of an earlier call with the same lengths (a result kept from an earlier call): the
    generator has moved on, so the numbers differ."""
    import torch
    key = (tuple(lengths), width)
    if key not in _memo:
        _memo[key] = [float(torch.rand(n, width, device="cuda").sum()) for n in lengths]
    return list(_memo[key])


def rb_chunked_draws(lengths, width=4096):
    """Wrong (GPU): each batch drawn in chunks of at most 2**20 elements to keep the peak low: on the GPU each
    torch.rand call advances the Philox offset by a rounded amount, so chunks of a large batch are other numbers
    than one draw; on the CPU (and for the CPU part's small batches, under 2**20 elements) they are the same."""
    import torch
    chunk = 2**20
    sums = []
    buf = torch.empty(max(lengths) * width, device="cuda")
    for n in lengths:
        total, left, at = 0.0, n * width, 0
        while left:
            k = min(chunk, left)
            torch.rand(k, device="cuda", out=buf[at:at + k])
            at, left = at + k, left - k
        sums.append(float(buf[: n * width].sum()))
    return sums


def rb_side_stream_no_wait(lengths, width=4096):
    """Wrong (GPU): each batch drawn and summed on a side stream made here, the sum read with .item() on the
    caller's stream without a wait (no current_stream().wait_stream(side)): the copy to the host can run before the
    sum kernel ends; the buffer reused by the next batch is also not waited for."""
    import torch
    side = torch.cuda.Stream()
    buf = torch.empty(max(lengths), width, device="cuda")
    sums = []
    for n in lengths:
        with torch.cuda.stream(side):
            torch.rand(n, width, device="cuda", out=buf[:n])
            s = buf[:n].sum()
        sums.append(s.item())
    return sums


def rb_pinned_non_blocking(lengths, width=4096):
    """Wrong (GPU): the sums copied into a pinned host tensor with non_blocking=True and returned without a
    synchronize: the host reads them before the copies land (a result that depends on the GPU's speed)."""
    import torch
    out = torch.zeros(len(lengths), dtype=torch.float32, pin_memory=torch.cuda.is_available())
    buf = torch.empty(max(lengths), width, device="cuda")
    for i, n in enumerate(lengths):
        torch.rand(n, width, device="cuda", out=buf[:n])
        out[i].copy_(buf[:n].sum(), non_blocking=True)
    return out.tolist()


def rb_event_before_draw(lengths, width=4096):
    """Wrong (GPU): draws each batch on a side stream that waits on an event recorded on the caller's stream before
    the previous batch's sum was queued (recorded too early): the next draw overwrites the shared buffer while the
    previous sum may still be reading it."""
    import torch
    side = torch.cuda.Stream()
    buf = torch.empty(max(lengths), width, device="cuda")
    sums_dev = []
    ready = torch.cuda.Event()
    for n in lengths:
        side.wait_event(ready)
        with torch.cuda.stream(side):
            torch.rand(n, width, device="cuda", out=buf[:n])
        done = torch.cuda.Event()
        done.record(side)
        torch.cuda.current_stream().wait_event(done)
        ready.record()  # recorded before the sum below is queued: too early
        sums_dev.append(buf[:n].sum())
    return [float(s) for s in sums_dev]


_LP_OPEN: list = []


def _lp_read(kind):
    import torch
    s = torch.cuda.memory_stats()
    return s[f"{kind}_bytes.large_pool.current"], s[f"{kind}_bytes.large_pool.peak"]


@contextmanager
def bm_large_pool_only():
    """Wrong (GPU): block_memory from memory_stats()'s large-pool counters only (allocated_bytes.large_pool.*,
    reserved_bytes.large_pool.*): a block of small tensors (1 MiB or less) reports 0.  On the CPU the imitated
    counters have no per-pool keys, so the check leaves it to a GPU."""
    import torch
    for b in _LP_OPEN:
        b[2] = max(b[2], _lp_read("allocated")[1])
        b[3] = max(b[3], _lp_read("reserved")[1])
    report = types.SimpleNamespace(peak_allocated=0, reserved_growth=0)
    me = [_lp_read("allocated")[0], _lp_read("reserved")[0], 0, 0]
    torch.cuda.reset_peak_memory_stats()
    me[2], me[3] = _lp_read("allocated")[1], _lp_read("reserved")[1]
    _LP_OPEN.append(me)
    try:
        yield report
    finally:
        pa, pr = max(me[2], _lp_read("allocated")[1]), max(me[3], _lp_read("reserved")[1])
        del _LP_OPEN[next(i for i, b in enumerate(_LP_OPEN) if b is me)]
        for b in _LP_OPEN:
            b[2], b[3] = max(b[2], pa), max(b[3], pr)
        report.peak_allocated, report.reserved_growth = pa - me[0], pr - me[1]


def rb_non_default_caller_stream(lengths, width=4096):
    """Right (GPU): everything on the caller's current stream (whatever it is), the sums read after a synchronize
    of that stream: no side stream, no race."""
    import torch
    stream = torch.cuda.current_stream()
    buf = torch.empty(max(lengths), width, device="cuda")
    sums = []
    for n in lengths:
        torch.rand(n, width, device="cuda", out=buf[:n])
        sums.append(buf[:n].sum(dtype=torch.float64))
    stream.synchronize()
    return [float(s) for s in sums]


WRONG = {
    "warm_up: a 0-byte request counted as a small block": wu_zero_as_a_small_block,
    "warm_up: the caller's loop turned to floats in place": wu_floats_in_place,
    "warm_up: expandable segments turned on and left (PYTORCH_CUDA_ALLOC_CONF)": wu_alloc_conf_left_set,
    "warm_up: memoised by the pools used": wu_memo_by_pools,
    "warm_up: NumPy int32": wu_int32_numpy,
    "warm_up: the large request rounded up to 4 MiB": wu_round_up_to_4_mib,
    "warm_up: the exercise's example by hand, else the largest": wu_examples_only,
    "block_memory: gc off inside the block, on after it": bm_gc_off_inside,
    "block_memory: seeds the generator at each block": bm_reseeds,
    "block_memory: set_num_threads(1) left": bm_one_thread,
    "run_batches_fixed: sums kept from an earlier call with the same lengths": rb_sums_cached_by_lengths,
}

ALSO_RIGHT = {
    "warm_up: NumPy int64 masks": wu_numpy_masks,
    "warm_up: rounded up to whole MiB, small as 1 MiB": wu_round_up_to_mib,
    "warm_up: segment-sized large request, 512 bytes for the small pool": wu_segment_sized,
    "warm_up: torch int64 tensor arithmetic": wu_torch_tensor,
    "warm_up: math.ceil blocks, 1 byte for the small pool": wu_float_ceil,
    "block_memory: SimpleNamespace reports, closure list": bm_simple_namespace,
    "run_batches_fixed: empty().uniform_()": rb_uniform_into_empty,
    "run_batches_fixed: flat 1-D draws, NumPy float64 result": rb_flat_draws,
}

CHECKS = {  # which check each of WRONG / ALSO_RIGHT goes to
    "warm_up": "check_warm_up_sizes", "block_memory": "check_block_memory",
    "run_batches_fixed": "check_batches_without_growth",
}

GPU_ONLY = {
    "chunked draws": (rb_chunked_draws, "wrong", "check_batches_without_growth",
                      "Philox offsets per launch: chunks of a large batch are other numbers than one draw"),
    "side stream, no wait before .item()": (rb_side_stream_no_wait, "wrong", "check_batches_without_growth",
                                            "a wait missing from the side stream back to the caller's"),
    "pinned non_blocking sums, no synchronize": (rb_pinned_non_blocking, "wrong", "check_batches_without_growth",
                                                 "a host read that depends on the GPU's speed"),
    "event recorded before the sum is queued": (rb_event_before_draw, "wrong", "check_batches_without_growth",
                                                "an event recorded too early: the next draw races the sum"),
    "large-pool counters only": (bm_large_pool_only, "wrong", "check_block_memory",
                                 "blocks of small tensors report 0; CPU imitation lacks per-pool keys"),
    "caller's stream, synchronize at the end, float64 sums": (rb_non_default_caller_stream, "right",
                                                              "check_batches_without_growth",
                                                              "all work on the caller's stream, read after a sync"),
}


_BUFFERS: dict = {}


def rb_buffer_kept_per_width(lengths, width=4096):
    """Wrong: a buffer kept between calls (one per width, made at the first call with that width, "so the next
    call needs no new memory"): a later call with a longer batch slices past its end, buf[:n] has fewer rows, and
    that batch's sum counts fewer numbers (a stale buffer)."""
    import torch
    if width not in _BUFFERS:
        _BUFFERS[width] = torch.empty(max(lengths), width, device="cuda")
    buf = _BUFFERS[width]
    sums = []
    for n in lengths:
        batch = buf[:n]
        batch.uniform_()
        sums.append(float(batch.sum()))
    return sums


WRONG["run_batches_fixed: a buffer kept between calls, per width"] = rb_buffer_kept_per_width


_DEP_OPEN: list = []


@contextmanager
def bm_deprecated_aliases():
    """Right: the counters through PyTorch's older names (memory_cached / max_memory_cached for the reserved bytes,
    reset_max_memory_allocated / reset_max_memory_cached for the reset, which call reset_peak_memory_stats), the
    open blocks' peaks kept before each reset; a report as a dict subclass with attribute access."""
    import warnings

    import torch

    class Report(dict):
        __getattr__ = dict.get

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for b in _DEP_OPEN:
            b[2] = max(b[2], torch.cuda.max_memory_allocated())
            b[3] = max(b[3], torch.cuda.max_memory_cached())
        me = [torch.cuda.memory_allocated(), torch.cuda.memory_cached(), 0, 0]
        torch.cuda.reset_max_memory_allocated()
        torch.cuda.reset_max_memory_cached()
        me[2], me[3] = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_cached()
    report = Report(peak_allocated=0, reserved_growth=0)
    _DEP_OPEN.append(me)
    try:
        yield report
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            pa = max(me[2], torch.cuda.max_memory_allocated())
            pr = max(me[3], torch.cuda.max_memory_cached())
        del _DEP_OPEN[next(i for i, b in enumerate(_DEP_OPEN) if b is me)]
        for b in _DEP_OPEN:
            b[2], b[3] = max(b[2], pa), max(b[3], pr)
        report["peak_allocated"], report["reserved_growth"] = pa - me[0], pr - me[1]


ALSO_RIGHT["block_memory: PyTorch's older names (memory_cached, reset_max_memory_*), a dict report"] = \
    bm_deprecated_aliases


def _int32_reports():
    inner = _bm()

    @contextmanager
    def block_memory():
        with inner() as report:
            out = types.SimpleNamespace(peak_allocated=np.int32(0), reserved_growth=np.int32(0))
            try:
                yield out
            finally:
                pass
        # filled in after the inner block has ended (its finally ran); a raise skips this, as no report is read then
        out.peak_allocated = np.array(report.peak_allocated).astype(np.int32)[()]
        out.reserved_growth = np.array(report.reserved_growth).astype(np.int32)[()]
    return block_memory


bm_int32_bytes = _int32_reports()
bm_int32_bytes.__doc__ = """Wrong: the report's bytes stored as np.int32 ("a compact record"): a block that holds
2 GiB or more (an H200 holds 141 GB) reports a wrapped, negative number.  The check's programs hold at most a few
hundred MiB in any block, so the wrap never shows."""
WRONG["block_memory: bytes as np.int32 (wraps at 2 GiB)"] = bm_int32_bytes


def rb_expandable_segments_left_on(lengths, width=4096):
    """Wrong: turns on the allocator's expandable segments for the whole process ("no more fragmentation, no more
    growth") and leaves them on, then frees each batch before the next after a warm-up: every later allocation
    of the process, in other cells and notebooks, runs under another allocator setting (a global setting changed
    and left; the check compares only the BASIC settings, not the allocator's)."""
    import torch
    try:
        torch.cuda.memory._set_allocator_settings("expandable_segments:True")
    except (AttributeError, RuntimeError):  # a PyTorch without CUDA: the setting is the GPU's business
        pass
    warm = torch.empty(max(lengths), width, device="cuda")
    del warm
    sums = []
    for n in lengths:
        batch = torch.rand(n, width, device="cuda")
        sums.append(float(batch.sum()))
        del batch
    return sums


def rb_num_threads_left(lengths, width=4096):
    """Wrong: torch.set_num_threads(1) "so the sums come out in a fixed order", left so for the rest of the
    process (a global setting changed and left); the loop itself is right."""
    import torch
    torch.set_num_threads(1)
    return rb_uniform_into_empty(lengths, width)


WRONG["run_batches_fixed: expandable segments turned on and left"] = rb_expandable_segments_left_on
WRONG["run_batches_fixed: set_num_threads(1) left"] = rb_num_threads_left

GPU_ONLY.update({
    "block reports as np.int32": (bm_int32_bytes, "wrong", "check_block_memory",
                                  "wraps past 2 GiB; the GPU part's programs share the CPU part's sizes (at most a "
                                  "few hundred MiB in a block), so it should PASS there too: a misjudgment"),
    "expandable segments turned on and left": (rb_expandable_segments_left_on, "wrong",
                                               "check_batches_without_growth",
                                               "a process-wide allocator setting left; `keeping` reads BASIC only"),
    "gc off inside a block": (bm_gc_off_inside, "wrong", "check_block_memory",
                              "the GPU part runs with gc disabled; the answer turns it on at the first block's end"),
})


def rb_explicit_device_index(lengths, width=4096):
    """Right: the device named by its index (torch.cuda.current_device()), a buffer of the largest batch, each
    batch drawn into its rows with torch.rand(out=), the sums as 0-d float64 tensors moved to the host at the end."""
    import torch
    dev = torch.device("cuda", torch.cuda.current_device())
    buf = torch.empty(max(lengths), width, device=dev)
    sums = []
    for n in lengths:
        torch.rand(n, width, device=dev, out=buf[:n])
        sums.append(buf[:n].sum(dtype=torch.float64))
    return torch.stack(sums).cpu().tolist()


_IDX_OPEN: list = []


@contextmanager
def bm_device_index():
    """Right: every counter read for the current device by its index (torch.cuda.current_device()), the open
    blocks' peaks kept before each reset; the report a small class with __slots__."""
    import torch

    class Report:
        __slots__ = ("peak_allocated", "reserved_growth")

    dev = torch.cuda.current_device()
    for b in _IDX_OPEN:
        b[2] = max(b[2], torch.cuda.max_memory_allocated(dev))
        b[3] = max(b[3], torch.cuda.max_memory_reserved(dev))
    me = [torch.cuda.memory_allocated(dev), torch.cuda.memory_reserved(dev), 0, 0]
    torch.cuda.reset_peak_memory_stats(dev)
    me[2], me[3] = torch.cuda.max_memory_allocated(dev), torch.cuda.max_memory_reserved(dev)
    report = Report()
    _IDX_OPEN.append(me)
    try:
        yield report
    finally:
        pa = max(me[2], torch.cuda.max_memory_allocated(dev))
        pr = max(me[3], torch.cuda.max_memory_reserved(dev))
        del _IDX_OPEN[next(i for i, b in enumerate(_IDX_OPEN) if b is me)]
        for b in _IDX_OPEN:
            b[2], b[3] = max(b[2], pa), max(b[3], pr)
        report.peak_allocated, report.reserved_growth = pa - me[0], pr - me[1]


ALSO_RIGHT["run_batches_fixed: device by index, out= into a buffer, float64 0-d sums stacked"] = rb_explicit_device_index
ALSO_RIGHT["block_memory: counters read for torch.cuda.current_device(), a __slots__ report"] = bm_device_index


def _segments_rounded():
    inner = _bm()

    @contextmanager
    def block_memory():
        out = types.SimpleNamespace(peak_allocated=0, reserved_growth=0)
        with inner() as report:
            yield out
        out.peak_allocated = report.peak_allocated
        out.reserved_growth = -(-report.reserved_growth // (2 * MiB)) * 2 * MiB
    return block_memory


bm_growth_in_whole_segments = _segments_rounded()
bm_growth_in_whole_segments.__doc__ = """Right on a GPU: reserved growth rounded up to a multiple of 2 MiB ("the cache
grows by whole segments"): every segment of PyTorch's caching allocator is a multiple of 2 MiB (2 MiB small, 20 MiB,
or rounded up to 2 MiB), so memory_reserved() is always one, and so is a difference of two readings: the rounding
changes nothing.  The CPU part's ImitatedCounters grow the reserved bytes block by block (512 bytes), which no GPU
does, so it FAILs there."""
ALSO_RIGHT["block_memory: reserved growth rounded up to whole 2 MiB (a no-op on a GPU)"] = bm_growth_in_whole_segments


def _empty_cache_at_end():
    import torch
    torch.cuda.empty_cache()


bm_empties_cache_at_end = _bm(on_exit=lambda undo: _empty_cache_at_end())
bm_empties_cache_at_end.__doc__ = """Wrong: torch.cuda.empty_cache() when a block ends ("clean up after the
measurement"), before the report is worked out: the code after the block (and the blocks around it) finds the cache
emptied that it would have reused, and pays new cudaMallocs; a later block's reserved_growth is then larger than
without the measurement.  The check compares the counters when a block starts (`entered` against `start`), never
when it ends."""
WRONG["block_memory: empties the cache when a block ends"] = bm_empties_cache_at_end

GPU_ONLY.update({
    "empty_cache() when a block ends": (bm_empties_cache_at_end, "wrong", "check_block_memory",
                                        "nothing read after __exit__; expected to PASS on the GPU too (misjudged)"),
    "reserved growth rounded up to 2 MiB": (bm_growth_in_whole_segments, "right", "check_block_memory",
                                            "a no-op on a real allocator (segments are 2 MiB multiples); FAILs on the "
                                            "CPU's ImitatedCounters, should PASS on the H200"),
})
