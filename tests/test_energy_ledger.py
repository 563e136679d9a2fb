"""The energy ledger: it closes on every case study, and its columns are the physics they
claim (closed forms for a damper, a driver, a plastic impact; zero for ideal joints as h -> 0)."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import (clearance_pendulum, clearance_slider, free_top, pendulum, prismatic_slider,
                      rom_pendulum, slider_crank, spherical_pendulum, triple_pendulum)

# every case study, in the modes the case studies run
CASES = {
    "pendulum": (pendulum.build, 1e-3, {}),
    "free top": (free_top.build, 1e-3, {}),
    "spherical pendulum": (spherical_pendulum.build, 1e-3, {}),
    "#1 tube": (clearance_slider.build, (1e-3, 1e-2), {}),
    "#2 triangular slider": (prismatic_slider.build, (1e-3, 1e-2), {}),
    "#3 fixed h": (clearance_pendulum.build, 1e-3, {}),
    "#3 seed's nlp scheme": (clearance_pendulum.build, (1e-3, 2e-3), {"step_control": "nlp"}),
    "#3 ipopt": (clearance_pendulum.build, 1e-3, {"solver": "ipopt"}),
    "#3 projection": (clearance_pendulum.build, 1e-3, {"projection": True}),
    "#3 end_normal": (clearance_pendulum.build, 1e-3, {"contact": "end_normal"}),
    "#5 ideal": (slider_crank.build, 1e-3, {}),
    "#5 spherical clearance": (lambda: slider_crank.build(spherical_clearance=1e-4), 1e-3, {}),
    "#5 revolute clearance": (lambda: slider_crank.build(revolute_clearance=1e-4), 1e-3, {}),
    "#5 penalty": (lambda: slider_crank.build(revolute_clearance=1e-4, model="penalty"), 1e-3, {}),
    "#6 Lankarani-Nikravesh": (lambda: triple_pendulum.build("ln"), 1e-3, {}),
    "#6 Kelvin-Voigt": (lambda: triple_pendulum.build("kv"), 1e-3, {}),
    "#7 range of motion": (rom_pendulum.build, 2e-4, {}),
}


def _works(ledger):
    return [c for c in ledger.columns if c.split(":")[0] in ("work", "impact", "contact")]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_ledger_closes_on_every_case_study(case):
    """total - total[0] = sum of the works + residual, row by row, to round-off; the total is
    the result's mechanical energy; the solvers' part of the residual is at their tolerance."""
    build, h, options = CASES[case]
    res = nd.simulate(build(), t_end=0.3, h=h, progress=False, **options)
    assert res.success
    ledger = res.energy_ledger()
    assert len(ledger) == len(res.t) and np.array_equal(ledger.index, res.t)
    assert np.array_equal(ledger.total, res.energy)
    scale = 1.0 + np.abs(ledger.kinetic).max() + np.abs(ledger.total).max()
    closure = ledger.total - ledger.total[0] - ledger[_works(ledger)].sum(axis=1) - ledger.residual
    assert np.abs(closure).max() <= 1e-12 * scale                    # identity tier
    parts = ledger[[f"residual:{p}" for p in ("gyroscopic", "potential", "projection", "solver")]]
    assert np.abs(parts.sum(axis=1) - ledger.residual).max() <= 1e-12 * scale
    # the step's EOM holds to the solver tolerance (1e-8 IPOPT, gap_tol in the contact iterations)
    assert np.abs(ledger["residual:solver"]).max() <= 1e-8 * scale
    if not options.get("projection"):
        assert (ledger["residual:projection"] == 0).all()


def test_ledger_columns_name_every_agent():
    res = nd.simulate(slider_crank.build(revolute_clearance=1e-4), t_end=0.05, h=1e-3, progress=False)
    cols = list(res.energy_ledger().columns)
    assert cols[:2] == ["kinetic", "gravity"] and "total" in cols
    for joint in ("B", "C", "slide"):
        assert f"work:{joint}" in cols
    assert {"impact:A", "contact:A", "residual"} <= set(cols)
    assert "work:gravity" not in cols            # gravity's energy is its stored column


def test_damper_work_is_the_damped_oscillators_dissipation():
    """A 1 kg mass on a spring-damper (k = 100 N/m, c = 2 N s/m), no gravity, released 0.1 m
    from rest: the damper's column is the energy the closed-form damped oscillation loses,
    to first order in h; the spring's stored energy is its own column."""
    k, c, m, x0, t_end = 100.0, 2.0, 1.0, 0.1, 1.0
    losses = {}
    for h in (2e-3, 1e-3):
        s = nd.System(gravity=(0, 0, 0))
        mass = s.add_body("mass", m, (1, 1, 1), position=(x0, 0, 0))
        s.add_joint(nd.Prismatic(s.ground, mass, point=(0, 0, 0), axis=(1, 0, 0), name="guide"))
        s.add_force(nd.SpringDamper(s.ground, (-1, 0, 0), mass, (x0, 0, 0), stiffness=k, damping=c,
                                    free_length=1.0, name="spring"))
        res = nd.simulate(s, t_end=t_end, h=h, progress=False)
        ledger = res.energy_ledger()
        assert np.allclose(ledger["stored:spring"], 0.5 * k * (res.position("mass")[:, 0]) ** 2)
        wn, zeta = np.sqrt(k / m), c / (2 * np.sqrt(k * m))
        wd = wn * np.sqrt(1 - zeta**2)
        t = t_end
        x = x0 * np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t))
        v = -x0 * wn / np.sqrt(1 - zeta**2) * np.exp(-zeta * wn * t) * np.sin(wd * t)
        exact_loss = 0.5 * k * x0**2 - (0.5 * k * x**2 + 0.5 * m * v**2)
        losses[h] = (-ledger["work:spring"].iloc[-1], exact_loss)
    errors = [abs(a - b) for a, b in losses.values()]
    assert errors[1] / errors[0] < 0.6                              # first order in h
    assert losses[1e-3][0] == pytest.approx(losses[1e-3][1], rel=0.05)


def test_driver_work_is_the_energy_it_feeds_in():
    """A bar driven at a constant 2 rad/s about a horizontal pin from hanging down to
    horizontal: the driver does m g L/2 of work (kinetic energy unchanged), to first order
    in h; the ideal joint it drives does no work, up to the discretisation (-> 0 with h)."""
    m, L, omega = 1.0, 1.0, 2.0
    t_end = (np.pi / 2) / omega
    out = {}
    for h in (2e-3, 1e-3):
        s = nd.System(gravity=(0, 0, -9.81))
        bar = s.add_body("bar", m, (1e-4, m * L**2 / 12, m * L**2 / 12), position=(0, 0, -L / 2),
                         orientation=nd.rotations.from_rotation_vector([0, np.pi / 2, 0]),
                         velocity=(omega * L / 2, 0, 0), angular_velocity=(0, 0, 0))
        joint = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0), name="pin"))
        s.add_joint(nd.RotationDriver(joint, angle=lambda t: -omega * t, name="motor"))
        res = nd.simulate(s, t_end=t_end, h=h, progress=False)
        ledger = res.energy_ledger()
        out[h] = ledger["work:motor"].iloc[-1], ledger["work:pin"].iloc[-1]
    exact = m * 9.81 * L / 2
    err = [abs(out[h][0] - exact) for h in (2e-3, 1e-3)]
    assert out[1e-3][0] == pytest.approx(exact, rel=0.01)
    assert err[1] / err[0] < 0.6
    assert abs(out[1e-3][1]) < 0.6 * abs(out[2e-3][1])


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["euler", None])
def test_gyroscopic_residual_is_all_a_free_top_changes(scheme):
    """A torque-free top: nothing acts on it, so its energy change is the gyroscopic term's
    alone: with the seed's "euler" (explicit term) it shrinks with h; the default midpoint
    takes the term at the step's mean velocity, where it does no work, so the energy is kept
    within 1e-8 of itself (its iterations stop at 1e-12 of the velocities a step)."""
    change = {}
    for h in (2e-3, 1e-3):
        ledger = nd.simulate(free_top.build(), t_end=1.0, h=h, scheme=scheme,
                             progress=False).energy_ledger()
        assert np.allclose(ledger["residual:gyroscopic"], ledger.total - ledger.total[0], atol=1e-12)
        change[h] = abs(ledger.total.iloc[-1] - ledger.total[0])
    if scheme == "euler":
        assert change[1e-3] < 0.6 * change[2e-3]
    else:
        assert max(change.values()) < 1e-8 * ledger.total[0]


def test_ledger_survives_save_and_load(tmp_path):
    res = nd.simulate(clearance_pendulum.build(), t_end=0.05, h=1e-3, progress=False)
    res.save(tmp_path / "run.npz")
    back = nd.Result.load(tmp_path / "run.npz")
    a, b = res.energy_ledger(), back.energy_ledger()
    assert list(a.columns) == list(b.columns)
    assert np.array_equal(a.to_numpy(), b.to_numpy())


def test_ode_results_have_a_ledger_too():
    """simulate_ode: the works are quadratures between output points, so the residual is their
    error; the ledger still closes."""
    s = nd.System(gravity=(0, 0, -9.81))
    bob = s.add_body("bob", 1.0, (1e-3, 1e-3, 1e-3), position=(0.1, 0, -0.5))
    s.add_force(nd.SpringDamper(s.ground, (0, 0, 0), bob, (0.1, 0, -0.5), stiffness=200.0,
                                damping=0.5, free_length=0.4, name="spring"))
    res = nd.simulate_ode(s, t_end=1.0, progress=False)
    ledger = res.energy_ledger()
    assert ledger["work:spring"].iloc[-1] < 0 and "stored:spring" in ledger
    closure = ledger.total - ledger.total[0] - ledger[_works(ledger)].sum(axis=1) - ledger.residual
    assert np.abs(closure).max() <= 1e-12 * (1 + np.abs(ledger.kinetic).max())


def test_output_every_keeps_fewer_points_and_the_same_ledger():
    """output_every = 7: every 7th step and the last are kept; the ledger, the counters and
    the kept states equal those of the full run at the same steps (the ledger is summed step
    by step, whatever is kept)."""
    full = nd.simulate(clearance_pendulum.build(), t_end=0.1, h=1e-3, progress=False)
    thin = nd.simulate(clearance_pendulum.build(), t_end=0.1, h=1e-3, progress=False,
                       output_every=7)
    keep = np.r_[0, np.arange(7, 101, 7), 100]
    assert np.array_equal(thin.t, full.t[keep]) and np.array_equal(thin.q, full.q[keep])
    a, b = full.energy_ledger().iloc[keep], thin.energy_ledger()
    assert a.index.equals(b.index)
    assert list(a.columns) == list(b.columns) and np.allclose(a.to_numpy(), b.to_numpy(), rtol=0,
                                                              atol=1e-15)
    assert np.array_equal(thin.lam, full.lam[keep[1:] - 1])
    assert thin.info["run"]["n_steps"] == 100 == full.stats.n_steps
    assert thin.info["run"]["min_gap"] == full.gaps[1:].min()
    assert "100 steps, 15 kept (output_every = 7)" in thin.summary()
    with pytest.raises(ValueError, match="output_every"):
        nd.simulate(clearance_pendulum.build(), t_end=0.01, h=1e-3, output_every=0, progress=False)


@pytest.mark.parametrize("name", ["kinetic", "potential", "element_potentials", "contact_points",
                                  "recorded_step_forces_midpoint", "friction_force"])
def test_columns_by_chunks_are_casadis_map_bit_for_bit(name):
    """The result's per-step evaluations (``map_columns``: a map of 256 columns built once,
    called through the buffer interface) give what an n-column ``Function.map`` gives, for
    n below, at and across a chunk's size."""
    from nlpdyn.fastcall import map_columns
    cs = clearance_pendulum.build().compile()
    f = getattr(cs, name)
    rng = np.random.default_rng(3)
    for n in (1, 256, 600):
        args = [rng.normal(size=(f.size1_in(i), n)) for i in range(f.n_in())]
        ref = f.map(n)(*args)
        ref = [np.asarray(r) for r in (ref if isinstance(ref, (list, tuple)) else [ref])]
        got = map_columns(f, *args)
        got = got if isinstance(got, list) else [got]
        assert all(a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
                   for a, b in zip(ref, got)), n
