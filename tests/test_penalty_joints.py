"""Penalty clearance joints (seed 001): penetrations against numpy hand computations and a
brute-force contact search, action = reaction, wrench = -grad(potential) and penetration
rates by finite differences, the Flores ball at rest, conversion from the complementarity
joints, memory, validation.

Poses and rotations are built with scipy's Rotation, not with nlpdyn.rotations.
"""
import casadi as ca
import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.spatial.transform import Rotation

import nlpdyn as nd
from nlpdyn.body import BodyState
from nlpdyn.forces.penalty_joints import (PenaltyCylindricalClearance, PenaltyPrismaticClearance,
                                          PenaltyRevoluteClearance, PenaltySphericalClearance,
                                          penalty_version)

# Tolerance tiers (STYLE.md).
IDENTITY = 1e-12      # floating-point identities, relative to the quantity's scale
FD_STEP = 1e-7        # central differences: truncation ~ (step)^2 * V''' is < 1e-9 relative
FD = 1e-6             # here, rounding ~ 1e-16 V / step < 1e-8: relative tolerance 1e-6
ROUND = 1e-15         # m: rounding of differences of coordinates of order 1 m (identity tier)
SMOOTHING = 1e-9      # m: the documented smoothing of |d| = sqrt(d.d + SMOOTHING^2)

J = np.array([0.1, 0.0, 0.0])                 # joint point
R_PIN, C, L, CA = 0.01, 1e-4, 0.02, 1e-4       # pin radius, clearance, bore length, axial play
SQUARE = 0.01 * np.array([[1.0, -1.0], [1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0]])
HERTZ = nd.Hertz(1e9, 1.5)


# --------------------------------------------------------------------------- helpers
def _bodies():
    s = nd.System(gravity=(0, 0, 0))
    a = s.add_body("a", 1.0, (0.01, 0.02, 0.03), position=(0.0, 0.0, 0.0))
    b = s.add_body("b", 2.0, (0.02, 0.03, 0.04), position=(0.3, 0.0, 0.0))
    return s, a, b


def _elements(a, b, law=HERTZ):
    return {
        "spherical": PenaltySphericalClearance(a, b, J, 10 * C, law, radius=0.005, name="sph"),
        "spherical c=0": PenaltySphericalClearance(a, b, J, 0.0, law, name="sph0"),
        "cylindrical": PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, law,
                                                   n_strips=3, name="cyl"),
        "cylindrical tilt": PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, law,
                                                        n_strips=3, name="cylt",
                                                        tilt_correction=True),
        "revolute": PenaltyRevoluteClearance(a, b, J, (0, 0, 1), R_PIN, C, L, CA, law,
                                             nd.Hertz(2e9, 1.0), n_strips=4, name="rev"),
        "revolute c=0": PenaltyRevoluteClearance(a, b, J, (0, 0, 1), R_PIN, 0.0, L, 0.0, law,
                                                 n_strips=2, name="rev0"),
        "prismatic": PenaltyPrismaticClearance(a, b, J, (0, 0, 1), SQUARE, C, 0.05, law,
                                               section_x=(1, 0, 0), name="pri"),
    }


def _symbols(a, b):
    """SX states of bodies a (parent) and b (child) and the symbols q (14), v (12)."""
    q, v = ca.SX.sym("q", 14), ca.SX.sym("v", 12)
    states = [BodyState(body, q[7 * k:7 * k + 3], q[7 * k + 3:7 * k + 7],
                        v[6 * k:6 * k + 3], v[6 * k + 3:6 * k + 6]) for k, body in enumerate((a, b))]
    return states, q, v


def _quat(R):
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def _q_of(poses):
    """q from [(r, R), (r, R)] (global position, body -> global rotation matrix)."""
    return np.concatenate([np.r_[r, _quat(R)] for r, R in poses])


def _pose(body, R_motion, t_motion):
    """Body pose after the rigid motion x -> R x + t of its initial (identity) placement."""
    return R_motion @ body.position + t_motion, R_motion


def _relative_poses(a, b, rotvec, shift, parent_rotvec=(0, 0, 0), parent_shift=(0, 0, 0)):
    """Parent moved by a rigid motion; child by the same motion after a relative motion
    (rotation ``rotvec`` about J, then ``shift``)."""
    Rp = Rotation.from_rotvec(parent_rotvec).as_matrix()
    tp = np.asarray(parent_shift, dtype=float)
    Rr = Rotation.from_rotvec(rotvec).as_matrix()
    tr = J - Rr @ J + np.asarray(shift, dtype=float)
    return [_pose(a, Rp, tp), _pose(b, Rp @ Rr, Rp @ tr + tp)]


def _random_poses(kind, a, b, rng):
    """General poses with the joint near contact: a random common motion and a relative
    motion of the size of the play."""
    parent_rotvec, parent_shift = 0.5 * rng.standard_normal(3), 0.1 * rng.standard_normal(3)
    if kind.startswith("spherical"):
        rel_rot = 0.2 * rng.standard_normal(3)
        direction = rng.standard_normal(3)
        shift = (10 * C + 4e-4 * rng.uniform(0.3, 1)) * direction / np.linalg.norm(direction)
        if kind == "spherical c=0":
            shift = 4e-4 * direction / np.linalg.norm(direction)
    else:
        rel_rot = np.r_[3e-3 * rng.standard_normal(2), 0.3 * rng.standard_normal()]
        direction = np.r_[rng.standard_normal(2), 0.0]
        shift = 1.6 * C * direction / np.linalg.norm(direction)
        shift[2] = 1.5 * CA * rng.uniform(-1, 1)
        if kind == "prismatic":
            rel_rot[2] = 0.01 * rng.standard_normal()
    return _relative_poses(a, b, rel_rot, shift, parent_rotvec, parent_shift)


def _advance(poses, vel, eps):
    """Poses after time eps along rdot (global) and body-frame angular velocity w'."""
    out = []
    for k, (r, R) in enumerate(poses):
        rdot, w = vel[6 * k:6 * k + 3], vel[6 * k + 3:6 * k + 6]
        out.append((r + eps * rdot, R @ Rotation.from_rotvec(eps * w).as_matrix()))
    return out


def _global_wrench_sums(Q, poses, about):
    """Sum of global forces and of global moments about ``about`` of [(f, n'), (f, n')]."""
    f_sum, m_sum = np.zeros(3), np.zeros(3)
    for k, (r, R) in enumerate(poses):
        f, n_body = Q[6 * k:6 * k + 3], Q[6 * k + 3:6 * k + 6]
        f_sum += f
        m_sum += R @ n_body + np.cross(r - about, f)
    return f_sum, m_sum


def _functions(el, a, b):
    states, q, v = _symbols(a, b)
    z = ca.SX.sym("z", el.history_size)
    (fp, np_), (fc, nc) = el.wrenches(states, 0.0, z if el.history_size else None)
    V = el.potential_energy(states, 0.0)
    return {
        "Q": ca.Function("Q", [q, v, z], [ca.vertcat(fp, np_, fc, nc)]),
        "V": ca.Function("V", [q], [ca.DM(0) if V is None else V]),
        "delta": ca.Function("delta", [q], [el.penetrations(states)]),
        "rate": ca.Function("rate", [q, v], [el.penetration_rates(states)]),
        "points": ca.Function("points", [q], [el.contact_points(states)]),
        "forces": ca.Function("forces", [q, v, z], [el.contact_forces(states, 0.0, z)]),
        "next": ca.Function("next", [q, v, z], [ca.vec(ca.SX(el.next_history(states, 0.0, z)))]),
    }


def _num(f, *args):
    return np.asarray(f(*args), dtype=float).squeeze()


def _smooth(x):
    """|x| as the elements measure it."""
    return np.sqrt(np.sum(np.square(x), axis=-1) + SMOOTHING**2)


# --------------------------------------------------------------------------- geometry
def test_spherical_penetration_by_hand():
    """delta = |ball centre - socket centre| - c with both bodies moved and turned."""
    _, a, b = _bodies()
    el = _elements(a, b)["spherical"]
    fns = _functions(el, a, b)
    rng = np.random.default_rng(0)
    for _ in range(5):
        poses = [(rng.standard_normal(3), Rotation.random(random_state=rng).as_matrix())
                 for _ in range(2)]
        ball = poses[1][0] + poses[1][1] @ (J - b.position)
        socket = poses[0][0] + poses[0][1] @ (J - a.position)
        d = ball - socket
        assert _num(fns["delta"], _q_of(poses)) == pytest.approx(_smooth(d) - 10 * C,
                                                                 rel=0, abs=ROUND)
        point = _num(fns["points"], _q_of(poses))
        assert np.allclose(point, ball + 0.005 * d / _smooth(d), rtol=0, atol=ROUND)


def test_tilted_bore_strip_penetrations_vary_linearly_along_the_axis():
    """Bore turned by alpha about X around J and shifted by e along Y: strip k's centre is at
    (0, e - z_k sin(alpha), z_k cos(alpha)) from J, so delta_k = |e - z_k sin(alpha)| - c,
    linear in z_k; the contact points lie on the pin surface (radius R) facing the strip."""
    _, a, b = _bodies()
    N, alpha, e = 5, 1e-2, 2e-4
    el = PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, HERTZ, n_strips=N)
    fns = _functions(el, a, b)
    q = _q_of(_relative_poses(a, b, (alpha, 0, 0), (0, e, 0)))
    z = np.array([(N - 2 * k + 1) * L / (2 * N) for k in range(1, N + 1)])
    assert np.allclose(el.strip_positions(), z, rtol=0, atol=IDENTITY * L)
    radial = e - z * np.sin(alpha)
    assert np.all(radial > 0)
    delta = _num(fns["delta"], q)
    assert np.allclose(delta, _smooth(radial[:, None]) - C, rtol=0, atol=ROUND)
    # linear along the axis, up to the smoothing's SMOOTHING^2 / (2 |d|)
    assert np.allclose(np.diff(delta), -np.diff(z) * np.sin(alpha), rtol=0,
                       atol=ROUND + SMOOTHING**2 / radial.min())
    points = _num(fns["points"], q)
    expected = J + np.c_[np.zeros(N), R_PIN * radial / _smooth(radial[:, None]), z * np.cos(alpha)]
    assert np.allclose(points, expected, rtol=0, atol=ROUND)


def _exact_strip_penetration(poses, b, z):
    """Seed 001's contact search for one strip, by brute force: the strip's mid-circle
    (radius R + c, in the plane normal to the bore axis) against the pin cylinder (axis Z
    through J, parent unmoved): delta = R - min over the circle of the distance to the axis."""
    r_b, R_b = poses[1]
    centre = r_b + R_b @ (J + np.array([0, 0, z]) - b.position)
    u, v = R_b[:, 0], R_b[:, 1]
    radius = R_PIN + C

    def dist(phi):
        x = centre + radius * (np.cos(phi) * u + np.sin(phi) * v) - J
        return np.hypot(x[0], x[1])
    grid = np.linspace(0, 2 * np.pi, 4097)
    k = int(np.argmin([dist(p) for p in grid]))
    res = minimize_scalar(dist, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 4096)]),
                          method="bounded", options={"xatol": 1e-13})
    return R_PIN - res.fun


@pytest.mark.parametrize("tilt_axis", [(1, 0, 0), (1, 1, 0)])
def test_tilt_correction_against_the_exact_contact_search(tilt_axis):
    """Tilt theta about X with the offset along Y (tilt in the contact direction): the
    corrected strip penetration is exact (ellipse vertex), the plain one misses
    R_j (1 - cos theta). Oblique tilt: the correction's error stays below its leading term
    R_j^2 (b.n)^2 (b.t)^2 / (2 |d|) (doubled), far below the plain error."""
    _, a, b = _bodies()
    theta, e = 5e-3, 1.2e-4
    axis = np.asarray(tilt_axis, float) / np.linalg.norm(tilt_axis)
    poses = _relative_poses(a, b, theta * axis, (0, e, 0))
    plain = PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, HERTZ, n_strips=3)
    tilted = PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, HERTZ, n_strips=3,
                                         tilt_correction=True)
    q = _q_of(poses)
    d_plain = _num(_functions(plain, a, b)["delta"], q)
    d_tilt = _num(_functions(tilted, a, b)["delta"], q)
    exact = np.array([_exact_strip_penetration(poses, b, z) for z in plain.strip_positions()])
    R_j = R_PIN + C
    bore = poses[1][1][:, 2]
    plain_error = np.abs(d_plain - exact)
    assert plain_error.min() > 0.5 * R_j * (bore @ np.array([0, 1, 0])) ** 2 / 2
    if tilt_axis == (1, 0, 0):
        assert np.allclose(d_tilt, exact, rtol=0, atol=1e-13)   # search tolerance
    else:
        radial = d_plain + C                                      # |d_k|
        b_n, b_t = bore[1], bore[0]                               # n = +Y, t = X
        bound = 2 * R_j**2 * b_n**2 * b_t**2 / (2 * radial)
        assert np.all(np.abs(d_tilt - exact) <= bound + 1e-13)
        assert np.all(np.abs(d_tilt - exact) < 1e-2 * plain_error)


def test_axial_faces_by_hand():
    """Bore shifted by s along the axis: face 1 (at -L/2) penetrates -(CA + s), face 2 s - CA."""
    _, a, b = _bodies()
    el = _elements(a, b)["revolute"]
    fns = _functions(el, a, b)
    for shift in (-3e-4, 5e-5, 2.5e-4):
        q = _q_of(_relative_poses(a, b, (0, 0, 0.4), (0, 0, shift)))
        delta = _num(fns["delta"], q)
        assert np.allclose(delta[-2:], [-(CA + shift), shift - CA], rtol=0, atol=ROUND)
        assert np.allclose(delta[:-2], SMOOTHING - C, rtol=0, atol=ROUND)   # centred: d = 0


@pytest.mark.parametrize("psi,e", [(0.0, (3e-4, 0.0)), (4e-3, (1e-4, -2e-4))])
def test_prismatic_penetrations_by_hand(psi, e):
    """Square slider turned by psi about its axis and shifted by e in the section: each
    vertex (x, y) moved to (x', y') penetrates the wall with outward normal m at w + c by
    m.(x', y') - (w + c); its two walls are those of its coordinates' signs."""
    _, a, b = _bodies()
    el = _elements(a, b)["prismatic"]
    q = _q_of(_relative_poses(a, b, (0, 0, psi), (e[0], e[1], 0)))
    delta = _num(_functions(el, a, b)["delta"], q)
    w = 0.01
    rot = np.array([[np.cos(psi), -np.sin(psi)], [np.sin(psi), np.cos(psi)]])
    expected = []
    for x, y in SQUARE:
        moved = rot @ np.array([x, y]) + np.asarray(e)
        for m in (np.array([np.sign(x), 0]), np.array([0, np.sign(y)])):
            expected.append(m @ moved - (w + C))
    assert np.allclose(np.sort(delta), np.sort(expected * 2), rtol=0, atol=ROUND)


# --------------------------------------------------------------------------- mechanics
KINDS = ["spherical", "spherical c=0", "cylindrical", "cylindrical tilt", "revolute",
         "revolute c=0", "prismatic"]


@pytest.mark.parametrize("kind", KINDS)
def test_action_equals_reaction(kind):
    """Random poses: the wrenches on parent and child sum to zero force and zero moment
    about a common point (n' turned to global with A)."""
    _, a, b = _bodies()
    el = _elements(a, b, nd.LankaraniNikravesh(1e9, 1.5, 0.6))[kind]
    fns = _functions(el, a, b)
    rng = np.random.default_rng(1)
    loaded = 0
    for _ in range(8):
        poses = _random_poses(kind, a, b, rng)
        vel = rng.standard_normal(12) * 0.05
        z = np.abs(rng.standard_normal(el.history_size)) * 0.1
        Q = _num(fns["Q"], _q_of(poses), vel, z)
        scale = np.abs(Q[:3]).max()
        loaded += scale > 0
        f_sum, m_sum = _global_wrench_sums(Q, poses, about=rng.standard_normal(3))
        assert np.abs(f_sum).max() <= IDENTITY * scale
        assert np.abs(m_sum).max() <= 10 * IDENTITY * scale   # lever arms up to ~3 m
    assert loaded >= 6


@pytest.mark.parametrize("kind", KINDS)
def test_wrench_is_minus_the_gradient_of_the_potential(kind):
    """Elastic law (Hertz): each generalised force component equals -dV along that
    coordinate (global translations, body-frame rotations of both bodies), by central
    differences of potential_energy."""
    _, a, b = _bodies()
    el = _elements(a, b)[kind]
    fns = _functions(el, a, b)
    rng = np.random.default_rng(2)
    for _ in range(3):
        poses = _random_poses(kind, a, b, rng)
        Q = _num(fns["Q"], _q_of(poses), np.zeros(12), np.zeros(0))
        assert np.abs(Q).max() > 0
        grad = np.zeros(12)
        for j in range(12):
            e = np.zeros(12)
            e[j] = 1.0
            V = [float(_num(fns["V"], _q_of(_advance(poses, sign * e, FD_STEP)))) for sign in (1, -1)]
            grad[j] = (V[0] - V[1]) / (2 * FD_STEP)
        assert np.allclose(Q, -grad, rtol=0, atol=FD * np.abs(Q).max())


@pytest.mark.parametrize("kind", KINDS)
def test_penetration_rates_are_the_time_derivative(kind):
    """penetration_rates (normal relative velocity of the contact points, or the directional
    derivative for the tilt-corrected strips) = d(delta)/dt along the rigid motion."""
    _, a, b = _bodies()
    el = _elements(a, b)[kind]
    fns = _functions(el, a, b)
    rng = np.random.default_rng(3)
    for _ in range(3):
        poses = _random_poses(kind, a, b, rng)
        vel = rng.standard_normal(12) * np.tile([0.1, 0.1, 0.1, 1, 1, 1], 2)
        rate = _num(fns["rate"], _q_of(poses), vel)
        d = [_num(fns["delta"], _q_of(_advance(poses, vel, sign * FD_STEP))) for sign in (1, -1)]
        fd = (d[0] - d[1]) / (2 * FD_STEP)
        assert np.allclose(rate, fd, rtol=0, atol=FD * np.abs(rate).max())


def test_misaligned_bushing_bore_restoring_moment_by_hand():
    """Clearance 0 and a linear law K: a bore turned by alpha about X (centred) pushes strip
    k back with K z_k sin(alpha) along Y: no net force, moment -K sin(alpha) cos(alpha)
    sum z_k^2 = -K sin cos L^2 (N^2 - 1)/(12 N) about X (misalignment penalised by the
    distribution over the strips)."""
    _, a, b = _bodies()
    K, N, alpha = 1e7, 5, 2e-3
    el = PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, 0.0, L, nd.LinearBushing(K),
                                     n_strips=N)
    fns = _functions(el, a, b)
    poses = _relative_poses(a, b, (alpha, 0, 0), (0, 0, 0))
    Q = _num(fns["Q"], _q_of(poses), np.zeros(12), np.zeros(0))
    r_b, R_b = poses[1]
    f, m = Q[6:9], R_b @ Q[9:12] + np.cross(r_b - J, Q[6:9])
    moment = -K * np.sin(alpha) * np.cos(alpha) * L**2 * (N**2 - 1) / (12 * N)
    assert np.abs(f).max() <= IDENTITY * K * L * alpha
    assert np.allclose(m, [moment, 0, 0], rtol=0, atol=IDENTITY * abs(moment))


def test_no_nan_gradient_at_zero_play():
    """Clearance 0 at d = 0 (the start of a bushing-like joint): finite force Jacobians."""
    _, a, b = _bodies()
    els = _elements(a, b, nd.LankaraniNikravesh(1e9, 1.5, 0.6))
    for kind in ("spherical c=0", "revolute c=0"):
        el = els[kind]
        states, q, v = _symbols(a, b)
        z = ca.SX.sym("z", el.history_size)
        Q = ca.vertcat(*[ca.vertcat(f, n) for f, n in el.wrenches(states, 0.0, z)])
        jac = ca.Function("dQ", [q, v, z], [ca.jacobian(Q, ca.vertcat(q, v))])
        q0 = _q_of(_relative_poses(a, b, (0, 0, 0), (0, 0, 0)))
        assert np.all(np.isfinite(np.asarray(jac(q0, np.zeros(12), np.zeros(el.history_size)))))


def test_open_contacts_push_nothing_and_store_nothing():
    """A signed law (linear bushing) acts only on closed contacts; the energy of open ones
    is 0 (the law alone would give K delta^2 / 2 > 0)."""
    _, a, b = _bodies()
    el = PenaltyRevoluteClearance(a, b, J, (0, 0, 1), R_PIN, C, L, CA, nd.LinearBushing(1e6, 50.0))
    fns = _functions(el, a, b)
    q = _q_of(_relative_poses(a, b, (0, 0, 0.1), (0, 0.5 * C, 0)))
    assert np.all(_num(fns["delta"], q) < 0)
    assert np.all(_num(fns["forces"], q, np.ones(12), np.zeros(0)) == 0)
    assert float(_num(fns["V"], q)) == 0
    assert np.all(_num(fns["Q"], q, np.ones(12), np.zeros(0)) == 0)


def test_impact_memory_and_hysteresis_force():
    """LN law: a closed contact holds its memory (0 if it was closed from the start: no
    impact); an open contact remembers its approach rate, the speed it would close at. The
    force uses the memory as impact velocity: K delta^n (1 + 3 (1 - e^2)/4 delta_dot / v_imp)."""
    _, a, b = _bodies()
    K, n, e_r = 1e9, 1.5, 0.6
    el = PenaltySphericalClearance(a, b, J, C, nd.LankaraniNikravesh(K, n, e_r))
    assert el.history_size == 4 and np.all(el.initial_history() == 0)
    fns = _functions(el, a, b)
    pen = 2e-5
    q = _q_of(_relative_poses(a, b, (0, 0, 0), (0, C + pen, 0)))
    vel = np.r_[np.zeros(6), 0, 0.3, 0, np.zeros(3)]      # child moves outward along Y
    rate = 0.3 * (C + pen) / _smooth(C + pen)             # d|d|/dt with the smoothed norm

    def remembered(q, v, speed):                          # no earlier reading
        return _num(fns["next"], q, v, [speed, 0, 0, 0])[0]
    assert remembered(q, vel, 0.0) == 0
    assert remembered(q, vel, 0.7) == pytest.approx(0.7, rel=IDENTITY)
    q_open = _q_of(_relative_poses(a, b, (0, 0, 0), (0, 0.5 * C, 0)))
    open_rate = 0.3 * 0.5 * C / _smooth(0.5 * C)          # approaching the socket wall
    assert remembered(q_open, vel, 0.7) == pytest.approx(open_rate, rel=IDENTITY)
    assert remembered(q_open, -vel, 0.7) == 0             # receding from it
    force = _num(fns["forces"], q, vel, [0.5, 0, 0, 0])
    pen = _smooth(C + pen) - C
    assert force == pytest.approx(K * pen**n * (1 + 0.75 * (1 - e_r**2) * rate / 0.5),
                                  rel=IDENTITY)


def _hanging_ball(clearance, law, evaluation="implicit"):
    s = nd.System(gravity=(0, 0, -9.81))
    ball = s.add_body("ball", 2.0, (1e-3, 1e-3, 1e-3))
    el = s.add_force(PenaltySphericalClearance(s.ground, ball, (0, 0, 0), clearance, law,
                                               name="socket"))
    el.evaluation = evaluation
    return s, ball, el


def test_flores_ball_static_equilibrium_by_root_finding():
    """The socket force balances m g where |d| = c + (m g / K)^(1/n) (Hertz)."""
    K, n, m, c = 5e6, 1.5, 2.0, 1e-4
    s, _, _ = _hanging_ball(c, nd.Hertz(K, n))
    cs = s.compile()
    j = [e.name for e in cs.force_elements].index("socket")

    def net(z):
        q = np.r_[0, 0, z, 1, 0, 0, 0]
        Q = np.asarray(cs.element_forces(0.0, q, np.zeros(6), cs.initial_history()))
        return Q[2, j] - m * 9.81
    z = brentq(net, -2e-3, -c, xtol=1e-16, rtol=1e-15)
    assert -z == pytest.approx(c + (m * 9.81 / K) ** (1 / n), rel=1e-12)


def test_flores_ball_without_play_bounces_between_rest_and_twice_the_sag():
    """Seed 001's 0 mm case: a 2 kg ball in a socket with no play, Lankarani-Nikravesh law.
    Closed from the start, the contact has no impact: the seed's ratio is 1 (a stiffer
    contact, (1 + 3 (1 - e^2)/4) K, no hysteresis), so released at rest the ball oscillates
    without loss between 0 and the depth where that law has stored m g x:
    x_max = ((n + 1) m g / ((1 + 3 (1 - e^2)/4) K))^(1/n) (energy-consistent steps, h = 1e-3;
    the sampled extremes within (h w)^2). Every step at h (``contact_resolution=None``):
    resolved, the contact's first period is stepped shorter, and gravity's first-order term
    over steps of two sizes no longer telescopes (an offset up to ~ h/2 m g w x_max / 2,
    the smooth step's error, apart from the law)."""
    K, n, m, e = 5e6, 1.5, 2.0, 0.5
    s, _, _ = _hanging_ball(0.0, nd.LankaraniNikravesh(K, n, e))
    res = nd.simulate(s, t_end=0.4, h=1e-3, progress=False, contact_resolution=None)
    assert res.success
    stiffer = (1 + 0.75 * (1 - e**2)) * K
    x_max = ((n + 1) * m * 9.81 / stiffer) ** (1 / n)
    omega = np.sqrt(n * stiffer * x_max ** (n - 1) / m)      # the stiffest, at x_max
    sag = -res.position("ball")[:, 2]
    assert sag.max() == pytest.approx(x_max, rel=(1e-3 * omega) ** 2)
    assert sag.min() == pytest.approx(0.0, abs=(1e-3 * omega) ** 2 * x_max)
    # no loss: at the sampled turning points (v ~ 0, where the first-order step's gravity
    # term h/2 m |g v| is small) the energy is the start's to 2 % of m g x_max (h w = 0.3)
    turning = np.flatnonzero((sag[1:-1] > sag[:-2]) & (sag[1:-1] >= sag[2:])) + 1
    assert len(turning) > 5
    assert np.abs(res.energy[turning] - res.energy[0]).max() < 0.02 * m * 9.81 * x_max


# --------------------------------------------------------------------------- conversion
def _complementarity(a, b):
    return {
        "spherical": nd.SphericalClearance(a, b, J, C, radius=0.004, name="c1"),
        "cylindrical": nd.CylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, name="c2",
                                               offset=(0.5 * C, 0, 0)),
        "revolute": nd.RevoluteClearance(a, b, J, (0, 0, 1), R_PIN, C, L, CA, name="c3"),
        "prismatic": nd.PrismaticClearance(a, b, J, (0, 0, 1), SQUARE, C, 0.05, name="c4"),
    }


@pytest.mark.parametrize("kind", ["spherical", "cylindrical", "revolute", "prismatic"])
def test_penalty_version_has_the_complementarity_geometry(kind):
    """Same data; penetrations = -gaps of the complementarity joint at random poses. The
    complementarity radial gaps sit at the bore's ends, two strips (N = 2) at +-L/4: they
    are the gaps of the same joint with length L/2 (order reversed)."""
    _, a, b = _bodies()
    joint = _complementarity(a, b)[kind]
    el = penalty_version(joint, HERTZ, n_strips=2)
    assert el.name == joint.name and el.bodies == joint.bodies
    for attr in ("point", "clearance", "axis", "radius", "length", "offset", "axial_clearance",
                 "profile", "section_x"):
        if hasattr(joint, attr):
            assert np.array_equal(getattr(el, attr), getattr(joint, attr)), attr
    states, q, _ = _symbols(a, b)
    delta = ca.Function("d", [q], [el.penetrations(states)])
    gaps = ca.Function("g", [q], [joint.gaps(states)])
    if kind in ("cylindrical", "revolute"):
        half = nd.CylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L / 2, offset=joint.offset)
        radial = ca.Function("r", [q], [half.gaps(states)])
    rng = np.random.default_rng(4)
    for _ in range(5):
        qk = _q_of(_random_poses("prismatic" if kind == "prismatic" else kind, a, b, rng))
        d, g = np.atleast_1d(_num(delta, qk)), np.atleast_1d(_num(gaps, qk))
        # the joints smooth |d| over 1e-6 c instead of SMOOTHING: SMOOTHING^2 / (2 |d|) apart
        tol = ROUND + SMOOTHING**2 / (2 * np.abs(d + C))
        if kind in ("cylindrical", "revolute"):
            assert np.allclose(d[:2], -_num(radial, qk)[::-1], rtol=0, atol=tol[:2])
            assert np.allclose(d[2:], -g[2:], rtol=0, atol=ROUND)
        else:
            assert np.allclose(d, -g, rtol=0, atol=tol)


def test_penalty_version_of_ideal_joints():
    """An ideal joint becomes a penalty joint without play (or with the given one)."""
    _, a, b = _bodies()
    law = nd.LankaraniNikravesh(1e9, 1.5, 0.8)
    sph = penalty_version(nd.Spherical(a, b, J, name="ball"), law)
    assert isinstance(sph, PenaltySphericalClearance)
    assert (sph.name, sph.clearance, sph.law, sph.history_size) == ("ball", 0.0, law, 4)
    states, q, _ = _symbols(a, b)
    shift = np.array([1e-4, -2e-4, 3e-5])
    qk = _q_of(_relative_poses(a, b, (0.1, 0.2, 0.3), shift))
    delta = _num(ca.Function("d", [q], [sph.penetrations(states)]), qk)
    assert delta == pytest.approx(_smooth(shift), rel=0, abs=ROUND)
    rev = penalty_version(nd.Revolute(a, b, J, (0, 0, 1), name="pin"), law, radius=R_PIN,
                          length=L, n_strips=3, axial_law=HERTZ, clearance=C)
    assert isinstance(rev, PenaltyRevoluteClearance)
    assert (rev.radius, rev.length, rev.clearance, rev.axial_clearance) == (R_PIN, L, C, 0.0)
    assert (rev.n_contacts, rev.axial_law) == (5, HERTZ)
    assert np.array_equal(rev.axis, [0, 0, 1]) and np.array_equal(rev.point, J)
    cyl = penalty_version(nd.Cylindrical(a, b, J, (0, 0, 1)), law, radius=R_PIN, length=L)
    assert type(cyl) is PenaltyCylindricalClearance and cyl.clearance == 0.0
    with pytest.raises(ValueError, match="revolute joint 'pin': give radius and length"):
        penalty_version(nd.Revolute(a, b, J, (0, 0, 1), name="pin"), law)
    with pytest.raises(TypeError, match="no penalty version of Prismatic"):
        penalty_version(nd.Prismatic(a, b, J, (0, 0, 1)), law)
    # overrides on a clearance joint: the same bore without play
    rc = penalty_version(_complementarity(a, b)["revolute"], law, clearance=0.0)
    assert (rc.clearance, rc.axial_clearance) == (0.0, CA)


def test_penalty_joint_runs_in_a_system():
    """A pendulum hanging on a penalty revolute joint: compiles (the memory is the element's
    contacts), runs, stays within a few Hertz penetrations of its play."""
    s = nd.System(gravity=(0, -9.81, 0))
    bar = s.add_body("bar", 1.0, (1e-4, 0.02, 0.02), position=(0.25, 0, 0))
    el = s.add_force(PenaltyRevoluteClearance(s.ground, bar, (0, 0, 0), (0, 0, 1), R_PIN, C, L,
                                              CA, nd.LankaraniNikravesh(1e9, 1.5, 0.8),
                                              n_strips=2, name="pin"))
    cs = s.compile()
    assert el.n_contacts == 4 and cs.n_history == 3 * 4 + 1
    res = nd.simulate(s, t_end=0.05, h=1e-3, progress=False)
    assert res.success
    assert np.isfinite(res.q).all()
    pen = ca.Function("d", [cs.q_sym], [el.penetrations(cs.states_of(el))])
    worst = max(float(np.asarray(pen(qk)).max()) for qk in res.q)
    assert worst < (10 * 9.81 / 1e9) ** (1 / 1.5) * 10


# --------------------------------------------------------------------------- validation
def test_validation_names_the_element_and_every_problem():
    s, a, b = _bodies()
    ok = nd.Hertz(1e9, 1.5)
    pereira = nd.Pereira(0.8, 2e11, 0.3, L, C, n_strips=3)
    s.add_force(PenaltySphericalClearance(a, b, J, -1e-4, ok, radius=-1.0, name="ball"))
    s.add_force(PenaltyCylindricalClearance(a, b, J, (0, 0, 2), 0.0, C, L, ok, n_strips=0,
                                            name="bore"))
    s.add_force(PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, pereira,
                                            n_strips=4, name="strips"))
    s.add_force(PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, 0.0, L, ok,
                                            n_strips=2.5, name="tilt", tilt_correction=True))
    s.add_force(PenaltyRevoluteClearance(a, b, J, (0, 0, 1), R_PIN, C, L, -CA, "steel",
                                         nd.Hertz(-1.0), name="rev"))
    s.add_force(PenaltyPrismaticClearance(a, b, J, (0, 0, 1), SQUARE[::-1], C, 0.05,
                                          nd.LankaraniNikravesh(1e9, 1.5, 1.5), name="slide"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    for msg in [
        "penalty spherical clearance joint 'ball': clearance must be >= 0, got -0.0001",
        "'ball': radius must be >= 0, got -1.0",
        "'bore': axis must be a unit vector",
        "'bore': radius must be > 0, got 0.0",
        "'bore': n_strips must be an integer >= 1, got 0",
        "'strips': law (Pereira) is set up for n_strips = 3, the joint has n_strips = 4",
        "'tilt': n_strips must be an integer >= 1, got 2.5",
        "'tilt': tilt_correction needs clearance > 0",
        "penalty revolute clearance joint 'rev': axial_clearance must be >= 0, got -0.0001",
        "'rev': law must be a ContactLaw, got str",
        "'rev': stiffness must be > 0, got -1.0",
        "penalty prismatic clearance joint 'slide': profile must be convex and counter-clockwise",
        "'slide': restitution must be in (0, 1], got 1.5",
    ]:
        assert msg in text, msg
    assert text.count("'slide'") == 2


def test_pereira_with_matching_strips_is_valid():
    _, a, b = _bodies()
    law = nd.Pereira(0.8, 2e11, 0.3, L, C, n_strips=4)
    el = PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, C, L, law, n_strips=4)
    assert el.problems() == []
    other = PenaltyCylindricalClearance(a, b, J, (0, 0, 1), R_PIN, 2 * C, 2 * L, law, n_strips=4,
                                        name="x")
    text = " ".join(other.problems())
    assert "length 0.02 differs from the bore length 0.04" in text
    assert "radial_clearance 0.0001 differs from the joint's clearance 0.0002" in text


@pytest.mark.slow
def test_penalty_revolute_with_play_steps_past_its_oscillating_newton_iterates():
    """Seed 001's slider-crank with revolute A as a 1 mm penalty joint at the default h, on
    the bearing data of the time (``bearing="soft"``): a strip contact re-closes at ~2e-5
    m/s, its hysteresis saturates on both sides of the root, and the midpoint step's Newton
    iterates turned back and forth between them; the step failed at t = 2.097 s at every h
    down to 3e-5 s. Bisected, the run goes on, each step's equations met."""
    from problems import slider_crank
    system = slider_crank.build(model="penalty", revolute_clearance=1e-3, bearing="soft")
    res = nd.simulate(system, 2.2, h=1e-3, progress=False)
    assert res.success, res.message
    assert res.t[-1] == pytest.approx(2.2)
    assert res.info["run"]["max_eom_residual"] < 1e-6
