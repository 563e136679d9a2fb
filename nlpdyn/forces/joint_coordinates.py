"""A joint's free coordinate: the ideal joint an element measures it on (:func:`nominal_joint`),
the rate of its translation or rotation and where a generalised force along it acts.

Shared by the joint stops (:mod:`nlpdyn.forces.joint_stops`) and LuGre friction
(:mod:`nlpdyn.forces.friction`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca

from ..joints.clearance import ClearanceJoint

if TYPE_CHECKING:
    from ..body import BodyState
    from ..joints.base import BilateralConstraint
    from .._typing import Symbolic, Wrench
    from .base import ForceElement

    #: (force direction, moment direction, point) of a unit generalised force, global
    Action = tuple[Symbolic, Symbolic, Symbolic]

__all__ = ["nominal_joint", "translation_rate", "rotation_rate", "coordinate_wrenches"]


def nominal_joint(joint: BilateralConstraint | ForceElement) -> BilateralConstraint | ForceElement:
    """The ideal joint whose free coordinate a joint-coordinate element measures on ``joint``.

    Parameters
    ----------
    joint : Joint, ClearanceJoint or PenaltyClearanceJoint
        An ideal joint (returned as it is), a clearance joint (its nominal ideal joint: same
        bodies, point and axis) or a penalty clearance joint (that of its ``geometry``).
        Anything else is returned as it is (the element's validation refuses it).

    Returns
    -------
    Joint or object

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", 1.0, (1e-3, 0.1, 0.1), position=(0.5, 0, 0))
    >>> pin = nd.RevoluteClearance(s.ground, bar, (0, 0, 0), (0, 1, 0), 0.01, 1e-4, 0.02, 1e-4)
    >>> hinge = nominal_joint(pin)
    >>> type(hinge).__name__, hinge.axis.tolist(), hinge.child is bar
    ('Revolute', [0.0, 1.0, 0.0], True)
    """
    geometry = getattr(joint, "geometry", joint)      # a penalty joint's clearance joint
    if isinstance(geometry, ClearanceJoint) and geometry.nominal is not None:
        return geometry._nominal()
    return joint


def translation_rate(joint: BilateralConstraint,
                     states: list[BodyState]) -> tuple[Symbolic, Action]:
    """(ds/dt, action) of the translation s = (x_c - x_p) . a_p along ``joint``'s axis (x_p,
    x_c the parent's and child's material points that start at the joint point, a_p the
    axis carried by the parent): action = (force direction, moment direction, point) of a
    unit generalised force along s on the child, global (the parent takes the opposite).

    Parameters
    ----------
    joint : Prismatic or Cylindrical
        The joint (its ``point`` and ``axis``).
    states : list of BodyState
        [parent, child].

    Returns
    -------
    rate : casadi scalar
    action : tuple of 3 casadi columns, shape (3, 1)

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> from nlpdyn.body import BodyState, ground_state
    >>> s = nd.System()
    >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
    >>> slide = nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0))
    >>> moving = BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM([0.3, 0.1, 0]),
    ...                    ca.DM.zeros(3))
    >>> rate, (force, moment, point) = translation_rate(slide, [ground_state(s.ground), moving])
    >>> float(rate), force.full().ravel().tolist()
    (0.3, [1.0, 0.0, 0.0])
    """
    sp, sc = states
    xp, xc = sp.point(joint.point), sc.point(joint.point)
    a = sp.vector(joint.axis)
    wp, wc = sp.A @ sp.w, sc.A @ sc.w
    vp = sp.rdot + ca.cross(wp, xp - sp.r)          # parent's point x_p
    vc = sc.rdot + ca.cross(wc, xc - sc.r)          # child's point x_c
    # d/dt ((x_c - x_p) . a_p), a_p turning with the parent
    rate = ca.dot(vc - vp - ca.cross(wp, xc - xp), a)
    return rate, (a, ca.DM.zeros(3), xc)


def _rotation_xy(joint, states):
    sp, sc = states
    f, g, _ = joint._frames()
    fp, gp, fc = sp.vector(f), sp.vector(g), sc.vector(f)
    return ca.dot(fp, fc), ca.dot(gp, fc), fp, gp, fc


def rotation_rate(joint: BilateralConstraint,
                  states: list[BodyState]) -> tuple[Symbolic, Action]:
    """(d theta/dt, action) of the rotation theta about ``joint``'s axis (see
    :class:`~nlpdyn.forces.joint_stops.RotationStop`), action as in :func:`translation_rate`.

    Parameters
    ----------
    joint : Revolute or Cylindrical
        The joint (its point and axis triad).
    states : list of BodyState
        [parent, child].

    Returns
    -------
    rate : casadi scalar
    action : tuple of 3 casadi columns, shape (3, 1)
        No force; the moment direction n; the child's centre.

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> from nlpdyn.body import BodyState, ground_state
    >>> s = nd.System()
    >>> w = s.add_body("wheel", 1.0, (0.01, 0.01, 0.01))
    >>> hinge = nd.Revolute(s.ground, w, (0, 0, 0), (0, 0, 1))
    >>> turning = BodyState(w, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM.zeros(3),
    ...                     ca.DM([0, 0, 2.0]))
    >>> rate, (force, moment, point) = rotation_rate(hinge, [ground_state(s.ground), turning])
    >>> round(float(rate), 12), round(float(moment[2]), 12)       # about the axis
    (2.0, 1.0)
    """
    sp, sc = states
    x, y, fp, gp, fc = _rotation_xy(joint, states)
    n = ca.cross(fc, x * gp - y * fp) / (x**2 + y**2)
    rate = ca.dot(sc.A @ sc.w - sp.A @ sp.w, n)
    return rate, (ca.DM.zeros(3), n, sc.r)


def coordinate_wrenches(states: list[BodyState], F: Symbolic | float,
                        action: Action) -> list[Wrench]:
    """(f, n') per body of the generalised force F along a joint coordinate with ``action``
    (:func:`translation_rate`): +F on the child, -F on the parent.

    Parameters
    ----------
    states : list of BodyState
        [parent, child].
    F : float or casadi scalar
        The generalised force along the coordinate (N or N m).
    action : tuple of 3 casadi columns
        From :func:`translation_rate` or :func:`rotation_rate`.

    Returns
    -------
    list of (f, n')
        Per body: the force (global) and the moment about its centre (body frame); zeros
        for the ground.

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> from nlpdyn.body import BodyState, ground_state
    >>> s = nd.System()
    >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
    >>> slide = nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0))
    >>> states = [ground_state(s.ground),
    ...           BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM.zeros(3), ca.DM.zeros(3))]
    >>> (_, _), (f, n) = coordinate_wrenches(states, 5.0, translation_rate(slide, states)[1])
    >>> f.full().ravel().tolist()
    [5.0, 0.0, 0.0]
    """
    force, moment, x = action
    out = []
    for state, sign in zip(states, (-1.0, 1.0)):
        if state.body.is_ground:
            out.append((ca.DM.zeros(3), ca.DM.zeros(3)))
            continue
        f = sign * F * force
        n = ca.cross(state.A.T @ (x - state.r), state.A.T @ f) + state.A.T @ (sign * F * moment)
        out.append((f, n))
    return out
