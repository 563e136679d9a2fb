"""The package's layout: the modules of nlpdyn import one another without a circle.

Every ``import`` and ``from ... import`` of an nlpdyn module counts, those inside functions
too (a deferred import hides a circle from the interpreter, not from a reader); imports under
``if TYPE_CHECKING:`` (type hints only, never run) do not.
"""
import ast
import graphlib
import re
from pathlib import Path

import pytest

import nlpdyn

PACKAGE = Path(nlpdyn.__file__).parent


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's ``__init__``) of every module of nlpdyn."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["nlpdyn", *path.relative_to(PACKAGE).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _nearest(name: str, modules) -> str | None:
    """The module ``name`` is, or the nearest package or module that holds it."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Module -> the nlpdyn modules it imports (itself excluded)."""
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skipped = _type_checking_nodes(tree)
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [_nearest(alias.name, modules) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(here[:len(here) - node.level + 1] if node.level else [])
                module = ".".join(filter(None, [base, node.module]))
                # ``from . import joints``: the names may be modules themselves
                targets = [f"{module}.{alias.name}" for alias in node.names
                           if f"{module}.{alias.name}" in modules]
                targets.append(_nearest(module, modules))
            graph[name].update(t for t in targets if t and t != name)
    return graph


def test_the_import_graph_is_read():
    graph = import_graph()
    assert "nlpdyn.system" in graph["nlpdyn.stepper"]
    assert "nlpdyn.joints.base" in graph["nlpdyn.joints.ideal"]


def test_no_import_cycle():
    try:
        graphlib.TopologicalSorter(import_graph()).prepare()
    except graphlib.CycleError as err:
        pytest.fail(f"nlpdyn's modules import one another in a circle: {' -> '.join(err.args[1])}")


MAP_LINE = re.compile(r"^\s*((?:\w+/)*\w+\.py)\s", re.M)


def _module_map(text: str) -> list[str]:
    """The dotted names of the modules a module map lists, in its order."""
    names = []
    for path in MAP_LINE.findall(text):
        parts = path[:-3].split("/")
        names.append(".".join(["nlpdyn", *parts]))
    return names


@pytest.mark.parametrize("where", ["nlpdyn/__init__.py", "docs/development.md"])
def test_the_module_maps_list_every_module_in_import_order(where):
    """``nlpdyn/__init__.py``'s docstring and docs/development.md list every module once,
    one line each, each below every module it imports."""
    path = PACKAGE.parent / where
    if not path.is_file():
        pytest.skip(f"an installed nlpdyn: no {where}")
    text = nlpdyn.__doc__ if where.endswith(".py") else path.read_text(encoding="utf-8")
    listed = _module_map(text[text.index("_typing.py") - 4:])
    modules = {name for name, (_, is_package) in _modules().items() if not is_package}
    assert sorted(listed) == sorted(modules), (
        f"missing: {sorted(modules - set(listed))}, not modules: {sorted(set(listed) - modules)}")
    graph, seen = import_graph(), set()
    for name in listed:
        later = {m for m in graph[name] if m in modules} - seen
        assert not later, f"{where}: {name} imports {sorted(later)}, listed below it"
        seen.add(name)
