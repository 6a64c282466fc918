"""``--workers N`` on this machine (issue 14, item 7): our server with 1 and 2 worker processes, same run.

    python bench/serve_workers.py                 # mlp, V2 JSON, batch 1, c = 8 and 64, 3 rounds of 3 s
    python bench/serve_workers.py --workers 1 2 4 --seconds 5

Servers are not pinned: N workers may use N cores. wrk (one thread) runs on the last CPU, so on a machine with as
many cores as workers the load generator competes with the server for one of them — say so when quoting figures.
Figures are medians over rounds (req/s, p99 in ms, wrk errors); ``× N=1`` divides req/s by the one-worker server's
in the same round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve import procs
from serve.bodies import body
from serve.load import measure
from serve.models import build_mlp, sample_rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--connections", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="serve-workers-"))
    model = build_mlp(work / "mlp")
    request = body(model, sample_rows(model, 1, seed=1), binary=False)
    client_cpu = max(os.sched_getaffinity(0)) if len(os.sched_getaffinity(0)) > 1 else None
    results: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
    servers = {}
    try:
        for n in args.workers:
            argv = [
                sys.executable,
                "-m",
                "server",
                "--model_name",
                "mlp",
                "--model_dir",
                str(model.model_dir),
                "--http_port",
                "{port}",
                "--bind_address",
                "127.0.0.1",
                "--enable_grpc",
                "false",
                "--workers",
                str(n),
            ]
            servers[n] = procs.start(f"workers{n}", "mlp", argv, None, work, "/v2/health/ready")
        time.sleep(1.0)  # every worker past its startup
        for _ in range(args.rounds):
            for c in args.connections:
                for n, server in servers.items():
                    load = measure(server, "/v2/models/mlp/infer", request, c, args.seconds, client_cpu, work)
                    results.setdefault((n, c), []).append((load.rps, load.p99_ms, load.errors))
    finally:
        for server in servers.values():
            procs.stop(server)
    print(render(results, args, client_cpu))
    return 0


def render(
    results: dict[tuple[int, int], list[tuple[float, float, int]]], args: argparse.Namespace, client_cpu: int | None
) -> str:
    title = (
        f"# serve_workers · {time.strftime('%Y-%m-%d %H:%M')} · {os.cpu_count()} CPUs · wrk -t1 on CPU "
        f"{client_cpu} · {args.rounds} rounds × {args.seconds} s · mlp V2 JSON batch 1"
    )
    lines = [title, "", "| workers | c | req/s | × N=1 | p99 ms | errors |", "|---:|---:|---:|---:|---:|---:|"]
    for c in args.connections:
        base = [r[0] for r in results[(args.workers[0], c)]]
        for n in args.workers:
            rows = results[(n, c)]
            ratio = statistics.median(r[0] / b for r, b in zip(rows, base))
            lines.append(
                f"| {n} | {c} | {statistics.median(r[0] for r in rows):,.0f} | {ratio:.2f}× | "
                f"{statistics.median(r[1] for r in rows):.2f} | {sum(r[2] for r in rows)} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
