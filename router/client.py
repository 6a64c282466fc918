"""Calls to a step's service: KServe's ``callService`` (``cmd/router/main.go``) over Go's ``http.DefaultClient``,
here :mod:`router.h1` (pooled keep-alive HTTP/1.1).

* Always ``POST`` to the step's ``serviceUrl`` exactly; the inbound method, path and query play no part.
* Headers: each inbound header whose Go-canonical name (``X-Request-Id``) an entry of ``PROPAGATE_HEADERS`` matches
  (unanchored regular expression), with all its values, each header once; then ``Content-Type: application/json``
  unless one was propagated. Headers Go's client never writes from the header map (``Host``, ``Content-Length``,
  ``Transfer-Encoding``, ``Trailer``) and the hop-by-hop ``Connection``/``Keep-Alive`` are not copied.
* On the wire, as Go's ``Request.write`` lays it out: request line, ``Host``, ``User-Agent: Go-http-client/1.1`` (or
  a propagated one), ``Content-Length``, the headers sorted by name, then ``Accept-Encoding: gzip`` unless an
  ``Accept-Encoding`` or ``Range`` header was propagated; a gzip answer to that is decompressed, as Go's transport does.
* An ``https`` URL is called over ``http`` when an Istio sidecar answers ``GET http://localhost:15000`` with 200
  (checked on first use, then cached: KServe's ``isInIstioMesh``).
* Any HTTP status is a result; only a transport failure is an error (500 upstream), worded as Go's ``url.Error``:
  ``Post "<url>": dial tcp 127.0.0.1:9: connect: connection refused``; a failure while reading the body is reported
  bare (``unexpected EOF``), as ``io.ReadAll``'s error is in KServe.
* Retries as Go's transport (``shouldRetryRequest``): a connection that had served an earlier request and failed
  before any byte of the answer is retried on another one only when the request is replayable, which for a POST
  means it carries an ``Idempotency-Key`` or ``X-Idempotency-Key`` header (a dead connection found before anything
  was written is never used: that is Go's "nothing written" case). A new connection is never retried.
* ``routerTimeouts.serviceClient`` seconds bound each call, dial included (Go's ``Client.Timeout``); unset, none.
"""

from __future__ import annotations

import asyncio
import gzip
import re
import ssl
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import SplitResult, quote, urlsplit

from . import h1

JSON_CONTENT_TYPE = "application/json"
ISTIO_PROBE_URL = "http://localhost:15000"
ISTIO_PROBE_TIMEOUT_S = 3
GO_USER_AGENT = "Go-http-client/1.1"
_NEVER_COPIED = frozenset({"Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection", "Keep-Alive"})
_NOT_IN_HEADER_BLOCK = frozenset({"Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer"})
_IDEMPOTENCY_KEYS = ("Idempotency-Key", "X-Idempotency-Key")
_URL_HOST = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:\[\]%]*$")
_PATH_SAFE = "/:@!$&'()*+,;=-._~%"
_SWEEP_S = 30.0


class CallError(Exception):
    """A step could not be called; ``str()`` is the cause KServe's error body carries, ``transient`` whether no byte
    of an answer came (refused, reset, closed or timed out before answering: what a retry policy may retry)."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def compile_patterns(patterns: Iterable[str]) -> tuple[list[re.Pattern[str]], list[str]]:
    """``compilePatterns``: the patterns that compile, and one message per pattern that does not."""
    compiled, errors = [], []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as err:
            errors.append(f'failed to compile pattern "{pattern}": {err}')
    return compiled, errors


@lru_cache(maxsize=1024)
def canonical_header(name: str) -> str:
    """Go's ``textproto.CanonicalMIMEHeaderKey``: ``x-request-id`` → ``X-Request-Id`` (names with bytes outside
    HTTP token characters stay as they are)."""
    if not name or not all(c.isascii() and (c.isalnum() or c in "!#$%&'*+-.^_`|~") for c in name):
        return name
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


class StepHeaders(list[tuple[str, str]]):
    """The headers of every step call of one request; their wire form is worked out once, on the first call."""

    wire: WireHeaders | None = None


@dataclass(frozen=True, slots=True)
class WireHeaders:
    """A header list as Go writes it: the ``User-Agent`` line, the sorted block (with ``Accept-Encoding: gzip``
    when Go adds it), and whether the request is replayable."""

    user_agent: bytes
    block: bytes
    gzip: bool
    idempotent: bool


def wire_headers(headers: Iterable[tuple[str, str]], basic_auth: str = "") -> WireHeaders:
    grouped: dict[str, list[str]] = {}
    for name, value in headers:
        grouped.setdefault(name, []).append(" ".join(value.replace("\r\n", " ").split("\n")).strip(" \t"))
    if basic_auth and "Authorization" not in grouped:
        grouped["Authorization"] = [basic_auth]
    agent = grouped["User-Agent"][0] if "User-Agent" in grouped else GO_USER_AGENT
    lines = [
        f"{name}: {value}\r\n"
        for name in sorted(grouped)
        if name not in _NOT_IN_HEADER_BLOCK
        for value in grouped[name]
    ]
    asks_gzip = not (grouped.get("Accept-Encoding", [""])[0] or grouped.get("Range", [""])[0])
    if asks_gzip:
        lines.append("Accept-Encoding: gzip\r\n")
    return WireHeaders(
        f"User-Agent: {agent}\r\n".encode("latin-1") if agent else b"",
        "".join(lines).encode("latin-1", "replace"),
        asks_gzip,
        any(k in grouped for k in _IDEMPOTENCY_KEYS),
    )


def outbound_headers(inbound: Iterable[tuple[str, str]], patterns: list[re.Pattern[str]]) -> StepHeaders:
    """The headers every step call of one request carries (the same for all its steps)."""
    if not patterns:
        return _JSON_ONLY
    grouped: dict[str, list[str]] = {}
    for name, value in inbound:
        grouped.setdefault(canonical_header(name), []).append(value)
    out = StepHeaders()
    taken: set[str] = set()
    for pattern in patterns:
        for name, values in grouped.items():
            if name not in taken and name not in _NEVER_COPIED and pattern.search(name):
                taken.add(name)
                out.extend((name, v) for v in values)
    if "Content-Type" not in taken:
        out.append(("Content-Type", JSON_CONTENT_TYPE))
    return out


_JSON_ONLY = StepHeaders([("Content-Type", JSON_CONTENT_TYPE)])


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed ``serviceUrl``: where to connect and the request line, or the error Go's ``url.Parse`` would give."""

    text: str
    error: str = ""
    https: bool = False
    host: str = ""  # to connect to (no brackets)
    port: int = 0
    host_header: str = ""
    request_uri: str = "/"
    basic_auth: str = ""


def parse_target(text: str) -> Target:
    """Parse once at start-up; a malformed URL fails each call with 500, as in KServe."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as err:
        return Target(text, f'parse "{text}": {_url_reason(err)}')
    host = parts.hostname or ""
    netloc_host = parts.netloc.rpartition("@")[2]
    if parts.scheme not in ("http", "https") or not host or not _URL_HOST.match(netloc_host):
        bad = next((c for c in netloc_host if not _URL_HOST.match(c)), "")
        reason = f'invalid character "{bad}" in host name' if bad else "unsupported protocol scheme or missing host"
        return Target(text, f'parse "{text}": {reason}')
    https = parts.scheme == "https"
    return Target(
        text,
        https=https,
        host=host,
        port=port or (443 if https else 80),
        host_header=_punycode(netloc_host),
        request_uri=_request_uri(parts),
        basic_auth=_basic_auth(parts),
    )


def _url_reason(err: ValueError) -> str:
    message = str(err)
    return "invalid port" if "Port" in message else message


def _punycode(host: str) -> str:
    return host if host.isascii() else host.encode("idna").decode("ascii")


def _request_uri(parts: SplitResult) -> str:
    path = quote(parts.path, safe=_PATH_SAFE) or "/"
    return f"{path}?{parts.query}" if parts.query else path


def _basic_auth(parts: SplitResult) -> str:
    """Go's client turns ``user:pass@`` in a URL into ``Authorization: Basic`` (unless one is propagated)."""
    if "@" not in parts.netloc:
        return ""
    import base64
    from urllib.parse import unquote

    user, _, password = parts.netloc.rpartition("@")[0].partition(":")
    return "Basic " + base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()


class _Route:
    """A target as called: its connection pool and the request's fixed first bytes."""

    __slots__ = ("pool", "prefix", "target", "url")

    def __init__(self, target: Target, pool: h1.Pool, url: str) -> None:
        self.target, self.pool, self.url = target, pool, url
        self.prefix = f"POST {target.request_uri} HTTP/1.1\r\nHost: {target.host_header}\r\n".encode("latin-1")


class ServiceClient:
    """Pooled keep-alive connections to every step (no limit on their number), one pool per scheme/host/port."""

    def __init__(self, service_timeout_s: int | None) -> None:
        self.timeout_s = float(service_timeout_s) if service_timeout_s else None
        self._pools: dict[tuple[bool, str, int], h1.Pool] = {}
        self._routes: dict[str, _Route] = {}
        self._in_mesh: bool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._ssl: ssl.SSLContext | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._sweeper = self._loop.call_later(_SWEEP_S, self._sweep)

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        self._routes.clear()

    async def post(self, target: Target, body: bytes, headers: list[tuple[str, str]]) -> tuple[bytes, int]:
        """(response body, status) of ``POST target``; raises :class:`CallError` on a transport failure."""
        route = self._routes.get(target.text)
        if route is None:
            route = await self._route(target)
        wire = headers.wire if isinstance(headers, StepHeaders) else None
        if wire is None or target.basic_auth:
            wire = wire_headers(headers, target.basic_auth)
            if isinstance(headers, StepHeaders) and not target.basic_auth:
                headers.wire = wire
        data = b"".join(
            (route.prefix, wire.user_agent, b"Content-Length: %d\r\n" % len(body), wire.block, b"\r\n", body)
        )
        loop = self._loop
        assert loop is not None, "ServiceClient.start() not awaited"
        deadline = loop.time() + self.timeout_s if self.timeout_s is not None else None
        while True:
            try:
                answer, _ = await route.pool.exchange(data, deadline)
            except h1.TransportError as err:
                if err.reused and err.before_response and wire.idempotent:
                    continue  # Go retries a replayable request that a reused connection dropped
                message = str(err) if err.in_body else f'Post "{route.url}": {err}'
                raise CallError(message, transient=err.transient) from None
            if wire.gzip and answer.encoding == b"gzip":
                return _gunzip(answer.body), answer.status
            return answer.body, answer.status

    async def _route(self, target: Target) -> _Route:
        if target.error:
            raise CallError(target.error)
        called = target
        if target.https and await self._istio_sidecar():
            called = parse_target("http" + target.text[len("https") :])  # Go: parsedServiceUrl.Scheme = "http"
        key = (called.https, called.host, called.port)
        pool = self._pools.get(key)
        if pool is None:
            assert self._loop is not None, "ServiceClient.start() not awaited"
            tls = self._tls() if called.https else None
            pool = self._pools[key] = h1.Pool(
                self._loop, called.host, called.port, tls, resolver_server=resolver_server
            )
        route = self._routes[target.text] = _Route(called, pool, called.text)
        return route

    def _tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    async def _istio_sidecar(self) -> bool:
        if self._in_mesh is None:
            self._in_mesh = await probe_istio(self._loop or asyncio.get_running_loop())
        return self._in_mesh

    def _sweep(self) -> None:
        now = time.monotonic()
        for pool in self._pools.values():
            pool.sweep(now)
        if self._loop is not None:
            self._sweeper = self._loop.call_later(_SWEEP_S, self._sweep)


async def probe_istio(loop: asyncio.AbstractEventLoop, url: str = ISTIO_PROBE_URL) -> bool:
    """``isInIstioMesh``: the sidecar's admin port answers ``GET /`` with 200; refused or failing means no mesh."""
    target = parse_target(url)
    pool = h1.Pool(loop, target.host, target.port)
    request = (
        f"GET {target.request_uri} HTTP/1.1\r\nHost: {target.host_header}\r\nUser-Agent: {GO_USER_AGENT}\r\n"
        "Accept-Encoding: gzip\r\n\r\n"
    ).encode()
    try:
        answer, _ = await pool.exchange(request, loop.time() + ISTIO_PROBE_TIMEOUT_S)
        return answer.status == 200
    except (h1.TransportError, OSError):
        return False
    finally:
        pool.close()


def _gunzip(body: bytes) -> bytes:
    """Go's gzip reader on the body; its errors come back bare from ``io.ReadAll``, as in KServe."""
    try:
        return gzip.decompress(body)
    except EOFError:
        raise CallError("unexpected EOF") from None
    except gzip.BadGzipFile:
        raise CallError("gzip: invalid header") from None
    except (OSError, zlib.error):
        raise CallError("flate: corrupt input") from None


@lru_cache(maxsize=1)
def resolver_server() -> str:
    """The first ``nameserver`` of ``/etc/resolv.conf`` as ``host:53``: Go's pure resolver names it in errors."""
    try:
        with open("/etc/resolv.conf") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 2 and fields[0] == "nameserver":
                    host = fields[1]
                    return f"[{host}]:53" if ":" in host else f"{host}:53"
    except OSError:
        pass
    return ""
