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
# # IFToMM spatial slider-crank, ideal joints
#
# CASES.md #5 (seed 001, Tables 1-2; benchmark of Masoudi et al. 2013). Crank AB 0.08 m on
# revolute **A** (ground, about global X at (0, 0.1, 0.12)), rod BC 0.3 m, spherical **B**,
# universal **C** (first axis global X on the slider, second on the rod, perpendicular to X
# and to the rod), slider on prismatic **slide** along X. Masses 0.12 / 0.5 / 2.0 kg, gravity
# -Z, frictionless, 5 s at h = 1e-3 s.
#
# Table 2's rod angular velocity violates the universal joint (it differs by a spin about the
# rod's axis). nlpdyn detects this before stepping and projects the initial velocities onto
# the constraints with the smallest mass-weighted change; the report below says by how much.
#
# Set `NLPDYN_QUICK=1` for a 0.5 s run (what the tests execute).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import nlpdyn as nd
import nlpdyn.plotting
from problems import slider_crank

QUICK = os.environ.get("NLPDYN_QUICK") == "1"
T_END, H = (0.5, 1e-3) if QUICK else (5.0, 1e-3)

res = nd.simulate(slider_crank.build(), t_end=T_END, h=H)
print(res.summary())
print("initial projection:", {k: v for k, v in res.initial_projection.items() if k != "body_changes"})
for body, change in res.initial_projection["body_changes"].items():
    print(f"  {body:<7} |dq| = {change['position']:.2e} m, |dv| = {change['velocity']:.3f}")

# %% [markdown]
# ## Slider position and crank angle
#
# With perfect joints the crank turns fully and the slider oscillates with constant amplitude
# between the closed-form kinematic limits (|C - B| = rod length with B on the crank circle).

# %%
x = res.position("slider")[:, 0]
lo, hi = slider_crank.slider_limits()
A = res.rotation("crank")
crank_angle = np.unwrap(np.arctan2(A[:, 2, 1], A[:, 1, 1]))   # rotation about global X

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.5), constrained_layout=True)
ax1.plot(res.t, x, label="slider x")
ax1.axhline(lo, ls="--", c="k", lw=0.8, label="kinematic limits")
ax1.axhline(hi, ls="--", c="k", lw=0.8)
ax1.set(xlabel="t [s]", ylabel="x [m]", title="slider position")
ax1.legend()
ax2.plot(res.t, crank_angle)
ax2.set(xlabel="t [s]", ylabel="angle [rad]", title="crank angle about X")
print(f"slider x in [{x.min():.6f}, {x.max():.6f}] m; limits [{lo:.6f}, {hi:.6f}] m")

# %% [markdown]
# ## Energy, constraint violation and the reaction at the crank bearing
#
# The method is first order: energy is not an invariant of the discrete motion (it drifts by
# O(h), see `benchmarks/energy_drift.py`), and each step leaves an O(h^2) constraint
# violation that the next step corrects (it does not accumulate).

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.5), constrained_layout=True)
nd.plotting.plot_energy(res, axes[0])
nd.plotting.plot_constraint_violation(res, axes[1])
force = np.linalg.norm(res.reaction_force("A"), axis=1)
axes[2].plot(res.t[1:], force)
axes[2].set(xlabel="t [s]", ylabel="|F| [N]", title="reaction force at revolute A")
print(f"energy range {np.ptp(res.energy):.3e} J; max |Phi| {res.stats.constraint_violation.max():.2e}")
