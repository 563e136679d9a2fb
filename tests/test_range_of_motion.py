"""Range-of-motion cone (seed 000 section 3) against things it does not compute itself:
dense brute-force sampling of the cone, finite differences of kappa and of the stored energy,
the defining properties of a periodic cubic spline and of quarter ellipses, closed forms for
a regular cone, and the energy balance of short pendulum runs."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.forces.range_of_motion import RangeOfMotionCone
from nlpdyn.rotations import from_rotation_vector, quaternion_product, rotation_matrix

DEG = np.pi / 180
# (interpolation, longitudes, max latitudes) in degrees
CASE_7 = ("spline", [0, 90, 135, 180, 270, 315, 360], [30, 70, 100, 80, 50, 45, 30])
SEED_SPLINE = ("spline", [0, 45, 180, 225, 360], [45, 30, 45, 30, 45])          # seed Fig. 10
SEED_ELLIPSE = ("ellipse", [0, 90, 180, 270, 360], [60, 30, 45, 20, 60])        # seed Fig. 5b
CONES = {"case7": CASE_7, "seed-spline": SEED_SPLINE, "seed-ellipse": SEED_ELLIPSE}
XI, ETA, UR = np.array([-1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([0, 0, -1.0])


def _system(cone_data=CASE_7, delta_sigma=11.5 * DEG, max_moment=226.0, damping=0.0,
            gravity=(0, 0, 0), angular_velocity=(0, 0, 0)):
    """A bar hanging along u_zeta = (0, 0, -1) (latitude 0) from a spherical joint, and the
    cone; its body axes are the global axes initially."""
    interpolation, lon, lat = cone_data
    s = nd.System(gravity=gravity)
    bar = s.add_body("bar", 8.5, (0.1434, 0.1434, 1.7e-3), position=(0, 0, -0.225),
                     velocity=np.cross(angular_velocity, (0, 0, -0.225)),
                     angular_velocity=angular_velocity)
    s.add_joint(nd.Spherical(s.ground, bar, point=(0, 0, 0), name="pivot"))
    cone = s.add_force(RangeOfMotionCone(s.ground, bar, XI, ETA, UR, np.radians(lon),
                                         np.radians(lat), delta_sigma, max_moment, damping,
                                         interpolation=interpolation, name="cone"))
    return s, cone


def _unit(lon, lat):
    return np.array([np.sin(lat) * np.cos(lon), np.sin(lat) * np.sin(lon), np.cos(lat)])


def _orientation_for(u_joint):
    """Euler parameters turning the bar's axis (0, 0, -1) = u_zeta onto the joint-frame
    direction ``u_joint`` (global = joint components on XI, ETA, zeta)."""
    target = u_joint[0] * XI + u_joint[1] * ETA + u_joint[2] * UR
    axis = np.cross(UR, target)
    angle = np.arctan2(np.linalg.norm(axis), UR @ target)
    return from_rotation_vector(axis / max(np.linalg.norm(axis), 1e-300) * angle)


def _rotated(q, theta):
    """q with the bar turned by the global rotation vector theta."""
    out = q.copy()
    out[3:7] = quaternion_product(from_rotation_vector(theta), q[3:7])
    return out


# ---------------------------------------------------------------------- the cone's boundary
def test_spline_interpolates_is_periodic_and_c2_everywhere():
    """A periodic cubic spline is defined by: through the data, a cubic between knots, value,
    slope and curvature continuous at every knot including 0 = 2 pi. Check each property on
    the CasADi expression the element uses (and that numpy agrees with it)."""
    _, cone = _system()
    lon, lat = np.radians(CASE_7[1]), np.radians(CASE_7[2])
    assert np.abs(cone.max_latitude(lon) - lat).max() <= 1e-12
    psi = ca.SX.sym("psi")
    expr = cone.max_latitude(psi)
    derivs = [expr, ca.jacobian(expr, psi)]
    derivs += [ca.jacobian(derivs[1], psi), ca.jacobian(ca.jacobian(derivs[1], psi), psi)]
    fn = ca.Function("sigma_max", [psi], derivs)

    def at(x):
        return np.array([float(v) for v in fn(x)])

    eps = 1e-9
    for knot in lon[:-1]:                  # left and right limits at every knot (0 wraps to 2 pi)
        left, right = at(knot - eps), at(knot + eps)
        assert np.abs(left[:3] - right[:3]).max() <= 1e-6
    grid = np.linspace(-1.0, 7.5, 301)
    assert np.abs(np.array([at(x)[0] for x in grid]) - cone.max_latitude(grid)).max() <= 1e-12
    # piecewise cubic: the third derivative is constant inside each interval
    for a, b in zip(lon[:-1], lon[1:]):
        third = [at(x)[3] for x in np.linspace(a + 1e-3, b - 1e-3, 5)]
        assert np.ptp(third) <= 1e-9 * max(1.0, np.abs(third).max())


def test_ellipse_matches_the_quadrant_values_and_quarter_ellipses():
    _, cone = _system(SEED_ELLIPSE)
    a1, b1, a2, b2 = np.radians(SEED_ELLIPSE[2][:4])
    quadrants = np.arange(4) * np.pi / 2
    assert np.abs(cone.max_latitude(quadrants) - [a1, b1, a2, b2]).max() <= 1e-15
    for lo, (a, b) in zip(quadrants, [(a1, b1), (a2, b1), (a2, b2), (a1, b2)]):   # eq. 14
        psi = lo + np.linspace(0.01, np.pi / 2 - 0.01, 7)
        sigma = cone.max_latitude(psi)
        x, y = sigma * np.cos(psi), sigma * np.sin(psi)                       # eqs. 9-10
        assert np.abs(x**2 / a**2 + y**2 / b**2 - 1).max() <= 1e-12            # eq. 8
    # C1 across the quadrant boundaries (slope 0 there on both sides)
    psi = ca.SX.sym("psi")
    slope = ca.Function("d", [psi], [ca.jacobian(cone.max_latitude(psi), psi)])
    for q in quadrants:
        assert abs(float(slope(q - 1e-9))) <= 1e-8 and abs(float(slope(q + 1e-9))) <= 1e-8


# ---------------------------------------------------------------------- closest point, kappa
@pytest.mark.parametrize("name", CONES)
def test_closest_point_and_kappa_match_dense_sampling(name):
    """B, its generator and kappa against the best of 100 000 sampled generators at maximum
    latitude, for 300 random directions u_r on the sphere (inside and outside). The element's
    angle is never worse than the samples' and better by at most the sampling resolution
    (1 + max |d sigma_max / d psi|) * dpsi / 2."""
    _, cone = _system(CONES[name])
    fn = cone.cone_function()
    grid = np.linspace(0, 2 * np.pi, 100_000, endpoint=False)
    sig = cone.max_latitude(grid)
    samples = np.column_stack([np.cos(grid) * np.sin(sig), np.sin(grid) * np.sin(sig), np.cos(sig)])
    resolution = (1 + np.abs(np.gradient(sig, grid)).max()) * (grid[1] - grid[0]) / 2
    rng = np.random.default_rng(7)
    n_out = 0
    for i in range(300):
        if i % 2:                        # uniform on the sphere: mostly outside these cones
            u = rng.normal(size=3)
            u /= np.linalg.norm(u)
        else:                            # inside, uniform in latitude below sigma_max
            lon = rng.uniform(0, 2 * np.pi)
            u = _unit(lon, rng.uniform(0, 1) * cone.max_latitude(lon))
        out = fn(u)
        kappa, c_b = float(out[0]), np.asarray(out[4]).ravel()
        angle = np.arctan2(np.linalg.norm(np.cross(u, c_b)), u @ c_b)
        best = np.arccos(min(np.max(samples @ u), 1.0))
        assert best - resolution <= angle <= best + 1e-12
        lat, lon = np.arctan2(np.hypot(u[0], u[1]), u[2]), np.mod(np.arctan2(u[1], u[0]), 2 * np.pi)
        if lat > cone.max_latitude(lon):
            n_out += 1
            assert kappa == pytest.approx(best, abs=resolution)
        else:
            assert kappa == 0.0
    assert 100 < n_out < 200


def _moment_functions(cone_data=CASE_7, **kw):
    s, cone = _system(cone_data, **kw)
    cs = s.compile()
    states = cs.states_of(cone)
    fn = ca.Function("cone", [cs.q_sym],
                     [cone.penetration(states), cone.restricting_moment(states),
                      cone.potential_energy(states, 0.0)])
    q0, _ = cs.initial_state()
    return cone, fn, q0


@pytest.mark.slow
@pytest.mark.parametrize("name", CONES)
def test_moment_is_minus_the_gradient_of_kappa_and_of_the_stored_energy(name):
    """Outside the cone, turn the bar by +-1e-6 rad about each global axis: the restricting
    moment is parallel to -d kappa / d theta (it reduces the violation), |d kappa / d theta|
    = 1 (kappa is an angle), and the moment equals -dV/d theta (the elastic cone is
    conservative)."""
    cone, fn, q0 = _moment_functions(CONES[name])
    rng = np.random.default_rng(1)
    checked = 0
    while checked < 25:
        lon = rng.uniform(0, 2 * np.pi)
        lat = cone.max_latitude(lon) + rng.uniform(0.005, 0.35)
        if lat >= np.pi - 0.05:
            continue
        q = q0.copy()
        q[3:7] = _orientation_for(_unit(lon, lat))
        kappa, moment, _ = (np.asarray(x).ravel() for x in fn(q))
        assert kappa[0] > 0
        eps = 1e-6
        grad_k, grad_v = np.zeros(3), np.zeros(3)
        for i in range(3):
            e = np.zeros(3)
            e[i] = eps
            kp, _, vp = (float(np.asarray(x).ravel()[0]) for x in fn(_rotated(q, e)))
            km, _, vm = (float(np.asarray(x).ravel()[0]) for x in fn(_rotated(q, -e)))
            grad_k[i], grad_v[i] = (kp - km) / (2 * eps), (vp - vm) / (2 * eps)
        direction = moment / np.linalg.norm(moment)
        assert direction @ (-grad_k / np.linalg.norm(grad_k)) > 1 - 1e-8
        assert np.linalg.norm(grad_k) == pytest.approx(1.0, abs=1e-6)
        assert np.abs(moment + grad_v).max() <= 1e-6 * 226.0
        checked += 1


def test_regular_cone_closed_forms():
    """Regular cone of 30 deg: kappa = sigma - 30 deg, |m| = m_p (3 x^2 - 2 x^3),
    x = min(kappa / delta_sigma, 1) (m_p from delta_sigma on), direction u_r x u_zeta (turns
    u_r back toward the axis, also at kappa = 90 deg where the seed's u_r x n vanishes),
    V = m_p delta_sigma (x^3 - x^4 / 2); zero inside."""
    regular = ("spline", [0, 90, 180, 270, 360], [30] * 5)
    ds, mp = 11.5 * DEG, 226.0
    _, fn, q0 = _moment_functions(regular, delta_sigma=ds, max_moment=mp)
    rng = np.random.default_rng(3)
    for lat in np.radians([0, 10, 29.9, 30.5, 36, 41.5, 41.6, 60, 120]):
        lon = rng.uniform(0, 2 * np.pi)
        q = q0.copy()
        q[3:7] = _orientation_for(_unit(lon, lat))
        kappa, moment, V = (np.asarray(x).ravel() for x in fn(q))
        expected = max(lat - 30 * DEG, 0.0)
        assert kappa[0] == pytest.approx(expected, abs=1e-12)
        x = min(expected / ds, 1.0)
        assert np.linalg.norm(moment) == pytest.approx(mp * (3 * x**2 - 2 * x**3), abs=1e-9)
        stored = mp * ds * (x**3 - x**4 / 2) if expected <= ds else mp * (ds / 2 + expected - ds)
        assert V[0] == pytest.approx(stored, abs=1e-9)
        if expected > 0:
            u = rotation_matrix(q[3:7]) @ UR
            toward_axis = np.cross(u, UR)
            assert moment @ toward_axis / (np.linalg.norm(moment) * np.linalg.norm(toward_axis)) \
                == pytest.approx(1.0, abs=1e-12)
    assert np.linalg.norm(np.asarray(fn(q0)[1])) == 0.0          # on the axis: nothing


def test_latitude_longitude_by_hand():
    """u_r along zeta, xi, eta, -xi: (latitude, longitude) = (0, .), (90, 0), (90, 90), (90, 180) deg."""
    _, cone = _system()
    mats = [np.eye(3)] + [rotation_matrix(_orientation_for(u)) for u in
                          ([1, 0, 0], [0, 1, 0], [-1, 0, 0], _unit(300 * DEG, 120 * DEG))]
    lat, lon = cone.latitude_longitude(None, np.array(mats))
    assert np.allclose(np.degrees(lat), [0, 90, 90, 90, 120], atol=1e-12)
    assert np.allclose(np.degrees(lon[1:]), [0, 90, 180, 300], atol=1e-12)
    lat2, lon2 = cone.latitude_longitude(np.broadcast_to(np.eye(3), (5, 3, 3)), np.array(mats))
    assert np.array_equal(lat, lat2) and np.array_equal(lon, lon2)


# ---------------------------------------------------------------------- loads on the bodies
def test_action_equals_reaction_and_the_dissipative_moment():
    """Two free bodies: the cone's moments on them cancel (global), the dissipative part is
    -j (w_b - w_a), and the pair's power is -j |w_b - w_a|^2 (the restricting pair does no
    work on a common rotation)."""
    s = nd.System(gravity=(0, 0, 0))
    w_a, w_b = np.array([0.5, -1.0, 2.0]), np.array([-0.3, 0.4, 1.1])
    a = s.add_body("a", 1.0, (0.02, 0.03, 0.04), orientation=from_rotation_vector([0.3, -0.2, 0.5]),
                   angular_velocity=w_a)
    b = s.add_body("b", 1.0, (0.02, 0.03, 0.04), position=(0, 0, -0.3),
                   orientation=from_rotation_vector([-0.1, 0.7, 0.2]), angular_velocity=w_b)
    j = 2.0
    s.add_force(RangeOfMotionCone(a, b, (1, 0, 0), (0, 1, 0), (1, 0, 0), np.radians([0, 90, 180, 270, 360]),
                                  np.radians([20, 25, 30, 35, 20]), 0.1, 50.0, j, name="cone"))
    cs = s.compile()
    q, v = cs.initial_state()
    Q = np.asarray(cs.element_forces(0.0, q, v, cs.initial_history()))[:, 1]
    A = [rotation_matrix(q[7 * k + 3:7 * k + 7]) for k in range(2)]
    m = [A[k] @ Q[6 * k + 3:6 * k + 6] for k in range(2)]
    assert np.abs(Q[:3]).max() == 0 and np.abs(Q[6:9]).max() == 0
    assert np.linalg.norm(m[1]) > 10.0                  # far outside: the restricting part acts
    assert np.abs(m[0] + m[1]).max() <= 1e-12 * np.linalg.norm(m[1])
    # the same system without the restricting part isolates the dissipative moment
    Q0 = np.asarray(cs.element_forces(0.0, q, np.zeros_like(v), cs.initial_history()))[:, 1]
    w_rel = A[1] @ w_b - A[0] @ w_a
    assert np.allclose(A[1] @ (Q - Q0)[9:12], -j * w_rel, atol=1e-12)
    power = sum(Q[6 * k + 3:6 * k + 6] @ v[6 * k + 3:6 * k + 6] for k in range(2))
    power0 = sum(Q0[6 * k + 3:6 * k + 6] @ v[6 * k + 3:6 * k + 6] for k in range(2))
    assert power - power0 == pytest.approx(-j * w_rel @ w_rel, rel=1e-12)


# ---------------------------------------------------------------------- energy in a run
def _bounce(h, damping, t_end=0.5, scheme=None):
    """No gravity: the bar leaves the axis at 5 rad/s (body x = global -xi) toward longitude
    90 deg (sigma_max 70 deg), presses into the cone and comes back."""
    s, _ = _system(damping=damping, angular_velocity=(5.0, 0.0, 0.0))
    return nd.simulate(s, t_end=t_end, h=h, progress=False, scheme=scheme)


@pytest.mark.slow
@pytest.mark.parametrize("scheme,order", [("euler", 1), ("midpoint", 2)])
def test_elastic_cone_conserves_energy_to_the_schemes_order_in_h(scheme, order):
    """j = 0: kinetic + stored energy is conserved up to the stepper's O(h^order)
    oscillation: halving h divides the largest deviation by 2^order (scheme "euler": first
    order, "midpoint": second) and the cone did store energy."""
    dev = {}
    for h in (1e-3, 5e-4):
        res = _bounce(h, 0.0, scheme=scheme)
        e = res.energy
        assert res.success
        assert res.element_potential["cone"].max() > 0.3 * e[0]
        dev[h] = np.abs(e - e[0]).max()
        assert abs(e[-1] - e[0]) <= 0.1 * dev[h]          # after the bounce: back to E0
    assert dev[1e-3] <= 0.02 * e[0]
    assert 0.85 * 2**order <= dev[1e-3] / dev[5e-4] <= 1.15 * 2**order


@pytest.mark.slow
def test_damped_cone_dissipates_what_the_damper_takes():
    """j > 0: the energy never rises, and what is lost equals the damper's dissipation
    integral j |w|^2 dt along the run (to first order in h)."""
    j = 0.5
    err = {}
    for h in (1e-3, 5e-4):
        res = _bounce(h, j)
        e = res.energy
        assert np.max(np.diff(e)) <= 1e-12 * e[0]
        w = res.angular_velocity("bar")
        dissipated = np.r_[0, np.cumsum(0.5 * res.h * j * (np.sum(w[1:] ** 2, 1) + np.sum(w[:-1] ** 2, 1)))]
        assert e[0] - e[-1] > 0.1 * e[0]
        err[h] = np.abs((e[0] - e) - dissipated).max()
    assert err[5e-4] < 0.6 * err[1e-3]
    assert err[1e-3] <= 0.05 * (e[0] - e[-1])


# ---------------------------------------------------------------------- validation
def test_validation_names_the_cone_and_lists_every_problem():
    s = nd.System()
    bar = s.add_body("bar", 1.0, (1, 1, 1))
    s.add_force(RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0.6, 0.8, 0), (0, 1, 0.1),
                                  np.radians([0, 90, 200]), np.radians([30, 190, 35]), -1.0,
                                  -2.0, -3.0, interpolation="ellipse", name="bad_cone"))
    s.add_force(RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
                                  np.radians([0, 90, 180, 360]), np.radians([30, 40, 35]),
                                  0.1, 1.0, 0.0, interpolation="cubic", name="bad_too"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    for expected in [
        "range-of-motion cone 'bad_cone': moving_axis must be a unit vector",
        "range-of-motion cone 'bad_cone': longitudes must increase strictly from 0 to 2 pi",
        "range-of-motion cone 'bad_cone': max_latitudes must lie in (0, pi) rad",
        "range-of-motion cone 'bad_cone': the max latitude at 0 and at 2 pi must be the same",
        "range-of-motion cone 'bad_cone': interpolation 'ellipse' needs exactly the five quadrant",
        "range-of-motion cone 'bad_cone': delta_sigma must be finite and > 0, got -1.0",
        "range-of-motion cone 'bad_cone': max_moment must be finite and >= 0, got -2.0",
        "range-of-motion cone 'bad_cone': damping must be finite and >= 0, got -3.0",
        "range-of-motion cone 'bad_too': interpolation must be one of ('spline', 'ellipse')",
        "range-of-motion cone 'bad_too': longitudes and max_latitudes must have the same length",
    ]:
        assert expected in text
    s2 = nd.System()
    bar2 = s2.add_body("bar", 1.0, (1, 1, 1))
    s2.add_force(RangeOfMotionCone(s2.ground, bar2, (1, 0, 0), (0.6, 0.8, 0), (0, 1, 0),
                                   np.radians([0, 180, 360]), np.radians([30, 40, 30]), 0.1, 1.0,
                                   0.0, name="skew"))
    with pytest.raises(nd.ModelError, match="'skew': xi_axis and eta_axis must be perpendicular"):
        s2.compile()
