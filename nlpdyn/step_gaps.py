"""The gap rows' contact normals and their curvature (the contact iterations' Hessian), and
Coulomb friction's rows on the gaps: ``StepProgram``'s contact part."""
from __future__ import annotations

import casadi as ca
import numpy as np

from .contact import ACCEPTED
from .fastcall import FastFunction
from .joints.base import smooth_norm
from .rotations import rotation_matrix
from .step_solution import _CSE, _dense_cached

FRICTION_DIRECTIONS = 8     # sides of the polygon inscribed in each friction disk
# the share of the circle's curvature the start normals' contact iterations keep: their rows do
# not turn with the iterate, yet without it they 2-cycle where the contact force times the
# circle's curvature 1/c rivals m / h^2 (the spinning bar of tests/test_clearance.py)
CURVATURE_HELD = 0.5
_SLIP = 1e-10               # m/s: a relative tangential speed below this is no direction


class GapRows:
    """The contact normals, curvature and friction rows of
    :class:`~nlpdyn.step_nlp.StepProgram`, built on first use."""

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


def _polygon(t1, t2):
    """The FRICTION_DIRECTIONS unit directions of a friction polygon in the plane (t1, t2),
    the first along t1."""
    k = FRICTION_DIRECTIONS
    return [np.cos(2 * np.pi * i / k) * t1 + np.sin(2 * np.pi * i / k) * t2 for i in range(k)]
