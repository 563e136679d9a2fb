"""nlpdyn: spatial multibody dynamics with imperfect joints, one optimization problem per step.

The flow (each layer imports only from the ones before it)::

    bodies, joints, force elements      body.py, joints/, forces/ (urdf.py: from a URDF file)
            |
         System                         system.py   validate() lists every problem; compile()
            |                                       builds named CasADi functions once
        StepProgram                     step_nlp.py the per-step program of docs/FORMULATION.md,
            |                                       built once per run, re-solved every step
      contact schemes                   contact.py  how a step meets its gaps (cone chord
            |                                       iterations, end-of-step normal, seed's rows)
         Stepper / simulate()           stepper.py  step control, retries, initial conditions
            |
          Result                        result.py   arrays, per-step stats, .npz save/load,
                                        assembly.py reactions, contact data, the energy ledger
            |
    tables, pictures                    tables.py   DataFrame/CSV; geometry.py shapes and poses;
                                        animation.py GIF/MP4; viewer.py the HTML 3D view

Examples
--------
>>> import nlpdyn as nd
>>> system = nd.System(gravity=(0, 0, -9.81))
>>> crank = system.add_body("crank", mass=0.12, inertia=(1e-4, 1e-4, 1e-5),
...                         position=(0, 0.1, 0.16), velocity=(0, -0.24, 0),
...                         angular_velocity=(6, 0, 0))
>>> _ = system.add_joint(nd.Revolute(system.ground, crank, point=(0, 0.1, 0.12), axis=(1, 0, 0)))
>>> res = nd.simulate(system, t_end=0.01, h=1e-3, progress=False)
>>> res.position("crank").shape
(11, 3)
"""
from .body import BodyState, Ground, RigidBody
from .forces import (Blended, Bushing, ContactLaw, ForceElement, Gravity, Hertz,
                     LankaraniNikravesh, LinearBushing, LuGreFriction, ModifiedKelvinVoigt,
                     PenaltyCylindricalClearance, PenaltyPrismaticClearance,
                     PenaltyRevoluteClearance, PenaltySphericalClearance, Pereira, PointForce,
                     RangeOfMotionCone, RotationStop, SpringDamper, TabulatedBushing,
                     TranslationStop, penalty_version)
from .joints import (BilateralConstraint, ClearanceJoint, Cylindrical, CylindricalClearance, Fixed,
                     Prismatic, PrismaticClearance, Programmed, Revolute, RevoluteClearance,
                     RotationDriver, Spherical, SphericalClearance, TranslationDriver,
                     UnilateralConstraint, Universal)
from .joints import (JointModes, KinematicExcitation, Planar, PlanarTranslation, Screw,
                     VelocityConstraint)
from .flexible import add_flexible_link
from .geometry import Box, Cylinder, Link, Sphere
from .ode import simulate_ode
from .result import Result, ResultFileError, StepStats
from .stepper import StepFailure, StepInfo, Stepper, StepperSettings, simulate
from .sweep import sweep
from .urdf import from_urdf
from .system import CompiledSystem, ModelError, System

__version__ = "0.1.0"

__all__ = [
    "add_flexible_link", "from_urdf", "Box", "Cylinder", "Sphere", "Link",
    "System", "CompiledSystem", "ModelError", "RigidBody", "Ground", "BodyState",
    "Spherical", "Revolute", "Cylindrical", "Prismatic", "Universal", "Fixed",
    "RotationDriver", "TranslationDriver", "Programmed", "BilateralConstraint",
    "ClearanceJoint", "CylindricalClearance", "RevoluteClearance", "PrismaticClearance",
    "SphericalClearance",
    "UnilateralConstraint", "ForceElement", "Gravity", "PointForce", "SpringDamper",
    "ContactLaw", "Hertz", "LankaraniNikravesh", "ModifiedKelvinVoigt", "Pereira",
    "LinearBushing", "TabulatedBushing", "Blended", "LuGreFriction", "simulate_ode", "Bushing",
    "TranslationStop", "RotationStop", "PenaltySphericalClearance", "PenaltyCylindricalClearance",
    "PenaltyRevoluteClearance", "PenaltyPrismaticClearance", "penalty_version",
    "RangeOfMotionCone",
    "KinematicExcitation", "Screw", "Planar", "PlanarTranslation", "JointModes",
    "VelocityConstraint",
    "Stepper", "StepperSettings", "StepInfo", "StepFailure", "simulate", "sweep", "Result", "ResultFileError", "StepStats",
]
