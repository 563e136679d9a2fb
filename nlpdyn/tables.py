"""A Result as a table: one row per output time, one named column per quantity.

Columns are ``<body or element>.<quantity>`` (names are unique across bodies and elements):

========================  =================================================================
``t``, ``h``              output time; the step ending there (NaN in row 0)
``energy``, ``kinetic_energy``, ``potential_energy``   mechanical energy (J)
``<body>.x .y .z``        centre of mass, global (``Result.position``)
``<body>.q0 .. .q3``      Euler parameters (``Result.orientation``)
``<body>.vx .vy .vz``     centre-of-mass velocity, global (``Result.velocity``)
``<body>.wx .wy .wz``     angular velocity, body frame (``Result.angular_velocity``)
``<joint>.Fx .Fy .Fz``    reaction force on the child, global (``Result.reaction_force``);
``<joint>.Mx .My .Mz``    its moment about the joint point (``Result.reaction_torque``)
``<joint>.mu0 ..``        Lagrange multipliers of a joint, driver or programmed constraint
``<joint>.gap0 ..``       a clearance joint's gaps (m, ``Result.gap``) and
``<joint>.lam0 ..``       their normal contact forces (N, ``Result.contact_force``)
``<element>.Fx .. .Mz``   a force element's force and moment on its last body
                          (``Result.applied_force``, ``Result.applied_torque``)
``<element>.work``        its work on the bodies since t[0] (J, ``Result.element_work``),
``<element>.stored``      its stored energy (J); gravity has these two only
========================  =================================================================

Quantities of a step (``h``, reactions, multipliers, applied forces) belong to the row where
the step ends; row 0 holds NaN for them. The energy ledger (``Result.energy_ledger``) keeps
its own columns, ``<kind>:<element>`` (``work:spring``, ``impact:pin``), for the same names.
"""
from __future__ import annotations

import numpy as np

XYZ = ("x", "y", "z")


def _per_step(values):
    """(n_steps, k) per-step values as (n_points, k) with a NaN first row."""
    values = np.asarray(values, dtype=float)
    return np.vstack([np.full((1,) + values.shape[1:], np.nan), values])


def columns(res) -> dict:
    """Column name -> array (n_points,) of ``res``, in the order of :func:`to_dataframe`."""
    out = {"t": res.t, "h": _per_step(res.h[:, None])[:, 0], "energy": res.energy,
           "kinetic_energy": res.kinetic_energy, "potential_energy": res.potential_energy}

    def put(name, quantities, array):
        for k, quantity in enumerate(quantities):
            out[f"{name}.{quantity}"] = array[:, k]

    for body in res.body_names:
        put(body, XYZ, res.position(body))
        put(body, ("q0", "q1", "q2", "q3"), res.orientation(body))
        put(body, ("v" + c for c in XYZ), res.velocity(body))
        put(body, ("w" + c for c in XYZ), res.angular_velocity(body))
    for name in [*res.constraint_rows, *res.gap_rows]:
        put(name, ("F" + c for c in XYZ), _per_step(res.reaction_force(name)))
        put(name, ("M" + c for c in XYZ), _per_step(res.reaction_torque(name)))
        if name in res.constraint_rows:
            mu = res.multipliers(name)
            put(name, (f"mu{k}" for k in range(mu.shape[1])), _per_step(mu))
        else:
            gaps = res.gap(name)
            put(name, (f"gap{k}" for k in range(gaps.shape[1])), gaps)
            put(name, (f"lam{k}" for k in range(gaps.shape[1])), res.contact_force(name))
    for name in res.force_elements:
        if name != "gravity":
            put(name, ("F" + c for c in XYZ), _per_step(res.applied_force(name)))
            put(name, ("M" + c for c in XYZ), _per_step(res.applied_torque(name)))
        if name in res.element_work:
            out[f"{name}.work"] = res.element_work[name]
            out[f"{name}.stored"] = res.element_potential[name]
    return out


def to_dataframe(res):
    """``res`` as a pandas DataFrame, one row per output time (columns: module docstring).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> bar = s.add_body("bar", mass=1.0, inertia=(1e-3, 0.0838, 0.0838), position=(0.5, 0, 0))
    >>> pin = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0), name="pin"))
    >>> df = nd.simulate(s, t_end=0.01, h=1e-3, progress=False).to_dataframe()
    >>> df[["t", "bar.x", "bar.z", "pin.Fz"]].shape
    (11, 4)
    """
    import pandas as pd
    return pd.DataFrame(columns(res))
