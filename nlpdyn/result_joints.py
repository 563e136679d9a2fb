"""A Result's joint modes and the interaction across a joint split along them
(:meth:`nlpdyn.Result.joint_modes`, :meth:`nlpdyn.Result.joint_forces`)."""
from __future__ import annotations

import numpy as np


def _joint_data(res, name):
    joints = res.info.get("joints", {})
    if name not in joints:
        raise KeyError(f"no ideal or clearance joint named {name!r}; joints: {list(joints)}")
    return joints[name]


def _joint_frames(res, data):
    """Per step: the joint frame's axes (global, columns; (n_steps, 3, 3)) and the child's
    rotation where its reactions act: the step's start (scheme "euler") or its midpoint
    (scheme "midpoint")."""
    q0 = res.reaction_q
    if q0 is None:
        # a loaded or resampled result: each kept step must start at the point before it
        if not np.allclose(np.diff(res.t), res.h, rtol=1e-9, atol=0):
            raise ValueError("this result keeps only some steps (output_every > 1 or "
                             "t_eval) and not where they started, which joint forces "
                             "need; run with every step kept")
        q0 = res.q[:-1]
    from .rotations import rotation_matrices

    def rotation(body):
        if body not in res.body_names:     # the ground
            return np.broadcast_to(np.eye(3), (len(q0), 3, 3))
        k = res.body_names.index(body)
        return rotation_matrices(q0[:, 7 * k + 3:7 * k + 7])
    return rotation(data["parent"]) @ np.array(data["frame"]), rotation(data["child"])


def joint_modes(res, name: str) -> dict:
    """Mode vectors of joint ``name`` of ``res``: :meth:`nlpdyn.Result.joint_modes`.

    Parameters
    ----------
    res : Result
        The run.
    name : str
        The joint.

    Returns
    -------
    dict
        As :meth:`nlpdyn.Result.joint_modes`.

    Examples
    --------
    >>> joint_modes(res, "pivot")["free"].shape                   # doctest: +SKIP
    (6, 1)
    """
    from .joints.modes import JointModes
    data = _joint_data(res, name)
    free = np.array(data["free"], dtype=float).reshape(6, -1)
    constrained = np.array(data["constrained"], dtype=float).reshape(6, -1)
    if "child_axis" in data:                # universal joint: axis2 as the child carries it
        E, R_child = _joint_frames(res, data)
        u = np.einsum("nji,njk,k->ni", E, R_child, np.array(data["child_axis"]))
        e1 = np.broadcast_to(np.eye(3)[0], u.shape)
        zero = np.zeros_like(u)
        free = np.stack([np.c_[e1, zero], np.c_[u, zero]], axis=-1)
        constrained = np.concatenate([np.c_[np.cross(e1, u), zero][..., None],
                                      np.broadcast_to(np.r_[np.zeros((3, 3)), np.eye(3)],
                                                      (len(u), 6, 3))], axis=-1)
        return {"free": free, "constrained": constrained, "excited": [],
                "dual": np.linalg.inv(np.concatenate([free, constrained], axis=-1))
                .transpose(0, 2, 1)}
    return JointModes(free, constrained).excite(data["excited_modes"]).as_dict()


def joint_forces(res, name: str, applied=()) -> dict:
    """The interaction across joint ``name`` of ``res`` split along its modes:
    :meth:`nlpdyn.Result.joint_forces`.

    Parameters
    ----------
    res : Result
        The run.
    name : str
        The joint.
    applied : sequence of str
        Force elements acting on the joint's child whose wrenches count.

    Returns
    -------
    dict
        As :meth:`nlpdyn.Result.joint_forces`.

    Examples
    --------
    >>> joint_forces(res, "pivot", applied=["motor"])["applied"]  # doctest: +SKIP
    """
    from .joints.modes import split
    data = _joint_data(res, name)
    E, R_child = _joint_frames(res, data)
    arm = R_child @ np.array(data["child_point"])           # joint point - child's CoM
    members = [(name, True)] + [tuple(x) for x in data["excitations"]]
    for element in applied:
        res._force_element(element)
        members.append((element, False))
    force = np.zeros((len(E), 3))
    moment = np.zeros((len(E), 3))
    for element, about_point in members:
        wrench = res._wrench(element, data["child"])
        if not about_point:
            if data["child"] not in res.body_names:
                raise ValueError(f"{element!r}: moments about the ground's centre of mass "
                                 f"do not add up; make {name!r}'s child a body")
            wrench = np.c_[wrench[:, :3], wrench[:, 3:] - np.cross(arm, wrench[:, :3])]
        force += wrench[:, :3]
        moment += wrench[:, 3:]
    A = np.c_[np.einsum("nji,nj->ni", E, moment), np.einsum("nji,nj->ni", E, force)]
    modes = joint_modes(res, name)
    return {**split(A, modes["free"], modes["constrained"]), "wrench": A}
