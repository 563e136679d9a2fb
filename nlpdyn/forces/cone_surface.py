"""The surface of a range-of-motion cone in its joint frame: the maximum latitude at each
longitude (periodic spline or quarter ellipses), the cone's generators and the point of the
surface closest to a direction (seed 003 eqs. 22-31).

:class:`ConeSurface` is the geometric half of :class:`~nlpdyn.forces.range_of_motion.
RangeOfMotionCone`, which adds the joint frame on the bodies, the moments and the force
element; the equations are in the docstring of :mod:`nlpdyn.forces.range_of_motion`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ..checks import show

if TYPE_CHECKING:
    from .._typing import ArrayLike, Symbolic

__all__ = ["ConeSurface"]

TWO_PI = 2 * np.pi
INTERPOLATIONS = ("spline", "ellipse")
GRID_POINTS = 120          # generators sampled to start the closest-point search (3 deg apart)
NEWTON_STEPS = 8           # safeguarded Newton steps from the best grid generator


class ConeSurface:
    """The cone of a :class:`~nlpdyn.forces.range_of_motion.RangeOfMotionCone`, from its
    ``longitudes``, ``max_latitudes`` and ``interpolation`` (and its ``label`` for messages).

    The functions built from the data (the spline, the generator, ``cone_function``) are
    built once and rebuilt when the data changes.

    Examples
    --------
    >>> import numpy as np
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
    >>> cone = nd.RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
    ...                             np.radians([0, 90, 180, 270, 360]), np.radians([30] * 5),
    ...                             np.radians(20), 200.0, 1.0)
    >>> isinstance(cone, ConeSurface), cone.interpolation
    (True, 'spline')
    """

    longitudes: np.ndarray
    max_latitudes: np.ndarray
    interpolation: str
    label: str

    def _cone_problems(self):
        out = []
        psi, sig = self.longitudes, self.max_latitudes
        if self.interpolation not in INTERPOLATIONS:
            out.append(f"{self.label}: interpolation must be one of {INTERPOLATIONS}, "
                       f"got {self.interpolation!r}")
        tables = [(name, value) for name, value in (("longitudes", psi), ("max_latitudes", sig))
                  if not isinstance(value, np.ndarray)]
        if tables:
            out += [f"{self.label}: {name} must be numbers (rad), got {show(value)}"
                    for name, value in tables]
            return out
        if psi.size != sig.size or psi.size < 2:
            out.append(f"{self.label}: longitudes and max_latitudes must have the same length "
                       f">= 2, got {psi.size} and {sig.size}")
            return out
        if not (np.all(np.isfinite(psi)) and np.all(np.isfinite(sig))):
            out.append(f"{self.label}: longitudes and max_latitudes must be finite")
            return out
        if np.any(np.diff(psi) <= 0) or abs(psi[0]) > 1e-12 or abs(psi[-1] - TWO_PI) > 1e-9:
            out.append(f"{self.label}: longitudes must increase strictly from 0 to 2 pi rad "
                       f"(exactly one turn), got {np.round(psi, 6).tolist()}")
        if np.any(sig <= 0) or np.any(sig >= np.pi):
            out.append(f"{self.label}: max_latitudes must lie in (0, pi) rad, got "
                       f"{np.round(sig, 6).tolist()}")
        if sig[0] != sig[-1]:
            out.append(f"{self.label}: the max latitude at 0 and at 2 pi must be the same "
                       f"(the cone closes), got {sig[0]!r} and {sig[-1]!r}")
        if self.interpolation == "ellipse" and (
                psi.size != 5 or not np.allclose(psi, np.arange(5) * np.pi / 2, rtol=0, atol=1e-9)):
            out.append(f"{self.label}: interpolation 'ellipse' needs exactly the five quadrant "
                       "longitudes 0, pi/2, pi, 3 pi/2, 2 pi (use 'spline' for others)")
        return out

    def _require_valid_cone(self):
        problems = self._cone_problems()
        if problems:
            raise ValueError("; ".join(problems))

    def _cached(self, name, build):
        """build() once per cone: the cache is dropped when the cone's data changes."""
        self._require_valid_cone()
        key = (self.interpolation, self.longitudes.tobytes(), self.max_latitudes.tobytes())
        if self._cache.get("key") != key:
            self._cache = {"key": key}
        if name not in self._cache:
            self._cache[name] = build()
        return self._cache[name]

    # ------------------------------------------------------------------ the cone
    def _spline(self):
        from scipy.interpolate import CubicSpline   # 0.35 s to import: only cones need it
        return self._cached("spline", lambda: CubicSpline(self.longitudes, self.max_latitudes,
                                                          bc_type="periodic"))

    def _semi_axes(self):
        s = self.max_latitudes
        return s[0], s[1], s[2], s[3]          # a1 (0), b1 (90), a2 (180), b2 (270 deg)

    def max_latitude(self, longitude: ArrayLike | Symbolic) -> np.ndarray | Symbolic:
        """sigma_max (rad) at ``longitude`` (rad, any real value: taken modulo 2 pi).

        Parameters
        ----------
        longitude : float, array_like or casadi.SX/MX
            The longitude psi (rad).

        Returns
        -------
        numpy.ndarray or casadi.SX/MX
            numpy arrays give numpy arrays of the same shape; CasADi expressions give the
            expression (a piecewise cubic or the quarter ellipses).

        Raises
        ------
        ValueError
            The cone's data is invalid (see :meth:`problems`).

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = nd.RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                             np.radians([0, 90, 180, 270, 360]),
        ...                             np.radians([30] * 5), np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> np.degrees(cone.max_latitude([0.0, 1.0])).round(9).tolist()
        [30.0, 30.0]
        """
        if isinstance(longitude, (ca.SX, ca.MX)):
            return self._max_latitude_casadi(_wrap(longitude))
        self._require_valid_cone()
        psi = np.mod(np.asarray(longitude, dtype=float), TWO_PI)
        if self.interpolation == "spline":
            return self._spline()(psi)
        a1, b1, a2, b2 = self._semi_axes()
        a = np.where((psi < np.pi / 2) | (psi >= 1.5 * np.pi), a1, a2)
        b = np.where(psi < np.pi, b1, b2)
        return a * b / np.sqrt(b**2 * np.cos(psi) ** 2 + a**2 * np.sin(psi) ** 2)

    def _max_latitude_casadi(self, psi):
        """sigma_max of a longitude already in [0, 2 pi)."""
        self._require_valid_cone()
        if self.interpolation == "ellipse":
            a1, b1, a2, b2 = self._semi_axes()
            a = ca.if_else(ca.logic_or(psi < np.pi / 2, psi >= 1.5 * np.pi), a1, a2)
            b = ca.if_else(psi < np.pi, b1, b2)
            return a * b / ca.sqrt(b**2 * ca.cos(psi) ** 2 + a**2 * ca.sin(psi) ** 2)
        sp = self._spline()
        knots, coeffs = sp.x, sp.c              # coeffs[m, k]: power 3 - m on [knots[k], knots[k+1])
        value = 0
        for k in range(len(knots) - 1):
            d = psi - knots[k]
            piece = ((coeffs[0, k] * d + coeffs[1, k]) * d + coeffs[2, k]) * d + coeffs[3, k]
            value = piece if k == 0 else ca.if_else(psi >= knots[k], piece, value)
        return value

    def _generator(self):
        """Function psi -> (c, c', c''): the unit generator of the cone surface at longitude
        psi in the joint frame (eq. 22 with G = 1) and its derivatives (t_psi = G c')."""
        def build():
            psi = ca.SX.sym("psi")
            s = self._max_latitude_casadi(_wrap(psi))
            c = ca.vertcat(ca.cos(psi) * ca.sin(s), ca.sin(psi) * ca.sin(s), ca.cos(s))
            dc = ca.jacobian(c, psi)
            d2c = ca.jacobian(dc, psi)
            f = ca.Function("rom_generator", [psi], [c, dc, d2c], ["psi"], ["c", "dc", "d2c"])
            assert not f.has_free()
            return f
        return self._cached("generator", build)

    def closest_point(self, u: Symbolic) -> tuple[Symbolic, Symbolic, Symbolic]:
        """The cone point B closest to the unit vector ``u``. psi_B maximises c(psi) . u (eq. 31
        with G = c . u).

        Parameters
        ----------
        u : casadi column, shape (3, 1)
            A unit vector in the joint frame.

        Returns
        -------
        psi_B : casadi scalar
            Its longitude, in [0, 2 pi).
        c : casadi column, shape (3, 1)
            The unit generator c(psi_B).
        n : casadi column, shape (3, 1)
            The unit normal at B, pointing into the cone.

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = nd.RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                             np.radians([0, 90, 180, 270, 360]),
        ...                             np.radians([30] * 5), np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> psi, c, n = cone.closest_point(cone.joint_vector(states))
        >>> round(float(np.degrees(float(psi))), 9), c.full().ravel().round(6).tolist()
        (270.0, [-0.0, -0.5, 0.866025])
        """
        gen = self._generator()
        grid = np.arange(GRID_POINTS) * TWO_PI / GRID_POINTS
        sig = self.max_latitude(grid)
        cones = np.column_stack([np.cos(grid) * np.sin(sig), np.sin(grid) * np.sin(sig), np.cos(sig)])
        f = [ca.dot(ca.DM(c), u) for c in cones]
        # Start from the grid peak whose parabola through its neighbours is highest: comparing
        # interpolated peak heights, not sampled values, picks the right one of two nearly
        # equal maxima (u near the axis of a lobed cone) down to O(grid^4) differences.
        best_f, psi = -np.inf, grid[0]
        step_max = TWO_PI / GRID_POINTS
        for k in range(GRID_POINTS):
            fm, f0, fp = f[k - 1], f[k], f[(k + 1) % GRID_POINTS]
            curvature = ca.fmin(fm - 2 * f0 + fp, -1e-300)
            height = f0 - (fp - fm) ** 2 / (8 * curvature)
            peak = ca.logic_and(f0 >= fm, f0 > fp)
            better = ca.logic_and(peak, height > best_f)
            best_f = ca.if_else(better, height, best_f)
            psi = ca.if_else(better, grid[k] + step_max * (fm - fp) / (2 * curvature), psi)
        for _ in range(NEWTON_STEPS):
            _, dc, d2c = gen(psi)
            df, d2f = ca.dot(dc, u), ca.dot(d2c, u)
            # Newton on df = 0 where f is concave, an uphill step otherwise; never more than
            # one grid spacing, so the search stays at the maximum it started next to
            step = ca.if_else(d2f < 0, -df / ca.fmin(d2f, -1e-300), ca.sign(df) * step_max)
            psi = psi + ca.fmin(ca.fmax(step, -step_max), step_max)
        psi = _wrap(psi)
        c, dc, _ = gen(psi)
        n = ca.cross(c, dc)
        return psi, c, n / ca.norm_2(n)

    def cone_function(self) -> ca.Function:
        """Named CasADi function of u'' (u_r in the joint frame, unit, 3) with outputs
        ``kappa``, ``psi_A``, ``sigma_A``, ``psi_B``, ``c_B`` (unit generator through B),
        ``n`` (normal at B) and ``direction`` (c_B x n, the unit direction of the restricting
        moment on the moving body, joint frame).

        Returns
        -------
        casadi.Function
            Built once per cone (cached).

        Examples
        --------
        >>> import casadi as ca
        >>> import numpy as np
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> from nlpdyn.rotations import from_axis_angle
        >>> s = nd.System()
        >>> bar = s.add_body("bar", 1.0, (0.01, 0.01, 0.01))
        >>> cone = nd.RangeOfMotionCone(s.ground, bar, (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ...                             np.radians([0, 90, 180, 270, 360]),
        ...                             np.radians([30] * 5), np.radians(20), 200.0, 1.0)
        >>> p = from_axis_angle((1, 0, 0), np.radians(40))
        >>> tilted = BodyState(bar, ca.DM.zeros(3), ca.DM(p), ca.DM.zeros(3), ca.DM([0.5, 0, 0]))
        >>> states = [ground_state(s.ground), tilted]      # 40 deg off the axis: 10 deg out
        >>> f = cone.cone_function()
        >>> round(float(np.degrees(float(f(u=cone.joint_vector(states))["kappa"]))), 9)
        10.0
        """
        def build():
            u = ca.SX.sym("u", 3)
            out = self._penetration(u)
            names = ["kappa", "psi_A", "sigma_A", "psi_B", "c_B", "n", "direction"]
            f = ca.Function("rom_cone", [u], list(out), ["u"], names)
            assert not f.has_free()
            return f
        return self._cached("cone", build)

    def _penetration(self, u):
        psi_a = _wrap(ca.atan2(u[1], u[0]))
        sigma_a = ca.atan2(ca.sqrt(u[0] ** 2 + u[1] ** 2), u[2])
        psi_b, c_b, n = self.closest_point(u)
        outside = sigma_a > self._max_latitude_casadi(psi_a)
        angle = ca.atan2(ca.norm_2(ca.cross(u, c_b)), ca.dot(u, c_b))
        kappa = ca.if_else(outside, angle, 0)
        # u lies in the plane of c_B and n (eq. 31), so u x n = cos(kappa) c_B x n: the
        # seed's direction, normalised, and still defined where u x n vanishes (kappa = 90 deg)
        direction = ca.cross(c_b, n)
        return kappa, psi_a, sigma_a, psi_b, c_b, n, direction


def _wrap(psi):
    """Longitude in [0, 2 pi)."""
    return psi - TWO_PI * ca.floor(psi / TWO_PI)
