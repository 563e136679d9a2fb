"""A thin disk rolling without slip in steady precession (problems/rolling_disk.py): the
minimal-coordinate reference's own checks, then nlpdyn's model (a programmed contact row and
two velocity rows) against it."""
import warnings

import numpy as np
import pytest

import nlpdyn as nd
from problems import rolling_disk as rd

HS = (1e-3, 5e-4, 2.5e-4)


def _ratios(values):
    values = np.asarray(values, dtype=float)
    return values[:-1] / values[1:]


def _errors(h, scheme):
    """(tilt drift in percent of the initial tilt, centre's position error against the
    reference in m, contact row's largest residual in m) over T_END."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = nd.simulate(rd.build(), rd.T_END, h, scheme=scheme, progress=False)
    assert res.success, res.message
    ref = rd.reference(res.t)
    drift = 100 * np.abs(rd.tilt(res) - rd.TILT).max() / rd.TILT
    position = np.linalg.norm(res.position("disk") - rd.centre(ref), axis=1).max()
    n = res.rotation("disk")[:, :, 0]
    gap = np.abs(res.position("disk")[:, 2] - rd.RADIUS * np.sqrt(1 - n[:, 2] ** 2)).max()
    return drift, position, gap


def test_reference_keeps_the_steady_tilt_and_its_energy():
    """Steady precession: tilt, heading rate and spin rate constant over 2 s (measured
    1e-14 rad), the contact point on a circle of radius |v| / Omega, the energy constant
    (1e-12 J of 1.97 J), the rolling rows zero."""
    t = np.linspace(0.0, rd.T_END, 401)
    x = rd.reference(t)
    assert np.abs(x[:, 0] - rd.TILT).max() < 1e-9
    assert np.abs(x[:, 6] - rd.PRECESSION).max() < 1e-9
    assert np.abs(x[:, 7] - x[0, 7]).max() < 1e-9 * abs(x[0, 7])
    speed = np.hypot(*x[0, 8:])
    middle = x[0, 3:5] + np.array([-x[0, 9], x[0, 8]]) / rd.PRECESSION    # to the left
    assert np.abs(np.linalg.norm(x[:, 3:5] - middle, axis=1) - speed / rd.PRECESSION).max() < 1e-9
    E = rd.energy(x)
    assert np.ptp(E) < 1e-10 * E[0]
    slip = rd._model(rd.RADIUS, rd.MASS, rd.G)["slip"]
    assert max(np.abs(np.asarray(slip(s[:5], s[5:])[0])).max() for s in x) < 1e-10


def test_reference_keeps_its_energy_when_nutating():
    """Kicked off the steady motion (theta' = 1 rad/s): the tilt nutates (measured
    0.288 .. 0.408 rad), the energy stays within 1e-12 J, the rolling rows at zero."""
    x0 = rd.steady_state()
    x0[5] = 1.0
    x0[8:] = rd.contact_velocity(x0[:5], *x0[5:8])
    x = rd.reference(np.linspace(0.0, rd.T_END, 401), x0=x0)
    assert np.ptp(x[:, 0]) > 0.1
    E = rd.energy(x)
    assert np.ptp(E) < 1e-10 * E[0]
    slip = rd._model(rd.RADIUS, rd.MASS, rd.G)["slip"]
    assert max(np.abs(np.asarray(slip(s[:5], s[5:])[0])).max() for s in x) < 1e-10


def test_build_starts_on_the_reference():
    """The body's initial state is the reference's: the tilt, and both constraints satisfied."""
    s = rd.build()
    disk = s.body("disk")
    n = disk.rotation0[:, 0]
    assert abs(np.arcsin(n[2]) - rd.TILT) < 1e-15
    assert abs(disk.position[2] - rd.RADIUS * np.sqrt(1 - n[2] ** 2)) < 1e-15
    p_minus_c = -rd.RADIUS * (np.array([0, 0, 1]) - n[2] * n) / np.sqrt(1 - n[2] ** 2)
    slip = disk.velocity + np.cross(disk.rotation0 @ disk.angular_velocity, p_minus_c)
    assert np.abs(slip).max() < 1e-14


@pytest.mark.slow
def test_midpoint_is_second_order_against_the_reference():
    """scheme="midpoint" at h = 1e-3, 5e-4, 2.5e-4 over 2 s: tilt drift 2.6e-4, 6.4e-5,
    1.7e-5 % of the initial tilt, centre error 1.81e-5, 4.52e-6, 1.12e-6 m (3.8-4.0x per
    halving); the contact row within 2.3e-12, 1.5e-13, 9e-15 m (its rows meet the end to
    O(h^3))."""
    drifts, positions = [], []
    for h in HS:
        drift, position, gap = _errors(h, "midpoint")
        drifts.append(drift)
        positions.append(position)
        assert gap < 1e-6
    assert np.all((_ratios(drifts) > 3.5) & (_ratios(drifts) < 4.5)), drifts
    assert np.all((_ratios(positions) > 3.5) & (_ratios(positions) < 4.5)), positions
    assert drifts[0] < 1e-3 and positions[0] < 3e-5


def test_euler_drifts_first_order():
    """The seed's Euler at h = 1e-3, 5e-4: the tilt grows steadily, 4.23 % and 2.10 % of the
    initial tilt over 2 s; centre error 4.96e-2 and 2.48e-2 m (2x per halving)."""
    drift1, position1, _ = _errors(1e-3, "euler")
    drift2, position2, _ = _errors(5e-4, "euler")
    assert 3.5 < drift1 < 5.0 and 1.8 < drift1 / drift2 < 2.2
    assert position1 < 0.06 and 1.8 < position1 / position2 < 2.2
