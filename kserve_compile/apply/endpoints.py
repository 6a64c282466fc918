"""The daemon's HTTP endpoints over the standard library's server: ``/healthz`` (liveness), ``/readyz``
(readiness) and ``/metrics`` (Prometheus text), as controller-runtime's health probe and metrics servers serve them.

A probe answers 200 ``ok`` or 503 with the reason (``probes.py``); anything else is 404.
"""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kserve_compile.apply.probes import Liveness, Readiness

__all__ = ["Probes", "http_server"]

PROMETHEUS_TEXT = "text/plain; version=0.0.4"


class Probes:
    """What the endpoints ask: three callables, so the server knows nothing of the daemon."""

    def __init__(
        self, liveness: Callable[[], Liveness], readiness: Callable[[], Readiness], metrics_text: Callable[[], str]
    ) -> None:
        self.liveness, self.readiness, self.metrics_text = liveness, readiness, metrics_text

    def answer(self, path: str) -> tuple[int, str, str] | None:
        """(status, body, content type) for ``path``, or None (404)."""
        if path == "/metrics":
            return 200, self.metrics_text(), PROMETHEUS_TEXT
        if path == "/healthz":
            reason = self.liveness().reason
        elif path == "/readyz":
            reason = self.readiness().reason
        else:
            return None
        return (503 if reason else 200), (reason or "ok") + "\n", "text/plain"


def http_server(addr: str, probes: Probes) -> ThreadingHTTPServer:
    """A server for ``host:port`` (``:port`` = every address); the caller runs ``serve_forever``."""
    host, _, port = addr.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            answer = probes.answer(self.path)
            if answer is None:
                self.send_error(404)
                return
            code, body, ctype = answer
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    server.daemon_threads = True
    return server
