"""Matplotlib views of a Result (matplotlib is imported only when a plot is drawn)."""
from __future__ import annotations

import numpy as np


def _axes(ax):
    if ax is not None:
        return ax.figure, ax
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    return fig, ax


def plot_positions(res, bodies=None, ax=None):
    """Centre-of-mass coordinates of ``bodies`` (default: all) against time."""
    fig, ax = _axes(ax)
    for name in bodies or res.body_names:
        r = res.position(name)
        for k, label in enumerate("xyz"):
            ax.plot(res.t, r[:, k], label=f"{name} {label}")
    ax.set(xlabel="t [s]", ylabel="position [m]", title="centres of mass")
    ax.legend(fontsize="small", ncol=3)
    return fig


def plot_energy(res, ax=None):
    """Total, kinetic and potential energy against time."""
    fig, ax = _axes(ax)
    ax.plot(res.t, res.energy, label="total")
    ax.plot(res.t, res.kinetic_energy, label="kinetic", lw=0.8)
    ax.plot(res.t, res.potential_energy, label="potential", lw=0.8)
    ax.set(xlabel="t [s]", ylabel="energy [J]", title="mechanical energy")
    ax.legend(fontsize="small")
    return fig


def plot_step_sizes(res, ax=None):
    """Accepted step sizes against time."""
    fig, ax = _axes(ax)
    ax.step(res.t[1:], res.h, where="pre")
    ax.ticklabel_format(axis="y", useOffset=False)
    ax.set(xlabel="t [s]", ylabel="h [s]", title="step size")
    return fig


def plot_constraint_violation(res, ax=None):
    """Largest |Phi| at the end of every step (and the smallest gap, if any)."""
    fig, ax = _axes(ax)
    ax.semilogy(res.t[1:], np.maximum(res.stats.constraint_violation, 1e-17), label="max |Phi|")
    if res.gaps.shape[1]:
        ax.semilogy(res.t[1:], np.maximum(-res.stats.min_gap, 1e-17), label="penetration")
    ax.set(xlabel="t [s]", ylabel="[m]", title="constraint violation")
    ax.legend(fontsize="small")
    return fig


def plot_result(res, bodies=None):
    """Overview: positions, energy, step size and constraint violation, one Figure."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), constrained_layout=True)
    plot_positions(res, bodies, axes[0, 0])
    plot_energy(res, axes[0, 1])
    plot_step_sizes(res, axes[1, 0])
    plot_constraint_violation(res, axes[1, 1])
    fig.suptitle(res.message)
    return fig
