"""Case-study builders shared by tests, notebooks, benchmarks and the command line.

``PROBLEMS`` maps a name to a :class:`Problem`: how to build it, its default run and what to
summarise.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import free_top, pendulum, slider_crank, spherical_pendulum


@dataclass(frozen=True)
class Problem:
    build: Callable
    t_end: float
    h: float
    bodies: tuple = ()
    description: str = ""
    report: Callable | None = field(default=None, compare=False)


def _slider_report(res):
    x = res.position("slider")[:, 0]
    lo, hi = slider_crank.slider_limits()
    return (f"slider x range {x.min():.6f} .. {x.max():.6f} m "
            f"(closed-form kinematic limits {lo:.6f} .. {hi:.6f} m)")


def _pendulum_report(res):
    theta = pendulum.angle(res)
    return f"pendulum angle range {theta.min():.4f} .. {theta.max():.4f} rad"


PROBLEMS = {
    "slider_crank": Problem(slider_crank.build, 5.0, 1e-3, ("crank", "rod", "slider"),
                            "IFToMM spatial slider-crank, ideal joints (CASES.md #5)",
                            _slider_report),
    "pendulum": Problem(pendulum.build, 10.0, 1e-3, ("bob",),
                        "IFToMM simple pendulum, 1 kg, 1 m, released horizontal",
                        _pendulum_report),
    "spherical_pendulum": Problem(spherical_pendulum.build, 5.0, 1e-3, ("rod",),
                                  "rod on a spherical joint in conical motion"),
    "free_top": Problem(free_top.build, 10.0, 1e-3, ("top",),
                        "torque-free asymmetric body spinning near its intermediate axis"),
}

from . import trough  # noqa: E402

PROBLEMS["trough"] = Problem(trough.build, trough.T_END, trough.H, ("sphere",),
                             "seed 004 section 5: trough with a driven skewed trough")
