"""Rigid bodies, the ground, and the symbolic view of a body's state used by elements."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

from .checks import (LARGEST_MASS, SMALLEST_MASS, as_array, as_number, as_unit_vector,
                     as_vector, is_number, mass_range_problems, name_problems, show,
                     vector_problems)
from .shapes import geometry_problems
from .rotations import from_rotation_matrix, normalised_rotation_matrix, rotation_matrix

if TYPE_CHECKING:
    from ._typing import Symbolic, Value


def _is_scipy_rotation(value) -> bool:
    """A ``scipy.spatial.transform.Rotation`` (checked without importing it)."""
    return any(c.__name__ == "Rotation" and c.__module__.startswith("scipy.spatial")
               for c in type(value).__mro__)


def _inertia_matrix(inertia):
    """Principal moments (3,) become a diagonal matrix; anything else is kept as given."""
    arr = as_array(inertia)
    return np.diag(arr) if isinstance(arr, np.ndarray) and arr.shape == (3,) else arr


@dataclass(eq=False)
class RigidBody:
    """A rigid body in the rA formulation.

    Parameters
    ----------
    name : str
        Unique name used for lookups in results.
    mass : float
        Mass in kg (> 0).
    inertia : array_like, shape (3,) or (3, 3)
        Principal moments or the full inertia matrix about the centre of mass, body frame.
    position : array_like, shape (3,)
        Initial centre of mass, global frame.
    orientation : array_like, shape (4,) or (3, 3), or scipy.spatial.transform.Rotation
        Initial Euler parameters [e0, e1, e2, e3] (scalar first; normalised when within 1e-3
        of unit norm, with a warning above round-off), a rotation matrix (body -> global) or
        a scipy ``Rotation`` (one rotation).
    velocity : array_like, shape (3,)
        Initial centre-of-mass velocity, global frame.
    angular_velocity : array_like, shape (3,)
        Initial angular velocity, **body frame**.
    geometry : shape or list of shapes, optional
        How animations and the 3D view draw the body (``nd.Box``, ``nd.Cylinder``,
        ``nd.Sphere``, ``nd.Link``; body frame, from the centre of mass). None: its
        inertia-equivalent box and links to its joint points (:mod:`nlpdyn.geometry`).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> bar = nd.RigidBody("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> bar.problems(), bar.local_point((1.0, 0, 0)).tolist()
    ([], [0.5, 0.0, 0.0])
    """

    name: str
    mass: float
    inertia: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array([1.0, 0, 0, 0]))
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    index: int | None = None
    geometry: object = None
    is_ground = False

    def __post_init__(self):
        # numbers are converted defensively: problems() reports what is not numbers
        self.mass = as_number(self.mass)
        self.inertia = _inertia_matrix(self.inertia)
        self.position = as_vector(self.position)
        given = self.orientation
        if _is_scipy_rotation(given):
            given = given.as_matrix() if given.single else given
        given = as_array(given)
        is_matrix = isinstance(given, np.ndarray) and given.shape == (3, 3)
        self._orientation_matrix = given if is_matrix else None
        if is_matrix:
            self.orientation = (from_rotation_matrix(given) if np.all(np.isfinite(given))
                                else np.full(4, np.nan))
        else:
            self.orientation = as_unit_vector(given, self.label, "orientation")
        self.velocity = as_vector(self.velocity)
        self.angular_velocity = as_vector(self.angular_velocity)

    @property
    def label(self) -> str:
        return f"body '{self.name}'"

    def problems(self) -> list[str]:
        """Every problem with this body's data (empty when valid).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> nd.RigidBody("rod", mass=-1.0, inertia=(1, 1, 1)).problems()
        ["body 'rod': mass must be positive and finite, got -1.0"]
        """
        tag = self.label
        out = name_problems(tag, self.name)
        if not (is_number(self.mass) and self.mass > 0):
            out.append(f"{tag}: mass must be positive and finite, got {show(self.mass)}")
        else:
            out += mass_range_problems(tag, "mass", self.mass, "kg")
        I = self.inertia
        if not (isinstance(I, np.ndarray) and I.shape == (3, 3) and np.all(np.isfinite(I))):
            out.append(f"{tag}: inertia must be 3 principal moments or a 3x3 matrix of finite "
                       f"numbers, got {show(I)}")
        else:
            if not np.allclose(I, I.T, rtol=0, atol=1e-12 * np.abs(I).max()):
                out.append(f"{tag}: inertia matrix is not symmetric")
            eig = np.linalg.eigvalsh(0.5 * (I + I.T))
            if eig.min() <= 0:
                out.append(f"{tag}: inertia must be positive definite, eigenvalues {eig}")
            elif eig.min() < SMALLEST_MASS or eig.max() > LARGEST_MASS:
                out += mass_range_problems(tag, "principal moments of inertia",
                                           eig[0] if eig[0] < SMALLEST_MASS else eig[-1], "kg m^2")
            elif eig[0] + eig[1] < eig[2] * (1 - 1e-9):
                out.append(f"{tag}: principal moments {eig} violate the triangle inequality")
        for label in ("position", "velocity", "angular_velocity"):
            out += vector_problems(tag, label, getattr(self, label))
        out += geometry_problems(tag, self.geometry)
        A = self._orientation_matrix
        if A is not None:
            if not np.all(np.isfinite(A)) or not np.allclose(A.T @ A, np.eye(3), atol=1e-9) \
                    or np.linalg.det(A) < 0:
                out.append(f"{tag}: orientation matrix must be a proper rotation "
                           "(A^T A = I, det A = 1)")
        else:
            shape_problems = vector_problems(tag, "orientation", self.orientation, 4)
            out += shape_problems
            if not shape_problems and abs(np.linalg.norm(self.orientation) - 1) > 1e-6:
                out.append(f"{tag}: orientation Euler parameters must have unit norm, "
                           f"|p| = {np.linalg.norm(self.orientation):.9g}")
        return out

    @property
    def rotation0(self) -> np.ndarray:
        """Initial rotation matrix (body -> global)."""
        return rotation_matrix(self.orientation)

    def local_point(self, point: ArrayLike) -> np.ndarray:
        """Body-frame vector s' of a point given in the global frame at the initial configuration.

        Parameters
        ----------
        point : array_like, shape (3,)
            The point, global frame at the initial configuration.

        Returns
        -------
        ndarray, shape (3,)
            s', from the centre of mass in the body frame.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> nd.RigidBody("b", 1.0, (1, 1, 1), position=(1, 0, 0)).local_point((1, 2, 0)).tolist()
        [0.0, 2.0, 0.0]
        """
        return self.rotation0.T @ (np.asarray(point, dtype=float) - self.position)

    def local_vector(self, vector: ArrayLike) -> np.ndarray:
        """Body-frame components of a direction given in the global frame initially.

        Parameters
        ----------
        vector : array_like, shape (3,)
            The direction, global frame at the initial configuration.

        Returns
        -------
        ndarray, shape (3,)
            Its body-frame components.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> b = nd.RigidBody("b", 1.0, (1, 1, 1), orientation=(0, 0, 0, 1))   # turned by pi
        >>> b.local_vector((1, 0, 0)).round(12).tolist()
        [-1.0, 0.0, 0.0]
        """
        return self.rotation0.T @ np.asarray(vector, dtype=float)

    def __repr__(self):
        return f"RigidBody({self.name!r}, mass={self.mass})"


class Ground(RigidBody):
    """The fixed global frame: r = 0, A = I, no coordinates.

    Parameters
    ----------
    name : str
        Its name in results.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> nd.System().ground
    Ground('ground')
    """

    is_ground = True

    def __init__(self, name: str = "ground"):
        super().__init__(name=name, mass=np.inf, inertia=np.eye(3))

    def problems(self) -> list[str]:
        return []

    def __repr__(self):
        return f"Ground({self.name!r})"


class BodyState:
    """Symbolic (or numeric) state of one body as seen by joints and force elements.

    ``r`` (3), ``p`` (4), ``A`` (3x3, the rotation of p/|p|) and, where velocities are
    available, ``rdot`` (3, global) and ``w`` (3, body frame). Helpers take geometry in the
    global frame at the initial configuration, like the element constructors.

    Parameters
    ----------
    body : RigidBody
        The body (its initial data places the helpers' points and vectors).
    r : CasADi column or ndarray, shape (3,)
        Position of the centre of mass (global).
    p : CasADi column or ndarray, shape (4,)
        Euler parameters.
    rdot, w : CasADi column or ndarray, shape (3,), optional
        Velocity of the centre of mass (global) and angular velocity (body frame).

    Examples
    --------
    >>> import numpy as np
    >>> import nlpdyn as nd
    >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> state = nd.BodyState(bar, np.array([0.5, 0, 0]), np.array([1.0, 0, 0, 0]),
    ...                      np.zeros(3), np.array([0, 0, 2.0]))
    >>> state.point((1.0, 0, 0)), state.point_velocity_local((0.5, 0, 0))
    (DM([1, 0, 0]), DM([0, 1, 0]))
    """

    def __init__(self, body: RigidBody, r: Value, p: Value, rdot: Value | None = None,
                 w: Value | None = None):
        self.body = body
        self.r = r
        self.p = p
        self.A = normalised_rotation_matrix(p) if not body.is_ground else ca.DM.eye(3)
        self.rdot = rdot
        self.w = w

    def point_local(self, s_local: ArrayLike) -> Symbolic:
        """Global position of the body point with body-frame vector s'.

        Parameters
        ----------
        s_local : array_like, shape (3,)
            s', from the centre of mass, in the body frame.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> nd.BodyState(bar, np.array([0.5, 0, 0]), np.array([1.0, 0, 0, 0])).point_local(
        ...     (0.5, 0, 0))
        DM([1, 0, 0])
        """
        return self.r + self.A @ ca.DM(s_local)

    def vector_local(self, u_local: ArrayLike) -> Symbolic:
        """Global components of the body-fixed direction u'.

        Parameters
        ----------
        u_local : array_like, shape (3,)
            u', in the body frame.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> p = np.array([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])    # 90 deg about z
        >>> np.asarray(nd.BodyState(bar, np.zeros(3), p).vector_local((1, 0, 0))).ravel().round(12)
        array([0., 1., 0.])
        """
        return self.A @ ca.DM(u_local)

    def point(self, point_initial: ArrayLike) -> Symbolic:
        """Current global position of the body point that was at ``point_initial`` at t = 0.

        Parameters
        ----------
        point_initial : array_like, shape (3,)
            The point, global, at the initial configuration.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> moved = nd.BodyState(bar, np.array([0.5, 0, 1.0]), np.array([1.0, 0, 0, 0]))
        >>> moved.point((1.0, 0, 0))      # the bar's tip, lifted by 1 m
        DM([1, 0, 1])
        """
        return self.point_local(self.body.local_point(point_initial))

    def vector(self, vector_initial: ArrayLike) -> Symbolic:
        """Current global components of the body direction that was ``vector_initial`` at
        t = 0.

        Parameters
        ----------
        vector_initial : array_like, shape (3,)
            The direction, global, at the initial configuration.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> nd.BodyState(bar, np.zeros(3), np.array([1.0, 0, 0, 0])).vector((0, 1.0, 0))
        DM([0, 1, 0])
        """
        return self.vector_local(self.body.local_vector(vector_initial))

    def point_velocity_local(self, s_local: ArrayLike) -> Symbolic:
        """Global velocity of the body point s': rdot + A (w' x s').

        Parameters
        ----------
        s_local : array_like, shape (3,)
            s', from the centre of mass, in the body frame.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> spinning = nd.BodyState(bar, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3),
        ...                         np.array([0, 0, 2.0]))
        >>> spinning.point_velocity_local((0.5, 0, 0))
        DM([0, 1, 0])
        """
        return self.rdot + self.A @ ca.cross(self.w, ca.DM(s_local))

    def angular_velocity_global(self) -> Symbolic:
        """The angular velocity in the global frame, A w'.

        Examples
        --------
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> bar = nd.System().add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> spinning = nd.BodyState(bar, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3),
        ...                         np.array([0, 0, 2.0]))
        >>> np.asarray(spinning.angular_velocity_global()).ravel()
        array([0., 0., 2.])
        """
        return self.A @ self.w


def ground_state(body: Ground) -> BodyState:
    return BodyState(body, ca.DM.zeros(3), ca.DM([1, 0, 0, 0]), ca.DM.zeros(3), ca.DM.zeros(3))
