"""router.h1 / router.client: the step client against raw scripted servers on 127.0.0.1.

What a step (or a caller reading the router's error bodies) sees of Go's ``http.DefaultClient``: the request bytes,
bodies delimited every way HTTP/1.1 allows, keep-alive reuse and retirement, Go's retry rule for a reused
connection that dies before answering, timeouts and connection errors in Go's words, and no head-of-line blocking.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from router import h1
from router.client import CallError, ServiceClient, StepHeaders, outbound_headers, parse_target

Reply = Callable[["Exchange"], Awaitable[None]]


@dataclass
class Exchange:
    """One request as the server read it, and the stream to answer on."""

    head: bytes
    body: bytes
    connection: int  # 0 for the first connection the server accepted, 1 for the next, ...
    number: int  # the request's position on its connection
    writer: asyncio.StreamWriter


@dataclass
class Server:
    url: str
    port: int
    requests: list[Exchange] = field(default_factory=list)
    connections: int = 0


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head, await reader.readexactly(length)


class scripted:
    """``async with scripted(reply) as server``: each request is handed to ``reply``, which writes what it likes."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    async def __aenter__(self) -> Server:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            index = self.server.connections
            self.server.connections += 1
            number = 0
            try:
                while not writer.is_closing():
                    got = await _read_request(reader)
                    if got is None:
                        break
                    exchange = Exchange(got[0], got[1], index, number, writer)
                    self.server.requests.append(exchange)
                    number += 1
                    await self.reply(exchange)
            finally:
                writer.close()

        self.listener = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = self.listener.sockets[0].getsockname()[1]
        self.server = Server(f"http://127.0.0.1:{port}/v1/models/m:predict", port)
        return self.server

    async def __aexit__(self, *exc: object) -> None:
        self.listener.close()


def answer(body: bytes = b'{"ok":1}', extra: bytes = b"", status: bytes = b"200 OK") -> Reply:
    async def reply(ex: Exchange) -> None:
        ex.writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: %d\r\n" % len(body) + extra + b"\r\n" + body)
        await ex.writer.drain()

    return reply


async def _post(
    client: ServiceClient, url: str, body: bytes = b"{}", headers: list[tuple[str, str]] | None = None
) -> tuple[bytes, int]:
    return await client.post(parse_target(url), body, outbound_headers([], []) if headers is None else headers)


def run(coro: Awaitable[object]) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


async def _with_client(case: Callable[[ServiceClient], Awaitable[object]], timeout: int | None = None) -> object:
    client = ServiceClient(timeout)
    await client.start()
    try:
        return await case(client)
    finally:
        await client.close()


# --- the request on the wire -------------------------------------------------------------------------------------


def test_request_bytes_are_gos() -> None:
    async def case() -> None:
        async with scripted(answer()) as server:

            async def go(client: ServiceClient) -> None:
                await _post(client, server.url, b'{"instances":[1]}')

            await _with_client(go)
        assert server.requests[0].head + server.requests[0].body == (
            b"POST /v1/models/m:predict HTTP/1.1\r\n"
            b"Host: 127.0.0.1:%d\r\n"
            b"User-Agent: Go-http-client/1.1\r\n"
            b"Content-Length: 17\r\n"
            b"Content-Type: application/json\r\n"
            b"Accept-Encoding: gzip\r\n\r\n"
            b'{"instances":[1]}' % server.port
        )

    run(case())


def test_propagated_headers_sorted_user_agent_and_accept_encoding_as_go() -> None:
    import re

    patterns = [re.compile(p) for p in ("X-.*", "User-Agent", "Accept-Encoding", "Authorization")]
    inbound = [
        ("x-request-id", "r1"),
        ("Authorization", "Bearer t"),
        ("X-B3-Traceid", "t1"),
        ("user-agent", "curl/8"),
        ("Accept-Encoding", "br"),
        ("x-request-id", "r2"),
    ]

    async def case() -> None:
        async with scripted(answer()) as server:

            async def go(client: ServiceClient) -> None:
                headers = outbound_headers(inbound, patterns)
                assert isinstance(headers, StepHeaders)
                await _post(client, server.url, b"", headers)
                await _post(client, server.url, b"", headers)  # the cached wire form gives the same bytes

            await _with_client(go)
        first, second = (r.head for r in server.requests)
        assert first == second
        assert first == (
            b"POST /v1/models/m:predict HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: curl/8\r\n"
            b"Content-Length: 0\r\n"
            b"Accept-Encoding: br\r\nAuthorization: Bearer t\r\nContent-Type: application/json\r\n"
            b"X-B3-Traceid: t1\r\nX-Request-Id: r1\r\nX-Request-Id: r2\r\n\r\n" % server.port
        )

    run(case())


def test_query_is_kept_and_userinfo_becomes_basic_auth() -> None:
    async def case() -> None:
        async with scripted(answer()) as server:
            url = f"http://me:pw@127.0.0.1:{server.port}/p?x=1&y=2"
            await _with_client(lambda c: _post(c, url))
        head = server.requests[0].head
        assert head.startswith(b"POST /p?x=1&y=2 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port)
        assert b"Authorization: Basic bWU6cHc=\r\n" in head

    run(case())


# --- bodies ------------------------------------------------------------------------------------------------------


def test_chunked_content_length_eof_delimited_and_gzip_bodies() -> None:
    async def chunked(ex: Exchange) -> None:
        ex.writer.write(b'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n')

    async def until_eof(ex: Exchange) -> None:
        ex.writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[1,2,")
        await ex.writer.drain()
        ex.writer.write(b"3]")
        ex.writer.close()

    zipped = gzip.compress(b'{"z":true}')

    async def case() -> None:
        async with (
            scripted(chunked) as a,
            scripted(until_eof) as b,
            scripted(answer(zipped, b"Content-Encoding: gzip\r\n")) as c,
        ):

            async def go(client: ServiceClient) -> list[tuple[bytes, int]]:
                return [await _post(client, s.url) for s in (a, b, c)]

            assert await _with_client(go) == [(b'{"a":1}', 201), (b"[1,2,3]", 200), (b'{"z":true}', 200)]

    run(case())


def test_informational_answers_are_skipped() -> None:
    async def early_hints(ex: Exchange) -> None:
        ex.writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")
        await ex.writer.drain()
        await answer(b"{}", status=b"404 Not Found")(ex)

    async def case() -> None:
        async with scripted(early_hints) as server:
            assert await _with_client(lambda c: _post(c, server.url)) == (b"{}", 404)

    run(case())


def test_eof_in_the_body_is_reported_bare_as_go_readall_does() -> None:
    async def short(ex: Exchange) -> None:
        ex.writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"a"')
        ex.writer.close()

    async def case() -> None:
        async with scripted(short) as server:
            with pytest.raises(CallError) as err:
                await _with_client(lambda c: _post(c, server.url))
        assert str(err.value) == "unexpected EOF"

    run(case())


@pytest.mark.parametrize(
    ("status_line", "reason"),
    [
        (b"SMTP ready", 'malformed HTTP status code "ready"'),
        (b"garbage", 'malformed HTTP response "garbage"'),
        (b"HTTP/1.1 2000 OK", 'malformed HTTP status code "2000"'),
        (b"HTP/1.1 200 OK", 'malformed HTTP version "HTP/1.1"'),
    ],
)
def test_malformed_answer_in_gos_words(status_line: bytes, reason: str) -> None:
    async def garbage(ex: Exchange) -> None:
        ex.writer.write(status_line + b"\r\nContent-Length: 0\r\n\r\n")

    async def case() -> None:
        async with scripted(garbage) as server:
            with pytest.raises(CallError) as err:
                await _with_client(lambda c: _post(c, server.url))
        assert str(err.value) == f'Post "{server.url}": net/http: HTTP/1.x transport connection broken: {reason}'

    run(case())


# --- keep-alive ---------------------------------------------------------------------------------------------------


def test_connections_are_reused_and_retired_on_connection_close() -> None:
    async def reply(ex: Exchange) -> None:
        close = b"Connection: close\r\n" if ex.number == 1 else b""
        await answer(b"%d" % ex.connection, close)(ex)

    async def case() -> None:
        async with scripted(reply) as server:

            async def go(client: ServiceClient) -> list[bytes]:
                return [(await _post(client, server.url))[0] for _ in range(4)]

            # requests 1-2 on connection 0 (the second answer says close), 3-4 on connection 1
            assert await _with_client(go) == [b"0", b"0", b"1", b"1"]
            assert server.connections == 2

    run(case())


def test_an_idle_connection_the_peer_closed_is_not_used() -> None:
    async def reply(ex: Exchange) -> None:
        await answer(b"%d" % ex.connection)(ex)
        ex.writer.close()  # the server's idle timeout, at once

    async def case() -> None:
        async with scripted(reply) as server:

            async def go(client: ServiceClient) -> list[bytes]:
                first = (await _post(client, server.url))[0]
                await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
                return [first, (await _post(client, server.url))[0]]

            assert await _with_client(go) == [b"0", b"1"]
            assert len(server.requests) == 2  # nothing was sent on the dead connection

    run(case())


def test_bytes_on_an_idle_connection_retire_it() -> None:
    async def reply(ex: Exchange) -> None:
        await answer(b"%d" % ex.connection)(ex)
        if ex.connection == 0:
            ex.writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")  # unsolicited

    async def case() -> None:
        async with scripted(reply) as server:

            async def go(client: ServiceClient) -> list[bytes]:
                first = (await _post(client, server.url))[0]
                await asyncio.sleep(0.05)
                return [first, (await _post(client, server.url))[0]]

            assert await _with_client(go) == [b"0", b"1"]

    run(case())


def _dies_on_second_request() -> Reply:
    """Answers the first request of a connection; on the second, closes it without a byte (keep-alive race)."""

    async def reply(ex: Exchange) -> None:
        if ex.number == 1:
            ex.writer.close()
            return
        await answer(b"%d" % ex.connection)(ex)

    return reply


def test_a_reused_connection_dying_before_the_answer_fails_a_post_as_go() -> None:
    """Go retries only replayable requests; a POST is one only with an Idempotency-Key header."""

    async def case() -> None:
        async with scripted(_dies_on_second_request()) as server:

            async def go(client: ServiceClient) -> None:
                await _post(client, server.url)
                await _post(client, server.url)

            with pytest.raises(CallError) as err:
                await _with_client(go)
        assert str(err.value) == f'Post "{server.url}": EOF'
        assert len(server.requests) == 2

    run(case())


@pytest.mark.parametrize("key", ["Idempotency-Key", "X-Idempotency-Key"])
def test_a_replayable_post_is_retried_on_a_new_connection(key: str) -> None:
    headers = StepHeaders([(key, "k1"), ("Content-Type", "application/json")])

    async def case() -> None:
        async with scripted(_dies_on_second_request()) as server:

            async def go(client: ServiceClient) -> list[bytes]:
                return [(await _post(client, server.url, b"{}", headers))[0] for _ in range(2)]

            assert await _with_client(go) == [b"0", b"1"]
            assert [r.connection for r in server.requests] == [0, 0, 1]

    run(case())


def test_a_new_connection_dying_before_the_answer_is_not_retried() -> None:
    async def hang_up(ex: Exchange) -> None:
        ex.writer.close()

    headers = StepHeaders([("Idempotency-Key", "k1")])

    async def case() -> None:
        async with scripted(hang_up) as server:
            with pytest.raises(CallError) as err:
                await _with_client(lambda c: _post(c, server.url, b"{}", headers))
        assert str(err.value) == f'Post "{server.url}": EOF'
        assert len(server.requests) == 1

    run(case())


def test_idle_connections_are_closed_after_the_idle_timeout() -> None:
    async def case() -> None:
        async with scripted(answer()) as server:
            loop = asyncio.get_running_loop()
            pool = h1.Pool(loop, "127.0.0.1", server.port, idle_timeout=0.05)
            request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
            (_, reused), (_, again) = await pool.exchange(request), await pool.exchange(request)
            assert (reused, again) == (False, True) and len(pool.idle) == 1
            pool.sweep(time.monotonic() + 1)
            assert pool.idle == []
            await asyncio.sleep(0.05)
            (_, reused) = await pool.exchange(request)
            assert reused is False and server.connections == 2
            await asyncio.sleep(0.1)  # idle past the timeout, the sweep not run: not used either
            (_, reused) = await pool.exchange(request)
            assert reused is False and server.connections == 3
            pool.close()

    run(case())


# --- concurrency, timeouts, errors --------------------------------------------------------------------------------


def test_a_slow_call_does_not_hold_up_another_to_the_same_backend() -> None:
    async def reply(ex: Exchange) -> None:
        if ex.body == b"slow":
            await asyncio.sleep(1.0)
        await answer(ex.body)(ex)

    async def case() -> None:
        async with scripted(reply) as server:

            async def go(client: ServiceClient) -> float:
                slow = asyncio.ensure_future(_post(client, server.url, b"slow"))
                await asyncio.sleep(0.05)
                start = time.monotonic()
                assert await _post(client, server.url, b"fast") == (b"fast", 200)
                took = time.monotonic() - start
                assert await slow == (b"slow", 200)
                return took

            assert await _with_client(go) < 0.5  # type: ignore[operator]
            assert server.connections == 2

    run(case())


def test_timeouts_before_and_after_the_headers() -> None:
    async def silent(ex: Exchange) -> None:
        await asyncio.sleep(3)

    async def stalls_in_body(ex: Exchange) -> None:
        ex.writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{")
        await asyncio.sleep(3)

    async def case() -> None:
        async with scripted(silent) as a, scripted(stalls_in_body) as b:
            for server, expected in (
                (a, f'Post "{a.url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'),
                (b, "context deadline exceeded (Client.Timeout or context cancellation while reading body)"),
            ):
                start = time.monotonic()
                with pytest.raises(CallError) as err:
                    await _with_client(lambda c, s=server: _post(c, s.url), timeout=1)  # type: ignore[misc]
                assert str(err.value) == expected
                assert 0.9 < time.monotonic() - start < 2.5

    run(case())


def test_connection_refused_and_unknown_host_in_gos_words() -> None:
    async def case() -> tuple[str, str]:
        causes = []
        for url in ("http://127.0.0.1:1/x", "http://nosuch.invalid/x"):
            with pytest.raises(CallError) as err:
                await _with_client(lambda c, u=url: _post(c, u))  # type: ignore[misc]
            causes.append(str(err.value))
        return causes[0], causes[1]

    refused, unknown = run(case())  # type: ignore[misc]
    assert refused == 'Post "http://127.0.0.1:1/x": dial tcp 127.0.0.1:1: connect: connection refused'
    assert unknown.startswith('Post "http://nosuch.invalid/x": dial tcp: lookup nosuch.invalid')


def test_a_cancelled_call_closes_its_connection() -> None:
    async def slow(ex: Exchange) -> None:
        await asyncio.sleep(0.3)
        await answer()(ex)

    async def case() -> None:
        async with scripted(slow) as server:

            async def go(client: ServiceClient) -> None:
                call = asyncio.ensure_future(_post(client, server.url))
                await asyncio.sleep(0.05)
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
                assert await _post(client, server.url) == (b'{"ok":1}', 200)

            await _with_client(go)
            assert server.connections == 2  # the cancelled call's connection was not reused

    run(case())


# --- Istio ---------------------------------------------------------------------------------------------------------


def test_istio_probe_and_https_downgrade() -> None:
    from router.client import probe_istio

    async def case() -> None:
        loop = asyncio.get_running_loop()
        async with scripted(answer(b"envoy admin")) as sidecar, scripted(answer(b'{"in":"mesh"}')) as step:
            assert await probe_istio(loop, f"http://127.0.0.1:{sidecar.port}") is True
            assert sidecar.requests[0].head.startswith(b"GET / HTTP/1.1\r\n")
            assert await probe_istio(loop, "http://127.0.0.1:1") is False

            async def go(client: ServiceClient) -> tuple[bytes, int]:
                client._in_mesh = True  # what the probe found, as if localhost:15000 had answered 200
                return await _post(client, f"https://127.0.0.1:{step.port}/v1/models/m:predict")

            assert await _with_client(go) == (b'{"in":"mesh"}', 200)  # plain HTTP to the https URL's host and port

    run(case())
