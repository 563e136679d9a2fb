"""Seed 003 section 3.2: the RPSUP closed loop whose end effector E traces a rectangle in a
vertical plane turned 45 degrees about Z.

The loop (gravity -Z; frame {P} of eq. 35: R(P) the rotation by alpha = 45 deg about Z, origin
r_org = (0.0384, 0.2335, 0) m as in the seed):

- ``R``: revolute base - ``link1`` (an arm) at r_org about x(P), angle psi;
- ``P_arm``: prismatic ``link1`` - ``link2`` (a telescopic rod) along the arm, extension x;
  E is the rod's tip, so E stays in the plane y(P) z(P);
- ``S``: spherical ``link2`` - ``link3`` (the coupler) at E;
- ``U``: universal ``link3`` - ``link4`` (a slider) at the coupler's lower end;
- ``P_slider``: prismatic base - ``link4`` along Z, at (0.15, 0.22, .) m in {P}, height z.

Its mobility is 2; the programmed constraint ``path`` holds E's y(P) and z(P) coordinates on the
rectangle ABCD (one side per second, eq. 28), so the rigid loop is kinematically determined.
The seed's cut joint is ``U`` here (every joint is a constraint in nlpdyn; the loop closure's
violation is that of all joints, ``res.stats.constraint_violation``).

Variants: ``flexible_base`` (a base plate on four spring-damper supports,
``problems/flexible_base.py``), ``flexible_link`` (the coupler as rigid finite elements) and
``friction`` (LuGre friction in R and both prismatic joints; the seed's spherical and universal
joints have none).

Data of our own (*ours*: the seed's Tables 2-3 survive only as captions), SI units:

- corners (y, z) in {P}: A (0.15, 0.10), B (0.30, 0.10), C (0.30, 0.20), D (0.15, 0.20);
- link1: 0.15 m, 0.4 kg; link2: 0.2 m, 0.3 kg (E at its tip); link4 (slider): 0.3 kg;
- link3 (coupler): 0.35 m round steel bar of 8 mm (E = 210 GPa, G = 80 GPa,
  rho = 7850 kg/m^3: 0.138 kg), flexible as 4 rigid finite elements, stiffness damping 1e-3 s;
- base plate 10 kg, 0.5 x 0.5 x 0.02 m, supports (2e4, 2e4, 5e4) N/m and (50, 50, 100) N s/m;
- friction: as the manipulator's (``problems.manipulator.FRICTION``), journal radius 0.01 m.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

import nlpdyn as nd

from . import flexible_base as support
from .manipulator import (FRICTION, STEEL, _material, friction_available,  # noqa: F401
                          link_deflection, polygon_path, rms, variant_name)

GRAVITY = 9.81
ALPHA = np.pi / 4
PLANE_ROTATION = np.array([[np.cos(ALPHA), -np.sin(ALPHA), 0.0],
                           [np.sin(ALPHA), np.cos(ALPHA), 0.0], [0.0, 0.0, 1.0]])
PLANE_ORIGIN = np.array([0.0384, 0.2335, 0.0])
CORNERS = np.array([[0.15, 0.10], [0.30, 0.10], [0.30, 0.20], [0.15, 0.20]])
GUIDE = np.array([0.15, 0.22])          # the slider's vertical guide, (x, y) in {P}
L1, L2, LC = 0.15, 0.2, 0.35
MASS = {"link1": 0.4, "link2": 0.3, "link4": 0.3}
BAR = 0.008
LINK_ELEMENTS = 4
LINK_DAMPING = 1e-3
BASE = {"mass": 10.0, "size": (0.5, 0.5, 0.02), "stiffness": (2e4, 2e4, 5e4),
        "damping": (50.0, 50.0, 100.0)}
JOURNAL_RADIUS = 0.01
T_END = 4.0
JOINTS = ("R", "P_arm", "S", "U", "P_slider")
VARIANTS = [(base, link, friction) for base in (False, True) for link in (False, True)
            for friction in (False, True)]


def in_plane(y, z):
    """Global point of {P} coordinates (0, y, z)."""
    return PLANE_ORIGIN + PLANE_ROTATION[:, 1] * y + PLANE_ROTATION[:, 2] * z


def programmed_point(t):
    """E's programmed position (global), t a number, an array (then (n, 3)) or CasADi."""
    yz = polygon_path(t, CORNERS)
    if isinstance(t, (ca.SX, ca.MX)):
        return ca.DM(PLANE_ORIGIN) + ca.DM(PLANE_ROTATION[:, 1:]) @ yz
    return PLANE_ORIGIN + yz @ PLANE_ROTATION[:, 1:].T


def guide_point(z=0.0):
    return PLANE_ORIGIN + PLANE_ROTATION[:, 0] * GUIDE[0] + PLANE_ROTATION[:, 1] * GUIDE[1] + \
        np.array([0.0, 0.0, z])


def inverse_kinematics(y, z):
    """(psi, x, z_slider) putting E at {P} coordinates (y, z): x is the rod's extension
    beyond L1, z_slider the height of the universal joint (coupler below E)."""
    e = in_plane(y, z)
    horizontal = np.linalg.norm((e - guide_point())[:2])
    return np.array([np.arctan2(z, y), np.hypot(y, z) - L1,
                     e[2] - np.sqrt(LC**2 - horizontal**2)])


def bar_section(d=BAR):
    area, second = np.pi * d**2 / 4, np.pi * d**4 / 64
    return area, second, 2 * second


def masses():
    return {**MASS, "link3": STEEL["density"] * bar_section()[0] * LC}


def _frame(x, y_hint):
    x = x / np.linalg.norm(x)
    y = y_hint - (y_hint @ x) * x
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def build(flexible_base=False, flexible_link=False, friction=False, path=None,
          link_elements=LINK_ELEMENTS, link_damping=LINK_DAMPING, link_softening=1.0,
          base=None, friction_data=None, journal_radius=JOURNAL_RADIUS) -> nd.System:
    """The RPSUP loop of seed 003 section 3.2 (module docstring; data *ours*).

    Parameters
    ----------
    flexible_base, flexible_link, friction : bool
        Base on spring-damper supports, the coupler as rigid finite elements, LuGre friction
        in R, P_arm and P_slider (needs ``nd.LuGreFriction``).
    link_softening : float
        Divides the coupler's E and G (a softer coupler of the same mass, for studies).
    path : callable, optional
        E's programmed (y, z) in {P} as a function of t (CasADi in, 2-vector out); default
        the rectangle. E starts at ``path(0)``.

    Returns
    -------
    System
        Bodies ``link1``, ``link2``, ``link3`` (or ``link3_0`` ..), ``link4`` (and ``base``);
        joints ``R``, ``P_arm``, ``S``, ``U``, ``P_slider``, ``path``.

    Example
    -------
    >>> from problems import rpsup
    >>> res = nd.simulate(rpsup.build(), t_end=0.01, h=1e-3, progress=False)
    >>> bool(rpsup.path_error(res).max() < 1e-6)
    True
    """
    if friction and not friction_available():
        raise nd.ModelError(["rpsup: friction=True needs nd.LuGreFriction, which this nlpdyn "
                             "does not have"])
    path = (lambda t: polygon_path(t, CORNERS)) if path is None else path
    y0, z0 = np.asarray(ca.DM(path(0.0))).ravel()
    psi, x, zs = inverse_kinematics(y0, z0)
    if flexible_base:
        data = {**BASE, **(base or {})}
        s = support.build(gravity=GRAVITY, **data)
        ground = s.body("base")
    else:
        s = nd.System(gravity=(0, 0, -GRAVITY))
        ground = s.ground
    normal = PLANE_ROTATION[:, 0]
    d = np.cos(psi) * PLANE_ROTATION[:, 1] + np.sin(psi) * PLANE_ROTATION[:, 2]
    arm = _frame(d, normal)
    e = PLANE_ORIGIN + (L1 + x) * d
    q = guide_point(zs)
    mass = masses()
    link1 = s.add_body("link1", mass["link1"], (1e-5, mass["link1"] * L1**2 / 12,
                                                mass["link1"] * L1**2 / 12),
                       position=PLANE_ORIGIN + d * L1 / 2, orientation=arm)
    link2 = s.add_body("link2", mass["link2"], (1e-5, mass["link2"] * L2**2 / 12,
                                                mass["link2"] * L2**2 / 12),
                       position=e - d * L2 / 2, orientation=arm)
    c = (q - e) / LC
    coupler_frame = _frame(c, np.cross(c, np.array([0.0, 0.0, 1.0])))
    area, second, torsion = bar_section()
    if flexible_link:
        coupler = nd.add_flexible_link(s, "link3_", e, q, link_elements, area=area,
                                       second_moments=(second, second),
                                       torsion_constant=torsion, stiffness_damping=link_damping,
                                       y_axis=coupler_frame[:, 1],
                                       **_material(link_softening))
    else:
        m3 = mass["link3"]
        coupler = [s.add_body("link3", m3, (m3 * BAR**2 / 8, m3 * LC**2 / 12, m3 * LC**2 / 12),
                              position=(e + q) / 2, orientation=coupler_frame)]
    slider = s.add_body("link4", mass["link4"], (1e-4,) * 3, position=q)
    axis1 = coupler_frame[:, 1]                     # horizontal, across the coupler
    joints = [nd.Revolute(ground, link1, PLANE_ORIGIN, axis=normal, name="R"),
              nd.Prismatic(link1, link2, e, axis=d, name="P_arm"),
              nd.Spherical(link2, coupler[0], e, name="S"),
              nd.Universal(coupler[-1], slider, q, axis1=coupler_frame[:, 2], axis2=axis1,
                           name="U"),
              nd.Prismatic(ground, slider, q, axis=(0, 0, 1), name="P_slider")]
    for joint in joints:
        s.add_joint(joint)
    axes = ca.DM(PLANE_ROTATION[:, 1:])

    def equations(t, state):
        return axes.T @ (state.point(e) - ca.DM(PLANE_ORIGIN)) - path(t)
    s.add_joint(nd.Programmed([link2], equations, name="path", point=e))
    if friction:
        data = {**FRICTION, **(friction_data or {})}
        for joint in (joints[0], joints[1], joints[4]):
            radius = journal_radius if isinstance(joint, nd.Revolute) else None
            s.add_force(nd.LuGreFriction(joint, radius=radius, name=f"{joint.name}_friction",
                                         **data))
    return s


# ---------------------------------------------------------------- outputs of a run
def _coupler(res):
    names = [n for n in res.body_names if n.startswith("link3")]
    return sorted(names, key=lambda n: (len(n), n))


def end_effector(res):
    """E (global), shape (n, 3)."""
    return res.position("link2") + res.rotation("link2")[:, :, 0] * (L2 / 2)


def path_error(res):
    """Error of the programmed coordinates: |(y, z) of E in {P} - programmed (y, z)| (m),
    shape (n,)."""
    rel = (end_effector(res) - PLANE_ORIGIN) @ PLANE_ROTATION[:, 1:]
    return np.linalg.norm(rel - polygon_path(res.t, CORNERS), axis=1)


def out_of_plane(res):
    """E's distance from the plane y(P) z(P) (m), shape (n,): zero on a rigid base, where the
    revolute R keeps E in the plane; the flexible base tilts the plane of R."""
    return (end_effector(res) - PLANE_ORIGIN) @ PLANE_ROTATION[:, 0]


def joint_coordinates(res):
    """(psi in rad, x and z_slider in m) at every output time, shape (n, 3)."""
    base = "base" if "base" in res.body_names else None
    R1 = res.rotation("link1")
    if base is not None:
        R0 = res.rotation(base)
        rel = np.einsum("nji,njk->nik", R0, R1)
        lift = res.position("link4") - res.position(base)
        lift = np.einsum("nji,nj->ni", R0, lift)[:, 2]
    else:
        rel, lift = R1, res.position("link4")[:, 2]
    d = rel[:, :, 0]
    local = d @ PLANE_ROTATION                     # d in {P}: (0, cos psi, sin psi)
    x = np.einsum("ni,ni->n", res.position("link2") - res.position("link1"),
                  R1[:, :, 0]) + L2 / 2 - L1 / 2
    return np.column_stack([np.arctan2(local[:, 2], local[:, 1]), x, lift])


def joint_axes(res):
    """{joint: axis (global) at t[1:]}: R about the plane's normal, the prismatic joints along
    their slides, S and U along the coupler at their ends."""
    coupler = _coupler(res)
    return {"R": res.rotation("link1")[1:, :, 2], "P_arm": res.rotation("link2")[1:, :, 0],
            "S": res.rotation(coupler[0])[1:, :, 0], "U": res.rotation(coupler[-1])[1:, :, 0],
            "P_slider": res.rotation("link4")[1:, :, 2]}


def joint_forces(res):
    """{joint: (axial, normal)} reaction on each joint's child split along ``joint_axes``."""
    from .manipulator import joint_forces as split
    return split(res, joint_axes(res))


def joint_force_rms(res):
    """{joint: (RMS axial, RMS normal)} (N), eq. 34."""
    return {name: (rms(a, res.t), rms(n, res.t)) for name, (a, n) in joint_forces(res).items()}


def coupler_deflection(res):
    """Largest distance (m) of the coupler's element centres from the line through its end
    elements' centres, at every output time (zeros for the rigid coupler)."""
    return link_deflection(res, "link3")


def constraint_violation(res):
    """Largest |Phi| of the joints (loop closure included) and the path, per step."""
    return np.asarray(res.stats.constraint_violation)


def run(flexible_base=False, flexible_link=False, friction=False, t_end=T_END, h=1e-3,
        **options):
    return nd.simulate(build(flexible_base, flexible_link, friction), t_end=t_end, h=h,
                       progress=False, **options)


__all__ = ["build", "run", "variant_name", "joint_coordinates", "joint_forces",
           "joint_force_rms", "path_error", "out_of_plane", "coupler_deflection",
           "constraint_violation"]
