"""Body geometry, animations (GIF/MP4) and the interactive HTML view."""
from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.geometry import frame_indices, inertia_box, journal_offsets, poses
from nlpdyn.joints.base import NORM_EPS

ROUND_OFF = 1e-12
CLEARANCE = 1e-3


@pytest.fixture(scope="module")
def res():
    """A bar falling on a clearance pin (planar: the bore does not tilt), drawn as a box, and
    a ball on a spherical joint at its tip, drawn by default."""
    s = nd.System(gravity=(0, -9.81, 0))
    bar = s.add_body("bar", mass=1.0, inertia=(2e-4, 0.0834, 0.0834), position=(0.5, 0, 0),
                     geometry=nd.Box(size=(1.0, 0.04, 0.02)))
    ball = s.add_body("ball", mass=0.2, inertia=(1e-4, 1e-4, 1e-4), position=(1.1, 0, 0))
    s.add_joint(nd.RevoluteClearance(s.ground, bar, (0, 0, 0), (0, 0, 1), 0.01, CLEARANCE,
                                     0.02, CLEARANCE, name="pin"))
    s.add_joint(nd.Spherical(bar, ball, (1.0, 0, 0), name="tip"))
    return nd.simulate(s, t_end=0.2, h=1e-3, progress=False)


# ------------------------------------------------------------------ geometry
def test_inertia_box_is_the_uniform_box():
    m, a, b, c = 2.0, 0.3, 0.2, 0.1
    inertia = m / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])
    assert np.abs(np.sort(inertia_box(m, inertia)) - [c, b, a]).max() <= ROUND_OFF


def test_bad_geometry_is_refused_naming_the_body():
    s = nd.System()
    s.add_body("bar", mass=1.0, inertia=(1, 1, 1), geometry=[nd.Box(size=(1, -1, 1)), "box"])
    s.add_body("ball", mass=1.0, inertia=(1, 1, 1))
    s.set_geometry("ball", nd.Sphere(radius=0.0))
    with pytest.raises(nd.ModelError) as err:
        s.validate()
    assert "body 'bar': box size must be 3 finite numbers >= 0" in str(err.value)
    assert "body 'bar': geometry must be shapes" in str(err.value)
    assert "body 'ball': sphere: radius must be > 0" in str(err.value)


def test_geometry_is_saved_with_the_result(res, tmp_path):
    back = nd.Result.load(res.save(tmp_path / "run"))
    assert back.info["geometry"] == res.info["geometry"]
    shapes = res.info["geometry"]["bodies"]
    assert [s["shape"] for s in shapes["bar"]] == ["box"]
    assert [s["shape"] for s in shapes["ball"]] == ["link"]     # default: joint to centre


def test_journal_offset_is_the_clearance_used(res):
    """The bore's offset from the pin, measured from the bodies' poses, is the clearance
    minus the radial gaps the contact step computed (both bore ends alike: planar)."""
    joint = next(j for j in res.info["geometry"]["joints"] if j["name"] == "pin")
    idx = np.arange(len(res.t))
    offset = journal_offsets(res, joint, idx)
    gaps = res.gap("pin")[:, :2]
    # the gaps' |d| is smoothed by NORM_EPS * clearance (its whole size with the bore centred)
    assert np.abs(np.linalg.norm(offset, axis=1) - (CLEARANCE - gaps.mean(axis=1))).max() \
        <= NORM_EPS * CLEARANCE + ROUND_OFF
    assert np.abs(offset[:, 2]).max() <= ROUND_OFF          # no axial part
    assert gaps.min() < 1e-6                                # it reached the pin
    placed = poses(res, idx, magnify_clearance=50.0)
    shift = placed["bar"][0] - res.position("bar")
    assert np.abs(shift - 49.0 * offset).max() <= ROUND_OFF
    assert np.array_equal(placed["ball"][0], res.position("ball"))


def test_journal_offset_of_a_bore_starting_off_centre():
    """A bore built resting on its pin (offset (0, -c, 0)) starts at that offset."""
    s = nd.System(gravity=(0, -9.81, 0))
    bar = s.add_body("bar", mass=1.0, inertia=(2e-4, 0.0834, 0.0834),
                     position=(0.5, -CLEARANCE, 0))
    s.add_joint(nd.CylindricalClearance(s.ground, bar, (0, 0, 0), (0, 0, 1), 0.01, CLEARANCE,
                                        0.02, name="pin", offset=(0, -CLEARANCE, 0)))
    res = nd.simulate(s, t_end=0.002, h=1e-3, progress=False)
    joint = next(j for j in res.info["geometry"]["joints"] if j["name"] == "pin")
    assert np.abs(journal_offsets(res, joint, [0])[0] - [0, -CLEARANCE, 0]).max() <= ROUND_OFF


def test_frame_indices():
    t = np.linspace(0.0, 1.0, 1001)
    idx = frame_indices(t, fps=10)
    assert np.abs(t[idx] - np.r_[np.arange(0, 1.0, 0.1), 1.0]).max() <= ROUND_OFF
    assert len(frame_indices(t, fps=1000, max_frames=50)) == 50


# ------------------------------------------------------------------ animation files
@pytest.mark.slow
def test_gif(res, tmp_path):
    from PIL import Image
    path = res.animate(tmp_path / "run.gif", fps=20, magnify_clearance=20.0, dpi=40)
    with Image.open(path) as gif:
        frames = []
        for k in range(gif.n_frames):
            gif.seek(k)
            frames.append(np.asarray(gif.convert("L"), dtype=float))
    assert len(frames) == len(frame_indices(res.t, 20.0))
    assert np.abs(frames[-1] - frames[0]).max() > 0        # the bar moved


def test_mp4_or_a_clear_error(res, tmp_path):
    from matplotlib import animation
    path = tmp_path / "run.mp4"
    if animation.writers.is_available("ffmpeg"):
        assert res.animate(path, fps=10, dpi=40).stat().st_size > 0
    else:
        with pytest.raises(RuntimeError, match="MP4 needs ffmpeg"):
            res.animate(path)
    with pytest.raises(ValueError, match=r"\.gif or \.mp4"):
        res.animate(tmp_path / "run.avi")


# ------------------------------------------------------------------ interactive view
def _decode(values):
    """A plotly data array: a list (None for gaps) or a typed array {"dtype", "bdata"}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _frames(html: str) -> list:
    """The frames embedded in a plotly HTML file, as JSON."""
    start = re.search(r"Plotly\.addFrames\('[^']+',\s*", html).end()
    return json.JSONDecoder().raw_decode(html, start)[0]


@pytest.fixture(scope="module")
def html(res, tmp_path_factory):
    pytest.importorskip("plotly")
    return res.view_html(tmp_path_factory.mktemp("view") / "run.html", fps=50,
                         magnify_clearance=10.0)


def test_html_frames_are_the_result(res, html):
    frames = _frames(html.read_text())
    idx = frame_indices(res.t, 50.0)
    assert [int(f["name"]) for f in frames] == idx.tolist()
    size = np.array([1.0, 0.04, 0.02])
    for frame, i in zip(frames, idx):
        traces = {trace["name"]: trace for trace in frame["data"]}
        com = np.c_[[_decode(traces["centres of mass"][c]) for c in "xyz"]].T
        joint = next(j for j in res.info["geometry"]["joints"] if j["name"] == "pin")
        shift = 9.0 * journal_offsets(res, joint, [i])[0]
        assert np.abs(com[0] - (res.position("bar")[i] + shift)).max() <= ROUND_OFF
        assert np.abs(com[1] - res.position("ball")[i]).max() <= ROUND_OFF
        # every drawn point of the bar is on an edge of its box, in its body frame
        points = np.c_[[_decode(traces["bar"][c]) for c in "xyz"]].T
        points = points[~np.isnan(points).any(axis=1)]
        local = (points - com[0]) @ res.rotation("bar")[i]
        on_face = np.abs(np.abs(local) - size / 2) <= 1e-9
        assert len(points) == 24 and np.all(on_face.sum(axis=1) >= 2)


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="no headless browser (chromium) installed")
def test_html_renders_in_a_browser(html, tmp_path):
    from PIL import Image
    shot = tmp_path / "shot.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                    "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
                    "--window-size=800,700", "--virtual-time-budget=8000",
                    f"--screenshot={shot}", html.as_uri()],
                   check=True, capture_output=True, timeout=120)
    image = np.asarray(Image.open(shot).convert("RGB"), dtype=int)
    scene = image[150:520, 100:600]          # the 3D scene, not the legend or the buttons
    bar_colour = np.array([99, 110, 250])    # plotly's first trace colour (#636efa)
    drawn = np.abs(scene - bar_colour).sum(axis=2) < 60
    assert drawn.sum() > 50, "the bar is not drawn (WebGL did not render?)"
