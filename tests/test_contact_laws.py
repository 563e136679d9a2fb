"""Contact force laws against hand computation and against impacts integrated with scipy."""
import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from nlpdyn.forces.contact_laws import (Blended, Hertz, LankaraniNikravesh, LinearBushing,
                                        ModifiedKelvinVoigt, Pereira, TabulatedBushing)

LAWS = {
    "hertz": Hertz(1e6, 1.5),
    "ln": LankaraniNikravesh(1e6, 1.5, 0.75),
    "kv": ModifiedKelvinVoigt(1e5, 0.01, 0.1),
    "pereira": Pereira(0.75, 2.07e11, 0.3, 0.02, 1e-4, n_strips=2),
    "blended": Blended(1e-4, 1e-3, LinearBushing(1e5, 10.0), Hertz(1e8, 1.5)),
}


@pytest.mark.parametrize("name", LAWS)
def test_no_force_without_contact_and_finite_derivatives(name):
    law = LAWS[name]
    d, dd, v = ca.SX.sym("d"), ca.SX.sym("dd"), ca.SX.sym("v")
    f = law.force(d, dd, v)
    fn = ca.Function("f", [d, dd, v], [f, ca.jacobian(f, ca.vertcat(d, dd))])
    for delta in (-1e-3, 0.0):
        value, jac = fn(delta, 0.3, 0.5)
        assert float(value) == 0
        assert np.all(np.isfinite(np.asarray(jac)))
    value, jac = fn(0.0, 0.0, 0.0)                 # closing at rest: the guard, no 0/0
    assert np.all(np.isfinite(np.asarray(jac)))
    # symbolic and numeric evaluation agree
    assert float(fn(2e-3, 0.1, 0.5)[0]) == pytest.approx(float(law.force(2e-3, 0.1, 0.5)), rel=1e-14)


def test_values_by_hand():
    K, n, e = 1e6, 1.5, 0.75
    delta, rate, v_imp = 2e-4, 0.3, 0.6
    assert float(Hertz(K, n).force(delta)) == pytest.approx(K * delta**n, rel=1e-14)
    ln = LankaraniNikravesh(K, n, e)
    assert float(ln.force(delta, rate, v_imp)) == pytest.approx(
        K * delta**n * (1 + 3 * (1 - e**2) / 4 * rate / v_imp), rel=1e-14)
    # the seed's guard: the ratio is 1 when the rate exceeds v_imp or v_imp -> 0
    assert float(ln.force(delta, 2 * v_imp, v_imp)) == pytest.approx(
        K * delta**n * (1 + 3 * (1 - e**2) / 4), rel=1e-14)
    assert float(ln.force(delta, 0.1, 0.0)) == pytest.approx(K * delta**n * (1 + 3 * (1 - e**2) / 4), rel=1e-14)
    # restitution phase: never pulls
    assert float(ln.force(delta, -100 * v_imp, v_imp)) == 0
    kv = ModifiedKelvinVoigt(1e5, 0.01, 0.1)
    assert float(kv.force(delta, -1.0)) == pytest.approx(1e5 * 0.01 * delta, rel=1e-14)
    assert float(kv.force(delta, 1.0)) == pytest.approx(1e5 * delta, rel=1e-14)
    r = 0.05 / 0.1
    assert float(kv.force(delta, 0.05)) == pytest.approx(1e5 * delta * (0.01 + 0.99 * (3 * r**2 - 2 * r**3)), rel=1e-14)
    bushing = LinearBushing(2e4, 30.0)
    assert float(bushing.force(-1e-3, 0.2)) == pytest.approx(-20 + 6, rel=1e-14)


def test_pereira_constants():
    """Eqs. 45-48 with dR in mm: dR = 0.1 mm internal: Y = 1.51 ln(100)^-0.151,
    n = Y 0.1^0.005; K = (0.965 * 0.1 + 0.0965) L E* / (N 0.1)."""
    law = Pereira(0.75, 2.07e11, 0.3, 0.02, 1e-4, internal=True, n_strips=2)
    Y = 1.51 * np.log(100.0) ** -0.151
    assert law.exponent == pytest.approx(Y * 0.1**0.005, rel=1e-14)
    E_star = 2.07e11 / (2 * (1 - 0.09))
    assert law.stiffness == pytest.approx((0.965 * 0.1 + 0.0965) * 0.02 * E_star / (2 * 0.1), rel=1e-14)
    wide = Pereira(0.75, 2.07e11, 0.3, 0.02, 1e-3)
    assert wide.exponent == pytest.approx((0.0151 * 1.0 + 1.151) * 1.0**0.005, rel=1e-14)
    external = Pereira(0.75, 2.07e11, 0.3, 0.02, 0.02, internal=False)
    assert external.exponent == 1.094


def _impact(law, mass, speed):
    """A mass hits a half-space at ``speed``; returns its exit speed (scipy, tight tolerance)."""
    def rhs(t, y):
        return [y[1], -float(law.force(y[0], y[1], speed)) / mass]

    def separation(t, y):
        return y[0]
    separation.terminal, separation.direction = True, -1
    sol = solve_ivp(rhs, (0, 1), [0.0, speed], events=separation, rtol=1e-11, atol=1e-14,
                    first_step=1e-9, max_step=1e-4)
    return -sol.y_events[0][0][1], sol


def test_hertz_impact_is_elastic_and_reaches_the_closed_form_penetration():
    K, n, m, v = 1e6, 1.5, 1.0, 1.0
    exit_speed, sol = _impact(Hertz(K, n), m, v)
    assert exit_speed == pytest.approx(v, rel=1e-9)
    assert sol.y[0].max() == pytest.approx(((n + 1) * m * v**2 / (2 * K)) ** (1 / (n + 1)), rel=1e-6)


def test_lankarani_nikravesh_energy_loss_follows_the_known_relation_near_e_1():
    """LN's damping is derived so an impact loses 1/2 m v^2 (1 - e^2) for e close to 1: the
    relative error of the lost energy is O(1 - e) (below 2 (1 - e) here) and grows as e
    drops (the law's known limitation)."""
    m, v = 1.0, 1.0
    errors = []
    for e in (0.99, 0.95, 0.9, 0.75):
        exit_speed, _ = _impact(LankaraniNikravesh(1e6, 1.5, e), m, v)
        lost = 0.5 * m * (v**2 - exit_speed**2)
        expected = 0.5 * m * v**2 * (1 - e**2)
        errors.append(abs(lost - expected) / expected)
        if e >= 0.95:
            assert errors[-1] < 2 * (1 - e)
    assert np.all(np.diff(errors) > 0)


@pytest.mark.parametrize("c_e", [0.01, 0.25])
def test_kelvin_voigt_restitution_is_sqrt_ce(c_e):
    """Loading with K, unloading with c_e K (v0 -> 0): e = sqrt(c_e)."""
    exit_speed, _ = _impact(ModifiedKelvinVoigt(1e6, c_e, 1e-5), 1.0, 1.0)
    assert exit_speed == pytest.approx(np.sqrt(c_e), rel=1e-4)


def test_blended_law_is_continuous_and_equals_its_parts():
    c, b = 1e-4, 1e-3
    bushing, hard = LinearBushing(1e5, 0.0), Hertz(1e8, 1.5)
    law = Blended(c, b, bushing, hard)
    beta = 0.01 * b
    for bp in (c, c + b - beta, c + b):      # no jump: the difference shrinks with the step
        jumps = [abs(float(law.force(bp + eps, 0, 0)) - float(law.force(bp - eps, 0, 0)))
                 for eps in (1e-9, 1e-11)]
        assert jumps[1] < 0.02 * jumps[0] + 1e-12
    assert float(law.force(0.5 * c, 0, 0)) == 0
    mid = c + 0.5 * b
    assert float(law.force(mid, 0, 0)) == pytest.approx(1e5 * 0.5 * b, rel=1e-14)
    deep = c + b + 2e-4
    assert float(law.force(deep, 0, 0)) == pytest.approx(
        1e5 * (b + 2e-4) + 1e8 * (2e-4 + beta) ** 1.5, rel=1e-12)


def test_tabulated_bushing_interpolates_and_integrates():
    x, f = [-1e-3, 0.0, 1e-3, 2e-3], [-50.0, 0.0, 100.0, 400.0]
    law = TabulatedBushing(x, f, damping=2.0)
    for xi, fi in zip(x, f):
        assert float(law.force(xi, 0.0)) == pytest.approx(fi, abs=1e-12)
    assert float(law.force(1.5e-3, 0.1)) == pytest.approx(250 + 0.2, rel=1e-12)
    assert float(law.force(3e-3, 0.0)) == pytest.approx(700.0, rel=1e-12)   # linear beyond
    # potential: trapezoid areas of the table (exact for piecewise-linear F)
    assert float(law.potential(2e-3)) == pytest.approx(0.5 * 1e-3 * 100 + 0.5 * 1e-3 * 500, rel=1e-12)
    assert float(law.potential(-1e-3)) == pytest.approx(0.5 * 1e-3 * 50, rel=1e-12)


def test_problems_name_the_owner_and_parameter():
    owner = "joint stop 'x'"
    assert "stiffness must be > 0" in Hertz(-1.0).problems(owner)[0]
    assert LankaraniNikravesh(1e5, 1.5, 1.5).problems(owner)[0].startswith(owner)
    assert any("restitution" in p for p in LankaraniNikravesh(1e5, 1.5, 0.0).problems(owner))
    assert any("fitted range" in p for p in Pereira(0.75, 2e11, 0.3, 0.02, 2e-2).problems(owner))
    assert any("strictly increasing" in p for p in TabulatedBushing([0, 0], [0, 1]).problems(owner))
    assert any("velocity_tolerance" in p for p in ModifiedKelvinVoigt(1e5, 0.01, 0.0).problems(owner))
