"""
Case study: the IFToMM spatial slider-crank
===========================================

The main job of the README (``python -m nlpdyn slider_crank --t-end 5 --h 1e-3``) from
Python: the spatial slider-crank of :doc:`/CASES` (#5) with ideal joints over 5 s at
h = 1e-3, its slider checked against the closed-form kinematic limits, and the same
mechanism with 0.1 mm of clearance in the ball joint B for 1 s.
"""
import matplotlib.pyplot as plt

import nlpdyn as nd

try:
    from problems import slider_crank          # from the repository root
except ImportError:
    from nlpdyn_problems import slider_crank   # installed with nlpdyn

res = nd.simulate(slider_crank.build(), t_end=5.0, h=1e-3)
lower, upper = slider_crank.slider_limits()
x = res.position("slider")[:, 0]
print(res.success, res.message, f"{len(res.t) - 1} steps")
print(f"slider x in [{x.min():.4f}, {x.max():.4f}] m, "
      f"closed-form limits [{lower:.4f}, {upper:.4f}] m")
print(f"energy range {res.energy.max() - res.energy.min():.2e} J "
      f"of {res.energy[0]:.3f} J")

# %%
# The overview plot with the closed-form limits drawn on the slider's panel.


def limits(res, panels):
    for value in (lower, upper):
        panels["position:slider"].axhline(value, color="k", ls=":", lw=0.8)


res.plot(title="slider-crank, ideal joints", extra=limits)

# %%
# Clearance in the ball joint B (0.1 mm, complementarity gaps): the crank still turns, and
# the gap between ball and socket opens and closes once per turn.
clear = nd.simulate(slider_crank.build(spherical_clearance=1e-4), t_end=1.0, h=1e-3)
fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(clear.t, 1e3 * clear.gap("B").min(axis=1))
ax.set_xlabel("t [s]")
ax.set_ylabel("gap at B [mm]")
ax.set_title("ball joint B with 0.1 mm clearance")
fig.tight_layout()
