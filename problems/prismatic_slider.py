"""Triangular prismatic clearance slider (docs/CASES.md #2, seed 002 Fig. 7).

An equilateral triangular cavity (the ground) along Z holds a triangular slider of edge
e_i = 30 mm with clearance c = 0.3 mm (cavity = slider profile offset outward by c; its edge
follows as e_j = e_i + 2 sqrt(3) c). Each of the slider's six vertices (three per end face)
is held off the cavity's two adjacent planes: 12 gaps. Gravity -Y; a constant force
F = (5, 0, 60) N at the body point s'_f = (0, 0.01, 0.05) (global, initial configuration):
its moment about X, 0.6 N m, beats the weight's m g L/2 = 0.49 N m, and F_x adds moments
about Y (0.25 N m) and Z (-0.05 N m), so vertices at both end faces engage. With these data
five of the six vertices come to rest on a cavity plane (gaps 0, 2, 6, 9, 10: the end +L/2
sits on the bottom plane with its two lower vertices and its top vertex on the upper right
plane; the end -L/2 rises against both upper planes). That is as many contacts as freedoms
besides the Z slide, so the contact forces are statically determinate; the XY motion stops
within ~35 ms and the slider slides along Z with a = F_z/m. *ours*: m = 1 kg, length 0.1 m, h in
[1e-3, 1e-2].
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd


def triangle(edge):
    """Equilateral triangle centred at the origin, counter-clockwise, one vertex on +Y."""
    r = edge / np.sqrt(3)
    angles = np.pi / 2 + np.array([0, 2 * np.pi / 3, 4 * np.pi / 3])
    return np.c_[r * np.cos(angles), r * np.sin(angles)]


def cavity_edge(edge, clearance):
    return edge + 2 * np.sqrt(3) * clearance


def build(edge=0.03, clearance=3e-4, length=0.1, mass=1.0, force=(5.0, 0.0, 60.0),
          force_point=(0.0, 0.01, 0.05), ideal=False) -> nd.System:
    """Body "slider" in clearance joint "cavity" (``ideal=True``: an ideal Prismatic)."""
    s = nd.System(gravity=(0, -9.81, 0))
    # inertia of a solid equilateral prism: polar moment of the section m e^2 / 12
    polar = mass * edge**2 / 12
    transverse = 0.5 * polar + mass * length**2 / 12
    slider = s.add_body("slider", mass=mass, inertia=(transverse, transverse, polar))
    if ideal:
        s.add_joint(nd.Prismatic(s.ground, slider, point=(0, 0, 0), axis=(0, 0, 1), name="cavity"))
    else:
        s.add_joint(nd.PrismaticClearance(s.ground, slider, point=(0, 0, 0), axis=(0, 0, 1),
                                          profile=triangle(edge), clearance=clearance,
                                          length=length, section_x=(1, 0, 0), name="cavity"))
    s.add_force(nd.PointForce(slider, point=force_point, force=force, name="push"))
    return s
