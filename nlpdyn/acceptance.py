"""Whether a step is accepted (its physical checks on linearised and true quantities), and
what the accepted steps say of the run (its notes on discretisation energy, joint drift and a
free system's momentum)."""
from __future__ import annotations

import numpy as np

from .forces.elements import Gravity
from .joints.excitation import _Driver
from .joints.ideal import Programmed
from .projection import project_positions
from .rotations import rotation_matrices
from .step_nlp import StepSolution


class _Acceptance:
    """Part of :class:`~nlpdyn.Stepper`: the step's acceptance test and the run's notes."""

    # ------------------------------------------------------------------ a step's acceptance
    def _check(self, sol: StepSolution, out) -> tuple[bool, str]:
        """Physical acceptance test of a step (solvers report success on wrong answers)."""
        if not sol.success:
            return False, f"solver status {sol.status!r}"
        check = out[-1]
        if len(self._dropped):
            # rows dropped as redundant must still hold: contradictory constraints (two
            # drivers that disagree) show here
            phi = out[-2]
            dropped = phi[self._dropped].max()
            if not dropped <= 100 * phi[self._kept].max(initial=0.0) + 1e-6:
                worst = self.redundant_rows[int(np.argmax(phi[self._dropped]))]
                return False, (f"joint rows solved as redundant are violated by {dropped:.3e} "
                               f"(worst: {worst[0]} row {worst[1]}): the constraints contradict "
                               "each other")
        if not ((check[:4] < self._check_limits).all() and np.isfinite(check[4])):
            if not np.isfinite(check[:5]).all():
                return False, (f"non-finite numbers in the step's solution (solver status "
                               f"{sol.status!r})")
            labels = ("linearised joint rows violated (relative)", "linearised gap rows violated "
                      "(relative)", "EOM residual (relative)", "Euler-parameter norm error")
            for label, value, limit in zip(labels, check[:4], self._check_limits):
                if not value < limit:
                    return False, f"{label} {value:.3e}"
        return self._check_true_quantities(sol, out)

    def _check_true_quantities(self, sol, out) -> tuple[bool, str]:
        """What the linearised rows cannot see: the energy a step creates beyond every agent's
        work, and joints left apart where no nearby configuration closes them."""
        st = self.settings
        created, in_play = out[-1][5], out[-1][6]
        # round-off of the largest energy of the run is no creation (a decayed motion)
        if created > st.energy_tol * max(in_play, 1e-9 * max(self._energy_high, self._energy_unit)):
            return False, (f"the step creates {created:.3e} J beyond the work of forces, drivers "
                           f"and contacts (more than energy_tol = {st.energy_tol:g} of the "
                           f"{in_play:.3e} J in play)")
        violation = float(out[5][0])
        if violation > st.violation_check * self._model_size:
            t1 = self.t + sol.h
            q_near, _, left, closes = project_positions(self.cs, out[0], t1, tol=1e-10,
                                                        max_iter=10)
            if not closes:
                unmet = _unmet(self.cs, np.asarray(self.cs.phi(q_near, t1)).ravel())
                return False, (f"joints apart by {violation:.3e} after the step (at {unmet}) "
                               "and no nearby configuration closes them "
                               f"(residual {left:.3e} after projection): the constraints "
                               "contradict each other or cannot be met there")
        return True, ""

    # ------------------------------------------------------------------ the run's notes
    def notes(self) -> list[str]:
        """What the run should say of itself (``Result.info["warnings"]``): the initial
        projection's change of the user's state, then :meth:`run_notes`.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> _ = stepper.step()
        >>> stepper.notes()
        []
        """
        return [note for note in (self.initial_projection.get("note", ""),
                                  *self.run_notes()) if note]

    def run_notes(self) -> list[str]:
        """What the steps of the run say of their discretisation: energy, joint drift,
        (free systems) momentum drift, each beyond its setting, and an impact not resolved
        in time (``contact_resolution``).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> _ = stepper.step()
        >>> stepper.run_notes()               # a falling ball's steps resolve it
        []
        """
        return [note for note in (self.discretisation_note(), self.drift_note(),
                                  self.momentum_note(), self.resolution_note()) if note]

    def _record_momentum(self, q1, v1, t1):
        P0, L0, t0, scale, worst = self._momentum
        P, L, now = _momenta(self._momentum_bodies, q1, v1)
        scale = np.maximum(scale, now)
        gravity = self.cs.total_mass * np.asarray(self.system.gravity, dtype=float) * (t1 - t0)
        shares = (np.linalg.norm(P - P0 - gravity) / max(scale[0], 1e-300),
                  np.linalg.norm(L - L0) / max(scale[1], 1e-300))
        share = max(shares) / self.settings.momentum_warning
        if share > worst[0]:
            kind = "linear" if shares[0] >= shares[1] else "angular"
            worst = (share, t1, f"its {kind} momentum drifted by {max(shares):.2%} of the "
                                f"momentum in play")
        self._momentum = (P0, L0, t0, scale, worst)

    def momentum_note(self) -> str:
        """A note when a free system's momentum drifted beyond ``momentum_warning``.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> _ = stepper.step()
        >>> stepper.momentum_note()
        ''
        """
        if self._momentum_bodies is None:
            return ""
        share, when, what = self._momentum[4]
        if not share > 1.0:
            return ""
        return (f"the system is free, yet {what} by t = {when:.6g} (momentum_warning = "
                f"{self.settings.momentum_warning:g}): the steps do not resolve the motion; "
                "a smaller h does")

    def _drift_rows(self):
        """Per constraint element, its distance rows (they move with a body's centre: m) and
        its axis rows (products of unit vectors: rad); and the row violation below which no
        element can reach ``drift_warning`` (its rows' norm is at most sqrt(rows) times it)."""
        cs = self.cs
        J = np.asarray(cs.phi_q(self.q, self.t)).reshape(cs.n_eq, cs.nq)
        centres = np.r_[[7 * k + i for k in range(cs.n_bodies) for i in range(3)]].astype(int)
        distance = np.abs(J[:, centres]).max(axis=1, initial=0.0) > 0
        self._drift_groups = [(r.element.label, np.arange(r.start, r.stop)[distance[r.start:r.stop]],
                               np.arange(r.start, r.stop)[~distance[r.start:r.stop]])
                              for r in cs.constraint_rows if r.size]
        widest = max((r.size for r in cs.constraint_rows), default=1)
        self._drift_floor = (self.settings.drift_warning * min(self._model_size, 1.0)
                             / np.sqrt(max(widest, 1)))

    def _record_drift(self, phi, t1):
        """Keep the joint farthest beyond its share of ``drift_warning`` after this step
        (``phi``: the joint rows' |residuals| at its end)."""
        limit = self.settings.drift_warning
        for label, distance, axis in self._drift_groups:
            apart = np.linalg.norm(phi[distance])
            off = np.linalg.norm(phi[axis])
            share = max(apart / (limit * self._model_size), off / limit)
            if share > self._drift[0]:
                what = (f"{label} apart by {apart:.3g} m ({apart / self._model_size:.2g} of the "
                        f"model's size {self._model_size:.3g} m)" if apart / self._model_size >= off
                        else f"{label} off by {off:.3g} rad (its axis rows)")
                self._drift = (share, t1, what)

    def drift_note(self) -> str:
        """A note when the steps left a joint apart by more than ``drift_warning`` of the
        model's size, or its axes off by more than ``drift_warning`` rad, after a step.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> _ = stepper.step()
        >>> stepper.drift_note()                # no joints, no drift
        ''
        """
        share, when, what = self._drift
        if not share > 1.0:
            return ""
        return (f"the steps left joints apart: {what} at t = {when:.6g}, beyond drift_warning "
                f"= {self.settings.drift_warning:g} (of the model's size, or rad): the steps do "
                "not resolve the motion; a smaller h or projection=True does")

    def discretisation_note(self) -> str:
        """A note when the discretisation's energy (the ledger's residual and the work of
        ideal joints, at its largest over the steps so far) exceeds ``discretisation_warning``
        of the energy in play (the largest kinetic plus stored energy of a step): the steps
        do not resolve the motion.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
        >>> stepper = nd.Stepper(s, h=1e-3)
        >>> _ = stepper.step()
        >>> stepper.discretisation_note()
        ''
        """
        if not len(self.ledger):
            return ""
        share = self.settings.discretisation_warning
        steps = np.arange(len(self.ledger) + 1)
        rows = self.ledger.rows(steps)
        residual = rows["residual"] + sum(rows[f"work:{name}"] for name in self._ideal_joint_names)
        worst = residual[np.argmax(np.abs(residual))]
        # gravity's potential counts by the range it spans (a drop whose energy an impact takes)
        gravity = [work for el, work in zip(self.cs.force_elements,
                                            self.ledger.element_work(steps).values())
                   if isinstance(el, Gravity)]
        in_play = max([self._energy_scale, *(np.ptp(w) for w in gravity)])
        if abs(worst) <= share * max(in_play, 1e-9 * self._energy_unit):
            return ""
        return (f"the discretisation {'removed' if worst < 0 else 'added'} up to "
                f"{abs(worst):.3g} J, more than {share:.0%} of the {in_play:.3g} J "
                "in play (the residual and ideal joints' work in energy_ledger()): the steps "
                "do not resolve the motion; a smaller h does")


def _momentum_bodies(system, cs):
    """Masses and body-frame inertias when the system's momentum is conserved (less
    gravity's impulse): no element touches the ground, every force element but gravity acts
    between bodies, no programmed or velocity constraint; else None."""
    for el in system.elements:
        bodies = getattr(el, "bodies", ())
        if any(b.is_ground for b in bodies) or isinstance(el, Programmed):
            return None
        if not isinstance(el, Gravity) and len({id(b) for b in bodies}) < 2:
            return None
    if not cs.n_bodies:
        return None
    return (np.array([b.mass for b in cs.bodies], dtype=float),
            np.array([b.inertia for b in cs.bodies], dtype=float))


def _momenta(bodies, q, v):
    """Linear momentum, angular momentum about the centre of mass, and the momenta in play
    (the bodies' linear momenta, and their angular momenta about the centre of mass, summed
    by magnitude)."""
    m, J = bodies
    q, v = np.reshape(q, (-1, 7)), np.reshape(v, (-1, 6))
    A = rotation_matrices(q[:, 3:] / np.linalg.norm(q[:, 3:], axis=1, keepdims=True))
    p = m[:, None] * v[:, :3]
    centre = m @ q[:, :3] / m.sum()
    spin = np.einsum("nij,njk,nk->ni", A, J, v[:, 3:])
    orbit = np.cross(q[:, :3] - centre, p - m[:, None] * (p.sum(axis=0) / m.sum()))
    P, L = p.sum(axis=0), (orbit + spin).sum(axis=0)
    in_play = np.array([np.linalg.norm(p, axis=1).sum(),
                        np.linalg.norm(orbit, axis=1).sum() + np.linalg.norm(spin, axis=1).sum()])
    return P, L, in_play


def _unmet(cs, residual) -> str:
    """The elements whose rows a least-squares projection left unmet (beyond 1e-3 of the
    largest |residual|): the constraints that contradict each other, the time-dependent
    ones (drivers, programmed constraints) first, then by residual."""
    rows = [r for r in cs.constraint_rows if r.size]
    worst = {r.element.label: np.abs(residual[r.start:r.stop]).max() for r in rows}
    top = max(worst.values(), default=0.0)
    timed = {r.element.label for r in rows if isinstance(r.element, (_Driver, Programmed))}
    unmet = sorted((label for label, value in worst.items() if value > 1e-3 * top),
                   key=lambda label: (label not in timed, -worst[label]))
    return " and ".join(unmet) if len(unmet) <= 4 else ", ".join(unmet[:4]) + ", ..."
