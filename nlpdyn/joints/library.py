"""More ideal joints of seed 004's library: the screw (Fig. 3c), the planar joint and planar
translation. Geometry as in :mod:`nlpdyn.joints.ideal`: global, initial configuration."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

from ..checks import as_vector, number_problems, vector_problems
from .ideal import E1, E2, E3, Joint, _dot
from .modes import JointModes, twists

if TYPE_CHECKING:
    from .._typing import Symbolic
    from ..body import BodyState, RigidBody


class Screw(Joint):
    """Helical joint: rotation theta about ``axis`` through ``point`` tied to the translation
    ``pitch * theta`` along it (5 equations).

    ``pitch`` is the advance per radian (m/rad; the lead per turn is 2 pi pitch), positive
    for a right-handed thread. Free mode [e3; pitch e3]; constrained: rotations about e1, e2
    and the three translations. The translation along e3 is the constrained mode kept with
    the free one, so the dual of the free mode is the rotation [e3; 0] and the screw's
    constraint force along e3 is the axial force; the applied force along the free mode is
    the moment about the axis plus pitch times the axial force.

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        A point on the axis, global frame at the initial configuration.
    axis : array_like, shape (3,)
        The screw's axis, global frame at the initial configuration (a unit vector).
    pitch : float
        The advance per radian (m/rad).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> nut = s.add_body("nut", mass=1.0, inertia=(0.01, 0.01, 0.02))
    >>> screw = s.add_joint(nd.Screw(s.ground, nut, point=(0, 0, 0), axis=(0, 0, 1), pitch=0.01))
    >>> screw.modes().free.ravel().tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.01]
    """

    kind = "screw joint"
    n_equations = 5

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, axis: ArrayLike,
                 pitch: float, name: str | None = None):
        super().__init__(parent, child, point, axis, name)
        self.pitch = pitch

    def problems(self) -> list[str]:
        return super().problems() + number_problems(
            self.label, "pitch", self.pitch, lambda p: p != 0,
            "a finite nonzero number (m/rad; a pitch of 0 is a Revolute)")

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        fp, gp, fc = sp.vector(f), sp.vector(g), sc.vector(f)
        d = pc - pp
        theta = _dot(sp.vector(a), d) / self.pitch      # the angle the advance implies
        return ca.vertcat(*self._axis_rows(sp, sc), _dot(fp, d), _dot(gp, d),
                          _dot(fc, gp) * ca.cos(theta) - _dot(fc, fp) * ca.sin(theta))

    def modes(self) -> JointModes:
        return JointModes(twists(screws=[(E3, self.pitch)]),
                          twists(rotations=[E1, E2], translations=np.eye(3)))


class Planar(Joint):
    """The child slides on the plane through ``point`` normal to ``axis`` and turns about the
    normal (3 equations). Free: rotation about e3 (the normal), translations along e1, e2;
    constrained: rotations about e1, e2, translation along e3.

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        A point on the plane, global frame at the initial configuration.
    axis : array_like, shape (3,)
        The plane's normal, global frame at the initial configuration (a unit vector).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> puck = s.add_body("puck", mass=1.0, inertia=(0.1, 0.1, 0.2))
    >>> table = s.add_joint(nd.Planar(s.ground, puck, point=(0, 0, 0), axis=(0, 0, 1)))
    >>> table.modes().free.shape
    (6, 3)
    """

    kind = "planar joint"
    n_equations = 3

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        pp, pc = self._points(sp, sc)
        return ca.vertcat(*self._axis_rows(sp, sc), _dot(sp.vector(self.axis), pc - pp))

    def modes(self) -> JointModes:
        return JointModes(twists(rotations=[E3], translations=[E1, E2]),
                          twists(rotations=[E1, E2], translations=[E3]))


class PlanarTranslation(Joint):
    """The child translates, without turning, on the plane through ``point`` normal to
    ``axis`` (4 equations).

    ``directions``: two unit directions in the plane (global, initial configuration), not
    parallel and not necessarily perpendicular: the free modes [0; d1], [0; d2] (default the
    joint frame's e1, e2). Oblique directions give the non-orthogonal modes of seed 004's
    section 5, e.g. for exciting the motion along d2 (:class:`KinematicExcitation`) while the
    motion along d1 stays free. Constrained: the three rotations, translation along e3.

    Parameters
    ----------
    parent : RigidBody or Ground
        The body the joint frame is fixed in.
    child : RigidBody or Ground
        The body that moves relative to ``parent``.
    point : array_like, shape (3,)
        A point on the plane, global frame at the initial configuration.
    axis : array_like, shape (3,)
        The plane's normal, global frame at the initial configuration (a unit vector).
    directions : pair of array_like, shape (3,), optional
        d1, d2: the free translations (default: e1, e2 of the joint frame).
    name : str, optional
        Its name in results (default: a numbered one when added to a system).

    Examples
    --------
    >>> import numpy as np
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> ball = s.add_body("ball", mass=1.0, inertia=(0.1, 0.1, 0.1))
    >>> d = (np.sin(0.5), np.cos(0.5), 0.0)
    >>> trough = s.add_joint(nd.PlanarTranslation(s.ground, ball, (0, 0, 0), (0, 0, 1),
    ...                                           directions=((1, 0, 0), d)))
    >>> bool(np.allclose(trough.modes().dual.T @ trough.modes().basis, np.eye(6)))
    True
    """

    kind = "planar translation joint"
    n_equations = 4

    def __init__(self, parent: RigidBody, child: RigidBody, point: ArrayLike, axis: ArrayLike,
                 directions: Sequence[ArrayLike] | None = None, name: str | None = None):
        super().__init__(parent, child, point, axis, name)
        self.directions = None if directions is None else [as_vector(d) for d in directions]

    def problems(self) -> list[str]:
        out = super().problems()
        if self.directions is None or out:
            return out
        if len(self.directions) != 2:
            return out + [f"{self.label}: directions must be two vectors, got {len(self.directions)}"]
        for k, d in enumerate(self.directions):
            found = vector_problems(self.label, f"directions[{k}]", d)
            if not found and abs(np.linalg.norm(d) - 1) > 1e-9:
                found = [f"{self.label}: directions[{k}] must be a unit vector"]
            if not found and abs(d @ self.axis) > 1e-9:
                found = [f"{self.label}: directions[{k}] must lie in the plane normal to axis"]
            out += found
        if not out and np.linalg.norm(np.cross(*self.directions)) < 1e-6:
            out.append(f"{self.label}: the two directions are parallel")
        return out

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        f, g, a = self._frames()
        pp, pc = self._points(sp, sc)
        return ca.vertcat(*self._axis_rows(sp, sc), _dot(sc.vector(f), sp.vector(g)),
                          _dot(sp.vector(a), pc - pp))

    def modes(self) -> JointModes:
        E = self.frame()
        directions = [E1, E2] if self.directions is None else [E.T @ d for d in self.directions]
        return JointModes(twists(translations=directions),
                          twists(rotations=np.eye(3), translations=[E3]))
