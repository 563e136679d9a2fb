"""The step's functions compiled with the system's C compiler (``StepperSettings.jit``,
``nlpdyn.jit``): the same steps as CasADi's interpreter, a disk cache keyed by the C code,
and a clean fallback where nothing can be compiled."""
import shutil
import warnings

import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from nlpdyn import jit as jit_module
from nlpdyn import stepper as stepper_module
from nlpdyn.jit import Jit, find_compiler
from problems import chain, clearance_pendulum, slider_crank

needs_compiler = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test with a cache of its own."""
    monkeypatch.setenv("NLPDYN_CACHE", str(tmp_path / "jit"))
    return tmp_path / "jit"


def _stop_pendulum():
    s = nd.System(gravity=(0, 0, -9.81))
    bar = s.add_body("bar", 1.0, (1e-4, 1 / 12, 1 / 12), position=(0.5, 0, 0))
    hinge = s.add_joint(nd.Revolute(s.ground, bar, point=(0, 0, 0), axis=(0, 1, 0),
                                    name="hinge"))
    s.add_force(nd.RotationStop(hinge, -1.0, 1.0, nd.Hertz(1e6), name="stop"))
    return s


CASES = {
    # ideal joints: the KKT solve and the end velocity's projection
    "slider-crank": (slider_crank.build, 0.3, 1e-3),
    # implicit force elements: their linearisation too
    "stop pendulum": (_stop_pendulum, 1.0, 1e-3),
    "bushing chain": (lambda: chain.build(3, bushing=(1e5, 1e2)), 0.2, 1e-3),
    # gaps: qpOASES stays interpreted, the contact projection is compiled
    "clearance pendulum": (clearance_pendulum.build, 0.1, (1e-3, 2e-3)),
}


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("case", CASES)
def test_compiled_steps_are_the_interpreters(case):
    """Compiled, every step equals the interpreted one to round-off (measured: bit for bit),
    and the record says what was compiled; a second run loads it from the cache."""
    build, t_end, h = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # the slider-crank's projected start
        reference = nd.simulate(build(), t_end, h=h, progress=False, jit=False)
        runs = [nd.simulate(build(), t_end, h=h, progress=False, jit=True) for _ in range(2)]
    for res in runs:
        assert res.success and len(res.t) == len(reference.t)
        assert np.abs(res.q - reference.q).max() <= 1e-12
        assert np.abs(res.v - reference.v).max() <= 1e-12 * max(1.0, np.abs(reference.v).max())
    first, second = runs[0].info["jit"], runs[1].info["jit"]
    assert first["compiled"] >= 1 and first["cached"] == 0 and first["seconds"] > 0
    assert second["compiled"] == 0 and second["cached"] == first["compiled"]
    assert "jit" not in reference.info
    assert f"compiled (jit): 0 built in 0 s, {first['compiled']} from the cache" in \
        runs[1].summary()
    if case == "clearance pendulum":
        assert first["interpreted"] and set(first["interpreted"]) <= {"step_qp_start",
                                                                      "step_qp_sustained"}
        assert all("QpoasesInterface" in why for why in first["interpreted"].values())
    else:
        assert first["interpreted"] == {}


def test_without_a_compiler_the_run_is_interpreted(monkeypatch):
    """No compiler: the same run, each function left interpreted with the reason."""
    monkeypatch.setattr(jit_module, "find_compiler", lambda: None)
    reference = nd.simulate(_stop_pendulum(), 0.2, h=1e-3, progress=False)
    res = nd.simulate(_stop_pendulum(), 0.2, h=1e-3, progress=False, jit=True)
    assert res.success and np.array_equal(res.q, reference.q)
    record = res.info["jit"]
    assert record["compiled"] == record["cached"] == 0
    assert record["interpreted"] and all("no C compiler" in why
                                         for why in record["interpreted"].values())


def test_a_failing_compiler_leaves_the_function_interpreted(cache):
    """A compiler that fails: the function is returned as it was, the compiler's error
    recorded, nothing left in the cache."""
    x = ca.SX.sym("x", 2)
    f = ca.Function("jit_test_failing", [x], [ca.sin(x)])
    jit = Jit(compiler="false", directory=cache)
    g = jit.compile(f)
    assert g is f
    assert "false failed" in jit.record["interpreted"]["jit_test_failing"]
    assert not list(cache.glob("*jit_test_failing*"))


@needs_compiler
def test_a_damaged_library_is_built_again(cache):
    """A cached library that cannot be loaded (a file cut short): that call interprets, the
    file is removed, and the next call builds it anew."""
    x = ca.SX.sym("x", 3)
    f = ca.Function("jit_test_damaged", [x], [ca.exp(x) * x])
    expected = np.asarray(f([0.1, 0.2, 0.3])).ravel()
    Jit(directory=cache).compile(f)
    (library,) = cache.glob("jit_test_damaged_*")
    library.write_bytes(library.read_bytes()[:100])
    damaged = Jit(directory=cache)
    assert damaged.compile(f) is f and "jit_test_damaged" in damaged.record["interpreted"]
    assert not library.exists()
    again = Jit(directory=cache)
    g = again.compile(f)
    assert again.record["compiled"] == 1
    assert np.array_equal(np.asarray(g([0.1, 0.2, 0.3])).ravel(), expected)


def test_jit_setting_is_checked(monkeypatch):
    with pytest.raises(nd.ModelError, match="jit must be True, False, 'auto' or None"):
        nd.StepperSettings(jit="yes")
    monkeypatch.setenv("NLPDYN_JIT", "fast")
    with pytest.raises(nd.ModelError, match="NLPDYN_JIT must be 0, 1 or auto, got 'fast'"):
        nd.StepperSettings()


@pytest.mark.parametrize("given, mode", [("0", False), ("1", True), ("auto", "auto"),
                                         (None, "auto")])
def test_the_default_comes_from_the_environment(monkeypatch, given, mode):
    """``jit=None`` (the default): ``$NLPDYN_JIT`` where set, else "auto"; a setting given
    in the call wins."""
    if given is None:
        monkeypatch.delenv("NLPDYN_JIT", raising=False)
    else:
        monkeypatch.setenv("NLPDYN_JIT", given)
    program = nd.Stepper(_stop_pendulum(), h=1e-3).program
    assert (program.jit.mode if program.jit else False) == mode
    assert nd.Stepper(_stop_pendulum(), h=1e-3, jit=False).program.jit is None


def test_auto_leaves_a_short_run_alone(cache, monkeypatch):
    """jit "auto" on a run shorter than ``JIT_LOOK_UP`` s: nothing keyed, built or loaded,
    no word of it in the summary; the functions stay queued."""
    monkeypatch.delenv("NLPDYN_JIT", raising=False)
    res = nd.simulate(_stop_pendulum(), 0.1, h=1e-3, progress=False)
    record = res.info["jit"]
    assert record["mode"] == "auto" and record["compiled"] == record["cached"] == 0
    assert "started" not in record and record["building"] == []
    assert set(record["queued"]) == {"implicit_terms", "step_qp_sustained",
                                     "velocity_projection"}
    assert "jit" not in res.summary()
    assert not cache.exists() or not list(cache.iterdir())


@needs_compiler
def test_auto_builds_aside_and_switches_without_changing_the_run(cache, monkeypatch):
    """jit "auto" on a long run: the build starts in a process of its own while the steps
    go on interpreted; once it is done the steps are compiled, and the run equals the
    interpreted one bit for bit. The next stepper of the model finds the libraries in the
    cache."""
    monkeypatch.setattr(stepper_module, "JIT_LOOK_UP", 0.0)        # a long run, that is
    monkeypatch.setattr(jit_module, "BUILD_SECONDS", (0.0, 0.0))
    stepper = nd.Stepper(_stop_pendulum(), h=1e-3, jit="auto")
    reference = nd.Stepper(_stop_pendulum(), h=1e-3, jit=False)
    jit = stepper.program.jit
    for _ in range(stepper_module.JIT_CHECK_EVERY):
        stepper.step()
        reference.step()
    assert jit.building and not jit.pending       # the three functions, under way
    jit._process.wait(timeout=120)
    for _ in range(3 * stepper_module.JIT_CHECK_EVERY):
        stepper.step()
        reference.step()
    assert jit.record["compiled"] == 3 and jit.record["switched"] and not jit.building
    assert all(fast.function.class_name() != "MXFunction"
               for fast in (stepper.program.velocity_projection(),
                            stepper.program.implicit._function))
    for _ in range(200):
        stepper.step()
        reference.step()
    assert np.array_equal(stepper.q, reference.q) and np.array_equal(stepper.v, reference.v)
    assert len(list(cache.glob("*.so"))) == 3 and not list(cache.glob("build-*"))
    again = nd.Stepper(_stop_pendulum(), h=1e-3, jit="auto")
    for _ in range(stepper_module.JIT_CHECK_EVERY):
        again.step()
    assert again.program.jit.record["cached"] == 3 and not again.program.jit.pending


@needs_compiler
def test_command_line_jit(capsys):
    """``--jit`` reaches the run, and its summary says what was compiled."""
    from nlpdyn.__main__ import main
    assert main(["pendulum", "--t-end", "0.05", "--quiet", "--no-plot", "--jit"]) == 0
    assert "compiled (jit): 2 built" in capsys.readouterr().out
    assert main(["pendulum", "--t-end", "0.05", "--quiet", "--no-plot", "--no-jit"]) == 0
    assert "jit" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["pendulum", "--jit", "--no-jit"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_auto_with_a_failing_compiler_steps_on_interpreted(cache, monkeypatch):
    """jit "auto" whose build fails: the run goes on interpreted, each function with the
    compiler's word for it, and the summary says so."""
    monkeypatch.setattr(jit_module, "find_compiler", lambda: shutil.which("false"))
    monkeypatch.setattr(stepper_module, "JIT_LOOK_UP", 0.0)
    monkeypatch.setattr(jit_module, "BUILD_SECONDS", (0.0, 0.0))
    stepper = nd.Stepper(_stop_pendulum(), h=1e-3, jit="auto")
    for _ in range(stepper_module.JIT_CHECK_EVERY):
        stepper.step()
    stepper.program.jit._process.wait(timeout=120)
    for _ in range(stepper_module.JIT_CHECK_EVERY):
        stepper.step()
    record = stepper.program.jit.record
    assert record["compiled"] == 0 and "switched" not in record
    assert set(record["interpreted"]) == {"implicit_terms", "step_qp_sustained",
                                          "velocity_projection"}
    assert all(why.startswith(f"{shutil.which('false')} failed")
               for why in record["interpreted"].values())
    assert "interpreted: implicit_terms" in stepper.result().summary()
