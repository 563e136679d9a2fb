"""Shapes that draw a body, and their checks.

A body's shapes are given in its body frame, relative to its centre of mass (``offset``), as
``System.add_body(..., geometry=...)`` or :meth:`System.set_geometry`: one shape or a list.
Shapes only draw; they take no part in the dynamics. This module knows no bodies or joints
(``body.py`` checks its geometry with :func:`geometry_problems`); placing the shapes along a
result is :mod:`nlpdyn.geometry`'s job.

Examples
--------
>>> import nlpdyn as nd
>>> s = nd.System()
>>> crank = s.add_body("crank", mass=0.12, inertia=(1e-4, 1e-4, 1e-5),
...                    geometry=nd.Cylinder(radius=0.01, length=0.08, axis=(0, 0, 1)))
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .checks import (as_number, as_unit_vector, as_vector, number_problems, vector_problems)


def _positive(value):
    return value > 0


@dataclass(eq=False)
class Shape:
    """Base of the shapes.

    Parameters
    ----------
    offset : array_like, shape (3,)
        The shape's centre in the body frame, from the centre of mass (keyword only).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> nd.Sphere(radius=0.02, offset=(0.1, 0, 0)).to_dict()["offset"]
    [0.1, 0.0, 0.0]
    """

    offset: np.ndarray = field(default_factory=lambda: np.zeros(3), kw_only=True)
    kind = "shape"

    def __post_init__(self):
        self.offset = as_vector(self.offset)

    def problems(self, owner: str) -> list[str]:
        """Every problem with the shape's data, each message starting with ``owner``.

        Parameters
        ----------
        owner : str
            Who holds the shape (``"body 'arm'"``), named at the start of every message.

        Returns
        -------
        list of str
            One message per problem; empty when the shape is sound.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> nd.Box(size=(1.0, 0.04, -0.02)).problems("body 'arm'")
        ["body 'arm': box size must be 3 finite numbers >= 0, got array([ 1.  ,  0.04, -0.02])"]
        """
        return vector_problems(f"{owner}: {self.kind}", "offset", self.offset)

    def to_dict(self) -> dict:
        """The shape as plain data (stored with a result, so a loaded result still draws).

        Returns
        -------
        dict
            ``"shape"`` (the kind: ``"box"``, ``"cylinder"``, ...), ``"offset"`` and the
            shape's own dimensions, as lists and floats.

        Examples
        --------
        >>> import nlpdyn as nd
        >>> nd.Sphere(radius=0.02).to_dict()
        {'shape': 'sphere', 'offset': [0.0, 0.0, 0.0], 'radius': 0.02}
        """
        return {"shape": self.kind, "offset": self.offset.tolist()}


@dataclass(eq=False)
class Box(Shape):
    """A box along the body axes.

    Parameters
    ----------
    size : array_like, shape (3,)
        Edge lengths along the body's x, y and z axes [m].
    offset : array_like, shape (3,)
        The box's centre in the body frame, from the centre of mass.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> nd.Box(size=(1.0, 0.04, 0.02)).to_dict()["size"]
    [1.0, 0.04, 0.02]
    """

    size: np.ndarray = field(default_factory=lambda: np.ones(3))
    kind = "box"

    def __post_init__(self):
        super().__post_init__()
        self.size = as_vector(self.size)

    def problems(self, owner: str) -> list[str]:
        out = super().problems(owner)
        if not (isinstance(self.size, np.ndarray) and self.size.shape == (3,)
                and np.all(np.isfinite(self.size)) and np.all(self.size >= 0)):
            out.append(f"{owner}: box size must be 3 finite numbers >= 0, got {self.size!r}")
        return out

    def to_dict(self) -> dict:
        return {**super().to_dict(), "size": self.size.tolist()}


@dataclass(eq=False)
class Cylinder(Shape):
    """A cylinder.

    Parameters
    ----------
    radius, length : float
        Its radius and length [m].
    axis : array_like, shape (3,)
        Its axis, a unit vector in the body frame.
    offset : array_like, shape (3,)
        Its centre in the body frame, from the centre of mass.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> nd.Cylinder(radius=0.01, length=0.08, axis=(1, 0, 0)).to_dict()["axis"]
    [1.0, 0.0, 0.0]
    """

    radius: float = 0.01
    length: float = 0.1
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    kind = "cylinder"

    def __post_init__(self):
        super().__post_init__()
        self.radius, self.length = as_number(self.radius), as_number(self.length)
        self.axis = as_unit_vector(self.axis, "cylinder", "axis")

    def problems(self, owner: str) -> list[str]:
        out = super().problems(owner)
        for label in ("radius", "length"):
            out += number_problems(f"{owner}: cylinder", label, getattr(self, label), _positive,
                                   "> 0")
        out += vector_problems(f"{owner}: cylinder", "axis", self.axis)
        if not out and abs(np.linalg.norm(self.axis) - 1) > 1e-9:
            out.append(f"{owner}: cylinder axis must be a unit vector")
        return out

    def to_dict(self) -> dict:
        return {**super().to_dict(), "radius": self.radius, "length": self.length,
                "axis": self.axis.tolist()}


@dataclass(eq=False)
class Sphere(Shape):
    """A sphere.

    Parameters
    ----------
    radius : float
        Its radius [m].
    offset : array_like, shape (3,)
        Its centre in the body frame, from the centre of mass.

    Examples
    --------
    >>> import nlpdyn as nd
    >>> nd.Sphere(radius=0.02).to_dict()
    {'shape': 'sphere', 'offset': [0.0, 0.0, 0.0], 'radius': 0.02}
    """

    radius: float = 0.01
    kind = "sphere"

    def __post_init__(self):
        super().__post_init__()
        self.radius = as_number(self.radius)

    def problems(self, owner: str) -> list[str]:
        return super().problems(owner) + number_problems(f"{owner}: sphere", "radius",
                                                         self.radius, _positive, "> 0")

    def to_dict(self) -> dict:
        return {**super().to_dict(), "radius": self.radius}


@dataclass(eq=False)
class Link(Shape):
    """A straight line from ``offset`` to ``point`` (both in the body frame, from the centre
    of mass).

    Parameters
    ----------
    point : array_like, shape (3,)
        Where the line ends.
    offset : array_like, shape (3,)
        Where it starts (default: the centre of mass).

    Examples
    --------
    >>> import nlpdyn as nd
    >>> nd.Link(point=(0.5, 0, 0), offset=(-0.5, 0, 0)).to_dict()["point"]
    [0.5, 0.0, 0.0]
    """

    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    kind = "link"

    def __post_init__(self):
        super().__post_init__()
        self.point = as_vector(self.point)

    def problems(self, owner: str) -> list[str]:
        return super().problems(owner) + vector_problems(f"{owner}: link", "point", self.point)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "point": self.point.tolist()}


SHAPES = {cls.kind: cls for cls in (Box, Cylinder, Sphere, Link)}


def as_shapes(geometry) -> list:
    """``geometry`` as a list of shapes.

    Parameters
    ----------
    geometry : None, Shape or list of Shape

    Examples
    --------
    >>> import nlpdyn as nd
    >>> as_shapes(None), len(as_shapes(nd.Sphere()))
    ([], 1)
    """
    if geometry is None:
        return []
    return list(geometry) if isinstance(geometry, (list, tuple)) else [geometry]


def geometry_problems(owner, geometry) -> list[str]:
    """Every problem with a body's ``geometry`` (empty when valid).

    Parameters
    ----------
    owner : str
        How the messages name the body (``"body 'bar'"``).
    geometry : None, Shape or list of Shape

    Examples
    --------
    >>> import nlpdyn as nd
    >>> geometry_problems("body 'ball'", nd.Sphere(radius=0.0))
    ["body 'ball': sphere: radius must be > 0, got 0.0"]
    """
    out = []
    for shape in as_shapes(geometry):
        if isinstance(shape, Shape):
            out += shape.problems(owner)
        else:
            out.append(f"{owner}: geometry must be shapes (nd.Box, nd.Cylinder, nd.Sphere, "
                       f"nd.Link), got {type(shape).__name__}")
    return out


def inertia_box(mass, inertia) -> np.ndarray:
    """Edge lengths of the uniform box with ``mass`` and the principal moments of ``inertia``,
    along the principal axes (a moment that breaks the triangle inequality gives 0).

    Parameters
    ----------
    mass : float
    inertia : ndarray, shape (3, 3)
        The inertia matrix about the centre of mass.

    Examples
    --------
    >>> import numpy as np
    >>> inertia_box(12.0, np.diag([5.0, 10.0, 13.0])).round(6)
    array([3., 2., 1.])
    """
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    total = moments.sum()
    # I_k = m (a_i^2 + a_j^2) / 12  ->  a_k^2 = 6 (I_i + I_j - I_k) / m
    return np.sqrt(np.maximum(6.0 * (total - 2.0 * moments) / mass, 0.0))
