"""Interface of a force element (a forcing term Q_A of docs/FORMULATION.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..body import BodyState
from ..joints.base import Element

if TYPE_CHECKING:
    from .._typing import Symbolic, Wrench

EVALUATIONS = ("explicit", "implicit", "backward_euler")
DAMPING_STEPS = ("split", "whole")


class ForceElement(Element):
    """A force law acting on ``bodies``.

    ``wrenches(states, t, history)`` returns one (f, n') pair per body: the force in the global
    frame and the moment about the centre of mass in the body frame, as CasADi expressions of
    the states (positions and velocities), t and the element's memory. ``potential_terms``
    writes the stored energy as a sum of scalar laws of scalar coordinates, V = sum_i
    V_i(s_i(q)) (what the energy-consistent evaluation needs); ``potential_energy`` is that sum,
    None where the element stores no energy. The elastic part of the wrenches must be -dV/dq;
    the rest (damping, hysteresis, loads) is the element's own, non-conservative work.

    Memory (``history_size`` > 0): values a law needs from the past, such as the impact
    velocity of a Lankarani-Nikravesh contact. The stepper keeps them per element, passes
    them to ``wrenches`` as a CasADi column and, after every accepted step, replaces them by
    ``next_history(states, t, history)`` evaluated at the end of that step.

    ``evaluation`` says how the stepper evaluates the law:

    - "explicit": at the start of the step;
    - "implicit": inside the step program, energy-consistent (stable for stiff laws and free
      of numerical dissipation): the stored energy by its discrete gradient between the start
      and the end of the step (``nlpdyn.discrete_gradient``), the rest at the step's midpoint,
      each step's impulse split half into the step and half into the next one (the
      semi-implicit Euler step's velocity is then the midpoint velocity of an energy-
      conserving scheme);
    - "backward_euler": at the (unknown) end of the step, inside the step program: stable,
      and dissipates ~ h k dx^2 per step of a spring's energy (numerical damping, for those
      who want it).

    Each class sets its default from measurements; users may override it per instance.

    ``damping_step`` says where an "implicit" element's damping (the law's part beyond its
    stored energy, at the step's midpoint) acts:

    - "split": like the stored energy's force, half in this step's impulse and half in the
      next one's; the element's energy balance is then exact on the nodal velocities (the
      loss is its own work column at any h), trapezoidal in the damping (a damper that
      stops the motion within a step, h c / m >> 1, rings instead);
    - "whole": all in this step (L-stable in the damping: a stiff damper resists in the step
      it is loaded); the loss then differs from the work column by ~ h c / (2 m) of it.

    Joint stops take their law's default (``ContactLaw.damping_step``: "split", "whole" for
    the modified Kelvin-Voigt law, whose loading branch is a stiff damper); the other
    elements "whole": viscous ones (bushings, the flexible links' sections) may be stiff
    dampers, and a penalty joint in sustained contact has a hysteresis damping that grows
    as its impact velocity shrinks (measured on the stops so far).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
    >>> push = s.add_force(nd.PointForce(ball, force=(1.0, 0, 0)))
    >>> isinstance(push, nd.ForceElement), push.evaluation, push.history_size
    (True, 'explicit', 0)
    """

    kind = "force"
    evaluation = "explicit"
    damping_step = "whole"
    #: a contact (stops, penalty clearance joints, the range-of-motion cone): stiff only
    #: while it is closed, and shortened steps resolve it (``StepperSettings.contact_resolution``)
    is_contact = False
    history_size = 0

    @property
    def loading_stiffness_ratio(self) -> float:
        """How much stiffer its law loads an impact than its stored energy says (its
        ``law``'s ``ContactLaw.loading_stiffness_ratio``; 1 without one; penalty joints: the
        largest of their contacts' laws').

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System(gravity=(0, 0, 0))
        >>> b = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3))
        >>> slide = s.add_joint(nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
        >>> law = nd.ModifiedKelvinVoigt(1e5, restitution=0.25)
        >>> nd.TranslationStop(slide, -0.01, 0.01, law).loading_stiffness_ratio
        4.0
        """
        return getattr(getattr(self, "law", None), "loading_stiffness_ratio", 1.0)

    def wrenches(self, states: list[BodyState], t: float | Symbolic,
                 history: Symbolic | None = None) -> list[Wrench]:
        """The element's wrench on each of its bodies: (f, n'), the force (global) and the
        moment about the centre of mass (body frame), CasADi expressions of the states.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order (CasADi symbols, or numbers).
        t : float or CasADi scalar
            Time (s).
        history : CasADi column or ndarray, shape (history_size,), optional
            The element's memory (None for an element without one).

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import ground_state
        >>> s = nd.System()
        >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> spring = nd.SpringDamper(s.ground, (0, 0, 1.0), ball, (0, 0, 0), stiffness=100.0,
        ...                          free_length=0.5)
        >>> states = [ground_state(s.ground), nd.BodyState(ball, np.zeros(3),
        ...           np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))]
        >>> [f for f, n in spring.wrenches(states, 0.0)]   # stretched by 0.5 m: 50 N
        [DM([0, 0, -50]), DM([-0, -0, 50])]
        """
        raise NotImplementedError

    def potential_terms(self, states: list[BodyState], t: float | Symbolic,
                        history: Symbolic | None = None) -> list:
        """The stored energy as [(s_i, V_i)]: scalar coordinates s_i (CasADi scalars of the
        states) and callables V_i (a CasADi scalar -> its energy), V = sum_i V_i(s_i); [] when
        the element stores none. ``history``: the element's memory (a law's elastic part may
        depend on it: Lankarani-Nikravesh's without an impact). Kinks of V_i (a contact
        closing) are met exactly by the energy-consistent evaluation; s_i should be smooth in
        the positions.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order (CasADi symbols, or numbers).
        t : float or CasADi scalar
            Time (s).
        history : CasADi column or ndarray, shape (history_size,), optional
            The element's memory (None for an element without one).

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import ground_state
        >>> s = nd.System()
        >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> spring = nd.SpringDamper(s.ground, (0, 0, 1.0), ball, (0, 0, 0), stiffness=100.0,
        ...                          free_length=0.5)
        >>> states = [ground_state(s.ground), nd.BodyState(ball, np.zeros(3),
        ...           np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))]
        >>> (s_1, V_1), = spring.potential_terms(states, 0.0)    # its length, its energy
        >>> float(s_1), float(V_1(s_1))
        (1.0, 12.5)
        """
        return []

    def potential_energy(self, states: list[BodyState], t: float | Symbolic,
                         history: Symbolic | None = None) -> Symbolic | None:
        """sum_i V_i(s_i) of :meth:`potential_terms`, or None when there are none.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order (CasADi symbols, or numbers).
        t : float or CasADi scalar
            Time (s).
        history : CasADi column or ndarray, shape (history_size,), optional
            The element's memory (None for an element without one).

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import ground_state
        >>> s = nd.System()
        >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> spring = nd.SpringDamper(s.ground, (0, 0, 1.0), ball, (0, 0, 0), stiffness=100.0,
        ...                          free_length=0.5)
        >>> states = [ground_state(s.ground), nd.BodyState(ball, np.zeros(3),
        ...           np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))]
        >>> spring.potential_energy(states, 0.0)       # 100 x 0.5^2 / 2 (J)
        DM(12.5)
        """
        terms = self.potential_terms(states, t, history)
        if not terms:
            return None
        return sum((V(s) for s, V in terms), ca.DM(0))

    def initial_history(self) -> np.ndarray:
        """The element's memory at the start of a run, shape (history_size,) (zeros by
        default).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> ball = nd.System().add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> nd.PointForce(ball, force=(1.0, 0, 0)).initial_history()
        array([], dtype=float64)
        """
        return np.zeros(self.history_size)

    def next_history(self, states: list[BodyState], t: float | Symbolic,
                     history: Symbolic) -> Symbolic:
        """The memory at the end of a step from ``history`` at its start (an element with
        memory says how it evolves). Default: ``history``.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order (CasADi symbols, or numbers).
        t : float or CasADi scalar
            Time (s).
        history : CasADi column or ndarray, shape (history_size,)
            The element's memory at the start of the step.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import ground_state
        >>> s = nd.System()
        >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> spring = nd.SpringDamper(s.ground, (0, 0, 1.0), ball, (0, 0, 0), stiffness=100.0,
        ...                          free_length=0.5)
        >>> states = [ground_state(s.ground), nd.BodyState(ball, np.zeros(3),
        ...           np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))]
        >>> spring.next_history(states, 0.0, np.zeros(0))    # a spring keeps none
        array([], dtype=float64)
        """
        return history

    def start_history(self, states: list[BodyState], t: float | Symbolic,
                      history: Symbolic) -> Symbolic:
        """The memory at a start state (a run's first, or one set with ``Stepper.set_state``)
        from ``history`` (:meth:`initial_history`): what the state itself shows of it (a
        contact open at the start remembers its approach rate, so an impact in the first step
        has its speed). Default: ``history``.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order (CasADi symbols, or numbers).
        t : float or CasADi scalar
            Time (s).
        history : CasADi column or ndarray, shape (history_size,)
            The element's initial memory.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import ground_state
        >>> s = nd.System()
        >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> spring = nd.SpringDamper(s.ground, (0, 0, 1.0), ball, (0, 0, 0), stiffness=100.0,
        ...                          free_length=0.5)
        >>> states = [ground_state(s.ground), nd.BodyState(ball, np.zeros(3),
        ...           np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3))]
        >>> spring.start_history(states, 0.0, spring.initial_history())
        array([], dtype=float64)
        """
        return history

    def problems(self) -> list[str]:
        out = super().problems()
        if self.evaluation not in EVALUATIONS:
            out.append(f"{self.label}: evaluation must be one of {EVALUATIONS}, got {self.evaluation!r}")
        if self.damping_step not in DAMPING_STEPS:
            out.append(f"{self.label}: damping_step must be one of {DAMPING_STEPS}, got "
                       f"{self.damping_step!r}")
        return out


def point_wrench(state: BodyState, s_local, force_global):
    """(f, n') of a force applied at body point s': n' = s'~ A^T f."""
    return force_global, ca.cross(ca.DM(s_local), state.A.T @ force_global)


def moment_wrench(state: BodyState, moment_global):
    """(f, n') of a pure moment given in the global frame."""
    return ca.DM.zeros(3), state.A.T @ moment_global


def impact_memory_size(n_contacts: int) -> int:
    """Length of the memory :func:`impact_memory` keeps for ``n_contacts`` contacts: per
    contact its impact speed, its last approach rate and whether it was open then, and the
    time of that reading.

    Parameters
    ----------
    n_contacts : int
        Contacts whose laws need the impact speed.

    Examples
    --------
    >>> impact_memory_size(2)
    7
    """
    return 3 * n_contacts + 1


def impact_memory(deltas, rates, t, memory):
    """Next memory of contacts whose laws need the impact speed (the v^(-) of hysteresis
    laws), from their penetrations, approach rates and the time at the end of a step.

    ``memory`` holds, for n contacts: the impact speeds (rows 0 ... n-1, the ones the laws
    read), the approach rates at the last reading, 1 where the contact was open then (else
    0), and the time of that reading (last row).

    While a contact is open (delta <= 0) its impact speed is the approach rate at which it
    would close in the next step: the rate r at the end of this step carried over the gap
    -delta with the rate's change per second a over this step (both readings open),
    sqrt(r^2 - 2 a delta), kept within one step's change of r (r and r + a dt) and >= 0.
    The closing step itself cannot supply it: the contact force has already acted by its
    end, which would make the memory, and the law's damping with it, depend on h. Without
    a rate change (a first reading, or one after a closed reading) it is max(r, 0). While
    it is closed: held. A contact closed from the start (a joint with no play) keeps 0: no
    impact.

    Parameters
    ----------
    deltas, rates : CasADi column, shape (n,)
        Per contact the penetration (negative while open) and its rate, at the end of the
        step.
    t : float or CasADi scalar
        Time at the end of the step (s).
    memory : CasADi column, shape (impact_memory_size(n),)
        The memory at the start of the step.

    Returns
    -------
    CasADi column, shape (impact_memory_size(n),)

    Examples
    --------
    >>> import casadi as ca
    >>> z = impact_memory(ca.DM([-1e-3]), ca.DM([0.5]), 0.0, ca.DM.zeros(4))   # a first reading
    >>> [round(float(x), 9) for x in z.nonzeros()]
    [0.5, 0.5, 1.0, 0.0]
    >>> z = impact_memory(ca.DM([-1e-4]), ca.DM([0.6]), 1e-3, z)   # speeding up by 100 m/s^2
    >>> round(float(z[0]), 6)                               # sqrt(0.36 + 2 100 1e-4)
    0.616441
    """
    n = deltas.numel()
    speeds, last_rates, last_open, last_t = (memory[:n], memory[n:2 * n], memory[2 * n:3 * n],
                                             memory[3 * n])
    dt = t - last_t
    is_open = deltas <= 0
    change = ca.if_else(dt > 0, (last_open > 0) * (rates - last_rates), 0)
    a = change / ca.fmax(dt, 1e-300)
    at_closure = ca.sqrt(ca.fmax(rates**2 - 2 * a * deltas, 0))
    within = ca.fmin(ca.fmax(at_closure, ca.fmin(rates, rates + change)),
                     ca.fmax(rates, rates + change))
    new_speeds = ca.if_else(is_open, ca.fmax(within, 0), speeds)
    return ca.vertcat(new_speeds, rates, is_open, t)
