"""Energy behaviour of the ideal slider-crank (CASES.md #5) against the step size.

Prints, per h: the range of total mechanical energy over 5 s, the mean energy in the first
and last second (secular drift), the largest constraint violation and | |p| - 1 |.

    python benchmarks/energy_drift.py
"""
import numpy as np

import nlpdyn as nd
from problems import slider_crank


def main():
    print(f"{'h':>8} {'E range J':>10} {'E(0-1s) J':>11} {'E(4-5s) J':>11} {'drift J':>9} "
          f"{'max |Phi|':>10} {'max||p|-1|':>11}")
    for h in (2e-3, 1e-3, 5e-4, 2.5e-4):
        res = nd.simulate(slider_crank.build(), t_end=5.0, h=h, progress=False)
        first, last = res.energy[res.t <= 1.0].mean(), res.energy[res.t >= 4.0].mean()
        print(f"{h:8.1e} {np.ptp(res.energy):10.3e} {first:11.6f} {last:11.6f} "
              f"{last - first:9.2e} {res.stats.constraint_violation.max():10.2e} "
              f"{res.stats.norm_error.max():11.2e}")


if __name__ == "__main__":
    main()
