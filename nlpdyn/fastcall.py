"""Low-overhead numeric calls of a CasADi Function through its buffer interface.

A plain ``f(x)`` call from Python costs ~40 us of argument conversion on this machine;
the buffer interface binds numpy arrays once and calls in well under a microsecond.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Iterator

import casadi as ca
import numpy as np


class FastFunction:
    """Wraps ``f`` with bound numpy input/output arrays (dense, column-major).

    Parameters
    ----------
    f : casadi.Function
        Dense inputs and outputs (:func:`dense` makes them so).

    Raises
    ------
    ValueError
        A sparse input or output.

    Examples
    --------
    >>> import casadi as ca
    >>> x = ca.SX.sym("x", 2)
    >>> f = FastFunction(ca.Function("f", [x], [2 * x, ca.dot(x, x)], ["x"], ["twice", "sq"]))
    >>> twice, sq = f([1.0, 3.0])
    >>> twice.tolist(), sq.tolist()
    ([2.0, 6.0], [10.0])
    """

    def __init__(self, f: ca.Function) -> None:
        self.function = f
        self.names_in = list(f.name_in())
        self.names_out = list(f.name_out())
        self._in = [np.zeros(f.nnz_in(i)) for i in range(f.n_in())]
        # outputs are views of one buffer: one fill and one copy per call
        sizes = [f.nnz_out(i) for i in range(f.n_out())]
        self._bounds = np.concatenate(([0], np.cumsum(sizes))).tolist()
        self._all_out = np.zeros(self._bounds[-1])
        self._out = [self._all_out[a:b] for a, b in zip(self._bounds[:-1], self._bounds[1:])]
        for i in range(f.n_in()):
            if f.sparsity_in(i).nnz() != f.sparsity_in(i).numel():
                raise ValueError(f"{f.name()}: input {self.names_in[i]} must be dense")
        for i in range(f.n_out()):
            if f.sparsity_out(i).nnz() != f.sparsity_out(i).numel():
                raise ValueError(f"{f.name()}: output {self.names_out[i]} must be dense")
        shapes = [f.size_out(i) for i in range(f.n_out())]
        # (start, end, shape or None for a vector) of each output in the buffer
        self._slices = [(a, b, shape if shape[1] > 1 else None)
                        for a, b, shape in zip(self._bounds[:-1], self._bounds[1:], shapes)]
        self._matrix_in = [i for i in range(f.n_in()) if f.size2_in(i) > 1]
        self._bind(f)

    def _bind(self, f: ca.Function):
        self._buffer, self._eval = f.buffer()
        for i, a in enumerate(self._in):
            self._buffer.set_arg(i, memoryview(a))
        for i, a in enumerate(self._out):
            self._buffer.set_res(i, memoryview(a))

    def swap(self, g: ca.Function) -> None:
        """Evaluate ``g`` instead from now on: the same function in another form (compiled,
        ``nlpdyn.jit``), with the same inputs and outputs.

        Parameters
        ----------
        g : casadi.Function
            Same inputs and outputs (sparsity) as the wrapped function.

        Raises
        ------
        ValueError
            ``g`` takes or gives something else.

        Examples
        --------
        >>> import casadi as ca
        >>> x = ca.SX.sym("x")
        >>> f = FastFunction(ca.Function("f", [x], [x * x]))
        >>> f.swap(ca.Function("g", [x], [x ** 2]))
        >>> f.function.name(), f(3.0)[0].tolist()
        ('g', [9.0])
        """
        f = self.function
        same = (g.n_in() == f.n_in() and g.n_out() == f.n_out()
                and all(g.sparsity_in(i) == f.sparsity_in(i) for i in range(f.n_in()))
                and all(g.sparsity_out(i) == f.sparsity_out(i) for i in range(f.n_out())))
        if not same:
            raise ValueError(f"{g.name()} does not take and give what {f.name()} does")
        self.function = g
        self._bind(g)

    def __call__(self, *args) -> list[np.ndarray]:
        """Evaluate; returns fresh copies of the outputs (matrices reshaped column-major)."""
        if self._matrix_in:
            args = [np.ravel(a, order="F") if i in self._matrix_in else a
                    for i, a in enumerate(args)]
        for dst, src in zip(self._in, args):
            dst[:] = src
        self._all_out.fill(np.nan)  # a call that fails inside (a QP plugin) leaves no stale values
        self._eval()
        out = self._all_out.copy()
        return [out[a:b] if shape is None else out[a:b].reshape(shape, order="F")
                for a, b, shape in self._slices]


def dense(f: ca.Function) -> ca.Function:
    """A copy of ``f`` whose outputs are densified (the buffer interface needs dense data).

    Parameters
    ----------
    f : casadi.Function

    Returns
    -------
    casadi.Function
        Same name, inputs and output names.

    Examples
    --------
    >>> import casadi as ca
    >>> x = ca.SX.sym("x", 2)
    >>> f = ca.Function("f", [x], [ca.diag(x)])
    >>> f.sparsity_out(0).nnz(), dense(f).sparsity_out(0).nnz()
    (2, 4)
    """
    ins = [ca.SX.sym(f.name_in(i), f.sparsity_in(i)) if f.is_a("SXFunction")
           else ca.MX.sym(f.name_in(i), f.sparsity_in(i)) for i in range(f.n_in())]
    outs = [ca.densify(o) for o in f.call(ins)]
    return ca.Function(f.name(), ins, outs, f.name_in(), f.name_out())


@contextlib.contextmanager
def silenced_stdout() -> Iterator[None]:
    """Silence C-level stdout (qpOASES prints a licence banner when a solver is constructed).

    Examples
    --------
    >>> with silenced_stdout():
    ...     print("not shown")
    >>> print("shown")
    shown
    """
    sys.stdout.flush()
    libc = ctypes.CDLL(None)
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            try:
                # CasADi routes its plugins' printing through Python's sys.stdout
                with contextlib.redirect_stdout(devnull):
                    yield
            finally:
                libc.fflush(None)   # C stdio buffers: flush while fd 1 is still /dev/null
    finally:
        os.dup2(saved, 1)
        os.close(saved)
