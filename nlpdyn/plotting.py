"""Matplotlib views of a Result (matplotlib is imported only when a plot is drawn)."""
from __future__ import annotations

import textwrap

import numpy as np

from .joints.clearance import CylindricalClearance, SphericalClearance
from .rotations import perpendicular_pair

# a run's step sizes "vary" when they spread by more than this share of the largest one
# (t is accumulated in double precision, so a fixed h comes back with ~1e-12 of relative noise)
H_VARIATION = 1e-9
MAX_BODY_PANELS = 4


def _axes(ax):
    if ax is not None:
        return ax.figure, ax
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    return fig, ax


def _legend_outside(ax):
    """A legend to the right of the axes, so it never covers the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0, frameon=False)


def plot_body(res, body, ax=None, angular=False):
    """Centre-of-mass coordinates of one body against time (``angular``: its angular
    velocity in the body frame instead)."""
    fig, ax = _axes(ax)
    values = res.angular_velocity(body) if angular else res.position(body)
    names = ("w'x", "w'y", "w'z") if angular else "xyz"
    for k, label in enumerate(names):
        ax.plot(res.t, values[:, k], label=label, lw=1.0)
    ax.set(xlabel="t [s]", ylabel="[rad/s]" if angular else "[m]",
           title=f"{body}: angular velocity (body frame)" if angular
           else f"{body}: centre of mass")
    _legend_outside(ax)
    return fig


def plot_positions(res, bodies=None, ax=None):
    """Centre-of-mass coordinates of ``bodies`` (default: all) against time, one axes."""
    fig, ax = _axes(ax)
    for name in bodies or res.body_names:
        r = res.position(name)
        for k, label in enumerate("xyz"):
            ax.plot(res.t, r[:, k], label=f"{name} {label}")
    ax.set(xlabel="t [s]", ylabel="position [m]", title="centres of mass")
    _legend_outside(ax)
    return fig


def plot_energy(res, ax=None):
    """Total, kinetic and potential energy against time."""
    fig, ax = _axes(ax)
    ax.plot(res.t, res.energy, label="total")
    ax.plot(res.t, res.kinetic_energy, label="kinetic", lw=0.8)
    ax.plot(res.t, res.potential_energy, label="potential", lw=0.8)
    ax.set(xlabel="t [s]", ylabel="energy [J]", title="mechanical energy")
    _legend_outside(ax)
    return fig


def step_size_varies(res) -> bool:
    """Whether the run's step sizes differ by more than round-off."""
    return len(res.h) > 1 and np.ptp(res.h) > H_VARIATION * np.max(res.h)


def plot_step_sizes(res, ax=None):
    """Accepted step sizes against time (log scale when they span more than a decade)."""
    from matplotlib.ticker import FormatStrFormatter
    fig, ax = _axes(ax)
    ax.step(res.t[1:], res.h, where="pre")
    if len(res.h) and res.h.max() > 10 * res.h.min():
        ax.set_yscale("log")
    else:
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
    ax.set(xlabel="t [s]", ylabel="h [s]", title="step size")
    return fig


def plot_constraint_violation(res, ax=None):
    """Largest |Phi| at the end of every step (and the deepest penetration, if any)."""
    fig, ax = _axes(ax)
    ax.set(xlabel="t [s]", ylabel="[m]", title="constraint violation")
    if not res.constraint_rows and not res.gaps.shape[1]:
        ax.text(0.5, 0.5, "no constraints", ha="center", va="center", transform=ax.transAxes)
        if res.t[-1] > res.t[0]:
            ax.set_xlim(res.t[0], res.t[-1])
        return fig
    ax.semilogy(res.t[1:], np.maximum(res.stats.constraint_violation, 1e-17), label="max |Phi|")
    if res.gaps.shape[1]:
        ax.semilogy(res.t[1:], np.maximum(-res.stats.min_gap, 1e-17), label="penetration")
    _legend_outside(ax)
    return fig


def _named(res, title, name):
    """``title`` led by the model's name (:func:`nlpdyn.geometry.model_name`), unless it
    already holds it; the name alone without a title; None without either."""
    from .geometry import model_name
    shown = model_name(res, name)
    if not shown or (title and shown in title):
        return title
    return f"{shown}: {title}" if title else shown


def plot_result(res, bodies=None, title=None, extra=None, angular=False, name=None):
    """Overview in one Figure: a panel per body (its centre of mass; ``angular``: its
    angular velocity too), energy, constraint violation and, when it varies, the step size.

    Parameters
    ----------
    res : Result
    bodies : list of str, optional
        Bodies to show (default: all, at most 4).
    title : str, optional
        The figure's title (the run's message is added below it).
    extra : callable, optional
        ``extra(res, panels)`` draws more (checks, closed forms); ``panels`` maps names to
        axes: ``"position:<body>"``, ``"angular:<body>"``, ``"energy"``, ``"violation"``,
        ``"h"`` (when drawn).
    angular : bool
        Add each body's angular velocity (body frame).
    name : str, optional
        The model's name, leading the title (default: the system's name, if it has one).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import nlpdyn as nd
    >>> s = nd.System(); _ = s.add_body("ball", 1.0, (1, 1, 1))
    >>> fig = nd.simulate(s, 0.01, 1e-3, progress=False).plot(title="falling ball")
    >>> fig.axes[0].get_title()
    'ball: centre of mass'
    >>> fig = nd.simulate(s, 0.01, 1e-3, progress=False).plot(name="ball", title="falls")
    >>> fig.get_suptitle().splitlines()[0]
    'ball: falls'
    """
    import matplotlib.pyplot as plt
    bodies = list(bodies or res.body_names[:MAX_BODY_PANELS])
    names = [f"position:{b}" for b in bodies]
    if angular:
        names += [f"angular:{b}" for b in bodies]
    names += ["energy", "violation"] + (["h"] if step_size_varies(res) else [])
    ncols = 2
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(12, 3.2 * nrows + 0.6),
                             constrained_layout=True, squeeze=False)
    panels = dict(zip(names, axes.flat))
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    for panel, ax in panels.items():
        kind, _, body = panel.partition(":")
        if kind in ("position", "angular"):
            plot_body(res, body, ax, angular=kind == "angular")
        elif kind == "energy":
            plot_energy(res, ax)
        elif kind == "violation":
            plot_constraint_violation(res, ax)
        else:
            plot_step_sizes(res, ax)
    if extra is not None:
        extra(res, panels)
        for ax in panels.values():
            _legend_outside(ax)
    h = res.info.get("h_max", res.h[0] if len(res.h) else None)
    fixed = ("" if "h" in panels or h is None or res.info.get("h_min", h) != h
             else f"; fixed h = {h:.3g} s")
    heading = f"{res.message}{fixed}"
    title = _named(res, title, name)
    fig.suptitle(f"{textwrap.fill(title, 110)}\n{heading}" if title else heading)
    return fig


# ---------------------------------------------------------------------------- orbits
def orbit_joints(system) -> list:
    """The clearance joints of ``system`` whose orbit :func:`journal_orbit` draws."""
    return [j for j in system.gaps if isinstance(j, (CylindricalClearance, SphericalClearance))]


def _pose(res, body):
    """(r (n, 3), A (n, 3, 3)) of ``body`` along the run (the ground: fixed)."""
    n = len(res.t)
    if body.is_ground:
        return np.zeros((n, 3)), np.broadcast_to(np.eye(3), (n, 3, 3))
    return res.position(body.name), res.rotation(body.name)


def journal_orbit(res, joint) -> dict:
    """Relative position of a clearance joint's journal inside its clearance, per output time.

    For a cylindrical or revolute clearance joint: the offset of each bore end's centre
    from the pin axis, in the bearing's plane (axes f, g perpendicular to the pin axis, fixed
    to the parent, ``perpendicular_pair(axis)`` at the initial configuration). For a
    spherical clearance joint: the ball centre's offset from the socket centre in the
    parent's frame (its x, y, z at the initial configuration). The axes are named by their
    global directions at the initial configuration. Gap k is ``clearance -
    |eccentricity[:, k]|`` (up to the gaps' smoothing at the centre, 1e-6 clearance).

    Returns
    -------
    dict
        ``eccentricity`` (n_points, n_ends, 2 or 3) m, ``clearance`` m, ``labels`` (one per
        end), ``axes`` (names of the components).
    """
    parent, child = joint.parent, joint.child
    rp, Ap = _pose(res, parent)
    rc, Ac = _pose(res, child)

    def on(r, A, body, point):
        return r + np.einsum("nij,j->ni", A, body.local_point(point))

    origin = on(rp, Ap, parent, joint.point)
    if isinstance(joint, SphericalClearance):
        frame = np.stack([parent.local_vector(u) for u in np.eye(3)])     # rows x', y', z'
        rel = on(rc, Ac, child, joint.point) - origin
        e = np.einsum("nij,ni,kj->nk", Ap, rel, frame)[:, None, :]
        return {"eccentricity": e, "clearance": joint.clearance, "labels": ["ball centre"],
                "axes": ("x", "y", "z")}
    f, g = (parent.local_vector(u) for u in perpendicular_pair(joint.axis))
    e = []
    for s in (-1, 1):
        end = on(rc, Ac, child, joint.point + joint.offset + s * 0.5 * joint.length * joint.axis)
        rel = np.einsum("nji,nj->ni", Ap, end - origin)                     # parent frame
        e.append(np.column_stack([rel @ f, rel @ g]))
    names = tuple(f"{n} = ({', '.join(f'{x:.3g}' for x in u + 0.0)})"
                  for n, u in zip("fg", perpendicular_pair(joint.axis)))
    return {"eccentricity": np.stack(e, axis=1), "clearance": joint.clearance,
            "labels": ["bore end 1", "bore end 2"], "axes": names}


def plot_orbit(res, joints, ax=None, title=None, name=None):
    """The journal orbit of clearance joints: each bore end's (or ball's) centre relative to
    the pin axis (socket centre) inside the clearance circle, in millimetres.

    A spherical joint is drawn in its parent's x-y plane and x-z plane.

    Parameters
    ----------
    res : Result
    joints : joint or list of joints
        Clearance joint objects (see :func:`journal_orbit`).
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (one view only: one cylindrical or revolute joint).
    title : str, optional
        The figure's title.
    name : str, optional
        The model's name, leading the title (default: the system's name, if it has one).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import nlpdyn as nd
    >>> from problems import clearance_pendulum
    >>> s = clearance_pendulum.build()
    >>> res = nd.simulate(s, 0.05, (1e-3, 2e-3), progress=False)
    >>> fig = res.plot_orbit(s.gaps[0])
    >>> fig.axes[0].get_xlabel()
    'f = (0, 1, 0) [mm]'
    """
    import matplotlib.pyplot as plt
    joints = list(joints) if isinstance(joints, (list, tuple)) else [joints]
    views = []
    for joint in joints:
        data = journal_orbit(res, joint)
        planes = [(0, 1), (0, 2)] if data["eccentricity"].shape[2] == 3 else [(0, 1)]
        views += [(joint, data, plane) for plane in planes]
    if ax is not None:
        if len(views) != 1:
            raise ValueError(f"one axes given for {len(views)} orbit views; pass ax=None")
        fig, axes = ax.figure, [ax]
    else:
        fig, axes = plt.subplots(1, len(views), figsize=(4.6 * len(views) + 1.5, 4.6),
                                 constrained_layout=True, squeeze=False)
        axes = list(axes.flat)
    for ax_, (joint, data, (i, j)) in zip(axes, views):
        c = 1e3 * data["clearance"]
        phi = np.linspace(0, 2 * np.pi, 361)
        ax_.plot(c * np.cos(phi), c * np.sin(phi), color="k", lw=1.0, label="clearance circle")
        for k, label in enumerate(data["labels"]):
            e = 1e3 * data["eccentricity"][:, k]
            ax_.plot(e[:, i], e[:, j], lw=0.8, label=label)
            ax_.plot(e[-1, i], e[-1, j], "o", ms=4, color=ax_.lines[-1].get_color())
        ax_.set_aspect("equal")
        ax_.set(xlabel=f"{data['axes'][i]} [mm]", ylabel=f"{data['axes'][j]} [mm]",
                title=f"{joint.name or joint.label}: journal orbit")
        _legend_outside(ax_)
    title = _named(res, title, name)
    if title:
        fig.suptitle(title)
    return fig
