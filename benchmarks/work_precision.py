"""Work-precision: error at t = 2 s against process CPU time, nlpdyn's two schemes against scipy
on minimal coordinates and MuJoCo (the ``peers`` extra), interleaved in one run.

Cases (all ideal joints, smooth motion):
- ``chain2``, ``chain4``: problems/chain.py released horizontal; error: the largest link-angle
  error (rad);
- ``top``: problems/free_top.py, torque-free tumbling; error: the body-frame angular velocity
  (rad/s);
- ``crank``: the IFToMM slider-crank (problems/slider_crank.py); error: the slider's x (m).

The reference of each case is DOP853 at rtol 1e-13 on minimal coordinates written here (link
angles; Euler's equations with Euler parameters; the crank angle, with the rod's and slider's
motion from the loop's closed-form kinematics), not with nlpdyn. nlpdyn and the crank reference
start from the same consistent state (the stepper's projection of Table 2's velocities).
Every configuration runs ``REPEATS`` times, the repeats interleaved; the CPU time is the
median, of the whole ``simulate()`` call (set-up included) or the whole integration.

    python benchmarks/work_precision.py            # table, and docs/work_precision.png
    python benchmarks/work_precision.py crank5     # the slider-crank over 5 s at h = 1e-3, 5e-4
"""
import sys
import time
import warnings
from pathlib import Path

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp

import nlpdyn as nd
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))                    # problems/: the repository root
from problems import chain, free_top, slider_crank  # noqa: E402

T_END = 2.0
REPEATS = 3
TARGETS = {"chain2": 1e-3, "chain4": 1e-3, "top": 1e-4, "crank": 1e-4}


# ---------------------------------------------------------------- minimal coordinates
def _rotation(p):
    e0, e = p[0], np.asarray(p[1:])
    skew = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
    return (2 * e0**2 - 1) * np.eye(3) + 2 * (np.outer(e, e) + e0 * skew)


def crank_model():
    """The slider-crank in its crank angle phi (about +X from Table 2's position): the rod
    runs from B on the crank to C on the X axis, its spin fixed by the universal joint's
    rod axis, which stays normal to X and to the rod. Returns (rhs, slider_x) as functions."""
    phi, rate = ca.SX.sym("phi"), ca.SX.sym("rate")
    pivot, R_c, L = slider_crank.CRANK_PIVOT, slider_crank.CRANK_LENGTH, slider_crank.ROD_LENGTH
    turn = ca.vertcat(ca.horzcat(1, 0, 0), ca.horzcat(0, ca.cos(phi), -ca.sin(phi)),
                      ca.horzcat(0, ca.sin(phi), ca.cos(phi)))
    B = pivot + turn @ ca.DM([0, 0, R_c])
    crank_centre = pivot + turn @ ca.DM([0, 0, 0.5 * R_c])
    x = B[0] + ca.sqrt(L**2 - B[1]**2 - B[2]**2)
    C = ca.vertcat(x, 0, 0)

    def frame(d):
        a2 = ca.cross(ca.DM([1, 0, 0]), d)
        a2 = a2 / ca.norm_2(a2)
        return ca.horzcat(d, a2, ca.cross(d, a2))

    d = (C - B) / L
    F0 = ca.Function("F0", [phi], [frame(d)])(0)
    R_rod = frame(d) @ F0.T @ ca.DM(_rotation(slider_crank.rod_orientation()))
    rod_centre = 0.5 * (B + C)

    def omega(R):           # global angular velocity per unit rate: vee(dR/dphi R^T)
        W = ca.jacobian(ca.vec(R), phi).reshape((3, 3)) @ R.T
        return ca.vertcat(W[2, 1], W[0, 2], W[1, 0])

    g = 9.81
    bodies = [(0.12, np.diag([1e-4, 1e-4, 1e-5]), crank_centre, turn),
              (0.5, np.diag([4e-4, 4e-3, 4e-3]), rod_centre, R_rod),
              (2.0, np.diag([1e-4, 1e-4, 1e-4]), C, ca.DM.eye(3))]
    mass, V = 0, 0
    for m, J, r, R in bodies:
        dr = ca.jacobian(r, phi)
        w_body = R.T @ omega(R)
        mass = mass + m * ca.dot(dr, dr) + w_body.T @ ca.DM(J) @ w_body
        V = V + m * g * r[2]
    accel = -(ca.jacobian(V, phi) + 0.5 * ca.jacobian(mass, phi) * rate**2) / mass
    f = ca.Function("crank_rhs", [phi, rate], [accel])
    slider = ca.Function("slider_x", [phi], [x])
    return (lambda t, s: [s[1], float(f(s[0], s[1]))]), (lambda p: float(slider(p)))


def crank_start_rate():
    """The crank's rate in the stepper's consistent start (Table 2 projected)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(nd.Stepper(slider_crank.build(), h=1e-3).v[3])


def problem(name):
    """(x0, rhs, error(res_or_state_at_T) for nlpdyn, error for a minimal state)."""
    if name.startswith("chain"):
        n = int(name[-1])
        return np.zeros(2 * n), chain.reference_rhs(n), n
    if name == "top":
        return np.r_[0.4, 3.0, 0.6, 1, 0, 0, 0], free_top.reference_rhs(), None
    rhs, _ = crank_model()
    return np.array([0.0, crank_start_rate()]), rhs, None


def reference(name):
    x0, rhs, _ = problem(name)
    return solve_ivp(rhs, (0, T_END), x0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]


def minimal_error(name, state, ref):
    if name.startswith("chain"):
        n = int(name[-1])
        return float(np.abs((state[:n] - ref[:n] + np.pi) % (2 * np.pi) - np.pi).max())
    if name == "top":
        return float(np.abs(state[:3] - ref[:3]).max())
    _, slider_x = crank_model()
    return abs(slider_x(state[0]) - slider_x(ref[0]))


# ---------------------------------------------------------------- the runs
def run_nlpdyn(name, scheme, h, ref):
    build = {"chain2": lambda: chain.build(2), "chain4": lambda: chain.build(4),
             "top": free_top.build, "crank": slider_crank.build}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tic = time.process_time()
        res = nd.simulate(build(), T_END, h, scheme=scheme, progress=False)
        cpu = time.process_time() - tic
    if name.startswith("chain"):
        return minimal_error(name, chain.link_angles(res.q[-1], int(name[-1])), ref), cpu
    if name == "top":
        return float(np.abs(res.angular_velocity("top")[-1] - ref[:3]).max()), cpu
    _, slider_x = crank_model()
    return abs(res.position("slider")[-1, 0] - slider_x(ref[0])), cpu


def run_scipy(name, method, rtol, ref):
    x0, rhs, _ = problem(name)
    tic = time.process_time()
    sol = solve_ivp(rhs, (0, T_END), x0, method=method, rtol=rtol, atol=rtol * 1e-3)
    cpu = time.process_time() - tic
    return minimal_error(name, sol.y[:, -1], ref), cpu


def mujoco_model(name, integrator, h):
    import mujoco
    if name.startswith("chain"):
        n = int(name[-1])
        transverse = chain.MASS * (3 * 0.005**2 + chain.LINK**2) / 12
        body = ""
        for k in range(n):
            body += (f'<body pos="{chain.LINK if k else 0} 0 0"><joint type="hinge" axis="0 0 1"/>'
                     f'<inertial pos="{chain.LINK / 2} 0 0" mass="{chain.MASS}" '
                     f'diaginertia="{0.5 * chain.MASS * 0.005**2} {transverse} {transverse}"/>')
        body += "</body>" * n
        gravity = "0 -9.81 0"
    else:
        body = ('<body><freejoint/><inertial pos="0 0 0" mass="2" diaginertia="'
                + " ".join(str(j) for j in free_top.INERTIA) + '"/></body>')
        gravity = "0 0 0"
    xml = (f'<mujoco><option timestep="{h}" gravity="{gravity}" integrator="{integrator}">'
           f'<flag energy="enable"/></option><worldbody>{body}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    if name == "top":
        data.qvel[:] = [0.1, -0.2, 0.05, 0.4, 3.0, 0.6]    # angular velocity in the body frame
    return mujoco, model, data


def run_mujoco(name, integrator, h, ref):
    mujoco, model, data = mujoco_model(name, integrator, h)
    steps = int(round(T_END / h))
    tic = time.process_time()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    cpu = time.process_time() - tic
    if name.startswith("chain"):
        n = int(name[-1])
        theta = np.cumsum(data.qpos[:n])                # relative hinge angles -> absolute
        return minimal_error(name, theta, ref), cpu
    return float(np.abs(data.qvel[3:] - ref[:3]).max()), cpu


def configurations(name):
    hs = (2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4)
    out = [("nlpdyn euler", h, run_nlpdyn, ("euler", h)) for h in hs]
    out += [("nlpdyn midpoint", h, run_nlpdyn, ("midpoint", h)) for h in hs]
    for method in ("DOP853", "Radau"):
        out += [(f"scipy {method}", rtol, run_scipy, (method, rtol))
                for rtol in (1e-4, 1e-6, 1e-8)]
    if name != "crank":
        try:
            import mujoco  # noqa: F401
            for integrator in ("Euler", "RK4"):
                out += [(f"MuJoCo {integrator}", h, run_mujoco, (integrator, h))
                        for h in (1e-3, 2.5e-4, 6.25e-5)]
        except ImportError:
            pass
    return out


def crank_five_seconds(hs=(1e-3, 5e-4)):
    """The README's main job: the slider-crank over 5 s, the slider's largest distance from
    the reference and the energy's range, per scheme and h."""
    x0, rhs, _ = problem("crank")
    _, slider_x = crank_model()
    print(f"{'slider-crank, 5 s':<18} {'h':>7} {'max |x - x_ref| m':>18} {'energy range':>13} "
          f"{'CPU s':>7}")
    for scheme in ("euler", "midpoint"):
        for h in hs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tic = time.process_time()
                res = nd.simulate(slider_crank.build(), 5.0, h, scheme=scheme, progress=False)
                cpu = time.process_time() - tic
            ref = solve_ivp(rhs, (0, 5.0), x0, method="DOP853", rtol=1e-13, atol=1e-14,
                            t_eval=res.t)
            x_ref = np.array([slider_x(p) for p in ref.y[0]])
            miss = np.abs(res.position("slider")[:, 0] - x_ref).max()
            print(f"{scheme:<18} {h:>7.3g} {miss:>18.3e} {np.ptp(res.energy) / res.energy[0]:>12.3%} "
                  f"{cpu:>7.2f}")


def main(cases=("chain2", "chain4", "top", "crank")):
    rows = []
    for name in cases:
        ref = reference(name)
        configs = configurations(name)
        cpu = {i: [] for i in range(len(configs))}
        errors = {}
        for repeat in range(REPEATS):
            order = range(len(configs)) if repeat % 2 == 0 else reversed(range(len(configs)))
            for i in order:
                label, parameter, runner, args = configs[i]
                error, seconds = runner(name, *args, ref)
                errors[i] = error
                cpu[i].append(seconds)
        for i, (label, parameter, _, _) in enumerate(configs):
            rows.append((name, label, parameter, errors[i], float(np.median(cpu[i]))))
    print(f"{'case':<7} {'method':<16} {'h / rtol':>9} {'error':>10} {'CPU s':>8}")
    for row in rows:
        print(f"{row[0]:<7} {row[1]:<16} {row[2]:>9.3g} {row[3]:>10.3e} {row[4]:>8.4f}")
    print()
    print("least CPU reaching the target error (interpolated in log-log between runs):")
    for name in cases:
        print(f"  {name} (target {TARGETS[name]:g}):")
        for label in dict.fromkeys(r[1] for r in rows if r[0] == name):
            mine = sorted([(r[3], r[4]) for r in rows if r[0] == name and r[1] == label],
                          key=lambda x: -x[0])
            print(f"    {label:<16} {_at_target(mine, TARGETS[name])}")
    _plot(rows, cases)


def _at_target(runs, target):
    """CPU at ``target`` error by log-log interpolation between the runs around it."""
    for (e1, c1), (e2, c2) in zip(runs, runs[1:]):
        if e1 >= target >= e2 and e1 > e2:
            f = np.log(e1 / target) / np.log(e1 / e2)
            return f"{np.exp(np.log(c1) + f * np.log(c2 / c1)):.4f} s"
    if runs and runs[0][0] <= target:
        return f"<= {runs[0][1]:.4f} s (every run)"
    return "not reached"


def _plot(rows, cases):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(cases), figsize=(4 * len(cases), 3.6))
    for ax, name in zip(np.atleast_1d(axes), cases):
        for label in dict.fromkeys(r[1] for r in rows if r[0] == name):
            pts = np.array([(r[4], r[3]) for r in rows if r[0] == name and r[1] == label])
            ax.loglog(pts[:, 0], pts[:, 1], "o-", ms=3, label=label)
        ax.axhline(TARGETS[name], color="0.6", lw=0.8, ls=":")
        ax.set_title(name)
        ax.set_xlabel("CPU s (whole run)")
    np.atleast_1d(axes)[0].set_ylabel("error at t = 2 s")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "work_precision.png", dpi=90)


if __name__ == "__main__":
    if sys.argv[1:] == ["crank5"]:
        crank_five_seconds()
    else:
        main(tuple(sys.argv[1:]) or ("chain2", "chain4", "top", "crank"))
