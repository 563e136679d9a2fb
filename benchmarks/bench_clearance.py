"""Per-step cost of the clearance case studies (CASES.md #1-#4) in every step-size mode.

Prints, per case and mode: steps, median and p90 wall time per step (ms, whole
Stepper.step), mean QP solves per step (1 + gap iterations, fixed-h solves only), mean
IPOPT iterations per step ("nlp" mode), the share of steps that needed a retry, and the
run's energy change.

    python benchmarks/bench_clearance.py
    python benchmarks/bench_clearance.py --t-end 0.5      # shorter runs
"""
from __future__ import annotations

import argparse

import numpy as np

import nlpdyn as nd
from problems import clearance_pendulum, clearance_slider, prismatic_slider

CASES = [
    ("#1 cylindrical slider", clearance_slider.build, 0.5,
     [("fixed 1e-3", 1e-3, {}), ("adaptive [1e-3, 1e-2]", (1e-3, 1e-2), {}),
      ("nlp [1e-3, 1e-2] (seed)", (1e-3, 1e-2), dict(step_control="nlp"))]),
    ("#2 triangular slider", prismatic_slider.build, 0.5,
     [("fixed 1e-3", 1e-3, {}), ("adaptive [1e-3, 1e-2]", (1e-3, 1e-2), {}),
      ("nlp [1e-3, 1e-2] (seed)", (1e-3, 1e-2), dict(step_control="nlp"))]),
    ("#3 pendulum, cm_z 0.05", clearance_pendulum.build, 2.0,
     [("fixed 1e-3", 1e-3, {}), ("fixed 2e-4", 2e-4, {}),
      ("adaptive [1e-3, 2e-3]", (1e-3, 2e-3), {}),
      ("adaptive [2e-4, 1e-3]", (2e-4, 1e-3), {}),
      ("nlp [1e-3, 2e-3] (seed)", (1e-3, 2e-3), dict(step_control="nlp")),
      ("nlp [2e-4, 1e-3] (seed)", (2e-4, 1e-3), dict(step_control="nlp"))]),
    ("#4 pendulum, ideal joint", lambda: clearance_pendulum.build(ideal=True), 2.0,
     [("fixed 1e-3", 1e-3, {}), ("fixed 2e-4", 2e-4, {}),
      ("nlp [1e-3, 2e-3] (seed)", (1e-3, 2e-3), dict(step_control="nlp"))]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=None, help="override every run's t_end")
    args = parser.parse_args()
    head = (f"{'case':<25} {'mode':<24} {'steps':>6} {'median ms':>9} {'p90 ms':>7} "
            f"{'QPs/step':>8} {'IPOPT it':>8} {'retried':>7} {'dE J':>9}")
    print(head)
    print("-" * len(head))
    for case, build, t_end, modes in CASES:
        for label, h, options in modes:
            nd.simulate(build(), t_end=0.05, h=h, progress=False, **options)   # warm caches
            res = nd.simulate(build(), t_end=args.t_end or t_end, h=h, progress=False, **options)
            st = res.stats
            ms = 1e3 * st.wall_time
            nlp = options.get("step_control") == "nlp"
            qps = np.mean(st.gap_iterations + (0 if nlp else 1))
            ipopt = f"{np.mean(st.iterations):8.2f}" if nlp else f"{'-':>8}"
            note = "" if res.success else f"  STOPPED: {res.message[:60]}"
            print(f"{case:<25} {label:<24} {len(ms):6d} {np.median(ms):9.3f} "
                  f"{np.percentile(ms, 90):7.3f} {qps:8.2f} {ipopt} "
                  f"{100 * np.mean(st.retries > 0):6.1f}% "
                  f"{res.energy[-1] - res.energy[0]:9.4f}{note}")


if __name__ == "__main__":
    main()
