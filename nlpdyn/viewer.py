"""An interactive 3D view of a result as one self-contained HTML file (plotly, imported lazily).

Each body is drawn with its shapes (:mod:`nlpdyn.geometry`), one trace per body; the bodies'
centres of mass and the joints are marker traces. A frame per output time chosen as for
animations, with play/pause buttons and a time slider (times rounded to the frames' grid);
the camera holds the up direction against gravity and turns with the mouse. The file embeds
plotly.js, so it opens offline in any browser.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .geometry import (VIEW, model_name, poses, scene, time_labels, up_direction,
                       view_frame)
from .progress import progress_bar

COM_TRACE = "centres of mass"
JOINT_TRACE = "joints"
# the camera's distance from the scene's centre, in plotly's units (the cube's half side: 1)
EYE_DISTANCE = 2.0


def _polyline_coordinates(lines, frame):
    """x, y, z lists of one body's polylines at ``frame``, polylines separated by None."""
    xyz = [[], [], []]
    for ln in lines:
        for c in range(3):
            xyz[c] += ln[frame][:, c].tolist() + [None]
    return xyz


def camera(up, view=VIEW) -> dict:
    """A plotly scene camera with ``up`` (3,) drawn up, seen from ``view`` = (elevation,
    azimuth) in degrees about it, as :func:`nlpdyn.animation.animate` sees it.

    Parameters
    ----------
    up : array_like, shape (3,)
        A unit vector, global (:func:`nlpdyn.geometry.up_direction`).
    view : (elevation, azimuth)

    Examples
    --------
    >>> camera((0.0, 0.0, 1.0))["up"]
    {'x': 0.0, 'y': 0.0, 'z': 1.0}
    """
    frame, _ = view_frame(up)
    elevation, azimuth = np.radians(view)
    eye = EYE_DISTANCE * (np.cos(elevation) * (np.cos(azimuth) * frame[0]
                                                + np.sin(azimuth) * frame[1])
                          + np.sin(elevation) * frame[2])
    return {"up": dict(zip("xyz", np.asarray(up, dtype=float).tolist())),
            "eye": dict(zip("xyz", eye.tolist()))}


def figure(res, fps: float = 25.0, speed: float = 1.0, magnify_clearance: float = 1.0,
           max_frames: int = 200, up=None, name=None, progress: bool | None = None):
    """The plotly Figure of :func:`view_html` (traces per body, then the centres of mass and
    the joints; one frame per chosen output time, named by its index into ``res.t``).

    Parameters
    ----------
    res : Result
    fps, speed, magnify_clearance, max_frames, up, name, progress
        As for :func:`view_html`.

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> import nlpdyn as nd
    >>> from problems import clearance_pendulum
    >>> res = nd.simulate(clearance_pendulum.build(), 0.01, 1e-3, progress=False)
    >>> fig = figure(res, name="clearance pendulum", progress=False)   # doctest: +SKIP
    >>> fig.layout.scene.camera.up.y, fig.layout.title.text.split(":")[0]  # doctest: +SKIP
    (1.0, 'clearance pendulum')
    """
    import plotly.graph_objects as go

    up = up_direction(res, up)
    indices, lines, joints, (centre, half) = scene(res, fps, speed, magnify_clearance,
                                                   max_frames)
    centres = poses(res, indices, magnify_clearance)
    names = list(lines)

    def traces(frame):
        out = []
        for name in names:
            x, y, z = _polyline_coordinates(lines[name], frame)
            out.append(go.Scatter3d(x=x, y=y, z=z, mode="lines", name=name,
                                    line={"width": 5}))
        com = np.array([centres[name][0][frame] for name in names]).reshape(-1, 3)
        out.append(go.Scatter3d(x=com[:, 0].tolist(), y=com[:, 1].tolist(),
                                z=com[:, 2].tolist(), mode="markers", name=COM_TRACE,
                                text=names, marker={"size": 3, "color": "black"}))
        out.append(go.Scatter3d(x=joints[frame, :, 0].tolist(), y=joints[frame, :, 1].tolist(),
                                z=joints[frame, :, 2].tolist(), mode="markers", name=JOINT_TRACE,
                                marker={"size": 4, "color": "gray", "symbol": "diamond"}))
        return out

    axes = {f"{c}axis": {"range": [centre[k] - half, centre[k] + half], "title": f"{c} (m)"}
            for k, c in enumerate("xyz")}
    bar = progress_bar(progress, total=len(indices), unit="frame", desc="HTML")
    with bar:
        frames = []
        for k, i in enumerate(indices):
            frames.append(go.Frame(data=traces(k), name=str(int(i))))
            bar.update()
    play = {"frame": {"duration": 1000.0 / fps, "redraw": True}, "fromcurrent": True,
            "transition": {"duration": 0}}
    magnified = f", clearance x{magnify_clearance:g}" if magnify_clearance != 1 else ""
    shown = model_name(res, name)
    ends = time_labels(res.t[[0, -1]] if len(res.t) > 1 else res.t)
    fig = go.Figure(data=traces(0), frames=frames, layout={
        "title": f"{shown + ': ' if shown else ''}{res.message} (t = {ends[0]} .. {ends[-1]} "
                 f"s{magnified})",
        "scene": {**axes, "aspectmode": "cube", "camera": camera(up)},
        "updatemenus": [{"type": "buttons", "showactive": False, "buttons": [
            {"label": "play", "method": "animate", "args": [None, play]},
            {"label": "pause", "method": "animate",
             "args": [[None], {"frame": {"duration": 0}, "mode": "immediate"}]}]}],
        "sliders": [{"currentvalue": {"prefix": "t = ", "suffix": " s"}, "steps": [
            {"label": label, "method": "animate",
             "args": [[str(int(i))], {"frame": {"duration": 0, "redraw": True},
                                      "mode": "immediate"}]}
            for i, label in zip(indices, time_labels(res.t[indices]))]}]})
    return fig


def view_html(res, path, fps: float = 25.0, speed: float = 1.0, magnify_clearance: float = 1.0,
              max_frames: int = 200, up=None, name=None, progress: bool | None = None) -> Path:
    """Write an interactive 3D view of ``res`` to ``path``: one HTML file with plotly.js
    embedded (no network needed to open it).

    Parameters
    ----------
    res : Result
    path : str or path-like
    fps, speed : float
        Frames per second when playing, and simulated seconds per second.
    magnify_clearance : float
        As for :func:`nlpdyn.animation.animate`.
    max_frames : int
        At most this many frames (spread evenly over the run); each holds every body's
        outline, so the file grows with it.
    up : str or array_like, optional
        The direction the camera holds up: an axis name (``"y"``, ``"-z"``) or 3 numbers
        (default: against gravity, +z without it; :func:`nlpdyn.geometry.up_direction`).
    name : str, optional
        The model's name in the title (default: the system's name, if it has one).
    progress : bool or None
        Show a tqdm bar over the frames built; None shows it only on a terminal.

    Returns
    -------
    pathlib.Path
        The HTML file written (~5 MB: plotly.js is embedded).

    Examples
    --------
    >>> res.view_html("pendulum.html", name="clearance pendulum")     # doctest: +SKIP
    """
    try:
        import plotly  # noqa: F401
    except ImportError as err:
        raise ImportError("the 3D view needs plotly: pip install 'nlpdyn[viewer]' "
                          "(or pip install plotly)") from err
    path = Path(path)
    figure(res, fps, speed, magnify_clearance, max_frames, up, name, progress).write_html(
        path, include_plotlyjs=True, full_html=True, auto_play=False)
    return path
