"""Revolute clearance pendulum (docs/CASES.md #3 and #4, seed 002 Figs. 8 and 31).

A bar hangs on a fixed pin (axis global Z through the origin) of radius R with radial
clearance c and axial clearance c_a; its centre of mass sits cm_x along the bar and cm_z out
of plane (to excite Z motion). Released from horizontal at rest, gravity -Y.
*ours*: R = 10 mm, c = c_a = 0.1 mm, bore length 20 mm, m = 1 kg, cm_x = 0.5 m,
cm_z = 0.05 m, inertia of a 1 m bar of radius 20 mm, t_end = 2 s, h in [1e-3, 2e-3].

References computed without nlpdyn: ``planar_reference`` (the planar bar, cm_z = 0, as an
event-driven rigid-body model with scipy), ``impact_energy_closed_form``, the steady
rotation of ``build_spinning`` and the wheel rocking in its bore (``build_rocking_wheel``,
``rocking_reference``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import nlpdyn as nd


def build(radius=0.01, clearance=1e-4, axial_clearance=1e-4, bore_length=0.02, mass=1.0,
          cm_x=0.5, cm_z=0.05, bar_length=1.0, bar_radius=0.02, ideal=False,
          start_centred=True, friction=0.0) -> nd.System:
    """Body "bar" on joint "pin" (``ideal=True``: an ideal Revolute about Z; ``friction``: the
    clearance contacts' Coulomb coefficient).

    ``start_centred``: the bore starts centred on the pin (the bar first falls through the
    clearance onto it); otherwise it starts resting on the pin (bore centre c below the pin
    axis, the bar lowered with it).
    """
    s = nd.System(gravity=(0, -9.81, 0))
    axial = 0.5 * mass * bar_radius**2
    transverse = mass * (3 * bar_radius**2 + bar_length**2) / 12
    offset = np.zeros(3) if (start_centred or ideal) else np.array([0, -clearance, 0])
    bar = s.add_body("bar", mass=mass, inertia=(axial, transverse, transverse),
                     position=np.array([cm_x, 0.0, cm_z]) + offset)
    if ideal:
        s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 0, 1), name="pin"))
    else:
        s.add_joint(nd.RevoluteClearance(s.ground, bar, point=(0, 0, 0), axis=(0, 0, 1),
                                         radius=radius, clearance=clearance, length=bore_length,
                                         axial_clearance=axial_clearance, name="pin",
                                         offset=offset, friction=friction))
    return s


def turning_point_energy(res):
    """Energy change since the start at the swing's turning points (angular velocity about
    the pin changes sign while the bar is in the upper half of its swing, which ignores the
    tiny reversals of the first impact). Returns (energy changes, times)."""
    w = res.angular_velocity("bar", frame="global")[:, 2]
    pe = res.potential_energy
    high = pe > 0.5 * (pe.max() + pe.min())
    idx = np.where((np.sign(w[1:]) * np.sign(w[:-1]) < 0) & high[1:])[0] + 1
    return res.energy[idx] - res.energy[0], res.t[idx]


def impact_energy_closed_form(clearance=1e-4, mass=1.0, cm_x=0.5, bar_length=1.0,
                              bar_radius=0.02, gravity=9.81):
    """Energy a plastic impact on the pin takes from the bar after it falls through the
    clearance: m g c J / (J + m r^2) (angular momentum about the contact is conserved)."""
    J = mass * (3 * bar_radius**2 + bar_length**2) / 12
    return mass * gravity * clearance * J / (J + mass * cm_x**2)


def build_spinning(omega=10.0, clearance=1e-4, radius=0.01, bore_length=0.02, mass=1.0,
                   cm_x=0.5, bar_length=1.0, bar_radius=0.02) -> nd.System:
    """The bar spinning about the pin at ``omega`` (rad/s) without gravity, its bore pressed
    outward against the pin: a steady rotation in sustained frictionless contact. Exact
    solution: the rotation stays uniform, the energy constant and the contact force
    m omega^2 (cm_x + clearance) (``spinning_contact_force``)."""
    s = nd.System(gravity=(0, 0, 0))
    offset = np.array([clearance, 0.0, 0.0])
    bar = s.add_body("bar", mass=mass,
                     inertia=(0.5 * mass * bar_radius**2, *(2 * [mass * (3 * bar_radius**2 + bar_length**2) / 12])),
                     position=np.array([cm_x, 0.0, 0.0]) + offset,
                     velocity=(0.0, omega * (cm_x + clearance), 0.0), angular_velocity=(0, 0, omega))
    s.add_joint(nd.RevoluteClearance(s.ground, bar, point=(0, 0, 0), axis=(0, 0, 1), radius=radius,
                                     clearance=clearance, length=bore_length,
                                     axial_clearance=clearance, name="pin", offset=offset))
    return s


def spinning_contact_force(omega=10.0, clearance=1e-4, mass=1.0, cm_x=0.5):
    return mass * omega**2 * (cm_x + clearance)


def build_rocking_wheel(angle=np.radians(11.3), friction=0.0, spin=0.0, clearance=5e-4,
                        radius=0.02, length=0.03, axial_clearance=1e-3, mass=10.0,
                        inertia=(0.05, 0.03, 0.03), gravity=9.81) -> nd.System:
    """A wheel ("wheel") on a fixed pin (axis global X through the origin, joint "bearing")
    with radial clearance, its bore centre started ``angle`` (rad) up the clearance circle at
    rest, spinning at ``spin`` (rad/s, about X); gravity -Z. The bore rocks in sustained
    contact like a pendulum of length c (frictionless: period 2 pi sqrt(c / g) for small
    angles, 45 ms at c = 0.5 mm); with ``friction`` and spin it rocks about the friction
    angle. Exact motion: ``rocking_reference``."""
    s = nd.System(gravity=(0, 0, -gravity))
    offset = clearance * np.array([0.0, np.sin(angle), -np.cos(angle)])
    wheel = s.add_body("wheel", mass, inertia, position=offset, angular_velocity=(spin, 0, 0))
    s.add_joint(nd.RevoluteClearance(s.ground, wheel, (0, 0, 0), (1, 0, 0), radius, clearance,
                                     length, axial_clearance, name="bearing", offset=offset,
                                     friction=friction))
    return s


def rocking_angle(res) -> np.ndarray:
    """The wheel's bore centre on its clearance circle (rad, 0 straight below the pin)."""
    r = res.position("wheel")
    return np.arctan2(r[:, 1], -r[:, 2])


def rocking_reference(t, angle=np.radians(11.3), friction=0.0, spin=0.0, clearance=5e-4,
                      radius=0.02, gravity=9.81) -> np.ndarray:
    """The bore centre's angle at times ``t`` for ``build_rocking_wheel``, by scipy
    (rtol 1e-12): a point on a circle of radius c in contact throughout (the frictionless
    contact force passes through the wheel's centre, so the wheel does not turn),
    c theta'' = -g sin(theta) - sign(c theta' - spin R) mu (g cos(theta) + c theta'^2),
    the friction opposing the bore's slip on the pin. The slip is taken to keep its sign
    (the spin's share, spin R, exceeds c theta'; checked)."""
    from scipy.integrate import solve_ivp
    c = clearance

    def rhs(_, y):
        theta, rate = y
        slip = np.sign(c * rate - spin * radius) if friction else 0.0
        normal = gravity * np.cos(theta) + c * rate**2
        return [rate, (-gravity * np.sin(theta) - slip * friction * normal) / c]

    t = np.asarray(t, dtype=float)
    sol = solve_ivp(rhs, (0.0, float(t.max())), [angle, 0.0], rtol=1e-12, atol=1e-14,
                    dense_output=True)
    theta, rate = sol.sol(t)
    if friction and not np.all(np.sign(c * rate - spin * radius) == np.sign(-spin * radius)):
        raise ValueError("the slip changes sign: the reference does not hold")
    return theta


@dataclass
class PlanarReference:
    """The planar bar's exact motion (rigid, frictionless, perfectly plastic impacts)."""

    energy_start: float
    impacts: list = field(default_factory=list)          # (t, energy lost)
    phases: list = field(default_factory=list)           # solve_ivp solutions, in order
    turning_point: tuple = (np.nan, np.nan)              # (t, energy change) at the first


def planar_reference(clearance=1e-4, mass=1.0, cm_x=0.5, bar_length=1.0, bar_radius=0.02,
                     gravity=9.81, t_end=1.2, rtol=1e-12, atol=1e-14) -> PlanarReference:
    """The planar clearance pendulum (cm_z = 0, bore centred at the start) without nlpdyn.

    Free flight of the bar (x, y, theta) until the bore centre b = r + A(theta) s reaches
    |b| = clearance; a perfectly plastic frictionless impact (the normal velocity of the bore
    centre removed by an impulse along b); contact in the coordinates (phi, theta) of
    b = clearance (cos phi, sin phi) until the normal force vanishes; and so on. The energy
    change is recorded at the swing's first turning point (the angular velocity back to 0 on
    the far side)."""
    from scipy.integrate import solve_ivp
    J = mass * (3 * bar_radius**2 + bar_length**2) / 12
    s_b, grav, c = np.array([-cm_x, 0.0]), np.array([0.0, -gravity]), clearance
    perp = np.array([[0.0, -1.0], [1.0, 0.0]])

    def rot(th):
        return np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])

    def energy(r, rd, th_dot):
        return 0.5 * mass * rd @ rd + 0.5 * J * th_dot**2 + mass * gravity * r[1]

    def contact(x):
        """Accelerations and normal force in contact: m r'' = m g - lam e,
        J th'' = (s_w x (-lam e))_z, r = c e(phi) - s_w."""
        phi, th, dphi, dth = x
        e, ep = np.array([np.cos(phi), np.sin(phi)]), np.array([-np.sin(phi), np.cos(phi)])
        sw = rot(th) @ s_b
        A = np.zeros((3, 3))
        A[:2, 0], A[:2, 1], A[:2, 2] = mass * c * ep, -mass * (perp @ sw), e
        A[2, 1], A[2, 2] = J, sw[0] * e[1] - sw[1] * e[0]
        rhs = np.r_[mass * grav + mass * c * dphi**2 * e - mass * dth**2 * sw, 0.0]
        phidd, thdd, lam = np.linalg.solve(A, rhs)
        return np.array([dphi, dth, phidd, thdd]), lam

    def full(x):
        phi, th, dphi, dth = x
        sw = rot(th) @ s_b
        e, ep = np.array([np.cos(phi), np.sin(phi)]), np.array([-np.sin(phi), np.cos(phi)])
        return c * e - sw, th, c * dphi * ep - dth * (perp @ sw), dth

    r, th, rd, dth, t = np.array([cm_x, 0.0]), 0.0, np.zeros(2), 0.0, 0.0
    out = PlanarReference(energy(r, rd, dth))

    def hit(_, y):
        return c - np.linalg.norm(y[0:2] + rot(y[2]) @ s_b)
    hit.terminal, hit.direction = True, -1

    def separate(_, x):
        return contact(x)[1]
    separate.terminal, separate.direction = True, -1

    def turn(_, x):
        return x[3]
    turn.direction = 1       # the swing's angular velocity (negative) comes back through 0

    while t < t_end:
        sol = solve_ivp(lambda _, y: np.r_[y[3:5], y[5], grav, 0.0], (t, t_end),
                        np.r_[r, th, rd, dth], events=hit, rtol=rtol, atol=atol, dense_output=True)
        out.phases.append(sol)
        if sol.status == 0:
            break
        t, y = sol.t_events[0][0], sol.y_events[0][0]
        r, th, rd, dth = y[0:2], y[2], y[3:5], y[5]
        b = r + rot(th) @ s_b
        e, sw = b / np.linalg.norm(b), rot(th) @ s_b
        arm = sw[0] * e[1] - sw[1] * e[0]
        vn = (rd + dth * (perp @ sw)) @ e
        if vn > 0:           # plastic impact: impulse -P e at the bore centre
            P = vn / (1 / mass + arm**2 / J)
            before = energy(r, rd, dth)
            rd, dth = rd - P * e / mass, dth - P * arm / J
            out.impacts.append((t, before - energy(r, rd, dth)))
        phi = np.arctan2(b[1], b[0])
        ep = np.array([-np.sin(phi), np.cos(phi)])
        x0 = np.array([phi, th, ((rd + dth * (perp @ sw)) @ ep) / c, dth])
        sol = solve_ivp(lambda _, x: contact(x)[0], (t, t_end), x0, events=[separate, turn],
                        rtol=rtol, atol=atol, dense_output=True)
        out.phases.append(sol)
        if len(sol.t_events[1]) and np.isnan(out.turning_point[0]):
            x = sol.y_events[1][0]
            rr, _, rrd, ddth = full(x)
            out.turning_point = (sol.t_events[1][0], energy(rr, rrd, ddth) - out.energy_start)
        if sol.status == 0:
            break
        t, x = sol.t_events[0][0], sol.y_events[0][0]
        r, th, rd, dth = full(x)
    return out


# Step settings of the ideal-vs-clearance comparison (docs/CASES.md #4, seed 002 Figs. 31-37):
# label, h (one value: fixed; bounds: the seed's variable-h NLP), extra simulate() options.
COMPARISON_RUNS = [
    ("fixed 2e-4", 2e-4, {}),
    ("fixed 1e-3", 1e-3, {}),
    ("nlp [2e-4, 1e-3]", (2e-4, 1e-3), {"step_control": "nlp"}),
    ("nlp [1e-3, 2e-3]", (1e-3, 2e-3), {"step_control": "nlp"}),
    ("adaptive [1e-3, 2e-3]", (1e-3, 2e-3), {"step_control": "adaptive"}),
]


def compare_ideal_and_clearance(t_end=10.0, runs=None, progress=False, **build_options):
    """Run the pendulum with the ideal and the clearance joint for each step setting.

    Returns {label: {"ideal": Result, "clearance": Result}} in the order of ``runs``
    (default ``COMPARISON_RUNS``); each Result's ``info["cpu_time"]`` is the process CPU
    time of its whole simulate() call (steadier than the wall time on a shared machine).
    """
    out = {}
    for label, h, options in runs or COMPARISON_RUNS:
        out[label] = {}
        for joint in ("ideal", "clearance"):
            tic = time.process_time()
            res = nd.simulate(build(ideal=(joint == "ideal"), **build_options), t_end=t_end,
                              h=h, progress=progress, **options)
            res.info["cpu_time"] = time.process_time() - tic
            out[label][joint] = res
    return out


def comparison_table(results) -> str:
    """Seed 002 Fig. 37 as text: per run and joint, steps, solver work (IPOPT iterations in
    the nlp mode, QP solves otherwise), CPU and wall time of the whole simulate() call, energy
    change and the ledger's share of it lost in impacts and in sustained contact (clearance joint),
    largest constraint violation (ideal) or penetration (clearance)."""
    lines = [f"{'run':<22} {'joint':<10} {'steps':>6} {'IPOPT it':>9} {'QP solves':>9} "
             f"{'CPU s':>7} {'wall s':>7} {'dE J':>8} {'impact J':>9} {'contact J':>10} "
             f"{'violation m':>11}"]
    for label, pair in results.items():
        for joint, res in pair.items():
            st = res.stats
            ipopt = int(np.maximum(st.iterations, 0).sum())
            qps = int(st.gap_iterations.sum() + (st.iterations <= 0).sum())  # direct: 0, QP: -1
            violation = (st.constraint_violation.max() if joint == "ideal"
                         else max(-res.gap("pin").min(), 0.0))
            ledger = res.energy_ledger()
            impact, contact = ((f"{ledger['impact:pin'].iloc[-1]:9.4f}",
                                f"{ledger['contact:pin'].iloc[-1]:10.4f}") if joint != "ideal"
                               else (f"{'-':>9}", f"{'-':>10}"))
            lines.append(f"{label:<22} {joint:<10} {len(st.wall_time):6d} {ipopt:9d} {qps:9d} "
                         f"{res.info.get('cpu_time', np.nan):7.2f} {res.info['wall_time']:7.2f} "
                         f"{res.energy[-1] - res.energy[0]:8.4f} "
                         f"{impact} {contact} {violation:11.2e}")
    return "\n".join(lines)
