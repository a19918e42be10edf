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
