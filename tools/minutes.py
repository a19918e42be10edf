"""How long a lecture takes, by one formula, for its core path and for its optional parts.

    python -m tools.minutes                  # each lecture's core and optional minutes
    python -m tools.minutes --sections 04    # one lecture, section by section

The formula: the markdown read at 200 words a minute, a minute to run and discuss each code cell,
and a minute to read each 20 non-blank lines of code. A cell of claims only is the discussion of the
output before it (moved after that output so that a prediction is answered first): its lines only.
A part is optional when its heading (`#`, `##` or `###`, anywhere in a markdown cell) says
"(optional)"; it lasts until the next heading of the same or a higher level. The title cell's own
**Time:** paragraph, which states the result, is not counted. `python -m tools.course sync` writes
that paragraph; tests/test_hygiene.py checks it.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from typing import NamedTuple

import nbformat

from tools.fingerprint import cell_tree
from tools.layout import LECTURES, notebooks, read

WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 20
TIME_PARAGRAPH = re.compile(r"\*\*Time:\*\*.*?(?=\n\n|\Z)", re.DOTALL)
OPTIONAL = re.compile(r"\(optional\)")  # in a heading: "... (optional)", "## Appendix (optional): ..."


@dataclass(frozen=True)
class Minutes:
    core: float
    optional: float


def only_claims(source: str) -> bool:
    """Whether a code cell holds nothing but `claim(...)` calls (after its `%%` line): the conclusion of the
    cell before it, moved after the output so that the output answers a prediction first."""
    body = "\n".join(line for line in source.splitlines() if not line.startswith("%%"))
    try:
        statements = ast.parse(body).body
    except SyntaxError:
        return False
    return bool(statements) and all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
        and (getattr(s.value.func, "attr", None) == "claim" or getattr(s.value.func, "id", None) == "claim")
        for s in statements)


def code_minutes(source: str) -> float:
    claims = only_claims(source)  # a claims cell's `%%requires` line repeats the cell before's: not counted
    lines = [line for line in source.splitlines() if line.strip() and not (claims and line.startswith("%%"))]
    return (0 if claims else 1) + len(lines) / CODE_LINES_PER_MINUTE


class _Piece(NamedTuple):
    """A line of markdown or a code cell, as the formula counts it."""
    cell: int  # the cell's number
    section: str  # the `## ` section it is in
    optional: bool
    minutes: float
    part: str  # its numbered part: "(opening)", "6" (from a `## 6.` or `### 6.` heading on), "takeaways", ...


def _walk(nb: nbformat.NotebookNode) -> list[_Piece]:
    """Each line of markdown and each code cell, in order; a heading anywhere in a markdown cell switches at
    that line."""
    parts: list[_Piece] = []
    section, optional_level, part = "(opening)", None, "(opening)"
    for n, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            parts.append(_Piece(n, section, optional_level is not None, code_minutes(cell.source), part))
            continue
        if cell.cell_type != "markdown" or "reference-note" in cell.metadata.get("tags", []):
            continue  # the note under the setup cell (tools/course.py's reference_note) is a label, not taught
        for line in TIME_PARAGRAPH.sub("", cell.source).splitlines():
            heading = re.match(r"(#{1,3}) ", line)
            if heading:
                level = len(heading.group(1))
                if optional_level is not None and level <= optional_level:
                    optional_level = None
                if optional_level is None and OPTIONAL.search(line):
                    optional_level = level
                if level == 2:
                    section = line.removeprefix("## ").strip()
            if numbered := re.match(r"(#{2,3}) (\S.*)", line):
                number = re.match(r"(\d+)\.", numbered[2])
                if number:
                    part = str(int(number[1]))
                elif numbered[1] == "##":
                    part = "takeaways" if numbered[2].lower().startswith("takeaways") else numbered[2]
            parts.append(_Piece(n, section, optional_level is not None,
                                len(re.findall(r"\w+", line)) / WORDS_PER_MINUTE, part))
    return parts


def part_minutes(nb: nbformat.NotebookNode, shown: list[bool]) -> dict[str, float]:
    """Minutes of the cells where `shown` is True, by numbered part (_Piece.part; a `## ` heading without a
    number, a Part's, starts a part that no number names). The rows of a guide's short-version table
    (tools/course.py's teach_table)."""
    minutes: dict[str, float] = {}
    for piece in _walk(nb):
        if shown[piece.cell]:
            minutes[piece.part] = minutes.get(piece.part, 0.0) + piece.minutes
    return minutes


def optional_cells(nb: nbformat.NotebookNode) -> list[bool]:
    """For each cell, whether it lies in a part marked optional (a markdown cell by its first line; a
    cell with nothing to read, by where the cell before it ended)."""
    first: dict[int, bool] = {}
    last: dict[int, bool] = {}
    for piece in _walk(nb):
        first.setdefault(piece.cell, piece.optional)
        last[piece.cell] = piece.optional
    flags: list[bool] = []
    state = False
    for n in range(len(nb.cells)):
        flags.append(first.get(n, state))
        state = last.get(n, state)
    return flags


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names a cell binds at its top level or anywhere by assignment, import, def or class; names it reads)."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, read


def core_needs_optional(nb: nbformat.NotebookNode, left_out: list[bool] | None = None) -> list[str]:
    """What a student who skips every optional part would miss: each core code cell that reads a
    name only an optional cell before it defines ("cell 12 reads `pool`, defined in optional cell 9").
    `left_out`: the cells skipped instead (default: the optional ones), e.g. off the 45-minute path."""
    found: list[str] = []
    core_bound: set[str] = set()
    optional_bound: dict[str, int] = {}
    skipped = optional_cells(nb) if left_out is None else left_out
    for n, (cell, optional) in enumerate(zip(nb.cells, skipped, strict=True)):
        tree = cell_tree(cell.source) if cell.cell_type == "code" else None
        if tree is None:
            continue
        bound, read = _names(tree)
        if optional:
            optional_bound.update({name: n for name in bound})
            continue
        found += [f"cell {n} reads `{name}`, defined in optional cell {optional_bound[name]}"
                  for name in sorted(read - bound - core_bound) if name in optional_bound]
        core_bound |= bound
    return found


def long_core_cells(nb: nbformat.NotebookNode, limit: int = 25) -> list[str]:
    """The core path's code cells over `limit` non-blank lines ("cell 12: 31 lines")."""
    flags = optional_cells(nb)
    return [f"cell {n}: {lines} lines" for n, (cell, optional) in enumerate(zip(nb.cells, flags, strict=True))
            if cell.cell_type == "code" and not optional
            and (lines := len([line for line in cell.source.splitlines() if line.strip()])) > limit]


def lecture_minutes(nb: nbformat.NotebookNode) -> Minutes:
    """Core and optional minutes."""
    parts = _walk(nb)
    return Minutes(sum(p.minutes for p in parts if not p.optional), sum(p.minutes for p in parts if p.optional))


def section_minutes(nb: nbformat.NotebookNode) -> list[tuple[str, float, bool]]:
    """(heading, minutes, optional) of each `## ` section, the part before the first one first
    ("(opening)"); optional when all of it is."""
    order: list[str] = []
    total: dict[str, float] = {}
    core: dict[str, float] = {}
    for _, section, optional, minutes, _ in _walk(nb):
        if section not in total:
            order.append(section)
            total[section], core[section] = 0.0, 0.0
        total[section] += minutes
        core[section] += 0.0 if optional else minutes
    return [(h, total[h], core[h] == 0 and total[h] > 0) for h in order]


MINUTES_BEGIN, MINUTES_END = "<!-- BEGIN MINUTES (python -m tools.course sync) -->", "<!-- END MINUTES -->"


def sections_table(nb: nbformat.NotebookNode) -> str:
    """A lecture's sections and their minutes, as the markdown table of its instructors' guide."""
    rows = ["| minutes | section |", "|---:|---|"]
    rows += [f"| {round(m)} | {h}{' *(optional)*' if o and not OPTIONAL.search(h) else ''} |"
             for h, m, o in section_minutes(nb)]
    return "\n".join(rows)


def time_paragraph(minutes: Minutes) -> str:
    """What a lecture's title cell says of its length."""
    text = f"**Time:** about {round(minutes.core)} minutes for the core path"
    if round(minutes.optional):
        text += f", and {round(minutes.optional)} more for the parts marked *(optional)*"
    return text + (" (by `python -m tools.minutes`: the text at 200 words a minute, a minute to run and discuss "
                   "each code cell, a minute per 20 lines of code).")


def with_time(source: str, minutes: Minutes) -> str:
    """A title cell with its **Time:** paragraph written from `minutes`."""
    return TIME_PARAGRAPH.sub(lambda _: time_paragraph(minutes), source, count=1)


def main() -> int:
    if sys.argv[1:2] == ["--sections"]:  # python -m tools.minutes --sections 04: a lecture, section by section
        (path,) = [p for p in notebooks(LECTURES) if p.name.startswith(sys.argv[2])]
        nb = read(path)
        for heading, minutes, optional in section_minutes(nb):
            print(f"{minutes:5.0f}  {heading}{'  (optional)' if optional and not OPTIONAL.search(heading) else ''}")
        for problem in core_needs_optional(nb) + long_core_cells(nb):
            print(f"core path: {problem}")
        return 0
    print(f"{'lecture':<28} {'core':>6} {'optional':>9}")
    for path in notebooks(LECTURES):
        m = lecture_minutes(read(path))
        print(f"{path.name:<28} {m.core:>6.0f} {m.optional:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
