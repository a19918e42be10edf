"""The browser test of issue 37's live slides, apart from tests/test_browser.py so that pytest-xdist (which keeps a
module's tests on one worker, `--dist loadscope`) runs it beside the other browser tests: every lecture's
full-window slideshow, and 01's short version, from a fresh kernel, started as the guides say (CONTRIBUTING,
"Teaching from the slides")."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from test_browser import (
    ACTION_MS,
    PAGE_MS,
    PROJECTOR,
    RAN,
    RUN_ALL_S,
    Lab,
    driver,
    first_slide_and_output,
    open_chromium,
    readme_lab,
    wait_until,
)

from conftest import ROOT, copy_course
from tools.course import read, write

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests
__all__ = ["driver"]  # the fixture, shared with tests/test_browser.py


# ---------------------------------------------------------------- a lecture presented live, from a fresh kernel
LIVE_LECTURE = "notebooks/04_streams_cupy.ipynb"  # the lecture of issue 37: its CPU cells need the setup's utils
SHORT_LECTURE = "01"  # presented with `python -m tools.course slides short 01`: a CPU cell on its short path
# In the slideshow: every cell (in the notebook's order): a code cell?, whether it is on the slide on show (its
# own, innermost, section is reveal.js's present one: a vertical stack's section is present with all its subslides),
# skipped (RISE's class for a `skip` cell) and hidden, its prompt, and what its outputs show (stderr is
# where a traceback goes).
CELL_JS = """c => ({
    code: c.classList.contains('jp-CodeCell'),
    active: c.classList.contains('jp-mod-active'),
    present: !!c.closest('section') && c.closest('section').classList.contains('present') && c.checkVisibility(),
    skipped: c.classList.contains('reveal-skip') && getComputedStyle(c).display === 'none',
    prompt: c.querySelector('.jp-InputPrompt') ? c.querySelector('.jp-InputPrompt').textContent.trim() : '',
    stderr: [...c.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
        .map(e => e.innerText).join(''),
    stdout: [...c.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]')]
        .map(e => e.innerText).join(''),
    reference: !!c.querySelector('.course-reference-output'),
})"""
LIVE_CELLS_JS = f"() => [...document.querySelectorAll('.reveal .jp-Cell')].map({CELL_JS})"
# One cell, by its position: what the live test polls (every cell's innerText, read at each poll of eleven
# slideshows, took most of the test's time)
ONE_CELL_JS = f"n => ({CELL_JS})(document.querySelectorAll('.reveal .jp-Cell')[n])"


def live_cells(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Positions (among all cells) of what an instructor runs first in the slides: the setup cell, the
    imports, the first other cell that needs no GPU (in 09, a Triton kernel on the CPU interpreter, skipped where
    Triton is not installed), and the first `%%requires cuda` cell, of those the slides show."""
    code = [n for n, c in enumerate(nb.cells) if c.cell_type == "code"]
    shown = [n for n in code[2:] if nb.cells[n].metadata.get("slideshow", {}).get("slide_type") != "skip"]
    cpu = next(n for n in shown if not nb.cells[n].source.startswith(("%%requires cuda", "%%requires cupy")))
    gpu = next(n for n in shown if nb.cells[n].source.startswith("%%requires cuda"))
    return {"setup": code[0], "imports": code[1], "cpu": cpu, "gpu": gpu}


SELECT_TRIES = 5


def select_cell(page, cell_nodes, n: int) -> bool:
    """Click cell n's prompt, as a presenter does, until the slideshow has made it the active cell (at most
    SELECT_TRIES clicks). The setup cell sits below the first screen of the title slide (1,184 px down in 04,
    measured 2026-11-29), so the click scrolls the slide first; a click while the slide still moves can land on
    the next cell, and Shift+Enter then runs that one (a CI run did: the imports ran, the setup cell never did)."""
    prompt = cell_nodes.nth(n).locator(".jp-InputPrompt")
    for _ in range(SELECT_TRIES):
        prompt.scroll_into_view_if_needed(timeout=ACTION_MS)
        box = wait_until(lambda: stable_box(page, prompt), 10)  # the slide has stopped moving
        if box:
            prompt.click(timeout=ACTION_MS)
            if page.evaluate(ONE_CELL_JS, n)["active"]:
                return True
        page.wait_for_timeout(500)
    return False


def stable_box(page, locator) -> dict | None:
    """The element's box if it has not moved in the last 200 ms, else None."""
    before = locator.bounding_box()
    page.wait_for_timeout(200)
    after = locator.bounding_box()
    return after if before and after == before else None


def live_slideshow(context, lab: Lab, course: Path, notebook: str, tmp: Path,
                   max_steps: int = 80) -> Iterator[None]:
    """Open `notebook` as a full-window slideshow (jupyterlab-rise's /rise/ page) on a fresh kernel, in a new page
    of the browser `context`, as an instructor does, and start as the guides say, word for word: click the setup
    cell (on the first slide) and press Shift+Enter twice, which must run the setup cell and the imports
    (instructor review of 04: the second press used to step onto the reference note only); then run, each on its
    slide (Space until the slide shows it, a click, Ctrl+Enter, which runs a cell where it stands), a CPU cell and
    a GPU cell. The setup cell must be on the first slide; no cell may raise; without a GPU, the GPU cell must say
    it was skipped and show its reference; the cells that the notebook's metadata skips (the switch:
    tools.course slides) are hidden, and only they.

    A generator: it yields wherever it waits for the page or the kernel, so that a test drives every lecture's
    slideshow at once (`drive`), each kernel starting and running while the others' pages are worked on; its
    return value is the list of problems ([] if none)."""
    nb = nbformat.read(course / notebook, as_version=4)
    title, _ = first_slide_and_output(nb)
    targets = live_cells(nb)
    url = re.sub(r"/lab/tree/[^?]*", f"/rise/{notebook}", lab.open_url)
    page = context.new_page()
    page.set_default_timeout(ACTION_MS)
    problems: list[str] = []
    stem = Path(notebook).stem

    def until(condition, timeout_s: float) -> Iterator[None]:
        """Yield until `condition()` is truthy or `timeout_s` passes; the outcome is in `met`."""
        deadline = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < deadline:
            yield
        met[0] = bool(condition())
        page.bring_to_front()  # what comes next clicks: a page in the background gets no animation frames, and a
        # click waits for two of them (an element at rest): 3 to 4 s a click with eleven pages open, measured

    met = [False]
    cell_now = lambda n: page.evaluate(ONE_CELL_JS, n)
    try:
        page.goto(url, timeout=PAGE_MS)
        present = ".reveal .slides section.present"
        yield from until(lambda: page.locator(present).count() and title in page.locator(present).first.inner_text(),
                         PAGE_MS / 1000)
        if not met[0]:
            page.screenshot(path=tmp / f"live-not-opened-{stem}.png")
            return [f"{url.split('?')[0]}: no slide shows the title {title!r}"]
        cells = page.evaluate(LIVE_CELLS_JS)
        skip = [c.metadata.get("slideshow", {}).get("slide_type") == "skip" for c in nb.cells]
        if [c["skipped"] for c in cells] != skip:
            wrong = [n for n, (c, s) in enumerate(zip(cells, skip, strict=False)) if c["skipped"] != s]
            problems.append(f"{notebook}: the slideshow hides other cells than its metadata skips: cells {wrong[:10]}")
        if not cells[targets["setup"]]["present"]:  # not shown: it cannot be run
            problems.append(f"{notebook}: the setup cell is not on the first slide: an instructor does not see it "
                            "to run it first (tools/course.py's slide_type)")
            del targets["setup"]
        cell_nodes = page.locator(".reveal .jp-Cell")
        ran = lambda n: RAN.match(cell_now(n)["prompt"])

        def run_problems(name: str, n: int, how: str = "") -> list[str]:
            """What went wrong with the run the last `until` waited for: it did not end, or the cell raised."""
            cell = cell_now(n)
            if not met[0]:
                return [f"{notebook}: {how}the {name} cell (cell {n}) did not run: its prompt reads {cell['prompt']!r}"]
            if cell["stderr"]:
                return [f"{notebook}: the {name} cell (cell {n}) raised: {cell['stderr'][-400:]}"]
            return []
        if "setup" in targets:  # the guides' start, word for word: click the setup cell, Shift+Enter twice
            if not select_cell(page, cell_nodes, targets["setup"]):
                page.screenshot(path=tmp / f"live-not-selected-{stem}.png")
                return [*problems, (f"{notebook}: {SELECT_TRIES} clicks on the setup cell (cell {targets['setup']}) "
                                    "did not make it the slideshow's active cell")]
            page.keyboard.press("Shift+Enter")
            yield from until(lambda: ran(targets["setup"]), RUN_ALL_S)
            page.keyboard.press("Shift+Enter")
            for name in ("setup", "imports"):
                n = targets.pop(name)
                yield from until(lambda n=n: ran(n), RUN_ALL_S)
                problems += run_problems(name, n, "click the setup cell, Shift+Enter twice (the guides' start): ")
        for name, n in sorted(targets.items(), key=lambda target: target[1]):  # in the slides' order
            steps = 0
            while not cell_now(n)["present"] and steps < max_steps:
                page.keyboard.press("Space")  # the next slide, subslide or fragment, as a presenter steps on
                page.wait_for_timeout(50)  # reveal.js shows it at once (transition "none", tools/course.py)
                steps += 1
            if not cell_now(n)["present"]:
                problems.append(f"{notebook}: {max_steps} steps on, no slide shows the {name} cell (cell {n})")
                continue
            if not select_cell(page, cell_nodes, n):
                problems.append(f"{notebook}: {SELECT_TRIES} clicks on the {name} cell (cell {n}) did not make it the "
                                "slideshow's active cell")
                continue
            page.keyboard.press("Control+Enter")  # the guides: a cell runs where it stands
            yield from until(lambda n=n: ran(n), RUN_ALL_S)
            cell, found = cell_now(n), run_problems(name, n)
            if found:
                problems += found
            elif name == "gpu" and not __import__("utils").has_cuda() and not (
                    cell["stdout"].startswith("skipped (needs cuda") and cell["reference"]):
                problems.append(f"{notebook}: the GPU cell (cell {n}) printed {cell['stdout'][:200]!r}, with "
                                f"{'a' if cell['reference'] else 'no'} reference block")
        if problems:
            page.screenshot(path=tmp / f"live-problems-{stem}.png")
        return problems
    finally:
        page.close()


def drive(shows: list[Iterator[None]], pause_s: float = 0.1) -> list:
    """Run the generators (live_slideshow) side by side, a step of each in turn, until every one has returned;
    their return values, in order. A step is what one does until it must wait (for a page or a kernel)."""
    results: list = [None] * len(shows)
    waiting = dict(enumerate(shows))
    while waiting:
        for k, show in list(waiting.items()):
            try:
                next(show)
            except StopIteration as done:
                results[k] = done.value
                del waiting[k]
        time.sleep(pause_s)
    return results


def test_lectures_run_live_as_full_window_slideshows_from_a_fresh_kernel_and_the_short_version(driver, tmp_path):
    """Issue 37: in every lecture, the setup cell is on the title slide, so that an instructor runs it first; then
    the slideshow's first CPU cell and first GPU cell (skipped without a GPU) run without an error: every lecture
    as committed, and lecture 01 after the documented switch to the 45-minute version (`python -m tools.course
    slides short 01`, run in a second copy, its notebook then put beside the others under another name, so that it
    opens on a kernel of its own), whose slides hide what it leaves out.  The saved prompts are cleared in the
    copy, so that each prompt tells whether this kernel ran it."""
    course = copy_course(tmp_path / "course")
    switched = copy_course(tmp_path / "switched")
    switch = [sys.executable, "-m", "tools.course", "slides", "short", SHORT_LECTURE]
    subprocess.run(switch, cwd=switched, check=True, capture_output=True)
    (short,) = (switched / "notebooks").glob(f"{SHORT_LECTURE}_*.ipynb")
    left_out = [n for n, c in enumerate(read(short).cells) if c.metadata["course"]["path"] != "short"]
    assert left_out and all(read(short).cells[n].metadata.slideshow.slide_type == "skip" for n in left_out), (
        f"{shlex.join(switch[1:])} does not skip what the short version leaves out")
    short_lecture = f"notebooks/{short.stem}-short.ipynb"
    shutil.copyfile(short, course / short_lecture)
    lectures = [*sorted(f"notebooks/{path.name}" for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")),
                short_lecture]
    assert LIVE_LECTURE in lectures and len(lectures) >= 11
    for lecture in lectures:
        nb = read(course / lecture)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.execution_count = None
        write(nb, course / lecture)
    with readme_lab(course, tmp_path) as lab:
        context, _ = open_chromium(driver, tmp_path / "chromium-live", *PROJECTOR)
        try:
            shows = [live_slideshow(context, lab, course, lecture, tmp_path) for lecture in lectures]
            problems = [problem for found in drive(shows) for problem in found]
        finally:
            context.close()
        assert not problems, "\n".join(problems) + f"\n(screenshots in {tmp_path}; server log:)\n{lab.log_tail()}"
