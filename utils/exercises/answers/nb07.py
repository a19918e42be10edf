"""Wrong answers, and other right ones, to the exercises of notebook 07 (CUDA graphs), for the
tests: SPOILERS.

Exercise 1 is checked on the CPU.  The other three need a GPU; each wrong answer below gives a
wrong (stale, raced or overwritten) result, captures the wrong number of graphs, replays the wrong
one, does not replay at all, or makes the host wait, on every run.  Without a GPU those three check
nothing and say what a GPU would check (WRONG_ON_CPU: no answer fails there).
"""

from __future__ import annotations

import bisect
import copy
import fractions
import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from .. import nb07
from ..settings import SETTINGS


# ---------------------------------------------------------------- exercise 1: predicted_speedup (CPU)
def _speedup(eager_per_kernel: Callable[[float, float], float], graph_call: Callable[[float, float], float],
             graph_per_kernel: Callable[[float, float, float], float] = lambda kernel, floor, host: max(kernel, floor),
             inverted: bool = False) -> Callable[..., float]:
    """A predicted_speedup built from (possibly wrong) rules."""
    def predicted_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us):
        eager = kernels * eager_per_kernel(host_us, kernel_us)
        graph = graph_call(replay_us, kernels * graph_per_kernel(kernel_us, graph_floor_us, host_us))
        return graph / eager if inverted else eager / graph
    return predicted_speedup


def _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    return kernels * max(host_us, kernel_us) / max(replay_us, kernels * max(kernel_us, graph_floor_us))


def _one_call_alone(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """One call on an idle machine, not calls back to back: the last launch's kernel still has to run."""
    eager = kernels * max(host_us, kernel_us) + min(host_us, kernel_us)
    graph = replay_us + kernels * max(kernel_us, graph_floor_us)
    return eager / graph


def _in_float32(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right, in NumPy float32 throughout (a few roundings of 6e-8 each)."""
    k, h, g, f, r = (np.float32(v) for v in (kernels, host_us, kernel_us, graph_floor_us, replay_us))
    return k * np.maximum(h, g) / np.maximum(r, k * np.maximum(g, f))


def _float64_left(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    torch.set_default_dtype(torch.float64)  # "for precision", never set back
    k, h, g, f, r = (torch.tensor(float(v)) for v in (kernels, host_us, kernel_us, graph_floor_us, replay_us))
    return k * torch.maximum(h, g) / torch.maximum(r, k * torch.maximum(g, f))


def _grad_off_left(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    torch.set_grad_enabled(False)  # "no autograd needed here", never set back
    return _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)


def _left_changed(change: Callable[[], object]) -> Callable[..., float]:
    """The right number, after `change()`: a process-wide setting switched and never put back."""
    def predicted_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us):
        change()
        return _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)
    return predicted_speedup


def _tf32_flags_on() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True  # the older spelling, from forum answers
    torch.backends.cudnn.allow_tf32 = True


def _fp16_reductions_off() -> None:
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False  # "exact sums", for the whole process


def _seeded_each_call() -> None:
    np.random.seed(0)  # "reproducible", every call


def _float64_put_back(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right: float64 tensors "for precision", the default dtype set for the computation and put back."""
    was = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        k, h, g, f, r = (torch.tensor(float(v)) for v in (kernels, host_us, kernel_us, graph_floor_us, replay_us))
        return k * torch.maximum(h, g) / torch.maximum(r, k * torch.maximum(g, f))
    finally:
        torch.set_default_dtype(was)


def _with_float32_precision(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right: in float32 tensors under no_grad, TF32 switched off for the block and put back (a `with` block each)."""
    with torch.no_grad(), torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        t = torch.tensor([host_us, kernel_us, graph_floor_us, replay_us], dtype=torch.float64)
        h, g, f, r = t
        return kernels * torch.maximum(h, g) / torch.maximum(r, kernels * torch.maximum(g, f))


# Round 26's adversary of 07: the right number, and what it returns, keeps or leaves set was wrong
_STATIC_RESULT = torch.zeros((), dtype=torch.float64)


def _static_result_tensor(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """One 0-d tensor for every result, filled in place and returned itself (a CUDA graph's static output, in the
    wrong place): `a = f(*one); b = f(*other)` leaves a == b."""
    _STATIC_RESULT.fill_(_right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us))
    return _STATIC_RESULT


_STATIC_ARRAY = np.zeros(1)


def _static_result_array(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """The same in NumPy: np.divide(..., out=) into one array of shape (1,), returned itself."""
    eager = np.multiply(kernels, np.maximum(host_us, kernel_us))
    graph = np.maximum(replay_us, np.multiply(kernels, np.maximum(kernel_us, graph_floor_us)))
    return np.divide(eager, graph, out=_STATIC_ARRAY)


def _user_warnings_ignored() -> None:
    __import__("warnings").filterwarnings("ignore", category=UserWarning)  # "hide torch.tensor(tensor)'s warning"


def _runtime_warnings_raise() -> None:
    __import__("warnings").simplefilter("error", RuntimeWarning)  # "catch divisions by zero"


def _every_warning_ignored_by_message() -> None:
    __import__("warnings").filterwarnings("ignore", message=".*")  # a forum recipe: every warning silenced


def _environ(name: str, value: str) -> Callable[[], None]:
    def change() -> None:
        __import__("os").environ[name] = value
    return change


def _chdir_to_a_log_folder() -> None:
    import os
    import tempfile

    os.chdir(tempfile.mkdtemp(prefix="speedups-"))  # a new folder each call (under /tmp, where a clone may be too)


def _mkldnn_off() -> None:
    torch.backends.mkldnn.enabled = False  # type: ignore[assignment]  # "exact CPU arithmetic"


def _torch_logger_silenced() -> None:
    __import__("logging").getLogger("torch").setLevel(__import__("logging").ERROR)


def _cpu_autocast_on() -> None:
    torch.set_autocast_dtype("cpu", torch.bfloat16)
    torch.set_autocast_enabled("cpu", True)  # "mixed precision, for speed"


def _inductor_options_set() -> None:
    import torch._inductor.config as inductor

    inductor.fallback_random = True
    inductor.freezing = True  # "for inference"


_MEMO: dict[str, float] = {}


def _memo_by_rounded_key(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Memoized "because floats make bad keys" under times written with 4 significant digits: two cases whose times
    agree to 4 digits share one result."""
    key = f"{kernels}|" + "|".join(f"{t:.4g}" for t in (host_us, kernel_us, graph_floor_us, replay_us))
    if key not in _MEMO:
        _MEMO[key] = _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)
    return _MEMO[key]


_CALLS = [0]


def _replay_dropped_after_a_warmup(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """The model for 150 calls, then the per-kernel ratio alone ("long sweeps are of long chains")."""
    _CALLS[0] += 1
    if _CALLS[0] <= 150:
        return _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)
    return max(host_us, kernel_us) / max(kernel_us, graph_floor_us)


_COMPILED: list[Callable[..., torch.Tensor]] = []


def _torch_compiled(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right: the model of one float64 tensor, torch.compile'd (Inductor) on the first call, its cache off so that
    each run compiles as a student's first run does (Inductor's compile_fx raises the recursion limit to 2000: round
    26's adversary, FAILed with the cache cold).  Not in ALSO_RIGHT_SPEEDUPS (a cold compile costs about 20 s here):
    run by hand, it PASSes."""
    if not _COMPILED:
        import torch._inductor.config as inductor

        def model(t):
            k, h, g, f, r = t.unbind()
            return k * torch.maximum(h, g) / torch.maximum(r, k * torch.maximum(g, f))

        compiled = torch.compile(model, dynamic=False)

        def cold(t):
            with inductor.patch(force_disable_caches=True):
                return compiled(t)
        _COMPILED.append(cold)
    t = torch.tensor([kernels, host_us, kernel_us, graph_floor_us, replay_us], dtype=torch.float64)
    return _COMPILED[0](t)


def _random_phase_simulation(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right: the steady period simulated from a random phase drawn from Python's `random`, never seeded (the result
    does not depend on the phase)."""
    import random

    phase = random.random() * max(host_us, kernel_us)
    eager = (phase + kernels * max(host_us, kernel_us)) - phase
    graph = (phase + max(replay_us, kernels * max(kernel_us, graph_floor_us))) - phase
    return eager / graph


# Round 32's adversary of 07: a process-wide state that settings.py did not read, changed and left (mpmath's context,
# the compiler's stance, sys.displayhook, the collector's debug flags, a warnings filter narrowed to one message,
# threading.excepthook, the process's CPU affinity); a ring of results that outlasted the check's calls; a simulation
# cut at the longest chain the check drew
def _mpmath_precision_left(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: "exact" arithmetic with mpmath, its global precision raised to 50 digits, left."""
    import mpmath  # type: ignore[import-untyped]

    mpmath.mp.dps = 50  # "exact enough", for the whole process
    k, h, g, f, r = (mpmath.mpf(v) for v in (kernels, host_us, kernel_us, graph_floor_us, replay_us))
    return k * max(h, g) / max(r, k * max(g, f))


def _mpmath_precision_lowered() -> None:
    __import__("mpmath").mp.prec = 30  # "for speed"; the value itself is computed in floats


def _compile_stance_left(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: torch.compiler.set_stance("force_eager") "so that the check's many calls do not each
    compile", never set back: every later torch.compile of the process runs eagerly (no CUDA graphs either)."""
    torch.compiler.set_stance("force_eager")

    @torch.compile(dynamic=False)
    def model(t):
        k, h, g, f, r = t.unbind()
        return k * torch.maximum(h, g) / torch.maximum(r, k * torch.maximum(g, f))

    return model(torch.tensor([kernels, host_us, kernel_us, graph_floor_us, replay_us], dtype=torch.float64))


def _sympy_printing_left(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: the model derived with SymPy, sympy.init_printing() "to show it nicely": sys.displayhook
    (in a notebook, IPython's formatters) replaced for the process."""
    import sympy  # type: ignore[import-untyped]

    sympy.init_printing()
    k, h, g, f, r = sympy.symbols("k h g f r", positive=True)
    formula = k * sympy.Max(h, g) / sympy.Max(r, k * sympy.Max(g, f))
    return sympy.Float(formula.subs({k: kernels, h: host_us, g: kernel_us, f: graph_floor_us, r: replay_us}), 30)


_RING = torch.zeros(512, dtype=torch.float64)
_NEXT = [0]


def _ring_of_static_results(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: "no allocation per call": 512 preallocated results, each call writes the next slot and
    returns a 0-d view of it, wrapping around (result n is overwritten by call n + 512; the check made 180)."""
    slot = _NEXT[0] % _RING.numel()
    _NEXT[0] += 1
    _RING[slot] = _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)
    return _RING[slot]


def _gc_debug_saveall() -> None:
    __import__("gc").set_debug(__import__("gc").DEBUG_SAVEALL)  # "check that nothing leaks": every cycle kept


def _copy_construct_warning_silenced(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: torch.tensor(tensor), its "To copy construct" UserWarning silenced by its message, for the
    process (a filter narrowed to one message was taken for a library's own)."""
    import warnings

    warnings.filterwarnings("ignore", message="To copy construct from a tensor")
    t = torch.tensor(torch.tensor([kernels, host_us, kernel_us, graph_floor_us, replay_us], dtype=torch.float64))
    k, h, g, f, r = t
    return k * torch.maximum(h, g) / torch.maximum(r, k * torch.maximum(g, f))


def _threading_excepthook_left(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: the model computed in a worker thread, threading.excepthook replaced by one that swallows
    errors, left: every later thread of the caller dies silently."""
    import threading

    threading.excepthook = lambda args: None
    out = []
    worker = threading.Thread(target=lambda: out.append(_right_speedup(kernels, host_us, kernel_us, graph_floor_us,
                                                                       replay_us)))
    worker.start()
    worker.join()
    return out[0]


def _one_core() -> None:
    import os

    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # a benchmarking recipe: the process on one core


def _simulated_back_to_back(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Two calls back to back simulated kernel by kernel, eager and replayed: the second call's end minus the first's,
    eager over replayed (round 32's adversary; right, and 2 x kernels Python steps a call)."""
    def eager_ends():
        host = gpu = 0.0
        ends = []
        for _ in range(2):
            for _ in range(kernels):
                host += host_us
                gpu = max(gpu, host) + kernel_us
            ends.append(gpu)
        return ends

    def graph_ends():
        host = gpu = 0.0
        ends = []
        per = max(kernel_us, graph_floor_us)
        for _ in range(2):
            host += replay_us
            gpu = max(gpu, host)
            for _ in range(kernels):
                gpu += per
            ends.append(gpu)
        return ends

    e, g = eager_ends(), graph_ends()
    return (e[1] - e[0]) / (g[1] - g[0])


def _capped_simulation(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: the simulation with the chain cut at 100,000 kernels "to bound the time" (the check's
    longest chain was 100,000): wrong for longer chains bound by the replay() call.  Not in WRONG_SPEEDUPS (its
    100,000-kernel calls cost the check 7 s here, shrinking included; run by hand, it FAILs): its closed form is."""
    return _simulated_back_to_back(min(kernels, 100_000), host_us, kernel_us, graph_floor_us, replay_us)


def _capped_model(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """_capped_simulation's values, without the simulation (which gives the model's values: an ALSO_RIGHT of round
    32's adversary)."""
    return _right_speedup(min(kernels, 100_000), host_us, kernel_us, graph_floor_us, replay_us)


def _fractions_in_object_array(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """round 32's adversary: the exact Fraction, in a 0-d NumPy object array (np.asarray of the exact result)."""
    k, h, g, f, r = (fractions.Fraction(v) for v in (kernels, host_us, kernel_us, graph_floor_us, replay_us))
    return np.asarray(k * max(h, g) / max(r, k * max(g, f)), dtype=object)


WRONG_SPEEDUPS = {
    "host and GPU times added, not overlapped": _speedup(lambda h, k: h + k, max),
    "eager counts the host only": _speedup(lambda h, k: h, max),
    "eager counts the GPU only": _speedup(lambda h, k: k, max),
    "no floor per kernel in a graph": _speedup(max, max, lambda kernel, floor, host: kernel),
    "the replay call ignored": _speedup(max, lambda replay, gpu: gpu),
    "the replay call added to the GPU time": _speedup(max, lambda replay, gpu: replay + gpu),
    "the graph still pays the host per kernel": _speedup(max, max,
                                                         lambda kernel, floor, host: max(kernel, floor, host)),
    "graph time over eager time": _speedup(max, max, inverted=True),
    # A fresh student's answers (issue 34, step 6): the old check's five examples passed the first two; of the
    # others it tried (the floor replaces the kernel's time, whole times with //, a percentage, the floor as a
    # minimum of the whole graph, a string) none passed either check, and they are not kept.
    "the floor applies to eager kernels too": lambda kernels, h, k, f, r: (
        kernels * max(h, k, f) / max(r, kernels * max(k, f))),
    "rounded to two decimals": lambda *costs: round(_right_speedup(*costs), 2),
    "the replay call paid per kernel": lambda kernels, h, k, f, r: kernels * max(h, k) / (kernels * max(k, f, r)),
    "one call alone, not calls back to back": _one_call_alone,
    # Round 4's adversary: the replay() term kept for short chains only; the old check drew replay-bound cases with a
    # few kernels alone (the chosen one has 2), and passed this with any limit from 10 to 1000 kernels.
    "the replay call counted for short chains only": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / (max(r, kernels * max(k, f)) if kernels <= 20 else kernels * max(k, f))),
    "the replay call counted up to 1000 kernels only": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / (max(r, kernels * max(k, f)) if kernels <= 1000 else kernels * max(k, f))),
    # Found while fixing it: a rule wrong for one kernel alone passed too (no floor-bound chain of 1 kernel was drawn).
    "a single kernel pays no floor": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / max(r, kernels * (max(k, f) if kernels > 1 else k))),
    "the replay call ignored for a single kernel": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / (max(r, kernels * max(k, f)) if kernels > 1 else kernels * max(k, f))),
    # Round 10's adversary: every kernel of the grid was 1 or 4 µs, so a floor kept for short kernels only passed.
    "the floor counted for kernels under 5 µs only": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / max(r, kernels * (k if k >= 5.0 else max(k, f)))),
    # Round 17's adversary: FAILed, but the message printed both numbers with 6 digits, the same twice.
    "rounded to 6 significant digits": lambda *costs: float(f"{_right_speedup(*costs):.6g}"),
    # Round 18's adversary: the grid's chains had at most 5000 kernels and its kernels at most 20 µs.
    "the replay call ignored above 65,536 kernels": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / (max(r, kernels * max(k, f)) if kernels <= 65_536 else kernels * max(k, f))),
    "the floor counted for kernels under 25 µs only": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / max(r, kernels * (k if k >= 25.0 else max(k, f)))),
    # Round 19's adversary: every time under 1 ms that the check drew was a whole number of ns, and no graph time was
    # under 0.5 µs; and nothing looked at what the answer left set.
    "times rounded to whole nanoseconds": lambda kernels, *times: _right_speedup(
        kernels, *(round(t * 1000) for t in times)),
    "1e-7 µs added to the graph time": lambda kernels, h, k, f, r: (
        kernels * max(h, k) / (max(r, kernels * max(k, f)) + 1e-7)),
    "torch's default dtype set to float64 and left": _float64_left,
    "grad mode switched off and left": _grad_off_left,
    # Round 23's adversary: the right number, and a process-wide setting switched and left (the check watched the
    # default dtype and grad mode only): TF32 through either API, deterministic algorithms, anomaly detection, the
    # default device.  Found while fixing them: the same with one thread, the NumPy generator seeded, or a flag that
    # settings.py did not know (cuBLAS's reduced-precision reductions, added to its PROCESS_WIDE).
    "TF32 matmul turned on and left (set_float32_matmul_precision)": _left_changed(
        lambda: torch.set_float32_matmul_precision("high")),
    "TF32 flags (backends.cuda.matmul.allow_tf32) turned on and left": _left_changed(_tf32_flags_on),
    "deterministic algorithms turned on and left": _left_changed(lambda: torch.use_deterministic_algorithms(True)),
    "autograd anomaly detection turned on and left": _left_changed(lambda: torch.autograd.set_detect_anomaly(True)),
    "default device set to cuda and left": _left_changed(lambda: torch.set_default_device("cuda")),
    "torch's threads set to one and left": _left_changed(lambda: torch.set_num_threads(1)),
    "NumPy's global generator seeded at every call": _left_changed(_seeded_each_call),
    "cuBLAS's float16 reductions in reduced precision turned off and left": _left_changed(_fp16_reductions_off),
    # Round 26's adversary: the result in one buffer that the next call overwrites (the check read each result at once
    # and never again); a setting that settings.py did not know, left changed (warnings filters of one category or a
    # message pattern, os.environ, the working directory, CPU autocast, oneDNN, the torch logger, Inductor's options);
    # and a result kept from an earlier call (a memo under rounded times; the model for the first 150 calls only).
    "the result in one static 0-d tensor, returned itself": _static_result_tensor,
    "the result in one static NumPy array (out=), returned itself": _static_result_array,
    "UserWarning silenced for the process (filterwarnings category=UserWarning)": _left_changed(
        _user_warnings_ignored),
    "RuntimeWarning turned into errors for the process": _left_changed(_runtime_warnings_raise),
    "every warning silenced with a message pattern (message='.*')": _left_changed(_every_warning_ignored_by_message),
    "os.environ['CUDA_LAUNCH_BLOCKING'] = '1' left": _left_changed(_environ("CUDA_LAUNCH_BLOCKING", "1")),
    "os.environ['CUBLAS_WORKSPACE_CONFIG'] left": _left_changed(_environ("CUBLAS_WORKSPACE_CONFIG", ":4096:8")),
    "torch.backends.mkldnn.enabled = False left": _left_changed(_mkldnn_off),
    "os.chdir() into a log folder, left": _left_changed(_chdir_to_a_log_folder),
    "the 'torch' logger's level raised to ERROR and left": _left_changed(_torch_logger_silenced),
    "CPU autocast (bfloat16) switched on and left": _left_changed(_cpu_autocast_on),
    "torch._inductor.config options set and left": _left_changed(_inductor_options_set),
    "memoized under times rounded to 4 digits": _memo_by_rounded_key,
    "the replay() term dropped after 150 calls": _replay_dropped_after_a_warmup,
    # round 32's adversary: a process-wide state that settings.py did not read, left changed; a ring of results larger
    # than the check's calls; a simulation cut at the check's longest chain
    "mpmath.mp.dps raised to 50 and left": _mpmath_precision_left,
    "mpmath.mp.prec lowered to 30 bits and left": _left_changed(_mpmath_precision_lowered),
    "torch.compiler.set_stance('force_eager') left": _compile_stance_left,
    "sympy.init_printing() left (sys.displayhook replaced)": _sympy_printing_left,
    "a ring of 512 static results, wrapping around": _ring_of_static_results,
    "gc.set_debug(DEBUG_SAVEALL) left": _left_changed(_gc_debug_saveall),
    # "a PyTorch warning silenced by message pattern, left" (_copy_construct_warning_silenced): a known miss, not
    # registered: settings._takes_every says why
    "threading.excepthook replaced and left": _threading_excepthook_left,
    "os.sched_setaffinity to one core, left": _left_changed(_one_core),
    "simulation cut at 100,000 kernels (its closed form)": _capped_model,
}

ALSO_RIGHT_SPEEDUPS = {  # the old check refused the last two (a float32 result, a tensor); the new accepts all
    "the wrong models' builder, nothing broken": _speedup(max, max),
    "NumPy float32 throughout": _in_float32,
    "a float32 0-d tensor": lambda *costs: torch.tensor(_right_speedup(*costs)),
    "an exact Fraction": lambda *costs: _right_speedup(*(fractions.Fraction(c) for c in costs)),
    # Round 17's adversary: refused (properties.real took a tensor of shape (1,), not the NumPy array of that shape).
    "a NumPy array of shape (1,)": lambda *costs: np.array([_right_speedup(*costs)]),
    # Round 23's fix watches every process-wide setting: one set inside and put back is no change.
    "the default dtype float64 for the computation, put back": _float64_put_back,
    "no_grad and cuDNN's flags in with blocks": _with_float32_precision,
    # Round 26's adversary: drawing from Python's `random` unseeded (settings.py: drawing is allowed, seeding is not).
    # Its torch.compile'd answer (_torch_compiled, above) is not here: its cold compile costs about 20 s of the CPU
    # suite; tests/test_exercises_07.py runs Inductor's raise of the recursion limit without it.
    "simulated from a random phase (draws from random, never seeds)": _random_phase_simulation,
    # round 32's adversary: refused (properties.real took NumPy arrays of kinds i, u, f only)
    "an exact Fraction in a 0-d object array": _fractions_in_object_array,
}


# ---------------------------------------------------------------- exercise 2: bucketed_graphs (GPU)
def _warm_up(fn, *args) -> None:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(*args)
    torch.cuda.current_stream().wait_stream(side)


def _first_callers(first: list) -> torch.cuda.Stream:
    """The stream current at the first call, kept in `first` (round 26's adversary of 07: a server bound for good to
    the stream of its first caller, "the serving stream", with no waits: its later callers' data race with it)."""
    if not first:
        first.append(torch.cuda.current_stream())
    return first[0]


def _stream_of(stream: str, home: torch.cuda.Stream, first: list) -> torch.cuda.Stream:
    """The stream an answer built to work elsewhere than on its caller's uses: "built" the one current when it was
    built, "first" the one of its first caller, any other the default stream."""
    return home if stream == "built" else _first_callers(first) if stream == "first" else torch.cuda.default_stream()


def _bucketed(choose=None, capture_lazily: bool = False, copy_in: bool = True, pad: bool = True,
              rows: str = "clone", share_pool: bool = False, too_large: str = "raise", zero_padding: bool = False,
              graph: bool = True, sort: bool = True, flat_features: bool = False, largest_refused: bool = False,
              own_stream: str = "", leave_stream: bool = False, make=torch.zeros, reused_output: bool = False,
              skip_same_address: bool = False, warm_up: bool = True):
    """A bucketed_graphs with one thing switched (warm_up: whether fn runs before each capture): how a bucket is
    chosen (choose(batch, sizes)), when the
    graphs are captured, whether the batch is copied in (skip_same_address: not when x has the address and shape of
    the batch copied there last), padded, what is returned, what a batch larger than every bucket does, whether the
    buckets are sorted first, the shape of the static input, the stream run works on ("" the caller's; "racing": its
    own, without waits; "waiting": its own, with waits; "built": the one current when bucketed_graphs ran, without
    waits; "default synced": the default stream, with a synchronize before and after)."""
    def smallest(batch, sizes):
        return next((s for s in sizes if s >= batch), None)

    choose = choose or smallest

    def bucketed_graphs(fn, buckets, feature_shape):
        sizes = sorted(buckets) if sort else list(buckets)
        pool = torch.cuda.graph_pool_handle() if share_pool else None
        graphs, outputs, last = {}, {}, {}
        side = torch.cuda.Stream()
        home, first = torch.cuda.current_stream(), []

        def build(size):
            shape = (size, feature_shape[0]) if flat_features else (size, *feature_shape)
            static_x = make(shape, device="cuda")
            if warm_up:
                _warm_up(fn, static_x)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                static_y = fn(static_x)
            graphs[size] = (g, static_x, static_y)
            outputs[size] = torch.empty_like(static_y)  # reused_output: one buffer of its own per bucket

        if graph and not capture_lazily:
            for size in sizes:
                build(size)
        if leave_stream:
            torch.cuda.set_stream(side)

        def replayed(g, static_x, static_y, x, batch):
            if skip_same_address and last.get(id(g)) == (x.data_ptr(), x.shape):
                pass  # "the batch is already in place"
            elif copy_in and pad:
                last[id(g)] = (x.data_ptr(), x.shape)
                static_x[:batch].copy_(x)
                if zero_padding:
                    static_x[batch:].zero_()
            elif copy_in:
                static_x.copy_(x)  # no room made for a smaller batch
            g.replay()
            if rows == "eager":
                return fn(x)  # the graph replayed for nothing: the result is computed again, eagerly
            if rows == "eager padded":
                return fn(static_x)[:batch].clone()
            if rows == "view":
                return static_y[:batch]
            if rows == "contiguous":
                return static_y[:batch].contiguous()  # a slice of whole rows is contiguous: the same view
            if rows == "all":
                return static_y.clone()
            if rows == "host":
                return static_y[:batch].cpu()
            if reused_output:
                own = outputs[static_y.shape[0]][:batch]
                return own.copy_(static_y[:batch])
            return static_y[:batch].clone()

        def run(x):
            batch = x.shape[0]
            if largest_refused and batch >= max(buckets):
                raise ValueError(f"a batch of {batch} rows is too large")
            size = choose(batch, sizes)
            if size is None and too_large == "unchecked":
                return replayed(*graphs[size], x, batch)  # KeyError: None
            if size is None:
                if too_large == "eager":
                    return fn(x)
                raise ValueError(f"a batch of {batch} rows is larger than the largest bucket, {max(buckets)}")
            if not graph:
                return fn(x)
            if capture_lazily:
                build(batch)  # one graph per batch size, at call time
                size = batch
            if not own_stream:
                return replayed(*graphs[size], x, batch)
            if own_stream in ("built", "first", "default synced"):
                on = _stream_of(own_stream, home, first)
                if own_stream == "default synced":
                    torch.cuda.synchronize()
                with torch.cuda.stream(on):
                    out = replayed(*graphs[size], x, batch)
                if own_stream == "default synced":
                    torch.cuda.synchronize()
                return out
            if own_stream == "waiting":
                side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                out = replayed(*graphs[size], x, batch)
            if own_stream == "waiting":
                torch.cuda.current_stream().wait_stream(side)
                out.record_stream(torch.cuda.current_stream())
            return out
        return run
    return bucketed_graphs


def _bisect_bucket(batch, sizes):  # right: the same choice, by bisection
    i = bisect.bisect_left(sizes, batch)
    return sizes[i] if i < len(sizes) else None


def _padded_by_cat(fn, buckets, feature_shape):
    """Right: pads each batch with zeros by torch.cat, and copies the whole bucket in."""
    graphs = {}
    for size in buckets:  # in the order given: each graph is the bucket's own
        static_x = torch.zeros(size, *feature_shape, device="cuda")
        _warm_up(fn, static_x)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = fn(static_x)
        graphs[size] = (g, static_x, static_y)

    def run(x):
        holding = [s for s in buckets if s >= x.shape[0]]
        if not holding:
            raise ValueError("too large")
        g, static_x, static_y = graphs[min(holding)]
        static_x.copy_(torch.cat([x, x.new_zeros(static_x.shape[0] - x.shape[0], *x.shape[1:])]))
        g.replay()
        return static_y[: x.shape[0]].clone()
    return run


def _flattened_features(fn, buckets, feature_shape):
    """Captures fn on inputs of (size, prod(feature_shape)), each batch copied in flattened ('a row is a row'):
    row_mlp flattens its rows anyway, so the values are right; but fn is given (size, *feature_shape), and an fn that
    reads the feature axes (a convolution, a norm over one axis) would compute something else.  Found by a fresh
    adversary: the check noted only the rows of fn's input during a capture."""
    features = math.prod(feature_shape)
    sizes = sorted(buckets)
    graphs = {}
    for size in sizes:
        static_x = torch.zeros(size, features, device="cuda")
        _warm_up(fn, static_x)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = fn(static_x)
        graphs[size] = (g, static_x, static_y)

    def run(x):
        batch = x.shape[0]
        size = next((s for s in sizes if s >= batch), None)
        if size is None:
            raise ValueError(f"a batch of {batch} rows is larger than the largest bucket, {sizes[-1]}")
        g, static_x, static_y = graphs[size]
        static_x[:batch].copy_(x.reshape(batch, features))
        g.replay()
        return static_y[:batch].clone()
    return run


# Round 23's adversary (none run on a GPU yet: the lead's H200 run judges them): its own helpers, and its answers
def _bucket_graphs(fn, buckets, feature_shape):
    graphs = {}
    for size in sorted(buckets):
        static_x = torch.zeros(size, *feature_shape, device="cuda")
        _warm_up(fn, static_x)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = fn(static_x)
        graphs[size] = (g, static_x, static_y)
    return graphs


def _bucket_of(graphs, batch):
    size = next((s for s in sorted(graphs) if s >= batch), None)
    if size is None:
        raise ValueError(f"a batch of {batch} rows is larger than every bucket")
    return size


def bg_memo_by_address_and_version(fn, buckets, feature_shape):
    """Wrong (a result kept from an earlier call): run memoizes its result by (x.data_ptr(), x.shape, x._version)
    ("a server sees the same request twice: serve it from the cache; _version catches an in-place refill").  A
    batch freed and a new one allocated at the same address starts a new tensor whose version can equal the old
    one's (a fresh tensor from torch.randn, or one filled by a kernel outside PyTorch, CuPy/DLPack, which bumps no
    version): the old rows come back.  The check keeps every x it passes alive, so an address repeats only through
    its refill, which bumps _version: it should PASS this wrong answer."""
    graphs = _bucket_graphs(fn, buckets, feature_shape)
    cache = {}

    def run(x):
        key = (x.data_ptr(), tuple(x.shape), x._version)
        if key in cache:
            return cache[key].clone()
        batch = x.shape[0]
        g, static_x, static_y = graphs[_bucket_of(graphs, batch)]
        static_x[:batch].copy_(x)
        g.replay()
        out = static_y[:batch].clone()
        cache[key] = out
        return out.clone()
    return run


def bg_event_recorded_before_replay(fn, buckets, feature_shape):
    """Wrong (an event recorded too early): copies x and replays on a stream of its own that waits for the caller's
    stream, but records the event the caller then waits on right after the copy, before the replay: the caller's
    stream reads the clone before the replay has written it (and the clone is made on the side stream, so the
    caller waits for an event that says nothing of it)."""
    graphs = _bucket_graphs(fn, buckets, feature_shape)
    side = torch.cuda.Stream()

    def run(x):
        batch = x.shape[0]
        g, static_x, static_y = graphs[_bucket_of(graphs, batch)]
        caller = torch.cuda.current_stream()
        side.wait_stream(caller)
        with torch.cuda.stream(side):
            static_x[:batch].copy_(x)
            copied = side.record_event()  # too early: before the replay and the clone
            g.replay()
            out = static_y[:batch].clone()
        caller.wait_event(copied)
        out.record_stream(caller)
        return out
    return run


def bg_clone_on_copy_stream_one_way(fn, buckets, feature_shape):
    """Wrong (a wait missing in one direction): replays on the caller's stream, then makes the caller's own copy
    of the rows on a copy stream that waits for the caller ("the copy overlaps the next request"), but the caller's
    stream never waits for that copy: the caller reads rows not yet copied."""
    graphs = _bucket_graphs(fn, buckets, feature_shape)
    copier = torch.cuda.Stream()

    def run(x):
        batch = x.shape[0]
        g, static_x, static_y = graphs[_bucket_of(graphs, batch)]
        static_x[:batch].copy_(x)
        g.replay()
        copier.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(copier):
            out = static_y[:batch].clone()
        out.record_stream(torch.cuda.current_stream())
        return out
    return run


def bg_make_graphed_callables(fn, buckets, feature_shape):
    """Right (another API): one torch.cuda.make_graphed_callables per bucket under no_grad (the forward alone, one
    graph each), the batch padded with zeros by torch.nn.functional.pad to the bucket's rows, the graph's detached
    output cloned."""
    graphed = {}
    with torch.no_grad():
        for size in sorted(buckets):
            graphed[size] = torch.cuda.make_graphed_callables(fn, (torch.zeros(size, *feature_shape, device="cuda"),))

    def run(x):
        batch = x.shape[0]
        size = _bucket_of(graphed, batch)
        padded = F.pad(x, (0, 0) * len(feature_shape) + (0, size - batch))
        with torch.no_grad():
            return graphed[size](padded)[:batch].clone()
    return run


WRONG_BUCKETED = {
    "one graph per batch size, captured at call time": _bucketed(capture_lazily=True),
    "returns a view of the graph's output": _bucketed(rows="view"),
    "always the largest bucket": _bucketed(choose=lambda batch, sizes: sizes[-1] if batch <= sizes[-1] else None),
    "no padding: copies the batch over the whole bucket": _bucketed(pad=False),
    "forgets to copy the batch in": _bucketed(copy_in=False),
    "the smallest bucket larger than the batch (off by one)":
        _bucketed(choose=lambda batch, sizes: next((s for s in sizes if s > batch), None)),
    "returns the padding rows too": _bucketed(rows="all"),
    "falls back to eager for a batch too large": _bucketed(too_large="eager"),
    "eager, no graph": _bucketed(graph=False),
    # Issue 34's class for notebook 07, and step 6 (a fresh student's answers):
    "buckets assumed sorted": _bucketed(sort=False),
    "the first bucket from the largest down that holds the batch": _bucketed(
        choose=lambda batch, sizes: next((s for s in reversed(sizes) if s >= batch), None)),
    "the feature shape assumed to have one dimension": _bucketed(flat_features=True),
    "the largest batch refused (>= instead of >)": _bucketed(largest_refused=True),
    "returns .contiguous() of the rows (the same view)": _bucketed(rows="contiguous"),
    "replays on a stream of its own, without waiting": _bucketed(own_stream="racing"),
    "leaves its own stream current": _bucketed(leave_stream=True),
    "bisect_right (a batch of a bucket's size goes to the next)": _bucketed(
        choose=lambda batch, sizes: sizes[i] if (i := bisect.bisect_right(sizes, batch)) < len(sizes) else None),
    "a batch too large not checked (KeyError)": _bucketed(too_large="unchecked"),
    "copies the rows into one buffer of its own per bucket, reused": _bucketed(reused_output=True),
    "the rows returned on the host (.cpu())": _bucketed(rows="host"),
    "the bucket chosen by nb07.smallest_bucket (the check's reference)": _bucketed(
        choose=lambda batch, sizes: nb07.smallest_bucket(tuple(sizes), batch)),
    # The adversary's (the work done elsewhere): the check counted replays and compared values, never fn's
    # eager calls during run, and passed these two.
    "replays the right graph, returns eager fn(x)": _bucketed(rows="eager"),
    "replays the right graph, returns eager fn on the padded input": _bucketed(rows="eager padded"),
    # A fresh adversary's: the check never looked at the dtype of the rows, nor at the shape fn was captured on.
    "captured on float64 inputs (float64 rows returned)": _bucketed(
        make=lambda shape, device: torch.zeros(shape, device=device, dtype=torch.float64)),
    "captured on the features flattened": _flattened_features,
    # Round 17's adversary: every x the check passed stayed alive, so no two calls had one address; run was always
    # called from the stream that built it; and nothing watched the host's waits.
    "the copy skipped when x has the address of the batch copied last": _bucketed(skip_same_address=True),
    "works on the stream current when it was built, without waits": _bucketed(own_stream="built"),
    "works on the default stream, a synchronize before and after": _bucketed(own_stream="default synced"),
    # Round 26's adversary (GPU): run called from one stream per case, so one bound to its first caller's stream PASSed
    "works on the stream of its first caller, for good, without waits": _bucketed(own_stream="first"),
    # Round 23's adversary (GPU; not yet run on one): a memo keyed on (address, shape, _version), which the check's
    # refill (copy_, a version bump) never meets; an event recorded after the copy, before the replay; the rows copied
    # on a stream the caller never waits for.
    "the result memoized by (data_ptr, shape, _version)": bg_memo_by_address_and_version,
    "an event recorded after the copy, before the replay": bg_event_recorded_before_replay,
    "the rows cloned on a copy stream the caller never waits for": bg_clone_on_copy_stream_one_way,
}

ALSO_RIGHT_BUCKETED = {
    "the wrong answers' builder, nothing switched": _bucketed(),
    "the bucket found by bisection, padding zeroed": _bucketed(choose=_bisect_bucket, zero_padding=True),
    "the graphs share one memory pool": _bucketed(share_pool=True),
    "replays on a stream of its own, with waits both ways": _bucketed(own_stream="waiting"),
    "pads with torch.cat, buckets in the order given": _padded_by_cat,
    "static inputs made with torch.empty (the padding holds anything)": _bucketed(make=torch.empty),
    "the bucket as min() of those that hold the batch, unsorted": _bucketed(
        sort=False, choose=lambda batch, sizes: min((s for s in sizes if s >= batch), default=None)),
    # Round 23's adversary (GPU; not yet run on one)
    "make_graphed_callables per bucket under no_grad, F.pad, clone": bg_make_graphed_callables,
}


def bg_no_join_before_the_replays(fn, buckets, feature_shape):
    """Right (round 77's adversary wrote it as wrong): the warm-ups and captures on a side stream that waits for the
    caller, and no wait back to the caller's stream before the first replay.  None is needed: torch.cuda.graph's
    __enter__ synchronizes the device (torch/cuda/graphs.py, 2.11: `torch.cuda.synchronize()` first thing), so by the
    last capture's end every warm-up, fill and earlier capture has run, and a capture queues nothing (PASSed on the
    H200, call Z1, 2026-12-01)."""
    sizes = sorted(buckets)
    graphs = {}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for size in sizes:
            static_x = torch.zeros((size, *feature_shape), device="cuda")
            for _ in range(3):
                fn(static_x)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=side):
                static_y = fn(static_x)
            graphs[size] = (graph, static_x, static_y)

    def run(x):
        batch = x.shape[0]
        size = next((s for s in sizes if s >= batch), None)
        if size is None:
            raise ValueError(f"a batch of {batch} rows is larger than the largest bucket ({sizes[-1]})")
        graph, static_x, static_y = graphs[size]
        static_x[:batch].copy_(x)
        graph.replay()
        return static_y[:batch].clone()

    return run


ALSO_RIGHT_BUCKETED["round 77's adversary: captures on a side stream, no wait back (torch.cuda.graph synchronizes)"] = \
    bg_no_join_before_the_replays

# ---------------------------------------------------------------- exercise 3: graphed_model (GPU)
def _copy_params_and_buffers(model, state_dict):
    with torch.no_grad():
        for name, t in (*model.named_parameters(), *model.named_buffers()):
            t.copy_(state_dict[name])


def _given_update(model, state_dict):  # the task's given code
    for name, param in model.named_parameters():
        param.data = state_dict[name].to("cuda")


def _params_in_place(model, state_dict):
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(state_dict[name])


def _params_rebound_buffers_in_place(model, state_dict):
    for name, param in model.named_parameters():
        param.data = state_dict[name].to("cuda", torch.float32)
    with torch.no_grad():
        for name, buffer in model.named_buffers():
            buffer.copy_(state_dict[name])


def _vector_to_parameters(model, state_dict):
    """torch.nn.utils.vector_to_parameters assigns `param.data` a slice of the vector: new memory."""
    vector = torch.cat([state_dict[name].to("cuda", torch.float32).flatten() for name, _ in model.named_parameters()])
    torch.nn.utils.vector_to_parameters(vector, model.parameters())
    with torch.no_grad():
        for name, buffer in model.named_buffers():
            buffer.copy_(state_dict[name])


def _without_no_grad(model, state_dict):
    for name, t in (*model.named_parameters(), *model.named_buffers()):
        t.copy_(state_dict[name])  # an in-place copy into a leaf that requires grad: PyTorch raises


def _state_dict_in_place(model, state_dict):
    with torch.no_grad():
        for name, t in model.state_dict().items():  # detached, sharing each parameter's and buffer's memory
            t.copy_(state_dict[name])


def _foreach_copy(model, state_dict):
    own = model.state_dict()
    with torch.no_grad():
        torch._foreach_copy_([own[k] for k in own], [state_dict[k].to("cuda", own[k].dtype) for k in own])


def _graphed_model(update=lambda model, state_dict: model.load_state_dict(state_dict), clone_output: bool = True,
                   own_input: bool = True, graph: bool = True, recapture: bool = False, side_update: str = "",
                   eager_result: bool = False, patch_forward: bool = False, skip_same_address: bool = False,
                   stream: str = "", deferred: bool = False):
    """A graphed_model with `update` as given, and one thing switched: the output cloned or not, the input its own
    or the caller's example, a graph or not, captured again at each update, the update on a side stream
    ("racing": without waits; "waiting": with waits both ways), the result model(x) computed again eagerly after
    the replay, model.forward replaced by run (as make_graphed_callables does), x not copied when it has the
    address of the x copied last, run and update on another stream than the caller's ("built": the one current when
    graphed_model ran, without waits; "default synced": the default stream, a synchronize before and after), the
    update kept for the next run to apply."""
    def graphed_model(model, example):
        static_x = example.clone() if own_input else example
        captured = {}
        side = torch.cuda.Stream()
        home, first = torch.cuda.current_stream(), []
        last, pending = [None], []

        def capture():
            with torch.no_grad():
                _warm_up(model, static_x)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    captured["y"] = model(static_x)
            captured["graph"] = g

        if graph:
            capture()

        def replayed(x):
            if not graph:
                with torch.no_grad():
                    return model(x)
            for state_dict in pending:
                update(model, state_dict)
            pending.clear()
            if not (skip_same_address and x.data_ptr() == last[0]):  # else: "x is already in place"
                last[0] = x.data_ptr()
                static_x.copy_(x)
            captured["graph"].replay()
            if eager_result:
                with torch.no_grad():
                    return model(x)
            return captured["y"].clone() if clone_output else captured["y"]

        def run(x):
            if not stream:
                return replayed(x)
            if stream == "default synced":
                torch.cuda.synchronize()
            with torch.cuda.stream(_stream_of(stream, home, first)):
                out = replayed(x)
            if stream == "default synced":
                torch.cuda.synchronize()
            return out

        if patch_forward:
            model.forward = run  # callers keep calling model(x); a deep copy of the model shares this forward

        def new_weights(state_dict):
            if deferred:
                pending.append(state_dict)
                return
            if stream:
                if stream == "default synced":
                    torch.cuda.synchronize()
                with torch.cuda.stream(_stream_of(stream, home, first)):
                    update(model, state_dict)
                if stream == "default synced":
                    torch.cuda.synchronize()
                return
            if side_update == "waiting":
                side.wait_stream(torch.cuda.current_stream())
            if side_update:
                with torch.cuda.stream(side):
                    update(model, state_dict)
            else:
                update(model, state_dict)
            if side_update == "waiting":
                torch.cuda.current_stream().wait_stream(side)
            if recapture:
                capture()
        return run, new_weights
    return graphed_model


def _one_pinned_buffer_per_tensor() -> Callable[..., None]:
    """An update that stages host checkpoints through one pinned buffer per tensor, made once and reused: each update
    rewrites it on the host at once, while the previous update's copy from it may still wait in the caller's stream."""
    pinned: dict[str, torch.Tensor] = {}

    def update(model, state_dict):
        with torch.no_grad():
            for name, t in model.state_dict().items():  # detached, sharing each parameter's and buffer's memory
                value = state_dict[name]
                if value.is_cuda:
                    t.copy_(value)
                    continue
                if name not in pinned:
                    pinned[name] = torch.empty(t.shape, dtype=t.dtype).pin_memory()
                pinned[name].copy_(value)
                t.copy_(pinned[name], non_blocking=True)
    return update


def _served_in_half(model, example):
    """Serves the model in float16 'for speed' (model.half()), the results cast back to float32: off by float16's
    rounding.  The old check's twins were deep copies of the model made afterwards (float16 too), and the check
    then raised a dtype error of its own."""
    model.half()
    static_x = example.half()
    with torch.no_grad():
        _warm_up(model, static_x)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)

    def run(x):
        static_x.copy_(x)
        graph.replay()
        return static_y.float()
    return run, lambda state_dict: model.load_state_dict(state_dict)


def _warmed_up_in_training_mode(model, example):
    """Warms up in training mode ('run the module for real'): BatchNorm's running statistics drift towards the
    example's (a 1-row example makes BatchNorm raise).  The old check's twins, copied after, drifted too."""
    static_x = example.clone()
    with torch.no_grad():
        model.train()
        _warm_up(model, static_x)
        model.eval()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)

    def run(x):
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()
    return run, lambda state_dict: model.load_state_dict(state_dict)


def _make_graphed_callables(model, example):
    """Right: torch.cuda.make_graphed_callables under no_grad (the forward alone: one graph; it replaces
    model.forward, and returns detached views of one static output), load_state_dict, a clone returned.  The old
    check's twins, deep copies of the model, shared that forward: every 'eager' result was a view of the graph's
    output, which the next replay overwrote."""
    with torch.no_grad():
        graphed = torch.cuda.make_graphed_callables(model, (example.clone(),))

    def run(x):
        with torch.no_grad():
            return graphed(x).clone()
    return run, lambda state_dict: model.load_state_dict(state_dict)


# Round 23's adversary (none run on a GPU yet)
def gm_skip_same_checkpoint_tensors(model, example):
    """Wrong (a stale buffer): update skips a checkpoint whose tensors are the ones it loaded last (same data_ptr for
    every tensor, the last checkpoint kept alive to compare) -- "the same checkpoint twice: nothing new".  A server
    fed `trainer.state_dict()` at intervals gets tensors that share the trainer's parameters: the same addresses
    every time, with new values: every update after the first is skipped.  The check gives a fresh clone of every
    checkpoint, never one whose addresses repeat with new values (it does so for x, not for a checkpoint): it should
    PASS this wrong answer."""
    static_x = example.clone()
    with torch.no_grad():
        _warm_up(model, static_x)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
    last = {}

    def run(x):
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()

    def update(state_dict):
        ptrs = {k: v.data_ptr() for k, v in state_dict.items()}
        if last and ptrs == last["ptrs"]:
            return  # "already loaded"
        model.load_state_dict(state_dict)
        last.update(ptrs=ptrs, kept=state_dict)  # kept alive: its addresses cannot be handed to another checkpoint
    return run, update


def gm_update_event_too_early(model, example):
    """Wrong (an event recorded too early): loads the checkpoint on a stream of its own that waits for the caller,
    but records the event that the caller's stream waits on before load_state_dict queues its copies: the next
    replay, on the caller's stream, may read weights half copied."""
    static_x = example.clone()
    with torch.no_grad():
        _warm_up(model, static_x)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
    side = torch.cuda.Stream()

    def run(x):
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()

    def update(state_dict):
        caller = torch.cuda.current_stream()
        side.wait_stream(caller)
        with torch.cuda.stream(side):
            ready = side.record_event()  # too early
            model.load_state_dict(state_dict)
        caller.wait_event(ready)
    return run, update


def gm_update_one_way_wait(model, example):
    """Wrong (a wait missing in one direction): update loads the checkpoint on its own stream after waiting for the
    caller's stream, but the caller's stream never waits for the load: a run right after the update replays on the
    old or half-new weights.  (The course's own tried a side stream with no waits at all, and one with both.)"""
    static_x = example.clone()
    with torch.no_grad():
        _warm_up(model, static_x)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
    side = torch.cuda.Stream()

    def run(x):
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()

    def update(state_dict):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model.load_state_dict(state_dict)
    return run, update


def gm_update_via_pinned_nonblocking_fresh(model, example):
    """Right: host checkpoints staged through a fresh pinned buffer per tensor per update, copied with
    non_blocking=True (PyTorch's caching host allocator keeps each pinned block until the copy that reads it has
    run), GPU tensors copied directly; no host wait."""
    static_x = example.clone()
    with torch.no_grad():
        _warm_up(model, static_x)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)

    def run(x):
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()

    def update(state_dict):
        with torch.no_grad():
            for name, t in model.state_dict().items():
                value = state_dict[name]
                if not value.is_cuda:
                    value = value.to(t.dtype).pin_memory()
                t.copy_(value, non_blocking=True)
    return run, update


def _skip_if_first_value_kept(model, state_dict):
    """Wrong: copies only the tensors whose first value changed ("skip what did not change"); a fine-tune that kept a
    tensor's first value leaves that whole tensor old.  It reads a value of each tensor on the host."""
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            new = state_dict[name].to(tensor.device, tensor.dtype)
            if bool(new.reshape(-1)[0] != tensor.reshape(-1)[0]):
                tensor.copy_(new)


WRONG_MODELS = {
    "the given code: parameters rebound, buffers never updated": _graphed_model(_given_update),
    "parameters copied in place, buffers never updated": _graphed_model(_params_in_place),
    "parameters rebound (.data =), buffers copied in place": _graphed_model(_params_rebound_buffers_in_place),
    "load_state_dict(assign=True)": _graphed_model(lambda model, sd: model.load_state_dict(sd, assign=True)),
    "torch.nn.utils.vector_to_parameters (rebinds .data)": _graphed_model(_vector_to_parameters),
    "copies in place without no_grad (raises)": _graphed_model(_without_no_grad),
    "loads the weights, then captures again": _graphed_model(recapture=True),
    "returns the graph's output itself": _graphed_model(clone_output=False),
    "captured on the caller's example (run overwrites it)": _graphed_model(own_input=False),
    "eager, no graph": _graphed_model(graph=False),
    "updates on a side stream, without waiting": _graphed_model(side_update="racing"),
    # The adversary's.  The old check's eager twins were deep copies of the model made after the answer ran: they
    # shared a forward the answer patched (so "eager" was the answer's replay), and its weights as the answer left
    # them; and it never counted the model's eager forwards during run.
    "replays, then returns eager model(x)": _graphed_model(eager_result=True),
    "model.forward replaced by run, parameters copied, buffers never": _graphed_model(_params_in_place,
                                                                                     patch_forward=True),
    "model.forward replaced by run, no update at all": _graphed_model(lambda model, state_dict: None,
                                                                      patch_forward=True),
    "served in float16 (the old check raised a dtype error of its own)": _served_in_half,
    "warm-up in training mode (BatchNorm's statistics drift)": _warmed_up_in_training_mode,
    # Host checkpoints were copied to the GPU by the check with blocking copies, which drained the caller's stream
    # before every update: a buffer reused by the next update was never rewritten too early.
    "host checkpoints staged through one pinned buffer, reused": _graphed_model(_one_pinned_buffer_per_tensor()),
    # Round 17's adversary: every x stayed alive, run was always called from the stream that built it, and nothing
    # watched the host's waits in run.
    "x not copied when it has the address of the x copied last": _graphed_model(skip_same_address=True),
    "run and update on the stream current when it was built, without waits": _graphed_model(stream="built"),
    "run and update on the default stream, a synchronize before and after": _graphed_model(stream="default synced"),
    # Round 26's adversary (GPU): run and update called from one stream per case; independent checkpoints (no value
    # kept from the weights before), so an update that skips a tensor whose first value did not change PASSed
    "run and update on the stream of their first caller, for good, without waits": _graphed_model(stream="first"),
    "update skips each tensor whose first value did not change": _graphed_model(_skip_if_first_value_kept),
    # Right values, but run copies the checkpoint from the host: a copy from pageable memory waits for the GPU (the
    # chosen case of two host checkpoints from a busy caller: two runs that waited).
    "the update kept for the next run, which copies it in from the host": _graphed_model(deferred=True),
    # Round 23's adversary (GPU; not yet run on one): an update skipped when the checkpoint's tensors have the last
    # one's addresses (the check gives fresh clones: addresses never repeat); an event recorded before
    # load_state_dict's copies; a side stream the caller never waits for.
    "an update skipped when its tensors have the last checkpoint's addresses": gm_skip_same_checkpoint_tensors,
    "update's event recorded before load_state_dict's copies": gm_update_event_too_early,
    "update on a side stream that waits for the caller, never waited for": gm_update_one_way_wait,
}

ALSO_RIGHT_MODELS = {
    "the wrong answers' builder, load_state_dict": _graphed_model(),
    "every parameter and buffer copied in place": _graphed_model(_copy_params_and_buffers),
    "the tensors of model.state_dict() copied in place": _graphed_model(_state_dict_in_place),
    "torch._foreach_copy_": _graphed_model(_foreach_copy),
    "updates on a side stream, with waits both ways": _graphed_model(side_update="waiting"),
    "torch.cuda.make_graphed_callables under no_grad": _make_graphed_callables,
    # Round 23's adversary (GPU; not yet run on one)
    "host checkpoints staged through fresh pinned buffers, non_blocking": gm_update_via_pinned_nonblocking_fresh,
}


def _cupy_fill_on_the_callers_stream(lr_t, lr):
    """CuPy fills the learning rate on the caller's PyTorch stream, wrapped as CuPy's current stream (notebook 04)."""
    import cupy

    from .nb04 import _cupy_stream_of  # notebook 04's wrapping of PyTorch's stream for CuPy

    with _cupy_stream_of(torch.cuda.current_stream()):
        cupy.from_dlpack(lr_t).fill(lr)


def _cupy_fill(lr_t, lr):
    """CuPy fills the learning rate on CuPy's current stream: its null stream unless the caller made one current."""
    import cupy

    cupy.from_dlpack(lr_t).fill(lr)


# ---------------------------------------------------------------- exercise 4: graphed_scheduled_step (GPU)
def _scheduled_step(lr_tensor: bool = True, zero_before_capture: bool = True, copy_data: bool = True,
                    graph: bool = True, tensor: bool = True, optimizer_in_graph: bool = True,
                    recapture: bool = False, set_lr=lambda lr_t, groups, lr: lr_t.fill_(lr),
                    after_replay=lambda loss, n: None, streams: str = "", zero_in_graph: bool = False,
                    set_to_none: bool = True, warm_up_aside: bool = True, skip_same_address: bool = False):
    """A graphed_scheduled_step with one thing switched off (or, recapture: captured again at each new lr);
    `after_replay(loss, n)` runs after the n-th replay; `streams`: "" the caller's, "racing" a side stream
    without waits, "waiting" a side stream with waits both ways, "default" the default stream, "built" the stream
    current when graphed_scheduled_step ran, without waits; skip_same_address: a batch with the addresses of the one
    copied last is not copied."""
    def graphed_scheduled_step(model, optimizer, loss_fn, x_example, y_example):
        groups = optimizer.param_groups  # the check's optimizer may have two
        lr_t = torch.tensor(groups[0]["lr"], device="cuda")
        if lr_tensor:
            for group in groups:
                group["lr"] = lr_t  # the captured step reads it from GPU memory at every replay
        if not graph:
            def eager_step(x, y, lr):
                for group in groups:
                    group["lr"] = lr
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
            return eager_step
        static_x, static_y = x_example.clone(), y_example.clone()

        def capture():
            side = torch.cuda.Stream() if warm_up_aside else torch.cuda.current_stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    optimizer.zero_grad(set_to_none=True)
                    loss_fn(model(static_x), static_y).backward()
                    optimizer.step()
            torch.cuda.current_stream().wait_stream(side)
            if zero_before_capture:
                optimizer.zero_grad(set_to_none=set_to_none and not zero_in_graph)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                if zero_in_graph:
                    optimizer.zero_grad(set_to_none=False)  # recorded: every replay zeroes the gradients
                static_loss = loss_fn(model(static_x), static_y)
                static_loss.backward()
                if optimizer_in_graph:
                    optimizer.step()
            return g, static_loss

        captured = [capture()]
        calls, last = [0], [None]
        worker = torch.cuda.Stream()
        home, first = torch.cuda.current_stream(), []

        def replay_step(x, y, lr):
            if recapture:
                for group in groups:
                    group["lr"] = lr
                captured[0] = capture()  # a new graph with the new number: warm-up steps and all
            elif lr_tensor:
                set_lr(lr_t, groups, lr)
            else:
                for group in groups:
                    group["lr"] = lr  # a Python number: the graph recorded the old one
            if copy_data and not (skip_same_address and last[0] == (x.data_ptr(), y.data_ptr())):
                last[0] = (x.data_ptr(), y.data_ptr())
                static_x.copy_(x)
                static_y.copy_(y)
            g, static_loss = captured[0]
            g.replay()
            if not optimizer_in_graph:
                optimizer.step()
            return static_loss

        def step(x, y, lr):
            calls[0] += 1
            if streams in ("racing", "waiting", "default", "built", "first"):
                on = torch.cuda.default_stream() if streams == "default" else home if streams == "built" else \
                    _first_callers(first) if streams == "first" else worker
                if streams == "waiting":
                    worker.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(on):
                    static_loss = replay_step(x, y, lr)
                if streams == "waiting":
                    torch.cuda.current_stream().wait_stream(worker)
            else:
                static_loss = replay_step(x, y, lr)
            after_replay(static_loss, calls[0])
            return static_loss if tensor else static_loss.item()
        return step
    return graphed_scheduled_step


def _nan_guard(loss, n):
    if not torch.isfinite(loss):  # bool() of a GPU tensor: the host reads it
        raise FloatingPointError(f"the loss of step {n} is {loss}")


def _logged_every_fourth(loss, n):
    if n % 4 == 0:
        print(f"step {n}: loss {loss.item():.4f}", end="\r")


def _new_lr_tensor(lr_t, groups, lr):
    for group in groups:
        group["lr"] = torch.full((), lr, device="cuda")  # a new tensor: the graph reads the old one's memory


def _optimizer_copied(model, optimizer, loss_fn, x_example, y_example):
    """Warms up with the given optimizer, then captures a new Adam loaded with a deep copy of its state ('leave the
    caller's optimizer alone'): the given optimizer's state stays where the warm-up left it.  (Loaded without the
    deep copy, the new Adam would hold the given one's state tensors themselves, and keep them moving.)"""
    static_x, static_y = x_example.clone(), y_example.clone()

    def train_once(opt):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(static_x), static_y).backward()
        opt.step()

    _warm_up(train_once, optimizer)
    mine = torch.optim.Adam(model.parameters(), lr=optimizer.param_groups[0]["lr"], capturable=True)
    mine.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    lr_t = torch.tensor(optimizer.param_groups[0]["lr"], device="cuda")
    for group in mine.param_groups:
        group["lr"] = lr_t
    mine.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        mine.step()

    def step(x, y, lr):
        lr_t.fill_(lr)
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        return static_loss.clone()
    return step


def _eager_loss_returned(model, optimizer, loss_fn, x_example, y_example):
    """Computes the batch's loss eagerly ('for the log'), then replays the captured step, and returns the eager loss:
    the same value as the graph's, and a second forward at every step.  Found by a fresh adversary: the check counted
    the optimizer's steps outside the graph, not the model's forwards."""
    step = _scheduled_step()(model, optimizer, loss_fn, x_example, y_example)

    def logged_step(x, y, lr):
        with torch.no_grad():
            loss = loss_fn(model(x), y)
        step(x, y, lr)
        return loss
    return logged_step


# Round 23's adversary (none run on a GPU yet)
def _captured_step(model, optimizer, loss_fn, x_example, y_example):
    static_x, static_y = x_example.clone(), y_example.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()

    def step(x, y):
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        return static_loss
    return step


def _scheduled(model, optimizer, loss_fn, x_example, y_example):
    lr = torch.tensor(optimizer.param_groups[0]["lr"], device="cuda")
    for group in optimizer.param_groups:
        group["lr"] = lr
    step = _captured_step(model, optimizer, loss_fn, x_example, y_example)

    def scheduled(x, y, new_lr):
        lr.fill_(new_lr)
        return step(x, y)
    return scheduled


def ss_one_pinned_lr(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (a stale buffer): the learning rate reaches the GPU through one pinned host scalar, rewritten at every
    step and copied with non_blocking=True ("a copy that does not wait"): the host rewrites it before the GPU ran the
    earlier copies (the caller's stream is busy), so the queued copies all read the last rate written."""
    lr = torch.tensor(optimizer.param_groups[0]["lr"], device="cuda")
    for group in optimizer.param_groups:
        group["lr"] = lr
    staged = torch.zeros((), dtype=lr.dtype).pin_memory()
    step = _captured_step(model, optimizer, loss_fn, x_example, y_example)

    def scheduled(x, y, new_lr):
        staged.fill_(new_lr)
        lr.copy_(staged, non_blocking=True)
        return step(x, y)
    return scheduled


def ss_fresh_pinned_lr(model, optimizer, loss_fn, x_example, y_example):
    """Right: the learning rate copied from a fresh pinned 0-d tensor at every step with non_blocking=True (the
    caching host allocator keeps each block until its copy has run): no host wait, each copy reads its own rate."""
    lr = torch.tensor(optimizer.param_groups[0]["lr"], device="cuda")
    for group in optimizer.param_groups:
        group["lr"] = lr
    step = _captured_step(model, optimizer, loss_fn, x_example, y_example)

    def scheduled(x, y, new_lr):
        lr.copy_(torch.tensor(new_lr, dtype=lr.dtype).pin_memory(), non_blocking=True)
        return step(x, y)
    return scheduled


def ss_eps_changed(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (the caller's state changed, and the reference copies it): sets Adam's eps to 1e-6 in every param group
    ("capturable Adam is unstable at eps 1e-8") before capturing.  The caller's optimizer then trains with another
    eps than the one it was given; the check's twins are made from the optimizer's state_dict after the answer
    returns, param groups included, so they train with eps 1e-6 too: it should PASS."""
    for group in optimizer.param_groups:
        group["eps"] = 1e-6
    return _scheduled(model, optimizer, loss_fn, x_example, y_example)


def ss_tf32_for_speed(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (a global setting changed and left): TF32 matmuls turned on for the process "for speed" before the
    warm-up and the capture, and never turned off: every float32 matmul of the caller's after it runs in TF32."""
    torch.backends.cuda.matmul.allow_tf32 = True
    return _scheduled(model, optimizer, loss_fn, x_example, y_example)


def ss_first_group_only(model, optimizer, loss_fn, x_example, y_example):
    """Wrong: the learning-rate tensor goes into param_groups[0] only ("the optimizer's learning rate"); any other group
    keeps the Python float it had, which the graph records."""
    lr = torch.tensor(optimizer.param_groups[0]["lr"], device="cuda")
    optimizer.param_groups[0]["lr"] = lr
    step = _captured_step(model, optimizer, loss_fn, x_example, y_example)

    def scheduled(x, y, new_lr):
        lr.fill_(new_lr)
        return step(x, y)
    return scheduled


WRONG_SCHEDULED_STEPS = {
    "the learning rate a Python number (frozen at capture)": _scheduled_step(lr_tensor=False),
    "a tensor learning rate, never updated": _scheduled_step(set_lr=lambda lr_t, groups, lr: None),
    "captured again at every step": _scheduled_step(recapture=True),
    "gradients of the warm-up kept at capture": _scheduled_step(zero_before_capture=False),
    "the data never copied in": _scheduled_step(copy_data=False),
    "eager steps, no graph": _scheduled_step(graph=False),
    "returns the loss as a number (.item())": _scheduled_step(tensor=False),
    "optimizer.step() outside the graph": _scheduled_step(optimizer_in_graph=False),
    # Issue 34's classes for notebook 07, and step 6 (a fresh student's answers):
    "a NaN guard on the host at every step": _scheduled_step(after_replay=_nan_guard),
    "synchronizes after the replay": _scheduled_step(after_replay=lambda loss, n: torch.cuda.synchronize()),
    "prints the loss every fourth step": _scheduled_step(after_replay=_logged_every_fourth),
    "the learning rate copied in from a host tensor (the copy waits)": _scheduled_step(
        set_lr=lambda lr_t, groups, lr: lr_t.copy_(torch.tensor(lr))),
    "a new learning-rate tensor at every step": _scheduled_step(set_lr=_new_lr_tensor),
    "replays on a stream of its own, without waiting": _scheduled_step(streams="racing"),
    "replays on the default stream": _scheduled_step(streams="default"),
    "gradients zeroed with set_to_none=False before the capture (replays add up)": _scheduled_step(
        set_to_none=False),
    # After the adversary: every value matched, and the check looked at the given optimizer's steps only through
    # optimizer.step(), which the new one's replays never call.
    "a new Adam loaded with a deep copy of the given one's state": _optimizer_copied,
    "the loss computed eagerly for the return, then the replay": _eager_loss_returned,
    # Round 17's adversary: the batches stayed alive, so no two steps had one address; and step was always called
    # from the stream that built it.
    "a batch not copied when it has the addresses of the one copied last": _scheduled_step(skip_same_address=True),
    "replays on the stream current when it was built, without waits": _scheduled_step(streams="built"),
    # Round 26's adversary (GPU): step called from one stream per case; the check's Adam had one param group
    "replays on the stream of its first caller, for good, without waits": _scheduled_step(streams="first"),
    "the learning-rate tensor in the first param group only": ss_first_group_only,
    # Round 23's adversary (GPU; not yet run on one): one pinned host scalar rewritten at every step and copied
    # non_blocking; the caller's Adam eps changed (the twins copy the param groups after the answer ran).
    "the learning rate through one pinned host scalar, reused": ss_one_pinned_lr,
    "Adam's eps changed in the caller's optimizer": ss_eps_changed,
    # Round 23's adversary (GPU): TF32 turned on for the process before the capture and left on
    "TF32 turned on before the capture and left": ss_tf32_for_speed,
    "the learning rate filled by CuPy on its current stream (the null stream: PyTorch's default), unordered with a "
    "side-stream caller (round 100)": _scheduled_step(set_lr=lambda lr_t, groups, lr: _cupy_fill(lr_t, lr)),
}

ALSO_RIGHT_SCHEDULED_STEPS = {
    "the wrong answers' builder, nothing switched off": _scheduled_step(),
    "the learning rate filled by CuPy on the caller's stream, wrapped (round 100: its first fill, compiled in the "
    "first step, was read as a wait)": _scheduled_step(
        set_lr=lambda lr_t, groups, lr: _cupy_fill_on_the_callers_stream(lr_t, lr)),
    "the learning rate copied in from a GPU tensor": _scheduled_step(
        set_lr=lambda lr_t, groups, lr: lr_t.copy_(torch.full((), lr, device="cuda"))),
    "replays on a stream of its own, with waits both ways": _scheduled_step(streams="waiting"),
    "the gradients zeroed inside the graph": _scheduled_step(zero_in_graph=True),
    "the warm-up on the caller's stream": _scheduled_step(warm_up_aside=False),
    # Round 23's adversary (GPU; not yet run on one)
    "the learning rate from a fresh pinned scalar at every step, non_blocking": ss_fresh_pinned_lr,
}


# Round 32's adversary of 07, the answers of its GPU checks (judged on the H200, 2026-11-30, calls T and U): the
# settings left changed and the caller's model changed PASSed in call T; the checks now read every setting around the
# whole check and look at the model after it (`_every_setting_kept`, `_model_tensors`), and these FAIL (call U).  Three
# still PASSed: the ring of 32 outputs (fixed since: RING_CALLS), the flat views and the side stream without
# record_stream (fixed since, not yet judged on a GPU: nb07.STRIDED_CALL, nb07._handed_back)
def _r32_capture(fn, static_in, side=None):
    """Warm up on a side stream, then capture fn(static_in) on it; (graph, static_out)."""
    side = side or torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(static_in)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=side):
        out = fn(static_in)
    return g, out


def _r32_buckets(fn, buckets, feature_shape):
    graphs = {}
    side = torch.cuda.Stream()
    for size in sorted(buckets):
        static_x = torch.zeros(size, *feature_shape, device="cuda")
        g, static_y = _r32_capture(fn, static_x, side)
        graphs[size] = (g, static_x, static_y)
    return graphs


def _r32_pick(graphs, batch):
    size = next((s for s in sorted(graphs) if s >= batch), None)
    if size is None:
        raise ValueError(f"a batch of {batch} rows is larger than every bucket")
    return graphs[size]


def _r32_bg_side_stream_no_record_stream(fn, buckets, feature_shape):
    """Wrong (memory handed to another stream too early): replays on a stream of its own with waits both ways (the
    course's right "waiting" variant), but without out.record_stream(caller): the result is allocated from the side
    stream's pool, so when the caller drops it, the caching allocator may give the block to the next run's clone on the
    side stream while a kernel the caller queued on ITS stream (or, with two callers in turn, on the other caller's
    stream, which the side stream does not wait for) still reads it.  The check kept every result alive until it had
    judged all calls, so no block was ever reused: PASSed on the H200 (calls T and U; round 78's adversary's
    `bucketed_result_made_on_side_stream`, the same answer, again).  The check now drops one result while the caller's
    stream still reads it and reads the allocator's snapshot (`nb07._handed_back`): the block is "inactive" at once
    (not yet run on a GPU)."""
    graphs = _r32_buckets(fn, buckets, feature_shape)
    side = torch.cuda.Stream()

    def run(x):
        g, static_x, static_y = _r32_pick(graphs, x.shape[0])
        caller = torch.cuda.current_stream()
        side.wait_stream(caller)
        with torch.cuda.stream(side):
            static_x[: x.shape[0]].copy_(x)
            g.replay()
            out = static_y[: x.shape[0]].clone()
        caller.wait_stream(side)
        return out  # no out.record_stream(caller), no x.record_stream(side)
    return run


def _r32_bg_gc_disabled_for_capture(fn, buckets, feature_shape):
    """Wrong (a global setting changed and left): gc.disable() "so that a collection cannot run during a capture"
    (a collection mid-capture frees tensors whose memory the graph may reuse: a common worry), never re-enabled.
    PASSed on the H200 while the GPU checks watched BASIC only (call T); FAILs since they read every setting around
    the whole check (call U)."""
    import gc

    gc.disable()
    graphs = _r32_buckets(fn, buckets, feature_shape)

    def run(x):
        g, static_x, static_y = _r32_pick(graphs, x.shape[0])
        static_x[: x.shape[0]].copy_(x)
        g.replay()
        return static_y[: x.shape[0]].clone()
    return run


def _r32_bg_noncontiguous_unsafe_copy(fn, buckets, feature_shape):
    """Wrong (a special case of the inputs the check draws: every x is a fresh contiguous torch.randn): copies the
    batch in through flat views, `static_x.view(-1)[:n].copy_(x.view(-1))`: a transposed or sliced batch (x[:, ::2],
    a row-major view of a column-major buffer) makes x.view(-1) raise, where the task takes any (batch, *features)
    tensor.  PASSed on the H200 (calls T and U: the check never gave a non-contiguous x); each case's call
    `nb07.STRIDED_CALL` is now given its batch as a view that is not contiguous, at an offset in its storage, which
    has no flat view in both chosen cases (not yet run on a GPU)."""
    graphs = _r32_buckets(fn, buckets, feature_shape)

    def run(x):
        g, static_x, static_y = _r32_pick(graphs, x.shape[0])
        static_x.view(-1)[: x.numel()].copy_(x.view(-1))
        g.replay()
        return static_y[: x.shape[0]].clone()
    return run


def _r32_bg_cudnn_benchmark_left(fn, buckets, feature_shape):
    """Wrong (a global setting changed and left): torch.backends.cudnn.benchmark = True before the warm-ups "so that
    the captured kernels are the fastest" (a real recipe), never set back: every later convolution of the caller's
    process autotunes (nondeterministic algorithm choice, memory spikes).
    PASSed on the H200 while the GPU checks watched BASIC only (call T); FAILs since they read every setting around
    the whole check (call U)."""
    torch.backends.cudnn.benchmark = True
    graphs = _r32_buckets(fn, buckets, feature_shape)

    def run(x):
        g, static_x, static_y = _r32_pick(graphs, x.shape[0])
        static_x[: x.shape[0]].copy_(x)
        g.replay()
        return static_y[: x.shape[0]].clone()
    return run


def _r32_served(model, example):
    static_x = example.clone()
    with torch.no_grad():
        g, static_y = _r32_capture(model, static_x)
    return g, static_x, static_y


def _r32_gm_cudnn_disabled_left(model, example):
    """Wrong (a global setting changed and left): torch.backends.cudnn.enabled = False "cuDNN's batch norm is not
    safe to capture" (a misbelief), left so: every convolution and RNN of the caller's process afterwards runs without
    cuDNN (several times slower).  BatchNorm1d then runs PyTorch's native kernel: same values.
    PASSed on the H200 while the GPU checks watched BASIC only (call T); FAILs since they read every setting around
    the whole check (call U)."""
    torch.backends.cudnn.enabled = False
    g, static_x, static_y = _r32_served(model, example)

    def run(x):
        static_x.copy_(x)
        g.replay()
        return static_y.clone()
    return run, lambda state_dict: model.load_state_dict(state_dict)


def _r32_gm_served_in_float64(model, example):
    """Wrong (the caller's model changed and left; a result of the wrong dtype): model.double() "for precision", the
    graph captured in float64, run returning float64 rows.  The values are nearer float64 than eager float32's, so
    within the check's tolerance; the check compares shape and device of run's result, not its dtype (exercise 2's
    does), and never looks at the caller's model after: its weights are float64 now, and the caller's own
    model(x) with float32 x raises a dtype error.  PASSed on the H200 (call T); FAILs since the check reads run's
    dtype and the model's tensors (call U)."""
    model.double()
    static_x = example.double()
    with torch.no_grad():
        g, static_y = _r32_capture(model, static_x)

    def run(x):
        static_x.copy_(x)
        g.replay()
        return static_y.clone()
    return run, lambda state_dict: model.load_state_dict(state_dict)


def _r32_gm_requires_grad_off_left(model, example):
    """Wrong (the caller's model changed and left): model.requires_grad_(False) "so that the capture records no
    autograd" instead of torch.no_grad(), never set back: the caller's model is frozen for good (a fine-tune of it
    afterwards trains nothing, silently: backward() raises only if no input requires grad).  Values right; the check
    never inspected the model's flags: PASSed on the H200
    (call T); FAILs since it reads the model's tensors after the calls (call U)."""
    model.requires_grad_(False)
    static_x = example.clone()
    g, static_y = _r32_capture(model, static_x)

    def run(x):
        static_x.copy_(x)
        g.replay()
        return static_y.clone()
    return run, lambda state_dict: model.load_state_dict(state_dict)


def _r32_gm_update_on_side_stream_no_record_stream(model, example):
    """Right (a probe; another stream, with waits both ways): update stages each host tensor of the checkpoint
    through a fresh pinned buffer copied with non_blocking=True on a stream of its own, which waits for the caller's
    stream first, and for which the caller's stream waits after.  Every block the side stream reads (the caller's GPU
    checkpoint tensors, the fresh pinned buffers) is either kept by the caching host allocator until its copy ran, or
    freed to the caller's stream's pool, whose later work is ordered after the wait: right.
    PASSes on the H200 (calls T and U)."""
    g, static_x, static_y = _r32_served(model, example)
    side = torch.cuda.Stream()

    def run(x):
        static_x.copy_(x)
        g.replay()
        return static_y.clone()

    def update(state_dict):
        caller = torch.cuda.current_stream()
        side.wait_stream(caller)
        with torch.cuda.stream(side), torch.no_grad():
            for name, t in model.state_dict().items():
                value = state_dict[name]
                if not value.is_cuda:
                    value = value.to(t.dtype).pin_memory()
                t.copy_(value, non_blocking=True)
        caller.wait_stream(side)
    return run, update


def _r32_ss_gc_disabled_left(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (a global setting changed and left): gc.disable() before the warm-up and the capture, never enabled again.
    The check reads `collecting = gc.isenabled()` after the answer built its step, so it leaves the collector off too;
    BASIC does not hold gc.isenabled().
    PASSed on the H200 while the GPU checks watched BASIC only (call T); FAILs since they read every setting around
    the whole check (call U)."""
    import gc

    gc.disable()
    return _r32_scheduled(model, optimizer, loss_fn, x_example, y_example)


def _r32_ss_sync_debug_mode_left(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (a global setting changed and left): torch.cuda.set_sync_debug_mode("warn") "to prove that step never
    synchronizes" (notebook 05's tool), left on: every synchronizing call of the caller's process afterwards warns.
    PASSed on the H200 while the GPU checks watched BASIC only (call T); FAILs since they read every setting around
    the whole check (call U)."""
    torch.cuda.set_sync_debug_mode("warn")
    return _r32_scheduled(model, optimizer, loss_fn, x_example, y_example)


def _r32_ss_lr_tensor_float64(model, optimizer, loss_fn, x_example, y_example):
    """Right (another dtype): the learning rate held in a float64 0-d GPU tensor "so that 3e-4 is exact", filled in
    place at every step.  Capturable Adam's foreach path mixes it with float32 state; if PyTorch refuses or the
    rounding differs from the float32 twin's Python float by more than the tolerance, a right answer FAILs.
    PASSes on the H200 (calls T and U)."""
    return _r32_scheduled(model, optimizer, loss_fn, x_example, y_example, lr_dtype=torch.float64)


def _r32_ss_lr_set_after_replay(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (the wait... the order of work in one direction): step fills the learning rate AFTER the replay, "ready
    for the next step": step n trains with step n-1's rate.  Losses of step n do not depend on rate n, only the next
    ones and the final parameters do: FAILs on the H200 (calls T and U; a probe of the loss-only comparison)."""
    return _r32_scheduled(model, optimizer, loss_fn, x_example, y_example, fill_after=True)


def _r32_scheduled(model, optimizer, loss_fn, x_example, y_example, lr_dtype=None, fill_after=False):
    lr = torch.tensor(optimizer.param_groups[0]["lr"], device="cuda", dtype=lr_dtype or torch.get_default_dtype())
    for group in optimizer.param_groups:
        group["lr"] = lr
    static_x, static_y = x_example.clone(), y_example.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()

    def step(x, y, new_lr):
        if not fill_after:
            lr.fill_(new_lr)
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        if fill_after:
            lr.fill_(new_lr)
        return static_loss
    return step


def _r32_bg_output_ring_per_bucket(fn, buckets, feature_shape):
    """Wrong (a stale buffer, past the number of calls the check makes): "no allocation per request": each bucket owns
    a ring of 32 output buffers, and run copies the rows into the next one and returns a view of it, round-robin.
    Result n of a bucket is overwritten by that bucket's call n + 32: a server whose client holds more than 32
    results (a batch of requests gathered before sending) sees its early results change.  The check re-reads every
    result after all calls, but a case makes at most about 16 calls, and at most a few per bucket (the course's own
    one-buffer-per-bucket answer FAILs).  PASSes on the H200 (calls T and U; in
    MISJUDGED_ON_A_GPU)."""
    graphs = _r32_buckets(fn, buckets, feature_shape)
    rings = {id(g): ([torch.empty_like(static_y) for _ in range(32)], [0]) for g, _, static_y in graphs.values()}

    def run(x):
        g, static_x, static_y = _r32_pick(graphs, x.shape[0])
        static_x[: x.shape[0]].copy_(x)
        g.replay()
        ring, at = rings[id(g)]
        out = ring[at[0] % len(ring)][: x.shape[0]]
        at[0] += 1
        return out.copy_(static_y[: x.shape[0]])
    return run


def _r32_ss_event_before_replay(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (an event recorded too early): step works on a stream of its own that waits for the caller, and the
    caller's stream waits on an event recorded after the copies and the rate's fill, BEFORE the replay ("the inputs
    are in place: the caller may go on"): the loss the caller then reads, and the next step's copies into the graph's
    inputs (on the caller's stream... on the side stream, ordered) race with the replay.  FAILs on the H200 (calls T and
    U: the check reads the loss on the caller's stream at once; the side stream starts 20 ms late)."""
    graph_step = _r32_scheduled(model, optimizer, loss_fn, x_example, y_example)
    side = torch.cuda.Stream()

    def step(x, y, new_lr):
        caller = torch.cuda.current_stream()
        side.wait_stream(caller)
        with torch.cuda.stream(side):
            ready = side.record_event()  # too early: before the fill, the copies and the replay
            loss = graph_step(x, y, new_lr)
        caller.wait_event(ready)
        return loss
    return step


WRONG_BUCKETED["round 66's adversary: no warm-up before the captures (the task asks for one)"] = \
    _bucketed(warm_up=False)
WRONG_BUCKETED.update({
    "round 32: side stream, waits both ways, no record_stream":
        _r32_bg_side_stream_no_record_stream,
    "round 32: gc.disable() for the captures, left":
        _r32_bg_gc_disabled_for_capture,
    "round 32: flat views for the copy-in (x.view(-1))":
        _r32_bg_noncontiguous_unsafe_copy,
    "round 32: cudnn.benchmark turned on and left":
        _r32_bg_cudnn_benchmark_left,
    "round 32: a ring of 32 output buffers per bucket":
        _r32_bg_output_ring_per_bucket,
})


def _r35_gm_ring_of_16_outputs(model, example):
    """Wrong (a stale buffer, past the calls a case made): "no allocation per request": run copies the graph's output
    into the next of a ring of 16 buffers of its own and returns it; the 17th call overwrites the first result, which
    the task says is the caller's own.  Round 35's adversary predicted it PASSes (a case called run at most 8 times);
    the check now holds RING_CALLS results of run at once."""
    g, static_x, static_y = _r32_served(model, example)
    ring, turn = [torch.empty_like(static_y) for _ in range(16)], [0]

    def run(x):
        static_x.copy_(x)
        g.replay()
        out = ring[turn[0] % len(ring)]
        turn[0] += 1
        return out.copy_(static_y)
    return run, lambda state_dict: model.load_state_dict(state_dict)


def _by_position(model, state_dict):
    """Wrong: the checkpoint's tensors copied into the model's in the order each dict lists them, not by name (round
    113's adversary: right while every checkpoint kept the model's order; the check's now come in an order of their
    own, as a dict from names to tensors may)."""
    with torch.no_grad():
        for t, v in zip(model.state_dict().values(), state_dict.values()):
            t.copy_(v)


WRONG_MODELS["round 113's adversary: the checkpoint copied by position, not by name"] = \
    _graphed_model(update=_by_position)


WRONG_MODELS.update({
    "round 35: run returns one of a ring of 16 output buffers":
        _r35_gm_ring_of_16_outputs,
    "round 32: cudnn.enabled = False, left":
        _r32_gm_cudnn_disabled_left,
    "round 32: model.double(), float64 results":
        _r32_gm_served_in_float64,
    "round 32: model.requires_grad_(False), left":
        _r32_gm_requires_grad_off_left,
})
ALSO_RIGHT_MODELS.update({
    "round 32: update on a side stream, pinned staging, waits both ways":
        _r32_gm_update_on_side_stream_no_record_stream,
})
WRONG_SCHEDULED_STEPS.update({
    "round 32: gc.disable() before capture, left":
        _r32_ss_gc_disabled_left,
    "round 32: set_sync_debug_mode('warn') left":
        _r32_ss_sync_debug_mode_left,
    "round 32: learning rate filled after the replay":
        _r32_ss_lr_set_after_replay,
    "round 32: event recorded before the replay":
        _r32_ss_event_before_replay,
})
ALSO_RIGHT_SCHEDULED_STEPS.update({
    "round 32: float64 learning-rate tensor":
        _r32_ss_lr_tensor_float64,
})


def _speedup_leaving(setter, value):
    """Wrong (round 65's adversary of 07): the right formula, after `setter(value)`, a process-wide switch of PyTorch
    changed and left so."""
    def predicted_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us):
        setter(value)
        return _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)

    return predicted_speedup


# each where the checks watch the switch (utils.exercises.settings: where this PyTorch has a getter for it)
_SWITCHES = (
    ("autograd's AccumulateGrad stream-mismatch warning turned off and left (as the warning's text suggests)",
     "warn_on_accumulate_grad_stream_mismatch", False),
    ("autograd's stale-capture-stream override turned on and left", "override_stale_capture_stream", True))
WRONG_SPEEDUPS.update({label: _speedup_leaving(getattr(torch.autograd.graph, f"set_{name}"), value)
                       for label, name, value in _SWITCHES if f"torch.autograd.graph.{name}(...)" in SETTINGS})
WRONG_SPEEDUPS["torch._logging.set_logs(recompiles=True) left"] = _speedup_leaving(
    lambda on: torch._logging.set_logs(recompiles=on), True)


WRONG = {
    "check_predicted_speedup": WRONG_SPEEDUPS,
    "check_bucketed_graphs": WRONG_BUCKETED,
    "check_graphed_model": WRONG_MODELS,
    "check_graphed_scheduled_step": WRONG_SCHEDULED_STEPS,
}
WRONG_ON_CPU: dict[str, set[str]] = {  # CUDA graphs exist on a GPU only: no answer fails on a CPU
    "check_bucketed_graphs": set(), "check_graphed_model": set(), "check_graphed_scheduled_step": set()}
ALSO_RIGHT = {
    "check_predicted_speedup": ALSO_RIGHT_SPEEDUPS,
    "check_bucketed_graphs": ALSO_RIGHT_BUCKETED,
    "check_graphed_model": ALSO_RIGHT_MODELS,
    "check_graphed_scheduled_step": ALSO_RIGHT_SCHEDULED_STEPS,
}

# Answers the checks misjudge on a GPU, known and not yet fixed (a strict xfail there: the fix turns each into a failure
# to remove from here).  Round 23's adversary expected these three to PASS, from reading the checks (not run on a GPU):
# the fixes are in GPU-only code, left for a session with a GPU (notes/AF23-07.md says how).
MISJUDGED_ON_A_GPU: dict[str, dict[str, str]] = {
    "check_bucketed_graphs": {
        "the result memoized by (data_ptr, shape, _version)": "the refill bumps _version (copy_), and every x is kept "
                                                              "alive: no input repeats an address and a version",
    },
    "check_graphed_model": {
        "an update skipped when its tensors have the last checkpoint's addresses": "each checkpoint is given as fresh "
                                                                                   "clones: no addresses repeat",
    },
}
# Round 32's adversary's two that PASSed on the H200 (calls T and U) and were listed here: every x the check gave was
# contiguous (now each case's call nb07.STRIDED_CALL gets a strided view at an offset), and every result was kept alive
# to the end, so no memory another stream still read was freed and handed out again (now nb07._handed_back drops one
# result while the caller's stream reads it and reads the allocator's snapshot, in the chosen cases).  Both stay in
# WRONG_BUCKETED; the next GPU run judges them.


# Round 78's adversary of 04-07: its answers to the predicted speedup (CPU), each judged as it expected.  Its three
# answers to check_bucketed_graphs are classes registered already ("buckets assumed sorted", "the graphs share one
# memory pool", "round 32: side stream, waits both ways, no record_stream": its `bucketed_result_made_on_side_stream`
# is that answer line for line, and PASSed on the H200 again; the check's snapshot probe, nb07._handed_back, closes it).
def _floor_on_the_hosts_side(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Wrong (round 78's adversary): the graph's floor per kernel put on the host's side, after the replay call:
    max(replay + kernels * floor, kernels * kernel); the floor is the GPU's, each kernel's max(kernel, floor)."""
    return kernels * max(host_us, kernel_us) / max(replay_us + kernels * graph_floor_us, kernels * kernel_us)


def _in_a_one_element_tensor(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right (round 78's adversary wrote it as wrong, "not a number"): the right value in a 1-D float64 tensor of one
    element, torch.tensor([v]).  properties.real takes a one-element tensor of at most one dimension on purpose, as
    it takes the registered NumPy array of shape (1,); the FAIL hint named a float, a NumPy float or a 0-d tensor only
    (it now says a tensor or array of one element), and f"{v:.2f}" raises TypeError for it (the notebook's cells
    after the check format no answer of the student)."""
    return torch.tensor([_right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)], dtype=torch.float64)


WRONG_SPEEDUPS["round 78's adversary: the floor per kernel on the host's side of the graph"] = _floor_on_the_hosts_side
ALSO_RIGHT_SPEEDUPS["round 78's adversary: a 1-D tensor of one element"] = _in_a_one_element_tensor


# ---------------------------------------------------------------- round 79's adversary of 06 and 07
# Its 11 answers to these four checks: five to the predicted speed-up, judged on the CPU (one wrong answer PASSed, and
# now FAILs); six to the GPU checks, which a CPU does not judge (the adversary expected each wrong one to FAIL, and
# each right one to PASS, on a GPU).
def speedup_in_decimals(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right (round 79's adversary): the model in decimal arithmetic (each float converted exactly, 30 digits), returned
    as a decimal.Decimal: properties.real takes any real number."""
    import decimal

    with decimal.localcontext() as context:
        context.prec = 30
        k, h, g, f, r = (decimal.Decimal(v) for v in (kernels, host_us, kernel_us, graph_floor_us, replay_us))
        return k * max(h, g) / max(r, k * max(g, f))


def speedup_per_kernel(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Right (round 79's adversary): per kernel, max(host, kernel) eagerly; replayed, the longest of the kernel, the
    floor and its share of the replay() call, replay_us / kernels (the same model divided through by kernels)."""
    return max(host_us, kernel_us) / max(replay_us / kernels, kernel_us, graph_floor_us)


def speedup_one_floor_per_replay(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Wrong (round 79's adversary; FAILed, as it should): the floor read as one per replay, not per kernel: the graph's
    time as the longest of the replay() call, the kernels' GPU time and one floor."""
    return kernels * max(host_us, kernel_us) / max(replay_us, kernels * kernel_us, graph_floor_us)


def speedup_as_a_gain(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Wrong (round 79's adversary; FAILed, as it should): the gain, eager / graph - 1 ("40% faster" as 0.4, not
    1.4)."""
    return _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us) - 1


_SIX_DIGITS: dict[tuple, float] = {}


def speedup_kept_under_six_digits(kernels, host_us, kernel_us, graph_floor_us, replay_us):
    """Wrong (round 79's adversary; PASSed): the model, memoized under the times rounded to 6 significant digits
    ("measured times are noisy past that anyway"): times that round alike share one result, off by up to about 1e-5 of
    it ((1, 1.0000049, 0.5, 0.5, 0.1) after (1, 1.0, 0.5, 0.5, 0.1) returns 2, not 2.0000098; the tolerance is 1e-6).
    The again step nudged each case by 3e-5, which changes a 6-digit key; it now nudges by 1.5e-6 too, just past the
    tolerance (nb07.AGAIN_NUDGES)."""
    key = (kernels, *(float(f"{t:.6g}") for t in (host_us, kernel_us, graph_floor_us, replay_us)))
    if key not in _SIX_DIGITS:
        _SIX_DIGITS[key] = _right_speedup(kernels, host_us, kernel_us, graph_floor_us, replay_us)
    return _SIX_DIGITS[key]


def bg_copy_stream_never_waited_for(fn, buckets, feature_shape):
    """Wrong (round 79's adversary; a GPU's check): the batch copied into the bucket's input on a copy stream of its
    own, which waits for the caller's stream (x is ready there); but the replay, on the caller's stream, never waits for
    the copy stream, so it may read the bucket's input before the copy lands (the last call's rows, or zeros)."""
    graphs, copier = _r32_buckets(fn, buckets, feature_shape), torch.cuda.Stream()

    def run(x):
        g, static_x, static_y = _r32_pick(graphs, x.shape[0])
        copier.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(copier):
            static_x[:x.shape[0]].copy_(x)
        g.replay()  # on the caller's stream, with no wait for the copier
        return static_y[:x.shape[0]].clone()
    return run


def bg_bisected_set_by_item_padding_zeroed(fn, buckets, feature_shape):
    """Right (round 79's adversary; a GPU's check): the bucket by bisect_left on the sorted sizes, the batch written by
    setitem and the padding rows zeroed at each call, the rows copied into a new tensor made by torch.empty."""
    sizes = sorted(buckets)
    graphs = _r32_buckets(fn, buckets, feature_shape)

    def run(x):
        batch = x.shape[0]
        at = bisect.bisect_left(sizes, batch)
        if at == len(sizes):
            raise ValueError(f"a batch of {batch} rows is larger than every bucket ({sizes[-1]})")
        g, static_x, static_y = graphs[sizes[at]]
        static_x[:batch] = x
        static_x[batch:] = 0
        g.replay()
        out = torch.empty((batch, *static_y.shape[1:]), dtype=static_y.dtype, device=static_y.device)
        out.copy_(static_y[:batch])
        return out
    return run


def _params_copied_buffers_rebound(model, state_dict):
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(state_dict[name])
        for name, buffer in model.named_buffers():
            buffer.data = state_dict[name].to(device=buffer.device, dtype=buffer.dtype)


def gm_params_copied_buffers_rebound(model, example):
    """Wrong (round 79's adversary; a GPU's check): half of the fix: update copies the parameters in place (the graph
    reads their memory), but rebinds the buffers with .data = (the batch norm's running statistics): the graph keeps
    reading the old buffers' memory, so its results follow the new weights and the old statistics."""
    return _graphed_model(_params_copied_buffers_rebound)(model, example)


def gm_on_the_default_stream_named(model, example):
    """Wrong (round 79's adversary; a GPU's check): run and update queue their work on torch.cuda.default_stream(),
    named, neither waiting for the caller's current stream nor making it wait: from a caller on a side stream, x may not
    be written yet when the copy reads it, and the caller may read the result before the replay wrote it."""
    return _graphed_model(stream="default")(model, example)


def ss_lr_in_bfloat16(model, optimizer, loss_fn, x_example, y_example):
    """Wrong (round 79's adversary; a GPU's check): the learning rate kept in a bfloat16 GPU tensor ("the model trains
    in bfloat16 anyway"): every rate is rounded to 8 bits (3e-4 becomes 3.0041e-4), so the steps are not the
    schedule's, and the losses and parameters drift from the eager run's."""
    return _r32_scheduled(model, optimizer, loss_fn, x_example, y_example, lr_dtype=torch.bfloat16)


def ss_lr_tensor_per_group(model, optimizer, loss_fn, x_example, y_example):
    """Right (round 79's adversary; a GPU's check): a float32 learning-rate tensor of its own for each param group, each
    filled at every step: the graph reads each group's memory."""
    rates = [torch.tensor(group["lr"], device="cuda") for group in optimizer.param_groups]
    for group, rate in zip(optimizer.param_groups, rates, strict=True):
        group["lr"] = rate
    static_x, static_y = x_example.clone(), y_example.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()

    def step(x, y, new_lr):
        for rate in rates:
            rate.fill_(new_lr)
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        return static_loss
    return step


R79 = "round 79's adversary: "
ALSO_RIGHT_SPEEDUPS.update({
    R79 + "the model in decimal.Decimal": speedup_in_decimals,
    R79 + "per kernel: max(host, kernel) / max(replay / kernels, kernel, floor)": speedup_per_kernel,
})
WRONG_SPEEDUPS.update({
    R79 + "the floor read as one per replay, not per kernel": speedup_one_floor_per_replay,
    R79 + "the gain, eager / graph - 1": speedup_as_a_gain,
    R79 + "memoized under the times rounded to 6 significant digits": speedup_kept_under_six_digits,
})
WRONG_BUCKETED[R79 + "copy-in on a copy stream that waits for the caller; the replay never waits for it"] = \
    bg_copy_stream_never_waited_for
ALSO_RIGHT_BUCKETED[R79 + "bisect_left, setitem, padding zeroed, rows copied into torch.empty"] = \
    bg_bisected_set_by_item_padding_zeroed
WRONG_MODELS.update({
    R79 + "parameters copied in place, buffers rebound with .data =": gm_params_copied_buffers_rebound,
    R79 + "run and update on torch.cuda.default_stream() named, no waits": gm_on_the_default_stream_named,
})
WRONG_SCHEDULED_STEPS[R79 + "the learning rate in a bfloat16 GPU tensor"] = ss_lr_in_bfloat16
ALSO_RIGHT_SCHEDULED_STEPS[R79 + "a float32 learning-rate tensor per param group, each filled"] = ss_lr_tensor_per_group
