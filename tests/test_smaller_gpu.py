"""tools.smaller_gpu: a command run as on a smaller GPU, through NVIDIA MPS."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, gpu
from tools import smaller_gpu


def test_the_command_runs_behind_taskset_with_the_mps_limits(tmp_path):
    args = smaller_gpu.parse(["--sm-percent", "30", "--memory", "15G", "--", "python", "-m", "pytest", "-x"])
    command, env = smaller_gpu.command_env(args, tmp_path / "pipe", tmp_path / "log")
    assert command == ["taskset", "-c", "0,1", "python", "-m", "pytest", "-x"]
    assert env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "30"
    assert env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=15G"
    assert env["CUDA_MPS_PIPE_DIRECTORY"] == str(tmp_path / "pipe")
    assert env["CUDA_DEVICE_MAX_CONNECTIONS"] == "8"  # CUDA's default, which an MPS client lacks


@pytest.mark.parametrize("visible, client", [("", None), ("1", "0"), ("2,3", "0,1"), ("GPU-4f2a", "0")])
def test_the_client_gets_the_servers_numbering_of_the_visible_gpus(tmp_path, monkeypatch, visible, client):
    # NVIDIA's MPS guide: the server renumbers the devices it was started with; a client that keeps the
    # daemon's CUDA_VISIBLE_DEVICES=1 sees no GPU (measured on a host of two H200s, 2026-11-29)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    _, env = smaller_gpu.command_env(smaller_gpu.parse(["--", "true"]), tmp_path / "pipe", tmp_path / "log")
    assert env.get("CUDA_VISIBLE_DEVICES", None) == (client if client is not None else visible)


def test_a_client_that_sees_no_gpu_stops_the_run(monkeypatch, capsys):
    # without a GPU a notebook's GPU cells skip and pass: the tool refuses to run the command instead
    monkeypatch.setattr(smaller_gpu.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(smaller_gpu.sys, "platform", "linux")
    ran = []
    monkeypatch.setattr(smaller_gpu.subprocess, "run",
                        lambda command, **kw: ran.append(command) or subprocess.CompletedProcess(command, 0))
    monkeypatch.setattr(smaller_gpu, "sees_a_gpu", lambda env: False)
    assert smaller_gpu.main(["--", "python", "-m", "pytest"]) == 3
    assert "sees no GPU" in capsys.readouterr().err
    assert ["taskset", "-c", "0,1", "python", "-m", "pytest"] not in ran  # the command never ran
    assert any(command[:1] == ["nvidia-cuda-mps-control"] for command in ran)  # and the daemon was stopped


def test_the_probe_reads_the_driver_and_fails_without_one():
    done = subprocess.run([sys.executable, "-c", smaller_gpu.PROBE], capture_output=True, text=True, check=False)
    assert done.returncode != 0 or int(done.stdout) > 0  # a CPU machine: no libcuda or no device, so no GPU


@pytest.mark.parametrize("argv, complaint", [
    ([], "give the command"),
    (["--"], "give the command"),
    (["--sm-percent", "0", "--", "true"], "between 1 and 100"),
])
def test_bad_arguments_are_refused(argv, complaint, capsys):
    with pytest.raises(SystemExit):
        smaller_gpu.parse(argv)
    assert complaint in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is not None, reason="this machine has MPS")
def test_without_mps_it_says_what_is_missing():
    done = subprocess.run([sys.executable, "-m", "tools.smaller_gpu", "--", "true"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "needs Linux with nvidia-cuda-mps-control" in done.stderr


@gpu
@pytest.mark.skipif("CUDA_MPS_PIPE_DIRECTORY" in os.environ, reason="already running under MPS")
@pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is None or os.geteuid() != 0,
                    reason="needs nvidia-cuda-mps-control and root")
def test_under_mps_the_gpu_has_fewer_sms_and_less_memory():
    probe = ("import torch; from utils.device import shared_through_mps; print(shared_through_mps())\n"
             "p = torch.cuda.get_device_properties(0); print(p.multi_processor_count)\n"
             "try:\n    torch.empty(20 * 2**30, dtype=torch.uint8, device='cuda'); print('allocated')\n"
             "except torch.cuda.OutOfMemoryError:\n    print('out of memory')")
    import torch

    from utils.device import shared_through_mps

    assert shared_through_mps() is False  # the driver knows, and this process is not an MPS client
    full = torch.cuda.get_device_properties(0).multi_processor_count
    done = subprocess.run([sys.executable, "-m", "tools.smaller_gpu", "--", sys.executable, "-c", probe],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    mps, sms, allocation = done.stdout.strip().splitlines()[-3:]
    assert mps == "True"  # what utils.sanitizer_status reads to skip compute-sanitizer under MPS
    assert int(sms) < 0.5 * full  # 30% of the SMs
    assert allocation == "out of memory"  # 20 GiB is over the 15G limit
    assert "MPS stopped" in done.stderr
