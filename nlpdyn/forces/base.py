"""Interface of a force element (a forcing term Q_A of FORMULATION.md)."""
from __future__ import annotations

import casadi as ca

from ..body import BodyState
from ..joints.base import Element


class ForceElement(Element):
    """A force law acting on ``bodies``.

    ``wrenches(states, t)`` returns one (f, n') pair per body: the force in the global frame
    and the moment about the centre of mass in the body frame, as CasADi expressions of the
    states (positions and velocities) and t. ``potential_energy`` returns the stored energy
    where the law has one, else None.

    ``evaluation`` says where the stepper evaluates the law: "explicit" at the start of the
    step (the only mode in this version).
    """

    kind = "force"
    evaluation = "explicit"

    def wrenches(self, states: list[BodyState], t):
        raise NotImplementedError

    def potential_energy(self, states: list[BodyState], t):
        return None


def point_wrench(state: BodyState, s_local, force_global):
    """(f, n') of a force applied at body point s': n' = s'~ A^T f."""
    return force_global, ca.cross(ca.DM(s_local), state.A.T @ force_global)
