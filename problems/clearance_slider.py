"""Cylindrical clearance slider (docs/CASES.md #1, seed 002 Fig. 6).

A rigid rod of radius R is fixed along Z; a tube (the slider) with radial clearance c slides
on it. Gravity -Y drops the tube onto the rod and a constant force F = (0, 0, 30) N at the
body point s'_f = (0, 0.02, 0.05) (global, initial configuration) tilts it: the push's moment
F s_y = 0.6 N m exceeds the weight's m g L/2 = 0.49 N m, so the tube turns about +X until both
ends touch the rod diametrically opposite: end +L/2 rests on the rod's upper side, end -L/2
presses against its lower side, tilt sin(theta) = 2c/L (the gaps are measured at the bore end
centres). Then it slides along Z with a = F/m, the contact forces (1.065 N at end -L/2,
10.875 N at end +L/2) fixed by statics (tests/test_clearance_sliders.py).
Values marked *ours* in docs/CASES.md: R = 10 mm, tube length 0.1 m, m = 1 kg, J' of a thick tube
(outer radius 20 mm), h in [1e-3, 1e-2], 1 s.
"""
from __future__ import annotations


import nlpdyn as nd


def tube_inertia(mass, inner, outer, length):
    axial = 0.5 * mass * (inner**2 + outer**2)
    transverse = mass * (3 * (inner**2 + outer**2) + length**2) / 12
    return (transverse, transverse, axial)


def build(radius=0.01, clearance=1e-4, length=0.1, mass=1.0, outer=0.02,
          force=(0.0, 0.0, 30.0), force_point=(0.0, 0.02, 0.05), ideal=False) -> nd.System:
    """Body "tube" on clearance joint "bore" (``ideal=True``: an ideal Cylindrical joint)."""
    s = nd.System(gravity=(0, -9.81, 0))
    tube = s.add_body("tube", mass=mass,
                      inertia=tube_inertia(mass, radius + clearance, outer, length))
    if ideal:
        s.add_joint(nd.Cylindrical(s.ground, tube, point=(0, 0, 0), axis=(0, 0, 1), name="bore"))
    else:
        s.add_joint(nd.CylindricalClearance(s.ground, tube, point=(0, 0, 0), axis=(0, 0, 1),
                                            radius=radius, clearance=clearance, length=length,
                                            name="bore"))
    s.add_force(nd.PointForce(tube, point=force_point, force=force, name="push"))
    return s
