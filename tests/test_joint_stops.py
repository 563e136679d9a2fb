"""Joint stops: joint coordinates by hand, rates, virtual work, action = reaction, CasADi
Jacobians against finite differences, 1-dof impacts against scipy's solve_ivp, the
Lankarani-Nikravesh energy relation, the impact-velocity memory and validation."""
import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import nlpdyn as nd
from nlpdyn.body import BodyState
from nlpdyn.forces.contact_laws import (
    Hertz,
    LankaraniNikravesh,
    LinearBushing,
    ModifiedKelvinVoigt,
)
from nlpdyn.forces.joint_stops import RotationStop, TranslationStop
from nlpdyn.forces.penalty_joints import PenaltyRevoluteClearance
from nlpdyn.rotations import (
    G_matrix,
    from_axis_angle,
    from_rotation_matrix,
    rotation_matrix,
)

POINT = np.array([0.1, 0.02, -0.03])
AXIS = np.array([1.0, 2.0, 2.0]) / 3.0


def _bodies(gravity=(0, 0, 0)):
    s = nd.System(gravity=gravity)
    a = s.add_body("a", 1.0, (0.01, 0.02, 0.03), position=(0, 0, 0),
                   orientation=from_rotation_matrix(Rotation.from_rotvec([0.2, 0.1, -0.3]).as_matrix()))
    b = s.add_body("b", 2.0, (0.02, 0.03, 0.04), position=(0.3, 0.1, 0),
                   orientation=from_rotation_matrix(Rotation.from_rotvec([-0.4, 0.6, 0.1]).as_matrix()))
    return s, a, b


def _np(x):
    return np.asarray(ca.evalf(x), dtype=float).ravel()


def _placed(a, b, s, phi, rng):
    """Numeric states that satisfy the joint: parent anywhere, child slid by s along the
    axis and turned by phi about it, relative to the initial configuration."""
    Rp = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix()
    Ap = Rp @ a.rotation0
    rp = rng.standard_normal(3)
    xp = rp + Ap @ a.local_point(POINT)
    axis = Ap @ a.local_vector(AXIS)
    Ac = Rp @ rotation_matrix(from_axis_angle(AXIS, phi)) @ b.rotation0
    rc = xp + s * axis - Ac @ b.local_point(POINT)
    v = rng.standard_normal(12)
    return [BodyState(a, ca.DM(rp), ca.DM(from_rotation_matrix(Ap)), ca.DM(v[:3]), ca.DM(v[3:6])),
            BodyState(b, ca.DM(rc), ca.DM(from_rotation_matrix(Ac)), ca.DM(v[6:9]), ca.DM(v[9:]))]


@pytest.mark.parametrize("joint_type", [nd.Prismatic, nd.Cylindrical])
@pytest.mark.parametrize("s", [-0.3, -0.01, 0.0, 0.02, 0.5])
def test_displacement_by_hand(joint_type, s):
    rng = np.random.default_rng(3)
    _, a, b = _bodies()
    stop = TranslationStop(joint_type(a, b, POINT, AXIS), -0.1, 0.2, Hertz(1e6))
    phi = 0.7 if joint_type is nd.Cylindrical else 0.0
    states = _placed(a, b, s, phi, rng)
    assert float(_np(stop.displacement(states))[0]) == pytest.approx(s, abs=1e-14)
    assert _np(stop.penetrations(states)) == pytest.approx([-0.1 - s, s - 0.2], abs=1e-14)


@pytest.mark.parametrize("joint_type", [nd.Revolute, nd.Cylindrical])
@pytest.mark.parametrize("phi", [-3.1, -1.2, -0.3, 0.0, 1e-8, 0.5, 2.0, 3.1])
def test_angle_by_hand(joint_type, phi):
    """The angle is exact over (-pi, pi), whatever the slide of a cylindrical joint."""
    rng = np.random.default_rng(5)
    _, a, b = _bodies()
    stop = RotationStop(joint_type(a, b, POINT, AXIS), -0.5, 0.5, Hertz(10.0))
    s = 0.05 if joint_type is nd.Cylindrical else 0.0
    states = _placed(a, b, s, phi, rng)
    assert float(_np(stop.angle(states))[0]) == pytest.approx(phi, abs=1e-14)
    assert _np(stop.penetrations(states)) == pytest.approx([-0.5 - phi, phi - 0.5], abs=1e-14)


HERTZ_T, HERTZ_R = Hertz(1e6, 1.5), Hertz(10.0, 1.5)


def _elements(a, b, law_t=HERTZ_T, law_r=HERTZ_R):
    """Stops on ideal joints and, measured on their nominal joint, on clearance joints."""
    return {
        "translation": TranslationStop(nd.Cylindrical(a, b, POINT, AXIS), -1e-3, 1e-3, law_t,
                                       name="tstop"),
        "rotation": RotationStop(nd.Cylindrical(a, b, POINT, AXIS), -0.01, 0.01, law_r,
                                 name="rstop"),
        "translation clearance": TranslationStop(
            nd.CylindricalClearance(a, b, POINT, AXIS, 0.01, 1e-3, 0.02), -1e-3, 1e-3, law_t,
            name="tstop"),
        "rotation clearance": RotationStop(
            nd.RevoluteClearance(a, b, POINT, AXIS, 0.01, 1e-3, 0.02, 1e-3), -0.01, 0.01, law_r,
            name="rstop"),
        "rotation penalty": RotationStop(
            PenaltyRevoluteClearance(a, b, POINT, AXIS, 0.01, 1e-3, 0.02, 1e-3, law_t),
            -0.01, 0.01, law_r, name="rstop"),
    }


KINDS = ["translation", "rotation", "translation clearance", "rotation clearance",
         "rotation penalty"]


def _compiled(kind, **laws):
    s, a, b = _bodies()
    el = s.add_force(_elements(a, b, **laws)[kind])
    cs = s.compile()
    return cs, el, [e.name for e in cs.force_elements].index(el.name)


def _random_q(cs, rng):
    """Joint-violating states around the initial configuration, mostly beyond a stop."""
    q, _ = cs.initial_state()
    for k in range(cs.n_bodies):
        q[7 * k:7 * k + 3] += 5e-3 * rng.standard_normal(3)
        R = Rotation.from_rotvec(0.05 * rng.standard_normal(3)).as_matrix()
        q[7 * k + 3:7 * k + 7] = from_rotation_matrix(R @ rotation_matrix(q[7 * k + 3:7 * k + 7]))
    return q


def _qdot(cs, q, v):
    parts = []
    for k in range(cs.n_bodies):
        G = np.asarray(G_matrix(q[7 * k + 3:7 * k + 7]))
        parts += [v[6 * k:6 * k + 3], 0.5 * G.T @ v[6 * k + 3:6 * k + 6]]
    return np.concatenate(parts)


@pytest.mark.parametrize("kind", KINDS)
def test_rates_are_the_time_derivatives_of_the_penetrations(kind):
    cs, el, _ = _compiled(kind)
    states = cs.states_of(el)
    fn = ca.Function("f", [cs.q_sym, cs.v_sym], [el.penetrations(states), el.penetration_rates(states)])
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, v = _random_q(cs, rng), rng.standard_normal(cs.nv)
        dq, eps = _qdot(cs, q, v), 1e-6
        fd = (np.asarray(fn(q + eps * dq, v)[0]) - np.asarray(fn(q - eps * dq, v)[0])).ravel() / (2 * eps)
        assert np.asarray(fn(q, v)[1]).ravel() == pytest.approx(fd, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_elastic_stop_is_conservative_and_action_equals_reaction(kind):
    """Hertz stops on a violated joint: Q . v = -dV/dt along random velocities (central
    differences), and forces and moments about the origin cancel between the bodies."""
    cs, _, j = _compiled(kind)
    rng = np.random.default_rng(2)
    V = lambda x: float(cs.element_potentials(0.0, x, cs.initial_history())[j])
    checked = 0
    for _ in range(30):
        q = _random_q(cs, rng)
        Q = np.asarray(cs.element_forces(0.0, q, np.zeros(cs.nv), cs.initial_history()))[:, j]
        if not np.any(Q):
            continue
        checked += 1
        v = rng.standard_normal(cs.nv)
        dq, eps = _qdot(cs, q, v), 1e-7
        dV = (V(q + eps * dq) - V(q - eps * dq)) / (2 * eps)
        assert Q @ v == pytest.approx(-dV, rel=1e-6)
        force, moment = np.zeros(3), np.zeros(3)
        for k in range(2):
            A = rotation_matrix(q[7 * k + 3:7 * k + 7] / np.linalg.norm(q[7 * k + 3:7 * k + 7]))
            f = Q[6 * k:6 * k + 3]
            force += f
            moment += np.cross(q[7 * k:7 * k + 3], f) + A @ Q[6 * k + 3:6 * k + 6]
        assert np.abs(force).max() <= 1e-12 * np.abs(Q).max()
        assert np.abs(moment).max() <= 1e-12 * np.abs(Q).max()
    assert checked >= 10


@pytest.mark.parametrize("kind", KINDS)
def test_casadi_jacobians_match_finite_differences(kind):
    """dQ/dq and dQ/dv of a Kelvin-Voigt stop (velocity-dependent) at penetrating states."""
    cs, _, j = _compiled(kind, law_t=ModifiedKelvinVoigt(1e6, 0.1, 1.0),
                          law_r=ModifiedKelvinVoigt(10.0, 0.1, 1.0))
    Q = cs.element_forces(cs.t_sym, cs.q_sym, cs.v_sym, cs.initial_history())[:, j]
    Q = ca.substitute(Q, cs.t_sym, 0)
    fn = ca.Function("J", [cs.q_sym, cs.v_sym], [Q, ca.jacobian(Q, cs.q_sym), ca.jacobian(Q, cs.v_sym)])
    rng = np.random.default_rng(8)
    done = 0
    while done < 3:
        q, v = _random_q(cs, rng), 0.3 * rng.standard_normal(cs.nv)
        Q0, Jq, Jv = (np.asarray(x) for x in fn(q, v))
        if not np.any(Q0):
            continue
        done += 1
        eps = 1e-7
        for J, x, n in ((Jq, q, cs.nq), (Jv, v, cs.nv)):
            for k in range(n):
                e = np.zeros(n)
                e[k] = eps
                args = ((q + e, v), (q - e, v)) if x is q else ((q, v + e), (q, v - e))
                fd = (np.asarray(fn(*args[0])[0]) - np.asarray(fn(*args[1])[0])).ravel() / (2 * eps)
                assert J[:, k] == pytest.approx(fd, rel=1e-5, abs=1e-6 * np.abs(J).max())


# ---------------------------------------------------------------- 1-dof impacts vs scipy
M_SLIDER, V_IN, GAP = 1.0, 1.0, 1e-3
J_WHEEL, W_IN, GAP_R = 0.01, 2.0, 0.02


def _slider(law, evaluation):
    s = nd.System(gravity=(0, 0, 0))
    body = s.add_body("slider", M_SLIDER, (1e-3, 1e-3, 1e-3), velocity=V_IN * AXIS)
    joint = s.add_joint(nd.Prismatic(s.ground, body, (0, 0, 0), AXIS, name="slide"))
    stop = s.add_force(TranslationStop(joint, -0.05, GAP, law, name="stop"))
    stop.evaluation = evaluation
    return s


def _wheel(law, evaluation):
    s = nd.System(gravity=(0, 0, -9.81))
    body = s.add_body("wheel", 1.0, (J_WHEEL, J_WHEEL, J_WHEEL), position=POINT,
                      angular_velocity=W_IN * AXIS)
    joint = s.add_joint(nd.Revolute(s.ground, body, POINT, AXIS, name="hinge"))
    stop = s.add_force(RotationStop(joint, -0.5, GAP_R, law, name="stop"))
    stop.evaluation = evaluation
    return s


def _reference(law, mass, speed, gap, t_end):
    """The same impact as a 1-dof ODE x'' = -f(x - gap, x', v_in) / mass (scipy Radau)."""
    def rhs(t, y):
        return [y[1], -float(law.force(y[0] - gap, y[1], speed)) / mass]
    sol = solve_ivp(rhs, (0, t_end), [0.0, speed], method="Radau", rtol=1e-11, atol=1e-14,
                    max_step=1e-3 * t_end, dense_output=True)
    tt = np.linspace(0, t_end, 200001)
    return sol.sol(tt)[0].max() - gap, sol.y[1, -1]


SLIDER_CASES = {
    "hertz explicit": (Hertz(1e7, 1.5), "explicit"),
    "hertz implicit": (Hertz(1e7, 1.5), "implicit"),
    "ln implicit": (LankaraniNikravesh(1e7, 1.5, 0.75), "implicit"),
    "kv implicit": (ModifiedKelvinVoigt(1e7, 0.01, 0.1), "implicit"),
    "hertz backward_euler": (Hertz(1e7, 1.5), "backward_euler"),
    "ln backward_euler": (LankaraniNikravesh(1e7, 1.5, 0.75), "backward_euler"),
    "kv backward_euler": (ModifiedKelvinVoigt(1e7, 0.01, 0.1), "backward_euler"),
}


def _assert_converges(errors, steps, w_c, evaluation, whole_damping=False):
    """errors (n_h, 2): relative errors of the penetration and the exit speed at ``steps``.

    backward Euler, and the energy-consistent step of a law whose damping acts whole in the
    step (``damping_step`` "whole": the modified Kelvin-Voigt law, whose loading force above
    c_e K delta is all damping), converge at first order (finest error below 5 %, 2 % for
    the energy-consistent step). explicit (symplectic Euler) and the energy-consistent step
    of an elastic law or a "split" damping (half in the step, half in the next: the
    Lankarani-Nikravesh law): each error is below the floor of a sampled maximum,
    (h w_c)^2 / 4, or falls more than 2.2x at the next halving (faster than first order),
    the finest below 1e-4; "implicit" keeps an elastic law's exit speed to round-off."""
    errors = np.array(errors)
    if evaluation == "backward_euler" or whole_damping:
        assert np.all(errors[0] / errors[1] > 1.6) and np.all(errors[1] / errors[2] > 1.6)
        assert errors[-1].max() < (0.05 if evaluation == "backward_euler" else 0.02)
        return
    floor = (np.array(steps)[:, None] * w_c) ** 2 / 4
    fine = (errors <= floor)[:-1] | (errors[:-1] > 2.2 * errors[1:])
    assert np.all(fine), errors
    assert errors[-1].max() < 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("case", list(SLIDER_CASES))
def test_translation_stop_impact_against_scipy(case):
    """A 1 kg slider at 1 m/s hits a stop 1 mm ahead: maximum penetration and exit velocity
    against scipy's solution of the same 1-dof ODE, w_c = pi / contact duration."""
    law, evaluation = SLIDER_CASES[case]
    t_end = 0.008                     # the contact lasts ~5 ms
    pen_ref, v_ref = _reference(law, M_SLIDER, V_IN, GAP, t_end)
    steps = (4e-5, 2e-5, 1e-5)
    errors = []
    for h in steps:
        res = nd.simulate(_slider(law, evaluation), t_end, h=h, progress=False)
        assert res.success
        x = res.position("slider") @ AXIS
        errors.append((abs(x.max() - GAP - pen_ref) / pen_ref,
                       abs(res.velocity("slider")[-1] @ AXIS - v_ref) / V_IN))
        if case == "hertz implicit":        # elastic: the exit speed is the entry speed
            assert res.velocity("slider")[-1] @ AXIS == pytest.approx(-V_IN, rel=1e-10)
    assert v_ref < 0                 # it has left the stop
    _assert_converges(errors, steps, np.pi / 5.1e-3, evaluation,
                      evaluation == "implicit" and law.damping_step == "whole")


@pytest.mark.slow
@pytest.mark.parametrize("evaluation", ["implicit", "backward_euler"])
@pytest.mark.parametrize("law", [Hertz(50.0, 1.5), LankaraniNikravesh(50.0, 1.5, 0.75)],
                         ids=["hertz", "ln"])
def test_rotation_stop_impact_against_scipy(law, evaluation):
    """A wheel (J = 0.01) turning at 2 rad/s about a tilted hinge hits a stop 0.02 rad
    ahead (gravity has no moment about the hinge through the centre of mass)."""
    t_end = 0.15                      # the contact lasts ~0.09 s
    pen_ref, w_ref = _reference(law, J_WHEEL, W_IN, GAP_R, t_end)
    errors, steps = [], (4e-4, 2e-4, 1e-4)
    for h in steps:
        system = _wheel(law, evaluation)
        res = nd.simulate(system, t_end, h=h, progress=False)
        assert res.success
        cs, (stop,) = system.compile(), system.forces
        angle = np.asarray(ca.Function("a", [cs.q_sym], [stop.angle(cs.states_of(stop))])
                           .map(len(res.t))(res.q.T)).ravel()
        w = res.angular_velocity("wheel", frame="global") @ AXIS
        errors.append((abs(angle.max() - GAP_R - pen_ref) / pen_ref, abs(w[-1] - w_ref) / W_IN))
    assert w_ref < 0
    _assert_converges(errors, steps, np.pi / 0.09, evaluation)


@pytest.mark.slow
@pytest.mark.parametrize("e", [0.75, 0.9, 0.99])
def test_lankarani_nikravesh_stop_restitution(e):
    """The energy an LN stop takes, 1 - (v_out / v_in)^2, is 1 - e^2 to first order in
    (1 - e^2) (the law's derivation); the stepper (explicit, h = 1e-5) gives scipy's exit
    velocity for the same law to discretisation level."""
    law = LankaraniNikravesh(1e7, 1.5, e)
    _, v_ref = _reference(law, M_SLIDER, V_IN, GAP, 0.01)
    res = nd.simulate(_slider(law, "explicit"), 0.01, h=1e-5, progress=False)
    v_out = res.velocity("slider")[-1] @ AXIS
    assert v_out == pytest.approx(v_ref, rel=1e-2)
    loss = 1 - (v_out / V_IN) ** 2
    assert abs(loss / (1 - e**2) - 1) <= (1 - e**2)


def test_impact_velocity_memory():
    """The stop remembers, per side, its approach rate while open (with no earlier reading:
    the speed it closes at in the next step) and holds it while closed; a side closed from
    the start keeps 0. Rows 2-6 keep the rates, which sides were open, and the time."""
    s, a, b = _bodies()
    el = s.add_force(_elements(a, b, law_t=LankaraniNikravesh(1e6))["translation"])
    cs = s.compile()
    assert el.history_size == 7 and list(el.initial_history()) == [0] * 7
    nxt = ca.Function("n", [cs.q_sym, cs.v_sym, cs.z_sym],
                      [el.next_history(cs.states_of(el), 0.5, cs.z_sym),
                       el.penetrations(cs.states_of(el)), el.penetration_rates(cs.states_of(el))])
    q, v = cs.initial_state()
    shift = 2e-3 * AXIS               # child beyond the upper stop, moving further in
    q[7:10] += shift
    v[6:9] = 0.4 * AXIS
    z, delta, rate = (np.asarray(x).ravel() for x in nxt(q, v, np.zeros(7)))
    assert delta[1] > 0 and rate[1] > 0 and z[1] == 0 and z[0] == 0    # closed: held (0)
    assert list(z[2:]) == pytest.approx([rate[0], rate[1], 1, 0, 0.5])
    assert np.asarray(nxt(q, v, [0, 0.7, 0, 0, 0, 0, 0])[0]).ravel()[1] == 0.7   # held
    q[7:10] -= shift                                  # both open, approaching the upper stop
    z, delta, rate = (np.asarray(x).ravel() for x in nxt(q, v, [0.3, 0.7, 0, 0, 0, 0, 0]))
    assert delta[1] < 0 and z[1] == pytest.approx(rate[1]) and rate[1] > 0
    assert delta[0] < 0 and z[0] == 0                 # receding from the lower one
    q[7:10] -= 2 * shift                              # the lower one closed: held
    assert np.asarray(nxt(q, v, [0.3, 0.7, 0, 0, 0, 0, 0])[0]).ravel()[0] == 0.3


@pytest.mark.parametrize("pull, share", [(50.0, 0.25), (50.0, 0.75), (-50.0, 0.5),
                                         (-60.0, 0.9)])
def test_impact_speed_is_the_speed_at_closure(pull, share):
    """A slider on a prismatic joint along a skew axis, driven along it by gravity (``pull``
    m/s^2 toward the stop, or away from it with the slider thrown at 2 m/s), closes on a
    stop ``share`` of the way into a step of 1e-3 s: the law's impact speed is the closed
    form's, sqrt(v0^2 + 2 pull gap), within 1e-6 (the rate at the start of the closing step
    was up to 0.06 m/s off)."""
    v0 = 0.0 if pull > 0 else 2.0
    closing = (28 + share) * 1e-3
    gap = v0 * closing + pull * closing**2 / 2
    speed = v0 + pull * closing
    s = nd.System(gravity=tuple(pull * AXIS))
    slider = s.add_body("slider", 0.3, (1e-3, 2e-3, 3e-3), velocity=tuple(v0 * AXIS))
    slide = s.add_joint(nd.Prismatic(s.ground, slider, POINT, AXIS, name="slide"))
    s.add_force(TranslationStop(slide, -1.0, gap, LankaraniNikravesh(1e6), name="stop"))
    for settings in ({}, {"hysteresis_resolution": None}):   # the closing step shortened, or not
        res = nd.simulate(s, 0.035, h=1e-3, progress=False, **settings)
        assert res.success
        closed = np.argmax((res.position("slider") - res.position("slider")[0]) @ AXIS > gap)
        assert closing - 1e-9 <= res.t[closed] <= closing + 1e-3
        assert res.memory["stop"][closed, 1] == pytest.approx(speed, rel=1e-6)


def test_stop_does_not_pull_with_a_signed_law():
    """A bilateral (signed) law used as a stop acts only while penetrating, and only pushes."""
    rng = np.random.default_rng(0)
    _, a, b = _bodies()
    stop = TranslationStop(nd.Prismatic(a, b, POINT, AXIS), -0.1, 0.1, LinearBushing(1e3, 50.0))
    inside = _placed(a, b, 0.05, 0.0, rng)
    beyond = _placed(a, b, 0.1001, 0.0, rng)
    assert np.all(_np(stop.stop_forces(inside)) == 0)
    f = _np(stop.stop_forces(beyond))
    assert f[0] == 0 and f[1] >= 0


def test_validation_names_the_element():
    s, a, b = _bodies()
    s.add_force(TranslationStop(nd.Revolute(a, b, POINT, AXIS), -0.1, 0.2, Hertz(1e6),
                                name="wrong_joint"))
    s.add_force(RotationStop(nd.Revolute(a, b, POINT, AXIS), 0.3, -0.2, Hertz(-1.0),
                             name="swapped"))
    s.add_force(RotationStop(nd.Revolute(a, b, POINT, AXIS), 0.1, 0.2, Hertz(1.0),
                             name="outside"))
    s.add_force(RotationStop(nd.Revolute(a, b, POINT, AXIS), -4.0, 0.2, "hertz", name="wide"))
    s.add_force(TranslationStop(nd.Prismatic(a, b, POINT, 2 * AXIS), -0.1, 0.2, Hertz(1e6),
                                name="long_axis"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    assert ("translation stop 'wrong_joint': needs a Prismatic or Cylindrical joint (ideal, "
            "clearance or penalty clearance), got Revolute") in text
    assert "rotation stop 'swapped': lower (0.3) must be < upper (-0.2)" in text
    assert "rotation stop 'swapped': stiffness must be > 0" in text
    assert "rotation stop 'outside': the initial configuration (0 rad) must lie in [lower, upper]" in text
    assert "rotation stop 'wide': limits must lie in (-pi, pi) rad" in text
    assert "rotation stop 'wide': law must be a contact law" in text
    assert "translation stop 'long_axis': the joint's axis must be a unit vector" in text


def _stop_pendulum(law, evaluation=None, gravity=(0, 0, -9.81), spin=0.0):
    """A 1 kg, 1 m bar on a revolute (axis Y) released horizontal (or turning at ``spin``)
    against RotationStop(-1, 1, law)."""
    s = nd.System(gravity=gravity)
    bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0),
                     velocity=(0, 0, -0.5 * spin), angular_velocity=(0, spin, 0))
    hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0),
                                    name="hinge"))
    stop = s.add_force(RotationStop(hinge, -1.0, 1.0, law, name="stop"))
    if evaluation:
        stop.evaluation = evaluation
    return s


def _in_play(res):
    ledger = res.energy_ledger()
    carried = ledger["carried"].abs() if "carried" in ledger else 0.0
    return float((ledger["kinetic"] + ledger["stored:stop"] + carried).max())


@pytest.mark.slow
@pytest.mark.parametrize("k", [1e4, 1e6])
def test_elastic_stop_pendulum_keeps_its_energy(k):
    """The bar falls onto a Hertz stop and rebounds for 1 s at h = 1e-3 (the stop
    energy-consistent, its impacts resolved in time): the energy changes by less than 1 % of
    the energy in play with scheme "euler" (the first-order step's bounded oscillation of
    gravity's potential, ~m g v h / 2), by less than 1e-5 of it with "midpoint" (gravity
    does its work exactly on the chord). So it does with every step at h
    (``contact_resolution=None``: k = 1e6 unresolved, omega h = 1.7). With scheme "euler",
    backward Euler, the evaluation before, loses over 20 %."""
    for scheme, tier in (("euler", 0.01), ("midpoint", 1e-5)):
        for options in ({}, {"contact_resolution": None}):
            res = nd.simulate(_stop_pendulum(Hertz(k)), 1.0, h=1e-3, progress=False,
                              scheme=scheme, **options)
            assert res.success and res.t[-1] == pytest.approx(1.0)
            assert res.energy_ledger()["stored:stop"].max() > 0.1        # the bar hit the stop
            assert abs(res.energy[-1] - res.energy[0]) <= tier * _in_play(res)
    damped = nd.simulate(_stop_pendulum(Hertz(k), "backward_euler"), 1.0, h=1e-3,
                         progress=False, scheme="euler")
    assert damped.energy[0] - damped.energy[-1] > 0.2 * _in_play(damped)


def _stop_pendulum_loss(law, t_end=1.0):
    """The stop pendulum's energy change over ``t_end`` from scipy: the 1-dof equation
    I s'' = m g L / 2 cos s - M_stop(s, s') (I = m L^2 / 3, s the hinge angle, positive
    down), contacts entered by events (the impact speed the law remembers), DOP853 at rtol
    1e-11 with steps of at most 1e-5 s in contact."""
    m, L, g, I = 1.0, 1.0, 9.81, 1.0 / 3.0
    y, t, v_in = np.array([0.0, 0.0]), 0.0, 0.0

    def moment(y):
        up, lo = y[0] - 1.0, -1.0 - y[0]
        if up > 0:
            return -float(law.force(up, y[1], v_in))
        if lo > 0:
            return float(law.force(lo, -y[1], v_in))
        return 0.0

    def rhs(_, y):
        return [y[1], (0.5 * m * g * L * np.cos(y[0]) + moment(y)) / I]

    def upper(_, y):
        return y[0] - 1.0

    def lower(_, y):
        return -1.0 - y[0]

    for event in (upper, lower):
        event.terminal = True
    while t < t_end:
        inside = abs(y[0]) > 1.0
        sol = solve_ivp(rhs, (t, t_end), y, method="DOP853", rtol=1e-11, atol=1e-13,
                        max_step=1e-5 if inside else np.inf, events=(upper, lower))
        t, y = sol.t[-1], sol.y[:, -1]
        if sol.status == 1:             # a contact closes or opens: step over the kink
            y = np.array(y)
            v_in = abs(y[1])
            sol = solve_ivp(rhs, (t, min(t + 1e-9, t_end)), y, method="DOP853", rtol=1e-11,
                            atol=1e-13)
            t, y = sol.t[-1], sol.y[:, -1]
    stored = float(law.potential(max(y[0] - 1.0, 0.0))) + float(law.potential(max(-1.0 - y[0], 0.0)))
    return 0.5 * I * y[1] ** 2 - 0.5 * m * g * L * np.sin(y[0]) + stored


@pytest.mark.slow
def test_elastic_stop_without_gravity_returns_the_energy():
    """Without gravity the bar turning at 3 rad/s hits the stop, rebounds, hits the other
    one (1.5 J, all of it stored at the deepest point): the stop's discretisation changes
    the energy by less than 1e-5 of it (the ledger's residual:potential: the carried half
    impulse against the hinge's reactions; measured 4e-7 and 7e-7), however stiff the stop,
    and does no work of its own. What else changes is the ideal hinge's first-order step
    (its work column, ~(omega h)^2 / 2 of the energy)."""
    for k in (1e4, 1e6):
        res = nd.simulate(_stop_pendulum(Hertz(k), gravity=(0, 0, 0), spin=3.0), 1.5, h=1e-3,
                          progress=False)
        ledger = res.energy_ledger()
        assert res.success and ledger["stored:stop"].max() > 0.9 * res.energy[0]
        assert np.abs(ledger["residual:potential"]).max() <= 1e-5 * res.energy[0]
        assert np.abs(ledger["work:stop"]).max() <= 1e-12
        change = res.energy - res.energy[0]
        assert np.allclose(change, ledger["work:hinge"] + ledger["residual"], atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("k", [1e4, 1e6])
@pytest.mark.parametrize("kind", ["ln", "kv"])
def test_euler_hysteresis_stop_loses_its_own_work(kind, k):
    """Scheme "euler" (its carried half impulse; for "midpoint", resolved, see
    test_midpoint_contact.py): the same pendulum with a hysteresis law at h = 1e-3: the
    energy lost is the law's own work column within 2 %, the ledger's residual for the
    elements stays under 1 % of the energy in play, and the loss is scipy's
    (``_stop_pendulum_loss``) within 3 %. With its damping split (half in the step, half in
    the next) the stop's balance is exact at any h, also unresolved. Every step at h
    (``contact_resolution=None``, k = 1e6: omega h = 1.7), the damping whole in the step
    (the Kelvin-Voigt law's default) loses 8-12 % more than its work, and the run says the
    contact was not resolved."""
    law = LankaraniNikravesh(k, 1.5, 0.75) if kind == "ln" else ModifiedKelvinVoigt(k, 0.25)
    system = _stop_pendulum(law)
    stop = system.forces[-1]
    assert stop.damping_step == ("split" if kind == "ln" else "whole")
    euler = {"progress": False, "scheme": "euler"}
    res = nd.simulate(system, 1.0, h=1e-3, **euler)
    ledger = res.energy_ledger()
    work = ledger["work:stop"].iloc[-1]
    assert work < -0.5
    loss = res.energy[-1] - res.energy[0]
    assert loss == pytest.approx(work, rel=0.02)
    assert np.abs(ledger["residual:potential"]).max() <= 0.01 * _in_play(res)
    assert loss == pytest.approx(_stop_pendulum_loss(law), rel=0.03)
    stop.damping_step = "split"
    for options in ({}, {"contact_resolution": None}):
        split = nd.simulate(system, 1.0, h=1e-3, **euler, **options)
        work = split.energy_ledger()["work:stop"].iloc[-1]
        assert split.energy[-1] - split.energy[0] == pytest.approx(work, rel=0.02)
    if k == 1e6:
        stop.damping_step = "whole"
        with pytest.warns(RuntimeWarning, match="'stop' was not resolved in time"):
            whole = nd.simulate(system, 1.0, h=1e-3, contact_resolution=None, **euler)
        work = whole.energy_ledger()["work:stop"].iloc[-1]
        assert abs(whole.energy[-1] - whole.energy[0] - work) > 0.05 * abs(work)


@pytest.mark.slow
@pytest.mark.parametrize("damping_step", ["split", "whole"])
@pytest.mark.parametrize("kind", ["ln", "kv"])
def test_midpoint_unresolved_hysteresis_stop_loses_its_own_work(kind, damping_step):
    """Scheme "midpoint" applies a stop's damping at the step's mean velocity, whole in the
    step: every step at h (``contact_resolution=None``, k = 1e6: omega h = 1.7), the energy
    lost is the law's own work column within 1e-4 whichever ``damping_step``, and the run
    says the contact was not resolved."""
    law = LankaraniNikravesh(1e6, 1.5, 0.75) if kind == "ln" else ModifiedKelvinVoigt(1e6, 0.25)
    system = _stop_pendulum(law)
    system.forces[-1].damping_step = damping_step
    with pytest.warns(RuntimeWarning, match="'stop' was not resolved in time"):
        res = nd.simulate(system, 1.0, h=1e-3, progress=False, scheme="midpoint",
                          contact_resolution=None)
    work = res.energy_ledger()["work:stop"].iloc[-1]
    assert work < -0.5
    assert res.energy[-1] - res.energy[0] == pytest.approx(work, rel=1e-4)


def test_damping_step_is_checked():
    stop = _stop_pendulum(Hertz(1e4)).forces[-1]
    stop.damping_step = "half"
    assert any("damping_step must be one of ('split', 'whole')" in p for p in stop.problems())