"""The library surface: compile files or already-parsed manifests, and compute the status KServe would report.

Everything here goes through the one driver (:func:`kserve_compile.driver.compile`), as every command does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .driver import CompileOptions, Result, compile
from .errors import CompileError, Problem, UsageError
from .inputs.gather import cluster_inputs, read_inputs
from .inputs.parse import Document, parse_text

# What the daemon compiles: live objects, which the API server has already checked.
CLUSTER_OPTIONS = CompileOptions(checks=False)


def render_files(paths: Sequence[str], config_file: str | None = None) -> list[dict[str, Any]]:
    """Rendered objects, in apply order, for files, directories or ``-``; raises CompileError / UsageError."""
    return render_result(paths, config_file).objects


def render_result(
    paths: Sequence[str], config_file: str | None = None, options: CompileOptions | None = None
) -> Result:
    """As ``kserve-compile render``: objects that are not KServe inputs pass through (``CompileOptions(strict=True)``
    refuses them), ``CompileOptions(namespace=...)`` as ``-n``."""
    return compile(read_inputs(paths, config_file), options or CompileOptions())


def render_objects(
    objects: Sequence[dict[str, Any]], configmap: dict[str, Any] | None = None, source: str = "<cluster>"
) -> list[dict[str, Any]]:
    """The same from live objects (e.g. read from a cluster); ``configmap`` replaces any inferenceservice-config
    among them. The input checks the API server made on them are not made again."""
    return compile(cluster_inputs(objects, configmap, source), CLUSTER_OPTIONS).objects


def isvc_status(isvc: dict[str, Any], configmap: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"url", "address": {"url"}, "components": {...}}`` as KServe reports them for this isvc."""
    return compile(cluster_inputs([isvc], configmap, "<cluster>"), CLUSTER_OPTIONS).status_rows()[0][1]


__all__ = [
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
