"""The scipy route for penalty-only systems (nlpdyn.ode), against closed forms."""
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.ode import simulate_ode


def _oscillator(k=1e4, c=0.0, mass=2.0, x0=0.01, v0=0.3):
    s = nd.System(gravity=(0, 0, 0))
    b = s.add_body("m", mass, (1e-2, 1e-2, 1e-2), position=(1 + x0, 0, 0), velocity=(v0, 0, 0))
    s.add_force(nd.SpringDamper(s.ground, (0, 0, 0), b, (1 + x0, 0, 0), stiffness=k, damping=c,
                                free_length=1.0, name="spring"))
    return s


@pytest.mark.parametrize("method", ["Radau", "DOP853"])
def test_linear_oscillator_matches_closed_form(method):
    k, m, x0, v0 = 1e4, 2.0, 0.01, 0.3
    res = simulate_ode(_oscillator(k, 0.0, m, x0, v0), 0.2, method=method, rtol=1e-10, atol=1e-12,
                       progress=False)
    w = np.sqrt(k / m)
    x = x0 * np.cos(w * res.t) + v0 / w * np.sin(w * res.t)
    assert res.success
    assert np.abs(res.position("m")[:, 0] - 1 - x).max() < 1e-7 * (abs(x0) + v0 / w)
    assert np.ptp(res.energy) < 1e-7 * res.energy[0]


def test_free_top_keeps_its_invariants():
    """Torque-free asymmetric body: kinetic energy and global angular momentum are constant."""
    s = nd.System(gravity=(0, 0, 0))
    J = np.array([1.0, 2.0, 3.0])
    s.add_body("top", 1.0, J, angular_velocity=(1.0, 0.1, 0.5))
    res = simulate_ode(s, 5.0, method="DOP853", rtol=1e-11, atol=1e-12, progress=False)
    L = np.einsum("nij,nj->ni", res.rotation("top"), J * res.angular_velocity("top"))
    assert np.abs(L - L[0]).max() < 1e-8
    assert np.ptp(res.energy) < 1e-8


def test_constrained_systems_are_refused():
    s = _oscillator()
    s.add_joint(nd.Spherical(s.ground, s.bodies[0], point=(0, 0, 0)))
    with pytest.raises(nd.ModelError, match="penalty-only"):
        simulate_ode(s, 1.0, progress=False)
