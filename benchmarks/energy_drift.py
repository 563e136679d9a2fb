"""Energy behaviour of the ideal slider-crank (CASES.md #5) and pendulum against h, with the
default scheme ("midpoint") and the seed's ("euler").

Per h: range of total mechanical energy, mean energy in the first and last second (secular
drift), largest constraint violation and | |p| - 1 |. The slider-crank is also run with an
isotropic rod inertia (4e-3 on all axes), which removes the rod's gyroscopic moment.

    python benchmarks/energy_drift.py
"""
import sys
from pathlib import Path
import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import pendulum, slider_crank  # noqa: E402


def isotropic_rod():
    system = slider_crank.build()
    system.body("rod").inertia = np.diag([4e-3, 4e-3, 4e-3])
    return system


def main():
    print(f"{'case':<22} {'scheme':<9} {'h':>8} {'E range J':>10} {'E first s':>10} "
          f"{'E last s':>10} {'drift J':>9} {'max |Phi|':>10} {'max||p|-1|':>11}")
    cases = [("slider-crank", slider_crank.build, 5.0), ("slider-crank, iso rod", isotropic_rod, 5.0),
             ("pendulum", pendulum.build, 10.0)]
    for name, build, t_end in cases:
        for scheme in ("midpoint", "euler"):
            for h in (2e-3, 1e-3, 5e-4, 2.5e-4):
                res = nd.simulate(build(), t_end=t_end, h=h, progress=False, scheme=scheme)
                first = res.energy[res.t <= 1.0].mean()
                last = res.energy[res.t >= t_end - 1.0].mean()
                print(f"{name:<22} {scheme:<9} {h:8.1e} {np.ptp(res.energy):10.3e} {first:10.6f} "
                      f"{last:10.6f} {last - first:9.2e} {res.stats.constraint_violation.max():10.2e} "
                      f"{res.stats.norm_error.max():11.2e}")


if __name__ == "__main__":
    main()
