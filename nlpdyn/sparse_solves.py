"""Sparse linear solves of the per-step program as CasADi MX (least-norm solutions by iterated
Tikhonov, quasi-definite KKT systems by sparse LDL^T) and the small sparse helpers they use."""
from __future__ import annotations

from collections.abc import Callable

import casadi as ca
import numpy as np


def pseudo_inverse_solve(W: ca.MX, name: str, regularization: float,
                         refinements: int) -> Callable[[ca.MX], ca.MX]:
    """r -> z = W^+ r for a sparse symmetric positive semidefinite W = A A^T, as MX: iterated
    Tikhonov, (W + delta I) z_k+1 = (W + delta I) z_k + r - W z_k with delta = regularization
    times W's largest diagonal entry, converges to the pseudo-inverse solution, so redundant
    rows are solvable. The pattern is analysed once, by CasADi's sparse LDL^T.

    Parameters
    ----------
    W : casadi.MX, shape (n, n)
        Sparse, symmetric positive semidefinite.
    name : str
        The linear solver's name.
    regularization : float
        delta relative to W's largest diagonal entry.
    refinements : int
        The number of Tikhonov iterations.

    Returns
    -------
    callable
        ``solve(r) -> z`` on MX vectors (n,).

    Examples
    --------
    >>> import casadi as ca
    >>> A = ca.MX(ca.DM([[1.0, 0.0], [1.0, 0.0]]))      # two equal rows
    >>> solve = pseudo_inverse_solve(A @ A.T, "ls", 1e-8, 3)
    >>> z = ca.Function("z", [], [solve(ca.DM([1.0, 1.0]))])()["o0"]
    >>> [round(float(x), 6) for x in z.full().ravel()]
    [0.5, 0.5]
    """
    n = W.size1()
    eye = ca.MX(ca.DM.eye(n))
    pattern = W.sparsity() + eye.sparsity()
    W_reg = ca.project(W + regularization * ca.mmax(ca.diag(W)) * eye, pattern)
    solver = ca.Linsol(name, "ldl", pattern)

    def solve(r):
        z = ca.MX.zeros(n)
        for _ in range(refinements):
            z = z + solver.solve(W_reg, r - W @ z)
        return z
    return solve


def kkt_solve(H: ca.MX, g: ca.MX, A: ca.MX, c: ca.MX, name: str, regularization: float,
              refinements: int) -> tuple[ca.MX, ca.MX]:
    """(y, lam) of min y^T H y / 2 + g^T y s.t. A y + c = 0, as MX, for a sparse positive
    definite H: the KKT system H y + A^T lam = -g, A y = -c solved by iterative refinement on
    the quasi-definite [[H, A^T], [A, -delta I]] (delta = regularization times the largest
    diagonal entry of A A^T), whose LDL^T exists in any order (Vanderbei 1995), so CasADi's
    sparse LDL^T analyses the pattern once; the refinements converge to the multipliers of
    least norm, so redundant rows are solvable (as ``pseudo_inverse_solve``).

    Parameters
    ----------
    H : casadi.MX, shape (n, n)
        Sparse, symmetric positive definite.
    g : casadi.MX, shape (n, 1)
    A : casadi.MX, shape (m, n)
    c : casadi.MX, shape (m, 1)
    name : str
        The linear solver's name.
    regularization : float
        delta relative to the largest diagonal entry of A A^T.
    refinements : int
        The number of refinement steps.

    Returns
    -------
    y : casadi.MX, shape (n, 1)
    lam : casadi.MX, shape (m, 1)

    Examples
    --------
    >>> import casadi as ca
    >>> y, lam = kkt_solve(ca.MX(ca.DM.eye(2)), ca.MX(ca.DM([-1.0, 0.0])),
    ...                    ca.MX(ca.DM([[0.0, 1.0]])), ca.MX(ca.DM([-2.0])), "kkt", 1e-12, 2)
    >>> ca.Function("f", [], [y])()["o0"].full().ravel().tolist()
    [1.0, 2.0]
    """
    nv, nk = H.size1(), A.size1()
    eye_v = ca.MX(ca.DM.eye(nv))
    if nk == 0:
        pattern = H.sparsity() + eye_v.sparsity()
        solver = ca.Linsol(name, "ldl", pattern)
        return solver.solve(ca.project(H, pattern), -g), ca.MX(0, 1)
    delta = regularization * ca.fmax(ca.mmax(ca.sum2(A * A)), 1e-300)
    K = ca.blockcat([[H, A.T], [A, ca.MX(nk, nk)]])
    eye_k = ca.MX(ca.DM(ca.Sparsity.diag(nk), 1.0))
    pattern = K.sparsity() + ca.diagcat(eye_v, eye_k).sparsity()
    K_reg = ca.project(K - ca.diagcat(ca.MX(nv, nv), delta * eye_k), pattern)
    solver = ca.Linsol(name, "ldl", pattern)
    rhs = ca.vertcat(-g, -c)
    x = ca.MX.zeros(nv + nk)
    for _ in range(refinements):
        x = x + solver.solve(K_reg, rhs - K @ x)
    return x[:nv], x[nv:]


def _max_abs(x):
    return ca.mmax(ca.fabs(x)) if x.numel() else ca.DM(0)


def _min_or_inf(x):
    return ca.mmin(x) if x.numel() else ca.DM(np.inf)


def _diagonal_blocks(L, invert=False) -> list:
    """The 3x3 diagonal blocks of the block-diagonal L, or their inverses."""
    blocks = [L[i:i + 3, i:i + 3] for i in range(0, len(L), 3)]
    return [np.linalg.inv(b) for b in blocks] if invert else blocks


def _block_diagonal(L, invert=False) -> ca.DM:
    """The block-diagonal (3x3 blocks) matrix L as a sparse DM, every block entry stored (as
    from scipy's ``block_diag``), or its inverse block by block."""
    blocks = _diagonal_blocks(L, invert)
    return ca.diagcat(*[ca.DM(b) for b in blocks]) if blocks else ca.DM(0, 0)


def _block_diagonal_csr_t(L, invert=False):
    """The transpose of ``_block_diagonal(L, invert)`` as scipy CSR (for numpy products)."""
    from scipy import sparse
    return sparse.block_diag(_diagonal_blocks(L, invert), format="csc").T.tocsr()


def _segment_sums(segments, n) -> ca.DM:
    """(len(segments), n) sparse 0/1 matrix that sums each [start, stop) segment of a vector."""
    rows = [i for i, (a, b) in enumerate(segments) for _ in range(a, b)]
    cols = [j for a, b in segments for j in range(a, b)]
    return ca.DM(ca.Sparsity.triplet(len(segments), n, rows, cols), 1.0)
