"""The layering docs/layout.md states, kept: the imports between the package's modules (at any
depth of the code: a function-level import counts) form no circle, go one way between the layers,
and name no private name of another module."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "contactfmu"


def modules():
    """{dotted module name: path} of every module of the package."""
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = modules()


def resolve(module, node):
    """The package modules an import node of `module` names (a `from X import y` names X.y where
    that is a module, else X)."""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != PACKAGE:
        return []
    named = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return named or [target]


def imports(module):
    """[(imported module, names imported from it, line)] of `module`."""
    tree = ast.parse(MODULES[module].read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in resolve(module, node):
                names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
                out.append((target, names, node.lineno))
    return out


GRAPH = {m: sorted({t for t, _, _ in imports(m) if t in MODULES and t != m}) for m in MODULES}


def layer(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_imports_form_no_circle():
    """Depth-first search for a back edge; the circle found is named."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in GRAPH[m]:
            if t.startswith(m + ".") or m.startswith(t + "."):
                continue  # a package and its own modules
            if state.get(t) == "open":
                circle = stack[stack.index(t) :] + [t]
                pytest.fail("import circle: " + " -> ".join(circle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in MODULES:
        if m not in state:
            visit(m)


# layer -> the layers it may import (docs/layout.md, "Imports go one way")
ALLOWED = {
    "mechanics": {"mechanics"},
    "fmi": {"fmi"},
    "conventions": set(),
    "cosim": {"cosim", "conventions", "fmi.terminals"},
}


@pytest.mark.parametrize("source", sorted(ALLOWED))
def test_each_layer_imports_only_what_the_layout_allows(source):
    allowed = ALLOWED[source]
    bad = [
        (m, t)
        for m in MODULES
        if layer(m) == source
        for t in GRAPH[m]
        if t != PACKAGE and layer(t) not in allowed and ".".join(t.split(".")[1:3]) not in allowed
    ]
    assert not bad, bad


def test_the_components_import_no_layer_above_them():
    """components use mechanics, fmi and conventions; a component's spec takes its experiment's
    inputs from components/experiment_inputs.py, not from the cross-check that reads it."""
    bad = [
        (m, t)
        for m in MODULES
        if layer(m) == "components"
        for t in GRAPH[m]
        if t != PACKAGE and layer(t) not in {"components", "mechanics", "fmi", "conventions"}
    ]
    assert not bad, bad


def test_no_module_imports_a_private_name_of_another():
    bad = [
        (m, t, name, line)
        for m in MODULES
        for t, names, line in imports(m)
        for name in names
        if name.startswith("_") and not name.startswith("__") and t != m
    ]
    assert not bad, bad


def test_relative_imports_resolve_to_the_modules_they_name():
    tree = ast.parse("from ..mechanics.motion import _bits\nfrom . import build")
    nodes = list(ast.walk(tree))
    first = next(n for n in nodes if isinstance(n, ast.ImportFrom) and n.level == 2)
    second = next(n for n in nodes if isinstance(n, ast.ImportFrom) and n.level == 1)
    assert resolve("contactfmu.components.translational", first) == ["contactfmu.mechanics.motion"]
    assert resolve("contactfmu.validation", second) == ["contactfmu.build"]


def test_no_test_module_imports_another():
    """Tests share helpers through helper modules (tests/*.py not named test_*), never through
    another test module."""
    tests = Path(__file__).resolve().parent
    names = {p.stem for p in tests.rglob("test_*.py")}
    bad = []
    for path in tests.rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module in names:
                bad.append((path.name, node.module))
            if isinstance(node, ast.Import):
                bad += [(path.name, a.name) for a in node.names if a.name in names]
    assert not bad, bad
