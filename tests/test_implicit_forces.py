"""Force elements evaluated at the end of the step (implicit), element memory, energy accounting."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.forces.base import ForceElement


def _oscillator(k, c, evaluation, x0=0.01, v0=0.3, mass=2.0):
    """A body on a linear spring-damper along X, no gravity; the spring's rest length puts the
    body at x = 0, so x is the extension."""
    s = nd.System(gravity=(0, 0, 0))
    b = s.add_body("m", mass, (1e-2, 1e-2, 1e-2), position=(1 + x0, 0, 0), velocity=(v0, 0, 0))
    sd = nd.SpringDamper(s.ground, (0, 0, 0), b, (1 + x0, 0, 0), stiffness=k, damping=c,
                         free_length=1.0, name="spring")
    sd.evaluation = evaluation
    s.add_force(sd)
    return s


def _backward_euler(k, c, m, x0, v0, h, n):
    """The semi-implicit step with the force at the end of the step, for x'' = -(k x + c x')/m:
    v1 = v0 + h F(x0 + h v1, v1)/m, solved in closed form."""
    x, v = [x0], [v0]
    for _ in range(n):
        v1 = (v[-1] - h * k * x[-1] / m) / (1 + h * c / m + h * h * k / m)
        v.append(v1)
        x.append(x[-1] + h * v1)
    return np.array(x), np.array(v)


@pytest.mark.parametrize("k,c", [(1e4, 0.0), (1e6, 5.0), (1e8, 0.0)])
def test_implicit_spring_matches_the_discrete_closed_form(k, c):
    """Implicit evaluation is backward Euler on the force: the stepper reproduces that
    recurrence (solver-limited tier), also far beyond explicit stability (h sqrt(k/m) = 7)."""
    h, n, m = 1e-3, 200, 2.0
    res = nd.simulate(_oscillator(k, c, "implicit"), t_end=n * h, h=h, progress=False)
    x, v = _backward_euler(k, c, m, 0.01, 0.3, h, n)
    assert res.success
    assert np.abs(res.position("m")[:, 0] - 1 - x).max() < 1e-9 * (1 + np.abs(x).max())
    assert np.abs(res.velocity("m")[:, 0] - v).max() < 1e-9 * (1 + np.abs(v).max())
    assert res.stats.eom_residual.max() < 1e-6 * k * 0.02


def test_explicit_stiff_spring_blows_up_where_implicit_is_stable():
    """h sqrt(k/m) = 7 > 2: the explicit (symplectic Euler) step is unstable."""
    k, h = 1e8, 1e-3
    explicit = nd.simulate(_oscillator(k, 0.0, "explicit"), t_end=0.05, h=h, progress=False,
                           max_retries=0, fallback=False)
    implicit = nd.simulate(_oscillator(k, 0.0, "implicit"), t_end=0.05, h=h, progress=False)
    assert implicit.success and np.abs(implicit.position("m")[:, 0] - 1).max() <= 0.0101
    assert not explicit.success or np.abs(explicit.position("m")[:, 0] - 1).max() > 1.0


def test_ipopt_solves_the_same_implicit_step_as_the_qp_iterations():
    """The explicit-form NLP with the implicit forces as equality rows and the QP's Newton
    iterations define the same step."""
    s_qp, s_ip = _oscillator(1e6, 3.0, "implicit"), _oscillator(1e6, 3.0, "implicit")
    a = nd.simulate(s_qp, t_end=0.02, h=1e-3, progress=False)
    b = nd.simulate(s_ip, t_end=0.02, h=1e-3, progress=False, solver="ipopt")
    assert a.success and b.success
    assert np.allclose(a.v, b.v, atol=1e-7)


def test_implicit_element_with_joints_and_gaps():
    """An implicit stiff spring on the clearance pendulum: the end-of-step forces, the gaps
    and the joint rows hold together; the EOM residual is met with the end-of-step force."""
    from problems import clearance_pendulum
    s = clearance_pendulum.build()
    bar = s.bodies[0]
    tip = bar.position + (bar.position - np.zeros(3))
    sd = s.add_force(nd.SpringDamper(s.ground, tip + (0, -0.2, 0), bar, tip, stiffness=1e5,
                                     damping=10.0, name="stiff"))
    sd.evaluation = "implicit"
    res = nd.simulate(s, t_end=0.1, h=1e-3, progress=False)
    assert res.success
    assert res.gaps.min() >= -1e-9
    assert res.stats.eom_residual.max() < 1e-3


class _Counter(ForceElement):
    """Pushes along X with a force equal to its memory (N); the memory counts steps."""

    kind = "counter"
    history_size = 1

    def __init__(self, body):
        self.bodies = (body,)
        self.name = "counter"

    def wrenches(self, states, t, history=None):
        return [(ca.vertcat(history[0], 0, 0), ca.DM.zeros(3))]

    def next_history(self, states, t, history):
        return history + 1


def test_element_memory_is_updated_after_every_step():
    """Step k pushes with k N: v_n = h n (n - 1) / (2 m) exactly."""
    s = nd.System(gravity=(0, 0, 0))
    b = s.add_body("m", 3.0, (1, 1, 1))
    s.add_force(_Counter(b))
    h, n = 1e-2, 25
    res = nd.simulate(s, t_end=n * h, h=h, progress=False)
    steps = np.arange(n + 1)
    assert np.allclose(res.velocity("m")[:, 0], h * steps * (steps - 1) / 6.0, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("evaluation", ["explicit", "implicit"])
def test_energy_balance_closes_per_element(evaluation):
    """Without constraints, E(t) - E(0) + sum of the elements' dissipated energy = 0 exactly
    (the discrete work uses the mean velocity of the step); the damper's share matches
    int c xdot^2 dt to the time-discretisation tier."""
    k, c, h = 1e4, 40.0, 1e-4
    res = nd.simulate(_oscillator(k, c, evaluation), t_end=0.3, h=h, progress=False)
    E = res.energy
    assert np.abs(E - E[0] + res.dissipated()).max() < 1e-12 * E[0] * len(E)
    xdot = res.velocity("m")[:, 0]
    viscous = np.r_[0, np.cumsum(c * h * 0.5 * (xdot[1:] ** 2 + xdot[:-1] ** 2))]
    assert abs(res.dissipated("spring")[-1] - viscous[-1]) < 20 * h * np.sqrt(k / 2.0) * E[0]
    assert res.dissipated("spring")[-1] > 0.9 * E[0]   # the damper took (almost) everything


def test_direct_solver_refuses_implicit_elements():
    with pytest.raises(nd.ModelError, match="implicit force elements"):
        nd.Stepper(_oscillator(1e4, 0.0, "implicit"), h=1e-3, solver="direct")


def test_unknown_evaluation_is_reported():
    s = _oscillator(1e4, 0.0, "sometimes")
    with pytest.raises(nd.ModelError, match="evaluation must be one of"):
        s.compile()


def test_implicit_newton_hessian_is_the_per_element_psd_part():
    """The QP's Hessian term of the implicit elements is each element's block of the symmetric
    force Jacobian clipped to its non-negative eigenvalues. With elements on disjoint bodies
    that is the clipped finite-difference Jacobian of the whole b(y) = h L^-1 F_imp; a
    compressed spring (indefinite geometric stiffness) makes the clipping matter."""
    s = nd.System(gravity=(0, -9.81, 0))
    a = s.add_body("a", 2.0, (0.01, 0.02, 0.03), position=(1.0, 0, 0), velocity=(0.1, 0.3, 0),
                   angular_velocity=(0.5, 0, 2.0))
    b = s.add_body("b", 1.0, (0.02, 0.01, 0.02), position=(0, 2.0, 0), velocity=(0, 0.2, 0.1),
                   angular_velocity=(0, 1.0, 0))
    spring = nd.SpringDamper(s.ground, (0, 0, 0), a, (1.0, 0.1, 0), stiffness=1e4, damping=3.0,
                             free_length=1.5, name="compressed")
    bush = nd.Bushing(s.ground, b, (0, 2.0, 0), stiffness=(1e4, 2e4, 3e4), damping=5.0,
                      rotational_stiffness=50.0, name="mount")
    for el in (spring, bush):
        el.evaluation = "implicit"
        s.add_force(el)
    stepper = nd.Stepper(s, h=1e-3)
    for _ in range(5):
        stepper.step()
    program, h = stepper.program, 1e-3
    q0, t0, z = stepper.q, stepper.t, stepper.z
    y = program.cs.L.T @ stepper.v + 0.01 * np.arange(12)

    def b_of(y):
        return program.implicit._function(q0, t0, h, y, z)[0]

    eps = 1e-6
    J = -np.column_stack([(b_of(y + eps * e) - b_of(y - eps * e)) / (2 * eps) for e in np.eye(12)])
    lam, V = np.linalg.eigh(0.5 * (J + J.T))
    assert lam.min() < -1e-3 * lam.max()                 # the compressed spring is indefinite
    H_expected = (V * np.maximum(lam, 0)) @ V.T
    H_nz, b_lin = program.implicit(q0, t0, h, y, z)
    H = np.asarray(ca.DM(program.implicit.pattern, H_nz))
    assert np.abs(H - H_expected).max() <= 1e-6 * np.abs(H_expected).max()
    assert np.allclose(b_lin, b_of(y) + H @ y, rtol=1e-12, atol=1e-12 * np.abs(b_lin).max())


def test_implicit_hessian_pattern_grows_linearly_with_the_bodies():
    from problems import chain
    nnz = {n: nd.Stepper(chain.build(n, bushing=(1e5, 1e2)), h=1e-3).program.implicit.nnz
           for n in (4, 8, 16)}
    # a 6 x 6 block per link and two per bushing between neighbours (not (6N)^2)
    assert nnz == {n: 36 * n + 72 * (n - 1) for n in (4, 8, 16)}
