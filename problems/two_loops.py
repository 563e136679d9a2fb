"""Two spatial slider-crank loops driven from one crank: the IFToMM slider-crank of
:mod:`problems.slider_crank` (loop 1: rod "rod1" from the crank pin B to slider "slider1"
on the +X axis) plus a longer rod "rod2" from the same pin B to slider "slider2" on the -X
axis. The crank turns at a constant prescribed speed (a rotation driver), so every position
is pure kinematics of the crank angle; the dynamics only sets the reactions and the driver's
work. Gravity -Z.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

import nlpdyn as nd
from .slider_crank import CRANK_LENGTH, CRANK_PIVOT, ROD_LENGTH

ROD2_LENGTH = 0.35
AXES = {1: np.array([1.0, 0.0, 0.0]), 2: np.array([-1.0, 0.0, 0.0])}   # slider directions
ROD_LENGTHS = {1: ROD_LENGTH, 2: ROD2_LENGTH}


def crank_pin(phi) -> np.ndarray:
    """B at crank angle ``phi`` (rad about +X from B straight above the pivot)."""
    return CRANK_PIVOT + CRANK_LENGTH * np.array([0.0, -np.sin(phi), np.cos(phi)])


def slider_x(phi, loop) -> float:
    """Closed-form x of slider ``loop`` (1 or 2): C on the X axis at rod length from B."""
    B = crank_pin(phi)
    return float(AXES[loop][0] * np.sqrt(ROD_LENGTHS[loop] ** 2 - B[1] ** 2 - B[2] ** 2))


def slider_limits(loop) -> tuple[float, float]:
    """Range of slider ``loop``'s x over a turn; real because both rods outreach the crank
    (|B_yz| <= 0.236 m < 0.3, 0.35 m)."""
    centre = np.hypot(CRANK_PIVOT[1], CRANK_PIVOT[2])
    xs = sorted(AXES[loop][0] * np.sqrt(ROD_LENGTHS[loop] ** 2 - r ** 2)
                for r in (centre + CRANK_LENGTH, centre - CRANK_LENGTH))
    return float(xs[0]), float(xs[1])


def _rod_frame(phi, loop) -> np.ndarray:
    """Rod ``loop``'s rotation matrix: body x along B -> C, body y the universal joint's rod
    axis, normal to the slider axis and to the rod (the universal joint keeps it there)."""
    B = crank_pin(phi)
    C = np.array([slider_x(phi, loop), 0.0, 0.0])
    d = (C - B) / ROD_LENGTHS[loop]
    a2 = np.cross(AXES[loop], d)
    a2 /= np.linalg.norm(a2)
    return np.column_stack([d, a2, np.cross(d, a2)])


def _quaternion(R) -> np.ndarray:
    """Euler parameters of a rotation matrix (Shepperd)."""
    tr = np.trace(R)
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2 * np.sqrt(1 + tr)
        p = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    else:
        i, j, m = (k - 1), k % 3, (k + 1) % 3
        s = 2 * np.sqrt(1 + R[i, i] - R[j, j] - R[m, m])
        p = np.zeros(4)
        p[0] = (R[m, j] - R[j, m]) / s
        p[1 + i], p[1 + j], p[1 + m] = 0.25 * s, (R[j, i] + R[i, j]) / s, (R[m, i] + R[i, m]) / s
    p = np.asarray(p, dtype=float)
    return p if p[0] >= 0 else -p


def poses(phi) -> dict:
    """{body: (centre of mass, rotation matrix)} of the mechanism at crank angle ``phi``."""
    crank_R = np.array([[1, 0, 0], [0, np.cos(phi), -np.sin(phi)], [0, np.sin(phi), np.cos(phi)]])
    out = {"crank": (0.5 * (CRANK_PIVOT + crank_pin(phi)), crank_R)}
    for loop in (1, 2):
        C = np.array([slider_x(phi, loop), 0.0, 0.0])
        out[f"rod{loop}"] = (0.5 * (crank_pin(phi) + C), _rod_frame(phi, loop))
        out[f"slider{loop}"] = (C, np.eye(3))
    return out


def _velocities(rate, eps=1e-6) -> dict:
    """{body: (velocity, body-frame angular velocity)} at phi = 0 turning at ``rate`` rad/s
    (central differences of :func:`poses`, error ~1e-12)."""
    plus, minus, now = poses(eps), poses(-eps), poses(0.0)
    out = {}
    for name, (r, R) in now.items():
        v = (plus[name][0] - minus[name][0]) / (2 * eps) * rate
        W = R.T @ (plus[name][1] - minus[name][1]) / (2 * eps) * rate
        out[name] = (v, 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]))
    return out


def build(crank_speed=30.0, gravity=(0.0, 0.0, -9.81)) -> nd.System:
    """Two slider-crank loops on one driven crank.

    Bodies "crank" (0.12 kg), "rod1" (0.5 kg, 0.3 m), "slider1" (2 kg), "rod2" (0.5 kg,
    0.35 m), "slider2" (2 kg). Joints: "A" (revolute, ground-crank, axis X), "drive"
    (rotation driver of A: angle = ``crank_speed`` t), "B1", "B2" (spherical, crank-rod at the
    crank pin B), "C1", "C2" (universal, slider-rod), "slide1" (prismatic along +X),
    "slide2" (prismatic along -X). One degree of freedom, taken by the driver. The start
    (crank angle 0: the slider-crank's Table 2 position, slider1 at x = 0.2 m, slider2 at
    x = -0.2693 m) is exact in positions and velocities, so no initial projection.

    Parameters
    ----------
    crank_speed : float
        Prescribed crank speed about +X (rad/s).
    gravity : tuple of float

    Returns
    -------
    nd.System

    Example
    -------
    >>> import nlpdyn as nd
    >>> from problems import two_loops
    >>> res = nd.simulate(two_loops.build(), 0.01, 1e-3, progress=False)
    >>> round(float(res.position("slider2")[0, 0]), 4)
    -0.2693

    Measured, 10 s (48 turns): see :data:`MEASURED` and :func:`study`.
    """
    s = nd.System(gravity=gravity)
    pose, vel = poses(0.0), _velocities(crank_speed)
    data = {"crank": (0.12, (1e-4, 1e-4, 1e-5)),
            "rod1": (0.5, (4e-4, 4e-3, 4e-3)), "slider1": (2.0, (1e-4, 1e-4, 1e-4)),
            "rod2": (0.5, (4e-4, 5e-3, 5e-3)), "slider2": (2.0, (1e-4, 1e-4, 1e-4))}
    bodies = {}
    for name, (mass, inertia) in data.items():
        r, R = pose[name]
        bodies[name] = s.add_body(name, mass=mass, inertia=inertia, position=r,
                                  orientation=_quaternion(R), velocity=vel[name][0],
                                  angular_velocity=vel[name][1])
    A = s.add_joint(nd.Revolute(s.ground, bodies["crank"], point=CRANK_PIVOT, axis=(1, 0, 0),
                                name="A"))
    s.add_joint(nd.RotationDriver(A, lambda t: crank_speed * t, name="drive"))
    B = crank_pin(0.0)
    for loop in (1, 2):
        rod, slider = bodies[f"rod{loop}"], bodies[f"slider{loop}"]
        C = pose[f"slider{loop}"][0]
        s.add_joint(nd.Spherical(bodies["crank"], rod, point=B, name=f"B{loop}"))
        s.add_joint(nd.Universal(slider, rod, point=C, axis1=AXES[loop],
                                 axis2=_rod_frame(0.0, loop)[:, 1], name=f"C{loop}"))
        s.add_joint(nd.Prismatic(s.ground, slider, point=C, axis=AXES[loop],
                                 name=f"slide{loop}"))
    return s


def discretisation_energy(res) -> np.ndarray:
    """Energy the time discretisation made (J, cumulative, one per output time): the
    ledger's "residual:*" columns plus the work of the ideal joints (every "work:" column
    but the driver's, which is physical)."""
    ledger = res.energy_ledger()
    cols = [c for c in ledger if c.startswith("residual:")
            or (c.startswith("work:") and c != "work:drive")]
    return ledger[cols].sum(axis=1).to_numpy()


def turns(res) -> float:
    """Crank turns about X over the run."""
    A = res.rotation("crank")
    angle = np.unwrap(np.arctan2(A[:, 2, 1], A[:, 1, 1]))
    return float((angle[-1] - angle[0]) / (2 * np.pi))


def study(t_end=10.0, steps=(1e-3, 5e-4, 2.5e-4), schemes=("euler", "midpoint")) -> str:
    """The table of :data:`MEASURED`: per scheme and h the final discretisation energy, its
    ratio to the previous (twice larger) h, turns, max constraint violation, wall time."""
    lines = [f"{'scheme':<9} {'h':>7} {'E_disc (J)':>11} {'ratio':>6} {'max|E_disc|':>11} "
             f"{'ratio':>6} {'turns':>6} {'max viol':>9} {'steps (s)':>9} {'CPU (s)':>7}"]
    for scheme in schemes:
        last = None
        for h in steps:
            cpu = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # "the discretisation added"
                res = nd.simulate(build(), t_end, h, scheme=scheme, progress=False)
            cpu = time.process_time() - cpu
            disc = discretisation_energy(res)
            e, peak = float(disc[-1]), float(np.abs(disc).max())
            ratios = (f"{last[0] / e:6.2f}", f"{last[1] / peak:6.2f}") if last else ("", "")
            last = e, peak
            lines.append(f"{scheme:<9} {h:7.2g} {e:11.3e} {ratios[0]:>6} {peak:11.3e} "
                         f"{ratios[1]:>6} {turns(res):6.2f} "
                         f"{res.stats.constraint_violation.max():9.1e} "
                         f"{res.stats.wall_time.sum():9.1f} {cpu:7.1f}")
    return "\n".join(lines)


# ``python -c "from problems import two_loops as t; print(t.study())"`` (PYTHONPATH at the
# worktree; ~45 s). E_disc: discretisation_energy at 10 s; max|E_disc|: its largest magnitude
# over the run; ratio: to the row above (h twice larger); steps: the steps' wall time; CPU:
# the whole simulate call (compilation included). Euler falls 2x per halving (first order);
# midpoint 8x at the end and 5-7x at its peak: better than second order, because the
# error oscillates with the crank and mostly cancels over whole turns.
MEASURED = """
scheme          h  E_disc (J)  ratio max|E_disc|  ratio  turns  max viol steps (s) CPU (s)
euler       0.001   3.686e-01          3.689e-01         47.75   5.7e-05       0.8     1.8
euler      0.0005   1.929e-01   1.91   1.929e-01   1.91  47.75   1.4e-05       1.3     3.3
euler     0.00025   9.756e-02   1.98   9.760e-02   1.98  47.75   3.6e-06       2.7     7.2
midpoint    0.001   2.412e-03          2.751e-03         47.75   2.0e-06       3.2     4.4
midpoint   0.0005   2.943e-04   8.20   3.831e-04   7.18  47.75   2.5e-07       6.4     8.9
midpoint  0.00025   3.480e-05   8.46   5.754e-05   6.66  47.75   3.1e-08      12.6    18.5
"""

# The test's runs: ``print(t.study(t_end=2.0, schemes=("midpoint",)))``
MEASURED_2S = """
scheme          h  E_disc (J)  ratio max|E_disc|  ratio  turns  max viol steps (s) CPU (s)
midpoint    0.001   4.995e-04          7.696e-04          9.55   2.0e-06       0.6     0.9
midpoint   0.0005   6.268e-05   7.97   1.349e-04   5.71   9.55   2.5e-07       1.3     1.8
midpoint  0.00025   7.855e-06   7.98   2.649e-05   5.09   9.55   3.1e-08       2.5     3.4
"""
