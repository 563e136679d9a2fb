"""Cost per step with the step's functions compiled (``jit=True``) against CasADi's
interpreter (the default), from outside the step.

Per case, process CPU time per ``Stepper.step()`` (the first 3 steps excluded) and per step of
a whole ``simulate()`` (set-up and result included), the compiled column with a warm cache
(its libraries built by a first run, whose compile time is shown; the compiler runs in a
child process, so it is wall time and not in the CPU columns). Every measurement in its own
process, the two columns interleaved and repeated; medians.

Cases: the stop pendulum (1 kg bar on a revolute, Hertz ``RotationStop`` k = 1e4, 1000
steps), the IFToMM slider-crank (CASES.md #5, the README's main job, 1000 steps), the
bushing chain (``problems/chain.py``, 1e5 N/m, 1e2 N m/rad, implicit) and the ideal revolute
chain with 16 and 64 links (300 and 100 steps), the clearance pendulum (CASES.md #3, 500
steps at h in [1e-3, 2e-3]: its QP plugin, qpOASES, stays interpreted). h = 1e-3.

    python benchmarks/jit_cost.py [--repeat 5] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
CASES = {"stop pendulum": ("stop", 0, 1000), "slider-crank": ("crank", 0, 1000),
         "bushing chain N = 16": ("bushing", 16, 300), "chain N = 16": ("chain", 16, 300),
         "chain N = 64": ("chain", 64, 100), "clearance pendulum": ("pendulum", 0, 500)}
QUICK = ("stop pendulum", "slider-crank", "bushing chain N = 16")


def build(kind, size):
    import nlpdyn as nd
    sys.path.insert(0, str(HERE.parents[1]))
    from problems import chain, clearance_pendulum, slider_crank
    if kind == "stop":
        s = nd.System(gravity=(0, 0, -9.81))
        bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0))
        hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0),
                                        name="hinge"))
        s.add_force(nd.RotationStop(hinge, -1.0, 1.0, nd.Hertz(1e4), name="stop"))
        return s, 1e-3
    if kind == "crank":
        return slider_crank.build(), 1e-3
    if kind == "bushing":
        return chain.build(size, bushing=(1e5, 1e2)), 1e-3
    if kind == "chain":
        return chain.build(size), 1e-3
    return clearance_pendulum.build(), (1e-3, 2e-3)


def measure(kind, size, steps, jit):
    """(us per Stepper.step(), us per step of a whole simulate(), compile s)."""
    import nlpdyn as nd
    warnings.simplefilter("ignore")
    system, h = build(kind, size)
    stepper = nd.Stepper(system, h=h, jit=jit)
    for _ in range(3):
        stepper.step()
    tic = time.process_time()
    for _ in range(steps):
        stepper.step()
    per_step = (time.process_time() - tic) / steps * 1e6
    built = stepper.program.jit.record["seconds"] if jit else 0.0
    system, h = build(kind, size)
    tic = time.process_time()
    res = nd.simulate(system, steps * (h if np.isscalar(h) else h[0]), h=h, progress=False,
                      jit=jit)
    per_run = (time.process_time() - tic) / (len(res.t) - 1) * 1e6
    return per_step, per_run, built + res.info.get("jit", {}).get("seconds", 0.0)


def _run(args, cache):
    out = subprocess.run([sys.executable, str(HERE), "--measure", json.dumps(args)],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "NLPDYN_CACHE": cache})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="three cases, 3 repeats")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*json.loads(args.measure))))
        return
    repeat = 3 if args.quick else args.repeat
    print(f"{'case':>22} {'interpreted us':>16} {'compiled us':>16} {'ratio':>13} "
          f"{'first build s':>13}")
    print(f"{'':>22} {'step / run':>16} {'step / run':>16} {'step / run':>13}")
    with tempfile.TemporaryDirectory() as cache:
        for name, (kind, size, steps) in CASES.items():
            if args.quick and name not in QUICK:
                continue
            first = _run([kind, size, 10, True], cache)       # builds the libraries
            rows = {False: [], True: []}
            for _ in range(repeat):
                for jit in (False, True):
                    rows[jit].append(_run([kind, size, steps, jit], cache)[:2])
            off, on = (np.median(np.array(rows[j]), axis=0) for j in (False, True))
            print(f"{name:>22} {off[0]:7.0f} / {off[1]:6.0f} {on[0]:7.0f} / {on[1]:6.0f} "
                  f"{on[0] / off[0]:5.2f} / {on[1] / off[1]:5.2f} {first[2]:13.1f}", flush=True)


if __name__ == "__main__":
    main()
