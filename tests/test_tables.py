"""Result.to_dataframe and to_csv: the columns are the named lookups' arrays, and CSV round-trips."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import nlpdyn as nd


@pytest.fixture(scope="module")
def res():
    """Two bodies: a bar on a clearance pin, a block hinged to it by a driven revolute, a
    spring from the ground."""
    s = nd.System(gravity=(0, -9.81, 0))
    bar = s.add_body("bar", mass=1.0, inertia=(2e-4, 0.0834, 0.0834), position=(0.5, 0, 0))
    block = s.add_body("block", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(1.2, 0, 0))
    s.add_joint(nd.RevoluteClearance(s.ground, bar, (0, 0, 0), (0, 0, 1), 0.01, 1e-4, 0.02,
                                     1e-4, name="pin"))
    hinge = s.add_joint(nd.Revolute(bar, block, (1, 0, 0), (0, 0, 1), name="hinge"))
    s.add_joint(nd.RotationDriver(hinge, angle=lambda t: 2 * t))
    s.add_force(nd.SpringDamper(s.ground, (1, 0.5, 0), bar, (1, 0, 0), stiffness=50.0,
                                damping=0.5, name="spring"))
    return nd.simulate(s, t_end=0.03, h=1e-3, progress=False)


def _lookups(res):
    """Expected column -> array, from the named lookups (per-step arrays after a NaN row)."""
    nan_row = lambda a: np.vstack([np.full((1,) + a.shape[1:], np.nan), a])   # noqa: E731
    out = {"t": res.t, "h": nan_row(res.h[:, None])[:, 0], "energy": res.energy,
           "kinetic_energy": res.kinetic_energy, "potential_energy": res.potential_energy}
    for b in ("bar", "block"):
        for label, array in (("{}", res.position(b)), ("v{}", res.velocity(b)),
                             ("w{}", res.angular_velocity(b))):
            out.update({f"{b}." + label.format(c): array[:, k] for k, c in enumerate("xyz")})
        out.update({f"{b}.q{k}": res.orientation(b)[:, k] for k in range(4)})
    for j in ("pin", "hinge", "hinge_rotation"):
        force, torque = nan_row(res.reaction_force(j)), nan_row(res.reaction_torque(j))
        out.update({f"{j}.F{c}": force[:, k] for k, c in enumerate("xyz")})
        out.update({f"{j}.M{c}": torque[:, k] for k, c in enumerate("xyz")})
    for j, rows in (("hinge", 5), ("hinge_rotation", 1)):
        out.update({f"{j}.mu{k}": nan_row(res.multipliers(j))[:, k] for k in range(rows)})
    out.update({f"pin.gap{k}": res.gap("pin")[:, k] for k in range(4)})
    out.update({f"pin.lam{k}": res.contact_force("pin")[:, k] for k in range(4)})
    force, torque = nan_row(res.applied_force("spring")), nan_row(res.applied_torque("spring"))
    out.update({f"spring.F{c}": force[:, k] for k, c in enumerate("xyz")})
    out.update({f"spring.M{c}": torque[:, k] for k, c in enumerate("xyz")})
    for e in ("gravity", "spring"):
        out[f"{e}.work"], out[f"{e}.stored"] = res.element_work[e], res.element_potential[e]
    return out


def test_columns_are_the_lookups(res):
    df = res.to_dataframe()
    expected = _lookups(res)
    assert sorted(df.columns) == sorted(expected) and df.columns.is_unique
    assert len(df) == len(res.t)
    for name, array in expected.items():
        np.testing.assert_array_equal(df[name].to_numpy(), array, err_msg=name)
    assert np.isnan(df.loc[0, "pin.Fx"]) and df.loc[0, "pin.lam0"] == 0.0


def test_csv_round_trip(res, tmp_path):
    df = res.to_dataframe()
    path = res.to_csv(tmp_path / "run.csv")
    back = pd.read_csv(path)
    assert list(back.columns) == list(df.columns)
    np.testing.assert_allclose(back.to_numpy(), df.to_numpy(), rtol=1e-15, atol=0)
    assert list(tmp_path.iterdir()) == [path]


def test_failed_csv_write_keeps_the_old_file(res, tmp_path, monkeypatch):
    path = tmp_path / "run.csv"
    path.write_text("old")

    def fail(*args):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        res.to_csv(path)
    assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]
