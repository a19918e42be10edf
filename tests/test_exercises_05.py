"""Exercise checks of notebook 05: the CPU part of exercise 3 stands on HostWaits, which tells on a CPU what
would make the host wait for a GPU.

tests/test_exercises.py runs every check's answers (on the CPU too: `cpu_checks`, WRONG_ON_CPU).
"""

import pytest
import torch

from conftest import host
from utils.exercises import cuda_on_cpu, nb05


def _waits(fn) -> list[str]:
    """What HostWaits notes while fn() runs, with torch.cuda imitated on the CPU as the check does."""
    with cuda_on_cpu(), nb05.HostWaits(fn) as host_waits, host_waits.counting_synchronize():
        fn()
    return host_waits.waits


def _loss():
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    y[::3] = -1
    return x, y


def _item():
    return _loss()[1].sum().item()


def _if_on_a_tensor():
    if torch.isnan(_loss()[1].sum()):
        return 1


def _boolean_mask():
    y = _loss()[1]
    return y[y >= 0]


def _boolean_mask_written():
    y = _loss()[1]
    y[y < 0] = 0.0


def _nonzero():
    return (_loss()[1] >= 0).nonzero()


def _tolist():
    return _loss()[1].tolist()


def _device_synchronize():
    torch.cuda.synchronize()


def _event_synchronize():
    done = torch.cuda.Event()
    done.record()
    done.synchronize()


def _stream_synchronize():
    torch.cuda.current_stream().synchronize()


def _on_the_gpu_only():  # what the exercise's solution does: no value reaches the host
    x, y = _loss()
    x, y = x.to("cuda"), y.to("cuda")
    keep = y >= 0
    loss = torch.where(keep, (x[:, :1] - y) ** 2, 0.0).sum() / keep.sum()
    ok = ~torch.isnan(loss)
    return torch.stack([torch.where(ok, loss, 0.0), loss.detach()])


@host
@pytest.mark.parametrize("fn, said", [
    (_item, ".item()"), (_if_on_a_tensor, "bool() of a tensor (an `if`, `not`, `and`)"),
    (_boolean_mask, "a boolean mask"),
    (_boolean_mask_written, "a boolean mask"), (_nonzero, ".nonzero()"), (_tolist, ".tolist()"),
    (_device_synchronize, "torch.cuda.synchronize()"), (_event_synchronize, "a stream's or an event's synchronize()"),
    (_stream_synchronize, "a stream's or an event's synchronize()"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_host_waits_notes_each_wait_and_where(fn, said):
    waits = _waits(fn)
    assert len(waits) == 1 and waits[0].startswith(f"{said} at line "), waits
    assert waits[0].endswith("`"), waits  # the line of code, as the student wrote it


@host
def test_host_waits_notes_nothing_where_everything_stays_on_the_gpu():
    assert _waits(_on_the_gpu_only) == []


@host
def test_counting_synchronize_leaves_torch_cuda_as_it_was_even_when_the_answer_raises():
    names = ("synchronize", "Stream", "Event", "current_stream", "default_stream")
    before = {name: getattr(torch.cuda, name) for name in names}

    def broken():
        torch.cuda.synchronize()
        raise ZeroDivisionError

    host_waits = nb05.HostWaits(broken)
    with pytest.raises(ZeroDivisionError), host_waits.counting_synchronize():  # alone: cuda_on_cpu restores too
        broken()
    assert {name: getattr(torch.cuda, name) for name in names} == before
    assert len(host_waits.waits) == 1
