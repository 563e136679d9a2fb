"""Gravity, point loads and linear spring-dampers."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

from ..body import RigidBody
from ..checks import (as_number, as_vector, call_user_function, is_vector, number_problems, show,
                      signature_problems, vector_problems)
from .base import ForceElement, point_wrench

if TYPE_CHECKING:
    from .._typing import Symbolic, Wrench
    from ..body import BodyState


def _load(value):
    """A load as given: None, a callable (t, state) -> 3-vector, or a constant 3-vector."""
    return value if value is None or callable(value) else as_vector(value)


def _load_problems(owner, name, value) -> list[str]:
    if value is None or is_vector(value):
        return []
    if callable(value):
        return signature_problems(owner, name, value, ["t", "state"])
    return [f"{owner}: {name} must be 3 finite numbers or a callable (t, state), got {show(value)}"]


class Gravity(ForceElement):
    """Uniform gravity ``g`` (m/s^2, global) on every body; potential -m g.r.

    A system adds it itself (``System.gravity``), named "gravity".

    Parameters
    ----------
    bodies : sequence of RigidBody
        The bodies it pulls on.
    g : array_like, shape (3,)
        The acceleration (m/s^2, global).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> _ = s.add_body("ball", mass=2.0, inertia=(1e-3, 1e-3, 1e-3))
    >>> cs = s.compile()
    >>> cs.force_elements[0].name, cs.force_elements[0].g.tolist()
    ('gravity', [0.0, 0.0, -9.81])
    """

    kind = "gravity"

    def __init__(self, bodies: Sequence[RigidBody], g: ArrayLike):
        self.bodies = tuple(bodies)
        self.g = np.asarray(g, dtype=float)
        self.name = "gravity"

    def wrenches(self, states: list[BodyState], t: float | Symbolic,
                 history: Symbolic | None = None) -> list[Wrench]:
        return [(b.mass * ca.DM(self.g), ca.DM.zeros(3)) for b in self.bodies]

    def potential_energy(self, states: list[BodyState], t: float | Symbolic,
                         history: Symbolic | None = None) -> Symbolic:
        return sum((-b.mass * ca.dot(ca.DM(self.g), s.r) for b, s in zip(self.bodies, states)),
                   ca.DM(0))


class PointForce(ForceElement):
    """A force applied at a body point and/or a torque on the body.

    Parameters
    ----------
    body : RigidBody
    point : array_like, shape (3,)
        Application point, global frame at the initial configuration (default: centre of mass).
    force, torque : array_like (3,) or callable ``(t, state) -> 3-vector``
        In the global frame. A callable receives t and the body's
        :class:`~nlpdyn.body.BodyState` (``state.r``, ``state.A``, ``state.rdot``, ``state.w``)
        and returns CasADi expressions, so loads may depend on t, q and v.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import casadi as ca
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0.5, 0, 0))
    >>> push = s.add_force(nd.PointForce(bar, point=(1, 0, 0),
    ...                                  force=lambda t, state: ca.vertcat(0, 0, ca.sin(t))))
    >>> push.name, s.problems()
    ('pointforce1', [])
    """

    kind = "point force"

    def __init__(self, body: RigidBody, point: ArrayLike | None = None,
                 force: ArrayLike | Callable | None = None,
                 torque: ArrayLike | Callable | None = None, name: str | None = None):
        self.bodies = (body,)
        self.point = None if point is None else as_vector(point)
        self.name = name
        self.force = _load(force)
        self.torque = _load(torque)

    def problems(self) -> list[str]:
        out = super().problems()
        if self.point is not None:
            out += vector_problems(self.label, "point", self.point)
        out += _load_problems(self.label, "force", self.force)
        out += _load_problems(self.label, "torque", self.torque)
        if self.force is None and self.torque is None:
            out.append(f"{self.label}: give a force, a torque or both")
        return out

    def _load_at(self, name, t, state):
        value = getattr(self, name)
        if callable(value):
            return call_user_function(self.label, name, value, (t, state), size=3)
        return ca.DM(value)

    def wrenches(self, states: list[BodyState], t: float | Symbolic,
                 history: Symbolic | None = None) -> list[Wrench]:
        (state,) = states
        body = self.bodies[0]
        s_local = np.zeros(3) if self.point is None else body.local_point(self.point)
        f = ca.DM.zeros(3) if self.force is None else self._load_at("force", t, state)
        _, n = point_wrench(state, s_local, f)
        if self.torque is not None:
            n = n + state.A.T @ self._load_at("torque", t, state)
        return [(f, n)]


class SpringDamper(ForceElement):
    """Linear spring-damper between two body points (global, initial configuration).

    Tension F = stiffness (l - free_length) + damping dl/dt along the line of the points;
    ``free_length`` defaults to the initial distance. Potential 1/2 k (l - l0)^2.

    Parameters
    ----------
    body_a, body_b : RigidBody or Ground
        The bodies it joins.
    point_a, point_b : array_like, shape (3,)
        Its ends on ``body_a`` and ``body_b``, global frame at the initial configuration
        (distinct points).
    stiffness : float
        k (N/m, >= 0).
    damping : float
        The damping coefficient (N s/m, >= 0).
    free_length : float, optional
        l0 (m, >= 0); default: the initial distance of the points.
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> mass = s.add_body("mass", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, -0.5))
    >>> spring = s.add_force(nd.SpringDamper(s.ground, (0, 0, 0), mass, (0, 0, -0.5),
    ...                                      stiffness=100.0, damping=0.5))
    >>> float(spring.free_length)
    0.5
    """

    kind = "spring-damper"

    def __init__(self, body_a: RigidBody, point_a: ArrayLike, body_b: RigidBody,
                 point_b: ArrayLike, stiffness: float, damping: float = 0.0,
                 free_length: float | None = None, name: str | None = None):
        self.bodies = (body_a, body_b)
        self.point_a = as_vector(point_a)
        self.point_b = as_vector(point_b)
        self.stiffness = as_number(stiffness)
        self.damping = as_number(damping)
        if free_length is None and is_vector(self.point_a) and is_vector(self.point_b):
            free_length = np.linalg.norm(self.point_b - self.point_a)
        self.free_length = as_number(free_length)
        self.name = name

    def problems(self) -> list[str]:
        out = super().problems()
        points = []
        for name in ("point_a", "point_b"):
            points += vector_problems(self.label, name, getattr(self, name))
        out += points
        for name in ("stiffness", "damping") + (() if points else ("free_length",)):
            out += number_problems(self.label, name, getattr(self, name), lambda x: x >= 0,
                                   "a finite number >= 0")
        if not points and np.linalg.norm(self.point_b - self.point_a) < 1e-12:
            out.append(f"{self.label}: the two points coincide; the line of action is undefined")
        return out

    def _geometry(self, states):
        sa, sb = states
        ba, bb = self.bodies
        ua, ub = ba.local_point(self.point_a), bb.local_point(self.point_b)
        d = sb.point_local(ub) - sa.point_local(ua)
        length = ca.norm_2(d)
        return ua, ub, d, length

    def wrenches(self, states: list[BodyState], t: float | Symbolic,
                 history: Symbolic | None = None) -> list[Wrench]:
        sa, sb = states
        ua, ub, d, length = self._geometry(states)
        e = d / length
        rate = ca.dot(sb.point_velocity_local(ub) - sa.point_velocity_local(ua), e)
        tension = self.stiffness * (length - self.free_length) + self.damping * rate
        return [point_wrench(sa, ua, tension * e), point_wrench(sb, ub, -tension * e)]

    def potential_terms(self, states: list[BodyState], t: float | Symbolic,
                        history: Symbolic | None = None) -> list:
        k, l0 = self.stiffness, self.free_length
        return [(self._geometry(states)[3], lambda length: 0.5 * k * (length - l0) ** 2)]
