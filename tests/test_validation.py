"""Bad input is refused before any step with a ModelError (a ValueError) that names the
culprit and lists every problem at once; inconsistent initial conditions are projected (or
refused on request); a solver failure mid-run returns the partial trajectory; the step
program is constructed once per run whatever h does.

Tolerances (STYLE.md): identities <= 1e-12; the initial projections are solver-limited with
``projection_tol = 1e-12`` (positions) and an exact linear solve (velocities).
"""
import dataclasses
import math

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
    (lambda s, a, b: nd.RotationDriver(s.add_joint(nd.Prismatic(a, b, (0, 0, 0), (1, 0, 0))), 0.1,
                                       name="spin"),
     "rotation driver 'spin': needs a Revolute or Cylindrical joint, got Prismatic"),
    (lambda s, a, b: nd.TranslationDriver(s.add_joint(nd.Revolute(a, b, (0, 0, 0), (1, 0, 0))),
                                          0.1, name="push"),
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


def test_gravity_set_after_construction():
    """``System.gravity`` takes any 3 numbers (a tuple, numpy scalars) after construction as
    in it, and the next compile sees them; a bad value is refused naming gravity."""
    s = nd.System()
    s.add_body("ball", mass=1.0, inertia=(1, 1, 1))
    s.gravity = (0, np.float64(-1.62), 0)
    res = nd.simulate(s, t_end=0.1, h=1e-3, progress=False)
    assert np.allclose(res.velocity("ball")[-1], (0, -0.162, 0))
    s.gravity = (0, "down", 0)
    with pytest.raises(nd.ModelError, match=r"gravity must be 3 finite numbers, got \(0, 'down', 0\)"):
        s.compile()


def test_every_problem_of_one_joint_reported():
    s, a, b = two_bars()
    s.add_joint(nd.Universal(a, b, (0, 0, np.nan), (1, 0, 0), (1, 0, 0), name="cardan"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    assert "'cardan': point must be 3 finite numbers" in str(err.value)
    assert "'cardan': axis1 and axis2 must be perpendicular" in str(err.value)


# ---------------------------------------------------------------- every public class's input


def crank(**body):
    """``pendulum()`` with its hinge: (system, bar, hinge)."""
    s, b = bar_system(**body)
    hinge = s.add_joint(nd.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 1, 0), name="hinge"))
    return s, b, hinge


def add(s, element):
    return s.add_force(element) if isinstance(element, nd.ForceElement) else s.add_joint(element)


def refused(s):
    """The problems of the ModelError that simulating ``s`` raises."""
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=1.0, h=1e-3, progress=False)
    return err.value.problems


def assert_named(problems, words):
    """``words`` (or one of them, for a tuple) is in exactly one of ``problems``."""
    alternatives = (words,) if isinstance(words, str) else words
    hits = [p for p in problems if any(w in p for w in alternatives)]
    assert len(hits) == 1, (words, problems)


CONE = dict(xi_axis=(1, 0, 0), eta_axis=(0, 0, 1), moving_axis=(1, 0, 0),
            longitudes=np.radians([0, 90, 180, 270, 360]), max_latitudes=np.radians([30] * 5),
            delta_sigma=0.1, max_moment=10.0, damping=0.0)
HERTZ = nd.Hertz(1e9, 1.5)
SQUARE = [[0.01, -0.01], [0.01, 0.01], [-0.01, 0.01], [-0.01, -0.01]]


def case_id(value):
    """Test id from the expected message: its element and parameter."""
    if callable(value):
        return ""
    words = value if isinstance(value, str) else value[0]
    owner, rest = words.split(": ", 1)
    return f"{owner}: {rest.split()[0]}"


def rail(s, b):
    return s.add_joint(nd.Prismatic(s.ground, b, (0.5, 0, 0), (1, 0, 0), name="rail"))


@pytest.mark.parametrize("body, words", [
    (dict(mass="heavy"), "body 'bar': mass must be positive and finite, got 'heavy'"),
    (dict(mass=None), "body 'bar': mass must be positive and finite, got None"),
    (dict(mass=[1.0, 2.0]), "body 'bar': mass must be positive and finite, got [1.0, 2.0]"),
    (dict(inertia="diagonal"), "body 'bar': inertia must be 3 principal moments or a 3x3 "
                               "matrix of finite numbers, got 'diagonal'"),
    (dict(inertia=None), "body 'bar': inertia must be 3 principal moments"),
    (dict(inertia=(1.0, 1.0)), "body 'bar': inertia must be 3 principal moments"),
    (dict(inertia=(1.0, np.nan, 1.0)), "body 'bar': inertia must be 3 principal moments"),
    (dict(position="origin"), "body 'bar': position must be 3 finite numbers, got 'origin'"),
    (dict(position=None), "body 'bar': position must be 3 finite numbers, got None"),
    (dict(position=(0.5, 0)), "body 'bar': position must be 3 finite numbers, got [0.5, 0.0]"),
    (dict(velocity=(0, 0, 0, 1)), "body 'bar': velocity must be 3 finite numbers"),
    (dict(velocity=(0, np.inf, 0)), "body 'bar': velocity must be 3 finite numbers"),
    (dict(angular_velocity=(0, "1", 0)), "body 'bar': angular_velocity must be 3 finite numbers"),
    (dict(orientation="identity"), "body 'bar': orientation must be 4 finite numbers, got 'identity'"),
    (dict(orientation=None), "body 'bar': orientation must be 4 finite numbers, got None"),
    (dict(orientation=np.full((3, 3), np.nan)), "body 'bar': orientation matrix must be a proper"),
])
def test_body_input_that_is_not_numbers_names_the_body(body, words, no_stepping):
    problems = refused(pendulum(**body))
    assert_named(problems, words)
    assert len(problems) == 1


def assert_single_problem(make, words):
    """The element ``make`` adds to the crank is refused with one problem naming ``words``."""
    s, b, hinge = crank()
    add(s, make(s, b, hinge))
    problems = refused(s)
    assert_named(problems, words)
    assert len(problems) == 1


@pytest.mark.parametrize("make, words", [
    (lambda s, b, j: nd.Spherical(s.ground, b, "origin", name="ball"),
     "spherical joint 'ball': point must be 3 finite numbers, got 'origin'"),
    (lambda s, b, j: nd.Revolute(s.ground, b, None, (0, 1, 0), name="pin"),
     "revolute joint 'pin': point must be 3 finite numbers, got None"),
    (lambda s, b, j: nd.Cylindrical(s.ground, b, (0, 0, 0), "y", name="sleeve"),
     "cylindrical joint 'sleeve': axis must be 3 finite numbers, got 'y'"),
    (lambda s, b, j: nd.Universal(s.ground, b, (0, 0, 0), None, (0, 1, 0), name="cardan"),
     "universal joint 'cardan': axis1 must be 3 finite numbers, got None"),
    (lambda s, b, j: nd.Fixed(s.ground, b, (0, 0, 0), (0, 0, 1, 0), name="weld"),
     "fixed joint 'weld': axis must be 3 finite numbers, got [0.0, 0.0, 1.0, 0.0]"),
    (lambda s, b, j: nd.RotationDriver(j, "fast", name="spin"),
     "rotation driver 'spin': angle must be a finite number or a function of t, got 'fast'"),
    (lambda s, b, j: nd.TranslationDriver(rail(s, b), None, name="push"),
     "translation driver 'push': displacement must be a finite number or a function of t, got None"),
    (lambda s, b, j: nd.Programmed([b], lambda t, st: st.r[1], name="path", point="tip"),
     "programmed constraint 'path': point must be 3 finite numbers, got 'tip'"),
    (lambda s, b, j: nd.SphericalClearance(s.ground, b, (0.5, 0, 0), "small", name="socket"),
     "spherical clearance joint 'socket': clearance must be > 0, got 'small'"),
    (lambda s, b, j: nd.SphericalClearance(s.ground, b, (0.5, 0, 0), 1e-3, radius="r",
                                           name="socket"),
     "spherical clearance joint 'socket': radius must be >= 0, got 'r'"),
    (lambda s, b, j: nd.CylindricalClearance(s.ground, b, (0, 0, 0), (0, 1, 0), None, 1e-3, 0.02,
                                             name="bore"),
     "cylindrical clearance joint 'bore': radius must be > 0, got None"),
    (lambda s, b, j: nd.RevoluteClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.01, 1e-3, 0.02,
                                          "tight", name="bore"),
     "revolute clearance joint 'bore': axial_clearance must be > 0, got 'tight'"),
    (lambda s, b, j: nd.CylindricalClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.01, 1e-3, 0.02,
                                             name="bore", offset="centred"),
     "cylindrical clearance joint 'bore': offset must be 3 finite numbers, got 'centred'"),
    (lambda s, b, j: nd.PrismaticClearance(s.ground, b, (0.5, 0, 0), (1, 0, 0), "square", 1e-3,
                                           0.1, name="slot"),
     "prismatic clearance joint 'slot': profile must be (N >= 3, 2) section coordinates, "
     "got 'square'"),
    (lambda s, b, j: nd.PrismaticClearance(s.ground, b, (0.5, 0, 0), (1, 0, 0), SQUARE, 1e-3,
                                           None, name="slot"),
     "prismatic clearance joint 'slot': length must be > 0, got None"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), "stiff", name="spring"),
     "spring-damper 'spring': stiffness must be a finite number >= 0, got 'stiff'"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, None, 10.0, name="spring"),
     "spring-damper 'spring': point_b must be 3 finite numbers, got None"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), 10.0, [1, 2],
                                     name="spring"),
     "spring-damper 'spring': damping must be a finite number >= 0, got [1, 2]"),
    (lambda s, b, j: nd.PointForce(b, point="tip", force=(0, 0, 1), name="load"),
     "point force 'load': point must be 3 finite numbers, got 'tip'"),
    (lambda s, b, j: nd.PointForce(b, force=(1, 2), name="load"),
     "point force 'load': force must be 3 finite numbers or a callable (t, state), got [1.0, 2.0]"),
    (lambda s, b, j: nd.PointForce(b, torque="twist", name="load"),
     "point force 'load': torque must be 3 finite numbers or a callable (t, state), got 'twist'"),
    (lambda s, b, j: nd.Bushing(s.ground, b, None, 1e3, name="mount"),
     "bushing 'mount': point must be 3 finite numbers, got None"),
    (lambda s, b, j: nd.Bushing(s.ground, b, (0, 0, 0), "soft", name="mount"),
     "bushing 'mount': stiffness must be a number, a ContactLaw or 3 of them, got 'soft'"),
    (lambda s, b, j: nd.Bushing(s.ground, b, (0, 0, 0), 1e3, axes="xyz", name="mount"),
     "bushing 'mount': axes must be 3 orthonormal right-handed rows"),
    (lambda s, b, j: nd.Bushing(s.ground, b, (0, 0, 0), nd.TabulatedBushing("table", [0, 1]),
                                name="mount"),
     "bushing 'mount': displacements must be numbers, got 'table'"),
    (lambda s, b, j: nd.RotationStop(j, "min", 0.1, HERTZ, name="limit"),
     "rotation stop 'limit': lower and upper must be finite numbers, got 'min' and 0.1"),
    (lambda s, b, j: nd.TranslationStop(rail(s, b), -0.1, 0.1, nd.Hertz("stiff"), name="limit"),
     "translation stop 'limit': stiffness must be > 0, got stiff"),
    (lambda s, b, j: nd.PenaltySphericalClearance(s.ground, b, (0.5, 0, 0), None, HERTZ,
                                                  name="soft_ball"),
     "penalty spherical clearance joint 'soft_ball': clearance must be >= 0, got None"),
    (lambda s, b, j: nd.PenaltyCylindricalClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.01,
                                                    1e-4, "long", HERTZ, name="soft_bore"),
     "penalty cylindrical clearance joint 'soft_bore': length must be > 0, got 'long'"),
    (lambda s, b, j: nd.PenaltyPrismaticClearance(s.ground, b, (0.5, 0, 0), (1, 0, 0), None,
                                                  1e-4, 0.1, HERTZ, name="soft_slot"),
     "penalty prismatic clearance joint 'soft_slot': profile must be (N >= 3, 2)"),
    (lambda s, b, j: nd.RangeOfMotionCone(s.ground, b, **{**CONE, "delta_sigma": None},
                                          name="cone"),
     "range-of-motion cone 'cone': delta_sigma must be finite and > 0, got None"),
    (lambda s, b, j: nd.RangeOfMotionCone(s.ground, b, **{**CONE, "longitudes": "all"},
                                          name="cone"),
     "range-of-motion cone 'cone': longitudes must be numbers (rad), got 'all'"),
    (lambda s, b, j: nd.RangeOfMotionCone(s.ground, b, **{**CONE, "eta_axis": "up"},
                                          name="cone"),
     "range-of-motion cone 'cone': eta_axis must be 3 finite numbers, got 'up'"),
], ids=case_id)
def test_element_input_that_is_not_numbers_names_the_element(make, words, no_stepping):
    """Strings, None and wrong lengths reach ``problems()`` (no bare float() or numpy error):
    the message names the element and the parameter, with the value as given."""
    assert_single_problem(make, words)


@pytest.mark.parametrize("make, words", [
    (lambda s, b, j: nd.PointForce(b, point=(0.5, np.nan, 0), force=(0, 0, 1), name="load"),
     "point force 'load': point must be 3 finite numbers, got [0.5, nan, 0.0]"),
    (lambda s, b, j: nd.PointForce(b, force=(0, 0, np.inf), name="load"),
     "point force 'load': force must be 3 finite numbers or a callable (t, state), got [0.0, 0.0, inf]"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), np.nan, name="spring"),
     "spring-damper 'spring': stiffness must be a finite number >= 0, got nan"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), np.inf, name="spring"),
     "spring-damper 'spring': stiffness must be a finite number >= 0, got inf"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), 10.0, np.nan,
                                     name="spring"),
     "spring-damper 'spring': damping must be a finite number >= 0, got nan"),
    (lambda s, b, j: nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), 10.0,
                                     free_length=np.inf, name="spring"),
     "spring-damper 'spring': free_length must be a finite number >= 0, got inf"),
    (lambda s, b, j: nd.PrismaticClearance(s.ground, b, (0.5, 0, 0), (1, 0, 0),
                                           [[0.01, -0.01], [0.01, np.nan], [-0.01, 0.01]], 1e-3,
                                           0.1, name="slot"),
     "prismatic clearance joint 'slot': profile must be finite numbers"),
    (lambda s, b, j: nd.SphericalClearance(s.ground, b, (0.5, 0, 0), np.inf, name="socket"),
     "spherical clearance joint 'socket': clearance must be > 0, got inf"),
    (lambda s, b, j: nd.CylindricalClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.01, 1e-3, 0.02,
                                             name="bore", offset=(np.nan, 0, 0)),
     "cylindrical clearance joint 'bore': offset must be 3 finite numbers"),
    (lambda s, b, j: nd.RotationDriver(j, np.nan, name="spin"),
     "rotation driver 'spin': angle must be a finite number or a function of t, got nan"),
    (lambda s, b, j: nd.TranslationDriver(rail(s, b), -np.inf, name="push"),
     "translation driver 'push': displacement must be a finite number or a function of t, got -inf"),
    (lambda s, b, j: nd.Programmed([b], lambda t, st: st.r[1], name="path", point=(np.nan, 0, 0)),
     "programmed constraint 'path': point must be 3 finite numbers"),
    (lambda s, b, j: nd.Bushing(s.ground, b, (0, 0, 0), (1e3, np.nan, 1e3), name="mount"),
     "bushing 'mount': stiffness[1] must be a finite number >= 0"),
    (lambda s, b, j: nd.Bushing(s.ground, b, (0, 0, 0), 1e3, damping=np.nan, name="mount"),
     "bushing 'mount': damping must be a number >= 0 or 3 of them"),
    (lambda s, b, j: nd.RotationStop(j, -0.1, np.inf, HERTZ, name="limit"),
     "rotation stop 'limit': lower and upper must be finite numbers, got -0.1 and inf"),
    (lambda s, b, j: nd.PenaltySphericalClearance(s.ground, b, (0.5, 0, 0), 1e-4,
                                                  nd.Hertz(np.nan), name="soft_ball"),
     "penalty spherical clearance joint 'soft_ball': stiffness must be > 0, got nan"),
    (lambda s, b, j: nd.RangeOfMotionCone(s.ground, b, **{**CONE, "max_moment": np.inf},
                                          name="cone"),
     "range-of-motion cone 'cone': max_moment must be finite and >= 0, got inf"),
], ids=case_id)
def test_parameters_that_are_not_finite_are_refused(make, words, no_stepping):
    """NaN and inf parameters are refused by ``problems()`` instead of reaching the solver
    (IPOPT's Invalid_Number_Detected at t = 0)."""
    assert_single_problem(make, words)


@pytest.mark.parametrize("make, words", [
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: ca.vertcat(0, 1), name="load"),
     "point force 'load': force returned shape (2,), expected (3,)"),
    (lambda s, b, j: nd.PointForce(b, torque=lambda t, st: np.zeros(4), name="load"),
     "point force 'load': torque returned shape (4,), expected (3,)"),
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: ca.vertcat(0, 0, 1 if st.r[2] > 0 else 0),
                                   name="load"),
     "point force 'load': force failed: RuntimeError: Cannot compute the truth value of a CasADi "
     "SXElem symbolic expression. (a Python if/and/or/min/max on a CasADi symbol: use ca.if_else"),
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: ca.vertcat(0, 0, math.exp(st.r[2])),
                                   name="load"),
     # CasADi >= 3.8 makes nan of float(symbol), older versions raise
     ("point force 'load': force returned nan in entry 2 (a math or numpy function applied to "
      "a CasADi symbol gives nan: use ca.exp", "point force 'load': force failed: TypeError")),
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: "up", name="load"),
     "point force 'load': force returned 'up', expected CasADi expressions or numbers"),
    (lambda s, b, j: nd.PointForce(b, force=lambda t: ca.DM.zeros(3), name="load"),
     "point force 'load': force must take (t, state), got a function <lambda>(t)"),
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: st.speed, name="load"),
     "point force 'load': force failed: AttributeError: 'BodyState' object has no attribute 'speed'"),
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: ca.SX.sym("f", 3), name="load"),
     "point force 'load': its expressions hold symbols ['f_0', 'f_1', 'f_2'] that are not the "
     "system's"),
    (lambda s, b, j: nd.Programmed([b], lambda t: t, name="path"),
     "programmed constraint 'path': equations must take (t, state1), got a function <lambda>(t)"),
    (lambda s, b, j: nd.Programmed([s.ground, b], lambda t, st: st.r[1], name="path"),
     "programmed constraint 'path': equations must take (t, state1, state2), got a function "
     "<lambda>(t, st)"),
    (lambda s, b, j: nd.Programmed([b], lambda t, st: st.point((1, 0, 0))[:2] @ ca.DM([1, 2, 3]),
                                   name="path"),
     "programmed constraint 'path': equations failed: RuntimeError: Assertion \"x.size2()==y.size1()\" "
     "failed: Matrix product with incompatible dimensions. Lhs is 2x1 and rhs is 3x1."),
    (lambda s, b, j: nd.Programmed([b], lambda t, st: None, name="path"),
     "programmed constraint 'path': equations returned None, expected CasADi expressions or numbers"),
    (lambda s, b, j: nd.RotationDriver(j, lambda t, w: w * t, name="spin"),
     "rotation driver 'spin': angle must take (t), got a function <lambda>(t, w)"),
    (lambda s, b, j: nd.RotationDriver(j, lambda t: ca.vertcat(t, t), name="spin"),
     "rotation driver 'spin': angle returned shape (2,), expected (1,)"),
    (lambda s, b, j: nd.RotationDriver(j, lambda t: 1 / 0, name="spin"),
     "rotation driver 'spin': angle failed: ZeroDivisionError: division by zero"),
    (lambda s, b, j: nd.TranslationDriver(rail(s, b), lambda t: t if t > 0 else 0, name="push"),
     "translation driver 'push': displacement failed: RuntimeError: Cannot compute the truth value"),
], ids=case_id)
def test_user_functions_that_fail_name_the_element(make, words, no_stepping):
    """User functions run once symbolically when the system compiles: an exception, a wrong
    size, a wrong signature or a foreign symbol becomes a problem naming the element and the
    function."""
    assert_single_problem(make, words)


class _Floor(nd.UnilateralConstraint):
    """A user gap: log of the body's height, -inf where the body starts (z = 0)."""

    kind = "floor"

    def __init__(self, body, name=None):
        self.bodies, self.name = (body,), name

    def gaps(self, states):
        return ca.log(states[0].r[2])

    def contact_points(self, states):
        return states[0].r.T


@pytest.mark.parametrize("make, words", [
    (lambda s, b, j: nd.RotationDriver(j, lambda t: ca.sqrt(t - 1), name="spin"),
     "rotation driver 'spin': equations, Jacobian, time derivative not finite at the initial "
     "state (t = 0)"),
    (lambda s, b, j: nd.TranslationDriver(rail(s, b), ca.log, name="push"),
     "translation driver 'push': equations, time derivative not finite at the initial state"),
    (lambda s, b, j: nd.Programmed([b], lambda t, st: ca.log(st.r[1]), name="path"),
     "programmed constraint 'path': equations, Jacobian not finite at the initial state"),
    (lambda s, b, j: nd.PointForce(b, force=lambda t, st: ca.vertcat(0, 0, ca.sqrt(-1 - t)),
                                   name="load"),
     "point force 'load': force not finite at the initial state (t = 0) (a value outside a "
     "function's domain, or a math/numpy function applied to a CasADi symbol"),
    (lambda s, b, j: nd.PointForce(b, torque=lambda t, st: ca.vertcat(0, 1 / st.r[2], 0),
                                   name="load"),
     "point force 'load': force not finite at the initial state"),
    (lambda s, b, j: _Floor(b, name="ground_plane"),
     "floor 'ground_plane': gaps or their gradients are not finite at the initial configuration"),
], ids=["driver", "driver-log", "programmed", "force", "torque", "gap"])
def test_not_finite_at_the_initial_state(make, words, no_stepping):
    """After compiling, phi, its derivatives, the gaps and every element's force are
    evaluated at the initial state; an element whose output is not finite is named."""
    assert_single_problem(make, words)


def test_the_initial_state_is_checked_at_t0():
    s, b, hinge = crank()
    s.add_joint(nd.RotationDriver(hinge, lambda t: ca.sqrt(1 - t) - 1, name="spin"))
    assert s.compile() is s.compile(t0=0.5)
    with pytest.raises(nd.ModelError, match=r"'spin': equations, Jacobian, time derivative not "
                                            r"finite at the initial state \(t = 2\)"):
        s.compile(t0=2.0)


@pytest.mark.parametrize("make, words", [
    (lambda s, b, j: s.add_joint(nd.RotationDriver(nd.Revolute(s.ground, b, (0, 0, 0), (0, 1, 0)),
                                                   lambda t: t, name="spin")),
     "rotation driver 'spin': its revolute joint (unnamed) is not part of this system (add it "
     "with add_joint)"),
    (lambda s, b, j: s.add_joint(nd.TranslationDriver(
        nd.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="rail"), 0.0, name="push")),
     "translation driver 'push': its prismatic joint 'rail' is not part of this system"),
    (lambda s, b, j: s.add_force(nd.PointForce(nd.System().add_body("stranger", 1, (1, 1, 1)),
                                               force=(0, 0, 1), name="load")),
     "point force 'load': body 'stranger' is not part of this system"),
    (lambda s, b, j: s.add_force(nd.SpringDamper(nd.System().ground, (0, 0, 1), b, (1, 0, 0),
                                                 10.0, name="spring")),
     "spring-damper 'spring': body 'ground' is not part of this system"),
    (lambda s, b, j: s.add_joint(nd.SphericalClearance(s.ground, b, (0.5, 0, 0), 1e-3, radius=-1,
                                                       name="socket")),
     "spherical clearance joint 'socket': radius must be >= 0, got -1.0"),
    (lambda s, b, j: s.add_joint(nd.SphericalClearance(s.ground, b, (0.5, 0, 0), 0.0,
                                                       name="socket")),
     "spherical clearance joint 'socket': clearance must be > 0, got 0.0 (use the ideal joint"),
    (lambda s, b, j: s.add_joint(nd.CylindricalClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.0,
                                                         1e-3, 0.02, name="bore")),
     "cylindrical clearance joint 'bore': radius must be > 0, got 0.0"),
    (lambda s, b, j: s.add_joint(nd.CylindricalClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.01,
                                                         1e-3, -0.02, name="bore")),
     "cylindrical clearance joint 'bore': length must be > 0, got -0.02"),
    (lambda s, b, j: s.add_joint(nd.RevoluteClearance(s.ground, b, (0, 0, 0), (0, 1, 0), 0.01,
                                                      1e-3, 0.02, -1e-3, name="bore")),
     "revolute clearance joint 'bore': axial_clearance must be > 0, got -0.001"),
    (lambda s, b, j: s.add_joint(nd.PrismaticClearance(s.ground, b, (0.5, 0, 0), (1, 0, 0),
                                                       SQUARE, -1e-3, 0.1, name="slot")),
     "prismatic clearance joint 'slot': clearance must be > 0, got -0.001"),
    (lambda s, b, j: s.add_force(nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), -10.0,
                                                 name="spring")),
     "spring-damper 'spring': stiffness must be a finite number >= 0, got -10.0"),
    (lambda s, b, j: s.add_force(nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), 10.0, -0.5,
                                                 name="spring")),
     "spring-damper 'spring': damping must be a finite number >= 0, got -0.5"),
    (lambda s, b, j: s.add_force(nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), 10.0,
                                                 free_length=-1.0, name="spring")),
     "spring-damper 'spring': free_length must be a finite number >= 0, got -1.0"),
    (lambda s, b, j: s.add_force(nd.Bushing(s.ground, b, (0, 0, 0), 1e3, damping=-1.0,
                                            name="mount")),
     "bushing 'mount': damping must be a number >= 0 or 3 of them, got -1.0"),
    (lambda s, b, j: s.add_body(None, 1.0, (1, 1, 1)),
     "body 'None': name must be a non-empty string, got None"),
    (lambda s, b, j: s.add_body(5, 1.0, (1, 1, 1)),
     "body '5': name must be a non-empty string, got 5"),
    (lambda s, b, j: s.add_body(" ", 1.0, (1, 1, 1)),
     "body ' ': name must be a non-empty string, got ' '"),
    (lambda s, b, j: s.add_joint(nd.Spherical(s.ground, b, (0, 0, 0), name=5)),
     "spherical joint '5': name must be a non-empty string, got 5"),
    (lambda s, b, j: s.add_force(nd.PointForce(b, force=(0, 0, 1), name="")),
     "point force '': name must be a non-empty string, got ''"),
    (lambda s, b, j: s.add_force(nd.PointForce(b, force=(0, 0, 1), name="gravity")),
     "point force 'gravity': the name 'gravity' is reserved for the built-in gravity element"),
    (lambda s, b, j: s.add_body("gravity", 1.0, (1, 1, 1)),
     "body 'gravity': the name 'gravity' is reserved for the built-in gravity element"),
    (lambda s, b, j: s.add_force(nd.PointForce(b, force=(0, 0, 1), name="bar")),
     "point force 'bar': the name 'bar' is already a body's; names of bodies and elements must "
     "differ"),
    (lambda s, b, j: s.add_joint(nd.Spherical(s.ground, b, (0, 0, 0), name="ground")),
     "spherical joint 'ground': the name 'ground' is already a body's"),
], ids=case_id)
def test_inputs_once_accepted_silently(make, words, no_stepping):
    s, b, hinge = crank()
    make(s, b, hinge)
    problems = refused(s)
    assert_named(problems, words)
    assert len(problems) == 1


def test_changed_parameters_are_compiled_again():
    """Parameters may change after a run (no body or element can be added): the next compile
    compares a fingerprint of every parameter, in place edits of arrays included, and builds
    again; an unchanged system keeps its functions."""
    s, b, hinge = crank()
    spring = s.add_force(nd.SpringDamper(s.ground, (0, 0, 1), b, (1, 0, 0), 10.0, name="spring"))
    first = nd.simulate(s, t_end=2e-3, h=1e-3, progress=False)
    compiled = s.compile()
    assert s.compile() is compiled
    b.mass = 2
    assert s.compile() is not compiled and s.compile().M[0, 0] == 2.0
    b.velocity[2] = -1.0                                           # in place
    assert s.compile().initial_state()[1][2] == -1.0
    spring.stiffness = 1e3
    second = nd.simulate(s, t_end=2e-3, h=1e-3, progress=False)
    assert not np.allclose(first.q, second.q)
    # a rerun of the changed system is the run of a system built with the new data
    fresh, b2, _ = crank(mass=2.0, velocity=(0, 0, -1.0))
    fresh.add_force(nd.SpringDamper(fresh.ground, (0, 0, 1), b2, (1, 0, 0), 1e3, name="spring"))
    assert np.array_equal(second.q, nd.simulate(fresh, t_end=2e-3, h=1e-3, progress=False).q)
    b.mass = -1.0                                                   # and it is validated again
    hinge.point = [0, 0, 0]
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(s, t_end=2e-3, h=1e-3, progress=False)
    assert err.value.problems == [
        "body 'bar': mass must be positive and finite, got -1.0",
        "revolute joint 'hinge': point was set to [0, 0, 0] after construction; assign a numpy "
        "array (constructors convert their arguments, assignments are kept as given)"]
    with pytest.raises(RuntimeError, match="compiled and locked"):
        s.add_body("late", 1.0, (1, 1, 1))


@pytest.mark.slow
def test_a_changed_cone_is_rebuilt():
    """The range-of-motion cone caches its spline: the cache follows the cone's data."""
    s, b, _ = crank()
    rom = s.add_force(nd.RangeOfMotionCone(s.ground, b, **CONE, name="cone"))
    s.compile()
    rom.max_latitudes = np.radians([40] * 5)
    s.compile()
    assert abs(float(rom.max_latitude(0.3)) - np.radians(40)) <= 1e-12


def test_mistakes_of_every_kind_in_one_error(no_stepping):
    """Invalid data, references outside the system, reserved names and user functions that
    fail are reported together (elements on an invalid body are not built, so they add
    nothing). Values that are not finite at the initial state are checked once the model
    builds, so they come in a second error."""
    s = nd.System()
    a = s.add_body("a", mass="heavy", inertia=(1, 1, 1))
    s.add_body(None, mass=1.0, inertia=(1, 1, 1), position=(1, 0, 0))
    c = s.add_body("c", mass=1.0, inertia=(1, 1, 1), position=(2, 0, 0))
    s.add_joint(nd.RotationDriver(nd.Revolute(s.ground, c, (0, 0, 0), (0, 1, 0), name="loose"),
                                  0.1, name="spin"))
    s.add_joint(nd.SphericalClearance(s.ground, c, (2, 0, 0), 1e-3, radius=-1, name="socket"))
    s.add_joint(nd.Programmed([c], lambda t, st: st.r[0] if st.r[0] > 0 else 0, name="path"))
    s.add_force(nd.SpringDamper(s.ground, (0, 0, 0), c, None, stiffness=np.nan, name="spring"))
    s.add_force(nd.PointForce(c, force=lambda t, st: ca.vertcat(0, 1), name="load"))
    s.add_force(nd.PointForce(c, force=(0, 0, 1), name="gravity"))
    s.add_force(nd.PointForce(a, force=lambda t, st: ca.vertcat(0, 1), name="on_a"))
    problems = refused(s)
    expected = ["body 'a': mass must be positive and finite, got 'heavy'",
                "body 'None': name must be a non-empty string, got None",
                "rotation driver 'spin': its revolute joint 'loose' is not part of this system",
                "spherical clearance joint 'socket': radius must be >= 0, got -1.0",
                "programmed constraint 'path': equations failed: RuntimeError: Cannot compute "
                "the truth value",
                "spring-damper 'spring': point_b must be 3 finite numbers, got None",
                "spring-damper 'spring': stiffness must be a finite number >= 0, got nan",
                "point force 'load': force returned shape (2,), expected (3,)",
                "point force 'gravity': the name 'gravity' is reserved"]
    for words in expected:
        assert_named(problems, words)
    assert len(problems) == len(expected)


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


def test_misspelt_settings_are_all_named(no_stepping):
    """Unknown keywords are a ModelError naming every one, with the closest field."""
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(pendulum(), t_end=1.0, h=1e-3, progress=False, step_contorl="nlp",
                    gap_iteration=3, zzz=1)
    assert_named(err.value.problems, "'step_contorl' (not an argument nor a StepperSettings "
                 "field; did you mean 'step_control'?)")
    assert_named(err.value.problems, "'gap_iteration' (not an argument nor a StepperSettings "
                 "field; did you mean 'gap_iterations'?)")
    assert_named(err.value.problems, "'zzz' (not an argument nor a StepperSettings field)")
    assert len(err.value.problems) == 3


@pytest.fixture
def no_solving(monkeypatch):
    """A step that reaches the solver fails the test: the input must be refused before (a
    run that would hang or overflow never starts)."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a step was solved before the input was validated")
    monkeypatch.setattr(Stepper, "_solve_with_retries", refuse)


def pendulum_in(gravity):
    s = pendulum()
    s.gravity = np.array(gravity, dtype=float)
    return s


def run(*args, system=None, **kwargs):
    """nd.simulate on the pendulum (or ``system``) from its arguments, progress bar off."""
    return lambda: nd.simulate(pendulum() if system is None else system,
                               *(args or (1.0, 1e-3)), **{"progress": False, **kwargs})


@pytest.mark.parametrize("call, words", [
    (run(1.0, None), ["h must be a step size or a pair", "got None"]),
    (run(1.0, 1e-3 + 1j), ["h must be a step size or a pair", "(0.001+1j)"]),
    (run(1.0, "1e-3"), ["h must be a step size or a pair", "got '1e-3'"]),
    (run(1.0, True), ["h must be a step size or a pair", "got True"]),
    (run(1.0, (1e-4, "1e-3")), ["h: h_max must be a number (s), got '1e-3'"]),
    (run(1.0, 1e-300), ["h = 1e-300 s is below the time resolution 1e-12 s"]),
    (run(1.0, (1e-300, 1e-3)), ["h_min = 1e-300 s is below the time resolution"]),
    (run(1.0, 1e-10), ["h = 1e-10 s needs 1e+10 steps from t0 to t_end, more than 1e+09"]),
    (run("1", 1e-3), ["t_end must be a finite number (s), got '1'"]),
    (run(None, 1e-3), ["t_end must be a finite number (s), got None"]),
    (run([1.0], 1e-3), ["t_end must be a finite number (s), got [1.0]"]),
    (run(t0="0"), ["t0 must be a finite number (s), got '0'"]),
    (run(foo=1), ["unknown keyword 'foo'"]),
    (run(step_contol="nlp"), ["unknown keyword 'step_contol'", "did you mean 'step_control'?"]),
    (lambda: Stepper(pendulum(), h=1e-3, bogus=1, fom="gauss"),
     ["unknown keyword 'bogus'", "unknown keyword 'fom'", "did you mean 'form'?"]),
    (run(settings={"form": "gauss"}),
     ["settings must be a StepperSettings, got a dict: pass StepperSettings(**d)"]),
    (run(settings=["gauss"]), ["settings must be a StepperSettings or None, got list"]),
    (run(form=np.array([1.0, 2.0])), ["form must be one of"]),
    (run(system={"bar": 1.0}), ["system must be an nlpdyn System, got dict"]),
    (lambda: Stepper(pendulum(), h=1e-3).step(t_end="x"),
     ["t_end must be a number (s) or None, got 'x'"]),
    (run(progress="yes"), ["progress must be True, False or None, got 'yes'"]),
    (run(output_every=2.0), ["output_every must be a whole number >= 1, got 2.0"]),
    (run(system=pendulum(mass=1e-320)), ["body 'bar': mass must be within", "got 1e-320"]),
    (run(system=pendulum(inertia=(1e-320, 1e-320, 1e-320))),
     ["body 'bar': principal moments of inertia must be within", "got 1e-320"]),
    (run(system=pendulum(mass=1e200)), ["body 'bar': mass must be within", "got 1e+200"]),
    (run(system=pendulum_in(gravity=(0, 0, -1e300))),
     ["gravity must be at most 1e+100 m/s^2", "got [0.0, 0.0, -1e+300]"]),
    (run(system=pendulum(mass=1e150, position=(1e60, 0, 0))),
     ["gravity: |g| = 9.81 m/s^2 on 1e+150 kg of bodies over 1e+60 m", "beyond 1e+200 J"]),
], ids=lambda value: "call" if callable(value) else value[0][:48])
def test_bad_input_is_named_before_stepping(call, words, no_solving):
    """Every input once met with a raw Python error, accepted silently or run into a hang or
    an overflow (issue 22) is a ModelError naming its culprit, before any step is solved."""
    with pytest.raises(nd.ModelError) as err:
        call()
    for w in words:
        assert_named(err.value.problems, w)


def test_argument_and_model_problems_in_one_error(no_solving):
    """Problems of the run's arguments and of the model come together, arguments first."""
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(pendulum(mass=-1.0), t_end=-1.0, h=1e-3, progress=False)
    assert err.value.problems == ["t_end must be finite and greater than t0 = 0.0, got -1.0",
                                  "body 'bar': mass must be positive and finite, got -1.0"]
    with pytest.raises(nd.ModelError) as err:
        Stepper(pendulum(mass=-1.0), h="x", settings={"form": "gauss"}, nlp_tol=0.0, fom=1)
    assert [p.split(" ")[0] for p in err.value.problems] == [
        "settings", "unknown", "nlp_tol", "h", "body"]


def test_a_refused_run_leaves_the_system_open():
    """Gathering the model's problems with the arguments' does not compile (lock) it."""
    s = pendulum()
    with pytest.raises(nd.ModelError, match="t_end"):
        nd.simulate(s, t_end=None, h=1e-3, progress=False)
    assert not s.is_compiled
    s.add_body("second", mass=1.0, inertia=(1, 1, 1))


def test_every_setting_is_checked():
    """A value that is no setting's (an object) is refused for every field, all at once:
    a field added without a check fails here."""
    names = [f.name for f in dataclasses.fields(nd.StepperSettings)]
    with pytest.raises(nd.ModelError) as err:
        nd.StepperSettings(**{name: object() for name in names})
    named = [next((n for n in sorted(names, key=len, reverse=True) if p.startswith(n)), p)
             for p in err.value.problems]
    assert sorted(named) == sorted(names)


def test_direct_solver_refuses_gaps(no_stepping):
    s, b = bar_system()
    s.add_joint(nd.SphericalClearance(s.ground, b, point=(0.5, 0, 0), clearance=1e-3,
                                      name="socket"))
    with pytest.raises(nd.ModelError, match=r"solver 'direct' handles joints without gaps only.*socket"):
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
    with pytest.raises(nd.ModelError, match="cannot be made consistent.*at programmed "
                                            "constraint .reach. and spherical joint .ball."):
        nd.simulate(s, t_end=0.01, h=1e-3, progress=False)


def test_projection_into_an_overlap_is_refused(no_stepping):
    """The driver's 2 mm at t = 0 is projected: the bar moves 2 mm, and its ball sits 1 mm
    deep in a socket of 1 mm clearance: refused before stepping, naming the socket."""
    s, b = bar_system()
    rail = s.add_joint(nd.Prismatic(s.ground, b, (0.5, 0, 0), (1, 0, 0), name="rail"))
    s.add_joint(nd.TranslationDriver(rail, 2e-3, name="push"))
    s.add_joint(nd.SphericalClearance(s.ground, b, (0.5, 0, 0), 1e-3, name="socket"))
    with pytest.raises(nd.ModelError, match="spherical clearance joint 'socket': initial gap"):
        nd.simulate(s, t_end=3e-3, h=1e-3, progress=False)


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
    """A load that is finite at t = 0 (refused otherwise, see test_not_finite_at_the_initial_state)
    but NaN after it (sqrt(-t)), evaluated at the end of the step: every attempt at the first
    step fails, so the run stops at t = 0; simulate must still return the one-point
    trajectory."""
    s = nd.System(gravity=(0, 0, -9.81))
    b = s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint(nd.Spherical(s.ground, b, point=(0.1, 0, 0), name="ball"))
    bad = nd.PointForce(b, force=lambda t, state: ca.vertcat(0, 0, ca.sqrt(-t)), name="bad")
    bad.evaluation = "implicit"
    s.add_force(bad)
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


@pytest.mark.slow
@pytest.mark.parametrize("build, h, options, programs", [
    # the midpoint step (the default) builds its end-velocity projection once beside its solver
    (pendulum, 1e-3, {}, ["direct", "projection"]),
    (pendulum, 1e-3, dict(solver="qp"), ["conic", "projection"]),
    (pendulum, 1e-3, dict(solver="qp", scheme="euler"), ["conic"]),
    (pendulum, 1e-3, dict(solver="ipopt"), ["nlpsol"]),
    (pendulum, 1e-3, dict(form="explicit"), ["nlpsol"]),
    (pendulum, (1e-4, 1e-3), dict(step_control="adaptive"), ["direct", "projection"]),
    (pendulum, (1e-4, 1e-3), dict(step_control="nlp", polish=False, nlp_method="ipopt"),
     ["nlpsol"]),
    # "nlp" by IPOPT re-solves steps that end just short of h_max with the fixed-h solver
    # ("polish"), and refines gaps with it: the variable-h NLP plus that solver, each built once
    (pendulum, (1e-4, 1e-3), dict(step_control="nlp", nlp_method="ipopt"), ["direct", "nlpsol"]),
    # by bisection it only uses the fixed-h solver
    (pendulum, (1e-4, 1e-3), dict(step_control="nlp"), ["direct"]),
    (falling_cup, 1e-3, {}, ["conic", "projection"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="adaptive"), ["conic", "projection"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="adaptive", scheme="euler"), ["conic"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="nlp", nlp_method="ipopt"), ["conic", "nlpsol"]),
    (falling_cup, (1e-4, 1e-3), dict(step_control="nlp"), ["conic"]),
], ids=["fixed-direct", "fixed-qp", "fixed-qp-euler", "fixed-ipopt", "fixed-explicit", "adaptive",
        "nlp-unpolished", "nlp-ipopt", "nlp", "gap-fixed", "gap-adaptive", "gap-adaptive-euler",
        "gap-nlp-ipopt", "gap-nlp"])
def test_program_constructed_once_per_run(build, h, options, programs, monkeypatch):
    """Every solver the run uses is constructed exactly once (counted at CasADi's nlpsol and
    conic constructors and at the closed-form and end-velocity projection builds), whatever h
    does: t_end = 0.0295 is not a multiple of h, so the last step is shortened, and the cup's
    contact makes the adaptive schemes cut h before the impact. ``res.info["program_builds"]``
    reports the count."""
    from nlpdyn.step_nlp import StepProgram
    made = []
    for name in ("nlpsol", "conic"):
        original = getattr(ca, name)
        monkeypatch.setattr(ca, name, lambda *a, _o=original, _n=name, **k: (made.append(_n),
                                                                             _o(*a, **k))[1])
    for method, name in (("_build_direct", "direct"), ("_build_projection", "projection")):
        original = getattr(StepProgram, method)
        monkeypatch.setattr(StepProgram, method,
                            lambda self, _o=original, _n=name: (made.append(_n), _o(self))[1])
    res = nd.simulate(build(), t_end=0.0295, h=h, progress=False, **options)
    assert res.success
    assert len(np.unique(res.h)) >= 2                                     # h did change
    if build is falling_cup and np.ndim(h):
        assert res.h[:-1].min() < 0.9e-3                                  # cut at contact
    assert sorted(made) == programs
    assert res.info["program_builds"] == len(programs)


def test_stepper_lands_on_t_end_and_refuses_to_pass_it():
    """Stepper.step(t_end) shortens the last step to land on t_end exactly (no rebuild: the
    midpoint step's closed form and end-velocity projection, built by the first step) and
    refuses a step once there."""
    stepper = nd.Stepper(pendulum(), h=1e-3)
    stepper.step(t_end=0.0295)
    assert stepper.program.build_count == 2
    while stepper.t < 0.0295 - 1e-15:
        stepper.step(t_end=0.0295)
    assert abs(stepper.t - 0.0295) <= IDENTITY
    assert stepper.program.build_count == 2
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
