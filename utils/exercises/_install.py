"""Hypothesis on Colab, which does not preinstall it: the exercise checks need it (utils/exercises/properties.py).

Everywhere else the course's set-up installs it (requirements.txt); there a missing Hypothesis is an error
that says what to run.  On Colab, where the setup cell has already fetched the course over the network,
the first check installs the version requirements.txt pins, once, and says so.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from ..device import on_colab

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def pinned() -> str:
    """The line of requirements.txt that pins Hypothesis, "hypothesis==X.Y.Z"."""
    found = re.search(r"^hypothesis==[\w.]+", REQUIREMENTS.read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"{REQUIREMENTS} pins no version of hypothesis")
    return found.group(0)


def hypothesis_for_colab() -> ModuleType:
    """Import Hypothesis; on Colab install it first if it is missing."""
    if not on_colab():
        raise ImportError("the exercise checks need Hypothesis: in the course's environment, run "
                          "`python -m pip install -r requirements.txt` (README, 'Set up')")
    print(f"installing {pinned()} for the exercise checks (Colab does not have it)")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", pinned()], check=True)
    importlib.invalidate_caches()
    return importlib.import_module("hypothesis")
