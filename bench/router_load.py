"""The load side of the router benchmarks: stub backends, a keep-alive load generator, CPU time from ``/proc``.

Stubs: a raw asyncio protocol answering every HTTP/1.1 request with the same 52-byte JSON (``STUB_BODY``). Load:
``c`` keep-alive connections with one request in flight each (the next is sent when the answer is complete); latency
per request, req/s over the measured window (after a warm-up), and the CPU the measured process spent per request.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUB_BODY = b'{"predictions":[[0.125,0.875]],"model_name":"stub"}'
REQUEST = b'{"instances":[[6.8,2.8,4.8,1.4]]}'
_CONTENT_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)


class _StubProtocol(asyncio.Protocol):
    """Answers every HTTP/1.1 request on the connection with the same JSON body."""

    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(STUB_BODY)).encode()
        + b"\r\n\r\n"
        + STUB_BODY
    )

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            match = _CONTENT_LENGTH.search(self.buf, 0, end)
            total = end + 4 + (int(match.group(1)) if match else 0)
            if len(self.buf) < total:
                return
            self.buf = self.buf[total:]
            self.transport.write(self.answer)  # type: ignore[attr-defined]


async def serve_stubs(ports: list[int]) -> None:
    loop = asyncio.get_running_loop()
    for port in ports:
        await loop.create_server(_StubProtocol, "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    await asyncio.Event().wait()


class _Client(asyncio.Protocol):
    """One keep-alive connection sending the next request when the previous answer is complete."""

    def __init__(self, request: bytes, stats: _Stats) -> None:
        self.request, self.stats = request, stats
        self.buf = b""
        self.sent = 0.0
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._send()

    def _send(self) -> None:
        if self.stats.stop:
            self.transport.close()  # type: ignore[attr-defined]
            return
        self.sent = time.perf_counter()
        self.transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        match = _CONTENT_LENGTH.search(self.buf, 0, end)
        total = end + 4 + (int(match.group(1)) if match else 0)
        if len(self.buf) < total:
            return
        ok = self.buf.startswith(b"HTTP/1.1 200")
        self.buf = self.buf[total:]
        self.stats.record(time.perf_counter() - self.sent, ok)
        self._send()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


@dataclass
class _Stats:
    warmup_until: float
    stop: bool = False
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    total: int = 0  # answers, warm-up included
    start: float = 0.0
    end: float = 0.0

    def record(self, seconds: float, ok: bool) -> None:
        self.total += 1
        now = time.perf_counter()
        if now < self.warmup_until:
            return
        if not self.start:
            self.start = now
        self.end = now
        self.latencies.append(seconds)
        if not ok:
            self.errors += 1


@dataclass
class Measure:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    requests: int = 0
    cpu_us: float = 0.0  # CPU time of the measured process per request (user + system), µs


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (``/proc/PID/stat``), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measured(pid: int, port: int, concurrency: int, seconds: float) -> Measure:
    """``load`` with the CPU the process at ``pid`` spent per request over the whole run (warm-up included)."""
    before = cpu_seconds(pid)
    m = await load(port, concurrency, seconds)
    spent = cpu_seconds(pid) - before
    m.cpu_us = 1e6 * spent / max(1, m.requests)
    return m


async def load(port: int, concurrency: int, seconds: float, path: str = "/") -> Measure:
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(REQUEST)}\r\n\r\n"
    ).encode() + REQUEST
    stats = _Stats(warmup_until=time.perf_counter() + min(1.0, seconds / 4))
    loop = asyncio.get_running_loop()
    clients = []
    for _ in range(concurrency):
        _, proto = await loop.create_connection(lambda: _Client(request, stats), "127.0.0.1", port)
        clients.append(proto)
    await asyncio.sleep(seconds + min(1.0, seconds / 4))
    stats.stop = True
    await asyncio.wait([c.closed for c in clients], timeout=10)
    lat = sorted(stats.latencies)
    if len(lat) < 2:
        return Measure(0.0, 0.0, 0.0, stats.errors, stats.total)
    rps = (len(lat) - 1) / (stats.end - stats.start)
    return Measure(
        rps, 1000 * lat[len(lat) // 2], 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], stats.errors, stats.total
    )


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def spawn(
    argv: list[str],
    cpus: set[int],
    ready_port: int | None = None,
    cwd: str = ROOT,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` pinned to ``cpus`` (set before exec, so every thread it starts inherits it); ready when it
    prints ``ready`` or, with ``ready_port``, listens there."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )
    if ready_port is None:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        return proc
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", ready_port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{argv[:3]} exited with {proc.returncode} before listening on {ready_port}"
                ) from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{argv[:3]} did not listen on {ready_port}")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def summary(runs: list[Measure]) -> Measure:
    """Medians over rounds, field by field."""
    return Measure(
        median([m.rps for m in runs]),
        median([m.p50_ms for m in runs]),
        median([m.p99_ms for m in runs]),
        sum(m.errors for m in runs),
        sum(m.requests for m in runs),
        median([m.cpu_us for m in runs]),
    )
