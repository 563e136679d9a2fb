"""Result of a simulation: arrays, per-step statistics, named lookups, save/load."""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import reprlib
import secrets
import socket
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np


@dataclass
class StepStats:
    """Per-step record, each array of shape (n_steps,), aligned with ``Result.t[1:]``.

    Attributes
    ----------
    solver : str array      which solver produced the accepted step ("direct", "qpoases", "ipopt", ...)
    status : str array      that solver's status ("solved", IPOPT's return status, ...)
    iterations : int array  solver iterations (0 for the closed-form solve, -1 when not reported)
    wall_time : float array seconds spent on the step, retries included
    eom_residual : float    max |M vdot + S - Q_A - Pi^T mu - Pi_g^T lambda| (N, N m)
    constraint_violation    max |Phi_eq(q, t)| at the end of the step (true, not linearised)
    norm_error              max over bodies of | |p| - 1 |
    min_gap                 smallest true gap at the end of the step (inf without gaps)
    complementarity         max |lambda_j * g_lin,j| (impulse x velocity units)
    retries : int array     attempts rejected before the accepted one
    projection_change       largest change made by the post-step projection (0 when off)
    gap_iterations : int    contact iterations after the step's first solve
    contact_changed : bool  whether the set of gaps carrying force changed in the step
    contact_scheme : str    the contact scheme that produced the step ("cone", "end_normal",
                            "linearised"; "" without gaps)
    contact_fallback : bool the step's primary contact scheme did not converge and its
                            fallback (``StepperSettings.contact_fallback``) was tried
    contact_error : float   the accepted step's distance from the end-of-step contact
                            conditions (m): penetration, open gaps carrying force, and the
                            last iteration's change of the end position
    projection_energy       potential energy changed by the post-step projection (J)
    """

    solver: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="U16"))
    status: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="U48"))
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    wall_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    eom_residual: np.ndarray = field(default_factory=lambda: np.zeros(0))
    constraint_violation: np.ndarray = field(default_factory=lambda: np.zeros(0))
    norm_error: np.ndarray = field(default_factory=lambda: np.zeros(0))
    min_gap: np.ndarray = field(default_factory=lambda: np.zeros(0))
    complementarity: np.ndarray = field(default_factory=lambda: np.zeros(0))
    retries: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    projection_change: np.ndarray = field(default_factory=lambda: np.zeros(0))
    gap_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    contact_changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    contact_scheme: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="U16"))
    contact_fallback: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    contact_error: np.ndarray = field(default_factory=lambda: np.zeros(0))
    projection_energy: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_steps(self) -> int:
        return len(self.wall_time)

    def summary(self) -> dict:
        """Counters over the run: steps, retries, iterations, wall time (median, p90, total)."""
        n = self.n_steps
        if n == 0:
            return {"n_steps": 0}
        it = self.iterations[self.iterations >= 0]
        return {
            "n_steps": n,
            "n_retried_steps": int(np.count_nonzero(self.retries)),
            "total_iterations": int(it.sum()) if it.size else -1,
            "mean_iterations": float(it.mean()) if it.size else float("nan"),
            "wall_time_total": float(self.wall_time.sum()),
            "wall_time_median": float(np.median(self.wall_time)),
            "wall_time_p90": float(np.percentile(self.wall_time, 90)),
            "max_eom_residual": float(self.eom_residual.max()),
            "max_constraint_violation": float(self.constraint_violation.max()),
            "max_norm_error": float(self.norm_error.max()),
            "n_contact_fallback_steps": int(np.count_nonzero(self.contact_fallback)),
            "max_contact_error": float(self.contact_error.max()),
            "solvers": {s: int(np.count_nonzero(self.solver == s)) for s in np.unique(self.solver)},
        }


class ResultFileError(ValueError):
    """A result file that cannot be read back faithfully, or a result that cannot be saved so
    that it can; the message names the file and lists every problem found.

    Attributes
    ----------
    path : pathlib.Path  the file
    problems : list of str  one line per problem, each starting with the key concerned
    """

    def __init__(self, path, problems, what="not a readable nlpdyn result file"):
        self.path, self.problems = Path(path), list(problems)
        sep = " " if len(self.problems) == 1 else "\n  - "
        super().__init__(f"{path}: {what}:{sep}{sep.join(self.problems)}")


class Result:
    """Trajectory of a simulation (like scipy's OdeResult).

    Attributes
    ----------
    t : ndarray, shape (n_points,)          output times (every accepted step)
    h : ndarray, shape (n_points - 1,)      step sizes, h[i] = t[i+1] - t[i] (up to round-off in t)
    q : ndarray, shape (n_points, 7 n_bodies)   [r, p] per body
    v : ndarray, shape (n_points, 6 n_bodies)   [rdot (global), w' (body)] per body
    energy, kinetic_energy, potential_energy : ndarray, shape (n_points,)
    success : bool       True when t_end was reached: every step met the stated per-step
        tolerances (``check_tol``, ``energy_tol``, ``violation_check``, ``max_penetration``,
        the solvers' own); what the run as a whole shows of its discretisation (energy
        against ``discretisation_warning``, joint drift against ``drift_warning``) and the
        initial projection's change of the given state are in ``info["warnings"]`` (also
        issued as warnings), or make it False with ``strict=True``
    status : int         0 reached t_end, -1 stopped by a failed step
    message : str        why the run stopped
    stats : StepStats    per-step record
    initial_projection : dict   how much the initial conditions were changed (empty if not)
    force_elements : dict  name -> body names of every force element (gravity included)
    element_work, element_potential : dict  name -> ndarray (n_points,): work done by the
        element on the bodies since t[0], and its stored energy (0 without a potential);
        see :meth:`dissipated`
    ledger : dict  the energy ledger's cumulative columns; see :meth:`energy_ledger`
    friction_vectors : dict  clearance joint with friction -> (n_points - 1, n_gaps, 3): the
        tangential contact forces on the child; see :meth:`contact_friction_vector`
    reaction_q : ndarray (n_points - 1, 7 n_bodies) or None  per step, the configuration its
        reactions act at (its start with scheme "euler", its midpoint with "midpoint"), which
        :meth:`joint_forces` resolves them in; None (a file before format version 2): each
        step's start, from ``q``

    Lookups (``position``, ``reaction_force``, ``gap``, ...) take a body or element itself
    or its name.
    """

    def __init__(self, t, q, v, h, energy, kinetic_energy, potential_energy, stats, mu, lam,
                 gaps, body_names, constraint_rows, gap_rows, wrenches, success, status,
                 message, initial_projection=None, info=None, contact_points=None,
                 contact_vectors=None, force_elements=None, element_work=None,
                 element_potential=None, ledger=None, memory=None, friction=None,
                 friction_vectors=None, reaction_q=None):
        self.t, self.q, self.v, self.h = t, q, v, h
        self.energy, self.kinetic_energy, self.potential_energy = energy, kinetic_energy, potential_energy
        self.stats, self.mu, self.lam, self.gaps = stats, mu, lam, gaps
        self.body_names = list(body_names)
        self.constraint_rows = dict(constraint_rows)  # name -> (start, stop, [body names])
        self.gap_rows = dict(gap_rows)
        # per step, where its reactions act (the step's start, or its midpoint); None: the
        # start of each step, taken from ``q``
        self.reaction_q = reaction_q
        self.wrenches = wrenches  # name -> (n_steps, n_el_bodies, 6): [f global, n about CoM global]
        self.success, self.status, self.message = bool(success), int(status), str(message)
        self.initial_projection = initial_projection or {}
        self.info = info or {}
        self.contact_points = contact_points or {}    # name -> (n_points, n_gaps, 3)
        self.contact_vectors = contact_vectors or {}  # name -> (n_steps, n_gaps, 3)
        self.force_elements = dict(force_elements or {})
        self.element_work = element_work or {}
        self.element_potential = element_potential or {}
        self.ledger = dict(ledger or {})   # column -> cumulative J (n_points,); energy_ledger()
        self.memory = dict(memory or {})   # force element -> its memory (n_points, size)
        self.friction = dict(friction or {})   # friction element -> force per step (n_steps,)
        # clearance joints with friction: name -> (n_steps, n_gaps, 3)
        self.friction_vectors = dict(friction_vectors or {})

    # ------------------------------------------------------------------ lookups
    # Every lookup takes a name or the body or element itself (its ``name``): _name_of.
    def _body(self, name):
        name = _name_of(name)
        if name not in self.body_names:
            raise KeyError(f"no body named {name!r}; bodies: {self.body_names}")
        return self.body_names.index(name)

    def position(self, body: str) -> np.ndarray:
        """Centre-of-mass position, global, shape (n_points, 3)."""
        k = self._body(body)
        return self.q[:, 7 * k:7 * k + 3]

    def orientation(self, body: str) -> np.ndarray:
        """Euler parameters [e0, e1, e2, e3], shape (n_points, 4)."""
        k = self._body(body)
        return self.q[:, 7 * k + 3:7 * k + 7]

    def velocity(self, body: str) -> np.ndarray:
        """Centre-of-mass velocity, global, shape (n_points, 3)."""
        k = self._body(body)
        return self.v[:, 6 * k:6 * k + 3]

    def angular_velocity(self, body: str, frame: str = "body") -> np.ndarray:
        """Angular velocity, shape (n_points, 3), in the body frame (default) or "global"."""
        k = self._body(body)
        w = self.v[:, 6 * k + 3:6 * k + 6]
        if frame == "body":
            return w
        if frame == "global":
            return np.einsum("nij,nj->ni", self.rotation(body), w)
        raise ValueError("frame must be 'body' or 'global'")

    def rotation(self, body: str) -> np.ndarray:
        """Rotation matrices A (body -> global) of the normalised Euler parameters (the stored
        ones carry the stepper's O(h^2) norm error), shape (n_points, 3, 3)."""
        from .rotations import rotation_matrices
        return rotation_matrices(self.orientation(body))

    def multipliers(self, name: str) -> np.ndarray:
        """Lagrange multipliers mu of a bilateral element, shape (n_steps, n_equations)."""
        start, stop, _ = self._rows(name)
        return self.mu[:, start:stop]

    def _rows(self, name):
        name = _name_of(name)
        if name in self.constraint_rows:
            return self.constraint_rows[name]
        if name in self.gap_rows:
            return self.gap_rows[name]
        if name in self.force_elements:
            return 0, 0, self.force_elements[name]
        raise KeyError(f"no element named {name!r}; elements: "
                       f"{list(self.constraint_rows) + list(self.gap_rows) + list(self.force_elements)}")

    def _force_element(self, name):
        name = _name_of(name)
        if name not in self.force_elements:
            raise KeyError(f"no force element named {name!r}; force elements: {list(self.force_elements)}")

    def applied_force(self, name: str, body: str | None = None) -> np.ndarray:
        """Force of force element ``name`` on ``body`` (default: its last body) as the step
        used it (start of step when explicit, end when implicit), global, shape (n_steps, 3),
        aligned with ``t[1:]``."""
        self._force_element(name)
        return self._wrench(name, body)[:, :3]

    def applied_torque(self, name: str, body: str | None = None) -> np.ndarray:
        """Moment of force element ``name`` on ``body`` about its centre of mass, global,
        shape (n_steps, 3)."""
        self._force_element(name)
        return self._wrench(name, body)[:, 3:]

    def dissipated(self, name: str | None = None) -> np.ndarray:
        """Energy taken out of the system by force element ``name`` since t[0] (J), shape
        (n_points,): -(work done + change of stored energy). Zero for a conservative law up to
        the time discretisation; None: the sum over all force elements."""
        names = list(self.force_elements) if name is None else [_name_of(name)]
        total = np.zeros(len(self.t))
        for n in names:
            self._force_element(n)
            pot = self.element_potential[n]
            total -= self.element_work[n] + pot - pot[0]
        return total

    def friction_force(self, name: str) -> np.ndarray:
        """Joint friction of :class:`~nlpdyn.LuGreFriction` ``name`` in each step: the force
        (N; prismatic, cylindrical) or torque (N m; revolute) along the joint's coordinate on
        the child, as the step used it (at its end), shape (n_steps,), aligned with ``t[1:]``."""
        self._friction(name)
        return self.friction[name]

    def friction_normal_force(self, name: str) -> np.ndarray:
        """The joint normal force f_n (N) each step of friction element ``name`` met its
        friction with (the step's own reaction), shape (n_steps,), aligned with ``t[1:]``."""
        self._friction(name)
        return self.memory[name][1:, 2]

    def friction_state(self, name: str) -> np.ndarray:
        """The bristle deflection z of friction element ``name`` (rad or m; presliding
        displacement), shape (n_points,), aligned with ``t``."""
        self._friction(name)
        return self.memory[name][:, 0]

    def _friction(self, name):
        if name not in self.friction:
            raise KeyError(f"no friction element named {name!r}; friction elements: "
                           f"{list(self.friction)}")

    def energy_ledger(self):
        """Where the energy went: a pandas DataFrame, one row per output time.

        Columns (J; works cumulative since t[0]):

        - ``t``; ``kinetic``; ``gravity`` (gravitational potential); ``stored:<element>`` for
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

        Examples
        --------
        >>> ledger = res.energy_ledger()                                # doctest: +SKIP
        >>> ledger.iloc[-1][["total", "impact:pin", "contact:pin", "residual"]]  # doctest: +SKIP
        """
        import pandas as pd
        if not self.ledger:
            raise ValueError("this result has no energy ledger (saved by an older nlpdyn)")
        table = {"t": self.t, "kinetic": self.kinetic_energy,
                 "gravity": self.element_potential.get("gravity", np.zeros(len(self.t)))}
        for name, pot in self.element_potential.items():
            if name != "gravity" and np.any(pot != 0):
                table[f"stored:{name}"] = pot
        carried = self.ledger.get("carried")
        if carried is not None:
            table["carried"] = carried
        table["total"] = self.kinetic_energy + sum(self.element_potential.values(),
                                                   np.zeros(len(self.t))) + (
            0.0 if carried is None else carried)
        table.update({k: col for k, col in self.ledger.items() if k != "carried"})
        return pd.DataFrame(table)

    def _gap_rows(self, name):
        name = _name_of(name)
        if name not in self.gap_rows:
            raise KeyError(f"no clearance joint named {name!r}; clearance joints: {list(self.gap_rows)}")
        return self.gap_rows[name]

    def gap(self, name: str) -> np.ndarray:
        """True (nonlinear) gaps of a clearance joint, shape (n_points, n_gaps), m."""
        start, stop, _ = self._gap_rows(name)
        return self.gaps[:, start:stop]

    def contact_force(self, name: str) -> np.ndarray:
        """Normal contact force magnitudes lambda (N), shape (n_points, n_gaps); row i is
        the force of the step ending at t[i] (row 0 is zero)."""
        start, stop, _ = self._gap_rows(name)
        return np.vstack([np.zeros((1, stop - start)), self.lam[:, start:stop]])

    def contact_point(self, name: str) -> np.ndarray:
        """Contact point of every gap, global, shape (n_points, n_gaps, 3)."""
        self._gap_rows(name)
        return self.contact_points[_name_of(name)]

    def contact_force_vector(self, name: str) -> np.ndarray:
        """Contact force of every gap on the joint's child body, global, shape
        (n_points, n_gaps, 3) (row 0 is zero)."""
        start, stop, _ = self._gap_rows(name)
        return np.concatenate([np.zeros((1, stop - start, 3)),
                               self.contact_vectors[_name_of(name)]])

    def contact_friction_vector(self, name) -> np.ndarray:
        """Tangential (Coulomb friction) contact force of every gap on the joint's child body,
        global, shape (n_points, n_gaps, 3) (row 0 is zero; all zero for a joint without
        friction).

        Examples
        --------
        >>> res.contact_friction_vector("pin")[-1]          # doctest: +SKIP
        """
        start, stop, _ = self._gap_rows(name)
        steps = np.zeros((len(self.t) - 1, stop - start, 3))
        return np.concatenate([np.zeros((1, stop - start, 3)),
                               self.friction_vectors.get(_name_of(name), steps)])

    def contact_friction(self, name) -> np.ndarray:
        """Tangential (Coulomb friction) contact force magnitudes (N), shape (n_points,
        n_gaps), beside ``contact_force``; at most the friction coefficient times it (to the
        polygon's 1 - cos(pi/8) inside the cone, docs/guide/friction.md "Coulomb friction in
        clearance joints").

        Examples
        --------
        >>> res.contact_friction("pin").max()               # doctest: +SKIP
        """
        return np.linalg.norm(self.contact_friction_vector(name), axis=2)

    def _wrench(self, name, body):
        name, body = _name_of(name), _name_of(body)
        bodies = self._rows(name)[2]
        if body is None:
            body = bodies[-1]
        if body not in bodies:
            raise KeyError(f"{name!r} acts on {bodies}, not on {body!r}")
        return self.wrenches[name][:, bodies.index(body)]

    def reaction_force(self, name: str, body: str | None = None) -> np.ndarray:
        """Constraint force of joint ``name`` (ideal or clearance: the resultant of its
        contacts) on ``body`` (default: its child), global, shape (n_steps, 3), aligned with
        ``t[1:]``."""
        return self._wrench(name, body)[:, :3]

    def reaction_torque(self, name: str, body: str | None = None) -> np.ndarray:
        """Constraint moment of element ``name`` on ``body`` (default: its child) about the
        joint point (about the centre of mass for elements without a point), global,
        shape (n_steps, 3)."""
        return self._wrench(name, body)[:, 3:]

    # ------------------------------------------------------------------ save / load
    def save(self, path) -> Path:
        """Write everything to a compressed ``.npz`` (no pickles), atomically.

        Parameters
        ----------
        path : str or path-like
            The file; ``.npz`` is appended unless the name ends with it (as numpy and
            :meth:`load` do).

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        ResultFileError
            This result would not load back as it is (inconsistent shapes, object arrays,
            ...); nothing is written.
        ValueError
            The metadata (``info``, ``initial_projection``, ...) holds what JSON cannot:
            anything but dicts with str keys, lists, tuples, str, numbers, bools and None
            (each such entry named by its keys, all at once); nothing is written.

        Notes
        -----
        The archive goes to a new temporary file beside the target, is flushed to disk and
        renamed onto the target (``os.replace``): a save that fails leaves an existing file
        as it was and no temporary file behind. A save killed outright (kill -9) cannot
        clean up: the next save to the same target removes such leftovers
        (``.<name>.<host>-<pid>.<hex>.tmp`` of a process that has ended, or any unchanged for
        :data:`STALE_AGE` s), never the file of a writer still running. ``__meta__`` holds
        the metadata as strict JSON: non-finite floats as ``{"__float__": "nan" | "inf" | "-inf"}``, tuples as
        lists.
        """
        target = _npz_path(path)
        arrays = {key: np.asarray(a) for key, a in self._arrays().items()}
        unsaveable = []
        meta = {k: _encode(v, k, unsaveable) for k, v in self._meta().items()}
        if unsaveable:
            raise ValueError("cannot save the metadata:\n  - " + "\n  - ".join(unsaveable))
        text = json.dumps(meta, allow_nan=False)
        problems = _problems(arrays, *_parse_meta(text))
        if problems:
            raise ResultFileError(target, problems, "cannot be written from this result")
        return _write_atomically(
            target, lambda file: np.savez_compressed(file, __meta__=np.array(text), **arrays))

    def _arrays(self) -> dict:
        """Every array, by its key in the file."""
        arrays = {"t": self.t, "q": self.q, "v": self.v, "h": self.h, "energy": self.energy,
                  "kinetic_energy": self.kinetic_energy, "potential_energy": self.potential_energy,
                  "mu": self.mu, "lam": self.lam, "gaps": self.gaps}
        for f in fields(StepStats):
            arrays["stats__" + f.name] = getattr(self.stats, f.name)
        for prefix, named in (("wrench__", self.wrenches), ("cpoint__", self.contact_points),
                              ("cforce__", self.contact_vectors), ("ework__", self.element_work),
                              ("epot__", self.element_potential), ("ledger__", self.ledger),
                              ("memory__", self.memory), ("friction__", self.friction),
                              ("cfric__", self.friction_vectors)):
            arrays.update({prefix + name: a for name, a in named.items()})
        if self.reaction_q is not None:
            arrays["reaction_q"] = self.reaction_q
        return arrays

    def _meta(self) -> dict:
        """Everything else, for ``__meta__``."""
        return {"format": FORMAT, "version": FORMAT_VERSION, "body_names": self.body_names,
                "constraint_rows": self.constraint_rows, "force_elements": self.force_elements,
                "gap_rows": self.gap_rows, "success": self.success, "status": self.status,
                "message": self.message, "initial_projection": self.initial_projection,
                "info": self.info}

    @classmethod
    def load(cls, path) -> "Result":
        """Read a file written by :meth:`save`, checking it first.

        Parameters
        ----------
        path : str or path-like
            The file; ``.npz`` is appended unless the name ends with it (as :meth:`save` does).

        Returns
        -------
        Result
            Every array as it was saved (bit for bit) and the metadata.

        Raises
        ------
        FileNotFoundError
            There is no such file.
        ResultFileError
            The file is damaged or does not hold a consistent result (shapes, dtypes,
            metadata; and values: ``t``, ``h``, ``q``, ``v`` and the energies finite, ``t``
            strictly increasing, ``h`` positive and at most ``t[i + 1] - t[i]``, equal to it
            up to round-off when the run kept every step, ``info["run"]["n_steps"]``): the
            message names the file and lists every problem found, each with its key. A file
            without a format version (saved before nlpdyn had one) is read as version 0
            when it passes the same checks.
        """
        path = _npz_path(path)
        with open(path, "rb") as file:
            if file.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                raise ResultFileError(path, ["not an .npz archive (no zip header)"])
            file.seek(0)
            arrays, key = {}, None      # key: the member being read
            try:
                with np.load(file, allow_pickle=False) as data:
                    for key in data.files:
                        arrays[key] = np.asarray(data[key])
            except Exception as err:    # zipfile, zlib and numpy raise many types on damaged bytes
                reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
                raise ResultFileError(path, [f"{key}: {reason}" if key else reason]) from err
        text = arrays.pop("__meta__", None)
        if text is None:
            raise ResultFileError(path, ["__meta__: missing"])
        if text.dtype.kind != "U" or text.ndim:
            raise ResultFileError(path, [f"__meta__: expected a str, got {text.dtype} of shape "
                                         f"{text.shape}"])
        try:
            meta, nonstrict = _parse_meta(str(text))
        except (ValueError, RecursionError) as err:
            raise ResultFileError(path, [f"__meta__: not JSON ({err})"]) from err
        problems = _problems(arrays, meta, nonstrict)
        if problems:
            raise ResultFileError(path, problems)

        def named(prefix):
            return {k[len(prefix):]: a for k, a in arrays.items() if k.startswith(prefix)}
        stats = StepStats(**named("stats__"))
        rows = {k: tuple(v[:2]) + (list(v[2]),) for k, v in meta["constraint_rows"].items()}
        gap_rows = {k: tuple(v[:2]) + (list(v[2]),) for k, v in meta["gap_rows"].items()}
        return cls(arrays["t"], arrays["q"], arrays["v"], arrays["h"], arrays["energy"],
                   arrays["kinetic_energy"], arrays["potential_energy"], stats, arrays["mu"],
                   arrays["lam"], arrays["gaps"], meta["body_names"], rows, gap_rows,
                   named("wrench__"), meta["success"], meta["status"], meta["message"],
                   meta["initial_projection"], meta["info"], named("cpoint__"),
                   named("cforce__"), meta["force_elements"], named("ework__"),
                   named("epot__"), named("ledger__"), named("memory__"), named("friction__"),
                   named("cfric__"), arrays.get("reaction_q"))

    # ------------------------------------------------------------------ display
    def summary(self) -> str:
        """A short human-readable account of the run."""
        s = self.stats.summary()
        # counters over every step (the stats arrays hold the kept steps only)
        s.update({k: v for k, v in self.info.get("run", {}).items() if k in s or k == "min_gap"})
        kept = (f", {len(self.t) - 1} kept (output_every = {self.info['output_every']})"
                if self.info.get("output_every", 1) > 1 else "")
        lines = [f"{'success' if self.success else 'FAILED'}: {self.message}",
                 f"t = {self.t[0]:.6g} .. {self.t[-1]:.6g} s in {s.get('n_steps', 0)} steps{kept}"
                 + (f" (h {self.h.min():.3g} .. {self.h.max():.3g} s)" if len(self.h) else "")
                 + (f", scheme {self.info['scheme']}" if "scheme" in self.info else "")]
        if s.get("n_steps"):
            if "wall_time" in self.info:
                lines.append(f"simulate() took {self.info['wall_time']:.3g} s (set-up "
                             f"{self.info['setup_time']:.3g} s, result assembly included)")
            lines.append(f"inside the steps {s['wall_time_total']:.3g} s, per kept step median "
                         f"{1e3 * s['wall_time_median']:.3g} ms, p90 {1e3 * s['wall_time_p90']:.3g} ms; "
                         f"retried steps {s['n_retried_steps']}")
            lines.append(f"max EOM residual {s['max_eom_residual']:.2e}, max constraint violation "
                         f"{s['max_constraint_violation']:.2e}, max ||p|-1| {s['max_norm_error']:.2e}")
            if self.gap_rows:
                lines.append(f"contact ({self.info.get('contact', '?')}): min gap "
                             f"{s.get('min_gap', self.gaps.min()):.2e} m, "
                             f"{s['n_contact_fallback_steps']} steps by "
                             f"the fallback, mean iterations {self.stats.gap_iterations.mean():.2f}")
        control = self.info.get("error_control")
        if control:
            lines.append(f"error control: rtol {control['rtol']:g}, atol {control['atol']:g}; "
                         f"{control['solves']} solves, {control['rejected_pairs']} pairs of "
                         f"steps taken again, largest estimate {control['largest_error']:.2f} "
                         "of the tolerance")
        jit = self.info.get("jit")
        if jit and (jit.get("mode", True) is True or jit["compiled"] or jit["cached"]
                    or jit.get("building") or jit.get("started")):
            left = "; interpreted: " + "; ".join(f"{name} ({why})" for name, why
                                                 in jit["interpreted"].items())
            switched = (f", switched to at t = {jit['switched'][-1]:.6g} s"
                        if jit.get("switched") else "")
            building = (f"; building for the next run: {', '.join(jit['building'])}"
                        if jit.get("building") else "")
            lines.append(f"compiled (jit): {jit['compiled']} built in {jit['seconds']:.3g} s"
                         f"{switched}, {jit['cached']} from the cache"
                         + (left if jit["interpreted"] else "") + building)
        if len(self.energy):
            lines.append(f"energy {self.energy[0]:.9g} -> {self.energy[-1]:.9g} J "
                         f"(range {np.ptp(self.energy):.3e} J)")
        lines += [f"warning: {w}" for w in self.info.get("warnings", [])]
        if self.initial_projection.get("changed"):
            lines.append("initial conditions projected, largest change per quantity: "
                         + _largest_changes(self.initial_projection))
        return "\n".join(lines)

    def __repr__(self):
        return f"<Result {self.message!r}, {len(self.t)} points>"

    def plot(self, *args, **kwargs):
        """Quick overview plot (see :func:`nlpdyn.plotting.plot_result`)."""
        from .plotting import plot_result
        return plot_result(self, *args, **kwargs)

    # ------------------------------------------------------------------ joint modes
    def _joint_data(self, name):
        joints = self.info.get("joints", {})
        if name not in joints:
            raise KeyError(f"no ideal or clearance joint named {name!r}; joints: {list(joints)}")
        return joints[name]

    def _joint_frames(self, data):
        """Per step: the joint frame's axes (global, columns; (n_steps, 3, 3)) and the child's
        rotation where its reactions act: the step's start (scheme "euler") or its midpoint
        (scheme "midpoint")."""
        q0 = self.reaction_q
        if q0 is None:
            # a loaded or resampled result: each kept step must start at the point before it
            if not np.allclose(np.diff(self.t), self.h, rtol=1e-9, atol=0):
                raise ValueError("this result keeps only some steps (output_every > 1 or "
                                 "t_eval) and not where they started, which joint forces "
                                 "need; run with every step kept")
            q0 = self.q[:-1]
        from .rotations import rotation_matrices

        def rotation(body):
            if body not in self.body_names:     # the ground
                return np.broadcast_to(np.eye(3), (len(q0), 3, 3))
            k = self.body_names.index(body)
            return rotation_matrices(q0[:, 7 * k + 3:7 * k + 7])
        return rotation(data["parent"]) @ np.array(data["frame"]), rotation(data["child"])

    def joint_modes(self, name: str) -> dict:
        """Mode vectors of joint ``name`` (seed 004, eqs. 3.18-3.19), in twist coordinates
        [Omega; V] of the child relative to the parent, resolved in the parent's joint frame
        (``joint.frame()``). A clearance joint has its nominal ideal joint's modes.

        Returns
        -------
        dict
            ``"free"`` (6, f), ``"constrained"`` (6, 6 - f) and ``"dual"`` (6, 6) =
            inv([free, constrained]).T; ``"excited"``: the columns of ``constrained`` that
            kinematic excitations (drivers included) prescribe, the joint's free modes they
            took over. A universal joint's modes follow its angle: arrays per step,
            (n_steps, 6, k), at each step's start.

        Examples
        --------
        >>> res.joint_modes("pivot")["free"].ravel()                  # doctest: +SKIP
        array([0., 0., 1., 0., 0., 0.])
        """
        from .joints.modes import JointModes
        data = self._joint_data(name)
        free = np.array(data["free"], dtype=float).reshape(6, -1)
        constrained = np.array(data["constrained"], dtype=float).reshape(6, -1)
        if "child_axis" in data:                # universal joint: axis2 as the child carries it
            E, R_child = self._joint_frames(data)
            u = np.einsum("nji,njk,k->ni", E, R_child, np.array(data["child_axis"]))
            e1 = np.broadcast_to(np.eye(3)[0], u.shape)
            zero = np.zeros_like(u)
            free = np.stack([np.c_[e1, zero], np.c_[u, zero]], axis=-1)
            constrained = np.concatenate([np.c_[np.cross(e1, u), zero][..., None],
                                          np.broadcast_to(np.r_[np.zeros((3, 3)), np.eye(3)],
                                                          (len(u), 6, 3))], axis=-1)
            return {"free": free, "constrained": constrained, "excited": [],
                    "dual": np.linalg.inv(np.concatenate([free, constrained], axis=-1))
                    .transpose(0, 2, 1)}
        return JointModes(free, constrained).excite(data["excited_modes"]).as_dict()

    def joint_forces(self, name: str, applied=()) -> dict:
        """The interaction across joint ``name`` (ideal, or clearance: its contacts) split
        along its modes (seed 004, eqs. 3.28-3.34), per step (aligned with ``t[1:]``).

        A = [moment; force] is the wrench on the child, the moment about the child's
        attachment point (the joint point), resolved in the parent's joint frame: the joint's
        reaction (``reaction_force``, ``reaction_torque``), that of every kinematic excitation
        or driver on the joint, and that of the force elements named in ``applied`` (springs,
        motors acting across the joint: the seed's applied interactions A_e).

        Parameters
        ----------
        name : str
            The joint.
        applied : sequence of str
            Force elements acting on the joint's child whose wrenches count in A.

        Returns
        -------
        dict
            ``"applied"`` (n_steps, f) = phi^T A, the generalised applied forces along the
            free modes (zero for an ideal joint alone; what a motor or spring in ``applied``
            carries); ``"constraint"`` (n_steps, 6 - f) = phi_bar^T A, the generalised
            constraint forces along the constrained modes (an excited mode's column is the
            force that maintains the excitation); ``"wrench"`` (n_steps, 6): A.

        Examples
        --------
        >>> f = res.joint_forces("pivot", applied=["motor"])             # doctest: +SKIP
        >>> f["applied"][:, 0]       # the motor torque about the axis   # doctest: +SKIP
        """
        from .joints.modes import split
        data = self._joint_data(name)
        E, R_child = self._joint_frames(data)
        arm = R_child @ np.array(data["child_point"])           # joint point - child's CoM
        members = [(name, True)] + [tuple(x) for x in data["excitations"]]
        for element in applied:
            self._force_element(element)
            members.append((element, False))
        force = np.zeros((len(E), 3))
        moment = np.zeros((len(E), 3))
        for element, about_point in members:
            wrench = self._wrench(element, data["child"])
            if not about_point:
                if data["child"] not in self.body_names:
                    raise ValueError(f"{element!r}: moments about the ground's centre of mass "
                                     f"do not add up; make {name!r}'s child a body")
                wrench = np.c_[wrench[:, :3], wrench[:, 3:] - np.cross(arm, wrench[:, :3])]
            force += wrench[:, :3]
            moment += wrench[:, 3:]
        A = np.c_[np.einsum("nji,nj->ni", E, moment), np.einsum("nji,nj->ni", E, force)]
        modes = self.joint_modes(name)
        return {**split(A, modes["free"], modes["constrained"]), "wrench": A}

    # ------------------------------------------------------------------ tables, animation, 3D view
    def to_dataframe(self):
        """The result as a pandas DataFrame, one row per output time, columns
        ``<body or element>.<quantity>`` (``crank.x``, ``crank.q0``, ``crank.wx``,
        ``pin.Fx``, ``pin.gap0``, ...; the list in :mod:`nlpdyn.tables`)."""
        from .tables import to_dataframe
        return to_dataframe(self)

    def to_csv(self, path) -> Path:
        """Write :meth:`to_dataframe` to a CSV file (no index column), atomically as
        :meth:`save` does, floats in their shortest round-trip form; ``pandas.read_csv(path)``
        reads it back. Returns the path written."""
        target = Path(path)
        text = self.to_dataframe().to_csv(index=False)
        return _write_atomically(target, lambda file: file.write(text.encode()))

    def _at_rows(self, rows) -> "Result":
        """This result at the output points ``rows`` (increasing indices into ``t``, 0 first);
        per-step arrays are those of the step ending at each kept point (``simulate``'s
        ``t_eval``)."""
        rows = np.asarray(rows, dtype=int)
        steps = rows[1:] - 1

        def at(arrays, index):
            return {name: a[index] for name, a in arrays.items()}
        stats = StepStats(**{f.name: getattr(self.stats, f.name)[steps] for f in fields(StepStats)})
        return Result(self.t[rows], self.q[rows], self.v[rows], self.h[steps], self.energy[rows],
                      self.kinetic_energy[rows], self.potential_energy[rows], stats,
                      self.mu[steps], self.lam[steps], self.gaps[rows], self.body_names,
                      self.constraint_rows, self.gap_rows, at(self.wrenches, steps),
                      self.success, self.status, self.message, self.initial_projection,
                      self.info, at(self.contact_points, rows), at(self.contact_vectors, steps),
                      self.force_elements, at(self.element_work, rows),
                      at(self.element_potential, rows), at(self.ledger, rows),
                      memory=at(self.memory, rows), friction=at(self.friction, steps),
                      friction_vectors=at(self.friction_vectors, steps),
                      reaction_q=None if self.reaction_q is None else self.reaction_q[steps])

    def animate(self, path, fps: float = 25.0, magnify_clearance: float = 1.0, **options) -> Path:
        """Write an animation of the bodies' shapes to ``path`` (.gif, or .mp4 with ffmpeg);
        ``magnify_clearance`` exaggerates the journals' offsets in clearance joints
        (:func:`nlpdyn.animation.animate`, which lists the other options)."""
        from .animation import animate
        return animate(self, path, fps=fps, magnify_clearance=magnify_clearance, **options)

    def view_html(self, path, **options) -> Path:
        """Write an interactive 3D view to a self-contained HTML file (plotly;
        :func:`nlpdyn.viewer.view_html`)."""
        from .viewer import view_html
        return view_html(self, path, **options)

    # ------------------------------------------------------------------ orbit plots
    def plot_orbit(self, joints, system=None, ax=None, title=None):
        """Journal orbit of clearance joints inside their clearance circles (see
        :func:`nlpdyn.plotting.plot_orbit`). ``joints``: joint objects or names, one or a
        list; names are looked up in ``system`` (the system that was run)."""
        from .plotting import plot_orbit
        items = list(joints) if isinstance(joints, (list, tuple)) else [joints]
        if any(isinstance(j, str) for j in items):
            if system is None:
                raise ValueError("plot_orbit: give the system that was run to look up joints "
                                 f"by name ({[j for j in items if isinstance(j, str)]})")
            known = {j.name: j for j in system.gaps}
            missing = [j for j in items if isinstance(j, str) and j not in known]
            if missing:
                raise KeyError(f"no clearance joint named {missing}; clearance joints: "
                               f"{list(known)}")
            items = [known[j] if isinstance(j, str) else j for j in items]
        return plot_orbit(self, items, ax=ax, title=title)


FORMAT = "nlpdyn-result"
FORMAT_VERSION = 2          # 0: files from before the format had a version (same layout); 2: reaction_q
_ZIP_MAGIC = b"PK\x03\x04"  # every archive numpy writes starts with a zip local header
_FLOAT_TAG = "__float__"       # {"__float__": "inf"} in __meta__ is the float inf
_STATS_KINDS = {f.name: f.default_factory().dtype.kind for f in fields(StepStats)}
_KIND_NAMES = {"f": "floating point", "i": "integer", "b": "bool", "U": "str"}
_META_TYPES = {"body_names": list, "constraint_rows": dict, "gap_rows": dict,
               "force_elements": dict, "success": bool, "status": int, "message": str,
               "initial_projection": dict, "info": dict}


def _write_atomically(target: Path, write) -> Path:
    """``write(file)`` into a new temporary file beside ``target`` (binary), flushed to disk
    and renamed onto ``target``: a write that fails leaves an existing file as it was and no
    temporary file behind. Temporary files of ``target`` left by writers that were killed
    (kill -9, power loss) are removed first (:func:`_remove_stale_temporaries`)."""
    _remove_stale_temporaries(target)
    tmp = target.with_name(f".{target.name}.{_HOST}-{os.getpid()}.{secrets.token_hex(8)}.tmp")
    file = open(tmp, "xb")      # never an existing file; permissions as for any new file
    try:
        with file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


# a temporary file's name says who writes it: this host (a hash of its name) and process
_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
# .<target name>.[<host>-<pid>.]<16 hex>.tmp (no <host>-<pid> in names of earlier versions)
_TEMPORARY = re.compile(r"(?:(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)\.)?[0-9a-f]{16}")
STALE_AGE = 3600.0
"""Seconds after its last change when a temporary file whose writer cannot be checked (another
host, an older nlpdyn, Windows) counts as left behind by a dead writer."""


def _writer_is_dead(host, pid) -> bool:
    """Whether process ``pid`` of host ``host`` is known to have ended (False: alive or
    unknown)."""
    if host != _HOST or os.name == "nt":    # os.kill(pid, 0) would end the process on Windows
        return False
    if int(pid) == os.getpid():              # this process: maybe a save in another thread
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, OSError):    # alive (another user's) or unknown
        return False
    return False


def _remove_stale_temporaries(target: Path) -> list:
    """Remove the temporary files ``_write_atomically`` left beside ``target`` in runs that
    were killed: those whose writer process has ended, and any not changed for
    :data:`STALE_AGE` seconds. A live writer's file (another process saving the same target)
    is kept. Returns the paths removed; errors (a file gone meanwhile, no permission) are
    ignored."""
    prefix = f".{target.name}."
    removed = []
    try:
        entries = list(os.scandir(target.parent if str(target.parent) else "."))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        match = _TEMPORARY.fullmatch(name[len(prefix):-len(".tmp")])
        if match is None:
            continue
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AGE
            if old or (match["pid"] and _writer_is_dead(match["host"], match["pid"])):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


def _name_of(key):
    """The name of a body or element given itself (anything with a str ``name``) or its name."""
    name = getattr(key, "name", None)
    return name if isinstance(name, str) and not isinstance(key, str) else key


def _npz_path(path) -> Path:
    """``path``, with ``.npz`` appended unless its name ends with it (numpy's rule)."""
    path = Path(path)
    return path if path.name.endswith(".npz") else path.with_name(path.name + ".npz")


_JSON_SCALARS = (str, int, float, bool, type(None))


def _encode(x, where, problems):
    """``x`` for strict JSON: numpy scalars and arrays as Python values, tuples as lists, and
    non-finite floats as ``{"__float__": "nan" | "inf" | "-inf"}`` (:func:`_decode_float`).
    What JSON cannot hold is appended to ``problems``, named by ``where`` and its keys."""
    if isinstance(x, dict):
        if set(x) == {_FLOAT_TAG}:
            problems.append(f"{where}: a dict whose only key is {_FLOAT_TAG!r} (reserved)")
        bad = [k for k in x if not isinstance(k, str)]
        if bad:
            problems.append(f"{where}: keys must be str, got {reprlib.repr(bad)}")
        out = {k: _encode(v, f"{where}[{k!r}]", problems) for k, v in x.items()}
    elif isinstance(x, (list, tuple)):
        out = [_encode(v, f"{where}[{i}]", problems) for i, v in enumerate(x)]
    elif isinstance(x, (np.generic, np.ndarray)):
        out = _encode(x.tolist(), where, problems)
    elif isinstance(x, float) and not math.isfinite(x):
        out = {_FLOAT_TAG: repr(x)}
    elif isinstance(x, _JSON_SCALARS):
        out = x
    else:
        problems.append(f"{where}: a {type(x).__name__} ({reprlib.repr(x)}) is not JSON: "
                        "use dicts with str keys, lists, str, numbers, bools or None")
        out = None
    return out


def _decode_float(obj: dict):
    """JSON object hook: a tagged non-finite float back to a float (see :func:`_encode`)."""
    if obj.keys() == {_FLOAT_TAG} and obj[_FLOAT_TAG] in ("nan", "inf", "-inf"):
        return float(obj[_FLOAT_TAG])
    return obj


def _parse_meta(text: str):
    """``__meta__`` parsed, and whether it used JSON's non-strict NaN or Infinity (which
    nlpdyn wrote before format version 1)."""
    constants = []

    def constant(name):
        constants.append(name)
        return float(name)
    return json.loads(text, parse_constant=constant, object_hook=_decode_float), bool(constants)


def _is(value, kind) -> bool:
    """isinstance, with a bool not counted as an int."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _is_names(value) -> bool:
    """A list of str (body names)."""
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _problems(arrays: dict, meta, nonstrict_json: bool) -> list:
    """Everything wrong with a result file's arrays and parsed ``__meta__``, one line per bad
    key: missing or unexpected keys, wrong types, dtypes and shapes."""
    if not isinstance(meta, dict):
        return [f"__meta__: expected a JSON object, got {type(meta).__name__}"]
    if "format" in meta or "version" in meta:
        version = meta.get("version")
        if meta.get("format") != FORMAT:
            return [f'__meta__["format"]: expected {FORMAT!r}, got {reprlib.repr(meta.get("format"))}']
        if not _is(version, int) or version < 1:
            return [f'__meta__["version"]: expected a whole number >= 1, got {reprlib.repr(version)}']
        if version > FORMAT_VERSION:
            return [f'__meta__["version"]: {version}, written by a newer nlpdyn (this one reads '
                    f"up to {FORMAT_VERSION})"]
    else:
        version = 0
    problems = []
    if nonstrict_json and version >= 1:
        problems.append("__meta__: not strict JSON (NaN or Infinity)")
    problems += [f'__meta__["{key}"]: not part of the format' for key in meta
                 if key not in _META_TYPES and key not in ("format", "version")]
    for key, kind in _META_TYPES.items():
        if key not in meta:
            problems.append(f'__meta__["{key}"]: missing')
        elif not _is(meta[key], kind):
            problems.append(f'__meta__["{key}"]: expected {kind.__name__}, got '
                            f"{reprlib.repr(meta[key])}")
    meta = {key: meta[key] for key, kind in _META_TYPES.items() if key in meta and _is(meta[key], kind)}
    if "body_names" in meta and not _is_names(meta["body_names"]):
        problems.append('__meta__["body_names"]: expected a list of str')
        del meta["body_names"]

    # element name -> its bodies; row blocks (start, stop) of mu / lam and gaps
    bodies, blocks = {}, {"constraint_rows": {}, "gap_rows": {}}
    for key, block in blocks.items():
        for name, row in meta.get(key, {}).items():
            if (isinstance(row, list) and len(row) == 3 and _is(row[0], int) and _is(row[1], int)
                    and 0 <= row[0] <= row[1] and _is_names(row[2])):
                block[name], bodies[name] = tuple(row[:2]), row[2]
            else:
                problems.append(f'__meta__["{key}"]["{name}"]: expected [start, stop, [body '
                                f"names]] with 0 <= start <= stop, got {reprlib.repr(row)}")
    for name, names in meta.get("force_elements", {}).items():
        if _is_names(names):
            bodies[name] = names
        else:
            problems.append(f'__meta__["force_elements"]["{name}"]: expected a list of str')

    # dimensions: (symbol, size), size None where the metadata needed for it is bad
    t = arrays.get("t")
    n = len(t) if t is not None and t.ndim == 1 and len(t) else None
    if t is not None and t.ndim == 1 and not len(t):
        problems.append("t: no time points")
    n_bodies = len(meta["body_names"]) if "body_names" in meta else None

    def width(key):
        """Columns of mu ("constraint_rows") or lam and gaps ("gap_rows"); None if a row is bad."""
        known = key in meta and len(blocks[key]) == len(meta[key])
        return max((stop for _, stop in blocks[key].values()), default=0) if known else None
    points, steps = ("n_points", n), ("n_points - 1", n and n - 1)
    expected = {"t": ((points,), "f"), "h": ((steps,), "f"),
                "q": ((points, ("7 n_bodies", n_bodies and 7 * n_bodies)), "f"),
                "v": ((points, ("6 n_bodies", n_bodies and 6 * n_bodies)), "f"),
                "mu": ((steps, ("constraint rows", width("constraint_rows"))), "f"),
                "lam": ((steps, ("gap rows", width("gap_rows"))), "f"),
                "gaps": ((points, ("gap rows", width("gap_rows"))), "f")}
    for key in ("energy", "kinetic_energy", "potential_energy"):
        expected[key] = ((points,), "f")
    for name, kind in _STATS_KINDS.items():
        expected["stats__" + name] = ((steps,), kind)
    for name, names in bodies.items():
        expected["wrench__" + name] = ((steps, (f"bodies of {name}", len(names)), ("6", 6)), "f")
    for name, (start, stop) in blocks["gap_rows"].items():
        gaps = (f"gaps of {name}", stop - start)
        expected["cpoint__" + name] = ((points, gaps, ("3", 3)), "f")
        expected["cforce__" + name] = ((steps, gaps, ("3", 3)), "f")
        if "cfric__" + name in arrays:      # optional: clearance joints with friction
            expected["cfric__" + name] = ((steps, gaps, ("3", 3)), "f")
    for name in meta.get("force_elements", {}):
        expected["ework__" + name] = expected["epot__" + name] = ((points,), "f")
    for key in arrays:
        if key.startswith("ledger__"):
            expected[key] = ((points,), "f")
        # optional (absent from files of older versions): force elements' memory, friction
        element = key.partition("__")[2]
        if key.startswith("memory__") and element in meta.get("force_elements", {}):
            expected[key] = ((points, ("memory size", None)), "f")
        if key.startswith("friction__") and element in meta.get("force_elements", {}):
            expected[key] = ((steps,), "f")
    if "reaction_q" in arrays:      # optional (version 2): where each step's reactions act
        expected["reaction_q"] = ((steps, ("7 n_bodies", n_bodies and 7 * n_bodies)), "f")

    well_formed = set()
    for key, (dims, kind) in expected.items():
        a = arrays.get(key)
        if a is None:
            problems.append(f"{key}: missing")
            continue
        if a.dtype.kind != kind:
            problems.append(f"{key}: dtype {a.dtype}, expected {_KIND_NAMES[kind]}")
        sizes = tuple(s for _, s in dims)
        if a.ndim != len(dims) or any(s is not None and s != got for got, s in zip(a.shape, sizes)):
            problems.append(f"{key}: shape {a.shape}, expected ({', '.join(sym for sym, _ in dims)})"
                            + ("" if None in sizes else f" = {sizes}"))
        elif a.dtype.kind == kind:
            well_formed.add(key)
    problems += [f"{key}: not part of the format (or of an element not in __meta__)"
                 for key in arrays if key not in expected]
    return problems + _value_problems(arrays, meta, well_formed)


_FINITE = ("t", "h", "q", "v", "energy", "kinetic_energy", "potential_energy")
"""Arrays whose every value is finite in any result (a step that produces a non-finite
state fails and is not recorded)."""


def _where(mask) -> str:
    """Where ``mask`` holds: how often, and the first index."""
    at = ", ".join(str(int(i)) for i in np.argwhere(mask)[0])
    return f"{np.count_nonzero(mask)} of {mask.size}, first at [{at}]"


def _value_problems(arrays: dict, meta: dict, well_formed: set) -> list:
    """What is wrong with the values of the well-formed arrays: non-finite states and
    energies, times not increasing, step sizes that do not fit the times."""
    problems = []
    for key in _FINITE:
        if key in well_formed and not np.isfinite(arrays[key]).all():
            bad = ~np.isfinite(arrays[key])
            problems.append(f"{key}: not finite ({_where(bad)}: {arrays[key][bad][0]})")
    finite = {key for key in ("t", "h") if key in well_formed and np.isfinite(arrays[key]).all()}
    if "t" in finite:
        t = arrays["t"]
        dt = np.diff(t)
        if (dt <= 0).any():
            i = int(np.argmax(dt <= 0))
            problems.append(f"t: not strictly increasing ({_where(dt <= 0)}: "
                            f"t[{i}] = {float(t[i])!r}, t[{i + 1}] = {float(t[i + 1])!r})")
        elif "h" in finite:
            problems += _step_problems(t, arrays["h"], meta)
    return problems


def _step_problems(t, h, meta) -> list:
    """``h`` against the increasing times ``t``. h[i] is the step that ended at t[i + 1]
    (t[i + 1] = t + h in the stepper, so equal to t[i + 1] - t[i] up to one rounding of
    t[i + 1]) when every step is kept; with ``output_every`` or ``t_eval`` some steps are
    not, and h[i] is only at most t[i + 1] - t[i]."""
    dt = np.diff(t)
    tol = 4 * np.finfo(float).eps * np.maximum(np.abs(t[1:]), np.abs(t[:-1]))
    if (h <= 0).any():
        return [f"h: not positive ({_where(h <= 0)})"]
    run = meta.get("info", {}).get("run")
    steps = run.get("n_steps") if isinstance(run, dict) else None
    if _is(steps, int) and steps == len(h):      # every step kept
        off = np.abs(h - dt) > tol
        if off.any():
            i = int(np.argmax(off))
            return [f"h: not t[i + 1] - t[i], as in a run whose {steps} steps are all kept "
                    f"({_where(off)}: h = {float(h[i])!r}, "
                    f"t[{i + 1}] - t[{i}] = {float(dt[i])!r})"]
    long = h > dt + tol
    if long.any():
        i = int(np.argmax(long))
        return [f"h: longer than t[i + 1] - t[i] ({_where(long)}: h = {float(h[i])!r}, "
                f"t[{i + 1}] - t[{i}] = {float(dt[i])!r})"]
    return []


_UNITS = {"position": "m", "rotation": "rad", "velocity": "m/s", "angular velocity": "rad/s"}


def _largest_changes(projection) -> str:
    """The initial projection's largest change of each quantity it changed, over the bodies,
    in its unit, and the body it moved (``initial_projection["body_changes"]``)."""
    changes = projection.get("body_changes") or {}
    if not changes:     # a record written before the changes were kept per body
        return (f"positions {projection['position_change']:.3e}, velocities "
                f"{projection['velocity_change']:.3e} (mixed units)")
    parts = []
    for quantity, unit in _UNITS.items():
        body = max(changes, key=lambda name: changes[name][quantity])
        if changes[body][quantity] > 0:
            parts.append(f"{quantity} {changes[body][quantity]:.3g} {unit} ({body!r})")
    return ", ".join(parts) or "none"
