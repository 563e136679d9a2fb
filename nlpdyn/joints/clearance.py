"""Joints with clearance as unilateral gaps g(q) >= 0 (seed 002, section 3).

Each joint takes the geometric data of its ideal counterpart plus the clearance sizes, so a
model switches between ideal and clearance by changing one line. Gaps are true (nonlinear)
distances. Radial clearances are round gaps (clearance - |d|, d the offset from the pin axis or
socket centre in the parent's frame), axial and prismatic ones flat (see
``UnilateralConstraint``); each joint also reports its contact points. Every clearance joint
takes ``friction`` (the Coulomb coefficient mu of all its contacts, default 0): tangential
impulses within the friction cone of each gap's normal impulse, solved in the same per-step
program (``nlpdyn.step_nlp``, docs/guide/friction.md, "Coulomb friction in
clearance joints").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

from ..checks import (as_array, as_number, as_unit_vector, as_vector, is_vector,
                      number_problems, show, vector_problems)
from ..rotations import perpendicular_pair
from .base import UnilateralConstraint, check_unit, smooth_norm
from .ideal import Cylindrical, Prismatic, Revolute, Spherical

if TYPE_CHECKING:
    from .._typing import Symbolic
    from ..body import BodyState, RigidBody
    from .modes import JointModes


def _positive(value):
    return value > 0


class ClearanceJoint(UnilateralConstraint):
    """Common data and checks of the clearance joints.

    Parameters
    ----------
    parent, child : RigidBody
        The bodies it joins (the child moves within the clearance).
    point : array_like, shape (3,)
        The joint's centre (global, initial configuration).
    clearance : float
        The radial (or, for a slider, lateral) clearance (m, > 0).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).
    friction : float
        Coulomb coefficient of every gap's contact (0: frictionless).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> ball = s.add_body("ball", 0.1, (1e-5, 1e-5, 1e-5))
    >>> socket = nd.SphericalClearance(s.ground, ball, (0, 0, 0), clearance=1e-4)
    >>> isinstance(socket, nd.ClearanceJoint), socket.clearance, socket.reaction_point()
    (True, 0.0001, array([0., 0., 0.]))
    """

    kind = "clearance joint"

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, clearance: float,
                 name: str | None = None, friction: float = 0.0):
        self.parent, self.child = parent, child
        self.bodies = (parent, child)
        self.name = name
        self.point = as_vector(point)
        self.clearance = as_number(clearance)
        self.friction = as_number(friction)

    def problems(self) -> list[str]:
        out = super().problems() + vector_problems(self.label, "point", self.point)
        out += number_problems(self.label, "clearance", self.clearance, _positive, "> 0",
                               " (use the ideal joint for zero clearance)")
        out += number_problems(self.label, "friction", self.friction, lambda m: m >= 0, ">= 0")
        return out

    @property
    def min_clearance(self) -> float:
        return self.clearance

    def reaction_point(self) -> np.ndarray | None:
        return self.point

    nominal = None      # the ideal joint this one approximates as the clearance tends to 0

    def _nominal(self):
        axis = getattr(self, "axis", None)
        args = () if axis is None else (axis,)
        return self.nominal(self.parent, self.child, self.point, *args)

    def frame(self) -> np.ndarray:
        """The nominal ideal joint's frame (``Joint.frame``).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> pin = s.add_body("pin", 0.1, (1e-5, 1e-5, 1e-5))
        >>> bore = nd.CylindricalClearance(s.ground, pin, (0, 0, 0), (0, 0, 1), radius=0.01,
        ...                                clearance=1e-4, length=0.02)
        >>> bore.frame()[:, 2]
        array([0., 0., 1.])
        """
        return self._nominal().frame()

    def modes(self) -> JointModes:
        """The nominal ideal joint's modes: the split of the contact forces along them tells
        which part the contacts carry along the motions the joint allows (``Result.
        joint_forces``).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> pin = s.add_body("pin", 0.1, (1e-5, 1e-5, 1e-5))
        >>> bore = nd.CylindricalClearance(s.ground, pin, (0, 0, 0), (0, 0, 1), radius=0.01,
        ...                                clearance=1e-4, length=0.02)
        >>> bore.modes().free.shape       # a cylindrical joint's two: turn and slide
        (6, 2)
        """
        return self._nominal().modes()


class _AxialMixin:
    def _axis_problems(self):
        out = check_unit(self.axis, "axis", self.label)
        for label in ("radius", "length"):
            out += number_problems(self.label, label, getattr(self, label), _positive, "> 0")
        return out


class CylindricalClearance(_AxialMixin, ClearanceJoint):
    """Pin in a bore with radial clearance: two radial gaps at the bore's end points.

    ``parent`` carries the pin (radius ``radius``, along ``axis`` through ``point``);
    ``child`` the bore (radius ``radius + clearance``, length ``length``, centred at
    ``point + offset`` initially; ``offset`` is perpendicular to the axis, |offset| <=
    clearance, default 0). Gap k = clearance - distance of bore end k's centre from the pin
    axis (seed 002 eqs. 34-37); it acts at the bore end, its normal is radial.

    Parameters
    ----------
    parent : RigidBody or Ground
        The body that carries the pin.
    child : RigidBody or Ground
        The body that carries the bore.
    point : array_like, shape (3,)
        A point on the pin's axis, global frame at the initial configuration; the bore is
        centred at ``point + offset``.
    axis : array_like, shape (3,)
        The pin's axis, global frame at the initial configuration (a unit vector).
    radius : float
        The pin's radius (m, > 0); the bore's is ``radius + clearance``.
    clearance : float
        The radial clearance (m, > 0; use :class:`~nlpdyn.Cylindrical` for none).
    length : float
        The bore's length (m, > 0).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).
    offset : array_like, shape (3,)
        The bore centre's initial offset from the pin's axis (m, global; perpendicular to
        ``axis``, at most ``clearance`` long).
    friction : float
        The Coulomb coefficient of its contacts (>= 0).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> link = s.add_body("link", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.1, 0, 0))
    >>> pin = s.add_joint(nd.CylindricalClearance(s.ground, link, point=(0, 0, 0),
    ...                                            axis=(0, 0, 1), radius=0.01,
    ...                                            clearance=1e-4, length=0.02))
    >>> pin.n_gaps, s.problems()
    (2, [])
    """

    kind = "cylindrical clearance joint"
    nominal = Cylindrical
    n_gaps = 2

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, axis: ArrayLike,
                 radius: float, clearance: float, length: float, name: str | None = None,
                 offset: ArrayLike = (0.0, 0.0, 0.0), friction: float = 0.0):
        super().__init__(parent, child, point, clearance, name, friction)
        self.axis = as_unit_vector(axis, self.label, "axis")
        self.radius, self.length = as_number(radius), as_number(length)
        self.offset = as_vector(offset)

    def problems(self) -> list[str]:
        out = super().problems() + self._axis_problems()
        out += vector_problems(self.label, "offset", self.offset)
        if not out and (abs(self.offset @ self.axis) > 1e-12
                        or np.linalg.norm(self.offset) > self.clearance):
            out.append(f"{self.label}: offset must be perpendicular to axis with "
                       f"|offset| <= clearance, got {self.offset.tolist()}")
        return out

    def _ends(self, states):
        sp, sc = states
        a = sp.vector(self.axis)
        origin = sp.point(self.point)
        ends = [sc.point(self.point + self.offset + s * 0.5 * self.length * self.axis)
                for s in (-1, 1)]
        return a, origin, ends

    def _radial(self, states):
        """Per bore end: (foot of the end centre on the pin axis, its offset d from the axis in
        the pin's frame (2), the offset in the global frame)."""
        sp, _ = states
        a, origin, ends = self._ends(states)
        f, g = (sp.vector(u) for u in perpendicular_pair(self.axis))
        out = []
        for e in ends:
            rel = e - origin
            d = ca.vertcat(ca.dot(rel, f), ca.dot(rel, g))
            out.append((origin + ca.dot(rel, a) * a, d, d[0] * f + d[1] * g))
        return out

    def contact_coordinates(self, states: list[BodyState]) -> list[tuple]:
        return [(d, self.clearance) for _, d, _ in self._radial(states)]

    def contact_points(self, states: list[BodyState]) -> Symbolic:
        rows = [foot - self.radius * d_global / smooth_norm(d, self.clearance)
                for foot, d, d_global in self._radial(states)]
        return ca.horzcat(*rows).T


class RevoluteClearance(CylindricalClearance):
    """Cylindrical clearance plus two axial gaps (seed 002 eqs. 40-42).

    The pin carries shoulders at ``length/2 + axial_clearance`` on both sides of ``point``;
    each bore face starts ``axial_clearance`` from its shoulder (total axial play
    2 axial_clearance). Gaps: [radial end 1, radial end 2, axial face 1, axial face 2].

    Parameters
    ----------
    parent, child, point, axis, radius, clearance, length, name, offset, friction
        As for :class:`~nlpdyn.CylindricalClearance` (``parent`` carries the pin,
        ``child`` the bore).
    axial_clearance : float
        The axial play on each side (m, > 0).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> crank = s.add_body("crank", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.1, 0, 0))
    >>> pin = s.add_joint(nd.RevoluteClearance(s.ground, crank, point=(0, 0, 0),
    ...                                         axis=(0, 0, 1), radius=0.01, clearance=1e-4,
    ...                                         length=0.02, axial_clearance=1e-4))
    >>> pin.n_gaps, pin.min_clearance
    (4, 0.0001)
    """

    kind = "revolute clearance joint"
    nominal = Revolute
    n_gaps = 4

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, axis: ArrayLike,
                 radius: float, clearance: float, length: float, axial_clearance: float,
                 name: str | None = None, offset: ArrayLike = (0.0, 0.0, 0.0),
                 friction: float = 0.0):
        super().__init__(parent, child, point, axis, radius, clearance, length, name, offset,
                         friction)
        self.axial_clearance = as_number(axial_clearance)

    def problems(self) -> list[str]:
        return super().problems() + number_problems(self.label, "axial_clearance",
                                                    self.axial_clearance, _positive, "> 0")

    @property
    def min_clearance(self) -> float:
        return min(self.clearance, self.axial_clearance)

    def _shoulders(self, states):
        sp, _ = states
        reach = 0.5 * self.length + self.axial_clearance
        return [sp.point(self.point + s * reach * self.axis) for s in (-1, 1)]

    def contact_coordinates(self, states: list[BodyState]) -> list[tuple]:
        a, _, ends = self._ends(states)
        q1, q2 = self._shoulders(states)
        return super().contact_coordinates(states) + [(ca.dot(ends[0] - q1, a), None),
                                                       (ca.dot(q2 - ends[1], a), None)]

    def contact_points(self, states: list[BodyState]) -> Symbolic:
        _, _, ends = self._ends(states)
        return ca.vertcat(super().contact_points(states), ends[0].T, ends[1].T)


class SphericalClearance(ClearanceJoint):
    """Ball (on ``child``) in a socket (on ``parent``) with radial clearance: one round gap,
    clearance - |ball centre - socket centre| (the offset measured in the socket's frame). ``radius`` (ball radius, optional) only places
    the reported contact point on the ball's surface.

    Parameters
    ----------
    parent : RigidBody or Ground
        The body that carries the socket.
    child : RigidBody or Ground
        The body that carries the ball.
    point : array_like, shape (3,)
        The ball's and the socket's centre, global frame at the initial configuration.
    clearance : float
        The radial clearance (m, > 0; use :class:`~nlpdyn.Spherical` for none).
    radius : float
        The ball's radius (m, >= 0): where the reported contact point lies.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).
    friction : float
        The Coulomb coefficient of its contacts (>= 0).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> arm = s.add_body("arm", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, -0.2))
    >>> ball = s.add_joint(nd.SphericalClearance(s.ground, arm, point=(0, 0, 0),
    ...                                           clearance=1e-4, radius=0.01))
    >>> ball.n_gaps, s.problems()
    (1, [])
    """

    kind = "spherical clearance joint"
    nominal = Spherical
    n_gaps = 1

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, clearance: float,
                 radius: float = 0.0, name: str | None = None, friction: float = 0.0):
        super().__init__(parent, child, point, clearance, name, friction)
        self.radius = as_number(radius)

    def problems(self) -> list[str]:
        return super().problems() + number_problems(self.label, "radius", self.radius,
                                                    lambda r: r >= 0, ">= 0")

    def _centres(self, states):
        sp, sc = states
        return sp.point(self.point), sc.point(self.point)

    def contact_coordinates(self, states: list[BodyState]) -> list[tuple]:
        socket, ball = self._centres(states)
        return [(states[0].A.T @ (ball - socket), self.clearance)]

    def contact_points(self, states: list[BodyState]) -> Symbolic:
        socket, ball = self._centres(states)
        d = ball - socket
        return (ball + self.radius * d / smooth_norm(d, self.clearance)).T


class PrismaticClearance(ClearanceJoint):
    """Polygonal slider (``child``) in a polygonal cavity (``parent``) with clearance.

    ``profile``: the slider's convex cross-section, N vertices counter-clockwise about
    ``axis``, as (N, 2) coordinates in the section frame (``section_x``, axis x section_x)
    centred at ``point`` (``section_x`` defaults to a vector perpendicular to ``axis``).
    The cavity is the profile offset outward by ``clearance``. Each vertex at both faces
    (``point`` +- length/2 along ``axis``) is held off the cavity's two planes adjacent to it:
    4N gaps (seed 002 eqs. 38-39), ordered face (front -, back +), vertex, plane (previous
    edge, next edge).

    Parameters
    ----------
    parent : RigidBody or Ground
        The body that carries the cavity.
    child : RigidBody or Ground
        The slider.
    point : array_like, shape (3,)
        The section's origin, midway between the slider's faces, global frame at the
        initial configuration.
    axis : array_like, shape (3,)
        The sliding direction, global frame at the initial configuration (a unit vector).
    profile : array_like, shape (N, 2)
        The slider's convex cross-section, counter-clockwise about ``axis`` (m).
    clearance : float
        How far the cavity's sides stand off the profile's (m, > 0).
    length : float
        The slider's length along ``axis`` (m, > 0).
    section_x : array_like, shape (3,), optional
        The section frame's x axis (a unit vector perpendicular to ``axis``).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).
    friction : float
        The Coulomb coefficient of its contacts (>= 0).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> slider = s.add_body("slider", mass=1.0, inertia=(1e-3, 1e-3, 1e-3))
    >>> square = [(-0.01, -0.01), (0.01, -0.01), (0.01, 0.01), (-0.01, 0.01)]
    >>> guide = s.add_joint(nd.PrismaticClearance(s.ground, slider, point=(0, 0, 0),
    ...                                           axis=(1, 0, 0), profile=square,
    ...                                           clearance=1e-4, length=0.05))
    >>> guide.n_gaps, s.problems()
    (16, [])
    """

    kind = "prismatic clearance joint"
    nominal = Prismatic

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, axis: ArrayLike,
                 profile: ArrayLike, clearance: float, length: float,
                 section_x: ArrayLike | None = None, name: str | None = None,
                 friction: float = 0.0):
        super().__init__(parent, child, point, clearance, name, friction)
        self.axis = as_unit_vector(axis, self.label, "axis")
        self.profile = as_array(profile)
        self.length = as_number(length)
        if section_x is None and is_vector(self.axis) and np.linalg.norm(self.axis) > 0:
            section_x = perpendicular_pair(self.axis / np.linalg.norm(self.axis))[0]
        self.section_x = (None if section_x is None
                          else as_unit_vector(section_x, self.label, "section_x"))
        self.n_gaps = 4 * len(self.profile) if self._profile_shape_ok() else 0

    def _profile_shape_ok(self) -> bool:
        P = self.profile
        return isinstance(P, np.ndarray) and P.ndim == 2 and P.shape[1] == 2 and len(P) >= 3

    def problems(self) -> list[str]:
        axis_problems = check_unit(self.axis, "axis", self.label)
        out = super().problems() + axis_problems
        if self.section_x is not None:
            section_problems = check_unit(self.section_x, "section_x", self.label)
            out += section_problems
            if not (section_problems or axis_problems) and abs(self.section_x @ self.axis) > 1e-9:
                out.append(f"{self.label}: section_x must be perpendicular to axis")
        out += number_problems(self.label, "length", self.length, _positive, "> 0")
        P = self.profile
        if not self._profile_shape_ok():
            out.append(f"{self.label}: profile must be (N >= 3, 2) section coordinates, "
                       f"got {show(P)}")
            return out
        if not np.all(np.isfinite(P)):
            out.append(f"{self.label}: profile must be finite numbers, got {P.tolist()}")
            return out
        edges = np.roll(P, -1, axis=0) - P
        cross = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
        if np.any(cross <= 0):
            out.append(f"{self.label}: profile must be convex and counter-clockwise about axis")
        return out

    def _section(self):
        x = self.section_x
        y = np.cross(self.axis, x)
        return x, y

    def _vertices(self):
        """Global initial positions of the vertices, shape (2, N, 3) (front, back faces)."""
        x, y = self._section()
        flat = self.point + self.profile[:, :1] * x + self.profile[:, 1:] * y
        return np.array([flat + s * 0.5 * self.length * self.axis for s in (-1, 1)])

    def _planes(self):
        """Cavity planes (parent): for edge k (vertex k -> k+1) a point and outward normal."""
        x, y = self._section()
        P = self.profile
        edges = np.roll(P, -1, axis=0) - P
        normals2 = np.c_[edges[:, 1], -edges[:, 0]]
        normals2 /= np.linalg.norm(normals2, axis=1, keepdims=True)
        normals = normals2[:, :1] * x + normals2[:, 1:] * y
        points = self.point + P[:, :1] * x + P[:, 1:] * y + self.clearance * normals
        return points, normals

    def _pairs(self):
        n = len(self.profile)
        return [(face, k, e) for face in range(2) for k in range(n) for e in ((k - 1) % n, k)]

    def gaps(self, states: list[BodyState]) -> Symbolic:
        sp, sc = states
        verts = self._vertices()
        points, normals = self._planes()
        rows = []
        for face, k, e in self._pairs():
            rows.append(ca.dot(sp.point(points[e]) - sc.point(verts[face, k]), sp.vector(normals[e])))
        return ca.vertcat(*rows)

    def contact_points(self, states: list[BodyState]) -> Symbolic:
        _, sc = states
        verts = self._vertices()
        return ca.horzcat(*[sc.point(verts[face, k]) for face, k, _ in self._pairs()]).T
