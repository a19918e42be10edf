"""Exercise checks of notebook 05: the references against independent oracles (the scripts' own tracebacks,
index_add's own bounds check), `Blind` and `HostWaits` (what a CPU can tell of a GPU's launches and waits), the
generators' own rules, and the answers that only a GPU can show wrong.

tests/test_exercises.py runs every check's answers (on the CPU too: `cpu_checks`, WRONG_ON_CPU).
"""

import contextlib
import io
import os
import re
import traceback

import hypothesis
import pytest
import torch
import torch.nn.functional as F

from conftest import gpu, host
from utils.exercises import ExerciseFailed, cuda_on_cpu, inside_check, nb05
from utils.exercises.answers.nb05 import polls_an_event_at_the_end  # the host polls query() until done
from utils.exercises.properties import st


# ---------------------------------------------------------------- exercise 1: the notebooks and their failing cells
def _run_here(cells: list[str]) -> tuple[list[tuple[int, int]], str]:
    """Run a notebook's cells in this process on the CPU, as DEVICE=cpu would, each compiled under a name of its
    own in one namespace (as a kernel runs them): the (cell, line) of each frame of a cell's own code (`<module>`)
    in the traceback of what they raised, and what they printed."""
    printed = io.StringIO()
    saved = os.environ.get("DEVICE")
    os.environ["DEVICE"] = "cpu"
    namespace = {"__name__": "__cells__"}
    try:
        with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(printed):
            for n, cell in enumerate(cells, 1):
                exec(compile(cell, f"<cell {n}>", "exec"), namespace)  # noqa: S102 -- the oracle
    except IndexError as error:
        frames = traceback.extract_tb(error.__traceback__)
        return [(int(f.filename[6:-1]), f.lineno) for f in frames
                if f.filename.startswith("<cell ") and f.name == "<module>"], printed.getvalue()
    finally:
        if saved is None:
            del os.environ["DEVICE"]
        else:
            os.environ["DEVICE"] = saved
    return [], printed.getvalue()


@host
@pytest.mark.parametrize("case", [(0, 0), (1, 0), (17, 30), (123456, 11), (816, 0), (816, 1), nb05.MORE_LOOKUPS],
                         ids=str)
def test_the_failing_cell_is_where_the_cells_raise_on_the_cpu(case):
    cells = nb05.failing_notebook(*case)
    places, printed = _run_here(cells)
    assert places, "the cells did not fail"
    assert printed == "", "nothing printed: the last cell, which prints, never ran"
    with inside_check():
        step, _ = nb05._first_bad_lookup(*case)
        assert nb05.failing_cell(*case) == places[-1]
    assert step >= 1, "step 0 is fine"


@host
def test_the_cells_are_a_script_line_for_line_and_end_without_a_newline():
    """Joined with one newline, the cells are one script whose lines are the cells' lines in order (what the
    solution counts back from), and no cell ends with a newline, as the task says."""
    cells = nb05.failing_notebook(3, 2)
    assert not any(cell.endswith("\n") for cell in cells)
    assert "\n".join(cells).splitlines() == [line for cell in cells for line in cell.splitlines()]
    assert len(cells) == nb05.FIRST_STEP_CELL + nb05.STEPS and ".item()" in cells[-1]


@host
def test_the_two_notebooks_alike_differ_in_their_seed_alone_and_fail_at_other_places_and_depths():
    with inside_check():
        (first, second) = nb05._notebooks_alike()
        places = nb05.failing_cell(*first), nb05.failing_cell(*second)
    one, other = nb05.failing_notebook(*first), nb05.failing_notebook(*second)
    assert [n for n, (a, b) in enumerate(zip(one, other)) if a != b] == [0]  # the setup cell: its seed
    assert [n for n, (a, b) in enumerate(zip(one[0].splitlines(), other[0].splitlines())) if a != b] == [12]
    assert places[0] != places[1]

    def said(cells, place):
        return cells[place[0] - 1].splitlines()[place[1] - 1].strip().split(" = ")[1]

    assert said(one, places[0]).startswith("pooled(")  # two helpers deep
    assert said(other, places[1]).startswith("users(")  # a step cell's own call of a module
    (step, failing), *later = nb05._bad_draws(*first)
    assert step >= 2, "a replay of steps 0 and 1 alone, or a run of two step cells, finds no failure"
    assert any(k < failing for _, k in later), "a lookup written earlier draws a bad id later in time"


@host
def test_more_lookups_has_more_than_three_lookups_a_step_and_two_bad_ones_in_the_step_that_fails():
    """What a replay that assumes three lookups a step, or keeps the last bad lookup of a step, gets wrong
    (answers.nb05.replay_three_lookups, replay_last_of_step): the two notebooks alike have three lookups a step,
    and one bad lookup in the step that fails."""
    layout, data = nb05.MORE_LOOKUPS
    assert len(nb05._layout(layout).lookups) > 3
    with inside_check():
        step, _ = nb05._first_bad_lookup(layout, data)
    assert sum(1 for s, _ in nb05._bad_draws(layout, data) if s == step) >= 2


@host
def test_the_hints_for_a_place_next_to_the_lookup_say_how_cells_and_lines_are_counted():
    with inside_check():
        cell, line = nb05.failing_cell(0, 0)
    cells = nb05.failing_notebook(0, 0)
    counted = "the first cell is cell 1, and a cell's first line is line 1"
    assert counted in nb05._cell_hint(cells, (cell, line - 1), (cell, line))
    assert counted in nb05._cell_hint(cells, (cell - 1, line), (cell, line))
    assert "helper" in nb05._cell_hint(cells, (2, 2), (cell, line))
    assert "GPU runs behind" in nb05._cell_hint(cells, (len(cells), 1), (cell, line))
    # One cell early is the same lookup a step earlier: a count from 0 only if the answer is early again elsewhere
    assert "another lookup" in nb05._cell_hint(cells, (cell - 1, line), (cell, line), lambda: False)


@host
def test_one_cell_early_again_tells_a_count_from_0_from_a_lookup_read_in_the_text():
    """The seventeenth adversary's text reader (the first lookup of the step after step 0) was one cell early on the
    lookup's line, and was told to count cells from 1; a replay one cell early in every notebook is told so."""
    from utils.exercises.answers.nb05 import first_lookup_of_the_second_step, replay_in_time

    def one_cell_early(cells):
        cell, line = replay_in_time(cells)
        return cell - 1, line

    with inside_check():
        cells, want = nb05.failing_notebook(*nb05.MORE_LOOKUPS), nb05.failing_cell(*nb05.MORE_LOOKUPS)
        assert first_lookup_of_the_second_step(cells) == (want[0] - 1, want[1])  # the case it was misjudged in
        assert not nb05._early_again(first_lookup_of_the_second_step, nb05.MORE_LOOKUPS)
        assert nb05._early_again(one_cell_early, nb05.MORE_LOOKUPS)


@host
def test_failing_cell_is_a_reference():
    with pytest.raises(RuntimeError, match="reference"):
        nb05.failing_cell(0, 0)


# ---------------------------------------------------------------- exercise 2: first_bad, Blind
@host
@hypothesis.settings(max_examples=80, database=None, derandomize=True, deadline=None)
@hypothesis.given(nb05.index_adds(st.just("default")))
def test_first_bad_agrees_with_index_adds_own_check_on_the_cpu(case):
    shape, dim, index, _, _ = case
    target, source, indices = nb05._index_add_inputs(case, "cpu")
    with inside_check():
        bad = nb05.first_bad(index, shape[dim])
    try:
        target.index_add(dim, indices, source)
        raised = False
    except (IndexError, RuntimeError):
        raised = True
    assert raised == (bad is not None) or 0 in (target.numel(), source.numel())  # empty: index_add checks nothing
    if bad is not None:
        assert all(0 <= v < shape[dim] for v in index[:bad]) and not 0 <= index[bad] < shape[dim]


@host
@pytest.mark.parametrize("message, said", [
    ("index[1] = 5 is out of range for 5 rows", (1, 5)),
    ("idx[1]=5", (1, 5)),
    ("indices[ 1 ] == 5", (1, 5)),
    ("index[1] is 5, outside 0..4", (1, 5)),
    ("index[1]: 5 is not in 0..4", (1, 5)),
    ("index[1] = tensor(5)", (1, 5)),
    ("index[3,000] = 1,000 along dim 0", (3000, 1000)),
    ("index[2] = -1 (index_add does not count from the end)", (2, -1)),
    ("target of shape [5, 3]: index[0] = 7 is out of range", (0, 7)),
    ("index[0] = 0 is out of range 0..-1 (2 bad; the last is at position 1)", (0, 0)),
    ("bad index: entry 5 holds 1", None),
    ("index 1 holds 5", None),
    ("index[1] = 5.5", None),
    ("index[1, 2] = 5", None),
])
def test_subscript_reads_the_first_index_p_equals_v_of_a_message(message, said):
    """The task's one form for the first bad index (round 76's adversary: free wording hides which number is the
    position)."""
    assert nb05.subscript(message) == said


def test_an_answer_that_fails_on_an_empty_index_is_told_so():
    from utils.exercises.answers.nb05 import min_and_max_items

    with pytest.raises(ExerciseFailed, match="an empty index holds no bad index"), contextlib.redirect_stdout(
            io.StringIO()):
        nb05.check_safe_index_add(min_and_max_items)


@host
@pytest.mark.parametrize("use", [
    lambda t, i: t.index_add(0, i, torch.ones(len(i), 3)), lambda t, i: torch.index_select(t, 0, i),
    lambda t, i: t.gather(0, i.view(-1, 1).expand(-1, 3)), lambda t, i: F.embedding(i, t), lambda t, i: t[i],
    lambda t, i: t.index_copy(0, i, torch.ones(len(i), 3)), lambda t, i: torch.take(t, i * 3),
], ids=["index_add", "index_select", "gather", "embedding", "indexing", "index_copy", "take"])
def test_blind_stops_every_operation_that_takes_an_index_out_of_range(use):
    table = torch.zeros(5, 3)
    with nb05.Blind():
        use(table, torch.tensor([0, 4, 1]))  # fine
        with pytest.raises(nb05.Launched):
            use(table, torch.tensor([0, 5, 1]))
        with contextlib.suppress(Exception), pytest.raises(nb05.Launched):  # an answer's `except` cannot hide it
            use(table, torch.tensor([7]))


@host
def test_blind_lets_python_indexing_count_from_the_end_and_stops_assert_async():
    table = torch.arange(5.0)
    with nb05.Blind():
        assert table[torch.tensor([-1, -5])].tolist() == [4.0, 0.0]  # valid: indexing counts from the end
        with pytest.raises(nb05.Launched):
            table[torch.tensor([-6])]
        with pytest.raises(nb05.Launched):
            torch.index_select(table, 0, torch.tensor([-1]))  # index_select does not
        torch._assert_async(torch.tensor(True))
        with pytest.raises(nb05.Launched, match="_assert_async"):
            torch._assert_async(torch.tensor(False))


@host
def test_blinds_own_reads_of_the_indices_reach_no_mode_below_it():
    """On a GPU the modes that make the answer's streams late sit below Blind (_call_index_add_on_gpu): a sleep they
    queued for Blind's own reads would be waited for by Blind's bool(), and the operation would then run on time.
    Only the answer's operation reaches them."""
    from torch.overrides import TorchFunctionMode

    seen: list[str] = []

    class Below(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", ""))
            return func(*args, **(kwargs or {}))

    table, index, ones = torch.zeros(5, 3), torch.tensor([0, 4, 1]), torch.ones(3, 3)
    with Below(), nb05.Blind():
        table.index_add(0, index, ones)
        torch._assert_async(torch.tensor(True))
    assert seen == ["index_add", "tensor"], seen


@host
@pytest.mark.parametrize("use", [lambda i: F.one_hot(i, 5), lambda i: torch.take_along_dim(torch.arange(5), i)],
                         ids=["one_hot", "take_along_dim"])
def test_blind_with_a_size_stops_any_operation_whose_own_check_of_an_index_raises(use):
    with nb05.Blind(size=5):  # as the CPU part of check_safe_index_add runs: these check their indices in C++
        use(torch.tensor([0, 4]))  # fine
        with contextlib.suppress(Exception), pytest.raises(nb05.Launched):
            use(torch.tensor([0, 5]))
        with pytest.raises(RuntimeError):  # an error that no index out of range caused reaches the answer
            torch.tensor([], dtype=torch.long).max()


# ---------------------------------------------------------------- HostWaits: what a CPU can tell of a GPU's waits
def _waits(fn) -> list[str]:
    """What HostWaits notes while fn() runs, with torch.cuda imitated on the CPU as the checks do."""
    with cuda_on_cpu(), nb05.HostWaits(fn) as host_waits, host_waits.counting_synchronize():
        fn()
    return host_waits.waits


GPU_X, GPU_Y = torch.randn(8, 3), torch.randn(8, 1)  # made outside the mode: a check's inputs, on the GPU
GPU_Y[::3] = -1


def _item():
    return GPU_Y.sum().item()


def _if_on_a_tensor():
    if torch.isnan(GPU_Y.sum()):
        return 1


def _boolean_mask():
    return GPU_Y[GPU_Y >= 0]


def _boolean_mask_written():  # a GPU value: index_put_ through the mask's positions (nonzero)
    y = GPU_Y.clone()
    y[y < 0] = GPU_Y[1, 0]


def _boolean_mask_filled_with_a_number():  # masked_fill_ (index_put_'s canDispatchToMaskedFill): no count to learn
    y = GPU_Y.clone()
    y[y < 0] = 0.0
    y[y[:, 0] > 5, 0] = torch.tensor(1.0)  # a host tensor of one element, an int beside the mask


def _copied_to_a_cpu_device():
    return GPU_Y.to(torch.device("cpu")).tolist()


def _empty_copied_to_the_host():  # no bytes to copy: a GPU waits for nothing
    return GPU_Y[:0].tolist(), GPU_Y[:0].cpu(), GPU_Y[:0].to("cpu", non_blocking=True).tolist()


def _empty_copied_to_the_gpu():  # no bytes to copy: copy_ returns before any transfer, sync debug mode is silent
    return (torch.tensor([], device=GPU_Y.device), torch.zeros(0).to(GPU_Y), torch.empty(0, 3).to(GPU_Y.device),
            GPU_Y.new_tensor([]))


def _nonzero():
    return (GPU_Y >= 0).nonzero()


def _tolist():
    return GPU_Y.tolist()


def _cpu_then_tolist():  # one copy to the host: reading the copy waits for nothing
    on_the_host = GPU_Y.cpu()
    return on_the_host.tolist(), on_the_host.sum().item()


def _made_on_the_gpu_then_item():
    return torch.ones(3, device="cuda").sum().item()


def _host_value_copied_to_the_gpu():
    return GPU_Y + torch.tensor(1.0, device="cuda")


def _written_into_a_host_tensor():
    losses = torch.empty(2)
    losses[0] = GPU_Y.sum()


def _copied_into_a_host_tensor():
    torch.empty(8, 1).copy_(GPU_Y)


def _made_on_a_gpu_tensors_device():  # x.device of a GPU tensor is the GPU (the CPU's device, here)
    return GPU_Y + torch.tensor(float("nan"), device=GPU_Y.device)


def _new_tensor_of_a_gpu_tensor():
    return GPU_Y.new_tensor(float("nan"))


def _moved_to_a_gpu_tensor():  # host.to(x) of a GPU tensor x: the same copy as .to("cuda")
    return GPU_Y + torch.zeros(()).to(GPU_Y)


def _typed_as_a_gpu_tensor():
    return GPU_Y + torch.zeros(()).type_as(GPU_Y)


def _device_synchronize():
    torch.cuda.synchronize()


def _event_synchronize():
    done = torch.cuda.Event()
    done.record()
    done.synchronize()


def _stream_synchronize():
    torch.cuda.current_stream().synchronize()


def _indexed_by_a_gpu_scalar():  # PyTorch reads a 0-d integer index on the host (.item()), then selects
    return GPU_X[GPU_Y.flatten().int().argmax()]


def _indexed_by_a_host_scalar():  # a 0-d index made on the host: nothing to read from the GPU
    return GPU_X[torch.tensor(2), 0]


@host
@pytest.mark.parametrize("fn, said", [
    (_item, ".item()"), (_if_on_a_tensor, "bool() of a tensor (an `if`, `not`, `and`)"),
    (_boolean_mask, "a boolean mask"), (_boolean_mask_written, "a boolean mask"), (_nonzero, ".nonzero()"),
    (_copied_to_a_cpu_device, ".to() the host"),
    (_tolist, ".tolist()"), (_cpu_then_tolist, ".cpu()"), (_made_on_the_gpu_then_item, ".item()"),
    (_host_value_copied_to_the_gpu, "a host value copied to the GPU"),
    (_written_into_a_host_tensor, "a GPU value copied into a host tensor"),
    (_copied_into_a_host_tensor, "a GPU value copied into a host tensor"),
    (_made_on_a_gpu_tensors_device, "a host value copied to the GPU"),
    (_new_tensor_of_a_gpu_tensor, "a host value copied to the GPU"),
    (_moved_to_a_gpu_tensor, "a host value copied to the GPU"),
    (_typed_as_a_gpu_tensor, "a host value copied to the GPU"),
    (_device_synchronize, "torch.cuda.synchronize()"), (_event_synchronize, "a stream's or an event's synchronize()"),
    (_stream_synchronize, "a stream's or an event's synchronize()"),
    (_indexed_by_a_gpu_scalar, "a GPU tensor of one value used as an index"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_host_waits_notes_each_wait_once_and_where(fn, said):
    waits = _waits(fn)
    assert len(waits) == 1 and waits[0].startswith(f"{said}") and " at line " in waits[0], waits
    assert waits[0].endswith("`"), waits  # the line of code, as the student wrote it


def _on_the_gpu_only():  # what exercise 3's solution does: no value reaches the host
    keep = GPU_Y >= 0
    loss = torch.where(keep, (GPU_X[:, :1] - GPU_Y) ** 2, 0.0).sum() / keep.sum()
    ok = ~torch.isnan(loss)
    return torch.stack([torch.where(ok, loss, 0.0), loss.detach()])


def _host_values_only():  # values made on the host are read there for free
    steps = torch.arange(4)
    return int(steps.sum()), steps.tolist(), bool(torch.tensor(1.0) > 0)


@host
@pytest.mark.parametrize("copy", ["cpu", "to"])
def test_a_copy_to_the_host_leaves_the_gpu_tensor_on_the_gpu(copy):  # the CPU's .cpu() returns the tensor itself
    def fn():
        GPU_Y.cpu() if copy == "cpu" else GPU_Y.to(torch.device("cpu"))
        return bool(GPU_Y.sum() > 0)

    assert [wait.split(" at line")[0] for wait in _waits(fn)] == [
        ".cpu()" if copy == "cpu" else ".to() the host", "bool() of a tensor (an `if`, `not`, `and`)"]


@host
@pytest.mark.parametrize("fn", [_on_the_gpu_only, _host_values_only, _boolean_mask_filled_with_a_number,
                                _empty_copied_to_the_host, _empty_copied_to_the_gpu, _indexed_by_a_host_scalar],
                         ids=lambda fn: fn.__name__)
def test_host_waits_notes_nothing_where_no_gpu_value_reaches_the_host(fn):
    assert _waits(fn) == []


def _stale(fn) -> list[str]:
    with cuda_on_cpu(), nb05.HostWaits(fn) as host_waits, host_waits.counting_synchronize():
        fn()
    return host_waits.stale


def _non_blocking_read_at_once():
    return GPU_Y.to("cpu", non_blocking=True).tolist()


def _non_blocking_copy_into_read_at_once():
    host = torch.empty(8, 1)
    host.copy_(GPU_Y, non_blocking=True)
    return host.sum().item()


def _non_blocking_then_synchronize():
    host = GPU_Y.to("cpu", non_blocking=True)
    torch.cuda.current_stream().synchronize()
    return host.tolist()


def _non_blocking_shape_only():
    return len(GPU_Y.to("cpu", non_blocking=True))


def _event_recorded_before_the_copy():  # the event completes without the copy (the tenth adversary's)
    done = torch.cuda.Event()
    done.record()
    host = GPU_Y.to("cpu", non_blocking=True)
    done.synchronize()
    return host.tolist()


def _event_recorded_after_the_copy():
    host = GPU_Y.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
    return host.tolist()


def _event_of_record_event_after_the_copy():
    host = GPU_Y.to("cpu", non_blocking=True)
    torch.cuda.current_stream().record_event().synchronize()
    return host.tolist()


def _event_never_recorded():
    host = GPU_Y.to("cpu", non_blocking=True)
    torch.cuda.Event().synchronize()
    return host.tolist()


def _event_after_the_copy_polled():  # the lecture's way: an event recorded after the copy says it is done
    host = GPU_Y.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    while not done.query():
        pass
    return host.tolist()


def _event_before_the_copy_polled():
    done = torch.cuda.Event()
    done.record()
    host = GPU_Y.to("cpu", non_blocking=True)
    while not done.query():
        pass
    return host.tolist()


def _stream_polled_after_the_copy():
    host = GPU_Y.to("cpu", non_blocking=True)
    while not torch.cuda.current_stream().query():
        pass
    return host.tolist()


@host
# A non_blocking copy_ into pageable host memory (torch.empty without pin_memory) has landed when copy_ returns:
# cudaMemcpyAsync to pageable memory returns once the copy is done (round 27's adversary; a wait, not a stale read)
@pytest.mark.parametrize("fn, stale", [(_non_blocking_read_at_once, True),
                                       (_non_blocking_copy_into_read_at_once, False),
                                       (_non_blocking_then_synchronize, False), (_non_blocking_shape_only, False),
                                       (_event_recorded_before_the_copy, True), (_event_recorded_after_the_copy, False),
                                       (_event_of_record_event_after_the_copy, False), (_event_never_recorded, True),
                                       (_event_after_the_copy_polled, False), (_event_before_the_copy_polled, True),
                                       (_stream_polled_after_the_copy, False)],
                         ids=lambda v: v.__name__ if callable(v) else None)
def test_host_waits_notes_a_non_blocking_copy_read_before_a_synchronize(fn, stale):
    assert bool(_stale(fn)) == stale


@host
@pytest.mark.parametrize("fn", [_event_after_the_copy_polled, _stream_polled_after_the_copy],
                         ids=lambda fn: fn.__name__)
def test_host_waits_counts_a_polled_query_as_one_wait(fn):
    """A query() that returns True tells the host what a synchronize() would: one wait, as on a GPU (the copy itself,
    made with non_blocking=True, waits for nothing)."""
    assert [wait.split(" at line")[0] for wait in _waits(fn)] == ["a stream's or an event's query() that returned True"]


@host
def test_explicit_synchronizations_leave_the_queries_as_they_were():
    before = (torch.cuda.Stream.query, torch.cuda.Event.query, torch.cuda.Stream.synchronize)
    with pytest.raises(ZeroDivisionError), nb05.explicit_synchronizations(lambda what: None):
        assert torch.cuda.Event.query is not before[1]
        raise ZeroDivisionError
    assert (torch.cuda.Stream.query, torch.cuda.Event.query, torch.cuda.Stream.synchronize) == before


@gpu
def test_explicit_synchronizations_see_a_polled_query_once_and_a_false_one_not_at_all():
    from utils.timing import gpu_cycles_per_second, gpu_sleep

    seen: list[str] = []
    gpu_cycles_per_second()  # calibrated before: it waits for the GPU
    torch.cuda.synchronize()
    with nb05.explicit_synchronizations(seen.append):
        gpu_sleep(0.05)
        done = torch.cuda.Event()
        done.record()
        assert not done.query()  # the GPU is still asleep: the host learnt nothing, and went on
        assert seen == []
        while not done.query():
            pass
    assert seen == ["an event's query() that returned True"]


@host
@pytest.mark.parametrize("wait", [False, True])
def test_host_waits_notes_a_non_blocking_copy_returned_before_anything_waited_for_it(wait):
    def answer():
        host = GPU_Y.to("cpu", non_blocking=True)
        if wait:
            torch.cuda.current_stream().synchronize()
        return [host]

    with cuda_on_cpu(), nb05.HostWaits(answer) as host_waits, host_waits.counting_synchronize():
        host_waits.returned(answer())
    assert bool(host_waits.stale) != wait, host_waits.stale


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


# ---------------------------------------------------------------- exercise 3: the generated trainings
@host
@hypothesis.settings(max_examples=30, database=None, derandomize=True, deadline=None)
@hypothesis.given(nb05.trainings(st.just("default")))
def test_the_batches_follow_the_tasks_rules(plan):
    """A NaN input only in a row whose targets are all there; "none" has no target, "all" every one; and
    the given loop skips exactly the batches whose loss is NaN."""
    batches = nb05._training_batches(plan, "cpu")
    for (x, y), (rows, kind) in zip(batches, plan.batches):
        assert x.shape[0] == y.shape[0] == rows and y.shape[1] == plan.outputs
        nan_rows = x.isnan().any(dim=1)
        assert int(nan_rows.sum()) == (kind == "nan")
        assert bool((y[nan_rows] >= 0).all())
        assert {"none": bool((y < 0).all()), "all": bool((y >= 0).all())}.get(kind, True)
    assert nb05._training_model(plan, "cpu")(batches[0][0]).shape == batches[0][1].shape


@host
def test_replacing_nan_gradients_by_zeros_changes_the_result_in_the_chosen_two_heads_case():
    """Where every gradient of a NaN batch is NaN (one head, one layer), zeros and a skip agree: the two heads'
    case is there so that they do not."""
    from utils.exercises.answers.nb05 import _no_sync, nan_gradients_to_zero

    plan = nb05.TRAINING_CHOSEN[0]
    after = []
    for answer in (_no_sync, nan_gradients_to_zero):
        model = nb05._training_model(plan, "cpu")
        answer(model, nb05._training_batches(plan, "cpu"), plan.lr)
        after.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert not torch.allclose(after[0], after[1], rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------- what only a GPU shows wrong
def checks_on_the_default_stream(target, dim, index, source):
    """Wrong: the indices are checked on PyTorch's default stream, which does not wait for the caller's (a caller
    whose earlier work writes the indices is still busy: the check reads what was there before)."""
    size = target.shape[dim]
    with torch.cuda.stream(torch.cuda.default_stream()):
        bad = (index < 0) | (index >= size)
        if bad.any():
            position = int(bad.int().argmax())
            raise IndexError(f"index[{position}] = {int(index[position])} is out of range for size {size}")
    return target.index_add(dim, index, source)


def non_blocking_copy_read_at_once(target, dim, index, source):
    """Wrong: a copy to the host that does not wait, read before it has landed (a stale buffer)."""
    size = target.shape[dim]
    values = index.to("cpu", non_blocking=True).tolist()
    for position, value in enumerate(values):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def numpy_of_the_index(target, dim, index, source):
    """Wrong: NumPy cannot read a tensor on the GPU (TypeError); on the CPU it passes."""
    size = target.shape[dim]
    for position, value in enumerate(index.numpy()):
        if not 0 <= value < size:
            raise IndexError(f"index[{position}] = {value} is out of range for size {size}")
    return target.index_add(dim, index, source)


def loop_on_the_default_stream(model, batches, lr):
    """Wrong: the whole loop on PyTorch's default stream, whoever calls it: a caller on a side stream reads the
    losses and the parameters before they are written."""
    from utils.exercises.answers.nb05 import _no_sync

    with torch.cuda.stream(torch.cuda.default_stream()):
        return _no_sync(model, batches, lr)


@gpu
@pytest.mark.parametrize("answer, check", [
    (checks_on_the_default_stream, nb05.check_safe_index_add),
    (non_blocking_copy_read_at_once, nb05.check_safe_index_add), (numpy_of_the_index, nb05.check_safe_index_add),
    (loop_on_the_default_stream, nb05.check_train_steps_no_sync),
    (polls_an_event_at_the_end, nb05.check_train_steps_no_sync),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_only_a_gpu_shows_wrong_fails_there(answer, check):
    with pytest.raises(ExerciseFailed) as failed, contextlib.redirect_stdout(io.StringIO()):
        check(answer)
    assert re.match(r"^FAIL \w+: .+\n     hint: \S", str(failed.value)), failed.value
