"""Error-controlled step size (``StepperSettings.rtol``, scheme "midpoint") and the midpoint
step over steps of changing h, against references not computed with the stepper:
minimal-coordinate ODEs solved by scipy's DOP853 at rtol 1e-13."""
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import nlpdyn as nd
from problems import chain, free_top, slider_crank
from test_contact_resolution import _exit_speed, _slider

T_END = 2.0
BOUNDS = (1e-6, 1e-2)


def _run(system, h, t_end=T_END, **settings):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the initial projection's note
        return nd.simulate(system, t_end, h, scheme="midpoint", progress=False, **settings)


def _chain_error(res, n=2):
    ref = solve_ivp(chain.reference_rhs(n), (0, res.t[-1]), np.zeros(2 * n), method="DOP853",
                    rtol=1e-13, atol=1e-14).y[:n, -1]
    return float(np.abs((chain.link_angles(res.q[-1], n) - ref + np.pi) % (2 * np.pi)
                        - np.pi).max())


def _crank_error(res):
    rhs, slider_x = slider_crank.reference_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rate = float(slider_crank.consistent_start()[1][3])     # the crank's, projected
    ref = solve_ivp(rhs, (0, res.t[-1]), [0.0, rate], method="DOP853", rtol=1e-13,
                    atol=1e-14).y[0, -1]
    return abs(res.position("slider")[-1, 0] - slider_x(ref))


def _top_error(res):
    ref = solve_ivp(free_top.reference_rhs(), (0, res.t[-1]), np.r_[0.4, 3.0, 0.6, 1, 0, 0, 0],
                    method="DOP853", rtol=1e-13, atol=1e-14).y[:3, -1]
    return float(np.abs(res.angular_velocity("top")[-1] - ref).max())


CASES = {"chain2": (lambda: chain.build(2), _chain_error),
         "crank": (slider_crank.build, _crank_error),
         "top": (free_top.build, _top_error)}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_rtol_meets_its_tolerance(case):
    """At rtol 1e-4 the error at t = 2 s is at most 10 rtol (measured: 2-link chain's angles
    1.6 rtol, slider x 0.01 rtol in m, the top's angular velocity 0.08 rtol in rad/s), and
    within the bounds h varies with the motion."""
    build, error = CASES[case]
    res = _run(build(), BOUNDS, rtol=1e-4)
    record = res.info["error_control"]
    assert res.success and res.t[-1] == T_END
    assert error(res) <= 10 * 1e-4, error(res)
    smallest, largest = record["h_range"]
    assert largest > 5 * np.median(res.h[len(res.h) // 2:]) or largest > 10 * smallest
    assert record["solves"] >= 1.5 * (len(res.t) - 1)      # two steps and their check, a pair


@pytest.mark.slow
def test_rtol_beats_a_fixed_h_of_as_many_steps():
    """Where the motion's pace changes (the chain's whip), the steps rtol chooses are more
    accurate over the run than as many steps of one h: fewer steps at equal accuracy
    (measured: the largest angle error over 2 s 6.6e-4 rad against 2.3e-3 at 7688 steps)."""
    dense = solve_ivp(chain.reference_rhs(2), (0, T_END), np.zeros(4), method="DOP853",
                      rtol=1e-13, atol=1e-14, dense_output=True).sol

    def largest_error(res):
        angles = np.array([chain.link_angles(q, 2) for q in res.q])
        return np.abs((angles - dense(res.t)[:2].T + np.pi) % (2 * np.pi) - np.pi).max()

    controlled = _run(chain.build(2), BOUNDS, rtol=1e-4)
    steps = len(controlled.t) - 1
    fixed = _run(chain.build(2), T_END / steps)
    assert len(fixed.t) - 1 == steps
    assert largest_error(controlled) < 0.5 * largest_error(fixed), (
        largest_error(controlled), largest_error(fixed))


@pytest.mark.slow
def test_changing_h_keeps_second_order_and_energy():
    """Steps of h drawn from [0.5, 1.5] h_0, and one step in 50 of h_0 / 2400 (a rejected
    step's retry, a step cut to an output time): the state does not depend on the next h, so
    the chain's angles and its energy stay second order in h_0 (measured falls per
    halving: the angles 3.8x and 5.5x, the energy 4.1x and 4.5x) and no energy comes from
    the short steps (6.3e-4 J at most at h_0 = 1e-3)."""
    errors, energies = [], []
    for h0 in (1e-3, 5e-4, 2.5e-4):
        stepper = nd.Stepper(chain.build(2), h=BOUNDS, scheme="midpoint")
        rng = np.random.default_rng(1)
        k, drift = 0, 0.0
        while stepper.t < 1.0 - 1e-12:
            h = h0 / 2400 if k % 50 == 49 else h0 * rng.uniform(0.5, 1.5)
            stepper.step(min(stepper.t + h, 1.0))
            energy = float(stepper.cs.kinetic(stepper.v)) + float(
                stepper.cs.potential(stepper.t, stepper.q, stepper.z[:stepper.cs.n_history]))
            drift = max(drift, abs(energy))         # the chain starts at rest at zero energy
            k += 1
        errors.append(_chain_error(stepper.result()))
        energies.append(drift)
    errors, energies = np.array(errors), np.array(energies)
    assert np.all(errors[:-1] / errors[1:] > 3.5), errors
    assert np.all(energies[:-1] / energies[1:] > 3.5) and energies[0] < 2e-3, energies


def test_stepper_loop_equals_simulate():
    """A ``Stepper.step(t_end)`` loop takes the steps ``simulate`` takes (each call one step:
    the second step of a checked pair waits for the next call)."""
    res = _run(chain.build(2), BOUNDS, t_end=0.2, rtol=1e-4)
    stepper = nd.Stepper(chain.build(2), h=BOUNDS, scheme="midpoint", rtol=1e-4)
    times = [stepper.step(0.2).t for _ in range(len(res.t) - 1)]
    assert np.array_equal(times, res.t[1:])
    assert np.array_equal(stepper.q, res.q[-1]) and np.array_equal(stepper.v, res.v[-1])


def test_rtol_lands_on_output_times_and_rests():
    """Output times are met exactly; a body at rest without gravity takes h_max."""
    res = _run(chain.build(2), BOUNDS, t_end=0.3, rtol=1e-4, t_eval=[0.1, 0.25, 0.3])
    assert np.array_equal(res.t, [0.0, 0.1, 0.25, 0.3])
    s = nd.System(gravity=(0.0, 0.0, 0.0))
    s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
    res = _run(s, (1e-4, 1e-2), t_end=0.1, rtol=1e-6)
    assert res.success and res.info["error_control"]["h_range"][1] == pytest.approx(1e-2)


def test_rtol_refusals_all_at_once():
    """rtol needs scheme "midpoint" (the default) and bounds; a bad rtol or atol is named."""
    with pytest.raises(nd.ModelError) as err:
        nd.Stepper(chain.build(2), h=1e-3, rtol=1e-4, scheme="euler")
    text = str(err.value)
    assert "needs scheme 'midpoint', got 'euler'" in text and "needs bounds h = (h_min, h_max)" in text
    with pytest.raises(nd.ModelError) as err:
        nd.Stepper(chain.build(2), h=1e-3, rtol=1e-4)
    assert "needs bounds h = (h_min, h_max)" in str(err.value)
    assert "scheme" not in str(err.value)
    with pytest.raises(nd.ModelError, match="rtol chooses h itself"):
        nd.Stepper(chain.build(2), h=BOUNDS, scheme="midpoint", rtol=1e-4, step_control="adaptive")
    with pytest.raises(nd.ModelError, match="step_control 'error' needs rtol"):
        nd.Stepper(chain.build(2), h=BOUNDS, scheme="midpoint", step_control="error")
    with pytest.raises(nd.ModelError) as err:
        nd.StepperSettings(rtol=2.0, atol=-1.0)
    assert "rtol must be None or a number in (0, 1)" in str(err.value)
    assert "atol must be >= 0" in str(err.value)


@pytest.mark.slow
def test_rtol_steps_through_a_penalty_impact():
    """A contact element's force grows from zero with the penetration: step doubling shortens
    h through the impact (Lankarani-Nikravesh, e = 0.75, contact ~5 ms), and the exit speed
    converges to scipy's as rtol shrinks, within 0.2 rtol of it."""
    law = nd.LankaraniNikravesh(5e6, 1.5, 0.75)
    reference = _exit_speed(law, rtol=1e-11)
    errors = []
    for rtol in (1e-3, 1e-5):
        res = _run(_slider(law=law), (1e-8, 2e-3), t_end=0.03, rtol=rtol)
        assert res.success, res.message
        errors.append(abs(-res.velocity("slider")[-1, 0] - reference) / reference)
        assert errors[-1] < 0.2 * rtol
        assert np.diff(res.t).min() < 2e-4 and np.diff(res.t).max() == pytest.approx(2e-3)
    assert errors[1] < errors[0] / 20


@pytest.mark.slow
@pytest.mark.parametrize("gravity", [(0, 0, -9.81), (0, 0, 0), (9.81, 0, 0)])
def test_rtol_keeps_an_elastic_stop_energy(gravity):
    """A Hertz stop hit at 1 m/s by a heavy (100 kg) or light (0.01 kg) slider, any gravity
    along or across: the energy-consistent step keeps the energy to round-off through the
    error-controlled steps; without gravity along the slide it rebounds at the impact
    speed (an elastic law's closed form)."""
    for mass in (100.0, 0.01):
        law = nd.Hertz(1e7 * mass)
        res = _run(_slider(law=law, mass=mass, gravity=gravity), (1e-8, 1e-3), t_end=0.02,
                   rtol=1e-5)
        assert res.success, res.message
        assert abs(res.energy[-1] - res.energy[0]) <= 1e-9 * (0.5 * mass + mass * 9.81 * 0.02)
        if gravity[0] == 0:
            assert res.velocity("slider")[-1, 0] == pytest.approx(-1.0, rel=1e-4)


def test_rtol_refuses_gaps_naming_the_joints():
    """A clearance joint's gaps (velocity jumps at impacts) are refused by name; its penalty
    version is taken."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the initial projection's note
        with pytest.raises(nd.ModelError, match=r"clearance joints \['B'\]"):
            nd.Stepper(slider_crank.build(spherical_clearance=1e-4), h=BOUNDS, rtol=1e-4)
        nd.Stepper(slider_crank.build(spherical_clearance=1e-4, model="penalty"), h=BOUNDS,
                   rtol=1e-4)
