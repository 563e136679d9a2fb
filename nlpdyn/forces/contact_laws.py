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

# the shared base and quadrature, the unilateral contact laws, the bushing laws
from .bushing_laws import Blended, LinearBushing, TabulatedBushing
from .impact_laws import Hertz, LankaraniNikravesh, ModifiedKelvinVoigt, Pereira
from .law_base import QUADRATURE_POINTS, ContactLaw, integral_from_zero  # noqa: F401

__all__ = ["ContactLaw", "Hertz", "LankaraniNikravesh", "ModifiedKelvinVoigt", "Pereira",
           "LinearBushing", "TabulatedBushing", "Blended"]
