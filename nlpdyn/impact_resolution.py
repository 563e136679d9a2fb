"""Impacts resolved in time (``contact_resolution``): the step shortened where a contact
element closes stiffer than omega h allows, and the record of the impacts left unresolved."""
from __future__ import annotations

import numpy as np

# a step whose Newton iterations are under way in an impact above this many times
# contact_resolution is stopped and retried at the h that resolves it
STIFF_IMPACT = 8.0


class _ImpactResolution:
    """Part of :class:`~nlpdyn.Stepper`: its steps shortened through stiff impacts."""

    @property
    def _substep_floor(self) -> float:
        """The shortest step the resolution takes: h / ``contact_substeps`` of the run's h."""
        return self.h_max / self.settings.contact_substeps

    def _resolved_bounds(self, h_min, h_max):
        """The step's h bounds with the last step's stiffest contact resolved
        (``contact_resolution``): at a fixed h, a whole fraction of what is left to the next
        point of its grid (t0 + k h), so the steps come back to it after the contact."""
        target = self._h_next
        if self.step_control != "fixed":
            return min(h_min, target), min(h_max, target)
        span = min(h_max, self._to_grid())
        if target >= span:
            return span, span
        h = span / min(np.ceil(span / target), self.settings.contact_substeps)
        return h, h

    def _impacts_omega_h(self, h) -> tuple[float, int, float, bool]:
        """omega h of the stiffest contact element in an impact at the last solve's
        linearisation (2 sqrt(lambda), lambda ~ (omega h)^2 / 4 the norm of its stored
        energy's block, ``ImplicitLinearisation.contact_stiffness``, in an impact times the
        square root of its laws' ``loading_stiffness_ratio``) and its index there, (0, -1)
        if none; ``true_omega_h`` the element's own omega h.
        In an impact: closed, and for less than one period 2 pi / omega since it closed. A
        contact closed longer is sustained: the energy-consistent step carries its slow
        loads at any h, and its omega h counts for ``contact_resolution`` /
        ``sustained_resolution`` of it (0 with ``sustained_resolution`` None): its stiff
        vibration is stepped at up to ``sustained_resolution``. An impact of a contact that
        remembers its impact speed counts ``contact_resolution`` / ``hysteresis_resolution``
        of its omega h. Last: whether that element is in an impact."""
        implicit = self.program.implicit
        stiffness = implicit.contact_stiffness
        if not stiffness.any():
            return 0.0, -1, 0.0, False
        stored_omega_h = 2.0 * np.sqrt(np.maximum(stiffness, 0.0))
        periods = (self.t - self._closed_since) * stored_omega_h / (2 * np.pi * h)
        impact = ~(periods >= 1)        # NaN: closes now
        # an impact loads along its laws' loading branch (``ContactLaw.loading_stiffness_
        # ratio``); a sustained contact is measured against settling_resolution, then
        # sustained_resolution
        true_omega_h = np.where(impact, stored_omega_h * implicit.loading_omega_ratio,
                                stored_omega_h)
        scale = np.where(periods < self.settings.settling_periods, self._settling_scale,
                         self._sustained_scale)
        omega_h = true_omega_h * np.where(impact, self._impact_scale, scale)
        i = int(np.argmax(omega_h))
        return float(omega_h[i]), i, float(true_omega_h[i]), bool(impact[i])

    def _stiff_impact_h(self, h) -> float | None:
        """The h at which to retry a step of ``h`` whose implicit elements' Newton iterations
        have not yet met their tolerance in an impact above ``STIFF_IMPACT`` times
        ``contact_resolution`` (at the last solve's linearisation): the impact's resolved h,
        at least h / ``contact_substeps``; None when the step goes on (no such impact, or h
        at that floor already). Newton's iterations on a stiff law's kinks at such an omega
        h take many solves, often in vain, and the step would be shortened after them."""
        limit = self.settings.contact_resolution
        if limit is None or not self.resolves_impacts:
            return None
        floor = self._substep_floor
        if h <= floor * (1 + 1e-9):
            return None
        omega_h, _, _, impact = self._impacts_omega_h(h)
        if not impact or omega_h <= STIFF_IMPACT * limit:
            return None
        return max(h * limit / omega_h, floor)

    def _resolve_contacts(self, outcome, retries, shortened):
        """Re-solve a step whose impact (``_impacts_omega_h``) was stiffer than
        ``contact_resolution`` allows with the h that resolves it (a whole fraction of the
        step), and set the next step's largest h from its omega. ``shortened``: the step
        was already shortened for the last one's impact (or to come back to the grid)."""
        st, limit = self.settings, self.settings.contact_resolution
        floor = self._substep_floor
        h = outcome.sol.h
        omega_h, i, true_omega_h, impact = self._impacts_omega_h(h)
        for _ in range(3 if limit is not None else 0):
            # 1.5: a step a little past the limit is kept, the next one is shortened
            if omega_h <= 1.5 * limit or h <= floor * (1 + 1e-9):
                break
            h = h / min(np.ceil(omega_h / limit), max(np.floor(h / floor), 1.0))
            outcome, more = self._solve_with_retries(h, h)
            retries += more
            h = outcome.sol.h
            omega_h, i, true_omega_h, impact = self._impacts_omega_h(h)
            shortened = True
        self._h_next = limit * h / omega_h if limit is not None and omega_h > 0 else np.inf
        closed = self.program.implicit.contact_stiffness > 0
        if closed.any() or self._any_closed:
            self._closed_since = np.where(closed, np.fmin(self._closed_since, self.t), np.nan)
            self._any_closed = bool(closed.any())
        record = self.resolution
        if shortened:
            record["shortened_steps"] += 1
            record["smallest_h"] = min(record["smallest_h"], h)
        # unresolved: an impact above 1 and 4 contact_resolution (over within a few steps),
        # a sustained contact above 1 and 2 sustained_resolution (its vibration 7 % slow;
        # not judged where sustained_resolution is None: taken at h as asked)
        sustained = st.sustained_resolution
        allowed = (max(1.0, 4.0 * (limit or 0.0)) if impact else
                   np.inf if sustained is None else max(1.0, 2.0 * sustained))
        if true_omega_h / allowed > max(record["unresolved"][0], 1.0):
            element = self.cs.force_elements[self.program.implicit.contacts[i]]
            record["unresolved"] = (true_omega_h / allowed, self.t + h, element.name,
                                    true_omega_h, "impact" if impact else "sustained contact")
        return outcome, retries

    def resolution_note(self) -> str:
        """A note when an impact was not resolved in time (omega h above 1 and above 4
        ``contact_resolution``: over within a few steps), or a sustained contact's vibration
        not (above 1 and above 2 ``sustained_resolution``: 7 % slow or more): what it does
        depends on h.

        Returns
        -------
        str
            The note, or "" when every impact so far was resolved.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> ball = s.add_body("ball", 1.0, (1e-3, 1e-3, 1e-3))
        >>> _ = s.add_joint(nd.Spherical(s.ground, ball, (0, 0, 0)))
        >>> nd.Stepper(s, h=1e-3).resolution_note()
        ''
        """
        _, when, name, omega_h, kind = self.resolution["unresolved"]
        if not name:
            return ""
        limit = self.settings.contact_resolution
        why = ("contact_resolution is None" if limit is None else
               f"at h / contact_substeps = {self._substep_floor:.3g} s")
        if kind == "impact":
            return (f"the contact of '{name}' was not resolved in time: omega h = "
                    f"{omega_h:.3g} at t = {when:.6g} ({why}); what it does (its loss, how long "
                    "it lasts) depends on h")
        slow = 1.0 - 2.0 * np.arctan(0.5 * omega_h) / omega_h
        return (f"the contact of '{name}' was not resolved in time: its sustained contact "
                f"vibrates at omega h = {omega_h:.3g} at t = {when:.6g} ({why}), "
                f"{100 * slow:.0f} % slow; what follows from its phase (a rattle's bounces) "
                "depends on h")
