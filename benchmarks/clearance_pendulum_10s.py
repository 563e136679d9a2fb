"""Ideal vs clearance pendulum over 10 s (CASES.md #4, seed 002 Fig. 37): steps, solver
work, wall time, energy change and constraint violation for each step setting.

    python benchmarks/clearance_pendulum_10s.py
    python benchmarks/clearance_pendulum_10s.py --t-end 2
"""
import sys
from pathlib import Path
import argparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # problems/: the repository root
from problems import clearance_pendulum  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=10.0)
    args = parser.parse_args()
    results = clearance_pendulum.compare_ideal_and_clearance(t_end=args.t_end)
    print(clearance_pendulum.comparison_table(results))


if __name__ == "__main__":
    main()
