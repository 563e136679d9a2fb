"""Seed 003's manipulator (problems/manipulator.py): the programmed path is followed in every
variant; statics, inverse kinematics and energy against independent computations."""
import casadi as ca
import numpy as np
import pytest
from scipy.optimize import root

import nlpdyn as nd
from problems import manipulator as m

G = m.GRAVITY
H = 2e-3
# the stepper's joint-separation check: 1e-4 of the model's size (its reach, ~1.1 m)
PATH_TOL = 1e-4 * 1.1


def _friction(friction):
    if friction and not m.friction_available():
        pytest.skip("nd.LuGreFriction is not in this nlpdyn yet")


@pytest.mark.slow
@pytest.mark.parametrize("flexible_base,flexible_link,friction", [
    pytest.param(*v, id=m.variant_name(*v),
                 marks=[pytest.mark.slow] if v[2] and (v[0] or v[1]) else [])   # ~10 ms a step
    for v in m.VARIANTS])
def test_programmed_path_is_followed_in_every_variant(flexible_base, flexible_link, friction):
    _friction(friction)
    res = m.run(flexible_base, flexible_link, friction, t_end=0.3, h=H)
    assert res.success, res.message
    error = m.path_error(res)
    assert error.max() <= PATH_TOL
    assert m.constraint_violation(res).max() <= PATH_TOL
    # the energy ledger closes with friction's and the supports' work too
    assert m.ledger_closure(res)[0] <= 1e-12


def test_quintic_boundary_conditions():
    """Eq. 28: s(0) = 0, s(1) = 1, s' and s'' zero at both ends (CasADi derivatives), and the
    path passes the corners at whole seconds."""
    tau = ca.SX.sym("tau")
    s = m.quintic(tau)
    ds, dds = ca.gradient(s, tau), ca.hessian(s, tau)[0]
    f = ca.Function("f", [tau], [s, ds, dds])
    for end, value in ((1e-12, 0.0), (1 - 1e-12, 1.0)):
        out = [float(x) for x in f(end)]
        assert out[0] == pytest.approx(value, abs=1e-11)
        assert abs(out[1]) <= 1e-10 and abs(out[2]) <= 1e-10
    assert float(f(0.5)[1]) == pytest.approx(15 / 8)        # peak speed 30/16 of Delta s / Delta t
    corners = m.programmed_point(np.arange(5.0))
    expected = m.PLANE_ORIGIN + np.vstack([m.CORNERS, m.CORNERS[:1]]) @ m.PLANE_ROTATION[:, 1:].T
    assert np.allclose(corners, expected, atol=1e-15)


def test_statics_against_hand_computation():
    """E held at A: the reactions equal the statics computed by hand. Ideal joints carry no
    moment about their axes, so the two pitch joints' moment balances give the programmed
    constraint's vertical force F = m2 g / 2 + (m3 + m4 + m5) g (the forearm is horizontal),
    and each joint carries the weight outboard of it minus F."""
    a = m.programmed_point(0.0)
    res = nd.simulate(m.build(path=lambda t: ca.DM(a)), t_end=0.2, h=H, progress=False)
    assert res.success
    mass = m.masses()
    F = mass["link2"] * G / 2 + (mass["link3"] + mass["link4"] + mass["link5"]) * G
    outboard = {"J1": ("link1", "link2", "link3", "link4", "link5"),
                "J2": ("link2", "link3", "link4", "link5"), "J3": ("link3", "link4", "link5"),
                "J4": ("link4", "link5"), "J5": ("link5",)}
    assert res.reaction_force("path")[-1] == pytest.approx([0, 0, F], abs=1e-9 * F)
    # its moment (about E, along y) from the elbow's balance: the weights of the forearm
    # (centre L3/2 beyond the elbow), carriage (at E - 0.1 m) and tool (at E - 0.05 m)
    # against F at E, with x_E - x_elbow = 1.1 m - L2 cos(psi_2) at A
    psi2 = np.arcsin((a[2] - (m.Z0 + m.H1) + 0.1) / m.L2)
    lever = a[0] - m.L2 * np.cos(psi2)
    moment = lever * F - G * (mass["link3"] * m.L3 / 2 + mass["link4"] * (lever - 0.1)
                              + mass["link5"] * (lever - 0.05))
    assert res.reaction_torque("path")[-1] == pytest.approx([0, moment, 0], abs=1e-9 * F)
    for joint in ("J2", "J3"):          # ideal hinges: no moment about their axes (y)
        assert abs(res.reaction_torque(joint)[-1, 1]) <= 1e-9 * F
    forces = m.joint_forces(res)
    for joint, bodies in outboard.items():
        expected = sum(mass[b] for b in bodies) * G - F
        assert res.reaction_force(joint)[-1] == pytest.approx([0, 0, expected], abs=1e-9 * F)
        axial, normal = forces[joint][0][-1], forces[joint][1][-1]
        if joint == "J1":       # vertical axis: all of it axial
            assert axial == pytest.approx(expected, rel=1e-9) and normal <= 1e-9 * F
        else:                   # horizontal axes: all of it normal
            assert normal == pytest.approx(abs(expected), rel=1e-9) and abs(axial) <= 1e-9 * F


def _fk(q):
    """E and the tool's x axis from joint coordinates, written out from the geometry."""
    phi, psi2, psi3, x4, x5 = q
    u = np.array([np.cos(phi), np.sin(phi), 0.0])
    v = np.array([-np.sin(phi), np.cos(phi), 0.0])
    z = np.array([0.0, 0.0, 1.0])
    f = np.cos(psi2 + psi3) * u + np.sin(psi2 + psi3) * z
    n = np.cross(f, v)
    elbow = np.array([0, 0, m.Z0 + m.H1]) + m.L2 * (np.cos(psi2) * u + np.sin(psi2) * z)
    e = elbow + (m.L3 + x4) * f + x5 * v + m.TOOL_TIP[0] * f + m.TOOL_TIP[2] * n
    return e, f


def test_rigid_joint_coordinates_against_scipy_inverse_kinematics():
    """The simulated joint coordinates of the rigid chain solve the five programmed equations
    (scipy root on the forward kinematics) at several times."""
    res = m.run(t_end=1.0, h=H)
    q = m.joint_coordinates(res)
    violation = m.constraint_violation(res).max()
    guess = np.array([0.1, 0.3, -0.2, 0.0, 0.0])
    for t in (0.25, 0.5, 0.75, 1.0):
        k = int(np.argmin(np.abs(res.t - t)))
        target = m.programmed_point(res.t[k])

        def equations(x):
            e, f = _fk(x)
            return np.r_[e - target, f[2], f[1]]
        sol = root(equations, guess, tol=1e-14)
        assert sol.success
        # angles within the violation over the arm's lever (0.3 m at least), lengths within it
        assert q[k, :3] == pytest.approx(sol.x[:3], abs=10 * violation / 0.3)
        assert q[k, 3:] == pytest.approx(sol.x[3:], abs=10 * violation)


def test_energy_balance_rigid():
    """The ledger closes, and from corner B to corner C (both at rest) the programmed
    constraint's work is the potential energy gained: the forearm, carriage and tool rise by
    0.3 m, link2's centre of mass by 0.15 m (ideal joints do no work but the O(h) of the step)."""
    res = m.run(t_end=2.0, h=H)
    closure, ledger = m.ledger_closure(res)
    assert closure <= 1e-12
    mass = m.masses()
    gained = (mass["link3"] + mass["link4"] + mass["link5"]) * G * 0.3 + mass["link2"] * G * 0.15
    k1, k2 = (int(np.argmin(np.abs(res.t - t))) for t in (1.0, 2.0))
    work = ledger["work:path"].to_numpy()
    assert work[k2] - work[k1] == pytest.approx(gained, rel=1e-3)
    assert ledger.total.iloc[k2] - ledger.total.iloc[k1] == pytest.approx(gained, rel=1e-3)
