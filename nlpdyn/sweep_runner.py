"""Running a sweep's points (:func:`nlpdyn.sweep`): in this process or on an executor, each
within its timeout, the rows of plain data they return, and what happens when Ctrl-C,
a timeout or a dead worker stops one."""
from __future__ import annotations

import concurrent.futures as cf
import math
import os
import pickle
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .stepper import _is_interrupt, simulate

try:                                  # ships functions of __main__ (scripts, notebooks) by value
    import cloudpickle as _pickler
except ImportError:                   # pragma: no cover - cloudpickle comes with dask
    _pickler = pickle

COLUMNS = ("success", "message", "wall_time")
"""Columns every table has after the parameters (``file`` too with ``save_dir``)."""
INTERRUPTED = "interrupted at t = "
"""How the message of a run stopped by Ctrl-C begins (:func:`~nlpdyn.simulate`)."""
TIMEOUT = "timeout: "
"""How the message of a point stopped by ``timeout`` begins."""
WORKER_DIED = "worker died: "
"""How the message of a point whose worker process ended abruptly begins."""
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
