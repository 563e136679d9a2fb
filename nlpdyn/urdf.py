"""Build a :class:`~nlpdyn.system.System` from a URDF file.

The file is read by ``yourdfpy`` (the optional extra ``nlpdyn[urdf]``); this module checks
what nlpdyn needs of it, reporting every problem in one :class:`~nlpdyn.checks.ModelError`,
and maps links to bodies and joints to nlpdyn joints at a given joint configuration.
"""
from __future__ import annotations

import io
import os
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np

from .body import RigidBody
from .checks import ModelError
from .forces.joint_stops import RotationStop, TranslationStop
from .joints.clearance import PrismaticClearance, RevoluteClearance
from .joints.ideal import Fixed, Prismatic, Revolute
from .joints.library import Planar
from .system import System
from .urdf_options import (add_bushing, add_dynamics, conflicts, dynamics_options, not_one_dof,
                           visual_shapes)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._typing import ArrayLike
    from .forces.law_base import ContactLaw

# URDF joint type -> nlpdyn joint class (None: the child is a free body)
JOINT_TYPES = {"revolute": Revolute, "continuous": Revolute, "prismatic": Prismatic,
               "fixed": Fixed, "planar": Planar, "floating": None}

# Numeric attributes read from the file: (tag, attribute) -> how many numbers
_NUMBERS = {("origin", "xyz"): 3, ("origin", "rpy"): 3, ("axis", "xyz"): 3, ("mass", "value"): 1,
            **{("inertia", k): 1 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
            **{("limit", k): 1 for k in ("lower", "upper", "effort", "velocity")},
            **{("dynamics", k): 1 for k in ("damping", "friction")},
            **{("mimic", k): 1 for k in ("multiplier", "offset")},
            ("box", "size"): 3, ("cylinder", "radius"): 1, ("cylinder", "length"): 1,
            ("sphere", "radius"): 1}
# Keys of the ``clearance`` data: (needed, optional), revolute [0] and prismatic [1]
_CLEARANCE_KEYS = ((("clearance", "radius", "length"), ("axial_clearance", "friction", "offset")),
                   (("clearance", "profile", "length"), ("section_x", "friction")))
# Elements nlpdyn does not use, dropped before parsing (meshes are never loaded)
_UNUSED = ("collision", "transmission", "gazebo", "material", "mujoco")


def _load_yourdfpy():
    try:
        import yourdfpy
    except ImportError as err:
        raise ImportError("nlpdyn.from_urdf needs the URDF parser yourdfpy: "
                          "pip install 'nlpdyn[urdf]'") from err
    return yourdfpy


def _read(source, problems):
    """The XML text of ``source`` (a path or a URDF string), or None with the problem."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source
    if not isinstance(source, (str, os.PathLike)):
        problems.append(f"source must be a path or a URDF XML string, got "
                        f"{type(source).__name__}")
        return None
    try:
        with open(source, encoding="utf-8") as f:
            return f.read()
    except OSError as err:
        problems.append(f"URDF file {os.fspath(source)!r} cannot be read: {err.strerror}")
        return None


def _clean_tree(text, problems, bad):
    """The <robot> element without the parts nlpdyn does not use; every attribute that
    should be numbers and is not is named in ``problems`` and set to zeros so that the
    rest of the file is still checked (its link or joint goes into ``bad``)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        problems.append(f"the URDF is not well-formed XML: {err}")
        return None
    if root.tag != "robot":
        problems.append(f"the URDF's root element must be <robot>, got <{root.tag}>")
        return None
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in _UNUSED:
                parent.remove(child)
    for kind in ("link", "joint"):
        for element in root.iter(kind):
            owner = f"{kind} {element.get('name')!r}"
            for sub in element.iter():
                for attribute, value in sub.attrib.items():
                    count = _NUMBERS.get((sub.tag, attribute))
                    if count is None:
                        continue
                    try:
                        ok = len([float(x) for x in value.split()]) == count
                    except ValueError:
                        ok = False
                    if not ok:
                        problems.append(f"{owner}: <{sub.tag} {attribute}=\"{value}\"> must be "
                                        f"{count} number{'s' if count > 1 else ''}")
                        sub.set(attribute, " ".join(["0"] * count))
                        bad.add((kind, element.get("name")))
    return root


def _structure_problems(robot, base, configuration, velocities, bad):
    """Every problem of the parsed robot's links and joints for nlpdyn, and its root link
    (links and joints named in ``bad`` have numbers already reported)."""
    out = []
    links = {link.name: link for link in robot.links}
    joints = {joint.name: joint for joint in robot.joints}
    for kind, items, unique in (("link", robot.links, links), ("joint", robot.joints, joints)):
        if len(unique) < len(items):
            names = [x.name for x in items]
            out.append(f"{kind} names used twice: {sorted({n for n in names if names.count(n) > 1})}")
    parent_of = {}
    for joint in robot.joints:
        tag = f"joint {joint.name!r}"
        if joint.type not in JOINT_TYPES:
            out.append(f"{tag}: type {joint.type!r} is not a URDF joint type "
                       f"({', '.join(JOINT_TYPES)})")
        if joint.mimic is not None:
            out.append(f"{tag}: mimic joints are not supported (it mimics {joint.mimic.joint!r})")
        for end in ("parent", "child"):
            if getattr(joint, end) not in links:
                out.append(f"{tag}: {end} link {getattr(joint, end)!r} is not defined")
        if joint.child in parent_of:
            out.append(f"{tag}: link {joint.child!r} is already the child of joint "
                       f"{parent_of[joint.child]!r} (closed loops are not supported)")
        else:
            parent_of[joint.child] = joint.name
        numbers = [joint.axis] + ([] if joint.origin is None else [joint.origin])
        if joint.limit is not None:
            numbers += [x for x in (joint.limit.lower, joint.limit.upper) if x is not None]
        if not all(np.all(np.isfinite(np.asarray(x, dtype=float))) for x in numbers):
            out.append(f"{tag}: origin, axis and limits must be finite numbers")
        elif joint.type in ("revolute", "continuous", "prismatic", "planar") \
                and np.linalg.norm(joint.axis) == 0:
            out.append(f"{tag}: axis must not be zero")
        if joint.type in ("revolute", "prismatic") and joint.limit is not None \
                and None not in (joint.limit.lower, joint.limit.upper) \
                and joint.limit.lower > joint.limit.upper:
            out.append(f"{tag}: limit lower {joint.limit.lower} > upper {joint.limit.upper}")
    roots = [name for name in links if name not in parent_of]
    root = roots[0] if len(roots) == 1 else None
    if len(roots) != 1 and links:
        out.append(f"the links must form one tree: root links (no parent joint) {roots}"
                   + (" (a closed loop has none)" if not roots else ""))
    if root is not None:
        reached, todo = {root}, [root]
        while todo:
            name = todo.pop()
            for joint in robot.joints:
                if joint.parent == name and joint.child not in reached:
                    reached.add(joint.child)
                    todo.append(joint.child)
        joint_of = {joint.name: joint for joint in robot.joints}
        looped = []
        for name in sorted(set(links) - reached):
            seen = [name]
            while name in parent_of and joint_of[parent_of[name]].parent in links \
                    and joint_of[parent_of[name]].parent not in seen:
                name = joint_of[parent_of[name]].parent
                seen.append(name)
            if name in parent_of and joint_of[parent_of[name]].parent in links:
                looped.append(seen[0])      # else below a joint from an undefined link
        if looped:
            out.append(f"links {looped} are not reached from the root {root!r} "
                       "(a closed loop)")
    if not links:
        out.append("the URDF has no link")
    for link in robot.links:
        if link.name == root and base == "fixed" or ("link", link.name) in bad:
            continue            # the ground: its mass does not matter
        tag = f"link {link.name!r}"
        inertial = link.inertial
        if inertial is None or inertial.mass is None or inertial.inertia is None:
            out.append(f"{tag}: has no <inertial> with mass and inertia (a massless link is "
                       "allowed only as the root of a fixed base)")
            continue
        origin = np.eye(4) if inertial.origin is None else inertial.origin
        if not (np.isfinite(inertial.mass) and np.all(np.isfinite(inertial.inertia))
                and np.all(np.isfinite(origin))):
            out.append(f"{tag}: inertial data must be finite numbers")
            continue
        I = origin[:3, :3] @ inertial.inertia @ origin[:3, :3].T
        probe = RigidBody(link.name, inertial.mass, I)
        out += [f"{tag}: " + p.split(": ", 1)[-1] for p in probe.problems()]
    for label, given in (("configuration", configuration), ("velocities", velocities)):
        for name, value in given.items():
            wrong = not_one_dof(label, name, joints, "a value")
            if wrong:
                out.append(wrong)
            elif not (isinstance(value, (int, float, np.number)) and np.isfinite(value)):
                out.append(f"{label}: joint {name!r} needs one finite number, got {value!r}")
    return out, root


def _motion(joint, q):
    """The joint's 4x4 motion at coordinate q (URDF: the child frame from the joint frame)."""
    T = np.eye(4)
    axis = np.asarray(joint.axis, dtype=float)
    axis = axis / np.linalg.norm(axis) if np.linalg.norm(axis) > 0 else axis
    if joint.type in ("revolute", "continuous"):
        from scipy.spatial.transform import Rotation   # lazily: 0.1 s to import
        T[:3, :3] = Rotation.from_rotvec(q * axis).as_matrix()
    elif joint.type == "prismatic":
        T[:3, 3] = q * axis
    return T


def _poses(robot, root, configuration, velocities):
    """Every link's global pose (4x4), angular velocity and link-origin velocity (global)."""
    pose = {root: np.eye(4)}
    twist = {root: (np.zeros(3), np.zeros(3))}
    placed = {}         # joint name -> (global point, global unit axis)
    todo = [root]
    while todo:
        name = todo.pop()
        for joint in robot.joints:
            if joint.parent != name:
                continue
            origin = np.eye(4) if joint.origin is None else joint.origin
            frame = pose[name] @ origin                 # the joint frame at q = 0 of the joint
            q, qdot = configuration.get(joint.name, 0.0), velocities.get(joint.name, 0.0)
            child = frame @ _motion(joint, q)
            axis = np.asarray(joint.axis, dtype=float)
            axis = frame[:3, :3] @ (axis / np.linalg.norm(axis)) if axis.any() else axis
            w, v = twist[name]
            v_child = v + np.cross(w, child[:3, 3] - pose[name][:3, 3])
            if joint.type in ("revolute", "continuous"):
                w = w + qdot * axis
            elif joint.type == "prismatic":
                v_child = v_child + qdot * axis
            pose[joint.child], twist[joint.child] = child, (w, v_child)
            placed[joint.name] = (child[:3, 3], axis, child[:3, :3])
            todo.append(joint.child)
    return pose, twist, placed


def _loosening_problems(robot, clearance, limits, configuration):
    out = []
    joints = {joint.name: joint for joint in robot.joints}
    for name, data in clearance.items():
        joint, wrong = joints.get(name), not_one_dof("clearance", name, joints, "a clearance")
        if wrong:
            out.append(wrong)
        elif not isinstance(data, dict):
            out.append(f"clearance: joint {name!r} needs a dict of the clearance joint's data, "
                       f"got {type(data).__name__}")
        else:
            needed, allowed = _CLEARANCE_KEYS[joint.type == "prismatic"]
            if set(needed) - set(data) or set(data) - set(needed) - set(allowed):
                out.append(f"clearance: joint {name!r} ({joint.type}) needs keys {needed}, may "
                           f"have {allowed}, got {sorted(data)}")
    for name in limits:
        joint = joints.get(name)
        if joint is None:
            out.append(f"limits: no joint named {name!r}")
        elif joint.type not in ("revolute", "prismatic") or joint.limit is None \
                or None in (joint.limit.lower, joint.limit.upper):
            out.append(f"limits: joint {name!r} ({joint.type}) has no lower and upper limit "
                       "in the file")
        else:
            q = configuration.get(name, 0.0)
            lower, upper = joint.limit.lower - q, joint.limit.upper - q
            if not lower <= 0 <= upper:
                out.append(f"limits: joint {name!r} starts at {q} outside its limits "
                           f"[{joint.limit.lower}, {joint.limit.upper}]")
            elif joint.type == "revolute" and not (-np.pi < lower and upper < np.pi):
                out.append(f"limits: joint {name!r}: a rotation stop measures within (-pi, pi) "
                           f"of the start, limits [{joint.limit.lower}, {joint.limit.upper}] "
                           f"from {q} reach beyond")
    return out


def from_urdf(source: str | os.PathLike, *, base: str = "fixed",
              configuration: dict[str, float] | None = None,
              velocities: dict[str, float] | None = None,
              gravity: ArrayLike = (0.0, 0.0, -9.81),
              clearance: dict[str, dict] | None = None,
              limits: dict[str, ContactLaw] | ContactLaw | None = None,
              damping: bool | str | Iterable[str] | dict[str, float | None] = False,
              friction: str | dict[str, str | dict] | None = None,
              bushing: dict[str, dict] | None = None) -> System:
    """A System built from a URDF robot description.

    Each link with an ``<inertial>`` becomes a body of the same name: its mass, its centre
    of mass (``<inertial><origin>``) placed in the global frame at ``configuration``, and
    its inertia (products included) rotated from the inertial frame to the link's axes. The
    body frame is the link frame's axes at the centre of mass, so ``Result.rotation`` is
    the link's orientation and angular velocities are in the link's axes. Each joint
    becomes a joint of the same name, with its origin and axis in the global frame at
    ``configuration``: revolute and continuous -> :class:`~nlpdyn.joints.ideal.Revolute`,
    prismatic -> :class:`~nlpdyn.joints.ideal.Prismatic`, fixed ->
    :class:`~nlpdyn.joints.ideal.Fixed` (the child stays a body of its own), planar ->
    :class:`~nlpdyn.joints.library.Planar` (axis = the plane's normal), floating -> no joint
    (a free body). Joint coordinates are 0 at the loaded configuration, as everywhere in
    nlpdyn. The joints' ``<dynamics damping friction>`` and ``<limit lower upper>`` are
    used when asked (``damping``, ``friction``, ``limits``). A link's ``<visual>`` boxes,
    cylinders and spheres draw its body (``animate``, ``view_html``; a body with none gets
    the default drawing); meshes, collisions, effort and velocity limits are not read.

    Parameters
    ----------
    source : str or os.PathLike
        A path to a ``.urdf`` file, or the URDF XML itself (a string starting with ``<``).
    base : {"fixed", "floating"}
        "fixed": the root link is the ground (its inertial is not used and may be absent);
        "floating": the root link is a free body at the origin, at rest.
    configuration : dict, optional
        Joint name -> coordinate (rad or m) of revolute, continuous and prismatic joints;
        others 0.
    velocities : dict, optional
        Joint name -> rate (rad/s or m/s); the bodies' velocities follow along the tree.
    gravity : array_like, shape (3,)
        m/s^2, global.
    clearance : dict, optional
        Joint name -> dict of clearance data; the joint is loaded as a clearance joint of
        the same name instead. Revolute and continuous: :class:`~nlpdyn.joints.clearance.
        RevoluteClearance` with keys ``clearance``, ``radius``, ``length``, optional
        ``axial_clearance`` (default: ``clearance``) and ``friction``. Prismatic:
        :class:`~nlpdyn.joints.clearance.PrismaticClearance` with ``clearance``,
        ``profile`` (the slider's section, which a URDF does not hold), ``length``,
        optional ``section_x`` and ``friction``.
    limits : dict or ContactLaw, optional
        Joint name -> contact law: the joint's ``<limit lower upper>`` from the file become
        a :class:`~nlpdyn.forces.joint_stops.RotationStop` (revolute) or
        :class:`~nlpdyn.forces.joint_stops.TranslationStop` (prismatic) named
        ``"<joint>_limits"`` with that law. One law instead of a dict: every revolute and
        prismatic joint that has limits (not those replaced by a bushing).
    damping : bool, str, collection of str or dict, optional
        Joint viscous dampers (:class:`~nlpdyn.forces.joint_friction.JointDamper` named
        ``"<joint>_damping"``, N m s/rad or N s/m): True, every revolute, continuous and
        prismatic joint with a ``<dynamics damping>`` > 0 in the file; a joint name or
        names, those joints with the file's value; a dict joint name -> value (None: the
        file's).
    friction : "coulomb" or dict, optional
        Joint friction of the file's magnitude (``<dynamics friction>``, N m or N:
        :class:`~nlpdyn.forces.joint_friction.JointFriction` named ``"<joint>_friction"``).
        "coulomb": every revolute, continuous and prismatic joint with a friction > 0 in
        the file, Coulomb's law. A dict joint name -> "coulomb", or -> a dict of
        JointFriction's parameters (``friction`` replaces the file's value; ``sigma0``
        makes it LuGre's law, with ``static_friction``, ``stribeck_velocity``, ``sigma1``,
        ``sigma2``; ``creep_velocity`` smooths Coulomb's).
    bushing : dict, optional
        Joint name -> dict of :class:`~nlpdyn.forces.bushing.Bushing` data: the joint
        (revolute, continuous, prismatic, fixed or planar) is replaced by a bushing of the
        same name at the joint's origin, its axes the joint frame's (the file's ``<axis>``
        has the same components in them), with keys ``stiffness`` and
        ``rotational_stiffness`` (a number, a law, or 3 of them along those axes),
        optional ``damping`` and ``rotational_damping``. Such a joint takes no clearance,
        limits, damping or friction.

    Returns
    -------
    System
        Open (not compiled): more elements may be added.

    Raises
    ------
    ModelError
        Listing every problem at once, before anything is built: a file that cannot be read
        or is not a URDF, numbers that are not numbers, links without ``<inertial>`` (other
        than a fixed base's root), invalid masses or inertias, mimic joints, closed loops,
        joints whose links are not defined, unknown joint types, and keys of
        ``configuration``, ``velocities``, ``clearance``, ``limits``, ``damping``,
        ``friction`` or ``bushing`` that do not fit (joints that do not exist or do not
        take the option, values the file lacks, a bushing's joint loosened otherwise).
    ImportError
        When yourdfpy is not installed (``pip install 'nlpdyn[urdf]'``).

    Examples
    --------
    A rod hanging from a hinge about Y, started at 0.3 rad:

    >>> import nlpdyn as nd
    >>> urdf = '''<robot name="pendulum">
    ...   <link name="world"/>
    ...   <link name="rod">
    ...     <inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    ...       <inertia ixx="0.0834" ixy="0" ixz="0" iyy="0.0834" iyz="0" izz="1e-4"/>
    ...     </inertial>
    ...   </link>
    ...   <joint name="hinge" type="continuous">
    ...     <parent link="world"/><child link="rod"/><axis xyz="0 1 0"/>
    ...   </joint>
    ... </robot>'''
    >>> system = nd.from_urdf(urdf, configuration={"hinge": 0.3})
    >>> system.body("rod").position.round(4)
    array([-0.1478,  0.    , -0.4777])
    >>> res = nd.simulate(system, t_end=0.01, h=1e-3, progress=False)
    >>> res.position("rod").shape
    (11, 3)

    The same rod with 0.05 N m s/rad of damping at the hinge, as a file may say with
    ``<dynamics damping="0.05"/>``:

    >>> damped = nd.from_urdf(urdf, configuration={"hinge": 0.3}, damping={"hinge": 0.05})
    >>> [f.name for f in damped.forces if f.kind == "joint damper"]
    ['hinge_damping']
    """
    configuration = dict(configuration or {})
    velocities = dict(velocities or {})
    clearance = dict(clearance or {})
    problems = []
    if base not in ("fixed", "floating"):
        problems.append(f"base must be 'fixed' or 'floating', got {base!r}")
    text = _read(source, problems)
    bad = set()
    root_element = None if text is None else _clean_tree(text, problems, bad)
    if root_element is None:
        raise ModelError(problems)
    yourdfpy = _load_yourdfpy()
    try:
        robot = yourdfpy.URDF.load(io.StringIO(ET.tostring(root_element, encoding="unicode")),
                                   build_scene_graph=False, build_collision_scene_graph=False,
                                   load_meshes=False, load_collision_meshes=False).robot
    except Exception as err:        # yourdfpy's own complaint, named as it is
        raise ModelError(problems + [f"yourdfpy cannot read the URDF: {err}"]) from err
    dampers, frictions, bushing, found = dynamics_options(robot, damping, friction, bushing)
    if not isinstance(limits, dict) and limits is not None:
        limits = {j.name: limits for j in robot.joints if j.type in ("revolute", "prismatic")
                  and j.limit is not None and None not in (j.limit.lower, j.limit.upper)
                  and j.name not in bushing}
    limits = dict(limits or {})
    problems += found + conflicts(bushing, clearance, limits)
    found, root = _structure_problems(robot, base, configuration, velocities, bad)
    problems += found + _loosening_problems(robot, clearance, limits, configuration)
    if problems:
        raise ModelError(problems)

    pose, twist, placed = _poses(robot, root, configuration, velocities)
    system = System(gravity=gravity)
    bodies = {root: system.ground} if base == "fixed" else {}
    for link in robot.links:
        if link.name in bodies:
            continue
        T, (w, v) = pose[link.name], twist[link.name]
        origin = np.eye(4) if link.inertial.origin is None else link.inertial.origin
        R_in = origin[:3, :3]
        com = T @ origin[:, 3]
        bodies[link.name] = system.add_body(
            link.name, link.inertial.mass, R_in @ link.inertial.inertia @ R_in.T,
            position=com[:3], orientation=T[:3, :3], velocity=v + np.cross(w, com[:3] - T[:3, 3]),
            angular_velocity=T[:3, :3].T @ w,
            geometry=visual_shapes(link, origin[:3, 3]) or None)
    for joint in robot.joints:
        kind = JOINT_TYPES[joint.type]
        if kind is None:
            continue
        point, axis, frame = placed[joint.name]
        parent, child = bodies[joint.parent], bodies[joint.child]
        if joint.name in bushing:
            add_bushing(system, parent, child, point, frame, bushing[joint.name], joint.name)
            continue
        data = clearance.get(joint.name)
        if data is not None:
            loose = RevoluteClearance if kind is Revolute else PrismaticClearance
            if loose is RevoluteClearance:
                data = {"axial_clearance": data.get("clearance"), **data}
            element = loose(parent, child, point=point, axis=axis, name=joint.name, **data)
        elif kind is Fixed:
            element = Fixed(parent, child, point=point, name=joint.name)
        else:
            element = kind(parent, child, point=point, axis=axis, name=joint.name)
        system.add_joint(element)
        add_dynamics(system, element, joint.name, dampers, frictions)
        if joint.name in limits:
            q = configuration.get(joint.name, 0.0)
            stop = RotationStop if kind is Revolute else TranslationStop
            system.add_force(stop(element, joint.limit.lower - q, joint.limit.upper - q,
                                  limits[joint.name], name=f"{joint.name}_limits"))
    system.validate()       # the elements' own checks (a stop's range, clearance data)
    return system
