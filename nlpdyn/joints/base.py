"""Interfaces every constraint element implements.

A bilateral element (ideal joint, driver, programmed constraint) returns its equations
Phi(q, t) = 0; a unilateral element (clearance joint) returns its gaps g(q) >= 0. Both are
plain CasADi expressions of the bodies' symbolic states: the system differentiates them,
no element writes a Jacobian.
"""
from __future__ import annotations

import numpy as np

from ..body import BodyState, RigidBody

UNIT_TOL = 1e-9


def check_unit(vec, label: str, owner: str) -> list[str]:
    vec = np.asarray(vec, dtype=float)
    if vec.shape != (3,) or not np.all(np.isfinite(vec)):
        return [f"{owner}: {label} must be 3 finite numbers, got {vec.tolist()}"]
    if abs(np.linalg.norm(vec) - 1) > UNIT_TOL:
        return [f"{owner}: {label} must be a unit vector, |{label}| = {np.linalg.norm(vec):.12g}"]
    return []


class Element:
    """Something attached to bodies: a joint, a driver, a force element."""

    kind = "element"
    bodies: tuple[RigidBody, ...] = ()
    name: str | None = None

    def problems(self) -> list[str]:
        """Every problem with this element's data (empty when valid)."""
        out = []
        for b in self.bodies:
            if not isinstance(b, RigidBody):
                out.append(f"{self.label}: {b!r} is not a body")
        if len(self.bodies) == 2 and self.bodies[0] is self.bodies[1]:
            out.append(f"{self.label}: connects body '{self.bodies[0].name}' to itself")
        return out

    @property
    def label(self) -> str:
        return f"{self.kind} '{self.name}'"


class BilateralConstraint(Element):
    """Equality constraints Phi(q, t) = 0 (ideal joints, drivers, programmed constraints)."""

    kind = "constraint"
    n_equations: int = 0

    def equations(self, states: list[BodyState], t):
        """CasADi column of length ``n_equations``; ``states`` follow ``self.bodies``."""
        raise NotImplementedError

    def reaction_point(self) -> np.ndarray | None:
        """Global point (initial configuration) about which reaction torques are reported."""
        return None


class UnilateralConstraint(Element):
    """Gaps g(q) >= 0 with nonnegative normal forces (clearance joints)."""

    kind = "gap"
    n_gaps: int = 0

    def gaps(self, states: list[BodyState]):
        """CasADi column of length ``n_gaps`` (true, nonlinear gaps)."""
        raise NotImplementedError

    def contact_points(self, states: list[BodyState]):
        """Global contact point of every gap, CasADi matrix of shape (n_gaps, 3)."""
        raise NotImplementedError
