"""What a run costs outside its steps: ``import nlpdyn``, the README's main job from the
command line, and its phases (set-up, result assembly), each in a process of its own.

Medians over interleaved repeats (with ``--baseline DIR``, another checkout's processes
alternate with this one's); process CPU seconds, and wall seconds for the command line:

- ``import``: ``import nlpdyn``, timed inside the process (``time.process_time``);
- ``main job``: ``python -m nlpdyn slider_crank --t-end 5 --h 1e-3 --plot FILE`` (the
  process's CPU and wall, interpreter start-up included; ``--no-plot`` in ``no plot``);
- ``set-up`` and ``assembly``: inside that job's ``simulate()``, the construction of the
  stepper (``res.info["setup_time"]``, wall) and ``build_result`` (CPU).

This machine sets ``PYTHONDONTWRITEBYTECODE``, so every process compiles nlpdyn's source;
``--bytecode`` runs them with byte-code caches (in a temporary ``PYTHONPYCACHEPREFIX``,
written by a first, untimed round), as a pip install has them.

    python benchmarks/startup.py [--repeat 5] [--baseline ../base] [--bytecode]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPORT = "import time; t = time.process_time(); import nlpdyn; print(time.process_time() - t)"
# the main job's simulate() with build_result timed (the CLI's own model and settings)
PHASES = """
import time, warnings
from nlpdyn import run
from problems import slider_crank
import nlpdyn as nd
timed = {}
build = run.build_result
def build_result(*args, **kwargs):
    t = time.process_time()
    try:
        return build(*args, **kwargs)
    finally:
        timed["assembly"] = time.process_time() - t
run.build_result = build_result
warnings.simplefilter("ignore")
t = time.process_time()
res = nd.simulate(slider_crank.build(), t_end=5.0, h=1e-3, progress=False)
print(time.process_time() - t, res.info["setup_time"], timed["assembly"])
"""


def _child(tree: Path, argv: list[str], env: dict) -> tuple[float, float, str]:
    """Run ``python argv`` on ``tree``: (process CPU s, wall s, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    out = subprocess.run([sys.executable, *argv], cwd=tree, capture_output=True, text=True,
                         env={**env, "PYTHONPATH": str(tree)}, check=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out.stdout


def _round(tree: Path, env: dict, plot: str) -> dict:
    """One process of each kind on ``tree``."""
    row = {"import": float(_child(tree, ["-c", IMPORT], env)[2])}
    job = ["-m", "nlpdyn", "slider_crank", "--t-end", "5", "--h", "1e-3", "--quiet"]
    row["main job cpu"], row["main job wall"], _ = _child(tree, [*job, "--plot", plot], env)
    row["no plot cpu"], row["no plot wall"], _ = _child(tree, [*job, "--no-plot"], env)
    simulate, setup, assembly = map(float, _child(tree, ["-c", PHASES], env)[2].split())
    row.update({"simulate cpu": simulate, "set-up wall": setup, "assembly cpu": assembly})
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default=None, help="another nlpdyn checkout to time too")
    parser.add_argument("--bytecode", action="store_true", help="with byte-code caches")
    args = parser.parse_args()
    trees = {"this": ROOT}
    if args.baseline:
        trees["baseline"] = Path(args.baseline).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MPLBACKEND="Agg")
        if args.bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
            for tree in trees.values():              # writes the caches, untimed
                _child(tree, ["-c", IMPORT], env)
        plot = str(Path(tmp) / "job.png")
        for tree in trees.values():                  # warms the compiled-step cache
            _round(tree, env, plot)
        rows = {name: [] for name in trees}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                rows[name].append(_round(tree, env, plot))
    keys = list(rows["this"][0])
    print(f"medians of {args.repeat} interleaved processes"
          + (", byte-code caches" if args.bytecode else ", source compiled"))
    print(f"{'':>10}" + "".join(f"{k:>15}" for k in keys))
    for name, runs in rows.items():
        print(f"{name:>10}" + "".join(f"{statistics.median(r[k] for r in runs):15.3f}"
                                      for k in keys))
    if args.baseline:
        print(f"{'ratio':>10}" + "".join(
            f"{statistics.median(r[k] for r in rows['this']) / statistics.median(r[k] for r in rows['baseline']):15.2f}"
            for k in keys))


if __name__ == "__main__":
    main()
