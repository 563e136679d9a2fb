"""Sphinx configuration of the nlpdyn documentation.

Build from the repository root (warnings are errors, as in CI)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

It executes the case-study notebooks (about 2 min on 2 cores) and writes them with their
images to the output directory's parent (``docs/_build/jupyter_execute``): give a build
elsewhere a folder of its own, e.g. ``/tmp/me_docs/html``.
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))          # nlpdyn and the case studies (problems/) from the checkout
os.environ.setdefault("NLPDYN_QUICK", "1")
# This process draws without a display (the gallery's figures); the notebooks' kernels inherit
# the environment and draw inline, so that each cell's figures land in its output (an Agg
# backend there, as tests/test_notebooks.py uses, would leave the pages without figures).
import matplotlib  # noqa: E402

matplotlib.use("Agg")
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"

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
    "myst_nb",                         # the Markdown pages and the case-study notebooks
    "sphinx_gallery.gen_gallery",
]

# myst_nb registers .md (MyST, as myst_parser did) and .ipynb; the notebooks' jupytext percent
# scripts come in through nb_custom_formats below (.py), so every other .py under docs/ (this
# file, the gallery's sources and the copies sphinx-gallery writes next to its pages, with
# their .ipynb) is excluded.
exclude_patterns = ["_build", "examples/*.md", "examples/README.txt", "**/README.txt",
                    "conf.py", "examples/*.py", "gallery/*.py", "gallery/*.ipynb",
                    "jupyter_execute"]
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

# --- Case-study notebooks: notebooks/*.py rendered with their code, output and figures -------
# The jupytext percent scripts live once, in notebooks/ (the tests run them from there); each
# build copies them to docs/notebooks/ (generated, ignored by git), where myst-nb reads them
# through jupytext and executes them in quick mode (NLPDYN_QUICK=1, set above) in a kernel
# that imports nlpdyn and the case studies from this checkout. A cell that raises fails the
# build. Every notebook Sphinx reads is executed ("force"): a cache keyed on the notebook's
# text alone would serve the outputs of an older nlpdyn, and pass a notebook that the library
# has since broken. The executed notebooks and their images go to jupyter_execute/ next to the
# output directory (docs/_build/jupyter_execute for the command above).
NOTEBOOKS_SRC = ROOT / "notebooks"
NOTEBOOKS_DST = Path(__file__).resolve().parent / "notebooks"


def _copy_notebooks():
    """Copy notebooks/*.py to docs/notebooks/, touching only the files whose text changed (an
    unchanged copy keeps its time stamp, so Sphinx does not read it again); drop stale ones."""
    NOTEBOOKS_DST.mkdir(exist_ok=True)
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(NOTEBOOKS_SRC.glob("*.py"))}
    for name, text in sources.items():
        dst = NOTEBOOKS_DST / name
        if not dst.exists() or dst.read_text(encoding="utf-8") != text:
            dst.write_text(text, encoding="utf-8")
    for dst in NOTEBOOKS_DST.glob("*.py"):
        if dst.name not in sources:
            dst.unlink()


_copy_notebooks()
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:percent"}]}
nb_execution_mode = "force"
nb_execution_raise_on_error = True     # a failing notebook stops the build (with or without -W);
                                       # the cell's traceback is in the log file Sphinx names
nb_execution_timeout = 600             # per cell: the slowest quick-mode cell takes ~30 s
nb_merge_streams = True                # one block per cell for what it prints

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
