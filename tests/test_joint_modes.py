"""Joint mode vectors and the reaction split (seed 004): bases, null spaces of the joints'
rows, the split against the reaction wrench, pendulums and a screw against closed forms."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.joints.ideal import Joint
from nlpdyn.rotations import from_axis_angle, rotation_matrices

RNG = np.random.default_rng(4)
AXIS = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
OTHER = np.cross(AXIS, [1.0, 0, 0]) / np.linalg.norm(np.cross(AXIS, [1.0, 0, 0]))
POINT = np.array([0.3, 0.0, 0.2])
OBLIQUE = np.cos(0.4) * OTHER + np.sin(0.4) * np.cross(AXIS, OTHER)


def _joint(kind, parent, child):
    """(joint, [excitations]) of each kind tested."""
    simple = {"spherical": lambda: nd.Spherical(parent, child, POINT),
              "revolute": lambda: nd.Revolute(parent, child, POINT, AXIS),
              "cylindrical": lambda: nd.Cylindrical(parent, child, POINT, AXIS),
              "prismatic": lambda: nd.Prismatic(parent, child, POINT, AXIS),
              "universal": lambda: nd.Universal(parent, child, POINT, AXIS, OTHER),
              "fixed": lambda: nd.Fixed(parent, child, POINT, AXIS),
              "screw": lambda: nd.Screw(parent, child, POINT, AXIS, pitch=0.05),
              "planar": lambda: nd.Planar(parent, child, POINT, AXIS),
              "planar_translation": lambda: nd.PlanarTranslation(
                  parent, child, POINT, AXIS, directions=(OTHER, OBLIQUE))}
    base = kind.split("+")[0]
    joint = simple[base]()
    joint.name = "j"
    excitations = {
        "revolute+driver": lambda: [nd.RotationDriver(joint, lambda t: 0.7 * t)],
        "cylindrical+driver": lambda: [nd.TranslationDriver(joint, lambda t: 0.1 * ca.sin(t))],
        "prismatic+excitation": lambda: [nd.KinematicExcitation(joint, 0, kappa=0.2)],
        "planar_translation+excitation": lambda: [nd.KinematicExcitation(
            joint, 1, eta=lambda t: 0.1 * ca.sin(2 * t))],
        "screw+excitation": lambda: [nd.KinematicExcitation(joint, 0, kappa=1.5)],
    }
    return joint, excitations.get(kind, lambda: [])()


KINDS = ["spherical", "revolute", "cylindrical", "prismatic", "universal", "fixed", "screw",
         "planar", "planar_translation", "revolute+driver", "cylindrical+driver",
         "prismatic+excitation", "planar_translation+excitation", "screw+excitation"]


def _system(kind, ground_parent=False, gravity=(0, 0, 0)):
    s = nd.System(gravity=gravity)
    parent = s.ground if ground_parent else s.add_body(
        "a", mass=2.0, inertia=(0.1, 0.2, 0.15), position=(0.1, 0.2, 0.3),
        orientation=from_axis_angle([1, 2, 3], 0.4))
    child = s.add_body("b", mass=1.5, inertia=(0.05, 0.08, 0.1), position=(0.6, -0.2, 0.1),
                       orientation=from_axis_angle([-1, 0.5, 2], 0.7),
                       angular_velocity=(1.0, -2.0, 0.5), velocity=(0.3, 0.2, -0.1))
    joint, excitations = _joint(kind, parent, child)
    s.add_joint(joint)
    for x in excitations:
        s.add_joint(x)
    return s, joint, excitations


def _modes_at(joint, excitations, E, R_child):
    """The joint's modes at a configuration (a universal joint's follow its angle)."""
    if isinstance(joint, nd.Universal):
        modes = joint.modes(child_axis=E.T @ R_child @ joint.child.local_vector(joint.axis2))
    else:
        modes = joint.modes()
    return modes.excite([x.mode for x in excitations])


def _consistent_configuration(cs, t):
    """A random configuration meeting every row: a perturbed start, Gauss-Newton to phi = 0."""
    q = cs.initial_state()[0] + 0.3 * RNG.standard_normal(cs.nq)
    for _ in range(60):
        phi = np.asarray(cs.phi(q, t)).ravel()
        q = q - np.linalg.lstsq(np.asarray(cs.phi_q(q, t)), phi, rcond=None)[0]
        for k in range(cs.n_bodies):
            q[7 * k + 3:7 * k + 7] /= np.linalg.norm(q[7 * k + 3:7 * k + 7])
    assert np.abs(np.asarray(cs.phi(q, t))).max() < 1e-12
    return q


@pytest.mark.parametrize("kind", KINDS)
def test_basis_and_dual(kind):
    _, joint, excitations = _system(kind)
    modes = joint.modes().excite([x.mode for x in excitations])
    basis = modes.basis
    assert np.linalg.matrix_rank(basis) == 6
    assert np.abs(modes.dual.T @ basis - np.eye(6)).max() < 1e-12
    assert modes.n_excited == len(excitations)


@pytest.mark.parametrize("kind", KINDS)
def test_free_modes_span_the_null_space_of_the_rows(kind):
    """At a random configuration, a relative twist G of the child (parent at rest) meets the
    joint's (and excitations') linearised rows, Pi v(G) = 0, exactly when G is a combination
    of the free modes; the constrained modes' duals span the rows (seed eq. 3.21)."""
    s, joint, excitations = _system(kind)
    cs = s.compile()
    t = 0.3
    q = _consistent_configuration(cs, t)
    R = rotation_matrices(q.reshape(-1, 7)[:, 3:])
    R_parent, R_child = R[0], R[1]
    E = R_parent @ joint.parent.local_vector(joint.frame())
    P = q[7:10] + R_child @ joint.child.local_point(joint.point)
    # child velocities of the twist G = [Omega; V] in the joint frame, parent at rest
    T = np.zeros((cs.nv, 6))
    T[6:9, 3:] = E
    T[6:9, :3] = -np.cross(q[7:10] - P, E.T).T     # (E Omega) x (r_cm - P)
    T[9:12, :3] = R_child.T @ E
    N = np.asarray(cs.velocity_jacobian(q, t)) @ T
    modes = _modes_at(joint, excitations, E, R_child)
    f = modes.free.shape[1]
    scale = np.abs(N).max()
    assert np.abs(N @ modes.free).max(initial=0.0) < 1e-12 * scale
    assert np.linalg.matrix_rank(N, tol=1e-9 * scale) == 6 - f
    # every row is a combination of the constrained modes' duals
    psi_bar = modes.dual[:, f:]
    coef = np.linalg.lstsq(psi_bar, N.T, rcond=None)[0]
    assert np.abs(psi_bar @ coef - N.T).max() < 1e-10 * scale


@pytest.mark.parametrize("kind", KINDS)
def test_split_reproduces_the_reaction(kind):
    """A and its split: A is the child's reaction (+ excitations'), about the joint point, in
    the joint frame; psi lambda + psi_bar lambda_bar = A; an ideal joint's applied part is 0."""
    s, joint, excitations = _system(kind, ground_parent=True, gravity=(0, 0, -9.81))
    res = nd.simulate(s, t_end=0.02, h=1e-3, progress=False)
    assert res.success
    out = res.joint_forces("j")
    modes = res.joint_modes("j")
    A = out["wrench"]
    E = joint.frame()                              # the parent is the ground
    # a reaction acts where its step took the rows: the midpoint step's midpoint (the seed's
    # euler: the step's start), which the result keeps
    R_child = rotation_matrices(res.reaction_q[:, 3:7])
    arm = np.einsum("nij,j->ni", R_child, joint.child.local_point(joint.point))
    torque = res.reaction_torque("j") + sum(
        (res.reaction_torque(x.name) if x.reaction_point() is not None else
         res.reaction_torque(x.name) - np.cross(arm, res.reaction_force(x.name)))
        for x in excitations)
    force = res.reaction_force("j") + sum(res.reaction_force(x.name) for x in excitations)
    scale = np.abs(A).max()
    assert scale > 1.0
    # the step's rows act on p/|p| while the wrench is read off the generalised force on w':
    # they differ by the O(h^2) norm error | |p| - 1 | the stepper leaves
    tol = (1e-12 + 4 * res.stats.norm_error.max()) * scale
    assert np.abs(A - np.c_[torque @ E, force @ E]).max() < 1e-12 * scale
    dual = modes["dual"]
    f = out["applied"].shape[1]
    rebuilt = np.einsum("...ij,nj->ni", dual, np.c_[out["applied"], out["constraint"]]) \
        if dual.ndim == 2 else np.einsum("nij,nj->ni", dual, np.c_[out["applied"], out["constraint"]])
    assert np.abs(rebuilt - A).max() < 1e-12 * scale
    assert f == joint.modes().free.shape[1] - len(excitations)
    assert np.abs(out["applied"]).max(initial=0.0) < tol
    for k, x in enumerate(excitations):
        # the excitation's force is its mode's constraint force: the driver torque or force
        # about / along the axis for the drivers
        if isinstance(x, nd.RotationDriver):
            axial = res.reaction_torque(x.name) - np.cross(arm, res.reaction_force(x.name))
            assert np.abs(out["constraint"][:, k] - axial @ joint.axis).max() < tol
        elif isinstance(x, nd.TranslationDriver):
            assert np.abs(out["constraint"][:, k] - res.reaction_force(x.name) @ joint.axis).max() < tol


# ------------------------------------------------------------------ pendulums
M, L, G, H = 2.0, 0.8, 9.81, 1e-3


def _pendulum(position, **forces):
    s = nd.System(gravity=(0, 0, -G))
    bob = s.add_body("bob", mass=M, inertia=(1e-6,) * 3, position=position)
    pin = s.add_joint(nd.Revolute(s.ground, bob, point=(0, 0, 0), axis=(0, 1, 0), name="pin"))
    return s, bob, pin


def _norm_tol(res):
    """Relative tolerance of a reaction's moment: the stepper's | |p| - 1 | (see above)."""
    return 1e-12 + 4 * res.stats.norm_error.max()


def _translation_force(res, pin, out):
    """The constraint force on the bob (global) from the translation modes' components."""
    modes = res.joint_modes("pin")
    trans = modes["constrained"][3:]                # the translation part of each mode
    return out["constraint"] @ trans.T @ pin.frame().T


def test_hanging_pendulum_carries_its_weight():
    s, bob, pin = _pendulum((0, 0, -L))
    res = nd.simulate(s, t_end=0.05, h=H, progress=False)
    out = res.joint_forces("pin")
    force = _translation_force(res, pin, out)
    assert np.allclose(force, [0, 0, M * G], rtol=0, atol=1e-9 * M * G)
    assert np.abs(out["applied"]).max() < _norm_tol(res) * M * G * L


def test_swinging_pendulum_tension():
    """Released horizontal at rest: the rod's tension is m g cos(theta) + m w^2 L with
    (m L^2 + I) w^2 = 2 m g L cos(theta) (energy; I = 1e-6 the bob's own inertia), about
    3 m g cos(theta), theta from the downward vertical; 3 m g at the bottom. The midpoint
    step's reaction acts at its middle (the chord's middle of its ends, to O(h^2)); error
    C h^2 (measured 3.1 h^2 m g at h = 1e-3, 5e-4 and 2.5e-4)."""
    s, bob, pin = _pendulum((L, 0, 0))
    res = nd.simulate(s, t_end=0.6, h=H, progress=False)
    out = res.joint_forces("pin")
    force = _translation_force(res, pin, out)
    r = 0.5 * (res.position("bob")[:-1] + res.position("bob")[1:])
    radial = r / np.linalg.norm(r, axis=1)[:, None]
    tension = -np.einsum("ni,ni->n", force, radial)
    cos_theta = -radial[:, 2]
    expected = M * G * cos_theta * (1 + 2 * M * L**2 / (M * L**2 + 1e-6))
    assert np.abs(tension - expected).max() < 5 * H**2 * M * G
    bottom = np.argmax(cos_theta)
    assert cos_theta[bottom] > 0.999
    assert abs(tension[bottom] - 3 * M * G) < 0.03 * H * M * G + 3 * M * G * (1 - cos_theta[bottom])
    assert np.abs(out["applied"]).max() < _norm_tol(res) * M * G * L


def test_motor_torque_is_the_applied_part():
    """A motor torque tau(t) on the bob about the axis (reaction on the ground) is the
    joint's applied force along its free mode (seed eq. 3.32), tau at the middle of each
    step, where the midpoint step takes its loads."""
    s, bob, pin = _pendulum((0, 0, -L))

    def tau(t):
        return 0.5 * np.sin(3 * t) + 0.2
    s.add_force(nd.PointForce(bob, torque=lambda t, st: tau(t) * ca.DM([0, 1, 0]), name="motor"))
    res = nd.simulate(s, t_end=0.3, h=H, progress=False)
    out = res.joint_forces("pin", applied=["motor"])
    tol = _norm_tol(res) * M * G * L
    assert np.abs(out["applied"][:, 0] - tau(res.t[:-1] + res.h / 2)).max() < tol
    assert np.abs(res.joint_forces("pin")["applied"]).max() < tol


def test_driver_torque_is_the_excited_modes_constraint_force():
    """A RotationDriver turning the pendulum at a constant rate w0 from hanging needs the
    torque m g L sin(w0 t) about the axis (J_pivot theta'' = 0); it is the constraint force of
    the excited mode (error C h: measured 0.54 h m g L at the step's start, h = 1e-3 and
    5e-4). The KinematicExcitation of the same mode gives the same run."""
    w0 = 2.0
    runs = []
    for make in (lambda pin: nd.RotationDriver(pin, lambda t: w0 * t, name="drive"),
                 lambda pin: nd.KinematicExcitation(pin, 0, kappa=w0, name="drive")):
        s, bob, pin = _pendulum((0, 0, -L))
        bob.angular_velocity = np.array([0, w0, 0.0])
        bob.velocity = np.array([-w0 * L, 0, 0.0])
        s.add_joint(make(pin))
        res = nd.simulate(s, t_end=1.0, h=H, progress=False)
        modes = res.joint_modes("pin")
        assert modes["free"].shape == (6, 0) and modes["excited"] == [0]
        runs.append(res.joint_forces("pin")["constraint"][:, 0])
        assert np.abs(runs[-1] - M * G * L * np.sin(w0 * res.t[:-1])).max() < H * M * G * L
    assert np.allclose(runs[0], runs[1], rtol=0, atol=1e-9 * M * G * L)


def test_screw_falls_along_its_thread():
    """A nut on a vertical screw: (J + m p^2) theta'' = -m g p, the axial force on the nut
    m g J / (J + m p^2), and the applied part (axial moment + p times axial force) zero."""
    p, J, m = 0.02, 0.004, 1.0
    s = nd.System(gravity=(0, 0, -G))
    nut = s.add_body("nut", mass=m, inertia=(0.003, 0.003, J))
    s.add_joint(nd.Screw(s.ground, nut, point=(0, 0, 0), axis=(0, 0, 1), pitch=p, name="thread"))
    res = nd.simulate(s, t_end=0.5, h=H, progress=False)
    accel = -m * G * p**2 / (J + m * p**2)
    z = res.position("nut")[:, 2]
    assert np.abs(z - 0.5 * accel * res.t**2).max() < 2 * H * abs(accel) * res.t[-1]
    out = res.joint_forces("thread")
    axial = out["constraint"][:, 4]          # the constrained mode [0; e3]
    assert np.allclose(axial, m * G * J / (J + m * p**2), rtol=0.1 * H)    # C h
    assert np.abs(out["applied"]).max() < _norm_tol(res) * m * G


def test_modes_survive_save_and_load(tmp_path):
    s, bob, pin = _pendulum((0, 0, -L))
    res = nd.simulate(s, t_end=0.01, h=H, progress=False)
    back = nd.Result.load(res.save(tmp_path / "run"))
    for key in ("applied", "constraint", "wrench"):
        assert np.array_equal(back.joint_forces("pin")[key], res.joint_forces("pin")[key])
    with pytest.raises(KeyError, match="no ideal or clearance joint named .bob."):
        res.joint_modes("bob")


@pytest.mark.parametrize("make, match", [
    (lambda j: nd.KinematicExcitation(j, 3, kappa=1.0), "mode must be the index"),
    (lambda j: nd.KinematicExcitation(j, 0), "give kappa"),
    (lambda j: nd.KinematicExcitation(j, 0, kappa=lambda t: t), "give its integral"),
])
def test_bad_excitation_is_named(make, match):
    s, bob, pin = _pendulum((0, 0, -L))
    s.add_joint(make(pin))
    with pytest.raises(nd.ModelError, match=match):
        s.compile()


def test_bad_joint_data_is_named():
    s = nd.System()
    b = s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint(nd.Screw(s.ground, b, (0, 0, 0), (0, 0, 1), pitch=0.0, name="s"))
    s.add_joint(nd.PlanarTranslation(s.ground, b, (0, 0, 0), (0, 0, 1),
                                     directions=((1, 0, 0), (1, 0, 0)), name="p"))
    s.add_joint(nd.KinematicExcitation(nd.Spherical(s.ground, b, (0, 0, 0)), 0, kappa=1.0,
                                       name="x"))
    with pytest.raises(nd.ModelError) as err:
        s.compile()
    text = str(err.value)
    assert "screw joint 's': pitch" in text and "'p': the two directions are parallel" in text
    assert "kinematic excitation 'x'" in text


CASE_STUDIES = ["slider_crank", "pendulum", "spherical_pendulum", "trough", "clearance_pendulum",
                "triple_pendulum", "bricard"]


@pytest.mark.parametrize("name", CASE_STUDIES)
def test_every_joint_of_the_case_studies_is_split(name):
    """Every ideal and clearance joint of a case study has modes and a split that rebuilds
    its wrench (psi lambda + psi_bar lambda_bar = A)."""
    import importlib
    system = importlib.import_module(f"problems.{name}").build()
    res = nd.simulate(system, t_end=3e-3, h=1e-3, progress=False)
    joints = {el.name for el in [*system.constraints, *system.gaps]
              if isinstance(el, (Joint, nd.ClearanceJoint))}
    assert joints and joints == set(res.info["joints"])
    for joint in res.info["joints"]:
        out, dual = res.joint_forces(joint), res.joint_modes(joint)["dual"]
        split = np.c_[out["applied"], out["constraint"]]
        rebuilt = split @ dual.T if dual.ndim == 2 else np.einsum("nij,nj->ni", dual, split)
        assert np.abs(rebuilt - out["wrench"]).max() <= 1e-12 * max(1.0, np.abs(out["wrench"]).max())


def test_joint_forces_with_output_every(tmp_path):
    """Kept steps only: the result, in memory and saved, knows where each kept step's
    reactions act; one that does not (a file from before format version 2) says so."""
    s, bob, pin = _pendulum((L, 0, 0))
    full = nd.simulate(s, t_end=0.02, h=H, progress=False)
    s, bob, pin = _pendulum((L, 0, 0))
    sparse = nd.simulate(s, t_end=0.02, h=H, progress=False, output_every=5)
    expected = full.joint_forces("pin")["constraint"][4::5]
    assert np.array_equal(sparse.joint_forces("pin")["constraint"], expected)
    back = nd.Result.load(sparse.save(tmp_path / "sparse"))
    assert np.array_equal(back.joint_forces("pin")["constraint"], expected)
    back.reaction_q = None
    with pytest.raises(ValueError, match="output_every"):
        back.joint_forces("pin")
