"""The command line: every registered case study and variant runs, arguments are validated."""
import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

from nlpdyn.__main__ import main
from problems import PROBLEMS

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parent.parent
T_END = "0.004"
# options that keep the big models small for a smoke run
SMALL = {"four_bar_chain": ["--set", "n=2"], "chain": ["--set", "n_links=2"]}
CASES = [(name, variant) for name, p in PROBLEMS.items() for variant in p.variants]


@pytest.mark.parametrize("name, variant", CASES, ids=[f"{n}-{v}" for n, v in CASES])
def test_every_variant_runs(name, variant, capsys):
    code = main([name, "--variant", variant, "--t-end", T_END, "--quiet", "--no-plot",
                 *SMALL.get(name, [])])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{name} [{variant}]" in out
    assert "wall time (measured around the calls)" in out
    if PROBLEMS[name].report is not None:
        assert "checked:" in out


@pytest.mark.parametrize("name", ["slider_crank", "clearance_pendulum", "free_top"])
def test_plot_and_orbit_written(name, tmp_path, capsys):
    path = tmp_path / f"{name}.png"
    assert main([name, "--t-end", "0.01", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 0
    orbit = tmp_path / f"{name}_orbit.png"
    assert orbit.exists() == (name == "clearance_pendulum")


def test_list_names_every_problem_and_variant(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for name, p in PROBLEMS.items():
        line = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert p.description in line
        assert f"variants: {', '.join(p.variants)}" in out


def test_help_shows_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "python -m nlpdyn slider_crank --variant clearance_A" in capsys.readouterr().out


def test_options_reach_the_builder(capsys):
    # the clearance set on the command line is the one the report checks against
    assert main(["clearance_pendulum", "--clearance", "3e-4", "--t-end", "0.02", "--quiet",
                 "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "clearance=0.0003" in out and "within clearance 3.0000e-04 m" in out
    assert main(["slider_crank", "--variant", "clearance_A", "--clearance", "1e-3",
                 "--t-end", "0.002", "--quiet", "--no-plot"]) == 0
    assert "revolute_clearance=0.001" in capsys.readouterr().out


BAD = [
    ([], "the problem name is required"),
    (["nope"], "unknown problem 'nope'"),
    (["pendulum", "--h", "0"], "argument --h: must be a finite number > 0"),
    (["pendulum", "--h", "nan"], "argument --h: must be a finite number > 0"),
    (["pendulum", "--t-end", "-1"], "argument --t-end: must be a finite number > 0"),
    (["pendulum", "--t-end", "0"], "argument --t-end: must be a finite number > 0"),
    (["pendulum", "--h-min", "1e-2", "--h", "1e-3"], "argument --h-min: 0.01 exceeds"),
    (["pendulum", "--step-control", "nlp"], "argument --step-control: nlp needs bounds"),
    (["pendulum", "--step-control", "fixed", "--h-min", "1e-4"],
     "argument --step-control: fixed takes one step size"),
    (["slider_crank", "--variant", "x"], "argument --variant: slider_crank has no variant 'x'"),
    (["pendulum", "--set", "nope=1"], "pendulum has no option 'nope'"),
    (["pendulum", "--set", "length"], "argument --set: expected KEY=VALUE"),
    (["pendulum", "--set", "length=-1"], "option length='-1': must be > 0"),
    (["clearance_pendulum", "--set", "clearance=abc"], "option clearance='abc'"),
    (["clearance_pendulum", "--variant", "ideal", "--set", "clearance=1e-4"],
     "option 'clearance' does not apply to variant 'ideal'"),
    (["pendulum", "--clearance", "1e-4"], "argument --clearance: variant 'default'"),
    (["triple_pendulum", "--set", "evaluation=sideways"], "option evaluation='sideways': choose"),
    (["free_top", "--set", "angular_velocity=1,x"], "option angular_velocity='1,x'"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) or "none" for a, _ in BAD])
def test_bad_arguments_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_runs_from_any_directory(tmp_path):
    """The case studies are found beside the package, whatever the working directory."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-m", "nlpdyn", "pendulum", "--t-end", "0.002",
                          "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "checked: pendulum angle range" in out.stdout
    assert (tmp_path / "pendulum.png").exists()


def test_every_library_package_is_shipped():
    """pyproject lists the packages by hand (the case studies ship renamed): none is left out."""
    tomllib = pytest.importorskip("tomllib")      # Python 3.11+
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "nlpdyn").rglob("__init__.py")}
    assert found <= listed
    assert "nlpdyn_problems" in listed and "problems" not in listed


@pytest.mark.slow
def test_wheel_has_no_generic_top_level_name(tmp_path):
    """The wheel installs nlpdyn and nlpdyn_problems only, and its CLI finds the case studies."""
    import zipfile
    pytest.importorskip("build")
    out = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                          str(ROOT)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    wheel, = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"nlpdyn", "nlpdyn_problems"}
    assert "nlpdyn_problems/slider_crank.py" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
