"""Bushing: relative motion by hand, action = reaction, virtual work against the potential,
damping power, CasADi Jacobians against finite differences, oscillation frequencies against
closed forms (scipy-integrated and the stepper's own discrete closed form)."""
import casadi as ca
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import nlpdyn as nd
from nlpdyn.body import BodyState
from nlpdyn.forces.bushing import Bushing, inverse_left_jacobian, rotation_vector
from nlpdyn.forces.contact_laws import LankaraniNikravesh, TabulatedBushing
from nlpdyn.ode import simulate_ode
from nlpdyn.rotations import G_matrix, from_rotation_matrix, rotation_matrix

POINT = np.array([0.1, 0.05, -0.02])
AXES = Rotation.from_rotvec([0.3, -0.5, 0.7]).as_matrix().T     # rows: the bushing axes
TABLE = TabulatedBushing([-2e-3, 0.0, 1e-3, 2e-3], [-500.0, 0.0, 100.0, 400.0], damping=2.0)


def _bodies():
    s = nd.System(gravity=(0, 0, 0))
    a = s.add_body("a", 1.0, (0.01, 0.02, 0.03), position=(0, 0, 0),
                   orientation=from_rotation_matrix(Rotation.from_rotvec([0.2, 0.1, -0.3]).as_matrix()))
    b = s.add_body("b", 2.0, (0.02, 0.03, 0.04), position=(0.3, 0.1, 0),
                   orientation=from_rotation_matrix(Rotation.from_rotvec([-0.4, 0.6, 0.1]).as_matrix()))
    return s, a, b


def _bushing(a, b, **kw):
    args = {"stiffness": (TABLE, 2e4, 3e4), "damping": (5.0, 6.0, 7.0),
            "rotational_stiffness": (5.0, 6.0, 7.0), "rotational_damping": (0.1, 0.2, 0.3),
            "axes": AXES, "name": "bush"}
    args.update(kw)
    return Bushing(a, b, POINT, **args)


def _placed_states(a, b, u, theta, rng):
    """Numeric states with the parent anywhere and the child at relative translation u and
    rotation vector theta (bushing frame) from it."""
    Ap = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix()
    rp = rng.standard_normal(3)
    Fp = Ap @ a.rotation0.T @ AXES.T
    Fc = Fp @ Rotation.from_rotvec(theta).as_matrix()
    Ac = Fc @ (b.rotation0.T @ AXES.T).T
    xc = rp + Ap @ a.local_point(POINT) + Fp @ u
    rc = xc - Ac @ b.local_point(POINT)
    v = rng.standard_normal(12)
    return [BodyState(a, ca.DM(rp), ca.DM(from_rotation_matrix(Ap)), ca.DM(v[:3]), ca.DM(v[3:6])),
            BodyState(b, ca.DM(rc), ca.DM(from_rotation_matrix(Ac)), ca.DM(v[6:9]), ca.DM(v[9:]))]


def _np(x):
    return np.asarray(ca.evalf(x), dtype=float).ravel()


def _mat(x):
    return np.asarray(ca.evalf(x), dtype=float)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-5, 0.3, 1.5, 2.5, 3.1])
def test_relative_motion_by_hand(angle):
    """u and theta come back exactly (identity tier) for hand-placed states, small to
    nearly pi."""
    rng = np.random.default_rng(int(angle * 1e3) + 1)
    _, a, b = _bodies()
    el = _bushing(a, b)
    u = 1e-2 * rng.standard_normal(3)
    axis = rng.standard_normal(3)
    theta = angle * axis / np.linalg.norm(axis)
    states = _placed_states(a, b, u, theta, rng)
    got_u, got_theta = (_np(x) for x in el.relative_motion(states))
    assert got_u == pytest.approx(u, abs=1e-14)
    assert got_theta == pytest.approx(theta, abs=1e-13)


def test_rotation_vector_and_its_jacobian():
    """rotation_vector matches scipy's log map; J_l^-1 is the derivative of the log under a
    left perturbation (central differences)."""
    rng = np.random.default_rng(0)
    for angle in (1e-7, 1e-4, 0.01, 0.7, 2.0, 3.0):
        axis = rng.standard_normal(3)
        theta = angle * axis / np.linalg.norm(axis)
        R = Rotation.from_rotvec(theta)
        x, y, z, w = R.as_quat()
        for sign in (1, -1):     # both Euler-parameter signs give the principal vector
            assert _np(rotation_vector(ca.DM(sign * np.array([w, x, y, z])))) == \
                pytest.approx(theta, abs=1e-15)
        J = np.asarray(ca.evalf(inverse_left_jacobian(ca.DM(theta))))
        eps = 1e-6
        fd = np.column_stack([(Rotation.from_rotvec(eps * e) * R).as_rotvec()
                              - (Rotation.from_rotvec(-eps * e) * R).as_rotvec()
                              for e in np.eye(3)]) / (2 * eps)
        assert J == pytest.approx(fd, abs=1e-8)


def test_action_equals_reaction():
    """Forces and moments (about the origin, global) of the two bodies cancel."""
    rng = np.random.default_rng(7)
    _, a, b = _bodies()
    el = _bushing(a, b)
    for _ in range(10):
        states = _placed_states(a, b, 3e-3 * rng.standard_normal(3), rng.standard_normal(3), rng)
        wr = el.wrenches(states, 0.0)
        f = [_np(w[0]) for w in wr]
        m = [np.cross(_np(s.r), fi) + _mat(s.A) @ _np(w[1])
             for s, fi, w in zip(states, f, wr)]
        scale = max(np.abs(f).max(), np.abs(m).max())
        assert np.abs(f[0] + f[1]).max() <= 1e-12 * scale
        assert np.abs(m[0] + m[1]).max() <= 1e-12 * scale


def _compiled(el_kwargs=None, ground=False):
    s, a, b = _bodies()
    parent = s.ground if ground else a
    el = s.add_force(_bushing(parent, b, **(el_kwargs or {})))
    cs = s.compile()
    j = [e.name for e in cs.force_elements].index(el.name)
    return cs, el, j


def _random_q(cs, rng, turn=1.0):
    q, _ = cs.initial_state()
    for k in range(cs.n_bodies):
        q[7 * k:7 * k + 3] += 2e-3 * rng.standard_normal(3)
        p = from_rotation_matrix(Rotation.from_rotvec(turn * rng.standard_normal(3)).as_matrix()
                                 @ rotation_matrix(q[7 * k + 3:7 * k + 7]))
        q[7 * k + 3:7 * k + 7] = p
    return q


def _qdot(cs, q, v):
    parts = []
    for k in range(cs.n_bodies):
        G = np.asarray(G_matrix(q[7 * k + 3:7 * k + 7]))
        parts += [v[6 * k:6 * k + 3], 0.5 * G.T @ v[6 * k + 3:6 * k + 6]]
    return np.concatenate(parts)


@pytest.mark.parametrize("ground", [False, True])
def test_generalised_force_is_minus_the_gradient_of_the_potential(ground):
    """Virtual work: Q(q, v = 0) . v = -dV/dt along random velocities (central differences),
    for relative rotations up to ~2 rad (where J_l^-T matters) and a tabulated law."""
    cs, _, j = _compiled(ground=ground)
    rng = np.random.default_rng(11)
    z = cs.initial_history()
    for _ in range(15):
        q = _random_q(cs, rng)
        v = rng.standard_normal(cs.nv)
        Q = np.asarray(cs.element_forces(0.0, q, np.zeros(cs.nv), z))[:, j]
        dq = _qdot(cs, q, v)
        eps = 1e-6
        V = lambda x: float(cs.element_potentials(0.0, x, cs.initial_history())[j])
        dV = (V(q + eps * dq) - V(q - eps * dq)) / (2 * eps)
        assert Q @ v == pytest.approx(-dV, rel=1e-6, abs=1e-9 * np.abs(Q).max())


def test_damping_power_is_minus_the_dissipation():
    """With damping only, Q . v = -(du^T C du + dtheta^T C_r dtheta) <= 0 (identity tier)."""
    cs, el, j = _compiled({"stiffness": 0.0, "rotational_stiffness": 0.0})
    fn = ca.Function("rates", [cs.q_sym, cs.v_sym],
                     list(el.relative_rates(cs.states_of(el))))
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, v = _random_q(cs, rng), rng.standard_normal(cs.nv)
        Q = np.asarray(cs.element_forces(0.0, q, v, cs.initial_history()))[:, j]
        du, dth = (np.asarray(x).ravel() for x in fn(q, v))
        dissipation = du @ (el.damping * du) + dth @ (el.rotational_damping * dth)
        assert Q @ v == pytest.approx(-dissipation, rel=1e-12)


def test_rates_are_the_time_derivatives_of_the_relative_motion():
    cs, el, _ = _compiled()
    states = cs.states_of(el)
    u, theta = el.relative_motion(states)
    du, dth = el.relative_rates(states)
    fn = ca.Function("f", [cs.q_sym, cs.v_sym], [ca.vertcat(u, theta), ca.vertcat(du, dth)])
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, v = _random_q(cs, rng), rng.standard_normal(cs.nv)
        dq, eps = _qdot(cs, q, v), 1e-6
        fd = (np.asarray(fn(q + eps * dq, v)[0]) - np.asarray(fn(q - eps * dq, v)[0])).ravel() / (2 * eps)
        assert np.asarray(fn(q, v)[1]).ravel() == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_casadi_jacobians_match_finite_differences():
    """dQ/dq and dQ/dv of the compiled element against central differences."""
    cs, _, j = _compiled()
    z = cs.initial_history()
    Q = cs.element_forces(cs.t_sym, cs.q_sym, cs.v_sym, z)[:, j]
    jac = ca.Function("J", [cs.q_sym, cs.v_sym], [ca.jacobian(Q, cs.q_sym), ca.jacobian(Q, cs.v_sym)])
    fQ = ca.Function("Q", [cs.q_sym, cs.v_sym], [ca.substitute(Q, cs.t_sym, 0)])
    rng = np.random.default_rng(4)
    q, v = _random_q(cs, rng), rng.standard_normal(cs.nv)
    Jq, Jv = (np.asarray(x) for x in jac(q, v))
    eps = 1e-6
    for k in range(cs.nq):
        e = np.zeros(cs.nq)
        e[k] = eps
        fd = (np.asarray(fQ(q + e, v)) - np.asarray(fQ(q - e, v))).ravel() / (2 * eps)
        assert Jq[:, k] == pytest.approx(fd, rel=1e-5, abs=1e-5 * np.abs(Jq).max())
    for k in range(cs.nv):      # Q is affine in v: a unit step is exact
        e = np.zeros(cs.nv)
        e[k] = 1.0
        fd = (np.asarray(fQ(q, v + e)) - np.asarray(fQ(q, v - e))).ravel() / 2
        assert Jv[:, k] == pytest.approx(fd, rel=1e-9, abs=1e-12 * np.abs(Jv).max())


def test_tabulated_law_gives_the_table_force():
    """u = 1.5e-3 along the first bushing axis: the table gives 250 N back along it."""
    rng = np.random.default_rng(9)
    _, a, b = _bodies()
    el = _bushing(a, b, damping=0.0)
    states = _placed_states(a, b, np.array([1.5e-3, 0, 0]), np.zeros(3), rng)
    for s in states:
        s.rdot, s.w = ca.DM.zeros(3), ca.DM.zeros(3)
    F, _ = el.loads(states)
    assert _np(F) == pytest.approx([250.0, 0, 0], abs=1e-10)
    f_child = _np(el.wrenches(states, 0.0)[1][0])
    axis1 = _mat(el.frame(states[0]))[:, 0]       # the parent's first bushing axis
    assert f_child == pytest.approx(-250.0 * axis1, abs=1e-10)


def _oscillator(k, kr, c=0.0):
    """A 2 kg body on a bushing to the ground at its centre of mass; its principal axes are
    the bushing axes (rotated from global)."""
    s = nd.System(gravity=(0, 0, 0))
    v0 = 0.1 * AXES[1]                       # along the second bushing axis
    w0 = np.array([0, 0, 1.5])               # body frame = bushing frame: about axis 3
    body = s.add_body("b", 2.0, (0.025, 0.03, 0.04), position=POINT,
                      orientation=from_rotation_matrix(AXES.T), velocity=v0, angular_velocity=w0)
    s.add_force(Bushing(s.ground, body, POINT, stiffness=k, rotational_stiffness=kr, damping=c,
                        rotational_damping=c / 100, axes=AXES, name="bush"))
    return s


def test_translation_and_torsion_frequencies_with_scipy():
    """sqrt(k/m) and sqrt(k_r/J) (torsion amplitude 0.95 rad): scipy's DOP853 through
    simulate_ode against the closed forms."""
    k, kr = (1e3, 2e3, 3e3), (1.0, 2.0, 0.1)
    res = simulate_ode(_oscillator(k, kr), 0.8, method="DOP853", rtol=1e-11, atol=1e-13,
                       progress=False)
    wy, wr = np.sqrt(2e3 / 2.0), np.sqrt(0.1 / 0.04)
    y = (res.position("b") - POINT) @ AXES[1]
    assert np.abs(y - 0.1 / wy * np.sin(wy * res.t)).max() < 1e-9
    p0 = from_rotation_matrix(AXES.T)
    rel = [Rotation.from_matrix(rotation_matrix(p0).T @ rotation_matrix(p)).as_rotvec()
           for p in res.orientation("b")]
    assert np.abs(np.array(rel)[:, 2] - 1.5 / wr * np.sin(wr * res.t)).max() < 1e-8


@pytest.mark.parametrize("scheme", ["euler", "midpoint"])
@pytest.mark.parametrize("h", [1e-3, 2e-4])
def test_stepper_translation_matches_its_discrete_closed_form(h, scheme):
    """The spring evaluated explicitly, x_n = x_1 sin(n phi) / sin(phi), cos(phi) =
    1 - (h w)^2 / 2 (identity tier): scheme "euler" (semi-implicit Euler, the spring at the
    start of the step) x_1 = h v0; "midpoint" (Stormer-Verlet, the spring at the midpoint)
    x_1 = h v0 (1 - (h w)^2 / 4). The period error is O(h^2) in both."""
    res = nd.simulate(_oscillator(2e3, 0.0), 0.3, h=h, progress=False, scheme=scheme)
    w = np.sqrt(2e3 / 2.0)
    phi = np.arccos(1 - (h * w) ** 2 / 2)
    x1 = h * 0.1 * (1 if scheme == "euler" else 1 - (h * w) ** 2 / 4)
    n = np.arange(len(res.t))
    y = (res.position("b") - POINT) @ AXES[1]
    assert np.abs(y - x1 * np.sin(n * phi) / np.sin(phi)).max() <= 1e-12
    assert abs(phi / h - w) <= (h * w) ** 2 * w / 24 * 1.01


@pytest.mark.slow
def test_damping_dissipates():
    """A damped bushing (scipy run): the energy never rises, and what it loses is the
    integral of c du^2 + c_r dtheta^2 (trapezoid rule over steps of at most 1e-4 s:
    relative error ~ (h w)^2 / 12 ~ 1e-7)."""
    system = _oscillator(2e3, 1.0, c=20.0)
    res = simulate_ode(system, 0.5, method="DOP853", rtol=1e-11, atol=1e-13, max_step=1e-4,
                       progress=False)
    E = res.energy
    assert np.all(np.diff(E) <= 1e-10 * E[0])
    assert E[-1] < 0.2 * E[0]
    cs, (el,) = system.compile(), system.forces
    rates = ca.Function("r", [cs.q_sym, cs.v_sym], [ca.vertcat(*el.relative_rates(cs.states_of(el)))])
    r = np.asarray(rates.map(len(res.t))(res.q.T, res.v.T)).T
    power = r[:, :3] ** 2 @ el.damping + r[:, 3:] ** 2 @ el.rotational_damping
    assert E[0] - E[-1] == pytest.approx(np.trapezoid(power, res.t), rel=1e-6)


def test_validation_names_the_element():
    s, a, b = _bodies()
    s.add_force(Bushing(a, b, POINT, stiffness=(1.0, -2.0), name="short"))
    s.add_force(Bushing(a, b, POINT, stiffness=(1.0, -2.0, "x"), damping=-1,
                        rotational_stiffness=LankaraniNikravesh(1e5), axes=2 * np.eye(3),
                        name="bad"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    assert "bushing 'short': stiffness must be a number, a ContactLaw or 3 of them, got 2 entries" in text
    assert "bushing 'bad': stiffness[1] must be a finite number >= 0" in text
    assert "bushing 'bad': stiffness[2] must be a finite number >= 0" in text
    assert "bushing 'bad': damping must be a number >= 0" in text
    assert "bushing 'bad': rotational_stiffness[0] (LankaraniNikravesh) needs an impact velocity" in text
    assert "bushing 'bad': axes must be 3 orthonormal right-handed rows" in text
