"""One write per response (server.http_protocol.CoalescingCycle): the head leaves with the first body part,
and every kind of response (plain, HEAD, Connection: close, streamed, pipelined) still arrives whole and in order."""

from __future__ import annotations

import asyncio

import uvicorn
from starlette.types import Receive, Scope, Send
from uvicorn.server import ServerState

from server.config import Limits
from server.http_protocol import BoundedHttpToolsProtocol, CoalescingCycle


class RecordingTransport(asyncio.Transport):
    """What the protocol writes, one entry per ``write`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.closed_by_server = False  # closed before the test dropped the connection

    def get_extra_info(self, name: str, default: object = None) -> object:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8080)}.get(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        assert not self.closed, "write after close"
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await receive()
    if scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        for part in (b"one,", b"two,", b"three"):
            await send({"type": "http.response.body", "body": part, "more_body": True})
            await asyncio.sleep(0)
        await send({"type": "http.response.body", "body": b""})
        return
    body = b'{"answer":' + scope["path"].encode()[1:] + b"}"
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


async def exchange(raw: bytes, responses: int = 1) -> RecordingTransport:
    config = uvicorn.Config(app=app, lifespan="off", log_level="warning", server_header=False, date_header=False)
    config.load()
    BoundedHttpToolsProtocol.configure(Limits())
    protocol = BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    transport = RecordingTransport()
    try:
        protocol.connection_made(transport)
        protocol.data_received(raw)
        for _ in range(200):
            if sum(w.startswith(b"HTTP/1.1 ") for w in transport.writes) >= responses and not protocol.tasks:
                break
            await asyncio.sleep(0)
        assert type(protocol.cycle) is CoalescingCycle
        transport.closed_by_server = transport.closed
        protocol.connection_lost(None)
    finally:
        BoundedHttpToolsProtocol._sweeping = False  # the sweep timer dies with this test's loop
    return transport


def test_head_and_body_leave_in_one_write() -> None:
    transport = asyncio.run(exchange(b"POST /41 HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}"))
    assert len(transport.writes) == 1
    head, body = transport.writes[0].split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-length: 13" in head and b"content-type: application/json" in head
    assert body == b'{"answer":41}'
    assert not transport.closed_by_server


def test_head_request_gets_its_head_alone() -> None:
    transport = asyncio.run(exchange(b"HEAD /7 HTTP/1.1\r\nHost: t\r\n\r\n"))
    assert len(transport.writes) == 1
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and transport.writes[0].endswith(b"\r\n\r\n")
    assert b"content-length: 12" in transport.writes[0]


def test_connection_close_writes_once_then_closes() -> None:
    transport = asyncio.run(exchange(b"GET /5 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"))
    assert len(transport.writes) == 1
    assert b"connection: close" in transport.writes[0] and transport.writes[0].endswith(b'{"answer":5}')
    assert transport.closed_by_server


def test_streamed_response_keeps_its_order() -> None:
    transport = asyncio.run(exchange(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"))
    first = transport.writes[0]
    assert first.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in first
    assert first.endswith(b"\r\n\r\n4\r\none,\r\n")  # the head went out with the first chunk
    assert b"".join(transport.writes[1:]) == b"4\r\ntwo,\r\n5\r\nthree\r\n0\r\n\r\n"


def test_pipelined_requests_answer_in_order() -> None:
    raw = b"GET /1 HTTP/1.1\r\nHost: t\r\n\r\nGET /2 HTTP/1.1\r\nHost: t\r\n\r\n"
    transport = asyncio.run(exchange(raw, responses=2))
    assert len(transport.writes) == 2
    assert transport.writes[0].endswith(b'{"answer":1}') and transport.writes[1].endswith(b'{"answer":2}')


def test_a_worker_process_takes_its_limits_from_the_parents_options(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``--workers N``: uvicorn builds the protocol in a fresh process, where only the environment has the options."""
    from server.config import OPTIONS_ENV, options_from_environment, options_to_environment, parse_options

    monkeypatch.setenv(OPTIONS_ENV, "")  # restored (to unset) after the test
    assert options_from_environment() is None
    options = parse_options(
        ["--model_dir", "/d", "--max_header_size", "4096", "--body_timeout", "2s", "--workers", "2"]
    )
    options_to_environment(options)
    assert options_from_environment() == options
    monkeypatch.setattr(BoundedHttpToolsProtocol, "limits", None)  # as in a worker that has not configured it
    config = uvicorn.Config(app=app, lifespan="off", log_level="warning")
    config.load()

    async def build() -> None:
        BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})

    asyncio.run(build())
    assert BoundedHttpToolsProtocol.limits == Limits(4096, 30.0, 2.0, 0)
