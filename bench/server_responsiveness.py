"""Responsiveness benchmark (issue 14): ``GET /v2/health/live`` latency while hostile clients work on the server.

    python bench/server_responsiveness.py                     # this tree only (baseline: the idle server)
    python bench/server_responsiveness.py --before 9fc08f6    # and the server as of that git commit, same run

Every scenario runs for ``--seconds``; a probe opens a new connection for each ``GET /v2/health/live`` (as a
kubelet or a new client would) every 20 ms and records its latency (a failed or timed-out probe counts as an
error at its elapsed time). Servers run under a 1,024 open-file limit (``prlimit``), pinned to CPU 0 when there
are two; clients on CPU 1. Scenarios:

  idle       nothing else: the named baseline
  bytes60    one client POSTs, again and again, a 60 MB binary-extension BYTES body whose last length prefix runs
             past the data (15 M elements: it passes every size check, so the whole body must be parsed)
  json57     one client POSTs, again and again, a 57 MB V2 JSON body one element short of its shape
  header64   one client sends, again and again, a request with a 64 MB header
  slow1100   1,100 clients connect and send half a request line, then nothing

Figures: p50 / p99 / max in ms and the number of failed probes; ``p99/idle`` divides a scenario's p99 by the
idle p99 of the same server in the same run.
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import numpy as np
from serve import procs
from serve.models import build_mlp

NOFILE = 1024
BYTES_ELEMENTS = 15_000_000
SLOW_CLIENTS = 1100


# --- models and bodies -----------------------------------------------------------------------------
def build_models(root: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    build_mlp(root)  # root/mlp/model.onnx
    graph = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["t"])],
        "strings",
        [helper.make_tensor_value_info("s", TensorProto.STRING, ["n"])],
        [helper.make_tensor_value_info("t", TensorProto.STRING, ["n"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    (root / "strings").mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(root / "strings" / "model.onnx"))


def bytes_body() -> tuple[bytes, bytes]:
    """(headers, body): 15 M empty strings whose last length prefix claims 100 bytes that are not there."""
    data = bytearray(4 * BYTES_ELEMENTS)
    data[-4:] = (100).to_bytes(4, "little")
    head = b'{"inputs":[{"name":"s","datatype":"BYTES","shape":[%d],"parameters":{"binary_data_size":%d}}]}' % (
        BYTES_ELEMENTS,
        len(data),
    )
    body = head + bytes(data)
    headers = b"Inference-Header-Content-Length: %d\r\n" % len(head)
    return headers, body


def json_body() -> tuple[bytes, bytes]:
    import orjson

    rows = 57_000_000 // (64 * 9)
    values = np.full(rows * 64 - 1, 0.123456, dtype=np.float64)
    body = orjson.dumps(
        {"inputs": [{"name": "input", "datatype": "FP32", "shape": [rows, 64], "data": values}]},
        option=orjson.OPT_SERIALIZE_NUMPY,
    )
    return b"Content-Type: application/json\r\n", body


# --- clients ---------------------------------------------------------------------------------------
def probe(port: int, stop: threading.Event, samples: list[float], errors: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/v2/health/live")
            ok = conn.getresponse().status == 200
            conn.close()
        except OSError:
            ok = False
        elapsed = time.perf_counter() - started
        (samples if ok else errors).append(elapsed)
        time.sleep(0.02)


ANSWERS: list[bytes] = []  # status lines the attacks got, to show they reached the code they aim at


def repeat_post(port: int, path: str, headers: bytes, body: bytes) -> Callable[[threading.Event], None]:
    request = (
        (b"POST %s HTTP/1.1\r\nHost: bench\r\nContent-Length: %d\r\n" % (path.encode(), len(body))) + headers + b"\r\n"
    )

    def run(stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                    sock.sendall(request)
                    sock.sendall(body)
                    ANSWERS.append(sock.recv(65536).split(b"\r\n", 1)[0])
            except OSError:
                time.sleep(0.05)

    return run


def repeat_big_header(port: int) -> Callable[[threading.Event], None]:
    blob = b"GET /v2/health/live HTTP/1.1\r\nHost: bench\r\nX-Big: " + b"a" * (64 * 1024 * 1024) + b"\r\n\r\n"

    def run(stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                    sock.sendall(blob)
                    sock.recv(65536)
            except OSError:
                time.sleep(0.05)

    return run


def slow_clients(port: int) -> Callable[[threading.Event], None]:
    def run(stop: threading.Event) -> None:
        held = []
        for _ in range(SLOW_CLIENTS):
            if stop.is_set():
                break
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                sock.sendall(b"GET /v2/health/live HT")
                held.append(sock)
            except OSError:
                pass
        stop.wait()
        for sock in held:
            sock.close()

    return run


# --- measuring -------------------------------------------------------------------------------------
def measure(port: int, attacker: Callable[[threading.Event], None] | None, seconds: float) -> dict[str, float]:
    stop = threading.Event()
    samples: list[float] = []
    errors: list[float] = []
    threads = [threading.Thread(target=attacker, args=(stop,), daemon=True)] if attacker else []
    for thread in threads:
        thread.start()
    if attacker is not None:
        time.sleep(0.5)  # let the attack reach the server
    prober = threading.Thread(target=probe, args=(port, stop, samples, errors), daemon=True)
    prober.start()
    time.sleep(seconds)
    stop.set()
    prober.join()
    for thread in threads:
        thread.join(timeout=30)
    every = sorted(samples + errors)
    if not every:
        return {"p50": float("nan"), "p99": float("nan"), "max": float("nan"), "errors": 0, "n": 0}
    p99 = every[min(len(every) - 1, round(0.99 * (len(every) - 1)))]
    return {
        "p50": statistics.median(every) * 1e3,
        "p99": p99 * 1e3,
        "max": every[-1] * 1e3,
        "errors": len(errors),
        "n": len(every),
    }


def export_tree(ref: str, into: Path) -> Path:
    """The repository at ``ref`` (its ``server/`` is what runs), via git archive."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "server"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run_server(
    label: str, tree: Path, model_dir: Path, cpu: int | None, log_dir: Path, extra: tuple[str, ...] = ()
) -> procs.Server:
    argv = [
        "prlimit",
        f"--nofile={NOFILE}:{NOFILE}",
        sys.executable,
        "-m",
        "server",
        "--model_dir",
        str(model_dir),
        "--http_port",
        "{port}",
        "--bind_address",
        "127.0.0.1",
        "--enable_grpc",
        "false",
        *extra,
    ]
    env = {"PYTHONPATH": str(tree)}
    cwd = os.getcwd()
    os.chdir(tree)  # python -m server resolves the package from the working directory first
    try:
        return procs.start(label, "all", argv, cpu, log_dir, "/v2/health/ready", env=env)
    finally:
        os.chdir(cwd)


def scenario_table(port: int, seconds: float, only: list[str]) -> dict[str, dict[str, float]]:
    bytes_headers, bytes_payload = bytes_body()
    json_headers, json_payload = json_body()
    attacks: dict[str, Callable[[threading.Event], None] | None] = {
        "idle": None,
        "bytes60": repeat_post(port, "/v2/models/strings/infer", bytes_headers, bytes_payload),
        "json57": repeat_post(port, "/v2/models/mlp/infer", json_headers, json_payload),
        "header64": repeat_big_header(port),
        "slow1100": slow_clients(port),
    }
    results = {}
    for name, attack in attacks.items():
        if only and name not in only and name != "idle":
            continue
        ANSWERS.clear()
        results[name] = measure(port, attack, seconds)
        answers = sorted({a.decode(errors="replace") for a in ANSWERS})
        print(
            f"  {name:9s} p50 {results[name]['p50']:8.1f}  p99 {results[name]['p99']:8.1f}  "
            f"max {results[name]['max']:8.1f} ms  errors {results[name]['errors']}/{results[name]['n']}  "
            f"attack answers: {len(ANSWERS)} {answers}",
            file=sys.stderr,
        )
        time.sleep(1.0)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="", help="also measure the server of this git commit (e.g. 9fc08f6)")
    ap.add_argument("--seconds", type=float, default=5.0, help="length of one scenario")
    ap.add_argument("--only", nargs="*", default=[], help="scenarios to run (idle always runs)")
    ap.add_argument(
        "--server-args", default="", help="extra flags for this tree's server, e.g. '--process_decode_bytes 0'"
    )
    args = ap.parse_args()
    if subprocess.run(["which", "prlimit"], capture_output=True, check=False).returncode != 0:
        print("prlimit (util-linux) is needed", file=sys.stderr)
        return 2
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = 0 if len(cpus) > 1 and 0 in cpus else None
    if server_cpu is not None:
        os.sched_setaffinity(0, [c for c in cpus if c != server_cpu])
    work = Path(tempfile.mkdtemp(prefix="responsiveness-"))
    build_models(work / "models")
    trees = [("after", ROOT)]
    if args.before:
        trees.insert(0, (f"before ({args.before})", export_tree(args.before, work / "before")))
    table: dict[str, dict[str, dict[str, float]]] = {}
    for label, tree in trees:
        print(f"{label}:", file=sys.stderr)
        extra = tuple(args.server_args.split()) if tree == ROOT else ()
        server = run_server(label.split()[0], tree, work / "models", server_cpu, work, extra)
        try:
            table[label] = scenario_table(server.port, args.seconds, args.only)
        finally:
            procs.stop(server)
    print(render(table, args))
    return 0


def render(table: dict[str, dict[str, dict[str, float]]], args: argparse.Namespace) -> str:
    title = (
        f"# server_responsiveness · {time.strftime('%Y-%m-%d %H:%M')} · {args.seconds:g} s per scenario · "
        f"nofile {NOFILE}"
    )
    lines = [
        title,
        "",
        "GET /v2/health/live, a new connection per probe every 20 ms; ms; errors = failed probes / probes",
        "",
    ]
    header = "| scenario |" + "".join(f" {label} p50 | p99 | max | errors | p99/idle |" for label in table)
    lines += [header, "|---" * (1 + 5 * len(table)) + "|"]
    for scenario in next(iter(table.values())):
        row = f"| {scenario} |"
        for results in table.values():
            r, idle = results[scenario], results["idle"]["p99"]
            row += (
                f" {r['p50']:.1f} | {r['p99']:.1f} | {r['max']:.1f} | {int(r['errors'])}/{int(r['n'])} |"
                f" {r['p99'] / idle:.1f}× |"
            )
        lines.append(row)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
