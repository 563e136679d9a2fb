"""Seed 004 section 5: the trough with a kinematically excited skewed trough against the
closed form derived in ``problems/trough.py`` (our data)."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import trough as tr


@pytest.fixture(scope="module")
def runs():
    return {h: nd.simulate(tr.build(), t_end=tr.T_END, h=h, progress=False) for h in (1e-3, 5e-4)}


def test_modes_are_the_seeds(runs):
    """phi = [0; e1], phi_bar_k = [0; d] (eq. 5.4a), psi = [0; e1 - tan(alpha) e2],
    psi_bar_k = [0; e2 / cos(alpha)] (eq. 5.4b with its misprint corrected), global axes."""
    res = runs[1e-3]
    modes = res.joint_modes("trough")
    E = nd.PlanarTranslation(nd.Ground(), nd.Ground(), (0, 0, 0), (0, 0, 1)).frame()
    a = tr.ALPHA
    assert modes["excited"] == [0]
    assert np.allclose(E @ modes["free"][3:, 0], [1, 0, 0], atol=1e-15)
    assert np.allclose(E @ modes["constrained"][3:, 0], tr.direction(), atol=1e-15)
    assert np.allclose(E @ modes["dual"][3:, 0], [1, -np.tan(a), 0], atol=1e-14)
    assert np.allclose(E @ modes["dual"][3:, 1], [0, 1 / np.cos(a), 0], atol=1e-14)
    assert np.allclose(modes["dual"][:3, :2], 0)


@pytest.mark.parametrize("key", ["lambda", "lambda_bar_1", "actuator"])
def test_outputs_against_the_closed_form(runs, key):
    """lambda = F_e1, lambda_bar_1 and the actuator force: error C h, halving with h
    (measured at h = 1e-3: 2.5e-3, 2.2e-3 and 2.4e-3 of each one's amplitude per ms)."""
    errors = []
    for h, res in runs.items():
        assert res.success
        out = tr.outputs(res)
        expected = tr.closed_form(out["t"])[key]
        errors.append(np.abs(out[key] - expected).max())
        assert errors[-1] < 5 * h * np.abs(expected).max()
    assert 1.8 < errors[0] / errors[1] < 2.2


def test_path_against_the_closed_form(runs):
    """x1 (free, dynamic): C h (measured 2.5e-3 X0 per ms); x2 (prescribed at the position
    level): C h^2 (measured 0.43 h^2 a Omega^2, a quarter at half the step)."""
    h = 1e-3
    res = runs[h]
    expected = tr.closed_form(res.t)
    assert np.abs(res.position("sphere")[:, 0] - expected["x1"]).max() < 5 * h * tr.X0
    assert np.abs(res.position("sphere")[:, 1] - expected["x2"]).max() \
        < h**2 * tr.AMPLITUDE * tr.RATE**2


def test_no_constraint_force_along_the_free_mode(runs):
    """phi^T A_z = 0 (seed eq. 3.32): the joint and the actuator alone carry nothing along e1,
    though the excited mode d has a component along e1 (seed Fig. 9)."""
    res = runs[1e-3]
    alone = res.joint_forces("trough")["applied"][:, 0]
    scale = np.abs(tr.outputs(res)["lambda_bar_1"]).max()
    assert np.abs(alone).max() < (1e-12 + 4 * res.stats.norm_error.max()) * scale
