"""Which device the course runs on, and why a GPU part can or cannot run.

Every notebook asks the same three questions: is there a CUDA GPU that PyTorch can use, can CuPy
use it too, and what exactly is this machine?  Each answer is computed on first use and then kept,
and each "no" carries a one-line reason so that a skipped cell can say *why* it was skipped.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache

import torch


class GPUUnavailableError(RuntimeError):
    """Raised when code asks for a GPU (PyTorch's or CuPy's) that this machine cannot provide."""


@dataclass(frozen=True)
class Availability:
    """Whether a backend is usable, and if not, why (one line, meant for people)."""

    ok: bool
    reason: str

    def __bool__(self) -> bool:
        return self.ok


@cache
def cuda_status() -> Availability:
    """Can PyTorch use a CUDA GPU here?"""
    if torch.version.cuda is None:
        return Availability(False, f"PyTorch {torch.__version__} is a CPU-only build")
    if not torch.cuda.is_available():
        hint = "; on Colab: Runtime > Change runtime type > T4 GPU" if on_colab() else ""
        return Availability(False, f"PyTorch has CUDA support but finds no usable NVIDIA GPU or driver{hint}")
    return Availability(True, f"CUDA GPU: {torch.cuda.get_device_name()}")


@cache
def cupy_status() -> Availability:
    """Can CuPy use a CUDA GPU here?  CuPy imports without a GPU, but every array operation fails."""
    try:
        import cupy
    except ImportError as err:  # not installed, or its CUDA libraries are missing
        return Availability(False, f"CuPy is not importable ({err})")
    try:
        if not cupy.cuda.is_available():
            return Availability(False, f"CuPy {cupy.__version__} finds no usable NVIDIA GPU or driver")
        cupy.arange(1).sum().item()  # a real round trip: a kernel compile and a launch
    except Exception as err:  # noqa: BLE001 -- CUDARuntimeError, CompileException, missing NVRTC...: all mean "no"
        first_line = (str(err).strip().splitlines() or [""])[0][:120]
        return Availability(False, f"CuPy {cupy.__version__} cannot run on this GPU "
                                   f"({type(err).__name__}: {first_line})")
    return Availability(True, f"CuPy {cupy.__version__} runs on the GPU")


TRITON_REQUIREMENTS = "requirements-triton.txt"  # the course's optional pin of Triton (about 1 GB installed)


@cache
def triton_status() -> Availability:
    """Can Triton run kernels here?  On a CUDA GPU it compiles them; without one its interpreter
    (TRITON_INTERPRET=1, set before `@triton.jit`) runs them on CPU tensors, slowly."""
    try:
        import triton
        import triton.language  # the kernels' language: importable too, or Triton is broken
    except ImportError as err:  # not installed (Windows has no wheel), or a broken install
        return Availability(False, f"Triton is not importable ({err}): pip install -r {TRITON_REQUIREMENTS} "
                                   "(about 1 GB; without a GPU its interpreter runs the kernels on the CPU)")
    where = "compiles for the GPU" if has_cuda() else "runs on the CPU through its interpreter (TRITON_INTERPRET=1)"
    return Availability(True, f"Triton {triton.__version__} {where}")


def compute_sanitizer() -> str | None:
    """The path of NVIDIA's compute-sanitizer, or None: on PATH, else in a CUDA toolkit's bin/
    ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-X.Y, newest first; Colab has one
    in /usr/local/cuda/bin, which is not on its PATH)."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda",
             *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    for root in filter(None, roots):
        candidate = os.path.join(root, "bin", "compute-sanitizer")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def shared_through_mps() -> bool | None:
    """Are CUDA contexts on the current GPU shared through NVIDIA's Multi-Process Service (MPS)?
    None when the driver cannot say (no libcuda, or a driver too old to know the attribute).

    Why ctypes: the driver answers this as a device attribute (CU_DEVICE_ATTRIBUTE_MPS_ENABLED,
    number 133), and neither PyTorch nor CuPy's own API has a name for it.  cuInit is harmless in a
    process that already uses CUDA; it only loads the driver where nothing has yet.
    """
    try:
        driver = ctypes.CDLL("libcuda.so.1" if sys.platform != "win32" else "nvcuda.dll")
    except OSError:
        return None
    device, value = ctypes.c_int(), ctypes.c_int()
    ordinal = torch.cuda.current_device() if has_cuda() else 0
    if (driver.cuInit(0) != 0 or driver.cuDeviceGet(ctypes.byref(device), ordinal) != 0
            or driver.cuDeviceGetAttribute(ctypes.byref(value), 133, device) != 0):
        return None
    return bool(value.value)


# What the check below runs under the tool: one allocation, one kernel, one copy back.
_SANITIZER_PROBE = "import torch; assert torch.ones(4, device='cuda').sum().item() == 4"


@cache
def sanitizer_status() -> Availability:
    """Can compute-sanitizer check CUDA programs here?  Found is not enough: some machines (some
    virtualized or shared GPUs) refuse it ("Device not supported"), so this runs a tiny PyTorch
    program under its memcheck tool once (a few seconds) and requires a clean report."""
    if not has_cuda():
        return Availability(False, cuda_status().reason)
    if shared_through_mps():
        return Availability(False, "this GPU is shared through NVIDIA MPS, where processes checked by "
                                   "compute-sanitizer broke the MPS server for every process on the GPU "
                                   "(seen in the course's run under tools/smaller_gpu.py)")
    path = compute_sanitizer()
    if path is None:
        return Availability(False, "compute-sanitizer is not on PATH nor in a CUDA toolkit's bin/ "
                                   "(it comes with the CUDA toolkit; Colab has one)")
    try:
        done = subprocess.run([path, "--tool", "memcheck", "--error-exitcode", "99",
                               sys.executable, "-c", _SANITIZER_PROBE],
                              capture_output=True, text=True, timeout=180, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return Availability(False, f"{path} did not run ({type(err).__name__}: {err})")
    if done.returncode != 0 or "ERROR SUMMARY: 0 errors" not in done.stdout:
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        first = next((line for line in lines if "rror" in line), lines[0] if lines else "no output")
        return Availability(False, f"compute-sanitizer cannot check programs on this GPU "
                                   f"(exit status {done.returncode}: {first.strip()[:120]})")
    return Availability(True, f"compute-sanitizer at {path}")


def has_cuda() -> bool:
    """True when PyTorch can run on a CUDA GPU."""
    return cuda_status().ok


def has_cupy() -> bool:
    """True when CuPy can run on a CUDA GPU."""
    return cupy_status().ok


def require_cuda(what: str = "this code") -> None:
    """Raise a one-line GPUUnavailableError unless PyTorch can use a CUDA GPU."""
    if not has_cuda():
        raise GPUUnavailableError(f"{what} needs a CUDA GPU: {cuda_status().reason}")


def require_cupy(what: str = "this code") -> None:
    """Raise a one-line GPUUnavailableError unless CuPy can use a CUDA GPU."""
    if not has_cupy():
        raise GPUUnavailableError(f"{what} needs CuPy on a CUDA GPU: {cupy_status().reason}")


def default_device() -> torch.device:
    """The device the course's examples use: the current CUDA GPU if there is one, else the CPU."""
    return torch.device("cuda") if has_cuda() else torch.device("cpu")


def on_colab() -> bool:
    """True inside Google Colab."""
    return "COLAB_RELEASE_TAG" in os.environ or "google.colab" in sys.modules


def _driver_version() -> str | None:
    """The NVIDIA driver's version, read from nvidia-smi (PyTorch does not expose it)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except Exception:  # noqa: BLE001 -- not installed, or broken: either way there is no version to report
        return None


def environment() -> dict[str, object]:
    """Everything a reader needs to interpret a measurement: the GPU, the software, the CPU.

    GPU fields are None on a machine without a usable GPU.
    """
    info: dict[str, object] = {
        "gpu": None, "compute_capability": None, "sms": None, "gpu_memory_gib": None,
        "l2_cache_mib": None, "driver": _driver_version(), "cuda_runtime": torch.version.cuda,
        "torch": torch.__version__, "cupy": _version("cupy"), "triton": _version("triton"),
        "numpy": _version("numpy"), "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "colab": on_colab(),
    }
    if has_cuda():
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        info.update(
            gpu=p.name,
            compute_capability=f"{p.major}.{p.minor}",
            sms=p.multi_processor_count,
            gpu_memory_gib=round(p.total_memory / 2**30, 1),
            l2_cache_mib=round(p.L2_cache_size / 2**20, 1),
        )
    return info


def print_environment() -> None:
    """Print environment() as an aligned two-column table, with the status lines first."""
    print(f"CUDA (PyTorch): {'yes' if has_cuda() else 'no'} -- {cuda_status().reason}")
    print(f"CUDA (CuPy):    {'yes' if has_cupy() else 'no'} -- {cupy_status().reason}")
    for key, value in environment().items():
        print(f"  {key:<20} {'-' if value is None else value}")
