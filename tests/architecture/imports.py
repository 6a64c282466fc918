"""The import graph of a package, read from its source with ``ast``: the rules of ``test_import_rules`` run on it.

Every ``import`` is an edge (top level, in functions, under ``if TYPE_CHECKING``, in package ``__init__`` files; a
``typing_only`` flag says which were only type-checking ones). An edge goes to the most specific module an import
names: ``from server import codec`` and ``import server.codec`` lead to ``server.codec``, ``from server.config import
Options`` to ``server.config``, ``from server import X`` (a name the package ``__init__`` defines) to ``server``. The
implicit import of a parent package that Python performs first is not an edge (it cannot be avoided, and an
``__init__`` that imports nothing cannot close a cycle). C extensions (a ``.c`` file beside the modules) are modules.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Edge:
    target: str
    line: int
    typing_only: bool  # under ``if TYPE_CHECKING:``: never executed


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` (and C extension ``.c``) file under ``package_dir``."""
    names = {}
    for path in sorted([*package_dir.rglob("*.py"), *package_dir.rglob("*.c")]):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _typing_only_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def module_edges(module: str, path: Path, known: set[str]) -> list[Edge]:
    """The modules of ``known`` that ``module`` imports anywhere in its file."""
    if path.suffix != ".py":
        return []
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text("utf-8"), str(path))
    typing_only = _typing_only_nodes(tree)
    found: list[Edge] = []
    for node in ast.walk(tree):
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
                found.append(Edge(target, node.lineno, id(node) in typing_only))
    return found


def import_edges(*package_dirs: Path) -> dict[str, list[Edge]]:
    """Every module of the packages -> its edges (to modules of any of the packages)."""
    modules: dict[str, Path] = {}
    for package_dir in package_dirs:
        modules.update(module_names(package_dir))
    known = set(modules)
    return {name: module_edges(name, path, known) for name, path in modules.items()}


def import_graph(*package_dirs: Path) -> dict[str, set[str]]:
    return {name: {e.target for e in edges} for name, edges in import_edges(*package_dirs).items()}


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
