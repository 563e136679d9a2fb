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
