"""Everyday API: lookups by object, names at add_*, orientations, near-unit vectors, and the
Stepper's result, reset and set_state."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import nlpdyn as nd
from nlpdyn.stepper import GYROSCOPIC_TOL

ROUND_OFF = 1e-12       # identities


def pendulum(axis=(0, 1, 0), orientation=(1, 0, 0, 0), **joint):
    s = nd.System(gravity=(0, 0, -9.81))
    bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0),
                     orientation=orientation)
    hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=axis, **joint))
    return s, bar, hinge


def clearance_model():
    """A bar on a clearance pin with a spring to the ground."""
    s = nd.System(gravity=(0, -9.81, 0))
    bar = s.add_body("bar", mass=1.0, inertia=(2e-4, 0.0834, 0.0834), position=(0.5, 0, 0))
    pin = s.add_joint(nd.RevoluteClearance(s.ground, bar, (0, 0, 0), (0, 0, 1), 0.01, 1e-4,
                                           0.02, 1e-4))
    spring = s.add_force(nd.SpringDamper(s.ground, (1, 0.5, 0), bar, (1, 0, 0), stiffness=50.0,
                                         damping=0.5))
    return s, bar, pin, spring


# ------------------------------------------------------------------ names and lookups
def test_names_are_given_at_add_time():
    s, bar, hinge = pendulum()
    assert hinge.name == "revolute1"
    driver = s.add_joint(nd.RotationDriver(hinge, angle=0.0))
    assert driver.name == "revolute1_rotation"
    taken = s.add_joint(nd.Spherical(s.ground, bar, (1, 0, 0), name="spherical1"))
    other = s.add_joint(nd.Spherical(s.ground, bar, (1, 0, 0)))
    assert (taken.name, other.name) == ("spherical1", "spherical2")
    spring = s.add_force(nd.SpringDamper(s.ground, (0, 0, 1), bar, (0.5, 0, 0), stiffness=1.0))
    assert spring.name == "springdamper1"


def test_lookups_take_the_object_or_its_name():
    s, bar, pin, spring = clearance_model()
    res = nd.simulate(s, t_end=0.02, h=1e-3, progress=False)
    for method in ("position", "orientation", "velocity", "angular_velocity", "rotation"):
        assert np.array_equal(getattr(res, method)(bar), getattr(res, method)("bar"))
    for method in ("reaction_force", "reaction_torque", "gap", "contact_force", "contact_point",
                   "contact_force_vector"):
        assert np.array_equal(getattr(res, method)(pin), getattr(res, method)(pin.name)), method
    assert np.array_equal(res.reaction_force(pin, body=s.ground),
                          res.reaction_force(pin.name, body="ground"))
    for method in ("applied_force", "applied_torque", "dissipated"):
        assert np.array_equal(getattr(res, method)(spring), getattr(res, method)(spring.name))
    s2, bar2, hinge = pendulum()
    res2 = nd.simulate(s2, t_end=0.01, h=1e-3, progress=False)
    assert np.array_equal(res2.multipliers(hinge), res2.multipliers("revolute1"))
    with pytest.raises(KeyError, match="no body named 'nothing'"):
        res2.position("nothing")


# ------------------------------------------------------------------ orientations, unit vectors
def test_orientation_as_rotation_matrix_or_euler_parameters():
    rot = Rotation.from_euler("zyx", [0.3, -0.7, 1.1])
    x, y, z, w = rot.as_quat()                   # scipy: scalar last
    bodies = [nd.RigidBody("b", 1.0, (1, 1, 1), orientation=given)
              for given in (rot, rot.as_matrix(), (w, x, y, z))]
    for body in bodies:
        assert np.abs(body.rotation0 - rot.as_matrix()).max() <= ROUND_OFF
        assert body.problems() == []


def test_near_unit_vectors_are_normalised_with_a_warning():
    with pytest.warns(UserWarning, match=r"revolute joint \(unnamed\): axis normalised"):
        s, _, hinge = pendulum(axis=(0.7071, 0.7071, 0))
    assert np.abs(hinge.axis - np.array([1, 1, 0]) / np.sqrt(2)).max() <= ROUND_OFF
    with pytest.warns(UserWarning, match="body 'bar': orientation normalised"):
        _, bar, _ = pendulum(orientation=(0.7071, 0.7071, 0, 0))
    assert abs(np.linalg.norm(bar.orientation) - 1) <= ROUND_OFF
    nd.simulate(s, t_end=0.005, h=1e-3, progress=False)     # accepted
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # round-off: normalised silently
        _, _, hinge = pendulum(axis=(0, 1 + 1e-14, 0))
    assert np.array_equal(hinge.axis, [0, 1, 0])


@pytest.mark.parametrize("what", ["axis", "orientation"])
def test_vectors_beyond_the_tolerance_are_refused(what):
    given = {"axis": dict(axis=(0, 1.01, 0)), "orientation": dict(orientation=(1.01, 0, 0, 0))}
    s, _, _ = pendulum(**given[what], name="hinge")
    with pytest.raises(nd.ModelError) as err:
        s.validate()
    expected = {"axis": "revolute joint 'hinge': axis must be a unit vector, |axis| = 1.01",
                "orientation": "body 'bar': orientation Euler parameters must have unit norm"}
    assert expected[what] in str(err.value)


# ------------------------------------------------------------------ Stepper: result, reset, state
def free_body():
    s = nd.System(gravity=(0, 0, -9.81))
    s.add_body("top", mass=1.0, inertia=(0.01, 0.02, 0.03), velocity=(1, 0, 2),
               angular_velocity=(3, 0.5, 1))
    return s


def test_stepper_result_is_the_simulate_result():
    s, bar, hinge = pendulum()
    stepper = nd.Stepper(s, h=1e-3)
    for _ in range(20):
        stepper.step()
    res = stepper.result()
    ref = nd.simulate(s, t_end=0.02, h=1e-3, progress=False)
    assert res.success and res.message == "stepped to t = 0.02"
    assert np.abs(res.t - ref.t).max() <= ROUND_OFF
    for a, b in ((res.q, ref.q), (res.v, ref.v), (res.reaction_force(hinge), ref.reaction_force(hinge)),
                 (res.energy, ref.energy)):
        assert a.shape == b.shape and np.abs(a - b).max() <= ROUND_OFF * max(1, np.abs(b).max())
    assert list(res.energy_ledger().columns) == list(ref.energy_ledger().columns)


def test_stepper_reset_repeats_the_run():
    stepper = nd.Stepper(free_body(), h=1e-3)
    for _ in range(10):
        stepper.step()
    first = stepper.result()
    stepper.reset()
    assert stepper.t == 0.0 and len(stepper.result().t) == 1
    for _ in range(10):
        stepper.step()
    again = stepper.result()
    assert np.array_equal(first.q, again.q) and np.array_equal(first.v, again.v)


@pytest.mark.parametrize("scheme", ["euler", None])
def test_set_state_continues_the_run(scheme):
    """A free body continued from a recorded state follows the uninterrupted run: to
    round-off with the seed's "euler"; with the default midpoint to its gyroscopic
    iterations' tolerance, GYROSCOPIC_TOL of the velocities a step (set_state restarts their
    first guess, the last step's velocity change)."""
    stepper = nd.Stepper(free_body(), h=1e-3, scheme=scheme)
    for _ in range(20):
        stepper.step()
    full = stepper.result()
    stepper.set_state(full.t[10], full.q[10], full.v[10])
    for _ in range(10):
        stepper.step()
    tail = stepper.result()
    tol = ROUND_OFF if scheme == "euler" else 10 * GYROSCOPIC_TOL * (1 + np.abs(full.v).max())
    assert np.abs(tail.t - full.t[10:]).max() <= ROUND_OFF
    assert np.abs(tail.q - full.q[10:]).max() <= tol
    assert np.abs(tail.v - full.v[10:]).max() <= tol


def test_set_state_checks_the_state():
    s, bar, hinge = pendulum()
    stepper = nd.Stepper(s, h=1e-3)
    with pytest.raises(ValueError, match=r"q must be 7 finite numbers .*; v must be 6"):
        stepper.set_state(0.0, np.zeros(3), [np.nan] * 6)
    with pytest.raises(ValueError, match=r"body 'bar': \|p\| = 2"):
        stepper.set_state(0.0, [0.5, 0, 0, 2, 0, 0, 0], np.zeros(6))
    q = np.r_[0.0, 0.0, -0.6, 1.0, 0.0, 0.0, 0.0]      # 0.1 m off the pin
    stepper.set_state(0.5, q, np.zeros(6))
    assert stepper.t == 0.5 and stepper.initial_projection["changed"]
    assert abs(np.linalg.norm(stepper.q[:3]) - 0.5) <= ROUND_OFF    # back on its circle
    checking = nd.Stepper(s, h=1e-3, initial_conditions="check")
    with pytest.raises(nd.ModelError, match="revolute joint 'revolute1': initial position"):
        checking.set_state(0.5, q, np.zeros(6))
    assert checking.t == 0.0


# ------------------------------------------------------------------ output times
G = 9.81


def falling_ball():
    s = nd.System(gravity=(0, 0, -G))
    s.add_body("ball", mass=1.0, inertia=(1, 1, 1), velocity=(0, 0, 2))
    return s


def test_t_eval_lands_on_the_times():
    """Steps cut to end at off-grid times; the free fall there is semi-implicit Euler's,
    within g h_max t / 2 of the closed form z = v0 t - g t^2 / 2."""
    t_eval = [0.0125, 0.05, 0.1, 0.33333]
    h = 1e-2
    res = nd.simulate(falling_ball(), t_end=0.5, h=h, progress=False, t_eval=t_eval)
    assert np.abs(res.t - [0.0, *t_eval, 0.5]).max() <= ROUND_OFF
    exact = 2.0 * res.t - 0.5 * G * res.t**2
    assert np.all(np.abs(res.position("ball")[:, 2] - exact) <= 0.5 * G * h * res.t + ROUND_OFF)
    assert len(res.energy_ledger()) == len(res.t) and len(res.h) == len(res.t) - 1


def test_t_eval_on_the_step_grid_keeps_those_rows():
    full = nd.simulate(falling_ball(), t_end=0.5, h=1e-2, progress=False)
    res = nd.simulate(falling_ball(), t_end=0.5, h=1e-2, progress=False, t_eval=[0.1, 0.2, 0.3])
    rows = [0, 10, 20, 30, 50]
    for a, b in ((res.t, full.t[rows]), (res.q, full.q[rows]), (res.v, full.v[rows]),
                 (res.h, full.h[np.subtract(rows[1:], 1)]),
                 (res.energy_ledger().to_numpy(), full.energy_ledger().to_numpy()[rows])):
        assert a.shape == b.shape and np.abs(a - b).max() <= ROUND_OFF


def test_t_eval_is_checked():
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(falling_ball(), t_end=0.5, h=1e-2, t_eval=[0.3, 0.2, 0.7], output_every=2)
    assert "t_eval must be finite times, increasing, within [t0, t_end]" in str(err.value)
    assert "t_eval and output_every = 2 exclude each other" in str(err.value)


HEAVY_MODULES = ("pandas", "scipy", "matplotlib", "tqdm", "asyncio", "IPython")
"""What neither ``import nlpdyn`` nor a plain run imports (CPU to import each after numpy
and casadi: pandas 0.16 s, scipy.sparse.csgraph 0.22 s, scipy.linalg 0.18 s, tqdm.auto
with asyncio 0.02 s): sweep tables, scipy's integrators, splines and rotations, redundant rows'
pivoted QR, large models' sparse products, plots and progress bars import them when used."""


def _modules_imported(code: str, modules=HEAVY_MODULES) -> str:
    """Which of ``modules`` a fresh interpreter has imported after ``code`` (printed as a
    sorted list; stderr not a terminal, as under pytest: no progress bar)."""
    import subprocess
    import sys
    code += f"\nimport sys; print(sorted(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip().splitlines()[-1]


def test_import_leaves_heavy_modules_to_their_users():
    """``import nlpdyn`` imports none of HEAVY_MODULES: together 0.9 s of CPU that every run
    paid (measured: 1.13-1.19 s, then 0.34-0.46 s, then 0.26-0.29 s with the source
    compiled, 0.16-0.19 s from byte code)."""
    assert _modules_imported("import nlpdyn") == "[]"


def test_a_run_leaves_heavy_modules_to_their_users():
    """Nor does a run of a closed-loop mechanism, with or without a bar asked for off a
    terminal, import pandas, matplotlib or tqdm (scipy it does: the drawing's tree of links
    is scipy's ``minimum_spanning_tree``)."""
    code = ("import warnings, nlpdyn as nd; from problems import slider_crank\n"
            "warnings.simplefilter('ignore')\n"
            "for progress in (False, None):\n"
            "    res = nd.simulate(slider_crank.build(), 0.01, h=1e-3, progress=progress)\n"
            "    assert res.success and 'geometry' in res.info")
    assert _modules_imported(code, tuple(m for m in HEAVY_MODULES if m != "scipy")) == "[]"
