"""The package's shape: its import graph and its rule tables.

* No import cycle inside `minijax` (imports at module level, which run at import
  time: a cycle makes what works depend on which module is imported first).
* Layers depend one way: ir <- transforms <- backends <- the public API (the front
  end and the public modules) <- repl/cli. No import of a higher layer from a lower
  one, at module level or inside a function.
* Every rule table is the same whatever order minijax's modules are imported in,
  each order in a fresh interpreter.

The graph is read from the source with `ast`, so a test failure names the file and
line of the offending import. docs/design.md explains the layers.
"""
import ast
import json
import pathlib
import subprocess
import sys

import pytest

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent.parent / "minijax"

# Lowest first. A module belongs to the first layer whose prefix it has; the public
# modules at the package root (and numpy, divergences) are the public-API layer.
LAYERS = [
    ("ir", ("minijax.ir",)),
    ("transforms", ("minijax.transforms",)),
    ("backends", ("minijax.backends",)),
    ("repl/cli", ("minijax.repl", "minijax.cli", "minijax.__main__")),
    ("public API", ("minijax",)),
]
LAYER_RANK = {"ir": 0, "transforms": 1, "backends": 2, "public API": 3, "repl/cli": 4}


def layer_of(module: str) -> str:
    for name, prefixes in LAYERS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return name
    raise AssertionError(f"{module} is in no layer")


def _modules() -> dict:
    """module name -> (path, is_package) for every module of the package."""
    found = {}
    for path in PACKAGE_ROOT.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _targets(module: str, is_package: bool, node) -> list:
    """The minijax modules an import statement imports. `from pkg import sub` imports
    the submodule `pkg.sub` (the package itself is already being imported)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level:
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        submodules = [f"{source}.{a.name}" for a in node.names
                      if f"{source}.{a.name}" in MODULES]
        names = submodules if len(submodules) == len(node.names) else [source] + submodules
    return [n for n in names if n.split(".")[0] == "minijax"]


def _imports():
    """[(importer, imported, line, at_module_level)] for every import in the package."""
    edges = []
    for module, (path, is_package) in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target in _targets(module, is_package, child):
                        edges.append((module, target, child.lineno, not in_function))
                else:
                    visit(child, in_function or isinstance(
                        child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
        visit(tree, False)
    return edges


IMPORTS = _imports()


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(old_limit)
    return found


def test_graph_reader_sees_the_imports():
    # The checks below are only as good as the graph: it must contain known edges.
    module_level = {(a, b) for a, b, _, top in IMPORTS if top}
    assert ("minijax.transforms.jvp", "minijax.transforms.ad_util") in module_level
    assert ("minijax.backends", "minijax.backends.xla") in module_level
    assert ("minijax.frontend.tracing", "minijax.ir.staging") in module_level
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    graph = {}
    for importer, imported, _, top in IMPORTS:
        if top and imported in MODULES and imported != importer:
            graph.setdefault(importer, set()).add(imported)
    cycles = _cycles(graph)
    assert not cycles, "import cycles among minijax modules:\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_layers_depend_one_way():
    upward = []
    for importer, imported, line, _ in IMPORTS:
        if imported not in MODULES:
            continue
        low, high = layer_of(importer), layer_of(imported)
        if LAYER_RANK[high] > LAYER_RANK[low]:
            path = MODULES[importer][0].relative_to(PACKAGE_ROOT.parent)
            upward.append(f"{path}:{line}: {importer} ({low}) imports {imported} ({high})")
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


# -- rule tables do not depend on import order -------------------------------------------

_DESCRIBE_TABLES = r"""
import functools, importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
import minijax
from minijax.ir.registry import rule_tables, effect_rules, generic_paths
from minijax.ir.trace import eager_impls

def describe(fn):
    if isinstance(fn, functools.partial):
        return ["partial", describe(fn.func),
                [describe(a) if callable(a) else repr(a) for a in fn.args]]
    wrapped = getattr(fn, "__wrapped__", None)
    inner = [describe(wrapped)] if wrapped is not None else []
    return [getattr(fn, "__module__", None), getattr(fn, "__qualname__", type(fn).__name__)] + inner

tables = dict(rule_tables, effect=effect_rules, eager=eager_impls)
print(json.dumps({
    "order": list(rule_tables),
    "generic": list(generic_paths),
    "tables": {name: {p.name: describe(rule) for p, rule in table.items()}
               for name, table in tables.items()},
}, sort_keys=True))
"""

IMPORT_ORDERS = [
    ["minijax"],
    ["minijax.backends.xla", "minijax.numpy"],
    ["minijax.transforms.vmap_rules", "minijax.transforms.jvp"],
    ["minijax.frontend.refs", "minijax.lax"],
    ["minijax.backends.eager_ref_runtime", "minijax.transforms.remat", "minijax.ref"],
    ["minijax.ir.control_flow_primitives", "minijax.frontend.control_flow"],
    ["minijax.repl", "minijax.divergences"],
    sorted(m for m in MODULES if not m.endswith("__main__"))[::-1],
]


def _tables_after(order) -> dict:
    result = subprocess.run([sys.executable, "-c", _DESCRIBE_TABLES, *order],
                            capture_output=True, text=True, timeout=300,
                            env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def tables_importing_minijax_first():
    return _tables_after(IMPORT_ORDERS[0])


@pytest.mark.parametrize("order", IMPORT_ORDERS[1:], ids=lambda o: o[0])
def test_rule_tables_do_not_depend_on_import_order(order, tables_importing_minijax_first):
    tables = _tables_after(order)
    assert tables == tables_importing_minijax_first


def test_rule_tables_are_described(tables_importing_minijax_first):
    # The comparison above means something only if the description holds the rules.
    tables = tables_importing_minijax_first["tables"]
    assert tables["jvp"]["sin"] and tables["eager"]["cond"] and tables["xla"]["add"]
    assert tables_importing_minijax_first["order"][:3] == ["type", "jvp", "partial_eval"]
