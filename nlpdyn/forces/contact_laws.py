"""Normal force laws of a penetration delta (m, > 0 in contact) and its rate (m/s, > 0 while
the penetration grows), seed 001 section 2.4.2 and eq. 54.

Every law works on CasADi symbols and on plain numbers (it returns CasADi values) so the
elements that use it can be evaluated at either end of a step. Laws with hysteresis damping
need the impact velocity (the penetration rate when the contact closed); the element keeps it
in its memory (see :class:`~nlpdyn.forces.base.ForceElement`).

Example
-------
>>> law = LankaraniNikravesh(stiffness=1e5, exponent=1.5, restitution=0.75)
>>> round(float(law.force(1e-4, 0.0, impact_velocity=0.5)), 6)
0.1
"""
from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np


def _positive_power(delta, exponent):
    """max(delta, 0)^n with a finite derivative at delta = 0 (n >= 1)."""
    d = ca.fmax(delta, 0)
    return ca.if_else(d > 0, d ** exponent, 0)


def _hysteresis(delta_dot, impact_velocity, restitution, guard):
    """1 + 3 (1 - e^2)/4 * r, r = delta_dot / v_imp; r -> 1 when delta_dot > v_imp or when
    v_imp -> 0 (seed 001's guard, text after eq. 43)."""
    v_imp = ca.fmax(impact_velocity, 0)
    ratio = ca.if_else(v_imp < guard, 1, ca.fmin(delta_dot / ca.fmax(v_imp, guard), 1))
    return 1 + 0.75 * (1 - restitution**2) * ratio


class ContactLaw:
    """Base of the force laws. ``force(delta, delta_dot, impact_velocity)`` >= 0 (bushing laws
    may be signed), ``potential(delta)``: the elastic energy stored, or None."""

    needs_impact_velocity = False

    def force(self, delta, delta_dot, impact_velocity=None):
        raise NotImplementedError

    def potential(self, delta):
        return None

    def problems(self, owner: str) -> list[str]:
        return []

    def _check(self, owner, **conditions):
        return [f"{owner}: {msg}" for ok, msg in conditions.values() if not ok]


@dataclass(frozen=True)
class Hertz(ContactLaw):
    """f = K delta^n (elastic, no dissipation); potential K delta^(n+1) / (n+1)."""

    stiffness: float
    exponent: float = 1.5

    def force(self, delta, delta_dot=0.0, impact_velocity=None):
        return self.stiffness * _positive_power(delta, self.exponent)

    def potential(self, delta):
        return self.stiffness * _positive_power(delta, self.exponent + 1) / (self.exponent + 1)

    def problems(self, owner):
        return _stiffness_problems(owner, self.stiffness, self.exponent)


@dataclass(frozen=True)
class LankaraniNikravesh(ContactLaw):
    """Hertz with hysteresis damping (seed 001 eq. 43):
    f = K delta^n [1 + 3 (1 - e^2)/4 * delta_dot / v_imp], clipped at 0.

    v_imp is the impact velocity; the ratio is replaced by 1 when delta_dot exceeds v_imp or
    v_imp is below ``velocity_guard`` (the seed's guard against 0/0 at a contact that closes
    at rest). The energy lost in an impact is 1/2 m v_imp^2 (1 - e^2) for e close to 1.
    """

    stiffness: float
    exponent: float = 1.5
    restitution: float = 0.75
    velocity_guard: float = 1e-8
    needs_impact_velocity = True

    def force(self, delta, delta_dot, impact_velocity=0.0):
        elastic = self.stiffness * _positive_power(delta, self.exponent)
        return ca.fmax(elastic * _hysteresis(delta_dot, impact_velocity, self.restitution,
                                             self.velocity_guard), 0)

    def potential(self, delta):
        return Hertz(self.stiffness, self.exponent).potential(delta)

    def problems(self, owner):
        return _stiffness_problems(owner, self.stiffness, self.exponent) + \
            _restitution_problems(owner, self.restitution)


@dataclass(frozen=True)
class ModifiedKelvinVoigt(ContactLaw):
    """Seed 001 eq. 54 (Flores et al. 2008), as reconstructed from the seed's text:
    f = K delta phi(delta_dot) with phi = c_e for delta_dot < 0 (restitution), 1 for
    delta_dot > v0 (compression), and c_e + (1 - c_e)(3 r^2 - 2 r^3), r = delta_dot / v0, in
    between: loading with stiffness K, unloading with c_e K, smoothed over the velocity
    tolerance v0. Not conservative (the loop loses (1 - c_e) of the stored energy), so no
    potential. With c_e small a penetration can stay (the seed's "residual deformation")."""

    stiffness: float
    restitution: float = 0.01
    velocity_tolerance: float = 0.1

    def force(self, delta, delta_dot, impact_velocity=None):
        r = ca.fmin(ca.fmax(delta_dot / self.velocity_tolerance, 0), 1)
        phi = self.restitution + (1 - self.restitution) * (3 * r**2 - 2 * r**3)
        return self.stiffness * ca.fmax(delta, 0) * phi

    def problems(self, owner):
        out = _stiffness_problems(owner, self.stiffness, 1.0)
        if not 0 <= self.restitution <= 1:
            out.append(f"{owner}: restitution must be in [0, 1], got {self.restitution}")
        if not self.velocity_tolerance > 0:
            out.append(f"{owner}: velocity_tolerance must be > 0, got {self.velocity_tolerance}")
        return out


@dataclass(frozen=True)
class Pereira(ContactLaw):
    """Cylindrical contact law of Pereira, Ramalho and Ambrosio (seed 001 eqs. 44-48):
    f = (a dR + b) L E* / (N dR) delta^n [1 + 3 (1 - e^2)/4 delta_dot / v_imp].

    a = 0.965, b = 0.0965 (internal contact; 0.39, 0.85 external), n = Y dR^0.005 (internal;
    1.094 external), Y = 1.51 [ln(1000 dR)]^-0.151 for dR in [0.005, 0.34954] mm and
    0.0151 dR + 1.151 for dR in [0.34954, 10] mm; E* = E / (2 (1 - nu^2)); dR = R_j - R_i
    (internal) or R_j + R_i (external); N strips share the length L.
    Units: the seed states none. The fitted constants (a dR + b, Y) take dR in mm, as the
    ranges of eq. 48 say; E* in Pa, L in m and delta in m give f in N with (a dR + b)/dR
    dimensionless (both in mm). This reading is an assumption.
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
    def _dR_mm(self):
        return 1e3 * self.radial_clearance

    @property
    def exponent(self) -> float:
        if not self.internal:
            return 1.094
        dR = self._dR_mm
        Y = 1.51 * np.log(1000 * dR) ** -0.151 if dR <= 0.34954 else 0.0151 * dR + 1.151
        return float(Y * dR**0.005)

    @property
    def stiffness(self) -> float:
        a, b = (0.965, 0.0965) if self.internal else (0.39, 0.85)
        E_star = self.youngs_modulus / (2 * (1 - self.poisson_ratio**2))
        dR = self._dR_mm
        return float((a * dR + b) * self.length * E_star / (self.n_strips * dR))

    def force(self, delta, delta_dot, impact_velocity=0.0):
        elastic = self.stiffness * _positive_power(delta, self.exponent)
        return ca.fmax(elastic * _hysteresis(delta_dot, impact_velocity, self.restitution,
                                             self.velocity_guard), 0)

    def potential(self, delta):
        return Hertz(self.stiffness, self.exponent).potential(delta)

    def problems(self, owner):
        out = _restitution_problems(owner, self.restitution)
        if not self.youngs_modulus > 0:
            out.append(f"{owner}: youngs_modulus must be > 0, got {self.youngs_modulus}")
        if not 0 <= self.poisson_ratio < 0.5:
            out.append(f"{owner}: poisson_ratio must be in [0, 0.5), got {self.poisson_ratio}")
        if not self.length > 0:
            out.append(f"{owner}: length must be > 0, got {self.length}")
        if not (isinstance(self.n_strips, (int, np.integer)) and self.n_strips >= 1):
            out.append(f"{owner}: n_strips must be an integer >= 1, got {self.n_strips}")
        if self.internal and not 0.005 <= self._dR_mm <= 10:
            out.append(f"{owner}: radial_clearance {self.radial_clearance} m is outside the "
                       "fitted range [0.005, 10] mm of the internal-contact law")
        return out


@dataclass(frozen=True)
class LinearBushing(ContactLaw):
    """f = K delta + D delta_dot (seed 001 eq. 49, linear), signed; potential K delta^2 / 2."""

    stiffness: float
    damping: float = 0.0

    def force(self, delta, delta_dot, impact_velocity=None):
        return self.stiffness * delta + self.damping * delta_dot

    def potential(self, delta):
        return 0.5 * self.stiffness * delta**2

    def problems(self, owner):
        out = []
        if not self.stiffness >= 0:
            out.append(f"{owner}: stiffness must be >= 0, got {self.stiffness}")
        if not self.damping >= 0:
            out.append(f"{owner}: damping must be >= 0, got {self.damping}")
        return out


class TabulatedBushing(ContactLaw):
    """f = F(delta) + D delta_dot with F interpolated linearly in a measured table
    (``displacements`` strictly increasing, m; ``forces``, N) and extrapolated linearly beyond
    it; potential: the integral of F from 0."""

    def __init__(self, displacements, forces, damping=0.0):
        self.displacements = np.asarray(displacements, dtype=float).ravel()
        self.forces = np.asarray(forces, dtype=float).ravel()
        self.damping = float(damping)

    def _pieces(self):
        x, f = self.displacements, self.forces
        slopes = np.diff(f) / np.diff(x)
        return x, f, slopes

    def _static(self, delta):
        x, f, s = self._pieces()
        out = f[0] + s[0] * (delta - x[0])
        for k in range(1, len(s)):       # add the slope change at every interior breakpoint
            out = out + (s[k] - s[k - 1]) * ca.fmax(delta - x[k], 0)
        return out

    def force(self, delta, delta_dot, impact_velocity=None):
        return self._static(delta) + self.damping * delta_dot

    def potential(self, delta):
        x, f, s = self._pieces()
        f0 = f[0] - s[0] * x[0]            # F(0) of the first piece's line

        def ramp_integral(d, xk):          # int_0^d max(u - xk, 0) du
            return 0.5 * ca.fmax(d - xk, 0) ** 2 - 0.5 * max(-xk, 0.0) ** 2
        out = f0 * delta + 0.5 * s[0] * delta**2
        for k in range(1, len(s)):
            out = out + (s[k] - s[k - 1]) * ramp_integral(delta, x[k])
        return out

    def problems(self, owner):
        out = []
        x, f = self.displacements, self.forces
        if x.shape != f.shape or x.size < 2:
            return [f"{owner}: displacements and forces must be tables of equal length >= 2"]
        if np.any(np.diff(x) <= 0):
            out.append(f"{owner}: displacements must be strictly increasing")
        if not self.damping >= 0:
            out.append(f"{owner}: damping must be >= 0, got {self.damping}")
        return out


@dataclass(frozen=True)
class Blended(ContactLaw):
    """Clearance, bushing and hard contact in one law (seed 001 eq. 50, weighted sum): free
    flight up to the clearance c; the bushing law f_b(delta - c) up to the bushing's maximum
    compression b; beyond it the bushing plus the hard contact law f_c(delta - c - b + beta),
    which enters with the weight w = (delta - c - b + beta) / beta rising from 0 to 1 over the
    blending width beta (default 0.01 b). As reconstructed from the seed's text; continuous in
    delta (f_c(0) = 0)."""

    clearance: float
    bushing_compression: float
    bushing: ContactLaw
    contact: ContactLaw
    blend: float | None = None

    @property
    def needs_impact_velocity(self):
        return self.contact.needs_impact_velocity or self.bushing.needs_impact_velocity

    @property
    def _beta(self):
        return 0.01 * self.bushing_compression if self.blend is None else self.blend

    def force(self, delta, delta_dot, impact_velocity=0.0):
        c, b, beta = self.clearance, self.bushing_compression, self._beta
        d1 = delta - c
        f_b = self.bushing.force(d1, delta_dot, impact_velocity)
        d2 = delta - c - b + beta
        w = ca.fmin(ca.fmax(d2 / beta, 0), 1)
        f_c = self.contact.force(d2, delta_dot, impact_velocity)
        return ca.if_else(d1 <= 0, 0, f_b + w * f_c)

    def problems(self, owner):
        out = self.bushing.problems(owner) + self.contact.problems(owner)
        if not self.clearance >= 0:
            out.append(f"{owner}: clearance must be >= 0, got {self.clearance}")
        if not self.bushing_compression > 0:
            out.append(f"{owner}: bushing_compression must be > 0, got {self.bushing_compression}")
        if not 0 < self._beta <= self.bushing_compression:
            out.append(f"{owner}: blend must be in (0, bushing_compression], got {self._beta}")
        return out


def _stiffness_problems(owner, stiffness, exponent):
    out = []
    if not (np.isfinite(stiffness) and stiffness > 0):
        out.append(f"{owner}: stiffness must be > 0, got {stiffness}")
    if not (np.isfinite(exponent) and exponent >= 1):
        out.append(f"{owner}: exponent must be >= 1, got {exponent}")
    return out


def _restitution_problems(owner, restitution):
    if not 0 < restitution <= 1:
        return [f"{owner}: restitution must be in (0, 1], got {restitution}"]
    return []
