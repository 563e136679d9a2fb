"""Joint motion limits (stops) as force elements, seed 001 section 2.5, eqs. 51-53.

An ideal joint keeps its constraint equations; its free translation or rotation is limited
by a penalty force from a contact law once it leaves [lower, upper] (hard stops: the
clearance part of eq. 50 with the free range as the clearance). Reconstructed from the
seed's text, with i = parent, j = child, b_i the joint axis on the parent:

- eq. 51 (translation stop): f_i = f_ad(delta, delta_dot) u, f_j = -f_i, applied at the
  joint points, n'_k = s'_k~ A_k^T f_k;
- eq. 52 (rotation stop): f_i = f_j = 0, n'_i = f_ar(delta, delta_dot) A_i^T b_i,
  n'_j = -A_j^T A_i n'_i (equal and opposite moments about the axis);
- eq. 53 (cylindrical joint): the sum of both.

Here both bodies take the stop force at the child's joint point and the moment axis is the
exact gradient of the angle (b_i when the joint holds), so each stop is exactly the
generalised force -dV/dq of its law's potential V(delta) plus the law's damping.

A stop may sit on a clearance joint (``nlpdyn.joints.clearance``) or its penalty version
(``nlpdyn.forces.penalty_joints``): it then measures its nominal ideal joint's coordinate
(:func:`nominal_joint`), the same function of q, which stays exact while the bodies tilt
and shift within the play.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import as_number, is_number
from ..joints.base import check_unit
from ..joints.ideal import Cylindrical, Prismatic, Revolute
from .base import ForceElement, impact_memory, impact_memory_size
# the joint coordinate a stop measures, shared with friction
from .joint_coordinates import (_rotation_xy, coordinate_wrenches, nominal_joint, rotation_rate,
                                translation_rate)

if TYPE_CHECKING:
    from ..body import BodyState
    from ..joints.base import BilateralConstraint
    from .._typing import Law1D, Symbolic, Wrench
    from .law_base import ContactLaw


def _law_problems(owner, law):
    if not (callable(getattr(law, "force", None)) and callable(getattr(law, "problems", None))
            and hasattr(law, "potential")):
        return [(f"{owner}: law must be a contact law (force, potential, problems), "
                 f"got {type(law).__name__}")]
    return list(law.problems(owner))


class _JointStop(ForceElement):
    """Two one-sided contacts on a joint coordinate s (0 at the initial configuration):
    delta_lower = lower - s and delta_upper = s - upper (> 0 when penetrating)."""

    evaluation = "implicit"
    _damping_step = None
    is_contact = True
    joint_types: tuple = ()     # ideal joints; clearance joints count by their nominal joint
    unit = "m"

    def __init__(self, joint: BilateralConstraint | ForceElement, lower: float, upper: float,
                 law: ContactLaw, name: str | None = None) -> None:
        self.joint = joint
        self.lower, self.upper = as_number(lower), as_number(upper)
        self.law = law
        self.parent, self.child = getattr(joint, "parent", None), getattr(joint, "child", None)
        self.bodies = (self.parent, self.child) if hasattr(joint, "parent") else ()
        self.name = name

    @property
    def history_size(self) -> int:
        """``impact_memory_size(2)`` for laws that need the impact speed (rows 0 and 1: at the
        lower and the upper stop, see :func:`~nlpdyn.forces.base.impact_memory`), else 0."""
        return impact_memory_size(2) if getattr(self.law, "needs_impact_velocity", False) else 0

    @property
    def ideal_joint(self):
        """The ideal joint whose coordinate the stop measures (:func:`nominal_joint`)."""
        return nominal_joint(self.joint)

    # ------------------------------------------------------------------ validation
    @property
    def damping_step(self) -> str:
        """Where the law's damping acts (``ForceElement.damping_step``): as set, else the
        law's default (``ContactLaw.damping_step``: "split", "whole" for the modified
        Kelvin-Voigt law)."""
        return self._damping_step or getattr(self.law, "damping_step", "split")

    @damping_step.setter
    def damping_step(self, value):
        self._damping_step = value

    def problems(self) -> list[str]:
        out = super().problems()
        ideal = self.ideal_joint
        if not isinstance(ideal, self.joint_types):
            names = " or ".join(t.__name__ for t in self.joint_types)
            out.append(f"{self.label}: needs a {names} joint (ideal, clearance or penalty "
                       f"clearance), got {type(self.joint).__name__}")
        else:
            out += check_unit(ideal.axis, "the joint's axis", self.label) \
                if ideal.axis is not None else [f"{self.label}: the joint has no axis"]
        if not (is_number(self.lower) and is_number(self.upper)):
            out.append(f"{self.label}: lower and upper must be finite numbers, got "
                       f"{self.lower!r} and {self.upper!r}")
        elif not self.lower < self.upper:
            out.append(f"{self.label}: lower ({self.lower}) must be < upper ({self.upper})")
        elif not self.lower <= 0 <= self.upper:
            out.append(f"{self.label}: the initial configuration (0 {self.unit}) must lie in "
                       f"[lower, upper] = [{self.lower}, {self.upper}]; the coordinate is "
                       "measured from it")
        out += _law_problems(self.label, self.law)
        return out

    # ------------------------------------------------------------------ coordinate
    def coordinate(self, states: list[BodyState]) -> Symbolic:
        """The joint coordinate s (m or rad), 0 in the initial configuration.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> float(stop.coordinate(states))
        0.012
        """
        raise NotImplementedError

    def _rate_and_direction(self, states):
        """(ds/dt, action): ds/dt and, for a generalised force F along s, the (force, moment,
        point) applied to the child, global (the parent takes the opposite)."""
        raise NotImplementedError

    def penetrations(self, states: list[BodyState]) -> Symbolic:
        """[lower - s, s - upper]; > 0 beyond a stop.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        casadi column, shape (2, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> stop.penetrations(states).full().ravel().round(12).tolist()
        [-0.022, 0.002]
        """
        s = self.coordinate(states)
        return ca.vertcat(self.lower - s, s - self.upper)

    def penetration_rates(self, states: list[BodyState]) -> Symbolic:
        """d/dt of :meth:`penetrations`.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        casadi column, shape (2, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> stop.penetration_rates(states).full().ravel().tolist()
        [-0.1, 0.1]
        """
        rate = self._rate_and_direction(states)[0]
        return ca.vertcat(-rate, rate)

    def stop_forces(self, states: list[BodyState], history: Symbolic | None = None) -> Symbolic:
        """[lower, upper] stop force (N) or moment (N m) magnitudes >= 0.

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        history : casadi column, shape (2, 1), optional
            The impact velocities [lower, upper] (only for laws that need them).

        Returns
        -------
        casadi column, shape (2, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> stop.stop_forces(states).full().ravel().round(6).tolist()     # 1e6 (2e-3)^1.5
        [0.0, 89.442719]
        """
        delta, rate = self.penetrations(states), self.penetration_rates(states)
        if history is None:
            history = ca.DM.zeros(2)
        out = []
        for k in range(2):
            if self.history_size:
                f = self.law.force(delta[k], rate[k], history[k])
            else:
                f = self.law.force(delta[k], rate[k])
            out.append(ca.if_else(delta[k] > 0, ca.fmax(f, 0), 0))
        return ca.vertcat(*out)

    def generalized_force(self, states: list[BodyState],
                          history: Symbolic | None = None) -> Symbolic:
        """F = f_lower - f_upper: the load along +s on the child (N or N m).

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        history : casadi column, shape (2, 1), optional
            As for :meth:`stop_forces`.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> round(float(stop.generalized_force(states)), 6)       # pushes back
        -89.442719
        """
        f = self.stop_forces(states, history)
        return f[0] - f[1]

    # ------------------------------------------------------------------ ForceElement
    def wrenches(self, states: list[BodyState], t: Symbolic | float,
                 history: Symbolic | None = None) -> list[Wrench]:
        return coordinate_wrenches(states, self.generalized_force(states, history),
                                   self._rate_and_direction(states)[1])

    def initial_history(self) -> np.ndarray:
        return np.zeros(self.history_size)

    def start_history(self, states: list[BodyState], t: Symbolic | float,
                      history: Symbolic) -> Symbolic:
        return self.next_history(states, t, history)

    def next_history(self, states: list[BodyState], t: Symbolic | float,
                     history: Symbolic) -> Symbolic:
        if not self.history_size:
            return history
        return impact_memory(self.penetrations(states), self.penetration_rates(states), t,
                             history)

    def potential_terms(self, states: list[BodyState], t: Symbolic | float,
                        history: Symbolic | None = None) -> list[tuple[Symbolic, Law1D]]:
        """[(s, V)]: V(s) = law.elastic_potential of the penetration beyond either stop (with
        each stop's remembered impact speed, for laws that need it).

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.
        t : float or casadi.SX
            Time (unused).
        history : casadi column, shape (2, 1), optional
            The element's memory (impact speeds).

        Returns
        -------
        list of (casadi scalar, callable)
            One pair: the coordinate and the energy stored at it.

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> [(c, V)] = stop.potential_terms(states, 0.0)
        >>> round(float(V(c)), 9)                              # 1e6 (2e-3)^2.5 / 2.5
        0.071554175
        """
        law, lower, upper = self.law, self.lower, self.upper
        v_imp = [None, None] if not self.history_size or history is None else [history[0],
                                                                                history[1]]

        def stored(s):
            return (law.elastic_potential(ca.fmax(lower - s, 0), v_imp[0])
                    + law.elastic_potential(ca.fmax(s - upper, 0), v_imp[1]))
        return [(self.coordinate(states), stored)]


class TranslationStop(_JointStop):
    """Limits on the translation of a Prismatic or Cylindrical joint along its axis (eq. 51).

    s = (x_c - x_p) . a_p, with x_p, x_c the parent's and the child's material points that
    start at the joint point and a_p the joint axis carried by the parent (s = 0 in the
    initial configuration). Beyond [lower, upper] the law's force f(delta, delta_dot) acts
    along a_p at x_c: on the child towards the range, on the parent the reaction.

    Parameters
    ----------
    joint : Prismatic or Cylindrical, or a clearance joint whose nominal joint is one
        ``PrismaticClearance``, ``CylindricalClearance`` or their penalty versions: s is then
        measured with the nominal joint's point and axis (:func:`nominal_joint`), the
        displacement along the parent's axis however the child tilts or shifts in the play.
    lower, upper : float
        Stop positions (m), lower < 0 < upper (or = 0: touching initially).
    law : ContactLaw
        Normal force law of the penetration (Hertz, LankaraniNikravesh, ModifiedKelvinVoigt,
        ...). Laws that need the impact velocity get it from the element's memory (one per
        stop, kept by ``impact_memory``).
    name : str, optional

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3), velocity=(1, 0, 0))
    >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
    >>> stop = s.add_force(TranslationStop(slide, -0.01, 0.001, nd.Hertz(1e6), name="stop"))
    >>> res = nd.simulate(s, 0.02, h=1e-4, progress=False)
    >>> x = res.position("slider")[:, 0]     # Hertz: (5 m v^2 / 4 k)^(2/5) = 4.36 mm, elastic
    >>> print(f"{1e3 * (x.max() - 0.001):.1f} mm in, leaves at {res.velocity('slider')[-1, 0]:.2f} m/s")
    4.4 mm in, leaves at -1.00 m/s
    """

    kind = "translation stop"
    joint_types = (Prismatic, Cylindrical)

    def displacement(self, states: list[BodyState]) -> Symbolic:
        """s (m): the translation along the joint axis (the class docstring).

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> stop = TranslationStop(slide, -0.01, 0.01, nd.Hertz(1e6, 1.5))
        >>> moved = BodyState(b, ca.DM([0.012, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]     # 2 mm beyond the upper stop
        >>> float(stop.displacement(states))
        0.012
        """
        sp, sc = states
        joint = self.ideal_joint
        return ca.dot(sc.point(joint.point) - sp.point(joint.point), sp.vector(joint.axis))

    coordinate = displacement

    def _rate_and_direction(self, states):
        return translation_rate(self.ideal_joint, states)


class RotationStop(_JointStop):
    """Limits on the rotation of a Revolute or Cylindrical joint about its axis (eq. 52).

    theta = atan2(g_p . f_c, f_p . f_c) with (f, g, axis) the joint's orthonormal triad,
    f_p, g_p carried by the parent and f_c by the child: 0 in the initial configuration,
    positive for a right-handed rotation of the child about the axis, exact in (-pi, pi)
    (and along the joint's whole motion, not only near the stops). Beyond [lower, upper]
    the law (moment per radian of penetration, N m) acts as equal and opposite moments
    about n = f_c x (x g_p - y f_p) / (x^2 + y^2), x = f_p . f_c, y = g_p . f_c, which is
    the joint axis while the joint holds and in general d theta = (w_c - w_p) . n dt.

    On a clearance joint theta is the same function of q with the nominal joint's triad: the
    angle of f_c, projected on the plane normal to the parent's axis a_p, from f_p. It needs
    no joint to hold: a tilt beta of the child's axis within the play changes it by at most
    atan((1 - cos beta) / (2 sqrt(cos beta))) ~ beta^2 / 4 (by nothing when the tilt is about
    f_c).

    Parameters
    ----------
    joint : Revolute or Cylindrical, or a clearance joint whose nominal joint is one
        ``RevoluteClearance``, ``CylindricalClearance`` or their penalty versions
        (:func:`nominal_joint`).
    lower, upper : float
        Stop angles (rad), -pi < lower <= 0 <= upper < pi.
    law : ContactLaw
        As for :class:`TranslationStop`, with delta in rad and delta_dot in rad/s.
    name : str, optional

    Examples
    --------
    A wheel (J = 0.01 kg m^2) turning at 2 rad/s in a revolute clearance joint (no gravity)
    meets an elastic stop 0.02 rad ahead and turns back at the speed it came:

    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> w = s.add_body("wheel", 1.0, (0.01, 0.01, 0.01), angular_velocity=(0, 0, 2.0))
    >>> pin = s.add_joint(nd.RevoluteClearance(s.ground, w, (0, 0, 0), (0, 0, 1), 0.01,
    ...                                        1e-4, 0.02, 1e-4, name="pin"))
    >>> stop = s.add_force(RotationStop(pin, -0.5, 0.02, nd.Hertz(50.0), name="stop"))
    >>> res = nd.simulate(s, 0.15, h=1e-3, progress=False)
    >>> print(f"{res.angular_velocity('wheel')[-1, 2]:.3f} rad/s")
    -2.000 rad/s
    """

    kind = "rotation stop"
    joint_types = (Revolute, Cylindrical)
    unit = "rad"

    def angle(self, states: list[BodyState]) -> Symbolic:
        """theta (rad): the rotation about the joint axis (the class docstring).

        Parameters
        ----------
        states : list of BodyState
            [parent, child] of the joint.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> w = s.add_body("wheel", 1.0, (0.01, 0.01, 0.01))
        >>> hinge = s.add_joint(nd.Revolute(s.ground, w, (0, 0, 0), (0, 0, 1)))
        >>> stop = RotationStop(hinge, -0.05, 0.05, nd.Hertz(50.0, 1.0))
        >>> turned = BodyState(w, ca.DM.zeros(3), ca.DM(from_axis_angle((0, 0, 1), 0.1)),
        ...                    ca.DM.zeros(3), ca.DM([0, 0, 2.0]))
        >>> states = [ground_state(s.ground), turned]    # 0.1 rad, turning at 2 rad/s
        >>> round(float(stop.angle(states)), 12)
        0.1
        """
        x, y, *_ = _rotation_xy(self.ideal_joint, states)
        return ca.atan2(y, x)

    coordinate = angle

    def _rate_and_direction(self, states):
        return rotation_rate(self.ideal_joint, states)

    def problems(self) -> list[str]:
        out = super().problems()
        if is_number(self.lower) and is_number(self.upper) and \
                (self.lower <= -np.pi or self.upper >= np.pi):
            out.append(f"{self.label}: limits must lie in (-pi, pi) rad, got "
                       f"[{self.lower}, {self.upper}]")
        return out
