"""The package layout (docs/architecture.md): every package imports alone, and imports run
one way, between layers and between modules.

A package is a folder of sympile with an __init__.py; the graph below joins two packages
when a module of one imports a module of the other. Imports at a module's top level (the
ones that run when it is imported) must form no circle between packages, and no import,
not even one inside a function, may form a circle between modules or between layers: where
a class low in the layers needs code from above (x.sum() on a TensorVariable, Variable.eval
compiling, the derivatives of Elemwise summing with tensor.reduction), the module above
binds it onto the class when it is imported (graph.utils.bind_methods).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import sympile

ROOT = Path(sympile.__file__).parent

def _module_names() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _module_names()
PACKAGES = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")


def _package(module: str) -> str:
    """The innermost package holding `module` (a package holds its own __init__); a module
    at sympile's top (config, gradient, printing) is a layer of its own."""
    parent = module.rpartition(".")[0]
    if MODULES[module].name == "__init__.py" or parent == "sympile":
        return module
    return parent


def _imports(module: str) -> list[tuple[str, bool]]:
    """(imported sympile module, at top level?) for each import in `module`."""
    tree = ast.parse(MODULES[module].read_text())
    top_level = {id(node) for node in tree.body}
    # Imports under `if TYPE_CHECKING:` are for type checkers only: they never run.
    type_checking = {id(inner) for node in tree.body if isinstance(node, ast.If)
                     and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                     for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in type_checking:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES
                     else node.module for alias in node.names]
        else:
            continue
        found += [(name, id(node) in top_level) for name in names if name in MODULES]
    return found


def _is_inside(package: str, other: str) -> bool:
    return other == package or other.startswith(package + ".")


def _edges(top_level_only: bool) -> dict[tuple[str, str], list[str]]:
    """(package, package) -> the imports that join them. A package's __init__ that
    re-exports its own subpackages is the package's public face, not a dependency of theirs,
    so imports from a package into its own subpackages are left out."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module in MODULES:
        source = _package(module)
        for imported, top_level in _imports(module):
            target = _package(imported)
            if target == source or (top_level_only and not top_level):
                continue
            if _is_inside(source, target) or (_is_inside(target, source)
                                              and MODULES[module].name == "__init__.py"):
                continue
            edges.setdefault((source, target), []).append(f"{module} imports {imported}")
    return edges


def _circles(edges) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    circles, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                circles.append(path[path.index(successor):] + [successor])
            elif successor not in state:
                visit(successor, path + [successor])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return circles


def _layer(package: str) -> str:
    """The layer a package belongs to: sympile's top-level package or module holding it."""
    return ".".join(package.split(".")[:2])


def test_top_level_imports_form_no_circle_between_packages():
    edges = _edges(top_level_only=True)
    circles = _circles(edges)
    detail = ["  ->  ".join(circle) + "\n    " + "\n    ".join(
        edges[(a, b)][0] for a, b in zip(circle, circle[1:])) for circle in circles]
    assert not circles, "import circles between packages:\n" + "\n".join(detail)


def test_the_tensor_layer_imports_nothing_above_it():
    """Not even late: T.grad and T.jacobian come from sympile/__init__.py, eval() is bound by
    compile, and Gemm's derivatives are written with dot."""
    above = ("sympile.gradient", "sympile.scan", "sympile.ifelse", "sympile.compile",
             "sympile.link")
    found = [(module, imported) for module in MODULES if module.startswith("sympile.tensor")
             for imported, _ in _imports(module) if imported.startswith(above)]
    assert not found, found


def test_the_backends_know_nothing_of_tensors():
    """link asks a Type what it needs (is_ndarray, dtype, shape), never for its class: a new
    backend's Types plug in without the linker learning about them."""
    allowed = ("sympile.config", "sympile.cache", "sympile.graph", "sympile.link")
    found = [(module, imported) for module in MODULES if module.startswith("sympile.link")
             for imported, _ in _imports(module)
             if not any(_is_inside(layer, imported) for layer in allowed)]
    assert not found, found


def test_no_import_closes_a_circle_between_layers():
    """All imports, late ones too: a layer reaches the layers below it only."""
    layer_edges: dict[tuple[str, str], list[str]] = {}
    for module in MODULES:
        for imported, _ in _imports(module):
            source, target = _layer(_package(module)), _layer(_package(imported))
            if source != target and not _is_inside(source, target):
                layer_edges.setdefault((source, target), []).append(
                    f"{module} imports {imported}")
    assert not _circles(layer_edges), _circles(layer_edges)


def _module_edges() -> dict[tuple[str, str], list[str]]:
    """(module, module) for every import, top-level or inside a function. A package's
    __init__ counts as the module it is; importing a.b.c also runs a/__init__, but that
    implicit step is Python's, not a dependency the code chose, so it is left out."""
    return {(module, imported): [f"{module} imports {imported}"] for module in MODULES
            for imported, _ in _imports(module) if imported != module}


def test_no_import_closes_a_circle_between_modules():
    """Not even an import inside a function: each module can be read knowing only the
    modules it imports."""
    circles = _circles(_module_edges())
    assert not circles, "import circles between modules:\n" + "\n".join(
        "  ->  ".join(circle) for circle in circles)


def test_the_graph_check_finds_a_circle():
    edges = {("sympile.a", "sympile.b"): ["x"], ("sympile.b", "sympile.a"): ["y"]}
    assert _circles(edges) == [["sympile.a", "sympile.b", "sympile.a"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_package_imports_alone_in_a_fresh_interpreter(package):
    result = subprocess.run([sys.executable, "-c", f"import {package}"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr



def _private_imports(module: str) -> list[str]:
    """The `_private` names `module` imports from another sympile module (dunders aside)."""
    tree = ast.parse(MODULES[module].read_text())
    return [f"{module} imports {node.module}.{alias.name}" for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 0
            and (node.module or "").startswith("sympile") and node.module != module
            for alias in node.names
            if alias.name.startswith("_") and not alias.name.startswith("__")]


def test_no_module_imports_another_modules_private_names():
    """What one module shares with another is public in the module that owns it."""
    found = [line for module in MODULES for line in _private_imports(module)]
    assert not found, "\n".join(found)


def test_the_private_import_check_finds_one(tmp_path, monkeypatch):
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from sympile.tensor.type import _hidden\n")
    monkeypatch.setitem(MODULES, "sympile.probe", module)
    assert _private_imports("sympile.probe") == [
        "sympile.probe imports sympile.tensor.type._hidden"]
