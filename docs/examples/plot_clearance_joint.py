"""
A pin joint with play
=====================

A 1 m bar (1 kg) released horizontal on a pin with 0.1 mm of radial play: the bore falls
through the clearance onto the pin, a plastic impact takes ``m g c J / (J + m r^2)``, then
the bar swings in sustained contact. The journal orbit shows where the bore's ends sat
inside the clearance circle. This is the example of the README and of
:doc:`/getting_started`.
"""
# example-start
import nlpdyn as nd

# A 1 m bar (1 kg) released horizontal on a pin with 0.1 mm of radial play, gravity -Y
system = nd.System(gravity=(0, -9.81, 0))
bar = system.add_body("bar", mass=1.0, inertia=(2e-4, 0.0834, 0.0834),
                      position=(0.5, 0, 0))
pin = nd.RevoluteClearance(system.ground, bar, point=(0, 0, 0), axis=(0, 0, 1),
                           radius=0.01, clearance=1e-4, length=0.02,
                           axial_clearance=1e-4, name="pin")
system.add_joint(pin)

res = nd.simulate(system, t_end=1.0, h=1e-3)
print(res.success, res.message)
print(f"smallest gap {res.gap('pin').min():.1e} m, "
      f"largest contact force {res.contact_force('pin').max():.1f} N")
impact = -res.energy_ledger()["impact:pin"].iloc[-1]
closed_form = 1.0 * 9.81 * 1e-4 * 0.0834 / (0.0834 + 1.0 * 0.5**2)
print(f"lost in the impact {impact:.3e} J (closed form {closed_form:.3e} J)")
fig = res.plot_orbit(pin)    # the journal orbit in the clearance circle (matplotlib)
# example-end

# %%
# The overview plot: the bar's centre of mass, the energy and the constraint violation.
res.plot(title="bar on a pin with 0.1 mm clearance")
