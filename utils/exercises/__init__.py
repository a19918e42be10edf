"""The exercise notebooks' checks: a clear pass or fail, with a hint, for each exercise.

Each exercise notebook ends an exercise with a check cell such as

    from utils.exercises import nb00
    nb00.check_largest_batch(largest_batch)

which prints one of

    PASS largest_batch: 24 checks passed
    TODO largest_batch: not done yet (it still raises NotImplementedError)
    FAIL largest_batch: 1 of 24 checks failed. ...
         hint: (about the concept the answer missed, never the answer itself)

A check that needs a GPU checks, on a machine without one, what a CPU can (see `Checker.on_cpu`),
and never says PASS there:

    PART block_memory: 8 checks passed on the CPU; the rest needs a GPU
         checked on the CPU: both blocks' reports, with the allocator's counters imitated
         needs a GPU: the same blocks on PyTorch's caching allocator
         run this check on a GPU (Colab: Runtime → Change runtime type → T4 GPU)

A failing check raises `ExerciseFailed` (so a test, or Run All, stops there) but shows only its
message, not a traceback; an unfinished exercise only says so, so Run All goes on.  Only the
exercise's own stub, `raise NotImplementedError(STUB_MESSAGE)`, counts as unfinished: any other
error, a NotImplementedError from PyTorch included, reaches the student as it is.  A cell that only
uses an exercise's function wraps that use in `with attempt():`, which says TODO in the same way.

Each check is registered, next to it in `nbNN.py`, as an `Exercise`: its notebook, the function the
student writes, and whether the check needs a GPU.  Its typical wrong answers (and any other right
answers) live in `answers/nbNN.py`; tests/test_exercises.py runs every registered check on the
solution, the stub, and each of those answers.
"""

from __future__ import annotations
import __future__

import ast
import contextvars
import functools
import importlib
import importlib.util
import inspect
import itertools
import pkgutil
import re
import textwrap
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ParamSpec, Self, TypeVar

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.overrides import TorchFunctionMode

from ..device import GPUUnavailableError

# What an exercise's stub raises: tools/make_exercises.py writes `raise NotImplementedError(STUB_MESSAGE)`
# in place of each solution, and only a NotImplementedError with this message means "not done yet".
STUB_MESSAGE = "exercise not done yet"


class ExerciseFailed(AssertionError):
    """An exercise's answer is wrong; the message says how, and gives a hint."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of printing a traceback: the student needs the message only.
        return str(self).splitlines()


class LeftForGPU(Exception):
    """Ends a GPU check on a machine without a GPU: `exercise()` prints what the CPU checked and what is left."""

    def __init__(self, cpu: str, needs: str) -> None:
        super().__init__(needs)
        self.cpu, self.needs = cpu, needs


ON_A_GPU = "run this check on a GPU (Colab: Runtime → Change runtime type → T4 GPU)"

# What PyTorch (or utils) raises when code asks for CUDA on a machine without it.
_NO_CUDA = re.compile(r"not compiled with CUDA|requires CUDA|needs a CUDA GPU|has no attribute '_cuda|dummy base class"
                      r"|no NVIDIA driver|No CUDA GPUs are available|Expected a cuda device, but got: cpu"
                      r"|Cannot access accelerator device when none is available"
                      r"|without ATen_cuda library"  # torch.Generator(device="cuda") in a CPU build
                      # torch.Event(device="cuda") and torch.Stream(device="cuda") (lecture 03's device-generic API),
                      # and torch.cuda.nvtx's ranges, in PyTorch 2.13's CPU build (round 20's adversary: right answers
                      # that used them were told that they raised)
                      r"|not linked with support for cuda devices|NVTX functions not installed"
                      r"|No module named 'cupy'"  # CuPy, which a CPU machine need not have
                      # a torch.cuda function given an imitated stream, where it checks its type (round 32's adversary
                      # of 01: `from torch.cuda import caching_allocator_alloc` raised this, blamed on a right answer)
                      r"|Invalid type for stream argument")


# ------------------------------------------------------------------------------------------
# The checks' references: used by the check only, never as an answer
# ------------------------------------------------------------------------------------------
P = ParamSpec("P")
R = TypeVar("R")
_checking: contextvars.ContextVar[str | None] = contextvars.ContextVar("checking", default=None)  # the exercise
_answering: contextvars.ContextVar[Checker | None] = contextvars.ContextVar("answering", default=None)


class ReferenceLocked(RuntimeError):
    """A check's reference was called where it gives an answer away: outside its check, or by an answer."""


class _Lock:
    """What a reference runs first, as its own first statement: it raises where the reference would give an answer
    away (outside a check, or inside the answer while a check calls it), however it is called."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: object, **kwargs: object) -> None:
        answering = _answering.get()
        if answering is not None:
            answering.used_reference = f"{self.module.rsplit('.', 1)[-1]}.{self.name}"
            raise ReferenceLocked(f"{self.name} is the check's own reference: the answer must not call it")
        if _checking.get() is None:
            raise ReferenceLocked(f"{self.module}.{self.name} is a check's reference: it runs inside "
                                  "the check only (write your own; the check compares it with this one)")


def _locked_from_source(fn: Callable[P, R]) -> Callable[P, R] | None:
    """`fn` compiled again from its source with a `_Lock` call as its first statement, so that no unlocked copy of
    it is left anywhere (a wrapper around `fn` kept `fn` in its closure, where an answer could call it).  The lock
    is a constant of the function's code (as a closure cell or a global it could be swapped); the decorators
    written below `@reference` are applied again.  None where that cannot be done (no source, no `@reference`
    line, a function defined inside another one): `reference` then wraps `fn` instead."""
    inner = inspect.unwrap(fn)
    if not inspect.isfunction(inner) or inner.__closure__ or "<locals>" in inner.__qualname__:
        return None
    try:
        lines, first = inspect.getsourcelines(inner)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    function = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(function, ast.FunctionDef) or function.name != inner.__name__:
        return None
    marked = [i for i, d in enumerate(function.decorator_list)
              if (d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else "") == "reference"]
    if len(marked) != 1:
        return None
    ast.increment_lineno(tree, first - 1)
    function.decorator_list = function.decorator_list[marked[0] + 1:]  # those below @reference: applied to fn
    body = function.body
    at = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0  # docstring
    line = body[at].lineno if at < len(body) else function.lineno
    placeholder = ("the lock of the reference", inner.__module__, inner.__name__)  # a constant, replaced below
    lock = ast.Expr(ast.Call(ast.Constant(placeholder), [], []))  # type: ignore[arg-type]  # a tuple is a constant
    for node in ast.walk(lock):
        node.lineno = node.end_lineno = line  # type: ignore[attr-defined]
        node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
    body.insert(at, lock)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "'tuple' object is not callable": it is not called
        code = compile(tree, inspect.getsourcefile(inner) or inner.__code__.co_filename, "exec",
                       flags=inner.__code__.co_flags & __future__.annotations.compiler_flag, dont_inherit=True)
    made: dict[str, Any] = {}
    exec(code, inner.__globals__, made)  # noqa: S102 -- the course's own source, compiled again with its lock
    locked = made[function.name]
    plain = inspect.unwrap(locked)
    consts = plain.__code__.co_consts
    if sum(c == placeholder for c in consts if type(c) is tuple) != 1:
        return None
    lock_object = _Lock(inner.__module__, inner.__name__)
    plain.__code__ = plain.__code__.replace(
        co_consts=tuple(lock_object if type(c) is tuple and c == placeholder else c for c in consts))
    plain.__qualname__ = inner.__qualname__
    return locked


def reference(fn: Callable[P, R]) -> Callable[P, R]:
    """Mark `fn` as a check's reference: it computes what an answer must return, so it runs inside a check
    only, and never inside the student's function while the check calls it.

    A student may read `utils/exercises/nbNN.py`, and import from it what the notebook's imports cell
    imports.  A reference that worked anywhere would be an answer to import (`nb08.reference_fast_loss`
    passed as `fast_loss`); locked, it raises outside a check, and a check that finds its own reference
    called by the answer FAILs.

    The lock is the reference's own first statement (`_locked_from_source`): there is no unlocked copy
    of the function to reach, through a wrapper's `__closure__` or `__wrapped__`, `inspect.unwrap`,
    `__globals__` or the garbage collector (tests/test_checks.py tries them).  What a decorator below
    `@reference` keeps (`functools.cache`'s values) stays behind a wrapper that locks each call too.

    What Python leaves open needs editing, not reaching: compiling the source again without its lock (as
    good as copying the source, which a student who reads nbNN.py can always do), swapping the lock out
    of the code (`__code__.replace`), or setting the framework's own state (its context variables, or
    `inside_check()` in a thread of the answer's own, where no check is known).  Reading a cached value
    (`__closure__` of a wrapper over `functools.cache`) gives the cases a check computed, not an answer.
    """
    locked = _locked_from_source(fn)
    if locked is not None and locked is inspect.unwrap(locked):
        return locked  # a plain function: the lock is in it, and nothing else holds it
    inner, lock = (fn if locked is None else locked), _Lock(fn.__module__, fn.__name__)

    @functools.wraps(fn)
    def locking(*args: P.args, **kwargs: P.kwargs) -> R:
        lock()
        return inner(*args, **kwargs)

    del locking.__wrapped__  # type: ignore[attr-defined]  # functools.wraps left the unlocked function there
    return locking


@contextmanager
def inside_check(name: str = "a test") -> Iterator[None]:
    """Run the block as a check would: references open (for the course's tests, which hold them against
    PyTorch, and for a check's own helper threads: a new thread starts outside every check)."""
    token = _checking.set(name)
    try:
        yield
    finally:
        _checking.reset(token)


class Checker:
    """Collects an exercise's expectations; the first one that fails raises ExerciseFailed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.passed = 0
        self.used_reference: str | None = None  # set by a reference that the answer called

    def answer(self, fn: Callable[P, R]) -> Callable[P, R]:
        """The student's function as the check calls it: a check's reference called inside it FAILs.

        The answer may catch the reference's error itself: the check still knows, and FAILs after the call.
        """

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            token = _answering.set(self)
            try:
                return fn(*args, **kwargs)
            except ReferenceLocked:
                pass  # FAILs below
            finally:
                _answering.reset(token)
                if self.used_reference is not None:
                    raise ExerciseFailed(f"FAIL {self.name}: your function calls {self.used_reference}, the check's "
                                         "own reference\n     hint: write the computation yourself: the check "
                                         "compares your function with that reference")
            raise AssertionError("unreachable: a reference the answer called FAILs above")

        return call

    def expect(self, ok: bool, problem: str, hint: str) -> None:
        """Count a passed expectation, or fail with `problem` (what went wrong) and `hint`."""
        if not ok:
            raise ExerciseFailed(f"FAIL {self.name}: {problem}\n     hint: {hint}")
        self.passed += 1

    @contextmanager
    def on_cpu(self, cpu: str, needs: str) -> Iterator[None]:
        """The part of a GPU check that a CPU can do, on a machine without a GPU: it never ends in PASS.

        `cpu` says what this part checks, `needs` what is left for a GPU.  If the answer calls CUDA
        where the CPU part cannot follow it (an API it does not imitate), the part stops there, with
        what passed so far: that is left for a GPU too, not a FAIL.
        """
        try:
            yield
        except Exception as error:
            if isinstance(error, ExerciseFailed) or not _NO_CUDA.search(str(error)):
                raise
            what = str(error).splitlines()[0].split(": ")[0]  # "gpu_time_per_call() needs a CUDA GPU"
            needs = f"{needs}; and your function calls CUDA where the CPU cannot follow ({what})"
            raise LeftForGPU(cpu, needs) from None
        raise LeftForGPU(cpu, needs)

    def expect_saving(self, elapsed_ms: Callable[[Callable[[], object]], float], baseline: Callable[[], object],
                      yours: Callable[[], object], saving_ms: float, describe: tuple[str, str], hint: str,
                      tries: int = 3) -> None:
        """Expect `yours` to run at least `saving_ms / 2` faster than `baseline`, timed by `elapsed_ms`.

        For the overlap exercises (notebooks 03 and 04): `saving_ms` is what overlapping can save at
        most, and half of it must show.  Timings on a shared machine are only ever too slow, never too
        fast, so the baseline is the best of two runs, and yours gets `tries` runs: a busy host spoils
        one now and then, a wrong answer spoils every one.  `describe` names the baseline and what
        overlaps, for the message: ("copying then computing one batch at a time", "the copies with
        the steps").
        """
        baseline(), yours()  # warm-up: first calls allocate, compile, fill caches
        baseline_ms = min(elapsed_ms(baseline) for _ in range(2))
        for _ in range(tries):
            yours_ms = elapsed_ms(yours)
            if yours_ms < baseline_ms - saving_ms / 2:
                break
        self.expect(yours_ms < baseline_ms - saving_ms / 2,
                    f"took {yours_ms:.2f} ms; {describe[0]} takes {baseline_ms:.2f} ms, and overlapping "
                    f"{describe[1]} saves up to {saving_ms:.2f} ms", hint)


def is_stub(error: BaseException) -> bool:
    """True for the NotImplementedError of an exercise's stub, and for nothing else."""
    return type(error) is NotImplementedError and error.args == (STUB_MESSAGE,)


def _todo(name: str) -> None:
    print(f"TODO {name}: not done yet (it still raises NotImplementedError)")


@contextmanager
def exercise(name: str) -> Iterator[Checker]:
    """Run an exercise's checks: print PASS, print TODO if not attempted, or raise on FAIL.

    Any other exception than the stub's, a NotImplementedError of PyTorch's too, passes through.
    """
    checker = Checker(name)
    token = _checking.set(name)
    try:
        yield checker
    except NotImplementedError as error:
        if not is_stub(error):
            raise
        _todo(name)
        return
    except LeftForGPU as left:
        if checker.passed:
            print(f"PART {name}: {checker.passed} checks passed on the CPU; the rest needs a GPU\n"
                  f"     checked on the CPU: {left.cpu}\n     needs a GPU: {left.needs}\n     {ON_A_GPU}")
        else:
            print(f"skipped (needs cuda): {name}: no part of this check could run on the CPU\n"
                  f"     needs a GPU: {left.needs}\n     {ON_A_GPU}")
        return
    except Exception as error:
        if isinstance(error, ExerciseFailed) or not lost_the_gpu(error):
            raise
        raise ExerciseFailed(
            f"FAIL {name}: a CUDA error that this process cannot recover from ({str(error).splitlines()[0]}): every "
            "later CUDA call of this process fails too; restart the kernel (Jupyter: Kernel, Restart Kernel) and run "
            "the cells above again\n     hint: an illegal address is a load or store outside the memory a kernel was "
            "given: which addresses can each program or thread reach (the grid's size, the masks, the strides)? "
            "compute-sanitizer (notebook 05) names the kernel and the address; a device-side assert is a kernel's own "
            "check, such as an index out of range") from None
    finally:
        _checking.reset(token)
    print(f"PASS {name}: {checker.passed} checks passed")


# A sticky CUDA error (an illegal or misaligned address, a launch failure): the process's CUDA context is lost
# (notebook 05, section 3).  Round 44's adversary: a Triton softmax over columns, not rows, stored rows past y on the
# H200, and the check raised the AcceleratorError itself, not a FAIL with a hint.  Which errors are sticky: those a
# kernel can raise among the codes of which the CUDA runtime's reference (cudaError_t) says "This leaves the process in
# an inconsistent state and any further CUDA work will return the same error" (700 illegal address, 702 launch
# timeout, 714 hardware stack error, 715 illegal instruction, 716 misaligned address, 717 invalid address space, 718
# invalid program counter, 719 launch failure), and 710, a device-side assert ("The device cannot be used again ... To
# continue using CUDA, the process must be terminated and relaunched").  Left out, though the reference words them as
# the first group: 911, an error of a device outside CUDA (round 59's engineer), and, from CUDA 12.8, 226
# (cudaErrorContained) and 721 (cudaErrorTensorMemoryLeak) (round 62's engineer): no kernel of these exercises raises
# them, and their text matches none of the patterns below.  Round
# 46's engineer: PyTorch raises AcceleratorError for every CUDA error that reaches C10_CUDA_CHECK ("invalid
# configuration argument" too), so the class alone does not say the GPU is lost; the code where the error carries one,
# else the error's text (PyTorch's "CUDA error: <the runtime's string>", CuPy's and the driver's names).
STICKY_CODES = frozenset((700, 702, 710, 714, 715, 716, 717, 718, 719))
_STICKY = re.compile(r"illegal memory access|illegal address|illegal instruction|misaligned address|"
                     r"unspecified launch failure|device-side assert|launch timed out|invalid program counter|"
                     r"hardware stack error|not supported on global/shared address space|"
                     r"CUDA_ERROR_(ILLEGAL|MISALIGNED|LAUNCH_FAILED|LAUNCH_TIMEOUT|ASSERT|HARDWARE_STACK|INVALID_PC|"
                     r"INVALID_ADDRESS_SPACE)|"
                     r"cudaError(Illegal|Misaligned|LaunchFailure|LaunchTimeout|Assert|HardwareStack|InvalidPc|"
                     r"InvalidAddressSpace)")


def lost_the_gpu(error: BaseException) -> bool:
    """Whether `error` is a CUDA error that ends the process's use of the GPU: a sticky one (STICKY_CODES), by its
    code where it carries one (`error_code`), else by its text (PyTorch's AcceleratorError, CuPy's, the driver's or
    Triton's errors name it)."""
    code = getattr(error, "error_code", None)
    if isinstance(code, int) and not isinstance(code, bool):
        return code in STICKY_CODES
    return bool(_STICKY.search(str(error)))


def _raised_by(tb: TracebackType | None) -> str:
    """The name of the function whose frame raised (the last one of the traceback)."""
    frames = traceback.extract_tb(tb)
    return frames[-1].name if frames else "an exercise"


@contextmanager
def attempt() -> Iterator[None]:
    """Run a cell that uses exercises' functions: an unfinished one makes it print TODO, not a traceback.

        with attempt():
            n = largest_batch(12 * 2**30, 4096, torch.float16)
            print(n)

    prints `TODO largest_batch: not done yet ...` while largest_batch is the stub, and stops the
    block there.  Any other exception passes through unchanged.
    """
    try:
        yield
    except NotImplementedError as error:
        if not is_stub(error):
            raise
        _todo(_raised_by(error.__traceback__))


# ------------------------------------------------------------------------------------------
# CUDA code, run on the CPU: for the part of a GPU check that a CPU can do
# ------------------------------------------------------------------------------------------
class InOrder(torch.Stream):
    """A CUDA stream or event as a CPU sees it: all work runs at once, in order, so there is nothing to wait
    for.  A torch.Stream (of the CPU), so that PyTorch's functions accept it where they take a stream."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        return super().__new__(cls, device="cpu")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    # Each stream or event is itself, as CUDA's are (round 26's adversary: as CPU streams, every imitated stream
    # compared and hashed equal to every other and to the current one, so a right answer's dict keyed by stream kept
    # one entry, and its guard "distinct streams, none the current one" raised); the current stream is one object.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)

    def wait_event(self, event: object = None) -> None:
        pass

    def wait_stream(self, stream: object = None) -> None:
        pass

    def wait(self, stream: object = None) -> None:
        pass

    def record(self, stream: object = None) -> None:
        pass

    def record_event(self, event: Any = None) -> Any:
        return InOrder() if event is None else event

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: object) -> float:
        raise GPUUnavailableError("Event.elapsed_time() needs a CUDA GPU: a CPU has no GPU time to read")

    # The rest of torch.cuda.Stream's surface (round 32's adversary of 01: a right answer that kept a side stream per
    # caller, keyed by `current_stream().cuda_stream`, raised an AttributeError, blamed on it): the stream's handle, an
    # int of its own (the default stream's is 0, as CUDA's legacy default stream's), and its priority (the default).
    @property
    def cuda_stream(self) -> int:
        return 0 if self is _CURRENT or self is _CURRENT_ON_THE_GPU else id(self)

    @property
    def priority(self) -> int:
        return 0

    def __cuda_stream__(self) -> tuple[int, int]:
        return 0, self.cuda_stream


def _is_cuda(device: object) -> bool:
    return (isinstance(device, str) and device.startswith("cuda")) or (
        isinstance(device, torch.device) and device.type == "cuda")


def _is_index(device: object) -> bool:
    """A device given as an int (torch.cuda.current_device(), `device=0`): the accelerator's, the GPU's here (round
    22's adversary: `torch.empty(..., device=torch.cuda.current_device())` raised on the CPU build, and the CPU part
    skipped itself)."""
    return type(device) is int


def _is_cpu(device: object) -> bool:
    return (isinstance(device, str) and device.startswith("cpu")) or (
        isinstance(device, torch.device) and device.type == "cpu")


class InOrderOnTheGPU(InOrder):
    """An `InOrder` stream or event that says it is on the GPU (`.device` is cuda:0), as a CUDA stream does: code that
    asks for a tensor on its stream's device (`device=stream.device`) asks for GPU memory (round 19's adversary)."""

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return torch.device("cuda", 0)

    @property
    def device_index(self) -> int:  # type: ignore[override]
        """0, the GPU's (round 26's adversary: a CPU stream's -1 made torch.device("cuda", s.device_index) raise)."""
        return 0

    def record_event(self, event: Any = None) -> Any:
        return InOrderOnTheGPU() if event is None else event


# the getters of Tensor.is_cuda, Tensor.is_cpu and Tensor.device, as a mode sees them
_IS_CUDA, _IS_CPU, _DEVICE = (vars(torch._C.TensorBase)[name].__get__ for name in ("is_cuda", "is_cpu", "device"))


def _tensors(values: object) -> Iterator[torch.Tensor]:
    """The tensors among `values` (arguments: tensors, and lists or tuples of them)."""
    for value in values if isinstance(values, (list, tuple)) else (values,):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors(value)


def _storage(tensor: torch.Tensor) -> Any:
    """The untyped storage that holds `tensor`'s memory, through functorch's wrappers (torch.func.grad, vjp, vmap:
    a TensorWrapper has no storage of its own, and round 24's adversary's answer written with torch.func crashed the
    CPU part, blamed on the answer); None for a tensor that has none (sparse, nested)."""
    functorch = torch._C._functorch
    while functorch.is_functorch_wrapped_tensor(tensor):
        tensor = functorch.get_unwrapped(tensor)
    try:
        return tensor.untyped_storage()
    except (NotImplementedError, RuntimeError):
        return None


class GPUOnTheCPU(TorchFunctionMode):
    """Tensors asked for on the GPU (device="cuda", .to("cuda"), .cuda()) are made on the CPU instead;
    `placed` holds the bytes of each (of its storage), in order, and `made` a weak reference to each storage (what is
    still alive after a call, the answer kept, through the tensor or any view of it).

    `like_a_gpu`: the tensors so made say they are on the GPU (`.is_cuda`, `.is_cpu`, `.device`, `.get_device()`), and
    so does every tensor of new memory that an operation makes from one of them (`x * 2`, `torch.empty_like(x)`:
    counted in `placed` too); `.cpu()` and `.to("cpu")` of one copy it, as on a GPU; host tensors pinned with
    `.pin_memory()` (here a copy) say `.is_pinned()`.  An answer that branches on where its tensors are, or asks for
    memory on `x.device`, then takes the GPU's branch and asks for GPU memory (round 19's adversary: its CPU branch
    was judged, and its tensors on `stream.device` were never counted)."""

    def __init__(self, like_a_gpu: bool = False) -> None:
        super().__init__()
        self.like_a_gpu = like_a_gpu
        self.placed: list[int] = []
        self.made: list[StorageWeakRef] = []
        self._index: dict[int, int] = {}  # storage -> its place in `placed`, which grows with it (`_grown`)
        self._gpu: dict[int, StorageWeakRef] = {}  # storage -> a weak reference to it, for the GPU's tensors
        self._pinned: dict[int, StorageWeakRef] = {}  # the same, for host tensors pinned here

    @staticmethod
    def _holds(memory: dict[int, StorageWeakRef], tensor: torch.Tensor) -> bool:
        storage = _storage(tensor)
        ref = None if storage is None else memory.get(storage._cdata)
        return ref is not None and not ref.expired()

    def on_gpu(self, tensor: torch.Tensor) -> bool:
        """Whether `tensor` is one the answer asked for on the GPU (or made from one, `like_a_gpu`)."""
        return self._holds(self._gpu, tensor)

    def adopt(self, *tensors: torch.Tensor) -> None:
        """Take tensors the check made on the CPU before the mode (its inputs: a model's parameters, batches) as the
        GPU's, as if made there: not counted in `placed` (the answer did not ask for them)."""
        for tensor in tensors:
            storage = _storage(tensor)
            if storage is not None:
                self._gpu[storage._cdata] = StorageWeakRef(storage)

    def _place(self, tensor: torch.Tensor) -> None:
        storage = _storage(tensor)
        if storage is None or self._holds(self._gpu, tensor):
            return  # memory already placed: a view, or an operation that returned its input (copy_, .to of a GPU one)
        ref = StorageWeakRef(storage)
        self._gpu[storage._cdata] = ref
        self._index[storage._cdata] = len(self.placed)
        self.placed.append(storage.nbytes())
        self.made.append(ref)

    def _grown(self, tensors: Iterator[torch.Tensor]) -> None:
        """Count the memory of GPU tensors whose storage grew after it was placed (round 22's adversary: made with
        torch.empty(0, device="cuda"), then `resize_`, `resize_as_` or an `out=` that resizes, each was counted at 0
        bytes): a storage's entry in `placed` is the most it has held."""
        for tensor in tensors:
            storage = _storage(tensor)
            index = None if storage is None else self._index.get(storage._cdata)
            if index is not None and self._holds(self._gpu, tensor) and storage.nbytes() > self.placed[index]:
                self.placed[index] = storage.nbytes()

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.record_stream:
            return None  # nothing runs later on a CPU: no stream can still be using the memory
        if kwargs.get("pin_memory"):  # torch.empty(k, pin_memory=True): a CPU build has no pinned memory (round 26's
            del kwargs["pin_memory"]  # adversary: its RuntimeError was blamed on a right answer); pinned, as imitated
            pinned = self.__torch_function__(func, types, args, kwargs)
            if self.like_a_gpu and isinstance(pinned, torch.Tensor):
                self._pinned[pinned.untyped_storage()._cdata] = StorageWeakRef(pinned.untyped_storage())
            return pinned
        if self.like_a_gpu:
            if func == _IS_CUDA or func == _IS_CPU or func is torch.Tensor.get_device or func == _DEVICE:
                gpu = self.on_gpu(args[0])
                if func == _IS_CUDA or func == _IS_CPU:
                    return gpu == (func == _IS_CUDA)
                if func is torch.Tensor.get_device:
                    return 0 if gpu else -1
                return torch.device("cuda", 0) if gpu else func(*args, **kwargs)
            if func is torch.Tensor.is_pinned:
                return self._holds(self._pinned, args[0])
            if func is torch.Tensor.pin_memory:
                pinned = args[0].clone()
                self._pinned[pinned.untyped_storage()._cdata] = StorageWeakRef(pinned.untyped_storage())
                return pinned
            if (func is torch.Tensor.cpu or (func is torch.Tensor.to and (
                    any(_is_cpu(a) for a in args[1:]) or _is_cpu(kwargs.get("device"))))) and self.on_gpu(args[0]):
                return args[0].clone() if func is torch.Tensor.cpu else func(*args, **{**kwargs, "copy": True})
        index_to = func is torch.Tensor.to and len(args) > 1 and _is_index(args[1])  # x.to(0)
        to_gpu = (func is torch.Tensor.cuda or _is_cuda(kwargs.get("device")) or _is_index(kwargs.get("device"))
                  or index_to or any(_is_cuda(a) for a in args[1:]))
        if func is torch.Tensor.cuda:
            func, args, kwargs = torch.Tensor.clone, args[:1], {}
        elif to_gpu:
            args = tuple("cpu" if _is_cuda(a) or (index_to and i == 1) else a for i, a in enumerate(args))
            kwargs = {k: "cpu" if _is_cuda(v) or (k == "device" and _is_index(v)) else v for k, v in kwargs.items()}
            if func is torch.Tensor.to and not (self.like_a_gpu and self.on_gpu(args[0])):
                kwargs["copy"] = True  # a copy, as on a GPU: .to("cpu") of a CPU tensor would be the tensor itself
        from_gpu = self.like_a_gpu and not to_gpu and any(self.on_gpu(t) for t in _tensors(args)) and not any(
            _is_cpu(v) for v in kwargs.values())
        result = func(*args, **kwargs)
        if to_gpu or from_gpu:
            for made in _tensors(result):
                storage = _storage(made)
                if to_gpu or storage is None or not any(
                        storage._cdata == getattr(_storage(t), "_cdata", None) for t in _tensors(args)):
                    self._place(made)
        if self._index:
            self._grown(itertools.chain(_tensors(args), _tensors(list(kwargs.values())), _tensors(result)))
        return result


class _OnTheDevice(nullcontext):
    """torch.cuda.device(...) and torch.cuda.device_of(...) on a machine of one GPU, the one current already."""

    def __init__(self, device: object = None) -> None:
        super().__init__()
        self.idx = 0


_CURRENT = InOrder()
# The stream made current inside cuda_on_cpu (torch.cuda.stream(s), set_stream(s)), None for the default one: each
# imitated stream being itself (InOrder.__eq__), the current stream is the one the code entered, as on a GPU.
_ENTERED: list[Any] = [None]


@contextmanager
def _in_stream(stream: Any = None) -> Iterator[None]:
    """torch.cuda.stream(stream) imitated: `stream` current for the block (None: nothing changes)."""
    before = _ENTERED[0]
    if stream is not None:
        _ENTERED[0] = stream
    try:
        yield
    finally:
        _ENTERED[0] = before


def _current(default: Any) -> Any:
    return default if _ENTERED[0] is None else _ENTERED[0]


def _set_stream(stream: Any = None) -> None:
    if stream is not None:
        _ENTERED[0] = stream


_IMITATED = {"synchronize": lambda device=None: None, "current_stream": lambda device=None: _current(_CURRENT),
             "default_stream": lambda device=None: _CURRENT, "stream": _in_stream,
             "set_stream": _set_stream, "Stream": InOrder, "Event": InOrder,
             # the one GPU is current already (round 22's adversary: `with torch.cuda.device(x.device):` raised the
             # CPU build's "compiled without CUDA support", blamed on the answer)
             "device": _OnTheDevice, "device_of": _OnTheDevice,
             # the GPU's generator named (torch.rand(..., generator=torch.cuda.default_generators[0])) is the CPU's
             # here, as the tensors are: on a CPU build the tuple is empty, and [0] raised an IndexError
             "default_generators": (torch.default_generator,)}
_CURRENT_ON_THE_GPU = InOrderOnTheGPU()
# Raw blocks of the imitated GPU's memory (torch.cuda.caching_allocator_alloc), by their address: tensors asked for on
# the GPU, so made on the CPU and counted as the GPU's (GPUOnTheCPU), alive until caching_allocator_delete or the end
# of cuda_on_cpu (round 32's adversary of 01: a right warm-up done with them raised a TypeError, blamed on it).
_RAW_BLOCKS: dict[int, torch.Tensor] = {}


def _raw_alloc(size: int, device: object = None, stream: object = None) -> int:
    block = torch.empty(max(int(size), 1), dtype=torch.uint8, device="cuda")
    _RAW_BLOCKS[block.data_ptr()] = block
    return block.data_ptr()


def _raw_delete(mem_ptr: int) -> None:
    _RAW_BLOCKS.pop(mem_ptr, None)


_IMITATED.update({"caching_allocator_alloc": _raw_alloc, "caching_allocator_delete": _raw_delete})
_LIKE_A_GPU = {**_IMITATED, "current_stream": lambda device=None: _current(_CURRENT_ON_THE_GPU),
               "default_stream": lambda device=None: _CURRENT_ON_THE_GPU, "Stream": InOrderOnTheGPU,
               "Event": InOrderOnTheGPU, "is_available": lambda: True, "device_count": lambda: 1,
               "current_device": lambda: 0}


# torch.accelerator (PyTorch 2.6 and later), the device-generic spelling of torch.cuda's, as `like_a_gpu` imitates it:
# through torch.cuda's names as they are at the call (so that an imitation of torch.cuda's, HostWaits' counting
# synchronize(), counts these too).  Round 21's adversary: torch.accelerator said "no accelerator" inside
# cuda_on_cpu(like_a_gpu=True), so an answer's `if torch.accelerator.is_available(): torch.accelerator.synchronize()`
# was judged on a branch a GPU never takes, and a right answer's torch.accelerator.synchronize() raised.
_ACCELERATOR = {"is_available": lambda: True,
                "current_accelerator": lambda check_available=False: torch.device("cuda"),
                "device_count": lambda: 1, "current_device_index": lambda: 0, "current_device_idx": lambda: 0,
                "set_device_index": lambda device=None: None, "set_device_idx": lambda device=None: None,
                "synchronize": lambda device=None: torch.cuda.synchronize(),
                "current_stream": lambda device=None: torch.cuda.current_stream(),
                "set_stream": lambda stream: torch.cuda.set_stream(stream)}
_ACCELERATOR_IMITATED = {name: imitation for name, imitation in _ACCELERATOR.items()
                         if hasattr(getattr(torch, "accelerator", None), name)}


@contextmanager
def cuda_on_cpu(like_a_gpu: bool = False) -> Iterator[GPUOnTheCPU]:
    """Run CUDA code on the CPU, in order: tensors for the GPU are made on the CPU (GPUOnTheCPU), and
    torch.cuda's streams, events and synchronize() are `InOrder`.  Values come out as on a GPU
    without a race; races, waits of the host and speed need a GPU.

    `like_a_gpu`: nothing tells the answer that it runs on a CPU (round 19's adversary: an answer that branched on
    `x.is_cuda` or `torch.cuda.is_available()` was judged on its CPU branch): `torch.cuda.is_available()` is True,
    and so is torch.accelerator's (round 21's adversary: it said none), the streams and events are on cuda:0, and
    the tensors made for the GPU, and from them, say they are there (GPUOnTheCPU's `like_a_gpu`)."""
    imitated = _LIKE_A_GPU if like_a_gpu else _IMITATED
    accelerator = _ACCELERATOR_IMITATED if like_a_gpu else {}
    saved = {name: getattr(torch.cuda, name) for name in imitated}
    saved_accelerator = {name: getattr(torch.accelerator, name) for name in accelerator}
    entered = _ENTERED[0]
    try:
        for name, imitation in imitated.items():
            setattr(torch.cuda, name, imitation)
        for name, imitation in accelerator.items():
            setattr(torch.accelerator, name, imitation)
        with GPUOnTheCPU(like_a_gpu) as mode:
            yield mode
    finally:
        for name, original in saved.items():
            setattr(torch.cuda, name, original)
        for name, original in saved_accelerator.items():
            setattr(torch.accelerator, name, original)
        _ENTERED[0] = entered
        if torch.cuda.caching_allocator_alloc is not _raw_alloc:  # the outermost cuda_on_cpu has ended
            _RAW_BLOCKS.clear()


# ------------------------------------------------------------------------------------------
# The registry of exercises
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Exercise:
    """One check of one exercise, as its check cell in solutions/<notebook>.ipynb calls it:

        nbNN.<check.__name__>(<name>)

    - notebook: the notebook's stem, "01_memory" (solutions/ and exercises/ hold one each);
    - name: the function the student writes (a cell tagged `exercise` defines it);
    - check: the check, a function of the student's function;
    - gpu: the check needs a CUDA GPU (its cell starts with `%%requires cuda`);
    - label: what the check prints after PASS, TODO or FAIL (default: `name`);
    - cpu_checks (a GPU check): None if without a GPU it raises GPUUnavailableError; else what it prints
      there: 0, that no part could run on the CPU; n > 0, `PART` with n checks passed on the CPU;
    - fresh_processes: every answer runs in fresh processes (the tests may run its answers side by side);
    - requires: `%%requires` names (utils/cells.py) the check needs besides a GPU, on every machine ("triton"):
      where one is missing, the check says so and checks nothing, and the tests of its answers are skipped.

    Its typical wrong answers, and any other right answers, are in `answers/nbNN.py`, in the dicts
    WRONG and ALSO_RIGHT under the check's name: `wrong` and `also_right` read them.
    """

    notebook: str
    name: str
    check: Callable[[Callable], None]
    gpu: bool = False
    label: str = ""
    cpu_checks: int | None = None
    fresh_processes: bool = False
    requires: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """What the check prints after PASS, TODO or FAIL."""
        return self.label or self.name

    @property
    def key(self) -> str:
        """A unique name: the notebook and the check, "01_memory:check_block_memory"."""
        return f"{self.notebook}:{self.check.__name__}"

    @property
    def module(self) -> str:
        """The check's module's short name, "nb01"."""
        return self.check.__module__.rsplit(".", 1)[-1]

    def _answers(self, kind: str) -> dict[str, Callable]:
        name = f"{__name__}.answers.{self.module}"
        if importlib.util.find_spec(name) is None:  # none yet: the tests say what is missing
            return {}
        return dict(getattr(importlib.import_module(name), kind, {}).get(self.check.__name__, {}))

    @property
    def wrong(self) -> dict[str, Callable]:
        """Typical wrong answers, by what is wrong with them: each must FAIL with a hint."""
        return self._answers("WRONG")

    @property
    def also_right(self) -> dict[str, Callable]:
        """Right answers other than the solution, by what they do differently: each must PASS."""
        return self._answers("ALSO_RIGHT")


_REGISTRY: dict[str, Exercise] = {}


def register(*exercises: Exercise) -> None:
    """Add exercises to the registry (each check module registers its own, when imported)."""
    for ex in exercises:
        if _REGISTRY.get(ex.key, ex) != ex:
            raise ValueError(f"two exercises registered as {ex.key}")
        _REGISTRY[ex.key] = ex


CHECK_MODULE = re.compile(r"nb\d\d")


def registry() -> list[Exercise]:
    """Every registered exercise of every notebook, in the order notebook by notebook.

    Imports every check module `utils/exercises/nbNN.py`, each of which registers its exercises.
    """
    for info in pkgutil.iter_modules(__path__):
        if CHECK_MODULE.fullmatch(info.name):
            importlib.import_module(f"{__name__}.{info.name}")
    return sorted(_REGISTRY.values(), key=lambda ex: ex.notebook)


def what_returned(x: object, device: bool = True) -> str:
    """What a student returned, in a few words: "a torch.float32 tensor of shape (4,) on cuda:0", "a list"."""
    if isinstance(x, torch.Tensor):
        return f"a {x.dtype} tensor of shape {tuple(x.shape)}" + (f" on {x.device}" if device else "")
    return f"a {type(x).__name__}"


class Findings:
    """An exercise's sub-checks, collected: a FAIL then says how many failed, and each with its hint."""

    def __init__(self) -> None:
        self.failed: list[tuple[str, str]] = []
        self.total = 0

    def expect(self, ok: bool, problem: str, hint: str) -> bool:
        self.total += 1
        if not ok:
            self.failed.append((problem, hint))
        return ok

    def report(self, ex: Checker) -> None:
        """Add the passed sub-checks to `ex`, or FAIL with every failed one."""
        ex.passed += self.total - len(self.failed)
        if not self.failed:
            return
        (problem, hint), *more = self.failed
        rest = "".join(f"\n     also: {p}\n     hint: {'(as above)' if h == hint else h}" for p, h in more)
        ex.expect(False, f"{len(self.failed)} of {self.total} checks failed. {problem}", hint + rest)
