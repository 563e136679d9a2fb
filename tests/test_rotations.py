"""Euler-parameter algebra: Nikravesh's conventions (FORMULATION.md) checked with numpy.

Tolerance tiers (STYLE.md):
- identities: <= 1e-12 (quantities of order one, a few rounding errors each);
- finite differences: the central-difference truncation bound (eps^2 times a bound on the
  third derivative, derived in each test) plus a round-off allowance 10 u / eps.
"""
import casadi as ca
import numpy as np
import pytest

from nlpdyn.rotations import (E_matrix, G_matrix, from_axis_angle, from_rotation_matrix,
                              from_rotation_vector, omega_from_pdot, pdot_from_omega,
                              perpendicular_pair, quaternion_product, rotation_matrix, skew)

IDENTITY = 1e-12
U = np.finfo(float).eps
SEEDS = range(6)


def random_p(rng):
    p = rng.normal(size=4)
    return p / np.linalg.norm(p)


def body_frame_path(p, w, s):
    """p(s) = p * exp(s w'/2): the exact motion with constant body-frame angular velocity w'.
    Its rotation matrix is A(p) expm(s w'~)."""
    return quaternion_product(p, from_rotation_vector(s * np.asarray(w)))


# ---------------------------------------------------------------- identities


@pytest.mark.parametrize("seed", SEEDS)
def test_omega_from_pdot_inverts_pdot_from_omega(seed):
    """w' = 2 G(p) pdot with pdot = 1/2 G(p)^T w' (G G^T = I for |p| = 1)."""
    rng = np.random.default_rng(seed)
    p, w = random_p(rng), rng.normal(size=3)
    pdot = pdot_from_omega(p, w)
    assert np.abs(pdot - 0.5 * G_matrix(p).T @ w).max() <= IDENTITY
    assert np.abs(omega_from_pdot(p, pdot) - w).max() <= IDENTITY * max(1, np.abs(w).max())
    assert abs(p @ pdot) <= IDENTITY                     # tangent: keeps |p| = 1


@pytest.mark.parametrize("seed", SEEDS)
def test_E_G_identities(seed):
    """A = E G^T, G p = E p = 0, G G^T = E E^T = I3, G^T G = E^T E = I4 - p p^T."""
    p = random_p(np.random.default_rng(seed))
    E, G = E_matrix(p), G_matrix(p)
    assert np.abs(rotation_matrix(p) - E @ G.T).max() <= IDENTITY
    assert np.abs(G @ p).max() <= IDENTITY and np.abs(E @ p).max() <= IDENTITY
    assert np.abs(G @ G.T - np.eye(3)).max() <= IDENTITY
    assert np.abs(E @ E.T - np.eye(3)).max() <= IDENTITY
    assert np.abs(G.T @ G - (np.eye(4) - np.outer(p, p))).max() <= IDENTITY
    assert np.abs(E.T @ E - (np.eye(4) - np.outer(p, p))).max() <= IDENTITY


@pytest.mark.parametrize("seed", SEEDS)
def test_A_is_a_proper_rotation(seed):
    p = random_p(np.random.default_rng(seed))
    A = rotation_matrix(p)
    assert np.abs(A @ A.T - np.eye(3)).max() <= IDENTITY
    assert abs(np.linalg.det(A) - 1) <= IDENTITY
    assert np.abs(rotation_matrix(-p) - A).max() <= IDENTITY      # p and -p: same rotation


def test_skew_is_the_cross_product():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=3), rng.normal(size=3)
    assert np.abs(skew(x) @ y - np.cross(x, y)).max() <= IDENTITY
    assert np.abs(skew(x) + skew(x).T).max() == 0


def test_positive_angle_is_right_handed():
    """A rotation by +0.3 rad about z turns x towards y; A maps body to global."""
    p = from_axis_angle((0, 0, 1), 0.3)
    assert np.abs(p - [np.cos(0.15), 0, 0, np.sin(0.15)]).max() <= IDENTITY
    A = rotation_matrix(p)
    assert np.abs(A @ [1, 0, 0] - [np.cos(0.3), np.sin(0.3), 0]).max() <= IDENTITY


@pytest.mark.parametrize("seed", SEEDS)
def test_rotation_vector_leaves_its_axis_fixed(seed):
    theta = np.random.default_rng(seed).normal(size=3)
    A = rotation_matrix(from_rotation_vector(theta))
    assert np.abs(A @ theta - theta).max() <= IDENTITY
    f, _ = perpendicular_pair(theta / np.linalg.norm(theta))   # turned by |theta|
    assert abs(f @ A @ f - np.cos(np.linalg.norm(theta))) <= IDENTITY


# ---------------------------------------------------------------- finite differences


@pytest.mark.parametrize("seed", SEEDS)
def test_pdot_is_the_derivative_of_the_body_frame_motion(seed):
    """d/ds [p * exp(s w'/2)] at s = 0 equals 1/2 G(p)^T w'.

    p(s) = p * [cos(s c), sin(s c) w/|w|] with c = |w|/2, so the central difference is
    (sin(eps c)/(eps c)) times the derivative: off by at most eps^2 c^3 / 6."""
    rng = np.random.default_rng(seed)
    p, w = random_p(rng), rng.normal(size=3)
    eps = 1e-4
    fd = (body_frame_path(p, w, eps) - body_frame_path(p, w, -eps)) / (2 * eps)
    tol = eps**2 / 6 * (np.linalg.norm(w) / 2) ** 3 + 10 * U / eps
    assert np.abs(fd - pdot_from_omega(p, w)).max() <= tol


@pytest.mark.parametrize("seed", SEEDS)
def test_dA_dt_equals_A_times_skew_body_omega(seed):
    """d/dt A = A w'~ (w' in the body frame) along the exact motion A(s) = A expm(s w'~).

    The central difference of A(s) is A (w'~ + eps^2/6 w'~^3 + eps^4/120 w'~^5 + ...), so its
    error is at most eps^2/6 |w'|^3 (1 + O(eps^2)) plus round-off. The global-frame reading
    w'~ A must miss by far more: the test tells the frames apart."""
    rng = np.random.default_rng(seed)
    p, w = random_p(rng), rng.normal(size=3)
    eps = 1e-4
    fd = (rotation_matrix(body_frame_path(p, w, eps))
          - rotation_matrix(body_frame_path(p, w, -eps))) / (2 * eps)
    A = rotation_matrix(p)
    tol = eps**2 / 6 * np.linalg.norm(w) ** 3 * 1.001 + 10 * U / eps
    assert np.abs(fd - A @ skew(w)).max() <= tol
    assert np.abs(fd - skew(w) @ A).max() > 1e3 * tol


@pytest.mark.parametrize("seed", SEEDS)
def test_dA_dt_along_the_normalised_additive_path(seed):
    """The same along p(s) = (p + s pdot)/|p + s pdot| (the stepper's kind of update).

    A equals the homogeneous quadratic E(x) G(x)^T on unit x, and p.pdot = 0, so
    A(p(s)) = (Q0 + s Q1 + s^2 Q2)/(1 + s^2 |pdot|^2) with Q1 = A w'~. The central difference
    is Q1/(1 + eps^2 |pdot|^2): off by at most eps^2 |pdot|^2 |A w'~| <= eps^2 |w'|^3 / 4."""
    rng = np.random.default_rng(seed)
    p, w = random_p(rng), rng.normal(size=3)
    pdot = pdot_from_omega(p, w)
    eps = 1e-4

    def A_at(s):
        x = p + s * pdot
        return rotation_matrix(x / np.linalg.norm(x))

    fd = (A_at(eps) - A_at(-eps)) / (2 * eps)
    tol = eps**2 * np.linalg.norm(w) ** 3 / 4 + 10 * U / eps
    assert np.abs(fd - rotation_matrix(p) @ skew(w)).max() <= tol


# ---------------------------------------------------------------- conversions


@pytest.mark.parametrize("seed", SEEDS)
def test_from_rotation_matrix_inverts_rotation_matrix(seed):
    p = random_p(np.random.default_rng(seed))
    back = from_rotation_matrix(rotation_matrix(p))
    assert back[0] >= 0
    assert np.abs(back - np.sign(p[0]) * p).max() <= IDENTITY


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0.2, -0.3, 0.9)])
@pytest.mark.parametrize("angle", [0.0, 1e-9, 2.0, np.pi - 1e-7, np.pi])
def test_from_rotation_matrix_every_branch(axis, angle):
    """Small angles (trace branch) and angles near pi (e0 ~ 0: the diagonal branches)."""
    p = from_axis_angle(axis, angle)
    A = rotation_matrix(p)
    back = from_rotation_matrix(A)
    assert abs(np.linalg.norm(back) - 1) <= IDENTITY
    assert np.abs(rotation_matrix(back) - A).max() <= IDENTITY
    assert min(np.abs(back - p).max(), np.abs(back + p).max()) <= IDENTITY


@pytest.mark.parametrize("seed", SEEDS)
def test_quaternion_product_composes_rotations(seed):
    """A(a * b) = A(a) A(b); the product of unit parameters is unit; identity is neutral."""
    rng = np.random.default_rng(seed)
    a, b = random_p(rng), random_p(rng)
    ab = quaternion_product(a, b)
    assert abs(np.linalg.norm(ab) - 1) <= IDENTITY
    assert np.abs(rotation_matrix(ab) - rotation_matrix(a) @ rotation_matrix(b)).max() <= IDENTITY
    assert np.abs(quaternion_product(a, [1, 0, 0, 0]) - a).max() <= IDENTITY
    assert np.abs(quaternion_product([1, 0, 0, 0], a) - a).max() <= IDENTITY


def test_perpendicular_pair_is_a_right_handed_triad():
    for axis in (np.array([0, 0, 1.0]), np.array([1.0, 2.0, 2.0]) / 3, np.array([1.0, 0, 0])):
        f, g = perpendicular_pair(axis)
        T = np.column_stack([f, g, axis])
        assert np.abs(T.T @ T - np.eye(3)).max() <= IDENTITY
        assert abs(np.linalg.det(T) - 1) <= IDENTITY


# ---------------------------------------------------------------- numpy vs CasADi

# the functions documented to accept CasADi input (the constructors are numpy-only)
FUNCTIONS = {
    "skew": (skew, ["w"]),
    "E_matrix": (E_matrix, ["p"]),
    "G_matrix": (G_matrix, ["p"]),
    "rotation_matrix": (rotation_matrix, ["p"]),
    "pdot_from_omega": (pdot_from_omega, ["p", "w"]),
    "omega_from_pdot": (omega_from_pdot, ["p", "pdot"]),
}


def _inputs(seed=1):
    rng = np.random.default_rng(seed)
    return {"p": random_p(rng), "w": rng.normal(size=3), "pdot": rng.normal(size=4)}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_numpy_and_casadi_give_the_same_numbers(name):
    """On numpy arrays, DM columns, SX and MX symbols: the same numbers, and CasADi in gives
    the same CasADi type out."""
    fun, args = FUNCTIONS[name]
    data = _inputs()
    ref = np.asarray(fun(*[data[a] for a in args]), dtype=float)

    out_dm = fun(*[ca.DM(data[a]) for a in args])
    assert isinstance(out_dm, ca.DM)
    assert np.abs(np.asarray(out_dm).reshape(ref.shape) - ref).max() <= IDENTITY

    for kind in (ca.SX, ca.MX):
        syms = [kind.sym(a, data[a].size) for a in args]
        out_sym = fun(*syms)
        assert isinstance(out_sym, kind)
        out = np.asarray(ca.Function(name, syms, [out_sym])(*[data[a] for a in args]))
        assert np.abs(out.reshape(ref.shape) - ref).max() <= IDENTITY
