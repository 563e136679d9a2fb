"""Plots: the overview's panels and legends, and the journal orbit of clearance joints
checked against the run's gaps and against the bodies' positions."""
import matplotlib
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.joints.base import NORM_EPS
from nlpdyn.plotting import journal_orbit, plot_result
from problems import PROBLEMS, clearance_pendulum, slider_crank

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# the contact error a successful run may leave (StepperSettings.max_penetration's default)
PENETRATION = 10 * nd.StepperSettings().gap_tol


@pytest.fixture(scope="module")
def pendulum_run():
    system = clearance_pendulum.build()
    res = nd.simulate(system, t_end=0.3, h=(1e-3, 2e-3), progress=False)
    assert res.success
    return system, res


def test_orbit_matches_the_gaps(pendulum_run):
    system, res = pendulum_run
    joint = system.gaps[0]
    e = journal_orbit(res, joint)["eccentricity"]
    assert e.shape == (len(res.t), 2, 2)
    # gap k = c - |e_k|, up to the gaps' smoothing of |d| at the centre (NORM_EPS c)
    np.testing.assert_allclose(joint.clearance - np.linalg.norm(e, axis=2), res.gap("pin")[:, :2],
                               rtol=0, atol=NORM_EPS * joint.clearance)
    assert np.linalg.norm(e, axis=2).max() > 0.99 * joint.clearance   # the bore reached the pin


def test_orbit_against_the_bodies_positions(pendulum_run):
    """Independent geometry: the pin is the global Z axis through the origin; the bore's end
    centres are the bar's points that started at (0, 0, -+L/2) (bar unrotated at the start)."""
    system, res = pendulum_run
    joint = system.gaps[0]
    r0 = np.array([0.5, 0.0, 0.05])                       # cm_x, 0, cm_z of the builder
    A = res.rotation("bar")
    e = journal_orbit(res, joint)["eccentricity"]
    for k, z in enumerate((-0.01, 0.01)):                 # bore length 20 mm
        end = res.position("bar") + np.einsum("nij,j->ni", A, np.array([0, 0, z]) - r0)
        radial = end[:, :2]
        assert np.linalg.norm(radial, axis=1).max() <= joint.clearance + PENETRATION
        # the bearing plane's axes for the axis Z: f = +Y, g = -X (perpendicular_pair)
        np.testing.assert_allclose(e[:, k], np.column_stack([radial[:, 1], -radial[:, 0]]),
                                   rtol=0, atol=1e-15)


def test_spherical_orbit_matches_the_gap():
    system = slider_crank.build(spherical_clearance=1e-4)
    res = nd.simulate(system, t_end=0.05, h=1e-3, progress=False)
    joint = next(j for j in system.gaps if j.name == "B")
    e = journal_orbit(res, joint)["eccentricity"]
    assert e.shape == (len(res.t), 1, 3)
    np.testing.assert_allclose(joint.clearance - np.linalg.norm(e[:, 0], axis=1),
                               res.gap("B")[:, 0], rtol=0, atol=NORM_EPS * joint.clearance)
    # independent: ball centre on the rod, socket centre on the crank, both at B initially
    crank, rod = system.body("crank"), system.body("rod")
    on = [res.position(b.name) + np.einsum("nij,j->ni", res.rotation(b.name), b.local_point(joint.point))
          for b in (crank, rod)]
    assert np.linalg.norm(on[1] - on[0], axis=1).max() <= joint.clearance + PENETRATION
    fig = res.plot_orbit("B", system=system)
    assert len(fig.axes) == 2                    # x-y and x-z planes of the socket
    plt.close(fig)


def test_plot_orbit_lookups(pendulum_run):
    system, res = pendulum_run
    fig = res.plot_orbit(system.gaps[0], title="pendulum")
    ax = fig.axes[0]
    circle = ax.lines[0].get_xydata()
    np.testing.assert_allclose(np.hypot(*circle.T), 1e3 * system.gaps[0].clearance)
    assert ax.get_title() == "pin: journal orbit"
    plt.close(fig)
    with pytest.raises(ValueError, match="give the system"):
        res.plot_orbit("pin")
    with pytest.raises(KeyError, match="no clearance joint named"):
        res.plot_orbit("nope", system=system)


def _legends_outside(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            assert legend.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1


def test_overview_fixed_h_has_no_step_size_panel():
    res = nd.simulate(slider_crank.build(), t_end=0.05, h=1e-3, progress=False)
    panels = {}
    fig = res.plot(title="slider-crank", extra=lambda r, p: panels.update(p))
    assert "h" not in panels and {"position:slider", "energy", "violation"} <= set(panels)
    assert "step size" not in [ax.get_title() for ax in fig.axes]
    assert fig._suptitle.get_text().startswith("slider-crank\nreached t_end; fixed h = 0.001 s")
    _legends_outside(fig)
    plt.close(fig)


def test_overview_variable_h_and_drawn_checks(pendulum_run):
    _, res = pendulum_run
    fig = plot_result(res, title="clearance pendulum")
    assert "step size" in [ax.get_title() for ax in fig.axes]
    _legends_outside(fig)
    plt.close(fig)
    # the slider-crank's registry entry draws the closed-form limits of the slider's x
    res = nd.simulate(slider_crank.build(), t_end=0.02, h=1e-3, progress=False)
    problem = PROBLEMS["slider_crank"]
    fig = res.plot(extra=lambda r, p: problem.draw(r, p, problem.arguments({})))
    ax = next(a for a in fig.axes if a.get_title() == "slider: centre of mass")
    levels = sorted(line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--")
    lo, hi = slider_crank.slider_limits()
    np.testing.assert_allclose(levels, [lo, hi])
    plt.close(fig)


def test_free_top_shows_rotation():
    res = nd.simulate(PROBLEMS["free_top"].build(), t_end=0.02, h=1e-3, progress=False)
    fig = res.plot(**PROBLEMS["free_top"].plot_options)
    titles = [ax.get_title() for ax in fig.axes]
    assert "top: angular velocity (body frame)" in titles
    plt.close(fig)
