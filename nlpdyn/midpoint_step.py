"""Scheme "midpoint"'s step: its fixed-point iterations on the gyroscopic term and the
implicit elements' Newton iterations (oscillating ones bisected), and its end velocity
projected onto the joints' and closed gaps' rates."""
from __future__ import annotations

import numpy as np

from .contact import ACCEPTED

# Newton's iterates that oscillate are bisected on the step turned back at most this many
# times a step, each search at most CYCLE_BISECTIONS solves
CYCLE_SEARCHES, CYCLE_BISECTIONS = 3, 40
# the midpoint step iterates its gyroscopic term until it would change the end velocity by
# less than this share of the velocities (round-off's reach after a few thousand steps)
GYROSCOPIC_TOL = 1e-12
# ... or, where they contract slowly (a stiff velocity-dependent force), until what is left to
# their fixed point is below this share
GYROSCOPIC_STALL = 1e-6


_NEXT, _LAST = [1, 2, 0], [2, 0, 1]


def _returns(y_before, y_at, y_next) -> bool:
    """Whether Newton's step from y_at = N(y_before) to y_next = N(y_at) turns back along the
    step before by more than half its length: the iterates oscillate without contracting
    (two in turn where a law's kinks lie on both sides of the root)."""
    last = y_at - y_before
    return bool((y_next - y_at) @ last < -0.5 * (last @ last))


def _gyroscopic(w, J) -> np.ndarray:
    """w x (J w) per body (rows), without np.cross's overhead on a few rows."""
    b = (J @ w[:, :, None])[:, :, 0]
    return w.take(_NEXT, 1) * b.take(_LAST, 1) - w.take(_LAST, 1) * b.take(_NEXT, 1)


class _MidpointStep:
    """Part of :class:`~nlpdyn.Stepper`: the midpoint step's solve."""

    def _solve_midpoint(self, h, q_lin=None, curvature=None, jacobian_at="start", kind="direct"):
        """The midpoint step: the velocity-dependent forces at the velocity predicted from
        the last step's velocity change; then, while the gyroscopic term at the step's mean
        velocity would change the end velocity by more than ``GYROSCOPIC_TOL`` of the
        velocities, again at that mean velocity (fixed-point iterations, at most
        ``implicit_iterations``; where they contract slowly, until ``GYROSCOPIC_STALL`` is
        left to their fixed point; where they diverge, the step fails): the bodies' rotation
        then neither gains nor loses energy.
        Elements evaluated in the step are Newton-linearised in the same iterations (one
        KKT solve each) until the equations of motion hold with their end-of-step forces
        (``implicit_tol``). With gaps, each solve is the QP with the gaps' rows of
        ``jacobian_at`` linearised at ``q_lin`` (``curvature``: the contact iterations');
        without, ``kind`` "direct" solves the KKT system, "qp" the conic plugin."""
        implicit, gaps = self.program.has_implicit, self.cs.n_gap > 0
        # a contact iterate starts from the last iterate's mean acceleration (the same step's,
        # converging with it); a step's first solve from the last step's
        iterate = q_lin is not None
        accel = self._iterate_accel if iterate else self._accel
        y_imp = self._y_guess(h) if implicit else None
        b_imp, warm = None, self._lam_qp if gaps else None
        if q_lin is None:
            # a step's first solve: the gaps linearised at its midpoint, the end of the step
            # at y = 0, about which the first curvature term is expanded
            q_lin = (self.program.base_point(self.q, self.v, self.t, h,
                                             np.concatenate((self.z, accel)))[1]
                     if gaps else self.q)
        coulomb = (self._net_normal if iterate and self.program.has_friction
                   else self._lagged_normal_impulses(h, curvature))
        n, inertia = self.cs.n_bodies, self._inertia
        friction = bool(len(self.cs.normal_force_slots))
        limit = max(self.settings.implicit_iterations,
                    self.settings.friction_iterations if friction else 0)
        # the QP's program (its KKT system by LDL^T, "direct", unless a conic plugin is asked
        # for or gaps need one), else the closed-form solve
        by_qp = implicit or gaps or kind == "qp"
        plugin = None if gaps or kind == "qp" else "direct"
        previous_change = np.inf

        def solve(y_lin, b_lin, accel):
            memory = np.concatenate((self.z, accel))   # accel: the iterations' own
            if by_qp:
                return self.program.solve_qp(self.q, self.v, self.t, h, q_lin, memory, warm,
                                             curvature, y_lin, jacobian_at, coulomb, plugin,
                                             b_lin)
            return self.program.solve_direct(self.q, self.v, self.t, h, memory)

        y_before, searches = None, 0        # the implicit iterate before y_imp
        for _ in range(limit + 1):
            sol, out = solve(y_imp, b_imp, accel)
            used = accel
            if (implicit and searches < CYCLE_SEARCHES and y_before is not None
                    and not self._implicit_met(out) and _returns(y_before, y_imp, sol.y)):
                # Newton's iterates oscillate (a law's kinks on both sides of its root: a
                # Lankarani-Nikravesh contact's hysteresis saturating at a small impact
                # speed): bisect the segment of the step that was turned back
                searches += 1
                sol, out, used = self._bisect_cycle(solve, h, y_before, y_imp)
                previous_change = np.inf
            accel = (out[1] - self.v) / h
            # the end velocity's change if the gyroscopic term took the mean velocity
            w = (self.v + 0.5 * h * np.array((accel, used))).reshape(2 * n, 6)[:, 3:]
            S = _gyroscopic(w, inertia[0])
            dS = S[:n] - S[n:]
            change = h * np.abs(np.matmul(inertia[1], dS[:, :, None])).max(initial=0.0)
            # a contact iterate takes one solve: its predictor, the last iterate's mean
            # acceleration, converges with the contact iterations. A velocity-dependent force
            # shares the predictor: the iterations contract by h c / 2 (c its rate), slowly
            # near 1, where the step is taken once the distance left, change r / (1 - r), is
            # below GYROSCOPIC_STALL; beyond 1 (an explicit force past its stability limit)
            # they diverge and the step fails, to be retried with a shorter h
            scale = 1.0 + np.abs(out[1]).max(initial=0.0)
            rate = change / previous_change if previous_change else (np.inf if change else 0.0)
            settled = change <= GYROSCOPIC_TOL * scale or (
                0.5 <= rate < 1 and change * rate / (1 - rate) <= GYROSCOPIC_STALL * scale)
            spinning, previous_change = not iterate and not settled, change
            unmet = implicit and not self._implicit_met(out)
            # joint friction: the memory takes the step's normal forces until they hold
            met = not friction or self._normal_forces_met(out)
            # (while the implicit elements' Newton iterations are under way, their updates,
            # not the predictor's, move the mean velocity: no divergence to judge)
            shorter = self._stiff_impact_h(h) if unmet and not iterate else None
            if shorter is not None:
                sol.success, sol.shorter_h = False, shorter
                sol.status = (f"an impact stiffer than contact_resolution allows: retried at "
                              f"h = {shorter:.3g}")
                break
            if spinning and rate >= 1 and not unmet:
                sol.success = False
                sol.status = (f"the midpoint step's iterations diverge: the gyroscopic term's "
                              f"change grows {rate:.3g}x an iterate (h times a velocity-"
                              "dependent force's rate above 2)")
                break
            if (not (spinning or unmet or not met) or not np.isfinite(out[-1][2])
                    or not np.isfinite(sol.y).all()):
                break
            if implicit:       # the impulse at sol.y holds while the memory does
                # after a cycle, a fresh linearisation at every iterate (full Newton: the
                # last one's need not hold across the law's kinks)
                y_before, y_imp = y_imp, sol.y
                b_imp = sol.b_imp if met and not searches else None
            if by_qp:
                warm = -np.concatenate((sol.P_eq, sol.P_g))
        else:
            sol.success = False
            sol.status = (f"the midpoint step's iterations did not settle in {limit}: "
                          + (f"the gyroscopic term still changes the velocities by {change:.3e}"
                             if spinning else f"EOM residual {out[-1][2]:.3e} with the forces "
                                              "at the end of the step" if unmet else
                             f"joint normal forces changing by {self._normal_force_change:.3e} N"))
        sol.iterations = _ + 1
        self._accel_used, self._iterate_accel = used, accel
        # with gaps the contact iterations' accepted solve is projected (``_solve_with_
        # retries``), but with friction every iterate: its net normal impulse bounds the next
        if (self.cs.n_eq and not gaps or self.program.has_friction) and np.isfinite(out[-1][2]):
            self._project_end_velocity(sol, out)
        return sol, out

    def _bisect_cycle(self, solve, h, y_a, y_b):
        """Newton's step from y_b = N(y_a) turned back towards y_a (N: a solve linearised at
        its argument, ``_returns``). Bisects the segment between them on the sign of the
        Newton step along it, (N(y) - y) . (y_b - y_a), positive at y_a and negative at y_b,
        until the Newton step from the point is under a quarter of the segment left (the
        point lies on the law's steep piece between the kinks, where Newton converges: from
        a point on either flat side the step goes at least half the segment left). Returns
        that point's solve and the acceleration it used."""
        v_a, v_b = (self.program.Linv_T @ np.c_[y_a, y_b]).T
        accel_a, accel_b = (v_a - self.v) / h, (v_b - self.v) / h
        d, lo, hi = y_b - y_a, 0.0, 1.0
        for _ in range(CYCLE_BISECTIONS):
            alpha = 0.5 * (lo + hi)
            accel = accel_a + alpha * (accel_b - accel_a)
            sol, out = solve(y_a + alpha * d, None, accel)
            step = sol.y - (y_a + alpha * d)
            if np.linalg.norm(step) <= 0.25 * (hi - lo) * np.linalg.norm(d):
                break
            lo, hi = (alpha, hi) if step @ d > 0 else (lo, alpha)
        return sol, out, accel

    def _project_end_velocity(self, sol, out):
        """The midpoint step's end velocity onto the joints' rates at the end positions (the
        kick aimed the positions there; the state then does not depend on the next h), and
        with gaps, off the closing rates of the gaps closed at the end (within 2 ``ACCEPTED``
        gap_tol, or carrying the step's force). The projection's impulses join the joints'
        reactions and the contact forces, their work the joints' and gaps' ledger columns."""
        sol.projected = True
        args = (out[0], self.t + sol.h, out[1])
        first = 2 * len(self.cs.force_elements)     # the outputs are the call's own copies
        if self.cs.n_gap:
            band = 2 * ACCEPTED * self.settings.gap_tol
            closed = (out[8] <= band) | (out[3] > 1e-8 * self._force_scale)
            # a gap open at the start that closed: the end of its plastic impact (the end
            # positions on the gap leave the velocity a rebound of 2 g(q_m) / h where the
            # midpoint is past the gap)
            impact = closed & (self.gaps > band)
            v, P, work, P_g, work_g = self._contact_end_velocity(args, closed, impact, sol.P_g)
            out[3] = out[3] + P_g / sol.h
            # the net normal impulses bound friction in the contact iterations' next solve
            # (an impact's rebound, removed here, is no load on the contact); the solve's own
            # stay the iterations' curvature weights
            self._net_normal = sol.P_g + P_g
            gap_first = first + len(self.cs.constraint_rows)
            out[12][gap_first:gap_first + len(work_g)] += work_g
        else:
            v, P, work = self.program.velocity_projection()(*args)
        out[1], out[2] = v, out[2] + P / sol.h
        out[12][first:first + len(work)] += work
        out[-1][5] += work.sum()

    def _contact_end_velocity(self, args, closed, impact, pushed):
        """The projection of ``_project_end_velocity`` with gaps, by active sets: the rates of
        the closed gaps are held at zero; one whose net normal impulse over the step (the
        solve's, ``pushed``, and the projection's) would pull is let go, unless it closed in
        the step (an impact), and one let go that would close is held again, until neither
        is left (a few passes: one without contacts changing). A loaded contact the step's
        end leaves at a small separating rate, one its load would close again within the
        step, so stays closed: the midpoint step's end rows would mirror that rate into a
        closing one the next step (a period-2h rocking between redundant contacts)."""
        project = self.program.velocity_projection()
        held = closed.copy()
        for _ in range(self.cs.n_gap + 1):
            v, P, work, P_g, work_g, rate, scale = project(*args, held.astype(float))
            # each gap's rate to its own round-off (a fast slide along a gap leaves it alone)
            slack = 1e-14 + 1e-13 * scale
            pulls = held & ~impact & (pushed + P_g < 0)
            closing = closed & ~held & (rate < -slack)
            if not (pulls.any() or closing.any()):
                break
            held = (held & ~pulls) | closing
        return v, P, work, P_g, work_g
