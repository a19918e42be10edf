"""utils.memory, utils.device and the %%requires cell line."""

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell

import utils
from conftest import cpu_only, gpu
from utils import cells
from utils.device import Availability


@pytest.mark.parametrize("n, text", [
    (512, "512 B"), (1536, "1.50 KiB"), (32 * 2**20, "32.0 MiB"), (1.25 * 2**30, "1.25 GiB"), (3 * 2**40, "3.00 TiB"),
])
def test_format_bytes(n, text):
    assert utils.format_bytes(n) == text


def test_status_reasons_are_one_line():
    for status in (utils.cuda_status(), utils.cupy_status()):
        assert status.reason and "\n" not in status.reason


def test_environment_lists_the_software():
    env = utils.environment()
    assert env["torch"] == torch.__version__ and env["cpu_count"] >= 1
    assert (env["gpu"] is None) == (not utils.has_cuda())


@cpu_only
def test_without_gpu():
    assert utils.default_device() == torch.device("cpu")
    for call in (utils.memory_state, utils.gpu_budget, lambda: utils.peak_memory().__enter__()):
        with pytest.raises(utils.GPUUnavailableError, match="needs a CUDA GPU: "):
            call()


@gpu
def test_peak_memory_of_a_block():
    keep = torch.empty(2**20, device="cuda")  # live before the block: not counted
    with utils.peak_memory(verbose=False) as peak:
        tmp = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")
        del tmp
    assert peak.extra == 64 * 2**20
    assert utils.memory_state().allocated >= keep.numel() * 4


@gpu
def test_gpu_budget_is_within_the_course_limit():
    assert 0 < utils.gpu_budget() <= 12 * 2**30


# ---------------------------------------------------------------- %%requires
def test_transform_leaves_other_cells_alone():
    assert cells.transform(["x = 1\n"]) == ["x = 1\n"]


def test_transform_keeps_line_numbers_when_met(monkeypatch):
    monkeypatch.setitem(cells._CHECKS, "cuda", lambda: Availability(True, "yes"))
    assert cells.transform(["%%requires cuda\n", "x = 1\n"]) == ["# %%requires cuda\n", "x = 1\n"]
    assert cells.transform(["%%requires cuda  # GPU only\n", "x = 1\n"])[1:] == ["x = 1\n"]


def test_transform_replaces_the_cell_when_unmet(monkeypatch):
    monkeypatch.setitem(cells._CHECKS, "cupy", lambda: Availability(False, "no GPU here"))
    rewritten = cells.transform(["%%requires cuda cupy\n", "x = 1\n"])
    # The first line prints the reason; what follows (if anything: the reference outputs' display)
    # is not the cell's own code, which must not run.
    assert rewritten[0].startswith((  # then, without a GPU, what to do about it
        "print('skipped (needs cupy): no GPU here",
        "print('skipped (needs cuda): " + utils.cuda_status().reason,
    )) and rewritten[0].endswith("')\n")
    assert not any("x = 1" in line for line in rewritten)


def test_requires_triton_names_the_requirements_file_not_a_gpu(monkeypatch):
    """`%%requires triton` runs on a CPU too (Triton's interpreter): where Triton is missing, the skip line says
    how to install it, and no GPU hint follows; where it is importable, the cell runs, GPU or not."""
    import sys

    utils.triton_status.cache_clear()
    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` raises ImportError
    try:
        reason = cells.missing(["triton"])
        assert reason is not None and reason.startswith("skipped (needs triton): Triton is not importable")
        assert "requirements-triton.txt" in reason and "Change runtime type" not in reason
    finally:
        utils.triton_status.cache_clear()
    monkeypatch.setitem(cells._CHECKS, "triton", lambda: Availability(True, "yes"))
    assert cells.transform(["%%requires triton\n", "x = 1\n"]) == ["# %%requires triton\n", "x = 1\n"]


def test_unknown_requirement_fails_on_every_machine():
    with pytest.raises(ValueError, match="unknown requirement 'cupyy'"):
        cells.missing(["cuda", "cupyy"])  # even where the missing cuda would skip the cell


@cpu_only
def test_requires_in_a_real_ipython_shell(capfd):
    shell = InteractiveShell.instance()
    cells.register()
    cells.register()  # idempotent
    assert shell.input_transformers_cleanup.count(cells.transform) == 1
    shell.run_cell("%%requires cuda\nnever_defined = 1\n")
    assert "never_defined" not in shell.user_ns
    assert "skipped (needs cuda): " in capfd.readouterr().out
    result = shell.run_cell("defined = 1\n")
    assert result.success and shell.user_ns["defined"] == 1


def test_a_met_requirement_keeps_tracebacks_on_the_right_line(monkeypatch, capfd):
    monkeypatch.setitem(cells._CHECKS, "cuda", lambda: Availability(True, "yes"))
    shell = InteractiveShell.instance()
    cells.register()
    result = shell.run_cell("%%requires cuda\nok = 1\n1 / 0\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError) and shell.user_ns["ok"] == 1
    assert result.error_in_exec.__traceback__.tb_next.tb_lineno == 3
