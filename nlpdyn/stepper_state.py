"""The stepper's state: the consistent start (initial positions and velocities projected onto
the joints, or refused), the records a run starts afresh, and the elements' memory from one
step to the next."""
from __future__ import annotations

import warnings

import numpy as np

from .acceptance import _momenta, _unmet
from .assembly import LedgerTotals
from .contact import ACCEPTED
from .projection import position_change, project_positions, project_velocities
from .system import ModelError

PROJECTION_NOTICE = 1e-6
"""An initial projection that moves a body by more than this share of the model's size (its
speed by this share of the run's speed scale, its rotation by this many rad) is announced:
a warning naming the body, and ``Result.info["warnings"]``."""


class _StepperState:
    """Part of :class:`~nlpdyn.Stepper`: its state, from a consistent start, the records
    started afresh, the memory carried from a step to the next."""

    # ------------------------------------------------------------------ state and record
    def _restart(self):
        """Forget the steps taken (warm starts, contact memory, ledger, record): the next step
        starts afresh from the current t, q, v, z."""
        cs = self.cs
        self._warm = {}
        self._lam_qp = None
        self._dv, self._dv_h = None, None
        self._accel = np.zeros(cs.nv)       # the last step's velocity change over its h
        self._iterate_accel = self._accel
        self._net_normal = np.zeros(cs.n_gap)      # the last contact iterate's, projection's included
        # error control (rtol): the next pair's h, the second step of a checked pair, where
        # the steps counted from began, and the record
        self._h_error, self._queued, self._error_start = self.h_min, None, self.t
        self.error_control = {"rejected_pairs": 0, "smallest_h": np.inf, "largest_h": 0.0,
                              "largest_error": 0.0, "solves": 0}
        self._contact_force = None
        self.gaps = np.asarray(cs.gap(self.q)).ravel()
        self._active = np.zeros(cs.n_gap, dtype=bool)
        self._was_open = np.zeros(cs.n_gap, dtype=bool)
        self._energy_high = 0.0     # the largest energy in play of a step so far
        self._energy_scale = 0.0    # the largest kinetic + stored energy of a step so far
        # the largest share of drift_warning a joint reached after a step: (share, t, what)
        self._drift = (0.0, self.t, "")
        if self._momentum_bodies is not None:
            P, L, scale = _momenta(self._momentum_bodies, self.q, self.v)
            # the start's momenta, the momenta in play so far, the largest drift's share and when
            self._momentum = (P, L, self.t, scale, (0.0, self.t, ""))
        self.program.reset_qp()
        for scheme in (self.contact.primary, self.contact.fallback):
            if scheme is not None:
                scheme.reset()
        self.ledger = LedgerTotals(cs)
        # impacts resolved in time: the largest h the last step's impact allows, whether a
        # contact was closed, per contact element the time it closed (NaN: open), and the
        # run's record (steps shortened, the smallest h, the least resolved impact)
        self._h_next = np.inf
        self._any_closed = False
        self._closed_since = np.full(len(self.program.implicit.contacts)
                                     if self.program.implicit is not None else 0, np.nan)
        self.resolution = {"shortened_steps": 0, "smallest_h": np.inf,
                           "unresolved": (0.0, self.t, "", 0.0, "")}
        self._log_start = (self.t, self.q, self.v, self.z, self.gaps)
        self._log = []      # per step: (start, StepInfo, q, v, z at its end)

    def _start_memory(self):
        """The memory at the current state: the elements' initial memory, the carry of the
        energy-consistent elements, the contact flags."""
        self.z = self.cs.initial_memory(self.t, self.q, self.v, self.h_max,
                                        ACCEPTED * self.settings.gap_tol)
        if self.program.midpoint and self.cs.n_carry:
            # the midpoint step carries no impulse from one step into the next
            n = self.cs.n_history
            self.z[n:n + self.cs.n_carry] = 0.0

    # ------------------------------------------------------------------ initial conditions
    def _consistent_start(self, q, v):
        cs, st, t = self.cs, self.settings, self.t
        rows = cs.constraint_rows
        phi = np.asarray(cs.phi(q, t)).ravel()
        vel = (np.asarray(cs.velocity_jacobian(q, t)) @ v + np.asarray(cs.phi_t(q, t)).ravel()
               if cs.n_eq else np.zeros(0))
        gaps = np.asarray(cs.gap(q)).ravel()
        gap_jac = np.asarray(cs.gap_jacobian(q)).reshape(cs.n_gap, cs.nv)
        coord_jac = np.asarray(cs.contact_coordinates_q(q)).reshape(cs.n_coordinates, cs.nq)
        problems = []
        for r in cs.gap_rows:
            g = gaps[r.start:r.stop]
            coord_ok = all(np.isfinite(coord_jac[cs.gap_laws[j][0]:cs.gap_laws[j][1]]).all()
                           for j in range(r.start, r.stop))
            if not (np.isfinite(g).all() and np.isfinite(gap_jac[r.start:r.stop]).all() and coord_ok):
                problems.append(f"{r.element.label}: gaps or their gradients are not finite at the "
                                "initial configuration (a norm at 0? write a round gap as "
                                "(d, radius) in contact_coordinates)")
            elif g.size and g.min() < -st.consistency_tol:
                problems.append(f"{r.element.label}: initial gap {g.min():.3e} m < 0 (bodies overlap)")
        if problems:
            raise ModelError(problems)
        pos_bad = phi.size and np.abs(phi).max() > st.consistency_tol
        vel_bad = vel.size and np.abs(vel).max() > st.consistency_tol
        report = {"changed": False, "position_change": 0.0, "velocity_change": 0.0,
                  "position_violation": float(np.abs(phi).max()) if phi.size else 0.0,
                  "velocity_violation": float(np.abs(vel).max()) if vel.size else 0.0}
        if not (pos_bad or vel_bad):
            return q, v, report
        if st.initial_conditions == "check":
            msgs = []
            for r in rows:
                for label, arr in (("position", phi), ("velocity", vel)):
                    worst = np.abs(arr[r.start:r.stop]).max() if r.size else 0.0
                    if worst > st.consistency_tol:
                        msgs.append(f"{r.element.label}: initial {label} residual {worst:.3e} "
                                    f"> consistency_tol {st.consistency_tol:g}")
            raise ModelError(["inconsistent initial conditions (use initial_conditions='project' "
                              "to project them)"] + msgs)
        q_new, _, viol, ok = project_positions(cs, q, t, tol=st.projection_tol)
        if not ok:
            raise ModelError([f"initial positions cannot be made consistent: residual {viol:.3e} "
                              "after projection, at "
                              + _unmet(cs, np.asarray(cs.phi(q_new, t)).ravel())])
        v_new, vres = project_velocities(cs, q_new, v, t)
        problems = []
        gaps = np.asarray(cs.gap(q_new)).ravel()
        for r in cs.gap_rows:
            if r.size and gaps[r.start:r.stop].min() < -st.consistency_tol:
                problems.append(f"{r.element.label}: initial gap {gaps[r.start:r.stop].min():.3e} m "
                                "< 0 after the initial projection (the bodies overlap)")
        if not vres <= st.consistency_tol * max(1.0, np.abs(v_new).max()):
            unmet = _unmet(cs, np.asarray(cs.velocity_jacobian(q_new, t)) @ v_new
                           + np.asarray(cs.phi_t(q_new, t)).ravel())
            problems.append(f"initial velocities cannot be made consistent: residual {vres:.3e} "
                            f"after projection, at {unmet} (constraints that contradict each other, or "
                            "ill-conditioned masses or joints)")
        if problems:
            raise ModelError(problems)
        report.update(changed=True, position_change=position_change(q, q_new, cs.n_bodies),
                      velocity_change=float(np.abs(v_new - v).max()),
                      body_changes=_body_changes(cs, q, v, q_new, v_new))
        note = self._projection_note(report["body_changes"], v)
        if note:
            report["note"] = note
            warnings.warn(note, UserWarning, stacklevel=3)
        return q_new, v_new, report

    def _projection_note(self, changes, v) -> str:
        """A note naming each body whose initial state the projection changed beyond
        round-off (PROJECTION_NOTICE of the model's size, of its speeds), in its own units."""
        size = self.cs.model_size
        v = np.reshape(v, (-1, 6))
        speed = max(np.abs(v[:, :3]).max(initial=0.0), size * np.abs(v[:, 3:]).max(initial=0.0),
                    np.sqrt(max(np.linalg.norm(self.system.gravity), 1.0) * size))
        limits = {"position": (size, "m"), "rotation": (1.0, "rad"),
                  "velocity": (speed, "m/s"), "angular velocity": (speed / size, "rad/s")}
        parts = []
        for name, change in changes.items():
            moved = [f"{label} by {change[label]:.3g} {unit}"
                     for label, (scale, unit) in limits.items()
                     if change[label] > PROJECTION_NOTICE * scale]
            if moved:
                parts.append((max(change[label] / scale for label, (scale, _) in limits.items()),
                              f"body '{name}': " + ", ".join(moved)))
        if not parts:
            return ""
        parts.sort(reverse=True)
        listed = "; ".join(text for _, text in parts[:4])
        more = f"; and {len(parts) - 4} more bodies" if len(parts) > 4 else ""
        return ("the initial state did not meet the joints and was projected onto them "
                f"(initial_conditions='project'): {listed}{more} "
                "(res.initial_projection; initial_conditions='check' refuses instead)")

    # ------------------------------------------------------------------ memory
    def _next_memory(self, h, t1, q1, v1, carry):
        """The memory after a step of h to (t1, q1, v1) with the energy-consistent elements'
        ``carry``."""
        if not self.cs.n_memory:
            return self.z
        n, z = self.cs.n_history, self.z.copy()
        if n:
            z[self.cs.step_size_slots] = h      # the step's own h (a variable-h step)
            z[:n] = np.asarray(self.cs.history_next(t1, q1, v1, z[:n])).ravel()
        z[n:n + self.cs.n_carry] = carry
        z[self.cs.contact_slots] = self.gaps <= ACCEPTED * self.settings.gap_tol
        return z


def _body_changes(cs, q, v, q_new, v_new) -> dict:
    """Per body, how far the initial projection moved it: centre (m), rotation (rad),
    velocity (m/s), angular velocity (rad/s)."""
    changes = {}
    for k, body in enumerate(cs.bodies):
        dq, dv = q_new[7 * k:7 * k + 7] - q[7 * k:7 * k + 7], v_new[6 * k:6 * k + 6] - v[6 * k:6 * k + 6]
        changes[body.name] = {
            "position": float(np.linalg.norm(dq[:3])),
            "rotation": position_change(np.r_[0, 0, 0, q[7 * k + 3:7 * k + 7]],
                                        np.r_[0, 0, 0, q_new[7 * k + 3:7 * k + 7]], 1),
            "velocity": float(np.linalg.norm(dv[:3])),
            "angular velocity": float(np.linalg.norm(dv[3:]))}
    return changes
