"""Seed 001's penalty slider-crank against h: the crank's angle and turns with the ball joint
B or the revolute joint A as a penalty clearance joint (Lankarani-Nikravesh, K = 5e6, e =
0.75), no play and 1 mm, 5 s (docs/CASES.md #5, ``problems/slider_crank.py``).

Per h: the crank angle at 1, 2 and 3 s and its turns in 5 s, with the impacts resolved in
time (the default ``contact_resolution``) and, at h = 1e-3, every step at h ("at h"), and
with h chosen by error control (``rtol`` 1e-2, h within (1e-7, 1e-3)); the
smallest fixed h is the reference. Each run in its own process, two at a time. The rtol
runs are left out with no play, where the contact never opens: step doubling then follows
its stiff ringing (B with no play, 2026-11-26: 380342 steps and 397 s at rtol 1e-2, within
0.05 % of the reference at 3 s; h = 1e-3 with its impacts resolved: 13333 steps, 12 s,
0.14 %).

Joint A's bearing is ``--bearing`` (``slider_crank.BEARINGS``: "soft", the default and the data
of the runs above, or "steel", seed 001's cylindrical law on a steel bearing); ``--h`` runs
those fixed h instead (impacts resolved, the last the reference); ``--jobs`` runs at a time.
The steel bearing, 2026-11-27 (``--only A --bearing steel --h 1e-3 5e-4 2.5e-4 1.25e-4
--jobs 1``; ideal mechanism 8.609 / 8.608 / 8.608 / 8.608 turns, 20.893 rad at 2 s, 31.935
at 3 s): with no play 8.61 turns at every h, 20.882-20.883 rad at 2 s, 31.930 at 3 s
(373510-399960 steps, 280-310 s CPU each); with 1 mm every run failed then (at t = 1.42 s
at h = 1e-3) after 0.47-0.51 turns. Since the midpoint step no longer takes the law's Newton
iterations after slow re-closures for a diverging force, the 1 mm runs reach 5 s: 0.475 /
0.508 / 0.490 turns at h = 1e-3 / 5e-4 / 2.5e-4 (2026-11-27, one run each, 1.5-1.6e5 steps).

``--spread N`` runs each case at each h 2 N + 1 times, the initial crank speed changed by
j ``--spread-step`` of itself (j = -N ... N, default step 1e-5), and prints the most turns'
mean, spread and range per h and the mean's difference from the reference h's with its
standard error: where a run's own number does not converge (the steel bearing with 1 mm of
play rattles: a change of 1e-6 in the crank speed moves its rocking's angle at 2 s by 12 %),
the distribution does.
It prints the energy (kinetic, gravity's and stored) when the crank first turns by 9 pi, the
mean and its standard error, and the steps per run. ``--rtol R`` adds runs with h chosen by
error control (h within 1e-7 and the largest ``--h``) before the reference.
``--t-end`` shortens the runs (default 5 s); ``--contact-resolution``,
``--hysteresis-resolution`` (a number or none), ``--sustained-resolution`` and
``--settling-resolution`` (a number or none) set those settings (default: the library's).

The soft bearing with 1 mm of play, 2026-11-27 (``--only A --play 1 --spread 6
--spread-step 2e-3 --h ... --t-end 2``): 0.634 / 0.629 / 0.635 / 0.644 / 0.628 turns at
h = 1e-3 / 5e-4 / 2.5e-4 / 1.25e-4 / 6.25e-5; with ``--settling-resolution none`` (every
sustained contact at ``sustained_resolution``) 0.693 / ... / 0.636, +8.9 % at h = 1e-3
(docs/guide/case_studies.md).
The ball joint B with 1 mm of play, 2026-11-28 (``--only B --play 1 --spread 3
--spread-step 2e-3 --h 1e-3 5e-4 2.5e-4 1.25e-4 6.25e-5``): most turns 5.10 / 5.10 / 4.958 /
4.956 / 4.953 (1, 1, 0, 0 and 0 of 7 a turn off), the energy at 9 pi 0.6796 / 0.6825 /
0.6790 / 0.6781 / 0.6776 J; with ``--hysteresis-resolution none`` (impacts at
``contact_resolution``, 2026-11-27) 5.52 / 4.82 / 5.24 / 5.11 / 4.96 turns (4, 1, 2, 1 and 0
a turn off) (docs/guide/case_studies.md).

    python benchmarks/penalty_crank_convergence.py [--quick] [--only B|A] [--bearing soft|steel]
        [--h H [H ...]] [--law-scale S] [--jobs N] [--spread N [--spread-step S] [--t-end T]
        [--play MM] [--rtol R] [--contact-resolution R] [--hysteresis-resolution R|none]
        [--sustained-resolution R] [--settling-resolution R|none]]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))

CASES = [("B", 0.0), ("B", 1e-3), ("A", 0.0), ("A", 1e-3)]
RUNS = [(1e-3, "resolved"), (1e-3, "at h"), (2.5e-4, "resolved"), (1.25e-4, "resolved"),
        (1e-3, "rtol 1e-2"), (6.25e-5, "resolved")]


def measure(joint, clearance, h, mode, bearing="soft", law_scale=None, t_end=5.0, speed=0.0,
            settings=None):
    import nlpdyn as nd
    from problems import slider_crank as sc
    key = "spherical_clearance" if joint == "B" else "revolute_clearance"
    law = None if law_scale is None else nd.LankaraniNikravesh(
        sc.PENALTY["stiffness"] * law_scale, sc.PENALTY["exponent"], sc.PENALTY["restitution"])
    system = sc.build(model="penalty", bearing=bearing, law=law,
                      crank_speed=6.0 * (1.0 + speed), **{key: clearance})
    tic = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = dict(settings or {})
        if mode.startswith("rtol"):
            res = nd.simulate(system, t_end, h=(1e-7, h), rtol=float(mode.split()[1]),
                              progress=False, **given)
        else:
            if mode != "resolved":
                given["contact_resolution"] = None
            res = nd.simulate(system, t_end, h=h, progress=False, **given)
    angle = sc.crank_angle(res)
    return {"ok": bool(res.success), "turns": sc.turns(res),
            "energy": _energy_at_half_turns(res, angle - angle[0], 9),
            "most": float((angle.max() - angle[0]) / (2 * np.pi)),
            "angle": [float(np.interp(t, res.t, angle)) for t in (1.0, 2.0, 3.0)],
            "end": float(res.t[-1]),
            "steps": len(res.t) - 1, "cpu": time.process_time() - tic}


def _energy_at_half_turns(res, angle, k):
    """The mechanical energy (kinetic, gravity's and the elements' stored, J) when the crank
    first turns by k pi; NaN if it never does."""
    reached = np.flatnonzero(angle >= k * np.pi)
    if not reached.size:
        return float("nan")
    ledger = res.energy_ledger()
    energy = (ledger["kinetic"] + ledger["gravity"] + ledger.filter(like="stored:").sum(axis=1))
    return float(np.interp(res.t[reached[0]], ledger.index, energy))


def _resolution(text):
    return "none" if text.lower() == "none" else float(text)


def _run(args):
    out = subprocess.run([sys.executable, str(HERE), "--measure", json.dumps(args)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="h = 1e-3 and 2.5e-4 only")
    parser.add_argument("--only", choices=("B", "A"), help="one joint's cases")
    parser.add_argument("--h", type=float, nargs="+",
                        help="these fixed h (impacts resolved) instead, the last the reference")
    parser.add_argument("--bearing", default="soft", choices=("soft", "steel"),
                        help="revolute joint A's bearing (problems/slider_crank.py BEARINGS)")
    parser.add_argument("--law-scale", type=float,
                        help="every contact's law: Lankarani-Nikravesh with PENALTY's stiffness "
                             "times this")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--spread", type=int, metavar="N",
                        help="2 N + 1 runs per case and h, the crank speed changed by j step")
    parser.add_argument("--spread-step", type=float, default=1e-5,
                        help="the relative change of the crank speed between --spread runs")
    parser.add_argument("--t-end", type=float, default=5.0,
                        help="each run's length with --spread (s)")
    parser.add_argument("--play", type=float, help="only the cases with this play (mm)")
    parser.add_argument("--rtol", type=float,
                        help="with --spread, also runs with h chosen by error control at this "
                             "rtol, h within (1e-7, the largest --h)")
    either = ", a number or none"
    for name, kind, what in (("contact", float, ""), ("hysteresis", _resolution, either),
                             ("sustained", float, ""), ("settling", _resolution, either)):
        parser.add_argument(f"--{name}-resolution", type=kind,
                            help=f"StepperSettings.{name}_resolution of the --spread runs"
                                 f"{what} (default: the library's)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*json.loads(args.measure))))
        return
    runs = RUNS[:3] if args.quick else RUNS
    if args.h:
        runs = [(h, "resolved") for h in args.h]
    if args.spread is not None:
        spread(args, [h for h, mode in runs if mode == "resolved"])
        return
    print(f"{'joint':>5} {'play':>6} {'h':>15} {'steps':>6} {'angle 1 s':>10} {'angle 2 s':>10} "
          f"{'angle 3 s':>10} {'turns 5 s':>10} {'most turns':>10} {'vs ref 2 s':>10} {'vs ref 3 s':>10} {'vs ref 5 s':>10} "
          f"{'CPU s':>7}")
    for joint, c in CASES:
        if args.only and joint != args.only:
            continue
        case_runs = [(h, mode) for h, mode in runs if c or not mode.startswith("rtol")]
        jobs = [(joint, c, h, mode, args.bearing, args.law_scale) for h, mode in case_runs]
        with ThreadPoolExecutor(args.jobs) as pool:
            results = dict(zip(jobs, pool.map(_run, jobs)))
        ref = results[(joint, c, *runs[-1], args.bearing, args.law_scale)]
        for h, mode in case_runs:
            r = results[(joint, c, h, mode, args.bearing, args.law_scale)]
            label = mode if mode.startswith("rtol") else f"{h:.3g}" + (
                "" if mode == "resolved" else " at h")
            print(f"{joint:>5} {c * 1e3:4.0f}mm {label:>15} {r['steps']:6d} {r['angle'][0]:10.3f} "
                  f"{r['angle'][1]:10.3f} {r['angle'][2]:10.3f} {r['turns']:10.2f} {r['most']:10.2f} "
                  f"{(r['angle'][1] - ref['angle'][1]) / ref['angle'][1]:+10.2%} "
                  f"{(r['angle'][2] - ref['angle'][2]) / ref['angle'][2]:+10.2%} "
                  f"{(r['turns'] - ref['turns']) / ref['turns']:+10.2%} {r['cpu']:7.1f}"
                  + ("" if r["ok"] else "  (failed)"), flush=True)


def spread(args, steps):
    """``--spread``: the most turns' distribution per case and h over the changed crank
    speeds, against the last h's."""
    print(f"{'joint':>5} {'play':>6} {'h':>9} {'runs':>5} {'most turns':>10} {'spread':>7} "
          f"{'range':>13} {'vs ref':>8} {'+-':>6} {'E 9 pi J':>9} {'+-':>7} {'steps':>6} "
          f"{'CPU s':>7}")
    speeds = [j * args.spread_step for j in range(-args.spread, args.spread + 1)]
    given = {name: getattr(args, name) for name in ("contact_resolution", "hysteresis_resolution",
                                                    "sustained_resolution", "settling_resolution")}
    settings = {name: None if value == "none" else value for name, value in given.items()
                if value is not None}
    for joint, c in CASES:
        if args.only and joint != args.only or args.play is not None and c != args.play * 1e-3:
            continue
        rows = [(h, "resolved") for h in steps]
        if args.rtol is not None:
            rows.insert(-1, (max(steps), f"rtol {args.rtol:g}"))
        jobs = [(joint, c, h, mode, args.bearing, args.law_scale, args.t_end, k, settings)
                for h, mode in rows for k in speeds]
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_run, jobs))
        per_row = {row: [r for job, r in zip(jobs, results) if job[2:4] == row]
                   for row in rows}
        most = {row: np.array([r["most"] for r in per_row[row]]) for row in rows}
        ref = most[rows[-1]]
        for row in rows:
            m = most[row]
            cpu = np.mean([r["cpu"] for r in per_row[row]])
            failed = sum(not r["ok"] for r in per_row[row])
            error = np.hypot(m.std(ddof=1) / np.sqrt(len(m)), ref.std(ddof=1) / np.sqrt(len(ref)))
            label = row[1] if row[1] != "resolved" else f"{row[0]:.3g}"
            energy = np.array([r["energy"] for r in per_row[row]])
            steps_taken = np.mean([r["steps"] for r in per_row[row]])
            print(f"{joint:>5} {c * 1e3:4.0f}mm {label:>9} {len(m):5d} {m.mean():10.4f} "
                  f"{m.std(ddof=1):7.4f} {m.min():6.3f}-{m.max():6.3f} "
                  f"{(m.mean() - ref.mean()) / ref.mean():+8.2%} {error / ref.mean():6.2%} "
                  f"{energy.mean():9.4f} {energy.std(ddof=1) / np.sqrt(len(energy)):7.4f} "
                  f"{steps_taken:6.0f} {cpu:7.1f}" + (f"  ({failed} failed)" if failed else ""),
                  flush=True)


if __name__ == "__main__":
    main()
