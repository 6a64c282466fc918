"""The library surface: render files or already-parsed manifests, and compute the status KServe would report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import CompileError, Problem
from .parse import Document, parse_paths, parse_text
from .pipeline import Result, compile_documents


def render_files(paths: Sequence[str], config_file: str | None = None) -> list[dict[str, Any]]:
    """Rendered objects, in apply order, for files, directories or ``-``; raises CompileError / UsageError."""
    return render_result(paths, config_file).objects


def render_result(paths: Sequence[str], config_file: str | None = None) -> Result:
    docs = parse_paths(paths)
    if config_file is not None:
        docs = [d for d in docs if not _is_configmap(d)] + _config_documents(config_file)
    return compile_documents(docs)


def _is_configmap(doc: Document) -> bool:
    return doc.api_version == "v1" and doc.kind == "ConfigMap"


def _config_documents(path: str) -> list[Document]:
    docs = [d for d in parse_paths([path])]
    maps = [d for d in docs if _is_configmap(d)]
    if not maps:
        raise CompileError([Problem("--config file holds no inferenceservice-config ConfigMap", file=path)])
    return maps


def render_objects(objects: Sequence[dict[str, Any]], configmap: dict[str, Any] | None = None, source: str = "<cluster>") -> list[dict[str, Any]]:
    """The same from parsed manifests (e.g. read from a cluster); ``configmap`` replaces any ConfigMap among them."""
    docs = [Document(obj, source, i) for i, obj in enumerate(objects) if not (configmap is not None and obj.get("kind") == "ConfigMap")]
    if configmap is not None:
        docs.append(Document(configmap, source, len(docs)))
    return compile_documents(docs).objects


def isvc_status(isvc: dict[str, Any], configmap: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"url", "address": {"url"}, "components": {...}}`` as KServe reports them for this isvc."""
    from .status import status_of_documents

    docs = [Document(isvc, "<cluster>", 0)]
    if configmap is not None:
        docs.append(Document(configmap, "<cluster>", 1))
    return status_of_documents(docs)[0][1]


__all__ = ["render_files", "render_objects", "render_result", "isvc_status", "parse_text"]
