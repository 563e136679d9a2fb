"""Contact schemes (nlpdyn.contact): settings, the fallback and its accounting, IPOPT against
the QP, and gap elements written by users (flat gaps, round gaps from contact coordinates)."""
import casadi as ca
import numpy as np
import pytest

import nlpdyn as nd
from problems import clearance_pendulum


def drop(**options):
    """The planar bar falling through a 1 mm clearance onto the pin (tests/test_clearance.py)."""
    return clearance_pendulum.build(cm_z=0.0, clearance=1e-3, axial_clearance=1e-3, **options)


def test_contact_settings_are_validated_together():
    with pytest.raises(nd.ModelError) as err:
        nd.StepperSettings(contact="midpoint", contact_fallback="none", gap_iterations=-1)
    text = str(err.value)
    assert ("contact must be one of ('cone', 'cone_end', 'end_normal', 'linearised'), got "
            "'midpoint'") in text
    assert "contact_fallback must be None or one of" in text and "'none'" in text
    assert "gap_iterations must be >= 0" in text


def test_zero_gap_iterations_is_the_seeds_linearised_scheme():
    """Scheme "euler" without gap iterations takes the seed's rows: contact "linearised"
    (which resolves the scheme to "euler")."""
    a = nd.simulate(drop(), t_end=0.1, h=1e-3, progress=False, gap_iterations=0,
                    scheme="euler")
    b = nd.simulate(drop(), t_end=0.1, h=1e-3, progress=False, contact="linearised")
    assert a.info["scheme"] == b.info["scheme"] == "euler"
    assert set(a.stats.contact_scheme) == {"linearised"} and a.info["contact"] == "linearised"
    assert np.array_equal(a.q, b.q)
    assert a.gaps.min() < -1e-7          # the linearised rows penetrate by ~h^2 |v|^2 / c


@pytest.mark.slow
def test_fallback_steps_are_counted_and_still_meet_the_gaps():
    """With too few chord iterations for CASES.md #3 (2), some steps do not converge: each is
    redone by the fallback scheme from a fresh first solve, marked in the step record and
    counted in the summary; every accepted step still meets the gaps to max_penetration, and
    the ledger accounts for the fallback steps' energy like any other."""
    res = nd.simulate(clearance_pendulum.build(), t_end=0.25, h=1e-3, progress=False,
                      gap_iterations=2)
    st = res.stats
    assert res.success and st.contact_fallback.any()
    assert set(st.contact_scheme[st.contact_fallback]) <= {"cone", "cone_end", "end_normal"}
    assert set(st.contact_scheme[~st.contact_fallback]) <= {"cone", "cone_end"}
    assert st.summary()["n_contact_fallback_steps"] == st.contact_fallback.sum()
    assert f"{st.contact_fallback.sum()} steps by the fallback" in res.summary()
    assert st.contact_error.max() <= 10 * nd.StepperSettings().gap_tol
    ledger = res.energy_ledger()
    works = [c for c in ledger.columns if c.split(":")[0] in ("work", "impact", "contact")]
    closure = ledger.total - ledger.total[0] - ledger[works].sum(axis=1) - ledger.residual
    assert np.abs(closure).max() <= 1e-12 * (1 + ledger.kinetic.max())
    without = nd.simulate(clearance_pendulum.build(), t_end=0.25, h=1e-3, progress=False,
                          gap_iterations=3, contact_fallback=None)
    assert not without.stats.contact_fallback.any()


@pytest.mark.slow
@pytest.mark.parametrize("contact", ["cone", "cone_end"])
def test_ipopt_takes_the_same_cone_steps_as_the_qp(contact):
    """Scheme "euler" (the midpoint step takes solver "direct" or "qp" only): solver="ipopt"
    solves the same sequence of convex programs (the curvature term is in its objective
    too): from the same states (the QP run's, through the impact and in sustained contact) a
    step of each agrees to the solvers' tolerance."""
    qp = nd.simulate(drop(), t_end=0.3, h=1e-3, progress=False, contact=contact, scheme="euler")
    tol = 10 * nd.StepperSettings().nlp_tol
    for k in (10, 14, 15, 16, 100, 250):
        ends = []
        for solver in ("qp", "ipopt"):
            stepper = nd.Stepper(drop(), h=1e-3, solver=solver, contact=contact, scheme="euler")
            stepper.set_state(qp.t[k], qp.q[k], qp.v[k])
            info = stepper.step()
            assert info.solver == {"qp": "qpoases"}.get(solver, solver)
            assert not info.contact_fallback
            ends.append((stepper.q, info.lam))
        assert np.abs(ends[0][0] - ends[1][0]).max() <= tol
        assert np.abs(ends[0][1] - ends[1][1]).max() <= 1e-3 * max(np.abs(ends[0][1]).max(), 1.0)


class _Socket(nd.UnilateralConstraint):
    """A ball centre (child) held within ``clearance`` of a socket centre (parent), written
    the way a user would: as a round gap of contact coordinates, or as a flat scalar gap."""

    kind = "socket"

    def __init__(self, parent, child, point, clearance, round_gap=True, radius=None, name=None):
        self.bodies = (parent, child)
        self.point, self.clearance, self.round_gap, self.name = np.asarray(point), clearance, round_gap, name
        self.radius = clearance if radius is None else radius
        self.n_gaps = 1

    def _offset(self, states):
        socket, ball = (s.point(self.point) for s in states)
        return states[0].A.T @ (ball - socket)

    def contact_coordinates(self, states):
        d = self._offset(states)
        if self.round_gap:
            return [(d, self.radius)]
        return [(self.clearance - ca.norm_2(d), None)]

    def contact_points(self, states):
        return states[1].point(self.point).T


def _ball_system(joint):
    s = nd.System(gravity=(0, 0, -9.81))
    rod = s.add_body("rod", 1.0, (1e-3, 0.05, 0.05), position=(0.3, 0, 0), velocity=(0, 0.4, 0))
    s.add_joint(joint(s.ground, rod))
    return s


def test_a_users_round_gap_behaves_like_the_built_in_ball_clearance():
    mine = nd.simulate(_ball_system(lambda g, b: _Socket(g, b, (0, 0, 0), 1e-4, name="ball")),
                       t_end=0.2, h=1e-3, progress=False)
    built_in = nd.simulate(_ball_system(lambda g, b: nd.SphericalClearance(g, b, (0, 0, 0), 1e-4,
                                                                          name="ball")),
                           t_end=0.2, h=1e-3, progress=False)
    assert mine.success and np.allclose(mine.q, built_in.q, rtol=0, atol=1e-12)
    # the same gap as a flat c - |d|: |d| has no gradient at d = 0, where the ball starts
    with pytest.raises(nd.ModelError, match="socket 'ball': gaps or their gradients are not finite"):
        nd.Stepper(_ball_system(lambda g, b: _Socket(g, b, (0, 0, 0), 1e-4, round_gap=False,
                                                     name="ball")), h=1e-3)


def test_bad_contact_coordinates_name_the_element():
    with pytest.raises(nd.ModelError) as err:
        _ball_system(lambda g, b: _Socket(g, b, (0, 0, 0), 1e-4, radius=-1.0, name="cup")).compile()
    assert "socket 'cup': a round gap needs a radius > 0, got -1.0" in str(err.value)

    class Vector(_Socket):
        def contact_coordinates(self, states):
            return [(self._offset(states), None)]
    with pytest.raises(nd.ModelError) as err:
        _ball_system(lambda g, b: Vector(g, b, (0, 0, 0), 1e-4, name="cup")).compile()
    assert "socket 'cup': a flat gap needs one contact coordinate, got 3" in str(err.value)


@pytest.mark.slow
def test_large_systems_take_the_sparse_qp_and_the_same_steps():
    """A chain of 12 links on clearance joints (72 velocity unknowns) is solved by proxqp's
    sparse backend by default; its steps equal dense qpOASES's to the QP tolerance."""
    from problems import chain
    sparse = nd.simulate(chain.build(12, clearance=1e-4), t_end=0.05, h=1e-3, progress=False)
    dense = nd.simulate(chain.build(12, clearance=1e-4), t_end=0.05, h=1e-3, progress=False,
                        qp_solver="qpoases")
    assert set(sparse.stats.solver) == {"proxqp"} and set(dense.stats.solver) == {"qpoases"}
    assert sparse.success and not sparse.stats.contact_fallback.any()
    assert np.abs(sparse.q - dense.q).max() <= 1e-9
    assert sparse.gaps.min() >= -1e-9
