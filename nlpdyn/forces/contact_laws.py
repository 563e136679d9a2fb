"""Normal force laws of a penetration ``delta`` (m, > 0 in contact) and its rate ``delta_dot``
(m/s, > 0 while the penetration grows): seed 001 section 2.4.2 (eqs. 43-50) and eq. 54.

Every law works on CasADi symbols (SX, MX) and on plain numbers or numpy arrays, and returns
CasADi values, so the elements that use it can evaluate it at either end of a step. A contact
law gives no force for ``delta <= 0``, never pulls (its total is clipped at 0) and has finite
derivatives at ``delta = 0``; the bushing laws are signed (bilateral).

Laws with hysteresis damping (``needs_impact_velocity``) need the impact velocity, the
penetration rate when the contact closed; the element keeps it in its memory (see
:class:`~nlpdyn.forces.base.ForceElement`).

Examples
--------
>>> law = LankaraniNikravesh(stiffness=1e5, exponent=1.5, restitution=0.75)
>>> round(float(law.force(1e-4, 0.0, impact_velocity=0.5)), 6)
0.1
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from ..checks import as_number, as_vector, is_number

__all__ = ["ContactLaw", "Hertz", "LankaraniNikravesh", "ModifiedKelvinVoigt", "Pereira",
           "LinearBushing", "TabulatedBushing", "Blended"]

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
    """

    needs_impact_velocity: bool = False
    damping_step: str = "split"
    loading_stiffness_ratio: float = 1.0

    def force(self, delta, delta_dot, impact_velocity=None):
        """Normal force (N; a moment for rotational stops) at penetration ``delta`` and
        penetration rate ``delta_dot``; >= 0 for contact laws."""
        raise NotImplementedError

    def potential(self, delta):
        """Elastic energy stored at penetration ``delta`` (the integral from 0 of the elastic
        part of the force), or None when the law has no closed form for it."""
        return None

    def elastic_potential(self, delta, impact_velocity=None):
        """The energy an element stores in this law at ``delta``: :meth:`potential`, or, for a
        law without one, the integral from 0 of its force at zero rate, f(u, 0, v_imp)
        (:func:`integral_from_zero`). The part of the force beyond its derivative (damping,
        hysteresis) is the law's own, non-conservative work.

        Examples
        --------
        >>> round(float(Hertz(1e6, 1.5).elastic_potential(1e-2)), 9)     # K d^2.5 / 2.5
        4.0
        """
        V = self.potential(delta)
        if V is not None:
            return V
        return integral_from_zero(lambda u: self.force(u, 0.0, impact_velocity), _ca(delta))

    def problems(self, owner: str) -> list[str]:
        """Every invalid parameter, each message starting with ``owner``."""
        return []


QUADRATURE_POINTS = 5


def integral_from_zero(f, x):
    """The integral of ``f`` from 0 to ``x`` (CasADi), by ``QUADRATURE_POINTS``-point
    Gauss-Legendre quadrature in s after u = x s^2, which makes a power law u^n smooth,
    s^(2n + 1): exact for polynomials in u of degree up to 4 and for u^n with 2n + 1 <= 9
    (n = 1.5, 2.5, ...), accurate for the other exponents of contact laws.

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


# ------------------------------------------------------------------ contact laws
@dataclass(frozen=True)
class Hertz(ContactLaw):
    """Elastic contact f = K delta^n.

    Parameters
    ----------
    stiffness : float
        K (N/m^n), > 0.
    exponent : float
        n, >= 1 (1.5 for Hertz's sphere contact).

    Notes
    -----
    Conservative: ``potential(delta)`` = K delta^(n+1) / (n+1).

    Examples
    --------
    >>> law = Hertz(1e6, 1.5)
    >>> round(float(law.force(1e-4, 0.0)), 9), float(law.force(-1e-4, 0.0))
    (1.0, 0.0)
    """

    stiffness: float
    exponent: float = 1.5

    def force(self, delta, delta_dot=0.0, impact_velocity=None):
        return self.stiffness * _positive_power(_ca(delta), self.exponent)

    def potential(self, delta):
        n = self.exponent
        return self.stiffness * _positive_power(_ca(delta), n + 1) / (n + 1)

    def problems(self, owner):
        out = []
        _stiffness_problems(out, owner, self.stiffness, self.exponent)
        return out


@dataclass(frozen=True)
class LankaraniNikravesh(ContactLaw):
    """Hertz with hysteresis damping (seed 001 eq. 43, Lankarani and Nikravesh 1994):
    f = max(K delta^n [1 + 3 (1 - e^2) / 4 * delta_dot / v_imp], 0).

    Parameters
    ----------
    stiffness : float
        K (N/m^n), > 0.
    exponent : float
        n, >= 1.
    restitution : float
        Coefficient of restitution e, in (0, 1].
    velocity_guard : float
        Impact speeds below it (m/s) count as v_imp -> 0.

    Notes
    -----
    v_imp is the impact speed, passed as ``impact_velocity`` (None counts as 0). As the seed
    prescribes, the ratio delta_dot / v_imp is replaced by 1 when delta_dot exceeds v_imp or
    when v_imp < ``velocity_guard`` (a contact that closes at rest). The damping can pull at
    the end of restitution; the force is clipped at 0.

    The damping is derived so that an impact loses 1/2 m v_imp^2 (1 - e^2), which holds to
    first order in (1 - e^2): the law is meant for e close to 1. ``potential`` is the
    Hertz part.

    Examples
    --------
    >>> law = LankaraniNikravesh(1e6, 1.5, restitution=0.8)
    >>> round(float(law.force(1e-4, 0.5, impact_velocity=1.0)), 9)   # 1 * (1 + 0.27 * 0.5)
    1.135
    """

    stiffness: float
    exponent: float = 1.5
    restitution: float = 0.75
    velocity_guard: float = 1e-8
    needs_impact_velocity = True

    def force(self, delta, delta_dot, impact_velocity=None):
        elastic = self.stiffness * _positive_power(_ca(delta), self.exponent)
        damping = _hysteresis(_ca(delta_dot), impact_velocity, self.restitution,
                              self.velocity_guard)
        return ca.fmax(elastic * damping, 0)

    def potential(self, delta):
        return Hertz(self.stiffness, self.exponent).potential(delta)

    def elastic_potential(self, delta, impact_velocity=None):
        """The Hertz part's energy, times the hysteresis factor at zero rate: 1 after an
        impact, 1 + 3 (1 - e^2) / 4 without one (v_imp below the guard: the seed's ratio 1, a
        stiffer contact with no hysteresis, all of it elastic)."""
        factor = _hysteresis(_ca(0.0), impact_velocity, self.restitution, self.velocity_guard)
        return factor * self.potential(delta)

    def problems(self, owner):
        out = []
        _stiffness_problems(out, owner, self.stiffness, self.exponent)
        _restitution_problems(out, owner, self.restitution)
        _check(out, owner, "velocity_guard", self.velocity_guard, lambda v: v > 0, "> 0")
        return out


@dataclass(frozen=True)
class ModifiedKelvinVoigt(ContactLaw):
    """Modified Kelvin-Voigt law (seed 001 eq. 54, Flores et al. 2008):
    f = K delta phi(delta_dot) for delta > 0, with

    - phi = c_e                                    for delta_dot < 0 (restitution),
    - phi = c_e + (1 - c_e)(3 r^2 - 2 r^3),  r = delta_dot / v0,  for 0 <= delta_dot <= v0,
    - phi = 1                                      for delta_dot > v0 (compression).

    The seed's PDF text lost the symbols of eq. 54; this is a reconstruction from what is
    left (the branch conditions, "K c_e", "3r^2 - 2r^3", r = delta_dot / v0) and from the
    text: loading with stiffness K, unloading with c_e K, the smoothstep in between removes
    the jump of the force when delta_dot changes sign.

    Parameters
    ----------
    stiffness : float
        K (N/m), > 0.
    restitution : float
        c_e, in (0, 1]: the unloading stiffness is c_e K.
    velocity_tolerance : float
        v0 (m/s), > 0.

    Notes
    -----
    For an impact at a speed v >> v0 the exit speed is sqrt(c_e) v (load along K delta,
    unload along c_e K delta). ``potential`` is the energy of the unloading line, c_e K
    delta^2 / 2: what an element gets back; the excess of the loading force over it,
    (1 - c_e) K delta (3 r^2 - 2 r^3), acts only while delta grows, so its work is <= 0
    (the law's loss).

    Examples
    --------
    >>> law = ModifiedKelvinVoigt(1e5, restitution=0.01, velocity_tolerance=0.1)
    >>> [round(float(law.force(1e-3, v)), 9) for v in (-1.0, 0.05, 1.0)]
    [1.0, 50.5, 100.0]
    """

    # the loading branch above c_e K delta is all damping, switching within v0 / (K delta / m):
    # split (trapezoidal) it rings and the contacts end early (measured on the triple pendulum)
    damping_step = "whole"

    stiffness: float
    restitution: float = 0.01
    velocity_tolerance: float = 0.1

    def force(self, delta, delta_dot, impact_velocity=None):
        r = ca.fmin(ca.fmax(_ca(delta_dot) / self.velocity_tolerance, 0), 1)
        phi = self.restitution + (1 - self.restitution) * (3 * r**2 - 2 * r**3)
        return self.stiffness * ca.fmax(_ca(delta), 0) * phi

    def potential(self, delta):
        return 0.5 * self.restitution * self.stiffness * ca.fmax(_ca(delta), 0) ** 2

    @property
    def loading_stiffness_ratio(self) -> float:
        """K over c_e K: an impact loads along the stiff line (``ContactLaw``).

        Examples
        --------
        >>> ModifiedKelvinVoigt(1e5, restitution=0.01).loading_stiffness_ratio
        100.0
        """
        return 1.0 / self.restitution

    def problems(self, owner):
        out = []
        _stiffness_problems(out, owner, self.stiffness)
        _restitution_problems(out, owner, self.restitution)
        _check(out, owner, "velocity_tolerance", self.velocity_tolerance, lambda v: v > 0, "> 0")
        return out


_Y_BREAK_MM = 0.34954          # eq. 48: where the two fits of Y meet
_INTERNAL_RANGE_MM = (0.005, 10.0)


@dataclass(frozen=True)
class Pereira(ContactLaw):
    """Cylindrical contact law of Pereira, Ramalho and Ambrosio (2015), seed 001 eqs. 44-48:
    f = max((a dR + b) L E* / (N dR) delta^n [1 + 3 (1 - c_e^2) / 4 * delta_dot / v_imp], 0).

    - a = 0.965, b = 0.0965 (internal contact); a = 0.39, b = 0.85 (external),
    - n = Y dR^0.005 (internal); n = 1.094 (external),
    - Y = 1.51 [ln(1000 dR)]^-0.151 for dR in [0.005, 0.34954] mm,
      Y = 0.0151 dR + 1.151 for dR in [0.34954, 10] mm,
    - E* = E / (2 (1 - nu^2)) (both bodies of the same material),
    - dR = R_j - R_i (internal) or R_j + R_i (external); N strips share the length L.

    The ratio delta_dot / v_imp is guarded as in :class:`LankaraniNikravesh`.

    Parameters
    ----------
    restitution : float
        c_e, in (0, 1].
    youngs_modulus : float
        E (Pa), > 0.
    poisson_ratio : float
        nu, in (-1, 0.5).
    length : float
        L (m), the length of the contact (of the whole bore; each strip gets L / N).
    radial_clearance : float
        dR (m): R_j - R_i for internal contact, R_j + R_i for external contact.
    internal : bool
        Internal (journal in bore) or external (cylinder on cylinder) contact.
    n_strips : int
        N, the number of strips the contact length is divided into.
    velocity_guard : float
        Impact speeds below it (m/s) count as v_imp -> 0.

    Notes
    -----
    Units. The seed states none. This class takes SI input (m, Pa) and evaluates the fitted
    expressions (a dR + b) / dR and Y with dR in millimetres, E* in Pa, L and delta in
    metres, f in N. Why mm for dR: eq. 48 gives its ranges in mm, and with dR in mm the two
    branches of Y meet at the break point 0.34954 mm (both give 1.156278); with dR in m,
    ln(1000 dR) would be negative over the whole range and Y undefined. That the fit takes
    delta in m (and E* in Pa, L in m) could not be checked against the original paper (not
    found by the literature search): it is an assumption. The law is not dimensionally
    homogeneous for n != 1, so if the fit used delta in mm with E* in MPa and L in mm, the
    force would be 1000^(n - 1) times the one computed here (about 2 for n = 1.1).
    ``stiffness`` and ``exponent`` expose the derived K = (a dR + b) L E* / (N dR) and n.

    Examples
    --------
    >>> law = Pereira(0.75, 2.07e11, 0.3, length=0.02, radial_clearance=1e-3)   # dR = 1 mm
    >>> round(law.exponent, 4)        # Y(1 mm) * 1^0.005 = 0.0151 + 1.151
    1.1661
    """

    restitution: float
    youngs_modulus: float
    poisson_ratio: float
    length: float
    radial_clearance: float
    internal: bool = True
    n_strips: int = 1
    velocity_guard: float = 1e-8
    needs_impact_velocity = True

    @property
    def clearance_mm(self) -> float:
        """dR in millimetres, the unit of the fitted expressions."""
        return 1e3 * float(self.radial_clearance)

    @property
    def exponent(self) -> float:
        """n of eq. 47."""
        if not self.internal:
            return 1.094
        dR = self.clearance_mm
        Y = (1.51 * np.log(1000 * dR) ** -0.151 if dR <= _Y_BREAK_MM
             else 0.0151 * dR + 1.151)
        return float(Y * dR**0.005)

    @property
    def stiffness(self) -> float:
        """K = (a dR + b) L E* / (N dR) of eq. 44 (dR in mm in the ratio)."""
        a, b = (0.965, 0.0965) if self.internal else (0.39, 0.85)
        E_star = self.youngs_modulus / (2 * (1 - self.poisson_ratio**2))
        dR = self.clearance_mm
        return float((a * dR + b) * self.length * E_star / (self.n_strips * dR))

    # the Lankarani-Nikravesh law with the fitted stiffness and exponent
    force = LankaraniNikravesh.force
    potential = LankaraniNikravesh.potential
    elastic_potential = LankaraniNikravesh.elastic_potential

    def problems(self, owner):
        out = []
        _restitution_problems(out, owner, self.restitution)
        _check(out, owner, "youngs_modulus", self.youngs_modulus, lambda v: v > 0, "> 0")
        _check(out, owner, "poisson_ratio", self.poisson_ratio, lambda v: -1 < v < 0.5,
               "in (-1, 0.5)")
        _check(out, owner, "length", self.length, lambda v: v > 0, "> 0")
        _check(out, owner, "radial_clearance", self.radial_clearance, lambda v: v > 0, "> 0")
        n = self.n_strips
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
            out.append(f"{owner}: n_strips must be an integer >= 1, got {n}")
        lo, hi = _INTERNAL_RANGE_MM
        dR = _real(self.radial_clearance)
        if self.internal and dR is not None and dR > 0 and not lo <= 1e3 * dR <= hi:
            out.append(f"{owner}: radial_clearance {self.radial_clearance} m is outside the "
                       f"fitted range [{lo}, {hi}] mm of the internal-contact law")
        _check(out, owner, "velocity_guard", self.velocity_guard, lambda v: v > 0, "> 0")
        return out


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

    def force(self, delta, delta_dot, impact_velocity=None):
        return self.stiffness * _ca(delta) + self.damping * _ca(delta_dot)

    def potential(self, delta):
        return 0.5 * self.stiffness * _ca(delta) ** 2

    def problems(self, owner):
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

    def __post_init__(self):
        for name in ("displacements", "forces"):
            value = as_vector(getattr(self, name))
            if isinstance(value, np.ndarray):   # else kept as given, for problems()
                object.__setattr__(self, name, tuple(float(v) for v in value))

    def _pieces(self):
        x, f = np.array(self.displacements), np.array(self.forces)
        return x, f, np.diff(f) / np.diff(x)

    def force(self, delta, delta_dot, impact_velocity=None):
        x, f, s = self._pieces()
        d = _ca(delta)
        out = f[0] + s[0] * (d - x[0])
        for k in range(1, len(s)):          # the slope changes at every interior breakpoint
            out = out + (s[k] - s[k - 1]) * ca.fmax(d - x[k], 0)
        return out + self.damping * _ca(delta_dot)

    def potential(self, delta):
        x, f, s = self._pieces()
        d = _ca(delta)
        out = (f[0] - s[0] * x[0]) * d + 0.5 * s[0] * d**2
        for k in range(1, len(s)):          # int_0^d max(u - x_k, 0) du
            ramp = 0.5 * ca.fmax(d - x[k], 0) ** 2 - 0.5 * max(-x[k], 0.0) ** 2
            out = out + (s[k] - s[k - 1]) * ramp
        return out

    def problems(self, owner):
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
        return any(getattr(law, "needs_impact_velocity", False)
                   for law in (self.bushing, self.contact))

    @property
    def loading_stiffness_ratio(self) -> float:
        """The larger of the two laws' (``ContactLaw``).

        Examples
        --------
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

    def force(self, delta, delta_dot, impact_velocity=None):
        c, b, beta = self.clearance, self.bushing_compression, self.blend_width
        d = _ca(delta)
        f_b = self.bushing.force(d - c, delta_dot, impact_velocity)
        f_c = self.contact.force(d - c - b, delta_dot, impact_velocity)
        w = ca.fmin(ca.fmax((d - c - b) / beta, 0), 1)
        return ca.if_else(d - c <= 0, 0, ca.fmax((1 - w) * f_b + w * f_c, 0))

    def potential(self, delta):
        # as the laws' own potentials: after an impact
        return self.elastic_potential(delta, np.inf)

    def elastic_potential(self, delta, impact_velocity=None):
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

    def problems(self, owner):
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
