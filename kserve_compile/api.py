"""The library surface: render files or already-parsed manifests, and compute the status KServe would report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .driver import Result, compile_documents
from .inputs.context import cluster_inputs, read_inputs
from .inputs.parse import parse_text
from .run_options import RunOptions


def render_files(paths: Sequence[str], config_file: str | None = None) -> list[dict[str, Any]]:
    """Rendered objects, in apply order, for files, directories or ``-``; raises CompileError / UsageError."""
    return render_result(paths, config_file).objects


def render_result(paths: Sequence[str], config_file: str | None = None, options: RunOptions | None = None) -> Result:
    """As ``kserve-compile render``: objects that are not KServe inputs pass through (``RunOptions(strict=True)``
    refuses them), ``RunOptions(namespace=...)`` as ``-n``."""
    from .run_options import render_documents

    return render_documents(read_inputs(paths, config_file), options or RunOptions())


def render_objects(
    objects: Sequence[dict[str, Any]], configmap: dict[str, Any] | None = None, source: str = "<cluster>"
) -> list[dict[str, Any]]:
    """The same from parsed manifests (e.g. read from a cluster); ``configmap`` replaces any inferenceservice-config among them."""
    return compile_documents(cluster_inputs(objects, configmap, source)).objects


def isvc_status(isvc: dict[str, Any], configmap: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"url", "address": {"url"}, "components": {...}}`` as KServe reports them for this isvc."""
    from .plan.status import status_of_documents

    return status_of_documents(cluster_inputs([isvc], configmap, "<cluster>"))[0][1]


__all__ = ["render_files", "render_objects", "render_result", "isvc_status", "parse_text"]
