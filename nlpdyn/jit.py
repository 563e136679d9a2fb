"""The step's functions compiled to machine code (``StepperSettings.jit``).

CasADi generates C for a function (``casadi.CodeGenerator``), the system's C compiler builds
it into a shared library and ``casadi.external`` loads it: the same function, evaluated
without CasADi's expression interpreter. Libraries are cached on disk by a hash of the
function's serialised expression graph, the compiler, its flags and CasADi's version, so a
second run of the same model (and every sweep point with the same data) compiles nothing.
Where a function cannot be generated (a conic plugin such as qpOASES has no C code
generation) or no compiler is found, it stays interpreted and the reason is recorded;
nothing requires a compiler.

In ``"auto"`` mode a function already in the cache is loaded, and the others are queued:
the stepper has them built by a separate process (:meth:`Jit.start`) once the run is long
enough to win the build back, steps on interpreted meanwhile, and takes the compiled
functions in between two steps when they are ready (:meth:`Jit.poll`). The same inputs give
the same outputs either way, so the switch does not change the run.

Examples
--------
>>> import casadi as ca
>>> from nlpdyn.jit import Jit
>>> x = ca.SX.sym("x", 2)
>>> jit = Jit()
>>> f = jit.compile(ca.Function("jit_doc_square", [x], [x * x]))
>>> float(f([1.0, 3.0])[1])   # compiled where a C compiler is found, interpreted otherwise
9.0
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import casadi as ca

if TYPE_CHECKING:
    from .fastcall import FastFunction

# -O1: most of -O2's speed on CasADi's straight-line code at a third of its compile time;
# no fused multiply-adds, so the compiled function rounds as the interpreter does
FLAGS = ("-O1", "-ffp-contract=off", "-fPIC", "-shared")
# a build's time, s, from the function's serialised size (this machine's cc -O1: 2.0-3.0 us a
# byte over 0.1-8 MB): "auto" starts building when the run left would take longer interpreted
BUILD_SECONDS = (0.2, 3e-6)
MODES = (True, "auto")


def cache_dir() -> Path:
    """Where compiled libraries are kept: ``$NLPDYN_CACHE``, else ``$XDG_CACHE_HOME/nlpdyn/jit``
    (``~/.cache/nlpdyn/jit``).

    Examples
    --------
    >>> import os
    >>> from nlpdyn.jit import cache_dir
    >>> str(cache_dir()) == os.environ.get("NLPDYN_CACHE") or cache_dir().name == "jit"
    True
    """
    given = os.environ.get("NLPDYN_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "nlpdyn" / "jit"


def resolve_mode(setting: bool | str | None) -> bool | str:
    """``StepperSettings.jit`` as a mode: False, True or "auto"; None: ``$NLPDYN_JIT`` ("0",
    "1" or "auto") where set and not empty, else "auto". Raises ValueError on anything else.

    Parameters
    ----------
    setting : bool, "auto" or None
        ``StepperSettings.jit``.

    Returns
    -------
    bool or "auto"

    Raises
    ------
    ValueError
        Another setting, or another value of ``$NLPDYN_JIT``.

    Examples
    --------
    >>> from nlpdyn.jit import resolve_mode
    >>> resolve_mode(False), resolve_mode("auto")
    (False, 'auto')
    """
    if setting is None:
        given = os.environ.get("NLPDYN_JIT") or "auto"
        modes = {"0": False, "1": True, "auto": "auto"}
        if given.strip().lower() not in modes:
            raise ValueError(f"NLPDYN_JIT must be 0, 1 or auto, got {given!r}")
        return modes[given.strip().lower()]
    if isinstance(setting, bool) or type(setting).__name__ == "bool_":     # numpy's too
        return bool(setting)
    if isinstance(setting, str) and setting == "auto":
        return setting
    raise ValueError(f"jit must be True, False, 'auto' or None, got {setting!r}")


def find_compiler() -> str | None:
    """The C compiler: ``$CC``, else Python's own (``sysconfig`` CC), ``cc`` or ``gcc`` on the
    PATH; None when there is none.

    Examples
    --------
    >>> from nlpdyn.jit import find_compiler
    >>> find_compiler() is None or isinstance(find_compiler(), str)
    True
    """
    for name in (os.environ.get("CC"), (sysconfig.get_config_var("CC") or "").split(" ")[0],
                 "cc", "gcc"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Jit:
    """Compiles CasADi functions to shared libraries, cached on disk (``cache_dir``).

    Parameters
    ----------
    compiler : str, optional
        The C compiler; default ``find_compiler()``.
    directory : path, optional
        The cache; default ``cache_dir()``.
    mode : True or "auto"
        True: :meth:`compile` builds what the cache lacks at once. "auto": it queues it
        (``pending``) for :meth:`look_up` and :meth:`start`, and the caller takes the
        compiled functions when :meth:`poll` says they are built.

    Attributes
    ----------
    record : dict
        ``compiled`` (functions built here), ``cached`` (loaded from the cache),
        ``seconds`` (compile time), ``interpreted`` (function name -> why it was not
        compiled); the stepper adds, in "auto" mode, the times a build was ``started`` and
        the run ``switched`` to compiled functions.
    pending : list
        "auto": the functions not compiled yet.

    Examples
    --------
    >>> import casadi as ca
    >>> from nlpdyn.jit import Jit
    >>> x = ca.SX.sym("x")
    >>> jit = Jit()
    >>> float(jit.compile(ca.Function("jit_doc_cube", [x], [x ** 3]))(2.0))
    8.0
    >>> sorted(jit.record)
    ['cached', 'compiled', 'interpreted', 'seconds']
    """

    def __init__(self, compiler: str | None = None, directory: str | os.PathLike | None = None,
                 mode: bool | str = True) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.compiler = compiler or find_compiler()
        self.directory = Path(directory) if directory is not None else cache_dir()
        self.mode = mode
        self.record = {"compiled": 0, "cached": 0, "seconds": 0.0, "interpreted": {}}
        self.pending: list[_Queued] = []      # "auto": not compiled yet
        self._building: list[_Queued] = []    # under way (:meth:`start`)
        self._process = None

    def compile(self, f: ca.Function) -> ca.Function:
        """``f`` compiled (from the cache where it was built before), or ``f`` itself where it
        cannot be (the reason in ``record["interpreted"]``) or, in "auto" mode, not yet
        (queued in ``pending``: :meth:`attach`, :meth:`look_up`, :meth:`start`).

        Parameters
        ----------
        f : casadi.Function

        Returns
        -------
        casadi.Function
            The compiled function (``casadi.external``) or ``f``.

        Examples
        --------
        >>> import tempfile
        >>> import casadi as ca
        >>> x = ca.SX.sym("x")
        >>> f = ca.Function("jit_doc_queued", [x], [ca.sin(x)])
        >>> jit = Jit(directory=tempfile.mkdtemp(), mode="auto")
        >>> jit.compile(f) is f                        # queued (or interpreted: no compiler)
        True
        >>> [e.name for e in jit.pending] in ([], ["jit_doc_queued"])
        True
        """
        name = f.name()
        if self.compiler is None:
            self.record["interpreted"][name] = "no C compiler found (set CC)"
            return f
        # plugins of external solvers (qpOASES, ProxQP: "...Interface") generate no C code
        plugins = sorted({g.class_name() for g in f.find_functions()
                          if g.class_name().endswith("Interface")})
        if plugins:
            self.record["interpreted"][name] = f"{', '.join(plugins)} generates no C code"
            return f
        if self.mode == "auto":
            self.pending.append(_Queued(name, f))
            return f
        entry = self._keyed(_Queued(name, f))
        if not entry.library.exists():
            try:
                self._build(_c_code(f), entry.library)
            except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
                self.record["interpreted"][name] = _first_line(error)
                return f
        else:
            self.record["cached"] += 1
        return self._load(name, entry.library, f)

    def _keyed(self, entry):
        """``entry`` with its serialised function and its library's path in the cache: the
        key is that text's hash (the same from run to run, and 2-3x cheaper than generating
        the C code, which a cached library does not need), with the compiler's."""
        entry.text = entry.function.serialize()
        key = hashlib.sha256("\n".join((entry.text, self.compiler, " ".join(FLAGS),
                                         ca.__version__, platform.machine())).encode())
        suffix = sysconfig.get_config_var("SHLIB_SUFFIX") or ".so"
        entry.library = self.directory / f"{entry.name}_{key.hexdigest()[:20]}{suffix}"
        return entry

    def _load(self, name, library, f):
        """The library's function, or ``f`` where it does not load (removed: a damaged
        library is built again next time)."""
        try:
            return ca.external(name, str(library))
        except RuntimeError as error:
            library.unlink(missing_ok=True)
            self.record["interpreted"][name] = _first_line(error)
            return f

    def attach(self, f: ca.Function, fast: FastFunction) -> None:
        """Have ``fast`` (a ``FastFunction`` of ``f``) take ``f``'s compiled version once it
        is found in the cache (:meth:`look_up`) or built (:meth:`poll`).

        Parameters
        ----------
        f : casadi.Function
            A function given to :meth:`compile` ("auto" mode).
        fast : FastFunction
            Its fast caller.

        Examples
        --------
        >>> import tempfile
        >>> import casadi as ca
        >>> x = ca.SX.sym("x")
        >>> f = ca.Function("jit_doc_queued", [x], [ca.sin(x)])
        >>> jit = Jit(directory=tempfile.mkdtemp(), mode="auto")
        >>> jit.compile(f) is f                        # queued (or interpreted: no compiler)
        True
        >>> from nlpdyn.fastcall import FastFunction
        >>> fast = FastFunction(f)
        >>> jit.attach(f, fast)
        >>> all(fast in e.targets for e in jit.pending)
        True
        """
        for entry in self.pending:
            if entry.function is f:
                entry.targets.append(fast)

    def look_up(self) -> None:
        """The queued functions found in the cache taken by their ``FastFunction``; the
        others stay queued, with their key.

        Examples
        --------
        >>> import tempfile
        >>> import casadi as ca
        >>> x = ca.SX.sym("x")
        >>> f = ca.Function("jit_doc_queued", [x], [ca.sin(x)])
        >>> jit = Jit(directory=tempfile.mkdtemp(), mode="auto")
        >>> jit.compile(f) is f                        # queued (or interpreted: no compiler)
        True
        >>> jit.look_up()                      # an empty cache: still queued
        >>> jit.record["cached"]
        0
        """
        for entry in [e for e in self.pending if e.library is None]:
            self._keyed(entry)
            if entry.library.exists():
                self.pending.remove(entry)
                compiled = self._load(entry.name, entry.library, None)
                if compiled is not None:
                    self.record["cached"] += 1
                    for fast in entry.targets:
                        fast.swap(compiled)

    def build_seconds(self) -> float:
        """The queued builds' estimated time (s, ``BUILD_SECONDS``; after :meth:`look_up`).

        Returns
        -------
        float

        Examples
        --------
        >>> import tempfile
        >>> import casadi as ca
        >>> x = ca.SX.sym("x")
        >>> f = ca.Function("jit_doc_queued", [x], [ca.sin(x)])
        >>> jit = Jit(directory=tempfile.mkdtemp(), mode="auto")
        >>> jit.compile(f) is f                        # queued (or interpreted: no compiler)
        True
        >>> jit.look_up()
        >>> jit.build_seconds() in (0.0,) or jit.build_seconds() > BUILD_SECONDS[0]
        True
        """
        return sum(BUILD_SECONDS[0] + BUILD_SECONDS[1] * len(entry.text or "")
                   for entry in self.pending)

    @property
    def building(self) -> list[str]:
        """The functions being built (:meth:`start`)."""
        return [entry.name for entry in self._building]

    def start(self) -> None:
        """Build the queued functions (after :meth:`look_up`) in a process of its own, which
        finishes them into the cache even if this one ends first; the run goes on
        interpreted meanwhile (:meth:`poll`).

        Examples
        --------
        With nothing queued there is nothing to start, and no build to end:

        >>> jit = Jit(mode="auto")
        >>> jit.start()
        >>> jit.building, jit.poll()
        ([], False)
        """
        queued = [entry for entry in self.pending if entry.library is not None]
        if self._process is not None or not queued:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        _remove_stale_builds(self.directory)
        self._work = Path(tempfile.mkdtemp(prefix="build-", dir=self.directory))
        jobs = []
        for k, entry in enumerate(queued):
            source = self._work / f"{k}.casadi"
            source.write_text(entry.text)
            jobs += [entry.name, str(source), str(entry.library)]
            entry.function = entry.text = None      # on disk now: not kept twice
        self._log = open(self._work / "log", "w")
        self._started = time.perf_counter()
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), self.compiler, *jobs],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self._building = queued
        self.pending = [entry for entry in self.pending if entry not in queued]

    def poll(self) -> bool:
        """Whether the build started by :meth:`start` has ended; if so, each ``FastFunction``
        attached to a built function takes it, and the others stay interpreted with the
        reason.

        Returns
        -------
        bool

        Examples
        --------
        >>> Jit(mode="auto").poll()            # no build started
        False
        """
        if self._process is None or self._process.poll() is None:
            return False
        self._log.close()
        said = {}                   # the build's "name: reason" lines (``_build_queued``)
        for line in (self._work / "log").read_text().splitlines():
            name, _, why = line.partition(": ")
            said.setdefault(name, why)
        for entry in self._building:
            compiled = (self._load(entry.name, entry.library, None)
                        if entry.library.exists() else None)
            if compiled is None:
                self.record["interpreted"].setdefault(
                    entry.name, said.get(entry.name) or f"not built (the build process "
                                                        f"ended {self._process.returncode})")
                continue
            self.record["compiled"] += 1
            for fast in entry.targets:
                fast.swap(compiled)
        self.record["seconds"] += time.perf_counter() - self._started
        shutil.rmtree(self._work, ignore_errors=True)
        self._building, self._process = [], None
        return True

    def _build(self, source: str, library: Path):
        """Compile ``source`` into ``library``, atomically (another process may build the
        same one at the same time)."""
        tic = time.perf_counter()
        library.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=library.parent) as work:
            c_file, built = Path(work) / "f.c", Path(work) / library.name
            c_file.write_text(source)
            out = subprocess.run([self.compiler, *FLAGS, str(c_file), "-o", str(built), "-lm"],
                                 capture_output=True, text=True)
            if out.returncode:
                raise subprocess.CalledProcessError(
                    out.returncode, self.compiler, stderr=out.stderr,
                    output=f"{self.compiler} failed: {out.stderr.strip()[-300:]}")
            os.replace(built, library)
        self.record["compiled"] += 1
        self.record["seconds"] += time.perf_counter() - tic


class _Queued:
    """A function "auto" mode has not compiled yet: its name, the function (until its build
    starts), its serialised text and its library (once keyed), and the ``FastFunction``
    objects that take the compiled version."""

    def __init__(self, name, function):
        self.name, self.function, self.text, self.library = name, function, None, None
        self.targets = []


def _remove_stale_builds(directory: Path, age=3600.0) -> None:
    """Build folders older than ``age`` s: left by a process that ended before its build."""
    for work in directory.glob("build-*"):
        try:
            if time.time() - work.stat().st_mtime > age:
                shutil.rmtree(work, ignore_errors=True)
        except OSError:
            pass


def _c_code(f: ca.Function) -> str:
    generator = ca.CodeGenerator(f"{f.name()}.c", {"with_header": False})
    generator.add(f)
    return generator.dump()


def _first_line(error) -> str:
    """The line of an error's text that says what went wrong (a compiler's first "error")."""
    text = getattr(error, "output", None) or str(error)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [type(error).__name__])[0]


def _build_queued(compiler, jobs) -> int:
    """The separate build process of :meth:`Jit.start`: each (name, serialised function,
    library) of ``jobs`` built into its library."""
    builder = Jit(compiler, Path(jobs[2]).parent)
    failed = 0
    for name, source, library in zip(jobs[::3], jobs[1::3], jobs[2::3]):
        try:
            f = ca.Function.deserialize(Path(source).read_text())
            builder._build(_c_code(f), Path(library))
        except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
            print(f"{name}: {_first_line(error)}", flush=True)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_build_queued(sys.argv[1], sys.argv[2:]))
