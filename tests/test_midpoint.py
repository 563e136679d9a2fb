"""Moreau's midpoint scheme (``StepperSettings.scheme = "midpoint"``): second order in smooth
motion, against references not computed with the stepper: minimal-coordinate ODEs solved by
scipy's DOP853 at rtol 1e-13, closed forms and invariants."""
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import nlpdyn as nd
from problems import chain, free_top, pendulum, slider_crank, spherical_pendulum
from test_nonholonomic import M as SLED_MASS, T_END as SLED_T, W as SLED_TURN
from test_nonholonomic import build as build_sled, closed_form as sled_closed_form

HS = (2e-3, 1e-3, 5e-4)


def _ratios(values):
    values = np.asarray(values, dtype=float)
    return values[:-1] / values[1:]


def _run(system, t_end, h, scheme="midpoint", **settings):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the initial projection's and drift's notes
        return nd.simulate(system, t_end, h, scheme=scheme, progress=False, **settings)


# ---------------------------------------------------------------- planar chains vs DOP853
@pytest.mark.slow
@pytest.mark.parametrize("n_links", [2, 4])
def test_chain_angles_converge_second_order(n_links):
    """Released horizontal: the link angles at t = 1 s against DOP853 in minimal
    coordinates fall 3.5x or more per halving of h (measured 3.6-4.7x); the seed's Euler
    halves them."""
    t_end = 1.0
    ref = solve_ivp(chain.reference_rhs(n_links), (0, t_end), np.zeros(2 * n_links),
                    method="DOP853", rtol=1e-13, atol=1e-14).y[:n_links, -1]
    errors = {}
    for scheme in ("midpoint", "euler"):
        errors[scheme] = []
        for h in HS:
            res = _run(chain.build(n_links), t_end, h, scheme)
            wrapped = (chain.link_angles(res.q[-1], n_links) - ref + np.pi) % (2 * np.pi) - np.pi
            errors[scheme].append(np.abs(wrapped).max())
    assert np.all(_ratios(errors["midpoint"]) >= 3.5), errors
    assert np.all(_ratios(errors["euler"]) < 2.2), errors
    assert errors["midpoint"][1] < 0.3 * errors["euler"][1]


# ---------------------------------------------------------------- free asymmetric body
def _free_top_reference(t_end):
    return solve_ivp(free_top.reference_rhs(), (0, t_end), np.r_[0.4, 3.0, 0.6, 1, 0, 0, 0],
                     method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]


@pytest.mark.slow
def test_free_top_second_order_and_energy_kept():
    """Torque-free tumbling about the intermediate axis: body-frame angular velocity and
    Euler parameters at 2 s against Euler's equations by DOP853 (errors fall 4x per halving:
    measured 4.9e-6, 1.2e-6, 3.1e-7); the kinetic energy is kept to round-off (the
    gyroscopic term at the step's mean velocity does no work) and the angular momentum
    drifts at second order."""
    t_end = 2.0
    ref = _free_top_reference(t_end)
    errors, momentum = [], []
    for h in HS:
        res = _run(free_top.build(), t_end, h)
        state = np.r_[res.angular_velocity("top")[-1], res.orientation("top")[-1]]
        errors.append(np.abs(state - ref).max())
        E = free_top.kinetic_energy(res)
        assert np.ptp(E) < 1e-8 * E[0]
        L = free_top.angular_momentum_global(res)
        momentum.append(np.linalg.norm(L - L[0], axis=1).max())
    assert np.all(_ratios(errors) > 3.8), errors
    assert np.all(_ratios(momentum) > 3.5), momentum
    assert errors[0] < 1e-3 * 9.8e-3      # the seed's Euler: 9.8e-3 at h = 2e-3


def _heavy_top(m=1.0, arm=0.1, inertia=(2.5e-3, 2.5e-3, 4e-3), tilt=0.5236,
               spin=(1.0, -2.0, 50.0)):
    """A symmetric top on a ball joint at its tip (the origin), its centre ``arm`` up its
    axis (body z), tilted about X and spinning; and the reference: Euler's equations about
    the tip with gravity's moment, by DOP853 (body-frame angular velocity, Euler
    parameters)."""
    p0 = np.array([np.cos(tilt / 2), np.sin(tilt / 2), 0, 0])

    def rotation(p):
        e0, e = p[0], p[1:]
        skew = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
        return (2 * e0**2 - 1) * np.eye(3) + 2 * (np.outer(e, e) + e0 * skew), skew

    s = nd.System(gravity=(0, 0, -9.81))
    R, _ = rotation(p0)
    centre = R @ np.array([0, 0, arm])
    top = s.add_body("top", mass=m, inertia=inertia, position=centre, orientation=p0,
                     velocity=np.cross(R @ np.array(spin), centre), angular_velocity=spin)
    s.add_joint(nd.Spherical(s.ground, top, point=(0, 0, 0), name="tip"))
    lever = np.array([0, 0, arm])
    J = np.diag(inertia) + m * (arm**2 * np.eye(3) - np.outer(lever, lever))

    def rhs(t, x):
        w, p = x[:3], x[3:]
        R, skew = rotation(p)
        moment = np.cross(lever, R.T @ np.array([0, 0, -9.81 * m]))
        G = np.c_[-p[1:], -skew + p[0] * np.eye(3)]
        return np.r_[np.linalg.solve(J, moment - np.cross(w, J @ w)), 0.5 * G.T @ w]
    return s, rhs, np.r_[spin, p0]


@pytest.mark.slow
def test_heavy_top_second_order():
    """A top spinning at 50 rad/s on a ball joint under gravity (gyroscopic term, a joint
    and a load together): its state at 1 s against Euler's equations about the tip by
    DOP853 falls 3.8x or more per halving of h (measured 6.2e-3, 1.6e-3, 3.9e-4; the seed's
    Euler 0.10, 0.054, 0.028), its energy's range too."""
    errors, ranges = [], []
    for h in HS:
        system, rhs, x0 = _heavy_top()
        ref = solve_ivp(rhs, (0, 1.0), x0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
        res = _run(system, 1.0, h)
        errors.append(max(np.abs(res.angular_velocity("top")[-1] - ref[:3]).max() / 50,
                          np.abs(res.orientation("top")[-1] - ref[3:]).max()))
        ranges.append(np.ptp(res.energy))
    assert np.all(_ratios(errors) > 3.8), errors
    assert np.all(_ratios(ranges) > 3.5), ranges
    assert errors[1] < 0.1 * 0.054


# ---------------------------------------------------------------- spatial loops, invariants
@pytest.mark.slow
def test_slider_crank_energy_second_order():
    """The IFToMM slider-crank (ideal joints, frictionless): its energy's range over 2 s falls
    3.5x or more per halving of h and stays within 0.2 % at h = 1e-3 (the seed's Euler:
    first order, 3.7 % over 5 s); the slider's x at 2 s converges at least as fast."""
    ranges, x = [], []
    for h in HS:
        res = _run(slider_crank.build(), 2.0, h)
        assert res.success
        ranges.append(np.ptp(res.energy) / res.energy[0])
        x.append(res.position("slider")[-1, 0])
    assert np.all(_ratios(ranges) >= 3.5), ranges
    assert ranges[1] < 2e-3
    dx = np.abs(np.diff(x))
    assert dx[0] / dx[1] >= 3.5, x


@pytest.mark.slow
def test_spherical_pendulum_invariants_second_order():
    """Energy and the vertical angular momentum about the pivot, 2 s: ranges fall 3.5x or
    more per halving of h."""
    drifts = []
    for h in HS:
        res = _run(spherical_pendulum.build(), 2.0, h)
        Lz = spherical_pendulum.vertical_angular_momentum(res)
        drifts.append((np.ptp(Lz), np.ptp(spherical_pendulum.energy(res))))
    drifts = np.array(drifts)
    assert np.all(_ratios(drifts[:, 0]) > 3.5) and np.all(_ratios(drifts[:, 1]) > 3.5), drifts


def test_pendulum_reaction_matches_closed_form():
    """The pivot's pull on a point-like pendulum (1 kg, 1 m, inertia 1e-6 kg m^2) released
    horizontal, m g sin(theta) (1 + 2 m L^2 / (m L^2 + J)) radially (3 m g sin(theta) but for
    the bob's inertia J, 2e-5 N): each step's reaction is its impulse over h (the kick's,
    taken half a step in, and the end velocity's projection); against the closed form at the
    step's mean angle its error falls about 4x per halving of h (measured 8.5e-5 N at
    h = 1e-3; the seed's Euler lags a step)."""
    closed_form = 9.81 * (1 + 2 / (1 + 1e-6))
    misses = []
    for h in (1e-3, 5e-4):
        res = _run(pendulum.build(), 0.5, h)
        assert np.all(res.stats.retries == 0)
        theta = pendulum.angle(res)
        mean_angle = 0.5 * (theta[:-1] + theta[1:])
        bob = 0.5 * (res.position("bob")[:-1] + res.position("bob")[1:])
        radial_in = -bob / np.linalg.norm(bob, axis=1)[:, None]
        pull = np.einsum("ni,ni->n", res.reaction_force("pivot"), radial_in)
        misses.append(np.abs(pull - closed_form * np.sin(mean_angle)).max())
    assert misses[0] < 1e-5 * 3 * 9.81 * 10 and misses[0] / misses[1] > 3.0, misses


# ---------------------------------------------------------------- velocity constraints, loads
def test_knife_edge_second_order():
    """The knife edge of test_nonholonomic (a velocity constraint) against its closed form:
    the centre's path error falls 4x per halving of h (measured 1.4e-6 m at h = 2e-3; the
    seed's Euler 3.3e-3 m). The constraint takes the step's mean velocity at its midpoint
    (energy-consistent, no loss of speed in the turn); the push's kick leaves the end
    velocity O(h^2) off the blade, which the next step's row mirrors, so the sideways
    reaction alternates by M a W h / 2 about M u W at the step's mean time."""
    errors = []
    accel = 0.8 / SLED_MASS                     # the push F / M of test_nonholonomic
    for h in HS:
        res = _run(build_sled(), SLED_T, h)
        path, _ = sled_closed_form(res.t)
        errors.append(np.abs(res.position("sled")[:, :2] - path).max())
        R = res.rotation("sled")
        heading = np.unwrap(np.arctan2(R[:, 1, 0], R[:, 0, 0]))
        mean = 0.5 * (heading[:-1] + heading[1:])
        normal = np.c_[-np.sin(mean), np.cos(mean), np.zeros_like(mean)]
        sideways = np.einsum("ni,ni->n", res.reaction_force("knife"), normal)
        _, u_mean = sled_closed_form(0.5 * (res.t[:-1] + res.t[1:]))
        miss = sideways - SLED_MASS * u_mean * SLED_TURN
        swing = SLED_MASS * accel * SLED_TURN * h / 2
        assert np.abs(miss).max() < 1.05 * swing
        assert np.abs(0.5 * (miss[:-1] + miss[1:])).max() < 0.02 * swing
    assert np.all(_ratios(errors) > 3.8), errors
    assert errors[0] < 1e-3 * 3.3e-3


def test_damped_oscillator_second_order():
    """A slider on a prismatic joint held by an explicit spring-damper (zeta = 0.1, 2 Hz),
    released 0.1 m out: x at 1 s against the closed form falls 3.5x or more per halving."""
    m, k, c, x0 = 2.0, 2.0 * (2 * np.pi * 2.0) ** 2, 0.0, 0.1
    c = 2 * 0.1 * np.sqrt(k * m)
    wn = np.sqrt(k / m)
    zeta = c / (2 * np.sqrt(k * m))
    wd = wn * np.sqrt(1 - zeta**2)

    def exact(t):
        return x0 * np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t))

    errors = []
    for h in HS:
        s = nd.System(gravity=(0, 0, 0))
        b = s.add_body("slider", mass=m, inertia=(1e-3, 1e-3, 1e-3), position=(x0, 0, 0))
        s.add_joint(nd.Prismatic(s.ground, b, point=(x0, 0, 0), axis=(1, 0, 0), name="slide"))
        s.add_force(nd.SpringDamper(s.ground, (-1.0, 0, 0), b, (x0, 0, 0), k, c,
                                    free_length=1.0, name="spring"))
        res = _run(s, 1.0, h)
        errors.append(abs(res.position("slider")[-1, 0] - exact(1.0)))
    assert np.all(_ratios(errors) > 3.5), errors


def test_programmed_motion_followed_at_second_order():
    """A slider driven along its prismatic joint, s(t) = 0.1 sin(5 t): the positions meet the
    programme to O(h^2) (the rows ask each step's end to meet it) and the driver's force
    is m s'' within O(h)."""
    import casadi as ca
    misses, forces = [], []
    for h in (2e-3, 1e-3):
        s = nd.System(gravity=(0, 0, 0))
        b = s.add_body("slider", mass=3.0, inertia=(1e-3, 1e-3, 1e-3), velocity=(0.5, 0, 0))
        slide = s.add_joint(nd.Prismatic(s.ground, b, point=(0, 0, 0), axis=(1, 0, 0),
                                         name="slide"))
        s.add_joint(nd.TranslationDriver(slide, lambda t: 0.1 * ca.sin(5 * t), name="drive"))
        res = _run(s, 1.0, h)
        misses.append(np.abs(res.position("slider")[:, 0] - 0.1 * np.sin(5 * res.t)).max())
        t_mid = 0.5 * (res.t[:-1] + res.t[1:])
        forces.append(np.abs(res.reaction_force("drive")[:, 0]
                             - (-3.0 * 0.1 * 25 * np.sin(5 * t_mid))).max())
    assert misses[0] / misses[1] > 3.5 and misses[0] < 1e-5, misses
    assert forces[0] < 0.05 and forces[0] / forces[1] > 1.8, forces


@pytest.mark.slow
def test_implicit_bushings_second_order_without_dissipation():
    """A 2-link chain hinged by bushings evaluated in the step (energy-consistent: the
    stored energy's discrete gradient between the step's ends, whole in the kick, no carry),
    0.5 s: the positions against scipy's Radau at rtol 1e-11 on the same model
    (``simulate_ode``) fall 4x per halving of h once its 100 rad/s modes are resolved
    (measured 3.9e-4, 8.7e-5, 2.1e-5 m at h = 1e-3 ... 2.5e-4; the seed's Euler 1.5e-3,
    8.4e-4, 4.4e-4); the energy's range is second order and about 1e-6 of the seed's step
    dissipation-free too (5e-6 J against 3.2e-2 J at h = 2e-3)."""
    def build():
        return chain.build(2, bushing=(1e4, 10.0))

    ref = nd.simulate_ode(build(), 0.5, method="Radau", rtol=1e-11, atol=1e-13, progress=False)
    errors, ranges = [], []
    for h in (1e-3, 5e-4, 2.5e-4):
        res = _run(build(), 0.5, h)
        errors.append(np.abs(res.q[-1] - ref.q[-1]).max())
        ranges.append(np.ptp(res.energy))
        ledger = res.energy_ledger().iloc[-1]
        assert abs(ledger["residual:potential"]) < 1e-3 * np.ptp(res.potential_energy)
    assert np.all(_ratios(errors) > 3.8), errors
    assert np.all(_ratios(ranges) > 3.5) and ranges[0] < 2e-6, ranges


# ---------------------------------------------------------------- the loop, the grid, refusals
def test_stepper_loop_equals_simulate_and_reset_forgets():
    """``Stepper.step()`` takes the same steps as ``simulate``; ``reset`` starts the velocity
    predictor afresh, so a second run repeats the first."""
    res = _run(free_top.build(), 0.05, 1e-3)
    stepper = nd.Stepper(free_top.build(), h=1e-3, scheme="midpoint")
    for _ in range(50):
        stepper.step()
    assert np.array_equal(stepper.q, res.q[-1]) and np.array_equal(stepper.v, res.v[-1])
    stepper.reset()
    for _ in range(50):
        stepper.step()
    assert np.array_equal(stepper.v, res.v[-1])


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["euler", "midpoint"])
def test_fixed_step_stays_on_its_grid(scheme):
    """16000 steps of 1.25e-4 s end on t = 2 with every step at h (a sum of steps drifts
    off the grid by round-off; the last step is not split in two)."""
    res = _run(chain.build(1), 2.0, 1.25e-4, scheme)
    assert len(res.t) == 16001 and res.t[-1] == 2.0
    assert np.allclose(res.h, 1.25e-4, rtol=1e-9, atol=0)


def test_refuses_what_it_does_not_model_yet():
    """Other solvers, the seed's contact rows without iterations and its variable h, and error
    control over clearance joints' gaps are refused before any step, every problem at once."""
    s = chain.build(2, clearance=1e-4)
    with pytest.raises(nd.ModelError) as err:
        nd.Stepper(s, h=(1e-4, 1e-3), scheme="midpoint", solver="ipopt", contact="linearised",
                   rtol=1e-4)
    text = str(err.value)
    assert "solver 'direct' or 'qp', got 'ipopt'" in text and "contact 'linearised'" in text
    assert "the clearance joints ['j0', 'j1'] need a fixed h" in text
    with pytest.raises(nd.ModelError, match="step_control 'fixed', 'adaptive' or 'error', got 'nlp'"):
        nd.Stepper(chain.build(2), h=(1e-4, 1e-3), scheme="midpoint", step_control="nlp")
    with pytest.raises(nd.ModelError, match="scheme 'midpoint' takes projection=False"):
        nd.Stepper(chain.build(2), h=1e-3, scheme="midpoint", projection=True)
    with pytest.raises(nd.ModelError, match="scheme must be one of"):
        nd.StepperSettings(scheme="rk4")
