"""The dependency direction of docs/architecture.md, checked on the source.

* the core model (``chipsched`` minus its face) imports none of formulations, heuristics,
  instances or solvers — not even inside a function;
* formulations and heuristics never import each other, nor the face;
* instances and solvers do not import the face;
* no import cycle between modules (function-level imports included; imports under
  ``if TYPE_CHECKING:`` are annotations, not dependencies);
* ``import chipsched`` loads no solver backend.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: import name of each top-level folder (setup.py maps them into ``chipsched``)
FOLDERS = {"chipsched": "chipsched", "formulations": "chipsched.formulations",
           "heuristics": "chipsched.heuristics", "solvers": "chipsched.solvers",
           "instances": "chipsched.instances"}
#: the face: knows every method by name; may import anything
FACE = {"chipsched", "chipsched.api", "chipsched.registry", "chipsched.chains",
        "chipsched.cli", "chipsched.bench", "chipsched.demo", "chipsched.library",
        "chipsched.report",
        "chipsched.tables"}
BACKENDS = ("ortools", "pyomo", "highspy")


def _modules() -> dict[str, Path]:
    out = {}
    for folder, pkg in FOLDERS.items():
        for p in (ROOT / folder).rglob("*.py"):
            parts = list(p.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = p
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("chipsched"):
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            out.update(subs if subs else [target])
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("chipsched"))
    out.discard(name)
    return out


def _layer(mod: str) -> str:
    if mod in FACE:
        return "face"
    for layer in ("formulations", "heuristics", "solvers", "instances"):
        if mod.startswith(f"chipsched.{layer}"):
            return layer
    return "core"


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    for name, path in modules.items():
        g.add_node(name)
        for dep in _imports(name, path, modules):
            g.add_edge(name, dep)
    return g


ALLOWED = {
    "core": {"core"},
    "solvers": {"core", "solvers"},
    "instances": {"core", "instances"},
    "formulations": {"core", "solvers", "formulations"},
    "heuristics": {"core", "solvers", "heuristics"},
    "face": {"core", "solvers", "instances", "formulations", "heuristics", "face"},
}


def test_every_module_imports_only_downward(graph):
    bad = [(a, b) for a, b in graph.edges if _layer(b) not in ALLOWED[_layer(a)]]
    assert not bad, "\n".join(f"{a} ({_layer(a)}) imports {b} ({_layer(b)})" for a, b in bad)


def test_no_import_cycles(graph):
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, cycles[:5]


def test_import_chipsched_loads_no_solver_backend():
    code = ("import sys, chipsched; chipsched.make_instance('tile_groups', 'tiny'); "
            f"print(sorted(m for m in sys.modules if m.startswith({BACKENDS!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_heuristic_runs_without_loading_a_solver_backend():
    code = ("import sys, chipsched; i = chipsched.make_instance('tile_groups', 'tiny'); "
            "chipsched.solve('tile_groups', i, 'sa', beta=1); "
            f"print(sorted(m for m in sys.modules if m.startswith({BACKENDS!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_no_package_attribute_is_shadowed_by_a_submodule():
    """A package whose ``__init__`` defines ``cpsat`` and also has a submodule
    ``cpsat.py`` loses the function the first time the submodule is imported (Python
    binds the submodule to the package attribute): a method vanishes from the registry."""
    clashes = []
    for name, path in _modules().items():
        if path.name != "__init__.py":
            continue
        subs = {p.stem for p in path.parent.glob("*.py") if p.name != "__init__.py"} | \
            {p.name for p in path.parent.iterdir() if (p / "__init__.py").is_file()}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
        defined |= {t.id for n in tree.body if isinstance(n, ast.Assign)
                    for t in n.targets if isinstance(t, ast.Name)}
        clashes += [f"{name}.{d}" for d in sorted(defined & subs)]
    assert not clashes, clashes
