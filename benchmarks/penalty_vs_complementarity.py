"""The revolute-clearance pendulum (CASES.md #3) two ways, side by side:

- complementarity: the clearance joint's gaps in this stepper (fixed h);
- penalty: the same joint as seed 001 models it (Lankarani-Nikravesh, K = 5e6 N/m^1.5,
  n = 1.5, e = 0.75, by the strip method), integrated with scipy's Radau (the stiff
  integrator with the CasADi Jacobian), as seed 001 would.

Accuracy: each model against its own converged reference (complementarity at h = 1e-5 s,
penalty at rtol = 1e-10): the bar's swing angle error, max over the run. Wall time per run.
The ratio compares the cheapest run of each that reaches a given accuracy.

    python benchmarks/penalty_vs_complementarity.py [--t-end 1.0] [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nlpdyn as nd  # noqa: E402
from problems import clearance_pendulum  # noqa: E402

LAW = nd.LankaraniNikravesh(5e6, 1.5, 0.75)


def penalty_system():
    s = clearance_pendulum.build()
    joint = s.gaps[0]
    p = nd.System(gravity=s.gravity)
    b0 = s.bodies[0]
    bar = p.add_body("bar", b0.mass, b0.inertia, b0.position, b0.orientation)
    geometry = nd.RevoluteClearance(p.ground, bar, joint.point, joint.axis, joint.radius,
                                    joint.clearance, joint.length, joint.axial_clearance,
                                    name="pin")
    p.add_force(nd.penalty_version(geometry, LAW, n_strips=2))
    return p


def swing_angle(res, t):
    A = res.rotation("bar")
    angle = np.unwrap(np.arctan2(A[:, 1, 0], A[:, 0, 0]))
    return np.interp(t, res.t, angle)


def timed(fn):
    tic = time.perf_counter()
    res = fn()
    return res, time.perf_counter() - tic


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    t_end = 0.3 if args.quick else args.t_end
    grid = np.linspace(0, t_end, 201)
    comp_ref, _ = timed(lambda: nd.simulate(clearance_pendulum.build(), t_end, h=1e-5 if not args.quick else 1e-4,
                                            progress=False))
    pen_ref, _ = timed(lambda: nd.simulate_ode(penalty_system(), t_end, method="Radau",
                                               rtol=1e-10, atol=1e-13, progress=False))
    ref_c, ref_p = swing_angle(comp_ref, grid), swing_angle(pen_ref, grid)
    print(f"CASES.md #3 pendulum, {t_end} s. Swing angle: complementarity vs penalty references "
          f"differ by {np.abs(ref_c - ref_p).max():.2e} rad (the models differ)")
    rows = []
    for h in ([1e-3, 2.5e-4] if args.quick else [2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4]):
        res, wall = timed(lambda: nd.simulate(clearance_pendulum.build(), t_end, h=h, progress=False))
        rows.append(("complementarity", f"h = {h:g}", np.abs(swing_angle(res, grid) - ref_c).max(),
                     wall, len(res.h), res.success))
    for rtol in ([1e-4, 1e-6] if args.quick else [1e-3, 1e-4, 1e-5, 1e-6, 1e-7]):
        res, wall = timed(lambda: nd.simulate_ode(penalty_system(), t_end, method="Radau", rtol=rtol,
                                                  atol=1e-3 * rtol, progress=False))
        rows.append(("penalty + Radau", f"rtol = {rtol:g}", np.abs(swing_angle(res, grid) - ref_p).max(),
                     wall, len(res.h), res.success))
    print(f"{'model':<17} {'setting':<13} {'angle error (rad)':>18} {'wall (s)':>9} {'steps':>7}")
    for model, setting, err, wall, steps, ok in rows:
        print(f"{model:<17} {setting:<13} {err:18.2e} {wall:9.2f} {steps:7d}{'' if ok else '  FAILED'}")
    print("\nWall time at matched accuracy (cheapest run of each model within the error):")
    for target in (1e-2, 1e-3, 1e-4):
        best = {}
        for model, _, err, wall, _, ok in rows:
            if ok and err <= target:
                best[model] = min(best.get(model, np.inf), wall)
        if len(best) == 2:
            c, p = best["complementarity"], best["penalty + Radau"]
            print(f"  error <= {target:g} rad: complementarity {c:.2f} s, penalty {p:.2f} s, "
                  f"ratio penalty/complementarity {p / c:.1f}")
        else:
            print(f"  error <= {target:g} rad: not reached by {sorted({'complementarity', 'penalty + Radau'} - set(best))}")


if __name__ == "__main__":
    main()
