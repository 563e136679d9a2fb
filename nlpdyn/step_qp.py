"""The fixed-h step as one QP solved by a CasADi conic plugin (or its KKT system by sparse
LDL^T), fused with the end-of-step checks in one call (``StepProgram``'s QP form)."""
from __future__ import annotations

import casadi as ca
import numpy as np

from .fastcall import silenced_stdout
from .sparse_solves import kkt_solve, pseudo_inverse_solve
from .step_gaps import FRICTION_DIRECTIONS
from .step_solution import StepSolution

_NO_ARRAY = np.zeros(0)

_QP_OPTIONS = {
    "qrqp": {"print_iter": False, "print_header": False, "print_info": False},
    # full linear-independence tests: cold starts (a run's first QP, a retry's) failed to
    # initialise on gap rows that vanish (a bore centred on its pin)
    "qpoases": {"printLevel": "none", "sparse": False, "enableFullLITests": True},
    "osqp": {"osqp": {"verbose": False, "eps_abs": 1e-12, "eps_rel": 1e-12, "max_iter": 100000}},
    "daqp": {},
    "highs": {"highs": {"output_flag": False}},
    "proxqp": {"proxqp": {"backend": "sparse", "eps_abs": 1e-12, "eps_rel": 0.0}},
}


class QPForm:
    """The QP solves of :class:`~nlpdyn.step_nlp.StepProgram`, built on first use."""

    # ------------------------------------------------------------------ QP plugin
    def reset_qp(self):
        """Forget the conic QP solvers (rebuilt on their next use, not counted as builds): a
        solver's memory of a failed attempt must not carry into the next one. The "direct"
        KKT solves keep nothing between calls and stay."""
        self._qp = {key: f for key, f in self._qp.items() if key[0] == "direct"}
        self._conic.clear()

    def solve_qp(self, q0, v0, t0, h, q_lin, z, warm=None, curvature=None, y_imp=None,
                 jacobian_at="start", friction=None, plugin=None, b_imp=None):
        """Fixed h: prepare the rows, solve the QP with a conic plugin, finish: one call.

        ``curvature`` = (P_g, y_lin) adds (y - y_lin)^T C (y - y_lin) / 2 to the objective,
        C = ``gap_curvature(jacobian_at)``(q0, v0, h, q_lin, z, P_g), for sequential-QP iterations
        about y_lin. ``y_imp``: where the implicit force elements are linearised (default: the
        start velocity). ``friction``: the normal impulses P_n bounding the friction impulses
        (lagged: the previous iterate's or step's; default ``curvature``'s, else none).
        ``plugin``: the conic plugin (default ``qp_solver``), or "direct" without gaps: the
        KKT system by sparse LDL^T (``kkt_solve``). ``b_imp``: the implicit elements'
        impulse at ``y_imp`` where the last solve, at the same memory, gave it (a Newton
        iterate after the first; ``ImplicitLinearisation``). Returns (StepSolution, finish
        outputs).
        """
        plugin = plugin or self.qp_solver
        lam0 = np.zeros(self.n_eq + self.n_gap) if warm is None else warm
        P_curv, y_lin = (np.zeros(self.n_gap), np.zeros(self.nv)) if curvature is None else curvature
        if self.has_implicit:
            if y_imp is None:
                y_imp = self.cs.L.T @ np.asarray(v0, dtype=float)
            H_imp, b_lin = self.implicit(q0, v0, t0, h, y_imp, z, b_imp)
        else:
            H_imp, b_lin = _NO_ARRAY, _NO_ARRAY
        args = (q0, v0, t0, h, q_lin, lam0, P_curv, y_lin, z, H_imp, b_lin)
        P_n = None
        if self.has_friction:
            P_n = P_curv if friction is None else friction
            args += (P_n,)
        key = (plugin, jacobian_at)
        if key not in self._qp:
            with silenced_stdout():     # qpOASES prints its banner when it allocates memory
                self._qp[key] = self._build_qp(plugin, jacobian_at)
                y, lam, P_t, f_err, b_end, *out = self._qp[key](*args)
        else:
            y, lam, P_t, f_err, b_end, *out = self._qp[key](*args)
        P_eq, P_g = -lam[:self.n_eq], -lam[self.n_eq:]
        return (StepSolution(h, y, P_eq, P_g, plugin, "solved", -1, True, 0,
                             P_t.reshape(self.n_gap, 3, order="F"), float(f_err[0]), P_n, b_end),
                out)

    def _build_qp(self, plugin, jacobian_at):
        cs, nv, ne, ng = self.cs, self.nv, self.n_eq, self.n_gap
        opts = {"error_on_fail": False, "verbose": False}
        opts.update(_QP_OPTIONS.get(plugin, {}))
        opts.update(self.settings.qp_options or {})
        Q0, V0, QL = ca.MX.sym("q0", cs.nq), ca.MX.sym("v0", nv), ca.MX.sym("q_lin", cs.nq)
        T0, H, LAM = ca.MX.sym("t0"), ca.MX.sym("h"), ca.MX.sym("lam0", ne + ng)
        P_CURV, Y_LIN = ca.MX.sym("P_curv", ng), ca.MX.sym("y_lin", nv)
        Z = ca.MX.sym("z", self.n_program_memory)
        H_IMP = ca.MX.sym("H_imp", self.implicit.nnz if self.has_implicit else 0)
        B_LIN = ca.MX.sym("b_lin", nv if self.has_implicit else 0)
        # I + C stays positive definite: "start" C is positive semidefinite (the circle's
        # curvature is), "iterate" C's only indefinite part is the impulses times the lever
        # arms' curvature, small against the mass-scaled identity
        C = (self.gap_curvature(jacobian_at)(Q0, V0, H, QL, Z, P_CURV) if ng
             else ca.MX(nv, nv))
        A, c, A_g, c_g, y_free, Pi_g_local = self.prepare_sparse(jacobian_at).call(
            [Q0, V0, T0, H, QL, Z])
        A, c = self._kept(A, c)
        nk = A.size1()
        H_qp, g_qp = ca.MX.eye(nv) + C, -y_free - C @ Y_LIN
        if self.has_implicit:
            H_qp, g_qp = H_qp + ca.MX(self.implicit.pattern, H_IMP), g_qp - B_LIN
        A_qp = ca.vertcat(A, A_g)
        lam_eq0, lam_g0 = ca.vertsplit(LAM, [0, ne, ne + ng])
        lam_a0 = ca.vertcat(self._kept(lam_eq0, lam_eq0)[0], lam_g0)
        lba, uba, x0 = ca.vertcat(-c, -c_g), ca.vertcat(-c, ca.DM.inf(ng)), y_free
        nf, nr = self.n_fric, FRICTION_DIRECTIONS * self.n_fric
        friction_in, friction_names = [], []
        if nf:
            # x = [y; s]: per frictional gap row a slack s_j >= d_i . w_j(y), cost mu P_n s_j
            P_FR = ca.MX.sym("P_fric", ng)
            friction_in, friction_names = [P_FR], ["P_fric"]
            A_f, cost, _ = self.friction_rows(jacobian_at).call([Q0, V0, H, QL, Z, y_free, P_FR])
            slack = ca.DM(np.kron(np.eye(nf), np.ones((FRICTION_DIRECTIONS, 1))))
            A_qp = ca.vertcat(ca.horzcat(A_qp, ca.MX(nk + ng, nf)), ca.horzcat(-A_f, slack))
            H_qp, g_qp = ca.diagcat(H_qp, ca.MX(nf, nf)), ca.vertcat(g_qp, cost)
            lba, uba = ca.vertcat(lba, ca.DM.zeros(nr)), ca.vertcat(uba, ca.DM.inf(nr))
            x0, lam_a0 = ca.vertcat(y_free, ca.DM.zeros(nf)), ca.vertcat(lam_a0, ca.DM.zeros(nr))
        # sparse patterns (joints and contacts couple neighbouring bodies); the plugin decides
        # whether it works dense or sparse
        pattern_H = H_qp.sparsity() + ca.Sparsity.diag(nv + nf)
        # one solver per sparsity: the rows of every jacobian_at share its memory (qpOASES hot
        # starts each re-solve from the last working set; cold, it failed to initialise on
        # gap rows that vanish, a bore centred on its pin)
        if (plugin, jacobian_at) not in self._qp_built:
            self._qp_built.add((plugin, jacobian_at))
            self.build_count += 1
        if plugin == "direct":
            # no gaps, no friction: the QP is its KKT system
            y, lam = kkt_solve(ca.project(H_qp, pattern_H), g_qp, A, c, "step_kkt",
                               self.settings.regularization, self.settings.refinement_steps)
        else:
            key = (plugin, _pattern_key(pattern_H), _pattern_key(A_qp.sparsity()))
            if key not in self._conic:
                self._conic[key] = ca.conic(f"step_qp_{plugin}_{len(self._conic)}", plugin,
                                            {"h": pattern_H, "a": A_qp.sparsity()}, opts)
            sol = self._conic[key](h=ca.project(H_qp, pattern_H), g=g_qp, a=A_qp,
                                   lam_a0=lam_a0, x0=x0, lba=lba, uba=uba)
            y, lam = sol["x"][:nv], sol["lam_a"]
        P_eq, P_g, beta = ca.vertsplit(-lam, [0, nk, nk + ng, nk + ng + nr])
        args = list(self._finish_args(A, c, A_g, c_g, y, P_eq, P_g, V0))
        P_t, f_work, f_error = ca.MX(ng, 3), ca.MX(ng, 1), ca.MX(0)
        if nf:
            args[2] = args[2] - A_f.T @ beta        # the friction impulses join the EOM check
            y_bar = 0.5 * (self._L.T @ V0 + y)
            P_t, f_work, f_error = self.friction_report(jacobian_at).call(
                [Q0, V0, QL, Z, y_free, P_FR, H, y, P_g, beta, y_bar])
        core = self.finish_core.function(Q0, V0, T0, H, y, self._full(P_eq), P_g, *args, y_free,
                                         C @ (y - Y_LIN), Z, Pi_g_local, f_work)
        carried = ca.MX(0)
        if cs.n_carry:
            # the nodal velocity's excess u - v = P c: the carried impulse c less what the
            # joints take of it (P projects onto their rows at the start of the step)
            c_y = core[-2]
            if nk:
                solve = pseudo_inverse_solve(ca.mtimes(A, A.T), "carry_ls",
                                             self.settings.regularization,
                                             self.settings.refinement_steps)
                c_y = c_y - A.T @ solve(A @ c_y)
            carried = ca.dot(c_y, y) + 0.5 * ca.dot(c_y, c_y)
        out, b_end = self._finished(core, self.finish_tail.function, carried), core[-3]
        fn = ca.Function(f"step_qp_{jacobian_at}",
                         [Q0, V0, T0, H, QL, LAM, P_CURV, Y_LIN, Z, H_IMP, B_LIN, *friction_in],
                         [y, ca.vertcat(-self._full(P_eq), -P_g), ca.densify(ca.vec(P_t)),
                          ca.densify(f_error), b_end, *out],
                         ["q0", "v0", "t0", "h", "q_lin", "lam0", "P_curv", "y_lin", "z", "H_imp",
                          "b_lin", *friction_names],
                         ["y", "lam_a", "P_t", "friction_error", "b_imp", *self.finish_names])
        return self._hot(fn)


def _pattern_key(sparsity: ca.Sparsity) -> tuple:
    """A hashable copy of a sparsity pattern."""
    colind, row = sparsity.get_ccs()
    return sparsity.size1(), sparsity.size2(), tuple(colind), tuple(row)
