"""Views a user can trust: the up direction from gravity, slender default bodies drawn joint
to joint, the model's name in titles, rounded times, and progress bars on renders."""
import io
import re
import sys

import matplotlib
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn.animation import animate, plot_scene
from nlpdyn.geometry import (describe, drawn_lines, frame_indices,
                             joint_positions, time_labels, up_direction, view_frame)
from problems import clearance_pendulum, slider_crank

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROUND_OFF = 1e-12


@pytest.fixture(scope="module")
def pendulum():
    """The clearance pendulum (gravity -y) with adaptive steps: irregular output times."""
    res = nd.simulate(clearance_pendulum.build(), t_end=0.1, h=(1e-4, 2e-3), progress=False)
    assert res.success and np.ptp(np.diff(res.t)) > 1e-4
    return res


@pytest.fixture(scope="module")
def crank_run():
    with pytest.warns(UserWarning, match="projected"):
        system = slider_crank.build()
        return system, nd.simulate(system, t_end=0.02, h=1e-3, progress=False)


def _ball(gravity=(0.0, 0.0, -9.81)):
    s = nd.System(gravity=gravity)
    s.add_body("ball", mass=1.0, inertia=(1, 1, 1))
    return s


# ------------------------------------------------------------------ up direction
def test_pendulum_view_has_y_up(pendulum):
    assert np.array_equal(up_direction(pendulum), [0.0, 1.0, 0.0])
    fig = plot_scene(pendulum, t=0.05)
    try:
        ax = fig.axes[0]
        assert ax.get_zlabel() == "y (m)"
        # the drawn vertical coordinate of the bar is its global y
        i = int(np.argmin(np.abs(pendulum.t - 0.05)))
        link = drawn_lines(pendulum, [i])["bar"][0][0]
        drawn = np.array(ax.lines[0].get_data_3d()).T
        assert np.abs(drawn[:, 2] - link[:, 1]).max() <= ROUND_OFF
        assert drawn[:, 2].min() < -1e-3                # the bar falls: down is -y
    finally:
        plt.close(fig)


def test_html_camera_has_y_up(pendulum):
    pytest.importorskip("plotly")
    from nlpdyn.viewer import figure
    camera = figure(pendulum, fps=20, progress=False).layout.scene.camera
    assert (camera.up.x, camera.up.y, camera.up.z) == (0.0, 1.0, 0.0)
    eye = np.array([camera.eye.x, camera.eye.y, camera.eye.z])
    assert eye[1] > 0                                   # seen from above, as the GIF
    camera = figure(pendulum, fps=20, up="z", progress=False).layout.scene.camera
    assert (camera.up.x, camera.up.y, camera.up.z) == (0.0, 0.0, 1.0)


def test_up_is_overridden_and_defaults_to_z():
    res = nd.simulate(_ball((0.0, 0.0, 0.0)), 0.002, 1e-3, progress=False)
    assert np.array_equal(up_direction(res), [0.0, 0.0, 1.0])         # no gravity: z
    assert np.array_equal(up_direction(res, "-x"), [-1.0, 0.0, 0.0])
    assert np.abs(up_direction(res, (0, 3, 4)) - [0, 0.6, 0.8]).max() <= ROUND_OFF
    fig = plot_scene(res, up="-x")
    try:
        assert [fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel(),
                fig.axes[0].get_zlabel()] == ["z (m)", "y (m)", "-x (m)"]
    finally:
        plt.close(fig)
    for bad in ("w", "", "xy", (0, 0, 0), (1, 2), (np.nan, 0, 1), "-"):
        with pytest.raises(ValueError, match="up must be"):
            up_direction(res, bad)


@pytest.mark.parametrize("up", [(0, 0, 1), (0, 1, 0), (0, -1, 0), (-1, 0, 0), (0.6, 0, 0.8)])
def test_view_frame_is_right_handed_with_up_last(up):
    frame, names = view_frame(np.asarray(up, dtype=float))
    assert np.abs(frame @ frame.T - np.eye(3)).max() <= ROUND_OFF
    assert abs(np.linalg.det(frame) - 1.0) <= ROUND_OFF
    assert np.array_equal(frame[2], up)
    assert len(names) == 3


def test_old_results_without_gravity_draw_z_up(pendulum):
    saved = pendulum.info["geometry"].pop("gravity")
    try:
        assert np.array_equal(up_direction(pendulum), [0.0, 0.0, 1.0])
    finally:
        pendulum.info["geometry"]["gravity"] = saved


# ------------------------------------------------------------------ slender default bodies
def test_slender_rod_joins_its_joint_points(crank_run):
    """The slider-crank's rod (no shapes, joints B and C) is one segment from B to C, the
    crank one from A to B, in every frame; the slider, whose joints sit at its centre of
    mass, stays its inertia box."""
    system, res = crank_run
    shapes = res.info["geometry"]["bodies"]
    assert [s["shape"] for s in shapes["rod"]] == ["link"]
    assert [s["shape"] for s in shapes["crank"]] == ["link"]
    assert [s["shape"] for s in shapes["slider"]] == ["box"]
    idx = np.arange(len(res.t))
    lines = drawn_lines(res, idx)
    joints = joint_positions(res, idx)
    names = [j["name"] for j in res.info["geometry"]["joints"]]
    at = {name: joints[:, names.index(name)] for name in ("A", "B", "C")}
    for body, ends in (("rod", ("B", "C")), ("crank", ("A", "B"))):
        (segment,) = lines[body]
        drawn = {tuple(np.round(segment[0, k], 9)) for k in (0, 1)}
        wanted = {tuple(np.round(at[e][0], 9)) for e in ends}
        assert drawn == wanted, body
        for k in range(len(idx)):
            gaps = [min(np.linalg.norm(segment[k, m] - at[e][k]) for m in (0, 1)) for e in ends]
            assert max(gaps) <= 1e-6           # the rod stays on its joints (constraint drift)


@pytest.mark.parametrize("mass", [1.0, 1e-3, 50.0])
def test_one_joint_is_a_link_through_the_centre_of_mass_and_none_a_box(mass):
    """A bar hinged at one end: one link from the pin through the centre of mass to the far
    face of the uniform box with its mass and inertia (half-length sqrt(3 (I_y + I_z - I_x)
    / 2 m) along x); a near point mass: just past its centre; a body with no joint: the box."""
    s = nd.System()
    inertia = mass * np.array([1e-3, 0.08, 0.08])
    bar = s.add_body("bar", mass=mass, inertia=inertia, position=(0.5, 0, 0))
    bob = s.add_body("bob", mass=mass, inertia=(1e-12, 1e-12, 1e-12), position=(0, -1, 0))
    s.add_body("free", mass=1.0, inertia=(1e-3, 0.08, 0.08), position=(0, 1, 0))
    s.add_joint(nd.Revolute(s.ground, bar, (0, 0, 0), (0, 0, 1), name="pin"))
    s.add_joint(nd.Spherical(s.ground, bob, (0, 0, 0), name="pivot"))
    shapes = describe(s)["bodies"]
    [link] = shapes["bar"]
    half = np.sqrt(3 * (inertia[1] + inertia[2] - inertia[0]) / (2 * mass))
    assert link["shape"] == "link" and link["offset"] == [-0.5, 0.0, 0.0]
    assert np.abs(np.subtract(link["point"], [half, 0, 0])).max() <= ROUND_OFF
    [rod] = shapes["bob"]
    assert rod["offset"] == [0.0, 1.0, 0.0]
    # the point mass's own box: edges sqrt(6 I / m), its far face sqrt(1.5 I / m) below
    assert np.subtract(rod["point"], [0, -np.sqrt(1.5e-12 / mass), 0]) == pytest.approx(0, abs=1e-12)
    assert [x["shape"] for x in shapes["free"]] == ["box"]


def test_three_joints_are_joined_by_their_shortest_tree():
    """A plate with joints at three corners: two links, the two shortest sides."""
    s = nd.System()
    plate = s.add_body("plate", mass=1.0, inertia=(0.1, 0.1, 0.2))
    for k, (point, name) in enumerate((((0.0, 0, 0), "a"), ((0.3, 0, 0), "b"),
                                       ((0.0, 0.4, 0), "c"))):
        other = s.add_body(f"arm{k}", mass=1.0, inertia=(1, 1, 1), position=point)
        s.add_joint(nd.Spherical(plate, other, point, name=name))
    links = describe(s)["bodies"]["plate"]
    lengths = sorted(np.linalg.norm(np.subtract(x["point"], x["offset"])) for x in links)
    assert [x["shape"] for x in links] == ["link", "link"]
    assert np.abs(np.array(lengths) - [0.3, 0.4]).max() <= ROUND_OFF


# ------------------------------------------------------------------ names and times in titles
def test_titles_carry_the_model_name(pendulum, tmp_path):
    fig = plot_scene(pendulum, name="clearance pendulum")
    try:
        assert fig.axes[0].get_title().startswith("clearance pendulum: t = ")
    finally:
        plt.close(fig)
    fig = pendulum.plot(name="clearance pendulum", title="a pin with play")
    try:
        assert fig.get_suptitle().startswith("clearance pendulum: a pin with play\n")
    finally:
        plt.close(fig)


def test_html_title_carries_the_model_name(pendulum):
    pytest.importorskip("plotly")
    from nlpdyn.viewer import figure
    title = figure(pendulum, fps=20, name="clearance pendulum", progress=False).layout.title
    assert title.text.startswith("clearance pendulum: reached t_end (t = 0.0 .. 0.1 s")


def test_a_named_system_names_its_views():
    s = _ball()
    s.name = "falling ball"
    res = nd.simulate(s, 0.002, 1e-3, progress=False)
    assert res.info["geometry"]["name"] == "falling ball"
    for fig in (plot_scene(res), res.plot()):
        try:
            text = fig.axes[0].get_title() if fig.axes[0].name == "3d" else fig.get_suptitle()
            assert text.startswith("falling ball")
        finally:
            plt.close(fig)


def test_time_labels_are_rounded_to_the_grid():
    assert time_labels([0.0, 0.0401, 0.08, 0.12000000000000001]) == \
        ["0.00", "0.04", "0.08", "0.12"]
    assert time_labels(np.arange(4) * 1e-3 + 0.123) == ["0.123", "0.124", "0.125", "0.126"]
    assert time_labels([0.0, 0.25, 0.5]) == ["0.00", "0.25", "0.50"]
    assert time_labels([1.5]) == ["1.500"]


def test_html_slider_labels_are_rounded(pendulum):
    pytest.importorskip("plotly")
    from nlpdyn.viewer import figure
    fig = figure(pendulum, fps=50, progress=False)
    steps = fig.layout.sliders[0].steps
    times = pendulum.t[frame_indices(pendulum.t, 50.0)]
    assert not np.all(np.abs(times / 0.02 - np.round(times / 0.02)) <= ROUND_OFF)  # off grid
    labels = [step.label for step in steps]
    assert all(re.fullmatch(r"\d\.\d\d", label) for label in labels), labels
    assert np.abs(np.array(labels, dtype=float) - times).max() <= 0.005


# ------------------------------------------------------------------ progress bars
class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("kind", ["gif", "html"])
def test_progress_bar_shown_by_default_and_silenced(pendulum, tmp_path, capsys, monkeypatch,
                                                    kind):
    if kind == "html":
        pytest.importorskip("plotly")

    def render(**options):
        if kind == "gif":
            return animate(pendulum, tmp_path / "run.gif", fps=20, dpi=20, **options)
        return pendulum.view_html(tmp_path / "run.html", fps=20, **options)

    render(progress=False)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    render()
    frames = len(frame_indices(pendulum.t, 20.0))
    assert f"{frames}/{frames}" in terminal.getvalue() and "frame" in terminal.getvalue()


def test_gif_has_a_frame_per_chosen_time(pendulum, tmp_path):
    from PIL import Image
    path = animate(pendulum, tmp_path / "run.gif", fps=20, dpi=20, progress=False,
                   name="clearance pendulum", up="z")
    with Image.open(path) as gif:
        assert gif.n_frames == len(frame_indices(pendulum.t, 20.0))
