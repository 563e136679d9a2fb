"""Command line: run a named case study, print what was checked, write a plot.

examples:
  python -m nlpdyn --list
  python -m nlpdyn slider_crank --t-end 5 --h 1e-3 --plot slider_crank.png
  python -m nlpdyn slider_crank --variant clearance_A --set revolute_clearance=1e-3
  python -m nlpdyn clearance_pendulum --clearance 2e-4 --h-min 5e-4 --h 1e-3
  python -m nlpdyn rom_pendulum --variant rom_undamped --t-end 2 --no-plot
  python -m nlpdyn pendulum --h 1e-3 --step-control nlp --h-min 1e-4 --save run.npz
  python -m nlpdyn slider_crank --h-min 1e-6 --h 1e-2 --rtol 1e-4
  python -m nlpdyn robot.urdf --t-end 2 --h 1e-3 --set elbow=0.3
  python -m nlpdyn robot.urdf --clearance elbow=1e-4,radius=0.01,length=0.02 --damping
  python -m nlpdyn robot.urdf --limits hertz,stiffness=1e7 --friction coulomb

A path ending in .urdf runs that model (nd.from_urdf, fixed base, gravity -Z); its --set
KEY=VALUE give initial joint coordinates (rad or m), --t-end defaults to 1 s, --h to 1e-3 s,
and these loosen its joints (a number list is written a:b:c):
  --clearance JOINT=C,radius=R,length=L[,axial_clearance=A,friction=MU]
  --limits LAW,stiffness=K[,restitution=E]   the file's limits as stops, every joint
           (or JOINT=LAW,...; LAW: hertz, lankarani-nikravesh, kelvin-voigt)
  --damping [JOINT[=C]]        the file's <dynamics damping> (every joint, or JOINT's)
  --friction coulomb           the file's <dynamics friction>, Coulomb (every joint), or
             JOINT=coulomb, JOINT=lugre,sigma0=S[,sigma1=..,static_friction=..]
  --bushing JOINT,stiffness=K,rotational_stiffness=KR[,damping=C,rotational_damping=CR]

A clearance joint's journal orbit is written beside the plot (NAME_orbit.png).
"""
from __future__ import annotations

import argparse
import difflib
import importlib.util
import math
import numbers
import os
import sys
import time
import warnings
from pathlib import Path


def load_problems():
    """The case studies' registry module: the ``problems/`` folder beside this package (a
    source checkout or an editable install), else the installed ``nlpdyn_problems``."""
    folder = Path(__file__).resolve().parent.parent / "problems"
    if (folder / "__init__.py").is_file():
        for name in ("problems", "nlpdyn_problems"):
            module = sys.modules.get(name)
            if module is not None and Path(module.__file__).resolve().parent == folder:
                return module
        spec = importlib.util.spec_from_file_location(
            "nlpdyn_problems", folder / "__init__.py", submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules["nlpdyn_problems"] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules["nlpdyn_problems"]
            raise
        return module
    import nlpdyn_problems
    return nlpdyn_problems


def process_age() -> float | None:
    """Seconds since this process started (Linux: from /proc; None elsewhere), so the run's
    wall time is stated from outside, interpreter start-up and imports included."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
        return time.time() - (boot + start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _positive(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _assignment(text):
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _whole(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _did_you_mean(word, choices) -> str:
    """" (did you mean 'x'?)" for the choice nearest a misspelt ``word``, else ""."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _version() -> str:
    import importlib.metadata
    try:
        return importlib.metadata.version("nlpdyn")
    except importlib.metadata.PackageNotFoundError:     # run from a checkout, not installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: argparse's version action, the version looked up only when asked (the
    package metadata takes 0.03 s)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"nlpdyn {_version()}")
        parser.exit()


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nlpdyn", description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problem", nargs="?",
                        help="case study name (see --list), or a .urdf file")
    parser.add_argument("--list", action="store_true",
                        help="describe every case study, its variants and options, and exit")
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--variant", help="model variant (default: the problem's first)")
    parser.add_argument("--set", action="append", default=[], type=_assignment,
                        metavar="KEY=VALUE", help="a model option (see --list); repeatable")
    parser.add_argument("--clearance", action="append",
                        help="shorthand for --set clearance=C [m] where the variant has it; "
                             "a URDF model: JOINT=C,radius=R,length=L (repeatable)")
    parser.add_argument("--limits", action="append", metavar="[JOINT=]LAW,key=value",
                        help="a URDF model: its joint limits as stops with this contact law")
    parser.add_argument("--damping", action="append", nargs="?", const="",
                        metavar="JOINT[=C]", help="a URDF model: its joints' damping")
    parser.add_argument("--friction", action="append", metavar="[JOINT=]MODEL",
                        help="a URDF model: its joints' friction, coulomb or lugre")
    parser.add_argument("--bushing", action="append", metavar="JOINT,key=value",
                        help="a URDF model: a bushing in place of JOINT")
    parser.add_argument("--t-end", type=_positive, help="final time [s] (default: the problem's)")
    parser.add_argument("--h", type=_positive,
                        help="step size, or h_max with --h-min [s] (default: the problem's)")
    parser.add_argument("--h-min", type=_positive, help="smallest step: makes h variable [s]")
    parser.add_argument("--step-control", choices=("fixed", "nlp", "adaptive"),
                        help="with bounds on h: adaptive (default) or nlp (the seed's scheme)")
    parser.add_argument("--scheme", choices=("euler", "midpoint"),
                        help="time discretisation (default: midpoint, second order, without "
                             "numerical dissipation; euler, the seed's, with --step-control "
                             "nlp or --form explicit)")
    parser.add_argument("--rtol", type=_positive,
                        help="error-controlled h within (--h-min, --h): the error the run may "
                             "gather, relative to the motion's scale (scheme midpoint)")
    parser.add_argument("--form", choices=("gauss", "explicit"),
                        help="the step program's form (default gauss)")
    jit = parser.add_mutually_exclusive_group()
    jit.add_argument("--jit", action="store_const", const=True, default=None,
                     help="compile the step's functions with the system's C compiler before "
                          "the first step (cached on disk; the first build takes seconds; "
                          "default: only on a run long enough to win the build back, aside)")
    jit.add_argument("--no-jit", dest="jit", action="store_const", const=False,
                     help="keep the step's functions interpreted")
    plot = parser.add_mutually_exclusive_group()
    plot.add_argument("--plot", help="overview plot file (.png, .pdf, .svg, ...; default "
                      "NAME.png; .png is appended to a name without suffix)")
    plot.add_argument("--no-plot", action="store_true", help="write no plot")
    parser.add_argument("--save", help="save the result to this .npz file (.npz is appended "
                        "unless the name ends with it)")
    parser.add_argument("--output-every", type=_whole, metavar="N",
                        help="keep every N-th step (and the last) in the result; the energy "
                             "ledger and the run's counters still cover every step")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def describe(problems) -> str:
    """Two lines per case study: what it is; its variants (default first) and options."""
    lines = []
    for name, p in problems.PROBLEMS.items():
        lines.append(f"{name:<20} {p.description}")
        variants = ", ".join(p.variants)
        options = ", ".join(p.options) or "none"
        lines.append(f"{'':<20}   variants: {variants}; options: {options}")
    return "\n".join(lines)


def _variant_help(problem, variant, given=None) -> str:
    """The variant's description and options, with the values ``given`` (option -> value)
    beside the defaults the description speaks of."""
    given, settings = given or {}, problem.variants[variant].settings
    opts = []
    for key in problem.options_of(variant):
        now = f"; given {_shown(given[key])}" if key in given else ""
        default = settings[key] if key in settings else problem.default(key)
        opts.append(f"{key} ({problem.options[key].help}; default {_shown(default)}{now})")
    description = problem.variants[variant].description
    if given:
        description += (" (at its defaults; given here: "
                        + ", ".join(f"{k}={_shown(v)}" for k, v in given.items()) + ")")
    return f"{variant}: {description}; options: " + (", ".join(opts) or "none")


def _shown(value) -> str:
    return f"{float(value):g}" if isinstance(value, float) else repr(value)


def _clearance_option(problem, variant):
    """The option ``--clearance`` sets: "clearance", else the variant's one radial
    "..._clearance" option (None when there is none or several)."""
    names = problem.options_of(variant)
    if "clearance" in names:
        return "clearance"
    radial = [k for k in names if k.endswith("_clearance") and k != "axial_clearance"]
    return radial[0] if len(radial) == 1 else None


def _kind_error(value, default) -> str | None:
    """Why ``value`` cannot stand for a builder argument whose default is ``default`` (a
    bool, int, real number, str or vector); None when it can or the default says nothing."""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, numbers.Integral):
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    elif isinstance(default, numbers.Real):
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, (tuple, list)):
        if not isinstance(value, (tuple, list)):
            ok = False
        elif len(value) != len(default):
            return f"expected {len(default)} values like the default {default!r}"
        else:
            ok = True
    else:
        return None
    return None if ok else (f"the builder expects a {type(default).__name__} (default "
                            f"{default!r}), got {value!r}")


def _option_values(parser, problem, name, variant, assignments) -> dict:
    """Parse ``(key, text, argument)`` assignments (``argument``: the option that gave it,
    ``--set`` or ``--clearance``); every problem reported in one error."""
    allowed, values, given, errors = problem.options_of(variant), {}, {}, []
    for key, text, argument in assignments:
        if key in given:
            errors.append(f"argument {argument}: option {key!r} is already set by {given[key]}")
            continue
        given[key] = argument
        if key not in problem.options:
            errors.append(f"argument {argument}: {name} has no option {key!r}"
                          f"{_did_you_mean(key, problem.options)} (options: "
                          f"{', '.join(problem.options) or 'none'})")
            continue
        if key not in allowed:
            errors.append(f"argument {argument}: option {key!r} does not apply to variant "
                          f"{variant!r} (it applies to {', '.join(problem.options[key].variants)})")
            continue
        option = problem.options[key]
        try:
            value = option.parse(text)
        except ValueError as exc:
            errors.append(f"argument {argument}: option {key}={text!r}: {exc}")
            continue
        if isinstance(value, float) and not math.isfinite(value):
            reason = "must be finite"
        elif option.choices is not None and value not in option.choices:
            reason = f"choose from {', '.join(option.choices)}"
        elif option.positive and not value > 0:
            reason = "must be > 0"
        else:
            reason = _kind_error(value, problem.default(key))
        if reason:
            errors.append(f"argument {argument}: option {key}={text!r}: {reason}")
        else:
            values[key] = value
    if errors:
        parser.error("; ".join(errors))
    return values


def _output_path(parser, argument, text, rename, suffixes=None) -> Path:
    """The file ``argument`` writes, ``rename(Path(text))``, checked before anything runs:
    neither is a folder, its folder exists and is writable, and (``suffixes``) its suffix
    is one of them."""
    path = Path(text)
    if path.is_dir() or rename(path).is_dir():
        parser.error(f"argument {argument}: {text!r} is a folder")
    path = rename(path)
    if suffixes is not None and path.suffix.lower().lstrip(".") not in suffixes:
        parser.error(f"argument {argument}: cannot write {str(path)!r}: {path.suffix!r} is "
                     f"not a format matplotlib writes ({', '.join(sorted(suffixes))})")
    folder = path.parent
    if not folder.is_dir():
        parser.error(f"argument {argument}: cannot write {str(path)!r}: no folder {str(folder)!r}")
    if not os.access(folder, os.W_OK | os.X_OK):
        parser.error(f"argument {argument}: cannot write {str(path)!r}: the folder "
                     f"{str(folder)!r} is not writable")
    return path


def _png_unless_suffixed(path: Path) -> Path:
    """``path`` with ``.png`` appended when it has no suffix (matplotlib's rule), so the name
    printed is the file written."""
    return path if path.suffix else path.with_name(path.name.rstrip(".") + ".png")


def _one_line(exc: BaseException) -> str:
    """``exc`` as one line: its type and its message's words."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def main(argv=None) -> int:
    started = time.perf_counter()
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.problem is None and args.damping and args.damping[-1].lower().endswith(".urdf"):
        # a bare --damping took the file that follows it
        args.problem, args.damping[-1] = args.damping[-1], ""
    problems = load_problems()
    registry = problems.PROBLEMS

    if args.list:
        print(describe(problems))
        return 0
    if args.problem is None:
        parser.error("the problem name is required (python -m nlpdyn --list shows them)")
    if args.problem.lower().endswith(".urdf"):
        return _run_urdf(parser, args, started)
    if args.problem not in registry:
        parser.error(f"argument problem: unknown problem {args.problem!r}"
                     f"{_did_you_mean(args.problem, registry)}; choose from "
                     f"{', '.join(registry)}")
    problem = registry[args.problem]
    variant = args.variant or next(iter(problem.variants))
    if variant not in problem.variants:
        parser.error(f"argument --variant: {args.problem} has no variant {variant!r}"
                     f"{_did_you_mean(variant, problem.variants)}; "
                     f"choose from {', '.join(problem.variants)}")
    assignments = [(key, text, "--set") for key, text in args.set]
    for flag in ("limits", "damping", "friction", "bushing"):
        if getattr(args, flag) is not None:
            parser.error(f"argument --{flag}: only for a .urdf model")
    if args.clearance is not None:
        if len(args.clearance) > 1:
            parser.error("argument --clearance: given more than once")
        try:
            args.clearance = _positive(args.clearance[0])
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --clearance: {exc}")
        key = _clearance_option(problem, variant)
        if key is None:
            parser.error(f"argument --clearance: variant {variant!r} of {args.problem} has no "
                         f"clearance option ({_variant_help(problem, variant)})")
        assignments.append((key, repr(args.clearance), "--clearance"))
    values = _option_values(parser, problem, args.problem, variant, assignments)
    keywords = problem.keywords(variant, values)
    t_end, h = problem.run_settings(variant, keywords)
    t_end = args.t_end or t_end
    if args.h is not None:
        h = args.h
    elif args.h_min is not None:
        h = h[1] if isinstance(h, tuple) else h
    if args.h_min is not None:
        if args.h_min > h:
            parser.error(f"argument --h-min: {args.h_min:g} exceeds the largest step {h:g}")
        h = (args.h_min, h)
    if args.step_control == "fixed" and isinstance(h, tuple):
        if args.h_min is not None:
            parser.error("argument --step-control: fixed takes one step size (give --h "
                         "without --h-min)")
        h = h[1]                                   # the problem's bounds: run at h_max
    options = _step_options(parser, args, h)

    import nlpdyn as nd

    save, plot = _output_files(parser, args, args.problem)

    print(f"{args.problem} [{variant}]: {problem.description}")
    print(f"  {_variant_help(problem, variant, values)}")
    if keywords:
        print(f"  model: {', '.join(f'{k}={v!r}' for k, v in keywords.items())}")
    print(f"  run: t_end = {t_end:g} s, h = {h}")
    t0 = time.perf_counter()
    try:
        system = problem.build(**keywords)
    except ValueError as exc:
        if not values:
            raise
        parser.error(f"argument --set: the builder refused "
                     f"{', '.join(f'{k}={v!r}' for k, v in values.items())}: {_one_line(exc)}")
    t1 = time.perf_counter()
    missing = problem.missing_bodies(system) if plot is not None else []
    if missing:
        # a registry error, caught before the run rather than after it
        print(f"{parser.prog}: error: the plot of {args.problem} [{variant}] shows bodies "
              f"{', '.join(missing)}, which the model does not have (bodies: "
              f"{', '.join(b.name for b in system.bodies)}); --no-plot runs without it",
              file=sys.stderr)
        return 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = nd.simulate(system, t_end=t_end, h=h, progress=False if args.quiet else None,
                              **options)
        except nd.ModelError as exc:        # the settings refused for this model: no run
            parser.exit(2, f"{parser.prog}: error: {args.problem} [{variant}]: {exc}\n")
    said = set(res.info.get("warnings", []))      # the summary prints these once
    for w in caught:
        if str(w.message) not in said:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    t2 = time.perf_counter()
    print(res.summary())
    age = process_age()
    print(f"wall time (measured around the calls): build {t1 - t0:.3g} s, simulate "
          f"{t2 - t1:.3g} s; {t2 - started:.3g} s since main() started"
          + (f", {age:.3g} s since the process started (imports included)" if age else ""))
    report = (None if problem.report is None
              else lambda: print(problem.report(res, problem.arguments(keywords))))
    return _save_report_plot(
        parser, res, save, plot,
        lambda: _write_plots(res, system, problem, plot, args.problem, variant, keywords),
        report)


def _step_options(parser, args, h) -> dict:
    """simulate()'s step settings from --step-control, --form, --scheme, --rtol, --jit and
    --output-every, checked against the step size ``h`` (a number, or bounds (h_min,
    h_max))."""
    if args.rtol is not None:
        if not args.rtol < 1:
            parser.error(f"argument --rtol: must be below 1, got {args.rtol:g}")
        if not isinstance(h, tuple):
            parser.error("argument --rtol: needs bounds on h (give --h-min)")
        if args.scheme == "euler" or args.step_control is not None:
            parser.error("argument --rtol: chooses h itself with scheme midpoint (give neither "
                         "--scheme euler nor --step-control)")
    if args.step_control in ("nlp", "adaptive") and not isinstance(h, tuple):
        parser.error(f"argument --step-control: {args.step_control} needs bounds on h "
                     "(give --h-min)")
    return {k: v for k, v in (("step_control", args.step_control), ("form", args.form),
                              ("scheme", args.scheme), ("rtol", args.rtol),
                              ("jit", args.jit), ("output_every", args.output_every))
            if v is not None}


def _output_files(parser, args, name):
    """The --save and --plot files (None where not asked), checked now, not after a long
    run; the plot defaults to NAME.png."""
    from .result import _npz_path
    save = _output_path(parser, "--save", args.save, _npz_path) if args.save else None
    plot = None
    if not args.no_plot:
        from matplotlib.figure import Figure
        plot = _output_path(parser, "--plot", args.plot or f"{name}.png",
                            _png_unless_suffixed, Figure().canvas.get_supported_filetypes())
    return save, plot


def _save_report_plot(parser, res, save, plot, write_plot, report=None) -> int:
    """Save the result, print the report, write the plot, in that order: a report or plot
    that fails does not lose the result. Returns the exit code (1: the run or an output
    failed)."""
    failures = []
    if save is not None:
        try:
            print(f"saved {res.save(save)}")
        except Exception as exc:
            failures.append(f"could not save the result to {str(save)!r}: {_one_line(exc)}")
    if report is not None:
        report()
    if plot is not None:
        try:
            write_plot()
        except Exception as exc:
            failures.append(f"could not write the plot {str(plot)!r}: {_one_line(exc)}")
    for failure in failures:
        print(f"{parser.prog}: error: {failure}", file=sys.stderr)
    return 0 if res.success and not failures else 1


def _run_urdf(parser, args, started) -> int:
    """Run the model of a URDF file: joint coordinates from --set, the case-study options
    that a file has no use for refused."""
    if args.variant is not None:
        parser.error("argument --variant: a URDF model has no variant")
    configuration = {}
    for key, text in args.set:
        try:
            configuration[key] = float(text)
        except ValueError:
            parser.error(f"argument --set: {key}={text}: a joint coordinate must be a number")
    t_end, h = args.t_end or 1.0, args.h or 1e-3
    if args.h_min is not None:
        if args.h_min > h:
            parser.error(f"argument --h-min: {args.h_min:g} exceeds the largest step {h:g}")
        h = (args.h_min, h)
    options = _step_options(parser, args, h)

    import nlpdyn as nd

    from .urdf_command import urdf_keywords

    keywords, problems = urdf_keywords(args, nd)
    if problems:
        parser.error("; ".join(problems))
    save, plot = _output_files(parser, args, Path(args.problem).stem)
    try:
        system = nd.from_urdf(args.problem, configuration=configuration, **keywords)
    except nd.ModelError as exc:
        parser.exit(2, f"{parser.prog}: error: {args.problem}: {exc}\n")
    print(f"{args.problem}: {len(system.bodies)} bodies, {len(system.constraints)} joints")
    if keywords:
        print(f"  loosened: {', '.join(f'{k}={v!r}' for k, v in keywords.items())}")
    print(f"  run: t_end = {t_end:g} s, h = {h}")
    try:
        res = nd.simulate(system, t_end=t_end, h=h, progress=False if args.quiet else None,
                          **options)
    except nd.ModelError as exc:
        parser.exit(2, f"{parser.prog}: error: {args.problem}: {exc}\n")
    print(res.summary())
    print(f"wall time: {time.perf_counter() - started:.3g} s since main() started")

    def write_plot():
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from .plotting import orbit_joints

        fig = res.plot(title=f"{args.problem}")
        try:
            fig.savefig(plot, dpi=110)
        finally:
            plt.close(fig)
        print(f"wrote {plot}")
        joints = orbit_joints(system)
        if joints:
            _write_orbit(res, joints, plot, f"{args.problem}: journal orbits")

    return _save_report_plot(parser, res, save, plot, write_plot)


def _write_plots(res, system, problem, path, name, variant, keywords):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plotting import orbit_joints

    title = f"{name} [{variant}]: {problem.description}"
    draw = None
    if problem.draw is not None:
        arguments = problem.arguments(keywords)

        def draw(res_, panels):
            problem.draw(res_, panels, arguments)
    fig = res.plot(bodies=list(problem.bodies) or None, title=title, extra=draw,
                   **problem.plot_options)
    try:
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    print(f"wrote {path}")
    joints = orbit_joints(system)
    if joints:
        _write_orbit(res, joints, path, f"{name} [{variant}]: journal orbits")


def _write_orbit(res, joints, path, title):
    """The journal orbits of ``joints`` beside the plot ``path`` (NAME_orbit.png)."""
    import matplotlib.pyplot as plt
    orbit = path.with_name(f"{path.stem}_orbit{path.suffix}")
    fig = res.plot_orbit(joints, title=title)
    try:
        fig.savefig(orbit, dpi=110)
    finally:
        plt.close(fig)
    print(f"wrote {orbit}")


if __name__ == "__main__":
    sys.exit(main())
