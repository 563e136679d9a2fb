"""IFToMM spatial slider-crank with ideal joints (CASES.md #5, seed 001 Tables 1-2)."""
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


def build(gravity=(0.0, 0.0, -9.81), crank_speed=6.0) -> nd.System:
    """The slider-crank of CASES.md #5 with all joints perfect.

    Bodies "crank", "rod", "slider"; joints "A" (revolute, ground-crank), "B" (spherical,
    crank-rod), "C" (universal, slider-rod) and "slide" (prismatic, ground-slider along X).
    The rod's Table 2 angular velocity violates the universal joint; the stepper projects
    the initial velocities (``res.initial_projection`` says by how much).
    """
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
    s.add_joint(nd.Revolute(s.ground, crank, point=CRANK_PIVOT, axis=(1, 0, 0), name="A"))
    s.add_joint(nd.Spherical(crank, rod, point=b_point, name="B"))
    s.add_joint(nd.Universal(slider, rod, point=c_point, axis1=(1, 0, 0),
                             axis2=axis2 / np.linalg.norm(axis2), name="C"))
    s.add_joint(nd.Prismatic(s.ground, slider, point=c_point, axis=(1, 0, 0), name="slide"))
    return s
