"""The per-step program of docs/FORMULATION.md, built once per run and re-solved every step.

Unknowns are scaled velocities y = L^T v (M = L L^T), so the Gauss objective has an identity
Hessian and everything is in velocity/impulse units:

    minimise   w(h)/2 |y - y_free(h)|^2 - tie_break * m_total * h / h_ref
    subject to Phi(q-, t-)/h + Phi_q qdot(v) + Phi_t = 0        (ideal joints, drivers)
               (g(q_lin) - held)/h + g'(d(q_lin)) D(q_J) (qdot(v) - (q_lin - q-)/h) >= 0   (gaps)

with y_free = L^T (v- + h M^-1 (Q_A - S)), w(h) = (h_ref/h)^2 (w = 1 when h is fixed) and
qdot(v) the semi-implicit Euler map with the linearised Euler-parameter normalisation. Each gap
is a law g(d) of contact coordinates d(q) (flat: g = d; round: g = c - |d|), D = dd/dq. The
gaps are linearised at q_lin (q- on the first solve of a step, the previous iterate's end of
step during the contact iterations, ``contact.py``), and D is taken at q_J: the start of the
step (``jacobian_at="start"``: impulses along the start-of-step lever arms, the circle exact at
the end of the step) or the iterate itself (``"iterate"``: the end-of-step gap gradient, a
backward-Euler contact normal that dissipates in sustained contact). The round gaps' normal
g'(d) is the iterate's end-of-step normal, except in the ``"sustained"`` rows: a gap closed at
the start of the step and of the step before keeps its start-of-step normal (the gap still met
at the end), which takes no energy out of sliding along the bore (``_contact_normals``).
Implicit force elements add their impulse over the step, linearised in y and iterated to the
end of step (``implicit.py``; energy-consistent: ``CompiledSystem.step_forces``).
``held`` is a start-of-step penetration kept (not pushed out) when the post-step projection
is on, else 0. Impulses P = h mu follow from the multipliers: P = -lam / w. Contact
iterations add the curvature of the rows' nonlinear part, weighted by the previous impulses,
to the objective (a sequential QP; ``gap_curvature``).

Solvers
-------
``direct``   fixed h, no gaps: the least-distance problem in closed form (iterated Tikhonov on
             A A^T, so redundant joints work), fused with the end-of-step checks in one call.
``qp``       fixed h: a CasADi conic plugin (qpoases, qrqp, daqp, ...), fused likewise.
``nlp``      IPOPT on the Gauss program (h fixed or a bounded variable), warm-started.
``explicit`` IPOPT on the seed's form: y, impulses (and h) as variables, EOM as equalities,
             relaxed complementarity P_g * g_lin <= eps.

Layout
------
This module holds the program's symbols, joint and gap rows (``StepProgram``); its parts live
beside it: the end of a step and the energy ledger (``step_finish``), the gap rows' normals,
curvature and friction rows (``step_gaps``), the closed forms (``step_direct``), the QP form
(``step_qp``), the IPOPT forms (``step_ipopt``), the sparse solves they share
(``sparse_solves``) and ``StepSolution`` (``step_solution``).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .fastcall import FastFunction
from .implicit import ImplicitLinearisation
from .jit import Jit, resolve_mode
from .rotations import G_matrix
from .sparse_solves import _block_diagonal, _block_diagonal_csr_t
from .step_direct import LeastChangeForms
from .step_finish import StepFinish
from .step_gaps import GapRows
from .step_ipopt import IpoptForms
from .step_qp import QPForm
from .step_solution import _CSE, _dense_cached

# names that lived here before the program's parts moved to their own modules
from .sparse_solves import (_max_abs, _min_or_inf, _segment_sums,  # noqa: F401, E402
                            kkt_solve, pseudo_inverse_solve)
from .step_finish import EOM_ROUNDOFF  # noqa: F401, E402
from .step_gaps import _SLIP, CURVATURE_HELD, FRICTION_DIRECTIONS  # noqa: F401, E402
from .step_ipopt import _NLP  # noqa: F401, E402
from .step_qp import _NO_ARRAY, _QP_OPTIONS, _pattern_key  # noqa: F401, E402
from .step_solution import StepSolution  # noqa: F401, E402

JACOBIAN_AT = ("start", "iterate", "sustained")


class StepProgram(StepFinish, GapRows, LeastChangeForms, QPForm, IpoptForms):
    """Every form of the per-step program for one compiled system, built once.

    Parameters are the previous state (q0, v0), t0 and h (or h_ref when h is a variable);
    the NLPs are constructed lazily on first use and counted in ``build_count``.
    """

    def __init__(self, compiled, settings):
        self.cs = cs = compiled
        self.settings = settings
        self.build_count = 0
        # the step's functions compiled (``StepperSettings.jit``), else interpreted
        mode = resolve_mode(settings.jit)
        self.jit = Jit(mode=mode) if mode else None
        nq, nv, ne, ng = cs.nq, cs.nv, cs.n_eq, cs.n_gap
        self.nv, self.n_eq, self.n_gap = nv, ne, ng

        q0, v0, q_lin = ca.SX.sym("q0", nq), ca.SX.sym("v0", nv), ca.SX.sym("q_lin", nq)
        t0, h = ca.SX.sym("t0"), ca.SX.sym("h")
        y = ca.SX.sym("y", nv)
        # the elements' memory, then the carry; for the midpoint scheme then the last step's
        # velocity change over its h (its velocity-dependent forces' predictor)
        self.midpoint = settings.scheme == "midpoint"
        self.n_program_memory = cs.n_memory + (nv if self.midpoint else 0)
        z = ca.SX.sym("z", self.n_program_memory)
        # the memory entries that hold the step size (friction's bristles) are h itself, so the
        # step with h as a variable sees its own h
        z_step = z
        if len(cs.step_size_slots):
            z_step = ca.SX(z)
            for k in cs.step_size_slots:
                z_step[int(k)] = h
        z_el = z_step[:cs.n_history]
        # M = L L^T is block diagonal (3x3 blocks): L, L^-1 as sparse matrices
        L, Linv = _block_diagonal(cs.L), _block_diagonal(cs.L, invert=True)  # L^T M^-1 = L^-1
        Linv_T = Linv.T
        # numpy side, v = Linv_T @ y: dense below 300 unknowns (scipy's sparse product costs
        # ~10 us a call, more than a small dense one)
        self.Linv_T = (np.ascontiguousarray(ca.densify(Linv_T).full()) if nv <= 300 else
                       _block_diagonal_csr_t(cs.L, invert=True))
        self._L, self._Linv_T = L, Linv_T
        v = Linv_T @ y
        # the step's base point: where forces and joint rows are taken, and the positions'
        # drift from it to the end (h_k qdot); Moreau's midpoint rule drifts half a step first
        if self.midpoint:
            q_b, t_b, h_k = self._drift(q0, v0, 0.5 * h), t0 + 0.5 * h, 0.5 * h
            v_f = v0 + 0.5 * h * z[cs.n_memory:cs.n_memory + nv]
        else:
            q_b, t_b, h_k, v_f = q0, t0, h, v0
        F0 = cs.forces_explicit(t_b, q_b, v_f, z_el)
        y_free = L.T @ v0 + h * Linv @ F0
        qdot = self._qdot(q_b, v, h_k)
        # What each force element exerts over the step (impulse / h, ``CompiledSystem.
        # step_forces``): the elements evaluated inside the step make b(y) = h L^-1 F_imp(y)
        self.has_implicit = bool(cs.implicit_elements)
        if self.midpoint:
            step = cs.step_forces_midpoint(t0, h, q0, v0, q_b, v_f, q_b + h_k * qdot, v, z_step,
                                           ca.jacobian(qdot, y) @ L.T)
        else:
            step = cs.step_forces(t0, h, q0, v0, q0 + h * qdot, v, z_step,
                                  ca.jacobian(qdot, y) @ L.T)
        in_step = [j for j, el in enumerate(cs.force_elements) if el.evaluation != "explicit"]
        b_imp = h * Linv @ (ca.sum2(step.Q[:, in_step]) if in_step else ca.SX.zeros(nv))
        # the joint rows ask the positions at the end of the step (the midpoint scheme's end
        # velocity is then projected onto the joints' rates, ``velocity_projection``)
        # velocity constraints: the end velocity, or (midpoint) the step's mean velocity
        v_rows = 0.5 * (v0 + v) if self.midpoint else v
        rows_eq = self._joint_rows(q_b, t_b, h_k, v, v_rows)
        if self.midpoint and cs.n_eq:
            # and the rows' curvature along the start velocity's drift, so that the end
            # positions meet them to O(h^3), whatever h was before (velocities compared
            # across steps of different h then see no O(h^2) offset from the joints)
            s_ = ca.SX.sym("s")
            drift = cs.phi(q_b + s_ * self._qdot(q_b, v0, h_k), t_b + s_)
            curvature = ca.substitute(ca.jacobian(ca.jacobian(drift, s_), s_), s_, 0)
            rows_eq = rows_eq + 0.5 * h_k * curvature
        A_eq = ca.jacobian(rows_eq, y)   # independent of y and h
        self._sym = dict(q0=q0, v0=v0, t0=t0, h=h, y=y, q_lin=q_lin, y_free=y_free, z=z,
                         rows_eq=rows_eq, A_eq=A_eq, b_imp=b_imp, qdot=qdot, v_f=v_f, q_b=q_b,
                         h_k=h_k)
        # the base point (t, q) and the velocity the forces see, for the result's reactions
        # and element forces
        self.base_point = FastFunction(ca.Function(
            "base_point", [q0, v0, t0, h, z], [t_b, q_b, v_f], ["q0", "v0", "t0", "h", "z"],
            ["t", "q", "v"], _CSE))
        self._step = step
        self._rows = {}
        self._grads = {}
        self._friction = {}
        # Coulomb friction: the gap rows of clearance joints with friction > 0
        self.friction_gaps = [(j, float(r.element.friction), r.element) for r in cs.gap_rows
                              for j in range(r.start, r.stop) if r.element.friction > 0]
        self.n_fric = len(self.friction_gaps)
        self.has_friction = self.n_fric > 0
        self._prepare = {}
        self._curvature = {}
        # Each joint's generalised force Pi_r^T mu_r along the step's own rows (Pi = d rows/dv)
        # on its own (first two) bodies' velocities, 12 columns: the result's
        # reactions and energy ledger, per step
        mu_in = ca.SX.sym("mu", ne)
        Pi = A_eq @ L.T
        if self.midpoint:       # the same rows at a base point given as (q0, t0)
            Pi = ca.jacobian(self._joint_rows(q0, t0, h, v, v_rows), y) @ L.T
        self.joint_forces = ca.Function(
            "joint_forces", [q0, t0, mu_in],
            [ca.densify(ca.horzcat(*[_local(Pi[r.start:r.stop, :].T @ mu_in[r.start:r.stop],
                                            r.element)
                                     for r in cs.constraint_rows]) if ne else ca.SX(12, 0))],
            ["q0", "t0", "mu"], ["Q"], _CSE)
        assert not self.joint_forces.has_free()
        # LuGre friction's joint normal forces from the same reactions (on the child; minus
        # the parent's where the child is the ground), in one call per Newton iterate
        self.normal_forces = None
        if len(cs.normal_force_slots):
            reactions = []
            for j, ground in zip(cs.friction_joints, cs.friction_child_is_ground):
                r = cs.constraint_rows[j]
                local = _local(Pi[r.start:r.stop, :].T @ mu_in[r.start:r.stop], r.element)
                reactions.append(-local[0:3] if ground else local[6:9])
            self.normal_forces = FastFunction(ca.Function(
                "normal_forces", [q0, t0, mu_in], [cs.friction_normal(q0, ca.horzcat(*reactions))],
                ["q0", "t0", "mu"], ["f_n"], _CSE))

        # Implicit elements in the fixed-h QP, Newton-linearised about an iterate y_imp
        # element by element (``implicit.py``); the stepper iterates until the EOM residual
        # with the end-of-step forces is met
        self.implicit = (ImplicitLinearisation(cs, q0, v0, t0, h, y, z, Linv, b_imp, step.tangent,
                                               step.tangent_V)
                         if self.has_implicit else None)

        # True gaps at the end of a free step (no contact forces): the adaptive scheme's
        # contact prediction.
        v_free = v0 + h * Linv_T @ (Linv @ cs.forces(t_b, q_b, v_f, z_el))
        self.free_gap = FastFunction(ca.Function(
            "free_gap", [q0, v0, t0, h, z], [cs.gap(q_b + h_k * self._qdot(q_b, v_free, h_k))],
            ["q0", "v0", "t0", "h", "z"], ["gap"], _CSE))

        self._build_finish(q0, v0, t0, h, y, z, z_el, v, q_b, h_k, qdot, b_imp, step, L, Linv,
                           Linv_T)
        self._select = None          # sparse selection of independent joint rows (None: all)
        self._qp = {}
        self._conic = {}            # the conic solvers by sparsity (shared memory)
        self._turn = None           # contact_turn's function (False: no round gaps)
        self._qp_built = set()      # (plugin, jacobian_at) built once: later builds are resets
        self.qp_solver = settings.qp_solver or ("qpoases" if nv <= 60 else "proxqp")
        self._value_slope = None
        self._direct = None
        self._projection = None
        self._tangential = None
        self._nlp = {}

    # ------------------------------------------------------------------ the seed's h
    def value_slope(self) -> FastFunction:
        """(Z, dL/dh) of the fixed-h program at a solution (y, lam): Z = |y - y_free|^2 / 2 and
        the partial derivative in h of its Lagrangian Z + lam^T rows(y, h) at fixed y and
        lam, with the gaps linearised at the start of the step (the seed's rows). By the
        envelope theorem these give the seed's objective f(h) = (h_ref/h)^2 Z*(h) - tie h and
        its slope from one fixed-h solve (``Stepper`` bisects on the slope's sign)."""
        if self._value_slope is None:
            s = self._sym
            rows_g, _ = self._gap_rows("start")
            lam = ca.SX.sym("lam", self.n_eq + self.n_gap)
            Z = 0.5 * ca.sumsqr(s["y"] - s["y_free"])
            lagrangian = ca.substitute(Z + ca.dot(lam, ca.vertcat(s["rows_eq"], rows_g)),
                                       s["q_lin"], s["q0"])
            self._value_slope = FastFunction(ca.Function(
                "value_slope", [s["q0"], s["v0"], s["t0"], s["h"], s["y"], lam, s["z"]],
                [Z, ca.jacobian(lagrangian, s["h"])],
                ["q0", "v0", "t0", "h", "y", "lam", "z"], ["Z", "dL_dh"], _CSE))
        return self._value_slope

    # ------------------------------------------------------------------ kinematics
    def _joint_rows(self, q, t, h, v, v_rows):
        """The joint rows of a step drifting ``h`` from (q, t) with velocity v: the joints,
        drivers and programmed constraints at its end linearised at (q, t), Phi / h + Pi
        qdot + Phi_t, then the velocity constraints' rows C v_rows - zeta there."""
        cs = self.cs
        rows = cs.phi(q, t) / h + cs.phi_q(q, t) @ self._qdot(q, v, h) + cs.phi_t(q, t)
        if cs.n_velocity_rows:      # velocity-level rows C v - zeta (zeta is in phi_t)
            rows = rows + cs.velocity_rows_jacobian(q, t) @ v_rows
        return rows

    def _drift(self, q0, v0, h):
        """Positions after drifting ``h`` from q0 with velocity v0, Euler parameters
        normalised (the midpoint scheme's base point)."""
        q = q0 + h * self._qdot(q0, v0, h)
        for k in range(self.cs.n_bodies):
            p = q[7 * k + 3:7 * k + 7]
            q[7 * k + 3:7 * k + 7] = p / ca.norm_2(p)
        return q

    def _qdot(self, q0, v, h):
        """Semi-implicit Euler map v -> qdot with the linearised normalisation row."""
        parts = []
        for k in range(self.cs.n_bodies):
            p0 = q0[7 * k + 3:7 * k + 7]
            w = v[6 * k + 3:6 * k + 6]
            n2 = ca.dot(p0, p0)
            pdot = G_matrix(p0).T @ w / (2 * n2) - p0 * (n2 - 1) / (2 * h * n2)
            parts += [v[6 * k:6 * k + 3], pdot]
        return ca.vertcat(*parts) if parts else ca.SX(0, 1)

    # ------------------------------------------------------------------ contact rows
    def _gap_rows(self, jacobian_at):
        """Symbolic gap rows (linear in y) with dd/dq taken at q- ("start") or q_lin ("iterate")."""
        if jacobian_at not in JACOBIAN_AT:
            raise ValueError(f"jacobian_at must be one of {JACOBIAN_AT}, got {jacobian_at!r}")
        if jacobian_at not in self._rows:
            cs, s = self.cs, self._sym
            q0, q_lin, h = s["q0"], s["q_lin"], s["h"]
            q_J = self._contact_base(jacobian_at)
            if jacobian_at == "iterate":
                d = ca.SX.sym("d", cs.n_coordinates)
                outer = ca.jacobian(cs.gap_of_coordinates(d), d)
                outer = ca.substitute(outer, d, cs.contact_coordinates(q_lin))
            else:
                outer = self._contact_normals(jacobian_at == "sustained")(
                    cs.contact_coordinates(q_lin), cs.contact_coordinates(self._held_base),
                    cs.gap(q0), s["z"][cs.contact_slots], ca.DM.zeros(cs.n_gap))[0]
            grad = outer @ cs.contact_coordinates_q(q_J)
            if self.midpoint:
                # the end of the step q_b + h_k qdot on the gaps, in the joint rows' units
                rows = (cs.gap(q_lin) + grad @ (s["q_b"] + s["h_k"] * s["qdot"] - q_lin)) / s["h_k"]
            else:
                # With the post-step projection on, a penetration present at the start is held
                # (not pushed out through the velocity, which injects energy): the projection
                # removes it.
                held = ca.fmin(cs.gap(q0), 0) if self.settings.projection else 0
                rows = (cs.gap(q_lin) - held) / h + grad @ (s["qdot"] - (q_lin - q0) / h)
            self._rows[jacobian_at] = (rows, ca.jacobian(rows, s["y"]))
            self._grads[jacobian_at] = grad
        return self._rows[jacobian_at]

    def _contact_base(self, jacobian_at):
        """Where a gap row's lever arms are taken: the end iterate q_lin ("iterate"), else
        where the held normals are (``_held_base``)."""
        return self._sym["q_lin"] if jacobian_at == "iterate" else self._held_base

    @property
    def _held_base(self):
        """Where the "sustained" rows take a held contact's normal: the start of the step,
        or, in the midpoint step, its midpoint (either way frictionless sliding along the
        gap does no work, as on the ideal joint)."""
        return self._sym["q_b"] if self.midpoint else self._sym["q0"]

    def prepare_sparse(self, jacobian_at="start") -> ca.Function:
        """The linear rows of a step, A y + c (joints, then gaps), y_free, and each gap row's
        velocity Jacobian on its element's bodies (``Pi_g_local``, n_gap x 12), as one SX
        function with sparse outputs: what the fused calls build on."""
        if jacobian_at not in self._prepare:
            s = self._sym
            rows_g, A_g = self._gap_rows(jacobian_at)
            zero = ca.DM.zeros(self.nv)
            c_eq = ca.substitute(s["rows_eq"], s["y"], zero)
            c_g = ca.substitute(rows_g, s["y"], zero)
            Pi_g = A_g @ self._L.T
            rows = [_local(Pi_g[j, :].T, r.element).T for r in self.cs.gap_rows
                    for j in range(r.start, r.stop)]
            Pi_g_local = ca.vertcat(*rows) if rows else ca.SX(0, 12)
            self._prepare[jacobian_at] = ca.Function(
                f"step_prepare_{jacobian_at}",
                [s["q0"], s["v0"], s["t0"], s["h"], s["q_lin"], s["z"]],
                [s["A_eq"], c_eq, A_g, c_g, s["y_free"], ca.densify(Pi_g_local)],
                ["q0", "v0", "t0", "h", "q_lin", "z"],
                ["A_eq", "c_eq", "A_g", "c_g", "y_free", "Pi_g_local"], _CSE)
        return self._prepare[jacobian_at]

    def prepare(self, jacobian_at="start") -> FastFunction:
        """``prepare_sparse`` densified, for calls from Python (the IPOPT path, guesses)."""
        return _dense_cached(self._prepare, jacobian_at, self.prepare_sparse)

    def set_independent_rows(self, rows):
        """Solve only the joint rows ``rows`` (indices; the others depend on them: an
        overconstrained loop). The dropped rows get zero multipliers. Call before the first
        solve."""
        rows = np.asarray(rows, dtype=int)
        if len(rows) == self.n_eq:
            self._select = None
            return
        self._select = ca.DM(ca.Sparsity.triplet(len(rows), self.n_eq, list(range(len(rows))),
                                                 rows.tolist()), 1.0)
        self.n_keep = len(rows)

    def _kept(self, A, c):
        """The independent joint rows A y + c (all without a selection)."""
        return (A, c) if self._select is None else (self._select @ A, self._select @ c)

    def _full(self, x):
        """A vector on the kept rows scattered to all joint rows (zeros elsewhere)."""
        return x if self._select is None else ca.densify(self._select.T @ x)

    def _hot(self, f: ca.Function) -> FastFunction:
        """A function called in every step, compiled where ``settings.jit`` asks (in "auto"
        mode, from the cache, else once built: ``Jit.attach``)."""
        if self.jit is None:
            return FastFunction(f)
        fast = FastFunction(self.jit.compile(f))
        self.jit.attach(f, fast)
        return fast


def _local(vec, element):
    """The 12 entries of an nv-vector on the velocities of ``element``'s first two bodies
    (zeros for the ground): 6 columns each, in the element's body order."""
    parts = []
    for b in element.bodies[:2]:
        parts.append(ca.SX.zeros(6) if b.is_ground else vec[6 * b.index:6 * b.index + 6])
    parts += [ca.SX.zeros(6)] * (2 - len(parts))
    return ca.vertcat(*parts)
