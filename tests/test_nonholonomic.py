"""Velocity-level constraints (seed 004, eqs. 3.6-3.8): a knife edge (Chaplygin sled with its
blade under the centre of mass) driven along its blade, against its closed form."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd

M, J, U0, W, F = 2.0, 0.05, 0.5, 1.5, 0.8     # kg, kg m^2, m/s, rad/s, N
T_END = 2.0


def build():
    """A sled on the ground plane (planar joint, normal z): body x is the blade, the
    knife edge forbids sideways motion of the centre (body y); a force F along the blade."""
    s = nd.System(gravity=(0, 0, -9.81))
    sled = s.add_body("sled", mass=M, inertia=(0.02, 0.04, J), velocity=(U0, 0, 0),
                      angular_velocity=(0, 0, W))
    s.add_joint(nd.Planar(s.ground, sled, point=(0, 0, 0), axis=(0, 0, 1), name="plane"))
    s.add_joint(nd.VelocityConstraint([sled], lambda t, st: ca.dot(st.rdot, st.A[:, 1]),
                                      name="knife"))
    s.add_force(nd.PointForce(sled, force=lambda t, st: F * st.A[:, 0], name="push"))
    return s


def closed_form(t):
    """No moment about the vertical: theta = W t; the speed along the blade u = U0 + a t,
    a = F / M; the centre's path integrates u (cos theta, sin theta); the blade's sideways
    force is the centripetal M u W."""
    a, c, s = F / M, np.cos(W * t), np.sin(W * t)
    x = U0 * s / W + a * (t * s / W + (c - 1) / W**2)
    y = U0 * (1 - c) / W + a * (-t * c / W + s / W**2)
    return np.c_[x, y], U0 + a * t


def _errors(h):
    """The seed's semi-implicit Euler (the default midpoint's: test_midpoint.py)."""
    res = nd.simulate(build(), t_end=T_END, h=h, scheme="euler", progress=False)
    assert res.success
    path, u = closed_form(res.t)
    position = np.abs(res.position("sled")[:, :2] - path).max()
    lateral_axis = res.rotation("sled")[:-1, :, 1]
    lateral = np.einsum("ni,ni->n", res.reaction_force("knife"), lateral_axis)
    # the first step needs no sideways impulse: the start-of-step row sees the heading's
    # turn one step late, so the force lags by one step
    force = np.abs(lateral[1:] - M * u[:-2] * W).max()
    return res, position, force


def test_knife_edge_follows_its_closed_form_to_first_order_with_euler():
    """The seed's semi-implicit Euler: error C h, halving with h (measured: position
    3.3e-3 m at h = 2e-3, 1.65e-3 at 1e-3; sideways force 9.7e-3 N and 4.9e-3 N)."""
    res, pos1, force1 = _errors(2e-3)
    _, pos2, force2 = _errors(1e-3)
    assert pos1 < 2.5 * 2e-3 and force1 < 5 * 2e-3 * M * U0 * W
    assert 1.8 < pos1 / pos2 < 2.2 and 1.8 < force1 / force2 < 2.2
    # each step's end velocity has no sideways part along the start-of-step blade
    lateral_speed = np.einsum("ni,ni->n", res.velocity("sled")[1:], res.rotation("sled")[:-1, :, 1])
    assert np.abs(lateral_speed).max() < 1e-9


@pytest.mark.parametrize("scheme", ["euler", None])
def test_knife_edge_does_no_work(scheme):
    """The ledger closes; the kinetic energy grows by the push's work F (distance along the
    path). The knife's work: none with the default midpoint (its row holds for the step's
    mean velocity), to round-off; with the seed's "euler" the discretisation's, C h
    (measured -2.7e-3 of the push's work at h = 1e-3, half that at 5e-4): its impulse acts
    along the start-of-step row."""
    res = nd.simulate(build(), t_end=T_END, h=1e-3, scheme=scheme, progress=False)
    ledger = res.energy_ledger()
    last = ledger.iloc[-1]
    works = [c for c in ledger.columns if c.startswith(("work:", "impact:", "contact:"))]
    assert abs(last["total"] - ledger["total"].iloc[0] - sum(last[c] for c in works)
               - last["residual"]) < 1e-9
    _, u = closed_form(res.t)
    gained = 0.5 * M * (u[-1] ** 2 - U0**2)
    assert abs(last["work:push"] - gained) < 5e-3 * gained
    assert abs(last["work:knife"]) < (5e-3 if scheme == "euler" else 1e-12) * gained


def test_velocity_constraint_must_be_linear_in_the_velocities():
    s = nd.System()
    b = s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint(nd.VelocityConstraint([b], lambda t, st: ca.dot(st.rdot, st.rdot), name="bad"))
    with pytest.raises(nd.ModelError, match="velocity constraint 'bad': its equations must be linear"):
        s.compile()


def test_ball_rolls_without_slip():
    """A solid ball (J = 2/5 m R^2) on a plane, pushed at its centre by F along x, rolling
    without slip (two velocity rows: the contact point's horizontal velocity is zero, the
    height a holonomic row): x'' = F / (m + J / R^2) = 5 F / (7 m), the rolling rows carry
    -2 F / 7 along x, the ball turns at x' / R about y and does no work at the contact."""
    m, R, push = 1.5, 0.1, 2.0
    s = nd.System(gravity=(0, 0, -9.81))
    ball = s.add_body("ball", mass=m, inertia=(0.4 * m * R**2,) * 3, position=(0, 0, R))
    s.add_joint(nd.Programmed([ball], lambda t, st: st.r[2] - R, name="floor"))
    down = ca.DM([0, 0, -R])
    s.add_joint(nd.VelocityConstraint(
        [ball], lambda t, st: (st.rdot + ca.cross(st.A @ st.w, down))[:2], name="rolling"))
    s.add_force(nd.PointForce(ball, force=(push, 0, 0), name="push"))
    h = 1e-3
    res = nd.simulate(s, t_end=1.0, h=h, progress=False)
    accel = 5 * push / (7 * m)
    assert np.abs(res.velocity("ball")[:, 0] - accel * res.t).max() < 1e-9
    assert np.abs(res.position("ball")[:, 0] - 0.5 * accel * res.t**2).max() < h * accel * res.t[-1]
    assert np.allclose(res.reaction_force("rolling")[:, 0], -2 * push / 7, rtol=1e-9)
    spin = res.angular_velocity("ball", frame="global")[:, 1]
    assert np.abs(spin - accel * res.t / R).max() < 1e-9 * accel / R
    last = res.energy_ledger().iloc[-1]
    assert abs(last["work:rolling"]) < 1e-9 * last["work:push"]
