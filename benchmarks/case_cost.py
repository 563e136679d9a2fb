"""Cost per step of seed 003's programmed-motion case studies (problems/manipulator.py,
problems/rpsup.py), every variant.

Per case and variant (support rigid/flexible, link rigid/flexible, joints without/with LuGre
friction): bodies, steps, the whole ``simulate()`` wall time per step (result assembly
included, set-up excluded), the set-up time (building the system's functions and the step
program, the initial projection) separately, median ``Stepper`` step time from the run's
per-step stats, the largest path error and constraint violation. Friction variants are
skipped when ``nd.LuGreFriction`` is missing.

    python benchmarks/case_cost.py                       # 4 s, h = 1e-3, the seed's horizon
    python benchmarks/case_cost.py --t-end 0.05          # a quick check that it runs
    python benchmarks/case_cost.py --cases manipulator --h 5e-4
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import manipulator, rpsup

CASES = {"manipulator": manipulator, "rpsup": rpsup}


def measure(module, variant, t_end, h):
    tic = time.perf_counter()
    system = module.build(*variant)
    built = time.perf_counter() - tic
    res = nd.simulate(system, t_end=t_end, h=h, progress=False)
    steps = res.stats.n_steps
    stepping = res.info["wall_time"] - res.info["setup_time"]
    return {"bodies": len(res.body_names), "steps": steps, "success": res.success,
            "ms_per_step": 1e3 * stepping / max(steps, 1),
            "setup_s": built + res.info["setup_time"],
            "median_step_ms": 1e3 * float(np.median(res.stats.wall_time)),
            "path_error": float(module.path_error(res).max()),
            "violation": float(module.constraint_violation(res).max())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--t-end", type=float, default=4.0)
    parser.add_argument("--h", type=float, default=1e-3)
    args = parser.parse_args(argv)
    print(f"t_end = {args.t_end} s, fixed h = {args.h} s, nlpdyn {nd.__version__}")
    header = (f"{'case':12s} {'variant':16s} {'bodies':>6s} {'steps':>6s} {'ms/step':>8s} "
              f"{'step med':>8s} {'set-up s':>8s} {'path err':>9s} {'violation':>9s}")
    print(header)
    print("-" * len(header))
    for case in args.cases:
        module = CASES[case]
        for variant in module.VARIANTS:
            name = module.variant_name(*variant)
            if variant[2] and not module.friction_available():
                print(f"{case:12s} {name:16s} (no nd.LuGreFriction: skipped)")
                continue
            row = measure(module, variant, args.t_end, args.h)
            flag = "" if row["success"] else "  FAILED"
            print(f"{case:12s} {name:16s} {row['bodies']:6d} {row['steps']:6d} "
                  f"{row['ms_per_step']:8.3f} {row['median_step_ms']:8.3f} {row['setup_s']:8.3f} "
                  f"{row['path_error']:9.2e} {row['violation']:9.2e}{flag}")


if __name__ == "__main__":
    main()
