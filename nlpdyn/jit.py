"""The step's functions compiled to machine code (``StepperSettings.jit``).

CasADi generates C for a function (``casadi.CodeGenerator``), the system's C compiler builds
it into a shared library and ``casadi.external`` loads it: the same function, evaluated
without CasADi's expression interpreter. Libraries are cached on disk by a hash of the
function's serialised expression graph, the compiler, its flags and CasADi's version, so a
second run of the same model (and every sweep point with the same data) compiles nothing.
Where a function cannot be generated (a conic plugin such as qpOASES has no C code
generation) or no compiler is found, it stays interpreted and the reason is recorded;
nothing requires a compiler.

Example
-------
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
import sysconfig
import tempfile
import time
from pathlib import Path

import casadi as ca

# -O1: most of -O2's speed on CasADi's straight-line code at a third of its compile time
FLAGS = ("-O1", "-fPIC", "-shared")


def cache_dir() -> Path:
    """Where compiled libraries are kept: ``$NLPDYN_CACHE``, else ``$XDG_CACHE_HOME/nlpdyn/jit``
    (``~/.cache/nlpdyn/jit``).

    Examples
    --------
    >>> from nlpdyn.jit import cache_dir
    >>> cache_dir().name in ("jit", __import__("os").environ.get("NLPDYN_CACHE", "jit"))
    True
    """
    given = os.environ.get("NLPDYN_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "nlpdyn" / "jit"


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

    Attributes
    ----------
    record : dict
        ``compiled`` (functions built here), ``cached`` (loaded from the cache),
        ``seconds`` (compile time), ``interpreted`` (function name -> why it was not compiled).

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

    def __init__(self, compiler: str | None = None, directory=None):
        self.compiler = compiler or find_compiler()
        self.directory = Path(directory) if directory is not None else cache_dir()
        self.record = {"compiled": 0, "cached": 0, "seconds": 0.0, "interpreted": {}}

    def compile(self, f: ca.Function) -> ca.Function:
        """``f`` compiled (from the cache where it was built before), or ``f`` itself where it
        cannot be (the reason in ``record["interpreted"]``)."""
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
        # the key: the function's serialised graph (the same from run to run, and 2-3x
        # cheaper than generating its C code, which a cached library does not need)
        key = hashlib.sha256("\n".join((f.serialize(), self.compiler, " ".join(FLAGS),
                                         ca.__version__, platform.machine())).encode())
        suffix = sysconfig.get_config_var("SHLIB_SUFFIX") or ".so"
        library = self.directory / f"{name}_{key.hexdigest()[:20]}{suffix}"
        if library.exists():
            self.record["cached"] += 1
        else:
            try:
                generator = ca.CodeGenerator(f"{name}.c", {"with_header": False})
                generator.add(f)
                self._build(generator.dump(), library)
            except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
                self.record["interpreted"][name] = _first_line(error)
                return f
        try:
            return ca.external(name, str(library))
        except RuntimeError as error:       # a damaged library: built again next time
            library.unlink(missing_ok=True)
            self.record["interpreted"][name] = _first_line(error)
            return f

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


def _first_line(error) -> str:
    """The line of an error's text that says what went wrong (a compiler's first "error")."""
    text = getattr(error, "output", None) or str(error)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [type(error).__name__])[0]
