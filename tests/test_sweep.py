"""nd.sweep: the table against runs made one by one with nd.simulate, failures as rows,
process pools and dask giving the same table bit for bit, arguments refused before running."""
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import casadi as ca
import numpy as np
import pandas as pd
import pytest

import nlpdyn as nd
from nlpdyn.sweep import NOT_RUN
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
                 progress="yes", step_contorl="nlp", timeout=-1)
    text = str(err.value)
    for culprit in ("grid['length'] must be a non-empty list", "'2x' is not a Python identifier",
                    "'success' is taken by a column", "grid['mass'] must be a non-empty list",
                    "t_end must be", "h must be", "metrics must be callable",
                    "executor must have a submit method", "progress must be",
                    "unknown simulate options ['step_contorl']", "timeout must be a positive"):
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


def test_ctrl_c_returns_the_rows_done_in_process(tmp_path):
    """simulate returns at Ctrl-C with a partial result; the sweep does not go on to the
    next point, and returns (and writes) the table with it."""
    built = []

    def counting(length):
        built.append(length)
        return pendulum.build(length=length)

    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.warns(RuntimeWarning, match="sweep interrupted"):
            table = nd.sweep(counting, {"length": [0.5, 1.0]}, t_end=600.0, h=H,
                             progress=False, save_dir=tmp_path)
    finally:
        timer.cancel()
    assert built == [0.5]
    assert table.attrs["interrupted"] and table["success"].tolist() == [False, False]
    assert table["message"][0].startswith("interrupted")
    assert table["message"][1] == NOT_RUN
    on_disk = pd.read_csv(tmp_path / "sweep.csv")
    assert on_disk["message"].tolist() == table["message"].tolist()


def waiting(kind, flags=".", release=""):
    """A pendulum; ``kind`` "waits" (until the file ``release`` exists, after leaving a file
    in ``flags``), "sleeps" (a minute), "dies" (the process ends at once)."""
    if kind == "waits":
        Path(flags, f"started_{os.getpid()}_{threading.get_ident()}").touch()
        for _ in range(3000):
            if Path(release).exists():
                break
            time.sleep(0.02)
    if kind == "sleeps":
        time.sleep(60)
    if kind == "dies":
        os._exit(3)
    return pendulum.build(length=0.5)


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C raising KeyboardInterrupt, as in a terminal: a shell's background job starts
    with SIGINT ignored, and Python then leaves it so."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_with_a_process_pool_returns_at_once(tmp_path, ctrl_c_raises):
    """The points done are rows, the running ones (two, and up to three a ProcessPoolExecutor
    has queued for its workers) say interrupted, the others did not run; the sweep returns
    while points are still waiting (it did not wait for them)."""
    release = tmp_path / "release"
    grid = {"kind": ["ok", "ok"] + ["waits"] * 6, "flags": [str(tmp_path)],
            "release": [str(release)]}

    def interrupt_when_both_wait():
        while len(list(tmp_path.glob("started_*"))) < 2:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    with ProcessPoolExecutor(2) as pool:
        watcher = threading.Thread(target=interrupt_when_both_wait, daemon=True)
        watcher.start()
        with pytest.warns(RuntimeWarning, match="sweep interrupted"):
            table = nd.sweep(waiting, grid, t_end=T_END, h=H, executor=pool, progress=False,
                             metrics=metrics)
        returned_before_release = not release.exists()
        release.touch()
    assert returned_before_release and table.attrs["interrupted"]
    assert table["success"].tolist() == [True, True] + [False] * 6
    assert table["steps"][:2].tolist() == [30, 30]
    assert all(m.startswith("interrupted") for m in table["message"][2:4])
    assert all(m.startswith("interrupted") or m == NOT_RUN for m in table["message"][4:7])
    assert table["message"][7] == NOT_RUN


@pytest.mark.slow
def test_timeout_in_process_stops_a_point_and_the_sweep_goes_on():
    """A builder that sleeps and a run of 300 000 steps both end at the timeout."""
    grid = {"kind": ["sleeps", "ok", "slow"]}
    table = nd.sweep(waiting, grid, t_end=T_END, h=lambda kind: 1e-7 if kind == "slow" else H,
                     metrics=metrics, progress=False, timeout=1.5)
    assert table["success"].tolist() == [False, True, False]
    assert table["message"][0].startswith("timeout: ") and "stopped in builder" in table["message"][0]
    assert "stopped in simulate (interrupted at t = " in table["message"][2]
    assert table["steps"][1] == 30 and np.isnan(table["steps"][2])      # no metrics
    assert table["wall_time"][0] >= 1.5 and table["wall_time"][2] >= 1.5


@pytest.mark.slow
def test_timeout_on_a_process_pool_covers_metrics():
    def sleepy_metrics(res):
        if res.position("bob")[0, 0] > 0.9:
            time.sleep(60)
        return metrics(res)
    with ProcessPoolExecutor(2) as pool:
        table = nd.sweep(pendulum.build, {"length": [0.5, 1.0]}, t_end=T_END, h=H,
                         metrics=sleepy_metrics, executor=pool, progress=False, timeout=1.5)
    assert table["success"].tolist() == [True, False]
    assert table["message"][1].startswith("timeout: ") and "stopped in metrics" in table["message"][1]


@pytest.mark.slow
def test_timeout_on_threads_gives_up_waiting(tmp_path):
    """Nothing interrupts a worker thread: the sweep stops waiting for its point."""
    release = tmp_path / "release"
    with ThreadPoolExecutor(2) as pool:
        table = nd.sweep(waiting, {"kind": ["waits", "ok"], "flags": [str(tmp_path)],
                                   "release": [str(release)]},
                         t_end=T_END, h=H, executor=pool, progress=False, timeout=0.5)
        release.touch()
    assert table["success"].tolist() == [False, True]
    assert table["message"][0].startswith("timeout: no result 3 s after")


def test_a_dead_worker_fails_its_point_and_the_others_run_again():
    grid = {"kind": ["ok", "dies", "ok", "ok", "ok"]}
    with ProcessPoolExecutor(2) as pool:
        table = nd.sweep(waiting, grid, t_end=T_END, h=H, metrics=metrics, executor=pool,
                         progress=False)
    assert table["success"].tolist() == [True, False, True, True, True]
    assert table["message"][1].startswith("worker died: ")
    assert "BrokenProcessPool" in table["message"][1]
    assert table["steps"].tolist()[2:] == [30, 30, 30]


def test_a_metric_that_is_not_finite_fails_the_row():
    def partly_nan(res):
        length = np.linalg.norm(res.position("bob")[0])
        return {"x": math.nan if length > 0.9 else 1.0, "y": math.inf if length > 0.9 else 2}
    table = nd.sweep(pendulum.build, {"length": [0.5, 1.0]}, t_end=T_END, h=H,
                     metrics=partly_nan, progress=False)
    assert table["success"].tolist() == [True, False]
    assert table["message"][1] == ("reached t_end; metric 'x' is not finite (nan); "
                                   "metric 'y' is not finite (inf)")


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


def test_names_stay_importable_from_the_sweep_module():
    """The running of the points lives in nlpdyn.sweep_runner; what was imported from
    nlpdyn.sweep still is."""
    from nlpdyn import sweep_runner
    from nlpdyn.sweep import (COLUMNS, GRACE, INTERRUPTED, TABLE_NAME, TIMEOUT,  # noqa: F401
                              WORKER_DIED, sweep)
    assert sweep is nd.sweep and TIMEOUT is sweep_runner.TIMEOUT
