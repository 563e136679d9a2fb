"""IFToMM simple pendulum: 1 kg, 1 m, released horizontal at rest, 10 s (ideal revolute)."""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

G = 9.81


def build(length=1.0, mass=1.0, angle0=0.0, inertia=1e-6, gravity=G) -> nd.System:
    """Pendulum "bob" (mass at distance ``length`` from the pivot, tiny inertia ``inertia``
    about its centre) on a revolute joint "pivot" at the origin about global Y, swinging in
    the XZ plane under gravity -Z. ``angle0`` is the initial angle below the horizontal +X
    axis (rad); released at rest."""
    s = nd.System(gravity=(0, 0, -gravity))
    position = length * np.array([np.cos(angle0), 0.0, -np.sin(angle0)])
    bob = s.add_body("bob", mass=mass, inertia=(inertia, inertia, inertia), position=position)
    s.add_joint(nd.Revolute(s.ground, bob, point=(0, 0, 0), axis=(0, 1, 0), name="pivot"))
    return s


def reference_rhs(length=1.0, mass=1.0, inertia=1e-6, gravity=G):
    """Right-hand side of the 1-DOF ODE in (angle below horizontal, its rate), for scipy.

    (m L^2 + J) theta'' = m g L cos(theta): the point-mass-plus-inertia pendulum.
    """
    inertia_pivot = mass * length**2 + inertia

    def rhs(t, y):
        return [y[1], mass * gravity * length * np.cos(y[0]) / inertia_pivot]
    return rhs


def angle(res) -> np.ndarray:
    """Angle of the bob below the horizontal +X axis from a Result, shape (n_points,)."""
    r = res.position("bob")
    return np.unwrap(np.arctan2(-r[:, 2], r[:, 0]))
