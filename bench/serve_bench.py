"""Serving benchmark (issue 7): our ONNX server against KServe's Python ModelServer and a bare Starlette route,
in the same run, with the in-process ONNX Runtime loops as the limit.

    python bench/serve_bench.py            # full run, ~8 minutes
    python bench/serve_bench.py --quick    # ~1.5 minutes: the MLP, the target scenarios only
    python bench/serve_bench.py --skip-kserve   # no network: leave KServe out

Every server binds 127.0.0.1 on a free port, pinned to CPU 0 (``taskset``); wrk (one thread) runs on CPU 1.
Servers:
  ours            python -m server (this repository), defaults, gRPC off
  ours+batching   the same with --max_batch_size 64 --max_batch_delay_ms 0.5 (opt-in dynamic batching)
  kserve          KServe's ModelServer (PyPI ``kserve``, own virtualenv in .bench/) with an onnxruntime kserve.Model
                  (bench/serve/kserve_model.py), KServe's defaults, gRPC off
  starlette       one Starlette route: orjson decode -> session.run -> orjson encode, no protocol checks
                  (bench/serve/baseline_app.py); what the full protocol costs is the distance to it
In-process (pinned to CPU 0, no HTTP, one thread): ``run`` = InferenceSession.run on a ready array;
``codec`` = orjson decode of the same body -> run -> orjson encode.

Models are built at run time: an MLP (FP32 [-1,64] -> 128 -> 10), a skl2onnx RandomForest classifier, and a wide MLP
(FP32 [-1,256] -> 1024 -> 1024 -> 10, batch 1 only: the case dynamic batching is for). Bodies are
what tritonclient sends: V2 JSON (float32 values as Python floats) or the binary tensor extension (binary outputs).
Figures are medians over rounds; ratios are medians of per-round ratios (servers are measured back to back in each
round, so drift on these shared machines hits both sides of a ratio alike).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from serve import procs, raw, spy  # noqa: E402
from serve.bodies import Body, body, decode_response  # noqa: E402
from serve.load import Load, measure  # noqa: E402
from serve.models import BenchModel, build_all, build_mlp, build_wide, sample_rows  # noqa: E402

BENCH_DIR = ROOT / ".bench"
KSERVE_VENV = BENCH_DIR / "kserve-venv"
KSERVE_REQUIREMENT = "kserve==0.21.0"
BATCH_FLAGS = ["--max_batch_size", "64", "--max_batch_delay_ms", "0.5"]
OURS, BATCHED, KSERVE, STARLETTE = "ours", "ours+batching", "kserve", "starlette"


@dataclass(frozen=True)
class Scenario:
    model: str
    binary: bool
    rows: int
    connections: int

    @property
    def group(self) -> tuple[str, bool, int]:
        return (self.model, self.binary, self.rows)


def group_title(group: tuple[str, bool, int]) -> str:
    model, binary, rows = group
    return f"{model} · V2 {'binary' if binary else 'JSON'} · batch {rows}"


# --- what runs ------------------------------------------------------------------------------------
def scenarios(quick: bool, models: list[str]) -> list[Scenario]:
    if quick:
        return [
            Scenario("mlp", False, 1, 8),
            Scenario("mlp", False, 1, 64),
            Scenario("mlp", False, 32, 8),
            Scenario("mlp", True, 1, 8),
            Scenario("wide", False, 1, 64),
        ]
    out = []
    for binary in (False, True):
        for rows in (1, 32):
            for c in (1, 8, 64):
                out.append(Scenario("mlp", binary, rows, c))
    if "clf" in models:
        out += [Scenario("clf", False, 1, c) for c in (1, 8, 64)]
        out += [Scenario("clf", False, 32, 8), Scenario("clf", True, 1, 8), Scenario("clf", True, 32, 8)]
    if "wide" in models:
        out += [Scenario("wide", False, 1, c) for c in (8, 64)]
    return out


def servers_for(scenario: Scenario, available: set[str]) -> list[str]:
    names = [OURS, KSERVE, STARLETTE]
    if scenario.rows == 1 and scenario.connections in (8, 64) and (scenario.model != "clf" or not scenario.binary):
        names.insert(1, BATCHED)
    return [n for n in names if n in available]


# --- KServe's virtualenv ----------------------------------------------------------------------------
def ensure_kserve_venv() -> Path:
    python = KSERVE_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {KSERVE_VENV} ({KSERVE_REQUIREMENT}, onnxruntime, numpy from PyPI) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(KSERVE_VENV)], check=True)
        subprocess.run(
            [str(KSERVE_VENV / "bin" / "pip"), "install", "-q", KSERVE_REQUIREMENT, "onnxruntime", "numpy"], check=True
        )
    return python


def kserve_version(python: Path) -> str:
    done = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print(m.version('kserve'), "
            "m.version('fastapi'), m.version('onnxruntime'))",
        ],
        capture_output=True,
        text=True,
    )
    kserve, fastapi, ort = (done.stdout.split() + ["?", "?", "?"])[:3]
    return f"kserve {kserve} (fastapi {fastapi}, onnxruntime {ort})"


# --- servers ----------------------------------------------------------------------------------------
def server_argv(kind: str, model: BenchModel, kserve_python: Path | None) -> list[str]:
    common = ["--model_name", model.name, "--model_dir", str(model.model_dir), "--http_port", "{port}"]
    if kind in (OURS, BATCHED):
        argv = [sys.executable, "-m", "server", *common, "--bind_address", "127.0.0.1", "--enable_grpc", "false"]
        return argv + (BATCH_FLAGS if kind == BATCHED else [])
    if kind == KSERVE:
        assert kserve_python is not None
        return [str(kserve_python), str(HERE / "serve" / "kserve_model.py"), *common, "--enable_grpc", "false"]
    return [sys.executable, str(HERE / "serve" / "baseline_app.py"), *common]


def infer_path(model: str) -> str:
    return f"/v2/models/{model}/infer"


def post(port: int, path: str, request: Body) -> tuple[int, bytes, str | None]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body=request.data, headers=request.headers())
        response = conn.getresponse()
        return response.status, response.read(), response.getheader("inference-header-content-length")
    finally:
        conn.close()


def verify(server: procs.Server, model: BenchModel, session, bodies: dict) -> list[str]:  # noqa: ANN001
    """Each server answers every benchmark body with exactly what ONNX Runtime computes in-process."""
    problems = []
    for (binary, rows), (x, request) in bodies.items():
        expected = dict(zip(model.outputs, session.run(list(model.outputs), {model.input_name: x})))
        status, payload, header_length = post(server.port, infer_path(model.name), request)
        if status != 200:
            problems.append(f"{server.label}/{model.name} binary={binary} rows={rows}: HTTP {status} {payload[:200]!r}")
            continue
        got = decode_response(payload, header_length)
        for name, want in expected.items():
            if name not in got or not np.array_equal(got[name], want):
                problems.append(f"{server.label}/{model.name} binary={binary} rows={rows}: output {name} differs")
    return problems


async def _concurrent(port: int, path: str, requests: list[Body]) -> list[tuple[int, bytes, str | None]]:
    import httpx

    limits = httpx.Limits(max_connections=len(requests))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=30) as client:
        answers = await asyncio.gather(*(client.post(path, content=r.data, headers=r.headers()) for r in requests))
    return [(a.status_code, a.content, a.headers.get("inference-header-content-length")) for a in answers]


def batch_rows_metric(port: int, model: str) -> tuple[float, float]:
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    values = {}
    for line in text.splitlines():
        for key in ("onnxserver_batch_rows_sum", "onnxserver_batch_rows_count"):
            if line.startswith(key + "{") and f'model_name="{model}"' in line:
                values[key] = float(line.rsplit(" ", 1)[1])
    return values.get("onnxserver_batch_rows_sum", 0.0), values.get("onnxserver_batch_rows_count", 0.0)


def batching_identity(batched: procs.Server, plain: procs.Server, model: BenchModel, session) -> str:  # noqa: ANN001
    """64 concurrent requests with distinct rows (1-3 rows each, JSON and binary): the batched server's answers
    must equal the unbatched server's and in-process ONNX Runtime's, bit for bit, and runs must really merge."""
    inputs = [sample_rows(model, 1 + i % 3, 1000 + i) for i in range(64)]
    requests = [body(model, x, binary=i % 4 == 3) for i, x in enumerate(inputs)]
    sum_before, count_before = batch_rows_metric(batched.port, model.name)
    merged_answers = asyncio.run(_concurrent(batched.port, infer_path(model.name), requests))
    sum_after, count_after = batch_rows_metric(batched.port, model.name)
    plain_answers = asyncio.run(_concurrent(plain.port, infer_path(model.name), requests))
    mismatches = 0
    for x, merged, single in zip(inputs, merged_answers, plain_answers):
        expected = session.run(list(model.outputs), {model.input_name: x})
        if merged[0] != 200 or single[0] != 200:
            mismatches += 1
            continue
        a, b = decode_response(merged[1], merged[2]), decode_response(single[1], single[2])
        if not all(np.array_equal(a[n], e) and np.array_equal(b[n], e) for n, e in zip(model.outputs, expected)):
            mismatches += 1
    runs = count_after - count_before
    rows = sum_after - sum_before
    merged_text = (
        f"{rows:.0f} rows in {runs:.0f} merged runs, {rows / runs:.1f} rows per run" if runs else "no merged runs"
    )
    verdict = "identical" if mismatches == 0 else f"{mismatches} DIFFER"
    return f"{model.name}: 64 concurrent requests, {verdict} to unbatched and in-process results; {merged_text}"


# --- measuring --------------------------------------------------------------------------------------
def raw_limits(
    models: dict[str, BenchModel], groups: set[tuple[str, bool, int]], cpu: int | None, seconds: float
) -> dict[tuple[str, bool, int], dict[str, float]]:
    """Requests/s of the in-process loops, pinned to the server core (one round)."""
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        out = {}
        for group in sorted(groups):
            name, binary, rows = group
            model = models[name]
            session = raw.session(model)
            x = sample_rows(model, rows, 1)
            request = body(model, x, binary)
            out[group] = {
                "run": raw.run_rate(session, model, x, seconds),
                "codec": raw.codec_rate(session, model, request, seconds),
            }
        return out
    finally:
        os.sched_setaffinity(0, before)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt_rate(value: float) -> str:
    return f"{value:,.0f}" if value == value else "—"


def fmt_ratio(value: float) -> str:
    return f"{value:.2f}×" if value == value else "—"


def main() -> int:  # noqa: C901, PLR0912, PLR0915 - one linear script
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="the MLP and the target scenarios only, 2 rounds (~1.5 min)")
    ap.add_argument("--skip-kserve", action="store_true", help="leave KServe out (no network for its virtualenv)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per scenario (default 3, quick 2)")
    ap.add_argument("--seconds", type=int, default=2, help="wrk duration of one measurement")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument(
        "--profile",
        action="store_true",
        help="after the rounds, py-spy profiles of 'ours' under the target loads (py-spy in .bench/)",
    )
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else 3)
    cpus = os.sched_getaffinity(0)
    server_cpu: int | None = args.server_cpu if args.server_cpu in cpus else None
    client_cpu: int | None = args.client_cpu if args.client_cpu in cpus and args.client_cpu != server_cpu else None
    if shutil.which("wrk") is None:
        print("wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)", file=sys.stderr)
        return 2
    if shutil.which("taskset") is None:
        server_cpu = client_cpu = None

    started_all: list[procs.Server] = []

    def on_term(signum, frame):  # noqa: ANN001, ANN202 - turn SIGTERM into the same cleanup as Ctrl-C
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    run_started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    try:
        kserve_python = None
        kserve_text = "skipped (--skip-kserve)"
        if not args.skip_kserve:
            kserve_python = ensure_kserve_venv()
            kserve_text = kserve_version(kserve_python)
        import onnxruntime
        import starlette
        import uvicorn

        if args.quick:
            built = [build_mlp(workdir / "models"), build_wide(workdir / "models")]
        else:
            built = build_all(workdir / "models")
        models = {m.name: m for m in built}
        plan = scenarios(args.quick, list(models))
        kinds = [OURS, BATCHED, STARLETTE] + ([KSERVE] if kserve_python else [])

        print(f"# serve_bench {'--quick ' if args.quick else ''}· {time.strftime('%Y-%m-%d %H:%M')}")
        print(
            f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
            f"({_cpu_model()}), Linux {platform.release()}, Python {platform.python_version()}"
        )
        print(f"pinning: servers and in-process loops on CPU {server_cpu}, wrk -t1 on CPU {client_cpu}")
        print(
            f"ours: onnxruntime {onnxruntime.__version__}, starlette {starlette.__version__}, uvicorn {uvicorn.__version__}; "
            f"{kserve_text}"
        )
        print(f"rounds: {rounds} × {args.seconds} s per measurement; figures are medians\n")

        # start every server one after the other (startup times are not disturbed by each other)
        servers: dict[tuple[str, str], procs.Server] = {}
        for model in built:
            for kind in kinds:
                print(f"starting {kind} for {model.name} ...", file=sys.stderr)
                server = procs.start(
                    kind, model.name, server_argv(kind, model, kserve_python), server_cpu, workdir, "/v2/health/ready"
                )
                started_all.append(server)
                servers[(kind, model.name)] = server

        # correctness before speed
        problems: list[str] = []
        bodies = {}
        sessions = {}
        for model in built:
            sessions[model.name] = raw.session(model)
            bodies[model.name] = {}
            for binary in (False, True):
                for rows in (1, 32):
                    x = sample_rows(model, rows, 1)
                    bodies[model.name][(binary, rows)] = (x, body(model, x, binary))
            for kind in kinds:
                problems += verify(servers[(kind, model.name)], model, sessions[model.name], bodies[model.name])
        identity = [
            batching_identity(servers[(BATCHED, m.name)], servers[(OURS, m.name)], m, sessions[m.name]) for m in built
        ]

        groups = {s.group for s in plan}

        # rounds: the in-process loops, then every scenario on every server, back to back
        results: dict[tuple[Scenario, str], list[Load]] = defaultdict(list)
        raw_rounds: list[dict[tuple[str, bool, int], dict[str, float]]] = []
        for number in range(rounds):
            print(f"round {number + 1}/{rounds}: in-process loops", file=sys.stderr, end="\r")
            raw_rounds.append(raw_limits(models, groups, server_cpu, 0.3 if args.quick else 0.5))
            for index, scenario in enumerate(plan):
                print(f"round {number + 1}/{rounds}, scenario {index + 1}/{len(plan)}", file=sys.stderr, end="\r")
                request = bodies[scenario.model][(scenario.binary, scenario.rows)][1]
                for kind in servers_for(scenario, set(kinds)):
                    server = servers[(kind, scenario.model)]
                    results[(scenario, kind)].append(
                        measure(
                            server,
                            infer_path(scenario.model),
                            request,
                            scenario.connections,
                            args.seconds,
                            client_cpu,
                            workdir,
                        )
                    )
        print(file=sys.stderr)

        def per_round_ratio(scenario: Scenario, a: str, b: str, key) -> float:  # noqa: ANN001
            pairs = zip(results.get((scenario, a), []), results.get((scenario, b), []))
            return median([key(x) / key(y) for x, y in pairs if key(y)])

        def per_round_raw_ratio(scenario: Scenario, loop: str) -> float:
            """ours' req/s in each round ÷ the in-process loop's rate measured in the same round."""
            pairs = zip(results.get((scenario, OURS), []), raw_rounds)
            return median([x.rps / r[scenario.group][loop] for x, r in pairs])

        limits = {g: {k: median([r[g][k] for r in raw_rounds]) for k in ("run", "codec")} for g in groups}

        # --- tables ---------------------------------------------------------------------------------
        by_group: dict[tuple[str, bool, int], list[Scenario]] = defaultdict(list)
        for scenario in plan:
            by_group[scenario.group].append(scenario)
        for group, members in by_group.items():
            rows = group[2]
            print(f"## {group_title(group)}")
            print(
                f"{'server':<15}{'c':>4}{'req/s':>10}{'rows/s':>11}{'p50 ms':>9}{'p99 ms':>9}{'CPU µs/req':>12}"
                f"{'errors':>8}{'ours ÷ this':>13}"
            )
            for scenario in members:
                for kind in servers_for(scenario, set(kinds)):
                    loads = results[(scenario, kind)]
                    rps = median([x.rps for x in loads])
                    ratio = "" if kind == OURS else fmt_ratio(per_round_ratio(scenario, OURS, kind, lambda x: x.rps))
                    print(
                        f"{kind:<15}{scenario.connections:>4}{fmt_rate(rps):>10}{fmt_rate(rps * rows):>11}"
                        f"{median([x.p50_ms for x in loads]):>9.2f}{median([x.p99_ms for x in loads]):>9.2f}"
                        f"{median([x.cpu_us_per_request for x in loads]):>12.0f}{sum(x.errors for x in loads):>8}"
                        f"{ratio:>13}"
                    )
            limit = limits[group]
            best = max(members, key=lambda s: median([x.rps for x in results[(s, OURS)]]))
            for key, label in (("run", "in-process run"), ("codec", "in-process codec")):
                print(
                    f"{label:<15}{'–':>4}{fmt_rate(limit[key]):>10}{fmt_rate(limit[key] * rows):>11}{'':>9}{'':>9}"
                    f"{1e6 / limit[key]:>12.1f}{'':>8}{fmt_ratio(per_round_raw_ratio(best, key)):>13}"
                )
            print(
                f"(in-process rows: 'ours ÷ this' uses ours at c={best.connections}, its best here; "
                "CPU µs/req = 1/rate)\n"
            )

        # --- startup and memory -----------------------------------------------------------------------
        print("## startup and memory (one process per server and model; startup = spawn until ready answers 200)")
        print(f"{'server':<15}{'model':<7}{'startup s':>11}{'RSS ready MiB':>15}{'RSS peak MiB':>14}")
        for (kind, name), server in servers.items():
            print(
                f"{kind:<15}{name:<7}{server.startup_s:>11.2f}{server.rss_ready_mib:>15.0f}{server.peak_rss_mib():>14.0f}"
            )
        print()

        # --- targets --------------------------------------------------------------------------------
        print("## targets (V2 JSON, one server core, same run; ratios are medians of per-round ratios)")
        verdicts: list[tuple[str, bool, str]] = []
        info: list[str] = []
        to_profile = [Scenario("mlp", False, 1, 8), Scenario("mlp", False, 32, 8), Scenario("mlp", False, 1, 64)]

        def target(text: str, ok: bool, figure: str, scenario: Scenario | None = None) -> None:
            verdicts.append((text, ok, figure))
            if not ok and scenario is not None and scenario not in to_profile:
                to_profile.append(scenario)  # --profile: every NOT MET gets a profile of its own load

        for name in models:
            c8 = Scenario(name, False, 1, 8)
            c64 = Scenario(name, False, 1, 64)
            b32 = Scenario(name, False, 32, 8)
            # the protocol targets are about the small models, where the server is most of the cost; the wide
            # model is there for dynamic batching (its tables still compare every server)
            protocol = name != "wide"
            if protocol and kserve_python is not None and (c8, KSERVE) in results:
                r = per_round_ratio(c8, OURS, KSERVE, lambda x: x.rps)
                target(f"{name}: batch 1, c=8 req/s ≥ 5× KServe", r >= 5, f"{r:.2f}×", c8)
            if protocol and (c8, STARLETTE) in results:
                r = per_round_ratio(c8, OURS, STARLETTE, lambda x: x.rps)
                target(f"{name}: batch 1, c=8 req/s ≥ 90% of the bare Starlette route", r >= 0.9, f"{r:.0%}", c8)
            if protocol and kserve_python is not None and (c64, KSERVE) in results:
                r = per_round_ratio(c64, OURS, KSERVE, lambda x: x.p99_ms)
                target(f"{name}: batch 1, c=64 p99 ≤ ¼ of KServe's", r <= 0.25, f"{r:.2f}×", c64)
            if protocol and (b32, OURS) in results:
                r = per_round_raw_ratio(b32, "codec")
                target(
                    f"{name}: batch 32, c=8 rows/s ≥ 50% of the in-process decode → run → encode loop",
                    r >= 0.5,
                    f"{r:.0%}",
                    b32,
                )
            if (c64, BATCHED) in results:
                r = per_round_ratio(c64, BATCHED, OURS, lambda x: x.rps)
                p99 = per_round_ratio(c64, BATCHED, OURS, lambda x: x.p99_ms)
                cpu = per_round_ratio(c64, BATCHED, OURS, lambda x: x.cpu_us_per_request)
                figure = f"{r:.2f}× req/s, {p99:.2f}× p99, {cpu:.2f}× CPU per request"
                if name == "wide":
                    target(f"{name}: dynamic batching gains req/s at batch 1, c=64", r > 1.0, figure, c64)
                else:
                    info.append(
                        f"{name}: dynamic batching at batch 1, c=64 (inference is ~5% of a request here): {figure}"
                    )
        ours_errors = sum(x.errors for (s, k), loads in results.items() if k in (OURS, BATCHED) for x in loads)
        ours_problems = [p for p in problems if p.startswith(OURS)]
        target(
            "no errors from ours (every wrk run, every verified answer)",
            not ours_errors and not ours_problems,
            f"{ours_errors} errors, {len(ours_problems)} wrong answers",
        )
        target(
            "dynamic batching answers identical to unbatched",
            all(" identical " in t for t in identity),
            "; ".join(t.split(":", 1)[0] + (" identical" if " identical " in t else " differ") for t in identity),
        )
        for text, ok, figure in verdicts:
            print(f"{'MET    ' if ok else 'NOT MET'}  {text}: {figure}")
        for text in info:
            print(f"info     {text}")
        print()
        print("## correctness")
        print(
            "every server × model × (JSON, binary) × (batch 1, 32): "
            + ("answers equal in-process ONNX Runtime exactly" if not problems else "; ".join(problems))
        )
        for line in identity:
            print("batching: " + line)
        other_errors = {k: sum(x.errors for (s, kk), loads in results.items() if kk == k for x in loads) for k in kinds}
        print(
            "wrk errors (connect/read/write/timeout/non-2xx) per server: "
            + ", ".join(f"{k} {v}" for k, v in other_errors.items())
        )

        if args.profile:
            py_spy = spy.ensure_py_spy(BENCH_DIR)
            for scenario in to_profile:
                for kind in (OURS, BATCHED) if scenario.connections == 64 else (OURS,):
                    server = servers[(kind, scenario.model)]
                    out = workdir / f"profile-{kind}-{scenario.rows}-{scenario.connections}.txt"
                    seconds = max(3, args.seconds * 2)
                    sampler = spy.record(py_spy, server.process.pid, seconds, out, client_cpu)
                    time.sleep(0.3)
                    measure(
                        server,
                        infer_path(scenario.model),
                        bodies[scenario.model][(False, scenario.rows)][1],
                        scenario.connections,
                        seconds,
                        client_cpu,
                        workdir,
                    )
                    _, err = sampler.communicate(timeout=60)
                    print(f"\n## py-spy: {kind}, {group_title(scenario.group)}, c={scenario.connections}")
                    print(spy.summarize(out, ROOT) if out.exists() else f"  py-spy failed: {err.decode()[-500:]}")
        print(f"\n(total run time {time.perf_counter() - run_started:.0f} s)")
        return 0 if all(ok for _, ok, _ in verdicts) else 1
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the servers", file=sys.stderr)
        return 130
    finally:
        for server in started_all:
            procs.stop(server)
        shutil.rmtree(workdir, ignore_errors=True)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
