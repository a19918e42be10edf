"""Fingerprints of what a notebook's reference outputs depend on: they change when behaviour does.

A stamp (tools/reference.py) records two hashes, and the outputs are current while both match:

- `code_hash(nb)`: the notebook's code cells, and the script files they run (`utils.script(...)`);
- `utils_hash(folder, notebook)`: the code of `utils/` that the notebook can run.

Both hash the code's syntax tree, not its text, so a comment, a docstring, a blank line or a line
wrapped differently changes nothing, while a changed default argument, operator or constant does.
The `utils` code a notebook can run is, conservatively:

- every top-level statement of a module that runs code on import (a call: a registration, a style);
- nothing of a module that `utils/__init__.py` does not import (directly or through another
  module) unless the notebook names it (`from utils import profiling`);
- every definition, import or constant (a top-level statement that binds names and calls
  nothing) one of whose names is mentioned, as a name or an attribute, or inside a string as
  code would name it (the whole string, or after a dot, or before a parenthesis), in the
  notebook's cells, in a statement already counted, or in a definition already counted.

So a helper that no cell of a notebook reaches can change without making that notebook stale; the
checks of the other notebooks' exercises (`utils/exercises/nbXX.py`) and the wrong answers that
only the tests run (`utils/exercises/answers/`) never count; and for a notebook that never imports
`utils.exercises` (a lecture: nothing else in utils/ imports it), none of utils/exercises/ counts.
The flip side: code reached only through a name built at run time (`getattr(m, "f" + x)`) is not
seen; utils/ has none.

Why by hand: the hash must be the same on the Python of a laptop and of the GPU machine (3.11 and
3.12 print `ast.dump` differently), and no library fingerprints a notebook together with the code
it imports.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import nbformat

from tools.layout import ROOT

UTILS = ROOT / "utils"
SCRIPTS = ROOT / "notebooks" / "scripts"  # scripts that cells run in a fresh process: utils.script(name)
WORD = re.compile(r"[A-Za-z_]\w*")
# In a string, a name that code could reach: the whole string ("benchmark", for getattr), or a word
# after a dot or before a parenthesis ("__import__('utils.cells').cells.show_reference(...)").
CODE_WORD = re.compile(r"^[A-Za-z_]\w*$|(?<=\.)[A-Za-z_]\w*|[A-Za-z_]\w*(?=\()")
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# ------------------------------------------------------------------------------------------------
# Code as a tree, the same on every Python version
# ------------------------------------------------------------------------------------------------
def without_docstrings(tree: ast.AST) -> ast.AST:
    """The tree with the docstring of every module, class and function removed (in place)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, SCOPES) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return tree


def canonical(node: object) -> object:
    """A node as nested tuples of its type and fields: no positions, no empty fields.

    Empty fields are left out because Python 3.12 added some (`type_params=[]`) that 3.11 lacks, and
    an f-string's text is merged and stripped of empty pieces, which 3.12 adds to a format spec.
    """
    if isinstance(node, ast.JoinedStr):
        return ("JoinedStr", tuple(canonical(part) for part in _merged(node.values)))
    if isinstance(node, ast.AST):
        fields = tuple((name, canonical(value)) for name, value in ast.iter_fields(node)
                       if value not in (None, []) and name not in ("kind", "type_comment"))
        return (type(node).__name__, fields)
    if isinstance(node, list):
        return tuple(canonical(item) for item in node)
    return repr(node)


def _merged(parts: list[ast.expr]) -> list[ast.expr]:
    """An f-string's pieces with adjacent text joined and empty text dropped."""
    merged: list[ast.expr] = []
    for part in parts:
        text = part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else None
        if text is not None and merged and isinstance(merged[-1], ast.Constant):
            merged[-1] = ast.Constant(str(merged[-1].value) + text)
        elif text != "":
            merged.append(part)
    return merged


def python_of_cell(source: str) -> str:
    """A code cell as plain Python: IPython's lines (`%%requires cuda`, `%timeit`, `!git`) become calls.

    Their text still counts (the requirements of `%%requires` decide whether a cell runs at all),
    but a comment or a blank line around them does not.
    """
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            indent = line[: len(line) - len(stripped)]
            lines.append(f"{indent}__ipython__({stripped.split('#')[0].strip()!r})")  # a call: never a docstring
        else:
            lines.append(line)
    return "\n".join(lines)


def tree_of(source: str) -> ast.AST | None:
    """The tree of the source without docstrings, or None if it is not Python."""
    try:
        return without_docstrings(ast.parse(source))
    except SyntaxError:
        return None


def _digest(parts: Iterable[object]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode() + b"\0")
    return digest.hexdigest()[:16]


def words(tree: ast.AST) -> set[str]:
    """The names a piece of code mentions: names, attributes, imported names, names inside strings."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update(node.name.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(CODE_WORD.findall(node.value))
    return found


# ------------------------------------------------------------------------------------------------
# A notebook's code cells, and the scripts they run
# ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def cell_tree(source: str) -> ast.Module | None:
    """A code cell's (or a file's) tree, IPython's lines made calls, without docstrings; None if not Python.

    Cached: a stamp's two hashes and the linter all read the same cells.
    """
    tree = tree_of(python_of_cell(source))
    return tree if isinstance(tree, ast.Module) else None


def cell_trees(nb: nbformat.NotebookNode) -> Iterator[object]:
    """Each code cell as its canonical tree (or, where it is not Python even so, its stripped text)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            tree = cell_tree(cell.source)
            yield canonical(tree) if tree is not None else cell.source.strip()


def _scripts_named(tree: ast.AST | None) -> set[str]:
    """The script files that code names in `utils.script("NN_name.py")`."""
    return {node.args[0].value for node in (ast.walk(tree) if tree is not None else ())
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "script"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)}


def scripts_run_by(nb: nbformat.NotebookNode, scripts: Path = SCRIPTS) -> list[str]:
    """The script files the cells name in `utils.script("NN_name.py")`, and those these scripts name, sorted."""
    names: set[str] = set()
    for cell in nb.cells:
        names |= _scripts_named(cell_tree(cell.source) if cell.cell_type == "code" else None)
    todo = sorted(names)
    while todo:  # a helper script that the notebook runs may start other scripts (notebook 05)
        path = scripts / todo.pop()
        for name in _scripts_named(tree_of(path.read_text()) if path.is_file() else None) - names:
            names.add(name)
            todo.append(name)
    return sorted(names)


def code_hash(nb: nbformat.NotebookNode, scripts: Path = SCRIPTS) -> str:
    """A hash of what the notebook's code cells do, and of the scripts they run: not of their outputs,
    comments, blank lines or formatting."""
    parts: list[object] = list(cell_trees(nb))
    for name in scripts_run_by(nb, scripts):
        path = scripts / name
        tree = tree_of(path.read_text()) if path.is_file() else None
        parts.append((name, canonical(tree) if tree is not None else "missing"))
    return _digest(parts)


# ------------------------------------------------------------------------------------------------
# The code of utils/ that a notebook can run
# ------------------------------------------------------------------------------------------------
def _never_runs_in(relative: Path, number: str | None, exercises: bool = True) -> bool:
    """True for the wrong answers (tests only), for the exercise checks of another notebook, and for
    all of utils/exercises/ in a notebook that never imports it (`exercises` False: a lecture)."""
    if relative.parts[0] != "exercises":
        return False
    if "answers" in relative.parts or not exercises:
        return True
    return (number is not None and relative.name.startswith("nb") and relative.suffix == ".py"
            and relative.stem != f"nb{number}")


@lru_cache(maxsize=512)
def _module_tree(data: bytes) -> ast.Module | None:
    """A Python file's tree, without docstrings (None if it does not parse); cached by its contents."""
    tree = tree_of(data.decode())
    return tree if isinstance(tree, ast.Module) else None


def _modules(folder: Path, number: str | None, exercises: bool = True) -> list[tuple[str, ast.Module | None, bytes]]:
    """(relative path, tree or None, bytes) of every file in `folder` that can run in the notebook."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        relative = path.relative_to(folder)
        if not _never_runs_in(relative, number, exercises):
            data = path.read_bytes()
            found.append((relative.as_posix(), _module_tree(data) if path.suffix == ".py" else None, data))
    return found


def bindings(stmt: ast.stmt) -> list[tuple[str, object, set[str]]]:
    """(name, canonical tree, names it mentions) for each name a top-level statement only binds,
    without running anything: a definition, each name of an import, an assignment of a value that
    calls nothing.  Empty for a statement that runs code on import."""
    if isinstance(stmt, DEFINITIONS):
        return [(stmt.name, canonical(stmt), words(stmt))]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        source = getattr(stmt, "module", None), getattr(stmt, "level", 0)
        return [((alias.asname or alias.name).split(".")[0], ("import", source, alias.name, alias.asname),
                 {alias.name.split(".")[-1]}) for alias in stmt.names]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
    value = getattr(stmt, "value", None)
    calls = value is not None and any(isinstance(node, ast.Call) for node in ast.walk(value))
    if targets and all(isinstance(t, ast.Name) for t in targets) and not calls:
        return [(t.id, canonical(stmt), words(stmt)) for t in targets if isinstance(t, ast.Name)]
    return []


# A statement's bindings, or its canonical tree and words where it binds nothing, by the statement (kept alive here, so
# that its id is not reused): the trees of utils/ are cached by their contents (_module_tree), and each stamp check
# walked every statement again (about one second a notebook on a 2-core machine, twenty notebooks a test run).
_STATEMENTS: dict[int, tuple[ast.stmt, list[tuple[str, object, set[str]]], tuple[object, set[str]]]] = {}


def _statement(stmt: ast.stmt) -> tuple[list[tuple[str, object, set[str]]], tuple[object, set[str]]]:
    known = _STATEMENTS.get(id(stmt))
    if known is None or known[0] is not stmt:
        bound = bindings(stmt)
        known = _STATEMENTS[id(stmt)] = (stmt, bound, ((), set()) if bound else (canonical(stmt), words(stmt)))
    return known[1], known[2]


def _imported_by_package(folder: Path) -> set[str] | None:
    """The stems of the top-level modules of `folder` that its `__init__.py` imports, directly or
    through another such module; None where `folder` is not a package (then every module counts)."""
    init = folder / "__init__.py"
    if not init.is_file():
        return None
    found: set[str] = set()
    todo = [init]
    while todo:
        tree = _module_tree(todo.pop().read_bytes())
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module.split(".")[0]] if node.module else [alias.name for alias in node.names]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):  # `import utils.x`, `from utils.x import y`
                dotted = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                names = [d.split(".")[1] for d in dotted if d.startswith(folder.name + ".")]
            else:
                continue
            for name in names:
                if name not in found and (folder / f"{name}.py").is_file():
                    found.add(name)
                    todo.append(folder / f"{name}.py")
    return found


def reachable_code(folder: Path, mentioned: set[str], number: str | None,
                   exercises: bool = True) -> list[tuple[str, str, object]]:
    """(module, name, canonical tree) of each top-level statement, or name bound by one, that counts
    for the words `mentioned` (see the module's docstring), sorted.

    A statement that runs code on import always counts, and what it mentions is reached; a name that
    a statement only binds (a definition, an import, a constant) counts once it is reached.
    """
    counted: list[tuple[str, str, object]] = []
    binding: dict[str, list[tuple[str, object, set[str]]]] = {}
    wanted = set(mentioned)
    imported = _imported_by_package(folder)
    for module, tree, data in _modules(folder, number, exercises):
        stem = module.removesuffix(".py")
        if imported is not None and "/" not in module and module.endswith(".py") and stem != "__init__" \
                and stem not in imported and stem not in mentioned:
            continue  # a module that `import utils` does not load and no cell names (utils.profiling)
        if tree is None:  # not Python: all of it counts
            counted.append((module, "", data))
            continue
        for stmt in tree.body:
            bound, unbound = _statement(stmt)
            for name, code, mentions in bound:
                binding.setdefault(name, []).append((module, code, mentions))
            if not bound:
                counted.append((module, "", unbound[0]))
                wanted |= unbound[1]
    frontier = wanted & binding.keys()
    reached = set(frontier)
    while frontier:
        name = frontier.pop()
        for module, code, mentions in binding[name]:
            counted.append((module, name, code))
            new = (mentions & binding.keys()) - reached
            reached |= new
            frontier |= new
    return sorted(counted, key=repr)


def notebook_words(nb: nbformat.NotebookNode) -> set[str]:
    """Every word the notebook's code cells mention (names, attributes, words in strings)."""
    found: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            tree = cell_tree(cell.source)
            found |= words(tree) if tree is not None else set(WORD.findall(cell.source))
    return found


IMPORTS_EXERCISES = re.compile(r"\butils\.exercises\b|\bfrom\s+utils\s+import\b[^\n]*\bexercises\b")


def imports_exercises(nb: nbformat.NotebookNode) -> bool:
    """Whether a code cell names the package utils.exercises (nothing else in utils/ imports it)."""
    return any(cell.cell_type == "code" and IMPORTS_EXERCISES.search(cell.source) for cell in nb.cells)


def utils_hash(nb: nbformat.NotebookNode, notebook: Path, folder: Path = UTILS) -> str:
    """A hash of the code of `folder` (utils/) that the notebook at `notebook` (NN_topic.ipynb) can run."""
    return _digest(reachable_code(folder, notebook_words(nb), notebook.name[:2], imports_exercises(nb)))
