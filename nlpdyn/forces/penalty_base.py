"""The shared part of the penalty clearance joints: the base class
:class:`PenaltyClearanceJoint` (contacts -> laws -> wrenches, memory, stored energy,
diagnostics) and the kinematics the joint types share (smoothed |d|, point velocities,
wrenches of a force at a point or along a gradient).

The joint types are in :mod:`nlpdyn.forces.penalty_clearance`; the conventions are in
:mod:`nlpdyn.forces.penalty_joints`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca

from ..checks import number_problems, vector_problems
from ..rotations import G_matrix
from .base import ForceElement, impact_memory, impact_memory_size
from .law_base import ContactLaw
from .bushing_laws import Blended

if TYPE_CHECKING:
    from ..body import BodyState
    from .._typing import Law1D, Symbolic, Wrench

__all__ = ["PenaltyClearanceJoint", "rate_of"]

# |d| ~ sqrt(d.d + EPS^2) (m): a joint with no play starts at d = 0, where |d| has no gradient.
# At |d| = c the penetration changes by EPS^2 / (2 c) (5e-16 m at c = 1 mm).
_NORM_EPS = 1e-9


def _smooth_norm(d):
    return ca.sqrt(ca.dot(d, d) + _NORM_EPS**2)


def rate_of(expr: Symbolic, states: list[BodyState]) -> Symbolic:
    """d/dt of a CasADi expression of the bodies' positions, along their velocities.

    Directional derivative along (rdot, pdot = 1/2 G(p)^T w') of every moving body; ``r`` and
    ``p`` of the states must be CasADi symbols (as in a compiled system).

    Parameters
    ----------
    expr : casadi.SX, shape (m, 1)
        An expression of the states' ``r`` and ``p``.
    states : list of BodyState
        The bodies' states; the ground's are left out.

    Returns
    -------
    casadi.SX, shape (m, 1)
        d(expr)/dt.

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> from nlpdyn.body import BodyState
    >>> s = nd.System()
    >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
    >>> r, p, rdot, w = (ca.SX.sym(n, k) for n, k in (("r", 3), ("p", 4), ("rdot", 3), ("w", 3)))
    >>> rate_of(3 * r[0] - r[1], [BodyState(b, r, p, rdot, w)])
    SX(((3*rdot_0)-rdot_1))
    """
    xs, dxs = [], []
    for s in states:
        if s.body.is_ground:
            continue
        xs += [s.r, s.p]
        dxs += [s.rdot, 0.5 * G_matrix(s.p).T @ s.w]
    if not xs:
        return ca.SX.zeros(expr.shape)
    return ca.jtimes(expr, ca.vertcat(*xs), ca.vertcat(*dxs))


def _wrench_at(state, point_global, force_global):
    """(f, n') of a force (global) applied at a global point of the body: n' = s'~ A^T f."""
    s_local = state.A.T @ (point_global - state.r)
    return force_global, ca.cross(s_local, state.A.T @ force_global)


def _point_velocity(state, point_global):
    """Global velocity of the body's material point at a global position."""
    return state.rdot + state.A @ ca.cross(state.w, state.A.T @ (point_global - state.r))


def _gradient_wrenches(states, delta, force):
    """(f, n') per body of a force ``force`` pushing against the growth of ``delta`` (virtual
    work -force d(delta)): f = -force d(delta)/dr, n' = -force 1/2 G(p) d(delta)/dp."""
    out = []
    for s in states:
        if s.body.is_ground:
            out.append((ca.DM.zeros(3), ca.DM.zeros(3)))
            continue
        out.append((-force * ca.gradient(delta, s.r),
                    -force * 0.5 * G_matrix(s.p) @ ca.gradient(delta, s.p)))
    return out


def _laws_in(law):
    """The law and the laws a Blended law is made of."""
    if isinstance(law, Blended):
        return [law, *_laws_in(law.bushing), *_laws_in(law.contact)]
    return [law]


def _law_problems(owner, law, label="law"):
    if not isinstance(law, ContactLaw):
        return [f"{owner}: {label} must be a ContactLaw, got {type(law).__name__}"]
    return law.problems(owner)


def _geometry_property(name):
    return property(lambda self: getattr(self.geometry, name),
                    doc=f"``{name}`` of the joint geometry (read-only).")


class PenaltyClearanceJoint(ForceElement):
    """Base of the penalty clearance joints: ``n_contacts`` contacts between ``parent``
    (bodies[0]) and ``child`` (bodies[1]).

    Subclasses implement ``_contacts(states) -> (delta, normals, points)``: the penetrations
    (CasADi column, n_contacts), the direction of each contact force on the child (unit up
    to the smoothing of |d|) and its global application point (lists of CasADi 3-vectors), and ``_laws()``, the law of each
    contact. ``geometry`` is the complementarity joint holding the same data.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
    >>> el = nd.PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
    >>> isinstance(el, PenaltyClearanceJoint), el.parent is s.ground, el.clearance
    (True, True, 0.0001)
    """

    kind = "penalty clearance joint"
    evaluation = "implicit"
    is_contact = True

    parent = _geometry_property("parent")
    child = _geometry_property("child")
    point = _geometry_property("point")
    clearance = _geometry_property("clearance")

    def _init(self, geometry, law, name):
        self.geometry = geometry
        self.bodies = (geometry.parent, geometry.child)
        self.law = law
        self.name = name

    # ------------------------------------------------------------ per-contact data
    @property
    def n_contacts(self) -> int:
        """Number of contacts (rows of :meth:`penetrations`)."""
        raise NotImplementedError

    def _laws(self) -> list[ContactLaw]:
        return [self.law] * self.n_contacts

    @property
    def loading_stiffness_ratio(self) -> float:
        """The largest of its contacts' laws' (``ForceElement.loading_stiffness_ratio``).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System(gravity=(0, 0, 0))
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> law = nd.ModifiedKelvinVoigt(1e5, restitution=0.5)
        >>> PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, law).loading_stiffness_ratio
        2.0
        """
        return max(law.loading_stiffness_ratio for law in self._laws())

    @property
    def history_size(self) -> int:
        """``impact_memory_size(n_contacts)`` when a law needs the impact speed (rows 0 ...
        n_contacts - 1 are the remembered speeds, see :func:`~nlpdyn.forces.base.impact_memory`),
        else 0."""
        needs = any(getattr(law, "needs_impact_velocity", False) for law in self._laws())
        return impact_memory_size(self.n_contacts) if needs else 0

    def _contacts(self, states):
        raise NotImplementedError

    def _gradient_contact(self, k) -> bool:
        """Whether contact k's wrench comes from the gradient of delta_k (else: the force at
        its contact point along its normal)."""
        return False

    def _rates(self, states, delta, normals, points):
        rates = []
        sp, sc = states
        for k, (n, x) in enumerate(zip(normals, points)):
            if self._gradient_contact(k):
                rates.append(rate_of(delta[k], states))
            else:
                rates.append(-ca.dot(n, _point_velocity(sc, x) - _point_velocity(sp, x)))
        return ca.vertcat(*rates)

    def _forces(self, delta, rates, history):
        out = []
        for k, law in enumerate(self._laws()):
            v_imp = history[k] if (self.history_size and history is not None) else 0.0
            out.append(ca.if_else(delta[k] > 0, law.force(delta[k], rates[k], v_imp), 0))
        return out

    # ------------------------------------------------------------ diagnostics
    def penetrations(self, states: list[BodyState]) -> Symbolic:
        """Penetration delta_k of every contact (m, negative while open).

        Parameters
        ----------
        states : list of BodyState
            [parent, child], symbolic or numeric.

        Returns
        -------
        casadi column, shape (n_contacts, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System()
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
        >>> ball = BodyState(b, ca.DM([3e-4, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                  ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), ball]     # 0.2 mm into the wall, moving on
        >>> round(float(el.penetrations(states)), 12)           # |d| - clearance
        0.0002
        """
        return self._contacts(states)[0]

    def penetration_rates(self, states: list[BodyState]) -> Symbolic:
        """d(delta_k)/dt of every contact (m/s).

        Parameters
        ----------
        states : list of BodyState
            [parent, child], symbolic or numeric.

        Returns
        -------
        casadi column, shape (n_contacts, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System()
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
        >>> ball = BodyState(b, ca.DM([3e-4, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                  ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), ball]     # 0.2 mm into the wall, moving on
        >>> round(float(el.penetration_rates(states)), 9)
        0.1
        """
        delta, normals, points = self._contacts(states)
        return self._rates(states, delta, normals, points)

    def contact_points(self, states: list[BodyState]) -> Symbolic:
        """Global application point of every contact force.

        Parameters
        ----------
        states : list of BodyState
            [parent, child], symbolic or numeric.

        Returns
        -------
        casadi matrix, shape (n_contacts, 3)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System()
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
        >>> ball = BodyState(b, ca.DM([3e-4, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                  ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), ball]     # 0.2 mm into the wall, moving on
        >>> el.contact_points(states)                  # the ball's centre (radius 0)
        DM([[0.0003, 0, 0]])
        """
        return ca.horzcat(*self._contacts(states)[2]).T

    def contact_normals(self, states: list[BodyState]) -> Symbolic:
        """Direction of every contact force on the child (global).

        Parameters
        ----------
        states : list of BodyState
            [parent, child], symbolic or numeric.

        Returns
        -------
        casadi matrix, shape (n_contacts, 3)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System()
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
        >>> ball = BodyState(b, ca.DM([3e-4, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                  ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), ball]     # 0.2 mm into the wall, moving on
        >>> el.contact_normals(states)                  # back to the centre
        DM([[-1, -0, -0]])
        """
        return ca.horzcat(*self._contacts(states)[1]).T

    def contact_forces(self, states: list[BodyState], t: Symbolic | float | None = None,
                       history: Symbolic | None = None) -> Symbolic:
        """Normal force f_k of every contact (N; 0 while open).

        Parameters
        ----------
        states : list of BodyState
            [parent, child], symbolic or numeric.
        t : float or casadi.SX, optional
            Time (unused by the laws; kept for the element interface).
        history : casadi column, optional
            The element's memory (impact speeds), zeros when omitted.

        Returns
        -------
        casadi column, shape (n_contacts, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System()
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
        >>> ball = BodyState(b, ca.DM([3e-4, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                  ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), ball]     # 0.2 mm into the wall, moving on
        >>> round(float(el.contact_forces(states)), 6)          # 1e9 (2e-4)^1.5
        2828.427125
        """
        delta, normals, points = self._contacts(states)
        rates = self._rates(states, delta, normals, points)
        if history is None and self.history_size:
            history = ca.DM.zeros(self.history_size)
        return ca.vertcat(*self._forces(delta, rates, history))

    # ------------------------------------------------------------ ForceElement
    def wrenches(self, states: list[BodyState], t: Symbolic | float,
                 history: Symbolic | None = None) -> list[Wrench]:
        sp, sc = states
        delta, normals, points = self._contacts(states)
        rates = self._rates(states, delta, normals, points)
        forces = self._forces(delta, rates, history)
        total = [[ca.DM.zeros(3), ca.DM.zeros(3)], [ca.DM.zeros(3), ca.DM.zeros(3)]]
        for k, (f, n, x) in enumerate(zip(forces, normals, points)):
            if self._gradient_contact(k):
                pair = _gradient_wrenches(states, delta[k], f)
            else:
                pair = [_wrench_at(sp, x, -f * n), _wrench_at(sc, x, f * n)]
            for body, (df, dn) in enumerate(pair):
                total[body][0] = total[body][0] + df
                total[body][1] = total[body][1] + dn
        return [tuple(total[0]), tuple(total[1])]

    def start_history(self, states: list[BodyState], t: Symbolic | float,
                      history: Symbolic) -> Symbolic:
        return self.next_history(states, t, history)

    def next_history(self, states: list[BodyState], t: Symbolic | float,
                     history: Symbolic) -> Symbolic:
        if not self.history_size:
            return history
        delta, normals, points = self._contacts(states)
        rates = self._rates(states, delta, normals, points)
        return impact_memory(delta, rates, t, history)

    def potential_terms(self, states: list[BodyState], t: Symbolic | float,
                        history: Symbolic | None = None) -> list[tuple[Symbolic, Law1D]]:
        """[(delta_k, law_k.elastic_potential(max(delta_k, 0), v_imp,k))] per contact.

        Parameters
        ----------
        states : list of BodyState
            [parent, child].
        t : float or casadi.SX
            Time (unused).
        history : casadi column, optional
            The element's memory (impact speeds, for laws that need them).

        Returns
        -------
        list of (casadi scalar, callable)
            One pair per contact.

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.forces.penalty_clearance import PenaltySphericalClearance
        >>> s = nd.System()
        >>> b = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> el = PenaltySphericalClearance(s.ground, b, (0, 0, 0), 1e-4, nd.Hertz(1e9, 1.5))
        >>> ball = BodyState(b, ca.DM([3e-4, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM.zeros(3),
        ...                  ca.DM.zeros(3))
        >>> [(delta, V)] = el.potential_terms([ground_state(s.ground), ball], 0.0)
        >>> round(float(V(delta)), 9)                 # 1e9 (2e-4)^2.5 / 2.5
        0.22627417
        """
        delta = self._contacts(states)[0]
        remembered = self.history_size and history is not None
        return [(delta[k], lambda d, law=law, v=(history[k] if remembered else None):
                 law.elastic_potential(ca.fmax(d, 0), v))
                for k, law in enumerate(self._laws())]

    # ------------------------------------------------------------ validation
    def problems(self) -> list[str]:
        out = super().problems()
        out += vector_problems(self.label, "point", self.point)
        out += number_problems(self.label, "clearance", self.clearance, lambda c: c >= 0, ">= 0")
        out += _law_problems(self.label, self.law)
        return out

