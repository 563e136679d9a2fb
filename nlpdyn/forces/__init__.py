"""Force elements: everything that is a force law rather than a constraint (forcing terms)."""
from .base import ForceElement
from .contact_laws import (Blended, ContactLaw, Hertz, LankaraniNikravesh, LinearBushing,
                           ModifiedKelvinVoigt, Pereira, TabulatedBushing)
from .elements import Gravity, PointForce, SpringDamper

__all__ = ["ForceElement", "Gravity", "PointForce", "SpringDamper", "ContactLaw", "Hertz",
           "LankaraniNikravesh", "ModifiedKelvinVoigt", "Pereira", "LinearBushing",
           "TabulatedBushing", "Blended"]
