"""The revolute-clearance pendulum (CASES.md #3) two ways, at equal accuracy:

- complementarity: the clearance joint's gaps in this stepper (fixed h);
- penalty: the same joint as seed 001 models it (Lankarani-Nikravesh, n = 1.5, e = 0.75, the
  strip method), integrated with scipy's Radau (the stiff integrator with the CasADi
  Jacobian), as seed 001 would. Stiff enough to be the same joint: K = 5e11 N/m^1.5 on 16
  strips keeps the bore's ends within 1.1 c of the pin axis (the seed's K = 5e6 on 2 strips
  lets them reach ~12 c; it is listed too, as a different joint).

Accuracy: one common reference, the complementarity joint converged in h (h = 1e-5 s; its own
error is estimated from the run at 2e-5). Error: the bar's swing angle, max over the run.
Cost: process CPU time of each whole run, the runs of both models interleaved and repeated
(median of ``--repeat``). The ratio compares the cheapest run of each that reaches a given
accuracy.

    python benchmarks/penalty_vs_complementarity.py [--t-end 1.0] [--repeat 3] [--quick]
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

SEED_JOINT = (5e6, 2)           # (K, strips): seed 001's law and our earlier data
STIFF_JOINT = (5e11, 16)        # the bore's ends stay within 1.1 c


def penalty_system(stiffness, n_strips, restitution=0.75):
    """CASES.md #3 with the clearance joint as a penalty joint (LN, n = 1.5)."""
    s = clearance_pendulum.build()
    joint = s.gaps[0]
    p = nd.System(gravity=s.gravity)
    b0 = s.bodies[0]
    bar = p.add_body("bar", b0.mass, b0.inertia, b0.position, b0.orientation)
    geometry = nd.RevoluteClearance(p.ground, bar, joint.point, joint.axis, joint.radius,
                                    joint.clearance, joint.length, joint.axial_clearance,
                                    name="pin")
    law = nd.LankaraniNikravesh(stiffness, 1.5, restitution)
    p.add_force(nd.penalty_version(geometry, law, n_strips=n_strips))
    return p


def swing_angle(res, t):
    A = res.rotation("bar")
    angle = np.unwrap(np.arctan2(A[:, 1, 0], A[:, 0, 0]))
    return np.interp(t, res.t, angle)


def bore_eccentricity(res) -> float:
    """The largest distance of either bore end from the pin axis over the run (m)."""
    s = clearance_pendulum.build()
    joint, body = s.gaps[0], s.bodies[0]
    R, x = res.rotation("bar"), res.position("bar")
    worst = 0.0
    for side in (-0.5, 0.5):
        local = np.asarray(joint.point) + side * joint.length * np.asarray(joint.axis) \
            - np.asarray(body.position)
        end = x + np.einsum("nij,j->ni", R, local)
        worst = max(worst, float(np.hypot(end[:, 0], end[:, 1]).max()))
    return worst


def complementarity_run(t_end, h):
    return lambda: nd.simulate(clearance_pendulum.build(), t_end, h=h, progress=False)


def penalty_run(t_end, rtol, joint=STIFF_JOINT):
    return lambda: nd.simulate_ode(penalty_system(*joint), t_end, method="Radau", rtol=rtol,
                                   atol=1e-3 * rtol, progress=False)


def cpu_timed(run):
    tic = time.process_time()
    res = run()
    return res, time.process_time() - tic


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    t_end = 0.3 if args.quick else args.t_end
    grid = np.linspace(0, t_end, 401)
    h_ref = 1e-4 if args.quick else 1e-5
    reference = swing_angle(complementarity_run(t_end, h_ref)(), grid)
    coarser = swing_angle(complementarity_run(t_end, 2 * h_ref)(), grid)
    print(f"CASES.md #3 pendulum, {t_end} s. Reference: complementarity at h = {h_ref:g} "
          f"(differs from h = {2 * h_ref:g} by {np.abs(reference - coarser).max():.2e} rad)")
    runs = [("complementarity", f"h = {h:g}", complementarity_run(t_end, h))
            for h in ([1e-3, 2.5e-4] if args.quick else [2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4])]
    runs += [("penalty + Radau", f"rtol = {r:g}", penalty_run(t_end, r))
             for r in ([1e-3, 1e-5] if args.quick else [1e-3, 1e-4, 1e-5, 1e-6])]
    runs += [("seed's penalty", "rtol = 1e-06", penalty_run(t_end, 1e-6, SEED_JOINT))]
    cpu = {(model, setting): [] for model, setting, _ in runs}
    results = {}
    for _ in range(1 if args.quick else args.repeat):
        # interleaved: one run of each, in turn, per repeat
        for model, setting, run in runs:
            res, seconds = cpu_timed(run)
            cpu[model, setting].append(seconds)
            results[model, setting] = res
    rows = []
    for model, setting, _ in runs:
        res = results[model, setting]
        rows.append((model, setting, np.abs(swing_angle(res, grid) - reference).max(),
                     float(np.median(cpu[model, setting])), len(res.t) - 1, res.success,
                     bore_eccentricity(res)))
    print(f"{'model':<17} {'setting':<13} {'angle error (rad)':>18} {'CPU (s)':>8} "
          f"{'steps':>7} {'bore end / c':>12}")
    c = clearance_pendulum.build().gaps[0].clearance
    for model, setting, err, seconds, steps, ok, ecc in rows:
        print(f"{model:<17} {setting:<13} {err:18.2e} {seconds:8.2f} {steps:7d} {ecc / c:12.2f}"
              f"{'' if ok else '  FAILED'}")
    print("\nCPU at matched accuracy (cheapest run of each model within the error):")
    for target in (1e-2, 3e-3, 1e-3):
        best = {}
        for model, _, err, seconds, _, ok, _ in rows:
            if ok and err <= target and model != "seed's penalty":
                best[model] = min(best.get(model, np.inf), seconds)
        if len(best) == 2:
            comp, pen = best["complementarity"], best["penalty + Radau"]
            print(f"  error <= {target:g} rad: complementarity {comp:.2f} s, penalty {pen:.2f} s, "
                  f"ratio penalty/complementarity {pen / comp:.1f}")
        else:
            missing = sorted({"complementarity", "penalty + Radau"} - set(best))
            print(f"  error <= {target:g} rad: not reached by {missing}")


if __name__ == "__main__":
    main()
