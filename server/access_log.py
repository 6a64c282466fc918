"""A pure-ASGI access log with a configurable ``%(key)s`` format (``--access_log_format``).

Keys: h client address, m method, U path, q query string, H protocol, r request line, s status,
b response body bytes, D duration in microseconds, L duration in seconds.
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("server.access")


class AccessLogMiddleware:
    def __init__(self, app: ASGIApp, fmt: str) -> None:
        self.app = app
        self.fmt = fmt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0, 0]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == "http.response.body":
                status[1] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._log(scope, status[0], status[1], time.perf_counter() - started)

    def _log(self, scope: Scope, status: int, size: int, elapsed: float) -> None:
        client = scope.get("client")
        query = scope.get("query_string", b"").decode("latin-1")
        path = scope.get("path", "")
        protocol = f"HTTP/{scope.get('http_version', '1.1')}"
        fields = {
            "h": client[0] if client else "-",
            "m": scope.get("method", ""),
            "U": path,
            "q": query,
            "H": protocol,
            "r": f"{scope.get('method', '')} {path}{'?' + query if query else ''} {protocol}",
            "s": status,
            "b": size,
            "D": int(elapsed * 1e6),
            "L": f"{elapsed:.6f}",
        }
        try:
            logger.info(self.fmt, fields)
        except (KeyError, TypeError, ValueError):
            logger.info('%(h)s "%(r)s" %(s)s', fields)
