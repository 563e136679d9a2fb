"""Bad input is refused before stepping with errors that name the culprit; failures mid-run
keep the trajectory; the step program is built once per run."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from problems import pendulum, slider_crank


def simple():
    s = nd.System(gravity=(0, 0, -9.81))
    b = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.1, 0.1), position=(0.5, 0, 0))
    return s, b


@pytest.mark.parametrize("kwargs, words", [
    (dict(mass=-1.0), ["bar", "mass"]),
    (dict(mass=0.0), ["bar", "mass"]),
    (dict(inertia=(1.0, -1.0, 1.0)), ["bar", "positive definite"]),
    (dict(inertia=(1.0, 1.0, 5.0)), ["bar", "triangle"]),
    (dict(orientation=(1.0, 0.1, 0, 0)), ["bar", "unit norm"]),
    (dict(position=(0, np.nan, 0)), ["bar", "position"]),
])
def test_bad_body_data(kwargs, words):
    s = nd.System()
    data = dict(name="bar", mass=1.0, inertia=(1, 1, 1))
    data.update(kwargs)
    s.add_body(**data)
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=1.0, h=1e-3, progress=False)
    for w in words:
        assert w in str(err.value)


def test_bad_joint_data_named():
    s, b = simple()
    s.add_joint(nd.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 1.0, 0.1), name="hinge"))
    with pytest.raises(nd.ModelError, match="revolute joint 'hinge': axis must be a unit vector"):
        s.compile()


def test_every_problem_reported_at_once():
    s = nd.System()
    a = s.add_body("a", mass=-1, inertia=(1, 1, 1))
    b = s.add_body("b", mass=1, inertia=(1, 1, 1))
    s.add_joint(nd.Universal(a, b, (0, 0, 0), (1, 0, 0), (1, 0, 0), name="cardan"))
    s.add_joint(nd.Spherical(b, b, (0, 0, 0), name="self"))
    other = nd.System().add_body("stranger", mass=1, inertia=(1, 1, 1))
    s.add_joint(nd.Spherical(a, other, (0, 0, 0), name="alien"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    msg = str(err.value)
    for piece in ("body 'a': mass", "'cardan': axis1 and axis2 must be perpendicular",
                  "'self': connects body 'b' to itself", "'alien': body 'stranger' is not part"):
        assert piece in msg
    assert len(err.value.problems) == 4


def test_duplicate_names_and_reserved_ground():
    s = nd.System()
    s.add_body("x", mass=1, inertia=(1, 1, 1))
    s.add_body("x", mass=1, inertia=(1, 1, 1))
    s.add_body("ground", mass=1, inertia=(1, 1, 1))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    assert "'x' is used more than once" in str(err.value)
    assert "reserved for the ground" in str(err.value)


@pytest.mark.parametrize("h, t_end, words", [
    ((2e-3, 1e-3), 1.0, "h_min > h_max"),
    (-1e-3, 1.0, "h_min must be positive"),
    (0.0, 1.0, "h_min must be positive"),
    (1e-3, 0.0, "t_end must be"),
    (1e-3, -1.0, "t_end must be"),
])
def test_bad_run_parameters(h, t_end, words):
    with pytest.raises(nd.ModelError, match=words):
        nd.simulate(pendulum.build(), t_end=t_end, h=h, progress=False)


@pytest.mark.parametrize("option", [dict(step_control="magic"), dict(form="weak"),
                                    dict(solver="cg"), dict(initial_conditions="guess"),
                                    dict(check_tol=-1)])
def test_bad_settings(option):
    with pytest.raises(nd.ModelError):
        nd.simulate(pendulum.build(), t_end=1.0, h=1e-3, progress=False, **option)


def test_locked_after_compile():
    s = pendulum.build()
    s.compile()
    with pytest.raises(RuntimeError, match="locked"):
        s.add_body("late", mass=1, inertia=(1, 1, 1))


def test_inconsistent_velocities_refused_or_projected():
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(slider_crank.build(), t_end=0.01, h=1e-3, progress=False,
                    initial_conditions="check")
    assert "universal joint 'C'" in str(err.value) and "velocity residual" in str(err.value)
    res = nd.simulate(slider_crank.build(), t_end=0.01, h=1e-3, progress=False)
    assert res.initial_projection["changed"]
    assert res.initial_projection["velocity_change"] > 0


def test_inconsistent_position_projected_and_impossible_refused():
    s, b = simple()
    j = s.add_joint(nd.Prismatic(s.ground, b, point=(0.5, 0, 0), axis=(1, 0, 0)))
    s.add_joint(nd.TranslationDriver(j, displacement=lambda t: 0.02 + t))
    res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False)
    assert res.initial_projection["position_change"] == pytest.approx(0.02, rel=1e-9)
    assert np.abs(res.position("bar")[0] - (0.52, 0, 0)).max() <= 1e-12

    s, b = simple()   # two spherical joints to ground 1.0 m apart on a body 0.6 m apart
    s.add_joint(nd.Spherical(s.ground, b, point=(0.2, 0, 0)))
    s.add_joint(nd.Programmed([b], lambda t, st: ca.sumsqr(st.point((0.8, 0, 0)) - ca.DM([1.2, 0, 0])),
                              name="reach"))
    with pytest.raises(nd.ModelError, match="cannot be made consistent"):
        nd.simulate(s, t_end=0.01, h=1e-3, progress=False)


def contradictory_drivers(t_switch=0.3):
    s = nd.System(gravity=(0, 0, 0))
    b = s.add_body("block", mass=1.0, inertia=(1, 1, 1))
    j1 = s.add_joint(nd.Prismatic(s.ground, b, point=(0, 0, 0), axis=(1, 0, 0), name="rail"))
    s.add_joint(nd.TranslationDriver(j1, displacement=lambda t: 0.1 * t, name="drive"))
    s.add_joint(nd.Programmed([b], lambda t, st: st.r[0] - 0.1 * t - ca.if_else(t > t_switch, 0.5, 0),
                              name="conflict"))
    return s


def test_solver_failure_keeps_partial_trajectory():
    res = nd.simulate(contradictory_drivers(), t_end=1.0, h=1e-2, progress=False)
    assert res.success is False and res.status == -1
    assert "t = 0.3" in res.message and "failed" in res.message
    assert res.t[-1] == pytest.approx(0.3, abs=1e-9)
    n = len(res.t)
    assert res.q.shape[0] == n and res.v.shape[0] == n and len(res.energy) == n
    assert len(res.h) == n - 1 == res.stats.n_steps
    assert np.allclose(res.position("block")[:, 0], 0.1 * res.t, atol=1e-12)


@pytest.mark.parametrize("h, options", [
    (1e-3, {}),
    ((1e-4, 1e-3), dict(step_control="adaptive")),
    ((1e-4, 1e-3), dict(step_control="nlp")),
    (1e-3, dict(solver="qp")),
    (1e-3, dict(form="explicit")),
])
def test_program_built_once_per_run(h, options):
    """Solvers are constructed once (lazily, one per solver actually used) whatever h does;
    the last step is shortened to hit t_end without a rebuild."""
    stepper = nd.Stepper(slider_crank.build(), h=h, **options)
    stepper.step()
    built = stepper.program.build_count
    while stepper.t < 0.0295 - 1e-15:
        stepper.step(t_end=0.0295)
    assert stepper.t == pytest.approx(0.0295, abs=1e-15)
    assert stepper.program.build_count == built
    expected = 2 if options.get("step_control") == "nlp" else 1   # nlp: IPOPT + polish solve
    assert built == expected
    with pytest.raises(ValueError, match="already at t_end"):
        stepper.step(t_end=0.0295)
