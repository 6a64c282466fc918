"""Each package names what callers may import (``__all__``), and the library API is pinned, as httpx pins its own.

A caller outside a package (production code: ``kserve_compile/``, ``server/``, ``router/``; tests may reach inside)
imports from it only a module or a name its ``__init__`` lists in ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from tests.architecture.imports import module_names

ROOT = Path(__file__).resolve().parents[2]
MODULES = {**module_names(ROOT / "kserve_compile"), **module_names(ROOT / "server"), **module_names(ROOT / "router")}
PACKAGES = sorted(m for m, p in MODULES.items() if p.name == "__init__.py")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_declares_its_public_surface(package: str) -> None:
    text = MODULES[package].read_text("utf-8")
    assert "__all__" in text, f"{package}/__init__.py declares no __all__"
    module = importlib.import_module(package)
    for name in module.__all__:
        assert f"{package}.{name}" in MODULES or hasattr(module, name), (
            f"{package}.__all__ names {name!r}: no such thing"
        )


def _imports_into(package: str) -> list[tuple[str, int, str]]:
    """(importing file, line, what) for each import of ``package``'s modules or names from outside it."""
    out = []
    for module, path in MODULES.items():
        if module == package or module.startswith(package + ".") or path.suffix != ".py":
            continue
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_pkg else 0)]
                base = ".".join(anchor + ([base] if base else []))
            if base == package:
                out += [(module, node.lineno, alias.name) for alias in node.names]
            elif base.startswith(package + ".") and base.count(".") == package.count(".") + 1:
                out.append((module, node.lineno, base.rpartition(".")[2]))
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_callers_import_only_what_a_package_declares(package: str) -> None:
    public = set(importlib.import_module(package).__all__)
    private = [f"{m}:{line} imports {package}.{what}" for m, line, what in _imports_into(package) if what not in public]
    assert not private


def test_the_library_api_is_pinned() -> None:
    import kserve_compile.api as api

    assert sorted(api.__all__) == [
        "CompileError",
        "CompileOptions",
        "Document",
        "Problem",
        "Result",
        "UsageError",
        "compile",
        "isvc_status",
        "parse_text",
        "render_files",
        "render_objects",
        "render_result",
    ]
    signatures = {name: str(inspect.signature(getattr(api, name))) for name in ("render_files", "render_result")}
    assert signatures == {
        "render_files": "(paths: 'Sequence[str]', config_file: 'str | None' = None) -> 'list[dict[str, Any]]'",
        "render_result": "(paths: 'Sequence[str]', config_file: 'str | None' = None, options: 'CompileOptions | None' = None) -> 'Result'",
    }
    assert str(inspect.signature(api.compile)) == (
        "(documents: 'Sequence[Document]', options: 'CompileOptions' = CompileOptions(namespace=None, strict=False, "
        "checks=True, kube_version=None, trace=False, keep_read_inputs=False, pod_webhook='inline')) -> 'Result'"
    )
    assert str(inspect.signature(api.render_objects)) == (
        "(objects: 'Sequence[dict[str, Any]]', configmap: 'dict[str, Any] | None' = None, source: 'str' = '<cluster>')"
        " -> 'list[dict[str, Any]]'"
    )
    assert str(inspect.signature(api.isvc_status)) == (
        "(isvc: 'dict[str, Any]', configmap: 'dict[str, Any] | None' = None) -> 'dict[str, Any]'"
    )
    fields = [f for f in api.CompileOptions.__dataclass_fields__]
    assert fields == ["namespace", "strict", "checks", "kube_version", "trace", "keep_read_inputs", "pod_webhook"]
