"""Joints with clearance as penalty force elements (seed 001, sections 2.3-2.4).

A penalty clearance joint measures penetrations delta_k of the same geometry the
complementarity clearance joints of :mod:`nlpdyn.joints.clearance` use (delta_k = -gap_k)
and applies a :class:`~nlpdyn.forces.contact_laws.ContactLaw` to each: force f_k along the
contact normal n_k on the child, -f_k n_k on the parent, both at the contact point x_k (seed
001 eqs. 20-24, 38-41). Each element takes the data of its complementarity counterpart, in the
same order, plus the law; :func:`penalty_version` converts a clearance joint (or an ideal
spherical, revolute or cylindrical joint, with clearance 0) into its penalty element, so one
joint description runs as ideal, complementarity clearance or penalty clearance/bushing.

Conventions shared by all elements:

- a contact pushes only while it is closed: f_k = law(delta_k, delta_dot_k, v_imp,k) for
  delta_k > 0, else 0; the stored energy is law.elastic_potential(max(delta_k, 0)). A signed law
  (bushing with damping) may pull while delta_k > 0.
- delta_dot_k = -n_k . (v_child(x_k) - v_parent(x_k)), the normal relative velocity of the
  two bodies' material points at x_k. For the geometries here (signed distances along n_k)
  this is the exact time derivative of delta_k, so the wrench is minus the gradient of the
  stored energy (virtual work).
- laws with hysteresis damping (``needs_impact_velocity``) get one memory value per contact,
  the impact speed, kept by :func:`~nlpdyn.forces.base.impact_memory`.
- ``evaluation = "implicit"``: contact laws are stiff.

Examples
--------
>>> import nlpdyn as nd
>>> from nlpdyn.forces.penalty_joints import PenaltySphericalClearance
>>> s = nd.System()
>>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
>>> law = nd.LankaraniNikravesh(5e6, 1.5, 0.75)
>>> ball = s.add_force(PenaltySphericalClearance(s.ground, rod, (0, 0, 0), 1e-4, law,
...                                              name="ball"))
>>> ball.n_contacts, ball.history_size, ball.evaluation
(1, 1, 'implicit')
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..checks import is_number, number_problems, vector_problems
from ..joints.base import check_unit
from ..joints.clearance import (CylindricalClearance, PrismaticClearance, RevoluteClearance,
                                SphericalClearance)
from ..joints.ideal import Cylindrical, Revolute, Spherical
from ..rotations import G_matrix
from .base import ForceElement, impact_memory
from .contact_laws import Blended, ContactLaw, Pereira

# |d| ~ sqrt(d.d + EPS^2) (m): a joint with no play starts at d = 0, where |d| has no gradient.
# At |d| = c the penetration changes by EPS^2 / (2 c) (5e-16 m at c = 1 mm).
_NORM_EPS = 1e-9


def _smooth_norm(d):
    return ca.sqrt(ca.dot(d, d) + _NORM_EPS**2)


def rate_of(expr, states):
    """d/dt of a CasADi expression of the bodies' positions, along their velocities.

    Directional derivative along (rdot, pdot = 1/2 G(p)^T w') of every moving body; ``r`` and
    ``p`` of the states must be CasADi symbols (as in a compiled system).

    Parameters
    ----------
    expr : casadi.SX, shape (m, 1)
    states : list of BodyState

    Returns
    -------
    casadi.SX, shape (m, 1)
    """
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
    """(f, n') of a force (global) applied at a global point of the body: n' = s'~ A^T f."""
    s_local = state.A.T @ (point_global - state.r)
    return force_global, ca.cross(s_local, state.A.T @ force_global)


def _point_velocity(state, point_global):
    """Global velocity of the body's material point at a global position."""
    return state.rdot + state.A @ ca.cross(state.w, state.A.T @ (point_global - state.r))


def _gradient_wrenches(states, delta, force):
    """(f, n') per body of a force ``force`` pushing against the growth of ``delta`` (virtual
    work -force d(delta)): f = -force d(delta)/dr, n' = -force 1/2 G(p) d(delta)/dp."""
    out = []
    for s in states:
        if s.body.is_ground:
            out.append((ca.DM.zeros(3), ca.DM.zeros(3)))
            continue
        out.append((-force * ca.gradient(delta, s.r),
                    -force * 0.5 * G_matrix(s.p) @ ca.gradient(delta, s.p)))
    return out


def _laws_in(law):
    """The law and the laws a Blended law is made of."""
    if isinstance(law, Blended):
        return [law, *_laws_in(law.bushing), *_laws_in(law.contact)]
    return [law]


def _law_problems(owner, law, label="law"):
    if not isinstance(law, ContactLaw):
        return [f"{owner}: {label} must be a ContactLaw, got {type(law).__name__}"]
    return law.problems(owner)


def _geometry_property(name):
    return property(lambda self: getattr(self.geometry, name),
                    doc=f"``{name}`` of the joint geometry (read-only).")


class PenaltyClearanceJoint(ForceElement):
    """Base of the penalty clearance joints: ``n_contacts`` contacts between ``parent``
    (bodies[0]) and ``child`` (bodies[1]).

    Subclasses implement ``_contacts(states) -> (delta, normals, points)``: the penetrations
    (CasADi column, n_contacts), the direction of each contact force on the child (unit up
    to the smoothing of |d|) and its global application point (lists of CasADi 3-vectors), and ``_laws()``, the law of each
    contact. ``geometry`` is the complementarity joint holding the same data.
    """

    kind = "penalty clearance joint"
    evaluation = "implicit"
    is_contact = True

    parent = _geometry_property("parent")
    child = _geometry_property("child")
    point = _geometry_property("point")
    clearance = _geometry_property("clearance")

    def _init(self, geometry, law, name):
        self.geometry = geometry
        self.bodies = (geometry.parent, geometry.child)
        self.law = law
        self.name = name

    # ------------------------------------------------------------ per-contact data
    @property
    def n_contacts(self) -> int:
        raise NotImplementedError

    def _laws(self) -> list:
        return [self.law] * self.n_contacts

    @property
    def loading_stiffness_ratio(self) -> float:
        """The largest of its contacts' laws' (``ForceElement.loading_stiffness_ratio``).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System(gravity=(0, 0, 0))
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> law = nd.ModifiedKelvinVoigt(1e5, restitution=0.5)
        >>> PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, law).loading_stiffness_ratio
        2.0
        """
        return max(law.loading_stiffness_ratio for law in self._laws())

    @property
    def history_size(self) -> int:
        """One remembered impact speed per contact when a law needs it, else 0."""
        needs = any(getattr(law, "needs_impact_velocity", False) for law in self._laws())
        return self.n_contacts if needs else 0

    def _contacts(self, states):
        raise NotImplementedError

    def _gradient_contact(self, k) -> bool:
        """Whether contact k's wrench comes from the gradient of delta_k (else: the force at
        its contact point along its normal)."""
        return False

    def _rates(self, states, delta, normals, points):
        rates = []
        sp, sc = states
        for k, (n, x) in enumerate(zip(normals, points)):
            if self._gradient_contact(k):
                rates.append(rate_of(delta[k], states))
            else:
                rates.append(-ca.dot(n, _point_velocity(sc, x) - _point_velocity(sp, x)))
        return ca.vertcat(*rates)

    def _forces(self, delta, rates, history):
        out = []
        for k, law in enumerate(self._laws()):
            v_imp = history[k] if (self.history_size and history is not None) else 0.0
            out.append(ca.if_else(delta[k] > 0, law.force(delta[k], rates[k], v_imp), 0))
        return out

    # ------------------------------------------------------------ diagnostics
    def penetrations(self, states):
        """Penetration delta_k of every contact (m, negative while open).

        Parameters
        ----------
        states : list of BodyState
            [parent, child].

        Returns
        -------
        casadi column, shape (n_contacts, 1)
        """
        return self._contacts(states)[0]

    def penetration_rates(self, states):
        """d(delta_k)/dt of every contact (m/s), CasADi column, shape (n_contacts, 1)."""
        delta, normals, points = self._contacts(states)
        return self._rates(states, delta, normals, points)

    def contact_points(self, states):
        """Global application point of every contact force, CasADi matrix (n_contacts, 3)."""
        return ca.horzcat(*self._contacts(states)[2]).T

    def contact_normals(self, states):
        """Direction of every contact force on the child (global), CasADi (n_contacts, 3)."""
        return ca.horzcat(*self._contacts(states)[1]).T

    def contact_forces(self, states, t=None, history=None):
        """Normal force f_k of every contact (N; 0 while open), CasADi (n_contacts, 1).

        ``history``: the element's memory (impact speeds), zeros when omitted.
        """
        delta, normals, points = self._contacts(states)
        rates = self._rates(states, delta, normals, points)
        if history is None and self.history_size:
            history = ca.DM.zeros(self.history_size)
        return ca.vertcat(*self._forces(delta, rates, history))

    # ------------------------------------------------------------ ForceElement
    def wrenches(self, states, t, history=None):
        sp, sc = states
        delta, normals, points = self._contacts(states)
        rates = self._rates(states, delta, normals, points)
        forces = self._forces(delta, rates, history)
        total = [[ca.DM.zeros(3), ca.DM.zeros(3)], [ca.DM.zeros(3), ca.DM.zeros(3)]]
        for k, (f, n, x) in enumerate(zip(forces, normals, points)):
            if self._gradient_contact(k):
                pair = _gradient_wrenches(states, delta[k], f)
            else:
                pair = [_wrench_at(sp, x, -f * n), _wrench_at(sc, x, f * n)]
            for body, (df, dn) in enumerate(pair):
                total[body][0] = total[body][0] + df
                total[body][1] = total[body][1] + dn
        return [tuple(total[0]), tuple(total[1])]

    def start_history(self, states, t, history):
        return self.next_history(states, t, history)

    def next_history(self, states, t, history):
        if not self.history_size:
            return history
        delta, normals, points = self._contacts(states)
        rates = self._rates(states, delta, normals, points)
        return ca.vertcat(*[impact_memory(delta[k], rates[k], history[k])
                            for k in range(self.n_contacts)])

    def potential_terms(self, states, t, history=None):
        """[(delta_k, law_k.elastic_potential(max(delta_k, 0), v_imp,k))] per contact."""
        delta = self._contacts(states)[0]
        remembered = self.history_size and history is not None
        return [(delta[k], lambda d, law=law, v=(history[k] if remembered else None):
                 law.elastic_potential(ca.fmax(d, 0), v))
                for k, law in enumerate(self._laws())]

    # ------------------------------------------------------------ validation
    def problems(self):
        out = super().problems()
        out += vector_problems(self.label, "point", self.point)
        out += number_problems(self.label, "clearance", self.clearance, lambda c: c >= 0, ">= 0")
        out += _law_problems(self.label, self.law)
        return out


class PenaltySphericalClearance(PenaltyClearanceJoint):
    """Ball (on ``child``) in a socket (on ``parent``) with radial clearance, Flores' way.

    d = ball centre - socket centre (both the body points at ``point`` initially),
    delta = |d| - clearance, force f(delta) on the ball towards the socket centre
    (normal -d/|d|) and the reaction on the socket, along the line of the two centres. One
    contact. ``clearance = 0`` gives a bushing-like joint with no play (seed 001 runs 0 mm);
    |d| is smoothed, sqrt(d.d + 1e-18 m^2), so d = 0 has a gradient.

    Parameters
    ----------
    parent, child : RigidBody or Ground
        Socket and ball.
    point : array_like, shape (3,)
        Centre of ball and socket, global frame, initial configuration.
    clearance : float
        Socket radius - ball radius (m, >= 0).
    law : ContactLaw
        Force of the penetration delta (m) and its rate (m/s).
    radius : float
        Ball radius (m, >= 0); only places the reported contact point on the ball surface.
    name : str, optional

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> b = s.add_body("ball", 2.0, (1e-3, 1e-3, 1e-3))
    >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(5e6, 1.5))
    >>> el.n_contacts, el.history_size
    (1, 0)
    """

    kind = "penalty spherical clearance joint"
    radius = _geometry_property("radius")

    def __init__(self, parent, child, point, clearance, law, radius=0.0, name=None):
        self._init(SphericalClearance(parent, child, point, clearance, radius, name), law, name)

    @property
    def n_contacts(self) -> int:
        return 1

    def _contacts(self, states):
        socket, ball = self.geometry._centres(states)
        d = ball - socket
        norm = _smooth_norm(d)
        return norm - self.clearance, [-d / norm], [ball + self.radius * d / norm]

    def problems(self):
        out = super().problems()
        out += number_problems(self.label, "radius", self.radius, lambda r: r >= 0, ">= 0")
        return out


class PenaltyCylindricalClearance(PenaltyClearanceJoint):
    """Pin (on ``parent``) in a bore (on ``child``) with radial clearance, by the strip method
    (seed 001 section 2.4, eq. 42).

    The bore (radius ``radius + clearance``, length ``length``, centred at ``point + offset``
    initially) is cut into N = ``n_strips`` strips of length L/N, each represented by its
    mid-circle, centred at z_k = (N - 2k + 1) L / (2N) along the bore axis, k = 1..N. Strip
    k's penetration is delta_k = |d_k| - clearance, d_k the radial displacement of the
    mid-circle's centre from the pin axis; the force acts along -d_k/|d_k| on the bore at the
    pin-surface point foot_k + radius d_k/|d_k| (same line of action as the strip centre).

    This is the seed's contact search (eqs. 25-37) in the small-misalignment limit: the
    strip circle is taken perpendicular to the pin, which neglects R_j (1 - cos theta) for a
    bore tilted by theta (R_j = radius + clearance). A tilted bore still loads its strips
    unevenly (delta_k varies linearly along the axis), and that distribution is what
    penalises misalignment: there is no separate misalignment moment (eq. 21). With
    ``tilt_correction=True`` the strip's circle tilt is kept to leading order:
    delta_k = |d_k| - clearance + R_j (1 - sqrt(1 - (b . n_k)^2)), b the bore axis,
    n_k = d_k/|d_k| (the tilted circle projects to an ellipse; this is its support distance
    along n_k, exact when the tilt lies in the plane of d_k and the pin axis, otherwise too
    small by about R_j^2 (b.n_k)^2 (b.t_k)^2 / (2 |d_k|), t_k = a x n_k). Its wrench is
    then -f_k d(delta_k)/dq (virtual work) and it needs ``clearance > 0``.

    Strips act in parallel: with Hertz-type laws the stiffness is per strip (the aligned
    bore is N times stiffer); Pereira's law divides its stiffness by its own ``n_strips``,
    which must equal this joint's (checked, with its ``length``).

    Parameters
    ----------
    parent, child : RigidBody or Ground
        Pin (journal) and bore (bearing).
    point : array_like, shape (3,)
        A point on the pin axis, global, initial configuration.
    axis : array_like, shape (3,)
        Unit direction of pin and bore (initially aligned).
    radius : float
        Pin radius (m, > 0).
    clearance : float
        Bore radius - pin radius (m, >= 0).
    length : float
        Bore length (m, > 0).
    law : ContactLaw
        Force per strip.
    n_strips : int
        Number of strips N (>= 1).
    offset : array_like, shape (3,)
        Initial bore centre - ``point``, perpendicular to ``axis``, |offset| <= clearance.
    name : str, optional
    tilt_correction : bool
        Keep the strip circle's tilt (see above); default False.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> el = PenaltyCylindricalClearance(s.ground, rod, (0, 0, 0), (0, 0, 1), 0.01, 1e-4,
    ...                                  0.02, nd.Hertz(1e9, 1.5), n_strips=4)
    >>> el.n_contacts
    4
    """

    kind = "penalty cylindrical clearance joint"
    axis = _geometry_property("axis")
    radius = _geometry_property("radius")
    length = _geometry_property("length")
    offset = _geometry_property("offset")

    def __init__(self, parent, child, point, axis, radius, clearance, length, law, n_strips=4,
                 offset=(0.0, 0.0, 0.0), name=None, *, tilt_correction=False):
        self._init(CylindricalClearance(parent, child, point, axis, radius, clearance, length,
                                        name, offset), law, name)
        self.n_strips = n_strips
        self.tilt_correction = bool(tilt_correction)

    @property
    def _strips_valid(self) -> bool:
        return isinstance(self.n_strips, (int, np.integer)) and not isinstance(self.n_strips, bool) \
            and self.n_strips >= 1

    @property
    def n_contacts(self) -> int:
        return int(self.n_strips) if self._strips_valid else 0

    def strip_positions(self) -> np.ndarray:
        """Axial positions z_k of the strips' mid-circles from the bore centre (m), shape (N,)."""
        N = self.n_strips
        return np.array([(N - 2 * k + 1) * self.length / (2 * N) for k in range(1, N + 1)])

    def _gradient_contact(self, k):
        return self.tilt_correction and k < self.n_strips

    def _strips(self, states):
        sp, sc = states
        a = sp.vector(self.axis)
        origin = sp.point(self.point)
        bore = sc.vector(self.axis)
        bore_radius = self.radius + self.clearance
        deltas, normals, points = [], [], []
        for z in self.strip_positions():
            centre = sc.point(self.point + self.offset + z * self.axis)
            rel = centre - origin
            along = ca.dot(rel, a)
            d = rel - along * a
            norm = _smooth_norm(d)
            n = d / norm
            delta = norm - self.clearance
            if self.tilt_correction:
                s2 = ca.dot(bore, n) ** 2
                # R_j (1 - sqrt(1 - s^2)) without cancellation; the floor only guards tilts
                # beyond 60 degrees, far outside the model
                delta = delta + bore_radius * s2 / (1 + ca.sqrt(ca.fmax(1 - s2, 0.25)))
            deltas.append(delta)
            normals.append(-n)
            points.append(origin + along * a + self.radius * n)
        return deltas, normals, points

    def _contacts(self, states):
        deltas, normals, points = self._strips(states)
        return ca.vertcat(*deltas), normals, points

    def problems(self):
        out = super().problems()
        out += check_unit(self.axis, "axis", self.label)
        for label in ("radius", "length"):
            out += number_problems(self.label, label, getattr(self, label), lambda x: x > 0, "> 0")
        if not self._strips_valid:
            out.append(f"{self.label}: n_strips must be an integer >= 1, got {self.n_strips!r}")
        offset = self.offset
        out += vector_problems(self.label, "offset", offset)
        if not out and (abs(offset @ self.axis) > 1e-12
                          or np.linalg.norm(offset) > self.clearance + 1e-15):
            out.append(f"{self.label}: offset must be perpendicular to axis with "
                       f"|offset| <= clearance, got {offset.tolist()}")
        if self.tilt_correction and not (is_number(self.clearance) and self.clearance > 0):
            out.append(f"{self.label}: tilt_correction needs clearance > 0 (the contact "
                       "direction of a joint with no play is undefined)")
        out += self._pereira_problems(self.law, "law")
        return out

    def _pereira_problems(self, law, label):
        out = []
        if not isinstance(law, ContactLaw):
            return out
        for p in _laws_in(law):
            if not isinstance(p, Pereira) or p.problems(self.label):
                continue    # the law's own problems are reported with the law
            if self._strips_valid and p.n_strips != self.n_strips:
                out.append(f"{self.label}: {label} (Pereira) is set up for n_strips = "
                           f"{p.n_strips}, the joint has n_strips = {self.n_strips}; give both "
                           "the same")
            if is_number(self.length) and not np.isclose(p.length, self.length, rtol=1e-9, atol=0):
                out.append(f"{self.label}: {label} (Pereira) length {p.length} differs from the "
                           f"bore length {self.length}")
            if p is law and is_number(self.clearance) and self.clearance > 0 and \
                    not np.isclose(p.radial_clearance, self.clearance, rtol=1e-9, atol=0):
                out.append(f"{self.label}: {label} (Pereira) radial_clearance "
                           f"{p.radial_clearance} differs from the joint's clearance "
                           f"{self.clearance}")
        return out


class PenaltyRevoluteClearance(PenaltyCylindricalClearance):
    """Cylindrical penalty clearance (strips) plus the two axial faces (seed 001 eq. 22).

    The geometry of :class:`~nlpdyn.joints.clearance.RevoluteClearance`: the pin carries
    shoulders at ``length/2 + axial_clearance`` on both sides of ``point``; each bore end
    face starts ``axial_clearance`` from its shoulder. Face penetration = -(axial gap); its
    force acts along the pin axis at the bore end's centre, with ``axial_law``
    (default ``law``; with Pereira's cylinder law as ``law`` give a planar law here).
    Contacts: the N strips (order of :meth:`strip_positions`), then face 1 (at -length/2),
    face 2 (at +length/2).

    Parameters
    ----------
    parent, child, point, axis, radius, clearance, length
        As :class:`PenaltyCylindricalClearance`.
    axial_clearance : float
        Axial play per side (m, >= 0).
    law : ContactLaw
        Force per strip.
    axial_law : ContactLaw, optional
        Force per axial face.
    n_strips, offset, name, tilt_correction
        As :class:`PenaltyCylindricalClearance`.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> el = PenaltyRevoluteClearance(s.ground, rod, (0, 0, 0), (0, 0, 1), 0.01, 1e-4, 0.02,
    ...                               1e-4, nd.LankaraniNikravesh(1e9, 1.5, 0.75), n_strips=2)
    >>> el.n_contacts, el.history_size
    (4, 4)
    """

    kind = "penalty revolute clearance joint"
    axial_clearance = _geometry_property("axial_clearance")

    def __init__(self, parent, child, point, axis, radius, clearance, length, axial_clearance,
                 law, axial_law=None, n_strips=4, offset=(0.0, 0.0, 0.0), name=None, *,
                 tilt_correction=False):
        self._init(RevoluteClearance(parent, child, point, axis, radius, clearance, length,
                                     axial_clearance, name, offset), law, name)
        self.axial_law = law if axial_law is None else axial_law
        self.n_strips = n_strips
        self.tilt_correction = bool(tilt_correction)

    @property
    def n_contacts(self) -> int:
        return super().n_contacts + 2

    def _laws(self):
        return [self.law] * (self.n_contacts - 2) + [self.axial_law] * 2

    def _contacts(self, states):
        deltas, normals, points = self._strips(states)
        a, _, ends = self.geometry._ends(states)
        q1, q2 = self.geometry._shoulders(states)
        deltas += [-ca.dot(ends[0] - q1, a), -ca.dot(q2 - ends[1], a)]
        return ca.vertcat(*deltas), normals + [a, -a], points + list(ends)

    def problems(self):
        out = super().problems()
        out += number_problems(self.label, "axial_clearance", self.axial_clearance,
                               lambda c: c >= 0, ">= 0")
        if self.axial_law is not self.law:
            out += _law_problems(self.label, self.axial_law, "axial_law")
        return out


class PenaltyPrismaticClearance(PenaltyClearanceJoint):
    """Polygonal slider (``child``) in a polygonal cavity (``parent``) with clearance.

    The vertex/plane pairs of :class:`~nlpdyn.joints.clearance.PrismaticClearance` (same
    data, same order: face, vertex, plane): penetration = -(gap) of the vertex behind the
    cavity plane, force along the plane's inward normal at the vertex. 4 N contacts for an
    N-gon.

    Parameters
    ----------
    parent, child : RigidBody or Ground
        Cavity and slider.
    point : array_like, shape (3,)
        Section centre, global, initial configuration.
    axis : array_like, shape (3,)
        Unit sliding direction.
    profile : array_like, shape (N, 2), N >= 3
        Convex slider section, counter-clockwise about ``axis``, section coordinates (m).
    clearance : float
        Offset of the cavity walls from the slider's faces (m, >= 0).
    length : float
        Slider length (m, > 0); its two end faces carry the vertices.
    law : ContactLaw
        Force per vertex/plane pair.
    section_x : array_like, shape (3,), optional
        Unit section x direction, perpendicular to ``axis``.
    name : str, optional

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
    >>> square = [[0.01, -0.01], [0.01, 0.01], [-0.01, 0.01], [-0.01, -0.01]]
    >>> el = PenaltyPrismaticClearance(s.ground, b, (0, 0, 0), (1, 0, 0), square, 1e-4, 0.05,
    ...                                nd.Hertz(1e8, 1.5))
    >>> el.n_contacts
    16
    """

    kind = "penalty prismatic clearance joint"
    axis = _geometry_property("axis")
    profile = _geometry_property("profile")
    length = _geometry_property("length")
    section_x = _geometry_property("section_x")

    def __init__(self, parent, child, point, axis, profile, clearance, length, law,
                 section_x=None, name=None):
        self._init(PrismaticClearance(parent, child, point, axis, profile, clearance, length,
                                      section_x, name), law, name)

    @property
    def n_contacts(self) -> int:
        return self.geometry.n_gaps

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

    def problems(self):
        out = super().problems()
        # the geometry's own checks (axis, section, length, profile), except its clearance > 0
        prefix = self.geometry.label
        for msg in self.geometry.problems():
            if "clearance must be > 0" in msg or "point must be" in msg or \
                    not msg.startswith(prefix):
                continue
            msg = self.label + msg[len(prefix):]
            if msg not in out:
                out.append(msg)
        return out


def penalty_version(joint, law, *, clearance=None, radius=None, length=None,
                    axial_clearance=None, n_strips=4, axial_law=None, name=None,
                    tilt_correction=False):
    """The penalty element with the same data as ``joint``.

    Parameters
    ----------
    joint : ClearanceJoint, Spherical, Revolute or Cylindrical
        A complementarity clearance joint (``SphericalClearance``, ``CylindricalClearance``,
        ``RevoluteClearance``, ``PrismaticClearance``; its data is copied; ``clearance``,
        ``radius``, ``length``, ``axial_clearance`` override it when given) or an ideal joint
        (``Spherical``, ``Revolute``, ``Cylindrical``; then the penalty joint has
        ``clearance`` and ``axial_clearance`` (default 0: a bushing-like joint with no play)
        and needs ``radius`` and ``length`` for Revolute/Cylindrical; ``radius`` of a
        Spherical is the optional ball radius).
    law : ContactLaw
    n_strips, axial_law, tilt_correction
        For the cylindrical and revolute elements.
    name : str, optional
        Default: the joint's name.

    Returns
    -------
    PenaltyClearanceJoint

    Raises
    ------
    ValueError
        An ideal Revolute/Cylindrical without ``radius`` or ``length``.
    TypeError
        A joint with no penalty version.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> pin = nd.Revolute(s.ground, rod, (0, 0, 0), (0, 0, 1), name="pin")
    >>> el = penalty_version(pin, nd.Hertz(1e9, 1.5), radius=0.01, length=0.02, n_strips=2)
    >>> el.name, el.clearance, el.axial_clearance, el.n_contacts
    ('pin', 0.0, 0.0, 4)
    """
    name = joint.name if name is None else name

    def pick(given, attr, default=None):
        if given is not None:
            return given
        return getattr(joint, attr) if hasattr(joint, attr) else default

    axial = {"n_strips": n_strips, "name": name, "tilt_correction": tilt_correction}
    if isinstance(joint, SphericalClearance):
        return PenaltySphericalClearance(joint.parent, joint.child, joint.point,
                                         pick(clearance, "clearance"), law,
                                         pick(radius, "radius"), name)
    if isinstance(joint, RevoluteClearance):
        return PenaltyRevoluteClearance(joint.parent, joint.child, joint.point, joint.axis,
                                        pick(radius, "radius"), pick(clearance, "clearance"),
                                        pick(length, "length"),
                                        pick(axial_clearance, "axial_clearance"), law,
                                        axial_law, offset=joint.offset, **axial)
    if isinstance(joint, CylindricalClearance):
        return PenaltyCylindricalClearance(joint.parent, joint.child, joint.point, joint.axis,
                                           pick(radius, "radius"), pick(clearance, "clearance"),
                                           pick(length, "length"), law, offset=joint.offset,
                                           **axial)
    if isinstance(joint, PrismaticClearance):
        return PenaltyPrismaticClearance(joint.parent, joint.child, joint.point, joint.axis,
                                         joint.profile, pick(clearance, "clearance"),
                                         pick(length, "length"), law, joint.section_x, name)
    c = 0.0 if clearance is None else clearance
    if isinstance(joint, Spherical):
        return PenaltySphericalClearance(joint.parent, joint.child, joint.point, c, law,
                                         0.0 if radius is None else radius, name)
    if isinstance(joint, (Revolute, Cylindrical)):
        missing = [k for k, v in (("radius", radius), ("length", length)) if v is None]
        if missing:
            raise ValueError(f"{joint.label}: give {' and '.join(missing)} for its penalty "
                             "version")
        if isinstance(joint, Revolute):
            return PenaltyRevoluteClearance(joint.parent, joint.child, joint.point, joint.axis,
                                            radius, c, length,
                                            0.0 if axial_clearance is None else axial_clearance,
                                            law, axial_law, **axial)
        return PenaltyCylindricalClearance(joint.parent, joint.child, joint.point, joint.axis,
                                           radius, c, length, law, **axial)
    raise TypeError(f"no penalty version of {type(joint).__name__}; give a SphericalClearance, "
                    "CylindricalClearance, RevoluteClearance, PrismaticClearance, Spherical, "
                    "Revolute or Cylindrical")
