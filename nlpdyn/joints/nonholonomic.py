"""Velocity-level (nonholonomic) constraints w^T G = zeta (seed 004, eqs. 3.6-3.8)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .programmed import Programmed

if TYPE_CHECKING:
    from .._typing import Symbolic
    from ..body import BodyState, RigidBody


class VelocityConstraint(Programmed):
    """Rows linear in the velocities, C(t, q) v - zeta(t, q) = 0, that no position function
    integrates: a knife edge, a wheel rolling without slip.

    ``equations(t, *states)`` receives t and one :class:`~nlpdyn.body.BodyState` per body
    (``state.rdot``, global; ``state.w``, body frame; ``state.point_velocity_local(s)``) and
    returns a CasADi column that must be linear in the velocities; the system takes C as its
    velocity Jacobian and zeta as minus its value at zero velocity. Each step imposes the rows
    at the step's end velocity with C and zeta at its start, as it does the ideal joints'
    linearised rows; the reaction is C^T mu. Ideal velocity constraints with zeta = 0 do no
    work: the energy ledger's ``work:<name>`` column stays at the discretisation's level.

    Parameters
    ----------
    bodies : RigidBody or sequence of RigidBody
        The bodies whose states ``equations`` receives, in this order.
    equations : callable
        ``equations(t, *states) -> CasADi column``: C v - zeta, linear in the velocities.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).
    point : array_like, shape (3,), optional
        Where the result reports its reaction (global, initial configuration).

    Examples
    --------
    A knife edge: the body's centre may not move along its body y axis.

    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> sled = s.add_body("sled", mass=1.0, inertia=(0.1, 0.1, 0.1), velocity=(1, 0, 0),
    ...                   angular_velocity=(0, 0, 1))
    >>> _ = s.add_joint(nd.Planar(s.ground, sled, point=(0, 0, 0), axis=(0, 0, 1)))
    >>> _ = s.add_joint(nd.VelocityConstraint([sled], lambda t, st: ca.dot(st.rdot, st.A[:, 1]),
    ...                                       name="knife"))
    >>> res = nd.simulate(s, t_end=0.5, h=1e-3, progress=False)
    >>> res.success
    True
    """

    kind = "velocity constraint"

    def __init__(self, bodies: RigidBody | Sequence[RigidBody], equations: Callable,
                 name: str | None = None):
        super().__init__(bodies, equations, name)

    def velocity_equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        """The rows C v - zeta as a CasADi column of the states' q, v and t.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order.
        t : float or CasADi scalar
            Time (s).

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> s = nd.System(gravity=(0, 0, 0))
        >>> sled = s.add_body("sled", mass=1.0, inertia=(0.1, 0.1, 0.1))
        >>> knife = s.add_joint(nd.VelocityConstraint(
        ...     [sled], lambda t, st: ca.dot(st.rdot, st.A[:, 1]), name="knife"))
        >>> knife.velocity_equations(s.compile().states_of(knife), 0.0).shape
        (1, 1)
        """
        return Programmed.equations(self, states, t)

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        raise TypeError(f"{self.label} has no position equations (see velocity_equations)")
