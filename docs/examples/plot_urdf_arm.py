"""
A six-joint arm from a URDF file, with play in its elbow
========================================================

A six-joint arm (waist, shoulder, elbow, and a three-joint wrist; 7.5 kg in all) written as
a URDF, loaded twice with :func:`nlpdyn.from_urdf`: once with ideal joints, once with the
elbow loosened into a :class:`~nlpdyn.RevoluteClearance` (0.1 mm radial play, a 12 mm pin
30 mm long). Released from rest at an outstretched configuration, the arm swings under
gravity; the bore's journal orbit shows where the elbow's pin sat in its clearance, and the
tool's path shows what the play changes at the end of the arm.
"""
# example-start
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
elbow = {"elbow": dict(clearance=1e-4, radius=0.006, length=0.03)}
ideal_arm = nd.from_urdf(ARM, configuration=start)
loose_arm = nd.from_urdf(ARM, configuration=start, clearance=elbow)
ideal = nd.simulate(ideal_arm, t_end=0.4, h=1e-3, progress=False)
loose = nd.simulate(loose_arm, t_end=0.4, h=1e-3, progress=False)
print(f"ideal: {ideal.message}; loose elbow: {loose.message}")
shift = np.linalg.norm(loose.position("tool") - ideal.position("tool"), axis=1)
print(f"the tool's path moves by up to {shift.max() * 1e3:.2f} mm with the elbow's play")
print(f"largest elbow contact force {loose.contact_force('elbow').max():.0f} N")

fig, (orbit, path) = plt.subplots(1, 2, figsize=(10, 4.2))
loose.plot_orbit(loose_arm.gaps[0], ax=orbit)
path.plot(ideal.t, shift * 1e3)
path.set(xlabel="t (s)", ylabel="|tool (loose) - tool (ideal)| (mm)",
         title="the tool's path, loose elbow against ideal")
fig.tight_layout()
# example-end

# %%
# The arm as its URDF visuals draw it (cylinders, boxes, spheres), at the start and at the
# end of the run with the loose elbow.
from nlpdyn.animation import plot_scene  # noqa: E402

fig = plt.figure(figsize=(10, 4.5))
for k, t in enumerate((0.0, 0.4)):
    plot_scene(loose, t=t, ax=fig.add_subplot(1, 2, k + 1, projection="3d"))
