"""Per-step record of a run (:class:`StepStats`), kept in every :class:`~nlpdyn.Result`."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class StepStats:
    """Per-step record, each array of shape (n_steps,), aligned with ``Result.t[1:]``.

    Parameters
    ----------
    solver, status, contact_scheme : ndarray of str, shape (n_steps,)
    iterations, retries, gap_iterations : ndarray of int, shape (n_steps,)
    contact_changed, contact_fallback : ndarray of bool, shape (n_steps,)
    wall_time, eom_residual, constraint_violation, norm_error : ndarray, shape (n_steps,)
    min_gap, complementarity, projection_change, contact_error : ndarray, shape (n_steps,)
    projection_energy : ndarray, shape (n_steps,)
        The attributes above, each empty by default (a run of no steps).

    Attributes
    ----------
    solver : str array      which solver produced the accepted step ("direct", "qpoases", "ipopt", ...)
    status : str array      that solver's status ("solved", IPOPT's return status, ...)
    iterations : int array  solver iterations (0 for the closed-form solve, -1 when not reported)
    wall_time : float array seconds spent on the step, retries included
    eom_residual : float    max |M vdot + S - Q_A - Pi^T mu - Pi_g^T lambda| (N, N m)
    constraint_violation    max |Phi_eq(q, t)| at the end of the step (true, not linearised)
    norm_error              max over bodies of | |p| - 1 |
    min_gap                 smallest true gap at the end of the step (inf without gaps)
    complementarity         max |lambda_j * g_lin,j| (impulse x velocity units)
    retries : int array     attempts rejected before the accepted one
    projection_change       largest change made by the post-step projection (0 when off)
    gap_iterations : int    contact iterations after the step's first solve
    contact_changed : bool  whether the set of gaps carrying force changed in the step
    contact_scheme : str    the contact scheme that produced the step ("cone", "end_normal",
                            "linearised"; "" without gaps)
    contact_fallback : bool the step's primary contact scheme did not converge and its
                            fallback (``StepperSettings.contact_fallback``) was tried
    contact_error : float   the accepted step's distance from the end-of-step contact
                            conditions (m): penetration, open gaps carrying force, and the
                            last iteration's change of the end position
    projection_energy       potential energy changed by the post-step projection (J)

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
    >>> stats = nd.simulate(s, t_end=0.003, h=1e-3).stats
    >>> stats.n_steps, stats.retries.tolist()
    (3, [0, 0, 0])
    """

    solver: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="U16"))
    status: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="U48"))
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    wall_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    eom_residual: np.ndarray = field(default_factory=lambda: np.zeros(0))
    constraint_violation: np.ndarray = field(default_factory=lambda: np.zeros(0))
    norm_error: np.ndarray = field(default_factory=lambda: np.zeros(0))
    min_gap: np.ndarray = field(default_factory=lambda: np.zeros(0))
    complementarity: np.ndarray = field(default_factory=lambda: np.zeros(0))
    retries: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    projection_change: np.ndarray = field(default_factory=lambda: np.zeros(0))
    gap_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    contact_changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    contact_scheme: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="U16"))
    contact_fallback: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    contact_error: np.ndarray = field(default_factory=lambda: np.zeros(0))
    projection_energy: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_steps(self) -> int:
        return len(self.wall_time)

    def summary(self) -> dict:
        """Counters over the run: steps, retries, iterations, wall time (median, p90, total).

        Returns
        -------
        dict
            ``"n_steps"``, ``"n_retried_steps"``, iteration counts, wall times, the largest
            residuals and contact errors, and the steps per solver; only ``"n_steps"`` for a
            run of no steps.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> nd.StepStats().summary()
        {'n_steps': 0}
        """
        n = self.n_steps
        if n == 0:
            return {"n_steps": 0}
        it = self.iterations[self.iterations >= 0]
        return {
            "n_steps": n,
            "n_retried_steps": int(np.count_nonzero(self.retries)),
            "total_iterations": int(it.sum()) if it.size else -1,
            "mean_iterations": float(it.mean()) if it.size else float("nan"),
            "wall_time_total": float(self.wall_time.sum()),
            "wall_time_median": float(np.median(self.wall_time)),
            "wall_time_p90": float(np.percentile(self.wall_time, 90)),
            "max_eom_residual": float(self.eom_residual.max()),
            "max_constraint_violation": float(self.constraint_violation.max()),
            "max_norm_error": float(self.norm_error.max()),
            "n_contact_fallback_steps": int(np.count_nonzero(self.contact_fallback)),
            "max_contact_error": float(self.contact_error.max()),
            "solvers": {s: int(np.count_nonzero(self.solver == s)) for s in np.unique(self.solver)},
        }
