"""An interactive 3D view of a result as one self-contained HTML file (plotly, imported lazily).

Each body is drawn with its shapes (:mod:`nlpdyn.geometry`), one trace per body; the bodies'
centres of mass and the joints are marker traces. A frame per output time chosen as for
animations, with play/pause buttons and a time slider; the camera turns with the mouse. The
file embeds plotly.js, so it opens offline in any browser.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .geometry import poses, scene

COM_TRACE = "centres of mass"
JOINT_TRACE = "joints"


def _polyline_coordinates(lines, frame):
    """x, y, z lists of one body's polylines at ``frame``, polylines separated by None."""
    xyz = [[], [], []]
    for ln in lines:
        for c in range(3):
            xyz[c] += ln[frame][:, c].tolist() + [None]
    return xyz


def figure(res, fps: float = 25.0, speed: float = 1.0, magnify_clearance: float = 1.0,
           max_frames: int = 200):
    """The plotly Figure of :func:`view_html` (traces per body, then the centres of mass and
    the joints; one frame per chosen output time, named by its index into ``res.t``)."""
    import plotly.graph_objects as go

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
    frames = [go.Frame(data=traces(k), name=str(int(i))) for k, i in enumerate(indices)]
    play = {"frame": {"duration": 1000.0 / fps, "redraw": True}, "fromcurrent": True,
            "transition": {"duration": 0}}
    magnified = f", clearance x{magnify_clearance:g}" if magnify_clearance != 1 else ""
    fig = go.Figure(data=traces(0), frames=frames, layout={
        "title": f"{res.message} (t = {res.t[0]:.3g} .. {res.t[-1]:.3g} s{magnified})",
        "scene": {**axes, "aspectmode": "cube"},
        "updatemenus": [{"type": "buttons", "showactive": False, "buttons": [
            {"label": "play", "method": "animate", "args": [None, play]},
            {"label": "pause", "method": "animate",
             "args": [[None], {"frame": {"duration": 0}, "mode": "immediate"}]}]}],
        "sliders": [{"currentvalue": {"prefix": "t = ", "suffix": " s"}, "steps": [
            {"label": f"{res.t[i]:.4g}", "method": "animate",
             "args": [[str(int(i))], {"frame": {"duration": 0, "redraw": True},
                                      "mode": "immediate"}]} for i in indices]}]})
    return fig


def view_html(res, path, fps: float = 25.0, speed: float = 1.0, magnify_clearance: float = 1.0,
              max_frames: int = 200) -> Path:
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

    Returns
    -------
    pathlib.Path
        The HTML file written (~5 MB: plotly.js is embedded).

    Examples
    --------
    >>> res.view_html("pendulum.html")                               # doctest: +SKIP
    """
    try:
        import plotly  # noqa: F401
    except ImportError as err:
        raise ImportError("the 3D view needs plotly: pip install 'nlpdyn[viewer]' "
                          "(or pip install plotly)") from err
    path = Path(path)
    figure(res, fps, speed, magnify_clearance, max_frames).write_html(
        path, include_plotlyjs=True, full_html=True, auto_play=False)
    return path
