"""Lint everything the course runs, and type-check its shared code: `python -m tools.lint` (CI runs it).

1. ruff over the Python files: utils/, tools/, tests/, and the scripts beside the notebooks
   (notebooks/scripts/, run by `utils.script(...)`).
2. ruff over every code cell of every notebook.  ruff skips a cell whose first line is a cell
   magic, which is every `%%requires cuda` cell (three in four of a lecture's); here that one line is
   set aside (made a comment), and ruff reads the rest of IPython's syntax (`%timeit`, `!git`) itself.
   A finding names the cell as JupyterLab counts it: cell N, from 1, markdown cells included.
3. ruff over the scripts that cells keep in a string and run in a fresh process, the first argument
   of `run_python(...)` or `run_process(...)`: a string, or a name that a cell or module binds to
   one.  Each is linted as a file of its own (SCRIPT_IGNORES below say which rules a short script
   in a string is spared); in an f-string, each {field} is read as 0.
4. mypy over utils/ and tools/ (settings in pyproject.toml).

Exit status 1 when anything is found.  Why by hand: ruff has no switch to read cells behind a cell
magic, nor strings as code; everything else is ruff's and mypy's own.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tools.course import EXERCISES, ROOT, notebooks, read
from tools.fingerprint import cell_tree

RUNNERS = ("run_python", "run_process")  # utils.processes: they run their first argument in a fresh Python
FOLDERS = ("utils", "tools", "tests", "notebooks/scripts", "site")


def ruff(arguments: list[str], stdin: str | None = None) -> list[dict]:
    """ruff's findings, as its JSON output gives them."""
    if importlib.util.find_spec("ruff") is None:
        raise SystemExit("tools.lint needs ruff: python -m pip install -r requirements-dev.txt")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "json", *arguments],
                          input=stdin, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"ruff failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout or "[]")


def shown(finding: dict, where: str) -> str:
    row, column = finding["location"]["row"], finding["location"]["column"]
    return f"{where}:{row}:{column}: {finding['code']} {finding['message']}"


# ------------------------------------------------------------------------------------------------
# 1 and 2: files, and notebooks with their cell magics set aside
# ------------------------------------------------------------------------------------------------
def lint_files() -> list[str]:
    folders = [f for f in FOLDERS if (ROOT / f).is_dir()]
    return [shown(f, Path(f["filename"]).relative_to(ROOT).as_posix()) for f in ruff(folders)]


def cell_magics_set_aside(path: Path) -> str:
    """The notebook as JSON, with the first line of each cell that starts with `%%` made a comment."""
    nb = read(path)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("%%"):
            cell.source = "# " + cell.source
    return json.dumps(nb)


def shown_path(path: Path) -> str:
    """A path as findings name it: from the repository's root, if it lies in it."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def lint_notebook(path: Path) -> list[str]:
    name = shown_path(path)
    return [shown(f, f"{name}:cell {f['cell']}") for f in
            ruff(["--stdin-filename", name, "-"], stdin=cell_magics_set_aside(path))]


# ------------------------------------------------------------------------------------------------
# 3: scripts kept in strings
# ------------------------------------------------------------------------------------------------
def script_text(node: ast.expr) -> str | None:
    """The text of a string, or of an f-string with each {field} read as 0; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(part.value) if isinstance(part, ast.Constant) else "0" for part in node.values)
    return None


def scripts_in(trees: list[tuple[str, ast.Module]]) -> Iterator[tuple[str, str, str]]:
    """(where, name, text) of each script that a call of run_python or run_process runs, in these trees."""
    bound: dict[str, tuple[str, ast.expr]] = {}
    for where, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bound[node.targets[0].id] = (where, node.value)
    seen = set()
    for where, tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args \
                    or getattr(node.func, "attr", getattr(node.func, "id", None)) not in RUNNERS:
                continue
            first = node.args[0]
            origin, label = (bound[first.id][0], first.id) if isinstance(first, ast.Name) and first.id in bound \
                else (where, f"line {first.lineno}")
            value = bound[first.id][1] if isinstance(first, ast.Name) and first.id in bound else first
            text = script_text(value)
            if text is not None and (origin, label) not in seen:
                seen.add((origin, label))
                yield origin, label, text


# A script kept in a string is a short demonstration shown in its cell: one line of imports (I001),
# a result computed and not used (F841, as a benchmark does), an error caught to be shown (BLE001).
SCRIPT_IGNORES = "I001,F841,BLE001"


def lint_scripts(trees: list[tuple[str, ast.Module]]) -> list[str]:
    found = []
    for origin, label, text in scripts_in(trees):
        findings = ruff(["--extend-ignore", SCRIPT_IGNORES, "--stdin-filename", f"{label}.py", "-"], stdin=text)
        found += [shown(f, f"{origin}, the script {label}") for f in findings]
    return found


def notebook_trees(path: Path) -> list[tuple[str, ast.Module]]:
    name = shown_path(path)
    trees = []
    for n, cell in enumerate(read(path).cells, 1):
        tree = cell_tree(cell.source) if cell.cell_type == "code" else None  # None: not Python, step 2 says so
        if tree is not None:
            trees.append((f"{name}:cell {n}", tree))
    return trees


def file_trees() -> list[list[tuple[str, ast.Module]]]:
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).is_dir() else ():
            tree = cell_tree(path.read_text())
            if tree is not None:
                found.append([(shown_path(path), tree)])
    return found


# ------------------------------------------------------------------------------------------------
def everything() -> list[str]:
    """Every finding of steps 1 to 3."""
    found = lint_files()
    for path in notebooks() + notebooks(EXERCISES):
        found += lint_notebook(path)
        found += lint_scripts(notebook_trees(path))
    for trees in file_trees():
        found += lint_scripts(trees)
    return found


def main(argv: list[str]) -> int:
    if argv:
        print(__doc__)
        return 2
    found = everything()
    for line in found:
        print(line)
    print(f"ruff: {len(found)} findings in files, notebook cells and scripts kept in strings", flush=True)
    return 1 if found or mypy() else 0


def mypy() -> int:
    """mypy's exit status; it prints its findings (which files: pyproject.toml)."""
    return subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
