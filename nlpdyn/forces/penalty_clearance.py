"""The penalty clearance joints, one class per joint type: spherical (ball in socket),
cylindrical (pin in bore, by strips), revolute (strips plus axial faces) and prismatic (polygonal
slider in a cavity).

Each takes the data of its complementarity counterpart in :mod:`nlpdyn.joints.clearance`, in
the same order, plus the law; the conventions are in :mod:`nlpdyn.forces.penalty_joints`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import is_number, number_problems, vector_problems
from ..joints.base import check_unit
from ..joints.clearance import (CylindricalClearance, PrismaticClearance, RevoluteClearance,
                                SphericalClearance)
from .impact_laws import Pereira
from .law_base import ContactLaw
from .penalty_base import (PenaltyClearanceJoint, _geometry_property, _law_problems, _laws_in,
                           _smooth_norm)

if TYPE_CHECKING:
    from ..body import Ground, RigidBody
    from .._typing import ArrayLike

__all__ = ["PenaltySphericalClearance", "PenaltyCylindricalClearance",
           "PenaltyRevoluteClearance", "PenaltyPrismaticClearance"]


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

    def __init__(self, parent: RigidBody | Ground, child: RigidBody | Ground, point: ArrayLike,
                 clearance: float, law: ContactLaw, radius: float = 0.0,
                 name: str | None = None) -> None:
        self._init(SphericalClearance(parent, child, point, clearance, radius, name), law, name)

    @property
    def n_contacts(self) -> int:
        return 1

    def _contacts(self, states):
        socket, ball = self.geometry._centres(states)
        d = ball - socket
        norm = _smooth_norm(d)
        return norm - self.clearance, [-d / norm], [ball + self.radius * d / norm]

    def problems(self) -> list[str]:
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

    def __init__(self, parent: RigidBody | Ground, child: RigidBody | Ground, point: ArrayLike,
                 axis: ArrayLike, radius: float, clearance: float, length: float,
                 law: ContactLaw, n_strips: int = 4, offset: ArrayLike = (0.0, 0.0, 0.0),
                 name: str | None = None, *, tilt_correction: bool = False) -> None:
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
        """Axial positions z_k of the strips' mid-circles from the bore centre (m).

        Returns
        -------
        numpy.ndarray, shape (n_strips,)
            z_k = (N - 2k + 1) L / (2N), k = 1..N.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> el = PenaltyCylindricalClearance(s.ground, rod, (0, 0, 0), (0, 0, 1), 0.01, 1e-4,
        ...                                  0.02, nd.Hertz(1e9, 1.5), n_strips=4)
        >>> el.strip_positions()
        array([ 0.0075,  0.0025, -0.0025, -0.0075])
        """
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

    def problems(self) -> list[str]:
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
    >>> el.n_contacts, el.history_size     # 4 impact speeds, 4 rates, 4 flags, a time
    (4, 13)
    """

    kind = "penalty revolute clearance joint"
    axial_clearance = _geometry_property("axial_clearance")

    def __init__(self, parent: RigidBody | Ground, child: RigidBody | Ground, point: ArrayLike,
                 axis: ArrayLike, radius: float, clearance: float, length: float,
                 axial_clearance: float, law: ContactLaw, axial_law: ContactLaw | None = None,
                 n_strips: int = 4, offset: ArrayLike = (0.0, 0.0, 0.0),
                 name: str | None = None, *, tilt_correction: bool = False) -> None:
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

    def problems(self) -> list[str]:
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

    def __init__(self, parent: RigidBody | Ground, child: RigidBody | Ground, point: ArrayLike,
                 axis: ArrayLike, profile: ArrayLike, clearance: float, length: float,
                 law: ContactLaw, section_x: ArrayLike | None = None,
                 name: str | None = None) -> None:
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

    def problems(self) -> list[str]:
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

