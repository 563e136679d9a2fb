"""nlpdyn: spatial multibody dynamics with imperfect joints, one optimization problem per step.

The flow (each layer imports only from the ones before it)::

    bodies, joints, force elements      body.py, joints/, forces/ (urdf.py: from a URDF file)
            |
         System                         system.py   validate() lists every problem; compile()
            |                           compiled.py builds named CasADi functions once
        StepProgram                     step_nlp.py the per-step program of docs/FORMULATION.md,
            |                                       built once per run, re-solved every step
      contact schemes                   contact.py  how a step meets its gaps (cone chord
            |                                       iterations, end-of-step normal, seed's rows)
         Stepper / simulate()           stepper.py  step control, retries, initial conditions
            |
          Result                        result.py   arrays, per-step stats, .npz save/load,
                                        assembly.py reactions, contact data, the energy ledger
            |
    tables, pictures                    tables.py   DataFrame/CSV; animation.py GIF/MP4;
                                        viewer.py the HTML 3D view; plotting.py figures

The modules, one line each, every one importing only those above it (the tables and views
sit above ``result.py``: a Result imports them when one is asked for)::

    _typing.py              names of the types in public signatures (type checkers only)
    rotations.py            Euler-parameter algebra (A, E, G; w <-> pdot), numpy and CasADi
    checks.py               checks of user input shared by bodies and elements; ModelError
    progress.py             progress bars; tqdm imported only when one may show
    shapes.py               Box, Cylinder, Sphere, Link: shapes that draw a body, their checks
    body.py                 RigidBody, Ground, BodyState (a body's state as symbols)
    joints/base.py          Element; BilateralConstraint (Phi = 0), UnilateralConstraint (g >= 0)
    joints/programmed.py    Programmed: Phi(q, t) = 0 written by the user
    joints/nonholonomic.py  VelocityConstraint: velocity-level rows w^T G = zeta
    joints/modes.py         JointModes: a joint's free and constrained mode vectors
    joints/ideal.py         Spherical, Revolute, Cylindrical, Prismatic, Universal, Fixed
    joints/excitation.py    KinematicExcitation: one of a joint's modes prescribed in time
    joints/library.py       Screw, Planar, PlanarTranslation
    joints/drivers.py       RotationDriver, TranslationDriver
    joints/clearance.py     clearance joints as gaps: Cylindrical-, Revolute-, Prismatic-,
                            SphericalClearance
    forces/base.py          ForceElement, the interface of a force element
    forces/elements.py      Gravity, PointForce, SpringDamper
    forces/law_base.py      ContactLaw, the quadrature of laws without a closed-form potential
    forces/impact_laws.py   Hertz, LankaraniNikravesh, ModifiedKelvinVoigt, Pereira
    forces/bushing_laws.py  LinearBushing, TabulatedBushing, Blended
    forces/contact_laws.py  the contact laws' former module (names re-exported)
    forces/bushing.py       Bushing: a six-component spring-damper between two frames
    forces/joint_coordinates.py  a joint's free coordinate (for stops and friction)
    forces/friction.py      LuGreFriction in ideal joints
    forces/joint_friction.py     JointDamper, JointFriction: a joint's damping and friction
    forces/joint_stops.py   TranslationStop, RotationStop
    forces/penalty_base.py  PenaltyClearanceJoint, the penalty clearance joints' shared part
    forces/penalty_clearance.py  PenaltySpherical-, -Cylindrical-, -Revolute-,
                            -PrismaticClearance
    forces/penalty_joints.py     their former module (names re-exported), penalty_version
    forces/cone_surface.py  ConeSurface: a range-of-motion cone's surface and its distance
    forces/range_of_motion.py    RangeOfMotionCone
    discrete_gradient.py    discrete gradients: a stored energy's force over a whole step
    element_rows.py         ElementRows: where an element's rows sit in the stacked vectors
    element_terms.py        each element's expressions in the system's symbols; M and S
    step_forces.py          the force elements over a step by evaluation; the carry, friction
    state_checks.py         which joints and elements are not finite at a state
    compiled.py             CompiledSystem: the system as named CasADi functions
    fingerprint.py          the parameters' snapshot that decides whether compile() rebuilds
    geometry.py             the system's geometry as data, its poses along a result
    system.py               System: holds the elements, validate(), compile()
    flexible.py             add_flexible_link: flexible links as rigid finite elements
    urdf_options.py         from_urdf's joint damping, friction, bushings; visual shapes
    urdf.py                 from_urdf: a System from a URDF file
    fastcall.py             low-overhead numeric calls of CasADi functions
    jit.py                  the step's functions compiled to machine code
    sparse_solves.py        sparse least-norm and KKT solves as CasADi MX
    projection.py           mass-weighted projection onto the joints (positions, velocities)
    step_solution.py        StepSolution: a candidate step as a solver returns it
    step_direct.py          the closed-form least-change solves (solver "direct")
    step_ipopt.py           the per-step program as an IPOPT NLP
    implicit.py             Newton linearisation of the implicit force elements
    contact.py              contact schemes: how a step meets its gaps
    step_gaps.py            the gap rows' normals and curvature, friction rows on the gaps
    step_qp.py              the fixed-h step as one QP (CasADi conic plugin or LDL^T)
    impact_resolution.py    impacts resolved in time (contact_resolution)
    step_stats.py           StepStats: the per-step record of a run
    step_outcome.py         StepInfo (an accepted step), StepFailure
    step_solves.py          the solves of one step: direct, QP, IPOPT
    midpoint_step.py        scheme "midpoint"'s iterations
    step_finish.py          the end of a step: its state, checks and energy ledger
    step_nlp.py             StepProgram: the per-step program, built once per run
    stepper_settings.py     StepperSettings and its checks against a model
    acceptance.py           whether a step is accepted; the run's notes
    step_control.py         step-size control (error, adaptive, fixed) and retries
    result_io.py            the .npz result format, its validator, ResultFileError
    result_joints.py        a Result's joint modes and joint forces
    result_summary.py       Result.summary()
    result_lookups.py       a Result's lookups by name (positions, forces, gaps, contacts)
    tables.py               a Result as DataFrames and CSV (Table, read_csv)
    run_arguments.py        checks of a run's arguments (system, times, step sizes)
    plotting.py             matplotlib figures of a Result
    animation.py            animations of a Result (GIF, MP4)
    viewer.py               the interactive 3D view as one HTML file (plotly)
    result.py               Result: arrays, lookups by name, save/load
    assembly.py             a Result from the accepted steps: reactions, contacts, ledger
    stepper_state.py        the stepper's state: consistent start, records, set_state, reset
    run.py                  running a stepper to its end time (output times, Ctrl-C, progress)
    stepper.py              Stepper (step control) and simulate(), the front door
    ode.py                  simulate_ode: penalty-only systems for scipy's integrators
    sweep_runner.py         running a sweep's points, in process or on an executor
    sweep.py                sweep: one simulation per point of a full-factorial grid
    urdf_command.py         the command line's options for a URDF model
    __main__.py             the command line: python -m nlpdyn CASE

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
                     JointDamper, JointFriction, LankaraniNikravesh, LinearBushing,
                     LuGreFriction, ModifiedKelvinVoigt, PenaltyCylindricalClearance, PenaltyPrismaticClearance,
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
    "JointDamper", "JointFriction",
    "TranslationStop", "RotationStop", "PenaltySphericalClearance", "PenaltyCylindricalClearance",
    "PenaltyRevoluteClearance", "PenaltyPrismaticClearance", "penalty_version",
    "RangeOfMotionCone",
    "KinematicExcitation", "Screw", "Planar", "PlanarTranslation", "JointModes",
    "VelocityConstraint",
    "Stepper", "StepperSettings", "StepInfo", "StepFailure", "simulate", "sweep",
    "Result", "ResultFileError", "StepStats", "read_csv",
]


def __getattr__(name: str):
    """``nlpdyn.read_csv``, imported on first use: it needs pandas, which ``import nlpdyn``
    leaves to the runs that make tables."""
    if name == "read_csv":
        from .tables import read_csv
        return read_csv
    raise AttributeError(f"module 'nlpdyn' has no attribute {name!r}")
