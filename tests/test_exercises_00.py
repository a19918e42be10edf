"""Exercise checks of notebook 00: the check's reference for storage_nbytes is PyTorch's own bounds check.

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import host
from utils.exercises import inside_check, nb00

SMALL_VIEWS = st.integers(0, 3).flatmap(lambda rank: st.tuples(
    st.tuples(*[st.integers(0, 5)] * rank), st.tuples(*[st.integers(0, 6)] * rank), st.integers(0, 9),
    st.sampled_from(nb00.DTYPES)))


def _holds(nbytes, shape, stride, offset, dtype) -> bool:
    """Does a storage of `nbytes` hold this view? PyTorch's as_strided refuses one that reaches past it."""
    try:
        torch.empty(nbytes // dtype.itemsize, dtype=dtype).as_strided(shape, stride, offset)
    except RuntimeError:
        return False
    return True


@host
@settings(max_examples=200, database=None, derandomize=True, deadline=None)
@given(SMALL_VIEWS)
def test_the_reference_is_the_fewest_bytes_pytorch_accepts(view):
    dtype = view[3]
    with inside_check():
        want = nb00.fewest_bytes(*view)
    assert _holds(want, *view), f"PyTorch refuses {view} on {want} bytes"
    assert want == 0 or not _holds(want - dtype.itemsize, *view), f"{want - dtype.itemsize} bytes hold {view} too"


@host
def test_the_generated_views_reach_every_corner_the_task_allows():
    """Sizes of 0 in a dimension other than the first, strides of 0, and a storage of exabytes: each drawn."""
    seen = {"a 0 after the first dimension": False, "a stride of 0": False, "over a PiB": False}

    @settings(max_examples=100, database=None, derandomize=True)
    @given(nb00.views())
    def look(view):
        shape, stride = view[:2]
        seen["a 0 after the first dimension"] |= 0 in shape[1:]
        seen["a stride of 0"] |= 0 in stride and len(shape) > 0
        with inside_check():
            seen["over a PiB"] |= nb00.fewest_bytes(*view) > 2**50

    with inside_check():
        look()
    assert all(seen.values()), seen


@host
def test_the_reference_is_locked_outside_a_check():
    from utils.exercises import ReferenceLocked

    with pytest.raises(ReferenceLocked):
        nb00.fewest_bytes((2,), (1,), 0, torch.float32)
