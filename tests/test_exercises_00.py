"""Exercise checks of notebook 00: the check's reference for storage_nbytes is PyTorch's own bounds check.

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.
"""

import math
import warnings

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


# Hints named after a second adversary: each of these answers got the hint of another mistake, read from the shrunk
# case alone (one element, one row of width 1), where many mistakes give the same number.
@host
@pytest.mark.parametrize(("check", "what", "hinted"), [
    ("check_storage_nbytes", "ends at the start of the last element (no + 1)", "takes its own bytes too"),
    ("check_storage_nbytes", "a 0-d view counted as empty", "no dimensions"),
    ("check_storage_nbytes", "the offset counted in bytes", "the offset counts elements"),
    ("check_storage_nbytes", "float4_e2m1fn_x2 as half a byte per element", "dtype.itemsize"),
    ("check_storage_nbytes", "bytes from finfo / iinfo bits (a complex dtype's are its real part's)", "dtype.itemsize"),
    ("check_largest_batch", "the weight as d // 2 rows of x and y (right for even widths only)", "round down once"),
    ("check_largest_batch", "round() to the nearest row", "round the rows down"),
    ("check_largest_batch", "at least one row", "the answer is 0"),
    ("check_largest_batch", "the weight's d * d taken from bytes, not elements", "the weight's too"),
    ("check_largest_batch", "w counted as (b, d), like x and y", "count every tensor once"),
    ("check_largest_batch", "rows rounded down to a multiple of 8", "to a multiple"),
    ("check_largest_batch", "a bisection over 0 .. 2**31 rows", "a search that stops short"),
    ("check_largest_batch", "a bisection over 0 .. 2**40 rows", "a search that stops short"),
    ("check_largest_batch", "float4_e2m1fn_x2 as half a byte per element", "dtype.itemsize"),
    # the round-17 adversary's: float arithmetic got the hint of a miscount, and a search capped at 2**41 rows passed
    ("check_storage_nbytes", "float64 arithmetic (math.fsum)", "whole numbers"),
    ("check_largest_batch", "float32 arithmetic", "whole numbers"),
    ("check_largest_batch", "a bisection over 0 .. 2**41 rows (the 4 TiB of an earlier round)",
     "a search that stops short"),
    # round 79's adversary's dense shortcut for views that are not dense: on the small view it fails on, forgetting the
    # last element's bytes gives the same number
    ("check_storage_nbytes", ("round 79's adversary: a dense shortcut for permuted views, the strides sorted apart "
                              "from their sizes"), "which size goes with which stride"),
])
def test_a_hint_names_the_mistake_the_answer_made(check, what, hinted):
    from utils.exercises import ExerciseFailed
    from utils.exercises.answers.nb00 import WRONG

    with pytest.raises(ExerciseFailed) as failed:
        getattr(nb00, check)(WRONG[check][what])
    assert hinted in str(failed.value).split("hint:")[1], failed.value


@host
def test_a_float_wrong_in_the_dtype_of_the_most_elements_alone_gets_no_hint_of_a_dtype():
    """Round 32's adversary: rows divided in float32 are wrong on the ordinary layers in uint8 alone (the dtype of the
    most elements per byte: the largest counts), and got the hint of a dtype's bytes per element (the check's hint now
    names the float); a miscount of a dtype's bytes is wrong on small numbers too, and still gets it."""
    from utils.exercises.answers.nb00 import WRONG, rows_divided_in_float32

    half_a_byte = WRONG["check_largest_batch"]["float4_e2m1fn_x2 as half a byte per element"]
    with inside_check():
        assert nb00._dtype_hint(rows_divided_in_float32, nb00.ORDINARY_LAYERS, nb00.most_rows, torch.uint8) is None
        assert "itemsize" in nb00._dtype_hint(half_a_byte, nb00.ORDINARY_LAYERS, nb00.most_rows,
                                              torch.float4_e2m1fn_x2)


def _scalar_element_size(shape, stride, offset, dtype):
    """The element size read from a scalar of the dtype: PyTorch cannot store a scalar of float4_e2m1fn_x2."""
    reach = sum((n - 1) * s for n, s in zip(shape, stride))
    return 0 if 0 in shape else (offset + 1 + reach) * torch.tensor(0, dtype=dtype).element_size()


@host
@pytest.mark.parametrize(("make", "answer"), [
    (lambda dtype: torch.tensor(0, dtype=dtype), _scalar_element_size),  # a RuntimeError that is no allocation
    (lambda dtype: torch.ones(1, dtype=dtype), "element_size_of_ones"),  # NotImplementedError ("fill_out")
], ids=["a scalar", "torch.ones"])
def test_a_tensor_that_pytorch_cannot_make_gets_the_hint_of_an_unmakeable_dtype(make, answer):
    """An answer that reads the element size by making a tensor of float4_e2m1fn_x2 made one that PyTorch cannot:
    the hint says so, not that a view of exabytes was made (a RuntimeError), nor TODO (a NotImplementedError)."""
    from utils.exercises import ExerciseFailed
    from utils.exercises.answers import nb00 as answers00

    fp4 = getattr(torch, "float4_e2m1fn_x2", None)
    try:
        make(fp4)
        pytest.skip("this PyTorch makes such a tensor of every dtype")
    except (RuntimeError, TypeError):  # NotImplementedError is a RuntimeError
        pass
    with pytest.raises(ExerciseFailed) as failed:
        nb00.check_storage_nbytes(getattr(answers00, answer) if isinstance(answer, str) else answer)
    assert "cannot make every tensor" in str(failed.value).split("hint:")[1], failed.value


# Found by a fourth adversary: Hypothesis's hundred draws from 22 dtypes missed some in each check.
@host
@pytest.mark.parametrize("check", ["check_storage_nbytes", "check_largest_batch"])
def test_each_check_asks_about_every_dtype(check):
    from utils.exercises.answers.nb00 import ALSO_RIGHT

    asked, kinds = set(), set()
    right = next(iter(ALSO_RIGHT[check].values()))

    def answer(*args):
        asked.add(args[-1])
        if check == "check_storage_nbytes" and 0 not in args[0] and args[2]:  # a view with elements, at an offset
            kinds.add((len(args[0]), math.prod(args[0]) == 1, args[-1].itemsize))
        return right(*args)

    getattr(nb00, check)(answer)
    assert set(nb00.DTYPES) - asked == set()
    # Round 32's adversary: views of rank 0 were asked only in 1-byte dtypes, views of one element of rank 1 or more
    # never, of rank 1 only in 1, 2 and 4 bytes, of ranks 4 to 8 in 1 byte (or empty): a shortcut for one kind of view
    # that miscounts a size of element passed.  Each rank from 0 to RANK, and one element at ranks 1 and 2, each at an
    # offset other than 0, is asked in every size of element.
    if check == "check_storage_nbytes":
        every = [(rank, rank == 0) for rank in range(nb00.RANK + 1)] + [(1, True), (2, True)]
        assert {(*kind, size) for kind in every for size in (1, 2, 4, 8, 16)} - kinds == set()


@host
def test_a_table_without_some_dtypes_raises_its_key_error_on_one_of_them():
    """The answer's own KeyError reaches the student, with a note naming the call (no FAIL: the error says it)."""
    from utils.exercises.answers.nb00 import _WITHOUT_HALVES, table_without_complex32_and_bfloat16

    with pytest.raises(KeyError) as raised:
        nb00.check_storage_nbytes(table_without_complex32_and_bfloat16)
    # which missing dtype comes first depends on what the check draws (a CI run met torch.bits16 first)
    assert raised.value.args[0] in nb00.DTYPES and raised.value.args[0] not in _WITHOUT_HALVES
    assert "your function raised this for storage_nbytes(" in "".join(raised.value.__notes__)


@host
def test_no_generated_view_has_more_elements_than_an_int64_counts():
    """A meta tensor (which the task allows) cannot have 2**63 elements, nor sizes whose product passes an int64 before
    a size of 0 (PyTorch multiplies them in order): such a view would FAIL a right answer.  Each generated view is
    made on the meta device, as a right answer may make it (round 23: far views drew (1, 2**18, 2**23, 2**23, 0))."""
    @settings(max_examples=1000, database=None, derandomize=True)
    @given(nb00.views())
    def look(view):
        assert math.prod(view[0]) < 2**63, view
        if max(view[0], default=0) >= 2**16:  # (the others have fewer than 2**63 elements before any size of 0)
            with warnings.catch_warnings():  # complex32's "experimental" warning
                warnings.simplefilter("ignore")
                made = torch.empty_strided(view[0], view[1], dtype=view[3], device="meta")
            assert made.numel() == math.prod(view[0]), view

    with inside_check():
        look()


@host
def test_the_dtypes_are_every_one_a_view_can_have():
    """The sub-byte integers and the bits kinds are asked about; the quantized ones, of which PyTorch makes no view from
    a shape, strides and an offset alone (the task leaves them out), are not (the round-17 adversary's)."""
    every = {dtype for dtype in vars(torch).values() if isinstance(dtype, torch.dtype)}
    left_out = every - set(nb00.DTYPES)
    assert {torch.int1, torch.uint4, torch.int7, torch.bits16, torch.bits8} <= set(nb00.DTYPES)
    assert torch.qint8 in left_out and all(str(dtype).startswith(("torch.qint", "torch.quint")) for dtype in left_out)
    for dtype in left_out:
        with pytest.raises(RuntimeError):
            torch.empty_strided((2,), (1,), dtype=dtype, device="meta")
    assert len(nb00.DTYPE_VIEWS) == len(nb00.DTYPE_LAYERS) == nb00.DTYPE_CASES >= len(nb00.DTYPES)


@host
def test_a_decimal_passes_where_its_value_is_whole_and_fails_as_a_decimal_where_not():
    """Round 23's adversary returned the Decimal that // gives, and the message named it a float; round 26's returned
    the exact Decimal of the right count, and was refused: liberal in types, strict in values (a whole Decimal is the
    count; one of another value, or not whole, is not)."""
    import decimal

    from utils.exercises import ExerciseFailed

    def decimal_rows(budget, d, dtype):
        with decimal.localcontext() as context:
            context.prec = 60
            return max(decimal.Decimal(0), (decimal.Decimal(budget) // dtype.itemsize - d * d) // (2 * d))

    nb00.check_largest_batch(decimal_rows)
    with pytest.raises(ExerciseFailed) as failed:
        nb00.check_largest_batch(lambda budget, d, dtype: decimal_rows(budget, d, dtype) + decimal.Decimal("0.5"))
    assert "a Decimal that is not a whole number: return an int" in str(failed.value), failed.value


@host
@pytest.mark.parametrize("answer", ["meta_made_the_default_device", "meta_device_context_entered"])
def test_a_meta_device_left_by_an_answer_is_put_back_for_the_next_check(answer):
    """Round 23's adversary: an answer left the meta device the default (or torch.device("meta") entered), the check
    PASSed it, and the next check crashed on a right answer's torch.tensor(budget) (a meta tensor has no value)."""
    from utils.exercises import ExerciseFailed
    from utils.exercises.answers import nb00 as answers00

    with pytest.raises(ExerciseFailed, match="after it returned"):
        nb00.check_storage_nbytes(getattr(answers00, answer))
    assert torch.zeros(1).device.type == "cpu"
    nb00.check_largest_batch(answers00.ALSO_RIGHT["check_largest_batch"]["int64 tensors, clamped at 0"])


@host
def test_a_cuda_device_left_current_fails_and_is_put_back(monkeypatch):
    """Round 32's adversary: torch.cuda.set_device(the last GPU) left current, on a machine of 2 or more GPUs, passed:
    the current device is a setting now, which the checks of 00 watch (every setting).  No GPU here: torch.cuda's
    current device is imitated (a CPU build never starts CUDA, and its current device reads 0, as a GPU's does before
    CUDA starts); only this setting is read (the others of CUDA would ask the CPU build for a GPU)."""
    from utils.exercises import ExerciseFailed, exercise, settings

    name = "torch.cuda.current_device()"
    assert name in nb00.WATCHED
    assert settings.read([name]) == {name: 0}
    current = [0]
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: current[0])
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: current.__setitem__(0, device))

    def switched(budget, d, dtype):
        torch.cuda.set_device(1)
        return max(0, (budget // dtype.itemsize - d * d) // (2 * d))

    left = r"left torch\.cuda\.current_device\(\) 1 after it returned \(it was 0\)"
    with pytest.raises(ExerciseFailed, match=left), exercise("largest_batch") as ex:
        settings.keeping(ex, switched, [name])(100, 2, torch.uint8)
    assert current == [0]


@host
def test_the_generated_views_include_dense_strides_with_other_sizes():
    """Round 79's adversary: a shortcut for dense views that compared the sorted strides with the shape's dense strides
    (sizes not sorted with them) passed, as no view asked had its own dense strides in another order and unequal
    sizes.  The generated views hold such views, dense ones and others, and views of dense tensors permuted and
    sliced; and the check always asks two such views (VIEW_KINDS)."""
    found = {"its dense strides, shuffled, not dense": 0, "permuted, dense": 0, "sliced after a permutation": 0}

    @settings(max_examples=300, database=None, derandomize=True)
    @given(nb00.views())
    def look(view):
        shape, stride = view[:2]
        if len(set(shape)) > 1 and 0 not in shape:
            dense = nb00._dense_strides(shape)
            reached = sum((n - 1) * s for n, s in zip(shape, stride)) + 1
            if sorted(stride) == sorted(dense) and tuple(stride) != dense:
                found["its dense strides, shuffled, not dense" if reached > math.prod(shape) else
                      "permuted, dense"] += 1
            elif sorted(stride) != sorted(dense) and reached > math.prod(shape) and all(s > 0 for s in stride):
                found["sliced after a permutation"] += 1

    with inside_check():
        look()
    assert all(count >= 5 for count in found.values()), found
    kinds = [(shape, stride) for shape, stride, _ in nb00.VIEW_KINDS]
    assert ((2, 3), (1, 3)) in kinds and ((2, 3, 4), (1, 12, 4)) in kinds


@host
def test_every_shortcut_and_the_helpers_they_share_are_locked():
    """Round 79's adversary took nb00._last, the sum of steps at the core of fewest_bytes, and passed: fewest_bytes
    alone was locked.  Each helper that computes part of a reference is locked, and each shortcut (a reference with one
    mistake, which an answer could mend) goes through one: called outside a check, each raises."""
    from utils.exercises import ReferenceLocked

    with pytest.raises(ReferenceLocked):
        nb00._last((2,), (1,))
    with pytest.raises(ReferenceLocked):
        nb00._elements(100, torch.float32)
    for shortcut, hint in nb00.VIEW_SHORTCUTS:
        with pytest.raises(ReferenceLocked):
            shortcut((3, 4), (4, 1), 2, torch.float32)
    for shortcut, hint in nb00.LAYER_SHORTCUTS:
        with pytest.raises(ReferenceLocked):
            shortcut(10**6, 7, torch.float16)

