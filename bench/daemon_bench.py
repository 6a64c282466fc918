"""The daemon at scale: N InferenceServices (default 2,000) in the project's fake API server.

    python bench/daemon_bench.py [--isvcs 2000] [--namespaces 20] [--resync 45s] [--baseline-sample 200]

Starts the fake API server (tests/apply/fakeapi.py) in this process and `kserve-compile daemon` (the real
renderer, no leader election) as a subprocess, then prints:

* time to first convergence: daemon start → every isvc has ``status.observedGeneration`` and its Deployment;
* API requests per no-op resync (watches excluded), measured over one full timer resync after convergence;
* the daemon's memory (VmRSS and peak VmHWM from /proc);
* the baseline, measured in the same invocation: the same no-op reconcile without the caches (the
  pre-issue-11 daemon: GET parent + a LIST per GroupKind + a dry-run PATCH per object) on a sample of the
  converged isvcs, scaled to N; and the ratio.

What the fake API server cannot show: real kube-apiserver latency, etcd, admission webhooks, watch
cache behaviour and bookmarks as a real server paces them, and network cost. Not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "apply")]

from fakeapi import FakeApi  # noqa: E402
from kc_manifests import shipped_configmap  # noqa: E402

from kserve_compile.apply.apply import Applier  # noqa: E402
from kserve_compile.apply.kube import Kube, api_client_for_host  # noqa: E402
from kserve_compile.apply.report import ApplyOptions  # noqa: E402
from kserve_compile.durations import parse_duration  # noqa: E402


def isvc(name: str, ns: str) -> dict:
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": f"gs://b/{name}"}}},
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    values = [float(v) for v in re.findall(rf"^kserve_compile_{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)]
    return sum(values)


def memory_kib(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def converged(fake: FakeApi, names: list[tuple[str, str]]) -> int:
    done = 0
    with fake.lock:
        for ns, name in names:
            obj = fake.objects.get(("serving.kserve.io", "inferenceservices", ns, name)) or {}
            if (obj.get("status") or {}).get("observedGeneration") == 1 and (
                "apps",
                "deployments",
                ns,
                f"{name}-predictor",
            ) in fake.objects:
                done += 1
    return done


def wait_quiet(fake: FakeApi, seconds: float = 2.0, limit: float = 120.0) -> None:
    """Until no request other than a watch arrived for ``seconds``."""
    deadline = time.monotonic() + limit
    last = len(fake.log)
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < seconds and time.monotonic() < deadline:
        time.sleep(0.2)
        now = len(fake.requests_since(0))
        if now != last:
            last, quiet_since = now, time.monotonic()


def baseline(fake: FakeApi, names: list[tuple[str, str]], sample: int) -> float:
    """Requests per isvc for a no-op reconcile without caches: what each resync cost before (per isvc)."""
    from kserve_compile.api import render_objects

    cm = shipped_configmap("Standard")
    kube = Kube(api_client_for_host(fake.url))
    picked = names[:sample]
    for ns, name in picked:
        live = fake.find("serving.kserve.io", "inferenceservices", ns, name)
        objs = render_objects([live], configmap=cm)
        Applier(kube, ApplyOptions(applyset=f"{name}.kserve-compile", namespace=ns, owner=live, prune=True)).run(objs)
    return sum(kube.requests.values()) / len(picked)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isvcs", type=int, default=2000)
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--resync", default="45s")
    ap.add_argument("--baseline-sample", type=int, default=200)
    args = ap.parse_args()
    fake = FakeApi()
    fake.url = fake.start()
    fake.put(shipped_configmap("Standard"))
    names = [(f"ns{i % args.namespaces}", f"m{i}") for i in range(args.isvcs)]
    for ns, name in names:
        fake.put(isvc(name, ns))
    health, metrics_port = free_port(), free_port()
    cmd = [
        sys.executable,
        "-m",
        "kserve_compile.apply.cli",
        "daemon",
        "--server",
        fake.url,
        "--no-leader-elect",
        "--resync",
        args.resync,
        "--health-addr",
        f"127.0.0.1:{health}",
        "--metrics-addr",
        f"127.0.0.1:{metrics_port}",
    ]
    fake.clear_log()
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while converged(fake, names) < len(names):
            if proc.poll() is not None:
                raise SystemExit(f"the daemon exited with {proc.returncode}")
            time.sleep(0.5)
        first = time.monotonic() - started
        requests_to_converge = len(fake.requests_since(0))
        wait_quiet(fake)
        resyncs = metric(metrics_port, "resyncs_total")
        reconciles = metric(metrics_port, "reconcile_total")
        mark = len(fake.log)
        deadline = time.monotonic() + 3 * parse_duration(args.resync) + 120
        while time.monotonic() < deadline:
            if (
                metric(metrics_port, "resyncs_total") > resyncs
                and metric(metrics_port, "reconcile_total") >= reconciles + len(names)
                and metric(metrics_port, "workqueue_depth") == 0
            ):
                break
            time.sleep(0.5)
        else:
            raise SystemExit("no full resync was observed")
        noop = [r for r in fake.requests_since(mark) if r.query.get("watch") != "true"]
        mem = memory_kib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    per_isvc_before = baseline(fake, names, min(args.baseline_sample, len(names)))
    before_total = per_isvc_before * len(names)
    fake.stop()
    print(
        f"daemon bench: {len(names)} InferenceServices in {args.namespaces} namespaces, fake API server, "
        f"real renderer, resync {args.resync}"
    )
    print(
        f"  time to first convergence        {first:8.1f} s   ({requests_to_converge} API requests, "
        f"{requests_to_converge / len(names):.1f} per isvc)"
    )
    print(
        f"  API requests per no-op resync    {len(noop):8d}     ({len(noop) / len(names):.3f} per isvc; watches excluded)"
    )
    print(
        f"  daemon memory                    {mem.get('VmRSS', 0) / 1024:8.1f} MiB RSS (peak {mem.get('VmHWM', 0) / 1024:.1f} MiB)"
    )
    print(
        f"  baseline: uncached no-op reconcile (pre-issue-11 daemon), measured on {min(args.baseline_sample, len(names))} "
        f"isvcs: {per_isvc_before:.1f} requests per isvc → {before_total:.0f} per resync"
    )
    ratio = "∞ (0 now)" if not noop else f"{before_total / len(noop):.0f}x"
    print(f"  requests per no-op resync, baseline / now: {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
