"""A Result from the accepted steps: reactions, contact data, element work, the energy ledger.

Every step's kinetic energy balance is exact: with v_bar = (v_start + v_end)/2,

    T_end - T_start = (M (v_end - v_start)) . v_bar
                    = sum over forces and impulses of (impulse . v_bar) + (EOM residual . v_bar),

so the work of each agent over a step is its impulse (h Q for a force element as the step
evaluated it, P = h mu along the step's own row gradients for joints and contacts) times the
step's mean velocity. The ledger (``Result.energy_ledger``) adds these up; what no agent did is
the residual: the explicit gyroscopic term, the difference between the conservative forces'
work and the change of their stored energy, the post-step projection and the solver's
tolerance. Everything here is numpy on arrays the stepper kept, plus vectorised (mapped)
CasADi evaluations of the compiled system.
"""
from __future__ import annotations

import numpy as np

from .fastcall import map_columns
from .forces.elements import Gravity
from .geometry import describe
from .joints.clearance import ClearanceJoint
from .joints.excitation import KinematicExcitation
from .joints.ideal import Joint, Universal
from .result import Result, StepStats
from .rotations import rotation_matrices

RESIDUAL_PARTS = ("gyroscopic", "potential", "projection", "solver")


class LedgerTotals:
    """The energy ledger of a run, one accepted step at a time.

    ``add`` takes a step's increments as the step program computes them (``StepProgram.
    ledger_layout``: every agent's impulse times the step's mean velocity), the step's impact
    flags per gap row and the potential energy the post-step projection changed; it only
    stores them (the stepper's hot path). ``rows(steps)`` gives the cumulative ledger after
    the given step counts (the ``Result.energy_ledger`` columns after the energies, vectorised
    over the run), ``row()`` after the last step; ``element_work(steps)`` each force
    element's total work (``Result.dissipated``)."""

    def __init__(self, cs):
        self.cs = cs
        self.n_el, self.n_joint = len(cs.force_elements), len(cs.constraint_rows)
        self.gap_owner = np.repeat(np.arange(len(cs.gap_rows)), [r.size for r in cs.gap_rows])
        self._steps = []

    def add(self, increments, impact, projection=0.0):
        self._steps.append((increments, impact, projection))

    def __len__(self):
        return len(self._steps)

    def truncate(self, n_steps):
        """Forget the steps after the first ``n_steps`` (an interrupted step)."""
        del self._steps[n_steps:]

    def _cumulative(self, steps):
        """Per column group, cumulative sums after each of ``steps`` (0: before any step)."""
        cs, n, nj, ng = self.cs, self.n_el, self.n_joint, self.cs.n_gap
        k = len(self._steps)
        inc = np.zeros((k + 1, 2 * n + nj + 2 * ng + 3))
        impact = np.zeros((k + 1, ng), dtype=bool)
        projection = np.zeros(k + 1)
        if k:
            inc[1:] = np.array([s[0] for s in self._steps])
            impact[1:] = np.array([s[1] for s in self._steps]).reshape(k, ng)
            projection[1:] = [s[2] for s in self._steps]
        gaps = inc[:, 2 * n + nj:2 * n + nj + ng]
        friction = inc[:, 2 * n + nj + ng:2 * n + nj + 2 * ng]
        groups = len(cs.gap_rows)
        to_element = np.zeros((ng, groups))
        to_element[np.arange(ng), self.gap_owner] = 1.0
        steps = np.asarray(steps, dtype=int)
        total = lambda x: np.cumsum(x, axis=0)[steps]                       # noqa: E731
        return {"applied": total(inc[:, :n]), "conservative": total(inc[:, n:2 * n]),
                "joints": total(inc[:, 2 * n:2 * n + nj]),
                "impact": total(np.where(impact, gaps, 0.0) @ to_element),
                "contact": total(np.where(impact, 0.0, gaps) @ to_element),
                "friction": total(friction @ to_element),
                "gyroscopic": total(inc[:, -3]),
                # the step's own "potential" ends at the unprojected position; the
                # projection follows
                "potential": total(inc[:, -2]), "projection": total(projection),
                "solver": total(inc[:, -1])}

    def rows(self, steps) -> dict:
        """Column name -> cumulative values after each of ``steps``."""
        cs, c = self.cs, self._cumulative(steps)
        out = {f"work:{el.name}": c["applied"][:, j] - c["conservative"][:, j]
               for j, el in enumerate(cs.force_elements) if not isinstance(el, Gravity)}
        out.update({f"work:{r.name}": c["joints"][:, j] for j, r in enumerate(cs.constraint_rows)})
        for j, r in enumerate(cs.gap_rows):
            out[f"impact:{r.name}"], out[f"contact:{r.name}"] = c["impact"][:, j], c["contact"][:, j]
            if r.element.friction > 0:
                out[f"friction:{r.name}"] = c["friction"][:, j]
        out["residual"] = sum(c[p] for p in RESIDUAL_PARTS)
        out.update({f"residual:{p}": c[p] for p in RESIDUAL_PARTS})
        return out

    def row(self) -> dict:
        """The ledger after the last step (column name -> J)."""
        return {name: float(col[0]) for name, col in self.rows([len(self._steps)]).items()}

    def element_work(self, steps) -> dict:
        c = self._cumulative(steps)
        return {el.name: c["applied"][:, j] for j, el in enumerate(self.cs.force_elements)}


class Recorder:
    """What ``simulate`` keeps of a run: the output steps (every ``every``-th accepted step and
    the last one), each with the state it started from, the ledger's running totals there,
    and counters over every step."""

    STATS = ("iterations", "wall_time", "eom_residual", "constraint_violation", "norm_error",
             "min_gap", "complementarity", "retries", "projection_change", "gap_iterations",
             "contact_changed", "contact_fallback", "contact_error", "projection_energy")

    def __init__(self, stepper, every=1):
        if not (isinstance(every, (int, np.integer)) and every >= 1):
            raise ValueError(f"output_every must be a whole number >= 1, got {every!r}")
        self.every = int(every)
        self.ts, self.qs, self.vs, self.zs = [stepper.t], [stepper.q], [stepper.v], [stepper.z]
        self.gaps, self.starts, self.infos = [stepper.gaps], [], []
        self.kept_steps = [len(stepper.ledger)]     # ledger step counts at the kept points
        self.n_steps, self.pending = 0, None
        self.run = {"n_steps": 0, "n_retried_steps": 0, "n_contact_fallback_steps": 0,
                    "wall_time_total": 0.0, "max_eom_residual": 0.0,
                    "max_constraint_violation": 0.0, "max_norm_error": 0.0,
                    "min_gap": np.inf, "max_contact_error": 0.0}

    def step(self, stepper, start, info):
        """After each accepted step; ``start`` = (t, q, v, z) the step started from."""
        self.n_steps += 1
        run = self.run
        run["n_steps"] += 1
        run["n_retried_steps"] += bool(info.retries)
        run["n_contact_fallback_steps"] += bool(info.contact_fallback)
        run["wall_time_total"] += info.wall_time
        for key, value in (("max_eom_residual", info.eom_residual),
                           ("max_constraint_violation", info.constraint_violation),
                           ("max_norm_error", info.norm_error),
                           ("max_contact_error", info.contact_error)):
            run[key] = max(run[key], value)
        run["min_gap"] = min(run["min_gap"], info.min_gap)
        if self.n_steps % self.every == 0:
            self._record(stepper, start, info)
            self.pending = None
        else:
            self.pending = (start, info)

    def drop_after(self, stepper):
        """Forget what was recorded after ``stepper``'s time (its state restored after an
        interrupted step); the counters follow its ledger, which counts every step."""
        while len(self.ts) > 1 and self.ts[-1] > stepper.t:
            for kept in (self.ts, self.qs, self.vs, self.zs, self.gaps, self.starts, self.infos,
                         self.kept_steps):
                kept.pop()
        if self.pending is not None and self.pending[0][0] >= stepper.t:
            self.pending = None
        self.n_steps = self.run["n_steps"] = len(stepper.ledger)

    def finish(self, stepper):
        """After the last step: record it if the stride skipped it."""
        if self.pending is not None:
            self._record(stepper, *self.pending)
            self.pending = None

    def _record(self, stepper, start, info):
        self.ts.append(stepper.t)
        self.qs.append(stepper.q)
        self.vs.append(stepper.v)
        self.zs.append(stepper.z)
        self.gaps.append(info.gaps)
        self.starts.append(start)
        self.infos.append(info)
        self.kept_steps.append(len(stepper.ledger))


def build_result(stepper, recorder: Recorder, status, message) -> Result:
    """The Result of a run of ``stepper`` from what ``recorder`` kept."""
    cs, rec = stepper.cs, recorder
    t = np.asarray(rec.ts)
    q = np.asarray(rec.qs).reshape(len(t), cs.nq)
    v = np.asarray(rec.vs).reshape(len(t), cs.nv)
    infos = rec.infos
    n = len(infos)
    stats = StepStats(
        solver=np.array([i.solver for i in infos], dtype="U16"),
        status=np.array([i.status for i in infos], dtype="U48"),
        contact_scheme=np.array([i.contact_scheme for i in infos], dtype="U16"),
        **{f: np.array([getattr(i, f) for i in infos],
                       dtype=int if f in ("iterations", "retries", "gap_iterations") else
                       bool if f in ("contact_changed", "contact_fallback") else float)
           for f in Recorder.STATS})
    mu = np.array([i.mu for i in infos]).reshape(n, cs.n_eq)
    lam = np.array([i.lam for i in infos]).reshape(n, cs.n_gap)
    gap_jac = np.array([i.contact_jacobian for i in infos]).reshape(n, cs.n_gap, 12)
    gaps = np.asarray(rec.gaps).reshape(len(t), cs.n_gap)
    h = np.array([i.h for i in infos], dtype=float)
    start_t = np.array([s[0] for s in rec.starts], dtype=float)
    start_q = np.asarray([s[1] for s in rec.starts]).reshape(n, cs.nq)
    start_v = np.asarray([s[2] for s in rec.starts]).reshape(n, cs.nv)
    start_z = np.asarray([s[3] for s in rec.starts]).reshape(n, cs.n_memory)
    zs = np.asarray(rec.zs).reshape(len(t), cs.n_memory)
    # where each step took its forces and joint rows: its start, or (the midpoint scheme)
    # half a step in, with the velocity its explicit forces saw
    midpoint = bool(n) and infos[0].predictor is not None
    base_t, base_q, base_v = start_t, start_q, start_v
    if midpoint:
        memory = np.c_[start_z, [i.predictor for i in infos]]
        base = map_columns(stepper.program.base_point.function, start_q.T, start_v.T,
                           start_t[None, :], h[None, :], memory.T)
        base_t = base[0].ravel()
        base_q, base_v = base[1].T, base[2].T
    z_el = zs[:, :cs.n_history].T       # the elements' memory at each output point
    kin = map_columns(cs.kinetic, v.T).ravel()
    pot = map_columns(cs.potential, t[None, :], q.T, z_el).ravel()

    joint_local = _joint_forces(stepper.program.joint_forces, cs, base_q, base_t, mu)
    gap_local = {r.name: np.einsum("kjc,kj->kc", gap_jac[:, r.start:r.stop], lam[:, r.start:r.stop])
                 for r in cs.gap_rows}
    friction_vectors = _friction_data(cs, infos)
    friction_local = _friction_local(cs, base_q, friction_vectors)
    local = {**joint_local, **{k: g + friction_local.get(k, 0.0) for k, g in gap_local.items()}}
    wrenches = {r.name: _wrenches_from_local(r.element, base_q, local[r.name],
                                             r.element.reaction_point())
                for r in [*cs.constraint_rows, *cs.gap_rows]}
    contact_points, contact_vectors = _contact_data(cs, gap_jac, q, lam)
    if midpoint:
        wrenches.update(_midpoint_force_wrenches(cs, start_t, start_q, start_v, base_q, base_v,
                                                 start_z, h, q[1:], v[1:]))
    else:
        wrenches.update(_force_wrenches(cs, start_t, start_q, start_v, start_z, h, q[1:], v[1:],
                                        zs[1:]))
    element_pot = dict(zip([el.name for el in cs.force_elements],
                           map_columns(cs.element_potentials, t[None, :], q.T, z_el)
                           .reshape(len(cs.force_elements), len(t))))
    ledger = stepper.ledger.rows(rec.kept_steps)
    carried = zs[:, cs.carry_energy_slot] if cs.n_carry else np.zeros(len(t))
    if cs.n_carry:
        ledger["carried"] = carried
    work = stepper.ledger.element_work(rec.kept_steps)
    rows = {r.name: (r.start, r.stop, [b.name for b in r.element.bodies]) for r in cs.constraint_rows}
    gap_rows = {r.name: (r.start, r.stop, [b.name for b in r.element.bodies]) for r in cs.gap_rows}
    info = {"scheme": stepper.settings.scheme, "step_control": stepper.step_control,
            "solver": stepper.solver,
            "form": stepper.settings.form, "h_min": stepper.h_min, "h_max": stepper.h_max,
            "program_builds": stepper.program.build_count, "contact": stepper.contact.name,
            "contact_fallback": stepper.settings.contact_fallback,
            "impact_gap": stepper.settings.gap_tol, "output_every": rec.every,
            "redundant_rows": [list(r) for r in stepper.redundant_rows],
            "run": dict(rec.run), "joints": joint_descriptions(cs),
            "geometry": describe(stepper.system)}
    if stepper.step_control == "error":
        record = stepper.error_control
        info["error_control"] = {
            "rtol": stepper.settings.rtol, "atol": stepper.settings.atol,
            "span": stepper.span, "rejected_pairs": record["rejected_pairs"],
            "solves": record["solves"],
            "h_range": ([float(record["smallest_h"]), float(record["largest_h"])]
                        if np.isfinite(record["smallest_h"]) else None),
            "largest_error": float(record["largest_error"])}
    if stepper.resolves_impacts:
        record = stepper.resolution
        info["contact_resolution"] = {
            "shortened_steps": record["shortened_steps"],
            "smallest_h": (float(record["smallest_h"]) if record["shortened_steps"] else None)}
    jit = stepper.program.jit
    if jit is not None:
        jit.poll()
        info["jit"] = dict(jit.record, mode=jit.mode, building=jit.building,
                           queued=[entry.name for entry in jit.pending])
    notes = stepper.notes()
    if notes:
        info["warnings"] = notes
    force_elements = {el.name: [b.name for b in el.bodies] for el in cs.force_elements}
    memory = {r.name: zs[:, r.start:r.stop] for r in cs.history_rows}
    friction = (map_columns(cs.friction_force, t[None, 1:], q[1:].T, v[1:].T,
                            start_z[:, :cs.n_history].T).reshape(len(cs.friction_rows), n)
                if n else np.zeros((0, 0)))
    friction = {r.name: friction[j] for j, r in enumerate(cs.friction_rows)}
    # base_q: where each step's reactions act (its start, or its midpoint)
    return Result(t, q, v, h, kin + pot + carried, kin, pot, stats, mu, lam, gaps,
                  [b.name for b in cs.bodies], rows, gap_rows, wrenches, status == 0, status,
                  message, stepper.initial_projection, info, contact_points, contact_vectors,
                  force_elements, work, element_pot, ledger, memory, friction,
                  friction_vectors, base_q)


def joint_descriptions(cs) -> dict:
    """Per ideal or clearance joint, what ``Result.joint_modes`` and ``joint_forces`` need
    (JSON-ready):
    its bodies, its frame's axes (columns) and the child's attachment point in the parent's
    and the child's body frames, its modes at the initial configuration, and the kinematic
    excitations (drivers included) acting on it."""
    excitations = {}
    for r in cs.constraint_rows:
        el = r.element
        if isinstance(el, KinematicExcitation):
            excitations.setdefault(id(el.joint), []).append(el)
    out = {}
    for r in [*cs.constraint_rows, *cs.gap_rows]:
        el = r.element
        if not isinstance(el, (Joint, ClearanceJoint)):
            continue
        parent, child = el.bodies
        modes = el.modes()
        found = excitations.get(id(el), [])
        out[el.name] = {
            "parent": parent.name, "child": child.name,
            "frame": parent.local_vector(el.frame()).tolist(),
            "child_point": child.local_point(el.point).tolist(),
            "free": modes.free.tolist(), "constrained": modes.constrained.tolist(),
            "excitations": [[x.name, x.reaction_point() is not None] for x in found],
            "excited_modes": [int(x.mode) for x in found]}
        if isinstance(el, Universal):
            out[el.name]["child_axis"] = child.local_vector(el.axis2).tolist()
    return out


def _force_wrenches(cs, t0, q0, v0, z0, h, q1, v1, z1):
    """Per force element: its wrenches in each output step as the step exerted them (its
    impulse over the step divided by h: ``CompiledSystem.step_forces``; z0, z1 the memory at
    the step's start and end)."""
    n, n_el = len(t0), len(cs.force_elements)
    if n == 0:
        return {el.name: _wrenches_from_generalised(el, q0, np.zeros((0, cs.nv)), None)
                for el in cs.force_elements}
    Q = map_columns(cs.recorded_step_forces, t0[None, :], h[None, :], q0.T, v0.T, q1.T, v1.T,
                    z0.T, z1.T).reshape(
        cs.nv, n_el, n, order="F").transpose(1, 2, 0)                       # (n_el, n, nv)
    return {el.name: _wrenches_from_generalised(el, q0, Q[j], None)
            for j, el in enumerate(cs.force_elements)}


def _midpoint_force_wrenches(cs, t0, q0, v0, qm, vf, z0, h, q1, v1):
    """``_force_wrenches`` of midpoint steps (``CompiledSystem.step_forces_midpoint``;
    qm, vf: each step's midpoint and the velocity its explicit forces saw)."""
    n, n_el = len(t0), len(cs.force_elements)
    Q = map_columns(cs.recorded_step_forces_midpoint, t0[None, :], h[None, :], q0.T, v0.T,
                    qm.T, vf.T, q1.T, v1.T, z0.T).reshape(
        cs.nv, n_el, n, order="F").transpose(1, 2, 0)                       # (n_el, n, nv)
    return {el.name: _wrenches_from_generalised(el, qm, Q[j], None)
            for j, el in enumerate(cs.force_elements)}


def force_element_data(cs, t, q, v, z, h):
    """Per force element: wrenches as each step used them (start of step if explicit, end if
    implicit), the work done on the bodies (h Q . v_bar summed), the stored energy, and the
    generalised forces Q and their conservative parts Q_V = -dV/dq (each (n_el, n, nv))."""
    n, n_el = len(t) - 1, len(cs.force_elements)
    pot = map_columns(cs.element_potentials, t[None, :], q.T, z.T).reshape(n_el, len(t))
    wrenches, work, element_pot = {}, {}, {}
    if n == 0:
        Q = Q_V = np.zeros((n_el, 0, cs.nv))
    else:
        implicit = np.array([el.evaluation != "explicit" for el in cs.force_elements])[None, :, None]
        F = cs.element_forces
        zt = z[:-1].T
        Q_start = map_columns(F, t[None, :-1], q[:-1].T, v[:-1].T, zt).reshape(cs.nv, n_el, n,
                                                                               order="F")
        Q_end = map_columns(F, t[None, 1:], q[1:].T, v[1:].T, zt).reshape(cs.nv, n_el, n,
                                                                          order="F")
        Q = np.where(implicit, Q_end, Q_start).transpose(1, 2, 0)               # (n_el, n, nv)
        FV = cs.element_conservative_forces
        V_start = map_columns(FV, t[None, :-1], q[:-1].T, zt).reshape(cs.nv, n_el, n, order="F")
        V_end = map_columns(FV, t[None, 1:], q[1:].T, zt).reshape(cs.nv, n_el, n, order="F")
        Q_V = np.where(implicit, V_end, V_start).transpose(1, 2, 0)
    v_bar = 0.5 * (v[:-1] + v[1:])
    for j, el in enumerate(cs.force_elements):
        work[el.name] = _cumulative(h * np.einsum("kv,kv->k", Q[j], v_bar))
        element_pot[el.name] = pot[j]
        wrenches[el.name] = _wrenches_from_generalised(el, q[:-1], Q[j], None)
    return wrenches, work, element_pot, Q, Q_V


def ode_ledger(cs, t, q, v, h, Q, Q_V, element_pot):
    """The energy ledger of a ``simulate_ode`` result (force elements only): cumulative
    columns (n_points each) in the ledger's order, the works as quadratures h Q . v_bar
    between output points."""
    v_bar = 0.5 * (v[:-1] + v[1:])
    cols = {}
    applied = np.zeros(len(h))
    for j, el in enumerate(cs.force_elements):
        applied += h * np.einsum("kv,kv->k", Q[j], v_bar)
        if not isinstance(el, Gravity):
            cols[f"work:{el.name}"] = h * np.einsum("kv,kv->k", Q[j] - Q_V[j], v_bar)
    S = map_columns(cs.gyroscopic, v[:-1].T).T if len(h) else np.zeros((0, cs.nv))
    gyroscopic = -h * np.einsum("kv,kv->k", S, v_bar)
    kinetic = map_columns(cs.kinetic, v.T).ravel()
    stored = sum(element_pot.values())
    conservative = h * np.einsum("jkv,kv->k", Q_V, v_bar) if len(h) else np.zeros(0)
    parts = {"gyroscopic": gyroscopic, "potential": conservative + np.diff(stored),
             "projection": np.zeros(len(h)),
             # what the quadrature leaves: M (v_end - v_start) minus every force's impulse
             "solver": np.diff(kinetic) - applied - gyroscopic}
    cols["residual"] = sum(parts.values())
    for part in RESIDUAL_PARTS:
        cols[f"residual:{part}"] = parts[part]
    return {k: _cumulative(val) for k, val in cols.items()}


def _cumulative(step_values):
    return np.r_[0.0, np.cumsum(step_values)]


def _wrenches_from_generalised(el, q, gen, point):
    """[force (global), moment about ``point`` (global; None: about each CoM)] per body of
    ``el`` from its generalised force ``gen`` (n, nv); the ground gets minus the sum."""
    n = len(q)
    res = np.zeros((n, len(el.bodies), 6))
    moving = [j for j, b in enumerate(el.bodies) if not b.is_ground]
    for j in moving:
        b = el.bodies[j]
        k = b.index
        A = rotation_matrices(q[:, 7 * k + 3:7 * k + 7]) if n else np.zeros((0, 3, 3))
        f = gen[:, 6 * k:6 * k + 3]
        n_cm = np.einsum("nij,nj->ni", A, gen[:, 6 * k + 3:6 * k + 6])
        if point is not None:
            arm = np.einsum("nij,j->ni", A, b.local_point(point))   # point - CoM
            n_cm = n_cm - np.cross(arm, f)
        res[:, j, :3], res[:, j, 3:] = f, n_cm
    for j, b in enumerate(el.bodies):
        if b.is_ground:
            res[:, j] = -res[:, moving].sum(axis=1)
            if point is None:
                res[:, j, 3:] = np.nan     # moments about the CoMs do not add up
    return res


def _joint_forces(fn, cs, q, t, mu):
    """Per bilateral element: its generalised force per step on its bodies' velocities,
    (n, 12), from ``fn`` (q, t, mu) -> (12, n_elements) mapped over the steps."""
    n = len(q)
    if n == 0 or not cs.constraint_rows:
        return {r.name: np.zeros((n, 12)) for r in cs.constraint_rows}
    Q = map_columns(fn, q.T, t[None, :], mu.T).reshape(12, len(cs.constraint_rows), n,
                                                       order="F")
    return {r.name: Q[:, j, :].T for j, r in enumerate(cs.constraint_rows)}


def _wrenches_from_local(el, q, local, point):
    """``_wrenches_from_generalised`` for a generalised force given on the velocities of the
    element's first two bodies, (n, 12) (the elements with constraint rows)."""
    gen = np.zeros((len(q), 6 * (max((b.index for b in el.bodies if not b.is_ground),
                                        default=-1) + 1)))
    for j, b in enumerate(el.bodies[:2]):
        if not b.is_ground:
            gen[:, 6 * b.index:6 * b.index + 6] += local[:, 6 * j:6 * j + 6]
    return _wrenches_from_generalised(el, q, gen, point)


def _contact_data(cs, gap_jac, q, lam):
    """Per gap element: contact points (n+1, n_gaps, 3) and force vectors on the child
    (n, n_gaps, 3), global, along each step's own row gradients."""
    points, vectors = {}, {}
    if cs.n_gap == 0:
        return points, vectors
    all_points = map_columns(cs.contact_points, q.T).reshape(cs.n_gap, 3, len(q), order="F")
    for r in cs.gap_rows:
        # columns of the child's translation (6:9), or minus the parent's for a ground child
        cols, sign = (slice(6, 9), 1.0) if not r.element.bodies[-1].is_ground else (slice(0, 3), -1.0)
        g = gap_jac[:, r.start:r.stop, cols]                                # (n, n_gaps, 3)
        vectors[r.name] = sign * g * lam[:, r.start:r.stop, None]
        points[r.name] = np.transpose(all_points[r.start:r.stop], (2, 0, 1))
    return points, vectors


def _friction_data(cs, infos):
    """Per clearance joint with friction: the tangential contact force of every gap on the
    child, global, (n, n_gaps, 3) (zeros where a step had none)."""
    rows = [r for r in cs.gap_rows if r.element.friction > 0]
    if not rows:
        return {}
    zero = np.zeros((cs.n_gap, 3))
    forces = np.array([zero if i.friction is None else i.friction for i in infos]).reshape(
        len(infos), cs.n_gap, 3)
    return {r.name: forces[:, r.start:r.stop] for r in rows}


def _friction_local(cs, start_q, vectors):
    """Per clearance joint with friction: the generalised force (n, 12) of its friction forces
    (``vectors``, :func:`_friction_data`) on its bodies' velocities (applied at each step's
    start-of-step contact points), for the joint's wrenches."""
    if not vectors or not len(start_q):         # no steps (the first one failed): nothing
        return {}
    points = map_columns(cs.contact_points, start_q.T).reshape(
        cs.n_gap, 3, len(start_q), order="F")
    out = {}
    for r in cs.gap_rows:
        if r.name not in vectors:
            continue
        f = vectors[r.name]                                          # (n, n_gaps, 3) on the child
        x = np.transpose(points[r.start:r.stop], (2, 0, 1))          # (n, n_gaps, 3)
        local = np.zeros((len(start_q), 12))
        for j, (b, sign) in enumerate(zip(r.element.bodies[:2], (-1.0, 1.0))):
            if b.is_ground:
                continue
            k = b.index
            A = rotation_matrices(start_q[:, 7 * k + 3:7 * k + 7])      # (n, 3, 3)
            arm = x - start_q[:, None, 7 * k:7 * k + 3]
            force = sign * f
            local[:, 6 * j:6 * j + 3] = force.sum(axis=1)
            # body-frame moment n' = A^T (arm x f)
            local[:, 6 * j + 3:6 * j + 6] = np.einsum("nji,nj->ni", A, np.cross(arm, force).sum(axis=1))
        out[r.name] = local
    return out
