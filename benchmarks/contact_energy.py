"""Energy of the contact step against physics: the default "cone" scheme (start-of-step
normals in sustained contact), "cone_end" (the circle's end-of-step normal throughout, the
default before) and the end-of-step-gradient scheme ("end_normal") side by side.

1. Drop: the planar bar (CASES.md #3 data, cm_z = 0) released with the bore centred in a 1 mm
   clearance falls onto the pin. Physics (``clearance_pendulum.planar_reference``, scipy,
   event-driven): one plastic impact losing m g c J / (J + m r^2), nothing more by the first
   turning point. Columns: the loss by the first turning point and the ledger's impact,
   sustained-contact and residual columns there.
2. Spinning bar: the bar spinning about the pin at 10 rad/s without gravity, bore pressed
   outward (exact: uniform rotation, constant energy, contact force m w^2 (r + c)); 2 s.
3. CASES.md #3 as given: loss by the first turning point against h for both schemes
   (they converge from opposite sides; the issue's Richardson value is 4.25e-3 J).
4. Clearance -> 0: largest distance of the planar bar's centre of mass from the ideal
   revolute's over 1 s.

    python benchmarks/contact_energy.py            # all, ~2 min
    python benchmarks/contact_energy.py --quick    # fewer step sizes
"""
import sys
from pathlib import Path
import argparse
import time

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import clearance_pendulum as cp  # noqa: E402

SCHEMES = ("cone", "cone_end", "end_normal")


def first_turning_point(res):
    loss, times = cp.turning_point_energy(res)
    i = int(np.searchsorted(res.t, times[0]))
    ledger = res.energy_ledger()
    return -loss[0], {k: ledger[f"{k}:pin"].iloc[i] for k in ("impact", "contact")} | \
        {"residual": ledger["residual"].iloc[i]}


def drop(steps):
    ref = cp.planar_reference(clearance=1e-3)
    print(f"1. drop onto the pin, c = 1 mm: reference (scipy) loss {-ref.turning_point[1]:.4e} J "
          f"in {len(ref.impacts)} impact; closed form {cp.impact_energy_closed_form(clearance=1e-3):.4e} J")
    print(f"{'scheme':<11} {'h':>8} {'loss 1st tp':>12} {'vs ref':>7} {'impact:':>11} "
          f"{'contact:':>11} {'residual':>10} {'min gap':>9}")
    for scheme in SCHEMES:
        for h in steps:
            res = nd.simulate(cp.build(cm_z=0.0, clearance=1e-3, axial_clearance=1e-3), t_end=1.1,
                              h=h, contact=scheme, progress=False)
            loss, cols = first_turning_point(res)
            print(f"{scheme:<11} {h:8.2e} {loss:12.4e} {loss / -ref.turning_point[1]:7.3f} "
                  f"{cols['impact']:11.4e} {cols['contact']:11.3e} {cols['residual']:10.2e} "
                  f"{res.gaps.min():9.1e}")


def spinning(steps):
    lam = cp.spinning_contact_force()
    print(f"\n2. spinning bar, 10 rad/s, c = 0.1 mm, 2 s, E = 16.68 J: exact energy change 0, "
          f"contact force {lam:.4f} N")
    print(f"{'joint':<24} {'h':>8} {'energy change J':>16} {'contact: J':>11} {'force error':>11}")
    for h in steps:
        ideal = cp.build_spinning()
        b = ideal.bodies[0]
        s = nd.System(gravity=(0, 0, 0))
        bar = s.add_body("bar", b.mass, b.inertia, position=(0.5, 0, 0), velocity=(0, 5.0, 0),
                         angular_velocity=(0, 0, 10.0))
        s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 0, 1), name="pin"))
        res = nd.simulate(s, t_end=2.0, h=h, progress=False)
        print(f"{'ideal revolute':<24} {h:8.2e} {res.energy[-1] - res.energy[0]:16.3e} {'-':>11} {'-':>11}")
        for scheme in SCHEMES:
            res = nd.simulate(cp.build_spinning(), t_end=2.0, h=h, contact=scheme, progress=False)
            ledger = res.energy_ledger()
            err = np.abs(res.lam[1:, :2].sum(axis=1) / lam - 1).max()
            print(f"{'clearance, ' + scheme:<24} {h:8.2e} {ledger.total.iloc[-1] - ledger.total[0]:16.3e} "
                  f"{ledger['contact:pin'].iloc[-1]:11.3e} {err:11.1e}")


def case3(steps):
    print("\n3. CASES.md #3 as given: energy lost by the first turning point (J)")
    print(f"{'h':>9} " + " ".join(f"{s + ' loss':>16} {'impact:':>10} {'contact:':>10} {'wall s':>6}"
                                 for s in SCHEMES))
    for h in steps:
        row = f"{h:9.3e} "
        for scheme in SCHEMES:
            tic = time.perf_counter()
            res = nd.simulate(cp.build(), t_end=1.1, h=h, contact=scheme, progress=False)
            wall = time.perf_counter() - tic
            loss, cols = first_turning_point(res)
            row += f"{loss:16.4e} {cols['impact']:10.2e} {cols['contact']:10.2e} {wall:6.1f} "
        print(row)


def clearance_to_zero(steps):
    print("\n4. clearance -> 0: largest CoM distance from the ideal revolute over 1 s (m), cone")
    print(f"{'h':>9} " + " ".join(f"{'c = ' + format(c, 'g'):>12}" for c in (1e-4, 1e-5, 1e-6)))
    for h in steps:
        ideal = nd.simulate(cp.build(cm_z=0.0, ideal=True), t_end=1.0, h=h, progress=False)
        row = f"{h:9.2e} "
        for c in (1e-4, 1e-5, 1e-6):
            res = nd.simulate(cp.build(cm_z=0.0, clearance=c, axial_clearance=c), t_end=1.0, h=h,
                              progress=False)
            row += f"{np.linalg.norm(res.position('bar') - ideal.position('bar'), axis=1).max():12.2e} "
        print(row)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer step sizes")
    quick = parser.parse_args().quick
    drop((2e-3, 1e-3) if quick else (2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4))
    spinning((1e-3,) if quick else (1e-3, 5e-4, 2.5e-4))
    case3((2e-3, 1e-3) if quick else (2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5))
    clearance_to_zero((1e-3,) if quick else (1e-3, 2.5e-4))


if __name__ == "__main__":
    main()
