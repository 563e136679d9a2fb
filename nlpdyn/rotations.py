"""Euler-parameter algebra (Nikravesh's conventions), for numpy arrays and CasADi symbols.

p = [e0, e1, e2, e3]; A(p) maps body-frame vectors to the global frame;
w' = 2 G(p) pdot is the angular velocity in the body frame; d/dt A = A w'~.
skew, E_matrix, G_matrix, rotation_matrix, pdot_from_omega and omega_from_pdot accept numpy
arrays or CasADi SX/MX/DM column vectors and return the same kind; the constructors
(quaternion_product, from_*, perpendicular_pair) work on numpy data only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

if TYPE_CHECKING:
    from ._typing import ArrayLike, Symbolic

    #: a numpy array or a CasADi matrix (the functions return the kind they are given)
    Array = np.ndarray | Symbolic

_CASADI_TYPES = (ca.SX, ca.MX, ca.DM)


def _is_casadi(*xs) -> bool:
    return any(isinstance(x, _CASADI_TYPES) for x in xs)


def _matrix(rows, symbolic: bool):
    if symbolic:
        return ca.vertcat(*[ca.horzcat(*row) for row in rows])
    return np.array(rows, dtype=float)


def skew(x: ArrayLike | Symbolic) -> Array:
    """Skew-symmetric matrix x~ with x~ y = x cross y.

    Parameters
    ----------
    x : array_like or casadi column, shape (3,)

    Returns
    -------
    numpy.ndarray or casadi matrix, shape (3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> skew([1.0, 2.0, 3.0]) @ np.array([0.0, 0.0, 1.0])       # x cross e_z
    array([ 2., -1.,  0.])
    """
    symbolic = _is_casadi(x)
    return _matrix([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]], symbolic)


def E_matrix(p: ArrayLike | Symbolic) -> Array:
    """E(p) = [-e, e~ + e0 I]; A = E G^T.

    Parameters
    ----------
    p : array_like or casadi column, shape (4,)
        Euler parameters [e0, e1, e2, e3].

    Returns
    -------
    numpy.ndarray or casadi matrix, shape (3, 4)

    Examples
    --------
    >>> import numpy as np
    >>> p = from_axis_angle((0, 0, 1), 0.3)
    >>> np.allclose(E_matrix(p) @ G_matrix(p).T, rotation_matrix(p))
    True
    """
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    return _matrix([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]], _is_casadi(p))


def G_matrix(p: ArrayLike | Symbolic) -> Array:
    """G(p) = [-e, -e~ + e0 I]; w' = 2 G(p) pdot.

    Parameters
    ----------
    p : array_like or casadi column, shape (4,)
        Euler parameters.

    Returns
    -------
    numpy.ndarray or casadi matrix, shape (3, 4)

    Examples
    --------
    >>> G_matrix([1.0, 0.0, 0.0, 0.0])
    array([[-0.,  1.,  0., -0.],
           [-0., -0.,  1.,  0.],
           [-0.,  0., -0.,  1.]])
    """
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    return _matrix([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]], _is_casadi(p))


def rotation_matrix(p: ArrayLike | Symbolic) -> Array:
    """A(p) = (2 e0^2 - 1) I + 2 (e e^T + e0 e~), body -> global.

    For |p| != 1 this is the formula as written (not E G^T / |p|^2); the stepper keeps
    |p|^2 - 1 = O(h^2).

    Parameters
    ----------
    p : array_like or casadi column, shape (4,)
        Euler parameters.

    Returns
    -------
    numpy.ndarray or casadi matrix, shape (3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> A = rotation_matrix(from_axis_angle((0, 0, 1), np.pi / 2))
    >>> (A @ [1.0, 0.0, 0.0]).round(12)                  # x turns into y
    array([0., 1., 0.])
    """
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    c = 2 * e0 * e0 - 1
    rows = [
        [c + 2 * e1 * e1, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), c + 2 * e2 * e2, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), c + 2 * e3 * e3],
    ]
    return _matrix(rows, _is_casadi(p))


def rotation_matrices(P: ArrayLike) -> np.ndarray:
    """The rotations of many Euler parameter vectors at once, each normalised first (numpy
    only; what ``normalised_rotation_matrix`` gives one by one).

    Parameters
    ----------
    P : array_like, shape (n, 4)
        Euler parameters, one row per rotation.

    Returns
    -------
    numpy.ndarray, shape (n, 3, 3)

    Examples
    --------
    >>> rotation_matrices([[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]).shape
    (2, 3, 3)
    """
    P = np.asarray(P, dtype=float)
    P = P / np.linalg.norm(P, axis=1, keepdims=True)
    e0, e1, e2, e3 = P.T
    c = 2 * e0 * e0 - 1
    return np.stack([
        np.stack([c + 2 * e1 * e1, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)], axis=-1),
        np.stack([2 * (e1 * e2 + e0 * e3), c + 2 * e2 * e2, 2 * (e2 * e3 - e0 * e1)], axis=-1),
        np.stack([2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), c + 2 * e3 * e3], axis=-1),
    ], axis=-2)


def normalised_rotation_matrix(p: ArrayLike | Symbolic) -> Array:
    """The rotation of p / |p|: ((e0^2 - e.e) I + 2 e e^T + 2 e0 e~) / (p.p).

    Equal to A(p) when |p| = 1. Elements use it so that the O(h^2) norm error the stepper
    leaves in p never stretches a body: with the formula as written, points off the
    centre of mass move with |p|, which couples a slender body's (nearly massless) spin about
    its own axis into its joints and contacts and can drive that spin unstable.

    Parameters
    ----------
    p : array_like or casadi column, shape (4,)
        Euler parameters, any nonzero norm.

    Returns
    -------
    numpy.ndarray or casadi matrix, shape (3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> p = from_axis_angle((1, 0, 0), 0.4)
    >>> np.allclose(normalised_rotation_matrix(1.01 * p), rotation_matrix(p))
    True
    """
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    n2 = e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3
    c = e0 * e0 - e1 * e1 - e2 * e2 - e3 * e3
    rows = [
        [(c + 2 * e1 * e1) / n2, 2 * (e1 * e2 - e0 * e3) / n2, 2 * (e1 * e3 + e0 * e2) / n2],
        [2 * (e1 * e2 + e0 * e3) / n2, (c + 2 * e2 * e2) / n2, 2 * (e2 * e3 - e0 * e1) / n2],
        [2 * (e1 * e3 - e0 * e2) / n2, 2 * (e2 * e3 + e0 * e1) / n2, (c + 2 * e3 * e3) / n2],
    ]
    return _matrix(rows, _is_casadi(p))


def pdot_from_omega(p: ArrayLike | Symbolic, w: ArrayLike | Symbolic) -> Array:
    """pdot = 1/2 G(p)^T w' (valid for |p| = 1).

    Parameters
    ----------
    p : array_like or casadi column, shape (4,)
        Euler parameters.
    w : array_like or casadi column, shape (3,)
        Angular velocity in the body frame (rad/s).

    Returns
    -------
    numpy.ndarray or casadi column, shape (4,)

    Examples
    --------
    >>> pdot_from_omega([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0])
    array([0., 0., 0., 1.])
    """
    return 0.5 * (G_matrix(p).T @ w)


def omega_from_pdot(p: ArrayLike | Symbolic, pdot: ArrayLike | Symbolic) -> Array:
    """w' = 2 G(p) pdot.

    Parameters
    ----------
    p : array_like or casadi column, shape (4,)
        Euler parameters.
    pdot : array_like or casadi column, shape (4,)
        Their rate.

    Returns
    -------
    numpy.ndarray or casadi column, shape (3,)
        Angular velocity in the body frame (rad/s).

    Examples
    --------
    >>> omega_from_pdot([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
    array([0., 0., 2.])
    """
    return 2 * (G_matrix(p) @ pdot)


def quaternion_product(a: ArrayLike | Symbolic, b: ArrayLike | Symbolic) -> Array:
    """Hamilton product a * b of Euler parameters (A(a*b) = A(a) A(b)); numpy or CasADi.

    Parameters
    ----------
    a, b : array_like or casadi column, shape (4,)
        Euler parameters.

    Returns
    -------
    numpy.ndarray or casadi column, shape (4,)

    Examples
    --------
    >>> import numpy as np
    >>> q = from_axis_angle((0, 0, 1), 0.25)
    >>> np.allclose(quaternion_product(q, q), from_axis_angle((0, 0, 1), 0.5))
    True
    """
    if _is_casadi(a, b):
        a0, av, b0, bv = a[0], a[1:4], b[0], b[1:4]
        return ca.vertcat(a0 * b0 - ca.dot(av, bv), a0 * bv + b0 * av + ca.cross(av, bv))
    a0, av = a[0], np.asarray(a[1:4], dtype=float)
    b0, bv = b[0], np.asarray(b[1:4], dtype=float)
    return np.concatenate([[a0 * b0 - av @ bv], a0 * bv + b0 * av + np.cross(av, bv)])


def from_rotation_vector(theta: ArrayLike) -> np.ndarray:
    """Euler parameters of a rotation by |theta| about theta/|theta| (numpy only).

    Parameters
    ----------
    theta : array_like, shape (3,)
        Rotation vector (rad).

    Returns
    -------
    numpy.ndarray, shape (4,)

    Examples
    --------
    >>> import numpy as np
    >>> from_rotation_vector([0.0, 0.0, np.pi]).round(12)
    array([0., 0., 0., 1.])
    """
    theta = np.asarray(theta, dtype=float)
    angle = np.linalg.norm(theta)
    if angle < 1e-12:
        return np.concatenate([[1.0], 0.5 * theta]) / np.sqrt(1 + 0.25 * angle**2)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * theta / angle])


def from_axis_angle(axis: ArrayLike, angle: float) -> np.ndarray:
    """Euler parameters of a rotation by ``angle`` (rad) about the unit ``axis``.

    Parameters
    ----------
    axis : array_like, shape (3,)
        The axis (normalised here).
    angle : float
        The angle (rad), right-handed about ``axis``.

    Returns
    -------
    numpy.ndarray, shape (4,)

    Examples
    --------
    >>> import numpy as np
    >>> from_axis_angle((0, 0, 2), np.pi / 2).round(6)
    array([0.707107, 0.      , 0.      , 0.707107])
    """
    axis = np.asarray(axis, dtype=float)
    return from_rotation_vector(axis / np.linalg.norm(axis) * angle)


def from_rotation_matrix(A: ArrayLike) -> np.ndarray:
    """Euler parameters (e0 >= 0) of a proper rotation matrix (numpy only).

    Parameters
    ----------
    A : array_like, shape (3, 3)
        A rotation matrix, body -> global.

    Returns
    -------
    numpy.ndarray, shape (4,)

    Examples
    --------
    >>> import numpy as np
    >>> p = from_axis_angle((1, 2, 3), 0.7)
    >>> np.allclose(from_rotation_matrix(rotation_matrix(p)), p)
    True
    """
    A = np.asarray(A, dtype=float)
    tr = np.trace(A)
    cands = np.array([tr, A[0, 0], A[1, 1], A[2, 2]])
    k = int(np.argmax(cands))
    if k == 0:
        e0 = 0.5 * np.sqrt(1 + tr)
        p = [e0, (A[2, 1] - A[1, 2]) / (4 * e0), (A[0, 2] - A[2, 0]) / (4 * e0),
             (A[1, 0] - A[0, 1]) / (4 * e0)]
    else:
        i = k - 1
        j, m = (i + 1) % 3, (i + 2) % 3
        ei = 0.5 * np.sqrt(1 + 2 * A[i, i] - tr)
        e = np.zeros(3)
        e[i] = ei
        e[j] = (A[j, i] + A[i, j]) / (4 * ei)
        e[m] = (A[m, i] + A[i, m]) / (4 * ei)
        e0 = (A[m, j] - A[j, m]) / (4 * ei)
        p = [e0, *e]
    p = np.asarray(p)
    return p if p[0] >= 0 else -p


def perpendicular_pair(axis: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors f, g with (f, g, axis) a right-handed orthonormal triad.

    Parameters
    ----------
    axis : array_like, shape (3,)
        A unit vector.

    Returns
    -------
    f, g : numpy.ndarray, shape (3,)
        NaN for a zero axis (validation names it).

    Examples
    --------
    >>> f, g = perpendicular_pair([0.0, 0.0, 1.0])
    >>> f, g
    (array([0., 1., 0.]), array([-1.,  0.,  0.]))
    """
    axis = np.asarray(axis, dtype=float)
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    f = np.cross(axis, helper)
    norm = np.linalg.norm(f)
    f = f / norm if norm > 0 else np.full(3, np.nan)    # a zero axis: validation names it
    g = np.cross(axis, f)
    return f, g
