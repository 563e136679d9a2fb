"""Parameter sweeps: one simulation per point of a full-factorial grid, on any executor.

A point is built, simulated and measured where it runs (CasADi objects do not travel between
processes): the builder, the metrics and the simulate options go to the worker, a row of
plain data comes back. ``executor=None`` runs the points one after the other in this
process; a :class:`concurrent.futures.ProcessPoolExecutor`, a dask ``Client.get_executor()``
or any object with the ``Executor.submit`` interface runs them in parallel. Functions defined
in a script or a notebook are sent by value with cloudpickle (a dependency of nlpdyn;
without it they would have to be importable by the workers).
"""
from __future__ import annotations

import inspect
import itertools
import keyword
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .progress import progress_bar
from .stepper import StepperSettings, _as_dict, _step_bounds
# the points run in sweep_runner; its names stay importable from here
from .sweep_runner import (COLUMNS, GRACE, INTERRUPTED, TIMEOUT, WORKER_DIED,  # noqa: F401
                           _can_interrupt, _failure, _pickler, _run_here, _run_on, _Task)

if TYPE_CHECKING:
    from concurrent.futures import Executor

    import pandas as pd

    from .system import System

__all__ = ["sweep", "COLUMNS", "GRACE", "INTERRUPTED", "NOT_RUN", "TABLE_NAME", "TIMEOUT",
           "WORKER_DIED"]

TABLE_NAME = "sweep.csv"
"""The table's file in ``save_dir``."""
NOT_RUN = "not run: the sweep was interrupted"
"""The message of a point that Ctrl-C kept from running."""


def sweep(builder: Callable[..., System], grid: Mapping[str, Sequence], *, t_end: float,
          h: float | tuple[float, float] | Callable, metrics: Callable | None = None,
          executor: Executor | None = None, save_dir: str | os.PathLike | None = None,
          progress: bool | None = None, timeout: float | None = None,
          **simulate_options) -> pd.DataFrame:
    """Simulate every point of the full factorial of ``grid`` and tabulate the outcomes.

    Parameters
    ----------
    builder : callable
        ``builder(**point)`` returns the :class:`~nlpdyn.System` of one point; ``point`` maps
        each name of ``grid`` to one of its values.
    grid : dict of str -> list
        Parameter name (a Python identifier) -> the values it takes (a non-empty list, tuple,
        range or 1-D array). The points are the full factorial, the last name varying fastest.
    t_end : float
        Final time of every run (s).
    h : float, (h_min, h_max) or callable
        Step size or bounds as in :func:`~nlpdyn.simulate`, or ``h(**point)`` returning them
        (for a step that depends on the point, e.g. on a clearance).
    metrics : callable, optional
        ``metrics(result)`` returns a dict of named numbers (or other plain values), one
        column each. Called on partial results too (``success=False``). A number that is
        not finite (NaN, inf) makes the row ``success=False``, its message naming the metric.
    executor : concurrent.futures.Executor, optional
        None runs the points in this process, one after the other. Anything with ``submit``
        returning futures (``ProcessPoolExecutor``, dask ``Client.get_executor()``, ...)
        runs them in parallel; the executor is not shut down, except at Ctrl-C. When a
        worker process of a ``ProcessPoolExecutor`` dies (``BrokenProcessPool``), the points
        it took with it run again on a new pool of the same size (made and shut down here);
        a point whose worker dies again is a failed row (message beginning
        :data:`WORKER_DIED`).
    save_dir : str or path-like, optional
        Directory (created if missing) that receives each point's result
        (``point_<index>.npz``, :meth:`~nlpdyn.Result.save`, written where the point ran) and
        the table (``sweep.csv``); the table gets a ``file`` column with the file names.
    progress : bool or None
        One tqdm bar over the points; None shows it only on a terminal. The runs' own bars are
        always off.
    timeout : float, optional
        Seconds a point may take (build, simulate, metrics, save). A point past it stops
        and is a failed row whose message begins :data:`TIMEOUT`, without metrics or file;
        the sweep goes on. Where the point runs in a process's main thread on POSIX (this
        process, ``ProcessPoolExecutor`` workers) a ``SIGALRM`` timer interrupts it as
        Ctrl-C would: a running simulation stops after its step (at once if the step is
        still running :data:`GRACE` s later). With an executor, the sweep also stops waiting
        for a point reported running for 2 (timeout + GRACE) s (a ``ProcessPoolExecutor``
        reports one point running before a worker takes it): that covers points in worker
        threads, which nothing can interrupt; such a worker stays busy until its point
        ends. Dask reports points running only when they are done: there, and in threads,
        a timeout is not enforced.
    **simulate_options
        Passed to every :func:`~nlpdyn.simulate` call (``settings``, ``t0``, ``output_every``
        and :class:`~nlpdyn.StepperSettings` fields such as ``step_control="nlp"``).

    Returns
    -------
    pandas.DataFrame
        One row per point, in grid order whatever the order of completion. Columns: the
        parameters, ``success``, ``message``, ``wall_time`` (s, build + simulate + metrics
        + save of the point where it ran), ``file`` (with ``save_dir``), then the metrics. A
        point that fails (the builder, simulate or metrics raise, a metric is not finite, a
        file cannot be written, the run ends with ``success=False``, a timeout, a dead
        worker) is a row with ``success=False`` and the reason in ``message``; the sweep
        goes on. Metrics missing from a row are NaN. ``table.attrs["interrupted"]`` says
        whether Ctrl-C stopped the sweep.

    Raises
    ------
    ValueError
        Invalid arguments, every problem named at once, before any point runs.

    Notes
    -----
    Ctrl-C stops the sweep and returns the table (and writes ``sweep.csv``) with every row
    done, with a ``RuntimeWarning``. In this process the running point returns its partial
    result first (its row's message begins ``"interrupted"``). With an executor the sweep
    returns at once: the points not started are cancelled (message :data:`NOT_RUN`), a
    ``ProcessPoolExecutor`` is shut down without waiting and its workers are sent Ctrl-C
    (SIGINT), so that their running points end too.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> def pendulum(length):
    ...     s = nd.System(gravity=(0, 0, -9.81))
    ...     bar = s.add_body("bar", 1.0, (0.01, 0.01, 1e-4), position=(0, 0, -length))
    ...     _ = s.add_joint(nd.Spherical(s.ground, bar, point=(0, 0, 0)))
    ...     return s
    >>> table = nd.sweep(pendulum, {"length": [0.5, 1.0]}, t_end=0.01, h=1e-3, progress=False,
    ...                  metrics=lambda res: {"z_end": res.position("bar")[-1, 2]}, timeout=60)
    >>> list(table.columns)
    ['length', 'success', 'message', 'wall_time', 'z_end']
    >>> table["success"].tolist(), table.attrs["interrupted"]
    ([True, True], False)
    """
    points = _check_arguments(builder, grid, t_end, h, metrics, executor, save_dir, progress,
                              timeout, simulate_options)
    if save_dir is not None:
        Path(save_dir).mkdir(parents=True, exist_ok=True)
    task = _Task(builder, metrics, t_end, h, dict(simulate_options),
                 None if save_dir is None else os.fspath(Path(save_dir).resolve()),
                 len(str(len(points) - 1)), None if timeout is None else float(timeout))
    bar = progress_bar(progress, total=len(points), unit="point", desc="sweep")
    failed = [0]
    rows = [None] * len(points)
    try:
        if executor is None:
            interrupted = _run_here(task, points, rows, bar, failed)
        else:
            interrupted = _run_on(executor, task, points, rows, bar, failed)
    except KeyboardInterrupt:           # between two points
        interrupted = True
    finally:
        bar.close()
    rows = [row if row is not None else _failure(point, task, NOT_RUN, math.nan)
            for row, point in zip(rows, points)]
    import pandas as pd         # 0.16 s to import: only a sweep's table needs it
    table = pd.DataFrame(rows)
    table.attrs["interrupted"] = interrupted
    if save_dir is not None:
        table.to_csv(Path(save_dir) / TABLE_NAME, index=False)
    if interrupted:
        done = sum(not r["message"].startswith(NOT_RUN) for r in rows)
        warnings.warn(f"sweep interrupted (Ctrl-C): {done} of {len(rows)} points have a row of "
                      f"their own, the others say {NOT_RUN!r}", RuntimeWarning, stacklevel=2)
    return table


# ------------------------------------------------------------------------- validation
def _check_arguments(builder, grid, t_end, h, metrics, executor, save_dir, progress, timeout,
                     options) -> list[dict]:
    """Every problem with the arguments at once (ValueError); the grid's points otherwise."""
    problems = []
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer,
                                                                 np.floating)) \
                or not (np.isfinite(timeout) and timeout > 0):
            problems.append(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        elif executor is None and not _can_interrupt():
            problems.append("timeout in this process (executor=None) needs POSIX interval timers "
                            "and the main thread (signal.setitimer); run the sweep from the main "
                            "thread, or on an executor")
    if not callable(builder):
        problems.append(f"builder must be callable, got {type(builder).__name__}")
    if metrics is not None and not callable(metrics):
        problems.append(f"metrics must be callable or None, got {type(metrics).__name__}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        problems.append(f"executor must have a submit method (concurrent.futures.Executor) or "
                        f"be None, got {type(executor).__name__}")
    if progress is not None and not isinstance(progress, bool):
        problems.append(f"progress must be True, False or None, got {progress!r}")
    if isinstance(t_end, bool) or not isinstance(t_end, (int, float, np.integer, np.floating)) \
            or not np.isfinite(t_end) or t_end <= options.get("t0", 0.0):
        problems.append(f"t_end must be a finite number greater than t0 = {options.get('t0', 0.0)}, "
                        f"got {t_end!r}")
    if not callable(h):
        try:
            h_min, h_max = _step_bounds(h)
            if not (np.isfinite(h_min) and np.isfinite(h_max) and 0 < h_min <= h_max):
                raise ValueError
        except (TypeError, ValueError):
            problems.append(f"h must be a positive step size, a pair 0 < h_min <= h_max or a "
                            f"callable of the grid's parameters, got {h!r}")
    problems += _option_problems(options)
    if save_dir is not None:
        try:
            path = Path(save_dir)
            if path.exists() and not path.is_dir():
                problems.append(f"save_dir {str(path)!r} exists and is not a directory")
        except TypeError:
            problems.append(f"save_dir must be a path, got {type(save_dir).__name__}")
    names, values = _grid_problems(grid, problems)
    if not problems and callable(builder):
        problems += _signature_problems("builder", builder, names)
        if callable(h):
            problems += _signature_problems("h", h, names)
    if not problems and executor is not None:
        for name, obj in (("builder", builder), ("metrics", metrics), ("h", h),
                          ("simulate options", options)):
            try:
                _pickler.dumps(obj)
            except Exception as err:
                problems.append(f"{name} cannot be sent to the executor's workers "
                                f"({type(err).__name__}: {err})")
    if problems:
        raise ValueError("invalid sweep arguments:\n  - " + "\n  - ".join(problems))
    return [dict(zip(names, combination)) for combination in itertools.product(*values)]


def _grid_problems(grid, problems) -> tuple[list, list]:
    if not isinstance(grid, dict) or not grid:
        problems.append(f"grid must be a non-empty dict of parameter name -> list of values, "
                        f"got {grid!r}")
        return [], []
    names, values = [], []
    for name, vals in grid.items():
        if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            problems.append(f"grid: parameter name {name!r} is not a Python identifier")
        elif name in COLUMNS or name == "file":
            problems.append(f"grid: parameter name {name!r} is taken by a column of the table")
        if isinstance(vals, np.ndarray):
            ok = vals.ndim == 1 and vals.size > 0
        else:
            ok = isinstance(vals, (list, tuple, range)) and len(vals) > 0
        if not ok:
            problems.append(f"grid[{name!r}] must be a non-empty list of values, got {vals!r}")
        names.append(name)
        values.append(list(vals) if ok else [])
    return names, values


def _signature_problems(what, function, names) -> list[str]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):           # builtins and some C functions: cannot tell
        return []
    try:
        signature.bind(**dict.fromkeys(names))
    except TypeError as err:
        return [f"{what} cannot be called with the grid's parameters {names}: {err}"]
    return []


def _option_problems(options) -> list[str]:
    """Unknown simulate options and bad StepperSettings values, before any point runs."""
    problems = []
    for taken in ("system", "t_end", "h", "progress"):
        if taken in options:
            problems.append(f"simulate option {taken!r} is set by sweep itself")
    settings = options.get("settings")
    if settings is not None and not isinstance(settings, StepperSettings):
        problems.append(f"settings must be a StepperSettings, got {type(settings).__name__}")
        settings = None
    known = set(_as_dict(StepperSettings()))
    overrides = {k: v for k, v in options.items() if k not in ("settings", "t0", "output_every")}
    unknown = sorted(set(overrides) - known - {"system", "t_end", "h", "progress"})
    if unknown:
        problems.append(f"unknown simulate options {unknown}; known: "
                        f"settings, t0, output_every, {', '.join(sorted(known))}")
    elif overrides:
        try:
            StepperSettings(**{**_as_dict(settings or StepperSettings()),
                               **{k: v for k, v in overrides.items() if k in known}})
        except (TypeError, ValueError) as err:
            problems.append(f"simulate options: {err}")
    every = options.get("output_every", 1)
    if isinstance(every, bool) or not (isinstance(every, (int, np.integer)) and every >= 1):
        problems.append(f"output_every must be a whole number >= 1, got {every!r}")
    return problems
