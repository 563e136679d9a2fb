"""A flexibly supported base (seed 003, section 2.2.3, eqs. 15-16): a 6-DOF rigid base on
spring-damping elements with diagonal stiffness and damping along x, y, z.

Each support j is a point E_j of the base joined to the ground by an element whose
deformation is the displacement of E_j from where it starts, d_j = r_Ej - r_Ej0, with
S_j = diag(s_x, s_y, s_z) and D_j = diag(d_x, d_y, d_z) (a translational bushing, evaluated
at the end of the step). The seed linearises the base's rotation in d_j; the bushing does not.
Data of our own (the seed's Table 2 did not survive): a 100 kg steel plate, 0.8 x 0.6 x 0.05 m,
on four corner supports in the plane of its centre of mass, so that its vertical, horizontal,
rocking and yaw motions have closed-form frequencies (``frequencies``).
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

MASS = 100.0
SIZE = (0.8, 0.6, 0.05)
STIFFNESS = (2e5, 2e5, 5e5)     # N/m per support, along x, y, z
DAMPING = (0.0, 0.0, 0.0)       # N s/m per support


def inertia(mass=MASS, size=SIZE):
    a, b, c = size
    return (mass * (b**2 + c**2) / 12, mass * (a**2 + c**2) / 12, mass * (a**2 + b**2) / 12)


def support_points(size=SIZE):
    """The four corners of the base's mid-plane (global, the base centred at the origin)."""
    a, b, _ = size
    return [(sx * a / 2, sy * b / 2, 0.0) for sx in (-1, 1) for sy in (-1, 1)]


def build(mass=MASS, size=SIZE, stiffness=STIFFNESS, damping=DAMPING, points=None,
          gravity=9.81, velocity=(0, 0, 0), angular_velocity=(0, 0, 0)) -> nd.System:
    """Body "base" at the origin on supports "support0".."support{n-1}" (bushings from the
    ground) at ``points`` (default: the four mid-plane corners), gravity -Z."""
    s = nd.System(gravity=(0, 0, -gravity))
    base = s.add_body("base", mass, inertia(mass, size), velocity=velocity,
                      angular_velocity=angular_velocity)
    for j, point in enumerate(support_points(size) if points is None else points):
        element = nd.Bushing(s.ground, base, point, stiffness=tuple(stiffness),
                             damping=tuple(damping), name=f"support{j}")
        element.evaluation = "implicit"
        s.add_force(element)
    return s


def frequencies(mass=MASS, size=SIZE, stiffness=STIFFNESS, points=None):
    """Natural frequencies (rad/s) of small motions about the static equilibrium, for
    supports in the plane of the centre of mass (the motions then decouple): vertical,
    horizontal x, y, rocking about x, y, and yaw."""
    p = np.array(support_points(size) if points is None else points, dtype=float)
    kx, ky, kz = stiffness
    n = len(p)
    Jx, Jy, Jz = inertia(mass, size)
    return {"z": np.sqrt(n * kz / mass), "x": np.sqrt(n * kx / mass), "y": np.sqrt(n * ky / mass),
            "rock_x": np.sqrt(kz * np.sum(p[:, 1]**2) / Jx),
            "rock_y": np.sqrt(kz * np.sum(p[:, 0]**2) / Jy),
            "yaw": np.sqrt((kx * np.sum(p[:, 1]**2) + ky * np.sum(p[:, 0]**2)) / Jz)}
