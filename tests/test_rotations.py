"""Euler-parameter algebra: Nikravesh's conventions checked by finite differences."""
import casadi as ca
import numpy as np
import pytest

from nlpdyn.rotations import (E_matrix, G_matrix, from_axis_angle, from_rotation_matrix,
                              from_rotation_vector, omega_from_pdot, pdot_from_omega,
                              quaternion_product, rotation_matrix, skew)

rng = np.random.default_rng(7)


def random_p():
    p = rng.normal(size=4)
    return p / np.linalg.norm(p)


@pytest.mark.parametrize("seed", range(5))
def test_omega_pdot_round_trip(seed):
    p, w = random_p(), rng.normal(size=3)
    pdot = pdot_from_omega(p, w)
    assert np.allclose(omega_from_pdot(p, pdot), w, atol=1e-12)
    assert abs(p @ pdot) <= 1e-12               # pdot keeps |p| (tangent)


@pytest.mark.parametrize("seed", range(5))
def test_dA_dt_equals_A_skew_omega(seed):
    """d/dt A(p(t)) = A w'~ with pdot = 1/2 G^T w' (central differences, error O(eps^2))."""
    p, w = random_p(), rng.normal(size=3)
    eps = 1e-5
    pdot = pdot_from_omega(p, w)
    dA = (rotation_matrix(p + eps * pdot) - rotation_matrix(p - eps * pdot)) / (2 * eps)
    # A is quadratic in p: the central difference is exact up to round-off
    assert np.allclose(dA, rotation_matrix(p) @ skew(w), atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_A_equals_E_G_transpose_and_is_orthonormal(seed):
    p = random_p()
    A = rotation_matrix(p)
    assert np.allclose(A, E_matrix(p) @ G_matrix(p).T, atol=1e-14)
    assert np.allclose(A @ A.T, np.eye(3), atol=1e-14)
    assert np.linalg.det(A) == pytest.approx(1.0, abs=1e-14)
    assert np.allclose(G_matrix(p) @ p, 0, atol=1e-15)


def test_rotation_about_axis_has_right_sense():
    """A positive angle about z turns x towards y (right-handed)."""
    A = rotation_matrix(from_axis_angle((0, 0, 1), 0.3))
    assert np.allclose(A @ [1, 0, 0], [np.cos(0.3), np.sin(0.3), 0], atol=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_matrix_round_trip_and_product(seed):
    a, b = random_p(), random_p()
    back = from_rotation_matrix(rotation_matrix(a))
    assert np.allclose(back, a if a[0] >= 0 else -a, atol=1e-12)
    assert np.allclose(rotation_matrix(quaternion_product(a, b)),
                       rotation_matrix(a) @ rotation_matrix(b), atol=1e-12)
    theta = rng.normal(size=3)
    assert np.allclose(rotation_matrix(from_rotation_vector(theta)) @ theta, theta, atol=1e-12)


def test_casadi_and_numpy_agree():
    p, w = random_p(), rng.normal(size=3)
    ps, ws = ca.SX.sym("p", 4), ca.SX.sym("w", 3)
    f = ca.Function("f", [ps, ws], [rotation_matrix(ps), G_matrix(ps), E_matrix(ps), skew(ws)])
    for sym, num in zip(f(p, w), (rotation_matrix(p), G_matrix(p), E_matrix(p), skew(w))):
        assert np.allclose(np.asarray(sym), num, atol=1e-15)
