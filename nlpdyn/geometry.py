"""A system's geometry as data, and where it is drawn along a result (animations, 3D views).

The shapes themselves (:class:`~nlpdyn.Box`, :class:`~nlpdyn.Cylinder`,
:class:`~nlpdyn.Sphere`, :class:`~nlpdyn.Link`) and their checks are in :mod:`nlpdyn.shapes`,
re-exported here. A body given no shapes is drawn as a slender link from joint point to
joint point (to its centre of mass when it has one joint); one with no joint away from its
centre of mass as its inertia-equivalent box (the uniform box of its mass and principal
moments). Points of force elements on a body without shapes are joined to its centre of mass.

:func:`describe` turns a system's geometry into plain data (stored in ``Result.info
["geometry"]``, so a saved result can still be drawn), with the gravity that sets the views'
up direction (:func:`up_direction`) and the system's name, if it has one; :func:`poses`
gives each body's pose per frame, with the offsets inside clearance joints magnified on
request; :func:`outlines` the lines that draw a body in its frame.

Examples
--------
>>> import nlpdyn as nd
>>> s = nd.System(gravity=(0, -9.81, 0))
>>> bar = s.add_body("bar", mass=1.0, inertia=(2e-4, 0.0834, 0.0834), position=(0.5, 0, 0))
>>> _ = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 0, 1), name="pin"))
>>> [link] = describe(s)["bodies"]["bar"]    # from the pin through the centre of mass
>>> link["offset"], [round(x, 4) + 0.0 for x in link["point"]]     # to the bar's far end
([-0.5, 0.0, 0.0], [0.4999, 0.0, 0.0])
"""
from __future__ import annotations

import numpy as np

from .body import RigidBody
from .checks import is_number, is_vector
from .joints.clearance import CylindricalClearance
# the shapes and their checks, re-exported: imports from nlpdyn.geometry keep working
from .shapes import (SHAPES, Box, Cylinder, Link, Shape, Sphere, as_shapes,  # noqa: F401
                     geometry_problems, inertia_box)

CIRCLE_POINTS = 24      # points per circle drawn
# points of a body closer than this share of its size are one point
SAME_POINT = 1e-9
# the camera's default (elevation, azimuth) in degrees, about the up direction
VIEW = (20.0, -60.0)


# ------------------------------------------------------------------ a system's geometry as data
def _element_points(element):
    """(body, global point at t = 0) pairs of an element: its joint or application points."""
    bodies = list(getattr(element, "bodies", ()))
    pairs = []
    for attr, which in (("point", bodies), ("point_a", bodies[:1]), ("point_b", bodies[1:2])):
        value = getattr(element, attr, None)
        if is_vector(value):
            pairs += [(b, value) for b in which]
    return pairs


def _is_joint(element) -> bool:
    """Whether an element joins two bodies (a joint, clearance joint, bushing): its points
    carry a default body's link."""
    return (isinstance(getattr(element, "parent", None), RigidBody)
            and isinstance(getattr(element, "child", None), RigidBody))


def _distinct(points, scale) -> list:
    """``points`` without repeats (closer than ``SAME_POINT * scale``), in order."""
    kept = []
    for p in points:
        if all(np.linalg.norm(p - k) > SAME_POINT * scale for k in kept):
            kept.append(p)
    return kept


def _spanning_tree(distances) -> list:
    """The (row, column) pairs of the shortest spanning tree of the dense distance matrix
    (scipy's ``minimum_spanning_tree``, imported here: ``import nlpdyn`` leaves it to the
    first body with two joint points or more)."""
    from scipy.sparse.csgraph import minimum_spanning_tree
    tree = minimum_spanning_tree(distances).tocoo()
    return list(zip(tree.row.tolist(), tree.col.tolist()))


def _default_shapes(body, joint_points, other_points) -> list:
    """A body without shapes: links joining its joint points (body frame) along their shortest
    spanning tree, or from its one joint point through its centre of mass to the far face of
    its inertia-equivalent box (a bar hinged at one end: the whole bar); that box when they
    span nothing. A link from the centre of mass to every other point."""
    box = inertia_box(body.mass, body.inertia)
    local = [body.local_point(p) for p in joint_points]
    scale = max([1.0, *(float(np.linalg.norm(p)) for p in local)])
    nodes = _distinct(local, scale)
    axes = np.linalg.eigh(0.5 * (body.inertia + body.inertia.T))[1]
    if len(nodes) == 1:
        # one joint: a link through the centre of mass to the inertia box's far face
        joint = nodes[0]
        along = -joint / max(float(np.linalg.norm(joint)), 1e-300)
        far = along * 0.5 * float(np.abs(box * (axes.T @ along)).sum())
        nodes = _distinct([joint, far if np.linalg.norm(far) > SAME_POINT * scale
                           else np.zeros(3)], scale)
    shapes = []
    if len(nodes) >= 2:
        points = np.array(nodes)
        distances = np.linalg.norm(points[:, None] - points[None], axis=2)
        shapes = [Link(offset=nodes[i], point=nodes[j]).to_dict()
                  for i, j in sorted(_spanning_tree(distances))]
    if not shapes:
        shapes = [{"shape": "box", "offset": [0.0, 0.0, 0.0], "size": box.tolist(),
                   "axes": axes.tolist()}]
    for p in _distinct([body.local_point(p) for p in other_points], scale):
        if all(np.linalg.norm(p - n) > SAME_POINT * scale for n in nodes):
            shapes.append(Link(point=p).to_dict())
    return shapes


def describe(system) -> dict:
    """A system's geometry as plain data, as stored in ``Result.info["geometry"]``.

    Parameters
    ----------
    system : System

    Returns
    -------
    dict
        ``bodies`` (name -> list of shape dicts, body frame), ``joints`` (one dict per
        two-body joint or clearance joint: name, parent, child, its point on each in their
        body frames (the ground's is global), the pin axis in the parent's frame or None, and
        the clearance, 0 for an ideal joint), ``size`` (the largest distance between the
        bodies' centres and their points, for markers), ``gravity`` (3 numbers, global) and
        ``name`` (the system's ``name`` attribute when it has one, else None).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, -9.81, 0))
    >>> ball = s.add_body("ball", mass=1.0, inertia=(1, 1, 1), geometry=nd.Sphere(radius=0.1))
    >>> data = describe(s)
    >>> data["bodies"]["ball"][0]["shape"], data["gravity"]
    ('sphere', [0.0, -9.81, 0.0])
    """
    joint_points = {id(b): [] for b in system.bodies}
    other_points = {id(b): [] for b in system.bodies}
    for el in system.elements:
        into = joint_points if _is_joint(el) else other_points
        for body, p in _element_points(el):
            if id(body) in into:
                into[id(body)].append(p)
    bodies = {}
    for b in system.bodies:
        given = as_shapes(getattr(b, "geometry", None))
        bodies[b.name] = ([s.to_dict() for s in given] if given
                          else _default_shapes(b, joint_points[id(b)], other_points[id(b)]))
    joints = [entry for entry in map(_joint_entry, system.elements) if entry is not None]
    extent = [np.linalg.norm(p - b.position) for b in system.bodies
              for p in joint_points[id(b)] + other_points[id(b)]]
    extent += [float(np.max(inertia_box(b.mass, b.inertia))) for b in system.bodies]
    name = getattr(system, "name", None)
    gravity = np.asarray(system.gravity, dtype=float)
    return {"bodies": bodies, "joints": joints, "size": float(max(extent, default=1.0)) or 1.0,
            "gravity": gravity.tolist() if is_vector(gravity) else None,
            "name": name if isinstance(name, str) and name else None}


def _joint_entry(el):
    """A two-body joint's (or clearance joint's) data for drawing, None for other elements."""
    parent, child = getattr(el, "parent", None), getattr(el, "child", None)
    point, axis = getattr(el, "point", None), getattr(el, "axis", None)
    # the bore's centre on the child: off the pin by ``offset`` at the start
    bore = point + el.offset if isinstance(el, CylindricalClearance) and is_vector(point) \
        and is_vector(el.offset) else point
    clearance = getattr(el, "clearance", 0.0)
    if not (isinstance(parent, RigidBody) and isinstance(child, RigidBody) and is_vector(point)):
        return None
    if not is_vector(axis) or "spherical" in el.kind:
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


def scene(res, fps, speed=1.0, magnify_clearance=1.0, max_frames=None, frame=None):
    """What an animation draws: the frames' indices into ``res.t`` (:func:`frame_indices`),
    then :func:`placed`'s lines, joints and cube at them.

    Parameters
    ----------
    res : Result
    fps, speed, max_frames
        As for :func:`frame_indices`.
    magnify_clearance : float
        As for :func:`poses`.
    frame : ndarray, shape (3, 3), optional
        Draw in these rows' coordinates (:func:`view_frame`; default: global).

    Returns
    -------
    tuple
        ``(indices, lines, joints, (centre, half_side))``.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(); _ = s.add_body("ball", 1.0, (1, 1, 1))
    >>> res = nd.simulate(s, 0.1, 1e-3, progress=False)
    >>> indices, lines, joints, (centre, half) = scene(res, fps=20)
    >>> res.t[indices].round(3).tolist(), joints.shape
    ([0.0, 0.05, 0.1], (3, 0, 3))
    """
    indices = frame_indices(res.t, fps, speed, max_frames)
    return (indices, *placed(res, indices, magnify_clearance, frame))


def placed(res, indices, magnify_clearance=1.0, frame=None):
    """The bodies' lines and the joints at ``res.t[indices]``, and a cube holding them.

    Parameters
    ----------
    res : Result
    indices : array_like of int
        Output times drawn.
    magnify_clearance : float
        As for :func:`poses`.
    frame : ndarray, shape (3, 3), optional
        Draw in these rows' coordinates (:func:`view_frame`; default: global).

    Returns
    -------
    tuple
        (:func:`drawn_lines`, :func:`joint_positions`, (centre (3,), half side) of a cube
        holding all of it and the origin).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(); _ = s.add_body("ball", 1.0, (1, 1, 1), geometry=nd.Sphere(0.5))
    >>> res = nd.simulate(s, 0.01, 1e-3, progress=False)
    >>> lines, joints, (centre, half) = placed(res, [0])
    >>> float(half.round(3))
    0.525
    """
    if not (np.isfinite(magnify_clearance) and magnify_clearance > 0):
        raise ValueError(f"magnify_clearance must be positive and finite, got {magnify_clearance!r}")
    lines = drawn_lines(res, indices, magnify_clearance)
    joints = joint_positions(res, indices, magnify_clearance)
    if frame is not None:
        lines = {name: [ln @ frame.T for ln in body] for name, body in lines.items()}
        joints = joints @ frame.T
    every = np.concatenate([ln.reshape(-1, 3) for body in lines.values() for ln in body]
                           + [joints.reshape(-1, 3), np.zeros((1, 3))])
    low, high = every.min(axis=0), every.max(axis=0)
    return lines, joints, (0.5 * (low + high), 0.5 * max(np.max(high - low), 1e-9) * 1.05)


# ------------------------------------------------------------------ how a view is set
AXIS_NAMES = "xyz"


def up_direction(res, up=None) -> np.ndarray:
    """The direction a view of ``res`` puts up: ``up`` when given, else against the gravity
    stored with the result, else +z (no gravity, or a result saved without it).

    Parameters
    ----------
    res : Result
    up : str or array_like, shape (3,), optional
        An axis name (``"x"``, ``"y"``, ``"z"``, with ``"-"`` for its opposite) or a
        direction (global, any length but zero).

    Returns
    -------
    ndarray, shape (3,)
        A unit vector, global.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, -9.81, 0)); _ = s.add_body("ball", 1.0, (1, 1, 1))
    >>> res = nd.simulate(s, 0.002, 1e-3, progress=False)
    >>> up_direction(res), up_direction(res, up="z"), up_direction(res, up=(1, 1, 0)).round(3)
    (array([0., 1., 0.]), array([0., 0., 1.]), array([0.707, 0.707, 0.   ]))
    """
    if up is None:
        gravity = np.asarray(geometry_of(res).get("gravity") or np.zeros(3), dtype=float)
        size = float(np.linalg.norm(gravity))
        return -gravity / size + 0.0 if np.isfinite(size) and size > 0 else np.eye(3)[2]
    if isinstance(up, str):
        text = up.strip().lower()
        sign, axis = (-1.0, text[1:]) if text.startswith("-") else (1.0, text.lstrip("+"))
        if axis not in tuple(AXIS_NAMES):
            raise ValueError(f"up must be 'x', 'y' or 'z' (with '-' for the opposite) or a "
                             f"direction of 3 numbers, got {up!r}")
        return sign * np.eye(3)[AXIS_NAMES.index(axis)]
    try:
        vector = np.asarray(up, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        vector = np.full(1, np.nan)
    size = float(np.linalg.norm(vector)) if vector.shape == (3,) else np.nan
    if not (np.isfinite(size) and size > 0):
        raise ValueError(f"up must be 'x', 'y' or 'z' (with '-' for the opposite) or a "
                         f"direction of 3 numbers, not all zero, got {up!r}")
    return vector / size


def view_frame(up) -> tuple[np.ndarray, list[str]]:
    """A right-handed frame whose third axis is ``up``, and the names of its axes.

    Along a global axis (``up`` = +-x, +-y or +-z) the other two are global axes too, so that
    the drawn axes keep their names; otherwise they complete ``up`` to a frame.

    Parameters
    ----------
    up : array_like, shape (3,)
        A unit vector (:func:`up_direction`).

    Returns
    -------
    frame : ndarray, shape (3, 3)
        Rows: the drawn x, y and z axes as global directions (``frame @ point`` draws a
        global point).
    names : list of str
        Each row's name: ``"x"``, ``"-y"``, or its components ``"(0.6, 0.8, 0)"``.

    Examples
    --------
    >>> frame, names = view_frame((0.0, 1.0, 0.0))
    >>> names
    ['z', 'x', 'y']
    """
    up = np.asarray(up, dtype=float)
    along = np.flatnonzero(np.abs(np.abs(up) - 1.0) <= 1e-12)
    if len(along):
        k = int(along[0])
        first, second = np.eye(3)[(k + 1) % 3], np.eye(3)[(k + 2) % 3]
        if up[k] < 0:                       # keep the frame right-handed
            first, second = second, first
    else:
        first, second = _perpendicular(up)
    frame = np.array([first, second, up])
    return frame, [_direction_name(row) for row in frame]


def _direction_name(u) -> str:
    for k, name in enumerate(AXIS_NAMES):
        if abs(abs(u[k]) - 1.0) <= 1e-12:
            return name if u[k] > 0 else f"-{name}"
    return f"({', '.join(f'{c:.3g}' for c in u + 0.0)})"


def model_name(res, name=None) -> str | None:
    """The name a view's title gives the model: ``name`` when given, else the system's name
    stored with the result, else a ``"name"`` in ``res.info``, else None.

    Parameters
    ----------
    res : Result
    name : str, optional

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(); _ = s.add_body("ball", 1.0, (1, 1, 1))
    >>> res = nd.simulate(s, 0.002, 1e-3, progress=False)
    >>> model_name(res), model_name(res, "falling ball")
    (None, 'falling ball')
    """
    for candidate in (name, geometry_of(res).get("name"), res.info.get("name")):
        if isinstance(candidate, str) and candidate:
            return candidate
    return None


def time_labels(times) -> list[str]:
    """Times as text rounded to their grid: the decimals that show their typical spacing
    (its median, to two significant digits), so that a time of adaptive steps reads 0.12
    rather than 0.12000000000000001 or 0.1200347.

    Parameters
    ----------
    times : array_like, shape (n,)
        Increasing times [s].

    Returns
    -------
    list of str

    Examples
    --------
    >>> time_labels([0.0, 0.04, 0.08, 0.12000000000000001])
    ['0.00', '0.04', '0.08', '0.12']
    >>> time_labels([0.0, 0.0333, 0.0667, 0.1])
    ['0.000', '0.033', '0.067', '0.100']
    """
    times = np.asarray(times, dtype=float)
    steps = np.diff(times)
    steps = steps[steps > 0]
    decimals = 3
    if len(steps):
        spacing = float(f"{np.median(steps):.2g}")
        decimals = next(d for d in range(0, 17)
                        if abs(round(spacing, d) - spacing) <= 1e-9 * spacing)
    return [f"{t:.{decimals}f}" for t in times]
