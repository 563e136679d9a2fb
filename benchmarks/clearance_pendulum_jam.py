"""Where the revolute clearance pendulum (CASES.md #3) stops, and why.

Prints, per out-of-plane offset cm_z and step size: how far the run gets, retries, energy
change; then, at the stopping state of the cm_z = 0.05 m run, the Gauss-Newton iterates on
the end-of-step gaps (true gaps and contact forces per iterate).

    python benchmarks/clearance_pendulum_jam.py
"""
import numpy as np

import nlpdyn as nd
from problems import clearance_pendulum


def main():
    print(f"{'cm_z m':>7} {'h':>16} {'reached s':>10} {'retries':>8} {'E change J':>11}  message")
    for cm_z in (0.0, 0.005, 0.02, 0.05):
        for h in ((1e-3, 2e-3), 1e-3, 2.5e-4):
            res = nd.simulate(clearance_pendulum.build(cm_z=cm_z), t_end=2.0, h=h, progress=False)
            print(f"{cm_z:7.3f} {str(h):>16} {res.t[-1]:10.4f} {res.stats.retries.sum():8d} "
                  f"{res.energy[-1] - res.energy[0]:11.4f}  {res.message[:60]}")

    stepper = nd.Stepper(clearance_pendulum.build(), h=2.5e-4, max_retries=0, fallback=False)
    try:
        while True:
            stepper.step()
    except nd.StepFailure as err:
        print(f"\n{err}")
    print(f"state at t = {stepper.t:.6f} s: gaps {np.array2string(stepper.gaps, precision=3)} m")
    q_lin = stepper.q
    for h in (2.5e-4, 1e-5):
        print(f"Gauss-Newton iterates at h = {h:g} s:")
        for it in range(4):
            sol, out = stepper._solve("qp", (h, h), q_lin)
            print(f"  {it}: end gaps {np.array2string(out[8], precision=3)} m, "
                  f"lambda {np.array2string(out[3], precision=1)} N")
            q_lin = out[0]


if __name__ == "__main__":
    main()
