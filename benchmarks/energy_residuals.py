"""The energy ledger's discretisation columns of every case study at its default run.

For each problem of ``problems.PROBLEMS`` and each of its variants, the default run (the
command line's: t_end, h or (h_min, h_max)), and from its energy ledger, as shares of the
energy in play (the largest kinetic plus stored plus carried energy over the run, or the
range gravity's potential spans, whichever is larger):

- ``residual:potential``, the largest |value| over the run: what the force elements'
  discretisation adds or removes, with gravity's part of the first-order step: gravity's
  impulse h F meets the mean velocity in the kinetic energy and the end velocity in the
  potential, -h F.(v1 - v0) / 2 a step, -h/2 F.(v(t) - v(0)) summed at fixed h (bounded);
- ``elements``: ``residual:potential`` less that gravity term (summed step by step; the
  midpoint step has none);
- ``contact``: the largest |sum of the contact: columns| (sustained clearance contact: zero
  for frictionless sliding in the exact motion; jams are physics);
- ``smooth step``: the largest |residual:gyroscopic + ideal joints' work| (the first-order
  smooth step's own error, not a force element's).

    python benchmarks/energy_residuals.py [--only NAME ...] [--t-end-scale 1.0] [--scheme euler|midpoint]

With ``--scheme midpoint`` the runs take Moreau's midpoint step (variants it refused would be
listed as such; it takes every case study).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nlpdyn as nd  # noqa: E402
from nlpdyn.joints.ideal import Joint  # noqa: E402
from problems import PROBLEMS  # noqa: E402


def shares(res, system):
    """(energy in play J, residual:potential, contact, smooth step) as shares of it."""
    ledger = res.energy_ledger()
    stored = [c for c in ledger.columns if c.startswith("stored:")]
    carried = ledger["carried"].abs() if "carried" in ledger else 0.0
    in_play = float((ledger["kinetic"] + ledger[stored].sum(axis=1) + carried).max())
    if "gravity" in ledger:
        in_play = max(in_play, float(np.ptp(ledger["gravity"])))
    contact = ledger[[c for c in ledger.columns if c.startswith("contact:")]].sum(axis=1)
    ideal = [f"work:{r.name}" for r in system.compile().constraint_rows
             if isinstance(r.element, Joint)]
    smooth = ledger["residual:gyroscopic"] + ledger[ideal].sum(axis=1)
    worst = lambda x: float(np.abs(np.asarray(x, dtype=float)).max()) / in_play   # noqa: E731
    # gravity's part, step by step: -h_n / 2 F . (v_n+1 - v_n), summed (on a fixed h, the
    # bounded -h / 2 F . (v(t) - v(0)))
    h = np.diff(res.t)[:, None]
    g = np.asarray(system.gravity, dtype=float)
    gravity_term = np.concatenate([[0.0], np.cumsum(sum(
        -0.5 * b.mass * (h * np.diff(res.velocity(b.name), axis=0)) @ g for b in system.bodies))])
    if res.info.get("scheme") == "midpoint":
        gravity_term = 0.0      # the midpoint step moves by h times the mean velocity
    elements = worst(ledger["residual:potential"] - gravity_term)
    return in_play, worst(ledger["residual:potential"]), elements, worst(contact), worst(smooth)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="problem names (default: all)")
    parser.add_argument("--t-end-scale", type=float, default=1.0,
                        help="run this share of each default t_end")
    parser.add_argument("--scheme", default=None, choices=("euler", "midpoint"),
                        help="the time discretisation (default: the library's, midpoint, or "
                             "euler where a case's settings are the seed's)")
    args = parser.parse_args()
    print(f"{'problem':<20} {'variant':<14} {'h':>15} {'t_end':>5} {'in play J':>10} "
          f"{'res:pot':>8} {'elements':>8} {'contact':>8} {'smooth':>8} {'warn':>4} {'cpu s':>6}")
    for name, problem in PROBLEMS.items():
        if args.only and name not in args.only:
            continue
        for variant in problem.variants:
            keywords = problem.keywords(variant)
            t_end, h = problem.run_settings(variant, keywords)
            t_end *= args.t_end_scale
            tic = time.process_time()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                system = problem.build(**keywords)
                try:
                    res = nd.simulate(system, t_end, h, progress=False, scheme=args.scheme)
                except nd.ModelError as err:
                    print(f"{name:<20} {variant:<14} refused: {err.problems[0][:90]}")
                    continue
            cpu = time.process_time() - tic
            in_play, pot, elements, contact, smooth = shares(res, system)
            print(f"{name:<20} {variant:<14} {str(h):>15} {t_end:5.1f} {in_play:10.3g} "
                  f"{pot:8.2%} {elements:8.2%} {contact:8.2%} {smooth:8.2%} {len(caught):4d} "
                  f"{cpu:6.1f}"
                  + ("" if res.success else f"  {res.message[:60]}"), flush=True)


if __name__ == "__main__":
    main()
