"""utils/ and tools/ import in one direction: no module imports, directly or through others, one that imports it back.

A circle of imports works only while each side imports the other late (inside a function) and no one
moves that line; a student reading utils/ follows the imports down to what a module rests on.  So what
two modules both need lives in a module below both (utils/formatting.py: the numbers as the course
prints them, needed by claims, timing and memory); in tools/, tools/layout.py (where the files are, and how a
notebook is read and written, needed by course, minutes and fingerprint).
"""

import ast

import pytest

from conftest import ROOT

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests



def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, top="utils"):
    """The modules of a package (`top`) that a module imports, at any depth of its code (a function's too)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:  # `from .x import y`, `from .. import z`
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # `import utils.x`, `from utils.x import y`
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found |= {name for name in names if name == top or name.startswith(f"{top}.")}
            if isinstance(node, ast.ImportFrom) and node.module == top:  # `from tools import course`
                found |= {f"{top}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize(("top", "known"), [("utils", ("utils.timing", {"utils.claims", "utils.device"})),
                                             ("tools", ("tools.minutes", {"tools.fingerprint", "tools.layout"}))])
def test_no_module_of_a_package_imports_itself_back(top, known):
    graph = {module_name(path): imports_of(path, top) for path in (ROOT / top).rglob("*.py")}
    graph = {module: {m for m in found if m in graph and m != module} for module, found in graph.items()}
    module, imported = known
    assert imported <= graph[module], graph[module]  # the test reads imports at all

    def circle_from(start):
        """The shortest circle of imports from `start` back to it, or None (a breadth-first search)."""
        paths = [[start]]
        seen = set()
        while paths:
            path = paths.pop(0)
            for module in sorted(graph[path[-1]]):
                if module == start:
                    return [*path, start]
                if module not in seen:
                    seen.add(module)
                    paths.append([*path, module])
        return None

    circles = [circle for module in sorted(graph) if (circle := circle_from(module))]
    assert circles == [], "\n".join(" -> ".join(circle) for circle in circles)
