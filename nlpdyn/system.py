"""System: holds bodies and elements, validates them, compiles them once into CasADi functions."""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from .body import BodyState, Ground, RigidBody, ground_state
from .forces.base import ForceElement
from .forces.elements import Gravity
from .joints.base import BilateralConstraint, Element, UnilateralConstraint, gap_law
from .rotations import G_matrix


class ModelError(ValueError):
    """Invalid model data; the message lists every problem found, each naming its culprit."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("invalid model:\n  - " + "\n  - ".join(self.problems))


class System:
    """A multibody system: bodies, constraints (joints, drivers, gaps) and force elements.

    Declare, compile, run: elements are added, :meth:`compile` validates and builds the
    CasADi functions once, and the system is locked afterwards.

    Example
    -------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0))
    >>> s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0)))  # doctest: +ELLIPSIS
    <nlpdyn.joints.ideal.Revolute object at ...>
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81)):
        self.gravity = np.asarray(gravity, dtype=float)
        self.ground = Ground()
        self.bodies: list[RigidBody] = []
        self.constraints: list[BilateralConstraint] = []
        self.gaps: list[UnilateralConstraint] = []
        self.forces: list[ForceElement] = []
        self._compiled = None

    # ---------------------------------------------------------------- declaration
    def _check_open(self):
        if self._compiled is not None:
            raise RuntimeError("the system is compiled and locked; build a new System to change it")

    def add_body(self, name, mass, inertia, position=(0, 0, 0), orientation=(1, 0, 0, 0),
                 velocity=(0, 0, 0), angular_velocity=(0, 0, 0)) -> RigidBody:
        """Add a rigid body (see :class:`~nlpdyn.body.RigidBody`; angular velocity in the body frame)."""
        self._check_open()
        body = RigidBody(name, mass, inertia, position, orientation, velocity, angular_velocity)
        self.bodies.append(body)
        return body

    def add_joint(self, joint):
        """Add an ideal joint, driver, programmed constraint or clearance joint."""
        self._check_open()
        if isinstance(joint, UnilateralConstraint):
            self.gaps.append(joint)
        elif isinstance(joint, BilateralConstraint):
            self.constraints.append(joint)
        else:
            raise TypeError(f"add_joint expects a joint or constraint, got {type(joint).__name__}")
        return joint

    def add_force(self, force: ForceElement):
        """Add a force element (point load, spring-damper, ...). Gravity is added automatically."""
        self._check_open()
        if not isinstance(force, ForceElement):
            raise TypeError(f"add_force expects a force element, got {type(force).__name__}")
        self.forces.append(force)
        return force

    def body(self, name: str) -> RigidBody:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(f"no body named {name!r}; bodies: {[b.name for b in self.bodies]}")

    # ---------------------------------------------------------------- validation
    def _name_elements(self):
        counts: dict[str, int] = {}
        for el in [*self.constraints, *self.gaps, *self.forces]:
            if el.name is None:
                base = type(el).__name__.lower()
                counts[base] = counts.get(base, 0) + 1
                el.name = f"{base}{counts[base]}"

    def validate(self) -> None:
        """Check every body and element; raise :class:`ModelError` listing all problems."""
        self._name_elements()
        problems: list[str] = []
        if not self.bodies:
            problems.append("the system has no bodies")
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            problems.append(f"gravity must be 3 finite numbers, got {self.gravity.tolist()}")
        names = [b.name for b in self.bodies]
        for n in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"body name '{n}' is used more than once")
        if self.ground.name in names:
            problems.append(f"body name '{self.ground.name}' is reserved for the ground")
        for b in self.bodies:
            problems += b.problems()
        elements = [*self.constraints, *self.gaps, *self.forces]
        el_names = [e.name for e in elements]
        for n in sorted({n for n in el_names if el_names.count(n) > 1}):
            problems.append(f"element name '{n}' is used more than once")
        known = {id(b) for b in self.bodies} | {id(self.ground)}
        for el in elements:
            problems += el.problems()
            for b in el.bodies:
                if isinstance(b, RigidBody) and id(b) not in known:
                    problems.append(f"{el.label}: body '{b.name}' is not part of this system")
        if problems:
            raise ModelError(problems)

    # ---------------------------------------------------------------- compilation
    def compile(self) -> "CompiledSystem":
        """Validate, then build the CasADi functions (once; later calls return the same object)."""
        if self._compiled is None:
            self.validate()
            self._compiled = CompiledSystem(self)
        return self._compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None


@dataclass
class ElementRows:
    """Where an element's rows sit in the stacked constraint or gap vector."""

    name: str
    element: Element
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


class CompiledSystem:
    """The system as named CasADi functions of q (7 per body), v (6 per body) and t.

    Functions (all closed, SX): ``phi(q, t)``, ``phi_q(q, t)``, ``phi_t(q, t)``, ``gap(q)``,
    ``gap_q(q)``, ``contact_coordinates(q)`` and ``contact_coordinates_q(q)`` (d and
    dd/dq; ``gap_of_coordinates`` gives g(d)), ``forces(t, q, v, z)`` (Q_A - S; z: the force elements' memory, see
    ``initial_history``), ``forces_explicit`` / ``forces_implicit`` (the same split by where
    each element is evaluated; S goes with the explicit part), ``history_next(t, q, v, z)``,
    ``element_forces(t, q, v, z)`` (nv x n_elements, Q of each force element, gravity
    first), ``element_potentials(t, q)``, ``element_conservative_forces(t, q)`` (nv x n_elements,
    -dV/dq of each element's stored energy as a generalised force), ``gyroscopic(v)`` (S),
    ``energy(t, q, v)``, ``kinetic(v)``,
    ``potential(t, q)``, ``velocity_jacobian(q, t)`` (Pi, rows of d/dt Phi = Pi v).
    """

    def __init__(self, system: System):
        self.system = system
        bodies = system.bodies
        for i, b in enumerate(bodies):
            b.index = i
        self.bodies = bodies
        self.n_bodies = len(bodies)
        self.nq, self.nv = 7 * self.n_bodies, 6 * self.n_bodies

        q = ca.SX.sym("q", self.nq)
        v = ca.SX.sym("v", self.nv)
        t = ca.SX.sym("t")
        self._states = {id(system.ground): ground_state(system.ground)}
        for b in bodies:
            k = b.index
            self._states[id(b)] = BodyState(b, q[7 * k:7 * k + 3], q[7 * k + 3:7 * k + 7],
                                            v[6 * k:6 * k + 3], v[6 * k + 3:6 * k + 6])

        # Bilateral constraints.
        rows, self.constraint_rows, start = [], [], 0
        for el in system.constraints:
            expr = ca.vec(ca.SX(el.equations(self.states_of(el), t)))
            if el.n_equations is None:
                el.n_equations = expr.numel()
            if expr.numel() != el.n_equations:
                raise ModelError([f"{el.label}: returned {expr.numel()} equations, "
                                  f"expected {el.n_equations}"])
            rows.append(expr)
            self.constraint_rows.append(ElementRows(el.name, el, start, start + expr.numel()))
            start += expr.numel()
        phi = ca.vertcat(*rows) if rows else ca.SX(0, 1)
        self.n_eq = phi.numel()

        # Unilateral gaps, each the law of its contact coordinates: g = d (flat) or
        # g = radius - |d| (round); see UnilateralConstraint.
        coords, self.gap_rows, self.gap_laws, problems = [], [], [], []
        n_d = 0
        for el in system.gaps:
            pairs = el.contact_coordinates(self.states_of(el))
            start = len(self.gap_laws)
            for d, radius in pairs:
                d = ca.vec(ca.SX(d))
                if radius is None and d.numel() != 1:
                    problems.append(f"{el.label}: a flat gap needs one contact coordinate, got {d.numel()}")
                if radius is not None and not (np.isfinite(radius) and radius > 0):
                    problems.append(f"{el.label}: a round gap needs a radius > 0, got {radius}")
                coords.append(d)
                self.gap_laws.append((n_d, n_d + d.numel(), None if radius is None else float(radius)))
                n_d += d.numel()
            self.gap_rows.append(ElementRows(el.name, el, start, len(self.gap_laws)))
        if problems:
            raise ModelError(problems)
        d_all = ca.vertcat(*coords) if coords else ca.SX(0, 1)
        self.n_gap, self.n_coordinates = len(self.gap_laws), n_d
        gap = self.gap_of_coordinates(d_all)

        # Applied forces and gyroscopic terms: Q_A - S, split by where each element is
        # evaluated (start of step: explicit, end of step: implicit); memory z per element.
        gravity = Gravity(bodies, system.gravity)
        self.force_elements = [gravity, *system.forces]
        z = ca.SX.sym("z", sum(el.history_size for el in self.force_elements))
        self.n_history = z.numel()
        self.history_rows, z_next, start = [], [], 0
        Q = {"explicit": ca.SX.zeros(self.nv), "implicit": ca.SX.zeros(self.nv)}
        element_Q, element_V = [], []
        potential = ca.SX(0)
        for el in self.force_elements:
            states = self.states_of(el)
            memory = z[start:start + el.history_size] if el.history_size else None
            if el.history_size:
                self.history_rows.append(ElementRows(el.name, el, start, start + el.history_size))
                z_next.append(ca.vec(ca.SX(el.next_history(states, t, memory))))
                start += el.history_size
            wrenches = el.wrenches(states, t, memory) if el.history_size else el.wrenches(states, t)
            Q_el = ca.SX.zeros(self.nv)
            for b, (f, n) in zip(el.bodies, wrenches):
                if b.is_ground:
                    continue
                k = b.index
                Q_el[6 * k:6 * k + 3] += f
                Q_el[6 * k + 3:6 * k + 6] += n
            Q[el.evaluation] += Q_el
            element_Q.append(Q_el)
            pe = el.potential_energy(states, t)
            element_V.append(ca.SX(0) if pe is None else ca.SX(pe))
            potential += element_V[-1]
        self.implicit_elements = [el.name for el in self.force_elements if el.evaluation == "implicit"]
        M = np.zeros((self.nv, self.nv))
        S = ca.SX.zeros(self.nv)
        for b in bodies:
            k = b.index
            M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = b.mass * np.eye(3)
            M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = b.inertia
            w = v[6 * k + 3:6 * k + 6]
            S[6 * k + 3:6 * k + 6] = ca.cross(w, ca.DM(b.inertia) @ w)
        self.M = M
        self.L = np.linalg.cholesky(M)  # M = L L^T; scaled velocities y = L^T v
        kinetic = 0.5 * ca.dot(v, ca.DM(M) @ v)

        # Velocity Jacobians: d/dt f(q) = f_q qdot with pdot = 1/2 G(p)^T w'.
        qdot_of_v = ca.vertcat(*[ca.vertcat(v[6 * k:6 * k + 3],
                                            0.5 * G_matrix(q[7 * k + 3:7 * k + 7]).T @ v[6 * k + 3:6 * k + 6])
                                 for k in range(self.n_bodies)])
        phi_q = ca.jacobian(phi, q)
        gap_q = ca.jacobian(gap, q)
        Pi = ca.jacobian(ca.mtimes(phi_q, qdot_of_v), v)
        Pi_g = ca.jacobian(ca.mtimes(gap_q, qdot_of_v), v)

        def fn(name, ins, outs):
            f = ca.Function(name, [x for _, x in ins], list(outs.values()),
                            [n for n, _ in ins], list(outs.keys()))
            assert not f.has_free()
            return f

        self.phi = fn("phi", [("q", q), ("t", t)], {"phi": phi})
        self.phi_q = fn("phi_q", [("q", q), ("t", t)], {"phi_q": phi_q})
        self.phi_t = fn("phi_t", [("q", q), ("t", t)], {"phi_t": ca.jacobian(phi, t)})
        self.velocity_jacobian = fn("Pi", [("q", q), ("t", t)], {"Pi": Pi})
        self.gap = fn("gap", [("q", q)], {"gap": gap})
        self.gap_q = fn("gap_q", [("q", q)], {"gap_q": gap_q})
        self.gap_jacobian = fn("Pi_g", [("q", q)], {"Pi_g": Pi_g})
        self.contact_coordinates = fn("contact_coordinates", [("q", q)], {"d": d_all})
        self.contact_coordinates_q = fn("contact_coordinates_q", [("q", q)],
                                        {"d_q": ca.jacobian(d_all, q)})
        points = [ca.SX(el.contact_points(self.states_of(el))) for el in system.gaps]
        self.contact_points = fn("contact_points", [("q", q)],
                                 {"points": ca.vertcat(*points) if points else ca.SX(0, 3)})
        tqvz = [("t", t), ("q", q), ("v", v), ("z", z)]
        self.forces = fn("forces", tqvz, {"Q_minus_S": Q["explicit"] + Q["implicit"] - S})
        self.forces_explicit = fn("forces_explicit", tqvz, {"Q_minus_S": Q["explicit"] - S})
        self.forces_implicit = fn("forces_implicit", tqvz, {"Q": Q["implicit"]})
        self.history_next = fn("history_next", tqvz,
                               {"z_next": ca.vertcat(*z_next) if z_next else ca.SX(0, 1)})
        self.element_forces = fn("element_forces", tqvz, {"Q": ca.horzcat(*element_Q)})
        self.element_potentials = fn("element_potentials", [("t", t), ("q", q)],
                                     {"V": ca.vertcat(*element_V)})
        # the part of each element's force that derives from its stored energy (the rest is
        # the element's non-conservative work: damping, hysteresis, applied loads)
        T_v = ca.jacobian(qdot_of_v, v)
        self.element_conservative_forces = fn(
            "element_conservative_forces", [("t", t), ("q", q)],
            {"Q_V": ca.densify(ca.horzcat(*[-(ca.jacobian(V, q) @ T_v).T for V in element_V]))})
        self.gyroscopic = fn("gyroscopic", [("v", v)], {"S": S})
        self.kinetic = fn("kinetic", [("v", v)], {"T": kinetic})
        self.potential = fn("potential", [("t", t), ("q", q)], {"V": potential})
        self.energy = fn("energy", [("t", t), ("q", q), ("v", v)], {"E": kinetic + potential})
        self.q_sym, self.v_sym, self.t_sym, self.z_sym = q, v, t, z
        self.phi_expr, self.gap_expr = phi, gap

    # ---------------------------------------------------------------- helpers
    def gap_of_coordinates(self, d):
        """The gaps as expressions of the stacked contact coordinates ``d`` (n_coordinates)."""
        rows = [gap_law(d[a] if radius is None else d[a:b], radius) for a, b, radius in self.gap_laws]
        return ca.vertcat(*rows) if rows else ca.SX(0, 1)

    def states_of(self, el: Element) -> list[BodyState]:
        return [self._states[id(b)] for b in el.bodies]

    def initial_history(self) -> np.ndarray:
        """The force elements' memory at the start (z, stacked in ``history_rows`` order)."""
        parts = [np.asarray(r.element.initial_history(), dtype=float).ravel()
                 for r in self.history_rows]
        return np.concatenate(parts) if parts else np.zeros(0)

    def initial_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q0, v0) from the bodies' initial data."""
        q = np.concatenate([np.r_[b.position, b.orientation] for b in self.bodies])
        v = np.concatenate([np.r_[b.velocity, b.angular_velocity] for b in self.bodies])
        return q, v

    def body_slices(self, name: str) -> tuple[slice, slice]:
        """(q slice, v slice) of the body called ``name``."""
        b = self.system.body(name)
        k = b.index
        return slice(7 * k, 7 * k + 7), slice(6 * k, 6 * k + 6)

    @property
    def total_mass(self) -> float:
        return float(sum(b.mass for b in self.bodies))
