"""nd.sweep on the 16 slider-crank clearance scenarios of seed 001 (CASES.md #5): 2 clearance
models x 2 joints (spherical B, revolute A) x 4 clearances, run in this process, on a
1-process and on a 2-process ProcessPoolExecutor.

Per setting: points, wall time of the sweep, speed-up against the in-process sweep, the sum
of the points' own wall times (build + simulate + metrics where they ran, the table's
``wall_time``), and the overhead per point, (sweep wall time x processes - sum of the points'
times) / points: what sending, starting workers and collecting costs beyond the work itself
(idle workers at the end of the sweep included). The tables of the three settings must agree
bit for bit (checked).

    python benchmarks/sweep_speedup.py                  # 5 s runs, as in the notebook
    python benchmarks/sweep_speedup.py --quick          # 0.05 s runs: checks the script
    python benchmarks/sweep_speedup.py --t-end 1.0
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import slider_crank

GRID = slider_crank.SWEEP_GRID
scenario, step = slider_crank.sweep_scenario, slider_crank.scenario_step


def metrics(res):
    return {"turns": slider_crank.turns(res), "energy_end": float(res.energy[-1])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=5.0, help="run length (s), default 5")
    parser.add_argument("--quick", action="store_true", help="0.05 s runs (checks the script)")
    args = parser.parse_args(argv)
    t_end = 0.05 if args.quick else args.t_end
    settings = [("in process", None, 1), ("1 process", 1, 1), ("2 processes", 2, 2)]
    rows, tables = [], {}
    for label, workers, processes in settings:
        pool = ProcessPoolExecutor(workers) if workers else None
        tic = time.perf_counter()
        try:
            table = nd.sweep(scenario, GRID, t_end=t_end, h=step, metrics=metrics,
                             executor=pool, progress=False)
            wall = time.perf_counter() - tic
        finally:
            if pool is not None:
                pool.shutdown()
        tables[label] = table
        points = len(table)
        work = float(table["wall_time"].sum())
        rows.append({"setting": label, "points": points, "failed": int((~table["success"]).sum()),
                     "wall [s]": wall, "sum of points [s]": work,
                     "overhead per point [s]": (wall * processes - work) / points})
    out = pd.DataFrame(rows)
    out["speed-up"] = out["wall [s]"].iloc[0] / out["wall [s]"]
    reference = tables["in process"].drop(columns="wall_time")
    same = all(t.drop(columns="wall_time").equals(reference) for t in tables.values())
    print(f"16 slider-crank scenarios, t_end = {t_end:g} s, {nd.__name__} {nd.__version__}")
    print(out.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"tables identical bit for bit: {same}")
    print(tables["2 processes"].drop(columns="message").to_string(index=False))
    if not same:
        raise SystemExit("the tables differ")


if __name__ == "__main__":
    main()
