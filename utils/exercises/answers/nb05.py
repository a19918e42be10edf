"""Wrong answers, and other right ones, to the exercises of notebook 05 (debugging asynchronous
CUDA errors), for the tests: SPOILERS.

Exercise 1 is checked on the CPU and on the GPU alike (its scripts pick the device); exercises 2 and
3 need a GPU for their streams.  Without one, their checks run on the CPU what a CPU can tell (values,
errors, the calls that would make the host wait for a GPU): every wrong answer fails there too
(WRONG_ON_CPU), except those that only a GPU shows wrong (ONLY_ON_A_GPU: a stream that does not
wait).  The functions of exercise 2 travel to a fresh process as code only: each is a plain
top-level function that uses torch, F and math alone.
"""

from __future__ import annotations

import random
import re
import threading

import torch
import torch.nn.functional as F

from ...processes import run_process


# ---------------------------------------------------------------- exercise 1: find_failing_cell (CPU)
def _frames(traceback_lines: list[str], file: str = "<string>") -> list[tuple[int, str]]:
    """(line, function) of each frame of the cells themselves, outermost first."""
    return [(int(n), function) for n, function in
            re.findall(rf'File "{re.escape(file)}", line (\d+), in (\S+)', "\n".join(traceback_lines))]


# The same cells run the same way end the same way (their ids are seeded): the answers that run them on the CPU share
# one fresh process per notebook and joiner (the tests run the answers side by side, on threads, and each process
# costs seconds). Every answer still runs, and reads the traceback as its own.
_RUNS: dict[tuple[str, tuple[str, ...]], list] = {}
_RUNS_LOCK = threading.Lock()


def _on_cpu(cells, joiner="\n") -> list[str]:
    with _RUNS_LOCK:
        run = _RUNS.setdefault((joiner, tuple(cells)), [threading.Lock(), None])
    with run[0]:
        if run[1] is None:
            run[1] = run_process(joiner.join(cells), env={"DEVICE": "cpu"}).traceback
        return list(run[1])


def _in_cell(cells, line, blank_lines=0):
    """(cell, line in it) of a line of the cells joined with `blank_lines` empty lines between them."""
    for number, cell in enumerate(cells, 1):
        length = len(cell.splitlines())
        if line <= length:
            return number, line
        line -= length + blank_lines
    return len(cells), line


def _module_line(cells):
    return [line for line, function in _frames(_on_cpu(cells)) if function == "<module>"][-1]


def hard_coded(cells):  # the place in the first notebook, whatever the notebook
    return 6, 6


def as_is(cells):  # the device the cells name (the GPU, where there is one): where the error surfaced
    return _in_cell(cells, _frames(run_process("\n".join(cells)).traceback)[0][0])


def last_frame_of_the_cells(cells):  # the lecture's way, the last frame: a helper's line in cell 2, for some lookups
    return _in_cell(cells, _frames(_on_cpu(cells))[-1][0])


def zero_based_line(cells):  # counts a cell's lines from 0
    cell, line = _in_cell(cells, _module_line(cells))
    return cell, line - 1


def zero_based_cell(cells):  # counts cells from 0
    cell, line = _in_cell(cells, _module_line(cells))
    return cell - 1, line


def line_of_the_whole(cells):  # the line counted over all the cells, not within the cell
    return _in_cell(cells, _module_line(cells))[0], _module_line(cells)


def joined_with_blank_lines(cells):  # cells joined with a blank line between, counted as if joined without
    line = [n for n, function in _frames(_on_cpu(cells, "\n\n")) if function == "<module>"][-1]
    return _in_cell(cells, line)


def any_file_last_line(cells):  # the last "line N" of the traceback: often a line of PyTorch's own code
    return _in_cell(cells, int(re.findall(r"line (\d+)", "\n".join(_on_cpu(cells)))[-1]))


def each_cell_in_a_process_of_its_own(cells):  # each cell alone: a step cell lacks the names the earlier cells define
    for number, cell in enumerate(cells, 1):
        frames = _frames(_on_cpu([cell]))
        if frames:
            return number, frames[0][0]
    return len(cells), 1


def the_cell_that_reads_the_losses(cells):  # where a GPU run reports it: the cell with .item()
    number = next(n for n, cell in enumerate(cells, 1) if ".item()" in cell)
    return number, 1


def first_lookup_of_the_second_step(cells):
    """The seventeenth adversary's: reads the text, and knows step 0 is fine: the first lookup of the next step cell
    (one cell early, on the lookup's line, where that lookup fails a step later)."""
    lines = cells[3].splitlines()
    return 4, next(line for line, text in enumerate(lines, 1) if "ids[" in text)


def first_lookup_in_text(cells):  # reads the cells, runs nothing: the first lookup of the first step cell
    for number, cell in enumerate(cells, 1):
        for line, text in enumerate(cell.splitlines(), 1):
            if "ids[" in text:
                return number, line
    return 1, 1


def _replayed(cells, in_time=True, lookups=None, last_of_step=False):
    """(cell, line) of the lookup that a replay of the cells' seeded draws finds: in the order the cells run them
    (step by step, each step's lookups in order), or lookup by lookup over all steps (in_time=False); with
    `lookups`, that many a step whatever the cells say; with last_of_step, the last bad lookup of the first step
    that has one."""
    import random

    setup = cells[0]
    seed = int(re.search(r"random\.Random\((\d+)\)", setup).group(1))
    vocab = int(re.search(r"^VOCAB = (\d+)", setup, re.MULTILINE).group(1))
    rows = int(re.search(r"Embedding\((\d+)", setup).group(1))
    steps = [(n, cell) for n, cell in enumerate(cells, 1) if "batch(" in cell and "def batch" not in cell]
    lookups = lookups or int(re.search(r"ids = batch\((\d+)\)", steps[0][1]).group(1))
    where = {int(m.group(1)): line for line, text in enumerate(steps[0][1].splitlines(), 1)
             if (m := re.search(r"ids\[(\d+)\]", text))}
    data = random.Random(seed)
    drawn = [[[data.randrange(vocab) for _ in range(4)] for _ in range(lookups)] for _ in steps]
    order = ([(step, k) for step in range(len(steps)) for k in range(lookups)] if in_time
             else [(step, k) for k in range(lookups) for step in range(len(steps))])
    found = [(step, k) for step, k in order if max(drawn[step][k]) >= rows]
    step, k = [(s, k) for s, k in found if s == found[0][0]][-1] if last_of_step else found[0]
    return steps[step][0], where[k]


def replay_in_time(cells):  # right: nothing run, the seeded draws replayed in the order the cells run them
    return _replayed(cells)


def replay_lookup_by_lookup(cells):  # the first lookup that ever draws a bad id, not the first to fail in time
    return _replayed(cells, in_time=False)


def replay_last_of_step(cells):  # the tenth adversary's: no `break`, so the last bad lookup of the step that fails
    return _replayed(cells, last_of_step=True)


def replay_three_lookups(cells):  # the tenth adversary's: three lookups a step, as in the notebook shown (3 to 5)
    return _replayed(cells, lookups=3)


def replay_from_step_2(cells):
    """The eighteenth adversary's: replays the draws in time, but from the third step on (every notebook the check
    chose failed there or later)."""
    import random

    setup = cells[0]
    seed = int(re.search(r"random\.Random\((\d+)\)", setup).group(1))
    vocab = int(re.search(r"^VOCAB = (\d+)", setup, re.MULTILINE).group(1))
    rows = int(re.search(r"Embedding\((\d+)", setup).group(1))
    steps = [(n, cell) for n, cell in enumerate(cells, 1) if "batch(" in cell and "def batch" not in cell]
    lookups = int(re.search(r"ids = batch\((\d+)\)", steps[0][1]).group(1))
    where = {int(m.group(1)): line for line, text in enumerate(steps[0][1].splitlines(), 1)
             if (m := re.search(r"ids\[(\d+)\]", text))}
    data = random.Random(seed)
    drawn = [[[data.randrange(vocab) for _ in range(4)] for _ in range(lookups)] for _ in steps]
    step, k = next(((step, k) for step in range(2, len(steps)) for k in range(lookups) if max(drawn[step][k]) >= rows),
                   (len(steps) - 1, 0))  # none found: the last step's first lookup
    return steps[step][0], where[k]


def first_five_cells(cells):
    """The eighteenth adversary's: runs the first five cells alone (the setup, the helpers, three steps), and where
    they all pass, names cell 5's first lookup."""
    frames = _frames(run_process("\n".join(cells[:5]), env={"DEVICE": "cpu"}).traceback)
    module = [line for line, function in frames if function == "<module>"]
    if module:
        return _in_cell(cells[:5], module[-1])
    return 5, next(line for line, text in enumerate(cells[4].splitlines(), 1) if "ids[" in text)


def blocking_or_cpu(cells):  # right: CUDA_LAUNCH_BLOCKING=1 on a GPU, the CPU elsewhere
    if torch.cuda.is_available():
        frames = _frames(run_process("\n".join(cells), env={"CUDA_LAUNCH_BLOCKING": "1"}).traceback)
    else:
        frames = _frames(_on_cpu(cells))
    return _in_cell(cells, [line for line, function in frames if function == "<module>"][-1])


def each_cell_compiled_with_its_name(cells):
    """Right: one fresh process runs the cells one after the other, each compiled under a name of its own (as
    ipykernel does), so that the traceback names the cell; a list, not a tuple."""
    driver = ("import json, sys\n"
              "namespace = {'__name__': '__main__'}\n"
              "for n, cell in enumerate(json.loads(sys.argv[1]), 1):\n"
              "    exec(compile(cell, f'<cell {n}>', 'exec'), namespace)  # noqa: S102 -- a kernel's way\n")
    import json

    done = run_process(driver, json.dumps(list(cells)), env={"DEVICE": "cpu"})
    found = re.findall(r'File "<cell (\d+)>", line (\d+), in <module>', "\n".join(done.traceback))
    return [int(found[-1][0]), int(found[-1][1])]


def as_numpy_integers(cells):  # right: the place as NumPy integers
    import numpy as np

    cell, line = replay_in_time(cells)
    return np.int64(cell), np.int32(line)


# round 19's adversary: the place right, but a global setting of the caller's process changed and left
def blocking_set_in_the_kernel(cells):
    """Sets CUDA_LAUNCH_BLOCKING=1 (and DEVICE=cpu without a GPU) in os.environ of the notebook's own process, then
    runs the cells in a child that inherits it: the notebook keeps the variables (a CUDA started later launches every
    kernel blocking), where the exercise asks for them in the fresh process's environment."""
    import os
    import subprocess
    import sys

    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    if not torch.cuda.is_available():
        os.environ["DEVICE"] = "cpu"
    done = subprocess.run([sys.executable, "-c", "\n".join(cells)], capture_output=True, text=True, check=False)
    line = [int(n) for n in re.findall(r'File "<string>", line (\d+), in <module>', done.stderr)][-1]
    for number, cell in enumerate(cells, 1):
        length = len(cell.splitlines())
        if line <= length:
            return number, line
        line -= length
    return None



# round 19's adversary: the place right, but Python's global random reseeded to the cells' seed and left so
def replay_with_the_global_random(cells):
    setup = cells[0]
    seed = int(re.search(r"random\.Random\((\d+)\)", setup).group(1))
    vocab = int(re.search(r"^VOCAB = (\d+)", setup, re.MULTILINE).group(1))
    rows = int(re.search(r"Embedding\((\d+)", setup).group(1))
    random.seed(seed)
    for n, cell in enumerate(cells, 1):
        if not cell.startswith("# step"):
            continue
        lines = [i for i, t in enumerate(cell.splitlines(), 1) if "ids[" in t]
        drawn = [[random.randrange(vocab) for _ in range(4)] for _ in lines]
        for i, ids in zip(lines, drawn, strict=True):
            if max(ids) >= rows:
                return n, i
    return None

def device_set_and_put_back(cells):  # right (round 19's adversary's way): os.environ changed, and put back after
    import os

    old = os.environ.get("DEVICE")
    os.environ["DEVICE"] = "cpu"
    try:
        return replay_in_time(cells)  # no process: only what it does to os.environ is the point
    finally:
        if old is None:
            os.environ.pop("DEVICE", None)
        else:
            os.environ["DEVICE"] = old


# ---------------------------------------------------------------- exercise 2: safe_index_add (CPU or GPU)
def no_check(target, dim, index, source):  # a device-side assert on a GPU
    return target.index_add(dim, index, source)


def upper_bound_only(target, dim, index, source):
    size = target.shape[dim]
    too_large = index >= size
    if too_large.any():
        position = int(too_large.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def counts_from_the_end(target, dim, index, source):  # as a Python list would: index_add_ does not
    size = target.shape[dim]
    bad = (index < -size) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def wraps_negatives(target, dim, index, source):  # hides the bug: -1 becomes the last slice
    return target.index_add(dim, index % target.shape[dim], source)


def size_of_dim_0(target, dim, index, source):  # checks against the rows whatever dim is
    size = target.shape[0]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def negative_dim_read_as_dim_0(target, dim, index, source):  # a negative dim taken for dim 0: wrong where they differ
    size = target.shape[max(dim, 0)]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def one_sync_per_index(target, dim, index, source):  # right answers, but the host asks the GPU once per index
    size = target.shape[dim]
    for position in range(len(index)):
        if index[position] < 0 or index[position] >= size:
            raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def validates_after(target, dim, index, source):  # on a GPU the kernel has asserted before the check
    out = target.index_add(dim, index, source)
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return out


def reraises_the_ops_error(target, dim, index, source):  # the CPU's index_add raises; a GPU's does not
    try:
        return target.index_add(dim, index, source)
    except RuntimeError:
        size = target.shape[dim]
        bad = (index < 0) | (index >= size)
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}") from None


def value_error(target, dim, index, source):
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise ValueError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def plain_assert(target, dim, index, source):  # AssertionError, and no check at all under python -O
    assert bool(((index >= 0) & (index < target.shape[dim])).all()), "an index is out of range"
    return target.index_add(dim, index, source)


def assert_async(target, dim, index, source):  # on a GPU still a device-side assert; on the CPU a RuntimeError
    torch._assert_async(((index >= 0) & (index < target.shape[dim])).all())
    return target.index_add(dim, index, source)


def value_without_position(target, dim, index, source):
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise IndexError(f"index {int(index[bad][0])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def the_extreme_index(target, dim, index, source):  # names the smallest or the largest, not the first bad one
    size = target.shape[dim]
    low, high = torch.stack(torch.aminmax(index)).tolist()
    if low < 0 or high >= size:
        value = low if low < 0 else high
        position = int((index == value).int().argmax())
        raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def in_place(target, dim, index, source):  # changes the caller's target
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add_(dim, index, source)


def tolist_then_loop(target, dim, index, source):  # right: one copy to the host, then Python checks each index
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for dimension {dim} of size {size}")
    return target.index_add(dim, index, source)


def nonzero_positions(target, dim, index, source):  # right: nonzero waits once, for the count of bad indices
    size = target.shape[dim]
    positions = ((index < 0) | (index >= size)).nonzero()
    if len(positions):
        first = int(positions[0, 0])
        raise IndexError(f"index[{first}]: {int(index[first])} is not in 0..{size - 1}")
    return torch.index_add(target, dim, index, source)


def nonzero_then_tolist(target, dim, index, source):  # right: nonzero waits once; the .tolist() of its empty result
    size = target.shape[dim]                            # copies nothing, and waits for nothing
    positions = ((index < 0) | (index >= size)).nonzero().flatten().tolist()
    if positions:
        first = positions[0]
        raise IndexError(f"index[{first}] = {int(index[first])} is out of range (size {size})")
    return target.index_add(dim, index, source)


def copy_to_a_cpu_device_and_any(target, dim, index, source):  # two waits: the copy, and bool() of any() on the GPU
    size = target.shape[dim]
    values = index.to(torch.device("cpu")).tolist()
    if bool(((index < 0) | (index >= size)).any()):
        first = next(i for i, value in enumerate(values) if not 0 <= value < size)
        raise IndexError(f"index[{first}] = {values[first]} is out of range for size {size}")
    return target.index_add(dim, index, source)


def copy_then_any_of_the_gpu_tensor(target, dim, index, source):  # two waits: the copy, and any() of the GPU's
    size = target.shape[dim]
    values = index.cpu().tolist()
    if bool(((index < 0) | (index >= size)).any()):
        first = next(i for i, value in enumerate(values) if not 0 <= value < size)
        raise IndexError(f"index[{first}] = {values[first]} is out of range for size {size}")
    return target.index_add(dim, index, source)


def min_and_max_items(target, dim, index, source):  # min() of an empty index raises; and two waits
    size = target.shape[dim]
    if index.min().item() < 0 or index.max().item() >= size:
        values = index.tolist()
        first = next(i for i, value in enumerate(values) if not 0 <= value < size)
        raise IndexError(f"index[{first}] = {values[first]} is out of range for size {size}")
    return target.index_add(dim, index, source)


def synchronize_first(target, dim, index, source):  # the whole device first, then the check: two waits
    torch.cuda.synchronize()  # "make sure the indices are there"
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def cpu_then_tolist(target, dim, index, source):  # right: one copy to the host, read there as often as needed
    size = target.shape[dim]
    values = index.cpu().tolist()
    for position, value in enumerate(values):
        if value < 0 or value >= size:
            raise IndexError(f"index[{position}] = {value}: not in 0..{size - 1}")
    return target.index_add(dim, index, source)


def subclass_of_index_error(target, dim, index, source):  # right: an IndexError of its own kind
    class IndexOutOfRange(IndexError):
        pass

    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexOutOfRange(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def non_blocking_copy_read_at_once(target, dim, index, source):  # a stale buffer on a GPU: read before it landed
    size = target.shape[dim]
    values = index.to("cpu", non_blocking=True).tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def checked_on_a_side_stream_that_never_waits(target, dim, index, source):  # GPU: reads a busy caller's indices early
    size = target.shape[dim]
    if index.is_cuda:
        with torch.cuda.stream(torch.cuda.Stream()):
            values = index.tolist()
    else:
        values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def read_on_the_default_stream(target, dim, index, source):  # GPU: the default stream does not wait for the caller's
    size = target.shape[dim]
    if index.is_cuda:
        with torch.cuda.stream(torch.cuda.default_stream()):
            values = index.tolist()
    else:
        values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def result_on_a_side_stream(target, dim, index, source):  # GPU: the caller never waits for the side stream's result
    size = target.shape[dim]
    values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    if not target.is_cuda:
        return target.index_add(dim, index, source)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        return target.index_add(dim, index, source)


def side_stream_that_waits(target, dim, index, source):  # right: a side stream of its own that waits for the caller's
    size = target.shape[dim]
    if index.is_cuda:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            values = index.tolist()
    else:
        values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def result_on_the_checks_side_stream(target, dim, index, source):  # GPU: the check and then the result on a side
    size = target.shape[dim]  # stream that waits for the caller's; the caller never waits for it (widened once only,
    if not index.is_cuda:  # at the check, whose .tolist() the host waits for: the result was on time by chance)
        values = index.tolist()
        side = None
    else:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    if side is None:
        return target.index_add(dim, index, source)
    with torch.cuda.stream(side):
        return target.index_add(dim, index, source)


def result_on_its_own_stream_raising_inside(target, dim, index, source):
    """The fourth adversary's (GPU): its own stream waits for the caller's, the check (one .tolist()) and the result
    run there, and the caller's stream never waits for it.  On an H200 it passed: the check's own read of the
    indices (Blind, which stops an out-of-range launch) waited for the sleep that made the answer's stream late
    again, so the result was written on time; Blind now reads before that sleep is queued."""
    size = target.shape[dim]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        vals = index.tolist()
        for i, v in enumerate(vals):
            if not 0 <= v < size:
                raise IndexError(f"index[{i}] = {v} out of range")
        out = target.index_add(dim, index, source)
    return out


def argmax_then_a_stacked_tolist(target, dim, index, source):
    """The fourth adversary's: one .tolist() of (any bad, its position, its value), but the value is read with
    index[pos], where pos is argmax's 0-d GPU tensor: PyTorch takes a 0-d integer index as a Python int (.item()),
    so the host waits for the GPU there too, on every call: two waits, where the task asks for one.  On an H200 the
    check counted two (sync debug mode), and the CPU part one; it counts the index now."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if index.numel():
        pos = bad.int().argmax()
        flag, where, value = torch.stack([bad.any().long(), pos.long(), index[pos].long()]).tolist()
        if flag:
            raise IndexError(f"index[{where}] = {value} is out of range for dimension {dim} of size {size}")
    return target.index_add(dim, index, source)


def argmax_then_a_non_blocking_copy_and_an_event(target, dim, index, source):
    """The fourth adversary's: the summary copied to pinned memory with non_blocking=True and an event's
    synchronize() before it is read (one wait), but its value is index[pos] with pos a 0-d GPU tensor: a second
    wait, on every call (see argmax_then_a_stacked_tolist)."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if index.numel():
        pos = bad.int().argmax()
        summary = torch.stack([bad.any().long(), pos.long(), index[pos].long()])
    else:
        summary = torch.zeros(3, dtype=torch.long, device=index.device)
    host = torch.empty(3, dtype=torch.long, pin_memory=torch.cuda.is_available())
    host.copy_(summary, non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    flag, pos, value = host.tolist()
    if flag:
        raise IndexError(f"index[{pos}] is {value}: out of range along dim {dim} (size {size})")
    return target.index_add(dim, index, source)


def error_path_per_index(target, dim, index, source):
    """The tenth adversary's: one question when every index is valid, but on the way to the error the host reads
    the indices one by one (a wait per index up to the first bad one)."""
    size = target.shape[dim]
    if index.numel() and bool(((index < 0) | (index >= size)).any()):
        for i in range(index.numel()):
            value = int(index[i])
            if not 0 <= value < size:
                raise IndexError(f"index[{i}] = {value} out of range along dim {dim} (size {size})")
    return target.index_add(dim, index, source)


def event_before_copy(target, dim, index, source):
    """The tenth adversary's: a non_blocking copy to the host waited for by an event recorded BEFORE the copy was
    queued: the event completes without it, and the host reads the copy before it has landed."""
    size = target.shape[dim]
    if index.numel() == 0:
        return target.index_add(dim, index, source)
    bad = (index < 0) | (index >= size)
    position = bad.int().argmax()
    summary = torch.stack([bad.any().long(), position.long(), index.gather(0, position.reshape(1))[0].long()])
    done = torch.cuda.Event()
    done.record()
    host = summary.to("cpu", non_blocking=True)
    done.synchronize()
    any_bad, where, value = host.tolist()
    if any_bad:
        raise IndexError(f"index[{where}] = {value} out of range (size {size})")
    return target.index_add(dim, index, source)


def event_after_copy(target, dim, index, source):  # right: the same, with the event recorded after the copy
    size = target.shape[dim]
    if index.numel() == 0:
        return target.index_add(dim, index, source)
    bad = (index < 0) | (index >= size)
    position = bad.int().argmax()
    summary = torch.stack([bad.any().long(), position.long(), index.gather(0, position.reshape(1))[0].long()])
    host = summary.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    any_bad, where, value = host.tolist()
    if any_bad:
        raise IndexError(f"index[{where}] = {value} out of range (size {size})")
    return target.index_add(dim, index, source)


def non_blocking_copy_and_the_current_stream(target, dim, index, source):
    """Right (the tenth adversary's): a non_blocking copy to the host, the current stream's synchronize() (one
    wait), then the copy read."""
    size = target.shape[dim]
    if index.numel():
        bad = (index < 0) | (index >= size)
        position = bad.int().argmax()
        summary = torch.stack([bad.any().long(), position.long(), index.gather(0, position.reshape(1))[0].long()])
        host = summary.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        any_bad, where, value = host.tolist()
        if any_bad:
            raise IndexError(f"index[{where}] = {value}: out of range along dim {dim} of size {size}")
    return target.index_add(dim, index, source)


def check_and_result_on_a_side_stream_both_waits(target, dim, index, source):  # right: the caller waits for it
    size = target.shape[dim]
    if not index.is_cuda:
        values = index.tolist()
        for position, value in enumerate(values):
            if not 0 <= value < size:
                raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
        return target.index_add(dim, index, source)
    caller = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(caller)
    with torch.cuda.stream(side):
        values = index.tolist()
        for position, value in enumerate(values):
            if not 0 <= value < size:
                raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
        out = target.index_add(dim, index, source)
    caller.wait_stream(side)
    out.record_stream(caller)
    return out


def one_hot_as_the_check(target, dim, index, source):  # F.one_hot's own check: a CPU's; a GPU's asserts instead
    size = target.shape[dim]
    if index.numel():
        try:
            F.one_hot(index.long(), size)
        except RuntimeError:
            values = index.tolist()
            position = next(i for i, value in enumerate(values) if not 0 <= value < size)
            raise IndexError(f"index[{position}] = {values[position]} is out of range 0..{size - 1}") from None
    return target.index_add(dim, index, source)


def take_along_dim_as_the_check(target, dim, index, source):  # a gather inside: raises on a CPU, asserts on a GPU
    size = target.shape[dim]
    try:
        torch.take_along_dim(torch.arange(size, device=index.device), index.long())
    except (RuntimeError, IndexError):
        values = index.tolist()
        position = next(i for i, value in enumerate(values) if not 0 <= value < size)
        raise IndexError(f"index[{position}] = {values[position]} is out of range 0..{size - 1}") from None
    return target.index_add(dim, index, source)


def empty_index_returns_target(target, dim, index, source):  # nothing to add: target itself, not a copy
    if index.numel() == 0:
        return target
    return tolist_then_loop(target, dim, index, source)


def position_and_value_swapped(target, dim, index, source):
    """WRONG (round 74's adversary): "index[1] = 5" for the value 5 at position 1: both numbers named, each in the
    other's place (the check looked for the two numbers anywhere in the message)."""
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{value}] = {position} is out of range for dimension {dim} of size {size}")
    return target.index_add(dim, index, source)


def message_ends_with_a_period(target, dim, index, source):
    """Right (the seventeenth adversary's): the message a sentence that ends right after the value, "... = 1000."."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if index.numel() and bool(bad.any()):
        position = int(bad.int().argmax())
        value = int(index[position])
        raise IndexError(f"index_add along dim {dim} (size {size}): the first bad index is index[{position}] = "
                         f"{value}.")
    return target.index_add(dim, index, source)


def free_wording_swapped(target, dim, index, source):
    """Wrong (round 76's adversary): free wording, the two numbers swapped, "entry 5 holds 1" for 5 at position 1;
    no message in free wording says which number is the position: the task asks for index[P] = V."""
    size = target.shape[dim]
    values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"bad index: entry {value} holds {position} (valid 0..{size - 1})")
    return target.index_add(dim, index, source)


def free_wording_right_order(target, dim, index, source):
    """Wrong by the task's form (round 76's adversary wrote it as right): "entry 1 holds 5", the numbers in the
    right order but not as index[P] = V, which alone says which is the position."""
    size = target.shape[dim]
    values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"bad index: entry #{position} holds {value}; valid is 0..{size - 1}")
    return target.index_add(dim, index, source)


def message_names_the_last_bad_position_too(target, dim, index, source):
    """Right (round 76's adversary): index[P] = V for the first bad index, then the last bad one's position as
    well (round 74's rule read every marked number as the position and rejected it)."""
    size = target.shape[dim]
    values = index.tolist()
    bad = [p for p, v in enumerate(values) if not 0 <= v < size]
    if bad:
        raise IndexError(f"index[{bad[0]}] = {values[bad[0]]} is out of range 0..{size - 1} "
                         f"({len(bad)} bad; the last is at position {bad[-1]})")
    return target.index_add(dim, index, source)


def message_counts_from_one_as_well(target, dim, index, source):
    """Right (round 76's adversary): index[P] = V, then the position counted from 1 for a person who counts so."""
    size = target.shape[dim]
    values = index.tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} "
                             f"(0-based; that is position {position + 1} counting from 1)")
    return target.index_add(dim, index, source)


def non_blocking_copy_polled_with_an_event(target, dim, index, source):
    """Right (the seventeenth adversary's): a non_blocking copy of the indices, an event recorded after it, polled
    with query() until it says done (one wait, as the lecture teaches), then plain Python on the host copy."""
    values = index.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    while not done.query():
        pass
    size = target.shape[dim]
    for position, value in enumerate(values.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is outside 0..{size - 1}")
    return target.index_add(dim, index, source)


def non_blocking_copy_query_else_synchronize(target, dim, index, source):
    """Right (the seventeenth adversary's): a non_blocking copy, an event recorded after it, and its synchronize()
    only if query() says it is not done yet: one wait either way."""
    values = index.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    if not done.query():
        done.synchronize()
    size = target.shape[dim]
    bad = (values < 0) | (values >= size)
    if values.numel() and bool(bad.any()):
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(values[position])} out of range (size {size})")
    return target.index_add(dim, index, source)


def error_path_polls_each_index(target, dim, index, source):
    """The seventeenth adversary's: one question when all are valid, but on the way to the error each index copied
    with non_blocking=True and an event polled with query() until it says done: a wait per index."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if index.numel() and bool(bad.any()):
        for position in range(index.numel()):
            one = index[position:position + 1].to("cpu", non_blocking=True)
            done = torch.cuda.Event()
            done.record()
            while not done.query():
                pass
            value = one.tolist()[0]
            if not 0 <= value < size:
                raise IndexError(f"index[{position}] = {value} is outside 0..{size - 1}")
    return target.index_add(dim, index, source)


def checks_the_first_64(target, dim, index, source):
    """The seventeenth adversary's: only the first 64 indices checked, "to keep it cheap": a bad one later runs."""
    size = target.shape[dim]
    head = index[:64]
    bad = (head < 0) | (head >= size)
    if head.numel() and bool(bad.any()):
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(head[position])} out of range (size {size})")
    return target.index_add(dim, index, source)


def arange_on_the_host(target, dim, index, source):
    """The seventeenth adversary's (GPU): the first bad position as a min over torch.where(bad, arange, n), with
    torch.arange made on the host (no device=): torch.where of a GPU mask and a host tensor raises on a GPU."""
    size = target.shape[dim]
    n = index.numel()
    if n == 0:
        return target.index_add(dim, index, source)
    bad = (index < 0) | (index >= size)
    first = torch.where(bad, torch.arange(n), n).min()
    found = torch.stack([first, index.long().gather(0, first.clamp(max=n - 1).view(1))[0]]).tolist()
    if found[0] < n:
        raise IndexError(f"index[{found[0]}] = {found[1]} is out of range for size {size}")
    return target.index_add(dim, index, source)


# round 19's adversary: the result computed and returned on the host (on a GPU: not on target's device)
def computed_on_the_host(target, dim, index, source):
    """Copies target, index and source to the host with non_blocking=True, one synchronize() for all three, checks
    and computes there, and returns the host tensor: one wait, but the result is not on target's device."""
    t = target.to("cpu", non_blocking=True)
    i = index.to("cpu", non_blocking=True)
    s = source.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    size = t.shape[dim]
    for position, value in enumerate(i.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return t.index_add(dim, i, s)


# round 19's adversary: the indices read element by element through their storage (a wait each on a GPU)
def read_through_the_storage(target, dim, index, source):
    size = target.shape[dim]
    values = index.storage().tolist()[index.storage_offset():index.storage_offset() + index.numel()]
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


# round 19's adversary: autograd turned off "to save memory", never turned back on (the caller's later backward()
# raises)
def no_grad_left_off(target, dim, index, source):
    torch.set_grad_enabled(False)
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


# round 19's adversary: the result computed under torch.no_grad(): cut from autograd, where index_add's carries a
# grad_fn for a target or source that requires grad
def detached_result(target, dim, index, source):
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    with torch.no_grad():
        return target.index_add(dim, index, source)


# round 19's adversary: a branch on the device: torch._assert_async on a GPU (a device-side assert), the checked
# path on the CPU
def assert_async_on_the_gpu(target, dim, index, source):
    size = target.shape[dim]
    if index.is_cuda:
        torch._assert_async(((index >= 0) & (index < size)).all())
        return target.index_add(dim, index, source)
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


# round 19's adversary: `if torch.cuda.is_available(): torch.cuda.synchronize()` first, then a .tolist(): two waits
def synchronize_if_available(target, dim, index, source):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


# ---------------------------------------------------------------- exercise 3: train_steps_no_sync (GPU)
def _no_sync(model, batches, lr, *, log_item=False, bool_guard=False, mask=False, guard=True, per_row_mean=False,
             guard_loss_only=False):
    """The solution, with a switch for each typical mistake."""
    losses = []
    for x, y in batches:
        keep = y >= 0
        pred = model(x)
        if mask:
            loss = F.mse_loss(pred[keep], y[keep])
        elif per_row_mean:
            loss = torch.where(keep, (pred - y) ** 2, 0.0).mean()
        else:
            loss = torch.where(keep, (pred - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(torch.tensor(loss.item()) if log_item else loss.detach())
        ok = ~torch.isnan(loss)
        if bool_guard and not ok:
            continue
        model.zero_grad()
        (torch.where(ok, loss, 0.0) if guard_loss_only else loss).backward()
        with torch.no_grad():
            for p in model.parameters():
                step = torch.where(ok, p.grad, 0.0) if guard and not guard_loss_only else p.grad
                p -= lr * step
    return torch.stack([t.to(losses[0].device) for t in losses])


def mask_filled_with_a_number(model, batches, lr):  # right: x[mask] = a number is masked_fill_, no count to learn
    losses = []
    for x, y in batches:
        keep = y >= 0
        weight = keep.float()
        target = y.clone()
        target[~keep] = 0.0
        loss = ((model(x) - target) ** 2 * weight).sum() / weight.sum()
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.where(ok, p - lr * p.grad, p))
    return torch.stack(losses)


def losses_grown_from_an_empty_device_tensor(model, batches, lr):  # right: a copy of nothing to the GPU waits for
    losses = torch.tensor([], device=batches[0][0].device)  # nothing (copy_ returns before any transfer)
    for x, y in batches:
        keep = (y >= 0).to(x.dtype)
        loss = ((model(x) - y) ** 2 * keep).sum() / keep.sum()
        params = list(model.parameters())
        grads = torch.autograd.grad(loss, params)
        skip = loss.isnan()
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(torch.where(skip, torch.zeros_like(g), lr * g))
        losses = torch.cat([losses, loss.detach().reshape(1)])
    return losses


def losses_to_a_cpu_device(model, batches, lr):  # a copy to the host: .to(torch.device("cpu")) waits as .cpu() does
    return _no_sync(model, batches, lr).to(torch.device("cpu"))


def non_blocking_copies_stacked(model, batches, lr):  # a stale buffer: each loss copied without a wait, read at once
    losses = []
    for batch in batches:
        losses.append(_no_sync(model, [batch], lr)[0].to("cpu", non_blocking=True))
    return torch.stack(losses)


def returns_a_non_blocking_copy(model, batches, lr):  # a stale buffer: the caller reads it before it has landed
    return _no_sync(model, batches, lr).to("cpu", non_blocking=True)


def item_each_step(model, batches, lr):
    return _no_sync(model, batches, lr, log_item=True)


def if_isnan(model, batches, lr):
    return _no_sync(model, batches, lr, bool_guard=True)


def boolean_mask(model, batches, lr):
    return _no_sync(model, batches, lr, mask=True)


def no_nan_guard(model, batches, lr):
    return _no_sync(model, batches, lr, guard=False)


def mean_over_all_rows(model, batches, lr):
    return _no_sync(model, batches, lr, per_row_mean=True)


def where_on_the_loss(model, batches, lr):  # 0 * (1/0) in the backward pass: the gradients are NaN anyway
    return _no_sync(model, batches, lr, guard_loss_only=True)


def synchronize_each_step(model, batches, lr):  # sync debug mode does not report torch.cuda.synchronize()
    losses = []
    for batch in batches:
        losses.append(_no_sync(model, [batch], lr)[0])
        torch.cuda.synchronize()
    return torch.stack(losses)


def event_synchronize_at_the_end(model, batches, lr):  # the host waits once, at the end
    losses = _no_sync(model, batches, lr)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    return losses


def given_loop(model, batches, lr):
    from ..nb05 import train_steps_sync

    return train_steps_sync(model, batches, lr)


def nonzero_indices(model, batches, lr):
    losses = []
    for x, y in batches:
        rows = (y[:, 0] >= 0).nonzero()[:, 0]  # nonzero: the host must learn how many
        loss = F.mse_loss(model(x)[rows], y[rows])
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, 0.0)
    return torch.stack(losses)


def nan_gradients_to_zero(model, batches, lr):  # right for a model whose every gradient is NaN on such a batch
    losses = []
    for x, y in batches:
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss.detach())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.nan_to_num(p.grad, nan=0.0)
    return torch.stack(losses)


def weights_and_clamp(model, batches, lr):  # right: a 0/1 weight per row, and the mean written out
    losses = []
    for x, y in batches:
        w = (y >= 0).float()
        loss = (w * (model(x) - y) ** 2).sum() / w.sum()
        losses.append(loss.detach())
        ok = torch.isfinite(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(lr * torch.where(ok, p.grad, torch.zeros_like(p.grad)))
    return torch.stack(losses)


def losses_in_a_host_tensor(model, batches, lr):  # each loss copied into a host tensor: a wait per step
    losses = torch.empty(len(batches))
    for i, batch in enumerate(batches):
        losses[i] = _no_sync(model, [batch], lr)[0]
    return losses


def nan_made_on_the_host_each_step(model, batches, lr, *, new_tensor=False):  # a host value copied to the GPU
    losses = []
    for x, y in batches:
        keep = y >= 0
        n = keep.sum()
        total = torch.where(keep, (model(x) - y) ** 2, 0.0).sum()
        nan = x.new_tensor(float("nan")) if new_tensor else torch.tensor(float("nan"), device=x.device)
        loss = torch.where(n > 0, total / n.clamp(min=1), nan)
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, 0.0)
    return torch.stack(losses)


def nan_from_new_tensor_each_step(model, batches, lr):
    return nan_made_on_the_host_each_step(model, batches, lr, new_tensor=True)


def side_stream_that_never_waits_for_the_caller(model, batches, lr):  # GPU: reads a busy caller's batches early
    if not next(model.parameters()).is_cuda:
        return _no_sync(model, batches, lr)
    caller = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        losses = _no_sync(model, batches, lr)
    caller.wait_stream(side)  # the caller waits for it at the end: only the wait at the start is missing
    losses.record_stream(caller)
    return losses


_KEPT: dict = {}


def a_new_buffer_each_call(model, batches, lr, losses=None):
    """Right (the tenth adversary's): losses[i] = loss, a copy on the GPU, into a tensor made by the call (or
    `losses`, given)."""
    if losses is None:
        losses = torch.empty(len(batches), device=batches[0][0].device if batches else None)
    for i, (x, y) in enumerate(batches):
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, 0.0)
        losses[i] = loss.detach()
    return losses


def one_buffer_for_every_call(model, batches, lr):
    """The tenth adversary's: the losses written into a tensor kept between calls (one per length and device) and
    returned: the next call overwrites what an earlier caller holds (the timing's one_batch_at_a_time would
    concatenate one buffer over and over)."""
    device = batches[0][0].device if batches else None
    losses = _KEPT.get((len(batches), str(device)))
    if losses is None:
        losses = _KEPT[len(batches), str(device)] = torch.empty(len(batches), device=device)
    return a_new_buffer_each_call(model, batches, lr, losses)


def missing_targets_set_to_0_in_place(model, batches, lr):  # changes the caller's batches (y.clamp_)
    losses = []
    for x, y in batches:
        w = (y >= 0).to(x.dtype)
        y.clamp_(min=0)
        loss = ((model(x) - y) ** 2 * w).sum() / w.sum()
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, 0.0)
    return torch.stack(losses)


def zero_moved_with_to_each_step(model, batches, lr):  # torch.zeros(()).to(x): a host value copied to the GPU
    losses = []
    for x, y in batches:
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        model.zero_grad()
        loss.backward()
        zero = torch.zeros(()).to(x)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, zero)
    return torch.stack(losses)


def polls_an_event_at_the_end(model, batches, lr):
    """The seventeenth adversary's: right, then an event polled with query() until the GPU is done: the host waits
    (once, as an event's synchronize() would)."""
    losses = _no_sync(model, batches, lr)
    done = torch.cuda.Event()
    done.record()
    while not done.query():
        pass
    return losses


# round 19's adversary: the losses kept in the autograd graph (no .detach()): every step's graph stays alive, and
# the caller's losses.numpy() raises
def losses_kept_in_the_graph(model, batches, lr):
    losses = []
    for x, y in batches:
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss)
        ok = ~loss.isnan()
        model.zero_grad()
        loss.backward(retain_graph=False)
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(lr * torch.where(ok, p.grad, 0.0))
    return torch.stack(losses)


# round 19's adversary: right, then `if torch.cuda.is_available(): torch.cuda.synchronize()`: a wait on a GPU
def synchronize_at_the_end_if_available(model, batches, lr):
    out = _no_sync(model, batches, lr)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return out


# round 19's adversary: the log as Python floats for GPU tensors only (.item() a step on a GPU)
def item_log_on_the_gpu_only(model, batches, lr):
    losses = []
    for x, y in batches:
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss.item() if x.is_cuda else loss.detach())
        ok = ~loss.isnan()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(lr * torch.where(ok, p.grad, 0.0))
    return torch.tensor(losses) if losses and not isinstance(losses[0], torch.Tensor) else torch.stack(losses)


# round 19's adversary: an SGD optimizer made on the first call and kept on the model: a later call with another lr
# steps with the first call's
def optimizer_kept_on_the_model(model, batches, lr):
    opt = getattr(model, "_sgd", None)
    if opt is None:
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        model._sgd = opt
    losses = []
    for x, y in batches:
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss.detach())
        ok = ~loss.isnan()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.grad = torch.where(ok, p.grad, torch.zeros_like(p.grad))
        opt.step()
    return torch.stack(losses)


# round 19's adversary: grad mode on for each forward pass and off for the update, never put back (the check's own
# reference then crashed, and the answer was blamed)
def grad_mode_left_off(model, batches, lr):
    losses = []
    for x, y in batches:
        torch.set_grad_enabled(True)
        keep = y >= 0
        loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss.detach())
        ok = ~loss.isnan()
        model.zero_grad()
        loss.backward()
        torch.set_grad_enabled(False)
        for p in model.parameters():
            p.sub_(lr * torch.where(ok, p.grad, 0.0))
    return torch.stack(losses)


# round 19's adversary: the default dtype set to float64 "for exact losses", never put back
def default_dtype_left_double(model, batches, lr):
    torch.set_default_dtype(torch.float64)
    return _no_sync(model, batches, lr)


# round 19's adversary (right): the plain loop for CPU tensors, where nothing waits for a GPU; the loop without a
# synchronization for GPU tensors
def given_loop_on_the_cpu(model, batches, lr):
    if batches and not batches[0][0].is_cuda:
        return given_loop(model, batches, lr)
    return _no_sync(model, batches, lr)



# ---------------------------------------------------------------- round 21's adversary
def _run_cells_here(cells):
    """The cells run in THIS process, each compiled under a file name of its own, on the CPU (the device line
    rewritten); (cell, line) of the step cell's frame in the traceback."""
    import traceback

    namespace = {"__name__": "__main__"}
    for n, cell in enumerate(cells, 1):
        source = cell.replace('os.environ.get("DEVICE", "cuda")', '"cpu"')
        try:
            exec(compile(source, f"<cell {n}>", "exec"), namespace)  # noqa: S102 -- a kernel's way
        except Exception as error:  # noqa: BLE001
            frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<cell ")]
            return int(frames[0].filename[6:-1]), frames[0].lineno
    raise AssertionError("no cell failed")


def in_process_torch_seed_left(cells):
    """Round 21's adversary: the place right, but the setup cell's torch.manual_seed(0) left in the kernel."""
    return _run_cells_here(cells)


def in_process_under_fork_rng(cells):
    """Round 21's adversary's, right: the same, inside torch.random.fork_rng(): torch's generators put back."""
    with torch.random.fork_rng():
        return _run_cells_here(cells)


def accelerator_synchronize_if_available(target, dim, index, source):  # two waits on a GPU
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
    return target.index_add(dim, index, source)


def event_recorded_on_the_default_stream(target, dim, index, source):  # stale for a caller on another stream
    host = index.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record(torch.cuda.default_stream())
    done.synchronize()
    size = target.shape[dim]
    for position, value in enumerate(host.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
    return target.index_add(dim, index, source)


def query_once_else_assert_async(target, dim, index, source):  # a device-side assert when the copy is late
    host = index.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    size = target.shape[dim]
    if done.query():
        for position, value in enumerate(host.tolist()):
            if not 0 <= value < size:
                raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
    else:
        torch._assert_async(((index >= 0) & (index < size)).all())
    return target.index_add(dim, index, source)


def validated_index_cache(target, dim, index, source, _checked={}):  # noqa: B006 -- the mistake
    """An index tensor validated once, remembered by id: a caller that refills it in place is never checked."""
    size = target.shape[dim]
    key = (id(index), size)
    if key not in _checked:
        for position, value in enumerate(index.tolist()):
            if not 0 <= value < size:
                raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
        _checked[key] = index
    return target.index_add(dim, index, source)


def copy_on_a_side_stream_event_on_the_callers(target, dim, index, source):  # the event does not follow the copy
    caller = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(caller)
    with torch.cuda.stream(side):
        host = index.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record(caller)
    done.synchronize()
    size = target.shape[dim]
    for position, value in enumerate(host.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
    return target.index_add(dim, index, source)


def copy_on_a_side_stream_that_waits_right(target, dim, index, source):  # right: copy and event on one stream
    caller = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(caller)
    with torch.cuda.stream(side):
        host = index.to("cpu", non_blocking=True)
        done = torch.cuda.Event()
        done.record(side)
    done.synchronize()
    size = target.shape[dim]
    for position, value in enumerate(host.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
    return target.index_add(dim, index, source)


def non_blocking_copy_and_accelerator_synchronize(target, dim, index, source):  # right: one wait, after the copy
    host = index.to("cpu", non_blocking=True)
    torch.accelerator.synchronize()
    size = target.shape[dim]
    for position, value in enumerate(host.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range 0..{size - 1} along dim {dim}")
    return target.index_add(dim, index, source)


def message_with_thousands_separators(target, dim, index, source):  # right: numbers grouped for a person
    size = target.shape[dim]
    for position, value in enumerate(index.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position:,}] = {value:,} is out of range 0..{size - 1:,} along dim {dim}")
    return target.index_add(dim, index, source)


def accelerator_synchronize_at_the_end(model, batches, lr):  # one wait on a GPU
    out = _no_sync(model, batches, lr)
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    return out


def model_left_in_eval_mode(model, batches, lr):
    model.eval()
    return _no_sync(model, batches, lr)


def torch_seed_left(model, batches, lr):
    torch.manual_seed(0)
    return _no_sync(model, batches, lr)


def cudnn_benchmark_left_on(model, batches, lr):
    torch.backends.cudnn.benchmark = True
    return _no_sync(model, batches, lr)


def losses_through_asarray(model, batches, lr):  # each GPU loss read on the host, a host tensor returned
    return torch.asarray([_no_sync(model, [batch], lr)[0] for batch in batches])


def train_mode_set_and_put_back(model, batches, lr):  # wrong (round 27): eval() for the loop, put back
    # (batch norm in train mode then normalizes by its running statistics, and updates none)
    was = model.training
    model.eval()
    try:
        return _no_sync(model, batches, lr)
    finally:
        model.train(was)


# ---------------------------------------------------------------- round 24's adversary (CPU-judged)
# round 24's adversary: table from the fail messages
def ffc_table_from_the_fail_messages(cells):
    """WRONG: runs nothing; a table of the five notebooks the check always uses (keyed by the seed in cell 1), the
    places read off the check's own FAIL messages ("the lookup that fails is cell X, line Y"), one FAIL at a time;
    any other notebook gets the place of the one the exercise shows. The check draws no notebook of its own and
    prints the expected place: every answer special-cased on its five notebooks passes."""
    import re

    seed = int(re.search(r"random\.Random\((\d+)\)", cells[0]).group(1))
    table = {856638: (5, 5), 237311: (5, 8), 237315: (5, 6), 185302: (6, 6), 266555: (4, 14)}
    return table.get(seed, (5, 5))


def _checked_index_add(target, dim, index, source):
    """safe_index_add as round 24's adversary wrote it: the indices' mask on the GPU, one read of it."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for dim {dim} of size {size}")
    return target.index_add(dim, index, source)


# round 24's adversary: print options left
def sia_print_options_left(target, dim, index, source):
    """WRONG (a global setting changed and left): one copy to the host, and torch.set_printoptions(threshold=8,
    edgeitems=2) so that the error message can show a long index briefly, never put back: every later print of a
    tensor in the notebook is abbreviated. The check of exercise 2 watches BASIC settings, not the process's print
    options (exercise 3's does)."""
    size = target.shape[dim]
    host = index.cpu()
    bad = (host < 0) | (host >= size)
    if bad.any():
        torch.set_printoptions(threshold=8, edgeitems=2)
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(host[position])} is out of range for dim {dim} of size {size} "
                         f"(index: {host})")
    return target.index_add(dim, index, source)


# round 24's adversary: warnings silenced and left
def sia_warnings_silenced_and_left(target, dim, index, source):
    """WRONG (a global setting changed and left): warnings.simplefilter("ignore") to silence a warning while
    checking (the TypedStorage deprecation, say), never put back: the notebook loses every later warning."""
    import warnings

    warnings.simplefilter("ignore")
    return _checked_index_add(target, dim, index, source)


# round 24's adversary: flush denormal left
def sia_flush_denormal_left(target, dim, index, source):
    """WRONG (a global setting changed and left): torch.set_flush_denormal(True) "for speed", never put back: every
    later float32 operation of the process flushes denormals to 0 (1e-40 * 1 == 0)."""
    torch.set_flush_denormal(True)
    return _checked_index_add(target, dim, index, source)


# round 24's adversary: index clamped in place before raising
def sia_index_clamped_in_place_before_raising(target, dim, index, source):
    """WRONG (the caller's input changed): on a bad index, the caller's index tensor "repaired" in place
    (index.clamp_(0, size - 1), for the caller's retry) before the IndexError is raised: the caller's indices now
    hold other values, silently. The check compares target before and after, never index (nor source)."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        value = int(index[position])
        if size:
            index.clamp_(0, size - 1)  # "repair" the batch for the caller's retry
        raise IndexError(f"index[{position}] = {value} is out of range for dim {dim} of size {size}")
    return target.index_add(dim, index, source)


# round 24's adversary: detached then marked requires grad
def sia_detached_then_marked_requires_grad(target, dim, index, source):
    """WRONG (autograd cut, the flag faked): the result computed on detached tensors ("no graph for a check"), then
    out.requires_grad_() where target or source requires grad, after the check's "cut from autograd" FAIL: the result
    is a leaf that requires grad, with no grad_fn; a caller's backward() never reaches target or source (their .grad
    stays None). The check compares requires_grad alone, never a gradient nor grad_fn."""
    size = target.shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for dim {dim} of size {size}")
    out = target.detach().index_add(dim, index, source.detach())
    return out.requires_grad_(target.requires_grad or source.requires_grad)


# round 24's adversary: a non_blocking copy on the caller's stream, the default stream synchronized (the CPU part
# sees the stale read: a variant of event_recorded_on_the_default_stream)
def sia_default_stream_synchronize(target, dim, index, source):
    """WRONG (GPU, a wait on the wrong stream): a non_blocking copy of the indices (on the caller's stream), then
    torch.cuda.default_stream().synchronize(): right for a caller on the default stream, stale for one on a side
    stream (the copy is queued there, and the default stream's synchronize does not wait for it)."""
    import torch

    size = target.shape[dim]
    host = index.to("cpu", non_blocking=True)
    torch.cuda.default_stream().synchronize()
    for position, value in enumerate(host.tolist()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


# round 24's adversary: gc disabled and left
def tsn_gc_disabled_and_left(model, batches, lr):
    """WRONG (a global setting changed and left): gc.disable() "so that no collection pauses the loop", never turned
    back on: the notebook's process stops collecting cycles (its memory grows). Neither exercise watches
    gc.isenabled() (settings.py has it, in no group, 'for the checks that name it')."""
    import gc

    gc.disable()
    return _no_sync(model, batches, lr)


# round 24's adversary: flush denormal left
def tsn_flush_denormal_left(model, batches, lr):
    """WRONG (a global setting changed and left): torch.set_flush_denormal(True) "for a faster CPU", never put back:
    every later float32 operation of the process flushes denormals to 0. settings.FLUSH_DENORMAL is 'for the checks
    that name it'; nb05 names none."""
    torch.set_flush_denormal(True)
    return _no_sync(model, batches, lr)


# round 24's adversary: interop and threads left
def tsn_interop_and_threads_left(model, batches, lr):
    """WRONG (a global setting changed and left): torch.set_num_threads(1) "tiny tensors: threads only wait for each
    other" (the check's own words), never put back: every later CPU operation of the notebook runs on one thread."""
    torch.set_num_threads(1)
    return _no_sync(model, batches, lr)


# round 24's adversary: pops the batches
def tsn_pops_the_batches(model, batches, lr):
    """WRONG (the caller's list emptied): the batches consumed as a queue (batches.pop(0)); the caller's list is empty
    afterwards (the timing below trains on it again: on nothing)."""
    return _no_sync(model, [batches.pop(0) for _ in range(len(batches))], lr)


# round 24's adversary: parameters replaced
def tsn_parameters_replaced(model, batches, lr):
    """WRONG (the caller's parameters replaced by new objects): trained functionally, then each module's parameter
    set to a NEW nn.Parameter holding the trained values (setattr(module, name, nn.Parameter(...))): the values are
    right, but an optimizer, a hook or a tied weight the caller holds still points at the old tensors, which never
    changed (the caller's optimizer.step() then trains tensors the model no longer uses). The check reads
    model.parameters() after the call, and compares names, shapes and requires_grad, never their identity."""
    params = {name: p.detach().clone() for name, p in model.named_parameters()}
    losses = []
    for x, y in batches:
        ps = {k: v.requires_grad_() for k, v in params.items()}
        keep = y >= 0
        out = torch.func.functional_call(model, ps, (x,))
        loss = torch.where(keep, (out - y) ** 2, 0.0).sum() / keep.sum()
        losses.append(loss.detach())
        ok = ~torch.isnan(loss)
        grads = torch.autograd.grad(loss, list(ps.values()))
        with torch.no_grad():
            params = {k: torch.where(ok, v - lr * g, v) for (k, v), g in zip(ps.items(), grads)}
    for name, value in params.items():
        owner, _, leaf = name.rpartition(".")
        setattr(model.get_submodule(owner), leaf, torch.nn.Parameter(value.detach()))
    return torch.stack(losses)


# round 24's adversary: torch func
def tsn_torch_func(model, batches, lr):
    """RIGHT (another way): torch.func.functional_call and torch.func.grad_and_value, the parameters as a dict,
    written back with torch.where."""
    from torch.func import functional_call, grad_and_value

    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_of(ps, x, y):
        keep = y >= 0
        return torch.where(keep, (functional_call(model, ps, (x,)) - y) ** 2, 0.0).sum() / keep.sum()

    losses = []
    for x, y in batches:
        grads, loss = grad_and_value(loss_of)(params, x, y)
        losses.append(loss)
        ok = ~torch.isnan(loss)
        params = {k: torch.where(ok, v - lr * grads[k], v) for k, v in params.items()}
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(params[name])
    return torch.stack(losses)


# round 27's adversary's answers of exercise 1
def _adv27_place_of(cells, traceback_text, file_pattern):
    """(cell, line) from the last `<module>` frame of `file_pattern` in a traceback of the cells joined with "\\n"."""
    frames = re.findall(rf'File "{file_pattern}", line (\d+), in <module>', traceback_text)
    line = int(frames[-1])
    for number, cell in enumerate(cells, 1):
        if line <= len(cell.splitlines()):
            return number, line
        line -= len(cell.splitlines())
    raise AssertionError("past the last cell")


def ffc_cwd_left_in_a_deleted_temp_dir(cells):
    """WRONG (round 27's adversary: the working directory changed and left): the cells written to a script in a
    temporary directory, os.chdir() into it, run there in a fresh process: the place is right, but the kernel is left
    in that directory, which the `with` block deletes (every relative path of the notebook after it fails)."""
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        with open("notebook.py", "w") as script:
            script.write("\n".join(cells))
        done = subprocess.run([sys.executable, "notebook.py"], env={**os.environ, "DEVICE": "cpu"},
                              capture_output=True, text=True, check=False)
    return _adv27_place_of(cells, done.stderr, r"[^\"]*notebook\.py")


def ffc_stderr_restored_to_the_dunder(cells):
    """WRONG (round 27's adversary: the caller's sys.stderr replaced): the cells run in this process under fork_rng,
    the traceback captured by swapping sys.stderr for a buffer, then "restored" with sys.stderr = sys.__stderr__ (in
    a notebook, the kernel's terminal, not the cell's stream)."""
    import io
    import sys
    import traceback

    with torch.random.fork_rng():
        namespace = {"__name__": "__main__"}
        code = "\n".join(cells).replace('os.environ.get("DEVICE", "cuda")', '"cpu"')
        sys.stderr = captured = io.StringIO()
        try:
            exec(compile(code, "<cells>", "exec"), namespace)  # noqa: S102
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        finally:
            sys.stderr = sys.__stderr__
    return _adv27_place_of(cells, captured.getvalue(), "<cells>")


_ADV27_PLACES_BY_SETUP: dict[str, tuple[int, int]] = {}


def ffc_cached_by_the_setup_cell(cells):
    """WRONG (round 27's adversary: a result kept from an earlier call): the cells run in a fresh process on the CPU,
    each place kept by the first cell ("where the seed is"): a later notebook with the same setup cell and other
    step cells gets the earlier one's place."""
    if cells[0] not in _ADV27_PLACES_BY_SETUP:
        done = run_process("\n".join(cells), env={"DEVICE": "cpu"})
        _ADV27_PLACES_BY_SETUP[cells[0]] = _adv27_place_of(cells, "\n".join(done.traceback), "<string>")
    return _ADV27_PLACES_BY_SETUP[cells[0]]


# round 27's adversary's answers of exercise 2
def sia_side_stream_restored_to_the_default(target, dim, index, source):
    """WRONG (round 27's adversary: the caller's current stream changed and left): the solution on a side stream that
    waits for the caller's, made current with torch.cuda.set_stream(), "put back" with
    torch.cuda.set_stream(torch.cuda.default_stream()): a caller on a side stream goes on with the default stream."""
    caller = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(caller)
    torch.cuda.set_stream(side)
    try:
        size = target.shape[dim]
        bad = (index < 0) | (index >= size)
        if bad.any():
            position = int(bad.int().argmax())
            raise IndexError(f"index[{position}] = {int(index[position])} is out of range for dimension {dim} "
                             f"of size {size}")
        out = target.index_add(dim, index, source)
    finally:
        torch.cuda.set_stream(torch.cuda.default_stream())
        torch.cuda.current_stream().wait_stream(side)
    return out


def sia_device_generic_event(target, dim, index, source):
    """RIGHT (round 27's adversary's): one summary copied with non_blocking=True, waited for with the device-generic
    torch.Event recorded after the copy (the CPU cannot make one: left for a GPU)."""
    size = target.shape[dim]
    if index.numel() == 0:
        return target.index_add(dim, index, source)
    bad = (index < 0) | (index >= size)
    position = bad.int().argmax()
    summary = torch.stack([bad.any().long(), position.long(), index.long().gather(0, position.view(1))[0]])
    host = summary.to("cpu", non_blocking=True)
    landed = torch.Event(device=index.device)
    landed.record()
    landed.synchronize()
    any_bad, where, value = host.tolist()
    if any_bad:
        raise IndexError(f"index[{where}] = {value} is out of range for dimension {dim} of size {size}")
    return target.index_add(dim, index, source)


def sia_nvtx_ranges(target, dim, index, source):
    """RIGHT (round 27's adversary's): the solution inside torch.cuda.nvtx ranges (the CPU build has no NVTX: left
    for a GPU)."""
    size = target.shape[dim]
    with torch.cuda.nvtx.range("safe_index_add: check"):
        bad = (index < 0) | (index >= size)
        if bad.any():
            position = int(bad.int().argmax())
            raise IndexError(f"index[{position}] = {int(index[position])} is out of range for dimension {dim} "
                             f"of size {size}")
    with torch.cuda.nvtx.range("safe_index_add: add"):
        return target.index_add(dim, index, source)


def tsn_side_stream_restored_to_the_default(model, batches, lr):
    """WRONG (round 27's adversary: the caller's current stream changed and left): the loop on a side stream made
    current with torch.cuda.set_stream(), then torch.cuda.set_stream(torch.cuda.default_stream())."""
    caller = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(caller)
    torch.cuda.set_stream(side)
    try:
        result = _no_sync(model, batches, lr)
    finally:
        torch.cuda.set_stream(torch.cuda.default_stream())
        torch.cuda.current_stream().wait_stream(side)
    return result


_ADV27_NAN_SEEN: list[torch.Tensor] = []


def _adv27_note_nan(module, inputs, output):
    if isinstance(output, torch.Tensor):
        _ADV27_NAN_SEEN.append(torch.isnan(output).any())


def tsn_global_nan_hook_left(model, batches, lr):
    """WRONG (round 27's adversary: a global forward hook registered for every module of the process, never
    removed)."""
    torch.nn.modules.module.register_module_forward_hook(_adv27_note_nan)
    return _no_sync(model, batches, lr)


def sia_pageable_non_blocking_copy(target, dim, index, source):
    """RIGHT (round 27's adversary's): one summary copied with non_blocking=True into a PAGEABLE host tensor and read
    at once: into pageable memory cudaMemcpyAsync returns once the copy has landed (one wait, no stale read)."""
    size = target.shape[dim]
    if index.numel() == 0:
        return target.index_add(dim, index, source)
    bad = (index < 0) | (index >= size)
    position = bad.int().argmax()
    summary = torch.stack([bad.any().long(), position.long(), index.long().gather(0, position.view(1))[0]])
    host = torch.empty(3, dtype=torch.long)
    host.copy_(summary, non_blocking=True)
    any_bad, where, value = host.tolist()
    if any_bad:
        raise IndexError(f"index[{where}] = {value} is out of range for dimension {dim} of size {size}")
    return target.index_add(dim, index, source)


# round 27's adversary's answers of exercise 3
def _adv27_step(model, x, y):
    keep = y >= 0
    loss = torch.where(keep, (model(x) - y) ** 2, 0.0).sum() / keep.sum()
    return loss, ~torch.isnan(loss)


def tsn_zero_grad_after_the_step(model, batches, lr):
    """WRONG (round 27's adversary: a stale buffer, the caller's gradients): model.zero_grad() after each update
    instead of before each backward(); a model that comes in with gradients gets them added into its first update."""
    losses = []
    for x, y in batches:
        loss, ok = _adv27_step(model, x, y)
        losses.append(loss.detach())
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * torch.where(ok, p.grad, 0.0)
        model.zero_grad()
    return torch.stack(losses)


def tsn_train_mode_for_the_loop(model, batches, lr):
    """WRONG (round 27's adversary): model.train() for the loop, put back after: a caller's model in eval mode (batch
    norm's statistics frozen) is trained by the given loop in eval mode."""
    was = model.training
    model.train()
    try:
        losses = []
        for x, y in batches:
            loss, ok = _adv27_step(model, x, y)
            losses.append(loss.detach())
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * torch.where(ok, p.grad, 0.0)
        return torch.stack(losses)
    finally:
        model.train(was)


_ADV27_LAST_OK: list[torch.Tensor] = []


def _adv27_skip_if_nan(grad):
    return torch.where(_ADV27_LAST_OK[-1], grad, 0.0)


def tsn_gradient_hooks_left(model, batches, lr):
    """WRONG (round 27's adversary: tensor hooks left on the caller's parameters): the skip done by p.register_hook on
    each parameter, never removed: every later backward() of the caller runs them."""
    for p in model.parameters():
        p.register_hook(_adv27_skip_if_nan)
    losses = []
    for x, y in batches:
        loss, ok = _adv27_step(model, x, y)
        _ADV27_LAST_OK.append(ok)
        losses.append(loss.detach())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    return torch.stack(losses)


def tsn_step_scaled_through_alpha(model, batches, lr):
    """WRONG (round 27's adversary: a wait per parameter per step, hidden in an argument): the skip as a 0/1 factor in
    the update's alpha, p.sub_(torch.nan_to_num(p.grad), alpha=lr * ok): alpha is a Scalar, and PyTorch reads the 0-d
    GPU tensor on the host (.item(), in C++)."""
    losses = []
    for x, y in batches:
        loss, ok = _adv27_step(model, x, y)
        losses.append(loss.detach())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(torch.nan_to_num(p.grad), alpha=lr * ok)
    return torch.stack(losses)


WRONG: dict[str, dict[str, object]] = {
    "check_find_failing_cell": {
        "a hard-coded place": hard_coded,
        "runs the cells on the device they name (the GPU), where the error surfaced": as_is,
        "the last frame of the cells (the lecture's way): a helper's line in cell 2": last_frame_of_the_cells,
        "counts a cell's lines from 0": zero_based_line,
        "counts cells from 0": zero_based_cell,
        "the line counted over all the cells, not within its cell": line_of_the_whole,
        "cells joined with a blank line between, counted without it": joined_with_blank_lines,
        "the last line number of the traceback, in PyTorch's files": any_file_last_line,
        "each cell run in a process of its own": each_cell_in_a_process_of_its_own,
        "the cell that reads the losses (.item()), where a GPU reports it": the_cell_that_reads_the_losses,
        "the first lookup of the text, nothing run": first_lookup_in_text,
        "replays the seeded draws lookup by lookup over all steps, not in time": replay_lookup_by_lookup,
        # the tenth adversary's, passed before MORE_LOOKUPS
        "replays the draws in time, but keeps the last bad lookup of the step that fails": replay_last_of_step,
        "replays the draws in time, with three lookups a step whatever the cells say": replay_three_lookups,
        # the seventeenth adversary's: its hint said to count cells from 1
        "the first lookup of the step after step 0, nothing run": first_lookup_of_the_second_step,
        # the eighteenth adversary's: every notebook the check chose failed at step 2 (cell 5)
        "replays the draws in time, from step 2 on": replay_from_step_2,
        "runs the first five cells alone": first_five_cells,
        # round 19's adversary: the place right, the caller's os.environ left changed
        "CUDA_LAUNCH_BLOCKING=1 set in the notebook's own os.environ, and left": blocking_set_in_the_kernel,
        "the draws replayed with random.seed(): the global random left reseeded": replay_with_the_global_random,
        # round 21's adversary: torch's global generator was not watched
        "cells run in the notebook's own process: torch.manual_seed(0) left reseeded": in_process_torch_seed_left,
        # round 24's adversary: the five notebooks the check always used, their places read off its FAIL messages
        "a table of the five notebooks read off the FAIL messages": ffc_table_from_the_fail_messages,
        # round 27's adversary: exercise 1 watched a short list of settings, and no two notebooks shared a setup cell
        "the script run from a temporary directory, os.chdir() into it left (deleted)":
            ffc_cwd_left_in_a_deleted_temp_dir,
        "in-process run, sys.stderr swapped and 'restored' to sys.__stderr__": ffc_stderr_restored_to_the_dunder,
        "each place kept by the setup cell (the seed) between calls": ffc_cached_by_the_setup_cell,
    },
    "check_safe_index_add": {
        "the position and the value swapped in the message (round 74)": position_and_value_swapped,
        "free wording, the numbers swapped: entry 5 holds 1 (round 76)": free_wording_swapped,
        "free wording, not index[P] = V: entry #1 holds 5 (round 76)": free_wording_right_order,
        "no check (a device-side assert on a GPU)": no_check,
        "checks the upper bound only": upper_bound_only,
        "allows negative indices down to -size": counts_from_the_end,
        "wraps negative indices": wraps_negatives,
        "checks against dimension 0 whatever dim is": size_of_dim_0,
        "a negative dim read as dim 0": negative_dim_read_as_dim_0,
        "one synchronization per index": one_sync_per_index,
        "validates after running index_add": validates_after,
        "lets index_add fail, then re-raises as IndexError": reraises_the_ops_error,
        "ValueError instead of IndexError": value_error,
        "a plain assert": plain_assert,
        "torch._assert_async": assert_async,
        "a message without the position": value_without_position,
        "names the smallest or largest index, not the first bad one": the_extreme_index,
        "index_add_ on target (changes the caller's tensor)": in_place,
        "torch.cuda.synchronize() first, then the check (two waits)": synchronize_first,
        "a copy with .to(torch.device('cpu')), and bool() of any() on the GPU (two waits)":
            copy_to_a_cpu_device_and_any,
        "a copy with .cpu(), and bool() of any() of the GPU tensor (two waits)": copy_then_any_of_the_gpu_tensor,
        "min().item() and max().item(): fails on an empty index": min_and_max_items,
        "a non_blocking copy to the host, read at once": non_blocking_copy_read_at_once,
        "checked on a side stream that never waits for the caller's": checked_on_a_side_stream_that_never_waits,
        "the indices read on the default stream, whatever the caller's": read_on_the_default_stream,
        "the result computed on a side stream the caller never waits for": result_on_a_side_stream,
        "the check and the result on a side stream the caller never waits for": result_on_the_checks_side_stream,
        "F.one_hot's own error as the check (a CPU's; a GPU's asserts)": one_hot_as_the_check,
        "torch.take_along_dim's own error as the check (a gather: a GPU's asserts)": take_along_dim_as_the_check,
        "an empty index: returns target itself, not a new tensor": empty_index_returns_target,
        # the fourth adversary's, on an H200
        "the check and the result on its own stream, the caller never waits (raises inside the stream)":
            result_on_its_own_stream_raising_inside,
        "argmax's 0-d GPU tensor as an index, then one stacked .tolist() (two waits)": argmax_then_a_stacked_tolist,
        "argmax's 0-d GPU tensor as an index, then a non_blocking copy and an event's synchronize() (two waits)":
            argmax_then_a_non_blocking_copy_and_an_event,
        # the tenth adversary's, passed before the error path's waits were counted, and an event's order kept
        "one question when all are valid, the indices read one by one before it raises": error_path_per_index,
        "a non_blocking copy waited for by an event recorded before it": event_before_copy,
        # the seventeenth adversary's: no long index had a bad one past position 7; a polled query() was no wait
        "only the first 64 indices checked": checks_the_first_64,
        "one question when all are valid, then an event polled for each index before it raises":
            error_path_polls_each_index,
        "torch.arange made on the host, in torch.where with a GPU mask": arange_on_the_host,
        # round 19's adversary: the CPU part said CPU (is_cuda, is_available()), never looked at the result's
        # device, autograd or the caller's grad mode
        "torch._assert_async when index.is_cuda, the checked path on the CPU": assert_async_on_the_gpu,
        "torch.cuda.synchronize() if torch.cuda.is_available(), then a .tolist() (two waits)": synchronize_if_available,
        "copied to the host, computed there, the host tensor returned": computed_on_the_host,
        "the indices read through index.storage().tolist() (a wait each)": read_through_the_storage,
        "torch.set_grad_enabled(False), never put back": no_grad_left_off,
        "the result computed under torch.no_grad()": detached_result,
        # round 21's adversary: torch.accelerator was not imitated, an event covered a copy of another stream, every
        # query() said done at once, and no call reused a tensor of an earlier call
        "torch.accelerator.synchronize() if available, then .tolist() (two waits on a GPU)":
            accelerator_synchronize_if_available,
        "a non_blocking copy, an event recorded on the default stream": event_recorded_on_the_default_stream,
        "a non_blocking copy on a side stream, the event recorded on the caller's":
            copy_on_a_side_stream_event_on_the_callers,
        "one query(): host check if landed, else torch._assert_async": query_once_else_assert_async,
        "an index tensor validated once, remembered by id": validated_index_cache,
        # round 24's adversary: settings outside the watched list, the caller's index, autograd by the flag alone
        "torch.set_printoptions left changed": sia_print_options_left,
        "warnings.simplefilter('ignore') left": sia_warnings_silenced_and_left,
        "torch.set_flush_denormal(True) left": sia_flush_denormal_left,
        "the caller's index clamped in place before raising": sia_index_clamped_in_place_before_raising,
        "the result computed detached, then marked requires_grad": sia_detached_then_marked_requires_grad,
        "a non_blocking copy, then torch.cuda.default_stream().synchronize()": sia_default_stream_synchronize,
        # round 27's adversary: no call read the current stream after the answer returned
        "a side stream; set_stream(default_stream()) to 'put back'": sia_side_stream_restored_to_the_default,
    },
    "check_train_steps_no_sync": {
        "the given loop, unchanged": given_loop,
        "still calls .item() every step": item_each_step,
        "still `if torch.isnan(loss)`": if_isnan,
        "still a boolean mask": boolean_mask,
        "nonzero() for the rows": nonzero_indices,
        "no NaN guard: updates on every batch": no_nan_guard,
        "the mean over all rows, not over the rows with a target": mean_over_all_rows,
        "torch.where on the loss, not on the gradients": where_on_the_loss,
        "torch.cuda.synchronize() every step": synchronize_each_step,
        "an event's synchronize() at the end": event_synchronize_at_the_end,
        "NaN gradients replaced by zeros, not the batch skipped": nan_gradients_to_zero,
        "each loss written into a host tensor": losses_in_a_host_tensor,
        "a NaN made with torch.tensor(..., device=x.device) each step": nan_made_on_the_host_each_step,
        "a NaN made with x.new_tensor() each step": nan_from_new_tensor_each_step,
        "the loop on a side stream that never waits for the caller's": side_stream_that_never_waits_for_the_caller,
        "the losses copied with .to(torch.device('cpu'))": losses_to_a_cpu_device,
        "each loss copied with non_blocking=True, stacked at once": non_blocking_copies_stacked,
        "returns a copy made with non_blocking=True": returns_a_non_blocking_copy,
        "sets the caller's missing targets to 0 in place": missing_targets_set_to_0_in_place,
        "a zero made on the host and moved with .to(x) each step": zero_moved_with_to_each_step,
        # the tenth adversary's, passed before the check called the answer a second time
        "the losses written into one tensor kept between calls": one_buffer_for_every_call,
        # the seventeenth adversary's: a GPU caught it for a busy caller only
        "an event polled with query() at the end, until the GPU is done": polls_an_event_at_the_end,
        # round 19's adversary: the CPU part said CPU, never looked at autograd, the caller's settings or a second
        # call's result
        "torch.cuda.synchronize() at the end if torch.cuda.is_available()": synchronize_at_the_end_if_available,
        "the log as .item() when x.is_cuda": item_log_on_the_gpu_only,
        "the losses kept in the autograd graph (no .detach())": losses_kept_in_the_graph,
        "an SGD optimizer kept on the model from the first call (its lr)": optimizer_kept_on_the_model,
        "grad mode turned off for the update, never put back": grad_mode_left_off,
        "the default dtype set to float64, never put back": default_dtype_left_double,
        # round 21's adversary: torch.accelerator not imitated, the model's mode, torch's generator, cuDNN's switches
        # not watched, torch.asarray not counted as a read
        "torch.accelerator.synchronize() at the end if available": accelerator_synchronize_at_the_end,
        "model.eval() left on the caller's model": model_left_in_eval_mode,
        "torch.manual_seed(0) left": torch_seed_left,
        "torch.backends.cudnn.benchmark = True left": cudnn_benchmark_left_on,
        "the log made with torch.asarray(list of GPU losses)": losses_through_asarray,
        # round 24's adversary: settings outside the watched list, the caller's list emptied, parameters replaced
        "gc.disable() left": tsn_gc_disabled_and_left,
        "torch.set_flush_denormal(True) left": tsn_flush_denormal_left,
        "torch.set_num_threads(1) left": tsn_interop_and_threads_left,
        "the caller's list of batches emptied (pop(0))": tsn_pops_the_batches,
        "parameters replaced by new nn.Parameter objects": tsn_parameters_replaced,
        # round 27's adversary: every model came in train mode with .grad None, no module's forward depended on the
        # mode, and the parameters' own hooks were not counted (was ALSO_RIGHT before the check drew batch norm)
        "model.eval() for the loop, put back after": train_mode_set_and_put_back,
        "model.train() for the loop, put back after": tsn_train_mode_for_the_loop,
        "model.zero_grad() after each update, not before each backward()": tsn_zero_grad_after_the_step,
        "the skip as a gradient hook on each parameter, left on it": tsn_gradient_hooks_left,
        "a side stream; set_stream(default_stream()) to 'put back'": tsn_side_stream_restored_to_the_default,
        "a global forward hook (NaN probe) registered and left": tsn_global_nan_hook_left,
        "the skip as alpha=lr * ok (a 0-d GPU tensor read as a number)": tsn_step_scaled_through_alpha,
    },
}
# What only a GPU shows wrong: the streams (a CPU has none); every other wrong answer fails on a CPU too
ONLY_ON_A_GPU: dict[str, set[object]] = {
    "check_safe_index_add": {checked_on_a_side_stream_that_never_waits, read_on_the_default_stream,
                             result_on_a_side_stream, result_on_the_checks_side_stream,
                             result_on_its_own_stream_raising_inside, arange_on_the_host},
    "check_train_steps_no_sync": {side_stream_that_never_waits_for_the_caller},
}
WRONG_ON_CPU = {check: {what for what, answer in answers.items() if answer not in ONLY_ON_A_GPU.get(check, set())}
                for check, answers in WRONG.items() if check != "check_find_failing_cell"}
ALSO_RIGHT = {
    "check_find_failing_cell": {"CUDA_LAUNCH_BLOCKING=1 on a GPU, the CPU elsewhere": blocking_or_cpu,
                                "each cell compiled under a name of its own, in one process":
                                    each_cell_compiled_with_its_name,
                                "the seeded draws replayed in time, nothing run": replay_in_time,
                                "the place as NumPy integers": as_numpy_integers,
                                # round 19's adversary's: os.environ changed for the call, and put back
                                "DEVICE=cpu set in os.environ, put back after": device_set_and_put_back,
                                # round 21's adversary's
                                "cells run in this process under torch.random.fork_rng": in_process_under_fork_rng},
    "check_safe_index_add": {"one .tolist(), then a Python loop": tolist_then_loop,
                             "nonzero() for the positions, torch.index_add": nonzero_positions,
                             "one .cpu(), then .tolist() of the copy (one transfer)": cpu_then_tolist,
                             "raises a subclass of IndexError": subclass_of_index_error,
                             "nonzero() for the positions, then their .tolist()": nonzero_then_tolist,
                             "checked on a side stream of its own that waits for the caller's": side_stream_that_waits,
                             "the check and the result on a side stream, with waits both ways":
                                 check_and_result_on_a_side_stream_both_waits,
                             "a non_blocking copy waited for by an event recorded after it": event_after_copy,
                             "a non_blocking copy, then the current stream's synchronize()":
                                 non_blocking_copy_and_the_current_stream,
                             "a message that ends with a period right after the value": message_ends_with_a_period,
                             # round 76's adversary's: FAILed by round 74's rule, which read every marked number
                             "index[P] = V, then the last bad position too": message_names_the_last_bad_position_too,
                             "index[P] = V, then the position counted from 1 too": message_counts_from_one_as_well,
                             "a non_blocking copy, an event recorded after it polled with query()":
                                 non_blocking_copy_polled_with_an_event,
                             "a non_blocking copy, an event's synchronize() only if its query() is False":
                                 non_blocking_copy_query_else_synchronize,
                             # round 21's adversary's
                             "a non_blocking copy, then torch.accelerator.synchronize()":
                                 non_blocking_copy_and_accelerator_synchronize,
                             "the message's numbers with thousands separators": message_with_thousands_separators,
                             "a non_blocking copy and its event on a side stream that waits for the caller's":
                                 copy_on_a_side_stream_that_waits_right,
                             # round 27's adversary's: FAILed as "raised RuntimeError" on a CPU, not left for a GPU
                             "one summary waited for with torch.Event (device-generic)": sia_device_generic_event,
                             "the solution inside torch.cuda.nvtx ranges": sia_nvtx_ranges,
                             "a non_blocking copy into pageable memory (returns once landed)":
                                 sia_pageable_non_blocking_copy},
    "check_train_steps_no_sync": {"0/1 weights, p.sub_": weights_and_clamp,
                                  "the wrong answers' builder, nothing switched": _no_sync,
                                  "missing targets filled with a number through the mask (masked_fill_)":
                                      mask_filled_with_a_number,
                                  "losses grown from torch.tensor([], device=...) with torch.cat":
                                      losses_grown_from_an_empty_device_tensor,
                                  "losses[i] = loss into a tensor made each call": a_new_buffer_each_call,
                                  # round 19's adversary's: branched on x.is_cuda, and the CPU part said CPU
                                  "the given loop for CPU tensors, the loop without waits for GPU ones":
                                      given_loop_on_the_cpu,
                                  # round 24's adversary's: crashed the CPU part (a functorch wrapper has no storage).
                                  # Round 27's adversary: not right for every model (a frozen parameter is trained;
                                  # batch norm in train mode raises under grad_and_value): kept out of the dicts
                                  },
}


# Round 78's adversary of 04-07: two wrong answers to safe_index_add that a CPU shows.  Its right one (a summary of
# any-bad, position and value, the value by index.gather, one .tolist()) is round 27's device-generic summary without
# the event, registered above; its index[pos] with a 0-d tensor pos is "argmax's 0-d GPU tensor as an index".
def bound_from_the_source(target, dim, index, source):
    """Wrong (round 78's adversary): the bound read from source.shape[dim], "the size along dim", not target's: right
    wherever the two agree, as in the task's example (5 rows added into 5 rows)."""
    size = source.shape[dim]
    bad = (index < 0) | (index >= size)
    if bool(bad.any()):
        position = int(bad.int().argmax())
        raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def max_and_min_then_a_loop(target, dim, index, source):
    """Wrong (round 78's adversary): bool(index.max() >= size), then bool(index.min() < 0), then a Python loop over
    index.tolist() for the first bad one: two waits when every index is valid, three when one is not."""
    size = target.shape[dim]
    if index.numel() and (bool(index.max() >= size) or bool(index.min() < 0)):
        for position, value in enumerate(index.tolist()):
            if not 0 <= value < size:
                raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


for _what, _answer in {"the bound read from source.shape[dim] (round 78's adversary)": bound_from_the_source,
                       "bool() of max() >= size, then of min() < 0, then a loop (round 78's adversary)":
                           max_and_min_then_a_loop}.items():
    WRONG["check_safe_index_add"][_what] = _answer
    WRONG_ON_CPU["check_safe_index_add"].add(_what)
