"""InferenceGraph router speed: ``python -m router`` against a minimal async forwarder, side by side.

Graphs: a 2-step Sequence (``$response`` chaining) and a 3-way Ensemble, over fast stub backends on 127.0.0.1.
Baseline, measured in the same run: a minimal forwarder on the same stack (the router's HTTP server
``router.http``, one pooled aiohttp ``ClientSession``, uvloop) that hard-codes the same backend calls (Sequence: A then B with A's answer;
Ensemble: A, B, C at once, answers merged by name with orjson) and nothing else: no graph, no header propagation, no
Go JSON fix-ups, no error handling. The router and the forwarder each run on one core (``--router-cpu``); the stubs
(raw asyncio protocol, fixed answer) and the load generator (raw asyncio keep-alive connections, one request in
flight per connection) run on the other cores.

Printed per graph and concurrency: req/s of each and the ratio (target: router ≥ 80% of the forwarder), latency
p50/p99, CPU µs per request of the router/forwarder process (``/proc/PID/stat``; steadier than req/s on a shared
machine) and its ratio (forwarder CPU ÷ router CPU, so 80% means the router spends 1.25x the CPU), all as medians
over rounds (ratios: medians of per-round ratios, both sides measured seconds apart), and the latency each adds per
hop at c=1: (end-to-end − backend time) / hops, where the backend time is
the direct stub latency measured in the same run, times 2 for the Sequence (sequential calls) and once for the
Ensemble (parallel calls), and hops is 2 for the Sequence and 1 for the Ensemble.

    python bench/router_bench.py [--seconds 4] [--rounds 2] [--concurrency 1,8,64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUB_BODY = b'{"predictions":[[0.125,0.875]],"model_name":"stub"}'
REQUEST = b'{"instances":[[6.8,2.8,4.8,1.4]]}'
_CONTENT_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)


# --- roles run as subprocesses ------------------------------------------------------------------------------------


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


async def _serve_stubs(ports: list[int]) -> None:
    loop = asyncio.get_running_loop()
    for port in ports:
        await loop.create_server(_StubProtocol, "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    await asyncio.Event().wait()


async def _serve_forwarder(kind: str, port: int, urls: list[str]) -> None:
    import aiohttp
    import orjson

    from router.http import HttpServer, Request, Response

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    headers = {"Content-Type": "application/json"}
    json_type = (("Content-Type", "application/json"),)

    async def post(url: str, body: bytes) -> tuple[bytes, int]:
        async with session.post(url, data=body, headers=headers) as resp:
            return await resp.read(), resp.status

    async def sequence(request: Request) -> Response:
        first, _ = await post(urls[0], request.body)
        second, status = await post(urls[1], first)
        return Response(status, second, json_type)

    async def ensemble(request: Request) -> Response:
        answers = await asyncio.gather(*(post(url, request.body) for url in urls))
        merged = {name: orjson.loads(data) for name, (data, _) in zip("abc", answers)}
        return Response(200, orjson.dumps(merged, option=orjson.OPT_SORT_KEYS), json_type)

    server = HttpServer(sequence if kind == "sequence" else ensemble, read_timeout=60, idle_timeout=180)
    await server.start("127.0.0.1", port)
    print("ready", flush=True)
    await asyncio.Event().wait()


async def _client_only(url: str, concurrency: int = 16, calls: int = 8000) -> None:
    """The aiohttp client alone, as the router uses it: CPU per call (the floor under each step of a graph)."""
    import aiohttp

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    headers = [("Content-Type", "application/json")]

    async def worker(n: int) -> None:
        for _ in range(n):
            async with session.post(url, data=REQUEST, headers=headers) as resp:
                await resp.read()

    await asyncio.gather(*(worker(calls // 10 // concurrency) for _ in range(concurrency)))  # warm-up
    start_cpu, start = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(calls // concurrency) for _ in range(concurrency)))
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start
    await session.close()
    print(f"{1e6 * cpu / calls:.1f} {calls / wall:.0f}", flush=True)


# --- load generator -----------------------------------------------------------------------------------------------


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


# --- orchestration ------------------------------------------------------------------------------------------------


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _spawn(argv: list[str], cpus: set[int], ready_port: int | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    os.sched_setaffinity(proc.pid, cpus)  # before it has imported anything, let alone served
    if ready_port is None:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        return proc
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", ready_port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{argv[:3]} did not listen on {ready_port}")


def _client_alone(url: str, cpus: set[int]) -> tuple[float, float]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--role", "client", "--urls", url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    os.sched_setaffinity(proc.pid, cpus)
    out, _ = proc.communicate(timeout=300)
    cpu, rate = out.split()
    return float(cpu), float(rate)


def _graph(kind: str, urls: list[str]) -> str:
    if kind == "sequence":
        steps = [{"name": "a", "serviceUrl": urls[0]}, {"name": "b", "serviceUrl": urls[1], "data": "$response"}]
        return json.dumps({"nodes": {"root": {"routerType": "Sequence", "steps": steps}}})
    steps = [{"name": name, "serviceUrl": url} for name, url in zip("abc", urls)]
    return json.dumps({"nodes": {"root": {"routerType": "Ensemble", "steps": steps}}})


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _summary(runs: list[Measure]) -> Measure:
    """Medians over rounds, field by field."""
    return Measure(
        _median([m.rps for m in runs]),
        _median([m.p50_ms for m in runs]),
        _median([m.p99_ms for m in runs]),
        sum(m.errors for m in runs),
        sum(m.requests for m in runs),
        _median([m.cpu_us for m in runs]),
    )


def run(args: argparse.Namespace) -> None:
    router_cpus = {args.router_cpu}
    other = set(os.sched_getaffinity(0)) - router_cpus or router_cpus
    os.sched_setaffinity(0, other)
    stub_ports = _free_ports(3)
    urls = [f"http://127.0.0.1:{p}/v1/models/m{i}:predict" for i, p in enumerate(stub_ports)]
    procs = [_spawn([sys.executable, __file__, "--role", "stubs", "--ports", ",".join(map(str, stub_ports))], other)]
    print(
        f"router_bench {time.strftime('%Y-%m-%d %H:%M')}: router/forwarder on CPU {args.router_cpu}; stubs + load "
        f"generator on CPUs {sorted(other)}; {args.rounds} rounds x {args.seconds}s per figure (medians over rounds); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    concurrency = [int(c) for c in args.concurrency.split(",")]
    try:
        direct = asyncio.run(load(stub_ports[0], 1, args.seconds))
        print(f"direct stub latency at c=1: p50 {direct.p50_ms:.3f} ms, p99 {direct.p99_ms:.3f} ms")
        client = _client_alone(urls[0], router_cpus)
        print(
            f"aiohttp client alone on CPU {args.router_cpu} (c=16): {client[0]:.1f} us CPU per call, "
            f"{client[1]:.0f} calls/s"
        )
        for kind, calls, hops in (("sequence", 2, 2), ("ensemble", 1, 1)):
            _compare(
                kind, urls if kind == "ensemble" else urls[:2], concurrency, direct, calls, hops, router_cpus, args
            )
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _compare(
    kind: str,
    urls: list[str],
    concurrency: list[int],
    direct: Measure,
    calls: int,
    hops: int,
    cpus: set[int],
    args: argparse.Namespace,
) -> None:
    rport, fport = _free_ports(2)
    router = _spawn(
        [
            sys.executable,
            "-m",
            "router",
            "--graph-json",
            _graph(kind, urls),
            "--host",
            "127.0.0.1",
            "--port",
            str(rport),
            "--drain-seconds",
            "0",
        ],
        cpus,
        ready_port=rport,
    )
    forwarder = _spawn(
        [
            sys.executable,
            __file__,
            "--role",
            "forwarder",
            "--kind",
            kind,
            "--port",
            str(fport),
            "--urls",
            ",".join(urls),
        ],
        cpus,
    )
    title = "2-step Sequence" if kind == "sequence" else "3-way Ensemble"
    print(f"\n{title}:")
    print(
        f"  {'c':>3} | {'router req/s':>12} {'p50 ms':>7} {'p99 ms':>7} {'CPU us/req':>10} | {'forwarder req/s':>15} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'CPU us/req':>10} | req/s ratio | CPU ratio"
    )
    try:
        for c in concurrency:
            r_runs, f_runs = [], []
            for _ in range(args.rounds):
                f_runs.append(asyncio.run(measured(forwarder.pid, fport, c, args.seconds)))
                r_runs.append(asyncio.run(measured(router.pid, rport, c, args.seconds)))
            r, f = _summary(r_runs), _summary(f_runs)
            ratio = _median([a.rps / b.rps for a, b in zip(r_runs, f_runs) if b.rps])
            cpu = _median([b.cpu_us / a.cpu_us for a, b in zip(r_runs, f_runs) if a.cpu_us])
            errors = r.errors + f.errors
            print(
                f"  {c:>3} | {r.rps:>12.0f} {r.p50_ms:>7.2f} {r.p99_ms:>7.2f} {r.cpu_us:>10.0f} | {f.rps:>15.0f} "
                f"{f.p50_ms:>7.2f} {f.p99_ms:>7.2f} {f.cpu_us:>10.0f} | {ratio:>11.0%} | {cpu:>9.0%}"
                + (f"  ({errors} non-200 answers)" if errors else "")
            )
            if c == 1:
                for name, m in (("router", r), ("forwarder", f)):
                    p50 = (m.p50_ms - calls * direct.p50_ms) / hops
                    p99 = (m.p99_ms - calls * direct.p99_ms) / hops
                    print(f"        added per hop at c=1, {name}: p50 {p50:.3f} ms, p99 {p99:.3f} ms")
    finally:
        for proc in (router, forwarder):
            proc.kill()
            proc.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--concurrency", default="1,8,64")
    p.add_argument("--router-cpu", type=int, default=0)
    p.add_argument("--role", choices=["stubs", "forwarder", "client"], help=argparse.SUPPRESS)
    p.add_argument("--ports", help=argparse.SUPPRESS)
    p.add_argument("--kind", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--urls", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.role:
        import uvloop

        if args.role == "stubs":
            coro = _serve_stubs([int(x) for x in args.ports.split(",")])
        elif args.role == "client":
            coro = _client_only(args.urls)
        else:
            coro = _serve_forwarder(args.kind, args.port, args.urls.split(","))
        uvloop.run(coro)
        return
    import uvloop

    uvloop.install()
    run(args)


if __name__ == "__main__":
    main()
