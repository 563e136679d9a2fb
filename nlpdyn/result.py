"""Result of a simulation: arrays, per-step statistics; the named lookups
(:mod:`nlpdyn.result_lookups`), saving and loading (the file format:
:mod:`nlpdyn.result_io`), joint modes and forces (:mod:`nlpdyn.result_joints`) and tables
(:mod:`nlpdyn.tables`) delegated."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

# the file format and the per-step record live in modules of their own; their names stay
# importable from here
from .result_io import (FORMAT, FORMAT_VERSION, STALE_AGE, _HOST, ResultFileError,  # noqa: F401
                        _npz_path, _write_atomically)
from .result_io import read as _read_file, write as _write_file
from .result_joints import joint_forces as _joint_forces, joint_modes as _joint_modes
from .result_lookups import _Lookups, _name_of  # noqa: F401 (_name_of: as before)
from .result_summary import _largest_changes  # noqa: F401
from .result_summary import summary as _summary
from .step_stats import StepStats

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .joints.clearance import ClearanceJoint
    from .system import System
    from .tables import Table

__all__ = ["Result", "ResultFileError", "StepStats", "FORMAT", "FORMAT_VERSION", "STALE_AGE"]


class Result(_Lookups):
    """Trajectory of a simulation (like scipy's OdeResult).

    Made by :func:`~nlpdyn.simulate`, :meth:`Stepper.result <nlpdyn.Stepper.result>` and
    :meth:`load`, not by hand.

    Parameters
    ----------
    t, q, v, h, energy, kinetic_energy, potential_energy, stats, success, status, message
        The attributes below, of the same names.
    mu, lam, gaps : ndarray
        The constraint impulses (n_steps, n_eq), contact impulses (n_steps, n_gap) and true
        gaps (n_points, n_gap) that the lookups read (:meth:`multipliers`, :meth:`gap`, ...).
    body_names, constraint_rows, gap_rows, wrenches
        Where each body and element sits in those arrays, and every element's wrenches.
    initial_projection, info, contact_points, contact_vectors, force_elements, \
element_work, element_potential, ledger, memory, friction, friction_vectors, reaction_q
        The attributes and the lookups' per-element data (empty when not given).

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

    Examples
    --------
    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> _ = s.add_body("ball", mass=1.0, inertia=(4e-4, 4e-4, 4e-4))
    >>> res = nd.simulate(s, t_end=0.01, h=1e-3, progress=False)
    >>> res.success, res.t.shape, res.q.shape, res.position("ball").shape
    (True, (11,), (11, 7), (11, 3))
    """

    def __init__(self, t: np.ndarray, q: np.ndarray, v: np.ndarray, h: np.ndarray,
                 energy: np.ndarray, kinetic_energy: np.ndarray, potential_energy: np.ndarray,
                 stats: StepStats, mu: np.ndarray, lam: np.ndarray, gaps: np.ndarray,
                 body_names: Sequence[str], constraint_rows: dict, gap_rows: dict,
                 wrenches: dict, success: bool, status: int, message: str,
                 initial_projection: dict | None = None, info: dict | None = None,
                 contact_points: dict | None = None, contact_vectors: dict | None = None,
                 force_elements: dict | None = None, element_work: dict | None = None,
                 element_potential: dict | None = None, ledger: dict | None = None,
                 memory: dict | None = None, friction: dict | None = None,
                 friction_vectors: dict | None = None, reaction_q: np.ndarray | None = None):
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

    def energy_ledger(self) -> Table:
        """Where the energy went: a table (pandas DataFrame) indexed by the output time ``t``
        (s), one row per output time, ``attrs["units"]`` and ``attrs["descriptions"]`` as in
        :meth:`to_dataframe`.

        The columns (every one in J, the works cumulative since t[0]) are listed in
        :mod:`nlpdyn.tables`.

        Returns
        -------
        nlpdyn.tables.Table
            ``kinetic``, ``gravity``, ``stored:<element>``, ``carried``, ``total``, then the
            works ``work:``, ``impact:``, ``friction:``, ``contact:`` and ``residual``.

        Raises
        ------
        ValueError
            The result has no ledger (a file saved by an older nlpdyn).

        Examples
        --------
        >>> ledger = res.energy_ledger()                                # doctest: +SKIP
        >>> ledger.iloc[-1][["total", "impact:pin", "contact:pin", "residual"]]  # doctest: +SKIP
        """
        from .tables import energy_ledger
        return energy_ledger(self)

    # ------------------------------------------------------------------ save / load
    def save(self, path: str | os.PathLike) -> Path:
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

        Examples
        --------
        >>> path = res.save("run")                                    # doctest: +SKIP
        >>> path.name                                                 # doctest: +SKIP
        'run.npz'
        """
        return _write_file(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Result:
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

        Examples
        --------
        >>> back = nd.Result.load("run.npz")                          # doctest: +SKIP
        >>> bool((back.q == res.q).all())                             # doctest: +SKIP
        True
        """
        arrays, meta = _read_file(path)

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
        """A short human-readable account of the run.

        Returns
        -------
        str
            How the run ended, its time span and steps, wall time, residuals, contact, error
            control, compiled functions, energy and warnings, one line each.

        Examples
        --------
        >>> print(res.summary())                                      # doctest: +SKIP
        success: reached t_end
        """
        return _summary(self)

    def __repr__(self):
        return f"<Result {self.message!r}, {len(self.t)} points>"

    def plot(self, bodies: list[str] | None = None, title: str | None = None,
             extra: Callable | None = None, angular: bool = False,
             name: str | None = None) -> Figure:
        """Overview in one Figure (:func:`nlpdyn.plotting.plot_result`): a panel per body,
        energy, constraint violation and, when it varies, the step size.

        Parameters
        ----------
        bodies : list of str, optional
            Bodies to show (default: all, at most 4).
        title : str, optional
            The figure's title (the run's message is added below it).
        extra : callable, optional
            ``extra(res, panels)`` draws more; ``panels`` maps names to axes.
        angular : bool
            Add each body's angular velocity (body frame).
        name : str, optional
            The model's name, leading the title.

        Returns
        -------
        matplotlib.figure.Figure

        Examples
        --------
        >>> fig = res.plot(bodies=["crank"], angular=True)             # doctest: +SKIP
        """
        from .plotting import plot_result
        return plot_result(self, bodies, title, extra, angular, name)

    # ------------------------------------------------------------------ joint modes
    def joint_modes(self, name: str) -> dict:
        """Mode vectors of joint ``name`` (seed 004, eqs. 3.18-3.19), in twist coordinates
        [Omega; V] of the child relative to the parent, resolved in the parent's joint frame
        (``joint.frame()``). A clearance joint has its nominal ideal joint's modes.

        Parameters
        ----------
        name : str
            The joint (ideal or clearance).

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
        return _joint_modes(self, name)

    def joint_forces(self, name: str, applied: Sequence[str] = ()) -> dict:
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
        return _joint_forces(self, name, applied)

    # ------------------------------------------------------------------ tables, animation, 3D view
    def to_dataframe(self) -> Table:
        """The result as a table: a pandas DataFrame indexed by the output time ``t`` (s), one
        row per output time, columns ``<quantity>:<name>`` (``x:crank``, ``q0:crank``,
        ``wx:crank``, ``Fx:pin``, ``gap0:pin``, ``stored:spring``, ...), the names the energy
        ledger uses for the same things.

        Returns
        -------
        nlpdyn.tables.Table
            A DataFrame; ``attrs["units"]`` maps every column and ``t`` to its SI unit,
            ``attrs["descriptions"]`` to what it is. The columns, their units and the
            earlier names (which still work, with a ``FutureWarning``) are listed in
            :mod:`nlpdyn.tables`.

        Examples
        --------
        >>> df = res.to_dataframe()                                   # doctest: +SKIP
        >>> df.loc[0.5, "x:crank"], df.attrs["units"]["x:crank"]      # doctest: +SKIP
        (0.0123, 'm')
        """
        from .tables import to_dataframe
        return to_dataframe(self)

    def to_csv(self, path: str | os.PathLike, ledger: bool = False) -> Path:
        """Write :meth:`to_dataframe` (or, with ``ledger=True``, :meth:`energy_ledger`) to a
        CSV file, atomically as :meth:`save` does.

        Parameters
        ----------
        path : str or path-like
            The file.
        ledger : bool
            Write the energy ledger instead of the trajectory.

        Returns
        -------
        pathlib.Path
            The file written: a header row ``t [s],x:crank [m],...`` (every name with its
            unit), then one row per output time, floats in their shortest round-trip form.
            :func:`nlpdyn.tables.read_csv` reads it back (names and units apart);
            ``pandas.read_csv(path, index_col=0)`` reads it with the units in the names.

        Examples
        --------
        >>> res.to_csv("run.csv")                                     # doctest: +SKIP
        PosixPath('run.csv')
        """
        from .tables import to_csv_text
        target = Path(path)
        text = to_csv_text(self.energy_ledger() if ledger else self.to_dataframe())
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

    def animate(self, path: str | os.PathLike, fps: float = 25.0, magnify_clearance: float = 1.0,
                **options) -> Path:
        """Write an animation of the bodies' shapes to ``path`` (.gif, or .mp4 with ffmpeg);
        ``magnify_clearance`` exaggerates the journals' offsets in clearance joints
        (:func:`nlpdyn.animation.animate`, which lists the other options).

        Parameters
        ----------
        path : str or path-like
            ``.gif`` or ``.mp4``.
        fps : float
            Frames per second of the file.
        magnify_clearance : float
            The journals' offsets drawn this many times larger.
        **options
            :func:`~nlpdyn.animation.animate`'s ``speed``, ``view``, ``dpi``,
            ``max_frames``, ``up``, ``name`` and ``progress``.

        Examples
        --------
        >>> res.animate("pendulum.gif", fps=20, magnify_clearance=50)     # doctest: +SKIP
        """
        from .animation import animate
        return animate(self, path, fps=fps, magnify_clearance=magnify_clearance, **options)

    def view_html(self, path: str | os.PathLike, **options) -> Path:
        """Write an interactive 3D view to a self-contained HTML file (plotly;
        :func:`nlpdyn.viewer.view_html`).

        Parameters
        ----------
        path : str or path-like
            The HTML file.
        **options
            :func:`~nlpdyn.viewer.view_html`'s ``fps``, ``speed``, ``magnify_clearance``,
            ``max_frames``, ``up``, ``name`` and ``progress``.

        Examples
        --------
        >>> res.view_html("run.html", magnify_clearance=50)             # doctest: +SKIP
        """
        from .viewer import view_html
        return view_html(self, path, **options)

    # ------------------------------------------------------------------ orbit plots
    def plot_orbit(self, joints: ClearanceJoint | str | Sequence[ClearanceJoint | str],
                   system: System | None = None, ax: Axes | None = None,
                   title: str | None = None) -> Figure:
        """Journal orbit of clearance joints inside their clearance circles (see
        :func:`nlpdyn.plotting.plot_orbit`). ``joints``: joint objects or names, one or a
        list; names are looked up in ``system`` (the system that was run).

        Parameters
        ----------
        joints : ClearanceJoint or str, or a list of them
            The clearance joints.
        system : System, optional
            The system that was run (needed for joints given by name).
        ax : matplotlib.axes.Axes, optional
            Draw on these axes (one cylindrical or revolute joint).
        title : str, optional
            The figure's title.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import nlpdyn as nd
        >>> from problems import clearance_pendulum
        >>> s = clearance_pendulum.build()
        >>> res = nd.simulate(s, 0.05, (1e-3, 2e-3), progress=False)
        >>> fig = res.plot_orbit(s.gaps[0].name, system=s)
        >>> len(fig.axes) >= 1
        True
        """
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
