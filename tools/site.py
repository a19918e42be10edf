"""The course as a static website: `python -m tools.site` builds it into build/site/html/.

It reads the notebooks as committed (nothing is executed) and builds them with Sphinx, myst-nb and
sphinx-book-theme (requirements-dev.txt; CONTRIBUTING.md, "The website", says why these). The
configuration is site/conf.py; the sources are staged in build/site/src/ (git-ignored), in the course's
order as tools.course lists it, so that a lecture added later is on the site with no edit here:

- README.md is the home page, with a table of contents (one caption per lecture: the lecture, its
  exercises, its solutions, its instructors' guide) added to the staged copy; CONTRIBUTING.md is the
  maintainers' page; index.html sends a visitor to the home page;
- a lecture or solutions notebook's `%%requires` cells show their outputs from the reference run as
  the reference block that JupyterLab shows where such a cell is skipped (utils/cells.py), with the
  run's GPU, date and versions; other cells' outputs stay as they are;
- the Open-in-Colab badge's image is the site's own copy (site/_static/colab-badge.svg), so that a page
  loads nothing from another host (MathJax too is served from the site: sphinx-mathjax-offline).

Each notebook page has the badge (its title cell), and a download button for the notebook as committed.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from tools.course import EXERCISES, INSTRUCTORS, LECTURES, ROOT, SOLUTIONS, exercises_name, notebooks, repo_slug, title

CONF = ROOT / "site"  # conf.py and _static/
BUILD = ROOT / "build" / "site"
SRC, HTML = BUILD / "src", BUILD / "html"
COMMAND = "python -m tools.site"  # the one documented command (README.md, CONTRIBUTING.md, the Pages workflow)


def site_url() -> str:
    """Where GitHub Pages publishes the site of the repository named in the settings."""
    owner, name = repo_slug().split("/")
    return f"https://{owner.lower()}.github.io/{name}/"


COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "_static/colab-badge.svg"  # relative to the site's root; a page one folder down adds ../
REQUIRES = "%%requires"


def pages() -> list[tuple[Path, list[Path]]]:
    """Each lecture, in the course's order, with its exercises, solutions and instructors' guide (those that exist)."""
    return [(lecture, [p for p in (EXERCISES / exercises_name(lecture.name), SOLUTIONS / lecture.name,
                                   INSTRUCTORS / lecture.with_suffix(".md").name) if p.exists()])
            for lecture in notebooks(LECTURES)]


def toc() -> str:
    """The home page's table of contents: one hidden toctree per lecture, captioned with its title."""
    blocks = []
    for lecture, others in pages():
        entries = [f"{p.parent.name}/{p.stem}" for p in (lecture, *others)]
        blocks.append("```{toctree}\n:hidden:\n:caption: " + title(lecture) + "\n\n" + "\n".join(entries) + "\n```")
    blocks.append("```{toctree}\n:hidden:\n:caption: For maintainers\n\nCONTRIBUTING\n```")
    return "\n\n" + "\n\n".join(blocks) + "\n"


def _reference_label(path: Path, nb: dict) -> tuple[str, str] | None:
    """The label and versions of a stamped notebook's reference run, as utils.cells.reference_index makes them."""
    stamp = nb.get("metadata", {}).get("course", {}).get("reference_run")
    if not stamp:
        return None
    label = (f"reference output, from the course's run on {stamp['gpu']} ({stamp['date']}, "
             f"{path.parent.name}/{path.name}):")
    versions = ", ".join(f"{name} {stamp[key]}" for key, name in (("torch", "PyTorch"), ("cupy", "CuPy"))
                         if stamp.get(key))
    return label, versions


def stage_notebook(path: Path, to: Path) -> int:
    """Copy a notebook for the site: GPU cells' outputs as reference blocks, the badge local; the number of blocks."""
    from utils.cells import reference_html, reference_text, saved_reference

    nb = json.loads(path.read_text(encoding="utf-8"))
    run = _reference_label(path, nb)
    blocks = 0
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown" and COLAB_BADGE in source:
            cell["source"] = source.replace(COLAB_BADGE, f"../{LOCAL_BADGE}")
        if cell["cell_type"] == "code" and run and source.startswith(REQUIRES):
            ref = saved_reference(cell, *run)
            if ref is not None:
                cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                                    "data": {"text/html": reference_html(ref), "text/plain": reference_text(ref)}}]
                blocks += 1
    # The cells are IPython (`!git clone` in the setup cell): a notebook never run (a new solutions notebook, and
    # the exercises made from it) has no language_info, and Pygments would read its cells as plain Python.
    nb.setdefault("metadata", {}).setdefault("language_info", {}).setdefault("pygments_lexer", "ipython3")
    to.parent.mkdir(parents=True, exist_ok=True)
    to.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return blocks


def stage() -> None:
    """build/site/src/: the pages, in the course's folders (so every relative link between them holds)."""
    if SRC.exists():
        shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    (SRC / "README.md").write_text((ROOT / "README.md").read_text().replace(COLAB_BADGE, LOCAL_BADGE) + toc())
    shutil.copy(ROOT / "CONTRIBUTING.md", SRC / "CONTRIBUTING.md")
    (SRC / "_static").mkdir()
    shutil.copy(CONF / LOCAL_BADGE, SRC / LOCAL_BADGE)  # an image of the pages: Sphinx copies it to _images/
    # The scripts the lectures run and link to: the site serves them as downloads.
    shutil.copytree(LECTURES / "scripts", SRC / "notebooks" / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    for lecture, others in pages():
        for path in (lecture, *others):
            target = SRC / path.parent.name / path.name
            if path.suffix == ".ipynb":
                stage_notebook(path, target)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)


def originals() -> None:
    """The download button serves each notebook as committed (the staged copy carries the site's blocks)."""
    for lecture, others in pages():
        for path in (lecture, *others):
            if path.suffix == ".ipynb":
                shutil.copy(path, HTML / "_sources" / path.parent.name / path.name)


def build(quiet: bool = True) -> Path:
    """Stage the sources and build the site; its root folder (open index.html)."""
    from sphinx.cmd.build import build_main

    stage()
    if HTML.exists():
        shutil.rmtree(HTML)
    args = ["-b", "html", "-c", str(CONF), "-W", "--keep-going", "-j", "1", str(SRC), str(HTML)]
    if build_main([*args, "-q"] if quiet else args):
        raise SystemExit("the site's build failed (its warnings are errors): see above")
    originals()
    return HTML


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.exit(f"usage: {COMMAND}")
    start = time.perf_counter()
    root = build()
    print(f"built {root.relative_to(ROOT)}/index.html in {time.perf_counter() - start:.1f} s")
