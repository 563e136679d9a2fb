"""What the force elements exert over a step, as CasADi expressions of a compiled system:
each element by its evaluation (explicit, backward Euler, energy-consistent), the carry the
energy-consistent elements hand from one step to the next in the stepper's memory (its
initial value, its energy), joint friction's terms, and the recorded steps' forces.

The functions take the :class:`~nlpdyn.compiled.CompiledSystem` ``cs`` they belong to; its
methods ``step_forces`` and ``step_forces_midpoint`` document them.
"""
from __future__ import annotations

import types

import casadi as ca
import numpy as np

from .discrete_gradient import discrete_gradient
from .element_rows import ElementRows
from .rotations import normalised_rotation_matrix


def energy_consistent(cs, element_terms):
    """The energy-consistent ("implicit") elements: per element its coordinates s(q, t)
    and their Jacobian, and the carry's layout in the stepper's memory, after the
    elements' memory z: the last step's h (``carry_h_slot``), the energy the last step
    carried (``carry_energy_slot``, ``carried_energy``), then per element the conservative
    force of its last step on each moving body as global wrenches (f, n: 6 per body;
    ``carry_rows``)."""
    q, t, v = cs.q_sym, cs.t_sym, cs.v_sym
    cs.consistent, cs.carry_rows = [], []
    cs.carry_h_slot, cs.carry_energy_slot = cs.n_history, cs.n_history + 1
    start = cs.n_history + 2
    for j, (el, terms) in enumerate(zip(cs.force_elements, element_terms)):
        if el.evaluation != "implicit":
            continue
        moving = [b.index for b in el.bodies if not b.is_ground]
        cs.carry_rows.append(ElementRows(el.name, el, start, start + 6 * len(moving)))
        start += 6 * len(moving)
        s = ca.vertcat(*[s for s, _ in terms]) if terms else ca.SX(0, 1)
        coordinates = ca.Function(f"coordinates_{j}", [q, t], [s])
        w = ca.SX.sym("w", s.numel())
        pullback = ca.Function(f"coordinates_pullback_{j}", [q, t, w],
                               [ca.jtimes(s, q, w, True)])
        cs.consistent.append((j, coordinates, pullback, [V for _, V in terms], moving))
    cs.n_carry = start - cs.n_history if cs.consistent else 0
    # then one flag per gap: closed at the start of the last step (the contact step tells
    # sustained contact from an impact by it)
    first = cs.n_history + cs.n_carry
    cs.contact_slots = np.arange(first, first + cs.n_gap)
    cs.n_memory = first + cs.n_gap
    memory = ca.SX.sym("memory", cs.n_memory)
    cs._carry_wrenches = ca.Function(
        "carry_wrenches", [t, q, cs.z_sym],
        [ca.vertcat(*_wrenches(cs, cs.element_conservative_forces(t, q, cs.z_sym), q))
         if cs.n_carry else ca.SX(0, 1)])
    cs._carried_impulse = ca.Function(
        "carried_impulse", [q, memory], [_carried(cs, q, memory)[1]])
    cs._recorded_step_forces = None
    cs._recorded_midpoint = None


def _rotations(cs, q0):
    """The rotation of each moving body of the consistent elements at q0, by body index
    (built once per body, shared by every element and use; ``normalised_rotation_matrix``
    inlined from one function: the same operations, without Python's per-operation cost)."""
    p = ca.SX.sym("p", 4)
    rotation = ca.Function("normalised_rotation_matrix", [p], [normalised_rotation_matrix(p)])
    return {k: rotation(q0[7 * k + 3:7 * k + 7])
            for k in sorted({k for *_, moving in cs.consistent for k in moving})}


def _wrenches(cs, G_V, q0, rotations=None):
    """Per consistent element, its column of ``G_V`` (nv x n_elements, generalised forces
    on the velocities at q0) as global wrenches of its moving bodies: the carry's layout
    after its two scalars. ``rotations``: ``_rotations(q0)`` where known."""
    rotations = _rotations(cs, q0) if rotations is None else rotations
    out = []
    for j, _, _, _, moving in cs.consistent:
        for k in moving:
            out += [G_V[6 * k:6 * k + 3, j], rotations[k] @ G_V[6 * k + 3:6 * k + 6, j]]
    return out


def _carried(cs, q0, memory, rotations=None):
    """(last step's h, the impulse it carries into this step (h / 2 times its G_V,
    summed, on the velocities at q0), per consistent element the last G_V as generalised
    forces on the velocities at q0 (nv x n_elements)). ``rotations``: ``_rotations(q0)``
    where known."""
    G_V = ca.SX.zeros(cs.nv, len(cs.force_elements))
    if not cs.n_carry:
        return ca.SX(0), ca.SX.zeros(cs.nv), G_V
    rotations = _rotations(cs, q0) if rotations is None else rotations
    for (j, _, _, _, moving), r in zip(cs.consistent, cs.carry_rows):
        W = memory[r.start:r.stop]
        for i, k in enumerate(moving):
            A = rotations[k]
            G_V[6 * k:6 * k + 3, j] = W[6 * i:6 * i + 3]
            G_V[6 * k + 3:6 * k + 6, j] = A.T @ W[6 * i + 3:6 * i + 6]
    h_last = memory[cs.carry_h_slot]
    return h_last, 0.5 * h_last * ca.sum2(G_V), G_V


def step_forces(cs, t0, h, q0, v0, q1, v1, memory, T, memory_end=None):
    """:meth:`CompiledSystem.step_forces` of ``cs``."""
    z = memory[:cs.n_history]
    n_el = len(cs.force_elements)
    tm, qm = t0 + 0.5 * h, 0.5 * (q0 + q1)
    Q_start = cs.element_forces(t0, q0, v0, z)
    QV_start = cs.element_conservative_forces(t0, q0, z)
    Q_end = cs.element_forces(t0 + h, q1, v1, z)
    QV_end = cs.element_conservative_forces(t0 + h, q1, z)
    Q_mid = cs.element_forces(tm, qm, v1, z)
    QV_mid = cs.element_conservative_forces(tm, qm, z)
    rotations = _rotations(cs, q0)
    h_last, carried, last_C = _carried(cs, q0, memory, rotations)
    G_V, D = ca.SX.zeros(cs.nv, n_el), ca.SX.zeros(cs.nv, n_el)
    C = ca.SX.zeros(cs.nv, n_el)
    if memory_end is not None:
        C = _carried(cs, q0, memory_end, rotations)[2]
    split = ca.SX.zeros(cs.nv, n_el)      # the damping that goes with the carry
    split_columns = [j for j, *_ in cs.consistent
                     if cs.force_elements[j].damping_step == "split"]
    for j, coordinates, pullback, laws, _ in cs.consistent:
        D[:, j] = Q_mid[:, j] - QV_mid[:, j]
        if j in split_columns:
            split[:, j] = D[:, j]
        if memory_end is None:
            # the laws may hold the elements' memory (the system's z): the step's
            G_V[:, j] = ca.substitute(
                -T.T @ discrete_gradient(lambda x: coordinates(x, tm),
                                         lambda x, w: pullback(x, tm, w), laws, q0, q1),
                cs.z_sym, z)
            C[:, j] = G_V[:, j] + split[:, j]
        else:
            G_V[:, j] = C[:, j] - split[:, j]
    whole = D - split
    Q_quarter = (cs.element_forces(t0 + 0.25 * h, q0 + 0.25 * (q1 - q0), v1, z)
                 if cs.consistent else None)
    # the stored energy's force a quarter into the step: the split damping's tangent, and
    # the contacts' stiffness (``ImplicitLinearisation.contact_stiffness``), with the same
    # derivative's share at the end of the step (a contact closing late in the step)
    QV_quarter = (cs.element_conservative_forces(t0 + 0.25 * h, q0 + 0.25 * (q1 - q0), z)
                  if split_columns or any(cs.force_elements[j].is_contact
                                          for j, *_ in cs.consistent) else None)
    if split_columns:
        # a "split" damping acts with h / 2 in this step: half its derivative
        for j in split_columns:
            Q_quarter[:, j] = 0.5 * (Q_quarter[:, j] + QV_quarter[:, j])

    def in_step(j):
        # half of the step's force (discrete gradient and midpoint damping) now, half
        # in the next step, after half of the last one's
        carried_part = (0.5 * h_last * last_C[:, j] + 0.5 * h * C[:, j]) / h
        # the discrete gradient's derivative in q1 is half the Hessian at the midpoint
        # (to first order in q1 - q0), and it acts with h / 2: the force at a quarter of
        # the step, with v1, has the impulse's derivative in y
        return carried_part + whole[:, j], carried_part, Q_quarter[:, j]

    Q, Q_V, tangent = _step_columns(cs, (Q_start, QV_start), (Q_end, QV_end), in_step)
    return types.SimpleNamespace(Q=Q, Q_V=Q_V, G_V=G_V, D=D, C=C, carried=carried,
                                 wrenches=_wrenches(cs, C, q0, rotations),
                                 tangent=tangent,
                                 tangent_V=None if QV_quarter is None else (
                                     QV_quarter, 0.25 * QV_end))


def _step_columns(cs, explicit, end, in_step):
    """(Q, Q_V, tangent) of a step, nv x n_elements, each element's column by its
    evaluation: ``explicit`` and ``end`` the (Q, Q_V) that "explicit" and
    "backward_euler" elements take, ``in_step(j)`` an "implicit" one's three columns."""
    columns = []
    for j, el in enumerate(cs.force_elements):
        if el.evaluation in ("explicit", "backward_euler"):
            Q, QV = explicit if el.evaluation == "explicit" else end
            columns.append((Q[:, j], QV[:, j], Q[:, j]))
        else:
            columns.append(in_step(j))
    return [ca.horzcat(*c) for c in zip(*columns)]


def step_forces_midpoint(cs, t0, h, q0, v0, qm, vf, q1, v1, memory, T):
    """:meth:`CompiledSystem.step_forces_midpoint` of ``cs``."""
    z = memory[:cs.n_history]
    n_el = len(cs.force_elements)
    tm, q_chord, v_mean = t0 + 0.5 * h, 0.5 * (q0 + q1), 0.5 * (v0 + v1)
    Q_mid = cs.element_forces(tm, qm, vf, z)
    QV_mid = cs.element_conservative_forces(tm, qm, z)
    Q_end = cs.element_forces(t0 + h, q1, v1, z)
    QV_end = cs.element_conservative_forces(t0 + h, q1, z)
    Q_chord = cs.element_forces(tm, q_chord, v_mean, z) if cs.consistent else None
    QV_chord = (cs.element_conservative_forces(tm, q_chord, z) if cs.consistent
                else None)
    G_V, D = ca.SX.zeros(cs.nv, n_el), ca.SX.zeros(cs.nv, n_el)
    for j, coordinates, pullback, laws, _ in cs.consistent:
        D[:, j] = Q_chord[:, j] - QV_chord[:, j]
        G_V[:, j] = ca.substitute(
            -T.T @ discrete_gradient(lambda x: coordinates(x, tm),
                                     lambda x, w: pullback(x, tm, w), laws, q0, q1),
            cs.z_sym, z)
    Q, Q_V, tangent = _step_columns(cs, 
        (Q_mid, QV_mid), (Q_end, QV_end),
        lambda j: (G_V[:, j] + D[:, j], G_V[:, j], Q_chord[:, j]))
    zero = ca.SX.zeros(cs.nv, n_el)
    return types.SimpleNamespace(Q=Q, Q_V=Q_V, G_V=G_V, D=D, C=zero,
                                 carried=ca.SX.zeros(cs.nv),
                                 wrenches=_wrenches(cs, zero, q0), tangent=tangent,
                                 tangent_V=(QV_chord, 0.5 * QV_end) if cs.consistent
                                 else None)


def friction_terms(cs, t, q, v, z):
    """Memory entries the stepper sets in every step (``step_size_slots``: h;
    ``normal_force_slots``: a joint's normal force), ``friction_normal(q, reaction)``,
    the normal force of each such element from its joint's reaction on the child (3 x n,
    global; the joint's column in ``friction_joints`` of the step's joint forces), and
    ``friction_force(t, q, v, z)``, each one's generalised force along its joint."""
    rows = [r for r in cs.history_rows if hasattr(r.element, "normal_force_slot")]
    cs.friction_rows = rows
    cs.friction_child_is_ground = np.array([r.element.joint.child.is_ground for r in rows],
                                           dtype=bool)
    cs.step_size_slots = np.array([r.start + r.element.step_size_slot for r in cs.history_rows
                                   if hasattr(r.element, "step_size_slot")], dtype=int)
    cs.normal_force_slots = np.array([r.start + r.element.normal_force_slot for r in rows],
                                     dtype=int)
    joint_column = {id(r.element): j for j, r in enumerate(cs.constraint_rows)}
    cs.friction_joints = np.array([joint_column[id(r.element.joint)] for r in rows], dtype=int)
    reaction = ca.SX.sym("reaction", 3, len(rows))
    f_n = [r.element.normal_force(cs.states_of(r.element), reaction[:, j])
           for j, r in enumerate(rows)]
    cs.friction_normal = ca.Function(
        "friction_normal", [q, reaction], [ca.vertcat(*f_n) if f_n else ca.SX(0, 1)],
        ["q", "reaction"], ["f_n"], {"cse": True})
    forces = [r.element.generalized_force(cs.states_of(r.element), z[r.start:r.stop])
              for r in rows]
    cs.friction_force = ca.Function(
        "friction_force", [t, q, v, z], [ca.vertcat(*forces) if forces else ca.SX(0, 1)],
        ["t", "q", "v", "z"], ["F"], {"cse": True})


def recorded_step_forces(cs) -> ca.Function:
    """``cs.recorded_step_forces``: ``step_forces`` with the memory at both ends."""
    q, v, t, memory = cs.q_sym, cs.v_sym, cs.t_sym, ca.SX.sym("memory", cs.n_memory)
    h = ca.SX.sym("h")
    q1, v1 = ca.SX.sym("q1", cs.nq), ca.SX.sym("v1", cs.nv)
    memory_end = ca.SX.sym("memory_end", cs.n_memory)
    recorded = cs.step_forces(t, h, q, v, q1, v1, memory, None, memory_end=memory_end)
    return ca.Function(
        "recorded_step_forces", [t, h, q, v, q1, v1, memory, memory_end],
        [ca.densify(recorded.Q)], ["t0", "h", "q0", "v0", "q1", "v1", "z0", "z1"], ["Q"])


def recorded_step_forces_midpoint(cs) -> ca.Function:
    """``cs.recorded_step_forces_midpoint``: ``step_forces_midpoint`` as a function."""
    q, v, t, memory = cs.q_sym, cs.v_sym, cs.t_sym, ca.SX.sym("memory", cs.n_memory)
    h = ca.SX.sym("h")
    qm, vf = ca.SX.sym("qm", cs.nq), ca.SX.sym("vf", cs.nv)
    q1, v1 = ca.SX.sym("q1", cs.nq), ca.SX.sym("v1", cs.nv)
    T = ca.jacobian(cs._qdot_of_v(qm, v1), v1)
    recorded = cs.step_forces_midpoint(t, h, q, v, qm, vf, q1, v1, memory, T)
    return ca.Function(
        "recorded_step_forces_midpoint", [t, h, q, v, qm, vf, q1, v1, memory],
        [ca.densify(recorded.Q)], ["t0", "h", "q0", "v0", "qm", "vf", "q1", "v1", "z0"],
        ["Q"])


def carried_energy(cs, t, q, v, C) -> float:
    """``cs.carried_energy(t, q, v, C)``: T(u) - T(v), u = v + P M^-1 C."""
    Minv = np.linalg.inv(cs.M)
    dv = Minv @ C
    if cs.n_eq:
        Pi = np.asarray(cs.velocity_jacobian(q, t)).reshape(cs.n_eq, cs.nv)
        dv = dv - Minv @ Pi.T @ (np.linalg.pinv(Pi @ Minv @ Pi.T, rcond=1e-12) @ (Pi @ dv))
    return float(dv @ cs.M @ v + 0.5 * dv @ cs.M @ dv)


def initial_memory(cs, t, q, v, h, closed_gap) -> np.ndarray:
    """``cs.initial_memory(t, q, v, h, closed_gap)``: z, the carry, the gaps' flags."""
    memory = np.zeros(cs.n_memory)
    if cs.n_history:
        memory[:cs.n_history] = np.asarray(
            cs.history_start(t, q, v, cs.initial_history())).ravel()
    memory[cs.contact_slots] = np.asarray(cs.gap(q)).ravel() <= closed_gap
    if cs.n_carry:
        memory[cs.carry_h_slot] = h
        memory[cs.carry_h_slot + 2:cs.contact_slots[0] if cs.n_gap else None] = \
            np.asarray(cs._carry_wrenches(t, q, memory[:cs.n_history])).ravel()
        C = np.asarray(cs._carried_impulse(q, memory)).ravel()
        memory[cs.carry_energy_slot] = cs.carried_energy(t, q, v, C)
    return memory
