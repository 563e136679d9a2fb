"""Penalty-only systems as ODEs for scipy's integrators (the way seed 001 integrates them).

A system whose joints are all force elements (penalty clearance joints, bushings, contact
laws) has no constraint rows: M vdot = Q_A(t, q, v) - S, qdot = [rdot; 1/2 G(p)^T w']. This
module hands that ODE to a scipy ``OdeSolver`` (Radau, BDF, LSODA, RK45, ...) with the CasADi
Jacobian, keeps the elements' memory (impact velocities) up to date between accepted steps,
and returns a :class:`~nlpdyn.result.Result` like :func:`~nlpdyn.stepper.simulate` does.
It is the reference the per-step program is compared with, not the main engine.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from .fastcall import FastFunction, map_columns
from .progress import progress_bar
from .projection import normalise
from .result import Result, StepStats
from .rotations import G_matrix
from .system import ModelError, System

if TYPE_CHECKING:
    from .system import CompiledSystem

METHODS = ("Radau", "BDF", "LSODA", "RK45", "RK23", "DOP853")    # scipy.integrate's solvers

# Euler-parameter norm kept by a restoring term in pdot: (1 - |p|^2) p * NORM_GAIN (1/s)
NORM_GAIN = 10.0


def ode_functions(compiled: CompiledSystem) -> tuple[FastFunction, FastFunction]:
    """(rhs, jacobian) of x = [q; v] as FastFunctions of (t, x, z).

    Parameters
    ----------
    compiled : CompiledSystem
        A penalty-only system (no constraint rows).

    Returns
    -------
    rhs : FastFunction
        (t, x, z) -> xdot, shape (n_q + n_v,).
    jacobian : FastFunction
        (t, x, z) -> d xdot / dx, dense.

    Examples
    --------
    >>> import numpy as np
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> _ = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
    >>> cs = s.compile()
    >>> rhs, jac = ode_functions(cs)
    >>> q, v = cs.initial_state()
    >>> xdot = np.asarray(rhs(0.0, np.r_[q, v], np.zeros(0))).ravel()
    >>> xdot[7:10].tolist()                               # free fall
    [0.0, 0.0, -9.81]
    """
    cs = compiled
    q, v, t, z = cs.q_sym, cs.v_sym, cs.t_sym, cs.z_sym
    parts = []
    for k in range(cs.n_bodies):
        p = q[7 * k + 3:7 * k + 7]
        w = v[6 * k + 3:6 * k + 6]
        parts += [v[6 * k:6 * k + 3], 0.5 * G_matrix(p).T @ w + NORM_GAIN * (1 - ca.dot(p, p)) * p]
    qdot = ca.vertcat(*parts)
    vdot = ca.DM(np.linalg.inv(cs.M)) @ cs.forces(t, q, v, z)
    x = ca.vertcat(q, v)
    xdot = ca.vertcat(qdot, vdot)
    rhs = ca.Function("ode_rhs", [t, x, z], [xdot], ["t", "x", "z"], ["xdot"])
    jac = ca.Function("ode_jacobian", [t, x, z], [ca.densify(ca.jacobian(xdot, x))],
                      ["t", "x", "z"], ["J"])
    return FastFunction(rhs), FastFunction(jac)


def simulate_ode(system: System, t_end: float, method: str = "Radau", rtol: float = 1e-6,
                 atol: float = 1e-9, max_step: float = np.inf, first_step: float | None = None,
                 progress: bool | None = None, t0: float = 0.0) -> Result:
    """Integrate a penalty-only system with a scipy ODE solver.

    Parameters
    ----------
    system : System
        Bodies and force elements only (no ideal joints, drivers or clearance gaps).
    t_end : float
    method : str
        "Radau" or "BDF" (stiff, with the CasADi Jacobian), "LSODA", "RK45", "RK23", "DOP853".
    rtol, atol, max_step, first_step
        As in ``scipy.integrate.solve_ivp``.
    progress : bool or None
        tqdm progress bar (None: only on a terminal).
    t0 : float
        The start time (s).

    Returns
    -------
    Result
        One point per accepted step; ``stats.iterations`` holds the cumulative number of
        right-hand-side evaluations, ``info`` the solver's counters.

    Raises
    ------
    ModelError
        A system with constraints, an unknown method or an invalid time span.

    Examples
    --------
    A body on a linear bushing, started at 0.1 m/s, oscillates at sqrt(k / m) = 100 rad/s
    with an amplitude of 1 mm:

    >>> import numpy as np
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3), velocity=(0.1, 0, 0))
    >>> _ = s.add_force(nd.Bushing(s.ground, b, (0, 0, 0), stiffness=1e4))
    >>> res = nd.simulate_ode(s, np.pi / 200, progress=False)          # a quarter period
    >>> res.success, round(float(res.position("b")[-1, 0]) * 1e3, 3)
    (True, 1.0)
    """
    if method not in METHODS:
        raise ModelError([f"method must be one of {sorted(METHODS)}, got {method!r}"])
    cs = system.compile()
    if cs.n_eq or cs.n_gap:
        raise ModelError(["simulate_ode integrates penalty-only systems; this one has "
                          f"constraints {[r.name for r in cs.constraint_rows + cs.gap_rows]}"])
    if not (np.isfinite(t_end) and t_end > t0):
        raise ModelError([f"t_end must be finite and greater than t0 = {t0}, got {t_end}"])
    rhs, jac = ode_functions(cs)
    q0, v0 = cs.initial_state()
    x0 = np.r_[normalise(q0, cs.n_bodies), v0]
    memory = {"z": np.asarray(cs.history_start(t0, x0[:cs.nq], v0, cs.initial_history())).ravel(),
              "nfev": 0, "njev": 0}

    def fun(t, x):
        memory["nfev"] += 1
        return rhs(t, x, memory["z"])[0]

    def jacobian(t, x):
        memory["njev"] += 1
        return jac(t, x, memory["z"])[0]

    options = {"rtol": rtol, "atol": atol, "max_step": max_step}
    if first_step is not None:
        options["first_step"] = first_step
    if method in ("Radau", "BDF", "LSODA"):
        options["jac"] = jacobian
    import scipy.integrate      # 0.4 s to import: only this reference needs it
    solver = getattr(scipy.integrate, method)(fun, t0, x0, t_end, **options)
    nq = cs.nq
    ts, xs, zs, walls = [t0], [x0], [memory["z"]], []
    status, message = 0, "reached t_end"
    bar = progress_bar(progress, total=float(t_end - t0), unit="s",
                       bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
    tic = time.perf_counter()
    try:
        while solver.status == "running":
            msg = solver.step()
            if solver.status == "failed":
                status, message = -1, f"{method} failed at t = {solver.t:.9g}: {msg}"
                break
            x = solver.y.copy()
            memory["z"] = np.asarray(cs.history_next(solver.t, x[:nq], x[nq:], memory["z"])).ravel()
            walls.append(time.perf_counter() - tic)
            bar.update(solver.t - ts[-1])
            ts.append(solver.t)
            xs.append(x)
            zs.append(memory["z"])
    except KeyboardInterrupt:
        status, message = -1, f"interrupted at t = {solver.t:.9g}"
    finally:
        bar.close()
    return _ode_result(cs, method, np.array(ts), np.array(xs), np.array(zs), np.array(walls),
                       status, message, memory)


def _ode_result(cs, method, t, x, z, walls, status, message, counters):
    from .assembly import force_element_data, ode_ledger   # the stepper's accounting
    n = len(t) - 1
    q = x[:, :cs.nq].copy()
    for k in range(cs.n_bodies):       # report unit Euler parameters
        p = q[:, 7 * k + 3:7 * k + 7]
        q[:, 7 * k + 3:7 * k + 7] = p / np.linalg.norm(p, axis=1, keepdims=True)
    v = x[:, cs.nq:]
    h = np.diff(t)
    norm_error = np.array([max((abs(np.linalg.norm(x[i + 1, 7 * k + 3:7 * k + 7]) - 1)
                                for k in range(cs.n_bodies)), default=0.0) for i in range(n)])
    stats = StepStats(solver=np.full(n, method, dtype="U16"), status=np.full(n, "ok", dtype="U48"),
                      iterations=np.full(n, -1), wall_time=np.diff(np.r_[0.0, walls]),
                      eom_residual=np.zeros(n), constraint_violation=np.zeros(n),
                      norm_error=norm_error, min_gap=np.full(n, np.inf), complementarity=np.zeros(n),
                      retries=np.zeros(n, dtype=int), projection_change=np.zeros(n),
                      gap_iterations=np.zeros(n, dtype=int), contact_changed=np.zeros(n, dtype=bool),
                      contact_scheme=np.full(n, "", dtype="U16"),
                      contact_fallback=np.zeros(n, dtype=bool), contact_error=np.zeros(n),
                      projection_energy=np.zeros(n))
    kin = map_columns(cs.kinetic, v.T).ravel()
    pot = map_columns(cs.potential, t[None, :], q.T, z.T).ravel()
    wrenches, work, element_pot, Q, Q_V = force_element_data(cs, t, q, v, z, h)
    # between output points the works are quadratures (h Q . v_bar): the ledger's residual is
    # their quadrature error and the integrator's, not a time-stepping scheme's
    ledger = ode_ledger(cs, t, q, v, h, Q, Q_V, element_pot)
    info = {"method": method, "nfev": counters["nfev"], "njev": counters["njev"],
            "n_steps": n}
    force_elements = {el.name: [b.name for b in el.bodies] for el in cs.force_elements}
    return Result(t, q, v, h, kin + pot, kin, pot, stats, np.zeros((n, 0)), np.zeros((n, 0)),
                  np.zeros((len(t), 0)), [b.name for b in cs.bodies], {}, {}, wrenches,
                  status == 0, status, message, None, info, {}, {}, force_elements, work,
                  element_pot, ledger)
