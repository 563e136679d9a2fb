"""Clearance joints as gaps: geometry against independent numpy computations, Jacobians
against finite differences, contact resultants against statics, inelastic impacts."""
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.projection import apply_increment
from nlpdyn.rotations import rotation_matrix
from problems import clearance_slider

rng = np.random.default_rng(11)
R, C, L, CA = 0.01, 1e-4, 0.02, 2e-4


def pin_and_bore(kind):
    s = nd.System(gravity=(0, -9.81, 0))
    pin = s.add_body("pin", 1.0, (1, 1, 1), position=(0.01, 0.02, -0.01))
    bore = s.add_body("bore", 1.0, (1, 1, 1), position=(0.3, 0.0, 0.05))
    point, axis = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    joints = {
        "cylindrical": lambda: nd.CylindricalClearance(pin, bore, point, axis, R, C, L, name="j"),
        "revolute": lambda: nd.RevoluteClearance(pin, bore, point, axis, R, C, L, CA, name="j"),
        "spherical": lambda: nd.SphericalClearance(pin, bore, point, C, name="j"),
        "prismatic": lambda: nd.PrismaticClearance(
            pin, bore, point, axis, 0.02 * np.array([[1, 0], [-0.5, 0.8], [-0.5, -0.8]]), C, L,
            name="j"),
    }
    s.add_joint(joints[kind]())
    return s


def moved(cs, scale=(2e-5, 2e-3)):
    q0, _ = cs.initial_state()
    dx = np.r_[scale[0] * rng.normal(size=3), scale[1] * rng.normal(size=3),
               scale[0] * rng.normal(size=3), scale[1] * rng.normal(size=3)]
    return apply_increment(q0, dx, cs.n_bodies)


def frames(q):
    return [(q[7 * k:7 * k + 3], rotation_matrix(q[7 * k + 3:7 * k + 7])) for k in range(2)]


def body_point(q, k, point0, body0):
    """Where the body point that started at point0 is now (numpy, independent of the lib)."""
    (r, A) = frames(q)[k]
    r0, A0 = body0
    return r + A @ (A0.T @ (np.asarray(point0) - r0))


def initial_frames(cs):
    q0, _ = cs.initial_state()
    return frames(q0)


@pytest.mark.parametrize("kind", ["cylindrical", "revolute"])
def test_radial_and_axial_gaps_match_geometry(kind):
    cs = pin_and_bore(kind).compile()
    f0 = initial_frames(cs)
    for _ in range(5):
        q = moved(cs)
        gaps = np.asarray(cs.gap(q)).ravel()
        (r_pin, A_pin) = frames(q)[0]
        axis = A_pin @ (f0[0][1].T @ [0, 0, 1.0])
        origin = body_point(q, 0, (0, 0, 0), f0[0])
        expected = []
        for s in (-1, 1):
            end = body_point(q, 1, (0, 0, s * L / 2), f0[1])
            rel = end - origin
            expected.append(C - np.linalg.norm(rel - (rel @ axis) * axis))
        if kind == "revolute":
            ends = [body_point(q, 1, (0, 0, s * L / 2), f0[1]) for s in (-1, 1)]
            shoulders = [body_point(q, 0, (0, 0, s * (L / 2 + CA)), f0[0]) for s in (-1, 1)]
            expected += [(ends[0] - shoulders[0]) @ axis, (shoulders[1] - ends[1]) @ axis]
        # smoothing of |d| changes a gap by <= (1e-6 c)^2 / (2 |d|)
        assert np.allclose(gaps, expected, rtol=0, atol=1e-14)


def test_prismatic_gaps_match_point_plane_distances():
    cs = pin_and_bore("prismatic").compile()
    f0 = initial_frames(cs)
    tri = 0.02 * np.array([[1, 0], [-0.5, 0.8], [-0.5, -0.8]])
    q = moved(cs)
    gaps = np.asarray(cs.gap(q)).ravel()
    # independent construction: cavity planes offset outward by C from the triangle's edges
    edges = np.roll(tri, -1, axis=0) - tri
    normals = np.c_[edges[:, 1], -edges[:, 0]] / np.linalg.norm(edges, axis=1)[:, None]
    x = nd.rotations.perpendicular_pair(np.array([0, 0, 1.0]))[0]
    y = np.cross([0, 0, 1.0], x)
    to3 = lambda v2: v2[0] * x + v2[1] * y          # noqa: E731
    expected = []
    for face in (-1, 1):
        for k in range(3):
            vertex = body_point(q, 1, to3(tri[k]) + face * L / 2 * np.array([0, 0, 1.0]), f0[1])
            for e in ((k - 1) % 3, k):
                plane_point = body_point(q, 0, to3(tri[e] + C * normals[e]), f0[0])
                normal = frames(q)[0][1] @ (f0[0][1].T @ to3(normals[e]))
                expected.append((plane_point - vertex) @ normal)
    assert len(gaps) == 12
    assert np.allclose(gaps, expected, atol=1e-15)
    q0, _ = cs.initial_state()
    assert np.allclose(np.asarray(cs.gap(q0)).ravel(), C, atol=1e-15)   # centred: all = c


@pytest.mark.parametrize("kind", ["cylindrical", "revolute", "spherical", "prismatic"])
def test_gap_jacobian_against_finite_differences(kind):
    cs = pin_and_bore(kind).compile()
    q = moved(cs)
    v = rng.normal(size=cs.nv)
    eps = 1e-7
    fd = (np.asarray(cs.gap(apply_increment(q, eps * v, 2))).ravel()
          - np.asarray(cs.gap(apply_increment(q, -eps * v, 2))).ravel()) / (2 * eps)
    Pi_g = np.asarray(cs.gap_jacobian(q))
    assert np.allclose(Pi_g @ v, fd, rtol=0, atol=1e-6 * (1 + np.abs(fd).max()))


def test_clearance_must_be_positive():
    s = nd.System()
    a = s.add_body("a", 1, (1, 1, 1))
    s.add_joint(nd.RevoluteClearance(s.ground, a, (0, 0, 0), (0, 0, 1), 0.01, 0.0, 0.02, -1e-4,
                                     name="pin"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    assert "'pin': clearance must be > 0" in str(err.value)
    assert "'pin': axial_clearance must be > 0" in str(err.value)


# ---------------------------------------------------------------- stepping with contact
def test_inelastic_impact_never_gains_energy():
    """A tube dropped onto the rod (gravity only): mechanical energy never rises across a
    step, in particular not across the steps that close a gap."""
    res = nd.simulate(clearance_slider.build(force=(0, 0, 0)), t_end=0.1, h=1e-3,
                      progress=False)
    dE = np.diff(res.energy)
    closing = res.stats.contact_changed
    assert closing.any()
    assert np.all(dE[closing] <= 1e-12)
    assert np.all(dE <= 1e-12)
    assert res.energy[-1] < res.energy[0]      # the impact dissipated energy


def _deviation(res, ideal, t_max):
    """Largest distance between the clearance and ideal pendulums' centres for t <= t_max."""
    keep = ideal.t <= t_max + 1e-12
    x = np.interp(ideal.t[keep], res.t, res.position("bar")[:, 0])
    y = np.interp(ideal.t[keep], res.t, res.position("bar")[:, 1])
    return np.hypot(x - ideal.position("bar")[keep, 0], y - ideal.position("bar")[keep, 1]).max()


@pytest.mark.slow
@pytest.mark.parametrize("h", [1e-3, 2.5e-4])
def test_clearance_to_zero_moves_like_the_ideal_joint(h):
    """Planar clearance pendulum (CASES.md #3 data, cm_z = 0) against the ideal revolute:
    with c = 1e-6 m the centre of mass stays within 1e-4 m of the ideal joint's over 1 s (its
    rows tend to the ideal joint's as c -> 0), and the deviation is proportional to c."""
    from problems import clearance_pendulum
    ideal = nd.simulate(clearance_pendulum.build(cm_z=0.0, ideal=True), t_end=1.0, h=h,
                        progress=False)
    runs = {c: nd.simulate(clearance_pendulum.build(cm_z=0.0, clearance=c, axial_clearance=c),
                           t_end=1.0 if c == 1e-6 else 0.1, h=h, progress=False)
            for c in (1e-6, 1e-4, 1e-5)}
    assert all(r.success for r in runs.values())
    assert _deviation(runs[1e-6], ideal, 1.0) <= 1e-4
    early = [_deviation(runs[c], ideal, 0.1) for c in (1e-4, 1e-5)]
    assert 5 < early[0] / early[1] < 20                    # linear in c


@pytest.mark.slow
def test_planar_reference_loses_exactly_the_plastic_impact():
    """The event-driven scipy model (no nlpdyn) of the bar falling onto the pin: one impact,
    losing m g c J / (J + m r^2), then contact to the first turning point without losing
    anything more (its energy is conserved to the integration tolerance)."""
    from problems import clearance_pendulum
    for c in (1e-3, 1e-4):
        ref = clearance_pendulum.planar_reference(clearance=c)
        closed = clearance_pendulum.impact_energy_closed_form(clearance=c)
        assert len(ref.impacts) == 1
        assert ref.impacts[0][1] == pytest.approx(closed, rel=1e-9)
        assert -ref.turning_point[1] == pytest.approx(closed, rel=1e-8)


@pytest.fixture(scope="module")
def drop_runs():
    from problems import clearance_pendulum
    return {h: nd.simulate(clearance_pendulum.build(cm_z=0.0, clearance=1e-3, axial_clearance=1e-3),
                           t_end=1.1, h=h, progress=False) for h in (2e-3, 1e-3)}


@pytest.mark.slow
@pytest.mark.parametrize("h", [2e-3, 1e-3])
def test_drop_onto_the_pin_loses_the_plastic_impact(drop_runs, h):
    """A bar (1 kg, CoM 0.5 m from the pin) released horizontal with the bore centred in a
    1 mm clearance falls onto the pin. Physics (``planar_reference``, scipy): one plastic
    impact loses m g c J / (J + m r^2) = 2.4547e-3 J, then frictionless sliding does no work.
    The ledger's impact column over the impact (its first 0.1 s) is that loss (the lever arm
    turns by O(h^2) during the two impact steps: 2e-8 relative at h = 2e-3); the loss by the
    first turning point is within 10 % of it: the sliding is energy-neutral; the rest is the
    bar's spin about its own axis, seeded by round-off, which grows at ~100/s at every h and
    makes the bore's ends rattle from t ~ 0.45 s (its impacts take up to 6 % more, which the
    planar reference cannot have). Every gap stays >= -1e-9 m."""
    from problems import clearance_pendulum
    res = drop_runs[h]
    assert res.success and res.gaps.min() >= -1e-9
    closed = clearance_pendulum.impact_energy_closed_form(clearance=1e-3)
    ledger = res.energy_ledger()
    first = ledger["impact:pin"][res.t <= 0.1].iloc[-1]
    assert -first == pytest.approx(closed, rel=1e-6)
    loss, _ = clearance_pendulum.turning_point_energy(res)
    reference = -clearance_pendulum.planar_reference(clearance=1e-3).turning_point[1]
    assert -loss[0] == pytest.approx(reference, rel=0.1)


@pytest.mark.slow
def test_drop_sliding_loses_less_than_with_end_normals(drop_runs):
    """What the drop loses beyond the plastic impact by the first turning point (the sliding
    and the rattle) is less than half of what the end-normal contact step ("cone_end")
    loses, whose sustained sliding takes lam c dphi^2 per step (first order in h)."""
    from problems import clearance_pendulum
    reference = -clearance_pendulum.planar_reference(clearance=1e-3).turning_point[1]
    for h in (2e-3, 1e-3):
        end = nd.simulate(clearance_pendulum.build(cm_z=0.0, clearance=1e-3, axial_clearance=1e-3),
                          t_end=1.1, h=h, progress=False, contact="cone_end")
        excess = [-clearance_pendulum.turning_point_energy(res)[0][0] - reference
                  for res in (drop_runs[h], end)]
        assert 0 < excess[0] < excess[1] / 2


@pytest.mark.slow
@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_sustained_frictionless_contact_does_no_work(h):
    """The bar spinning about the pin at 10 rad/s without gravity, its bore pressed outward:
    exact solution a uniform rotation with constant energy and contact force
    m omega^2 (r + c). The energy changes no more than the same bar's on an ideal revolute
    (the integrator's own error) plus lam c omega^2 h t (the circle's normal taken at the end
    of the step; zero as c -> 0), and the force is exact to O(c / r) after the first step.
    The end-of-step-normal scheme ("end_normal") takes out thousands of times more."""
    from problems import clearance_pendulum
    omega, c, t_end = 10.0, 1e-4, 2.0
    lam_exact = clearance_pendulum.spinning_contact_force(omega, c)
    s = nd.System(gravity=(0, 0, 0))
    b0 = clearance_pendulum.build_spinning(omega, c).bodies[0]
    bar = s.add_body("bar", b0.mass, b0.inertia, position=(0.5, 0, 0), velocity=(0, 0.5 * omega, 0),
                     angular_velocity=(0, 0, omega))
    s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 0, 1), name="pin"))
    ideal = nd.simulate(s, t_end=t_end, h=h, progress=False)
    res = nd.simulate(clearance_pendulum.build_spinning(omega, c), t_end=t_end, h=h, progress=False)
    assert res.success and res.gaps.min() >= -1e-9
    lam = res.contact_force("pin")[2:, :2].sum(axis=1)
    assert np.abs(lam / lam_exact - 1).max() <= c / 0.5
    ledger = res.energy_ledger()
    change = ledger.total.iloc[-1] - ledger.total.iloc[0]
    assert abs(change) <= abs(ideal.energy[-1] - ideal.energy[0]) + lam_exact * c * omega**2 * h * t_end
    assert ledger["impact:pin"].iloc[-1] == 0.0
    old = nd.simulate(clearance_pendulum.build_spinning(omega, c), t_end=t_end, h=h,
                      progress=False, contact="end_normal").energy_ledger()
    assert old["contact:pin"].iloc[-1] < 1000 * min(ledger["contact:pin"].iloc[-1], -abs(change))


@pytest.fixture(scope="module")
def rocking_runs():
    """The wheel rocking in its bore (``build_rocking_wheel``), 0.15 s: (friction, spin, h,
    contact) -> (angle, the scipy reference's, Result); the end normals' ("cone_end") run
    with scheme "euler"."""
    from problems import clearance_pendulum as cp
    out = {}
    for friction, spin, h, contact in [(0.0, 0.0, 1e-3, "cone"), (0.0, 0.0, 5e-4, "cone"),
                                       (0.0, 0.0, 1e-3, "cone_end"), (0.2, -10.0, 1e-3, "cone"),
                                       (0.2, -10.0, 5e-4, "cone")]:
        res = nd.simulate(cp.build_rocking_wheel(friction=friction, spin=spin), 0.15, h=h,
                          progress=False, contact=contact,
                          scheme="euler" if contact == "cone_end" else None)
        out[friction, h, contact] = (cp.rocking_angle(res),
                                     cp.rocking_reference(res.t, friction=friction, spin=spin), res)
    return out


def _late(res, angle):
    """The angle over the last 50 ms (t >= 0.10 s)."""
    return angle[res.t >= 0.1 - 1e-12]


@pytest.mark.slow
@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_rocking_in_the_bore_keeps_its_amplitude(rocking_runs, h):
    """A 10 kg wheel in a 0.5 mm frictionless revolute clearance, its bore started 11.3 deg up
    the clearance circle, rocks in sustained contact like a pendulum of length c (period
    45 ms: 45 steps at h = 1e-3). Reference: the point on the circle by scipy (the contact
    force passes through the wheel's centre, so it does not turn). Over t = 0.10-0.15 s the
    amplitude is the reference's within 1 % (the issue's end normals kept 30 % of it at
    1e-3); the angle is within 10 % of the amplitude throughout and its error (the phase)
    shrinks with h (scheme "euler": first order; the default midpoint's second order is
    tests/test_midpoint_contact.py's). No step needs the end normals ("cone_end")."""
    angle, reference, res = rocking_runs[0.0, h, "cone"]
    assert res.success and res.gaps.min() >= -1e-9
    assert set(res.stats.contact_scheme) == {"cone"}
    amplitude = np.abs(_late(res, angle)).max()
    assert amplitude == pytest.approx(np.abs(_late(res, reference)).max(), rel=0.01)
    error = np.abs(angle - reference).max()
    assert error <= 0.1 * np.radians(11.3)
    if h < 1e-3:
        coarse = rocking_runs[0.0, 1e-3, "cone"]
        assert error <= 0.6 * np.abs(coarse[0] - coarse[1]).max()


@pytest.mark.slow
def test_rocking_with_end_normals_is_damped(rocking_runs):
    """Scheme "euler" with the end-of-step normals ("cone_end"): each step in sustained
    contact takes lam c dphi^2, and the same wheel keeps less than half of its amplitude
    after 0.1 s. (The midpoint step's held normals keep it: tests/test_midpoint_contact.py.)"""
    angle, reference, res = rocking_runs[0.0, 1e-3, "cone_end"]
    assert np.abs(_late(res, angle)).max() < 0.5 * np.abs(_late(res, reference)).max()


@pytest.mark.slow
@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_rocking_about_the_friction_angle(rocking_runs, h):
    """The same wheel with friction 0.2, spinning at -10 rad/s: its bore slips on the pin
    throughout, and rocks about the friction angle -atan(0.2) (Coulomb's force, mu times the
    normal force c theta'^2 + g cos(theta), along the bore). Reference: scipy on that
    equation. The half peak-to-peak swing over 0.10-0.15 s (24 deg) and its centre are the
    reference's within 1 % and 0.2 deg; the friction does negative work."""
    angle, reference, res = rocking_runs[0.2, h, "cone"]
    assert res.success and res.gaps.min() >= -1e-9
    late, ref = _late(res, angle), _late(res, reference)
    assert np.ptp(late) == pytest.approx(np.ptp(ref), rel=0.01)
    centre = lambda x: 0.5 * (x.max() + x.min())     # noqa: E731
    assert abs(centre(late) - centre(ref)) <= np.radians(0.2)
    friction = res.energy_ledger()["friction:bearing"]
    assert friction.iloc[-1] < 0 and np.all(np.diff(friction) <= 1e-12)


def test_warns_when_linearised_gaps_outrun_the_clearance():
    from problems import clearance_pendulum
    with pytest.warns(UserWarning, match="may penetrate"):
        nd.Stepper(clearance_pendulum.build(clearance=1e-6), h=1e-3, gap_iterations=0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nd.Stepper(clearance_pendulum.build(clearance=1e-6), h=1e-3)        # iterations on
        nd.Stepper(clearance_pendulum.build(clearance=1e-3), h=1e-3, gap_iterations=0)


def _cone_step_by_ipopt(body, q0, v0, h, radius_c=1e-4, axial_c=1e-4, length=0.02):
    """The "cone" step of CASES.md #3 from its definition (FORMULATION.md, "Radial clearance
    as a cone"), with geometry written here: the bore's end centres e_k = r + A(p) s_k (pin
    along Z through the origin); the radial rows |d_k(q_lin) + D_k(q0) (q1(v) - q_lin)| <= c
    with d_k = (e_k,x, e_k,y), the axial rows the same chord linearisation of the flat gaps
    e_1,z + L/2 + c_a and L/2 + c_a - e_2,z; IPOPT minimises |v - v_free|_M^2 / 2 for each
    q_lin, and q_lin is iterated to q1. Returns (v, normal forces [radial 1, 2, axial 1, 2])."""
    import casadi as ca
    from nlpdyn.rotations import G_matrix

    def rotation(p):
        e0, e = p[0], p[1:]
        p = p / ca.norm_2(p)
        e0, e = p[0], p[1:]
        return (2 * e0**2 - 1) * ca.DM.eye(3) + 2 * (e @ e.T + e0 * ca.skew(e))

    q, v = ca.SX.sym("q", 7), ca.SX.sym("v", 6)
    ends = [q[:3] + rotation(q[3:]) @ (ca.DM([0, 0, z]) - ca.DM(body.position))
            for z in (-length / 2, length / 2)]
    coords = ca.vertcat(ends[0][:2], ends[1][:2], ends[0][2] + length / 2 + axial_c,
                        length / 2 + axial_c - ends[1][2])
    p0 = q0[3:7]
    n2 = p0 @ p0
    q1 = ca.vertcat(q0[:3] + h * v[:3],
                    p0 + h * ca.DM(G_matrix(p0)).T @ v[3:] / (2 * n2) - p0 * (n2 - 1) / (2 * n2))
    d_fn = ca.Function("d", [q], [coords])
    D0 = ca.Function("D", [q], [ca.jacobian(coords, q)])(q0)
    M = np.diag(np.r_[3 * [body.mass], np.diag(body.inertia)])
    w0 = v0[3:]
    v_free = v0 + h * np.linalg.solve(M, np.r_[0, -9.81 * body.mass, 0, -np.cross(w0, body.inertia @ w0)])
    q_lin = ca.SX.sym("q_lin", 7)
    d_lin = d_fn(q_lin) + D0 @ (q1 - q_lin)
    g = ca.vertcat(radius_c - ca.norm_2(d_lin[0:2]), radius_c - ca.norm_2(d_lin[2:4]), d_lin[4], d_lin[5])
    solver = ca.nlpsol("cone", "ipopt", {"x": v, "p": q_lin, "f": 0.5 * ca.bilin(ca.DM(M), v - v_free),
                                         "g": g},
                       {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes", "tol": 1e-14,
                                                        "bound_relax_factor": 0}})
    step = ca.Function("q1", [v], [q1])
    lin, x = q0.copy(), v_free
    for _ in range(50):
        sol = solver(x0=x, p=lin, lbg=0, ubg=np.inf)
        assert solver.stats()["success"]
        x = np.asarray(sol["x"]).ravel()
        new = np.asarray(step(x)).ravel()
        if np.abs(new - lin).max() < 1e-15:
            break
        lin = new
    return x, -np.asarray(sol["lam_g"]).ravel()      # rows in metres: multipliers in N


def test_contact_iterations_reach_the_cone_step_of_a_jammed_bore():
    """CASES.md #3 (out-of-plane centre of mass), scheme "euler" (the reference below is its
    step: q1 = q0 + h v, forces at the start): at t = 0.27275 s the bore is jammed against
    the pin at both ends with several hundred newtons. Without the circle's curvature term the
    chord iterations do not converge there; with it the stepper reaches, in a few iterations,
    the cone step that IPOPT finds from its definition with geometry written in the test."""
    from problems import clearance_pendulum
    h = 2.5e-4
    stepper = nd.Stepper(clearance_pendulum.build(), h=h, scheme="euler")
    while stepper.t < 0.2727:
        stepper.step()
    q0, v0, t0 = stepper.q.copy(), stepper.v.copy(), stepper.t
    q_lin, y_prev, drift = q0, None, []
    for _ in range(8):
        sol, out = stepper.program.solve_qp(q0, v0, t0, h, q_lin, stepper.z)
        if y_prev is not None:
            drift.append(h * np.abs(stepper.program.Linv_T @ (sol.y - y_prev)).max())
        q_lin, y_prev = out[0], sol.y
    assert min(drift) > 1e-6                                # no curvature: no convergence
    info = stepper.step()
    # the jam, every gap closed before, takes the cone's end-normal pass
    assert info.contact_scheme == "cone_end" and not info.contact_fallback
    assert info.gap_iterations <= 6 and info.min_gap >= -stepper.settings.gap_tol
    v_ref, lam_ref = _cone_step_by_ipopt(stepper.cs.bodies[0], q0, v0, h)
    assert lam_ref[:2].min() > 200                          # both bore ends carry the jam
    assert np.allclose(stepper.v, v_ref, rtol=0, atol=stepper.settings.gap_tol / h)
    assert np.allclose(info.lam, lam_ref, rtol=1e-4, atol=1e-6)


# CASES.md #3's loss by the first turning point, converged: Richardson extrapolation of the
# end-of-step-normal scheme over h = 1e-3 ... 6.25e-5 (issue 10), a discretisation independent
# of the default scheme, which approaches it from below (benchmarks/energy_vs_step_bounds.py).
CASE3_FIRST_TURNING_POINT_LOSS = 4.25e-3


@pytest.mark.slow
@pytest.mark.parametrize("h", [1e-3, (1e-3, 2e-3)])
def test_out_of_plane_clearance_pendulum(h):
    """CASES.md #3 as given (cm_z = 0.05 m, 2 s): the bore tilts and jams against the pin and
    the bar moves along Z within the axial play. Every step converges first time without a
    fallback, every gap stays >= -1e-9 m, the loss by the first turning point is within a
    factor 2 of the converged one, and the energy never rises above its start by more than
    the same pendulum's on an ideal revolute (the integrator's own oscillation)."""
    from problems import clearance_pendulum
    res = nd.simulate(clearance_pendulum.build(), t_end=2.0, h=h, progress=False)
    assert res.success and res.stats.retries.sum() == 0 and not res.stats.contact_fallback.any()
    assert res.gap("pin").min() >= -1e-9
    lam = res.contact_force("pin")
    assert ((lam[:, 0] > 0) & (lam[:, 1] > 0)).mean() > 0.9   # both bore ends in contact
    bore_z = res.contact_point("pin")[:, 2:4, 2].mean(axis=1)  # centre of the bore's end faces
    tilt = 2e-4 / 0.02                                          # largest tilt: 2 c / length
    assert np.ptp(bore_z) > 1e-5
    # axial play (+ the tilt's cosine), to the gap tolerance the stepper enforces
    assert np.abs(bore_z).max() <= 1e-4 + 0.01 * tilt**2 / 2 + 1e-9
    loss, _ = clearance_pendulum.turning_point_energy(res)
    assert 0.5 < -loss[0] / CASE3_FIRST_TURNING_POINT_LOSS < 2
    ideal = nd.simulate(clearance_pendulum.build(ideal=True), t_end=2.0, h=h, progress=False)
    assert (res.energy - res.energy[0]).max() <= (ideal.energy - ideal.energy[0]).max()


@pytest.mark.slow
def test_seed_linearised_gaps_stop_at_the_jam_unless_projected():
    """The seed's rows alone (gaps linearised at the start of the step, one solve) penetrate,
    and on CASES.md #3 the jammed bore pushes the penetration beyond 1 % of the clearance at
    every h the retries try: the run stops there, keeping its trajectory and saying why. With
    the post-step projection every gap stays >= -1e-9 m and the run reaches t_end."""
    import warnings
    from problems import clearance_pendulum
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # linearised gaps alone: the stepper warns
        for projection in (False, True):
            runs[projection] = nd.simulate(clearance_pendulum.build(), t_end=2.0, h=1e-3,
                                           contact="linearised", projection=projection,
                                           progress=False)
    stopped = runs[False]
    assert not stopped.success and 0.2 < stopped.t[-1] < 0.3
    assert "penetration" in stopped.message and f"{stopped.t[-1]:.4g}" in stopped.message
    assert stopped.gap("pin").min() < -1e-7
    assert runs[True].success and runs[True].gap("pin").min() >= -1e-9
    assert set(runs[True].stats.contact_scheme) == {"linearised"}


@pytest.mark.parametrize("control, method", [("nlp", "bisection"), ("nlp", "ipopt"),
                                             ("adaptive", None)])
def test_step_shrinks_to_end_at_contact_onset(control, method):
    """A body centred in a spherical socket of 1 mm clearance falls from rest, scheme
    "euler". Semi-implicit Euler falls g h^2 n (n + 1) / 2 in n steps of h; after 13 steps
    of h_max = 1e-3 the remaining gap d closes in the step h' with d = h' g (13 h_max + h')
    (closed form). Both variable-step schemes shrink that step to h' (to the prediction's
    bisection resolution, (h_max - h_min) / 64) and end it at the onset: gap ~ 0, open
    before. (The midpoint step, falling g t^2 / 2: tests/test_midpoint_contact.py.)"""
    s = nd.System(gravity=(0, 0, -9.81))
    cup = s.add_body("cup", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, 0.1))
    s.add_joint(nd.SphericalClearance(s.ground, cup, point=(0, 0, 0.1), clearance=1e-3,
                                      name="socket"))
    h_min, h_max, g = 1e-4, 1e-3, 9.81
    res = nd.simulate(s, t_end=0.02, h=(h_min, h_max), step_control=control, scheme="euler",
                      progress=False, **({"nlp_method": method} if method else {}))
    assert res.success
    d = 1e-3 - g * h_max**2 * 13 * 14 / 2
    b = g * 13 * h_max
    h_onset = (-b + np.sqrt(b**2 + 4 * g * d)) / (2 * g)
    # IPOPT's interior point may stop up to ~2e-4 (relative) short of h_max (the "nlp"
    # scheme polishes only within polish_tol = 1e-4): the fall changes by < 1e-8 m
    assert res.h[:13] == pytest.approx(h_max, rel=2e-4 if method == "ipopt" else 1e-9)
    assert res.h[13] == pytest.approx(h_onset, abs=(h_max - h_min) / 64)
    gap = res.gap("socket")[:, 0]
    assert gap[13] >= d - 1e-8 and -1e-10 <= gap[14] <= 1e-6     # closed to the gap tolerance


@pytest.mark.slow
def test_slender_rod_in_a_spherical_clearance_keeps_its_spin():
    """A slender rod (axial inertia 1e-4) precessing on a ball joint with 0.1 mm clearance.
    The contact acts on the rod's axis, so the spin about that axis is constant in the exact
    dynamics (symmetric body): the contact step keeps it to round-off (the end-of-step normal
    drifted it by 0.93 rad/s in 0.5 s at h = 1e-3), and the energy never rises above its start
    by more than the same rod's on an ideal spherical joint."""
    from problems import spherical_pendulum
    b0 = spherical_pendulum.build().bodies[0]
    for h in (1e-3, 5e-4):
        runs = {}
        for kind in ("clearance", "ideal"):
            s = nd.System(gravity=(0, 0, -9.81))
            rod = s.add_body("rod", b0.mass, b0.inertia, b0.position, b0.orientation, b0.velocity,
                             b0.angular_velocity)
            s.add_joint(nd.SphericalClearance(s.ground, rod, point=(0, 0, 0), clearance=1e-4, name="ball")
                        if kind == "clearance" else nd.Spherical(s.ground, rod, point=(0, 0, 0), name="ball"))
            runs[kind] = nd.simulate(s, t_end=0.5, h=h, progress=False)
        res = runs["clearance"]
        assert res.success and res.gap("ball").min() >= -1e-9
        spin = res.angular_velocity("rod")[:, 0]
        assert np.abs(spin - spin[0]).max() <= 1e-10
        assert (res.energy - res.energy[0]).max() <= (runs["ideal"].energy - runs["ideal"].energy[0]).max()


def test_seed_scheme_by_bisection_takes_ipopts_steps():
    """CASES.md #3 with the seed's variable-h scheme, h in [1e-3, 2e-3]: the bisection on the
    objective's slope and IPOPT on the NLP choose the same h at every step (the contact onset
    within the bisection's resolution (h_max - h_min)/64), so the runs lose the same energy."""
    from problems import clearance_pendulum
    runs = {m: nd.simulate(clearance_pendulum.build(), t_end=0.4, h=(1e-3, 2e-3),
                           step_control="nlp", nlp_method=m, progress=False)
            for m in ("bisection", "ipopt")}
    a, b = runs["bisection"], runs["ipopt"]
    assert a.success and b.success and len(a.h) == len(b.h)
    assert np.abs(a.h - b.h).max() <= 1e-3 / 64
    assert (a.h < 2e-3 * (1 - 1e-9)).sum() >= 1                 # the onset was cut
    assert a.energy[-1] == pytest.approx(b.energy[-1], abs=1e-5)
    assert a.stats.iterations.mean() < 1.5                      # fixed-h solves per step
