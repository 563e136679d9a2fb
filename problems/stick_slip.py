"""Stick-slip of a block pulled through a spring over a LuGre slide.

The LuGre model's own demonstration (Canudas de Wit, Olsson, Astrom and Lischinsky, IEEE TAC
40(3), 1995, Fig. 5): a 1 kg block on a horizontal slide, pulled by a spring k = 2 N/m whose
far end moves at 0.1 m/s; F_C = 1 N, F_S = 1.5 N, v_S = 1 mm/s, sigma0 = 1e5 N/m,
sigma1 = sqrt(1e5) N s/m, sigma2 = 0.4 N s/m. In nlpdyn's normalised form (per unit normal
force f_n = m g): mu_k = F_C / (m g), mu_s = F_S / (m g), sigma_i / (m g). The block
alternates between sticking (the spring loads up) and slipping.

``reference`` integrates the same model as an ODE in (x, v, z) with scipy's Radau at tight
tolerance: the independent check of nlpdyn's step.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

import nlpdyn as nd

MASS, G = 1.0, 9.81
SPRING, PULL = 2.0, 0.1              # N/m, m/s
F_C, F_S, V_S = 1.0, 1.5, 1e-3
SIGMA0, SIGMA1, SIGMA2 = 1e5, np.sqrt(1e5), 0.4
T_END = 20.0


def _normalised():
    f_n = MASS * G
    return dict(mu_static=F_S / f_n, mu_kinetic=F_C / f_n, stribeck_velocity=V_S,
                sigma0=SIGMA0 / f_n, sigma1=SIGMA1 / f_n, sigma2=SIGMA2 / f_n)


def build(pull=PULL):
    """The block on a prismatic slide along x, the spring's end at x = pull * t."""
    s = nd.System(gravity=(0, 0, -G))
    block = s.add_body("block", MASS, (1e-3, 1e-3, 1e-3))
    slide = s.add_joint(nd.Prismatic(s.ground, block, (0, 0, 0), (1, 0, 0), name="slide"))
    s.add_force(nd.PointForce(block, name="spring",
                              force=lambda t, st: ca.vertcat(SPRING * (pull * t - st.r[0]), 0, 0)))
    s.add_force(nd.LuGreFriction(slide, **_normalised(), name="friction"))
    return s


def reference(t_eval, pull=PULL):
    """(x, v, z, friction force) at ``t_eval`` by scipy's Radau (rtol 1e-10)."""
    from scipy.integrate import solve_ivp

    def g(v):
        return F_C + (F_S - F_C) * np.exp(-(v / V_S) ** 2)

    def friction(v, z):
        z_dot = v - SIGMA0 * np.abs(v) * z / g(v)
        return SIGMA0 * z + SIGMA1 * z_dot + SIGMA2 * v, z_dot

    def rhs(t, y):
        x, v, z = y
        f, z_dot = friction(v, z)
        return [v, (SPRING * (pull * t - x) - f) / MASS, z_dot]

    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), [0.0, 0.0, 0.0], method="Radau",
                    t_eval=t_eval, rtol=1e-10, atol=1e-13, max_step=0.01)
    x, v, z = sol.y
    return x, v, z, friction(v, z)[0]


def stick_fraction(v, tol=1e-4):
    """Share of the time the block is stuck (|v| below ``tol`` m/s)."""
    return float(np.mean(np.abs(v) < tol))
