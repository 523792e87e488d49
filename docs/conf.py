"""Sphinx configuration of bicrit's documentation site (``tools/build-site`` builds it with
warnings as errors). Sources: the Markdown pages of docs/ and README sections (MyST), the API
reference generated from the docstrings (docs/_apigen.py, autodoc + napoleon: the docstrings
are NumPy-style reST), and the examples gallery (docs/gallery, sphinx-gallery: each script runs
during the build and its figures go on its page)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _apigen import generate  # noqa: E402

import bicrit  # noqa: E402

project = "bicrit"
author = "the bicrit developers"
copyright = "the bicrit developers"
release = version = bicrit.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "gallery/README.rst", "**/GALLERY_HEADER.rst"]
html_theme = "furo"
html_title = f"bicrit {release}"

# The API reference: one page per public module and per public name.
generate(HERE / "api")
autosummary_generate = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_default_options = {"undoc-members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

# MyST: README sections are included into the guide; headings get anchors for cross-links.
myst_enable_extensions = ["dollarmath", "deflist"]
myst_heading_anchors = 3

# The gallery: scripts run at small sizes during the build (matplotlib's Agg backend).
sphinx_gallery_conf = {
    "examples_dirs": "gallery",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "show_memory": False,
    "min_reported_time": 0,
}
os.environ.setdefault("MPLBACKEND", "Agg")

# NumPy-style type fields ("ndarray of shape (n_nodes, K)") become cross-references word by
# word; a word that names attributes of several classes (``name``, ``n_nodes``) is then
# ambiguous. Those words are prose, so the ambiguity warnings of the Python domain are off (a
# reference that resolves to nothing still renders as text, as without nitpicky mode).
suppress_warnings = ["ref.python"]


def _skip_member(app, what, name, obj, skip, options):
    """scikit-learn generates ``set_*_request`` methods (metadata routing) on every estimator
    subclass; they are sklearn's API, documented there."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


_REPO_LINK = re.compile(r"\[([^\]]+)\]\(\.\./([^)#]+)\)")


def _repository_links(app, docname, source):
    """Links from docs/*.md to files outside docs/ (the changelog, the example plugins) are
    GitHub-style relative links; on the site the changelog is its own page and the rest are
    named as repository paths."""

    def fix(m: re.Match[str]) -> str:
        if m.group(2) == "CHANGELOG.md":
            return f"[{m.group(1)}](changelog.md)"
        return f"{m.group(1)} (`{m.group(2)}` in the repository)"

    source[0] = _REPO_LINK.sub(fix, source[0])


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("source-read", _repository_links)
