"""Joint motion limits and bushings as force elements (seed 001 sections 2.3.2 and 2.5).

A joint stop penalises a joint's free motion beyond a range with a contact law (eqs. 51-53):
``TranslationStop`` along a prismatic or cylindrical joint's axis, ``RotationStop`` about a
revolute or cylindrical joint's axis. A ``Bushing`` ties two body frames together with
translational and rotational stiffness and damping, linear or from tabulated laws.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..joints.ideal import Cylindrical, Prismatic, Revolute
from ..rotations import G_matrix
from .base import ForceElement, impact_memory
from .contact_laws import ContactLaw, LinearBushing
from .penalty_joints import _wrench_at, rate_of


def coordinate_wrenches(states, coordinate, force):
    """(f, n') per body of a force ``force`` acting along a scalar coordinate s(q) (virtual
    work force * ds): f = force ds/dr, n' = force 1/2 G(p) ds/dp."""
    out = []
    for state in states:
        if state.body.is_ground:
            out.append((ca.DM.zeros(3), ca.DM.zeros(3)))
            continue
        out.append((force * ca.gradient(coordinate, state.r),
                    force * 0.5 * G_matrix(state.p) @ ca.gradient(coordinate, state.p)))
    return out


class _Stop(ForceElement):
    """Two one-sided contacts on a joint coordinate s: delta_upper = s - upper,
    delta_lower = lower - s."""

    evaluation = "implicit"
    joint_types: tuple = ()
    unit = "m"

    def __init__(self, joint, lower, upper, law, name=None):
        self.joint, self.lower, self.upper, self.law = joint, float(lower), float(upper), law
        self.bodies = (joint.parent, joint.child)
        self.name = name
        self.history_size = 2 if getattr(law, "needs_impact_velocity", False) else 0

    def problems(self):
        out = super().problems()
        if not isinstance(self.joint, self.joint_types):
            out.append(f"{self.label}: needs a {' or '.join(t.__name__ for t in self.joint_types)} "
                       f"joint, got {type(self.joint).__name__}")
            return out
        if not self.lower < self.upper:
            out.append(f"{self.label}: lower ({self.lower}) must be < upper ({self.upper})")
        elif not self.lower <= 0 <= self.upper:
            out.append(f"{self.label}: the initial configuration (0 {self.unit}) must lie in "
                       f"[lower, upper] = [{self.lower}, {self.upper}]")
        if not isinstance(self.law, ContactLaw):
            out.append(f"{self.label}: law must be a ContactLaw, got {type(self.law).__name__}")
        else:
            out += self.law.problems(self.label)
        return out

    def coordinate(self, states):
        raise NotImplementedError

    def penetrations(self, states):
        """[delta_lower, delta_upper], CasADi column (negative inside the range)."""
        s = self.coordinate(states)
        return ca.vertcat(self.lower - s, s - self.upper)

    def stop_forces(self, states, history=None):
        """[lower stop, upper stop] forces (N) or moments (N m), CasADi column."""
        delta = self.penetrations(states)
        rate = rate_of(delta, states)
        v = [history[k] if self.history_size else 0.0 for k in range(2)]
        return ca.vertcat(*[self.law.force(delta[k], rate[k], v[k]) for k in range(2)])

    def generalized_force(self, states, history):
        """Force (moment) along the joint coordinate on the child: lower stop pushes +."""
        f = self.stop_forces(states, history)
        return f[0] - f[1]

    def wrenches(self, states, t, history=None):
        """F ds/dq with F the stop force along the joint coordinate s, per body (minus the
        gradient of the law's potential when the law is elastic)."""
        return coordinate_wrenches(states, self.coordinate(states),
                                   self.generalized_force(states, history))

    def next_history(self, states, t, history):
        delta = self.penetrations(states)
        rate = rate_of(delta, states)
        return ca.vertcat(*[impact_memory(delta[k], rate[k], history[k]) for k in range(2)])

    def potential_energy(self, states, t):
        delta = self.penetrations(states)
        terms = [self.law.potential(delta[k]) for k in range(2)]
        return None if any(x is None for x in terms) else terms[0] + terms[1]


class TranslationStop(_Stop):
    """Limits on the translation of a Prismatic or Cylindrical joint along its axis:
    s = (child's joint point - parent's joint point) . axis (0 initially) in [lower, upper];
    beyond, ``law`` pushes back along the axis at the child's joint point (eq. 51)."""

    kind = "translation stop"
    joint_types = (Prismatic, Cylindrical)

    def coordinate(self, states):
        sp, sc = states
        a = sp.vector(self.joint.axis)
        return ca.dot(sc.point(self.joint.point) - sp.point(self.joint.point), a)


class RotationStop(_Stop):
    """Limits on the rotation of a Revolute or Cylindrical joint about its axis (rad):
    theta = atan2(g_p . f_c, f_p . f_c) with (f, g, axis) the joint's triad (0 initially, exact
    in (-pi, pi)); beyond [lower, upper] ``law`` (N m per rad) applies a moment about the axis
    (eq. 52)."""

    kind = "rotation stop"
    joint_types = (Revolute, Cylindrical)
    unit = "rad"

    def coordinate(self, states):
        sp, sc = states
        f, g, _ = self.joint._frames()
        fc = sc.vector(f)
        return ca.atan2(ca.dot(sp.vector(g), fc), ca.dot(sp.vector(f), fc))

    def problems(self):
        out = super().problems()
        if self.lower <= -np.pi or self.upper >= np.pi:
            out.append(f"{self.label}: limits must lie in (-pi, pi) rad, got "
                       f"[{self.lower}, {self.upper}]")
        return out


class Bushing(ForceElement):
    """Translational and rotational spring-damper between two body frames at ``point``.

    The bushing frame (``axes``: rows are its unit axes in the global frame at the initial
    configuration; default the global axes) is fixed on ``parent``; the child carries a copy.
    Relative translation u (child point - parent point, in the bushing frame) and relative
    rotation theta (the rotation vector of the child frame in the parent frame) are resisted
    per axis by f_i = -F_i(u_i, du_i/dt) and m_i = -M_i(theta_i, dtheta_i/dt).

    ``stiffness``, ``damping`` (N/m, N s/m) and ``rotational_stiffness``,
    ``rotational_damping`` (N m/rad, N m s/rad): scalars or 3-vectors for a linear bushing.
    ``laws`` / ``rotational_laws``: three ContactLaw objects (e.g. TabulatedBushing) instead,
    for a nonlinear one. The elastic part comes from the potential (exactly conservative,
    the moments by differentiating it with respect to the rotations); damping is added.
    """

    kind = "bushing"

    def __init__(self, parent, child, point, stiffness=0.0, damping=0.0, rotational_stiffness=0.0,
                 rotational_damping=0.0, axes=None, laws=None, rotational_laws=None, name=None):
        self.bodies = (parent, child)
        self.parent, self.child = parent, child
        self.point = np.asarray(point, dtype=float).reshape(-1)
        self.axes = np.eye(3) if axes is None else np.asarray(axes, dtype=float)
        self.name = name
        self.laws = tuple(laws) if laws is not None else tuple(
            LinearBushing(k, c) for k, c in zip(np.broadcast_to(stiffness, 3),
                                                np.broadcast_to(damping, 3)))
        self.rotational_laws = tuple(rotational_laws) if rotational_laws is not None else tuple(
            LinearBushing(k, c) for k, c in zip(np.broadcast_to(rotational_stiffness, 3),
                                                np.broadcast_to(rotational_damping, 3)))

    def problems(self):
        out = super().problems()
        if self.point.shape != (3,) or not np.all(np.isfinite(self.point)):
            out.append(f"{self.label}: point must be 3 finite numbers")
        if self.axes.shape != (3, 3) or not np.allclose(self.axes @ self.axes.T, np.eye(3), atol=1e-9) \
                or np.linalg.det(self.axes) < 0:
            out.append(f"{self.label}: axes must be 3 orthonormal right-handed rows")
        for group in (self.laws, self.rotational_laws):
            if len(group) != 3 or not all(isinstance(law, ContactLaw) for law in group):
                out.append(f"{self.label}: give 3 laws (ContactLaw) per group")
            else:
                for law in group:
                    out += law.problems(self.label)
        return out

    def _frame(self, state):
        """Bushing axes (columns) in the global frame, carried by the body."""
        return ca.horzcat(*[state.vector(row) for row in self.axes])

    def relative_motion(self, states):
        """(u, theta): relative translation (m) and rotation vector (rad), bushing frame."""
        sp, sc = states
        Fp, Fc = self._frame(sp), self._frame(sc)
        u = Fp.T @ (sc.point(self.point) - sp.point(self.point))
        R = Fp.T @ Fc
        skew = 0.5 * ca.vertcat(R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1])
        s = ca.norm_2(skew)
        c = 0.5 * (ca.trace(R) - 1)
        angle = ca.atan2(s, c)
        # theta = angle * axis; sinc-safe (angle / sin(angle) -> 1 at 0)
        scale = ca.if_else(s > 1e-8, angle / ca.fmax(s, 1e-300), 1 + s**2 / 6)
        return u, scale * skew

    def potential_energy(self, states, t):
        u, theta = self.relative_motion(states)
        terms = [law.potential(u[i]) for i, law in enumerate(self.laws)] + \
            [law.potential(theta[i]) for i, law in enumerate(self.rotational_laws)]
        return None if any(x is None for x in terms) else sum(terms, ca.SX(0))

    def wrenches(self, states, t, history=None):
        sp, sc = states
        u, theta = self.relative_motion(states)
        du, dtheta = rate_of(u, states), rate_of(theta, states)
        V = self.potential_energy(states, t)
        out = []
        for state in (sp, sc):
            if state.body.is_ground:
                out.append((ca.DM.zeros(3), ca.DM.zeros(3)))
                continue
            if V is None:
                out.append((ca.SX.zeros(3), ca.SX.zeros(3)))
            else:   # generalised force -dV/dq mapped to (f, n'): n' = -1/2 G(p) dV/dp
                out.append((-ca.gradient(V, state.r), -0.5 * G_matrix(state.p) @ ca.gradient(V, state.p)))
        # damping (and the whole law where it has no potential) at the bushing point
        elastic = V is not None
        f_local = ca.vertcat(*[law.force(u[i], du[i]) - (law.force(u[i], 0) if elastic else 0)
                               for i, law in enumerate(self.laws)])
        m_local = ca.vertcat(*[law.force(theta[i], dtheta[i]) - (law.force(theta[i], 0) if elastic else 0)
                               for i, law in enumerate(self.rotational_laws)])
        Fp = self._frame(sp)
        force, moment = -Fp @ f_local, -Fp @ m_local        # on the child
        x = sc.point(self.point)
        fc, nc = _wrench_at(sc, x, force)
        fp, np_ = _wrench_at(sp, x, -force)
        (fp0, np0), (fc0, nc0) = out
        return [(fp0 + fp, np0 + np_ - sp.A.T @ moment), (fc0 + fc, nc0 + nc + sc.A.T @ moment)]
