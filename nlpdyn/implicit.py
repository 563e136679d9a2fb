"""Newton linearisation of the implicit force elements, element by element and sparse.

The implicit elements' impulse over the step in scaled velocities is b(y) = L^-1 Q_imp(y), with
Q_imp what ``CompiledSystem.step_forces`` gives for the end of step q(y), v(y): the
energy-consistent elements' discrete gradient and midpoint damping, the "backward_euler" ones'
h F(q(y), v(y)). The fixed-h QP takes b(y_imp) - H (y - y_imp) with H positive semidefinite (the QP must
stay convex: a compressed spring's geometric stiffness is indefinite) and the stepper iterates
until the equations of motion hold with the end-of-step forces, so any such H gives the same
converged step; H only sets how fast the iterations converge. Here H is the sum over elements
of the positive semidefinite part of each element's block of J = -db/dy (symmetric part): each
block couples only the element's own bodies, so the blocks are projected in one batched
eigendecomposition and summed into a sparse pattern fixed once per run. The cost grows with the
number of elements, not with the cube of the body count.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .fastcall import FastFunction


class ImplicitLinearisation:
    """``terms(q0, t0, h, y_imp, z)`` -> (b, H nonzeros in ``pattern``, b + H y_imp)."""

    def __init__(self, cs, q0, t0, h, y, z, Linv, b, element_Q):
        """Symbols of the step program; ``b`` the implicit elements' impulse L^-1 Q_imp;
        ``element_Q`` (nv x n_elements) what each element exerts over the step, or a
        stand-in with the same derivative in y to first order (``CompiledSystem.step_forces``
        ``tangent``: the energy-consistent elements' discrete gradient is costly to
        differentiate), expressions of y: H is built from it."""
        nv = cs.nv
        y_imp = ca.SX.sym("y_imp", nv)
        by_size: dict[int, list] = {}
        for j, el in enumerate(cs.force_elements):
            if el.evaluation == "explicit":
                continue
            idx = sorted({6 * body.index + i for body in el.bodies if not body.is_ground
                          for i in range(6)})
            if not idx:
                continue
            b_el = ca.substitute(h * Linv[idx, idx] @ element_Q[idx, j], y, y_imp)
            J = -ca.jacobian(b_el, y_imp[idx])
            by_size.setdefault(len(idx), []).append((idx, ca.vec(0.5 * (J + J.T))))
        self.groups = []            # (block size k, (n, k) velocity indices)
        blocks, rows, cols = [], [], []
        for k, members in sorted(by_size.items()):
            idx = np.array([m[0] for m in members], dtype=np.int64)
            self.groups.append((k, idx))
            blocks += [m[1] for m in members]
            rows.append(np.repeat(idx[:, None, :], k, axis=1).ravel())     # row i of block[c, i]
            cols.append(np.repeat(idx[:, :, None], k, axis=2).ravel())     # column c
        rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        cols = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        # block entries are column-major (ca.vec); the pattern's nonzeros are column-major too
        keys = np.unique(cols * nv + rows)
        self.pattern = ca.Sparsity.triplet(nv, nv, (keys % nv).tolist(), (keys // nv).tolist())
        self.nnz = self.pattern.nnz()
        self._slot = np.searchsorted(keys, cols * nv + rows)
        self._nv = nv
        self._function = FastFunction(ca.Function(
            "implicit_terms", [q0, t0, h, y_imp, z],
            [ca.substitute(b, y, y_imp), ca.densify(ca.vertcat(*blocks)) if blocks else ca.SX(0, 1)],
            ["q0", "t0", "h", "y_imp", "z"], ["b", "blocks"], {"cse": True}))

    def __call__(self, q0, t0, h, y_imp, z):
        """(H nonzeros, b(y_imp) + H y_imp): the QP's Hessian term and its linear term."""
        b, blocks = self._function(q0, t0, h, y_imp, z)
        projected, Hy, start = [], np.zeros(self._nv), 0
        for k, idx in self.groups:
            J = blocks[start:start + idx.size * k].reshape(len(idx), k, k)
            start += idx.size * k
            lam, V = np.linalg.eigh(J)
            H = (V * np.maximum(lam, 0.0)[:, None, :]) @ V.transpose(0, 2, 1)
            projected.append(H.ravel())
            Hy += np.bincount(idx.ravel(), (H @ y_imp[idx][:, :, None]).ravel(), minlength=self._nv)
        values = np.concatenate(projected) if projected else np.zeros(0)
        return np.bincount(self._slot, values, minlength=self.nnz), b + Hy
