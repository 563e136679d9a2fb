"""The base of the normal force laws: :class:`ContactLaw`, the quadrature that integrates a law
without a closed-form potential, and the helpers and parameter checks the laws share.

The laws themselves are in :mod:`nlpdyn.forces.impact_laws` (Hertz-type contact laws, with and
without hysteresis) and :mod:`nlpdyn.forces.bushing_laws` (signed bushings and the blended
clearance-bushing-contact law); :mod:`nlpdyn.forces.contact_laws` gathers them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import casadi as ca
import numpy as np

from ..checks import as_number, is_number

if TYPE_CHECKING:
    from .._typing import Symbolic, Value

__all__ = ["ContactLaw", "QUADRATURE_POINTS", "integral_from_zero"]

_CASADI = (ca.SX, ca.MX, ca.DM)


class ContactLaw:
    """Base class of the force laws. Subclasses are frozen dataclasses; their parameters are
    checked by :meth:`problems` (every problem at once), not on construction.

    Attributes
    ----------
    needs_impact_velocity : bool
        True when :meth:`force` uses the impact velocity (the penetration rate at the start
        of the contact), which the element must then remember.
    damping_step : str
        Where an energy-consistent joint stop applies this law's damping by default
        (``ForceElement.damping_step``): "split" (half in the step, half in the next: the
        loss is the law's own work) or "whole" (for a law whose damping is stiff: a loading
        branch that is all damping).
    loading_stiffness_ratio : float
        The stiffness of an impact's loading branch over the stored energy's: 1 where the
        stored energy is the loading law (Hertz; hysteresis laws within their factor
        1 + 3 (1 - e^2) / 4 <= 1.75), 1 / c_e for the modified Kelvin-Voigt law, which
        loads along K delta and stores c_e K delta^2 / 2. The stepper resolves impacts on
        it (``StepperSettings.contact_resolution``).

    Examples
    --------
    A law of one's own: a linear spring that only pushes, with its stored energy.

    >>> from dataclasses import dataclass
    >>> import casadi as ca
    >>> @dataclass(frozen=True)
    ... class Linear(ContactLaw):
    ...     stiffness: float
    ...     def force(self, delta, delta_dot=0.0, impact_velocity=None):
    ...         return self.stiffness * ca.fmax(delta, 0)
    ...     def potential(self, delta):
    ...         return 0.5 * self.stiffness * ca.fmax(delta, 0) ** 2
    >>> law = Linear(1e3)
    >>> float(law.force(0.01, 0.0)), float(law.elastic_potential(0.01)), law.problems("stop")
    (10.0, 0.05, [])
    """

    needs_impact_velocity: bool = False
    damping_step: str = "split"
    loading_stiffness_ratio: float = 1.0

    def force(self, delta: Value, delta_dot: Value,
              impact_velocity: Value | None = None) -> Symbolic:
        """Normal force (N; a moment for rotational stops) at penetration ``delta`` and
        penetration rate ``delta_dot``; >= 0 for contact laws.

        Parameters
        ----------
        delta : float or casadi.SX or casadi.MX
            Penetration (m or rad), > 0 in contact.
        delta_dot : float or casadi.SX or casadi.MX
            Its rate (m/s or rad/s), > 0 while it grows.
        impact_velocity : float or casadi.SX or casadi.MX, optional
            The rate at which the contact closed (laws with ``needs_impact_velocity``);
            None counts as 0.

        Returns
        -------
        casadi.DM or casadi.SX or casadi.MX
            The force, of the type of the arguments (numbers give a DM).

        Examples
        --------
        >>> from nlpdyn.forces.impact_laws import LankaraniNikravesh
        >>> law = LankaraniNikravesh(1e6, 1.5, restitution=0.8)
        >>> round(float(law.force(1e-4, 0.5, impact_velocity=1.0)), 9)
        1.135
        """
        raise NotImplementedError

    def potential(self, delta: Value) -> Symbolic | None:
        """Elastic energy stored at penetration ``delta`` (the integral from 0 of the elastic
        part of the force), or None when the law has no closed form for it.

        Parameters
        ----------
        delta : float or casadi.SX or casadi.MX
            Penetration (m or rad).

        Returns
        -------
        casadi.DM or casadi.SX or casadi.MX or None
            The energy (J), None without a closed form.

        Examples
        --------
        >>> from nlpdyn.forces.bushing_laws import LinearBushing
        >>> float(LinearBushing(2e4).potential(1e-2))        # K d^2 / 2
        1.0
        """
        return None

    def elastic_potential(self, delta: Value, impact_velocity: Value | None = None) -> Symbolic:
        """The energy an element stores in this law at ``delta``: :meth:`potential`, or, for a
        law without one, the integral from 0 of its force at zero rate, f(u, 0, v_imp)
        (:func:`integral_from_zero`). The part of the force beyond its derivative (damping,
        hysteresis) is the law's own, non-conservative work.

        Parameters
        ----------
        delta : float or casadi.SX or casadi.MX
            Penetration (m or rad).
        impact_velocity : float or casadi.SX or casadi.MX, optional
            The remembered impact speed (laws with ``needs_impact_velocity``).

        Returns
        -------
        casadi.DM or casadi.SX or casadi.MX
            The stored energy (J).

        Examples
        --------
        >>> from nlpdyn.forces.impact_laws import Hertz
        >>> round(float(Hertz(1e6, 1.5).elastic_potential(1e-2)), 9)     # K d^2.5 / 2.5
        4.0
        """
        V = self.potential(delta)
        if V is not None:
            return V
        return integral_from_zero(lambda u: self.force(u, 0.0, impact_velocity), _ca(delta))

    def problems(self, owner: str) -> list[str]:
        """Every invalid parameter, each message starting with ``owner``.

        Parameters
        ----------
        owner : str
            The element (or law) the messages name.

        Returns
        -------
        list of str
            Empty when the parameters are valid.

        Examples
        --------
        >>> from nlpdyn.forces.impact_laws import Hertz
        >>> Hertz(-1.0, 0.5).problems("stop")
        ['stop: stiffness must be > 0, got -1.0', 'stop: exponent must be >= 1, got 0.5']
        """
        return []


QUADRATURE_POINTS = 5


def integral_from_zero(f: Callable[[Value], Value], x: Value) -> Value:
    """The integral of ``f`` from 0 to ``x`` (CasADi), by ``QUADRATURE_POINTS``-point
    Gauss-Legendre quadrature in s after u = x s^2, which makes a power law u^n smooth,
    s^(2n + 1): exact for polynomials in u of degree up to 4 and for u^n with 2n + 1 <= 9
    (n = 1.5, 2.5, ...), accurate for the other exponents of contact laws.

    Parameters
    ----------
    f : callable
        The integrand, u -> f(u), on numbers and CasADi expressions.
    x : float or casadi.SX or casadi.MX
        The upper bound.

    Returns
    -------
    float or casadi.DM or casadi.SX or casadi.MX
        The integral, of the type of ``f(x)``.

    Examples
    --------
    >>> round(float(integral_from_zero(lambda u: u**1.5, 2.0)), 12)     # 2^2.5 / 2.5
    2.262741699797
    """
    s, w = np.polynomial.legendre.leggauss(QUADRATURE_POINTS)
    s, w = 0.5 * (s + 1), 0.5 * w
    return sum(float(wi) * 2 * si * x * f(x * si**2) for si, wi in zip(s, w))


def _elastic_force(law, delta, impact_velocity=None):
    """d/d delta of ``law.elastic_potential``: the elastic part of its force."""
    d = _ca(delta)
    u = (ca.MX if isinstance(d, ca.MX) else ca.SX).sym("u")
    slope = ca.gradient(law.elastic_potential(u, impact_velocity), u)
    return ca.substitute(slope, u, ca.SX(d) if isinstance(d, ca.DM) else d)


def _ca(x):
    """x as a CasADi value (numbers and numpy arrays become DM)."""
    if isinstance(x, _CASADI):
        return x
    a = np.asarray(x, dtype=float)
    return ca.DM(float(a)) if a.ndim == 0 else ca.DM(a)


def _positive_power(delta, exponent):
    """max(delta, 0)^n, exactly 0 for delta <= 0, with finite derivatives there (n >= 1)."""
    d = ca.fmax(delta, 0)
    return ca.if_else(d > 0, d ** exponent, 0)


def _hysteresis(delta_dot, impact_velocity, restitution, guard):
    """1 + 3 (1 - e^2) / 4 * r with r = delta_dot / v_imp, and r = 1 when delta_dot > v_imp or
    v_imp < guard (seed 001, text after eq. 43)."""
    v_imp = ca.fmax(_ca(0.0 if impact_velocity is None else impact_velocity), 0)
    # fmax keeps the unused branch finite: SX evaluates both branches of if_else
    ratio = ca.if_else(v_imp < guard, 1, ca.fmin(delta_dot / ca.fmax(v_imp, guard), 1))
    return 1 + 0.75 * (1 - restitution**2) * ratio


# ------------------------------------------------------------------ parameter checks
def _real(x):
    """float(x) if x is a finite real number, else None."""
    v = as_number(x)
    return v if is_number(v) else None


def _check(out, owner, name, value, ok, expected):
    v = _real(value)
    if v is None or not ok(v):
        out.append(f"{owner}: {name} must be {expected}, got {value}")


def _stiffness_problems(out, owner, stiffness, exponent=None):
    _check(out, owner, "stiffness", stiffness, lambda v: v > 0, "> 0")
    if exponent is not None:
        _check(out, owner, "exponent", exponent, lambda v: v >= 1, ">= 1")


def _restitution_problems(out, owner, restitution):
    _check(out, owner, "restitution", restitution, lambda v: 0 < v <= 1, "in (0, 1]")

