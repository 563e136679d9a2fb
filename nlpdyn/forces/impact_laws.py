"""The unilateral contact laws: Hertz, its hysteresis-damped form (Lankarani-Nikravesh), the
modified Kelvin-Voigt law and Pereira's cylindrical law (seed 001 eqs. 43-48 and 54).

Each gives no force for ``delta <= 0`` and never pulls; see :mod:`nlpdyn.forces.contact_laws`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from .law_base import (ContactLaw, _ca, _check, _hysteresis, _positive_power, _real,
                       _restitution_problems, _stiffness_problems)

if TYPE_CHECKING:
    from .._typing import Symbolic, Value

__all__ = ["Hertz", "LankaraniNikravesh", "ModifiedKelvinVoigt", "Pereira"]


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

    def force(self, delta: Value, delta_dot: Value = 0.0,
              impact_velocity: Value | None = None) -> Symbolic:
        return self.stiffness * _positive_power(_ca(delta), self.exponent)

    def potential(self, delta: Value) -> Symbolic:
        n = self.exponent
        return self.stiffness * _positive_power(_ca(delta), n + 1) / (n + 1)

    def problems(self, owner: str) -> list[str]:
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

    def force(self, delta: Value, delta_dot: Value,
              impact_velocity: Value | None = None) -> Symbolic:
        elastic = self.stiffness * _positive_power(_ca(delta), self.exponent)
        damping = _hysteresis(_ca(delta_dot), impact_velocity, self.restitution,
                              self.velocity_guard)
        return ca.fmax(elastic * damping, 0)

    def potential(self, delta: Value) -> Symbolic:
        return Hertz(self.stiffness, self.exponent).potential(delta)

    def elastic_potential(self, delta: Value, impact_velocity: Value | None = None) -> Symbolic:
        """The Hertz part's energy, times the hysteresis factor at zero rate: 1 after an
        impact, 1 + 3 (1 - e^2) / 4 without one (v_imp below the guard: the seed's ratio 1, a
        stiffer contact with no hysteresis, all of it elastic).

        Parameters
        ----------
        delta : float or casadi.SX or casadi.MX
            Penetration (m).
        impact_velocity : float or casadi.SX or casadi.MX, optional
            The remembered impact speed (m/s); None or below ``velocity_guard``: no impact.

        Returns
        -------
        casadi.DM or casadi.SX or casadi.MX
            The stored energy (J).

        Examples
        --------
        >>> law = LankaraniNikravesh(1e6, 1.5, restitution=0.6)
        >>> round(float(law.elastic_potential(1e-2, impact_velocity=1.0)), 9)   # K d^2.5 / 2.5
        4.0
        >>> round(float(law.elastic_potential(1e-2)), 9)                   # * (1 + 0.75 * 0.64)
        5.92
        """
        factor = _hysteresis(_ca(0.0), impact_velocity, self.restitution, self.velocity_guard)
        return factor * self.potential(delta)

    def problems(self, owner: str) -> list[str]:
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

    def force(self, delta: Value, delta_dot: Value,
              impact_velocity: Value | None = None) -> Symbolic:
        r = ca.fmin(ca.fmax(_ca(delta_dot) / self.velocity_tolerance, 0), 1)
        phi = self.restitution + (1 - self.restitution) * (3 * r**2 - 2 * r**3)
        return self.stiffness * ca.fmax(_ca(delta), 0) * phi

    def potential(self, delta: Value) -> Symbolic:
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

    def problems(self, owner: str) -> list[str]:
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

    def problems(self, owner: str) -> list[str]:
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
