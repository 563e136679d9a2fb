"""Work-precision: error at t = 2 s against process CPU time, nlpdyn's two schemes against scipy
on minimal coordinates and MuJoCo (the ``peers`` extra), interleaved in one run.

Cases (all ideal joints, smooth motion):
- ``chain2``, ``chain4``: problems/chain.py released horizontal; error: the largest link-angle
  error (rad);
- ``top``: problems/free_top.py, torque-free tumbling; error: the body-frame angular velocity
  (rad/s);
- ``crank``: the IFToMM slider-crank (problems/slider_crank.py); error: the slider's x (m).

The reference of each case is DOP853 at rtol 1e-13 on minimal coordinates written without
nlpdyn (link angles, ``problems.chain.reference_rhs``; Euler's equations with Euler parameters,
``problems.free_top.reference_rhs``; the crank angle, with the rod's and slider's motion from
the loop's closed-form kinematics, ``problems.slider_crank.reference_model``). nlpdyn and the crank reference
start from the same consistent state (the stepper's projection of Table 2's velocities).
Every configuration runs ``REPEATS`` times, the repeats interleaved; the CPU time is the
median, of the whole ``simulate()`` call (set-up included) or the whole integration.

    python benchmarks/work_precision.py            # table, and docs/work_precision.png
    python benchmarks/work_precision.py crank5     # the slider-crank over 5 s at h = 1e-3, 5e-4
    python benchmarks/work_precision.py rtol       # error-controlled h against fixed h

``rtol`` runs each case with ``rtol`` = 1e-3 ... 1e-6 (h within (1e-6, 1e-2)) and the fixed-h
midpoint runs, and gives each rtol run's error in units of rtol, its steps and solves, and the
steps a fixed h takes to the same error (log-log interpolation between the fixed runs).
"""
import sys
import time
import warnings
from pathlib import Path

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
def crank_start_rate():
    """The crank's rate in the stepper's consistent start (Table 2 projected)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(slider_crank.consistent_start()[1][3])


def problem(name):
    """(x0, rhs, error(res_or_state_at_T) for nlpdyn, error for a minimal state)."""
    if name.startswith("chain"):
        n = int(name[-1])
        return np.zeros(2 * n), chain.reference_rhs(n), n
    if name == "top":
        return np.r_[0.4, 3.0, 0.6, 1, 0, 0, 0], free_top.reference_rhs(), None
    rhs, _ = slider_crank.reference_model()
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
    _, slider_x = slider_crank.reference_model()
    return abs(slider_x(state[0]) - slider_x(ref[0]))


# ---------------------------------------------------------------- the runs
def run_nlpdyn(name, scheme, h, ref, **options):
    return _nlpdyn_error(name, ref, *_nlpdyn_run(name, scheme, h, **options))


def _nlpdyn_run(name, scheme, h, **options):
    build = {"chain2": lambda: chain.build(2), "chain4": lambda: chain.build(4),
             "top": free_top.build, "crank": slider_crank.build}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tic = time.process_time()
        res = nd.simulate(build(), T_END, h, scheme=scheme, progress=False, **options)
        return res, time.process_time() - tic


def _nlpdyn_error(name, ref, res, cpu):
    if name.startswith("chain"):
        return minimal_error(name, chain.link_angles(res.q[-1], int(name[-1])), ref), cpu
    if name == "top":
        return float(np.abs(res.angular_velocity("top")[-1] - ref[:3]).max()), cpu
    _, slider_x = slider_crank.reference_model()
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
    _, slider_x = slider_crank.reference_model()
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


def error_control(cases=("chain2", "chain4", "top", "crank"), rtols=(1e-3, 1e-4, 1e-5, 1e-6)):
    """Error-controlled h (``rtol``) against the fixed-h midpoint step: the error at t = 2 s
    and the largest over the run (against the reference's dense output), steps, solves, CPU,
    and the steps of a fixed h at the same largest error."""
    print(f"{'case':<7} {'run':<14} {'error 2 s':>10} {'/ rtol':>7} {'max error':>10} "
          f"{'/ rtol':>7} {'steps':>7} {'solves':>7} {'CPU s':>7} {'fixed h, same max':>18}")
    for name in cases:
        ref = reference(name)
        dense = _dense_reference(name)
        fixed = []
        for h in (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5):
            res, cpu = _nlpdyn_run(name, "midpoint", h)
            fixed.append((_nlpdyn_error(name, ref, res, cpu)[0], _largest_error(name, dense, res),
                          len(res.t) - 1, cpu))
        for error, largest, steps, cpu in fixed:
            print(f"{name:<7} {'h = %.3g' % (T_END / steps):<14} {error:>10.3e} {'':>7} "
                  f"{largest:>10.3e} {'':>7} {steps:>7} {steps:>7} {cpu:>7.2f}")
        for rtol in rtols:
            res, cpu = _nlpdyn_run(name, "midpoint", (1e-6, 1e-2), rtol=rtol)
            error = _nlpdyn_error(name, ref, res, cpu)[0]
            largest = _largest_error(name, dense, res)
            record = res.info["error_control"]
            print(f"{name:<7} {'rtol = %.0e' % rtol:<14} {error:>10.3e} {error / rtol:>7.2f} "
                  f"{largest:>10.3e} {largest / rtol:>7.2f} {len(res.t) - 1:>7} "
                  f"{record['solves']:>7} {cpu:>7.2f} {_steps_at(fixed, largest):>18}")


def _dense_reference(name):
    x0, rhs, _ = problem(name)
    return solve_ivp(rhs, (0, T_END), x0, method="DOP853", rtol=1e-13, atol=1e-14,
                     dense_output=True).sol


def _largest_error(name, dense, res):
    """The case's error (``minimal_error``'s quantity) at every step, largest."""
    ref = dense(res.t)
    if name.startswith("chain"):
        n = int(name[-1])
        angles = np.array([chain.link_angles(q, n) for q in res.q])
        return float(np.abs((angles - ref[:n].T + np.pi) % (2 * np.pi) - np.pi).max())
    if name == "top":
        return float(np.abs(res.angular_velocity("top") - ref[:3].T).max())
    _, slider_x = slider_crank.reference_model()
    return float(np.abs(res.position("slider")[:, 0] - [slider_x(p) for p in ref[0]]).max())


def _steps_at(fixed, error):
    """Steps of a fixed h reaching the largest error ``error`` (log-log interpolation)."""
    runs = sorted(((e, n) for _, e, n, _ in fixed), key=lambda x: -x[0])
    for (e1, n1), (e2, n2) in zip(runs, runs[1:]):
        if e1 >= error >= e2 and e1 > e2:
            f = np.log(e1 / error) / np.log(e1 / e2)
            return f"{np.exp(np.log(n1) + f * np.log(n2 / n1)):.0f}"
    return "out of range"


if __name__ == "__main__":
    if sys.argv[1:] == ["crank5"]:
        crank_five_seconds()
    elif sys.argv[1:2] == ["rtol"]:
        error_control(tuple(sys.argv[2:]) or ("chain2", "chain4", "top", "crank"))
    else:
        main(tuple(sys.argv[1:]) or ("chain2", "chain4", "top", "crank"))
