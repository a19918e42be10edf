"""Generate exercises/ from solutions/: each solution becomes a TODO, and outputs are removed.

In a solution notebook, the lines between `### BEGIN SOLUTION` and `### END SOLUTION` (the markers
nbgrader uses) are the answer.  The exercise keeps everything else and puts in their place

    # TODO: your code here
    raise NotImplementedError("...")

indented like the markers.  Outputs, execution counts and the reference-run stamp are dropped.

    python -m tools.make_exercises           # write exercises/
    python -m tools.make_exercises --check   # exit 1 if exercises/ is not what solutions/ gives

Why by hand: nbgrader's ClearSolutions does this too, but it comes with a whole grading system
(a database, a server extension); this is the one transformation the course needs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

from tools.course import EXERCISES, ROOT, SOLUTIONS, colab_badge, notebooks, read

BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")
STAMP_KEY = "course"


def strip_solutions(source: str) -> str:
    """Replace each marked solution block with a TODO that raises NotImplementedError."""
    out: list[str] = []
    indent: str | None = None
    for line in source.splitlines():
        if indent is None and (m := BEGIN.match(line)):
            indent = m.group(1)
            out += [f"{indent}# TODO: your code here", f'{indent}raise NotImplementedError("exercise not done yet")']
        elif indent is not None:
            if END.match(line):
                indent = None
        else:
            out.append(line)
    if indent is not None:
        raise ValueError("a '### BEGIN SOLUTION' has no matching '### END SOLUTION'")
    return "\n".join(out)


def exercise_from(solution: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """The exercise notebook, to be written at `path`, made from a solution notebook."""
    nb = nbformat.from_dict(solution)  # a deep copy
    nb.metadata.pop(STAMP_KEY, None)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "colab-badge.svg" in cell.source:
            cell.source = "\n".join(colab_badge(path) if "colab-badge.svg" in line else line
                                    for line in cell.source.splitlines())
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source)
            cell.outputs = []
            cell.execution_count = None
        cell.get("metadata", {}).pop("execution", None)
    return nb


def expected(solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> dict[Path, str]:
    """What `exercises` should contain, file by file, as text."""
    result = {}
    for path in notebooks(solutions):
        solution, target = read(path), exercises / path.name
        result[target] = nbformat.writes(exercise_from(solution, target)) + "\n"
    return result


def stale(solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> list[str]:
    """Exercise files that are missing, outdated or without a solution; empty when up to date."""
    want = expected(solutions, exercises)
    problems = []
    for path, text in want.items():
        if not path.exists():
            problems.append(f"{path.name}: not generated")
        elif path.read_text() != text:
            problems.append(f"{path.name}: differs from what its solution gives")
    for path in sorted(set(exercises.glob("*.ipynb")) - set(want)):
        problems.append(f"{path.name}: has no solution notebook")
    return problems


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        problems = stale()
        for problem in problems:
            print(problem)
        if problems:
            print("exercises/ is out of date: run `python -m tools.make_exercises`")
        return 1 if problems else 0
    if argv:
        print(__doc__)
        return 2
    EXERCISES.mkdir(exist_ok=True)
    for path, text in expected().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
