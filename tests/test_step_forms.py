"""The step itself: closed-form motion on a prismatic incline, and agreement of every
form and solver of the per-step program (direct, QP plugin, IPOPT Gauss, seed's explicit)."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import slider_crank

G = 9.81


def incline(angle=0.4):
    s = nd.System(gravity=(0, 0, -G))
    axis = np.array([np.cos(angle), 0.0, -np.sin(angle)])     # pointing downhill
    block = s.add_body("block", mass=2.0, inertia=(0.1, 0.2, 0.3), position=(0.3, 0.1, 1.0))
    s.add_joint(nd.Prismatic(s.ground, block, point=(0.3, 0.1, 1.0), axis=axis, name="slide"))
    return s, axis


def test_incline_is_the_default_midpoints_exact_solution():
    """Under a constant projected force the default midpoint step is exact: s = a t^2 / 2
    and v = a t at every step (to round-off), no motion off the axis, no rotation."""
    angle, h, n = 0.4, 1e-3, 500
    s, axis = incline(angle)
    res = nd.simulate(s, t_end=n * h, h=h, progress=False)
    a = G * np.sin(angle)
    travel = (res.position("block") - res.position("block")[0]) @ axis
    speed = res.velocity("block") @ axis
    assert np.max(np.abs(speed - a * res.t)) <= 1e-12 * (1 + n * h * a)
    assert np.max(np.abs(travel - 0.5 * a * res.t**2)) <= 1e-12
    off_axis = (res.position("block") - res.position("block")[0]) - np.outer(travel, axis)
    assert np.max(np.abs(off_axis)) <= 1e-12
    assert np.max(np.abs(res.angular_velocity("block"))) <= 1e-12


def test_incline_is_euler_exact_discrete_closed_form():
    """The seed's semi-implicit Euler under a constant projected force: v_n = n h a and
    s_n = a h^2 n (n + 1) / 2 exactly (identity tier)."""
    angle, h, n = 0.4, 1e-3, 500
    s, axis = incline(angle)
    res = nd.simulate(s, t_end=n * h, h=h, scheme="euler", progress=False)
    a = G * np.sin(angle)
    steps = np.arange(len(res.t))
    travel = (res.position("block") - res.position("block")[0]) @ axis
    speed = res.velocity("block") @ axis
    assert np.max(np.abs(speed - steps * h * a)) <= 1e-12 * (1 + n * h * a)
    assert np.max(np.abs(travel - a * h**2 * steps * (steps + 1) / 2)) <= 1e-12
    # no motion off the axis, no rotation
    off_axis = (res.position("block") - res.position("block")[0]) - np.outer(travel, axis)
    assert np.max(np.abs(off_axis)) <= 1e-12
    assert np.max(np.abs(res.angular_velocity("block"))) <= 1e-12


@pytest.mark.parametrize("h", [2e-3, 1e-3, 5e-4])
def test_incline_converges_to_continuous_closed_form_with_euler(h):
    """s(t) = a t^2 / 2; the error of the seed's semi-implicit Euler is exactly a h t / 2
    (the default midpoint's is none: test_incline_is_the_default_midpoints_exact_solution)."""
    angle, t_end = 0.4, 0.5
    s, axis = incline(angle)
    res = nd.simulate(s, t_end=t_end, h=h, scheme="euler", progress=False)
    a = G * np.sin(angle)
    travel = (res.position("block") - res.position("block")[0]) @ axis
    err = travel[-1] - 0.5 * a * t_end**2
    assert err == pytest.approx(0.5 * a * h * t_end, rel=1e-9)


def test_incline_reaction_is_normal_force():
    """The prismatic joint carries the normal component of gravity: m g cos(angle)."""
    angle = 0.4
    s, axis = incline(angle)
    res = nd.simulate(s, t_end=0.05, h=1e-3, progress=False)
    force = res.reaction_force("slide")          # on the child (the block)
    normal = np.array([np.sin(angle), 0.0, np.cos(angle)])
    assert np.allclose(force, 2.0 * G * np.cos(angle) * normal, atol=1e-9)
    assert np.allclose(res.reaction_force("slide", body="ground"), -force, atol=1e-12)


def _run(system, n_steps, h, **options):
    """States [t, q, v, mu] after each step; every step must be taken by the requested
    solver at the first attempt (no fallback hiding a failure)."""
    stepper = nd.Stepper(system, h=h, **options)
    expected = {"qp": options.get("qp_solver", "qpoases"), "ipopt": "ipopt"}.get(
        options.get("solver"), None)
    states = []
    for _ in range(n_steps):
        info = stepper.step()
        assert info.retries == 0
        if options.get("form") == "explicit":
            assert info.solver == "ipopt-explicit"
        elif options.get("step_control") == "nlp" and options.get("nlp_method") == "ipopt":
            assert info.solver == "ipopt"
        elif expected:
            assert info.solver == expected
        states.append(np.r_[stepper.t, stepper.q, stepper.v, info.mu])
    return np.array(states)


@pytest.mark.slow
@pytest.mark.parametrize("scheme, options", [
    ("euler", dict(solver="qp", qp_solver="qpoases")),
    ("euler", dict(solver="qp", qp_solver="qrqp")),
    ("euler", dict(solver="ipopt")),
    ("euler", dict(form="explicit")),
    ("midpoint", dict(solver="qp", qp_solver="qpoases")),
    ("midpoint", dict(solver="qp", qp_solver="qrqp")),
])
def test_fixed_step_forms_agree_with_direct_solve(scheme, options):
    """Every fixed-h solver and the seed's explicit form give the same steps as the
    closed-form Gauss solve (solver-limited tier: IPOPT tol 1e-9 on impulses of order 1e-2).
    IPOPT and the explicit form are the seed's scheme's ("euler") alone."""
    n, h = 200, 1e-3
    ref = _run(slider_crank.build(), n, h, scheme=scheme)
    other = _run(slider_crank.build(), n, h, scheme=scheme, **options)
    nq = 21
    states_ref, states = ref[:, :1 + nq + 18], other[:, :1 + nq + 18]
    assert np.max(np.abs(states - states_ref)) <= 1e-7
    mu_scale = np.abs(ref[:, 1 + nq + 18:]).max()
    assert np.max(np.abs(other[:, 1 + nq + 18:] - ref[:, 1 + nq + 18:])) <= 1e-6 * mu_scale


def test_variable_step_gauss_and_explicit_agree():
    """The seed's scheme (h a bounded NLP variable, unpolished) gives the same steps in both
    forms: per step, the states differ only by what the two interior points' different h
    (barrier offsets from the bound) explain: |dq| <= |dh| max|qdot| + solver tolerance."""
    n = 100
    opts = dict(step_control="nlp", polish=False, nlp_method="ipopt")
    gauss = _run(slider_crank.build(), n, (1e-4, 1e-3), **opts)
    explicit = _run(slider_crank.build(), n, (1e-4, 1e-3), form="explicit", **opts)
    h_g, h_e = np.diff(np.r_[0, gauss[:, 0]]), np.diff(np.r_[0, explicit[:, 0]])
    assert np.all(h_g > 0.99 * 1e-3) and np.all(h_e > 0.99 * 1e-3)
    drift = np.cumsum(np.abs(h_g - h_e)) * np.abs(gauss[:, 22:40]).max()
    q_diff = np.abs(gauss[:, 1:22] - explicit[:, 1:22]).max(axis=1)
    assert np.all(q_diff <= drift + 1e-8)


@pytest.mark.parametrize("method", ["bisection", "ipopt"])
def test_free_flight_nlp_takes_the_largest_step_and_matches_fixed_h(method):
    """With ideal joints only, the tie-break makes the seed's scheme take h_max every step
    (IPOPT's, polished onto the bound, and the bisection's, whose objective decreases at
    h_max): it reproduces the fixed-h run of its semi-implicit Euler to round-off."""
    n = 100
    variable = _run(slider_crank.build(), n, (1e-4, 1e-3), step_control="nlp", nlp_method=method)
    fixed = _run(slider_crank.build(), n, 1e-3, scheme="euler")
    assert np.allclose(np.diff(np.r_[0.0, variable[:, 0]]), 1e-3, rtol=0, atol=1e-15)
    assert np.max(np.abs(variable[:, 1:40] - fixed[:, 1:40])) <= 1e-12


def test_adaptive_without_gaps_is_fixed_at_h_max():
    res = nd.simulate(slider_crank.build(), t_end=0.1, h=(1e-4, 1e-3), progress=False)
    assert res.info["step_control"] == "adaptive"
    assert np.allclose(res.h, 1e-3, rtol=0, atol=1e-15)


def parallelogram(angle=0.5):
    """Four revolutes about Y on a parallelogram linkage: 20 equations, 17 independent."""
    s = nd.System(gravity=(0, 0, -G))
    down = 0.5 * np.array([np.sin(angle), 0, -np.cos(angle)])
    left = s.add_body("left", 1.0, (0.02, 0.02, 1e-3), position=down / 2,
                      orientation=nd.rotations.from_axis_angle((0, 1, 0), -angle))
    right = s.add_body("right", 1.0, (0.02, 0.02, 1e-3), position=(1, 0, 0) + down / 2,
                       orientation=nd.rotations.from_axis_angle((0, 1, 0), -angle))
    coupler = s.add_body("coupler", 2.0, (1e-3, 0.2, 0.2), position=(0.5, 0, 0) + down)
    s.add_joint(nd.Revolute(s.ground, left, (0, 0, 0), (0, 1, 0)))
    s.add_joint(nd.Revolute(s.ground, right, (1, 0, 0), (0, 1, 0)))
    s.add_joint(nd.Revolute(left, coupler, down, (0, 1, 0)))
    s.add_joint(nd.Revolute(right, coupler, (1, 0, 0) + down, (0, 1, 0)))
    return s


@pytest.mark.slow
@pytest.mark.parametrize("options, order", [
    ({}, 2),
    (dict(scheme="euler", solver="qp", qp_solver="qpoases"), 1),
])
def test_redundant_joints(options, order):
    """Redundant constraints (a parallelogram of revolutes) are solved, by the default
    midpoint's direct solve and by the QP plugin in the seed's semi-implicit Euler: the
    coupler only translates, and the energy error is second order with the midpoint, first
    order with the seed's."""
    cs = parallelogram().compile()
    q0, _ = cs.initial_state()
    Pi = np.asarray(cs.velocity_jacobian(q0, 0.0))
    assert Pi.shape == (20, 18) and np.linalg.matrix_rank(Pi, tol=1e-9) == 17
    res = nd.simulate(parallelogram(), t_end=1.0, h=1e-3, progress=False, **options)
    assert res.success and res.stats.retries.sum() == 0
    p = res.orientation("coupler")
    assert np.abs(p[:, 1:]).max() <= 1e-9          # no rotation of the coupler
    half = nd.simulate(parallelogram(), t_end=1.0, h=5e-4, progress=False, **options)
    ratio = np.ptp(res.energy) / np.ptp(half.energy)               # energy error O(h^order)
    assert 0.85 * 2**order < ratio < 1.15 * 2**order, ratio
