"""System: holds bodies and elements, validates them, compiles them once into CasADi functions."""
from __future__ import annotations

import types
from dataclasses import dataclass

import casadi as ca
import numpy as np

from .body import BodyState, Ground, RigidBody, ground_state
from .checks import (ModelError, as_number, as_vector, failure_reason, is_number, name_problems,
                     show)
from .discrete_gradient import discrete_gradient
from .forces.base import ForceElement
from .forces.elements import Gravity
from .joints.base import BilateralConstraint, Element, UnilateralConstraint, gap_law
from .joints.nonholonomic import VelocityConstraint
from .rotations import G_matrix, normalised_rotation_matrix

# Names of built-in entries of the results (the gravity element), not available to users.
RESERVED_NAMES = ("gravity",)

OVERFLOW = 1e150
"""A force beyond this magnitude (N, N m) is named as the cause of a failed step: the step's
energies square it past the largest float."""
# Gravity beyond LARGEST_GRAVITY (m/s^2), or whose potential energy over the model's extent
# (|g| m_total extent) is beyond LARGEST_ENERGY (J), is refused: forces, energies and their
# sums over a run stay far from overflow (1.8e308). A neutron star's surface has 1e12 m/s^2.
LARGEST_GRAVITY = 1e100
LARGEST_ENERGY = 1e200

NOT_FINITE_HINT = ("(a value outside a function's domain, or a math/numpy function applied to "
                   "a CasADi symbol: use ca.sqrt, ca.exp, ...)")


class System:
    """A multibody system: bodies, constraints (joints, drivers, gaps) and force elements.

    Declare, compile, run: elements are added, :meth:`compile` validates and builds the
    CasADi functions, and no body or element can be added afterwards. Parameters may still
    be changed (a body's mass, a spring's stiffness, ...): the next :meth:`compile` (every
    ``simulate`` and ``Stepper`` calls it) sees the change and validates and builds again.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0))
    >>> s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0)))  # doctest: +ELLIPSIS
    <nlpdyn.joints.ideal.Revolute object at ...>
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81)):
        self.gravity = as_vector(gravity)
        self.ground = Ground()
        self.bodies: list[RigidBody] = []
        self.constraints: list[BilateralConstraint] = []
        self.gaps: list[UnilateralConstraint] = []
        self.forces: list[ForceElement] = []
        self._compiled = None
        self._fingerprint = None

    @property
    def gravity(self) -> np.ndarray:
        """Gravity's acceleration (m/s^2, global); set it as any 3 numbers.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> s.gravity = (0, -9.81, 0)
        >>> s.gravity
        array([ 0.  , -9.81,  0.  ])
        """
        return self._gravity

    @gravity.setter
    def gravity(self, value):
        self._gravity = as_vector(value)

    # ---------------------------------------------------------------- declaration
    def _check_open(self):
        if self._compiled is not None:
            raise RuntimeError("the system is compiled and locked; build a new System to change it")

    def add_body(self, name, mass, inertia, position=(0, 0, 0), orientation=(1, 0, 0, 0),
                 velocity=(0, 0, 0), angular_velocity=(0, 0, 0), geometry=None) -> RigidBody:
        """Add a rigid body (see :class:`~nlpdyn.body.RigidBody`; angular velocity in the
        body frame; ``geometry`` the shapes that draw it)."""
        self._check_open()
        body = RigidBody(name, mass, inertia, position, orientation, velocity, angular_velocity,
                         geometry=geometry)
        self.bodies.append(body)
        return body

    def set_geometry(self, body, geometry) -> None:
        """Draw ``body`` (the body or its name) with ``geometry``: a shape or a list of
        shapes (``nd.Box``, ``nd.Cylinder``, ``nd.Sphere``, ``nd.Link``; body frame, from the
        centre of mass), None for the default (:mod:`nlpdyn.geometry`). Allowed after a run:
        shapes only draw.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> s.set_geometry("ball", nd.Sphere(radius=0.05))
        """
        body = self.body(body) if isinstance(body, str) else body
        body.geometry = geometry

    def add_joint(self, joint):
        """Add an ideal joint, driver, programmed constraint or clearance joint; one added
        without a name gets one here (``revolute1``, ...), used by the result's lookups."""
        self._check_open()
        if isinstance(joint, UnilateralConstraint):
            self.gaps.append(joint)
        elif isinstance(joint, BilateralConstraint):
            self.constraints.append(joint)
        else:
            raise TypeError(f"add_joint expects a joint or constraint, got {type(joint).__name__}")
        self._give_name(joint)
        return joint

    def add_force(self, force: ForceElement):
        """Add a force element (point load, spring-damper, ...), naming it like
        :meth:`add_joint`. Gravity is added automatically."""
        self._check_open()
        if not isinstance(force, ForceElement):
            raise TypeError(f"add_force expects a force element, got {type(force).__name__}")
        self.forces.append(force)
        self._give_name(force)
        return force

    def body(self, name: str) -> RigidBody:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(f"no body named {name!r}; bodies: {[b.name for b in self.bodies]}")

    @property
    def elements(self) -> list[Element]:
        return [*self.constraints, *self.gaps, *self.forces]

    # ---------------------------------------------------------------- validation
    def _give_name(self, el):
        """Name an element added without one (``revolute1``, ``hinge_rotation`` for a driver
        of the joint ``hinge``, ...), so that ``joint.name`` is known from ``add_joint`` on."""
        if el.name is None:
            taken = {e.name for e in self.elements} | {b.name for b in self.bodies}
            el.name = el.default_name(taken | {self.ground.name, *RESERVED_NAMES})

    def _name_elements(self):
        for el in self.elements:        # a name set back to None after add_*
            self._give_name(el)

    def _name_problems(self) -> list[str]:
        """Names are one namespace (bodies, the ground, elements, the built-in gravity)."""
        out = []
        bodies = [b.name for b in self.bodies if isinstance(b.name, str)]
        for n in sorted({n for n in bodies if bodies.count(n) > 1}):
            out.append(f"body name '{n}' is used more than once")
        if self.ground.name in bodies:
            out.append(f"body name '{self.ground.name}' is reserved for the ground")
        elements = [e.name for e in self.elements if isinstance(e.name, str)]
        for n in sorted({n for n in elements if elements.count(n) > 1}):
            out.append(f"element name '{n}' is used more than once")
        for owner in [*self.bodies, *self.elements]:
            if owner.name in RESERVED_NAMES:
                out.append(f"{owner.label}: the name '{owner.name}' is reserved for the "
                           "built-in gravity element")
        for el in self.elements:
            if el.name == self.ground.name or el.name in bodies:
                out.append(f"{el.label}: the name '{el.name}' is already a body's; names of "
                           "bodies and elements must differ")
        return out

    def _check(self) -> tuple[list[str], set[int]]:
        """(every problem with the model's data, ids of the bodies and elements that have one)."""
        self._name_elements()
        problems: list[str] = []
        invalid: set[int] = set()
        if not self.bodies:
            problems.append("the system has no bodies")
        if not (isinstance(self.gravity, np.ndarray) and self.gravity.shape == (3,)
                and np.all(np.isfinite(self.gravity))):
            problems.append(f"gravity must be 3 finite numbers, got {show(self.gravity)}")
        problems += self._name_problems()
        for b in self.bodies:
            found = _own_problems(b)
            problems += found
            if found:
                invalid.add(id(b))
        problems += self._gravity_scale_problems(invalid)
        known = {id(b) for b in self.bodies} | {id(self.ground)}
        joints = {id(j) for j in self.constraints}
        for el in self.elements:
            found = _own_problems(el)
            for b in el.bodies:
                if isinstance(b, RigidBody) and id(b) not in known:
                    found.append(f"{el.label}: body '{b.name}' is not part of this system")
            # a driver acts through its joint's equations, joint friction through its
            # reaction: the joint must be in the system
            joint = getattr(el, "joint", None)
            if (isinstance(el, BilateralConstraint) or hasattr(el, "normal_force_slot")) \
                    and isinstance(joint, Element) and id(joint) not in joints:
                found.append(f"{el.label}: its {joint.label} is not part of this system "
                             "(add it with add_joint)")
            problems += found
            if found:
                invalid.add(id(el))
        return problems, invalid

    def _gravity_scale_problems(self, invalid) -> list[str]:
        """Gravity whose magnitude or energy over the valid bodies overflows (LARGEST_GRAVITY,
        LARGEST_ENERGY); the extent is the diagonal of the box around the bodies and the
        origin (gravity's potential is measured from it), at least 1 m."""
        g = self.gravity
        if not (isinstance(g, np.ndarray) and g.shape == (3,) and np.all(np.isfinite(g))):
            return []           # refused above
        with np.errstate(over="ignore"):
            size = float(np.linalg.norm(g))
        if size > LARGEST_GRAVITY:
            return [f"gravity must be at most {LARGEST_GRAVITY:g} m/s^2 in magnitude (forces "
                    f"and energies kept far from overflow), got {show(g)}"]
        bodies = [b for b in self.bodies if id(b) not in invalid]
        if not bodies or size == 0:
            return []
        mass = sum(b.mass for b in bodies)
        points = np.array([np.zeros(3), *(b.position for b in bodies)])
        with np.errstate(over="ignore", invalid="ignore"):
            extent = max(1.0, float(np.linalg.norm(points.max(axis=0) - points.min(axis=0))))
            energy = float(np.float64(size) * mass * extent)
        if energy <= LARGEST_ENERGY:
            return []
        return [f"gravity: |g| = {size:g} m/s^2 on {mass:g} kg of bodies over {extent:g} m "
                f"makes energies of {energy:g} J, beyond {LARGEST_ENERGY:g} J (kept far from "
                "overflow, 1.8e308)"]

    def problems(self, t0: float = 0.0) -> list[str]:
        """Every problem :meth:`compile` would raise at ``t0`` (empty when it compiles), found
        without compiling: the system stays open to new bodies and elements."""
        compiled = self._compiled
        try:
            if compiled is None or self._fingerprint != _fingerprint(self):
                problems, invalid = self._check()
                compiled = CompiledSystem(self, problems, invalid)
            return compiled.initial_problems(t0)
        except ModelError as err:
            return err.problems

    def validate(self) -> None:
        """Check every body's and element's data; raise :class:`ModelError` listing all
        problems. :meth:`compile` also reports user functions that fail and values that are
        not finite at the initial state."""
        problems, _ = self._check()
        if problems:
            raise ModelError(problems)

    # ---------------------------------------------------------------- compilation
    def compile(self, t0: float = 0.0) -> "CompiledSystem":
        """Validate, build the CasADi functions and check them at the initial state (t0).

        Raises :class:`ModelError` listing every problem: invalid data, user functions that
        fail or return the wrong size, equations, gaps or forces that are not finite at the
        initial state. Built once: later calls return the same object unless a parameter of
        a body or an element changed since (a fingerprint of all of them is compared), in
        which case the system is validated and built again.
        """
        compiled = self._compiled
        if compiled is None or self._fingerprint != _fingerprint(self):
            problems, invalid = self._check()
            compiled = CompiledSystem(self, problems, invalid)
        problems = compiled.initial_problems(t0)
        if problems:
            raise ModelError(problems)
        if compiled is not self._compiled:
            self._compiled, self._fingerprint = compiled, _fingerprint(self)
        return compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None


def _hashes(*symbols) -> set[int]:
    return {x.element_hash() for s in symbols for x in ca.symvar(s)}


def _attempt(el, problems, build):
    """build(), or None with a problem naming ``el`` added to ``problems`` when it fails."""
    try:
        return build()
    except ModelError as err:
        problems.extend(err.problems)
    except Exception as err:
        problems.append(f"{el.label}: building its expressions failed: {failure_reason(err)}")
    return None


def _own_problems(owner) -> list[str]:
    """owner.problems(), and the owner's name; a check that fails is itself a problem."""
    try:
        found = list(owner.problems())
    except Exception as err:
        found = [f"{owner.label}: checking its data failed: {failure_reason(err)}"]
    if isinstance(owner, Element):          # bodies check their names themselves
        found = name_problems(owner.label, owner.name) + found
    return found


# ---------------------------------------------------------------- parameter fingerprint
class _Same:
    """Compares by identity: functions and CasADi symbols, whose content cannot be compared."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj


_BY_IDENTITY = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, ca.SX, ca.MX,
                ca.Function, type)


def _snapshot(value, seen):
    """A comparable copy of ``value`` and of everything it holds (attributes, items)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, np.integer)):
        return ("int", int(value))
    if isinstance(value, (float, np.floating)):
        return ("float", float(value).hex())
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return ("array", value.shape, tuple(_snapshot(x, seen) for x in value.ravel()))
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, ca.DM):
        return ("DM", value.shape, value.full().tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_snapshot(x, seen) for x in value))
    if isinstance(value, dict):
        return ("dict", tuple((_snapshot(k, seen), _snapshot(v, seen)) for k, v in value.items()))
    if isinstance(value, _BY_IDENTITY) or not hasattr(value, "__dict__"):
        return _Same(value)
    if id(value) in seen:
        return ("seen", seen[id(value)])
    seen[id(value)] = len(seen)
    # ``_cache``: data an element derives from its parameters; ``geometry``: a body's shapes,
    # which only draw
    return (_Same(type(value)), tuple((k, _snapshot(v, seen)) for k, v in vars(value).items()
                                      if k not in ("_cache", "geometry")))


def _fingerprint(system: System):
    """Everything the compiled functions depend on, to tell whether a parameter changed."""
    return _snapshot((system.gravity, system.ground, system.bodies, system.constraints,
                      system.gaps, system.forces), {})


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
    """

    def __init__(self, system: System, problems=(), invalid=frozenset()):
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
        self._symbols = _hashes(q, v, t)
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
                built = _attempt(el, problems, lambda: self._velocity_rows(el, t, v))
                if built is None:
                    continue
                velocity_rows.append((start, *built))
                expr = ca.SX.zeros(built[1].numel())
            else:
                expr = _attempt(el, problems, lambda: self._equations(el, t))
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
            built = _attempt(el, problems, lambda: self._contact_coordinates(el))
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
        history_sizes = [_attempt(el, problems, lambda: int(el.history_size)) for el in elements]
        self.force_elements = [el for el, size in zip(elements, history_sizes) if size is not None]
        z = ca.SX.sym("z", sum(size for size in history_sizes if size is not None))
        self._symbols |= _hashes(z)
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
            built = _attempt(el, problems, lambda: self._force_terms(el, t, memory))
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
        self._friction_terms(t, q, v, z)
        M = np.zeros((self.nv, self.nv))
        S = ca.SX.zeros(self.nv)
        for b in bodies:
            k = b.index
            M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = b.mass * np.eye(3)
            M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = b.inertia
            w = v[6 * k + 3:6 * k + 6]
            S[6 * k + 3:6 * k + 6] = ca.cross(w, ca.DM(b.inertia) @ w)
        self.M = M
        # M = L L^T block by block (3 x 3: M is block diagonal); scaled velocities y = L^T v
        self.L = np.zeros_like(M)
        for i in range(0, self.nv, 3):
            self.L[i:i + 3, i:i + 3] = np.linalg.cholesky(M[i:i + 3, i:i + 3])
        kinetic = 0.5 * ca.dot(v, ca.DM(M) @ v)

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
        self._energy_consistent(element_terms)

    # ---------------------------------------------------------------- element expressions
    def _equations(self, el, t):
        expr = ca.vec(ca.SX(el.equations(self.states_of(el), t)))
        if el.n_equations is None:
            el.n_equations = expr.numel()
        if expr.numel() != el.n_equations:
            raise ModelError([f"{el.label}: returned {expr.numel()} equations, "
                              f"expected {el.n_equations}"])
        self._require_own_symbols(el, expr)
        return expr

    def _velocity_rows(self, el, t, v):
        """(C, zeta) of a velocity constraint's rows C v - zeta, C (n, nv) and zeta (n, 1)
        functions of q and t."""
        expr = ca.vec(ca.SX(el.velocity_equations(self.states_of(el), t)))
        el.n_equations = expr.numel()
        self._require_own_symbols(el, expr)
        C = ca.jacobian(expr, v)
        if ca.depends_on(C, v):
            raise ModelError([f"{el.label}: its equations must be linear in the velocities"])
        return C, -ca.substitute(expr, v, ca.DM.zeros(v.numel()))

    def _contact_coordinates(self, el):
        """([(d, radius or None)], contact points) of a gap element."""
        states = self.states_of(el)
        pairs, problems = [], []
        for d, radius in el.contact_coordinates(states):
            d = ca.vec(ca.SX(d))
            if radius is None and d.numel() != 1:
                problems.append(f"{el.label}: a flat gap needs one contact coordinate, got {d.numel()}")
            if radius is not None:
                radius = as_number(radius)
                if not (is_number(radius) and radius > 0):
                    problems.append(f"{el.label}: a round gap needs a radius > 0, got {show(radius)}")
            pairs.append((d, radius))
        if problems:
            raise ModelError(problems)
        points = ca.SX(el.contact_points(states))
        self._require_own_symbols(el, points, *(d for d, _ in pairs))
        return pairs, points

    def _force_terms(self, el, t, memory):
        """(Q of the element, its potential energy, its next memory or None)."""
        states = self.states_of(el)
        z_next = ca.vec(ca.SX(el.next_history(states, t, memory))) if el.history_size else None
        z_start = ca.vec(ca.SX(el.start_history(states, t, memory))) if el.history_size else None
        wrenches = el.wrenches(states, t, memory) if el.history_size else el.wrenches(states, t)
        Q_el = ca.SX.zeros(self.nv)
        for b, (f, n) in zip(el.bodies, wrenches):
            if b.is_ground:
                continue
            k = b.index
            Q_el[6 * k:6 * k + 3] += f
            Q_el[6 * k + 3:6 * k + 6] += n
        terms = []
        if el.evaluation == "implicit":
            terms = [(ca.SX(s), V) for s, V in el.potential_terms(states, t, memory)]
        if terms and type(el).potential_energy is ForceElement.potential_energy:
            pe = sum((V(s) for s, V in terms), ca.DM(0))   # the default's sum, terms built once
        else:
            pe = el.potential_energy(states, t, memory)
        V_el = ca.SX(0) if pe is None else ca.SX(pe)
        if el.evaluation == "implicit" and not terms and pe is not None:   # a potential given whole
            terms = [(V_el, lambda x: x)]
        self._require_own_symbols(el, Q_el, V_el, *([] if z_next is None else [z_next, z_start]),
                                  *(s for s, _ in terms))
        return Q_el, V_el, (z_next, z_start), terms

    # ---------------------------------------------------------------- energy-consistent elements
    def _energy_consistent(self, element_terms):
        """The energy-consistent ("implicit") elements: per element its coordinates s(q, t)
        and their Jacobian, and the carry's layout in the stepper's memory, after the
        elements' memory z: the last step's h (``carry_h_slot``), the energy the last step
        carried (``carry_energy_slot``, ``carried_energy``), then per element the conservative
        force of its last step on each moving body as global wrenches (f, n: 6 per body;
        ``carry_rows``)."""
        q, t, v = self.q_sym, self.t_sym, self.v_sym
        self.consistent, self.carry_rows = [], []
        self.carry_h_slot, self.carry_energy_slot = self.n_history, self.n_history + 1
        start = self.n_history + 2
        for j, (el, terms) in enumerate(zip(self.force_elements, element_terms)):
            if el.evaluation != "implicit":
                continue
            moving = [b.index for b in el.bodies if not b.is_ground]
            self.carry_rows.append(ElementRows(el.name, el, start, start + 6 * len(moving)))
            start += 6 * len(moving)
            s = ca.vertcat(*[s for s, _ in terms]) if terms else ca.SX(0, 1)
            coordinates = ca.Function(f"coordinates_{j}", [q, t], [s])
            w = ca.SX.sym("w", s.numel())
            pullback = ca.Function(f"coordinates_pullback_{j}", [q, t, w],
                                   [ca.jtimes(s, q, w, True)])
            self.consistent.append((j, coordinates, pullback, [V for _, V in terms], moving))
        self.n_carry = start - self.n_history if self.consistent else 0
        # then one flag per gap: closed at the start of the last step (the contact step tells
        # sustained contact from an impact by it)
        first = self.n_history + self.n_carry
        self.contact_slots = np.arange(first, first + self.n_gap)
        self.n_memory = first + self.n_gap
        memory = ca.SX.sym("memory", self.n_memory)
        self._carry_wrenches = ca.Function(
            "carry_wrenches", [t, q, self.z_sym],
            [ca.vertcat(*self._wrenches(self.element_conservative_forces(t, q, self.z_sym), q))
             if self.n_carry else ca.SX(0, 1)])
        self._carried_impulse = ca.Function(
            "carried_impulse", [q, memory], [self._carried(q, memory)[1]])
        self._recorded_step_forces = None
        self._recorded_midpoint = None

    @property
    def recorded_step_forces(self) -> ca.Function:
        """``recorded_step_forces(t0, h, q0, v0, q1, v1, z0, z1)`` -> Q (nv x n_elements):
        what every force element exerted over a recorded step (``step_forces`` with the
        memory at both ends), for the result's wrenches. Built on first use and evaluated
        once per run (mapped over the steps): without common subexpressions eliminated,
        which would cost more than they save."""
        if self._recorded_step_forces is None:
            q, v, t, memory = self.q_sym, self.v_sym, self.t_sym, ca.SX.sym("memory", self.n_memory)
            h = ca.SX.sym("h")
            q1, v1 = ca.SX.sym("q1", self.nq), ca.SX.sym("v1", self.nv)
            memory_end = ca.SX.sym("memory_end", self.n_memory)
            recorded = self.step_forces(t, h, q, v, q1, v1, memory, None, memory_end=memory_end)
            self._recorded_step_forces = ca.Function(
                "recorded_step_forces", [t, h, q, v, q1, v1, memory, memory_end],
                [ca.densify(recorded.Q)], ["t0", "h", "q0", "v0", "q1", "v1", "z0", "z1"], ["Q"])
        return self._recorded_step_forces

    def _rotations(self, q0):
        """The rotation of each moving body of the consistent elements at q0, by body index
        (built once per body, shared by every element and use; ``normalised_rotation_matrix``
        inlined from one function: the same operations, without Python's per-operation cost)."""
        p = ca.SX.sym("p", 4)
        rotation = ca.Function("normalised_rotation_matrix", [p], [normalised_rotation_matrix(p)])
        return {k: rotation(q0[7 * k + 3:7 * k + 7])
                for k in sorted({k for *_, moving in self.consistent for k in moving})}

    def _wrenches(self, G_V, q0, rotations=None):
        """Per consistent element, its column of ``G_V`` (nv x n_elements, generalised forces
        on the velocities at q0) as global wrenches of its moving bodies: the carry's layout
        after its two scalars. ``rotations``: ``_rotations(q0)`` where known."""
        rotations = self._rotations(q0) if rotations is None else rotations
        out = []
        for j, _, _, _, moving in self.consistent:
            for k in moving:
                out += [G_V[6 * k:6 * k + 3, j], rotations[k] @ G_V[6 * k + 3:6 * k + 6, j]]
        return out

    def _carried(self, q0, memory, rotations=None):
        """(last step's h, the impulse it carries into this step (h / 2 times its G_V,
        summed, on the velocities at q0), per consistent element the last G_V as generalised
        forces on the velocities at q0 (nv x n_elements)). ``rotations``: ``_rotations(q0)``
        where known."""
        G_V = ca.SX.zeros(self.nv, len(self.force_elements))
        if not self.n_carry:
            return ca.SX(0), ca.SX.zeros(self.nv), G_V
        rotations = self._rotations(q0) if rotations is None else rotations
        for (j, _, _, _, moving), r in zip(self.consistent, self.carry_rows):
            W = memory[r.start:r.stop]
            for i, k in enumerate(moving):
                A = rotations[k]
                G_V[6 * k:6 * k + 3, j] = W[6 * i:6 * i + 3]
                G_V[6 * k + 3:6 * k + 6, j] = A.T @ W[6 * i + 3:6 * i + 6]
        h_last = memory[self.carry_h_slot]
        return h_last, 0.5 * h_last * ca.sum2(G_V), G_V

    def step_forces(self, t0, h, q0, v0, q1, v1, memory, T, memory_end=None):
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
          stored energy's part of it (its stiffness alone), None without "implicit" contact
          elements or "split" damping.

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

        ``memory`` is the stepper's memory at the start of the step (z, then the carry);
        ``memory_end``: the memory at the end, whose carry holds this step's G_V (then ``T``
        is not needed: what a recorded step exerted)."""
        z = memory[:self.n_history]
        n_el = len(self.force_elements)
        tm, qm = t0 + 0.5 * h, 0.5 * (q0 + q1)
        Q_start = self.element_forces(t0, q0, v0, z)
        QV_start = self.element_conservative_forces(t0, q0, z)
        Q_end = self.element_forces(t0 + h, q1, v1, z)
        QV_end = self.element_conservative_forces(t0 + h, q1, z)
        Q_mid = self.element_forces(tm, qm, v1, z)
        QV_mid = self.element_conservative_forces(tm, qm, z)
        rotations = self._rotations(q0)
        h_last, carried, last_C = self._carried(q0, memory, rotations)
        G_V, D = ca.SX.zeros(self.nv, n_el), ca.SX.zeros(self.nv, n_el)
        C = ca.SX.zeros(self.nv, n_el)
        if memory_end is not None:
            C = self._carried(q0, memory_end, rotations)[2]
        split = ca.SX.zeros(self.nv, n_el)      # the damping that goes with the carry
        split_columns = [j for j, *_ in self.consistent
                         if self.force_elements[j].damping_step == "split"]
        for j, coordinates, pullback, laws, _ in self.consistent:
            D[:, j] = Q_mid[:, j] - QV_mid[:, j]
            if j in split_columns:
                split[:, j] = D[:, j]
            if memory_end is None:
                # the laws may hold the elements' memory (the system's z): the step's
                G_V[:, j] = ca.substitute(
                    -T.T @ discrete_gradient(lambda x: coordinates(x, tm),
                                             lambda x, w: pullback(x, tm, w), laws, q0, q1),
                    self.z_sym, z)
                C[:, j] = G_V[:, j] + split[:, j]
            else:
                G_V[:, j] = C[:, j] - split[:, j]
        whole = D - split
        Q_quarter = (self.element_forces(t0 + 0.25 * h, q0 + 0.25 * (q1 - q0), v1, z)
                     if self.consistent else None)
        # the stored energy's force a quarter into the step: the split damping's tangent, and
        # the contacts' stiffness (``ImplicitLinearisation.contact_stiffness``)
        QV_quarter = (self.element_conservative_forces(t0 + 0.25 * h, q0 + 0.25 * (q1 - q0), z)
                      if split_columns or any(self.force_elements[j].is_contact
                                              for j, *_ in self.consistent) else None)
        if split_columns:
            # a "split" damping acts with h / 2 in this step: half its derivative
            for j in split_columns:
                Q_quarter[:, j] = 0.5 * (Q_quarter[:, j] + QV_quarter[:, j])

        def in_step(j):
            # half of the step's force (discrete gradient and midpoint damping) now, half
            # in the next step, after half of the last one's
            carried_part = (0.5 * h_last * last_C[:, j] + 0.5 * h * C[:, j]) / h
            # the discrete gradient's derivative in q1 is half the Hessian at the midpoint
            # (to first order in q1 - q0), and it acts with h / 2: the force at a quarter of
            # the step, with v1, has the impulse's derivative in y
            return carried_part + whole[:, j], carried_part, Q_quarter[:, j]

        Q, Q_V, tangent = self._step_columns((Q_start, QV_start), (Q_end, QV_end), in_step)
        return types.SimpleNamespace(Q=Q, Q_V=Q_V, G_V=G_V, D=D, C=C, carried=carried,
                                     wrenches=self._wrenches(C, q0, rotations),
                                     tangent=tangent, tangent_V=QV_quarter)

    def _step_columns(self, explicit, end, in_step):
        """(Q, Q_V, tangent) of a step, nv x n_elements, each element's column by its
        evaluation: ``explicit`` and ``end`` the (Q, Q_V) that "explicit" and
        "backward_euler" elements take, ``in_step(j)`` an "implicit" one's three columns."""
        columns = []
        for j, el in enumerate(self.force_elements):
            if el.evaluation in ("explicit", "backward_euler"):
                Q, QV = explicit if el.evaluation == "explicit" else end
                columns.append((Q[:, j], QV[:, j], Q[:, j]))
            else:
                columns.append(in_step(j))
        return [ca.horzcat(*c) for c in zip(*columns)]

    def step_forces_midpoint(self, t0, h, q0, v0, qm, vf, q1, v1, memory, T):
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
          the impulse's derivative in v1 to first order."""
        z = memory[:self.n_history]
        n_el = len(self.force_elements)
        tm, q_chord, v_mean = t0 + 0.5 * h, 0.5 * (q0 + q1), 0.5 * (v0 + v1)
        Q_mid = self.element_forces(tm, qm, vf, z)
        QV_mid = self.element_conservative_forces(tm, qm, z)
        Q_end = self.element_forces(t0 + h, q1, v1, z)
        QV_end = self.element_conservative_forces(t0 + h, q1, z)
        Q_chord = self.element_forces(tm, q_chord, v_mean, z) if self.consistent else None
        QV_chord = (self.element_conservative_forces(tm, q_chord, z) if self.consistent
                    else None)
        G_V, D = ca.SX.zeros(self.nv, n_el), ca.SX.zeros(self.nv, n_el)
        for j, coordinates, pullback, laws, _ in self.consistent:
            D[:, j] = Q_chord[:, j] - QV_chord[:, j]
            G_V[:, j] = ca.substitute(
                -T.T @ discrete_gradient(lambda x: coordinates(x, tm),
                                         lambda x, w: pullback(x, tm, w), laws, q0, q1),
                self.z_sym, z)
        Q, Q_V, tangent = self._step_columns(
            (Q_mid, QV_mid), (Q_end, QV_end),
            lambda j: (G_V[:, j] + D[:, j], G_V[:, j], Q_chord[:, j]))
        zero = ca.SX.zeros(self.nv, n_el)
        return types.SimpleNamespace(Q=Q, Q_V=Q_V, G_V=G_V, D=D, C=zero,
                                     carried=ca.SX.zeros(self.nv),
                                     wrenches=self._wrenches(zero, q0), tangent=tangent,
                                     tangent_V=QV_chord if self.consistent else None)

    @property
    def recorded_step_forces_midpoint(self) -> ca.Function:
        """``recorded_step_forces_midpoint(t0, h, q0, v0, qm, vf, q1, v1, z0)`` -> Q (nv x
        n_elements): what every force element exerted over a recorded midpoint step
        (``step_forces_midpoint``), for the result's wrenches."""
        if self._recorded_midpoint is None:
            q, v, t, memory = self.q_sym, self.v_sym, self.t_sym, ca.SX.sym("memory", self.n_memory)
            h = ca.SX.sym("h")
            qm, vf = ca.SX.sym("qm", self.nq), ca.SX.sym("vf", self.nv)
            q1, v1 = ca.SX.sym("q1", self.nq), ca.SX.sym("v1", self.nv)
            T = ca.jacobian(self._qdot_of_v(qm, v1), v1)
            recorded = self.step_forces_midpoint(t, h, q, v, qm, vf, q1, v1, memory, T)
            self._recorded_midpoint = ca.Function(
                "recorded_step_forces_midpoint", [t, h, q, v, qm, vf, q1, v1, memory],
                [ca.densify(recorded.Q)], ["t0", "h", "q0", "v0", "qm", "vf", "q1", "v1", "z0"],
                ["Q"])
        return self._recorded_midpoint

    def _qdot_of_v(self, q, v):
        """qdot = [rdot; 1/2 G(p)^T w'] per body."""
        return ca.vertcat(*[ca.vertcat(v[6 * k:6 * k + 3],
                                       0.5 * G_matrix(q[7 * k + 3:7 * k + 7]).T @ v[6 * k + 3:6 * k + 6])
                            for k in range(self.n_bodies)])

    def carried_energy(self, t, q, v, C) -> float:
        """The kinetic energy the step velocity ``v`` lacks of the nodal velocity u = v + P
        M^-1 C that the energy-consistent elements' carried impulse ``C`` (on the velocities
        at q) gives: T(u) - T(v), P the projection onto the joints' velocity constraints at
        (q, t) (the carry's share the joints take is no motion). Numbers in, a number out;
        the stepper computes the same inside each step."""
        Minv = np.linalg.inv(self.M)
        dv = Minv @ C
        if self.n_eq:
            Pi = np.asarray(self.velocity_jacobian(q, t)).reshape(self.n_eq, self.nv)
            dv = dv - Minv @ Pi.T @ (np.linalg.pinv(Pi @ Minv @ Pi.T, rcond=1e-12) @ (Pi @ dv))
        return float(dv @ self.M @ v + 0.5 * dv @ self.M @ dv)

    def initial_memory(self, t, q, v, h, closed_gap) -> np.ndarray:
        """The stepper's memory at a start state (t, q, v) before a step of ``h``: the
        elements' initial memory; for the energy-consistent elements their conservative
        force at that state as the carry (so a mechanism at rest in equilibrium stays at
        rest), with h as the last step's and the energy it carries; per gap whether it is
        closed (below ``closed_gap``, m) at the start."""
        memory = np.zeros(self.n_memory)
        if self.n_history:
            memory[:self.n_history] = np.asarray(
                self.history_start(t, q, v, self.initial_history())).ravel()
        memory[self.contact_slots] = np.asarray(self.gap(q)).ravel() <= closed_gap
        if self.n_carry:
            memory[self.carry_h_slot] = h
            memory[self.carry_h_slot + 2:self.contact_slots[0] if self.n_gap else None] = \
                np.asarray(self._carry_wrenches(t, q, memory[:self.n_history])).ravel()
            C = np.asarray(self._carried_impulse(q, memory)).ravel()
            memory[self.carry_energy_slot] = self.carried_energy(t, q, v, C)
        return memory

    def _friction_terms(self, t, q, v, z):
        """Memory entries the stepper sets in every step (``step_size_slots``: h;
        ``normal_force_slots``: a joint's normal force), ``friction_normal(q, reaction)``,
        the normal force of each such element from its joint's reaction on the child (3 x n,
        global; the joint's column in ``friction_joints`` of the step's joint forces), and
        ``friction_force(t, q, v, z)``, each one's generalised force along its joint."""
        rows = [r for r in self.history_rows if hasattr(r.element, "normal_force_slot")]
        self.friction_rows = rows
        self.friction_child_is_ground = np.array([r.element.joint.child.is_ground for r in rows],
                                                 dtype=bool)
        self.step_size_slots = np.array([r.start + r.element.step_size_slot for r in rows
                                         if hasattr(r.element, "step_size_slot")], dtype=int)
        self.normal_force_slots = np.array([r.start + r.element.normal_force_slot for r in rows],
                                           dtype=int)
        joint_column = {id(r.element): j for j, r in enumerate(self.constraint_rows)}
        self.friction_joints = np.array([joint_column[id(r.element.joint)] for r in rows], dtype=int)
        reaction = ca.SX.sym("reaction", 3, len(rows))
        f_n = [r.element.normal_force(self.states_of(r.element), reaction[:, j])
               for j, r in enumerate(rows)]
        self.friction_normal = ca.Function(
            "friction_normal", [q, reaction], [ca.vertcat(*f_n) if f_n else ca.SX(0, 1)],
            ["q", "reaction"], ["f_n"], {"cse": True})
        forces = [r.element.generalized_force(self.states_of(r.element), z[r.start:r.stop])
                  for r in rows]
        self.friction_force = ca.Function(
            "friction_force", [t, q, v, z], [ca.vertcat(*forces) if forces else ca.SX(0, 1)],
            ["t", "q", "v", "z"], ["F"], {"cse": True})

    def _require_own_symbols(self, el, *exprs):
        """Raise ModelError when an element's expressions hold symbols other than the
        system's q, v, t, z (made with ca.SX.sym instead of taken from the states)."""
        foreign = {s.name() for e in exprs for s in ca.symvar(e)
                   if s.element_hash() not in self._symbols}
        if foreign:
            raise ModelError([f"{el.label}: its expressions hold symbols {sorted(foreign)} that "
                              "are not the system's: build them from the states and t passed in"])

    # ---------------------------------------------------------------- initial state
    def initial_problems(self, t0: float = 0.0) -> list[str]:
        """Every element whose equations, gaps or forces (or the derivatives the stepper
        uses) are not finite at the initial state: t0, the bodies' initial q and v, the
        elements' initial memory."""
        q, v = self.initial_state()
        z = self.initial_history()
        at = f"not finite at the initial state (t = {t0:g}) {NOT_FINITE_HINT}"
        out = self._row_problems(t0, q, at)
        gaps = np.asarray(self.gap(q)).ravel()
        gap_jac = np.asarray(self.gap_q(q))
        coord_jac = np.asarray(self.contact_coordinates_q(q))
        for r in self.gap_rows:
            coords = slice(self.gap_laws[r.start][0], self.gap_laws[r.stop - 1][1]) if r.size \
                else slice(0, 0)
            if not (np.isfinite(gaps[r.start:r.stop]).all() and np.isfinite(gap_jac[r.start:r.stop]).all()
                    and np.isfinite(coord_jac[coords]).all()):
                out.append(f"{r.element.label}: gaps or their gradients are not finite at the "
                           "initial configuration (a norm at 0? write a round gap as "
                           "(d, radius) in contact_coordinates)")
        return out + self._force_problems(t0, q, v, z, at)

    def state_problems(self, t, q, v, z) -> list[str]:
        """Every joint or element whose equations or forces are not finite (or beyond
        OVERFLOW) at time ``t`` and the state (q, v, history z): what a step that met
        non-finite numbers names.

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
        at = f"not finite at t = {t:.9g} {NOT_FINITE_HINT}"
        return self._row_problems(t, q, at) + self._force_problems(t, q, v, z, at)

    def _row_problems(self, t, q, at) -> list[str]:
        phi = {"equations": np.asarray(self.phi(q, t)),
               "Jacobian": np.asarray(self.phi_q(q, t)),
               "time derivative": np.asarray(self.phi_t(q, t))}
        return [f"{r.element.label}: {', '.join(bad)} {at}" for r in self.constraint_rows
                if (bad := [name for name, arr in phi.items()
                            if not np.isfinite(arr[r.start:r.stop]).all()])]

    def _force_problems(self, t, q, v, z, at) -> list[str]:
        Q = np.asarray(self.element_forces(t, q, v, z))
        V = np.asarray(self.element_potentials(t, q, z)).ravel()
        out = []
        for j, el in enumerate(self.force_elements):
            bad = [name for name, value in (("force", Q[:, j]), ("potential energy", V[j]))
                   if not np.isfinite(value).all()]
            if bad:
                out.append(f"{el.label}: {', '.join(bad)} {at}")
            elif np.abs(Q[:, j]).max(initial=0.0) > OVERFLOW:
                out.append(f"{el.label}: force {np.abs(Q[:, j]).max():.3g} at t = {t:.9g}, "
                           f"beyond {OVERFLOW:g} (squares overflow)")
        return out

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
