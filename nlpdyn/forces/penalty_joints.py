"""Joints with clearance as penalty force elements (seed 001, sections 2.3-2.4).

A penalty clearance joint measures penetrations delta_k of the same geometry the
complementarity clearance joints of :mod:`nlpdyn.joints.clearance` use (delta_k = -gap_k)
and applies a :class:`~nlpdyn.forces.contact_laws.ContactLaw` to each: force f_k along the
contact normal n_k on the child, -f_k n_k on the parent, both at the contact point x_k (seed
001 eqs. 20-24, 38-41). Each element takes the data of its complementarity counterpart, in the
same order, plus the law; :func:`penalty_version` converts a clearance joint (or an ideal
spherical, revolute or cylindrical joint, with clearance 0) into its penalty element, so one
joint description runs as ideal, complementarity clearance or penalty clearance/bushing.

Conventions shared by all elements:

- a contact pushes only while it is closed: f_k = law(delta_k, delta_dot_k, v_imp,k) for
  delta_k > 0, else 0; the stored energy is law.elastic_potential(max(delta_k, 0)). A signed law
  (bushing with damping) may pull while delta_k > 0.
- delta_dot_k = -n_k . (v_child(x_k) - v_parent(x_k)), the normal relative velocity of the
  two bodies' material points at x_k. For the geometries here (signed distances along n_k)
  this is the exact time derivative of delta_k, so the wrench is minus the gradient of the
  stored energy (virtual work).
- laws with hysteresis damping (``needs_impact_velocity``) remember per contact the impact
  speed, with what it is estimated from (:func:`~nlpdyn.forces.base.impact_memory`: the
  approach rate carried to the closure).
- ``evaluation = "implicit"``: contact laws are stiff.

Examples
--------
>>> import nlpdyn as nd
>>> from nlpdyn.forces.penalty_joints import PenaltySphericalClearance
>>> s = nd.System()
>>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
>>> law = nd.LankaraniNikravesh(5e6, 1.5, 0.75)
>>> ball = s.add_force(PenaltySphericalClearance(s.ground, rod, (0, 0, 0), 1e-4, law,
...                                              name="ball"))
>>> ball.n_contacts, ball.history_size, ball.evaluation
(1, 4, 'implicit')
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..joints.clearance import (CylindricalClearance, PrismaticClearance, RevoluteClearance,
                                SphericalClearance)
from ..joints.ideal import Cylindrical, Revolute, Spherical
# the shared base and kinematics, and one class per joint type
from .penalty_base import PenaltyClearanceJoint, rate_of
from .penalty_clearance import (PenaltyCylindricalClearance, PenaltyPrismaticClearance,
                                PenaltyRevoluteClearance, PenaltySphericalClearance)

if TYPE_CHECKING:
    from ..joints.clearance import ClearanceJoint
    from ..joints.ideal import Joint
    from .law_base import ContactLaw

__all__ = ["PenaltyClearanceJoint", "PenaltySphericalClearance", "PenaltyCylindricalClearance",
           "PenaltyRevoluteClearance", "PenaltyPrismaticClearance", "penalty_version", "rate_of"]


def penalty_version(joint: ClearanceJoint | Joint, law: ContactLaw, *,
                    clearance: float | None = None, radius: float | None = None,
                    length: float | None = None, axial_clearance: float | None = None,
                    n_strips: int = 4,
                    axial_law: ContactLaw | None = None, name: str | None = None,
                    tilt_correction: bool = False) -> PenaltyClearanceJoint:
    """The penalty element with the same data as ``joint``.

    Parameters
    ----------
    joint : ClearanceJoint, Spherical, Revolute or Cylindrical
        A complementarity clearance joint (``SphericalClearance``, ``CylindricalClearance``,
        ``RevoluteClearance``, ``PrismaticClearance``; its data is copied; ``clearance``,
        ``radius``, ``length``, ``axial_clearance`` override it when given) or an ideal joint
        (``Spherical``, ``Revolute``, ``Cylindrical``; then the penalty joint has
        ``clearance`` and ``axial_clearance`` (default 0: a bushing-like joint with no play)
        and needs ``radius`` and ``length`` for Revolute/Cylindrical; ``radius`` of a
        Spherical is the optional ball radius).
    law : ContactLaw
    n_strips, axial_law, tilt_correction
        For the cylindrical and revolute elements.
    name : str, optional
        Default: the joint's name.

    Returns
    -------
    PenaltyClearanceJoint

    Raises
    ------
    ValueError
        An ideal Revolute/Cylindrical without ``radius`` or ``length``.
    TypeError
        A joint with no penalty version.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> rod = s.add_body("rod", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> pin = nd.Revolute(s.ground, rod, (0, 0, 0), (0, 0, 1), name="pin")
    >>> el = penalty_version(pin, nd.Hertz(1e9, 1.5), radius=0.01, length=0.02, n_strips=2)
    >>> el.name, el.clearance, el.axial_clearance, el.n_contacts
    ('pin', 0.0, 0.0, 4)
    """
    name = joint.name if name is None else name

    def pick(given, attr, default=None):
        if given is not None:
            return given
        return getattr(joint, attr) if hasattr(joint, attr) else default

    axial = {"n_strips": n_strips, "name": name, "tilt_correction": tilt_correction}
    if isinstance(joint, SphericalClearance):
        return PenaltySphericalClearance(joint.parent, joint.child, joint.point,
                                         pick(clearance, "clearance"), law,
                                         pick(radius, "radius"), name)
    if isinstance(joint, RevoluteClearance):
        return PenaltyRevoluteClearance(joint.parent, joint.child, joint.point, joint.axis,
                                        pick(radius, "radius"), pick(clearance, "clearance"),
                                        pick(length, "length"),
                                        pick(axial_clearance, "axial_clearance"), law,
                                        axial_law, offset=joint.offset, **axial)
    if isinstance(joint, CylindricalClearance):
        return PenaltyCylindricalClearance(joint.parent, joint.child, joint.point, joint.axis,
                                           pick(radius, "radius"), pick(clearance, "clearance"),
                                           pick(length, "length"), law, offset=joint.offset,
                                           **axial)
    if isinstance(joint, PrismaticClearance):
        return PenaltyPrismaticClearance(joint.parent, joint.child, joint.point, joint.axis,
                                         joint.profile, pick(clearance, "clearance"),
                                         pick(length, "length"), law, joint.section_x, name)
    c = 0.0 if clearance is None else clearance
    if isinstance(joint, Spherical):
        return PenaltySphericalClearance(joint.parent, joint.child, joint.point, c, law,
                                         0.0 if radius is None else radius, name)
    if isinstance(joint, (Revolute, Cylindrical)):
        missing = [k for k, v in (("radius", radius), ("length", length)) if v is None]
        if missing:
            raise ValueError(f"{joint.label}: give {' and '.join(missing)} for its penalty "
                             "version")
        if isinstance(joint, Revolute):
            return PenaltyRevoluteClearance(joint.parent, joint.child, joint.point, joint.axis,
                                            radius, c, length,
                                            0.0 if axial_clearance is None else axial_clearance,
                                            law, axial_law, **axial)
        return PenaltyCylindricalClearance(joint.parent, joint.child, joint.point, joint.axis,
                                           radius, c, length, law, **axial)
    raise TypeError(f"no penalty version of {type(joint).__name__}; give a SphericalClearance, "
                    "CylindricalClearance, RevoluteClearance, PrismaticClearance, Spherical, "
                    "Revolute or Cylindrical")
