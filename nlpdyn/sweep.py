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
import signal
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tqdm.auto import tqdm

from .stepper import StepperSettings, _as_dict, _is_interrupt, _step_bounds, simulate

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
TIMEOUT = "timeout: "
"""How the message of a point stopped by ``timeout`` begins."""
WORKER_DIED = "worker died: "
"""How the message of a point whose worker process ended abruptly begins."""
NOT_RUN = "not run: the sweep was interrupted"
"""The message of a point that Ctrl-C kept from running."""
GRACE = 1.0
"""Seconds between the repeated interrupts of a point past its ``timeout`` (the second one
abandons a step at once, as a second Ctrl-C does)."""
_POLL = 0.05            # s between looks at the executor's futures (timeouts, dead workers)
_STOP = "_stop"         # row key (dropped from the table): Ctrl-C stopped this point


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
    timeout: float | None = None


def sweep(builder, grid, *, t_end, h, metrics=None, executor=None, save_dir=None, progress=None,
          timeout=None, **simulate_options) -> pd.DataFrame:
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
    bar = tqdm(total=len(points), unit="point", desc="sweep",
               disable=None if progress is None else not progress)
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


def _advance(bar, row, failed):
    """One point done; the bar shows how many failed (``failed``: a one-item count)."""
    if not row["success"]:
        failed[0] += 1
        bar.set_postfix(failed=failed[0], refresh=False)
    bar.update(1)


def _run_here(task, points, rows, bar, failed) -> bool:
    """The points one after the other in this process, into ``rows``; whether Ctrl-C
    stopped them."""
    for index, point in enumerate(points):
        row = _run_point(task, index, point)
        stop = row.pop(_STOP)
        rows[index] = row
        _advance(bar, row, failed)
        if stop:
            return True
    return False


def _run_on(executor, task, points, rows, bar, failed) -> bool:
    """The points on ``executor``, into ``rows``; whether Ctrl-C stopped them. Points lost
    with a dead worker of a ProcessPoolExecutor run again on a new pool: those that may
    have killed it (they were running) one at a time, on a pool of one worker, so that a
    second death names its point; the others together."""
    shipped = _pickler.dumps(task)
    # the longest points first (most steps, t_end / h), so none starts last on an idle pool
    queue = sorted(range(len(points)), key=lambda i: -_steps_estimate(task, points[i]))
    runs = _Runs(shipped, task, points, rows, bar, failed)
    broke_before = set()
    try:
        broken, suspects = runs.collect(executor, queue)
        while broken:
            if not isinstance(executor, cf.ProcessPoolExecutor):
                for index in broken:
                    runs.fail(index, f"{WORKER_DIED}the executor broke ({runs.errors[index]}); "
                                     f"not run again: only a ProcessPoolExecutor is remade")
                break
            alone = [i for i in broken if i in suspects or i in broke_before]
            again = [i for i in broken if i not in alone]
            broke_before.update(broken)
            pool = None
            for index in alone:
                pool = pool or runs.new_pool(executor, 1)
                if runs.collect(pool, [index])[0]:
                    runs.fail(index, f"{WORKER_DIED}its worker process ended abruptly, again "
                                     f"when the point ran alone ({runs.errors[index]})")
                    pool = None
            broken, suspects = (runs.collect(runs.new_pool(executor, _workers(executor)), again)
                                if again else ([], set()))
    except KeyboardInterrupt:
        runs.interrupt(executor)
        return True
    finally:
        runs.close()
    return False


def _workers(executor) -> int:
    """The number of workers of a ProcessPoolExecutor."""
    return getattr(executor, "_max_workers", None) or os.cpu_count() or 1


class _Runs:
    """The futures of a sweep on executors: submitted, watched (timeouts, dead workers) and
    turned into rows."""

    def __init__(self, shipped, task, points, rows, bar, failed):
        self.shipped, self.task, self.points, self.rows = shipped, task, points, rows
        self.bar, self.failed = bar, failed
        self.futures = {}           # future -> point index, of the current collect
        self.pools = []             # the pools made here
        self.errors = {}            # point index -> why its worker died
        self.limit = None if task.timeout is None else 2 * (task.timeout + GRACE)

    def fail(self, index, message):
        self.rows[index] = _failure(self.points[index], self.task, message, math.nan)
        _advance(self.bar, self.rows[index], self.failed)

    def new_pool(self, like, workers):
        pool = cf.ProcessPoolExecutor(workers, mp_context=getattr(like, "_mp_context", None))
        self.pools.append(pool)
        return pool

    def collect(self, executor, indices):
        """Run points ``indices`` on ``executor`` into the rows. Returns the points lost with
        a dead worker (BrokenProcessPool) and, of those, the ones seen running."""
        broken, suspects = [], set()
        self.futures = {}
        for index in indices:
            try:
                future = executor.submit(_run_shipped, self.shipped, index,
                                         _pickler.dumps(self.points[index]))
            except cf.BrokenExecutor as err:        # broke while submitting
                self.errors[index] = f"{type(err).__name__}: {err}"
                broken.append(index)
                continue
            self.futures[future] = index
        if not all(isinstance(f, cf.Future) for f in self.futures):
            for future, index in self.futures.items():   # not watched: in submission order
                self._take(future, index, broken, suspects, set())
            return broken, suspects
        watch = self.limit is not None or isinstance(executor, cf.ProcessPoolExecutor)
        started, pending = {}, set(self.futures)
        while pending:
            done, pending = cf.wait(pending, timeout=_POLL if watch else None,
                                    return_when=cf.FIRST_COMPLETED)
            now = time.monotonic()
            for future in pending:
                if future.running():
                    started.setdefault(future, now)
            for future in done:
                self._take(future, self.futures[future], broken, suspects, started)
            if self.limit is not None:
                for future in [f for f in pending if now - started.get(f, now) > self.limit]:
                    pending.discard(future)
                    future.cancel()
                    self.fail(self.futures[future],
                              f"{TIMEOUT}no result {self.limit:g} s after the executor reported "
                              f"the point running (timeout = {self.task.timeout:g} s); its worker "
                              f"may still run it")
        return broken, suspects

    def _take(self, future, index, broken, suspects, started):
        try:
            row = future.result()
            row.pop(_STOP, None)        # a worker's own Ctrl-C ends its point, not the sweep
        except cf.process.BrokenProcessPool as err:
            self.errors[index] = f"{type(err).__name__}: {err}"
            broken.append(index)
            if future in started:
                suspects.add(index)
            return
        except Exception as err:        # the row did not come back
            row = _failure(self.points[index], self.task,
                           f"executor: {type(err).__name__}: {err}", math.nan)
        self.rows[index] = row
        _advance(self.bar, row, self.failed)

    def interrupt(self, executor):
        """Ctrl-C: keep the rows done, cancel the rest, stop the process pools' workers."""
        for future, index in self.futures.items():
            if self.rows[index] is not None:
                continue
            if future.done() and not future.cancelled():
                self._take(future, index, [], set(), set())
            if self.rows[index] is None and not future.cancel():
                self.rows[index] = _failure(self.points[index], self.task,
                                            "interrupted: no result (the point was running, or "
                                            "queued for a worker)", math.nan)
        for pool in [executor, *self.pools]:
            if isinstance(pool, cf.ProcessPoolExecutor):
                pool.shutdown(wait=False, cancel_futures=True)
                if os.name == "posix":       # pid -> process; private, hence the care
                    for pid in list(getattr(pool, "_processes", None) or {}):
                        try:
                            os.kill(pid, signal.SIGINT)
                        except (OSError, TypeError):
                            pass

    def close(self):
        for pool in self.pools:
            pool.shutdown(wait=False, cancel_futures=True)


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


def _can_interrupt() -> bool:
    """Whether :class:`_Deadline` works here: POSIX interval timers, in the main thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class _Deadline:
    """Interrupt this process's main thread as Ctrl-C does ``seconds`` after entering, and
    again every :data:`GRACE` s until the exit (SIGALRM; nothing where it cannot work, see
    :func:`_can_interrupt`). The interrupt calls the SIGINT handler in place: inside
    :func:`~nlpdyn.simulate` the run stops after its step (the second one abandons the
    step), elsewhere it raises KeyboardInterrupt. ``fired`` says whether it went off."""

    def __init__(self, seconds):
        self.seconds, self.fired, self.done, self.previous = seconds, False, False, None

    def __enter__(self):
        if self.seconds is not None and _can_interrupt():
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, GRACE)
        return self

    def _fire(self, signum, frame):
        if self.done:                   # went off while the point was being left
            return
        self.fired = True
        handler = signal.getsignal(signal.SIGINT)
        if not callable(handler):       # SIGINT ignored or not set from Python
            raise KeyboardInterrupt
        handler(signal.SIGINT, frame)

    def __exit__(self, *exc):
        self.done = True
        if self.previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


def _run_point(task: _Task, index: int, point: dict) -> dict:
    """Build, simulate, measure (and save) one point within ``task.timeout``; never raises.
    The row's ``_STOP`` item says whether Ctrl-C stopped the point."""
    tic = time.perf_counter()
    stage = ["builder"]         # where the point is, for the messages
    deadline = _Deadline(task.timeout)
    try:
        with deadline:
            row = _measure(task, index, point, stage, deadline)
    except BaseException as err:        # Ctrl-C or the deadline, outside simulate
        if not _is_interrupt(err):
            raise
        row = _failure(point, task, f"interrupted in {stage[0]}", math.nan)
        row[_STOP] = not deadline.fired
    if deadline.fired:
        row = {**_failure(point, task, f"{TIMEOUT}the point took longer than timeout = "
                                       f"{task.timeout:g} s; stopped in {stage[0]}"
                                       + (f" ({row['message']})" if stage[0] == "simulate" else ""),
                          math.nan), _STOP: False}
    row["wall_time"] = time.perf_counter() - tic
    return row


def _measure(task, index, point, stage, deadline) -> dict:
    """The row of one point (``stage[0]``: the stage it is in)."""
    try:
        system = task.builder(**point)
        stage[0] = "h"
        h = _point_h(task, point)
        stage[0] = "simulate"
        res = simulate(system, task.t_end, h, progress=False, **task.options)
    except Exception as err:
        if _is_interrupt(err):          # Ctrl-C inside CasADi while the system compiled
            raise KeyboardInterrupt from err
        return {**_failure(point, task, f"{stage[0]} raised {type(err).__name__}: {err}",
                           math.nan), _STOP: False}
    row = {**point, "success": bool(res.success), "message": str(res.message),
           _STOP: not res.success and res.message.startswith(INTERRUPTED)}
    if deadline.fired:                  # simulate stopped at the deadline: no metrics, no file
        return row
    problems = []
    values = {}
    if task.metrics is not None:
        stage[0] = "metrics"
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
        problems += [f"metric {name!r} is not finite ({value})" for name, value in values.items()
                     if _is_number(value) and not math.isfinite(value)]
    file = None
    if task.save_dir is not None:
        stage[0] = "save"
        name = f"point_{index:0{task.file_width}d}.npz"
        try:
            res.save(Path(task.save_dir) / name)
            file = name
        except Exception as err:
            problems.append(f"save raised {type(err).__name__}: {err}")
    if problems:
        row["success"] = False
        row["message"] = "; ".join([row["message"], *problems])
    row["wall_time"] = math.nan
    if task.save_dir is not None:
        row["file"] = file
    row.update(values)
    return row


def _is_number(value) -> bool:
    """A real number (not a bool)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


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
