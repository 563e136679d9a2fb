"""The short human-readable account of a run (:meth:`nlpdyn.Result.summary`)."""
from __future__ import annotations

import numpy as np


def summary(res) -> str:
    """A short human-readable account of the run ``res``: :meth:`nlpdyn.Result.summary`.

    Parameters
    ----------
    res : Result
        The run.

    Returns
    -------
    str
        One line per topic.

    Examples
    --------
    >>> print(summary(res))                                       # doctest: +SKIP
    success: reached t_end
    """
    s = res.stats.summary()
    # counters over every step (the stats arrays hold the kept steps only)
    s.update({k: v for k, v in res.info.get("run", {}).items() if k in s or k == "min_gap"})
    kept = (f", {len(res.t) - 1} kept (output_every = {res.info['output_every']})"
            if res.info.get("output_every", 1) > 1 else "")
    lines = [f"{'success' if res.success else 'FAILED'}: {res.message}",
             f"t = {res.t[0]:.6g} .. {res.t[-1]:.6g} s in {s.get('n_steps', 0)} steps{kept}"
             + (f" (h {res.h.min():.3g} .. {res.h.max():.3g} s)" if len(res.h) else "")
             + (f", scheme {res.info['scheme']}" if "scheme" in res.info else "")]
    if s.get("n_steps"):
        if "wall_time" in res.info:
            lines.append(f"simulate() took {res.info['wall_time']:.3g} s (set-up "
                         f"{res.info['setup_time']:.3g} s, result assembly included)")
        lines.append(f"inside the steps {s['wall_time_total']:.3g} s, per kept step median "
                     f"{1e3 * s['wall_time_median']:.3g} ms, p90 {1e3 * s['wall_time_p90']:.3g} ms; "
                     f"retried steps {s['n_retried_steps']}")
        lines.append(f"max EOM residual {s['max_eom_residual']:.2e}, max constraint violation "
                     f"{s['max_constraint_violation']:.2e}, max ||p|-1| {s['max_norm_error']:.2e}")
        if res.gap_rows:
            lines.append(f"contact ({res.info.get('contact', '?')}): min gap "
                         f"{s.get('min_gap', res.gaps.min()):.2e} m, "
                         f"{s['n_contact_fallback_steps']} steps by "
                         f"the fallback, mean iterations {res.stats.gap_iterations.mean():.2f}")
    control = res.info.get("error_control")
    if control:
        lines.append(f"error control: rtol {control['rtol']:g}, atol {control['atol']:g}; "
                     f"{control['solves']} solves, {control['rejected_pairs']} pairs of "
                     f"steps taken again, largest estimate {control['largest_error']:.2f} "
                     "of the tolerance")
    jit = res.info.get("jit")
    if jit and (jit.get("mode", True) is True or jit["compiled"] or jit["cached"]
                or jit.get("building") or jit.get("started")):
        left = "; interpreted: " + "; ".join(f"{name} ({why})" for name, why
                                             in jit["interpreted"].items())
        switched = (f", switched to at t = {jit['switched'][-1]:.6g} s"
                    if jit.get("switched") else "")
        building = (f"; building for the next run: {', '.join(jit['building'])}"
                    if jit.get("building") else "")
        lines.append(f"compiled (jit): {jit['compiled']} built in {jit['seconds']:.3g} s"
                     f"{switched}, {jit['cached']} from the cache"
                     + (left if jit["interpreted"] else "") + building)
    if len(res.energy):
        lines.append(f"energy {res.energy[0]:.9g} -> {res.energy[-1]:.9g} J "
                     f"(range {np.ptp(res.energy):.3e} J)")
    lines += [f"warning: {w}" for w in res.info.get("warnings", [])]
    if res.initial_projection.get("changed"):
        lines.append("initial conditions projected, largest change per quantity: "
                     + _largest_changes(res.initial_projection))
    return "\n".join(lines)


_UNITS = {"position": "m", "rotation": "rad", "velocity": "m/s", "angular velocity": "rad/s"}


def _largest_changes(projection) -> str:
    """The initial projection's largest change of each quantity it changed, over the bodies,
    in its unit, and the body it moved (``initial_projection["body_changes"]``)."""
    changes = projection.get("body_changes") or {}
    if not changes:     # a record written before the changes were kept per body
        return (f"positions {projection['position_change']:.3e}, velocities "
                f"{projection['velocity_change']:.3e} (mixed units)")
    parts = []
    for quantity, unit in _UNITS.items():
        body = max(changes, key=lambda name: changes[name][quantity])
        if changes[body][quantity] > 0:
            parts.append(f"{quantity} {changes[body][quantity]:.3g} {unit} ({body!r})")
    return ", ".join(parts) or "none"
