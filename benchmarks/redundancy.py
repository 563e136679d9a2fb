"""Energy of overconstrained loops: each mechanism with redundant constraint rows against
the same mechanism written without them, for the closed-form solve's settings and the QP.

- IFToMM A02 N-four-bar (N = 5, 10 s): planar loops of spatial revolutes (3N redundant rows)
  against right-hand joints as planar point coincidences.
- IFToMM A04 Bricard mechanism (10 s): a spatial overconstrained loop (1 redundant row of 30)
  against the last revolute with 4 of its 5 rows.

Physics: the joints do no work and the energy is conserved; what the ledger books as the
joints' work is what the solve of the redundant rows does to the motion.

    python benchmarks/redundancy.py
"""

import sys
from pathlib import Path
import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import bricard, four_bar_chain  # noqa: E402

SETTINGS = [("default", {}), ("regularization 1e-7", {"regularization": 1e-7}),
            ("10 refinement steps", {"refinement_steps": 10}), ("qp (qpOASES)", {"solver": "qp"})]


def main():
    print(f"{'mechanism':<12} {'rows':<14} {'solve':<22} {'ok':<5} {'energy change J':>16} "
          f"{'joints work J':>14} {'residual J':>11}")
    for name, build in (("A02, N = 5", lambda r: four_bar_chain.build(5, redundant=r)),
                        ("A04 Bricard", lambda r: bricard.build(redundant=r))):
        for redundant in (False, True):
            for label, options in SETTINGS:
                res = nd.simulate(build(redundant), t_end=10.0, h=1e-3, progress=False, **options)
                ledger = res.energy_ledger()
                joints = ledger[[c for c in ledger.columns if c.startswith("work:")]].iloc[-1].sum()
                print(f"{name:<12} {'redundant' if redundant else 'independent':<14} {label:<22} "
                      f"{str(res.success):<5} {res.energy[-1] - res.energy[0]:16.5f} "
                      f"{joints:14.5f} {ledger.residual.iloc[-1]:11.5f}", flush=True)


if __name__ == "__main__":
    main()
