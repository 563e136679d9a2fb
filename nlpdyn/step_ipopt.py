"""The per-step program as an IPOPT NLP (the Gauss form, or the explicit form with the impulses
as variables; h fixed or a bounded variable), warm-started (``StepProgram``'s NLP forms)."""
from __future__ import annotations

import casadi as ca
import numpy as np

from .step_solution import StepSolution


class IpoptForms:
    """The IPOPT programs of :class:`~nlpdyn.step_nlp.StepProgram`, built on first use."""

    # ------------------------------------------------------------------ NLPs (IPOPT)
    def nlp(self, form: str, variable_h: bool, jacobian_at: str = "start"):
        """The IPOPT program of ``form`` ("gauss" or "explicit"), built on first use.

        With implicit force elements the Gauss objective has no closed form (a non-conservative
        force is not the gradient of anything), so IPOPT solves the explicit form instead.
        """
        if self.has_implicit:
            form = "explicit"
        key = (form, variable_h, jacobian_at)
        if key not in self._nlp:
            self._nlp[key] = self._build_nlp(form, variable_h, jacobian_at)
            self.build_count += 1
        return self._nlp[key]

    def _build_nlp(self, form, variable_h, jacobian_at):
        s = self._sym
        q0, v0, t0, y = s["q0"], s["v0"], s["t0"], s["y"]
        ne, ng, nv = self.n_eq, self.n_gap, self.nv
        h_ref = ca.SX.sym("h_ref")
        if variable_h:
            sigma = ca.SX.sym("sigma")            # h = sigma * h_ref, sigma in [h_min/h_ref, 1]
            h_expr = sigma * h_ref
            weight = 1 / sigma**2
            tie = self.settings.tie_break * self.cs.total_mass * sigma
        else:
            sigma = ca.SX(0, 1)
            h_expr = h_ref
            weight = 1
            tie = 0
        rows_g, A_g = self._gap_rows(jacobian_at)
        # the contact iterations' curvature term, as in the QP (P_curv = 0: none)
        P_curv, y_lin = ca.SX.sym("P_curv", ng), ca.SX.sym("y_lin", nv)
        C = (self.gap_curvature(jacobian_at)(q0, s["v0"], s["h"], s["q_lin"], s["z"], P_curv) if ng
             else ca.SX.zeros(nv, nv))
        sub = lambda e: ca.substitute(e, s["h"], h_expr)  # noqa: E731
        y_free, rows_eq, rows_g = sub(s["y_free"]), sub(s["rows_eq"]), sub(rows_g)
        rows_eq, A_eq = self._kept(rows_eq, s["A_eq"])[0], self._kept(s["A_eq"], s["A_eq"])[0]
        ne = rows_eq.size1()
        b_imp, C, A_g = sub(s["b_imp"]), sub(C), sub(A_g)
        f = 0.5 * weight * ca.sumsqr(y - y_free) + 0.5 * ca.bilin(C, y - y_lin) - tie
        if form == "gauss":
            x = ca.vertcat(y, sigma)
            g = ca.vertcat(rows_eq, rows_g)
            lbg = np.r_[np.zeros(ne), np.zeros(ng)]
            ubg = np.r_[np.zeros(ne), np.full(ng, np.inf)]
            n_pe = n_pg = 0
        elif form == "explicit":
            P_eq, P_g = ca.SX.sym("P_eq", ne), ca.SX.sym("P_g", ng)
            x = ca.vertcat(y, P_eq, P_g, sigma)
            eom = y - y_free - b_imp + C @ (y - y_lin) - A_eq.T @ P_eq - A_g.T @ P_g
            comp = P_g * rows_g
            g = ca.vertcat(eom, rows_eq, rows_g, comp)
            eps = self.settings.complementarity_eps
            lbg = np.r_[np.zeros(nv), np.zeros(ne), np.zeros(ng), np.full(ng, -np.inf)]
            ubg = np.r_[np.zeros(nv), np.zeros(ne), np.full(ng, np.inf), np.full(ng, eps)]
            n_pe, n_pg = ne, ng
        else:
            raise ValueError(f"unknown form {form!r}; use 'gauss' or 'explicit'")
        p = ca.vertcat(q0, v0, t0, h_ref, s["q_lin"], s["z"], P_curv, y_lin)
        opts = {"print_time": False, "error_on_fail": False,
                "ipopt": {"print_level": 0, "sb": "yes", "tol": self.settings.nlp_tol,
                          "max_iter": self.settings.nlp_max_iter,
                          "warm_start_init_point": "yes",
                          "mu_init": self.settings.nlp_mu_init,
                          # rows are in velocity/impulse units already; IPOPT's gradient
                          # scaling made MUMPS report singular KKT systems on the explicit form
                          "nlp_scaling_method": "none",
                          # MUMPS' default pivot tolerance (1e-6) let restoration fail on the
                          # explicit form; 1e-3 was robust in every case measured
                          "mumps_pivtol": 1e-3,
                          # AMD ordering: ~0.3 ms less per solve than the default on these
                          # small KKT systems (benchmarks/bench_steps.py)
                          "mumps_pivot_order": 0,
                          "warm_start_bound_push": 1e-9, "warm_start_mult_bound_push": 1e-9}}
        if not variable_h and not self.has_implicit:
            opts["ipopt"].update({"hessian_constant": "yes", "jac_c_constant": "yes",
                                  "jac_d_constant": "yes"})
        for k, val in (self.settings.nlp_options or {}).items():
            opts["ipopt"][k] = val
        name = f"step_{form}{'_h' if variable_h else ''}_{jacobian_at}"
        solver = ca.nlpsol(name, "ipopt", {"x": x, "p": p, "f": f, "g": g}, opts)
        return _NLP(solver, nv, n_pe, n_pg, ne, ng, variable_h, form, lbg, ubg,
                    None if self._select is None else np.asarray(ca.DM(self._select.T)))

    def solve_nlp(self, form, q0, v0, t0, h_bounds, h_ref, variable_h, q_lin, z,
                  warm=None, jacobian_at="start", curvature=None) -> tuple[StepSolution, dict]:
        """Solve with IPOPT. ``h_bounds`` = (h_lo, h_hi); with ``variable_h`` h = sigma h_ref is
        a variable in those bounds, else h = h_hi. ``curvature`` as in ``solve_qp``."""
        guess = None
        if warm is None:
            guess = self.prepare(jacobian_at)(q0, v0, t0, h_bounds[1], q_lin, z)[4]
        if curvature is None:
            curvature = (np.zeros(self.n_gap), np.zeros(self.nv))
        return self.nlp(form, variable_h, jacobian_at).solve(q0, v0, t0, *h_bounds, h_ref, q_lin,
                                                             z, warm, guess, curvature)


class _NLP:
    """One IPOPT program and the bookkeeping to map its x and multipliers to a step."""

    def __init__(self, solver, nv, n_pe, n_pg, ne, ng, variable_h, form, lbg, ubg, scatter=None):
        self.solver, self.nv, self.n_pe, self.n_pg = solver, nv, n_pe, n_pg
        self.ne, self.ng, self.variable_h, self.form = ne, ng, variable_h, form
        self.scatter = scatter      # kept joint rows -> all rows (None: all rows kept)
        self.lbg, self.ubg = lbg, ubg
        self.nx = nv + n_pe + n_pg + (1 if variable_h else 0)

    def solve(self, q0, v0, t0, h_lo, h_hi, h_ref, q_lin, z, warm, guess, curvature):
        lbx = np.full(self.nx, -np.inf)
        ubx = np.full(self.nx, np.inf)
        if self.n_pg:
            lbx[self.nv + self.n_pe:self.nv + self.n_pe + self.n_pg] = 0
        if self.variable_h:
            lbx[-1], ubx[-1] = h_lo / h_ref, h_hi / h_ref
        else:
            h_ref = h_hi
        args = {"p": np.r_[q0, v0, t0, h_ref, q_lin, z, curvature[0], curvature[1]],
                "lbx": lbx, "ubx": ubx,
                "lbg": self.lbg, "ubg": self.ubg}
        if warm is not None:
            args.update(x0=warm["x"], lam_g0=warm["lam_g"], lam_x0=warm["lam_x"])
            if self.variable_h:
                args["x0"] = np.array(args["x0"], dtype=float).copy()
                args["x0"][-1] = ubx[-1]
        else:
            x0 = np.zeros(self.nx)
            if guess is not None:
                x0[:self.nv] = guess
            if self.variable_h:
                x0[-1] = ubx[-1]
            args["x0"] = x0
        sol = self.solver(**args)
        st = self.solver.stats()
        x = np.asarray(sol["x"]).ravel()
        lam_g = np.asarray(sol["lam_g"]).ravel()
        sigma = x[-1] if self.variable_h else 1.0
        h = sigma * h_ref
        y = x[:self.nv]
        if self.form == "gauss":
            w = 1 / sigma**2
            P_eq = -lam_g[:self.ne] / w
            P_g = -lam_g[self.ne:self.ne + self.ng] / w
        else:
            P_eq = x[self.nv:self.nv + self.n_pe]
            P_g = x[self.nv + self.n_pe:self.nv + self.n_pe + self.n_pg]
        if self.scatter is not None:
            P_eq = self.scatter @ P_eq
        warm_next = {"x": x, "lam_g": lam_g, "lam_x": np.asarray(sol["lam_x"]).ravel()}
        name = "ipopt" if self.form == "gauss" else "ipopt-explicit"
        return (StepSolution(h, y, P_eq, P_g, name, st.get("return_status", "?"),
                             int(st.get("iter_count", -1)), bool(st.get("success", False))),
                warm_next)
