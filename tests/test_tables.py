"""Result.to_dataframe, energy_ledger and to_csv: indexed by time, every column with its unit and
description, one naming scheme for both tables, old names still working with a warning, and
CSV files that round-trip with their units."""
from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd
import pytest

import nlpdyn as nd
import nlpdyn.tables
from nlpdyn.tables import read_csv


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
    """Expected column -> array, from the named lookups (per-step arrays after a NaN row),
    and the name each column had before (old -> new)."""
    nan_row = lambda a: np.vstack([np.full((1,) + a.shape[1:], np.nan), a])   # noqa: E731
    out = {"h": nan_row(res.h[:, None])[:, 0], "total": res.energy,
           "kinetic": res.kinetic_energy, "potential": res.potential_energy}
    old = {"energy": "total", "kinetic_energy": "kinetic", "potential_energy": "potential"}
    for b in ("bar", "block"):
        for label, array in (("{}", res.position(b)), ("v{}", res.velocity(b)),
                             ("w{}", res.angular_velocity(b))):
            out.update({label.format(c) + f":{b}": array[:, k] for k, c in enumerate("xyz")})
        out.update({f"q{k}:{b}": res.orientation(b)[:, k] for k in range(4)})
    for j in ("pin", "hinge", "hinge_rotation"):
        force, torque = nan_row(res.reaction_force(j)), nan_row(res.reaction_torque(j))
        out.update({f"F{c}:{j}": force[:, k] for k, c in enumerate("xyz")})
        out.update({f"M{c}:{j}": torque[:, k] for k, c in enumerate("xyz")})
    for j, rows in (("hinge", 5), ("hinge_rotation", 1)):
        out.update({f"mu{k}:{j}": nan_row(res.multipliers(j))[:, k] for k in range(rows)})
    out.update({f"gap{k}:pin": res.gap("pin")[:, k] for k in range(4)})
    out.update({f"lam{k}:pin": res.contact_force("pin")[:, k] for k in range(4)})
    force, torque = nan_row(res.applied_force("spring")), nan_row(res.applied_torque("spring"))
    out.update({f"F{c}:spring": force[:, k] for k, c in enumerate("xyz")})
    out.update({f"M{c}:spring": torque[:, k] for k, c in enumerate("xyz")})
    for e in ("gravity", "spring"):
        out[f"element_work:{e}"] = res.element_work[e]
        old[f"{e}.work"] = f"element_work:{e}"
    out["gravity"], out["stored:spring"] = (res.element_potential["gravity"],
                                            res.element_potential["spring"])
    old.update({"gravity.stored": "gravity", "spring.stored": "stored:spring"})
    for name in out:
        if ":" in name and not name.startswith(("element_work:", "stored:")):
            quantity, element = name.split(":")
            old[f"{element}.{quantity}"] = name
    return out, old


def test_columns_are_the_lookups(res):
    df = res.to_dataframe()
    expected, _ = _lookups(res)
    assert sorted(df.columns) == sorted(expected) and df.columns.is_unique
    assert len(df) == len(res.t)
    for name, array in expected.items():
        np.testing.assert_array_equal(df[name].to_numpy(), array, err_msg=name)
    assert np.isnan(df["Fx:pin"].iloc[0]) and df["lam0:pin"].iloc[0] == 0.0


@pytest.mark.parametrize("table", ["to_dataframe", "energy_ledger"])
def test_both_tables_are_indexed_by_time(res, table):
    df = getattr(res, table)()
    assert df.index.name == "t" and "t" not in df.columns
    np.testing.assert_array_equal(df.index.to_numpy(), res.t)
    for i in (0, 7, len(res.t) - 1):
        pd.testing.assert_series_equal(df.loc[res.t[i]], df.iloc[i])
    assert df.loc[0.01].equals(df.iloc[10])       # h = 1e-3 from t = 0: t[10] is 0.01
    window = df.loc[0.005:0.01]
    np.testing.assert_array_equal(window.index.to_numpy(), res.t[5:11])


@pytest.mark.parametrize("table", ["to_dataframe", "energy_ledger"])
def test_every_column_has_a_unit_and_a_description(res, table):
    df = getattr(res, table)()
    units, descriptions = df.attrs["units"], df.attrs["descriptions"]
    assert set(units) == set(descriptions) == {"t", *df.columns}
    assert all(isinstance(u, str) and u for u in units.values())
    assert all(isinstance(d, str) and len(d) > 5 for d in descriptions.values())
    assert units["t"] == "s"
    if table == "energy_ledger":
        assert set(units.values()) == {"s", "J"}
    else:
        expected = {"h": "s", "total": "J", "x:bar": "m", "q0:bar": "-", "vx:bar": "m/s",
                    "wz:block": "rad/s", "Fx:pin": "N", "Mz:hinge": "N m", "gap3:pin": "m",
                    "lam0:pin": "N", "Fy:spring": "N", "element_work:spring": "J",
                    "stored:spring": "J", "gravity": "J"}
        assert {name: units[name] for name in expected} == expected
        assert "axial gap at face 2" in descriptions["gap3:pin"]
        assert "radial gap at bore end 1" in descriptions["lam0:pin"]


def test_every_column_is_in_the_module_docstring(res):
    """The docstring's column tables name every kind of column either table has."""
    doc = nd.tables.__doc__
    for name in [*res.to_dataframe().columns, *res.energy_ledger().columns]:
        kind, _, element = name.partition(":")
        first = re.sub(r"\d+$", "0", kind)          # mu3 -> mu0
        pattern = f"``{name}``" if not element else f"``{first}:"
        assert pattern in doc, name


def test_one_name_one_meaning_in_both_tables(res):
    df, ledger = res.to_dataframe(), res.energy_ledger()
    shared = sorted(set(df.columns) & set(ledger.columns))
    assert shared == ["gravity", "kinetic", "stored:spring", "total"]
    for name in shared:
        np.testing.assert_array_equal(df[name].to_numpy(), ledger[name].to_numpy(), err_msg=name)
        assert df.attrs["units"][name] == ledger.attrs["units"][name]


def test_old_names_warn_and_return_the_same_data(res):
    df = res.to_dataframe()
    _, old = _lookups(res)
    assert len(old) == len(res.to_dataframe().columns) - 1       # all but h
    for before, now in old.items():
        with pytest.warns(FutureWarning, match=re.escape(f"{before!r} is now {now!r}")):
            column = df[before]
        pd.testing.assert_series_equal(column, df[now])
    with pytest.warns(FutureWarning, match="'t' is now the index"):
        t = df["t"]
    np.testing.assert_array_equal(t.to_numpy(), res.t)
    with pytest.warns(FutureWarning):
        pair = df[["t", "bar.x"]]
    assert list(pair.columns) == ["t", "x:bar"]
    np.testing.assert_array_equal(pair["t"].to_numpy(), res.t)
    with pytest.warns(FutureWarning):          # attribute access too, in both tables
        assert np.array_equal(df.energy, res.energy) and np.array_equal(df.t, res.t)
    with pytest.warns(FutureWarning):
        assert np.array_equal(res.energy_ledger().t, res.t)
    with pytest.raises(KeyError):
        df["bar.nothing"]


def test_csv_round_trip(res, tmp_path):
    for ledger in (False, True):
        df = res.energy_ledger() if ledger else res.to_dataframe()
        path = res.to_csv(tmp_path / "run.csv", ledger=ledger)
        header = path.read_text().splitlines()[0].split(",")
        assert header[0] == "t [s]"
        assert header[1:] == [f"{c} [{df.attrs['units'][c]}]" for c in df.columns]
        back = read_csv(path)
        assert back.index.name == "t" and list(back.columns) == list(df.columns)
        assert back.attrs["units"] == df.attrs["units"]
        np.testing.assert_array_equal(back.index.to_numpy(), res.t)
        np.testing.assert_allclose(back.to_numpy(), df.to_numpy(), rtol=1e-15, atol=0)
        plain = pd.read_csv(path, index_col=0)               # pandas alone: units in the names
        assert list(plain.columns) == header[1:]
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


def test_read_csv_is_a_public_name_imported_on_first_use():
    """``nd.read_csv`` (the results guide's name) is the tables' reader, and ``import nlpdyn``
    alone still leaves pandas unimported (tests/test_api.py)."""
    assert "read_csv" in nd.__all__ and nd.read_csv is read_csv
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        nd.no_such_name
