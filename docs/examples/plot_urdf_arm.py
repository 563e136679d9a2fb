"""
A six-joint arm from a URDF file, driven along a path, with play in its elbow
=============================================================================

A six-joint arm (waist, shoulder, elbow, and a three-joint wrist; 7.5 kg in all) written as
a URDF, loaded twice with :func:`nlpdyn.from_urdf`: once with ideal joints, once with the
elbow loosened into a :class:`~nlpdyn.RevoluteClearance` (0.1 mm radial and axial play, a
12 mm pin 30 mm long). In both, all six joints follow the same path in 1 s, from rest to
rest: each angle a quintic ramp from the loaded configuration (zero velocity and
acceleration at both ends), carrying the tool about 1 m. Five joints are driven by
:class:`~nlpdyn.RotationDriver`. A driver needs an ideal joint, so the elbow's motor is
written as a :class:`~nlpdyn.Programmed` constraint on the angle between the upper arm and
the forearm, the equation a rotation driver uses: it turns the forearm and leaves the pin
free in its bore. The same motor drives the elbow of both models. The ideal arm then
moves exactly along the path; the loose one carries its forearm on the pin's play. The
bore's journal orbit shows where the pin sat in its clearance, and the tool's path shows
what the play changes at the end of the arm.
"""
# example-start
import casadi as ca
import matplotlib.pyplot as plt
import numpy as np

import nlpdyn as nd


def link(name, mass, com, inertia, visual, rpy="0 0 0"):
    ixx, iyy, izz = inertia
    return f"""<link name="{name}">
      <inertial><origin xyz="{com}"/><mass value="{mass}"/>
        <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>
      <visual><origin xyz="{com}" rpy="{rpy}"/><geometry>{visual}</geometry></visual></link>"""


def joint(name, parent, child, xyz, axis):
    return f"""<joint name="{name}" type="revolute"><parent link="{parent}"/>
      <child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>
      <limit lower="-3" upper="3" effort="50" velocity="5"/></joint>"""


ARM = "\n".join([
    '<robot name="arm6"><link name="world"/>',
    link("column", 3.0, "0 0 0.15", (0.025, 0.025, 0.004),
         '<cylinder radius="0.05" length="0.3"/>'),
    link("upper_arm", 2.0, "0.2 0 0", (0.002, 0.028, 0.028), '<box size="0.4 0.06 0.06"/>'),
    link("forearm", 1.2, "0.15 0 0", (0.001, 0.01, 0.01), '<box size="0.3 0.05 0.05"/>'),
    link("wrist1", 0.5, "0.03 0 0", (3e-4, 3e-4, 3e-4), '<sphere radius="0.035"/>'),
    link("wrist2", 0.4, "0.03 0 0", (2e-4, 2e-4, 2e-4), '<sphere radius="0.03"/>'),
    link("tool", 0.4, "0.05 0 0", (1e-4, 4e-4, 4e-4), '<cylinder radius="0.02" length="0.1"/>',
         rpy="0 1.5707963267948966 0"),          # a cylinder's axis is its frame's z
    joint("waist", "world", "column", "0 0 0", "0 0 1"),
    joint("shoulder", "column", "upper_arm", "0 0 0.3", "0 1 0"),
    joint("elbow", "upper_arm", "forearm", "0.4 0 0", "0 1 0"),
    joint("wrist_roll", "forearm", "wrist1", "0.3 0 0", "1 0 0"),
    joint("wrist_pitch", "wrist1", "wrist2", "0.06 0 0", "0 1 0"),
    joint("tool_roll", "wrist2", "tool", "0.06 0 0", "1 0 0"),
    "</robot>"])

start = {"waist": 0.3, "shoulder": -0.2, "elbow": 0.6, "wrist_pitch": 0.4}
path = {"waist": 1.2, "shoulder": 0.5, "elbow": -0.9, "wrist_roll": 1.0, "wrist_pitch": -0.6,
        "tool_roll": 2.0}                # each joint's turn (rad) over the move
T = 1.0                                  # the move's duration (s)


def ramp(turn):
    """turn * s(t/T), s the quintic from 0 to 1 with zero rate and acceleration at both ends."""
    return lambda t: turn * (10 * (t / T) ** 3 - 15 * (t / T) ** 4 + 6 * (t / T) ** 5)


def motor(joint, angle):
    """The joint's rotation angle(t), as a rotation driver prescribes it (e1, e2: the joint
    frame's axes across the axis, fixed in the parent), for an ideal or a clearance joint."""
    e1, e2, _ = joint.frame().T

    def turned(t, upper, fore):
        across = fore.vector(e1)
        return (ca.dot(across, upper.vector(e2)) * ca.cos(angle(t))
                - ca.dot(across, upper.vector(e1)) * ca.sin(angle(t)))
    return nd.Programmed([joint.parent, joint.child], turned, name=f"{joint.name}_motor")


def driven_arm(clearance=None):
    arm = nd.from_urdf(ARM, configuration=start, clearance=clearance)
    joints = {j.name: j for j in arm.constraints + arm.gaps}
    for name, turn in path.items():
        drive = motor if name == "elbow" else nd.RotationDriver
        arm.add_joint(drive(joints[name], ramp(turn)))
    return arm


ideal_arm = driven_arm()
loose_arm = driven_arm(clearance={"elbow": dict(clearance=1e-4, radius=0.006, length=0.03)})
ideal = nd.simulate(ideal_arm, t_end=T, h=1e-3, progress=False)
loose = nd.simulate(loose_arm, t_end=T, h=1e-3, progress=False)
print(f"ideal: {ideal.message}; loose elbow: {loose.message}")
tool, tool_loose = ideal.position("tool"), loose.position("tool")
travel = np.linalg.norm(np.diff(tool, axis=0), axis=1).sum()
shift = np.linalg.norm(tool_loose - tool, axis=1)
print(f"the tool travels {travel:.2f} m; the elbow's play moves it by up to "
      f"{shift.max() * 1e3:.2f} mm (t = {ideal.t[shift.argmax()]:.2f} s), "
      f"{shift[-1] * 1e3:.2f} mm at rest at the end")

fig, (orbit, top, gap) = plt.subplots(1, 3, figsize=(15, 4.5))
loose.plot_orbit(loose_arm.gaps[0], ax=orbit)
magnified = tool + 30 * (tool_loose - tool)
top.plot(tool[:, 0], tool[:, 1], label="ideal")
top.plot(magnified[:, 0], magnified[:, 1], "--", label="loose elbow, its change x 30")
top.set(xlabel="x (m)", ylabel="y (m)", aspect="equal", title="the tool's path, from above")
top.legend()
gap.plot(ideal.t, shift * 1e3)
gap.set(xlabel="t (s)", ylabel="|tool (loose) - tool (ideal)| (mm)",
        title="what the elbow's play changes")
fig.tight_layout()
# example-end

# %%
# Through most of the move both ends of the bore lie on the clearance circle, on opposite
# sides: the pin is cocked in its bore, tilted by up to 2 x 0.1 mm across its 30 mm, some
# 6.7 mrad. Over the 0.46 m from the elbow to the tool's centre of mass that is some 3 mm,
# thirty times the radial play, as the third panel shows; near t = 0.55 s the pin crosses
# its bore and the tool passes within a fraction of a millimetre of the ideal path.

# %%
# The arm as its URDF visuals draw it (cylinders, boxes, spheres), at the start and at the
# end of the move with the loose elbow.
from nlpdyn.animation import plot_scene  # noqa: E402

fig = plt.figure(figsize=(10, 4.5))
for k, t in enumerate((0.0, T)):
    plot_scene(loose, t=t, ax=fig.add_subplot(1, 2, k + 1, projection="3d"))
