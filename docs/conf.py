"""Sphinx configuration of the nlpdyn documentation.

Build from the repository root (warnings are errors, as in CI)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))          # nlpdyn and the case studies (problems/) from the checkout
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("NLPDYN_QUICK", "1")

import nlpdyn  # noqa: E402

project = "nlpdyn"
author = "the nlpdyn authors"
copyright = "the nlpdyn authors (BSD-3-Clause)"
release = version = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples/*.md", "examples/README.txt", "**/README.txt"]
templates_path = ["_templates"]
root_doc = "index"

# --- API reference: one page per public name of nlpdyn.__all__ -----------------------------
autosummary_generate = True
autosummary_imported_members = True
# no default "inherited-members" here: it would override the class template's (SHOW_INHERITED_FROM)
autodoc_default_options = {"members": True}
autodoc_typehints = "none"             # numpydoc's Parameters sections say the types
autoclass_content = "class"
numpydoc_show_class_members = False    # the class page lists its members through autodoc
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Bases a class page shows the public members of, as if the class declared them: a base that
# holds part of a public class's own interface (split out of it) but has no page of its own
# (the cone's surface, Result's lookups by name). Other inherited members stay on their
# base's page (or undocumented: ``Element``'s name and label on every element page would
# drown each page's own members).
SHOW_INHERITED_FROM = {"ConeSurface", "_Lookups"}


def _inherited_from(names, shown):
    """{class name: the ``:inherited-members:`` value that keeps the members of the bases in
    ``shown`` and drops every other base's} for the classes of ``names`` with such a base."""
    out = {}
    for name in names:
        cls = getattr(nlpdyn, name)
        mro = getattr(cls, "__mro__", ())[1:]
        if any(base.__name__ in shown for base in mro):
            out[name] = ", ".join(b.__name__ for b in mro if b.__name__ not in shown)
    return out


autosummary_context = {"inherited_from": _inherited_from(nlpdyn.__all__, SHOW_INHERITED_FROM)}

# --- Markdown pages (README's sections, docs/CASES.md, docs/FORMULATION.md) -----------------
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

# --- Gallery: every example runs at build time (a few seconds each) and keeps its figure --
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["gallery"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "reset_modules": ("matplotlib",),
}

html_theme = "alabaster"
html_title = "nlpdyn"
html_theme_options = {
    "description": "Spatial multibody dynamics with imperfect joints, one optimization "
                   "problem per time step",
    "fixed_sidebar": True,
    "page_width": "1200px",
    "sidebar_width": "260px",
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}


# --- Docstrings as written for help() --------------------------------------------------------
# The docstrings write absolute values and norms as |x| (plain text for help()); in
# reStructuredText a |...| pair is a substitution, so bars outside inline literals, doctest
# lines and literal blocks are escaped here.
import re  # noqa: E402

_LITERAL = re.compile(r"(``.*?``|`[^`]*`_?)")


def _escape_bars(line):
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else re.sub(r"(?<!\\)\|", r"\\|", p) for i, p in enumerate(parts))


def _docstring_for_docs(app, what, name, obj, options, lines):
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                continue
        if stripped.startswith((">>>", "...")):
            continue
        if "|" in line:
            lines[i] = _escape_bars(line)
        if stripped.endswith("::"):
            literal_indent = indent


def _public_bases(app, name, obj, options, bases):
    """"Bases:" names public classes only: a private base (``Stepper``'s mixins, a driver's
    ``_Driver``) is replaced by its own bases, recursively; ``object`` when none is left."""
    public = []
    todo = list(bases)
    while todo:
        base = todo.pop(0)
        if getattr(base, "__name__", "").startswith("_"):
            todo[:0] = [b for b in base.__bases__ if b is not object]
        elif base not in public:
            public.append(base)
    bases[:] = public or [object]


def setup(app):
    app.connect("autodoc-process-docstring", _docstring_for_docs, priority=100)
    app.connect("autodoc-process-bases", _public_bases)
