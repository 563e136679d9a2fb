"""Animations of a result with matplotlib: GIF (Pillow) or MP4 (ffmpeg), imported lazily.

The bodies are drawn with their shapes (:mod:`nlpdyn.geometry`), the joints as dots, in a 3D
view with equal axes; frames are the output times nearest to a frame every ``speed / fps``
seconds of simulated time.
"""
from __future__ import annotations

from pathlib import Path

from .geometry import scene

WRITERS = {".gif": "pillow", ".mp4": "ffmpeg"}


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


def animate(res, path, fps: float = 25.0, speed: float = 1.0, magnify_clearance: float = 1.0,
            view=(20.0, -60.0), dpi: int = 80, max_frames: int = 500):
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
        Camera angles in degrees (``Axes3D.view_init``).
    dpi : int
    max_frames : int
        At most this many frames (spread evenly over the run when there would be more).

    Returns
    -------
    pathlib.Path
        The GIF or MP4 written.

    Examples
    --------
    >>> res.animate("pendulum.gif", fps=20, magnify_clearance=50)     # doctest: +SKIP
    """
    import matplotlib.pyplot as plt
    from matplotlib import animation

    path = Path(path)
    writer = _writer(path, fps)
    indices, lines, joints, (centre, half) = scene(res, fps, speed, magnify_clearance,
                                                   max_frames)

    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="3d")
    ax.set(xlim=(centre[0] - half, centre[0] + half), ylim=(centre[1] - half, centre[1] + half),
           zlim=(centre[2] - half, centre[2] + half), xlabel="x (m)", ylabel="y (m)",
           zlabel="z (m)")
    ax.set_box_aspect((1, 1, 1))
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
    magnified = f", clearance x{magnify_clearance:g}" if magnify_clearance != 1 else ""
    title = ax.set_title("")

    def draw(frame):
        for artist, ln in artists:
            artist.set_data_3d(*ln[frame].T)
        dots.set_data_3d(*joints[frame].T)
        title.set_text(f"t = {res.t[indices[frame]]:.3f} s{magnified}")
        return [a for a, _ in artists] + [dots, title]

    movie = animation.FuncAnimation(fig, draw, frames=len(indices), blit=False)
    try:
        movie.save(path, writer=writer, dpi=dpi)
    finally:
        plt.close(fig)
    return path
