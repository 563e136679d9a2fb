"""What a step gives: ``StepInfo`` for an accepted step, ``StepFailure`` when none could be
taken."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class StepFailure(RuntimeError):
    """A step could not be completed, even after retries."""


@dataclass
class StepInfo:
    """What one accepted step did (the record behind ``Result.stats``)."""

    t: float
    h: float
    solver: str
    status: str
    iterations: int
    wall_time: float
    eom_residual: float
    constraint_violation: float
    norm_error: float
    min_gap: float
    complementarity: float
    retries: int
    projection_change: float
    gap_iterations: int = 0
    contact_changed: bool = False
    contact_scheme: str = ""
    contact_fallback: bool = False
    contact_error: float = 0.0
    projection_energy: float = 0.0
    mu: np.ndarray = field(repr=False, default=None)
    lam: np.ndarray = field(repr=False, default=None)
    gaps: np.ndarray = field(repr=False, default=None)
    contact_jacobian: np.ndarray = field(repr=False, default=None)
    impact: np.ndarray = field(repr=False, default=None)
    friction: np.ndarray = field(repr=False, default=None)
    predictor: np.ndarray = field(repr=False, default=None)
    """``scheme`` "midpoint": the velocity change over h that the step's velocity-dependent
    forces were taken with (its midpoint, where forces and joint rows were taken, follows
    from it: ``StepProgram.base_point``); None for the seed's step."""
