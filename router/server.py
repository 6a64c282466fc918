"""The router's HTTP side: ``/readyz`` and every other path and method to the graph (KServe's ``main`` and
``readyHandler`` in ``cmd/router/main.go``), on :mod:`router.http`.

* ``/readyz``: 200, or 503 ``shutting down`` once SIGTERM/SIGINT arrived; then, after the drain sleep (30 s in
  KServe), the listener closes and in-flight requests finish.
* ``routerTimeouts``: ``serverRead`` bounds reading the request body, ``serverWrite`` the whole exchange (Go's write
  deadline; past it the connection is closed without an answer, which a client sees as EOF), ``serverIdle`` the
  keep-alive wait between requests.
* A body that is not JSON goes out with the type Go's ``http.DetectContentType`` would give it (the text/HTML/binary
  part of its table).

Ours, off by default: ``max_inflight`` answers graph requests beyond that many in flight with 503, ``Retry-After:
1`` and KServe's error body (kserve/kserve#2457: the router has no ``containerConcurrency``); ``metrics_port`` serves
``GET /metrics`` (:mod:`router.metrics`) on a port of its own, so that every path of the graph's port still goes to
the graph, as in KServe.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Any

from .engine import Router, error_body
from .http import HttpServer, Request, Response
from .metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from .spec import Timeouts

READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
DEFAULT_DRAIN_SECONDS = 30.0
RETRY_AFTER_S = 1
logger = logging.getLogger("router")

_HTML_PREFIXES = (
    b"<!doctype html",
    b"<html",
    b"<head",
    b"<script",
    b"<iframe",
    b"<h1",
    b"<div",
    b"<font",
    b"<table",
    b"<a",
    b"<style",
    b"<title",
    b"<b",
    b"<body",
    b"<br",
    b"<p",
    b"<!--",
)
_BINARY = frozenset(range(0x09)) | {0x0B, 0x0E, 0x0F} | frozenset(range(0x10, 0x1B)) | frozenset(range(0x1C, 0x20))


def sniff_content_type(body: bytes) -> str | None:
    """The text/HTML/binary part of ``http.DetectContentType``; ``None`` for an empty body (Go sets none)."""
    if not body:
        return None
    head = body[:512].lstrip(b"\t\n\x0c\r ")
    lowered = head[:16].lower()
    for prefix in _HTML_PREFIXES:
        if lowered.startswith(prefix) and head[len(prefix) : len(prefix) + 1] in (b" ", b">"):
            return "text/html; charset=utf-8"
    if head.startswith(b"<?xml"):
        return "text/xml; charset=utf-8"
    if any(b in _BINARY for b in body[:512]):
        return "application/octet-stream"
    return "text/plain; charset=utf-8"


class RouterServer:
    """Serves one :class:`Router`; ``serve`` runs until a signal (or ``request_stop``) and the drain are over."""

    def __init__(
        self,
        router: Router,
        timeouts: Timeouts,
        drain_seconds: float = DEFAULT_DRAIN_SECONDS,
        *,
        max_inflight: int = 0,
        metrics_port: int | None = None,
    ) -> None:
        self.router = router
        self.timeouts = timeouts
        self.drain_seconds = drain_seconds
        self.shutting_down = False
        self.inflight = 0
        self.max_inflight = max_inflight
        self.metrics_port = metrics_port  # the bound one after start()
        self._overloaded = _overloaded(max_inflight)
        self._stop = asyncio.Event()
        self._http = HttpServer(
            self._handle, read_timeout=float(timeouts.server_read), idle_timeout=float(timeouts.server_idle)
        )
        self._metrics_http: HttpServer | None = None
        metrics = router.metrics
        if metrics is not None:
            metrics.inflight = lambda: self.inflight
            metrics.max_inflight = max_inflight
            if metrics_port is not None:
                self._metrics_http = HttpServer(self._handle_metrics, read_timeout=10.0, idle_timeout=180.0)
        self._started = False
        self._loop: asyncio.AbstractEventLoop | None = None  # set by start()

    async def start(self, host: str | None, port: int) -> int:
        """Listen (and on the metrics port); returns the graph's bound port (useful with port 0)."""
        await self.router.client.start()
        self._loop = asyncio.get_running_loop()
        self._started = True
        if self._metrics_http is not None and self.metrics_port is not None:
            self.metrics_port = await self._metrics_http.start(host, self.metrics_port)
        return await self._http.start(host, port)

    def request_stop(self, sig: Any = None) -> None:
        """What SIGTERM does: fail readiness now, shut down after the drain."""
        if not self.shutting_down:
            logger.info(
                "Received shutdown signal %s; sleeping %ss to allow propagation of the non-ready state",
                getattr(sig, "name", sig),
                self.drain_seconds,
            )
            self.shutting_down = True
            self._stop.set()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self.request_stop, sig)
            except (NotImplementedError, RuntimeError):
                pass
        await self._stop.wait()
        await asyncio.sleep(self.drain_seconds)
        await self.close()
        logger.info("Server gracefully shutdown")

    async def close(self) -> None:
        if self._started:
            self._started = False
            await self._http.shutdown(float(self.timeouts.server_write or DEFAULT_GRACE_SECONDS))
            if self._metrics_http is not None:
                await self._metrics_http.shutdown(0.0)
        await self.router.client.close()

    async def _handle(self, request: Request) -> Response | None:
        if request.path == READY_PATH:
            return _NOT_READY if self.shutting_down else _READY
        if self.max_inflight and self.inflight >= self.max_inflight:
            if self.router.metrics is not None:
                self.router.metrics.rejected += 1
            return self._overloaded
        # Go's write deadline: when it passes the connection is closed unanswered (which cancels this request)
        deadline = None
        if self.timeouts.server_write and self._loop is not None:
            deadline = self._loop.call_later(self.timeouts.server_write, request.connection.abort)
        self.inflight += 1
        try:
            status, body, content_type = await self.router.handle(request.body, request.headers)
        finally:
            self.inflight -= 1
            if deadline is not None:
                deadline.cancel()
        if not 100 <= status <= 999:
            # Go's WriteHeader panics on such a code (e.g. 0 from a Sequence without steps): no answer, closed
            logger.error("invalid status code %d from the graph; closing the connection", status)
            request.connection.abort()
            return None
        content_type = content_type or sniff_content_type(body)
        return Response(status, body, (("Content-Type", content_type),) if content_type else ())

    async def _handle_metrics(self, request: Request) -> Response:
        metrics = self.router.metrics
        if request.path != METRICS_PATH or metrics is None:
            return _NOT_FOUND
        return Response(200, metrics.render(), (("Content-Type", METRICS_CONTENT_TYPE),))


def _overloaded(limit: int) -> Response:
    cause = f"too many requests in flight (the router's limit is {limit})"
    headers = (("Content-Type", "application/json"), ("Retry-After", str(RETRY_AFTER_S)))
    return Response(503, error_body(cause), headers)


_READY = Response(200)
_NOT_FOUND = Response(
    404, b"404 page not found\n", (("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff"))
)
_NOT_READY = Response(
    503, b"shutting down\n", (("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff"))
)
DEFAULT_GRACE_SECONDS = 60.0
