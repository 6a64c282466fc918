"""Stub model servers on 127.0.0.1 for the router tests: each answers with a handler and records what it got."""

from __future__ import annotations

import asyncio
import contextlib
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
