"""Every joint written once as Phi(q, t): zero at the initial configuration, equation count,
and the CasADi velocity Jacobian Pi against finite differences along a motion."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.projection import apply_increment

rng = np.random.default_rng(3)
POINT = np.array([0.3, -0.2, 0.5])
AXIS = np.array([1.0, 2.0, 2.0]) / 3.0
AXIS2 = np.cross(AXIS, [0, 0, 1.0])
AXIS2 /= np.linalg.norm(AXIS2)


def two_bodies():
    s = nd.System(gravity=(0, 0, 0))
    p1 = rng.normal(size=4)
    p2 = rng.normal(size=4)
    a = s.add_body("a", 1.0, (1, 2, 2.5), position=(0.1, 0.2, 0.3), orientation=p1 / np.linalg.norm(p1))
    b = s.add_body("b", 2.0, (1, 1.5, 2), position=(0.7, -0.4, 0.9), orientation=p2 / np.linalg.norm(p2))
    return s, a, b


def make(kind):
    s, a, b = two_bodies()
    joints = {
        "spherical": lambda: nd.Spherical(a, b, POINT),
        "revolute": lambda: nd.Revolute(a, b, POINT, AXIS),
        "cylindrical": lambda: nd.Cylindrical(a, b, POINT, AXIS),
        "prismatic": lambda: nd.Prismatic(a, b, POINT, AXIS),
        "universal": lambda: nd.Universal(a, b, POINT, AXIS, AXIS2),
        "fixed": lambda: nd.Fixed(a, b, POINT, AXIS),
        "revolute to ground": lambda: nd.Revolute(s.ground, b, POINT, AXIS),
    }
    if kind in joints:
        s.add_joint(joints[kind]())
    elif kind == "rotation driver":
        j = s.add_joint(nd.Revolute(a, b, POINT, AXIS))
        s.add_joint(nd.RotationDriver(j, angle=lambda t: 0.3 * ca.sin(2 * t)))
    elif kind == "translation driver":
        j = s.add_joint(nd.Prismatic(a, b, POINT, AXIS))
        s.add_joint(nd.TranslationDriver(j, displacement=lambda t: 0.1 * t**2))
    elif kind == "programmed":
        s.add_joint(nd.Programmed([a, b], lambda t, sa, sb: ca.vertcat(
            ca.dot(sb.point(POINT) - sa.point(POINT), sa.vector(AXIS)) - 0.05 * ca.sin(t),
            ca.sumsqr(sb.r - sa.r) - ca.sumsqr(np.array([0.6, -0.6, 0.6])))))
    return s


KINDS = ["spherical", "revolute", "cylindrical", "prismatic", "universal", "fixed",
         "revolute to ground", "rotation driver", "translation driver", "programmed"]
COUNTS = {"spherical": 3, "revolute": 5, "cylindrical": 4, "prismatic": 5, "universal": 4,
          "fixed": 6, "revolute to ground": 5, "rotation driver": 6, "translation driver": 6,
          "programmed": 2}


@pytest.mark.parametrize("kind", KINDS)
def test_satisfied_initially_with_the_right_count(kind):
    cs = make(kind).compile()
    q, _ = cs.initial_state()
    phi = np.asarray(cs.phi(q, 0.0)).ravel()
    assert phi.size == COUNTS[kind]
    assert np.abs(phi).max() <= 1e-14


@pytest.mark.parametrize("kind", KINDS)
def test_velocity_jacobian_against_finite_differences(kind):
    """d/dt Phi along q(s) = q (+) s v (body-frame rotation increments) equals Pi v, at the
    initial and at a perturbed configuration; central differences, error O(eps^2)."""
    cs = make(kind).compile()
    q0, _ = cs.initial_state()
    t = 0.37
    for q in (q0, apply_increment(q0, 0.2 * rng.normal(size=cs.nv), cs.n_bodies)):
        v = rng.normal(size=cs.nv)
        eps = 1e-6
        fd = (np.asarray(cs.phi(apply_increment(q, eps * v, cs.n_bodies), t)).ravel()
              - np.asarray(cs.phi(apply_increment(q, -eps * v, cs.n_bodies), t)).ravel()) / (2 * eps)
        Pi = np.asarray(cs.velocity_jacobian(q, t))
        assert np.allclose(Pi @ v, fd, rtol=0, atol=1e-8 * (1 + np.abs(fd).max()))
        # explicit time dependence
        fdt = (np.asarray(cs.phi(q, t + eps)).ravel() - np.asarray(cs.phi(q, t - eps)).ravel()) / (2 * eps)
        assert np.allclose(np.asarray(cs.phi_t(q, t)).ravel(), fdt, atol=1e-8)


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "fixed"])
def test_joint_allows_exactly_its_motion(kind):
    """The null space of Pi has the joint's degrees of freedom (12 - rows)."""
    cs = make(kind).compile()
    q, _ = cs.initial_state()
    Pi = np.asarray(cs.velocity_jacobian(q, 0.0))
    assert np.linalg.matrix_rank(Pi, tol=1e-10) == COUNTS[kind]
