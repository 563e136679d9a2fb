"""The flexibly supported base (issue 13, seed 003 section 2.2.3) against closed forms."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import flexible_base


def crossings(t, signal):
    """Times of the upward crossings of ``signal``'s mean (linear interpolation)."""
    y = signal - signal.mean()
    up = np.where((y[:-1] < 0) & (y[1:] >= 0))[0]
    found = t[up] - y[up] * (t[up + 1] - t[up]) / (y[up + 1] - y[up])
    assert len(found) >= 4
    return found


def frequency(t, signal):
    """Mean frequency (rad/s) over the whole periods between the first and last crossing."""
    found = crossings(t, signal)
    return 2 * np.pi * (len(found) - 1) / (found[-1] - found[0])


@pytest.mark.slow
def test_vertical_mode_and_static_sag():
    """Released on unloaded springs, the base bounces about m g / (4 k_z) = 0.49 mm at
    sqrt(4 k_z / m) = 141 rad/s (h = 5e-5: omega h = 0.007; the implicit springs' numerical
    damping, ~omega h / 2, shifts neither to the tolerance)."""
    res = nd.simulate(flexible_base.build(), 0.2, h=5e-5, progress=False)
    z = res.position("base")[:, 2]
    sag = flexible_base.MASS * 9.81 / (4 * flexible_base.STIFFNESS[2])
    assert res.success
    assert frequency(res.t, z) == pytest.approx(flexible_base.frequencies()["z"], rel=2e-3)
    found = crossings(res.t, z)
    periods = (res.t >= found[0]) & (res.t < found[-1])
    assert z[periods].mean() == pytest.approx(-sag, rel=5e-3)
    assert np.abs(res.position("base")[:, :2]).max() <= 1e-12      # no sway: it decouples


@pytest.mark.slow
@pytest.mark.parametrize("mode, spin", [("rock_x", (0.05, 0, 0)), ("rock_y", (0, 0.05, 0)),
                                        ("yaw", (0, 0, 0.05))])
def test_rotational_modes(mode, spin):
    """A small initial spin excites one rotational mode alone (supports in the plane of the
    centre of mass): k_z sum(y^2) / J_x, k_z sum(x^2) / J_y, (k_x sum(y^2) + k_y sum(x^2)) / J_z."""
    res = nd.simulate(flexible_base.build(gravity=0.0, angular_velocity=spin), 0.25, h=5e-5,
                      progress=False)
    axis = int(np.argmax(spin))
    angle = res.angular_velocity("base")[:, axis]
    assert res.success
    assert frequency(res.t, angle) == pytest.approx(flexible_base.frequencies()[mode], rel=2e-3)
