"""Running a stepper to its end time, as ``simulate`` does: the steps cut to end at the
output times, Ctrl-C held until a step is recorded, a progress bar, and the result, partial
when a step fails."""
from __future__ import annotations

import signal
import threading
import time
import traceback
import warnings

import numpy as np

from .assembly import Recorder, build_result
from .progress import progress_bar
from .result import Result
from .step_outcome import StepFailure


class _HeldInterrupts:
    """Ctrl-C (SIGINT) during ``simulate`` is held until the current step is recorded, so the
    partial result stays consistent; a second Ctrl-C interrupts the step at once (``hard``),
    and none interrupts the result's assembly. Only in the main thread (elsewhere signals
    cannot be caught and nothing changes)."""

    def __enter__(self):
        self.requested, self.hard = False, True
        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested and self.hard:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


def _is_interrupt(err: BaseException) -> bool:
    """A KeyboardInterrupt, or a SystemError raised by a C extension (CasADi) around one."""
    while err is not None:
        if isinstance(err, KeyboardInterrupt):
            return True
        err = err.__cause__ or err.__context__
    return False


def _output_times(t_eval, t0, t_end, output_every, problems):
    """``t_eval`` as a float array (None stays None); what is wrong with it goes to ``problems``."""
    if t_eval is None:
        return None
    try:
        times = np.asarray(t_eval, dtype=float).ravel()
    except (TypeError, ValueError):
        problems.append(f"t_eval must be numbers, got {t_eval!r}")
        return None
    if not (times.size and np.all(np.isfinite(times)) and np.all(np.diff(times) > 0)
            and times[0] >= t0 and times[-1] <= t_end):
        problems.append(f"t_eval must be finite times, increasing, within [t0, t_end] = [{t0}, "
                        f"{t_end}], got {times.tolist() if times.size <= 8 else times.size}")
    if output_every != 1:
        problems.append(f"t_eval and output_every = {output_every!r} exclude each other")
    return times


def _close(t) -> float:
    """Times within this of ``t`` are ``t`` (the steps' round-off)."""
    return 1e-12 * max(1.0, abs(t))


def _next_time(times, t, t_end) -> float:
    """The first of ``times`` after ``t`` (beyond round-off), else ``t_end``."""
    k = np.searchsorted(times, t + _close(t), side="right")
    return float(times[k]) if k < len(times) else t_end


def _rows_at(t, times) -> np.ndarray:
    """Indices of the output points at ``times`` (to round-off), with the first and last."""
    if len(t) == 1:                 # a run that failed at its first step
        return np.zeros(1, dtype=int)
    k = np.clip(np.searchsorted(t, times), 1, len(t) - 1)
    k = np.where(np.abs(t[k - 1] - times) < np.abs(t[k] - times), k - 1, k)
    hit = np.abs(t[k] - times) <= [_close(x) for x in times]
    return np.unique(np.r_[0, k[hit], len(t) - 1])


def run_stepper(stepper, t_end: float, *, t0: float, output_every: int, times, progress,
                tic: float, setup: float) -> Result:
    """Step ``stepper`` (new, from ``simulate``) to ``t_end`` and return the run's result.

    Parameters
    ----------
    stepper : Stepper
        At its initial state, nothing stepped yet.
    t_end, t0, output_every, progress
        As :func:`~nlpdyn.simulate` takes them.
    times : numpy.ndarray or None
        ``simulate``'s ``t_eval`` as floats (``_output_times``).
    tic : float
        ``time.perf_counter()`` when ``simulate`` began (``Result.info["wall_time"]``).
    setup : float
        Seconds the stepper's construction took (``Result.info["setup_time"]``).

    Examples
    --------
    >>> import time
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
    >>> tic = time.perf_counter()
    >>> res = run_stepper(nd.Stepper(s, h=1e-3), 0.01, t0=0.0, output_every=1, times=None,
    ...                   progress=False, tic=tic, setup=0.0)
    >>> res.success, len(res.t)
    (True, 11)
    """
    recorder = Recorder(stepper, output_every)
    stepper._log = None       # the recorder keeps what the result needs (output_every)
    status, message, fault = 0, "reached t_end", ""
    bar = progress_bar(progress, total=float(t_end - t0), unit="s",
                       bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
    last_update = stepper.t
    with _HeldInterrupts() as interrupts:
        try:
            while stepper.t < t_end - 1e-12 * max(1.0, abs(t_end)):
                start = (stepper.t, stepper.q, stepper.v, stepper.z)
                saved = (stepper.gaps, len(stepper.ledger))
                try:
                    info = stepper.step(t_end if times is None else _next_time(times, stepper.t, t_end))
                    recorder.step(stepper, stepper.last_start, info)
                except StepFailure as err:
                    status, message = -1, str(err)
                    break
                except (KeyboardInterrupt, Exception) as err:
                    # a second Ctrl-C inside the step, or a fault in it: back to the last
                    # recorded step, keeping the run so far
                    stepper.t, stepper.q, stepper.v, stepper.z = start
                    stepper.gaps = saved[0]
                    stepper.ledger.truncate(saved[1])
                    recorder.drop_after(stepper)
                    if _is_interrupt(err):
                        status, message = -1, f"interrupted at t = {stepper.t:.9g}"
                    else:
                        status, message = -1, (f"step at t = {stepper.t:.9g} raised "
                                               f"{type(err).__name__}: {err}")
                        fault = traceback.format_exc()
                    break
                if interrupts.requested:
                    status, message = -1, f"interrupted at t = {stepper.t:.9g}"
                    break
                if stepper.t - last_update >= 0.01 * (t_end - t0):
                    bar.update(stepper.t - last_update)
                    last_update = stepper.t
        finally:
            interrupts.hard = False     # the result is assembled whatever Ctrl-C says now
            bar.update(stepper.t - last_update)
            bar.close()
        recorder.finish(stepper)
        if status == 0 and stepper.settings.strict:
            notes = stepper.run_notes()
            if notes:
                status, message = -1, "strict: " + "; ".join(notes)
        res = build_result(stepper, recorder, status, message)
        if times is not None:
            res = res._at_rows(_rows_at(res.t, times))
        res.info.update(setup_time=setup, wall_time=time.perf_counter() - tic)
        if fault:
            res.info["traceback"] = fault
        announced = stepper.initial_projection.get("note")     # warned as the stepper was built
        for note in res.info.get("warnings", []):
            if note != announced:
                warnings.warn(note, RuntimeWarning, stacklevel=3)
    return res
