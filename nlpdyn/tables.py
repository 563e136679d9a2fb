"""A Result as tables: :meth:`~nlpdyn.Result.to_dataframe` (the trajectory) and
:meth:`~nlpdyn.Result.energy_ledger` (where the energy went), one row per output time.

Both are indexed by the output time ``t`` (s), so ``df.loc[t]`` is the row at ``t`` and
``df.loc[t0:t1]`` a time window. Both name a quantity of an element ``<quantity>:<element>``
(``x:bar``, ``Fx:pin``, ``stored:spring``, ``work:spring``); a name in both tables means the
same thing. ``df.attrs["units"]`` maps every column (and ``t``) to its SI unit (``"-"``:
dimensionless), ``df.attrs["descriptions"]`` to one line saying what it is; the CSV file of
:meth:`~nlpdyn.Result.to_csv` writes the unit in each header (``x:bar [m]``) and
:func:`read_csv` reads it back.

The columns of :meth:`~nlpdyn.Result.to_dataframe` (``<body>``: every body, ``<joint>``:
every ideal joint, driver, programmed constraint and clearance joint, ``<element>``: every
force element):

========================================  ======  ==============================================
column                                    unit    what it is
========================================  ======  ==============================================
``h``                                     s       the step that ended at this row's time (NaN in
                                                  row 0)
``total``                                 J       mechanical energy (``Result.energy``): kinetic
                                                  + potential (+ the ledger's ``carried``)
``kinetic``                               J       kinetic energy of the bodies
``potential``                             J       potential energy: ``gravity`` and every
                                                  ``stored:``
``x:<body>``, ``y:``, ``z:``              m       centre of mass, global (``Result.position``)
``q0:<body>``, ``q1:``, ``q2:``, ``q3:``  ``-``   Euler parameters, body to global
                                                  (``Result.orientation``)
``vx:<body>``, ``vy:``, ``vz:``           m/s     centre-of-mass velocity, global
                                                  (``Result.velocity``)
``wx:<body>``, ``wy:``, ``wz:``           rad/s   angular velocity, body frame
                                                  (``Result.angular_velocity``)
``Fx:<joint>``, ``Fy:``, ``Fz:``          N       reaction force on the joint's child, global,
                                                  in the step ending at the row
                                                  (``Result.reaction_force``)
``Mx:<joint>``, ``My:``, ``Mz:``          N m     its moment about the joint point
                                                  (``Result.reaction_torque``)
``mu0:<joint>``, ``mu1:``, ...            N, N m  Lagrange multiplier of the element's equation
                                                  k (``Result.multipliers``): N for a position
                                                  equation (m), N m for an orientation or angle
                                                  equation
``gap0:<joint>``, ``gap1:``, ...          m       a clearance joint's gap k, true (nonlinear),
                                                  negative in penetration (``Result.gap``)
``lam0:<joint>``, ``lam1:``, ...          N       the normal contact force at gap k in the step
                                                  ending at the row, 0 in row 0
                                                  (``Result.contact_force``)
``Fx:<element>``, ``Fy:``, ``Fz:``        N       a force element's force on its last body,
                                                  global (``Result.applied_force``)
``Mx:<element>``, ``My:``, ``Mz:``        N m     its moment about that body's centre of mass
                                                  (``Result.applied_torque``)
``element_work:<element>``                J       work of the element on the bodies since t[0],
                                                  conservative part included
                                                  (``Result.element_work``)
``stored:<element>``                      J       energy stored in the element
                                                  (``Result.element_potential``)
``gravity``                               J       gravitational potential energy (gravity's
                                                  stored energy; gravity has
                                                  ``element_work:gravity`` too)
========================================  ======  ==============================================

The gaps of each clearance joint, in order: cylindrical, the radial gaps at bore ends 1 and 2;
revolute, those and the axial gaps at faces 1 and 2; spherical, the one radial gap; prismatic
(N profile vertices), 4N gaps ordered face (front, back), vertex, plane (previous edge, next
edge). ``df.attrs["descriptions"]`` names each one.

Quantities of a step (``h``, reactions, multipliers, contact and applied forces) belong to
the row where the step ends; row 0 holds NaN for them (0 for the contact forces).

The columns of :meth:`~nlpdyn.Result.energy_ledger` (J; works cumulative since t[0]):

- ``kinetic``; ``gravity`` (gravitational potential); ``stored:<element>`` for
  every other force element with a stored energy (springs, bushings, stops, contact
  laws, range-of-motion cones); ``carried`` (systems with energy-consistent elements,
  ``evaluation="implicit"``): the kinetic energy of the half impulse those elements
  carry into the next step, T(v + M^-1 C) - T(v), 0 while none is loaded (see
  ``CompiledSystem.step_forces``: v is the step's velocity, v + M^-1 C the nodal one
  whose energy the scheme keeps); ``total``: their sum, the mechanical energy
  (``Result.energy``).
- ``work:<force element>``: work of the element's non-conservative part (damping,
  hysteresis, applied loads); its conservative part is in its ``stored`` column.
- ``work:<joint>``: work of an ideal joint's, driver's or programmed constraint's
  impulses. A driver's is the power it feeds in; an ideal joint does no work, so
  anything there is the time discretisation at that joint.
- ``impact:<clearance joint>``: work of its contact impulses in the steps where one of
  its gaps closed (open by more than ``gap_tol`` at the start of the step or of the
  one before): the perfectly inelastic loss of each collision.
- ``friction:<clearance joint>`` (joints with ``friction`` > 0): work of its Coulomb
  friction impulses, <= 0 unless a slip reverses within a step.
- ``contact:<clearance joint>``: work of its normal contact impulses in sustained contact.
  Smooth frictionless sliding does no work, so there it is the contact step's
  numerical dissipation: -lam c dphi^2 per step with the default step (dphi: the
  angle the contact normal turns in the step), which tends to 0 with h once
  h dphi/dt << 1 (``tests/test_clearance.py``: a spinning bar, a bar dropped onto a
  pin); large with ``contact="end_normal"``. It also
  holds what a bore loses when it jams with every gap already closed (both bore ends
  and an axial face in contact, kN forces for ~1 ms): that loss does not shrink with
  h and is physics the gap test cannot see (docs/guide/joints.md, "Clearance joints").
- ``residual``: what no agent did, the rest of the time discretisation, split into
  ``residual:gyroscopic`` (the explicit w x J w term), ``residual:potential`` (the
  conservative forces' work against the change of their stored energy and of the
  carried energy),
  ``residual:projection`` (the post-step projection) and ``residual:solver`` (the
  work of the step's EOM residual: the solvers' tolerance).

``total - total[0] == sum of the work:, impact:, contact: and friction: columns +
residual`` to
round-off, row by row. Each step's works are its impulses times its mean velocity,
which makes the kinetic energy balance exact (``nlpdyn.assembly``). For
:func:`~nlpdyn.simulate_ode` results the works are quadratures between output points
and the residual holds their quadrature error.

Names of earlier versions (``t``, ``energy``, ``kinetic_energy``, ``potential_energy``,
``<name>.<quantity>`` such as ``bar.x``, ``pin.gap0``, ``spring.work``, ``gravity.stored``)
still work in ``df[name]``, ``df[[names]]`` and ``df.name`` for this release, with a
``FutureWarning`` naming the new one (:data:`RENAMED`); ``t`` gives the index as a column.
"""
from __future__ import annotations

import os
import re
import sys
import warnings

import numpy as np
import pandas as pd

XYZ = ("x", "y", "z")
DIMENSIONLESS = "-"
"""The unit of a dimensionless column (Euler parameters)."""
RENAMED = {"t": "the index (df.index)", "energy": "total", "kinetic_energy": "kinetic",
           "potential_energy": "potential", "gravity.stored": "gravity",
           "<element>.work": "element_work:<element>", "<element>.stored": "stored:<element>",
           "<name>.<quantity>": "<quantity>:<name>"}
"""Old column name -> new one, for the names that still work with a ``FutureWarning``."""
_FIXED = {"energy": "total", "kinetic_energy": "kinetic", "potential_energy": "potential",
          "gravity.stored": "gravity"}
_HEADER = re.compile(r"(?P<name>.*) \[(?P<unit>[^\[\]]*)\]")
# what each gap of a clearance joint is, by the joint's kind (Result.info["geometry"])
_GAPS = {"cylindrical clearance joint": ("radial gap at bore end 1", "radial gap at bore end 2"),
         "revolute clearance joint": ("radial gap at bore end 1", "radial gap at bore end 2",
                                      "axial gap at face 1", "axial gap at face 2"),
         "spherical clearance joint": ("radial gap of the ball in the socket",)}


class Table(pd.DataFrame):
    """A pandas DataFrame whose column names of earlier nlpdyn versions still work, with a
    ``FutureWarning``, in ``df[name]``, ``df[[names]]`` and ``df.name`` (:data:`RENAMED`);
    ``"t"`` gives the time index as a Series. Everything else is pandas'.

    Examples
    --------
    >>> import warnings
    >>> df = Table({"x:bar": [0.0, 0.5]}, index=pd.Index([0.0, 0.1], name="t"))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old = df["bar.x"]
    >>> old.equals(df["x:bar"]), caught[0].category.__name__
    (True, 'FutureWarning')
    """

    @property
    def _constructor(self):
        return Table

    def __getitem__(self, key):
        return self._get(key)

    def __getattr__(self, name):
        if not name.startswith("_") and name not in self.columns:
            if self._is_time(name) or self._current(name, warn=False) != name:
                return self._get(name)
        return super().__getattr__(name)

    def _get(self, key):
        """``self[key]`` with the old names mapped."""
        if isinstance(key, str):
            if self._is_time(key):
                _warn("t", "the index (df.index)")
                return pd.Series(self.index.to_numpy(), index=self.index, name="t")
            return super().__getitem__(self._current(key))
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            new = [self._current(k) for k in key]
            if any(self._is_time(k) for k in new):
                _warn("t", "the index (df.index)")
                return self.reset_index()[new].set_index(self.index)
            return super().__getitem__(new)
        return super().__getitem__(key)

    def _is_time(self, key) -> bool:
        """Whether ``key`` is the old ``t`` column, now the index."""
        return key == "t" and key not in self.columns and self.index.name == "t"

    def _current(self, key: str, warn: bool = True) -> str:
        """The column ``key`` names now, with a FutureWarning (``warn``) when it is an old
        name."""
        if key in self.columns:
            return key
        new = _FIXED.get(key)
        if new is None and "." in key:
            name, quantity = key.rsplit(".", 1)
            new = {"work": f"element_work:{name}", "stored": f"stored:{name}"}.get(
                quantity, f"{quantity}:{name}")
        if new is not None and new in self.columns:
            if warn:
                _warn(key, new)
            return new
        return key


def _warn(old, new):
    """The FutureWarning of an old column name, pointing at the first caller outside this
    module."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    now = new if new.startswith("the index") else repr(new)
    warnings.warn(f"column {old!r} is now {now}: the old name works in this release only "
                  "(nlpdyn.tables.RENAMED)", FutureWarning, stacklevel=level)


def _per_step(values):
    """(n_steps, k) per-step values as (n_points, k) with a NaN first row."""
    values = np.asarray(values, dtype=float)
    return np.vstack([np.full((1,) + values.shape[1:], np.nan), values])


def _gap_labels(res, name, n) -> list:
    """What each of the ``n`` gaps of clearance joint ``name`` is."""
    joints = (res.info.get("geometry") or {}).get("joints", [])
    kinds = {j.get("name"): j.get("kind") for j in joints}
    kind = kinds.get(name)
    if kind in _GAPS and len(_GAPS[kind]) == n:
        return list(_GAPS[kind])
    if kind == "prismatic clearance joint" and n % 4 == 0:
        vertices = n // 4
        face, edge = ("front", "back"), ("previous", "next")
        return [f"gap of vertex {k // 2 % vertices} at the {face[k // (2 * vertices)]} face, "
                f"off the plane of its {edge[k % 2]} edge" for k in range(n)]
    return [f"gap {k}" for k in range(n)]


def columns(res) -> dict:
    """Column name -> (array (n_points,), unit, description) of ``res``, in the order of
    :func:`to_dataframe`.

    Parameters
    ----------
    res : Result
        The run.

    Returns
    -------
    dict
        ``name -> (values, unit, description)``; the columns are in the module docstring.

    Examples
    --------
    >>> values, unit, what = columns(res)["x:bar"]              # doctest: +SKIP
    >>> unit                                                    # doctest: +SKIP
    'm'
    """
    out = {"h": (_per_step(res.h[:, None])[:, 0], "s", "the step that ended at this time"),
           "total": (res.energy, "J", "mechanical energy: kinetic + potential (+ carried)"),
           "kinetic": (res.kinetic_energy, "J", "kinetic energy of the bodies"),
           "potential": (res.potential_energy, "J",
                         "potential energy: gravity and every element's stored energy")}

    def put(name, quantities, array, unit, what):
        for k, quantity in enumerate(quantities):
            line = what.replace("{k}", str(k)).replace("{c}", quantity[-1])
            out[f"{quantity}:{name}"] = (array[:, k], unit, line.replace("{name}", name))

    for body in res.body_names:
        put(body, XYZ, res.position(body), "m", "centre of mass of {name}, global {c}")
        put(body, ("q0", "q1", "q2", "q3"), res.orientation(body), DIMENSIONLESS,
            "Euler parameter e{k} of {name} (body to global)")
        put(body, ["v" + c for c in XYZ], res.velocity(body), "m/s",
            "centre-of-mass velocity of {name}, global {c}")
        put(body, ["w" + c for c in XYZ], res.angular_velocity(body), "rad/s",
            "angular velocity of {name} about its body-frame {c} axis")
    for name in [*res.constraint_rows, *res.gap_rows]:
        bodies = res._rows(name)[2]
        child = bodies[-1] if bodies else "its body"
        put(name, ["F" + c for c in XYZ], _per_step(res.reaction_force(name)), "N",
            f"reaction force of {{name}} on {child}, global {{c}}, in the step ending here")
        put(name, ["M" + c for c in XYZ], _per_step(res.reaction_torque(name)), "N m",
            f"moment of {{name}}'s reaction on {child} about the joint point, global {{c}}")
        if name in res.constraint_rows:
            mu = res.multipliers(name)
            put(name, [f"mu{k}" for k in range(mu.shape[1])], _per_step(mu), "N or N m",
                "Lagrange multiplier of equation {k} of {name} in the step ending here (N for "
                "a position equation, N m for an orientation or angle equation)")
        else:
            gaps = res.gap(name)
            labels = _gap_labels(res, name, gaps.shape[1])
            for k, label in enumerate(labels):
                out[f"gap{k}:{name}"] = (gaps[:, k], "m", f"{name}: {label} (true gap; < 0: "
                                         "penetration)")
            lam = res.contact_force(name)
            for k, label in enumerate(labels):
                out[f"lam{k}:{name}"] = (lam[:, k], "N", f"{name}: normal contact force at its "
                                         f"{label} in the step ending here")
    for name in res.force_elements:
        if name != "gravity":
            put(name, ["F" + c for c in XYZ], _per_step(res.applied_force(name)), "N",
                "force of {name} on its last body, global {c}, in the step ending here")
            put(name, ["M" + c for c in XYZ], _per_step(res.applied_torque(name)), "N m",
                "moment of {name} on its last body about its centre of mass, global {c}")
        if name in res.element_work:
            out[f"element_work:{name}"] = (res.element_work[name], "J", f"work of {name} on "
                                           "the bodies since t[0], conservative part included")
            stored = "gravity" if name == "gravity" else f"stored:{name}"
            out[stored] = (res.element_potential[name], "J", "gravitational potential energy"
                           if name == "gravity" else f"energy stored in {name}")
    return out


def _table(res, cols: dict) -> Table:
    """A Table indexed by ``res.t`` of ``cols`` (name -> (values, unit, description))."""
    index = pd.Index(np.asarray(res.t, dtype=float), name="t")
    table = Table({name: values for name, (values, _, _) in cols.items()}, index=index)
    table.attrs["units"] = {"t": "s", **{name: unit for name, (_, unit, _) in cols.items()}}
    table.attrs["descriptions"] = {"t": "output time",
                                   **{name: what for name, (_, _, what) in cols.items()}}
    return table


def to_dataframe(res) -> Table:
    """``res`` as a :class:`Table` (a pandas DataFrame) indexed by time, one row per output
    time; columns, units and descriptions in the module docstring.

    Parameters
    ----------
    res : Result
        The run.

    Returns
    -------
    Table
        Index ``t`` (s); ``attrs["units"]`` and ``attrs["descriptions"]`` for every column.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0))
    >>> pin = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0), name="pin"))
    >>> df = nd.simulate(s, t_end=0.01, h=1e-3, progress=False).to_dataframe()
    >>> df[["x:bar", "z:bar", "Fz:pin"]].shape
    (11, 3)
    >>> df.attrs["units"]["Fz:pin"], df.index.name
    ('N', 't')
    """
    return _table(res, columns(res))


def energy_ledger(res) -> Table:
    """The energy ledger of ``res`` (:meth:`nlpdyn.Result.energy_ledger`, which lists the
    columns) as a :class:`Table` indexed by time, every column in J.

    Parameters
    ----------
    res : Result
        The run.

    Returns
    -------
    Table
        Index ``t`` (s); ``attrs["units"]`` and ``attrs["descriptions"]`` for every column.

    Examples
    --------
    >>> energy_ledger(res).attrs["units"]["total"]                # doctest: +SKIP
    'J'
    """
    if not res.ledger:
        raise ValueError("this result has no energy ledger (saved by an older nlpdyn)")
    n = len(res.t)
    table = {"kinetic": (res.kinetic_energy, "kinetic energy of the bodies"),
             "gravity": (res.element_potential.get("gravity", np.zeros(n)),
                         "gravitational potential energy")}
    for name, pot in res.element_potential.items():
        if name != "gravity" and np.any(pot != 0):
            table[f"stored:{name}"] = (pot, f"energy stored in {name}")
    carried = res.ledger.get("carried")
    if carried is not None:
        table["carried"] = (carried, "kinetic energy of the half impulse the energy-consistent "
                                     "elements carry into the next step")
    table["total"] = (res.kinetic_energy + sum(res.element_potential.values(), np.zeros(n))
                      + (0.0 if carried is None else carried),
                      "mechanical energy: the sum of the energies before it")
    table.update({k: (col, _ledger_description(res, k)) for k, col in res.ledger.items()
                  if k != "carried"})
    return _table(res, {name: (values, "J", what) for name, (values, what) in table.items()})


_RESIDUALS = {"gyroscopic": "the explicit w x J w term", "potential": "the conservative "
              "forces' work against the change of their stored (and carried) energy",
              "projection": "the post-step projection", "solver": "the work of the steps' EOM "
              "residual (the solvers' tolerance)"}


def _ledger_description(res, column) -> str:
    """One line on what ledger column ``column`` is (cumulative since t[0])."""
    kind, _, name = column.partition(":")
    if kind == "residual":
        return ("time discretisation no agent accounts for: " + _RESIDUALS[name] if name in
                _RESIDUALS else "what no agent did: the time discretisation (sum of the "
                "residual: columns)")
    return {"work": (f"work of {name}'s non-conservative part (damping, hysteresis, loads)"
                     if name in res.force_elements else f"work of {name}'s constraint "
                     "impulses (a driver's power fed in; discretisation for an ideal joint)"),
            "impact": f"work of {name}'s contact impulses in the steps where a gap closed",
            "friction": f"work of {name}'s Coulomb friction impulses",
            "contact": f"work of {name}'s normal contact impulses in sustained contact"}.get(
        kind, column) + " since t[0]"


def to_csv_text(table) -> str:
    """``table`` as CSV text with the unit in every header (``x:bar [m]``, index ``t [s]``)
    and floats in their shortest round-trip form.

    Parameters
    ----------
    table : pandas.DataFrame
        A table with ``attrs["units"]`` (:func:`to_dataframe`, :func:`energy_ledger`).

    Returns
    -------
    str
        The CSV text; :func:`read_csv` reads it back.

    Examples
    --------
    >>> df = Table({"x:bar": [0.0, 0.5]}, index=pd.Index([0.0, 0.1], name="t"))
    >>> df.attrs["units"] = {"t": "s", "x:bar": "m"}
    >>> print(to_csv_text(df), end="")
    t [s],x:bar [m]
    0.0,0.0
    0.1,0.5
    """
    units = table.attrs.get("units", {})

    def header(name):
        return f"{name} [{units[name]}]" if name in units else str(name)
    index = table.index.name
    return table.to_csv(header=[header(c) for c in table.columns],
                        index_label=None if index is None else header(index))


def read_csv(path: str | os.PathLike) -> Table:
    """Read a table written by :meth:`~nlpdyn.Result.to_csv` (or :func:`to_csv_text`).

    Parameters
    ----------
    path : str or path-like
        The CSV file.

    Returns
    -------
    Table
        Indexed by ``t``, the columns named without their units, which go to
        ``attrs["units"]``.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> df = nd.read_csv("run.csv")                               # doctest: +SKIP
    >>> df.attrs["units"]["x:bar"]                                # doctest: +SKIP
    'm'
    """
    raw = pd.read_csv(path, index_col=0)
    names, units = [], {}
    for header in [raw.index.name, *raw.columns]:
        match = _HEADER.fullmatch(str(header))
        name = match["name"] if match else str(header)
        if match:
            units[name] = match["unit"]
        names.append(name)
    raw.columns = names[1:]
    raw.index = pd.Index(raw.index.to_numpy(dtype=float), name=names[0])
    table = Table(raw)
    table.attrs["units"] = units
    return table
