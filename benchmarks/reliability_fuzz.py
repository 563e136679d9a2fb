"""Reliability fuzz (issue 22): does ``success=True`` without a warning mean a right answer?

Random chains and free chains of 2-8 bodies (tests/strategies.py ``random_chain``: revolute,
universal, spherical, cylindrical and prismatic joints and undamped bushings, seeded and
reproducible), in two regimes:

- moderate: mass ratio <= 10, the fastest body spinning at 0.5-4 rad/s initially;
- harsh: mass ratio <= 1e3, radii of gyration down to 5 mm, spins of 4-65 rad/s
  (0.065 rad per step at h = 1e-3), bushing modes up to 200 rad/s;
- fast (``--fast N``, none by default): the moderate bodies and bushings at the harsh spins.

Each run is judged from its states alone (``strategies.verdict``: energy from masses,
inertias, body-frame angular velocities, gravity and the bushings' law; joint gaps and axis
errors from the joints' input geometry; momentum of free systems), never from ``res.energy``
or the ledger, and classified:

    right           success, no warning, the verdict right
    warned          a RuntimeWarning from simulate() or res.info["warnings"] non-empty
    failed cleanly  success False with a message
    silent-wrong    success, no warning, the verdict wrong            (a defect)
    raised          an exception                                      (a defect)

Models with no ideal joint (free bodies on bushings only) of at most ``--reference-bodies``
bodies are also integrated by scipy's DOP853 at rtol 1e-10 from Newton-Euler equations
written in tests/strategies.py: the verdict on that reference must be right (it confirms the
verdict's energy and momentum), and the run's energy change is printed beside the
reference's.

    PYTHONPATH=. python benchmarks/reliability_fuzz.py                 # 25 moderate + 50 harsh, 1 s
    PYTHONPATH=. python benchmarks/reliability_fuzz.py --moderate 100 --harsh 0 --first-seed 1000
    PYTHONPATH=. python benchmarks/reliability_fuzz.py --only harsh:17  # one model, its figures
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

import nlpdyn as nd          # noqa: E402
import strategies as S       # noqa: E402   tests/strategies.py

CLASSES = ("right", "warned", "failed cleanly", "silent-wrong", "raised")


def describe(spec) -> str:
    links = [j.kind if j.kind != "free" else "-" for j in spec.joints]
    for f in spec.forces:
        links[f.body_b] = "bushing"
    masses = [b.mass for b in spec.bodies]
    spin = max(np.linalg.norm(b.angular_velocity) for b in spec.bodies)
    kind = "free chain" if S.is_free(spec) else "chain"
    g = "g" if any(spec.gravity) else "no g"
    return (f"{kind} of {len(spec.bodies)} ({', '.join(links)}), {g}, mass ratio "
            f"{max(masses) / min(masses):.3g}, spin {spin:.3g} rad/s ({spin * spec.h:.3g} rad/step)")


def run_one(regime: str, seed: int, t_end: float, h: float, reference_bodies: int) -> dict:
    """Simulate one random model and judge it; a plain dict (crosses the process pool)."""
    spec = S.random_chain(seed, regime, t_end, h)
    out = dict(regime=regime, seed=seed, model=describe(spec), reference=None)
    tic = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = nd.simulate(S.build(spec), t_end, h, progress=False)
    except Exception as err:        # any exception is a defect: the model is valid
        out.update(cls="raised", wall=time.perf_counter() - tic,
                   error=f"{type(err).__name__}: {err}",
                   trace=traceback.format_exc(limit=4))
        return out
    out["wall"] = time.perf_counter() - tic
    warned = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    warned += [w for w in res.info.get("warnings", []) if w not in warned]
    v = S.verdict(spec, res.t, res.q, res.v)
    out.update(success=res.success, message=res.message, warnings=warned, t_reached=res.t[-1],
               wrong=v.wrong, figures=v.figures(), created=v.energy_created,
               lost=v.energy_lost, gap=v.joint_gap, axis=v.axis_error,
               momentum=max(v.momentum_drift, v.angular_drift))
    if not res.success:
        out["cls"] = "failed cleanly" if res.message.strip() else "raised"
    elif warned:
        out["cls"] = "warned"
    else:
        out["cls"] = "right" if v.right else "silent-wrong"
    if not S.has_ideal_joints(spec) and len(spec.bodies) <= reference_bodies:
        tic = time.perf_counter()
        q, vel = S.reference_trajectory(spec, res.t)
        ref = S.verdict(spec, res.t, q, vel)
        size = spec.size
        out["reference"] = dict(
            right=ref.right, wrong=ref.wrong, created=ref.energy_created, lost=ref.energy_lost,
            momentum=max(ref.momentum_drift, ref.angular_drift),
            position_error=float(np.abs(q - res.q)[:, [7 * k + i for k in range(len(spec.bodies))
                                                       for i in range(3)]].max() / size),
            wall=time.perf_counter() - tic)
    return out


def commit() -> str:
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "nlpdyn"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" (nlpdyn/ modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moderate", type=int, default=25, help="moderate models (25)")
    parser.add_argument("--harsh", type=int, default=50, help="harsh models (50)")
    parser.add_argument("--fast", type=int, default=0,
                        help="moderate bodies spinning at 4-65 rad/s (0)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first..first+N-1 (0)")
    parser.add_argument("--t-end", type=float, default=1.0, help="simulated time, s (1)")
    parser.add_argument("--h", type=float, default=1e-3, help="fixed step, s (1e-3)")
    parser.add_argument("--workers", type=int, default=2, help="processes (2)")
    parser.add_argument("--reference-bodies", type=int, default=4,
                        help="scipy reference for bushing-only models up to this many bodies (4)")
    parser.add_argument("--only", action="append", default=[], metavar="REGIME:SEED",
                        help="run just these models (repeatable), e.g. harsh:17")
    args = parser.parse_args(argv)
    print("command: " + " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]))
    print(f"commit: {commit()}   nlpdyn from {os.path.dirname(nd.__file__)}")
    if args.only:
        jobs = [(r, int(s)) for r, s in (o.split(":") for o in args.only)]
    else:
        jobs = [("moderate", args.first_seed + i) for i in range(args.moderate)] + \
               [("harsh", args.first_seed + i) for i in range(args.harsh)] + \
               [("fast", args.first_seed + i) for i in range(args.fast)]
    tic = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(run_one, *zip(*[(r, s, args.t_end, args.h, args.reference_bodies)
                                                 for r, s in jobs])))
    wall = time.perf_counter() - tic
    print(f"{len(jobs)} models, t_end = {args.t_end:g} s, h = {args.h:g} s, {wall:.0f} s wall "
          f"({args.workers} workers)\n")

    regimes = [r for r in S.REGIMES if any(x["regime"] == r for x in results)]
    header = f"{'regime':<10}" + "".join(f"{c:>16}" for c in CLASSES) + f"{'total':>8}"
    print(header)
    print("-" * len(header))
    for r in regimes:
        mine = [x for x in results if x["regime"] == r]
        print(f"{r:<10}" + "".join(f"{sum(x['cls'] == c for x in mine):>16}" for c in CLASSES)
              + f"{len(mine):>8}")
    print()
    for r in regimes:
        mine = [x for x in results if x["regime"] == r]
        warned = [x for x in mine if x["cls"] == "warned"]
        failed = [x for x in mine if x["cls"] == "failed cleanly"]
        print(f"{r}: warned runs whose verdict is wrong {sum(bool(x['wrong']) for x in warned)}"
              f" of {len(warned)}; failed runs {len(failed)}; worst wall time "
              f"{max(x['wall'] for x in mine):.1f} s")
    print()

    for cls in ("silent-wrong", "raised"):
        bad = [x for x in results if x["cls"] == cls]
        if not bad:
            continue
        print(f"{cls} ({len(bad)}):")
        for x in bad:
            print(f"  {x['regime']}:{x['seed']}  {x['model']}")
            if cls == "raised":
                print(f"      {x['error']}")
                continue
            print(f"      {'; '.join(x['wrong'])}")
            print(f"      {x['figures']}")
        print()
    for cls in ("warned", "failed cleanly"):
        some = [x for x in results if x["cls"] == cls]
        if some:
            print(f"{cls} ({len(some)}):")
            for x in some:
                why = x["warnings"][0] if cls == "warned" else x["message"]
                print(f"  {x['regime']}:{x['seed']}  verdict {'wrong' if x['wrong'] else 'right'}: "
                      f"{why[:110]}")
            print()

    refs = [x for x in results if x["reference"]]
    if refs:
        print("scipy reference (DOP853, rtol 1e-10) on the bushing-only models; energy and momentum "
              "shares of the verdict's scales, position error of the run / model size:")
        print(f"  {'model':<14}{'ref dE+':>10}{'ref dE-':>10}{'ref mom':>10}"
              f"{'run dE+':>10}{'run dE-':>10}{'run mom':>10}{'pos err':>10}  class")
        for x in refs:
            ref = x["reference"]
            print(f"  {x['regime'] + ':' + str(x['seed']):<14}{ref['created']:>10.2e}"
                  f"{ref['lost']:>10.2e}{ref['momentum']:>10.2e}{x['created']:>10.2e}"
                  f"{x['lost']:>10.2e}{x['momentum']:>10.2e}{ref['position_error']:>10.2e}  "
                  f"{x['cls']}")
        broken = [x for x in refs if not x["reference"]["right"]]
        print(f"  the verdict judged {len(refs) - len(broken)} of {len(refs)} references right"
              + ("" if not broken else f"; WRONG on {[x['seed'] for x in broken]}: the verdict "
                                       "or the reference is broken"))
    defects = sum(x["cls"] in ("silent-wrong", "raised") for x in results)
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
