"""requirements.txt (pip) and environment.yml (conda) install the same packages."""

import re

import yaml

from conftest import ROOT

REQUIRED = {"torch", "cupy-cuda12x", "numpy", "jupyterlab", "nbval", "matplotlib", "pytest"}


def pip_requirements() -> dict[str, str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    reqs = [ln.split("#")[0].strip() for ln in lines]
    return dict(re.match(r"([A-Za-z0-9_.-]+)(.*)", r).groups() for r in reqs if r)


def conda_pip_section() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return dict(re.match(r"([A-Za-z0-9_.-]+)(.*)", r).groups() for r in pip)


def test_pip_and_conda_agree():
    assert pip_requirements() == conda_pip_section()


def test_everything_the_course_needs_is_listed():
    assert REQUIRED <= set(pip_requirements())


def test_versions_are_pinned():
    assert all(spec.startswith("==") for spec in pip_requirements().values())


def test_conda_brings_python_and_pip():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    plain = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "pip" in plain and any(d.startswith("python=") for d in plain)
