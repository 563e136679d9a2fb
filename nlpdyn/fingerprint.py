"""A comparable snapshot of a system's parameters: :meth:`System.compile` builds again only
when it changed."""
from __future__ import annotations

import types
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

if TYPE_CHECKING:
    from .system import System


class _Same:
    """Compares by identity: functions and CasADi symbols, whose content cannot be compared."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj


_BY_IDENTITY = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, ca.SX, ca.MX,
                ca.Function, type)


def _snapshot(value, seen):
    """A comparable copy of ``value`` and of everything it holds (attributes, items)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, np.integer)):
        return ("int", int(value))
    if isinstance(value, (float, np.floating)):
        return ("float", float(value).hex())
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return ("array", value.shape, tuple(_snapshot(x, seen) for x in value.ravel()))
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, ca.DM):
        return ("DM", value.shape, value.full().tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_snapshot(x, seen) for x in value))
    if isinstance(value, dict):
        return ("dict", tuple((_snapshot(k, seen), _snapshot(v, seen)) for k, v in value.items()))
    if isinstance(value, _BY_IDENTITY) or not hasattr(value, "__dict__"):
        return _Same(value)
    if id(value) in seen:
        return ("seen", seen[id(value)])
    seen[id(value)] = len(seen)
    # ``_cache``: data an element derives from its parameters; ``geometry``: a body's shapes,
    # which only draw
    return (_Same(type(value)), tuple((k, _snapshot(v, seen)) for k, v in vars(value).items()
                                      if k not in ("_cache", "geometry")))


def _fingerprint(system: System):
    """Everything the compiled functions depend on, to tell whether a parameter changed."""
    return _snapshot((system.gravity, system.ground, system.bodies, system.constraints,
                      system.gaps, system.forces), {})
