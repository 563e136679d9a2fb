"""Kinematic excitation of one of an ideal joint's modes (seed 004, eq. 3.10b), and the
axial-mode driver it specialises to (:mod:`nlpdyn.joints.drivers`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

from ..body import BodyState
from ..checks import as_number, call_user_function, number_problems, signature_problems
from .base import BilateralConstraint
from .ideal import Joint, Universal, _dot

if TYPE_CHECKING:
    from .._typing import Symbolic

# a dual vector's part below this (relative to its largest entry) counts as zero
_ZERO = 1e-12


class KinematicExcitation(BilateralConstraint):
    """Prescribes the motion along one mode of an ideal joint (seed 004, eq. 3.10b).

    The joint's free mode ``mode`` (a column index of ``joint.modes().free``) becomes a
    kinematically excited constrained mode: its velocity coordinate psi^T G (psi that mode's
    dual vector) is kappa(t), its position coordinate eta(t) = integral of kappa, measured
    from the initial configuration. The joint's other modes stay as they are, so with
    non-orthogonal modes (:class:`PlanarTranslation` with oblique directions) the excitation
    moves the child along the excited mode while the remaining free modes keep their own
    coordinates. The force that maintains the excitation is the constraint force of that mode
    (``Result.joint_forces``). :class:`RotationDriver` and :class:`TranslationDriver` are the
    special cases of a revolute, cylindrical or prismatic joint's axial mode.

    Parameters
    ----------
    joint : Joint
        The joint, added to the system too.
    mode : int
        Index of the free mode excited. Its dual vector must be a translation, or a rotation
        about the joint axis e3 of a joint whose other rotations are locked.
    kappa : float, optional
        A constant rate: eta(t) = kappa t.
    eta : float or callable, optional
        eta(t) written with CasADi operations (``ca.sin``, ...), eta(0) = 0; its derivative
        is kappa(t). Give ``kappa`` or ``eta``.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> cart = s.add_body("cart", mass=1.0, inertia=(0.1, 0.1, 0.1))
    >>> rail = s.add_joint(nd.Prismatic(s.ground, cart, point=(0, 0, 0), axis=(1, 0, 0)))
    >>> _ = s.add_joint(nd.KinematicExcitation(rail, 0, kappa=0.5))
    >>> res = nd.simulate(s, t_end=0.1, h=1e-2, progress=False)
    >>> round(float(res.position("cart")[-1, 0]), 6)
    0.05
    """

    kind = "kinematic excitation"
    n_equations = 1
    suffix = "excitation"

    def __init__(self, joint: Joint, mode: int, kappa: ArrayLike | None = None,
                 eta: float | Callable | None = None, name: str | None = None):
        self.joint = joint
        self.bodies = getattr(joint, "bodies", ())
        self.mode = mode
        self.kappa = kappa if callable(kappa) else as_number(kappa)
        self.eta = eta if callable(eta) else as_number(eta)
        joint_name = getattr(joint, "name", None)
        self.name = name or (f"{joint_name}_excitation" if joint_name else None)

    def default_name(self, taken: set[str] | list[str]) -> str:
        """``<joint>_excitation`` (a driver's ``<joint>_rotation`` or ``_translation``) when
        its joint is named, else the class name and a number.

        Parameters
        ----------
        taken : set or list of str
            The names the system's elements already have.

        Returns
        -------
        str

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> cart = s.add_body("cart", 1.0, (0.1, 0.1, 0.1))
        >>> rail = nd.Prismatic(s.ground, cart, (0, 0, 0), (1, 0, 0), name="rail")
        >>> nd.KinematicExcitation(rail, 0, kappa=0.5).default_name(set())
        'rail_excitation'
        """
        joint_name = getattr(self.joint, "name", None)
        if isinstance(joint_name, str) and f"{joint_name}_{self.suffix}" not in taken:
            return f"{joint_name}_{self.suffix}"
        return super().default_name(taken)

    def problems(self) -> list[str]:
        out = super().problems()
        if not isinstance(self.joint, Joint):
            return out + [f"{self.label}: needs an ideal joint, got {type(self.joint).__name__}"]
        if (self.kappa is None) == (self.eta is None):
            out.append(f"{self.label}: give kappa (a constant rate) or eta (a function of t)")
        elif callable(self.kappa):
            out.append(f"{self.label}: kappa varying in time: give its integral as eta(t)")
        elif self.kappa is not None:
            out += number_problems(self.label, "kappa", self.kappa)
        elif callable(self.eta):
            out += signature_problems(self.label, "eta", self.eta, ["t"])
        else:
            out += number_problems(self.label, "eta", self.eta,
                                   expected="a finite number or a function of t")
        if self.joint.problems():
            return out          # the joint names its own problems
        n_free = self.joint.modes().free.shape[1]
        if not (isinstance(self.mode, (int, np.integer)) and 0 <= self.mode < n_free):
            out.append(f"{self.label}: mode must be the index of one of the {n_free} free "
                       f"modes of {self.joint.label}, got {self.mode!r}")
        elif self._coordinate() is None:
            out.append(f"{self.label}: free mode {self.mode} of {self.joint.label} cannot be "
                       "excited (its dual vector couples rotation and translation, or rotates "
                       "about an axis other than e3 or with other rotations free)")
        return out

    def _coordinate(self):
        """("translation", b) or ("rotation", c) for the excited mode's dual [a; b], or None."""
        modes = self.joint.modes()
        if isinstance(self.joint, Universal):
            return None                 # modes vary with the angle
        psi = modes.dual[:, self.mode]
        a, b = psi[:3], psi[3:]
        tol = _ZERO * np.abs(psi).max()
        if np.abs(a).max() <= tol:
            return "translation", b
        rotations_locked = np.abs(modes.free[:2]).max(initial=0.0) <= tol
        if np.abs(b).max() <= tol and np.abs(a[:2]).max() <= tol and rotations_locked:
            return "rotation", a[2]
        return None

    def eta_at(self, t: float | Symbolic) -> Symbolic:
        """eta(t), the excited mode's position coordinate from the initial configuration.

        Parameters
        ----------
        t : float or casadi.SX
            Time.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> cart = s.add_body("cart", 1.0, (0.1, 0.1, 0.1))
        >>> rail = nd.Prismatic(s.ground, cart, (0, 0, 0), (1, 0, 0))
        >>> float(nd.KinematicExcitation(rail, 0, kappa=0.5).eta_at(2.0))     # kappa t
        1.0
        """
        if self.kappa is not None:
            return self.kappa * t
        if not callable(self.eta):
            return self.eta + 0 * t
        return call_user_function(self.label, "eta", self.eta, (t,), size=1)

    def equations(self, states: list[BodyState], t: float | Symbolic) -> Symbolic:
        sp, sc = states
        E = self.joint.frame()
        kind, coef = self._coordinate()
        eta = self.eta_at(t)
        if kind == "translation":
            pp, pc = self.joint._points(sp, sc)
            z = ca.vertcat(*[_dot(sp.vector(E[:, i]), pc - pp) for i in range(3)])
            return _dot(ca.DM(coef), z) - eta
        theta = eta / coef
        fc = sc.vector(E[:, 0])
        return _dot(fc, sp.vector(E[:, 1])) * ca.cos(theta) - _dot(fc, sp.vector(E[:, 0])) * ca.sin(theta)

    def reaction_point(self) -> np.ndarray | None:
        return getattr(self.joint, "point", None)


class _Driver(KinematicExcitation):
    """One equation prescribing a joint's relative motion as a function of t: ``motion`` a
    constant or a callable of t written with CasADi operations. A kinematic excitation of
    the joint's axial rotation or translation (its free mode ``mode``)."""

    n_equations = 1
    joint_types: tuple = ()
    suffix = ""
    motion_name = "motion"
    axial = None        # the excited twist in the joint frame

    def __init__(self, joint: Joint, motion, name=None):
        self.joint = joint
        self.bodies = getattr(joint, "bodies", ())
        self.motion = motion if callable(motion) else as_number(motion)
        joint_name = getattr(joint, "name", None)
        self.name = name or (f"{joint_name}_{self.suffix}" if joint_name else None)

    @property
    def mode(self) -> int:
        """The index of the joint's free mode this driver excites."""
        free = self.joint.modes().free
        return int(np.argmax(np.abs(free.T @ self.axial)))

    def problems(self) -> list[str]:
        out = BilateralConstraint.problems(self)
        if not isinstance(self.joint, self.joint_types):
            names = " or ".join(t.__name__ for t in self.joint_types)
            out.append(f"{self.label}: needs a {names} joint, got {type(self.joint).__name__}")
        if callable(self.motion):
            out += signature_problems(self.label, self.motion_name, self.motion, ["t"])
        else:
            out += number_problems(self.label, self.motion_name, self.motion,
                                   expected="a finite number or a function of t")
        return out

    def motion_at(self, t: float | Symbolic) -> Symbolic:
        """The prescribed angle or displacement at t (``eta_at`` is the same).

        Parameters
        ----------
        t : float or casadi.SX
            Time.

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> s = nd.System()
        >>> crank = s.add_body("crank", 1.0, (0.1, 0.1, 0.1))
        >>> hinge = nd.Revolute(s.ground, crank, (0, 0, 0), (1, 0, 0))
        >>> driver = nd.RotationDriver(hinge, lambda t: 6.0 * t + 0.1 * ca.sin(t))
        >>> round(float(driver.motion_at(0.5)), 6)
        3.047943
        """
        if not callable(self.motion):
            return self.motion + 0 * t
        return call_user_function(self.label, self.motion_name, self.motion, (t,), size=1)

    eta_at = motion_at

    def reaction_point(self) -> np.ndarray | None:
        return None
