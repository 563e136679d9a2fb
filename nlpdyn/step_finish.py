"""The end of a step: the end-of-step state, the checks the stepper makes on every step and the
step's energy ledger, from the linear rows at a solution (``StepProgram``'s part that every
solver form shares)."""
from __future__ import annotations

import casadi as ca
import numpy as np

from .fastcall import FastFunction
from .joints.ideal import Joint
from .sparse_solves import _max_abs, _min_or_inf, _segment_sums
from .step_solution import _CSE, StepSolution

# round-off of the EOM residual's momenta, per unit of the largest (a few roundings each)
EOM_ROUNDOFF = 16 * np.finfo(float).eps


class StepFinish:
    """The finish functions of :class:`~nlpdyn.step_nlp.StepProgram` (built in its
    constructor) and the energy ledger they fill."""

    def _build_finish(self, q0, v0, t0, h, y, z, z_el, v, q_b, h_k, qdot, b_imp, step, L, Linv,
                      Linv_T):
        """Build ``finish_core`` and ``finish_tail`` from the step's symbols."""
        cs = self.cs
        nv, ne, ng = self.nv, self.n_eq, self.n_gap
        # Finish: end-of-step state and the checks the stepper makes on every step, from the
        # linear rows at the solution (rows = A y + c) and the impulses A^T P, formed sparse by
        # the caller. In two parts: the core evaluates everything once (the implicit elements
        # at the solution among it) and gives the impulse the energy-consistent elements carry
        # into the next step (h G / 2, on the velocities at q0, scaled); the caller takes its
        # energy (``carried_energy``), which the tail adds to the ledger and the checks.
        P_eq, P_g = ca.SX.sym("P_eq", ne), ca.SX.sym("P_g", ng)
        rows_eq1, rows_g1 = ca.SX.sym("rows_eq", ne), ca.SX.sym("rows_g", ng)
        impulse, y_free_in = ca.SX.sym("impulse", nv), ca.SX.sym("y_free", nv)
        Pi_g_local = ca.SX.sym("Pi_g_local", ng, 12)
        friction_work = ca.SX.sym("friction_work", ng)
        shift = ca.SX.sym("shift", nv)  # C (y - y_lin) of a curvature-corrected solve, else 0
        q1 = q_b + h_k * qdot
        t1 = t0 + h
        eom = L @ (y - y_free_in - b_imp + shift - impulse) / h
        norms = ca.vertcat(*[ca.norm_2(q1[7 * k + 3:7 * k + 7]) - 1 for k in range(cs.n_bodies)])
        gap1 = cs.gap(q1)
        # Relative residuals for the stepper's acceptance test (NaN-safe: NaN fails "<"):
        # linearised rows against the velocity scale, EOM against the force scale.
        v_scale = 1 + _max_abs(v) + _max_abs(Linv_T @ y_free_in)
        f_scale = cs.total_mass * (np.linalg.norm(cs.system.gravity) + 1) + \
            _max_abs(L @ (y - y_free_in)) / h
        ledger = self._ledger_increments(q0, v0, t0, h, q1, v, P_eq, P_g,
                                         Aybar_eq := ca.SX.sym("Aybar_eq", ne),
                                         Aybar_g := ca.SX.sym("Aybar_g", ng), friction_work, 0)
        carry = (ca.vertcat(h, 0, *step.wrenches) if cs.n_carry else ca.SX(0, 1))
        carried_start = z[cs.carry_energy_slot] if cs.n_carry else 0
        moving = [cs.kinetic(v0) + _stored(cs, t0, q0, z_el) + ca.fabs(carried_start),
                  cs.kinetic(v) + _stored(cs, t1, q1, z_el)]
        c_end = Linv @ (0.5 * h * ca.sum2(step.C)) if cs.n_carry else ca.SX.zeros(nv)
        # the EOM residual's round-off: its momenta's, over h (a short step's floor)
        momenta = [_max_abs(L @ x) for x in (y, y_free_in, b_imp, impulse, shift)]
        eom_floor = EOM_ROUNDOFF * sum(momenta[1:], momenta[0]) / h / f_scale
        check = ca.vertcat(_max_abs(rows_eq1) / v_scale, -ca.fmin(_min_or_inf(rows_g1), 0) / v_scale,
                           _max_abs(eom) / f_scale, _max_abs(norms), ca.sum1(q1) + ca.sum1(v),
                           eom_floor)
        core_in = [q0, v0, t0, h, y, P_eq, P_g, rows_eq1, rows_g1, impulse, Aybar_eq, Aybar_g,
                   y_free_in, shift, z, Pi_g_local, friction_work]
        core_names = ["q0", "v0", "t0", "h", "y", "P_eq", "P_g", "rows_eq", "rows_g", "impulse",
                      "Aybar_eq", "Aybar_g", "y_free", "shift", "z", "Pi_g_local", "friction_work"]
        self.finish_names = ["q", "v", "mu", "lam", "eom_residual", "constraint_violation",
                             "norm_error", "min_gap", "gap", "complementarity", "Pi_g", "gap_lin",
                             "ledger", "carry", "phi", "check"]
        core_out = [q1, v, P_eq / h, P_g / h, _max_abs(eom), _max_abs(cs.phi(q1, t1)),
                    _max_abs(norms), _min_or_inf(gap1), gap1, _max_abs(P_g * rows_g1),
                    Pi_g_local, h_k * rows_g1, ca.densify(ledger), ca.densify(carry),
                    ca.fabs(cs.phi(q1, t1)), check, ca.densify(b_imp), ca.densify(c_end),
                    ca.vertcat(*moving)]
        # The implicit terms and the core share the step's forces (the energy-consistent
        # elements' discrete gradient above all): their common subexpressions are eliminated
        # in one pass over both (the pass costs ~6 us per operation, per function it is
        # given), and the functions are built from its result
        if self.implicit is not None:
            shared = ca.cse([*self.implicit.outputs, *core_out])
            self.implicit.build(shared[:len(self.implicit.outputs)], self._hot)
            core_out, core_options = shared[len(self.implicit.outputs):], {}
        else:
            core_options = _CSE
        self.finish_core = FastFunction(ca.Function(
            "step_finish_core", core_in, core_out,
            core_names, self.finish_names[:-1] + ["check_core", "b_imp", "carried_impulse",
                                                  "moving"], core_options))
        # the tail: the carried energy E joins the ledger's potential residual (``_ledger_
        # increments``), the carry, the energy created and in play, and the end's energy. The
        # discretisation's energy (the ledger's residual parts and ideal joints' work, which
        # is none in the limit) and the energy in play: kinetic and stored (every element but
        # gravity, and what the energy-consistent elements carry) at both ends, gravity over
        # the model's size, every agent's work in the step; and the mechanical energy the
        # step moves, kinetic and stored at its larger end (the run's scale)
        n_led, n_el = ledger.numel(), len(cs.force_elements)
        ledger_in, carry_in = ca.SX.sym("ledger", n_led), ca.SX.sym("carry", carry.numel())
        moving_in, carried_end = ca.SX.sym("moving", 2), ca.SX.sym("carried_energy")
        ledger_full = ca.vertcat(ledger_in[:n_led - 2], ledger_in[n_led - 2] + carried_end,
                                 ledger_in[n_led - 1])
        carry_full = (ca.vertcat(carry_in[0], carried_end, carry_in[2:]) if cs.n_carry
                      else carry_in)
        ideal = [2 * n_el + j for j, r in enumerate(cs.constraint_rows) if isinstance(r.element, Joint)]
        created = ca.sum1(ledger_full[ideal + [n_led - 3, n_led - 2, n_led - 1]])
        moving_end = moving_in[1] + ca.fabs(carried_end)
        in_play = (moving_in[0] + moving_end
                   + cs.total_mass * np.linalg.norm(cs.system.gravity) * cs.model_size
                   + ca.sum1(ca.fabs(ledger_full)))
        check_in = ca.SX.sym("check_core", check.numel())
        self.finish_tail = FastFunction(ca.Function(
            "step_finish_tail", [ledger_in, carry_in, check_in, moving_in, carried_end],
            [ledger_full, carry_full,
             ca.vertcat(check_in[:5], created, in_play, ca.fmax(moving_in[0], moving_end),
                        check_in[5:])],
            ["ledger_core", "carry_core", "check_core", "moving", "carried_energy"],
            ["ledger", "carry", "check"], _CSE))

    # ------------------------------------------------------------------ energy ledger
    def ledger_layout(self):
        """Names of the entries of ``finish``'s "ledger" output: per force element its work
        and its conservative part's work ("work", "conservative"), per bilateral element the
        work of its impulses, per gap row the work of its normal impulse, per gap row the work of
        its friction impulse ("friction"; 0 without friction), then "gyroscopic",
        "potential" (the conservative forces' work plus the change of the stored energy) and
        "solver" (the work of the EOM residual)."""
        cs = self.cs
        return ([("work", el.name) for el in cs.force_elements] +
                [("conservative", el.name) for el in cs.force_elements] +
                [("joint", r.name) for r in cs.constraint_rows] +
                [("gap", j) for j in range(cs.n_gap)] +
                [("friction", j) for j in range(cs.n_gap)] +
                [("gyroscopic", None), ("potential", None), ("solver", None)])

    def _ledger_increments(self, q0, v0, t0, h, q1, v1, P_eq, P_g, Aybar_eq, Aybar_g,
                           friction_work, carried_end):
        """One step's energy ledger (``ledger_layout``): every agent's impulse times the step's
        mean velocity, which makes the kinetic energy balance exact (``nlpdyn.assembly``);
        ``friction_work`` per gap row is computed the same way by the caller.
        ``carried_end``: the energy of the impulse the energy-consistent elements carry into
        the next step (the memory holds this step's start value)."""
        cs = self.cs
        t1 = t0 + h
        v_bar = 0.5 * (v0 + v1)
        step = self._step
        consistent = [j for j, *_ in cs.consistent]
        # the energy-consistent elements' carried force's work on the nodal velocities (its
        # conservative part h G_V . v1 = -dV, ``CompiledSystem.step_forces``); the rest of
        # their carried impulse's work on v_bar, and the change of the energy carried into
        # the next step (``carried_energy``), go with the conservative forces' residual
        applied = h * (step.Q.T @ v_bar)
        conservative = h * (step.Q_V.T @ v_bar)
        carried = ca.DM(0)
        if consistent and not self.midpoint:       # the midpoint step carries nothing
            # Q_V of these elements is their carried part: half the last step's force and
            # half this one's (the discrete gradient and a "split" damping); its work on
            # the nodal velocities is h C . v1, of which h G_V . v1 = -dV
            nodal = h * (step.C[:, consistent].T @ v1)
            carried = (ca.sum1(conservative[consistent]) - ca.sum1(nodal)
                       + carried_end - self._sym["z"][cs.carry_energy_slot])
            applied[consistent] = applied[consistent] - conservative[consistent] + nodal
            conservative[consistent] = h * (step.G_V[:, consistent].T @ v1)
        joints = self._joint_sum() @ (P_eq * Aybar_eq)
        gaps = P_g * Aybar_g
        gyroscopic = -h * ca.dot(cs.gyroscopic(self._sym["v_f"]), v_bar)
        z_el = self._sym["z"][:cs.n_history]
        potential = (ca.sum1(conservative) + cs.potential(t1, q1, z_el) - cs.potential(t0, q0, z_el)
                     + carried)
        solver = (cs.kinetic(v1) - cs.kinetic(v0) - h * ca.sum1(step.Q.T @ v_bar)
                  - ca.sum1(joints) - ca.sum1(gaps) - ca.sum1(friction_work) - gyroscopic)
        return ca.vertcat(applied, conservative, joints, gaps, friction_work, gyroscopic,
                          potential, solver)

    def _finish_args(self, A, c, A_g, c_g, y, P_eq, P_g, v0):
        """The finish inputs that need the rows (sparse; A, c, P_eq on the kept joint rows):
        rows at y, the impulses A^T P, and A y_bar, A_g y_bar at the step's mean scaled
        velocity (its energy ledger), joint rows scattered back to all rows."""
        y_bar = 0.5 * (self._L.T @ v0 + y)
        return (self._full(A @ y + c), A_g @ y + c_g, A.T @ P_eq + A_g.T @ P_g,
                self._full(A @ y_bar), A_g @ y_bar)

    def _joint_sum(self) -> ca.DM:
        """Sums the joint rows' entries per joint (one row per joint)."""
        return _segment_sums([(r.start, r.stop) for r in self.cs.constraint_rows], self.cs.n_eq)

    def finish_step(self, q0, v0, t0, h, q_lin, z, sol: StepSolution, jacobian_at="start",
                    curvature=None):
        """End-of-step state and checks for a solution found outside the fused calls."""
        A, c, A_g, c_g, y_free, Pi_g_local = self.prepare(jacobian_at)(q0, v0, t0, h, q_lin, z)
        shift = np.zeros(self.nv)
        if curvature is not None and self.n_gap:
            P_curv, y_lin = curvature
            shift = (self.gap_curvature_dense(jacobian_at)(q0, v0, h, q_lin, z, P_curv)[0]
                     @ (sol.y - y_lin))
        A, A_g = A.reshape(self.n_eq, self.nv), A_g.reshape(self.n_gap, self.nv)
        kept = (np.ones(self.n_eq) if self._select is None
                else np.asarray(ca.DM(self._select.T) @ ca.DM.ones(self._select.size1())).ravel())
        y, y_bar = sol.y, 0.5 * (self.cs.L.T @ np.asarray(v0, dtype=float) + sol.y)
        core = self.finish_core(q0, v0, t0, h, y, sol.P_eq, sol.P_g, kept * (A @ y + c),
                                A_g @ y + c_g, A.T @ sol.P_eq + A_g.T @ sol.P_g,
                                kept * (A @ y_bar), A_g @ y_bar, y_free, shift, z, Pi_g_local,
                                np.zeros(self.n_gap))
        carried = 0.0
        if self.cs.n_carry:
            carried = self.cs.carried_energy(t0, q0, self.Linv_T @ y, self.cs.L @ core[-2])
        return self._finished(core, self.finish_tail, carried)

    @staticmethod
    def _finished(core, tail, carried):
        """The finish's outputs (``finish_names``) from its core's and ``tail``'s (the
        functions' numeric or MX calls) with the carried energy."""
        ledger, carry, check = tail(core[12], core[13], core[15], core[18], carried)
        return [*core[:12], ledger, carry, core[14], check]


def _stored(cs, t, q, z):
    """The energy the force elements other than gravity store at (t, q) with the memory z,
    magnitudes summed."""
    V = cs.element_potentials(t, q, z)
    return ca.sum1(ca.fabs(V[1:])) if V.numel() > 1 else ca.SX(0)
