"""What the course's tools share: its settings, its notebooks, and the cells every notebook has.

Settings live in pyproject.toml under [tool.course]; the repository's URL is kept there and only
there.  `python -m tools.course sync` rewrites from it every notebook's Colab badge and setup cell,
and README's table of topics.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import nbformat

from tools.layout import (  # re-exported: the tools and tests import them from here too
    EXERCISES,
    INSTRUCTORS,
    LECTURES,
    ROOT,
    SETTINGS,
    SOLUTIONS,
    exercises_name,
    lecture_name,
    notebooks,
    read,
    write,
)


def repo_slug() -> str:
    """'owner/name' from the repository URL."""
    return SETTINGS["repository"].removeprefix("https://github.com/").rstrip("/")


def colab_url(path: Path) -> str:
    """Colab's address for a notebook of this repository (notebooks live one folder down)."""
    rel = f"{path.parent.name}/{path.name}"
    return f"https://colab.research.google.com/github/{repo_slug()}/blob/{SETTINGS['branch']}/{rel}"


def colab_badge(path: Path) -> str:
    """The Markdown of an Open-in-Colab badge for a notebook of this repository."""
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(path)})"


def setup_cell() -> str:
    """The first code cell of every notebook: make the course's `utils` importable, here or on Colab.

    The course's root is the folder that holds tools/course.py (so an unrelated `utils/` folder in
    the working directory is never taken for the course's).  On Colab the cell first clones the
    branch named in the settings; where that fails, or `import utils` finds another module, it
    stops with one line that names the address and what to do, so no later cell runs.
    """
    name = repo_slug().split("/")[-1]
    return f'''# Setup: make the course's `utils` importable (JupyterLab, nbval, or Colab; see notebook 00).
import sys
from pathlib import Path

REPOSITORY, BRANCH = "{SETTINGS["repository"]}", "{SETTINGS["branch"]}"


class CourseSetupError(Exception):
    def _render_traceback_(self):  # IPython shows this one line instead of a traceback
        return [f"CourseSetupError: {{self}}"]


if "google.colab" in sys.modules and not Path("{name}").exists():
    !git clone --quiet --depth 1 --branch {{BRANCH}} {{REPOSITORY}}
places = (Path("."), Path(".."), Path("{name}"))
root = next((p.resolve() for p in places if (p / "tools" / "course.py").is_file()), None)
if root is None:
    raise CourseSetupError(f"the course's files are not here: clone {{REPOSITORY}} (branch {{BRANCH}}) and open "
                           "the notebook from it; on Colab check the network, then Runtime > Restart session")
if str(root) not in sys.path:
    sys.path.insert(0, str(root))
import utils

if Path(utils.__file__).resolve().parent != root / "utils":
    raise CourseSetupError(f"`import utils` found {{utils.__file__}}, not the course's: restart the kernel "
                           "(Colab: Runtime > Restart session) and run this cell first")'''


def title(path: Path) -> str:
    """A notebook's title: its first line, without the leading '# '."""
    return read(path).cells[0].source.splitlines()[0].removeprefix("# ").strip()


TOPICS_BEGIN, TOPICS_END = "<!-- BEGIN TOPICS (python -m tools.course sync) -->", "<!-- END TOPICS -->"


def topics_table() -> str:
    """README's table of lectures, with their exercises, solutions and Colab badges."""
    def link(path: Path, text: str) -> str:
        return f"[{text}]({path.parent.name}/{path.name})" if path.exists() else "-"

    rows = ["| # | lecture | exercises | solutions | Colab |", "|---|---|---|---|---|"]
    for lecture in notebooks(LECTURES):
        exercise, solution = EXERCISES / exercises_name(lecture.name), SOLUTIONS / lecture.name
        rows.append(f"| {lecture.name[:2]} | {link(lecture, title(lecture))} | {link(exercise, 'exercises')} | "
                    f"{link(solution, 'solutions')} | {colab_badge(lecture)} |")
    return "\n".join(rows)


def _rewrite_between(path: Path, begin: str, end: str, body: str) -> bool:
    """Put `body` between the marker lines `begin` and `end` of a text file; True if it changed.
    A file without `begin` is left as it is."""
    text = path.read_text()
    head, found, rest = text.partition(begin)
    if not found:
        return False
    _, _, tail = rest.partition(end)
    new = f"{head}{begin}\n{body}\n{end}{tail}"
    if new == text:
        return False
    path.write_text(new)
    return True


def sync_readme(readme: Path = ROOT / "README.md") -> bool:
    """Rewrite README's topics table from the notebooks; True if it changed."""
    return _rewrite_between(readme, TOPICS_BEGIN, TOPICS_END, topics_table())


NAVIGATION_TAG = "navigation"  # a lecture's last cell: the way on, written by sync()
PREREQUISITE = re.compile(r"(?<![\[\w/.])(\d\d)(?= \()")  # "01 (" in a lecture's Prerequisites: a notebook


def _next_lecture(path: Path) -> Path | None:
    """The lecture after the one named like `path` (a lecture, its solutions or exercises); None after the last."""
    return next((p for p in notebooks(LECTURES) if p.name > lecture_name(path.name)), None)


def navigation(path: Path) -> str:
    """The last cell of a lecture: its exercises, then the next lecture (or, after the last, the list)."""
    following = _next_lecture(path)
    own = (f"this lecture's [exercises](../exercises/{exercises_name(path.name)}) "
           f"([solutions](../solutions/{path.name}))")
    if following:
        return f"**Next:** {own}, then [{title(following)}]({following.name})."
    return f"**Next:** {own}. This is the last lecture: back to [the list of lectures](../README.md)."


def exercises_navigation(path: Path) -> str:
    """The last cell of a solutions (and so of an exercises) notebook: back to its lecture, on to the next."""
    following = _next_lecture(path)
    lecture = lecture_name(path.name)
    back = f"back to the lecture, [{title(LECTURES / lecture)}](../notebooks/{lecture})"
    if following:
        return f"**Next:** [{title(following)}](../notebooks/{following.name}), the next lecture; or {back}."
    return f"**Next:** this was the last lecture's exercises: {back}, or the [list of lectures](../README.md)."


def _set_last_cell(nb: nbformat.NotebookNode, text: str) -> None:
    """The notebook's last cell, tagged `navigation`, holds `text` (added if missing)."""
    last = nb.cells[-1]
    if NAVIGATION_TAG not in last.get("metadata", {}).get("tags", []):
        last = nbformat.v4.new_markdown_cell(metadata={"tags": [NAVIGATION_TAG]})
        nb.cells.append(last)
    last.source = text


def link_prerequisites(source: str) -> str:
    """The title cell's Prerequisites paragraph, each lecture it names by number ("01 (...)") a link."""
    head, found, rest = source.partition("**Prerequisites.**")
    if not found:
        return source
    paragraph, gap, tail = rest.partition("\n\n")
    by_number = {p.name[:2]: p.name for p in notebooks(LECTURES)}

    def link(match: re.Match[str]) -> str:
        number = match.group(1)
        return f"[{number}]({by_number[number]})" if number in by_number else number

    return head + found + PREREQUISITE.sub(link, paragraph) + gap + tail


HEADING = re.compile(r"^(#{2,3}) \S")  # a section ("## ") or a subsection ("### ") of a lecture


def split_at_headings(cells: list) -> list:
    """The cells, each markdown cell that holds a section or subsection heading after other text cut
    there: a slide (RISE) begins at a cell, so a heading must begin one. Tags stay on the first part."""
    out = []
    for cell in cells:
        if cell.cell_type != "markdown":
            out.append(cell)
            continue
        lines = cell.source.split("\n")
        starts = [i for i, line in enumerate(lines) if HEADING.match(line) and "".join(lines[:i]).strip()]
        if not starts:
            out.append(cell)
            continue
        bounds = [0, *starts, len(lines)]
        parts = ["\n".join(lines[a:b]).strip("\n") for a, b in itertools.pairwise(bounds)]
        out.append(cell)
        cell.source = parts[0]
        out.extend(nbformat.v4.new_markdown_cell(part) for part in parts[1:])
    return out


# One idea a slide, at a font legible from the back of a room (issue 37). A slide's height is estimated
# from the cell's text at the slideshow's sizes (PROJECTOR_CSS, below), for a 1280x720 screen: a markdown line
# of 24 px text wraps at about 90 characters and takes 36 px; a code line 18 px text, about 24 px, wraps at
# CODE_CHARS; an output shows at most OUTPUT_MAX_PX and scrolls inside its cell beyond. These are estimates:
# tests/test_browser.py measures every core slide in Chromium.
SLIDE_PX = 560  # of the 720 px screen: RISE's scrolling threshold is 95%, and the controls take the corner
MD_CHARS, MD_LINE_PX, MD_GAP_PX = 88, 36, 20  # a wrapped line of markdown, the space between paragraphs
CODE_LINE_PX, CELL_PX, OUTPUT_MAX_PX = 24, 30, 216  # a code line, a cell's own padding, an output's cap
CODE_CHARS = 95  # a code line wraps at about 96 characters (18 px monospace in a 1060 px editor, measured)
# A code cell's code shows at most CODE_MAX_PX (about 17 lines) and scrolls inside its cell beyond, so that its
# output, under it, starts on the screen: the audience sees code and result together (instructor review of 04:
# a 27-line cell pushed its result below the fold). A plot is not held to OUTPUT_MAX_PX (it would show a slice
# of it): it shows whole, scaled down to at most IMAGE_MAX_PX high, which leaves room for a short code cell and,
# without a GPU, the skip line and the reference block's label over it.
# The code of a cell with a plot shows at most PLOT_CODE_MAX_PX (10 lines), so that code and plot fit the screen.
CODE_MAX_PX, IMAGE_MAX_PX, PLOT_CODE_MAX_PX = 420, 340, 240
TABLE_PX = 22  # a table's text (the takeaways): 24 px made four of them taller than the screen
# Without a GPU a `%%requires` cell is skipped and shows the reference run's output in a framed block
# (utils/cells.py): the skip line and the block's label, two lines each at 1280x720, and the block's border and
# padding stand over the output, up to FRAME_PX (tests/test_browser.py's no-GPU view measured outputs that fit
# on the GPU lose up to 132 px: 96 left 02's 10-line tables cut). An output that fitted OUTPUT_MAX_PX on the GPU
# then hid its last line, the ✓ claim, below the box's fold (instructor review 18 of 04: 7 slides). So a
# reference block's output gets FRAME_PX more, and its code gives up room (REFERENCE_CODE_MAX_PX, 13 lines: the
# code scrolls inside the cell, the result shows whole); and a slide may use the screen down to SLIDE_BOTTOM_PX
# from its bottom (RISE's 95vh left 36 px unused; the progress bar takes the last 4, the arrows the right margin).
# A reference plot shows at up to REFERENCE_IMAGE_MAX_PX (the course's plots are about 378 px high: at their own
# size; at 280 px, 04's timeline labels came out at 11-13 px), its code folded to REFERENCE_PLOT_CODE_MAX_PX
# (8 lines). estimated_px sizes every `%%requires` cell as it shows run without a GPU, the larger of its two
# views, its frame FRAME_LINES lines, so that a slide holds its cells run (04's section 5: two GPU cells on one
# subslide ran 76 px past the screen).
FRAME_PX, REFERENCE_CODE_MAX_PX, REFERENCE_IMAGE_MAX_PX, REFERENCE_PLOT_CODE_MAX_PX = 132, 324, 380, 200
SLIDE_BOTTOM_PX = 12
FRAME_LINES = 4  # the frame as estimated_px counts it: the skip line's two lines and the label's two
REQUIRES = re.compile(r"^%%requires\b")  # a cell that is skipped, and shows its reference, where it cannot run


def estimated_px(cell: nbformat.NotebookNode) -> int:
    """About how tall a cell shows in the slideshow at 1280x720 (outputs as committed, capped)."""
    if cell.cell_type == "markdown":
        px = 0
        for line in cell.source.splitlines():
            plain = re.sub(r"\]\([^)]*\)", "]", line)  # a link shows its text only
            if not plain.strip():
                px += MD_GAP_PX
            elif plain.startswith("#"):
                px += 2 * MD_LINE_PX
            else:
                px += MD_LINE_PX * -(-len(plain) // MD_CHARS)
        return px + CELL_PX
    out, image = 0, 0
    reference = bool(REQUIRES.match(cell.source))  # without a GPU: framed, FRAME_PX over the output
    for output in cell.get("outputs", []):
        text = output.get("text", "") or "".join(output.get("data", {}).get("text/plain", ""))
        if "image/png" in output.get("data", {}):
            image += REFERENCE_IMAGE_MAX_PX if reference else IMAGE_MAX_PX
        else:
            out += CODE_LINE_PX * len(text.splitlines())
    lines = sum(max(1, -(-len(line) // CODE_CHARS)) for line in cell.source.splitlines())  # as wrapped
    if reference:
        code = min(CODE_LINE_PX * lines, REFERENCE_PLOT_CODE_MAX_PX if image else REFERENCE_CODE_MAX_PX)
        return code + CELL_PX + FRAME_LINES * CODE_LINE_PX + (image if image else min(out, OUTPUT_MAX_PX))
    code = min(CODE_LINE_PX * lines, PLOT_CODE_MAX_PX if image else CODE_MAX_PX)
    return code + CELL_PX + (image if image else min(out, OUTPUT_MAX_PX))


def slide_types(cells: list) -> list[str]:
    """RISE's slide type of each of a lecture's cells, one idea a slide: the title and each section a
    slide, each subsection a subslide; within them, a markdown cell after a code cell (a new idea: the
    text and the code after it) a subslide, and any cell that would make its slide taller than a
    1280x720 screen (SLIDE_PX, estimated_px) a subslide. The setup cell is on the title slide, where
    the slideshow starts with it selected: the first Shift+Enter runs it, so that every later cell
    finds `utils` and its `%%requires` (issue 37: skipped, it was forgotten and the first cell run
    raised ModuleNotFoundError); the slideshow shows its input folded (PROJECTOR_CSS). The imports (the code
    cell right after it) are on the same slide, folded too, so that the guides' start, "click the setup cell,
    Shift+Enter twice", runs both (instructor review of 04: with the imports on the next subslide but one,
    the second Shift+Enter only stepped onto the reference note, and the first GPU cell would raise NameError);
    the second Shift+Enter then moves on to the note (set_reference_note), the next subslide. The code cell
    right after a `predict` cell begins a subslide: its stored output, the answer, is not on the question's
    screen (student review of 07: two reveals shared the question's subslide)."""
    types: list[str] = []
    used, previous, setup_seen, setup_last, asked = 0, None, False, False, False
    for cell in cells:
        heading = HEADING.match(cell.source) if cell.cell_type == "markdown" else None
        px = estimated_px(cell)
        setup = cell.cell_type == "code" and ((not setup_seen and types == ["slide"])  # on the title slide
                                              or (previous == "code" and setup_last))  # and the imports after it
        setup_last = setup
        setup_seen = setup_seen or cell.cell_type == "code"
        if cell.cell_type == "markdown" and (cell.source.startswith("# ") or (heading and heading[1] == "##")):
            kind = "slide"
        elif heading or (cell.cell_type == "markdown" and previous == "code") or (cell.cell_type == "code" and asked):
            kind = "subslide"
        elif setup:
            kind, px = "-", SETUP_FOLDED_PX
        elif used and used + px > SLIDE_PX:
            kind = "subslide"
        else:
            kind = "-"
        types.append(kind)
        used = px if kind != "-" else used + px
        previous = cell.cell_type
        asked = cell.cell_type == "markdown" and "predict" in cell.get("metadata", {}).get("tags", [])
    return types


# jupyterlab-rise 0.43.1 (its plugins/rise.js) merges a notebook's metadata["rise"] into its settings.
# `scroll`: a slide taller than 95% of the window gets a scroll bar (setScrollingSlide); without it a long
# slide is cut off at the window's bottom. `overlay` is HTML that RISE adds to the slideshow (into div.reveal,
# only there, addHeaderFooterOverlay): here a style, PROJECTOR_CSS. (RISE also loads a `rise.css` and a
# `<notebook>.css` beside the notebook; a style in the metadata travels with the notebook, to Colab too.)
# `start_slideshow_at`: Alt+R starts at the title slide, whichever cell is selected, so that the
# setup cell there comes first (RISE's default, "selected", starts at the selected cell's slide).
# `transition`: RISE hands it to reveal.js (revealMode's list of options): "none" shows the next slide at once
# (RISE's default slides it in, ~0.6 s, and until it has settled a click on a cell's prompt lands on reveal's
# background layer instead; a projector shows no motion better either). `center`: False puts each slide at the
# top of the screen, where reveal.js (RISE's default, True) centres it vertically and moves it whenever its height
# changes: a click on a cell's prompt (instructor review 8: claim cell 30 of lecture 04, under cell 29 run) made
# the cell active, the slide moved under the pointer, the mouseup landed on reveal's background, JupyterLab made
# the first cell active, and RISE (following the active cell) went back to the title slide.
HIDE_IN_SLIDES = ".jp-Notebook-footer"  # JupyterLab's "Click to add a cell." button, over the first title
SETUP_FOLDED_PX = 120  # the setup cell's input in the slideshow, folded: it scrolls inside itself
LEAF = ".reveal .slides section:not(:has(section)):not(:has(h1))"  # a slide of cells, not the title's
PROJECTOR_CSS = " ".join([
    f"{HIDE_IN_SLIDES} {{ display: none !important; }}",
    # a font legible from the back of a room: text 24 px, code and outputs 18 px (JupyterLab's 14 and 13)
    ".reveal { --jp-content-font-size1: 24px; --jp-code-font-size: 18px; --jp-ui-font-size1: 18px; }",
    ".reveal .jp-RenderedHTMLCommon { font-size: 24px; }",
    (".reveal .jp-RenderedHTMLCommon h1 { font-size: 40px; } .reveal .jp-RenderedHTMLCommon h2 { font-size: 34px; }"
     " .reveal .jp-RenderedHTMLCommon h3 { font-size: 30px; }"),
    # printed outputs 18 px as the code (JupyterLab's own rule for them, 14 px here, beat the variable); tables
    # (the takeaways) 24 px as the text around them
    ".reveal .jp-OutputArea-output pre, .reveal .jp-OutputArea-output { font-size: 18px; }",
    f".reveal .jp-RenderedHTMLCommon table {{ font-size: {TABLE_PX}px; }}",
    # long outputs scroll inside their cell, not the slide; a plot shows whole, scaled to IMAGE_MAX_PX high
    f".reveal .jp-Cell-outputArea {{ max-height: {OUTPUT_MAX_PX}px; overflow-y: auto; }}",
    ".reveal .jp-Cell-outputArea:has(img) { max-height: none; overflow-y: visible; }",
    (f".reveal .jp-OutputArea-output img {{ max-height: {IMAGE_MAX_PX}px; max-width: 100%; width: auto;"
     " height: auto; object-fit: contain; }"),
    # a long code cell's code scrolls inside it from CODE_MAX_PX, so that its output starts on the screen
    f".reveal .jp-CodeCell .jp-InputArea-editor {{ max-height: {CODE_MAX_PX}px; overflow-y: auto; }}",
    f".reveal .jp-CodeCell:has(.jp-OutputArea-output img) .jp-InputArea-editor {{ max-height: {PLOT_CODE_MAX_PX}px; }}",
    # without a GPU, the skip line and the reference block's label (FRAME_PX) stand over the output: the output
    # gets that much more room, so that its last line (the ✓ claim) shows without a scroll, and the code less
    (f".reveal .jp-Cell-outputArea:has(.course-reference-output):not(:has(img))"
     f" {{ max-height: {OUTPUT_MAX_PX + FRAME_PX}px; }}"),
    (f".reveal .jp-CodeCell:has(.course-reference-output) .jp-InputArea-editor"
     f" {{ max-height: {REFERENCE_CODE_MAX_PX}px; }}"),
    # a reference plot at about its own size, its code folded more
    (f".reveal .jp-CodeCell:has(.course-reference-output img) .jp-InputArea-editor"
     f" {{ max-height: {REFERENCE_PLOT_CODE_MAX_PX}px; }}"),
    f".reveal .course-reference-output img {{ max-height: {REFERENCE_IMAGE_MAX_PX}px; }}",
    # the setup cell (on the slide of the lecture's title, its only h1): folded, it scrolls inside itself
    (".reveal .slides section:not(:has(section)):has(h1) .jp-CodeCell .jp-InputArea-editor"
     f" {{ max-height: {SETUP_FOLDED_PX - 20}px; overflow-y: auto; }}"),
    # a long code line wraps inside its cell (as CodeMirror's lineWrapping does), so no text is cut off on the
    # right: CodeMirror would scroll it sideways, which no one does while presenting (instructor review 8)
    (".reveal .jp-CodeCell .cm-content { white-space: pre-wrap; white-space: break-spaces;"
     " word-break: break-word; overflow-wrap: anywhere; flex-shrink: 1; }"),
    # a slide that grows past the screen while on show (a cell run) scrolls: RISE sets a scroll bar only on
    # entering a slide (its setScrollingSlide; the MutationObserver that would call it again watches `.output`,
    # classic Jupyter's class, which JupyterLab's outputs do not have). Down to SLIDE_BOTTOM_PX above the screen's
    # bottom (RISE's own 95vh left ~36 px unused; the arrows stand in the right margin, the progress bar lower)
    (".reveal .slides section:not(:has(section))"
     f" {{ max-height: calc(100vh - {SLIDE_BOTTOM_PX}px); overflow-y: auto; }}"),
    # RISE's own scroll (its setScrollingSlide, on entering a slide taller than 95% of the screen) sets the slide
    # 95vh high and 20 px down: 48 px of the screen unused, and a 720 px takeaways slide cut at 684 (instructor
    # review 18d of 04). The rule above holds every slide instead, one threshold for a slide entered and one grown;
    # and its scroll bar shows only where the slide scrolls (RISE's `scroll` showed one on a slide that fits,
    # which a slide whose code fills the screen, entered at 708 px, is).
    (".reveal .slides section:not(:has(section))"
     " { height: auto !important; margin-top: 0 !important; overflow-y: auto !important; }"),
    # A code cell's code fills the room the screen has left (instructor review 18d of 04: run without a GPU, the
    # frame over the reference output left the code 13 lines and the lines the slide is about below its fold,
    # 120 to 240 px of the screen unused under the slide). A slide (all but the title's, which scrolls) is a
    # column held to the screen (above); its code cells' code, and only that, gives way (flex-shrink) to
    # what else the slide shows, so outputs, plots and text show whole and the code scrolls inside its cell
    # only where the screen is full. CODE_MAX_PX and the rest above are what estimated_px counts on: the code
    # shows at least that much where the slide rules fit the slide (tests/test_browser.py measures it).
    # `[style*="display: block"]`: the slides reveal.js shows (it sets `display` on each), not the hidden;
    # `.reveal-skip`: a cell off the slides (RISE hides it, `display: none`), which stays hidden.
    # The code gives way down to the caps above at most (or its own height, if less: calc-size), where the
    # rules fit a slide to the screen; where they do not (a plot and its code, past the screen alone), the slide
    # scrolls as before rather than fold the code to a line (06's [25]: 31 px without a GPU, measured). A browser
    # without calc-size (Chromium has it from 129; Firefox, Safari not yet) keeps the caps: the whole rule is
    # inside @supports.
    ("@supports (min-height: calc-size(max-content, size)) {"
     f" {LEAF}[style*=\"display: block\"] {{ display: flex !important; flex-direction: column; }}"
     f" {LEAF} > * {{ flex-shrink: 0; }}"
     f" {LEAF} > .jp-CodeCell:not(.reveal-skip) {{ flex-shrink: 1; min-height: 0; display: flex;"
     " flex-direction: column; }"
     f" {LEAF} > .jp-CodeCell > * {{ flex-shrink: 0; }}"
     f" {LEAF} > .jp-CodeCell > .jp-Cell-inputWrapper {{ flex-shrink: 1; min-height: 0; }}"
     + "".join(f" {LEAF} .jp-CodeCell{has} .jp-InputArea-editor {{ max-height: none; overflow-y: auto;"
               f" min-height: calc-size(max-content, min(size, {cap}px)); }}"
               for has, cap in (("", CODE_MAX_PX), (":has(.jp-OutputArea-output img)", PLOT_CODE_MAX_PX),
                                (":has(.course-reference-output)", REFERENCE_CODE_MAX_PX),
                                (":has(.course-reference-output img)", REFERENCE_PLOT_CODE_MAX_PX)))
     + " }"),
    # room on the right for reveal.js's arrows and slide number, so that they cover no text
    ".reveal .slides section { padding-right: 136px !important; box-sizing: border-box; }",
])
RISE = {"scroll": True, "overlay": f"<style>{PROJECTOR_CSS}</style>", "start_slideshow_at": "beginning",
        "transition": "none", "center": False}


def set_slides(nb: nbformat.NotebookNode) -> None:
    nb.metadata["rise"] = dict(RISE)
    for cell, kind in zip(nb.cells, slide_types(nb.cells), strict=True):
        cell.metadata["slideshow"] = {"slide_type": kind}


# The short version (issue 37): each guide names, on one line, the headings whose parts its short (45- or
# 30-minute) version leaves out beyond the optional ones, e.g. "The 45-minute slides leave out `## 4.` and `### 7.2`".
# A named part runs from its heading to the next heading of any level (a subsection it holds is named
# on its own). sync marks each lecture cell's path in its metadata: "short" (the short version), "core"
# (the core path only) or "optional"; `python -m tools.course slides short|core|all` presents one.
SHORT_LINE = re.compile(r"^The \d+-minute slides leave out")
PATHS = ("short", "core", "all")


def short_left_out(guide: Path) -> list[str]:
    """The heading prefixes (`## 4.`, `### 7.2`) that the guide's short slides leave out."""
    lines = [ln for ln in guide.read_text().splitlines() if SHORT_LINE.match(ln)]
    return re.findall(r"`(#{2,3} [^`]+)`", lines[0]) if lines else []


def cell_paths(nb: nbformat.NotebookNode, left_out: list[str]) -> list[str]:
    """For each cell, the shortest path it is on: "short", "core" or "optional" (tools/minutes.py)."""
    from tools.minutes import optional_cells

    paths, dropped = [], False
    for cell, optional in zip(nb.cells, optional_cells(nb), strict=True):
        if cell.cell_type == "markdown" and HEADING.match(cell.source):
            dropped = any(cell.source.startswith(prefix) for prefix in left_out)
        paths.append("optional" if optional else "core" if dropped else "short")
    return paths


def present(nb: nbformat.NotebookNode, path: str) -> None:
    """The slides of `path` ("short", "core" or "all"): every cell off it is `skip` in the slideshow."""
    shown = {"short": {"short"}, "core": {"short", "core"}, "all": {"short", "core", "optional"}}[path]
    on = [cell for cell in nb.cells if cell.metadata.get("course", {}).get("path", "short") in shown]
    kinds = dict(zip(map(id, on), slide_types(on), strict=True))  # one idea a slide among the cells shown
    for cell in nb.cells:
        cell.metadata["slideshow"] = {"slide_type": kinds.get(id(cell), "skip")}


# Issue 37: a lecture opened fresh shows the reference run's outputs, ✓ lines included, before anything runs.
# A markdown cell under the setup cell says whose they are, with the GPU and the date of the stamp
# (tools/reference.py, which rewrites it when it stamps). Markdown shows alike in JupyterLab, in its slides,
# on Colab and on GitHub (a style, or a mark in an output's metadata, shows in JupyterLab at most: GitHub and
# Colab drop a notebook's CSS, and nothing shows metadata), and it is no code cell's, so neither the stamps
# (the code and utils hashes) nor nbval (code cells' outputs) see it.
REFERENCE_NOTE_TAG = "reference-note"


def reference_note(nb: nbformat.NotebookNode) -> str:
    """The note under a lecture's setup cell: whose outputs the lecture shows until you run it."""
    stamp = nb.metadata.get("course", {}).get("reference_run")
    if stamp is None:
        return ("**The outputs below are not from the course's reference run yet** (this lecture has not been "
                "run on the reference GPU): each cell's output is replaced by yours when you run it.")
    versions = ", ".join(f"{name} {stamp[key]}" for name, key in (("PyTorch", "torch"), ("CuPy", "cupy"))
                         if stamp.get(key))
    return (f"**The outputs below are the course's reference run**, on an {stamp['gpu']} ({versions}) on "
            f"{stamp['date']}, not your machine's: each cell's output is replaced by yours when you run it "
            "(without a GPU, a GPU cell then shows the reference run's output again, framed and labelled).")


def set_reference_note(nb: nbformat.NotebookNode) -> None:
    """Write the note (reference_note) as the cell after the setup cell and the imports (the code cell right
    after the setup cell, where there is one), moving it there or adding it if it is not there: the setup
    and the imports run one after the other (slide_types), and the note begins the slides after them."""
    notes = [c for c in nb.cells if REFERENCE_NOTE_TAG in c.metadata.get("tags", [])]
    note = notes[0] if notes else nbformat.v4.new_markdown_cell(metadata={"tags": [REFERENCE_NOTE_TAG]})
    nb.cells = [c for c in nb.cells if REFERENCE_NOTE_TAG not in c.metadata.get("tags", [])]
    at = next(n for n, c in enumerate(nb.cells) if c.cell_type == "code") + 1
    if at < len(nb.cells) and nb.cells[at].cell_type == "code":
        at += 1  # after the imports
    nb.cells.insert(at, note)
    note.source = reference_note(nb)


NO_GPU = ("**No GPU?** GPU cells show the reference run's output; to run them, open this notebook in Colab "
          "(the badge above) with a GPU (Runtime > Change runtime type > T4 GPU).")


def _sync_lecture(nb: nbformat.NotebookNode, path: Path) -> None:
    from tools.minutes import lecture_minutes, with_time

    nb.cells = split_at_headings(nb.cells)
    set_reference_note(nb)
    if path.name > "01" and NO_GPU not in nb.cells[0].source:  # lecture 00 is about setting up, Colab included
        nb.cells[0].source = nb.cells[0].source.rstrip("\n") + "\n\n" + NO_GPU
    nb.cells[0].source = with_time(link_prerequisites(nb.cells[0].source), lecture_minutes(nb))
    _set_last_cell(nb, navigation(path))
    set_slides(nb)
    for cell, on in zip(nb.cells, cell_paths(nb, short_left_out(INSTRUCTORS / path.with_suffix(".md").name)),
                        strict=True):
        cell.metadata["course"] = {**cell.metadata.get("course", {}), "path": on}


# The short version's table in a guide ("| section | teach |": what to teach of each part) gets a column of
# minutes (instructor review 18 of 04: with minutes for whole sections only, the short version could not be paced
# section by section): for each row, the short slides' cells of the parts it names ("opening", "6", "12 and 13",
# "Takeaways") by tools/minutes.py's formula, before the cuts that the row names inside a part; "–" for a row
# that names no part of the lecture (the exercises). sync writes the column; tests/test_hygiene.py checks it.
TEACH_HEADER = ("| section | teach |", "| section | minutes | teach |")
TEACH_NOTE = ("*Minutes:* by the formula, the short slides' cells in the parts that the row names, before the cuts"
              " that it names inside them (`python -m tools.course sync` writes them).")
TEACH_ROW = re.compile(r"^\| ([^|]+?) \| (?:(?:\d+|–) \| )?(.*)$")


def row_parts(label: str) -> list[str]:
    """The parts (tools/minutes.py's part_minutes keys) that a row of the short version's table names."""
    if label.lower().startswith("opening"):
        return ["(opening)"]
    if label.lower().startswith("takeaways"):
        return ["takeaways"]
    return [str(int(n)) for n in re.findall(r"\d+", label)]


def teach_table(guide_text: str, nb: nbformat.NotebookNode, left_out: list[str]) -> str:
    """The guide's text with its short version's table given its column of minutes (see TEACH_HEADER)."""
    from tools.minutes import part_minutes

    lines = guide_text.split("\n")
    starts = [n for n, line in enumerate(lines) if line in TEACH_HEADER]
    if not starts:
        return guide_text
    minutes = part_minutes(nb, [p == "short" for p in cell_paths(nb, left_out)])
    at = starts[0]
    lines[at], lines[at + 1] = TEACH_HEADER[1], "|---|---:|---|"
    end = len(lines)
    for n in range(at + 2, len(lines)):
        row = TEACH_ROW.match(lines[n])
        if not row:
            end = n
            break
        parts = [p for p in row_parts(row[1]) if p in minutes]
        total = sum(minutes[p] for p in parts)
        shown = "–" if not parts else str(max(1, round(total))) if total else "0"
        lines[n] = f"| {row[1]} | {shown} | {row[2]}"
    if end + 1 < len(lines) and lines[end + 1].startswith(TEACH_NOTE.split(":")[0]):
        lines[end + 1] = TEACH_NOTE
    else:
        lines[end:end] = ["", TEACH_NOTE]
    return "\n".join(lines)


def sync_guide(guide: Path) -> bool:
    """Rewrite an instructors' guide's table of minutes from its lecture, and the minutes of its short
    version's table (teach_table); True if it changed."""
    from tools.minutes import MINUTES_BEGIN, MINUTES_END, sections_table

    lecture = read(LECTURES / guide.with_suffix(".ipynb").name)
    changed = _rewrite_between(guide, MINUTES_BEGIN, MINUTES_END, sections_table(lecture))
    text = guide.read_text()
    new = teach_table(text, lecture, short_left_out(guide))
    if new != text:
        guide.write_text(new)
    return changed or new != text


def sync(path: Path) -> bool:
    """Rewrite a notebook's badge (the first line that holds one) and setup cell, and a lecture's
    links (its prerequisites, its last cell: the way on) and its **Time:** (tools/minutes.py); True
    if changed."""
    nb = read(path)
    before = nbformat.writes(nb)
    if path.parent == LECTURES:
        _sync_lecture(nb, path)
    elif path.parent == SOLUTIONS and (LECTURES / path.name).exists():
        _set_last_cell(nb, exercises_navigation(path))
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "colab-badge.svg" in cell.source:
            lines = cell.source.splitlines()
            cell.source = "\n".join(colab_badge(path) if "colab-badge.svg" in ln else ln for ln in lines)
            break
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    first_code.source = setup_cell()
    if nbformat.writes(nb) == before:
        return False
    write(nb, path)
    return True


CLASS = ROOT / "class"  # `slides ... --clear`: the lectures' copies for a class, outputs cleared (git ignores it)
CLASS_NOTE = ("**This copy has no outputs yet:** each cell shows its output when you run it (without a GPU, a GPU "
              "cell shows the course's reference run's output, framed and labelled).")


def class_copy(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A lecture for a class (instructor review 8): every output and execution count cleared, so that a
    prediction's answer (a ✓ line, a stored result) is not on the screen before the cell runs; the code
    cells' text as it is. Its links point back into notebooks/, since the copy lives in class/.
    Without a GPU the skipped cells still show the reference: utils reads it from notebooks/, untouched."""
    copy = nbformat.reads(nbformat.writes(nb), as_version=4)
    for cell in copy.cells:
        if REFERENCE_NOTE_TAG in cell.metadata.get("tags", []):
            cell.source = CLASS_NOTE  # the reference note would speak of outputs that the copy has not
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "markdown":
            cell.source = re.sub(r"\]\((?=\d\d_[\w]+\.ipynb|scripts/)", "](../notebooks/", cell.source)
    return copy


def present_lectures(path: str, numbers: list[str], clear: bool = False) -> None:
    """`python -m tools.course slides short|core|all [NN ...] [--clear]`: the lectures' slides show that
    path; with --clear in a copy under class/, outputs cleared, and notebooks/ is left as it is."""
    for lecture in notebooks(LECTURES):
        if not numbers or lecture.name[:2] in numbers:
            nb = read(lecture)
            present(nb, path)
            shown = "everything" if path == "all" else f"the {path} path"
            if clear:
                CLASS.mkdir(exist_ok=True)
                target = CLASS / lecture.name
                write(class_copy(nb), target)
                print(f"{target.relative_to(ROOT)}: the slides show {shown}, outputs cleared (open "
                      f"/rise/class/{lecture.name}; notebooks/ is unchanged)")
                continue
            write(nb, lecture)
            shown = "everything, as committed" if path == "all" else shown
            print(f"{lecture.relative_to(ROOT)}: the slides show {shown}")


USAGE = ("usage: python -m tools.course sync\n"
         "       python -m tools.course slides short|core|all [NN ...] [--clear]   (all: as committed;\n"
         "         --clear: a copy in class/ without outputs, for a class; notebooks/ unchanged)")

if __name__ == "__main__":
    if sys.argv[1:2] == ["slides"] and sys.argv[2:3] and sys.argv[2] in PATHS:
        args = sys.argv[3:]
        present_lectures(sys.argv[2], [a for a in args if a != "--clear"], clear="--clear" in args)
        sys.exit(0)
    if sys.argv[1:] != ["sync"]:
        sys.exit(USAGE)
    for nb_path in notebooks(LECTURES, SOLUTIONS):
        if sync(nb_path):
            print(f"updated {nb_path.relative_to(ROOT)}")
    if sync_readme():
        print("updated README.md")
    for guide in sorted(INSTRUCTORS.glob("*.md")):
        if sync_guide(guide):
            print(f"updated {guide.relative_to(ROOT)}")
    print("now regenerate the exercises: python -m tools.make_exercises")
