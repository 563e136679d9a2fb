"""Cost of a joint stop's damping "split" against "whole" (``ForceElement.damping_step``).

The stop pendulum of ``benchmarks/energy_consistent.py`` (1 kg, 1 m bar, hysteresis stop at
+-1 rad, k = 1e6, h = 1e-3, 1 s): process CPU of the ``Stepper.step()`` loop, each run in
its own process, the two settings interleaved, medians of ``--repeat``; with each run's
loss against the law's own work column.

    python benchmarks/damping_step_cost.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAWS = ("LankaraniNikravesh(1e6, 1.5, 0.75)", "ModifiedKelvinVoigt(1e6, 0.25)")


def one(law_text, damping_step):
    """(step loop CPU s, energy change, work:stop) of one run."""
    import nlpdyn as nd
    from nlpdyn.forces.contact_laws import LankaraniNikravesh, ModifiedKelvinVoigt  # noqa: F401
    warnings.simplefilter("ignore")
    s = nd.System(gravity=(0, 0, -9.81))
    bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0))
    hinge = s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0), name="hinge"))
    stop = s.add_force(nd.RotationStop(hinge, -1.0, 1.0, eval(law_text), name="stop"))
    stop.damping_step = damping_step
    stepper = nd.Stepper(s, 1e-3)
    tic = time.process_time()
    while stepper.t < 1.0 - 1e-9:
        stepper.step()
    cpu = time.process_time() - tic
    res = stepper.result()
    return cpu, float(res.energy[-1] - res.energy[0]), float(res.energy_ledger()["work:stop"].iloc[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    print(f"command: python benchmarks/damping_step_cost.py --repeat {args.repeat}")
    rows = {}
    for _ in range(args.repeat):
        for law in LAWS:
            for step in ("split", "whole"):
                out = subprocess.run([sys.executable, __file__, "--one", law, step],
                                     capture_output=True, text=True, check=True)
                rows.setdefault((law, step), []).append(json.loads(out.stdout.splitlines()[-1]))
    print(f"{'law':<38} {'damping':>7} {'loop ms':>8} {'dE (J)':>9} {'work (J)':>9} {'diff':>7}")
    for (law, step), runs in rows.items():
        cpu = sorted(r[0] for r in runs)[len(runs) // 2]
        _, dE, work = runs[0]
        print(f"{law:<38} {step:>7} {cpu * 1e3:8.1f} {dE:9.4f} {work:9.4f} "
              f"{(dE - work) / abs(work):+7.2%}")


if __name__ == "__main__":
    main()
