"""Cost per step of the clearance case studies (CASES.md #1-#4), timed from outside the step.

Per case, mode and contact scheme: steps, median and p90 of ``Stepper.step()`` timed around
each call from Python (construction excluded: it happens once), the whole ``simulate()``
call per step (result assembly included), mean QP solves per step (1 + contact iterations,
fixed-h solves), the share of steps redone by the fallback scheme or retried, and the
energy change. ``cone`` is the default contact scheme, ``cone_end`` the one before it (end-of-step
normals throughout), ``end_normal`` the one before that.

``--baseline DIR`` also times the default settings of another checkout of nlpdyn (e.g. the
commit before a change: ``git worktree add ../base <commit>``) in a subprocess, on the same
cases, so both are measured in one run on one machine.

    python benchmarks/bench_clearance.py
    python benchmarks/bench_clearance.py --cases 3 --baseline ../base
    python benchmarks/bench_clearance.py --t-end 0.5      # shorter runs
"""
from __future__ import annotations

from pathlib import Path
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import clearance_pendulum, clearance_slider, prismatic_slider  # noqa: E402

CASES = {
    "1": ("#1 cylindrical slider", clearance_slider.build, 0.5,
          [("fixed 1e-3", 1e-3, {}), ("adaptive [1e-3, 1e-2]", (1e-3, 1e-2), {}),
           ("nlp [1e-3, 1e-2] (seed)", (1e-3, 1e-2), dict(step_control="nlp"))]),
    "2": ("#2 triangular slider", prismatic_slider.build, 0.5,
          [("fixed 1e-3", 1e-3, {}), ("adaptive [1e-3, 1e-2]", (1e-3, 1e-2), {}),
           ("nlp [1e-3, 1e-2] (seed)", (1e-3, 1e-2), dict(step_control="nlp"))]),
    "3": ("#3 pendulum, cm_z 0.05", clearance_pendulum.build, 2.0,
          [("fixed 1e-3", 1e-3, {}), ("fixed 2e-4", 2e-4, {}),
           ("adaptive [1e-3, 2e-3]", (1e-3, 2e-3), {}),
           ("nlp [1e-3, 2e-3] (seed)", (1e-3, 2e-3), dict(step_control="nlp"))]),
    "4": ("#4 pendulum, ideal joint", lambda: clearance_pendulum.build(ideal=True), 2.0,
          [("fixed 1e-3", 1e-3, {}), ("nlp [1e-3, 2e-3] (seed)", (1e-3, 2e-3),
                                      dict(step_control="nlp"))]),
}
HAS_SCHEMES = hasattr(nd.StepperSettings(), "contact")


def measure(build, h, t_end, options):
    """Per-step times of a Stepper.step() loop (s), the infos, and simulate()'s wall time."""
    build()                                 # warm caches (imports, CasADi)
    stepper = nd.Stepper(build(), h, **options)
    times, infos = [], []
    while stepper.t < t_end - 1e-12:
        tic = time.perf_counter()
        infos.append(stepper.step(t_end))
        times.append(time.perf_counter() - tic)
    tic = time.perf_counter()
    res = nd.simulate(build(), t_end=t_end, h=h, progress=False, **options)
    return np.array(times), infos, time.perf_counter() - tic, res


def row(case, label, scheme, times, infos, sim_wall, res):
    ms = 1e3 * times
    nlp = any(i.solver.startswith("ipopt") for i in infos[:1]) and "nlp" in label
    qps = np.mean([i.gap_iterations for i in infos]) + (0 if nlp else 1)
    fallback = np.mean([getattr(i, "contact_fallback", False) for i in infos])
    retried = np.mean([i.retries > 0 for i in infos])
    note = "" if res.success else f"  STOPPED: {res.message[:50]}"
    return (f"{case:<25} {label:<24} {scheme:<11} {len(ms):6d} {np.median(ms):9.3f} "
            f"{np.percentile(ms, 90):7.3f} {1e3 * sim_wall / max(len(res.h), 1):9.3f} {qps:8.2f} "
            f"{100 * fallback:6.1f}% {100 * retried:6.1f}% "
            f"{res.energy[-1] - res.energy[0]:9.4f}{note}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=None, help="override every run's t_end")
    parser.add_argument("--cases", default="1234", help="which case studies, e.g. 3")
    parser.add_argument("--baseline", default=None, help="another nlpdyn checkout to time too")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    lines = []
    schemes = ("cone", "cone_end", "end_normal") if HAS_SCHEMES and not args.json else ("default",)
    for key in args.cases:
        case, build, t_end, modes = CASES[key]
        for label, h, options in modes:
            for scheme in schemes:
                opts = dict(options, **({} if scheme == "default" else {"contact": scheme}))
                if key == "4" and scheme != "cone":
                    continue                  # no gaps: the scheme does not matter
                times, infos, sim_wall, res = measure(build, h, args.t_end or t_end, opts)
                lines.append(row(case, label, scheme if key != "4" else "-", times, infos,
                                 sim_wall, res))
    if args.json:                             # the baseline's rows, for the parent process
        print(json.dumps(lines))
        return
    head = (f"{'case':<25} {'mode':<24} {'contact':<11} {'steps':>6} {'median ms':>9} "
            f"{'p90 ms':>7} {'sim ms':>9} {'QPs/step':>8} {'fallbk':>7} {'retried':>7} {'dE J':>9}")
    print("Stepper.step() timed from outside; 'sim ms': whole simulate() per step")
    print(head)
    print("-" * len(head))
    print("\n".join(lines))
    if args.baseline:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
        cmd = [sys.executable, os.path.abspath(__file__), "--json", "--cases", args.cases]
        if args.t_end:
            cmd += ["--t-end", str(args.t_end)]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                             cwd=os.path.abspath(args.baseline))
        print(f"\nbaseline {args.baseline} (its default settings)")
        print("\n".join(json.loads(out.stdout.strip().splitlines()[-1])))


if __name__ == "__main__":
    main()
