"""router.http: the HTTP/1.1 behaviour a client of Go's net/http server relies on, over raw sockets."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from router.http import HttpServer, Request, Response


async def echo(request: Request) -> Response:
    body = f"{request.method} {request.path} {len(request.body)}:".encode() + request.body
    return Response(200, body, (("Content-Type", "text/plain"),))


def with_server(test: Callable[[int, HttpServer], Awaitable[None]], *, read: float = 5, idle: float = 5) -> None:
    async def main() -> None:
        server = HttpServer(echo, read_timeout=read, idle_timeout=idle)
        port = await server.start("127.0.0.1", 0)
        try:
            await test(port, server)
        finally:
            await server.shutdown(1)

    asyncio.run(main())


async def exchange(port: int, raw: bytes, *, until_close: bool = False) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(65536) if not until_close else reader.read(-1), 5)
    writer.close()
    return data


def test_keep_alive_and_pipelined_requests_answered_in_order() -> None:
    async def case(port: int, server: HttpServer) -> None:
        raw = (
            b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
            b"GET /b?q=1 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz"
        )
        data = await exchange(port, raw, until_close=True)
        answers = data.split(b"HTTP/1.1 200 OK\r\n")[1:]
        assert len(answers) == 3
        assert answers[0].endswith(b"\r\n\r\nPOST /a 2:hi") and b"Content-Length: 12\r\n" in answers[0]
        assert answers[1].endswith(b"GET /b 0:")
        assert b"Connection: close\r\n" in answers[2] and answers[2].endswith(b"POST /c 1:z")
        assert all(b"\r\nDate: " in a for a in answers)

    with_server(case)


def test_chunked_body_and_expect_continue() -> None:
    async def case(port: int, server: HttpServer) -> None:
        raw = (
            b"POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n"
            b"Connection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        )
        data = await exchange(port, raw, until_close=True)
        assert data.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
        assert data.endswith(b"POST /x 5:abcde")

    with_server(case)


def test_http10_closes_and_head_has_no_body() -> None:
    async def case(port: int, server: HttpServer) -> None:
        data = await exchange(port, b"GET /old HTTP/1.0\r\n\r\n", until_close=True)
        assert b"Connection: close\r\n" in data and data.endswith(b"GET /old 0:")
        data = await exchange(port, b"HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", until_close=True)
        assert b"Content-Length: 10\r\n" in data and data.endswith(b"\r\n\r\n")

    with_server(case)


def test_malformed_request_is_400_and_closed() -> None:
    async def case(port: int, server: HttpServer) -> None:
        data = await exchange(port, b"NOT HTTP AT ALL\r\n\r\n", until_close=True)
        assert data.startswith(b"HTTP/1.1 400 Bad Request\r\n") and data.endswith(b"400 Bad Request")

    with_server(case)


def test_idle_and_read_timeouts_close_the_connection() -> None:
    async def case(port: int, server: HttpServer) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(reader.read(), 3) == b""  # idle: closed without a word
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")  # the body never completes
        assert await asyncio.wait_for(reader.read(), 3) == b""
        writer.close()

    with_server(case, read=0.5, idle=0.5)


def test_shutdown_closes_idle_connections_and_stops_listening() -> None:
    async def case(port: int, server: HttpServer) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await reader.read(65536)).startswith(b"HTTP/1.1 200 OK")
        await server.shutdown(1)
        assert await asyncio.wait_for(reader.read(), 3) == b""
        writer.close()
        try:
            await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return
        raise AssertionError("still listening after shutdown")

    with_server(case)


def test_a_failing_handler_closes_only_its_connection() -> None:
    async def main() -> None:
        async def handler(request: Request) -> Response:
            if request.path == "/boom":
                raise RuntimeError("bug")
            return Response(200, b"ok")

        server = HttpServer(handler, read_timeout=5, idle_timeout=5)
        port = await server.start("127.0.0.1", 0)
        try:
            assert await exchange(port, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n", until_close=True) == b""
            assert (await exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")).endswith(b"\r\n\r\nok")
        finally:
            await server.shutdown(1)

    asyncio.run(main())
