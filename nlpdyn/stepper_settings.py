"""The time stepper's settings (``StepperSettings``) and their checks against a model, its
step size and the solvers' options: every problem named, all at once."""
from __future__ import annotations

from dataclasses import dataclass, fields

import casadi as ca
import numpy as np

from .checks import is_choice, is_number, step_size_problems
from .contact import SCHEMES
from .fastcall import silenced_stdout
from .jit import resolve_mode
from .step_nlp import _QP_OPTIONS
from .system import ModelError

STEP_CONTROLS = ("fixed", "nlp", "adaptive", "error")
FORMS = ("gauss", "explicit")
TIME_SCHEMES = ("euler", "midpoint")


@dataclass
class StepperSettings:
    """Options of the time stepper. Defaults are the measured best (the documentation's
    pages guide/stepping and guide/performance).

    Parameters
    ----------
    **fields
        One keyword per attribute below (``step_control``, ``rtol``, ``scheme``, ``solver``,
        ``gap_tol``, ...), each described where it is declared; every one has a default.
        The values are checked on construction: a :class:`~nlpdyn.ModelError` names every
        invalid one at once. What depends on the model and the step size is checked when a
        :class:`~nlpdyn.Stepper` starts.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> settings = nd.StepperSettings(scheme="midpoint", solver="direct")
    >>> settings.scheme, settings.step_control is None
    ('midpoint', True)
    >>> nd.StepperSettings(rtol=2.0)
    Traceback (most recent call last):
    ...
    nlpdyn.checks.ModelError: ...rtol must be None or a number in (0, 1), got 2.0...
    """

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
    """Halvings of h tried after a rejected step (each with the primary and fallback solver);
    with contact elements at least down to h / ``contact_substeps``."""
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
    during its first period 2 pi / omega after it closes (``hysteresis_resolution`` for a law
    that remembers its impact speed): a stiffer one shortens the step (to a
    whole fraction of the fixed h, back on its grid after the impact), down to h /
    ``contact_substeps``, so the impact is resolved in time. omega is that of the element's
    stored energy at the step's Newton linearisation, with its bodies free (an upper bound for
    bodies held by joints), in an impact that of its laws' loading branch where it is stiffer
    (``ContactLaw.loading_stiffness_ratio``: the modified Kelvin-Voigt law loads along K delta
    and stores c_e K delta^2 / 2). A contact closed longer is sustained: its slow loads are
    carried at any h, and it is stepped at up to ``settling_resolution`` while it settles, then
    at up to ``sustained_resolution``. None: every step at h; an unresolved impact's outcome
    (its loss, its duration) then depends on h, and a run with omega h above 1 says so. With
    ``rtol`` the error estimate chooses h through impacts instead."""
    hysteresis_resolution: float | None = 0.0625
    """Largest omega h of an impact (as ``contact_resolution``) of a contact whose law's
    damping follows the impact speed it remembers (``ContactLaw.needs_impact_velocity``:
    ``LankaraniNikravesh``, ``Pereira``). Pressed in by slow loads after a re-closure, such a
    contact loses K delta^n 3 (1 - e^2) / (4 v_imp) delta_dot^2 for as long as it lasts, so
    its loss follows 1 / v_imp; in a rattle each slow re-closure takes v_imp from the bounces
    before it, whose exit speeds err by about 1 % at omega h = 0.25. Seed 001's ball joint
    with 1 mm of play (docs/guide/case_studies.md) stalled a turn late at 4 of 7 crank speeds
    at h = 1e-3 with 0.25, at 1 of 7 with 0.0625, in as many steps; the triple pendulum's
    Lankarani-Nikravesh stops take 1.13 times the steps. None: as ``contact_resolution``.
    Used only with ``contact_resolution``."""
    sustained_resolution: float | None = 0.5
    """Largest omega h of a sustained contact (closed for longer than its first period, see
    ``contact_resolution``), down to h / ``contact_substeps`` as there. The energy-consistent
    step keeps its energy at any h, but steps its stiff vibration at the frequency
    2 atan(omega h / 2) / h: 2 % low at omega h = 0.5 (a step of up to 1.5 times the limit is
    kept: 0.75, 4 % low), 14 % at 1.5. A joint that rattles (a ball in a socket with play,
    re-closing before its vibration has died out) opens at the vibration's phase, so its bounce
    sequence, its loss and the mechanism's motion follow that frequency: seed 001's slider-crank
    with 1 mm of play in its ball joint stalls a turn early at 1.5 (docs/guide/force_elements.md,
    "Sustained contact"). Where the contact's compliance is the motion (a soft bearing in
    which the crank rocks), that frequency is the motion's: on docs/CASES.md #5's soft
    bearing with 1 mm of play, 0.125 brings h = 1e-3 within 0.3 % of the converged motion
    (0.5: 9 % off) for 3.3 times the steps; ``settling_resolution`` gets within 1 % for 1.4
    times, stepping only the first ``settling_periods`` after each closure that finely. None:
    taken at h once settled (Newton's iterations may then fail on a stiff one); larger values
    make long sustained contacts cheaper. Used only with ``contact_resolution``."""
    settling_resolution: float | None = 0.125
    """Largest omega h of a sustained contact during its first ``settling_periods`` periods
    2 pi / omega after it closed, while the vibration its closure started has not died out. A
    joint that rattles re-opens in that time, at the vibration's phase, so its next bounce
    depends on how well that vibration was stepped (the midpoint rule's frequency
    2 atan(omega h / 2) / h: 0.1 % low at 0.125, 0.3 % at 1.5 times it, the longest step
    kept). On docs/CASES.md #5's soft bearing with 1 mm of play the crank rocks 9 % too far
    at h = 1e-3 with every sustained contact at ``sustained_resolution`` 0.5, and within 1 %
    with the first 30 periods after each closure at 0.125, for 1.4 times the steps (3.3 with
    ``sustained_resolution=0.125`` throughout). A joint without play, closed from the start,
    settles once; one that re-closes every period keeps settling. None: as
    ``sustained_resolution``. Used only with ``contact_resolution``."""
    settling_periods: float = 30.0
    """Periods 2 pi / omega of a contact's vibration after it closed during which it is
    stepped at ``settling_resolution`` (the first of them is its impact, at
    ``contact_resolution``). On the soft bearing above, 10 and 20 left the crank 7 % and 5 %
    too far; 30 and 60 within 1 %."""
    contact_substeps: int = 256
    """The most steps ``contact_resolution`` makes of one step of the fixed h (of h_max): at
    h = 1e-3 impacts up to omega = 6.4e4 rad/s are resolved (seed 001's steel bearing with
    1 mm of play needs 5e4; at 64 its runs at h = 1e-3 stalled 8 % late)."""
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
        for name in ("contact_resolution", "hysteresis_resolution", "sustained_resolution",
                     "settling_resolution"):
            value = getattr(self, name)
            if value is not None and not (is_number(value) and value > 0):
                problems.append(f"{name} must be None or > 0 (omega h, a finite number), "
                                f"got {value!r}")
        if not (is_number(self.settling_periods) and self.settling_periods >= 1):
            problems.append(f"settling_periods must be >= 1 (periods, a finite number), got "
                            f"{self.settling_periods!r}")
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


def _step_bounds(h) -> tuple[float, float]:
    """(h_min, h_max) of a step size or a pair, else a ModelError naming h."""
    problems, bounds = step_size_problems(h)
    if problems:
        raise ModelError(problems)
    return bounds


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


def _as_dict(settings):
    return {f.name: getattr(settings, f.name) for f in fields(settings)}
