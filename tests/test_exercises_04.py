"""Exercise checks of notebook 04: the references and the machinery its checks stand on, against oracles of their
own (what CuPy printed on the reference GPU, programs worked out by hand, CuPy itself on a GPU).

The checks themselves, against their wrong and other right answers, are tested by tests/test_exercises.py.  Each
test here is parametrized by the registration it serves, so that `-k 04_streams_cupy` and `--exercises-of` find it.
"""


import numpy as np
import pytest
import torch

from conftest import gpu, host
from utils.exercises import ExerciseFailed, ReferenceLocked, exercise, inside_check, nb04, reference, registry

EXERCISES = {ex.name: ex for ex in registry() if ex.notebook == nb04.NOTEBOOK}


def serving(*names):
    """Parametrize a test by the registrations it serves (its id then holds "04_streams_cupy")."""
    return pytest.mark.parametrize("ex", [EXERCISES[name] for name in names], ids=lambda ex: ex.key)


# ---------------------------------------------------------------- exercise 4: CuPy's stream rules
# Programs and the streams CuPy gives their kernels, worked out by hand from cupy/cuda/stream.pyx (v14.2.0):
# `with` pushes and makes current, its end pops and makes the new top current, use() sets the current stream only.
BY_HAND = [
    # the lecture's program: what CuPy 14.2 printed on the reference H100 (solutions/04, 2026-11-27)
    (nb04.EXAMPLE_PROGRAM, {"k1": "null", "k2": "a", "k3": "b", "k4": "null", "k5": "b", "k6": "a", "k7": "null"}),
    # the lecture's section 2: s.use(), then `with a: pass`, ends on the null stream (its claim on the H100)
    ((("use", "b"), ("with", "a", ()), ("kernel", "k1")), {"k1": "null"}),
    # three deep, a use() in the middle: each end makes the block below current, never c
    (nb04.DEEP_PROGRAM, {"k1": "a", "k2": "b", "k3": "a", "k4": "null"}),
    # the same stream entered twice: the stack holds it twice
    ((("with", "a", (("with", "a", ()), ("kernel", "k1"))), ("kernel", "k2")), {"k1": "a", "k2": "null"}),
    # use() of the null stream inside a block, then a block: its end restores the enclosing block's stream
    ((("with", "b", (("use", "null"), ("kernel", "k1"), ("with", "c", ()), ("kernel", "k2"))),), {"k1": "null",
                                                                                                  "k2": "b"}),
    # a use() after every block has ended lasts to the end
    ((("with", "a", ()), ("use", "c"), ("kernel", "k1"), ("with", "b", (("kernel", "k2"),)), ("kernel", "k3")),
     {"k1": "c", "k2": "b", "k3": "null"}),
    # four deep and back out: each end makes the block below current, down to the null stream
    (nb04.DEEP_AND_BACK[0], {"k1": "a", "k2": "c", "k3": "b", "k4": "a", "k5": "null"}),
]


@host
@serving("as_meant")
@pytest.mark.parametrize("program, streams", BY_HAND, ids=lambda x: nb04._on_one_line(x) if isinstance(x, tuple)
                         else "")
def test_the_rules_give_what_cupy_gives(ex, program, streams):
    with inside_check():
        assert nb04.stream_rules(program) == streams


@host
@serving("as_meant")
def test_the_rules_are_the_checks_reference_where_cupy_cannot_run(ex):
    if nb04.has_cupy():
        pytest.skip("CuPy runs here: the reference is CuPy itself (test_the_rules_are_cupys)")
    with inside_check():
        assert all(nb04.streams_of(program) == streams for program, streams in BY_HAND)
    with pytest.raises(ReferenceLocked):
        nb04.streams_of(nb04.EXAMPLE_PROGRAM)


@gpu
@serving("as_meant")
def test_the_rules_are_cupys(ex):
    """On a GPU, the check compares with CuPy itself: the rules it follows elsewhere must agree on every program
    the check generates (and on the hand-made ones)."""
    import hypothesis

    programs = [program for program, _ in BY_HAND] + list(nb04.small_programs()) + list(nb04.DEEP_AND_BACK)
    programs += nb04.AT_EACH_LEVEL
    hypothesis.seed(4)(hypothesis.settings(max_examples=300, database=None)(
        hypothesis.given(nb04.programs())(lambda p: programs.append(p))))()
    with inside_check():
        by_cupy = nb04.cupy_runs_each(programs)
        differ = [nb04._on_one_line(p) for p, streams in zip(programs, by_cupy) if streams != nb04.stream_rules(p)]
        assert nb04.cupy_runs(nb04.EXAMPLE_PROGRAM) == BY_HAND[0][1]
        with nb04._recursion_room(3000):  # deeper than Python's recursion limit, as the check runs it
            assert nb04.cupy_runs(nb04.DEEPEST) == nb04.stream_rules(nb04.DEEPEST)
    assert differ == [] and len(programs) > 2800


@gpu
@serving("as_meant")
def test_an_answer_that_runs_the_program_on_cupy_fails(ex):
    """On a GPU, running the program on CuPy shows where each kernel goes: the check sees the answer switch streams."""
    import threading

    import cupy as cp

    def runs_it(program):
        seen = {}

        def body():
            streams = {"null": cp.cuda.Stream.null, **{name: cp.cuda.Stream() for name in "abc"}}
            names = {stream.ptr: name for name, stream in streams.items()}

            def run(block):
                for statement in block:
                    if statement[0] == "kernel":
                        seen[statement[1]] = names[cp.cuda.get_current_stream().ptr]
                    elif statement[0] == "use":
                        streams[statement[1]].use()
                    else:
                        with streams[statement[1]]:
                            run(statement[2])

            run(program)

        worker = threading.Thread(target=body)
        worker.start()
        worker.join()
        return seen

    def meant_by(program):  # the author's rule, worked out here (the check's reference is locked to answers)
        meant = {}

        def run(body, current):
            for statement in body:
                if statement[0] == "kernel":
                    meant[statement[1]] = current
                elif statement[0] == "use":
                    current = statement[1]
                else:
                    run(statement[2], statement[1])

        run(program, "null")
        return meant

    def fixes_what_cupy_runs(program):  # adds a use() before each kernel that CuPy runs elsewhere than meant
        ran, meant = runs_it(program), meant_by(program)

        def add(body):
            out = []
            for statement in body:
                if statement[0] == "kernel" and ran[statement[1]] != meant[statement[1]]:
                    out.append(("use", meant[statement[1]]))
                out.append(("with", statement[1], add(statement[2])) if statement[0] == "with" else statement)
            return tuple(out)

        return add(program)

    with pytest.raises(ExerciseFailed, match="your function switched CuPy's streams itself"):
        ex.check(fixes_what_cupy_runs)


def _generated(seed, examples):
    """The programs Hypothesis generates for the check's property, with another seed."""
    import hypothesis

    from utils.exercises.properties import _settings

    programs = []
    hypothesis.seed(seed)(_settings(examples)(hypothesis.given(nb04.programs())(lambda p: programs.append(p))))()
    return programs


@host
@serving("as_meant")
def test_the_small_programs_are_every_program_of_three_lines(ex):
    """Every program of up to three lines (each line a `with`, an end or a use(), a kernel after it or not) is among
    the small programs, once its streams other than null are named a, b, c in the order of their first use (the
    names do not change what runs where); the check tries them first, so a FAIL names the first that fails.  Those
    without a kernel too, the empty one first (round 32's adversary dropped their blocks and use() lines)."""
    import itertools

    small = set(nb04.small_programs())
    assert len(small) == len(nb04.small_programs()) > 2000 and nb04.small_programs()[0] == nb04.SMALLEST_PROGRAM
    assert nb04.small_programs()[1] == () and (("use", "a"), ("with", "b", (("use", "c"),))) in small
    # a block's end followed by a use() or a `with` before the next kernel, after a use() that the end does not give
    # back: answers that add a use() there whenever anything, or a kernel anywhere, follows passed while an end was
    # always followed by a kernel
    assert nb04._numbered((("use", "a"), ("kernel",), ("with", "null", (("kernel",),)), ("use", "b"),
                           ("kernel",))) in small
    assert nb04._numbered((("use", "a"), ("kernel",), ("with", "null", (("kernel",),)), ("with", "b", (("kernel",),)))
                          ) in small
    for n in range(1, 4):
        for lines in itertools.product(nb04._KINDS, repeat=n):
            for kernels in itertools.product((False, True), repeat=n):
                program = nb04._from_lines(False, list(zip(lines, kernels)))
                assert _named_in_order(program) in small, program


def _named_in_order(program):
    """The program with its streams other than null renamed a, b, c in the order of their first use."""
    order = []

    def note(body):
        for s in body:
            if s[0] != "kernel" and s[1] != "null" and s[1] not in order:
                order.append(s[1])
            if s[0] == "with":
                note(s[2])

    note(program)
    names = dict(zip(order, "abc"))

    def rename(body):
        return tuple(("with", names.get(s[1], s[1]), rename(s[2])) if s[0] == "with" else
                     ("use", names.get(s[1], s[1])) if s[0] == "use" else s for s in body)

    return rename(program)


@host
@serving("as_meant")
def test_the_generated_programs_go_beyond_the_small_ones(ex):
    """After the small programs, the check's 30 generated ones are mostly larger, and more than a sixth of them
    nest three deep or more (two in five, typically)."""

    def depth(program):
        return max((1 + depth(s[2]) for s in program if s[0] == "with"), default=0)

    small = set(nb04.small_programs())
    programs = _generated(0, 30)
    assert sum(p not in small for p in programs) > len(programs) / 2
    assert sum(depth(p) >= 3 for p in programs) > len(programs) / 6


@host
@serving("as_meant")
def test_the_generated_programs_need_the_rule_often_deep_and_twice_in_a_stretch(ex):
    """The check's own 30 generated programs (its seed): more than a third need a use() somewhere, and some need one
    inside 4 blocks, and two in one stretch after two ends (answers that fix bodies down to a depth, or take a first
    fix to hold past a later end, fail on them; the chosen `AT_EACH_LEVEL` catch these first)."""
    import zlib

    from utils.exercises.answers import nb04 as answers

    programs = _generated(zlib.crc32(f"{ex.name}:check_as_meant.<locals>.<lambda>".encode()), 30)
    with inside_check():
        def wrong_for(answer):
            return sum(nb04.stream_rules(answer(p)) != nb04.meant_streams(p) for p in programs)

        assert sum(nb04.fewest_uses(p) > 0 for p in programs) > len(programs) / 3
        assert wrong_for(answers.as_meant_down_to(3)) > 0
        assert wrong_for(answers.as_meant_first_fix_taken_to_hold) > 0


@host
@serving("as_meant")
def test_the_chosen_programs_need_the_rule_twice_at_each_level(ex):
    """Each of `AT_EACH_LEVEL` needs two use() lines in each body, inside 0 to its depth of blocks."""
    def depth(program):
        return max((1 + depth(s[2]) for s in program if s[0] == "with"), default=0)

    assert nb04._on_one_line(nb04.the_rule_at_each_level(1)) == (
        "a.use(); with a: {b.use(); with b: {}; k1; with a: {}; k2}; k3; with null: {}; k4")
    with inside_check():
        for program in nb04.AT_EACH_LEVEL:
            assert nb04.fewest_uses(program) == 2 * depth(program), nb04._on_one_line(program)


@host
@serving("as_meant")
def test_the_deep_programs_nest_and_come_back_out(ex):
    """Each of the chosen deep programs nests its depth in blocks, with a kernel inside the innermost and after each
    end: a stack bounded below its depth (a deque with maxlen) is wrong for the next kernel after some end."""
    def depth(program):
        return max((1 + depth(s[2]) for s in program if s[0] == "with"), default=0)

    assert [depth(p) for p in nb04.DEEP_AND_BACK] == [*range(4, 13), 64, 300]
    assert nb04._on_one_line(nb04.deep_and_back(2)) == "with a: {with b: {k1}; k2}; k3"
    assert nb04.deep_and_back(5) == nb04._numbered(nb04.deep_and_back(5))  # its kernels k1, k2, ... in line order
    with inside_check():
        for program in nb04.DEEP_AND_BACK:
            assert len(set(nb04.stream_rules(program).values())) == 4  # every stream, null last


@host
@serving("as_meant")
def test_the_deepest_program_is_judged_with_room_to_recurse(ex):
    """The deepest chosen program (round 32's adversary: CuPy's stack in a deque of 512, iterative) is deeper than
    Python's recursion limit and than the bounds taken from it; the check raises the limit for it, by ROOM_A_BLOCK
    frames a block (the solution recurses one frame a block), and puts it back."""
    import sys

    from utils.exercises.answers import nb04 as answers

    limit = sys.getrecursionlimit()
    with nb04._recursion_room(3000), inside_check():
        assert sys.getrecursionlimit() == limit + 3000 * nb04.ROOM_A_BLOCK
        depth, body = 0, nb04.DEEPEST
        while any(s[0] == "with" for s in body):
            depth, body = depth + 1, next(s[2] for s in body if s[0] == "with")
        assert depth == 3000 and len(nb04._kernels(nb04.DEEPEST)) == depth + 1  # deeper than a deque of 2048
        assert nb04.fewest_uses(nb04.DEEPEST) == 0
        # its streams come out right, with 88 use() lines where none is needed
        assert nb04._added_uses(answers.as_meant_iterative_stack_512(nb04.DEEPEST), nb04.DEEPEST) > 0
    assert sys.getrecursionlimit() == limit
    seen = []

    def notes_the_limit(program):
        seen.append(sys.getrecursionlimit())
        return answers.as_meant_right(program)

    ex.check(notes_the_limit)
    assert max(seen) == limit + 3000 * nb04.ROOM_A_BLOCK and sys.getrecursionlimit() == limit


@host
@serving("as_meant")
def test_programs_as_read_name_kernels_again_and_hold_new_strings(ex):
    """`_as_read` (round 32's adversary keyed its fixes by kernel name, and compared streams with `is`): kernels named
    again from the last, two to a name; every string of two characters or more a new object, equal to the old."""
    program = nb04._as_read(nb04.EXAMPLE_PROGRAM)
    assert program == nb04._as_read(program)
    assert nb04._on_one_line(program) == "k4; with a: {k3; b.use(); k3}; k2; b.use(); k2; with a: {k1}; k1"
    assert nb04._numbered(program) == nb04.EXAMPLE_PROGRAM
    null = nb04._as_read((("use", "null"), ("kernel", "k1"), ("kernel", "k2")))
    assert null[0][1] == "null" and null[0][1] is not "null" and null[0][0] is not "use"  # noqa: F632
    assert null[1][1] == null[2][1] == "k1" and null[1][1] is not null[2][1]
    assert nb04._each_kernel(program, nb04._kernels(program)) == nb04.EXAMPLE_PROGRAM
    assert nb04._each_kernel(nb04.DEEP_PROGRAM, nb04._kernels(nb04.DEEP_PROGRAM)) is nb04.DEEP_PROGRAM
    read = nb04.read_programs()
    assert len(read) > 500 and all(len(set(nb04._kernels(p))) < len(nb04._kernels(p)) for p in read)
    assert nb04._as_read(nb04._numbered((("use", "a"), ("kernel",), ("with", "b", ()), ("kernel",)))) in read


@serving("as_meant")
def test_the_long_program_has_bodies_longer_than_the_recursion_limit(ex):
    """The chosen long program (round 26's adversary recursed once a statement): a body longer than Python's
    recursion limit at the top, and one inside a block, each with a use() needed in every stretch."""
    import sys

    program = nb04.LONG_PROGRAM
    inner = [s[2] for s in program if s[0] == "with" and len(s[2]) > 10]
    assert len(program) > sys.getrecursionlimit() and len(inner) == 1 and len(inner[0]) > sys.getrecursionlimit()
    assert nb04._on_one_line(program).endswith("(2801 statements in all)")
    with inside_check():
        assert nb04.fewest_uses(program) == 2 * 200 * 2  # each stretch: one after each of its two ends


@host
@serving("as_meant")
def test_an_error_of_the_answer_names_the_program(ex):
    """An answer that raises on one of the small programs (tried before for_all) gets a note naming that program (the
    first with a block: `with null: {}`, programs without kernels among them since round 32)."""
    def raises_at_an_end(program):
        if any(s[0] == "with" for s in program):
            raise IndexError("pop from an empty stack")
        return program

    with pytest.raises(IndexError) as raised:
        ex.check(raises_at_an_end)
    assert any("as_meant: your function raised this for the program `with null: {}`" in note
               for note in raised.value.__notes__), raised.value.__notes__


@host
@serving("as_meant")
def test_a_list_of_lines_makes_the_program_it_says(ex):
    lines = [(("use", "b"), True), (("with", "a"), True), (("with", "c"), False), (("end",), True),
             (("end",), False), (("end",), True)]
    assert nb04._from_lines(True, lines) == (  # an end is followed by a kernel only where it says so
        ("kernel", "k1"), ("use", "b"), ("kernel", "k2"),
        ("with", "a", (("kernel", "k3"), ("with", "c", ()), ("kernel", "k4"))), ("kernel", "k5"))
    assert nb04._from_lines(False, [(("use", "b"), True), (("with", "a"), True), (("end",), False),
                                    (("use", "c"), True)]) == (
        ("use", "b"), ("kernel", "k1"), ("with", "a", (("kernel", "k2"),)), ("use", "c"), ("kernel", "k3"))
    assert nb04._from_lines(False, [(("with", "a"), False), (("with", "b"), True)]) == (
        ("with", "a", (("with", "b", (("kernel", "k1"),)),)),)
    assert nb04.as_code(nb04._from_lines(False, [(("with", "a"), False)])).endswith("with a:\n    pass")


@host
@serving("as_meant")
def test_the_hint_names_what_last_changed_the_stream(ex):
    assert nb04._last_change(nb04.EXAMPLE_PROGRAM) == {
        "k1": "start", "k2": "with", "k3": "use inside with", "k4": "end of with", "k5": "use", "k6": "with",
        "k7": "end of with"}


# What the author meant (PyTorch's rule: a block's end gives back the stream current at its start), worked out by
# hand, and the fewest use() lines that make CuPy run each kernel there.
MEANT_BY_HAND = [
    # the lecture's program: k7 was meant for b (b.use() before the second block), CuPy runs it on null
    (nb04.EXAMPLE_PROGRAM, {"k1": "null", "k2": "a", "k3": "b", "k4": "null", "k5": "b", "k6": "a", "k7": "b"}, 1),
    # the lecture's section 2: s.use(), then `with a: pass`: the author meant b after it, CuPy gives null
    ((("use", "b"), ("with", "a", ()), ("kernel", "k1")), {"k1": "b"}, 1),
    # three deep: k2 was meant for c (used before the innermost block), CuPy gives b; k3 and k4 agree
    (nb04.DEEP_PROGRAM, {"k1": "a", "k2": "c", "k3": "a", "k4": "null"}, 1),
    # a use() after the block's end, before the kernel: nothing to add
    ((("use", "b"), ("with", "a", ()), ("use", "c"), ("kernel", "k1")), {"k1": "c"}, 0),
    # two blocks in a row, a kernel after each: one use() for each end
    ((("use", "b"), ("with", "a", ()), ("kernel", "k1"), ("with", "c", ()), ("kernel", "k2")), {"k1": "b", "k2": "b"},
     2),
    # no kernel after the block: nothing to add
    ((("use", "b"), ("kernel", "k1"), ("with", "a", (("kernel", "k2"),))), {"k1": "b", "k2": "a"}, 0),
]


@host
@serving("as_meant")
@pytest.mark.parametrize("program, meant, fewest", MEANT_BY_HAND,
                         ids=lambda x: nb04._on_one_line(x) if isinstance(x, tuple) else "")
def test_what_the_author_meant_and_the_fewest_use_lines(ex, program, meant, fewest):
    with inside_check():
        assert nb04.meant_streams(program) == meant
        assert nb04.fewest_uses(program) == fewest


def _with_uses_added(program, added):
    """`program` with ("use", stream) statements inserted: `added` maps a path (the indices of the `with` blocks on
    the way, then the position in that body) to a stream."""
    def insert(body, path):
        out = []
        for i in range(len(body) + 1):
            if (*path, i) in added:
                out.append(("use", added[(*path, i)]))
            if i < len(body):
                s = body[i]
                out.append(("with", s[1], insert(s[2], (*path, i))) if s[0] == "with" else s)
        return tuple(out)

    return insert(program, ())


def _gaps(body, path=()):
    """Every place a statement can be inserted: (path, position)."""
    for i, s in enumerate(body):
        yield (*path, i)
        if s[0] == "with":
            yield from _gaps(s[2], (*path, i))
    yield (*path, len(body))


@host
@serving("as_meant")
def test_no_fewer_use_lines_make_cupy_run_the_kernels_as_meant(ex):
    """For every small, hand-made or generated program that needs one or two use() lines (by `fewest_uses`), no
    program with one fewer added
    anywhere, naming any stream, runs every kernel where its author meant by CuPy's rules (an oracle of brute
    force); the solution's count is reached (tests/test_exercises.py: the solution passes)."""
    tried = {1: 0, 2: 0}
    programs = [*nb04.small_programs(), *(p for p, _, _ in MEANT_BY_HAND), *_generated(0, 30)]
    with inside_check():
        for program in programs:
            fewest = nb04.fewest_uses(program)
            if fewest not in (1, 2):
                continue
            meant = nb04.meant_streams(program)
            for gap in ([] if fewest == 1 else list(_gaps(program))):
                for stream in nb04.STREAMS:
                    assert nb04.stream_rules(_with_uses_added(program, {gap: stream})) != meant, program
            if fewest == 1:
                assert nb04.stream_rules(program) != meant, program
            tried[fewest] += 1
    assert tried[1] > 60 and tried[2] > 0, tried


@host
@serving("as_meant")
def test_a_program_with_more_than_use_lines_added_is_told_apart(ex):
    program = nb04.EXAMPLE_PROGRAM
    assert nb04._added_uses(_with_uses_added(program, {(7,): "b", (5, 0): "a"}), program) == 2
    assert nb04._added_uses(program, program) == 0
    assert nb04._added_uses(program[:-1], program) is None  # a kernel left out
    assert nb04._added_uses((*program, ("kernel", "k8")), program) is None  # a kernel added
    assert nb04._added_uses((("with", "a", ()), *program), program) is None  # a block added
    assert nb04._added_uses(program[1:2] + program[:1] + program[2:], program) is None  # moved
    assert nb04._as_program([["use", "b"], ["with", "a", [["kernel", "k1"]]]]) == (
        ("use", "b"), ("with", "a", (("kernel", "k1"),)))
    assert nb04._as_program({"k1": "null"}) is None and nb04._as_program((("use", "d"),)) is None


# ---------------------------------------------------------------- exercise 2: no arithmetic in PyTorch
@host
@serving("cupy_scale_on_current_stream")
def test_pytorch_work_notes_arithmetic_and_not_the_hand_overs(ex):
    t = torch.ones(6)
    with nb04._PyTorchWork() as noted:  # what a right answer asks of PyTorch
        t.shape, t.dtype, t.is_contiguous(), t.data_ptr(), t.view(2, 3), t.T if t.dim() == 2 else t
        torch.empty_like(t), t.__dlpack_device__(), t.__dlpack__(), torch.from_dlpack(t), t.contiguous()
    assert noted.computed == []
    with nb04._PyTorchWork() as noted:  # views and copies
        t.view(2, 3).permute(1, 0), t.view(2, 3).transpose(0, 1), t.view(2, 3).t(), torch.t(t.view(2, 3))
        t.unsqueeze(0).squeeze(0), torch.squeeze(t), t.view(2, 3).swapaxes(0, 1), t.view(2, 3).movedim(0, 1)
        torch.tensor([1.0, 2.0]), t.new_tensor([1.0]), t.clone(), torch.clone(t), t.expand(2, 6), t.narrow(0, 1, 2)
    assert noted.computed == []
    with nb04._PyTorchWork() as noted:  # what computes
        t * 3.0, 3.0 * t, t.mul(2.0), torch.mul(t, 2.0), t.clone().mul_(2.0), torch.ops.aten.mul.Tensor(t, t)
    assert noted.computed == ["torch.Tensor.mul", "torch.Tensor.mul", "torch.Tensor.mul", "torch.mul",
                              "torch.Tensor.mul_", "aten.mul.Tensor"]
    with nb04._PyTorchWork() as noted:  # grad mode: no arithmetic (left changed, the check's settings guard names it)
        with torch.no_grad():
            pass
        torch.set_grad_enabled(False)
        torch.set_grad_enabled(True)
    assert noted.computed == []


@host
@serving("cupy_scale_on_current_stream")
def test_a_generated_case_scales_negative_values_by_zero(ex):
    """The check's generated cases (its seed) hold one with the factor 0.0 and negative values in t: there factor * t
    holds -0.0, which the check tells from the 0.0 of a `zeros_like` short-cut (answers/nb04.py)."""
    import zlib

    import hypothesis

    from utils.exercises.properties import _settings

    cases = []
    seed = zlib.crc32(f"{ex.name}:check_cupy_scale_on_current_stream.<locals>.holds".encode())
    hypothesis.seed(seed)(_settings(nb04.GPU_CASES, shrink=True)(hypothesis.given(nb04._scale_cases())(
        lambda case: cases.append(case))))()
    zeros = [case for case in cases if case[5] == 0.0 and (nb04._scale_values(*case[3:4], *case[6:8]) < 0).any()]
    assert len(cases) == nb04.GPU_CASES and zeros, cases


@host
def test_the_values_hold_fractions_nan_and_inf_exact_under_every_factor():
    """Round 23's adversary: cp.nansum, cp.nan_to_num and a kernel that truncates t to integers passed, on values that
    held no NaN, no infinity and (exercise 2) no fraction.  x's and t's values now hold fractions, and one NaN or inf
    where a case says so; each sum and product stays exact (NaN equal to NaN), so the checks compare with ==."""
    import math

    for special, value in nb04.SPECIALS.items():
        for shape in ((), (1,), (3, 0), (1000,), (37, 29)):
            x = nb04._sum_values(shape, 5, special)
            assert x.dtype == np.float64 and x.shape == shape
            assert int(np.isnan(x).sum() + np.isinf(x).sum()) == (x.size > 0 and value is not None)
            total = float(x.sum())
            assert nb04._same_number(total, float(np.sort(x.ravel())[::-1].sum()))  # in any order
            assert nb04._same_number(total, value) if x.size and value is not None else math.isfinite(total)
        t = nb04._scale_values((333, 130), 5, special)
        assert t.dtype == torch.float32 and (t[t.isfinite()] % 1 != 0).any()
        for factor in nb04.FACTORS:
            assert nb04._same_values((t * factor).double(), t.double() * factor).all(), (special, factor)
    assert not nb04._same_number(None, 0.0) and not nb04._same_number(1.0, math.nan)


# ---------------------------------------------------------------- the machinery of the GPU checks
@reference
def _opened():
    return "open"


@host
@serving("sum_on_stream", "cupy_scale_on_current_stream", "pipelined")
def test_a_fresh_thread_returns_raises_and_keeps_the_checks_references_open(ex):
    assert nb04._in_a_fresh_thread(lambda: 7) == 7
    with pytest.raises(ZeroDivisionError):
        nb04._in_a_fresh_thread(lambda: 1 / 0)
    with exercise("f"):
        assert nb04._in_a_fresh_thread(_opened) == "open"


@gpu
@serving("sum_on_stream", "cupy_scale_on_current_stream", "pipelined")
def test_a_with_block_restores_the_stack_top_not_a_use_callers_stream(ex):
    """What the checks' callers rely on (cupy/cuda/stream.pyx): a `with` block inside a function ends on the top of
    CuPy's stack, which is the caller's stream for a `with` caller and not for a use() caller; use() restores."""
    import cupy as cp

    from utils.exercises.streams import cupy_caller

    def inside(kind):
        s = cp.cuda.Stream(non_blocking=True)
        with cupy_caller(kind) as caller:
            top = nb04._stack_top(cp)
            with s:
                pass
            after_with = cp.cuda.get_current_stream()
            before = caller.stream
            s.use()
            before.use()
            return caller.stream, top, after_with, cp.cuda.get_current_stream(), nb04._stack_top(cp)

    for kind in ("null", "with", "busy", "use"):
        stream, top, after_with, after_use, top_after = nb04._in_a_fresh_thread(lambda kind=kind: inside(kind))
        assert (after_with == stream) == (kind != "use") and after_use == stream and top_after == top, kind
        assert (top == stream) == (kind != "use"), kind
