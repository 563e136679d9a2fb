"""What a step gives: ``StepInfo`` for an accepted step, ``StepFailure`` when none could be
taken."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class StepFailure(RuntimeError):
    """A step could not be completed, even after retries.

    Raised by :meth:`Stepper.step`; :func:`simulate` catches it and returns the result up to
    the last accepted step with ``success`` False and the reason in ``message``.

    Parameters
    ----------
    message : str
        What failed: the time, the step size and the last solver status.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> try:
    ...     raise nd.StepFailure("t = 0.1: no step down to h_min")
    ... except RuntimeError as err:
    ...     print(err)
    t = 0.1: no step down to h_min
    """


@dataclass
class StepInfo:
    """What one accepted step did (the record behind ``Result.stats``).

    :meth:`Stepper.step` returns one; :class:`~nlpdyn.step_stats.StepStats` keeps its scalar
    fields, one array each over the run.

    Parameters
    ----------
    t, h : float
        The step's end time and its size (s).
    solver, status : str
        The solver that produced the accepted step (``"direct"``, ``"qpoases"``,
        ``"ipopt"``, ...) and its status.
    iterations : int
        Solver iterations (0 for the closed-form solve, -1 when not reported).
    wall_time : float
        Seconds spent on the step, retries included.
    eom_residual, constraint_violation, norm_error, min_gap, complementarity : float
        The step's checks, as in :class:`~nlpdyn.step_stats.StepStats`.
    retries : int
        Attempts rejected before the accepted one.
    projection_change, projection_energy : float
        The post-step projection's largest change and the potential energy it changed (J).
    gap_iterations : int
        Contact iterations after the step's first solve.
    contact_changed, contact_fallback : bool
        Whether the set of gaps carrying force changed; whether the contact scheme's
        fallback was tried.
    contact_scheme : str
        The contact scheme that produced the step (``""`` without gaps).
    contact_error : float
        Distance from the end-of-step contact conditions (m).
    mu, lam, gaps : ndarray
        Constraint impulses (n_eq,), contact impulses (n_gap,) and end-of-step gaps (n_gap,).
    contact_jacobian : ndarray, shape (n_gap, 6 n_bodies)
        The gaps' Jacobian the step was solved with.
    impact : ndarray of bool, shape (n_gap,)
        The gaps that took an impact in the step.
    friction : ndarray or None
        Friction forces (impulses over h), None without friction.
    predictor : ndarray or None
        See the field's own description below.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
    >>> info = nd.Stepper(s, h=1e-3).step()
    >>> info.t, info.retries
    (0.001, 0)
    """

    t: float
    h: float
    solver: str
    status: str
    iterations: int
    wall_time: float
    eom_residual: float
    constraint_violation: float
    norm_error: float
    min_gap: float
    complementarity: float
    retries: int
    projection_change: float
    gap_iterations: int = 0
    contact_changed: bool = False
    contact_scheme: str = ""
    contact_fallback: bool = False
    contact_error: float = 0.0
    projection_energy: float = 0.0
    mu: np.ndarray = field(repr=False, default=None)
    lam: np.ndarray = field(repr=False, default=None)
    gaps: np.ndarray = field(repr=False, default=None)
    contact_jacobian: np.ndarray = field(repr=False, default=None)
    impact: np.ndarray = field(repr=False, default=None)
    friction: np.ndarray = field(repr=False, default=None)
    predictor: np.ndarray = field(repr=False, default=None)
    """``scheme`` "midpoint": the velocity change over h that the step's velocity-dependent
    forces were taken with (its midpoint, where forces and joint rows were taken, follows
    from it: ``StepProgram.base_point``); None for the seed's step."""
