"""Joints with clearance as unilateral gaps g(q) >= 0 (seed 002, section 3).

Each joint takes the geometric data of its ideal counterpart plus the clearance sizes, so a
model switches between ideal and clearance by changing one line. Gaps are true (nonlinear)
distances. Radial clearances are round gaps (clearance - |d|, d the offset from the pin axis or
socket centre in the parent's frame), axial and prismatic ones flat (see
``UnilateralConstraint``); each joint also reports its contact points.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..rotations import perpendicular_pair
from .base import UnilateralConstraint, check_unit, smooth_norm


class ClearanceJoint(UnilateralConstraint):
    """Common data and checks of the clearance joints."""

    kind = "clearance joint"

    def __init__(self, parent, child, point, clearance, name=None):
        self.parent, self.child = parent, child
        self.bodies = (parent, child)
        self.point = np.asarray(point, dtype=float).reshape(-1)
        self.clearance = float(clearance)
        self.name = name

    def problems(self):
        out = super().problems()
        if self.point.shape != (3,) or not np.all(np.isfinite(self.point)):
            out.append(f"{self.label}: point must be 3 finite numbers, got {self.point.tolist()}")
        if not (np.isfinite(self.clearance) and self.clearance > 0):
            out.append(f"{self.label}: clearance must be > 0, got {self.clearance} "
                       "(use the ideal joint for zero clearance)")
        return out

    @property
    def min_clearance(self) -> float:
        return self.clearance

    def reaction_point(self):
        return self.point


class _AxialMixin:
    def _axis_problems(self):
        out = check_unit(self.axis, "axis", self.label)
        for label, value in (("radius", self.radius), ("length", self.length)):
            if not (np.isfinite(value) and value > 0):
                out.append(f"{self.label}: {label} must be > 0, got {value}")
        return out


class CylindricalClearance(_AxialMixin, ClearanceJoint):
    """Pin in a bore with radial clearance: two radial gaps at the bore's end points.

    ``parent`` carries the pin (radius ``radius``, along ``axis`` through ``point``);
    ``child`` the bore (radius ``radius + clearance``, length ``length``, centred at
    ``point + offset`` initially; ``offset`` is perpendicular to the axis, |offset| <=
    clearance, default 0). Gap k = clearance - distance of bore end k's centre from the pin
    axis (seed 002 eqs. 34-37); it acts at the bore end, its normal is radial.
    """

    kind = "cylindrical clearance joint"
    n_gaps = 2

    def __init__(self, parent, child, point, axis, radius, clearance, length, name=None,
                 offset=(0.0, 0.0, 0.0)):
        super().__init__(parent, child, point, clearance, name)
        self.axis = np.asarray(axis, dtype=float).reshape(-1)
        self.radius, self.length = float(radius), float(length)
        self.offset = np.asarray(offset, dtype=float).reshape(-1)

    def problems(self):
        out = super().problems() + self._axis_problems()
        if not out and (self.offset.shape != (3,) or abs(self.offset @ self.axis) > 1e-12
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

    def contact_coordinates(self, states):
        return [(d, self.clearance) for _, d, _ in self._radial(states)]

    def contact_points(self, states):
        rows = [foot - self.radius * d_global / smooth_norm(d, self.clearance)
                for foot, d, d_global in self._radial(states)]
        return ca.horzcat(*rows).T


class RevoluteClearance(CylindricalClearance):
    """Cylindrical clearance plus two axial gaps (seed 002 eqs. 40-42).

    The pin carries shoulders at ``length/2 + axial_clearance`` on both sides of ``point``;
    each bore face starts ``axial_clearance`` from its shoulder (total axial play
    2 axial_clearance). Gaps: [radial end 1, radial end 2, axial face 1, axial face 2].
    """

    kind = "revolute clearance joint"
    n_gaps = 4

    def __init__(self, parent, child, point, axis, radius, clearance, length, axial_clearance,
                 name=None, offset=(0.0, 0.0, 0.0)):
        super().__init__(parent, child, point, axis, radius, clearance, length, name, offset)
        self.axial_clearance = float(axial_clearance)

    def problems(self):
        out = super().problems()
        if not (np.isfinite(self.axial_clearance) and self.axial_clearance > 0):
            out.append(f"{self.label}: axial_clearance must be > 0, got {self.axial_clearance}")
        return out

    @property
    def min_clearance(self) -> float:
        return min(self.clearance, self.axial_clearance)

    def _shoulders(self, states):
        sp, _ = states
        reach = 0.5 * self.length + self.axial_clearance
        return [sp.point(self.point + s * reach * self.axis) for s in (-1, 1)]

    def contact_coordinates(self, states):
        a, _, ends = self._ends(states)
        q1, q2 = self._shoulders(states)
        return super().contact_coordinates(states) + [(ca.dot(ends[0] - q1, a), None),
                                                       (ca.dot(q2 - ends[1], a), None)]

    def contact_points(self, states):
        _, _, ends = self._ends(states)
        return ca.vertcat(super().contact_points(states), ends[0].T, ends[1].T)


class SphericalClearance(ClearanceJoint):
    """Ball (on ``child``) in a socket (on ``parent``) with radial clearance: one round gap,
    clearance - |ball centre - socket centre| (the offset measured in the socket's frame). ``radius`` (ball radius, optional) only places
    the reported contact point on the ball's surface."""

    kind = "spherical clearance joint"
    n_gaps = 1

    def __init__(self, parent, child, point, clearance, radius=0.0, name=None):
        super().__init__(parent, child, point, clearance, name)
        self.radius = float(radius)

    def _centres(self, states):
        sp, sc = states
        return sp.point(self.point), sc.point(self.point)

    def contact_coordinates(self, states):
        socket, ball = self._centres(states)
        return [(states[0].A.T @ (ball - socket), self.clearance)]

    def contact_points(self, states):
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
    """

    kind = "prismatic clearance joint"

    def __init__(self, parent, child, point, axis, profile, clearance, length, section_x=None,
                 name=None):
        super().__init__(parent, child, point, clearance, name)
        self.axis = np.asarray(axis, dtype=float).reshape(-1)
        self.profile = np.asarray(profile, dtype=float)
        self.length = float(length)
        if section_x is None and self.axis.shape == (3,) and np.linalg.norm(self.axis) > 0:
            section_x = perpendicular_pair(self.axis / np.linalg.norm(self.axis))[0]
        self.section_x = None if section_x is None else np.asarray(section_x, dtype=float)
        self.n_gaps = 4 * len(self.profile) if self.profile.ndim == 2 else 0

    def problems(self):
        out = super().problems() + check_unit(self.axis, "axis", self.label)
        if self.section_x is not None:
            section_problems = check_unit(self.section_x, "section_x", self.label)
            out += section_problems
            if not section_problems and self.axis.shape == (3,) and \
                    abs(self.section_x @ self.axis) > 1e-9:
                out.append(f"{self.label}: section_x must be perpendicular to axis")
        if not (np.isfinite(self.length) and self.length > 0):
            out.append(f"{self.label}: length must be > 0, got {self.length}")
        P = self.profile
        if P.ndim != 2 or P.shape[1] != 2 or len(P) < 3:
            out.append(f"{self.label}: profile must be (N >= 3, 2) section coordinates")
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

    def gaps(self, states):
        sp, sc = states
        verts = self._vertices()
        points, normals = self._planes()
        rows = []
        for face, k, e in self._pairs():
            rows.append(ca.dot(sp.point(points[e]) - sc.point(verts[face, k]), sp.vector(normals[e])))
        return ca.vertcat(*rows)

    def contact_points(self, states):
        _, sc = states
        verts = self._vertices()
        return ca.horzcat(*[sc.point(verts[face, k]) for face, k, _ in self._pairs()]).T
