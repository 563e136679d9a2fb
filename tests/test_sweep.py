"""nd.sweep: the table against runs made one by one with nd.simulate, failures as rows,
process pools and dask giving the same table bit for bit, arguments refused before running."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import casadi as ca
import numpy as np
import pandas as pd
import pytest

import nlpdyn as nd
from problems import pendulum

cloudpickle = pytest.importorskip("cloudpickle")
# this module's functions travel by value, as those of a script or notebook (__main__) do
cloudpickle.register_pickle_by_value(sys.modules[__name__])

GRID = {"length": [0.5, 1.0], "angle0": [0.0, 0.3]}
T_END, H = 0.03, 1e-3


def metrics(res):
    return {"angle_end": pendulum.angle(res)[-1], "energy_end": res.energy[-1],
            "steps": len(res.h)}


def builder(length, angle0, kind="ok"):
    """A pendulum; ``kind`` "raises" (the builder fails), "invalid" (simulate refuses the
    model), "fails" (a load NaN after t = 0: the run ends with success=False)."""
    if kind == "raises":
        raise RuntimeError(f"no pendulum of length {length}")
    s = pendulum.build(length=length, angle0=angle0)
    if kind == "invalid":
        s.add_joint(nd.Revolute(s.ground, s.body("bob"), point=(0, 0, 0), axis=(0, 0, 0)))
    if kind == "fails":
        bad = nd.PointForce(s.body("bob"), force=lambda t, st: ca.vertcat(0, 0, ca.sqrt(-t)),
                            name="bad")
        bad.evaluation = "implicit"
        s.add_force(bad)
    return s


def _without_wall_time(table):
    return table.drop(columns="wall_time")


@pytest.fixture(scope="module")
def in_process():
    return nd.sweep(pendulum.build, GRID, t_end=T_END, h=H, metrics=metrics, progress=False)


def test_in_process_table_equals_runs_one_by_one(in_process):
    """Rows in grid order (last name fastest), each equal bit for bit to nd.simulate run
    directly with the same parameters."""
    assert list(in_process.columns) == ["length", "angle0", "success", "message", "wall_time",
                                        "angle_end", "energy_end", "steps"]
    assert in_process[["length", "angle0"]].values.tolist() == [[0.5, 0.0], [0.5, 0.3],
                                                                 [1.0, 0.0], [1.0, 0.3]]
    for _, row in in_process.iterrows():
        res = nd.simulate(pendulum.build(length=row.length, angle0=row.angle0), t_end=T_END,
                          h=H, progress=False)
        assert row.success and row.message == res.message
        assert row.wall_time > 0
        assert row.angle_end == pendulum.angle(res)[-1]
        assert row.energy_end == res.energy[-1] and row.steps == len(res.h) == 30


def test_process_pool_gives_the_same_table_bit_for_bit(in_process):
    with ProcessPoolExecutor(2) as pool:
        table = nd.sweep(pendulum.build, GRID, t_end=T_END, h=H, metrics=metrics,
                         executor=pool, progress=False)
    pd.testing.assert_frame_equal(_without_wall_time(table), _without_wall_time(in_process),
                                  check_exact=True)


@pytest.mark.parametrize("parallel", [False, True], ids=["in_process", "process_pool"])
def test_failing_points_are_rows_and_the_sweep_goes_on(parallel):
    def broken_metrics(res):
        if res.position("bob")[0, 0] > 0.9:
            raise ZeroDivisionError("metric undefined")
        return metrics(res)

    grid = {"length": [0.5, 1.0], "angle0": [0.0],
            "kind": ["ok", "raises", "invalid", "fails"]}
    with ProcessPoolExecutor(2) if parallel else _nothing() as pool:
        table = nd.sweep(builder, grid, t_end=T_END, h=H, metrics=broken_metrics,
                         executor=pool, progress=False, max_retries=0)
    assert len(table) == 8
    by = {(r.length, r.kind): r for r in table.itertuples()}
    assert by[0.5, "ok"].success and by[0.5, "ok"].steps == 30
    assert not by[1.0, "ok"].success                     # metrics raised, the run is fine
    assert by[1.0, "ok"].message == "reached t_end; metrics raised ZeroDivisionError: metric undefined"
    for length in (0.5, 1.0):
        raised = by[length, "raises"]
        assert not raised.success
        assert raised.message == f"builder raised RuntimeError: no pendulum of length {length}"
        assert np.isnan(raised.steps)
        invalid = by[length, "invalid"]
        assert not invalid.success and invalid.message.startswith("simulate raised ModelError")
        assert "axis" in invalid.message
        failed = by[length, "fails"]
        assert not failed.success and "t = 0" in failed.message
    assert by[0.5, "fails"].steps == 0                   # metrics of the partial result


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_save_dir_holds_each_point_and_the_table(tmp_path, in_process):
    """Each point's file loads back equal to the direct run; the table is beside them."""
    table = nd.sweep(pendulum.build, GRID, t_end=T_END, h=H, metrics=metrics, progress=False,
                     save_dir=tmp_path / "out")
    assert table["file"].tolist() == [f"point_{i}.npz" for i in range(4)]
    pd.testing.assert_frame_equal(_without_wall_time(table).drop(columns="file"),
                                  _without_wall_time(in_process), check_exact=True)
    on_disk = pd.read_csv(tmp_path / "out" / "sweep.csv")
    assert on_disk["file"].tolist() == table["file"].tolist()
    res = nd.simulate(pendulum.build(length=1.0, angle0=0.3), t_end=T_END, h=H, progress=False)
    loaded = nd.Result.load(tmp_path / "out" / table["file"][3])
    assert np.array_equal(loaded.q, res.q) and np.array_equal(loaded.t, res.t)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == \
        ["point_0.npz", "point_1.npz", "point_2.npz", "point_3.npz", "sweep.csv"]


def test_h_may_depend_on_the_point():
    table = nd.sweep(pendulum.build, {"length": [0.5, 1.0]}, t_end=T_END,
                     h=lambda length: 1e-3 * length / 0.5, metrics=metrics, progress=False)
    assert table["steps"].tolist() == [30, 15]


def test_one_bar_over_the_points(capsys):
    nd.sweep(pendulum.build, {"length": [0.5, 1.0]}, t_end=T_END, h=H, progress=True)
    err = capsys.readouterr().err
    assert "2/2" in err and "point" in err
    assert " s [" not in err                             # no run's own bar (unit "s")


def test_bad_arguments_are_refused_together_before_anything_runs(tmp_path):
    calls = []

    def counting(length):
        calls.append(length)
        return pendulum.build(length=length)

    with pytest.raises(ValueError) as err:
        nd.sweep(counting, {"length": [], "2x": [1.0], "success": [1], "mass": 3.0},
                 t_end=-1.0, h=(2e-3, 1e-3), metrics="energy", executor=object(),
                 progress="yes", step_contorl="nlp")
    text = str(err.value)
    for culprit in ("grid['length'] must be a non-empty list", "'2x' is not a Python identifier",
                    "'success' is taken by a column", "grid['mass'] must be a non-empty list",
                    "t_end must be", "h must be", "metrics must be callable",
                    "executor must have a submit method", "progress must be",
                    "unknown simulate options ['step_contorl']"):
        assert culprit in text
    with pytest.raises(ValueError, match="grid must be a non-empty dict"):
        nd.sweep(counting, {}, t_end=1.0, h=1e-3)
    with pytest.raises(ValueError, match="builder must be callable"):
        nd.sweep("pendulum", {"length": [1.0]}, t_end=1.0, h=1e-3)
    with pytest.raises(ValueError, match="builder cannot be called with the grid's parameters"):
        nd.sweep(counting, {"length": [1.0], "mass": [1.0]}, t_end=1.0, h=1e-3)
    with pytest.raises(ValueError, match="form must be one of"):
        nd.sweep(counting, {"length": [1.0]}, t_end=1.0, h=1e-3, form="sideways")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is not a directory"):
        nd.sweep(counting, {"length": [1.0]}, t_end=1.0, h=1e-3, save_dir=tmp_path / "file")
    assert calls == []


def test_ctrl_c_stops_an_in_process_sweep():
    """simulate returns at Ctrl-C with a partial result; the sweep does not go on to the
    next point."""
    built = []

    def counting(length):
        built.append(length)
        return pendulum.build(length=length)

    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="point 0"):
            nd.sweep(counting, {"length": [0.5, 1.0]}, t_end=600.0, h=H, progress=False)
    finally:
        timer.cancel()
    assert built == [0.5]


@pytest.mark.slow
def test_dask_local_cluster_gives_the_process_pool_table(in_process):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        table = nd.sweep(pendulum.build, GRID, t_end=T_END, h=H, metrics=metrics,
                         executor=client.get_executor(), progress=False)
    pd.testing.assert_frame_equal(_without_wall_time(table), _without_wall_time(in_process),
                                  check_exact=True)


@pytest.mark.slow
def test_builder_and_metrics_of_a_script_run_on_spawned_workers(tmp_path):
    """Functions of __main__ reach workers that never imported the script (spawn)."""
    script = tmp_path / "study.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        import nlpdyn as nd

        def build(length):
            s = nd.System(gravity=(0, 0, -9.81))
            bob = s.add_body("bob", 1.0, (1e-6,) * 3, position=(length, 0, 0))
            s.add_joint(nd.Revolute(s.ground, bob, point=(0, 0, 0), axis=(0, 1, 0)))
            return s

        def final_x(res):
            return {"x": res.position("bob")[-1, 0]}

        if __name__ == "__main__":
            grid = {"length": [0.5, 1.0]}
            with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
                table = nd.sweep(build, grid, t_end=0.01, h=1e-3, metrics=final_x,
                                 executor=pool, progress=False)
            alone = nd.sweep(build, grid, t_end=0.01, h=1e-3, metrics=final_x, progress=False)
            assert table["success"].all(), table["message"].tolist()
            assert table["x"].tolist() == alone["x"].tolist()
            print("ok")
    """))
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
