"""Settings named before stepping, and steps accepted on true quantities (issue 12)."""
import numpy as np
import pytest

import nlpdyn as nd
from problems import clearance_pendulum, pendulum


@pytest.mark.parametrize("options,expected", [
    (dict(implicit_iterations=-1), "implicit_iterations must be >= 0 (a whole number), got -1"),
    (dict(refinement_steps=-2), "refinement_steps must be >= 1 (a whole number), got -2"),
    (dict(refinement_steps=0), "refinement_steps must be >= 1"),
    (dict(gap_iterations=2.5), "gap_iterations must be >= 0 (a whole number), got 2.5"),
    (dict(max_retries=True), "max_retries must be >= 0 (a whole number), got True"),
    (dict(max_penetration=-1.0), "max_penetration must be None or > 0 (m, a finite number), got -1.0"),
    (dict(gap_tol=float("nan")), "gap_tol must be > 0 (a finite number), got nan"),
    (dict(implicit_tol="1e-9"), "implicit_tol must be > 0 (a finite number), got '1e-9'"),
    (dict(tie_break=float("inf")), "tie_break must be >= 0 (a finite number), got inf"),
    (dict(qp_solver="qpoasis"), "qp_solver 'qpoasis' is not a QP plugin of this CasADi"),
    (dict(qp_solver=3), "qp_solver 3 is not a QP plugin"),
    (dict(projection="yes"), "projection must be True or False, got 'yes'"),
    (dict(nlp_options=["tol", 1]), "nlp_options must be None or a dict"),
])
def test_bad_settings_are_named_before_stepping(options, expected):
    with pytest.raises(nd.ModelError) as err:
        nd.simulate(pendulum.build(), t_end=0.01, h=1e-3, progress=False, **options)
    assert expected in str(err.value)


def test_every_bad_setting_is_reported_at_once():
    with pytest.raises(nd.ModelError) as err:
        nd.StepperSettings(implicit_iterations=-1, max_penetration=-1.0, qp_solver="nope",
                           gap_tol=0.0)
    text = str(err.value)
    for name in ("implicit_iterations", "max_penetration", "qp_solver", "gap_tol"):
        assert name in text


def test_an_unknown_qp_solver_is_refused_with_and_without_gaps():
    for build in (pendulum.build, clearance_pendulum.build):
        with pytest.raises(nd.ModelError, match="qp_solver 'foo'"):
            nd.Stepper(build(), h=1e-3, solver="qp", qp_solver="foo")
