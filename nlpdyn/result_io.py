"""The result file format (``.npz`` with a strict-JSON ``__meta__``): writing it atomically,
reading it back, and the validator that names every problem of a file at once."""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import reprlib
import secrets
import socket
import time
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path

import numpy as np

from .step_stats import StepStats


class ResultFileError(ValueError):
    """A result file that cannot be read back faithfully, or a result that cannot be saved so
    that it can; the message names the file and lists every problem found.

    Parameters
    ----------
    path : str or path-like
        The file.
    problems : iterable of str
        One line per problem, each starting with the key concerned.
    what : str
        What is wrong with the file as a whole, written before the problems.

    Attributes
    ----------
    path : pathlib.Path  the file
    problems : list of str  one line per problem, each starting with the key concerned

    Examples
    --------
    >>> import nlpdyn as nd
    >>> err = nd.ResultFileError("run.npz", ["t: not strictly increasing"])
    >>> print(err)
    run.npz: not a readable nlpdyn result file: t: not strictly increasing
    >>> err.problems
    ['t: not strictly increasing']
    """

    def __init__(self, path: str | os.PathLike, problems: Iterable[str],
                 what: str = "not a readable nlpdyn result file"):
        self.path, self.problems = Path(path), list(problems)
        sep = " " if len(self.problems) == 1 else "\n  - "
        super().__init__(f"{path}: {what}:{sep}{sep.join(self.problems)}")


FORMAT = "nlpdyn-result"
FORMAT_VERSION = 2          # 0: files from before the format had a version (same layout); 2: reaction_q
_ZIP_MAGIC = b"PK\x03\x04"  # every archive numpy writes starts with a zip local header
_FLOAT_TAG = "__float__"       # {"__float__": "inf"} in __meta__ is the float inf
_STATS_KINDS = {f.name: f.default_factory().dtype.kind for f in fields(StepStats)}
_KIND_NAMES = {"f": "floating point", "i": "integer", "b": "bool", "U": "str"}
_META_TYPES = {"body_names": list, "constraint_rows": dict, "gap_rows": dict,
               "force_elements": dict, "success": bool, "status": int, "message": str,
               "initial_projection": dict, "info": dict}


def _write_atomically(target: Path, write) -> Path:
    """``write(file)`` into a new temporary file beside ``target`` (binary), flushed to disk
    and renamed onto ``target``: a write that fails leaves an existing file as it was and no
    temporary file behind. Temporary files of ``target`` left by writers that were killed
    (kill -9, power loss) are removed first (:func:`_remove_stale_temporaries`)."""
    _remove_stale_temporaries(target)
    tmp = target.with_name(f".{target.name}.{_HOST}-{os.getpid()}.{secrets.token_hex(8)}.tmp")
    file = open(tmp, "xb")      # never an existing file; permissions as for any new file
    try:
        with file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def write(res, path) -> Path:
    """Write the result ``res`` to ``path`` after checking that it reads back; see
    :meth:`nlpdyn.Result.save`, which documents what is raised and how the file is written.

    Parameters
    ----------
    res : Result
        The run.
    path : str or path-like
        The file; ``.npz`` is appended unless the name ends with it.

    Returns
    -------
    pathlib.Path
        The file written.

    Examples
    --------
    >>> write(res, "run")                                         # doctest: +SKIP
    PosixPath('run.npz')
    """
    target = _npz_path(path)
    arrays = {key: np.asarray(a) for key, a in _arrays(res).items()}
    unsaveable = []
    meta = {k: _encode(v, k, unsaveable) for k, v in _meta(res).items()}
    if unsaveable:
        raise ValueError("cannot save the metadata:\n  - " + "\n  - ".join(unsaveable))
    text = json.dumps(meta, allow_nan=False)
    problems = _problems(arrays, *_parse_meta(text))
    if problems:
        raise ResultFileError(target, problems, "cannot be written from this result")
    return _write_atomically(
        target, lambda file: np.savez_compressed(file, __meta__=np.array(text), **arrays))


def _arrays(res) -> dict:
    """Every array of the result ``res``, by its key in the file."""
    arrays = {"t": res.t, "q": res.q, "v": res.v, "h": res.h, "energy": res.energy,
              "kinetic_energy": res.kinetic_energy, "potential_energy": res.potential_energy,
              "mu": res.mu, "lam": res.lam, "gaps": res.gaps}
    for f in fields(StepStats):
        arrays["stats__" + f.name] = getattr(res.stats, f.name)
    for prefix, named in (("wrench__", res.wrenches), ("cpoint__", res.contact_points),
                          ("cforce__", res.contact_vectors), ("ework__", res.element_work),
                          ("epot__", res.element_potential), ("ledger__", res.ledger),
                          ("memory__", res.memory), ("friction__", res.friction),
                          ("cfric__", res.friction_vectors)):
        arrays.update({prefix + name: a for name, a in named.items()})
    if res.reaction_q is not None:
        arrays["reaction_q"] = res.reaction_q
    return arrays


def _meta(res) -> dict:
    """Everything else of ``res``, for ``__meta__``."""
    return {"format": FORMAT, "version": FORMAT_VERSION, "body_names": res.body_names,
            "constraint_rows": res.constraint_rows, "force_elements": res.force_elements,
            "gap_rows": res.gap_rows, "success": res.success, "status": res.status,
            "message": res.message, "initial_projection": res.initial_projection,
            "info": res.info}


def read(path) -> tuple[dict, dict]:
    """The arrays and the metadata of a result file, checked; see :meth:`nlpdyn.Result.load`,
    which documents what is raised.

    Parameters
    ----------
    path : str or path-like
        The file; ``.npz`` is appended unless the name ends with it.

    Returns
    -------
    arrays : dict
        Key in the file -> array, ``__meta__`` left out.
    meta : dict
        ``__meta__`` parsed.

    Examples
    --------
    >>> arrays, meta = read("run.npz")                            # doctest: +SKIP
    >>> meta["format"], arrays["t"].shape                         # doctest: +SKIP
    ('nlpdyn-result', (101,))
    """
    path = _npz_path(path)
    with open(path, "rb") as file:
        if file.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
            raise ResultFileError(path, ["not an .npz archive (no zip header)"])
        file.seek(0)
        arrays, key = {}, None      # key: the member being read
        try:
            with np.load(file, allow_pickle=False) as data:
                for key in data.files:
                    arrays[key] = np.asarray(data[key])
        except Exception as err:    # zipfile, zlib and numpy raise many types on damaged bytes
            reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
            raise ResultFileError(path, [f"{key}: {reason}" if key else reason]) from err
    text = arrays.pop("__meta__", None)
    if text is None:
        raise ResultFileError(path, ["__meta__: missing"])
    if text.dtype.kind != "U" or text.ndim:
        raise ResultFileError(path, [f"__meta__: expected a str, got {text.dtype} of shape "
                                     f"{text.shape}"])
    try:
        meta, nonstrict = _parse_meta(str(text))
    except (ValueError, RecursionError) as err:
        raise ResultFileError(path, [f"__meta__: not JSON ({err})"]) from err
    problems = _problems(arrays, meta, nonstrict)
    if problems:
        raise ResultFileError(path, problems)

    return arrays, meta


# a temporary file's name says who writes it: this host (a hash of its name) and process
_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
# .<target name>.[<host>-<pid>.]<16 hex>.tmp (no <host>-<pid> in names of earlier versions)
_TEMPORARY = re.compile(r"(?:(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)\.)?[0-9a-f]{16}")
STALE_AGE = 3600.0
"""Seconds after its last change when a temporary file whose writer cannot be checked (another
host, an older nlpdyn, Windows) counts as left behind by a dead writer."""


def _writer_is_dead(host, pid) -> bool:
    """Whether process ``pid`` of host ``host`` is known to have ended (False: alive or
    unknown)."""
    if host != _HOST or os.name == "nt":    # os.kill(pid, 0) would end the process on Windows
        return False
    if int(pid) == os.getpid():              # this process: maybe a save in another thread
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, OSError):    # alive (another user's) or unknown
        return False
    return False


def _remove_stale_temporaries(target: Path) -> list:
    """Remove the temporary files ``_write_atomically`` left beside ``target`` in runs that
    were killed: those whose writer process has ended, and any not changed for
    :data:`STALE_AGE` seconds. A live writer's file (another process saving the same target)
    is kept. Returns the paths removed; errors (a file gone meanwhile, no permission) are
    ignored."""
    prefix = f".{target.name}."
    removed = []
    try:
        entries = list(os.scandir(target.parent if str(target.parent) else "."))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        match = _TEMPORARY.fullmatch(name[len(prefix):-len(".tmp")])
        if match is None:
            continue
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AGE
            if old or (match["pid"] and _writer_is_dead(match["host"], match["pid"])):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


def _npz_path(path) -> Path:
    """``path``, with ``.npz`` appended unless its name ends with it (numpy's rule)."""
    path = Path(path)
    return path if path.name.endswith(".npz") else path.with_name(path.name + ".npz")



_JSON_SCALARS = (str, int, float, bool, type(None))


def _encode(x, where, problems):
    """``x`` for strict JSON: numpy scalars and arrays as Python values, tuples as lists, and
    non-finite floats as ``{"__float__": "nan" | "inf" | "-inf"}`` (:func:`_decode_float`).
    What JSON cannot hold is appended to ``problems``, named by ``where`` and its keys."""
    if isinstance(x, dict):
        if set(x) == {_FLOAT_TAG}:
            problems.append(f"{where}: a dict whose only key is {_FLOAT_TAG!r} (reserved)")
        bad = [k for k in x if not isinstance(k, str)]
        if bad:
            problems.append(f"{where}: keys must be str, got {reprlib.repr(bad)}")
        out = {k: _encode(v, f"{where}[{k!r}]", problems) for k, v in x.items()}
    elif isinstance(x, (list, tuple)):
        out = [_encode(v, f"{where}[{i}]", problems) for i, v in enumerate(x)]
    elif isinstance(x, (np.generic, np.ndarray)):
        out = _encode(x.tolist(), where, problems)
    elif isinstance(x, float) and not math.isfinite(x):
        out = {_FLOAT_TAG: repr(x)}
    elif isinstance(x, _JSON_SCALARS):
        out = x
    else:
        problems.append(f"{where}: a {type(x).__name__} ({reprlib.repr(x)}) is not JSON: "
                        "use dicts with str keys, lists, str, numbers, bools or None")
        out = None
    return out


def _decode_float(obj: dict):
    """JSON object hook: a tagged non-finite float back to a float (see :func:`_encode`)."""
    if obj.keys() == {_FLOAT_TAG} and obj[_FLOAT_TAG] in ("nan", "inf", "-inf"):
        return float(obj[_FLOAT_TAG])
    return obj


def _parse_meta(text: str):
    """``__meta__`` parsed, and whether it used JSON's non-strict NaN or Infinity (which
    nlpdyn wrote before format version 1)."""
    constants = []

    def constant(name):
        constants.append(name)
        return float(name)
    return json.loads(text, parse_constant=constant, object_hook=_decode_float), bool(constants)


def _is(value, kind) -> bool:
    """isinstance, with a bool not counted as an int."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _is_names(value) -> bool:
    """A list of str (body names)."""
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _problems(arrays: dict, meta, nonstrict_json: bool) -> list:
    """Everything wrong with a result file's arrays and parsed ``__meta__``, one line per bad
    key: missing or unexpected keys, wrong types, dtypes and shapes."""
    if not isinstance(meta, dict):
        return [f"__meta__: expected a JSON object, got {type(meta).__name__}"]
    if "format" in meta or "version" in meta:
        version = meta.get("version")
        if meta.get("format") != FORMAT:
            return [f'__meta__["format"]: expected {FORMAT!r}, got {reprlib.repr(meta.get("format"))}']
        if not _is(version, int) or version < 1:
            return [f'__meta__["version"]: expected a whole number >= 1, got {reprlib.repr(version)}']
        if version > FORMAT_VERSION:
            return [f'__meta__["version"]: {version}, written by a newer nlpdyn (this one reads '
                    f"up to {FORMAT_VERSION})"]
    else:
        version = 0
    problems = []
    if nonstrict_json and version >= 1:
        problems.append("__meta__: not strict JSON (NaN or Infinity)")
    problems += [f'__meta__["{key}"]: not part of the format' for key in meta
                 if key not in _META_TYPES and key not in ("format", "version")]
    for key, kind in _META_TYPES.items():
        if key not in meta:
            problems.append(f'__meta__["{key}"]: missing')
        elif not _is(meta[key], kind):
            problems.append(f'__meta__["{key}"]: expected {kind.__name__}, got '
                            f"{reprlib.repr(meta[key])}")
    meta = {key: meta[key] for key, kind in _META_TYPES.items() if key in meta and _is(meta[key], kind)}
    if "body_names" in meta and not _is_names(meta["body_names"]):
        problems.append('__meta__["body_names"]: expected a list of str')
        del meta["body_names"]

    # element name -> its bodies; row blocks (start, stop) of mu / lam and gaps
    bodies, blocks = {}, {"constraint_rows": {}, "gap_rows": {}}
    for key, block in blocks.items():
        for name, row in meta.get(key, {}).items():
            if (isinstance(row, list) and len(row) == 3 and _is(row[0], int) and _is(row[1], int)
                    and 0 <= row[0] <= row[1] and _is_names(row[2])):
                block[name], bodies[name] = tuple(row[:2]), row[2]
            else:
                problems.append(f'__meta__["{key}"]["{name}"]: expected [start, stop, [body '
                                f"names]] with 0 <= start <= stop, got {reprlib.repr(row)}")
    for name, names in meta.get("force_elements", {}).items():
        if _is_names(names):
            bodies[name] = names
        else:
            problems.append(f'__meta__["force_elements"]["{name}"]: expected a list of str')

    # dimensions: (symbol, size), size None where the metadata needed for it is bad
    t = arrays.get("t")
    n = len(t) if t is not None and t.ndim == 1 and len(t) else None
    if t is not None and t.ndim == 1 and not len(t):
        problems.append("t: no time points")
    n_bodies = len(meta["body_names"]) if "body_names" in meta else None

    def width(key):
        """Columns of mu ("constraint_rows") or lam and gaps ("gap_rows"); None if a row is bad."""
        known = key in meta and len(blocks[key]) == len(meta[key])
        return max((stop for _, stop in blocks[key].values()), default=0) if known else None
    points, steps = ("n_points", n), ("n_points - 1", n and n - 1)
    expected = {"t": ((points,), "f"), "h": ((steps,), "f"),
                "q": ((points, ("7 n_bodies", n_bodies and 7 * n_bodies)), "f"),
                "v": ((points, ("6 n_bodies", n_bodies and 6 * n_bodies)), "f"),
                "mu": ((steps, ("constraint rows", width("constraint_rows"))), "f"),
                "lam": ((steps, ("gap rows", width("gap_rows"))), "f"),
                "gaps": ((points, ("gap rows", width("gap_rows"))), "f")}
    for key in ("energy", "kinetic_energy", "potential_energy"):
        expected[key] = ((points,), "f")
    for name, kind in _STATS_KINDS.items():
        expected["stats__" + name] = ((steps,), kind)
    for name, names in bodies.items():
        expected["wrench__" + name] = ((steps, (f"bodies of {name}", len(names)), ("6", 6)), "f")
    for name, (start, stop) in blocks["gap_rows"].items():
        gaps = (f"gaps of {name}", stop - start)
        expected["cpoint__" + name] = ((points, gaps, ("3", 3)), "f")
        expected["cforce__" + name] = ((steps, gaps, ("3", 3)), "f")
        if "cfric__" + name in arrays:      # optional: clearance joints with friction
            expected["cfric__" + name] = ((steps, gaps, ("3", 3)), "f")
    for name in meta.get("force_elements", {}):
        expected["ework__" + name] = expected["epot__" + name] = ((points,), "f")
    for key in arrays:
        if key.startswith("ledger__"):
            expected[key] = ((points,), "f")
        # optional (absent from files of older versions): force elements' memory, friction
        element = key.partition("__")[2]
        if key.startswith("memory__") and element in meta.get("force_elements", {}):
            expected[key] = ((points, ("memory size", None)), "f")
        if key.startswith("friction__") and element in meta.get("force_elements", {}):
            expected[key] = ((steps,), "f")
    if "reaction_q" in arrays:      # optional (version 2): where each step's reactions act
        expected["reaction_q"] = ((steps, ("7 n_bodies", n_bodies and 7 * n_bodies)), "f")

    well_formed = set()
    for key, (dims, kind) in expected.items():
        a = arrays.get(key)
        if a is None:
            problems.append(f"{key}: missing")
            continue
        if a.dtype.kind != kind:
            problems.append(f"{key}: dtype {a.dtype}, expected {_KIND_NAMES[kind]}")
        sizes = tuple(s for _, s in dims)
        if a.ndim != len(dims) or any(s is not None and s != got for got, s in zip(a.shape, sizes)):
            problems.append(f"{key}: shape {a.shape}, expected ({', '.join(sym for sym, _ in dims)})"
                            + ("" if None in sizes else f" = {sizes}"))
        elif a.dtype.kind == kind:
            well_formed.add(key)
    problems += [f"{key}: not part of the format (or of an element not in __meta__)"
                 for key in arrays if key not in expected]
    return problems + _value_problems(arrays, meta, well_formed)


_FINITE = ("t", "h", "q", "v", "energy", "kinetic_energy", "potential_energy")
"""Arrays whose every value is finite in any result (a step that produces a non-finite
state fails and is not recorded)."""


def _where(mask) -> str:
    """Where ``mask`` holds: how often, and the first index."""
    at = ", ".join(str(int(i)) for i in np.argwhere(mask)[0])
    return f"{np.count_nonzero(mask)} of {mask.size}, first at [{at}]"


def _value_problems(arrays: dict, meta: dict, well_formed: set) -> list:
    """What is wrong with the values of the well-formed arrays: non-finite states and
    energies, times not increasing, step sizes that do not fit the times."""
    problems = []
    for key in _FINITE:
        if key in well_formed and not np.isfinite(arrays[key]).all():
            bad = ~np.isfinite(arrays[key])
            problems.append(f"{key}: not finite ({_where(bad)}: {arrays[key][bad][0]})")
    finite = {key for key in ("t", "h") if key in well_formed and np.isfinite(arrays[key]).all()}
    if "t" in finite:
        t = arrays["t"]
        dt = np.diff(t)
        if (dt <= 0).any():
            i = int(np.argmax(dt <= 0))
            problems.append(f"t: not strictly increasing ({_where(dt <= 0)}: "
                            f"t[{i}] = {float(t[i])!r}, t[{i + 1}] = {float(t[i + 1])!r})")
        elif "h" in finite:
            problems += _step_problems(t, arrays["h"], meta)
    return problems


def _step_problems(t, h, meta) -> list:
    """``h`` against the increasing times ``t``. h[i] is the step that ended at t[i + 1]
    (t[i + 1] = t + h in the stepper, so equal to t[i + 1] - t[i] up to one rounding of
    t[i + 1]) when every step is kept; with ``output_every`` or ``t_eval`` some steps are
    not, and h[i] is only at most t[i + 1] - t[i]."""
    dt = np.diff(t)
    tol = 4 * np.finfo(float).eps * np.maximum(np.abs(t[1:]), np.abs(t[:-1]))
    if (h <= 0).any():
        return [f"h: not positive ({_where(h <= 0)})"]
    run = meta.get("info", {}).get("run")
    steps = run.get("n_steps") if isinstance(run, dict) else None
    if _is(steps, int) and steps == len(h):      # every step kept
        off = np.abs(h - dt) > tol
        if off.any():
            i = int(np.argmax(off))
            return [f"h: not t[i + 1] - t[i], as in a run whose {steps} steps are all kept "
                    f"({_where(off)}: h = {float(h[i])!r}, "
                    f"t[{i + 1}] - t[{i}] = {float(dt[i])!r})"]
    long = h > dt + tol
    if long.any():
        i = int(np.argmax(long))
        return [f"h: longer than t[i + 1] - t[i] ({_where(long)}: h = {float(h[i])!r}, "
                f"t[{i + 1}] - t[{i}] = {float(dt[i])!r})"]
    return []
