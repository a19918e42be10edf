"""The process-wide settings that an exercise's answer has no reason to change for its caller (grad mode, the
default dtype and device, ...): read before a call, compared after it, put back, in one place for every check.

Round 19's adversaries left grad mode off, the default dtype float64 or deterministic algorithms on inside an
answer, and passed: the caller's code after the call ran under them (its next backward() raised, its tensors were
float64), and so did the check's own reference.  Each check that calls an answer wraps it with `keeping` (or reads
and puts back with `read` and `put_back` where it reports in its own words).  Lecture 08's check keeps its own,
larger set (`nb08._settings`: the two TF32 APIs, autocast, the generators), built on `default_device` here.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np
import torch

R = TypeVar("R")


def default_device() -> object:
    """The device that torch.set_default_device set, or None.  Not torch.get_default_device(): on a machine without
    the device set, that reads "cpu", while the mode stays pushed for every tensor made after."""
    context = getattr(getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None), "device_context", None)
    return None if context is None else getattr(context, "device", context)


def _deterministic() -> tuple[bool, bool]:
    return torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()


def _set_deterministic(value: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


# name (as a message shows it): how to read it, how to put it back
SETTINGS: dict[str, tuple[Callable[[], Any], Callable[[Any], object]]] = {
    "torch.is_grad_enabled()": (torch.is_grad_enabled, torch.set_grad_enabled),
    "torch.get_default_dtype()": (torch.get_default_dtype, torch.set_default_dtype),
    "torch.set_default_device(...)": (default_device, torch.set_default_device),
    "torch.get_float32_matmul_precision()": (torch.get_float32_matmul_precision,
                                             torch.set_float32_matmul_precision),
    "torch.use_deterministic_algorithms(...)": (_deterministic, _set_deterministic),
    "torch.is_anomaly_enabled()": (torch.is_anomaly_enabled, torch.set_anomaly_enabled),
    "torch.get_num_threads()": (torch.get_num_threads, torch.set_num_threads),
    "np.geterr()": (np.geterr, lambda errors: np.seterr(**errors)),
}

# What every check of a function watches; a check adds others where its answers are likely to touch them
BASIC = ("torch.is_grad_enabled()", "torch.get_default_dtype()", "torch.set_default_device(...)",
         "torch.get_float32_matmul_precision()", "torch.use_deterministic_algorithms(...)")

HINT = ("a global setting changed inside your function changes it for the caller too, after the call: change none, "
        "or put it back before you return (a `with` block does)")


def read(names: Iterable[str] = BASIC) -> dict[str, Any]:
    """The settings `names`, as they are now."""
    return {name: SETTINGS[name][0]() for name in names}


def put_back(before: dict[str, Any]) -> list[str]:
    """Put back those of `before` that differ now; return their names, in `before`'s order."""
    now = read(before)
    changed = [name for name in before if now[name] != before[name]]
    for name in changed:
        SETTINGS[name][1](before[name])
    return changed


def keeping(ex: Any, yours: Callable[..., R], names: Sequence[str] = BASIC, hint: str = HINT) -> Callable[..., R]:
    """The answer as the check calls it: a setting of `names` that it changes is put back at once, whether it
    returned or raised, and FAILs (`ex.expect`), naming the first one changed."""

    def call(*args: Any, **kwargs: Any) -> R:
        before = read(names)
        try:
            return yours(*args, **kwargs)
        finally:
            after = read(names)
            changed = put_back(before)
            if changed:
                ex.expect(False, f"{ex.name} left {changed[0]} {after[changed[0]]} after it returned (it was "
                                 f"{before[changed[0]]})", hint)

    return call
