"""Least-change solves in closed form: the fixed-h step without gaps (``direct``), the end
velocity's projection onto the joints' rates and the part of a velocity along the joints
(``StepProgram``'s closed forms)."""
from __future__ import annotations

import casadi as ca
import numpy as np

from .fastcall import FastFunction
from .sparse_solves import pseudo_inverse_solve
from .step_solution import StepSolution


class LeastChangeForms:
    """The closed-form solves of :class:`~nlpdyn.step_nlp.StepProgram`, built on first use."""

    # ------------------------------------------------------------------ direct (closed form)
    def solve_direct(self, q0, v0, t0, h, z):
        """Fixed h, no gaps: minimise |y - y_free|^2 s.t. A y + c = 0 in one CasADi call.

        y = y_free - A^T z with W z = A y_free + c, W = A A^T, solved by iterated Tikhonov
        (W + delta I) z_k+1 = ... , which converges to the pseudo-inverse solution, so
        redundant joints are handled. Returns (StepSolution, finish outputs).
        """
        if self._direct is None:
            self._direct = self._build_direct()
            self.build_count += 1
        y, P_eq, *out = self._direct(q0, v0, t0, h, z)
        return StepSolution(h, y, P_eq, np.zeros(0), "direct", "solved", 0, True), out

    def _build_direct(self):
        cs = self.cs
        Q0, V0, T0, H = (ca.MX.sym("q0", cs.nq), ca.MX.sym("v0", self.nv), ca.MX.sym("t0"),
                         ca.MX.sym("h"))
        Z = ca.MX.sym("z", self.n_program_memory)
        A, c, A_g, c_g, y_free, Pi_g_local = self.prepare_sparse().call([Q0, V0, T0, H, Q0, Z])
        A, c = self._kept(A, c)
        n_rows = A.size1()
        y, P = y_free, ca.MX.zeros(n_rows)
        if n_rows:
            # W = A A^T is sparse (joints couple neighbouring bodies)
            solve = pseudo_inverse_solve(ca.mtimes(A, A.T), "direct_ls",
                                         self.settings.regularization,
                                         self.settings.refinement_steps)
            z = solve(A @ y_free + c)
            y = y_free - A.T @ z
            P = -z
        core = self.finish_core.function(
            Q0, V0, T0, H, y, self._full(P), ca.MX.zeros(0),
            *self._finish_args(A, c, A_g, c_g, y, P, ca.MX.zeros(0), V0), y_free,
            ca.MX.zeros(self.nv), Z, Pi_g_local, ca.MX.zeros(self.n_gap))
        out = self._finished(core, self.finish_tail.function, ca.MX(0))
        return self._hot(ca.Function("step_direct", [Q0, V0, T0, H, Z], [y, self._full(P), *out],
                                     ["q0", "v0", "t0", "h", "z"],
                                     ["y", "P_eq", *self.finish_names]))

    def velocity_projection(self) -> FastFunction:
        """(q, t, v) -> the velocity nearest v in the kinetic metric whose joint rows' rates
        vanish at (q, t), velocity constraints' residuals kept: the midpoint step's end
        velocity, so that the state does not depend on the next step's h. Also gives the
        rows' impulses (v_p = v + M^-1 Pi^T P) and each joint's work on the velocity's
        change (the kinetic energy's change, exactly: P . Pi (v + v_p) / 2)."""
        if self._projection is None:
            self._projection = self._build_projection()
            self.build_count += 1
        return self._projection

    def tangential(self) -> FastFunction:
        """(q, t, x) -> x (a velocity-space vector) less its part along the joint rows
        (velocity constraints aside) at (q, t), in the kinetic metric: the error control's
        differences along the joints."""
        if self._tangential is None:
            cs = self.cs
            Q, T, X = ca.MX.sym("q", cs.nq), ca.MX.sym("t"), ca.MX.sym("x", self.nv)
            A, _ = self._kept((ca.DM(self._holonomic) * cs.velocity_jacobian(Q, T)) @ self._Linv_T,
                              ca.MX(self.n_eq, 1))
            Y = self._L.T @ X
            X_t = self._Linv_T @ (Y + self._least_change(A, A @ Y, "tangential_ls")[0])
            self._tangential = FastFunction(ca.Function("tangential", [Q, T, X], [X_t],
                                                        ["q", "t", "x"], ["x_t"]))
            self.build_count += 1
        return self._tangential

    @property
    def _holonomic(self) -> np.ndarray:
        """1 on the joint rows that hold positions, 0 on velocity constraints' rows."""
        C = self.cs.velocity_rows_jacobian.sparsity_out(0)
        holonomic = np.ones(self.n_eq)
        holonomic[sorted(set(C.get_triplet()[0]))] = 0.0
        return holonomic

    def _least_change(self, A, r, name, diagonal=None):
        """(dy, z): the least change dy = -A^T z of the scaled velocities that moves the rows
        A y by -r, (A A^T + diagonal) z = r by ``pseudo_inverse_solve`` (redundant rows
        solvable; ``diagonal``, a vector, keeps zero rows' multipliers zero)."""
        W = ca.mtimes(A, A.T)
        if diagonal is not None:
            W = W + ca.diag(diagonal)
        z = pseudo_inverse_solve(W, name, self.settings.regularization,
                                 self.settings.refinement_steps)(r)
        return A.T @ -z, z

    def _build_projection(self):
        cs = self.cs
        Q, T, V = ca.MX.sym("q", cs.nq), ca.MX.sym("t"), ca.MX.sym("v", self.nv)
        Pi = cs.velocity_jacobian(Q, T)
        rate = ca.DM(self._holonomic.reshape(-1, 1)) * (Pi @ V + cs.phi_t(Q, T))
        A, c = self._kept(Pi @ self._Linv_T, rate)
        if self.n_gap:
            return self._build_contact_projection(Q, T, V, Pi, A, c)
        dy, z = self._least_change(A, c, "projection_ls")
        P = self._full(-z)
        V_p = V + self._Linv_T @ dy
        work = self._joint_sum() @ (P * (Pi @ (0.5 * (V + V_p))))
        return self._hot(ca.Function("velocity_projection", [Q, T, V], [V_p, P, work],
                                     ["q", "t", "v"], ["v_p", "P", "work"]))

    def _build_contact_projection(self, Q, T, V, Pi, A, c):
        """The end velocity's projection with gaps, (q, t, v, held) -> as without, and the
        gaps' impulses, work, rates at the end and the rates' round-off scale (|Pi_g| |v|):
        the joints' rates as in ``_build_projection`` and the rates of the gaps flagged
        ``held`` (1) zero, by the same least change (the active sets are
        ``Stepper._contact_end_velocity``'s)."""
        cs, ng = self.cs, self.n_gap
        held = ca.MX.sym("held", ng)
        Pi_g = cs.gap_jacobian(Q)
        A_all = ca.vertcat(A, held * (Pi_g @ self._Linv_T))
        nk = A.size1()
        # the rows let go are zero rows: a unit diagonal keeps their (zero) multipliers solvable
        dy, z = self._least_change(A_all, ca.vertcat(c, held * (Pi_g @ V)),
                                   "contact_projection_ls",
                                   ca.vertcat(ca.MX.zeros(nk), 1 - held))
        P_k, P_g = ca.vertsplit(-z, [0, nk, nk + ng])
        P = self._full(P_k)
        V_p = V + self._Linv_T @ dy
        mean = 0.5 * (V + V_p)
        work = self._joint_sum() @ (P * (Pi @ mean))
        return self._hot(ca.Function(
            "velocity_projection", [Q, T, V, held],
            [V_p, P, work, held * P_g, P_g * (Pi_g @ mean), Pi_g @ V_p,
             ca.mtimes(ca.fabs(Pi_g), ca.fabs(V))],
            ["q", "t", "v", "held"],
            ["v_p", "P", "work", "P_g", "work_g", "rate_g", "rate_scale"]))
