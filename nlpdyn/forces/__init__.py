"""Force elements: everything that is a force law rather than a constraint (forcing terms)."""
from .base import ForceElement
from .elements import Gravity, PointForce, SpringDamper

__all__ = ["ForceElement", "Gravity", "PointForce", "SpringDamper"]
