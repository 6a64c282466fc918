"""KServe's InferenceGraph router (``cmd/router`` in kserve/kserve) as a Python service.

``python -m router --graph-json '<InferenceGraphSpec JSON>'`` serves a graph as KServe's router does: the same
routing semantics, status codes, error bodies and Go JSON bytes. Modules: :mod:`router.spec` (the graph JSON),
:mod:`router.engine` (routing), :mod:`router.client` (calls to steps, header propagation), :mod:`router.h1` (the
pooled HTTP/1.1 client under it), :mod:`router.server` (readiness, timeouts, shutdown, the in-flight limit),
:mod:`router.http` (the HTTP/1.1 server), :mod:`router.gjson` (condition paths), :mod:`router.gojson` (Go's JSON);
ours beyond KServe, off unless configured: :mod:`router.retry` (step retries, kserve/kserve PR #5386's fields) and
:mod:`router.metrics` (Prometheus metrics).

The names below load on first use, so that ``python -m router`` can say which package is missing before any of
them is imported.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Graph": "spec",
    "SpecError": "spec",
    "parse_graph": "spec",
    "RouteError": "engine",
    "Router": "engine",
    "TraceEvent": "engine",
}
__all__ = ["client", "metrics", "server", *sorted(_EXPORTS)]  # the modules graph run uses, and the names below


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'router' has no attribute {name!r}")
    return getattr(importlib.import_module(f"router.{module}"), name)
