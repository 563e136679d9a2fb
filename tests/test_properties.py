"""Property-based tests (Hypothesis): random valid models run soundly, failed runs return a
consistent partial result, and one injected mistake in a model or a setting is refused with
a ModelError naming it before any step. The models are drawn by ``tests/strategies.py``.

Budget: the profile ``ci`` (the default; CI runs it) is derandomized (the same examples every
run, no example database) and bounded: the whole file takes ~40 s on this 2-core machine.
``NLPDYN_HYPOTHESIS_PROFILE=long`` draws 10x as many fresh random examples (~6 min), for
local runs:

    NLPDYN_HYPOTHESIS_PROFILE=long python -m pytest -q -p no:cacheprovider tests/test_properties.py

Tolerances (justified where they are used): identities (the energy ledger's closure) at
1e-12 of the energy scale; physics (constraint violation, energy growth) by the first-order
method's error bounds for the generated speeds and frequencies.
"""
from __future__ import annotations

import os
from unittest import mock

import casadi as ca
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, given, note, settings
from hypothesis import strategies as st

import nlpdyn as nd
import strategies as S          # tests/strategies.py (tests/ is on sys.path under pytest)
from nlpdyn.stepper import Stepper

# ---------------------------------------------------------------- budget

settings.register_profile(
    "nlpdyn-ci", deadline=None, derandomize=True, database=None, print_blob=True,
    # no "explain" phase: it re-runs a failing example thousands of times (minutes here)
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much])
settings.register_profile("nlpdyn-long", settings.get_profile("nlpdyn-ci"), derandomize=False)

PROFILE = os.environ.get("NLPDYN_HYPOTHESIS_PROFILE", "ci")
BUDGETS = {   # max_examples per test; ci: ~0.1 s per simulated example on this machine
    "ci": {"valid": 400, "failing": 100, "invalid": 25, "unrefused": 4},     # invalid: per kind
    "long": {"valid": 4000, "failing": 1000, "invalid": 250, "unrefused": 20},
}
if PROFILE not in BUDGETS:
    raise ValueError(f"NLPDYN_HYPOTHESIS_PROFILE must be one of {sorted(BUDGETS)}, got {PROFILE!r}")


def budget(test, **extra):
    return settings(settings.get_profile(f"nlpdyn-{PROFILE}"),
                    max_examples=BUDGETS[PROFILE][test], **extra)


IDENTITY = 1e-12
MAX_PENETRATION = 1e-9      # the stepper's default for the iterated contact schemes (10 gap_tol)

# ---------------------------------------------------------------- checks shared by the tests


def _ledger_works(ledger):
    return [c for c in ledger.columns if c.split(":")[0] in ("work", "impact", "contact")]


def assert_consistent(res, n_bodies, t_end, output_every):
    """Shapes and times of a result, complete or partial."""
    assert isinstance(res, nd.Result)
    assert isinstance(res.message, str) and res.message.strip()
    n = len(res.t)
    assert n >= 1 and res.t[0] == 0.0
    assert np.all(np.diff(res.t) > 0), "output times must increase"
    assert res.q.shape == (n, 7 * n_bodies) and res.v.shape == (n, 6 * n_bodies)
    assert res.h.shape == (n - 1,) and np.all(res.h > 0)
    for arr in (res.energy, res.kinetic_energy, res.potential_energy):
        assert arr.shape == (n,)
    assert res.stats.n_steps == n - 1 and len(res.stats.constraint_violation) == n - 1
    assert res.mu.shape[0] == n - 1 and res.lam.shape[0] == n - 1 and res.gaps.shape[0] == n
    assert res.info["run"]["n_steps"] >= n - 1            # the counters cover every step
    if output_every == 1:
        assert res.info["run"]["n_steps"] == n - 1
        assert np.allclose(res.h, np.diff(res.t), rtol=0, atol=1e-12)
    if res.success:
        assert res.status == 0 and abs(res.t[-1] - t_end) <= IDENTITY
    else:
        assert res.status == -1 and res.t[-1] < t_end


def assert_finite(res):
    arrays = {"t": res.t, "q": res.q, "v": res.v, "h": res.h, "energy": res.energy,
              "kinetic_energy": res.kinetic_energy, "potential_energy": res.potential_energy,
              "mu": res.mu, "lam": res.lam, "gaps": res.gaps}
    bodies = {**{k: v[2] for k, v in {**res.constraint_rows, **res.gap_rows}.items()},
              **res.force_elements}
    for name, w in res.wrenches.items():
        # an element's moment on the ground is NaN by design where it has no reaction point
        # (moments about the bodies' centres of mass do not add up:
        # assembly._wrenches_from_generalised); its force there must be finite
        ground = [j for j, b in enumerate(bodies[name]) if b == "ground"]
        arrays[f"wrench {name}"] = np.delete(w, ground, axis=1)
        arrays[f"wrench {name} (force on the ground)"] = w[:, ground, :3]
    arrays.update({f"contact point {k}": w for k, w in res.contact_points.items()})
    arrays.update({f"contact vector {k}": w for k, w in res.contact_vectors.items()})
    arrays.update({f"ledger {k}": np.asarray(w) for k, w in res.ledger.items()})
    for name in ("eom_residual", "constraint_violation", "norm_error", "complementarity",
                 "projection_change", "contact_error", "projection_energy"):
        arrays[f"stats.{name}"] = getattr(res.stats, name)
    if res.gaps.shape[1]:
        arrays["stats.min_gap"] = res.stats.min_gap
    for name, arr in arrays.items():
        assert np.all(np.isfinite(arr)), f"{name} is not finite"


def assert_ledger_closes(res):
    """total - total[0] = the works + residual, row by row, to round-off (the identity of
    tests/test_energy_ledger.py, here on random models and partial runs)."""
    ledger = res.energy_ledger()
    assert len(ledger) == len(res.t) and np.array_equal(ledger.total, res.energy)
    scale = 1.0 + np.abs(ledger.kinetic).max() + np.abs(ledger.total).max()
    closure = ledger.total - ledger.total[0] - ledger[_ledger_works(ledger)].sum(axis=1) \
        - ledger.residual
    assert np.abs(closure).max() <= IDENTITY * scale
    parts = ledger[[f"residual:{p}" for p in ("gyroscopic", "potential", "projection", "solver")]]
    assert np.abs(parts.sum(axis=1) - ledger.residual).max() <= IDENTITY * scale


def _classify(spec):
    event(f"{len(spec.bodies)} bodies")
    event("clearance" if spec.has_clearance else "ideal joints only")
    if spec.conservative:
        event("conservative")


# ---------------------------------------------------------------- 1, 2: valid models


@pytest.mark.slow
@budget("valid")
@given(spec=st.integers(0, 3).flatmap(lambda w: S.systems(clearance_weight=w)),
       output_every=st.sampled_from((1, 1, 2, 3)))
def test_valid_models_run_soundly(spec, output_every):
    """A valid model (1-4 bodies; ideal, clearance and no joints; drivers; springs, bushings
    and loads; gravity on or off; see tests/strategies.py) never raises; its run is either
    complete or a consistent partial result with a reason, and a complete run keeps the
    joints, the gaps, the energy and the ledger within the method's bounds."""
    _classify(spec)
    res = nd.simulate(S.build(spec), spec.t_end, spec.h, progress=False,
                      output_every=output_every)     # a ModelError here fails: the model is valid
    assert_consistent(res, len(spec.bodies), spec.t_end, output_every)
    assert_finite(res)
    assert_ledger_closes(res)
    run = res.info["run"]
    note(f"run: {run}")
    if not res.success:
        event("run stopped early")
        return
    # Joints: the rows are linearised at the start of each step and the next step's rows
    # aim at Phi = 0 again, so the violation is one step's linearisation error and does not
    # accumulate (README, "Accuracy"): ~1/2 (h w)^2 l for a lever l <= the model size, in m
    # (point rows), or ~1/2 (h w)^2 (direction rows). The generated motion stays below
    # w ~ 5 rad/s (initial <= 3.5 rad/s, drivers <= 2 rad/s, modes <= 30 rad/s at small
    # amplitude), 1/2 (h w)^2 <= 1.3e-5 at h = 1e-3: 1e-3 of the size leaves room for the
    # translational terms (measured worst over >1000 random models: 1.1e-5 of the size).
    assert run["max_constraint_violation"] <= 1e-3 * max(1.0, spec.size)
    # Gaps: a step is accepted only with every gap >= -max_penetration (iterated contact
    # schemes; the default is "cone").
    if res.gaps.shape[1]:
        assert run["min_gap"] >= -MAX_PENETRATION * (1 + 1e-9)
        assert run["max_contact_error"] <= MAX_PENETRATION * (1 + 1e-9)
    if spec.conservative:
        assert_energy_does_not_grow(spec, res)


def assert_energy_does_not_grow(spec, res):
    """No damper, driver, load or impact: the mechanical energy may only show the method's
    error. The step is first order (semi-implicit Euler with explicit forces and gyroscopic
    term): its energy oscillates with amplitude ~ h/2 |P|, P the power exchanged between
    kinetic and stored energy, |P| <= Omega E_ref for motion at angular frequencies <= Omega
    carrying E_ref = max T + range V; the explicit gyroscopic term adds a drift ~ h w^2 T per
    unit time, i.e. h w T (w t_end) with w t_end < 0.3 here. So growth <= h Omega E_ref, with
    Omega = the largest angular speed seen + sqrt(g / 0.1 m) with gravity (levers >= 0.1 m) +
    OMEGA_MAX with springs or bushings (their modes, bounded by the strategy). Round-off
    floor: 1e-12 of the energies (the gravity potential's origin is arbitrary). Measured
    worst over ~1000 random conservative models: 0.3 of this bound."""
    T, V = res.kinetic_energy, res.potential_energy
    w_max = max(np.linalg.norm(res.angular_velocity(b.name), axis=1).max() for b in spec.bodies)
    omega = (w_max + np.sqrt(np.linalg.norm(spec.gravity) / 0.1)
             + (S.OMEGA_MAX if spec.forces else 0.0))
    e_ref = T.max() + np.ptp(V)
    floor = IDENTITY * (1.0 + np.abs(res.energy).max() + T.max())
    growth = res.energy.max() - res.energy[0]
    note(f"energy growth {growth:.3e} J, bound {spec.h * omega * e_ref:.3e} + {floor:.1e} J")
    assert growth <= spec.h * omega * e_ref + floor


@pytest.mark.slow
@budget("failing")
@given(spec=S.systems(max_forces=1), data=st.data())
def test_failed_run_returns_a_consistent_partial_result(spec, data):
    """A load that turns NaN after a random time t_bad (between grid points) fails every step
    that starts after it, at every h and with every solver: the run stops there at the
    latest and returns success False, a message naming the time, and everything up to the
    last accepted step, consistent and finite, its ledger closed."""
    _classify(spec)
    n_steps = round(spec.t_end / spec.h)
    t_bad = spec.h * (data.draw(st.integers(0, n_steps - 2), label="grid step")
                      + data.draw(st.floats(0.1, 0.9), label="fraction of a step"))
    victim = data.draw(st.sampled_from([b.name for b in spec.bodies]), label="poisoned body")
    options = dict(max_retries=data.draw(st.integers(0, 2), label="max_retries"),
                   fallback=data.draw(st.booleans(), label="fallback"))
    output_every = data.draw(st.sampled_from((1, 2, 3)), label="output_every")
    system = S.build(spec)
    system.add_force(nd.PointForce(
        system.body(victim), name="poison",
        force=lambda t, state: ca.vertcat(0, 0, ca.if_else(t > t_bad, np.nan, 0.0))))
    res = nd.simulate(system, spec.t_end, spec.h, progress=False, output_every=output_every,
                      **options)
    assert res.success is False
    assert "failed" in res.message and "t = " in res.message
    assert_consistent(res, len(spec.bodies), spec.t_end, output_every)
    # no step past the first one that ends after t_bad (the model may stop earlier on its
    # own: with tight clearances and no retries a step can fail to meet its gaps)
    assert res.t[-1] <= t_bad + spec.h * (1 + 1e-9)
    if res.t[-1] <= t_bad:
        event("stopped before the poison")
    assert_finite(res)
    assert_ledger_closes(res)


# ---------------------------------------------------------------- 3: one mistake


def _refuse_step(self, *args, **kwargs):
    raise AssertionError("a step was taken before the input was validated")


# every kind of S.MISTAKES is refused as it should be
REFUSED = tuple(S.MISTAKES)


def assert_refused_naming(mistake):
    note(f"mistake: {mistake.kind}, culprit {mistake.culprit}")
    with mock.patch.object(Stepper, "step", _refuse_step):
        with pytest.raises(nd.ModelError) as err:
            nd.simulate(mistake.system(), mistake.spec.t_end, mistake.spec.h, progress=False,
                        **dict(mistake.run))
    problems = err.value.problems
    note(f"problems: {problems}")
    assert problems and any(mistake.culprit in p for p in problems)
    # nothing else is blamed: every line names the culprit (a driver on a joint that got a
    # foreign body is itself attached to it, and says so under its own name)
    stem = mistake.culprit.rstrip("'")
    assert all(stem in p for p in problems), problems


@pytest.mark.slow
@pytest.mark.parametrize("kind", REFUSED)
@budget("invalid")
@given(data=st.data())
def test_one_mistake_is_refused_naming_the_culprit(kind, data):
    """A valid model with exactly one mistake of ``kind`` (body data, joint geometry,
    clearances, stiffness and damping, duplicate names, a body from another system, a bad
    setting; drawn by S.mistakes) is refused with a ModelError before any step, and every
    problem it lists names the body, element or setting at fault. One test per kind, so
    that each gets its share of the budget."""
    assert_refused_naming(data.draw(S.mistakes((kind,)), label="mistake"))


# ---------------------------------------------------------------- found by the properties


def two_balls():
    """Two bodies on ball joints with 10 um of clearance (ground - a - b), moving at ~0.2 m/s:
    the gaps close within the first step at h = 1e-3. Reduced from the random models on which
    test_valid_models_run_soundly saw runs stop at t = 0 (8 of 1500 random models, all with
    clearances near 1e-5 m; every one of them runs through with qp_solver="proxqp")."""
    s = nd.System(gravity=(0, 0, -9.81))
    a = s.add_body("a", 1.0, (0.01, 0.02, 0.025), position=(0.3, 0, 0), velocity=(0, 0.23, 0),
                   angular_velocity=(-0.3, 0.5, 2.0))
    b = s.add_body("b", 1.0, (0.01, 0.02, 0.025), position=(0.6, 0, 0),
                   velocity=(0.22, 0, 0.13), angular_velocity=(0, 0.12, 1.14))
    s.add_joint(nd.SphericalClearance(s.ground, a, (0, 0, 0), clearance=1e-5, name="ball_a"))
    s.add_joint(nd.SphericalClearance(a, b, (0.45, 0, 0), clearance=1e-5, name="ball_b"))
    return s


@pytest.mark.parametrize("options", [{"scheme": "euler"},
                                     {"scheme": "midpoint", "gap_iterations": 6,
                                      "contact_fallback": None}])
def test_a_retry_does_not_inherit_the_failed_attempts(options):
    """Property: a step retried at h' is the step a fresh stepper takes at h' (each attempt
    starts from the same state). A stepper at h = 1e-3 whose first attempt fails (contact
    iterations not converged) must take, on its retry at h', the first step of a fresh run at
    h'. Scheme "euler"'s retries used to fail down to 1.25e-4 and beyond, with a penetration
    of ~9x the clearance, where a fresh run at 1.25e-4 stepped: qpOASES remembered the failed
    attempts (hot start). The stepper now starts each attempt with fresh QP solvers. The
    midpoint step meets these gaps at h = 1e-3; with 6 contact iterations and no fallback
    its attempts fail down to h' = 1.25e-4."""
    stepper = nd.Stepper(two_balls(), 1e-3, max_retries=3, fallback=False, **options)
    info = stepper.step()
    assert info.retries >= 1 and info.h < 1e-3          # the first attempt did fail
    fresh = nd.simulate(two_balls(), 0.01, info.h, progress=False, max_retries=0,
                        fallback=False, **options)
    assert fresh.success
    assert np.abs(stepper.q - fresh.q[1]).max() <= 1e-9
    assert np.abs(stepper.v - fresh.v[1]).max() <= 1e-9
