"""Per-step cost of every step-size mode and solver on the ideal pendulum and slider-crank.

Prints, per case and mode: median and p90 wall time per step (ms), mean IPOPT iterations
(0: closed form, -1/nan: not reported by the QP plugin), and where the time goes: inside
the solve call (for "direct" this one CasADi call also evaluates the end-of-step checks),
inside the separate end-of-step CasADi call, and Python overhead (the rest of
Stepper.step: checks, bookkeeping).

    python benchmarks/bench_steps.py            # 2000 steps per mode
    python benchmarks/bench_steps.py --steps 500
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import nlpdyn as nd
from problems import pendulum, slider_crank

MODES = [
    ("fixed, direct (default)", 1e-3, {}),
    ("fixed, qp qpoases", 1e-3, dict(solver="qp", qp_solver="qpoases")),
    ("fixed, qp qrqp", 1e-3, dict(solver="qp", qp_solver="qrqp")),
    ("fixed, qp daqp", 1e-3, dict(solver="qp", qp_solver="daqp")),
    ("fixed, ipopt (Gauss)", 1e-3, dict(solver="ipopt")),
    ("fixed, ipopt (explicit)", 1e-3, dict(form="explicit")),
    ("adaptive [1e-4, 1e-3]", (1e-4, 1e-3), dict(step_control="adaptive")),
    ("nlp [1e-4, 1e-3] (seed)", (1e-4, 1e-3), dict(step_control="nlp")),
    ("nlp explicit [1e-4, 1e-3]", (1e-4, 1e-3), dict(step_control="nlp", form="explicit")),
]


class Timer:
    """Accumulates wall time spent in wrapped callables."""

    def __init__(self):
        self.total = 0.0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            tic = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.total += time.perf_counter() - tic
        return timed


def measure(build, h, options, n_steps):
    stepper = nd.Stepper(build(), h=h, **options)
    solver_time, casadi_time = Timer(), Timer()
    program = stepper.program
    program.solve_direct = solver_time.wrap(program.solve_direct)
    program.solve_qp = solver_time.wrap(program.solve_qp)
    program.solve_nlp = solver_time.wrap(program.solve_nlp)
    program.finish = _wrap_fast(program.finish, casadi_time)
    program.prepare = _wrap_fast(program.prepare, casadi_time)
    for _ in range(20):                         # warm up (builds happen here)
        stepper.step()
    solver_time.total = casadi_time.total = 0.0
    walls, iters = [], []
    tic = time.perf_counter()
    for _ in range(n_steps):
        info = stepper.step()
        walls.append(info.wall_time)
        iters.append(info.iterations)
    total = time.perf_counter() - tic
    walls = np.array(walls) * 1e3
    iters = np.array(iters)
    solver_only = solver_time.total       # the "direct" solve includes its own finish
    return {
        "median_ms": np.median(walls), "p90_ms": np.percentile(walls, 90),
        "iterations": iters[iters >= 0].mean() if np.any(iters >= 0) else float("nan"),
        "solver_pct": 100 * solver_only / total,
        "casadi_pct": 100 * casadi_time.total / total,
        "python_pct": 100 * (total - solver_only - casadi_time.total) / total,
        "h_mean": stepper.t / (n_steps + 20),
        "builds": program.build_count,
    }


class _wrap_fast:
    """Times a FastFunction while keeping its attributes (function, names_out)."""

    def __init__(self, fast, timer):
        self._fast, self._timer = fast, timer
        self.function, self.names_out = fast.function, fast.names_out

    def __call__(self, *args):
        tic = time.perf_counter()
        try:
            return self._fast(*args)
        finally:
            self._timer.total += time.perf_counter() - tic


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    cases = [("pendulum", pendulum.build), ("slider-crank", slider_crank.build)]
    header = (f"{'case':<13} {'mode':<27} {'median ms':>9} {'p90 ms':>8} {'iters':>6} "
              f"{'solver%':>8} {'casadi%':>8} {'python%':>8} {'builds':>6}")
    print(header)
    print("-" * len(header))
    for case, build in cases:
        for label, h, options in MODES:
            r = measure(build, h, options, args.steps)
            print(f"{case:<13} {label:<27} {r['median_ms']:9.4f} {r['p90_ms']:8.4f} "
                  f"{r['iterations']:6.2f} {r['solver_pct']:8.1f} {r['casadi_pct']:8.1f} "
                  f"{r['python_pct']:8.1f} {r['builds']:6d}")


if __name__ == "__main__":
    main()
