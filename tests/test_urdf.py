"""nd.from_urdf (issue 26): bodies against a hand calculation from the file, dynamics against
MuJoCo loading the same URDF, malformed files, and a loosened revolute joint."""
import sys

import numpy as np
import pytest

import nlpdyn as nd

pytest.importorskip("yourdfpy")

MUJOCO = '<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>'

# A double pendulum: two rods (0.4 m, 1 kg and 0.3 m, 0.6 kg) hinged about Y
PENDULUM = f"""<robot name="double_pendulum">{MUJOCO}
  <link name="base"/>
  <link name="rod1"><inertial><origin xyz="0 0 -0.2"/><mass value="1"/>
    <inertia ixx="0.0134" ixy="0" ixz="0" iyy="0.0134" iyz="0" izz="0.0001"/></inertial></link>
  <link name="rod2"><inertial><origin xyz="0 0 -0.15"/><mass value="0.6"/>
    <inertia ixx="0.0045" ixy="0" ixz="0" iyy="0.0045" iyz="0" izz="0.00005"/></inertial></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="rod1"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="revolute"><parent link="rod1"/><child link="rod2"/>
    <origin xyz="0 0 -0.4"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="10"/></joint>
</robot>"""

# A serial arm with a fixed, a revolute (tilted axis), a continuous and a prismatic joint;
# inertial frames rotated, with products of inertia. The slide stays inside its limits.
ARM = f"""<robot name="arm">{MUJOCO}
  <link name="base"/>
  <link name="pedestal"><inertial><origin xyz="0 0 0.05"/><mass value="3"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <link name="upper"><inertial><origin xyz="0.15 0 0.02" rpy="0.3 0.2 0.1"/><mass value="1.2"/>
    <inertia ixx="0.002" ixy="0.0003" ixz="-0.0002" iyy="0.011" iyz="0.0001" izz="0.012"/>
    </inertial></link>
  <link name="fore"><inertial><origin xyz="0.12 0.01 0" rpy="0 0 0.4"/><mass value="0.8"/>
    <inertia ixx="0.001" ixy="0.0001" ixz="0" iyy="0.006" iyz="0.0002" izz="0.0065"/>
    </inertial></link>
  <link name="tool"><inertial><origin xyz="0.02 0 0"/><mass value="0.3"/>
    <inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0003"/></inertial></link>
  <joint name="mount" type="fixed"><parent link="base"/><child link="pedestal"/>
    <origin xyz="0 0 0.1" rpy="0 0 0.5"/></joint>
  <joint name="shoulder" type="revolute"><parent link="pedestal"/><child link="upper"/>
    <origin xyz="0 0 0.1" rpy="1.2 0 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.3 0 0" rpy="0 0.3 0"/><axis xyz="0 0 1"/></joint>
  <joint name="slide" type="prismatic"><parent link="fore"/><child link="tool"/>
    <origin xyz="0.25 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="10"/></joint>
</robot>"""

# The double pendulum hung from a free base link (inertial frame offset and turned, products of
# inertia), loaded with base="floating": the root at rest, the joints turning
FLOATING = PENDULUM.replace('<link name="base"/>', """<link name="base"><inertial>
    <origin xyz="0.03 -0.02 0.05" rpy="0.2 0.1 -0.3"/><mass value="2"/>
    <inertia ixx="0.012" ixy="0.001" ixz="0" iyy="0.015" iyz="0.0005" izz="0.02"/>
    </inertial></link>""")

# name -> (file, joint configuration, joint rates, base)
CASES = {
    "pendulum": (PENDULUM, {"shoulder": 0.5, "elbow": -0.3}, {"shoulder": 1.0, "elbow": 2.0},
                 "fixed"),
    "arm": (ARM, {"shoulder": 0.4, "elbow": -0.7, "slide": 0.05},
            {"shoulder": 1.0, "elbow": -2.0, "slide": 0.3}, "fixed"),
    "floating": (FLOATING, {"shoulder": 0.5, "elbow": -0.3}, {"shoulder": 0.5, "elbow": -1.0},
                 "floating"),
}


def test_bodies_match_a_hand_calculation():
    """Mass, centre of mass, orientation and inertia (products included) of every body,
    worked out by hand from the file: rotations by 90 degrees permute the inertia's rows."""
    urdf = """<robot name="r"><link name="base"/>
      <link name="arm"><inertial><origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/>
        <mass value="2"/>
        <inertia ixx="0.3" ixy="0.01" ixz="0.02" iyy="0.4" iyz="0.03" izz="0.5"/></inertial>
      </link>
      <link name="hand"><inertial><origin xyz="0 0 -0.1" rpy="1.5707963267948966 0 0"/>
        <mass value="0.5"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
      <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/>
        <origin xyz="0 0 1"/><axis xyz="0 0 1"/>
        <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
      <joint name="reach" type="prismatic"><parent link="arm"/><child link="hand"/>
        <origin xyz="0.5 0 0"/><axis xyz="1 0 0"/>
        <limit lower="0" upper="0.4" effort="1" velocity="1"/></joint>
    </robot>"""
    s = nd.from_urdf(urdf, configuration={"turn": np.pi / 2, "reach": 0.2})
    Rz = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])     # both links turned 90 deg about Z
    arm, hand = s.body("arm"), s.body("hand")
    assert [b.name for b in s.bodies] == ["arm", "hand"]
    assert (arm.mass, hand.mass) == (2.0, 0.5)
    # arm: (0, 0, 1) + Rz (0.1, 0.2, 0.3); inertia in the link's axes: the inertial frame
    # turned 90 deg about z, I'xx = Iyy, I'yy = Ixx, I'xy = -Ixy, I'xz = -Iyz, I'yz = Ixz
    np.testing.assert_allclose(arm.position, [-0.2, 0.1, 1.3], atol=1e-15)
    np.testing.assert_allclose(arm.rotation0, Rz, atol=1e-15)
    np.testing.assert_allclose(arm.inertia, [[0.4, -0.01, -0.03], [-0.01, 0.3, 0.02],
                                             [-0.03, 0.02, 0.5]], atol=1e-15)
    # hand: link origin (0, 0, 1) + Rz (0.5 + 0.2, 0, 0); inertial turned 90 deg about x
    np.testing.assert_allclose(hand.position, [0, 0.7, 0.9], atol=1e-15)
    np.testing.assert_allclose(hand.rotation0, Rz, atol=1e-15)
    np.testing.assert_allclose(hand.inertia, np.diag([0.01, 0.03, 0.02]), atol=1e-15)
    turn, reach = s.constraints
    assert isinstance(turn, nd.Revolute) and isinstance(reach, nd.Prismatic)
    np.testing.assert_allclose(reach.point, [0, 0.7, 1], atol=1e-15)
    np.testing.assert_allclose(reach.axis, [0, 1, 0], atol=1e-15)


def test_floating_base_is_a_free_body():
    s = nd.from_urdf(FLOATING, base="floating")
    assert [b.name for b in s.bodies] == ["base", "rod1", "rod2"]
    assert [j.parent.name for j in s.constraints] == ["base", "rod1"]


def test_planar_and_floating_joints():
    """planar -> nd.Planar about the file's axis (the plane's normal); floating -> no joint."""
    urdf = PENDULUM.replace('type="continuous"', 'type="planar"').replace(
        'type="revolute"', 'type="floating"')
    s = nd.from_urdf(urdf)
    (planar,) = s.constraints
    assert isinstance(planar, nd.Planar) and planar.name == "shoulder"
    np.testing.assert_allclose(planar.axis, [0, 1, 0])
    assert [b.name for b in s.bodies] == ["rod1", "rod2"]


def _mujoco(urdf, q0, qd0, base="fixed"):
    """MuJoCo's model of the file (a floating base: the root body given a free joint, at rest)
    and its data after mj_forward at the joint configuration and rates."""
    mujoco = pytest.importorskip("mujoco")
    spec = mujoco.MjSpec.from_string(urdf)
    if base == "floating":
        spec.body("base").add_freejoint()
    model = spec.compile()
    data = mujoco.MjData(model)
    for name, q in q0.items():
        data.qpos[model.joint(name).qposadr[0]] = q
    for name, qd in qd0.items():
        data.qvel[model.joint(name).dofadr[0]] = qd
    mujoco.mj_forward(model, data)
    mujoco.mj_rnePostConstraint(model, data)        # the bodies' accelerations (cacc)
    return mujoco, model, data


@pytest.mark.parametrize("case", CASES)
def test_initial_state_matches_mujoco(case):
    """Centres of mass, orientations, inertias, centre-of-mass velocities and body-frame
    angular velocities at the given joint configuration and rates: MuJoCo's (xipos, xmat,
    body_inertia, mj_objectVelocity) to round-off."""
    urdf, q0, qd0, base = CASES[case]
    mujoco, model, data = _mujoco(urdf, q0, qd0, base)
    s = nd.from_urdf(urdf, base=base, configuration=q0, velocities=qd0)
    for b in s.bodies:
        i = model.body(b.name).id
        com, local = np.zeros(6), np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, i, com, 0)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, i, local, 1)
        R = data.ximat[i].reshape(3, 3)
        inertia = R @ np.diag(model.body_inertia[i]) @ R.T
        assert b.mass == model.body_mass[i]
        np.testing.assert_allclose(b.position, data.xipos[i], atol=1e-14)
        np.testing.assert_allclose(b.rotation0, data.xmat[i].reshape(3, 3), atol=1e-14)
        np.testing.assert_allclose(b.rotation0 @ b.inertia @ b.rotation0.T, inertia, atol=1e-14)
        np.testing.assert_allclose(b.velocity, com[3:], atol=1e-14)
        np.testing.assert_allclose(b.angular_velocity, local[:3], atol=1e-14)


@pytest.mark.parametrize("case", CASES)
def test_first_accelerations_match_mujoco(case):
    """The change of the centres of mass' velocity over one step of h, over h, is MuJoCo's
    acceleration (mj_objectAcceleration, which leaves out gravity, plus gravity) to O(h);
    fitted as a + c1 h + c2 h^2 over h = 1e-4, 5e-5, 2.5e-5, its a is MuJoCo's to 1e-8 of
    the largest. A fixed base starts from rest; a floating one would fall as one at g, so
    its joints turn."""
    urdf, q0, qd0, base = CASES[case]
    qd0 = qd0 if base == "floating" else {}
    mujoco, model, data = _mujoco(urdf, q0, qd0, base)
    steps, errors = [1e-4, 5e-5, 2.5e-5], []
    expected, rates = [], []
    for h in steps:
        s = nd.from_urdf(urdf, base=base, configuration=q0, velocities=qd0)
        res = nd.simulate(s, h, h=h, progress=False)
        expected, rate = [], []
        for b in s.bodies:
            acc = np.zeros(6)
            mujoco.mj_objectAcceleration(model, data, mujoco.mjtObj.mjOBJ_BODY,
                                         model.body(b.name).id, acc, 0)
            expected.append(acc[3:] + model.opt.gravity)
            v = res.velocity(b.name)
            rate.append((v[-1] - v[0]) / h)
        rates.append(np.ravel(rate))
        errors.append(np.abs(rates[-1] - np.ravel(expected)).max())
        assert errors[-1] < 0.1 * 9.81 * h     # m/s^2, h in s: O(h), far above the solver's floor
    print(f"{case}: |(v(h) - v(0))/h - a_mujoco| = {errors[0]:.2e}, {errors[1]:.2e}, "
          f"{errors[2]:.2e} at h = 1e-4, 5e-5, 2.5e-5")
    assert errors[1] < 0.6 * errors[0]
    fit = np.linalg.solve(np.vander(steps, 3, increasing=True), np.array(rates))[0]
    expected = np.ravel(expected)
    print(f"{case}: fitted a - a_mujoco = {np.abs(fit - expected).max():.2e} m/s^2 "
          f"(largest |a| {np.abs(expected).max():.2f})")
    assert np.abs(fit - expected).max() <= 1e-8 * np.abs(expected).max()


@pytest.mark.parametrize("case", CASES)
def test_trajectories_converge_to_mujoco(case):
    """2 s of motion: the centres of mass at the end differ from MuJoCo's RK4 at 1e-4 s
    (its error ~1e-12 m) by C h^2: a quarter when h halves. MuJoCo's joint limits from the
    file are switched off, as from_urdf loads none unless asked (the arm's slide reaches
    its limit within 2 s)."""
    urdf, q0, qd0, base = CASES[case]
    mujoco, model, data = _mujoco(urdf, q0, qd0, base)
    model.opt.integrator, model.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, 1e-4
    model.jnt_limited[:] = 0
    for _ in range(20000):
        mujoco.mj_step(model, data)
    errors = []
    for h in (4e-3, 2e-3):
        s = nd.from_urdf(urdf, base=base, configuration=q0, velocities=qd0)
        res = nd.simulate(s, 2.0, h=h, progress=False)
        errors.append(max(np.abs(res.position(b.name)[-1] - data.xipos[model.body(b.name).id]).max()
                          for b in s.bodies))
    print(f"{case}: centre-of-mass error at 2 s {errors[0]:.2e} m (h = 4e-3), "
          f"{errors[1]:.2e} m (h = 2e-3)")
    assert errors[0] < 1e-4
    assert 3.0 < errors[0] / errors[1] < 5.0


def test_malformed_file_names_every_problem():
    urdf = """<robot name="bad">
      <link name="base"/>
      <link name="a"><inertial><mass value="heavy"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="b"/>
      <link name="c"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="d"><inertial><mass value="1"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
        <origin xyz="0 0 one"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="continuous"><parent link="a"/><child link="b"/>
        <mimic joint="j1"/></joint>
      <joint name="j3" type="hinge"><parent link="a"/><child link="c"/></joint>
      <joint name="j4" type="fixed"><parent link="nowhere"/><child link="d"/></joint>
    </robot>"""
    with pytest.raises(nd.ModelError) as caught:
        nd.from_urdf(urdf, configuration={"j9": 0.1})
    problems = "\n".join(caught.value.problems)
    for culprit in ("link 'a': <mass value=\"heavy\">", "joint 'j1': <origin xyz=\"0 0 one\">",
                    "link 'b': has no <inertial>", "joint 'j2': mimic", "joint 'j3': type 'hinge'",
                    "joint 'j4': parent link 'nowhere'", "configuration: no joint named 'j9'"):
        assert culprit in problems
    assert len(caught.value.problems) == 7      # d, below an undefined link, is not a loop


def test_closed_loop_and_missing_file(tmp_path):
    loop = PENDULUM.replace("</robot>", """<joint name="back" type="revolute">
        <parent link="rod2"/><child link="rod1"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""")
    with pytest.raises(nd.ModelError, match="closed loops are not supported"):
        nd.from_urdf(loop)
    with pytest.raises(nd.ModelError, match="cannot be read"):
        nd.from_urdf(tmp_path / "missing.urdf")
    (tmp_path / "pendulum.urdf").write_text(PENDULUM)
    assert len(nd.from_urdf(tmp_path / "pendulum.urdf").bodies) == 2


def test_limits_become_stops():
    """The file's limits, measured from the loaded configuration (stops measure from 0)."""
    urdf = PENDULUM.replace('lower="-3" upper="3"', 'lower="-1" upper="1.5"')
    s = nd.from_urdf(urdf, configuration={"elbow": 0.5}, limits=nd.Hertz(1e4))
    (stop,) = s.forces
    assert isinstance(stop, nd.RotationStop) and stop.name == "elbow_limits"
    assert (stop.lower, stop.upper) == (-1.5, 1.0)
    with pytest.raises(nd.ModelError, match="reach beyond"):     # -3.5 from the start
        nd.from_urdf(PENDULUM, configuration={"elbow": 0.5}, limits=nd.Hertz(1e4))
    with pytest.raises(nd.ModelError, match="'shoulder' .continuous. has no lower"):
        nd.from_urdf(PENDULUM, limits={"shoulder": nd.Hertz(1e4)})


@pytest.mark.slow
def test_tiny_clearance_moves_like_the_ideal_joint():
    """A pendulum whose hinge is a RevoluteClearance: its centre of mass follows the ideal
    hinge's to within a few clearances, and the difference shrinks with the clearance."""
    urdf, q0, qd0 = PENDULUM, {"shoulder": 0.5, "elbow": -0.3}, {}
    ideal = nd.simulate(nd.from_urdf(urdf, configuration=q0), 0.2, h=5e-4, progress=False)
    gaps = []
    for c in (1e-4, 1e-5):
        s = nd.from_urdf(urdf, configuration=q0, velocities=qd0,
                         clearance={"shoulder": dict(clearance=c, radius=0.01, length=0.02)})
        assert isinstance(s.gaps[0], nd.RevoluteClearance) and s.gaps[0].name == "shoulder"
        res = nd.simulate(s, 0.2, h=5e-4, progress=False)
        gaps.append(max(np.abs(res.position(n) - ideal.position(n)).max() for n in ("rod1", "rod2")))
    print(f"clearance 1e-4, 1e-5 m: largest centre-of-mass difference {gaps[0]:.2e}, {gaps[1]:.2e} m")
    assert gaps[0] < 10 * 1e-4 and gaps[1] < 10 * 1e-5
    assert gaps[0] / gaps[1] > 3


def test_prismatic_clearance_takes_the_users_profile():
    square = [(-0.01, -0.01), (0.01, -0.01), (0.01, 0.01), (-0.01, 0.01)]
    s = nd.from_urdf(ARM, clearance={"slide": dict(clearance=1e-4, profile=square, length=0.05),
                                     "elbow": dict(clearance=1e-4, radius=0.01, length=0.02,
                                                   axial_clearance=2e-4, friction=0.1)})
    slide, elbow = sorted(s.gaps, key=lambda g: g.name, reverse=True)
    assert isinstance(slide, nd.PrismaticClearance) and slide.length == 0.05
    assert isinstance(elbow, nd.RevoluteClearance)
    assert (elbow.axial_clearance, elbow.friction) == (2e-4, 0.1)
    np.testing.assert_allclose(slide.axis, s.body("fore").rotation0[:, 0], atol=1e-15)
    with pytest.raises(nd.ModelError) as caught:
        nd.from_urdf(ARM, clearance={"slide": dict(clearance=1e-4), "mount": {}})
    assert "'slide' (prismatic) needs keys ('clearance', 'profile', 'length')" in str(caught.value)
    assert "'mount' is fixed" in str(caught.value)


def test_command_line_runs_a_urdf_file(tmp_path, capsys):
    from nlpdyn.__main__ import main
    path, plot = tmp_path / "pendulum.urdf", tmp_path / "run.png"
    path.write_text(PENDULUM)
    code = main([str(path), "--t-end", "0.01", "--quiet", "--plot", str(plot),
                 "--set", "elbow=0.2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 bodies, 2 joints" in out and plot.read_bytes()[:4] == b"\x89PNG"
    path.write_text(PENDULUM.replace('type="revolute"', 'type="hinge"'))
    with pytest.raises(SystemExit) as caught:
        main([str(path), "--no-plot"])
    assert caught.value.code == 2 and "type 'hinge'" in capsys.readouterr().err


def test_without_yourdfpy_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "yourdfpy", None)
    with pytest.raises(ImportError, match=r"nlpdyn\[urdf\]"):
        nd.from_urdf(PENDULUM)
