"""Range-of-motion cone of a joint with rotational freedom (seed 000, section 3).

A joint frame (xi, eta, zeta = xi x eta) is fixed on the reference body; a unit vector u_r is
fixed on the moving body. In the joint frame u_r has a longitude psi = atan2(u_eta, u_xi) in
[0, 2 pi) and a latitude sigma = angle from zeta (eqs. 6-7). The cone allows latitudes up to
sigma_max(psi), given at a few longitudes and interpolated by quarter ellipses (eqs. 8-14) or
a periodic cubic spline (eqs. 15-19). Beyond it, a motion-restricting moment (eq. 32) grows
with a cubic step over delta_sigma to max_moment, along u_r x n with n the cone's normal at
the point B of the cone closest to u_r (eqs. 20-31); a viscous moment -j (w_moving -
w_reference) (eq. 34) dissipates. Both act on the moving body and, reversed, on the
reference body.

Two choices differ from the seed's text, both stated where they are made:
- the spline interpolates sigma_max as a periodic function of the longitude (same knots and
  spline family), rather than the polar curve's x and y against its arc length, which needs a
  Newton solve for the arc length at every evaluation;
- B is found from eq. 31 with G eliminated in closed form (for a unit generator c(psi),
  G = c . u_r), which leaves one equation, c'(psi) . u_r = 0, solved by a fixed number of
  Newton steps from psi_A inside the expression graph (so the element stays a closed CasADi
  expression that the stepper can evaluate at either end of a step).
"""
from __future__ import annotations

import casadi as ca
import numpy as np
from scipy.interpolate import CubicSpline

from ..joints.base import check_unit
from .base import ForceElement

TWO_PI = 2 * np.pi
NEWTON_STEPS = 8
INTERPOLATIONS = ("spline", "ellipse")


class RangeOfMotionCone(ForceElement):
    """Circumduction cone limiting the motion of ``moving`` relative to ``reference``.

    Parameters
    ----------
    reference, moving : RigidBody
        The body carrying the joint frame and the body whose motion is limited.
    xi_axis, eta_axis : array_like (3,)
        The joint frame's xi and eta axes (unit, perpendicular), global frame at the initial
        configuration; fixed on ``reference``. zeta = xi x eta is the cone's axis.
    moving_axis : array_like (3,)
        u_r, unit, global at the initial configuration; fixed on ``moving``.
    longitudes, max_latitudes : array_like (n,)
        Maximum latitude (rad) at each longitude (rad); longitudes strictly increasing from
        0 to 2 pi, the values at 0 and 2 pi equal. ``interpolation="ellipse"`` needs exactly
        the five quadrant longitudes 0, pi/2, pi, 3 pi/2, 2 pi.
    delta_sigma : float
        Angle (rad) over which the restricting moment rises from 0 to ``max_moment``.
    max_moment : float
        m_p (N m).
    damping : float
        j (N m s): the dissipative moment -j (w_moving - w_reference), always active.
    interpolation : "spline" or "ellipse"

    Example
    -------
    >>> import numpy as np, nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, -9.81))
    >>> bar = s.add_body("bar", 8.5, (1e-3, 0.14, 0.14), position=(0, -0.225, 0))
    >>> _ = s.add_joint(nd.Spherical(s.ground, bar, point=(0, 0, 0)))
    >>> cone = s.add_force(nd.RangeOfMotionCone(
    ...     s.ground, bar, (1, 0, 0), (0, 0, 1), (0, -1, 0), np.radians([0, 90, 180, 270, 360]),
    ...     np.radians([30, 30, 30, 30, 30]), np.radians(10), 200.0, 1.0))
    """

    kind = "range-of-motion cone"
    # Measured on CASES.md #7 at h = 1e-3 (benchmarks/explicit_vs_implicit.py): explicit
    # is stable and keeps the energy with j = 0; implicit loses 4.1 J of 3.3 J swing energy
    evaluation = "explicit"

    def __init__(self, reference, moving, xi_axis, eta_axis, moving_axis, longitudes,
                 max_latitudes, delta_sigma, max_moment, damping, interpolation="spline",
                 name=None):
        self.bodies = (reference, moving)
        self.reference, self.moving = reference, moving
        self.xi_axis = np.asarray(xi_axis, dtype=float).reshape(-1)
        self.eta_axis = np.asarray(eta_axis, dtype=float).reshape(-1)
        self.moving_axis = np.asarray(moving_axis, dtype=float).reshape(-1)
        self.longitudes = np.asarray(longitudes, dtype=float).reshape(-1)
        self.max_latitudes = np.asarray(max_latitudes, dtype=float).reshape(-1)
        self.delta_sigma, self.max_moment = float(delta_sigma), float(max_moment)
        self.damping = float(damping)
        self.interpolation = interpolation
        self.name = name
        self._spline = None

    # ------------------------------------------------------------------ validation
    def problems(self):
        out = super().problems()
        for label, vec in (("xi_axis", self.xi_axis), ("eta_axis", self.eta_axis),
                           ("moving_axis", self.moving_axis)):
            out += check_unit(vec, label, self.label)
        if not out and abs(self.xi_axis @ self.eta_axis) > 1e-9:
            out.append(f"{self.label}: xi_axis and eta_axis must be perpendicular")
        psi, sig = self.longitudes, self.max_latitudes
        if psi.shape != sig.shape or psi.size < 2:
            out.append(f"{self.label}: longitudes and max_latitudes must have the same length >= 2")
            return out
        if abs(psi[0]) > 1e-12 or abs(psi[-1] - TWO_PI) > 1e-9 or np.any(np.diff(psi) <= 0):
            out.append(f"{self.label}: longitudes must increase strictly from 0 to 2 pi rad")
        if np.any(sig <= 0) or np.any(sig >= np.pi):
            out.append(f"{self.label}: max_latitudes must lie in (0, pi) rad")
        if abs(sig[0] - sig[-1]) > 1e-12:
            out.append(f"{self.label}: the max latitude at 0 and 2 pi must be equal "
                       f"({sig[0]} != {sig[-1]})")
        if self.interpolation not in INTERPOLATIONS:
            out.append(f"{self.label}: interpolation must be one of {INTERPOLATIONS}, "
                       f"got {self.interpolation!r}")
        elif self.interpolation == "ellipse" and (
                psi.size != 5 or not np.allclose(psi, np.arange(5) * np.pi / 2, atol=1e-9)):
            out.append(f"{self.label}: interpolation 'ellipse' needs the five quadrant "
                       "longitudes 0, pi/2, pi, 3 pi/2, 2 pi")
        if not self.delta_sigma > 0:
            out.append(f"{self.label}: delta_sigma must be > 0, got {self.delta_sigma}")
        if not self.max_moment >= 0:
            out.append(f"{self.label}: max_moment must be >= 0, got {self.max_moment}")
        if not self.damping >= 0:
            out.append(f"{self.label}: damping must be >= 0, got {self.damping}")
        return out

    # ------------------------------------------------------------------ the cone
    def _cubic_spline(self):
        if self._spline is None:
            self._spline = CubicSpline(self.longitudes, self.max_latitudes, bc_type="periodic")
        return self._spline

    def max_latitude(self, psi):
        """sigma_max at longitude ``psi`` (rad; any real value, taken modulo 2 pi); works on
        numpy arrays and CasADi expressions."""
        if isinstance(psi, (ca.SX, ca.MX, ca.DM)):
            return self._max_latitude_casadi(_wrap(psi))
        psi = np.mod(np.asarray(psi, dtype=float), TWO_PI)
        if self.interpolation == "spline":
            return self._cubic_spline()(psi)
        a1, b1, a2, b2 = self._semi_axes()
        a = np.where((psi < np.pi / 2) | (psi >= 1.5 * np.pi), a1, a2)
        b = np.where(psi < np.pi, b1, b2)
        return a * b / np.sqrt(b**2 * np.cos(psi) ** 2 + a**2 * np.sin(psi) ** 2)

    def _semi_axes(self):
        s = self.max_latitudes
        return s[0], s[1], s[2], s[3]     # a1 (0), b1 (90), a2 (180), b2 (270 deg)

    def _max_latitude_casadi(self, psi):
        if self.interpolation == "ellipse":
            a1, b1, a2, b2 = self._semi_axes()
            a = ca.if_else(ca.logic_or(psi < np.pi / 2, psi >= 1.5 * np.pi), a1, a2)
            b = ca.if_else(psi < np.pi, b1, b2)
            # eq. 13 written without tan: sigma = a b / sqrt(b^2 cos^2 + a^2 sin^2)
            return a * b / ca.sqrt(b**2 * ca.cos(psi) ** 2 + a**2 * ca.sin(psi) ** 2)
        sp = self._cubic_spline()
        knots, coeffs = sp.x, sp.c          # coeffs[m, k]: power 3 - m on interval k
        value = 0
        for k in range(len(knots) - 1):
            d = psi - knots[k]
            piece = ((coeffs[0, k] * d + coeffs[1, k]) * d + coeffs[2, k]) * d + coeffs[3, k]
            inside = ca.logic_and(psi >= knots[k], psi < knots[k + 1]) if k < len(knots) - 2 \
                else psi >= knots[k]
            value = ca.if_else(inside, piece, value)
        return value

    def _generator(self, psi):
        """Unit generator c(psi) of the cone surface in the joint frame (eq. 22 with G = 1)."""
        s = self._max_latitude_casadi(_wrap(psi))
        return ca.vertcat(ca.cos(psi) * ca.sin(s), ca.sin(psi) * ca.sin(s), ca.cos(s))

    def closest_point(self, u):
        """(psi_B, c(psi_B), n): the cone point closest to the unit vector ``u`` (joint frame),
        its generator and the cone's unit normal there (t_G x t_psi / |.|, eq. 29, which points
        to the inside of the cone). CasADi expressions of ``u``."""
        psi_sym = ca.SX.sym("psi")
        u_sym = ca.SX.sym("u", 3)
        c = self._generator(psi_sym)
        f = ca.dot(c, u_sym)                     # max over psi of c(psi) . u (G = c . u)
        df = ca.jacobian(f, psi_sym)
        d2f = ca.jacobian(df, psi_sym)
        newton = ca.Function("rom_newton", [psi_sym, u_sym], [psi_sym - df / ca.if_else(d2f < 0, d2f, -1)])
        psi = _wrap(ca.atan2(u[1], u[0]))
        for _ in range(NEWTON_STEPS):
            psi = newton(psi, u)
        t_G = self._generator(psi)
        t_psi = ca.jacobian(self._generator(psi_sym), psi_sym)
        t_psi = ca.substitute(t_psi, psi_sym, psi)
        n = ca.cross(t_G, t_psi)
        return psi, t_G, n / ca.norm_2(n)

    # ------------------------------------------------------------------ kinematics
    def _joint_frame(self, states):
        sr, _ = states
        return ca.horzcat(sr.vector(self.xi_axis), sr.vector(self.eta_axis),
                          sr.vector(np.cross(self.xi_axis, self.eta_axis)))

    def joint_vector(self, states):
        """u_r in the joint frame (u''), CasADi 3-vector."""
        _, sm = states
        return self._joint_frame(states).T @ sm.vector(self.moving_axis)

    def longitude_latitude(self, states):
        """(psi_A, sigma_A) of u_r (eqs. 6-7)."""
        u = self.joint_vector(states)
        return _wrap(ca.atan2(u[1], u[0])), ca.atan2(ca.sqrt(u[0] ** 2 + u[1] ** 2), u[2])

    def kappa(self, states):
        """kappa of eq. 33 (0 inside the cone) and the restricting moment in the joint frame."""
        u = self.joint_vector(states)
        psi_a, sigma_a = self.longitude_latitude(states)
        psi_b, _, n = self.closest_point(u)
        sigma_b = self._max_latitude_casadi(_wrap(psi_b))
        outside = sigma_a > self._max_latitude_casadi(psi_a)
        kappa = ca.sqrt(ca.fmax(sigma_a**2 + sigma_b**2 - 2 * sigma_a * sigma_b * ca.cos(psi_a - psi_b), 0))
        kappa = ca.if_else(outside, kappa, 0)
        x = ca.fmin(kappa / self.delta_sigma, 1)
        moment = self.max_moment * (3 * x**2 - 2 * x**3) * ca.cross(u, n)
        return kappa, moment

    def potential_energy(self, states, t):
        """The integral of the moment's magnitude over kappa: m_p delta_sigma (x^3 - x^4/2),
        x = kappa / delta_sigma, continued linearly beyond x = 1. The moment is the exact
        gradient of this only where |u_r x n| = 1 and kappa measures the rotation (a regular
        cone near its surface); elsewhere it is the stored energy to first order."""
        kappa, _ = self.kappa(states)
        x = kappa / self.delta_sigma
        inside = self.max_moment * self.delta_sigma * (x**3 - 0.5 * x**4)
        beyond = self.max_moment * self.delta_sigma * (0.5 + (x - 1))
        return ca.if_else(x <= 1, inside, beyond)

    def restricting_moment(self, states):
        """m^mr in the global frame (on the moving body), CasADi 3-vector."""
        return self._joint_frame(states) @ self.kappa(states)[1]

    def dissipative_moment(self, states):
        """m^d = -j (w_moving - w_reference), global (eqs. 34-35)."""
        sr, sm = states
        return -self.damping * (sm.angular_velocity_global() - sr.angular_velocity_global())

    def wrenches(self, states, t, history=None):
        sr, sm = states
        moment = self.restricting_moment(states) + self.dissipative_moment(states)
        return [(ca.DM.zeros(3), sr.A.T @ -moment), (ca.DM.zeros(3), sm.A.T @ moment)]

    # ------------------------------------------------------------------ numpy helpers
    def latitude_longitude(self, A_reference, A_moving):
        """(longitude, latitude) of u_r for rotation matrices of shape (n, 3, 3) (or (3, 3)):
        what the polar plot of seed 000 Fig. 18b shows. Numpy."""
        A_r = np.asarray(A_reference, dtype=float).reshape(-1, 3, 3)
        A_m = np.asarray(A_moving, dtype=float).reshape(-1, 3, 3)
        xi = A_r @ self.reference.local_vector(self.xi_axis) if not self.reference.is_ground \
            else np.broadcast_to(self.xi_axis, (len(A_m), 3))
        eta = A_r @ self.reference.local_vector(self.eta_axis) if not self.reference.is_ground \
            else np.broadcast_to(self.eta_axis, (len(A_m), 3))
        zeta = np.cross(xi, eta)
        u = A_m @ self.moving.local_vector(self.moving_axis)
        x, y, z = (np.einsum("ni,ni->n", e, u) for e in (xi, eta, zeta))
        return np.mod(np.arctan2(y, x), TWO_PI), np.arctan2(np.hypot(x, y), z)


def _wrap(psi):
    """Longitude in [0, 2 pi)."""
    return psi - TWO_PI * ca.floor(psi / TWO_PI)
