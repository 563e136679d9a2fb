"""Results: shapes and named lookups, an exact save/load round trip (.npz, no pickles) of every
array and lookup, plots from live and loaded results, and the command line.

Round trips are exact (np.array_equal, same dtype): nothing is recomputed on load.
"""
import json

import matplotlib
import numpy as np
import pytest

import nlpdyn as nd
from test_validation import contradictory_drivers
from nlpdyn.__main__ import main
from nlpdyn.result import StepStats
from problems import slider_crank

matplotlib.use("Agg")


def falling_cup():
    """A cup on a ball with 1 mm clearance: it falls onto the ball (gaps and contacts)."""
    s = nd.System(gravity=(0, 0, -9.81))
    cup = s.add_body("cup", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, 0.1),
                     angular_velocity=(0, 0, 1.0))
    s.add_joint(nd.SphericalClearance(s.ground, cup, point=(0, 0, 0.1), clearance=1e-3,
                                      name="socket"))
    return s


def failing_drivers():
    """Two drivers of one block that contradict each other after t = 0.305 (run stops)."""
    return contradictory_drivers(0.305)


RUNS = {
    # ideal joints of four kinds, a projected start (the rod's velocity violates joint C)
    "slider_crank": lambda: nd.simulate(slider_crank.build(), t_end=0.05, h=1e-3, progress=False),
    # gaps, contact forces, points and vectors; variable h
    "cup": lambda: nd.simulate(falling_cup(), t_end=0.03, h=(1e-4, 1e-3), progress=False),
    # success False, status -1, a message naming the time
    "failed": lambda: nd.simulate(failing_drivers(), t_end=1.0, h=1e-2, progress=False),
}


@pytest.fixture(scope="module", params=list(RUNS))
def result(request):
    return RUNS[request.param]()


@pytest.fixture(scope="module")
def crank_result():
    return RUNS["slider_crank"]()


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


def _same_dict(a, b):
    """Equal dicts, NaN equal to NaN (summary() reports mean_iterations = nan for QP steps)."""
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and np.isnan(a[k]) and np.isnan(b[k])) for k in a)


# ---------------------------------------------------------------- shapes and lookups


def test_shapes_and_lookups(crank_result):
    res = crank_result
    n = len(res.t)
    assert res.q.shape == (n, 21) and res.v.shape == (n, 18)
    assert res.position("rod").shape == (n, 3)
    assert res.orientation("rod").shape == (n, 4)
    assert res.velocity("slider").shape == (n, 3)
    assert res.angular_velocity("crank").shape == (n, 3)
    assert res.rotation("rod").shape == (n, 3, 3)
    assert res.energy.shape == (n,) and res.h.shape == (n - 1,)
    assert res.reaction_force("A").shape == (n - 1, 3)
    assert res.reaction_torque("C").shape == (n - 1, 3)
    assert res.multipliers("B").shape == (n - 1, 3)
    assert res.multipliers("slide").shape == (n - 1, 5)
    assert _same(res.energy, res.kinetic_energy + res.potential_energy)
    # lookups are the documented slices of the flat arrays (body order of declaration)
    assert _same(res.position("rod"), res.q[:, 7:10])
    assert _same(res.orientation("slider"), res.q[:, 17:21])
    assert _same(res.angular_velocity("rod"), res.v[:, 9:12])
    # the global angular velocity is A w'
    w_global = res.angular_velocity("crank", frame="global")
    A = res.rotation("crank")
    assert np.abs(w_global - np.einsum("nij,nj->ni", A, res.angular_velocity("crank"))).max() == 0
    with pytest.raises(KeyError, match="no body named 'wheel'"):
        res.position("wheel")
    with pytest.raises(KeyError, match="no element named 'Z'"):
        res.reaction_force("Z")
    with pytest.raises(KeyError, match="acts on"):
        res.reaction_force("A", body="slider")
    with pytest.raises(ValueError, match="frame"):
        res.angular_velocity("crank", frame="world")


def test_action_equals_reaction(crank_result):
    """Joint B (spherical, crank-rod): the forces on its two bodies are opposite, and the
    ground's share of joint A balances the crank's (identity tier: the same numbers)."""
    res = crank_result
    scale = 1 + np.abs(res.reaction_force("B", body="crank")).max()
    assert np.abs(res.reaction_force("B", body="crank")
                  + res.reaction_force("B", body="rod")).max() <= 1e-12 * scale
    assert np.abs(res.reaction_force("A", body="ground")
                  + res.reaction_force("A", body="crank")).max() == 0


# ---------------------------------------------------------------- save / load


ARRAYS = ("t", "h", "q", "v", "energy", "kinetic_energy", "potential_energy", "mu", "lam", "gaps")


def test_save_load_round_trip(result, tmp_path):
    path = tmp_path / "r.npz"
    result.save(path)
    back = nd.Result.load(path)

    for name in ARRAYS:
        assert _same(getattr(back, name), getattr(result, name)), name
    for f in StepStats.__dataclass_fields__:
        assert _same(getattr(back.stats, f), getattr(result.stats, f)), f
    assert _same_dict(back.stats.summary(), result.stats.summary())

    assert back.body_names == result.body_names
    for body in result.body_names:
        for lookup in ("position", "orientation", "velocity", "angular_velocity", "rotation"):
            assert _same(getattr(back, lookup)(body), getattr(result, lookup)(body))
        assert _same(back.angular_velocity(body, frame="global"),
                     result.angular_velocity(body, frame="global"))

    assert back.constraint_rows == result.constraint_rows
    for name, (_, _, bodies) in result.constraint_rows.items():
        assert _same(back.multipliers(name), result.multipliers(name))
        for body in bodies:
            assert _same(back.reaction_force(name, body), result.reaction_force(name, body))
            assert _same(back.reaction_torque(name, body), result.reaction_torque(name, body))

    assert back.gap_rows == result.gap_rows
    for name, (_, _, bodies) in result.gap_rows.items():
        for lookup in ("gap", "contact_force", "contact_point", "contact_force_vector",
                       "multipliers"):
            assert _same(getattr(back, lookup)(name), getattr(result, lookup)(name))
        for body in bodies:
            assert _same(back.reaction_force(name, body), result.reaction_force(name, body))

    assert back.success is result.success
    assert back.status == result.status and back.message == result.message
    assert back.initial_projection == result.initial_projection
    assert back.info == result.info
    assert back.summary() == result.summary() and repr(back) == repr(result)


def test_saved_file_is_plain_arrays(crank_result, tmp_path):
    """No pickles: the archive opens with allow_pickle=False and the metadata is JSON."""
    path = tmp_path / "r.npz"
    crank_result.save(path)
    with np.load(path, allow_pickle=False) as data:
        assert all(data[k].dtype != object for k in data.files)
        meta = json.loads(str(data["__meta__"]))
    assert meta["message"] == crank_result.message


def test_the_runs_are_what_the_round_trip_needs(result):
    """Guard against a vacuous round trip: each run exercises what it is there for."""
    if result.gap_rows:
        assert result.contact_force("socket").max() > 0
        assert len(np.unique(result.h)) > 1
    elif not result.success:
        assert result.status == -1 and "t = 0.31" in result.message
    else:
        assert result.initial_projection["changed"] and len(result.constraint_rows) == 4


# ---------------------------------------------------------------- plots


def test_plot_runs_on_live_results(result):
    import matplotlib.pyplot as plt
    pytest.importorskip("nlpdyn.plotting")
    fig = result.plot()
    assert len(fig.axes) == 4
    assert fig._suptitle.get_text() == result.message
    assert len(fig.axes[2].lines) == 1 and len(fig.axes[2].lines[0].get_xdata()) >= len(result.h)
    plt.close(fig)


def test_plot_from_a_loaded_result(crank_result, tmp_path):
    """A saved run is plotted without rerunning it: the loaded result draws the same data."""
    import matplotlib.pyplot as plt
    pytest.importorskip("nlpdyn.plotting")
    crank_result.save(tmp_path / "r.npz")
    figs = [crank_result.plot(), nd.Result.load(tmp_path / "r.npz").plot()]
    lines = [[ln.get_xydata() for ax in fig.axes for ln in ax.lines] for fig in figs]
    assert len(lines[0]) == len(lines[1]) == 9 + 3 + 1 + 1
    assert all(_same(a, b) for a, b in zip(*lines, strict=True))
    for fig in figs:
        plt.close(fig)


def test_plot_helpers_draw_on_given_axes(crank_result):
    import matplotlib.pyplot as plt
    plotting = pytest.importorskip("nlpdyn.plotting")
    fig, ax = plt.subplots()
    assert plotting.plot_positions(crank_result, ["rod"], ax=ax) is fig
    assert len(ax.lines) == 3
    plotting.plot_energy(crank_result, ax=ax)
    assert len(ax.lines) == 6
    plt.close(fig)


# ---------------------------------------------------------------- command line


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
