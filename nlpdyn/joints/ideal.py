"""Ideal joints, drivers and programmed constraints, each written once as Phi(q, t) = 0.

Geometry is given in the global frame at the initial configuration; the constructors store
body-frame vectors. For a joint between ``parent`` and ``child``: ``point`` is where the
joint sits (on both bodies initially), ``axis`` its direction (unit).
"""
from __future__ import annotations

import casadi as ca

from ..body import BodyState, RigidBody
from ..checks import (as_number, as_unit_vector, as_vector, call_user_function,
                      number_problems, signature_problems, vector_problems)
from ..rotations import perpendicular_pair
from .base import BilateralConstraint, check_unit


def _dot(a, b):
    return ca.dot(a, b)


class Joint(BilateralConstraint):
    """Base of the ideal two-body joints: stores the joint point and triad on both bodies."""

    kind = "joint"
    has_axis = True

    def __init__(self, parent: RigidBody, child: RigidBody, point, axis=None, name=None):
        self.parent, self.child = parent, child
        self.bodies = (parent, child)
        self.name = name
        self.point = as_vector(point)
        self.axis = None if axis is None else as_unit_vector(axis, self.label, "axis")

    def problems(self) -> list[str]:
        out = super().problems() + vector_problems(self.label, "point", self.point)
        if self.has_axis:
            if self.axis is None:
                out.append(f"{self.label}: axis is required")
            else:
                out += check_unit(self.axis, "axis", self.label)
        return out

    def reaction_point(self):
        return self.point

    # Body-frame geometry, computed when the system compiles (after validation).
    def _frames(self):
        f, g = perpendicular_pair(self.axis)
        return f, g, self.axis

    def _points(self, sp: BodyState, sc: BodyState):
        return sp.point(self.point), sc.point(self.point)


class Spherical(Joint):
    """Ball joint: the joint point coincides on both bodies (3 equations)."""

    kind = "spherical joint"
    has_axis = False
    n_equations = 3

    def __init__(self, parent, child, point, name=None):
        super().__init__(parent, child, point, None, name)

    def equations(self, states, t):
        pp, pc = self._points(*states)
        return pc - pp


class Revolute(Joint):
    """Hinge about ``axis`` through ``point`` (5 equations)."""

    kind = "revolute joint"
    n_equations = 5

    def equations(self, states, t):
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        ac = sc.vector(a)
        return ca.vertcat(pc - pp, _dot(sp.vector(f), ac), _dot(sp.vector(g), ac))


class Cylindrical(Joint):
    """Rotation about and translation along ``axis`` (4 equations)."""

    kind = "cylindrical joint"
    n_equations = 4

    def equations(self, states, t):
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, ac = sp.vector(f), sp.vector(g), sc.vector(a)
        d = pc - pp
        return ca.vertcat(_dot(fp, ac), _dot(gp, ac), _dot(fp, d), _dot(gp, d))


class Prismatic(Joint):
    """Translation along ``axis`` only (5 equations)."""

    kind = "prismatic joint"
    n_equations = 5

    def equations(self, states, t):
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, ac, fc = sp.vector(f), sp.vector(g), sc.vector(a), sc.vector(f)
        d = pc - pp
        return ca.vertcat(_dot(fp, ac), _dot(gp, ac), _dot(fp, d), _dot(gp, d), _dot(fc, gp))


class Universal(Joint):
    """Cardan joint: ``axis1`` fixed in the parent, ``axis2`` in the child, perpendicular (4)."""

    kind = "universal joint"
    has_axis = False
    n_equations = 4

    def __init__(self, parent, child, point, axis1, axis2, name=None):
        super().__init__(parent, child, point, None, name)
        self.axis1 = as_unit_vector(axis1, self.label, "axis1")
        self.axis2 = as_unit_vector(axis2, self.label, "axis2")

    def problems(self):
        out = super().problems()
        axis_problems = check_unit(self.axis1, "axis1", self.label) + \
            check_unit(self.axis2, "axis2", self.label)
        out += axis_problems
        if not axis_problems and abs(self.axis1 @ self.axis2) > 1e-9:
            out.append(f"{self.label}: axis1 and axis2 must be perpendicular, "
                       f"axis1.axis2 = {self.axis1 @ self.axis2:.3g}")
        return out

    def equations(self, states, t):
        sp, sc = states
        pp, pc = self._points(sp, sc)
        return ca.vertcat(pc - pp, _dot(sp.vector(self.axis1), sc.vector(self.axis2)))


class Fixed(Joint):
    """Rigid connection (6 equations). ``axis`` is optional and only orients the triad."""

    kind = "fixed joint"
    has_axis = False
    n_equations = 6

    def __init__(self, parent, child, point, axis=(0.0, 0.0, 1.0), name=None):
        super().__init__(parent, child, point, axis, name)

    def problems(self):
        return super().problems() + check_unit(self.axis, "axis", self.label)

    def equations(self, states, t):
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, ac, fc = sp.vector(f), sp.vector(g), sc.vector(a), sc.vector(f)
        return ca.vertcat(pc - pp, _dot(fp, ac), _dot(gp, ac), _dot(fc, gp))


class _Driver(BilateralConstraint):
    """One equation prescribing a joint's relative motion as a function of t: ``motion`` a
    constant or a callable of t written with CasADi operations."""

    n_equations = 1
    joint_types: tuple = ()
    suffix = ""
    motion_name = "motion"

    def __init__(self, joint: Joint, motion, name=None):
        self.joint = joint
        self.bodies = getattr(joint, "bodies", ())
        self.motion = motion if callable(motion) else as_number(motion)
        joint_name = getattr(joint, "name", None)
        self.name = name or (f"{joint_name}_{self.suffix}" if joint_name else None)

    def default_name(self, taken) -> str:
        """``<joint>_rotation`` (or ``_translation``) when its joint is named, else the class
        name and a number."""
        joint_name = getattr(self.joint, "name", None)
        if isinstance(joint_name, str) and f"{joint_name}_{self.suffix}" not in taken:
            return f"{joint_name}_{self.suffix}"
        return super().default_name(taken)

    def problems(self):
        out = super().problems()
        if not isinstance(self.joint, self.joint_types):
            names = " or ".join(t.__name__ for t in self.joint_types)
            out.append(f"{self.label}: needs a {names} joint, got {type(self.joint).__name__}")
        if callable(self.motion):
            out += signature_problems(self.label, self.motion_name, self.motion, ["t"])
        else:
            out += number_problems(self.label, self.motion_name, self.motion,
                                   expected="a finite number or a function of t")
        return out

    def motion_at(self, t):
        """The prescribed angle or displacement at t (a CasADi scalar)."""
        if not callable(self.motion):
            return self.motion + 0 * t
        return call_user_function(self.label, self.motion_name, self.motion, (t,), size=1)


class RotationDriver(_Driver):
    """Prescribes the relative rotation angle(t) (rad) of a revolute or cylindrical joint.

    The angle is the child's rotation about the joint axis relative to the parent, measured
    from the initial configuration (so angle(0) should be 0). ``angle`` is a constant or a
    function of t written with CasADi operations (``ca.sin``, ...).
    """

    kind = "rotation driver"
    joint_types = (Revolute, Cylindrical)
    suffix = "rotation"
    motion_name = "angle"

    def __init__(self, joint: Joint, angle, name=None):
        super().__init__(joint, angle, name)

    def equations(self, states, t):
        sp, sc = states
        f, g, _ = self.joint._frames()
        fc = sc.vector(f)
        theta = self.motion_at(t)
        return _dot(fc, sp.vector(g)) * ca.cos(theta) - _dot(fc, sp.vector(f)) * ca.sin(theta)


class TranslationDriver(_Driver):
    """Prescribes the relative displacement s(t) (m) along a prismatic or cylindrical joint axis,
    measured from the initial configuration."""

    kind = "translation driver"
    joint_types = (Prismatic, Cylindrical)
    suffix = "translation"
    motion_name = "displacement"

    def __init__(self, joint: Joint, displacement, name=None):
        super().__init__(joint, displacement, name)

    def equations(self, states, t):
        sp, sc = states
        pp, pc = self.joint._points(sp, sc)
        return _dot(pc - pp, sp.vector(self.joint.axis)) - self.motion_at(t)


class Programmed(BilateralConstraint):
    """A general constraint Phi(q, t) = 0 written by the user with CasADi expressions.

    ``equations(t, *states)`` receives t and one :class:`~nlpdyn.body.BodyState` per body in
    ``bodies`` (use ``state.point(P)`` for the body point initially at P) and returns a
    CasADi column.

    Example: an end effector following a circle in the YZ plane::

        nd.Programmed([arm], lambda t, s: s.point(tip)[1:] - ca.vertcat(ca.cos(t), ca.sin(t)))
    """

    kind = "programmed constraint"

    def __init__(self, bodies, equations, name=None, point=None):
        try:
            self.bodies = tuple(bodies)
        except TypeError:           # one body given alone
            self.bodies = (bodies,)
        self._fun = equations
        self.name = name
        self._point = None if point is None else as_vector(point)
        self.n_equations = None  # known once the system evaluates the expression

    def problems(self):
        out = super().problems()
        out += signature_problems(self.label, "equations", self._fun,
                                  ["t"] + [f"state{k + 1}" for k in range(len(self.bodies))])
        if self._point is not None:
            out += vector_problems(self.label, "point", self._point)
        return out

    def equations(self, states, t):
        return call_user_function(self.label, "equations", self._fun, (t, *states))

    def reaction_point(self):
        return self._point
