"""Discrete gradients: the force of a stored energy over a whole step, with exact energy balance.

For a potential written as scalar laws of scalar coordinates, V(q) = sum_i V_i(s_i(q))
(``ForceElement.potential_terms``), a discrete gradient grad_d V(q0, q1) satisfies

    grad_d V . (q1 - q0) = V(q1) - V(q0)        (exactly, for any q0, q1)

and tends to grad V as q1 -> q0 (Gonzalez 1996). Here it is the chain of two:

- per law, the difference quotient (V_i(s1) - V_i(s0)) / (s1 - s0): exact across kinks, so a
  contact closing or opening inside a step stores and returns exactly the energy of its law
  (Armero and Petocz 1998 for penalty contact); the derivative at the midpoint where s1 - s0
  is too small for the quotient to beat round-off;
- per coordinate, the average of its gradient along the chord q0 -> q1 (the average vector
  field), by Gauss-Legendre quadrature of the laws' slopes pulled back through the
  coordinates (one reverse sweep per point): exact for coordinates that are polynomials of degree
  up to 2 ``CHORD_POINTS`` along the chord, and for the smooth joint coordinates here within
  ~|dq|^(2 CHORD_POINTS + 1) of it (a relative 1e-13 of the stop pendulum's energy per step
  at h = 1e-3).

The generalised force of the step follows with the step's own kinematic map,
q1 - q0 = h (T v1 + c): -T^T grad_d V does the work -(V(q1) - V(q0)) on h v1.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import casadi as ca
import numpy as np

if TYPE_CHECKING:
    from ._typing import Law1D, Symbolic

CHORD_POINTS = 2            # Gauss-Legendre points along the chord (degree 3 exact)
# largest share of the slope the quotient may lose to round-off: below the Newton iterations'
# implicit_tol (1e-10 of the force scale), or a statically loaded element's force is noise
# that they cannot settle (a flexible link hanging at rest)
QUOTIENT_ROUNDOFF = 1e-11


def difference_quotient(V: Law1D, s0: Symbolic, s1: Symbolic) -> Symbolic:
    """dV(s0, s1) with dV (s1 - s0) = V(s1) - V(s0): the law's discrete derivative.

    Parameters
    ----------
    V : callable
        CasADi scalar -> CasADi scalar (the law's stored energy).
    s0, s1 : casadi.SX
        The coordinate at the start and the end of the step.

    Returns
    -------
    casadi.SX
        (V(s1) - V(s0)) / (s1 - s0), or V'((s0 + s1) / 2) where that quotient would lose
        more than ``QUOTIENT_ROUNDOFF`` of the law's slope (the largest |V'| at s0, s1 and
        the midpoint) to round-off: |s1 - s0| |V'|max QUOTIENT_ROUNDOFF <= eps (|V(s0)| +
        |V(s1)|). There the midpoint's own error, ~ V''' (s1 - s0)^2, is far smaller.

    Examples
    --------
    >>> import casadi as ca
    >>> dV = difference_quotient(lambda s: ca.fmax(s, 0) ** 2, ca.DM(-1.0), ca.DM(2.0))
    >>> float(dV)                  # (4 - 0) / 3: exact across the kink at 0
    1.3333333333333333
    """
    sigma = ca.SX.sym("s")
    energy = V(sigma)       # may hold other symbols (an element's memory): substituted, not called
    law = ca.vertcat(energy, ca.gradient(energy, sigma))

    def at(s):
        return ca.vertsplit(ca.substitute(law, sigma, ca.SX(s)))
    V0, slope0 = at(s0)
    V1, slope1 = at(s1)
    _, slope = at(0.5 * (s0 + s1))
    ds = s1 - s0
    steepest = ca.fmax(ca.fmax(ca.fabs(slope0), ca.fabs(slope1)), ca.fabs(slope))
    usable = (ca.fabs(ds) * steepest * QUOTIENT_ROUNDOFF
              > np.finfo(float).eps * (ca.fabs(V0) + ca.fabs(V1)))
    usable = ca.logic_and(usable, ds != 0)
    return ca.if_else(usable, (V1 - V0) / ca.if_else(usable, ds, 1), slope)


def chord_pullback(pullback: Callable[[Symbolic, Symbolic], Symbolic], q0: Symbolic,
                   q1: Symbolic, w: Symbolic) -> Symbolic:
    """J_d^T w, J_d the average of the coordinates' Jacobian ds/dq along the chord q0 -> q1
    by ``CHORD_POINTS``-point Gauss-Legendre quadrature (J_d (q1 - q0) = s(q1) - s(q0), exact
    for s polynomial of degree up to 2 ``CHORD_POINTS`` along the chord), from
    ``pullback(q, w)`` = (ds/dq)^T w at each point: one reverse sweep a point, not a
    Jacobian.

    Parameters
    ----------
    pullback : casadi.Function or callable
        (q, w) -> (ds/dq)^T w, shape (nq, 1).
    q0, q1 : casadi.SX or casadi.DM, shape (nq, 1)
        The chord's ends.
    w : casadi.SX or casadi.DM, shape (n, 1)
        The weights of the coordinates (the laws' slopes).

    Returns
    -------
    casadi.SX or casadi.DM, shape (nq, 1)

    Examples
    --------
    >>> import casadi as ca
    >>> q, w = ca.SX.sym("q"), ca.SX.sym("w")
    >>> pullback = ca.Function("pb", [q, w], [ca.jtimes(q**3, q, w, True)])
    >>> float(chord_pullback(pullback, ca.DM(1.0), ca.DM(2.0), ca.DM(1.0)))  # (8 - 1) / (2 - 1)
    7.0
    """
    x, weights = np.polynomial.legendre.leggauss(CHORD_POINTS)
    dq = q1 - q0
    return sum(0.5 * float(wi) * pullback(q0 + 0.5 * (float(xi) + 1) * dq, w)
               for xi, wi in zip(x, weights))


def discrete_gradient(coordinates: ca.Function,
                      pullback: Callable[[Symbolic, Symbolic], Symbolic], laws: list[Law1D],
                      q0: Symbolic, q1: Symbolic) -> Symbolic:
    """grad_d V (nq) of V(q) = sum_i laws[i](s_i(q)) between q0 and q1.

    Parameters
    ----------
    coordinates : casadi.Function
        q -> s (n, 1).
    pullback : casadi.Function or callable
        (q, w) -> (ds/dq)^T w (nq, 1), e.g. ``ca.jtimes(s, q, w, True)``.
    laws : list of callable
        V_i, one per coordinate.
    q0, q1 : casadi.SX
        Positions at the start and the end of the step.

    Returns
    -------
    casadi.SX, shape (nq, 1)

    Examples
    --------
    A spring of rest length 1 on the squared length s = |q|^2 (quadratic along any chord, so
    its average gradient is exact): the balance holds to round-off however long the step.

    >>> import casadi as ca
    >>> q, w = ca.SX.sym("q", 2), ca.SX.sym("w")
    >>> s = ca.Function("s", [q], [ca.dot(q, q)])
    >>> pb = ca.Function("pb", [q, w], [ca.jtimes(ca.dot(q, q), q, w, True)])
    >>> spring = lambda ss: 50.0 * (ca.sqrt(ss) - 1.0) ** 2
    >>> q0, q1 = ca.DM([1.2, 0.1]), ca.DM([0.9, 0.4])
    >>> g = discrete_gradient(s, pb, [spring], q0, q1)
    >>> V = lambda x: spring(ca.dot(x, x))
    >>> abs(float(ca.dot(g, q1 - q0) - (V(q1) - V(q0)))) < 1e-12
    True
    """
    s0, s1 = coordinates(q0), coordinates(q1)
    slopes = ca.vertcat(*[difference_quotient(V, s0[i], s1[i]) for i, V in enumerate(laws)])
    return chord_pullback(pullback, q0, q1, slopes)
