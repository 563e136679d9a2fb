"""Step control: Stepper.step() for driving the loop yourself, simulate() for everything else.

``Stepper`` is made of parts, one job each: ``stepper_state`` (the consistent start, the
records, the memory), ``step_control`` (h, error control, retries), ``impact_resolution``
(impacts resolved in time), ``step_solves`` (one step's solves and its contact iterations),
``midpoint_step`` (scheme "midpoint"'s iterations and end velocity) and ``acceptance`` (a
step's checks, the run's notes). Here: its construction, the step, taking the step's end as
the state, jit "auto" and ``simulate``, which runs one to t_end (``run``). Its settings are
``stepper_settings``'s, what a step gives ``step_outcome``'s.
"""
from __future__ import annotations

import time
import types
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .acceptance import _Acceptance, _momentum_bodies
from .assembly import Recorder, build_result
from .checks import UNIT_NORMALISE, is_number, step_end, time_span
from .contact import ACCEPTED, ContactScheme, WithFallback, closed_in_solve
from .impact_resolution import _ImpactResolution
from .joints.ideal import Joint
from .midpoint_step import (CYCLE_BISECTIONS, CYCLE_SEARCHES,  # noqa: F401 (names as before)
                            GYROSCOPIC_STALL, GYROSCOPIC_TOL, _MidpointStep)
from .projection import GapProjector, independent_rows, normalise, position_change, project_positions
from .result import Result
from .run_arguments import raise_problems, run_problems, stepper_arguments
from .run import _is_interrupt, _output_times, run_stepper  # noqa: F401 (_is_interrupt: sweep's)
from .step_control import _StepControl
from .step_nlp import _QP_OPTIONS, StepProgram
from .step_outcome import StepFailure, StepInfo
from .step_solves import _StepSolves
from .stepper_settings import (FORMS, STEP_CONTROLS, TIME_SCHEMES,  # noqa: F401 (as before)
                               StepperSettings, _as_dict, _default_scheme, _error_control_problems,
                               _scheme_problems, _solver_option_problems, _step_bounds)
from .stepper_state import PROJECTION_NOTICE, _StepperState  # noqa: F401 (as before)
from .system import CompiledSystem, ModelError, System

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

# jit "auto" looks at the run's pace and its builds every this many steps, and at the cache
# once the run left would take longer than this (s; the cache's key costs up to ~0.5 s at
# 64 links)
JIT_CHECK_EVERY, JIT_LOOK_UP = 16, 2.0


class Stepper(_StepperState, _StepControl, _ImpactResolution, _StepSolves, _MidpointStep,
              _Acceptance):
    """Advances a system one step at a time.

    Parameters
    ----------
    system : System
        Compiled on construction (validation errors are raised here, before any step).
    h : float or (h_min, h_max)
        Fixed step size, or bounds for the variable-step schemes.
    settings : StepperSettings, optional
    t0 : float
        Initial time.

    Examples
    --------
    >>> stepper = Stepper(system, h=1e-3)          # doctest: +SKIP
    >>> while stepper.t < 1.0:                      # doctest: +SKIP
    ...     info = stepper.step()
    """

    # the parts' public methods, here so that the class documents them
    notes, run_notes = _Acceptance.notes, _Acceptance.run_notes
    discretisation_note, drift_note = _Acceptance.discretisation_note, _Acceptance.drift_note
    momentum_note, resolution_note = _Acceptance.momentum_note, _ImpactResolution.resolution_note

    def __init__(self, system: System, h: float | tuple[float, float],
                 settings: StepperSettings | None = None, t0: float = 0.0, **overrides):
        settings, (h_min, h_max) = stepper_arguments(system, h, settings, t0, overrides,
                                                     StepperSettings)
        control = settings.step_control or ("error" if settings.rtol is not None else
                                            "fixed" if h_min == h_max else "adaptive")
        if settings.scheme is None:
            settings = replace(settings, scheme=_default_scheme(settings, control))
        self.settings = settings
        self.h_min, self.h_max = h_min, h_max
        self.step_control = control
        self.system = system
        self.cs: CompiledSystem = system.compile(t0=t0)
        problems = (_scheme_problems(self.cs, settings, control)
                    + _error_control_problems(self.cs, settings, control, h_min, h_max))
        if problems:
            raise ModelError(problems)
        self._bisect_h = (control == "nlp" and settings.nlp_method == "bisection"
                          and settings.form == "gauss" and not self.cs.implicit_elements)
        self.program = StepProgram(self.cs, settings)
        problems = _solver_option_problems(self.program.qp_solver, settings)
        if problems:
            raise ModelError(problems)
        cs = self.cs
        if settings.solver is not None:
            self.solver = settings.solver
        else:
            self.solver = "direct" if cs.n_gap == 0 else "qp"
        if self.solver == "direct" and cs.n_gap:
            raise ModelError(["solver 'direct' handles joints without gaps only; this system "
                              f"has gaps ({[r.name for r in cs.gap_rows]}): use 'qp' or 'ipopt'"])
        if settings.form == "explicit" and self.solver != "ipopt" and control != "nlp":
            self.solver = "ipopt"   # the explicit form is an NLP
        if self.program.has_friction and (self.solver != "qp" or (control == "nlp"
                                                                   and not self._bisect_h)):
            names = sorted({el.name for _, _, el in self.program.friction_gaps})
            raise ModelError([f"clearance joints with friction ({names}) need the fixed-h QP "
                              f"(solver 'qp', got {self.solver!r}) or step_control 'nlp' with "
                              "nlp_method 'bisection' and form 'gauss'; IPOPT has no friction"])
        self.t = self.t0 = float(t0)
        q, v = cs.initial_state()
        self.q, self.v, self.initial_projection = self._consistent_start(normalise(q, cs.n_bodies), v)
        self._start_memory()
        self._initial = (self.q, self.v, self.initial_projection)
        # structurally redundant joint rows (an overconstrained loop): solved without them
        self.redundant_rows = []
        self._dropped = self._kept = np.zeros(0, dtype=int)
        if cs.n_eq:
            keep = independent_rows(cs, self.q, self.t)
            self.program.set_independent_rows(keep)
            dropped = sorted(set(range(cs.n_eq)) - set(keep.tolist()))
            self._dropped, self._kept = np.array(dropped, dtype=int), np.asarray(keep)
            self.redundant_rows = [(r.name, i - r.start) for i in dropped
                                   for r in cs.constraint_rows if r.start <= i < r.stop]
        self._projector = None
        self._force_scale = cs.total_mass * (np.linalg.norm(system.gravity) + 1.0)
        self._model_size = cs.model_size
        self._drift_rows()
        self._momentum_bodies = _momentum_bodies(system, cs)
        # lifting the model by its size at |g| + 1 m/s^2: the round-off floor's scale when
        # nothing moves
        self._energy_unit = self._force_scale * self._model_size
        self._ideal_joint_names = [r.name for r in cs.constraint_rows if isinstance(r.element, Joint)]
        iterations = settings.gap_iterations
        if iterations is None:
            iterations = 24 if self.program.has_friction else 12
        primary = "linearised" if iterations == 0 else settings.contact
        fallback = settings.contact_fallback
        self.contact = WithFallback(
            ContactScheme(primary, iterations, settings.gap_tol, self._force_scale),
            ContactScheme(fallback, iterations, settings.gap_tol, self._force_scale)
            if fallback not in (None, primary) and primary != "linearised" else None)
        self._gap_groups = _gap_groups(cs)
        # the bodies' inertia tensors, twice over (the midpoint step's gyroscopic term at two
        # velocities in one product), and their inverses
        blocks = np.array([cs.M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6]
                           for k in range(cs.n_bodies)]).reshape(cs.n_bodies, 3, 3)
        self._inertia = (np.concatenate((blocks, blocks)),
                         np.linalg.inv(blocks) if cs.n_bodies else blocks)
        self.span = None        # the run's length, for rtol's share per step (``simulate``)
        # jit "auto": the steps' wall time since the stepper was made (``_jit_check``)
        self._jit_steps, self._jit_wall, self._jit_t0 = 0, 0.0, self.t
        self._restart()
        # the linearised joint rows, gap rows and EOM (relative), the Euler-parameter norms
        self._check_limits = np.array([10 * settings.check_tol] * 3 + [1e-2])
        clearances = [r.element.min_clearance for r in cs.gap_rows
                      if hasattr(r.element, "min_clearance")]
        # gaps within this of 0 count as in contact when the adaptive scheme predicts closures
        self._contact_band = 0.01 * min(clearances, default=np.inf)
        if settings.max_penetration is not None:
            self._max_penetration = settings.max_penetration
        elif self.contact.name == "linearised":
            self._max_penetration = 0.01 * min(clearances, default=np.inf)
        else:
            self._max_penetration = ACCEPTED * settings.gap_tol
        self._warn_linearisation(clearances)
        # whether impacts are resolved in time (``contact_resolution``): with the implicit
        # elements' Newton linearisation, which gives their stiffness
        self.resolves_impacts = (self.program.implicit is not None
                                 and bool(self.program.implicit.contacts)
                                 and self.solver in ("direct", "qp")
                                 and control not in ("nlp", "error"))
        # omega h against contact_resolution's limit: 0 where not judged (None)
        limit = settings.contact_resolution
        sustained = settings.sustained_resolution
        settling = (sustained if settings.settling_resolution is None
                    else settings.settling_resolution)
        self._sustained_scale, self._settling_scale = (
            0.0 if r is None or limit is None else limit / r for r in (sustained, settling))
        # an impact of a contact that remembers its impact speed (a contact element's memory)
        # is measured against hysteresis_resolution
        hysteresis = settings.hysteresis_resolution
        implicit = self.program.implicit
        remembers = ([cs.force_elements[j].history_size > 0 for j in implicit.contacts]
                     if implicit is not None else [])
        ratio = 1.0 if hysteresis is None or limit is None else limit / hysteresis
        self._impact_scale = np.where(remembers, ratio, 1.0)

    def _warn_linearisation(self, clearances):
        """Linearised gaps alone (no gap iterations, no projection) penetrate by about
        h^2 |a_n| per step, |a_n| ~ |g| for pendulum-like motion (docs/FORMULATION.md: 12 h^2 m for
        a 1 m pendulum): warn when that is not well below the smallest clearance."""
        if not clearances or self.contact.name != "linearised" or self.settings.projection:
            return
        penetration = self.h_max**2 * max(np.linalg.norm(self.system.gravity), 1.0)
        if penetration > 0.1 * min(clearances):
            warnings.warn(f"with linearised gaps only, h_max = {self.h_max:g} s may penetrate by "
                          f"~{penetration:.1e} m per step, more than 10 % of the smallest "
                          f"clearance {min(clearances):g} m: reduce h or use contact iterations "
                          "(gap_iterations > 0)",
                          stacklevel=3)

    # ------------------------------------------------------------------ state and record
    def reset(self) -> None:
        """Back to the initial state (``t0`` and the consistent initial q, v), forgetting
        every step taken and the record :meth:`result` reads.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> _ = stepper.step()
        >>> stepper.reset()
        >>> stepper.t, len(stepper.result().t)
        (0.0, 1)
        """
        self.t = self.t0
        self.q, self.v, self.initial_projection = self._initial
        self._start_memory()
        self._restart()

    def set_state(self, t: float, q: ArrayLike, v: ArrayLike) -> None:
        """Continue from a state of your own: time ``t``, positions ``q`` (7 per body: r, p)
        and velocities ``v`` (6 per body: rdot global, w' body frame), laid out as one row of
        ``Result.q`` and ``Result.v`` (``stepper.set_state(res.t[k], res.q[k], res.v[k])``).

        The state is checked against the constraints as the initial one is
        (``initial_conditions``: projected with the smallest mass-weighted change, reported
        in ``initial_projection``, or refused). Euler parameters are kept as given, within
        1e-3 of unit norm (the steps leave an O(h^2) norm error, which joints and forces do
        not see; with scheme "euler" a state from a result continues that run exactly). Force
        elements with a memory (hysteresis) start from their initial memory, scheme
        "midpoint"'s predictor of the step's mean velocity (the last step's velocity change)
        from none, as at the start of a run (a velocity-dependent force's first step then
        differs from the run's by O(h^2)), and the record that :meth:`result` reads restarts
        at this state.

        Parameters
        ----------
        t : float
            Time (s).
        q : array_like, shape (7 n_bodies,)
            Positions, [r, p] per body.
        v : array_like, shape (6 n_bodies,)
            Velocities, [rdot, w'] per body.

        Raises
        ------
        ValueError
            ``t``, ``q`` or ``v`` of the wrong size or not finite (every problem at once).
        ModelError
            A state that cannot be made consistent (as for the initial conditions).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False)
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> stepper.set_state(res.t[5], res.q[5], res.v[5])     # continue from t = 5 ms
        >>> stepper.t
        0.005
        """
        cs = self.cs
        problems = []
        if not is_number(t):
            problems.append(f"t must be a finite number, got {t!r}")
        arrays = {}
        for label, value, size, layout in (("q", q, cs.nq, "7 per body: r, p"),
                                           ("v", v, cs.nv, "6 per body: rdot, w'")):
            arr = np.asarray(value, dtype=float).ravel() if np.ndim(value) else None
            if arr is None or arr.size != size or not np.all(np.isfinite(arr)):
                problems.append(f"{label} must be {size} finite numbers ({layout}), got "
                                f"{np.shape(value)}")
            arrays[label] = arr
        if not problems:
            for k, body in enumerate(cs.bodies):
                norm = np.linalg.norm(arrays["q"][7 * k + 3:7 * k + 7])
                if abs(norm - 1) > UNIT_NORMALISE:
                    problems.append(f"{body.label}: |p| = {norm:.9g}, Euler parameters must be "
                                    f"within {UNIT_NORMALISE:g} of unit norm")
        if problems:
            raise ValueError("; ".join(problems))
        saved_t, self.t = self.t, float(t)
        try:
            self.q, self.v, self.initial_projection = self._consistent_start(arrays["q"],
                                                                             arrays["v"])
        except ModelError:
            self.t = saved_t
            raise
        self._start_memory()
        self._restart()

    def result(self, message: str | None = None) -> Result:
        """The steps taken since construction, :meth:`reset` or :meth:`set_state` as a
        :class:`~nlpdyn.Result` (the same arrays, ledger and lookups as ``simulate`` gives;
        ``success`` True, ``message`` ``message`` or "stepped to t = ...").

        Parameters
        ----------
        message : str, optional
            The result's ``message`` (default: "stepped to t = <t>").

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0))
        >>> _ = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0)))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> for _ in range(10):
        ...     _ = stepper.step()
        >>> stepper.result().position("bar").shape
        (11, 3)
        """
        if self._log is None:
            raise RuntimeError("this stepper's steps are recorded by simulate(), which returns them")
        t, q, v, z, gaps = self._log_start
        state = types.SimpleNamespace(t=t, q=q, v=v, z=z, gaps=gaps, ledger=())
        recorder = Recorder(state)
        for k, (start, info, q, v, z) in enumerate(self._log, 1):
            state.t, state.q, state.v, state.z, state.ledger = info.t, q, v, z, range(k)
            recorder.step(state, start, info)
        return build_result(self, recorder, 0, message or f"stepped to t = {self.t:.9g}")

    # ------------------------------------------------------------------ one step
    def step(self, t_end: float | None = None) -> StepInfo:
        """Take one accepted step (never past ``t_end``); raise StepFailure if impossible.

        Parameters
        ----------
        t_end : float, optional
            A time the step does not pass (it ends there when the next step would); None:
            no limit.

        Returns
        -------
        StepInfo
            What the step did.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> info = stepper.step(t_end=0.0005)          # shortened to end at t_end
        >>> info.h, stepper.t
        (0.0005, 0.0005)
        """
        tic = time.perf_counter()
        t_end = step_end(t_end)
        remaining = np.inf if t_end is None else t_end - self.t
        if remaining <= 1e-12 * max(1.0, abs(self.t)):
            raise ValueError(f"already at t_end = {t_end} (t = {self.t})")
        if self.step_control == "error":
            return self._error_controlled_step(t_end, remaining, tic)
        if remaining <= self.h_max * (1 + 1e-9):          # last step: land on t_end
            h_min = h_max = remaining
        elif remaining < self.h_max + 0.5 * self.h_min:
            # split what is left in two instead of ending on a sliver of a step: the rows
            # divide position-level residuals by h, so a tiny last step kicks the velocity
            h_min = h_max = 0.5 * remaining
        else:
            h_min, h_max = self.h_min, self.h_max
        if self.step_control == "adaptive":
            h_max = self._predict_contact_step(h_min, h_max)
        shortened = False
        if self.resolves_impacts:
            h_asked = h_max
            h_min, h_max = self._resolved_bounds(h_min, h_max)
            shortened = h_max < h_asked * (1 - 1e-9)
        if len(self.cs.normal_force_slots):
            self.z = self.z.copy()      # the step sets h and normal forces in its own memory
        start = self.last_start = (self.t, self.q, self.v, self.z)
        outcome, retries = self._solve_with_retries(h_min, h_max)
        if self.resolves_impacts:
            shortened = shortened or outcome.sol.h < h_max * (1 - 1e-9)
            outcome, retries = self._resolve_contacts(outcome, retries, shortened)
        return self._record(start, self._accept(outcome, retries, time.perf_counter() - tic))

    def _record(self, start, info) -> StepInfo:
        if self._log is not None:
            self._log.append((start, info, self.q, self.v, self.z))  # for result(): references only
        if self.program.jit is not None and self.program.jit.mode == "auto":
            self._jit_steps += 1
            self._jit_wall += info.wall_time
            if self._jit_steps % JIT_CHECK_EVERY == 0:
                self._jit_check()
        return info

    def _jit_check(self):
        """jit "auto", every ``JIT_CHECK_EVERY`` steps: take the compiled functions whose
        build has ended; once the run left (``span``), or without one the steps so far,
        would take longer interpreted than ``JIT_LOOK_UP`` s, those found in the cache; and
        start building the others once it would take longer than their build."""
        jit = self.program.jit
        compiled = jit.record["compiled"]
        if jit.poll() and jit.record["compiled"] > compiled:
            jit.record.setdefault("switched", []).append(float(self.t))
        if not jit.pending:
            return
        left = self._jit_wall
        if self.span is not None:
            pace = self._jit_wall / max(self.t - self._jit_t0, 1e-300)     # s per s simulated
            left = pace * (self.t0 + self.span - self.t)
        if left <= JIT_LOOK_UP:
            return
        cached = jit.record["cached"]
        jit.look_up()
        if jit.record["cached"] > cached:
            jit.record.setdefault("switched", []).append(float(self.t))
        if jit.pending and not jit.building and left > jit.build_seconds():
            jit.record.setdefault("started", []).append(float(self.t))
            jit.start()

    # ------------------------------------------------------------------ the step's end
    def _accept(self, outcome, retries, wall, t1=None) -> StepInfo:
        """Take the step's end as the state (at ``t1`` when given: an end time the step was
        cut to meet) and record it."""
        sol, out = outcome.sol, outcome.out
        self._energy_high = max(self._energy_high, out[-1][6])
        self._energy_scale = max(self._energy_scale, out[-1][7])
        (q1, v1, mu, lam, eom, viol, norm_err, min_gap, gaps, comp, Pi_g, _, ledger, carry, phi,
         _) = out
        t1 = self._on_grid(self.t + sol.h, sol.h) if t1 is None else t1
        proj_change = proj_energy = 0.0
        if self.settings.projection and (self.cs.n_eq or self.cs.n_gap):
            if self.cs.n_gap:
                if self._projector is None:
                    # qpOASES is dense inside: ProxQP's sparse backend above 10 bodies
                    plugin = "qpoases" if self.cs.nv <= 60 else "proxqp"
                    self._projector = GapProjector(self.cs, plugin, _QP_OPTIONS[plugin])
                q_proj, _, _, _ = self._projector.project(q1, t1, tol=self.settings.projection_tol,
                                                                max_iter=50)
                phi = np.abs(np.asarray(self.cs.phi(q_proj, t1)).ravel())
                viol_after = phi.max(initial=0.0)
            else:
                q_proj, _, viol_after, _ = project_positions(self.cs, q1, t1,
                                                             tol=self.settings.projection_tol)
                phi = None          # evaluated below only if the drift needs it
            proj_change = position_change(q1, q_proj, self.cs.n_bodies)
            z = self.z[:self.cs.n_history]
            proj_energy = (float(self.cs.potential(t1, q_proj, z))
                           - float(self.cs.potential(t1, q1, z)))
            q1 = q_proj
            viol = np.array([viol_after])
            gaps = np.asarray(self.cs.gap(q1)).ravel()
            min_gap = np.array([gaps.min() if gaps.size else np.inf])
        if float(viol[0]) > self._drift_floor:
            if phi is None:
                phi = np.abs(np.asarray(self.cs.phi(q1, t1)))
            self._record_drift(np.asarray(phi, dtype=float).ravel(), t1)
        if self._momentum_bodies is not None:
            self._record_momentum(q1, v1, t1)
        if sol.solver not in ("direct",) and self.cs.n_gap + self.cs.n_eq:
            self._lam_qp = -np.concatenate((sol.P_eq, sol.P_g))
        self._contact_force = lam
        self._dv, self._dv_h = v1 - self.v, sol.h
        predictor = self._accel_used if self.program.midpoint else None
        self.z = self._next_memory(sol.h, t1, q1, v1, carry)
        if self.cs.n_gap:
            active = closed_in_solve(outcome.out, self._force_scale, 10 * self.settings.gap_tol)
            changed = bool(np.any(active != self._active))
            # an impact: a gap of the joint closed in this step or the previous one and carries
            # force (the closing step lands on the surface still approaching, the next removes
            # the rest); all of that joint's contact impulses belong to it
            was_open = self.gaps > self.settings.gap_tol
            closing = active & (was_open | self._was_open)
            starts, owner = self._gap_groups
            impact = active & np.logical_or.reduceat(closing, starts)[owner]
            self._was_open = was_open
        else:
            active = impact = self._active
            changed = False
        if self.program.midpoint and not impact.any():
            # an impact's velocity jump is no acceleration to predict the next step from
            self._accel = self._dv / sol.h
        self.ledger.add(ledger, impact, proj_energy)
        self.q, self.v, self.t, self.gaps, self._active = q1, v1, t1, gaps, active
        return StepInfo(t1, sol.h, sol.solver, sol.status, sol.iterations, wall,
                        float(eom[0]), float(viol[0]), float(norm_err[0]), float(min_gap[0]),
                        float(comp[0]), retries, proj_change, sol.gap_iterations, changed,
                        outcome.scheme, outcome.fallback, outcome.error, proj_energy,
                        mu, lam, gaps, Pi_g, impact,
                        None if sol.P_t is None else sol.P_t / sol.h, predictor)


def _gap_groups(cs):
    """(first gap row of each gap element, owning element of each gap row)."""
    rows = [r for r in cs.gap_rows if r.size]
    starts = np.array([r.start for r in rows], dtype=int)
    owner = np.repeat(np.arange(len(rows)), [r.size for r in rows])
    return starts, owner


def simulate(system: System, t_end: float, h: float | tuple[float, float],
             settings: StepperSettings | None = None, progress: bool | None = None,
             t0: float = 0.0, output_every: int = 1, t_eval: ArrayLike | None = None,
             **options) -> Result:
    """Simulate ``system`` from ``t0`` to ``t_end``.

    Parameters
    ----------
    system : System
    t_end : float
        Final time (s).
    h : float or (h_min, h_max)
        Fixed step, or bounds for the variable-step schemes (``step_control``) and for
        the error-controlled h (``rtol``, scheme "midpoint").
    settings : StepperSettings, optional
        Stepper options; keyword ``options`` override single fields
        (e.g. ``step_control="nlp"``, ``form="explicit"``, ``projection=True``).
    progress : bool or None
        Show a tqdm progress bar; None shows it only on a terminal.
    output_every : int
        Keep every ``output_every``-th step (and the last one) in the result; the energy
        ledger and the run's counters (``res.info["run"]``) still cover every step. The
        per-step arrays (``h``, ``stats``, multipliers, forces) are those of the step ending
        at each kept point.
    t_eval : array_like, optional
        Output times, increasing, within [t0, t_end]: the steps are cut to end at each of
        them (a step that would pass one ends there), and the result keeps the initial
        point, these times and the last point reached (t_end, or where a failed run
        stopped); per-step arrays and counters as for ``output_every``, which must then
        be 1.

    Returns
    -------
    Result
        Partial when a step fails (or raises, or Ctrl-C): ``success`` is False and
        ``message`` says where and why; the steps before are kept. ``success`` True means
        t_end was reached with every step within its tolerances; what the run shows as a
        whole (discretisation energy, joint drift, momentum drift, the initial projection)
        is in ``info["warnings"]``, or makes ``success`` False with ``strict=True``.

    Raises
    ------
    ModelError
        Before any step: every problem of the arguments (``h``, ``t_end``, ``t0``,
        ``settings``, unknown keywords, ...) and of the model at once, each naming its
        culprit.

    Warns
    -----
    UserWarning
        The initial state was projected onto the joints beyond round-off (per body, in its
        units).
    RuntimeWarning
        Each of ``info["warnings"]`` but the projection's.

    Examples
    --------
    >>> res = simulate(system, t_end=5.0, h=1e-3)       # doctest: +SKIP
    >>> res.position("crank").shape                      # doctest: +SKIP
    (5001, 3)
    """
    problems = run_problems(system, t_end, h, settings, progress, t0, output_every, options,
                            StepperSettings)
    times = _output_times(t_eval, *time_span(t0, t_end), output_every, problems)
    raise_problems(problems, system, t0)
    tic = time.perf_counter()
    stepper = Stepper(system, h, settings, t0=t0, **options)
    stepper.span = float(t_end - t0)
    setup = time.perf_counter() - tic
    return run_stepper(stepper, t_end, t0=t0, output_every=output_every, times=times,
                       progress=progress, tic=tic, setup=setup)
