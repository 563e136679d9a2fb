"""The midpoint step (``scheme="midpoint"``) with contact: clearance joints, friction in them,
joint stops and LuGre joint friction, against closed forms and scipy.

The gaps' rows ask the end of the step to meet them, with a held contact's normal and lever
arms at the step's midpoint; the end velocity then leaves no closing speed at a closed gap and
none at all after an impact (plastic). References are computed without nlpdyn:
``clearance_pendulum.rocking_reference`` and ``planar_reference`` (scipy), the closed forms of
the plastic impact, the spinning bar and the sliding box, and ``_stop_pendulum_loss`` (scipy
with events).
"""
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.forces.contact_laws import Hertz, LankaraniNikravesh, ModifiedKelvinVoigt
from problems import clearance_pendulum as cp
from test_clearance_friction import MASS as BOX_MASS, box
from test_joint_stops import _in_play, _stop_pendulum, _stop_pendulum_loss

MIDPOINT = {"scheme": "midpoint", "progress": False}
HS = (1e-3, 5e-4, 2.5e-4)


def _late(res, x):
    return x[res.t >= 0.1 - 1e-12]


@pytest.fixture(scope="module")
def rocking():
    """(friction, h) -> (angle, the scipy reference's, Result) of the wheel rocking in its
    0.5 mm bore for 0.15 s (``build_rocking_wheel``; with friction 0.2, spinning at -10
    rad/s)."""
    out = {}
    for friction, spin in ((0.0, 0.0), (0.2, -10.0)):
        for h in HS:
            res = nd.simulate(cp.build_rocking_wheel(friction=friction, spin=spin), 0.15, h=h,
                              **MIDPOINT, **({"gap_tol": 1e-12} if friction else {}))
            out[friction, h] = (cp.rocking_angle(res),
                                cp.rocking_reference(res.t, friction=friction, spin=spin), res)
    return out


@pytest.mark.slow
def test_rocking_in_the_bore_is_second_order_without_damping(rocking):
    """Frictionless, the bore rocks in sustained contact like a pendulum of length c: its
    swing over 0.10-0.15 s is the reference's within 0.1 % at every h (scheme "euler" with
    its start normals: within 1 %), and the angle's largest error (the phase) falls at least
    3.5x per halving of h (measured 4.0x and 4.0x): no numerical damping, second order. The
    gap stays closed to the tolerance and the ledger's residual stays at round-off (below
    1e-9 of the largest kinetic energy)."""
    errors = []
    for h in HS:
        angle, reference, res = rocking[0.0, h]
        assert res.success and np.abs(res.gaps[:, :2]).max() <= 1e-9
        assert np.ptp(_late(res, angle)) == pytest.approx(np.ptp(_late(res, reference)), rel=1e-3)
        ledger = res.energy_ledger()
        assert np.abs(ledger["residual"]).max() <= 1e-9 * ledger["kinetic"].max()
        errors.append(np.abs(angle - reference).max())
    assert errors[0] <= 0.02 * np.radians(11.3)
    assert errors[0] / errors[1] >= 3.5 and errors[1] / errors[2] >= 3.5


@pytest.mark.slow
def test_rocking_about_the_friction_angle_converges(rocking):
    """With friction 0.2 and the wheel spinning (the bore slips throughout), the swing over
    0.10-0.15 s and its centre (the friction angle) are the reference's within 0.5 % and
    0.05 deg at every h, the error falls at least 3.5x per halving (measured 4.0x and 4.0x;
    scheme "euler": 6x the error at h = 1e-3, halving it), and the friction never does
    positive work. The runs take gap_tol 1e-12: the friction cone is iterated to an impulse
    of gap_tol m / h, and the default's (1e-10) shows at h = 2.5e-4 (error 0.034 deg, 2.7x)."""
    errors = []
    for h in HS:
        angle, reference, res = rocking[0.2, h]
        assert res.success and res.gaps.min() >= -1e-9
        late, ref = _late(res, angle), _late(res, reference)
        assert np.ptp(late) == pytest.approx(np.ptp(ref), rel=5e-3)
        centre = lambda x: 0.5 * (x.max() + x.min())     # noqa: E731
        assert abs(centre(late) - centre(ref)) <= np.radians(0.05)
        friction = res.energy_ledger()["friction:bearing"]
        assert friction.iloc[-1] < 0 and np.all(np.diff(friction) <= 1e-12)
        errors.append(np.abs(angle - reference).max())
    assert errors[0] / errors[1] >= 3.5 and errors[1] / errors[2] >= 3.5


@pytest.mark.slow
@pytest.mark.parametrize("h", [2e-3, 1e-3])
def test_drop_onto_the_pin_is_one_plastic_impact(h):
    """The bar falls through a 1 mm clearance onto the pin: one plastic impact, whose loss
    m g c J / (J + m r^2) is the ledger's impact column within 1e-6 (the midpoint past the
    pin would leave a rebound of 2 g(q_m) / h; the end velocity has none), then sliding. The
    loss by the first turning point is the planar reference's within 10 % (the rest: the
    bar's spin about its axis, seeded by round-off, rattles the bore's ends, as with scheme
    "euler"). Every gap stays >= -1e-9 m."""
    res = nd.simulate(cp.build(cm_z=0.0, clearance=1e-3, axial_clearance=1e-3), t_end=1.0,
                      h=h, **MIDPOINT)
    assert res.success and res.gaps.min() >= -1e-9
    ledger = res.energy_ledger()
    first = ledger["impact:pin"][res.t <= 0.1].iloc[-1]
    assert -first == pytest.approx(cp.impact_energy_closed_form(clearance=1e-3), rel=1e-6)
    loss, _ = cp.turning_point_energy(res)
    reference = -cp.planar_reference(clearance=1e-3).turning_point[1]
    assert -loss[0] == pytest.approx(reference, rel=0.1)


def test_spinning_bar_in_sustained_contact():
    """The bar spinning at 10 rad/s without gravity, pressed outward on its pin: the energy
    stays within 1e-9 of its 16.7 J (7e-9 J, in the first step, before the contact counts
    as held), and the contact force is m omega^2 (cm_x + c) within
    2e-5, its error falling at least 3.5x per halving of h (second order; measured 4.0x)."""
    omega, c = 10.0, 1e-4
    exact = cp.spinning_contact_force(omega, c)
    errors = []
    for h in (1e-3, 5e-4):
        res = nd.simulate(cp.build_spinning(omega, c), t_end=0.5, h=h, **MIDPOINT)
        assert res.success and res.gaps.min() >= -1e-9
        assert np.ptp(res.energy) <= 1e-9 * res.energy[0]
        errors.append(np.abs(res.contact_force("pin")[1:].sum(axis=1) / exact - 1).max())
    assert errors[0] <= 2e-5 and errors[0] / errors[1] >= 3.5


def test_contact_onset_is_landed_on():
    """A body centred in a 1 mm spherical socket falls from rest. The midpoint step falls
    exactly g t^2 / 2, so the gap closes at t_on = sqrt(2 c / g); the adaptive step control
    ends a step within its prediction's resolution, (h_max - h_min) / 64, of it, the gap
    still open there, and the next closes it."""
    s = nd.System(gravity=(0, 0, -9.81))
    cup = s.add_body("cup", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, 0.1))
    s.add_joint(nd.SphericalClearance(s.ground, cup, point=(0, 0, 0.1), clearance=1e-3,
                                      name="socket"))
    h_min, h_max = 1e-4, 1e-3
    res = nd.simulate(s, t_end=0.02, h=(h_min, h_max), step_control="adaptive", **MIDPOINT)
    assert res.success
    t_on = np.sqrt(2e-3 / 9.81)
    fall = 0.1 - res.position("cup")[:, 2]
    before = res.t <= t_on
    assert np.allclose(fall[before], 0.5 * 9.81 * res.t[before]**2, rtol=0, atol=1e-12)
    k = np.searchsorted(res.t, t_on) - 1         # the last point before the onset
    assert t_on - res.t[k] <= (h_max - h_min) / 64
    gap = res.gap("socket")[:, 0]
    assert gap[k] > 0 and abs(gap[k + 1]) <= 1e-9


def test_sliding_box_decelerates_at_mu_g_exactly():
    """The box slides on its guide's face (Coulomb, mu = 0.3) from 1 m/s: once it rests on
    the face (normal impulse m g h a step) its velocity falls mu g h per step, its position
    is v0 t - mu g t^2 / 2 to round-off from there (the midpoint step is exact for a constant
    force; scheme "euler" is off by mu g h t / 2), it stops within a step of v0 / (mu g) and
    then sticks."""
    G, MU, H = 9.81, 0.3, 1e-3
    res = nd.simulate(box(v0=1.0), t_end=0.4, h=H, **MIDPOINT)
    assert res.success
    x, vx = res.position("box")[:, 0], res.v[:, 0]
    resting = np.isclose(res.contact_force("guide")[1:].sum(axis=1), BOX_MASS * G, rtol=1e-9)
    assert resting[2:].all()
    stop = np.argmax(vx <= 1e-12)
    sliding = (np.arange(1, len(res.t)) < stop) & resting
    assert np.allclose(np.diff(vx)[sliding], -MU * G * H, rtol=1e-8, atol=0)
    assert abs(res.t[stop] - 1.0 / (MU * G)) <= H
    assert np.abs(vx[stop:]).max() <= 1e-12 and np.ptp(x[stop:]) <= 1e-12
    # from the second step on (the landing's), exact
    k = 2
    t = res.t[k:stop] - res.t[k]
    exact = x[k] + vx[k] * t - 0.5 * MU * G * t**2
    assert np.abs(x[k:stop] - exact).max() <= 1e-12


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_elastic_stop_keeps_the_energy(k):
    """The bar on a revolute against an elastic Hertz stop at +-1 rad, 1 s at h = 1e-3: the
    energy changes by less than 1e-5 of the energy in play (scheme "euler": 0.16 % and 0.41 %),
    the stop does no work of its own, and the ledger's residual is below 1e-6 of it."""
    res = nd.simulate(_stop_pendulum(Hertz(k)), 1.0, h=1e-3, **MIDPOINT)
    assert res.success
    ledger = res.energy_ledger()
    play = _in_play(res)
    assert ledger["stored:stop"].max() > 0.1 * play        # it does hit the stop
    assert abs(res.energy[-1] - res.energy[0]) <= 1e-5 * play
    assert np.abs(ledger["work:stop"]).max() <= 1e-12
    assert np.abs(ledger["residual"]).max() <= 1e-6 * play


@pytest.mark.slow
@pytest.mark.parametrize("k", [1e4, 1e6])
@pytest.mark.parametrize("kind", ["ln", "kv"])
def test_hysteresis_stop_loses_scipys_loss(kind, k):
    """With a hysteresis law, the energy lost is the law's own work column within 1e-4 and
    scipy's loss (``_stop_pendulum_loss``) within 1 % at h = 1e-3 (measured 0.01-0.3 %)."""
    law = LankaraniNikravesh(k, 1.5, 0.75) if kind == "ln" else ModifiedKelvinVoigt(k, 0.25)
    res = nd.simulate(_stop_pendulum(law), 1.0, h=1e-3, **MIDPOINT)
    assert res.success
    loss = res.energy[-1] - res.energy[0]
    assert loss == pytest.approx(res.energy_ledger()["work:stop"].iloc[-1], rel=1e-4)
    assert loss == pytest.approx(_stop_pendulum_loss(law), rel=0.01)


def test_prism_settles_on_its_contacts_at_the_statics():
    """A triangular slider in its prismatic clearance cavity, loaded across and along the
    axis (``tests/test_clearance_sliders.py``): once its loaded gaps stop changing, its
    motion across the axis stops (below 1e-12 m/s and rad/s while it slides along the axis
    at up to 30 m/s) and its contact forces are the statics' within 1e-8. A loaded contact
    the step's end leaves at a rate its load would close within the step stays closed: the
    end rows would otherwise mirror the rate into the next step, and the slider rocked
    between its redundant contacts at 1e-7 m/s after 0.1 s."""
    from problems import prismatic_slider
    from test_clearance_sliders import active_gaps, prism_equilibrium, settled_rows
    res = nd.simulate(prismatic_slider.build(), t_end=0.5, h=1e-3, **MIDPOINT)
    assert res.success
    done = settled_rows(res, "cavity")
    assert np.abs(res.velocity("slider")[done, :2]).max() <= 1e-12
    assert np.abs(res.angular_velocity("slider")[done]).max() <= 1e-12
    active = np.nonzero(active_gaps(res, "cavity")[-1])[0]
    _, _, lam, _ = prism_equilibrium(active)
    assert np.allclose(res.contact_force("cavity")[done][:, active], lam, rtol=1e-8, atol=0)
