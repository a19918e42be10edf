"""Run a command as on a smaller GPU: a share of the SMs, a memory limit, two host cores.

    python -m tools.smaller_gpu -- python -m pytest
    python -m tools.smaller_gpu --sm-percent 30 --memory 15G --cores 0,1 -- python -m tools.reference check

Most students have a Colab T4 (40 SMs, 15 GB, two slow host cores), not the course's reference
GPU.  This runs any command on a big NVIDIA GPU as if it were smaller, through NVIDIA's
Multi-Process Service (MPS): it starts an MPS control daemon of its own, runs the command with

- CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: the share of the SMs a process may use (30% of an H100's 132
  SMs: PyTorch then reports 38, a T4 has 40);
- CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: the device memory a process may allocate (15 GiB: a larger
  allocation fails with out-of-memory, as on a T4);
- `taskset`: the host cores the command may run on (two, as on Colab);
- CUDA_DEVICE_MAX_CONNECTIONS=8 (unless already set): CUDA's default number of hardware queues per
  process, which a T4's process has.  An MPS client gets fewer by default, so streams beyond them
  share queues and wait for each other (measured on the H200, notebook 03 section 9.6: 16 streams
  queued depth-first took 49.8 ms as an MPS client against 14.0 ms without MPS, and 98 ms with
  one queue): an artefact of MPS, not of a smaller GPU;

and stops the daemon afterwards, whatever the command did.  Two traps it guards against:

- CUDA_VISIBLE_DEVICES set (one GPU of several): the MPS server renumbers the devices it was started
  with, so a client that keeps the variable asks for a device the server does not have and sees no GPU
  ("Appendix: Environment Variables" of NVIDIA's MPS guide).  The daemon keeps it; the command gets the
  server's numbering, 0 to n-1.
- A client that sees no GPU at all: then every GPU cell of a notebook skips and the run passes, having
  tested nothing (measured 2026-11-29 on a host of two H200s, CUDA_VISIBLE_DEVICES=1: 243 cells "passed" in
  43 s).  A probe through the driver (libcuda's cuDeviceGetCount, as a client of this server) runs first,
  and without a GPU the tool stops with exit status 3 instead of running the command.  What it does NOT imitate: a T4's
memory bandwidth (320 GB/s against the H100's 3.35 TB/s), its PCIe 3 link, its clock, and its
missing TF32 and fast bf16 (compute capability 7.5): claims that depend on those are conditioned on
the compute capability in the notebooks, or on quantities the same run measures.

Needs Linux, an NVIDIA driver with `nvidia-cuda-mps-control` on PATH, and the rights to start MPS
(root on a shared machine; a GPU in the "Default" or "Exclusive process" compute mode).  Why by
hand: MPS is configured through a daemon and environment variables, and no Python package wraps
starting and always stopping it around one command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.smaller_gpu", description=__doc__.splitlines()[0])
    parser.add_argument("--sm-percent", type=int, default=30, help="share of the SMs, in percent (default 30)")
    parser.add_argument("--memory", default="15G", help="device memory limit, as MPS writes it (default 15G)")
    parser.add_argument("--cores", default="0,1", help="host cores for taskset (default 0,1)")
    parser.add_argument("--device", default="0", help="the GPU's index that the memory limit applies to")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("give the command to run after --")
    if not 1 <= args.sm_percent <= 100:
        parser.error("--sm-percent is between 1 and 100")
    return args


def command_env(args: argparse.Namespace, pipe: Path, log: Path) -> tuple[list[str], dict[str, str]]:
    """The command line (behind taskset) and the environment it runs with under MPS."""
    env = dict(os.environ)
    env.update(
        CUDA_MPS_PIPE_DIRECTORY=str(pipe),
        CUDA_MPS_LOG_DIRECTORY=str(log),
        CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(args.sm_percent),
        CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=f"{args.device}={args.memory}",
    )
    env.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "8")  # a T4 process's default; MPS clients get fewer
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if visible:  # the server's numbering: what the daemon was started with becomes 0..n-1 for its clients
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(len(visible)))
    return ["taskset", "-c", args.cores, *args.command], env


# How many GPUs a client of the server sees, through the driver alone (no PyTorch needed): exit status 0 if
# one or more, 1 if none or the driver failed.
PROBE = ("import ctypes, sys\n"
         "cuda = ctypes.CDLL('libcuda.so.1'); count = ctypes.c_int(0)\n"
         "ok = cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0\n"
         "print(count.value if ok else 0); sys.exit(0 if ok and count.value > 0 else 1)")


def sees_a_gpu(env: dict[str, str]) -> bool:
    """Whether a process started with env (an MPS client of the running server) sees a GPU."""
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    return done.returncode == 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    missing = [tool for tool in ("nvidia-cuda-mps-control", "taskset") if shutil.which(tool) is None]
    if sys.platform != "linux" or missing:
        print(f"tools.smaller_gpu needs Linux with {' and '.join(missing) or 'MPS'} on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mps-") as folder:
        pipe, log = Path(folder, "pipe"), Path(folder, "log")
        pipe.mkdir()
        log.mkdir()
        command, env = command_env(args, pipe, log)
        daemon_env = {**os.environ, "CUDA_MPS_PIPE_DIRECTORY": str(pipe), "CUDA_MPS_LOG_DIRECTORY": str(log)}
        subprocess.run(["nvidia-cuda-mps-control", "-d"], env=daemon_env, check=True)
        print(f"MPS started: {args.sm_percent}% of the SMs, {args.memory} of device memory, cores {args.cores}",
              file=sys.stderr, flush=True)
        try:
            if not sees_a_gpu(env):
                print("tools.smaller_gpu: a client of this MPS server sees no GPU (CUDA_VISIBLE_DEVICES="
                      f"{os.environ.get('CUDA_VISIBLE_DEVICES', '')!r}); not running the command, whose GPU parts "
                      "would skip and pass", file=sys.stderr, flush=True)
                return 3
            return subprocess.run(command, env=env, check=False).returncode
        finally:
            subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True, env=daemon_env, check=False)
            time.sleep(1)  # the daemon exits asynchronously; its log says so
            print("MPS stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
