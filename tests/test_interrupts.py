"""Ctrl-C during simulate() keeps a consistent partial result (issue 12)."""
import os
import signal
import threading

import numpy as np
import pytest

import nlpdyn as nd
from problems import clearance_pendulum, slider_crank


def _interrupted(build, delays, **options):
    """simulate() with SIGINT sent to this process after each of ``delays`` (s), counted from
    the first step (a SIGINT during the set-up, before any step, is Python's own
    KeyboardInterrupt: there is no trajectory yet to keep)."""
    timers = [threading.Timer(d, os.kill, (os.getpid(), signal.SIGINT)) for d in delays]
    system = build()
    step = nd.Stepper.step

    def first_step_starts_the_timers(self, *args, **kwargs):
        for timer in timers:
            if not timer.is_alive() and not timer.finished.is_set():
                timer.start()
        return step(self, *args, **kwargs)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(nd.Stepper, "step", first_step_starts_the_timers)
            return nd.simulate(system, t_end=60.0, progress=False, **options)
    finally:
        for timer in timers:
            timer.cancel()


def _assert_consistent(res):
    n = len(res.t)
    assert not res.success and res.message.startswith("interrupted at t = ")
    assert float(res.message.split("=")[1]) == pytest.approx(res.t[-1], rel=1e-8)   # printed to 9 digits
    assert res.q.shape[0] == res.v.shape[0] == len(res.energy) == n
    assert np.all(np.diff(res.t) > 0)
    ledger = res.energy_ledger()
    assert len(ledger) == n and res.info["run"]["n_steps"] == n - 1
    # the ledger closes up to the last recorded step: nothing of the interrupted step leaks in
    closure = ledger.total - ledger.total.iloc[0] - ledger.filter(like="work:").sum(axis=1) \
        - ledger.filter(like="impact:").sum(axis=1) - ledger.filter(like="contact:").sum(axis=1) \
        - ledger.residual
    assert np.abs(closure).max() <= 1e-10 * max(1.0, np.abs(ledger.total).max())


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(50))
def test_ctrl_c_keeps_the_partial_result(seed):
    rng = np.random.default_rng(seed)
    build = (slider_crank.build, clearance_pendulum.build)[seed % 2]
    res = _interrupted(build, [0.3 + 0.4 * rng.random()], h=1e-3)
    _assert_consistent(res)
    assert res.t[-1] > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(50))
def test_a_second_ctrl_c_inside_a_step_still_keeps_it(seed):
    rng = np.random.default_rng(100 + seed)
    first = 0.3 + 0.4 * rng.random()
    res = _interrupted(clearance_pendulum.build, [first, first + 2e-5 * rng.random()],
                       h=(1e-3, 2e-3), step_control="nlp", nlp_method="ipopt")
    _assert_consistent(res)


def test_ctrl_c_is_restored_after_simulate():
    before = signal.getsignal(signal.SIGINT)
    nd.simulate(slider_crank.build(), t_end=0.01, h=1e-3, progress=False)
    assert signal.getsignal(signal.SIGINT) is before
