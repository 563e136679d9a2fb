"""What a run says of itself (issue 22): the initial projection named per body, joints left
apart, and the models an audit found failing at the user's step (a stiff cantilever without
gravity, a heavy wheel resting in a clearance joint with friction)."""
import warnings

import numpy as np
import pytest

import nlpdyn as nd


def _bar(angular_velocity, velocity=(0, 0, 0), gravity=(0, 0, -9.81)):
    """A 1 kg, 1 m bar on a hinge about y at its end (inertia 1/12 about its centre)."""
    s = nd.System(gravity=gravity)
    bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 1 / 12, 1 / 12), position=(0.5, 0, 0),
                     velocity=velocity, angular_velocity=angular_velocity)
    s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0), name="hinge"))
    return s


def test_the_initial_projection_names_the_body_and_its_change():
    """Asked to spin at 8 rad/s with its centre at rest, the bar gets the consistent motion
    nearest in kinetic energy: w = 8 I / (I + m r^2) = 2 rad/s (I = 1/12, r = 0.5), its
    centre 0.5 w = 1 m/s: a change of 6 rad/s and 1 m/s, named in a warning."""
    w = 8 / 12 / (1 / 12 + 0.25)
    with pytest.warns(UserWarning, match="projected") as record:
        stepper = nd.Stepper(_bar((0, 8, 0)), h=1e-3)
    note = str(record[0].message)
    assert "body 'bar'" in note
    assert f"angular velocity by {8 - w:.3g} rad/s" in note
    assert f"velocity by {0.5 * w:.3g} m/s" in note
    assert stepper.initial_projection["note"] == note
    assert stepper.v[4] == pytest.approx(w, rel=1e-9)


def test_simulate_warns_of_the_projection_once_and_keeps_it():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = nd.simulate(_bar((0, 8, 0)), 0.01, h=1e-3, progress=False)
    notes = [str(r.message) for r in record if "projected" in str(r.message)]
    assert len(notes) == 1 and notes[0] in res.info["warnings"]


def test_a_consistent_start_is_not_announced():
    """The same bar given the consistent motion: no projection beyond round-off, no note."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = nd.simulate(_bar((0, 2, 0), velocity=(0, 0, -1)), 0.01, h=1e-3, progress=False)
    assert "warnings" not in res.info


@pytest.mark.parametrize("scheme, w, h, warned", [(None, 60.0, 5e-3, False),
                                                  (None, 90.0, 5e-3, True),
                                                  ("euler", 30.0, 1e-3, False),
                                                  ("euler", 90.0, 1e-3, True)])
def test_joints_left_apart_are_reported(scheme, w, h, warned):
    """Spinning at w without gravity, the hinge point leaves its seat after each step, by
    L (w h)^3 / 64 with the midpoint step (its rows meet the joint to O(h^3); measured within
    2 %): 4.2e-4 of the 1 m bar at 60 rad/s, h = 5e-3, and 1.4e-3 at 90 rad/s, where
    drift_warning (1e-3 of the model's size) speaks; by about L (w h)^2 / 4 with the seed's
    euler (the chord of the step's rotation): 2e-4 at 30 rad/s, h = 1e-3, and 2e-3 at
    90 rad/s. With projection=True (euler's) it is closed and says nothing."""
    s = _bar((0, w, 0), velocity=(0, 0, -0.5 * w), gravity=(0, 0, 0))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = nd.simulate(s, 0.05, h=h, progress=False, scheme=scheme)
    notes = [str(r.message) for r in record if "joints apart" in str(r.message)]
    assert res.success
    expected = (w * h)**2 / 4 if scheme == "euler" else (w * h)**3 / 64
    assert res.info["run"]["max_constraint_violation"] == pytest.approx(
        expected, rel=0.2 if scheme == "euler" else 0.02)
    assert bool(notes) == warned
    if warned:
        projected = nd.simulate(_bar((0, w, 0), velocity=(0, 0, -0.5 * w), gravity=(0, 0, 0)),
                                0.05, h=h, progress=False, projection=True)
        assert not any("joints apart" in n for n in projected.info.get("warnings", []))


E, RHO, SIDE = 2.1e11, 7850.0, 0.01        # a 1 m steel bar, 10 mm square


@pytest.mark.slow
@pytest.mark.parametrize("damping", [7.6e-3, 0.0])
def test_cantilever_without_gravity_runs_at_the_users_step(damping):
    """The audit's cantilever: 10 elements, clamped, no gravity, a 1 N tip load from t = 0,
    h = 1e-3 (it failed at t = 0.12 s: its stored energy was not counted in play). Damped
    (c/k = 7.6e-3 s, 20 % of critical on the first mode) it settles to P L^3 / (3 E I)
    (the sections' midpoint rule: -0.3 %); undamped it swings to twice that and back."""
    I = SIDE**4 / 12
    s = nd.System(gravity=(0, 0, 0))
    link = nd.add_flexible_link(s, "beam", (0, 0, 0), (1, 0, 0), 10, E, E / 2.6, RHO, SIDE**2,
                                (I, I), 0.1406 * SIDE**4, stiffness_damping=damping,
                                y_axis=(0, 1, 0))
    s.add_joint(nd.Fixed(s.ground, link[0], (0, 0, 0), name="clamp"))
    s.add_force(nd.PointForce(link[-1], point=(1, 0, 0), force=(0, 1.0, 0), name="load"))
    res = nd.simulate(s, 1.0, h=1e-3, progress=False)
    assert res.success, res.message
    last = link[-1].name
    tip = res.position(last)[:, 1] + res.rotation(last)[:, 1, 0] * 0.25 / 9
    static = 1.0 / (3 * E * I)
    if damping:
        assert tip[-1] / static == pytest.approx(1.0, abs=0.01)
    else:
        assert 1.85 <= tip.max() / static <= 2.05


def test_heavy_wheel_with_friction_settles_on_its_pin():
    """The audit's 10 kg wheel (inertia 0.05/0.03/0.03) in a centred bore with friction 0.2
    failed its first step: it falls c = 0.5 mm onto the pin, hits plastically (the whole
    m g c = 0.049 J goes to the impact) and rests at the bottom of the clearance circle."""
    s = nd.System(gravity=(0, 0, -9.81))
    wheel = s.add_body("wheel", 10.0, (0.05, 0.03, 0.03), position=(0, 0, 0))
    s.add_joint(nd.RevoluteClearance(s.ground, wheel, (0, 0, 0), (1, 0, 0), radius=0.02,
                                     clearance=5e-4, length=0.03, axial_clearance=1e-3,
                                     friction=0.2, name="bore"))
    res = nd.simulate(s, 0.05, h=1e-3, progress=False)
    assert res.success, res.message
    assert np.allclose(res.position("wheel")[-1], (0, 0, -5e-4), atol=1e-8)
    assert res.energy_ledger()["impact:bore"].iloc[-1] == pytest.approx(-10 * 9.81 * 5e-4,
                                                                        rel=1e-6)


@pytest.mark.parametrize("kind, named", [
    ("driver", "rotation driver 'motor': equations"),
    ("force", "point force 'push': force not finite"),
    ("huge", "point force 'push': force 1e+300")])
def test_a_step_failing_on_non_finite_numbers_names_their_source(kind, named):
    """A driver angle or a load that leaves its domain just before t = 0.02 (sqrt(0.02 -
    1e-12 - t), sqrt(0.0195 - t): the step from t = 0.02 starts outside it) or overflows
    (1e300 N): the run stops at t = 0.02, keeps what it computed and names the element."""
    import casadi as ca
    s = _bar((0, 0, 0))
    bar = s.body("bar")
    if kind == "driver":
        hinge = next(el for el in s.elements if el.name == "hinge")
        s.add_joint(nd.RotationDriver(hinge, lambda t: ca.sqrt(0.02 - 1e-12 - t) - ca.sqrt(0.02 - 1e-12),
                                      name="motor"))
    else:
        force = ((lambda t, st: ca.vertcat(0, 0, ca.sqrt(0.0195 - t))) if kind == "force" else
                 (lambda t, st: ca.vertcat(0, 0, ca.if_else(t > 0.0195, 1e300, 0))))
        s.add_force(nd.PointForce(bar, point=(1, 0, 0), force=force, name="push"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = nd.simulate(s, 0.05, h=1e-3, progress=False)
    assert not res.success
    assert "step at t = 0.02 failed" in res.message and named in res.message
    assert res.t[-1] == pytest.approx(0.02)


def test_strict_runs_fail_where_the_notes_would_warn():
    """strict=True: the spinning bar whose joints drift beyond drift_warning (90 rad/s at
    h = 5e-3, above) ends with success False, the note as its message and its trajectory
    kept."""
    s = _bar((0, 90.0, 0), velocity=(0, 0, -45.0), gravity=(0, 0, 0))
    res = nd.simulate(s, 0.02, h=5e-3, progress=False, strict=True)
    assert not res.success and res.message.startswith("strict: ")
    assert "joints apart" in res.message and len(res.t) == 5


def _lifted_tip(lift):
    """The bar's tip (1 m from the hinge) programmed to z = lift(t)."""
    s = _bar((0, -2, 0), velocity=(0, 0, 1))
    bar = s.body("bar")
    s.add_joint(nd.Programmed([bar], lambda t, st: st.point((1, 0, 0))[2] - lift(t),
                              name="lift"))
    return s


def test_a_motion_out_of_reach_names_the_constraint():
    """z = 2 sin t leaves the tip's reach (|z| <= 1 m) at t = pi/6: the run stops there and
    names the programmed constraint first among the rows no configuration meets."""
    import casadi as ca
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = nd.simulate(_lifted_tip(lambda t: 2 * ca.sin(t)), 1.0, h=1e-3, progress=False)
    assert not res.success
    assert np.pi / 6 - 2e-3 <= res.t[-1] <= np.pi / 6
    assert "no configuration meets the constraints" in res.message
    assert "at programmed constraint 'lift' and revolute joint 'hinge'" in res.message


def test_an_unreachable_initial_speed_names_both_sides():
    """Asked to move the tip along x at the start (its velocity can only be along z), the
    initial projection names the programmed constraint and the hinge it contradicts."""
    s = _bar((0, 0, 0))
    bar = s.body("bar")
    s.add_joint(nd.Programmed([bar], lambda t, st: st.point((1, 0, 0))[0] - (1 + 2 * t),
                              name="reach"))
    with pytest.raises(nd.ModelError, match="at programmed constraint 'reach' and revolute "
                                            "joint 'hinge'"):
        nd.Stepper(s, h=1e-3)


def _spinning_pair(w, gravity=(0, 0, 0)):
    """Two 1 m bars (1 and 3 kg) on a hinge (axis y) between them, free in space: both
    tumble at w / 3 about x, the light one turns at w about the hinge as well."""
    s = nd.System(gravity=gravity)
    a = s.add_body("a", 1.0, (1e-3, 1 / 12, 1 / 12), position=(0.5, 0, 0),
                   velocity=(0, 0, -0.5 * w), angular_velocity=(w / 3, w, 0))
    b = s.add_body("b", 3.0, (3e-3, 3 / 12, 3 / 12), position=(-0.5, 0, 0),
                   angular_velocity=(w / 3, 0, 0))
    s.add_joint(nd.Revolute(a, b, (0, 0, 0), (0, 1, 0), name="hinge"))
    return s


def _momenta(res, names, masses, inertias):
    """Linear momentum and angular momentum about the centre of mass, from the states."""
    r = np.stack([res.position(n) for n in names], axis=1)
    rd = np.stack([res.velocity(n) for n in names], axis=1)
    w = np.stack([res.angular_velocity(n, frame="global") for n in names], axis=1)
    A = np.stack([res.rotation(n) for n in names], axis=1)
    m = np.asarray(masses)
    c = np.einsum("k,tki->ti", m, r) / m.sum()
    spin = np.einsum("tkij,kjl,tkml,tkm->tki", A, np.asarray(inertias), A, w)
    L = (np.cross(r - c[:, None], m[None, :, None] * rd) + spin).sum(axis=1)
    return (m[None, :, None] * rd).sum(axis=1), L


@pytest.mark.parametrize("scheme, w, gravity, h, warned", [(None, 5.0, (0, 0, 0), 5e-3, False),
                                                          (None, 5.0, (0, 0, -9.81), 5e-3, False),
                                                          (None, 60.0, (0, 0, 0), 5e-3, True),
                                                          ("euler", 60.0, (0, 0, 0), 1e-3, True)])
def test_a_free_system_reports_its_momentum_drift(scheme, w, gravity, h, warned):
    """Free in space (or falling), the pair's angular momentum about its centre of mass is
    conserved, and its linear momentum changes by gravity's impulse only. The midpoint steps
    keep them at 5 rad/s (0.025 rad per step at h = 5e-3: 8e-6 of the angular momentum); at
    60 rad/s (0.3 rad per step) they do not (3.9 %), nor do the seed's euler steps at
    h = 1e-3 (0.06 rad per step: 40 %), and the run says so."""
    res = nd.simulate(_spinning_pair(w, gravity), 0.3, h=h, progress=False, scheme=scheme)
    P, L = _momenta(res, ["a", "b"], [1.0, 3.0],
                    [np.diag((1e-3, 1 / 12, 1 / 12)), np.diag((3e-3, 3 / 12, 3 / 12))])
    P = P - 4.0 * np.asarray(gravity) * res.t[:, None]
    drift = np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(L[0])
    notes = [n for n in res.info.get("warnings", []) if "momentum" in n]
    assert np.abs(P - P[0]).max() <= 1e-9 * np.abs(P[0]).max(initial=1.0)
    assert bool(notes) == warned
    assert (drift > 0.01) == warned


def test_a_fault_inside_a_step_keeps_the_run_so_far(monkeypatch):
    """Any exception inside a step (here one planted in the sixth step's acceptance) ends
    the run there: success False, the exception named, its traceback in info, the five
    steps before it kept as they were."""
    s = _bar((0, 0, 0))
    reference = nd.simulate(s, 0.005, h=1e-3, progress=False)
    accept, calls = nd.Stepper._accept, []

    def faulty(self, *args):
        calls.append(self.t)
        if len(calls) == 6:
            raise ZeroDivisionError("planted")
        return accept(self, *args)

    monkeypatch.setattr(nd.Stepper, "_accept", faulty)
    res = nd.simulate(s, 0.01, h=1e-3, progress=False)
    assert not res.success
    assert res.message == "step at t = 0.005 raised ZeroDivisionError: planted"
    assert "ZeroDivisionError" in res.info["traceback"]
    assert np.array_equal(res.q, reference.q) and np.array_equal(res.t, reference.t)


def test_the_summary_gives_the_initial_projection_in_units():
    """The summary's line on the initial projection: per quantity the largest change, in its
    unit, and the body; quantities left alone are not named."""
    from nlpdyn.result import _largest_changes
    changes = {"crank": {"position": 0.0, "rotation": 0.0, "velocity": 2e-3,
                         "angular velocity": 0.05},
               "rod": {"position": 0.0, "rotation": 0.0, "velocity": 2.25e-3,
                       "angular velocity": 2.87}}
    line = _largest_changes({"body_changes": changes})
    assert line == "velocity 0.00225 m/s ('rod'), angular velocity 2.87 rad/s ('rod')"
    assert "(mixed units)" in _largest_changes({"position_change": 0.0,
                                                "velocity_change": 2.871})
