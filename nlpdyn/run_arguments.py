"""Checks of a run's arguments (``simulate``, ``Stepper``): the system, the times, the step
sizes and the settings, with the model's own problems (``System.problems``) reported with
them."""
from __future__ import annotations

import numpy as np

from .checks import (SIMULATE_ARGUMENTS, STEPPER_ARGUMENTS, ModelError, _finite, flag_problems,
                     settings_problems, show, step_size_problems, time_problems)
from .system import System


def system_problems(system) -> list[str]:
    """[] when ``system`` is an nlpdyn System.

    Parameters
    ----------
    system : object
        What was passed as the system.

    Returns
    -------
    list of str
        The problem, or none.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> system_problems(nd.System()), system_problems("pendulum")
    ([], ['system must be an nlpdyn System, got str'])
    """
    if isinstance(system, System):
        return []
    return [f"system must be an nlpdyn System, got {type(system).__name__}"]


def raise_problems(problems, system, t0) -> None:
    """Raise one ModelError listing ``problems`` (a run's arguments) and then the model's
    own (``System.problems``), when there are any of the first.

    Parameters
    ----------
    problems : list of str
        What is wrong with a run's arguments.
    system : object
        The run's system; its own problems follow when it is a System.
    t0 : float
        The run's start time (s).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> raise_problems([], nd.System(), 0.0) is None
    True
    >>> raise_problems(["h must be > 0"], nd.System(), 0.0)
    Traceback (most recent call last):
    ...
    nlpdyn.checks.ModelError: invalid model:
      - h must be > 0
      - the system has no bodies
    """
    if not problems:
        return
    model = [] if system_problems(system) else system.problems(_finite(t0) or 0.0)
    raise ModelError([*problems, *model])


def _run_problems(system, h, settings, t0, t_end, options, settings_class, arguments,
                  need_end):
    """(problems, merged settings, (h_min, h_max)) of a run's arguments; ``need_end`` False:
    a Stepper's (no end time)."""
    problems = system_problems(system) + time_problems(t0, t_end, need_end)
    more, settings = settings_problems(settings, options, settings_class, arguments)
    problems += more
    more, bounds = step_size_problems(h, t0, t_end)
    problems += more
    if settings is not None and bounds is not None and settings.step_control == "fixed" \
            and bounds[0] != bounds[1]:
        problems.append(f"step_control 'fixed' needs one step size, got bounds {bounds}")
    return problems, settings, bounds


def stepper_arguments(system, h, settings, t0, options, settings_class):
    """(settings with the keyword ``options`` applied, (h_min, h_max)) of a Stepper's
    arguments, else a ModelError listing what is wrong with them and with the model."""
    problems, settings, bounds = _run_problems(system, h, settings, t0, None, options,
                                               settings_class, STEPPER_ARGUMENTS, False)
    raise_problems(problems, system, t0)
    return settings, bounds


def run_problems(system, t_end, h, settings, progress, t0, output_every, options,
                 settings_class) -> list[str]:
    """What is wrong with the arguments of ``simulate`` (``t_eval`` aside); the model's own
    problems are added by :func:`raise_problems`."""
    problems, _, _ = _run_problems(system, h, settings, t0, t_end, options, settings_class,
                                   SIMULATE_ARGUMENTS, True)
    problems += flag_problems("progress", progress)
    if isinstance(output_every, (bool, np.bool_)) or not (
            isinstance(output_every, (int, np.integer)) and output_every >= 1):
        problems.append(f"output_every must be a whole number >= 1, got {show(output_every)}")
    return problems
