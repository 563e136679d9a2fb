"""LuGre joint friction against the model's closed forms: presliding below breakaway, Coulomb
sliding above it, the steady-state Stribeck curve, a revolute joint's spin-down, and a normal
force that changes within the run (coupled in the step, not lagged)."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd

G = 9.81
MU_S, MU_K, U_S = 0.3, 0.2, 1e-3
SIGMA0, SIGMA1 = 1e5, 300.0


def _block(push, sigma2=0.0, mass=1.0, normal_push=None, driven=None):
    """A block on a horizontal prismatic slide with LuGre friction; ``push`` along the slide,
    ``normal_push(t)`` an extra downward load, ``driven`` a prescribed slide displacement."""
    s = nd.System(gravity=(0, 0, -G))
    b = s.add_body("block", mass, (1e-3, 1e-3, 1e-3))
    slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="slide"))
    if callable(push):
        s.add_force(nd.PointForce(b, force=lambda t, st: ca.vertcat(push(t), 0, 0), name="push"))
    elif push:
        s.add_force(nd.PointForce(b, force=(push, 0, 0), name="push"))
    if normal_push is not None:
        s.add_force(nd.PointForce(b, force=lambda t, st: ca.vertcat(0, 0, -normal_push(t)),
                                  name="down"))
    if driven is not None:
        s.add_joint(nd.TranslationDriver(slide, driven, name="drive"))
    s.add_force(nd.LuGreFriction(slide, MU_S, MU_K, U_S, SIGMA0, SIGMA1, sigma2, name="friction"))
    return s


@pytest.mark.parametrize("push", [0.5, 2.0, 2.5])
def test_sticks_below_breakaway_with_presliding_deflection(push):
    """A push raised over 0.1 s to below mu_s m g leaves the block at rest; the bristles hold
    F: z = F / (sigma0 m g), and the block's displacement is of that order. (LuGre's
    breakaway depends on the load's rate: applied at once, a push above ~0.7 mu_s m g breaks
    away here, at this ramp one above ~0.9 mu_s m g, the same at h = 1e-3 and 5e-5: the
    presliding creep reaches the Stribeck velocity.)"""
    res = nd.simulate(_block(lambda t: push * ca.fmin(t / 0.1, 1.0)), 0.3, h=1e-3, progress=False)
    assert res.success
    x, v = res.position("block")[:, 0], res.velocity("block")[:, 0]
    assert abs(v[-1]) < 1e-9
    z_rest = push / (SIGMA0 * G)
    assert res.friction_state("friction")[-1] == pytest.approx(z_rest, rel=1e-9)
    assert z_rest <= x[-1] < 5 * z_rest
    assert res.friction_force("friction")[-1] == pytest.approx(-push, rel=1e-9)
    assert res.friction_normal_force("friction")[-1] == pytest.approx(G, rel=1e-9)


@pytest.mark.parametrize("push", [3.5, 5.0])
def test_slides_above_breakaway_at_the_kinetic_rate(push):
    """Above mu_s m g it slides; once past the Stribeck range, a = (F - mu_k m g) / m."""
    res = nd.simulate(_block(push), 0.4, h=1e-3, progress=False)
    assert res.success
    t, v = res.t, res.velocity("block")[:, 0]
    late = t >= 0.2
    slope = np.polyfit(t[late], v[late], 1)[0]
    assert slope == pytest.approx(push - MU_K * G, rel=1e-6)


@pytest.mark.parametrize("speed", [2e-4, 1e-3, 3e-3, 0.05])
def test_steady_friction_follows_the_stribeck_curve(speed):
    """Dragged at constant speed u, the friction settles at m g (g(u) + sigma2 u)."""
    sigma2 = 0.4
    res = nd.simulate(_block(0.0, sigma2=sigma2, driven=lambda t: speed * t), 0.3, h=1e-3,
                      progress=False)
    assert res.success
    stribeck = MU_K + (MU_S - MU_K) * np.exp(-(speed / U_S) ** 2) + sigma2 * speed
    assert -res.friction_force("friction")[-1] == pytest.approx(G * stribeck, rel=1e-6)


@pytest.mark.parametrize("scheme, at", [("euler", 0.0), ("midpoint", 0.5)])
def test_normal_force_is_the_steps_own(scheme, at):
    """A downward load A sin(w t) on top of gravity: with the normal force taken from each
    step's own reaction the velocity follows v(t) = [(F - mu_k m g) t - mu_k A (1 - cos w t)/w]
    / m to O(h) (a normal force lagged by a step would also be O(h): the check is that each
    step's f_n is the reaction of that step, which balances m g + A sin(w t) where the step
    applies the load: at its start (scheme "euler") or its midpoint ("midpoint"))."""
    A, w, push = 3.0, 20.0, 5.0
    h = 5e-4
    res = nd.simulate(_block(push, normal_push=lambda t: A * ca.sin(w * t)), 0.3, h=h,
                      progress=False, scheme=scheme)
    assert res.success
    t1 = res.t[1:]
    f_n = res.friction_normal_force("friction")
    np.testing.assert_allclose(f_n, G + A * np.sin(w * (res.t[:-1] + at * h)), rtol=1e-9)
    t, v = res.t, res.velocity("block")[:, 0]
    late = t > 0.1   # past the breakaway transient
    closed = push * t - MU_K * (G * t + A * (1 - np.cos(w * t)) / w)
    offset = np.mean((v - closed)[late])
    assert np.abs(v - closed - offset)[late].max() < 2 * h * A * w
    assert len(t1) == len(f_n)


def _wheel(spin, radius=0.01, torque=0.0):
    """A disk on a horizontal revolute axle (x), gravity across the axle."""
    s = nd.System(gravity=(0, 0, -G))
    wheel = s.add_body("wheel", 2.0, (0.01, 0.005, 0.005), angular_velocity=(spin, 0, 0))
    axle = s.add_joint(nd.Revolute(s.ground, wheel, (0, 0, 0), (1, 0, 0), name="axle"))
    if torque:
        s.add_force(nd.PointForce(wheel, torque=(torque, 0, 0), name="motor"))
    s.add_force(nd.LuGreFriction(axle, MU_S, MU_K, 1e-2, 1e4, 100.0, 0.0, radius=radius,
                                 name="bearing"))
    return s


def test_revolute_spin_down_at_mu_k_m_g_r():
    """The bearing's torque mu_k m g d/2 decelerates the wheel at mu_k m g r / I until it stops."""
    r = 0.01
    res = nd.simulate(_wheel(5.0, radius=r), 0.4, h=1e-3, progress=False)
    assert res.success
    w = res.angular_velocity("wheel")[:, 0]
    t = res.t
    rate = MU_K * 2.0 * G * r / 0.01
    moving = (t > 0.05) & (t < 0.3)
    assert np.polyfit(t[moving], w[moving], 1)[0] == pytest.approx(-rate, rel=1e-6)
    assert res.friction_normal_force("bearing")[-1] == pytest.approx(2.0 * G, rel=1e-9)


def test_revolute_holds_below_breakaway_torque():
    """A motor torque below mu_s m g r does not turn the wheel beyond presliding."""
    r = 0.01
    torque = 0.8 * MU_S * 2.0 * G * r
    res = nd.simulate(_wheel(0.0, radius=r, torque=torque), 0.3, h=1e-3, progress=False)
    assert res.success
    assert abs(res.angular_velocity("wheel")[-1, 0]) < 1e-9
    assert res.friction_force("bearing")[-1] == pytest.approx(-torque, rel=1e-9)


def test_friction_never_does_positive_work():
    res = nd.simulate(_block(5.0), 0.3, h=1e-3, progress=False)
    work = res.energy_ledger()["work:friction"].to_numpy()
    assert np.all(np.diff(work) <= 1e-12)


def test_result_keeps_friction_through_save_and_load(tmp_path):
    res = nd.simulate(_block(2.0), 0.05, h=1e-3, progress=False)
    back = nd.Result.load(res.save(tmp_path / "run"))
    np.testing.assert_array_equal(back.friction_force("friction"), res.friction_force("friction"))
    np.testing.assert_array_equal(back.friction_state("friction"), res.friction_state("friction"))


def test_bad_friction_data_is_named():
    s = nd.System()
    b = s.add_body("b", 1.0, (1, 1, 1))
    hinge = s.add_joint(nd.Revolute(s.ground, b, (0, 0, 0), (1, 0, 0), name="hinge"))
    ball = nd.Spherical(s.ground, b, (0, 0, 0), name="ball")
    s.add_force(nd.LuGreFriction(hinge, 0.1, 0.2, -1.0, 0.0, -1.0, 0.0, name="fr"))
    s.add_force(nd.LuGreFriction(ball, 0.1, 0.1, 1.0, 1.0, 1.0, 0.0, name="fb"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    for part in ("mu_static (0.1) must be >= mu_kinetic", "stribeck_velocity", "sigma0",
                 "sigma1", "radius", "needs a Revolute, Prismatic or Cylindrical joint"):
        assert part in text, part


@pytest.mark.slow
def test_stick_slip_converges_to_an_independent_integrator():
    """The LuGre paper's stick-slip demonstration (problems/stick_slip.py) against scipy's
    Radau on the same ODE: the block's path converges at first order in h, and the share of
    time stuck agrees."""
    from problems import stick_slip as ss
    errors = []
    for h in (2e-3, 1e-3):
        res = nd.simulate(ss.build(), 10.0, h=h, progress=False)   # first slip near 7.5 s
        assert res.success
        x, v, _, _ = ss.reference(res.t)
        errors.append(np.abs(res.position("block")[:, 0] - x).max())
        assert abs(ss.stick_fraction(res.velocity("block")[:, 0]) - ss.stick_fraction(v)) < 2e-3
    assert 1.8 < errors[0] / errors[1] < 2.3
    assert errors[1] < 1e-3


def test_a_stepper_loop_records_what_simulate_records():
    """Stepper.step() and simulate() give the same friction data (the memory each step
    sets for itself is kept per step)."""
    res = nd.simulate(_block(3.5), 0.02, h=1e-3, progress=False)
    stepper = nd.Stepper(_block(3.5), 1e-3)
    while stepper.t < 0.02 - 1e-12:
        stepper.step(0.02)
    mine = stepper.result()
    for lookup in ("friction_force", "friction_normal_force", "friction_state"):
        np.testing.assert_array_equal(getattr(mine, lookup)("friction"),
                                      getattr(res, lookup)("friction"))


def test_output_times_keep_the_friction_of_the_steps_ending_there():
    res = nd.simulate(_block(3.5), 0.02, h=1e-3, progress=False)
    sampled = nd.simulate(_block(3.5), 0.02, h=1e-3, progress=False, t_eval=[0.005, 0.01, 0.02])
    kept = [np.argmin(abs(res.t - t)) for t in sampled.t]
    # t_eval lands its steps on the times exactly: h differs from 1e-3 by round-off
    np.testing.assert_allclose(sampled.friction_state("friction"),
                               res.friction_state("friction")[kept], rtol=1e-12)
    np.testing.assert_allclose(sampled.friction_force("friction"),
                               res.friction_force("friction")[np.array(kept[1:]) - 1], rtol=1e-12)
