"""Programmed constraints: Phi(q, t) = 0 written by the user with CasADi expressions."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..checks import as_vector, call_user_function, signature_problems, vector_problems
from .base import BilateralConstraint

if TYPE_CHECKING:
    from .._typing import Symbolic
    from ..body import BodyState, RigidBody


class Programmed(BilateralConstraint):
    """A general constraint Phi(q, t) = 0 written by the user with CasADi expressions.

    ``equations(t, *states)`` receives t and one :class:`~nlpdyn.body.BodyState` per body in
    ``bodies`` (use ``state.point(P)`` for the body point initially at P) and returns a
    CasADi column.

    Example: an end effector following a circle in the YZ plane::

        nd.Programmed([arm], lambda t, s: s.point(tip)[1:] - ca.vertcat(ca.cos(t), ca.sin(t)))

    Parameters
    ----------
    bodies : RigidBody or sequence of RigidBody
        The bodies whose states ``equations`` receives, in this order.
    equations : callable
        ``equations(t, *states) -> CasADi column``: Phi(q, t), zero when the constraint holds.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).
    point : array_like, shape (3,), optional
        Where the result reports its reaction (global, initial configuration).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bead = s.add_body("bead", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(1, 0, 0))
    >>> ring = s.add_joint(nd.Programmed([bead], lambda t, b: b.r[0] ** 2 + b.r[2] ** 2 - 1))
    >>> ring.name, s.problems()
    ('programmed1', [])
    """

    kind = "programmed constraint"

    def __init__(self, bodies: RigidBody | Sequence[RigidBody], equations: Callable, name: str | None = None,
                 point: ArrayLike | None = None):
        try:
            self.bodies = tuple(bodies)
        except TypeError:           # one body given alone
            self.bodies = (bodies,)
        self._fun = equations
        self.name = name
        self._point = None if point is None else as_vector(point)
        self.n_equations = None  # known once the system evaluates the expression

    def problems(self) -> list[str]:
        out = super().problems()
        out += signature_problems(self.label, "equations", self._fun,
                                  ["t"] + [f"state{k + 1}" for k in range(len(self.bodies))])
        if self._point is not None:
            out += vector_problems(self.label, "point", self._point)
        return out

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        return call_user_function(self.label, "equations", self._fun, (t, *states))

    def reaction_point(self) -> np.ndarray | None:
        return self._point
