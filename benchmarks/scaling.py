"""Cost per step against the number of bodies, timed from outside the step.

Cases: a chain of N revolute-jointed links (problems/chain.py, 1 kg, 0.1 m), the same chain
on revolute clearance joints (c = 0.1 mm), on stiff bushings evaluated implicitly (Newton
iterations, one sparse QP each), and the IFToMM A02 N-four-bar mechanism
(problems/four_bar_chain.py: 2N + 1 bodies, 3N redundant constraint rows). Fixed h = 1e-3,
``Stepper.step()`` timed in a Python loop after 10 warm-up steps; "growth" is the cost
relative to the row with 8 times fewer bodies. With MuJoCo installed (``pip install
mujoco``, the ``peers`` extra), the same revolute chain in MuJoCo (minimal coordinates, Euler,
``mj_step`` from a Python loop) is timed in the same run. Last, the A02 benchmark as the
library specifies it: N = 40, 20 s, h = 1e-3, 400 output points, the whole ``simulate()``.

    python benchmarks/scaling.py
    python benchmarks/scaling.py --quick        # fewer sizes, no 20 s run
    python benchmarks/scaling.py --only bushings   # the tables whose title holds "bushings"
"""
from __future__ import annotations

import sys
from pathlib import Path
import argparse
import time

import numpy as np

import nlpdyn as nd
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import chain, four_bar_chain  # noqa: E402


def per_step(system, steps, h=1e-3):
    stepper = nd.Stepper(system, h=h)
    for _ in range(10):
        stepper.step()
    tic = time.perf_counter()
    for _ in range(steps):
        stepper.step()
    return 1e3 * (time.perf_counter() - tic) / steps


def mujoco_chain(n, steps=2000):
    """The revolute chain in MuJoCo: ms per mj_step from a Python loop, or None."""
    try:
        import mujoco
    except ImportError:
        return None
    body = ""
    for k in range(n):
        body += (f'<body pos="{0.1 if k else 0} 0 0"><joint type="hinge" axis="0 0 1"/>'
                 f'<inertial pos="0.05 0 0" mass="1" diaginertia="1.25e-5 8.4e-4 8.4e-4"/>')
    body += "</body>" * n
    xml = (f'<mujoco><option timestep="1e-3" gravity="0 -9.81 0" integrator="Euler"/>'
           f'<worldbody>{body}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for _ in range(10):
        mujoco.mj_step(model, data)
    tic = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return 1e3 * (time.perf_counter() - tic) / steps


def print_table(title, sizes, build, bodies, steps, peer=None):
    print(f"\n{title}")
    print(f"{'N':>5} {'bodies':>7} {'ms/step':>9} {'growth x8':>10}" + ("  MuJoCo ms/step  ratio" if peer else ""))
    cost = {}
    for n in sizes:
        cost[n] = per_step(build(n), steps(n))
        growth = f"{cost[n] / cost[n // 8]:10.1f}" if n // 8 in cost else f"{'':>10}"
        row = f"{n:5d} {bodies(n):7d} {cost[n]:9.3f} {growth}"
        if peer:
            other = peer(n)
            row += f"  {other:14.4f} {cost[n] / other:6.0f}" if other else "  (MuJoCo not installed)"
        print(row, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="run the tables whose title holds this")
    args = parser.parse_args()
    quick = args.quick

    def table(title, *rest, **kw):
        if args.only in title:
            print_table(title, *rest, **kw)
    chains = (2, 8, 16, 64) if quick else (2, 4, 8, 16, 32, 64, 128)
    table("revolute chain (ideal joints, closed-form sparse solve)", chains, chain.build,
          lambda n: n, lambda n: 400 if n <= 16 else 100, peer=mujoco_chain)
    table("A02 N-four-bar (3N redundant rows)", (1, 5, 10, 20, 40) if not quick else (5, 40),
          four_bar_chain.build, lambda n: 2 * n + 1, lambda n: 200 if n <= 10 else 50)
    table("chain on revolute clearance joints (c = 0.1 mm)", (1, 2, 4, 8, 16, 32) if not quick
          else (2, 16), lambda n: chain.build(n, clearance=1e-4), lambda n: n,
          lambda n: 200 if n <= 8 else 50)
    table("chain on implicit bushings (1e5 N/m, 1e2 N m/rad)", (2, 4, 8, 16, 32, 64) if not quick
          else (2, 16), lambda n: chain.build(n, bushing=(1e5, 1e2)), lambda n: n,
          lambda n: 200 if n <= 8 else 50)
    if not quick and not args.only:
        tic = time.perf_counter()
        res = nd.simulate(four_bar_chain.build(40), t_end=four_bar_chain.T_END, h=1e-3,
                          output_every=50, progress=False)
        wall = time.perf_counter() - tic
        run = res.info["run"]
        print(f"\nA02 benchmark, N = 40, 20 s at h = 1e-3 ({run['n_steps']} steps, {len(res.t)} "
              f"output points): simulate() {wall:.1f} s, {res.message}; energy range "
              f"{np.ptp(res.energy):.3f} J of {res.energy[0]:.1f} J, largest constraint violation "
              f"{run['max_constraint_violation']:.1e}")


if __name__ == "__main__":
    main()
