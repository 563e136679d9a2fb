"""Names of the types the public signatures use, for type checkers and readers.

Imported only under ``typing.TYPE_CHECKING`` (the annotations are strings, see
``from __future__ import annotations``), so no module imports this one at run time.

Examples
--------
>>> from nlpdyn._typing import Symbolic
>>> import casadi as ca
>>> isinstance(ca.SX.sym("x"), Symbolic.__args__)
True
"""
from __future__ import annotations

from typing import Callable, Union

import casadi as ca
import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "Symbolic", "Value", "Wrench", "Law1D"]

#: a CasADi expression or matrix
Symbolic = Union[ca.SX, ca.MX, ca.DM]
#: a number, a numpy array or a CasADi expression (the laws take any of them)
Value = Union[float, np.ndarray, ca.SX, ca.MX, ca.DM]
#: (f, n'): the force on a body (global frame) and the moment about its centre of mass (body frame)
Wrench = tuple[Symbolic, Symbolic]
#: a scalar law of a scalar coordinate, s -> V(s) (the stored energy of ``potential_terms``)
Law1D = Callable[[Symbolic], Symbolic]
