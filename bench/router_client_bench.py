"""Step-client candidates for the InferenceGraph router, side by side on the same stub and the same core.

Each candidate runs in its own process pinned to ``--cpu`` (default 0), on uvloop, and POSTs the router's step
request (52-byte JSON answer, keep-alive) to one stub (``bench/router_load.py``'s raw asyncio stub, on the other
CPUs) from ``c`` concurrent tasks. Printed per candidate and concurrency: CPU µs per call (user + system of the
whole process, its threads included, over the timed calls) and calls/s, medians over ``--rounds`` alternating rounds.

| name | what |
|---|---|
| ``router.h1`` | the router's client (``router.client.ServiceClient.post``: Go's wire headers, pool, errors) |
| ``router.h1+aiofastnet`` | the same, its connections made with aiofastnet's transports instead of uvloop's |
| ``aiohttp`` | one ``ClientSession`` as the router used it before issue 26 (unlimited ``TCPConnector``) |
| ``pyreqwest`` | pyreqwest's async ``Client`` (Rust reqwest/hyper on a Tokio runtime), HTTP/1 only |
| ``curl-cffi`` | curl_cffi's ``AsyncSession`` (libcurl multi on the event loop) |
| ``aiosonic`` | aiosonic's ``HTTPClient`` (pure Python) |

A candidate whose package is not installed is listed as such (none of them but the router's own is a dependency
of the project; ``pip install pyreqwest curl-cffi aiofastnet aiosonic`` to compare them all).

    python bench/router_client_bench.py [--calls 6000] [--rounds 3] [--concurrency 1,16] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, HERE]

import router_load as rl  # noqa: E402 - the stub and helpers

REQUEST = rl.REQUEST
Call = Callable[[], Awaitable[bytes]]
CANDIDATES = ("router.h1", "router.h1+aiofastnet", "aiohttp", "pyreqwest", "curl-cffi", "aiosonic")


# --- candidates: each returns (one call, close) ------------------------------------------------------------------


async def _router_h1(url: str, fastnet: bool = False) -> tuple[Call, Callable[[], Awaitable[None]]]:
    from router import h1
    from router.client import ServiceClient, outbound_headers, parse_target

    if fastnet:
        import aiofastnet

        loop = asyncio.get_running_loop()
        original = loop.create_connection

        async def create_connection(factory, host=None, port=None, **kw):  # type: ignore[no-untyped-def]
            return await aiofastnet.create_connection(loop, factory, host, port, **kw)

        loop.create_connection = create_connection  # type: ignore[method-assign]
        del original
    assert h1  # the module under test
    client = ServiceClient(None)
    await client.start()
    target = parse_target(url)
    headers = outbound_headers([], [])

    async def call() -> bytes:
        body, _ = await client.post(target, REQUEST, headers)
        return body

    return call, client.close


async def _aiohttp(url: str) -> tuple[Call, Callable[[], Awaitable[None]]]:
    import aiohttp

    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=300, keepalive_timeout=90),
        cookie_jar=aiohttp.DummyCookieJar(),
        skip_auto_headers=("Content-Type",),
    )
    headers = [("Content-Type", "application/json")]

    async def call() -> bytes:
        async with session.post(url, data=REQUEST, headers=headers) as resp:
            return await resp.read()

    return call, session.close


async def _pyreqwest(url: str) -> tuple[Call, Callable[[], Awaitable[None]]]:
    from pyreqwest.client import ClientBuilder

    client = ClientBuilder().http1_only().build()
    await client.__aenter__()

    async def call() -> bytes:
        resp = await client.post(url).header("Content-Type", "application/json").body_bytes(REQUEST).build().send()
        return bytes(await resp.bytes())

    return call, client.close


async def _curl_cffi(url: str) -> tuple[Call, Callable[[], Awaitable[None]]]:
    from curl_cffi.requests import AsyncSession

    session = AsyncSession(max_clients=64)
    headers = {"Content-Type": "application/json"}

    async def call() -> bytes:
        resp = await session.post(url, data=REQUEST, headers=headers)
        return bytes(resp.content)

    return call, session.close


async def _aiosonic(url: str) -> tuple[Call, Callable[[], Awaitable[None]]]:
    import aiosonic

    client = aiosonic.HTTPClient()
    headers = {"Content-Type": "application/json"}

    async def call() -> bytes:
        resp = await client.post(url, data=REQUEST, headers=headers)
        return bytes(await resp.content())

    async def close() -> None:
        await client.aclose()

    return call, close


_MAKERS: dict[str, Callable[[str], Awaitable[tuple[Call, Callable[[], Awaitable[None]]]]]] = {
    "router.h1": _router_h1,
    "router.h1+aiofastnet": lambda url: _router_h1(url, fastnet=True),
    "aiohttp": _aiohttp,
    "pyreqwest": _pyreqwest,
    "curl-cffi": _curl_cffi,
    "aiosonic": _aiosonic,
}
_PACKAGES = {"router.h1+aiofastnet": "aiofastnet", "pyreqwest": "pyreqwest", "curl-cffi": "curl_cffi"}


async def _measure(name: str, url: str, concurrency: int, calls: int) -> str:
    call, close = await _MAKERS[name](url)
    expected = rl.STUB_BODY

    async def worker(n: int) -> None:
        for _ in range(n):
            if await call() != expected:
                raise SystemExit(f"{name}: wrong answer")

    await asyncio.gather(*(worker(max(1, calls // 10 // concurrency)) for _ in range(concurrency)))  # warm-up
    start_cpu, start = time.process_time(), time.perf_counter()
    per_worker = calls // concurrency
    await asyncio.gather(*(worker(per_worker) for _ in range(concurrency)))
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start
    await close()
    done = per_worker * concurrency
    return f"{1e6 * cpu / done:.1f} {done / wall:.0f}"


# --- orchestration ------------------------------------------------------------------------------------------------


def available(name: str) -> bool:
    package = _PACKAGES.get(name, name if name in ("aiohttp", "aiosonic") else "")
    if not package:
        return True
    import importlib.util

    return importlib.util.find_spec(package) is not None


def one(name: str, url: str, concurrency: int, calls: int, cpu: int) -> tuple[float, float]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--role", name, "--url", url, "--c", str(concurrency), "--calls", str(calls)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.sched_setaffinity(proc.pid, {cpu})
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed: {err.strip().splitlines()[-1:] or out}")
    us, rate = out.split()
    return float(us), float(rate)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=6000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--concurrency", default="1,16")
    p.add_argument("--cpu", type=int, default=0)
    p.add_argument("--only", default="", help="comma-separated candidate names")
    p.add_argument("--role", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--c", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    import uvloop

    if args.role:
        print(uvloop.run(_measure(args.role, args.url, args.c, args.calls)), flush=True)
        return
    names = [n for n in (args.only.split(",") if args.only else CANDIDATES) if n]
    other = set(os.sched_getaffinity(0)) - {args.cpu} or {args.cpu}
    os.sched_setaffinity(0, other)
    (port,) = rl.free_ports(1)
    stub = rl.spawn(
        [sys.executable, os.path.join(HERE, "router_bench.py"), "--role", "stubs", "--ports", str(port)], other
    )
    url = f"http://127.0.0.1:{port}/v1/models/m:predict"
    print(
        f"router_client_bench {time.strftime('%Y-%m-%d %H:%M')}: clients on CPU {args.cpu}, stub on {sorted(other)}; "
        f"{args.calls} calls x {args.rounds} alternating rounds (medians); load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    try:
        present = [n for n in names if available(n)]
        for name in names:
            if name not in present:
                print(f"  {name}: not installed, skipped")
        for c in (int(x) for x in args.concurrency.split(",")):
            runs: dict[str, list[tuple[float, float]]] = {n: [] for n in present}
            for _ in range(args.rounds):
                for name in present:
                    runs[name].append(one(name, url, c, args.calls, args.cpu))
            print(f"\nc={c}: {'candidate':<22} {'CPU us/call':>11} {'calls/s':>8}  vs aiohttp CPU")
            base = rl.median([r[0] for r in runs.get("aiohttp", [])]) if "aiohttp" in runs else 0.0
            for name in present:
                us = rl.median([r[0] for r in runs[name]])
                rate = rl.median([r[1] for r in runs[name]])
                ratio = f"{us / base:.2f}x" if base else "-"
                print(f"     {name:<22} {us:>11.1f} {rate:>8.0f}  {ratio:>8}")
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        stub.kill()
        stub.wait()


if __name__ == "__main__":
    main()
