"""Spherical pendulum with a range-of-motion cone (CASES.md #7, seed 000 section 4).

Ground + pendulum on an ideal spherical joint "pivot" at the origin, gravity -Z. Joint frame
on the ground: u_xi = (-1, 0, 0), u_eta = (0, 1, 0) (so the cone's axis zeta = (0, 0, -1)
points down); u_r = the pendulum's body y axis, which runs from the pivot through the
centre of mass. Cone: longitudes (0, 90, 135, 180, 270, 315, 360) deg, maximum latitudes
(30, 70, 100, 80, 50, 45, 30) deg, periodic cubic spline; delta_sigma = 11.5 deg,
m_p = 226 N m, j = 3.39 N m s.
*ours*: pendulum 8.5 kg, 0.45 m, centre of mass at mid-length, slender-bar inertia
(m L^2 / 12 transverse; axial that of a 20 mm radius rod); released at rest with u_r at
latitude 80 deg, longitude 135 deg (near horizontal, 20 deg inside the cone; the seed's
Fig. 15 shows a horizontal-ish start); 5 s at h = 1e-3 s.
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

MASS, LENGTH, RADIUS = 8.5, 0.45, 0.02
LONGITUDES = np.radians([0, 90, 135, 180, 270, 315, 360])
MAX_LATITUDES = np.radians([30, 70, 100, 80, 50, 45, 30])
XI, ETA = np.array([-1.0, 0, 0]), np.array([0, 1.0, 0])
ZETA = np.cross(XI, ETA)
REFERENCE = {"delta_sigma": np.radians(11.5), "max_moment": 226.0, "damping": 3.39}
START = (np.radians(135.0), np.radians(80.0))          # (longitude, latitude) of u_r
SWEEPS = {
    "delta_sigma": np.radians([1.5, 6.5, 11.5, 16.5, 21.5]),
    "max_moment": np.array([126.0, 176.0, 226.0, 276.0, 326.0]),
    "damping": np.array([0.1, 1.0, 3.39, 5.0, 10.0]),
}
RUNS = {"no RoM": None, "RoM, j = 0": {"damping": 0.0}, "RoM, j = 3.39": {}}


def start_direction(longitude=START[0], latitude=START[1]) -> np.ndarray:
    """u_r (global) at the given longitude and latitude of the joint frame."""
    u = np.array([np.sin(latitude) * np.cos(longitude), np.sin(latitude) * np.sin(longitude),
                  np.cos(latitude)])
    return u[0] * XI + u[1] * ETA + u[2] * ZETA


def build(rom=True, interpolation="spline", evaluation=None, **parameters) -> nd.System:
    """The pendulum "pendulum"; ``rom``: add the cone "cone" with ``REFERENCE`` parameters
    overridden by ``parameters`` (delta_sigma, max_moment, damping)."""
    s = nd.System(gravity=(0, 0, -9.81))
    y = start_direction()
    x = np.cross(y, [0, 0, 1.0])
    x /= np.linalg.norm(x)
    A = np.column_stack([x, y, np.cross(x, y)])
    transverse = MASS * LENGTH**2 / 12
    pendulum = s.add_body("pendulum", MASS, (transverse, 0.5 * MASS * RADIUS**2, transverse),
                          position=0.5 * LENGTH * y, orientation=A)
    s.add_joint(nd.Spherical(s.ground, pendulum, point=(0, 0, 0), name="pivot"))
    if rom:
        p = {**REFERENCE, **parameters}
        cone = nd.RangeOfMotionCone(s.ground, pendulum, XI, ETA, y, LONGITUDES, MAX_LATITUDES,
                                    p["delta_sigma"], p["max_moment"], p["damping"],
                                    interpolation=interpolation, name="cone")
        if evaluation is not None:
            cone.evaluation = evaluation
        s.add_force(cone)
    return s


def cone_element(system):
    return next(el for el in system.forces if el.name == "cone")


def longitude_latitude(res):
    """(longitude, latitude) of u_r along a run, numpy, shape (n_points,) each."""
    A = res.rotation("pendulum")
    u = A[:, :, 1]                       # body y axis
    x, y, z = u @ XI, u @ ETA, u @ ZETA
    return np.mod(np.arctan2(y, x), 2 * np.pi), np.arctan2(np.hypot(x, y), z)


def run(label_or_parameters="RoM, j = 3.39", t_end=5.0, h=1e-3, progress=False, **options):
    """One run: a label of ``RUNS`` or a dict of cone parameters."""
    params = RUNS.get(label_or_parameters, label_or_parameters) \
        if isinstance(label_or_parameters, str) else label_or_parameters
    system = build(rom=params is not None, **(params or {}))
    return nd.simulate(system, t_end=t_end, h=h, progress=progress, **options)


def sweep(parameter, t_end=2.0, h=1e-3):
    """Seed 000's sweeps (Table 4): ``parameter`` over ``SWEEPS[parameter]``; the first two
    without damping. Returns {value: Result}."""
    base = {} if parameter == "damping" else {"damping": 0.0}
    return {value: run({**base, parameter: value}, t_end=t_end, h=h) for value in SWEEPS[parameter]}


def summary(res, system=None) -> str:
    psi, sigma = longitude_latitude(res)
    cone = cone_element(system or build())
    excess = np.degrees(sigma - cone.max_latitude(psi)).max()
    moment = np.linalg.norm(res.applied_torque("cone", body="pendulum"), axis=1) \
        if "cone" in res.force_elements else np.zeros(1)
    return (f"max latitude beyond the cone {excess:6.2f} deg, max |moment| {moment.max():7.2f} N m, "
            f"energy {res.energy[0]:.4f} -> {res.energy[-1]:.4f} J (max rise "
            f"{np.max(res.energy - res.energy[0]):.2e} J)")
