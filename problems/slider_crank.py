"""IFToMM spatial slider-crank (docs/CASES.md #5, seed 001 Tables 1-2): ideal joints, or a clearance
spherical joint B / revolute joint A, each as complementarity gaps or as seed 001's penalty law."""
from __future__ import annotations

import casadi as ca
import numpy as np

import nlpdyn as nd

CRANK_PIVOT = np.array([0.0, 0.1, 0.12])
CRANK_LENGTH = 0.08
ROD_LENGTH = 0.3


def rod_orientation(e1=-0.210, e2=0.397, e3=-0.094) -> np.ndarray:
    """Euler parameters of the rod from Table 2's e1, e2, e3 (e0 from the normalisation)."""
    return np.array([np.sqrt(1 - e1**2 - e2**2 - e3**2), e1, e2, e3])


def slider_limits() -> tuple[float, float]:
    """Closed-form range of the slider's x: |C - B| = rod length, B on the crank circle."""
    centre = np.hypot(CRANK_PIVOT[1], CRANK_PIVOT[2])
    far, near = centre + CRANK_LENGTH, centre - CRANK_LENGTH
    return float(np.sqrt(ROD_LENGTH**2 - far**2)), float(np.sqrt(ROD_LENGTH**2 - near**2))


# Revolute clearance joint data (*ours*: seed 001 gives only the clearance sizes): pin radius,
# bearing length; the axial clearance equals the radial one (the seed's clearance "refers to
# axial and radial displacements").
PIN_RADIUS = 0.01
BEARING_LENGTH = 0.02
# Seed 001's penalty contact law (eq. 43): K = 5e6 N/m, n = 1.5, e = 0.75; the spherical
# joint B's law, and joint A's (strips and axial faces) on the "soft" bearing
PENALTY = {"stiffness": 5e6, "exponent": 1.5, "restitution": 0.75}
MODELS = ("complementarity", "penalty")

# The penalty revolute joint A's bearing (``build(bearing=...)``, docs/CASES.md #5):
# "steel": seed 001 section 3.1 takes the cylindrical contact law (eq. 44, Pereira et al. 2015)
#   for its revolute joints; here on a steel pin in a steel bore (E = 207 GPa, nu = 0.3,
#   *ours*), e = 0.75 (the seed's), PIN_RADIUS, BEARING_LENGTH (L/D = 1, a common journal
#   bearing proportion), 4 strips. The law's stiffness per unit length, (a dR + b) E* / dR,
#   follows the radial clearance dR; it is fitted for dR in [5e-3, 10] mm (eq. 48), so below
#   5e-3 mm (the seed's 0 and 1e-3 mm) it is taken at 5e-3 mm, the stiffest the fit covers
#   (1.15e10 N/m^1.37 per strip). The axial faces take the same law (section 2.4.2: eq. 44's
#   delta is "the axial or radial displacement").
#   With no play it turns like the perfect joint (8.61 turns in 5 s at h = 1e-3 to 1.25e-4,
#   ideal 8.61; tilt < 0.02 deg), stepped at ~1.3e-5 s (contact_resolution, ~3.8e5 steps,
#   ~5 min). With play it runs (the steps' Newton iterations on the law's hysteresis after
#   slow re-closures are no longer taken for a diverging force): 1 mm, 5 s, h = 1e-3 / 5e-4 /
#   2.5e-4: 0.475 / 0.508 / 0.490 turns (stepped at ~3e-5 s, ~1.5e5 steps, 2.5-3.5 min); the
#   crank cocks by up to 7.6 deg (c over the outer strips' 7.5 mm), stops within half a turn
#   and rocks (seed 001: about two revolutions). Hence not yet the default.
# "soft" (default): the data used so far: Lankarani-Nikravesh with PENALTY on 2 strips and on
#   the faces.
#   The crank, loaded at B 80 mm from a bearing whose strips sit 10 mm apart, cocks: with no
#   play the strips resist a tilt theta with M = 23.5 theta^1.5 N m (2 x 1.328 K (L/4)^2.5), so
#   the ~37 N the rod puts on B near its dead centres tilts it by ~14 deg and moves B ~19 mm
#   along X. The mechanism then swings back and forth (0.34 turns in 5 s at h = 1e-3, 1.16 at
#   2.5e-4; ideal 8.61) while keeping 97 % of its energy over 1.5 s: geometry, not damping.
BEARINGS = ("soft", "steel")
STEEL = {"youngs_modulus": 2.07e11, "poisson_ratio": 0.3}
PEREIRA_MIN_CLEARANCE = 5e-6
BEARING_STRIPS = {"steel": 4, "soft": 2}


def bearing_law(clearance, bearing="soft", n_strips=None) -> nd.ContactLaw:
    """The strips' contact law of the penalty revolute joint A (``BEARINGS``).

    "steel": :class:`nlpdyn.Pereira` (seed 001 eq. 44) with ``STEEL``, restitution 0.75,
    ``BEARING_LENGTH`` and ``n_strips``; below ``PEREIRA_MIN_CLEARANCE`` its stiffness and
    exponent at that clearance, as a :class:`nlpdyn.LankaraniNikravesh` law (the same force).
    "soft": Lankarani-Nikravesh with ``PENALTY``.

    Example
    -------
    >>> law = bearing_law(0.0, "steel")        # no play: Pereira's law at dR = 5e-3 mm
    >>> f"{law.stiffness:.3g} {law.exponent:.3f}"
    '1.15e+10 1.369'
    """
    if bearing not in BEARINGS:
        raise ValueError(f"bearing must be one of {BEARINGS}, got {bearing!r}")
    if bearing == "soft":
        return nd.LankaraniNikravesh(**PENALTY)
    n_strips = BEARING_STRIPS[bearing] if n_strips is None else n_strips
    law = nd.Pereira(PENALTY["restitution"], **STEEL, length=BEARING_LENGTH,
                     radial_clearance=max(clearance, PEREIRA_MIN_CLEARANCE), n_strips=n_strips)
    if clearance >= PEREIRA_MIN_CLEARANCE:
        return law
    return nd.LankaraniNikravesh(law.stiffness, law.exponent, PENALTY["restitution"])


def build(gravity=(0.0, 0.0, -9.81), crank_speed=6.0, spherical_clearance=None,
          revolute_clearance=None, model="complementarity", law=None, n_strips=None,
          bearing="soft") -> nd.System:
    """The slider-crank of docs/CASES.md #5.

    Bodies "crank", "rod", "slider"; joints "A" (revolute, ground-crank), "B" (spherical,
    crank-rod), "C" (universal, slider-rod) and "slide" (prismatic, ground-slider along X).
    The rod's Table 2 angular velocity violates the universal joint; the stepper projects
    the initial velocities (``res.initial_projection`` says by how much).

    ``spherical_clearance`` / ``revolute_clearance`` (m; None: the ideal joint) turn B or A
    into a clearance joint, ``model`` "complementarity" (unilateral gaps; a clearance of 0
    is the ideal joint) or "penalty" (seed 001: contact laws; a clearance of 0 is allowed).
    Same names either way. Penalty laws: ``law`` for every contact when given; else B takes
    Lankarani-Nikravesh with ``PENALTY`` (seed 001 eq. 43) and A the laws of its ``bearing``
    (``BEARINGS``, :func:`bearing_law`): "soft" (default, the data used so far: ``PENALTY``
    per strip, 2 strips), on which the crank cocks and stalls even with no play; "steel",
    seed 001's cylindrical law (eq. 44) on a steel bearing with ``n_strips`` (default 4)
    strips, which turns like the perfect joint with no play and stops within half a turn
    with 1 mm of play (see ``BEARINGS``).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    imperfect = spherical_clearance is not None or revolute_clearance is not None
    s = nd.System(gravity=gravity)
    crank = s.add_body("crank", mass=0.12, inertia=(1e-4, 1e-4, 1e-5),
                       position=(0, 0.1, 0.16), velocity=(0, -0.04 * crank_speed, 0),
                       angular_velocity=(crank_speed, 0, 0))
    rod = s.add_body("rod", mass=0.5, inertia=(4e-4, 4e-3, 4e-3), position=(0.1, 0.05, 0.1),
                     orientation=rod_orientation(), velocity=(0.12, -0.24, 0),
                     angular_velocity=(-1.600, -1.073, 1.431))
    slider = s.add_body("slider", mass=2.0, inertia=(1e-4, 1e-4, 1e-4), position=(0.2, 0, 0),
                        velocity=(0.24, 0, 0))
    b_point = CRANK_PIVOT + np.array([0, 0, CRANK_LENGTH])
    c_point = np.array([0.2, 0.0, 0.0])
    rod_dir = (c_point - b_point) / np.linalg.norm(c_point - b_point)
    axis2 = np.cross((1.0, 0, 0), rod_dir)
    if bearing not in BEARINGS:
        raise ValueError(f"bearing must be one of {BEARINGS}, got {bearing!r}")
    n_strips = BEARING_STRIPS[bearing] if n_strips is None else n_strips
    A = nd.Revolute(s.ground, crank, point=CRANK_PIVOT, axis=(1, 0, 0), name="A")
    B = nd.Spherical(crank, rod, point=b_point, name="B")
    if revolute_clearance is not None and (revolute_clearance > 0 or model == "penalty"):
        strips_law = law
        if model == "penalty" and law is None:
            strips_law = bearing_law(revolute_clearance, bearing, n_strips)
        A = _clearance_version(A, model, strips_law, radius=PIN_RADIUS, length=BEARING_LENGTH,
                               clearance=revolute_clearance, axial_clearance=revolute_clearance,
                               n_strips=n_strips)
    if spherical_clearance is not None and (spherical_clearance > 0 or model == "penalty"):
        B = _clearance_version(B, model, law or nd.LankaraniNikravesh(**PENALTY),
                               clearance=spherical_clearance)
    for joint in (A, B):
        (s.add_force if isinstance(joint, nd.ForceElement) else s.add_joint)(joint)
    s.add_joint(nd.Universal(slider, rod, point=c_point, axis1=(1, 0, 0),
                             axis2=axis2 / np.linalg.norm(axis2), name="C"))
    s.add_joint(nd.Prismatic(s.ground, slider, point=c_point, axis=(1, 0, 0), name="slide"))
    if imperfect:
        # Table 2's velocities made consistent with the ideal mechanism, so every model starts
        # from the same state (without joint A or B as constraints, the projection would move
        # the crank or the rod off its pin instead)
        q0, v0 = consistent_start(gravity, crank_speed)
        for k, body in enumerate(s.bodies):
            body.position, body.orientation = q0[7 * k:7 * k + 3], q0[7 * k + 3:7 * k + 7]
            body.velocity, body.angular_velocity = v0[6 * k:6 * k + 3], v0[6 * k + 3:6 * k + 6]
    return s


def consistent_start(gravity=(0.0, 0.0, -9.81), crank_speed=6.0):
    """(q, v) of the ideal mechanism after the stepper's initial projection."""
    stepper = nd.Stepper(build(gravity, crank_speed), h=1e-3)
    return stepper.q.copy(), stepper.v.copy()


def _clearance_version(joint, model, law, clearance, radius=None, length=None,
                       axial_clearance=None, n_strips=2):
    """The clearance counterpart of an ideal joint with the same data and name."""
    if model == "penalty":
        kw = {} if isinstance(joint, nd.Spherical) else {
            "radius": radius, "length": length, "axial_clearance": axial_clearance,
            "n_strips": n_strips}
        return nd.penalty_version(joint, law, clearance=clearance, **kw)
    if isinstance(joint, nd.Spherical):
        return nd.SphericalClearance(joint.parent, joint.child, point=joint.point,
                                     clearance=clearance, name=joint.name)
    return nd.RevoluteClearance(joint.parent, joint.child, point=joint.point, axis=joint.axis,
                                radius=radius, clearance=clearance, length=length,
                                axial_clearance=axial_clearance, name=joint.name)


# The penalty joints' step: K = 5e6 N/m^1.5 at the crank's pin and ball rings at ~1500 rad/s
# under the mechanism's loads (a contact period of ~4 ms, omega h ~ 1.5 at h = 1e-3). The
# energy-consistent step does not damp what h does not resolve: at 1e-3 the 1 mm ball joint
# turns 7.0 times in 5 s against 4.9-5.2 at 2.5e-4-1.25e-4, and the revolute joint's
# hysteresis contact rattles (the run warns). At 2.5e-4 both are clean.
PENALTY_STEP = 2.5e-4

# Scenarios of seed 001 section 3.1: (label, joint made imperfect, clearance in m)
CLEARANCES_MM = (0.0, 1e-3, 0.1, 1.0)
SCENARIOS = [("ideal", None, None)] + [
    (f"{joint} c={c:g} mm", joint, 1e-3 * c) for joint in ("spherical", "revolute")
    for c in CLEARANCES_MM]


def step_size(clearance, h_max=1e-3):
    """Fixed step for a complementarity clearance joint: h_max halved until 12 h^2 <= clearance.

    12 h^2 m is how far a step's second-order motion takes this mechanism's joints off the
    start-of-step prediction (docs/FORMULATION.md). The default contact step (``contact="cone"``)
    keeps the contact coordinates' Jacobian at the start of the step and iterates on the
    end-of-step gap; once 12 h^2 exceeds the clearance, its iterations stop converging at the
    revolute joint A: steps fall back to "end_normal" (``res.stats.contact_fallback``) or are
    retried with h/2, and the run loses energy the ideal joint does not, or fails. Measured,
    5 s, complementarity joints (``python -c "from problems import slider_crank as s;
    print(s.step_size_study())"``; ideal mechanism: 8.89 / 8.74 / 8.68 turns at h = 1e-3 /
    5e-4 / 2.5e-4 s):

    ============  =======  ========  ===========================================================
    clearance     h        12h^2/c   revolute A; spherical B
    ============  =======  ========  ===========================================================
    1e-6 m        1e-3     12        A fails at t = 0.25 s; B 229 retried, 134 fallback steps,
                                     0.064 J of sustained-contact work, 8.02 turns
    1e-6 m        5e-4     3         A fails at t = 0.27 s; B clean, 8.74 turns
    1e-6 m        2.5e-4   0.75      both clean (no retry, no fallback), 8.68 turns, like ideal
    1e-5 m        1e-3     1.2       A 133 retried, 41 fallback steps, 8.18 turns; B clean
    1e-5 m        5e-4     0.3       both clean, A 8.65, B 8.74 turns
    2e-5 m        1e-3     0.6       both clean, A 8.59, B 8.88 turns
    1e-4, 1e-3 m  1e-3     <= 0.12   both clean
    ============  =======  ========  ===========================================================

    The threshold sits at 12 h^2 ~ c for joint A (clean at 12 h^2 / c <= 0.75, retried or
    failed at >= 1.2); the spherical joint B is clean up to 3 and not at 12. So the rule stays
    as it was; at the clearances of seed 001 it asks for 2.5e-4 s only at 1e-3 mm. (The study
    takes ~2 min.)
    """
    if not clearance:
        return h_max
    h = h_max
    while 12 * h * h > clearance:
        h /= 2
    return h


def scenario_system(joint, clearance, model):
    if joint is None:
        return build()
    return build(**{f"{joint}_clearance": clearance}, model=model)


def scenario_step(model, joint, clearance_mm, h_max=1e-3):
    """The step :func:`run_scenarios` takes, for ``nd.sweep`` (clearance in mm): :func:`step_size`
    for complementarity runs, ``PENALTY_STEP`` (at most ``h_max``) for penalty runs."""
    if model == "complementarity":
        return step_size(1e-3 * clearance_mm, h_max)
    return min(PENALTY_STEP, h_max)


def sweep_scenario(model, joint, clearance_mm):
    """A scenario as ``nd.sweep`` builds it (clearance in mm)."""
    return scenario_system(joint, 1e-3 * clearance_mm, model)


SWEEP_GRID = {"model": list(MODELS), "joint": ["spherical", "revolute"],
              "clearance_mm": list(CLEARANCES_MM)}


def run_scenarios(model="complementarity", t_end=5.0, scenarios=None, progress=False, h=None,
                  **options):
    """Run the scenarios with ``model`` ("complementarity" or "penalty").

    Returns {label: Result}. Penalty runs use ``PENALTY_STEP`` (or ``h``) with the contact
    laws evaluated implicitly (energy-consistent); complementarity runs use
    :func:`step_size`. ``options`` go to
    :func:`nlpdyn.simulate` (e.g. ``contact="end_normal"``, the previous contact step).
    """
    out = {}
    for label, joint, clearance in scenarios or SCENARIOS:
        step = h or (step_size(clearance) if model == "complementarity" else PENALTY_STEP)
        out[label] = nd.simulate(scenario_system(joint, clearance, model), t_end=t_end, h=step,
                                 progress=progress, **options)
    return out


def crank_angle(res) -> np.ndarray:
    """Crank rotation about global X (rad, unwrapped), shape (n_points,)."""
    A = res.rotation("crank")
    return np.unwrap(np.arctan2(A[:, 2, 1], A[:, 1, 1]))


def joint_force(res, name) -> np.ndarray:
    """Force of joint ``name`` ("A" or "B") on its child body, global, shape (n_steps, 3):
    the constraint reaction of an ideal or complementarity joint, the applied force of a
    penalty joint."""
    if name in res.force_elements:
        return res.applied_force(name, body=res.force_elements[name][-1])
    return res.reaction_force(name)


def turns(res) -> float:
    """Crank turns about X over the run (signed)."""
    angle = crank_angle(res)
    return float((angle[-1] - angle[0]) / (2 * np.pi))


def turning_until(res, back=0.1) -> float:
    """Time the crank first swings back (its angle ``back`` rad below the largest reached so
    far); the run's end if it never does."""
    angle = crank_angle(res)
    back_at = np.nonzero(angle < np.maximum.accumulate(angle) - back)[0]
    return float(res.t[back_at[0]]) if len(back_at) else float(res.t[-1])


def slider_maxima(res) -> np.ndarray:
    """Times of the slider's full-stroke maxima while the crank still turns forward
    (:func:`turning_until`; prominence above half the kinematic stroke), shape (n_maxima,)."""
    from scipy.signal import find_peaks
    lo, hi = slider_limits()
    peaks, _ = find_peaks(res.position("slider")[:, 0], prominence=0.5 * (hi - lo))
    times = res.t[peaks]
    return times[times < turning_until(res)]


def slider_delay(res, ideal) -> tuple[int, float]:
    """(number of full strokes both runs make, delay of the last of them against ``ideal``
    in s; nan when there is none)."""
    mine, ref = slider_maxima(res), slider_maxima(ideal)
    n = min(len(mine), len(ref))
    return n, float(mine[n - 1] - ref[n - 1]) if n else float("nan")


def ideal_references(results, t_end=None) -> dict:
    """The ideal mechanism at every fixed h the runs in ``results`` used: {h: Result}
    (the method is first order, so a clearance run is compared with the ideal run at its h)."""
    refs = {}
    for res in results.values():
        h = float(res.info.get("h_max", res.h[0]))   # the run's h (impacts take shorter steps)
        if h not in refs:
            refs[h] = nd.simulate(build(), t_end=t_end or float(res.t[-1]), h=h, progress=False)
    return refs


def summary_table(results, references=None) -> str:
    """One line per run: h, crank turns, when the crank first swings back (nan: never), full
    slider strokes before that and the delay of the last one against the ideal run at the same
    h (``references``, from :func:`ideal_references`), energy change, retried and
    contact-fallback steps, steps, wall time."""
    lines = [f"{'run':<22} {'h':>7} {'turns':>6} {'back (s)':>8} {'strokes':>7} {'delay (s)':>9} "
             f"{'dE (J)':>8} {'retried':>7} {'fallbk':>6} {'steps':>6} {'wall (s)':>8}  status"]
    for label, res in results.items():
        h = float(res.info.get("h_max", res.h[0]))
        strokes, delay = (slider_delay(res, references[h]) if references and h in references
                          else (len(slider_maxima(res)), float("nan")))
        back = turning_until(res)
        lines.append(f"{label:<22} {h:7.2g} {turns(res):6.2f} "
                     f"{back if back < res.t[-1] else float('nan'):8.3f} {strokes:7d} {delay:9.3f} "
                     f"{res.energy[-1] - res.energy[0]:8.4f} "
                     f"{np.count_nonzero(res.stats.retries):7d} "
                     f"{np.count_nonzero(res.stats.contact_fallback):6d} {len(res.h):6d} "
                     f"{res.info.get('wall_time', float('nan')):8.1f}  "
                     f"{'ok' if res.success else res.message[:60]}")
    return "\n".join(lines)


def ledger_summary(res) -> dict:
    """Final values of ``res.energy_ledger()`` grouped (J, cumulative over the run): ``dE``
    (mechanical energy change), ``impact`` (plastic impacts of the clearance joints),
    ``contact`` (their sustained contact), ``work`` (ideal joints' impulses and force elements'
    non-conservative work, e.g. a penalty law's hysteresis), ``residual`` (the rest of the
    time discretisation), split into ``gyroscopic`` (its explicit gyroscopic term) and
    ``potential`` (conservative forces' work against their stored energy: what their
    discretisation adds or removes, e.g. backward Euler's damping of a stiff penalty law);
    dE = impact + contact + work + residual. ``contact_step``: the largest sustained-contact
    work of a single step (a one-step jam shows there)."""
    ledger = res.energy_ledger()
    last = ledger.iloc[-1]

    def total(prefix):
        return float(sum(v for k, v in last.items() if k.startswith(prefix)))
    contact = sum((ledger[k].to_numpy() for k in ledger if k.startswith("contact:")),
                  np.zeros(len(ledger)))
    return {"dE": float(last["total"] - ledger["total"].iloc[0]),
            "impact": total("impact:"), "contact": total("contact:"), "work": total("work:"),
            "residual": float(last["residual"]), "gyroscopic": float(last["residual:gyroscopic"]),
            "potential": float(last["residual:potential"]),
            "contact_step": float(np.diff(contact).min(initial=0.0))}


def ledger_table(results) -> str:
    """One line per run: :func:`ledger_summary`'s columns (J)."""
    cols = ("dE", "impact", "contact", "work", "residual", "gyroscopic", "potential",
            "contact_step")
    lines = [f"{'run':<22} " + " ".join(f"{c:>10}" for c in cols[:-1]) + "  contact_step"]
    for label, res in results.items():
        row = ledger_summary(res)
        lines.append(f"{label:<22} " + " ".join(f"{row[c]:10.2e}" for c in cols[:-1])
                     + f"  {row['contact_step']:12.2e}")
    return "\n".join(lines)


def step_size_study(clearances=(1e-6, 1e-5, 2e-5, 1e-4, 1e-3), t_end=5.0) -> str:
    """The measurements behind :func:`step_size`: complementarity clearance in A and in B at
    h = 1e-3, 5e-4 and the rule's h (each once), with the ideal runs at those h."""
    runs = {}
    for c in clearances:
        for h in sorted({1e-3, 5e-4, step_size(c)}, reverse=True):
            for joint in ("revolute", "spherical"):
                label = f"{joint[:3]} c={1e3 * c:g}mm h={h:g}"
                runs[label] = nd.simulate(build(**{f"{joint}_clearance": c}), t_end=t_end, h=h,
                                          progress=False)
    return summary_table(runs, ideal_references(runs, t_end)) + "\n" + ledger_table(runs)


# ---------------------------------------------------------------- independent reference
def _rotation(p):
    e0, e = p[0], np.asarray(p[1:])
    skew = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
    return (2 * e0**2 - 1) * np.eye(3) + 2 * (np.outer(e, e) + e0 * skew)


def reference_model():
    """The slider-crank in its crank angle phi (about +X from Table 2's position): the rod
    runs from B on the crank to C on the X axis, its spin fixed by the universal joint's
    rod axis, which stays normal to X and to the rod: an independent reference (its own
    kinematics and Euler parameters, no nlpdyn). Returns (rhs(t, [phi, rate]), slider_x(phi)).

    Example
    -------
    >>> rhs, slider_x = reference_model()
    >>> round(slider_x(0.0), 4)       # the slider at Table 2's start
    0.2
    """
    phi, rate = ca.SX.sym("phi"), ca.SX.sym("rate")
    pivot, R_c, L = CRANK_PIVOT, CRANK_LENGTH, ROD_LENGTH
    turn = ca.vertcat(ca.horzcat(1, 0, 0), ca.horzcat(0, ca.cos(phi), -ca.sin(phi)),
                      ca.horzcat(0, ca.sin(phi), ca.cos(phi)))
    B = pivot + turn @ ca.DM([0, 0, R_c])
    crank_centre = pivot + turn @ ca.DM([0, 0, 0.5 * R_c])
    x = B[0] + ca.sqrt(L**2 - B[1]**2 - B[2]**2)
    C = ca.vertcat(x, 0, 0)

    def frame(d):
        a2 = ca.cross(ca.DM([1, 0, 0]), d)
        a2 = a2 / ca.norm_2(a2)
        return ca.horzcat(d, a2, ca.cross(d, a2))

    d = (C - B) / L
    F0 = ca.Function("F0", [phi], [frame(d)])(0)
    R_rod = frame(d) @ F0.T @ ca.DM(_rotation(rod_orientation()))
    rod_centre = 0.5 * (B + C)

    def omega(R):           # global angular velocity per unit rate: vee(dR/dphi R^T)
        W = ca.jacobian(ca.vec(R), phi).reshape((3, 3)) @ R.T
        return ca.vertcat(W[2, 1], W[0, 2], W[1, 0])

    g = 9.81
    bodies = [(0.12, np.diag([1e-4, 1e-4, 1e-5]), crank_centre, turn),
              (0.5, np.diag([4e-4, 4e-3, 4e-3]), rod_centre, R_rod),
              (2.0, np.diag([1e-4, 1e-4, 1e-4]), C, ca.DM.eye(3))]
    mass, V = 0, 0
    for m, J, r, R in bodies:
        dr = ca.jacobian(r, phi)
        w_body = R.T @ omega(R)
        mass = mass + m * ca.dot(dr, dr) + w_body.T @ ca.DM(J) @ w_body
        V = V + m * g * r[2]
    accel = -(ca.jacobian(V, phi) + 0.5 * ca.jacobian(mass, phi) * rate**2) / mass
    f = ca.Function("crank_rhs", [phi, rate], [accel])
    slider = ca.Function("slider_x", [phi], [x])
    return (lambda t, s: [s[1], float(f(s[0], s[1]))]), (lambda p: float(slider(p)))
