"""Generate exercises/ from solutions/: each solution becomes a TODO, and outputs are removed.

In a solution notebook, the lines between `### BEGIN SOLUTION` and `### END SOLUTION` (the markers
nbgrader uses) are the answer.  The exercise keeps everything else and puts in their place

    # TODO: your code here
    raise NotImplementedError("exercise not done yet")

indented like the markers (the message is `utils.exercises.STUB_MESSAGE`: the checks say TODO for
this error and for no other).  Outputs, execution counts, the reference-run stamp and the cells
tagged `discussion` are dropped; cell tags are kept.

Cells are found by their tags (a cell's `metadata.tags`), never by position:

- `exercise`        a cell holding a solution between the markers: the function the student writes;
- `exercise-check`  a cell that calls a check, `nbNN.check_something(function)`;
- `imports`         the cell that imports what the exercises need (one per notebook with exercises);
- `exercise-given`  code given with an exercise that its function needs (a dataclass, say);
- `discussion`      a markdown cell that explains an answer: solutions/ keep it, exercises/ leave it out;
- `question`        a markdown cell for the student (a prompt, what to try next): both keep it.

Text right after a check cell must be a heading or carry one of the last two tags, so that no
explanation of an answer reaches exercises/ by default.

The tool writes the first two into solutions/ (from the markers and the check calls), and refuses
a cell tagged `exercise` without markers, or `exercise-check` without a check call: fix those by
hand.  The other two are the author's.  tests/test_exercises.py runs the cells tagged `imports`,
`exercise-given` and `exercise` to get the functions, and matches the check cells with the registry
of exercises (`utils.exercises.registry()`).

    python -m tools.make_exercises           # tag solutions/ and write exercises/
    python -m tools.make_exercises --check   # exit 1 if a tag is missing or exercises/ is out of date

Why by hand: nbgrader's ClearSolutions does this too, but it comes with a whole grading system
(a database, a server extension); this is the one transformation the course needs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

from tools.course import EXERCISES, ROOT, SOLUTIONS, colab_badge, exercises_name, notebooks, read, write
from utils.exercises import STUB_MESSAGE

BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")
STAMP_KEY = "course"

EXERCISE_TAG, CHECK_TAG, IMPORTS_TAG, GIVEN_TAG = "exercise", "exercise-check", "imports", "exercise-given"
DISCUSSION_TAG, QUESTION_TAG = "discussion", "question"  # markdown: the answer explained (solutions only); a prompt
DEFINITION_TAGS = frozenset({IMPORTS_TAG, GIVEN_TAG, EXERCISE_TAG})  # the cells that define what a check is given
CHECK_CALL = re.compile(r"^(nb\d\d)\.(check_\w+)\((\w+)\)\s*$", re.MULTILINE)  # nb01.check_x(f), a line of its own
ANY_CHECK_CALL = re.compile(r"\bnb\d\d\.check_\w+\(")  # any call of a check, however written
STUB_LINE = f"raise NotImplementedError({json.dumps(STUB_MESSAGE)})"


def strip_solutions(source: str) -> str:
    """Replace each marked solution block with a TODO that raises NotImplementedError(STUB_MESSAGE)."""
    out: list[str] = []
    indent: str | None = None
    for line in source.splitlines():
        if indent is None and (m := BEGIN.match(line)):
            indent = m.group(1)
            out += [f"{indent}# TODO: your code here", f"{indent}{STUB_LINE}"]
        elif indent is not None:
            if END.match(line):
                indent = None
        else:
            out.append(line)
    if indent is not None:
        raise ValueError("a '### BEGIN SOLUTION' has no matching '### END SOLUTION'")
    return "\n".join(out)


# ------------------------------------------------------------------------------------------
# Tags
# ------------------------------------------------------------------------------------------
def tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def has_markers(cell: nbformat.NotebookNode) -> bool:
    return any(BEGIN.match(line) for line in cell.source.splitlines())


def check_calls(cell: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    """The checks a code cell calls, as (module, check, argument): `nb01.check_x(f)` gives ("nb01", "check_x", "f")."""
    return CHECK_CALL.findall(cell.source) if cell.cell_type == "code" else []


def calls_a_check(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and bool(ANY_CHECK_CALL.search(cell.source))


def cells_tagged(nb: nbformat.NotebookNode, *wanted: str) -> list[nbformat.NotebookNode]:
    """The notebook's code cells that carry any of these tags, in order."""
    return [c for c in nb.cells if c.cell_type == "code" and set(wanted) & set(tags(c))]


def add_tags(nb: nbformat.NotebookNode) -> bool:
    """Tag a solution notebook's cells: `exercise` where there are markers, `exercise-check` where a
    check is called.  True if a tag was added."""
    changed = False
    for cell in nb.cells:
        wanted = [EXERCISE_TAG] * has_markers(cell) + [CHECK_TAG] * calls_a_check(cell)
        for tag in wanted:
            if cell.cell_type == "code" and tag not in tags(cell):
                cell.setdefault("metadata", {}).setdefault("tags", []).append(tag)
                changed = True
    return changed


def _is_plain_python(source: str) -> bool:
    return not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines())


def tag_problems(nb: nbformat.NotebookNode, solution: bool = True) -> list[str]:
    """What is wrong with a notebook's exercise tags (empty when nothing): see the module's docstring.

    `solution`: a solutions notebook (its exercise cells hold markers); else an exercise notebook
    (they hold the stub).
    """
    problems = []
    for n, cell in enumerate(nb.cells):
        where, cell_tags = f"cell {n}", tags(cell)
        after_check = n > 0 and CHECK_TAG in tags(nb.cells[n - 1])
        if cell.cell_type == "markdown" and not solution and DISCUSSION_TAG in cell_tags:
            problems.append(f"{where}: an exercise notebook holds a `{DISCUSSION_TAG}` cell (the answer explained)")
        if cell.cell_type == "markdown" and after_check and not cell.source.lstrip().startswith("#") \
                and not {DISCUSSION_TAG, QUESTION_TAG, "navigation"} & set(cell_tags):
            problems.append(f"{where}: text right after a check, untagged: tag it `{DISCUSSION_TAG}` if it explains "
                            f"the answer (left out of exercises/), `{QUESTION_TAG}` if it is for the student")
        if cell.cell_type != "code":
            if set(cell_tags) & (DEFINITION_TAGS | {CHECK_TAG}) or BEGIN.search(cell.source):
                problems.append(f"{where}: a {cell.cell_type} cell with exercise tags or solution markers")
            continue
        if solution and has_markers(cell) != (EXERCISE_TAG in cell_tags):
            problems.append(f"{where}: solution markers without the tag `{EXERCISE_TAG}`" if has_markers(cell)
                            else f"{where}: tagged `{EXERCISE_TAG}` but holds no solution markers")
        if not solution and EXERCISE_TAG in cell_tags and STUB_LINE not in cell.source:
            problems.append(f"{where}: tagged `{EXERCISE_TAG}` but holds no stub ({STUB_LINE})")
        if not solution and has_markers(cell):
            problems.append(f"{where}: an exercise notebook with solution markers")
        calls = check_calls(cell)
        if calls_a_check(cell) and CHECK_TAG not in cell_tags:
            problems.append(f"{where}: calls a check without the tag `{CHECK_TAG}`")
        if (CHECK_TAG in cell_tags or calls_a_check(cell)) and (
                len(calls) != 1 or len(ANY_CHECK_CALL.findall(cell.source)) != 1):
            problems.append(f"{where}: a check cell calls one check, as `nbNN.check_name(function)` on a line "
                            f"of its own (found {len(ANY_CHECK_CALL.findall(cell.source))} calls)")
        if set(cell_tags) & DEFINITION_TAGS and not _is_plain_python(cell.source):
            problems.append(f"{where}: tagged {sorted(set(cell_tags) & DEFINITION_TAGS)} but holds IPython "
                            "syntax (% or !): the tests run these cells as plain Python")
        if len(set(cell_tags) & (DEFINITION_TAGS | {CHECK_TAG})) > 1:
            problems.append(f"{where}: more than one exercise tag: {cell_tags}")
    exercises = [n for n, c in enumerate(nb.cells) if EXERCISE_TAG in tags(c)]
    imports = [n for n, c in enumerate(nb.cells) if IMPORTS_TAG in tags(c)]
    if exercises and len(imports) != 1:
        problems.append(f"{len(imports)} cells tagged `{IMPORTS_TAG}`: a notebook with exercises has one, "
                        "the cell that imports what they need")
    if exercises and imports and exercises[0] < imports[0]:
        problems.append(f"the cell tagged `{IMPORTS_TAG}` comes after the first exercise")
    return problems


# ------------------------------------------------------------------------------------------
# Generating exercises/
# ------------------------------------------------------------------------------------------
# A solution's title cell: "# Solutions NN · ..." and a paragraph for its reader; the instructions for
# the exercises' reader wait in an HTML comment (not rendered), which the exercise version unwraps.
SOLUTIONS_TITLE, EXERCISES_TITLE = "# Solutions ", "# Exercises "
SOLUTIONS_ONLY = re.compile(r"\*\*These are the solutions\*\*.*?(?:\n\n|\Z)", re.DOTALL)
IN_THE_EXERCISES = re.compile(r"<!-- in the exercises:\n(.*?)\n-->", re.DOTALL)


def exercise_title_cell(source: str) -> str:
    """A solution's title cell, as its exercise shows it."""
    if source.startswith(SOLUTIONS_TITLE):
        source = EXERCISES_TITLE + source.removeprefix(SOLUTIONS_TITLE)
    return IN_THE_EXERCISES.sub(lambda m: m.group(1), SOLUTIONS_ONLY.sub("", source)).rstrip("\n")


def exercise_from(solution: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """The exercise notebook, to be written at `path`, made from a solution notebook (tags kept)."""
    nb = nbformat.from_dict(solution)  # a deep copy
    nb.metadata.pop(STAMP_KEY, None)
    nb.cells[0].source = exercise_title_cell(nb.cells[0].source)
    nb.cells = [cell for cell in nb.cells if DISCUSSION_TAG not in tags(cell)]  # the answer explained: solutions only
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
        solution, target = read(path), exercises / exercises_name(path.name)  # NN_topic_exercises.ipynb
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


def problems(solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> list[str]:
    """Everything `--check` reports: the solutions' tags, then what is stale in exercises/."""
    found = [f"{path.name}: {problem}" for path in notebooks(solutions) for problem in tag_problems(read(path))]
    return found + stale(solutions, exercises)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = problems()
        for problem in found:
            print(problem)
        if found:
            print("exercises/ or the solutions' tags are out of date: run `python -m tools.make_exercises`")
        return 1 if found else 0
    if argv:
        print(__doc__)
        return 2
    found = []
    for path in notebooks(SOLUTIONS):
        nb = read(path)
        if add_tags(nb):
            write(nb, path)
            print(f"tagged {path.relative_to(ROOT)}")
        found += [f"{path.relative_to(ROOT)}: {problem}" for problem in tag_problems(nb)]
    if found:
        print("\n".join(found + ["fix these tags by hand; exercises/ is not written"]))
        return 1
    EXERCISES.mkdir(exist_ok=True)
    for path, text in expected().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
