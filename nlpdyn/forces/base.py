"""Interface of a force element (a forcing term Q_A of docs/FORMULATION.md)."""
from __future__ import annotations

import casadi as ca
import numpy as np

from ..body import BodyState
from ..joints.base import Element

EVALUATIONS = ("explicit", "implicit")


class ForceElement(Element):
    """A force law acting on ``bodies``.

    ``wrenches(states, t, history)`` returns one (f, n') pair per body: the force in the global
    frame and the moment about the centre of mass in the body frame, as CasADi expressions of
    the states (positions and velocities), t and the element's memory. ``potential_energy``
    returns the stored energy where the law has one, else None.

    Memory (``history_size`` > 0): values a law needs from the past, such as the impact
    velocity of a Lankarani-Nikravesh contact. The stepper keeps them per element, passes
    them to ``wrenches`` as a CasADi column and, after every accepted step, replaces them by
    ``next_history(states, t, history)`` evaluated at the end of that step.

    ``evaluation`` says where the stepper evaluates the law: "explicit" at the start of the
    step, "implicit" at the (unknown) end of the step inside the step program, which is what
    stiff laws need. Each class sets its default from measurements; users may override it
    per instance.
    """

    kind = "force"
    evaluation = "explicit"
    history_size = 0

    def wrenches(self, states: list[BodyState], t, history=None):
        raise NotImplementedError

    def potential_energy(self, states: list[BodyState], t):
        return None

    def initial_history(self) -> np.ndarray:
        return np.zeros(self.history_size)

    def next_history(self, states: list[BodyState], t, history):
        return history

    def problems(self):
        out = super().problems()
        if self.evaluation not in EVALUATIONS:
            out.append(f"{self.label}: evaluation must be one of {EVALUATIONS}, got {self.evaluation!r}")
        return out


def point_wrench(state: BodyState, s_local, force_global):
    """(f, n') of a force applied at body point s': n' = s'~ A^T f."""
    return force_global, ca.cross(ca.DM(s_local), state.A.T @ force_global)


def moment_wrench(state: BodyState, moment_global):
    """(f, n') of a pure moment given in the global frame."""
    return ca.DM.zeros(3), state.A.T @ moment_global


def impact_memory(delta, delta_dot, memory):
    """Next value of a contact's remembered impact speed (the v^(-) of hysteresis laws).

    0 while the contact is open (delta <= 0); the penetration rate of the first step in
    contact once it closes; then held until the contact opens again.
    """
    first = ca.fmax(delta_dot, 0)
    return ca.if_else(delta <= 0, 0, ca.if_else(memory > 0, memory, first))
