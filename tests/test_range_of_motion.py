"""Range-of-motion cone: interpolation, closest point by brute force, moment direction by
finite differences, action = reaction, and the case study's energy behaviour."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from problems import rom_pendulum


def _cone(interpolation="spline", longitudes=None, latitudes=None, **kw):
    s = rom_pendulum.build(rom=False)
    bar = s.bodies[0]
    cone = nd.RangeOfMotionCone(s.ground, bar, rom_pendulum.XI, rom_pendulum.ETA,
                                rom_pendulum.start_direction(),
                                rom_pendulum.LONGITUDES if longitudes is None else longitudes,
                                rom_pendulum.MAX_LATITUDES if latitudes is None else latitudes,
                                np.radians(11.5), 226.0, kw.get("damping", 0.0),
                                interpolation=interpolation, name="cone")
    s.add_force(cone)
    return s, cone


def test_spline_passes_through_the_data_and_is_periodic():
    _, cone = _cone()
    psi = rom_pendulum.LONGITUDES
    assert np.allclose(cone.max_latitude(psi[:-1]), rom_pendulum.MAX_LATITUDES[:-1], atol=1e-14)
    sym = ca.SX.sym("psi")
    f = ca.Function("s", [sym], [cone.max_latitude(sym)])
    df = ca.Function("ds", [sym], [ca.jacobian(cone.max_latitude(sym), sym)])
    d2f = ca.Function("d2s", [sym], [ca.jacobian(ca.jacobian(cone.max_latitude(sym), sym), sym)])
    for fn in (f, df, d2f):      # C2 across 0 = 2 pi: the jump shrinks with the distance
        jumps = [abs(float(fn(2 * np.pi - eps)) - float(fn(eps))) for eps in (1e-3, 1e-5)]
        assert jumps[1] < 0.02 * jumps[0] + 1e-12
    # the CasADi and numpy evaluations agree everywhere
    grid = np.linspace(0, 2 * np.pi, 101)
    assert np.allclose([float(f(x)) for x in grid], cone.max_latitude(grid), atol=1e-14)


def test_ellipse_matches_quadrant_values_and_an_ellipse():
    lat = np.radians([30, 60, 45, 20, 30])
    _, cone = _cone("ellipse", np.arange(5) * np.pi / 2, lat)
    assert np.allclose(cone.max_latitude(np.arange(4) * np.pi / 2), lat[:4], atol=1e-14)
    psi = np.radians(30.0)                 # first quadrant: a = 30 deg, b = 60 deg
    sigma = cone.max_latitude(psi)
    x, y = sigma * np.cos(psi), sigma * np.sin(psi)
    assert x**2 / lat[0] ** 2 + y**2 / lat[1] ** 2 == pytest.approx(1.0, rel=1e-12)


def _unit(lon, lat):
    return np.array([np.sin(lat) * np.cos(lon), np.sin(lat) * np.sin(lon), np.cos(lat)])


def test_closest_point_matches_dense_sampling_of_the_cone():
    """B from the element (Newton on eq. 31) against the best of 200 000 sampled generators:
    the same angle to u_r to the sampling resolution."""
    _, cone = _cone()
    u = ca.SX.sym("u", 3)
    psi_b, c_b, _ = cone.closest_point(u)
    fn = ca.Function("B", [u], [psi_b, c_b])
    grid = np.linspace(0, 2 * np.pi, 200_000, endpoint=False)
    samples = np.stack([_unit(g, s) for g, s in zip(grid, cone.max_latitude(grid))])
    rng = np.random.default_rng(7)
    for _ in range(40):
        lon = rng.uniform(0, 2 * np.pi)
        lat = cone.max_latitude(lon) + rng.uniform(-0.3, 0.4)
        target = _unit(lon, lat)
        _, c = fn(target)
        angle = np.arccos(np.clip(np.asarray(c).ravel() @ target, -1, 1))
        best = np.arccos(np.clip(samples @ target, -1, 1)).min()
        assert angle == pytest.approx(best, abs=2e-5)      # sampling step 3e-5 rad


def test_moment_opposes_the_growth_of_kappa():
    """Outside the cone, the restricting moment on the moving body is parallel to minus the
    finite-difference gradient of kappa with respect to small rotations of that body."""
    s, cone = _cone()
    cs = s.compile()
    states = cs.states_of(cone)
    kappa, moment = cone.kappa(states)
    frame = cone._joint_frame(states)
    fn = ca.Function("k", [cs.q_sym], [kappa, frame @ moment])
    q0, _ = cs.initial_state()
    from nlpdyn.rotations import from_rotation_vector, quaternion_product
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(300):
        q = q0.copy()
        q[3:7] = quaternion_product(from_rotation_vector(rng.normal(0, 1.2, 3)), q0[3:7])
        k0, m = (np.asarray(x).ravel() for x in fn(q))
        if not 1e-3 < k0[0] < 0.15:
            continue
        checked += 1
        grad = np.zeros(3)
        for i in range(3):                 # rotate the body by +-eps about global axis i
            e = np.zeros(3)
            e[i] = 1e-6
            qp, qm = q.copy(), q.copy()
            qp[3:7] = quaternion_product(from_rotation_vector(e), q[3:7])
            qm[3:7] = quaternion_product(from_rotation_vector(-e), q[3:7])
            grad[i] = (float(fn(qp)[0]) - float(fn(qm)[0])) / 2e-6
        cosine = -(m @ grad) / (np.linalg.norm(m) * np.linalg.norm(grad))
        assert cosine > 0.99
    assert checked >= 5


def test_moment_curve_and_application():
    """No moment inside the cone, at most the cubic step times m_p outside, applied to the
    moving body as the element computes it."""
    s, cone = _cone()
    cs = s.compile()
    states = cs.states_of(cone)
    kappa, moment = cone.kappa(states)
    fn = ca.Function("k", [cs.q_sym], [kappa, ca.norm_2(moment)])
    moment_global = ca.Function("m", [cs.q_sym], [cone.restricting_moment(states)])
    q0, _ = cs.initial_state()
    k, m = (float(x) for x in fn(q0))
    assert k == 0 and m == 0                      # the start is 20 deg inside
    from nlpdyn.rotations import from_rotation_vector, quaternion_product
    rng = np.random.default_rng(2)
    for _ in range(50):
        q = q0.copy()
        q[3:7] = quaternion_product(from_rotation_vector(rng.normal(0, 1.0, 3)), q0[3:7])
        k, m = (float(x) for x in fn(q))
        x = min(k / np.radians(11.5), 1.0)
        # |u_r x n| <= 1: the moment is at most the cubic step times m_p
        assert m <= 226.0 * (3 * x**2 - 2 * x**3) + 1e-9
        # the pendulum receives the element's moment (the ground, its reaction, is fixed)
        Q = np.asarray(cs.element_forces(0.0, q, np.zeros(cs.nv), cs.initial_history()))
        from nlpdyn.rotations import rotation_matrix
        glob = rotation_matrix(q[3:7]) @ Q[3:6, 1]
        assert np.allclose(glob, np.asarray(moment_global(q)).ravel(), atol=1e-12)


@pytest.fixture(scope="module")
def runs():
    return {label: rom_pendulum.run(label, t_end=2.0, h=1e-3) for label in rom_pendulum.RUNS}


def test_case_seven_energy_and_cone(runs):
    """Seed 000's findings: without the cone the pendulum leaves it (by 35 deg near 315 deg
    longitude); with the elastic cone (j = 0) it stays within cone + delta_sigma, and the
    energy it takes while pressing into the cone comes back (kinetic + gravity + the cone's
    stored energy: the dip is a small part of what the cone stores, the end value is within
    the stepper's O(h) oscillation, measured without the cone); with damping it dissipates
    and stays inside the cone."""
    cone = rom_pendulum.cone_element(rom_pendulum.build())
    excess = {}
    for label, res in runs.items():
        assert res.success
        psi, sigma = rom_pendulum.longitude_latitude(res)
        excess[label] = (sigma - cone.max_latitude(psi)).max()
    assert excess["no RoM"] > np.radians(20)
    assert 0 < excess["RoM, j = 0"] < np.radians(11.5)
    assert excess["RoM, j = 3.39"] < 0
    free, elastic, damped = (runs[k].energy for k in rom_pendulum.RUNS)
    swing = np.ptp(free)                                     # the O(h) oscillation
    stored = runs["RoM, j = 0"].element_potential["cone"].max()
    assert stored > 1.0
    assert abs(elastic[-1] - elastic[0]) < 2 * swing
    assert np.ptp(elastic) < 0.1 * stored
    assert damped[-1] < damped[0] - 1.0 and np.max(damped - damped[0]) <= 1e-12


def test_validation_names_the_cone():
    s = rom_pendulum.build(rom=False)
    bar = s.bodies[0]
    s.add_force(nd.RangeOfMotionCone(s.ground, bar, (1, 0, 0), (1, 0, 0), (0, 1, 0),
                                     np.radians([0, 90, 200]), np.radians([30, 40, 35]), -1.0,
                                     226.0, 1.0, interpolation="ellipse", name="bad_cone"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    assert "'bad_cone': xi_axis and eta_axis must be perpendicular" in text
    assert "'bad_cone': longitudes must increase strictly from 0 to 2 pi" in text
    assert "'bad_cone': the max latitude at 0 and 2 pi must be equal" in text
    assert "'bad_cone': interpolation 'ellipse' needs the five quadrant longitudes" in text
    assert "'bad_cone': delta_sigma must be > 0" in text


def test_action_equals_reaction_between_two_moving_bodies():
    """With a moving reference body the two moments cancel (global)."""
    s = nd.System(gravity=(0, 0, 0))
    a = s.add_body("a", 1.0, (0.02, 0.03, 0.04), angular_velocity=(0.5, -1.0, 2.0))
    b = s.add_body("b", 1.0, (0.02, 0.03, 0.04), position=(0, 0, -0.3))
    cone = s.add_force(nd.RangeOfMotionCone(a, b, (1, 0, 0), (0, 1, 0), (1, 0, 0),
                                            np.radians([0, 90, 180, 270, 360]),
                                            np.radians([20, 20, 20, 20, 20]), 0.1, 50.0, 2.0,
                                            name="cone"))
    cs = s.compile()
    q, v = cs.initial_state()
    Q = np.asarray(cs.element_forces(0.0, q, v, cs.initial_history()))[:, 1]
    assert np.abs(Q).max() > 1.0                 # u_r at 90 deg latitude: far outside
    from nlpdyn.rotations import rotation_matrix
    total = sum(rotation_matrix(q[7 * k + 3:7 * k + 7]) @ Q[6 * k + 3:6 * k + 6] for k in range(2))
    assert np.abs(total).max() < 1e-12 * np.abs(Q).max()
