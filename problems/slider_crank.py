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
    return s


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
