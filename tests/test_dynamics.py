"""Reference checks of the stepper: closed forms, invariants, an independent scipy integrator,
and the IFToMM slider-crank."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import nlpdyn as nd
from problems import free_top, pendulum, slider_crank, spherical_pendulum


def _ratios(values):
    values = np.asarray(values)
    return values[:-1] / values[1:]


# ---------------------------------------------------------------- free asymmetric body
@pytest.fixture(scope="module")
def free_runs():
    """The seed's semi-implicit Euler (scheme "euler"); the default midpoint's free top is
    checked in test_midpoint.py."""
    return {h: nd.simulate(free_top.build(), t_end=2.0, h=h, scheme="euler", progress=False)
            for h in (2e-3, 1e-3, 5e-4)}


@pytest.mark.slow
def test_free_body_invariants_drift_first_order_with_euler(free_runs):
    """Torque-free: global angular momentum and energy are invariants; the seed's
    semi-implicit Euler with the explicit gyroscopic term drifts O(h) over a fixed time:
    halving h halves it."""
    L_drift, E_drift = [], []
    for h, res in free_runs.items():
        L = free_top.angular_momentum_global(res)
        E = free_top.kinetic_energy(res)
        L_drift.append(np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(L[0]))
        E_drift.append(np.abs(E - E[0]).max() / E[0])
        assert np.allclose(E, res.energy, rtol=1e-12)   # library energy = numpy energy
    assert np.all(np.abs(_ratios(L_drift) - 2) < 0.3)
    assert np.all(np.abs(_ratios(E_drift) - 2) < 0.3)


@pytest.mark.slow
def test_free_body_norm_error_is_second_order_with_euler(free_runs):
    """The seed's semi-implicit Euler: its linearised normalisation row makes
    |p1|^2 = 1 + h^2 |pdot|^2 exactly, with |pdot|^2 = |w1'|^2 / (4 n) + a^2 n, n = |p0|^2,
    a = -(n - 1) / (2 h n): so |p| - 1 = O(h^2 |w'|^2 / 8) every step, removed again on the
    next (identity tier)."""
    for h, res in free_runs.items():
        n = np.sum(res.orientation("top") ** 2, axis=1)
        w2 = np.sum(res.angular_velocity("top") ** 2, axis=1)
        a = -(n[:-1] - 1) / (2 * h * n[:-1])
        pdot2 = w2[1:] / (4 * n[:-1]) + a**2 * n[:-1]
        assert np.allclose(n[1:] - 1, h**2 * pdot2, rtol=1e-9, atol=1e-15)
        assert np.max(np.sqrt(n) - 1) <= 1.01 * h**2 * w2.max() / 8


def test_free_body_centre_moves_uniformly():
    res = nd.simulate(free_top.build(), t_end=0.5, h=1e-3, progress=False)
    assert np.allclose(res.position("top"), np.outer(res.t, (0.1, -0.2, 0.05)), atol=1e-12)


# ---------------------------------------------------------------- planar pendulum vs scipy
@pytest.mark.parametrize("scheme, order", [("euler", 1), (None, 2)])
def test_pendulum_matches_scipy_at_the_schemes_order(scheme, order):
    """The pendulum through a Revolute joint against the 1-DOF ODE solved by scipy at
    rtol 1e-10: the angle error is first order in h with the seed's "euler", second order
    with the default "midpoint" (slope measured over three h)."""
    t_end = 1.0
    ref = solve_ivp(pendulum.reference_rhs(), (0, t_end), [0.0, 0.0], rtol=1e-10, atol=1e-12,
                    dense_output=True)
    errors = []
    hs = (2e-3, 1e-3, 5e-4)
    for h in hs:
        res = nd.simulate(pendulum.build(), t_end=t_end, h=h, scheme=scheme, progress=False)
        errors.append(np.abs(pendulum.angle(res) - ref.sol(res.t)[0]).max())
    slopes = np.log(_ratios(errors)) / np.log(2)
    assert np.all(np.abs(slopes - order) < 0.15), slopes


def test_pendulum_reaction_matches_closed_form():
    """Pivot reaction on the bob = m a_cm - m g with a_cm from the scipy reference solution:
    for an inertia-free pendulum released horizontal, |F| = 3 m g sin(theta) radially."""
    res = nd.simulate(pendulum.build(inertia=1e-9), t_end=0.5, h=1e-4, progress=False)
    theta = pendulum.angle(res)[:-1]
    force = res.reaction_force("pivot")
    radial_in = -res.position("bob")[:-1] / np.linalg.norm(res.position("bob")[:-1], axis=1)[:, None]
    # tension = 3 m g sin(theta) (energy: v^2 = 2 g L sin(theta)); O(h) lag: the angle is the
    # step's start
    assert np.allclose(np.einsum("ni,ni->n", force, radial_in), 3 * 9.81 * np.sin(theta),
                       atol=3 * 9.81 * 1e-4 * 10)


# ---------------------------------------------------------------- spherical pendulum
def test_spherical_pendulum_invariants_with_euler():
    """Energy and the vertical angular momentum about the pivot: O(h) errors with the seed's
    semi-implicit Euler, no blow-up (the default midpoint's, O(h^2): test_midpoint.py)."""
    drifts = []
    for h in (1e-3, 5e-4):
        res = nd.simulate(spherical_pendulum.build(), t_end=2.0, h=h, scheme="euler",
                          progress=False)
        Lz = spherical_pendulum.vertical_angular_momentum(res)
        E = spherical_pendulum.energy(res)
        assert np.allclose(E, res.energy, rtol=0, atol=1e-12 * np.abs(E).max())
        drifts.append((np.abs(Lz - Lz[0]).max(), np.ptp(E)))
    (lz1, e1), (lz2, e2) = drifts
    assert 1.6 < lz1 / lz2 < 2.4 and 1.6 < e1 / e2 < 2.4
    assert lz1 < 0.05 * abs(Lz[0])


# ---------------------------------------------------------------- IFToMM slider-crank
@pytest.fixture(scope="module")
def crank_runs():
    """The default scheme, "midpoint"."""
    return {h: nd.simulate(slider_crank.build(), t_end=5.0, h=h, progress=False)
            for h in (1e-3, 5e-4)}


@pytest.mark.slow
def test_slider_crank_initial_velocities_projected(crank_runs):
    res = crank_runs[1e-3]
    ip = res.initial_projection
    assert ip["changed"] and ip["velocity_violation"] > 1.0   # Table 2 is inconsistent
    assert ip["position_violation"] < 1e-12                   # geometry is given consistently
    assert res.success


@pytest.mark.slow
def test_slider_crank_constraint_violation_bounded(crank_runs):
    """Violation is each step's own: the midpoint's joint rows ask the step's end to meet the
    constraints to O(h^3), and it does not accumulate."""
    v1 = crank_runs[1e-3].stats.constraint_violation
    v2 = crank_runs[5e-4].stats.constraint_violation
    assert 6.4 < v1.max() / v2.max() < 9.6                   # third order
    n = len(v1)
    assert v1[-n // 5:].max() <= 1.5 * v1[: n // 5].max()   # no growth over 5 s


def test_slider_crank_with_euler_energy_first_order_violation_second_order():
    """The seed's semi-implicit Euler, 2 s: frictionless, so energy is an invariant and the
    method's error in it is O(h); the violation is the one-step linearisation error, O(h^2)
    (the default midpoint's energy: test_midpoint.py)."""
    runs = [nd.simulate(slider_crank.build(), t_end=2.0, h=h, scheme="euler", progress=False)
            for h in (1e-3, 5e-4)]
    assert 1.7 < np.ptp(runs[0].energy) / np.ptp(runs[1].energy) < 2.3
    v1, v2 = (res.stats.constraint_violation.max() for res in runs)
    assert 3.2 < v1 / v2 < 4.8


@pytest.mark.slow
def test_slider_crank_slider_within_kinematic_limits(crank_runs):
    """The slider stays within the closed-form range (up to what the joint violation allows,
    amplified by dx/dL = L / x_min) and reaches both ends: the crank turns fully."""
    lo, hi = slider_crank.slider_limits()
    res = crank_runs[1e-3]
    x = res.position("slider")[:, 0]
    slack = 2 * res.stats.constraint_violation.max() * slider_crank.ROD_LENGTH / lo
    assert x.min() >= lo - slack and x.max() <= hi + slack
    assert x.min() <= lo + 1e-3 and x.max() >= hi - 1e-3
