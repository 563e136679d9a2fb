"""Bushing: a six-component spring-damper between two body frames (seed 001 eq. 49).

Relative translation and rotation of a frame carried by the child with respect to the same
frame carried by the parent are resisted component by component, in the bushing frame,
by linear springs and dampers or by tabulated (nonlinear) laws.
"""
from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING, Sequence

import casadi as ca
import numpy as np

from ..checks import as_array, as_vector, vector_problems
from ..rotations import from_rotation_matrix, quaternion_product
from .base import ForceElement
from .contact_laws import ContactLaw, LinearBushing

if TYPE_CHECKING:
    from ..body import BodyState, Ground, RigidBody
    from .._typing import ArrayLike, Law1D, Symbolic, Wrench

# Below this |e| (sine of half the relative angle) the rotation vector uses its series.
_SMALL_HALF_SINE = 1e-4
# Below this theta^2 (rad^2) the inverse Jacobian coefficient uses its series.
_SMALL_ANGLE_SQ = 1e-6


def _conj(a):
    return ca.vertcat(a[0], -a[1:4])


def rotation_vector(p: Symbolic) -> Symbolic:
    """Principal rotation vector theta (|theta| <= pi) of unit Euler parameters p.

    theta = 2 atan2(|e|, e0) e / |e| after flipping p to e0 >= 0; for |e| < 1e-4 the series
    2 / e0 (1 - |e|^2 / (3 e0^2)) e (error ~ |e|^5) so value and derivatives are finite at 0.

    Parameters
    ----------
    p : casadi column, shape (4, 1)
        Unit Euler parameters [e0, e1, e2, e3].

    Returns
    -------
    casadi column, shape (3, 1)

    Examples
    --------
    >>> import casadi as ca
    >>> from nlpdyn.rotations import from_axis_angle
    >>> theta = rotation_vector(ca.DM(from_axis_angle((0, 0, 1), 0.5)))
    >>> theta.full().ravel().round(12).tolist()
    [0.0, 0.0, 0.5]
    """
    sign = ca.if_else(p[0] >= 0, 1, -1)
    e0, e = sign * p[0], sign * p[1:4]
    ss = ca.dot(e, e)
    s = ca.sqrt(ca.fmax(ss, _SMALL_HALF_SINE**2))
    scale = ca.if_else(ss > _SMALL_HALF_SINE**2, 2 * ca.atan2(s, e0) / s,
                       2 / e0 * (1 - ss / (3 * e0**2)))
    return scale * e


def inverse_left_jacobian(theta: Symbolic) -> Symbolic:
    """J_l^-1(theta) of SO(3): log(exp(psi~) R) = theta + J_l^-1(theta) psi + O(psi^2).

    J_l^-1 = I - 1/2 theta~ + c(theta) theta~^2, c = 1/theta^2 - (1 + cos theta) /
    (2 theta sin theta) (series 1/12 + theta^2/720 below theta = 1e-3 rad).

    Parameters
    ----------
    theta : casadi column, shape (3, 1)
        A rotation vector (rad).

    Returns
    -------
    casadi matrix, shape (3, 3)

    Examples
    --------
    >>> import casadi as ca
    >>> inverse_left_jacobian(ca.DM.zeros(3))       # the identity at theta = 0
    DM(
    [[1, 0, 0], 
     [0, 1, 0], 
     [0, 0, 1]])
    """
    tt = ca.dot(theta, theta)
    angle = ca.sqrt(ca.fmax(tt, _SMALL_ANGLE_SQ))
    c = ca.if_else(tt > _SMALL_ANGLE_SQ,
                   1 / angle**2 - (1 + ca.cos(angle)) / (2 * angle * ca.sin(angle)),
                   1 / 12 + tt / 720)
    K = ca.skew(theta)
    return ca.DM.eye(3) - 0.5 * K + c * (K @ K)


def _direction_laws(value, label):
    """Three per-axis laws from a number, a law, or three of either; (laws, problems)."""
    if isinstance(value, ContactLaw):
        items = [value] * 3
    elif isinstance(value, (str, bytes)) or value is None:
        return (), [f"{label} must be a number, a ContactLaw or 3 of them, got {value!r}"]
    elif isinstance(value, Real) or (isinstance(value, np.ndarray) and value.ndim == 0):
        items = [float(value)] * 3
    else:
        try:
            items = list(value)
        except TypeError:
            return (), [f"{label} must be a number, a ContactLaw or 3 of them, got {value!r}"]
        if len(items) != 3:
            return (), [(f"{label} must be a number, a ContactLaw or 3 of them, "
                         f"got {len(items)} entries")]
    laws, problems = [], []
    for i, item in enumerate(items):
        if isinstance(item, ContactLaw):
            if item.needs_impact_velocity:
                problems.append(f"{label}[{i}] ({type(item).__name__}) needs an impact "
                                "velocity; bushings take memoryless laws (e.g. TabulatedBushing)")
            laws.append(item)
        elif isinstance(item, Real) and not isinstance(item, (bool, np.bool_)) \
                and np.isfinite(item) and item >= 0:
            laws.append(LinearBushing(float(item)))
        else:
            problems.append(f"{label}[{i}] must be a finite number >= 0 or a ContactLaw, "
                            f"got {item!r}")
            laws.append(None)
    return tuple(laws), problems


def _damping(value, label):
    """Three per-axis damping coefficients from a number or 3 of them; (array, problems)."""
    arr = as_array(value)
    if isinstance(arr, np.ndarray) and arr.size in (1, 3) and np.all(np.isfinite(arr)) \
            and np.all(arr >= 0):
        return np.broadcast_to(arr.reshape(-1), (3,)).copy(), []
    return np.zeros(3), [f"{label} must be a number >= 0 or 3 of them, got {value!r}"]


class Bushing(ForceElement):
    """Translational and rotational spring-damper between two body frames at ``point``.

    The bushing frame (``axes``) is fixed on ``parent``; ``child`` carries a copy that
    coincides with it in the initial configuration. With ``B`` the parent's bushing frame
    (columns: its axes, global) and ``x_p``, ``x_c`` the parent's and child's material points
    that start at ``point``:

    - relative translation u = B^T (x_c - x_p), shape (3,);
    - relative rotation theta = the principal rotation vector of R = B^T B_c (the child's
      frame seen in the parent's), from the relative Euler parameters:
      theta = 2 atan2(|e|, e0) e / |e| (exact for |theta| < pi, series near 0, see
      :func:`rotation_vector`), shape (3,);
    - rates du/dt = B^T (v_c - v_p - w_p x (x_c - x_p)) and dtheta/dt = J_l^-1(theta)
      B^T (w_c - w_p) (global angular velocities).

    Per axis i the resistance is F_i = law_i(u_i, du_i/dt) + c_i du_i/dt (N) and
    T_i = rlaw_i(theta_i, dtheta_i/dt) + c_r,i dtheta_i/dt (N m). The child gets the force
    -B F at x_c and the moment -B J_l^-T(theta) T; the parent gets the opposite force at the
    same point and the opposite moment (action = reaction). The moment map J_l^-T makes the
    elastic part exactly conservative with potential sum_i V_i(u_i) + V_r,i(theta_i), and
    the damping part dissipates sum c_i (du_i/dt)^2 + c_r,i (dtheta_i/dt)^2 >= 0.

    Parameters
    ----------
    parent, child : RigidBody
        The two bodies (either may be the ground).
    point : array_like, shape (3,)
        Bushing centre, global frame at the initial configuration.
    stiffness : float, ContactLaw, or sequence of 3 of them
        Translational law per bushing axis: a number k >= 0 is linear (N/m,
        ``LinearBushing(k)``); a ContactLaw (e.g. ``TabulatedBushing``) gives the signed
        force law_i.force(u_i, du_i/dt) (N) with its own damping; its elastic potential
        (closed form, or by quadrature of the elastic part) is the stored energy. Laws that
        need an impact velocity are refused.
    damping : float or array_like, shape (3,)
        Linear translational damping per axis (N s/m), added to the law.
    rotational_stiffness : float, ContactLaw, or sequence of 3 of them
        As ``stiffness``, about the bushing axes (N m/rad, or a law in N m of rad).
    rotational_damping : float or array_like, shape (3,)
        Linear rotational damping per axis (N m s/rad).
    axes : array_like, shape (3, 3), optional
        Bushing frame in the global frame at the initial configuration: **rows** are the
        unit axes (orthonormal, right-handed). Default: the global axes.
    name : str, optional

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System(gravity=(0, 0, 0))
    >>> b = s.add_body("b", 2.0, (0.02, 0.03, 0.04), velocity=(0, 0.1, 0))
    >>> bush = s.add_force(Bushing(s.ground, b, (0, 0, 0), stiffness=(1e3, 2e3, 3e3),
    ...                            rotational_stiffness=5.0, name="mount"))
    >>> res = nd.simulate(s, 0.01, h=1e-3, progress=False)
    >>> res.success
    True
    """

    kind = "bushing"

    def __init__(self, parent: RigidBody | Ground, child: RigidBody | Ground, point: ArrayLike,
                 stiffness: float | ContactLaw | Sequence[float | ContactLaw],
                 damping: float | ArrayLike = 0.0,
                 rotational_stiffness: float | ContactLaw | Sequence[float | ContactLaw] = 0.0,
                 rotational_damping: float | ArrayLike = 0.0, axes: ArrayLike | None = None,
                 name: str | None = None) -> None:
        self.parent, self.child = parent, child
        self.bodies = (parent, child)
        self.point = as_vector(point)
        self.axes = np.eye(3) if axes is None else as_array(axes)
        self.name = name
        self.laws, p1 = _direction_laws(stiffness, "stiffness")
        self.rotational_laws, p2 = _direction_laws(rotational_stiffness, "rotational_stiffness")
        self.damping, p3 = _damping(damping, "damping")
        self.rotational_damping, p4 = _damping(rotational_damping, "rotational_damping")
        self._input_problems = p1 + p2 + p3 + p4

    # ------------------------------------------------------------------ validation
    def problems(self) -> list[str]:
        out = super().problems() + [f"{self.label}: {m}" for m in self._input_problems]
        out += vector_problems(self.label, "point", self.point)
        if not isinstance(self.axes, np.ndarray) or self.axes.shape != (3, 3) or \
                not np.all(np.isfinite(self.axes)) or \
                not np.allclose(self.axes @ self.axes.T, np.eye(3), atol=1e-9) or \
                np.linalg.det(self.axes) < 0:
            out.append(f"{self.label}: axes must be 3 orthonormal right-handed rows (unit "
                       "vectors, global frame)")
        laws = {id(law): law for law in (*self.laws, *self.rotational_laws) if law is not None}
        for law in laws.values():       # a law given for several axes is checked once
            out += law.problems(self.label)
        return out

    # ------------------------------------------------------------------ geometry
    def _local_axes(self, body):
        """Bushing axes in the body frame as columns, shape (3, 3)."""
        return body.rotation0.T @ self.axes.T

    def _frame_quaternion(self, state):
        """Euler parameters of the body's bushing frame (frame -> global), unit."""
        body = state.body
        p0 = body.orientation / np.linalg.norm(body.orientation)
        frame0 = from_rotation_matrix(self.axes.T)
        # b = conj(p0) * frame0, so p0 * b = frame0 exactly in the initial configuration
        b = quaternion_product(_conj(ca.DM(p0)), ca.DM(frame0))
        return quaternion_product(state.p / ca.norm_2(state.p), b)

    def frame(self, state: BodyState) -> Symbolic:
        """The body's copy of the bushing axes (columns, global).

        Parameters
        ----------
        state : BodyState
            The state of ``parent`` or ``child``.

        Returns
        -------
        casadi matrix, shape (3, 3)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> bush = Bushing(s.ground, b, (0, 0, 0), stiffness=1e3, damping=10.0)
        >>> moved = BodyState(b, ca.DM([1e-3, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]      # 1 mm along x, moving at 0.1 m/s
        >>> bush.frame(moved).full().tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        """
        return state.A @ ca.DM(self._local_axes(state.body))

    def _points(self, states):
        sp, sc = states
        return sp.point(self.point), sc.point(self.point)

    def relative_motion(self, states: list[BodyState]) -> tuple[Symbolic, Symbolic]:
        """(u, theta): relative translation (m) and rotation vector (rad) of the child's
        frame in the parent's, bushing frame components.

        Parameters
        ----------
        states : list of BodyState
            [parent, child].

        Returns
        -------
        u, theta : casadi column, shape (3, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> bush = Bushing(s.ground, b, (0, 0, 0), stiffness=1e3, damping=10.0)
        >>> moved = BodyState(b, ca.DM([1e-3, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]      # 1 mm along x, moving at 0.1 m/s
        >>> u, theta = bush.relative_motion(states)
        >>> u.full().ravel().tolist(), theta.full().ravel().tolist()
        ([0.001, 0.0, 0.0], [0.0, 0.0, 0.0])
        """
        sp, sc = states
        xp, xc = self._points(states)
        u = self.frame(sp).T @ (xc - xp)
        rel = quaternion_product(_conj(self._frame_quaternion(sp)), self._frame_quaternion(sc))
        return u, rotation_vector(rel)

    def relative_rates(self, states: list[BodyState],
                       motion: tuple[Symbolic, Symbolic] | None = None
                       ) -> tuple[Symbolic, Symbolic]:
        """(du/dt, dtheta/dt) (see the class docstring).

        Parameters
        ----------
        states : list of BodyState
            [parent, child].
        motion : tuple, optional
            ``relative_motion(states)`` where the caller has it.

        Returns
        -------
        du, dtheta : casadi column, shape (3, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> bush = Bushing(s.ground, b, (0, 0, 0), stiffness=1e3, damping=10.0)
        >>> moved = BodyState(b, ca.DM([1e-3, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]      # 1 mm along x, moving at 0.1 m/s
        >>> du, dtheta = bush.relative_rates(states)
        >>> du.full().ravel().tolist()
        [0.1, 0.0, 0.0]
        """
        sp, sc = states
        xp, xc = self._points(states)
        Fp = self.frame(sp)
        wp, wc = sp.A @ sp.w, sc.A @ sc.w
        d = xc - xp
        vp = sp.rdot + ca.cross(wp, xp - sp.r)
        vc = sc.rdot + ca.cross(wc, xc - sc.r)
        du = Fp.T @ (vc - vp - ca.cross(wp, d))
        theta = (self.relative_motion(states) if motion is None else motion)[1]
        dtheta = inverse_left_jacobian(theta) @ (Fp.T @ (wc - wp))
        return du, dtheta

    # ------------------------------------------------------------------ loads
    def loads(self, states: list[BodyState],
              motion: tuple[Symbolic, Symbolic] | None = None) -> tuple[Symbolic, Symbolic]:
        """(F, T): the resisting force (N) and moment (N m) per bushing axis; F_i > 0 when
        u_i > 0 for a linear bushing.

        Parameters
        ----------
        states : list of BodyState
            [parent, child].
        motion : tuple, optional
            ``relative_motion(states)`` where the caller has it.

        Returns
        -------
        F, T : casadi column, shape (3, 1)

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> bush = Bushing(s.ground, b, (0, 0, 0), stiffness=1e3, damping=10.0)
        >>> moved = BodyState(b, ca.DM([1e-3, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]      # 1 mm along x, moving at 0.1 m/s
        >>> F, T = bush.loads(states)
        >>> round(float(F[0]), 12)                      # 1e3 * 1e-3 + 10 * 0.1
        2.0
        """
        motion = self.relative_motion(states) if motion is None else motion
        u, theta = motion
        du, dtheta = self.relative_rates(states, motion)
        F = ca.vertcat(*[law.force(u[i], du[i]) + self.damping[i] * du[i]
                         for i, law in enumerate(self.laws)])
        T = ca.vertcat(*[law.force(theta[i], dtheta[i]) + self.rotational_damping[i] * dtheta[i]
                         for i, law in enumerate(self.rotational_laws)])
        return F, T

    def wrenches(self, states: list[BodyState], t: Symbolic | float,
                 history: Symbolic | None = None) -> list[Wrench]:
        sp, sc = states
        motion = self.relative_motion(states)
        theta = motion[1]
        F, T = self.loads(states, motion)
        Fp = self.frame(sp)
        force = -Fp @ F                                              # on the child, global
        moment = -Fp @ (inverse_left_jacobian(theta).T @ T)          # on the child, global
        x = sc.point(self.point)
        out = []
        for state, sign in ((sp, -1.0), (sc, 1.0)):
            if state.body.is_ground:
                out.append((ca.DM.zeros(3), ca.DM.zeros(3)))
                continue
            f_body = state.A.T @ (sign * force)
            n = ca.cross(state.A.T @ (x - state.r), f_body) + state.A.T @ (sign * moment)
            out.append((sign * force, n))
        return out

    def potential_terms(self, states: list[BodyState], t: Symbolic | float,
                        history: Symbolic | None = None) -> list[tuple[Symbolic, Law1D]]:
        """[(u_i, V_i), (theta_i, V_r,i)]: each axis law's elastic potential (linear springs:
        k u^2 / 2).

        Parameters
        ----------
        states : list of BodyState
            [parent, child].
        t : float or casadi.SX
            Time (unused).
        history : casadi column, optional
            Unused (a bushing has no memory).

        Returns
        -------
        list of (casadi.SX, callable)
            Six pairs: the three translations, then the three rotations.

        Examples
        --------
        >>> import casadi as ca
        >>> import nlpdyn as nd
        >>> from nlpdyn.body import BodyState, ground_state
        >>> s = nd.System()
        >>> b = s.add_body("b", 1.0, (1e-3, 1e-3, 1e-3))
        >>> bush = Bushing(s.ground, b, (0, 0, 0), stiffness=1e3, damping=10.0)
        >>> moved = BodyState(b, ca.DM([1e-3, 0, 0]), ca.DM([1, 0, 0, 0]), ca.DM([0.1, 0, 0]),
        ...                   ca.DM.zeros(3))
        >>> states = [ground_state(s.ground), moved]      # 1 mm along x, moving at 0.1 m/s
        >>> round(float(sum(V(s) for s, V in bush.potential_terms(states, 0.0))), 12)
        0.0005
        """
        u, theta = self.relative_motion(states)
        return [(values[i], law.elastic_potential)
                for values, laws in ((u, self.laws), (theta, self.rotational_laws))
                for i, law in enumerate(laws)]
