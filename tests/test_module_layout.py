"""The package's layout: the split modules keep their old import paths and stay under 600
lines (issue 25 item 8), and the package ships its type hints (``py.typed``, PEP 561)."""
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


@pytest.mark.parametrize("name", sorted({m for ms in SPLITS.values() for m in ms} | set(SPLITS)))
def test_split_modules_stay_under_the_line_limit(name):
    path = PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")
    assert len(path.read_text().splitlines()) <= MAX_LINES


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
