"""Cost of the energy-consistent force elements, from outside the step.

Per step, process CPU time of ``Stepper.step()`` loops (set-up and the first 3 steps
excluded) and of whole ``simulate()`` calls (set-up and result included), on:

- the stop pendulum (``energy_consistent.stop_pendulum``): a 1 kg, 1 m bar on a revolute
  released horizontal against a Hertz ``RotationStop`` at +-1 rad (k = 1e4 and 1e6), 1000
  steps at h = 1e-3;
- the bushing chain (``problems/chain.py``, 1e5 N/m, 1e2 N m/rad, implicit), N = 2, 8, 16,
  64 links, 200 steps at h = 1e-3 (100 above 16 links).

Columns: this checkout with the elements "implicit" (energy-consistent, the default), the
same with ``solver="qp"`` (the conic plugin: qpOASES up to 10 bodies, ProxQP above)
instead of the default "direct" KKT solve, and "backward_euler"; with ``--baseline DIR``
another checkout's default ("implicit" there, with the conic plugin), e.g. the commit before the change (``git worktree add ../base <commit>``). Every
measurement runs in its own process; the processes are interleaved (one of each column per
case, in turn) and repeated, and the median is shown.

    python benchmarks/energy_consistent_cost.py [--repeat 5] [--quick] [--baseline ../base] [--jit]

``--jit`` adds the default with the step's functions compiled (``jit=True``, ``nlpdyn.jit``;
its libraries built before it is timed, in the cache ``$NLPDYN_CACHE`` or the user's).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
CASES = {f"stop pendulum k = {k:.0e}": ("stop", k, 1000) for k in (1e4, 1e6)}
CASES.update({f"bushing chain N = {n}": ("chain", n, 200 if n <= 16 else 100)
              for n in (2, 8, 16, 64)})
QUICK = ("stop pendulum k = 1e+04", "stop pendulum k = 1e+06", "bushing chain N = 2",
         "bushing chain N = 16")


def build(kind, size, evaluation):
    """The case's system, its force elements' ``evaluation`` set (None: as built)."""
    import nlpdyn as nd
    from problems import chain
    if kind == "stop":
        s = nd.System(gravity=(0, 0, -9.81))
        bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0))
        hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0),
                                        name="hinge"))
        s.add_force(nd.RotationStop(hinge, -1.0, 1.0, nd.Hertz(size), name="stop"))
    else:
        s = chain.build(int(size), bushing=(1e5, 1e2))
    if evaluation:
        for element in s.forces:
            element.evaluation = evaluation
    return s


def measure(kind, size, steps, evaluation, solver=None, jit=False):
    """(us per Stepper.step(), us per step of a whole simulate()), process CPU; ``solver``:
    the stepper's (None: its default); ``jit``: the step's functions compiled (a warm
    cache: ``main`` builds them first)."""
    import nlpdyn as nd
    options = dict({"solver": solver} if solver else {}, **({"jit": True} if jit else {}))
    stepper = nd.Stepper(build(kind, size, evaluation), h=1e-3, **options)
    for _ in range(3):
        stepper.step()
    tic = time.process_time()
    for _ in range(steps):
        stepper.step()
    step_us = 1e6 * (time.process_time() - tic) / steps
    system = build(kind, size, evaluation)
    tic = time.process_time()
    res = nd.simulate(system, steps * 1e-3, h=1e-3, progress=False, **options)
    simulate_us = 1e6 * (time.process_time() - tic) / steps
    assert res.success, res.message
    return step_us, simulate_us


def in_process(tree, case, evaluation, solver=None, jit=False):
    """``measure`` in a fresh Python with ``tree`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(tree), MPLBACKEND="Agg")
    out = subprocess.run([sys.executable, str(HERE), "--measure", case, "--evaluation",
                          evaluation or "", "--solver", solver or ""] + (["--jit"] if jit else []),
                         env=env, cwd=str(tree), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--baseline", default=None, help="another nlpdyn checkout to time too")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--evaluation", default="", help=argparse.SUPPRESS)
    parser.add_argument("--solver", default="", help=argparse.SUPPRESS)
    parser.add_argument("--jit", action="store_true",
                        help="a column with the step's functions compiled (jit=True)")
    args = parser.parse_args()
    if args.measure:
        sys.path.insert(0, os.getcwd())
        print(json.dumps(measure(*CASES[args.measure], args.evaluation or None,
                                 args.solver or None, args.jit)))
        return
    columns = [("implicit", HERE.parents[1], "implicit", None, False),
               ("implicit, qp", HERE.parents[1], "implicit", "qp", False),
               ("backward_euler", HERE.parents[1], "backward_euler", None, False)]
    if args.jit:
        columns.append(("implicit, jit", HERE.parents[1], "implicit", None, True))
    if args.baseline:
        columns.append(("baseline", Path(args.baseline).resolve(), None, None, False))
    print("us per step (process CPU), median of", args.repeat, "interleaved repeats; "
          "Stepper.step() loop / whole simulate()")
    print(f"{'case':<26}" + "".join(f"{name:>22}" for name, *_ in columns)
          + "   implicit / backward_euler" + ("   implicit / baseline" if args.baseline else "")
          + ("   jit / baseline" if args.baseline and args.jit else ""))
    for case in (QUICK if args.quick else CASES):
        times = {name: [] for name, *_ in columns}
        if args.jit:        # the compiled column's libraries built before it is timed
            in_process(HERE.parents[1], case, "implicit", None, True)
        for _ in range(args.repeat):
            for name, tree, evaluation, solver, jit in columns:            # interleaved
                times[name].append(in_process(tree, case, evaluation, solver, jit))
        med = {name: np.median(np.array(v), axis=0) for name, v in times.items()}
        row = f"{case:<26}" + "".join(f"{m[0]:10.0f} / {m[1]:9.0f}" for m in med.values())
        ratio = med["implicit"] / med["backward_euler"]
        row += f"   {ratio[0]:5.2f} / {ratio[1]:5.2f}        "
        if args.baseline:
            ratio = med["implicit"] / med["baseline"]
            row += f"   {ratio[0]:5.2f} / {ratio[1]:5.2f}"
            if args.jit:
                ratio = med["implicit, jit"] / med["baseline"]
                row += f"   {ratio[0]:5.2f} / {ratio[1]:5.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
