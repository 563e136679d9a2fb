"""jit="auto" (the default) against the interpreter (``jit=False``), whole ``simulate()``
calls as a user runs them: short runs, which "auto" must leave alone, and long ones, where
it builds the step's functions in a process of its own and switches to them mid-run.

Per case and column, the ``simulate()`` call's process CPU and wall time (the build's own
process runs beside it: its CPU is not in the run's, its effect on the run's wall time is),
each measurement in a process of its own, the columns interleaved and repeated; medians.
Columns: ``jit=False``; "auto" with an empty cache (cold: a long run builds); "auto" with
the libraries in the cache (warm: a second run of the model).

Cases: the stop pendulum (1 kg bar on a revolute, Hertz ``RotationStop`` k = 1e4), the
IFToMM slider-crank (CASES.md #5), the bushing chain with 16 links (``problems/chain.py``,
1e5 N/m, 1e2 N m/rad), h = 1e-3.

    python benchmarks/jit_auto.py [--repeat 3] [--quick] [--only "slider-crank, 20 s" ...]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
CASES = {"stop pendulum, 0.2 s": ("stop", 0.2), "stop pendulum, 20 s": ("stop", 20.0),
         "slider-crank, 1 s": ("crank", 1.0), "slider-crank, 20 s": ("crank", 20.0),
         "bushing chain N = 16, 0.2 s": ("bushing", 0.2),
         "bushing chain N = 16, 30 s": ("bushing", 30.0)}
QUICK = ("stop pendulum, 0.2 s", "stop pendulum, 20 s", "slider-crank, 1 s")


def build(kind):
    import nlpdyn as nd
    sys.path.insert(0, str(HERE.parents[1]))
    from problems import chain, slider_crank
    if kind == "stop":
        s = nd.System(gravity=(0, 0, -9.81))
        bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0))
        hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0),
                                        name="hinge"))
        s.add_force(nd.RotationStop(hinge, -1.0, 1.0, nd.Hertz(1e4), name="stop"))
        return s
    if kind == "crank":
        return slider_crank.build()
    return chain.build(16, bushing=(1e5, 1e2))


def measure(kind, t_end, jit):
    """(CPU s, wall s) of the simulate() call, and when it switched to compiled steps."""
    import nlpdyn as nd
    warnings.simplefilter("ignore")
    system = build(kind)
    cpu, wall = time.process_time(), time.perf_counter()
    res = nd.simulate(system, t_end, h=1e-3, progress=False, jit=jit)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert res.success, res.message
    record = res.info.get("jit") or {}
    return cpu, wall, (record.get("switched") or [None])[-1]


def _run(args, cache):
    out = subprocess.run([sys.executable, str(HERE), "--measure", json.dumps(args)],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "NLPDYN_CACHE": cache})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="three cases")
    parser.add_argument("--only", nargs="+", choices=list(CASES), help="these cases")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*json.loads(args.measure))))
        return
    print(f"{'case':>28} {'jit=False':>14} {'auto, cold':>14} {'auto, warm':>14} "
          f"{'cold / False':>13} {'warm / False':>13} {'switched at':>12}")
    print(f"{'':>28} {'CPU / wall s':>14} {'CPU / wall s':>14} {'CPU / wall s':>14} "
          f"{'CPU / wall':>13} {'CPU / wall':>13} {'(cold) t s':>12}")
    for name, (kind, t_end) in CASES.items():
        if (args.quick and name not in QUICK) or (args.only and name not in args.only):
            continue
        rows = {"off": [], "cold": [], "warm": []}
        switched = []
        with tempfile.TemporaryDirectory() as warm:
            _run([kind, 0.05, True], warm)          # the libraries, built before
            for _ in range(args.repeat):
                rows["off"].append(_run([kind, t_end, False], warm)[:2])
                with tempfile.TemporaryDirectory() as cold:
                    cpu, wall, at = _run([kind, t_end, "auto"], cold)
                    rows["cold"].append((cpu, wall))
                    switched.append(np.nan if at is None else at)
                rows["warm"].append(_run([kind, t_end, "auto"], warm)[:2])
        off, cold, hot = (np.median(np.array(rows[k]), axis=0) for k in ("off", "cold", "warm"))
        at = np.nanmedian(switched) if np.isfinite(switched).any() else None
        print(f"{name:>28} {off[0]:6.2f} / {off[1]:5.2f} {cold[0]:6.2f} / {cold[1]:5.2f} "
              f"{hot[0]:6.2f} / {hot[1]:5.2f} {cold[0] / off[0]:6.2f} / {cold[1] / off[1]:4.2f} "
              f"{hot[0] / off[0]:6.2f} / {hot[1] / off[1]:4.2f} "
              f"{'-' if at is None else f'{at:.3g}':>12}", flush=True)


if __name__ == "__main__":
    main()
