"""The sparse projections (nlpdyn/projection.py) against dense references written here: body
loops with the rotation helpers for the Lie-group algebra, numpy pinv on the dense scaled
Jacobian A = Pi L^-T (M = L L^T) for the minimum-norm steps, a dense qpOASES QP for the gap
projection, and SciPy's SLSQP for the mass-weighted minimum.

Cases: a revolute chain (problems/chain.py), the same chain on clearance joints, the IFToMM
A02 four-bar chain (problems/four_bar_chain.py, 3 redundant rows per loop) and the
slider-crank with a revolute clearance joint (joint rows and gaps together).

Tolerances (STYLE.md): identities <= 1e-12; the projections are solver-limited: positions
to ``TOL`` = projection_tol (1e-12, relative to max(1, |q|)), the solves to ``SOLVE``
relative to the change they make (the sparse LDL^T with iterated Tikhonov against an SVD,
the sparse QPs against the dense one); the Gauss-Newton point is the mass-weighted minimum to
second order in the distance from the manifold (its measured order is checked). The
four-bar is compared with the references after moves in its plane, where its redundant rows
stay exactly dependent; after 3-D moves the rows' tiny singular values make any
pseudo-inverse step depend on its cut-off, so only the constraints are checked there.
"""
import casadi as ca
import numpy as np
import pytest
from scipy.optimize import minimize

import nlpdyn as nd
import nlpdyn.projection as projection
from nlpdyn.projection import (GapProjector, apply_increment, normalise, position_change,
                               project_positions, project_velocities)
from nlpdyn.rotations import from_rotation_vector, quaternion_product
from nlpdyn.step_nlp import _QP_OPTIONS
from problems import chain, four_bar_chain, slider_crank

IDENTITY = 1e-12
TOL = 1e-12
SOLVE = 1e-9


# ---------------------------------------------------------------- dense references
def loop_increment(q, dx):
    """q (+) dx body by body: p * exp(dtheta / 2), renormalised."""
    q = np.array(q, dtype=float)
    for k in range(len(q) // 7):
        q[7 * k:7 * k + 3] += dx[6 * k:6 * k + 3]
        p = quaternion_product(q[7 * k + 3:7 * k + 7], from_rotation_vector(dx[6 * k + 3:6 * k + 6]))
        q[7 * k + 3:7 * k + 7] = p / np.linalg.norm(p)
    return q


def loop_displacement(q_from, q_to):
    """d with q_to = q_from (+) d: centre displacements and body-frame rotation vectors."""
    d = []
    for k in range(len(q_from) // 7):
        p = q_from[7 * k + 3:7 * k + 7] * np.array([1, -1, -1, -1])
        rel = quaternion_product(p, q_to[7 * k + 3:7 * k + 7])
        rel = rel if rel[0] >= 0 else -rel
        sine = np.linalg.norm(rel[1:])
        angle = 2 * np.arctan2(sine, rel[0])
        d += [*(q_to[7 * k:7 * k + 3] - q_from[7 * k:7 * k + 3]),
              *(rel[1:] * angle / sine if sine > 0 else np.zeros(3))]
    return np.array(d)


def mass_norm(cs, d):
    return float(np.sqrt(d @ cs.M @ d))


def dense(matrix, rows, cols):
    return np.asarray(matrix, dtype=float).reshape(rows, cols)


def minimum_norm_step(cs, Pi, r):
    """dx = -M^-1 Pi^T (Pi M^-1 Pi^T)^+ r by the SVD of A = Pi L^-T (cut-off 1e-6 on the
    singular values, 1e-12 on those of A A^T as the projection's lstsq had)."""
    Linv_T = np.linalg.inv(np.linalg.cholesky(cs.M)).T
    return -Linv_T @ np.linalg.pinv(Pi @ Linv_T, rcond=1e-6) @ r


def reference_projection(cs, q, t, max_iter=50):
    """Gauss-Newton with dense minimum-norm steps: (q, iterations)."""
    q = loop_increment(q, np.zeros(cs.nv))
    scale = max(1.0, np.abs(q).max())
    for it in range(max_iter + 1):
        phi = np.asarray(cs.phi(q, t)).ravel()
        if np.abs(phi).max() <= TOL * scale:
            return q, it
        q = loop_increment(q, minimum_norm_step(cs, dense(cs.velocity_jacobian(q, t), cs.n_eq, cs.nv), phi))
    raise AssertionError("the reference projection did not converge")


def reference_gap_projection(cs, q, t, max_iter=50):
    """Gauss-Newton on {Phi = 0, g >= 0} with a dense qpOASES QP per step."""
    Linv_T = np.linalg.inv(np.linalg.cholesky(cs.M)).T
    n_rows = cs.n_eq + cs.n_gap
    qp = ca.conic("dense_reference", "qpoases", {"h": ca.Sparsity.dense(cs.nv, cs.nv),
                                                 "a": ca.Sparsity.dense(n_rows, cs.nv)},
                  {"printLevel": "none", "error_on_fail": True})
    q = loop_increment(q, np.zeros(cs.nv))
    for it in range(max_iter + 1):
        phi, g = np.asarray(cs.phi(q, t)).ravel(), np.asarray(cs.gap(q)).ravel()
        if max(np.abs(phi).max(initial=0.0), (-g).max(initial=0.0)) <= TOL:
            return q, it
        A = np.vstack([dense(cs.velocity_jacobian(q, t), cs.n_eq, cs.nv),
                       dense(cs.gap_jacobian(q), cs.n_gap, cs.nv)]) @ Linv_T
        dy = qp(h=np.eye(cs.nv), g=np.zeros(cs.nv), a=A, lba=np.r_[-phi, -g],
                uba=np.r_[-phi, np.full(cs.n_gap, np.inf)])["x"]
        q = loop_increment(q, Linv_T @ np.asarray(dy).ravel())
    raise AssertionError("the reference gap projection did not converge")


# ---------------------------------------------------------------- cases
def random_move(cs, rng, size, planar=False):
    """Random increment of ~``size`` m and rad per body; ``planar``: in the XY plane only
    (x, y and the rotation about z, the four-bar's plane: its redundant rows stay exactly
    dependent)."""
    dx = size * rng.normal(size=(cs.n_bodies, 6))
    if planar:
        dx[:, [2, 3, 4]] = 0.0
    return dx.ravel()


def perturbed(system, size, planar=False, seed=0):
    cs = system.compile()
    q0, v0 = cs.initial_state()
    return cs, loop_increment(q0, random_move(cs, np.random.default_rng(seed), size, planar)), v0


CASES = {
    "chain": lambda: perturbed(chain.build(4), 1e-3),
    "redundant four-bar, planar move": lambda: perturbed(four_bar_chain.build(2), 1e-3, planar=True),
    "redundant four-bar N=3, planar move": lambda: perturbed(four_bar_chain.build(3), 1e-3, planar=True),
}


# ---------------------------------------------------------------- the Lie-group helpers
def test_increment_normalise_and_change_match_body_loops():
    rng = np.random.default_rng(1)
    n = 6
    q = rng.normal(size=7 * n)                           # Euler parameters not unit
    dx = rng.normal(size=6 * n)
    dx[6 * 2 + 3:6 * 2 + 6] = 0.0                        # no rotation
    dx[6 * 3 + 3:6 * 3 + 6] = [1e-14, -2e-14, 0.0]     # below from_rotation_vector's cut
    dx[6 * 4 + 3:6 * 4 + 6] = [3.0, -1.0, 2.0]         # more than half a turn
    unit = loop_increment(q, np.zeros(6 * n))
    assert np.abs(normalise(q, n) - unit).max() <= IDENTITY
    assert np.abs(apply_increment(q, dx, n) - loop_increment(q, dx)).max() <= IDENTITY
    moved = loop_increment(q, dx)
    worst = max(max(np.linalg.norm(moved[7 * k:7 * k + 3] - unit[7 * k:7 * k + 3]),
                    np.linalg.norm(loop_displacement(unit, moved)[6 * k + 3:6 * k + 6]))
                for k in range(n))
    assert abs(position_change(unit, moved, n) - worst) <= IDENTITY
    assert position_change(unit, unit, n) == 0.0 and position_change(q[:0], q[:0], 0) == 0.0


# ---------------------------------------------------------------- positions
@pytest.mark.parametrize("case", CASES)
def test_one_step_is_the_dense_minimum_norm_step(case):
    """One Gauss-Newton step is the smallest mass-weighted change that zeroes the linearised
    rows: the dense SVD step, and its KKT conditions hold (M dx in the row space of Pi)."""
    cs, q, _ = CASES[case]()
    Pi, phi = dense(cs.velocity_jacobian(q, 0.0), cs.n_eq, cs.nv), np.asarray(cs.phi(q, 0.0)).ravel()
    dx = minimum_norm_step(cs, Pi, phi)
    stepped, iterations, _, _ = project_positions(cs, q, 0.0, max_iter=1)
    assert iterations == 1
    assert np.abs(stepped - loop_increment(q, dx)).max() <= SOLVE * np.abs(dx).max()
    step = loop_displacement(q, stepped)
    assert np.abs(Pi @ step + phi).max() <= SOLVE * np.abs(phi).max()
    multipliers = np.linalg.lstsq(Pi.T, cs.M @ step, rcond=None)[0]
    assert np.abs(Pi.T @ multipliers - cs.M @ step).max() <= SOLVE * np.abs(cs.M @ step).max()


@pytest.mark.parametrize("case", CASES)
def test_projection_matches_dense_gauss_newton(case):
    cs, q, _ = CASES[case]()
    expected, iterations = reference_projection(cs, q, 0.0)
    projected, its, violation, converged = project_positions(cs, q, 0.0, tol=TOL)
    assert converged and its == iterations
    assert violation == np.abs(np.asarray(cs.phi(projected, 0.0))).max() <= TOL * max(1.0, np.abs(q).max())
    assert np.abs(projected - expected).max() <= SOLVE * position_change(q, expected, cs.n_bodies)


@pytest.mark.parametrize("seed", range(3))
def test_redundant_rows_off_their_plane_still_converge(seed):
    """A 3-D move takes the four-bar off the plane where its redundant rows are dependent;
    the projection still lands on every row (3N of them redundant) to TOL."""
    cs, q, _ = perturbed(four_bar_chain.build(3), 1e-3, seed=seed)
    projected, _, violation, converged = project_positions(cs, q, 0.0, tol=TOL)
    assert converged
    assert np.abs(np.asarray(cs.phi(projected, 0.0))).max() <= TOL * max(1.0, np.abs(q).max())


def test_projection_is_the_mass_weighted_minimum_to_second_order():
    """Against the closest point on the manifold in the mass metric (SLSQP on
    min 1/2 d^T M d s.t. Phi(q (+) d) = 0): the Gauss-Newton point's extra distance falls as
    the square of the distance from the manifold (measured order 2)."""
    excess = []
    for size in (4e-3, 2e-3):
        cs, q, _ = perturbed(chain.build(2), size, seed=3)
        projected, _, _, _ = project_positions(cs, q, 0.0, tol=TOL)
        d = loop_displacement(q, projected)
        scale = mass_norm(cs, d)
        closest = minimize(lambda x: 0.5 * x @ cs.M @ x / scale**2, d, jac=lambda x: cs.M @ x / scale**2,
                           constraints=[{"type": "eq", "fun": lambda x: np.asarray(
                               cs.phi(loop_increment(q, x), 0.0)).ravel() / size}],
                           method="SLSQP", options={"ftol": 1e-15, "maxiter": 500})
        assert closest.success
        assert np.abs(np.asarray(cs.phi(loop_increment(q, closest.x), 0.0))).max() <= 1e-10
        excess.append(scale / mass_norm(cs, closest.x) - 1)
    assert 0 < excess[1] < excess[0] < 0.1
    assert 1.7 <= np.log2(excess[0] / excess[1]) <= 2.3


# ---------------------------------------------------------------- velocities
@pytest.mark.parametrize("case", CASES)
def test_velocities_are_the_dense_m_orthogonal_projection(case):
    cs, q, _ = CASES[case]()
    q, _ = reference_projection(cs, q, 0.0)
    v = np.random.default_rng(2).normal(size=cs.nv)
    Pi, phi_t = dense(cs.velocity_jacobian(q, 0.0), cs.n_eq, cs.nv), np.asarray(cs.phi_t(q, 0.0)).ravel()
    expected = v + minimum_norm_step(cs, Pi, Pi @ v + phi_t)
    projected, residual = project_velocities(cs, q, v, 0.0)
    assert np.abs(projected - expected).max() <= SOLVE * np.abs(expected - v).max()
    assert residual == pytest.approx(np.abs(Pi @ projected + phi_t).max(), abs=IDENTITY)
    assert residual <= SOLVE * np.abs(Pi @ v + phi_t).max()


def test_systems_without_joint_rows_are_left_alone():
    cs, q, v = perturbed(chain.build(2, clearance=1e-4), 1e-3)
    projected, iterations, violation, converged = project_positions(cs, q, 0.0)
    assert (iterations, violation, converged) == (0, 0.0, True)
    assert np.abs(projected - normalise(q, cs.n_bodies)).max() == 0.0
    assert project_velocities(cs, q, v, 0.0)[1] == 0.0


# ---------------------------------------------------------------- gaps
def in_contact(system, steps=30, size=2e-5, seed=0):
    """A state after ``steps`` steps of 1 ms, moved by ~``size``: some gaps < -1 um."""
    stepper = nd.Stepper(system, h=1e-3)
    for _ in range(steps):
        stepper.step()
    cs = stepper.cs
    q = loop_increment(stepper.q, random_move(cs, np.random.default_rng(seed), size))
    assert np.asarray(cs.gap(q)).min() < -1e-6
    return cs, q, stepper.t


GAP_CASES = {
    "clearance chain": lambda: in_contact(chain.build(3, clearance=1e-4)),
    "slider-crank, revolute clearance": lambda: in_contact(slider_crank.build(revolute_clearance=1e-4),
                                                           steps=5, size=3e-4),
}


@pytest.mark.parametrize("plugin", ["qpoases", "proxqp"])
@pytest.mark.parametrize("case", GAP_CASES)
def test_gap_projection_matches_the_dense_qp(case, plugin):
    cs, q, t = GAP_CASES[case]()
    expected, iterations = reference_gap_projection(cs, q, t)
    projected, its, violation, converged = GapProjector(cs, plugin, _QP_OPTIONS[plugin]).project(
        q, t, tol=TOL, max_iter=50)
    assert converged and its == iterations
    phi, g = np.asarray(cs.phi(projected, t)).ravel(), np.asarray(cs.gap(projected)).ravel()
    assert violation == max(np.abs(phi).max(initial=0.0), (-g).max(), 0.0) <= TOL
    # two solvers' minimisers agree to their accuracy times the conditioning of the active
    # rows (mass-scaled)
    A = np.vstack([np.asarray(cs.velocity_jacobian(expected, t)),
                   np.asarray(cs.gap_jacobian(expected))])
    active = np.r_[np.ones(cs.n_eq, bool), np.asarray(cs.gap(expected)).ravel() < 1e-9]
    sv = np.linalg.svd(A[active] @ np.linalg.inv(cs.L).T, compute_uv=False)
    assert np.abs(projected - expected).max() <= \
        SOLVE * (sv[0] / sv[-1]) * position_change(q, expected, cs.n_bodies)


# ---------------------------------------------------------------- in a simulation
SIMULATIONS = {
    "chain": (lambda: chain.build(4), {}),
    "redundant four-bar": (lambda: four_bar_chain.build(2), {}),
    "clearance chain": (lambda: chain.build(2, clearance=1e-4), {}),
    # the seed's linearised gaps penetrate every step: a projection (a QP) after each
    "clearance chain, linearised gaps": (lambda: chain.build(5, clearance=1e-4),
                                         {"contact": "linearised"}),
}


@pytest.mark.parametrize("case", SIMULATIONS)
def test_simulation_with_projection_stays_on_the_constraints(case):
    build, options = SIMULATIONS[case]
    res = nd.simulate(build(), 0.05, h=1e-3, projection=True, progress=False, **options)
    assert res.success
    assert res.stats.constraint_violation.max() <= TOL * max(1.0, np.abs(res.q).max())
    assert res.stats.min_gap.min() >= -TOL
    assert res.stats.projection_change.max() > 0


@pytest.mark.parametrize("case", [*CASES, "slider-crank"])
def test_independent_rows_by_singular_values_are_the_pivoted_qr_rows(case, monkeypatch):
    """Small systems whose rows are clearly independent skip the pivoted QR (and scipy's
    import); the rows kept are the QR's, and redundant rows still go through it."""
    cs, q, _ = (perturbed(slider_crank.build(), 1e-3) if case == "slider-crank"
                else CASES[case]())
    rows = projection.independent_rows(cs, q, 0.0)
    monkeypatch.setattr(projection, "_FULL_RANK_BY_SVD", -1)        # the QR only
    by_qr = projection.independent_rows(cs, q, 0.0)
    assert rows.dtype == by_qr.dtype and rows.tolist() == by_qr.tolist()
