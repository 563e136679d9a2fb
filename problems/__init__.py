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
        report=my_report,   # res -> str: what was checked, against what
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
# within this share of the energy in play a conservative run's energy reads "ok"
ENERGY_SHARE = 1e-2
# within this distance (m) the slider-crank's slider range reads "ok" against its limits
SLIDER_TOL = 1e-4


def _turning_points(x) -> int:
    """How many times ``x`` turns back (its increments change sign)."""
    step = np.sign(np.diff(x))
    step = step[step != 0]
    return int(np.count_nonzero(np.diff(step)))


def _verdict(ok, tolerance) -> str:
    return f"ok, within {tolerance}" if ok else f"OUTSIDE {tolerance}"


def _energy_report(res, args=None, what="conservative: energy is constant in the exact solution"):
    """The energy's drift and range against the energy in play: the largest kinetic energy or
    the potential energy's range, whichever is larger (a total that starts at zero says
    nothing of scale)."""
    e = res.energy
    in_play = max(np.abs(res.kinetic_energy).max(initial=0.0), np.ptp(res.potential_energy))
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
    return (f"checked: slider x range {x.min():.6f} .. {x.max():.6f} m against the "
            f"closed-form kinematic limits {lo:.6f} .. {hi:.6f} m (reached once per crank "
            f"turn by the ideal mechanism): {_verdict(off <= SLIDER_TOL, f'{SLIDER_TOL:g} m')}"
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
            f"{_verdict(off <= 1e-2, '0.01 rad')}; " + energy)


def _spherical_report(res, args):
    lz = spherical_pendulum.vertical_angular_momentum(res)
    return (f"checked: angular momentum about the vertical through the pivot {lz[0]:.6g} -> "
            f"{lz[-1]:.6g} kg m^2/s (conserved: gravity has no moment about it); "
            + _energy_report(res, args).removeprefix("checked: "))


def _free_top_report(res, args):
    L = free_top.angular_momentum_global(res)
    drift = np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0])
    return (f"checked: global angular momentum |L - L0|/|L0| <= {drift:.2e} (torque-free: "
            f"constant); " + _energy_report(res, args).removeprefix("checked: "))


def _radial_report(res, joint, c=None):
    """Smallest gap of a radial clearance joint, and its largest eccentricity c - gap."""
    gaps = res.gap(joint)
    text = f"checked: joint {joint!r} smallest gap {gaps.min():.3e} m (>= 0 without penetration)"
    if c is not None:
        text += f", largest eccentricity {c - gaps[:, :2].min():.4e} m within clearance {c:.4e} m"
    return text


def _clearance_pendulum_report(res, args):
    if not res.gap_rows:
        return _energy_report(res, args)
    dE, _ = clearance_pendulum.turning_point_energy(res)
    rising = np.max(np.diff(np.r_[0.0, dE])) if len(dE) else 0.0
    if not len(dE):
        return _radial_report(res, "pin", args["clearance"]) + "; no turning point reached yet"
    return (_radial_report(res, "pin", args["clearance"]) + "; energy at the swing's turning "
            f"points {', '.join(f'{x:+.3e}' for x in dE[:4])} J (largest rise {rising:+.1e} J: "
            "impacts only take energy out)")


def _slide_acceleration(res, body, force, mass):
    """Mean Z acceleration over the run's second half, against F_z / m."""
    t, vz = res.t, res.velocity(body)[:, 2]
    k = len(t) // 2
    a = (vz[-1] - vz[k]) / (t[-1] - t[k]) if t[-1] > t[k] else float("nan")
    return (f"Z acceleration over the second half {a:.5g} m/s^2 against F_z/m = "
            f"{force / mass:.5g} m/s^2 (closed form once the cross-section motion has stopped)")


def _clearance_slider_report(res, args):
    text = "checked: " + _slide_acceleration(res, "tube", args["force"][2], args["mass"])
    if res.gap_rows:
        A = res.rotation("tube")[-1]
        c, length = args["clearance"], args["length"]
        text += (f"; final tilt {np.degrees(np.arcsin(abs(A[1, 2]))):.4f} deg against "
                 f"asin(2c/L) = {np.degrees(np.arcsin(2 * c / length)):.4f} deg "
                 "(both ends touching)") if c else ""
        text += "; " + _radial_report(res, "bore", c).removeprefix("checked: ")
    return text


def _prismatic_slider_report(res, args):
    text = "checked: " + _slide_acceleration(res, "slider", args["force"][2], args["mass"])
    if res.gap_rows:
        engaged = int(np.sum(res.gap("cavity")[-1] < 1e-6))
        text += (f"; smallest gap {res.gap('cavity').min():.3e} m, {engaged} of 12 vertex "
                 "gaps closed at the end (5 with the default data)")
    return text


def _triple_report(res, args):
    translation, rotation = triple_pendulum.relative_motion(res)
    return (f"checked: slide in B {translation.min():+.4f} .. {translation.max():+.4f} m against "
            f"the stops at +-{triple_pendulum.TRANSLATION_LIMIT} m; turn in C "
            f"{np.degrees(rotation.min()):+.2f} .. {np.degrees(rotation.max()):+.2f} deg against "
            f"+-{np.degrees(triple_pendulum.ROTATION_LIMIT):.0f} deg (penalty stops: small "
            "excursions beyond the limits are the contact's deformation)")


def _rom_report(res, args):
    if "cone" not in res.force_elements:
        return _energy_report(res, args)
    beyond = np.degrees(rom_pendulum.beyond_cone(res).max())
    sigma = np.degrees(args.get("delta_sigma", rom_pendulum.REFERENCE["delta_sigma"]))
    return (f"checked: largest latitude beyond the cone {beyond:.2f} deg, against the elastic "
            f"band delta_sigma = {sigma:.2f} deg (the cone's moment is at its maximum there)")


def _flexible_base_report(res, args):
    m = args["mass"]
    kz = args["stiffness"][2]
    sag = m * 9.81 / (4 * kz)
    z = res.position("base")[:, 2]
    return (f"checked: base z {z.min():.4e} .. {z.max():.4e} m, mean {z.mean():.4e} m, against "
            f"the static sag -m g/(4 k_z) = {-sag:.4e} m (released at rest it oscillates "
            f"between 0 and {-2 * sag:.4e} m with period {2 * np.pi / flexible_base.frequencies(m)['z']:.4g} s "
            "without damping)")


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
            res, args, "energy may only decrease at impacts").removeprefix("checked: ")
    return _energy_report(res, args)


def _stick_slip_report(res, args):
    x, v, _, _ = stick_slip.reference(res.t, args["pull"])
    mine = res.velocity("block")[:, 0]
    return (f"checked: block position against scipy Radau on the same LuGre ODE (rtol 1e-10): "
            f"largest difference {np.abs(res.position('block')[:, 0] - x).max():.3e} m "
            f"(first order in h); time stuck {stick_slip.stick_fraction(mine):.3f} against "
            f"{stick_slip.stick_fraction(v):.3f}")


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
        return (f"checked: the end effector on its programmed path (the constraint 'path'): "
                f"largest error {module.path_error(res).max():.2e} m; energy ledger closes to "
                f"{manipulator.ledger_closure(res)[0]:.1e} of its energy scale")
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
    drift = np.abs(rolling_disk.tilt(res) - args["tilt"]).max()
    miss = np.linalg.norm(res.position("disk") - rolling_disk.centre(ref, args["radius"]),
                          axis=1).max()
    return (f"checked: against the disk's own Lagrange-d'Alembert equations in minimal "
            f"coordinates (DOP853, rtol 1e-12): the tilt drifts by {100 * drift / args['tilt']:.3g} % "
            f"of its {np.degrees(args['tilt']):.4g} deg (steady precession keeps it); the centre "
            f"is {miss:.3e} m from the reference's at most")


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
    return (f"checked: both sliders against the loops' closed-form kinematics at the driven "
            f"crank angle: largest difference {miss:.2e} m; the discretisation's energy (the "
            f"ledger's residuals and the ideal joints' work) {made[-1]:+.3e} J at the end, "
            f"{np.abs(made).max():.3e} J at most, over {two_loops.turns(res):.2f} turns")


PROBLEMS["two_loops"] = Problem(
    two_loops.build, 10.0, 1e-3, ("crank", "slider1", "slider2"),
    "two spatial slider-crank loops on one crank driven at constant speed", _two_loops_report,
    options={"crank_speed": Option(float, "the crank's prescribed speed [rad/s]")})
