"""Which joints and elements of a compiled system are not finite at a state: the messages of
``CompiledSystem.initial_problems`` and ``state_problems`` (what a failed step names)."""
from __future__ import annotations

import numpy as np

OVERFLOW = 1e150
"""A force beyond this magnitude (N, N m) is named as the cause of a failed step: the step's
energies square it past the largest float."""

NOT_FINITE_HINT = ("(a value outside a function's domain, or a math/numpy function applied to "
                   "a CasADi symbol: use ca.sqrt, ca.exp, ...)")


def initial_problems(cs, t0: float) -> list[str]:
    """``cs.initial_problems(t0)``: at the bodies' initial q and v and the elements' initial
    memory."""
    q, v = cs.initial_state()
    z = cs.initial_history()
    at = f"not finite at the initial state (t = {t0:g}) {NOT_FINITE_HINT}"
    out = _row_problems(cs, t0, q, at)
    gaps = np.asarray(cs.gap(q)).ravel()
    gap_jac = np.asarray(cs.gap_q(q))
    coord_jac = np.asarray(cs.contact_coordinates_q(q))
    for r in cs.gap_rows:
        coords = slice(cs.gap_laws[r.start][0], cs.gap_laws[r.stop - 1][1]) if r.size \
            else slice(0, 0)
        if not (np.isfinite(gaps[r.start:r.stop]).all() and np.isfinite(gap_jac[r.start:r.stop]).all()
                and np.isfinite(coord_jac[coords]).all()):
            out.append(f"{r.element.label}: gaps or their gradients are not finite at the "
                       "initial configuration (a norm at 0? write a round gap as "
                       "(d, radius) in contact_coordinates)")
    return out + _force_problems(cs, t0, q, v, z, at)


def state_problems(cs, t, q, v, z) -> list[str]:
    """``cs.state_problems(t, q, v, z)``."""
    at = f"not finite at t = {t:.9g} {NOT_FINITE_HINT}"
    return _row_problems(cs, t, q, at) + _force_problems(cs, t, q, v, z, at)


def _row_problems(cs, t, q, at) -> list[str]:
    phi = {"equations": np.asarray(cs.phi(q, t)),
           "Jacobian": np.asarray(cs.phi_q(q, t)),
           "time derivative": np.asarray(cs.phi_t(q, t))}
    return [f"{r.element.label}: {', '.join(bad)} {at}" for r in cs.constraint_rows
            if (bad := [name for name, arr in phi.items()
                        if not np.isfinite(arr[r.start:r.stop]).all()])]


def _force_problems(cs, t, q, v, z, at) -> list[str]:
    Q = np.asarray(cs.element_forces(t, q, v, z))
    V = np.asarray(cs.element_potentials(t, q, z)).ravel()
    out = []
    for j, el in enumerate(cs.force_elements):
        bad = [name for name, value in (("force", Q[:, j]), ("potential energy", V[j]))
               if not np.isfinite(value).all()]
        if bad:
            out.append(f"{el.label}: {', '.join(bad)} {at}")
        elif np.abs(Q[:, j]).max(initial=0.0) > OVERFLOW:
            out.append(f"{el.label}: force {np.abs(Q[:, j]).max():.3g} at t = {t:.9g}, "
                       f"beyond {OVERFLOW:g} (squares overflow)")
    return out
