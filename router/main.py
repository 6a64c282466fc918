"""``python -m router --graph-json '<InferenceGraphSpec JSON>' [--port 8080]``: KServe's router command line.

KServe's router (``cmd/router/main.go``) takes one flag, ``--graph-json`` (``--graph-json=...`` works too), reads
``PROPAGATE_HEADERS`` (comma-separated regular expressions; one that does not compile is logged and skipped),
listens on port 8080 and exits 1 when the graph JSON does not decode. ``--port``, ``--host`` and
``--drain-seconds`` are ours, for running it outside a pod; their defaults are KServe's behaviour.

Also ours, off unless given: ``--metrics-port`` (``ROUTER_METRICS_PORT``) serves Prometheus metrics on that port,
``--max-inflight`` (``ROUTER_MAX_INFLIGHT``) answers 503 beyond that many requests in flight. The rendered Deployment
sets the environment variables, which KServe's Go router ignores (a flag it does not know would stop it).
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
from .metrics import RouterMetrics
from .server import DEFAULT_DRAIN_SECONDS, RouterServer
from .spec import Graph, SpecError, parse_graph

ROUTER_PORT = 8080
PROPAGATE_HEADERS_ENV = "PROPAGATE_HEADERS"
METRICS_PORT_ENV = "ROUTER_METRICS_PORT"
MAX_INFLIGHT_ENV = "ROUTER_MAX_INFLIGHT"
logger = logging.getLogger("router")


def _setting(flag: int | None, environ: Mapping[str, str], env: str, option: str, high: int | None) -> int | None:
    """An integer setting from 0 to ``high``: the flag, else the environment variable (unset or empty: ``None``)."""
    where, value = (option, str(flag)) if flag is not None else (env, environ.get(env, "").strip())
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{where}={value!r}: must be an integer") from None
    if number < 0 or (high is not None and number > high):
        raise ValueError(
            f"{where}={value!r}: must be from 0 to {high}" if high else f"{where}={value!r}: must be 0 or more"
        )
    return number


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
    p.add_argument(
        "--metrics-port",
        type=int,
        help=f"serve Prometheus metrics at /metrics on this port (env {METRICS_PORT_ENV}; default: none)",
    )
    p.add_argument(
        "--max-inflight",
        type=int,
        help=f"answer 503 beyond this many requests in flight (env {MAX_INFLIGHT_ENV}; default 0: no limit)",
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


async def run(
    graph: Graph,
    patterns: list[re.Pattern[str]],
    host: str,
    port: int,
    drain_seconds: float,
    *,
    metrics_port: int | None = None,
    max_inflight: int = 0,
) -> None:
    metrics = RouterMetrics(graph) if metrics_port is not None else None
    router = Router(graph, ServiceClient(graph.timeouts.service_client), patterns, metrics=metrics)
    server = RouterServer(router, graph.timeouts, drain_seconds, max_inflight=max_inflight, metrics_port=metrics_port)
    bound = await server.start(host, port)
    logger.info("InferenceGraph router listening on port %d", bound)
    if server.metrics_port is not None:
        logger.info("Prometheus metrics on port %d at /metrics", server.metrics_port)
    if max_inflight:
        logger.info("at most %d requests in flight; more are answered 503", max_inflight)
    await server.serve()


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        metrics_port = _setting(args.metrics_port, os.environ, METRICS_PORT_ENV, "--metrics-port", 65535)
        max_inflight = _setting(args.max_inflight, os.environ, MAX_INFLIGHT_ENV, "--max-inflight", None) or 0
    except ValueError as err:
        parser.error(str(err))
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
        asyncio.run(
            run(
                graph,
                patterns,
                args.host,
                args.port,
                args.drain_seconds,
                metrics_port=metrics_port,
                max_inflight=max_inflight,
            )
        )
    except OSError as err:
        logger.error("Failed to serve on port %d: %s", args.port, err)
        return 1
    return 0
