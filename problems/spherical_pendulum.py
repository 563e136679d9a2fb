"""Spherical pendulum: a rigid rod on an ideal spherical joint, in a conical motion."""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

G = 9.81


def build(length=0.8, mass=1.2, tilt=0.6, spin=1.0, gravity=G) -> nd.System:
    """Slender rod "rod" (CoM at ``length``/2 from the pivot) hanging from a spherical joint
    "pivot" at the origin, tilted ``tilt`` rad from the downward vertical in the XZ plane and
    given an angular velocity of ``spin`` rad/s about the vertical (global Z): a precessing,
    nodding conical motion. Gravity -Z."""
    s = nd.System(gravity=(0, 0, -gravity))
    half = 0.5 * length
    direction = np.array([np.sin(tilt), 0.0, -np.cos(tilt)])
    # rod frame: first axis along the rod
    x = direction
    y = np.array([0.0, 1.0, 0.0])
    z = np.cross(x, y)
    A = np.column_stack([x, y, z])
    omega_global = np.array([0.0, 0.0, spin])
    rod = s.add_body("rod", mass=mass, inertia=(1e-4, mass * length**2 / 12, mass * length**2 / 12),
                     position=half * direction, orientation=A,
                     velocity=np.cross(omega_global, half * direction),
                     angular_velocity=A.T @ omega_global)
    s.add_joint(nd.Spherical(s.ground, rod, point=(0, 0, 0), name="pivot"))
    return s


def angular_momentum(res, body="rod", **build_args) -> np.ndarray:
    """Angular momentum about the fixed pivot (global), from positions, velocities and
    orientations (numpy): m r x rdot + A J' w', with the mass and inertia of
    ``build(**build_args)``. Shape (n_points, 3)."""
    b = build(**build_args).body(body)
    A = res.rotation(body)
    spin = np.einsum("nij,jk,nk->ni", A, b.inertia, res.angular_velocity(body))
    return b.mass * np.cross(res.position(body), res.velocity(body)) + spin


def vertical_angular_momentum(res, body="rod", **build_args) -> np.ndarray:
    """Z component of :func:`angular_momentum`. Shape (n_points,)."""
    return angular_momentum(res, body, **build_args)[:, 2]


def energy(res, body="rod", gravity=G) -> np.ndarray:
    """Kinetic plus gravitational energy recomputed with numpy from the trajectory."""
    b = build().body(body)
    w = res.angular_velocity(body)
    kinetic = 0.5 * b.mass * np.sum(res.velocity(body) ** 2, axis=1) + \
        0.5 * np.einsum("ni,ij,nj->n", w, b.inertia, w)
    return kinetic + b.mass * gravity * res.position(body)[:, 2]
