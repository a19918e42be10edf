"""Sphinx's settings for the course's website. Build it with `python -m tools.site` (tools/site.py stages the
sources, in the course's order, into build/site/src/ and writes the table of contents there)."""

import importlib.util
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.course import SETTINGS

project = "CUDA operations in PyTorch and CuPy"
author = "the course's authors"
root_doc = "README"  # the home page; index.html sends a visitor there (html_extra_path)
extensions = ["myst_nb"]
# MathJax from the site itself, never a CDN: the copy that the sphinx-mathjax-offline package ships (its own
# extension does the same, but does not declare itself safe for a parallel build).
MATHJAX = Path(importlib.util.find_spec("sphinx-mathjax-offline").submodule_search_locations[0]) / "static" / "mathjax"
mathjax_path = "mathjax/tex-chtml.js"

# The notebooks as committed: their outputs are those of the reference run, never executed here.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
exclude_patterns = ["**/_scratch", "**/.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]  # a notebook's sections may skip a level

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_extra_path = ["_extra"]
html_copy_source = True  # the download button's files (tools/site.py puts the committed notebooks there)
html_theme_options = {
    "repository_url": SETTINGS["repository"],
    "repository_branch": SETTINGS["branch"],
    "use_repository_button": True,
    "use_download_button": True,
    "use_source_button": False,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}


def _copy_mathjax(app, exc):
    if exc is None:
        shutil.copytree(MATHJAX, Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
