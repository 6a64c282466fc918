"""KServe's InferenceGraph router (``cmd/router`` in kserve/kserve) as a Python service.

``python -m router --graph-json '<InferenceGraphSpec JSON>'`` serves a graph as KServe's router does: the same
routing semantics, status codes, error bodies and Go JSON bytes. Modules: :mod:`router.spec` (the graph JSON),
:mod:`router.engine` (routing), :mod:`router.client` (calls to steps, header propagation), :mod:`router.server`
(readiness, timeouts, shutdown), :mod:`router.http` (the HTTP/1.1 server), :mod:`router.gjson` (condition paths),
:mod:`router.gojson` (Go's JSON).
"""

from .engine import RouteError, Router, TraceEvent
from .spec import Graph, SpecError, parse_graph

__all__ = ["client", "server", "Graph", "RouteError", "Router", "SpecError", "TraceEvent", "parse_graph"]
