"""A joint's viscous damping and its friction of given magnitude (URDF's ``<dynamics>``).

Both act along the free coordinate s of a Revolute, Prismatic or Cylindrical joint (ideal,
clearance or penalty clearance, measured on its nominal joint: rotation about the axis for a
revolute joint, translation along it for the others), as a generalised force F on the child
and -F on the parent:

- :class:`JointDamper`: F = -c ds/dt;
- :class:`JointFriction`: friction of magnitude F_c while sliding, whatever the joint's load,
  as URDF's ``friction`` and MuJoCo's ``frictionloss`` are
  (:class:`~nlpdyn.forces.friction.LuGreFriction`'s follows the joint's normal force
  instead): Coulomb's law with sgn(u)
  smoothed over a creep velocity u_c (F = -F_c u / sqrt(u^2 + u_c^2): a joint loaded below
  F_c creeps at a rate ~u_c), or LuGre's bristles (``sigma0`` given: a joint loaded below F_c
  creeps to a presliding displacement and stays).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import as_number, is_number, number_problems
from ..joints.ideal import Cylindrical, Prismatic, Revolute
from .base import ForceElement
from .friction import LuGreFriction
from .joint_coordinates import coordinate_wrenches, nominal_joint, rotation_rate, translation_rate

if TYPE_CHECKING:
    from ..body import BodyState
    from ..joints.base import BilateralConstraint
    from .._typing import Symbolic, Wrench
    from .joint_coordinates import Action

__all__ = ["JointDamper", "JointFriction"]

JOINT_TYPES = (Revolute, Prismatic, Cylindrical)


class _CoordinateForce(ForceElement):
    """A generalised force along a joint's free coordinate (the shared part)."""

    def __init__(self, joint, name):
        self.joint = joint
        self.bodies = (joint.parent, joint.child) if hasattr(joint, "parent") else ()
        self.name = name

    @property
    def ideal_joint(self):
        """The ideal joint whose coordinate the element measures (:func:`nominal_joint`)."""
        return nominal_joint(self.joint)

    @property
    def rotational(self) -> bool:
        """Whether the coordinate is a rotation (a Revolute joint: a torque; else a force)."""
        return isinstance(self.ideal_joint, Revolute)

    def _joint_problems(self):
        if isinstance(self.ideal_joint, JOINT_TYPES):
            return []
        return [f"{self.label}: needs a Revolute, Prismatic or Cylindrical joint (ideal, "
                f"clearance or penalty clearance), got {type(self.joint).__name__}"]

    def slip(self, states: list[BodyState]) -> tuple[Symbolic, Action]:
        """(ds/dt, action) of the coordinate, as :meth:`LuGreFriction.slip
        <nlpdyn.forces.friction.LuGreFriction.slip>`.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        rate : casadi scalar
        action : tuple of 3 casadi columns

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
        >>> round(float(nd.JointDamper(hinge, 0.5).slip([ground_state(s.ground), turning])[0]), 12)
        2.0
        """
        return (rotation_rate if self.rotational else translation_rate)(self.ideal_joint, states)

    def wrenches(self, states: list[BodyState], t: Symbolic | float,
                 history: Symbolic | None = None) -> list[Wrench]:
        return coordinate_wrenches(states, self.generalized_force(states, history),
                                   self.slip(states)[1])


class JointDamper(_CoordinateForce):
    """A viscous damper along a joint's free coordinate: F = -c ds/dt.

    Parameters
    ----------
    joint : Revolute, Prismatic or Cylindrical
        The joint (ideal, clearance or penalty clearance: measured on its nominal joint).
    damping : float
        c (>= 0): N m s/rad for a revolute joint, N s/m otherwise.
    name : str, optional

    Notes
    -----
    Evaluated inside the step (``evaluation="implicit"``): the trapezoidal rule in ds/dt,
    second order, its loss the element's work column in
    :meth:`~nlpdyn.Result.energy_ledger`. A damper with h c / I >> 1 (I: what the joint
    moves) then alternates in sign from step to step; ``evaluation="backward_euler"`` (the
    rate at the end of the step, first order) damps it out within the step.

    Examples
    --------
    A wheel spinning at 2 rad/s about a damped axle slows as exp(-c t / I):

    >>> import numpy as np
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> w = s.add_body("wheel", 1.0, (0.01, 0.01, 0.01), angular_velocity=(0, 0, 2.0))
    >>> axle = s.add_joint(nd.Revolute(s.ground, w, (0, 0, 0), (0, 0, 1), name="axle"))
    >>> _ = s.add_force(nd.JointDamper(axle, 0.01, name="axle_damping"))
    >>> res = nd.simulate(s, 0.5, h=1e-3, progress=False)
    >>> print(f"{res.angular_velocity('wheel')[-1, 2]:.4f} (closed form {2 * np.exp(-0.5):.4f})")
    1.2131 (closed form 1.2131)
    """

    kind = "joint damper"
    evaluation = "implicit"

    def __init__(self, joint: BilateralConstraint | ForceElement, damping: float,
                 name: str | None = None) -> None:
        super().__init__(joint, name)
        self.damping = as_number(damping)

    def problems(self) -> list[str]:
        return (super().problems() + self._joint_problems()
                + number_problems(self.label, "damping", self.damping, lambda x: x >= 0, ">= 0"))

    def generalized_force(self, states: list[BodyState],
                          history: Symbolic | None = None) -> Symbolic:
        """The damping along +s on the child (N m or N): -c ds/dt.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        history : None
            (no memory)

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("block", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0))
        >>> moving = BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM([0.3, 0, 0]),
        ...                    ca.DM.zeros(3))
        >>> float(nd.JointDamper(slide, 2.0).generalized_force([ground_state(s.ground), moving]))
        -0.6
        """
        return -self.damping * self.slip(states)[0]


class JointFriction(_CoordinateForce):
    """Friction of given magnitude along a joint's free coordinate (Coulomb or LuGre).

    Coulomb (``sigma0`` None, the default): F = -F_c (g(u) u / sqrt(u^2 + u_c^2) + sigma2 u),
    u = ds/dt, g(u) = 1 + (F_s / F_c - 1) exp(-(u / u_S)^2) (the Stribeck curve; g = 1 when
    F_s = F_c). Under a load F < F_s it creeps at u = u_c F / sqrt(F_s^2 - F^2) (u_c << u_S).

    LuGre (``sigma0`` given): F = -F_c mu, mu = sigma0 z + sigma1 dz/dt + sigma2 u, with the
    bristle state z of :class:`~nlpdyn.forces.friction.LuGreFriction` (mu_k = 1,
    mu_s = F_s / F_c); in steady sliding the same curve as Coulomb's, at rest under a load
    F < F_s a presliding displacement z = F / (sigma0 F_c).

    Parameters
    ----------
    joint : Revolute, Prismatic or Cylindrical
        The joint (ideal, clearance or penalty clearance: measured on its nominal joint).
    friction : float
        F_c (> 0): the sliding friction, N m for a revolute joint, N otherwise (URDF's
        ``<dynamics friction>``).
    static_friction : float, optional
        F_s (>= F_c): the breakaway friction (default F_c: no Stribeck effect).
    stribeck_velocity : float
        u_S (> 0; rad/s or m/s), used when F_s > F_c.
    sigma0 : float, optional
        Bristle stiffness per unit friction (> 0; 1/rad or 1/m): LuGre's law. None:
        Coulomb's.
    sigma1, sigma2 : float
        Bristle damping (LuGre only) and viscous coefficient, per unit friction (>= 0;
        s/rad or s/m).
    creep_velocity : float
        u_c (> 0; rad/s or m/s): Coulomb's smoothing of sgn(u).
    name : str, optional

    Notes
    -----
    Evaluated at the end of the step (``evaluation="backward_euler"``; LuGre's bristles
    advanced by backward Euler in closed form), so neither the steep sgn(u) nor stiff
    bristles limit h. Memory (kept by the stepper, saved in the result): [z, h] of the step
    (z stays 0 with Coulomb's law). Undamped bristles (``sigma1`` = 0) overshoot a suddenly
    applied load and let the joint slip (drift) under loads below F_s; a critically damped
    bristle has sigma1 = 2 sqrt(sigma0 m / F_c) for a moving mass (or inertia) m.

    Examples
    --------
    A 1 kg slider with 2 N of friction, pushed by 1.5 N, creeps at 1e-4 1.5 / sqrt(2^2 -
    1.5^2) m/s; pushed by 5 N it slides and accelerates at (5 - 2) / 1:

    >>> import nlpdyn as nd
    >>> def pushed(force):
    ...     s = nd.System(gravity=(0, 0, 0))
    ...     b = s.add_body("block", 1.0, (1e-3, 1e-3, 1e-3))
    ...     slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="slide"))
    ...     _ = s.add_force(nd.PointForce(b, force=(force, 0, 0)))
    ...     _ = s.add_force(nd.JointFriction(slide, 2.0, name="slide_friction"))
    ...     return nd.simulate(s, 0.5, h=1e-3, progress=False).position("block")[-1, 0]
    >>> creep, slide = 1e-4 * 1.5 / (2**2 - 1.5**2) ** 0.5 * 0.5, 3 * 0.5**2 / 2
    >>> print(f"{pushed(1.5) * 1e3:.4f} mm, {pushed(5.0):.4f} m")
    0.0566 mm, 0.3750 m
    >>> print(f"closed form {creep * 1e3:.4f} mm, {slide:.4f} m")
    closed form 0.0567 mm, 0.3750 m
    """

    kind = "joint friction"
    evaluation = "backward_euler"
    history_size = 2
    step_size_slot = 1      # the memory entry the stepper sets to the step's h

    def __init__(self, joint: BilateralConstraint | ForceElement, friction: float,
                 static_friction: float | None = None, stribeck_velocity: float = 0.01,
                 sigma0: float | None = None, sigma1: float = 0.0, sigma2: float = 0.0,
                 creep_velocity: float = 1e-4, name: str | None = None) -> None:
        super().__init__(joint, name)
        self.friction = as_number(friction)
        self.static_friction = self.friction if static_friction is None \
            else as_number(static_friction)
        self.stribeck_velocity = as_number(stribeck_velocity)
        self.sigma0 = None if sigma0 is None else as_number(sigma0)
        self.sigma1, self.sigma2 = as_number(sigma1), as_number(sigma2)
        self.creep_velocity = as_number(creep_velocity)

    def problems(self) -> list[str]:
        out = super().problems() + self._joint_problems()
        lab = self.label
        out += number_problems(lab, "friction", self.friction, lambda x: x > 0, "> 0")
        out += number_problems(lab, "static_friction", self.static_friction,
                               lambda x: x > 0, "> 0")
        if is_number(self.friction) and is_number(self.static_friction) \
                and self.static_friction < self.friction:
            out.append(f"{lab}: static_friction ({self.static_friction}) must be >= friction "
                       f"({self.friction})")
        out += number_problems(lab, "stribeck_velocity", self.stribeck_velocity,
                               lambda x: x > 0, "> 0")
        if self.sigma0 is not None:
            out += number_problems(lab, "sigma0", self.sigma0, lambda x: x > 0, "> 0")
        out += number_problems(lab, "creep_velocity", self.creep_velocity, lambda x: x > 0,
                               "> 0")
        for key in ("sigma1", "sigma2"):
            out += number_problems(lab, key, getattr(self, key), lambda x: x >= 0, ">= 0")
        return out

    def _bristles(self) -> LuGreFriction:
        """The LuGre law per unit friction on the nominal joint (the bristles' algebra)."""
        return LuGreFriction(self.ideal_joint, self.static_friction / self.friction, 1.0,
                             self.stribeck_velocity, self.sigma0 or 1.0, self.sigma1, self.sigma2,
                             radius=1.0 if self.rotational else None)

    def generalized_force(self, states: list[BodyState], history: Symbolic) -> Symbolic:
        """The friction along +s on the child (N m or N): -F_c mu.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        history : casadi column, shape (2, 1)
            The memory [z, h] of the step.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("block", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> f = nd.JointFriction(slide, 2.0, sigma0=1e5)              # LuGre
        >>> sliding = BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                     ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), sliding]       # at 0.1 m/s, from z = 0
        >>> round(float(f.generalized_force(states, ca.DM([0.0, 1e-3]))), 9)  # -2 (10 / 11)
        -1.818181818
        """
        u = self.slip(states)[0]
        law = self._bristles()
        if self.sigma0 is None:         # Coulomb: the steady LuGre curve, sgn(u) smoothed
            sign = u / ca.sqrt(u**2 + self.creep_velocity**2)
            return -self.friction * (law.stribeck(u) * sign + self.sigma2 * u)
        return -self.friction * law.coefficient(history[0], history[1], u)

    def initial_history(self) -> np.ndarray:
        return np.zeros(2)

    def next_history(self, states: list[BodyState], t: Symbolic | float,
                     history: Symbolic) -> Symbolic:
        if self.sigma0 is None:
            return history
        z1, _ = self._bristles().bristle_step(history[0], history[1], self.slip(states)[0])
        return ca.vertcat(z1, history[1])
