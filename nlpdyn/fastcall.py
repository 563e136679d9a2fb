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


COLUMN_CHUNK = 256
"""Columns per evaluation of :func:`map_columns`' map."""


def map_columns(f: ca.Function, *args):
    """``numpy.asarray(f.map(n)(*args))`` for arguments of ``n`` columns each: the same
    values, through a map of :data:`COLUMN_CHUNK` columns built once per function (kept on
    it) and called through the buffer interface, so a run neither builds an ``n``-column
    map nor converts its arguments and results to and from ``DM``.

    Parameters
    ----------
    f : casadi.Function
        Dense inputs; each output of shape (r, c) per column.
    *args : array_like, each (f.size1_in(i), n)
        The points, one per column (the last chunk is padded with copies of its first).

    Returns
    -------
    numpy.ndarray or list of numpy.ndarray
        Each output (r, c * n), the columns' results side by side as ``Function.map`` puts
        them; a list when ``f`` has several outputs.

    Examples
    --------
    >>> import casadi as ca
    >>> x = ca.SX.sym("x", 2)
    >>> f = ca.Function("f", [x], [ca.vertcat(x[0] * x[1], x[0] + x[1])])
    >>> map_columns(f, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).tolist()
    [[4.0, 10.0, 18.0], [5.0, 7.0, 9.0]]
    """
    args = [np.asarray(a, dtype=float) for a in args]
    n = args[0].shape[1]
    widths = [f.size2_out(i) for i in range(f.n_out())]
    outs = [np.zeros((f.size1_out(i), w * n)) for i, w in enumerate(widths)]
    if not n:
        return outs[0] if len(outs) == 1 else outs
    chunked = f.__dict__.get("_column_map")
    if chunked is None:
        chunked = f.__dict__["_column_map"] = dense(f.map(COLUMN_CHUNK))
    mapped = FastFunction(chunked)          # buffers of this call's own (threads may share f)
    for start in range(0, n, COLUMN_CHUNK):
        k = min(COLUMN_CHUNK, n - start)
        block = [a[:, start:start + k] for a in args]
        if k < COLUMN_CHUNK:
            block = [np.concatenate([b, np.repeat(b[:, :1], COLUMN_CHUNK - k, axis=1)], axis=1)
                     for b in block]
        for out, w, res in zip(outs, widths, mapped(*block)):
            out[:, start * w:(start + k) * w] = res.reshape(len(out), w * COLUMN_CHUNK,
                                                            order="F")[:, :k * w]
    return outs[0] if len(outs) == 1 else outs


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
