"""Joint mode vectors (Schwertassek and Senger, ZAMM 68, 1988, seed 004).

The relative motion across a joint is the twist G = [Omega; V] of the child relative to the
parent, resolved in the parent's joint frame: Omega the relative angular velocity, V the
rate of change, seen from the parent, of z = (child's attachment point - parent's). A joint
splits the six-dimensional twist space into free modes phi (6, f), the motions it allows,
and constrained modes phi_bar (6, 6 - f), locked or kinematically excited; the dual basis
[psi, psi_bar] = inv([phi, phi_bar]).T splits the interaction wrench A = [moment; force] on
the child (moment about its attachment point) into generalised applied forces
lambda = phi^T A along the free modes and generalised constraint forces
lambda_bar = phi_bar^T A along the constrained ones (seed eqs. 3.19-3.30). The velocity
constraints are psi_bar^T G = [kappa; 0] (eq. 3.22).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

ROTATION, TRANSLATION = slice(0, 3), slice(3, 6)


def twists(rotations=(), translations=(), screws=()) -> np.ndarray:
    """Mode vectors as columns of a (6, k) array: pure rotations [u; 0], pure translations
    [0; u], and screws ``(u, pitch)`` [u; pitch u], in that order."""
    cols = [np.r_[u, 0, 0, 0] for u in rotations] + [np.r_[0, 0, 0, u] for u in translations]
    cols += [np.r_[u, pitch * np.asarray(u, dtype=float)] for u, pitch in screws]
    return np.array(cols, dtype=float).reshape(-1, 6).T


def dual_basis(free: np.ndarray, constrained: np.ndarray) -> np.ndarray:
    """psi_hat = inv([free, constrained]).T, shape (6, 6) (seed eq. 3.19)."""
    basis = np.hstack([free, constrained])
    if basis.shape != (6, 6) or np.linalg.matrix_rank(basis) < 6:
        raise ValueError(f"the free and constrained modes must form a basis of the twist space, "
                         f"got shape {basis.shape} of rank {np.linalg.matrix_rank(basis)}")
    return np.linalg.inv(basis).T


@dataclass(frozen=True)
class JointModes:
    """A joint's free and constrained mode vectors in its parent's joint frame.

    Parameters
    ----------
    free, constrained, n_excited
        The attributes below.

    Attributes
    ----------
    free : ndarray, shape (6, f)
        The relative twists [Omega; V] the joint allows.
    constrained : ndarray, shape (6, 6 - f)
        The locked and kinematically excited ones, the excited first.
    n_excited : int
        How many of the constrained modes (the first ones) are kinematically excited.

    Examples
    --------
    >>> import numpy as np
    >>> m = JointModes(twists(rotations=[(0, 0, 1)]),
    ...                twists(rotations=[(1, 0, 0), (0, 1, 0)], translations=np.eye(3)))
    >>> np.allclose(m.dual.T @ m.basis, np.eye(6))
    True
    """

    free: np.ndarray
    constrained: np.ndarray
    n_excited: int = 0

    @property
    def basis(self) -> np.ndarray:
        """[free, constrained], shape (6, 6) (seed eq. 3.18)."""
        return np.hstack([self.free, self.constrained])

    @property
    def dual(self) -> np.ndarray:
        """[psi, psi_bar] = inv([free, constrained]).T, shape (6, 6) (seed eq. 3.19)."""
        return dual_basis(self.free, self.constrained)

    def excite(self, free_columns: Iterable[int]) -> JointModes:
        """The modes with the free modes ``free_columns`` (indices) kinematically excited:
        they move, in the order given, to the front of the constrained modes.

        Parameters
        ----------
        free_columns : iterable of int
            Indices of the free modes a driver or excitation prescribes.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> driven = nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)).modes().excite([0])
        >>> driven.free.shape, driven.constrained.shape, driven.n_excited
        ((6, 0), (6, 6), 1)
        """
        cols = list(free_columns)
        keep = [j for j in range(self.free.shape[1]) if j not in cols]
        return JointModes(self.free[:, keep], np.hstack([self.free[:, cols], self.constrained]),
                          self.n_excited + len(cols))

    def as_dict(self) -> dict:
        """The modes as ``Result.joint_modes`` gives them: ``"free"``, ``"constrained"``,
        ``"dual"`` and ``"excited"`` (the indices of the excited constrained columns).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> modes = nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)).modes().as_dict()
        >>> modes["free"].shape, modes["constrained"].shape, modes["excited"]
        ((6, 1), (6, 5), [])
        """
        return {"free": self.free, "constrained": self.constrained, "dual": self.dual,
                "excited": list(range(self.n_excited))}


def split(A: np.ndarray, free: np.ndarray, constrained: np.ndarray) -> dict:
    """Generalised applied forces phi^T A and constraint forces phi_bar^T A of wrenches
    A (n, 6) (seed eq. 3.30); ``free`` and ``constrained`` (6, k) or per row (n, 6, k)."""
    def project(modes):
        return A @ modes if modes.ndim == 2 else np.einsum("ni,nij->nj", A, modes)
    return {"applied": project(free), "constraint": project(constrained)}
