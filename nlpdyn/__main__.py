"""Command line: run a named case study, print a summary, write a plot.

    python -m nlpdyn slider_crank --t-end 5 --h 1e-3 --plot slider_crank.png
    python -m nlpdyn pendulum --h-min 1e-4 --h 1e-3 --step-control nlp
    python -m nlpdyn --list
"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="nlpdyn", description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", help="problem name (see --list)")
    parser.add_argument("--list", action="store_true", help="list the problems and exit")
    parser.add_argument("--t-end", type=float, help="final time [s] (default: the problem's)")
    parser.add_argument("--h", type=float, help="step size, or h_max with --h-min [s]")
    parser.add_argument("--h-min", type=float, help="smallest step: makes h variable")
    parser.add_argument("--step-control", choices=("fixed", "nlp", "adaptive"))
    parser.add_argument("--form", choices=("gauss", "explicit"))
    parser.add_argument("--plot", help="write an overview plot to this file (.png, .pdf)")
    parser.add_argument("--save", help="save the result to this .npz file")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    import nlpdyn as nd
    from problems import PROBLEMS

    if args.list:
        for name, p in PROBLEMS.items():
            print(f"{name:<20} {p.description}")
        return 0
    if args.problem not in PROBLEMS:
        parser.error(f"unknown problem {args.problem!r}; choose from {', '.join(PROBLEMS)}")
    problem = PROBLEMS[args.problem]
    h = args.h or problem.h
    if args.h_min is not None:
        h = (args.h_min, h)
    options = {k: v for k, v in (("step_control", args.step_control), ("form", args.form)) if v}
    res = nd.simulate(problem.build(), t_end=args.t_end or problem.t_end, h=h,
                      progress=False if args.quiet else None, **options)
    print(f"{args.problem}: {problem.description}")
    print(res.summary())
    if problem.report is not None:
        print(problem.report(res))
    if args.save:
        print(f"saved {res.save(args.save)}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        res.plot(bodies=list(problem.bodies) or None).savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return 0 if res.success else 1


if __name__ == "__main__":
    sys.exit(main())
