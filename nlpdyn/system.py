"""System: holds bodies and elements, validates them, compiles them once into CasADi functions."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .body import Ground, RigidBody
from .checks import ModelError, as_vector, failure_reason, name_problems, show
from .compiled import NOT_FINITE_HINT, OVERFLOW, CompiledSystem, ElementRows  # noqa: F401
from .fingerprint import _fingerprint
from .forces.base import ForceElement
from .joints.base import BilateralConstraint, Element, UnilateralConstraint

if TYPE_CHECKING:
    from .shapes import Shape

# Names of built-in entries of the results (the gravity element), not available to users.
RESERVED_NAMES = ("gravity",)

# Gravity beyond LARGEST_GRAVITY (m/s^2), or whose potential energy over the model's extent
# (|g| m_total extent) is beyond LARGEST_ENERGY (J), is refused: forces, energies and their
# sums over a run stay far from overflow (1.8e308). A neutron star's surface has 1e12 m/s^2.
LARGEST_GRAVITY = 1e100
LARGEST_ENERGY = 1e200


class System:
    """A multibody system: bodies, constraints (joints, drivers, gaps) and force elements.

    Declare, compile, run: elements are added, :meth:`compile` validates and builds the
    CasADi functions, and no body or element can be added afterwards. Parameters may still
    be changed (a body's mass, a spring's stiffness, ...): the next :meth:`compile` (every
    ``simulate`` and ``Stepper`` calls it) sees the change and validates and builds again.

    Parameters
    ----------
    gravity : array_like, shape (3,)
        Gravity's acceleration (m/s^2, global; :attr:`gravity`).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0))
    >>> s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0)))  # doctest: +ELLIPSIS
    <nlpdyn.joints.ideal.Revolute object at ...>
    """

    def __init__(self, gravity: ArrayLike = (0.0, 0.0, -9.81)):
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

    def add_body(self, name: str, mass: float, inertia: ArrayLike,
                 position: ArrayLike = (0, 0, 0), orientation: ArrayLike = (1, 0, 0, 0),
                 velocity: ArrayLike = (0, 0, 0), angular_velocity: ArrayLike = (0, 0, 0),
                 geometry: Shape | Sequence[Shape] | None = None) -> RigidBody:
        """Add a rigid body (see :class:`~nlpdyn.body.RigidBody`; angular velocity in the
        body frame; ``geometry`` the shapes that draw it).

        Parameters
        ----------
        name : str
            Its name, unique among the bodies and elements (lookups in results).
        mass : float
            Mass (kg, > 0).
        inertia : array_like, shape (3,) or (3, 3)
            Principal moments or the inertia matrix about the centre of mass (kg m^2, body
            frame).
        position : array_like, shape (3,)
            Initial centre of mass (m, global).
        orientation : array_like, shape (4,) or (3, 3), or scipy.spatial.transform.Rotation
            Initial Euler parameters (scalar first), rotation matrix (body -> global) or
            rotation.
        velocity : array_like, shape (3,)
            Initial centre-of-mass velocity (m/s, global).
        angular_velocity : array_like, shape (3,)
            Initial angular velocity (rad/s, body frame).
        geometry : shape or list of shapes, optional
            The shapes that draw it (``nd.Box``, ``nd.Cylinder``, ``nd.Sphere``,
            ``nd.Link``); None: the default drawing.

        Returns
        -------
        RigidBody
            The body, now part of the system.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> bar.name, s.body("bar") is bar
        ('bar', True)
        """
        self._check_open()
        body = RigidBody(name, mass, inertia, position, orientation, velocity, angular_velocity,
                         geometry=geometry)
        self.bodies.append(body)
        return body

    def set_geometry(self, body: RigidBody | str,
                     geometry: Shape | Sequence[Shape] | None) -> None:
        """Draw ``body`` (the body or its name) with ``geometry``: a shape or a list of
        shapes (``nd.Box``, ``nd.Cylinder``, ``nd.Sphere``, ``nd.Link``; body frame, from the
        centre of mass), None for the default (:mod:`nlpdyn.geometry`). Allowed after a run:
        shapes only draw.

        Parameters
        ----------
        body : RigidBody or str
            The body, or its name.
        geometry : shape, list of shapes or None
            What draws it; None: the default drawing.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> s.set_geometry("ball", nd.Sphere(radius=0.05))
        """
        body = self.body(body) if isinstance(body, str) else body
        body.geometry = geometry

    def add_joint(self, joint: BilateralConstraint | UnilateralConstraint
                  ) -> BilateralConstraint | UnilateralConstraint:
        """Add an ideal joint, driver, programmed constraint or clearance joint; one added
        without a name gets one here (``revolute1``, ...), used by the result's lookups.

        Parameters
        ----------
        joint : BilateralConstraint or UnilateralConstraint
            The joint, driver, constraint or clearance joint, its bodies already added.

        Returns
        -------
        BilateralConstraint or UnilateralConstraint
            ``joint`` itself, named.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0))).name
        'revolute1'
        """
        self._check_open()
        if isinstance(joint, UnilateralConstraint):
            self.gaps.append(joint)
        elif isinstance(joint, BilateralConstraint):
            self.constraints.append(joint)
        else:
            raise TypeError(f"add_joint expects a joint or constraint, got {type(joint).__name__}")
        self._give_name(joint)
        return joint

    def add_force(self, force: ForceElement) -> ForceElement:
        """Add a force element (point load, spring-damper, ...), naming it like
        :meth:`add_joint`. Gravity is added automatically.

        Parameters
        ----------
        force : ForceElement
            The element, its bodies already added.

        Returns
        -------
        ForceElement
            ``force`` itself, named.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> ball = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> s.add_force(nd.PointForce(ball, force=(1.0, 0, 0))).name
        'pointforce1'
        """
        self._check_open()
        if not isinstance(force, ForceElement):
            raise TypeError(f"add_force expects a force element, got {type(force).__name__}")
        self.forces.append(force)
        self._give_name(force)
        return force

    def body(self, name: str) -> RigidBody:
        """The body called ``name``.

        Parameters
        ----------
        name : str
            The body's name.

        Returns
        -------
        RigidBody
            The body; a ``KeyError`` naming the bodies when there is none of that name.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> s.body("ball").mass
        1.0
        """
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
        without compiling: the system stays open to new bodies and elements.

        Parameters
        ----------
        t0 : float
            The start time (s) the initial state is checked at.

        Returns
        -------
        list of str
            The problems, each naming its culprit.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> s.problems()
        ['the system has no bodies']
        """
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
        not finite at the initial state.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=-1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> s.validate()
        Traceback (most recent call last):
        ...
        nlpdyn.checks.ModelError: invalid model:
          - body 'ball': mass must be positive and finite, got -1.0
        """
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

        Parameters
        ----------
        t0 : float
            The start time (s) the initial state is checked at.

        Returns
        -------
        CompiledSystem
            The system's CasADi functions.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> _ = s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)))
        >>> cs = s.compile()
        >>> cs.nq, cs.nv, cs.n_eq, s.compile() is cs
        (7, 6, 5, True)
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


def _own_problems(owner) -> list[str]:
    """owner.problems(), and the owner's name; a check that fails is itself a problem."""
    try:
        found = list(owner.problems())
    except Exception as err:
        found = [f"{owner.label}: checking its data failed: {failure_reason(err)}"]
    if isinstance(owner, Element):          # bodies check their names themselves
        found = name_problems(owner.label, owner.name) + found
    return found

