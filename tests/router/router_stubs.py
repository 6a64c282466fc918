"""Stub model servers on 127.0.0.1 for the router tests: each answers with a handler and records what it got."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

Handler = Callable[[bytes, dict[str, list[str]]], Awaitable[tuple[int, bytes]] | tuple[int, bytes]]


@dataclass
class Stub:
    url: str
    base: str = ""
    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, list[str]]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def json_answer(value: Any, status: int = 200) -> Handler:
    data = orjson.dumps(value)
    return lambda body, headers: (status, data)


def echo_headers(body: bytes, headers: dict[str, list[str]]) -> tuple[int, bytes]:
    return 200, orjson.dumps({"predictions": "1", "headers": headers})


@contextlib.asynccontextmanager
async def stubs(*handlers: Handler) -> AsyncIterator[list[Stub]]:
    """One server per handler, stopped on exit."""
    loop = asyncio.get_running_loop()
    servers, out = [], []
    for handler in handlers:
        stub = Stub("")

        async def serve(request: web.BaseRequest, handler: Handler = handler, stub: Stub = stub) -> web.Response:
            body = await request.read()
            grouped: dict[str, list[str]] = {}
            for name, value in request.headers.items():
                grouped.setdefault(str(name), []).append(value)
            stub.bodies.append(body)
            stub.paths.append(request.path)
            stub.headers.append(grouped)
            result = handler(body, grouped)
            if asyncio.iscoroutine(result):
                result = await result
            status, data = result  # type: ignore[misc]
            return web.Response(status=status, body=data, headers={"Content-Type": "application/json"})

        server = await loop.create_server(web.Server(serve), "127.0.0.1", 0)
        stub.base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        stub.url = stub.base + "/v1/models/m:predict"
        servers.append(server)
        out.append(stub)
    try:
        yield out
    finally:
        for server in servers:
            server.close()


# --- a raw stub whose answers can fail below HTTP ------------------------------------------------------------------

HANG_UP = "hang-up"  # close the connection without answering (the client sees EOF)
RESET = "reset"  # abort the connection (the client sees connection reset by peer)
SILENT = "silent"  # read the request and never answer


@dataclass
class RawStub:
    url: str
    base: str
    requests: list[bytes] = field(default_factory=list)


def http_answer(status: int, body: bytes, reason: str = "X") -> bytes:
    return b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        status,
        reason.encode(),
        len(body),
        body,
    )


@contextlib.asynccontextmanager
async def raw_stub(*behaviours: bytes | str) -> AsyncIterator[RawStub]:
    """A server answering its n-th request (over all connections) with ``behaviours[n]``, the last one repeating:
    the bytes of a whole HTTP answer, or :data:`HANG_UP`, :data:`RESET`, :data:`SILENT`."""
    loop = asyncio.get_running_loop()
    stub = RawStub("", "")

    class Serve(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport: asyncio.Transport = transport  # type: ignore[assignment]
            self.buffer = b""

        def data_received(self, data: bytes) -> None:
            self.buffer += data
            while b"\r\n\r\n" in self.buffer:
                head, _, rest = self.buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if len(rest) < length:
                    return
                stub.requests.append(rest[:length])
                self.buffer = rest[length:]
                behaviour = behaviours[min(len(stub.requests), len(behaviours)) - 1]
                if behaviour == HANG_UP:
                    self.transport.close()
                elif behaviour == RESET:  # SO_LINGER 0: close sends RST, not FIN
                    sock = self.transport.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.transport.abort()
                elif behaviour != SILENT:
                    assert isinstance(behaviour, bytes)
                    self.transport.write(behaviour)

    server = await loop.create_server(Serve, "127.0.0.1", 0)
    stub.base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    stub.url = stub.base + "/v1/models/m:predict"
    try:
        yield stub
    finally:
        server.close()


def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/models/m:predict"
