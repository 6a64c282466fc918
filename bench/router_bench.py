"""InferenceGraph router speed: ``python -m router`` against named baselines, side by side in one run.

Graphs, over fast stub backends on 127.0.0.1 (``bench/router_load.py``): a 2-step **Sequence** (``$response``
chaining), a 3-way **Ensemble**, a 2-way 50/50 **Splitter** and a 2-step **Switch** (the first condition,
``instances.#(=="x")``, never matches; the second, ``instances``, does).

Contenders, each pinned to ``--router-cpu`` in turn, measured in alternating rounds:

* ``router``: this checkout's ``python -m router``;
* ``forwarder`` (the named baseline): the same stack (``router.http``'s server, ``router.h1``'s pooled client,
  uvloop) hard-coding the same backend calls (Sequence: A then B with A's answer; Ensemble: A, B, C at once, answers
  merged by name with orjson; Splitter: A or B at random; Switch: B) and nothing else: no graph, no header
  propagation, no Go JSON fix-ups, no error handling;
* ``before`` (``--before REF``): ``python -m router`` of that git commit (``git archive REF router`` in a temporary
  directory), run by the same interpreter;
* ``go`` (``--go-router PATH``): KServe's Go router binary (``cmd/router``), ``GOMAXPROCS=1``. It listens on port
  8080 (KServe's fixed ``RouterPort``), which must be free;
* ``metrics`` (``--metrics``): this checkout's router with ``--metrics-port`` (every request, node and call
  recorded; scraped once after the run to check the counts);
* ``retry`` (``--retries``): this checkout's router with ``defaultRetry`` configured (``maxRetries: 3``); the stubs
  never fail, so every step succeeds first time and this measures what a configured retry costs such a request.

With ``--metrics`` or ``--retries`` a last table gives each variant's CPU per request against ``router`` (median
of per-round ratios, both measured seconds apart in the same round).

The stubs and the load generator (raw asyncio keep-alive connections, one request in flight per connection) run on
the other CPUs; each round starts with the next contender, so none is always measured first. Printed per graph, concurrency and contender: req/s, latency p50/p99, CPU µs per request of its
process (``/proc/PID/stat``; steadier than req/s on a shared machine), and against the forwarder: req/s ratio and
CPU ratio (forwarder CPU ÷ this one's, so 80% means 1.25x the forwarder's CPU). All are medians over rounds (ratios:
medians of per-round ratios, both sides measured seconds apart). At c=1 the latency each adds per hop: (end-to-end −
backend time) / hops, where the backend time is the direct stub latency measured in the same run, times the calls
made one after another (2 for the Sequence, 1 otherwise), and hops is that same number.

    python bench/router_bench.py [--seconds 3] [--rounds 3] [--concurrency 1,8,64] [--graphs sequence,ensemble,...]
                                 [--before main] [--go-router PATH] [--metrics] [--retries]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import router_load as rl  # noqa: E402

GO_ROUTER_PORT = 8080
TITLES = {
    "sequence": "2-step Sequence ($response chaining)",
    "ensemble": "3-way Ensemble",
    "splitter": "2-way Splitter (50/50)",
    "switch": "2-step Switch (second condition matches)",
}
SEQUENTIAL_CALLS = {"sequence": 2, "ensemble": 1, "splitter": 1, "switch": 1}
BACKENDS = {"sequence": 2, "ensemble": 3, "splitter": 2, "switch": 2}
VARIANTS = ("metrics", "retry")  # this checkout's router with a feature on
RETRY = {"maxRetries": 3, "initialDelayMs": 100, "maxDelayMs": 1000}


# --- the forwarder (a role run as a subprocess) --------------------------------------------------------------------


async def _serve_forwarder(kind: str, port: int, urls: list[str]) -> None:
    import orjson

    from router import h1
    from router.client import parse_target
    from router.http import HttpServer, Request, Response

    loop = asyncio.get_running_loop()
    targets = [parse_target(u) for u in urls]
    pools = [h1.Pool(loop, t.host, t.port) for t in targets]
    heads = [
        f"POST {t.request_uri} HTTP/1.1\r\nHost: {t.host_header}\r\nContent-Type: application/json\r\n".encode()
        for t in targets
    ]
    json_type = (("Content-Type", "application/json"),)

    async def post(i: int, body: bytes) -> tuple[bytes, int]:
        answer, _ = await pools[i].exchange(heads[i] + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return answer.body, answer.status

    async def sequence(request: Request) -> Response:
        first, _ = await post(0, request.body)
        second, status = await post(1, first)
        return Response(status, second, json_type)

    async def ensemble(request: Request) -> Response:
        answers = await asyncio.gather(*(post(i, request.body) for i in range(len(urls))))
        merged = {name: orjson.loads(data) for name, (data, _) in zip("abc", answers)}
        return Response(200, orjson.dumps(merged, option=orjson.OPT_SORT_KEYS), json_type)

    async def splitter(request: Request) -> Response:
        body, status = await post(random.randrange(2), request.body)
        return Response(status, body, json_type)

    async def switch(request: Request) -> Response:
        body, status = await post(1, request.body)
        return Response(status, body, json_type)

    handlers = {"sequence": sequence, "ensemble": ensemble, "splitter": splitter, "switch": switch}
    server = HttpServer(handlers[kind], read_timeout=60, idle_timeout=180)
    await server.start("127.0.0.1", port)
    print("ready", flush=True)
    await asyncio.Event().wait()


# --- graphs and contenders ----------------------------------------------------------------------------------------


def graph_json(kind: str, urls: list[str], retry: bool = False) -> str:
    if kind == "sequence":
        steps = [{"name": "a", "serviceUrl": urls[0]}, {"name": "b", "serviceUrl": urls[1], "data": "$response"}]
    elif kind == "ensemble":
        steps = [{"name": name, "serviceUrl": url} for name, url in zip("abc", urls)]
    elif kind == "splitter":
        steps = [{"name": n, "serviceUrl": u, "weight": 50} for n, u in zip("ab", urls)]
    else:
        steps = [
            {"name": "a", "serviceUrl": urls[0], "condition": 'instances.#(=="x")'},
            {"name": "b", "serviceUrl": urls[1], "condition": "instances"},
        ]
    spec: dict[str, object] = {"nodes": {"root": {"routerType": kind.capitalize(), "steps": steps}}}
    if retry:
        spec["defaultRetry"] = RETRY
    return json.dumps(spec)


@dataclass
class Contender:
    name: str
    proc: subprocess.Popen[bytes]
    port: int
    metrics_port: int | None = None


def _router_argv(graph: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "router",
        "--graph-json",
        graph,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--drain-seconds",
        "0",
    ]


def start_contenders(
    kind: str,
    urls: list[str],
    cpus: set[int],
    before_tree: str | None,
    go_router: str | None,
    variants: tuple[str, ...] = (),
) -> list[Contender]:
    graph = graph_json(kind, urls)
    rport, fport, bport, mport, mmport, tport = rl.free_ports(6)
    out = [Contender("router", rl.spawn(_router_argv(graph, rport), cpus, ready_port=rport), rport)]
    if "metrics" in variants:
        argv = [*_router_argv(graph, mport), "--metrics-port", str(mmport)]
        out.append(Contender("metrics", rl.spawn(argv, cpus, ready_port=mport), mport, mmport))
    if "retry" in variants:
        argv = _router_argv(graph_json(kind, urls, retry=True), tport)
        out.append(Contender("retry", rl.spawn(argv, cpus, ready_port=tport), tport))
    forwarder = [sys.executable, __file__, "--role", "forwarder", "--kind", kind, "--port", str(fport)]
    out.append(Contender("forwarder", rl.spawn([*forwarder, "--urls", ",".join(urls)], cpus), fport))
    if before_tree is not None:
        proc = rl.spawn(_router_argv(graph, bport), cpus, ready_port=bport, cwd=before_tree)
        out.append(Contender("before", proc, bport))
    if go_router is not None:
        try:
            socket.create_connection(("127.0.0.1", GO_ROUTER_PORT), timeout=1).close()
        except OSError:
            pass
        else:
            stop(out)
            raise SystemExit(f"--go-router: port {GO_ROUTER_PORT} is in use; the Go router listens there")
        env = {**os.environ, "GOMAXPROCS": "1"}
        proc = rl.spawn([go_router, "--graph-json", graph], cpus, ready_port=GO_ROUTER_PORT, env=env)
        out.append(Contender("go", proc, GO_ROUTER_PORT))
    return out


def stop(contenders: list[Contender]) -> None:
    for c in contenders:
        c.proc.kill()
        c.proc.wait()


def checkout(ref: str) -> str:
    """``router/`` of git commit ``ref`` in a temporary directory (the caller removes it)."""
    into = tempfile.mkdtemp(prefix="router-before-")
    archive = subprocess.run(["git", "-C", rl.ROOT, "archive", ref, "router"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return into


# --- measuring and printing ---------------------------------------------------------------------------------------


def compare(
    kind: str,
    contenders: list[Contender],
    concurrency: list[int],
    direct: rl.Measure,
    args: argparse.Namespace,
    variant_ratios: dict[tuple[str, int, str], float] | None = None,
) -> dict[tuple[int, str], rl.Measure]:
    print(f"\n{TITLES[kind]}:")
    print(
        f"  {'c':>3} {'contender':<10} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'CPU us/req':>10} "
        f"{'req/s vs fwd':>12} {'CPU fwd/this':>12}"
    )
    results: dict[tuple[int, str], rl.Measure] = {}
    hops = SEQUENTIAL_CALLS[kind]
    for c in concurrency:
        runs: dict[str, list[rl.Measure]] = {x.name: [] for x in contenders}
        for r in range(args.rounds):
            # each round starts with the next contender: none is always measured first (or right after another)
            for x in contenders[r % len(contenders) :] + contenders[: r % len(contenders)]:
                runs[x.name].append(asyncio.run(rl.measured(x.proc.pid, x.port, c, args.seconds)))
        fwd = runs["forwarder"]
        for x in contenders:
            if variant_ratios is not None and x.name in VARIANTS:
                base = runs["router"]
                per_round = [a.cpu_us / b.cpu_us for a, b in zip(runs[x.name], base) if b.cpu_us]
                variant_ratios[(kind, c, x.name)] = rl.median(per_round)
        for x in contenders:
            m = results[(c, x.name)] = rl.summary(runs[x.name])
            rps = rl.median([a.rps / b.rps for a, b in zip(runs[x.name], fwd) if b.rps])
            cpu = rl.median([b.cpu_us / a.cpu_us for a, b in zip(runs[x.name], fwd) if a.cpu_us])
            errors = f"  ({m.errors} non-200 answers)" if m.errors else ""
            print(
                f"  {c:>3} {x.name:<10} {m.rps:>8.0f} {m.p50_ms:>7.3f} {m.p99_ms:>7.2f} {m.cpu_us:>10.1f} "
                f"{rps:>12.0%} {cpu:>12.0%}{errors}"
            )
        if c == 1:
            for x in contenders:
                m = results[(c, x.name)]
                p50 = (m.p50_ms - hops * direct.p50_ms) / hops
                p99 = (m.p99_ms - hops * direct.p99_ms) / hops
                print(f"        added per hop at c=1, {x.name}: p50 {p50:.3f} ms, p99 {p99:.3f} ms")
    return results


def print_summary(all_results: dict[str, dict[tuple[int, str], rl.Measure]], names: list[str]) -> None:
    others = [n for n in ("before", "go") if n in names]
    if not others:
        return
    print("\nrouter against the other contenders (req/s ratio · CPU ratio other/router, from the medians above):")
    for kind, results in all_results.items():
        cells = []
        for c in sorted({c for c, _ in results}):
            r = results[(c, "router")]
            parts = [
                f"{o} {r.rps / results[(c, o)].rps:.2f}x · {results[(c, o)].cpu_us / r.cpu_us:.2f}x"
                for o in others
                if results[(c, o)].rps and r.cpu_us
            ]
            cells.append(f"c={c}: " + ", ".join(parts))
        print(f"  {kind:<9} " + "; ".join(cells))


def print_variants(ratios: dict[tuple[str, int, str], float], variants: tuple[str, ...]) -> None:
    if not ratios:
        return
    print("\nrouter with a feature on against the router without (CPU us/req ratio variant/router, per-round medians):")
    for kind in dict.fromkeys(k for k, _, _ in ratios):
        cells = []
        for c in sorted({c for k, c, _ in ratios if k == kind}):
            parts = [f"{v} {ratios[(kind, c, v)]:.3f}x" for v in variants if (kind, c, v) in ratios]
            cells.append(f"c={c}: " + ", ".join(parts))
        print(f"  {kind:<9} " + "; ".join(cells))
    for v in variants:
        values = [r for (_, _, name), r in ratios.items() if name == v]
        if values:
            print(f"  {v}: median {rl.median(values):.3f}x, worst {max(values):.3f}x over {len(values)} figures")


def check_metrics(contenders: list[Contender]) -> str:
    """One scrape of the metrics contender: the requests it counted (proves the variant recorded them)."""
    for x in contenders:
        if x.metrics_port is not None:
            with urllib.request.urlopen(f"http://127.0.0.1:{x.metrics_port}/metrics", timeout=10) as resp:
                text = resp.read().decode()
            counted = sum(
                float(line.rsplit(" ", 1)[1])
                for line in text.splitlines()
                if line.startswith("kserve_router_requests_total{")
            )
            return f"metrics contender scraped: {counted:.0f} requests counted, {len(text.splitlines())} lines"
    return ""


def run(args: argparse.Namespace) -> None:
    router_cpus = {args.router_cpu}
    other = set(os.sched_getaffinity(0)) - router_cpus or router_cpus
    os.sched_setaffinity(0, other)
    stub_ports = rl.free_ports(3)
    urls = [f"http://127.0.0.1:{p}/v1/models/m{i}:predict" for i, p in enumerate(stub_ports)]
    stubs = rl.spawn([sys.executable, __file__, "--role", "stubs", "--ports", ",".join(map(str, stub_ports))], other)
    before_tree = checkout(args.before) if args.before else None
    kinds = [k for k in args.graphs.split(",") if k]
    concurrency = [int(c) for c in args.concurrency.split(",")]
    variants = tuple(v for v, on in (("metrics", args.metrics), ("retry", args.retries)) if on)
    names = (
        ["router", *variants, "forwarder"] + (["before"] if before_tree else []) + (["go"] if args.go_router else [])
    )
    print(
        f"router_bench {time.strftime('%Y-%m-%d %H:%M')}: contenders {', '.join(names)} on CPU {args.router_cpu}; "
        f"stubs + load generator on CPUs {sorted(other)}; {args.rounds} alternating rounds x {args.seconds}s per "
        f"figure (medians); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        + (f"; before = {args.before}" if args.before else "")
        + (f"; go = {args.go_router}" if args.go_router else "")
    )
    try:
        direct = asyncio.run(rl.load(stub_ports[0], 1, args.seconds))
        print(f"direct stub latency at c=1: p50 {direct.p50_ms:.3f} ms, p99 {direct.p99_ms:.3f} ms")
        _client_alone(urls[0], args.router_cpu)
        all_results = {}
        ratios: dict[tuple[str, int, str], float] = {}
        for kind in kinds:
            contenders = start_contenders(
                kind, urls[: BACKENDS[kind]], router_cpus, before_tree, args.go_router, variants
            )
            try:
                all_results[kind] = compare(kind, contenders, concurrency, direct, args, ratios)
                scraped = check_metrics(contenders)
                if scraped:
                    print(f"        {scraped}")
            finally:
                stop(contenders)
        print_summary(all_results, names)
        print_variants(ratios, variants)
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        stubs.kill()
        stubs.wait()
        if before_tree:
            shutil.rmtree(before_tree, ignore_errors=True)


def _client_alone(url: str, cpu: int) -> None:
    """The step client alone on the router's core (``router_client_bench.py`` compares more candidates)."""
    import router_client_bench as rcb

    for name in ("router.h1", "aiohttp"):
        if rcb.available(name):
            us, rate = rcb.one(name, url, 16, 6000, cpu)
            print(f"{name} client alone on CPU {cpu} (c=16): {us:.1f} us CPU per call, {rate:.0f} calls/s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--concurrency", default="1,8,64")
    p.add_argument("--graphs", default="sequence,ensemble,splitter,switch")
    p.add_argument("--router-cpu", type=int, default=0)
    p.add_argument("--before", metavar="REF", help="also run the router of this git commit (e.g. main)")
    p.add_argument("--go-router", metavar="PATH", help="also run KServe's Go router binary (listens on :8080)")
    p.add_argument("--metrics", action="store_true", help="also run this router with metrics on (--metrics-port)")
    p.add_argument("--retries", action="store_true", help="also run this router with defaultRetry configured")
    p.add_argument("--role", choices=["stubs", "forwarder"], help=argparse.SUPPRESS)
    p.add_argument("--ports", help=argparse.SUPPRESS)
    p.add_argument("--kind", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--urls", help=argparse.SUPPRESS)
    args = p.parse_args()
    import uvloop

    if args.role == "stubs":
        uvloop.run(rl.serve_stubs([int(x) for x in args.ports.split(",")]))
    elif args.role == "forwarder":
        uvloop.run(_serve_forwarder(args.kind, args.port, args.urls.split(",")))
    else:
        bad = [k for k in args.graphs.split(",") if k and k not in TITLES]
        if bad:
            p.error(f"--graphs: unknown graph {bad[0]!r} (choose from {', '.join(TITLES)})")
        if args.go_router and not os.access(args.go_router, os.X_OK):
            p.error(f"--go-router: {args.go_router} is not an executable file")
        uvloop.install()
        run(args)


if __name__ == "__main__":
    main()
