"""Cost per step of every step-size mode and solver on the ideal pendulum and slider-crank,
timed from outside the step.

Per case and mode: median and p90 of ``Stepper.step()`` timed around each call from Python
(after 20 warm-up steps; construction excluded), the whole ``simulate()`` of a 2 s run per
step (construction and result assembly included), solver work per step (IPOPT iterations;
fixed-h solves for the seed's scheme by bisection; 0 for the closed form; nan where a QP
plugin inside a fused call reports none), and how many solvers the run built.

    python benchmarks/bench_steps.py            # 2000 steps per mode
    python benchmarks/bench_steps.py --steps 500
"""
from __future__ import annotations

import sys
from pathlib import Path
import argparse
import time

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import pendulum, slider_crank  # noqa: E402

MODES = [
    ("fixed, direct (default)", 1e-3, {}),
    ("fixed, qp qpoases", 1e-3, dict(solver="qp", qp_solver="qpoases")),
    ("fixed, qp proxqp", 1e-3, dict(solver="qp", qp_solver="proxqp")),
    ("fixed, qp daqp", 1e-3, dict(solver="qp", qp_solver="daqp")),
    ("fixed, ipopt (Gauss)", 1e-3, dict(solver="ipopt")),
    ("fixed, ipopt (explicit)", 1e-3, dict(form="explicit")),
    ("adaptive [1e-4, 1e-3]", (1e-4, 1e-3), dict(step_control="adaptive")),
    ("nlp [1e-4, 1e-3] (seed)", (1e-4, 1e-3), dict(step_control="nlp")),
    ("nlp [1e-4, 1e-3] by IPOPT", (1e-4, 1e-3), dict(step_control="nlp", nlp_method="ipopt")),
    ("nlp explicit [1e-4, 1e-3]", (1e-4, 1e-3), dict(step_control="nlp", form="explicit")),
]


def measure(build, h, options, n_steps):
    stepper = nd.Stepper(build(), h=h, **options)
    for _ in range(20):                         # warm up (builds happen here)
        stepper.step()
    walls, iters = [], []
    for _ in range(n_steps):
        tic = time.perf_counter()
        info = stepper.step()
        walls.append(time.perf_counter() - tic)
        iters.append(info.iterations)
    iters = np.array(iters)
    tic = time.perf_counter()
    res = nd.simulate(build(), t_end=2.0, h=h, progress=False, **options)
    simulate_ms = 1e3 * (time.perf_counter() - tic) / res.info["run"]["n_steps"]
    walls = 1e3 * np.array(walls)
    return {"median_ms": np.median(walls), "p90_ms": np.percentile(walls, 90),
            "simulate_ms": simulate_ms,
            "iterations": iters[iters >= 0].mean() if np.any(iters >= 0) else float("nan"),
            "builds": stepper.program.build_count}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    cases = [("pendulum", pendulum.build), ("slider-crank", slider_crank.build)]
    header = (f"{'case':<13} {'mode':<27} {'median ms':>9} {'p90 ms':>8} {'simulate ms':>11} "
              f"{'iters':>6} {'builds':>6}")
    print("Stepper.step() timed from outside; 'simulate ms': a whole 2 s simulate() per step")
    print(header)
    print("-" * len(header))
    for case, build in cases:
        for label, h, options in MODES:
            r = measure(build, h, options, args.steps)
            print(f"{case:<13} {label:<27} {r['median_ms']:9.4f} {r['p90_ms']:8.4f} "
                  f"{r['simulate_ms']:11.4f} {r['iterations']:6.2f} {r['builds']:6d}", flush=True)


if __name__ == "__main__":
    main()
