"""LuGre friction in ideal joints (seed 003, section 2.2.5, eqs. 19-22).

A joint's friction is mu f_n along its free coordinate: a torque mu f_n d/2 in a revolute
joint (``radius`` = d/2), a force mu f_n along the axis of a prismatic or cylindrical joint.
f_n is the joint's reaction perpendicular to its axis, |f - (f.a) a|, taken from the step's
own multipliers: the stepper re-solves the step until the f_n it assumed is the f_n the step
produces (``StepperSettings.friction_tol``), so the normal force is not lagged by a step.
The friction coefficient is the LuGre model's, with s the joint coordinate (rad or m)::

    mu = sigma0 z + sigma1 dz/dt + sigma2 ds/dt
    dz/dt = ds/dt - sigma0 |ds/dt| z / g(ds/dt),  g(u) = mu_k + (mu_s - mu_k) exp(-(u / u_S)^2)

(the normalised form of the seed: z in rad or m, sigma0 in 1/rad or 1/m). The bristle state z
is advanced by backward Euler with the end-of-step rate u, in closed form:
z1 = (z0 + h u) / (1 + h sigma0 |u| / g(u)), so stiff bristles (large sigma0) do not limit h;
the element is evaluated at the end of the step ("backward_euler"). At rest under a load F below
mu_s f_n the joint creeps to the presliding displacement z = F / (sigma0 f_n) and stays; in
steady sliding at speed u, mu = g(u) sgn(u) + sigma2 u (the Stribeck curve).

Memory (kept by the stepper, saved in the result): [z, h, f_n] of the step.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import as_number, is_number, number_problems, show
from ..joints.ideal import Cylindrical, Prismatic, Revolute
from .base import ForceElement
from .joint_coordinates import coordinate_wrenches, rotation_rate, translation_rate

if TYPE_CHECKING:
    from ..body import BodyState
    from ..joints.ideal import Joint
    from .._typing import Symbolic, Wrench
    from .joint_coordinates import Action


def _non_negative(value):
    return value >= 0


def _positive(value):
    return value > 0


class LuGreFriction(ForceElement):
    """LuGre friction along the free coordinate of a Revolute, Prismatic or Cylindrical joint.

    Parameters
    ----------
    joint : Revolute, Prismatic or Cylindrical
        The joint whose relative motion the friction opposes: rotation about the axis for a
        revolute joint, translation along the axis for the others.
    mu_static, mu_kinetic : float
        Static and kinetic (Coulomb) friction coefficients, mu_static >= mu_kinetic >= 0.
    stribeck_velocity : float
        u_S (> 0), rad/s for a revolute joint, m/s otherwise.
    sigma0, sigma1, sigma2 : float
        Bristle stiffness (> 0; 1/rad or 1/m), bristle damping and viscous coefficient
        (>= 0; s/rad or s/m), all per unit normal force.
    radius : float, optional
        d/2, the journal's radius (m): required for a revolute joint (torque mu f_n d/2),
        not used by the others.
    name : str, optional

    Examples
    --------
    A 1 kg block on a horizontal slide, pushed by 5 N against mu_s m g = 2.94 N, slides and
    accelerates at (F - mu_k m g) / m:

    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> b = s.add_body("block", 1.0, (1e-3, 1e-3, 1e-3))
    >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="slide"))
    >>> _ = s.add_force(nd.PointForce(b, force=(5.0, 0, 0)))
    >>> _ = s.add_force(nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0, name="f"))
    >>> res = nd.simulate(s, 0.5, h=1e-3, progress=False)
    >>> dv = res.velocity("block")[-1, 0] - res.velocity("block")[250, 0]
    >>> print(f"{dv / 0.25:.3f} m/s^2 (closed form {5 - 0.2 * 9.81:.3f})")
    3.038 m/s^2 (closed form 3.038)
    """

    kind = "LuGre friction"
    # the bristles advance by backward Euler in closed form over the step (``bristle_step``),
    # and the friction force with them: no stored energy to keep
    evaluation = "backward_euler"
    history_size = 3
    step_size_slot = 1      # memory entries the stepper sets each step: h and f_n
    normal_force_slot = 2
    joint_types = (Revolute, Prismatic, Cylindrical)

    def __init__(self, joint: Joint, mu_static: float, mu_kinetic: float,
                 stribeck_velocity: float, sigma0: float, sigma1: float, sigma2: float,
                 radius: float | None = None, name: str | None = None) -> None:
        self.joint = joint
        self.bodies = (joint.parent, joint.child) if hasattr(joint, "parent") else ()
        self.mu_static, self.mu_kinetic = as_number(mu_static), as_number(mu_kinetic)
        self.stribeck_velocity = as_number(stribeck_velocity)
        self.sigma0, self.sigma1, self.sigma2 = (as_number(sigma0), as_number(sigma1),
                                                 as_number(sigma2))
        self.radius = None if radius is None else as_number(radius)
        self.name = name

    @property
    def rotational(self) -> bool:
        """Whether the joint is a Revolute (a friction torque; else a force)."""
        return isinstance(self.joint, Revolute)

    def problems(self) -> list[str]:
        out = super().problems()
        if not isinstance(self.joint, self.joint_types):
            out.append(f"{self.label}: needs a Revolute, Prismatic or Cylindrical joint, got "
                       f"{type(self.joint).__name__}")
            return out
        lab = self.label
        out += number_problems(lab, "mu_kinetic", self.mu_kinetic, _non_negative, ">= 0")
        out += number_problems(lab, "mu_static", self.mu_static, _non_negative, ">= 0")
        if is_number(self.mu_static) and is_number(self.mu_kinetic) \
                and self.mu_static < self.mu_kinetic:
            out.append(f"{lab}: mu_static ({self.mu_static}) must be >= mu_kinetic "
                       f"({self.mu_kinetic})")
        out += number_problems(lab, "stribeck_velocity", self.stribeck_velocity, _positive, "> 0")
        out += number_problems(lab, "sigma0", self.sigma0, _positive, "> 0")
        for key in ("sigma1", "sigma2"):
            out += number_problems(lab, key, getattr(self, key), _non_negative, ">= 0")
        if self.rotational:
            out += number_problems(lab, "radius", self.radius, _positive, "> 0",
                                   " (the journal's radius d/2: friction torque mu f_n d/2)")
        elif self.radius is not None:
            out.append(f"{lab}: radius applies to a revolute joint only (got {show(self.radius)} "
                       f"for a {type(self.joint).__name__})")
        return out

    # ------------------------------------------------------------------ the law
    def slip(self, states: list[BodyState]) -> tuple[Symbolic, Action]:
        """(ds/dt, action) of the joint coordinate the friction opposes.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        rate : casadi scalar
            ds/dt (rad/s or m/s).
        action : tuple
            As :func:`~nlpdyn.forces.joint_stops.translation_rate`'s.

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("block", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> f = nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0)
        >>> sliding = BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                     ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), sliding]       # at 0.1 m/s
        >>> round(float(f.slip(states)[0]), 12)
        0.1
        """
        return (rotation_rate if self.rotational else translation_rate)(self.joint, states)

    def stribeck(self, u: Symbolic | float) -> Symbolic:
        """g(u) = mu_k + (mu_s - mu_k) exp(-(u / u_S)^2).

        Parameters
        ----------
        u : float or casadi scalar
            The slip rate (rad/s or m/s).

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
        >>> f = nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0)
        >>> float(f.stribeck(0.0)), float(f.stribeck(1.0))     # mu_s at rest, mu_k sliding
        (0.3, 0.2)
        """
        return self.mu_kinetic + (self.mu_static - self.mu_kinetic) * ca.exp(
            -(u / self.stribeck_velocity) ** 2)

    def bristle_step(self, z0: Symbolic | float, h: Symbolic | float,
                     u: Symbolic | float) -> tuple[Symbolic, Symbolic]:
        """(z1, dz/dt): backward Euler over h at the end-of-step rate u, closed form.

        Parameters
        ----------
        z0 : float or casadi scalar
            The bristle state at the start of the step (rad or m).
        h : float or casadi scalar
            The step (s).
        u : float or casadi scalar
            The slip rate at the end of the step.

        Returns
        -------
        z1, z_dot : casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("block", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> f = nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0)
        >>> z1, z_dot = f.bristle_step(0.0, 1e-3, 0.1)        # (h u, u) / (1 + 50)
        >>> round(float(z1) * 51, 12), round(float(z_dot) * 51, 12)
        (0.0001, 0.1)
        """
        stiff = self.sigma0 * ca.fabs(u) / self.stribeck(u)
        denominator = 1 + h * stiff
        return (z0 + h * u) / denominator, (u - stiff * z0) / denominator

    def coefficient(self, z0: Symbolic | float, h: Symbolic | float,
                    u: Symbolic | float) -> Symbolic:
        """mu of the step (eq. 22) with the bristles advanced to its end.

        Parameters
        ----------
        z0, h, u : float or casadi scalar
            As for :meth:`bristle_step`.

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
        >>> f = nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0)
        >>> round(float(f.coefficient(0.0, 1e-3, 0.1)), 9)     # (1e5 * 1e-4 + 300 * 0.1) / 51
        0.784313725
        """
        z1, z_dot = self.bristle_step(z0, h, u)
        return self.sigma0 * z1 + self.sigma1 * z_dot + self.sigma2 * u

    def generalized_force(self, states: list[BodyState], history: Symbolic) -> Symbolic:
        """The friction along +s on the child (N m or N): -mu f_n (d/2).

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        history : casadi column, shape (3, 1)
            The memory [z, h, f_n] of the step.

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
        >>> f = nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0)
        >>> sliding = BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                     ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), sliding]       # at 0.1 m/s
        >>> F = f.generalized_force(states, ca.DM([0.0, 1e-3, 9.81]))
        >>> round(float(F), 6)                                  # -mu f_n
        -7.694118
        """
        z0, h, f_n = history[0], history[1], history[2]
        u = self.slip(states)[0]
        lever = self.radius if self.rotational else 1.0
        return -self.coefficient(z0, h, u) * f_n * lever

    def normal_force(self, states: list[BodyState], reaction: Symbolic) -> Symbolic:
        """f_n = |f - (f.a) a| of the joint's reaction ``reaction`` (global, on the child).

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        reaction : casadi column, shape (3, 1)
            The joint's reaction force on the child (N, global).

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
        >>> f = nd.LuGreFriction(slide, 0.3, 0.2, 1e-3, 1e5, 300.0, 0.0)
        >>> sliding = BodyState(b, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                     ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), sliding]       # at 0.1 m/s
        >>> float(f.normal_force(states, ca.DM([4.0, 0, 9.81])))      # the part along x is free
        9.81
        """
        a = states[0].vector(self.joint.axis)
        return ca.norm_2(reaction - ca.dot(reaction, a) * a)

    # ------------------------------------------------------------------ ForceElement
    def wrenches(self, states: list[BodyState], t: Symbolic | float,
                 history: Symbolic | None = None) -> list[Wrench]:
        return coordinate_wrenches(states, self.generalized_force(states, history),
                                   self.slip(states)[1])

    def initial_history(self) -> np.ndarray:
        return np.zeros(3)

    def next_history(self, states: list[BodyState], t: Symbolic | float,
                     history: Symbolic) -> Symbolic:
        z1, _ = self.bristle_step(history[0], history[1], self.slip(states)[0])
        return ca.vertcat(z1, history[1], history[2])
