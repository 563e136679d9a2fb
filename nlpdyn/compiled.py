"""CompiledSystem: a validated System as named CasADi functions of q, v, t and the force
elements' memory, built once per set of parameters."""
from __future__ import annotations

from collections.abc import Sequence, Set as AbstractSet
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from .body import BodyState, ground_state
from .checks import ModelError
from .element_rows import ElementRows
from .element_terms import (attempt, contact_coordinates, force_terms, inertia_terms,
                            joint_equations, symbol_hashes, velocity_constraint_rows)
from .forces.elements import Gravity
from .joints.base import Element, gap_law
from .joints.nonholonomic import VelocityConstraint
from .rotations import G_matrix
from .state_checks import NOT_FINITE_HINT, OVERFLOW, initial_problems, state_problems  # noqa: F401
from .step_forces import (carried_energy, energy_consistent, friction_terms, initial_memory,
                          recorded_step_forces, recorded_step_forces_midpoint, step_forces,
                          step_forces_midpoint)

if TYPE_CHECKING:
    from types import SimpleNamespace

    from ._typing import ArrayLike, Symbolic
    from .system import System


class CompiledSystem:
    """The system as named CasADi functions of q (7 per body), v (6 per body) and t.

    Functions (all closed, SX): ``phi(q, t)``, ``phi_q(q, t)``, ``phi_t(q, t)``, ``gap(q)``,
    ``gap_q(q)``, ``contact_coordinates(q)`` and ``contact_coordinates_q(q)`` (d and
    dd/dq; ``gap_of_coordinates`` gives g(d)), ``forces(t, q, v, z)`` (Q_A - S; z: the force elements' memory, see
    ``initial_history``), ``forces_explicit`` (Q_A - S of the elements evaluated at the start
    of the step), ``history_next(t, q, v, z)``, ``history_start(t, q, v, z)`` (the memory a start state shows),
    ``element_forces(t, q, v, z)`` (nv x n_elements, Q of each force element, gravity
    first), ``element_potentials(t, q, z)``, ``element_conservative_forces(t, q, z)`` (nv x n_elements,
    -dV/dq of each element's stored energy as a generalised force), ``gyroscopic(v)`` (S),
    ``energy(t, q, v, z)``, ``kinetic(v)``,
    ``potential(t, q, z)``, ``velocity_jacobian(q, t)`` (Pi, rows of d/dt Phi = Pi v; with the
    velocity constraints' rows C, whose zeta is in ``phi_t``), ``velocity_rows_jacobian(q, t)``
    (C alone, zero rows elsewhere).

    The stepper's memory is z followed by the carry of the energy-consistent elements
    (``initial_memory``, ``step_forces``, ``carried_energy``): the previous step's h, the
    energy carried, and per such element the conservative force of its last step as global
    wrenches, half of whose impulse the next step applies; then per gap a flag, closed at the
    start of the last step (``contact_slots``); ``n_memory`` entries in all.

    Parameters
    ----------
    system : System
        The system it is built from (:meth:`System.compile` builds it, validated first).
    problems : sequence of str
        The problems the system's validation found, raised with those met here.
    invalid : set of int
        ids of the bodies and elements they concern, whose expressions are not built.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> _ = s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)))
    >>> cs = s.compile()
    >>> q, v = cs.initial_state()
    >>> cs.phi(q, 0.0).shape, float(cs.energy(0.0, q, v, cs.initial_history()))
    ((5, 1), 0.0)
    """

    def __init__(self, system: System, problems: Sequence[str] = (),
                 invalid: AbstractSet[int] = frozenset()):
        """Build the functions of ``system``. ``problems``: those its validation found (they
        are raised with the ones met here); ``invalid``: ids of the bodies and elements they
        concern, whose expressions are not built."""
        self.system = system
        bodies = system.bodies
        for i, b in enumerate(bodies):
            b.index = i
        self.bodies = bodies
        self.n_bodies = len(bodies)
        self.nq, self.nv = 7 * self.n_bodies, 6 * self.n_bodies
        problems = list(problems)

        def buildable(el):
            return id(el) not in invalid and not any(id(b) in invalid for b in el.bodies)

        q = ca.SX.sym("q", self.nq)
        v = ca.SX.sym("v", self.nv)
        t = ca.SX.sym("t")
        self._symbols = symbol_hashes(q, v, t)
        self._states = {id(system.ground): ground_state(system.ground)}
        for b in bodies:
            k = b.index
            self._states[id(b)] = BodyState(b, q[7 * k:7 * k + 3], q[7 * k + 3:7 * k + 7],
                                            v[6 * k:6 * k + 3], v[6 * k + 3:6 * k + 6])

        # Bilateral constraints. Velocity-level rows C v - zeta (VelocityConstraint) have no
        # position function: zero rows in phi, C in Pi and -zeta in phi_t.
        rows, self.constraint_rows, start = [], [], 0
        velocity_rows = []
        for el in filter(buildable, system.constraints):
            if isinstance(el, VelocityConstraint):
                built = attempt(el, problems, lambda: velocity_constraint_rows(self, el, t, v))
                if built is None:
                    continue
                velocity_rows.append((start, *built))
                expr = ca.SX.zeros(built[1].numel())
            else:
                expr = attempt(el, problems, lambda: joint_equations(self, el, t))
            if expr is None:
                continue
            rows.append(expr)
            self.constraint_rows.append(ElementRows(el.name, el, start, start + expr.numel()))
            start += expr.numel()
        phi = ca.vertcat(*rows) if rows else ca.SX(0, 1)
        self.n_eq = phi.numel()

        # Unilateral gaps, each the law of its contact coordinates: g = d (flat) or
        # g = radius - |d| (round); see UnilateralConstraint.
        coords, self.gap_rows, self.gap_laws, points = [], [], [], []
        n_d = 0
        for el in filter(buildable, system.gaps):
            built = attempt(el, problems, lambda: contact_coordinates(self, el))
            if built is None:
                continue
            pairs, el_points = built
            start = len(self.gap_laws)
            for d, radius in pairs:
                coords.append(d)
                self.gap_laws.append((n_d, n_d + d.numel(), radius))
                n_d += d.numel()
            self.gap_rows.append(ElementRows(el.name, el, start, len(self.gap_laws)))
            points.append(el_points)
        d_all = ca.vertcat(*coords) if coords else ca.SX(0, 1)
        self.n_gap, self.n_coordinates = len(self.gap_laws), n_d
        gap = self.gap_of_coordinates(d_all)

        # Applied forces and gyroscopic terms: Q_A - S, split by where each element is
        # evaluated (start of step: explicit, end of step: implicit); memory z per element.
        # Gravity is built once the bodies' data is known to be valid.
        elements = [] if problems else [Gravity(bodies, system.gravity)]
        elements += filter(buildable, system.forces)
        history_sizes = [attempt(el, problems, lambda: int(el.history_size)) for el in elements]
        self.force_elements = [el for el, size in zip(elements, history_sizes) if size is not None]
        z = ca.SX.sym("z", sum(size for size in history_sizes if size is not None))
        self._symbols |= symbol_hashes(z)
        self.n_history = z.numel()
        self.history_rows, z_next, z_start, start = [], [], [], 0
        Q = {"explicit": ca.SX.zeros(self.nv), "in_step": ca.SX.zeros(self.nv)}
        element_Q, element_V, element_terms = [], [], []
        potential = ca.SX(0)
        for el in self.force_elements:
            memory = z[start:start + el.history_size] if el.history_size else None
            if el.history_size:
                self.history_rows.append(ElementRows(el.name, el, start, start + el.history_size))
                start += el.history_size
            built = attempt(el, problems, lambda: force_terms(self, el, t, memory))
            if built is None:
                continue
            Q_el, V_el, (el_next, el_start), terms = built
            if el.history_size:
                z_next.append(el_next)
                z_start.append(el_start)
            Q["explicit" if el.evaluation == "explicit" else "in_step"] += Q_el
            element_Q.append(Q_el)
            element_V.append(V_el)
            element_terms.append(terms)
            potential += V_el
        if problems:
            raise ModelError(problems)
        # the elements the step program evaluates inside the step (implicit and backward Euler)
        self.implicit_elements = [el.name for el in self.force_elements if el.evaluation != "explicit"]
        friction_terms(self, t, q, v, z)
        self.M, self.L, S = inertia_terms(bodies, v)
        kinetic = 0.5 * ca.dot(v, ca.DM(self.M) @ v)

        # Velocity Jacobians: d/dt f(q) = f_q qdot with pdot = 1/2 G(p)^T w'.
        qdot_of_v = self._qdot_of_v(q, v)
        phi_q = ca.jacobian(phi, q)
        gap_q = ca.jacobian(gap, q)
        Pi = ca.jacobian(ca.mtimes(phi_q, qdot_of_v), v)
        C, zeta = ca.SX(self.n_eq, self.nv), ca.SX(self.n_eq, 1)
        for first, C_el, zeta_el in velocity_rows:
            C[first:first + zeta_el.numel(), :] = C_el
            zeta[first:first + zeta_el.numel()] = zeta_el
        self.n_velocity_rows = sum(z_el.numel() for _, _, z_el in velocity_rows)
        Pi = Pi + C
        Pi_g = ca.jacobian(ca.mtimes(gap_q, qdot_of_v), v)

        def fn(name, ins, outs):
            f = ca.Function(name, [x for _, x in ins], list(outs.values()),
                            [n for n, _ in ins], list(outs.keys()), {"cse": True})
            assert not f.has_free()
            return f

        self.phi = fn("phi", [("q", q), ("t", t)], {"phi": phi})
        self.phi_q = fn("phi_q", [("q", q), ("t", t)], {"phi_q": phi_q})
        self.phi_t = fn("phi_t", [("q", q), ("t", t)], {"phi_t": ca.jacobian(phi, t) - zeta})
        self.velocity_rows_jacobian = fn("C", [("q", q), ("t", t)], {"C": C})
        self.velocity_jacobian = fn("Pi", [("q", q), ("t", t)], {"Pi": Pi})
        self.gap = fn("gap", [("q", q)], {"gap": gap})
        self.gap_q = fn("gap_q", [("q", q)], {"gap_q": gap_q})
        self.gap_jacobian = fn("Pi_g", [("q", q)], {"Pi_g": Pi_g})
        self.contact_coordinates = fn("contact_coordinates", [("q", q)], {"d": d_all})
        self.contact_coordinates_q = fn("contact_coordinates_q", [("q", q)],
                                        {"d_q": ca.jacobian(d_all, q)})
        self.contact_points = fn("contact_points", [("q", q)],
                                 {"points": ca.vertcat(*points) if points else ca.SX(0, 3)})
        tqvz = [("t", t), ("q", q), ("v", v), ("z", z)]
        self.forces = fn("forces", tqvz, {"Q_minus_S": Q["explicit"] + Q["in_step"] - S})
        self.forces_explicit = fn("forces_explicit", tqvz, {"Q_minus_S": Q["explicit"] - S})
        self.history_next = fn("history_next", tqvz,
                               {"z_next": ca.vertcat(*z_next) if z_next else ca.SX(0, 1)})
        self.history_start = fn("history_start", tqvz,
                                {"z_start": ca.vertcat(*z_start) if z_start else ca.SX(0, 1)})
        self.element_forces = fn("element_forces", tqvz, {"Q": ca.horzcat(*element_Q)})
        tqz = [("t", t), ("q", q), ("z", z)]
        self.element_potentials = fn("element_potentials", tqz, {"V": ca.vertcat(*element_V)})
        # the part of each element's force that derives from its stored energy (the rest is
        # the element's non-conservative work: damping, hysteresis, applied loads)
        T_v = ca.jacobian(qdot_of_v, v)
        self.element_conservative_forces = fn(
            "element_conservative_forces", tqz,
            {"Q_V": ca.densify(ca.horzcat(*[-(ca.jacobian(V, q) @ T_v).T for V in element_V]))})
        self.gyroscopic = fn("gyroscopic", [("v", v)], {"S": S})
        self.kinetic = fn("kinetic", [("v", v)], {"T": kinetic})
        self.potential = fn("potential", tqz, {"V": potential})
        self.energy = fn("energy", [("t", t), ("q", q), ("v", v), ("z", z)],
                         {"E": kinetic + potential})
        self.q_sym, self.v_sym, self.t_sym, self.z_sym = q, v, t, z
        self.phi_expr, self.gap_expr = phi, gap
        energy_consistent(self, element_terms)

    # ---------------------------------------------------------------- step forces (step_forces.py)
    @property
    def recorded_step_forces(self) -> ca.Function:
        """``recorded_step_forces(t0, h, q0, v0, q1, v1, z0, z1)`` -> Q (nv x n_elements):
        what every force element exerted over a recorded step (``step_forces`` with the
        memory at both ends), for the result's wrenches. Built on first use and evaluated
        once per run (mapped over the steps): without common subexpressions eliminated,
        which would cost more than they save."""
        if self._recorded_step_forces is None:
            self._recorded_step_forces = recorded_step_forces(self)
        return self._recorded_step_forces

    def step_forces(self, t0: float | Symbolic, h: float | Symbolic, q0: ArrayLike | Symbolic,
                    v0: ArrayLike | Symbolic, q1: ArrayLike | Symbolic,
                    v1: ArrayLike | Symbolic, memory: ArrayLike | Symbolic,
                    T: Symbolic | None, memory_end: ArrayLike | Symbolic | None = None
                    ) -> SimpleNamespace:
        """What every force element exerts over a step from (t0, q0, v0) to (t0 + h, q1, v1),
        as a namespace of CasADi expressions:

        - ``Q`` (nv x n_elements): its impulse over the step divided by h; ``Q_V``: the
          conservative part of it;
        - ``G_V`` (nv x n_elements): the energy-consistent elements' conservative force of
          this step, ``D`` their other force (damping, hysteresis) at its midpoint (zero
          columns for the other elements);
        - ``carried`` (nv): the impulse the step applies from the last one, h_last / 2 times
          the last G_V, summed; ``wrenches``: G_V as the next memory's carry holds it;
        - ``tangent`` (nv x n_elements): Q where its derivative in the end of step is cheap
          and the same to first order in q1 - q0 (for "implicit": the force a quarter
          into the step, with v1), for the Newton iterations' Hessian; ``tangent_V``: the
          stored energy's part of it (its stiffness alone) and that part taken at the end of
          the step with the same share of its derivative (a pair: where a contact closes
          late in the step only the end sees it), None without "implicit" contact elements
          or "split" damping.

        By evaluation:

        - "explicit": Q at the start of the step;
        - "backward_euler": Q at the end;
        - "implicit": h Q = h_last C_last / 2 + h C / 2 + h D_whole, C = G_V + D_split,
          G_V = -T^T grad_d V(q0, q1) the stored energy's discrete gradient
          (``nlpdyn.discrete_gradient``), D = [Q - Q_V](t0 + h/2, (q0 + q1)/2, v1) the rest
          at the step's midpoint: carried with G_V (D_split) for ``damping_step`` "split",
          applied whole in the step (D_whole) for "whole" (a stiff damper resists in the step
          it is loaded). With q1 - q0 = h (T v1 + c) (T: the step's kinematic map), the
          balance is exact on the nodal velocities u0 = v0 + M^-1 h_last C_last / 2,
          u1 = u0 + h M^-1 C: T(u1) + V(q1) - T(u0) - V(q0) = h D_split . v1 for the
          element alone (split: its own work; whole: off by ~ h^2 D M^-1 D / 2).
          ``C``: the carried force; Q_V holds these elements' carried part.

        Parameters
        ----------
        t0, h : float or CasADi scalar
            The step's start time and size (s).
        q0, v0, q1, v1 : array_like or CasADi column, shapes (nq,), (nv,), (nq,), (nv,)
            The state at the start and at the end of the step.
        memory : array_like or CasADi column, shape (n_memory,)
            The stepper's memory at the start of the step (z, then the carry).
        T : CasADi matrix or None
            The step's kinematic map (dq = h (T v1 + c)), used by "implicit" elements;
            None when there are none or with ``memory_end``.
        memory_end : array_like or CasADi column, shape (n_memory,), optional
            The memory at the end, whose carry holds this step's G_V (then ``T`` is not
            needed: what a recorded step exerted).

        Returns
        -------
        types.SimpleNamespace
            ``Q``, ``Q_V``, ``G_V``, ``D``, ``C``, ``carried``, ``wrenches``, ``tangent``,
            ``tangent_V`` as above (CasADi expressions, numbers for numbers in).

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> q, v = cs.initial_state()
        >>> memory = cs.initial_memory(0.0, q, v, 1e-3, 1e-6)
        >>> cs.step_forces(0.0, 1e-3, q, v, q, v, memory, None).Q    # gravity on the rod
        DM([0, -9.81, 0, 0, 0, 0])
        """
        return step_forces(self, t0, h, q0, v0, q1, v1, memory, T, memory_end)

    def step_forces_midpoint(self, t0: float | Symbolic, h: float | Symbolic,
                             q0: ArrayLike | Symbolic, v0: ArrayLike | Symbolic,
                             qm: ArrayLike | Symbolic, vf: ArrayLike | Symbolic,
                             q1: ArrayLike | Symbolic, v1: ArrayLike | Symbolic,
                             memory: ArrayLike | Symbolic, T: Symbolic | None
                             ) -> SimpleNamespace:
        """What every force element exerts over a midpoint step (``scheme`` "midpoint")
        from (t0, q0, v0) to (t0 + h, q1, v1), drifting through qm, as ``step_forces``'s
        namespace (no carry: ``C`` and ``carried`` are zero):

        - "explicit": Q at the midpoint (t0 + h/2, qm) with the predicted velocity vf;
        - "backward_euler": Q at the end;
        - "implicit": the stored energy's discrete gradient between q0 and q1, G_V = -T^T
          grad_d V(q0, q1) (T the kinematic map at qm), whole in this step, and the rest D at
          the step's midpoint ((q0 + q1) / 2, the mean velocity): with q1 - q0 = h (v0 + v1)
          / 2 (translations) the element's stored energy changes by exactly the work of G_V,
          and D does its own work (to O(h^3) per step where rotations enter T);
          ``tangent``: the force halfway along the chord with the mean velocity, which has
          the impulse's derivative in v1 to first order.

        Parameters
        ----------
        t0, h : float or CasADi scalar
            The step's start time and size (s).
        q0, v0 : array_like or CasADi column, shapes (nq,), (nv,)
            The state at the start of the step.
        qm, vf : array_like or CasADi column, shapes (nq,), (nv,)
            The midpoint the positions drift to and the velocity predicted there.
        q1, v1 : array_like or CasADi column, shapes (nq,), (nv,)
            The state at the end of the step.
        memory : array_like or CasADi column, shape (n_memory,)
            The stepper's memory at the start of the step.
        T : CasADi matrix or None
            The kinematic map at qm, used by "implicit" elements (None when there are none).

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> q, v = cs.initial_state()
        >>> memory = cs.initial_memory(0.0, q, v, 1e-3, 1e-6)
        >>> cs.step_forces_midpoint(0.0, 1e-3, q, v, q, v, q, v, memory, None).Q
        DM([0, -9.81, 0, 0, 0, 0])
        """
        return step_forces_midpoint(self, t0, h, q0, v0, qm, vf, q1, v1, memory, T)

    @property
    def recorded_step_forces_midpoint(self) -> ca.Function:
        """``recorded_step_forces_midpoint(t0, h, q0, v0, qm, vf, q1, v1, z0)`` -> Q (nv x
        n_elements): what every force element exerted over a recorded midpoint step
        (``step_forces_midpoint``), for the result's wrenches."""
        if self._recorded_midpoint is None:
            self._recorded_midpoint = recorded_step_forces_midpoint(self)
        return self._recorded_midpoint

    def _qdot_of_v(self, q, v):
        """qdot = [rdot; 1/2 G(p)^T w'] per body."""
        return ca.vertcat(*[ca.vertcat(v[6 * k:6 * k + 3],
                                       0.5 * G_matrix(q[7 * k + 3:7 * k + 7]).T @ v[6 * k + 3:6 * k + 6])
                            for k in range(self.n_bodies)])

    def carried_energy(self, t: float, q: ArrayLike, v: ArrayLike, C: ArrayLike) -> float:
        """The kinetic energy the step velocity ``v`` lacks of the nodal velocity u = v + P
        M^-1 C that the energy-consistent elements' carried impulse ``C`` (on the velocities
        at q) gives: T(u) - T(v), P the projection onto the joints' velocity constraints at
        (q, t) (the carry's share the joints take is no motion). Numbers in, a number out;
        the stepper computes the same inside each step.

        Parameters
        ----------
        t : float
            Time (s).
        q, v : array_like, shapes (nq,), (nv,)
            The state.
        C : array_like, shape (nv,)
            The carried impulse (on the velocities).

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> import numpy as np
        >>> q, v = cs.initial_state()
        >>> cs.carried_energy(0.0, q, v, np.zeros(cs.nv))
        0.0
        """
        return carried_energy(self, t, q, v, C)

    def initial_memory(self, t: float, q: ArrayLike, v: ArrayLike, h: float,
                       closed_gap: float) -> np.ndarray:
        """The stepper's memory at a start state (t, q, v) before a step of ``h``: the
        elements' initial memory; for the energy-consistent elements their conservative
        force at that state as the carry (so a mechanism at rest in equilibrium stays at
        rest), with h as the last step's and the energy it carries; per gap whether it is
        closed (below ``closed_gap``, m) at the start: an array (n_memory,).

        Parameters
        ----------
        t : float
            Time of the start state (s).
        q, v : array_like, shapes (nq,), (nv,)
            The start state.
        h : float
            The first step's size (s).
        closed_gap : float
            A gap at or below this (m) counts as closed.

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> q, v = cs.initial_state()
        >>> cs.initial_memory(0.0, q, v, 1e-3, 1e-6).shape   # no memory without such elements
        (0,)
        """
        return initial_memory(self, t, q, v, h, closed_gap)

    # ---------------------------------------------------------------- initial state
    def initial_problems(self, t0: float = 0.0) -> list[str]:
        """Every element whose equations, gaps or forces (or the derivatives the stepper
        uses) are not finite at the initial state: t0, the bodies' initial q and v, the
        elements' initial memory.

        Parameters
        ----------
        t0 : float
            The start time (s).

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> cs.initial_problems()
        []
        """
        return initial_problems(self, t0)

    def state_problems(self, t: float, q: ArrayLike, v: ArrayLike, z: ArrayLike) -> list[str]:
        """Every joint or element whose equations or forces are not finite (or beyond
        OVERFLOW) at time ``t`` and the state (q, v, history z): what a step that met
        non-finite numbers names.

        Parameters
        ----------
        t : float
            Time (s).
        q, v : array_like, shapes (nq,), (nv,)
            The state.
        z : array_like, shape (n_history,)
            The force elements' memory.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> _ = s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)))
        >>> cs = s.compile()
        >>> cs.state_problems(0.0, *cs.initial_state(), cs.initial_history())
        []
        """
        return state_problems(self, t, q, v, z)

    # ---------------------------------------------------------------- helpers
    def gap_of_coordinates(self, d: Symbolic) -> Symbolic:
        """The gaps g(d), a column (n_gap), as expressions of the stacked contact coordinates
        ``d`` (n_coordinates).

        Parameters
        ----------
        d : CasADi column, shape (n_coordinates,)
            The contact coordinates (``contact_coordinates(q)``'s output).

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> import casadi as ca
        >>> cs.gap_of_coordinates(ca.SX.sym("d", 0)).shape    # a pendulum has no gaps
        (0, 1)
        """
        rows = [gap_law(d[a] if radius is None else d[a:b], radius) for a, b, radius in self.gap_laws]
        return ca.vertcat(*rows) if rows else ca.SX(0, 1)

    def states_of(self, el: Element) -> list[BodyState]:
        """The symbolic states (functions of ``q_sym``, ``v_sym``) of ``el``'s bodies, in its
        order (ground's is constant).

        Parameters
        ----------
        el : Element
            A joint or force element of the system.

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> ground, child = cs.states_of(cs.system.constraints[0])
        >>> child.r
        SX([q_0, q_1, q_2])
        """
        return [self._states[id(b)] for b in el.bodies]

    def initial_history(self) -> np.ndarray:
        """The force elements' memory at the start (z, shape (n_history,), stacked in
        ``history_rows`` order).

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> cs.initial_history().shape   # gravity and the joint keep no memory
        (0,)
        """
        parts = [np.asarray(r.element.initial_history(), dtype=float).ravel()
                 for r in self.history_rows]
        return np.concatenate(parts) if parts else np.zeros(0)

    def initial_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q0, v0) from the bodies' initial data.

        Returns
        -------
        q0 : ndarray, shape (7 n_bodies,)
            [r, p] per body.
        v0 : ndarray, shape (6 n_bodies,)
            [rdot (global), w' (body)] per body.

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> q, v = cs.initial_state()
        >>> q.tolist(), v.tolist()
        ([0.05, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        """
        q = np.concatenate([np.r_[b.position, b.orientation] for b in self.bodies])
        v = np.concatenate([np.r_[b.velocity, b.angular_velocity] for b in self.bodies])
        return q, v

    def body_slices(self, name: str) -> tuple[slice, slice]:
        """(q slice, v slice) of the body called ``name``: its 7 entries of q, its 6 of v.

        Parameters
        ----------
        name : str
            The body's name.

        Examples
        --------
        >>> from problems import chain
        >>> cs = chain.build(1).compile()          # a rod on a pivot, gravity -y
        >>> cs.body_slices("link0")
        (slice(0, 7, None), slice(0, 6, None))
        """
        b = self.system.body(name)
        k = b.index
        return slice(7 * k, 7 * k + 7), slice(6 * k, 6 * k + 6)

    @property
    def total_mass(self) -> float:
        return float(sum(b.mass for b in self.bodies))

    @property
    def model_size(self) -> float:
        """The mechanism's extent (m): the largest distance between body centres and joint
        points, or the largest body (sqrt(6 tr(J) / m), a slender rod's length), whichever
        is larger."""
        points = [b.position for b in self.bodies]
        for element in (*self.system.constraints, *self.system.gaps):
            point = getattr(element, "point", None)
            if point is not None and np.size(point) == 3:
                points.append(np.asarray(point, dtype=float).ravel())
        points = np.array(points, dtype=float).reshape(-1, 3)
        spread = np.linalg.norm(points[:, None] - points[None], axis=2).max(initial=0.0)
        bodies = max((np.sqrt(6 * np.trace(b.inertia) / b.mass) for b in self.bodies), default=0.0)
        return float(max(spread, bodies))
