"""Force elements: everything that is a force law rather than a constraint (forcing terms)."""
from .base import ForceElement
from .contact_laws import (Blended, ContactLaw, Hertz, LankaraniNikravesh, LinearBushing,
                           ModifiedKelvinVoigt, Pereira, TabulatedBushing)
from .elements import Gravity, PointForce, SpringDamper
from .bushing import Bushing
from .friction import LuGreFriction
from .joint_friction import JointDamper, JointFriction
from .joint_stops import RotationStop, TranslationStop
from .range_of_motion import RangeOfMotionCone
from .penalty_joints import (PenaltyCylindricalClearance, PenaltyPrismaticClearance,
                             PenaltyRevoluteClearance, PenaltySphericalClearance, penalty_version)

__all__ = ["ForceElement", "Gravity", "PointForce", "SpringDamper", "ContactLaw", "Hertz",
           "LankaraniNikravesh", "ModifiedKelvinVoigt", "Pereira", "LinearBushing",
           "TabulatedBushing", "Blended", "Bushing", "LuGreFriction", "JointDamper",
           "JointFriction", "TranslationStop", "RotationStop",
           "PenaltySphericalClearance", "PenaltyCylindricalClearance", "PenaltyRevoluteClearance",
           "PenaltyPrismaticClearance", "penalty_version", "RangeOfMotionCone"]
