# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Clearance sliders: cylindrical (CASES.md #1) and triangular prismatic (#2)
#
# Seed 002's first two case studies, with the data CASES.md marks *ours*: a tube (R = 10 mm,
# c = 0.1 mm, length 0.1 m, 1 kg) on a fixed rod along Z, and a triangular slider (edge
# 30 mm, c = 0.3 mm) in a triangular cavity. Gravity -Y; a constant force F = (0, 0, 5) N at
# a body point off the axis. Step size bounded in [1e-3, 1e-2] s (`adaptive`: fixed-step solves
# at h_max, cut where a gap is about to close), 1 s (`NLPDYN_QUICK=1`: 0.3 s).
#
# What the runs show, and where they differ from the seed's reading:
# - both sliders fall through the clearance, land (a perfectly inelastic impact) and slide
#   along Z with a = F/m: v_z linear, z parabolic;
# - with these *ours* values the push's moment F s_y is smaller than the weight's lever
#   m g L/2, so the tube rests on the rod with both ends on the same (lower) side, not
#   diametrically opposite as in the seed's Fig. 10; and the triangular slider rests on the
#   cavity's lower face (three vertex contacts, not six).
# - the contact forces are statically determined only as resultants (the two end gaps carry
#   the same direction): their sum equals the weight and their difference the push's moment.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import nlpdyn as nd
import nlpdyn.plotting
from problems import clearance_slider, prismatic_slider

QUICK = os.environ.get("NLPDYN_QUICK") == "1"
T_END = 0.3 if QUICK else 1.0
H = (1e-3, 1e-2)

tube = nd.simulate(clearance_slider.build(), t_end=T_END, h=H)
print(tube.summary())
print(f"min gap {tube.gap('bore').min():.2e} m, EOM residual <= {tube.stats.eom_residual.max():.1e}")

# %%
fig, axes = plt.subplots(2, 3, figsize=(15, 7), constrained_layout=True)
ends = tube.contact_point("bore")
for k, label in enumerate(("end -L/2", "end +L/2")):
    axes[0, 0].plot(tube.t, 1e3 * ends[:, k, 1], label=f"contact point y, {label}")
axes[0, 0].set(xlabel="t [s]", ylabel="y [mm]", title="contact points on the rod")
axes[0, 0].legend()
lam = tube.contact_force("bore")
axes[0, 1].plot(tube.t, lam[:, 0], label="end -L/2")
axes[0, 1].plot(tube.t, lam[:, 1], label="end +L/2")
axes[0, 1].plot(tube.t, lam.sum(axis=1), "k--", lw=0.8, label="sum (= m g once settled)")
axes[0, 1].set(xlabel="t [s]", ylabel="[N]", title="normal contact forces")
axes[0, 1].legend()
axes[0, 2].plot(tube.t, tube.velocity("tube")[:, 0], label="v_x")
axes[0, 2].plot(tube.t, tube.velocity("tube")[:, 1], label="v_y")
axes[0, 2].set(xlabel="t [s]", ylabel="[m/s]", title="lateral velocity of the centre")
axes[0, 2].legend()
axes[1, 0].plot(tube.t, tube.velocity("tube")[:, 2])
axes[1, 0].set(xlabel="t [s]", ylabel="v_z [m/s]", title="axial velocity (linear)")
axes[1, 1].plot(tube.t, tube.position("tube")[:, 2])
axes[1, 1].set(xlabel="t [s]", ylabel="z [m]", title="axial position (parabolic)")
nd.plotting.plot_step_sizes(tube, axes[1, 2])
settled = tube.t > 0.1
print("settled: sum of contact forces", lam[settled].sum(axis=1).min(), "..",
      lam[settled].sum(axis=1).max(), "N; difference", (lam[settled, 1] - lam[settled, 0]).mean(),
      "N (F s_y / (L/2) =", 5 * 0.02 / 0.05, "N)")

# %% [markdown]
# ## Triangular prismatic slider

# %%
prism = nd.simulate(prismatic_slider.build(), t_end=T_END, h=H)
print(prism.summary())
lam = prism.contact_force("cavity")
fig, axes = plt.subplots(1, 3, figsize=(15, 3.8), constrained_layout=True)
axes[0].plot(prism.t, 1e3 * prism.position("slider")[:, 1])
axes[0].set(xlabel="t [s]", ylabel="y [mm]", title="centre height (drops by c)")
axes[1].plot(prism.t, lam)
axes[1].set(xlabel="t [s]", ylabel="[N]", title="the 12 vertex-plane contact forces")
nd.plotting.plot_step_sizes(prism, axes[2])
late = prism.t > 0.2
print("active contacts at the end:", int(np.sum(lam[-1] > 1e-9)), "of", lam.shape[1],
      "; XY speed after 0.2 s <=", np.abs(prism.velocity("slider")[late, :2]).max())
