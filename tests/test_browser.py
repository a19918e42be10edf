"""The course as a student first meets it: JupyterLab started by README.md's command, in a real browser.

README.md's command (the last line of the blocks under "Set up, and open the course") is read from
README.md and run on a temporary copy of the course (notebooks/, exercises/, solutions/, utils/,
tools/, pyproject.toml: the repository is left as it is), on a free local port, with a token and
--no-browser. Headless Chromium (Debian's, /usr/bin/chromium, driven by Playwright; nothing
downloads a browser) opens the page that the command would open in a student's browser, clears the
outputs and (once the server holds the notebook's kernel alone, idle and connected) runs every cell
with Run > Run All Cells, saves the notebook through the UI and reads
the saved copy: every code cell ran, none raised. Then it clicks the link of the last markdown cell
to the exercises, which must open in JupyterLab (not a 404). A second test runs the same check on a
synthetic notebook with a cell that raises and a broken link: both must be reported. On a machine
without a GPU, a third runs the setup cell and two `%%requires cuda` cells of the same lecture one by
one: each must show the reference run's output as a marked block (utils/cells.py), legible in the
light and the dark theme; saved, each block must carry the reference in its output metadata (so that
the next run shows it again, once). Opened, a lecture is not marked modified unless the kernel's
Python differs from the one its file names; as slides, it shows no "Click to add a cell." button.
Presented as a full-window slideshow from a fresh kernel (lecture 04, and lecture 01 switched to its
45-minute version by `python -m tools.course slides short 01`), the setup cell is on the first slide; a
click on it and Shift+Enter twice (the guides' start) run it and the imports, and then a CPU cell and a
skipped GPU cell run without an error; the slides hide exactly the cells that the switch skips. Every
lecture's core slides (`slides core`) are measured at 1280x720, in one browser, without running a cell,
every plot on them included (whole, on the screen), and then as a class without a GPU sees them run (each GPU
cell's outputs in the reference frame): an output that shows whole on a GPU still does, and no slide grows past
the screen; and in both views a code cell's code scrolls inside its cell only where the screen is full, and
shows at least what the slide rules count on (code_problems).

Without /usr/bin/chromium or the playwright package the tests skip, saying why; with CI set
(CI=true), they fail instead.
"""

from __future__ import annotations

import html
import json
import os
import posixpath
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest
from test_environment import OPEN, readme_blocks

from conftest import ROOT, copy_course
from tools.course import (
    CODE_LINE_PX,
    CODE_MAX_PX,
    PLOT_CODE_MAX_PX,
    REFERENCE_CODE_MAX_PX,
    REFERENCE_PLOT_CODE_MAX_PX,
    RISE,
    SLIDE_BOTTOM_PX,
    read,
    write,
)

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LECTURE = "notebooks/00_setup.ipynb"  # what README's command opens
EXERCISES_LINK = "../exercises/00_setup_exercises.ipynb"  # the lecture's last markdown cell links its exercises

# Generous limits on a 2-core machine; every wait is for a condition, these only bound it.
SERVER_START_S = 120
PAGE_MS = 120_000  # JupyterLab's page, its notebook and kernel ready
ACTION_MS = 30_000  # a click, in a page that is ready
RUN_ALL_S = 300
SAVE_S = 60
LINK_S = 60
DIALOG_S = 10  # a dialog that closes by itself (a notification) within this is not in the way


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def why_no_browser() -> str | None:
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (python -m pip install -r requirements-dev.txt)"
    return None


@pytest.fixture(scope="module")
def driver():
    """Playwright, to drive /usr/bin/chromium; skipped (outside CI) or failed (in CI) without them."""
    missing = why_no_browser()
    if missing:
        if in_ci():
            pytest.fail(f"CI is set, so the browser test must run, but {missing}", pytrace=False)
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


def readme_lab_command() -> list[str]:
    """README's command that opens the course (`jupyter lab ...`), the same in its CPU and GPU blocks."""
    commands = {block.strip().splitlines()[-1] for block in readme_blocks(OPEN)}
    assert len(commands) == 1, f"README.md's blocks open the course differently: {commands}"
    command = shlex.split(commands.pop())
    assert command[:2] == ["jupyter", "lab"], command
    return command


@dataclass
class Lab:
    open_url: str  # what README's command opens in the student's browser (with the token)
    log: Path
    api: str = ""  # the server's REST API: http://127.0.0.1:<port>/api
    token: str = ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def get(self, what: str):
        """GET /api/<what> (kernels, sessions), decoded."""
        with urllib.request.urlopen(f"{self.api}/{what}?token={self.token}", timeout=10) as answer:
            return json.load(answer)

    def kernel_events(self, since: int = 0) -> list[str]:
        """The server log's lines on kernels starting, stopping and restarting, from byte `since` on."""
        with open(self.log, "rb") as log:
            log.seek(since)
            lines = log.read().decode(errors="replace").splitlines()
        return [line.strip() for line in lines if KERNEL_EVENT.search(line)]


KERNEL_EVENT = re.compile(r"Kernel (started|shutdown|restarted)|[Rr]estarting kernel|KernelRestarter")
STARTED = re.compile(r"Kernel started: (\S+)")
SETTLE_S = 3  # the notebook's kernel, alone, idle and connected for this long before Run All


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def readme_lab(course: Path, tmp: Path) -> Iterator[Lab]:
    """README's `jupyter lab` command, run in `course` with this interpreter's Jupyter, and stopped after.

    Added to it: a free port, a token, --no-browser (and --allow-root as root); fresh Jupyter config
    and runtime folders, so that no saved workspace or setting of the machine's user plays a part.
    """
    port, token = free_port(), secrets.token_hex(16)
    command = readme_lab_command()
    argv = [sys.executable, "-m", "jupyter", *command[1:], "--no-browser", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    runtime = tmp / "jupyter-runtime"
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime), JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
               IPYTHONDIR=str(tmp / "ipython"))
    log = tmp / "jupyter.log"
    with open(log, "w") as out:
        server = subprocess.Popen(argv, cwd=course, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    lab = Lab(open_url="", log=log, api=f"http://127.0.0.1:{port}/api", token=token)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"{shlex.join(command)} exited ({server.returncode}):\n{lab.log_tail()}")
            try:  # answered only once the server has started, and written its browser-open files
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {SERVER_START_S} s:\n{lab.log_tail()}")
                time.sleep(0.2)
        # The page that the command opens in a browser: with a file to open, its own redirect file.
        opens = (sorted(runtime.glob("jpserver-file-to-run-*-open.html"))
                 or sorted(runtime.glob("jpserver-*-open.html")))
        assert opens, f"JupyterLab wrote no browser-open file in {runtime}"
        link = re.search(r'href="([^"]+)"', opens[0].read_text())
        assert link, opens[0].read_text()
        lab.open_url = html.unescape(link.group(1))
        yield lab
    finally:
        server.send_signal(signal.SIGTERM)  # JupyterLab shuts its kernels down on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # the server's own process group: it and its kernels
            server.wait()


# In the page: the notebook panel of a document, found by the path that its tab shows.
PANEL_JS = """path => {
    const tab = [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab')]
        .find(t => (t.title || '').split('\\n').includes('Path: ' + path));
    return tab ? document.getElementById(tab.dataset.id) : null;
}"""
STATE_JS = f"""path => {{
    const panel = ({PANEL_JS})(path);
    if (!panel) return null;
    const current = !!document.querySelector(
        '.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current[data-id="' + panel.id + '"]');
    const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    return {{
        current,
        cells: panel.querySelectorAll('.jp-Notebook-cell').length,
        prompts: [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent.trim()),
        stderr: panel.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length,
        kernel: indicator ? indicator.dataset.status : null,
    }};
}}"""
RAN = re.compile(r"^\[\d+\]:$")


QUEUE_TRIES = 5


def queue_cell(page, cell) -> bool:
    """Click the cell's prompt until JupyterLab marks the cell active (`jp-mod-active`), then Shift+Enter, until its
    prompt leaves `[ ]:` (queued or run); at most QUEUE_TRIES times (a click that Playwright's checks hold back past
    ACTION_MS is forced).  A CI run on a loaded machine (2026-12-01) clicked
    and pressed once, and the setup cell's prompt still read `[ ]:` after RUN_ALL_S: the key never reached it.  A
    press is tried again only while the cell is still active and unqueued, so no other cell runs instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    prompt = cell.locator(".jp-InputPrompt")
    for _ in range(QUEUE_TRIES):
        try:
            prompt.click(timeout=ACTION_MS)
        except PlaywrightTimeout:
            # Beside four busy helpers (2026-12-01) the prompt never looked "stable" to Playwright's checks for
            # ACTION_MS (JupyterLab still laying the page out); a click without them lands all the same, and the
            # test below it (the cell active, then queued) says whether it did
            prompt.click(timeout=ACTION_MS, force=True)
        if not wait_until(lambda: "jp-mod-active" in (cell.get_attribute("class") or ""), 5):
            continue
        page.keyboard.press("Shift+Enter")
        if wait_until(lambda: prompt.inner_text().strip() != "[ ]:", 10):
            return True
    return False


def wait_until(condition, timeout_s: float, interval_s: float = 0.25):
    """Poll `condition` until it returns something truthy (returned) or `timeout_s` passes (None)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value or None
        time.sleep(interval_s)


def settled_kernel(lab: Lab, notebook: str) -> str | None:
    """The id of `notebook`'s kernel once the server has held that kernel alone, idle, connected and the
    notebook's session's, for SETTLE_S; None if that did not happen within PAGE_MS.

    Why: on a busy 2-core CI machine the server once started a second kernel just as Run All began (its
    log: a kernel shut down while it was still importing, then the page connecting again to the first) and
    the queued cells were dropped, so Run All never finished. A student would run again; the test waits
    for the server to settle before it runs, and tells such a replacement apart when it happens anyway."""
    since, held = time.monotonic(), None

    def steady():
        nonlocal since, held
        kernels = lab.get("kernels")
        sessions = [s for s in lab.get("sessions") if s.get("path") == notebook]
        one = (len(kernels) == 1 and len(sessions) == 1 and sessions[0]["kernel"]["id"] == kernels[0]["id"]
               and kernels[0]["execution_state"] == "idle" and kernels[0].get("connections", 0) >= 1)
        now, kernel = time.monotonic(), kernels[0]["id"] if one else None
        if kernel is None or kernel != held:
            since, held = now, kernel
            return None
        return kernel if now - since >= SETTLE_S else None

    return wait_until(steady, PAGE_MS / 1000, 0.5)


def read_if_complete(path: Path):
    """The notebook at `path`, or None while it is still being written (empty or cut short)."""
    try:
        return nbformat.read(path, as_version=4)
    except ValueError:  # nbformat.reader.NotJSONError is one
        return None


def dialog_in_front(page, action: str) -> str | None:
    """None, or the problem when a JupyterLab dialog stands in front of `action` (its text).

    A dialog that is still open after DIALOG_S is dismissed (Escape, its Cancel), so that the test
    goes on to report everything else instead of waiting for a click that cannot land.
    """
    def texts():
        return page.eval_on_selector_all(".jp-Dialog", "ds => ds.map(d => d.innerText)")

    if not texts() or wait_until(lambda: not texts(), DIALOG_S):
        return None
    shown = texts()
    page.keyboard.press("Escape")
    return f"a dialog stands in front of {action}: {shown}"


def menu(page, top: str, item: str) -> str | None:
    """Choose a menu command with the mouse, as a student does: e.g. Run > Run All Cells.

    Returns None, or the problem: a dialog open in front of the menu (its text).
    """
    if blocked := dialog_in_front(page, f"{top} > {item}"):
        return blocked
    page.locator(".lm-MenuBar-item", has_text=re.compile(rf"^{re.escape(top)}$")).click()
    label = page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$"))
    page.locator(".lm-Menu .lm-Menu-item").filter(has=label).click()
    return None


def link_text(nb: nbformat.NotebookNode, href: str) -> str | None:
    """The text of the link to `href` in the notebook's last markdown cell."""
    last = [c for c in nb.cells if c.cell_type == "markdown"][-1]
    found = re.search(r"\[([^\]]+)\]\(" + re.escape(href) + r"\)", last.source)
    return found.group(1) if found else None


# A dialog that covers the page and closes on Escape, as JupyterLab's do: the detector test plants it.
PLANTED_DIALOG_JS = """() => {
    const d = document.createElement('div');
    d.className = 'jp-Dialog';
    d.innerText = 'planted by the test';
    d.style = 'position:fixed; inset:0; z-index:100000; background:white';
    document.body.appendChild(d);
    document.addEventListener('keydown', e => { if (e.key === 'Escape') d.remove(); });
}"""


def open_chromium(p, profile: Path, width: int, height: int):
    """Chromium (/usr/bin/chromium, headless, a fresh profile) and its page, with the tests' action timeout."""
    browser = p.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
        viewport={"width": width, "height": height})
    page = browser.pages[0] if browser.pages else browser.new_page()
    page.set_default_timeout(ACTION_MS)
    return browser, page


def check_in_browser(p, lab: Lab, course: Path, notebook: str, link: str, tmp: Path,
                     plant_dialog: bool = False, note: tuple[str, ...] | None = None) -> list[str]:
    """Every problem that a student would meet: open `notebook` (at lab.open_url), see that it shows `note`
    (the parts of one markdown cell's text) before anything runs, Run All Cells, save, then click the link to
    `link` in its last markdown cell. Returns the problems, [] if none.
    `plant_dialog`: put a dialog in front of the link first (the detector test)."""
    problems: list[str] = []
    path = course / notebook
    source = nbformat.read(path, as_version=4)
    n_code = sum(c.cell_type == "code" for c in source.cells)
    browser, page = open_chromium(p, tmp / "chromium-profile", 1400, 1000)
    try:
        page.set_default_navigation_timeout(PAGE_MS)
        missing: list[str] = []  # paths that the contents API answered with a 404
        page.on("response", lambda r: r.status == 404 and "/api/contents/" in r.url
                and missing.append(unquote(r.url.split("/api/contents/", 1)[1].split("?")[0])))

        def state(nb_path: str) -> dict | None:
            return page.evaluate(STATE_JS, nb_path)

        page.goto(lab.open_url)
        # Opened: the notebook's tab is the current one, every cell is in the page, the kernel is idle.
        loaded = wait_until(lambda: (s := state(notebook)) and s["current"] and len(s["prompts"]) == n_code
                            and s["cells"] == len(source.cells) and s["kernel"] == "idle" and s,
                            PAGE_MS / 1000)
        if not loaded:
            tabs = page.eval_on_selector_all(".lm-DockPanel-tabBar .lm-TabBar-tab",
                                             "ts => ts.map(t => t.title)")
            page.screenshot(path=tmp / "not-opened.png")
            return [(f"{lab.open_url.split('?')[0]} did not open {notebook} with its kernel idle "
                     f"(tabs: {tabs}; state: {state(notebook)})")]

        # Opened fresh, nothing run: the note under the setup cell says whose the outputs are (issue 37).
        if note is not None:
            panel_id = page.evaluate(f"path => ({PANEL_JS})(path).id", notebook)
            shown = page.locator(f'[id="{panel_id}"] .jp-MarkdownCell .jp-RenderedMarkdown', has_text=note[0])
            if not (shown.count() == 1 and shown.first.is_visible()
                    and all(part in shown.first.inner_text() for part in note)):
                page.screenshot(path=tmp / "no-reference-note.png")
                problems.append(f"{notebook}: opened fresh, it shows no note that reads {note} "
                                f"({shown.count()} found)")

        kernel = settled_kernel(lab, notebook)
        if kernel is None:
            return [(f"{notebook}: the server did not settle on one idle kernel for it within {PAGE_MS // 1000} s "
                     f"(kernels {lab.get('kernels')}; kernel events {lab.kernel_events()})")]

        def run_all() -> tuple[bool, float, list[str]]:
            """Run All from a clean slate (the saved outputs cleared first, so that every prompt tells):
            whether it finished, its time, and the ids of kernels started meanwhile."""
            if blocked := menu(page, "Edit", "Clear Outputs of All Cells"):
                problems.append(blocked)
                return False, 0.0, []
            if not wait_until(lambda: state(notebook)["prompts"] == ["[ ]:"] * n_code, 30):
                problems.append(f"{notebook}: Clear Outputs of All Cells left {state(notebook)['prompts']}")
            log_at, start = lab.log.stat().st_size, time.monotonic()
            if blocked := menu(page, "Run", "Run All Cells"):
                problems.append(blocked)
                return False, 0.0, []
            # Done: every code cell ran, or nothing is queued any more and a cell raised (Run All stops).
            done = wait_until(lambda: (s := state(notebook)) and len(s["prompts"]) == n_code and (
                all(RAN.match(t) for t in s["prompts"]) or ("[*]:" not in s["prompts"] and s["stderr"] > 0)
            ) and s, RUN_ALL_S, 0.5)
            events = lab.kernel_events(log_at)
            return bool(done), time.monotonic() - start, [m.group(1) for e in events if (m := STARTED.search(e))]

        finished, ran_s, started = run_all()
        if not finished and started:
            # Another kernel started during the run (not a restart: that keeps the id): the race that
            # settled_kernel() waits out. Said, and run once more; a second time, it is a problem.
            print(f"{notebook}: kernels {started} started during Run All (the notebook's was {kernel}); "
                  f"ran it again")
            finished, ran_s, started = run_all()
        if not finished:
            problems.append(f"{notebook}: Run All Cells had not finished after {RUN_ALL_S} s: "
                            f"prompts {state(notebook)['prompts']}; kernel events {lab.kernel_events()}")

        # Save through the UI and read what was saved: the notebook as the student's run left it.
        saved_before = path.stat().st_mtime_ns
        if blocked := menu(page, "File", "Save Notebook"):
            problems.append(blocked)
        elif not wait_until(lambda: path.stat().st_mtime_ns != saved_before, SAVE_S):
            problems.append(f"{notebook}: File > Save Notebook did not save it within {SAVE_S} s")
        # jupyter-server writes the file in place (its backup copy is what makes the save safe), so
        # on a busy machine the file can be read half-written: wait until it parses.
        saved = wait_until(lambda: read_if_complete(path), SAVE_S)
        if saved is None:
            problems.append(f"{notebook}: the saved file was not a whole notebook within {SAVE_S} s")
            return problems
        code = [c for c in saved.cells if c.cell_type == "code"]
        if len(code) != n_code:
            problems.append(f"{notebook}: the saved copy has {len(code)} code cells, not {n_code}")
        for number, cell in enumerate(code, 1):
            first = cell.source.splitlines()[0] if cell.source else ""
            for out in cell.outputs:
                if out.output_type == "error":
                    problems.append(
                        f"{notebook}: code cell {number} ({first!r}) raised {out.ename}: {out.evalue}")
            if cell.execution_count is None:
                problems.append(f"{notebook}: code cell {number} ({first!r}) did not run")

        # Follow the link of the last markdown cell, as rendered, and see it open in JupyterLab.
        target = posixpath.normpath(posixpath.join(posixpath.dirname(notebook), link))
        text = link_text(source, link)
        if text is None:
            problems.append(f"{notebook}: its last markdown cell has no link to {link}")
        else:
            before = len(missing)
            panel_id = page.evaluate(f"path => ({PANEL_JS})(path).id", notebook)
            cells = page.locator(f'[id="{panel_id}"] .jp-MarkdownCell .jp-RenderedMarkdown')
            if plant_dialog:
                page.evaluate(PLANTED_DIALOG_JS)
            if blocked := dialog_in_front(page, f"the link [{text}]({link})"):
                problems.append(f"{notebook}: {blocked}")
            cells.get_by_role("link", name=text, exact=True).last.click(timeout=ACTION_MS)
            target_cells = (len(nbformat.read(course / target, as_version=4).cells)
                            if (course / target).is_file() else None)
            opened = wait_until(lambda: len(missing) > before or (
                (s := state(target)) and s["current"] and s["cells"] > 0
                and (target_cells is None or s["cells"] == target_cells)), LINK_S)
            dialogs = page.eval_on_selector_all(".jp-Dialog", "ds => ds.map(d => d.innerText)")
            if len(missing) > before:
                problems.append(f"{notebook}: its link [{text}]({link}) gives a 404 "
                                f"(no {missing[before]} under the server's root)")
            elif not opened:
                problems.append(
                    f"{notebook}: its link [{text}]({link}) did not open {target} within {LINK_S} s")
            if dialogs:
                problems.append(f"{notebook}: after its link, JupyterLab shows a dialog: {dialogs}")
        if problems:
            page.screenshot(path=tmp / "problems.png")
        print(f"{notebook}: Run All Cells took {ran_s:.1f} s in the browser")
    finally:
        browser.close()
    return problems


def reference_note_shown(nb: nbformat.NotebookNode) -> tuple[str, ...]:
    """What a fresh lecture's reference note (tools/course.py) shows: its first words, the GPU, the date."""
    stamp = nb.metadata["course"]["reference_run"]
    return "The outputs below are the course's reference run", stamp["gpu"], stamp["date"]


def test_readme_command_opens_notebook_00_runs_all_cells_and_links_to_its_exercises(driver, tmp_path):
    """...and, opened, before anything runs, notebook 00 says that its outputs are the reference run's (the
    GPU, the date: issue 37)."""
    course = copy_course(tmp_path / "course")
    with readme_lab(course, tmp_path) as lab:
        problems = check_in_browser(driver, lab, course, LECTURE, EXERCISES_LINK, tmp_path,
                                    note=reference_note_shown(read(course / LECTURE)))
        report = "\n".join(problems) + f"\n(screenshot in {tmp_path}; server log:)\n{lab.log_tail()}"
        assert not problems, report


def test_the_browser_check_reports_a_cell_that_raises_and_a_broken_link(driver, tmp_path):
    """The detector itself: the same check on a notebook with one cell that raises, a dialog in front
    of its link, and a broken link."""
    course = tmp_path / "course"
    (course / "notebooks").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A broken notebook"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("raise ValueError('planted by the test')"),
        nbformat.v4.new_markdown_cell(f"**Exercises:** [exercises/00_setup_exercises.ipynb]({EXERCISES_LINK})"),
    ]
    nbformat.write(nb, course / LECTURE)  # where README's command looks; there is no exercises/ here
    with readme_lab(course, tmp_path) as lab:
        problems = check_in_browser(driver, lab, course, LECTURE, EXERCISES_LINK, tmp_path, plant_dialog=True)
        report = "\n".join(problems) + f"\n(screenshot in {tmp_path}; server log:)\n{lab.log_tail()}"
    assert any("a dialog stands in front of the link" in p and "planted by the test" in p for p in problems), report
    assert any("code cell 2" in p and "raised ValueError: planted by the test" in p for p in problems), report
    assert any("404" in p and "exercises/00_setup_exercises.ipynb" in p for p in problems), report
    assert all("code cell 1 " not in p for p in problems), report


# ---------------------------------------------------------------- a lecture as slides (RISE)
SLIDES_LECTURE = "notebooks/01_memory.ipynb"  # a lecture whose code cells print from the start


def first_slide_and_output(nb: nbformat.NotebookNode) -> tuple[str, str]:
    """The title of a lecture's first slide, and the first line of the first output a slide shows."""
    title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip()
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("slideshow", {}).get("slide_type") != "skip":
            text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
            if text.strip():
                return title, text.strip().splitlines()[0].strip()
    raise AssertionError("no code cell of the slides prints anything")


# The slides on show that are taller than the slideshow and cannot scroll (RISE's `scroll` option
# gives such a slide a scroll bar; PROJECTOR_CSS holds every slide to the screen, `overflow-y: auto`, so that
# only a slide that scrolls shows one): [[their height, the slideshow's, their overflow-y], ...]
CUT_OFF_SLIDES_JS = """() => {
    const reveal = document.querySelector('.reveal').getBoundingClientRect().height;
    return [...document.querySelectorAll('.reveal .slides section.present')]
        .filter(s => s.scrollHeight > 1.05 * reveal
                     && (!['scroll', 'auto'].includes(getComputedStyle(s).overflowY) || s.clientHeight > reveal))
        .map(s => [s.scrollHeight, Math.round(reveal), getComputedStyle(s).overflowY]);
}"""


# JupyterLab's "Click to add a cell." button (.jp-Notebook-footer, after a notebook's last cell): in RISE's
# layout it lies over the first slide's title, and shows on hover (issue 23).
ADD_CELL_BUTTON_JS = """() => [...document.querySelectorAll('.reveal .jp-Notebook-footer')]
    .filter(e => getComputedStyle(e).display !== 'none' && getComputedStyle(e).visibility !== 'hidden'
                 && e.getClientRects().length > 0).map(e => e.textContent.trim()).join(' ')"""
ADD_CELL_AT_JS = """() => { const r = document.querySelector('.reveal .jp-Notebook-footer').getBoundingClientRect();
    return [r.x, r.y, r.width, r.height].map(Math.round); }"""


def slideshow_problems(p, lab: Lab, notebook: str, tmp: Path, max_slides: int = 12) -> list[str]:
    """Open `notebook` as a RISE slideshow (jupyterlab-rise's /rise/ page), as an instructor does with
    Alt+R: its first slide must show the lecture's title, with no JupyterLab "Click to add a cell."
    button in the slideshow (over the title); going on (the right arrow, as a presenter
    does), a slide must show the first saved output of the lecture's slides, and scroll if it is
    taller than the window."""
    nb = nbformat.read(ROOT / notebook, as_version=4)
    title, output = first_slide_and_output(nb)
    url = lab.open_url.replace("/lab/tree/", "/rise/", 1)
    url = re.sub(r"/rise/[^?]*", f"/rise/{notebook}", url)
    browser, page = open_chromium(p, tmp / "chromium-slides", 1280, 800)
    try:
        page.goto(url, timeout=PAGE_MS)
        present = ".reveal .slides section.present"
        shown = wait_until(lambda: page.locator(present).count() and title in page.locator(present).first.inner_text(),
                           PAGE_MS / 1000)
        if not shown:
            page.screenshot(path=tmp / "slides-not-opened.png")
            return [f"{url.split('?')[0]}: no slide shows the title {title!r}"]
        # RISE applies its overlay (tools/course.py) a moment after the first slide shows: give it that moment
        if not wait_until(lambda: not page.evaluate(ADD_CELL_BUTTON_JS), 5):  # it sits over the first slide's title
            covering = page.evaluate(ADD_CELL_BUTTON_JS)
            page.screenshot(path=tmp / "slides-add-cell-button.png")
            return [(f"the slideshow shows JupyterLab's {covering!r} button (at {page.evaluate(ADD_CELL_AT_JS)}, "
                     f"the title at {page.locator(present).first.locator('h1').first.bounding_box()}): "
                     "a click there adds a cell; tools/course.py's RISE hides it")]

        def output_shown():
            return any(page.get_by_text(output, exact=False).nth(i).is_visible()
                       for i in range(page.get_by_text(output, exact=False).count()))

        for _ in range(max_slides):
            if wait_until(output_shown, 3):  # a slide's transition takes a moment, longer on a busy machine
                return [] if wait_until(lambda: not page.evaluate(CUT_OFF_SLIDES_JS), 3) else [
                    f"a slide taller than the window does not scroll: {page.evaluate(CUT_OFF_SLIDES_JS)}"]
            page.keyboard.press("ArrowRight")
        page.screenshot(path=tmp / "slides-no-output.png")
        return [f"{max_slides} slides on, no slide shows the saved output {output!r}"]
    finally:
        browser.close()


def test_a_lecture_opens_as_slides_with_its_title_and_its_outputs(driver, tmp_path):
    """The lecture's slides with the RISE settings that `python -m tools.course sync` writes
    (tests/test_hygiene.py checks that every lecture has them)."""
    course = copy_course(tmp_path / "course")
    nb = read(course / SLIDES_LECTURE)
    nb.metadata["rise"] = dict(RISE)
    write(nb, course / SLIDES_LECTURE)
    with readme_lab(course, tmp_path) as lab:
        problems = slideshow_problems(driver, lab, SLIDES_LECTURE, tmp_path)
        assert not problems, "\n".join(problems) + f"\n(screenshot in {tmp_path}; server log:)\n{lab.log_tail()}"



# ---------------------------------------------------------------- slides on a projector: measured, 1280x720
PROJECTOR = (1280, 720)
# The slide on show (the innermost present section): its title (first heading), content height and the
# slideshow's height.
SLIDE_ON_SHOW_JS = """() => {
    const shown = [...document.querySelectorAll('.reveal .slides section.present')]
        .filter(s => !s.querySelector('section.present'));
    if (!shown.length) return null;
    const s = shown[0];
    if (!s.dataset.courseSlide) s.dataset.courseSlide = String(document.querySelectorAll('[data-course-slide]').length);
    const heading = s.querySelector('h1, h2, h3');
    return {id: s.dataset.courseSlide, title: heading ? heading.innerText.trim().slice(0, 60) : '',
            height: s.scrollHeight,
            screen: Math.round(document.querySelector('.reveal').getBoundingClientRect().height)};
}"""
# Every slide of the slideshow (the innermost sections), each measured in place: shown for a moment (as
# reveal.js shows the slide on show), its height read, put back. No slide is stepped to, no cell runs.
ALL_SLIDES_JS = """() => {
    const screen = Math.round(document.querySelector('.reveal').getBoundingClientRect().height);
    const leaves = [...document.querySelectorAll('.reveal .slides section')].filter(s => !s.querySelector('section'));
    return leaves.map(s => {
        const chain = [s, s.parentElement.closest('section')].filter(Boolean);
        const saved = chain.map(e => [e.style.display, e.hidden]);
        chain.forEach(e => { e.style.display = 'block'; e.hidden = false; });
        const cells = [...s.querySelectorAll('.jp-Cell')].filter(c => getComputedStyle(c).display !== 'none');
        const heading = s.querySelector('h1, h2, h3');
        const heights = cells.map(c => Math.round(c.getBoundingClientRect().height));
        const top = cells[heights.indexOf(Math.max(...heights))];
        const top0 = s.getBoundingClientRect().top;
        const images = [...s.querySelectorAll('.jp-OutputArea-output img')].filter(i => i.checkVisibility()).map(i => {
            const r = i.getBoundingClientRect(), box = i.closest('.jp-Cell-outputArea');
            return {bottom: Math.round(r.bottom - top0), height: Math.round(r.height), natural: i.naturalHeight,
                    clipped: box.scrollHeight > box.clientHeight + 1};
        });
        const outputs = [...s.querySelectorAll('.jp-CodeCell .jp-Cell-outputArea')]
            .filter(box => box.checkVisibility() && box.childElementCount)
            .map(box => box.scrollHeight - box.clientHeight);  // at most 1: its last line shows without a scroll
        // each code cell's code: its full height, the height it shows, whether its cell shows a plot
        const codes = cells.filter(c => c.classList.contains('jp-CodeCell')).map(c => {
            const editor = c.querySelector('.jp-InputArea-editor');
            return [editor.scrollHeight, editor.clientHeight, !!c.querySelector('.jp-OutputArea-output img')];
        });
        const found = {title: (heading || cells[0] || s).innerText.trim().split('\\n')[0].slice(0, 60),
                       height: s.scrollHeight, screen, cells: cells.length, tallest: Math.max(0, ...heights), images,
                       outputs, codes, title_slide: !!s.querySelector('h1'),
                       kind: !top ? '' : top.classList.contains('jp-CodeCell') ? 'code'
                             : top.querySelector('h1') ? 'title' : 'markdown'};
        chain.forEach((e, n) => { e.style.display = saved[n][0]; e.hidden = saved[n][1]; });
        return found;
    }).filter(found => found.cells > 0);
}"""
# The slide on show: its cells' right edge, and the left edge of reveal.js's navigation arrows.
CONTROLS_JS = """() => {
    const arrows = [...document.querySelectorAll('.reveal .controls button')]
        .map(b => b.getBoundingClientRect()).filter(r => r.width > 0);
    const shown = [...document.querySelectorAll('.reveal .slides section.present')]
        .filter(s => !s.querySelector('section.present'))[0];
    const text = [...shown.querySelectorAll('.jp-Cell-inputWrapper, .jp-Cell-outputWrapper')]
        .map(e => e.getBoundingClientRect()).filter(r => r.width > 0);
    return {arrows_left: Math.min(...arrows.map(r => r.left)), text_right: Math.max(...text.map(r => r.right))};
}"""
# A slide may be taller than the screen (it scrolls) only where one cell alone is, and that cell is a code cell
# (its code stays as it is: a change invalidates the GPU stamp; its output scrolls inside it from 216 px) or the
# title cell (its title, objectives, prerequisites and time, which the hygiene tests keep in the first cell).
# A markdown cell that tall is to be split (CONTRIBUTING): measured 2026-11-29, none is; 9 title cells and 16
# code cells are (725 to 1,450 px).
MAY_SCROLL = ("code", "title")
# Without a GPU a `%%requires` cell shows the skip line and then its reference run's output in a framed, labelled
# block (utils/cells.py): instructor review 18 of 04 found 7 ✓ lines below their output box's fold and a slide
# past the screen once that frame stood over the committed outputs. In the page, each such cell's committed
# outputs are put into that frame (the block's own HTML, utils.cells.reference_html), under a skip line of the
# same text: the slides are measured again as a class without a GPU sees them, run, and no cell runs.
NO_GPU_VIEW_JS = """(args) => {
    let framed = 0;
    for (const cell of document.querySelectorAll('.reveal .jp-CodeCell')) {
        const code = cell.querySelector('.cm-content');
        const area = cell.querySelector('.jp-OutputArea');
        if (!code || !area || !area.childElementCount || !/^%%requires\\b/.test(code.innerText.trim())) continue;
        const holder = document.createElement('div');
        holder.innerHTML = args.frame;
        const box = holder.firstElementChild;
        for (const out of area.querySelectorAll('.jp-OutputArea-output')) box.appendChild(out);
        const child = (inner, kind) => {
            const c = document.createElement('div'), o = document.createElement('div');
            c.className = 'jp-OutputArea-child'; o.className = 'jp-OutputArea-output ' + kind;
            o.appendChild(inner); c.appendChild(o); return c;
        };
        const skip = document.createElement('pre');
        skip.textContent = args.skip;
        area.replaceChildren(child(skip, 'jp-RenderedText'), child(box, 'jp-RenderedHTMLCommon'));
        framed += 1;
    }
    return framed;
}"""
ALL_CORE = "notebooks/all_core_slides.ipynb"  # every lecture's core slides in one slideshow, in the test's copy


def no_gpu_frame() -> dict[str, str]:
    """What a skipped GPU cell shows over its reference output on a laptop: the skip line (the course's
    CPU-only PyTorch) and the framed block's HTML with its label (a reference run's, as stamped), empty."""
    from utils.cells import _HINT, Reference, reference_html

    label = ("reference output, from the course's run on NVIDIA H200 (2026-11-29, "
             "notebooks/04_streams_cupy.ipynb):")
    frame = reference_html(Reference([], label, "PyTorch 2.11.0+cu130, CuPy 14.2.0"))
    return {"skip": f"skipped (needs cuda): PyTorch 2.13.0+cpu is a CPU-only build{_HINT}", "frame": frame}


def no_gpu_problems(slides: list[dict], no_gpu: list[dict], framed: int, owners: list[str]) -> list[str]:
    """The core slides as a class without a GPU sees them, each GPU cell run (NO_GPU_VIEW_JS): an output that
    showed whole on a GPU still shows whole, its last line (a ✓ claim) above its box's fold, and a slide that
    fitted the screen still fits."""
    problems = [] if framed > 100 else [
        f"only {framed} GPU cells framed as without a GPU: NO_GPU_VIEW_JS found too few `%%requires` cells"]
    for owner, gpu, cpu in zip(owners, slides, no_gpu, strict=True):
        where = f"without a GPU, notebooks/{owner}: {gpu['title']!r}"
        hidden = [now for was, now in zip(gpu["outputs"], cpu["outputs"], strict=True) if was <= 1 < now]
        if hidden:
            problems.append(f"{where}: output(s) that show whole on a GPU hide {hidden} px below the box's fold "
                            "(tools/course.py's FRAME_PX)")
        past = cpu["height"] > cpu["screen"] - SLIDE_BOTTOM_PX
        if gpu["height"] <= gpu["screen"] and past and not (cpu["cells"] == 1 and cpu["kind"] in MAY_SCROLL):
            problems.append(f"{where} is {cpu['height']} px tall, past the screen ({cpu['screen']} px): "
                            "tools/course.py's estimated_px should have cut it")
    return problems


def code_problems(slides: list[dict], owners: list[str], no_gpu: bool) -> list[str]:
    """A code cell's code fills the room that its slide leaves on the screen (PROJECTOR_CSS: the slide a
    column, its code the part that gives way): instructor review 18d of 04 found, run without a GPU, the lines
    its slides were about below the code's fold at 13 lines while 120 to 240 px of the screen stayed unused. So
    code scrolls inside its cell only where the slide reaches the screen's bottom; and it shows at least what
    tools/course.py's estimated_px counts on (its REFERENCE_* or CODE_MAX_PX caps, one line spare), so that a
    slide the rules fit does not squeeze it. The title slide (its setup cell folded, the slide scrolls) aside."""
    problems = []
    for owner, slide in zip(owners, slides, strict=True):
        if slide["title_slide"]:
            continue
        where = f"{'without' if no_gpu else 'with'} a GPU, notebooks/{owner}: {slide['title']!r}"
        room = slide["screen"] - SLIDE_BOTTOM_PX - slide["height"]
        for full, shown, plot in slide["codes"]:
            cap = ((REFERENCE_PLOT_CODE_MAX_PX if plot else REFERENCE_CODE_MAX_PX) if no_gpu
                   else (PLOT_CODE_MAX_PX if plot else CODE_MAX_PX))
            if full > shown + 2 and room > CODE_LINE_PX:
                problems.append(f"{where}: code shows {shown} of {full} px, and {room} px of the screen stay "
                                "unused under the slide (PROJECTOR_CSS: the code fills the room)")
            if shown < min(full, cap) - CODE_LINE_PX:
                problems.append(f"{where}: code squeezed to {shown} px of {full}, under the {cap} px the slide "
                                "rules count on (estimated_px)")
    return problems


def test_every_core_slide_fits_a_1280x720_screen(driver, tmp_path):
    """Issue 37's projector: every lecture's core path (`python -m tools.course slides core`, in a copy), as
    committed (no cell runs), presented at 1280x720 by one JupyterLab in one browser, and every slide measured:
    none is taller than the screen, except one whose single cell is, a code cell or the title (MAY_SCROLL: it
    scrolls); reveal.js's
    arrows cover no cell's text. So that one slideshow loads, not nine (JupyterLab's start and each page's
    render are what take the time), the lectures' core cells are joined, in order, into one notebook with the
    lectures' RISE settings: a slide is laid out alone (its width the screen's), and each lecture's title
    begins a slide, so each slide measures as in its own lecture's slideshow (the cells off the core path are
    hidden there, `display: none`: left out here). Then, in the same page, every GPU cell's outputs are framed
    as a class without a GPU sees them run (NO_GPU_VIEW_JS) and the slides measured again (no_gpu_problems)."""
    course = copy_course(tmp_path / "course")
    subprocess.run([sys.executable, "-m", "tools.course", "slides", "core"], cwd=course, check=True,
                   capture_output=True)
    problems, report, start = [], [], time.monotonic()
    joined, counts = None, {}
    for path in sorted((course / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = read(path)
        assert nb.metadata["rise"] == RISE, "python -m tools.course sync"
        shown = [c for c in nb.cells if c.metadata.slideshow.slide_type != "skip"]
        counts[path.name] = sum(c.metadata.slideshow.slide_type in ("slide", "subslide") for c in shown)
        if joined is None:
            joined, nb.cells = nb, []
        joined.cells += shown
    write(joined, course / ALL_CORE)
    with readme_lab(course, tmp_path) as lab:
        browser, page = open_chromium(driver, tmp_path / "chromium-projector", *PROJECTOR)
        try:
            page.goto(re.sub(r"/lab/tree/[^?]*", f"/rise/{ALL_CORE}", lab.open_url), timeout=PAGE_MS)
            assert wait_until(lambda: page.evaluate(SLIDE_ON_SHOW_JS), PAGE_MS / 1000), f"{ALL_CORE}: no slide on show"
            # RISE adds its overlay (the slides' style, tools/course.py's PROJECTOR_CSS) once the slideshow is laid out
            assert wait_until(lambda: page.evaluate("() => !!document.querySelector('#rise-overlay style')"), 30), (
                "the slideshow has no overlay style")
            page.wait_for_timeout(200)
            slides = page.evaluate(ALL_SLIDES_JS)
            edges = page.evaluate(CONTROLS_JS)  # the navigation arrows leave the text visible (the first slide)
            if edges["text_right"] > edges["arrows_left"]:
                problems.append(f"the navigation arrows (from x={edges['arrows_left']}) cover text (to x="
                                f"{edges['text_right']})")
                page.screenshot(path=tmp_path / "arrows-over-text.png")
            framed = page.evaluate(NO_GPU_VIEW_JS, no_gpu_frame())  # then as a class without a GPU sees them
            page.wait_for_timeout(200)
            no_gpu = page.evaluate(ALL_SLIDES_JS)
        finally:
            browser.close()
    if len(slides) == sum(counts.values()):
        owners = [name for name, n in counts.items() for _ in range(n)]
        problems += no_gpu_problems(slides, no_gpu, framed, owners)
        problems += code_problems(slides, owners, no_gpu=False) + code_problems(no_gpu, owners, no_gpu=True)
    else:
        problems.append(f"{len(slides)} slides measured, the lectures' metadata makes {sum(counts.values())}")
    for name, count in counts.items():
        notebook, number, mine, slides = f"notebooks/{name}", name[:2], slides[:count], slides[count:]
        if mine and not mine[0]["title"].startswith(f"{number} · "):
            problems.append(f"{notebook}: its first slide is {mine[0]['title']!r}, not its title")
        # a slide reaches down to SLIDE_BOTTOM_PX above the screen's bottom, then scrolls (PROJECTOR_CSS): 04's
        # takeaways, 720 px, passed a check against the screen's 720 and scrolled, its last line cut (review 18d)
        tall = [s for s in mine if s["height"] > s["screen"] - SLIDE_BOTTOM_PX]
        alone = [s for s in tall if s["tallest"] > s["screen"] - SLIDE_BOTTOM_PX]  # a cell taller than the room
        report.append(f"{notebook}: {len(mine)} core slides, {len(tall)} taller than {PROJECTOR}, "
                      f"{len(alone)} of them by a cell taller than the screen")
        report += [f"    {s['title']!r}: {s['height']} px ({s['cells']} cells, the tallest {s['tallest']} px, "
                   f"{s['kind']})" for s in tall]
        problems += [f"{notebook}: {s['title']!r} is {s['height']} px tall, its cells fit one by one: "
                     "tools/course.py's slide_types should have cut it" for s in tall if s not in alone]
        problems += [f"{notebook}: {s['title']!r}: a {s['kind']} cell of {s['tallest']} px, taller than the screen: "
                     "split it where one idea ends (CONTRIBUTING)" for s in alone if s["kind"] not in MAY_SCROLL]
        for s in mine:  # a plot shows whole, on the screen, before the slide scrolls (instructor review of 04)
            problems += [f"{notebook}: {s['title']!r}: a plot ({i['natural']} px high, drawn {i['height']} px) is "
                         + ("cut by its output box" if i["clipped"] else "not loaded" if not i["natural"]
                            else "below the screen") + f" (its bottom at {i['bottom']} px of {s['screen']})"
                         for i in s["images"] if i["clipped"] or not i["natural"] or i["bottom"] > s["screen"]]
        report += [f"    {s['title']!r}: plot drawn {i['height']} px high, bottom at {i['bottom']} px"
                   for s in mine for i in s["images"]]
    print(*report, f"measured in {time.monotonic() - start:.1f} s", sep="\n")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- a skipped GPU cell's reference output
# In the page: the marked block of reference outputs (utils.cells.reference_html) in a cell's output
# area, with the colours the browser computed for it, and what stands behind it (the first opaque
# background among its ancestors: the theme's).
REFERENCE_BLOCK_JS = """cell => {
    const box = cell.querySelector('.course-reference-output');
    if (!box) return null;
    const style = e => getComputedStyle(e);
    let behind = box.parentElement;
    while (behind && /rgba\\(.*, 0\\)|transparent/.test(style(behind).backgroundColor)) behind = behind.parentElement;
    const img = box.querySelector('img');
    const pre = box.querySelector('pre');
    return {
        label: box.firstElementChild.innerText,
        box: style(box).backgroundColor, border: style(box).borderTopStyle + ' ' + style(box).borderTopColor,
        label_bg: style(box.firstElementChild).backgroundColor, label_color: style(box.firstElementChild).color,
        pre_bg: pre ? style(pre).backgroundColor : null, pre_color: pre ? style(pre).color : null,
        behind: behind ? style(behind).backgroundColor : 'rgb(255, 255, 255)',
        image: img ? [img.naturalWidth, img.getBoundingClientRect().width, box.clientWidth, img.complete] : null,
        skip_line: [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]')]
            .map(e => e.innerText).join(''),
    };
}"""


def rgba(css: str) -> tuple[float, float, float, float]:
    """A computed CSS colour, 'rgb(r, g, b)' or 'rgba(r, g, b, a)', as numbers."""
    numbers = [float(x) for x in re.findall(r"[\d.]+", css)]
    return (*numbers[:3], numbers[3] if len(numbers) > 3 else 1.0)  # type: ignore[return-value]


def over(top: str | tuple, below: tuple) -> tuple[float, float, float, float]:
    """The opaque colour of `top` (perhaps translucent) painted over the opaque `below`."""
    r, g, b, a = rgba(top) if isinstance(top, str) else top
    return (r * a + below[0] * (1 - a), g * a + below[1] * (1 - a), b * a + below[2] * (1 - a), 1.0)


def contrast(one: tuple, other: tuple) -> float:
    """WCAG's contrast ratio of two opaque colours (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio)."""
    def luminance(c):
        linear = [v / 255 / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c[:3]]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def reference_block_problems(found: dict | None, theme: str) -> list[str]:
    """What keeps a student from seeing a reference block as such, and from reading it, in `theme`."""
    if found is None:
        return [f"{theme}: the skipped cell shows no marked reference block"]
    problems = []
    if not found["label"].startswith("Reference output, not run on this machine: from the course's run on "):
        problems.append(f"{theme}: the block's label reads {found['label']!r}")
    if not found["skip_line"].startswith("skipped (needs cuda): ") or "Change runtime type" not in found["skip_line"]:
        problems.append(f"{theme}: the skip line reads {found['skip_line']!r}")
    if rgba(found["box"])[3] == 0 or not found["border"].startswith("dashed"):
        problems.append(f"{theme}: the block has no tint or no dashed frame ({found['box']}, {found['border']})")
    behind = over(found["behind"], (255, 255, 255))
    box = over(found["box"], behind)
    label = over(found["label_bg"], box)
    for what, color, background in (("label", found["label_color"], label), ("text", found["pre_color"], box)):
        if color is None:
            continue
        ratio = contrast(over(color, background), background)
        if ratio < 4.5:  # WCAG AA for text
            problems.append(f"{theme}: the {what} ({color} on {background}) has a contrast of {ratio:.1f}, under 4.5")
    if found["pre_bg"] is not None and rgba(found["pre_bg"])[3] != 0:
        problems.append(f"{theme}: the printed text has its own background ({found['pre_bg']}), hiding the tint")
    if found["image"] is not None:
        width, shown, room, complete = found["image"]  # room: the block's width; the plot has 8 px either side
        if not complete or width == 0 or abs(shown - min(width, room - 16)) > 1:  # its own size, or all there is
            problems.append(f"{theme}: the plot ({width} px wide, complete={complete}) is drawn {shown} px wide "
                            f"in a block of {room} px")
    return problems


def reference_cells(nb: nbformat.NotebookNode) -> tuple[int, int]:
    """The positions (among code cells) of a skipped GPU cell whose reference printed text, and of one
    whose reference is a plot."""
    from utils import cells

    index = cells.reference_index(ROOT)
    found = {}
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        ref = index.get(cells.source_key(cell.source)) if cell.source.startswith("%%requires cuda\n") else None
        if ref is not None:
            kind = "plot" if any("image/png" in o.get("data", {}) for o in ref.outputs) else "text"
            found.setdefault(kind, n)
    return found["text"], found["plot"]


@pytest.mark.skipif(__import__("utils").has_cuda(), reason="on a GPU the cell runs: there is no reference to show")
def test_a_skipped_gpu_cell_shows_its_reference_as_a_marked_block_in_light_and_dark_themes(driver, tmp_path):
    """JupyterLab in Chromium, on this machine without a GPU: the setup cell of lecture 00 and two of
    its `%%requires cuda` cells, run one by one (Shift+Enter); each shows the skip line, then the
    reference output in a tinted, dashed, labelled block, legible (WCAG contrast 4.5) in the light
    theme and, after Settings > Theme > JupyterLab Dark, in the dark one. Screenshots: in tmp_path."""
    from utils import cells

    course = copy_course(tmp_path / "course")
    nb = nbformat.read(course / LECTURE, as_version=4)
    n_code = sum(c.cell_type == "code" for c in nb.cells)
    text_cell, plot_cell = reference_cells(nb)
    with readme_lab(course, tmp_path) as lab:
        browser, page = open_chromium(driver, tmp_path / "chromium-profile", 1400, 1000)
        try:
            page.goto(lab.open_url, timeout=PAGE_MS)
            loaded = wait_until(lambda: (s := page.evaluate(STATE_JS, LECTURE)) and s["current"]
                                and len(s["prompts"]) == n_code and s["kernel"] == "idle", PAGE_MS / 1000)
            assert loaded, f"{LECTURE} did not open with its kernel idle:\n{lab.log_tail()}"
            assert menu(page, "Edit", "Clear Outputs of All Cells") is None
            panel = page.locator(f'[id="{page.evaluate(f"path => ({PANEL_JS})(path).id", LECTURE)}"]')
            code = panel.locator(".jp-CodeCell")
            for n in (0, text_cell, plot_cell):  # the setup cell first: it imports utils, which skips GPU cells
                assert queue_cell(page, code.nth(n)), f"code cell {n}: {QUEUE_TRIES} tries did not queue it"
                ran = wait_until(lambda n=n: RAN.match(code.nth(n).locator(".jp-InputPrompt").inner_text().strip()),
                                 RUN_ALL_S)
                assert ran, f"code cell {n} did not run: {code.nth(n).locator('.jp-InputPrompt').inner_text()}"
            problems = []
            for theme in ("light", "dark"):
                if theme == "dark":
                    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Settings$")).click()
                    page.locator(".lm-Menu-item", has_text=re.compile(r"^Theme")).hover()
                    page.locator(".lm-Menu-item", has_text=re.compile(r"^JupyterLab Dark$")).click()
                    assert wait_until(lambda: page.evaluate("document.body.dataset.jpThemeLight") == "false",
                                      ACTION_MS / 1000), "Settings > Theme > JupyterLab Dark did not apply"
                for n, kind in ((text_cell, "text"), (plot_cell, "plot")):
                    cell = code.nth(n)
                    cell.locator(".course-reference-output").wait_for(timeout=ACTION_MS)
                    cell.scroll_into_view_if_needed()
                    page.wait_for_timeout(500)  # the theme's transition, and the plot decoded
                    page.add_style_tag(content=".Toastify { display: none }")  # a notification, not in the picture
                    problems += reference_block_problems(cell.evaluate(REFERENCE_BLOCK_JS), f"{theme}, {kind}")
                    cell.screenshot(path=tmp_path / f"reference_{kind}_{theme}.png")
            assert not problems, "\n".join(problems) + f"\n(screenshots in {tmp_path})"
            # Saved (as autosave would), each block keeps the reference in its output metadata: the next
            # run, after a restart, reads it from there and shows one block again (issue 24).
            path, saved_before = course / LECTURE, (course / LECTURE).stat().st_mtime_ns
            assert menu(page, "File", "Save Notebook") is None
            assert wait_until(lambda: path.stat().st_mtime_ns != saved_before, SAVE_S), "the notebook was not saved"
            saved = wait_until(lambda: read_if_complete(path), SAVE_S)
            code_cells = [c for c in saved.cells if c.cell_type == "code"]
            for n in (text_cell, plot_cell):
                ref = cells.reference_index(ROOT)[cells.source_key(code_cells[n].source)]
                assert cells.saved_reference(code_cells[n], "", "") == ref, (
                    f"code cell {n}, saved by JupyterLab, does not carry its reference: "
                    f"{[(o.output_type, sorted(o.get('metadata', {}))) for o in code_cells[n].outputs]}")
        finally:
            browser.close()
