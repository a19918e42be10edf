"""The pip files (students' requirements.txt, requirements-gpu.txt, the tests' requirements-dev.txt),
environment.yml (conda) and README's commands: the same pinned packages, and nothing more for a student."""

import re

import pytest
import yaml

from conftest import ROOT

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

STUDENT = {"torch", "numpy", "matplotlib", "jupyterlab", "ipykernel",  # what the notebooks import, and Jupyter
           "jupyterlab-rise",  # the lectures as slides
           "hypothesis"}  # the exercise checks' generated inputs
NOT_FOR_STUDENTS = {"cupy-cuda12x", "playwright", "ruff", "mypy", "nbval", "pytest"}


def pip_requirements(name: str = "requirements.txt") -> dict[str, str]:
    """The pinned packages of a pip file, with those of the files it includes (-r)."""
    found: dict[str, str] = {}
    for line in (ROOT / name).read_text().splitlines():
        req = line.split("#")[0].strip()
        if req.startswith("-r "):
            found |= pip_requirements(req.removeprefix("-r ").strip())
        elif req:
            package, spec = re.match(r"([A-Za-z0-9_.-]+)(.*)", req).groups()
            found[package] = spec
    return found


def conda_pip_section() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return dict(re.match(r"([A-Za-z0-9_.-]+)(.*)", r).groups() for r in pip)


def test_conda_is_the_students_gpu_set():
    assert conda_pip_section() == pip_requirements() | pip_requirements("requirements-gpu.txt")


def test_a_student_installs_what_the_notebooks_need_and_nothing_else():
    assert set(pip_requirements()) == STUDENT
    assert set(pip_requirements("requirements-gpu.txt")) == {"cupy-cuda12x"}
    assert NOT_FOR_STUDENTS - {"cupy-cuda12x"} <= set(pip_requirements("requirements-dev.txt"))
    assert pip_requirements().items() <= pip_requirements("requirements-dev.txt").items()


def test_versions_are_pinned():
    files = ("requirements.txt", "requirements-gpu.txt", "requirements-dev.txt")
    assert all(spec.startswith("==") for name in files for spec in pip_requirements(name).values())


def test_conda_brings_python_and_pip():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    plain = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "pip" in plain and any(d.startswith("python=") for d in plain)


# README.md's set-up commands: the blocks that students paste, and that CI (.ci/run) and the browser
# test (tests/test_browser.py) read from README.md itself, must agree with each other and with the pins.
OPEN = "Set up, and open the course"
TESTS = "Set up, and run the tests"


def readme_blocks(heading: str) -> list[str]:
    """The ```bash blocks of README.md's section `## heading`, in order, each without its fences."""
    text = (ROOT / "README.md").read_text()
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert section, f"README.md has no section '## {heading}'"
    return re.findall(r"^```bash\n(.*?)^```$", section.group(1), re.MULTILINE | re.DOTALL)


def set_up_and_last(block: str) -> tuple[list[str], str]:
    """A README block's set-up lines (each ending with `&&`) and its last line, the command proper."""
    *set_up, last = block.strip().splitlines()
    assert set_up and all(line.endswith(" &&") for line in set_up), block
    return set_up, last


def test_readme_set_up_is_the_same_for_the_course_and_the_tests():
    cpu, gpu = (set_up_and_last(b) for b in readme_blocks(OPEN))
    (tests,) = (set_up_and_last(b) for b in readme_blocks(TESTS))
    assert tests[0] == [line.replace("-r requirements.txt", "-r requirements-dev.txt") for line in cpu[0]], (
        "the tests' set-up (run by CI) is the CPU set-up that opens the course, with the tests' tools")
    assert gpu[0] == [line.replace("-r requirements.txt", "-r requirements.txt -r requirements-gpu.txt")
                      for line in cpu[0] if "download.pytorch.org" not in line]
    assert not any("requirements-gpu.txt" in line for line in cpu[0] + tests[0]), "no CuPy without a GPU"
    assert cpu[1] == gpu[1] and cpu[1].startswith("jupyter lab ")
    assert tests[1] == "python -m pytest"


def test_readme_takes_only_torch_from_pytorchs_index_at_the_pinned_version():
    lines = [ln for b in readme_blocks(OPEN) + readme_blocks(TESTS) for ln in b.splitlines()]
    from_pytorch = [ln for ln in lines if "download.pytorch.org" in ln]
    assert from_pytorch, "the CPU set-up takes torch from PyTorch's CPU index"
    torch = f"torch{pip_requirements()['torch']}"
    for line in from_pytorch:
        assert line.split()[:5] == ["python", "-m", "pip", "install", torch], line
        assert "--no-deps" in line.split() and "-r" not in line.split(), line
