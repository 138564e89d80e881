"""The import graph of the hipfer package runs one way (docs/architecture.md, "Layers"):
namespace topics -> ops -> prims -> backends -> kernels, with the Tensor below the
namespace topics. Read from the source (module-level and function-level imports alike),
so an import moved into a function to dodge a circle still counts.

- no circle anywhere in the package (a package's own ``__init__`` counts as a module:
  ``import hipfer`` from a namespace topic closes a circle through it);
- ``hipfer/_tensor.py`` imports only the modules below the namespace (LOW);
- no backend, kernel or prims module imports the namespace, and neither do the lower
  parts of a hipfer.nn topic folder (``hipfer/nn/_<topic>/{ops,reference,gpu,kernels}.py``:
  PARTS), which import only their own layer's modules (their public functions, the
  folder's ``__init__.py``, sit in the namespace).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "hipfer"

#: hipfer's own modules below the namespace topics: what the Tensor may import
LOW = {"hipfer._dtypes", "hipfer._device", "hipfer._naming", "hipfer._constants",
       "hipfer._kcache", "hipfer._warm", "hipfer._launch"}


#: the lower parts of a topic folder, and what each may import besides the same part of
#: another topic: modules under these prefixes, and the parts named here (of any topic)
PARTS = {
    "ops": ("hipfer.prims",),
    "reference": ("hipfer.prims", "hipfer.backends.numpy", "ops"),
    "gpu": ("hipfer.prims", "hipfer.backends.cupy", "hipfer.kernels", "ops", "kernels"),
    "kernels": ("hipfer.kernels",),
}


def topic_part(mod: str):
    """The part (a PARTS key) when mod is hipfer.nn._<topic>.<part>, else None."""
    p = mod.split(".")
    if len(p) == 4 and p[:2] == ["hipfer", "nn"] and p[2].startswith("_") and p[3] in PARTS:
        return p[3]
    return None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(mod: str, path: Path, known: set) -> set:
    """The hipfer modules ``mod`` imports (each ``from X import y`` counts as X.y when
    X.y is a module, else X)."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            src = _resolve(mod, is_pkg, node)
            names = [f"{src}.{a.name}" if f"{src}.{a.name}" in known else src
                     for a in node.names]
        else:
            continue
        for n in names:
            if n.split(".")[0] != "hipfer":
                continue
            while n not in known and "." in n:  # hipfer.x.y where y is not a module
                n = n.rsplit(".", 1)[0]
            if n in known and n != mod:
                out.add(n)
    return out


@pytest.fixture(scope="module")
def graph() -> dict:
    mods = _modules()
    known = set(mods) | LOW
    return {m: imports_of(m, p, known) for m, p in mods.items()}


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _edges_within(graph, comp):
    return [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]


def test_no_import_circles(graph):
    circles = _cycles(graph)
    assert not circles, "import circles:\n" + "\n".join(
        f"  {c}: " + "; ".join(_edges_within(graph, c)) for c in circles)


def test_the_tensor_imports_nothing_above_it(graph):
    above = sorted(graph["hipfer._tensor"] - LOW - {"hipfer.prims.registry"})
    assert not above, f"hipfer/_tensor.py imports {above}"


def _below_namespace(mod: str) -> bool:
    return mod.startswith(("hipfer.backends", "hipfer.kernels", "hipfer.prims")) \
        or topic_part(mod) is not None


def test_lower_layers_do_not_import_the_namespace(graph):
    bad, astray = [], []
    for m, deps in graph.items():
        if _below_namespace(m):
            bad += [f"{m} -> {d}" for d in sorted(deps)
                    if not _below_namespace(d) and d not in LOW]
        part = topic_part(m)
        if part:
            allowed = PARTS[part]
            astray += [f"{m} ({part}) -> {d}" for d in sorted(deps)
                       if d not in LOW and topic_part(d) not in (part,) + allowed
                       and not d.startswith(tuple(a for a in allowed if "." in a))]
    assert not bad, "below the namespace, imports of it:\n  " + "\n  ".join(bad)
    assert not astray, "topic parts importing outside their layer (PARTS):\n  " + \
        "\n  ".join(astray)
    assert any(topic_part(m) for m in graph), "no topic folder found under hipfer/nn"


def test_the_checker_sees_function_level_imports(tmp_path):
    (tmp_path / "hipfer").mkdir()
    a = tmp_path / "hipfer" / "a.py"
    a.write_text("def f():\n    from . import b\n    import hipfer\n")
    known = {"hipfer", "hipfer.a", "hipfer.b"}
    assert imports_of("hipfer.a", a, known) == {"hipfer", "hipfer.b"}
    assert _cycles({"x": {"y"}, "y": {"x"}, "z": {"x"}}) == [["x", "y"]]
