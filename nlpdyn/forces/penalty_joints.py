"""Joints with clearance as penalty force elements (seed 001): a contact law acting on the
penetrations of the same geometry the complementarity clearance joints use.

Each element takes the data of its complementarity counterpart (:mod:`nlpdyn.joints.clearance`)
plus a :class:`~nlpdyn.forces.contact_laws.ContactLaw`; :func:`penalty_version` converts one
joint description into the other, so a model runs as ideal, complementarity clearance or
penalty clearance/bushing by changing one line. A clearance of 0 is allowed here (a penalty
joint with no play, as seed 001 runs it). Penetration rates come from the directional
derivative of the penetrations along the bodies' velocities; laws with hysteresis damping keep
each contact's impact velocity in the element's memory.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..joints.clearance import (CylindricalClearance, PrismaticClearance, RevoluteClearance,
                                SphericalClearance)
from ..joints.ideal import Cylindrical, Revolute, Spherical
from .base import ForceElement, impact_memory
from .contact_laws import ContactLaw

# |d| smoothing at d = 0 (m): a joint with no play starts exactly at d = 0
_NORM_EPS = 1e-9


def rate_of(expr, states):
    """d/dt of a CasADi expression of the bodies' positions, along their velocities
    (rdot, pdot = 1/2 G(p)^T w')."""
    from ..rotations import G_matrix
    xs, dxs = [], []
    for s in states:
        if s.body.is_ground:
            continue
        xs += [s.r, s.p]
        dxs += [s.rdot, 0.5 * G_matrix(s.p).T @ s.w]
    if not xs:
        return ca.SX.zeros(expr.shape)
    return ca.jtimes(expr, ca.vertcat(*xs), ca.vertcat(*dxs))


def _wrench_at(state, point_global, force_global):
    """(f, n') of a force applied at a global point of the body."""
    s_local = state.A.T @ (point_global - state.r)
    return force_global, ca.cross(s_local, state.A.T @ force_global)


class PenaltyContacts(ForceElement):
    """Base of the penalty elements: contacts k with penetration delta_k, the unit direction
    n_k of the force on the child, and a global application point x_k; the law's force
    f_k n_k acts on the child and -f_k n_k on the parent at x_k.

    Subclasses implement ``_contacts(states) -> (delta, normals, points)`` (CasADi column,
    list of 3-vectors, list of 3-vectors) and ``n_contacts``.
    """

    kind = "penalty contact"
    evaluation = "implicit"

    def _setup_law(self, law):
        self.law = law
        self.history_size = self.n_contacts if getattr(law, "needs_impact_velocity", False) else 0

    def penetrations(self, states):
        """Penetration of every contact (m; negative while open), CasADi column."""
        return self._contacts(states)[0]

    def _forces(self, states, history):
        delta, normals, points = self._contacts(states)
        rate = rate_of(delta, states)
        forces = []
        for k in range(self.n_contacts):
            v_imp = history[k] if self.history_size else 0.0
            forces.append(self.law.force(delta[k], rate[k], v_imp))
        return forces, normals, points

    def contact_forces(self, states, history=None):
        """Normal force of every contact (N), CasADi column."""
        return ca.vertcat(*self._forces(states, history)[0])

    def wrenches(self, states, t, history=None):
        sp, sc = states
        forces, normals, points = self._forces(states, history)
        fp, np_, fc, nc = ca.SX.zeros(3), ca.SX.zeros(3), ca.SX.zeros(3), ca.SX.zeros(3)
        for f, n, x in zip(forces, normals, points):
            df, dn = _wrench_at(sc, x, f * n)
            fc, nc = fc + df, nc + dn
            df, dn = _wrench_at(sp, x, -f * n)
            fp, np_ = fp + df, np_ + dn
        return [(fp, np_), (fc, nc)]

    def next_history(self, states, t, history):
        delta = self._contacts(states)[0]
        rate = rate_of(delta, states)
        return ca.vertcat(*[impact_memory(delta[k], rate[k], history[k])
                            for k in range(self.n_contacts)])

    def potential_energy(self, states, t):
        delta = self._contacts(states)[0]
        terms = [self.law.potential(delta[k]) for k in range(self.n_contacts)]
        if any(term is None for term in terms):
            return None
        return sum(terms, ca.SX(0))

    def problems(self):
        out = [p for p in self.geometry.problems() if "clearance must be > 0" not in p]
        out = [p.replace(self.geometry.label, self.label) for p in out]
        for name in ("clearance", "axial_clearance"):
            value = getattr(self.geometry, name, 0.0)
            if not (np.isfinite(value) and value >= 0):
                out.append(f"{self.label}: {name} must be >= 0, got {value}")
        if self.evaluation not in ("explicit", "implicit"):
            out.append(f"{self.label}: evaluation must be 'explicit' or 'implicit'")
        if not isinstance(self.law, ContactLaw):
            out.append(f"{self.label}: law must be a ContactLaw, got {type(self.law).__name__}")
        else:
            out += self.law.problems(self.label)
        return out


class PenaltySphericalClearance(PenaltyContacts):
    """Ball (``child``) in a socket (``parent``) with radial clearance, Flores' way:
    delta = |d| - clearance, d = ball centre - socket centre; the force pushes the ball back
    towards the socket centre, at the ball centre. Same data as
    :class:`~nlpdyn.joints.clearance.SphericalClearance` plus ``law``.

    Example
    -------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> law = nd.LankaraniNikravesh(5e6, 1.5, 0.75)
    >>> _ = s.add_force(nd.PenaltySphericalClearance(s.ground, rod, (0, 0, 0), 1e-4, law))
    """

    kind = "penalty spherical clearance joint"
    n_contacts = 1

    def __init__(self, parent, child, point, clearance, law, radius=0.0, name=None):
        self.geometry = SphericalClearance(parent, child, point, clearance, radius, name)
        self.bodies, self.name = (parent, child), name
        self._setup_law(law)

    def _contacts(self, states):
        socket, ball = self.geometry._centres(states)
        d = ball - socket
        norm = ca.sqrt(ca.dot(d, d) + _NORM_EPS**2)
        return norm - self.geometry.clearance, [-d / norm], [ball]


class PenaltyCylindricalClearance(PenaltyContacts):
    """Pin (``parent``) in a bore (``child``) with radial clearance, by the strip method of
    seed 001 (eq. 42): the bore is cut into ``n_strips`` strips of length L/N; strip k's
    mid-circle centre sits at (N - 2k + 1) L / (2N) along the axis, and its penetration is
    delta_k = (distance of that centre from the pin axis) - clearance, pushing radially. This
    is the seed's contact search (eq. 36) for small misalignment (the strip circle taken
    perpendicular to the pin); a tilted bore loads its strips unevenly, which is how the
    misalignment is penalised. With Pereira's law give it the same ``n_strips``.
    Same data as :class:`~nlpdyn.joints.clearance.CylindricalClearance` plus ``law``.
    """

    kind = "penalty cylindrical clearance joint"

    def __init__(self, parent, child, point, axis, radius, clearance, length, law, n_strips=4,
                 offset=(0.0, 0.0, 0.0), name=None):
        self.geometry = CylindricalClearance(parent, child, point, axis, radius, clearance,
                                             length, name, offset)
        self.bodies, self.name = (parent, child), name
        self.n_strips = n_strips
        self.n_contacts = int(n_strips) if isinstance(n_strips, (int, np.integer)) else 0
        self._setup_law(law)

    def problems(self):
        out = super().problems()
        if not (isinstance(self.n_strips, (int, np.integer)) and self.n_strips >= 1):
            out.append(f"{self.label}: n_strips must be an integer >= 1, got {self.n_strips}")
        strips = getattr(self.law, "n_strips", None)
        if strips is not None and strips != self.n_strips:
            out.append(f"{self.label}: the law is set up for {strips} strips, the joint has "
                       f"{self.n_strips}")
        return out

    def _strip_centres(self, states):
        g = self.geometry
        N = self.n_strips
        _, sc = states
        return [sc.point(g.point + g.offset + (N - 2 * k + 1) * g.length / (2 * N) * g.axis)
                for k in range(1, N + 1)]

    def _contacts(self, states):
        g = self.geometry
        sp, _ = states
        a = sp.vector(g.axis)
        origin = sp.point(g.point)
        deltas, normals, points = [], [], []
        for centre in self._strip_centres(states):
            rel = centre - origin
            d = rel - ca.dot(rel, a) * a
            norm = ca.sqrt(ca.dot(d, d) + _NORM_EPS**2)
            deltas.append(norm - g.clearance)
            normals.append(-d / norm)
            points.append(centre)
        return ca.vertcat(*deltas), normals, points


class PenaltyRevoluteClearance(PenaltyCylindricalClearance):
    """Cylindrical penalty clearance plus the two axial faces (seed 001 eq. 22): the bore's
    end faces and the pin's shoulders of :class:`~nlpdyn.joints.clearance.RevoluteClearance`,
    penetration = -(axial gap), force along the axis at the bore's end centres, with
    ``axial_law`` (default: ``law``). Contacts: the strips, then face 1, face 2."""

    kind = "penalty revolute clearance joint"

    def __init__(self, parent, child, point, axis, radius, clearance, length, axial_clearance,
                 law, axial_law=None, n_strips=4, offset=(0.0, 0.0, 0.0), name=None):
        super().__init__(parent, child, point, axis, radius, clearance, length, law, n_strips,
                         offset, name)
        self.geometry = RevoluteClearance(parent, child, point, axis, radius, clearance, length,
                                          axial_clearance, name, offset)
        self.axial_law = law if axial_law is None else axial_law
        self.n_contacts = self.n_contacts + 2
        self._setup_law(law)

    def problems(self):
        out = super().problems()
        if self.axial_law is not self.law:
            out += self.axial_law.problems(self.label)
        return out

    def _contacts(self, states):
        delta, normals, points = super()._contacts(states)
        g = self.geometry
        a, _, ends = g._ends(states)
        q1, q2 = g._shoulders(states)
        axial = ca.vertcat(-ca.dot(ends[0] - q1, a), -ca.dot(q2 - ends[1], a))
        return ca.vertcat(delta, axial), normals + [a, -a], points + list(ends)

    def _forces(self, states, history):
        delta, normals, points = self._contacts(states)
        rate = rate_of(delta, states)
        forces = []
        for k in range(self.n_contacts):
            law = self.law if k < self.n_strips else self.axial_law
            v_imp = history[k] if self.history_size else 0.0
            forces.append(law.force(delta[k], rate[k], v_imp))
        return forces, normals, points

    def _setup_law(self, law):
        self.law = law
        needs = getattr(law, "needs_impact_velocity", False) or \
            getattr(getattr(self, "axial_law", None), "needs_impact_velocity", False)
        self.history_size = self.n_contacts if needs else 0

    def potential_energy(self, states, t):
        delta = self._contacts(states)[0]
        laws = [self.law] * self.n_strips + [self.axial_law] * 2
        terms = [law.potential(delta[k]) for k, law in enumerate(laws)]
        if any(term is None for term in terms):
            return None
        return sum(terms, ca.SX(0))


class PenaltyPrismaticClearance(PenaltyContacts):
    """Polygonal slider (``child``) in a polygonal cavity (``parent``): the vertex/plane pairs
    of :class:`~nlpdyn.joints.clearance.PrismaticClearance`, penetration = -(gap), force
    along the plane's inward normal at the vertex."""

    kind = "penalty prismatic clearance joint"

    def __init__(self, parent, child, point, axis, profile, clearance, length, law,
                 section_x=None, name=None):
        self.geometry = PrismaticClearance(parent, child, point, axis, profile, clearance,
                                           length, section_x, name)
        self.bodies, self.name = (parent, child), name
        self.n_contacts = self.geometry.n_gaps
        self._setup_law(law)

    def _contacts(self, states):
        g = self.geometry
        sp, sc = states
        verts = g._vertices()
        plane_points, plane_normals = g._planes()
        deltas, normals, points = [], [], []
        for face, k, e in g._pairs():
            vertex = sc.point(verts[face, k])
            n = sp.vector(plane_normals[e])
            deltas.append(-ca.dot(sp.point(plane_points[e]) - vertex, n))
            normals.append(-n)
            points.append(vertex)
        return ca.vertcat(*deltas), normals, points


def penalty_version(joint, law, clearance=None, radius=None, length=None, axial_clearance=None,
                    n_strips=4, axial_law=None, name=None):
    """The penalty element with the same data as ``joint``.

    ``joint``: a complementarity clearance joint (its data is copied; keywords override), or
    an ideal ``Spherical``/``Revolute``/``Cylindrical`` (then give ``clearance`` (default 0)
    and, for the axial joints, ``radius``, ``length`` and, for ``Revolute``,
    ``axial_clearance`` (default ``clearance``)).
    """
    name = joint.name if name is None else name
    pick = lambda given, attr: getattr(joint, attr) if given is None else given  # noqa: E731
    if isinstance(joint, SphericalClearance):
        return PenaltySphericalClearance(joint.parent, joint.child, joint.point,
                                         pick(clearance, "clearance"), law, joint.radius, name)
    if isinstance(joint, RevoluteClearance):
        return PenaltyRevoluteClearance(joint.parent, joint.child, joint.point, joint.axis,
                                        pick(radius, "radius"), pick(clearance, "clearance"),
                                        pick(length, "length"),
                                        pick(axial_clearance, "axial_clearance"), law, axial_law,
                                        n_strips, joint.offset, name)
    if isinstance(joint, CylindricalClearance):
        return PenaltyCylindricalClearance(joint.parent, joint.child, joint.point, joint.axis,
                                           pick(radius, "radius"), pick(clearance, "clearance"),
                                           pick(length, "length"), law, n_strips, joint.offset,
                                           name)
    if isinstance(joint, PrismaticClearance):
        return PenaltyPrismaticClearance(joint.parent, joint.child, joint.point, joint.axis,
                                         joint.profile, pick(clearance, "clearance"),
                                         joint.length, law, joint.section_x, name)
    c = 0.0 if clearance is None else clearance
    if isinstance(joint, Spherical):
        return PenaltySphericalClearance(joint.parent, joint.child, joint.point, c, law, 0.0, name)
    if isinstance(joint, (Revolute, Cylindrical)) and (radius is None or length is None):
        raise ValueError(f"{joint.label}: give radius and length for its penalty version")
    if isinstance(joint, Revolute):
        return PenaltyRevoluteClearance(joint.parent, joint.child, joint.point, joint.axis,
                                        radius, c, length,
                                        c if axial_clearance is None else axial_clearance, law,
                                        axial_law, n_strips, name=name)
    if isinstance(joint, Cylindrical):
        return PenaltyCylindricalClearance(joint.parent, joint.child, joint.point, joint.axis,
                                           radius, c, length, law, n_strips, name=name)
    raise TypeError(f"no penalty version of {type(joint).__name__}")
