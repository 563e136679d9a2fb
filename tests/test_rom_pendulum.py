"""CASES.md #7, the spherical pendulum with a range-of-motion cone: the seed's findings
(energy conserved with j = 0, dissipated with j > 0, the latitude within cone + delta_sigma)
on short runs, and the measured step-size limit of the explicit evaluation."""
import numpy as np
import pytest

from nlpdyn.stepper import GYROSCOPIC_STALL
from problems import rom_pendulum as rp

T_SHORT = 1.2          # the first contact is at 0.43 s, the pendulum is back out by ~0.6 s


@pytest.fixture(scope="module")
def elastic():
    """j = 0 at h = 1e-3 and 5e-4, default scheme (both stable: the restricting moment
    alone allows 1e-3)."""
    return {h: rp.run("RoM, j = 0", t_end=T_SHORT, h=h) for h in (1e-3, 5e-4)}


def test_start_is_horizontal_at_longitude_135_inside_the_cone():
    res = rp.run("no RoM", t_end=1e-3, h=1e-3)
    lat, lon = rp.latitude_longitude(res)
    assert np.degrees(lat[0]) == pytest.approx(90.0, abs=1e-12)
    assert np.degrees(lon[0]) == pytest.approx(135.0, abs=1e-12)
    assert rp.beyond_cone(res)[0] == pytest.approx(np.radians(-10.0), abs=1e-12)
    assert res.position("pendulum")[0] == pytest.approx(0.225 * np.array([np.sqrt(0.5), np.sqrt(0.5), 0]))


@pytest.mark.slow
@pytest.mark.parametrize("scheme,order", [("euler", 1), ("midpoint", 2)])
def test_elastic_cone_keeps_the_energy_to_the_discretisation_tier(elastic, scheme, order):
    """Total energy (kinetic + gravity + the cone's stored energy) oscillates by O(h^order)
    and comes back after the contact: halving h divides the range by 2^order (scheme
    "euler": first order, "midpoint": second); the cone did take energy."""
    runs = elastic if scheme == "midpoint" else {
        h: rp.run("RoM, j = 0", t_end=T_SHORT, h=h, scheme="euler") for h in (1e-3, 5e-4)}
    ranges = {}
    for h, res in runs.items():
        assert res.success and res.info["scheme"] == scheme
        e = res.energy
        assert res.element_potential["cone"].max() > 5.0          # of 18.76 J
        ranges[h] = np.ptp(e)
        assert abs(e[-1] - e[0]) <= 0.1 * ranges[h]
    assert 0.85 * 2**order <= ranges[1e-3] / ranges[5e-4] <= 1.15 * 2**order
    assert ranges[1e-3] <= 700.0 * 1e-3       # C h, C = 700 J/s (euler measured: 0.62 J)


@pytest.mark.slow
def test_latitude_stays_within_cone_plus_delta_sigma(elastic):
    """Without the cone the swing passes longitude 315 deg at latitude 90 deg (45 deg beyond
    the cone); with it the pendulum goes beyond the cone, but by less than delta_sigma."""
    free = rp.run("no RoM", t_end=T_SHORT, h=1e-3)
    assert np.degrees(rp.beyond_cone(free).max()) == pytest.approx(45.0, abs=0.1)
    for res in elastic.values():
        beyond = rp.beyond_cone(res)
        assert 0 < beyond.max() < rp.REFERENCE["delta_sigma"]
        _, lon = rp.latitude_longitude(res)
        assert 300 < np.degrees(lon[np.argmax(beyond)]) < 330


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["euler", "midpoint"])
@pytest.mark.parametrize("damping", [0.1, 3.39])
def test_damping_dissipates_and_never_adds_energy(damping, scheme):
    """j > 0: the energy never rises beyond the elastic run's discretisation level (scheme
    "euler" at h = 1e-3: its range is 0.62 J; measured rise 0.17 J at j = 0.1, none at
    j = 3.39; "midpoint": none at either j), and it ends well below the start; with
    j = 3.39 the pendulum never reaches the cone."""
    res = rp.run({"damping": damping}, t_end=T_SHORT, h=1e-3, scheme=scheme)
    e = res.energy
    rise = np.max(e - np.minimum.accumulate(e))
    assert rise <= 0.5 if damping < 1 and scheme == "euler" else rise <= 1e-9 * abs(e).max()
    assert e[-1] < e[0] - 2.0
    m = rp.moments(res)
    if damping >= 1:
        assert m["kappa"].max() == 0 and rp.beyond_cone(res).max() < 0


@pytest.mark.slow
@pytest.mark.parametrize("h", [1e-3, 5e-4, 2e-4])
@pytest.mark.parametrize("damping", [3.39, 5.0, 10.0])
def test_euler_explicit_step_limit_is_set_by_the_damped_axial_spin(h, damping):
    """Scheme "euler": measured stability limit of the explicit evaluation: the dissipative
    moment acts on the bar's spin about its own axis (inertia 1.7e-3 kg m^2), which
    round-off seeds; explicit Euler on w' = -(j / J_axial) w needs h < 2 J_axial / j. rp.H
    is below it for every j of the sweeps."""
    res = rp.run({"damping": damping}, t_end=0.15, h=h, scheme="euler")
    spin = np.abs(res.angular_velocity("pendulum")[:, 1]).max()
    if h < 2 * rp.AXIAL / damping:
        assert spin < 1e-6
    else:
        assert spin > 1.0
    assert rp.H < 2 * rp.AXIAL / rp.SWEEPS["damping"].max()


@pytest.mark.slow
@pytest.mark.parametrize("damping", [3.39, 5.0, 10.0])
def test_midpoint_sweeps_step_keeps_the_axial_spin_down(damping):
    """Default scheme ("midpoint") at the sweeps' h = rp.H: every step is taken at H (none
    retried) and the round-off seeded spin about the bar's axis stays below 1e-6 rad/s."""
    res = rp.run({"damping": damping}, t_end=0.15, h=rp.H)
    assert res.success and res.info["scheme"] == "midpoint"
    assert np.allclose(np.diff(res.t), rp.H, rtol=1e-9, atol=0)
    assert np.abs(res.angular_velocity("pendulum")[:, 1]).max() < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("damping, t_end", [(3.39, 1.2), (10.0, 0.1)])
def test_midpoint_past_the_explicit_dampers_limit_retries_instead_of_growing(damping, t_end):
    """The default (midpoint) step with the cone's explicit damping at h = 1e-3: the
    iterations on the step's mean velocity contract by h j / (2 J_axial) on the bar's spin.
    At j = 3.39 (1.0) slowly: every step is taken at h, within GYROSCOPIC_STALL of their
    fixed point. At j = 10 (2.9) they diverge: those steps are retried shorter, never
    accepted, so the spin stays at that scale and the energy never rises."""
    res = rp.run({"damping": damping}, t_end=t_end, h=1e-3)
    assert res.success, res.message
    e = res.energy
    assert np.max(e - np.minimum.accumulate(e)) <= 1e-9 * np.abs(e).max()
    spin = np.abs(res.angular_velocity("pendulum")[:, 1]).max()
    assert spin <= GYROSCOPIC_STALL * (1 + np.abs(res.v).max())
    retried = res.stats.retries > 0
    assert (retried.any() and res.h.min() < 2 * rp.AXIAL / damping) if damping > 5 else \
        not retried.any()
