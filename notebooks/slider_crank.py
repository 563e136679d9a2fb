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
# # IFToMM spatial slider-crank: ideal joints and clearance joints
#
# **Time scheme.** The runs below take the library's default, Moreau's midpoint step (second
# order, no numerical dissipation in stiff elements or sustained contact; the default since
# 2026-11-26). The figures quoted in this notebook's text were measured with it (the full run,
# `MPLBACKEND=Agg python notebooks/slider_crank.py`: 5 min on a shared 2-core machine), except
# where they are said to be from the seed's semi-implicit Euler (`scheme="euler"`, the
# default before).
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
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import nlpdyn as nd
import nlpdyn.plotting
try:
    from nlpdyn_problems import slider_crank   # installed (pip install -e .)
except ImportError:                    # the repository root on PYTHONPATH
    from problems import slider_crank

QUICK = os.environ.get("NLPDYN_QUICK") == "1"
T_END, H = (0.5, 1e-3) if QUICK else (5.0, 1e-3)

res = nd.simulate(slider_crank.build(), t_end=T_END, h=H, progress=False)
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
# With the midpoint step the ideal mechanism's energy (0.765 J) stays within 1.4e-4 J of its
# start over 5 s at h = 1e-3 (full run), and each step leaves a small constraint violation
# that the next step corrects (it does not accumulate: max |Phi| 1.0e-6 over the 5 s).

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.5), constrained_layout=True)
nd.plotting.plot_energy(res, axes[0])
nd.plotting.plot_constraint_violation(res, axes[1])
force = np.linalg.norm(res.reaction_force("A"), axis=1)
axes[2].plot(res.t[1:], force)
axes[2].set(xlabel="t [s]", ylabel="|F| [N]", title="reaction force at revolute A")
print(f"energy range {np.ptp(res.energy):.3e} J; max |Phi| {res.stats.constraint_violation.max():.2e}")

# %% [markdown]
# ## Clearance in the spherical joint B or the revolute joint A (seed 001 section 3.1)
#
# Clearances 0, 1e-3, 0.1 and 1 mm, each run two ways with the same joint data:
# - **penalty** (seed 001's model): the ball joint B with Lankarani-Nikravesh contact
#   (eq. 43), K = 5e6 N/m^1.5, n = 1.5, e = 0.75 (a 0 mm clearance is a penalty joint with no
#   play); the revolute joint A on the `"soft"` bearing data (below); evaluated
#   energy-consistently (`evaluation="implicit"`), h = 2.5e-4 s (`slider_crank.PENALTY_STEP`:
#   the contact's period is ~4 ms);
# - **complementarity** (this project's clearance joints: unilateral gaps, perfectly
#   inelastic impacts; 0 mm is the ideal joint), with the default contact step
#   (`contact="cone"`: impulses along the start-of-step contact Jacobian, gap met exactly at
#   the end of the step), h = 1e-3 s, 2.5e-4 s for 1e-3 mm. `slider_crank.step_size` keeps
#   12 h^2 <= c: beyond it the contact iterations stop converging at joint A (at 1e-3 mm and
#   h = 1e-3 the run fails at t = 0.25 s; measurements in its docstring).
#
# Revolute A's bearing (docs/CASES.md #5, *ours*: the seed's bearing data are missing): pin
# radius 10 mm, bearing length 20 mm, axial clearance equal to the radial one. As a penalty
# joint it has two sets of data (`slider_crank.build(bearing=...)`):
# - `"soft"` (the default, run below): the ball joint's Lankarani-Nikravesh law on 2 strips
#   and on the axial faces. The crank, loaded at B 80 mm from a bearing whose strips sit
#   10 mm apart, cocks by up to 18 deg on it (CASES.md #5) and swings back before its first
#   full turn even with no play, so it cannot be the seed's revolute joint;
# - `"steel"`: the seed's cylindrical law for revolute joints (eq. 44, Pereira et al.) on a
#   steel pin and bore with 4 strips, the axial faces taking the same law. With no play the
#   crank turns like the perfect joint, as in the seed: 1.7301 turns in 1 s against the
#   ideal mechanism's 1.7305 (`python -c "import nlpdyn as nd; from problems import
#   slider_crank as s; r = nd.simulate(s.build(revolute_clearance=0.0, model='penalty',
#   bearing='steel'), 1.0, 1e-3); print(s.crank_angle(r)[-1] / 6.2832)"`; CASES.md #5: 8.61
#   turns in 5 s, ideal 8.61). Its contact vibrates so fast that the impact resolution steps
#   it at ~1.3e-5 s whatever h is (74117 steps and 42 s of CPU time for that 1 s), too slow
#   for this notebook. With 1 mm of play it stops within half a turn (CASES.md #5:
#   0.475-0.508 turns in 5 s at h = 1e-3 to 2.5e-4) where the seed's crank develops about
#   two revolutions before it oscillates about its equilibrium: not reproduced.
#
# The tables: crank turns in 5 s; `back`, when the crank first swings back (nan: it never
# does); the slider's full strokes before that and the `delay` of the last of them against
# the ideal mechanism run at the same h (it makes 8.61 turns at h = 1e-3 and at 2.5e-4; with
# the seed's semi-implicit Euler, 8.89 and 8.68).

# %%
SCENARIO_T = 0.3 if QUICK else 5.0
# the 16 clearance scenarios in one nd.sweep (two processes in full mode), with the steps of
# slider_crank.run_scenarios; the results come back through their files
pool = None if QUICK or (os.cpu_count() or 1) < 2 else ProcessPoolExecutor(2)
ideal = nd.simulate(slider_crank.build(), t_end=SCENARIO_T, h=1e-3, progress=False)
results = {model: {"ideal": ideal} for model in slider_crank.MODELS}
with tempfile.TemporaryDirectory() as tmp:
    table = nd.sweep(slider_crank.sweep_scenario, slider_crank.SWEEP_GRID,
                     t_end=SCENARIO_T, h=slider_crank.scenario_step, executor=pool, save_dir=tmp,
                     progress=False)
    for row in table.itertuples():
        results[row.model][f"{row.joint} c={row.clearance_mm:g} mm"] = nd.Result.load(Path(tmp, row.file))
if pool is not None:
    pool.shutdown()
# the ideal mechanism at every h the runs use: the delays are measured against it
references = slider_crank.ideal_references(results["complementarity"], SCENARIO_T)
for model, runs in results.items():
    print(f"--- {model}")
    print(slider_crank.summary_table(runs, references))

# %% [markdown]
# Small multiples, one figure per clearance joint (the seed's Figs. 8-10 for B, 11-12 for
# A): one row per clearance, one quantity per column: the slider's position, the crank angle
# in turns, and the joint's force on its child along global X and Z. In each panel the
# ideal mechanism (black), the complementarity joint and the penalty joint. The force panels
# show three times the ideal joint's range; the largest peak beyond it is written in the
# panel.

# %%
ideal = results["complementarity"]["ideal"]
for joint, name in (("spherical", "B"), ("revolute", "A")):
    fig, axes = plt.subplots(len(slider_crank.CLEARANCES_MM), 4, figsize=(16, 10),
                             sharex=True, constrained_layout=True)
    fig.suptitle(f"clearance in the {joint} joint {name}")
    ideal_force = slider_crank.joint_force(ideal, name)
    for row, c in enumerate(slider_crank.CLEARANCES_MM):
        label = f"{joint} c={c:g} mm"
        axes[row, 0].plot(ideal.t, ideal.position("slider")[:, 0], "k", lw=0.6, label="ideal")
        axes[row, 1].plot(ideal.t, slider_crank.crank_angle(ideal) / (2 * np.pi), "k", lw=0.6)
        peaks = {}
        for model, style in (("complementarity", dict(c="C0", lw=0.9)),
                             ("penalty", dict(c="C1", lw=0.9, ls="--"))):
            res = results[model][label]
            force = slider_crank.joint_force(res, name)
            axes[row, 0].plot(res.t, res.position("slider")[:, 0], label=model, **style)
            axes[row, 1].plot(res.t, slider_crank.crank_angle(res) / (2 * np.pi), **style)
            for col, k in ((2, 0), (3, 2)):
                axes[row, col].plot(res.t[1:], force[:, k], **style)
                peaks.setdefault(col, []).append((abs(force[:, k]).max(), model))
        for col, k in ((2, 0), (3, 2)):
            ax = axes[row, col]
            ax.plot(ideal.t[1:], ideal_force[:, k], "k", lw=0.6)
            span = max(np.ptp(ideal_force[:, k]), 1.0)
            lo, hi = ideal_force[:, k].min() - span, ideal_force[:, k].max() + span
            ax.set_ylim(lo, hi)
            peak, model = max(peaks[col])
            if peak > max(abs(lo), abs(hi)):
                ax.text(0.02, 0.9, f"peak {peak:.0f} N ({model})", transform=ax.transAxes,
                        fontsize=7)
        axes[row, 0].set_ylabel(f"c = {c:g} mm")
    for ax, title in zip(axes[0], ("slider x [m]", "crank angle [turns]",
                                   f"force of {name} along X [N]",
                                   f"force of {name} along Z [N]")):
        ax.set_title(title)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=7)

# %% [markdown]
# ## Where the energy goes: the ledger of the complementarity clearance runs
#
# `res.energy_ledger()` splits the change of mechanical energy into the plastic impacts'
# loss (`impact:`), the work of sustained contact (`contact:`), the ideal joints' impulses
# (`work:`) and the rest of the time discretisation (`residual`, mostly the explicit
# gyroscopic term). Final values per run (`slider_crank.ledger_table`), then their history.

# %%
for model, runs in results.items():
    print(f"--- {model}")
    print(slider_crank.ledger_table(runs))
print("--- ideal mechanism at the h of the runs")
print(slider_crank.ledger_table({f"ideal h={h:g}": res for h, res in references.items()}))
clearance_runs = [(label, res) for label, res in results["complementarity"].items()
                  if res.gap_rows]
fig, axes = plt.subplots(2, 3, figsize=(15, 6.5), constrained_layout=True, squeeze=False)
for ax, (label, res) in zip(axes.ravel(), clearance_runs):
    ledger = res.energy_ledger()
    name = next(iter(res.gap_rows))
    for column in ("impact", "contact"):
        ax.plot(ledger.index, ledger[f"{column}:{name}"], label=column)
    ax.plot(ledger.index, ledger.residual, label="residual")
    ax.plot(ledger.index, ledger.total - ledger.total[0], "k", lw=0.8, label="total change")
    ax.set(title=label, xlabel="t [s]", ylabel="J")
axes[0, 0].legend(fontsize=7);

# %% [markdown]
# Full 5 s runs, final values in J (`MPLBACKEND=Agg python notebooks/slider_crank.py`, this
# machine; `python -m pytest` runs the quick version):
#
# | complementarity run | h (s) | impact | sustained contact | residual | total change |
# |---|---|---|---|---|---|
# | ideal | 1e-3 | 0 | 0 | -3e-14 | +4.9e-5 |
# | ideal | 2.5e-4 | 0 | 0 | -2e-13 | -1.4e-7 |
# | B 1e-3 mm | 2.5e-4 | -1.4e-6 | -2.1e-6 | -2.9e-7 | -3.1e-6 |
# | B 0.1 mm | 1e-3 | -1.4e-4 | -7.8e-4 | +2e-8 | -9.2e-4 |
# | B 1 mm | 1e-3 | -4.7e-3 | -0.084 | -1e-7 | -0.089 |
# | A 1e-3 mm | 2.5e-4 | -2.6e-5 | -1.7e-4 | -9e-11 | -1.9e-4 |
# | A 0.1 mm | 1e-3 | -0.033 | -0.159 | -8e-9 | -0.190 |
# | A 1 mm | 1e-3 | -0.039 | -0.532 | +6e-9 | -0.572 |
#
# (The ideal runs at 2.5e-4: `slider_crank.ideal_references`; the ideal joints' `work:` is
# below 1.2e-3 J in every run.)
# - The residual is at round-off or below 3e-7 J: the midpoint step adds no drift of its own.
#   (The seed's semi-implicit Euler drifted by +0.026 J in 5 s at h = 1e-3 and a quarter of
#   it at 2.5e-4, through its explicit gyroscopic term.)
# - At 1e-3 mm the clearance joints do almost no work: impacts and sustained contact together
#   take 3.5e-6 J (B) and 1.9e-4 J (A). The previous default contact step
#   (`contact="end_normal"`, with semi-implicit Euler) took 0.085 J (B) and 0.072 J (A) in
#   sustained contact here, and 0.26 / 0.32 J at 0.1 mm (`slider_crank.run_scenarios(contact=
#   "end_normal")`); that artefact is gone.
# - At 0.1 and 1 mm most of the loss is still booked as sustained contact, and it is not the
#   O(h) numerical dissipation the column is meant to show: it does not shrink with h.
#   Joint A, 1 mm, first second (`python -c "from problems import slider_crank as s;
#   [print(h, s.ledger_summary(s.run_scenarios(t_end=1, scenarios=[('A', 'revolute', 1e-3)],
#   h=h)['A'])) for h in (1e-3, 2.5e-4, 1.25e-4)]"`): sustained contact -0.515 / -0.515 /
#   -0.517 J (with the seed's semi-implicit Euler -0.541 / -0.536 / -0.534 J, and with
#   `contact="end_normal"` -0.538 / -0.535 / -0.533 J). Of it, 0.45 / 0.36 / 0.40 J goes in a
#   single step (`contact_step`). Measured with semi-implicit Euler, that step ends at
#   t = 0.282 s (h = 1e-3), and there (`res.gap("A")`, `res.rotation("crank")`,
#   `res.velocity("slider")` of the 1 mm run) both
#   bore ends and a shoulder are closed, the pin is at its largest tilt (5.74 deg, about
#   2c / L = 0.1 rad), and the slider's velocity drops from +0.35 to -0.06 m/s. It behaves
#   as an impact during persistent contact (a finite impulse within one step at every h,
#   with either contact step): a wedging collision like the jams of case #3 (the *Jams*
#   item of the user guide's *Joints, clearance and contact* page, docs/guide/joints.md).
#   No gap opened before it, so the ledger books it as sustained contact.
# - Joint B, 1 mm, first second (same command with `('B', 'spherical', 1e-3)` and h = 1e-3,
#   5e-4, 2.5e-4, 1.25e-4): sustained contact -0.018 / -0.027 / -0.017 / -0.0017 J, the
#   largest single step 5.3e-3 / 1.3e-2 / 2.3e-3 / 5.0e-4 J. With the seed's semi-implicit
#   Euler it was -0.020 / -0.019 / -0.022 / -0.016 J, spread over episodes of rising normal
#   force (5-10 ms each, once per crank turn, at the same crank angle) while the ball slides
#   round the socket, with a single gap that stays closed. With the midpoint step the loss
#   drops tenfold at the smallest h but does not yet follow h: whether it vanishes as h -> 0
#   is open.

# %% [markdown]
# ## The two clearance models compared
#
# The seed (section 3.1, Figs. 8-11): with no clearance the clearance joints behave like the
# perfect ones (constant slider amplitude); growing clearance delays the slider; at 1 mm in
# the revolute joint the crank develops no more than two revolutions, then oscillates about
# its static equilibrium.
#
# Crank turns in 5 s (tables above; ideal mechanism 8.61 turns at h = 1e-3 s and 2.5e-4 s).
# In brackets: the previous default contact step, `contact="end_normal"`, same scenarios
# (`slider_crank.run_scenarios(contact="end_normal")`, with the seed's semi-implicit Euler).
#
# | clearance | complementarity B | complementarity A | penalty B | penalty A |
# |---|---|---|---|---|
# | 0 mm | 8.61 (ideal) | 8.61 (ideal) | 8.26 | 0.88 |
# | 1e-3 mm | 8.61 (7.02) | 8.60 (7.45) | 7.03 | 0.46 |
# | 0.1 mm | 8.58 (1.54) | 2.84 (1.64) | 7.87 | 0.48 |
# | 1 mm | 6.94 (1.68) | 0.51 (0.51) | 4.88 | 0.42 |
# | the seed | constant amplitude at 0 mm, delays growing with c | at 1 mm no more than 2 turns, then oscillates | | |
#
# Slider delay against the ideal run at the same h, at the last full stroke before the crank
# first swings back: complementarity B 0.000 s (1e-3 mm, 8 strokes), 0.012 s (0.1 mm, 8),
# 0.90 s (1 mm, 7 strokes, the crank keeps turning); complementarity A 0.002 s (1e-3 mm, 8),
# 0.22 s (0.1 mm, 3 strokes, swings back at 2.28 s), 0.008 s (1 mm: 1 stroke before the jam,
# swings back at 0.71 s). Penalty B never swings back up to 0.1 mm; at 1 mm it does at
# 3.66 s after 5 strokes; its delay is 0.09 s with no play and 0.42-0.70 s with play.
# Penalty A swings back at 0.32-0.43 s, before its second stroke, with or without play
# (with no play it then rocks and creeps on: 0.88 net turns in 5 s).
#
# - Complementarity (the default contact step: start-of-step normals in sustained contact):
#   clearance -> 0 tends to the ideal joint, and the slider's delay grows with the
#   clearance (B: 0, 0.012, 0.90 s), as in the seed. In B the crank still completes turns at
#   1 mm (6.9 in 5 s). In A it stops: after 2.8 turns at 0.1 mm, and at 1 mm within its
#   first half turn, at the one-step jam of the pin in its bore (previous section). The
#   seed's "at 1 mm the crank develops no more than two revolutions" is reproduced for joint
#   A only, with fewer turns (0.51), and A already stops at 0.1 mm. With the `end_normal`
#   step (in brackets) the crank stopped after about 1.5 turns from 0.1 mm on in both
#   joints: that was the step's O(h) dissipation in sliding contact, not the clearance.
# - Penalty (Lankarani-Nikravesh, e = 0.75, energy-consistent implicit, h = 2.5e-4:
#   `slider_crank.PENALTY_STEP`, impacts resolved in time by shortened steps). With no play
#   the ball joint B is a stiff elastic spring: 8.26 turns (the ideal mechanism 8.61; at
#   h = 6.25e-5, 8.22-8.45 over crank speeds changed by up to 0.6 %, case studies guide), its
#   potential's residual 1.5e-6 J. The evaluation before (backward Euler at h = 1e-3) stopped
#   it after 1.75 turns: that was the numerical damping of the stiff law. With play the
#   law's hysteresis takes 0.05-0.15 J (`work:` in the ledger above): every re-closure of
#   the ball in its socket is an impact with e = 0.75. The revolute joint A swings back
#   before its second stroke at every clearance, also with no play (losing 0.07 J there):
#   on the `"soft"` bearing data (a 10 mm pin, 20 mm long, 2 strips) the compliant pin
#   tilts. With play its hysteresis takes 0.53-0.57 J. On the `"steel"` data (the seed's
#   cylindrical law) A turns like the perfect joint with no play; see the top of this
#   section.
# - h (`python benchmarks/penalty_crank_convergence.py --only B`, default midpoint step,
#   2026-11-27; the reference is h = 6.25e-5): K = 5e6 rings at ~1500 rad/s under the crank's
#   loads (a contact period of ~4 ms). The ball joint B's crank angle is within 0.3 % of the
#   reference at 3 s with no play, and within 1.6 % with 1 mm of play, at every h from 1e-3
#   down. With 1 mm of play the ball rattles and its hysteresis stalls the crank: after
#   4.95-4.96 turns at h = 6.25e-5 over 7 initial crank speeds changed by up to 0.6 % of
#   themselves. The stall is a threshold (whether the crank clears one more turn): from
#   h = 2.5e-4 down every speed stalls there, at 1e-3 six of the 7 and one a turn late
#   (mean 5.10 turns against 4.953, +3.0 %; `--only B --play 1 --spread 3 --spread-step
#   2e-3 --h 1e-3 5e-4 2.5e-4 1.25e-4 6.25e-5`, 2026-11-28, case studies guide). The loss
#   before the stall is in the ball's long contacts after slow re-closures, where the
#   law's damping (proportional to 1 / v_imp) makes the contact overdamped; the impacts
#   before them are therefore stepped at omega h up to `hysteresis_resolution` = 0.0625
#   (at 0.25, 4 of the 7 stalled a turn late at h = 1e-3). With the ball's vibration stepped at omega h up to 1.5 (before
#   `sustained_resolution`), it re-opened at the wrong phase, and the 1e-3 run stalled a
#   turn early (3.17 turns).
#   Revolute joint A on the `"steel"` data with 1 mm of play stalls within its first turn
#   and rocks. Its rattle is chaotic: a change of 1e-6 in the initial crank speed moves the
#   rocking's angle at 2 s by 12 %, so one run's number does not converge, but their
#   distribution does. Over 13 crank speeds (changed by -6e-5 ... 6e-5 of themselves) the
#   largest angle in 1 s is 0.575 +- 0.021 turns at h = 1e-3 and 0.581 at 6.25e-5 (0.576
#   with the bearing's impacts at omega h <= 0.03125): at 1e-3 within 1.0 % (standard
#   error 1.6 %) of the finest (`python benchmarks/penalty_crank_convergence.py --only A
#   --bearing steel --play 1 --spread 6 --h 1e-3 --t-end 1 --jobs 1`, and `--h 6.25e-5`,
#   2026-11-28, 47-59 s of CPU per run). At 1e-3 it used to sit 8 % high, and 3 of 8 runs failed: the bearing's
#   contact (omega ~5e4 rad/s) needs steps below h / 64, and a re-closure late in a step
#   went unseen (force elements guide, "Impacts resolved in time").
# - What differs: with no or little play the complementarity joints behave like the ideal
#   joint. The penalty ball joint does too with no play, but a micrometre of play already
#   costs it 1.5 turns (each re-closure is a hysteresis impact), and the penalty revolute
#   joint stalls at every clearance on the `"soft"` bearing data. What the two models share
#   is the ordering (more clearance, more delay and less motion) and a crank at joint A that stops
#   turning at 1 mm.
