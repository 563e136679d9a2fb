"""Every ideal joint, driver and programmed constraint written once as Phi(q, t) = 0:
satisfied at the initial configuration, the right number of equations, the CasADi velocity
Jacobian Pi and phi_t against finite differences, and the finite motions each joint allows.

Tolerance tiers (STYLE.md): identities <= 1e-12 (times the geometric scale); finite
differences: the central-difference bound eps^2/6 sup|Phi'''| derived below plus round-off.

Central-difference bound used for Pi. Along q(s) = q (+) s v (r_k + s rdot_k, body k turned by
s w'_k in its own frame), every row of Phi is a sum of at most two products of two factors,
each a unit body vector A_k u' (|d^n/ds^n| <= |w'_k|^n) or a difference of points
d = r_b + A_b s'_b - r_a - A_a s'_a (|d^(n)| <= l Omega^n, n >= 1, with
Omega = sum_k |w'_k| + |rdot_k| / l and l >= every lever arm and |d|). By Leibniz,
|(x.y)'''| <= (Omega + Omega)^3 l^2 = 8 l^2 Omega^3, so for two such terms the central
difference is off by at most 2 * 8 l^2 Omega^3 eps^2 / 6 < 3 l^2 Omega^3 eps^2. v is scaled
to Omega = 1.
"""
import functools

import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.projection import apply_increment
from nlpdyn.rotations import (G_matrix, from_axis_angle, from_rotation_matrix,
                              quaternion_product, rotation_matrix)

IDENTITY = 1e-12
U = np.finfo(float).eps
OMEGA = 2.0          # rotation driver: angle(t) = OMEGA t


def _unit(x):
    x = np.asarray(x, dtype=float)
    return x / np.linalg.norm(x)


def _rotate_about(axis, angle):
    return rotation_matrix(from_axis_angle(axis, angle))


def displacement(t):
    """Translation driver: s(t) = 0.1 t + 0.05 t^3 (s''' = 0.3)."""
    return 0.1 * t + 0.05 * t**3


KINDS = ["spherical", "revolute", "cylindrical", "prismatic", "universal", "fixed",
         "rotation driver on revolute", "rotation driver on cylindrical",
         "translation driver on prismatic", "translation driver on cylindrical", "programmed"]
COUNTS = {"spherical": 3, "revolute": 5, "cylindrical": 4, "prismatic": 5, "universal": 4,
          "fixed": 6, "rotation driver on revolute": 6, "rotation driver on cylindrical": 5,
          "translation driver on prismatic": 6, "translation driver on cylindrical": 5,
          "programmed": 2}
# bound on |d^3 Phi / dt^3| for the explicitly time-dependent rows (see test_phi_t)
PHI_TTT = {"rotation driver on revolute": 2 * OMEGA**3,
           "rotation driver on cylindrical": 2 * OMEGA**3,
           "translation driver on prismatic": 0.3, "translation driver on cylindrical": 0.3,
           "programmed": 0.1}
PARENTS = ["body", "ground"]


class Model:
    """A parent (a body or the ground) and a child body with random-ish geometry, joined by
    the element of ``kind``; everything in the global frame at the initial configuration."""

    def __init__(self, kind, parent):
        rng = np.random.default_rng([KINDS.index(kind), PARENTS.index(parent)])
        self.kind = kind
        s = self.system = nd.System(gravity=(0, 0, 0))
        if parent == "ground":
            self.parent = s.ground
        else:
            self.parent = s.add_body("a", 1.3, (1.0, 1.5, 2.0), position=rng.uniform(-1, 1, 3),
                                     orientation=_unit(rng.normal(size=4)))
        self.child = s.add_body("b", 0.7, (2.0, 1.2, 1.5), position=rng.uniform(-1, 1, 3),
                                orientation=_unit(rng.normal(size=4)))
        self.point = rng.uniform(-1, 1, 3)
        self.axis = _unit(rng.normal(size=3))
        self.axis2 = _unit(np.cross(self.axis, rng.normal(size=3)))
        self.other_point = rng.uniform(-1, 1, 3)      # programmed constraint: second point
        a, b, P, u = self.parent, self.child, self.point, self.axis
        make = {
            "spherical": lambda: nd.Spherical(a, b, P, name="j"),
            "revolute": lambda: nd.Revolute(a, b, P, u, name="j"),
            "cylindrical": lambda: nd.Cylindrical(a, b, P, u, name="j"),
            "prismatic": lambda: nd.Prismatic(a, b, P, u, name="j"),
            "universal": lambda: nd.Universal(a, b, P, u, self.axis2, name="j"),
            "fixed": lambda: nd.Fixed(a, b, P, u, name="j"),
        }
        if kind in make:
            self.joint = s.add_joint(make[kind]())
        elif kind.startswith("rotation driver"):
            base = nd.Revolute if kind.endswith("revolute") else nd.Cylindrical
            self.joint = s.add_joint(base(a, b, P, u, name="j"))
            s.add_joint(nd.RotationDriver(self.joint, angle=lambda t: OMEGA * t, name="drive"))
        elif kind.startswith("translation driver"):
            base = nd.Prismatic if kind.endswith("prismatic") else nd.Cylindrical
            self.joint = s.add_joint(base(a, b, P, u, name="j"))
            s.add_joint(nd.TranslationDriver(self.joint, displacement=displacement, name="drive"))
        elif kind == "programmed":
            Q = self.other_point
            d2 = float(np.sum((Q - P) ** 2))
            c0 = float(u @ (Q - P))
            # |b(Q) - a(P)|^2 = d2 (1 + 0.1 sin t) and (a(u).(b(Q) - a(P))) = c0 + 0.05 t
            self.joint = s.add_joint(nd.Programmed(
                [a, b], lambda t, sa, sb: ca.vertcat(
                    ca.sumsqr(sb.point(Q) - sa.point(P)) - d2 * (1 + 0.1 * ca.sin(t)),
                    ca.dot(sa.vector(u), sb.point(Q) - sa.point(P)) - c0 - 0.05 * t),
                name="j", point=P))
        self.cs = s.compile()
        q0, _ = self.cs.initial_state()
        self.q0 = q0
        self.scale = self.length(q0)

    def length(self, q):
        """The l of the module docstring at q: with R0 the largest |point| or initial |r_k| and
        Rq the largest |r_k(q)|, lever arms are <= 2 R0 and point distances <= 2 Rq + 4 R0."""
        R0 = max(np.linalg.norm(x) for x in
                 [self.point, self.other_point] + [bd.position for bd in self.cs.bodies])
        Rq = max(np.linalg.norm(q[7 * k:7 * k + 3]) for k in range(self.cs.n_bodies))
        return 1 + 2 * Rq + 4 * R0

    def phi(self, q, t=0.0):
        return np.asarray(self.cs.phi(q, t)).ravel()

    def rigid_motion(self, q, bodies, R, centre, shift):
        """Turn ``bodies`` by R about ``centre`` (global), then translate them by ``shift``."""
        q = q.copy()
        pR = from_rotation_matrix(R)
        for bd in bodies:
            k = bd.index
            q[7 * k:7 * k + 3] = centre + R @ (q[7 * k:7 * k + 3] - centre) + shift
            q[7 * k + 3:7 * k + 7] = quaternion_product(pR, q[7 * k + 3:7 * k + 7])
        return q


def perturbed(model, rng, size=0.3):
    return apply_increment(model.q0, size * rng.normal(size=model.cs.nv), model.cs.n_bodies)


def unit_speed_velocity(model, rng, length):
    """Random v scaled so that Omega = sum_k |w'_k| + |rdot_k| / l = 1."""
    v = rng.normal(size=model.cs.nv).reshape(-1, 6)
    omega = np.sum(np.linalg.norm(v[:, 3:], axis=1)
                   + np.linalg.norm(v[:, :3], axis=1) / length)
    return (v / omega).ravel()


@functools.cache
def build(kind, parent):
    return Model(kind, parent)


CASES = [pytest.param(k, p, id=f"{k}-{p}") for k in KINDS for p in PARENTS]
JOINT_CASES = [c for c in CASES if c.values[0] != "programmed"]


# ---------------------------------------------------------------- (a), (c)


@pytest.mark.parametrize("kind, parent", CASES)
def test_satisfied_at_the_initial_configuration(kind, parent):
    model = build(kind, parent)
    assert np.abs(model.phi(model.q0, 0.0)).max() <= IDENTITY * model.scale**2


@pytest.mark.parametrize("kind, parent", CASES)
def test_number_of_equations(kind, parent):
    model = build(kind, parent)
    cs = model.cs
    assert cs.n_eq == COUNTS[kind]
    assert sum(r.size for r in cs.constraint_rows) == cs.n_eq
    for r in cs.constraint_rows:
        assert r.size == r.element.n_equations
    assert np.asarray(cs.velocity_jacobian(model.q0, 0.0)).shape == (cs.n_eq, cs.nv)
    assert np.asarray(cs.phi_q(model.q0, 0.0)).shape == (cs.n_eq, cs.nq)


@pytest.mark.parametrize("kind, parent", CASES)
def test_equations_are_independent(kind, parent):
    """Pi has full row rank at a generic configuration: no element writes a redundant row,
    so the relative motion keeps 6 - (number of equations) degrees of freedom."""
    model = build(kind, parent)
    rng = np.random.default_rng(5)
    for q in (model.q0, perturbed(model, rng)):
        Pi = np.asarray(model.cs.velocity_jacobian(q, 0.2))
        assert np.linalg.matrix_rank(Pi, tol=1e-8) == COUNTS[kind]


# ---------------------------------------------------------------- (b), (d)


@pytest.mark.parametrize("kind, parent", CASES)
def test_velocity_jacobian_against_finite_differences(kind, parent):
    """d/ds Phi(q (+) s v, t) at s = 0 equals Pi(q, t) v, at the initial and at a perturbed
    configuration (central differences; bound in the module docstring)."""
    model = build(kind, parent)
    cs, rng = model.cs, np.random.default_rng(1)
    eps, t = 1e-5, 0.37
    for q in (model.q0, perturbed(model, rng)):
        length = model.length(q)
        tol = 3 * length**2 * eps**2 + 10 * U * length**2 / eps
        for _ in range(3):
            v = unit_speed_velocity(model, rng, length)
            fd = (model.phi(apply_increment(q, eps * v, cs.n_bodies), t)
                  - model.phi(apply_increment(q, -eps * v, cs.n_bodies), t)) / (2 * eps)
            Pi_v = np.asarray(cs.velocity_jacobian(q, t)) @ v
            assert np.abs(Pi_v - fd).max() <= tol
            assert np.abs(Pi_v).max() > 1e3 * tol                      # not vacuous


@pytest.mark.parametrize("kind, parent", CASES)
def test_velocity_jacobian_is_phi_q_times_the_kinematic_map(kind, parent):
    """Pi = Phi_q blockdiag(I3, 1/2 G(p)^T) (FORMULATION.md), and Phi_q against differences
    in the raw coordinates q, p off the unit sphere included (the step rows apply Phi_q to the
    normalisation correction too). A(p) is quadratic in p, so along a straight line in q every
    row is a polynomial of degree <= 4: the central difference D(e) is exactly
    f' + e^2 f'''/6 and (4 D(eps/2) - D(eps))/3 equals f' up to round-off."""
    model = build(kind, parent)
    cs, rng = model.cs, np.random.default_rng(2)
    q, t = perturbed(model, rng), 0.21
    T = np.zeros((cs.nq, cs.nv))
    for k in range(cs.n_bodies):
        T[7 * k:7 * k + 3, 6 * k:6 * k + 3] = np.eye(3)
        T[7 * k + 3:7 * k + 7, 6 * k + 3:6 * k + 6] = 0.5 * G_matrix(q[7 * k + 3:7 * k + 7]).T
    Pi = np.asarray(cs.velocity_jacobian(q, t))
    phi_q = np.asarray(cs.phi_q(q, t))
    assert np.abs(Pi - phi_q @ T).max() <= IDENTITY * model.scale**2
    eps = 1e-3
    for _ in range(3):
        dq = _unit(rng.normal(size=cs.nq))

        def central(e, dq=dq):
            return (model.phi(q + e * dq, t) - model.phi(q - e * dq, t)) / (2 * e)

        richardson = (4 * central(eps / 2) - central(eps)) / 3
        assert np.abs(phi_q @ dq - richardson).max() <= 100 * U * model.scale**2 / eps


@pytest.mark.parametrize("kind, parent", CASES)
def test_phi_t_against_finite_differences(kind, parent):
    """Explicit time dependence: phi_t = dPhi/dt by central differences. Bounds on Phi_ttt:
    rotation driver a cos(w t) - b sin(w t) with |a|, |b| <= 1: 2 w^3; translation driver
    s''' = 0.3; programmed: 0.1 d2 |sin'''| <= 0.1 l^2. Elements without time: exactly 0."""
    model = build(kind, parent)
    cs, rng = model.cs, np.random.default_rng(3)
    eps = 1e-4
    for q in (model.q0, perturbed(model, rng)):
        for t in (0.0, 0.61):
            phi_t = np.asarray(cs.phi_t(q, t)).ravel()
            if kind not in PHI_TTT:
                assert np.all(phi_t == 0)
                continue
            fd = (model.phi(q, t + eps) - model.phi(q, t - eps)) / (2 * eps)
            bound = PHI_TTT[kind] * (model.scale**2 if kind == "programmed" else 1)
            assert np.abs(phi_t - fd).max() <= bound * eps**2 / 6 + 10 * U * model.scale**2 / eps
            assert np.abs(phi_t).max() > 1e-3                          # not vacuous


# ---------------------------------------------------------------- finite motions


def allowed_motion(model, rng, t):
    """A finite relative motion of the child about the joint point that the element permits
    at time t (the driver's prescribed value included): (rotation R, translation)."""
    u, a2 = model.axis, model.axis2
    alpha, d = rng.uniform(0.3, 1.2), rng.uniform(0.1, 0.5)
    kind = model.kind
    if kind == "spherical":
        return _rotate_about(rng.normal(size=3), alpha), np.zeros(3)
    if kind == "revolute":
        return _rotate_about(u, alpha), np.zeros(3)
    if kind == "cylindrical":
        return _rotate_about(u, alpha), d * u
    if kind == "prismatic":
        return np.eye(3), d * u
    if kind == "universal":       # about the child's own axis2, then about the parent's axis1
        return _rotate_about(u, alpha) @ _rotate_about(a2, rng.uniform(0.3, 1.2)), np.zeros(3)
    if kind == "fixed":
        return np.eye(3), np.zeros(3)
    if kind.startswith("rotation driver"):
        return _rotate_about(u, OMEGA * t), (d * u if kind.endswith("cylindrical") else np.zeros(3))
    if kind.startswith("translation driver"):
        R = _rotate_about(u, alpha) if kind.endswith("cylindrical") else np.eye(3)
        return R, displacement(t) * u
    raise AssertionError(kind)


def forbidden_motion(model, rng, t):
    """A relative motion the element forbids (for drivers: the wrong sense)."""
    u = model.axis
    kind = model.kind
    perp = _unit(np.cross(u, rng.normal(size=3)))
    if kind in ("spherical", "universal", "fixed"):
        return np.eye(3), 0.3 * perp
    if kind in ("revolute", "cylindrical", "prismatic"):
        return _rotate_about(perp, 0.3), np.zeros(3)
    if kind.startswith("rotation driver"):
        return _rotate_about(u, -OMEGA * t), np.zeros(3)
    if kind.startswith("translation driver"):
        return np.eye(3), -displacement(t) * u
    raise AssertionError(kind)


@pytest.mark.parametrize("t", [0.0, 0.4])
@pytest.mark.parametrize("kind, parent", JOINT_CASES)
def test_finite_motions_allowed_and_forbidden(kind, parent, t):
    """Moving the child by an allowed finite motion about the joint point keeps Phi(q, t) = 0
    (identity tier); a rigid motion of the whole system (parent included) changes nothing; a
    forbidden motion violates Phi. This checks what each joint means, not only derivatives."""
    model = build(kind, parent)
    rng = np.random.default_rng(4)
    tol = IDENTITY * model.scale**2
    R, shift = allowed_motion(model, rng, t)
    q = model.rigid_motion(model.q0, [model.child], R, model.point, shift)
    assert np.abs(model.phi(q, t)).max() <= tol
    if not model.parent.is_ground:
        Rg = _rotate_about(rng.normal(size=3), 0.8)
        moved = model.rigid_motion(q, [model.parent, model.child], Rg, np.zeros(3),
                                   rng.normal(size=3))
        assert np.abs(model.phi(moved, t)).max() <= tol
    if t == 0.0 and "driver" in kind:
        return      # at t = 0 a driver's wrong-sense motion is no motion at all
    R, shift = forbidden_motion(model, rng, t)
    q = model.rigid_motion(model.q0, [model.child], R, model.point, shift)
    assert np.abs(model.phi(q, t)).max() > 1e-3


@pytest.mark.slow
def test_redundant_planar_loops_move_like_non_redundant_ones():
    """IFToMM A02 with 3 four-bar loops: spatial revolutes leave 9 redundant rows; the same
    mechanism with the right-hand joints as planar point coincidences has none. The
    closed-form solve gives both the same steps and the same energy (no loss from the
    redundancy), through the singular flat configuration."""
    from problems import four_bar_chain
    runs = [nd.simulate(four_bar_chain.build(3, redundant=r), t_end=2.0, h=1e-3, progress=False)
            for r in (True, False)]
    assert all(r.success for r in runs)
    assert np.abs(runs[0].q - runs[1].q).max() <= 1e-8
    assert abs(runs[0].energy[-1] - runs[1].energy[-1]) <= 1e-8


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, dict(refinement_steps=10),
                                     dict(solver="qp", scheme="euler")])
def test_overconstrained_spatial_loop_moves_like_its_independent_rows(options):
    """IFToMM A04, Bricard's mechanism: 30 rows of which one is redundant. Found at the start
    and solved without, the loop moves like the same mechanism written with 29 independent
    rows, whatever the solver (before, an exact solve of all 30 braked the loop's one degree
    of freedom: 0.93 J lost in 10 s with the QP, against 0.0014 J); its joints do no work.
    The two keep different rows, so their steps' errors differ: with the seed's euler by
    each run's O(h^2) drift; the default midpoint step (in closed form whatever the solver,
    so the QP case is euler's) meets the rows to O(h^3) and the runs part at its order,
    O(h^2): 3.4e-7 m at h = 1e-3, 4x less per halving, within the runs' own errors (4.4e-7
    and 1.3e-7 m against h / 4)."""
    from problems import bricard
    runs = [nd.simulate(bricard.build(redundant=r), t_end=1.0, h=1e-3, progress=False, **options)
            for r in (True, False)]
    assert all(r.success for r in runs)
    assert runs[0].info["redundant_rows"] == [["j0", 4]] and runs[1].info["redundant_rows"] == []
    drift = max(r.info["run"]["max_constraint_violation"] for r in runs)
    apart = 10 * drift if options.get("scheme") == "euler" else 1e-6      # m
    assert np.abs(runs[0].q - runs[1].q).max() <= apart
    # energy: the gravitational energy of that position difference (5 rods of 1 kg)
    assert abs(runs[0].energy[-1] - runs[1].energy[-1]) <= 5 * 9.81 * apart
    joints = [r.energy_ledger()[[f"work:j{k}" for k in range(6)]].iloc[-1].sum() for r in runs]
    assert abs(joints[0] - joints[1]) <= 5 * 9.81 * apart
