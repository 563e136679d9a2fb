"""Shapes to draw bodies with, and their poses along a result (animations, the 3D view).

A body's shapes are given in its body frame, relative to its centre of mass (``offset``), as
``System.add_body(..., geometry=...)`` or :meth:`System.set_geometry`: one shape or a list.
Shapes only draw; they take no part in the dynamics. A body given none is drawn as its
inertia-equivalent box (the uniform box of its mass and principal moments) and a link from
its centre of mass to every joint and element point on it.

:func:`describe` turns a system's geometry into plain data (stored in ``Result.info
["geometry"]``, so a saved result can still be drawn); :func:`poses` gives each body's pose
per frame, with the offsets inside clearance joints magnified on request; :func:`outlines`
the lines that draw a body in its frame.

Examples
--------
>>> import nlpdyn as nd
>>> s = nd.System()
>>> crank = s.add_body("crank", mass=0.12, inertia=(1e-4, 1e-4, 1e-5),
...                    geometry=nd.Cylinder(radius=0.01, length=0.08, axis=(0, 0, 1)))
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .checks import (as_number, as_unit_vector, as_vector, is_number, number_problems,
                     vector_problems)

CIRCLE_POINTS = 24      # points per circle drawn


def _positive(value):
    return value > 0


@dataclass(eq=False)
class Shape:
    """Base of the shapes: ``offset`` is the shape's centre in the body frame, from the
    centre of mass."""

    offset: np.ndarray = field(default_factory=lambda: np.zeros(3), kw_only=True)
    kind = "shape"

    def __post_init__(self):
        self.offset = as_vector(self.offset)

    def problems(self, owner) -> list[str]:
        return vector_problems(f"{owner}: {self.kind}", "offset", self.offset)

    def to_dict(self) -> dict:
        return {"shape": self.kind, "offset": self.offset.tolist()}


@dataclass(eq=False)
class Box(Shape):
    """A box of edge lengths ``size`` (3,) along the body axes."""

    size: np.ndarray = field(default_factory=lambda: np.ones(3))
    kind = "box"

    def __post_init__(self):
        super().__post_init__()
        self.size = as_vector(self.size)

    def problems(self, owner):
        out = super().problems(owner)
        if not (isinstance(self.size, np.ndarray) and self.size.shape == (3,)
                and np.all(np.isfinite(self.size)) and np.all(self.size >= 0)):
            out.append(f"{owner}: box size must be 3 finite numbers >= 0, got {self.size!r}")
        return out

    def to_dict(self):
        return {**super().to_dict(), "size": self.size.tolist()}


@dataclass(eq=False)
class Cylinder(Shape):
    """A cylinder of ``radius`` and ``length`` along ``axis`` (body frame, unit)."""

    radius: float = 0.01
    length: float = 0.1
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    kind = "cylinder"

    def __post_init__(self):
        super().__post_init__()
        self.radius, self.length = as_number(self.radius), as_number(self.length)
        self.axis = as_unit_vector(self.axis, "cylinder", "axis")

    def problems(self, owner):
        out = super().problems(owner)
        for label in ("radius", "length"):
            out += number_problems(f"{owner}: cylinder", label, getattr(self, label), _positive,
                                   "> 0")
        out += vector_problems(f"{owner}: cylinder", "axis", self.axis)
        if not out and abs(np.linalg.norm(self.axis) - 1) > 1e-9:
            out.append(f"{owner}: cylinder axis must be a unit vector")
        return out

    def to_dict(self):
        return {**super().to_dict(), "radius": self.radius, "length": self.length,
                "axis": self.axis.tolist()}


@dataclass(eq=False)
class Sphere(Shape):
    """A sphere of ``radius``."""

    radius: float = 0.01
    kind = "sphere"

    def __post_init__(self):
        super().__post_init__()
        self.radius = as_number(self.radius)

    def problems(self, owner):
        return super().problems(owner) + number_problems(f"{owner}: sphere", "radius",
                                                         self.radius, _positive, "> 0")

    def to_dict(self):
        return {**super().to_dict(), "radius": self.radius}


@dataclass(eq=False)
class Link(Shape):
    """A straight link from the centre of mass (plus ``offset``) to ``point`` (body frame)."""

    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    kind = "link"

    def __post_init__(self):
        super().__post_init__()
        self.point = as_vector(self.point)

    def problems(self, owner):
        return super().problems(owner) + vector_problems(f"{owner}: link", "point", self.point)

    def to_dict(self):
        return {**super().to_dict(), "point": self.point.tolist()}


SHAPES = {cls.kind: cls for cls in (Box, Cylinder, Sphere, Link)}


def as_shapes(geometry) -> list:
    """``geometry`` (None, a shape or a list of shapes) as a list."""
    if geometry is None:
        return []
    return list(geometry) if isinstance(geometry, (list, tuple)) else [geometry]


def geometry_problems(owner, geometry) -> list[str]:
    """Every problem with a body's ``geometry`` (empty when valid)."""
    out = []
    for shape in as_shapes(geometry):
        if isinstance(shape, Shape):
            out += shape.problems(owner)
        else:
            out.append(f"{owner}: geometry must be shapes (nd.Box, nd.Cylinder, nd.Sphere, "
                       f"nd.Link), got {type(shape).__name__}")
    return out


# ------------------------------------------------------------------ a system's geometry as data
def inertia_box(mass, inertia) -> np.ndarray:
    """Edge lengths of the uniform box with ``mass`` and the principal moments of ``inertia``
    (a moment that breaks the triangle inequality gives 0), along the principal axes."""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    total = moments.sum()
    # I_k = m (a_i^2 + a_j^2) / 12  ->  a_k^2 = 6 (I_i + I_j - I_k) / m
    return np.sqrt(np.maximum(6.0 * (total - 2.0 * moments) / mass, 0.0))


def _element_points(element):
    """(body, global point at t = 0) pairs of an element: its joint or application points."""
    bodies = list(getattr(element, "bodies", ()))
    pairs = []
    for attr, which in (("point", bodies), ("point_a", bodies[:1]), ("point_b", bodies[1:2])):
        value = getattr(element, attr, None)
        if isinstance(value, np.ndarray) and value.shape == (3,) and np.all(np.isfinite(value)):
            pairs += [(b, value) for b in which]
    return pairs


def _default_shapes(body, points) -> list:
    """The inertia-equivalent box along the principal axes and a link to every point."""
    moments, axes = np.linalg.eigh(0.5 * (body.inertia + body.inertia.T))
    box = inertia_box(body.mass, body.inertia)
    shapes = [{"shape": "box", "offset": [0.0, 0.0, 0.0], "size": box.tolist(),
               "axes": axes.tolist()}]
    for p in points:
        shapes.append(Link(point=body.local_point(p)).to_dict())
    return shapes


def describe(system) -> dict:
    """A system's geometry as plain data: ``bodies`` (name -> list of shape dicts, body
    frame), ``joints`` (one dict per two-body joint or clearance joint: name, parent, child,
    its point on each in their body frames (the ground's is global), the pin axis in the
    parent's frame or None, and the clearance, 0 for an ideal joint) and ``size`` (the
    largest distance between the bodies' centres and their points, for markers)."""
    points = {id(b): [] for b in system.bodies}
    for el in system.elements:
        for body, p in _element_points(el):
            if id(body) in points:
                points[id(body)].append(p)
    bodies = {}
    for b in system.bodies:
        given = as_shapes(getattr(b, "geometry", None))
        bodies[b.name] = ([s.to_dict() for s in given] if given
                          else _default_shapes(b, points[id(b)]))
    joints = [entry for entry in map(_joint_entry, system.elements) if entry is not None]
    extent = [np.linalg.norm(p - b.position) for b in system.bodies for p in points[id(b)]]
    extent += [float(np.max(inertia_box(b.mass, b.inertia))) for b in system.bodies]
    return {"bodies": bodies, "joints": joints, "size": float(max(extent, default=1.0)) or 1.0}


def _is_vector(value) -> bool:
    return isinstance(value, np.ndarray) and value.shape == (3,) and bool(np.all(np.isfinite(value)))


def _joint_entry(el):
    """A two-body joint's (or clearance joint's) data for drawing, None for other elements."""
    from .body import RigidBody     # body.py imports this module
    from .joints.clearance import CylindricalClearance
    parent, child = getattr(el, "parent", None), getattr(el, "child", None)
    point, axis = getattr(el, "point", None), getattr(el, "axis", None)
    # the bore's centre on the child: off the pin by ``offset`` at the start
    bore = point + el.offset if isinstance(el, CylindricalClearance) and _is_vector(point) \
        and _is_vector(el.offset) else point
    clearance = getattr(el, "clearance", 0.0)
    if not (isinstance(parent, RigidBody) and isinstance(child, RigidBody) and _is_vector(point)):
        return None
    if not _is_vector(axis) or "spherical" in el.kind:
        axis = None
    elif not parent.is_ground:
        axis = parent.local_vector(axis)
    return {"name": el.name, "kind": el.kind, "parent": parent.name, "child": child.name,
            "parent_point": _local(parent, point), "child_point": _local(child, bore),
            "axis": None if axis is None else axis.tolist(),
            "clearance": float(clearance) if is_number(clearance) else 0.0}


def _local(body, point) -> list:
    return (point if body.is_ground else body.local_point(point)).tolist()


# ------------------------------------------------------------------ drawing
def outlines(shapes) -> list[np.ndarray]:
    """Polylines (each (k, 3), body frame) that draw ``shapes`` (dicts from :func:`describe`)."""
    lines = []
    circle = np.linspace(0.0, 2 * np.pi, CIRCLE_POINTS + 1)
    ring = np.c_[np.cos(circle), np.sin(circle), np.zeros_like(circle)]
    for s in shapes:
        offset = np.asarray(s["offset"], dtype=float)
        kind = s["shape"]
        if kind == "box":
            half = 0.5 * np.asarray(s["size"], dtype=float)
            axes = np.asarray(s.get("axes", np.eye(3)), dtype=float)
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
            corners = (corners * half) @ axes.T + offset
            for i in range(8):
                for j in range(i + 1, 8):
                    if bin(i ^ j).count("1") == 1:      # corners differing in one coordinate
                        lines.append(corners[[i, j]])
        elif kind == "cylinder":
            a = np.asarray(s["axis"], dtype=float)
            f, g = _perpendicular(a)
            frame = np.c_[f, g, a]
            r, half = s["radius"], 0.5 * s["length"]
            ends = [(ring * r + [0, 0, z]) @ frame.T + offset for z in (-half, half)]
            lines += ends
            lines += [np.array([ends[0][k], ends[1][k]]) for k in range(0, CIRCLE_POINTS, 6)]
        elif kind == "sphere":
            r = s["radius"]
            for perm in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
                lines.append(ring[:, perm] * r + offset)
        elif kind == "link":
            lines.append(np.array([offset, np.asarray(s["point"], dtype=float)]))
    return lines


def _perpendicular(a):
    """Two unit vectors completing ``a`` to a right-handed frame."""
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    f = np.cross(a, helper)
    f /= np.linalg.norm(f)
    return f, np.cross(a, f)


def journal_offsets(res, joint: dict, indices) -> np.ndarray:
    """Offset of a joint's point on the child from its point on the parent, global, without
    the component along the pin axis, at ``res.t[indices]``: shape (n, 3). Inside a
    clearance joint, the journal's offset from the bore's centre (|offset| <= clearance)."""
    ends = []
    for side in ("parent", "child"):
        name, local = joint[side], np.asarray(joint[f"{side}_point"], dtype=float)
        if name in res.body_names:
            ends.append(res.position(name)[indices]
                        + np.einsum("nij,j->ni", res.rotation(name)[indices], local))
        else:
            ends.append(np.broadcast_to(local, (len(indices), 3)))
    offset = ends[1] - ends[0]
    if joint["axis"] is not None:
        a = np.asarray(joint["axis"], dtype=float)
        if joint["parent"] in res.body_names:
            a = np.einsum("nij,j->ni", res.rotation(joint["parent"])[indices], a)
        else:
            a = np.broadcast_to(a, offset.shape)
        offset = offset - np.sum(offset * a, axis=1, keepdims=True) * a
    return offset


def poses(res, indices, magnify_clearance: float = 1.0):
    """Each body's drawn pose at ``res.t[indices]``: name -> (positions (n, 3), rotations
    (n, 3, 3)). With ``magnify_clearance`` k > 1 the child of every clearance joint is moved
    by (k - 1) times the journal's offset (:func:`journal_offsets`), so that a play of
    micrometres shows."""
    indices = np.asarray(indices, dtype=int)
    out = {name: (res.position(name)[indices].copy(), res.rotation(name)[indices])
           for name in res.body_names}
    if magnify_clearance != 1.0:
        for joint in geometry_of(res)["joints"]:
            if joint["clearance"] > 0 and joint["child"] in out:
                out[joint["child"]][0][:] += ((magnify_clearance - 1.0)
                                              * journal_offsets(res, joint, indices))
    return out


def geometry_of(res) -> dict:
    """The geometry stored with a result, or for results without one (saved by an older
    nlpdyn) a small sphere per body."""
    stored = res.info.get("geometry")
    if stored:
        return stored
    return {"bodies": {name: [Sphere(radius=0.02).to_dict()] for name in res.body_names},
            "joints": [], "size": 0.1}


def frame_indices(t, fps: float, speed: float = 1.0, max_frames: int | None = None):
    """Indices into ``t`` of the output times nearest to a frame every ``speed / fps``
    seconds of simulated time (the last time included), at most ``max_frames`` of them."""
    t = np.asarray(t, dtype=float)
    if not (np.isfinite(fps) and fps > 0 and np.isfinite(speed) and speed > 0):
        raise ValueError(f"fps and speed must be positive and finite, got {fps!r}, {speed!r}")
    wanted = np.arange(t[0], t[-1], speed / fps)
    if max_frames is not None and len(wanted) + 1 > max_frames:
        wanted = np.linspace(t[0], t[-1], max(max_frames, 2))[:-1]
    idx = np.clip(np.searchsorted(t, wanted), 0, len(t) - 1)
    earlier = np.clip(idx - 1, 0, len(t) - 1)
    idx = np.where(np.abs(t[earlier] - wanted) <= np.abs(t[idx] - wanted), earlier, idx)
    return np.unique(np.r_[idx, len(t) - 1])


def drawn_lines(res, indices, magnify_clearance=1.0):
    """Per body, its outline polylines placed at every frame: name -> list of arrays
    (n_frames, k, 3), global."""
    geometry = geometry_of(res)
    placed = poses(res, indices, magnify_clearance)
    out = {}
    for name, (r, A) in placed.items():
        out[name] = [r[:, None, :] + np.einsum("nij,kj->nki", A, line)
                     for line in outlines(geometry["bodies"].get(name, []))]
    return out


def joint_positions(res, indices, magnify_clearance=1.0) -> np.ndarray:
    """Each joint's point on its child as drawn, shape (n_frames, n_joints, 3), global."""
    joints = geometry_of(res)["joints"]
    placed = poses(res, indices, magnify_clearance)
    out = np.zeros((len(indices), len(joints), 3))
    for k, joint in enumerate(joints):
        local = np.asarray(joint["child_point"], dtype=float)
        if joint["child"] in placed:
            r, A = placed[joint["child"]]
            out[:, k] = r + A @ local
        else:                           # a ground child: its point is global
            out[:, k] = local
    return out


def scene(res, fps, speed=1.0, magnify_clearance=1.0, max_frames=None):
    """What an animation draws: (frame indices into ``res.t``, :func:`drawn_lines`,
    :func:`joint_positions`, (centre, half side) of a cube holding all of it and the origin)."""
    if not (np.isfinite(magnify_clearance) and magnify_clearance > 0):
        raise ValueError(f"magnify_clearance must be positive and finite, got {magnify_clearance!r}")
    indices = frame_indices(res.t, fps, speed, max_frames)
    lines = drawn_lines(res, indices, magnify_clearance)
    joints = joint_positions(res, indices, magnify_clearance)
    every = np.concatenate([ln.reshape(-1, 3) for body in lines.values() for ln in body]
                           + [joints.reshape(-1, 3), np.zeros((1, 3))])
    low, high = every.min(axis=0), every.max(axis=0)
    return indices, lines, joints, (0.5 * (low + high), 0.5 * max(np.max(high - low), 1e-9) * 1.05)
