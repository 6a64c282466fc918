"""A small HTTP/1.1 client: keep-alive connection pools on asyncio with httptools' response parser (llhttp).

What KServe's router gets from Go's ``http.DefaultTransport`` (``net/http/transport.go``), where a step or a caller can
see it:

* One request in flight per connection (no pipelining: a slow step never holds up another call); idle connections
  are kept per scheme/host/port and the most recently used is taken first, as Go's idle list does.
* A connection is retired when the answer says so (``Connection: close``, HTTP/1.0 without keep-alive), when the peer
  closes it or sends bytes while it is idle (Go's read loop notices both at once; asyncio's callbacks here do), after
  90 s idle (``IdleConnTimeout``), and when a call on it is cancelled or fails.
* Bodies: ``Content-Length``, chunked, or up to EOF; ``1xx`` answers before the real one are skipped.
* Dialing: the host's addresses in the resolver's order, the first error reported (Go's ``dialSerial``), 30 s per
  dial (``Dialer.Timeout``).

Errors are :class:`TransportError` with Go's wording, a flag saying whether any byte of the answer had arrived, and
one saying whether the failure is *transient* (nothing of an answer came: refused, reset, closed, timed out); the
caller (``router.client``) decides on retries and formats the message as Go's ``http.Client`` does. This module
knows nothing of the graph: :meth:`Pool.exchange` takes the request bytes and gives (status, headers seen, body).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import ssl as ssl_module
import time
from collections.abc import Callable
from typing import Any

import httptools

IDLE_TIMEOUT_S = 90.0
DIAL_TIMEOUT_S = 30.0


class TransportError(Exception):
    """A call failed below HTTP; ``str()`` is Go's wording for the cause, ``before_response`` whether the connection
    ended before any byte of the answer, ``in_body`` whether the status and headers had arrived (Go then reports the
    error unwrapped), ``transient`` whether no byte of an answer came at all: the connection could not be made, or
    was reset, closed or timed out before answering (what a router retry policy may retry)."""

    reused = False  # set by Pool.exchange: the connection had served an earlier request

    def __init__(
        self, message: str, *, before_response: bool = False, in_body: bool = False, transient: bool = False
    ) -> None:
        super().__init__(message)
        self.before_response = before_response
        self.in_body = in_body
        self.transient = transient or before_response


class DialError(TransportError):
    """The connection could not be made (nothing was sent)."""


class Answer:
    """A complete response: status, body, and the one header the caller needs (``Content-Encoding``)."""

    __slots__ = ("body", "encoding", "status")

    def __init__(self, status: int, body: bytes, encoding: bytes) -> None:
        self.status, self.body, self.encoding = status, body, encoding


def _go_addr(addr: tuple[str, int] | tuple[str, int, int, int]) -> str:
    host, port = addr[0], addr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _os_error_text(err: OSError) -> str:
    """Go's ``syscall.Errno`` text (``connection refused``): the C library's message, lower-cased as Go's table."""
    text = os.strerror(err.errno) if err.errno else str(err)
    return text[:1].lower() + text[1:]


_HTTP_VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")


def malformed(first: bytes, err: Exception) -> str:
    """Go's ``ReadResponse`` wording for a bad status line (``malformed HTTP status code "ready"``); past the status
    line, llhttp's reason."""
    line = first.split(b"\n", 1)[0].rstrip(b"\r").decode("latin-1")
    if line:
        proto, space, status = line.partition(" ")
        if not space:
            return f"malformed HTTP response {_go_quote(line)}"
        code = status.lstrip(" ").partition(" ")[0]
        if len(code) != 3 or not code.isdigit():
            return f"malformed HTTP status code {_go_quote(code)}"
        if not _HTTP_VERSION.fullmatch(proto):
            return f"malformed HTTP version {_go_quote(proto)}"
    return f"malformed HTTP response ({err})"


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable ASCII a status line normally holds."""
    if text.isascii() and text.isprintable():
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return json.dumps(text)


class Connection(asyncio.Protocol):
    """One keep-alive connection; :meth:`send` writes a request and waits for its whole answer."""

    __slots__ = (
        "_body",
        "_delimited",
        "_encoding",
        "_first",
        "_got_bytes",
        "_headers_done",
        "_timer",
        "_waiter",
        "closed",
        "idle_since",
        "local",
        "parser",
        "peer",
        "pool",
        "reused",
        "transport",
    )

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[Answer] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._body: list[bytes] = []
        self._encoding = b""
        self._delimited = False
        self._headers_done = False
        self._got_bytes = False
        self._first = b""
        self.reused = False
        self.closed = False
        self.idle_since = 0.0
        self.local = self.peer = ""

    # --- asyncio callbacks --------------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        try:
            self.local = _go_addr(transport.get_extra_info("sockname"))
            self.peer = _go_addr(transport.get_extra_info("peername"))
        except (TypeError, IndexError):
            pass

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # bytes on an idle connection: Go closes it ("unsolicited response")
            self._close()
            return
        if not self._got_bytes:
            self._got_bytes = True
            self._first = data
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass
        except httptools.HttpParserError as err:
            reason = malformed(b"" if self._headers_done else self._first, err)
            self._fail(TransportError(f"net/http: HTTP/1.x transport connection broken: {reason}"))

    def eof_received(self) -> bool:
        if self._waiter is not None and self._headers_done and not self._delimited:
            self._finish()  # a body delimited by the end of the connection
        self._lost(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost(exc)

    # --- httptools callbacks ------------------------------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        lowered = name.lower()
        if lowered == b"content-encoding":
            self._encoding = value.strip().lower()
        elif lowered == b"content-length" or lowered == b"transfer-encoding":
            self._delimited = True

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # informational (100 Continue, 103 Early Hints): the answer follows
            self._reset_message()
            return
        self._finish()

    # --- exchanges ----------------------------------------------------------------------------------------------

    def send(self, data: bytes, deadline: float | None) -> asyncio.Future[Answer]:
        """Write ``data``; the future gets the answer or a :class:`TransportError`."""
        assert self.transport is not None and self._waiter is None
        waiter: asyncio.Future[Answer] = self.pool.loop.create_future()
        self._waiter = waiter
        self._got_bytes = False
        self._reset_message()
        if deadline is not None:
            self._timer = self.pool.loop.call_at(deadline, self._expire)
        self.transport.write(data)
        return waiter

    def cancel(self) -> None:
        """The caller gave up on the answer (its request was cancelled): the connection cannot be reused."""
        self._waiter = None
        self._close()

    def _reset_message(self) -> None:
        self._body = []
        self._encoding = b""
        self._delimited = False
        self._headers_done = False

    def _finish(self) -> None:
        waiter = self._waiter
        if waiter is None:  # an answer nobody asked for (it came with the last one): Go closes the connection
            self._close()
            return
        self._waiter = None
        self._disarm()
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        answer = Answer(self.parser.get_status_code(), body, self._encoding)
        if self.parser.should_keep_alive() and not self.closed:
            self.pool.release(self)
        else:
            self._close()
        if not waiter.done():
            waiter.set_result(answer)

    def _expire(self) -> None:
        self._timer = None
        self._fail(deadline_error(in_body=self._headers_done, transient=not self._got_bytes))

    def _lost(self, exc: Exception | None) -> None:
        if self._waiter is not None:
            if not self._got_bytes:
                cause = "EOF" if exc is None else self._read_error(exc)
                self._fail(TransportError(cause, before_response=True))
            elif self._headers_done:
                self._fail(TransportError("unexpected EOF", in_body=True))
            else:
                self._fail(TransportError("net/http: HTTP/1.x transport connection broken: unexpected EOF"))
        self._close()

    def _read_error(self, exc: Exception) -> str:
        if isinstance(exc, OSError):
            return f"read tcp {self.local}->{self.peer}: read: {_os_error_text(exc)}"
        return str(exc)

    def _fail(self, error: TransportError) -> None:
        waiter = self._waiter
        self._waiter = None
        self._disarm()
        self._close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            self.pool.forget(self)
            if self.transport is not None:
                self.transport.close()


def deadline_error(in_body: bool = False, *, transient: bool = False) -> TransportError:
    """Go's ``Client.Timeout`` wording: before the headers (wrapped in the url.Error) or while reading the body;
    ``transient`` when no byte of the answer had come."""
    if in_body:
        return TransportError(
            "context deadline exceeded (Client.Timeout or context cancellation while reading body)", in_body=True
        )
    return TransportError(
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)", transient=transient
    )


class Pool:
    """Idle keep-alive connections to one scheme/host/port; :meth:`exchange` runs one request on one of them."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        host: str,
        port: int,
        ssl: ssl_module.SSLContext | None = None,
        *,
        idle_timeout: float = IDLE_TIMEOUT_S,
        resolver_server: Callable[[], str] | None = None,
    ) -> None:
        self.loop = loop
        self.host, self.port, self.ssl = host, port, ssl
        self.idle: list[Connection] = []
        self.busy: set[Connection] = set()
        self.idle_timeout = idle_timeout
        self._resolver_server = resolver_server

    def release(self, conn: Connection) -> None:
        self.busy.discard(conn)
        conn.idle_since = time.monotonic()
        conn.reused = True
        self.idle.append(conn)

    def forget(self, conn: Connection) -> None:
        self.busy.discard(conn)
        try:
            self.idle.remove(conn)
        except ValueError:
            pass

    def sweep(self, now: float) -> None:
        """Close connections idle for longer than the idle timeout."""
        stale = [c for c in self.idle if now - c.idle_since >= self.idle_timeout]
        for conn in stale:
            conn._close()

    def close(self) -> None:
        for conn in [*self.idle, *self.busy]:
            conn._close()

    async def acquire(self, deadline: float | None) -> Connection:
        """The most recently used live idle connection, else a new one."""
        idle = self.idle
        if idle:
            oldest = time.monotonic() - self.idle_timeout
            while idle:
                conn = idle.pop()
                if conn.idle_since <= oldest:  # past Go's IdleConnTimeout, even if the sweep has not run yet
                    conn._close()
                elif not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                    self.busy.add(conn)
                    return conn
        conn = await self._dial(deadline)
        self.busy.add(conn)
        return conn

    async def exchange(self, data: bytes, deadline: float | None = None) -> tuple[Answer, bool]:
        """(answer, whether the connection was a reused one). Raises :class:`TransportError`."""
        conn = await self.acquire(deadline)
        reused = conn.reused
        waiter = conn.send(data, deadline)
        try:
            return await waiter, reused
        except asyncio.CancelledError:
            conn.cancel()
            raise
        except TransportError as err:
            if reused:
                err = TransportError(
                    str(err), before_response=err.before_response, in_body=err.in_body, transient=err.transient
                )
                err.reused = True
                raise err from None
            raise

    async def _dial(self, deadline: float | None) -> Connection:
        loop = self.loop
        timeout = DIAL_TIMEOUT_S if deadline is None else min(DIAL_TIMEOUT_S, max(0.0, deadline - loop.time()))
        try:
            async with asyncio.timeout(timeout):
                infos = await self._resolve()
                first: DialError | None = None
                for family, kind, proto, _, addr in infos:
                    try:
                        _, conn = await loop.create_connection(
                            lambda: Connection(self),
                            sock=await self._connect(family, kind, proto, addr),
                            ssl=self.ssl,
                            server_hostname=self.host if self.ssl else None,
                        )
                        return conn
                    except DialError as err:
                        first = first or err
                    except (ssl_module.SSLError, ssl_module.CertificateError) as err:
                        first = first or DialError(f"tls: {err}")
                assert first is not None
                raise first
        except TimeoutError:
            if deadline is not None and loop.time() >= deadline:
                raise deadline_error(transient=True) from None
            raise DialError(f"dial tcp {self._addr_text()}: i/o timeout", transient=True) from None

    async def _resolve(self) -> list[tuple[Any, ...]]:
        try:
            return await self.loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except socket.gaierror as err:
            server = self._resolver_server() if self._resolver_server else ""
            where = f" on {server}" if server else ""
            reason = "no such host" if err.errno in (socket.EAI_NONAME, socket.EAI_NODATA) else str(err.strerror)
            raise DialError(f"dial tcp: lookup {self.host}{where}: {reason}") from None

    async def _connect(
        self, family: int, kind: int, proto: int, addr: tuple[str, int] | tuple[str, int, int, int]
    ) -> socket.socket:
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await self.loop.sock_connect(sock, addr)
        except OSError as err:
            sock.close()
            raise DialError(f"dial tcp {_go_addr(addr)}: connect: {_os_error_text(err)}", transient=True) from None
        except BaseException:
            sock.close()
            raise
        return sock

    def _addr_text(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
