"""Coulomb friction in clearance contacts against closed forms.

A box in a prismatic clearance guide (axis X, gravity -Z) rests on the guide's bottom face:
the normal impulse per step is m g h, so Coulomb's law gives a sliding deceleration mu g, no
motion under a tangential push F <= mu m g (any direction in the face) and an acceleration
(F - mu m g)/m above it. The bar spinning on its pin (CASES.md #3's geometry without gravity,
``clearance_pendulum.build_spinning``) slows down by friction only: its energy never rises and
the energy ledger closes.

Tolerance tiers (STYLE.md): identities 1e-12 (relative where a scale exists); solver-limited
1e-8 relative (the QP's own accuracy) where the normal force is steady (the box), CONE_LAG
for the cone at the pin, whose normal force changes every step (the friction bound lags);
discretisation-limited C h for positions (semi-implicit Euler: x_n = h sum v_k).
"""
from functools import lru_cache

import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.step_nlp import FRICTION_DIRECTIONS
from problems import clearance_pendulum

G, MASS, MU, H = 9.81, 2.0, 0.3, 1e-3
C_GUIDE = 1e-6            # the box falls through it in 0.45 ms: it lands in the first step
T_ON = 0.01               # pushes start once the box rests on the face
IDENTITY, SOLVER = 1e-12, 1e-8
MU_PIN = 0.2
# the contact iterations keep the lagged normal impulses fixed after half of them
# (nlpdyn.contact): the friction bound is then the normal impulse four iterates back,
# measured within 4.7e-6 of the step's own on the spinning bar
CONE_LAG = 1e-5
PROFILE = np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]])


def box(mu=MU, v0=0.0, push=None, **joint):
    """Box "box" in guide "guide" (axis X, section Y-Z), gravity -Z; ``push`` (3,) applied
    at the centre of mass from T_ON on."""
    s = nd.System(gravity=(0, 0, -G))
    b = s.add_body("box", MASS, [0.01, 0.01, 0.01], velocity=(v0, 0, 0))
    s.add_joint(nd.PrismaticClearance(s.ground, b, (0, 0, 0), (1, 0, 0), PROFILE, C_GUIDE, 0.2,
                                      section_x=(0, 1, 0), name="guide", **joint,
                                      **({"friction": mu} if mu is not None else {})))
    if push is not None:
        force = np.asarray(push, dtype=float)
        def load(t, state):
            return ca.if_else(t >= T_ON, 1, 0) * ca.DM(force)
        s.add_force(nd.PointForce(b, force=load, name="push"))
    return s


@lru_cache(maxsize=None)
def run(mu=MU, v0=0.0, push=None, t_end=0.4):
    res = nd.simulate(box(mu, v0, push), t_end=t_end, h=H, progress=False)
    assert res.success, res.message
    return res


def resting(res):
    """Steps (rows of t[1:]) where the face carries the weight: normal impulses m g h."""
    return np.isclose(res.contact_force("guide")[1:].sum(axis=1), MASS * G, rtol=1e-9)


def test_sliding_decelerates_at_mu_g_then_sticks():
    v0 = 1.0
    res = run(v0=v0)
    x, vx = res.position("box")[:, 0], res.v[:, 0]
    rest = resting(res)
    assert rest[2:].all()           # the landing's impulse spreads over the first two steps
    stop = np.argmax(vx <= IDENTITY)                # first point at rest
    sliding = np.arange(1, len(res.t)) < stop       # steps ending while it still slides
    dv = np.diff(vx)
    assert np.allclose(dv[sliding & rest], -MU * G * H, rtol=SOLVER, atol=0)
    # it stops within one step of v0 / (mu g) and then sticks: no drift, no reversal
    assert abs(res.t[stop] - v0 / (MU * G)) <= H
    assert np.abs(vx[stop:]).max() <= IDENTITY
    assert np.ptp(x[stop:]) <= IDENTITY
    # position against v0 t - mu g t^2 / 2: semi-implicit Euler is off by mu g h t / 2
    t = res.t[:stop]
    assert np.abs(x[:stop] - (v0 * t - 0.5 * MU * G * t**2)).max() <= MU * G * H * t[-1]
    # friction force: mu times the normal force while sliding, against the motion
    F_t = res.contact_friction_vector("guide")[1:]
    N = res.contact_force("guide")[1:]
    slide_rows = sliding & rest
    assert np.allclose(F_t[slide_rows].sum(axis=1)[:, 0], -MU * MASS * G, rtol=SOLVER)
    assert np.allclose(res.contact_friction("guide")[1:][slide_rows], MU * N[slide_rows],
                       rtol=SOLVER, atol=IDENTITY * MASS * G)
    # sticking: no net force is needed on a level face at rest (single corners may hold
    # self-equilibrated pairs: the split among redundant contacts is not unique)
    assert np.abs(F_t[stop + 1:].sum(axis=1)).max() <= IDENTITY * MASS * G


HALF = np.pi / FRICTION_DIRECTIONS     # midway between two polygon directions


@pytest.mark.slow
@pytest.mark.parametrize("angle, share", [(0.0, 0.99), (HALF, 0.99 * np.cos(HALF))])
def test_push_inside_the_cone_does_not_move_it(angle, share):
    """A push of ``share`` mu m g along a polygon vertex (angle 0) and midway between two
    (pi/k, where the polygon holds cos(pi/k) = 0.924 of the cone: its stated error)."""
    F = share * MU * MASS * G
    res = run(push=(F * np.cos(angle), F * np.sin(angle), 0.0))
    on = res.t >= T_ON
    assert resting(res)[2:].all()
    assert np.abs(res.v[on, :3]).max() <= IDENTITY
    assert np.ptp(res.position("box")[on], axis=0).max() <= IDENTITY
    # the friction force holds the push exactly, within the cone
    F_t = res.contact_friction_vector("guide")[1:][on[1:]].sum(axis=1)
    assert np.allclose(F_t[1:, :2], -F * np.array([np.cos(angle), np.sin(angle)]),
                       rtol=0, atol=SOLVER * F)
    assert (res.contact_friction("guide") <= MU * res.contact_force("guide") * (1 + SOLVER)
            + SOLVER * MU * MASS * G).all()


def test_push_beyond_the_cone_accelerates_at_the_excess():
    F = 1.5 * MU * MASS * G
    res = run(push=(F, 0.0, 0.0), t_end=0.1)
    dv = np.diff(res.v[:, 0])
    steps = (res.t[1:] > T_ON + H) & resting(res)
    assert steps.sum() > 50
    assert np.allclose(dv[steps], (F - MU * MASS * G) / MASS * H, rtol=SOLVER, atol=0)


def test_friction_zero_is_the_frictionless_step():
    """friction=0 builds the frictionless program: bit-identical runs, no friction columns."""
    a = nd.simulate(box(mu=0.0, v0=0.5), t_end=0.05, h=H, progress=False)
    b = nd.simulate(box(mu=None, v0=0.5), t_end=0.05, h=H, progress=False)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v) and np.array_equal(a.lam, b.lam)
    assert not any(c.startswith("friction:") for c in a.energy_ledger().columns)
    assert not a.contact_friction("guide").any()
    # frictionless sliding keeps its speed
    assert np.abs(a.v[1:, 0] - 0.5).max() <= IDENTITY


@lru_cache(maxsize=None)
def spinning(mu=MU_PIN, t_end=0.3):
    s = clearance_pendulum.build_spinning()
    (pin,) = s.gaps
    pin.friction = mu
    res = nd.simulate(s, t_end=t_end, h=H, progress=False)
    assert res.success, res.message
    return res


def test_pin_in_bore_never_gains_energy_and_the_ledger_closes():
    res = spinning()
    E = res.energy                                  # no gravity: kinetic only
    assert (np.diff(E) <= IDENTITY * E[0]).all()
    ledger = res.energy_ledger()
    friction = np.diff(ledger["friction:pin"].to_numpy())
    assert (friction <= 0).all() and friction.sum() < -0.1
    columns = [c for c in ledger.columns
               if c.split(":")[0] in ("work", "impact", "contact", "friction")] + ["residual"]
    closure = ledger["total"] - ledger["total"][0] - ledger[columns].sum(axis=1)
    assert np.abs(closure).max() <= IDENTITY * E[0]
    # friction dissipates what the bar loses; the normal contacts nearly nothing
    assert abs(ledger["friction:pin"].iloc[-1] - (E[-1] - E[0])) <= 0.01 * (E[0] - E[-1])
    # the tangential force stays in the cone of every gap's normal force
    N, F = res.contact_force("pin"), res.contact_friction("pin")
    assert (F <= MU_PIN * N * (1 + CONE_LAG) + IDENTITY).all()
    assert F.max() > 0.5 * MU_PIN * N.max()



def test_friction_settings_and_saved_result(tmp_path):
    with pytest.raises(nd.ModelError, match="friction"):
        nd.simulate(box(mu=-0.1), t_end=0.01, h=H, progress=False)
    with pytest.raises(nd.ModelError, match="IPOPT has no friction"):
        nd.Stepper(box(), h=H, solver="ipopt")
    res = run(v0=1.0)
    back = nd.Result.load(res.save(tmp_path / "box"))
    assert np.array_equal(back.contact_friction_vector("guide"),
                          res.contact_friction_vector("guide"))
    # the step_control="nlp" scheme solved by fixed-h bisection handles friction too
    ad = nd.simulate(box(v0=1.0), t_end=0.1, h=(2.5e-4, H), step_control="nlp",
                     nlp_method="bisection", progress=False)
    assert ad.success, ad.message
    slide = (ad.t[1:] > 0.005) & resting(ad)
    assert np.allclose(np.diff(ad.v[:, 0])[slide] / ad.h[slide], -MU * G, rtol=SOLVER)


def test_a_failed_first_step_returns_the_start(tmp_path):
    """A run whose first step fails (an unmeetable max_penetration on a bore resting on its
    pin, with friction) returns a result: success False, the reason, the start state, and it
    saves and loads."""
    s = nd.System(gravity=(0, 0, -9.81))
    wheel = s.add_body("wheel", 1.0, (0.05, 0.03, 0.03), position=(0, 0, 0))
    s.add_joint(nd.RevoluteClearance(s.ground, wheel, point=(0, 0, 0), axis=(1, 0, 0),
                                     radius=0.02, clearance=5e-4, length=0.03,
                                     axial_clearance=1e-3, friction=0.2, offset=(0, 0, -5e-4),
                                     name="pin"))
    res = nd.simulate(s, 0.01, h=1e-3, progress=False, max_penetration=1e-300, max_retries=0)
    assert not res.success
    assert "step at t = 0 failed" in res.message and "max_penetration" in res.message
    assert len(res.t) == 1 and np.allclose(res.position("wheel")[0], 0.0)
    assert res.contact_friction("pin").shape[0] == 1
    loaded = nd.Result.load(res.save(tmp_path / "failed.npz"))
    assert not loaded.success and loaded.message == res.message
    assert np.array_equal(loaded.q, res.q)
