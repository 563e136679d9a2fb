"""Two slider-crank loops on one driven crank (problems/two_loops.py): loop closure, slider
positions against the closed-form kinematics, and the midpoint scheme's discretisation
energy falling faster than 3.5x per halving of h. Midpoint runs of 2 s at 30 rad/s
(problems/two_loops.py MEASURED_2S); the module takes ~10 s."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import two_loops

T_END = 2.0
STEPS = (1e-3, 5e-4, 2.5e-4)


@pytest.fixture(scope="module")
def runs():
    """Midpoint runs of 2 s (9.5 turns at 30 rad/s) at the three steps."""
    return {h: nd.simulate(two_loops.build(), T_END, h, scheme="midpoint", progress=False)
            for h in STEPS}


def closed_form_sliders(phi):
    """x of slider 1 (+X) and slider 2 (-X), independent of nlpdyn: the crank pin
    B = P + 0.08 (0, -sin phi, cos phi), P = (0, 0.1, 0.12), and each slider on the X axis at
    its rod's length (0.3 m, 0.35 m) from B."""
    By = 0.1 - 0.08 * np.sin(phi)
    Bz = 0.12 + 0.08 * np.cos(phi)
    return np.sqrt(0.3**2 - By**2 - Bz**2), -np.sqrt(0.35**2 - By**2 - Bz**2)


@pytest.mark.slow
def test_loops_close(runs):
    """Max constraint violation over 2 s, midpoint: 2.0e-6 / 2.5e-7 / 3.1e-8 at h = 1e-3 /
    5e-4 / 2.5e-4 (the 10 s runs of two_loops.MEASURED, the same maxima)."""
    for h, res in runs.items():
        assert res.success, res.message
        assert res.stats.constraint_violation.max() < 1e-5, h
        assert two_loops.turns(res) == pytest.approx(30 * T_END / (2 * np.pi), abs=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("t", [0.25, 0.7, 1.3, 2.0])
def test_sliders_follow_the_crank(runs, t):
    """The driven crank makes the sliders pure kinematics: x(phi = 30 t) to 1e-5 m."""
    res = runs[2.5e-4]
    k = int(np.argmin(np.abs(res.t - t)))
    assert res.t[k] == pytest.approx(t, abs=1e-9)
    x1, x2 = closed_form_sliders(30.0 * t)
    assert res.position("slider1")[k, 0] == pytest.approx(x1, abs=1e-5)
    assert res.position("slider2")[k, 0] == pytest.approx(x2, abs=1e-5)
    for name in ("slider1", "slider2"):
        assert np.abs(res.position(name)[k, 1:]).max() < 1e-5


@pytest.mark.slow
def test_midpoint_discretisation_energy_second_order(runs):
    """Discretisation energy (residual:* + ideal joints' work), midpoint, 2 s: at the end
    5.0e-4 / 6.3e-5 / 7.9e-6 J (ratios 7.97, 7.98), largest magnitude 7.7e-4 / 1.3e-4 /
    2.6e-5 J (5.71, 5.09) at h = 1e-3 / 5e-4 / 2.5e-4. Both must fall >= 3.5x per halving."""
    for series in (lambda d: abs(d[-1]), lambda d: np.abs(d).max()):
        e = [series(two_loops.discretisation_energy(runs[h])) for h in STEPS]
        assert e[0] / e[1] >= 3.5 and e[1] / e[2] >= 3.5, e
