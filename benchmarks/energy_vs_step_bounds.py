"""Energy of the clearance pendulum against the step-size bounds (seed 002 Fig. 30).

The pendulum of CASES.md #3 as given (cm_z = 0.05 m), released from horizontal, 2 s; the
planar one (cm_z = 0) with --planar. For each step-bound set, step-size scheme and contact
scheme, mechanical energy is read at the turning points (angular velocity about the pin
changes sign), where it is all potential and free of the O(h) kinetic oscillation: the table
gives the energy lost by the first, second and last turning point, and the energy ledger's
split of the loss by the last one into impacts (physics: plastic collisions), sustained
contact (physically zero: the contact step's numerical dissipation) and the residual (the
rest of the time discretisation). Fixed steps follow for comparison.

    python benchmarks/energy_vs_step_bounds.py
    python benchmarks/energy_vs_step_bounds.py --planar
    python benchmarks/energy_vs_step_bounds.py --contact cone   # one contact scheme only
"""
import sys
from pathlib import Path
import argparse

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import clearance_pendulum  # noqa: E402

BOUNDS = [(1e-3, 2e-3), (5e-4, 2e-3), (1.5e-3, 2e-3), (5e-4, 1e-3), (2.5e-4, 1e-3),
          (7.5e-4, 1e-3)]
FIXED = (2e-3, 1e-3, 5e-4, 2.5e-4)


def run(h, control, contact, cm_z):
    options = {"contact": contact}
    if control != "fixed":
        options["step_control"] = control
    res = nd.simulate(clearance_pendulum.build(cm_z=cm_z), t_end=2.0, h=h, progress=False,
                      **options)
    loss, times = clearance_pendulum.turning_point_energy(res)
    ledger = res.energy_ledger().iloc[int(np.searchsorted(res.t, times[-1]))]
    return res, loss, ledger


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planar", action="store_true", help="cm_z = 0 instead of 0.05 m")
    parser.add_argument("--contact", choices=("cone", "end_normal"), default=None)
    args = parser.parse_args()
    cm_z = 0.0 if args.planar else 0.05
    print(f"cm_z = {cm_z} m; energy change (J) by the turning points; the last one's split by "
          "the ledger")
    print(f"{'contact':<11} {'h scheme':<9} {'h bounds':>16} {'steps':>6} {'retried':>7} "
          f"{'1st tp':>9} {'2nd tp':>9} {'last tp':>9} {'n tp':>4} {'impact:':>9} {'contact:':>9} "
          f"{'residual':>9} {'wall s':>6}")
    for contact in [args.contact] if args.contact else ["cone", "end_normal"]:
        rows = [(control, bounds) for control in ("nlp", "adaptive") for bounds in BOUNDS]
        rows += [("fixed", h) for h in FIXED]
        for control, h in rows:
            res, loss, ledger = run(h, control, contact, cm_z)
            print(f"{contact:<11} {control:<9} {str(h):>16} {len(res.h):6d} "
                  f"{np.count_nonzero(res.stats.retries):7d} {loss[0]:9.4f} {loss[1]:9.4f} "
                  f"{loss[-1]:9.4f} {len(loss):4d} {ledger['impact:pin']:9.4f} "
                  f"{ledger['contact:pin']:9.4f} {ledger['residual']:9.4f} "
                  f"{res.info['wall_time']:6.2f}")


if __name__ == "__main__":
    main()
