"""No import cycle among the model server's modules: every ``import`` in ``server/`` (top level, in functions, under
``if TYPE_CHECKING``, in package ``__init__`` files) is an edge, and the graph must have no cycle.

An edge goes to the most specific module an import names: ``from server import codec`` and ``import server.codec``
lead to ``server.codec``, ``from server.config import Options`` to ``server.config``, ``from server import X``
(a name the package ``__init__`` defines) to ``server``. The implicit import of a parent package that Python
performs first is not an edge (it cannot be avoided, and an ``__init__`` that imports nothing cannot close a cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package_dir`` (``__init__`` names the package)."""
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import server.proto.messages.X` -> the longest known prefix
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            following = next(stack[-1], None)
            if following is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(following) == 1:
                return path[path.index(following) :] + [following]
            elif not state.get(following):
                state[following] = 1
                path.append(following)
                stack.append(iter(sorted(graph.get(following, ()))))
    return None


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    modules = module_names(package_dir)
    return {name: imported_modules(name, path, set(modules)) for name, path in modules.items()}


def test_server_has_no_import_cycle() -> None:
    graph = import_graph(ROOT / "server")
    assert {"server", "server.main", "server.state", "server.proto.messages"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in server/: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_cycles_through_lazy_imports_and_package_inits(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.a import A\n")
    (package / "a.py").write_text("A = 1\n\ndef later():\n    from pkg.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import c\n")
    (package / "c.py").write_text("import pkg.sub.b as b\n")
    graph = import_graph(package)
    assert graph["pkg"] == {"pkg.a"} and graph["pkg.a"] == {"pkg.sub.b"}
    assert find_cycle(graph) == ["pkg.sub.b", "pkg.c", "pkg.sub.b"]
    (package / "c.py").write_text("from pkg import A\n")  # a name of the package __init__: an edge to `pkg`
    cycle = find_cycle(import_graph(package))
    assert cycle == ["pkg", "pkg.a", "pkg.sub.b", "pkg.c", "pkg"]
    (package / "c.py").write_text("import json\n")
    assert find_cycle(import_graph(package)) is None


def test_callers_import_only_the_public_modules() -> None:
    """Whatever tests and benchmarks import of the server is a module that ``server.__all__`` declares."""
    import server

    public = set(server.__all__)
    assert {path.stem for path in (ROOT / "server").glob("*.py")} | {"proto"} >= public
    used: dict[str, str] = {}
    for path in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] if node.module != "server" else [f"server.{a.name}" for a in node.names]
            for name in names:
                head, _, rest = name.partition(".")
                if head == "server" and rest:
                    used[rest.split(".")[0]] = str(path.relative_to(ROOT))
    assert {"config", "main", "state"} <= set(used)
    assert not set(used) - public, {name: used[name] for name in set(used) - public}
