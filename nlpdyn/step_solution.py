"""StepSolution, a candidate step as a solver of the per-step program returns it, and what
every one of the program's functions is built with."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fastcall import FastFunction, dense

_CSE = {"cse": True}    # common subexpressions evaluated once (~20 % fewer operations)


@dataclass
class StepSolution:
    """A candidate step: end state, impulses and the solver's own account."""

    h: float
    y: np.ndarray
    P_eq: np.ndarray
    P_g: np.ndarray
    solver: str
    status: str
    iterations: int
    success: bool
    gap_iterations: int = 0
    P_t: np.ndarray = None          # friction impulse per gap row on the child, (n_gap, 3)
    friction_error: float = 0.0     # m: how far the lagged normal impulse and slip direction are
    P_n_used: np.ndarray = None     # the lagged normal impulses the friction cones used
    b_imp: np.ndarray = None        # the implicit elements' scaled impulse at y (QP solves)
    projected: bool = False         # the midpoint step's end velocity already projected
    shorter_h: float = None         # stopped in a stiff impact: the h to retry it at


def _dense_cached(cache, jacobian_at, sparse):
    """The densified FastFunction of ``sparse(jacobian_at)``, built once into ``cache``."""
    key = ("dense", jacobian_at)
    if key not in cache:
        cache[key] = FastFunction(dense(sparse(jacobian_at)))
    return cache[key]
