"""The solves of one step of the step program: direct, QP (with the implicit elements' Newton
iterations and joint friction's normal forces), IPOPT, the seed's h by bisection, and the
contact iterations that meet the end-of-step gaps (``nlpdyn.contact``)."""
from __future__ import annotations

import numpy as np

from .contact import ContactOutcome


class _StepSolves:
    """Part of :class:`~nlpdyn.Stepper`: one step's solves at a given h."""

    # ------------------------------------------------------------------ contact iterations
    def _refine(self, kind, bounds, sol, out) -> ContactOutcome:
        """Polish an "nlp" step onto its h bound, then meet the end-of-step gaps with the
        contact scheme (``nlpdyn.contact``) at the h already chosen.

        Polish: IPOPT's interior point ends ~1e-7..1e-5 short of an active h bound (barrier
        offset mu / tie-break); the step is re-solved with h exactly at the bound.
        """
        fixed_kind = self.solver
        first = sol
        st = self.settings
        if kind == "nlp" and st.polish and bounds[1] * (1 - st.polish_tol) <= sol.h < bounds[1]:
            cand, cand_out = self._solve(fixed_kind, (bounds[1], bounds[1]), None, None,
                                         self.contact.jacobian_at)
            if self._check(cand, cand_out)[0]:
                sol, out = cand, cand_out
        h = sol.h

        def solve(q_lin, curvature, jacobian_at):
            return self._solve(fixed_kind, (h, h), q_lin, curvature, jacobian_at)

        def drift(y_new, y_old):
            return h * np.abs(self.program.Linv_T @ (y_new - y_old)).max()

        first_accel, first_rows = self._iterate_accel, self._first_rows

        def restart(jacobian_at):
            """Before a pass of contact iterations: the midpoint step's predicted mean
            acceleration back to the first solve's (a diverged pass left it far off), and,
            without friction, where the pass takes other rows than the first solve did, a
            fresh first solve with them (the end normals' iterations converge from it, not
            from the held normals' first solve: a 1 um bore under a joint stop)."""
            self._iterate_accel = first_accel
            if (not self.program.midpoint or self.program.has_friction
                    or jacobian_at in (None, first_rows)):
                return None
            curvature = self.contact.first_curvature(self._contact_force, h, self.cs.nv)
            fresh = solve(None, curvature, jacobian_at)
            if self._check(*fresh)[0]:
                return fresh
            self._iterate_accel = first_accel
            return None

        if self.cs.n_gap:
            outcome = self.contact.refine(solve, self._check, drift, sol, out, self._contact_force,
                                          turn=lambda q1: self.program.contact_turn(self.q, q1, self.z),
                                          restart=restart)
        else:
            outcome = ContactOutcome(sol, out, "", 0, 0.0, True)
        sol = outcome.sol
        if sol is not first:
            sol.solver, sol.iterations = first.solver, first.iterations
            sol.status = first.status + (" (polished)" if sol.h != first.h else "")
        return outcome

    # ------------------------------------------------------------------ one solve
    def _solve(self, kind, bounds, q_lin, curvature, jacobian_at):
        """One solve of the step program (gaps linearised at ``q_lin``, None: the start of the
        step); returns (StepSolution, finish outputs). With joint friction, a fixed-h step is
        re-solved until the normal forces in its memory are the ones it produces (in the
        QP's Newton iterations, or around the other solvers)."""
        if not len(self.cs.normal_force_slots) or (kind == "nlp" and self._bisect_h):
            return self._solve_once(kind, bounds, q_lin, curvature, jacobian_at)
        self.z[self.cs.step_size_slots] = bounds[1]
        if self.program.midpoint:
            return self._solve_midpoint(bounds[1], q_lin, curvature, jacobian_at, kind)
        if kind == "qp" or (kind == "direct" and self.program.has_implicit):
            return self._solve_qp(bounds[1], q_lin, curvature, jacobian_at,
                                  "direct" if kind == "direct" else None)
        for _ in range(self.settings.friction_iterations):
            sol, out = self._solve_once(kind, bounds, q_lin, curvature, jacobian_at)
            # a variable-h solve is not iterated: its fixed-h re-solves are
            if not sol.success or self._normal_forces_met(out) or kind == "nlp":
                return sol, out
        return self._normal_forces_failed(sol)

    def _normal_forces_met(self, out) -> bool:
        """Whether the friction elements' normal forces in the memory are the step's (within
        ``friction_tol``); if not, the memory takes the step's."""
        f_n = self.program.normal_forces(self.q, self.t, out[2])[0]
        slots = self.cs.normal_force_slots
        change = np.abs(f_n - self.z[slots]).max()
        self._normal_force_change = change
        if change <= self.settings.friction_tol * max(self._force_scale, np.abs(f_n).max()):
            return True
        self.z[slots] = f_n
        return False

    def _normal_forces_failed(self, outcome):
        sol, out = outcome
        sol.success = False
        sol.status = (f"joint normal forces changing by {self._normal_force_change:.3e} N after "
                      f"{self.settings.friction_iterations} solves")
        return sol, out

    def _solve_once(self, kind, bounds, q_lin, curvature, jacobian_at):
        if kind in ("direct", "qp") and self.program.midpoint:
            return self._solve_midpoint(bounds[1], q_lin, curvature, jacobian_at, kind)
        q, v, t, z = self.q, self.v, self.t, self.z
        q_lin = q if q_lin is None else q_lin
        form = self.settings.form
        if kind == "direct" and not self.program.has_implicit:
            return self.program.solve_direct(q, v, t, bounds[1], z)
        if kind in ("qp", "direct"):
            return self._solve_qp(bounds[1], q_lin, curvature, jacobian_at,
                                  "direct" if kind == "direct" else None)
        if kind == "nlp" and self._bisect_h:
            return self._solve_by_bisection(*bounds)
        if kind == "nlp":
            key = (form, True, jacobian_at)
            sol, self._warm[key] = self.program.solve_nlp(form, q, v, t, bounds, self.h_max,
                                                          True, q_lin, z, self._warm.get(key),
                                                          jacobian_at)
            curvature = None
        else:   # IPOPT on a fixed step (primary for solver="ipopt", else the fallback)
            key = (form if self.solver == "ipopt" else "gauss", False, jacobian_at)
            sol, self._warm[key] = self.program.solve_nlp(key[0], q, v, t, (bounds[1], bounds[1]),
                                                          bounds[1], False, q_lin, z,
                                                          self._warm.get(key), jacobian_at,
                                                          curvature)
        return sol, self.program.finish_step(q, v, t, sol.h, q_lin, z, sol, jacobian_at, curvature)

    def _solve_by_bisection(self, h_lo, h_hi):
        """The seed's program with h in [h_lo, h_hi] by fixed-h solves: f(h) = (h_max/h)^2 Z*(h)
        - tie h (Z* the fixed-h program's optimum, gaps linearised at the start of the step)
        and its slope from each solve; h_hi if f decreases there, h_lo if it increases there,
        else bisection to the point where the slope changes sign (a contact onset, say)."""
        h_ref, tie = self.h_max, self.settings.tie_break * self.cs.total_mass
        value_slope = self.program.value_slope()
        solves = 0

        def solve(h):
            nonlocal solves
            solves += 1
            sol, out = self._solve(self.solver, (h, h), None, None, "start")
            Z, dL = value_slope(self.q, self.v, self.t, h, sol.y,
                                -np.concatenate((sol.P_eq, sol.P_g)), self.z)
            slope = -2 * h_ref**2 / h**3 * float(Z[0]) + (h_ref / h)**2 * float(dL[0]) - tie / h_ref
            return sol, out, slope if self._check(sol, out)[0] else np.inf

        best = solve(h_hi)
        if best[2] > 0 and h_lo < h_hi:
            low = solve(h_lo)
            if low[2] >= 0:
                best = low
            else:
                lo, hi, best = h_lo, h_hi, low
                for _ in range(self.settings.nlp_bisections):
                    mid = solve(0.5 * (lo + hi))
                    if mid[2] > 0:
                        hi = 0.5 * (lo + hi)
                    else:
                        lo, best = 0.5 * (lo + hi), mid
        sol, out, _ = best
        sol.status, sol.iterations = f"h by bisection ({solves} solves)", solves
        return sol, out

    def _solve_qp(self, h, q_lin, curvature, jacobian_at, plugin=None):
        """The fixed-h QP; with implicit force elements, Newton iterations (one QP each, forces
        linearised at the previous iterate) until the EOM holds with the end-of-step forces,
        and with joint friction until its normal forces are the step's."""
        st = self.settings
        implicit, friction = self.program.has_implicit, bool(len(self.cs.normal_force_slots))
        y_imp = self._y_guess(h) if implicit else None
        coulomb = self._lagged_normal_impulses(h, curvature)
        sol, out = self.program.solve_qp(self.q, self.v, self.t, h, q_lin, self.z, self._lam_qp,
                                         curvature, y_imp, jacobian_at, coulomb, plugin)
        if not (implicit or friction):
            return sol, out
        limit = max(st.implicit_iterations if implicit else 0,
                    st.friction_iterations if friction else 0)
        met = True
        for it in range(limit):
            if not np.isfinite(out[-1][2]):
                break
            met = not friction or self._normal_forces_met(out)
            if met and (not implicit or self._implicit_met(out)):
                break
            # the impulse at sol.y holds while the memory does (friction's normal forces)
            sol, out = self.program.solve_qp(self.q, self.v, self.t, h, q_lin, self.z,
                                             -np.concatenate((sol.P_eq, sol.P_g)), curvature, sol.y,
                                             jacobian_at, coulomb, plugin,
                                             sol.b_imp if met else None)
        else:
            if friction and limit:
                met = self._normal_forces_met(out)
        sol.iterations = it + 1 if limit else 1
        return (sol, out) if met else self._normal_forces_failed((sol, out))

    def _lagged_normal_impulses(self, h, curvature):
        """The normal impulses bounding the clearance contacts' friction in a solve: an
        iterate's (``curvature``'s), on a step's first solve the last step's; None without
        friction."""
        if not self.program.has_friction:
            return None
        P_n = curvature[0] if curvature is not None else (
            None if self._contact_force is None else self._contact_force * h)
        return np.zeros(self.cs.n_gap) if P_n is None else P_n

    def _implicit_met(self, out) -> bool:
        """Whether the implicit iterations' EOM residual is within ``implicit_tol`` or, in a
        step so short that its momenta's round-off over h is above that, within that."""
        return bool(out[-1][2] <= max(self.settings.implicit_tol, out[-1][8]))

    def _memory(self) -> np.ndarray:
        """The step program's memory: the elements' memory, and for the midpoint step the
        last step's velocity change over its h."""
        return np.concatenate((self.z, self._accel)) if self.program.midpoint else self.z

    def _y_guess(self, h):
        """Scaled end-of-step velocity guess for the implicit linearisation: the last step's
        velocity change repeated (exact for constant acceleration), not stretched over a
        longer step (after an impact's short steps their acceleration is the contact's)."""
        v = self.v if self._dv is None else self.v + self._dv * min(h / self._dv_h, 1.0)
        return self.cs.L.T @ v
