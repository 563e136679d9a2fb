"""nd.from_urdf's joint damping, friction and bushings (issue 26): a damped model against
MuJoCo loading the same file, the damper's loss against its work column, Coulomb and LuGre
friction against closed forms, a stiff bushing against the ideal joint, and bad options."""
import re

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import nlpdyn as nd
from test_urdf import ARM, CASES, MUJOCO, PENDULUM, _mujoco

pytest.importorskip("yourdfpy")

G = 9.81
# A rod hanging from a hinge about Y: mass 1 kg, centre 0.2 m below the hinge
M, D, I_C = 1.0, 0.2, 0.01
I_HINGE = I_C + M * D**2


def rod(dynamics=""):
    return f"""<robot name="rod">{MUJOCO}<link name="base"/>
      <link name="rod"><inertial><origin xyz="0 0 -{D}"/><mass value="{M}"/>
        <inertia ixx="{I_C}" ixy="0" ixz="0" iyy="{I_C}" iyz="0" izz="0.001"/></inertial></link>
      <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
        <axis xyz="0 1 0"/>{dynamics}</joint></robot>"""


def angle(res):
    """The rod's rotation about Y from the hanging position (rad)."""
    x, _, z = res.position("rod").T
    return np.arctan2(-x, -z)


def hinge_rate(res):
    return res.angular_velocity("rod")[:, 1]


def test_damped_trajectories_converge_to_mujoco():
    """Both models with <dynamics damping> on every joint, 0.4 s: the centres of mass at the
    end differ from MuJoCo's RK4 at 1e-4 s by C h^2 (a quarter when h halves)."""
    for case in ("pendulum", "arm"):
        urdf, q0, qd0, _ = CASES[case]
        urdf = urdf.replace("</joint>", '<dynamics damping="0.02"/></joint>')
        mujoco, model, data = _mujoco(urdf, q0, qd0)
        assert model.dof_damping.max() == 0.02
        model.opt.integrator, model.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, 1e-4
        for _ in range(4000):
            mujoco.mj_step(model, data)
        errors = []
        for h in (4e-3, 2e-3):
            s = nd.from_urdf(urdf, configuration=q0, velocities=qd0, damping=True)
            assert sum(isinstance(f, nd.JointDamper) for f in s.forces) == model.nv
            res = nd.simulate(s, 0.4, h=h, progress=False)
            errors.append(max(np.abs(res.position(b.name)[-1]
                                     - data.xipos[model.body(b.name).id]).max() for b in s.bodies))
        print(f"{case} damped: centre-of-mass error at 0.4 s {errors[0]:.2e} m (h = 4e-3), "
              f"{errors[1]:.2e} m (h = 2e-3)")
        assert errors[0] < 1e-4
        assert 3.0 < errors[0] / errors[1] < 5.0


def test_damped_pendulum_against_its_ode():
    """theta'' = -(c theta' + m g d sin theta) / I_hinge, by solve_ivp at rtol 1e-12: the
    rod's angle after 1 s agrees to C h^2, and the swing decays by exp(-c t / (2 I))."""
    c, theta0, t_end = 0.02, 0.5, 1.0
    reference = solve_ivp(lambda t, y: [y[1], -(c * y[1] + M * G * D * np.sin(y[0])) / I_HINGE],
                          (0, t_end), [theta0, 0.0], rtol=1e-12, atol=1e-12).y[0, -1]
    errors = []
    for h in (2e-3, 1e-3):
        s = nd.from_urdf(rod(f'<dynamics damping="{c}"/>'), configuration={"hinge": theta0},
                         damping=True)
        (damper,) = s.forces
        assert isinstance(damper, nd.JointDamper) and damper.name == "hinge_damping"
        assert damper.damping == c
        errors.append(abs(angle(nd.simulate(s, t_end, h=h, progress=False))[-1] - reference))
    print(f"damped pendulum: angle error at 1 s {errors[0]:.2e}, {errors[1]:.2e} rad")
    assert errors[0] < 1e-3
    assert 3.0 < errors[0] / errors[1] < 5.0


def test_damper_loss_is_its_work_column():
    """The mechanical energy lost equals the damper's work column (energy ledger) up to the
    ideal hinge's own work, the time discretisation, which falls as h^2."""
    gaps = []
    for h in (1e-3, 5e-4):
        s = nd.from_urdf(rod(), configuration={"hinge": 0.5}, damping={"hinge": 0.05})
        ledger = nd.simulate(s, 1.0, h=h, progress=False).energy_ledger()
        loss = ledger["total"].iloc[-1] - ledger["total"].iloc[0]
        work = ledger["work:hinge_damping"].iloc[-1]
        print(f"h = {h}: energy change {loss:.9e} J, damper's work {work:.9e} J")
        assert work < -0.1
        gaps.append(abs(loss - work) / abs(work))
    assert gaps[0] < 1e-6
    assert 3.0 < gaps[0] / gaps[1] < 5.0


def test_coulomb_friction_sticks_below_and_slips_above_its_threshold():
    """The rod released at theta0 from rest: gravity's torque m g d sin theta0 against the
    file's friction F_c. Below it, the rod creeps at u_c T / sqrt(F_c^2 - T^2); above it,
    it swings as theta'' = (F_c - m g d sin theta) / I_hinge (solve_ivp) while theta' < 0."""
    theta0 = 0.3
    T = M * G * D * np.sin(theta0)
    for friction, t_end in ((1.2 * T, 0.5), (0.8 * T, 0.2)):
        s = nd.from_urdf(rod(f'<dynamics friction="{friction}"/>'),
                         configuration={"hinge": theta0}, friction="coulomb")
        (f,) = s.forces
        assert isinstance(f, nd.JointFriction) and (f.friction, f.sigma0) == (friction, None)
        theta = angle(nd.simulate(s, t_end, h=1e-3, progress=False))
        if friction > T:
            creep = f.creep_velocity * T / np.sqrt(friction**2 - T**2) * t_end
            print(f"stick: moved {theta0 - theta[-1]:.3e} rad, creep {creep:.3e} rad")
            assert abs((theta0 - theta[-1]) - creep) < 0.05 * creep
        else:
            reference = solve_ivp(lambda t, y: [y[1], (friction - M * G * D * np.sin(y[0]))
                                                / I_HINGE], (0, t_end), [theta0, 0.0],
                                  rtol=1e-12, atol=1e-12).y[0, -1]
            print(f"slip: angle {theta[-1]:.6f} rad, reference {reference:.6f} rad")
            assert abs(theta[-1] - reference) < 1e-3 * (theta0 - reference)


def test_lugre_friction_slides_at_the_files_level():
    """LuGre's law (sigma0 given) on the rod spun at 5 rad/s about a vertical hinge: in
    steady sliding the friction is the file's F_c (+ sigma2 u), so the rate falls at
    F_c (1 + sigma2 u) / I_z (solve_ivp of that ODE, from the rate at 0.1 s)."""
    urdf = rod('<dynamics friction="0.05"/>').replace('xyz="0 1 0"', 'xyz="0 0 1"')
    urdf = urdf.replace('<origin xyz="0 0 -0.2"/>', '<origin xyz="0.2 0 0"/>')
    sigma2, I_z = 0.1, 0.001 + M * D**2
    s = nd.from_urdf(urdf, velocities={"hinge": 5.0}, gravity=(0, 0, 0),
                     friction={"hinge": {"sigma0": 1e4, "sigma1": 0.0, "sigma2": sigma2}})
    (f,) = s.forces
    assert f.sigma0 == 1e4 and f.friction == 0.05
    res = nd.simulate(s, 0.5, h=1e-3, progress=False)
    u = res.angular_velocity("rod")[:, 2]
    k = np.searchsorted(res.t, 0.1)
    reference = solve_ivp(lambda t, y: [-0.05 * (1 + sigma2 * y[0]) / I_z],
                          (res.t[k], 0.5), [u[k]], rtol=1e-12, atol=1e-12).y[0, -1]
    print(f"LuGre: rate at 0.5 s {u[-1]:.6f} rad/s, reference {reference:.6f} rad/s")
    assert abs(u[-1] - reference) < 1e-3 * (u[k] - reference)


def test_stiff_bushing_moves_like_the_ideal_joint():
    """The double pendulum's elbow replaced by a bushing stiff in all but the hinge's
    rotation: its centres of mass follow the ideal elbow's, the difference ~ 1 / k."""
    q0 = {"shoulder": 0.5, "elbow": -0.3}
    ideal = nd.simulate(nd.from_urdf(PENDULUM, configuration=q0), 0.3, h=5e-4, progress=False)
    differences = []
    for k in (1e5, 1e6):
        s = nd.from_urdf(PENDULUM, configuration=q0, bushing={"elbow": dict(
            stiffness=k, rotational_stiffness=(k / 1e3, 0.0, k / 1e3))})
        (bushing,) = s.forces
        assert isinstance(bushing, nd.Bushing) and bushing.name == "elbow"
        assert [j.name for j in s.constraints] == ["shoulder"]
        res = nd.simulate(s, 0.3, h=5e-4, progress=False)
        differences.append(max(np.abs(np.interp(ideal.t, res.t, x) - y).max()
                               for n in ("rod1", "rod2")
                               for x, y in zip(res.position(n).T, ideal.position(n).T)))
    print(f"bushing k = 1e5, 1e6: largest centre-of-mass difference {differences[0]:.2e}, "
          f"{differences[1]:.2e} m")
    assert differences[0] < 1e-3
    assert differences[0] / differences[1] > 5


def test_bushing_axes_are_the_joint_frame():
    """A bushing's axes are the joint frame at the configuration: the tilted shoulder of
    the arm (origin rpy 1.2 0 0 on a pedestal turned 0.5 about Z)."""
    s = nd.from_urdf(ARM, bushing={"shoulder": dict(stiffness=1e6, rotational_stiffness=1e4)})
    bushing = next(f for f in s.forces if f.name == "shoulder")
    c, sn, c1, s1 = np.cos(0.5), np.sin(0.5), np.cos(1.2), np.sin(1.2)
    Rz = np.array([[c, -sn, 0], [sn, c, 0], [0, 0, 1]])
    Rx = np.array([[1, 0, 0], [0, c1, -s1], [0, s1, c1]])
    np.testing.assert_allclose(bushing.axes, (Rz @ Rx).T, atol=1e-15)
    np.testing.assert_allclose(bushing.point, [0, 0, 0.2], atol=1e-15)


def test_bad_options_name_every_problem():
    with pytest.raises(nd.ModelError) as caught:
        nd.from_urdf(ARM, damping={"elbow": None, "mount": 0.1, "nowhere": 1.0, "slide": -1},
                     friction={"shoulder": "lugre", "elbow": {"mu": 0.3}, "slide": "coulomb"},
                     bushing={"shoulder": dict(stiffness=1.0), "slide": dict(
                         stiffness=1.0, rotational_stiffness=1.0)},
                     clearance={"shoulder": dict(clearance=1e-4, radius=0.01, length=0.02)})
    problems = caught.value.problems
    for culprit in ("damping: joint 'elbow' has no <dynamics damping> in the file",
                    "damping: joint 'mount' is fixed", "damping: no joint named 'nowhere'",
                    "damping: joint 'slide' needs a number >= 0, got -1",
                    "friction: joint 'shoulder' needs 'coulomb' or a dict",
                    "friction: joint 'elbow' needs 'coulomb' or a dict",
                    "friction: joint 'slide' has no <dynamics friction> in the file",
                    "bushing: joint 'shoulder' needs a dict with keys",
                    "bushing: joint 'shoulder' has a clearance too"):
        assert any(p.startswith(culprit) for p in problems), culprit
    assert len(problems) == 9, problems
    with pytest.raises(nd.ModelError, match="'lugre' for every joint must be 'coulomb'"):
        nd.from_urdf(ARM, friction="lugre")
    with pytest.raises(nd.ModelError, match="'slide' has damping too"):
        nd.from_urdf(ARM, damping={"slide": 1.0},
                     bushing={"slide": dict(stiffness=1.0, rotational_stiffness=1.0)})
    with pytest.raises(nd.ModelError, match="joint friction 'hinge_friction': sigma0 must be > 0"):
        nd.from_urdf(rod('<dynamics friction="0.1"/>'), friction={"hinge": {"sigma0": -1.0}})


def test_options_apply_to_the_joints_the_file_gives_values():
    """damping=True and friction="coulomb": the joints with a value in the file, not those
    replaced by a bushing; limits given as one law skip a bushing's joint too."""
    urdf = ARM.replace("</joint>", '<dynamics damping="0.1" friction="0.2"/></joint>')
    s = nd.from_urdf(urdf, damping=True, friction="coulomb", limits=nd.Hertz(1e5),
                     bushing={"slide": dict(stiffness=1e6, rotational_stiffness=1e4)})
    assert sorted(f.name for f in s.forces) == [
        "elbow_damping", "elbow_friction", "shoulder_damping", "shoulder_friction",
        "shoulder_limits", "slide"]
    assert {f.damping for f in s.forces if isinstance(f, nd.JointDamper)} == {0.1}
    # on a clearance joint: measured on its nominal hinge
    s = nd.from_urdf(urdf, damping="elbow", clearance={"elbow": dict(
        clearance=1e-4, radius=0.01, length=0.02)})
    (damper,) = s.forces
    assert damper.joint is s.gaps[0] and isinstance(damper.ideal_joint, nd.Revolute)


def test_command_line_loosens_a_urdf_model(tmp_path, capsys):
    """--clearance, --limits, --damping, --friction on the command line: the run's result
    holds the elements they name, and a clearance joint's orbit is drawn."""
    from nlpdyn.__main__ import main
    path, plot, save = tmp_path / "pendulum.urdf", tmp_path / "run.png", tmp_path / "run.npz"
    path.write_text(PENDULUM.replace('lower="-3" upper="3"', 'lower="-1" upper="1"').replace(
        "</joint>", '<dynamics damping="0.01" friction="0.02"/></joint>'))
    code = main([str(path), "--t-end", "0.02", "--quiet", "--plot", str(plot), "--save",
                 str(save), "--clearance", "shoulder=1e-4,radius=0.01,length=0.02",
                 "--limits", "hertz,stiffness=1e6", "--damping", "--friction", "elbow=coulomb"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "loosened: clearance=" in out and (tmp_path / "run_orbit.png").is_file()
    ledger = nd.Result.load(save).energy_ledger()
    for column in ("impact:shoulder", "work:elbow_limits", "work:shoulder_damping",
                   "work:elbow_damping", "work:elbow_friction"):
        assert column in ledger.columns, column
    assert "work:shoulder_friction" not in ledger.columns


def test_command_line_bushing_and_lugre(tmp_path, capsys):
    from nlpdyn.__main__ import main
    path, save = tmp_path / "arm.urdf", tmp_path / "arm.npz"
    path.write_text(ARM.replace("</joint>", '<dynamics friction="0.05"/></joint>'))
    code = main(["--t-end", "0.01", "--quiet", "--no-plot", "--save", str(save),
                 "--bushing", "slide,stiffness=1e4,rotational_stiffness=10:10:10",
                 "--friction", "elbow=lugre,sigma0=1e4,sigma1=1", "--damping", str(path)])
    assert code == 0, capsys.readouterr().out
    ledger = nd.Result.load(save).energy_ledger()
    assert "stored:slide" in ledger.columns and "work:elbow_friction" in ledger.columns
    assert "work:shoulder_damping" not in ledger.columns     # the file has no damping


@pytest.mark.parametrize("argv, messages", [
    (["--clearance", "shoulder", "--limits", "foo", "--bushing", "elbow=3"],
     ["argument --clearance: 'shoulder': give JOINT=C,radius=R,length=L",
      "argument --limits: 'foo': unknown contact law 'foo'",
      "argument --bushing: 'elbow=3': give JOINT,stiffness=K"]),
    (["--damping", "--damping", "elbow", "--friction", "elbow=lugre"],
     ["argument --damping: give it for every joint or joint by joint, not both",
      "argument --friction: 'elbow=lugre': lugre needs sigma0=S"]),
    (["--clearance", "elbow=1e-4,radius"], ["'radius' is not key=number"]),
])
def test_command_line_urdf_options_report_every_problem(tmp_path, capsys, argv, messages):
    from nlpdyn.__main__ import main
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM)
    with pytest.raises(SystemExit) as caught:
        main([str(path), "--no-plot", *argv])
    err = capsys.readouterr().err
    assert caught.value.code == 2
    for message in messages:
        assert message in err


def test_command_line_model_errors_name_the_joint(tmp_path, capsys):
    from nlpdyn.__main__ import main
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM)
    with pytest.raises(SystemExit) as caught:
        main([str(path), "--no-plot", "--damping", "elbow",
              "--limits", "nowhere=hertz,stiffness=1"])
    err = capsys.readouterr().err
    assert caught.value.code == 2
    assert "damping: joint 'elbow' has no <dynamics damping> in the file" in err
    assert "limits: no joint named 'nowhere'" in err
    with pytest.raises(SystemExit):
        main(["pendulum", "--friction", "coulomb"])
    assert "argument --friction: only for a .urdf model" in capsys.readouterr().err


def test_visuals_become_the_bodies_shapes():
    """<visual> box, cylinder and sphere in the link frame -> shapes in the body frame (the
    link's axes at the centre of mass), by hand: a quarter turn about Z swaps a box's x and
    y sizes, a cylinder's axis is the visual frame's Z; a mesh is not drawn."""
    urdf = """<robot name="r"><link name="base"/>
      <link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
        <visual><origin xyz="0.2 0 0" rpy="0 0 1.5707963267948966"/>
          <geometry><box size="0.4 0.05 0.03"/></geometry><material name="grey"/></visual>
        <visual><origin xyz="0 0 0" rpy="1.5707963267948966 0 0"/>
          <geometry><cylinder radius="0.02" length="0.06"/></geometry></visual>
        <visual><origin xyz="0.4 0 0"/><geometry><sphere radius="0.03"/></geometry></visual>
        <visual><geometry><mesh filename="package://nowhere/arm.stl"/></geometry></visual>
        <collision><geometry><box size="1 1 1"/></geometry></collision>
      </link>
      <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/>
        <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
    </robot>"""
    s = nd.from_urdf(urdf, configuration={"turn": 0.7})
    box, cylinder, sphere = s.body("arm").geometry
    assert isinstance(box, nd.Box) and isinstance(cylinder, nd.Cylinder)
    np.testing.assert_allclose(box.size, [0.05, 0.4, 0.03], atol=1e-15)
    np.testing.assert_allclose(box.offset, [0.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(cylinder.axis, [0, -1, 0], atol=1e-15)     # Rx(90 deg) e_z
    np.testing.assert_allclose(cylinder.offset, [-0.1, 0, 0], atol=1e-15)
    assert (cylinder.radius, cylinder.length, sphere.radius) == (0.02, 0.06, 0.03)
    np.testing.assert_allclose(sphere.offset, [0.3, 0, 0], atol=1e-15)
    from nlpdyn.geometry import describe
    assert [d["shape"] for d in describe(s)["bodies"]["arm"]] == ["box", "cylinder", "sphere"]
    # a mesh alone: the default drawing; a box turned by 30 degrees: left out, with a warning
    only_mesh = re.sub(r"<geometry><(box|cylinder|sphere) [^>]*/>",
                       '<geometry><mesh filename="a.stl"/>', urdf)
    assert nd.from_urdf(only_mesh).body("arm").geometry is None
    with pytest.warns(UserWarning, match="link 'arm': a <visual> box turned"):
        turned = nd.from_urdf(urdf.replace('rpy="0 0 1.5707963267948966"', 'rpy="0 0 0.5"'))
    assert len(turned.body("arm").geometry) == 2
    with pytest.raises(nd.ModelError, match="link 'arm': <sphere radius=\"big\">"):
        nd.from_urdf(urdf.replace('radius="0.03"', 'radius="big"'))
