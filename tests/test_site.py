"""The course's website (tools/site.py, site/conf.py), built by its documented command and opened in Chromium.

The site is built once for this module, by `python -m tools.site` in a fresh process (what the Pages workflow
runs), and served from build/site/html/ by a local HTTP server, as GitHub Pages serves it. Headless Chromium
(Debian's, driven by Playwright, as in tests/test_browser.py, whose helpers these tests import) opens it with
every request to another host refused and recorded: the home page lists every lecture in the course's order;
a lecture shows a reference block with its plot, the Colab badge and the download button; search finds the
lecture on CUDA graphs from `cudaGraphLaunch`. Without the browser: every internal link and image of every
page resolves (anchors included), no page names a script, style sheet, font or image on another host, the
table of contents follows tools.course's list (a lecture 09 added later appears with no edit), and the Pages
workflow runs the documented command.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest
import yaml
from test_browser import driver, open_chromium  # noqa: F401 -- driver: the fixture, imported to be used here

from conftest import ROOT
from tools import site
from tools.course import LECTURES, notebooks, title

pytestmark = pytest.mark.host  # the same on every machine: on a GPU, only with --host-tests

BUILD_S = 120  # the bound on a laptop; the build takes far less
PAGE_MS = 60_000


@pytest.fixture(scope="module")
def built() -> tuple[Path, float]:
    """The site, built once by its documented command in a fresh process; its root and the build's seconds."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", *site.COMMAND.split()[2:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=BUILD_S * 2, check=False)
    took = time.perf_counter() - start
    assert done.returncode == 0, f"{site.COMMAND} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return site.HTML, took


@pytest.fixture(scope="module")
def served(built) -> Iterator[str]:
    """The built site over HTTP on a free local port; its address, ending with '/'."""
    root, _ = built
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browse(driver, served, tmp_path_factory):  # noqa: F811 -- the fixture imported above
    """Open a page of the site in Chromium; every request to another host is refused, and listed in `.away`."""
    browser, page = open_chromium(driver, tmp_path_factory.mktemp("profile"), 1280, 900)
    away: list[str] = []

    def only_local(route):
        if route.request.url.startswith(served):
            route.continue_()
        else:
            away.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)

    def go(path: str):
        page.goto(served + path, wait_until="load", timeout=PAGE_MS)
        return page

    go.away = away
    yield go
    browser.close()


# ------------------------------------------------------------------------------------------------
# The build
# ------------------------------------------------------------------------------------------------
def test_the_documented_command_builds_the_site_offline_in_under_two_minutes(built):
    root, took = built
    print(f"{site.COMMAND}: {took:.1f} s")
    assert took < BUILD_S, f"{site.COMMAND} took {took:.0f} s"
    assert (root / "index.html").is_file() and (root / "README.html").is_file()
    for lecture, others in site.pages():
        for path in (lecture, *others):
            assert (root / path.parent.name / f"{path.stem}.html").is_file(), f"no page for {path}"


def test_the_table_of_contents_follows_the_courses_list(built):
    """The home page's sidebar: each lecture's caption, then its lecture, exercises, solutions and guide, in order."""
    root, _ = built
    text = (root / "README.html").read_text()
    nav = text[text.index('class="bd-sidebar-primary'):]
    expected = [f"{p.parent.name}/{p.stem}.html" for lecture, others in site.pages() for p in (lecture, *others)]
    found = [h for h in re.findall(r'class="reference internal" href="([^"#]+)"', nav) if h in expected]
    assert list(dict.fromkeys(found)) == expected
    for lecture in notebooks(LECTURES):
        assert title(lecture) in nav


def test_a_lecture_added_later_is_listed_without_editing_the_config(tmp_path, monkeypatch):
    lectures = tmp_path / "notebooks"
    lectures.mkdir()
    for path in notebooks(LECTURES):
        (lectures / path.name).write_bytes(path.read_bytes())
    new = lectures / "09_new_topic.ipynb"
    new.write_text('{"cells": [{"cell_type": "markdown", "id": "title", "metadata": {}, '
                   '"source": "# 09 · A new topic"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    monkeypatch.setattr(site, "LECTURES", lectures)
    toc = site.toc()
    assert ":caption: 09 · A new topic\n\nnotebooks/09_new_topic" in toc
    assert toc.index("notebooks/08_profiling") < toc.index("notebooks/09_new_topic") < toc.index("CONTRIBUTING")


def test_the_build_reads_the_notebooks_as_committed():
    conf = (site.CONF / "conf.py").read_text()
    assert re.search(r'^nb_execution_mode = "off"$', conf, re.MULTILINE)


# ------------------------------------------------------------------------------------------------
# Every page: links, images, and nothing from another host
# ------------------------------------------------------------------------------------------------
class Links(HTMLParser):
    """The links, images, scripts and style sheets of a page, and the ids it defines."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str]] = []  # (tag, url)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "img", "script", "link", "source", "iframe"):
                self.refs.append((tag, attrs[key]))


@functools.cache
def parsed(path: Path) -> Links:
    links = Links()
    links.feed(path.read_text(errors="replace"))
    return links


def html_pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html") if "_static" not in p.parts)


def test_every_internal_link_and_image_of_every_page_resolves(built):
    root, _ = built
    broken = []
    pages = html_pages(root)
    assert len(pages) >= 4 * len(notebooks(LECTURES))
    for page in pages:
        for tag, url in parsed(page).refs:
            if urlsplit(url).scheme in ("http", "https", "mailto", "data", "javascript"):
                continue
            target, anchor = urldefrag(url)
            path = (page.parent / unquote(urlsplit(target).path)).resolve() if target else page
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file() or not path.is_relative_to(root.resolve()):
                broken.append(f"{page.relative_to(root)}: <{tag}> {url}")
            elif anchor and path.suffix == ".html" and unquote(anchor) not in parsed(path).ids:
                broken.append(f"{page.relative_to(root)}: <{tag}> {url} (no such anchor)")
    assert broken == [], f"{len(broken)} broken:\n" + "\n".join(broken[:40])


def test_no_page_loads_a_script_style_font_or_image_from_another_host(built):
    root, _ = built
    away = [f"{page.relative_to(root)}: <{tag}> {url}" for page in html_pages(root) for tag, url in parsed(page).refs
            if tag != "a" and urlsplit(url).scheme in ("http", "https") or url.startswith("//")]
    assert away == []
    css = [p for p in root.rglob("*.css") if re.search(r"url\(\s*['\"]?(https?:)?//", p.read_text(errors="replace"))]
    assert css == [], "style sheets that fetch from another host"


# ------------------------------------------------------------------------------------------------
# In Chromium
# ------------------------------------------------------------------------------------------------
def test_the_home_page_lists_every_lecture(browse):
    page = browse("")  # index.html sends the visitor to the home page
    page.wait_for_url("**/README.html", timeout=PAGE_MS)
    main = page.locator("main").inner_text()
    for lecture in notebooks(LECTURES):
        assert title(lecture) in main, f"the home page does not list {lecture.name}"
        link = page.locator(f'main a[href="notebooks/{lecture.stem}.html"]').first
        assert link.count() == 1, f"the home page does not link {lecture.name}"
    sidebar = page.locator("nav.bd-docs-nav").inner_text()
    assert all(title(lecture) in sidebar for lecture in notebooks(LECTURES))
    assert browse.away == [], f"pages asked another host for {browse.away}"


def test_a_lecture_shows_a_reference_block_with_its_plot_the_colab_badge_and_a_download(browse, built):
    lecture = notebooks(LECTURES)[1]
    page = browse(f"notebooks/{lecture.stem}.html")
    blocks = page.locator(".course-reference-output")
    assert blocks.count() > 0
    assert "Reference output" in blocks.first.inner_text()
    plot = page.locator(".course-reference-output img").first
    plot.scroll_into_view_if_needed()
    size = plot.evaluate("img => img.complete ? [img.naturalWidth, img.naturalHeight] : null")
    assert size and min(size) > 100, f"the block's plot is not shown: {size}"
    frame = blocks.first.evaluate("b => getComputedStyle(b).borderTopStyle + ' ' + getComputedStyle(b).borderTopColor")
    assert frame == "dashed rgb(184, 134, 11)", frame  # the amber frame of utils/cells.py, as JupyterLab shows it
    badge = page.locator('main a[href^="https://colab.research.google.com/github/"] img').first
    assert badge.evaluate("img => img.complete && img.naturalWidth > 0"), "the Colab badge is not shown"
    assert page.locator('main a[href^="https://colab.research.google.com/github/"]').first.get_attribute(
        "href").endswith(f"/notebooks/{lecture.name}")
    download = page.locator(f'a[href$="_sources/notebooks/{lecture.name}"]')
    assert download.count() >= 1, "no download link for the notebook"
    root, _ = built
    assert (root / "_sources" / "notebooks" / lecture.name).read_bytes() == lecture.read_bytes(), (
        "the download is not the notebook as committed")
    # previous and next in the course's order: the guide of the lecture before, this lecture's exercises
    before = notebooks(LECTURES)[0].stem
    assert page.locator(".prev-next-area a.left-prev").get_attribute("href") == f"../instructors/{before}.html"
    following = page.locator(".prev-next-area a.right-next").get_attribute("href")
    assert following == f"../exercises/{lecture.stem}_exercises.html"
    assert browse.away == [], f"pages asked another host for {browse.away}"


def test_search_finds_the_lecture_on_cuda_graphs_from_cudaGraphLaunch(browse):
    page = browse("search.html?q=cudaGraphLaunch")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=PAGE_MS)
    hrefs = [a.get_attribute("href") for a in results.all()]
    assert any("notebooks/07_cuda_graphs.html" in h for h in hrefs), hrefs
    assert browse.away == [], f"pages asked another host for {browse.away}"


# ------------------------------------------------------------------------------------------------
# Published by a workflow
# ------------------------------------------------------------------------------------------------
def test_the_pages_workflow_builds_with_the_documented_command_and_deploys_it():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert triggers["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    runs = [line.strip() for step in steps for line in str(step.get("run", "")).splitlines()]
    assert site.COMMAND in runs
    assert "python -m pip install -r requirements-dev.txt" in " ".join(runs)
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert Path(upload["with"]["path"]) == site.HTML.relative_to(ROOT)


def test_readme_and_contributing_name_the_command_and_readme_the_address():
    readme, contributing = (ROOT / "README.md").read_text(), (ROOT / "CONTRIBUTING.md").read_text()
    assert site.site_url() in readme
    assert f"`{site.COMMAND}`" in contributing


def test_readme_is_a_front_door_without_measurements():
    """README.md holds what a student needs; measurements, with their dates and machines, live in CONTRIBUTING.md."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 120
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b", readme) == [], "a dated measurement: it belongs in CONTRIBUTING.md"
