"""IFToMM benchmark A02, the N-four-bar mechanism (library of computational benchmark problems,
lim.ii.udc.es/mbsbenchmark, A02; N = 40 in the benchmark).

2N + 1 links of 1 m and 1 kg: N + 1 cranks on ground pivots at x = 0, 1, ..., N, vertical at
the start, and N couplers joining the cranks' tops, horizontal at y = 1 m. Gravity -Y. The top
of the first crank (B0) starts at +1 m/s along X: every crank turns at -1 rad/s and the couplers
translate. 20 s. When the cranks pass the horizontal the mechanism is singular: the degrees
of freedom jump from 1 to N + 1. Every joint is a spatial revolute about Z, so each loop
carries 3 redundant constraint rows (3N in all). Energy is conserved.
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

T_END = 20.0


def build(n=40, length=1.0, mass=1.0, speed=1.0, radius=0.01, redundant=True) -> nd.System:
    """Bodies "crank0".."crank{N}" and "coupler0".."coupler{N-1}"; joints "pivot{i}",
    "left{i}" (crank i - coupler i), "right{i}" (crank i+1 - coupler i).

    ``redundant=False``: each "right{i}" only makes the two points coincide in the XY plane
    (2 rows instead of a revolute's 5), which removes the 3N redundant rows; the motion is
    the same."""
    s = nd.System(gravity=(0, -9.81, 0))
    w = -speed / length
    rod = (0.5 * mass * radius**2, mass * length**2 / 12, mass * length**2 / 12)  # axis first
    up = nd.rotations.from_rotation_vector([0, 0, np.pi / 2])      # body x along global Y
    cranks = []
    for i in range(n + 1):
        x = i * length
        crank = s.add_body(f"crank{i}", mass, rod, position=(x, length / 2, 0.0), orientation=up,
                           velocity=(-w * length / 2, 0.0, 0.0), angular_velocity=(0, 0, w))
        s.add_joint(nd.Revolute(s.ground, crank, point=(x, 0, 0), axis=(0, 0, 1), name=f"pivot{i}"))
        cranks.append(crank)
    for i in range(n):
        coupler = s.add_body(f"coupler{i}", mass, rod, position=((i + 0.5) * length, length, 0.0),
                             velocity=(speed, 0.0, 0.0))
        s.add_joint(nd.Revolute(cranks[i], coupler, point=(i * length, length, 0), axis=(0, 0, 1),
                                name=f"left{i}"))
        point = ((i + 1) * length, length, 0)
        if redundant:
            s.add_joint(nd.Revolute(cranks[i + 1], coupler, point=point, axis=(0, 0, 1),
                                    name=f"right{i}"))
        else:
            s.add_joint(nd.Programmed(
                [cranks[i + 1], coupler],
                lambda t, a, b, p=point: (b.point(p) - a.point(p))[:2], name=f"right{i}",
                point=point))
    return s


def point_b0(res):
    """Global position of B0, the top of the first crank, (n_points, 3)."""
    A = res.rotation("crank0")
    return res.position("crank0") + np.einsum("nij,j->ni", A, np.array([0.5, 0.0, 0.0]))
