"""IFToMM benchmark A04, Bricard's mechanism (lim.ii.udc.es/mbsbenchmark, A04): an
overconstrained spatial loop.

Five rods of 1 m and 1 kg (square section 0.1 m) and six revolute joints, each axis at right
angles to both rods it joins: the ground rod from (0, 0, 1) to the origin, then rods to
(1, 0, 0), (1, -1, 0), (1, -1, 1), (0, -1, 1) and back to (0, 0, 1). Gruebler's count gives
0 degrees of freedom; the joints' geometry leaves 1, so one of the 30 constraint rows is
redundant. Released at rest under gravity -Y; 10 s; energy is conserved.
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

CORNERS = [(0, 0, 0), (1, 0, 0), (1, -1, 0), (1, -1, 1), (0, -1, 1), (0, 0, 1)]
AXES = [(0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0)]


def build(length=1.0, mass=1.0, side=0.1, redundant=True) -> nd.System:
    """Bodies "rod1".."rod5"; joints "j0".."j5" at CORNERS (j0: ground - rod1, j5: rod5 -
    ground). ``redundant=False``: "j5" keeps 4 of a revolute's 5 rows (the others fix the
    loop already), so the 29 rows are independent; the motion is the same."""
    s = nd.System(gravity=(0, -9.81, 0))
    axial, transverse = mass * side**2 / 6, mass * (length**2 + side**2) / 12
    corners = [np.array(c, dtype=float) * length for c in CORNERS]
    rods = []
    for k in range(5):
        a, b = corners[k], corners[k + 1]
        along = (b - a) / np.linalg.norm(b - a)
        # body x along the rod, body y along the first joint's axis
        y = np.array(AXES[k], dtype=float)
        A = np.column_stack([along, y, np.cross(along, y)])
        rods.append(s.add_body(f"rod{k + 1}", mass, (axial, transverse, transverse),
                               position=0.5 * (a + b), orientation=A))
    bodies = [s.ground, *rods, s.ground]
    for k in range(6):
        joint = nd.Revolute(bodies[k], bodies[k + 1], point=corners[k], axis=AXES[k],
                            name=f"j{k}")
        if k == 5 and not redundant:
            joint = nd.Programmed([bodies[k], bodies[k + 1]],
                                  lambda t, a, b, j=joint: j.equations([a, b], t)[:4],
                                  name="j5", point=corners[k])
        s.add_joint(joint)
    return s
