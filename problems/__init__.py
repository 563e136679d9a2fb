"""Case-study builders shared by tests, notebooks, benchmarks and the command line.

``PROBLEMS`` maps a name to a :class:`Problem`: how to build it, its model variants and
options (builder keyword arguments the command line may set), its default run, what its run
is checked against and what its plot draws besides the overview. The case studies are
described in ``docs/CASES.md``.

Adding a case study is one entry at the end of this file::

    PROBLEMS["my_case"] = Problem(
        my_case.build, t_end=2.0, h=1e-3, bodies=("link",),
        description="what it is (docs/CASES.md #n)",
        variants={"ideal": Variant("ideal joints"),
                  "clearance": Variant("clearance joint", {"clearance": 1e-4})},
        options={"clearance": Option(float, "radial clearance [m]", variants=("clearance",))},
        report=my_report,   # (res, args) -> str: each check against what, with a verdict
        draw=my_draw)       # (res, panels) -> None: adds checks to the overview plot

The first variant is the default; each variant's ``settings`` are keyword arguments of
``build``; an option is a keyword of ``build`` too, parsed from ``--set key=value`` (its
default is the builder's). ``python -m nlpdyn --list`` then lists it and
``tests/test_cli.py`` runs it.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import (bricard, chain, clearance_pendulum, clearance_slider, flexible_base,
               four_bar_chain, free_top, manipulator, pendulum, prismatic_slider, rolling_disk,
               rom_pendulum, rpsup, slider_crank, spherical_pendulum, stick_slip,
               triple_pendulum, trough, two_loops)


def parse_bool(text: str) -> bool:
    """The text true or false (also 1/0, yes/no, on/off) as a bool."""
    value = str(text).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def parse_vector(text: str) -> tuple:
    """Comma-separated numbers ("0.4,3,0.6") as a tuple of floats."""
    try:
        values = tuple(float(x) for x in str(text).split(","))
    except ValueError:
        raise ValueError(f"expected comma-separated numbers, got {text!r}") from None
    if not all(np.isfinite(values)):
        raise ValueError(f"expected finite numbers, got {text!r}")
    return values


@dataclass(frozen=True)
class Option:
    """A keyword of a problem's builder that the command line may set (``--set key=value``).

    Attributes
    ----------
    parse : callable   str -> value (float, int, str, :func:`parse_bool`, :func:`parse_vector`)
    help : str         what it is, with its unit
    choices : tuple    allowed values (None: any the parser accepts)
    variants : tuple   the variants it applies to (None: every variant)
    positive : bool    numbers must be > 0
    default : object   shown by the command line when the builder's signature has none
                       (a keyword taken by ``**parameters``)
    """

    parse: Callable
    help: str
    choices: tuple | None = None
    variants: tuple | None = None
    positive: bool = False
    default: object = None


@dataclass(frozen=True)
class Variant:
    """A model variant: ``settings`` are builder keyword arguments; ``h`` / ``t_end``
    override the problem's default run (None: the problem's)."""

    description: str
    settings: dict = field(default_factory=dict)
    h: float | tuple | None = None
    t_end: float | None = None


@dataclass(frozen=True)
class Problem:
    """A case study as the command line runs it.

    ``h`` is a step size, a (h_min, h_max) pair, or a callable of the builder's keyword
    arguments returning one. ``report(res, args) -> str`` states what was checked against
    what; ``draw(res, panels, args)`` adds those checks to the overview plot (``panels``: the
    axes of :func:`nlpdyn.plotting.plot_result` by name, e.g. ``"position:slider"``);
    ``args`` are every argument of the builder as the run used them (defaults included).
    ``bodies`` are the ones the overview plot shows (:meth:`missing_bodies` checks them
    against a built model); ``plot_options`` go to :meth:`nlpdyn.Result.plot`.
    """

    build: Callable
    t_end: float
    h: float | tuple | Callable
    bodies: tuple = ()
    description: str = ""
    report: Callable | None = field(default=None, compare=False)
    variants: dict = field(default_factory=lambda: {"default": Variant("as described")})
    options: dict = field(default_factory=dict)
    draw: Callable | None = field(default=None, compare=False)
    plot_options: dict = field(default_factory=dict)

    def default(self, option: str):
        """The builder's default for ``option`` (else the option's own ``default``)."""
        p = inspect.signature(self.build).parameters.get(option)
        if p is None or p.default is inspect.Parameter.empty:
            return self.options[option].default if option in self.options else None
        return p.default

    def options_of(self, variant: str) -> list[str]:
        """Names of the options that apply to ``variant``."""
        return [k for k, o in self.options.items() if o.variants is None or variant in o.variants]

    def keywords(self, variant: str, values: dict | None = None) -> dict:
        """Builder keyword arguments of ``variant`` with option ``values`` set."""
        return {**self.variants[variant].settings, **(values or {})}

    def arguments(self, keywords: dict) -> dict:
        """Every argument of the builder called with ``keywords``, defaults included."""
        bound = inspect.signature(self.build).bind_partial(**keywords)
        bound.apply_defaults()
        return {**bound.arguments.pop("parameters", {}), **bound.arguments}

    def missing_bodies(self, system) -> list[str]:
        """The names in ``bodies`` (the plot's) that ``system``, as built, does not have."""
        names = {b.name for b in system.bodies}
        return [b for b in self.bodies if b not in names]

    def run_settings(self, variant: str, keywords: dict) -> tuple:
        """(t_end, h) of the default run of ``variant`` built with ``keywords``."""
        v = self.variants[variant]
        h = v.h if v.h is not None else self.h
        return (v.t_end if v.t_end is not None else self.t_end,
                h(**keywords) if callable(h) else h)


# ---------------------------------------------------------------------------- checks
# Each check reads "ok, within <tolerance>" or "OUTSIDE <tolerance> (off by ...)"; a check the
# run is too short for says "not reached yet"; a dissipative or descriptive quantity says so.

# within this share of the energy in play a conservative run's energy reads "ok"
ENERGY_SHARE = 1e-2
# within this distance (m) the slider-crank's slider range reads "ok" against its limits
SLIDER_TOL = 1e-4
# the pendulum's angle range against the closed form (rad): the midpoint step's phase error
# does not move the turning points, which are sampled every h (h |w| <= 4.4e-3 rad at 1 m)
PENDULUM_ANGLE_TOL = 1e-2
# a conserved angular momentum (a free top's, a spherical pendulum's about the vertical):
# the midpoint step keeps it exactly but for the solves' tolerance, which gathers to ~1e-6
# of |L0| over 1e4 steps; ten times that
MOMENTUM_SHARE = 1e-5
# a clearance gap may close below zero by this share of the clearance: the loosest
# penetration the stepper accepts (the "linearised" contact's; the iterated ones stay ~1e-9 m)
GAP_SHARE = 1e-2
# energy at the clearance pendulum's turning points may rise by this share of the energy in
# play: the midpoint step's energy oscillates by ~2e-5 of it between turning points (the
# ideal pendulum's range at h = 1e-3), which sampling picks up; impacts take out ~1e-3 of it
TURNING_RISE_SHARE = 1e-4
# a settled slide is a free translation, which the midpoint step keeps to round-off (1e-15
# measured); the mean acceleration within this share of F_z / m leaves the solves' tolerance
ACCELERATION_SHARE = 1e-6
# the cross-section motion counts as stopped once the lateral speed stays below this share
# of its largest (or below SETTLED_SPEED m/s when there was none)
SETTLED_SHARE, SETTLED_SPEED = 1e-6, 1e-12
# the clearance slider's final tilt against asin(2c/L) when both ends touch: the gaps close
# to GAP_SHARE of c, which moves the tilt by that share
TILT_SHARE = GAP_SHARE
# the flexible base's lowest point against -2 m g / (4 k_z): sampled every h, the lowest
# sample misses the swing's by up to (omega h)^2 / 8 of it (0.25 % at the defaults)
SAG_SHARE = 1e-2
# the programmed path's error (m): the constraint 'path' holds to the solves' tolerance
# (check_tol 1e-7 on the scaled rows; ~5e-10 m measured)
PATH_TOL = 1e-8
# the energy ledger closes in exact arithmetic: round-off of its energy scale
LEDGER_TOL = 1e-10
# the LuGre block against scipy Radau: first order in h; 8.6e-4 of the spring's far end's
# travel measured at h = 1e-3 over 20 s; five times that
STICK_SLIP_SHARE = 5e-3
# share of the time stuck against the reference's: a few samples either side of each switch
# between sticking and slipping
STUCK_TOL = 1e-2
# two_loops' sliders against the closed-form kinematics at the driven crank angle (m): held
# by the joints and the drive, so the solves' tolerance (7.7e-8 m measured)
KINEMATIC_TOL = 1e-6
# the rolling disk against its minimal-coordinate reference, second order in h (measured at
# h = 1e-3 over 2 s: tilt drift 2.6e-6 of the tilt, the centre 1.8e-4 of the radius); ten
# times that, or less
TILT_DRIFT_SHARE = 1e-4
CENTRE_SHARE = 1e-3


def _turning_points(x) -> int:
    """How many times ``x`` turns back (its increments change sign)."""
    step = np.sign(np.diff(x))
    step = step[step != 0]
    return int(np.count_nonzero(np.diff(step)))


def _verdict(ok, tolerance, off=None) -> str:
    """"ok, within <tolerance>" or "OUTSIDE <tolerance>", with "(off by <off>)" when given."""
    if ok:
        return f"ok, within {tolerance}"
    return f"OUTSIDE {tolerance}" + ("" if off is None else f" (off by {off})")


def _in_play(res) -> float:
    """The energy in play: the largest kinetic energy or the potential energy's range."""
    return max(np.abs(res.kinetic_energy).max(initial=0.0), np.ptp(res.potential_energy))


def _energy_report(res, args=None, what="conservative: energy is constant in the exact solution"):
    """The energy's drift and range against the energy in play: the largest kinetic energy or
    the potential energy's range, whichever is larger (a total that starts at zero says
    nothing of scale). Only a conservative run's gets a verdict; ``what`` says why not."""
    e = res.energy
    in_play = _in_play(res)
    share = np.ptp(e) / in_play if in_play > 0 else 0.0
    verdict = (f"; {_verdict(share <= ENERGY_SHARE, f'{ENERGY_SHARE:.0%} of it')}"
               if what.startswith("conservative") else "")
    return (f"checked: energy drift {e[-1] - e[0]:+.3e} J, range {np.ptp(e):.3e} J, "
            f"{share:.2%} of the {in_play:.4g} J in play{verdict} ({what})")
def _slider_report(res, args):
    x = res.position("slider")[:, 0]
    lo, hi = slider_crank.slider_limits()
    if _turning_points(x) < 2:
        return (f"checked: slider x range {x.min():.6f} .. {x.max():.6f} m (the run ends before "
                f"the slider has turned at both ends: the closed-form kinematic limits "
                f"{lo:.6f} .. {hi:.6f} m are not reached yet)")
    off = max(abs(x.min() - lo), abs(x.max() - hi))
    text = (f"checked: slider x range {x.min():.6f} .. {x.max():.6f} m against the "
            f"closed-form kinematic limits {lo:.6f} .. {hi:.6f} m (reached once per crank "
            f"turn by the ideal mechanism): ")
    loose = [name for name in ("spherical_clearance", "revolute_clearance")
             if (args or {}).get(name) is not None]
    if loose or (args or {}).get("model") == "penalty":
        # a joint with play (or a penalty joint's deflection) lets the slider pass them
        return text + (f"off by up to {off:.3g} m, informative (the ideal mechanism's limits; "
                       f"{' and '.join(loose) or 'a penalty joint'} lets the slider pass them)")
    return text + (_verdict(off <= SLIDER_TOL, f"{SLIDER_TOL:g} m")
                   + ("" if off <= SLIDER_TOL else f" (off by up to {off:.3g} m)"))


def _slider_draw(res, panels, args):
    ax = panels.get("position:slider")
    if ax is not None:
        for k, limit in enumerate(slider_crank.slider_limits()):
            ax.axhline(limit, color="k", ls="--", lw=0.8,
                       label="x limits, closed form" if k == 0 else None)


def _pendulum_report(res, args):
    theta = pendulum.angle(res)
    a0 = theta[0]
    energy = _energy_report(res, args).removeprefix("checked: ")
    if not _turning_points(theta):
        # the far turning point lies beyond the run
        return (f"checked: pendulum angle range {theta.min():.4f} .. {theta.max():.4f} rad "
                "(the run ends before the swing's far turning point: the closed form's range "
                f"{a0:.4f} .. {np.pi - a0:.4f} rad is not reached yet); " + energy)
    off = max(abs(theta.min() - a0), abs(theta.max() - (np.pi - a0)))
    return (f"checked: pendulum angle range {theta.min():.4f} .. {theta.max():.4f} rad against "
            f"the closed form {a0:.4f} .. {np.pi - a0:.4f} rad (released at rest): "
            + _verdict(off <= PENDULUM_ANGLE_TOL, f"{PENDULUM_ANGLE_TOL:g} rad", f"{off:.3g} rad")
            + "; " + energy)


def _momentum_check(drift, scale, what) -> str:
    """A conserved angular momentum's largest change ``drift`` against MOMENTUM_SHARE of
    ``scale`` (described by ``what``)."""
    share = drift / scale if scale > 0 else 0.0
    return _verdict(share <= MOMENTUM_SHARE, f"{MOMENTUM_SHARE:g} of {what}",
                    f"{share:.2e} of it")


def _spherical_report(res, args):
    L = spherical_pendulum.angular_momentum(res, mass=args["mass"], length=args["length"])
    lz = L[:, 2]
    scale = np.linalg.norm(L, axis=1).max()
    drift = np.abs(lz - lz[0]).max()
    return (f"checked: angular momentum about the vertical through the pivot {lz[0]:.6g} -> "
            f"{lz[-1]:.6g} kg m^2/s, largest change {drift:.2e} kg m^2/s (conserved: gravity "
            f"has no moment about it): "
            f"{_momentum_check(drift, scale, f'the largest |L| {scale:.4g}')}; "
            + _energy_report(res, args).removeprefix("checked: "))


def _free_top_report(res, args):
    L = free_top.angular_momentum_global(res)
    scale = np.linalg.norm(L[0])
    drift = np.max(np.linalg.norm(L - L[0], axis=1))
    return (f"checked: global angular momentum |L - L0|/|L0| <= "
            f"{drift / scale if scale > 0 else 0.0:.2e} (torque-free: constant): "
            f"{_momentum_check(drift, scale, '|L0|')}; "
            + _energy_report(res, args).removeprefix("checked: "))


def _gap_check(gaps, c) -> str:
    """The smallest of ``gaps`` against a penetration of GAP_SHARE of the clearance ``c``."""
    tol = GAP_SHARE * c
    return _verdict(gaps.min() >= -tol, f"{tol:.1e} m of penetration ({GAP_SHARE:.0%} of the "
                    f"clearance)", f"{-gaps.min() - tol:.2e} m")


def _radial_report(res, joint, c):
    """Smallest gap of a radial clearance joint, and its largest eccentricity c - gap,
    against a penetration of GAP_SHARE of the clearance."""
    gaps = res.gap(joint)
    return (f"checked: joint {joint!r} smallest gap {gaps.min():.3e} m, largest eccentricity "
            f"{c - gaps[:, :2].min():.4e} m, to stay within clearance {c:.4e} m: "
            + _gap_check(gaps, c))


def _clearance_pendulum_report(res, args):
    if not res.gap_rows:
        return _energy_report(res, args)
    text = _radial_report(res, "pin", args["clearance"])
    dE, _ = clearance_pendulum.turning_point_energy(res)
    if not len(dE):
        return text + ("; energy at the swing's turning points: the run ends before the first "
                       "turning point, not reached yet")
    rising = np.max(np.diff(np.r_[0.0, dE]))
    in_play = _in_play(res)
    tol = TURNING_RISE_SHARE * in_play
    return (text + "; energy at the swing's turning points "
            f"{', '.join(f'{x:+.3e}' for x in dE[:4])} J, largest rise {rising:+.1e} J "
            "(impacts only take energy out): "
            + _verdict(rising <= tol, f"{tol:.1e} J ({TURNING_RISE_SHARE:g} of the "
                       f"{in_play:.4g} J in play)", f"{rising - tol:.2e} J"))


def _settled(res, body, k) -> bool:
    """Whether ``body``'s cross-section motion (lateral velocity, angular velocity) has
    stopped over the points from ``k`` on."""
    for motion in (res.velocity(body)[:, :2], res.angular_velocity(body)):
        speed = np.linalg.norm(motion, axis=1)
        if speed[k:].max(initial=0.0) > SETTLED_SHARE * speed.max(initial=0.0) + SETTLED_SPEED:
            return False
    return True


def _slide_acceleration(res, body, force, mass):
    """Mean Z acceleration over the run's second half, against F_z / m once the
    cross-section motion has stopped there (else not reached yet)."""
    t, vz = res.t, res.velocity(body)[:, 2]
    k = len(t) // 2
    exact = force / mass
    if t[-1] <= t[k] or not _settled(res, body, k):
        return (f"Z acceleration against F_z/m = {exact:.5g} m/s^2 (closed form once the "
                "cross-section motion has stopped): the run ends before that motion has stopped "
                "for its second half, not reached yet")
    a = (vz[-1] - vz[k]) / (t[-1] - t[k])
    share = abs(a - exact) / abs(exact) if exact else abs(a)
    return (f"Z acceleration over the second half {a:.5g} m/s^2 against F_z/m = {exact:.5g} "
            f"m/s^2 (closed form once the cross-section motion has stopped): "
            + _verdict(share <= ACCELERATION_SHARE, f"{ACCELERATION_SHARE:g} of it",
                       f"{share:.2e} of it"))


def _clearance_slider_report(res, args):
    text = "checked: " + _slide_acceleration(res, "tube", args["force"][2], args["mass"])
    if res.gap_rows:
        c, length = args["clearance"], args["length"]
        gaps = res.gap("bore")
        tilt = np.arcsin(abs(res.rotation("tube")[-1][1, 2]))
        exact = np.arcsin(2 * c / length)
        if np.all(gaps[-1] <= GAP_SHARE * c):
            off = abs(tilt - exact) / exact
            text += (f"; final tilt {np.degrees(tilt):.4f} deg against asin(2c/L) = "
                     f"{np.degrees(exact):.4f} deg (both ends touching): "
                     + _verdict(off <= TILT_SHARE, f"{TILT_SHARE:.0%} of it",
                                f"{off:.2%} of it"))
        else:
            text += (f"; final tilt {np.degrees(tilt):.4f} deg (the run ends before both ends "
                     f"touch: asin(2c/L) = {np.degrees(exact):.4f} deg is not reached yet)")
        text += "; " + _radial_report(res, "bore", c).removeprefix("checked: ")
    return text


def _prismatic_slider_report(res, args):
    text = "checked: " + _slide_acceleration(res, "slider", args["force"][2], args["mass"])
    if res.gap_rows:
        gaps = res.gap("cavity")
        engaged = int(np.sum(gaps[-1] < 1e-6))
        text += (f"; smallest gap {gaps.min():.3e} m: {_gap_check(gaps, args['clearance'])}; "
                 f"{engaged} of 12 vertex gaps within 1e-6 m at the end (informative)")
    return text


def _stop_reach(law, stiffness, in_play) -> float:
    """How far a stop of ``law`` ("ln": K d^1.5, "kv": K d) deforms holding all the energy
    in play: K d^(n+1) / (n+1) = E."""
    n = triple_pendulum.LAW_DATA[law].get("exponent", 1.0)
    return ((n + 1) * in_play / stiffness) ** (1 / (n + 1))


def _triple_report(res, args):
    translation, rotation = triple_pendulum.relative_motion(res)
    law = triple_pendulum.LAW_DATA[args["law"]]
    in_play = _in_play(res)
    checks = []
    for what, x, limit, k, unit, scale in (
            ("slide in B", translation, triple_pendulum.TRANSLATION_LIMIT,
             law["translation_stiffness"], "m", 1.0),
            ("turn in C", rotation, triple_pendulum.ROTATION_LIMIT,
             law["rotation_stiffness"], "deg", np.degrees(1.0))):
        beyond = max(np.abs(x).max(initial=0.0) - limit, 0.0)
        reach = _stop_reach(args["law"], k, in_play)
        if np.abs(x).max(initial=0.0) < limit:
            checks.append(f"{what} {scale * x.min():+.4g} .. {scale * x.max():+.4g} {unit} (the "
                          f"stops at +-{scale * limit:.4g} {unit} are not reached yet)")
            continue
        checks.append(
            f"{what} {scale * x.min():+.4g} .. {scale * x.max():+.4g} {unit} against the stops "
            f"at +-{scale * limit:.4g} {unit}, {scale * beyond:.3g} {unit} beyond them: "
            + _verdict(beyond <= reach, f"{scale * reach:.3g} {unit} (the stop's deformation "
                       f"holding all {in_play:.3g} J in play)", f"{scale * (beyond - reach):.3g} "
                       f"{unit}"))
    return "checked: " + "; ".join(checks) + " (penalty stops deform)"


def _rom_report(res, args):
    if "cone" not in res.force_elements:
        return _energy_report(res, args)
    beyond = rom_pendulum.beyond_cone(res).max()
    sigma = args.get("delta_sigma", rom_pendulum.REFERENCE["delta_sigma"])
    return (f"checked: largest latitude beyond the cone {np.degrees(beyond):.2f} deg, against "
            f"the elastic band delta_sigma = {np.degrees(sigma):.2f} deg (the cone's moment is "
            f"at its maximum there): "
            + _verdict(beyond <= sigma, "the band", f"{np.degrees(beyond - sigma):.3g} deg"))


def _flexible_base_report(res, args):
    m = args["mass"]
    kz = args["stiffness"][2]
    sag = m * 9.81 / (4 * kz)
    z = res.position("base")[:, 2]
    period = 2 * np.pi / flexible_base.frequencies(m, stiffness=args["stiffness"])["z"]
    text = f"checked: base z {z.min():.4e} .. {z.max():.4e} m, mean {z.mean():.4e} m"
    if np.any(args["damping"]):
        return (text + f", static sag -m g/(4 k_z) = {-sag:.4e} m (damped supports: "
                "informative, no verdict)")
    text += (f"; released at rest it oscillates between 0 and 2 (-m g/(4 k_z)) = "
             f"{-2 * sag:.4e} m with period {period:.4g} s")
    if not _turning_points(z):
        return text + " (the run ends before the lowest point: not reached yet)"
    off = max(abs(z.min() + 2 * sag), abs(z.max())) / (2 * sag)
    return text + ": " + _verdict(off <= SAG_SHARE, f"{SAG_SHARE:.0%} of the swing",
                                  f"{off:.2%} of it")


def _flexible_base_draw(res, panels, args):
    ax = panels.get("position:base")
    if ax is not None:
        m = args["mass"]
        kz = args["stiffness"][2]
        ax.axhline(-m * 9.81 / (4 * kz), color="k", ls="--", lw=0.8, label="static sag, closed form")


def _chain_report(res, args):
    if res.gap_rows:
        worst = min(res.gap_rows, key=lambda j: res.gap(j).min())
        return _radial_report(res, worst, args["clearance"]) + "; " + _energy_report(
            res, args, "dissipative: energy may only decrease at impacts, no verdict"
        ).removeprefix("checked: ")
    return _energy_report(res, args)


def _stick_slip_report(res, args):
    x, v, _, _ = stick_slip.reference(res.t, args["pull"])
    mine = res.velocity("block")[:, 0]
    miss = np.abs(res.position("block")[:, 0] - x).max()
    travel = args["pull"] * (res.t[-1] - res.t[0])
    tol = STICK_SLIP_SHARE * travel
    stuck, stuck_ref = stick_slip.stick_fraction(mine), stick_slip.stick_fraction(v)
    return (f"checked: block position against scipy Radau on the same LuGre ODE (rtol 1e-10): "
            f"largest difference {miss:.3e} m (first order in h): "
            + _verdict(miss <= tol, f"{tol:.2e} m ({STICK_SLIP_SHARE:g} of the "
                       f"{travel:.3g} m the spring's end travels)", f"{miss - tol:.2e} m")
            + f"; time stuck {stuck:.3f} against {stuck_ref:.3f}: "
            + _verdict(abs(stuck - stuck_ref) <= STUCK_TOL, f"{STUCK_TOL:g}",
                       f"{abs(stuck - stuck_ref) - STUCK_TOL:.3f}"))


def _stick_slip_draw(res, panels, args):
    ax = panels.get("position:block")
    if ax is not None:
        ax.plot(res.t, stick_slip.reference(res.t, args["pull"])[0], "k--", lw=0.8,
                label="x, scipy Radau")


# ---------------------------------------------------------------------------- registry
_RADIAL = "radial clearance [m]"

PROBLEMS = {
    "pendulum": Problem(
        pendulum.build, 10.0, 1e-3, ("bob",),
        "IFToMM simple pendulum, 1 kg, 1 m, released horizontal, ideal revolute",
        _pendulum_report,
        options={"length": Option(float, "pendulum length [m]", positive=True),
                 "mass": Option(float, "bob mass [kg]", positive=True),
                 "angle0": Option(float, "initial angle below the horizontal [rad]")}),
    "spherical_pendulum": Problem(
        spherical_pendulum.build, 5.0, 1e-3, ("rod",),
        "rod on an ideal spherical joint in conical motion", _spherical_report,
        options={"tilt": Option(float, "initial tilt from the downward vertical [rad]"),
                 "spin": Option(float, "initial spin about the vertical [rad/s]"),
                 "length": Option(float, "rod length [m]", positive=True)}),
    "free_top": Problem(
        free_top.build, 10.0, 1e-3, ("top",),
        "torque-free asymmetric body spinning near its intermediate axis", _free_top_report,
        options={"angular_velocity": Option(parse_vector, "initial angular velocity, body "
                                                          "frame [rad/s], e.g. 0.4,3,0.6")},
        plot_options={"angular": True}),
    "slider_crank": Problem(
        slider_crank.build, 5.0,
        lambda **kw: slider_crank.step_size(
            kw.get("spherical_clearance") or kw.get("revolute_clearance") or 1.0),
        ("crank", "rod", "slider"),
        "IFToMM spatial slider-crank (docs/CASES.md #5): ideal joints, or clearance in the "
        "ball joint B or the revolute joint A, as complementarity gaps or seed 001's penalty law",
        _slider_report,
        variants={
            "ideal": Variant("ideal joints"),
            "clearance_B": Variant("ball joint B with 0.1 mm clearance (gaps)",
                                   {"spherical_clearance": 1e-4}),
            "clearance_A": Variant("revolute joint A with 0.1 mm clearance (gaps)",
                                   {"revolute_clearance": 1e-4}),
            "penalty_B": Variant("ball joint B with 0.1 mm clearance, penalty law",
                                 {"spherical_clearance": 1e-4, "model": "penalty"},
                                 h=slider_crank.PENALTY_STEP),
            "penalty_A": Variant("revolute joint A with 0.1 mm clearance, penalty law",
                                 {"revolute_clearance": 1e-4, "model": "penalty"},
                                 h=slider_crank.PENALTY_STEP),
        },
        options={
            "spherical_clearance": Option(float, "clearance of B [m]", positive=True,
                                          variants=("clearance_B", "penalty_B")),
            "revolute_clearance": Option(float, "radial and axial clearance of A [m]",
                                         positive=True, variants=("clearance_A", "penalty_A")),
            "crank_speed": Option(float, "initial crank speed [rad/s]"),
        },
        draw=_slider_draw),
    "clearance_slider": Problem(
        clearance_slider.build, 1.0, (1e-3, 1e-2), ("tube",),
        "cylindrical clearance slider (docs/CASES.md #1): a tube tilts onto a rod and slides",
        _clearance_slider_report,
        variants={"clearance": Variant("cylindrical clearance joint, c = 0.1 mm"),
                  "ideal": Variant("ideal cylindrical joint", {"ideal": True})},
        options={"clearance": Option(float, _RADIAL, positive=True, variants=("clearance",)),
                 "radius": Option(float, "rod radius [m]", positive=True),
                 "mass": Option(float, "tube mass [kg]", positive=True)}),
    "prismatic_slider": Problem(
        prismatic_slider.build, 1.0, (1e-3, 1e-2), ("slider",),
        "triangular prismatic clearance slider (docs/CASES.md #2), 12 vertex gaps",
        _prismatic_slider_report,
        variants={"clearance": Variant("prismatic clearance joint, c = 0.3 mm"),
                  "ideal": Variant("ideal prismatic joint", {"ideal": True})},
        options={"clearance": Option(float, "clearance [m]", positive=True,
                                     variants=("clearance",)),
                 "mass": Option(float, "slider mass [kg]", positive=True)}),
    "clearance_pendulum": Problem(
        clearance_pendulum.build, 2.0, (1e-3, 2e-3), ("bar",),
        "revolute clearance pendulum (docs/CASES.md #3, #4): a bar on a pin with radial and "
        "axial clearance, released horizontal", _clearance_pendulum_report,
        variants={"clearance": Variant("revolute clearance joint, c = c_a = 0.1 mm, bore "
                                       "centred on the pin"),
                  "resting": Variant("the same, bore resting on the pin at the start",
                                     {"start_centred": False}),
                  "ideal": Variant("ideal revolute joint (#4's comparison)", {"ideal": True})},
        options={"clearance": Option(float, _RADIAL, positive=True,
                                     variants=("clearance", "resting")),
                 "axial_clearance": Option(float, "axial clearance [m]", positive=True,
                                           variants=("clearance", "resting")),
                 "friction": Option(float, "Coulomb coefficient of the clearance contacts",
                                    variants=("clearance", "resting")),
                 "radius": Option(float, "pin radius [m]", positive=True),
                 "cm_z": Option(float, "centre of mass out of plane [m]")}),
    "triple_pendulum": Problem(
        triple_pendulum.build, triple_pendulum.T_END, triple_pendulum.H,
        ("body1", "body2", "body3"),
        "triple pendulum with joint stops on a cylindrical and a revolute joint "
        "(docs/CASES.md #6)", _triple_report,
        variants={"ln": Variant("Lankarani-Nikravesh stops", {"law": "ln"}),
                  "kv": Variant("modified Kelvin-Voigt stops", {"law": "kv"})},
        options={"evaluation": Option(str, "where the stops are evaluated",
                                      choices=("explicit", "implicit"))}),
    "rom_pendulum": Problem(
        rom_pendulum.build, rom_pendulum.T_END, rom_pendulum.H, ("pendulum",),
        "spherical pendulum in a range-of-motion cone (docs/CASES.md #7)", _rom_report,
        variants={"rom": Variant("cone with damping j = 3.39 N m s"),
                  "rom_undamped": Variant("cone without damping", {"damping": 0.0}),
                  "free": Variant("no cone (spherical joint only)", {"rom": False})},
        options={"delta_sigma": Option(float, "elastic band of the cone [rad]", positive=True,
                                       variants=("rom", "rom_undamped"),
                                       default=rom_pendulum.REFERENCE["delta_sigma"]),
                 "max_moment": Option(float, "largest restricting moment [N m]", positive=True,
                                      variants=("rom", "rom_undamped"),
                                      default=rom_pendulum.REFERENCE["max_moment"]),
                 "damping": Option(float, "damping j [N m s]", variants=("rom",),
                                   default=rom_pendulum.REFERENCE["damping"])}),
    "flexible_base": Problem(
        flexible_base.build, 0.5, 1e-3, ("base",),
        "100 kg plate on four spring-damper supports (seed 003, flexibly supported base)",
        _flexible_base_report,
        variants={"drop": Variant("released at rest: sags onto its supports"),
                  "rocking": Variant("released rocking about X", {"angular_velocity": (0.5, 0, 0)})},
        options={"mass": Option(float, "plate mass [kg]", positive=True),
                 "stiffness": Option(parse_vector, "support stiffness along x,y,z [N/m]"),
                 "damping": Option(parse_vector, "support damping along x,y,z [N s/m]")},
        draw=_flexible_base_draw),
    "chain": Problem(
        chain.build, 1.0, 1e-3, ("link0",),
        "chain of links hanging from a pivot (the scaling case): ideal, clearance or "
        "bushing joints", _chain_report,
        variants={"ideal": Variant("ideal revolute joints"),
                  "clearance": Variant("revolute clearance joints, c = 0.1 mm",
                                       {"clearance": 1e-4}),
                  "bushing": Variant("stiff bushings, implicit", {"bushing": (1e5, 1e2)})},
        options={"n_links": Option(int, "number of links", positive=True),
                 "clearance": Option(float, _RADIAL, positive=True, variants=("clearance",))}),
    "four_bar_chain": Problem(
        four_bar_chain.build, four_bar_chain.T_END, 1e-3, ("crank0", "coupler0"),
        "IFToMM A02 N-four-bar (redundant constraints, singular positions)", _energy_report,
        options={"n": Option(int, "number of four-bar loops", positive=True)}),
    "bricard": Problem(
        bricard.build, 10.0, 1e-3, (), "IFToMM A04 Bricard's overconstrained mechanism",
        _energy_report,
        options={"redundant": Option(parse_bool, "keep the redundant constraint row")}),
}
PROBLEMS["stick_slip"] = Problem(
    stick_slip.build, stick_slip.T_END, 1e-3, ("block",),
    "LuGre stick-slip: a block pulled through a spring over a slide (Canudas de Wit et al. 1995)",
    _stick_slip_report,
    options={"pull": Option(float, "speed of the spring's far end [m/s]", positive=True)},
    draw=_stick_slip_draw)


def _programmed_path_report(module):
    def report(res, args):
        error = module.path_error(res).max()
        closure = manipulator.ledger_closure(res)[0]
        return (f"checked: the end effector on its programmed path (the constraint 'path'): "
                f"largest error {error:.2e} m: "
                + _verdict(error <= PATH_TOL, f"{PATH_TOL:g} m", f"{error - PATH_TOL:.2e} m")
                + f"; energy ledger closes to {closure:.1e} of its energy scale: "
                + _verdict(closure <= LEDGER_TOL, f"{LEDGER_TOL:g} (round-off)",
                           f"{closure - LEDGER_TOL:.1e}"))
    return report


_SEED3_VARIANTS = {
    "rigid": Variant("rigid base and links, ideal joints"),
    "flexible_base": Variant("base on spring-damper supports", {"flexible_base": True}),
    "flexible_link": Variant("one link as rigid finite elements", {"flexible_link": True}),
    "friction": Variant("LuGre friction in the joints", {"friction": True}),
    "all": Variant("flexible base and link, friction",
                   {"flexible_base": True, "flexible_link": True, "friction": True}),
}
_SEED3_OPTIONS = {
    "link_elements": Option(int, "rigid finite elements of the flexible link", positive=True,
                            variants=("flexible_link", "all")),
    "link_softening": Option(float, "divides the flexible link's E and G", positive=True,
                             variants=("flexible_link", "all")),
}
PROBLEMS["manipulator"] = Problem(
    manipulator.build, manipulator.T_END, 1e-3, ("link1", "link3", "link5"),
    "seed 003's 5-DOF manipulator, end effector on a programmed rectangle ABCD (data ours)",
    _programmed_path_report(manipulator), variants=_SEED3_VARIANTS, options=_SEED3_OPTIONS)
PROBLEMS["rpsup"] = Problem(
    rpsup.build, rpsup.T_END, 1e-3, ("link1", "link2", "link4"),
    "seed 003's RPSUP closed loop, end effector on a rectangle in a plane at 45 deg (data ours)",
    _programmed_path_report(rpsup), variants=_SEED3_VARIANTS, options=_SEED3_OPTIONS)


PROBLEMS["trough"] = Problem(
    trough.build, trough.T_END, trough.H, ("sphere",),
    "seed 004 section 5: a sphere in a trough, driven along a skewed second trough",
    trough.report)


def _rolling_disk_report(res, args):
    ref = rolling_disk.reference(res.t, args["tilt"], args["precession"], args["radius"],
                                 args["mass"])
    drift = np.abs(rolling_disk.tilt(res) - args["tilt"]).max() / args["tilt"]
    miss = np.linalg.norm(res.position("disk") - rolling_disk.centre(ref, args["radius"]),
                          axis=1).max()
    tol = CENTRE_SHARE * args["radius"]
    return (f"checked: against the disk's own Lagrange-d'Alembert equations in minimal "
            f"coordinates (DOP853, rtol 1e-12): the tilt drifts by {100 * drift:.3g} % of its "
            f"{np.degrees(args['tilt']):.4g} deg (steady precession keeps it): "
            + _verdict(drift <= TILT_DRIFT_SHARE, f"{TILT_DRIFT_SHARE:g} of it",
                       f"{drift:.2e} of it")
            + f"; the centre is {miss:.3e} m from the reference's at most: "
            + _verdict(miss <= tol, f"{tol:.1e} m ({CENTRE_SHARE:g} of the radius)",
                       f"{miss - tol:.2e} m"))


PROBLEMS["rolling_disk"] = Problem(
    rolling_disk.build, rolling_disk.T_END, 1e-3, ("disk",),
    "thin disk rolling without slip in steady precession (a programmed contact row and two "
    "velocity rows)", _rolling_disk_report,
    options={"tilt": Option(float, "the axis above the horizontal [rad]", positive=True),
             "precession": Option(float, "the heading's rate [rad/s]"),
             "radius": Option(float, "disk radius [m]", positive=True),
             "mass": Option(float, "disk mass [kg]", positive=True)})


def _two_loops_report(res, args):
    phi = args["crank_speed"] * res.t
    miss = max(np.abs(res.position(f"slider{k}")[:, 0]
                      - [two_loops.slider_x(p, k) for p in phi]).max() for k in (1, 2))
    made = two_loops.discretisation_energy(res)
    in_play = _in_play(res)
    return (f"checked: both sliders against the loops' closed-form kinematics at the driven "
            f"crank angle: largest difference {miss:.2e} m: "
            + _verdict(miss <= KINEMATIC_TOL, f"{KINEMATIC_TOL:g} m",
                       f"{miss - KINEMATIC_TOL:.2e} m")
            + "; the discretisation's energy (the ledger's residuals and the ideal joints' work) "
            f"{made[-1]:+.3e} J at the end, {np.abs(made).max():.3e} J at most, "
            f"{np.abs(made).max() / in_play if in_play > 0 else 0.0:.2e} of the {in_play:.4g} J "
            f"in play, over {two_loops.turns(res):.2f} turns (informative: the driver feeds "
            "energy in, so no verdict; it shrinks as h^2)")


PROBLEMS["two_loops"] = Problem(
    two_loops.build, 10.0, 1e-3, ("crank", "slider1", "slider2"),
    "two spatial slider-crank loops on one crank driven at constant speed", _two_loops_report,
    options={"crank_speed": Option(float, "the crank's prescribed speed [rad/s]")})
