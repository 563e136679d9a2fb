"""A thin rigid disk rolling without slip on the horizontal plane z = 0 (gravity -Z), started
in steady precession: it rolls on a circle at constant tilt.

The disk: radius ``a``, mass ``m``, inertia m a^2 / 2 about its symmetry axis and m a^2 / 4
about its diameters. In nlpdyn the body "disk" has its **body x axis along the symmetry
axis** n (body y, z two diameters) and three constraints:

* "contact" (holonomic, :class:`~nlpdyn.Programmed`): the lowest point
  p = c - a d / |d|, d = e_z - (e_z . n) n, lies on the plane: c_z - a sqrt(1 - n_z^2) = 0;
* "rolling" (two rows, :class:`~nlpdyn.VelocityConstraint`): the material point at p has no
  horizontal velocity, (rdot + (A w) x (p - c))_{x,y} = 0.

The reference (:func:`reference_rhs`) is independent of nlpdyn: Lagrange-d'Alembert
equations in the minimal coordinates q = (theta, psi, phi, x, y), derived here with CasADi's
symbolic differentiation and solved by scipy. The disk's rotation is
A = Rz(psi) Ry(-theta) Rx(phi), so

* theta, the **tilt**: the symmetry axis' angle above the horizontal, n_z = sin(theta) (the
  disk's plane leans theta from the vertical);
* psi, the heading: the axis' horizontal projection is (cos psi, sin psi);
* phi, the spin about the axis relative to the frame Rz(psi) Ry(-theta);
* (x, y), the contact point; the centre is c = (x, y, 0) + a (-sin theta cos psi,
  -sin theta sin psi, cos theta).

The Lagrangian L = T - V (T the disk's kinetic energy, V = m g c_z) with the two rolling rows
C(q) q' = 0 gives M(q) q'' = dL/dq - (d^2 L / dq' dq) q' + C^T lambda, C q'' = -(dC/dt) q'.
Steady precession: theta' = 0, psi' = Omega, phi' = spin constant; with theta' = 0 the
equations give psi'' = phi'' = 0, and theta'' = 0 fixes the spin for given tilt and Omega
(:func:`steady_spin`).

Data *ours*: a = 0.1 m, m = 1 kg, tilt 20 deg, Omega = 2 rad/s. The spin follows,
phi' = -12.47 rad/s (body-frame w = (-11.79, 0, 1.88) rad/s); the contact point runs
on a circle of radius 0.624 m, the centre on one of 0.589 m at 1.18 m/s, leaning into it.
"""
from __future__ import annotations

from functools import lru_cache

import casadi as ca
import numpy as np

import nlpdyn as nd

G = 9.81
RADIUS = 0.1            # m, *ours*
MASS = 1.0              # kg, *ours*
TILT = np.radians(20)   # rad, *ours*
PRECESSION = 2.0        # rad/s, psi', *ours*
T_END = 2.0


def inertia(radius=RADIUS, mass=MASS) -> tuple:
    """Principal moments (body x the symmetry axis): (m a^2/2, m a^2/4, m a^2/4)."""
    return (0.5 * mass * radius**2, 0.25 * mass * radius**2, 0.25 * mass * radius**2)


# ---------------------------------------------------------------- the reference
def _rotations(q, lib):
    """Rz(psi) Ry(-theta) Rx(phi) with ``lib`` numpy or casadi."""
    theta, psi, phi = q[0], q[1], q[2]
    c, s = lib.cos, lib.sin

    def mat(rows):
        return ca.vertcat(*[ca.horzcat(*r) for r in rows]) if lib is ca else np.array(rows)
    rz = mat([[c(psi), -s(psi), 0], [s(psi), c(psi), 0], [0, 0, 1]])
    ry = mat([[c(theta), 0, -s(theta)], [0, 1, 0], [s(theta), 0, c(theta)]])    # Ry(-theta)
    rx = mat([[1, 0, 0], [0, c(phi), -s(phi)], [0, s(phi), c(phi)]])
    return rz @ ry @ rx


def rotation(q) -> np.ndarray:
    """The disk's rotation matrix (body -> global) at minimal coordinates q (numpy)."""
    return _rotations(np.asarray(q, dtype=float), np)


def centre(q, radius=RADIUS) -> np.ndarray:
    """The disk's centre at q = (theta, psi, phi, x, y), or at rows of q, shape (..., 3)."""
    q = np.asarray(q, dtype=float)
    theta, psi, x, y = q[..., 0], q[..., 1], q[..., 3], q[..., 4]
    return np.stack([x - radius * np.sin(theta) * np.cos(psi),
                     y - radius * np.sin(theta) * np.sin(psi),
                     radius * np.cos(theta)], axis=-1)


@lru_cache(maxsize=None)
def _model(radius, mass, g):
    """CasADi functions of (q, q'): the KKT matrix and right-hand side of the
    Lagrange-d'Alembert equations, the energy, the rolling rows and the body-frame angular
    velocity."""
    q, qd = ca.SX.sym("q", 5), ca.SX.sym("qd", 5)
    theta, psi = q[0], q[1]
    A = _rotations(q, ca)
    Ad = ca.reshape(ca.jacobian(ca.vec(A), q) @ qd, 3, 3)
    W = A.T @ Ad                                    # skew(w), body frame
    w = ca.vertcat(W[2, 1], W[0, 2], W[1, 0])
    c = ca.vertcat(q[3] - radius * ca.sin(theta) * ca.cos(psi),
                   q[4] - radius * ca.sin(theta) * ca.sin(psi), radius * ca.cos(theta))
    cd = ca.jacobian(c, q) @ qd
    J = ca.diag(ca.DM(inertia(radius, mass)))
    T = 0.5 * mass * ca.dot(cd, cd) + 0.5 * ca.dot(w, J @ w)
    V = mass * g * c[2]
    L = T - V
    contact = ca.vertcat(q[3], q[4], 0)
    slip = (cd + ca.cross(A @ w, contact - c))[:2]          # material point's velocity
    C = ca.jacobian(slip, qd)
    M = ca.hessian(T, qd)[0]
    dLdqd = ca.gradient(L, qd)
    f = ca.gradient(L, q) - ca.jacobian(dLdqd, q) @ qd
    gamma = -ca.jacobian(C @ qd, q) @ qd
    K = ca.blockcat([[M, C.T], [C, ca.DM.zeros(2, 2)]])
    args = [q, qd]
    return {"kkt": ca.Function("kkt", args, [K, ca.vertcat(f, gamma)]),
            "energy": ca.Function("energy", args, [T + V]),
            "slip": ca.Function("slip", args, [slip, C]),
            "w": ca.Function("w", args, [w]),
            "cd": ca.Function("cd", args, [cd])}


def reference_rhs(radius=RADIUS, mass=MASS, g=G):
    """Right-hand side of the rolling disk's ODE in minimal coordinates, for scipy:
    x = (q, q'), q = (theta, psi, phi, x, y) (module docstring). Lagrange-d'Alembert with the
    rolling rows' multipliers eliminated (one 7x7 solve per call); independent of nlpdyn."""
    kkt = _model(radius, mass, g)["kkt"]

    def rhs(t, x):
        K, b = kkt(x[:5], x[5:])
        sol = np.linalg.solve(np.asarray(K), np.asarray(b).ravel())
        return np.r_[x[5:], sol[:5]]
    return rhs


def energy(x, radius=RADIUS, mass=MASS, g=G) -> np.ndarray:
    """T + V at reference states x (rows, or one state), J."""
    fun = _model(radius, mass, g)["energy"]
    x = np.atleast_2d(x)
    return np.array([float(fun(s[:5], s[5:])) for s in x])


def contact_velocity(q, theta_d, psi_d, phi_d, radius=RADIUS) -> np.ndarray:
    """(x', y') that makes the rolling rows zero for the given angle rates."""
    slip = _model(radius, 1.0, G)["slip"]
    qd = np.r_[theta_d, psi_d, phi_d, 0.0, 0.0]
    s, C = (np.asarray(v) for v in slip(q, qd))
    return -np.linalg.solve(C[:, 3:], s.ravel())


def _steady_state(theta, psi_d, phi_d, radius):
    q = np.r_[theta, 0.0, 0.0, 0.0, 0.0]
    return np.r_[q, 0.0, psi_d, phi_d, contact_velocity(q, 0.0, psi_d, phi_d, radius)]


def steady_spin(tilt=TILT, precession=PRECESSION, radius=RADIUS, mass=MASS, g=G) -> float:
    """The spin rate phi' (rad/s) that keeps the tilt constant (theta'' = 0 at theta' = 0)
    for the given tilt and precession rate psi'. At theta' = 0, theta'' is affine in phi'
    (terms in psi'^2, psi' phi' and gravity; no phi'^2: spin alone rolls the disk straight),
    so two evaluations of :func:`reference_rhs` give the root; it is checked."""
    rhs = reference_rhs(radius, mass, g)

    def accel(spin):
        return rhs(0.0, _steady_state(tilt, precession, spin, radius))[5]
    unit = np.sqrt(g / radius)
    a0 = accel(0.0)
    slope = (accel(unit) - a0) / unit
    if slope == 0:
        raise ValueError(f"no spin keeps tilt {tilt} rad steady at precession {precession} rad/s")
    spin = -a0 / slope
    if abs(accel(spin)) > 1e-9 * (abs(a0) + abs(slope * spin)):
        raise ValueError(f"theta'' is not affine in the spin at tilt {tilt} rad")
    return float(spin)


def steady_state(tilt=TILT, precession=PRECESSION, radius=RADIUS, mass=MASS, g=G) -> np.ndarray:
    """The reference's initial state x = (q, q') of steady precession: contact point at the
    origin, psi = phi = 0."""
    spin = steady_spin(tilt, precession, radius, mass, g)
    return _steady_state(tilt, precession, spin, radius)


def reference(t, tilt=TILT, precession=PRECESSION, radius=RADIUS, mass=MASS, g=G, x0=None):
    """The reference's states x = (q, q') at times t (rows), DOP853 at rtol 1e-12, from
    ``x0`` (default: :func:`steady_state`)."""
    from scipy.integrate import solve_ivp
    t = np.asarray(t, dtype=float)
    x0 = steady_state(tilt, precession, radius, mass, g) if x0 is None else x0
    sol = solve_ivp(reference_rhs(radius, mass, g), (t[0], t[-1]), x0, method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=t)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.y.T


# ---------------------------------------------------------------- the nlpdyn model
def build(radius=RADIUS, mass=MASS, tilt=TILT, precession=PRECESSION) -> nd.System:
    """The disk "disk" (body x its symmetry axis) on the plane z = 0: the contact constraint
    "contact" and the rolling rows "rolling" (module docstring), started in steady
    precession at ``tilt`` (rad, the axis above the horizontal) and ``precession`` (rad/s,
    the heading's rate) with the spin of :func:`steady_spin`.

    Parameters
    ----------
    radius, mass : float
        The disk's radius (m) and mass (kg); a thin disk's inertia (:func:`inertia`).
    tilt : float
        The symmetry axis' angle above the horizontal (the plane's from the vertical), rad.
    precession : float
        psi', rad/s.

    Returns
    -------
    System
        Body ``disk``; constraints ``contact`` (1 row) and ``rolling`` (2 velocity rows).

    Example
    -------
    >>> import nlpdyn as nd
    >>> from problems import rolling_disk
    >>> res = nd.simulate(rolling_disk.build(), t_end=0.05, h=1e-3, scheme="midpoint",
    ...                   progress=False)
    >>> bool(abs(rolling_disk.tilt(res)[-1] - rolling_disk.TILT) < 1e-4)
    True
    """
    x0 = steady_state(tilt, precession, radius, mass)
    q, qd = x0[:5], x0[5:]
    A = rotation(q)
    model = _model(radius, mass, G)
    w = np.asarray(model["w"](q, qd)).ravel()           # body frame
    velocity = np.asarray(model["cd"](q, qd)).ravel()
    s = nd.System(gravity=(0, 0, -G))
    disk = s.add_body("disk", mass, inertia(radius, mass), position=centre(q, radius),
                      orientation=A, velocity=velocity, angular_velocity=w,
                      geometry=nd.Cylinder(radius=radius, length=0.1 * radius, axis=(1, 0, 0)))
    ez = ca.DM([0, 0, 1])

    def lowest(st):
        n = st.A[:, 0]
        d = ez - n[2] * n
        return -radius * d / ca.sqrt(1 - n[2] ** 2)      # p - c

    s.add_joint(nd.Programmed([disk], lambda t, st: st.r[2] + lowest(st)[2], name="contact"))
    s.add_joint(nd.VelocityConstraint(
        [disk], lambda t, st: (st.rdot + ca.cross(st.A @ st.w, lowest(st)))[:2], name="rolling"))
    return s


def tilt(res) -> np.ndarray:
    """The tilt (rad) at each output point of a Result: the body x axis' angle above the
    horizontal, asin(n_z)."""
    n = res.rotation("disk")[:, :, 0]
    return np.arcsin(np.clip(n[:, 2], -1.0, 1.0))
