"""Penalty clearance joints, joint stops and bushings: geometry by hand, action = reaction,
conservativeness by finite differences, closed forms and scipy references."""
import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import nlpdyn as nd
from nlpdyn.forces.bushing import Bushing
from nlpdyn.forces.joint_stops import RotationStop, TranslationStop
from nlpdyn.forces.penalty_joints import (PenaltyPrismaticClearance, PenaltyRevoluteClearance,
                                          PenaltySphericalClearance, penalty_version)
from nlpdyn.rotations import G_matrix, from_rotation_vector

HERTZ = nd.Hertz(1e6, 1.5)


def _two_bodies(gravity=(0, 0, 0)):
    s = nd.System(gravity=gravity)
    a = s.add_body("a", 1.0, (0.01, 0.02, 0.03), position=(0, 0, 0))
    b = s.add_body("b", 2.0, (0.02, 0.03, 0.04), position=(0.3, 0, 0))
    return s, a, b


def _elements(a, b):
    triangle = np.array([[0.02, 0.0], [-0.01, 0.017], [-0.01, -0.017]])
    return {
        "spherical": PenaltySphericalClearance(a, b, (0.1, 0, 0), 1e-3, HERTZ, name="sph"),
        "revolute": PenaltyRevoluteClearance(a, b, (0.1, 0, 0), (0, 0, 1), 0.01, 1e-3, 0.02, 1e-3,
                                             HERTZ, n_strips=3, name="rev"),
        "prismatic": PenaltyPrismaticClearance(a, b, (0.1, 0, 0), (0, 0, 1), triangle, 1e-3, 0.05,
                                               HERTZ, name="pri"),
        "bushing": Bushing(a, b, (0.1, 0, 0), stiffness=(1e4, 2e4, 3e4), rotational_stiffness=(5, 6, 7),
                           name="bush"),
        "translation stop": TranslationStop(nd.Prismatic(a, b, (0.1, 0, 0), (0, 0, 1)), -1e-3, 1e-3,
                                            HERTZ, name="tstop"),
        "rotation stop": RotationStop(nd.Revolute(a, b, (0.1, 0, 0), (0, 0, 1)), -0.01, 0.01,
                                      nd.Hertz(10.0, 1.5), name="rstop"),
    }


def _perturbed_state(cs, rng, scale=2e-3):
    q, _ = cs.initial_state()
    for k in range(cs.n_bodies):
        q[7 * k:7 * k + 3] += scale * rng.standard_normal(3)
        rot = from_rotation_vector(0.02 * rng.standard_normal(3))
        p = q[7 * k + 3:7 * k + 7]
        from nlpdyn.rotations import quaternion_product
        q[7 * k + 3:7 * k + 7] = quaternion_product(p, rot)
    return q


def _qdot(cs, q, v):
    parts = []
    for k in range(cs.n_bodies):
        parts += [v[6 * k:6 * k + 3], 0.5 * np.asarray(G_matrix(q[7 * k + 3:7 * k + 7])).T @ v[6 * k + 3:6 * k + 6]]
    return np.concatenate(parts)


@pytest.mark.parametrize("kind", ["spherical", "revolute", "prismatic", "bushing",
                                  "translation stop", "rotation stop"])
def test_elastic_penalty_elements_are_conservative_and_action_equals_reaction(kind):
    """With an elastic law the generalised force is -dV/dq (virtual work: Q.v = -dV/dt along
    random velocities, by central differences), and forces and moments balance between the
    two bodies (global, about the origin)."""
    s, a, b = _two_bodies()
    el = s.add_force(_elements(a, b)[kind])
    cs = s.compile()
    j = [e.name for e in cs.force_elements].index(el.name)
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(20):
        q = _perturbed_state(cs, rng)
        v = rng.standard_normal(cs.nv)
        Q = np.asarray(cs.element_forces(0.0, q, np.zeros(cs.nv), cs.initial_history()))[:, j]
        if np.abs(Q).max() == 0:
            continue
        checked += 1
        eps = 1e-7
        dq = _qdot(cs, q, v)
        V = lambda x: float(cs.element_potentials(0.0, x, cs.initial_history())[j])  # noqa: E731
        dVdt = (V(q + eps * dq) - V(q - eps * dq)) / (2 * eps)
        assert Q @ v == pytest.approx(-dVdt, rel=1e-5, abs=1e-6 * np.abs(Q).max())
        # action = reaction: sum of global forces, sum of moments about the origin
        from nlpdyn.rotations import rotation_matrix
        total_f, total_m = np.zeros(3), np.zeros(3)
        for k in range(2):
            p = q[7 * k + 3:7 * k + 7] / np.linalg.norm(q[7 * k + 3:7 * k + 7])
            f, n_body = Q[6 * k:6 * k + 3], Q[6 * k + 3:6 * k + 6]
            total_f += f
            total_m += rotation_matrix(p) @ n_body + np.cross(q[7 * k:7 * k + 3], f)
        assert np.abs(total_f).max() < 1e-9 * np.abs(Q).max()
        assert np.abs(total_m).max() < 1e-9 * np.abs(Q).max()
    assert checked >= 5


def test_strip_penetrations_of_a_tilted_bore_by_hand():
    """Bore tilted by angle phi about X around the joint point and shifted by e along Y: strip
    k's centre at axial position z_k is at radial distance |e + z_k sin(phi)| (to first order
    the tilt only shifts it along Y by z_k sin(phi), and its axial position is z_k cos(phi))."""
    s, a, b = _two_bodies()
    el = PenaltyRevoluteClearance(a, b, (0.1, 0, 0), (0, 0, 1), 0.01, 1e-4, 0.02, 1e-4, HERTZ,
                                  n_strips=4, name="rev")
    s.add_force(el)
    cs = s.compile()
    q, _ = cs.initial_state()
    phi, e = 2e-3, 5e-5
    rot = from_rotation_vector(np.array([-phi, 0, 0]))
    from nlpdyn.rotations import rotation_matrix
    R = rotation_matrix(rot)
    joint = np.array([0.1, 0, 0])
    q[7:10] = joint + R @ (b.position - joint) + np.array([0, e, 0])
    q[10:14] = rot
    states = [cs._states[id(a)], cs._states[id(b)]]
    pen = ca.Function("pen", [cs.q_sym], [el.penetrations(states)])
    delta = np.asarray(pen(q)).ravel()
    z = np.array([(4 - 2 * k + 1) * 0.02 / 8 for k in range(1, 5)])
    radial = np.hypot(e + z * np.sin(phi), 0.0)
    assert np.allclose(delta[:4], radial - 1e-4, atol=1e-15 + 1e-12)
    # axial faces: the tilt pulls the bore's end centres in along Z by L/2 (1 - cos(phi))
    assert np.allclose(delta[4:], -1e-4 - 0.01 * (1 - np.cos(phi)), rtol=0, atol=1e-15)


def test_penalty_version_has_the_complementarity_geometry():
    """penalty_version(joint) penetrations = -gaps of the complementarity joint, everywhere."""
    s, a, b = _two_bodies()
    comp = [nd.SphericalClearance(a, b, (0.1, 0, 0), 1e-3, name="c1"),
            nd.RevoluteClearance(a, b, (0.1, 0, 0), (0, 0, 1), 0.01, 1e-3, 0.02, 5e-4, name="c2"),
            nd.PrismaticClearance(a, b, (0.1, 0, 0), (0, 0, 1),
                                  [[0.02, 0.0], [-0.01, 0.017], [-0.01, -0.017]], 1e-3, 0.05, name="c3")]
    for j in comp:
        s.add_joint(j)
    cs = s.compile()
    states = [cs._states[id(a)], cs._states[id(b)]]
    rng = np.random.default_rng(0)
    for joint in comp:
        pen = penalty_version(joint, HERTZ, n_strips=2)
        gaps = ca.Function("g", [cs.q_sym], [joint.gaps(states)])
        pens = ca.Function("p", [cs.q_sym], [pen.penetrations(states)])
        for _ in range(5):
            q = _perturbed_state(cs, rng, 3e-4)
            g, d = np.asarray(gaps(q)).ravel(), np.asarray(pens(q)).ravel()
            if isinstance(joint, nd.RevoluteClearance):   # strips at the bore's ends for N = 2?
                assert np.allclose(d[-2:], -g[-2:], atol=1e-15)   # the axial faces
            else:
                assert np.allclose(d, -g, atol=1e-12)


def test_ball_in_socket_rests_at_the_hertz_penetration():
    """A 2 kg ball hanging in a socket with 0.1 mm clearance, LN law, implicit: it settles at
    |d| = c + (m g / K)^(1/n)."""
    s = nd.System(gravity=(0, 0, -9.81))
    ball = s.add_body("ball", 2.0, (1e-3, 1e-3, 1e-3))
    law = nd.LankaraniNikravesh(5e6, 1.5, 0.5)
    s.add_force(PenaltySphericalClearance(s.ground, ball, (0, 0, 0), 1e-4, law, name="socket"))
    res = nd.simulate(s, t_end=0.5, h=1e-3, progress=False)
    assert res.success
    expected = 1e-4 + (2.0 * 9.81 / 5e6) ** (1 / 1.5)
    assert -res.position("ball")[-1, 2] == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("gravity", [(0, 0, -9.81), (3.0, -4.0, 12.0)])
def test_ball_falling_in_its_socket_remembers_its_speed_at_closure(gravity):
    """A ball released at the centre of a socket with 1 mm clearance falls onto its wall: the
    law's impact speed is sqrt(2 |g| c) within 1e-6 (the approach rate at the start of the
    closing step was up to |g| h lower)."""
    s = nd.System(gravity=gravity)
    ball = s.add_body("ball", 2.0, (1e-3, 1e-3, 1e-3))
    law = nd.LankaraniNikravesh(5e6, 1.5, 0.5)
    s.add_force(PenaltySphericalClearance(s.ground, ball, (0, 0, 0), 1e-3, law, name="socket"))
    res = nd.simulate(s, t_end=0.03, h=1e-3, progress=False)
    assert res.success
    closed = np.argmax(np.linalg.norm(res.position("ball"), axis=1) > 1e-3)
    assert closed > 0
    expected = np.sqrt(2 * np.linalg.norm(gravity) * 1e-3)
    assert res.memory["socket"][closed, 0] == pytest.approx(expected, rel=1e-6)


def _slider_with_stop(law, h, evaluation="implicit", scheme=None):
    s = nd.System(gravity=(0, 0, 0))
    slider = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3), velocity=(1.0, 0, 0))
    joint = s.add_joint(nd.Prismatic(s.ground, slider, (0, 0, 0), (1, 0, 0), name="slide"))
    stop = TranslationStop(joint, -0.01, 0.001, law, name="stop")
    stop.evaluation = evaluation
    s.add_force(stop)
    return nd.simulate(s, t_end=0.01, h=h, progress=False, scheme=scheme)


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["euler", "midpoint"])
@pytest.mark.parametrize("evaluation", ["backward_euler", "implicit"])
def test_translation_stop_matches_scipy(evaluation, scheme):
    """A slider at 1 m/s hits a Hertz stop 1 mm away (still in contact at t_end): against
    the 1-dof ODE integrated by scipy. Backward Euler converges at first order (penetration,
    velocity). The energy-consistent step converges at second order: the position at t_end
    and the velocity, with scheme "euler" the step's velocity, which is the velocity of the
    step's middle, t - h/2; with "midpoint" the end's."""
    K, n = 1e6, 1.5
    law = nd.Hertz(K, n)

    def rhs(t, y):
        return [y[1], -K * max(y[0] - 0.001, 0.0) ** n]
    ref = solve_ivp(rhs, (0, 0.01), [0.0, 1.0], rtol=1e-11, atol=1e-14, max_step=1e-5,
                    dense_output=True)
    max_x, v_end = ref.y[0].max(), ref.y[1, -1]
    errors = []
    for h in (4e-5, 2e-5, 1e-5):
        res = _slider_with_stop(law, h, evaluation, scheme)
        x, v = res.position("slider")[:, 0], res.velocity("slider")[-1, 0]
        if evaluation == "backward_euler":
            errors.append((abs(x.max() - max_x), abs(v - v_end)))
        else:
            t_v = 0.01 - h / 2 if scheme == "euler" else 0.01
            errors.append((abs(x[-1] - ref.y[0, -1]), abs(v - ref.sol(t_v)[1])))
    errors = np.array(errors)
    if evaluation == "backward_euler":
        assert np.all(errors[0] / errors[1] > 1.6) and np.all(errors[1] / errors[2] > 1.6)
        assert errors[-1, 1] < 0.05
    else:
        assert np.all(errors[0] / errors[1] > 3.5) and np.all(errors[1] / errors[2] > 3.5)
        assert errors[-1].max() < 1e-5


def test_rotation_stop_angle_and_moment_by_hand():
    s, a, b = _two_bodies()
    joint = nd.Revolute(a, b, (0.1, 0, 0), (0, 0, 1))
    stop = RotationStop(joint, -0.2, 0.3, nd.Hertz(50.0, 1.0), name="rstop")
    s.add_force(stop)
    cs = s.compile()
    q, _ = cs.initial_state()
    theta = 0.5
    q[10:14] = [np.cos(theta / 2), 0, 0, np.sin(theta / 2)]
    states = [cs._states[id(a)], cs._states[id(b)]]
    angle = float(ca.Function("a", [cs.q_sym], [stop.coordinate(states)])(q))
    assert angle == pytest.approx(theta, rel=1e-14)
    Q = np.asarray(cs.element_forces(0.0, q, np.zeros(cs.nv), cs.initial_history()))[:, 1]
    # moment on b about its body z axis (= global z): -50 (0.5 - 0.3)
    assert Q[9:12] == pytest.approx([0, 0, -10.0], abs=1e-12)
    assert Q[3:6] == pytest.approx([0, 0, 10.0], abs=1e-12)


def test_bushing_oscillation_frequencies_with_scipy():
    """A body on a bushing to the ground (no gravity): translation along Y oscillates at
    sqrt(k_y/m), rotation about Z at sqrt(k_rz/J_z): simulate_ode (DOP853) vs closed form."""
    s = nd.System(gravity=(0, 0, 0))
    body = s.add_body("b", 2.0, (0.025, 0.03, 0.04), velocity=(0, 0.1, 0), angular_velocity=(0, 0, 0.3))
    s.add_force(Bushing(s.ground, body, (0, 0, 0), stiffness=(1e3, 2e3, 3e3),
                        rotational_stiffness=(1.0, 2.0, 4.0), name="bush"))
    res = nd.simulate_ode(s, 0.5, method="DOP853", rtol=1e-10, atol=1e-12, progress=False)
    wy, wr = np.sqrt(2e3 / 2.0), np.sqrt(4.0 / 0.04)
    y = res.position("b")[:, 1]
    assert np.abs(y - 0.1 / wy * np.sin(wy * res.t)).max() < 1e-8
    rz = 2 * np.arctan2(res.orientation("b")[:, 3], res.orientation("b")[:, 0])
    assert np.abs(rz - 0.3 / wr * np.sin(wr * res.t)).max() < 1e-8


def test_validation_names_the_element():
    s, a, b = _two_bodies()
    s.add_force(PenaltySphericalClearance(a, b, (0.1, 0, 0), -1e-3, HERTZ, name="bad_ball"))
    s.add_force(TranslationStop(nd.Revolute(a, b, (0.1, 0, 0), (0, 0, 1)), 0.1, 0.2, HERTZ,
                                name="bad_stop"))
    s.add_force(RotationStop(nd.Revolute(a, b, (0.1, 0, 0), (0, 0, 1)), 0.3, -0.2,
                             nd.Hertz(-1.0), name="bad_rot"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    assert "'bad_ball': clearance must be >= 0" in text
    assert "'bad_stop': needs a Prismatic or Cylindrical joint" in text
    assert "'bad_rot': lower (0.3) must be < upper (-0.2)" in text
    assert "'bad_rot': stiffness must be > 0" in text
