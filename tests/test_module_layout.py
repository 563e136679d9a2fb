"""The package's layout: the split modules keep their old import paths, no module of nlpdyn
is over 600 lines (issue 25 item 8), and the package ships its type hints (``py.typed``,
PEP 561)."""
from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import nlpdyn

PACKAGE = Path(nlpdyn.__file__).parent
ROOT = PACKAGE.parent

# old module -> the modules its names now live in
SPLITS = {
    "nlpdyn.forces.contact_laws": ["nlpdyn.forces.law_base", "nlpdyn.forces.impact_laws",
                                   "nlpdyn.forces.bushing_laws"],
    "nlpdyn.forces.penalty_joints": ["nlpdyn.forces.penalty_base",
                                     "nlpdyn.forces.penalty_clearance"],
    "nlpdyn.forces.joint_stops": ["nlpdyn.forces.joint_coordinates"],
    "nlpdyn.forces.range_of_motion": ["nlpdyn.forces.cone_surface"],
}
MAX_LINES = 600


@pytest.mark.parametrize("old", sorted(SPLITS))
def test_split_modules_keep_their_old_import_paths(old):
    module = importlib.import_module(old)
    for new in SPLITS[old]:
        part = importlib.import_module(new)
        for name in getattr(part, "__all__", []):
            assert getattr(module, name) is getattr(part, name), f"{old}.{name}"


MODULES = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))


def test_every_module_is_counted():
    """The line limit below sees every module, the split ones and their new parts among them."""
    for name in {m for ms in SPLITS.values() for m in ms} | set(SPLITS):
        assert str(PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")
                   .relative_to(PACKAGE)) in MODULES, name


@pytest.mark.parametrize("module", MODULES)
def test_no_module_over_the_line_limit(module):
    """Issue 25's criterion: no module of nlpdyn over MAX_LINES lines."""
    n_lines = len((PACKAGE / module).read_text(encoding="utf-8").splitlines())
    assert n_lines <= MAX_LINES, f"nlpdyn/{module}: {n_lines} lines, more than {MAX_LINES}"


def test_the_package_says_it_is_typed():
    """``py.typed`` sits in the package, and pyproject ships it."""
    tomllib = pytest.importorskip("tomllib")      # Python 3.11+
    assert (PACKAGE / "py.typed").is_file()
    pyproject = ROOT / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("an installed nlpdyn: no pyproject.toml beside it")
    data = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["nlpdyn"]


@pytest.mark.slow
def test_the_wheel_carries_py_typed(tmp_path):
    pytest.importorskip("build")
    out = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                          str(ROOT)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    wheel, = tmp_path.glob("*.whl")
    assert "nlpdyn/py.typed" in zipfile.ZipFile(wheel).namelist()
