"""Joint stops on clearance joints (issue 22): the coordinate of the nominal joint by an
independent numpy computation on tilted and shifted bores, a bar hitting a stop on a
revolute clearance against the same bar on an ideal revolute, scipy and the energy closed
form, a slider on a prismatic clearance, a stop with clearance friction, and validation."""
import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation

import nlpdyn as nd
from nlpdyn.body import BodyState
from nlpdyn.forces.joint_stops import RotationStop, TranslationStop
from nlpdyn.forces.penalty_joints import (PenaltyCylindricalClearance, PenaltyRevoluteClearance,
                                          PenaltySphericalClearance)
from nlpdyn.rotations import from_rotation_matrix
from problems.clearance_pendulum import build_rocking_wheel

from test_joint_stops import AXIS, POINT, _bodies   # the same two tilted bodies

SQUARE = [(-0.01, -0.01), (0.01, -0.01), (0.01, 0.01), (-0.01, 0.01)]


JOINTS = {
    "revolute clearance": lambda a, b: nd.RevoluteClearance(a, b, POINT, AXIS, 0.01, 1e-3, 0.02,
                                                            1e-3),
    "cylindrical clearance": lambda a, b: nd.CylindricalClearance(a, b, POINT, AXIS, 0.01, 1e-3,
                                                                  0.02),
    "prismatic clearance": lambda a, b: nd.PrismaticClearance(a, b, POINT, AXIS, SQUARE, 1e-3,
                                                              0.04),
    "penalty revolute": lambda a, b: PenaltyRevoluteClearance(a, b, POINT, AXIS, 0.01, 1e-3, 0.02,
                                                              1e-3, nd.Hertz(1e9)),
    "penalty cylindrical": lambda a, b: PenaltyCylindricalClearance(a, b, POINT, AXIS, 0.01, 1e-3,
                                                                    0.02, nd.Hertz(1e9)),
}
ROTATING = ["revolute clearance", "cylindrical clearance", "penalty revolute",
            "penalty cylindrical"]
SLIDING = ["cylindrical clearance", "prismatic clearance", "penalty cylindrical"]


def _placed(a, b, phi, slide, tilt, shift, rng):
    """Numeric states: parent anywhere; child turned by phi about the parent's axis, then
    tilted by the rotation vector ``tilt`` (joint frame) about the joint point, slid by
    ``slide`` along the axis and shifted by ``shift`` (joint frame, perpendicular to it).
    Returns (states, the parent's and the child's rotations since the start)."""
    Rp = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix()
    frame = Rp @ np.column_stack(_triad())          # joint frame (f, g, axis) now
    turn = Rotation.from_rotvec(phi * frame[:, 2]).as_matrix()
    bend = Rotation.from_rotvec(frame @ tilt).as_matrix()
    Rc = bend @ turn @ Rp                          # the child's rotation since the start
    rp = rng.standard_normal(3)
    xp = rp + Rp @ a.rotation0 @ a.local_point(POINT)
    xc = xp + slide * frame[:, 2] + frame @ shift
    rc = xc - Rc @ b.rotation0 @ b.local_point(POINT)
    rest = ca.DM.zeros(3)
    states = [BodyState(body, ca.DM(r), ca.DM(from_rotation_matrix(R @ body.rotation0)), rest, rest)
              for body, r, R in ((a, rp, Rp), (b, rc, Rc))]
    return states, Rp, Rc


def _triad():
    """A right-handed unit triad (f, g, axis) with f perpendicular to AXIS (numpy only)."""
    f = np.cross(AXIS, [1.0, 0.0, 0.0])
    f /= np.linalg.norm(f)
    return f, np.cross(AXIS, f), AXIS


def _numpy_angle(Rp, Rc, f0):
    """The child's reference direction f0 (global, start) as it is now, projected on the
    plane normal to the parent's axis: its signed angle about that axis from where the
    parent carries f0."""
    a, fp, u = Rp @ AXIS, Rp @ f0, Rc @ f0
    u = u - (u @ a) * a
    return np.arctan2(a @ np.cross(fp, u), fp @ u)


def _value(x):
    return float(np.asarray(ca.evalf(x)).ravel()[0])


@pytest.mark.parametrize("name", ROTATING)
def test_rotation_stop_angle_on_a_tilted_bore(name):
    """The stop's angle on a clearance joint whose bore is tilted (up to 0.05 rad) and
    shifted in the play is the rotation about the parent's (nominal) axis, computed in
    numpy from the body rotations: to round-off for any tilt, and exactly the turn phi when
    the tilt is about the child's reference direction; otherwise within
    atan((1 - cos beta) / (2 sqrt(cos beta))) ~ beta^2 / 4 of phi (a tilt beta about an axis
    in the plane scales the projection across that axis by cos beta)."""
    rng = np.random.default_rng(7)
    _, a, b = _bodies()
    stop = RotationStop(JOINTS[name](a, b), -3.0, 3.0, nd.Hertz(10.0))
    f0 = stop.ideal_joint.frame()[:, 0]             # the stop's reference direction
    for phi in (-2.9, -0.4, 0.0, 1e-7, 0.3, 2.5):
        for _ in range(4):
            tilt = np.r_[0.05 * rng.uniform(-1, 1, 2), 0.0]
            shift = np.r_[1e-3 * rng.uniform(-1, 1, 2), 0.0]
            states, Rp, Rc = _placed(a, b, phi, 2e-3 * rng.uniform(-1, 1), tilt, shift, rng)
            angle = _value(stop.angle(states))
            assert angle == pytest.approx(_numpy_angle(Rp, Rc, f0), abs=1e-13)
            c = np.cos(np.linalg.norm(tilt))
            assert abs(angle - phi) <= np.arctan((1 - c) / (2 * np.sqrt(c))) + 1e-14
        # a tilt about the child's own reference direction leaves the angle at phi
        f_child = np.column_stack(_triad()).T @ f0                  # f0 in the joint frame
        about_f = 0.05 * (np.cos(phi) * f_child + np.sin(phi) * np.cross([0, 0, 1], f_child))
        states, *_ = _placed(a, b, phi, 1e-3, about_f, np.r_[5e-4, -5e-4, 0], rng)
        assert _value(stop.angle(states)) == pytest.approx(phi, abs=1e-13)


@pytest.mark.parametrize("name", SLIDING)
def test_translation_stop_displacement_on_a_tilted_bore(name):
    """The displacement on a clearance joint is the slide along the parent's axis, however
    the child is turned, tilted about the joint point and shifted across the axis."""
    rng = np.random.default_rng(11)
    _, a, b = _bodies()
    stop = TranslationStop(JOINTS[name](a, b), -0.5, 0.5, nd.Hertz(1e6))
    for slide in (-0.3, -1e-3, 0.0, 2e-3, 0.4):
        tilt = np.r_[0.05 * rng.uniform(-1, 1, 2), 0.0]
        shift = np.r_[1e-3 * rng.uniform(-1, 1, 2), 0.0]
        states, *_ = _placed(a, b, rng.uniform(-3, 3), slide, tilt, shift, rng)
        assert _value(stop.displacement(states)) == pytest.approx(slide, abs=1e-14)


# ---------------------------------------------------------------- a bar hitting a stop
K_STOP, MASS, ARM, J_PIN = 1e4, 1.0, 0.5, 1 / 12 + 0.25     # Hertz, kg, m, kg m^2 about the pin
H = 1e-3


def _stop_pendulum(joint):
    """A 1 kg, 1 m bar on a hinge (axis Y) at one end, released horizontal, falls onto an
    elastic Hertz stop at +1 rad (gravity -Z)."""
    s = nd.System(gravity=(0, 0, -9.81))
    bar = s.add_body("bar", MASS, (1e-3, 1 / 12, 1 / 12), position=(ARM, 0, 0))
    if joint == "ideal":
        hinge = s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0), name="hinge"))
    else:
        hinge = s.add_joint(nd.RevoluteClearance(s.ground, bar, (0, 0, 0), (0, 1, 0), 0.01, 1e-6,
                                                 0.02, 1e-6, name="hinge"))
    stop = s.add_force(RotationStop(hinge, -1.0, 1.0, nd.Hertz(K_STOP), name="stop"))
    return s, stop


def _angles(system, stop, res):
    cs = system.compile()
    fn = ca.Function("a", [cs.q_sym], [stop.angle(cs.states_of(stop))]).map(len(res.t))
    return np.asarray(fn(res.q.T)).ravel()


@pytest.mark.slow
def test_stop_on_a_revolute_clearance_acts_as_on_the_ideal_revolute():
    """With 1e-6 m of play the bar on the clearance joint turns as on the ideal revolute:
    the angles differ by less than the tilt the play allows (2 c / bore length = 1e-4 rad;
    measured 9e-6 with scheme "euler"). Both against references without nlpdyn: the 1-dof
    ODE J theta'' = m g l cos(theta) - k (theta - 1)^1.5 by scipy (the step's error below
    3 h rad/s: measured 1.4e-4 rad at h = 1e-3 on the ideal revolute, 2.5e-3 with scheme
    "euler", first order); the deepest angle 1 + delta from the energy balance
    m g l sin(1 + delta) = k delta^2.5 / 2.5 (1 % of delta; measured 0.05 % with "euler");
    the elastic rebound brings the bar back to horizontal (1e-4 rad) with the energy kept
    within 1 % of the energy in play (the stop is energy-consistent)."""
    runs = {}
    for joint in ("ideal", "clearance"):
        system, stop = _stop_pendulum(joint)
        assert stop.evaluation == "implicit"
        res = nd.simulate(system, 1.0, h=H, progress=False)
        assert res.success and res.t[-1] == pytest.approx(1.0)
        runs[joint] = res, _angles(system, stop, res)
    (res_i, ideal), (res_c, clear) = runs["ideal"], runs["clearance"]
    assert np.abs(clear - ideal).max() < 1e-4

    def rhs(_, y):
        pen = max(y[0] - 1.0, 0.0)
        return [y[1], (MASS * 9.81 * ARM * np.cos(y[0]) - K_STOP * pen**1.5) / J_PIN]
    ref = solve_ivp(rhs, (0, 1.0), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12,
                    max_step=1e-3, dense_output=True)
    delta = brentq(lambda d: MASS * 9.81 * ARM * np.sin(1 + d) - K_STOP * d**2.5 / 2.5, 0, 0.5)
    for res, angle in runs.values():
        assert np.abs(angle - ref.sol(res.t)[0]).max() < 3 * H
        assert angle.max() == pytest.approx(1 + delta, abs=0.01 * delta)
        deepest = np.argmax(angle)
        assert abs(angle[deepest:].min()) < 1e-4              # back at horizontal
        ledger = res.energy_ledger()
        assert ledger["stored:stop"].max() > 4.0              # the stop took the bar's energy
        in_play = float((ledger["kinetic"] + ledger["stored:stop"]).max())
        assert np.abs(res.energy - res.energy[0]).max() <= 0.01 * in_play


def test_translation_stop_on_a_prismatic_clearance():
    """A 1 kg slider at 1 m/s in a prismatic clearance (1e-6 m) hits a Hertz stop 1 mm
    ahead: it penetrates (5 m v^2 / 4 k)^(2/5) = 4.36 mm (closed form; 1 %) and leaves at
    -1 m/s (elastic, energy-consistent: 1e-6)."""
    s = nd.System(gravity=(0, 0, 0))
    body = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3), velocity=(1, 0, 0))
    slide = s.add_joint(nd.PrismaticClearance(s.ground, body, (0, 0, 0), (1, 0, 0), SQUARE,
                                              1e-6, 0.04, name="slide"))
    s.add_force(TranslationStop(slide, -0.01, 0.001, nd.Hertz(1e6), name="stop"))
    res = nd.simulate(s, 0.02, h=1e-4, progress=False)
    assert res.success
    x = res.position("slider")[:, 0]
    assert x.max() - 0.001 == pytest.approx((5 * 1.0 * 1.0**2 / (4 * 1e6)) ** 0.4, rel=0.01)
    assert res.velocity("slider")[-1, 0] == pytest.approx(-1.0, rel=1e-6)


def test_stop_on_a_clearance_joint_with_friction():
    """The project's wheel (10 kg, pin radius 0.02 m, clearance 5e-4 m, Coulomb mu = 0.2)
    spinning at 5 rad/s against elastic stops at +-0.3 rad: the run succeeds, the stop turns
    the spin back, the elastic stop does no work of its own, and the energy lost is the
    friction's work (the ledger's friction column) within 0.5 % of the start energy (the
    step's residual; measured 0.2 %)."""
    s = build_rocking_wheel(friction=0.2, spin=5.0, angle=0.0)
    (bearing,) = s.gaps
    stop = s.add_force(RotationStop(bearing, -0.3, 0.3, nd.Hertz(1e4), name="stop"))
    res = nd.simulate(s, 0.3, h=1e-3, progress=False)
    assert res.success, res.message
    angle = _angles(s, stop, res)
    w = res.angular_velocity("wheel", frame="global")[:, 0]
    assert angle.max() > 0.3 and w.min() < -2.0
    ledger = res.energy_ledger()
    assert np.abs(ledger["work:stop"]).max() <= 1e-12
    assert ledger["friction:bearing"].iloc[-1] < -0.1
    change = res.energy - res.energy[0]
    assert np.abs(change - ledger["friction:bearing"]).max() <= 5e-3 * res.energy[0]


# ---------------------------------------------------------------- validation
def test_joints_without_the_coordinate_are_refused_by_name():
    s, a, b = _bodies()
    s.add_force(RotationStop(nd.Spherical(a, b, POINT), -0.1, 0.1, nd.Hertz(1.0),
                             name="on_ball"))
    s.add_force(RotationStop(nd.SphericalClearance(a, b, POINT, 1e-3), -0.1, 0.1,
                             nd.Hertz(1.0), name="on_socket"))
    s.add_force(RotationStop(PenaltySphericalClearance(a, b, POINT, 1e-3, nd.Hertz(1e6)),
                             -0.1, 0.1, nd.Hertz(1.0), name="on_penalty_ball"))
    s.add_force(RotationStop(nd.Bushing(a, b, POINT, 1e3, rotational_stiffness=1.0),
                             -0.1, 0.1, nd.Hertz(1.0), name="on_bushing"))
    s.add_force(RotationStop(nd.PrismaticClearance(a, b, POINT, AXIS, SQUARE, 1e-3, 0.04),
                             -0.1, 0.1, nd.Hertz(1.0), name="on_slider"))
    s.add_force(TranslationStop(nd.RevoluteClearance(a, b, POINT, AXIS, 0.01, 1e-3, 0.02, 1e-3),
                                -0.1, 0.1, nd.Hertz(1.0), name="on_pin"))
    s.add_force(RotationStop(nd.RevoluteClearance(a, b, POINT, 2 * AXIS, 0.01, 1e-3, 0.02,
                                                  1e-3), -0.1, 0.1, nd.Hertz(1.0),
                             name="long_axis"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    rot = "needs a Revolute or Cylindrical joint (ideal, clearance or penalty clearance), got"
    for name, got in (("on_ball", "Spherical"), ("on_socket", "SphericalClearance"),
                      ("on_penalty_ball", "PenaltySphericalClearance"),
                      ("on_bushing", "Bushing"), ("on_slider", "PrismaticClearance")):
        assert f"rotation stop '{name}': {rot} {got}" in text
    assert ("translation stop 'on_pin': needs a Prismatic or Cylindrical joint (ideal, "
            "clearance or penalty clearance), got RevoluteClearance") in text
    assert "rotation stop 'long_axis': the joint's axis must be a unit vector" in text
