"""
Case study: where the energy goes (CASES.md #3)
===============================================

The revolute clearance pendulum of :doc:`/CASES` (#3): a bar on a pin with 0.1 mm radial
and axial clearance, its centre of mass out of plane, released horizontal. The energy ledger
(:doc:`/guide/energy_ledger`) splits what the run lost into impacts, sustained contact
(the bore's jams) and the discretisation's residual; the ideal revolute beside it loses only
its O(h) oscillation.
"""
import matplotlib.pyplot as plt

import nlpdyn as nd

try:
    from problems import clearance_pendulum as cp          # from the repository root
except ImportError:
    from nlpdyn_problems import clearance_pendulum as cp   # installed with nlpdyn

clearance = nd.simulate(cp.build(), t_end=1.0, h=(1e-3, 2e-3))
ideal = nd.simulate(cp.build(ideal=True), t_end=1.0, h=1e-3)
ledger = clearance.energy_ledger()
print(clearance.success, clearance.message, f"{len(clearance.t) - 1} steps")
print(f"energy change: clearance {ledger['total'].iloc[-1] - ledger['total'].iloc[0]:+.2e} J, "
      f"ideal {ideal.energy[-1] - ideal.energy[0]:+.2e} J")
print(f"smallest gap {clearance.gap('pin').min():.1e} m")

# %%
# The ledger's cumulative columns: impacts, sustained contact and the residual add up to the
# change of the total energy, row by row.
fig, ax = plt.subplots(figsize=(7, 3.5))
t = clearance.t
ax.plot(t, ledger["total"] - ledger["total"].iloc[0], "k", label="total - total[0]")
for column in ("impact:pin", "contact:pin", "residual"):
    ax.plot(t, ledger[column], label=column)
ax.set_xlabel("t [s]")
ax.set_ylabel("energy [J]")
ax.legend(loc="lower left")
ax.set_title("clearance pendulum (CASES.md #3): the energy ledger")
fig.tight_layout()
