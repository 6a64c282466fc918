"""``python -m router --graph-json '<InferenceGraphSpec JSON>' [--port 8080]``: KServe's router command line.

KServe's router (``cmd/router/main.go``) takes one flag, ``--graph-json`` (``--graph-json=...`` works too), reads
``PROPAGATE_HEADERS`` (comma-separated regular expressions; one that does not compile is logged and skipped),
listens on port 8080 and exits 1 when the graph JSON does not decode. ``--port``, ``--host`` and
``--drain-seconds`` are ours, for running it outside a pod; their defaults are KServe's behaviour.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import sys
from collections.abc import Mapping

from .client import ServiceClient, compile_patterns
from .engine import Router
from .server import DEFAULT_DRAIN_SECONDS, RouterServer
from .spec import Graph, SpecError, parse_graph

ROUTER_PORT = 8080
PROPAGATE_HEADERS_ENV = "PROPAGATE_HEADERS"
logger = logging.getLogger("router")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="router", description="KServe InferenceGraph router")
    p.add_argument("--graph-json", required=True, help="serialized json graph def (the InferenceGraph spec)")
    p.add_argument("--port", type=int, default=ROUTER_PORT, help="port to listen on (default 8080)")
    p.add_argument("--host", default="", help="address to bind (default: all interfaces)")
    p.add_argument(
        "--drain-seconds",
        type=float,
        default=DEFAULT_DRAIN_SECONDS,
        help="seconds between SIGTERM (readiness fails) and shutdown (default 30, as KServe)",
    )
    return p


def header_patterns(environ: Mapping[str, str]) -> list[re.Pattern[str]]:
    """``PROPAGATE_HEADERS``: the patterns that compile (the others are logged and skipped)."""
    value = environ.get(PROPAGATE_HEADERS_ENV)
    if value is None:
        return []
    logger.info("headers matching %s will be propagated to every step", value)
    compiled, errors = compile_patterns(value.split(","))
    for message in errors:
        logger.error("Failed to compile some header patterns: %s", message)
    return compiled


async def run(graph: Graph, patterns: list[re.Pattern[str]], host: str, port: int, drain_seconds: float) -> None:
    router = Router(graph, ServiceClient(graph.timeouts.service_client), patterns)
    server = RouterServer(router, graph.timeouts, drain_seconds)
    bound = await server.start(host, port)
    logger.info("InferenceGraph router listening on port %d", bound)
    await server.serve()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        graph = parse_graph(args.graph_json)
    except SpecError as err:
        logger.error("failed to unmarshall inference graph json: %s", err)
        return 1
    patterns = header_patterns(os.environ)
    try:
        import uvloop  # optional: a faster event loop

        uvloop.install()
    except ImportError:
        pass
    try:
        asyncio.run(run(graph, patterns, args.host, args.port, args.drain_seconds))
    except OSError as err:
        logger.error("Failed to serve on port %d: %s", args.port, err)
        return 1
    return 0
