"""The tree reads as the pipeline, and the imports keep it so.

    base (errors, constants, datacopy, gcpause, embedded, durations, provenance/, kube/, gotemplate/)
      ← inputs/ ← checks/      ← plan/ ← render/      emit/ (on base only)
      ← features: graph/, llmisvc/, localmodel/, migrate/ (on any stage, and on one another)
      ← the driver (driver, krm, api) ← the edges (cli/, apply/)

Each area may import only the areas the table names (its own included). On top of the table, the rules the issue
states in words, each a test of its own so that a failure says which one broke: ``plan`` never imports ``render``;
``inputs`` never imports a feature; no feature imports the driver; no import cycle in ``kserve_compile/``,
``server/`` or ``router/`` (package ``__init__`` files and lazy imports included).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.imports import Edge, find_cycle, import_edges, import_graph

ROOT = Path(__file__).resolve().parents[2]
PKG = "kserve_compile"

BASE = "base"
FEATURES = ("graph", "llmisvc", "localmodel", "migrate")
DRIVER = "driver"
EDGES = ("cli", "apply")

# area → the areas it may import (itself always)
ALLOWED: dict[str, set[str]] = {
    BASE: set(),
    "inputs": {BASE},
    "checks": {BASE, "inputs"},
    "plan": {BASE, "inputs"},
    "render": {BASE, "inputs", "plan"},
    "emit": {BASE},
    **{f: {BASE, "inputs", "checks", "plan", "render", "emit", *FEATURES} for f in FEATURES},
    DRIVER: {BASE, "inputs", "checks", "plan", "render", "emit", *FEATURES},
    **{e: {BASE, "inputs", "checks", "plan", "render", "emit", *FEATURES, DRIVER, *EDGES} for e in EDGES},
}
BASE_MODULES = ("errors", "constants", "datacopy", "_datacopy_c", "gcpause", "embedded", "durations")
BASE_PACKAGES = ("provenance", "kube", "gotemplate")
DRIVER_MODULES = ("driver", "krm", "api")
OUTSIDE = {"router": "router", "server": "server"}  # the data plane: graph run serves a graph with the router


def area(module: str) -> str:
    parts = module.split(".")
    if parts[0] != PKG:
        return OUTSIDE[parts[0]]
    if len(parts) == 1 or parts[1] in BASE_MODULES or parts[1] in BASE_PACKAGES:
        return BASE
    if parts[1] in DRIVER_MODULES:
        return DRIVER
    return parts[1]


EDGES_BY_MODULE = import_edges(ROOT / PKG, ROOT / "router", ROOT / "server")


def _violations(rule) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        f"{module}:{edge.line} imports {edge.target}"
        for module, edges in sorted(EDGES_BY_MODULE.items())
        if module.startswith(PKG)
        for edge in edges
        if rule(module, edge)
    ]


def test_every_area_is_in_the_table() -> None:
    areas = {area(m) for m in EDGES_BY_MODULE if m.startswith(PKG)}
    assert areas <= set(ALLOWED), sorted(areas - set(ALLOWED))


def test_each_area_imports_only_what_the_table_allows() -> None:
    def breaks(module: str, edge: Edge) -> bool:
        mine, theirs = area(module), area(edge.target)
        if theirs in OUTSIDE.values():
            return module != "kserve_compile.graph.run" or theirs != "router"
        return theirs != mine and theirs not in ALLOWED[mine]

    assert not _violations(breaks)


def test_plan_never_imports_render() -> None:
    assert not _violations(lambda m, e: area(m) == "plan" and area(e.target) == "render")


def test_inputs_never_import_a_feature() -> None:
    assert not _violations(lambda m, e: area(m) == "inputs" and area(e.target) in FEATURES)


def test_no_feature_imports_the_driver_or_a_command() -> None:
    assert not _violations(lambda m, e: area(m) in FEATURES and area(e.target) in (DRIVER, *EDGES))


@pytest.mark.parametrize("package", ["kserve_compile", "server", "router"])
def test_no_import_cycle(package: str) -> None:
    graph = import_graph(ROOT / package)
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle in {package}/: " + " -> ".join(cycle or [])


def test_the_graph_sees_lazy_imports_and_package_inits() -> None:
    """The rules read the imports a reader of the code sees: ``__init__`` files and imports inside functions."""
    driver = {e.target for e in EDGES_BY_MODULE["kserve_compile.driver"]}
    assert "kserve_compile.llmisvc.services" in driver  # imported inside a method
    assert "kserve_compile.graph" in driver  # a package __init__ (KINDS, collect)
    assert any(e.typing_only for e in EDGES_BY_MODULE["kserve_compile.driver"])


def test_the_top_of_the_package_holds_few_modules() -> None:
    top = sorted(p.stem for p in (ROOT / PKG).glob("*.py") if p.stem != "__init__")
    assert len(top) <= 10, top
