"""Animations of a result with matplotlib: GIF (Pillow) or MP4 (ffmpeg), imported lazily.

The bodies are drawn with their shapes (:mod:`nlpdyn.geometry`), the joints as dots, in a 3D
view with equal axes and the up direction against gravity (:func:`nlpdyn.geometry.
up_direction`); frames are the output times nearest to a frame every ``speed / fps``
seconds of simulated time. :func:`plot_scene` draws one moment the same way.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .geometry import (VIEW, model_name, placed, scene, time_labels, up_direction,
                       view_frame)
from .progress import progress_bar

WRITERS = {".gif": "pillow", ".mp4": "ffmpeg"}
# at most this many ticks per axis: their labels are a third of a frame's drawing time
TICKS = 4


def _writer(path: Path, fps):
    """The matplotlib writer for ``path``'s suffix; a clear error when it is not available."""
    from matplotlib import animation
    kind = WRITERS.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"{path}: the animation is written as .gif or .mp4, got "
                         f"{path.suffix or 'no suffix'!r}")
    if kind == "ffmpeg":
        if not animation.writers.is_available("ffmpeg"):
            raise RuntimeError(f"{path}: MP4 needs ffmpeg, which matplotlib does not find "
                               "(install it, e.g. apt-get install ffmpeg, or set "
                               "matplotlib.rcParams['animation.ffmpeg_path']); or write a .gif")
        return animation.FFMpegWriter(fps=fps)
    return animation.PillowWriter(fps=fps)


def _stage(ax, view_data, labels, view, title):
    """Draw frame 0 of ``view_data`` (:func:`nlpdyn.geometry.placed`'s lines, joints and
    cube in the view frame, and the frame's axis names) on the 3D ``ax``, titled
    ``title(labels[0])``; returns ``show(k)``, which moves the same artists to frame k."""
    import matplotlib.pyplot as plt
    (lines, joints, (centre, half)), names = view_data
    ax.set(xlim=(centre[0] - half, centre[0] + half), ylim=(centre[1] - half, centre[1] + half),
           zlim=(centre[2] - half, centre[2] + half), xlabel=f"{names[0]} (m)",
           ylabel=f"{names[1]} (m)", zlabel=f"{names[2]} (m)")
    ax.set_box_aspect((1, 1, 1))
    ax.locator_params(nbins=TICKS)
    ax.view_init(*view)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    artists = []
    for k, (name, body_lines) in enumerate(lines.items()):
        colour = colours[k % len(colours)]
        for j, ln in enumerate(body_lines):
            (artist,) = ax.plot(*ln[0].T, color=colour, lw=1.5, label=name if j == 0 else None)
            artists.append((artist, ln))
    (dots,) = ax.plot(*joints[0].T, "o", color="black", ms=3, ls="none", label="joints")
    ax.legend(loc="upper left", fontsize="small")
    heading = ax.set_title("")

    def show(k):
        for artist, ln in artists:
            artist.set_data_3d(*ln[k].T)
        dots.set_data_3d(*joints[k].T)
        heading.set_text(title(labels[k]))

    show(0)
    return show


def _title(res, name, magnify_clearance):
    """``label -> title``: the model's name, the time, the clearance's magnification."""
    shown = model_name(res, name)
    magnified = f", clearance x{magnify_clearance:g}" if magnify_clearance != 1 else ""
    return lambda label: f"{shown + ': ' if shown else ''}t = {label} s{magnified}"


def plot_scene(res, t=None, ax=None, up=None, name=None, magnify_clearance: float = 1.0,
               view=VIEW):
    """Draw the bodies' shapes and the joints at one output time in a 3D matplotlib view, as
    a frame of :func:`animate`.

    Parameters
    ----------
    res : Result
    t : float, optional
        The time drawn: the output time nearest to it (default: the last).
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Draw on these axes (default: a new figure).
    up : str or array_like, optional
        The direction drawn up: an axis name (``"y"``, ``"-z"``) or 3 numbers (default:
        against gravity, +z without it; :func:`nlpdyn.geometry.up_direction`). The axes are
        labelled with the global directions they show.
    name : str, optional
        The model's name in the title (default: the system's name, if it has one).
    magnify_clearance : float
        As for :func:`animate`.
    view : (elevation, azimuth)
        Camera angles in degrees about the up direction (``Axes3D.view_init``).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import nlpdyn as nd
    >>> from problems import clearance_pendulum
    >>> res = nd.simulate(clearance_pendulum.build(), 0.01, 1e-3, progress=False)
    >>> fig = plot_scene(res, name="clearance pendulum")        # gravity -y: y is up
    >>> fig.axes[0].get_zlabel(), fig.axes[0].get_title()
    ('y (m)', 'clearance pendulum: t = 0.010 s')
    """
    import matplotlib.pyplot as plt
    if t is None:
        index = len(res.t) - 1
    else:
        index = int(np.argmin(np.abs(res.t - t)))
    frame, names = view_frame(up_direction(res, up))
    if ax is None:
        fig = plt.figure(figsize=(6, 6))
        ax = fig.add_subplot(projection="3d")
    indices = np.array([index])
    _stage(ax, (placed(res, indices, magnify_clearance, frame), names),
           [time_labels(res.t)[index]], view, _title(res, name, magnify_clearance))
    return ax.figure


def animate(res, path, fps: float = 25.0, speed: float = 1.0, magnify_clearance: float = 1.0,
            view=VIEW, dpi: int = 80, max_frames: int = 500, up=None, name=None,
            progress: bool | None = None):
    """Write an animation of ``res`` to ``path`` (.gif with Pillow, .mp4 with ffmpeg).

    Parameters
    ----------
    res : Result
    path : str or path-like
        ``.gif`` or ``.mp4``.
    fps : float
        Frames per second of the file.
    speed : float
        Simulated seconds per second of the file (0.1: ten times slower than real time).
    magnify_clearance : float
        Draw the child of every clearance joint moved by this many times the journal's offset
        inside the bore (:func:`nlpdyn.geometry.poses`): 1 as computed, 100 to see 0.1 mm.
    view : (elevation, azimuth)
        Camera angles in degrees about the up direction (``Axes3D.view_init``).
    dpi : int
    max_frames : int
        At most this many frames (spread evenly over the run when there would be more).
    up : str or array_like, optional
        The direction drawn up (default: against gravity; see :func:`plot_scene`).
    name : str, optional
        The model's name in the title (default: the system's name, if it has one).
    progress : bool or None
        Show a tqdm bar over the frames; None shows it only on a terminal.

    Returns
    -------
    pathlib.Path
        The GIF or MP4 written.

    Examples
    --------
    >>> res.animate("pendulum.gif", fps=20, magnify_clearance=50)     # doctest: +SKIP
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    writer = _writer(path, fps)
    frame, names = view_frame(up_direction(res, up))
    indices, *view_data = scene(res, fps, speed, magnify_clearance, max_frames, frame)
    fig = plt.figure(figsize=(6, 6))
    try:
        show = _stage(fig.add_subplot(projection="3d"), (view_data, names),
                      time_labels(res.t[indices]), view, _title(res, name, magnify_clearance))
        bar = progress_bar(progress, total=len(indices), unit="frame",
                           desc=path.suffix[1:].upper())
        # each frame drawn once, by the writer (an animation object would draw it twice)
        with bar, writer.saving(fig, path, dpi):
            for k in range(len(indices)):
                show(k)
                writer.grab_frame()
                bar.update()
    finally:
        plt.close(fig)
    return path
