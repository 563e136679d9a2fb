"""Results: named lookups, save/load round trip, plots without rerunning, the CLI."""
import matplotlib
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.__main__ import main
from nlpdyn.stepper import StepStats
from problems import slider_crank

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def result():
    return nd.simulate(slider_crank.build(), t_end=0.05, h=1e-3, progress=False)


def test_shapes_and_lookups(result):
    n = len(result.t)
    assert result.position("rod").shape == (n, 3)
    assert result.orientation("rod").shape == (n, 4)
    assert result.velocity("slider").shape == (n, 3)
    assert result.angular_velocity("crank").shape == (n, 3)
    assert result.energy.shape == (n,) and result.h.shape == (n - 1,)
    assert result.reaction_force("A").shape == (n - 1, 3)
    assert result.multipliers("B").shape == (n - 1, 3)
    w_global = result.angular_velocity("crank", frame="global")
    assert np.allclose(np.linalg.norm(w_global, axis=1),
                       np.linalg.norm(result.angular_velocity("crank"), axis=1))
    with pytest.raises(KeyError, match="no body named 'wheel'"):
        result.position("wheel")
    with pytest.raises(KeyError, match="no constraint named"):
        result.reaction_force("Z")


def test_action_equals_reaction(result):
    """Joint B (spherical, crank-rod): the forces on its two bodies are opposite."""
    assert np.allclose(result.reaction_force("B", body="crank"),
                       -result.reaction_force("B", body="rod"), atol=1e-10)


def test_save_load_round_trip(result, tmp_path):
    path = tmp_path / "run.npz"
    result.save(path)
    back = nd.Result.load(path)
    for name in ("t", "h", "q", "v", "energy", "kinetic_energy", "potential_energy", "mu"):
        assert np.array_equal(getattr(back, name), getattr(result, name))
    for f in StepStats.__dataclass_fields__:
        assert np.array_equal(getattr(back.stats, f), getattr(result.stats, f))
    assert np.array_equal(back.reaction_force("A"), result.reaction_force("A"))
    assert np.array_equal(back.reaction_torque("C"), result.reaction_torque("C"))
    assert back.success == result.success and back.message == result.message
    assert back.initial_projection["changed"] == result.initial_projection["changed"]
    assert back.summary() == result.summary()


def test_plots_from_a_loaded_result(result, tmp_path):
    result.save(tmp_path / "run.npz")
    fig = nd.Result.load(tmp_path / "run.npz").plot()
    fig.savefig(tmp_path / "run.png")
    assert (tmp_path / "run.png").stat().st_size > 10_000


def test_cli_runs_a_problem(tmp_path, capsys):
    png = tmp_path / "p.png"
    assert main(["pendulum", "--t-end", "0.2", "--h", "1e-3", "--plot", str(png), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "reached t_end" in out and "pendulum angle range" in out
    assert png.stat().st_size > 10_000


def test_cli_lists_and_rejects(capsys):
    assert main(["--list"]) == 0
    assert "slider_crank" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["no_such_problem"])
    assert "unknown problem 'no_such_problem'" in capsys.readouterr().err
