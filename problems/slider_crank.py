"""IFToMM spatial slider-crank (CASES.md #5, seed 001 Tables 1-2): ideal joints, or a clearance
spherical joint B / revolute joint A, each as complementarity gaps or as seed 001's penalty law."""
from __future__ import annotations

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
# Seed 001's penalty contact law for both clearance joints: K = 5e6 N/m, n = 1.5, e = 0.75
PENALTY = {"stiffness": 5e6, "exponent": 1.5, "restitution": 0.75}
MODELS = ("complementarity", "penalty")


def build(gravity=(0.0, 0.0, -9.81), crank_speed=6.0, spherical_clearance=None,
          revolute_clearance=None, model="complementarity", law=None, n_strips=2) -> nd.System:
    """The slider-crank of CASES.md #5.

    Bodies "crank", "rod", "slider"; joints "A" (revolute, ground-crank), "B" (spherical,
    crank-rod), "C" (universal, slider-rod) and "slide" (prismatic, ground-slider along X).
    The rod's Table 2 angular velocity violates the universal joint; the stepper projects
    the initial velocities (``res.initial_projection`` says by how much).

    ``spherical_clearance`` / ``revolute_clearance`` (m; None: the ideal joint) turn B or A
    into a clearance joint, ``model`` "complementarity" (unilateral gaps; a clearance of 0
    is the ideal joint) or "penalty" (seed 001: a contact law, ``law`` defaulting to
    Lankarani-Nikravesh with ``PENALTY``; a clearance of 0 is allowed). Same names either way.
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
    if law is None and model == "penalty":
        law = nd.LankaraniNikravesh(**PENALTY)
    A = nd.Revolute(s.ground, crank, point=CRANK_PIVOT, axis=(1, 0, 0), name="A")
    B = nd.Spherical(crank, rod, point=b_point, name="B")
    if revolute_clearance is not None and (revolute_clearance > 0 or model == "penalty"):
        A = _clearance_version(A, model, law, radius=PIN_RADIUS, length=BEARING_LENGTH,
                               clearance=revolute_clearance, axial_clearance=revolute_clearance,
                               n_strips=n_strips)
    if spherical_clearance is not None and (spherical_clearance > 0 or model == "penalty"):
        B = _clearance_version(B, model, law, clearance=spherical_clearance)
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


# Scenarios of seed 001 section 3.1: (label, joint made imperfect, clearance in m)
CLEARANCES_MM = (0.0, 1e-3, 0.1, 1.0)
SCENARIOS = [("ideal", None, None)] + [
    (f"{joint} c={c:g} mm", joint, 1e-3 * c) for joint in ("spherical", "revolute")
    for c in CLEARANCES_MM]


def step_size(clearance, h_max=1e-3):
    """Fixed step for a complementarity clearance joint: the gap linearisation error of a
    step, ~12 h^2 m for this mechanism's accelerations (FORMULATION.md), must stay below
    the clearance, or the contact set flips from step to step (1e-3 mm needs 2.5e-4 s)."""
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


def run_scenarios(model="complementarity", t_end=5.0, scenarios=None, progress=False, h=None):
    """Run the scenarios with ``model`` ("complementarity" or "penalty").

    Returns {label: Result}. Penalty runs use h = 1e-3 (``h``) with the contact laws
    evaluated implicitly; complementarity runs use :func:`step_size`.
    """
    out = {}
    for label, joint, clearance in scenarios or SCENARIOS:
        step = h or (step_size(clearance) if model == "complementarity" else 1e-3)
        out[label] = nd.simulate(scenario_system(joint, clearance, model), t_end=t_end, h=step,
                                 progress=progress)
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


def summary_table(results) -> str:
    """One line per run: crank turns, time of the slider's last maximum, energy lost, steps,
    wall time."""
    lines = [f"{'run':<22} {'turns':>6} {'x_max last (s)':>15} {'dE (J)':>9} {'steps':>6} "
             f"{'wall (s)':>8}  status"]
    for label, res in results.items():
        turns = (crank_angle(res)[-1] - crank_angle(res)[0]) / (2 * np.pi)
        x = res.position("slider")[:, 0]
        peaks = np.where((x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:]))[0] + 1
        last_peak = res.t[peaks[-1]] if len(peaks) else np.nan
        lines.append(f"{label:<22} {turns:6.2f} {last_peak:15.3f} "
                     f"{res.energy[-1] - res.energy[0]:9.4f} {len(res.h):6d} "
                     f"{res.stats.wall_time.sum():8.1f}  {'ok' if res.success else res.message[:60]}")
    return "\n".join(lines)
