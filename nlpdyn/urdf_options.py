"""The parts of :func:`~nlpdyn.urdf.from_urdf` beyond links and ideal joints: the file's
``<dynamics damping friction>`` as a :class:`~nlpdyn.forces.joint_friction.JointDamper` and
a :class:`~nlpdyn.forces.joint_friction.JointFriction`, a
:class:`~nlpdyn.forces.bushing.Bushing` in place of a joint, their checks against the file,
and the links' ``<visual>`` boxes, cylinders and spheres as the bodies' shapes.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

from .forces.bushing import Bushing
from .forces.joint_friction import JointDamper, JointFriction
from .shapes import Box, Cylinder, Sphere

ONE_DOF = ("revolute", "continuous", "prismatic")
# Keys of a joint's ``friction`` data (JointFriction's keywords) and ``bushing`` data
FRICTION_KEYS = ("friction", "static_friction", "stribeck_velocity", "sigma0", "sigma1",
                 "sigma2", "creep_velocity")
BUSHING_KEYS = (("stiffness", "rotational_stiffness"), ("damping", "rotational_damping"))
# Joint types a bushing may replace (a floating joint is none)
BUSHED = ("revolute", "continuous", "prismatic", "fixed", "planar")


def not_one_dof(label, name, joints, what):
    """Why the joint called ``name`` cannot take ``what`` (None if it can: it exists and has
    one coordinate)."""
    joint = joints.get(name)
    if joint is None:
        return f"{label}: no joint named {name!r}"
    if joint.type not in ONE_DOF:
        return (f"{label}: joint {name!r} is {joint.type}: only revolute, continuous and "
                f"prismatic joints take {what}")
    return None


def _file_value(joint, key):
    """The joint's ``<dynamics key>`` (None when the file has none, or 0; yourdfpy keeps
    the attribute's text, checked to be a number before)."""
    value = None if joint.dynamics is None else getattr(joint.dynamics, key)
    return float(value) if value is not None and float(value) else None


def _per_joint(value, everywhere, label, out):
    """A joint name -> data dict of an option: ``everywhere`` for True or the choice that
    applies to every joint, the names of a collection with None, a dict as it is."""
    if value is None or value is False:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if value is True or isinstance(value, str):
        return everywhere(value)
    if isinstance(value, Iterable):
        names = list(value)
        if all(isinstance(n, str) for n in names):
            return dict.fromkeys(names)
    out.append(f"{label} must be True, joint names or a dict joint -> value, got {value!r}")
    return {}


def dynamics_options(robot, damping, friction, bushing):
    """The options as dicts joint name -> data, and every problem of them against the file:
    ({joint: c}, {joint: JointFriction keywords}, {joint: Bushing keywords}, problems)."""
    out = []
    joints = {joint.name: joint for joint in robot.joints}
    bushing = dict(bushing or {})
    free = [j for j in robot.joints if j.type in ONE_DOF and j.name not in bushing]

    def damped(_):
        return {j.name: None for j in free if _file_value(j, "damping")}

    def rubbing(choice):
        if choice != "coulomb":
            out.append(f"friction: {choice!r} for every joint must be 'coulomb' (LuGre: a dict "
                       "joint -> JointFriction's parameters, sigma0 among them)")
            return {}
        return {j.name: "coulomb" for j in free if _file_value(j, "friction")}

    damping = _per_joint([damping] if isinstance(damping, str) else damping, damped,
                         "damping", out)
    friction = _per_joint(friction, rubbing, "friction", out)
    dampers, frictions = {}, {}
    for name, c in damping.items():
        wrong = not_one_dof("damping", name, joints, "a damper")
        c = _file_value(joints[name], "damping") if c is None and not wrong else c
        if wrong:
            out.append(wrong)
        elif c is None:
            out.append(f"damping: joint {name!r} has no <dynamics damping> in the file: "
                       "give its value (a dict joint -> N m s/rad or N s/m)")
        elif not (isinstance(c, (int, float, np.number)) and np.isfinite(c) and c >= 0):
            out.append(f"damping: joint {name!r} needs a number >= 0, got {c!r}")
        else:
            dampers[name] = float(c)
    for name, spec in friction.items():
        wrong = not_one_dof("friction", name, joints, "friction")
        spec = {} if spec in (None, "coulomb") else spec
        if wrong:
            out.append(wrong)
        elif not isinstance(spec, dict) or set(spec) - set(FRICTION_KEYS):
            out.append(f"friction: joint {name!r} needs 'coulomb' or a dict of "
                       f"JointFriction's parameters {FRICTION_KEYS}, got {spec!r}")
        elif "friction" not in spec and _file_value(joints[name], "friction") is None:
            out.append(f"friction: joint {name!r} has no <dynamics friction> in the file: "
                       "give its value ({'friction': N m or N})")
        else:
            frictions[name] = {"friction": _file_value(joints[name], "friction"), **spec}
    for name, data in bushing.items():
        joint = joints.get(name)
        needed, allowed = BUSHING_KEYS
        if joint is None:
            out.append(f"bushing: no joint named {name!r}")
        elif joint.type not in BUSHED:
            out.append(f"bushing: joint {name!r} is {joint.type}: a bushing replaces a "
                       f"{', '.join(BUSHED)} joint")
        elif not isinstance(data, dict) or set(needed) - set(data) \
                or set(data) - set(needed) - set(allowed):
            out.append(f"bushing: joint {name!r} needs a dict with keys {needed}, may have "
                       f"{allowed}, got {data!r}")
        for label, used in (("damping", dampers), ("friction", frictions)):
            if name in used:
                out.append(f"bushing: joint {name!r} has {label} too: a bushing has no joint "
                           "coordinate (give the bushing's own damping)")
    return dampers, frictions, bushing, out


def conflicts(bushing, clearance, limits):
    """Joints given both a bushing and a clearance or limits."""
    return [f"bushing: joint {name!r} has {label} too: it is a bushing, not a joint"
            for label, other in (("a clearance", clearance), ("limits", limits))
            for name in bushing if name in other]


def add_bushing(system, parent, child, point, frame, data, name):
    """A :class:`~nlpdyn.forces.bushing.Bushing` named ``name`` at ``point`` with the axes
    of ``frame`` (3x3, columns: the joint frame's axes, global) in place of the joint."""
    return system.add_force(Bushing(parent, child, point, axes=frame.T, name=name, **data))


def add_dynamics(system, element, name, dampers, frictions):
    """The joint ``element``'s damper ``<name>_damping`` and friction ``<name>_friction``."""
    if name in dampers:
        system.add_force(JointDamper(element, dampers[name], name=f"{name}_damping"))
    if name in frictions:
        system.add_force(JointFriction(element, **frictions[name], name=f"{name}_friction"))


def visual_shapes(link, com) -> list:
    """The link's ``<visual>`` boxes, cylinders and spheres as shapes of its body (body
    frame: the link's axes at ``com``, the centre of mass in the link frame). Meshes are not
    loaded, and a box turned other than by quarter turns cannot be drawn (shapes' boxes lie
    along the body axes): both are left out, the latter with a warning."""
    shapes = []
    for visual in link.visuals:
        T = np.eye(4) if visual.origin is None else visual.origin
        R, offset = T[:3, :3], T[:3, 3] - com
        geometry = visual.geometry
        if geometry is None:
            continue
        if geometry.box is not None:
            turn = np.abs(R)
            if not np.allclose(turn, np.round(turn), atol=1e-9):
                warnings.warn(f"link {link.name!r}: a <visual> box turned by rpy other than "
                              "quarter turns is not drawn", stacklevel=3)
                continue
            shapes.append(Box(size=np.round(turn) @ np.asarray(geometry.box.size, dtype=float),
                              offset=offset))
        elif geometry.cylinder is not None:
            shapes.append(Cylinder(radius=geometry.cylinder.radius,
                                   length=geometry.cylinder.length, axis=R[:, 2], offset=offset))
        elif geometry.sphere is not None:
            shapes.append(Sphere(radius=geometry.sphere.radius, offset=offset))
    return shapes
