"""The command line's reports (issue 25 item 4): every check reads "ok, within <tolerance>"
on a good run, "OUTSIDE <tolerance>" on a doctored one, and "not reached yet" when the run
is too short for it; dissipative or descriptive quantities say so instead of a verdict.

A few reports are fed short real runs; the others a small stand-in object with only the
attributes the report reads (``Run``), or the problem module's helper replaced by one
returning doctored values."""
import numpy as np
import pytest

import nlpdyn as nd
import problems
from problems import PROBLEMS


class Run:
    """A stand-in for a Result: the given attributes, and methods as callables."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


def _args(name, variant=None):
    problem = PROBLEMS[name]
    return problem.arguments(problem.keywords(variant or next(iter(problem.variants))))


def _simulate(name, t_end, h=1e-3, **keywords):
    return nd.simulate(PROBLEMS[name].build(**keywords), t_end=t_end, h=h, progress=False)


def _energies(n=50, in_play=10.0, drift=0.0):
    t = np.linspace(0.0, 1.0, n)
    kinetic = in_play * np.sin(np.pi * t) ** 2
    return {"t": t, "kinetic_energy": kinetic, "potential_energy": -kinetic,
            "energy": drift * t}


def _ok(text):
    assert "ok, within" in text and "OUTSIDE" not in text, text


def _outside(text):
    assert "OUTSIDE" in text, text


# ------------------------------------------------------------------ energy, pendulum, slider

def test_energy_report():
    _ok(problems._energy_report(Run(**_energies(drift=1e-3))))
    _outside(problems._energy_report(Run(**_energies(drift=1.0))))
    dissipative = problems._energy_report(Run(**_energies(drift=1.0)), None,
                                          "dissipative: impacts only, no verdict")
    assert "ok" not in dissipative and "OUTSIDE" not in dissipative


def test_pendulum_report(monkeypatch):
    res = _simulate("pendulum", 1.5)
    _ok(problems._pendulum_report(res, _args("pendulum")))
    angle = problems.pendulum.angle
    monkeypatch.setattr(problems.pendulum, "angle", lambda r: 1.02 * angle(r))
    _outside(problems._pendulum_report(res, _args("pendulum")))
    monkeypatch.undo()
    assert "not reached yet" in problems._pendulum_report(_simulate("pendulum", 0.3),
                                                          _args("pendulum"))


def test_slider_report():
    lo, hi = problems.slider_crank.slider_limits()
    x = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.linspace(0, 3 * np.pi, 301))

    def run(x):
        return Run(position=lambda body: np.c_[x, np.zeros_like(x), np.zeros_like(x)])

    _ok(problems._slider_report(run(x), {}))
    _outside(problems._slider_report(run(x + 0.002), {}))
    assert "not reached yet" in problems._slider_report(run(x[:120]), {})
    # with play (or a penalty joint) the ideal limits are no bound: informative, no verdict
    for args in ({"spherical_clearance": 1e-4}, {"revolute_clearance": 0.0, "model": "penalty"}):
        line = problems._slider_report(run(x + 0.002), args)
        assert "informative" in line and "OUTSIDE" not in line and "ok" not in line


# ------------------------------------------------------------------ conserved momenta

def test_spherical_report(monkeypatch):
    res = _simulate("spherical_pendulum", 0.5)
    args = _args("spherical_pendulum")
    _ok(problems._spherical_report(res, args))
    momentum = problems.spherical_pendulum.angular_momentum
    monkeypatch.setattr(problems.spherical_pendulum, "angular_momentum",
                        lambda r, **kw: momentum(r, **kw) + np.outer(r.t, [0, 0, 1e-3]))
    _outside(problems._spherical_report(res, args))


def test_free_top_report(monkeypatch):
    res = _simulate("free_top", 0.5)
    _ok(problems._free_top_report(res, _args("free_top")))
    momentum = problems.free_top.angular_momentum_global
    monkeypatch.setattr(problems.free_top, "angular_momentum_global",
                        lambda r: momentum(r) * (1 + 1e-3 * r.t)[:, None])
    _outside(problems._free_top_report(res, _args("free_top")))


# ------------------------------------------------------------------ clearance joints

def _clearance_run(smallest_gap, c=1e-4):
    gaps = np.full((50, 4), c)
    gaps[10:, :2] = 0.0
    gaps[20, 0] = smallest_gap
    return Run(gap_rows=["pin"], gap=lambda joint: gaps, **_energies(in_play=4.9))


def test_radial_report():
    _ok(problems._radial_report(_clearance_run(-1e-10), "pin", 1e-4))
    _outside(problems._radial_report(_clearance_run(-1e-5), "pin", 1e-4))


def test_clearance_pendulum_report(monkeypatch):
    args = _args("clearance_pendulum")
    turning = problems.clearance_pendulum
    monkeypatch.setattr(turning, "turning_point_energy",
                        lambda r: (np.array([-4e-3, -1e-2]), np.array([1.0, 2.0])))
    _ok(problems._clearance_pendulum_report(_clearance_run(-1e-10), args))
    _outside(problems._clearance_pendulum_report(_clearance_run(-1e-5), args))
    monkeypatch.setattr(turning, "turning_point_energy",
                        lambda r: (np.array([-4e-3, -1e-3]), np.array([1.0, 2.0])))
    rising = problems._clearance_pendulum_report(_clearance_run(-1e-10), args)
    assert "OUTSIDE" in rising.split("turning points")[1], rising
    monkeypatch.setattr(turning, "turning_point_energy", lambda r: (np.array([]), np.array([])))
    assert "not reached yet" in problems._clearance_pendulum_report(_clearance_run(-1e-10), args)


def _slide(acceleration, lateral=0.0, n=101, tilt=0.0, gaps=None):
    """A body sliding along Z at ``acceleration`` from t = 0 to 1, its lateral speed
    ``lateral`` until t = 0.3, then ``lateral`` * 1e-3 when ``lateral`` is negative (never
    settling)."""
    t = np.linspace(0.0, 1.0, n)
    v = np.zeros((n, 3))
    v[:, 2] = acceleration * t
    v[t < 0.3, 0] = abs(lateral)
    if lateral < 0:
        v[t >= 0.3, 0] = 1e-3 * abs(lateral)
    A = np.tile(np.eye(3), (n, 1, 1))
    A[:, 1, 2] = np.sin(tilt)
    gaps = np.zeros((n, 2)) if gaps is None else gaps
    return Run(t=t, velocity=lambda body: v, angular_velocity=lambda body: np.zeros((n, 3)),
               rotation=lambda body: A, gap_rows=["bore"], gap=lambda joint: gaps)


def test_clearance_slider_report():
    args = _args("clearance_slider")
    exact = args["force"][2] / args["mass"]
    tilt = np.arcsin(2 * args["clearance"] / args["length"])
    _ok(problems._clearance_slider_report(_slide(exact, 0.02, tilt=tilt), args))
    _outside(problems._clearance_slider_report(_slide(1.01 * exact, 0.02, tilt=tilt), args))
    _outside(problems._clearance_slider_report(_slide(exact, 0.02, tilt=1.1 * tilt), args))
    _outside(problems._clearance_slider_report(
        _slide(exact, tilt=tilt, gaps=np.full((101, 2), -1e-5)), args))
    short = problems._clearance_slider_report(
        _slide(exact, -0.02, tilt=tilt, gaps=np.full((101, 2), 1e-5)), args)
    assert short.count("not reached yet") == 2, short


def test_prismatic_slider_report():
    args = _args("prismatic_slider")
    exact = args["force"][2] / args["mass"]
    gaps = np.zeros((101, 12))
    _ok(problems._prismatic_slider_report(_slide(exact, 0.01, gaps=gaps), args))
    _outside(problems._prismatic_slider_report(_slide(exact, 0.01, gaps=gaps - 1e-5), args))
    _outside(problems._prismatic_slider_report(_slide(0.99 * exact, gaps=gaps), args))
    assert "not reached yet" in problems._prismatic_slider_report(
        _slide(exact, -0.01, gaps=gaps), args)


def test_chain_report():
    args = _args("chain", "clearance")
    text = problems._chain_report(Run(**{**vars(_clearance_run(-1e-10)), "gap_rows": ["j0"]}),
                                  args)
    _ok(text)
    assert "no verdict" in text
    _outside(problems._chain_report(Run(**{**vars(_clearance_run(-1e-5)), "gap_rows": ["j0"]}),
                                    args))
    _ok(problems._chain_report(Run(gap_rows=[], **_energies()), _args("chain")))


# ------------------------------------------------------------------ stops, cone, supports

@pytest.mark.parametrize("law", ["ln", "kv"])
def test_triple_report(monkeypatch, law):
    t = np.linspace(0.0, 1.0, 50)
    limits = problems.triple_pendulum.TRANSLATION_LIMIT, problems.triple_pendulum.ROTATION_LIMIT

    def motion(beyond):
        return (limits[0] + beyond) * np.sin(6 * t), (limits[1] + beyond) * np.sin(6 * t)

    run = Run(**_energies(in_play=1.0))
    monkeypatch.setattr(problems.triple_pendulum, "relative_motion", lambda r: motion(1e-3))
    _ok(problems._triple_report(run, {"law": law}))
    monkeypatch.setattr(problems.triple_pendulum, "relative_motion", lambda r: motion(0.2))
    assert problems._triple_report(run, {"law": law}).count("OUTSIDE") == 2
    monkeypatch.setattr(problems.triple_pendulum, "relative_motion", lambda r: motion(-0.1))
    assert problems._triple_report(run, {"law": law}).count("not reached yet") == 2


def test_rom_report(monkeypatch):
    args = _args("rom_pendulum")
    run = Run(force_elements={"cone": ["ground", "pendulum"]})
    monkeypatch.setattr(problems.rom_pendulum, "beyond_cone", lambda r: np.radians([-5.0, 8.0]))
    _ok(problems._rom_report(run, args))
    monkeypatch.setattr(problems.rom_pendulum, "beyond_cone", lambda r: np.radians([-5.0, 14.0]))
    _outside(problems._rom_report(run, args))
    _ok(problems._rom_report(Run(force_elements={}, **_energies()), _args("rom_pendulum", "free")))


def test_flexible_base_report():
    args = _args("flexible_base")
    sag = args["mass"] * 9.81 / (4 * args["stiffness"][2])
    omega = problems.flexible_base.frequencies(args["mass"])["z"]
    t = np.linspace(0.0, 0.1, 1001)

    def run(z):
        return Run(position=lambda body: np.c_[0 * z, 0 * z, z])

    swing = -sag * (1 - np.cos(omega * t))
    _ok(problems._flexible_base_report(run(swing), args))
    _outside(problems._flexible_base_report(run(1.1 * swing), args))
    assert "not reached yet" in problems._flexible_base_report(run(swing[:100]), args)
    damped = problems._flexible_base_report(run(1.1 * swing), {**args, "damping": (0, 0, 10.0)})
    assert "no verdict" in damped and "OUTSIDE" not in damped


# ------------------------------------------------------------------ references

def test_stick_slip_report(monkeypatch):
    args = _args("stick_slip")
    t = np.linspace(0.0, 10.0, 101)
    x, v = 0.05 * t, np.where(t < 5, 0.0, 0.1)
    monkeypatch.setattr(problems.stick_slip, "reference", lambda tt, pull: (x, v, 0 * t, 0 * t))

    def run(x_mine, v_mine):
        return Run(t=t, position=lambda body: np.c_[x_mine, 0 * t, 0 * t],
                   velocity=lambda body: np.c_[v_mine, 0 * t, 0 * t])

    _ok(problems._stick_slip_report(run(x + 1e-4, v), args))
    _outside(problems._stick_slip_report(run(x + 0.1, v), args))
    _outside(problems._stick_slip_report(run(x, np.full_like(t, 0.1)), args))


@pytest.mark.parametrize("name", ["manipulator", "rpsup"])
def test_programmed_path_report(monkeypatch, name):
    module = getattr(problems, name)
    report = PROBLEMS[name].report

    def set_errors(path, closure):
        monkeypatch.setattr(module, "path_error", lambda r: np.array([0.0, path]))
        monkeypatch.setattr(problems.manipulator, "ledger_closure", lambda r: (closure, None))

    set_errors(5e-10, 1e-14)
    _ok(report(Run(), {}))
    set_errors(1e-6, 1e-14)
    _outside(report(Run(), {}))
    set_errors(5e-10, 1e-6)
    _outside(report(Run(), {}))


def test_trough_report(monkeypatch):
    trough = problems.trough
    t = np.linspace(0.0, 2.0, 201)[:-1]
    exact = trough.closed_form(t)
    monkeypatch.setattr(trough, "outputs", lambda r: {"t": t, **{k: exact[k] + 1e-3 for k in
                                                                  ("lambda", "lambda_bar_1")}})
    _ok(trough.report(Run()))
    monkeypatch.setattr(trough, "outputs", lambda r: {"t": t, "lambda": 1.1 * exact["lambda"],
                                                      "lambda_bar_1": exact["lambda_bar_1"]})
    _outside(trough.report(Run()))


def test_rolling_disk_report(monkeypatch):
    args = _args("rolling_disk")
    disk = problems.rolling_disk
    t = np.linspace(0.0, 1.0, 11)
    centre = np.zeros((11, 3))
    monkeypatch.setattr(disk, "reference", lambda *a, **k: None)
    monkeypatch.setattr(disk, "centre", lambda ref, radius: centre)

    def run(tilt, miss):
        monkeypatch.setattr(disk, "tilt", lambda r: np.full(11, tilt))
        return Run(t=t, position=lambda body: centre + [miss, 0, 0])

    _ok(problems._rolling_disk_report(run(args["tilt"] * (1 + 1e-6), 1e-6), args))
    _outside(problems._rolling_disk_report(run(args["tilt"] * 1.01, 1e-6), args))
    _outside(problems._rolling_disk_report(run(args["tilt"], 1e-2), args))


def test_two_loops_report(monkeypatch):
    args = _args("two_loops")
    loops = problems.two_loops
    t = np.linspace(0.0, 0.2, 21)
    monkeypatch.setattr(loops, "discretisation_energy", lambda r: 1e-4 * t)
    monkeypatch.setattr(loops, "turns", lambda r: 1.0)

    def run(miss):
        x = {k: np.array([loops.slider_x(args["crank_speed"] * s, k) for s in t]) + miss
             for k in (1, 2)}
        return Run(t=t, position=lambda body: np.c_[x[int(body[-1])], 0 * t, 0 * t],
                   **{k: v for k, v in _energies(21).items() if k != "t"})

    text = problems._two_loops_report(run(1e-9), args)
    _ok(text)
    assert "no verdict" in text
    _outside(problems._two_loops_report(run(1e-4), args))


def test_every_report_is_tested():
    """Each report the registry uses is one of those tested here."""
    tested = {problems._energy_report, problems._pendulum_report, problems._slider_report,
              problems._spherical_report, problems._free_top_report,
              problems._clearance_pendulum_report, problems._clearance_slider_report,
              problems._prismatic_slider_report, problems._chain_report, problems._triple_report,
              problems._rom_report, problems._flexible_base_report, problems._stick_slip_report,
              problems.trough.report, problems._rolling_disk_report, problems._two_loops_report,
              PROBLEMS["manipulator"].report, PROBLEMS["rpsup"].report}
    assert {p.report for p in PROBLEMS.values()} <= tested
