"""Results: shapes and named lookups, an exact save/load round trip (.npz, no pickles) of every
array and lookup, plots from live and loaded results, and the command line.

Round trips are exact (np.array_equal, same dtype): nothing is recomputed on load. Saving is
atomic, and loading checks the file: damaged or inconsistent files raise ResultFileError.
"""
import copy
import json
import math
import os
import pathlib
import subprocess
import sys
import time
import zipfile

import matplotlib
import numpy as np
import pytest

import nlpdyn as nd
from test_validation import contradictory_drivers
from nlpdyn.__main__ import main
from nlpdyn.result import ResultFileError, StepStats
from problems import pendulum, slider_crank

matplotlib.use("Agg")


def falling_cup():
    """A cup on a ball with 1 mm clearance: it falls onto the ball (gaps and contacts)."""
    s = nd.System(gravity=(0, 0, -9.81))
    cup = s.add_body("cup", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(0, 0, 0.1),
                     angular_velocity=(0, 0, 1.0))
    s.add_joint(nd.SphericalClearance(s.ground, cup, point=(0, 0, 0.1), clearance=1e-3,
                                      name="socket"))
    return s


def failing_drivers():
    """Two drivers of one block that contradict each other after t = 0.305 (run stops)."""
    return contradictory_drivers(0.305)


RUNS = {
    # ideal joints of four kinds, a projected start (the rod's velocity violates joint C)
    "slider_crank": lambda: nd.simulate(slider_crank.build(), t_end=0.05, h=1e-3, progress=False),
    # gaps, contact forces, points and vectors; variable h
    "cup": lambda: nd.simulate(falling_cup(), t_end=0.03, h=(1e-4, 1e-3), progress=False),
    # success False, status -1, a message naming the time
    "failed": lambda: nd.simulate(failing_drivers(), t_end=1.0, h=1e-2, progress=False),
}


@pytest.fixture(scope="module", params=list(RUNS))
def result(request):
    return RUNS[request.param]()


@pytest.fixture(scope="module")
def crank_result():
    return RUNS["slider_crank"]()


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


def _same_dict(a, b):
    """Equal dicts, NaN equal to NaN (summary() reports mean_iterations = nan for QP steps)."""
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and np.isnan(a[k]) and np.isnan(b[k])) for k in a)


# ---------------------------------------------------------------- shapes and lookups


def test_shapes_and_lookups(crank_result):
    res = crank_result
    n = len(res.t)
    assert res.q.shape == (n, 21) and res.v.shape == (n, 18)
    assert res.position("rod").shape == (n, 3)
    assert res.orientation("rod").shape == (n, 4)
    assert res.velocity("slider").shape == (n, 3)
    assert res.angular_velocity("crank").shape == (n, 3)
    assert res.rotation("rod").shape == (n, 3, 3)
    assert res.energy.shape == (n,) and res.h.shape == (n - 1,)
    assert res.reaction_force("A").shape == (n - 1, 3)
    assert res.reaction_torque("C").shape == (n - 1, 3)
    assert res.multipliers("B").shape == (n - 1, 3)
    assert res.multipliers("slide").shape == (n - 1, 5)
    assert _same(res.energy, res.kinetic_energy + res.potential_energy)
    # lookups are the documented slices of the flat arrays (body order of declaration)
    assert _same(res.position("rod"), res.q[:, 7:10])
    assert _same(res.orientation("slider"), res.q[:, 17:21])
    assert _same(res.angular_velocity("rod"), res.v[:, 9:12])
    # the global angular velocity is A w'
    w_global = res.angular_velocity("crank", frame="global")
    A = res.rotation("crank")
    assert np.abs(w_global - np.einsum("nij,nj->ni", A, res.angular_velocity("crank"))).max() == 0
    with pytest.raises(KeyError, match="no body named 'wheel'"):
        res.position("wheel")
    with pytest.raises(KeyError, match="no element named 'Z'"):
        res.reaction_force("Z")
    with pytest.raises(KeyError, match="acts on"):
        res.reaction_force("A", body="slider")
    with pytest.raises(ValueError, match="frame"):
        res.angular_velocity("crank", frame="world")


def test_action_equals_reaction(crank_result):
    """Joint B (spherical, crank-rod): the forces on its two bodies are opposite, and the
    ground's share of joint A balances the crank's (identity tier: the same numbers)."""
    res = crank_result
    scale = 1 + np.abs(res.reaction_force("B", body="crank")).max()
    assert np.abs(res.reaction_force("B", body="crank")
                  + res.reaction_force("B", body="rod")).max() <= 1e-12 * scale
    assert np.abs(res.reaction_force("A", body="ground")
                  + res.reaction_force("A", body="crank")).max() == 0


# ---------------------------------------------------------------- save / load


ARRAYS = ("t", "h", "q", "v", "energy", "kinetic_energy", "potential_energy", "mu", "lam", "gaps")


def test_save_load_round_trip(result, tmp_path):
    path = tmp_path / "r.npz"
    result.save(path)
    back = nd.Result.load(path)

    for name in ARRAYS:
        assert _same(getattr(back, name), getattr(result, name)), name
    for f in StepStats.__dataclass_fields__:
        assert _same(getattr(back.stats, f), getattr(result.stats, f)), f
    assert _same_dict(back.stats.summary(), result.stats.summary())

    assert back.body_names == result.body_names
    for body in result.body_names:
        for lookup in ("position", "orientation", "velocity", "angular_velocity", "rotation"):
            assert _same(getattr(back, lookup)(body), getattr(result, lookup)(body))
        assert _same(back.angular_velocity(body, frame="global"),
                     result.angular_velocity(body, frame="global"))

    assert back.constraint_rows == result.constraint_rows
    for name, (_, _, bodies) in result.constraint_rows.items():
        assert _same(back.multipliers(name), result.multipliers(name))
        for body in bodies:
            assert _same(back.reaction_force(name, body), result.reaction_force(name, body))
            assert _same(back.reaction_torque(name, body), result.reaction_torque(name, body))

    assert back.gap_rows == result.gap_rows
    for name, (_, _, bodies) in result.gap_rows.items():
        for lookup in ("gap", "contact_force", "contact_point", "contact_force_vector",
                       "multipliers"):
            assert _same(getattr(back, lookup)(name), getattr(result, lookup)(name))
        for body in bodies:
            assert _same(back.reaction_force(name, body), result.reaction_force(name, body))

    assert back.success is result.success
    assert back.status == result.status and back.message == result.message
    assert back.initial_projection == result.initial_projection
    assert back.info == result.info
    assert back.summary() == result.summary() and repr(back) == repr(result)


def test_saved_file_is_plain_arrays(crank_result, tmp_path):
    """No pickles: the archive opens with allow_pickle=False and the metadata is JSON."""
    path = tmp_path / "r.npz"
    crank_result.save(path)
    with np.load(path, allow_pickle=False) as data:
        assert all(data[k].dtype != object for k in data.files)
        meta = json.loads(str(data["__meta__"]))
    assert meta["message"] == crank_result.message


def test_the_runs_are_what_the_round_trip_needs(result):
    """Guard against a vacuous round trip: each run exercises what it is there for."""
    if result.gap_rows:
        assert result.contact_force("socket").max() > 0
        assert len(np.unique(result.h)) > 1
    elif not result.success:
        assert result.status == -1 and "contradict" in result.message
    else:
        assert result.initial_projection["changed"] and len(result.constraint_rows) == 4


NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf,
              "list": [1.5, math.nan, -0.0], "nested": {"min_gap": math.inf}}


@pytest.fixture(scope="module")
def pendulum_result():
    return nd.simulate(pendulum.build(), t_end=0.01, h=1e-3, progress=False)


@pytest.fixture
def saved(pendulum_result, tmp_path):
    return pendulum_result.save(tmp_path / "good.npz")


def _with_non_finite_info(result):
    res = copy.copy(result)
    res.info = {**result.info, "non_finite": NON_FINITE}
    return res


def _all_arrays(res):
    """Every array a Result holds, named after where it holds it."""
    arrays = {name: getattr(res, name) for name in ARRAYS}
    arrays.update({f"stats.{f}": getattr(res.stats, f) for f in StepStats.__dataclass_fields__})
    for attr in ("wrenches", "contact_points", "contact_vectors", "element_work",
                 "element_potential", "ledger"):
        arrays.update({f"{attr}[{k!r}]": a for k, a in getattr(res, attr).items()})
    return arrays


def _bit_identical(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _equal(a, b):
    """Deep equality: NaN equal to NaN, a list to a tuple; a float never equal to an int, nor
    a bool to an int."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, float):
        return isinstance(b, float) and (a == b or (math.isnan(a) and math.isnan(b)))
    return not isinstance(b, float) and isinstance(a, bool) == isinstance(b, bool) and a == b


def _members(path):
    """The arrays of an .npz and its ``__meta__`` parsed by plain json."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays, json.loads(str(arrays.pop("__meta__")))


def _rewrite(src, dst, change):
    """Copy the result file ``src`` to ``dst`` with ``change(arrays, meta)`` applied."""
    arrays, meta = _members(src)
    change(arrays, meta)
    np.savez(dst, __meta__=np.array(json.dumps(meta)), **arrays)


def test_round_trip_is_bit_identical(result, tmp_path):
    """Every array bit for bit, the metadata equal, non-finite floats in it included."""
    res = _with_non_finite_info(result)
    back = nd.Result.load(res.save(tmp_path / "r.npz"))
    before, after = _all_arrays(res), _all_arrays(back)
    assert before.keys() == after.keys()
    assert [k for k in before if not _bit_identical(before[k], after[k])] == []
    for attr in ("body_names", "constraint_rows", "gap_rows", "force_elements", "success",
                 "status", "message", "initial_projection", "info"):
        assert _equal(getattr(back, attr), getattr(res, attr)), attr
    assert back.info["non_finite"]["-inf"] == -math.inf and math.isnan(back.info["non_finite"]["nan"])
    assert math.copysign(1.0, back.info["non_finite"]["list"][2]) == -1.0


def test_metadata_is_strict_json_with_a_format_version(pendulum_result, tmp_path):
    path = _with_non_finite_info(pendulum_result).save(tmp_path / "r.npz")

    def reject(constant):
        raise ValueError(f"not strict JSON: {constant}")
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]), parse_constant=reject)
    assert meta["format"] == "nlpdyn-result" and meta["version"] == 2
    # the documented encoding of non-finite floats
    assert meta["info"]["non_finite"]["list"] == [1.5, {"__float__": "nan"}, -0.0]
    assert meta["info"]["run"]["min_gap"] == {"__float__": "inf"}     # no gaps: min over none


def test_npz_suffix_is_handled_alike_by_save_and_load(pendulum_result, tmp_path):
    written = pendulum_result.save(tmp_path / "run")
    assert isinstance(written, pathlib.Path) and written == tmp_path / "run.npz"
    assert os.listdir(tmp_path) == ["run.npz"]
    for name in (tmp_path / "run", tmp_path / "run.npz", str(tmp_path / "run")):
        assert _bit_identical(nd.Result.load(name).q, pendulum_result.q)
    assert pendulum_result.save(str(tmp_path / "other.npz")) == tmp_path / "other.npz"
    assert sorted(os.listdir(tmp_path)) == ["other.npz", "run.npz"]
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        nd.Result.load(tmp_path / "missing")


def _fail_mid_write(monkeypatch, error):
    def write_part_then_fail(file, *args, **kwargs):
        file.write(b"PK\x03\x04" + bytes(1000))
        raise error
    monkeypatch.setattr(np, "savez_compressed", write_part_then_fail)


def _fail_at_fsync(monkeypatch, error):
    def fail(fd):
        raise error
    monkeypatch.setattr(os, "fsync", fail)


@pytest.mark.parametrize("fail", [_fail_mid_write, _fail_at_fsync])
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_save_leaves_the_existing_file_and_no_temporary(saved, tmp_path, monkeypatch,
                                                                 fail, error):
    before = saved.read_bytes()
    fail(monkeypatch, error)
    with pytest.raises(type(error)):
        nd.Result.load(saved).save(saved)
    with pytest.raises(type(error)):
        nd.Result.load(saved).save(tmp_path / "new.npz")
    assert saved.read_bytes() == before
    assert os.listdir(tmp_path) == [saved.name]


def test_save_refuses_a_result_that_would_not_load_back(pendulum_result, tmp_path):
    res = copy.copy(pendulum_result)
    res.q = res.q[:-1]
    with pytest.raises(ResultFileError, match=r"r\.npz: cannot be written from this result: "
                                              r"q: shape \(10, 7\), expected \(n_points, 7 n_bodies\)"):
        res.save(tmp_path / "r")
    assert os.listdir(tmp_path) == []


def _damage_member(good, path, member="q.npy"):
    """Flip a byte in the middle of one member's compressed data."""
    data = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as archive:
        info = archive.getinfo(member)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _rewritten(change):
    return lambda good, path: _rewrite(good, path, change)


def _meta_text(text):
    return lambda good, path: np.savez(path, __meta__=np.array(text), **_members(good)[0])


def _pickled_q(arrays, meta):
    arrays["q"] = np.array([None, 1.0], dtype=object)


def _non_strict_json(arrays, meta):
    meta["info"]["x"] = math.nan           # json.dumps writes NaN


def _stretch_pivot_rows(arrays, meta):
    meta["constraint_rows"]["pivot"][1] = 4


# name: (how to make the bad file from a good one, what the error says, chained to the cause)
BAD_FILES = {
    "truncated": (lambda good, path: path.write_bytes(good.read_bytes()[:good.stat().st_size // 2]),
                  r"not a readable nlpdyn result file: BadZipFile: ", True),
    "random bytes": (lambda good, path: path.write_bytes(np.random.default_rng(0).bytes(5000)),
                     r"not a readable nlpdyn result file: not an \.npz archive", False),
    "empty": (lambda good, path: path.write_bytes(b""), r"not an \.npz archive", False),
    "damaged member": (_damage_member, r"file: q: (error|BadZipFile): ", True),
    "pickled array": (_rewritten(_pickled_q), r"file: q: ValueError: Object arrays cannot be loaded", True),
    "zip without __meta__": (lambda good, path: np.savez(path, **_members(good)[0]),
                             r"__meta__: missing", False),
    "__meta__ not JSON": (_meta_text('{"t": ['),
                          r"__meta__: not JSON \(Expecting value", True),
    "__meta__ not an object": (_meta_text("[1, 2]"),
                               r"__meta__: expected a JSON object, got list", False),
    "wrong-shaped array": (_rewritten(lambda a, m: a.update(q=a["q"][:, :-1])),
                           r"q: shape \(11, 6\), expected \(n_points, 7 n_bodies\) = \(11, 7\)", False),
    "short stats array": (_rewritten(lambda a, m: a.update(stats__retries=a["stats__retries"][1:])),
                          r"stats__retries: shape \(9,\), expected \(n_points - 1\) = \(10,\)", False),
    "string energy": (_rewritten(lambda a, m: a.update(energy=a["energy"].astype(str))),
                      r"energy: dtype <U\d+, expected floating point", False),
    "success 'no'": (_rewritten(lambda a, m: m.update(success="no")),
                     r"""__meta__\["success"\]: expected bool, got 'no'""", False),
    "status 'ok'": (_rewritten(lambda a, m: m.update(status="ok")),
                    r"""__meta__\["status"\]: expected int, got 'ok'""", False),
    "message missing": (_rewritten(lambda a, m: m.pop("message")),
                        r"""__meta__\["message"\]: missing""", False),
    "array missing": (_rewritten(lambda a, m: a.pop("stats__iterations")),
                      r"stats__iterations: missing", False),
    "wrench missing": (_rewritten(lambda a, m: a.pop("wrench__pivot")),
                       r"wrench__pivot: missing", False),
    "rows out of step with mu": (_rewritten(_stretch_pivot_rows),
                                 r"mu: shape \(10, 5\), expected \(n_points - 1, constraint rows\) = \(10, 4\)",
                                 False),
    "unknown array": (_rewritten(lambda a, m: a.update(extra=np.zeros(3))),
                      r"extra: not part of the format", False),
    "newer version": (_rewritten(lambda a, m: m.update(version=3)),
                      r"""__meta__\["version"\]: 3, written by a newer nlpdyn""", False),
    "NaN in version 1": (_rewritten(_non_strict_json), r"__meta__: not strict JSON", False),
    "NaN in t": (_rewritten(lambda a, m: a["t"].__setitem__(4, math.nan)),
                 r"t: not finite \(1 of 11, first at \[4\]: nan\)", False),
    "t not increasing": (_rewritten(lambda a, m: a["t"].__setitem__([3, 4], a["t"][[4, 3]])),
                         r"t: not strictly increasing \(1 of 10, first at \[3\]", False),
    "h not the steps of t": (_rewritten(lambda a, m: a["h"].__setitem__(6, 1.5 * a["h"][6])),
                             r"h: not t\[i \+ 1\] - t\[i\], as in a run whose 10 steps are all "
                             r"kept \(1 of 10, first at \[6\]: h = 0\.0015", False),
    "h not positive": (_rewritten(lambda a, m: a["h"].__setitem__(0, -a["h"][0])),
                       r"h: not positive \(1 of 10, first at \[0\]\)", False),
    "inf in energy": (_rewritten(lambda a, m: a["energy"].__setitem__(2, math.inf)),
                      r"energy: not finite \(1 of 11, first at \[2\]: inf\)", False),
    "NaN in v": (_rewritten(lambda a, m: a["v"].__setitem__((5, 1), math.nan)),
                 r"v: not finite \(1 of 66, first at \[5, 1\]: nan\)", False),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_a_bad_file_raises_a_clear_error(saved, tmp_path, name):
    make, message, chained = BAD_FILES[name]
    bad = tmp_path / "bad.npz"
    make(saved, bad)
    with pytest.raises(ResultFileError, match=message) as caught:
        nd.Result.load(bad)
    err = caught.value
    assert isinstance(err, ValueError) and err.path == bad
    assert str(err).startswith(f"{bad}: not a readable nlpdyn result file:")
    assert (err.__cause__ is not None) == chained


def test_every_problem_is_reported_at_once(saved, tmp_path):
    def change(arrays, meta):
        arrays["q"] = arrays["q"][:, :-1]
        arrays["energy"] = arrays["energy"].astype(str)
        meta["success"] = "no"
        del meta["message"]
    bad = tmp_path / "bad.npz"
    _rewrite(saved, bad, change)
    with pytest.raises(ResultFileError) as caught:
        nd.Result.load(bad)
    keys = [problem.split(":")[0] for problem in caught.value.problems]
    assert sorted(keys) == ['__meta__["message"]', '__meta__["success"]', "energy", "q"]
    assert str(caught.value).startswith(f"{bad}: not a readable nlpdyn result file:\n  - ")


def test_every_value_problem_is_reported_at_once(saved, tmp_path):
    def change(arrays, meta):
        arrays["q"][3, 0] = math.nan
        arrays["kinetic_energy"][-1] = -math.inf
        arrays["h"][2] *= 2
    bad = tmp_path / "bad.npz"
    _rewrite(saved, bad, change)
    with pytest.raises(ResultFileError) as caught:
        nd.Result.load(bad)
    keys = [problem.split(":")[0] for problem in caught.value.problems]
    assert sorted(keys) == ["h", "kinetic_energy", "q"]


@pytest.mark.parametrize("keep", [{"output_every": 3}, {"t_eval": [0.0021, 0.005, 0.0077]}],
                         ids=["output_every", "t_eval"])
def test_runs_that_keep_some_steps_load(tmp_path, keep):
    """Their h is the last step before each kept point, shorter than the time between kept
    points: it loads; an h longer than that does not."""
    res = nd.simulate(pendulum.build(), t_end=0.01, h=1e-3, progress=False, **keep)
    assert res.info["run"]["n_steps"] > len(res.h)
    assert (res.h < np.diff(res.t) - 1e-9).any()                # guard: some steps not kept
    back = nd.Result.load(res.save(tmp_path / "r.npz"))
    assert _bit_identical(back.h, res.h) and _bit_identical(back.t, res.t)
    long = copy.copy(res)
    long.h = res.h.copy()
    long.h[1] = 1.01 * (res.t[2] - res.t[1])
    with pytest.raises(ResultFileError, match=r"h: longer than t\[i \+ 1\] - t\[i\] \(1 of"):
        long.save(tmp_path / "long.npz")


def test_a_save_removes_temporaries_of_dead_writers(saved, tmp_path):
    """What a save killed with kill -9 leaves behind goes at the next save to the same file;
    a live writer's temporary, old-style names that are recent, other hosts' recent files and
    other files stay."""
    from nlpdyn.result import _HOST, STALE_AGE
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        "dead writer": f".good.npz.{_HOST}-{dead.pid}.{'a' * 16}.tmp",
        "live writer": f".good.npz.{_HOST}-{os.getppid()}.{'b' * 16}.tmp",
        "old and live": f".good.npz.{_HOST}-{os.getppid()}.{'c' * 16}.tmp",
        "old style, old": f".good.npz.{'d' * 16}.tmp",
        "old style, recent": f".good.npz.{'e' * 16}.tmp",
        "other host": f".good.npz.{'0' * 8}-{dead.pid}.{'f' * 16}.tmp",
        "not ours": ".good.npz.notes.tmp",
        "other target": f".other.npz.{_HOST}-{dead.pid}.{'a' * 16}.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"PK\x03\x04" + bytes(100))
    long_ago = time.time() - STALE_AGE - 60
    for key in ("old and live", "old style, old"):
        os.utime(tmp_path / names[key], (long_ago, long_ago))
    nd.Result.load(saved).save(saved)
    gone = {key for key, name in names.items() if not (tmp_path / name).exists()}
    assert gone == {"dead writer", "old and live", "old style, old"}


def test_a_file_from_before_format_versions_loads(pendulum_result, tmp_path):
    """As nlpdyn wrote them before: the same arrays, no format or version, and NaN/Infinity in
    the metadata (non-strict JSON)."""
    res = pendulum_result
    meta = {"body_names": res.body_names, "constraint_rows": res.constraint_rows,
            "force_elements": res.force_elements, "gap_rows": res.gap_rows,
            "success": res.success, "status": res.status, "message": res.message,
            "initial_projection": res.initial_projection, "info": res.info}
    text = json.dumps(meta, default=lambda x: x.item())
    assert "Infinity" in text
    old = tmp_path / "old.npz"
    np.savez_compressed(old, __meta__=np.array(text), **_members(res.save(tmp_path / "new"))[0])
    back = nd.Result.load(old)
    before, after = _all_arrays(res), _all_arrays(back)
    assert before.keys() == after.keys()
    assert all(_bit_identical(before[k], after[k]) for k in before)
    assert _equal(back.info, res.info) and back.info["run"]["min_gap"] == math.inf


# ---------------------------------------------------------------- plots


def test_plot_runs_on_live_results(result):
    import matplotlib.pyplot as plt
    plotting = pytest.importorskip("nlpdyn.plotting")
    fig = result.plot()
    varies = plotting.step_size_varies(result)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == min(len(result.body_names), plotting.MAX_BODY_PANELS) + 2 + varies
    assert fig._suptitle.get_text().startswith(result.message)
    if varies:     # the step-size panel only when h varies beyond round-off
        ax = next(ax for ax in shown if ax.get_title() == "step size")
        assert len(ax.lines) == 1 and len(ax.lines[0].get_xdata()) >= len(result.h)
    plt.close(fig)


def test_plot_from_a_loaded_result(crank_result, tmp_path):
    """A saved run is plotted without rerunning it: the loaded result draws the same data."""
    import matplotlib.pyplot as plt
    pytest.importorskip("nlpdyn.plotting")
    crank_result.save(tmp_path / "r.npz")
    figs = [crank_result.plot(), nd.Result.load(tmp_path / "r.npz").plot()]
    lines = [[ln.get_xydata() for ax in fig.axes for ln in ax.lines] for fig in figs]
    assert len(lines[0]) == len(lines[1]) == 9 + 3 + 1     # fixed h: no step-size panel
    assert all(_same(a, b) for a, b in zip(*lines, strict=True))
    for fig in figs:
        plt.close(fig)


def test_plot_helpers_draw_on_given_axes(crank_result):
    import matplotlib.pyplot as plt
    plotting = pytest.importorskip("nlpdyn.plotting")
    fig, ax = plt.subplots()
    assert plotting.plot_positions(crank_result, ["rod"], ax=ax) is fig
    assert len(ax.lines) == 3
    plotting.plot_energy(crank_result, ax=ax)
    assert len(ax.lines) == 6
    plt.close(fig)


# ---------------------------------------------------------------- command line


def test_cli_runs_a_problem(tmp_path, capsys):
    png = tmp_path / "p.png"
    assert main(["pendulum", "--t-end", "0.2", "--h", "1e-3", "--plot", str(png), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "reached t_end" in out and "pendulum angle range" in out
    assert png.stat().st_size > 10_000


def test_cli_lists_and_rejects(capsys):
    assert main(["--list"]) == 0
    assert "slider_crank" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["no_such_problem"])
    assert "unknown problem 'no_such_problem'" in capsys.readouterr().err


def test_metadata_json_cannot_hold_is_named_by_its_keys(pendulum_result, tmp_path):
    """Anything in info that JSON cannot hold is named by its keys, every entry at once, and
    nothing is written."""
    res = copy.deepcopy(pendulum_result)
    res.info["mine"] = {"a": object(), 3: 1}
    res.info["ok"] = [1, {1, 2}]
    with pytest.raises(ValueError) as err:
        res.save(tmp_path / "r.npz")
    text = str(err.value)
    assert "info['mine']['a']: a object" in text
    assert "info['mine']: keys must be str, got [3]" in text
    assert "info['ok'][1]: a set" in text
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("scheme", ["euler", "midpoint"])
def test_joint_forces_survive_saving_and_keeping_every_kth_step(scheme, tmp_path):
    """The reactions act where each step evaluated them (its start with "euler", its
    midpoint with "midpoint"): a saved and loaded result, and one keeping every 5th step,
    give the joint forces of the run itself."""
    run = nd.simulate(slider_crank.build(), 0.02, 1e-3, progress=False, scheme=scheme)
    back = nd.Result.load(run.save(tmp_path / "run"))
    thinned = nd.simulate(slider_crank.build(), 0.02, 1e-3, progress=False, scheme=scheme,
                          output_every=5)
    for joint in run.info["joints"]:
        wrench = run.joint_forces(joint)["wrench"]
        assert np.array_equal(back.joint_forces(joint)["wrench"], wrench)
        assert np.array_equal(thinned.joint_forces(joint)["wrench"], wrench[4::5])


def test_names_stay_importable_from_the_result_module():
    """The file format, the per-step record and the summary live in modules of their own;
    what was imported from nlpdyn.result still is."""
    from nlpdyn import result, result_io, result_summary, step_stats
    from nlpdyn.result import (FORMAT, FORMAT_VERSION, STALE_AGE, _HOST, Result,  # noqa: F401
                               ResultFileError, StepStats, _largest_changes, _npz_path,
                               _write_atomically)
    assert ResultFileError is result_io.ResultFileError and StepStats is step_stats.StepStats
    assert _largest_changes is result_summary._largest_changes and result.Result is nd.Result


def _imports(module) -> set:
    """The nlpdyn modules ``module`` (a file of nlpdyn/) imports, at any depth of its code."""
    import ast
    path = pathlib.Path(nd.__file__).parent / f"{module}.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module} if node.module else {a.name for a in node.names}
    return {name.split(".")[0] for name in out}


def test_the_result_and_sweep_modules_import_without_a_circle():
    """result -> result_io, result_joints, result_summary -> step_stats, tables; sweep ->
    sweep_runner -> stepper: no module imports one that (directly or not) imports it back."""
    modules = ["result", "result_io", "result_joints", "result_summary", "step_stats",
               "tables", "sweep", "sweep_runner"]
    graph = {m: _imports(m) & set(modules) for m in modules}

    def reaches(start, target, seen=()):
        return any(n == target or (n not in seen and reaches(n, target, (*seen, n)))
                   for n in graph[start])
    assert not [m for m in modules if reaches(m, m)]
