"""Notebook 09's checks beyond the generic tests: their references against independent oracles, the cases a
failure names, and how exercise 2 (Triton) degrades where Triton is not installed."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import definitions_of, host
from tools.course import LECTURES, SOLUTIONS
from utils import cells, device
from utils.exercises import Checker, ExerciseFailed, inside_check, nb09

SOLUTION = SOLUTIONS / "09_kernels.ipynb"


class Test_09_kernels:
    def test_the_gelu_reference_is_torchs_tanh_gelu(self):
        rng = np.random.default_rng(0)
        x, bias = rng.normal(0, 3, (5, 7)), rng.normal(0, 1, 7)
        with inside_check():
            got = nb09.gelu_reference(x, bias)
        want = torch.nn.functional.gelu(torch.from_numpy(x + bias), approximate="tanh").numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    def test_the_float64_gelu_bound_takes_right_float64_forms_and_no_step_through_float(self):
        """nb09.GELU_F64_EPS, derived in its comment from what float64 arithmetic can miss by: on the check's chosen
        float64 case (a million values), right float64 forms of GELU stay inside it; a step through float breaks it on
        most values (adversary 106: tanhf in a body templated on T passed assert_close's float64 default, 1e-7, which
        is float32's own precision)."""
        case = ("use", 1023, 1025, "float64", "transposed", True, 4)  # check_bias_gelu's chosen float64 case
        x, bias = nb09._gelu_values(case)
        with inside_check():
            want = nb09.gelu_reference(x, bias)
        v = x + bias
        c, a = 0.7978845608028654, 0.044715

        def gelu(v, z=lambda v: c * (v + a * v * v * v), tanh=np.tanh):
            return 0.5 * v * (1.0 + tanh(z(v)))

        def ulps(t, k):  # t moved k ulps up (k < 0: down)
            for _ in range(abs(k)):
                t = np.nextafter(t, np.inf if k > 0 else -np.inf)
            return t

        right = {
            "the reference's order": gelu(v),
            "v (1 + 0.044715 v^2)": gelu(v, z=lambda v: c * v * (1.0 + a * v * v)),
            "the cube as a power": gelu(v, z=lambda v: c * (v + a * np.power(v, 3))),
            "the sigmoid form": v / (1.0 + np.exp(-2.0 * c * (v + a * v * v * v))),
            "tanh 2 ulps up": gelu(v, tanh=lambda z: ulps(np.tanh(z), 2)),
            "tanh 2 ulps down, z 4 up": gelu(v, z=lambda v: ulps(c * (v + a * v * v * v), 4),
                                             tanh=lambda z: ulps(np.tanh(z), -2)),
        }
        for what, got in right.items():
            assert not nb09.gelu_outside(got, x, bias, want, "float64").any(), what
        f32 = np.float32
        through_float = {
            "tanh in float (tanhf)": gelu(v, tanh=lambda z: np.tanh(z.astype(f32)).astype(np.float64)),
            "v in float": gelu(v.astype(f32).astype(np.float64)),
            "sqrt(2/pi) in float": gelu(v, z=lambda v: float(f32(c)) * (v + a * v * v * v)),
            "the result rounded to float": gelu(v).astype(f32).astype(np.float64),
            "all in float": gelu(v.astype(f32), z=lambda v: f32(c) * (v + f32(a) * v * v * v)).astype(np.float64),
        }
        for what, got in through_float.items():
            assert nb09.gelu_outside(got, x, bias, want, "float64").mean() > 0.85, what  # 0.90 to 0.98 here
        # float32 inputs keep assert_close's tolerance: the float computation is right there
        x32, b32 = x.astype(f32), bias.astype(f32)
        with inside_check():
            want32 = nb09.gelu_reference(x32, b32)
        got32 = gelu((x32 + b32), z=lambda v: f32(c) * (v + f32(a) * v * v * v))
        assert got32.dtype == f32 and not nb09.gelu_outside(got32, x32, b32, want32, "float32").any()

    def test_the_softmax_reference_is_a_softmax_in_float64(self):
        x = torch.randn(4, 9, generator=torch.Generator().manual_seed(1)) * 300
        with inside_check():
            got = nb09.softmax_reference(x)
        v = x.double().numpy()
        e = np.exp(v - v.max(axis=1, keepdims=True))
        assert got.dtype == torch.float64
        np.testing.assert_allclose(got.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=1e-300)

    def test_the_scale_reference_is_the_product_in_float64(self):
        x = np.array([1.0, -3.5, 1e-3], dtype=np.float32)
        with inside_check():
            got = nb09.scale_reference(x, 0.1)
        assert got.dtype == np.float64 and got.tolist() == [0.1 * float(v) for v in x]

    @pytest.mark.parametrize("case", [(0, 7, 0, 1.0, 3), (3, 5, 3, 1000.0, 2), (4, 160, 64, 10.0, 4),
                                      (2, 3, 1, -1000.0, 8), (3, 37, 3, 1.0, 11), (1, 1, 0, 1.0, 1)])
    def test_a_softmax_case_is_the_input_its_description_names(self, case):
        rows, cols, gap, scale, _ = case
        x = nb09._softmax_input(case, "cpu")
        text = nb09._describe_softmax(case)
        assert tuple(x.shape) == (rows, cols) and x.stride(1) == 1 and f"({rows}, {cols})" in text
        assert (x.stride(0) == cols + gap) and ((f"{cols + gap} elements apart" in text) == (gap > 0))
        start = x.storage_offset() if rows else 0  # round 19: x does not always start at its storage's start
        assert (f"starting {start} element" in text) == (start > 0)
        assert x.numel() == 0 or x.abs().max() <= 6 * abs(scale)  # "values up to about scale"
        assert scale > 0 or (x.numel() == 0 or x.max() < 0) and "all below 0" in text

    @pytest.mark.parametrize("a", nb09.FACTORS, ids=repr)
    def test_a_scale_case_names_its_factor_as_the_code_that_makes_it(self, a):
        """A caller's a of every kind (adversary 106: a kernel declared `double a`, given a as it came, passed while
        every a was a Python float): the description shows it as Python code that makes the same value of the same
        type, `np.float32(0.1)` or `2`."""
        shown = nb09._shown_factor(a)
        made = eval(shown, {"np": np})  # the description's own text, made again
        assert type(made) is type(a) and made == a and f"scale_into(out, x, {shown}) " in nb09._describe_scale(
            (5, a, 0))

    def test_the_chosen_scale_cases_hold_every_kind_of_factor(self):
        kinds = {type(a) for a in nb09.FACTORS}
        assert {int, float, np.float32, np.float64, np.int64} <= kinds
        assert {type(a) for n, a, _ in nb09.SCALE_CHOSEN if n} == kinds

    @pytest.mark.parametrize("case", [("null", None, 0, "float32", "contiguous", False, 1),
                                      ("use", 3, 5, "float64", "transposed", True, 4),
                                      ("with", 2, 9, "float32", "strided", False, 2)])
    def test_a_gelu_case_is_the_input_its_description_names(self, case):
        _, rows, n, dtype, *_ = case
        x, bias = nb09._gelu_values(case)
        assert x.shape == ((n,) if rows is None else (rows, n)) and bias.shape == (n,) and x.dtype == dtype
        assert f"shape {x.shape}" in nb09._describe_gelu(case) and f"{dtype}" in nb09._describe_gelu(case)
        other, _ = nb09._gelu_values(case, 1)  # another try: other values
        assert x.size == 0 or not np.array_equal(x, other)

    def test_in_the_poisoned_call_every_fresh_float_allocation_starts_as_nan(self):
        """What the allocator hands out holds whatever an earlier call left, possibly the same softmax: in the call
        whose launches are poisoned, a launch that rewrites those bytes unchanged would escape the poison, so every
        float tensor the answer allocates uninitialized starts as NaN there; other dtypes and other calls keep their
        bytes; the check's own work is not touched."""
        x = torch.randn(3, 5)
        with nb09._WhatPyTorchComputes(x, fresh_as_nan=True) as watch:
            made = [torch.empty_like(x), torch.empty(4, 2), x.new_empty(7), torch.empty_strided((2, 2), (1, 2))]
            ints = torch.empty(6, dtype=torch.int32).fill_(5)
            with nb09._check_at_work():
                own = torch.empty(8).fill_(2.0)
        assert all(bool(t.isnan().all()) for t in made) and ints.tolist() == [5] * 6 and own.tolist() == [2.0] * 8
        assert watch.computed == []
        with nb09._WhatPyTorchComputes(x) as watch:
            kept = torch.empty(4).fill_(1.0)
        assert kept.tolist() == [1.0] * 4

    def test_what_a_launch_writes_from_x_is_made_from_x_and_an_answers_operator_is_watched_inside(self):
        """The launches _counting_launches sees share _WhatPyTorchComputes's storages made from x (_taint_through): a
        tensor given to a launch with x (or a view of x) is made from x, so PyTorch computing from it is seen, and one
        given to a launch without anything made from x is not.  An operator the answer defined (torch.library) runs
        its body under the watch: its moves are moves, its computing is PyTorch's; the operator's own name is never
        taken for PyTorch's work."""
        x, spare = torch.randn(3, 5), torch.randn(3, 5)
        with nb09._WhatPyTorchComputes(x) as watch:
            y, other = torch.empty(3, 5), torch.empty(3, 5)
            with nb09._check_at_work():  # as _counting_launches runs a launch
                nb09._taint_through((y, x[1:], 5), {"BLOCK": 8})
                nb09._taint_through((other, spare), {})
            torch.softmax(other, dim=-1)
            assert watch.computed == []
            torch.softmax(y, dim=-1)
        assert watch.computed == ["_softmax"]

        @torch.library.custom_op("course09_tests::moves", mutates_args=())
        def moves(t: torch.Tensor) -> torch.Tensor:
            return t.clone()

        @torch.library.custom_op("course09_tests::computes", mutates_args=())
        def computes(t: torch.Tensor) -> torch.Tensor:
            return torch.exp(t)

        with nb09._WhatPyTorchComputes(x) as watch:
            made = moves(x)
            torch.exp(made[:1])
        assert watch.computed == ["exp"]  # made is made from x: the operator's outputs carry it on
        with nb09._WhatPyTorchComputes(x) as watch:
            computes(x)
        assert watch.computed == ["exp"]

    def test_other_threads_and_host_reads_of_x_are_watched_and_put_back_after(self):
        """Round 19: PyTorch computing from x in a thread started inside the block is seen, as is a launch's taint
        there; x's values read through NumPy or a list are noted (not other tensors', not the check's own); after the
        block, Tensor's methods and threading are as they were, and a thread started inside it passes operators
        through."""
        import threading

        x, other = torch.randn(3, 5), torch.randn(3, 5)
        before = {name: torch.Tensor.__dict__.get(name) for name in nb09.HOST_READS}
        bootstrap = threading.Thread._bootstrap_inner
        go, done, late = threading.Event(), threading.Event(), []

        def lingering():
            go.wait()
            late.append(torch.exp(x))
            done.set()

        with nb09._WhatPyTorchComputes(x) as watch:
            y = torch.empty(3, 5)
            worker = threading.Thread(target=lambda: (x.amax(dim=1), nb09._taint_through((y, x), {})))
            worker.start()
            worker.join()
            other.numpy(), other.tolist()
            with nb09._check_at_work():
                x.numpy()
            x.tolist(), x[1:].numpy()
            kept = threading.Thread(target=lingering)
            kept.start()
        assert watch.computed == ["amax"] and nb09._storage_of(y) in watch.tainted
        assert sorted(set(watch.host)) == [".numpy()", ".tolist()"]
        assert {name: torch.Tensor.__dict__.get(name) for name in nb09.HOST_READS} == before
        assert threading.Thread._bootstrap_inner is bootstrap and not nb09._WATCHING
        go.set()
        assert done.wait(10) and torch.equal(late[0], torch.exp(x))

    def test_on_a_gpu_a_copy_of_what_was_made_from_x_to_the_host_is_noted(self):
        """fix09ai: on a GPU, an operator from x (or from what was made from x) whose output lies on the host brings
        x's values there (x.cpu(), the copy TensorBase.tolist makes, .item()): noted in watch.to_host.  Imitated on
        this CPU with on_gpu=True, where every tensor counts as the host's: a copy and a float64 conversion of x, and
        .item() of an element, are noted; a view (it stays where its base is), an allocation (no values) and another
        tensor's copy are not; without on_gpu (x on a CPU, as the check runs here) nothing is."""
        x, other = torch.randn(3, 5), torch.randn(3, 5)
        with nb09._WhatPyTorchComputes(x, on_gpu=True) as watch:
            x.clone(), other.clone(), torch.empty_like(x), x[:1].to(torch.float64), x[1, 2].item()
        assert watch.to_host == ["clone", "_to_copy", "_local_scalar_dense"]
        with nb09._WhatPyTorchComputes(x) as watch:
            x.clone(), x[:1].to(torch.float64), x[1, 2].item()
        assert watch.to_host == []

    def test_a_cupy_copy_of_xs_memory_to_the_host_is_a_host_read(self, monkeypatch):
        """fix09ai (round 76's NumPy on a cupy.cuda.runtime.memcpy of x.data_ptr()): CuPy's memcpy and memcpyAsync,
        patched in the block, note a copy to the host whose source lies in x's storage (by address range: x's first
        element need not start it); a copy from elsewhere, or from x to the device, is not noted; after the block the
        runtime's functions are its own.  Imitated with a stand-in for CuPy's runtime module (no CuPy here)."""
        import types

        calls = []
        runtime = types.ModuleType(nb09.CUPY_RUNTIME)
        runtime.memcpyDeviceToHost, runtime.memcpyDeviceToDevice, runtime.memcpyDefault = 2, 3, 4

        def memcpy(dst, src, size, kind):
            calls.append((dst, src, size, kind))

        def memcpy_async(dst, src, size, kind, stream):
            calls.append((dst, src, size, kind))

        runtime.memcpy, runtime.memcpyAsync = memcpy, memcpy_async
        runtime.pointerGetAttributes = lambda ptr: types.SimpleNamespace(type=2 if ptr == 7 else 1)
        monkeypatch.setitem(sys.modules, nb09.CUPY_RUNTIME, runtime)
        base = torch.randn(4, 6)
        x, other = base[1:, 1:5], torch.randn(3, 4)
        with nb09._WhatPyTorchComputes(x) as watch:
            runtime.memcpy(1, other.data_ptr(), 16, 2)  # another tensor's memory
            runtime.memcpy(7, x.data_ptr(), 16, 3)  # x's, to the device
            runtime.memcpy(7, x.data_ptr(), 16, 4)  # x's, to a device address (memcpyDefault)
            assert watch.host == []
            runtime.memcpyAsync(1, x.data_ptr() + 4, 16, 2, 0)  # x's, inside its storage, to the host
            runtime.memcpy(1, x.data_ptr(), 16, 4)  # x's, to a host address (memcpyDefault)
        assert watch.host == ["cupy.cuda.runtime.memcpy() of x's memory to the host"] * 2 and len(calls) == 5
        assert runtime.memcpy is memcpy and runtime.memcpyAsync is memcpy_async

    def test_a_call_that_raises_after_a_host_read_of_x_fails_on_the_read(self):
        """fix09ai (round 75's NumPy on to_dlpack(x) on the H200: NumPy refused the GPU's capsule, and the error went
        through the check): an answer that reads x outside PyTorch and its kernel, then raises, FAILs on the read,
        with the error named; one that raises without a read still raises its own error."""
        pytest.importorskip("triton")

        def read_then_raise(x):
            if x.numel():  # (as round 75's: an empty x is neither read nor refused)
                x.tolist()
                raise ValueError("cannot use this array")
            return torch.empty_like(x)

        def only_raise(x):
            raise ValueError("my own bug")

        # (on a CPU the read is seen handing x to Python; on a GPU, as the copy to the host that .tolist() makes:
        # call CN, the H200, where the first form's match failed)
        with pytest.raises(ExerciseFailed, match=r"(handed x's memory or values .*\(\.tolist\(\)\)|copied x's values"
                           r".*from the GPU to the host .*); then it raised ValueError: cannot use this array"):
            nb09.check_softmax_rows(read_then_raise)
        with pytest.raises(ValueError, match="my own bug"):
            nb09.check_softmax_rows(only_raise)

    def test_a_copy_to_the_host_fails_with_what_made_it_and_counts_nothing_where_none_was_made(self):
        """fix09ai: _host_reads_judged FAILs a call whose watch noted a copy to the host (on a GPU), naming the
        operators, and counts no check where nothing was noted (a CPU's count of checks stays as it was)."""
        x = torch.randn(2, 3)
        checker = Checker("softmax_rows")
        with nb09._WhatPyTorchComputes(x) as watch:
            pass
        nb09._host_reads_judged(checker, "softmax_rows(x)", watch)
        assert checker.passed == 0
        with nb09._WhatPyTorchComputes(x, on_gpu=True) as watch:
            x.clone()
        with pytest.raises(ExerciseFailed, match=r"copied x's values.*from the GPU to the host \(aten\.clone;"):
            nb09._host_reads_judged(checker, "softmax_rows(x)", watch)

    def test_the_softmax_bar_is_measured_on_a_shape_the_task_allows(self):
        assert nb09.BIG[1] <= nb09.MAX_COLS and 0 < nb09.SHARE_BAR < 1
        assert nb09.CPU_MAX[1] > 128  # a row longer than a block of 128 on the CPU too

    def test_without_triton_the_solution_defines_its_functions_and_the_check_says_it_needs_triton(self, monkeypatch):
        """Triton made unimportable: the solution's cells still run (the stand-ins of nb09.without_triton),
        launching the kernel says what to install, the check says it needs Triton (no PASS, no FAIL), and
        `%%requires triton` (the lecture's Triton cells) skips."""
        for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")] + ["triton"]:
            monkeypatch.setitem(sys.modules, name, None)
        device.triton_status.cache_clear()
        try:
            (softmax_rows,) = definitions_of(SOLUTION, ["softmax_rows"])
            with pytest.raises(ImportError, match="requirements-triton.txt"):
                softmax_rows(torch.ones(2, 3))
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                nb09.check_softmax_rows(softmax_rows)
            assert printed.getvalue().startswith("skipped (needs triton): softmax_rows: Triton is not importable")
            assert "PASS" not in printed.getvalue() and "FAIL" not in printed.getvalue()
            reason = cells.missing(["triton"])
            assert reason is not None and reason.startswith("skipped (needs triton): ")
        finally:
            device.triton_status.cache_clear()

    @pytest.mark.skipif(not (LECTURES / "09_kernels.ipynb").exists(), reason="the lecture is not on this branch")
    def test_the_lectures_triton_cells_say_they_need_triton(self):
        """Every code cell of the lecture that launches or defines a Triton kernel starts with `%%requires ...
        triton`, so that it skips where Triton is missing (a CPU without requirements-triton.txt)."""
        from tools.course import read

        for n, cell in enumerate(read(LECTURES / "09_kernels.ipynb").cells):
            if cell.cell_type == "code" and "@triton.jit" in cell.source:
                first = cell.source.splitlines()[0]
                assert first.startswith("%%requires") and "triton" in first.split(), f"cell {n}: {first}"


    def test_the_settings_guard_sees_a_filter_of_one_category_and_a_named_loggers_level(self):
        """Round 26's adversary: warnings.filterwarnings("ignore", category=RuntimeWarning) and the logger "torch" set
        to ERROR, each left, passed (the guard read simplefilter's catch-alls and the root logger only).  Each is now
        a changed setting, put back; a filter for a library's own category or message is not one."""
        import logging
        import warnings

        from utils.exercises import settings

        names = ("warnings.simplefilter(...)", "logging.disable(...)")
        before = settings.read(names)
        torch_level, fresh = logging.getLogger("torch").level, "course09_tests.a_logger_made_now"
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=np.exceptions.RankWarning)  # NumPy's own category
            warnings.filterwarnings("ignore", message="a library's own message", category=UserWarning)
            logging.getLogger(fresh)  # made, no level set
            assert settings.read(names) == before
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            logging.getLogger("torch").setLevel(logging.ERROR)
            logging.getLogger(fresh).setLevel(logging.CRITICAL)
            assert settings.put_back(before) == list(names)
            assert settings.read(names) == before
            assert not any(f[2] is RuntimeWarning and f[1] is None and f[3] is None for f in warnings.filters)
        assert logging.getLogger("torch").level == torch_level and logging.getLogger(fresh).level == logging.NOTSET

    def test_an_atomic_outside_the_guards_neither_runs_nor_goes_unseen(self):
        """Round 46's engineer: Triton's interpreter runs tl.atomic_add and tl.atomic_cas through its own calls, not
        through the masked load and store the guarded launch watched, and an atomic far past y's guard aborted the
        Python process.  Each atomic lane outside the guarded copies is now skipped and counted as a store outside
        (and a load outside the storages); the lanes inside run."""
        pytest.importorskip("triton")
        from utils.exercises.answers import nb09 as answers

        if torch.cuda.is_available():
            pytest.skip("the guards are the CPU's")
        far = 1 << 22  # elements past y: far past any guard, into the process's heap were it not stopped
        flags = torch.zeros(4, dtype=torch.int32)
        y = torch.zeros(4)
        with nb09._counting_launches(guarded=True) as seen:
            answers._cas_at_kernel[(1,)](flags, 3, far)  # lane 0 inside, lane 1 far past the end
            answers._add_at_kernel[(1,)](y, 2, far)
        assert seen.count == 2 and not nb09._COUNTING
        assert flags.tolist() == [0, 0, 0, 7] and y.tolist() == [0.0, 0.0, 1.5, 0.0]
        wrote = [s for s in seen.strayed if "past the guards" in s or "outside" in s]
        assert len(wrote) == 2 and all("stored 1 element" in s for s in wrote), seen.strayed
        assert len(seen.read_outside) == 2, seen.read_outside

    def test_a_launch_through_run_or_a_launcher_kept_from_before_is_counted_and_guarded(self):
        """Round 26's adversary: `kernel.run(..., grid=...)` and a launcher `kernel[grid]` made outside the block
        were not counted (a right answer FAILed), nor guarded (a store past y went unseen); a kernel's warmup is no
        launch."""
        pytest.importorskip("triton")
        from utils.exercises.answers import nb09 as answers

        if torch.cuda.is_available():
            pytest.skip("the guards are the CPU's")
        x = torch.randn(2, 5)
        y = torch.empty(2, 5)
        launcher = answers._marker_past_the_end_kernel[(1,)]  # made before the block
        with nb09._counting_launches(guarded=True) as seen:
            answers._softmax_kernel.run(y, x, 5, 5, 5, BLOCK=8, SUBTRACT=True, OTHER=-float("inf"),
                                        DIVIDE_BY_MAX=False, grid=(2,), warmup=False)
            launcher(y, 10)
        assert seen.count == 2 and len(seen.strayed) == 1 and "after its end" in seen.strayed[0]
        torch.testing.assert_close(y, torch.softmax(x, dim=-1))
        assert not nb09._COUNTING

    def test_a_launchs_changes_are_poisoned_in_the_storage_whatever_the_view_it_was_given(self):
        """Round 71's last adversary: only floating views were poisoned, and a softmax stored through
        y.view(torch.int32) kept its values.  Every element the launch changed is all-ones bytes now (a NaN through
        any float view), an element as wide as the widest view given and 4 bytes at least; what it left alone keeps
        its bytes."""
        y = torch.zeros(6)
        wide = torch.zeros(3, dtype=torch.float64)
        for given, written in ((y.view(torch.int32), y), (y.view(torch.uint8), y), (wide.view(torch.int32), wide)):
            groups = nb09._storages((given,), {})
            before = [nb09._storage_bytes(t[0]).clone() for t in groups.values()]
            written[1] = 0.5  # (its low bytes unchanged: 0.5 is 0x3F000000, 0x3FE0000000000000)
            written[2] = 1.0
            nb09._poison_what_changed(groups, before)
            assert written.isnan().tolist() == [False, True, True] + [False] * (len(written) - 3), given.dtype
            assert written[0] == 0 and not written[3:].any()
            written.zero_()

    def test_a_kernel_on_libdevice_is_left_for_a_gpu_and_a_misaligned_descriptor_fails_with_its_cause(self):
        """Round 71's last adversary: Triton 3.9's interpreter runs libdevice's functions as stubs (None), and its
        assert on a tensor descriptor's alignment was shown as the student's error with a traceback.  The libdevice
        use is read from the kernel (through its launcher's code and globals), not from the error's text; the
        block-pointer message offers descriptors only where they are aligned."""
        pytest.importorskip("triton")
        from utils.exercises import ExerciseFailed
        from utils.exercises.answers import nb09 as answers

        if torch.cuda.is_available():
            pytest.skip("the interpreter's limits are the CPU's")
        x = torch.randn(2, 5)
        with pytest.raises(Exception) as raised:
            answers.r71c_libdevice_exp(x)
        assert nb09._extra_math_used(raised.value) == "triton.language.extra.libdevice"
        with pytest.raises(Exception) as raised:
            answers.r71c_tensor_descriptor_loads(x)
        assert nb09._extra_math_used(raised.value) == "" and "16-byte" in nb09._descriptor_misaligned(raised.value)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            nb09.check_softmax_rows(answers.r71c_libdevice_exp)
        said = printed.getvalue()
        assert "cannot run triton.language.extra.libdevice's functions" in said, said
        assert "limit of the interpreter, not an error of your kernel" in said, said
        with pytest.raises(ExerciseFailed) as failed:
            nb09.check_softmax_rows(answers.r71c_tensor_descriptor_loads)
        assert "16-byte aligned" in str(failed.value) and "pointers and a mask" in str(failed.value), failed.value
        assert not getattr(failed.value, "__notes__", []), failed.value.__notes__  # no "your function raised this"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            nb09.check_softmax_rows(answers.WRONG_SOFTMAXES[answers.R71_BLOCK_POINTERS_UNCHECKED])
        said = printed.getvalue()
        assert "pointers and a mask" in said and "multiples of 16 bytes" in said, said


def _ncu_probe() -> dict:
    """notebooks/scripts/09_ncu_probe.py's names, as lecture 09's cell gets them (not run as a program: no GPU)."""
    import runpy

    return runpy.run_path(str(LECTURES / "scripts" / "09_ncu_probe.py"))


def test_the_ncu_probe_launches_the_lectures_own_kernels():
    """notebooks/scripts/09_ncu_probe.py profiles lecture 09's kernels: each kernel of its source is, character for
    character, in one of the lecture's code cells (so a change to a kernel there cannot leave the probe measuring
    another), and its fourth gather, `gather_cols_const`, is the lecture's `gather_cols` but for `rows`, a constant
    when compiled (its name, the unnamed `rows` argument and the line that defines `rows` apart), and is itself in
    the lecture's code (section 4 times it)."""
    import re

    import nbformat

    probe = _ncu_probe()
    lecture = nbformat.read(LECTURES / "09_kernels.ipynb", as_version=4)
    code = "\n".join(c.source for c in lecture.cells if c.cell_type == "code")
    kernel = r'extern "C" __global__ void \w+\(.*?\n}'
    kernels = re.findall(kernel, probe["RAW"], flags=re.DOTALL)
    assert len(kernels) == 4
    for found in kernels:
        assert found in code, found.splitlines()[0]
    (const,) = re.findall(kernel, probe["RAW_CONST"], flags=re.DOTALL)
    assert const in code, "section 4 times gather_cols_const from the probe's source"
    head, define, *body = const.splitlines()
    assert define.strip().startswith("const int rows = ROWS;")
    as_lecture = "\n".join([head.replace("gather_cols_const(", "gather_cols(").replace(", int, ", ", int rows, "),
                             *body])
    assert as_lecture == next(k for k in kernels if "void gather_cols(" in k)
    assert probe["ROWS"] == 8192 and "gather_cols_const" in probe["GATHERS"]


# A few lines of ncu's --csv output, the format of ncu 2025 (a header, then a line per metric of each profiled launch,
# among ncu's own lines and the program's), with CONTRIBUTING's values of call BX (one H200 run); the first
# gather_cols launch and every gather_cols_const value are made up, to check that the second launch is the one read.
NCU_SAMPLE = """==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "silu1" - 0: 0%....50%....100% - 9 passes
done
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",\
"Section Name","Metric Name","Metric Unit","Metric Value"
"2","4242","python3.12","127.0.0.1",\
"gen_sequenced<curandStateXORWOW, float2, normal_args_float_t>(curandStateXORWOW *, float2 *, unsigned long)","1","7",\
"(64, 1, 1)","(64, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","usecond","35.10"
"7","4242","python3.12","127.0.0.1","silu1","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","DRAM Throughput","%","51.20"
"7","4242","python3.12","127.0.0.1","silu1","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","usecond","210.37"
"7","4242","python3.12","127.0.0.1","silu1","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Occupancy","Achieved Occupancy","%","73.20"
"7","4242","python3.12","127.0.0.1","silu1","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Occupancy","Achieved Active Warps Per SM","warp","46.85"
"11","4242","python3.12","127.0.0.1","silu1","1","7","(1024, 1, 1)","(65536, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","usecond","252.41"
"11","4242","python3.12","127.0.0.1","silu1","1","7","(1024, 1, 1)","(65536, 1, 1)","0","9.0",\
"Occupancy","Achieved Occupancy","%","67.30"
"11","4242","python3.12","127.0.0.1","silu1","1","7","(1024, 1, 1)","(65536, 1, 1)","0","9.0",\
"Occupancy","Achieved Active Warps Per SM","warp","43.07"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","usecond","198.02"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","DRAM Throughput","%","54.30"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Memory Throughput","%","54.30"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","Memory Throughput","Tbyte/second","2.71"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","L2 Hit Rate","%","50.50"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","Mem Busy","%","35.70"
"13","4242","python3.12","127.0.0.1","gather_rows","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","Mem Pipes Busy","%","n/a"
"16","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","msecond","1.20"
"17","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","usecond","452.16"
"17","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","DRAM Throughput","%","24.00"
"17","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","Memory Throughput","Gbyte/second","1,197.80"
"17","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","L2 Hit Rate","%","87.50"
"17","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","Mem Busy","%","95.80"
"17","4242","python3.12","127.0.0.1","gather_cols","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"Memory Workload Analysis","Mem Pipes Busy","%","12.40"
"19","4242","python3.12","127.0.0.1","gather_cols_const","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",\
"GPU Speed Of Light Throughput","Duration","usecond","1,130.00"
"""


@host
def test_the_ncu_probe_reads_ncus_csv_into_the_printed_rows():
    """The lecture's Nsight Compute cell prints what read_ncu_csv, counters, table and comparisons make of ncu's
    CSV: on a sample, the second launch of each of the probe's kernels and block sizes (CuPy's own left out),
    durations and rates in their units (usecond, msecond, Tbyte/second, Gbyte/second with a thousands separator),
    "n/a" left out, Speed Of Light's "Memory Throughput" (a percentage) kept apart from Memory Workload Analysis'
    (DRAM bytes a second)."""
    probe = _ncu_probe()
    read = probe["read_ncu_csv"](NCU_SAMPLE)
    assert list(read) == [("silu1", 256), ("silu1", 1024), ("gather_rows", 256), ("gather_cols", 256),
                          ("gather_cols_const", 256)]
    cols = probe["counters"](read[("gather_cols", 256)], 256)
    assert cols["µs"] == pytest.approx(452.16) and cols["L2 hit %"] == 87.5 and cols["MemBusy%"] == 95.8
    assert cols["DRAM MiB"] == pytest.approx(1197.8e9 * 452.16e-6 / 2**20)
    by_rows = probe["counters"](read[("gather_rows", 256)], 256)
    assert by_rows["DRAM MiB"] == pytest.approx(2.71e12 * 198.02e-6 / 2**20)  # about 512 MiB: 256 read, 256 written
    assert by_rows["pipes %"] != by_rows["pipes %"]  # NaN: "n/a"
    assert read[("gather_rows", 256)]["memory throughput %"] == 54.3
    assert probe["counters"](read[("silu1", 256)], 256)["blk/SM"] == pytest.approx(46.85 / 8)
    assert read[("gather_cols_const", 256)]["duration"] == pytest.approx(1130e-6)
    lines = probe["table"](read)
    assert len(lines) == 6 and lines[4].split()[:3] == ["gather_cols", "256", "452.2"]
    said = probe["comparisons"](read)
    assert len(said) == 4
    assert "gather_cols 517 MiB, gather_rows 512 MiB: 1.01 times (DRAM throughput x duration: 1.01 times)" in said[0]
    assert said[0].endswith("no-reuse picture predicts 4.5 times, its reuse picture 1.0: nearer the reuse picture")
    assert "memory units 95.8% busy (gather_rows 35.7%)" in said[1] and "L2 hit rate 87.5%" in said[1]
    assert said[1].endswith("nearest its peak: the busiest memory unit (Mem Busy)")
    assert "gather_cols took 0.40 times gather_cols_const's time" in said[2] and "gather_rows_div" not in said[2]
    assert said[3] == ("silu1 at 1024 threads against 256: achieved occupancy 67.3% against 73.2% (an SM held 1.3 "
                       "blocks on average against 5.9); a time that went as 1 / occupancy (bytes in flight as warps) "
                       "would be 1.09 times 256's, and it took 1.20 times: occupancy accounts for part, not all, of "
                       "the rise")
    assert probe["read_ncu_csv"]("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission") == {}


@host
def test_the_ncu_probe_reads_ncus_dram_byte_counters():
    """With `--metrics dram__bytes_read.sum,dram__bytes_write.sum` (the probe's METRICS), `DRAM MiB` is ncu's own count
    of the bytes DRAM read and wrote (units such as `Mbyte`, SI prefixes), not a rate times the duration, and the
    comparisons print silu1's reads and writes against x's and y's size."""
    probe = _ncu_probe()
    head = NCU_SAMPLE.split("\n\"7\"")[0]  # ncu's lines and the CSV header
    row = ('"7","4242","python3.12","127.0.0.1","silu1","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0",'
           '"Command line profiler metrics","{}","{}","{}"')
    text = "\n".join([head, row.format("dram__bytes_read.sum", "Mbyte", "268.44"),
                       row.format("dram__bytes_write.sum", "Gbyte", "0.25"),
                       row.format("Memory Throughput", "Tbyte/second", "2.00"),
                       row.format("Duration", "usecond", "210.00")])
    assert probe["METRICS"] == "dram__bytes_read.sum,dram__bytes_write.sum"
    read = probe["read_ncu_csv"](text)
    row256 = probe["counters"](read[("silu1", 256)], 256)
    assert row256["DRAM MiB"] == pytest.approx((268.44e6 + 0.25e9) / 2**20)  # the counters, not 2e12 x 210e-6
    assert row256["DRAM read MiB"] == pytest.approx(268.44e6 / 2**20)
    (said,) = [line for line in probe["comparisons"](read) if line.startswith("silu1 at 256 threads: DRAM")]
    assert "DRAM read 256.0 MiB and wrote 238.4 MiB" in said and said.endswith("y's 256 MiB written")


@host
def test_the_ncu_probe_reads_the_h200s_own_csv():
    """ncu's CSV as the H200 wrote it (call BX, 2026-12-02, ncu of CUDA 13, the probe's metrics of each launch kept:
    tests/data/ncu09_h200.csv): durations in `ns`, rates in `byte/s` (the first version of the reader knew only
    `usecond` and `byte/second`, and the lecture's first run printed 1,262,752,000,000 µs and NaN MiB)."""
    probe = _ncu_probe()
    read = probe["read_ncu_csv"]((Path(__file__).parent / "data" / "ncu09_h200.csv").read_text())
    assert [key for key in read if key[0] == "silu1"] == [("silu1", t) for t in (32, 64, 128, 256, 512, 1024)]
    silu = probe["counters"](read[("silu1", 32)], 32)
    assert silu["µs"] == pytest.approx(1262.016) and silu["occup. %"] == pytest.approx(9.83)
    rows = probe["counters"](read[("gather_rows", 256)], 256)
    assert rows["µs"] == pytest.approx(196.928)
    assert 480 < rows["DRAM MiB"] < 530  # 494: near 256 MiB read and 256 MiB written
    cols = probe["counters"](read[("gather_cols", 256)], 256)
    assert cols["L2 hit %"] == pytest.approx(87.2) and cols["MemBusy%"] == pytest.approx(95.41)
    said = probe["comparisons"](read)
    assert said[0].endswith("nearer the reuse picture")


@host
def test_the_ncu_probe_runs_itself_under_ncu_or_says_why_not(monkeypatch, tmp_path):
    """`profile`, which the lecture's Nsight Compute cell calls, finds ncu on PATH or beside compute-sanitizer, runs
    the probe under it with the cell's options, and reads its CSV; where it cannot, it says why, and the cell prints
    that after "skipped: ": no ncu, a GPU shared through MPS, ncu's first error line (ERR_NVGPUCTRPERM: no access to
    the counters), its exit status where it printed none, a run past the timeout.  ncu is a stand-in here: a script
    that records its arguments and prints what the test gives it (no GPU, and the probe itself is not run)."""
    import utils

    probe = _ncu_probe()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no ncu on PATH
    monkeypatch.setattr(utils, "compute_sanitizer", lambda: None)
    monkeypatch.setattr(utils.device, "shared_through_mps", lambda: False)
    assert probe["profile"]([]) == ({}, "no ncu on PATH or in the CUDA toolkit's bin/ (ncu comes with the toolkit)")

    toolkit = tmp_path / "cuda" / "bin"  # ncu beside compute-sanitizer, as a CUDA toolkit installs them
    toolkit.mkdir(parents=True)
    (toolkit / "ncu").write_text(f"""#!{sys.executable}
import os, sys, time
from pathlib import Path
here = Path(sys.argv[0]).parent
(here / "argv").write_text("\\n".join(sys.argv[1:]))
time.sleep(float(os.environ.get("NCU_SLEEP", "0")))
sys.stdout.write((here / "out").read_text())
sys.stderr.write((here / "err").read_text())
sys.exit(int((here / "status").read_text()))
""")
    (toolkit / "ncu").chmod(0o755)
    monkeypatch.setattr(utils, "compute_sanitizer", lambda: str(toolkit / "compute-sanitizer"))

    def ncu_prints(out: str, err: str = "", status: int = 0) -> None:
        for name, text in (("out", out), ("err", err), ("status", str(status))):
            (toolkit / name).write_text(text)

    monkeypatch.setattr(utils.device, "shared_through_mps", lambda: True)
    ncu_prints(NCU_SAMPLE)
    read, why = probe["profile"]([])
    assert read == {} and why == "this GPU is shared through MPS (as with compute-sanitizer, ncu is not run there)"
    assert not (toolkit / "argv").exists()  # not run there
    monkeypatch.setattr(utils.device, "shared_through_mps", lambda: False)

    read, _ = probe["profile"](["--csv", "--metrics", probe["METRICS"]])
    assert list(read) == list(probe["read_ncu_csv"](NCU_SAMPLE)) and len(read) == 5
    ran = (toolkit / "argv").read_text().splitlines()
    assert ran[:4] == ["--csv", "--metrics", probe["METRICS"], sys.executable] and ran[4] == "-c"
    assert "def read_ncu_csv(" in "\n".join(ran[5:])  # the probe's own text, run as a program

    ncu_prints("done\n", "==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n", 1)
    assert probe["profile"]([]) == ({}, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    ncu_prints("done\n", status=3)
    assert probe["profile"]([]) == ({}, "ncu exited with status 3 and printed no counters")
    monkeypatch.setenv("NCU_SLEEP", "5")
    assert probe["profile"]([], timeout=0.5) == ({}, "ncu took more than 0.5 s")
