"""Hypothesis strategies for nlpdyn models (used by tests/test_properties.py).

A model is drawn as plain data (``SystemSpec``: frozen dataclasses of numbers and tuples, so
Hypothesis prints a failing example as something one can paste) and turned into an
``nd.System`` by :func:`build`. ``mistakes`` draws one such model plus exactly one
injected error (a ``Mistake``), for the validation property.

Valid models, by construction:
- 1-4 bodies in a chain from the ground: joint k joins body k-1 (the ground for k = 0) to
  body k at a point on both; the bodies' centres and the joint points are 0.1-0.5 m apart
  along random directions, so the model fits in a ball of ~2.5 m.
- masses 0.1-5 kg; inertias from three second moments s_i = m r_i^2 (r_i 0.02-0.3 m) as
  (s2 + s3, s1 + s3, s1 + s2), which is how a physical body's principal moments arise and
  always satisfies the triangle inequality (with margin 2 min(s)); sometimes given as the
  full matrix in a rotated body frame.
- random unit orientations, small initial velocities (components <= 0.5 m/s and <= 2 rad/s)
  that the stepper projects onto the joints; gravity on or off; 0.02-0.05 s at h = 1e-3.
- joints: the ideal ones, sometimes none (a free body), sometimes a clearance joint
  (clearance 1e-5-1e-3 m, the bore centred on the pin so every gap starts open and equal to
  the clearance), sometimes a rotation driver at a constant rate on a revolute or cylindrical
  joint.
- 0-2 force elements: linear spring-dampers and bushings whose stiffness keeps the fastest
  mode they can excite at <= OMEGA_MAX rad/s (h OMEGA_MAX = 0.03 at h = 1e-3: accurate and
  far from the explicit evaluation's stability limit h omega = 2), with no damping or at
  most the critical damping of the stiffest spring allowed (h c / m <= 2 h OMEGA_MAX); or
  a constant point load (components <= 10 N per kg of its body).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import casadi as ca
import numpy as np
from hypothesis import strategies as st

import nlpdyn as nd

GROUND = -1
OMEGA_MAX = 30.0        # rad/s, highest mode a generated spring or bushing can excite
IDEAL = ("spherical", "revolute", "cylindrical", "prismatic", "universal", "fixed")
CLEARANCE = ("revolute_clearance", "spherical_clearance", "cylindrical_clearance",
             "prismatic_clearance")
AXIAL = ("revolute", "cylindrical", "prismatic", "fixed", "revolute_clearance",
         "cylindrical_clearance", "prismatic_clearance")
DRIVABLE = ("revolute", "cylindrical")


# ---------------------------------------------------------------- model data


@dataclass(frozen=True)
class BodySpec:
    name: str
    mass: float
    inertia: tuple          # 3 principal moments, or a 3x3 matrix as nested tuples
    position: tuple
    orientation: tuple      # Euler parameters
    velocity: tuple
    angular_velocity: tuple


@dataclass(frozen=True)
class JointSpec:
    name: str
    kind: str               # IDEAL, CLEARANCE, or "free" (no joint: the body flies free)
    parent: int             # body index, GROUND for the ground
    child: int
    point: tuple
    axis: tuple | None = None
    axis2: tuple | None = None          # universal joints: axis on the child
    clearance: float = 0.0
    axial_clearance: float = 0.0
    radius: float = 0.0                 # pin radius; polygon circumradius for prismatic
    length: float = 0.0
    sides: int = 0                      # prismatic clearance profile: regular polygon
    driver_rate: float | None = None    # rad/s of a RotationDriver on this joint


@dataclass(frozen=True)
class ForceSpec:
    name: str
    kind: str               # "spring", "bushing" or "load" (a constant PointForce)
    body_a: int             # loads: unused
    body_b: int
    point_a: tuple          # loads: the force (N, global)
    point_b: tuple          # bushings: unused (one point, point_a); loads: where it acts
    stiffness: float
    damping: float = 0.0
    rotational_stiffness: float = 0.0
    rotational_damping: float = 0.0
    free_length: float | None = None


@dataclass(frozen=True)
class SystemSpec:
    gravity: tuple
    bodies: tuple
    joints: tuple
    forces: tuple = ()
    t_end: float = 0.03
    h: float = 1e-3

    @property
    def has_clearance(self) -> bool:
        return any(j.kind in CLEARANCE for j in self.joints)

    @property
    def has_driver(self) -> bool:
        return any(j.driver_rate is not None for j in self.joints)

    @property
    def has_damping(self) -> bool:
        return any(f.damping > 0 or f.rotational_damping > 0 for f in self.forces)

    @property
    def conservative(self) -> bool:
        """No agent that may change the mechanical energy: no dampers, no drivers, no
        clearance joints (impacts), no applied loads."""
        return not (self.has_clearance or self.has_driver or self.has_damping
                    or any(f.kind == "load" for f in self.forces))

    @property
    def size(self) -> float:
        """Model size (m): the largest distance of a body centre or joint point from the
        origin, at least 0.1."""
        pts = [b.position for b in self.bodies] + [j.point for j in self.joints]
        return max(0.1, max(float(np.linalg.norm(p)) for p in pts))

    @property
    def extent(self) -> float:
        """The model's size as the README states the drift tolerance against it (m): the
        largest distance between body centres and joint points, or the largest body's
        extent sqrt(6 tr(J) / m) (a slender rod's length), whichever is larger; unlike
        ``size`` it does not depend on where the origin is."""
        pts = np.array([b.position for b in self.bodies] + [j.point for j in self.joints],
                       dtype=float)
        spread = np.linalg.norm(pts[:, None] - pts[None], axis=2).max(initial=0.0)
        bodies = max(np.sqrt(6 * np.trace(np.diag(b.inertia) if np.ndim(b.inertia) == 1
                                          else np.asarray(b.inertia, dtype=float)) / b.mass)
                     for b in self.bodies)
        return float(max(spread, bodies))


# ---------------------------------------------------------------- building


def _polygon(sides, radius, phase=0.0):
    a = phase + 2 * np.pi * np.arange(sides) / sides
    return radius * np.c_[np.cos(a), np.sin(a)]


def build(spec: SystemSpec, aliens: dict | None = None) -> nd.System:
    """The ``nd.System`` of ``spec``. ``aliens`` maps (element name, body slot) to a body of
    another system to put there instead (the "body not in the system" mistake)."""
    aliens = aliens or {}
    s = nd.System(gravity=spec.gravity)
    bodies = [s.add_body(b.name, mass=b.mass, inertia=np.array(b.inertia, dtype=float),
                         position=b.position, orientation=b.orientation, velocity=b.velocity,
                         angular_velocity=b.angular_velocity) for b in spec.bodies]

    def body(index, element, slot):
        if (element, slot) in aliens:
            return aliens[(element, slot)]
        return s.ground if index == GROUND else bodies[index]

    for j in spec.joints:
        if j.kind == "free":
            continue
        p, c = body(j.parent, j.name, 0), body(j.child, j.name, 1)
        if j.kind == "spherical":
            joint = nd.Spherical(p, c, j.point, name=j.name)
        elif j.kind == "revolute":
            joint = nd.Revolute(p, c, j.point, j.axis, name=j.name)
        elif j.kind == "cylindrical":
            joint = nd.Cylindrical(p, c, j.point, j.axis, name=j.name)
        elif j.kind == "prismatic":
            joint = nd.Prismatic(p, c, j.point, j.axis, name=j.name)
        elif j.kind == "universal":
            joint = nd.Universal(p, c, j.point, j.axis, j.axis2, name=j.name)
        elif j.kind == "fixed":
            joint = nd.Fixed(p, c, j.point, j.axis, name=j.name)
        elif j.kind == "revolute_clearance":
            joint = nd.RevoluteClearance(p, c, j.point, j.axis, radius=j.radius,
                                         clearance=j.clearance, length=j.length,
                                         axial_clearance=j.axial_clearance, name=j.name)
        elif j.kind == "cylindrical_clearance":
            joint = nd.CylindricalClearance(p, c, j.point, j.axis, radius=j.radius,
                                            clearance=j.clearance, length=j.length, name=j.name)
        elif j.kind == "spherical_clearance":
            joint = nd.SphericalClearance(p, c, j.point, clearance=j.clearance,
                                          radius=j.radius, name=j.name)
        elif j.kind == "prismatic_clearance":
            joint = nd.PrismaticClearance(p, c, j.point, j.axis,
                                          profile=_polygon(j.sides, j.radius),
                                          clearance=j.clearance, length=j.length, name=j.name)
        else:
            raise AssertionError(j.kind)
        s.add_joint(joint)
        if j.driver_rate is not None:
            rate = j.driver_rate
            s.add_joint(nd.RotationDriver(joint, angle=lambda t, rate=rate: rate * t,
                                          name=f"{j.name}_motor"))
    for f in spec.forces:
        a, b = body(f.body_a, f.name, 0), body(f.body_b, f.name, 1)
        if f.kind == "spring":
            s.add_force(nd.SpringDamper(a, f.point_a, b, f.point_b, stiffness=f.stiffness,
                                        damping=f.damping, free_length=f.free_length,
                                        name=f.name))
        elif f.kind == "bushing":
            s.add_force(nd.Bushing(a, b, f.point_a, stiffness=f.stiffness, damping=f.damping,
                                   rotational_stiffness=f.rotational_stiffness,
                                   rotational_damping=f.rotational_damping, name=f.name))
        elif f.kind == "load":
            s.add_force(nd.PointForce(b, point=f.point_b, force=f.point_a, name=f.name))
        else:
            raise AssertionError(f.kind)
    return s


# ---------------------------------------------------------------- primitives


def _unit(v):
    v = np.asarray(v, dtype=float)
    return tuple(float(x) for x in v / np.linalg.norm(v))


def _direction(z, phi):
    r = np.sqrt(max(0.0, 1.0 - z * z))
    return _unit((r * np.cos(phi), r * np.sin(phi), z))


def directions():
    """Unit 3-vectors (uniform on the sphere: z uniform, azimuth uniform)."""
    return st.builds(_direction, st.floats(-1, 1), st.floats(0, 2 * np.pi))


def perpendicular(axis, psi):
    """The unit vector perpendicular to ``axis`` at angle psi in a fixed frame about it."""
    a = np.asarray(axis)
    e = np.eye(3)[int(np.argmin(np.abs(a)))]
    f = np.cross(a, e)
    f /= np.linalg.norm(f)
    return _unit(np.cos(psi) * f + np.sin(psi) * np.cross(a, f))


def _quaternion(axis, angle):
    return _unit((np.cos(angle / 2), *(np.sin(angle / 2) * np.asarray(axis))))


def quaternions():
    """Unit Euler parameters: a rotation by an angle in [0, 2 pi] about a direction."""
    return st.builds(_quaternion, directions(), st.floats(0, 2 * np.pi))


def vectors(bound):
    return st.tuples(*3 * [st.floats(-bound, bound)])


def _add(a, b, scale=1.0):
    return tuple(float(x + scale * y) for x, y in zip(a, b))


def _rotation(p):
    from nlpdyn.rotations import rotation_matrix
    return np.asarray(rotation_matrix(np.asarray(p, dtype=float)))


@st.composite
def inertias(draw, mass):
    """(principal moments or a rotated 3x3 matrix, the smallest principal moment)."""
    r = draw(st.tuples(*3 * [st.floats(0.02, 0.3)]))
    s1, s2, s3 = (mass * x * x for x in r)
    moments = (s2 + s3, s1 + s3, s1 + s2)
    if draw(st.booleans()):
        return moments, min(moments)
    R = _rotation(draw(quaternions()))
    J = R @ np.diag(moments) @ R.T
    J = 0.5 * (J + J.T)
    return tuple(tuple(float(x) for x in row) for row in J), min(moments)


# ---------------------------------------------------------------- valid systems


@st.composite
def joint_of_kind(draw, name, parent, child, point, kind):
    """A valid ``JointSpec`` of ``kind`` (IDEAL or CLEARANCE) at ``point``."""
    axis = draw(directions()) if kind in AXIAL + ("universal",) else None
    extra = {}
    if kind == "universal":
        extra["axis2"] = perpendicular(axis, draw(st.floats(0, 2 * np.pi)))
    if kind in CLEARANCE:
        extra["clearance"] = draw(st.floats(1e-5, 1e-3))
        extra["radius"] = draw(st.floats(0.005, 0.03))
        if kind != "spherical_clearance":
            extra["length"] = draw(st.floats(0.01, 0.05))
        if kind == "revolute_clearance":
            extra["axial_clearance"] = draw(st.floats(1e-5, 1e-3))
        if kind == "prismatic_clearance":
            extra["sides"] = draw(st.integers(3, 5))
    if kind in DRIVABLE and draw(st.integers(0, 4)) == 0:
        extra["driver_rate"] = draw(st.floats(-2.0, 2.0))
    return JointSpec(name, kind, parent, child, point, axis, **extra)


@st.composite
def joints(draw, name, parent, child, point, clearance_weight):
    """An ideal joint (weight 4 - clearance_weight), a clearance joint (clearance_weight) or
    none (weight 1)."""
    family = draw(st.sampled_from(("ideal",) * (4 - clearance_weight)
                                  + ("clearance",) * clearance_weight + ("free",)))
    if family == "free":
        return JointSpec(name, "free", parent, child, point)
    kind = draw(st.sampled_from(IDEAL if family == "ideal" else CLEARANCE))
    return draw(joint_of_kind(name, parent, child, point, kind))


def _lever(spec_body, point):
    return float(np.linalg.norm(np.subtract(point, spec_body.position)))


@st.composite
def force_elements(draw, name, bodies, min_inertia, kind=None):
    """A spring-damper or a bushing between two different members of the chain (the ground
    included), stiffness bounded by OMEGA_MAX for the lightest body it could move."""
    n = len(bodies)
    b = draw(st.integers(0, n - 1))
    a = draw(st.sampled_from([GROUND] + [k for k in range(n) if k != b]))
    if kind is None:
        kind = draw(st.sampled_from(("spring", "bushing", "spring", "bushing", "load")))
    if kind == "load":      # a constant force at a point of body b (does work: not conservative)
        point = _add(bodies[b].position, draw(vectors(0.2)))
        force = draw(vectors(10.0 * bodies[b].mass))
        return ForceSpec(name, "load", GROUND, b, force, point, 0.0)
    anchor = (0.0, 0.0, 0.0) if a == GROUND else bodies[a].position
    point_b = _add(bodies[b].position, draw(vectors(0.2)))
    if kind == "spring":
        point_a = _add(anchor, draw(vectors(0.3)))
        if np.linalg.norm(np.subtract(point_a, point_b)) < 0.05:    # keep a line of action
            point_a = _add(point_b, (0.1, 0.0, 0.0))
    else:
        point_a = point_b
    # inverse effective mass at the attachment points: 1/m + l^2/I per body (constraints
    # only add mass), so k <= OMEGA_MAX^2 / that keeps the spring's mode below OMEGA_MAX
    members = [k for k in (a, b) if k != GROUND]
    inv = sum(1 / bodies[k].mass + max(_lever(bodies[k], point_a), _lever(bodies[k], point_b)) ** 2
              / min_inertia[k] for k in members)
    k_max = OMEGA_MAX ** 2 / inv
    stiffness = draw(st.floats(0.0, k_max))
    damped = draw(st.integers(0, 2)) == 0
    damping = draw(st.floats(0.0, 2 * np.sqrt(k_max / inv))) if damped else 0.0
    extra = {}
    if kind == "bushing":
        inv_rot = sum(1 / min_inertia[k] for k in members)
        kr_max = OMEGA_MAX ** 2 / inv_rot
        extra["rotational_stiffness"] = draw(st.floats(0.0, kr_max))
        if damped:
            extra["rotational_damping"] = draw(st.floats(0.0, 2 * np.sqrt(kr_max / inv_rot)))
    return ForceSpec(name, kind, a, b, point_a, point_b, stiffness, damping, **extra)


@st.composite
def systems(draw, min_bodies=1, max_bodies=4, clearance_weight=1, max_forces=2):
    """A valid ``SystemSpec`` (see the module docstring)."""
    n = draw(st.integers(min_bodies, max_bodies))
    point = draw(vectors(0.2))
    bodies, joints_, min_inertia = [], [], []
    for k in range(n):
        centre = _add(point, draw(directions()), draw(st.floats(0.1, 0.5)))
        mass = draw(st.floats(0.1, 5.0))
        inertia, smallest = draw(inertias(mass))
        bodies.append(BodySpec(f"b{k}", mass, inertia, centre, draw(quaternions()),
                               draw(vectors(0.5)), draw(vectors(2.0))))
        min_inertia.append(smallest)
        joints_.append(draw(joints(f"j{k}", k - 1 if k else GROUND, k, point, clearance_weight)))
        point = _add(centre, draw(directions()), draw(st.floats(0.1, 0.5)))
    forces = [draw(force_elements(f"f{i}", bodies, min_inertia))
              for i in range(draw(st.integers(0, max_forces)))]
    gravity = draw(st.sampled_from(((0.0, 0.0, -9.81), (0.0, 0.0, 0.0))))
    t_end = draw(st.sampled_from((0.02, 0.03, 0.05)))
    return SystemSpec(gravity, tuple(bodies), tuple(joints_), tuple(forces), t_end, 1e-3)


# ---------------------------------------------------------------- one mistake


@dataclass(frozen=True)
class Mistake:
    """``spec`` with one error in it. ``culprit``: what the ModelError must name (a quoted
    element or body name, or a setting's name); ``run``: extra simulate() keywords; ``aliens``:
    see :func:`build`."""

    kind: str
    spec: SystemSpec
    culprit: str
    run: tuple = ()
    aliens: tuple = ()      # ((element name, slot), body name): a body of another system
                            # (made by ``system``) takes that slot

    def system(self) -> nd.System:
        stranger = nd.System()
        aliens = {key: stranger.add_body(name, mass=1.0, inertia=(1.0, 1.0, 1.0))
                  for key, name in self.aliens}
        return build(self.spec, aliens)


def _replace_at(items, index, **changes):
    items = list(items)
    items[index] = dataclasses.replace(items[index], **changes)
    return tuple(items)


def _with_joint_kind(draw, spec, kinds):
    """(spec, index of a joint whose kind is in ``kinds``): if there is none, the joint at a
    drawn index is replaced by a valid one of a kind drawn from ``kinds``."""
    found = [i for i, j in enumerate(spec.joints) if j.kind in kinds]
    if found:
        return spec, draw(st.sampled_from(found))
    i = draw(st.integers(0, len(spec.joints) - 1))
    j = spec.joints[i]
    new = draw(joint_of_kind(j.name, j.parent, j.child, j.point, draw(st.sampled_from(kinds))))
    joints_ = list(spec.joints)
    joints_[i] = new
    return dataclasses.replace(spec, joints=tuple(joints_)), i


def _with_force(draw, spec, kind):
    """(spec, index of a force element of ``kind``), adding one if there is none."""
    found = [i for i, f in enumerate(spec.forces) if f.kind == kind]
    if found:
        return spec, draw(st.sampled_from(found))
    bodies = spec.bodies
    min_inertia = [float(np.linalg.eigvalsh(np.diag(b.inertia) if np.ndim(b.inertia) == 1
                                            else np.array(b.inertia))[0]) for b in bodies]
    new = draw(force_elements(f"f{len(spec.forces)}", bodies, min_inertia, kind))
    return dataclasses.replace(spec, forces=spec.forces + (new,)), len(spec.forces)


BAD_POSITIVE = st.one_of(st.floats(max_value=0.0, allow_nan=False, allow_infinity=True),
                         st.just(float("nan")))        # not > 0 (or not finite)
NON_FINITE = st.sampled_from((float("nan"), float("inf"), float("-inf")))


def _nan_in(draw, vec):
    i = draw(st.integers(0, len(vec) - 1))
    v = list(vec)
    v[i] = draw(NON_FINITE)
    return tuple(v)


@st.composite
def _mistake(draw, kind):
    spec = draw(systems(min_bodies=2 if kind == "duplicate_body_name" else 1,
                        clearance_weight=1, max_forces=1))
    run = ()
    aliens = ()
    if kind in ("mass", "inertia_nonfinite", "inertia_triangle", "inertia_not_positive",
                "orientation_not_unit", "velocity_nonfinite"):
        k = draw(st.integers(0, len(spec.bodies) - 1))
        b = spec.bodies[k]
        culprit = f"body '{b.name}'"
        if kind == "mass":
            change = dict(mass=draw(st.one_of(BAD_POSITIVE, st.just(float("inf")))))
        elif kind == "inertia_nonfinite":
            moments = np.diag(b.inertia) if np.ndim(b.inertia) == 2 else b.inertia
            change = dict(inertia=_nan_in(draw, tuple(float(x) for x in moments)))
        elif kind == "inertia_triangle":
            i1, i2 = draw(st.floats(1e-4, 1.0)), draw(st.floats(1e-4, 1.0))
            moments = [i1, i2, (i1 + i2) * draw(st.floats(1.01, 3.0))]
            order = draw(st.permutations(range(3)))
            change = dict(inertia=tuple(moments[i] for i in order))
        elif kind == "inertia_not_positive":
            moments = list(np.diag(b.inertia) if np.ndim(b.inertia) == 2 else b.inertia)
            moments[draw(st.integers(0, 2))] = draw(st.floats(-1.0, 0.0))
            change = dict(inertia=tuple(float(x) for x in moments))
        elif kind == "orientation_not_unit":
            scale = draw(st.one_of(st.floats(0.1, 0.99), st.floats(1.01, 3.0)))
            change = dict(orientation=tuple(scale * x for x in b.orientation))
        else:
            field_ = draw(st.sampled_from(("position", "velocity", "angular_velocity")))
            change = {field_: _nan_in(draw, getattr(b, field_))}
        spec = dataclasses.replace(spec, bodies=_replace_at(spec.bodies, k, **change))
    elif kind == "duplicate_body_name":
        k, other = draw(st.lists(st.integers(0, len(spec.bodies) - 1), min_size=2, max_size=2,
                                 unique=True))
        name = spec.bodies[other].name
        spec = dataclasses.replace(spec, bodies=_replace_at(spec.bodies, k, name=name))
        culprit = f"'{name}'"
    elif kind == "joint_point_nonfinite":
        spec, i = _with_joint_kind(draw, spec, IDEAL + CLEARANCE)
        j = spec.joints[i]
        spec = dataclasses.replace(spec, joints=_replace_at(spec.joints, i,
                                                            point=_nan_in(draw, j.point)))
        culprit = f"'{j.name}'"
    elif kind == "zero_axis":
        spec, i = _with_joint_kind(draw, spec, AXIAL + ("universal",))
        j = spec.joints[i]
        slot = "axis2" if j.kind == "universal" and draw(st.booleans()) else "axis"
        spec = dataclasses.replace(spec, joints=_replace_at(spec.joints, i,
                                                            **{slot: (0.0, 0.0, 0.0)}))
        culprit = f"'{j.name}'"
    elif kind == "clearance_not_positive":
        spec, i = _with_joint_kind(draw, spec, CLEARANCE)
        j = spec.joints[i]
        slot = ("axial_clearance" if j.kind == "revolute_clearance" and draw(st.booleans())
                else "clearance")
        spec = dataclasses.replace(spec, joints=_replace_at(spec.joints, i,
                                                            **{slot: draw(BAD_POSITIVE)}))
        culprit = f"'{j.name}'"
    elif kind in ("negative_stiffness", "negative_damping"):
        spec, i = _with_force(draw, spec, draw(st.sampled_from(("spring", "bushing"))))
        f = spec.forces[i]
        bad = -draw(st.floats(1e-6, 1e6))
        if kind == "negative_stiffness":
            slot = "stiffness" if f.kind == "spring" else draw(
                st.sampled_from(("stiffness", "rotational_stiffness")))
        else:
            slot = "damping" if f.kind == "spring" else draw(
                st.sampled_from(("damping", "rotational_damping")))
        spec = dataclasses.replace(spec, forces=_replace_at(spec.forces, i, **{slot: bad}))
        culprit = f"'{f.name}'"
    elif kind == "spring_nonfinite":
        spec, i = _with_force(draw, spec, "spring")
        f = spec.forces[i]
        slot = draw(st.sampled_from(("stiffness", "damping", "free_length")))
        spec = dataclasses.replace(spec, forces=_replace_at(spec.forces, i,
                                                            **{slot: draw(NON_FINITE)}))
        culprit = f"'{f.name}'"
    elif kind == "spring_point_nonfinite":
        spec, i = _with_force(draw, spec, "spring")
        f = spec.forces[i]
        slot = draw(st.sampled_from(("point_a", "point_b")))
        spec = dataclasses.replace(spec, forces=_replace_at(spec.forces, i, **{
            slot: _nan_in(draw, getattr(f, slot))}))
        culprit = f"'{f.name}'"
    elif kind == "load_point_nonfinite":
        spec, i = _with_force(draw, spec, "load")
        f = spec.forces[i]
        spec = dataclasses.replace(spec, forces=_replace_at(spec.forces, i,
                                                            point_b=_nan_in(draw, f.point_b)))
        culprit = f"'{f.name}'"
    elif kind == "driver_angle_nonfinite":
        spec, i = _with_joint_kind(draw, spec, DRIVABLE)
        j = spec.joints[i]
        spec = dataclasses.replace(spec, joints=_replace_at(spec.joints, i,
                                                            driver_rate=draw(NON_FINITE)))
        culprit = f"'{j.name}_motor'"
    elif kind == "spherical_clearance_radius":
        spec, i = _with_joint_kind(draw, spec, ("spherical_clearance",))
        j = spec.joints[i]
        bad = draw(st.one_of(NON_FINITE, st.floats(-1.0, -1e-6)))
        spec = dataclasses.replace(spec, joints=_replace_at(spec.joints, i, radius=bad))
        culprit = f"'{j.name}'"
    elif kind == "alien_body":
        # (element, slot) pairs that take a body (a load has one body, in slot 1)
        slots = [(j.name, k) for j in spec.joints if j.kind != "free" for k in (0, 1)] + \
                [(f.name, k) for f in spec.forces for k in ((1,) if f.kind == "load" else (0, 1))]
        if not slots:
            spec, i = _with_joint_kind(draw, spec, IDEAL)
            slots = [(spec.joints[i].name, k) for k in (0, 1)]
        key = draw(st.sampled_from(slots))
        aliens = ((key, "stranger"),)
        culprit = f"'{key[0]}'"
    elif kind in SETTING_MISTAKES:
        value = draw(SETTING_MISTAKES[kind])
        run = ((kind, value),)
        culprit = kind
    else:
        raise AssertionError(kind)
    return Mistake(kind, spec, culprit, run, aliens)


# setting -> strategy of values it must refuse
SETTING_MISTAKES = {
    "gap_tol": BAD_POSITIVE,
    "qp_solver": st.from_regex(r"\A[a-z]{2,8}\Z").filter(lambda s: not ca.has_conic(s)),
    "implicit_iterations": st.one_of(st.integers(max_value=-1), st.floats(0.5, 10.5)
                                     .filter(lambda x: x != int(x))),
    "max_penetration": st.one_of(BAD_POSITIVE, st.just(float("inf"))),
    "output_every": st.integers(max_value=0),
    # an option the plugin does not have (CasADi refuses unknown options when it builds
    # the solver)
    "qp_options": st.from_regex(r"\Abogus_[a-z]{1,6}\Z").map(lambda name: {name: 1}),
    "nlp_options": st.from_regex(r"\Abogus_[a-z]{1,6}\Z").map(lambda name: {name: 1}),
}

MISTAKES = ("mass", "inertia_nonfinite", "inertia_triangle", "inertia_not_positive",
            "orientation_not_unit", "velocity_nonfinite", "duplicate_body_name",
            "joint_point_nonfinite", "zero_axis", "clearance_not_positive",
            "negative_stiffness", "negative_damping", "alien_body",
            "spring_nonfinite", "spring_point_nonfinite", "load_point_nonfinite",
            "driver_angle_nonfinite",
            "spherical_clearance_radius", *SETTING_MISTAKES)


def mistakes(kinds=MISTAKES):
    """A ``Mistake`` of one of ``kinds``."""
    return st.sampled_from(tuple(kinds)).flatmap(_mistake)


# ---------------------------------------------------------------- random chains (issue 22)
#
# The reliability fuzz (tests/test_reliability.py, benchmarks/reliability_fuzz.py): seeded
# random chains, an independent physics verdict computed from a run's states only, and an
# independent reference trajectory (scipy, Newton-Euler) for the models without ideal joints.
# Nothing below reads nlpdyn's energies, ledger, rows or rotation code: the verdict must not
# share a mistake with what it judges.

CHAIN_JOINTS = ("revolute", "universal", "spherical", "cylindrical", "prismatic")
# a link is one of CHAIN_JOINTS or an undamped bushing (the child then has JointSpec "free")
LINKS = CHAIN_JOINTS + ("bushing",)
G = 9.81


@dataclass(frozen=True)
class Regime:
    """How hard the random chains are.

    mass_ratio: largest / smallest mass at most; spin: (lo, hi) rad/s, the fastest body's
    initial angular speed (h spin = the rotation per step); radii: (lo, hi) m, the bodies'
    radii of gyration per axis (small ones make slender, strongly gyroscopic bodies);
    bushing_omega: rad/s, the highest mode a bushing may excite (as OMEGA_MAX above).
    """

    name: str
    mass_ratio: float
    spin: tuple
    radii: tuple
    bushing_omega: float


REGIMES = {
    "moderate": Regime("moderate", 10.0, (0.5, 4.0), (0.02, 0.3), 30.0),
    "harsh": Regime("harsh", 1e3, (4.0, 65.0), (0.005, 0.3), 200.0),
    # moderate bodies at the harsh spins: issue 22's 2-body example (mass ratio 3.9,
    # 0.065 rad per step) is of this kind
    "fast": Regime("fast", 10.0, (4.0, 65.0), (0.02, 0.3), 30.0),
}


def quaternion_matrices(P) -> np.ndarray:
    """Rotation matrices (body -> global) of Euler parameters [e0, e1, e2, e3] (scalar first,
    normalised here), shape (n, 4) -> (n, 3, 3). Written out again on purpose (not
    nlpdyn.rotations): the verdict's own convention, A v = p v p*."""
    P = np.atleast_2d(np.asarray(P, dtype=float))
    P = P / np.linalg.norm(P, axis=1, keepdims=True)
    w, x, y, z = P.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def _unit_np(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def random_chain(seed: int, regime: str = "moderate", t_end: float = 1.0,
                 h: float = 1e-3) -> SystemSpec:
    """A random chain of 2-8 bodies, reproducible from (seed, regime).

    - Half are chains hanging from the ground (the first link joins the ground to body 0),
      half free chains (body 0 has no joint; zero gravity or gravity, half each). A third of
      the free chains are linked by bushings only (the models the scipy reference covers).
    - Links: revolute, universal, spherical, cylindrical, prismatic, or an undamped bushing
      (translational stiffness k and rotational k_r, isotropic, the frame the global axes:
      exactly conservative, potential k |d|^2 / 2 + k_r |theta|^2 / 2) whose fastest mode
      stays below the regime's bushing_omega for the lightest body it could move.
    - Bodies 0.1-0.5 m from their joint points, masses log-uniform within the regime's
      ratio, principal moments from three second moments m r_i^2 (triangle inequality by
      construction), random orientations.
    - Initial velocities consistent with every joint by construction (relative rates along
      the joints' free motions, the joint points' velocities matched), then scaled together
      so that the fastest body spins at a speed drawn from the regime's ``spin``; the stepper's
      initial projection has nothing to do.
    """
    r = REGIMES[regime]
    rng = np.random.default_rng([int(seed), list(REGIMES).index(regime), 22])
    n = int(rng.integers(2, 9))
    free = bool(rng.random() < 0.5)
    if free:
        gravity = (0.0, 0.0, -G) if rng.random() < 0.5 else (0.0, 0.0, 0.0)
        all_bushings = bool(rng.random() < 1 / 3)
    else:
        gravity = (0.0, 0.0, -G) if rng.random() < 0.8 else (0.0, 0.0, 0.0)
        all_bushings = False

    def direction():
        return _unit_np(rng.normal(size=3))

    u = rng.random(n)
    u = (u - u.min()) / max(np.ptp(u), 1e-12) * rng.uniform(0.5, 1.0) * np.log(r.mass_ratio)
    masses = rng.uniform(0.1, 2.0) * np.exp(u)
    point = rng.uniform(-0.2, 0.2, 3)
    bodies, joints_, links, points, centres, axes, inertias_ = [], [], [], [], [], [], []
    for k in range(n):
        centre = point + direction() * rng.uniform(0.1, 0.5)
        radii = rng.uniform(*r.radii, 3)
        s1, s2, s3 = masses[k] * radii ** 2
        inertias_.append(np.array([s2 + s3, s1 + s3, s1 + s2]))
        if free and k == 0:
            link = "free"
        elif all_bushings:
            link = "bushing"
        else:
            link = str(rng.choice(LINKS))
        axis = direction()
        axis2 = _unit_np(np.cross(axis, direction())) if link == "universal" else None
        links.append(link)
        points.append(point)
        centres.append(centre)
        axes.append((axis, axis2))
        point = centre + direction() * rng.uniform(0.1, 0.5)
    orientations = [_unit_np(rng.normal(size=4)) for _ in range(n)]

    # velocities: global angular velocity and centre velocity per body, linear in the rates
    omegas, vels = [], []
    for k in range(n):
        link, (axis, axis2), p, c = links[k], axes[k], points[k], centres[k]
        if k == 0:
            w_parent, v_point = np.zeros(3), np.zeros(3)
        else:
            w_parent = omegas[k - 1]
            v_point = vels[k - 1] + np.cross(omegas[k - 1], p - centres[k - 1])
        slide = np.zeros(3)
        if link == "free":
            rel, v_point = rng.normal(size=3), rng.normal(scale=0.2, size=3)
        elif link in ("revolute", "cylindrical"):
            rel = rng.normal() * axis
        elif link == "universal":
            rel = rng.normal() * axis + rng.normal() * axis2
        elif link in ("spherical", "bushing"):
            rel = rng.normal(size=3)
        else:       # prismatic
            rel = np.zeros(3)
        if link in ("cylindrical", "prismatic"):
            slide = rng.normal(scale=0.1) * axis
        if link == "bushing":
            slide = rng.normal(scale=0.05, size=3)
        omegas.append(w_parent + rel)
        vels.append(v_point + slide + np.cross(omegas[k], c - p))
    fastest = max(np.linalg.norm(w) for w in omegas)
    scale = rng.uniform(*r.spin) / fastest if fastest > 1e-9 else 1.0
    omegas = [scale * w for w in omegas]
    vels = [scale * v for v in vels]

    for k in range(n):
        A = quaternion_matrices(orientations[k])[0]
        bodies.append(BodySpec(f"b{k}", float(masses[k]), tuple(float(x) for x in inertias_[k]),
                               tuple(float(x) for x in centres[k]),
                               tuple(float(x) for x in orientations[k]),
                               tuple(float(x) for x in vels[k]),
                               tuple(float(x) for x in A.T @ omegas[k])))
    forces = []
    for k in range(n):
        link, (axis, axis2), p = links[k], axes[k], tuple(float(x) for x in points[k])
        parent = k - 1 if k else GROUND
        if link in CHAIN_JOINTS:
            joints_.append(JointSpec(f"j{k}", link, parent, k, p, tuple(float(x) for x in axis),
                                     None if axis2 is None else tuple(float(x) for x in axis2)))
            continue
        joints_.append(JointSpec(f"j{k}", "free", parent, k, p))
        if link == "bushing":
            members = [m for m in (parent, k) if m != GROUND]
            inv = sum(1 / masses[m] + np.linalg.norm(points[k] - centres[m]) ** 2
                      / inertias_[m].min() for m in members)
            inv_rot = sum(1 / inertias_[m].min() for m in members)
            stiffness = rng.uniform(0.2, 1.0) * r.bushing_omega ** 2 / inv
            rotational = rng.uniform(0.2, 1.0) * r.bushing_omega ** 2 / inv_rot
            forces.append(ForceSpec(f"bush{k}", "bushing", parent, k, p, p, float(stiffness),
                                    rotational_stiffness=float(rotational)))
    return SystemSpec(gravity, tuple(bodies), tuple(joints_), tuple(forces), t_end, h)


def random_chains(regime="moderate", t_end=1.0, h=1e-3):
    """Hypothesis strategy: ``random_chain`` of a drawn seed (the seed is the example)."""
    return st.integers(0, 2**31 - 1).map(lambda seed: random_chain(seed, regime, t_end, h))


def is_free(spec: SystemSpec) -> bool:
    """No joint and no force element reaches the ground: momentum is the system's own."""
    return all(j.parent != GROUND or j.kind == "free" for j in spec.joints) and \
        all(f.body_a != GROUND and f.body_b != GROUND for f in spec.forces if f.kind == "bushing")


def has_ideal_joints(spec: SystemSpec) -> bool:
    return any(j.kind != "free" for j in spec.joints)


# ---------------------------------------------------------------- the physics verdict

# issue 22's thresholds: what counts as a wrong answer
ENERGY_CREATED = 0.05       # of the energy scale
ENERGY_LOST = 0.10          # of the energy scale, conservative models
JOINT_GAP = 1e-3            # of the model's size
AXIS_ERROR = 1e-3           # rad
MOMENTUM_DRIFT = 0.01       # of the momentum scale, free systems


class _Kinematics:
    """A trajectory's body poses (t, q, v laid out as nlpdyn's rows: 7 and 6 per body)."""

    def __init__(self, spec, q, v):
        n = len(spec.bodies)
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        self.r = np.stack([q[:, 7 * k:7 * k + 3] for k in range(n)])            # (n, N, 3)
        self.A = np.stack([quaternion_matrices(q[:, 7 * k + 3:7 * k + 7]) for k in range(n)])
        self.rdot = np.stack([v[:, 6 * k:6 * k + 3] for k in range(n)])
        self.w = np.stack([v[:, 6 * k + 3:6 * k + 6] for k in range(n)])         # body frame
        self.r0 = [np.asarray(b.position, dtype=float) for b in spec.bodies]
        self.A0 = [quaternion_matrices(b.orientation)[0] for b in spec.bodies]
        self.N = q.shape[0]

    def point(self, k, x0):
        """Current global position of the material point of body k (GROUND: fixed) that was
        at x0 initially, shape (N, 3)."""
        x0 = np.asarray(x0, dtype=float)
        if k == GROUND:
            return np.broadcast_to(x0, (self.N, 3))
        s = self.A0[k].T @ (x0 - self.r0[k])
        return self.r[k] + self.A[k] @ s

    def vector(self, k, u0):
        """Current global components of body k's direction that was u0 initially, (N, 3)."""
        u0 = np.asarray(u0, dtype=float)
        if k == GROUND:
            return np.broadcast_to(u0, (self.N, 3))
        return self.A[k] @ (self.A0[k].T @ u0)

    def carried(self, k):
        """The rotation carrying body k from its initial orientation, A A0^T, (N, 3, 3)."""
        if k == GROUND:
            return np.broadcast_to(np.eye(3), (self.N, 3, 3))
        return self.A[k] @ self.A0[k].T


def _rotation_angles(R):
    """|theta| of the rotation vectors of rotation matrices (N, 3, 3), and the vectors."""
    from scipy.spatial.transform import Rotation
    theta = Rotation.from_matrix(R).as_rotvec()
    return np.linalg.norm(theta, axis=1), theta


def energies(spec, q, v):
    """(kinetic, potential) energy along a trajectory, J, shape (N,) each: translational plus
    rotational kinetic energy (body-frame angular velocity, principal moments), gravity's
    potential -m g.r, the bushings' k |d|^2 / 2 + k_r |theta|^2 / 2."""
    kin = _Kinematics(spec, q, v)
    g = np.asarray(spec.gravity, dtype=float)
    T = np.zeros(kin.N)
    V = np.zeros(kin.N)
    for k, b in enumerate(spec.bodies):
        J = np.diag(b.inertia) if np.ndim(b.inertia) == 1 else np.array(b.inertia)
        T += 0.5 * b.mass * np.einsum("ni,ni->n", kin.rdot[k], kin.rdot[k])
        T += 0.5 * np.einsum("ni,ij,nj->n", kin.w[k], J, kin.w[k])
        V -= b.mass * kin.r[k] @ g
    for f in spec.forces:
        if f.kind != "bushing":
            raise ValueError(f"the verdict knows undamped bushings only, not {f.kind}")
        d = kin.point(f.body_b, f.point_a) - kin.point(f.body_a, f.point_a)
        R = np.swapaxes(kin.carried(f.body_a), 1, 2) @ kin.carried(f.body_b)
        angle, _ = _rotation_angles(R)
        V += 0.5 * f.stiffness * np.einsum("ni,ni->n", d, d) + \
            0.5 * f.rotational_stiffness * angle ** 2
    return T, V


def momenta(spec, q, v):
    """(linear momentum, angular momentum about the centre of mass), global, (N, 3) each."""
    kin = _Kinematics(spec, q, v)
    m = np.array([b.mass for b in spec.bodies])
    P = np.einsum("k,kni->ni", m, kin.rdot)
    c = np.einsum("k,kni->ni", m, kin.r) / m.sum()
    vc = P / m.sum()
    L = np.zeros_like(P)
    for k, b in enumerate(spec.bodies):
        J = np.diag(b.inertia) if np.ndim(b.inertia) == 1 else np.array(b.inertia)
        L += b.mass * np.cross(kin.r[k] - c, kin.rdot[k] - vc)
        L += np.einsum("nij,jk,nk->ni", kin.A[k], J, kin.w[k])
    return P, L


def joint_errors(spec, q, v):
    """{joint name: (gap (m), axis error (rad))} along a trajectory, shape (N,) each. The gap
    is the distance between the two bodies' joint points (across the axis only for sliding
    joints); the axis error the angle by which the joint's orientation rows are off."""
    kin = _Kinematics(spec, q, v)
    out = {}
    for j in spec.joints:
        if j.kind == "free":
            continue
        d = kin.point(j.child, j.point) - kin.point(j.parent, j.point)
        ang = np.zeros(kin.N)
        if j.kind in ("revolute", "cylindrical", "prismatic"):
            ap, ac = kin.vector(j.parent, j.axis), kin.vector(j.child, j.axis)
            ang = np.arctan2(np.linalg.norm(np.cross(ap, ac), axis=1),
                             np.einsum("ni,ni->n", ap, ac))
            if j.kind in ("cylindrical", "prismatic"):
                d = d - np.einsum("ni,ni->n", d, ap)[:, None] * ap
            if j.kind == "prismatic":       # and no twist about the axis
                f0 = _unit_np(np.cross(j.axis, np.eye(3)[int(np.argmin(np.abs(j.axis)))]))
                fp, fc = kin.vector(j.parent, f0), kin.vector(j.child, f0)
                twist = np.arctan2(np.abs(np.einsum("ni,ni->n", np.cross(fp, fc), ap)),
                                   np.einsum("ni,ni->n", fp, fc))
                ang = np.maximum(ang, twist)
        elif j.kind == "universal":
            a1, a2 = kin.vector(j.parent, j.axis), kin.vector(j.child, j.axis2)
            ang = np.abs(np.arcsin(np.clip(np.einsum("ni,ni->n", a1, a2), -1, 1)))
        elif j.kind != "spherical":
            raise ValueError(f"the verdict does not know {j.kind} joints")
        out[j.name] = (np.linalg.norm(d, axis=1), ang)
    return out


@dataclass(frozen=True)
class Verdict:
    """The physics of one trajectory against issue 22's thresholds (shares, see below)."""

    energy_created: float    # max(E - E0) / energy scale
    energy_lost: float       # max(E0 - E) / energy scale
    energy_scale: float      # J: max(T0 + V_bushings,0 + m_total |g| size, max T)
    joint_gap: float         # largest joint gap / the model extent (SystemSpec.extent)
    axis_error: float        # rad, largest
    worst_joint: str
    momentum_drift: float    # free systems: max |P - P0 - M g t| / sqrt(2 M E_scale)
    angular_drift: float     # free systems: max |L_c - L_c0| / sqrt(2 I_c E_scale)
    wrong: tuple             # the thresholds crossed, as readable strings

    @property
    def right(self) -> bool:
        return not self.wrong

    def figures(self) -> str:
        return (f"dE+ {self.energy_created:.3g}, dE- {self.energy_lost:.3g} of "
                f"{self.energy_scale:.3g} J; gap {self.joint_gap:.2e} of size, axis "
                f"{self.axis_error:.2e} rad ({self.worst_joint}); momentum {self.momentum_drift:.2e},"
                f" angular {self.angular_drift:.2e}")


def verdict(spec: SystemSpec, t, q, v) -> Verdict:
    """Judge a trajectory (times t (N,), q (N, 7 n), v (N, 6 n)) by conservation laws and
    the joints, from the states alone.

    Energy scale: the larger of the initial kinetic (plus stored) energy plus
    m_total |g| size and the peak kinetic energy. Free systems (nothing reaches the ground):
    linear momentum must follow P0 + M g t and the angular momentum about the centre of mass
    stay constant (uniform gravity has no moment about it); their scales are the momenta
    a body of the system's mass (or its inertia about the initial centre of mass) would carry
    with the energy scale.
    """
    t = np.asarray(t, dtype=float)
    T, V = energies(spec, q, v)
    E = T + V
    _, V_grav_free = energies(dataclasses.replace(spec, gravity=(0.0, 0.0, 0.0)), q[:1], v[:1])
    m_total = sum(b.mass for b in spec.bodies)
    scale = max(T[0] + V_grav_free[0] + m_total * np.linalg.norm(spec.gravity) * spec.size,
                T.max(), 1e-300)
    created = float((E - E[0]).max() / scale)
    lost = float((E[0] - E).max() / scale)
    gap, axis_error, worst = 0.0, 0.0, ""
    for name, (d, ang) in joint_errors(spec, q, v).items():
        share = float(d.max() / spec.extent)
        if share > gap or ang.max() > axis_error:
            worst = name
        gap, axis_error = max(gap, share), max(axis_error, float(ang.max()))
    drift = angular = 0.0
    if is_free(spec):
        P, L = momenta(spec, q, v)
        g = np.asarray(spec.gravity, dtype=float)
        expected = P[0] + m_total * np.outer(t - t[0], g)
        drift = float(np.linalg.norm(P - expected, axis=1).max() / np.sqrt(2 * m_total * scale))
        kin = _Kinematics(spec, q[:1], v[:1])
        c0 = sum(b.mass * kin.r[k][0] for k, b in enumerate(spec.bodies)) / m_total
        inertia = sum(b.mass * np.sum((kin.r[k][0] - c0) ** 2) + max(np.ravel(b.inertia))
                      for k, b in enumerate(spec.bodies))
        angular = float(np.linalg.norm(L - L[0], axis=1).max() / np.sqrt(2 * inertia * scale))
    wrong = []
    if created > ENERGY_CREATED:
        wrong.append(f"energy created {created:.3g} of the scale")
    if spec.conservative and lost > ENERGY_LOST:
        wrong.append(f"energy lost {lost:.3g} of the scale")
    if gap > JOINT_GAP:
        wrong.append(f"joints apart {gap:.3g} of the size")
    if axis_error > AXIS_ERROR:
        wrong.append(f"axes off {axis_error:.3g} rad")
    if drift > MOMENTUM_DRIFT:
        wrong.append(f"momentum drift {drift:.3g}")
    if angular > MOMENTUM_DRIFT:
        wrong.append(f"angular momentum drift {angular:.3g}")
    return Verdict(created, lost, float(scale), gap, axis_error, worst, drift, angular,
                   tuple(wrong))


# ---------------------------------------------------------------- the scipy reference


def _quat_product(a, b):
    return np.concatenate([[a[0] * b[0] - a[1:] @ b[1:]],
                           a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])])


def reference_trajectory(spec: SystemSpec, t_eval, rtol=1e-10, atol=1e-12):
    """(q, v) of ``spec`` at ``t_eval`` (nlpdyn's row layout), integrated by scipy's DOP853
    from the Newton-Euler equations written here: free bodies under gravity and undamped
    bushings only (no ideal joints). Bushing loads from the potential k |d|^2 / 2 +
    k_r |theta|^2 / 2: force -k d on the child at its point (+k d on the parent at its);
    moment -k_r B theta on the child, +k_r B theta on the parent, B the parent's carried
    rotation, theta the rotation vector of B^T times the child's carried rotation (the
    variation of |theta|^2 / 2 under a small rotation is theta . J_l^-1 psi = theta . psi)."""
    from scipy.integrate import solve_ivp
    from scipy.spatial.transform import Rotation
    if has_ideal_joints(spec):
        raise ValueError("the reference covers free bodies and bushings, not ideal joints")
    n = len(spec.bodies)
    m = np.array([b.mass for b in spec.bodies])
    J = [np.diag(b.inertia) if np.ndim(b.inertia) == 1 else np.array(b.inertia)
         for b in spec.bodies]
    Jinv = [np.linalg.inv(x) for x in J]
    g = np.asarray(spec.gravity, dtype=float)
    r0 = [np.asarray(b.position, dtype=float) for b in spec.bodies]
    A0 = [quaternion_matrices(b.orientation)[0] for b in spec.bodies]
    bushings = []
    for f in spec.forces:
        x0 = np.asarray(f.point_a, dtype=float)
        local = [None if k == GROUND else A0[k].T @ (x0 - r0[k]) for k in (f.body_a, f.body_b)]
        bushings.append((f.body_a, f.body_b, local, x0, f.stiffness, f.rotational_stiffness))

    def rhs(_, y):
        r, rd = y[:3 * n].reshape(n, 3), y[3 * n:6 * n].reshape(n, 3)
        p, w = y[6 * n:10 * n].reshape(n, 4), y[10 * n:].reshape(n, 3)
        A = quaternion_matrices(p)
        F = m[:, None] * g[None, :]
        tau = np.zeros((n, 3))                               # global, about the centres
        for a, b, local, x0, k, kr in bushings:
            xa = x0 if a == GROUND else r[a] + A[a] @ local[0]
            xb = r[b] + A[b] @ local[1]
            Ba = np.eye(3) if a == GROUND else A[a] @ A0[a].T
            Bb = A[b] @ A0[b].T
            theta = Rotation.from_matrix(Ba.T @ Bb).as_rotvec()
            f = -k * (xb - xa)
            moment = -kr * (Ba @ theta)
            F[b] += f
            tau[b] += np.cross(xb - r[b], f) + moment
            if a != GROUND:
                F[a] -= f
                tau[a] += np.cross(xa - r[a], -f) - moment
        dp = np.empty((n, 4))
        dw = np.empty((n, 3))
        for k in range(n):
            nk = A[k].T @ tau[k]
            dw[k] = Jinv[k] @ (nk - np.cross(w[k], J[k] @ w[k]))
            dp[k] = 0.5 * _quat_product(p[k], np.concatenate([[0.0], w[k]]))
        return np.concatenate([rd.ravel(), (F / m[:, None]).ravel(), dp.ravel(), dw.ravel()])

    y0 = np.concatenate([np.ravel([b.position for b in spec.bodies]),
                         np.ravel([b.velocity for b in spec.bodies]),
                         np.ravel([_unit_np(b.orientation) for b in spec.bodies]),
                         np.ravel([b.angular_velocity for b in spec.bodies])])
    t_eval = np.asarray(t_eval, dtype=float)
    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), y0, method="DOP853", t_eval=t_eval,
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"reference integration failed: {sol.message}")
    Y = sol.y.T
    r, rd = Y[:, :3 * n].reshape(-1, n, 3), Y[:, 3 * n:6 * n].reshape(-1, n, 3)
    p, w = Y[:, 6 * n:10 * n].reshape(-1, n, 4), Y[:, 10 * n:].reshape(-1, n, 3)
    q = np.concatenate([r, p], axis=2).reshape(len(t_eval), 7 * n)
    v = np.concatenate([rd, w], axis=2).reshape(len(t_eval), 6 * n)
    return q, v
