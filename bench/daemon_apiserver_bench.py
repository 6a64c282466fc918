"""The daemon at scale against a real kube-apiserver + etcd (tests/integration/apiserver.py), this checkout against a
baseline revision of the project, in the same invocation.

    export KUBEBUILDER_ASSETS="$(scripts/kube-assets.sh)"
    python bench/daemon_apiserver_bench.py [--isvcs 1000] [--rounds 2] [--baseline 587f3f1] [--controllers]

One apiserver for the whole run (the project's CRDs and KServe's shipped ``inferenceservice-config``, Standard
mode). Each round, for the baseline and then this checkout (alternating, so load drifts hit both): a fresh
namespace with N InferenceServices (no HPA: 1.20 serves no autoscaling/v2), then ``kserve-compile daemon -n NS``
as a process (``--workers``, default 4; no leader election) from that tree. Measured from the daemon's start:

* convergence: until every isvc's status was written (``status_writes_total`` = N; checked afterwards with one
  LIST: every isvc has ``observedGeneration`` 1 and no failure reason);
* reconciles and API requests per isvc, from the daemon's own ``/metrics``, once it has been quiet for 3 s
  (requests by verb; watches, LISTs and discovery included);
* the daemon's CPU time (user + system, to the end of the quiet period) and peak memory (VmHWM); on a shared
  machine the CPU time is the steadier figure, the wall-clock convergence moves with the load.

The baseline runs from ``git archive`` of ``--baseline`` with this checkout's compiled C walks copied in where their
sources are unchanged. ``--controllers`` also runs kube-controller-manager (the Deployment controller writes
status, so child events reach the daemon). Everything shares this machine's CPUs: the load average is printed.
Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "integration")]

import yaml  # noqa: E402
from apiserver import CRDS, ApiServer, AssetsError  # noqa: E402

from kserve_compile.apply.kube import Kube, load_api_client  # noqa: E402

ISVC_PATH = "/apis/serving.kserve.io/v1beta1/namespaces/{ns}/inferenceservices"
C_WALKS = ("kserve_compile/_datacopy_c", "kserve_compile/emit/_yaml_c")
SERVICE_RANGE = "10.96.0.0/12"  # room for a ClusterIP per isvc at 10,000 isvcs and more


@dataclass
class Run:
    variant: str
    converge_s: float
    reconciles: float
    requests: dict[str, float]
    peak_mib: float
    extra: dict[str, float] = field(default_factory=dict)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def metrics(port: int) -> dict[str, float]:
    """``name{labels}`` → value from the daemon's /metrics ({} while it does not answer yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:  # noqa: S310 - loopback
            text = resp.read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name:
            out[name.removeprefix("kserve_compile_")] = float(value)
    return out


def total(m: dict[str, float], name: str) -> float:
    return sum(v for k, v in m.items() if k == name or k.startswith(name + "{"))


def requests_by_verb(m: dict[str, float]) -> dict[str, float]:
    return {verb[1]: v for k, v in m.items() if (verb := re.fullmatch(r'api_requests\{verb="([^"]+)"\}', k))}


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used (/proc/PID/stat), robust to what else the machine runs."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def baseline_tree(rev: str, into: Path) -> Path:
    """``rev``'s kserve_compile/ and cli.py, with this checkout's built C walks where their sources match."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "kserve_compile", "cli.py"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    tar = into / "tree.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as tf:
        tf.extractall(into, filter="data")
    for stem in C_WALKS:
        source = Path(f"{stem}.c")
        if (into / source).exists() and (into / source).read_bytes() == (ROOT / source).read_bytes():
            for built in ROOT.glob(f"{stem}.*.so"):
                shutil.copy(built, into / built.relative_to(ROOT))
    return into


def isvc(name: str, ns: str) -> dict:
    annotations = {"serving.kserve.io/deploymentMode": "Standard", "serving.kserve.io/autoscalerClass": "none"}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": f"gs://bucket/{name}"}}},
    }


def create_isvcs(client: Kube, ns: str, n: int) -> None:
    client.request(
        "POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    path = ISVC_PATH.format(ns=ns)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: client.request("POST", path, body=isvc(f"m{i}", ns)), range(n)))


def check_converged(server: ApiServer, ns: str, n: int) -> None:
    _, listing = server.request("GET", ISVC_PATH.format(ns=ns))
    bad = []
    for obj in listing["items"]:
        status = obj.get("status") or {}
        ready = {c["type"]: c for c in status.get("conditions") or []}.get("Ready") or {}
        if status.get("observedGeneration") != 1 or ready.get("reason") in ("ApplyFailed", "RenderFailed"):
            bad.append(f"{obj['metadata']['name']}: {ready.get('message', 'no status')}")
    if len(listing["items"]) != n or bad:
        raise SystemExit(f"not converged in {ns}: {len(listing['items'])} isvcs; {bad[:3]}")


def run_daemon(server: ApiServer, variant: str, tree: Path, ns: str, n: int, timeout: float, workers: int) -> Run:
    health, port = free_port(), free_port()
    cmd = [sys.executable, str(tree / "cli.py"), "daemon", "--kubeconfig", server.kubeconfig, "-n", ns]
    cmd += ["--no-leader-elect", "--resync", "1h", "--workers", str(workers)]
    cmd += ["--health-addr", f"127.0.0.1:{health}", "--metrics-addr", f"127.0.0.1:{port}"]
    env = dict(os.environ, PYTHONPATH=str(tree))
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(proc.stderr or []), daemon=True).start()
    try:
        while total(metrics(port), "status_writes_total") < n:
            if proc.poll() is not None or time.monotonic() - started > timeout:
                raise SystemExit(f"{variant}: the daemon did not converge: {''.join(errors[-5:])}")
            time.sleep(0.25)
        converge = time.monotonic() - started
        last, quiet = total(metrics(port), "reconcile_total"), time.monotonic()
        while time.monotonic() - quiet < 3.0:
            time.sleep(0.5)
            now = total(metrics(port), "reconcile_total")
            if now != last:
                last, quiet = now, time.monotonic()
        m = metrics(port)
        peak, cpu = peak_mib(proc.pid), cpu_seconds(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    check_converged(server, ns, n)
    extra = {k: total(m, k) for k in ("status_writes_total", "drift_detected_total", "stale_renders_total")}
    extra["cpu_s"] = cpu
    return Run(variant, converge, total(m, "reconcile_total"), requests_by_verb(m), peak, extra)


def median(runs: list[Run], get: Callable[[Run], float]) -> float:
    return statistics.median(get(r) for r in runs)


def report(runs: list[Run], n: int) -> None:
    variants = list(dict.fromkeys(r.variant for r in runs))
    verbs = sorted({v for r in runs for v in r.requests})
    rows = [
        ("convergence (s)", lambda r: r.converge_s, "{:.1f}"),
        ("daemon CPU (s, to quiet)", lambda r: r.extra["cpu_s"], "{:.1f}"),
        ("reconciles per isvc", lambda r: r.reconciles / n, "{:.2f}"),
        ("requests per isvc", lambda r: sum(r.requests.values()) / n, "{:.2f}"),
        *((f"  {verb} per isvc", lambda r, v=verb: r.requests.get(v, 0) / n, "{:.2f}") for verb in verbs),
        ("status writes per isvc", lambda r: r.extra["status_writes_total"] / n, "{:.2f}"),
        ("daemon peak memory (MiB)", lambda r: r.peak_mib, "{:.0f}"),
    ]
    print(
        f"{'median of ' + str(len(runs) // len(variants)) + ' rounds':<28}"
        + "".join(f"{v:>16}" for v in variants)
        + "   ratio"
    )
    for label, get, fmt in rows:
        values = [median([r for r in runs if r.variant == v], get) for v in variants]
        ratio = f"{values[-1] / values[0]:.2f}x" if len(values) == 2 and values[0] else ""
        print(f"{label:<28}" + "".join(f"{fmt.format(x):>16}" for x in values) + f"   {ratio}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isvcs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--baseline", default="587f3f1", help="git revision of the baseline daemon ('' = none)")
    ap.add_argument("--controllers", action="store_true", help="also run kube-controller-manager")
    ap.add_argument("--workers", type=int, default=4, help="the daemon's --workers")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one daemon may take to converge")
    args = ap.parse_args()
    try:
        server = ApiServer.from_env()
    except AssetsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    server.extra_flags.append(f"--service-cluster-ip-range={SERVICE_RANGE}")  # the fixture's /24: 254 Services
    variants: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory(prefix="daemon-bench-") as tmp, server:
        if args.baseline:
            variants.append((f"base {args.baseline}", baseline_tree(args.baseline, Path(tmp))))
        variants.append(("this checkout", ROOT))
        if args.controllers:
            server.start_controller_manager()
        server.apply_file(CRDS)
        server.request(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kserve"}}
        )
        shipped = ROOT / "kserve_compile" / "data" / "inferenceservice-config.yaml"
        config = next(d for d in yaml.safe_load_all(shipped.read_text()) if d and d.get("kind") == "ConfigMap")
        config["data"]["deploy"] = json.dumps({"defaultDeploymentMode": "Standard"})
        server.apply(config)
        client = Kube(load_api_client(server.kubeconfig))
        load = os.getloadavg()
        print(
            f"daemon bench against kube-apiserver {'.'.join(map(str, server.version))} + etcd on this machine: "
            f"{args.isvcs} isvcs per round, {args.rounds} rounds, controllers {'on' if args.controllers else 'off'}, "
            f"{os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
        )
        runs: list[Run] = []
        for round_ in range(args.rounds):
            for index, (variant, tree) in enumerate(variants):
                ns = f"bench-{round_}-{index}"
                create_isvcs(client, ns, args.isvcs)
                run = run_daemon(server, variant, tree, ns, args.isvcs, args.timeout, args.workers)
                print(
                    f"  round {round_ + 1} {variant:<16} converged in {run.converge_s:6.1f} s, "
                    f"{run.extra['cpu_s']:.1f} s CPU, {run.reconciles / args.isvcs:.2f} reconciles and "
                    f"{sum(run.requests.values()) / args.isvcs:.2f} requests per isvc"
                )
                runs.append(run)
        report(runs, args.isvcs)
        load = os.getloadavg()
        print(f"load at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
