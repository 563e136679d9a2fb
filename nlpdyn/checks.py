"""Checks of user input shared by bodies and elements.

Constructors convert numbers defensively (:func:`as_number`, :func:`as_vector`,
:func:`as_array`): what is not numbers is kept as given, so that ``problems()`` can report it
with the element's name instead of a bare ``float()`` or numpy error. User functions (loads,
motions, programmed constraints) are called through :func:`call_user_function`, which names
the element and the function when they fail or return the wrong size.
"""
from __future__ import annotations

import dataclasses
import difflib
import inspect
import os
import re
import sys
import warnings

import casadi as ca
import numpy as np


class ModelError(ValueError):
    """Invalid model data; the message lists every problem found, each naming its culprit.

    Parameters
    ----------
    problems : list of str
        The problems (kept as the attribute ``problems``).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> try:
    ...     nd.System().compile()
    ... except nd.ModelError as err:
    ...     print(err.problems)
    ['the system has no bodies']
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("invalid model:\n  - " + "\n  - ".join(self.problems))


# ------------------------------------------------------------------ conversion
def _numeric_array(value):
    """value as a float array, or None when it is not numbers (None, strings, booleans,
    ragged or mixed lists)."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "iuf":
        return None
    return arr.astype(float)


def as_number(value):
    """``value`` as a float when it is one real number (finite or not), else unchanged."""
    arr = _numeric_array(value)
    return float(arr) if arr is not None and arr.ndim == 0 else value


def as_vector(value):
    """``value`` as a flat float array when it is numbers, else unchanged."""
    arr = _numeric_array(value)
    return value if arr is None else arr.reshape(-1)


def as_array(value):
    """``value`` as a float array (shape kept) when it is numbers, else unchanged."""
    arr = _numeric_array(value)
    return value if arr is None else arr


# A unit vector (axis, Euler parameters) whose norm is within UNIT_NORMALISE of 1 (relative) is
# normalised when given to a constructor, with a warning when the error is above round-off
# (UNIT_ROUNDOFF); beyond UNIT_NORMALISE it is kept as given and refused by the checks.
UNIT_NORMALISE = 1e-3
UNIT_ROUNDOFF = 1e-12


def as_unit_vector(value, owner, label):
    """``value`` as a flat float array scaled to unit norm when its norm is within
    ``UNIT_NORMALISE`` of 1 (a ``UserWarning`` naming ``owner`` and ``label`` when the error
    is above round-off), else as :func:`as_vector` leaves it (``problems()`` refuses it).

    Examples
    --------
    >>> as_unit_vector((0, 0, 1), "revolute joint 'hinge'", "axis")
    array([0., 0., 1.])
    """
    arr = as_vector(value)
    if not (isinstance(arr, np.ndarray) and arr.size and np.all(np.isfinite(arr))):
        return arr
    norm = float(np.linalg.norm(arr))
    error = abs(norm - 1.0)
    if error > UNIT_NORMALISE:
        return arr
    if error > UNIT_ROUNDOFF:
        warnings.warn(f"{owner}: {label} normalised (|{label}| = {norm:.12g}, off by {error:.2g})",
                      UserWarning, stacklevel=user_stacklevel())
    return arr / norm


def user_stacklevel() -> int:
    """``stacklevel`` for a warning raised by the function calling this one, so that it points
    at the first caller outside nlpdyn (a dataclass-made ``__init__`` counts as nlpdyn's)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(2), 2
    while frame is not None and (frame.f_code.co_filename.startswith(package) or (
            frame.f_code.co_filename == "<string>" and frame.f_code.co_name == "__init__")):
        frame, level = frame.f_back, level + 1
    return level


def is_number(value) -> bool:
    """True for a finite real number (booleans are not numbers here)."""
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_)) and bool(np.isfinite(value))


def is_choice(value, choices) -> bool:
    """True when ``value`` is one of ``choices`` (strings, and None if it is one of them).
    Only strings are compared: ``array in choices`` raises."""
    return (value is None and None in choices) or (isinstance(value, str) and value in choices)


def is_vector(value, size=3) -> bool:
    """True for a float array of shape (size,) with finite entries."""
    return isinstance(value, np.ndarray) and value.shape == (size,) and bool(np.all(np.isfinite(value)))


def show(value) -> str:
    """How a given value appears in messages."""
    if isinstance(value, np.ndarray):
        return str(value.tolist())
    if isinstance(value, float):
        return str(value)
    return repr(value)


# ------------------------------------------------------------------ messages
def number_problems(owner, name, value, ok=None, expected="a finite number", note=""):
    """[] when ``value`` is a finite float with ``ok(value)``, else one message naming
    ``owner`` and ``name``."""
    if is_number(value) and (ok is None or ok(value)):
        return []
    return [f"{owner}: {name} must be {expected}, got {show(value)}{note}"]


def vector_problems(owner, name, value, size=3) -> list[str]:
    """[] when ``value`` is ``size`` finite numbers, else one message."""
    if is_vector(value, size):
        return []
    if is_vector(as_vector(value), size):       # valid numbers assigned after construction
        return [f"{owner}: {name} was set to {value!r} after construction; assign a numpy "
                "array (constructors convert their arguments, assignments are kept as given)"]
    return [f"{owner}: {name} must be {size} finite numbers, got {show(value)}"]


def name_problems(owner, name) -> list[str]:
    if isinstance(name, str) and name.strip():
        return []
    return [f"{owner}: name must be a non-empty string, got {name!r}"]


def signature_problems(owner, name, fun, arguments) -> list[str]:
    """[] when ``fun`` is callable with ``arguments`` (a list of names) positionally."""
    if not callable(fun):
        return [f"{owner}: {name} must be callable, got {show(fun)}"]
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):       # builtins without a signature: let the call decide
        return []
    try:
        signature.bind(*arguments)
    except TypeError:
        return [f"{owner}: {name} must take ({', '.join(arguments)}), got a function "
                f"{getattr(fun, '__name__', type(fun).__name__)}{signature}"]
    return []


# ------------------------------------------------------------------ user functions
_CASADI_LOCATION = re.compile(r"^.*?\.(?:cpp|hpp):\d+:\s*")


def failure_reason(err: Exception) -> str:
    """One line naming the exception, with a hint for the usual CasADi mistakes."""
    lines = [line for line in str(err).splitlines() if line.strip()]
    text = _CASADI_LOCATION.sub("", lines[0]) if lines else ""
    if len(lines) > 1 and text.startswith("Assertion"):
        text += " " + lines[1].strip()
    reason = f"{type(err).__name__}: {text}" if text else type(err).__name__
    if "truth value" in text:
        reason += (" (a Python if/and/or/min/max on a CasADi symbol: use ca.if_else, "
                   "ca.logic_and, ca.fmin, ca.fmax)")
    return reason


def _shape(value) -> tuple:
    """numpy-like shape of what a user function returned (a CasADi column counts as (n,))."""
    if isinstance(value, (list, tuple)):
        return (len(value),)
    shape = tuple(getattr(value, "shape", ()))
    return shape[:1] if len(shape) == 2 and shape[1] == 1 else shape


def call_user_function(owner, name, fun, args, size=None):
    """``fun(*args)`` as a CasADi SX column.

    Raises ModelError naming ``owner`` and ``name`` when the call fails, returns something
    that is not numbers or CasADi values, has ``size`` != its number of entries, or holds a
    constant nan/inf (what ``math.exp`` and friends make of a CasADi symbol).
    """
    try:
        out = fun(*args)
    except Exception as err:
        raise ModelError([f"{owner}: {name} failed: {failure_reason(err)}"]) from err
    try:
        column = ca.vec(ca.SX(ca.vertcat(*out) if isinstance(out, (list, tuple)) else out))
    except Exception as err:
        raise ModelError([f"{owner}: {name} returned {show(out)}, expected CasADi "
                          "expressions or numbers"]) from err
    if size is not None and column.numel() != size:
        raise ModelError([f"{owner}: {name} returned shape {_shape(out)}, expected ({size},)"])
    for i in range(column.numel()):
        if column[i].is_constant() and not np.isfinite(float(column[i])):
            raise ModelError([f"{owner}: {name} returned {float(column[i])} in entry {i} "
                              "(a math or numpy function applied to a CasADi symbol gives "
                              "nan: use ca.exp, ca.sqrt, ...)"])
    return column


# ------------------------------------------------------------------ physical ranges
# Masses and principal moments must lie in [SMALLEST_MASS, LARGEST_MASS], where their squares
# and their inverses' squares are normal floats (1e-320 kg is subnormal: 1/m overflows).
SMALLEST_MASS = float(np.sqrt(np.finfo(float).tiny))        # 1.5e-154
LARGEST_MASS = 1.0 / SMALLEST_MASS                          # 6.7e153


def mass_range_problems(owner, name, value, unit) -> list[str]:
    """[] when ``value`` (a positive finite number) is within [SMALLEST_MASS, LARGEST_MASS]."""
    if SMALLEST_MASS <= value <= LARGEST_MASS:
        return []
    return [f"{owner}: {name} must be within [{SMALLEST_MASS:.3g}, {LARGEST_MASS:.3g}] {unit} "
            f"(where squares of masses and of their inverses are normal floats), "
            f"got {show(value)}"]


# ------------------------------------------------------------------ run arguments
# A step below TIME_RESOLUTION * max(1, |t|) does not move t (the stepper's round-off), and a
# run of more than MAX_STEPS steps would take days (28 h at 0.1 ms a step): both are refused.
TIME_RESOLUTION = 1e-12
MAX_STEPS = 1e9
# arguments of Stepper and simulate besides the settings' fields (offered for a misspelt keyword)
STEPPER_ARGUMENTS = ("system", "h", "settings", "t0")
SIMULATE_ARGUMENTS = (*STEPPER_ARGUMENTS, "t_end", "progress", "output_every", "t_eval")


def real_number(value):
    """``value`` as a float when it is one real number (a 0-d numpy array counts; booleans,
    strings and complex numbers do not), else None. Not checked for being finite."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        return None
    try:
        return float(value)
    except OverflowError:           # an int beyond the floats
        return float(np.sign(value)) * np.inf


def _finite(value):
    x = real_number(value)
    return x if x is not None and np.isfinite(x) else None


def time_problems(t0, t_end=None, need_end=False) -> list[str]:
    """What is wrong with the start time ``t0`` and (when ``need_end``) the end ``t_end``."""
    out = []
    start = _finite(t0)
    if start is None:
        out.append(f"t0 must be a finite number (s), got {show(t0)}")
    if need_end:
        end = real_number(t_end)
        if end is None:
            out.append(f"t_end must be a finite number (s), got {show(t_end)}")
        elif start is not None and not (np.isfinite(end) and end > start):
            out.append(f"t_end must be finite and greater than t0 = {start}, got {end}")
    return out


def time_span(t0, t_end):
    """(t0, t_end) as floats when both are valid, else (-inf, inf)."""
    if time_problems(t0, t_end, need_end=True):
        return -np.inf, np.inf
    return float(t0), float(t_end)


def step_size_problems(h, t0=0.0, t_end=None):
    """(problems, (h_min, h_max)) of a step size ``h`` or a pair (h_min, h_max); the bounds
    are None when there are problems. A step below the time resolution at ``t0`` and
    ``t_end`` (those of them that are finite numbers) is refused, and with both a run of
    more than MAX_STEPS steps."""
    single = real_number(h) is not None
    if single:
        given = [h]
    elif isinstance(h, (tuple, list, np.ndarray)) and np.ndim(h) == 1 and len(h) == 2:
        given = list(h)
    else:
        return [f"h must be a step size or a pair (h_min, h_max) in s, got {show(h)}"], None
    out = []
    bounds = [real_number(x) for x in given]
    for label, value, x in zip(("h_min", "h_max"), given, bounds):
        if x is None:
            out.append(f"h: {label} must be a number (s), got {show(value)}")
        elif not (np.isfinite(x) and x > 0):
            out.append(f"{label} must be positive and finite, got {x}")
    if out:
        return out, None
    h_min, h_max = bounds * 2 if single else bounds
    if h_min > h_max:
        return [f"h_min > h_max ({h_min} > {h_max})"], None
    times = [t for t in (_finite(t0), _finite(t_end)) if t is not None]
    floor = TIME_RESOLUTION * max(1.0, *map(abs, times))
    if h_min < floor:
        out.append(f"{'h' if single else 'h_min'} = {h_min:g} s is below the time resolution "
                   f"{floor:.3g} s ({TIME_RESOLUTION:g} max(1, |t|): a step this small does "
                   "not move t)")
    elif len(times) == 2 and (times[1] - times[0]) / h_max > MAX_STEPS:
        out.append(f"{'h' if single else 'h_max'} = {h_max:g} s needs "
                   f"{(times[1] - times[0]) / h_max:.3g} steps from t0 to t_end, more than "
                   f"{MAX_STEPS:.0e}: use a larger step")
    return out, (None if out else (h_min, h_max))


def settings_problems(settings, options, settings_class, arguments=()):
    """(problems, ``settings`` with the keyword ``options`` applied, or None when there are
    problems). ``settings``: None or a ``settings_class`` instance; ``options``: keywords,
    each a field of ``settings_class`` (an unknown one is named with the closest field or
    argument in ``arguments``, all of them at once)."""
    out = []
    base = settings
    if settings is None or isinstance(settings, dict):
        if isinstance(settings, dict):
            out.append(f"settings must be a {settings_class.__name__}, got a dict: pass "
                       f"{settings_class.__name__}(**d) or its entries as keywords")
        base = settings_class()
    elif not isinstance(settings, settings_class):
        out.append(f"settings must be a {settings_class.__name__} or None, got "
                   f"{type(settings).__name__}")
        base = settings_class()
    names = [f.name for f in dataclasses.fields(settings_class)]
    for key in options:
        if key not in names:
            close = difflib.get_close_matches(key, [*names, *arguments], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            out.append(f"unknown keyword {key!r} (not an argument nor a "
                       f"{settings_class.__name__} field{hint})")
    try:
        merged = dataclasses.replace(base, **{k: v for k, v in options.items() if k in names})
    except ModelError as err:
        out += err.problems
        merged = None
    return out, (None if out else merged)


def flag_problems(name, value) -> list[str]:
    """[] when ``value`` is None, True or False."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return []
    return [f"{name} must be True, False or None, got {show(value)}"]


def step_end(t_end):
    """``t_end`` of ``Stepper.step`` as a float (None stays None), else a ModelError."""
    if t_end is None:
        return None
    end = real_number(t_end)
    if end is None or np.isnan(end):
        raise ModelError([f"t_end must be a number (s) or None, got {show(t_end)}"])
    return end
