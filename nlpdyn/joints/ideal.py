"""Ideal joints, drivers and programmed constraints, each written once as Phi(q, t) = 0.

Geometry is given in the global frame at the initial configuration; the constructors store
body-frame vectors. For a joint between ``parent`` and ``child``: ``point`` is where the
joint sits (on both bodies initially), ``axis`` its direction (unit). The rotation and
translation drivers are in :mod:`nlpdyn.joints.drivers`, the kinematic excitation of a
joint's mode in :mod:`nlpdyn.joints.excitation`, programmed constraints in
:mod:`nlpdyn.joints.programmed`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

from ..body import BodyState, RigidBody
from ..checks import as_unit_vector, as_vector, vector_problems
from ..rotations import perpendicular_pair
from .base import BilateralConstraint, check_unit
from .modes import JointModes, twists
from .programmed import Programmed  # noqa: F401  (it lived here)

if TYPE_CHECKING:
    from .._typing import Symbolic

E1, E2, E3 = np.eye(3)


def _dot(a, b):
    return ca.dot(a, b)


class Joint(BilateralConstraint):
    """Base of the ideal two-body joints: stores the joint point and triad on both bodies."""

    kind = "joint"
    has_axis = True

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike,
                 axis: ArrayLike | None = None, name: str | None = None):
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

    def reaction_point(self) -> np.ndarray | None:
        return self.point

    # Body-frame geometry, computed when the system compiles (after validation).
    def _frames(self):
        f, g = perpendicular_pair(self.axis)
        return f, g, self.axis

    def _points(self, sp: BodyState, sc: BodyState):
        return sp.point(self.point), sc.point(self.point)

    def _axis_rows(self, sp: BodyState, sc: BodyState) -> list:
        """The two rows that keep the child's axis along the parent's: f.a_child, g.a_child."""
        f, g, a = self._frames()
        ac = sc.vector(a)
        return [_dot(sp.vector(f), ac), _dot(sp.vector(g), ac)]

    def frame(self) -> np.ndarray:
        """The joint frame (columns e1, e2, e3; global, initial configuration), fixed in the
        parent: e3 is the axis, (e1, e2, e3) right-handed.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)).frame()[:, 2]    # e3: the axis
        array([0., 1., 0.])
        """
        return np.column_stack(self._frames())

    def modes(self) -> JointModes:
        """Free and constrained mode vectors in the joint frame (:mod:`nlpdyn.joints.modes`);
        constant in the joint frame unless the class says otherwise.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> modes = nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)).modes()
        >>> modes.free.ravel()            # rotation about e3, in twist coordinates [Omega; V]
        array([0., 0., 1., 0., 0., 0.])
        """
        raise NotImplementedError


class Spherical(Joint):
    """Ball joint: the joint point coincides on both bodies (3 equations).

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        The joint point, global frame at the initial configuration.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> body = s.add_body("body", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, 0, 0))
    >>> joint = s.add_joint(nd.Spherical(s.ground, body, point=(0, 0, 0)))
    >>> joint.name, joint.n_equations
    ('spherical1', 3)
    """

    kind = "spherical joint"
    has_axis = False
    n_equations = 3

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike,
                 name: str | None = None):
        super().__init__(parent, child, point, None, name)

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        pp, pc = self._points(*states)
        return pc - pp

    def frame(self) -> np.ndarray:
        """The global axes at the initial configuration, fixed in the parent.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> j = nd.Spherical(s.ground, b, (0, 0, 0))
        >>> j.frame()
        array([[1., 0., 0.],
               [0., 1., 0.],
               [0., 0., 1.]])
        """
        return np.eye(3)

    def modes(self) -> JointModes:
        """Free: the three relative rotations; constrained: the three translations.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> m = nd.Spherical(s.ground, b, (0, 0, 0)).modes()
        >>> m.free.shape, m.constrained.shape   # twist coordinates [Omega; V]
        ((6, 3), (6, 3))
        """
        return JointModes(twists(rotations=np.eye(3)), twists(translations=np.eye(3)))


class Revolute(Joint):
    """Hinge about ``axis`` through ``point`` (5 equations).

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that turns about the axis relative to ``parent``.
    point : array_like, shape (3,)
        A point on the hinge axis, global frame at the initial configuration.
    axis : array_like, shape (3,)
        The hinge axis, global frame at the initial configuration (a unit vector; required).
    name : str, optional
        Its name in results (default: ``revolute1``, ... when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0)))
    >>> hinge.name, hinge.n_equations
    ('revolute1', 5)
    """

    kind = "revolute joint"
    n_equations = 5

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        ac = sc.vector(a)
        return ca.vertcat(pc - pp, _dot(sp.vector(f), ac), _dot(sp.vector(g), ac))

    def modes(self) -> JointModes:
        """Free: rotation about e3 (the axis); constrained: rotations about e1, e2 and the
        three translations.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> m = nd.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1)).modes()
        >>> m.free.ravel()       # rotation about e3, in twist coordinates [Omega; V]
        array([0., 0., 1., 0., 0., 0.])
        """
        return JointModes(twists(rotations=[E3]), twists(rotations=[E1, E2], translations=np.eye(3)))


class Cylindrical(Joint):
    """Rotation about and translation along ``axis`` (4 equations).

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        A point on the axis, global frame at the initial configuration.
    axis : array_like, shape (3,)
        The axis, global frame at the initial configuration (a unit vector; required).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> body = s.add_body("body", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, 0, 0))
    >>> joint = s.add_joint(nd.Cylindrical(s.ground, body, point=(0, 0, 0), axis=(1, 0, 0)))
    >>> joint.n_equations
    4
    """

    kind = "cylindrical joint"
    n_equations = 4

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, ac = sp.vector(f), sp.vector(g), sc.vector(a)
        d = pc - pp
        return ca.vertcat(_dot(fp, ac), _dot(gp, ac), _dot(fp, d), _dot(gp, d))

    def modes(self) -> JointModes:
        """Free: rotation about and translation along e3; constrained: rotations about and
        translations along e1, e2.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> m = nd.Cylindrical(s.ground, b, (0, 0, 0), (0, 0, 1)).modes()
        >>> m.free.T             # rotation about e3, translation along e3
        array([[0., 0., 1., 0., 0., 0.],
               [0., 0., 0., 0., 0., 1.]])
        """
        return JointModes(twists(rotations=[E3], translations=[E3]),
                          twists(rotations=[E1, E2], translations=[E1, E2]))


class Prismatic(Joint):
    """Translation along ``axis`` only (5 equations).

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        A point on the axis, global frame at the initial configuration.
    axis : array_like, shape (3,)
        The axis, global frame at the initial configuration (a unit vector; required).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> body = s.add_body("body", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, 0, 0))
    >>> joint = s.add_joint(nd.Prismatic(s.ground, body, point=(0, 0, 0), axis=(1, 0, 0)))
    >>> joint.n_equations
    5
    """

    kind = "prismatic joint"
    n_equations = 5

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, ac, fc = sp.vector(f), sp.vector(g), sc.vector(a), sc.vector(f)
        d = pc - pp
        return ca.vertcat(_dot(fp, ac), _dot(gp, ac), _dot(fp, d), _dot(gp, d), _dot(fc, gp))

    def modes(self) -> JointModes:
        """Free: translation along e3; constrained: the three rotations and the translations
        along e1, e2.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> m = nd.Prismatic(s.ground, b, (0, 0, 0), (0, 0, 1)).modes()
        >>> m.free.ravel()       # translation along e3
        array([0., 0., 0., 0., 0., 1.])
        """
        return JointModes(twists(translations=[E3]),
                          twists(rotations=np.eye(3), translations=[E1, E2]))


class Universal(Joint):
    """Cardan joint: ``axis1`` fixed in the parent, ``axis2`` in the child, perpendicular (4).

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        The cross's centre, global frame at the initial configuration.
    axis1 : array_like, shape (3,)
        The axis fixed in ``parent``, global frame at the initial configuration (a unit
        vector).
    axis2 : array_like, shape (3,)
        The axis fixed in ``child``, perpendicular to ``axis1`` at the initial configuration.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> body = s.add_body("body", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, 0, 0))
    >>> joint = s.add_joint(nd.Universal(s.ground, body, (0, 0, 0), axis1=(0, 0, 1),
    ...                                  axis2=(0, 1, 0)))
    >>> joint.frame()[:, 2]
    array([-1.,  0.,  0.])
    """

    kind = "universal joint"
    has_axis = False
    n_equations = 4

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, axis1: ArrayLike,
                 axis2: ArrayLike, name: str | None = None):
        super().__init__(parent, child, point, None, name)
        self.axis1 = as_unit_vector(axis1, self.label, "axis1")
        self.axis2 = as_unit_vector(axis2, self.label, "axis2")

    def problems(self) -> list[str]:
        out = super().problems()
        axis_problems = check_unit(self.axis1, "axis1", self.label) + \
            check_unit(self.axis2, "axis2", self.label)
        out += axis_problems
        if not axis_problems and abs(self.axis1 @ self.axis2) > 1e-9:
            out.append(f"{self.label}: axis1 and axis2 must be perpendicular, "
                       f"axis1.axis2 = {self.axis1 @ self.axis2:.3g}")
        return out

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        pp, pc = self._points(sp, sc)
        return ca.vertcat(pc - pp, _dot(sp.vector(self.axis1), sc.vector(self.axis2)))

    def frame(self) -> np.ndarray:
        """e1 = axis1, e2 = axis2 as at the initial configuration, e3 = axis1 x axis2.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> j = nd.Universal(s.ground, b, (0, 0, 0), (1, 0, 0), (0, 1, 0))
        >>> j.frame()[:, 2]       # e3 = axis1 x axis2
        array([0., 0., 1.])
        """
        return np.column_stack([self.axis1, self.axis2, np.cross(self.axis1, self.axis2)])

    def modes(self, child_axis: ArrayLike | None = None) -> JointModes:
        """Free: rotations about axis1 (e1) and about axis2 as the child carries it;
        constrained: rotation about their common normal and the three translations.

        Not constant in the joint frame: ``child_axis`` is axis2's current direction in the
        joint frame, (0, cos a, sin a) after a rotation a about axis1 (default: e2, the
        initial configuration). The basis stays orthonormal, so the dual equals it.

        Parameters
        ----------
        child_axis : array_like, shape (3,), optional
            axis2's current direction in the joint frame (default e2).

        Returns
        -------
        JointModes

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> j = nd.Universal(s.ground, b, (0, 0, 0), (1, 0, 0), (0, 1, 0))
        >>> j.modes(child_axis=(0, 0, 1)).free[:3].T     # about e1, about axis2 turned to e3
        array([[1., 0., 0.],
               [0., 0., 1.]])
        """
        u = E2 if child_axis is None else np.asarray(child_axis, dtype=float)
        return JointModes(twists(rotations=[E1, u]),
                          twists(rotations=[np.cross(E1, u)], translations=np.eye(3)))


class Fixed(Joint):
    """Rigid connection (6 equations). ``axis`` is optional and only orients the triad.

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        The joint point, global frame at the initial configuration.
    axis : array_like, shape (3,)
        e3 of the joint frame (a unit vector, global, initial configuration).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> body = s.add_body("body", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.5, 0, 0))
    >>> joint = s.add_joint(nd.Fixed(s.ground, body, point=(0, 0, 0)))
    >>> joint.n_equations, joint.modes().free.shape
    (6, (6, 0))
    """

    kind = "fixed joint"
    has_axis = False
    n_equations = 6

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike,
                 axis: ArrayLike = (0.0, 0.0, 1.0), name: str | None = None):
        super().__init__(parent, child, point, axis, name)

    def problems(self) -> list[str]:
        return super().problems() + check_unit(self.axis, "axis", self.label)

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, ac, fc = sp.vector(f), sp.vector(g), sc.vector(a), sc.vector(f)
        return ca.vertcat(pc - pp, _dot(fp, ac), _dot(gp, ac), _dot(fc, gp))

    def modes(self) -> JointModes:
        """No free mode; all six constrained.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> m = nd.Fixed(s.ground, b, (0, 0, 0)).modes()
        >>> m.free.shape, m.constrained.shape
        ((6, 0), (6, 6))
        """
        return JointModes(np.zeros((6, 0)), np.eye(6))
