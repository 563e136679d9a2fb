"""Stiff force laws evaluated at the start of the step ("explicit"), energy-consistently
over it ("implicit", the default) or at its end ("backward_euler").

Part 1: a 1 kg mass hits a Lankarani-Nikravesh wall (K = 5e6 N/m^1.5, e = 0.75) at 1 m/s:
the exit speed the stepper produces at several h against scipy's (Radau, rtol 1e-10) for
the same law.
Part 2: the case studies at their step sizes: does the run finish, does the energy ever rise
above its start, what is lost, and what a step costs.

    python benchmarks/explicit_vs_implicit.py [--quick]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import nlpdyn as nd  # noqa: E402
from problems import rom_pendulum, slider_crank, triple_pendulum  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_contact_resolution import _exit_speed as exit_speed  # noqa: E402


def _drop(law, h, evaluation, speed=1.0):
    """A slider on a prismatic joint running into a translation stop 1e-9 m ahead."""
    s = nd.System(gravity=(0, 0, 0))
    slider = s.add_body("slider", 1.0, (1e-3, 1e-3, 1e-3), velocity=(speed, 0, 0))
    joint = s.add_joint(nd.Prismatic(s.ground, slider, (0, 0, 0), (1, 0, 0), name="slide"))
    stop = nd.TranslationStop(joint, -1.0, 1e-9, law, name="stop")
    stop.evaluation = evaluation
    s.add_force(stop)
    return s


def restitution_table(quick):
    law = nd.LankaraniNikravesh(5e6, 1.5, 0.75)
    print("Part 1: LN stop hit at 1 m/s (K = 5e6, e = 0.75, m = 1 kg; contact lasts ~5 ms)")
    print(f"  scipy Radau, same law: exit velocity {-exit_speed(law):.4f} m/s")
    print(f"  {'h (s)':>8} {'explicit':>10} {'implicit':>10} {'bw Euler':>10}")
    for h in ([1e-3, 1e-4] if quick else [1e-3, 5e-4, 2e-4, 1e-4, 2e-5]):
        row = []
        for evaluation in EVALUATIONS:
            res = nd.simulate(_drop(law, h, evaluation), 0.03, h=h, progress=False)
            row.append(f"{res.velocity('slider')[-1, 0]:10.4f}" if res.success else f"{'failed':>10}")
        print(f"  {h:8.1e} {' '.join(row)}")


EVALUATIONS = ("explicit", "implicit", "backward_euler")
CASES = [
    ("triple pendulum LN stops", lambda ev: triple_pendulum.build("ln", ev), 4.0, 1e-3),
    ("triple pendulum KV stops", lambda ev: triple_pendulum.build("kv", ev), 4.0, 1e-3),
    ("slider-crank, penalty B c=0.1 mm", lambda ev: _with_evaluation(
        slider_crank.build(spherical_clearance=1e-4, model="penalty"), ev), 1.0, 1e-3),
    ("slider-crank, penalty A c=0.1 mm", lambda ev: _with_evaluation(
        slider_crank.build(revolute_clearance=1e-4, model="penalty"), ev), 1.0, 1e-3),
    ("RoM pendulum, j = 0", lambda ev: rom_pendulum.build(evaluation=ev, damping=0.0), 5.0, 1e-3),
    ("RoM pendulum, j = 3.39", lambda ev: rom_pendulum.build(evaluation=ev), 5.0, 1e-3),
]


def _with_evaluation(system, evaluation):
    for el in system.forces:
        el.evaluation = evaluation
    return system


def case_table(quick):
    print("\nPart 2: case studies (E0: energy at t = 0)")
    print(f"  {'case':<34} {'eval':<14} {'h':>7} {'reached':>8} {'max E - E0':>11} "
          f"{'E_end - E0':>11} {'ms/step':>8}")
    for label, build, t_end, h in CASES:
        for evaluation in EVALUATIONS:
            t_end_run = min(t_end, 0.5) if quick else t_end
            tic = time.perf_counter()
            res = nd.simulate(build(evaluation), t_end_run, h=h, progress=False)
            wall = time.perf_counter() - tic
            E = res.energy
            print(f"  {label:<34} {evaluation:<14} {h:7.0e} {res.t[-1]:8.3f} "
                  f"{np.max(E - E[0]):11.2e} {E[-1] - E[0]:11.4f} {1e3 * wall / max(len(res.h), 1):8.2f}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    restitution_table(quick)
    case_table(quick)
