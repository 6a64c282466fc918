"""No import cycle among the model server's modules (the graph: ``tests/architecture/imports.py``), and callers use
only the modules ``server.__all__`` declares."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.imports import find_cycle, import_graph

ROOT = Path(__file__).resolve().parents[2]


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
