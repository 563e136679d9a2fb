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

After a step's first iterate the impulse at the new iterate is known (the solve's EOM check
evaluated it), and H is kept while it predicts the impulse's change between iterates within
``REUSE_ERROR`` (a modified Newton iteration, as implicit Runge-Kutta codes keep their
Jacobian); a contact that closes or opens between iterates gets a fresh H.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import casadi as ca
import numpy as np

from .fastcall import FastFunction

if TYPE_CHECKING:
    from .system import CompiledSystem

REUSE_ERROR = 0.1   # largest share of the impulse's change between iterates H may miss


class ImplicitLinearisation:
    """``linearisation(q0, v0, t0, h, y_imp, z, b)`` -> (H nonzeros in ``pattern``, b + H
    y_imp), once built (``build``).

    Parameters
    ----------
    cs : CompiledSystem
        The system (its force elements and mass matrix factor).
    q0, v0, t0, h, y, z : casadi.SX
        Symbols of the step program: start state, time, step, the step's scaled velocity
        unknowns and the program's memory.
    Linv : casadi.SX or casadi.DM, shape (nv, nv)
        The inverse of the mass matrix's Cholesky factor L.
    b : casadi.SX, shape (nv, 1)
        The implicit elements' impulse L^-1 Q_imp.
    element_Q : casadi.SX, shape (nv, n_elements)
        What each element exerts over the step, or a stand-in with the same derivative in y
        to first order (``CompiledSystem.step_forces`` ``tangent``: the energy-consistent
        elements' discrete gradient is costly to differentiate), expressions of y: H is
        built from it.
    element_QV : tuple of casadi.SX, each of shape (nv, n_elements), optional
        The stored energy's part of ``element_Q`` (``tangent_V``) and its stand-in at the
        end of the step, whose blocks for the energy-consistent contact elements
        (``ForceElement.is_contact``) give their stiffness (``contact_stiffness``, the larger
        of the two).

    Examples
    --------
    The step program builds one when the system has implicit elements:

    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3), velocity=(0.1, 0, 0))
    >>> spring = s.add_force(nd.Bushing(s.ground, b, (0, 0, 0), stiffness=1e4))
    >>> spring.evaluation = "implicit"
    >>> lin = nd.Stepper(s, 1e-3, jit=False).program.implicit
    >>> lin.nnz, [k for k, _ in lin.groups]          # one 6 x 6 block: the body's
    (36, [6])
    """

    def __init__(self, cs: CompiledSystem, q0: ca.SX, v0: ca.SX, t0: ca.SX, h: ca.SX, y: ca.SX,
                 z: ca.SX, Linv: ca.SX | ca.DM, b: ca.SX, element_Q: ca.SX,
                 element_QV: tuple[ca.SX, ...] | None = None) -> None:
        nv = cs.nv
        # the iterate y_imp is the step's own y: b and the blocks are expressions of it as
        # built (no per-element copy of the graph: neighbours share their bodies' kinematics)
        y_imp = y
        by_size: dict[int, list] = {}
        contacts = []
        for j, el in enumerate(cs.force_elements):
            if el.evaluation == "explicit":
                continue
            idx = sorted({6 * body.index + i for body in el.bodies if not body.is_ground
                          for i in range(6)})
            if not idx:
                continue
            J = -ca.jacobian(h * Linv[idx, idx] @ element_Q[idx, j], y_imp[idx])
            by_size.setdefault(len(idx), []).append((idx, ca.vec(0.5 * (J + J.T))))
            if el.is_contact and el.evaluation == "implicit" and element_QV is not None:
                # each block's Frobenius norm: its largest eigenvalue for one contact
                # coordinate (a stop), a bound within sqrt(rank) for several (strips); the
                # larger of the step's and its end's
                norms = []
                for QV in element_QV:
                    J_V = -ca.jacobian(h * Linv[idx, idx] @ QV[idx, j], y_imp[idx])
                    norms.append(ca.norm_fro(0.5 * (J_V + J_V.T)))
                contacts.append((j, ca.mmax(ca.vertcat(*norms))))
        self.groups = []            # (block size k, (n, k) velocity indices)
        self.contacts = [j for j, _ in contacts]            # their force elements' indices
        self.contact_stiffness = np.zeros(len(contacts))    # their blocks' norms
        # an impact loads along its laws' loading branch, which may be stiffer than the
        # stored energy (the modified Kelvin-Voigt law: K against c_e K): its omega over the
        # stored energy's
        self.loading_omega_ratio = np.sqrt([cs.force_elements[j].loading_stiffness_ratio
                                            for j in self.contacts])
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
        self._inputs = [q0, v0, t0, h, y_imp, z]
        block_values = ca.densify(ca.vertcat(*blocks, *[c[1] for c in contacts])
                                  ) if blocks else ca.SX(0, 1)
        self._n_blocks = sum(k * k * len(idx) for k, idx in self.groups)
        self.outputs = [b, block_values]
        self._function = None
        self._H = []                # per group the projected blocks, (n, k, k)
        self._values = np.zeros(self.nnz)
        self._at = None             # (b, H y) at the last linearisation or iterate

    def build(self, outputs: list[ca.SX] | None = None,
              wrap: Callable[[ca.Function], Callable] = FastFunction) -> None:
        """Build the function from ``outputs``.

        Parameters
        ----------
        outputs : list of casadi.SX, optional
            ``self.outputs`` (b, the blocks) with their common subexpressions already
            eliminated together with the step program's other functions (``StepProgram``: one
            pass over what they share); None: eliminated here.
        wrap : callable
            Makes the callable of the ``casadi.Function`` (``StepProgram._hot``: compiled
            where asked).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System(gravity=(0, 0, 0))
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3), velocity=(0.1, 0, 0))
        >>> spring = s.add_force(nd.Bushing(s.ground, b, (0, 0, 0), stiffness=1e4))
        >>> spring.evaluation = "implicit"
        >>> lin = nd.Stepper(s, 1e-3, jit=False).program.implicit
        >>> lin.build()                  # again, eliminating the subexpressions here
        >>> lin.nnz
        36
        """
        self._function = wrap(ca.Function(
            "implicit_terms", self._inputs, self.outputs if outputs is None else outputs,
            ["q0", "v0", "t0", "h", "y_imp", "z"], ["b", "blocks"],
            {"cse": True} if outputs is None else {}))

    def __call__(self, q0, v0, t0, h, y_imp, z, b=None):
        """(H nonzeros, b(y_imp) + H y_imp): the QP's Hessian term and its linear term.

        ``b``: the impulse at ``y_imp`` where a solve gave it (iterates after a step's first);
        then H is the last one while it predicted the change of b from the last iterate to
        ``y_imp`` within ``REUSE_ERROR``, else formed at ``y_imp``."""
        Hy = None if b is None else self._apply(y_imp)
        if b is None or not self._predicts(b, Hy):
            b, blocks = self._function(q0, v0, t0, h, y_imp, z)
            self._project(blocks)
            Hy = self._apply(y_imp)
        self._at = (np.array(b, dtype=float), Hy)
        return self._values, b + Hy

    def _project(self, blocks):
        """Each block's positive semidefinite part, kept for ``_apply`` and as nonzeros."""
        self._H, start = [], 0
        for k, idx in self.groups:
            J = blocks[start:start + idx.size * k].reshape(len(idx), k, k)
            start += idx.size * k
            if not J.any():     # slack: open contacts, stops away from their limits
                self._H.append(np.zeros_like(J))
                continue
            try:
                lam, V = np.linalg.eigh(J)
            except np.linalg.LinAlgError:   # a law beyond its range (not finite): the
                self._H.append(np.full_like(J, np.nan))     # step's check refuses the solve
                continue
            self._H.append((V * np.maximum(lam, 0.0)[:, None, :]) @ V.transpose(0, 2, 1))
        self.contact_stiffness = np.array(blocks[self._n_blocks:])
        values = np.concatenate([H.ravel() for H in self._H]) if self._H else np.zeros(0)
        self._values = np.bincount(self._slot, values, minlength=self.nnz)

    def _apply(self, x):
        """H x."""
        Hx = np.zeros(self._nv)
        for (_, idx), H in zip(self.groups, self._H):
            Hx += np.bincount(idx.ravel(), (H @ x[idx][:, :, None]).ravel(), minlength=self._nv)
        return Hx

    def _predicts(self, b, Hy) -> bool:
        """Whether b(y_last) - H (y - y_last) is b = b(y) within ``REUSE_ERROR`` of the change
        (``Hy``: H y with the H of the last iterate, which also gave H y_last)."""
        b_last, Hy_last = self._at
        change = b - b_last
        miss = change + Hy - Hy_last
        return bool(np.linalg.norm(miss) <= REUSE_ERROR * np.linalg.norm(change))
