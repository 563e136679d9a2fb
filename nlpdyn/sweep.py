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

import concurrent.futures as cf
import inspect
import itertools
import keyword
import math
import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .stepper import StepperSettings, _as_dict, _step_bounds, simulate

try:                                  # ships functions of __main__ (scripts, notebooks) by value
    import cloudpickle as _pickler
except ImportError:                   # pragma: no cover - cloudpickle comes with dask
    _pickler = pickle

COLUMNS = ("success", "message", "wall_time")
"""Columns every table has after the parameters (``file`` too with ``save_dir``)."""
INTERRUPTED = "interrupted at t = "
"""How the message of a run stopped by Ctrl-C begins (:func:`~nlpdyn.simulate`)."""
TABLE_NAME = "sweep.csv"
"""The table's file in ``save_dir``."""


@dataclass(frozen=True)
class _Task:
    """What every point shares: sent once per point to wherever it runs."""

    builder: Callable
    metrics: Callable | None
    t_end: float
    h: Any
    options: dict = field(default_factory=dict)
    save_dir: str | None = None
    file_width: int = 1


def sweep(builder, grid, *, t_end, h, metrics=None, executor=None, save_dir=None, progress=None,
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
        column each. Called on partial results too (``success=False``).
    executor : concurrent.futures.Executor, optional
        None runs the points in this process, one after the other. Anything with ``submit``
        returning futures (``ProcessPoolExecutor``, dask ``Client.get_executor()``, ...)
        runs them in parallel; the executor is not shut down.
    save_dir : str or path-like, optional
        Directory (created if missing) that receives each point's result
        (``point_<index>.npz``, :meth:`~nlpdyn.Result.save`, written where the point ran) and
        the table (``sweep.csv``); the table gets a ``file`` column with the file names.
    progress : bool or None
        One tqdm bar over the points; None shows it only on a terminal. The runs' own bars are
        always off.
    **simulate_options
        Passed to every :func:`~nlpdyn.simulate` call (``settings``, ``t0``, ``output_every``
        and :class:`~nlpdyn.StepperSettings` fields such as ``step_control="nlp"``).

    Returns
    -------
    pandas.DataFrame
        One row per point, in grid order whatever the order of completion. Columns: the
        parameters, ``success``, ``message``, ``wall_time`` (s, build + simulate + metrics
        + save of the point where it ran), ``file`` (with ``save_dir``), then the metrics. A
        point that fails (the builder, simulate or metrics raise, a file cannot be written, or
        the run ends with ``success=False``) is a row with ``success=False`` and the reason in
        ``message``; the sweep goes on. Metrics missing from a row are NaN.

    Raises
    ------
    ValueError
        Invalid arguments, every problem named at once, before any point runs.
    KeyboardInterrupt
        Ctrl-C: in this process, after the running point has returned its partial result;
        with an executor, at once, the points not yet started cancelled.

    Example
    -------
    >>> import nlpdyn as nd
    >>> def pendulum(length):
    ...     s = nd.System(gravity=(0, 0, -9.81))
    ...     bar = s.add_body("bar", 1.0, (0.01, 0.01, 1e-4), position=(0, 0, -length))
    ...     _ = s.add_joint(nd.Spherical(s.ground, bar, point=(0, 0, 0)))
    ...     return s
    >>> table = nd.sweep(pendulum, {"length": [0.5, 1.0]}, t_end=0.01, h=1e-3, progress=False,
    ...                  metrics=lambda res: {"z_end": res.position("bar")[-1, 2]})
    >>> list(table.columns)
    ['length', 'success', 'message', 'wall_time', 'z_end']
    >>> table["success"].tolist()
    [True, True]
    """
    points = _check_arguments(builder, grid, t_end, h, metrics, executor, save_dir, progress,
                              simulate_options)
    if save_dir is not None:
        Path(save_dir).mkdir(parents=True, exist_ok=True)
    task = _Task(builder, metrics, t_end, h, dict(simulate_options),
                 None if save_dir is None else os.fspath(Path(save_dir).resolve()),
                 len(str(len(points) - 1)))
    bar = tqdm(total=len(points), unit="point", desc="sweep",
               disable=None if progress is None else not progress)
    failed = [0]
    try:
        if executor is None:
            rows = []
            for index, point in enumerate(points):
                rows.append(_run_point(task, index, point))
                if not rows[-1]["success"] and rows[-1]["message"].startswith(INTERRUPTED):
                    # simulate returned at Ctrl-C: the sweep stops too
                    raise KeyboardInterrupt(f"sweep interrupted at point {index} {point}")
                _advance(bar, rows[-1], failed)
        else:
            rows = _run_on(executor, task, points, bar, failed)
    finally:
        bar.close()
    table = pd.DataFrame(rows)
    if save_dir is not None:
        table.to_csv(Path(save_dir) / TABLE_NAME, index=False)
    return table


def _advance(bar, row, failed):
    """One point done; the bar shows how many failed (``failed``: a one-item count)."""
    if not row["success"]:
        failed[0] += 1
        bar.set_postfix(failed=failed[0], refresh=False)
    bar.update(1)


def _run_on(executor, task, points, bar, failed) -> list[dict]:
    """The points on ``executor``; rows in grid order."""
    shipped = _pickler.dumps(task)
    # the longest points first (most steps, t_end / h), so none starts last on an idle pool
    order = sorted(range(len(points)), key=lambda i: -_steps_estimate(task, points[i]))
    futures = {executor.submit(_run_shipped, shipped, index, _pickler.dumps(points[index])): index
               for index in order}
    rows = [None] * len(points)
    try:
        done = (cf.as_completed(futures) if all(isinstance(f, cf.Future) for f in futures)
                else futures)
        for future in done:
            index = futures[future]
            try:
                rows[index] = future.result()
            except Exception as err:         # the worker died, or the row did not come back
                rows[index] = _failure(points[index], task,
                                       f"executor: {type(err).__name__}: {err}", math.nan)
            _advance(bar, rows[index], failed)
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    return rows


def _point_h(task, point):
    """The point's h (``h`` as given, or called with the point's parameters)."""
    return task.h(**point) if callable(task.h) else task.h


def _steps_estimate(task, point) -> float:
    """t_end / h of a point (the smaller h of a pair); 0 where h cannot be evaluated (the
    point fails in its worker and says why)."""
    try:
        h = _point_h(task, point)
        return float(task.t_end) / float(np.min(h))
    except Exception:
        return 0.0


def _run_shipped(shipped: bytes, index: int, point: bytes) -> dict:
    """Worker side: unpack what :func:`_run_on` sent and run the point."""
    return _run_point(pickle.loads(shipped), index, pickle.loads(point))


def _failure(point, task, message, wall_time) -> dict:
    row = {**point, "success": False, "message": message, "wall_time": wall_time}
    if task.save_dir is not None:
        row["file"] = None
    return row


def _run_point(task: _Task, index: int, point: dict) -> dict:
    """Build, simulate, measure (and save) one point; never raises."""
    tic = time.perf_counter()
    stage = "builder"
    try:
        system = task.builder(**point)
        stage = "h"
        h = _point_h(task, point)
        stage = "simulate"
        res = simulate(system, task.t_end, h, progress=False, **task.options)
    except Exception as err:
        return _failure(point, task, f"{stage} raised {type(err).__name__}: {err}",
                        time.perf_counter() - tic)
    row = {**point, "success": bool(res.success), "message": str(res.message)}
    problems = []
    values = {}
    if task.metrics is not None:
        try:
            values = task.metrics(res)
            if not isinstance(values, dict):
                raise TypeError(f"metrics must return a dict, got {type(values).__name__}")
            clash = sorted(set(values) & (set(point) | set(COLUMNS) | {"file"}))
            if clash:
                raise ValueError(f"metric names {clash} are taken by the table's columns")
        except Exception as err:
            problems.append(f"metrics raised {type(err).__name__}: {err}")
            values = {}
    file = None
    if task.save_dir is not None:
        name = f"point_{index:0{task.file_width}d}.npz"
        try:
            res.save(Path(task.save_dir) / name)
            file = name
        except Exception as err:
            problems.append(f"save raised {type(err).__name__}: {err}")
    if problems:
        row["success"] = False
        row["message"] = "; ".join([row["message"], *problems])
    row["wall_time"] = time.perf_counter() - tic
    if task.save_dir is not None:
        row["file"] = file
    row.update(values)
    return row


# ------------------------------------------------------------------------- validation
def _check_arguments(builder, grid, t_end, h, metrics, executor, save_dir, progress,
                     options) -> list[dict]:
    """Every problem with the arguments at once (ValueError); the grid's points otherwise."""
    problems = []
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
