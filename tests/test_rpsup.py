"""Seed 003's RPSUP loop (problems/rpsup.py): the programmed path is followed in every variant;
kinematics, statics and energy against independent computations."""
import casadi as ca
import numpy as np
import pytest
from scipy.optimize import root

import nlpdyn as nd
from problems import rpsup as r
from problems.manipulator import ledger_closure

G = r.GRAVITY
H = 2e-3
PATH_TOL = 1e-4 * 0.5       # the stepper's joint-separation check, 1e-4 of the loop's size


@pytest.mark.slow
@pytest.mark.parametrize("flexible_base,flexible_link,friction", [
    pytest.param(*v, id=r.variant_name(*v),
                 marks=[pytest.mark.slow] if v[2] and (v[0] or v[1]) else [])   # ~10 ms a step
    for v in r.VARIANTS])
def test_programmed_path_is_followed_in_every_variant(flexible_base, flexible_link, friction):
    if friction and not r.friction_available():
        pytest.skip("nd.LuGreFriction is not in this nlpdyn yet")
    res = r.run(flexible_base, flexible_link, friction, t_end=0.3, h=H)
    assert res.success, res.message
    assert r.path_error(res).max() <= PATH_TOL
    assert r.constraint_violation(res).max() <= PATH_TOL
    if not flexible_base:      # R keeps E in the plane
        assert np.abs(r.out_of_plane(res)).max() <= PATH_TOL
    # the energy ledger closes with friction's and the supports' work too
    assert ledger_closure(res)[0] <= 1e-12


def _pose(y, z):
    """(psi, x, z_slider) of the rigid loop with E at (y, z) of {P}, by scipy root on the
    loop's position equations written out here."""
    e_target = r.PLANE_ORIGIN + r.PLANE_ROTATION @ np.array([0.0, y, z])
    guide = r.PLANE_ORIGIN + r.PLANE_ROTATION @ np.array([r.GUIDE[0], r.GUIDE[1], 0.0])

    def equations(u):
        psi, x, zs = u
        d = r.PLANE_ROTATION @ np.array([0.0, np.cos(psi), np.sin(psi)])
        e = r.PLANE_ORIGIN + (r.L1 + x) * d
        q = guide + np.array([0.0, 0.0, zs])
        return np.r_[(e - e_target)[1:], np.linalg.norm(e - q) - r.LC]
    sol = root(equations, [0.5, 0.1, -0.2], tol=1e-13)
    assert np.abs(equations(sol.x)).max() <= 1e-12
    return sol.x


def test_rigid_joint_coordinates_against_scipy():
    res = r.run(t_end=1.0, h=H)
    q = r.joint_coordinates(res)
    violation = r.constraint_violation(res).max()
    for t in (0.0, 0.3, 0.6, 1.0):
        k = int(np.argmin(np.abs(res.t - t)))
        y, z = r.polygon_path(res.t[k], r.CORNERS)
        assert q[k] == pytest.approx(_pose(y, z), abs=10 * violation / 0.1)


def test_statics_held_at_a():
    """E held at A: the vertical guide carries no vertical force, so the universal joint lifts
    the slider by its weight, and the ground (R) and the programmed constraint carry the
    whole weight."""
    a = r.CORNERS[0]
    res = nd.simulate(r.build(path=lambda t: ca.DM(a)), t_end=0.2, h=H, progress=False)
    assert res.success
    mass = r.masses()
    total = sum(mass.values()) * G
    assert res.reaction_force("U")[-1, 2] == pytest.approx(mass["link4"] * G, rel=1e-9)
    assert abs(res.reaction_force("P_slider")[-1, 2]) <= 1e-9 * total
    lift = res.reaction_force("R")[-1, 2] + res.reaction_force("path")[-1, 2]
    assert lift == pytest.approx(total, rel=1e-9)


def _potential(y, z):
    psi, x, zs = _pose(y, z)
    mass = r.masses()
    ez = r.PLANE_ORIGIN[2] + (r.L1 + x) * np.sin(psi)
    heights = {"link1": r.PLANE_ORIGIN[2] + np.sin(psi) * r.L1 / 2,
               "link2": ez - np.sin(psi) * r.L2 / 2, "link3": (ez + zs) / 2, "link4": zs}
    return sum(mass[k] * G * h for k, h in heights.items())


def test_energy_balance_rigid():
    """The ledger closes; from corner B to C (both at rest) the programmed constraint's work
    is the potential energy gained between the two poses solved by scipy."""
    res = r.run(t_end=2.0, h=H)
    closure, ledger = ledger_closure(res)
    assert closure <= 1e-12
    gained = _potential(*r.CORNERS[2]) - _potential(*r.CORNERS[1])
    k1, k2 = (int(np.argmin(np.abs(res.t - t))) for t in (1.0, 2.0))
    work = ledger["work:path"].to_numpy()
    assert work[k2] - work[k1] == pytest.approx(gained, rel=2e-3)
