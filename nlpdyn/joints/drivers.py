"""Drivers: a revolute or cylindrical joint's rotation, a prismatic or cylindrical joint's
translation, prescribed as functions of t (kinematic excitations of the joint's axial mode)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from .excitation import _Driver
from .ideal import Cylindrical, Joint, Prismatic, Revolute, _dot

if TYPE_CHECKING:
    from .._typing import Symbolic
    from ..body import BodyState


class RotationDriver(_Driver):
    """Prescribes the relative rotation angle(t) (rad) of a revolute or cylindrical joint.

    The angle is the child's rotation about the joint axis relative to the parent, measured
    from the initial configuration (so angle(0) should be 0). ``angle`` is a constant or a
    function of t written with CasADi operations (``ca.sin``, ...).

    Parameters
    ----------
    joint : Revolute or Cylindrical
        The joint whose rotation it prescribes (added to the system too).
    angle : float or callable
        The angle (rad): a number, or a function of t returning a CasADi scalar.
    name : str, optional
        Its name in results (default: ``<joint>_rotation``).

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> crank = s.add_body("crank", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0.1, 0, 0))
    >>> hinge = s.add_joint(nd.Revolute(s.ground, crank, (0, 0, 0), (0, 0, 1), name="hinge"))
    >>> drive = s.add_joint(nd.RotationDriver(hinge, lambda t: 2 * ca.pi * t))
    >>> drive.name
    'hinge_rotation'
    """

    kind = "rotation driver"
    joint_types = (Revolute, Cylindrical)
    axial = np.r_[0, 0, 1, 0, 0, 0]
    suffix = "rotation"
    motion_name = "angle"

    def __init__(self, joint: Joint, angle: float | Callable, name: str | None = None):
        super().__init__(joint, angle, name)

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, _ = self.joint._frames()
        fc = sc.vector(f)
        theta = self.motion_at(t)
        return _dot(fc, sp.vector(g)) * ca.cos(theta) - _dot(fc, sp.vector(f)) * ca.sin(theta)


class TranslationDriver(_Driver):
    """Prescribes the relative displacement s(t) (m) along a prismatic or cylindrical joint axis,
    measured from the initial configuration.

    Parameters
    ----------
    joint : Prismatic or Cylindrical
        The joint whose translation it prescribes (added to the system too).
    displacement : float or callable
        s (m): a number, or a function of t returning a CasADi scalar.
    name : str, optional
        Its name in results (default: ``<joint>_translation``).

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> cart = s.add_body("cart", mass=1.0, inertia=(1e-3, 1e-3, 1e-3))
    >>> rail = s.add_joint(nd.Prismatic(s.ground, cart, (0, 0, 0), (1, 0, 0), name="rail"))
    >>> drive = s.add_joint(nd.TranslationDriver(rail, lambda t: 0.1 * ca.sin(t)))
    >>> drive.name
    'rail_translation'
    """

    kind = "translation driver"
    joint_types = (Prismatic, Cylindrical)
    axial = np.r_[0, 0, 0, 0, 0, 1]
    suffix = "translation"
    motion_name = "displacement"

    def __init__(self, joint: Joint, displacement: float | Callable, name: str | None = None):
        super().__init__(joint, displacement, name)

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        pp, pc = self.joint._points(sp, sc)
        return _dot(pc - pp, sp.vector(self.joint.axis)) - self.motion_at(t)
