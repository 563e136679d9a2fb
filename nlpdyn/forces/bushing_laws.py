"""The signed bushing laws (linear, tabulated; seed 001 eq. 49) and the law that blends
clearance, bushing and hard contact (eq. 50).

See :mod:`nlpdyn.forces.contact_laws`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import as_vector
from .law_base import ContactLaw, _ca, _check, _elastic_force, integral_from_zero

if TYPE_CHECKING:
    from .._typing import Symbolic, Value

__all__ = ["LinearBushing", "TabulatedBushing", "Blended"]


# ------------------------------------------------------------------ bushing laws
@dataclass(frozen=True)
class LinearBushing(ContactLaw):
    """Linear bushing f = K delta + D delta_dot (seed 001 eq. 49 with a linear f(delta)).

    Signed (bilateral): delta may be negative and the force is not clipped.

    Parameters
    ----------
    stiffness : float
        K (N/m or N m/rad), >= 0.
    damping : float
        D (N s/m or N m s/rad), >= 0.

    Notes
    -----
    ``potential(delta)`` = K delta^2 / 2.

    Examples
    --------
    >>> round(float(LinearBushing(2e4, 30.0).force(-1e-3, 0.2)), 9)
    -14.0
    """

    stiffness: float
    damping: float = 0.0

    def force(self, delta: Value, delta_dot: Value,
              impact_velocity: Value | None = None) -> Symbolic:
        return self.stiffness * _ca(delta) + self.damping * _ca(delta_dot)

    def potential(self, delta: Value) -> Symbolic:
        return 0.5 * self.stiffness * _ca(delta) ** 2

    def problems(self, owner: str) -> list[str]:
        out = []
        _check(out, owner, "stiffness", self.stiffness, lambda v: v >= 0, ">= 0")
        _check(out, owner, "damping", self.damping, lambda v: v >= 0, ">= 0")
        return out


@dataclass(frozen=True)
class TabulatedBushing(ContactLaw):
    """Bushing with a measured force-displacement table (seed 001 eq. 49):
    f = F(delta) + D delta_dot, F piecewise linear through the table and continued with the
    end slopes beyond it. Signed, not clipped.

    Parameters
    ----------
    displacements : sequence of float
        Table abscissae (m or rad), strictly increasing, at least two.
    forces : sequence of float
        F at those displacements (N or N m).
    damping : float
        D, >= 0.

    Notes
    -----
    F is written as a sum of ramps max(delta - x_k, 0), a closed form that works on SX and
    MX. ``potential(delta)`` is the exact integral of F from 0 to delta.

    Examples
    --------
    >>> law = TabulatedBushing([0.0, 1e-3, 2e-3], [0.0, 100.0, 400.0], damping=2.0)
    >>> round(float(law.force(1.5e-3, 0.1)), 9)
    250.2
    """

    displacements: tuple
    forces: tuple
    damping: float = 0.0

    def __post_init__(self) -> None:
        for name in ("displacements", "forces"):
            value = as_vector(getattr(self, name))
            if isinstance(value, np.ndarray):   # else kept as given, for problems()
                object.__setattr__(self, name, tuple(float(v) for v in value))

    def _pieces(self):
        x, f = np.array(self.displacements), np.array(self.forces)
        return x, f, np.diff(f) / np.diff(x)

    def force(self, delta: Value, delta_dot: Value,
              impact_velocity: Value | None = None) -> Symbolic:
        x, f, s = self._pieces()
        d = _ca(delta)
        out = f[0] + s[0] * (d - x[0])
        for k in range(1, len(s)):          # the slope changes at every interior breakpoint
            out = out + (s[k] - s[k - 1]) * ca.fmax(d - x[k], 0)
        return out + self.damping * _ca(delta_dot)

    def potential(self, delta: Value) -> Symbolic:
        x, f, s = self._pieces()
        d = _ca(delta)
        out = (f[0] - s[0] * x[0]) * d + 0.5 * s[0] * d**2
        for k in range(1, len(s)):          # int_0^d max(u - x_k, 0) du
            ramp = 0.5 * ca.fmax(d - x[k], 0) ** 2 - 0.5 * max(-x[k], 0.0) ** 2
            out = out + (s[k] - s[k - 1]) * ramp
        return out

    def problems(self, owner: str) -> list[str]:
        x, f = self.displacements, self.forces
        tables = [(name, value) for name, value in (("displacements", x), ("forces", f))
                  if not (isinstance(value, tuple) and all(isinstance(v, float) for v in value))]
        if tables:
            return [f"{owner}: {name} must be numbers, got {value!r}" for name, value in tables]
        if len(x) != len(f) or len(x) < 2:
            return [f"{owner}: displacements and forces must be tables of equal length >= 2, "
                    f"got {len(x)} and {len(f)}"]
        out = []
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(f))):
            out.append(f"{owner}: displacements and forces must be finite")
        elif np.any(np.diff(x) <= 0):
            out.append(f"{owner}: displacements must be strictly increasing, got {list(x)}")
        _check(out, owner, "damping", self.damping, lambda v: v >= 0, ">= 0")
        return out


# ------------------------------------------------------------------ clearance + bushing
@dataclass(frozen=True)
class Blended(ContactLaw):
    """Clearance, bushing and hard contact in one law (seed 001 eq. 50, weighted sum):

    - f = 0                                          for delta <= c,
    - f = f_b(delta - c, delta_dot)                  for c < delta <= c + b,
    - f = (1 - w) f_b(delta - c, delta_dot) + w f_c(delta - c - b, delta_dot),
      w = (delta - c - b) / beta,                    for c + b < delta <= c + b + beta,
    - f = f_c(delta - c - b, delta_dot)              for delta > c + b + beta,

    clipped at 0; c the clearance (free flight), b the bushing's maximum compression, beta
    the blending width, f_b the bushing law, f_c the hard contact law.

    This is a reconstruction: the seed's PDF text lost the symbols of eq. 50. What is left
    gives four rows (0; f^(b)(Delta_1, .); a weighted sum of f^(c)(Delta_2, .) and
    f^(b)(Delta_1, .); f^(c)(Delta_2, .)), the conditions (<= c; c < . <= b; b < . <= b +
    beta; > b + beta, read with the "+" signs the extraction also dropped in eq. 48), and
    the text Delta_1 = delta - c, Delta_2 = delta - b. Fig. 5(c) puts the end of the bushing
    at c + b, so the thresholds and Delta_2 are taken from there. The weights are the linear
    ones of a weighted sum (Flores et al. 2008); with them f is continuous in delta.

    Parameters
    ----------
    clearance : float
        c (m or rad), >= 0.
    bushing_compression : float
        b, > 0.
    bushing : ContactLaw
        f_b, e.g. :class:`LinearBushing`.
    contact : ContactLaw
        f_c, e.g. :class:`LankaraniNikravesh` or :class:`Pereira`.
    blend : float or None
        beta, > 0; None gives 0.01 b (the seed's example).

    Notes
    -----
    Across the blending zone the force goes from f_b(b) to f_c(beta); it drops there when
    f_c(beta) < f_b(b), so pick beta and the laws with f_c(beta) >= f_b(b) for a monotone
    law. A bushing with linear damping makes f jump by D delta_dot when delta crosses c.
    The impact velocity passed to :meth:`force` goes to both laws; an element remembers the
    rate at which its own delta became positive, which is not the rate at which the hard
    contact starts (delta = c + b). ``potential`` integrates the blended elastic parts
    (each law's :meth:`~ContactLaw.elastic_potential` derivative): the two laws' own
    potentials outside the blending zone, :func:`integral_from_zero` across it.

    Examples
    --------
    >>> from nlpdyn.forces.impact_laws import Hertz
    >>> law = Blended(1e-4, 1e-3, LinearBushing(1e5), Hertz(1e10, 1.5))
    >>> round(float(law.force(6e-4, 0.0)), 9)      # bushing: 1e5 * 5e-4
    50.0
    """

    clearance: float
    bushing_compression: float
    bushing: ContactLaw
    contact: ContactLaw
    blend: float | None = None

    @property
    def needs_impact_velocity(self) -> bool:
        """Whether one of the two laws needs the impact velocity (``ContactLaw``)."""
        return any(getattr(law, "needs_impact_velocity", False)
                   for law in (self.bushing, self.contact))

    @property
    def loading_stiffness_ratio(self) -> float:
        """The larger of the two laws' (``ContactLaw``).

        Examples
        --------
        >>> from nlpdyn.forces.impact_laws import ModifiedKelvinVoigt
        >>> Blended(1e-4, 1e-4, LinearBushing(1e5),
        ...         ModifiedKelvinVoigt(1e8, restitution=0.25)).loading_stiffness_ratio
        4.0
        """
        return max(getattr(law, "loading_stiffness_ratio", 1.0)
                   for law in (self.bushing, self.contact))

    @property
    def blend_width(self) -> float:
        """beta: ``blend``, or 0.01 b when it is None."""
        return 0.01 * self.bushing_compression if self.blend is None else self.blend

    def force(self, delta: Value, delta_dot: Value,
              impact_velocity: Value | None = None) -> Symbolic:
        c, b, beta = self.clearance, self.bushing_compression, self.blend_width
        d = _ca(delta)
        f_b = self.bushing.force(d - c, delta_dot, impact_velocity)
        f_c = self.contact.force(d - c - b, delta_dot, impact_velocity)
        w = ca.fmin(ca.fmax((d - c - b) / beta, 0), 1)
        return ca.if_else(d - c <= 0, 0, ca.fmax((1 - w) * f_b + w * f_c, 0))

    def potential(self, delta: Value) -> Symbolic:
        # as the laws' own potentials: after an impact
        return self.elastic_potential(delta, np.inf)

    def elastic_potential(self, delta: Value, impact_velocity: Value | None = None) -> Symbolic:
        c, b, beta = self.clearance, self.bushing_compression, self.blend_width
        d, v = _ca(delta), impact_velocity
        # bushing up to c + b; blend over [c + b, c + b + beta]; contact beyond
        bushing = self.bushing.elastic_potential(ca.fmin(ca.fmax(d - c, 0), b), v)
        width = ca.fmin(ca.fmax(d, c + b), c + b + beta) - (c + b)

        def blended(u):         # u: the depth into the blending zone
            return ((1 - u / beta) * _elastic_force(self.bushing, b + u, v)
                    + u / beta * _elastic_force(self.contact, u, v))
        blend = integral_from_zero(blended, width)
        contact = (self.contact.elastic_potential(ca.fmax(d - c - b, beta), v)
                   - self.contact.elastic_potential(beta, v))
        return bushing + blend + contact

    def problems(self, owner: str) -> list[str]:
        out = []
        for name, law in (("bushing", self.bushing), ("contact", self.contact)):
            if isinstance(law, ContactLaw):
                out += law.problems(f"{owner}: {name} law")
            else:
                out.append(f"{owner}: {name} must be a ContactLaw, got {type(law).__name__}")
        _check(out, owner, "clearance", self.clearance, lambda v: v >= 0, ">= 0")
        _check(out, owner, "bushing_compression", self.bushing_compression, lambda v: v > 0,
               "> 0")
        if self.blend is not None:
            _check(out, owner, "blend", self.blend, lambda v: v > 0, "> 0")
        return out
