"""The clearance sliders of CASES.md #1 and #2 against statics and closed forms.

Once contact is steady neither slider rotates or moves across its guide, so each step is a
static equilibrium of the cross-section while the body slides along Z. The contact forces follow
from hand-derived statics (the tube) or from an independent numpy equilibrium (the triangular
slider: five vertex contacts against five non-sliding freedoms, statically determinate). The
sliding follows from a = F/m: the gaps' normals are perpendicular to Z and there is no friction.

Tolerance tiers (STYLE.md): identities (the frictionless Z motion) 1e-12 relative; solver-limited
1e-8 relative (the stepper's ``nlp_tol``; measured <= 5e-13) for the forces, and the
gap iterations' ``gap_tol`` for positions; discretisation-limited C h for z(t).
"""
from functools import lru_cache

import numpy as np
import pytest

import nlpdyn as nd
from problems import clearance_slider, prismatic_slider

G = 9.81
T_END = 0.5
STEPS = [1e-3, (1e-3, 1e-2)]
SOLVER_RTOL = nd.StepperSettings().nlp_tol          # solver-limited tier, 1e-8
GAP_TOL = nd.StepperSettings().gap_tol              # positions, 1e-10 m
IDENTITY = 1e-12
VEL_TOL = 1e-9                                       # "motion stops" (measured <= 4e-15 m/s, rad/s)
# The set of loaded gaps stops changing at 6 / 15 ms (tube, h = 1e-3 / adaptive) and 28 / 34 ms
# (triangular slider); the forces are constant three steps later (plastic impact, one gap
# iteration's correction). "Settled" below means t >= SETTLED with that set no longer changing.
SETTLED = 0.1


@lru_cache(maxsize=None)
def run(case, h):
    build = {"tube": clearance_slider.build, "prism": prismatic_slider.build}[case]
    res = nd.simulate(build(), t_end=T_END, h=h, progress=False)
    assert res.success, res.message
    return res


def active_gaps(res, name, threshold=1e-6):
    """Boolean (n_points, n_gaps): gaps carrying more than ``threshold`` N."""
    return res.contact_force(name) > threshold


def steady(res, name):
    """Mask of t from the end of the last step that changed the set of loaded gaps on."""
    act = active_gaps(res, name)
    changed = np.nonzero((act[1:] != act[:-1]).any(axis=1))[0]
    first = changed[-1] + 1 if changed.size else 0
    return np.arange(len(res.t)) >= first


def settled_rows(res, name):
    """Mask of t >= SETTLED, checking that the loaded gaps stopped changing well before."""
    mask = steady(res, name)
    assert res.t[mask][0] < 0.5 * SETTLED
    return mask & (res.t >= SETTLED)


# ------------------------------------------------------------------ CASES.md #1: the tube
R, C_TUBE, L_TUBE, F_TUBE, SF_TUBE = 0.01, 1e-4, 0.1, 30.0, np.array([0.0, 0.02, 0.05])


def tube_statics():
    """Closed form of the tilted tube (both ends on the rod, diametrically opposite).

    Each gap is c minus the distance of a bore end centre (body points 0, 0, +-L/2) from the
    rod axis. The push's moment F s_y = 0.6 N m beats the weight's m g L/2 = 0.49 N m, so the
    tube turns about +X: end +L/2 drops to y = -c (rod touching its upper side, the rod pushes
    the tube up with lam_plus), end -L/2 rises to y = +c (rod's lower side, pushes it down with
    lam_minus). With the centre on the axis, the tilt is sin(theta) = 2c/L. The push point
    s'_f turns with the tube: lever arm y' = 0.02 cos(theta) - 0.05 sin(theta) for F_z. The
    radial forces act at the end centres, z = +-(L/2) cos(theta) from the centre, so
        Y:   lam_plus - lam_minus = m g,
        M_x: (lam_plus + lam_minus) (L/2) cos(theta) = F_z y'.
    Returns (sin theta, lam_minus, lam_plus)."""
    s = 2 * C_TUBE / L_TUBE
    c = np.sqrt(1 - s * s)
    y_arm = SF_TUBE[1] * c - SF_TUBE[2] * s
    total = F_TUBE * y_arm / (0.5 * L_TUBE * c)
    return s, 0.5 * (total - 1.0 * G), 0.5 * (total + 1.0 * G)


def test_tube_statics_closed_form_numbers():
    s, lam_minus, lam_plus = tube_statics()
    assert F_TUBE * SF_TUBE[1] > 1.0 * G * L_TUBE / 2             # 0.6 > 0.49 N m: it tilts
    assert s == 2e-3
    # the numbers quoted in the notebook (sum 11.94 N instead of F s_y / (L/2) = 12 N untilted)
    assert (lam_minus, lam_plus) == pytest.approx((1.06499994, 10.87499994), abs=1e-8)


@pytest.mark.parametrize("h", STEPS)
def test_tube_tilts_until_its_ends_touch_the_rod_diametrically_opposite(h):
    res = run("tube", h)
    done = settled_rows(res, "bore")
    lam = res.contact_force("bore")[done]
    assert np.all(lam > 1e-6)                                       # both ends loaded
    points = res.contact_point("bore")[done]
    assert np.allclose(points[:, 0, :2], [0.0, -R], rtol=0, atol=GAP_TOL)   # end -L/2: lower side
    assert np.allclose(points[:, 1, :2], [0.0, R], rtol=0, atol=GAP_TOL)    # end +L/2: upper side
    s, _, _ = tube_statics()
    axis = res.rotation("tube")[done][:, :, 2]                      # body Z, global
    assert np.allclose(axis, [0.0, -s, np.sqrt(1 - s * s)], rtol=0, atol=2 * GAP_TOL / L_TUBE)
    assert np.allclose(res.position("tube")[done][:, :2], 0.0, rtol=0, atol=GAP_TOL)
    assert res.gap("bore").min() >= -GAP_TOL


@pytest.mark.parametrize("h", STEPS)
def test_tube_contact_forces_equal_the_statics(h):
    res = run("tube", h)
    done = settled_rows(res, "bore")
    _, lam_minus, lam_plus = tube_statics()
    lam = res.contact_force("bore")[done]
    assert np.allclose(lam[:, 0], lam_minus, rtol=SOLVER_RTOL, atol=0)
    assert np.allclose(lam[:, 1], lam_plus, rtol=SOLVER_RTOL, atol=0)
    # the resultant on the tube carries the weight only (F has no lateral part)
    reaction = res.reaction_force("bore")[done[1:]]
    assert np.allclose(reaction, [0.0, 1.0 * G, 0.0], rtol=0, atol=SOLVER_RTOL * G)


@pytest.mark.parametrize("h", STEPS)
def test_tube_slides_with_a_equal_F_over_m(h):
    res = run("tube", h)
    v, z, t = res.velocity("tube"), res.position("tube")[:, 2], res.t
    # radial gaps push perpendicular to Z and nothing rubs: v_z = F t / m from the start
    assert np.allclose(v[:, 2], F_TUBE * t, rtol=0, atol=IDENTITY * F_TUBE * T_END)
    # z is the parabola F t^2 / (2 m) up to the first-order scheme's error <= F h_max t / (2 m)
    h_max = np.max(h)
    assert np.all(np.abs(z - 0.5 * F_TUBE * t**2) <= 0.5 * F_TUBE * h_max * t + IDENTITY)
    done = settled_rows(res, "bore")
    assert np.abs(v[done, :2]).max() <= VEL_TOL
    assert np.abs(res.angular_velocity("tube")[done]).max() <= VEL_TOL


# ------------------------------------------------------- CASES.md #2: the triangular slider
EDGE, C_PRISM, L_PRISM = 0.03, 3e-4, 0.1
F_PRISM, SF_PRISM = np.array([5.0, 0.0, 60.0]), np.array([0.0, 0.01, 0.05])


def _rotation(phi):
    angle = np.linalg.norm(phi)
    K = np.array([[0, -phi[2], phi[1]], [phi[2], 0, -phi[0]], [-phi[1], phi[0], 0]])
    if angle == 0:
        return np.eye(3)
    return np.eye(3) + np.sin(angle) / angle * K + (1 - np.cos(angle)) / angle**2 * K @ K


def prism_geometry():
    """Per gap, in the joint's order (face -, +; vertex; plane previous, next edge): the
    slider vertex (body frame), the cavity plane's outward normal and a point on it (global)."""
    P = prismatic_slider.triangle(EDGE)
    edges = np.roll(P, -1, axis=0) - P
    normals = np.c_[edges[:, 1], -edges[:, 0]] / np.linalg.norm(edges, axis=1, keepdims=True)
    pairs = [(face, k, e) for face in (-1, 1) for k in range(3) for e in ((k - 1) % 3, k)]
    vertices = np.array([[*P[k], face * L_PRISM / 2] for face, k, _ in pairs])
    normal = np.array([[*normals[e], 0.0] for _, _, e in pairs])
    on_plane = np.array([[*(P[e] + C_PRISM * normals[e]), 0.0] for _, _, e in pairs])
    return vertices, normal, on_plane


def prism_equilibrium(active):
    """Pose and contact forces with the gaps ``active`` closed (independent of the library).

    Five closed gaps fix x, y and the three rotations (Newton on the gap equations); the five
    forces, -lam n at the vertices, then balance gravity, F_x, F_y and the push's moment about
    the centre (5 x 5 linear system; Z is left to a = F_z/m). Returns (xy, A, lam, all gaps)."""
    V, N, Q = prism_geometry()
    r, A = np.zeros(3), np.eye(3)

    def gaps(r, A):
        return np.einsum("ij,ij->i", Q - (r + V @ A.T), N)

    for _ in range(50):
        arm = V[active] @ A.T
        jac = np.c_[-N[active][:, :2], -np.cross(arm, N[active])]
        dx = np.linalg.solve(jac, -gaps(r, A)[active])
        r[:2] += dx[:2]
        A = _rotation(dx[2:]) @ A
        if np.abs(dx).max() < 1e-15:
            break
    assert np.abs(gaps(r, A)[active]).max() <= IDENTITY * C_PRISM
    arm, f = V[active] @ A.T, -N[active]
    balance = np.vstack([f[:, :2].T, np.cross(arm, f).T])
    load = np.r_[F_PRISM[:2] + [0.0, -1.0 * G], np.cross(A @ SF_PRISM, F_PRISM)]
    lam = np.linalg.solve(balance, -load)
    return r[:2], A, lam, gaps(r, A)


def test_prism_geometry_matches_the_joint_at_rest():
    """The independent geometry reproduces the library's gaps in the initial configuration
    (all = c), so the equilibrium below models the same joint."""
    cs = prismatic_slider.build().compile()
    q0, _ = cs.initial_state()
    V, N, Q = prism_geometry()
    ours = np.einsum("ij,ij->i", Q - V, N)
    assert np.allclose(np.asarray(cs.gap(q0)).ravel(), ours, rtol=0, atol=IDENTITY * C_PRISM)
    assert np.allclose(ours, C_PRISM, rtol=0, atol=IDENTITY * C_PRISM)


@pytest.mark.parametrize("h", STEPS)
def test_prism_engages_vertices_at_both_faces(h):
    """CASES.md #2 data: five vertex gaps (five distinct vertices, both end faces) carry
    force once contact is steady; six contacts would be statically indeterminate."""
    res = run("prism", h)
    done = settled_rows(res, "cavity")
    act = active_gaps(res, "cavity")[done]
    assert np.all(act == act[-1])
    gaps = np.nonzero(act[-1])[0]
    vertices = {i // 2 for i in gaps}                                # face * 3 + vertex
    faces = {v // 3 for v in vertices}
    assert len(vertices) >= 4 and faces == {0, 1}
    assert len(gaps) == 5                                           # measured: 0, 2, 6, 9, 10


@pytest.mark.parametrize("h", STEPS)
def test_prism_contact_forces_equal_the_statics(h):
    res = run("prism", h)
    done = settled_rows(res, "cavity")
    active = np.nonzero(active_gaps(res, "cavity")[-1])[0]
    xy, A, lam, gaps = prism_equilibrium(active)
    # a valid equilibrium: compressive forces, every other gap open
    assert np.all(lam > 0) and np.all(np.delete(gaps, active) > 0)
    assert np.allclose(res.contact_force("cavity")[done][:, active], lam,
                       rtol=SOLVER_RTOL, atol=0)
    assert np.allclose(res.position("slider")[done][:, :2], xy, rtol=0, atol=GAP_TOL)
    assert np.allclose(res.rotation("slider")[done], A, rtol=0, atol=GAP_TOL / EDGE)
    # resultant on the slider: the weight and F_x, nothing along Z
    reaction = res.reaction_force("cavity")[done[1:]]
    assert np.allclose(reaction, [-F_PRISM[0], 1.0 * G, 0.0], rtol=0,
                       atol=SOLVER_RTOL * np.linalg.norm(F_PRISM))


@pytest.mark.parametrize("h", STEPS)
def test_prism_xy_motion_stops_and_it_slides_with_a_equal_F_over_m(h):
    res = run("prism", h)
    v, t = res.velocity("slider"), res.t
    done = settled_rows(res, "cavity")
    assert np.abs(v[done, :2]).max() <= VEL_TOL
    assert np.abs(res.angular_velocity("slider")[done]).max() <= VEL_TOL
    assert np.allclose(v[:, 2], F_PRISM[2] * t, rtol=0, atol=IDENTITY * F_PRISM[2] * T_END)
    assert res.gap("cavity").min() >= -GAP_TOL


# ------------------------------------------------------------------------- step size
@pytest.mark.parametrize("case, name", [("tube", "bore"), ("prism", "cavity")])
def test_step_size_settles_at_h_max_once_contact_is_steady(case, name):
    """With bounds (1e-3, 1e-2) the adaptive scheme cuts steps only where a gap is about to
    close; once the set of loaded gaps stops changing, every step is h_max except the last,
    cut to land on t_end."""
    res = run(case, (1e-3, 1e-2))
    h = res.h[steady(res, name)[:-1]]                   # steps starting in steady contact
    assert np.all(h[:-1] == 1e-2)
    assert 0 < h[-1] <= 1e-2 and res.t[-1] == pytest.approx(T_END, abs=IDENTITY)
