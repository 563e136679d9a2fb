"""Interfaces every constraint element implements.

A bilateral element (ideal joint, driver, programmed constraint) returns its equations
Phi(q, t) = 0; a unilateral element (clearance joint) returns its gaps g(q) >= 0. Both are
plain CasADi expressions of the bodies' symbolic states: the system differentiates them,
no element writes a Jacobian.
"""
from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..body import BodyState, RigidBody
from ..checks import UNIT_NORMALISE, as_vector, is_vector, vector_problems

if TYPE_CHECKING:
    from .._typing import Symbolic

UNIT_TOL = 1e-9


def check_unit(vec, label: str, owner: str) -> list[str]:
    """[] for a unit vector (to ``UNIT_TOL``), else one message. Constructors normalise what
    is within ``checks.UNIT_NORMALISE`` of unit (``checks.as_unit_vector``)."""
    vec = as_vector(vec)
    if not is_vector(vec):
        return vector_problems(owner, label, vec)
    if abs(np.linalg.norm(vec) - 1) > UNIT_TOL:
        return [f"{owner}: {label} must be a unit vector, |{label}| = {np.linalg.norm(vec):.12g} "
                f"(constructors normalise within {UNIT_NORMALISE:g} of 1)"]
    return []


class Element:
    """Something attached to bodies: a joint, a driver, a force element."""

    kind = "element"
    bodies: tuple[RigidBody, ...] = ()
    name: str | None = None

    def problems(self) -> list[str]:
        """Every problem with this element's data (empty when valid).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> arm = nd.System().add_body("arm", 1.0, (1e-3, 1e-3, 1e-3))
        >>> nd.Revolute(arm, arm, (0, 0, 0), (0, 0, 1)).problems()
        ["revolute joint (unnamed): connects body 'arm' to itself"]
        """
        out = []
        for b in self.bodies:
            if not isinstance(b, RigidBody):
                out.append(f"{self.label}: {b!r} is not a body")
        if len(self.bodies) == 2 and self.bodies[0] is self.bodies[1] and \
                isinstance(self.bodies[0], RigidBody):
            out.append(f"{self.label}: connects body '{self.bodies[0].name}' to itself")
        return out

    @property
    def label(self) -> str:
        return f"{self.kind} (unnamed)" if self.name is None else f"{self.kind} '{self.name}'"

    def default_name(self, taken: Collection[str]) -> str:
        """The name :class:`~nlpdyn.System` gives this element when added without one: the
        class name and the first number not in ``taken`` (a set of names).

        Parameters
        ----------
        taken : collection of str
            The names already given.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08))
        >>> nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)).default_name({"revolute1"})
        'revolute2'
        """
        return _first_free(type(self).__name__.lower(), taken)


def _first_free(base, taken) -> str:
    """``base1``, ``base2``, ...: the first not in ``taken``."""
    k = 1
    while f"{base}{k}" in taken:
        k += 1
    return f"{base}{k}"


class BilateralConstraint(Element):
    """Equality constraints Phi(q, t) = 0 (ideal joints, drivers, programmed constraints).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> pin = nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0))
    >>> isinstance(pin, nd.BilateralConstraint), pin.n_equations
    (True, 5)
    """

    kind = "constraint"
    n_equations: int = 0

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        """CasADi column of length ``n_equations``; ``states`` follow ``self.bodies``.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order.
        t : float or CasADi scalar
            Time (s).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> pin = s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)))
        >>> pin.equations(s.compile().states_of(pin), 0.0).shape
        (5, 1)
        """
        raise NotImplementedError

    def reaction_point(self) -> np.ndarray | None:
        """Global point (initial configuration) about which reaction torques are reported
        (None: about each body's centre of mass).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (1e-3, 0.08, 0.08), position=(0.5, 0, 0))
        >>> nd.Revolute(s.ground, bar, (0, 0, 0), (0, 1, 0)).reaction_point()
        array([0., 0., 0.])
        """
        return None


class UnilateralConstraint(Element):
    """Gaps g(q) >= 0 with nonnegative normal forces (clearance joints).

    A gap is given by its contact coordinates: ``contact_coordinates(states)`` returns one
    ``(d, radius)`` pair per gap. A flat gap (``radius`` None) is g = d, d a scalar; a round
    gap is g = radius - |d|, d (2 or 3 components) an offset measured in a frame fixed to one
    of the bodies (a bore centre's offset from the pin axis, a ball centre's from the socket
    centre). The stepper takes d's Jacobian at the start of each step (the lever arms) and
    the outer law (the circle or sphere) exactly at its end (docs/FORMULATION.md, "Radial
    clearance as a cone"). An element that only defines ``gaps`` has flat gaps.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> pin = s.add_body("pin", 0.1, (1e-5, 1e-5, 1e-5))
    >>> bore = nd.CylindricalClearance(s.ground, pin, (0, 0, 0), (0, 0, 1), radius=0.01,
    ...                                clearance=1e-4, length=0.02)
    >>> isinstance(bore, nd.UnilateralConstraint), bore.friction
    (True, 0.0)
    """

    kind = "gap"
    n_gaps: int = 0
    friction: float = 0.0
    """Coulomb coefficient of every gap's contact (0: frictionless)."""

    def contact_coordinates(self, states: list[BodyState]) -> list[tuple]:
        """One (d, radius) pair per gap: d a CasADi column, radius None (flat) or > 0.

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> pin = s.add_body("pin", 0.1, (1e-5, 1e-5, 1e-5))
        >>> bore = s.add_joint(nd.CylindricalClearance(s.ground, pin, (0, 0, 0), (0, 0, 1),
        ...                                            radius=0.01, clearance=1e-4, length=0.02))
        >>> pairs = bore.contact_coordinates(s.compile().states_of(bore))
        >>> [(d.shape, radius) for d, radius in pairs]      # the bore's two ends, round gaps
        [((2, 1), 0.0001), ((2, 1), 0.0001)]
        """
        g = self.gaps(states)
        return [(g[i], None) for i in range(g.numel())]

    def gaps(self, states: list[BodyState]) -> Symbolic:
        """CasADi column of length ``n_gaps`` (true, nonlinear gaps).

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> pin = s.add_body("pin", 0.1, (1e-5, 1e-5, 1e-5))
        >>> bore = s.add_joint(nd.CylindricalClearance(s.ground, pin, (0, 0, 0), (0, 0, 1),
        ...                                            radius=0.01, clearance=1e-4, length=0.02))
        >>> states = s.compile().states_of(bore)
        >>> bore.gaps(states).shape
        (2, 1)
        """
        if type(self).contact_coordinates is UnilateralConstraint.contact_coordinates:
            raise NotImplementedError(f"{type(self).__name__} defines neither gaps() nor "
                                      "contact_coordinates()")
        return ca.vertcat(*[gap_law(d, radius) for d, radius in self.contact_coordinates(states)])

    def contact_points(self, states: list[BodyState]) -> Symbolic:
        """Global contact point of every gap, CasADi matrix of shape (n_gaps, 3).

        Parameters
        ----------
        states : list of BodyState
            The states of ``self.bodies``, in that order.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> pin = s.add_body("pin", 0.1, (1e-5, 1e-5, 1e-5))
        >>> bore = s.add_joint(nd.CylindricalClearance(s.ground, pin, (0, 0, 0), (0, 0, 1),
        ...                                            radius=0.01, clearance=1e-4, length=0.02))
        >>> states = s.compile().states_of(bore)
        >>> bore.contact_points(states).shape
        (2, 3)
        """
        raise NotImplementedError

    def reaction_point(self) -> np.ndarray | None:
        """Global point (initial configuration) about which the contact moments are reported
        (None: about each body's centre of mass).

        Examples
        --------
        >>> import nlpdyn as nd
        >>> nd.UnilateralConstraint().reaction_point() is None
        True
        """
        return None


# Smoothing of |d| at d = 0 (relative to the radius): |d| ~ sqrt(d.d + (EPS r)^2). At contact
# (|d| = r) it changes the gap by EPS^2 r / 2 = 5e-13 r.
NORM_EPS = 1e-6


def smooth_norm(d, radius):
    """|d|, smoothed at d = 0 so that gaps stay differentiable with the bodies centred."""
    return ca.sqrt(ca.dot(d, d) + (NORM_EPS * radius) ** 2)


def gap_law(d, radius):
    """The gap of contact coordinates d: d itself (flat, radius None) or radius - |d|."""
    return d if radius is None else radius - smooth_norm(d, radius)
