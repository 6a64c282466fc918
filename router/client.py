"""Calls to a step's service: KServe's ``callService`` (``cmd/router/main.go``) over a pooled aiohttp client.

* Always ``POST`` to the step's ``serviceUrl`` exactly; the inbound method, path and query play no part.
* Headers: each inbound header whose Go-canonical name (``X-Request-Id``) an entry of ``PROPAGATE_HEADERS`` matches
  (unanchored regular expression), with all its values, each header once; then ``Content-Type: application/json``
  unless one was propagated. Headers Go's client never writes from the header map (``Host``, ``Content-Length``,
  ``Transfer-Encoding``, ``Trailer``) and the hop-by-hop ``Connection``/``Keep-Alive`` are not copied.
* An ``https`` URL is called over ``http`` when an Istio sidecar answers ``GET http://localhost:15000`` with 200
  (checked on first use, then cached: KServe's ``isInIstioMesh``).
* Any HTTP status is a result; only a transport failure is an error (500 upstream).
* ``routerTimeouts.serviceClient`` seconds bound each call; unset, calls have no timeout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import aiohttp
from yarl import URL

JSON_CONTENT_TYPE = "application/json"
ISTIO_PROBE_URL = "http://localhost:15000"
ISTIO_PROBE_TIMEOUT_S = 3
_NEVER_COPIED = frozenset({"Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection", "Keep-Alive"})
_JSON_ONLY = [("Content-Type", JSON_CONTENT_TYPE)]
_URL_HOST = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:\[\]%]*$")


class CallError(Exception):
    """A step could not be called; ``str()`` is the cause KServe's error body carries."""


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


def outbound_headers(inbound: Iterable[tuple[str, str]], patterns: list[re.Pattern[str]]) -> list[tuple[str, str]]:
    """The headers every step call of one request carries (the same for all its steps)."""
    if not patterns:
        return _JSON_ONLY
    grouped: dict[str, list[str]] = {}
    for name, value in inbound:
        grouped.setdefault(canonical_header(name), []).append(value)
    out: list[tuple[str, str]] = []
    taken: set[str] = set()
    for pattern in patterns:
        for name, values in grouped.items():
            if name not in taken and name not in _NEVER_COPIED and pattern.search(name):
                taken.add(name)
                out.extend((name, v) for v in values)
    if "Content-Type" not in taken:
        out.append(("Content-Type", JSON_CONTENT_TYPE))
    return out


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed ``serviceUrl``: the URL to call, or the error Go's ``url.Parse`` would give."""

    text: str
    url: URL | None
    error: str = ""
    https: bool = False


def parse_target(text: str) -> Target:
    """Parse once at start-up; a malformed URL fails each call with 500, as in KServe."""
    try:
        url = URL(text, encoded=True)
    except ValueError as err:
        return Target(text, None, f'parse "{text}": {err}')
    host = url.raw_host or ""
    if url.scheme not in ("http", "https") or not host or not _URL_HOST.match(host):
        bad = next((c for c in host if not _URL_HOST.match(c)), "")
        reason = f'invalid character "{bad}" in host name' if bad else "unsupported protocol scheme or missing host"
        return Target(text, None, f'parse "{text}": {reason}')
    return Target(text, url, https=url.scheme == "https")


class ServiceClient:
    """One pooled session for all steps (keep-alive connections per backend, no pool limit)."""

    def __init__(self, service_timeout_s: int | None) -> None:
        self._timeout = aiohttp.ClientTimeout(total=service_timeout_s) if service_timeout_s else aiohttp.ClientTimeout()
        self._session: aiohttp.ClientSession | None = None
        self._in_mesh: bool | None = None

    async def start(self) -> None:
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=300, keepalive_timeout=90)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("Content-Type",),
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, target: Target, body: bytes, headers: list[tuple[str, str]]) -> tuple[bytes, int]:
        """(response body, status) of ``POST target``; raises :class:`CallError` on a transport failure."""
        if target.url is None:
            raise CallError(target.error)
        url = target.url
        if target.https and await self._istio_sidecar():
            url = url.with_scheme("http")
        assert self._session is not None, "ServiceClient.start() not awaited"
        try:
            async with self._session.post(url, data=body, headers=headers) as resp:
                return await resp.read(), resp.status
        except TimeoutError:
            raise CallError(
                f'Post "{target.text}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
            ) from None
        except aiohttp.ClientError as err:
            raise CallError(f'Post "{target.text}": {_reason(err)}') from None

    async def _istio_sidecar(self) -> bool:
        if self._in_mesh is None:
            self._in_mesh = await probe_istio(self._session)
        return self._in_mesh


async def probe_istio(session: Any) -> bool:
    """``isInIstioMesh``: the sidecar's admin port answers 200; refused or failing means no mesh."""
    try:
        async with session.get(ISTIO_PROBE_URL, timeout=aiohttp.ClientTimeout(total=ISTIO_PROBE_TIMEOUT_S)) as resp:
            return bool(resp.status == 200)
    except (TimeoutError, aiohttp.ClientError, OSError):
        return False


def _reason(err: aiohttp.ClientError) -> str:
    if isinstance(err, aiohttp.ClientConnectorError):
        cause = "connection refused" if isinstance(err.os_error, ConnectionRefusedError) else str(err.os_error)
        return f"dial tcp {err.host}:{err.port}: connect: {cause}"
    return str(err) or type(err).__name__
