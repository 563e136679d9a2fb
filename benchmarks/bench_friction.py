"""Cost per step of Coulomb friction in clearance contacts (CASES.md #3 with ``friction=mu``).

The clearance pendulum of CASES.md #3 (``problems/clearance_pendulum.py``) with its pin's
``friction`` set to each coefficient given: median and p90 of ``Stepper.step()`` timed around
each call (construction excluded), mean QP solves per step (1 + contact iterations), retried
steps and the energy lost by t_end, the friction's share of it from the energy ledger.

    python benchmarks/bench_friction.py                      # mu = 0, 0.1, 0.3; h = 1e-3; 2 s
    python benchmarks/bench_friction.py --mu 0 0.2 --t-end 0.2 --h 2e-3
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import clearance_pendulum


def build(mu):
    return clearance_pendulum.build(friction=mu)


def measure(mu, h, t_end, **settings):
    build(mu)                                   # warm caches (imports, CasADi)
    stepper = nd.Stepper(build(mu), h, **settings)
    times, infos = [], []
    try:
        while stepper.t < t_end - 1e-12:
            tic = time.perf_counter()
            infos.append(stepper.step(t_end))
            times.append(time.perf_counter() - tic)
    except nd.StepFailure:
        t_end = stepper.t                       # the rest of the table up to the failure
        print(f"  mu = {mu:g}: a step failed at t = {t_end:.4f} s")
    res = nd.simulate(build(mu), t_end=t_end, h=h, progress=False, **settings)
    ledger = res.energy_ledger().iloc[-1]
    return {"mu": mu, "steps": len(times), "median_ms": 1e3 * np.median(times),
            "p90_ms": 1e3 * np.percentile(times, 90),
            "solves": 1 + np.mean([i.gap_iterations for i in infos]),
            "retried": sum(bool(i.retries) for i in infos),
            "energy_change": res.energy[-1] - res.energy[0],
            "friction_work": float(ledger.get("friction:pin", 0.0))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mu", type=float, nargs="+", default=[0.0, 0.1, 0.3])
    parser.add_argument("--h", type=float, default=1e-3)
    parser.add_argument("--t-end", type=float, default=2.0)
    parser.add_argument("--gap-iterations", type=int, default=None,
                        help="StepperSettings.gap_iterations (default: the settings' default)")
    args = parser.parse_args(argv)
    settings = {} if args.gap_iterations is None else {"gap_iterations": args.gap_iterations}
    print(f"CASES.md #3, fixed h = {args.h:g}, t_end = {args.t_end:g} s {settings or ''}")
    print(f"{'mu':>5} {'steps':>6} {'median ms':>10} {'p90 ms':>8} {'solves':>7} {'retried':>8} "
          f"{'dE (J)':>10} {'friction (J)':>13}")
    for mu in args.mu:
        r = measure(mu, args.h, args.t_end, **settings)
        print(f"{r['mu']:5.2f} {r['steps']:6d} {r['median_ms']:10.3f} {r['p90_ms']:8.3f} "
              f"{r['solves']:7.2f} {r['retried']:8d} {r['energy_change']:10.4f} "
              f"{r['friction_work']:13.4f}")


if __name__ == "__main__":
    main()
