"""Numerical dissipation at the user's step: force elements and sustained clearance contact.

1. The stop pendulum: a 1 kg, 1 m bar on an ideal revolute (axis Y), released horizontal,
   gravity -Z, with ``RotationStop(hinge, -1, 1, law)``, 1 s. Energy change over the run
   against the energy in play (kinetic plus stored, largest over the run), per evaluation
   ("implicit": energy-consistent, the default; "backward_euler"; "explicit") and h. With
   the hysteresis laws (Lankarani-Nikravesh, modified Kelvin-Voigt) the loss is compared
   with the law's own work column and with scipy's (the 1-dof equation, ``tests/
   test_joint_stops._stop_pendulum_loss``), and the ledger's residual:potential is shown.
   Impacts are resolved in time by default (``contact_resolution``); "at h" rows take
   every step at h.
2. The wheel rocking in its bore (``clearance_pendulum.build_rocking_wheel``, 0.5 mm
   revolute clearance, started 11.3 deg up the clearance circle, 0.15 s): its swing over
   t = 0.10-0.15 s against the scipy reference (``rocking_reference``), frictionless
   (amplitude) and with friction 0.2 at a spin of -10 rad/s (half peak-to-peak, about the
   friction angle), for the contact schemes "cone" (the default) and "cone_end" (end-of-step
   normals throughout).

    python benchmarks/energy_consistent.py [--only stops|laws|wheel] [--scheme euler|midpoint]

Every run takes the default scheme ("midpoint") unless ``--scheme`` names one.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nlpdyn as nd  # noqa: E402
from problems import clearance_pendulum as cp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_joint_stops import _stop_pendulum_loss as stop_pendulum_loss  # noqa: E402


def stop_pendulum(law, evaluation="implicit", gravity=(0.0, 0.0, -9.81)):
    """The bar on a revolute with a RotationStop at +-1 rad (its ``evaluation``)."""
    s = nd.System(gravity=gravity)
    bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0))
    hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0),
                                    name="hinge"))
    stop = s.add_force(nd.RotationStop(hinge, -1.0, 1.0, law, name="stop"))
    stop.evaluation = evaluation
    return s


def run(system, t_end, h, **options):
    """(Result, number of warnings), with the ``--scheme`` asked for."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = nd.simulate(system, t_end, h=h, progress=False, **SCHEME, **options)
    return res, len(caught)


def in_play(ledger) -> float:
    stored = [c for c in ledger.columns if c.startswith("stored:")]
    carried = ledger["carried"].abs() if "carried" in ledger else 0.0
    return float((ledger["kinetic"] + ledger[stored].sum(axis=1) + carried).max())


def stops_table():
    print("Hertz stop pendulum, 1 s: energy change (J) and its share of the energy in play")
    print(f"{'k':>6} {'evaluation':<15}" + "".join(f"{f'h = {h:g}':>22}" for h in HS))
    print("('at h': every step at h, contact_resolution=None)")
    for k in (1e4, 1e6):
        for evaluation, options in (("implicit", {}), ("implicit, at h", AT_H),
                                    ("backward_euler", {}), ("explicit", {})):
            cells = []
            for h in HS:
                res, warned = run(stop_pendulum(nd.Hertz(k), evaluation.split(",")[0]), 1.0, h,
                                  **options)
                change = res.energy[-1] - res.energy[0]
                share = change / in_play(res.energy_ledger())
                cells.append(f"{change:+9.4f} ({share:+6.2%}){'*' if warned else ' '}"
                             if res.success else "failed".rjust(21))
            print(f"{k:6.0e} {evaluation:<15}" + "".join(f"{c:>22}" for c in cells))
    print("(* the run warned that the discretisation changed the energy)")


def laws_table():
    print("\nHysteresis stops (implicit), 1 s: the loss against the law's own work and against "
          "scipy, per damping step (the law's default first); 'at h': every step at h "
          "(contact_resolution=None)")
    print(f"{'law':<34} {'damping':>13} {'h':>8} {'energy change':>14} {'work:stop':>10} "
          f"{'difference':>11} {'res:pot / in play':>18} {'scipy':>8} {'vs scipy':>9}")
    for k in (1e4, 1e6):
        for name, law in (("LankaraniNikravesh(e = 0.75)", nd.LankaraniNikravesh(k, 1.5, 0.75)),
                          ("ModifiedKelvinVoigt(c_e = 0.25)", nd.ModifiedKelvinVoigt(k, 0.25))):
            reference = stop_pendulum_loss(law)
            steps = (law.damping_step, "whole" if law.damping_step == "split" else "split")
            for damping, hs, options in ((steps[0], (1e-3, 2.5e-4), {}),
                                         (steps[1], (1e-3, 2.5e-4), {}),
                                         (steps[0] + ", at h", (1e-3,), AT_H),
                                         (steps[1] + ", at h", (1e-3,), AT_H)):
                for h in hs:
                    system = stop_pendulum(law)
                    system.forces[-1].damping_step = damping.split(",")[0]
                    res, _ = run(system, 1.0, h, **options)
                    ledger = res.energy_ledger()
                    change = res.energy[-1] - res.energy[0]
                    work = ledger["work:stop"].iloc[-1]
                    residual = np.abs(ledger["residual:potential"]).max() / in_play(ledger)
                    print(f"{name + f' k={k:.0e}':<34} {damping:>13} {h:8.1e} {change:14.4f} "
                          f"{work:10.4f} {(change - work) / abs(work):+11.2%} {residual:18.3%} "
                          f"{reference:8.4f} {(change - reference) / abs(reference):+9.2%}")


def wheel_table():
    print("\nRocking wheel, 0.15 s: swing over t = 0.10-0.15 s (deg)")
    print(f"{'case':<34} {'reference':>9}" + "".join(f"{f'h = {h:g}':>11}" for h in WHEEL_HS))
    for friction, spin, label in ((0.0, 0.0, "frictionless (amplitude)"),
                                  (0.2, -10.0, "friction 0.2 (half swing)")):
        for contact in ("cone", "cone_end"):
            cells, reference = [], None
            for h in WHEEL_HS:
                res, _ = run(cp.build_rocking_wheel(friction=friction, spin=spin), 0.15, h,
                             contact=contact)
                late = res.t >= 0.1 - 1e-12
                ref = cp.rocking_reference(res.t, friction=friction, spin=spin)[late]
                angle = cp.rocking_angle(res)[late]
                swing = (lambda x: np.abs(x).max()) if not friction else (lambda x: np.ptp(x) / 2)
                reference = np.degrees(swing(ref))
                cells.append(f"{np.degrees(swing(angle)):11.2f}")
            print(f"{label + ', ' + contact:<34} {reference:9.2f}" + "".join(cells))


HS = (1e-3, 2.5e-4, 1e-4)
AT_H = {"contact_resolution": None}
WHEEL_HS = (1e-3, 5e-4, 2.5e-4, 1e-4)
SCHEME = {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("stops", "laws", "wheel"))
    parser.add_argument("--scheme", choices=("euler", "midpoint"))
    args = parser.parse_args()
    if args.scheme:
        SCHEME["scheme"] = args.scheme
    print(f"scheme: {args.scheme or 'the default'}")
    for name, table in (("stops", stops_table), ("laws", laws_table), ("wheel", wheel_table)):
        if args.only in (None, name):
            table()


if __name__ == "__main__":
    main()
