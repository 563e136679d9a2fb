"""Range-of-motion cone of a joint with rotational freedom (seed 000, section 3).

The joint frame (xi, eta, zeta = xi x eta, eq. 4) is fixed on the reference body; the unit
vector u_r is fixed on the moving body. In the joint frame (components u'') u_r has

- the longitude psi = atan2(u''_eta, u''_xi), taken in [0, 2 pi) (eq. 6), and
- the latitude sigma = arccos(u''_zeta) in [0, pi] (eq. 7): the polar angle of u_r from the
  cone axis zeta. zeta is the pole (sigma = 0: u_r along the axis); sigma = pi/2 puts u_r in
  the xi-eta plane, and latitudes above pi/2 (docs/CASES.md #7 allows 100 deg) are past it.

The cone allows sigma <= sigma_max(psi); sigma_max is given at a few longitudes and
interpolated (section 3.1.3):

- "ellipse" (eqs. 8-14): in the polar chart x = sigma cos psi, y = sigma sin psi the boundary
  is a quarter ellipse per quadrant, semi-axes a1 = sigma_max(0), b1 = sigma_max(pi/2),
  a2 = sigma_max(pi), b2 = sigma_max(3 pi/2), chosen by eq. 14 ([0, 90): a1 b1, [90, 180):
  a2 b1, [180, 270): a2 b2, [270, 360]: a1 b2). Eq. 13 simplifies to
  sigma_max = a b / sqrt(b^2 cos^2 psi + a^2 sin^2 psi) (no tan, no singularity at 90 deg).
- "spline" (eqs. 15-19): a periodic cubic spline. The seed splines the polar curve's x and y
  against its arc length l and finds l for a given psi by Newton (eq. 19); here sigma_max is
  splined directly as a periodic function of psi through the same points (scipy's
  CubicSpline, bc_type="periodic": value, slope and curvature continuous at 0 = 2 pi). Same
  knots and values, a closed-form SX expression, no inner solve; the two boundaries differ
  between the knots (problems/rom_pendulum.py measures by how much for docs/CASES.md #7).

Closest cone point B (eqs. 20-31). The surface is r_B = G c(psi) with the unit generator
c(psi) = (cos psi sin s, sin psi sin s, cos s), s = sigma_max(psi) (eq. 22). With
d = r_B - u'' the minimum-distance conditions of eq. 31 are d . t_G = 0 and d . t_psi = 0 with
t_G = c, t_psi = G c'. As |c| = 1 (so c . c' = 0) they reduce to G = c . u'' and
c'(psi) . u'' = 0: B lies on the generator at the smallest angle from u_r. psi_B maximises
c(psi) . u'': the best of a fixed grid of generators, then safeguarded Newton steps, all
inside the expression graph. n = t_G x t_psi / |.| (eq. 29) is the cone's normal at B; it
points into the cone.

kappa, the penetration, is the angle between u_r and the cone surface, i.e. between u_r
and c(psi_B), and 0 inside the cone (sigma_A <= sigma_max(psi_A), the test of eq. 32). The
seed's eq. 33 measures it instead as the distance of A and B in the polar chart,
sqrt(sigma_A^2 + sigma_B^2 - 2 sigma_A sigma_B cos(psi_A - psi_B)); the two agree for a
regular cone (psi_A = psi_B) and to first order near the surface of any cone.

Motion-restricting moment (eq. 32), on the moving body:
    m_mr = m_p (3 x^2 - 2 x^3) e,  x = min(kappa / delta_sigma, 1),  e = c_B x n.
The seed writes the direction u_r~ n. B being the closest point, u_r lies in the plane of c_B
and n, u_r = cos(kappa) c_B - sin(kappa) n, so u_r x n = cos(kappa) e: the same direction,
but of length cos(kappa). e is its normalised form (defined also at kappa = 90 deg, where
u_r x n vanishes), so that m_p is the moment reached at kappa = delta_sigma (the seed's
Fig. 13). e is perpendicular to u_r (no moment about the moving body's axis) and, kappa
being the angle to the nearest generator, e = -d kappa / d theta (theta: a small rotation of
the moving body; envelope theorem, B moves only to second order). So m_mr = -dV/d theta
exactly, with the stored energy
    V = m_p delta_sigma (x^3 - x^4 / 2)                 (kappa <= delta_sigma)
    V = m_p (delta_sigma / 2 + kappa - delta_sigma)     (beyond),
and the elastic cone is conservative (the seed's claim for its "improved methodology").

Dissipative moment (eqs. 34-35): m_d = -j (w_moving - w_reference), global angular
velocities, always active (step 2 of the seed's flowchart). Both moments act on the moving
body and, reversed, on the reference body (the action-reaction pair of section 3.3).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import as_number, as_vector, number_problems
from ..joints.base import check_unit
from .base import ForceElement, moment_wrench
# the cone's surface in the joint frame (its data, spline and closest point)
from .cone_surface import (GRID_POINTS, INTERPOLATIONS, NEWTON_STEPS, TWO_PI,  # noqa: F401
                           ConeSurface)

if TYPE_CHECKING:
    from ..body import BodyState, Ground, RigidBody
    from .._typing import ArrayLike, Law1D, Symbolic, Wrench

PERPENDICULAR_TOL = 1e-9


class RangeOfMotionCone(ConeSurface, ForceElement):
    """Circumduction cone limiting the motion of ``moving`` relative to ``reference``.

    Parameters
    ----------
    reference, moving : RigidBody
        The body carrying the joint frame (may be the ground) and the body whose motion is
        limited.
    xi_axis, eta_axis : array_like, shape (3,)
        Unit, perpendicular axes xi and eta of the joint frame, global frame at the initial
        configuration; fixed on ``reference``. zeta = xi x eta is the cone's axis, the pole
        of the latitude.
    moving_axis : array_like, shape (3,)
        u_r, unit, global at the initial configuration; fixed on ``moving``.
    longitudes, max_latitudes : array_like, shape (n,)
        Maximum latitude sigma_max (rad, in (0, pi)) at each longitude (rad). Longitudes
        increase strictly from 0 to 2 pi; the values at 0 and 2 pi are equal.
        ``interpolation="ellipse"`` needs exactly the five quadrant longitudes
        0, pi/2, pi, 3 pi/2, 2 pi.
    delta_sigma : float
        Angle (rad) over which the restricting moment rises from 0 to ``max_moment`` (> 0).
    max_moment : float
        m_p (N m, >= 0).
    damping : float
        j (N m s, >= 0): the dissipative moment -j (w_moving - w_reference).
    interpolation : {"spline", "ellipse"}
        Periodic cubic spline of sigma_max in the longitude, or quarter ellipses.
    name : str, optional

    Notes
    -----
    See the module docstring for the equations. ``potential_energy`` is the exact potential
    of the restricting moment; ``res.energy`` includes it.

    Examples
    --------
    >>> import numpy as np, nlpdyn as nd
    >>> from nlpdyn.forces.range_of_motion import RangeOfMotionCone
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> bar = s.add_body("bar", 8.5, (1e-3, 0.14, 0.14), position=(0, -0.225, 0))
    >>> _ = s.add_joint(nd.Spherical(s.ground, bar, point=(0, 0, 0)))
    >>> cone = s.add_force(RangeOfMotionCone(
    ...     s.ground, bar, (1, 0, 0), (0, -1, 0), (0, -1, 0),
    ...     np.radians([0, 90, 180, 270, 360]), np.radians([30, 30, 30, 30, 30]),
    ...     np.radians(10), 200.0, 1.0, name="cone"))
    >>> lat, lon = cone.latitude_longitude(np.eye(3), np.eye(3))
    >>> float(np.degrees(lat[0])), float(cone.max_latitude(0.3))
    (90.0, 0.5235987755982988)
    """

    kind = "range-of-motion cone"
    # Measured on docs/CASES.md #7 (benchmarks/explicit_vs_implicit.py, README): evaluated at the
    # start of the step the cone is stable at the case's step sizes and its elastic energy
    # comes back within its band; backward Euler takes energy out of the j = 0 run, and the
    # energy-consistent evaluation costs ~5x a step for a similar band.
    evaluation = "explicit"
    is_contact = True

    def __init__(self, reference: RigidBody | Ground, moving: RigidBody, xi_axis: ArrayLike,
                 eta_axis: ArrayLike, moving_axis: ArrayLike, longitudes: ArrayLike,
                 max_latitudes: ArrayLike, delta_sigma: float, max_moment: float,
                 damping: float, interpolation: str = "spline", name: str | None = None) -> None:
        self.reference, self.moving = reference, moving
        self.bodies = (reference, moving)
        self.xi_axis = as_vector(xi_axis)
        self.eta_axis = as_vector(eta_axis)
        self.moving_axis = as_vector(moving_axis)
        self.longitudes = as_vector(longitudes)
        self.max_latitudes = as_vector(max_latitudes)
        self.delta_sigma = as_number(delta_sigma)
        self.max_moment = as_number(max_moment)
        self.damping = as_number(damping)
        self.interpolation = interpolation
        self.name = name
        self._cache = {}

    # ------------------------------------------------------------------ validation
    def problems(self) -> list[str]:
        out = super().problems()
        unit = []
        for label, vec in (("xi_axis", self.xi_axis), ("eta_axis", self.eta_axis),
                           ("moving_axis", self.moving_axis)):
            unit += check_unit(vec, label, self.label)
        out += unit
        if not unit and abs(self.xi_axis @ self.eta_axis) > PERPENDICULAR_TOL:
            out.append(f"{self.label}: xi_axis and eta_axis must be perpendicular, "
                       f"xi . eta = {self.xi_axis @ self.eta_axis:.3g}")
        out += self._cone_problems()
        for label, ok, rule in (("delta_sigma", lambda x: x > 0, "> 0"),
                                ("max_moment", lambda x: x >= 0, ">= 0"),
                                ("damping", lambda x: x >= 0, ">= 0")):
            out += number_problems(self.label, label, getattr(self, label), ok,
                                   f"finite and {rule}")
        return out

    # ------------------------------------------------------------------ kinematics
    def joint_frame(self, states: list[BodyState]) -> Symbolic:
        """[u_xi, u_eta, u_zeta] (global columns) of the current joint frame.

        Parameters
        ----------
        states : list of BodyState
            [reference, moving].

        Returns
        -------
        casadi matrix, shape (3, 3)

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> cone.joint_frame(states).full().tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        """
        sr, _ = states
        xi = sr.vector(self.xi_axis)
        eta = sr.vector(self.eta_axis)
        return ca.horzcat(xi, eta, ca.cross(xi, eta))

    def joint_vector(self, states: list[BodyState]) -> Symbolic:
        """u_r'' = B^T A_ref^T u_r: u_r in the joint frame (eq. 5).

        Parameters
        ----------
        states : list of BodyState
            [reference, moving].

        Returns
        -------
        casadi column, shape (3, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> cone.joint_vector(states).full().ravel().round(6).tolist()   # (0, -sin, cos) 40 deg
        [0.0, -0.642788, 0.766044]
        """
        _, sm = states
        return self.joint_frame(states).T @ sm.vector(self.moving_axis)

    def penetration(self, states: list[BodyState]) -> Symbolic:
        """kappa (rad): the angle between u_r and the cone surface outside the cone, 0 inside.

        Parameters
        ----------
        states : list of BodyState
            [reference, moving].

        Returns
        -------
        casadi scalar

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> round(float(np.degrees(float(cone.penetration(states)))), 9)
        10.0
        """
        return self._penetration(self.joint_vector(states))[0]

    def restricting_moment(self, states: list[BodyState]) -> Symbolic:
        """m_mr (eq. 32) on the moving body, global.

        Parameters
        ----------
        states : list of BodyState
            [reference, moving].

        Returns
        -------
        casadi column, shape (3, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> cone.restricting_moment(states).full().ravel().round(9).tolist()   # halfway: m_p / 2
        [-100.0, 0.0, 0.0]
        """
        kappa, *_, direction = self._penetration(self.joint_vector(states))
        x = ca.fmin(kappa / self.delta_sigma, 1)
        return self.joint_frame(states) @ (self.max_moment * (3 * x**2 - 2 * x**3) * direction)

    def dissipative_moment(self, states: list[BodyState]) -> Symbolic:
        """m_d = -j (w_moving - w_reference) (eqs. 34-35) on the moving body, global.

        Parameters
        ----------
        states : list of BodyState
            [reference, moving].

        Returns
        -------
        casadi column, shape (3, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> float(cone.dissipative_moment(states)[0])
        -0.5
        """
        sr, sm = states
        return -self.damping * (sm.angular_velocity_global() - sr.angular_velocity_global())

    def wrenches(self, states: list[BodyState], t: Symbolic | float,
                 history: Symbolic | None = None) -> list[Wrench]:
        sr, sm = states
        moment = self.restricting_moment(states) + self.dissipative_moment(states)
        return [moment_wrench(sr, -moment), moment_wrench(sm, moment)]

    def potential_terms(self, states: list[BodyState], t: Symbolic | float,
                        history: Symbolic | None = None) -> list[tuple[Symbolic, Law1D]]:
        """[(kappa, V(kappa))]: V the integral of the restricting moment's magnitude over
        kappa, whose gradient the moment is (module docstring).

        Parameters
        ----------
        states : list of BodyState
            [reference, moving].
        t : float or casadi.SX
            Time (unused).
        history : casadi column, optional
            Unused (the cone has no memory).

        Returns
        -------
        list of (casadi scalar, callable)
            One pair: kappa and the energy stored at it.

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> [(kappa, V)] = cone.potential_terms(states, 0.0)
        >>> round(float(V(kappa)), 6)          # m_p w (x^3 - x^4 / 2), x = 1/2, w = 20 deg
        6.544985
        """
        m_p, width = self.max_moment, self.delta_sigma

        def stored(kappa):
            x = kappa / width
            return m_p * width * ca.if_else(x <= 1, x**3 - 0.5 * x**4, 0.5 + (x - 1))
        return [(self.penetration(states), stored)]

    # ------------------------------------------------------------------ numpy helpers
    def latitude_longitude(self, A_reference: ArrayLike | None,
                           A_moving: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Latitude sigma and longitude psi (rad) of u_r, for plotting (seed Fig. 18b).

        Parameters
        ----------
        A_reference, A_moving : array_like, shape (n, 3, 3) or (3, 3)
            Rotation matrices (body -> global) of the two bodies, e.g. ``res.rotation(name)``;
            ``A_reference=None`` for the ground.

        Returns
        -------
        latitude, longitude : ndarray, shape (n,)
            sigma in [0, pi] and psi in [0, 2 pi).

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                          np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
        ...                          np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> from nlpdyn.rotations import rotation_matrix
        >>> lat, lon = cone.latitude_longitude(None, rotation_matrix(p))
        >>> np.degrees(lat).round(9).tolist(), np.degrees(lon).round(9).tolist()
        ([40.0], [270.0])
        """
        A_m = np.asarray(A_moving, dtype=float).reshape(-1, 3, 3)
        A_r = (np.broadcast_to(np.eye(3), A_m.shape) if A_reference is None
               else np.asarray(A_reference, dtype=float).reshape(-1, 3, 3))
        xi = A_r @ self.reference.local_vector(self.xi_axis)
        eta = A_r @ self.reference.local_vector(self.eta_axis)
        u = A_m @ self.moving.local_vector(self.moving_axis)
        x, y, z = (np.einsum("ni,ni->n", e, u) for e in (xi, eta, np.cross(xi, eta)))
        return np.arctan2(np.hypot(x, y), z), np.mod(np.arctan2(y, x), TWO_PI)
