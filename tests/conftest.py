"""Make the repository's root importable (utils, tools) for every test."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import utils  # noqa: E402

gpu = pytest.mark.skipif(not utils.has_cuda(), reason=f"needs a CUDA GPU: {utils.cuda_status().reason}")
cpu_only = pytest.mark.skipif(utils.has_cuda(), reason="checks the behaviour on a machine without a GPU")
