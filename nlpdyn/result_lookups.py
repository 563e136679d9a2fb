"""A Result's lookups by name: a body's position, velocity, orientation and rotation; an
element's multipliers, forces, friction, gaps and contact data (the arrays stay on
:class:`~nlpdyn.Result`; its page lists these methods as its own)."""
from __future__ import annotations

import numpy as np


class _Lookups:
    """The named lookups of :class:`~nlpdyn.Result` (its arrays: ``q``, ``v``, ``mu``,
    ``lam``, ``gaps``, the per-element dictionaries)."""

    # Every lookup takes a name or the body or element itself (its ``name``): _name_of.
    def _body(self, name):
        name = _name_of(name)
        if name not in self.body_names:
            raise KeyError(f"no body named {name!r}; bodies: {self.body_names}")
        return self.body_names.index(name)

    def position(self, body: str) -> np.ndarray:
        """Centre-of-mass position, global, shape (n_points, 3).

        Parameters
        ----------
        body : str
            The body's name (or the body itself).

        Examples
        --------
        >>> res.position("crank")[-1]                     # doctest: +SKIP
        """
        k = self._body(body)
        return self.q[:, 7 * k:7 * k + 3]

    def orientation(self, body: str) -> np.ndarray:
        """Euler parameters [e0, e1, e2, e3], shape (n_points, 4).

        Parameters
        ----------
        body : str
            The body's name (or the body itself).

        Examples
        --------
        >>> res.orientation("crank")[0]                  # doctest: +SKIP
        array([1., 0., 0., 0.])
        """
        k = self._body(body)
        return self.q[:, 7 * k + 3:7 * k + 7]

    def velocity(self, body: str) -> np.ndarray:
        """Centre-of-mass velocity, global, shape (n_points, 3).

        Parameters
        ----------
        body : str
            The body's name (or the body itself).

        Examples
        --------
        >>> res.velocity("crank")[-1]                     # doctest: +SKIP
        """
        k = self._body(body)
        return self.v[:, 6 * k:6 * k + 3]

    def angular_velocity(self, body: str, frame: str = "body") -> np.ndarray:
        """Angular velocity, shape (n_points, 3), in the body frame (default) or "global".

        Parameters
        ----------
        body : str
            The body's name (or the body itself).
        frame : {"body", "global"}
            The frame of the components.

        Examples
        --------
        >>> res.angular_velocity("crank", frame="global")[-1]   # doctest: +SKIP
        """
        k = self._body(body)
        w = self.v[:, 6 * k + 3:6 * k + 6]
        if frame == "body":
            return w
        if frame == "global":
            return np.einsum("nij,nj->ni", self.rotation(body), w)
        raise ValueError("frame must be 'body' or 'global'")

    def rotation(self, body: str) -> np.ndarray:
        """Rotation matrices A (body -> global) of the normalised Euler parameters (the stored
        ones carry the stepper's O(h^2) norm error), shape (n_points, 3, 3).

        Parameters
        ----------
        body : str
            The body's name (or the body itself).

        Examples
        --------
        >>> res.rotation("crank")[0]                     # doctest: +SKIP
        array([[1., 0., 0.],
               [0., 1., 0.],
               [0., 0., 1.]])
        """
        from .rotations import rotation_matrices
        return rotation_matrices(self.orientation(body))

    def multipliers(self, name: str) -> np.ndarray:
        """Lagrange multipliers mu of a bilateral element, shape (n_steps, n_equations).

        Parameters
        ----------
        name : str
            The joint, driver or programmed constraint.

        Examples
        --------
        >>> res.multipliers("pivot").shape               # doctest: +SKIP
        """
        start, stop, _ = self._rows(name)
        return self.mu[:, start:stop]

    def _rows(self, name):
        name = _name_of(name)
        if name in self.constraint_rows:
            return self.constraint_rows[name]
        if name in self.gap_rows:
            return self.gap_rows[name]
        if name in self.force_elements:
            return 0, 0, self.force_elements[name]
        raise KeyError(f"no element named {name!r}; elements: "
                       f"{list(self.constraint_rows) + list(self.gap_rows) + list(self.force_elements)}")

    def _force_element(self, name):
        name = _name_of(name)
        if name not in self.force_elements:
            raise KeyError(f"no force element named {name!r}; force elements: {list(self.force_elements)}")

    def applied_force(self, name: str, body: str | None = None) -> np.ndarray:
        """Force of force element ``name`` on ``body`` (default: its last body) as the step
        used it (start of step when explicit, end when implicit), global, shape (n_steps, 3),
        aligned with ``t[1:]``.

        Parameters
        ----------
        name : str
            The force element.
        body : str, optional
            One of its bodies (default: its last).

        Examples
        --------
        >>> res.applied_force("spring", "crank")[-1]         # doctest: +SKIP
        """
        self._force_element(name)
        return self._wrench(name, body)[:, :3]

    def applied_torque(self, name: str, body: str | None = None) -> np.ndarray:
        """Moment of force element ``name`` on ``body`` about its centre of mass, global,
        shape (n_steps, 3).

        Parameters
        ----------
        name : str
            The force element.
        body : str, optional
            One of its bodies (default: its last).

        Examples
        --------
        >>> res.applied_torque("bushing")[-1]               # doctest: +SKIP
        """
        self._force_element(name)
        return self._wrench(name, body)[:, 3:]

    def dissipated(self, name: str | None = None) -> np.ndarray:
        """Energy taken out of the system by force element ``name`` since t[0] (J), shape
        (n_points,): -(work done + change of stored energy). Zero for a conservative law up to
        the time discretisation; None: the sum over all force elements.

        Parameters
        ----------
        name : str, optional
            The force element; None: all of them, summed.

        Examples
        --------
        >>> res.dissipated("damper")[-1]                 # doctest: +SKIP
        """
        names = list(self.force_elements) if name is None else [_name_of(name)]
        total = np.zeros(len(self.t))
        for n in names:
            self._force_element(n)
            pot = self.element_potential[n]
            total -= self.element_work[n] + pot - pot[0]
        return total

    def friction_force(self, name: str) -> np.ndarray:
        """Joint friction of :class:`~nlpdyn.LuGreFriction` ``name`` in each step: the force
        (N; prismatic, cylindrical) or torque (N m; revolute) along the joint's coordinate on
        the child, as the step used it (at its end), shape (n_steps,), aligned with ``t[1:]``.

        Parameters
        ----------
        name : str
            The :class:`~nlpdyn.LuGreFriction` element.

        Examples
        --------
        >>> res.friction_force("hinge_friction").max()     # doctest: +SKIP
        """
        self._friction(name)
        return self.friction[name]

    def friction_normal_force(self, name: str) -> np.ndarray:
        """The joint normal force f_n (N) each step of friction element ``name`` met its
        friction with (the step's own reaction), shape (n_steps,), aligned with ``t[1:]``.

        Parameters
        ----------
        name : str
            The :class:`~nlpdyn.LuGreFriction` element.

        Examples
        --------
        >>> res.friction_normal_force("hinge_friction")[0]  # doctest: +SKIP
        """
        self._friction(name)
        return self.memory[name][1:, 2]

    def friction_state(self, name: str) -> np.ndarray:
        """The bristle deflection z of friction element ``name`` (rad or m; presliding
        displacement), shape (n_points,), aligned with ``t``.

        Parameters
        ----------
        name : str
            The :class:`~nlpdyn.LuGreFriction` element.

        Examples
        --------
        >>> res.friction_state("hinge_friction")[-1]       # doctest: +SKIP
        """
        self._friction(name)
        return self.memory[name][:, 0]

    def _friction(self, name):
        if name not in self.friction:
            raise KeyError(f"no friction element named {name!r}; friction elements: "
                           f"{list(self.friction)}")

    def _gap_rows(self, name):
        name = _name_of(name)
        if name not in self.gap_rows:
            raise KeyError(f"no clearance joint named {name!r}; clearance joints: {list(self.gap_rows)}")
        return self.gap_rows[name]

    def gap(self, name: str) -> np.ndarray:
        """True (nonlinear) gaps of a clearance joint, shape (n_points, n_gaps), m.

        Parameters
        ----------
        name : str
            The clearance joint.

        Examples
        --------
        >>> res.gap("pin").min()                          # doctest: +SKIP
        """
        start, stop, _ = self._gap_rows(name)
        return self.gaps[:, start:stop]

    def contact_force(self, name: str) -> np.ndarray:
        """Normal contact force magnitudes lambda (N), shape (n_points, n_gaps); row i is
        the force of the step ending at t[i] (row 0 is zero).

        Parameters
        ----------
        name : str
            The clearance joint.

        Examples
        --------
        >>> res.contact_force("pin").max()                # doctest: +SKIP
        """
        start, stop, _ = self._gap_rows(name)
        return np.vstack([np.zeros((1, stop - start)), self.lam[:, start:stop]])

    def contact_point(self, name: str) -> np.ndarray:
        """Contact point of every gap, global, shape (n_points, n_gaps, 3).

        Parameters
        ----------
        name : str
            The clearance joint.

        Examples
        --------
        >>> res.contact_point("pin")[-1]                  # doctest: +SKIP
        """
        self._gap_rows(name)
        return self.contact_points[_name_of(name)]

    def contact_force_vector(self, name: str) -> np.ndarray:
        """Contact force of every gap on the joint's child body, global, shape
        (n_points, n_gaps, 3) (row 0 is zero).

        Parameters
        ----------
        name : str
            The clearance joint.

        Examples
        --------
        >>> res.contact_force_vector("pin")[-1]           # doctest: +SKIP
        """
        start, stop, _ = self._gap_rows(name)
        return np.concatenate([np.zeros((1, stop - start, 3)),
                               self.contact_vectors[_name_of(name)]])

    def contact_friction_vector(self, name: str) -> np.ndarray:
        """Tangential (Coulomb friction) contact force of every gap on the joint's child body,
        global, shape (n_points, n_gaps, 3) (row 0 is zero; all zero for a joint without
        friction).

        Parameters
        ----------
        name : str
            The clearance joint.

        Examples
        --------
        >>> res.contact_friction_vector("pin")[-1]          # doctest: +SKIP
        """
        start, stop, _ = self._gap_rows(name)
        steps = np.zeros((len(self.t) - 1, stop - start, 3))
        return np.concatenate([np.zeros((1, stop - start, 3)),
                               self.friction_vectors.get(_name_of(name), steps)])

    def contact_friction(self, name: str) -> np.ndarray:
        """Tangential (Coulomb friction) contact force magnitudes (N), shape (n_points,
        n_gaps), beside ``contact_force``; at most the friction coefficient times it (to the
        polygon's 1 - cos(pi/8) inside the cone, docs/guide/friction.md "Coulomb friction in
        clearance joints").

        Parameters
        ----------
        name : str
            The clearance joint.

        Examples
        --------
        >>> res.contact_friction("pin").max()               # doctest: +SKIP
        """
        return np.linalg.norm(self.contact_friction_vector(name), axis=2)

    def _wrench(self, name, body):
        name, body = _name_of(name), _name_of(body)
        bodies = self._rows(name)[2]
        if body is None:
            body = bodies[-1]
        if body not in bodies:
            raise KeyError(f"{name!r} acts on {bodies}, not on {body!r}")
        return self.wrenches[name][:, bodies.index(body)]

    def reaction_force(self, name: str, body: str | None = None) -> np.ndarray:
        """Constraint force of joint ``name`` (ideal or clearance: the resultant of its
        contacts) on ``body`` (default: its child), global, shape (n_steps, 3), aligned with
        ``t[1:]``.

        Parameters
        ----------
        name : str
            The joint (ideal or clearance).
        body : str, optional
            One of its bodies (default: its child).

        Examples
        --------
        >>> res.reaction_force("pivot")[-1]                # doctest: +SKIP
        """
        return self._wrench(name, body)[:, :3]

    def reaction_torque(self, name: str, body: str | None = None) -> np.ndarray:
        """Constraint moment of element ``name`` on ``body`` (default: its child) about the
        joint point (about the centre of mass for elements without a point), global,
        shape (n_steps, 3).

        Parameters
        ----------
        name : str
            The joint (ideal or clearance).
        body : str, optional
            One of its bodies (default: its child).

        Examples
        --------
        >>> res.reaction_torque("pivot")[-1]               # doctest: +SKIP
        """
        return self._wrench(name, body)[:, 3:]


def _name_of(key):
    """The name of a body or element given itself (anything with a str ``name``) or its name."""
    name = getattr(key, "name", None)
    return name if isinstance(name, str) and not isinstance(key, str) else key
