"""Contact iterations: how a step meets its gaps at the end of the step.

A scheme receives the step's first solve (gaps linearised at the start of the step) and a
callable that re-solves the step at the same h with the gaps linearised elsewhere, and returns
the step it accepts. It never sees the stepper (docs/FORMULATION.md, "Energy consistency of the
contact step" and "Radial clearance as a cone"):

``"cone"`` (default)
    Chord iterations on the end-of-step gaps with the contact coordinates' Jacobian kept at
    the start of the step: the impulses act along the start-of-step lever arms, the circle of
    a radial clearance is met exactly at the end of the step. Frictionless sustained contact
    does no work beyond O(h) oscillation, and as the clearance goes to 0 the rows become the
    ideal joint's. Each iteration is one QP with the gap laws' own curvature (the circle's,
    P/|d| across the normal), so a bore jammed at both ends converges.
``"end_normal"``
    Sequential QP on g(q_end) >= 0 with the end-of-step gap gradients and their full
    curvature: the impulse acts along the end-of-step normal, a backward-Euler treatment that
    dissipates O(h) energy in sustained contact. Kept as the fallback for steps where the
    chord iterations do not converge, and for comparison.
``"linearised"``
    The seed's scheme: gaps linearised at the start of the step, one solve, no iteration.
    Penetrates by ~h^2 |v|^2 / c and pushes the penetration out on the next step.

Coulomb friction in clearance contacts bounds each tangential impulse by mu times a normal
impulse known before the solve (the previous iterate's, or the previous step's on a step's
first solve). Each solve reports how far that lagged bound is from its own
(``StepSolution.friction_error``, m); the schemes add it to the iterates' error, so a step
with friction iterates until its friction cone holds with its own normal impulse, keeping
the impulses fixed in the second half of the iterations (the outcome reports the friction
error apart; it does not fail the step). ``"linearised"`` does not iterate: its friction
lags one step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

SCHEMES = ("cone", "end_normal", "linearised")
ACCEPTED = 10.0   # a scheme has converged once its error is within this many tolerances
JACOBIAN_OF_SCHEME = {"cone": "start", "end_normal": "iterate", "linearised": "start"}


@dataclass
class ContactOutcome:
    """The step a scheme accepts and how it got there."""

    sol: object
    out: list
    scheme: str
    iterations: int
    error: float
    converged: bool
    fallback: bool = False
    friction_error: float = 0.0     # m, the accepted solve's (not part of ``error``)


class ContactScheme:
    """Iterations of one scheme (see the module docstring).

    Parameters
    ----------
    name : str
        One of ``SCHEMES``.
    max_iterations : int
        Re-solves after the first (0: the first solve is the step).
    tol : float
        The iterations stop once the step's error (``error``) is below this (m); the scheme
        has converged when the best iterate's error is within ``ACCEPTED`` tolerances (room
        for IPOPT's own accuracy).
    force_scale : float
        Contact forces below 1e-8 of this count as zero.
    """

    def __init__(self, name: str, max_iterations: int, tol: float, force_scale: float):
        if name not in SCHEMES:
            raise ValueError(f"contact scheme must be one of {SCHEMES}, got {name!r}")
        self.name = name
        self.jacobian_at = JACOBIAN_OF_SCHEME[name]
        self.max_iterations = 0 if name == "linearised" else int(max_iterations)
        self.tol = float(tol)
        self.force_scale = float(force_scale)

    def first_curvature(self, previous_force, h, nv):
        """Curvature term of a step's first QP: the previous step's contact forces (a contact
        that persists has similar impulses), expanded about y = 0, where the first solve
        linearises the gaps (q_lin = q-)."""
        if self.max_iterations == 0 or previous_force is None or not previous_force.any():
            return None
        return previous_force * h, np.zeros(nv)

    def step_error(self, sol, out) -> float:
        """``error`` plus the solve's friction error (m; a scheme without iterations cannot
        reduce it)."""
        return self.error(out) + (sol.friction_error if self.max_iterations else 0.0)

    def error(self, out) -> float:
        """How far a step is from the end-of-step contact conditions (m): its penetration plus
        the largest true gap still open where the solve closed it (force acting, linearised
        end-of-step gap ~0)."""
        active = closed_in_solve(out, self.force_scale, self.tol)
        open_active = out[8][active].max(initial=0.0) if active.any() else 0.0
        return max(-out[7][0], 0.0) + max(open_active, 0.0)

    def refine(self, solve: Callable, check: Callable, drift: Callable, sol, out,
               previous_force=None) -> ContactOutcome:
        """Iterate from the first solve (``sol``, ``out``).

        ``solve(q_lin, curvature, jacobian_at)`` re-solves the step at the same h (q_lin None:
        the start of the step); ``check(sol, out)`` is the stepper's acceptance test;
        ``drift(y_new, y_old)`` the largest change of the end-of-step position between two
        iterates (m). Each iterate's error is its contact error plus its distance from the
        iterations' fixed point: the drift, or, once the last two contraction rates of these
        linearly converging iterations are below 1/2, the drift times r / (1 - r) with r the
        larger rate. The iterate with the least error is kept.
        """
        error = self.step_error(sol, out)
        last, last_out = sol, out
        previous_drift, previous_rate = 0.0, np.inf
        frozen = None
        for it in range(1, self.max_iterations + 1):
            if error <= self.tol:
                break
            y_prev = last.y
            # with friction, the second half of the iterations keeps the impulses fixed (where
            # friction and normal loads keep trading, a jammed bore, they never settle): the
            # friction bounds stop moving and the chord iterations converge on the gaps (the
            # impulses only weight the curvature term, which vanishes at the fixed point)
            if last.P_n_used is not None and frozen is None and it > self.max_iterations // 2:
                frozen = last.P_g
            last, last_out = solve(last_out[0], (last.P_g if frozen is None else frozen, last.y),
                                   self.jacobian_at)
            if not check(last, last_out)[0]:
                break
            last.gap_iterations = it
            step = drift(last.y, y_prev)
            rate = step / previous_drift if previous_drift > 0 else np.inf
            worse = max(rate, previous_rate)
            distance = step * worse / (1 - worse) if worse < 0.5 else step
            previous_drift, previous_rate = step, rate
            last_error = self.step_error(last, last_out) + distance
            if last_error < error:
                sol, out, error = last, last_out, last_error
        # friction drives the iterations but not the step's acceptance: a friction impulse
        # that has not settled within the iterations is reported, not retried
        friction = sol.friction_error if self.max_iterations else 0.0
        error = max(error - friction, 0.0)
        return ContactOutcome(sol, out, self.name, sol.gap_iterations, error,
                              error <= ACCEPTED * self.tol or self.max_iterations == 0,
                              friction_error=sol.friction_error)


def closed_in_solve(out, force_scale, tol):
    """Gaps the solve treated as closed: a contact force acts (above 1e-8 of ``force_scale``;
    an interior point leaves tiny multipliers on open rows) and the linearised end-of-step
    gap is within ``tol`` of 0."""
    return (out[3] > 1e-8 * force_scale) & (out[11] <= tol)


class WithFallback:
    """``primary``, and ``fallback`` from a fresh first solve where ``primary`` does not
    converge; the better of the two (least error) is kept and flagged."""

    def __init__(self, primary: ContactScheme, fallback: ContactScheme | None):
        self.primary, self.fallback = primary, fallback
        self.name, self.jacobian_at = primary.name, primary.jacobian_at

    def first_curvature(self, previous_force, h, nv):
        return self.primary.first_curvature(previous_force, h, nv)

    def refine(self, solve, check, drift, sol, out, previous_force=None) -> ContactOutcome:
        result = self.primary.refine(solve, check, drift, sol, out)
        if result.converged or self.fallback is None:
            return result
        curvature = self.fallback.first_curvature(previous_force, sol.h, len(sol.y))
        first, first_out = solve(None, curvature, self.fallback.jacobian_at)
        if not check(first, first_out)[0]:
            return result
        second = self.fallback.refine(solve, check, drift, first, first_out)
        second.fallback = True
        return second if second.error < result.error else result
