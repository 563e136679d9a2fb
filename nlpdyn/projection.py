"""Mass-weighted projection of positions and velocities onto the constraint manifold.

Positions: Gauss-Newton on min 1/2 dx^T M dx s.t. Phi(q (+) dx, t) = 0, where dx = [dr; dtheta']
per body (dtheta' a small rotation in the body frame), so Euler parameters stay unit.
Velocities: the exact M-orthogonal projection onto Pi(q) v + Phi_t = 0.
Both solve in scaled unknowns dy = L^T dx (M = L L^T), where the metric is the identity:
dy = -A^T (A A^T)^+ r with A = Pi L^-T, by a sparse LDL^T of A A^T + delta I and iterated
Tikhonov, which converges to the pseudo-inverse solution, so redundant joints are fine.
With gaps, positions are projected onto {Phi = 0, g >= 0} by Gauss-Newton steps that each
solve a sparse QP (GapProjector). The sparsity patterns are analysed once per system, and
each Gauss-Newton iteration (rows, Jacobians, solve, increment, new violation) is one
CasADi call: the cost grows linearly with the bodies (with gaps: with a sparse QP plugin).
"""
from __future__ import annotations

import weakref

import casadi as ca
import numpy as np

from .fastcall import FastFunction, silenced_stdout
from .sparse_solves import _block_diagonal, _max_abs, _min_or_inf, pseudo_inverse_solve

# The least-distance solves' Tikhonov shift, relative to the largest diagonal entry of A A^T:
# eigenvalues far below it count as zero (as lstsq's rcond = 1e-12 did), and each refinement
# divides the error along an eigenvalue lam by ~lam / delta (a long chain's smallest lam is
# ~1e-10 of the largest). Off the manifold, rows redundant on it have eigenvalues that shrink
# with the distance squared; from ~1e-5 away (lstsq: ~2e-4) the steps partly invert them, and
# the projected point, still on the constraints, is farther than the closest (A02: <= ~40 %).
_REGULARIZATION = 1e-12
_REFINEMENTS = 4

# qpOASES' ramping start fails on many of these QPs (identity Hessian, gap rows of equal
# value at a bore's two ends: "division by zero" in the TQ factorisation, measured)
_PROJECTION_OPTIONS = {"qpoases": {"enableRamping": False}}

_built = weakref.WeakKeyDictionary()


def apply_increment(q, dx, n_bodies):
    """q (+) dx: translate centres and rotate each body by its body-frame rotation vector."""
    q = np.asarray(q, dtype=float).reshape(n_bodies, 7)
    dx = np.asarray(dx, dtype=float).reshape(n_bodies, 6)
    theta = dx[:, 3:]
    half = 0.5 * np.linalg.norm(theta, axis=1)
    # exp(theta/2) = [cos |theta|/2, sin(|theta|/2) theta / |theta|]; np.sinc(x) = sin(pi x)/(pi x)
    e0, e = np.cos(half), 0.5 * np.sinc(half / np.pi)[:, None] * theta
    p0, p = q[:, 3], q[:, 4:]
    rotated = np.column_stack([p0 * e0 - np.einsum("ij,ij->i", p, e),
                               p0[:, None] * e + e0[:, None] * p + np.cross(p, e)])
    rotated /= np.linalg.norm(rotated, axis=1, keepdims=True)
    return np.column_stack([q[:, :3] + dx[:, :3], rotated]).ravel()


def normalise(q, n_bodies):
    q = np.array(q, dtype=float).reshape(n_bodies, 7)
    q[:, 3:] /= np.linalg.norm(q[:, 3:], axis=1, keepdims=True)
    return q.ravel()


def project_positions(cs, q, t, tol=1e-12, max_iter=50):
    """Project q onto Phi(q, t) = 0 with the smallest mass-weighted change.

    Returns (q_projected, iterations, violation_after, converged).
    """
    q = normalise(q, cs.n_bodies)
    if cs.n_eq == 0:
        return q, 0, 0.0, True
    return _projections(cs).iterate(q, t, tol * max(1.0, np.abs(q).max()), max_iter)


def project_velocities(cs, q, v, t):
    """Project v onto Pi(q) v + Phi_t(q, t) = 0 (M-orthogonal). Returns (v_projected, residual)."""
    if cs.n_eq == 0:
        return v.copy(), 0.0
    # re-projecting the residual refines an ill-conditioned solve (a light body between
    # heavy ones): repeat while it shrinks
    v_new, residual = _projections(cs).velocities(q, v, t)
    for _ in range(10):
        v_next, next_residual = _projections(cs).velocities(q, v_new, t)
        if not next_residual.item() < 0.5 * residual.item():
            break
        v_new, residual = v_next, next_residual
    return v_new, residual.item()


def body_change(a, b, n_bodies, size):
    """Largest translational and rotational change between two stacked 6N vectors."""
    d = (b - a).reshape(n_bodies, size)
    if n_bodies == 0:
        return 0.0
    return float(max(np.linalg.norm(d[:, :3], axis=1).max(), np.linalg.norm(d[:, 3:6], axis=1).max()))


def position_change(q_from, q_to, n_bodies):
    """Largest centre displacement (m) and rotation angle (rad) between two configurations."""
    a, b = np.reshape(q_from, (n_bodies, 7)), np.reshape(q_to, (n_bodies, 7))
    moves = np.linalg.norm(b[:, :3] - a[:, :3], axis=1)
    cosines = np.minimum(1.0, np.abs(np.einsum("ij,ij->i", a[:, 3:], b[:, 3:]))
                         / (np.linalg.norm(a[:, 3:], axis=1) * np.linalg.norm(b[:, 3:], axis=1)))
    return float(max(moves.max(initial=0.0), 2 * np.arccos(cosines).max(initial=0.0)))


class _GaussNewton:
    """Gauss-Newton on a violation, one fused CasADi call per iteration: ``_violation``
    (q, t) -> violation and ``_step`` (q, t) -> (q (+) dx, the violation there)."""

    def iterate(self, q, t, tol, max_iter):
        """Iterate from q until the violation is <= tol: (q, iterations, violation, converged)."""
        viol = self._violation(q, t)[0].item()
        for it in range(max_iter):
            if viol <= tol:
                return q, it, viol, True
            q_next, viol_next = self._step(q, t)
            if not np.isfinite(q_next).all():       # the QP plugin failed: keep the last iterate
                return q, it, viol, False
            q, viol = q_next, viol_next.item()
        return q, max_iter, viol, viol <= tol


class GapProjector(_GaussNewton):
    """Mass-weighted projection onto {Phi(q, t) = 0, g(q) >= 0}, built once per system.

    Each Gauss-Newton step solves min 1/2 |dy|^2 s.t. Phi + Pi L^-T dy = 0,
    g + Pi_g L^-T dy >= 0 (dy = L^T dx) with a CasADi QP plugin, on the sparse patterns of
    the symbolic Jacobians.
    """

    def __init__(self, cs, plugin="qpoases", options=None):
        # qpoases (dense inside: up to ~60 unknowns) or proxqp's sparse backend (linear cost,
        # benchmarks/projection_cost.py); daqp and qrqp did not converge on these projections
        self.cs = cs
        opts = {"error_on_fail": False, **_PROJECTION_OPTIONS.get(plugin, {}), **(options or {})}
        Q, T = ca.MX.sym("q", cs.nq), ca.MX.sym("t")
        A = _scaled_jacobian(cs, lambda q, t: ca.vertcat(cs.velocity_jacobian(q, t),
                                                         cs.gap_jacobian(q)))(Q, T)
        phi, g = cs.phi(Q, T), cs.gap(Q)
        H = ca.DM.eye(cs.nv)
        with silenced_stdout():     # qpOASES prints its banner when it allocates memory
            qp = ca.conic("gap_projection", plugin, {"h": H.sparsity(), "a": A.sparsity()}, opts)
        # the QP is homogeneous in its bounds: solved for dy / violation, its data are O(1)
        # whatever the violation (qpOASES' tolerances are absolute, ~1e-10)
        scale = _gap_violation(cs, Q, T)
        dy = scale * qp(h=H, a=A, lba=ca.vertcat(-phi, -g) / scale,
                        uba=ca.vertcat(-phi / scale, ca.DM.inf(cs.n_gap)))["x"]
        self._violation = _violation_function(cs, "gap_violation", Q, T, _gap_violation)
        self._solve_step = _step_function(cs, "gap_projection_step", Q, T, _scaling(cs) @ dy,
                                          _gap_violation)
        self._step = self._first_step

    def project(self, q, t, tol=1e-12, max_iter=10):
        """Returns (q_projected, iterations, violation_after, converged)."""
        return self.iterate(normalise(q, self.cs.n_bodies), t, tol, max_iter)

    def _first_step(self, q, t):
        with silenced_stdout():     # qpOASES prints its banner on its first solve
            result = self._solve_step(q, t)
        self._step = self._solve_step
        return result


# up to this many velocity unknowns independent_rows tries numpy's singular values first
# (threaded BLAS keeps them cheap at this size)
_FULL_RANK_BY_SVD = 100


def independent_rows(cs, q, t, tol=1e-9, samples=2, seed=0):
    """Indices of a largest set of linearly independent constraint rows near q (on the
    manifold), by QR with column pivoting of Pi^T.

    A row dependent on the others at q may be so only at q (a singular configuration) or
    everywhere (an overconstrained loop); the rank is therefore also taken at ``samples``
    configurations reached by small random moves along the mechanism's free directions and
    projected back onto the constraints, and the row set of the largest rank is returned.
    ``tol``: relative size of the pivots counted as zero."""
    if cs.n_eq <= cs.nv <= _FULL_RANK_BY_SVD:
        # clearly independent rows need no QR (nor scipy.linalg's 0.18 s import): a pivoted
        # QR's pivots are at least sigma_min, its largest at most sigma_max
        s = np.linalg.svd(np.asarray(cs.velocity_jacobian(q, t)).reshape(cs.n_eq, cs.nv),
                          compute_uv=False)
        if s.min(initial=np.inf) > 1e3 * tol * s.max(initial=0.0):
            return np.arange(cs.n_eq, dtype=np.int32)     # as scipy's pivots
    from scipy.linalg import qr
    from threadpoolctl import threadpool_limits
    rng = np.random.default_rng(seed)

    def rank_and_rows(q):
        Pi = np.asarray(cs.velocity_jacobian(q, t)).reshape(cs.n_eq, cs.nv)
        # one BLAS thread: threaded OpenBLAS was 20-100x slower on these sizes (2-core host)
        with threadpool_limits(limits=1, user_api="blas"):
            Q, R, perm = qr(Pi.T, pivoting=True)
        pivots = np.abs(np.diag(R))
        rank = int(np.count_nonzero(pivots > tol * max(pivots.max(initial=0.0), 1e-300)))
        return rank, np.sort(perm[:rank]), Q[:, rank:]      # the directions Pi does not fix

    best_rank, best_rows, free = rank_and_rows(q)
    if best_rank == cs.n_eq:
        return best_rows
    for _ in range(samples):
        move = free @ rng.normal(size=free.shape[1])
        moved = apply_increment(q, 1e-3 * move / max(np.abs(move).max(), 1e-300), cs.n_bodies)
        moved, _, _, ok = project_positions(cs, moved, t)
        if not ok:
            continue
        rank, rows, _ = rank_and_rows(moved)
        if rank > best_rank:
            best_rank, best_rows = rank, rows
    return best_rows


# ---------------------------------------------------------------------- sparse machinery
class _Projections(_GaussNewton):
    """The projections of one system onto Phi = 0: Gauss-Newton on positions (``iterate``)
    and ``velocities`` (q, v, t) -> (v projected, residual), each one CasADi call."""

    def __init__(self, cs):
        Linv_T = _scaling(cs)
        Q, V, T = ca.MX.sym("q", cs.nq), ca.MX.sym("v", cs.nv), ca.MX.sym("t")
        A = _scaled_jacobian(cs, lambda q, t: cs.velocity_jacobian(q, t))(Q, T)
        solve = _least_distance(A, ca.mtimes(A, A.T), "projection_ldl")
        self._violation = _violation_function(cs, "phi_violation", Q, T, _phi_violation)
        self._step = _step_function(cs, "position_projection_step", Q, T,
                                    Linv_T @ solve(cs.phi(Q, T)), _phi_violation)
        Pi, phi_t = cs.velocity_jacobian(Q, T), cs.phi_t(Q, T)
        v_new = V + Linv_T @ solve(Pi @ V + phi_t)
        self.velocities = FastFunction(ca.Function(
            "velocity_projection", [Q, V, T], [ca.densify(v_new), _max_abs(Pi @ v_new + phi_t)],
            ["q", "v", "t"], ["v_projected", "residual"]))


def _projections(cs) -> _Projections:
    """The projections of ``cs``, built on its first projection and kept while it lives."""
    if cs not in _built:
        _built[cs] = _Projections(cs)
    return _built[cs]


def _scaling(cs) -> ca.DM:
    """L^-T as a sparse DM (M = L L^T is block diagonal, 3x3 blocks): dx = L^-T dy."""
    return _block_diagonal(cs.L, invert=True).T


def _scaled_jacobian(cs, jacobian) -> ca.Function:
    """(q, t) -> jacobian(q, t) L^-T, sparse, as one SX function (the scaling folded in)."""
    q, t = ca.SX.sym("q", cs.nq), ca.SX.sym("t")
    return ca.Function("scaled_jacobian", [q, t], [jacobian(q, t) @ _scaling(cs)], ["q", "t"], ["A"])


def _least_distance(A, W, name):
    """r -> dy = -A^T (A A^T)^+ r, the smallest dy with A dy = -r (least squares if none),
    A and W = A A^T sparse."""
    solve = pseudo_inverse_solve(W, name, _REGULARIZATION, _REFINEMENTS)
    return lambda r: -A.T @ solve(r)


def _violation_function(cs, name, Q, T, violation) -> FastFunction:
    f = ca.Function(name, [Q, T], [violation(cs, Q, T)], ["q", "t"], ["violation"])
    assert not f.has_free()
    return FastFunction(f)


def _step_function(cs, name, Q, T, dx, violation) -> FastFunction:
    """(q, t) -> (q (+) dx, the violation there) as one call."""
    n = cs.n_bodies
    q_next = ca.vec(_increment(n)(ca.reshape(Q, 7, n), ca.reshape(dx, 6, n)))
    f = ca.Function(name, [Q, T], [ca.densify(q_next), violation(cs, q_next, T)],
                    ["q", "t"], ["q_next", "violation"])
    assert not f.has_free()
    return FastFunction(f)


def _increment(n_bodies) -> ca.Function:
    """``apply_increment`` for CasADi: (7 x N, 6 x N) -> 7 x N, one column per body."""
    q, dx = ca.SX.sym("q", 7), ca.SX.sym("dx", 6)
    theta = dx[3:]
    angle = ca.norm_2(theta)
    # sin(|theta|/2)/|theta|, its Taylor series where the quotient is 0/0
    s = ca.if_else(angle > 1e-6, ca.sin(0.5 * angle) / angle, 0.5 - angle**2 / 48)
    e0, e = ca.cos(0.5 * angle), s * theta
    p0, p = q[3], q[4:]
    rotated = ca.vertcat(p0 * e0 - ca.dot(p, e), p0 * e + e0 * p + ca.cross(p, e))
    body = ca.Function("body_increment", [q, dx],
                       [ca.vertcat(q[:3] + dx[:3], rotated / ca.norm_2(rotated))])
    return body.map(n_bodies)


def _phi_violation(cs, Q, T):
    return _max_abs(cs.phi(Q, T))


def _gap_violation(cs, Q, T):
    """max(|Phi|, -g, 0)."""
    return ca.fmax(_max_abs(cs.phi(Q, T)), ca.fmax(-_min_or_inf(cs.gap(Q)), 0))

