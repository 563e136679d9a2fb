"""Step control: Stepper.step() for driving the loop yourself, simulate() for everything else."""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, fields

import numpy as np
from tqdm.auto import tqdm

from .projection import (GapProjector, normalise, position_change, project_positions,
                         project_velocities)
from .result import Result, StepStats
from .rotations import rotation_matrix
from .step_nlp import _QP_OPTIONS, StepProgram, StepSolution
from .system import CompiledSystem, ModelError, System

STEP_CONTROLS = ("fixed", "nlp", "adaptive")
FORMS = ("gauss", "explicit")


@dataclass
class StepperSettings:
    """Options of the time stepper. Defaults are the measured best (see README, Benchmarks)."""

    step_control: str | None = None
    """"fixed" (h constant), "nlp" (the seed's scheme: h a bounded NLP variable, IPOPT) or
    "adaptive" (fast QP steps, h = h_max unless a gap is predicted to close within the step,
    then the step is cut to end at contact onset). None: "fixed" for a scalar h, "adaptive"
    for bounds (h_min, h_max)."""
    form: str = "gauss"
    """"gauss": v is the only unknown and the multipliers come from the KKT conditions;
    "explicit": the seed's NLP with impulses as variables and the EOM as equality rows (IPOPT)."""
    solver: str | None = None
    """Solver of the fixed-h program: "direct" (closed form, ideal joints only), "qp" (the
    CasADi conic plugin ``qp_solver``) or "ipopt". None: "direct" without gaps, else "qp"."""
    qp_solver: str = "qpoases"
    """CasADi conic plugin used when ``solver == "qp"`` (qpoases, qrqp, daqp, osqp, ...)."""
    qp_options: dict | None = None
    """Extra options passed to the conic plugin."""
    nlp_tol: float = 1e-8
    """IPOPT ``tol``."""
    nlp_mu_init: float = 1e-9
    """IPOPT ``mu_init`` for the warm-started solves (small: the previous step is a good guess)."""
    nlp_max_iter: int = 100
    """IPOPT ``max_iter``."""
    nlp_options: dict | None = None
    """Extra IPOPT options (e.g. {"linear_solver": "ma27"})."""
    tie_break: float = 1e-4
    """Preference for large h in the "nlp" scheme, J per kg of total mass: the objective gets
    - tie_break * m_total * h / h_max. It only decides between steps the Gauss objective
    cannot tell apart (free flight); see FORMULATION.md."""
    complementarity_eps: float = 1e-12
    """Relaxation of the complementarity rows P_g * g_lin <= eps in the explicit form."""
    regularization: float = 1e-10
    """Relative Tikhonov shift of the closed-form solve (makes redundant joints solvable)."""
    refinement_steps: int = 3
    """Iterated-Tikhonov refinements of the closed-form solve (each gains ~10 digits)."""
    initial_conditions: str = "project"
    """"project": move inconsistent initial positions/velocities onto the constraints with the
    smallest mass-weighted change and report the change; "check": raise instead."""
    consistency_tol: float = 1e-9
    """Largest constraint residual (position rows, and velocity rows in 1/s units) accepted as
    consistent at the start."""
    projection: bool = False
    """Project positions back onto Phi(q, t) = 0 after every step (mass-weighted)."""
    projection_tol: float = 1e-12
    """Tolerance of the post-step and initial position projections."""
    check_tol: float = 1e-7
    """Relative tolerance of the per-step physical check (linearised rows, EOM residual)."""
    max_retries: int = 4
    """Halvings of h tried after a rejected step (each with the primary and fallback solver)."""
    fallback: bool = True
    """Retry a rejected step with IPOPT before cutting h."""
    polish: bool = True
    """In the "nlp" scheme, a step whose h ends within ``polish_tol`` (relative) of its upper
    bound is re-solved with h exactly at the bound by the fixed-step solver: the interior
    point otherwise stops ~1e-7..1e-5 short of the bound (barrier offset mu / tie-break)."""
    polish_tol: float = 1e-4
    """Relative distance from the h bound within which an "nlp" step is polished."""
    gap_iterations: int = 12
    """Sequential-QP iterations on the nonlinear end-of-step gaps (0: the seed's linearised
    gaps only). Each re-solves the fixed-h program with the gaps linearised at the previous
    iterate; the linearisation otherwise leaves a penetration ~ h^2 |v_t|^2 / clearance."""
    gap_tol: float = 1e-10
    """The gap iterations stop once the penetration plus the last iterate's change of the
    end-of-step position (m, largest component of h dv) is below this."""
    implicit_iterations: int = 30
    """Newton iterations on the implicit force elements per fixed-h solve (each one QP)."""
    implicit_tol: float = 1e-10
    """The implicit iterations stop once the relative EOM residual with the forces at the
    end of the step is below this."""
    max_penetration: float | None = None
    """Largest penetration (m) accepted after the gap iterations; a step beyond it is retried
    with a smaller h. None: 1% of the smallest clearance in the system."""

    def __post_init__(self):
        problems = []
        if self.step_control is not None and self.step_control not in STEP_CONTROLS:
            problems.append(f"step_control must be one of {STEP_CONTROLS}, got {self.step_control!r}")
        if self.form not in FORMS:
            problems.append(f"form must be one of {FORMS}, got {self.form!r}")
        if self.solver not in (None, "direct", "qp", "ipopt"):
            problems.append(f"solver must be 'direct', 'qp' or 'ipopt', got {self.solver!r}")
        if self.initial_conditions not in ("project", "check"):
            problems.append("initial_conditions must be 'project' or 'check'")
        for name in ("nlp_tol", "consistency_tol", "projection_tol", "check_tol", "regularization"):
            if not getattr(self, name) > 0:
                problems.append(f"{name} must be > 0")
        if self.tie_break < 0 or self.complementarity_eps < 0:
            problems.append("tie_break and complementarity_eps must be >= 0")
        if self.max_retries < 0:
            problems.append("max_retries must be >= 0")
        if problems:
            raise ModelError(problems)


class StepFailure(RuntimeError):
    """A step could not be completed, even after retries."""


@dataclass
class StepInfo:
    """What one accepted step did (the record behind ``Result.stats``)."""

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
    mu: np.ndarray = field(repr=False, default=None)
    lam: np.ndarray = field(repr=False, default=None)
    gaps: np.ndarray = field(repr=False, default=None)


def _step_bounds(h) -> tuple[float, float]:
    if np.ndim(h) == 0:
        return float(h), float(h)
    arr = np.asarray(h, dtype=float).ravel()
    if arr.size != 2:
        raise ModelError([f"h must be a step size or a pair (h_min, h_max), got {h!r}"])
    return float(arr[0]), float(arr[1])


class Stepper:
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

    Example
    -------
    >>> stepper = Stepper(system, h=1e-3)          # doctest: +SKIP
    >>> while stepper.t < 1.0:                      # doctest: +SKIP
    ...     info = stepper.step()
    """

    def __init__(self, system: System, h, settings: StepperSettings | None = None, t0: float = 0.0,
                 **overrides):
        settings = settings or StepperSettings()
        if overrides:
            settings = StepperSettings(**{**_as_dict(settings), **overrides})
        self.settings = settings
        h_min, h_max = _step_bounds(h)
        problems = []
        if not (np.isfinite(h_min) and h_min > 0):
            problems.append(f"h_min must be positive and finite, got {h_min}")
        if not (np.isfinite(h_max) and h_max > 0):
            problems.append(f"h_max must be positive and finite, got {h_max}")
        if h_min > h_max:
            problems.append(f"h_min > h_max ({h_min} > {h_max})")
        if problems:
            raise ModelError(problems)
        self.h_min, self.h_max = h_min, h_max
        control = settings.step_control or ("fixed" if h_min == h_max else "adaptive")
        if control == "fixed" and h_min != h_max:
            raise ModelError([f"step_control 'fixed' needs one step size, got bounds ({h_min}, {h_max})"])
        self.step_control = control
        self.system = system
        self.cs: CompiledSystem = system.compile()
        self.program = StepProgram(self.cs, settings)
        cs = self.cs
        if settings.solver is not None:
            self.solver = settings.solver
        else:
            self.solver = "direct" if cs.n_gap == 0 else "qp"
        if settings.solver is None and cs.implicit_elements:
            self.solver = "qp"
        if self.solver == "direct" and cs.n_gap:
            raise ModelError(["solver 'direct' handles ideal joints only; this system has gaps "
                              f"({[r.name for r in cs.gap_rows]}): use 'qp' or 'ipopt'"])
        if self.solver == "direct" and cs.implicit_elements:
            raise ModelError(["solver 'direct' evaluates forces at the start of the step only; "
                              f"implicit force elements {cs.implicit_elements}: use 'qp' or "
                              "'ipopt', or set their evaluation to 'explicit'"])
        if settings.form == "explicit" and self.solver != "ipopt" and control != "nlp":
            self.solver = "ipopt"   # the explicit form is an NLP
        self.t = float(t0)
        q, v = cs.initial_state()
        self.q, self.v, self.initial_projection = self._consistent_start(normalise(q, cs.n_bodies), v)
        self.z = cs.initial_history()
        self._warm = {}
        self._lam_qp = None
        self._dv, self._dv_h = None, None
        self._contact_force = None
        self.gaps = np.asarray(cs.gap(self.q)).ravel()
        self._active = np.zeros(cs.n_gap, dtype=bool)
        self._projector = None
        self._force_scale = cs.total_mass * (np.linalg.norm(system.gravity) + 1.0)
        self._check_limits = np.full(3, 10 * settings.check_tol)
        clearances = [r.element.min_clearance for r in cs.gap_rows
                      if hasattr(r.element, "min_clearance")]
        self._max_penetration = (settings.max_penetration if settings.max_penetration is not None
                                 else 0.01 * min(clearances, default=np.inf))
        self._warn_linearisation(clearances)

    def _warn_linearisation(self, clearances):
        """Linearised gaps alone (no gap iterations, no projection) penetrate by about
        h^2 |a_n| per step, |a_n| ~ |g| for pendulum-like motion (FORMULATION.md: 12 h^2 m for
        a 1 m pendulum): warn when that is not well below the smallest clearance."""
        if not clearances or self.settings.gap_iterations or self.settings.projection:
            return
        penetration = self.h_max**2 * max(np.linalg.norm(self.system.gravity), 1.0)
        if penetration > 0.1 * min(clearances):
            warnings.warn(f"with linearised gaps only, h_max = {self.h_max:g} s may penetrate by "
                          f"~{penetration:.1e} m per step, more than 10 % of the smallest "
                          f"clearance {min(clearances):g} m: reduce h or keep gap_iterations > 0",
                          stacklevel=3)

    # ------------------------------------------------------------------ initial conditions
    def _consistent_start(self, q, v):
        cs, st, t = self.cs, self.settings, self.t
        rows = cs.constraint_rows
        phi = np.asarray(cs.phi(q, t)).ravel()
        vel = (np.asarray(cs.velocity_jacobian(q, t)) @ v + np.asarray(cs.phi_t(q, t)).ravel()
               if cs.n_eq else np.zeros(0))
        gaps = np.asarray(cs.gap(q)).ravel()
        problems = []
        for r in cs.gap_rows:
            g = gaps[r.start:r.stop]
            if g.size and g.min() < -st.consistency_tol:
                problems.append(f"{r.element.label}: initial gap {g.min():.3e} m < 0 (bodies overlap)")
        if problems:
            raise ModelError(problems)
        pos_bad = phi.size and np.abs(phi).max() > st.consistency_tol
        vel_bad = vel.size and np.abs(vel).max() > st.consistency_tol
        report = {"changed": False, "position_change": 0.0, "velocity_change": 0.0,
                  "position_violation": float(np.abs(phi).max()) if phi.size else 0.0,
                  "velocity_violation": float(np.abs(vel).max()) if vel.size else 0.0}
        if not (pos_bad or vel_bad):
            return q, v, report
        if st.initial_conditions == "check":
            msgs = []
            for r in rows:
                for label, arr in (("position", phi), ("velocity", vel)):
                    worst = np.abs(arr[r.start:r.stop]).max() if r.size else 0.0
                    if worst > st.consistency_tol:
                        msgs.append(f"{r.element.label}: initial {label} residual {worst:.3e} "
                                    f"> consistency_tol {st.consistency_tol:g}")
            raise ModelError(["inconsistent initial conditions (use initial_conditions='project' "
                              "to project them)"] + msgs)
        q_new, _, viol, ok = project_positions(cs, q, t, tol=st.projection_tol)
        if not ok:
            worst = max(rows, key=lambda r: np.abs(np.asarray(cs.phi(q_new, t)).ravel()[r.start:r.stop]).max()
                        if r.size else 0.0)
            raise ModelError([f"initial positions cannot be made consistent: residual {viol:.3e} "
                              f"after projection, worst at {worst.element.label}"])
        v_new, vres = project_velocities(cs, q_new, v, t)
        report.update(changed=True, position_change=position_change(q, q_new, cs.n_bodies),
                      velocity_change=float(np.abs(v_new - v).max()),
                      body_changes={b.name: {"position": float(np.linalg.norm(q_new[7 * k:7 * k + 3] - q[7 * k:7 * k + 3])),
                                             "velocity": float(np.linalg.norm(v_new[6 * k:6 * k + 6] - v[6 * k:6 * k + 6]))}
                                    for k, b in enumerate(cs.bodies)})
        return q_new, v_new, report

    # ------------------------------------------------------------------ one step
    def step(self, t_end: float | None = None) -> StepInfo:
        """Take one accepted step (never past ``t_end``); raise StepFailure if impossible."""
        tic = time.perf_counter()
        remaining = np.inf if t_end is None else t_end - self.t
        if remaining <= 1e-12 * max(1.0, abs(self.t)):
            raise ValueError(f"already at t_end = {t_end} (t = {self.t})")
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
        sol, out, retries = self._solve_with_retries(h_min, h_max)
        return self._accept(sol, out, retries, time.perf_counter() - tic)

    def _solve_with_retries(self, h_min, h_max):
        reasons = []
        for retry, (kind, bounds) in enumerate(self._attempts(h_min, h_max)):
            try:
                sol, out = self._solve(kind, bounds, self.q, self._first_curvature(kind, bounds[1]))
                ok, why = self._check(sol, out)
                if ok:
                    sol, out = self._refine(kind, bounds, sol, out)
                    if out[7][0] < -self._max_penetration and not self.settings.projection:
                        ok, why = False, (f"penetration {-out[7][0]:.3e} m after "
                                          f"{sol.gap_iterations} gap iterations")
            except RuntimeError as err:     # CasADi errors surface as RuntimeError
                reasons.append(f"{kind} h={bounds[1]:.3g}: {str(err).splitlines()[0][:200]}")
                continue
            if ok:
                return sol, out, retry
            reasons.append(f"{sol.solver} h={sol.h:.3g}: {why}")
        raise StepFailure(f"step at t = {self.t:.9g} failed after {len(reasons)} attempts: "
                          + "; ".join(reasons[-3:]))

    def _first_curvature(self, kind, h):
        """Gap curvature for the first QP of a step, weighted by the previous step's contact
        forces (a contact that persists has similar impulses), expanded about y = 0 (the
        start of the step, where the first solve linearises the gaps)."""
        if kind != "qp" or self._contact_force is None or not self._contact_force.any():
            return None
        return self._contact_force * h, np.zeros(self.cs.nv)

    def _refine(self, kind, bounds, sol, out):
        """Polish an "nlp" step onto its h bound, then enforce the nonlinear end-of-step gaps.

        Polish: IPOPT's interior point ends ~1e-7..1e-5 short of an active h bound (barrier
        offset mu / tie-break); the step is re-solved with h exactly at the bound.
        Gap iterations: sequential QP on g(q_end) >= 0 with the fixed-h solver at the h
        already chosen: the gaps are re-linearised at the previous iterate's end of step and,
        with the QP solver, their curvature weighted by the previous impulses enters the
        objective (plain Gauss-Newton 2-cycles when large impulses meet strongly curved gaps).
        An iterate's error is its penetration plus how far its end-of-step position moved
        from the previous iterate's (zero once converged); the iterate with the least error
        is kept, and iterations stop when it is below ``gap_tol``.
        """
        fixed_kind = self.solver
        first = sol
        st = self.settings
        if kind == "nlp" and st.polish and bounds[1] * (1 - st.polish_tol) <= sol.h < bounds[1]:
            cand, cand_out = self._solve(fixed_kind, (bounds[1], bounds[1]), self.q)
            if self._check(cand, cand_out)[0]:
                sol, out = cand, cand_out
        last, last_out = sol, out
        error = self._gap_error(out)
        for it in range(st.gap_iterations if self.cs.n_gap else 0):
            if error <= st.gap_tol:
                break
            curvature = (last.P_g, last.y) if fixed_kind == "qp" else None
            y_prev = last.y
            last, last_out = self._solve(fixed_kind, (sol.h, sol.h), last_out[0], curvature)
            if not self._check(last, last_out)[0]:
                break
            last.gap_iterations = it + 1
            drift = last.h * np.abs(self.program.Linv_T @ (last.y - y_prev)).max()
            last_error = self._gap_error(last_out) + drift
            if last_error < error:
                sol, out, error = last, last_out, last_error
        if sol is not first:
            sol.solver, sol.iterations = first.solver, first.iterations
            sol.status = first.status + (" (polished)" if sol.h != first.h else "")
        return sol, out

    def _gap_error(self, out):
        """How far a step is from the nonlinear end-of-step contact conditions (m): the
        penetration plus the largest true gap still open where a contact force acts (the
        linearised row closed it, the curved gap did not)."""
        gaps, lam = out[8], out[3]
        active = lam > 1e-8 * self._force_scale
        open_active = gaps[active].max(initial=0.0) if active.any() else 0.0
        return max(-out[7][0], 0.0) + max(open_active, 0.0)

    def _attempts(self, h_min, h_max):
        primary = "nlp" if self.step_control == "nlp" else self.solver
        if self.step_control != "nlp":
            h_min = h_max
        kinds = [primary] + (["ipopt"] if self.settings.fallback and primary not in ("ipopt", "nlp") else [])
        for r in range(self.settings.max_retries + 1):
            hb = (min(h_min, h_max / 2**r), h_max / 2**r)
            for kind in kinds:
                yield kind, hb

    def _predict_contact_step(self, h_min, h_max):
        """Largest h in [h_min, h_max] after which no open gap has closed in a free step
        (true gaps at the free end of step, bisection to 1/64 of the bracket)."""
        if self.cs.n_gap == 0:
            return h_max
        open_ = self.gaps > self._max_penetration

        def closes(h):
            return bool(np.any(self.program.free_gap(self.q, self.v, self.t, h, self.z)[0][open_] < 0))

        if not open_.any() or not closes(h_max):
            return h_max
        if closes(h_min):
            return h_min
        lo, hi = h_min, h_max
        for _ in range(6):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if closes(mid) else (mid, hi)
        return lo

    def _solve(self, kind, bounds, q_lin, curvature=None):
        """One solve of the step program; returns (StepSolution, finish outputs)."""
        q, v, t, z = self.q, self.v, self.t, self.z
        form = self.settings.form
        if kind == "direct":
            return self.program.solve_direct(q, v, t, bounds[1], z)
        if kind == "qp":
            return self._solve_qp(bounds[1], q_lin, curvature)
        if kind == "nlp":
            key = (form, True)
            sol, self._warm[key] = self.program.solve_nlp(form, q, v, t, bounds, self.h_max,
                                                          True, q_lin, z, self._warm.get(key))
        else:   # IPOPT on a fixed step (primary for solver="ipopt", else the fallback)
            key = (form if self.solver == "ipopt" else "gauss", False)
            sol, self._warm[key] = self.program.solve_nlp(key[0], q, v, t, (bounds[1], bounds[1]),
                                                          bounds[1], False, q_lin, z, self._warm.get(key))
        return sol, self.program.finish_step(q, v, t, sol.h, q_lin, z, sol)

    def _solve_qp(self, h, q_lin, curvature):
        """The fixed-h QP; with implicit force elements, Newton iterations (one QP each, forces
        linearised at the previous iterate) until the EOM holds with the end-of-step forces."""
        st = self.settings
        y_imp = self._y_guess(h) if self.program.has_implicit else None
        sol, out = self.program.solve_qp(self.q, self.v, self.t, h, q_lin, self.z, self._lam_qp,
                                         curvature, y_imp)
        if not self.program.has_implicit:
            return sol, out
        for it in range(st.implicit_iterations):
            if not np.isfinite(out[-1][2]) or out[-1][2] <= st.implicit_tol:
                break
            sol, out = self.program.solve_qp(self.q, self.v, self.t, h, q_lin, self.z,
                                             -np.r_[sol.P_eq, sol.P_g], curvature, sol.y)
        sol.iterations = it + 1 if st.implicit_iterations else 1
        return sol, out

    def _y_guess(self, h):
        """Scaled end-of-step velocity guess for the implicit linearisation: the last step's
        velocity change repeated (exact for constant acceleration)."""
        v = self.v if self._dv is None else self.v + self._dv * (h / self._dv_h)
        return self.cs.L.T @ v

    def _check(self, sol: StepSolution, out) -> tuple[bool, str]:
        """Physical acceptance test of a step (solvers report success on wrong answers)."""
        if not sol.success:
            return False, f"solver status {sol.status!r}"
        check = out[-1]
        if (check[:3] < self._check_limits).all() and check[3] < 1e-2 and np.isfinite(check[4]):
            return True, ""
        labels = ("linearised joint rows violated (relative)", "linearised gap rows violated "
                  "(relative)", "EOM residual (relative)", "Euler-parameter norm error")
        for label, value, limit in zip(labels, check[:4], [*self._check_limits, 1e-2]):
            if not value < limit:
                return False, f"{label} {value:.3e}"
        return False, "non-finite state"

    def _accept(self, sol, out, retries, wall) -> StepInfo:
        (q1, v1, mu, lam, eom, viol, norm_err, min_gap, gaps, comp, _) = out
        t1 = self.t + sol.h
        proj_change = 0.0
        if self.settings.projection and (self.cs.n_eq or self.cs.n_gap):
            if self.cs.n_gap:
                if self._projector is None:
                    self._projector = GapProjector(self.cs, "qpoases", _QP_OPTIONS["qpoases"])
                q_proj, _, _, _ = self._projector.project(q1, t1, tol=self.settings.projection_tol,
                                                                max_iter=50)
                viol_after = np.abs(np.asarray(self.cs.phi(q_proj, t1)).ravel()).max(initial=0.0)
            else:
                q_proj, _, viol_after, _ = project_positions(self.cs, q1, t1,
                                                             tol=self.settings.projection_tol)
            proj_change = position_change(q1, q_proj, self.cs.n_bodies)
            q1 = q_proj
            viol = np.array([viol_after])
            gaps = np.asarray(self.cs.gap(q1)).ravel()
            min_gap = np.array([gaps.min() if gaps.size else np.inf])
        if sol.solver not in ("direct",) and self.cs.n_gap + self.cs.n_eq:
            self._lam_qp = -np.r_[sol.P_eq, sol.P_g]
        self._contact_force = lam
        self._dv, self._dv_h = v1 - self.v, sol.h
        self.z = np.asarray(self.cs.history_next(t1, q1, v1, self.z)).ravel()
        active = lam > 1e-8 * self._force_scale
        changed = bool(np.any(active != self._active))
        self.q, self.v, self.t, self.gaps, self._active = q1, v1, t1, gaps, active
        return StepInfo(t1, sol.h, sol.solver, sol.status, sol.iterations, wall,
                        float(eom[0]), float(viol[0]), float(norm_err[0]), float(min_gap[0]),
                        float(comp[0]), retries, proj_change, sol.gap_iterations, changed,
                        mu, lam, gaps)


def _as_dict(settings):
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def simulate(system: System, t_end: float, h, settings: StepperSettings | None = None,
             progress: bool | None = None, t0: float = 0.0, **options) -> Result:
    """Simulate ``system`` from ``t0`` to ``t_end``.

    Parameters
    ----------
    system : System
    t_end : float
        Final time (s).
    h : float or (h_min, h_max)
        Fixed step, or bounds for the variable-step schemes (``step_control``).
    settings : StepperSettings, optional
        Stepper options; keyword ``options`` override single fields
        (e.g. ``step_control="nlp"``, ``form="explicit"``, ``projection=True``).
    progress : bool or None
        Show a tqdm progress bar; None shows it only on a terminal.

    Returns
    -------
    Result
        Partial when a step fails: ``success`` is False and ``message`` says where and why.

    Example
    -------
    >>> res = simulate(system, t_end=5.0, h=1e-3)       # doctest: +SKIP
    >>> res.position("crank").shape                      # doctest: +SKIP
    (5001, 3)
    """
    if not (np.isfinite(t_end) and t_end > t0):
        raise ModelError([f"t_end must be finite and greater than t0 = {t0}, got {t_end}"])
    stepper = Stepper(system, h, settings, t0=t0, **options)
    ts, qs, vs, zs, infos = [stepper.t], [stepper.q], [stepper.v], [stepper.z], []
    gap_hist = [stepper.gaps]
    status, message = 0, "reached t_end"
    bar = tqdm(total=float(t_end - t0), unit="s", disable=(None if progress is None else not progress),
               bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
    last_update = stepper.t
    try:
        while stepper.t < t_end - 1e-12 * max(1.0, abs(t_end)):
            try:
                info = stepper.step(t_end)
            except StepFailure as err:
                status, message = -1, str(err)
                break
            except KeyboardInterrupt:
                status, message = -1, f"interrupted at t = {stepper.t:.9g}"
                break
            infos.append(info)
            ts.append(stepper.t)
            qs.append(stepper.q)
            vs.append(stepper.v)
            zs.append(stepper.z)
            gap_hist.append(info.gaps)
            if stepper.t - last_update >= 0.01 * (t_end - t0):
                bar.update(stepper.t - last_update)
                last_update = stepper.t
    finally:
        bar.update(stepper.t - last_update)
        bar.close()
    return _build_result(stepper, ts, qs, vs, zs, infos, gap_hist, status, message)


def _build_result(stepper, ts, qs, vs, zs, infos, gap_hist, status, message) -> Result:
    cs = stepper.cs
    t = np.asarray(ts)
    q = np.asarray(qs).reshape(len(ts), cs.nq)
    v = np.asarray(vs).reshape(len(ts), cs.nv)
    n = len(infos)
    stats = StepStats(
        solver=np.array([i.solver for i in infos], dtype="U16"),
        status=np.array([i.status for i in infos], dtype="U48"),
        **{f: np.array([getattr(i, f) for i in infos],
                    dtype=int if f in ("iterations", "retries", "gap_iterations") else
                    bool if f == "contact_changed" else float)
           for f in ("iterations", "wall_time", "eom_residual", "constraint_violation", "norm_error",
                     "min_gap", "complementarity", "retries", "projection_change",
                     "gap_iterations", "contact_changed")})
    mu = np.array([i.mu for i in infos]).reshape(n, cs.n_eq)
    lam = np.array([i.lam for i in infos]).reshape(n, cs.n_gap)
    gaps = np.asarray(gap_hist).reshape(len(ts), cs.n_gap)
    kin = np.asarray(cs.kinetic.map(len(ts))(v.T)).ravel()
    pot = np.asarray(cs.potential.map(len(ts))(t[None, :], q.T)).ravel()
    n_steps = len(t) - 1
    jac = _jacobians(cs.velocity_jacobian, n_steps, cs.n_eq, cs.nv, q[:-1].T, t[None, :-1])
    jac_g = _jacobians(cs.gap_jacobian, n_steps, cs.n_gap, cs.nv, q[:-1].T)
    wrenches = _element_wrenches(cs, cs.constraint_rows, jac, q[:-1], mu)
    wrenches.update(_element_wrenches(cs, cs.gap_rows, jac_g, q[:-1], lam))
    contact_points, contact_vectors = _contact_data(cs, jac_g, q, lam)
    rows = {r.name: (r.start, r.stop, [b.name for b in r.element.bodies]) for r in cs.constraint_rows}
    gap_rows = {r.name: (r.start, r.stop, [b.name for b in r.element.bodies]) for r in cs.gap_rows}
    info = {"step_control": stepper.step_control, "solver": stepper.solver,
            "form": stepper.settings.form, "h_min": stepper.h_min, "h_max": stepper.h_max,
            "program_builds": stepper.program.build_count}
    h = np.array([i.h for i in infos], dtype=float)
    z = np.asarray(zs).reshape(len(ts), cs.n_history)
    force_wrenches, work, element_pot = _force_element_data(cs, t, q, v, z, h)
    wrenches.update(force_wrenches)
    force_elements = {el.name: [b.name for b in el.bodies] for el in cs.force_elements}
    return Result(t, q, v, h, kin + pot, kin, pot, stats, mu, lam, gaps,
                  [b.name for b in cs.bodies], rows, gap_rows, wrenches, status == 0, status,
                  message, stepper.initial_projection, info, contact_points, contact_vectors,
                  force_elements, work, element_pot)


def _force_element_data(cs, t, q, v, z, h):
    """Per force element: wrenches as each step used them (start of step if explicit, end if
    implicit), the work done on the bodies, h Q^T (v_start + v_end)/2 summed (with it the
    kinetic energy balance of a step is exact: T1 - T0 = sum of the works, constraints
    included), and the stored energy."""
    n, n_el = len(t) - 1, len(cs.force_elements)
    pot = np.asarray(cs.element_potentials.map(len(t))(t[None, :], q.T)).reshape(n_el, len(t))
    wrenches, work, element_pot = {}, {}, {}
    if n == 0:
        Q = np.zeros((n_el, 0, cs.nv))
    else:
        F = cs.element_forces.map(n)
        zt = z[:-1].T
        Q_start = np.asarray(F(t[None, :-1], q[:-1].T, v[:-1].T, zt)).reshape(cs.nv, n_el, n, order="F")
        Q_end = np.asarray(F(t[None, 1:], q[1:].T, v[1:].T, zt)).reshape(cs.nv, n_el, n, order="F")
        Q = np.where(np.array([el.evaluation == "implicit" for el in cs.force_elements])[None, :, None],
                     Q_end, Q_start).transpose(1, 2, 0)               # (n_el, n, nv)
    for j, el in enumerate(cs.force_elements):
        step_work = h * np.einsum("kv,kv->k", Q[j], 0.5 * (v[:-1] + v[1:])) if n else np.zeros(0)
        work[el.name] = np.r_[0.0, np.cumsum(step_work)]
        element_pot[el.name] = pot[j]
        wrenches[el.name] = _wrenches_from_generalised(el, q[:-1], Q[j], None)
    return wrenches, work, element_pot


def _wrenches_from_generalised(el, q, gen, point):
    """[force (global), moment about ``point`` (global; None: about each CoM)] per body of
    ``el`` from its generalised force ``gen`` (n, nv); the ground gets minus the sum."""
    n = len(q)
    res = np.zeros((n, len(el.bodies), 6))
    moving = [j for j, b in enumerate(el.bodies) if not b.is_ground]
    for j in moving:
        b = el.bodies[j]
        k = b.index
        A = np.array([rotation_matrix(p) for p in q[:, 7 * k + 3:7 * k + 7]]).reshape(n, 3, 3)
        f = gen[:, 6 * k:6 * k + 3]
        n_cm = np.einsum("nij,nj->ni", A, gen[:, 6 * k + 3:6 * k + 6])
        if point is not None:
            arm = np.einsum("nij,j->ni", A, b.local_point(point))   # point - CoM
            n_cm = n_cm - np.cross(arm, f)
        res[:, j, :3], res[:, j, 3:] = f, n_cm
    for j, b in enumerate(el.bodies):
        if b.is_ground:
            res[:, j] = -res[:, moving].sum(axis=1)
            if point is None:
                res[:, j, 3:] = np.nan     # moments about the CoMs do not add up
    return res


def _element_wrenches(cs, rows, jac, q, multipliers):
    """Per element and body: [force (global), moment about the element's point (global)]
    from the generalised forces jac^T multipliers (jac: (n_rows, n, nv), per step)."""
    out = {}
    for r in rows:
        gen = np.einsum("ekv,ke->kv", jac[r.start:r.stop], multipliers[:, r.start:r.stop])
        out[r.name] = _wrenches_from_generalised(r.element, q, gen, r.element.reaction_point())
    return out


def _jacobians(fn, n, rows, nv, *args):
    if n == 0 or rows == 0:
        return np.zeros((rows, n, nv))
    return np.asarray(fn.map(n)(*args)).reshape(rows, n, nv)   # column blocks per step


def _contact_data(cs, jac_g, q, lam):
    """Per gap element: contact points (n+1, n_gaps, 3) and force vectors on the child
    (n, n_gaps, 3), global."""
    points, vectors = {}, {}
    if cs.n_gap == 0:
        return points, vectors
    all_points = np.asarray(cs.contact_points.map(len(q))(q.T)).reshape(cs.n_gap, 3, len(q),
                                                                       order="F")
    for r in cs.gap_rows:
        child = r.element.bodies[-1]
        sign = 1.0
        if child.is_ground:
            child, sign = r.element.bodies[0], -1.0
        k = child.index
        g = jac_g[r.start:r.stop, :, 6 * k:6 * k + 3]                 # (n_gaps, n, 3)
        vectors[r.name] = sign * np.einsum("jnd,nj->njd", g, lam[:, r.start:r.stop])
        points[r.name] = np.transpose(all_points[r.start:r.stop], (2, 0, 1))
    return points, vectors
