"""Flexible links by the rigid finite element method (seed 003, section 2.2.4).

A straight link from ``start`` to ``end`` is cut into m = n - 1 sections of length
Delta = L / m. A spring-damping element (sde) sits at the middle of each section; the rigid
finite elements (rfe) lie between them: the first and last of length Delta / 2, the others
Delta. Each sde joins two neighbouring rfes at a point (a spherical joint) with rotational
springs about the link's axis (torsion, G J / Delta) and about the section's principal axes
(bending, E I_y / Delta and E I_z / Delta), and dampers c = stiffness_damping * k: the seed's
S = diag(s_psi, s_theta, s_phi) and D (eqs. 17-18). With ``axial_shear=True`` the point is
free too, held by translational springs (axial E A / Delta, shear kappa G A / Delta, a
Timoshenko section). The springs are bushings evaluated inside the step (energy-consistent by
default), so stiff links do not force a small h.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .checks import ModelError, as_number, as_vector, is_vector, number_problems
from .forces.bushing import Bushing
from .joints.ideal import Spherical
from .rotations import perpendicular_pair

if TYPE_CHECKING:
    from ._typing import ArrayLike
    from .body import RigidBody
    from .system import System


def add_flexible_link(system: System, name: str, start: ArrayLike, end: ArrayLike,
                      elements: int, youngs_modulus: float, shear_modulus: float,
                      density: float, area: float, second_moments: tuple[float, float],
                      torsion_constant: float, stiffness_damping: float = 0.0,
                      y_axis: ArrayLike | None = None, axial_shear: bool = False,
                      shear_coefficient: float = 5 / 6,
                      evaluation: str = "implicit") -> list[RigidBody]:
    """Add a flexible link of ``elements`` rigid finite elements to ``system``.

    Parameters
    ----------
    system : System
        The (open) system the bodies, joints and bushings are added to.
    name : str
        The elements are bodies "<name>0" .. "<name>{n-1}"; the sdes are spherical joints
        "<name>_sde{k}" (none with ``axial_shear``) with bushings "<name>_sde{k}_springs".
    start, end : array_like, shape (3,)
        The link's end points (m, global, initial configuration).
    elements : int
        Number of rigid finite elements n >= 2 (n - 1 spring-damping elements).
    youngs_modulus, shear_modulus : float
        E and G (Pa).
    density : float
        rho (kg/m^3).
    area : float
        Cross-section area A (m^2).
    second_moments : (float, float)
        I_y, I_z (m^4) about the section's principal axes y and z.
    torsion_constant : float
        J (m^4).
    stiffness_damping : float
        c / k of every sde (s).
    y_axis : array_like, shape (3,), optional
        The section's y axis (global, perpendicular to the link); default: any perpendicular.
    axial_shear : bool
        False (default): each sde is a spherical joint (the link neither stretches nor
        shears). True: translational springs instead, E A / Delta along the link and
        kappa G A / Delta across it.
    shear_coefficient : float
        kappa of the shear springs (5/6: a rectangular section).
    evaluation : {"implicit", "backward_euler", "explicit"}
        How the sdes' springs are evaluated (``ForceElement.evaluation``): "implicit"
        (energy-consistent, stable at any h), "backward_euler" (stable, with numerical
        damping of the modes the step does not resolve: settles a load to statics) or
        "explicit" (needs h below 2 / the highest mode's frequency).

    Returns
    -------
    list of RigidBody
        The elements from ``start`` to ``end``; attach other joints to the first and last.

    Raises
    ------
    ModelError
        Every invalid argument at once.

    Examples
    --------
    A 0.5 m steel strip in three elements, clamped to the ground at its start:

    >>> import nlpdyn as nd
    >>> s = nd.System()
    >>> link = nd.add_flexible_link(s, "strip", (0, 0, 0), (0.5, 0, 0), 3, 2.1e11, 8e10,
    ...                             7800.0, 2e-4, (1.7e-9, 6.7e-9), 6e-9)
    >>> [b.name for b in link]
    ['strip0', 'strip1', 'strip2']
    >>> _ = s.add_joint(nd.Fixed(s.ground, link[0], (0, 0, 0)))
    >>> [round(b.mass, 3) for b in link]                 # rho A Delta / 2, rho A Delta, ...
    [0.195, 0.39, 0.195]
    """
    start, end, iy_iz = as_vector(start), as_vector(end), as_vector(second_moments)
    label = f"flexible link {name!r}"
    problems = []
    if not (is_vector(start) and is_vector(end)):
        problems.append(f"{label}: start and end must be 3 finite numbers each")
    elif np.linalg.norm(end - start) == 0:
        problems.append(f"{label}: start and end coincide")
    if isinstance(elements, bool) or not isinstance(elements, (int, np.integer)) or elements < 2:
        problems.append(f"{label}: elements must be a whole number >= 2, got {elements!r}")
    for key, value in {"youngs_modulus": youngs_modulus, "shear_modulus": shear_modulus,
                       "density": density, "area": area, "torsion_constant": torsion_constant}.items():
        problems += number_problems(label, key, as_number(value), lambda x: x > 0,
                                    "a finite number > 0")
    if not (is_vector(iy_iz, 2) and np.all(iy_iz > 0)):
        problems.append(f"{label}: second_moments must be two finite numbers > 0 (I_y, I_z)")
    problems += number_problems(label, "stiffness_damping", as_number(stiffness_damping),
                                lambda x: x >= 0, "a finite number >= 0")
    problems += number_problems(label, "shear_coefficient", as_number(shear_coefficient),
                                lambda x: x > 0, "a finite number > 0")
    if not isinstance(axial_shear, (bool, np.bool_)):
        problems.append(f"{label}: axial_shear must be True or False, got {axial_shear!r}")
    if problems:
        raise ModelError(problems)

    length = np.linalg.norm(end - start)
    x = (end - start) / length
    if y_axis is None:
        y = perpendicular_pair(x)[0]
    else:
        y = np.asarray(y_axis, dtype=float).ravel()
        y = y - (y @ x) * x
        if not np.linalg.norm(y) > 1e-9:
            raise ModelError([f"{label}: y_axis must not be parallel to the link"])
        y /= np.linalg.norm(y)
    z = np.cross(x, y)
    frame = np.column_stack([x, y, z])          # link frame: columns x, y, z (global)
    section = length / (elements - 1)
    rho, A = float(density), float(area)
    Iy, Iz = iy_iz

    bounds = np.r_[0.0, (np.arange(elements - 1) + 0.5) * section, length]   # along the link
    bodies = []
    for k in range(elements):
        a, b = bounds[k], bounds[k + 1]
        piece = b - a
        mass = rho * A * piece
        inertia = (rho * piece * (Iy + Iz), mass * piece**2 / 12 + rho * piece * Iy,
                   mass * piece**2 / 12 + rho * piece * Iz)
        bodies.append(system.add_body(f"{name}{k}", mass, inertia,
                                      position=start + 0.5 * (a + b) * x, orientation=frame))
    c = float(stiffness_damping)
    springs = np.array([shear_modulus * torsion_constant, youngs_modulus * Iy,
                        youngs_modulus * Iz]) / section
    translational = 0.0
    if axial_shear:
        shear = float(shear_coefficient) * shear_modulus * A
        translational = np.array([youngs_modulus * A, shear, shear]) / section
    for k in range(elements - 1):
        point = start + bounds[k + 1] * x
        if not axial_shear:
            system.add_joint(Spherical(bodies[k], bodies[k + 1], point, name=f"{name}_sde{k}"))
        sde = Bushing(bodies[k], bodies[k + 1], point, stiffness=translational,
                      damping=c * translational, rotational_stiffness=springs,
                      rotational_damping=c * springs, axes=frame.T, name=f"{name}_sde{k}_springs")
        sde.evaluation = evaluation
        system.add_force(sde)
    return bodies
