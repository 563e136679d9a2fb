"""Triple pendulum with joint stops (docs/CASES.md #6; seed 001 section 3.2, Fig. 14, Table 3).

Three bars along X, released at rest, gravity -Z (SI units):

- body1: 0.10 kg, inertia (3e-3, 3e-2, 3e-2), centre of mass (0.3, 0, 0);
- body2: 0.04 kg, inertia (1.2e-3, 1.2e-2, 1.2e-2), centre of mass (0.9, 0, 0);
- body3: 0.02 kg, inertia (0.6e-3, 0.6e-2, 0.6e-2), centre of mass (1.5, 0, 0), turned by
  Euler parameters (e0, e1, 0, 0), e1 = -0.383, e0 = sqrt(1 - e1^2) (-45.03 deg about X);
- "A": revolute ground - body1 at the origin about Y;
- "B": cylindrical body1 - body2 at (0.6, 0, 0) along Z, stop "B_stop" on its translation
  at +-0.25 m;
- "C": revolute body2 - body3 at (1.2, 0, 0) about (0, 1, 1)/sqrt(2), stop "C_stop" on its
  rotation at +-45 deg.

Axis of C (*ours*): the seed says only "an orientation of 45 deg with respect to the Z axis".
We take it in the YZ plane, perpendicular to the bars: body 3's turn (-45 deg about X, the
only rotation in Table 3) then makes the hinge axis body 3's own z axis, so body 3's
principal axes are the joint's, as a drawing like Fig. 14 would have it.

Stop laws: Lankarani-Nikravesh ("ln": K = 1e5 N/m^1.5 translation, 1e3 N m/rad^1.5
rotation, n = 1.5, e = 0.75) or the modified Kelvin-Voigt law of seed 001 eq. 54 ("kv":
same K with n = 1, c_e = 0.01, v0 = 0.1 m/s for translation and, *ours*, 0.1 rad/s for
rotation).

Where the stops are evaluated (``EVALUATION``), measured on this case over 4 s at h = 1e-3
with the default scheme "midpoint" (converged losses 0.1055 J for ln and 0.273 J for kv;
``python benchmarks/explicit_vs_implicit.py``, 2026-11-28):

- ln, implicit (energy-consistent, its impacts resolved in time by shortened steps at
  ``hysteresis_resolution``): loss 0.1055 J (761 of 4651 steps shortened; 0.1048 J in 4114
  with its impacts at ``contact_resolution``), the law's own work. Explicit (start of
  step): loss 0.1059 J, 0.80 against 1.07 ms a step of h (one run each). Backward Euler damps
  each impact: loss 0.199 J.
- kv, implicit: loss 0.2728 J (backward Euler 0.2742 J, explicit 0.2707 J; with the seed's
  scheme "euler" explicit gained energy from h = 8e-4 on, +160 J at 1e-3: the
  loading/unloading switch over v0 acts like a stiff damper).

(The h scans by ``run(law, evaluation=..., h=...)``.)
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd
from nlpdyn.forces.contact_laws import LankaraniNikravesh, ModifiedKelvinVoigt
from nlpdyn.forces.joint_stops import RotationStop, TranslationStop

LAWS = ("ln", "kv")
EVALUATION = {"ln": "implicit", "kv": "implicit"}
T_END, T_LONG, H = 4.0, 20.0, 1e-3
TRANSLATION_LIMIT = 0.25
ROTATION_LIMIT = np.pi / 4
E1_BODY3 = -0.383
AXIS_B = np.array([0.0, 0.0, 1.0])
AXIS_C = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
JOINT_B = np.array([0.6, 0.0, 0.0])
JOINT_C = np.array([1.2, 0.0, 0.0])
LAW_DATA = {
    "ln": {"translation_stiffness": 1e5, "rotation_stiffness": 1e3, "exponent": 1.5,
           "restitution": 0.75},
    "kv": {"translation_stiffness": 1e5, "rotation_stiffness": 1e3, "restitution": 0.01,
           "velocity_tolerance": 0.1},
}


def stop_laws(law="ln"):
    """(translation law, rotation law) of the seed's scenario ``law`` ("ln" or "kv")."""
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    d = LAW_DATA[law]
    if law == "ln":
        return (LankaraniNikravesh(d["translation_stiffness"], d["exponent"], d["restitution"]),
                LankaraniNikravesh(d["rotation_stiffness"], d["exponent"], d["restitution"]))
    return (ModifiedKelvinVoigt(d["translation_stiffness"], d["restitution"],
                                d["velocity_tolerance"]),
            ModifiedKelvinVoigt(d["rotation_stiffness"], d["restitution"], d["velocity_tolerance"]))


def build(law="ln", evaluation=None) -> nd.System:
    """The system of the module docstring.

    Parameters
    ----------
    law : {"ln", "kv"}
        Stop law: Lankarani-Nikravesh or modified Kelvin-Voigt.
    evaluation : {"explicit", "implicit", "backward_euler"} or None
        Where the stepper evaluates the stops; None: ``EVALUATION[law]``.

    Returns
    -------
    nlpdyn.System
        Bodies "body1".."body3", joints "A", "B", "C", stops "B_stop", "C_stop".
    """
    laws = stop_laws(law)
    s = nd.System(gravity=(0, 0, -9.81))
    b1 = s.add_body("body1", 0.10, (3e-3, 3e-2, 3e-2), position=(0.3, 0, 0))
    b2 = s.add_body("body2", 0.04, (1.2e-3, 1.2e-2, 1.2e-2), position=(0.9, 0, 0))
    b3 = s.add_body("body3", 0.02, (0.6e-3, 0.6e-2, 0.6e-2), position=(1.5, 0, 0),
                    orientation=(np.sqrt(1 - E1_BODY3**2), E1_BODY3, 0, 0))
    s.add_joint(nd.Revolute(s.ground, b1, point=(0, 0, 0), axis=(0, 1, 0), name="A"))
    cyl = s.add_joint(nd.Cylindrical(b1, b2, point=JOINT_B, axis=AXIS_B, name="B"))
    rev = s.add_joint(nd.Revolute(b2, b3, point=JOINT_C, axis=AXIS_C, name="C"))
    stops = [TranslationStop(cyl, -TRANSLATION_LIMIT, TRANSLATION_LIMIT, laws[0], name="B_stop"),
             RotationStop(rev, -ROTATION_LIMIT, ROTATION_LIMIT, laws[1], name="C_stop")]
    for stop in stops:
        stop.evaluation = EVALUATION[law] if evaluation is None else evaluation
        s.add_force(stop)
    return s


def run(law="ln", t_end=T_END, h=H, evaluation=None, progress=False, **options) -> nd.Result:
    """Build and simulate (``options`` go to :func:`nlpdyn.simulate`)."""
    return nd.simulate(build(law, evaluation), t_end=t_end, h=h, progress=progress, **options)


def _rotate(A, vec):
    return np.einsum("nij,j->ni", A, np.asarray(vec, dtype=float))


def relative_motion(res):
    """Joint coordinates from the trajectory, numpy only (independent of the elements).

    Returns
    -------
    translation : ndarray, shape (n_points,)
        Slide in B (m): (body 2's joint point - body 1's joint point) . body 1's z axis.
    rotation : ndarray, shape (n_points,)
        Turn of body 3 relative to body 2 about C's axis (rad), 0 at the start.
    """
    A1, A2, A3 = res.rotation("body1"), res.rotation("body2"), res.rotation("body3")
    on1 = res.position("body1") + _rotate(A1, JOINT_B - (0.3, 0, 0))
    on2 = res.position("body2") + _rotate(A2, JOINT_B - (0.9, 0, 0))
    translation = np.einsum("ni,ni->n", on2 - on1, _rotate(A1, AXIS_B))
    f = np.cross(AXIS_C, (1.0, 0, 0))           # a unit vector normal to C's axis
    g = np.cross(AXIS_C, f)
    # body 2 starts unrotated; body 3 carries f from its initial orientation
    f3 = _rotate(A3, A3[0].T @ f)
    rotation = np.arctan2(np.einsum("ni,ni->n", _rotate(A2, g), f3),
                          np.einsum("ni,ni->n", _rotate(A2, f), f3))
    return translation, rotation


def outputs(res) -> dict:
    """What seed 001 plots (Figs. 16-18), as arrays.

    Returns
    -------
    dict
        ``t`` (n_points,); ``translation`` (n_points,) m and ``rotation`` (n_points,) rad
        (see :func:`relative_motion`); ``stop_force`` (n_steps,) N: B_stop's force on
        body 2 along B's axis, ``stop_moment`` (n_steps,) N m: C_stop's moment on body 3
        about C's axis, both as each step used them (aligned with t[1:]); ``omega1``
        (n_points,) rad/s: body 1's angular velocity about Y.
    """
    translation, rotation = relative_motion(res)
    axis_b = _rotate(res.rotation("body1")[1:], AXIS_B)
    axis_c = _rotate(res.rotation("body2")[1:], AXIS_C)
    return {
        "t": res.t,
        "translation": translation,
        "rotation": rotation,
        "stop_force": np.einsum("ni,ni->n", res.applied_force("B_stop", body="body2"), axis_b),
        "stop_moment": np.einsum("ni,ni->n", res.applied_torque("C_stop", body="body3"), axis_c),
        "omega1": res.angular_velocity("body1", frame="global")[:, 1],
    }


def contact_intervals(t, active):
    """[(t_start, t_end), ...] of the runs where ``active`` (bool, shape (n_points,)) holds."""
    active = np.asarray(active, dtype=bool)
    edges = np.flatnonzero(np.diff(np.r_[0, active.astype(int), 0]))
    return [(t[a], t[b - 1]) for a, b in zip(edges[::2], edges[1::2])]


def body1_angle(res):
    """Body 1's rotation about Y from its start along X (rad, positive downwards),
    shape (n_points,)."""
    A1 = res.rotation("body1")
    return np.unwrap(np.arctan2(-A1[:, 2, 0], A1[:, 0, 0]))


def turning_points(res):
    """(t, angle) of body 1 where its angular velocity about Y changes sign: the swing
    amplitudes, shapes (n_turns,)."""
    w = res.angular_velocity("body1", frame="global")[:, 1]
    k = np.flatnonzero(np.sign(w[1:]) * np.sign(w[:-1]) < 0) + 1
    return res.t[k], body1_angle(res)[k]
