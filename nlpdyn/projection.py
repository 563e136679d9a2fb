"""Mass-weighted projection of positions and velocities onto the constraint manifold.

Positions: Gauss-Newton on min 1/2 dx^T M dx s.t. Phi(q (+) dx, t) = 0, where dx = [dr; dtheta']
per body (dtheta' a small rotation in the body frame), so Euler parameters stay unit.
Velocities: the exact M-orthogonal projection onto Pi(q) v + Phi_t = 0.
Both use a pseudo-inverse, so redundant joints are fine. With gaps, positions are projected
onto {Phi = 0, g >= 0} by Gauss-Newton steps that each solve a small QP (GapProjector).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .fastcall import silenced_stdout
from .rotations import from_rotation_vector, quaternion_product


def _minimum_norm(Pi, Minv, residual, rank_tol=1e-12):
    """dx = -M^-1 Pi^T (Pi M^-1 Pi^T)^+ residual."""
    if Pi.shape[0] == 0:
        return np.zeros(Pi.shape[1])
    W = Pi @ Minv @ Pi.T
    return -Minv @ Pi.T @ np.linalg.lstsq(W, residual, rcond=rank_tol)[0]


def apply_increment(q, dx, n_bodies):
    """q (+) dx: translate centres and rotate each body by its body-frame rotation vector."""
    q = q.copy()
    for k in range(n_bodies):
        q[7 * k:7 * k + 3] += dx[6 * k:6 * k + 3]
        p = quaternion_product(q[7 * k + 3:7 * k + 7], from_rotation_vector(dx[6 * k + 3:6 * k + 6]))
        q[7 * k + 3:7 * k + 7] = p / np.linalg.norm(p)
    return q


def normalise(q, n_bodies):
    q = q.copy()
    for k in range(n_bodies):
        q[7 * k + 3:7 * k + 7] /= np.linalg.norm(q[7 * k + 3:7 * k + 7])
    return q


def project_positions(cs, q, t, tol=1e-12, max_iter=50):
    """Project q onto Phi(q, t) = 0 with the smallest mass-weighted change.

    Returns (q_projected, iterations, violation_after, converged).
    """
    Minv = np.linalg.inv(cs.M)
    q = normalise(q, cs.n_bodies)
    scale = max(1.0, np.abs(q).max())
    viol = np.inf
    for it in range(max_iter + 1):
        phi = np.asarray(cs.phi(q, t)).ravel()
        viol = np.abs(phi).max() if phi.size else 0.0
        if viol <= tol * scale:
            return q, it, viol, True
        if it == max_iter:
            break
        Pi = np.asarray(cs.velocity_jacobian(q, t))
        q = apply_increment(q, _minimum_norm(Pi, Minv, phi), cs.n_bodies)
    return q, max_iter, viol, False


def project_velocities(cs, q, v, t):
    """Project v onto Pi(q) v + Phi_t(q, t) = 0 (M-orthogonal). Returns (v_projected, residual)."""
    if cs.n_eq == 0:
        return v.copy(), 0.0
    Minv = np.linalg.inv(cs.M)
    Pi = np.asarray(cs.velocity_jacobian(q, t))
    phi_t = np.asarray(cs.phi_t(q, t)).ravel()
    v_new = v + _minimum_norm(Pi, Minv, Pi @ v + phi_t)
    return v_new, float(np.abs(Pi @ v_new + phi_t).max())


def body_change(a, b, n_bodies, size):
    """Largest translational and rotational change between two stacked 6N vectors."""
    d = (b - a).reshape(n_bodies, size)
    if n_bodies == 0:
        return 0.0
    return float(max(np.linalg.norm(d[:, :3], axis=1).max(), np.linalg.norm(d[:, 3:6], axis=1).max()))


def position_change(q_from, q_to, n_bodies):
    """Largest centre displacement (m) and rotation angle (rad) between two configurations."""
    worst = 0.0
    for k in range(n_bodies):
        worst = max(worst, np.linalg.norm(q_to[7 * k:7 * k + 3] - q_from[7 * k:7 * k + 3]))
        p, r = q_from[7 * k + 3:7 * k + 7], q_to[7 * k + 3:7 * k + 7]
        c = min(1.0, abs(float(p @ r)) / (np.linalg.norm(p) * np.linalg.norm(r)))
        worst = max(worst, 2 * np.arccos(c))
    return worst


class GapProjector:
    """Mass-weighted projection onto {Phi(q, t) = 0, g(q) >= 0}, built once per system.

    Each Gauss-Newton step solves min 1/2 |dy|^2 s.t. Phi + Pi L^-T dy = 0,
    g + Pi_g L^-T dy >= 0 (dy = L^T dx) with a CasADi QP plugin.
    """

    def __init__(self, cs, plugin="qpoases", options=None):
        # qpoases: daqp and qrqp did not converge on these projections (measured)
        self.cs = cs
        self.Linv_T = np.linalg.inv(cs.L).T
        n_rows = cs.n_eq + cs.n_gap
        opts = {"error_on_fail": False}
        opts.update(options or {})
        with silenced_stdout():
            self.qp = ca.conic("gap_projection", plugin, {"h": ca.Sparsity.dense(cs.nv, cs.nv),
                                                           "a": ca.Sparsity.dense(n_rows, cs.nv)},
                               opts)
        self._first = True
        self.H = np.eye(cs.nv)

    def project(self, q, t, tol=1e-12, max_iter=10):
        """Returns (q_projected, iterations, violation_after, converged)."""
        cs = self.cs
        q = normalise(q, cs.n_bodies)
        for it in range(max_iter + 1):
            phi = np.asarray(cs.phi(q, t)).ravel()
            g = np.asarray(cs.gap(q)).ravel()
            viol = max(np.abs(phi).max(initial=0.0), (-g).max(initial=0.0))
            if viol <= tol:
                return q, it, viol, True
            if it == max_iter:
                break
            A = np.vstack([np.asarray(cs.velocity_jacobian(q, t)).reshape(cs.n_eq, cs.nv),
                           np.asarray(cs.gap_jacobian(q)).reshape(cs.n_gap, cs.nv)]) @ self.Linv_T
            args = dict(h=self.H, g=np.zeros(cs.nv), a=A, lba=np.r_[-phi, -g],
                        uba=np.r_[-phi, np.full(cs.n_gap, np.inf)])
            if self._first:
                with silenced_stdout():     # qpOASES prints its banner on the first solve
                    sol = self.qp(**args)
                self._first = False
            else:
                sol = self.qp(**args)
            dx = self.Linv_T @ np.asarray(sol["x"]).ravel()
            q = apply_increment(q, dx, cs.n_bodies)
        return q, max_iter, viol, False


def independent_rows(cs, q, t, tol=1e-9, samples=2, seed=0):
    """Indices of a largest set of linearly independent constraint rows near q (on the
    manifold), by QR with column pivoting of Pi^T.

    A row dependent on the others at q may be so only at q (a singular configuration) or
    everywhere (an overconstrained loop); the rank is therefore also taken at ``samples``
    configurations reached by small random moves along the mechanism's free directions and
    projected back onto the constraints, and the row set of the largest rank is returned.
    ``tol``: relative size of the pivots counted as zero."""
    from scipy.linalg import qr
    rng = np.random.default_rng(seed)

    def rank_and_rows(q):
        Pi = np.asarray(cs.velocity_jacobian(q, t)).reshape(cs.n_eq, cs.nv)
        _, R, perm = qr(Pi.T, mode="economic", pivoting=True)
        pivots = np.abs(np.diag(R))
        rank = int(np.count_nonzero(pivots > tol * max(pivots.max(initial=0.0), 1e-300)))
        return rank, np.sort(perm[:rank]), Pi

    best_rank, best_rows, Pi = rank_and_rows(q)
    if best_rank == cs.n_eq:
        return best_rows
    for _ in range(samples):
        _, _, Vt = np.linalg.svd(Pi)
        free = Vt[best_rank:].T                        # directions the rows do not fix
        move = free @ rng.normal(size=free.shape[1])
        moved = apply_increment(q, 1e-3 * move / max(np.abs(move).max(), 1e-300), cs.n_bodies)
        moved, _, _, ok = project_positions(cs, moved, t)
        if not ok:
            continue
        rank, rows, _ = rank_and_rows(moved)
        if rank > best_rank:
            best_rank, best_rows = rank, rows
    return best_rows
