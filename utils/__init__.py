"""The course's shared helpers: every notebook does `import utils` (see notebook 00).

- `utils.device`:   is there a GPU (for PyTorch, for CuPy), and if not, why; the environment;
                    `compute_sanitizer`: where NVIDIA's memory and race checker is, if anywhere.
- `utils.timing`:   `benchmark`, `timer`, `compare`, `as_timing`: timing that is right on a CPU and a GPU;
                    `gpu_sleep`, `cupy_sleep`: a GPU kernel of known duration (PyTorch, CuPy).
- `utils.memory`:   `memory_state`, `peak_memory`, `memory_timeline`: the allocator's numbers.
- `utils.formatting`: `format_time`, `format_bytes`: measured numbers as the course prints them.
- `utils.plotting`: `plot_timings`, `plot_memory`, `plot_timeline`, `StreamTimeline`: the course's plots.
- `utils.claims`:   `claim`: a statement about GPU behaviour, checked where it is measured (✓ or ✗).
- `utils.processes`: `run_python`, `run_process`: code in a fresh Python process (settings read at
                    start-up, one-time costs, errors that would kill the notebook's kernel);
                    `start_process`, `start_python`: the same in the background (a Future);
                    `run_in_turn`: processes that import side by side, then measure one at a time;
                    `script`: the text of a script kept in notebooks/scripts/.
- `utils.cells`:    the `%%requires cuda` line (or `cupy`, `compute-sanitizer`, `triton`) that skips a GPU-only
                    cell on a machine without one, and shows what that cell produced in the
                    course's reference run instead.
- `utils.exercises`: `exercise`, the pass/fail helper of the exercise notebooks, and their checks.
"""

from . import claims
from .cells import register as _register_cells
from .claims import ClaimFailed, claim
from .device import (
    GPUUnavailableError,
    compute_sanitizer,
    cuda_status,
    cupy_status,
    default_device,
    environment,
    has_cuda,
    has_cupy,
    print_environment,
    require_cuda,
    require_cupy,
    sanitizer_status,
    triton_status,
)
from .formatting import format_bytes, format_time
from .memory import MemoryState, gpu_budget, memory_state, memory_timeline, peak_memory
from .plotting import (
    Interval,
    StreamTimeline,
    intervals_from_chrome_trace,
    intervals_from_profiler,
    plot_memory,
    plot_timeline,
    plot_timings,
    use_course_style,
)
from .processes import ChildFailed, Finished, run_in_turn, run_process, run_python, script, start_process, start_python
from .timing import (
    BenchmarkError,
    Timing,
    as_timing,
    benchmark,
    check_overlap,
    compare,
    cupy_sleep,
    gpu_sleep,
    timer,
)

__all__ = [
    "BenchmarkError",
    "ChildFailed",
    "ClaimFailed",
    "Finished",
    "GPUUnavailableError",
    "Interval",
    "MemoryState",
    "StreamTimeline",
    "Timing",
    "as_timing",
    "benchmark",
    "check_overlap",
    "claim",
    "claims",
    "compare",
    "compute_sanitizer",
    "cuda_status",
    "cupy_sleep",
    "cupy_status",
    "default_device",
    "environment",
    "format_bytes",
    "format_time",
    "gpu_budget",
    "gpu_sleep",
    "has_cuda",
    "has_cupy",
    "intervals_from_chrome_trace",
    "intervals_from_profiler",
    "memory_state",
    "memory_timeline",
    "peak_memory",
    "plot_memory",
    "plot_timeline",
    "plot_timings",
    "print_environment",
    "require_cuda",
    "require_cupy",
    "run_in_turn",
    "run_process",
    "run_python",
    "sanitizer_status",
    "script",
    "start_process",
    "start_python",
    "timer",
    "triton_status",
    "use_course_style",
]

use_course_style()
_register_cells()
