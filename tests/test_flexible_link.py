"""Flexible links by rigid finite elements (issue 13, seed 003 section 2.2.4) against
Euler-Bernoulli closed forms."""
import numpy as np
import pytest

import nlpdyn as nd

E, RHO, SIDE, L = 2.1e11, 7850.0, 0.02, 1.0          # a 1 m steel bar, 20 mm square
A, I = SIDE**2, SIDE**4 / 12


def cantilever(elements, stiffness_damping=0.0):
    s = nd.System(gravity=(0, -9.81, 0))
    link = nd.add_flexible_link(s, "beam", (0, 0, 0), (L, 0, 0), elements, E, E / 2.6, RHO, A,
                                (I, I), 0.1406 * SIDE**4, stiffness_damping=stiffness_damping,
                                y_axis=(0, 1, 0))
    s.add_joint(nd.Fixed(s.ground, link[0], (0, 0, 0), name="clamp"))
    return s, link


def tip_sag(elements):
    """Static tip deflection under its own weight: the damped motion after 1 s."""
    s, link = cantilever(elements, stiffness_damping=0.02)
    res = nd.simulate(s, 1.0, h=1e-3, progress=False)
    assert res.success
    last = link[-1].name
    tip = res.position(last)[-1] + res.rotation(last)[-1] @ [0.25 * L / (elements - 1), 0, 0]
    return -tip[1]


@pytest.mark.slow
def test_static_sag_converges_to_euler_bernoulli_at_second_order():
    """q L^4 / (8 E I) = 1.37515 mm; the sdes at the sections' middles make the error fall
    with the square of the section length (measured 2.0 % with 5 sections, 0.50 % with 10)."""
    exact = RHO * A * 9.81 * L**4 / (8 * E * I)
    errors = [abs(tip_sag(n) / exact - 1) for n in (6, 11)]
    assert errors[1] <= 0.006
    assert 3.5 <= errors[0] / errors[1] <= 4.5


@pytest.mark.slow
def test_first_bending_frequency_is_euler_bernoulli():
    """Released straight under gravity, the tip oscillates about its sag at the first
    bending mode: 1.8751^2 / (2 pi) sqrt(E I / (rho A L^4)) = 16.71 Hz, within 0.5 % with
    10 sections at h = 2e-4 (scheme "euler" damps the implicit springs numerically by
    ~h omega / 2, "midpoint" not)."""
    exact = 1.875104**2 / (2 * np.pi) * np.sqrt(E * I / (RHO * A * L**4))
    s, link = cantilever(11)
    res = nd.simulate(s, 0.25, h=2e-4, progress=False)
    y = res.position(link[-1].name)[:, 1]
    y = y - y.mean()
    up = np.where((y[:-1] < 0) & (y[1:] >= 0))[0]
    crossings = res.t[up] - y[up] * (res.t[up + 1] - res.t[up]) / (y[up + 1] - y[up])
    frequency = (len(crossings) - 1) / (crossings[-1] - crossings[0])
    assert len(crossings) >= 3 and abs(frequency / exact - 1) <= 0.005


def test_elements_and_springs_follow_the_section_data():
    s, link = cantilever(5)
    section = L / 4
    masses = [b.mass for b in link]
    assert np.allclose(masses, RHO * A * section * np.array([0.5, 1, 1, 1, 0.5]), rtol=1e-12)
    assert sum(masses) == pytest.approx(RHO * A * L, rel=1e-12)
    springs = [f for f in s.forces if f.name == "beam_sde0_springs"][0]
    assert springs.evaluation == "implicit"
    assert len([j for j in s.constraints if j.name.startswith("beam_sde")]) == 4


def test_bad_section_data_is_named_at_once():
    s = nd.System()
    with pytest.raises(nd.ModelError) as err:
        nd.add_flexible_link(s, "arm", (0, 0, 0), (0, 0, 0), 1, -1.0, 8e10, 7850, 0.0,
                             (1e-8, np.nan), 1e-8)
    text = str(err.value)
    for words in ("flexible link 'arm': start and end coincide", "elements must be",
                  "youngs_modulus must be", "area must be", "second_moments must be"):
        assert words in text


def _loaded_tip(elements, force=(0, 0, 0), torque=(0, 0, 0), length=L, axial_shear=False):
    """A cantilever without gravity, a constant load at its tip, damped to rest by the
    springs' backward-Euler evaluation (numerical damping, chosen by name for a static
    result): the last element's displacement and rotation."""
    s = nd.System(gravity=(0, 0, 0))
    link = nd.add_flexible_link(s, "beam", (0, 0, 0), (length, 0, 0), elements, E, E / 2.6,
                                RHO, A, (I, I), 0.1406 * SIDE**4, stiffness_damping=2e-3,
                                y_axis=(0, 1, 0), axial_shear=axial_shear,
                                evaluation="backward_euler")
    s.add_joint(nd.Fixed(s.ground, link[0], (0, 0, 0), name="clamp"))
    s.add_force(nd.PointForce(link[-1], point=(length, 0, 0), force=force, torque=torque,
                              name="load"))
    res = nd.simulate(s, 0.05, h=1e-4, progress=False)
    assert res.success
    last = link[-1].name
    assert np.abs(res.velocity(last)[-1]).max() < 1e-9 * length / 0.05
    return res.position(last)[-1] - res.position(last)[0], res.rotation(last)[-1]


# the static tests settle through backward Euler's numerical damping (the note says so)
STATIC = pytest.mark.filterwarnings("ignore:the discretisation removed")


@STATIC
def test_twist_is_torque_times_length_over_g_j():
    """The sdes' torsion springs in series: the tip turns by T L / (G J) (exact for any
    number of elements)."""
    T, J = 20.0, 0.1406 * SIDE**4
    _, R = _loaded_tip(5, torque=(T, 0, 0))
    assert np.arctan2(R[2, 1], R[1, 1]) == pytest.approx(T * L / (E / 2.6 * J), rel=1e-6)


@pytest.mark.slow
@STATIC
def test_axial_and_shear_springs_add_p_l_over_e_a_and_p_l_over_kappa_g_a():
    """With axial_shear the link stretches by P L / (E A) under an axial tip load, and a
    transverse tip load adds the Timoshenko shear deflection P L / (kappa G A) to bending."""
    P, short = 2000.0, 0.2
    stretch, _ = _loaded_tip(5, force=(P, 0, 0), length=short, axial_shear=True)
    assert stretch[0] == pytest.approx(P * short / (E * A), rel=1e-6)
    rigid, _ = _loaded_tip(5, force=(0, P / 10, 0), length=short)
    sheared, _ = _loaded_tip(5, force=(0, P / 10, 0), length=short, axial_shear=True)
    shear = P / 10 * short / (5 / 6 * E / 2.6 * A)
    assert sheared[1] - rigid[1] == pytest.approx(shear, rel=1e-3)
