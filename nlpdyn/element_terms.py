"""Each element's expressions in a compiled system's symbols (joint equations, velocity rows,
contact coordinates, force terms), checked to hold no symbols but the system's; the bodies'
mass matrix and gyroscopic terms."""
from __future__ import annotations

import casadi as ca
import numpy as np

from .checks import ModelError, as_number, failure_reason, is_number, show
from .forces.base import ForceElement



def symbol_hashes(*symbols) -> set[int]:
    """The hashes of the CasADi symbols in ``symbols`` (what ``require_own_symbols`` allows)."""
    return {x.element_hash() for s in symbols for x in ca.symvar(s)}


def attempt(el, problems, build):
    """build(), or None with a problem naming ``el`` added to ``problems`` when it fails."""
    try:
        return build()
    except ModelError as err:
        problems.extend(err.problems)
    except Exception as err:
        problems.append(f"{el.label}: building its expressions failed: {failure_reason(err)}")
    return None

def joint_equations(cs, el, t):
    """The equations of a joint, driver or programmed constraint ``el`` (a column), their
    number checked against ``el.n_equations`` (set here when unknown)."""
    expr = ca.vec(ca.SX(el.equations(cs.states_of(el), t)))
    if el.n_equations is None:
        el.n_equations = expr.numel()
    if expr.numel() != el.n_equations:
        raise ModelError([f"{el.label}: returned {expr.numel()} equations, "
                          f"expected {el.n_equations}"])
    require_own_symbols(cs, el, expr)
    return expr


def velocity_constraint_rows(cs, el, t, v):
    """(C, zeta) of a velocity constraint's rows C v - zeta, C (n, nv) and zeta (n, 1)
    functions of q and t."""
    expr = ca.vec(ca.SX(el.velocity_equations(cs.states_of(el), t)))
    el.n_equations = expr.numel()
    require_own_symbols(cs, el, expr)
    C = ca.jacobian(expr, v)
    if ca.depends_on(C, v):
        raise ModelError([f"{el.label}: its equations must be linear in the velocities"])
    return C, -ca.substitute(expr, v, ca.DM.zeros(v.numel()))


def contact_coordinates(cs, el):
    """([(d, radius or None)], contact points) of a gap element."""
    states = cs.states_of(el)
    pairs, problems = [], []
    for d, radius in el.contact_coordinates(states):
        d = ca.vec(ca.SX(d))
        if radius is None and d.numel() != 1:
            problems.append(f"{el.label}: a flat gap needs one contact coordinate, got {d.numel()}")
        if radius is not None:
            radius = as_number(radius)
            if not (is_number(radius) and radius > 0):
                problems.append(f"{el.label}: a round gap needs a radius > 0, got {show(radius)}")
        pairs.append((d, radius))
    if problems:
        raise ModelError(problems)
    points = ca.SX(el.contact_points(states))
    require_own_symbols(cs, el, points, *(d for d, _ in pairs))
    return pairs, points


def force_terms(cs, el, t, memory):
    """(Q of the element, its potential energy, its next memory or None)."""
    states = cs.states_of(el)
    z_next = ca.vec(ca.SX(el.next_history(states, t, memory))) if el.history_size else None
    z_start = ca.vec(ca.SX(el.start_history(states, t, memory))) if el.history_size else None
    wrenches = el.wrenches(states, t, memory) if el.history_size else el.wrenches(states, t)
    Q_el = ca.SX.zeros(cs.nv)
    for b, (f, n) in zip(el.bodies, wrenches):
        if b.is_ground:
            continue
        k = b.index
        Q_el[6 * k:6 * k + 3] += f
        Q_el[6 * k + 3:6 * k + 6] += n
    terms = []
    if el.evaluation == "implicit":
        terms = [(ca.SX(s), V) for s, V in el.potential_terms(states, t, memory)]
    if terms and type(el).potential_energy is ForceElement.potential_energy:
        pe = sum((V(s) for s, V in terms), ca.DM(0))   # the default's sum, terms built once
    else:
        pe = el.potential_energy(states, t, memory)
    V_el = ca.SX(0) if pe is None else ca.SX(pe)
    if el.evaluation == "implicit" and not terms and pe is not None:   # a potential given whole
        terms = [(V_el, lambda x: x)]
    require_own_symbols(cs, el, Q_el, V_el, *([] if z_next is None else [z_next, z_start]),
                              *(s for s, _ in terms))
    return Q_el, V_el, (z_next, z_start), terms


def require_own_symbols(cs, el, *exprs):
    """Raise ModelError when an element's expressions hold symbols other than the
    system's q, v, t, z (made with ca.SX.sym instead of taken from the states)."""
    foreign = {s.name() for e in exprs for s in ca.symvar(e)
               if s.element_hash() not in cs._symbols}
    if foreign:
        raise ModelError([f"{el.label}: its expressions hold symbols {sorted(foreign)} that "
                          "are not the system's: build them from the states and t passed in"])


def inertia_terms(bodies, v):
    """The mass matrix M (nv x nv, block diagonal), its block-wise Cholesky factor L (M = L
    L^T; scaled velocities y = L^T v) and the gyroscopic terms S(v) = w' x J w' per body."""
    nv = 6 * len(bodies)
    M = np.zeros((nv, nv))
    S = ca.SX.zeros(nv)
    for b in bodies:
        k = b.index
        M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = b.mass * np.eye(3)
        M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = b.inertia
        w = v[6 * k + 3:6 * k + 6]
        S[6 * k + 3:6 * k + 6] = ca.cross(w, ca.DM(b.inertia) @ w)
    L = np.zeros_like(M)
    for i in range(0, nv, 3):
        L[i:i + 3, i:i + 3] = np.linalg.cholesky(M[i:i + 3, i:i + 3])
    return M, L, S
