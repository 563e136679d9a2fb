"""Contact iterations: how a step meets its gaps at the end of the step.

A scheme receives the step's first solve (gaps linearised at the start of the step) and a
callable that re-solves the step at the same h with the gaps linearised elsewhere, and returns
the step it accepts. It never sees the stepper (docs/FORMULATION.md, "Energy consistency of the
contact step" and "Radial clearance as a cone"):

``"cone"`` (default)
    Chord iterations on the end-of-step gaps with the contact coordinates' Jacobian kept at
    the start of the step: the impulses act along the start-of-step lever arms, the circle of
    a radial clearance is met exactly at the end of the step, and as the clearance goes to 0
    the rows become the ideal joint's. A round gap that was closed at the start of the step
    and of the one before (sustained contact) pushes along its start-of-step normal (SHAKE's
    constraint step): frictionless sliding along the bore does no work, as on the ideal
    joint. A gap that closes (an impact, over the closing step and the next) pushes along
    its normal at the end of the step: the plastic impact's loss. Where the start normals'
    iterations do not converge (a bore jammed at both ends, a clearance far below the step's
    motion), the step is iterated again from its first solve with end normals throughout
    ("cone_end", counted in ``Result.stats.contact_scheme``).
``"cone_end"``
    The cone with the normal at the end of the step for every gap. Each iteration is one QP
    with the gap laws' own curvature (the circle's, P/|d| across the normal), so a bore
    jammed at both ends converges; sustained sliding along a curved gap loses lam c dphi^2
    per step (dphi: the angle the normal turns in it), first order in h.
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
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    from .step_nlp import StepSolution

SCHEMES = ("cone", "cone_end", "end_normal", "linearised")
ACCEPTED = 10.0   # a scheme has converged once its error is within this many tolerances
SUSTAINED_RETRY = 8     # "cone" steps needing end normals in a row retry the start ones this often
TURN_HELD = np.radians(15.0)    # "cone": a contact normal turning more in a step, end normals
# the rows of each scheme's first solve ("cone" iterates on from it with "sustained" rows)
JACOBIAN_OF_SCHEME = {"cone": "start", "cone_end": "start", "end_normal": "iterate",
                      "linearised": "start"}


@dataclass
class ContactOutcome:
    """The step a scheme accepts and how it got there.

    Parameters
    ----------
    sol : StepSolution
        The accepted solve.
    out : list
        Its finish outputs (end-of-step state, gaps, forces).
    scheme : str
        The scheme that gave it ("cone_end" where "cone" needed the end normals).
    iterations : int
        Re-solves after the first.
    error : float
        Its contact error (m, ``ContactScheme.error`` plus the iterations' distance).
    converged : bool
        Whether the error is within ``ACCEPTED`` tolerances.
    fallback : bool
        Whether the fallback scheme gave it (:class:`WithFallback`).
    friction_error : float
        The accepted solve's friction error (m; not part of ``error``).

    Examples
    --------
    >>> outcome = ContactOutcome(None, [], "cone", 2, 1e-10, True)
    >>> outcome.fallback, outcome.friction_error
    (False, 0.0)
    """

    sol: StepSolution
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

    Raises
    ------
    ValueError
        An unknown scheme.

    Examples
    --------
    >>> scheme = ContactScheme("cone", 8, 1e-9, force_scale=1.0)
    >>> scheme.jacobian_at, scheme.max_iterations
    ('start', 8)
    >>> ContactScheme("linearised", 8, 1e-9, 1.0).max_iterations       # never iterates
    0
    """

    def __init__(self, name: str, max_iterations: int, tol: float,
                 force_scale: float) -> None:
        if name not in SCHEMES:
            raise ValueError(f"contact scheme must be one of {SCHEMES}, got {name!r}")
        self.name = name
        self.jacobian_at = JACOBIAN_OF_SCHEME[name]
        self.max_iterations = 0 if name == "linearised" else int(max_iterations)
        self.tol = float(tol)
        self.force_scale = float(force_scale)
        self.reset()

    def reset(self) -> None:
        """Forget the steps before (how many in a row needed the end normals).

        Examples
        --------
        >>> scheme = ContactScheme("cone", 8, 1e-9, 1.0)
        >>> scheme.reset()
        """
        self._end_streak = 0

    def first_curvature(self, previous_force: np.ndarray | None, h: float,
                        nv: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Curvature term of a step's first QP: the previous step's contact forces (a contact
        that persists has similar impulses), expanded about y = 0, where the first solve
        linearises the gaps (q_lin = q-).

        Parameters
        ----------
        previous_force : numpy.ndarray, shape (n_gap,), or None
            The previous step's contact forces (N).
        h : float
            The step (s).
        nv : int
            Number of velocity unknowns.

        Returns
        -------
        (impulses, y_lin) or None
            None without iterations or without a previous contact force.

        Examples
        --------
        >>> import numpy as np
        >>> scheme = ContactScheme("cone", 8, 1e-9, 1.0)
        >>> P, y = scheme.first_curvature(np.array([10.0, 0.0]), 1e-3, 6)
        >>> P.tolist(), y.shape
        ([0.01, 0.0], (6,))
        """
        if self.max_iterations == 0 or previous_force is None or not previous_force.any():
            return None
        return previous_force * h, np.zeros(nv)

    def step_error(self, sol: StepSolution, out: list) -> float:
        """``error`` plus the solve's friction error (m; a scheme without iterations cannot
        reduce it).

        Parameters
        ----------
        sol : StepSolution
            The solve (its ``friction_error``).
        out : list
            Its finish outputs.

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> out = [None] * 12               # the step's finish outputs: those a scheme reads
        >>> out[3] = np.array([2.0, 0.0])                # contact forces
        >>> out[7] = np.array([-3e-9])                   # the least end-of-step gap
        >>> out[8] = np.array([1e-8, 0.5])               # true end-of-step gaps
        >>> out[11] = np.array([0.0, 0.5])               # linearised end-of-step gaps
        >>> from types import SimpleNamespace
        >>> scheme = ContactScheme("cone", 8, 1e-9, 1.0)
        >>> round(float(scheme.step_error(SimpleNamespace(friction_error=2e-9), out)), 15)
        1.5e-08
        """
        return self.error(out) + (sol.friction_error if self.max_iterations else 0.0)

    def error(self, out: list) -> float:
        """How far a step is from the end-of-step contact conditions (m): its penetration plus
        the largest true gap still open where the solve closed it (force acting, linearised
        end-of-step gap ~0).

        Parameters
        ----------
        out : list
            The step's finish outputs.

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> out = [None] * 12               # the step's finish outputs: those a scheme reads
        >>> out[3] = np.array([2.0, 0.0])                # contact forces
        >>> out[7] = np.array([-3e-9])                   # the least end-of-step gap
        >>> out[8] = np.array([1e-8, 0.5])               # true end-of-step gaps
        >>> out[11] = np.array([0.0, 0.5])               # linearised end-of-step gaps
        >>> float(ContactScheme("cone", 8, 1e-9, 1.0).error(out))   # 3e-9 in, 1e-8 open
        1.3e-08
        """
        active = closed_in_solve(out, self.force_scale, self.tol)
        open_active = out[8][active].max(initial=0.0) if active.any() else 0.0
        return max(-out[7][0], 0.0) + max(open_active, 0.0)

    def refine(self, solve: Callable, check: Callable, drift: Callable, sol: StepSolution,
               out: list, previous_force: np.ndarray | None = None,
               turn: Callable | None = None,
               restart: Callable | None = None) -> ContactOutcome:
        """Iterate from the first solve (``sol``, ``out``).

        ``solve(q_lin, curvature, jacobian_at)`` re-solves the step at the same h (q_lin None:
        the start of the step); ``check(sol, out)`` is the stepper's acceptance test;
        ``drift(y_new, y_old)`` the largest change of the end-of-step position between two
        iterates (m). Each iterate's error is its contact error plus its distance from the
        iterations' fixed point: the drift, or, once the last two contraction rates of these
        linearly converging iterations are below 1/2, the drift times r / (1 - r) with r the
        larger rate. The iterate with the least error is kept.

        "cone" iterates first with the start-of-step normals of the contacts that were closed
        at the start (``jacobian_at="sustained"``); where that does not converge (from the
        third iteration on, an error above half the one two iterations before, or the
        iterations run out) it iterates again from the first solve with the end normals
        (``"start"``), reported as the scheme "cone_end". So it does at once where a held
        contact's normal turns by more than ``TURN_HELD`` in the first solve (``turn(q_end)``,
        rad: a clearance far below the step's motion, whose direction carries nothing), and,
        in a run of steps that needed the end normals, but every ``SUSTAINED_RETRY``-th.
        Where no normal is held (``turn`` gives None) the two rows are the same: one pass.
        ``restart(jacobian_at)``, called before each pass with its rows (None: the first
        solve's own), returns the first solve to start it from when that is not (``sol``,
        ``out``) (a first solve taken with other rows), or None.

        Parameters
        ----------
        solve, check, drift : callable
            As above.
        sol : StepSolution
            The step's first solve.
        out : list
            Its finish outputs.
        previous_force : numpy.ndarray, optional
            The previous step's contact forces (unused here; :class:`WithFallback` passes
            them to its fallback's first solve).
        turn, restart : callable, optional
            As above.

        Returns
        -------
        ContactOutcome

        Examples
        --------
        "linearised" takes the first solve as it is:

        >>> import numpy as np
        >>> out = [None] * 12               # the step's finish outputs: those a scheme reads
        >>> out[3] = np.array([2.0, 0.0])                # contact forces
        >>> out[7] = np.array([-3e-9])                   # the least end-of-step gap
        >>> out[8] = np.array([1e-8, 0.5])               # true end-of-step gaps
        >>> out[11] = np.array([0.0, 0.5])               # linearised end-of-step gaps
        >>> from types import SimpleNamespace
        >>> first = SimpleNamespace(friction_error=0.0, gap_iterations=0, y=np.zeros(6))
        >>> outcome = ContactScheme("linearised", 8, 1e-9, 1.0).refine(None, None, None,
        ...                                                            first, out)
        >>> outcome.scheme, outcome.iterations, float(outcome.error), outcome.converged
        ('linearised', 0, 1.3e-08, True)
        """
        def start(jacobian_at):
            fresh = restart(jacobian_at) if restart is not None else None
            return (sol, out) if fresh is None else fresh

        if self.name != "cone":
            label = "cone_end" if self.name == "cone_end" else self.name
            return self._iterate(solve, check, drift, *start(self.jacobian_at),
                                 self.jacobian_at, label)
        # while a run of steps needs the end normals (a jam), try the start normals only every
        # SUSTAINED_RETRY-th step
        turned = turn(out[0]) if turn is not None else 0.0
        if turned is None:      # no normal held: the start-normal rows are the end-normal ones
            return self._iterate(solve, check, drift, *start(None), "start", self.name)
        result = None
        if self._end_streak % SUSTAINED_RETRY == 0 and turned <= TURN_HELD:
            result = self._iterate(solve, check, drift, *start("sustained"), "sustained",
                                   self.name, sustained=True)
            if result.converged:
                self._end_streak = 0
                return result
        self._end_streak += 1
        second = self._iterate(solve, check, drift, *start("start"), "start", "cone_end")
        return second if result is None or second.error <= result.error else result

    def _iterate(self, solve, check, drift, sol, out, jacobian_at, label,
                 sustained=False) -> ContactOutcome:
        """The chord iterations with the rows of ``jacobian_at`` from (``sol``, ``out``).
        ``sustained`` (the start normals' pass): they stop once they no longer contract (from
        the third iteration on, an error above half the one two iterations before), and a
        steady linear contraction is extrapolated (Aitken) to the next linearisation point:
        these fixed-normal iterations contract linearly where the end normals' converge
        faster, and extrapolating those cost them convergence in hard steps (a 1e-6 m
        clearance)."""
        error = self.step_error(sol, out)
        last, last_out = sol, out
        previous_drift, previous_rate = 0.0, np.inf
        frozen = None
        errors = [error]
        failed = False
        q_lin, y_lin = out[0], sol.y
        for it in range(1, self.max_iterations + 1):
            if error <= self.tol:
                break
            y_prev, q_prev = last.y, last_out[0]
            # with friction, the second half of the iterations keeps the impulses fixed (where
            # friction and normal loads keep trading, a jammed bore, they never settle): the
            # friction bounds stop moving and the chord iterations converge on the gaps (the
            # impulses only weight the curvature term, which vanishes at the fixed point)
            if last.P_n_used is not None and frozen is None and it > self.max_iterations // 2:
                frozen = last.P_g
            last, last_out = solve(q_lin, (last.P_g if frozen is None else frozen, y_lin),
                                   jacobian_at)
            if not check(last, last_out)[0]:
                failed = True
                break
            last.gap_iterations = it
            step = drift(last.y, y_prev)
            rate = step / previous_drift if previous_drift > 0 else np.inf
            # a steady linear contraction (two rates alike): the next linearisation point is
            # the limit the iterates head for (Aitken's extrapolation; the end of step is affine
            # in y), else the last iterate's end of step
            q_lin, y_lin = last_out[0], last.y
            if sustained and 0.05 < rate < 0.95 and abs(rate - previous_rate) < 0.3 * rate:
                ahead = rate / (1 - rate)
                q_lin = last_out[0] + ahead * (last_out[0] - q_prev)
                y_lin = last.y + ahead * (last.y - y_prev)
            worse = max(rate, previous_rate)
            distance = step * worse / (1 - worse) if worse < 0.5 else step
            previous_drift, previous_rate = step, rate
            new_error = self.step_error(last, last_out) + distance
            errors.append(new_error)
            if new_error < error:
                sol, out, error = last, last_out, new_error
            if sustained and len(errors) > 3 and errors[-1] > 0.5 * errors[-3]:
                break
        # friction drives the iterations but not the step's acceptance: a friction impulse
        # that has not settled within the iterations is reported, not retried
        friction = sol.friction_error if self.max_iterations else 0.0
        error = max(error - friction, 0.0)
        # a start-normal pass whose re-solve failed has not iterated its friction: the end
        # normals' pass takes the step
        unsettled = sustained and failed and friction > self.tol
        converged = error <= ACCEPTED * self.tol and not unsettled or self.max_iterations == 0
        return ContactOutcome(sol, out, label, sol.gap_iterations, error, converged,
                              friction_error=sol.friction_error)


def closed_in_solve(out: list, force_scale: float, tol: float) -> np.ndarray:
    """Gaps the solve treated as closed: a contact force acts (above 1e-8 of ``force_scale``;
    an interior point leaves tiny multipliers on open rows) and the linearised end-of-step
    gap is within ``tol`` of 0.

    Parameters
    ----------
    out : list
        The step's finish outputs.
    force_scale : float
        Contact forces below 1e-8 of it count as zero (N).
    tol : float
        Linearised gaps within it count as closed (m).

    Returns
    -------
    numpy.ndarray of bool, shape (n_gap,)

    Examples
    --------
    >>> import numpy as np
    >>> out = [None] * 12               # the step's finish outputs: those a scheme reads
    >>> out[3] = np.array([2.0, 0.0])                # contact forces
    >>> out[7] = np.array([-3e-9])                   # the least end-of-step gap
    >>> out[8] = np.array([1e-8, 0.5])               # true end-of-step gaps
    >>> out[11] = np.array([0.0, 0.5])               # linearised end-of-step gaps
    >>> closed_in_solve(out, 1.0, 1e-9)
    array([ True, False])
    """
    return (out[3] > 1e-8 * force_scale) & (out[11] <= tol)


class WithFallback:
    """``primary``, and ``fallback`` from a fresh first solve where ``primary`` does not
    converge; the better of the two (least error) is kept and flagged.

    Parameters
    ----------
    primary : ContactScheme
        The scheme tried first.
    fallback : ContactScheme or None
        The scheme tried where ``primary`` does not converge; None: none.

    Examples
    --------
    >>> schemes = WithFallback(ContactScheme("cone", 8, 1e-9, 1.0),
    ...                        ContactScheme("end_normal", 8, 1e-9, 1.0))
    >>> schemes.name, schemes.jacobian_at, schemes.fallback.jacobian_at
    ('cone', 'start', 'iterate')
    """

    def __init__(self, primary: ContactScheme, fallback: ContactScheme | None) -> None:
        self.primary, self.fallback = primary, fallback
        self.name, self.jacobian_at = primary.name, primary.jacobian_at

    def first_curvature(self, previous_force: np.ndarray | None, h: float,
                        nv: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The primary scheme's (:meth:`ContactScheme.first_curvature`).

        Parameters
        ----------
        previous_force : numpy.ndarray or None
            The previous step's contact forces (N).
        h : float
            The step (s).
        nv : int
            Number of velocity unknowns.

        Returns
        -------
        (impulses, y_lin) or None

        Examples
        --------
        >>> import numpy as np
        >>> schemes = WithFallback(ContactScheme("cone", 8, 1e-9, 1.0), None)
        >>> schemes.first_curvature(None, 1e-3, 6) is None
        True
        """
        return self.primary.first_curvature(previous_force, h, nv)

    def refine(self, solve: Callable, check: Callable, drift: Callable, sol: StepSolution,
               out: list, previous_force: np.ndarray | None = None,
               turn: Callable | None = None,
               restart: Callable | None = None) -> ContactOutcome:
        """The primary scheme's iterations, then the fallback's from a fresh first solve
        where they do not converge (:meth:`ContactScheme.refine`).

        Parameters
        ----------
        solve, check, drift : callable
            As for :meth:`ContactScheme.refine`.
        sol : StepSolution
            The step's first solve.
        out : list
            Its finish outputs.
        previous_force : numpy.ndarray, optional
            The previous step's contact forces: the fallback's first curvature.
        turn, restart : callable, optional
            As for :meth:`ContactScheme.refine` (the primary's pass only).

        Returns
        -------
        ContactOutcome
            ``fallback`` True where the fallback's is kept.

        Examples
        --------
        >>> import numpy as np
        >>> out = [None] * 12               # the step's finish outputs: those a scheme reads
        >>> out[3] = np.array([2.0, 0.0])                # contact forces
        >>> out[7] = np.array([-3e-9])                   # the least end-of-step gap
        >>> out[8] = np.array([1e-8, 0.5])               # true end-of-step gaps
        >>> out[11] = np.array([0.0, 0.5])               # linearised end-of-step gaps
        >>> from types import SimpleNamespace
        >>> first = SimpleNamespace(friction_error=0.0, gap_iterations=0, y=np.zeros(6))
        >>> schemes = WithFallback(ContactScheme("linearised", 8, 1e-9, 1.0), None)
        >>> outcome = schemes.refine(None, None, None, first, out)
        >>> outcome.scheme, outcome.fallback
        ('linearised', False)
        """
        result = self.primary.refine(solve, check, drift, sol, out, turn=turn, restart=restart)
        if result.converged or self.fallback is None:
            return result
        curvature = self.fallback.first_curvature(previous_force, sol.h, len(sol.y))
        first, first_out = solve(None, curvature, self.fallback.jacobian_at)
        if not check(first, first_out)[0]:
            return result
        second = self.fallback.refine(solve, check, drift, first, first_out)
        second.fallback = True
        return second if second.error < result.error else result
