"""The same graphs through KServe's Go router and ``python -m router``: status, Content-Type and body byte for byte.

Runs when ``KSERVE_GO_ROUTER`` names a built ``cmd/router`` binary (it listens on KServe's fixed port 8080, which
must be free); nothing here builds it. The step servers misbehave on purpose: refused, unknown host, hang-up before
answering, EOF inside the body, timeouts, malformed status lines, a keep-alive connection that dies on its second
request, chunked and gzip answers, and an echo of the request headers in the order they arrived (propagated ones
included), so the error wording and the wire format are compared as well as the routing.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import pytest

GO_ROUTER = os.environ.get("KSERVE_GO_ROUTER", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(
    not (GO_ROUTER and os.access(GO_ROUTER, os.X_OK)), reason="set KSERVE_GO_ROUTER to a built KServe cmd/router"
)

Behaviour = Callable[[bytes, asyncio.StreamWriter, int], Awaitable[bool]]  # False: close the connection


def _reply(raw: bytes, keep: bool = True) -> Behaviour:
    async def behaviour(head: bytes, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(raw)
        return keep

    return behaviour


async def _silent(head: bytes, writer: asyncio.StreamWriter, n: int) -> bool:
    await asyncio.sleep(3)
    return False


async def _dies_on_second(head: bytes, writer: asyncio.StreamWriter, n: int) -> bool:
    if n == 2:
        return False
    writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{"ok":1}\n')
    return True


async def _echo_head(head: bytes, writer: asyncio.StreamWriter, n: int) -> bool:
    lines = [line.decode() for line in head.split(b"\r\n")[1:] if line and not line.lower().startswith(b"host:")]
    body = json.dumps(lines).encode()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    return True


_ZIPPED = gzip.compress(b'{"z":1}')
BEHAVIOURS: dict[str, Behaviour] = {
    "ok": _reply(b'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{"ok":1}\n'),
    "hangup": _reply(b"", keep=False),
    "short": _reply(b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"a', keep=False),
    "silent": _silent,
    "dies_on_second": _dies_on_second,
    "smtp": _reply(b"SMTP ready\r\n\r\n", keep=False),
    "garbage": _reply(b"garbage\r\n\r\n", keep=False),
    "bad_code": _reply(b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", keep=False),
    "bad_version": _reply(b"HTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", keep=False),
    "chunked": _reply(b'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n'),
    "gzip": _reply(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(_ZIPPED) + _ZIPPED),
    "echo_head": _echo_head,
}


def _sequence(url: str, **spec: object) -> dict[str, object]:
    return {"nodes": {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": url}]}}, **spec}


def _cases(url: dict[str, str]) -> dict[str, tuple[dict[str, object], dict[str, str], bytes]]:
    """name → (graph spec, environment, extra request headers)."""
    plain: dict[str, str] = {}
    cases: dict[str, tuple[dict[str, object], dict[str, str], bytes]] = {
        "refused": (_sequence("http://127.0.0.1:1/x"), plain, b""),
        "unknown host": (_sequence("http://nosuch.invalid/x"), plain, b""),
        "malformed url": (_sequence("http://a b/x"), plain, b""),
        "timeout": (_sequence(url["silent"], routerTimeouts={"serviceClient": 1}), plain, b""),
        "ensemble with gzip": (
            {
                "nodes": {
                    "root": {
                        "routerType": "Ensemble",
                        "steps": [{"serviceUrl": url["gzip"]}, {"serviceUrl": url["ok"]}],
                    }
                }
            },
            plain,
            b"",
        ),
        "propagated headers": (
            _sequence(url["echo_head"]),
            {"PROPAGATE_HEADERS": "X-.*,Authorization,User-Agent"},
            b"x-request-id: r1\r\nAuthorization: Bearer t\r\nUser-Agent: curl/8\r\nx-request-id: r2\r\n",
        ),
    }
    for name in ("hangup", "short", "dies_on_second", "smtp", "garbage", "bad_code", "bad_version", "chunked"):
        cases[name] = (_sequence(url[name]), plain, b"")
    cases["request headers"] = (_sequence(url["echo_head"]), plain, b"")
    return cases


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ask(port: int, extra: bytes) -> bytes:
    """One request; the answer's status line, Content-Type and body."""
    body = b'{"instances":[1]}'
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n" + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = int(next(v for v in lines if v.lower().startswith(b"content-length")).split(b":")[1])
        while len(rest) < length:
            rest += s.recv(65536)
    kept = [lines[0]] + [v for v in lines if v.lower().startswith(b"content-type")]
    return b"\r\n".join(kept) + b"\r\n\r\n" + rest


async def _answers(argv: list[str], port: int, env: dict[str, str], extra: bytes) -> list[bytes]:
    proc = subprocess.Popen(argv, env={**os.environ, **env}, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"{argv[0]} did not listen on {port}"
                await asyncio.sleep(0.05)
        loop = asyncio.get_running_loop()
        out = []
        for _ in range(2):  # the second request reuses the router's connections to the steps
            out.append(await loop.run_in_executor(None, _ask, port, extra))
            await asyncio.sleep(0.05)
        return out
    finally:
        proc.kill()
        proc.wait()


async def _serve(behaviour: Behaviour) -> asyncio.base_events.Server:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (int(v.split(b":")[1]) for v in head.split(b"\r\n") if v.lower().startswith(b"content-length")), 0
                )
                await reader.readexactly(length)
                n += 1
                if not await behaviour(head, writer, n):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def test_answers_match_kserves_go_router_byte_for_byte() -> None:
    async def case() -> dict[str, tuple[list[bytes], list[bytes]]]:
        servers = {name: await _serve(b) for name, b in BEHAVIOURS.items()}
        url = {n: f"http://127.0.0.1:{s.sockets[0].getsockname()[1]}/v1/models/m:predict" for n, s in servers.items()}
        results = {}
        try:
            for name, (spec, env, extra) in _cases(url).items():
                graph = json.dumps(spec)
                port = _free_port()
                ours = [
                    sys.executable,
                    "-m",
                    "router",
                    "--graph-json",
                    graph,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                ]
                go = await _answers([GO_ROUTER, "--graph-json", graph], 8080, env, extra)
                py = await _answers([*ours, "--drain-seconds", "0"], port, env, extra)
                results[name] = (go, py)
        finally:
            for s in servers.values():
                s.close()
        return results

    results = asyncio.run(case())
    differ = {name: pair for name, pair in results.items() if pair[0] != pair[1]}
    assert not differ, "\n".join(f"{n}:\n  go {g}\n  py {p}" for n, (g, p) in differ.items())
    assert len(results) == 15
