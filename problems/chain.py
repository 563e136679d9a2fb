"""A chain of N links hanging from a fixed pivot, every joint a revolute about global Z (or a
revolute clearance joint, or a stiff bushing evaluated implicitly): the scaling case of the
benchmarks (issue 11).

Links of 1 kg and 0.1 m (slender rods of radius 5 mm), released horizontal along +X at rest,
gravity -Y.
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

LINK = 0.1
MASS = 1.0


def build(n_links=8, clearance=None, radius=0.005, bore_length=0.01, bushing=None) -> nd.System:
    """Bodies "link0".."link{N-1}"; joints "j0" (ground - link0) .. "j{N-1}". ``clearance``
    (m): every joint a RevoluteClearance with that radial and axial clearance. ``bushing`` =
    (k N/m, k_r N m/rad): every joint a Bushing (force element "j{k}", evaluated implicitly)
    with stiffness k along all axes and k_r about X and Y, free about Z: a compliant hinge."""
    s = nd.System(gravity=(0, -9.81, 0))
    transverse = MASS * (3 * radius**2 + LINK**2) / 12
    parent = s.ground
    for k in range(n_links):
        link = s.add_body(f"link{k}", MASS, (0.5 * MASS * radius**2, transverse, transverse),
                          position=((k + 0.5) * LINK, 0.0, 0.0))
        point = (k * LINK, 0.0, 0.0)
        if bushing is not None:
            element = nd.Bushing(parent, link, point, stiffness=bushing[0],
                                 rotational_stiffness=(bushing[1], bushing[1], 0.0), name=f"j{k}")
            element.evaluation = "implicit"
            s.add_force(element)
        elif clearance is None:
            s.add_joint(nd.Revolute(parent, link, point=point, axis=(0, 0, 1), name=f"j{k}"))
        else:
            s.add_joint(nd.RevoluteClearance(parent, link, point=point, axis=(0, 0, 1),
                                             radius=radius, clearance=clearance,
                                             length=bore_length, axial_clearance=clearance,
                                             name=f"j{k}"))
        parent = link
    return s


def tip(res, n_links):
    """Global position of the chain's free end, (n_points, 3)."""
    k = n_links - 1
    A = res.rotation(f"link{k}")
    return res.position(f"link{k}") + np.einsum("nij,j->ni", A, np.array([0.5 * LINK, 0.0, 0.0]))


def reference_rhs(n_links, radius=0.005):
    """Right-hand side of the chain's ODE in minimal coordinates, for scipy: x = (absolute
    link angles from +X about Z, their rates), rods of ``LINK`` and ``MASS`` under gravity
    -Y. Each link's centre moves with J_k(theta) theta' (Lagrange's equations written
    out); independent of nlpdyn, the reference its runs are compared with."""
    inertia = MASS * (3 * radius**2 + LINK**2) / 12
    n, g = n_links, 9.81

    def rhs(t, x):
        theta, w = x[:n], x[n:]
        s, c = np.sin(theta), np.cos(theta)
        M, f = np.zeros((n, n)), np.zeros(n)
        for k in range(n):
            arm = np.where(np.arange(n) < k, LINK, 0.5 * LINK) * (np.arange(n) <= k)
            Jx, Jy = -arm * s, arm * c
            ax, ay = -np.sum(arm * c * w**2), -np.sum(arm * s * w**2)
            M += MASS * (np.outer(Jx, Jx) + np.outer(Jy, Jy))
            M[k, k] += inertia
            f += -MASS * (Jx * ax + Jy * ay) - MASS * g * Jy
        return np.r_[w, np.linalg.solve(M, f)]
    return rhs


def link_angles(q, n_links) -> np.ndarray:
    """Absolute link angles (rad, about Z) from one row of ``Result.q``."""
    return np.array([2 * np.arctan2(q[7 * k + 6], q[7 * k + 3]) for k in range(n_links)])

