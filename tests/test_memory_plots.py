"""utils.memory_timeline (a snapshot's history replayed) and utils.plot_memory."""

import io
import json
import os

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import utils
from conftest import ROOT, gpu, host, named, untimed

MiB = 2**20


def synthetic_snapshot():
    """What torch.cuda.memory._snapshot() returns, cut down: 4 MiB live in a 20 MiB segment at the end.

    The history starts with a 2 MiB small segment already holding 512 B (made before recording).
    """
    events = [
        {"action": "segment_alloc", "addr": 0x1000, "size": 20 * MiB},
        {"action": "alloc", "addr": 0x1000, "size": 4 * MiB},
        {"action": "alloc", "addr": 0x401000, "size": 8 * MiB},
        {"action": "free_requested", "addr": 0x401000, "size": 8 * MiB},
        {"action": "free_completed", "addr": 0x401000, "size": 8 * MiB},
        {"action": "segment_alloc", "addr": 0x9000000, "size": 30 * MiB},
        {"action": "segment_free", "addr": 0x9000000, "size": 30 * MiB},
        {"action": "snapshot", "addr": 0, "size": 0},  # not a change of memory: ignored
    ]
    segments = [
        {"device": 0, "address": 0x1000, "total_size": 20 * MiB, "allocated_size": 4 * MiB, "blocks": []},
        {"device": 0, "address": 0x800, "total_size": 2 * MiB, "allocated_size": 512, "blocks": []},
        {"device": 1, "address": 0x800, "total_size": 2 * MiB, "allocated_size": 512, "blocks": []},
    ]
    return {"segments": segments, "device_traces": [events, []]}


@host
def test_memory_timeline_replays_the_history():
    timeline = utils.memory_timeline(synthetic_snapshot())
    small = 2 * MiB
    # one value before the first event, then one after each event that changes memory
    assert timeline["reserved"] == [small, small + 20 * MiB, small + 20 * MiB, small + 20 * MiB,
                                    small + 20 * MiB, small + 50 * MiB, small + 20 * MiB]
    assert timeline["allocated"] == [512, 512, 512 + 4 * MiB, 512 + 12 * MiB,
                                     512 + 4 * MiB, 512 + 4 * MiB, 512 + 4 * MiB]


@host
def test_memory_timeline_of_another_device():
    timeline = utils.memory_timeline(synthetic_snapshot(), device=1)
    assert timeline == {"allocated": [512], "reserved": [2 * MiB]}


def png_bytes(ax) -> int:
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    plt.close(ax.figure)
    return buf.tell()


@host
def test_plot_memory_one_line_per_series_in_mib():
    ax = utils.plot_memory({"growing": [20 * MiB, 44 * MiB, 72 * MiB], "warmed": [128 * MiB] * 3},
                           x=[4, 24, 28], xlabel="size (MiB)")
    assert [line.get_label() for line in ax.get_lines()] == ["growing", "warmed"]
    assert list(ax.get_lines()[0].get_ydata()) == [20, 44, 72]
    assert list(ax.get_lines()[0].get_xdata()) == [4, 24, 28]
    assert ax.get_ylabel() == "MiB" and ax.get_xlabel() == "size (MiB)"
    assert png_bytes(ax) < 100_000


@host
def test_plot_memory_of_a_timeline():
    ax = utils.plot_memory(utils.memory_timeline(synthetic_snapshot()), xlabel="allocator event")
    assert [line.get_label() for line in ax.get_lines()] == ["allocated", "reserved"]
    assert list(ax.get_lines()[0].get_xdata()) == list(range(7))
    assert png_bytes(ax) < 100_000


REAL_SNAPSHOT = """
import json
import torch
import utils

MiB = 2**20
torch.cuda.memory._record_memory_history(max_entries=1000, stacks="python")
x = torch.empty(24 * MiB, dtype=torch.uint8, device="cuda")
y = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
del x
snapshot = torch.cuda.memory._snapshot()
torch.cuda.memory._record_memory_history(enabled=None)
timeline = utils.memory_timeline(snapshot)
print(json.dumps({"reserved": timeline["reserved"], "allocated": timeline["allocated"],
                  "memory_reserved": torch.cuda.memory_reserved(), "memory_allocated": torch.cuda.memory_allocated()}))
"""


@untimed(needed_by=named("test_memory_timeline_of_a_real_snapshot", needs_gpu=True))
def real_snapshot(items):
    # In a fresh process: in this one, segments that other tests left cached could hold the tensors.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return utils.run_process(REAL_SNAPSHOT, env={"PYTHONPATH": path}, unset=["PYTORCH_CUDA_ALLOC_CONF"])


@gpu
def test_memory_timeline_of_a_real_snapshot(real_snapshot):
    done = real_snapshot
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["reserved"][-1] == got["memory_reserved"]
    assert got["allocated"][-1] == got["memory_allocated"]
    assert max(got["reserved"]) - got["reserved"][0] == 44 * MiB  # a 24 MiB and a 20 MiB segment


@host
def test_plot_memory_needs_a_series():
    with pytest.raises(ValueError, match="no series"):
        utils.plot_memory({})
