"""The command line: every registered case study and variant runs, arguments are validated."""
import functools
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn import Result, plotting
from nlpdyn.__main__ import main
from nlpdyn.plotting import orbit_joints
from problems import PROBLEMS, Option, Problem

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parent.parent
T_END = "0.004"
# options that keep the big models small for a smoke run
SMALL = {"four_bar_chain": {"n": 2}, "chain": {"n_links": 2}}
CASES = [(name, variant) for name, p in PROBLEMS.items() for variant in p.variants]
IDS = [f"{n}-{v}" for n, v in CASES]


def small_options(name):
    return [a for k, v in SMALL.get(name, {}).items() for a in ("--set", f"{k}={v}")]


def assert_png(path):
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path


@pytest.mark.slow
@pytest.mark.parametrize("name, variant", CASES, ids=IDS)
def test_every_variant_runs_and_plots(name, variant, tmp_path, capsys):
    """Each case and variant runs briefly and writes its overview plot (and, with clearance
    joints, the journal orbit)."""
    path = tmp_path / "plot.png"
    code = main([name, "--variant", variant, "--t-end", T_END, "--quiet", "--plot", str(path),
                 *small_options(name)])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    assert f"{name} [{variant}]" in captured.out
    assert "wall time (measured around the calls)" in captured.out
    if PROBLEMS[name].report is not None:
        assert "checked:" in captured.out
    assert_png(path)
    problem = PROBLEMS[name]
    system = problem.build(**problem.keywords(variant, SMALL.get(name)))
    orbit = tmp_path / "plot_orbit.png"
    if orbit_joints(system):
        assert_png(orbit)
    else:
        assert not orbit.exists()


@pytest.mark.parametrize("name, variant", CASES, ids=IDS)
def test_plotted_bodies_exist(name, variant):
    """The bodies each case's plot names are in its model as built (no run)."""
    problem = PROBLEMS[name]
    system = problem.build(**problem.keywords(variant))
    assert problem.missing_bodies(system) == []


def test_wrong_plot_body_stops_before_the_run(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(PROBLEMS, "pendulum", replace(PROBLEMS["pendulum"], bodies=("body0",)))
    assert main(["pendulum", "--t-end", T_END, "--quiet", "--plot", str(tmp_path / "p.png")]) == 1
    captured = capsys.readouterr()
    assert "shows bodies body0, which the model does not have (bodies: bob)" in captured.err
    assert "wall time" not in captured.out
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("failing", ["save", "plot"])
def test_a_failing_output_loses_nothing_else(failing, monkeypatch, tmp_path, capsys):
    """Saving or plotting that fails after the run: the summary, the other output, a
    one-line error and exit code 1."""
    def fail(*args, **kwargs):
        raise OSError("disk full\n(second line)")
    monkeypatch.setattr(*{"save": (Result, "save"), "plot": (plotting, "plot_result")}[failing],
                        fail)
    save, plot = tmp_path / "run.npz", tmp_path / "run.png"
    assert main(["pendulum", "--t-end", T_END, "--quiet", "--save", str(save),
                 "--plot", str(plot)]) == 1
    captured = capsys.readouterr()
    assert "success: reached t_end" in captured.out and "checked:" in captured.out
    error, = captured.err.strip().splitlines()
    assert error.endswith("OSError: disk full (second line)")
    if failing == "save":
        assert "could not save the result" in error and not save.exists()
        assert_png(plot)
    else:
        assert "could not write the plot" in error and not plot.exists()
        assert len(Result.load(save).t) > 1


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


def test_a_warning_is_said_once(recwarn, capsys):
    """The slider-crank's IFToMM velocities are projected onto the joints: the summary says
    so once ("warning: ..."), and it is not issued again as a Python warning."""
    assert main(["slider_crank", "--t-end", "0.002", "--quiet", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert out.count("warning: the initial state did not meet the joints") == 1
    assert not [w for w in recwarn if "the initial state did not meet" in str(w.message)]


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
    (["free_top", "--set", "angular_velocity=1,2"],
     "argument --set: option angular_velocity='1,2': expected 3 values"),
    (["pendulum", "--set", "angle0=nan"], "argument --set: option angle0='nan': must be finite"),
    (["chain", "--set", "n_links=2.5"], "argument --set: option n_links='2.5'"),
    (["clearance_pendulum", "--set", "clearance=1e-4", "--clearance", "2e-4"],
     "argument --clearance: option 'clearance' is already set by --set"),
    (["pendulum", "--h", "inf"], "argument --h: must be a finite number > 0"),
    (["pendulum", "--h", "abc"], "argument --h: expected a number"),
    (["pendulum", "--h-min=-1e-4"], "argument --h-min: must be a finite number > 0"),
    (["pendulum", "--t-end", "inf"], "argument --t-end: must be a finite number > 0"),
    (["pendulum", "--step-control", "sometimes"], "argument --step-control: invalid choice"),
    (["pendulum", "--form", "implicit"], "argument --form: invalid choice"),
    (["pendulum", "--plot", "/no-such-folder/p.png"],
     "argument --plot: cannot write '/no-such-folder/p.png': no folder '/no-such-folder'"),
    (["pendulum", "--plot", "p.txt"], "argument --plot: cannot write 'p.txt': '.txt' is not a"),
    (["pendulum", "--plot", "."], "argument --plot: '.' is a folder"),
    (["pendulum", "--plot", "p.png", "--no-plot"], "argument --no-plot: not allowed with"),
    (["pendulum", "--save", "/no-such-folder/run"],
     "argument --save: cannot write '/no-such-folder/run.npz': no folder"),
    (["pendulum", "--save", "."], "argument --save: '.' is a folder"),
    (["slider_crnk"], "unknown problem 'slider_crnk' (did you mean 'slider_crank'?)"),
    (["slider_crank", "--variant", "clearence_A"],
     "no variant 'clearence_A' (did you mean 'clearance_A'?)"),
    (["slider_crank", "--set", "crank_sped=5"],
     "no option 'crank_sped' (did you mean 'crank_speed'?)"),
    (["pendulum", "--output-every", "0"], "argument --output-every: must be at least 1"),
    (["pendulum", "--output-every", "2.5"], "argument --output-every: expected a whole number"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) or "none" for a, _ in BAD])
def test_bad_arguments_are_refused(argv, message, monkeypatch, capsys):
    """Refused before the model is built."""
    if argv and argv[0] in PROBLEMS:
        problem = PROBLEMS[argv[0]]

        @functools.wraps(problem.build)              # its signature holds the defaults
        def build(**keywords):
            pytest.fail("the model was built")
        monkeypatch.setitem(PROBLEMS, argv[0], replace(problem, build=build))
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"nlpdyn {nd.__version__}"


def test_output_every_thins_the_result(tmp_path, capsys):
    """--output-every N keeps every N-th step and the last; the run takes every step."""
    saved = tmp_path / "run.npz"
    assert main(["pendulum", "--t-end", "0.1", "--h", "1e-3", "--output-every", "30",
                 "--no-plot", "--quiet", "--save", str(saved)]) == 0
    res = Result.load(saved)
    assert np.allclose(res.t, [0.0, 0.03, 0.06, 0.09, 0.1])
    assert "in 100 steps" in capsys.readouterr().out


def test_settings_the_model_refuses_end_in_a_message(capsys, tmp_path, monkeypatch):
    """A scheme the model cannot take is said as the command line's error, not a traceback."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["slider_crank", "--variant", "clearance_A", "--scheme", "midpoint",
              "--step-control", "nlp", "--h-min", "5e-4", "--h", "1e-3", "--no-plot",
              "--t-end", "0.01", "--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error: slider_crank [clearance_A]: invalid model" in err
    assert "scheme 'midpoint' takes step_control 'fixed', 'adaptive' or 'error', got 'nlp'" in err
    assert "Traceback" not in err


def _toy(n=3, scale=1.0):
    if scale > 2:
        raise ValueError("scale must be at most 2")
    return PROBLEMS["pendulum"].build()


TOY = Problem(_toy, 0.01, 1e-3, options={"n": Option(float, "a count, wrongly parsed as float"),
                                          "scale": Option(float, "a scale")})


@pytest.mark.parametrize("option, message", [
    ("n=2.5", "argument --set: option n='2.5': the builder expects a int (default 3), got 2.5"),
    ("scale=3", "argument --set: the builder refused scale=3.0: ValueError: scale must be"),
])
def test_option_the_builder_cannot_take(option, message, monkeypatch, capsys):
    """An option value of the wrong type for the builder, or one it refuses: exit 2 before
    the run."""
    monkeypatch.setitem(PROBLEMS, "toy", TOY)
    monkeypatch.setattr("nlpdyn.simulate", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(SystemExit) as exc:
        main(["toy", "--set", option, "--no-plot"])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_runs_from_any_directory(tmp_path):
    """The case studies are found beside the package, whatever the working directory."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-m", "nlpdyn", "pendulum", "--t-end", "0.002",
                          "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "checked: pendulum angle range" in out.stdout
    assert (tmp_path / "pendulum.png").exists()


def test_installed_case_studies_list_without_the_repository_on_the_path(tmp_path):
    """Installed, the case studies are the package nlpdyn_problems: they import each other
    relatively (an absolute ``problems.`` import works only from the repository root)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-m", "nlpdyn", "--list"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert all(name in out.stdout for name in ("two_loops", "rolling_disk", "slider_crank"))


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


def test_reports_give_a_verdict_for_the_simulated_window(capsys):
    """The slider's range reads ok or OUTSIDE against its closed-form limits; a run too
    short to reach them says so instead of comparing."""
    import problems
    lo, hi = problems.slider_crank.slider_limits()

    class Run:
        def __init__(self, x):
            self.x = np.asarray(x)

        def position(self, body):
            return np.c_[self.x, np.zeros_like(self.x), np.zeros_like(self.x)]

    turning = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.linspace(0, 3 * np.pi, 301))
    assert "ok, within 0.0001 m" in problems._slider_report(Run(turning), {})
    short = problems._slider_report(Run(turning + 0.002), {})
    assert "OUTSIDE 0.0001 m (off by up to 0.002 m)" in short
    assert "not reached yet" in problems._slider_report(Run(turning[:120]), {})
    assert main(["pendulum", "--t-end", "0.3", "--no-plot", "--quiet"]) == 0
    assert "the closed form's range 0.0000 .. 3.1416 rad is not reached yet" in \
        capsys.readouterr().out


def test_the_variant_line_follows_the_options_given(capsys):
    """The header names the variant's own value of each option as its default, and the
    values given on the command line beside them."""
    assert main(["slider_crank", "--variant", "clearance_A", "--clearance", "1e-3",
                 "--t-end", "0.005", "--no-plot", "--quiet"]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert "(at its defaults; given here: revolute_clearance=0.001)" in header
    assert "revolute_clearance (radial and axial clearance of A [m]; default 0.0001; " \
        "given 0.001)" in header
