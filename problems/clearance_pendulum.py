"""Revolute clearance pendulum (CASES.md #3 and #4, seed 002 Figs. 8 and 31).

A bar hangs on a fixed pin (axis global Z through the origin) of radius R with radial
clearance c and axial clearance c_a; its centre of mass sits cm_x along the bar and cm_z out
of plane (to excite Z motion). Released from horizontal at rest, gravity -Y.
*ours*: R = 10 mm, c = c_a = 0.1 mm, bore length 20 mm, m = 1 kg, cm_x = 0.5 m,
cm_z = 0.05 m, inertia of a 1 m bar of radius 20 mm, t_end = 2 s, h in [1e-3, 2e-3].
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd


def build(radius=0.01, clearance=1e-4, axial_clearance=1e-4, bore_length=0.02, mass=1.0,
          cm_x=0.5, cm_z=0.05, bar_length=1.0, bar_radius=0.02, ideal=False,
          start_centred=True) -> nd.System:
    """Body "bar" on joint "pin" (``ideal=True``: an ideal Revolute about Z).

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
                                         offset=offset))
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


# Step settings of the ideal-vs-clearance comparison (CASES.md #4, seed 002 Figs. 31-37):
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
    (default ``COMPARISON_RUNS``).
    """
    import nlpdyn as nd
    out = {}
    for label, h, options in runs or COMPARISON_RUNS:
        out[label] = {joint: nd.simulate(build(ideal=(joint == "ideal"), **build_options),
                                         t_end=t_end, h=h, progress=progress, **options)
                      for joint in ("ideal", "clearance")}
    return out


def comparison_table(results) -> str:
    """Seed 002 Fig. 37 as text: per run and joint, steps, solver work (IPOPT iterations in
    the nlp mode, QP solves otherwise), wall time, energy change, largest constraint
    violation (ideal) or penetration (clearance)."""
    lines = [f"{'run':<22} {'joint':<10} {'steps':>6} {'IPOPT it':>9} {'QP solves':>9} "
             f"{'wall s':>7} {'dE J':>8} {'violation m':>11}"]
    for label, pair in results.items():
        for joint, res in pair.items():
            st = res.stats
            ipopt = int(np.maximum(st.iterations, 0).sum())
            qps = int(st.gap_iterations.sum() + (st.iterations <= 0).sum())  # direct: 0, QP: -1
            violation = (st.constraint_violation.max() if joint == "ideal"
                         else max(-res.gap("pin").min(), 0.0))
            lines.append(f"{label:<22} {joint:<10} {len(st.wall_time):6d} {ipopt:9d} {qps:9d} "
                         f"{st.wall_time.sum():7.2f} {res.energy[-1] - res.energy[0]:8.4f} "
                         f"{violation:11.2e}")
    return "\n".join(lines)
