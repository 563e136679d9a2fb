"""Constraint elements: ideal joints, drivers, programmed constraints (and clearance joints)."""
from .base import BilateralConstraint, UnilateralConstraint
from .clearance import (ClearanceJoint, CylindricalClearance, PrismaticClearance,
                        RevoluteClearance, SphericalClearance)
from .drivers import RotationDriver, TranslationDriver
from .excitation import KinematicExcitation
from .ideal import (Cylindrical, Fixed, Joint, Prismatic, Revolute, Spherical,
                    Universal)
from .library import Planar, PlanarTranslation, Screw
from .modes import JointModes
from .nonholonomic import VelocityConstraint
from .programmed import Programmed

__all__ = ["BilateralConstraint", "UnilateralConstraint", "Joint", "Spherical", "Revolute",
           "Cylindrical", "Prismatic", "Universal", "Fixed", "RotationDriver",
           "TranslationDriver", "Programmed", "ClearanceJoint", "CylindricalClearance",
           "RevoluteClearance", "PrismaticClearance", "SphericalClearance",
           "KinematicExcitation", "Screw", "Planar", "PlanarTranslation", "JointModes",
           "VelocityConstraint"]
