"""Spherical pendulum with a range-of-motion cone (docs/CASES.md #7, seed 000 section 4).

Ground + pendulum on an ideal spherical joint "pivot" at the origin, gravity -Z. Joint frame
on the ground (the reference body): u_xi = (-1, 0, 0), u_eta = (0, 1, 0), so the cone's axis
u_zeta = u_xi x u_eta = (0, 0, -1) points down and the latitude is the pendulum's angle from
the downward vertical. u_r = the pendulum's body y axis, which runs from the pivot through
the centre of mass. Cone: longitudes (0, 90, 135, 180, 270, 315, 360) deg, maximum latitudes
(30, 70, 100, 80, 50, 45, 30) deg, periodic cubic spline; delta_sigma = 11.5 deg,
m_p = 226 N m, j = 3.39 N m s (seed 000, from Silva et al.).

*ours* (the seed's Tables 1-3 did not survive): pendulum 8.5 kg, 0.45 m, centre of mass at
mid-length, slender-bar inertia m L^2 / 12 = 0.1434 kg m^2 about the transverse axes and
that of a 20 mm radius rod, m r^2 / 2 = 1.7e-3 kg m^2, about its own axis. Released at rest
horizontal (latitude 90 deg: the seed says u_r is perpendicular to u_zeta at the start) at
longitude 135 deg, the one horizontal direction well inside the cone (sigma_max = 100 deg
there), so the swing heads for longitude 315 deg, where the seed's unrestricted run leaves the
cone (Fig. 18b). Body frame: y along the bar, z = global Z. 5 s.

Step size (measured, ``stability_table``): the restricting moment itself is stable at
h = 1e-3 for every parameter of the sweeps; the limit is the dissipative moment on the
bar's spin about its own axis, -j w_axial with J_axial = 1.7e-3 kg m^2: explicit
evaluation needs h < 2 J_axial / j (1.0e-3 s at j = 3.39, 6.8e-4 s at j = 5, 3.4e-4 s at
j = 10). ``H`` = 2e-4 s is stable for all runs.
"""
from __future__ import annotations

import numpy as np

import nlpdyn as nd
from nlpdyn.forces.range_of_motion import RangeOfMotionCone

MASS, LENGTH, RADIUS = 8.5, 0.45, 0.02
TRANSVERSE = MASS * LENGTH**2 / 12
AXIAL = 0.5 * MASS * RADIUS**2
LONGITUDES = np.radians([0, 90, 135, 180, 270, 315, 360])
MAX_LATITUDES = np.radians([30, 70, 100, 80, 50, 45, 30])
XI, ETA = np.array([-1.0, 0, 0]), np.array([0, 1.0, 0])
ZETA = np.cross(XI, ETA)
REFERENCE = {"delta_sigma": np.radians(11.5), "max_moment": 226.0, "damping": 3.39}
START = (np.radians(135.0), np.radians(90.0))          # (longitude, latitude) of u_r
T_END = 5.0
H = 2e-4
SWEEPS = {
    "delta_sigma": np.radians([1.5, 6.5, 11.5, 16.5, 21.5]),
    "max_moment": np.array([126.0, 176.0, 226.0, 276.0, 326.0]),
    "damping": np.array([0.1, 1.0, 3.39, 5.0, 10.0]),
}
# The three runs of the seed: label -> cone parameters (None: no cone).
RUNS = {"no RoM": None, "RoM, j = 0": {"damping": 0.0}, "RoM, j = 3.39": {}}


def start_direction(longitude=START[0], latitude=START[1]) -> np.ndarray:
    """u_r (global) at the given longitude and latitude of the joint frame."""
    u = np.array([np.sin(latitude) * np.cos(longitude), np.sin(latitude) * np.sin(longitude),
                  np.cos(latitude)])
    return u[0] * XI + u[1] * ETA + u[2] * ZETA


def build(rom=True, interpolation="spline", evaluation=None, start=START,
          **parameters) -> nd.System:
    """The pendulum "pendulum" on the spherical joint "pivot"; ``rom``: with the cone "cone"
    of ``REFERENCE`` parameters overridden by ``parameters`` (``delta_sigma``,
    ``max_moment``, ``damping``). ``evaluation``: override the cone's "explicit" default.
    ``start``: (longitude, latitude) of u_r at rest, rad."""
    unknown = set(parameters) - set(REFERENCE)
    if unknown:
        raise TypeError(f"unknown cone parameters {sorted(unknown)}; known: {sorted(REFERENCE)}")
    s = nd.System(gravity=(0, 0, -9.81))
    y = start_direction(*start)
    x = np.cross(y, [0, 0, 1.0])
    if np.linalg.norm(x) < 1e-9:                 # u_r vertical: any perpendicular x will do
        x = np.array([1.0, 0, 0])
    x /= np.linalg.norm(x)
    A = np.column_stack([x, y, np.cross(x, y)])
    pendulum = s.add_body("pendulum", MASS, (TRANSVERSE, AXIAL, TRANSVERSE),
                          position=0.5 * LENGTH * y, orientation=A)
    s.add_joint(nd.Spherical(s.ground, pendulum, point=(0, 0, 0), name="pivot"))
    if rom:
        p = {**REFERENCE, **parameters}
        cone = RangeOfMotionCone(s.ground, pendulum, XI, ETA, y, LONGITUDES, MAX_LATITUDES,
                                 p["delta_sigma"], p["max_moment"], p["damping"],
                                 interpolation=interpolation, name="cone")
        if evaluation is not None:
            cone.evaluation = evaluation
        s.add_force(cone)
    return s


def cone_element(system=None) -> RangeOfMotionCone:
    """The cone of ``system`` (default: the reference case)."""
    system = system or build()
    return next(el for el in system.forces if el.name == "cone")


def run(label_or_parameters="RoM, j = 3.39", t_end=T_END, h=H, progress=False, **options):
    """One run: a label of ``RUNS`` or a dict of cone parameters. Returns the Result with
    ``res.system`` set to the system it ran."""
    params = (RUNS[label_or_parameters] if isinstance(label_or_parameters, str)
              else label_or_parameters)
    system = build(rom=params is not None, **(params or {}))
    res = nd.simulate(system, t_end=t_end, h=h, progress=progress, **options)
    res.system = system
    return res


def runs(t_end=T_END, h=H) -> dict:
    """The seed's three runs: {label: Result}."""
    return {label: run(label, t_end=t_end, h=h) for label in RUNS}


def sweep(parameter, t_end=T_END, h=H) -> dict:
    """Seed 000's sweeps (Table 4): ``parameter`` over ``SWEEPS[parameter]``, the others at
    ``REFERENCE``; the delta_sigma and max_moment sweeps without damping (as in the seed).
    Returns {value: Result}."""
    base = {} if parameter == "damping" else {"damping": 0.0}
    return {value: run({**base, parameter: value}, t_end=t_end, h=h) for value in SWEEPS[parameter]}


# ---------------------------------------------------------------------------- analysis
def latitude_longitude(res) -> tuple[np.ndarray, np.ndarray]:
    """(latitude, longitude) of u_r along a run (rad), shape (n_points,) each."""
    return cone_element().latitude_longitude(None, res.rotation("pendulum"))


def beyond_cone(res) -> np.ndarray:
    """sigma - sigma_max(psi) along a run (rad, > 0 outside the cone), shape (n_points,)."""
    sigma, psi = latitude_longitude(res)
    return sigma - cone_element().max_latitude(psi)


def moments(res) -> dict:
    """The cone's quantities along a run, evaluated on the stored states (numpy):
    ``kappa`` (rad), ``restricting`` and ``dissipative`` moments on the pendulum (global,
    N m), shape (n_points,) / (n_points, 3). Zeros for a run without the cone. Computed once
    per Result (kept on it)."""
    import casadi as ca
    cached = getattr(res, "_rom_moments", None)
    if cached is not None:
        return cached
    n = len(res.t)
    system = getattr(res, "system", None)
    if system is None or not any(el.name == "cone" for el in system.forces):
        return {"kappa": np.zeros(n), "restricting": np.zeros((n, 3)),
                "dissipative": np.zeros((n, 3))}
    cs = system.compile()
    cone = cone_element(system)
    states = cs.states_of(cone)
    f = ca.Function("rom_moments", [cs.q_sym, cs.v_sym],
                    [cone.penetration(states), cone.restricting_moment(states),
                     cone.dissipative_moment(states)],
                    ["q", "v"], ["kappa", "restricting", "dissipative"])
    assert not f.has_free()
    kappa, m_r, m_d = f.map(n)(res.q.T, res.v.T)
    res._rom_moments = {"kappa": np.asarray(kappa).ravel(), "restricting": np.asarray(m_r).T,
                        "dissipative": np.asarray(m_d).T}
    return res._rom_moments


def summary_row(res) -> dict:
    """Numbers that compare with the seed's findings, for one run."""
    m = moments(res)
    mr = np.linalg.norm(m["restricting"], axis=1)
    md = np.linalg.norm(m["dissipative"], axis=1)
    touching = np.nonzero(mr > 0)[0]
    e = res.energy
    return {
        "success": res.success,
        "max beyond cone [deg]": float(np.degrees(beyond_cone(res).max())),
        "max kappa [deg]": float(np.degrees(m["kappa"].max())),
        "max |m_mr| [N m]": float(mr.max()),
        "max |m_d| [N m]": float(md.max()),
        "first contact [s]": float(res.t[touching[0]]) if touching.size else float("nan"),
        "E start [J]": float(e[0]),
        "E end [J]": float(e[-1]),
        "E range [J]": float(np.ptp(e)),
        "max E rise [J]": float(np.max(e - np.minimum.accumulate(e))),
    }


def summary_table(results: dict, key_format="{}") -> str:
    """Plain-text table of ``summary_row`` for {label: Result}."""
    rows = {key_format.format(k): summary_row(r) for k, r in results.items()}
    cols = list(next(iter(rows.values())))
    width = max(len(k) for k in rows) + 2
    lines = ["".ljust(width) + " | ".join(c for c in cols)]
    for k, row in rows.items():
        cells = [f"{row[c]!s:>{len(c)}}" if isinstance(row[c], (bool, np.bool_))
                 else f"{row[c]:>{len(c)}.4g}" for c in cols]
        lines.append(k.ljust(width) + " | ".join(cells))
    return "\n".join(lines)


def stability_table(steps=(1e-3, 5e-4, 2e-4), dampings=(0.0, 3.39, 5.0, 10.0), t_end=2.0,
                    delta_sigma=REFERENCE["delta_sigma"]) -> list[dict]:
    """Explicit evaluation: for each (h, j) the largest |w_axial| (the spin about the bar,
    rad/s, which no physical load excites: round-off seeds it), the maximum energy rise over
    the running minimum (J) and whether the run reached ``t_end``."""
    out = []
    for h in steps:
        for j in dampings:
            res = run({"damping": j, "delta_sigma": delta_sigma}, t_end=t_end, h=h)
            spin = np.abs(res.angular_velocity("pendulum")[:, 1])
            e = res.energy
            out.append({"h": h, "j": j, "success": res.success, "max spin [rad/s]": float(spin.max()),
                        "max E rise [J]": float(np.max(e - np.minimum.accumulate(e))),
                        "E end - E start [J]": float(e[-1] - e[0]),
                        "2 J_axial / j [s]": 2 * AXIAL / j if j > 0 else float("inf")})
    return out


def seed_spline_boundary(longitude, n_newton=30) -> np.ndarray:
    """The seed's polynomial approach (eqs. 15-19), numpy, for comparison with the element's
    spline of sigma_max in the longitude: the polar-chart points (sigma_max cos psi,
    sigma_max sin psi) of the cone's data are joined by periodic cubic splines x(l), y(l) in
    the chord length l (the seed's "length of the line", zero at psi = 0 and the perimeter
    at 360 deg); for each longitude, eq. 19 (atan2(y, x) = psi) is solved for l by Newton
    on the segment (eq. 14's quadrant search becomes a knot search), and sigma_max =
    sqrt(x^2 + y^2) (eq. 18)."""
    from scipy.interpolate import CubicSpline
    pts = np.column_stack([MAX_LATITUDES * np.cos(LONGITUDES), MAX_LATITUDES * np.sin(LONGITUDES)])
    pts[-1] = pts[0]
    l = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))]
    sx = CubicSpline(l, pts[:, 0], bc_type="periodic")
    sy = CubicSpline(l, pts[:, 1], bc_type="periodic")
    psi = np.mod(np.atleast_1d(np.asarray(longitude, dtype=float)), 2 * np.pi)
    k = np.clip(np.searchsorted(LONGITUDES, psi, side="right") - 1, 0, len(l) - 2)
    frac = (psi - LONGITUDES[k]) / (LONGITUDES[k + 1] - LONGITUDES[k])
    s = l[k] + frac * (l[k + 1] - l[k])
    for _ in range(n_newton):
        x, y, dx, dy = sx(s), sy(s), sx(s, 1), sy(s, 1)
        resid = np.angle(np.exp(1j * (np.arctan2(y, x) - psi)))
        s = np.clip(s - resid / ((x * dy - y * dx) / (x**2 + y**2)), l[k], l[k + 1])
    return np.hypot(sx(s), sy(s)).reshape(np.shape(longitude))
