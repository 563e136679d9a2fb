"""Step control: Stepper.step() for driving the loop yourself, simulate() for everything else."""
from __future__ import annotations

import re
import signal
import threading
import time
import traceback
import types
import warnings
from dataclasses import dataclass, field, fields, replace

import casadi as ca
import numpy as np
from tqdm.auto import tqdm

from .assembly import LedgerTotals, Recorder, build_result
from .checks import UNIT_NORMALISE, is_choice, is_number, step_end, step_size_problems, time_span
from .joints.ideal import Joint, Programmed, _Driver
from .forces.elements import Gravity
from .contact import ACCEPTED, SCHEMES, ContactOutcome, ContactScheme, WithFallback, closed_in_solve
from .rotations import G_matrix, rotation_matrices
from .projection import (GapProjector, independent_rows, normalise, position_change,
                         project_positions, project_velocities)
from .result import Result
from .run_arguments import raise_problems, run_problems, stepper_arguments
from .fastcall import silenced_stdout
from .jit import resolve_mode
from .step_nlp import _QP_OPTIONS, StepProgram, StepSolution
from .system import CompiledSystem, ModelError, System

STEP_CONTROLS = ("fixed", "nlp", "adaptive", "error")
FORMS = ("gauss", "explicit")
TIME_SCHEMES = ("euler", "midpoint")
_NON_FINITE = re.compile(r"nan|inf\b|Invalid_Number|non-finite", re.IGNORECASE)
PROJECTION_NOTICE = 1e-6
"""An initial projection that moves a body by more than this share of the model's size (its
speed by this share of the run's speed scale, its rotation by this many rad) is announced:
a warning naming the body, and ``Result.info["warnings"]``."""


@dataclass
class StepperSettings:
    """Options of the time stepper. Defaults are the measured best (the documentation's
    pages guide/stepping and guide/performance)."""

    step_control: str | None = None
    """"fixed" (h constant), "nlp" (the seed's scheme: h a bounded NLP variable, IPOPT),
    "adaptive" (fast QP steps, h = h_max unless a gap is predicted to close within the step,
    then the step is cut to end at contact onset) or "error" (h within (h_min, h_max) from
    each step's estimated error, ``rtol``). None: "error" when ``rtol`` is given, else "fixed"
    for a scalar h, "adaptive" for bounds (h_min, h_max)."""
    rtol: float | None = None
    """Error-controlled h (scheme "midpoint", bounds h = (h_min, h_max)): the error the run
    may gather, relative to the motion's scale in every coordinate: positions against the
    model's size (m) or 1 rad, velocities against the largest speed or angular speed (at
    least sqrt(|g| L) and that over L). Each step gets an equal share of it: the mean step
    so far over T, T the run's length (``simulate``'s t_end - t0; a Stepper's: the ``t_end``
    given to ``step`` less its start, ``reset`` or ``set_state``, else none: the tolerance
    per step). The estimate is step doubling: two steps of h from one state against one of
    2 h, the difference along the joints over 3 (the two steps' error, second order); a pair
    beyond it is taken again with a smaller h, and h grows at most 4x from a pair to the
    next. Each step of a pair is one ``Stepper.step``. About 1.5 solves a step. Contact
    elements (joint stops, penalty joints, contact laws: forces continuous in the motion)
    are stepped through by the estimate itself, their impacts with it (``contact_resolution``
    is the fixed h's); clearance joints' gaps (velocity jumps) are refused. None: no error
    control.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> from problems import chain
    >>> res = nd.simulate(chain.build(2), 0.5, (1e-6, 1e-2), scheme="midpoint", rtol=1e-4,
    ...                   progress=False)
    >>> res.info["error_control"]["rejected_pairs"] >= 0
    True
    """
    atol: float = 0.0
    """Absolute part of ``rtol``'s tolerance, in each coordinate's own unit (m, rad, m/s,
    rad/s)."""
    scheme: str | None = None
    """The time discretisation. "euler": the seed's semi-implicit Euler (first order, every
    setting; numerically dissipative in implicit elements and sustained contact).
    "midpoint": Moreau's midpoint rule, second order in smooth motion, at one solve per step
    (two to three where bodies spin: the gyroscopic term's iterations): the positions drift
    half a step with the start velocity; forces, joint rows and held contacts' normals and
    lever arms are taken at that midpoint, velocity-dependent forces at the velocity
    predicted from the last step's velocity change and the gyroscopic term at the step's
    mean velocity (iterated: it does no work); the velocities take the step's whole impulse;
    the positions drift the second half with the end velocity. The joint rows ask the
    step's end to meet the constraints to O(h^3), the gaps' rows ask it to meet the gaps (the
    contact iterations), and the end velocity is projected onto the joints' rates there,
    with no closing speed at a closed gap and none after an impact (plastic), so the state
    does not depend on the next h (``rtol`` varies it); velocity constraints hold for the
    step's mean velocity; elements evaluated "implicit" (joint stops and penalty joints
    among them) apply their stored energy's discrete gradient over the step whole, with no
    carry (``docs/FORMULATION.md``). It takes solver "direct" or "qp", a fixed, "adaptive"
    or error-controlled (``rtol``; over contact elements, not yet over gaps) h and
    ``projection`` False; the seed's settings (step_control "nlp", solver "ipopt", form
    "explicit", contact "linearised" or ``gap_iterations`` 0, ``projection``) are refused, the
    setting named. None: "midpoint", or "euler" with any of the seed's settings."""
    form: str = "gauss"
    """"gauss": v is the only unknown and the multipliers come from the KKT conditions;
    "explicit": the seed's NLP with impulses as variables and the EOM as equality rows (IPOPT)."""
    solver: str | None = None
    """Solver of the fixed-h program: "direct" (no gaps: the step's KKT system by CasADi's
    sparse LDL^T; in closed form for ideal joints, with Newton iterations for implicit force
    elements), "qp" (the CasADi conic plugin ``qp_solver``) or "ipopt". None: "direct"
    without gaps, else "qp"."""
    qp_solver: str | None = None
    """CasADi conic plugin used when ``solver == "qp"`` (qpoases, proxqp, osqp, qrqp, daqp,
    ...). None: qpoases (dense, fastest for small systems) up to 60 velocity unknowns (10
    bodies), proxqp with its sparse backend above (cost linear in the bodies;
    ``benchmarks/scaling.py``)."""
    qp_options: dict | None = None
    """Extra options passed to the conic plugin."""
    nlp_tol: float = 1e-8
    """IPOPT ``tol``."""
    nlp_method: str = "bisection"
    """How the seed's scheme (``step_control="nlp"``) finds h. "bisection": the objective at the
    inner program's optimum, f(h) = (h_max/h)^2 Z*(h) - tie h, is a function of h alone whose
    slope each fixed-h solve gives (envelope theorem); h_max when f decreases there (one
    solve), else bisection on the slope's sign (``nlp_bisections``). "ipopt": h as a variable
    of the NLP solved by IPOPT (the reference it is tested against). The explicit form and
    systems with implicit force elements always use IPOPT."""
    nlp_bisections: int = 6
    """Bisections of [h_min, h_max] when f increases at h_max (resolution (h_max - h_min)/2^n)."""
    nlp_mu_init: float = 1e-9
    """IPOPT ``mu_init`` for the warm-started solves (small: the previous step is a good guess)."""
    nlp_max_iter: int = 100
    """IPOPT ``max_iter``."""
    nlp_options: dict | None = None
    """Extra IPOPT options (e.g. {"linear_solver": "ma27"})."""
    tie_break: float = 1e-4
    """Preference for large h in the "nlp" scheme, J per kg of total mass: the objective gets
    - tie_break * m_total * h / h_max. It only decides between steps the Gauss objective
    cannot tell apart (free flight); see docs/FORMULATION.md."""
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
    """Retry a rejected step with another solver before cutting h: IPOPT (scheme "euler"),
    the conic plugin ``qp_solver`` where scheme "midpoint" solves the KKT system ("direct":
    an ill-conditioned model's rows may stay unmet after its refinement steps)."""
    polish: bool = True
    """In the "nlp" scheme, a step whose h ends within ``polish_tol`` (relative) of its upper
    bound is re-solved with h exactly at the bound by the fixed-step solver: the interior
    point otherwise stops ~1e-7..1e-5 short of the bound (barrier offset mu / tie-break)."""
    polish_tol: float = 1e-4
    """Relative distance from the h bound within which an "nlp" step is polished."""
    contact: str = "cone"
    """How a step meets its gaps (``nlpdyn.contact``): "cone" (chord iterations with the
    contact coordinates' Jacobian at the start of the step: no spurious work in sustained
    frictionless contact), "end_normal" (sequential QP with end-of-step gap gradients: O(h)
    numerical damping of sliding contact) or "linearised" (the seed's rows, one solve)."""
    contact_fallback: str | None = "end_normal"
    """Scheme tried on a step where ``contact`` does not converge within ``gap_iterations``
    (None: none). Such steps are counted in ``Result.stats.contact_fallback`` and their energy
    shows in the ledger's contact columns."""
    gap_iterations: int | None = None
    """Iterations on the nonlinear end-of-step gaps after the first solve (0: the seed's
    linearised gaps only, whatever ``contact`` says). Each re-solves the fixed-h program with
    the gaps linearised at the previous iterate; the linearisation otherwise leaves a
    penetration ~ h^2 |v_t|^2 / clearance. None: 12, or 24 where clearance contacts have
    friction (normal and friction impulses settle together: CASES.md #3 with friction 0.3
    fails in its jam at 12 and 16 iterations, runs at 24)."""
    gap_tol: float = 1e-10
    """The gap iterations stop once the penetration plus the last iterate's change of the
    end-of-step position (m, largest component of h dv) is below this."""
    implicit_iterations: int = 30
    """Newton iterations on the implicit force elements per fixed-h solve (each one QP)."""
    implicit_tol: float = 1e-10
    """The implicit iterations stop once the relative EOM residual with the forces at the
    end of the step is below this, or below its own round-off where that is larger (the
    momenta's over h, in steps shorter than about 1e-6 s)."""
    friction_iterations: int = 30
    """Re-solves of a step with joint friction (``LuGreFriction``) until the joints' normal
    forces the step assumed are the ones it produces."""
    friction_tol: float = 1e-8
    """Those re-solves stop once no normal force changes by more than this fraction of the
    force scale (m_total (|g| + 1 m/s^2), or the largest normal force if larger)."""
    energy_tol: float = 0.05
    """Largest energy a step may create beyond the work of forces, drivers and contacts (its
    ledger residual and ideal joints' work), as a fraction of the energy in play (kinetic
    energy at both ends, m_total |g| times the model's size, every agent's work in the step);
    a step beyond it is rejected and retried with a smaller h. The case studies' steps stay
    below 0.032 (a jam in the slider-crank clearance notebook); an explicit stiff spring
    beyond its stability limit creates 0.94, a rod pushed past its reach 0.17."""
    strict: bool = False
    """True: a run whose discretisation, drift or momentum note (``discretisation_warning``,
    ``drift_warning``, ``momentum_warning``) fires ends with ``success`` False and the note
    as its message, keeping the trajectory; False (default): it succeeds and warns."""
    discretisation_warning: float = 0.05
    """A run whose discretisation moved more energy than this share of the energy in play
    says so (a warning and ``Result.info["warnings"]``): the largest |residual + ideal joints'
    work| of its energy ledger against the largest kinetic plus stored energy of its steps
    (every element but gravity, and what energy-consistent elements carry) or the range
    gravity's potential spans, whichever is larger. The steps then do not resolve the
    motion; a smaller h does."""
    drift_warning: float = 1e-3
    """A run whose joint rows (distances in m; axis rows, products of unit vectors ~ rad)
    exceeded this fraction of the model's size after a step says so (a warning and
    ``Result.info["warnings"]``): the steps do not resolve the motion; a smaller h or
    ``projection=True`` does."""
    momentum_warning: float = 0.01
    """A free system (nothing tied to the ground, no applied loads, no programmed or velocity
    constraints; gravity allowed) whose momentum (linear, less gravity's impulse; angular
    about the centre of mass) drifts by more than this share of its momentum in play (the
    bodies' momenta summed by magnitude, at their largest) says so (a warning and
    ``Result.info["warnings"]``)."""
    violation_check: float = 1e-4
    """A step that leaves joints apart by more than this fraction of the model's size is
    checked: Gauss-Newton must close them from the end of the step (10 iterations), else the
    step is rejected (the constraints cannot be met there: an impossible programmed motion,
    contradictory joints)."""
    contact_resolution: float | None = 0.25
    """Largest omega h of an impact of an energy-consistent contact element (joint stops,
    penalty clearance joints, an implicit range-of-motion cone; ``ForceElement.is_contact``)
    during its first period 2 pi / omega after it closes: a stiffer one shortens the step (to a
    whole fraction of the fixed h, back on its grid after the impact), down to h /
    ``contact_substeps``, so the impact is resolved in time. omega is that of the element's
    stored energy at the step's Newton linearisation, with its bodies free (an upper bound for
    bodies held by joints), in an impact that of its laws' loading branch where it is stiffer
    (``ContactLaw.loading_stiffness_ratio``: the modified Kelvin-Voigt law loads along K delta
    and stores c_e K delta^2 / 2). A contact closed longer is sustained: its slow loads are
    carried at any h, and it is stepped at up to 4 ``contact_resolution`` (its stiff vibration
    not resolved, only kept within reach of the step's Newton iterations). None: every step at
    h; an unresolved impact's outcome (its loss, its duration) then depends on h, and a run with
    omega h above 1 says so. With ``rtol`` the error estimate chooses h through impacts
    instead."""
    contact_substeps: int = 64
    """The most steps ``contact_resolution`` makes of one step of the fixed h (of h_max)."""
    jit: bool | str | None = None
    """Whether the step's solves, its end-velocity projection and the implicit elements'
    linearisation are compiled to machine code with the system's C compiler
    (``nlpdyn.jit``): CasADi generates their C code, built once and cached on disk
    (``$NLPDYN_CACHE``, else ``~/.cache/nlpdyn/jit``) by a hash of the function, so a
    second run of the same model compiles nothing. Results equal the interpreter's bit for
    bit (no fused multiply-adds). True: built before the first step (seconds: 7-23 s for a
    16- or 64-link chain's step). "auto": the cached ones are loaded, and the others are
    built by a separate process once the run left would take longer interpreted than the
    build (``jit.BUILD_SECONDS``; without a known end, once the steps so far have), while
    the run steps on interpreted and switches when they are ready; a short run compiles
    nothing. False: interpreted. None (the default): ``$NLPDYN_JIT`` ("0", "1", "auto")
    where set, else "auto". A function that cannot be generated (the conic plugins:
    qpOASES, ProxQP) or a missing compiler leaves it interpreted; ``Result.info["jit"]``
    says what was compiled, loaded from the cache or left, and why."""
    max_penetration: float | None = None
    """Largest contact error (m: penetration, or a true gap still open where a contact force
    acts) accepted after the contact iterations; a step beyond it is retried with a smaller h.
    None: 10 ``gap_tol`` (1e-9 m by default) for the iterated schemes, 1 % of the smallest
    clearance for "linearised" (which penetrates by design)."""

    def __post_init__(self):
        problems = []
        if not is_choice(self.step_control, (None, *STEP_CONTROLS)):
            problems.append(f"step_control must be one of {STEP_CONTROLS}, got {self.step_control!r}")
        if self.rtol is not None and not (is_number(self.rtol) and 0 < self.rtol < 1):
            problems.append(f"rtol must be None or a number in (0, 1), got {self.rtol!r}")
        if not (is_number(self.atol) and self.atol >= 0):
            problems.append(f"atol must be >= 0 (a finite number), got {self.atol!r}")
        if not is_choice(self.scheme, (None, *TIME_SCHEMES)):
            problems.append(f"scheme must be one of {TIME_SCHEMES}, got {self.scheme!r}")
        if not is_choice(self.form, FORMS):
            problems.append(f"form must be one of {FORMS}, got {self.form!r}")
        if not is_choice(self.solver, (None, "direct", "qp", "ipopt")):
            problems.append(f"solver must be 'direct', 'qp' or 'ipopt', got {self.solver!r}")
        if not is_choice(self.initial_conditions, ("project", "check")):
            problems.append(f"initial_conditions must be 'project' or 'check', got "
                            f"{self.initial_conditions!r}")
        for name in ("nlp_tol", "consistency_tol", "projection_tol", "check_tol", "regularization",
                     "gap_tol", "implicit_tol", "polish_tol", "nlp_mu_init", "energy_tol",
                     "discretisation_warning", "drift_warning", "momentum_warning",
                     "violation_check", "friction_tol"):
            if not (is_number(getattr(self, name)) and getattr(self, name) > 0):
                problems.append(f"{name} must be > 0 (a finite number), got {getattr(self, name)!r}")
        for name in ("tie_break", "complementarity_eps"):
            if not (is_number(getattr(self, name)) and getattr(self, name) >= 0):
                problems.append(f"{name} must be >= 0 (a finite number), got {getattr(self, name)!r}")
        if self.contact_resolution is not None and not (is_number(self.contact_resolution)
                                                        and self.contact_resolution > 0):
            problems.append(f"contact_resolution must be None or > 0 (omega h, a finite "
                            f"number), got {self.contact_resolution!r}")
        if self.max_penetration is not None and not (is_number(self.max_penetration)
                                                     and self.max_penetration > 0):
            problems.append(f"max_penetration must be None or > 0 (m, a finite number), got "
                            f"{self.max_penetration!r}")
        if self.gap_iterations is not None and not (
                isinstance(self.gap_iterations, (int, np.integer))
                and not isinstance(self.gap_iterations, bool) and self.gap_iterations >= 0):
            problems.append(f"gap_iterations must be >= 0 (a whole number) or None, got "
                            f"{self.gap_iterations!r}")
        for name, least in (("max_retries", 0), ("nlp_bisections", 0),
                            ("implicit_iterations", 0), ("refinement_steps", 1), ("nlp_max_iter", 1),
                            ("friction_iterations", 1), ("contact_substeps", 1)):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                    and value >= least):
                problems.append(f"{name} must be >= {least} (a whole number), got {value!r}")
        try:
            resolve_mode(self.jit)
        except ValueError as error:
            problems.append(str(error))
        for name in ("projection", "fallback", "polish", "strict"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                problems.append(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("qp_options", "nlp_options"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), dict):
                problems.append(f"{name} must be None or a dict, got {getattr(self, name)!r}")
        if self.qp_solver is not None and not (isinstance(self.qp_solver, str)
                                               and ca.has_conic(self.qp_solver)):
            problems.append(f"qp_solver {self.qp_solver!r} is not a QP plugin of this CasADi "
                            "(e.g. 'qpoases', 'proxqp', 'osqp', 'daqp', 'qrqp')")
        if not is_choice(self.contact, SCHEMES):
            problems.append(f"contact must be one of {SCHEMES}, got {self.contact!r}")
        if not is_choice(self.contact_fallback, (None, *SCHEMES)):
            problems.append(f"contact_fallback must be None or one of {SCHEMES}, "
                            f"got {self.contact_fallback!r}")
        if not is_choice(self.nlp_method, ("bisection", "ipopt")):
            problems.append(f"nlp_method must be 'bisection' or 'ipopt', got {self.nlp_method!r}")
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


def _step_bounds(h) -> tuple[float, float]:
    """(h_min, h_max) of a step size or a pair, else a ModelError naming h."""
    problems, bounds = step_size_problems(h)
    if problems:
        raise ModelError(problems)
    return bounds


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

    Examples
    --------
    >>> stepper = Stepper(system, h=1e-3)          # doctest: +SKIP
    >>> while stepper.t < 1.0:                      # doctest: +SKIP
    ...     info = stepper.step()
    """

    def __init__(self, system: System, h, settings: StepperSettings | None = None, t0: float = 0.0,
                 **overrides):
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
    def _restart(self):
        """Forget the steps taken (warm starts, contact memory, ledger, record): the next step
        starts afresh from the current t, q, v, z."""
        cs = self.cs
        self._warm = {}
        self._lam_qp = None
        self._dv, self._dv_h = None, None
        self._accel = np.zeros(cs.nv)       # the last step's velocity change over its h
        self._iterate_accel = self._accel
        self._net_normal = np.zeros(cs.n_gap)      # the last contact iterate's, projection's included
        # error control (rtol): the next pair's h, the second step of a checked pair, where
        # the steps counted from began, and the record
        self._h_error, self._queued, self._error_start = self.h_min, None, self.t
        self.error_control = {"rejected_pairs": 0, "smallest_h": np.inf, "largest_h": 0.0,
                              "largest_error": 0.0, "solves": 0}
        self._contact_force = None
        self.gaps = np.asarray(cs.gap(self.q)).ravel()
        self._active = np.zeros(cs.n_gap, dtype=bool)
        self._was_open = np.zeros(cs.n_gap, dtype=bool)
        self._energy_high = 0.0     # the largest energy in play of a step so far
        self._energy_scale = 0.0    # the largest kinetic + stored energy of a step so far
        # the largest share of drift_warning a joint reached after a step: (share, t, what)
        self._drift = (0.0, self.t, "")
        if self._momentum_bodies is not None:
            P, L, scale = _momenta(self._momentum_bodies, self.q, self.v)
            # the start's momenta, the momenta in play so far, the largest drift's share and when
            self._momentum = (P, L, self.t, scale, (0.0, self.t, ""))
        self.program.reset_qp()
        for scheme in (self.contact.primary, self.contact.fallback):
            if scheme is not None:
                scheme.reset()
        self.ledger = LedgerTotals(cs)
        # impacts resolved in time: the largest h the last step's impact allows, whether a
        # contact was closed, per contact element the time it closed (NaN: open), and the
        # run's record (steps shortened, the smallest h, the least resolved impact)
        self._h_next = np.inf
        self._any_closed = False
        self._closed_since = np.full(len(self.program.implicit.contacts)
                                     if self.program.implicit is not None else 0, np.nan)
        self.resolution = {"shortened_steps": 0, "smallest_h": np.inf,
                           "unresolved": (0.0, self.t, "", 0.0)}
        self._log_start = (self.t, self.q, self.v, self.z, self.gaps)
        self._log = []      # per step: (start, StepInfo, q, v, z at its end)

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

    def _start_memory(self):
        """The memory at the current state: the elements' initial memory, the carry of the
        energy-consistent elements, the contact flags."""
        self.z = self.cs.initial_memory(self.t, self.q, self.v, self.h_max,
                                        ACCEPTED * self.settings.gap_tol)
        if self.program.midpoint and self.cs.n_carry:
            # the midpoint step carries no impulse from one step into the next
            n = self.cs.n_history
            self.z[n:n + self.cs.n_carry] = 0.0

    def set_state(self, t: float, q, v) -> None:
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

        Raises
        ------
        ValueError
            ``t``, ``q`` or ``v`` of the wrong size or not finite (every problem at once).
        ModelError
            A state that cannot be made consistent (as for the initial conditions).
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

    # ------------------------------------------------------------------ initial conditions
    def _consistent_start(self, q, v):
        cs, st, t = self.cs, self.settings, self.t
        rows = cs.constraint_rows
        phi = np.asarray(cs.phi(q, t)).ravel()
        vel = (np.asarray(cs.velocity_jacobian(q, t)) @ v + np.asarray(cs.phi_t(q, t)).ravel()
               if cs.n_eq else np.zeros(0))
        gaps = np.asarray(cs.gap(q)).ravel()
        gap_jac = np.asarray(cs.gap_jacobian(q)).reshape(cs.n_gap, cs.nv)
        coord_jac = np.asarray(cs.contact_coordinates_q(q)).reshape(cs.n_coordinates, cs.nq)
        problems = []
        for r in cs.gap_rows:
            g = gaps[r.start:r.stop]
            coord_ok = all(np.isfinite(coord_jac[cs.gap_laws[j][0]:cs.gap_laws[j][1]]).all()
                           for j in range(r.start, r.stop))
            if not (np.isfinite(g).all() and np.isfinite(gap_jac[r.start:r.stop]).all() and coord_ok):
                problems.append(f"{r.element.label}: gaps or their gradients are not finite at the "
                                "initial configuration (a norm at 0? write a round gap as "
                                "(d, radius) in contact_coordinates)")
            elif g.size and g.min() < -st.consistency_tol:
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
            raise ModelError([f"initial positions cannot be made consistent: residual {viol:.3e} "
                              "after projection, at "
                              + _unmet(cs, np.asarray(cs.phi(q_new, t)).ravel())])
        v_new, vres = project_velocities(cs, q_new, v, t)
        problems = []
        gaps = np.asarray(cs.gap(q_new)).ravel()
        for r in cs.gap_rows:
            if r.size and gaps[r.start:r.stop].min() < -st.consistency_tol:
                problems.append(f"{r.element.label}: initial gap {gaps[r.start:r.stop].min():.3e} m "
                                "< 0 after the initial projection (the bodies overlap)")
        if not vres <= st.consistency_tol * max(1.0, np.abs(v_new).max()):
            unmet = _unmet(cs, np.asarray(cs.velocity_jacobian(q_new, t)) @ v_new
                           + np.asarray(cs.phi_t(q_new, t)).ravel())
            problems.append(f"initial velocities cannot be made consistent: residual {vres:.3e} "
                            f"after projection, at {unmet} (constraints that contradict each other, or "
                            "ill-conditioned masses or joints)")
        if problems:
            raise ModelError(problems)
        report.update(changed=True, position_change=position_change(q, q_new, cs.n_bodies),
                      velocity_change=float(np.abs(v_new - v).max()),
                      body_changes=_body_changes(cs, q, v, q_new, v_new))
        note = self._projection_note(report["body_changes"], v)
        if note:
            report["note"] = note
            warnings.warn(note, UserWarning, stacklevel=3)
        return q_new, v_new, report

    def _projection_note(self, changes, v) -> str:
        """A note naming each body whose initial state the projection changed beyond
        round-off (PROJECTION_NOTICE of the model's size, of its speeds), in its own units."""
        size = self.cs.model_size
        v = np.reshape(v, (-1, 6))
        speed = max(np.abs(v[:, :3]).max(initial=0.0), size * np.abs(v[:, 3:]).max(initial=0.0),
                    np.sqrt(max(np.linalg.norm(self.system.gravity), 1.0) * size))
        limits = {"position": (size, "m"), "rotation": (1.0, "rad"),
                  "velocity": (speed, "m/s"), "angular velocity": (speed / size, "rad/s")}
        parts = []
        for name, change in changes.items():
            moved = [f"{label} by {change[label]:.3g} {unit}"
                     for label, (scale, unit) in limits.items()
                     if change[label] > PROJECTION_NOTICE * scale]
            if moved:
                parts.append((max(change[label] / scale for label, (scale, _) in limits.items()),
                              f"body '{name}': " + ", ".join(moved)))
        if not parts:
            return ""
        parts.sort(reverse=True)
        listed = "; ".join(text for _, text in parts[:4])
        more = f"; and {len(parts) - 4} more bodies" if len(parts) > 4 else ""
        return ("the initial state did not meet the joints and was projected onto them "
                f"(initial_conditions='project'): {listed}{more} "
                "(res.initial_projection; initial_conditions='check' refuses instead)")

    # ------------------------------------------------------------------ one step
    def step(self, t_end: float | None = None) -> StepInfo:
        """Take one accepted step (never past ``t_end``); raise StepFailure if impossible."""
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

    # ------------------------------------------------------------------ error control (rtol)
    def _error_controlled_step(self, t_end, remaining, tic) -> StepInfo:
        """One step under error control: the second step of the last checked pair, or the
        first of a new pair (``_checked_pair``)."""
        if self._queued is not None:
            outcome, predictor, key = self._queued
            self._queued = None
            if key == self._state_key() and outcome.sol.h <= remaining * (1 + 1e-9):
                self.last_start = start = (self.t, self.q, self.v, self.z)
                self._accel_used = predictor
                end = (t_end if t_end is not None
                       and abs(self.t + outcome.sol.h - t_end) <= 1e-9 * outcome.sol.h else None)
                return self._record(start, self._accept(outcome, 0, time.perf_counter() - tic,
                                                        end))
        h = min(max(self._h_error, self.h_min), self.h_max)
        if remaining <= 2 * h * (1 + 1e-9):
            h = 0.5 * remaining
        elif remaining < 3 * h:
            h = 0.25 * remaining        # two pairs, not one and a sliver
        self.last_start = start = (self.t, self.q, self.v, self.z)
        first, second, error, retries = self._checked_pair(h, t_end)
        h = first[0].sol.h
        self._accel_used = first[1]
        info = self._accept(first[0], retries, time.perf_counter() - tic)
        self._queued = second if second[2] == self._state_key() else None
        record = self.error_control
        record["smallest_h"] = min(record["smallest_h"], h)
        record["largest_h"] = max(record["largest_h"], h)
        record["largest_error"] = max(record["largest_error"], error)
        self._h_error = h * min(4.0, max(0.2, 0.9 * max(error, 1e-12) ** (-1 / 3)))
        return self._record(start, info)

    def _checked_pair(self, h, t_end):
        """Two midpoint steps of h from the state and one of 2 h, taken again with a smaller
        h while the pair's error estimate (``_pair_error``, in units of the tolerance) is
        above 1 and h can shrink. Returns ((first step, its predictor), (second step, its
        predictor, the state it starts from), the error, the retries)."""
        retries = 0
        while True:
            whole, more = self._solve_with_retries(2 * h, 2 * h)
            retries += more
            if whole.sol.h < 2 * h * (1 - 1e-9):        # only a shorter step solves
                h = 0.5 * whole.sol.h
                continue
            first, more = self._solve_with_retries(h, h)
            retries += more
            first_predictor = self._accel_used
            saved = self._provisional(first)
            try:
                second, more = self._solve_with_retries(h, h)
                retries += more
                key = self._state_key()
            finally:
                self.t, self.q, self.v, self.z, self._accel, self._dv, self._dv_h = saved
            self.error_control["solves"] += 3
            if first.sol.h < h * (1 - 1e-9) or second.sol.h < h * (1 - 1e-9):
                h = min(first.sol.h, second.sol.h)
                continue
            error = self._pair_error(whole.out, second.out, 2 * h, t_end)
            if error <= 1.0 or h <= self.h_min * (1 + 1e-9):
                return (first, first_predictor), (second, self._accel_used, key), error, retries
            self.error_control["rejected_pairs"] += 1
            h = max(self.h_min, h * max(0.2, 0.9 * error ** (-1 / 3)))

    def _provisional(self, outcome):
        """Advance the state by an unaccepted step as ``_accept`` would (t, q, v, memory and
        the velocity predictors); returns the state before."""
        saved = (self.t, self.q, self.v, self.z, self._accel, self._dv, self._dv_h)
        sol, out = outcome.sol, outcome.out
        t1, q1, v1 = self.t + sol.h, out[0], out[1]
        self.z = self._next_memory(sol.h, t1, q1, v1, out[13])
        self._dv, self._dv_h = v1 - self.v, sol.h
        self._accel = self._dv / sol.h
        self.t, self.q, self.v = t1, q1, v1
        return saved

    def _state_key(self):
        return (self.t, self.q.tobytes(), self.v.tobytes(), self.z.tobytes(),
                self._accel.tobytes())

    def _pair_error(self, out_whole, out_pair, span, t_end) -> float:
        """The error of a pair of steps (one of ``span`` against two of span / 2) in units of
        the tolerance: the ends' difference along the joints over 3, per coordinate against
        atol + rtol x its scale, times the run's steps over the pair's two, from the mean
        step so far (``StepperSettings.rtol``)."""
        cs, st = self.cs, self.settings
        dq = _position_difference(out_whole[0], out_pair[0], cs.n_bodies)
        dv = out_whole[1] - out_pair[1]
        if cs.n_eq:
            along = self.program.tangential()
            dq, dv = (along(out_pair[0], self.t + span, x)[0] for x in (dq, dv))
        n, length = cs.n_bodies, self._model_size
        speed = np.abs(np.c_[self.v, out_pair[1]]).reshape(n, 6, 2)
        v_scale = max(speed[:, :3].max(initial=0.0),
                      np.sqrt(np.linalg.norm(self.system.gravity) * length))
        w_scale = max(speed[:, 3:].max(initial=0.0), v_scale / length)
        scale = np.tile(np.r_[np.full(3, length), np.ones(3), np.full(3, v_scale),
                              np.full(3, w_scale)], n).reshape(n, 2, 6)
        tol = st.atol + st.rtol * scale
        difference = np.abs(np.c_[dq.reshape(n, 6), dv.reshape(n, 6)]).reshape(n, 2, 6)
        run = self.span if self.span is not None else (
            None if t_end is None else t_end - self._error_start)
        # the pair's share: its steps' number over the run's, from the mean step so far
        # (the steps taken since the start, ``reset`` or ``set_state``: the ledger's)
        mean = (self.t - self._error_start + span) / (len(self.ledger) + 2)
        share = 1.0 if run is None else max(run, span) / (2 * mean)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.nan_to_num(difference / 3 / tol, nan=0.0)
        return float(ratio.max(initial=0.0) * share)

    def _next_memory(self, h, t1, q1, v1, carry):
        """The memory after a step of h to (t1, q1, v1) with the energy-consistent elements'
        ``carry``."""
        if not self.cs.n_memory:
            return self.z
        n, z = self.cs.n_history, self.z.copy()
        if n:
            z[self.cs.step_size_slots] = h      # the step's own h (a variable-h step)
            z[:n] = np.asarray(self.cs.history_next(t1, q1, v1, z[:n])).ravel()
        z[n:n + self.cs.n_carry] = carry
        z[self.cs.contact_slots] = self.gaps <= ACCEPTED * self.settings.gap_tol
        return z

    def _resolved_bounds(self, h_min, h_max):
        """The step's h bounds with the last step's stiffest contact resolved
        (``contact_resolution``): at a fixed h, a whole fraction of what is left to the next
        point of its grid (t0 + k h), so the steps come back to it after the contact."""
        target = self._h_next
        if self.step_control != "fixed":
            return min(h_min, target), min(h_max, target)
        span = min(h_max, self._to_grid())
        if target >= span:
            return span, span
        h = span / min(np.ceil(span / target), self.settings.contact_substeps)
        return h, h

    def _on_grid(self, t, h) -> float:
        """The end ``t`` of a step of ``h`` on the fixed step's grid t0 + k h_max where it is
        within 1e-6 of both steps of a point of it (a sum of steps drifts off the grid by
        round-off, and a run would end on a sliver; a step meant to end off the grid, on
        t_end, is far longer than its distance to it)."""
        if self.step_control != "fixed":
            return t
        on = float(self.t0 + round(float(t - self.t0) / self.h_max) * self.h_max)
        return on if abs(on - t) <= 1e-6 * min(self.h_max, h) else t

    def _to_grid(self) -> float:
        """Time from t to the next point of the fixed step's grid t0 + k h (h when on it)."""
        H = self.h_max
        ahead = (self.t - self.t0) / H
        left = (np.ceil(ahead) - ahead) * H
        return H if left < 1e-6 * H else left

    def _impacts_omega_h(self, h) -> tuple[float, int, float]:
        """omega h of the stiffest contact element in an impact at the last solve's
        linearisation (2 sqrt(lambda), lambda ~ (omega h)^2 / 4 the norm of its stored
        energy's block, ``ImplicitLinearisation.contact_stiffness``, in an impact times the
        square root of its laws' ``loading_stiffness_ratio``) and its index there, (0, -1)
        if none; ``true_omega_h`` the element's own omega h.
        In an impact: closed, and for less than one period 2 pi / omega since it closed. A
        contact closed longer is sustained: the energy-consistent step carries its slow
        loads at any h, and its omega h counts for 1 / ``SUSTAINED`` (its stiff vibration is
        not resolved, only kept within reach of the step's Newton iterations)."""
        implicit = self.program.implicit
        stiffness = implicit.contact_stiffness
        if not stiffness.any():
            return 0.0, -1, 0.0
        stored_omega_h = 2.0 * np.sqrt(np.maximum(stiffness, 0.0))
        since = self.t - self._closed_since
        impact = ~(since * stored_omega_h >= 2 * np.pi * h)        # NaN: closes now
        # an impact loads along its laws' loading branch (``ContactLaw.loading_stiffness_
        # ratio``); a sustained contact counts for 1 / SUSTAINED of its stored energy's
        true_omega_h = np.where(impact, stored_omega_h * implicit.loading_omega_ratio,
                                stored_omega_h)
        omega_h = np.where(impact, true_omega_h, true_omega_h / SUSTAINED)
        i = int(np.argmax(omega_h))
        return float(omega_h[i]), i, float(true_omega_h[i])

    def _resolve_contacts(self, outcome, retries, shortened):
        """Re-solve a step whose impact (``_impacts_omega_h``) was stiffer than
        ``contact_resolution`` allows with the h that resolves it (a whole fraction of the
        step), and set the next step's largest h from its omega. ``shortened``: the step
        was already shortened for the last one's impact (or to come back to the grid)."""
        st, limit = self.settings, self.settings.contact_resolution
        floor = self.h_max / st.contact_substeps
        h = outcome.sol.h
        omega_h, i, true_omega_h = self._impacts_omega_h(h)
        for _ in range(3 if limit is not None else 0):
            # 1.5: a step a little past the limit is kept, the next one is shortened
            if omega_h <= 1.5 * limit or h <= floor * (1 + 1e-9):
                break
            h = h / min(np.ceil(omega_h / limit), max(np.floor(h / floor), 1.0))
            outcome, more = self._solve_with_retries(h, h)
            retries += more
            h = outcome.sol.h
            omega_h, i, true_omega_h = self._impacts_omega_h(h)
            shortened = True
        self._h_next = limit * h / omega_h if limit is not None and omega_h > 0 else np.inf
        closed = self.program.implicit.contact_stiffness > 0
        if closed.any() or self._any_closed:
            self._closed_since = np.where(closed, np.fmin(self._closed_since, self.t), np.nan)
            self._any_closed = bool(closed.any())
        record = self.resolution
        if shortened:
            record["shortened_steps"] += 1
            record["smallest_h"] = min(record["smallest_h"], h)
        if omega_h > max(record["unresolved"][0], 1.0, 4.0 * (limit or 0.0)):
            element = self.cs.force_elements[self.program.implicit.contacts[i]]
            record["unresolved"] = (omega_h, self.t + h, element.name, true_omega_h)
        return outcome, retries

    def resolution_note(self) -> str:
        """A note when an impact was not resolved in time (omega h above 1 and above 4
        ``contact_resolution``: over within a few steps): its outcome depends on h."""
        _, when, name, omega_h = self.resolution["unresolved"]
        if not name:
            return ""
        limit = self.settings.contact_resolution
        why = ("contact_resolution is None" if limit is None else
               f"at h / contact_substeps = {self.h_max / self.settings.contact_substeps:.3g} s")
        return (f"the contact of '{name}' was not resolved in time: omega h = {omega_h:.3g} at "
                f"t = {when:.6g} ({why}); what it does (its loss, how long it lasts) depends "
                "on h")

    def _solve_with_retries(self, h_min, h_max):
        reasons = []
        for retry, (kind, bounds) in enumerate(self._attempts(h_min, h_max)):
            try:
                curvature = (None if kind == "nlp" else
                             self.contact.first_curvature(self._contact_force, bounds[1], self.cs.nv))
                sol, out = self._solve(kind, bounds, None, curvature, self._first_rows)
                ok, why = self._check(sol, out)
                if ok:
                    outcome = self._refine(kind, bounds, sol, out)
                    sol, out = outcome.sol, outcome.out
                    if outcome.error > self._max_penetration and not self.settings.projection:
                        tried = f"'{self.contact.name}'" + (
                            f" and fallback '{outcome.scheme}'" if outcome.fallback else "")
                        ok, why = False, (f"contact error {outcome.error:.3e} m (penetration "
                                          f"{max(-out[7][0], 0):.3e} m) > max_penetration "
                                          f"{self._max_penetration:.1e} m after the {tried} "
                                          "contact iterations")
            except RuntimeError as err:     # CasADi errors surface as RuntimeError
                reasons.append(f"{kind} h={bounds[1]:.3g}: {str(err).splitlines()[0][:200]}")
                self.program.reset_qp()
                continue
            if ok:
                sol, out = outcome.sol, outcome.out
                if self.program.midpoint and not sol.projected and np.isfinite(out[-1][2]):
                    self._project_end_velocity(sol, out)
                return outcome, retry
            reasons.append(f"{sol.solver} h={sol.h:.3g}: {why}")
            # each attempt starts afresh: a QP solver's memory of a failed attempt (qpOASES'
            # hot start) made retries fail that a fresh solver takes
            self.program.reset_qp()
        culprits = self._culprits(h_max) if any(_NON_FINITE.search(r) for r in reasons) else []
        raise StepFailure(f"step at t = {self.t:.9g} failed after {len(reasons)} attempts: "
                          + "; ".join(reasons[-3:])
                          + ("; non-finite values from " + "; ".join(culprits) if culprits else "")
                          + self._unreachable(h_max))

    @property
    def _first_rows(self) -> str:
        """The gap rows of a step's first solve: the contact scheme's, except that the
        midpoint step's "cone" holds the normals of sustained contacts from the first solve
        on (a first solve within the gap tolerance is the step; with the end normals it
        would take lam c dphi^2 from the sliding)."""
        if self.program.midpoint and self.contact.name == "cone":
            return "sustained"
        return self.contact.jacobian_at

    def _unreachable(self, h) -> str:
        """Why a failed step failed when no configuration meets the constraints at its end
        time t + h (a programmed motion out of reach, or at the edge of its reach, where the
        shorter retries fail on its speed): the rows left unmet, else ""."""
        if not self.cs.n_eq:
            return ""
        t1 = self.t + h
        with np.errstate(all="ignore"):
            q_near, _, left, closes = project_positions(self.cs, self.q, t1, tol=1e-10,
                                                        max_iter=20)
        if closes or not np.isfinite(left):
            return ""
        return (f"; no configuration meets the constraints at t = {t1:.9g} (residual "
                f"{left:.3e} after projection, at "
                f"{_unmet(self.cs, np.asarray(self.cs.phi(q_near, t1)).ravel())})")

    def _culprits(self, h) -> list[str]:
        """The joints and elements not finite (or overflowing) at the start of the step or
        at its end time (a function of time past its domain), at the start state."""
        z = self.z[:self.cs.n_history]
        found = []
        for t in (self.t, self.t + h):
            found += [p for p in self.cs.state_problems(t, self.q, self.v, z)
                      if p.split(":")[0] not in {f.split(":")[0] for f in found}]
        return found

    def _refine(self, kind, bounds, sol, out) -> ContactOutcome:
        """Polish an "nlp" step onto its h bound, then meet the end-of-step gaps with the
        contact scheme (``nlpdyn.contact``) at the h already chosen.

        Polish: IPOPT's interior point ends ~1e-7..1e-5 short of an active h bound (barrier
        offset mu / tie-break); the step is re-solved with h exactly at the bound.
        """
        fixed_kind = self.solver
        first = sol
        st = self.settings
        if kind == "nlp" and st.polish and bounds[1] * (1 - st.polish_tol) <= sol.h < bounds[1]:
            cand, cand_out = self._solve(fixed_kind, (bounds[1], bounds[1]), None, None,
                                         self.contact.jacobian_at)
            if self._check(cand, cand_out)[0]:
                sol, out = cand, cand_out
        h = sol.h

        def solve(q_lin, curvature, jacobian_at):
            return self._solve(fixed_kind, (h, h), q_lin, curvature, jacobian_at)

        def drift(y_new, y_old):
            return h * np.abs(self.program.Linv_T @ (y_new - y_old)).max()

        first_accel, first_rows = self._iterate_accel, self._first_rows

        def restart(jacobian_at):
            """Before a pass of contact iterations: the midpoint step's predicted mean
            acceleration back to the first solve's (a diverged pass left it far off), and,
            without friction, where the pass takes other rows than the first solve did, a
            fresh first solve with them (the end normals' iterations converge from it, not
            from the held normals' first solve: a 1 um bore under a joint stop)."""
            self._iterate_accel = first_accel
            if (not self.program.midpoint or self.program.has_friction
                    or jacobian_at in (None, first_rows)):
                return None
            curvature = self.contact.first_curvature(self._contact_force, h, self.cs.nv)
            fresh = solve(None, curvature, jacobian_at)
            if self._check(*fresh)[0]:
                return fresh
            self._iterate_accel = first_accel
            return None

        if self.cs.n_gap:
            outcome = self.contact.refine(solve, self._check, drift, sol, out, self._contact_force,
                                          turn=lambda q1: self.program.contact_turn(self.q, q1, self.z),
                                          restart=restart)
        else:
            outcome = ContactOutcome(sol, out, "", 0, 0.0, True)
        sol = outcome.sol
        if sol is not first:
            sol.solver, sol.iterations = first.solver, first.iterations
            sol.status = first.status + (" (polished)" if sol.h != first.h else "")
        return outcome

    def _attempts(self, h_min, h_max):
        primary = "nlp" if self.step_control == "nlp" else self.solver
        if self.step_control != "nlp":
            h_min = h_max
        fallback = "qp" if self.program.midpoint else "ipopt"
        kinds = [primary] + ([fallback] if self.settings.fallback
                             and primary not in ("ipopt", "nlp", fallback)
                             and not self.program.has_friction else [])
        for r in range(self.settings.max_retries + 1):
            hb = (min(h_min, h_max / 2**r), h_max / 2**r)
            for kind in kinds:
                yield kind, hb

    def _predict_contact_step(self, h_min, h_max):
        """Largest h in [h_min, h_max] after which no open gap has closed in a free step
        (true gaps at the free end of step, bisection to 1/64 of the bracket)."""
        if self.cs.n_gap == 0:
            return h_max
        open_ = self.gaps > self._contact_band

        def closes(h):
            return bool(np.any(self.program.free_gap(self.q, self.v, self.t, h, self._memory())[0][open_] < 0))

        if not open_.any() or not closes(h_max):
            return h_max
        if closes(h_min):
            return h_min
        lo, hi = h_min, h_max
        for _ in range(6):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if closes(mid) else (mid, hi)
        return lo

    def _solve(self, kind, bounds, q_lin, curvature, jacobian_at):
        """One solve of the step program (gaps linearised at ``q_lin``, None: the start of the
        step); returns (StepSolution, finish outputs). With joint friction, a fixed-h step is
        re-solved until the normal forces in its memory are the ones it produces (in the
        QP's Newton iterations, or around the other solvers)."""
        if not len(self.cs.normal_force_slots) or (kind == "nlp" and self._bisect_h):
            return self._solve_once(kind, bounds, q_lin, curvature, jacobian_at)
        self.z[self.cs.step_size_slots] = bounds[1]
        if self.program.midpoint:
            return self._solve_midpoint(bounds[1], q_lin, curvature, jacobian_at, kind)
        if kind == "qp" or (kind == "direct" and self.program.has_implicit):
            return self._solve_qp(bounds[1], q_lin, curvature, jacobian_at,
                                  "direct" if kind == "direct" else None)
        for _ in range(self.settings.friction_iterations):
            sol, out = self._solve_once(kind, bounds, q_lin, curvature, jacobian_at)
            # a variable-h solve is not iterated: its fixed-h re-solves are
            if not sol.success or self._normal_forces_met(out) or kind == "nlp":
                return sol, out
        return self._normal_forces_failed(sol)

    def _normal_forces_met(self, out) -> bool:
        """Whether the friction elements' normal forces in the memory are the step's (within
        ``friction_tol``); if not, the memory takes the step's."""
        f_n = self.program.normal_forces(self.q, self.t, out[2])[0]
        slots = self.cs.normal_force_slots
        change = np.abs(f_n - self.z[slots]).max()
        self._normal_force_change = change
        if change <= self.settings.friction_tol * max(self._force_scale, np.abs(f_n).max()):
            return True
        self.z[slots] = f_n
        return False

    def _normal_forces_failed(self, outcome):
        sol, out = outcome
        sol.success = False
        sol.status = (f"joint normal forces changing by {self._normal_force_change:.3e} N after "
                      f"{self.settings.friction_iterations} solves")
        return sol, out

    def _solve_once(self, kind, bounds, q_lin, curvature, jacobian_at):
        if kind in ("direct", "qp") and self.program.midpoint:
            return self._solve_midpoint(bounds[1], q_lin, curvature, jacobian_at, kind)
        q, v, t, z = self.q, self.v, self.t, self.z
        q_lin = q if q_lin is None else q_lin
        form = self.settings.form
        if kind == "direct" and not self.program.has_implicit:
            return self.program.solve_direct(q, v, t, bounds[1], z)
        if kind in ("qp", "direct"):
            return self._solve_qp(bounds[1], q_lin, curvature, jacobian_at,
                                  "direct" if kind == "direct" else None)
        if kind == "nlp" and self._bisect_h:
            return self._solve_by_bisection(*bounds)
        if kind == "nlp":
            key = (form, True, jacobian_at)
            sol, self._warm[key] = self.program.solve_nlp(form, q, v, t, bounds, self.h_max,
                                                          True, q_lin, z, self._warm.get(key),
                                                          jacobian_at)
            curvature = None
        else:   # IPOPT on a fixed step (primary for solver="ipopt", else the fallback)
            key = (form if self.solver == "ipopt" else "gauss", False, jacobian_at)
            sol, self._warm[key] = self.program.solve_nlp(key[0], q, v, t, (bounds[1], bounds[1]),
                                                          bounds[1], False, q_lin, z,
                                                          self._warm.get(key), jacobian_at,
                                                          curvature)
        return sol, self.program.finish_step(q, v, t, sol.h, q_lin, z, sol, jacobian_at, curvature)

    def _solve_by_bisection(self, h_lo, h_hi):
        """The seed's program with h in [h_lo, h_hi] by fixed-h solves: f(h) = (h_max/h)^2 Z*(h)
        - tie h (Z* the fixed-h program's optimum, gaps linearised at the start of the step)
        and its slope from each solve; h_hi if f decreases there, h_lo if it increases there,
        else bisection to the point where the slope changes sign (a contact onset, say)."""
        h_ref, tie = self.h_max, self.settings.tie_break * self.cs.total_mass
        value_slope = self.program.value_slope()
        solves = 0

        def solve(h):
            nonlocal solves
            solves += 1
            sol, out = self._solve(self.solver, (h, h), None, None, "start")
            Z, dL = value_slope(self.q, self.v, self.t, h, sol.y,
                                -np.concatenate((sol.P_eq, sol.P_g)), self.z)
            slope = -2 * h_ref**2 / h**3 * float(Z[0]) + (h_ref / h)**2 * float(dL[0]) - tie / h_ref
            return sol, out, slope if self._check(sol, out)[0] else np.inf

        best = solve(h_hi)
        if best[2] > 0 and h_lo < h_hi:
            low = solve(h_lo)
            if low[2] >= 0:
                best = low
            else:
                lo, hi, best = h_lo, h_hi, low
                for _ in range(self.settings.nlp_bisections):
                    mid = solve(0.5 * (lo + hi))
                    if mid[2] > 0:
                        hi = 0.5 * (lo + hi)
                    else:
                        lo, best = 0.5 * (lo + hi), mid
        sol, out, _ = best
        sol.status, sol.iterations = f"h by bisection ({solves} solves)", solves
        return sol, out

    def _solve_qp(self, h, q_lin, curvature, jacobian_at, plugin=None):
        """The fixed-h QP; with implicit force elements, Newton iterations (one QP each, forces
        linearised at the previous iterate) until the EOM holds with the end-of-step forces,
        and with joint friction until its normal forces are the step's."""
        st = self.settings
        implicit, friction = self.program.has_implicit, bool(len(self.cs.normal_force_slots))
        y_imp = self._y_guess(h) if implicit else None
        coulomb = self._lagged_normal_impulses(h, curvature)
        sol, out = self.program.solve_qp(self.q, self.v, self.t, h, q_lin, self.z, self._lam_qp,
                                         curvature, y_imp, jacobian_at, coulomb, plugin)
        if not (implicit or friction):
            return sol, out
        limit = max(st.implicit_iterations if implicit else 0,
                    st.friction_iterations if friction else 0)
        met = True
        for it in range(limit):
            if not np.isfinite(out[-1][2]):
                break
            met = not friction or self._normal_forces_met(out)
            if met and (not implicit or self._implicit_met(out)):
                break
            # the impulse at sol.y holds while the memory does (friction's normal forces)
            sol, out = self.program.solve_qp(self.q, self.v, self.t, h, q_lin, self.z,
                                             -np.concatenate((sol.P_eq, sol.P_g)), curvature, sol.y,
                                             jacobian_at, coulomb, plugin,
                                             sol.b_imp if met else None)
        else:
            if friction and limit:
                met = self._normal_forces_met(out)
        sol.iterations = it + 1 if limit else 1
        return (sol, out) if met else self._normal_forces_failed((sol, out))

    def _lagged_normal_impulses(self, h, curvature):
        """The normal impulses bounding the clearance contacts' friction in a solve: an
        iterate's (``curvature``'s), on a step's first solve the last step's; None without
        friction."""
        if not self.program.has_friction:
            return None
        P_n = curvature[0] if curvature is not None else (
            None if self._contact_force is None else self._contact_force * h)
        return np.zeros(self.cs.n_gap) if P_n is None else P_n

    def _solve_midpoint(self, h, q_lin=None, curvature=None, jacobian_at="start", kind="direct"):
        """The midpoint step: the velocity-dependent forces at the velocity predicted from
        the last step's velocity change; then, while the gyroscopic term at the step's mean
        velocity would change the end velocity by more than ``GYROSCOPIC_TOL`` of the
        velocities, again at that mean velocity (fixed-point iterations, at most
        ``implicit_iterations``; where they contract slowly, until ``GYROSCOPIC_STALL`` is
        left to their fixed point; where they diverge, the step fails): the bodies' rotation
        then neither gains nor loses energy.
        Elements evaluated in the step are Newton-linearised in the same iterations (one
        KKT solve each) until the equations of motion hold with their end-of-step forces
        (``implicit_tol``). With gaps, each solve is the QP with the gaps' rows of
        ``jacobian_at`` linearised at ``q_lin`` (``curvature``: the contact iterations');
        without, ``kind`` "direct" solves the KKT system, "qp" the conic plugin."""
        implicit, gaps = self.program.has_implicit, self.cs.n_gap > 0
        # a contact iterate starts from the last iterate's mean acceleration (the same step's,
        # converging with it); a step's first solve from the last step's
        iterate = q_lin is not None
        accel = self._iterate_accel if iterate else self._accel
        y_imp = self._y_guess(h) if implicit else None
        b_imp, warm = None, self._lam_qp if gaps else None
        if q_lin is None:
            # a step's first solve: the gaps linearised at its midpoint, the end of the step
            # at y = 0, about which the first curvature term is expanded
            q_lin = (self.program.base_point(self.q, self.v, self.t, h,
                                             np.concatenate((self.z, accel)))[1]
                     if gaps else self.q)
        coulomb = (self._net_normal if iterate and self.program.has_friction
                   else self._lagged_normal_impulses(h, curvature))
        n, inertia = self.cs.n_bodies, self._inertia
        friction = bool(len(self.cs.normal_force_slots))
        limit = max(self.settings.implicit_iterations,
                    self.settings.friction_iterations if friction else 0)
        # the QP's program (its KKT system by LDL^T, "direct", unless a conic plugin is asked
        # for or gaps need one), else the closed-form solve
        by_qp = implicit or gaps or kind == "qp"
        plugin = None if gaps or kind == "qp" else "direct"
        previous_change = np.inf

        def solve(y_lin, b_lin, accel):
            memory = np.concatenate((self.z, accel))   # accel: the iterations' own
            if by_qp:
                return self.program.solve_qp(self.q, self.v, self.t, h, q_lin, memory, warm,
                                             curvature, y_lin, jacobian_at, coulomb, plugin,
                                             b_lin)
            return self.program.solve_direct(self.q, self.v, self.t, h, memory)

        y_before, searches = None, 0        # the implicit iterate before y_imp
        for _ in range(limit + 1):
            sol, out = solve(y_imp, b_imp, accel)
            used = accel
            if (implicit and searches < CYCLE_SEARCHES and y_before is not None
                    and not self._implicit_met(out) and _returns(y_before, y_imp, sol.y)):
                # Newton's iterates oscillate (a law's kinks on both sides of its root: a
                # Lankarani-Nikravesh contact's hysteresis saturating at a small impact
                # speed): bisect the segment of the step that was turned back
                searches += 1
                sol, out, used = self._bisect_cycle(solve, h, y_before, y_imp)
                previous_change = np.inf
            accel = (out[1] - self.v) / h
            # the end velocity's change if the gyroscopic term took the mean velocity
            w = (self.v + 0.5 * h * np.array((accel, used))).reshape(2 * n, 6)[:, 3:]
            S = _gyroscopic(w, inertia[0])
            dS = S[:n] - S[n:]
            change = h * np.abs(np.matmul(inertia[1], dS[:, :, None])).max(initial=0.0)
            # a contact iterate takes one solve: its predictor, the last iterate's mean
            # acceleration, converges with the contact iterations. A velocity-dependent force
            # shares the predictor: the iterations contract by h c / 2 (c its rate), slowly
            # near 1, where the step is taken once the distance left, change r / (1 - r), is
            # below GYROSCOPIC_STALL; beyond 1 (an explicit force past its stability limit)
            # they diverge and the step fails, to be retried with a shorter h
            scale = 1.0 + np.abs(out[1]).max(initial=0.0)
            rate = change / previous_change if previous_change else (np.inf if change else 0.0)
            settled = change <= GYROSCOPIC_TOL * scale or (
                0.5 <= rate < 1 and change * rate / (1 - rate) <= GYROSCOPIC_STALL * scale)
            spinning, previous_change = not iterate and not settled, change
            unmet = implicit and not self._implicit_met(out)
            # joint friction: the memory takes the step's normal forces until they hold
            met = not friction or self._normal_forces_met(out)
            # (while the implicit elements' Newton iterations are under way, their updates,
            # not the predictor's, move the mean velocity: no divergence to judge)
            if spinning and rate >= 1 and not unmet:
                sol.success = False
                sol.status = (f"the midpoint step's iterations diverge: the gyroscopic term's "
                              f"change grows {rate:.3g}x an iterate (h times a velocity-"
                              "dependent force's rate above 2)")
                break
            if (not (spinning or unmet or not met) or not np.isfinite(out[-1][2])
                    or not np.isfinite(sol.y).all()):
                break
            if implicit:       # the impulse at sol.y holds while the memory does
                # after a cycle, a fresh linearisation at every iterate (full Newton: the
                # last one's need not hold across the law's kinks)
                y_before, y_imp = y_imp, sol.y
                b_imp = sol.b_imp if met and not searches else None
            if by_qp:
                warm = -np.concatenate((sol.P_eq, sol.P_g))
        else:
            sol.success = False
            sol.status = (f"the midpoint step's iterations did not settle in {limit}: "
                          + (f"the gyroscopic term still changes the velocities by {change:.3e}"
                             if spinning else f"EOM residual {out[-1][2]:.3e} with the forces "
                                              "at the end of the step" if unmet else
                             f"joint normal forces changing by {self._normal_force_change:.3e} N"))
        sol.iterations = _ + 1
        self._accel_used, self._iterate_accel = used, accel
        # with gaps the contact iterations' accepted solve is projected (``_solve_with_
        # retries``), but with friction every iterate: its net normal impulse bounds the next
        if (self.cs.n_eq and not gaps or self.program.has_friction) and np.isfinite(out[-1][2]):
            self._project_end_velocity(sol, out)
        return sol, out

    def _bisect_cycle(self, solve, h, y_a, y_b):
        """Newton's step from y_b = N(y_a) turned back towards y_a (N: a solve linearised at
        its argument, ``_returns``). Bisects the segment between them on the sign of the
        Newton step along it, (N(y) - y) . (y_b - y_a), positive at y_a and negative at y_b,
        until the Newton step from the point is under a quarter of the segment left (the
        point lies on the law's steep piece between the kinks, where Newton converges: from
        a point on either flat side the step goes at least half the segment left). Returns
        that point's solve and the acceleration it used."""
        v_a, v_b = (self.program.Linv_T @ np.c_[y_a, y_b]).T
        accel_a, accel_b = (v_a - self.v) / h, (v_b - self.v) / h
        d, lo, hi = y_b - y_a, 0.0, 1.0
        for _ in range(CYCLE_BISECTIONS):
            alpha = 0.5 * (lo + hi)
            accel = accel_a + alpha * (accel_b - accel_a)
            sol, out = solve(y_a + alpha * d, None, accel)
            step = sol.y - (y_a + alpha * d)
            if np.linalg.norm(step) <= 0.25 * (hi - lo) * np.linalg.norm(d):
                break
            lo, hi = (alpha, hi) if step @ d > 0 else (lo, alpha)
        return sol, out, accel

    def _implicit_met(self, out) -> bool:
        """Whether the implicit iterations' EOM residual is within ``implicit_tol`` or, in a
        step so short that its momenta's round-off over h is above that, within that."""
        return bool(out[-1][2] <= max(self.settings.implicit_tol, out[-1][8]))

    def _project_end_velocity(self, sol, out):
        """The midpoint step's end velocity onto the joints' rates at the end positions (the
        kick aimed the positions there; the state then does not depend on the next h), and
        with gaps, off the closing rates of the gaps closed at the end (within 2 ``ACCEPTED``
        gap_tol, or carrying the step's force). The projection's impulses join the joints'
        reactions and the contact forces, their work the joints' and gaps' ledger columns."""
        sol.projected = True
        args = (out[0], self.t + sol.h, out[1])
        first = 2 * len(self.cs.force_elements)     # the outputs are the call's own copies
        if self.cs.n_gap:
            band = 2 * ACCEPTED * self.settings.gap_tol
            closed = (out[8] <= band) | (out[3] > 1e-8 * self._force_scale)
            # a gap open at the start that closed: the end of its plastic impact (the end
            # positions on the gap leave the velocity a rebound of 2 g(q_m) / h where the
            # midpoint is past the gap)
            impact = closed & (self.gaps > band)
            v, P, work, P_g, work_g = self._contact_end_velocity(args, closed, impact, sol.P_g)
            out[3] = out[3] + P_g / sol.h
            # the net normal impulses bound friction in the contact iterations' next solve
            # (an impact's rebound, removed here, is no load on the contact); the solve's own
            # stay the iterations' curvature weights
            self._net_normal = sol.P_g + P_g
            gap_first = first + len(self.cs.constraint_rows)
            out[12][gap_first:gap_first + len(work_g)] += work_g
        else:
            v, P, work = self.program.velocity_projection()(*args)
        out[1], out[2] = v, out[2] + P / sol.h
        out[12][first:first + len(work)] += work
        out[-1][5] += work.sum()

    def _memory(self) -> np.ndarray:
        """The step program's memory: the elements' memory, and for the midpoint step the
        last step's velocity change over its h."""
        return np.concatenate((self.z, self._accel)) if self.program.midpoint else self.z

    def _contact_end_velocity(self, args, closed, impact, pushed):
        """The projection of ``_project_end_velocity`` with gaps, by active sets: the rates of
        the closed gaps are held at zero; one whose net normal impulse over the step (the
        solve's, ``pushed``, and the projection's) would pull is let go, unless it closed in
        the step (an impact), and one let go that would close is held again, until neither
        is left (a few passes: one without contacts changing). A loaded contact the step's
        end leaves at a small separating rate, one its load would close again within the
        step, so stays closed: the midpoint step's end rows would mirror that rate into a
        closing one the next step (a period-2h rocking between redundant contacts)."""
        project = self.program.velocity_projection()
        held = closed.copy()
        for _ in range(self.cs.n_gap + 1):
            v, P, work, P_g, work_g, rate, scale = project(*args, held.astype(float))
            # each gap's rate to its own round-off (a fast slide along a gap leaves it alone)
            slack = 1e-14 + 1e-13 * scale
            pulls = held & ~impact & (pushed + P_g < 0)
            closing = closed & ~held & (rate < -slack)
            if not (pulls.any() or closing.any()):
                break
            held = (held & ~pulls) | closing
        return v, P, work, P_g, work_g

    def _y_guess(self, h):
        """Scaled end-of-step velocity guess for the implicit linearisation: the last step's
        velocity change repeated (exact for constant acceleration), not stretched over a
        longer step (after an impact's short steps their acceleration is the contact's)."""
        v = self.v if self._dv is None else self.v + self._dv * min(h / self._dv_h, 1.0)
        return self.cs.L.T @ v

    def _check(self, sol: StepSolution, out) -> tuple[bool, str]:
        """Physical acceptance test of a step (solvers report success on wrong answers)."""
        if not sol.success:
            return False, f"solver status {sol.status!r}"
        check = out[-1]
        if len(self._dropped):
            # rows dropped as redundant must still hold: contradictory constraints (two
            # drivers that disagree) show here
            phi = out[-2]
            dropped = phi[self._dropped].max()
            if not dropped <= 100 * phi[self._kept].max(initial=0.0) + 1e-6:
                worst = self.redundant_rows[int(np.argmax(phi[self._dropped]))]
                return False, (f"joint rows solved as redundant are violated by {dropped:.3e} "
                               f"(worst: {worst[0]} row {worst[1]}): the constraints contradict "
                               "each other")
        if not ((check[:4] < self._check_limits).all() and np.isfinite(check[4])):
            if not np.isfinite(check[:5]).all():
                return False, (f"non-finite numbers in the step's solution (solver status "
                               f"{sol.status!r})")
            labels = ("linearised joint rows violated (relative)", "linearised gap rows violated "
                      "(relative)", "EOM residual (relative)", "Euler-parameter norm error")
            for label, value, limit in zip(labels, check[:4], self._check_limits):
                if not value < limit:
                    return False, f"{label} {value:.3e}"
        return self._check_true_quantities(sol, out)

    def _check_true_quantities(self, sol, out) -> tuple[bool, str]:
        """What the linearised rows cannot see: the energy a step creates beyond every agent's
        work, and joints left apart where no nearby configuration closes them."""
        st = self.settings
        created, in_play = out[-1][5], out[-1][6]
        # round-off of the largest energy of the run is no creation (a decayed motion)
        if created > st.energy_tol * max(in_play, 1e-9 * max(self._energy_high, self._energy_unit)):
            return False, (f"the step creates {created:.3e} J beyond the work of forces, drivers "
                           f"and contacts (more than energy_tol = {st.energy_tol:g} of the "
                           f"{in_play:.3e} J in play)")
        violation = float(out[5][0])
        if violation > st.violation_check * self._model_size:
            t1 = self.t + sol.h
            q_near, _, left, closes = project_positions(self.cs, out[0], t1, tol=1e-10,
                                                        max_iter=10)
            if not closes:
                unmet = _unmet(self.cs, np.asarray(self.cs.phi(q_near, t1)).ravel())
                return False, (f"joints apart by {violation:.3e} after the step (at {unmet}) "
                               "and no nearby configuration closes them "
                               f"(residual {left:.3e} after projection): the constraints "
                               "contradict each other or cannot be met there")
        return True, ""

    def notes(self) -> list[str]:
        """What the run should say of itself (``Result.info["warnings"]``): the initial
        projection's change of the user's state, then :meth:`run_notes`."""
        return [note for note in (self.initial_projection.get("note", ""),
                                  *self.run_notes()) if note]

    def run_notes(self) -> list[str]:
        """What the steps of the run say of their discretisation: energy, joint drift,
        (free systems) momentum drift, each beyond its setting, and an impact not resolved
        in time (``contact_resolution``)."""
        return [note for note in (self.discretisation_note(), self.drift_note(),
                                  self.momentum_note(), self.resolution_note()) if note]

    def _record_momentum(self, q1, v1, t1):
        P0, L0, t0, scale, worst = self._momentum
        P, L, now = _momenta(self._momentum_bodies, q1, v1)
        scale = np.maximum(scale, now)
        gravity = self.cs.total_mass * np.asarray(self.system.gravity, dtype=float) * (t1 - t0)
        shares = (np.linalg.norm(P - P0 - gravity) / max(scale[0], 1e-300),
                  np.linalg.norm(L - L0) / max(scale[1], 1e-300))
        share = max(shares) / self.settings.momentum_warning
        if share > worst[0]:
            kind = "linear" if shares[0] >= shares[1] else "angular"
            worst = (share, t1, f"its {kind} momentum drifted by {max(shares):.2%} of the "
                                f"momentum in play")
        self._momentum = (P0, L0, t0, scale, worst)

    def momentum_note(self) -> str:
        """A note when a free system's momentum drifted beyond ``momentum_warning``."""
        if self._momentum_bodies is None:
            return ""
        share, when, what = self._momentum[4]
        if not share > 1.0:
            return ""
        return (f"the system is free, yet {what} by t = {when:.6g} (momentum_warning = "
                f"{self.settings.momentum_warning:g}): the steps do not resolve the motion; "
                "a smaller h does")

    def _drift_rows(self):
        """Per constraint element, its distance rows (they move with a body's centre: m) and
        its axis rows (products of unit vectors: rad); and the row violation below which no
        element can reach ``drift_warning`` (its rows' norm is at most sqrt(rows) times it)."""
        cs = self.cs
        J = np.asarray(cs.phi_q(self.q, self.t)).reshape(cs.n_eq, cs.nq)
        centres = np.r_[[7 * k + i for k in range(cs.n_bodies) for i in range(3)]].astype(int)
        distance = np.abs(J[:, centres]).max(axis=1, initial=0.0) > 0
        self._drift_groups = [(r.element.label, np.arange(r.start, r.stop)[distance[r.start:r.stop]],
                               np.arange(r.start, r.stop)[~distance[r.start:r.stop]])
                              for r in cs.constraint_rows if r.size]
        widest = max((r.size for r in cs.constraint_rows), default=1)
        self._drift_floor = (self.settings.drift_warning * min(self._model_size, 1.0)
                             / np.sqrt(max(widest, 1)))

    def _record_drift(self, phi, t1):
        """Keep the joint farthest beyond its share of ``drift_warning`` after this step
        (``phi``: the joint rows' |residuals| at its end)."""
        limit = self.settings.drift_warning
        for label, distance, axis in self._drift_groups:
            apart = np.linalg.norm(phi[distance])
            off = np.linalg.norm(phi[axis])
            share = max(apart / (limit * self._model_size), off / limit)
            if share > self._drift[0]:
                what = (f"{label} apart by {apart:.3g} m ({apart / self._model_size:.2g} of the "
                        f"model's size {self._model_size:.3g} m)" if apart / self._model_size >= off
                        else f"{label} off by {off:.3g} rad (its axis rows)")
                self._drift = (share, t1, what)

    def drift_note(self) -> str:
        """A note when the steps left a joint apart by more than ``drift_warning`` of the
        model's size, or its axes off by more than ``drift_warning`` rad, after a step."""
        share, when, what = self._drift
        if not share > 1.0:
            return ""
        return (f"the steps left joints apart: {what} at t = {when:.6g}, beyond drift_warning "
                f"= {self.settings.drift_warning:g} (of the model's size, or rad): the steps do "
                "not resolve the motion; a smaller h or projection=True does")

    def discretisation_note(self) -> str:
        """A note when the discretisation's energy (the ledger's residual and the work of
        ideal joints, at its largest over the steps so far) exceeds ``discretisation_warning``
        of the energy in play (the largest kinetic plus stored energy of a step): the steps
        do not resolve the motion."""
        if not len(self.ledger):
            return ""
        share = self.settings.discretisation_warning
        steps = np.arange(len(self.ledger) + 1)
        rows = self.ledger.rows(steps)
        residual = rows["residual"] + sum(rows[f"work:{name}"] for name in self._ideal_joint_names)
        worst = residual[np.argmax(np.abs(residual))]
        # gravity's potential counts by the range it spans (a drop whose energy an impact takes)
        gravity = [work for el, work in zip(self.cs.force_elements,
                                            self.ledger.element_work(steps).values())
                   if isinstance(el, Gravity)]
        in_play = max([self._energy_scale, *(np.ptp(w) for w in gravity)])
        if abs(worst) <= share * max(in_play, 1e-9 * self._energy_unit):
            return ""
        return (f"the discretisation {'removed' if worst < 0 else 'added'} up to "
                f"{abs(worst):.3g} J, more than {share:.0%} of the {in_play:.3g} J "
                "in play (the residual and ideal joints' work in energy_ledger()): the steps "
                "do not resolve the motion; a smaller h does")

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


# a sustained contact is stepped at up to this many times ``contact_resolution``'s omega h
SUSTAINED = 4.0
# jit "auto" looks at the run's pace and its builds every this many steps, and at the cache
# once the run left would take longer than this (s; the cache's key costs up to ~0.5 s at
# 64 links)
JIT_CHECK_EVERY, JIT_LOOK_UP = 16, 2.0
# Newton's iterates that oscillate are bisected on the step turned back at most this many
# times a step, each search at most CYCLE_BISECTIONS solves
CYCLE_SEARCHES, CYCLE_BISECTIONS = 3, 40
# the midpoint step iterates its gyroscopic term until it would change the end velocity by
# less than this share of the velocities (round-off's reach after a few thousand steps)
GYROSCOPIC_TOL = 1e-12
# ... or, where they contract slowly (a stiff velocity-dependent force), until what is left to
# their fixed point is below this share
GYROSCOPIC_STALL = 1e-6


_NEXT, _LAST = [1, 2, 0], [2, 0, 1]


def _returns(y_before, y_at, y_next) -> bool:
    """Whether Newton's step from y_at = N(y_before) to y_next = N(y_at) turns back along the
    step before by more than half its length: the iterates oscillate without contracting
    (two in turn where a law's kinks lie on both sides of the root)."""
    last = y_at - y_before
    return bool((y_next - y_at) @ last < -0.5 * (last @ last))


def _gyroscopic(w, J) -> np.ndarray:
    """w x (J w) per body (rows), without np.cross's overhead on a few rows."""
    b = (J @ w[:, :, None])[:, :, 0]
    return w.take(_NEXT, 1) * b.take(_LAST, 1) - w.take(_LAST, 1) * b.take(_NEXT, 1)


def _error_control_problems(cs, settings, control, h_min, h_max) -> list[str]:
    """What keeps error control (``rtol``) from the model and settings (all at once)."""
    if settings.rtol is None:
        return (["step_control 'error' needs rtol (the error's share of the motion)"]
                if control == "error" else [])
    problems = []
    if control != "error":
        problems.append(f"rtol chooses h itself (step_control 'error'), got step_control "
                        f"{control!r}")
    if settings.scheme != "midpoint":
        problems.append(f"rtol (error-controlled h) needs scheme 'midpoint', got "
                        f"{settings.scheme!r}")
    if h_min == h_max:
        problems.append(f"rtol needs bounds h = (h_min, h_max) to choose h within, got one "
                        f"h = {h_max:g} s")
    # a contact element's force is continuous in the motion (it grows from zero with the
    # penetration): step doubling sees its impacts as fast smooth motion and shortens h
    # through them. A gap's impact is a jump in the velocity, which it cannot estimate
    gaps = sorted({r.name for r in cs.gap_rows})
    if gaps:
        problems.append(f"rtol estimates the error of smooth motion by step doubling, which "
                        f"does not span the gaps' impacts (velocity jumps) yet: the clearance "
                        f"joints {gaps} need a fixed h or step_control 'adaptive' (penalty "
                        f"versions, nd.penalty_version, take rtol)")
    return problems


def _position_difference(q_a, q_b, n_bodies) -> np.ndarray:
    """q_a - q_b per body as a velocity-space vector: the centres' difference (m) and the
    rotation from b to a (rad, body frame of b, small: 2 G(p_b) p_a)."""
    a, b = np.reshape(q_a, (n_bodies, 7)), np.reshape(q_b, (n_bodies, 7))
    return np.concatenate([np.r_[ak[:3] - bk[:3], 2 * G_matrix(bk[3:]) @ ak[3:]]
                           for ak, bk in zip(a, b)]) if n_bodies else np.zeros(0)


def _default_scheme(settings, control) -> str:
    """The scheme when none is given: "midpoint", or "euler" where a setting is the seed's
    (step_control "nlp", solver "ipopt", form "explicit", contact "linearised" or
    ``gap_iterations`` 0, ``projection``), which only scheme "euler" takes, unless ``rtol``
    asks for the midpoint's error control."""
    seeds = (control == "nlp" or settings.solver == "ipopt" or settings.form == "explicit"
             or settings.contact == "linearised" or settings.gap_iterations == 0
             or settings.projection)
    # rtol is the midpoint's: a seed's setting beside it is refused by name
    return "euler" if seeds and settings.rtol is None else "midpoint"


def _scheme_problems(cs, settings, control) -> list[str]:
    """What keeps ``settings.scheme`` "midpoint" from a model and its settings (all at once)."""
    problems = []
    if settings.scheme != "midpoint":
        return problems
    if cs.n_gap and (settings.contact == "linearised" or settings.gap_iterations == 0):
        problems.append("scheme 'midpoint' meets its gaps at the end of the step: contact "
                        "'linearised' (the seed's, without iterations"
                        + (", which gap_iterations=0 selects" if settings.gap_iterations == 0
                           else "") + ") is scheme 'euler''s")
    if settings.solver not in (None, "direct", "qp"):
        problems.append(f"scheme 'midpoint' solves its steps with solver 'direct' or 'qp', got "
                        f"{settings.solver!r}")
    if settings.form != "gauss":
        problems.append(f"scheme 'midpoint' takes form 'gauss', got {settings.form!r}")
    if control == "nlp":
        problems.append("scheme 'midpoint' takes step_control 'fixed', 'adaptive' or 'error', got "
                        "'nlp' (the seed's h is that of scheme 'euler')")
    if settings.projection:
        problems.append("scheme 'midpoint' takes projection=False: its rows keep the joints to "
                        "O(h^3) without drift, and projecting the positions after each step "
                        "made it first order (measured on the slider-crank with the step's "
                        "first version: energy range 0.067 J instead of 2.8e-4 J over 2 s at "
                        "h = 1e-3)")
    return problems


def _momentum_bodies(system, cs):
    """Masses and body-frame inertias when the system's momentum is conserved (less
    gravity's impulse): no element touches the ground, every force element but gravity acts
    between bodies, no programmed or velocity constraint; else None."""
    for el in system.elements:
        bodies = getattr(el, "bodies", ())
        if any(b.is_ground for b in bodies) or isinstance(el, Programmed):
            return None
        if not isinstance(el, Gravity) and len({id(b) for b in bodies}) < 2:
            return None
    if not cs.n_bodies:
        return None
    return (np.array([b.mass for b in cs.bodies], dtype=float),
            np.array([b.inertia for b in cs.bodies], dtype=float))


def _momenta(bodies, q, v):
    """Linear momentum, angular momentum about the centre of mass, and the momenta in play
    (the bodies' linear momenta, and their angular momenta about the centre of mass, summed
    by magnitude)."""
    m, J = bodies
    q, v = np.reshape(q, (-1, 7)), np.reshape(v, (-1, 6))
    A = rotation_matrices(q[:, 3:] / np.linalg.norm(q[:, 3:], axis=1, keepdims=True))
    p = m[:, None] * v[:, :3]
    centre = m @ q[:, :3] / m.sum()
    spin = np.einsum("nij,njk,nk->ni", A, J, v[:, 3:])
    orbit = np.cross(q[:, :3] - centre, p - m[:, None] * (p.sum(axis=0) / m.sum()))
    P, L = p.sum(axis=0), (orbit + spin).sum(axis=0)
    in_play = np.array([np.linalg.norm(p, axis=1).sum(),
                        np.linalg.norm(orbit, axis=1).sum() + np.linalg.norm(spin, axis=1).sum()])
    return P, L, in_play


def _unmet(cs, residual) -> str:
    """The elements whose rows a least-squares projection left unmet (beyond 1e-3 of the
    largest |residual|): the constraints that contradict each other, the time-dependent
    ones (drivers, programmed constraints) first, then by residual."""
    rows = [r for r in cs.constraint_rows if r.size]
    worst = {r.element.label: np.abs(residual[r.start:r.stop]).max() for r in rows}
    top = max(worst.values(), default=0.0)
    timed = {r.element.label for r in rows if isinstance(r.element, (_Driver, Programmed))}
    unmet = sorted((label for label, value in worst.items() if value > 1e-3 * top),
                   key=lambda label: (label not in timed, -worst[label]))
    return " and ".join(unmet) if len(unmet) <= 4 else ", ".join(unmet[:4]) + ", ..."


def _gap_groups(cs):
    """(first gap row of each gap element, owning element of each gap row)."""
    rows = [r for r in cs.gap_rows if r.size]
    starts = np.array([r.start for r in rows], dtype=int)
    owner = np.repeat(np.arange(len(rows)), [r.size for r in rows])
    return starts, owner


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


def _solver_option_problems(qp_plugin, settings) -> list[str]:
    """``qp_options`` and ``nlp_options`` tried on a one-variable problem: CasADi and IPOPT
    refuse unknown options when a solver is built, which is otherwise mid-run."""
    problems = []
    x = ca.SX.sym("x")
    checks = []
    if settings.qp_options:
        checks.append(("qp_options", qp_plugin, lambda: ca.conic(
            "qp_options_check", qp_plugin, {"h": ca.Sparsity.dense(1, 1), "a": ca.Sparsity(0, 1)},
            {**_QP_OPTIONS.get(qp_plugin, {}), **settings.qp_options})))
    if settings.nlp_options:
        checks.append(("nlp_options", "ipopt", lambda: ca.nlpsol(
            "nlp_options_check", "ipopt", {"x": x, "f": x**2},
            {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes", **settings.nlp_options}})))
    for name, plugin, build in checks:
        try:
            with silenced_stdout():
                build()
        except RuntimeError as err:
            reason = next((line.split(": ", 1)[-1] for line in reversed(str(err).splitlines())
                           if "option" in line.lower()), str(err).splitlines()[0])
            problems.append(f"{name} refused by {plugin}: {reason.strip()[:200]}")
    return problems


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


def _body_changes(cs, q, v, q_new, v_new) -> dict:
    """Per body, how far the initial projection moved it: centre (m), rotation (rad),
    velocity (m/s), angular velocity (rad/s)."""
    changes = {}
    for k, body in enumerate(cs.bodies):
        dq, dv = q_new[7 * k:7 * k + 7] - q[7 * k:7 * k + 7], v_new[6 * k:6 * k + 6] - v[6 * k:6 * k + 6]
        changes[body.name] = {
            "position": float(np.linalg.norm(dq[:3])),
            "rotation": position_change(np.r_[0, 0, 0, q[7 * k + 3:7 * k + 7]],
                                        np.r_[0, 0, 0, q_new[7 * k + 3:7 * k + 7]], 1),
            "velocity": float(np.linalg.norm(dv[:3])),
            "angular velocity": float(np.linalg.norm(dv[3:]))}
    return changes


def _as_dict(settings):
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def simulate(system: System, t_end: float, h, settings: StepperSettings | None = None,
             progress: bool | None = None, t0: float = 0.0, output_every: int = 1,
             t_eval=None, **options) -> Result:
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
    recorder = Recorder(stepper, output_every)
    stepper._log = None       # the recorder keeps what the result needs (output_every)
    status, message, fault = 0, "reached t_end", ""
    bar = tqdm(total=float(t_end - t0), unit="s", disable=(None if progress is None else not progress),
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
                warnings.warn(note, RuntimeWarning, stacklevel=2)
    return res
