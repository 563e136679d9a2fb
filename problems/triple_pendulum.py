"""Triple pendulum with joint stops (CASES.md #6, seed 001 section 3.2, Fig. 14, Table 3).

Three bars hang from the ground, released at rest with all bars along X, gravity -Z:
revolute "A" (ground - body1 at the origin, about Y); cylindrical "B" (body1 - body2 at
x = 0.6 m, along Z) with translation stops +-0.25 m; revolute "C" (body2 - body3 at x = 1.2 m,
about an axis at 45 deg to Z in the YZ plane, (0, 1, 1)/sqrt(2): body 3's frame is turned by
e1 = -0.383, i.e. -45 deg about X, so this is its body z axis) with rotation stops +-45 deg.
Stop laws: Lankarani-Nikravesh (K = 1e5 N/m^1.5 translation, 1e3 N m/rad^1.5 rotation,
n = 1.5, e = 0.75) or the modified Kelvin-Voigt law of eq. 54 (same K, c_e = 0.01,
v0 = 0.1 m/s; for the rotation stop v0 is read as 0.1 rad/s).
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd

LAWS = ("ln", "kv")
AXIS_C = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)


def stop_laws(law="ln"):
    """(translation law, rotation law) of the seed's two scenarios."""
    if law == "ln":
        return (nd.LankaraniNikravesh(1e5, 1.5, 0.75), nd.LankaraniNikravesh(1e3, 1.5, 0.75))
    if law == "kv":
        return (nd.ModifiedKelvinVoigt(1e5, 0.01, 0.1), nd.ModifiedKelvinVoigt(1e3, 0.01, 0.1))
    raise ValueError(f"law must be one of {LAWS}, got {law!r}")


def build(law="ln", evaluation=None) -> nd.System:
    """Bodies "body1".."body3", joints "A", "B", "C", stops "B_stop" (translation) and
    "C_stop" (rotation). ``evaluation`` overrides the stops' default ("implicit")."""
    s = nd.System(gravity=(0, 0, -9.81))
    b1 = s.add_body("body1", 0.10, (3e-3, 3e-2, 3e-2), position=(0.3, 0, 0))
    b2 = s.add_body("body2", 0.04, (1.2e-3, 1.2e-2, 1.2e-2), position=(0.9, 0, 0))
    e1 = -0.383
    b3 = s.add_body("body3", 0.02, (0.6e-3, 0.6e-2, 0.6e-2), position=(1.5, 0, 0),
                    orientation=(np.sqrt(1 - e1**2), e1, 0, 0))
    s.add_joint(nd.Revolute(s.ground, b1, point=(0, 0, 0), axis=(0, 1, 0), name="A"))
    cyl = s.add_joint(nd.Cylindrical(b1, b2, point=(0.6, 0, 0), axis=(0, 0, 1), name="B"))
    rev = s.add_joint(nd.Revolute(b2, b3, point=(1.2, 0, 0), axis=AXIS_C, name="C"))
    translation, rotation = stop_laws(law)
    stops = [nd.TranslationStop(cyl, -0.25, 0.25, translation, name="B_stop"),
             nd.RotationStop(rev, -np.pi / 4, np.pi / 4, rotation, name="C_stop")]
    for stop in stops:
        if evaluation is not None:
            stop.evaluation = evaluation
        s.add_force(stop)
    return s


def relative_motion(res):
    """(translation in B (m), rotation in C (rad)), shape (n_points,) each, from the
    trajectory with numpy: B's slide along body 1's Z axis, C's angle about its axis."""
    A1, A2, A3 = res.rotation("body1"), res.rotation("body2"), res.rotation("body3")
    r1, r2 = res.position("body1"), res.position("body2")
    joint_on_1 = r1 + np.einsum("nij,j->ni", A1, np.array([0.3, 0, 0]))
    joint_on_2 = r2 + np.einsum("nij,j->ni", A2, np.array([-0.3, 0, 0]))
    axis_b = np.einsum("nij,j->ni", A1, np.array([0, 0, 1.0]))
    translation = np.einsum("ni,ni->n", joint_on_2 - joint_on_1, axis_b)
    f = np.cross(AXIS_C, [1.0, 0, 0])
    f /= np.linalg.norm(f)
    g = np.cross(AXIS_C, f)
    # (f, g) in bodies 2 and 3 frames at t = 0: body 2 starts unrotated, body 3 turned
    A3_0 = A3[0]
    f2, g2 = np.einsum("nij,j->ni", A2, f), np.einsum("nij,j->ni", A2, g)
    f3 = np.einsum("nij,j->ni", A3, A3_0.T @ f)
    rotation = np.arctan2(np.einsum("ni,ni->n", g2, f3), np.einsum("ni,ni->n", f2, f3))
    return translation, rotation


def run(law="ln", t_end=4.0, h=1e-3, progress=False, **options):
    return nd.simulate(build(law), t_end=t_end, h=h, progress=progress, **options)
