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
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from .fastcall import FastFunction, dense, silenced_stdout
from .implicit import ImplicitLinearisation
from .jit import Jit, resolve_mode
from .contact import ACCEPTED
from .joints.base import smooth_norm
from .joints.ideal import Joint
from .rotations import G_matrix, rotation_matrix

JACOBIAN_AT = ("start", "iterate", "sustained")
FRICTION_DIRECTIONS = 8     # sides of the polygon inscribed in each friction disk
# the share of the circle's curvature the start normals' contact iterations keep: their rows do
# not turn with the iterate, yet without it they 2-cycle where the contact force times the
# circle's curvature 1/c rivals m / h^2 (the spinning bar of tests/test_clearance.py)
CURVATURE_HELD = 0.5
_SLIP = 1e-10               # m/s: a relative tangential speed below this is no direction
# round-off of the EOM residual's momenta, per unit of the largest (a few roundings each)
EOM_ROUNDOFF = 16 * np.finfo(float).eps
_NO_ARRAY = np.zeros(0)
_CSE = {"cse": True}    # common subexpressions evaluated once (~20 % fewer operations)


@dataclass
class StepSolution:
    """A candidate step: end state, impulses and the solver's own account."""

    h: float
    y: np.ndarray
    P_eq: np.ndarray
    P_g: np.ndarray
    solver: str
    status: str
    iterations: int
    success: bool
    gap_iterations: int = 0
    P_t: np.ndarray = None          # friction impulse per gap row on the child, (n_gap, 3)
    friction_error: float = 0.0     # m: how far the lagged normal impulse and slip direction are
    P_n_used: np.ndarray = None     # the lagged normal impulses the friction cones used
    b_imp: np.ndarray = None        # the implicit elements' scaled impulse at y (QP solves)
    projected: bool = False         # the midpoint step's end velocity already projected


class StepProgram:
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
        L_sp = _block_diagonal(cs.L)
        Linv_sp = _block_diagonal(cs.L, invert=True)             # L^T M^-1 = L^-1
        # numpy side, v = Linv_T @ y: dense below 300 unknowns (scipy's sparse product costs
        # ~10 us a call, more than a small dense one)
        self.Linv_T = Linv_sp.T.toarray() if nv <= 300 else Linv_sp.T.tocsr()
        L, Linv, Linv_T = ca.DM(L_sp), ca.DM(Linv_sp), ca.DM(Linv_sp.T.tocsc())
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

    # ------------------------------------------------------------------ Coulomb friction
    def _friction_geometry(self, jacobian_at):
        """Per frictional gap row: the child's velocity relative to the parent's at the contact
        point, w(y) (global, linear in y; lever arms and contact point at the start of the step),
        the unit normal (the gap gradient on the child's translation) and the tangent basis
        (t1 along the slip at the start of the step, else along the slip w(y_ref) the step
        would take without contact forces, y_ref = y_free: the direction a sticking contact is
        loaded in, else any), as SX of q0, v0, q_lin, y_ref."""
        cs, s = self.cs, self._sym
        q0, v0, y = s["q0"], s["v0"], s["y"]
        q_J = self._held_base       # the midpoint step's lever arms are its midpoint's
        y_ref = ca.SX.sym("y_ref", self.nv)
        self._gap_rows(jacobian_at)
        grad = self._grads[jacobian_at]
        points = cs.contact_points(q_J)
        v_of = lambda yy: self._Linv_T @ yy                       # noqa: E731

        def point_velocity(body, x, vel):
            if body.is_ground:
                return ca.SX.zeros(3)
            k = body.index
            A = rotation_matrix(q_J[7 * k + 3:7 * k + 7])
            arm = x - q_J[7 * k:7 * k + 3]
            return vel[6 * k:6 * k + 3] + ca.cross(A @ vel[6 * k + 3:6 * k + 6], arm)

        def tangential(e, n):
            return e - ca.dot(e, n) * n

        rel, basis = [], []
        for j, _, el in self.friction_gaps:
            parent, child = el.bodies[0], el.bodies[-1]
            x = points[j, :].T
            def w(vel, x=x, parent=parent, child=child):
                return point_velocity(child, x, vel) - point_velocity(parent, x, vel)
            n = (grad[j, 7 * child.index:7 * child.index + 3].T if not child.is_ground
                 else -grad[j, 7 * parent.index:7 * parent.index + 3].T)
            n = n / ca.sqrt(ca.dot(n, n) + 1e-300)
            e_ref, e_start = tangential(w(v_of(y_ref)), n), tangential(w(v0), n)
            other = ca.if_else(ca.fabs(n[0]) < 0.9, ca.DM([1, 0, 0]), ca.DM([0, 1, 0]))
            any_t = tangential(other, n)
            unit = lambda e: e / ca.fmax(ca.norm_2(e), _SLIP)   # noqa: E731
            t1 = ca.if_else(ca.norm_2(e_start) > _SLIP, unit(e_start),
                            ca.if_else(ca.norm_2(e_ref) > _SLIP, unit(e_ref), unit(any_t)))
            rel.append(w(v_of(y)))
            basis.append((n, t1, ca.cross(n, t1)))
        return y_ref, rel, basis

    def friction_rows(self, jacobian_at="start") -> ca.Function:
        """The fixed-h QP's friction rows. Per frictional gap row j a slack s_j >= d_i . w_j(y)
        for the FRICTION_DIRECTIONS unit directions d_i of the tangent plane (d_1 = t1), and the
        objective term mu_j P_n,j s_j: at the optimum s_j is the largest slip component and the
        rows' multipliers beta_i >= 0 sum to mu_j P_n,j, a tangential impulse -sum beta_i d_i
        in the polygon inscribed in the friction disk (maximum dissipation). Outputs: the rows
        d_i . w_j(y) = A_f y, the slacks' costs mu_j max(P_n,j, 0) and the directions (3, k nf)."""
        if jacobian_at not in self._friction:
            s = self._sym
            y_ref, rel, basis = self._friction_geometry(jacobian_at)
            P_n = ca.SX.sym("P_n", self.n_gap)
            k = FRICTION_DIRECTIONS
            dirs = [d for _, t1, t2 in basis for d in _polygon(t1, t2)]
            rows = ca.vertcat(*[ca.dot(dirs[k * f + i], rel[f]) for f in range(self.n_fric)
                                for i in range(k)])
            cost = ca.vertcat(*[mu * ca.fmax(P_n[j], 0) for j, mu, _ in self.friction_gaps])
            self._friction[jacobian_at] = ca.Function(
                f"friction_rows_{jacobian_at}",
                [s["q0"], s["v0"], s["h"], s["q_lin"], s["z"], y_ref, P_n],
                [ca.jacobian(rows, s["y"]), cost, ca.horzcat(*dirs)],
                ["q0", "v0", "h", "q_lin", "z", "y_ref", "P_n"], ["A_f", "cost", "directions"],
                _CSE)
        return self._friction[jacobian_at]

    def friction_report(self, jacobian_at="start") -> ca.Function:
        """After a solve: the tangential impulse per gap row on the child (n_gap, 3; zero rows
        without friction), its work at the step's mean velocity (n_gap) and the friction
        error (m): per frictional row h / m times how far the friction impulse P_t lies
        outside the cone of the solve's own normal impulse, |P_t| - mu P_n, and, while the row
        slips, inside the polygon inscribed in it, cos(pi/k) mu P_n - |P_t|; m the lighter
        body's mass. 0 once the lagged normal impulse is the step's own."""
        key = ("report", jacobian_at)
        if key not in self._friction:
            s = self._sym
            q0, v0, y, h, q_lin = s["q0"], s["v0"], s["y"], s["h"], s["q_lin"]
            y_ref, rel, basis = self._friction_geometry(jacobian_at)
            k, ng = FRICTION_DIRECTIONS, self.n_gap
            P_used, P_new = ca.SX.sym("P_used", ng), ca.SX.sym("P_g", ng)
            beta, y_bar = ca.SX.sym("beta", k * self.n_fric), ca.SX.sym("y_bar", self.nv)
            P_t, work, error = ca.SX.zeros(ng, 3), ca.SX.zeros(ng), ca.SX(0)
            for f, (j, mu, el) in enumerate(self.friction_gaps):
                n, t1, t2 = basis[f]
                P = -sum((beta[k * f + i] * d for i, d in enumerate(_polygon(t1, t2))),
                         ca.SX.zeros(3))
                P_t[j, :] = P.T
                work[j] = ca.dot(P, ca.substitute(rel[f], y, y_bar))
                slip = rel[f] - ca.dot(rel[f], n) * n
                speed = ca.norm_2(slip)
                # slipping by more than gap_tol in the step (below: the solver's round-off)
                sliding = speed * h > self.settings.gap_tol
                bound, size = mu * ca.fmax(P_new[j], 0), ca.norm_2(P)
                # outside the cone of the solve's own normal impulse, or (sliding) inside its
                # inscribed polygon's edges
                inner = np.cos(np.pi / k) * bound
                miss = ca.fmax(size - bound, 0) + ca.if_else(sliding, ca.fmax(inner - size, 0), 0)
                mass = min(b.mass for b in el.bodies if not b.is_ground)
                error = ca.fmax(error, h / mass * miss)
            self._friction[key] = ca.Function(
                f"friction_report_{jacobian_at}",
                [q0, v0, q_lin, s["z"], y_ref, P_used, h, y, P_new, beta, y_bar],
                [ca.densify(P_t), ca.densify(work), error],
                ["q0", "v0", "q_lin", "z", "y_ref", "P_used", "h", "y", "P_g", "beta", "y_bar"],
                ["P_t", "work", "error"], _CSE)
        return self._friction[key]

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
        from scipy import sparse
        rows = np.asarray(rows, dtype=int)
        if len(rows) == self.n_eq:
            self._select = None
            return
        self._select = ca.DM(sparse.csc_matrix((np.ones(len(rows)), (np.arange(len(rows)), rows)),
                                               shape=(len(rows), self.n_eq)))
        self.n_keep = len(rows)

    def _kept(self, A, c):
        """The independent joint rows A y + c (all without a selection)."""
        return (A, c) if self._select is None else (self._select @ A, self._select @ c)

    def _full(self, x):
        """A vector on the kept rows scattered to all joint rows (zeros elsewhere)."""
        return x if self._select is None else ca.densify(self._select.T @ x)

    def _finish_args(self, A, c, A_g, c_g, y, P_eq, P_g, v0):
        """The finish inputs that need the rows (sparse; A, c, P_eq on the kept joint rows):
        rows at y, the impulses A^T P, and A y_bar, A_g y_bar at the step's mean scaled
        velocity (its energy ledger), joint rows scattered back to all rows."""
        y_bar = 0.5 * (self._L.T @ v0 + y)
        return (self._full(A @ y + c), A_g @ y + c_g, A.T @ P_eq + A_g.T @ P_g,
                self._full(A @ y_bar), A_g @ y_bar)

    def _contact_normals(self, sustained: bool) -> ca.Function:
        """(d, d0, g0, closed, P) -> (the gap laws' gradient as the rows take it, n_gap x
        n_coordinates; its derivative in d weighted by the impulses P, n_coordinates square:
        the contact iterations' curvature).

        A flat gap's gradient is 1. A round gap (g = radius - |d|) pushes along -n: n the unit
        vector of d, the iterate's end of the step (``sustained`` False: the "cone" rows) or,
        with ``sustained``, where the gap was closed at the start of the step (g0 within
        ``ACCEPTED`` gap_tol, blended out by 2 of them) and of the step before (``closed``,
        the memory's flag: a gap that closed in the last step is still ending its impact), of
        d0: the start-of-step normal with the gap met at the end (SHAKE's constraint step). Sliding on the circle, the end normal
        takes lam c dphi^2 out of the motion per step; the start normal is as neutral as the
        ideal joint's start-of-step rows. A contact that closes in the step (an impact) keeps
        the end normal (and "cone" takes end normals throughout where a normal turns by more
        than ``TURN_HELD`` in the step: ``contact_turn``). The curvature, the contact
        iterations' Hessian, is
        P (1 - CURVATURE_HELD w) (I - n n^T) / |(1 - w) d + w d0|, w the start normal's weight:
        the circle's P / |d| for the end normal (P dn/dd), part of it for the start normal."""
        key = ("normals", sustained)
        if key not in self._curvature:
            cs = self.cs
            nc, ng = cs.n_coordinates, cs.n_gap
            d, d0 = ca.SX.sym("d", nc), ca.SX.sym("d0", nc)
            g0, closed_before, P = ca.SX.sym("g0", ng), ca.SX.sym("closed", ng), ca.SX.sym("P", ng)
            band = ACCEPTED * self.settings.gap_tol
            # the midpoint step's held rows are linear in y: none of the circle's curvature
            # (its share would act on the end of a step whose iterations stopped short)
            held_share = 1.0 if self.midpoint else CURVATURE_HELD
            grad, curvature = ca.SX(ng, nc), ca.SX(nc, nc)
            for j, (a, b, radius) in enumerate(cs.gap_laws):
                if radius is None:
                    grad[j, a] = 1
                    continue
                w, w0 = d[a:b], d0[a:b]
                held = 0
                if sustained:
                    held = closed_before[j] * ca.fmin(ca.fmax(2 - g0[j] / band, 0), 1)
                direction = (1 - held) * w + held * w0
                size = smooth_norm(direction, radius)
                n = direction / size
                grad[j, a:b] = -n.T
                curvature[a:b, a:b] = (P[j] * (1 - held_share * held)
                                       * (ca.DM.eye(b - a) - n @ n.T) / size)
            self._curvature[key] = ca.Function(
                "contact_normals", [d, d0, g0, closed_before, P], [grad, curvature],
                ["d", "d0", "g0", "closed", "P"], ["grad", "curvature"], _CSE)
        return self._curvature[key]

    def contact_turn(self, q0, q1, z=None) -> float | None:
        """The largest angle (rad) by which a round gap's normal turns from q0 to q1, over the
        round gaps whose start-of-step normal the "sustained" rows hold: closed at q0 (within
        2 ``ACCEPTED`` gap_tol) and, with the memory ``z``, flagged closed the step before.
        None where there is none (the "sustained" rows are then the "start" ones)."""
        cs = self.cs
        if self._turn is None:
            round_gaps = [(j, a, b) for j, (a, b, radius) in enumerate(cs.gap_laws)
                          if radius is not None]
            if not round_gaps:
                self._turn = False
            else:
                s = self._sym
                q1_sym = ca.SX.sym("q1", cs.nq)
                self._turn = (round_gaps, FastFunction(ca.Function(
                    "contact_turn", [s["q0"], q1_sym],
                    [cs.contact_coordinates(s["q0"]), cs.contact_coordinates(q1_sym),
                     cs.gap(s["q0"])], ["q0", "q1"], ["d0", "d1", "g0"], _CSE)))
        if self._turn is False:
            return None
        round_gaps, function = self._turn
        d0, d1, g0 = function(q0, q1)
        held = g0 < 2 * ACCEPTED * self.settings.gap_tol
        if z is not None:
            held &= np.asarray(z)[cs.contact_slots] > 0
        turn = None
        for j, a, b in round_gaps:
            if not held[j]:
                continue
            u, w = d0[a:b], d1[a:b]
            sine = np.linalg.norm(np.cross(u, w)) if b - a == 3 else abs(u[0] * w[1] - u[1] * w[0])
            turn = max(turn or 0.0, float(np.arctan2(sine, u @ w)))
        return turn

    def gap_curvature(self, jacobian_at="start"):
        """C(q0, v0, h, q_lin, P_g): Hessian in y of -P.g(q_end(y))/h_k (h_k the step's drift:
        h, or h / 2 in the midpoint step) as the rows of ``jacobian_at`` see it, at q_lin.
        "start": only the gap laws' own curvature (the circle: P/|d| across the normal)
        through the start-of-step D, constant in the lever arms; "iterate": the full Hessian
        of the gaps. Without it the iterations 2-cycle when large impulses meet strongly
        curved gaps (a bore jammed at both ends: |d| = c has curvature 1/c)."""
        if jacobian_at not in self._curvature:
            cs, s = self.cs, self._sym
            q0, q_lin, h, z = s["q0"], s["q_lin"], s["h"], s["z"]
            P_in = ca.SX.sym("P_g", self.n_gap)
            T_q = ca.jacobian(s["qdot"], s["y"])
            q_J = self._contact_base(jacobian_at)
            if jacobian_at == "iterate":
                hess = T_q.T @ ca.hessian(ca.dot(P_in, cs.gap(q_lin)), q_lin)[0] @ T_q
            else:
                _, curvature = self._contact_normals(jacobian_at == "sustained")(
                    cs.contact_coordinates(q_lin), cs.contact_coordinates(self._held_base),
                    cs.gap(q0), z[cs.contact_slots], P_in)
                B = cs.contact_coordinates_q(q_J) @ T_q
                hess = -B.T @ curvature @ B
            self._curvature[jacobian_at] = ca.Function(
                f"gap_curvature_{jacobian_at}", [q0, s["v0"], h, q_lin, z, P_in], [-s["h_k"] * hess],
                ["q0", "v0", "h", "q_lin", "z", "P_g"], ["C"], _CSE)
        return self._curvature[jacobian_at]

    def gap_curvature_dense(self, jacobian_at="start") -> FastFunction:
        """``gap_curvature`` densified, for calls from Python."""
        return _dense_cached(self._curvature, jacobian_at, self.gap_curvature)

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

    def _joint_sum(self) -> ca.DM:
        """Sums the joint rows' entries per joint (one row per joint)."""
        return ca.DM(_segment_sums([(r.start, r.stop) for r in self.cs.constraint_rows],
                                   self.cs.n_eq))

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

    def _hot(self, f: ca.Function) -> FastFunction:
        """A function called in every step, compiled where ``settings.jit`` asks (in "auto"
        mode, from the cache, else once built: ``Jit.attach``)."""
        if self.jit is None:
            return FastFunction(f)
        fast = FastFunction(self.jit.compile(f))
        self.jit.attach(f, fast)
        return fast

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


def _pattern_key(sparsity: ca.Sparsity) -> tuple:
    """A hashable copy of a sparsity pattern."""
    colind, row = sparsity.get_ccs()
    return sparsity.size1(), sparsity.size2(), tuple(colind), tuple(row)


def pseudo_inverse_solve(W, name, regularization, refinements):
    """r -> z = W^+ r for a sparse symmetric positive semidefinite W = A A^T, as MX: iterated
    Tikhonov, (W + delta I) z_k+1 = (W + delta I) z_k + r - W z_k with delta = regularization
    times W's largest diagonal entry, converges to the pseudo-inverse solution, so redundant
    rows are solvable. The pattern is analysed once, by CasADi's sparse LDL^T."""
    n = W.size1()
    eye = ca.MX(ca.DM.eye(n))
    pattern = W.sparsity() + eye.sparsity()
    W_reg = ca.project(W + regularization * ca.mmax(ca.diag(W)) * eye, pattern)
    solver = ca.Linsol(name, "ldl", pattern)

    def solve(r):
        z = ca.MX.zeros(n)
        for _ in range(refinements):
            z = z + solver.solve(W_reg, r - W @ z)
        return z
    return solve


def kkt_solve(H, g, A, c, name, regularization, refinements):
    """(y, lam) of min y^T H y / 2 + g^T y s.t. A y + c = 0, as MX, for a sparse positive
    definite H: the KKT system H y + A^T lam = -g, A y = -c solved by iterative refinement on
    the quasi-definite [[H, A^T], [A, -delta I]] (delta = regularization times the largest
    diagonal entry of A A^T), whose LDL^T exists in any order (Vanderbei 1995), so CasADi's
    sparse LDL^T analyses the pattern once; the refinements converge to the multipliers of
    least norm, so redundant rows are solvable (as ``pseudo_inverse_solve``)."""
    nv, nk = H.size1(), A.size1()
    eye_v = ca.MX(ca.DM.eye(nv))
    if nk == 0:
        pattern = H.sparsity() + eye_v.sparsity()
        solver = ca.Linsol(name, "ldl", pattern)
        return solver.solve(ca.project(H, pattern), -g), ca.MX(0, 1)
    delta = regularization * ca.fmax(ca.mmax(ca.sum2(A * A)), 1e-300)
    K = ca.blockcat([[H, A.T], [A, ca.MX(nk, nk)]])
    eye_k = ca.MX(ca.DM(ca.Sparsity.diag(nk), 1.0))
    pattern = K.sparsity() + ca.diagcat(eye_v, eye_k).sparsity()
    K_reg = ca.project(K - ca.diagcat(ca.MX(nv, nv), delta * eye_k), pattern)
    solver = ca.Linsol(name, "ldl", pattern)
    rhs = ca.vertcat(-g, -c)
    x = ca.MX.zeros(nv + nk)
    for _ in range(refinements):
        x = x + solver.solve(K_reg, rhs - K @ x)
    return x[:nv], x[nv:]


def _stored(cs, t, q, z):
    """The energy the force elements other than gravity store at (t, q) with the memory z,
    magnitudes summed."""
    V = cs.element_potentials(t, q, z)
    return ca.sum1(ca.fabs(V[1:])) if V.numel() > 1 else ca.SX(0)


def _max_abs(x):
    return ca.mmax(ca.fabs(x)) if x.numel() else ca.DM(0)


def _min_or_inf(x):
    return ca.mmin(x) if x.numel() else ca.DM(np.inf)


def _block_diagonal(L, invert=False):
    """The block-diagonal (3x3 blocks) matrix L as scipy CSC, or its inverse block by block."""
    from scipy import sparse
    blocks = [L[i:i + 3, i:i + 3] for i in range(0, len(L), 3)]
    if invert:
        blocks = [np.linalg.inv(b) for b in blocks]
    return sparse.block_diag(blocks, format="csc") if blocks else sparse.csc_matrix((0, 0))


def _polygon(t1, t2):
    """The FRICTION_DIRECTIONS unit directions of a friction polygon in the plane (t1, t2),
    the first along t1."""
    k = FRICTION_DIRECTIONS
    return [np.cos(2 * np.pi * i / k) * t1 + np.sin(2 * np.pi * i / k) * t2 for i in range(k)]


def _local(vec, element):
    """The 12 entries of an nv-vector on the velocities of ``element``'s first two bodies
    (zeros for the ground): 6 columns each, in the element's body order."""
    parts = []
    for b in element.bodies[:2]:
        parts.append(ca.SX.zeros(6) if b.is_ground else vec[6 * b.index:6 * b.index + 6])
    parts += [ca.SX.zeros(6)] * (2 - len(parts))
    return ca.vertcat(*parts)


def _segment_sums(segments, n):
    """(len(segments), n) sparse 0/1 matrix that sums each [start, stop) segment of a vector."""
    from scipy import sparse
    rows = [i for i, (a, b) in enumerate(segments) for _ in range(a, b)]
    cols = [j for a, b in segments for j in range(a, b)]
    return sparse.csc_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(segments), n))


def _dense_cached(cache, jacobian_at, sparse):
    """The densified FastFunction of ``sparse(jacobian_at)``, built once into ``cache``."""
    key = ("dense", jacobian_at)
    if key not in cache:
        cache[key] = FastFunction(dense(sparse(jacobian_at)))
    return cache[key]
