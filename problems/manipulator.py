"""Seed 003 section 3.1: an open-chain 5-DOF manipulator whose end effector traces a rectangle.

The chain (gravity -Z; joint coordinates as in the seed's eq. 27):

- ``J1``: revolute base - ``link1`` (a column) about the vertical, phi_1;
- ``J2``: revolute ``link1`` - ``link2`` (upper arm) at the shoulder, elevation psi_2;
- ``J3``: revolute ``link2`` - ``link3`` (forearm) at the elbow, psi_3 (relative);
- ``J4``: prismatic ``link3`` - ``link4`` (a carriage) along the forearm, x_4;
- ``J5``: prismatic ``link4`` - ``link5`` (the tool) sideways, x_5.

The tool's tip E follows the rectangle ABCD in the plane y(P) z(P) of a frame {P}, one side per
second, each side with the fifth-order polynomial of eq. 28 (zero velocity and acceleration at
the corners), and then rests at A. The programmed constraint ``path`` (eq. 29) holds E on its
programmed point (3 equations) and the tool's x axis perpendicular to z(0) and to y(P)
(2 equations: the tool keeps its orientation). These five equations make the rigid chain
kinematically determined, as the seed's: its joint coordinates follow from the path alone, and
the dynamics gives the joint reactions. The programmed constraint's reaction is the force and
moment that realise the motion at E (the seed eliminates it; here it is
``res.reaction_force("path")``); the ideal joints carry no torque about their axes.

Variants: ``flexible_base`` (the base plate of ``problems/flexible_base.py`` on four
spring-damper supports, seed eqs. 15-16; otherwise the chain stands on the ground, eq. 32),
``flexible_link`` (link (1,2), the upper arm, as rigid finite elements, eqs. 17-18) and
``friction`` (LuGre friction in all five joints, eqs. 19-22).

Data of our own (*ours*: the seed's Tables 1-2 survive only as captions, its geometry only in
figures), SI units, steel links of a small industrial arm:

- base plate 100 kg, 0.8 x 0.6 x 0.05 m, centred at the origin, supports at its four
  mid-plane corners with stiffness (2e5, 2e5, 5e5) N/m and damping (500, 500, 1000) N s/m each;
  J1 on its top face at (0, 0, 0.025);
- link1: column 0.5 m, 12 kg, tube of radius 0.06 m; shoulder at z = 0.525 m;
- link2: 0.6 m round steel tube 40 x 2 mm (E = 210 GPa, G = 80 GPa, rho = 7850 kg/m^3;
  1.125 kg), flexible as 4 rigid finite elements with stiffness damping 1e-3 s;
- link3: forearm 0.5 m, 1.5 kg; link4: carriage 1.0 kg at the forearm's end; link5: tool
  0.5 kg with its centre of mass at (0.05, 0, -0.05) and E at (0.1, 0, -0.1) from the
  carriage (forearm frame);
- {P} = the identity rotation at the origin: the rectangle lies in the vertical plane
  x = 1.1 m, corners (y, z) A (-0.2, 0.5), B (0.2, 0.5), C (0.2, 0.8), D (-0.2, 0.8) m;
- friction (all joints): mu_s = 0.15, mu_k = 0.10, Stribeck velocity 0.01 (rad/s or m/s),
  sigma0 = 1e4, sigma1 = 100, sigma2 = 0.01, journal radius 0.02 m for the revolutes.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

import nlpdyn as nd

from . import flexible_base as support

GRAVITY = 9.81
Z0 = 0.025                      # top of the base plate, where J1 sits
H1, L2, L3 = 0.5, 0.6, 0.5      # column, upper arm, forearm (m)
SHOULDER = np.array([0.0, 0.0, Z0 + H1])
TOOL_COM = np.array([0.05, 0.0, -0.05])     # from the carriage, forearm frame
TOOL_TIP = np.array([0.1, 0.0, -0.1])       # E, from the carriage, forearm frame
MASS = {"link1": 12.0, "link3": 1.5, "link4": 1.0, "link5": 0.5}
STEEL = {"youngs_modulus": 210e9, "shear_modulus": 80e9, "density": 7850.0}
TUBE = (0.040, 0.002)                       # link2: outer diameter, wall (m)
LINK_ELEMENTS = 4
LINK_DAMPING = 1e-3
BASE_STIFFNESS = (2e5, 2e5, 5e5)
BASE_DAMPING = (500.0, 500.0, 1000.0)
FRICTION = {"mu_static": 0.15, "mu_kinetic": 0.10, "stribeck_velocity": 0.01,
            "sigma0": 1e4, "sigma1": 100.0, "sigma2": 0.01}
JOURNAL_RADIUS = 0.02
PLANE_ROTATION = np.eye(3)                  # R(P): columns x(P), y(P), z(P)
PLANE_ORIGIN = np.array([1.1, 0.0, 0.0])
CORNERS = np.array([[-0.2, 0.5], [0.2, 0.5], [0.2, 0.8], [-0.2, 0.8]])   # A B C D in (y, z) of P
SIDE_TIME = 1.0
T_END = 4.0
JOINTS = ("J1", "J2", "J3", "J4", "J5")
VARIANTS = [(base, link, friction) for base in (False, True) for link in (False, True)
            for friction in (False, True)]


def variant_name(flexible_base=False, flexible_link=False, friction=False):
    """The seed's label of a case, e.g. ``S_r_L_fl_J_nf`` (support, link (1,2), joints)."""
    return (f"S_{'fl' if flexible_base else 'r'}_L_{'fl' if flexible_link else 'r'}"
            f"_J_{'f' if friction else 'nf'}")


def friction_available():
    """Whether this nlpdyn has LuGre joint friction (``nd.LuGreFriction``)."""
    return hasattr(nd, "LuGreFriction")


# ---------------------------------------------------------------- the programmed path (eq. 28)
def quintic(tau):
    """Eq. 28 normalised: s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 on tau = (t - t_s) / dt in
    [0, 1] (clamped outside), so s(0) = 0, s(1) = 1 and s', s'' vanish at both ends. Works on
    numbers, numpy arrays and CasADi symbols."""
    if isinstance(tau, (ca.SX, ca.MX, ca.DM)):
        tau = ca.fmin(ca.fmax(tau, 0), 1)
    else:
        tau = np.clip(tau, 0.0, 1.0)
    return tau**3 * (10 - 15 * tau + 6 * tau**2)


def polygon_path(t, corners, side_time=SIDE_TIME):
    """Point of the closed polygon ``corners`` (k x d) at time t: side i from corner i to
    corner i+1 during [i, i+1] * side_time with eq. 28, resting at the first corner after
    the last side. t: a number, a numpy array (then shape (len(t), d)) or a CasADi scalar."""
    corners = np.asarray(corners, dtype=float)
    steps = np.diff(np.vstack([corners, corners[:1]]), axis=0)
    if isinstance(t, (ca.SX, ca.MX)):
        out = ca.DM(corners[0])
        for i, step in enumerate(steps):
            out = out + ca.DM(step) * quintic((t - i * side_time) / side_time)
        return out
    t = np.asarray(t, dtype=float)
    out = corners[0] + sum(np.multiply.outer(quintic((t - i * side_time) / side_time), step)
                           for i, step in enumerate(steps))
    return out


def programmed_point(t):
    """r_E(t) = r_org(P) + R(P) (0, y(t), z(t)) (global), eq. 29's hat r_E; t as in
    ``polygon_path``."""
    yz = polygon_path(t, CORNERS)
    if isinstance(t, (ca.SX, ca.MX)):
        return ca.DM(PLANE_ORIGIN) + ca.DM(PLANE_ROTATION[:, 1:]) @ yz
    return PLANE_ORIGIN + yz @ PLANE_ROTATION[:, 1:].T


# ---------------------------------------------------------------- kinematics of the rigid chain
def inverse_kinematics(point):
    """Joint coordinates (phi_1, psi_2, psi_3, x_4, x_5) of the rigid chain putting E at
    ``point`` (global) with the tool's orientation of the programmed constraint (closed form:
    the forearm stays horizontal and faces x(P))."""
    x, y, z = np.asarray(point, dtype=float) - np.r_[0.0, 0.0, SHOULDER[2]]
    psi2 = np.arcsin((z - TOOL_TIP[2]) / L2)
    return np.array([0.0, psi2, -psi2, x - TOOL_TIP[0] - L3 - L2 * np.cos(psi2), y])


def _frames(q):
    """Positions of the shoulder, elbow and carriage and the rotations of link2 and of the
    forearm for joint coordinates q (rigid chain)."""
    phi, psi2, psi3, x4, x5 = q
    yaw = np.array([[np.cos(phi), -np.sin(phi), 0], [np.sin(phi), np.cos(phi), 0], [0, 0, 1]])

    def pitch(a):        # rotation taking x to (cos a, 0, sin a)
        return np.array([[np.cos(a), 0, -np.sin(a)], [0, 1, 0], [np.sin(a), 0, np.cos(a)]])

    arm, fore = yaw @ pitch(psi2), yaw @ pitch(psi2 + psi3)
    elbow = SHOULDER + arm[:, 0] * L2
    carriage = elbow + fore[:, 0] * (L3 + x4)
    return elbow, carriage, arm, fore, yaw


def forward_kinematics(q):
    """E (global) of the rigid chain at joint coordinates q."""
    _, carriage, _, fore, _ = _frames(q)
    return carriage + fore[:, 1] * q[4] + fore @ TOOL_TIP


def tube_section(outer=TUBE[0], wall=TUBE[1]):
    """Area, second moment and torsion constant of a round tube."""
    inner = outer - 2 * wall
    area = np.pi / 4 * (outer**2 - inner**2)
    second = np.pi / 64 * (outer**4 - inner**4)
    return area, second, 2 * second


def _material(softening=1.0):
    """STEEL with E and G divided by ``softening`` (a softer link of the same mass)."""
    return {**STEEL, "youngs_modulus": STEEL["youngs_modulus"] / softening,
            "shear_modulus": STEEL["shear_modulus"] / softening}


def masses(flexible_link=False):
    """Masses of the chain's links (kg); link2's from its tube section."""
    area, _, _ = tube_section()
    return {"link1": MASS["link1"], "link2": STEEL["density"] * area * L2, **{
        k: MASS[k] for k in ("link3", "link4", "link5")}}


# ---------------------------------------------------------------- the builder
def build(flexible_base=False, flexible_link=False, friction=False,
          link_elements=LINK_ELEMENTS, link_damping=LINK_DAMPING, link_softening=1.0,
          base_stiffness=BASE_STIFFNESS, base_damping=BASE_DAMPING, friction_data=None,
          journal_radius=JOURNAL_RADIUS, path=None) -> nd.System:
    """The manipulator of seed 003 section 3.1 (module docstring; data *ours*).

    Parameters
    ----------
    flexible_base, flexible_link, friction : bool
        The seed's variants: base on spring-damper supports, link (1,2) as rigid finite
        elements, LuGre friction in the joints (needs ``nd.LuGreFriction``).
    link_softening : float
        Divides the flexible link's E and G (a softer link of the same mass, for studies).
    path : callable, optional
        E's programmed position r(t) (global, CasADi in and out); default
        ``programmed_point``, the rectangle. E starts at ``path(0)``.

    Returns
    -------
    System
        Bodies ``link1``, ``link2`` (or ``link2_0`` .. when flexible), ``link3`` .. ``link5``
        (and ``base``); joints ``J1`` .. ``J5``, ``path``; friction elements ``J1_friction`` ..

    Example
    -------
    >>> from problems import manipulator
    >>> s = manipulator.build()
    >>> res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False)
    >>> bool(manipulator.path_error(res).max() < 1e-6)
    True
    """
    if friction and not friction_available():
        raise nd.ModelError(["manipulator: friction=True needs nd.LuGreFriction, which this "
                             "nlpdyn does not have"])
    path = programmed_point if path is None else path
    q0 = inverse_kinematics(np.asarray(ca.DM(path(0.0))).ravel())
    if flexible_base:
        s = support.build(stiffness=base_stiffness, damping=base_damping,
                          gravity=GRAVITY)
        base = s.body("base")
    else:
        s = nd.System(gravity=(0, 0, -GRAVITY))
        base = s.ground
    elbow, carriage, arm, fore, yaw = _frames(q0)
    m = masses()
    r1 = 0.06
    link1 = s.add_body("link1", m["link1"],
                       (m["link1"] * (3 * r1**2 + H1**2) / 12,) * 2 + (m["link1"] * r1**2 / 2,),
                       position=(0, 0, Z0 + H1 / 2), orientation=yaw)
    area, second, torsion = tube_section()
    if flexible_link:
        arm_bodies = nd.add_flexible_link(s, "link2_", SHOULDER, elbow, link_elements, area=area,
                                          second_moments=(second, second),
                                          torsion_constant=torsion,
                                          stiffness_damping=link_damping,
                                          y_axis=arm[:, 1], **_material(link_softening))
    else:
        r2 = TUBE[0] / 2
        arm_bodies = [s.add_body("link2", m["link2"],
                                 (m["link2"] * r2**2, m["link2"] * L2**2 / 12,
                                  m["link2"] * L2**2 / 12),
                                 position=(SHOULDER + elbow) / 2, orientation=arm)]
    bending3 = m["link3"] * L3**2 / 12
    link3 = s.add_body("link3", m["link3"], (3e-4, bending3, bending3),
                       position=elbow + fore[:, 0] * L3 / 2, orientation=fore)
    link4 = s.add_body("link4", m["link4"], (1.7e-3,) * 3, position=carriage, orientation=fore)
    tool = carriage + fore[:, 1] * q0[4]
    link5 = s.add_body("link5", m["link5"], (1e-3,) * 3, position=tool + fore @ TOOL_COM,
                       orientation=fore)
    joints = [nd.Revolute(base, link1, (0, 0, Z0), axis=yaw[:, 2], name="J1"),
              nd.Revolute(link1, arm_bodies[0], SHOULDER, axis=arm[:, 1], name="J2"),
              nd.Revolute(arm_bodies[-1], link3, elbow, axis=fore[:, 1], name="J3"),
              nd.Prismatic(link3, link4, carriage, axis=fore[:, 0], name="J4"),
              nd.Prismatic(link4, link5, tool, axis=fore[:, 1], name="J5")]
    for joint in joints:
        s.add_joint(joint)
    tip, x_tool = tool + fore @ TOOL_TIP, fore[:, 0]

    def equations(t, state):
        axis = state.vector(x_tool)
        return ca.vertcat(state.point(tip) - path(t), ca.dot(axis, ca.DM([0, 0, 1])),
                          ca.dot(axis, ca.DM(PLANE_ROTATION[:, 1])))
    s.add_joint(nd.Programmed([link5], equations, name="path", point=tip))
    if friction:
        data = {**FRICTION, **(friction_data or {})}
        for joint in joints:
            radius = journal_radius if isinstance(joint, nd.Revolute) else None
            s.add_force(nd.LuGreFriction(joint, radius=radius, name=f"{joint.name}_friction",
                                         **data))
    return s


# ---------------------------------------------------------------- outputs of a run
def _chain(res):
    names = res.body_names
    arm = sorted((n for n in names if n.startswith("link2")), key=lambda n: (len(n), n))
    return ("base" if "base" in names else None), arm


def _rotations(res, name):
    if name is None:
        return np.broadcast_to(np.eye(3), (len(res.t), 3, 3))
    return res.rotation(name)


def joint_coordinates(res):
    """Joint coordinates (phi_1, psi_2, psi_3 in rad; x_4, x_5 in m) at every output time,
    measured from the bodies' poses (so with a flexible base or link too): shape (n, 5)."""
    base, arm = _chain(res)
    R0, R1 = _rotations(res, base), res.rotation("link1")
    Ra, Rb, R3 = res.rotation(arm[0]), res.rotation(arm[-1]), res.rotation("link3")
    rel1 = np.einsum("nji,njk->nik", R0, R1)
    rel2 = np.einsum("nji,njk->nik", R1, Ra)
    rel3 = np.einsum("nji,njk->nik", Rb, R3)
    r3, r4, r5 = res.position("link3"), res.position("link4"), res.position("link5")
    R4 = res.rotation("link4")
    x4 = np.einsum("ni,ni->n", r4 - r3, R3[:, :, 0]) - L3 / 2
    x5 = np.einsum("ni,ni->n", r5 - r4, R4[:, :, 1]) - TOOL_COM[1]
    return np.column_stack([np.arctan2(rel1[:, 1, 0], rel1[:, 0, 0]),
                            np.arctan2(rel2[:, 2, 0], rel2[:, 0, 0]),
                            np.arctan2(rel3[:, 2, 0], rel3[:, 0, 0]), x4, x5])


def end_effector(res):
    """E (global) at every output time, shape (n, 3)."""
    return res.position("link5") + res.rotation("link5") @ (TOOL_TIP - TOOL_COM)


def path_error(res):
    """|E - programmed E| (m) at every output time, shape (n,)."""
    return np.linalg.norm(end_effector(res) - programmed_point(res.t), axis=1)


def joint_axes(res):
    """Each joint's axis (global, on its child) at the output times after the first:
    {joint: (n - 1, 3)}."""
    _, arm = _chain(res)
    R = {k: res.rotation(k)[1:] for k in ("link1", arm[0], "link3", "link4", "link5")}
    return {"J1": R["link1"][:, :, 2], "J2": R[arm[0]][:, :, 1], "J3": R["link3"][:, :, 1],
            "J4": R["link4"][:, :, 0], "J5": R["link5"][:, :, 1]}


def joint_forces(res, axes=None):
    """Joint reaction forces on each joint's child split along its axis: {joint: (axial,
    normal)}, axial signed, normal the magnitude perpendicular to the axis (N), each shape
    (n - 1,), aligned with ``res.t[1:]``."""
    axes = joint_axes(res) if axes is None else axes
    out = {}
    for name, axis in axes.items():
        force = res.reaction_force(name)
        axial = np.einsum("ni,ni->n", force, axis)
        out[name] = (axial, np.linalg.norm(force - axial[:, None] * axis, axis=1))
    return out


def force_magnitudes(forces):
    """|F| of every joint from {joint: (axial, normal)} (``joint_forces``): (n - 1, joints)."""
    return np.column_stack([np.hypot(axial, normal) for axial, normal in forces.values()])


def rms(values, t):
    """Eq. 34: sqrt(1/t_k int F^2 dt) of per-step values aligned with t[1:] (each held over
    its step)."""
    h = np.diff(np.asarray(t, dtype=float))
    return float(np.sqrt(np.sum(np.asarray(values)**2 * h) / np.sum(h)))


def joint_force_rms(res, forces=None):
    """{joint: (RMS axial, RMS normal)} (N) over the run (eq. 34)."""
    forces = joint_forces(res) if forces is None else forces
    return {name: (rms(a, res.t), rms(n, res.t)) for name, (a, n) in forces.items()}


def link_deflection(res, prefix="link2"):
    """Largest distance (m) of the centres of the elements of the flexible link whose bodies
    start with ``prefix`` from the line through its end elements' centres, at every output
    time (zeros for a rigid link)."""
    names = sorted((n for n in res.body_names if n.startswith(prefix)), key=lambda n: (len(n), n))
    out = np.zeros(len(res.t))
    if len(names) < 3:
        return out
    first, last = res.position(names[0]), res.position(names[-1])
    axis = (last - first) / np.linalg.norm(last - first, axis=1)[:, None]
    for name in names[1:-1]:
        rel = res.position(name) - first
        off = rel - np.einsum("ni,ni->n", rel, axis)[:, None] * axis
        out = np.maximum(out, np.linalg.norm(off, axis=1))
    return out


def ledger_closure(res):
    """The largest |total - total[0] - works - residual| of the run's energy ledger over its
    energy scale (round-off when the ledger closes), and the ledger."""
    ledger = res.energy_ledger()
    works = [c for c in ledger.columns if c.split(":")[0] in ("work", "impact", "contact")]
    closure = ledger.total - ledger.total[0] - ledger[works].sum(axis=1) - ledger.residual
    return float(np.abs(closure).max() / (1.0 + np.abs(ledger.total).max())), ledger


def rms_bars(axes, rms_by_variant, joints):
    """Bar charts of {variant: {joint: (RMS axial, RMS normal)}} on two matplotlib axes."""
    width = 0.8 / len(rms_by_variant)
    for i, (name, values) in enumerate(rms_by_variant.items()):
        x = np.arange(len(joints)) + i * width
        for k, ax in enumerate(axes):
            ax.bar(x, [values[j][k] for j in joints], width, label=name)
    for ax, title in zip(axes, ("RMS axial [N]", "RMS normal [N]")):
        ax.set_xticks(np.arange(len(joints)) + 0.4 - width / 2, joints)
        ax.set(title=title)


def difference_panels(axes, series, reference, titles, difference_titles, scale=1.0):
    """Small multiples for variants that lie on top of each other (seed 003 Figs. 9, 10, 18):
    per quantity k, the ``reference`` run's time course on ``axes[0, k]`` and every other
    variant minus it on ``axes[1, k]`` (times ``scale``, a number or one per quantity).

    ``series`` is {variant: (t, values (n, k))} in the order of the notebook's other plots
    (the colours follow it); runs that stopped early are compared over their common times.
    """
    t_ref, ref = series[reference]
    scales = np.broadcast_to(np.asarray(scale, dtype=float), (len(titles),))
    for k, (title, difference) in enumerate(zip(titles, difference_titles)):
        for i, (name, (t, values)) in enumerate(series.items()):
            if name == reference:
                axes[0, k].plot(t, values[:, k], color=f"C{i}", label=name)
                continue
            n = min(len(t), len(t_ref))
            axes[1, k].plot(t[:n], scales[k] * (values[:n, k] - ref[:n, k]), color=f"C{i}",
                            lw=0.9, label=name)
        axes[0, k].set(title=title)
        axes[0, k].ticklabel_format(axis="y", useOffset=False)
        axes[1, k].set(xlabel="t [s]", title=difference)
    axes[0, 0].legend(fontsize=6)
    axes[1, 0].legend(fontsize=6)


def constraint_violation(res):
    """Largest |Phi(q, t)| of all joints and the programmed constraint at the end of every
    step (aligned with ``res.t[1:]``)."""
    return np.asarray(res.stats.constraint_violation)


def run(flexible_base=False, flexible_link=False, friction=False, t_end=T_END, h=1e-3,
        **options):
    """Build a variant and simulate it at a fixed step ``h``."""
    system = build(flexible_base, flexible_link, friction)
    return nd.simulate(system, t_end=t_end, h=h, progress=False, **options)
