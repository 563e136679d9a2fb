"""Energy of the clearance pendulum against the step-size bounds (seed 002 Fig. 30).

The pendulum of CASES.md #3 as given (cm_z = 0.05 m), released from horizontal, 2 s; the
planar one (cm_z = 0) for comparison with --planar. For each step-bound set and
scheme, mechanical energy is read at the turning points (angular velocity about the pin
changes sign), where it is all potential and free of the O(h) kinetic oscillation; the table
gives the energy lost by the first, second and last turning point. Second table: the bar
released from the bore's centre, which falls through the clearance onto the pin (a real,
plastic impact), against the same bar started resting on the pin (planar, where the
plastic-impact closed form holds).

    python benchmarks/energy_vs_step_bounds.py
    python benchmarks/energy_vs_step_bounds.py --planar
"""
import argparse

import nlpdyn as nd
from problems import clearance_pendulum

BOUNDS = [(1e-3, 2e-3), (5e-4, 2e-3), (1.5e-3, 2e-3), (5e-4, 1e-3), (2.5e-4, 1e-3),
          (7.5e-4, 1e-3)]


def run(h, control, cm_z):
    res = nd.simulate(clearance_pendulum.build(cm_z=cm_z), t_end=2.0, h=h,
                      progress=False, **({"step_control": control} if control else {}))
    loss, times = clearance_pendulum.turning_point_energy(res)
    return res, loss, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planar", action="store_true", help="cm_z = 0 instead of 0.05 m")
    cm_z = 0.0 if parser.parse_args().planar else 0.05
    print(f"cm_z = {cm_z} m")
    print(f"{'scheme':<9} {'h bounds':>16} {'steps':>6} {'retries':>7} {'dE 1st tp':>10} "
          f"{'dE 2nd tp':>10} {'dE last tp':>10} {'n tp':>4} {'wall s':>7}")
    for control in ("nlp", "adaptive"):
        for bounds in BOUNDS:
            res, loss, _ = run(bounds, control, cm_z)
            print(f"{control:<9} {str(bounds):>16} {len(res.h):6d} {res.stats.retries.sum():7d} "
                  f"{loss[0]:10.4f} {loss[1]:10.4f} {loss[-1]:10.4f} {len(loss):4d} "
                  f"{res.stats.wall_time.sum():7.2f}")
    for h in (2e-3, 1e-3, 5e-4, 2.5e-4):
        res, loss, _ = run(h, None, cm_z)
        print(f"{'fixed':<9} {h:>16g} {len(res.h):6d} {res.stats.retries.sum():7d} "
              f"{loss[0]:10.4f} {loss[1]:10.4f} {loss[-1]:10.4f} {len(loss):4d} "
              f"{res.stats.wall_time.sum():7.2f}")

    print("\nimpact study, fixed h: extra energy lost when the bar falls from the bore's centre "
          "onto the pin,\nagainst the same bar started resting on it (both over 0.03 s); "
          "closed form m g c J / (J + m r^2)")
    print(f"{'h':>8} {'extra loss J':>13} {'closed form J':>14}")
    for h in (2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4):
        change = []
        for centred in (True, False):
            res = nd.simulate(clearance_pendulum.build(cm_z=0.0, start_centred=centred),
                              t_end=0.03, h=h, progress=False)
            change.append(res.energy[-1] - res.energy[0])
        print(f"{h:8.1e} {change[1] - change[0]:13.4e} "
              f"{clearance_pendulum.impact_energy_closed_form():14.4e}")


if __name__ == "__main__":
    main()
