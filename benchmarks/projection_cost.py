"""Cost of the post-step position projection against the number of bodies.

1. ``Stepper.step()`` timed from outside (median over the steps, after 10 warm-up steps),
   fixed h = 1e-3, with ``projection=True`` and without, on a chain of N revolute-jointed
   links (problems/chain.py) and on the same chain with revolute clearance joints
   (c = 0.1 mm: the projection onto {Phi = 0, g >= 0}, one QP per Gauss-Newton iteration).
   "in proj" is the mean time per step spent inside the projection calls the stepper makes;
   the rest of the on/off difference is the step program itself (with the projection on,
   start-of-step penetrations are held, which changes the contact iterations).
2. The projections alone from a perturbed state (each body moved by ~1e-5 m and rad, median
   of repeated calls): ``project_positions`` on the chain, ``GapProjector.project`` on the
   clearance chain after 30 steps (pins in contact) with qpOASES and ProxQP.
"growth" is the cost at the largest N over the cost at N = 8.

    python benchmarks/projection_cost.py
"""
from __future__ import annotations

import sys
from pathlib import Path
import time

import numpy as np

import nlpdyn as nd
import nlpdyn.stepper as stepper_module
from nlpdyn.projection import GapProjector, apply_increment, project_positions
from nlpdyn.step_nlp import _QP_OPTIONS
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import chain  # noqa: E402


class ProjectionTimer:
    """Accumulates the time spent in the projections the stepper calls."""

    def __init__(self):
        self.seconds = 0.0
        self._positions, self._gaps = stepper_module.project_positions, GapProjector.project

        def timed(f):
            def call(*args, **kwargs):
                tic = time.perf_counter()
                try:
                    return f(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - tic
            return call
        stepper_module.project_positions = timed(self._positions)
        GapProjector.project = timed(self._gaps)

    def close(self):
        stepper_module.project_positions, GapProjector.project = self._positions, self._gaps


def per_step(system, steps, projection, h=1e-3):
    """(median ms per ``Stepper.step()``, mean ms per step inside the projection)."""
    stepper = nd.Stepper(system, h=h, projection=projection)
    for _ in range(10):
        stepper.step()
    timer = ProjectionTimer()
    times = np.empty(steps)
    try:
        for i in range(steps):
            tic = time.perf_counter()
            stepper.step()
            times[i] = time.perf_counter() - tic
    finally:
        timer.close()
    return 1e3 * float(np.median(times)), 1e3 * timer.seconds / steps


def median_ms(call, repeats):
    call()
    times = np.empty(repeats)
    for i in range(repeats):
        tic = time.perf_counter()
        call()
        times[i] = time.perf_counter() - tic
    return 1e3 * float(np.median(times))


def growth(cost, sizes):
    return f"growth 8->{sizes[-1]}: " + ", ".join(
        f"{name} x{values[sizes[-1]] / values[8]:.1f}" for name, values in cost.items())


def stepper_table(title, sizes, build, steps):
    print(f"\n{title}: Stepper.step()")
    print(f"{'N':>4} {'off ms':>9} {'on ms':>9} {'in proj ms':>11}")
    cost = {"off": {}, "on": {}, "in proj": {}}
    for n in sizes:
        off, _ = per_step(build(n), steps(n), projection=False)
        on, inside = per_step(build(n), steps(n), projection=True)
        cost["off"][n], cost["on"][n], cost["in proj"][n] = off, on, inside
        print(f"{n:4d} {off:9.3f} {on:9.3f} {inside:11.3f}", flush=True)
    print(growth(cost, sizes))


def perturbed(stepper, rng):
    cs = stepper.cs
    return apply_increment(stepper.q, 1e-5 * rng.normal(size=cs.nv), cs.n_bodies)


def projection_table(sizes):
    print("\nprojections alone from a perturbed state (ms per call)")
    print(f"{'N':>4} {'chain: project_positions':>25} {'clearance: qpoases':>19} {'proxqp':>8}")
    cost = {"project_positions": {}, "qpoases": {}, "proxqp": {}}
    for n in sizes:
        rng = np.random.default_rng(0)
        ideal = nd.Stepper(chain.build(n), h=1e-3)
        q = perturbed(ideal, rng)
        cost["project_positions"][n] = median_ms(lambda: project_positions(ideal.cs, q, 0.0), 20)
        loose = nd.Stepper(chain.build(n, clearance=1e-4), h=1e-3)
        for _ in range(30):
            loose.step()
        q = perturbed(loose, rng)
        for plugin in ("qpoases", "proxqp"):
            projector = GapProjector(loose.cs, plugin, _QP_OPTIONS[plugin])
            cost[plugin][n] = median_ms(lambda: projector.project(q, loose.t, tol=1e-12,
                                                                  max_iter=50), 5)
        print(f"{n:4d} {cost['project_positions'][n]:25.3f} {cost['qpoases'][n]:19.3f} "
              f"{cost['proxqp'][n]:8.3f}", flush=True)
    print(growth(cost, sizes))


def main():
    stepper_table("revolute chain (ideal joints)", (2, 8, 16, 32, 64), chain.build,
                  lambda n: 200 if n <= 16 else 100)
    stepper_table("revolute clearance chain (c = 0.1 mm)", (2, 8, 16, 32),
                  lambda n: chain.build(n, clearance=1e-4), lambda n: 100 if n <= 8 else 40)
    projection_table((2, 8, 16, 32, 64))


if __name__ == "__main__":
    main()
