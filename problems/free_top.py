"""Free asymmetric rigid body (torque-free, no gravity)."""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

INERTIA = (1.0, 2.0, 3.0)


def build(inertia=INERTIA, angular_velocity=(0.4, 3.0, 0.6), orientation=(1, 0, 0, 0)) -> nd.System:
    """Body "top" spinning mostly about its intermediate axis (the tumbling case), with a small
    drift velocity. No joints, no gravity."""
    s = nd.System(gravity=(0, 0, 0))
    s.add_body("top", mass=2.0, inertia=inertia, orientation=orientation,
               velocity=(0.1, -0.2, 0.05), angular_velocity=angular_velocity)
    return s


def angular_momentum_global(res, inertia=INERTIA) -> np.ndarray:
    """A J' w' per output point, shape (n_points, 3)."""
    J = np.diag(inertia)
    return np.einsum("nij,jk,nk->ni", res.rotation("top"), J, res.angular_velocity("top"))


def kinetic_energy(res, inertia=INERTIA, mass=2.0) -> np.ndarray:
    w = res.angular_velocity("top")
    return 0.5 * np.einsum("ni,ij,nj->n", w, np.diag(inertia), w) + \
        0.5 * mass * np.sum(res.velocity("top") ** 2, axis=1)


def reference_rhs(inertia=INERTIA):
    """Right-hand side of Euler's equations with the Euler parameters' kinematics, for scipy:
    x = (body-frame angular velocity, Euler parameters); independent of nlpdyn."""
    J = np.asarray(inertia, dtype=float)

    def rhs(t, x):
        w, p = x[:3], x[3:]
        e0, e = p[0], p[1:]
        skew = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
        return np.r_[-np.cross(w, J * w) / J, 0.5 * np.c_[-e, -skew + e0 * np.eye(3)].T @ w]
    return rhs

