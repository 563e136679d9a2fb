"""Step-size control: h under error control (``rtol``, step doubling), on the fixed step's
grid, cut where a gap would close (``adaptive``), and the retries of a rejected step with
another solver and a shorter h."""
from __future__ import annotations

import re
import time

import numpy as np

from .acceptance import _unmet
from .projection import project_positions
from .rotations import G_matrix
from .step_outcome import StepFailure, StepInfo

_NON_FINITE = re.compile(r"nan|inf\b|Invalid_Number|non-finite", re.IGNORECASE)


class _StepControl:
    """Part of :class:`~nlpdyn.Stepper`: the step's h, and its retries."""

    # ------------------------------------------------------------------ error control (rtol)
    def _error_controlled_step(self, t_end, remaining, tic) -> StepInfo:
        """One step under error control: the second step of the last checked pair, or the
        first of a new pair (``_checked_pair``)."""
        if self._queued is not None:
            outcome, predictor, key = self._queued
            self._queued = None
            if key == self._state_key() and outcome.sol.h <= remaining * (1 + 1e-9):
                self.last_start = start = (self.t, self.q, self.v, self.z)
                self._accel_used = predictor
                end = (t_end if t_end is not None
                       and abs(self.t + outcome.sol.h - t_end) <= 1e-9 * outcome.sol.h else None)
                return self._record(start, self._accept(outcome, 0, time.perf_counter() - tic,
                                                        end))
        h = min(max(self._h_error, self.h_min), self.h_max)
        if remaining <= 2 * h * (1 + 1e-9):
            h = 0.5 * remaining
        elif remaining < 3 * h:
            h = 0.25 * remaining        # two pairs, not one and a sliver
        self.last_start = start = (self.t, self.q, self.v, self.z)
        first, second, error, retries = self._checked_pair(h, t_end)
        h = first[0].sol.h
        self._accel_used = first[1]
        info = self._accept(first[0], retries, time.perf_counter() - tic)
        self._queued = second if second[2] == self._state_key() else None
        record = self.error_control
        record["smallest_h"] = min(record["smallest_h"], h)
        record["largest_h"] = max(record["largest_h"], h)
        record["largest_error"] = max(record["largest_error"], error)
        self._h_error = h * min(4.0, max(0.2, 0.9 * max(error, 1e-12) ** (-1 / 3)))
        return self._record(start, info)

    def _checked_pair(self, h, t_end):
        """Two midpoint steps of h from the state and one of 2 h, taken again with a smaller
        h while the pair's error estimate (``_pair_error``, in units of the tolerance) is
        above 1 and h can shrink. Returns ((first step, its predictor), (second step, its
        predictor, the state it starts from), the error, the retries)."""
        retries = 0
        while True:
            whole, more = self._solve_with_retries(2 * h, 2 * h)
            retries += more
            if whole.sol.h < 2 * h * (1 - 1e-9):        # only a shorter step solves
                h = 0.5 * whole.sol.h
                continue
            first, more = self._solve_with_retries(h, h)
            retries += more
            first_predictor = self._accel_used
            saved = self._provisional(first)
            try:
                second, more = self._solve_with_retries(h, h)
                retries += more
                key = self._state_key()
            finally:
                self.t, self.q, self.v, self.z, self._accel, self._dv, self._dv_h = saved
            self.error_control["solves"] += 3
            if first.sol.h < h * (1 - 1e-9) or second.sol.h < h * (1 - 1e-9):
                h = min(first.sol.h, second.sol.h)
                continue
            error = self._pair_error(whole.out, second.out, 2 * h, t_end)
            if error <= 1.0 or h <= self.h_min * (1 + 1e-9):
                return (first, first_predictor), (second, self._accel_used, key), error, retries
            self.error_control["rejected_pairs"] += 1
            h = max(self.h_min, h * max(0.2, 0.9 * error ** (-1 / 3)))

    def _provisional(self, outcome):
        """Advance the state by an unaccepted step as ``_accept`` would (t, q, v, memory and
        the velocity predictors); returns the state before."""
        saved = (self.t, self.q, self.v, self.z, self._accel, self._dv, self._dv_h)
        sol, out = outcome.sol, outcome.out
        t1, q1, v1 = self.t + sol.h, out[0], out[1]
        self.z = self._next_memory(sol.h, t1, q1, v1, out[13])
        self._dv, self._dv_h = v1 - self.v, sol.h
        self._accel = self._dv / sol.h
        self.t, self.q, self.v = t1, q1, v1
        return saved

    def _state_key(self):
        return (self.t, self.q.tobytes(), self.v.tobytes(), self.z.tobytes(),
                self._accel.tobytes())

    def _pair_error(self, out_whole, out_pair, span, t_end) -> float:
        """The error of a pair of steps (one of ``span`` against two of span / 2) in units of
        the tolerance: the ends' difference along the joints over 3, per coordinate against
        atol + rtol x its scale, times the run's steps over the pair's two, from the mean
        step so far (``StepperSettings.rtol``)."""
        cs, st = self.cs, self.settings
        dq = _position_difference(out_whole[0], out_pair[0], cs.n_bodies)
        dv = out_whole[1] - out_pair[1]
        if cs.n_eq:
            along = self.program.tangential()
            dq, dv = (along(out_pair[0], self.t + span, x)[0] for x in (dq, dv))
        n, length = cs.n_bodies, self._model_size
        speed = np.abs(np.c_[self.v, out_pair[1]]).reshape(n, 6, 2)
        v_scale = max(speed[:, :3].max(initial=0.0),
                      np.sqrt(np.linalg.norm(self.system.gravity) * length))
        w_scale = max(speed[:, 3:].max(initial=0.0), v_scale / length)
        scale = np.tile(np.r_[np.full(3, length), np.ones(3), np.full(3, v_scale),
                              np.full(3, w_scale)], n).reshape(n, 2, 6)
        tol = st.atol + st.rtol * scale
        difference = np.abs(np.c_[dq.reshape(n, 6), dv.reshape(n, 6)]).reshape(n, 2, 6)
        run = self.span if self.span is not None else (
            None if t_end is None else t_end - self._error_start)
        # the pair's share: its steps' number over the run's, from the mean step so far
        # (the steps taken since the start, ``reset`` or ``set_state``: the ledger's)
        mean = (self.t - self._error_start + span) / (len(self.ledger) + 2)
        share = 1.0 if run is None else max(run, span) / (2 * mean)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.nan_to_num(difference / 3 / tol, nan=0.0)
        return float(ratio.max(initial=0.0) * share)

    # ------------------------------------------------------------------ the fixed step's grid, adaptive h
    def _on_grid(self, t, h) -> float:
        """The end ``t`` of a step of ``h`` on the fixed step's grid t0 + k h_max where it is
        within 1e-6 of both steps of a point of it (a sum of steps drifts off the grid by
        round-off, and a run would end on a sliver; a step meant to end off the grid, on
        t_end, is far longer than its distance to it)."""
        if self.step_control != "fixed":
            return t
        on = float(self.t0 + round(float(t - self.t0) / self.h_max) * self.h_max)
        return on if abs(on - t) <= 1e-6 * min(self.h_max, h) else t

    def _to_grid(self) -> float:
        """Time from t to the next point of the fixed step's grid t0 + k h (h when on it)."""
        H = self.h_max
        ahead = (self.t - self.t0) / H
        left = (np.ceil(ahead) - ahead) * H
        return H if left < 1e-6 * H else left

    def _predict_contact_step(self, h_min, h_max):
        """Largest h in [h_min, h_max] after which no open gap has closed in a free step
        (true gaps at the free end of step, bisection to 1/64 of the bracket)."""
        if self.cs.n_gap == 0:
            return h_max
        open_ = self.gaps > self._contact_band

        def closes(h):
            return bool(np.any(self.program.free_gap(self.q, self.v, self.t, h, self._memory())[0][open_] < 0))

        if not open_.any() or not closes(h_max):
            return h_max
        if closes(h_min):
            return h_min
        lo, hi = h_min, h_max
        for _ in range(6):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if closes(mid) else (mid, hi)
        return lo

    # ------------------------------------------------------------------ retries
    def _solve_with_retries(self, h_min, h_max):
        reasons, shorter, resolving = [], None, 0
        for retry, (kind, bounds) in enumerate(self._attempts(h_min, h_max)):
            # a stiff impact stopped the step (``_stiff_impact_h``): on to the attempts at
            # the h that resolves it (they count as the impact's shortened steps, not retries)
            if shorter is not None and bounds[1] > shorter * (1 + 1e-9):
                resolving += 1
                continue
            try:
                curvature = (None if kind == "nlp" else
                             self.contact.first_curvature(self._contact_force, bounds[1], self.cs.nv))
                sol, out = self._solve(kind, bounds, None, curvature, self._first_rows)
                ok, why = self._check(sol, out)
                if ok:
                    outcome = self._refine(kind, bounds, sol, out)
                    sol, out = outcome.sol, outcome.out
                    if outcome.error > self._max_penetration and not self.settings.projection:
                        tried = f"'{self.contact.name}'" + (
                            f" and fallback '{outcome.scheme}'" if outcome.fallback else "")
                        ok, why = False, (f"contact error {outcome.error:.3e} m (penetration "
                                          f"{max(-out[7][0], 0):.3e} m) > max_penetration "
                                          f"{self._max_penetration:.1e} m after the {tried} "
                                          "contact iterations")
            except RuntimeError as err:     # CasADi errors surface as RuntimeError
                reasons.append(f"{kind} h={bounds[1]:.3g}: {str(err).splitlines()[0][:200]}")
                self.program.reset_qp()
                continue
            if ok:
                sol, out = outcome.sol, outcome.out
                if self.program.midpoint and not sol.projected and np.isfinite(out[-1][2]):
                    self._project_end_velocity(sol, out)
                return outcome, retry - resolving
            if sol.shorter_h is not None:
                shorter, resolving = sol.shorter_h, resolving + 1
                self.program.reset_qp()
                continue
            reasons.append(f"{sol.solver} h={sol.h:.3g}: {why}")
            # each attempt starts afresh: a QP solver's memory of a failed attempt (qpOASES'
            # hot start) made retries fail that a fresh solver takes
            self.program.reset_qp()
        culprits = self._culprits(h_max) if any(_NON_FINITE.search(r) for r in reasons) else []
        raise StepFailure(f"step at t = {self.t:.9g} failed after {len(reasons)} attempts: "
                          + "; ".join(reasons[-3:])
                          + ("; non-finite values from " + "; ".join(culprits) if culprits else "")
                          + self._unreachable(h_max))

    @property
    def _first_rows(self) -> str:
        """The gap rows of a step's first solve: the contact scheme's, except that the
        midpoint step's "cone" holds the normals of sustained contacts from the first solve
        on (a first solve within the gap tolerance is the step; with the end normals it
        would take lam c dphi^2 from the sliding)."""
        if self.program.midpoint and self.contact.name == "cone":
            return "sustained"
        return self.contact.jacobian_at

    def _unreachable(self, h) -> str:
        """Why a failed step failed when no configuration meets the constraints at its end
        time t + h (a programmed motion out of reach, or at the edge of its reach, where the
        shorter retries fail on its speed): the rows left unmet, else ""."""
        if not self.cs.n_eq:
            return ""
        t1 = self.t + h
        with np.errstate(all="ignore"):
            q_near, _, left, closes = project_positions(self.cs, self.q, t1, tol=1e-10,
                                                        max_iter=20)
        if closes or not np.isfinite(left):
            return ""
        return (f"; no configuration meets the constraints at t = {t1:.9g} (residual "
                f"{left:.3e} after projection, at "
                f"{_unmet(self.cs, np.asarray(self.cs.phi(q_near, t1)).ravel())})")

    def _culprits(self, h) -> list[str]:
        """The joints and elements not finite (or overflowing) at the start of the step or
        at its end time (a function of time past its domain), at the start state."""
        z = self.z[:self.cs.n_history]
        found = []
        for t in (self.t, self.t + h):
            found += [p for p in self.cs.state_problems(t, self.q, self.v, z)
                      if p.split(":")[0] not in {f.split(":")[0] for f in found}]
        return found

    def _halvings(self, h) -> int:
        """Halvings of a rejected step of ``h``: ``max_retries``, and with contact elements
        at least down to the floor of their resolution, h / ``contact_substeps`` of the
        run's h (a stiff law's Newton iterations converge there, where its impact is
        stepped anyway)."""
        halvings = self.settings.max_retries
        if self.program.has_implicit and self.program.implicit.contacts:
            floor = self._substep_floor
            halvings = max(halvings, int(np.ceil(np.log2(max(h / floor, 1.0)) - 1e-9)))
        return halvings

    def _attempts(self, h_min, h_max):
        primary = "nlp" if self.step_control == "nlp" else self.solver
        if self.step_control != "nlp":
            h_min = h_max
        fallback = "qp" if self.program.midpoint else "ipopt"
        kinds = [primary] + ([fallback] if self.settings.fallback
                             and primary not in ("ipopt", "nlp", fallback)
                             and not self.program.has_friction else [])
        for r in range(self._halvings(h_max) + 1):
            hb = (min(h_min, h_max / 2**r), h_max / 2**r)
            for kind in kinds:
                yield kind, hb


def _position_difference(q_a, q_b, n_bodies) -> np.ndarray:
    """q_a - q_b per body as a velocity-space vector: the centres' difference (m) and the
    rotation from b to a (rad, body frame of b, small: 2 G(p_b) p_a)."""
    a, b = np.reshape(q_a, (n_bodies, 7)), np.reshape(q_b, (n_bodies, 7))
    return np.concatenate([np.r_[ak[:3] - bk[:3], 2 * G_matrix(bk[3:]) @ ak[3:]]
                           for ak, bk in zip(a, b)]) if n_bodies else np.zeros(0)
