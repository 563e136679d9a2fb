"""Bad input is refused before any step with a ModelError (a ValueError) that names the
culprit and lists every problem at once; inconsistent initial conditions are projected (or
refused on request); a solver failure mid-run returns the partial trajectory; the step
program is constructed once per run whatever h does.

Tolerances (STYLE.md): identities <= 1e-12; the initial projections are solver-limited with
``projection_tol = 1e-12`` (positions) and an exact linear solve (velocities).
"""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.stepper import Stepper

IDENTITY = 1e-12


@pytest.fixture
def no_stepping(monkeypatch):
    """Any attempt to take a step fails the test: errors must come before stepping."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a step was taken before the input was validated")
    monkeypatch.setattr(Stepper, "step", refuse)


def bar_system(**body):
    """A 1 kg bar, centre at (0.5, 0, 0), with its body data overridden by ``body``."""
    s = nd.System(gravity=(0, 0, -9.81))
    data = dict(name="bar", mass=1.0, inertia=(1e-3, 0.1, 0.1), position=(0.5, 0, 0))
    data.update(body)
    return s, s.add_body(**data)


def pendulum(**body):
    s, b = bar_system(**body)
    s.add_joint(nd.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 1, 0), name="hinge"))
    return s


def test_model_error_is_a_value_error():
    assert issubclass(nd.ModelError, ValueError)


# ---------------------------------------------------------------- bodies


@pytest.mark.parametrize("body, words", [
    (dict(mass=-1.0), ["body 'bar'", "mass must be positive", "-1.0"]),
    (dict(mass=0.0), ["body 'bar'", "mass must be positive", "0.0"]),
    (dict(mass=np.inf), ["body 'bar'", "mass must be positive and finite"]),
    (dict(inertia=(1.0, -1.0, 1.0)), ["body 'bar'", "positive definite"]),
    (dict(inertia=(0.0, 0.1, 0.1)), ["body 'bar'", "positive definite"]),
    (dict(inertia=[[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]), ["body 'bar'", "not symmetric"]),
    (dict(inertia=(1.0, 1.0, 5.0)), ["body 'bar'", "triangle inequality"]),
    (dict(orientation=(1.0, 0.1, 0, 0)), ["body 'bar'", "unit norm", "|p| = 1.00498756"]),
    (dict(orientation=(0.5, 0.5, 0.5)), ["body 'bar'", "orientation must be 4 finite numbers"]),
    (dict(position=(0, np.nan, 0)), ["body 'bar'", "position must be 3 finite numbers"]),
    (dict(angular_velocity=(0, 0)), ["body 'bar'", "angular_velocity must be 3"]),
])
def test_bad_body_data_names_the_body(body, words, no_stepping):
    s = pendulum(**body)
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=1.0, h=1e-3, progress=False)
    for w in words:
        assert w in str(err.value)
    assert len(err.value.problems) == 1


def test_orientation_matrix_must_be_a_rotation(no_stepping):
    """A reflection given as the orientation matrix is refused, naming the body."""
    with pytest.raises(nd.ModelError, match="body 'bar'"):
        nd.simulate(pendulum(orientation=np.diag([1.0, 1.0, -1.0])), t_end=1.0, h=1e-3,
                    progress=False)


def test_non_orthogonal_orientation_matrix_is_refused(no_stepping):
    shear = [[1.0, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 1.0]]
    with pytest.raises(nd.ModelError, match="body 'bar'.*orientation"):
        nd.simulate(pendulum(orientation=shear), t_end=1.0, h=1e-3, progress=False)


def test_duplicate_and_reserved_body_names():
    s = nd.System()
    for name in ("x", "x", "ground"):
        s.add_body(name, mass=1, inertia=(1, 1, 1))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    assert err.value.problems == ["body name 'x' is used more than once",
                                  "body name 'ground' is reserved for the ground"]


def test_empty_system():
    with pytest.raises(nd.ModelError, match="the system has no bodies"):
        nd.System().compile()


# ---------------------------------------------------------------- joints


def two_bars():
    s = nd.System()
    a = s.add_body("a", mass=1, inertia=(1, 1, 1))
    b = s.add_body("b", mass=1, inertia=(1, 1, 1), position=(1, 0, 0))
    return s, a, b


SKEW_AXIS = (0, 1.0, 0.1)     # |axis| = 1.005: not a unit vector


@pytest.mark.parametrize("make, words", [
    (lambda s, a, b: nd.Revolute(a, b, (0, 0, 0), SKEW_AXIS, name="hinge"),
     "revolute joint 'hinge': axis must be a unit vector, |axis| = 1.00498756"),
    (lambda s, a, b: nd.Cylindrical(a, b, (0, 0, 0), SKEW_AXIS, name="sleeve"),
     "cylindrical joint 'sleeve': axis must be a unit vector"),
    (lambda s, a, b: nd.Prismatic(a, b, (0, 0, 0), SKEW_AXIS, name="rail"),
     "prismatic joint 'rail': axis must be a unit vector"),
    (lambda s, a, b: nd.Fixed(a, b, (0, 0, 0), SKEW_AXIS, name="weld"),
     "fixed joint 'weld': axis must be a unit vector"),
    (lambda s, a, b: nd.Revolute(a, b, (0, 0, 0), (0, 0, 0), name="hinge"),
     "revolute joint 'hinge': axis must be a unit vector"),
    (lambda s, a, b: nd.Revolute(a, b, (0, 0, 0), (0, 1), name="hinge"),
     "revolute joint 'hinge': axis must be 3 finite numbers"),
    (lambda s, a, b: nd.Spherical(a, b, (0, np.inf, 0), name="ball"),
     "spherical joint 'ball': point must be 3 finite numbers"),
    (lambda s, a, b: nd.Universal(a, b, (0, 0, 0), (1, 0, 0), (0, 2, 0), name="cardan"),
     "universal joint 'cardan': axis2 must be a unit vector"),
    (lambda s, a, b: nd.Universal(a, b, (0, 0, 0), (1, 0, 0), (0.6, 0.8, 0), name="cardan"),
     "universal joint 'cardan': axis1 and axis2 must be perpendicular, axis1.axis2 = 0.6"),
    (lambda s, a, b: nd.Spherical(b, b, (0, 0, 0), name="self"),
     "spherical joint 'self': connects body 'b' to itself"),
    (lambda s, a, b: nd.Revolute(s.ground, s.ground, (0, 0, 0), (1, 0, 0), name="nothing"),
     "revolute joint 'nothing': connects body 'ground' to itself"),
    (lambda s, a, b: nd.Spherical(a, nd.System().add_body("stranger", 1, (1, 1, 1)), (0, 0, 0),
                                  name="alien"),
     "spherical joint 'alien': body 'stranger' is not part of this system"),
    (lambda s, a, b: nd.Spherical(nd.System().ground, b, (0, 0, 0), name="other ground"),
     "spherical joint 'other ground': body 'ground' is not part of this system"),
    (lambda s, a, b: nd.RotationDriver(nd.Prismatic(a, b, (0, 0, 0), (1, 0, 0)), 0.1, name="spin"),
     "rotation driver 'spin': needs a Revolute or Cylindrical joint, got Prismatic"),
    (lambda s, a, b: nd.TranslationDriver(nd.Revolute(a, b, (0, 0, 0), (1, 0, 0)), 0.1,
                                          name="push"),
     "translation driver 'push': needs a Prismatic or Cylindrical joint, got Revolute"),
])
def test_bad_joint_data_names_the_joint(make, words, no_stepping):
    s, a, b = two_bars()
    s.add_joint(make(s, a, b))
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=1.0, h=1e-3, progress=False)
    assert words in str(err.value)
    assert len(err.value.problems) == 1


def test_duplicate_element_names():
    s, a, b = two_bars()
    s.add_joint(nd.Spherical(s.ground, a, (0, 0, 0), name="j"))
    s.add_joint(nd.Spherical(a, b, (0.5, 0, 0), name="j"))
    with pytest.raises(nd.ModelError, match="element name 'j' is used more than once"):
        s.compile()


def test_every_problem_reported_in_one_error(no_stepping):
    s = nd.System(gravity=(0, 0, np.nan))
    a = s.add_body("a", mass=-1, inertia=(1, 1, 1))
    b = s.add_body("b", mass=1, inertia=(1, 1, 1), orientation=(2, 0, 0, 0))
    s.add_joint(nd.Universal(a, b, (0, 0, 0), (1, 0, 0), (1, 0, 0), name="cardan"))
    s.add_joint(nd.Spherical(b, b, (0, 0, 0), name="self"))
    s.add_joint(nd.Revolute(s.ground, a, (0, 0, 0), (0, 0, 2), name="hinge"))
    other = nd.System().add_body("stranger", mass=1, inertia=(1, 1, 1))
    s.add_joint(nd.Spherical(a, other, (0, 0, 0), name="alien"))
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=1.0, h=1e-3, progress=False)
    expected = ["gravity must be 3 finite numbers", "body 'a': mass", "body 'b': orientation",
                "'cardan': axis1 and axis2 must be perpendicular",
                "'self': connects body 'b' to itself",
                "revolute joint 'hinge': axis must be a unit",
                "'alien': body 'stranger' is not part"]
    msg = str(err.value)
    for piece in expected:
        assert piece in msg
    assert len(err.value.problems) == len(expected)
    assert msg.count("\n  - ") == len(expected)      # one line per problem


def test_every_problem_of_one_joint_reported():
    s, a, b = two_bars()
    s.add_joint(nd.Universal(a, b, (0, 0, np.nan), (1, 0, 0), (1, 0, 0), name="cardan"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    assert "'cardan': point must be 3 finite numbers" in str(err.value)
    assert "'cardan': axis1 and axis2 must be perpendicular" in str(err.value)


# ---------------------------------------------------------------- run parameters and settings


@pytest.mark.parametrize("h, t_end, words", [
    ((2e-3, 1e-3), 1.0, r"h_min > h_max \(0.002 > 0.001\)"),
    (-1e-3, 1.0, "h_min must be positive and finite, got -0.001"),
    (0.0, 1.0, "h_min must be positive"),
    ((0.0, 1e-3), 1.0, "h_min must be positive"),
    ((1e-4, np.inf), 1.0, "h_max must be positive and finite"),
    (np.nan, 1.0, "h_min must be positive and finite"),
    ((1e-4, 1e-3, 1e-2), 1.0, "h must be a step size or a pair"),
    (1e-3, 0.0, "t_end must be finite and greater than t0 = 0.0, got 0.0"),
    (1e-3, -1.0, "t_end must be finite and greater than t0"),
    (1e-3, np.inf, "t_end must be finite"),
])
def test_bad_run_parameters(h, t_end, words, no_stepping):
    with pytest.raises(nd.ModelError, match=words):
        nd.simulate(pendulum(), t_end=t_end, h=h, progress=False)


def test_t_end_before_t0(no_stepping):
    with pytest.raises(nd.ModelError, match="greater than t0 = 2.0"):
        nd.simulate(pendulum(), t_end=1.0, h=1e-3, t0=2.0, progress=False)


@pytest.mark.parametrize("option, words", [
    (dict(step_control="magic"), "step_control must be one of"),
    (dict(step_control="fixed"), "step_control 'fixed' needs one step size"),   # with bounds
    (dict(form="weak"), "form must be one of"),
    (dict(solver="cg"), "solver must be 'direct', 'qp' or 'ipopt', got 'cg'"),
    (dict(initial_conditions="guess"), "initial_conditions must be 'project' or 'check'"),
    (dict(check_tol=-1.0), "check_tol must be > 0"),
    (dict(nlp_tol=0.0), "nlp_tol must be > 0"),
    (dict(max_retries=-1), "max_retries must be >= 0"),
    (dict(tie_break=-1e-4), "tie_break must be >= 0"),
])
def test_bad_settings_values(option, words, no_stepping):
    h = (1e-4, 1e-3) if option.get("step_control") == "fixed" else 1e-3
    with pytest.raises(nd.ModelError, match=words):
        nd.simulate(pendulum(), t_end=1.0, h=h, progress=False, **option)


def test_several_bad_settings_in_one_error():
    with pytest.raises(nd.ModelError) as err:
        nd.StepperSettings(form="weak", solver="cg", check_tol=0)
    assert len(err.value.problems) == 3


def test_misspelt_setting_is_named(no_stepping):
    """An unknown keyword is a TypeError (Python's convention) that names it."""
    with pytest.raises(TypeError, match="step_contorl"):
        nd.simulate(pendulum(), t_end=1.0, h=1e-3, progress=False, step_contorl="nlp")


def test_direct_solver_refuses_gaps(no_stepping):
    s, b = bar_system()
    s.add_joint(nd.SphericalClearance(s.ground, b, point=(0.5, 0, 0), clearance=1e-3,
                                      name="socket"))
    with pytest.raises(nd.ModelError, match=r"solver 'direct' handles ideal joints only.*socket"):
        nd.simulate(s, t_end=1.0, h=1e-3, progress=False, solver="direct")


# ---------------------------------------------------------------- declare, compile, run


@pytest.mark.parametrize("add", [
    lambda s: s.add_body("late", mass=1, inertia=(1, 1, 1)),
    lambda s: s.add_joint(nd.Spherical(s.ground, s.body("bar"), (0.5, 0, 0))),
    lambda s: s.add_force(nd.PointForce(s.body("bar"), point=(0.5, 0, 0), force=(1, 0, 0))),
])
def test_locked_after_compile(add):
    s = pendulum()
    s.compile()
    with pytest.raises(RuntimeError, match="compiled and locked"):
        add(s)
    assert len(s.bodies) == 1 and len(s.constraints) == 1 and not s.forces


def test_locked_after_simulate():
    s = pendulum()
    nd.simulate(s, t_end=2e-3, h=1e-3, progress=False)
    with pytest.raises(RuntimeError, match="compiled and locked"):
        s.add_body("late", mass=1, inertia=(1, 1, 1))


# ---------------------------------------------------------------- initial conditions


def radial_pendulum():
    """The bar on a hinge about y through the origin; consistent motion is w' = (0, w, 0),
    rdot = (0, 0, -0.5 w). Start with w = 1 plus a radial rdot_x = 0.3, which is M-orthogonal
    to the consistent direction: the projection removes exactly the 0.3."""
    return pendulum(velocity=(0.3, 0, -0.5), angular_velocity=(0, 1, 0))


def test_check_refuses_inconsistent_velocities_naming_the_joint(no_stepping):
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(radial_pendulum(), t_end=0.01, h=1e-3, progress=False,
                    initial_conditions="check")
    msg = str(err.value)
    assert "inconsistent initial conditions" in msg
    assert "revolute joint 'hinge': initial velocity residual 3.000e-01" in msg
    assert "position residual" not in msg


def test_check_accepts_consistent_conditions():
    res = nd.simulate(pendulum(velocity=(0, 0, -0.5), angular_velocity=(0, 1, 0)), t_end=2e-3,
                      h=1e-3, progress=False, initial_conditions="check")
    assert res.success and res.initial_projection["changed"] is False


def test_project_fixes_inconsistent_velocities_and_reports_it():
    s = radial_pendulum()
    res = nd.simulate(s, t_end=2e-3, h=1e-3, progress=False)
    ip = res.initial_projection
    assert ip["changed"] is True
    assert ip["position_change"] == 0.0
    assert abs(ip["velocity_violation"] - 0.3) <= IDENTITY
    assert abs(ip["velocity_change"] - 0.3) <= IDENTITY
    assert abs(ip["body_changes"]["bar"]["velocity"] - 0.3) <= IDENTITY
    assert np.abs(res.v[0] - [0, 0, -0.5, 0, 1, 0]).max() <= IDENTITY
    cs = s.compile()
    assert np.abs(np.asarray(cs.velocity_jacobian(res.q[0], 0.0)) @ res.v[0]).max() <= IDENTITY


def driven_slider(offset=0.01):
    """A bar on a prismatic joint along an oblique axis, driven to s(t) = offset + t: at t = 0
    the start violates the driver by ``offset`` in position and 1 m/s in velocity."""
    s, b = bar_system(velocity=(0, 0, 0))
    axis = np.array([1.0, 2.0, 2.0]) / 3
    rail = s.add_joint(nd.Prismatic(s.ground, b, point=(0.5, 0, 0), axis=axis, name="rail"))
    s.add_joint(nd.TranslationDriver(rail, displacement=lambda t: offset + t, name="drive"))
    return s, axis


def test_check_refuses_inconsistent_positions_naming_the_driver(no_stepping):
    s, _ = driven_slider()
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=0.01, h=1e-3, progress=False, initial_conditions="check")
    assert "translation driver 'drive': initial position residual 1.000e-02" in str(err.value)
    assert "translation driver 'drive': initial velocity residual 1.000e+00" in str(err.value)


def test_inconsistent_positions_are_projected():
    """The smallest mass-weighted change moves the bar 0.01 m along the rail; the projected
    start satisfies Phi to the projection tolerance, and its velocity is the driver's 1 m/s."""
    s, axis = driven_slider()
    res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False)
    cs = s.compile()
    assert np.abs(np.asarray(cs.phi(res.q[0], 0.0))).max() <= 1e-10
    ip = res.initial_projection
    assert ip["changed"] is True
    assert abs(ip["position_violation"] - 0.01) <= IDENTITY
    assert abs(ip["position_change"] - 0.01) <= 1e-12
    assert np.abs(res.position("bar")[0] - ((0.5, 0, 0) + 0.01 * axis)).max() <= 1e-12
    assert np.abs(res.orientation("bar")[0] - (1, 0, 0, 0)).max() <= 1e-12
    assert np.abs(res.velocity("bar")[0] - axis).max() <= 1e-12
    assert res.success


def test_impossible_positions_are_refused(no_stepping):
    """Pinned by a ball joint at its start, but driven 0.5 m along a rail: no configuration
    satisfies both, the projection cannot converge and says so before any step."""
    s, b = bar_system()
    rail = s.add_joint(nd.Prismatic(s.ground, b, point=(0.5, 0, 0), axis=(1, 0, 0), name="rail"))
    s.add_joint(nd.Spherical(s.ground, b, point=(0.5, 0, 0), name="ball"))
    s.add_joint(nd.TranslationDriver(rail, displacement=0.5, name="push"))
    with pytest.raises(nd.ModelError, match="initial positions cannot be made consistent"):
        nd.simulate(s, t_end=0.01, h=1e-3, progress=False)


def test_unreachable_distance_is_refused(no_stepping):
    """A ball joint at (0.2, 0, 0) and a programmed constraint asking the body point 0.6 m
    away from it to sit at (1.2, 0, 0), 1.0 m away: impossible. (Two spherical joints cannot
    express this: their points are on both bodies at the initial configuration by
    definition.)"""
    s, b = bar_system()
    s.add_joint(nd.Spherical(s.ground, b, point=(0.2, 0, 0), name="ball"))
    s.add_joint(nd.Programmed(
        [b], lambda t, st: st.point((0.8, 0, 0)) - ca.DM([1.2, 0, 0]), name="reach"))
    with pytest.raises(nd.ModelError, match="cannot be made consistent.*worst at"):
        nd.simulate(s, t_end=0.01, h=1e-3, progress=False)


# ---------------------------------------------------------------- failure mid-run


def contradictory_drivers(t_switch):
    """A block on two parallel prismatic rails (redundant, consistent), each driven along x:
    s1 = t and s2 = t + (1 if t > t_switch else 0). They agree until t_switch, then no
    configuration satisfies both."""
    s = nd.System(gravity=(0, 0, -9.81))
    b = s.add_body("block", mass=1.0, inertia=(0.1, 0.2, 0.25), velocity=(1, 0, 0))
    r1 = s.add_joint(nd.Prismatic(s.ground, b, point=(0, 0, 0), axis=(1, 0, 0), name="rail1"))
    r2 = s.add_joint(nd.Prismatic(s.ground, b, point=(0, 0.2, 0), axis=(1, 0, 0), name="rail2"))
    s.add_joint(nd.TranslationDriver(r1, displacement=lambda t: t, name="drive1"))
    s.add_joint(nd.TranslationDriver(
        r2, displacement=lambda t: t + ca.if_else(t > t_switch, 1, 0), name="drive2"))
    return s


def test_solver_failure_returns_the_partial_trajectory():
    """The switch at 0.305 lies between grid points. A step that ends past it leaves drive2
    1 m apart with no configuration meeting both drivers: it is rejected and retried with
    halved h, so the run creeps up to the switch and stops just before it, with everything
    up to there."""
    h = 1e-2
    res = nd.simulate(contradictory_drivers(0.305), t_end=1.0, h=h, progress=False)
    assert res.success is False and res.status == -1
    t_fail = float(res.message.split("step at t = ")[1].split(" failed")[0])
    assert 0.30 <= t_fail <= 0.305 and abs(res.t[-1] - t_fail) <= IDENTITY
    assert "drive2" in res.message and "contradict" in res.message
    n = len(res.t)
    assert n >= 32
    assert res.q.shape == (n, 7) and res.v.shape == (n, 6)
    assert res.energy.shape == res.kinetic_energy.shape == (n,)
    assert res.h.shape == (n - 1,) and res.stats.n_steps == n - 1
    assert res.mu.shape[0] == n - 1 and res.reaction_force("rail1").shape == (n - 1, 3)
    assert np.abs(res.h[:30] - h).max() <= IDENTITY and res.h.max() <= h
    # the trajectory up to the failure is the driven one (direct solve: round-off only)
    assert np.abs(res.position("block")[:, 0] - res.t).max() <= IDENTITY
    assert np.abs(res.position("block")[:, 1:]).max() <= IDENTITY
    assert np.abs(res.velocity("block") - [1, 0, 0]).max() <= IDENTITY
    assert "reached t_end" not in res.summary() and "FAILED" in res.summary()


def test_failure_at_the_first_step_returns_a_result():
    """A load that is NaN from the start (sqrt of a negative number): every attempt at the
    first step fails the physical check, so the run stops at t = 0; simulate must still
    return the one-point trajectory."""
    s = nd.System(gravity=(0, 0, -9.81))
    b = s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint(nd.Spherical(s.ground, b, point=(0.1, 0, 0), name="ball"))
    s.add_force(nd.PointForce(b, force=lambda t, state: ca.vertcat(0, 0, ca.sqrt(-1 - t)),
                              name="bad"))
    res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False, max_retries=0)
    assert res.success is False and res.status == -1 and "t = 0" in res.message
    assert len(res.t) == 1 and res.q.shape == (1, 7) and res.h.shape == (0,)
    assert res.reaction_force("ball").shape == (0, 3)


def test_contradicting_drivers_are_named():
    """Drivers that agree at t = 0 (so one of them is solved as redundant) and contradict
    from t = 0.5 ms on: the step that would break the dropped one fails, and the message
    says the constraints contradict each other and names the driver."""
    res = nd.simulate(contradictory_drivers(0.0005), t_end=0.01, h=1e-3, progress=False,
                      max_retries=0)
    assert res.success is False and "contradict" in res.message and "drive" in res.message


def test_redundant_rows_are_solved_without_them_by_every_solver():
    """A welded body with a redundant ball joint on top: 9 rows for 6 unknowns, 3 of them
    redundant. The stepper finds them once (rank-revealing QR of the rows' Jacobian), solves
    without them and reports them; IPOPT, which refuses redundant equality sets, then steps
    it too, and the body stays put."""
    s = nd.System(gravity=(0, 0, -9.81))
    b = s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint(nd.Fixed(s.ground, b, point=(0, 0, 0), name="weld"))
    s.add_joint(nd.Spherical(s.ground, b, point=(0.1, 0, 0), name="ball"))
    for options in ({}, dict(solver="ipopt")):
        res = nd.simulate(s if not options else _rebuild_welded(), t_end=0.01, h=1e-3,
                          progress=False, **options)
        assert res.success and len(res.info["redundant_rows"]) == 3
        assert np.abs(res.q[-1] - res.q[0]).max() <= 1e-9


def _rebuild_welded():
    s = nd.System(gravity=(0, 0, -9.81))
    b = s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint(nd.Fixed(s.ground, b, point=(0, 0, 0), name="weld"))
    s.add_joint(nd.Spherical(s.ground, b, point=(0.1, 0, 0), name="ball"))
    return s


def test_stepper_raises_step_failure_where_simulate_stops():
    """The lower-level API: Stepper.step raises StepFailure (a RuntimeError) naming the time,
    and leaves the stepper at the last accepted state (where simulate stops too)."""
    stepper = nd.Stepper(contradictory_drivers(0.305), h=1e-2)
    stopped = nd.simulate(contradictory_drivers(0.305), t_end=1.0, h=1e-2, progress=False)
    with pytest.raises(nd.StepFailure, match=r"step at t = 0\.30\d* failed"):
        for _ in range(100):
            stepper.step()
    assert abs(stepper.t - stopped.t[-1]) <= IDENTITY
    assert abs(stepper.q[0] - stepper.t) <= 1e-9


# ---------------------------------------------------------------- cost bound


def falling_cup():
    """A cup on a ball of 1 mm clearance, centred at rest: it falls 1 mm onto the ball
    (t ~ 14 ms), so the adaptive schemes change h to end a step at contact onset."""
    s = nd.System(gravity=(0, 0, -9.81))
    cup = s.add_body("cup", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, 0.1))
    s.add_joint(nd.SphericalClearance(s.ground, cup, point=(0, 0, 0.1), clearance=1e-3,
                                      name="socket"))
    return s


@pytest.mark.parametrize("build, h, options, programs", [
    (pendulum, 1e-3, {}, ["direct"]),
    (pendulum, 1e-3, dict(solver="qp"), ["conic"]),
    (pendulum, 1e-3, dict(solver="ipopt"), ["nlpsol"]),
    (pendulum, 1e-3, dict(form="explicit"), ["nlpsol"]),
    (pendulum, (1e-4, 1e-3), dict(step_control="adaptive"), ["direct"]),
    (pendulum, (1e-4, 1e-3), dict(step_control="nlp", polish=False, nlp_method="ipopt"),
     ["nlpsol"]),
    # "nlp" by IPOPT re-solves steps that end just short of h_max with the fixed-h solver
    # ("polish"), and refines gaps with it: the variable-h NLP plus that solver, each built once
    (pendulum, (1e-4, 1e-3), dict(step_control="nlp", nlp_method="ipopt"), ["direct", "nlpsol"]),
    # by bisection it only uses the fixed-h solver
    (pendulum, (1e-4, 1e-3), dict(step_control="nlp"), ["direct"]),
    (falling_cup, 1e-3, {}, ["conic"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="adaptive"), ["conic"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="nlp", nlp_method="ipopt"), ["conic", "nlpsol"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="nlp"), ["conic"]),
], ids=["fixed-direct", "fixed-qp", "fixed-ipopt", "fixed-explicit", "adaptive", "nlp-unpolished",
        "nlp-ipopt", "nlp", "gap-fixed", "gap-adaptive", "gap-nlp-ipopt", "gap-nlp"])
def test_program_constructed_once_per_run(build, h, options, programs, monkeypatch):
    """Every solver the run uses is constructed exactly once (counted at CasADi's nlpsol and
    conic constructors and at the closed-form build), whatever h does: t_end = 0.0295 is not a
    multiple of h, so the last step is shortened, and the cup's contact makes the adaptive
    schemes cut h before the impact. ``res.info["program_builds"]`` reports the count."""
    from nlpdyn.step_nlp import StepProgram
    made = []
    for name in ("nlpsol", "conic"):
        original = getattr(ca, name)
        monkeypatch.setattr(ca, name, lambda *a, _o=original, _n=name, **k: (made.append(_n),
                                                                             _o(*a, **k))[1])
    original_direct = StepProgram._build_direct
    monkeypatch.setattr(StepProgram, "_build_direct",
                        lambda self: (made.append("direct"), original_direct(self))[1])
    res = nd.simulate(build(), t_end=0.0295, h=h, progress=False, **options)
    assert res.success
    assert len(np.unique(res.h)) >= 2                                     # h did change
    if build is falling_cup and np.ndim(h):
        assert res.h[:-1].min() < 0.9e-3                                  # cut at contact
    assert sorted(made) == programs
    assert res.info["program_builds"] == len(programs)


def test_stepper_lands_on_t_end_and_refuses_to_pass_it():
    """Stepper.step(t_end) shortens the last step to land on t_end exactly (no rebuild) and
    refuses a step once there."""
    stepper = nd.Stepper(pendulum(), h=1e-3)
    while stepper.t < 0.0295 - 1e-15:
        stepper.step(t_end=0.0295)
    assert abs(stepper.t - 0.0295) <= IDENTITY
    assert stepper.program.build_count == 1
    with pytest.raises(ValueError, match="already at t_end"):
        stepper.step(t_end=0.0295)


@pytest.mark.parametrize("t_end, h, options", [
    (0.03 + 1e-9, 1e-3, {}),                                      # fixed h: 1e-9 s left over
    (0.0295, (1e-4, 1e-3), dict(step_control="nlp", polish=False, nlp_method="ipopt")),
    # (IPOPT stops ~1e-8 short of h_max)
], ids=["fixed", "nlp-unpolished"])
def test_short_last_step_does_not_kick_the_velocity(t_end, h, options):
    """A run whose end leaves a sliver of a step splits the last two steps instead (the rows
    divide position-level residuals by h, so a 1e-9 s step would kick the velocity), and the
    velocity changes by no more than a regular step's g h_max (the pendulum's accelerations
    are <= g + v^2/L < 1.1 g here): discretisation tier."""
    res = nd.simulate(pendulum(), t_end=t_end, h=h, progress=False, **options)
    assert res.success and abs(res.t[-1] - t_end) <= IDENTITY
    h_max = np.max(h)
    assert res.h.min() >= 0.25 * np.min(h)
    assert np.abs(res.v[-1] - res.v[-2]).max() <= 1.1 * 9.81 * h_max
