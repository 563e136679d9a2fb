"""Settings named before stepping, and steps accepted on true quantities (issue 12)."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import clearance_pendulum, pendulum


@pytest.mark.parametrize("options,expected", [
    (dict(implicit_iterations=-1), "implicit_iterations must be >= 0 (a whole number), got -1"),
    (dict(refinement_steps=-2), "refinement_steps must be >= 1 (a whole number), got -2"),
    (dict(refinement_steps=0), "refinement_steps must be >= 1"),
    (dict(gap_iterations=2.5), "gap_iterations must be >= 0 (a whole number) or None, got 2.5"),
    (dict(max_retries=True), "max_retries must be >= 0 (a whole number), got True"),
    (dict(max_penetration=-1.0), "max_penetration must be None or > 0 (m, a finite number), got -1.0"),
    (dict(gap_tol=float("nan")), "gap_tol must be > 0 (a finite number), got nan"),
    (dict(implicit_tol="1e-9"), "implicit_tol must be > 0 (a finite number), got '1e-9'"),
    (dict(tie_break=float("inf")), "tie_break must be >= 0 (a finite number), got inf"),
    (dict(qp_solver="qpoasis"), "qp_solver 'qpoasis' is not a QP plugin of this CasADi"),
    (dict(qp_solver=3), "qp_solver 3 is not a QP plugin"),
    (dict(projection="yes"), "projection must be True or False, got 'yes'"),
    (dict(nlp_options=["tol", 1]), "nlp_options must be None or a dict"),
])
def test_bad_settings_are_named_before_stepping(options, expected):
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(pendulum.build(), t_end=0.01, h=1e-3, progress=False, **options)
    assert expected in str(err.value)


def test_every_bad_setting_is_reported_at_once():
    with pytest.raises(nd.ModelError) as err:
        nd.StepperSettings(implicit_iterations=-1, max_penetration=-1.0, qp_solver="nope",
                           gap_tol=0.0)
    text = str(err.value)
    for name in ("implicit_iterations", "max_penetration", "qp_solver", "gap_tol"):
        assert name in text


def test_an_unknown_qp_solver_is_refused_with_and_without_gaps():
    for build in (pendulum.build, clearance_pendulum.build):
        with pytest.raises(nd.ModelError, match="qp_solver 'foo'"):
            nd.Stepper(build(), h=1e-3, solver="qp", qp_solver="foo")


def _reach(limit_time=0.1):
    """A 1 m rod on a ball joint whose tip is programmed to x = 0.95 + 0.5 t: the reach is
    possible until t = 0.1 (the rod straight along x), impossible after."""
    th = np.arccos(0.95)
    s = nd.System(gravity=(0, -9.81, 0))
    rod = s.add_body("rod", 1.0, (1e-4, 0.083, 0.083),
                     position=(0.5 * np.cos(th), 0.5 * np.sin(th), 0),
                     orientation=(np.cos(th / 2), 0, 0, np.sin(th / 2)))
    s.add_joint(nd.Spherical(s.ground, rod, (0, 0, 0), name="ball"))
    tip = (np.cos(th), np.sin(th), 0.0)
    s.add_joint(nd.Programmed([rod], lambda t, st: st.point(tip)[0] - (0.95 + 0.5 * t),
                              name="reach"))
    return s


@pytest.mark.parametrize("solver", ["direct", "qp", "ipopt"])
def test_an_impossible_programmed_reach_fails_where_it_becomes_impossible(solver):
    """Past t = 0.1 no configuration meets both joints. The linearised rows still can be met,
    so only the true quantities show it: steps past 0.1 leave the joints apart with no
    configuration closing them (naming the programmed constraint), or make the ball joint
    create energy. The run stops at 0.1, and every accepted step keeps the joints closed to
    O(h^2)."""
    res = nd.simulate(_reach(), t_end=0.2, h=1e-3, progress=False, solver=solver)
    assert not res.success
    assert ("reach" in res.message and "cannot be met" in res.message) or "creates" in res.message
    assert 0.099 <= res.t[-1] <= 0.1005
    assert res.info["run"]["max_constraint_violation"] <= 1e-4


def test_a_step_that_creates_energy_is_retried():
    """A 1e8 N/m spring evaluated explicitly at h = 1e-3 (h sqrt(k/m) = 7, beyond the
    explicit step's stability limit 2): unchecked (energy_tol = 1e6), the oscillator's
    5000.09 J grows 1e30-fold in 10 steps. Checked, each step tried at h that creates more
    than energy_tol of the energy in play (both ends' energy and every agent's work: about
    4x the oscillator's) is cut, so the energy never grows by more than a step's allowance
    (measured 15 %). An unstable step that happens to remove energy passes the check: the
    run loses nearly all of it and says its steps do not resolve the motion. The seed's
    euler fails its second step, saying why."""
    from test_implicit_forces import _oscillator
    with pytest.warns(RuntimeWarning, match="the discretisation added"):
        unchecked = nd.simulate(_oscillator(1e8, 0.0, "explicit"), t_end=0.01, h=1e-3,
                                progress=False, energy_tol=1e6)
    assert unchecked.energy[-1] > 1e30 * unchecked.energy[0]
    with pytest.warns(RuntimeWarning, match="the discretisation removed"):
        res = nd.simulate(_oscillator(1e8, 0.0, "explicit"), t_end=0.01, h=1e-3, progress=False)
    assert res.success
    assert res.stats.retries.sum() > len(res.h)                      # most steps were cut
    assert res.h.min() < 2 / np.sqrt(1e8 / 2.0)                      # within the stable range
    assert res.energy.max() <= 1.2 * res.energy[0]
    euler = nd.simulate(_oscillator(1e8, 0.0, "explicit"), t_end=0.01, h=1e-3, progress=False,
                        scheme="euler")
    assert not euler.success
    assert "creates" in euler.message and "energy_tol" in euler.message


def test_inconsistent_velocities_of_an_ill_conditioned_model_are_projected():
    """A 4.4 g body welded to the ground, a 915 kg body hinged to it, velocities that break
    both joints: the projection (condition ~1e14) must meet the joints, so the first step
    keeps the energy it starts with (it used to drop from 18853 to 5929 J)."""
    s = nd.System(gravity=(0, -9.81, 0))
    s.add_body("light", 0.0044, (1e-7, 1e-7, 1e-7), velocity=(0.3, 0, 0))
    s.add_body("heavy", 915.0, (50, 60, 70), position=(1, 0, 0), velocity=(0, 5, 1),
               angular_velocity=(3, 0, 2))
    s.add_joint(nd.Fixed(s.ground, s.body("light"), (0, 0, 0), name="weld"))
    s.add_joint(nd.Revolute(s.body("light"), s.body("heavy"), (0.5, 0, 0), (0, 0, 1),
                            name="hinge"))
    res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False)
    assert res.success
    assert abs(res.energy[1] - res.energy[0]) <= 1e-4 * res.energy[0]


def _spinner(spin):
    """A light body spinning about its own axis on a universal joint (axis2) while it
    swings about the ground's Z (axis1)."""
    s = nd.System(gravity=(0, -9.81, 0))
    b = s.add_body("spinner", 0.05, (1e-5, 2e-5, 1.2e-5), position=(0.05, 0, 0),
                   angular_velocity=(0, spin, 3.0))
    s.add_joint(nd.Universal(s.ground, b, (0, 0, 0), (0, 0, 1), (0, 1, 0), name="cardan"))
    return s


@pytest.mark.slow
def test_an_unresolved_spin_is_reported_not_hidden():
    """Asked for 8000 rad/s about axis2, which does not pass through its centre, the body
    is projected onto the joint at 1103 rad/s (its centre moving at 55 m/s; said once, as
    the initial projection's note): at h = 1e-3 it would turn 1.1 rad per step. The
    midpoint steps are cut to 5e-4 and 2.5e-4 (the Euler-parameter norm check) and still
    the ideal joint does work: +11 % of the energy; the seed's euler steps lose 35 %
    (booked as the ideal joint's work). Either run says so in a warning and in its summary;
    resolved steps (h = 1e-4, 0.11 rad per step) keep the energy and say nothing more."""
    for scheme, verb in ((None, "added"), ("euler", "removed")):
        with pytest.warns(RuntimeWarning, match=f"the discretisation {verb}"):
            coarse = nd.simulate(_spinner(8000.0), t_end=0.05, h=1e-3, progress=False,
                                 scheme=scheme)
        change = coarse.energy[-1] / coarse.energy[0] - 1
        assert change > 0.1 if verb == "added" else change < -0.3
        assert f"warning: the discretisation {verb}" in coarse.summary()
    fine = nd.simulate(_spinner(8000.0), t_end=0.05, h=1e-4, progress=False)
    assert fine.v[0, 4] == pytest.approx(8000 * 2e-5 / (2e-5 + 0.05 * 0.05**2), rel=1e-9)
    assert fine.info["warnings"] == [fine.initial_projection["note"]]
    assert abs(fine.energy[-1] - fine.energy[0]) <= 0.02 * fine.energy[0]
