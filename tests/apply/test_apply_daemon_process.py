"""`kserve-compile daemon` as a process (the real renderer) against the fake API server, under faults that used
to kill it, stall it, or make it act on a half-synced view; and its lifecycle: Lease loss and release."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from kc_manifests import shipped_configmap
from test_apply_daemon import isvc, wait_until

ROOT = pathlib.Path(__file__).resolve().parents[2]
NS = "ns"
ISVC = ("serving.kserve.io", "inferenceservices")
pytest.importorskip("kserve_compile.api", reason="the renderer (kserve_compile.api) is not in this tree")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaemonProcess:
    def __init__(self, url: str, tmp: pathlib.Path, *args: str) -> None:
        self.health, self.metrics = _free_port(), _free_port()
        self.log = tmp / "daemon.log"
        cmd = [
            sys.executable,
            "-m",
            "kserve_compile.apply.cli",
            "daemon",
            "--server",
            url,
            "--health-addr",
            f"127.0.0.1:{self.health}",
            "--metrics-addr",
            f"127.0.0.1:{self.metrics}",
            *args,
        ]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=self.log.open("wb"))

    def get(self, path: str) -> tuple[int, str]:
        port = self.metrics if path == "/metrics" else self.health
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()
        except OSError:
            return 0, ""

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture
def start(fake, tmp_path):
    procs: list[DaemonProcess] = []

    def launch(*args: str) -> DaemonProcess:
        proc = DaemonProcess(fake.url, tmp_path, *args)
        procs.append(proc)
        return proc

    yield launch
    for proc in procs:
        proc.stop(signal.SIGKILL)


def converged(fake, name: str, generation: int = 1) -> bool:
    status = (fake.find(*ISVC, NS, name) or {}).get("status") or {}
    return status.get("observedGeneration") == generation and f"{name}-predictor" in fake.names(
        "apps", "deployments", NS
    )


def test_process_survives_broken_watches_and_reconciles_what_comes_after(fake, start):
    fake.put(shipped_configmap("Standard"))
    fake.put(isvc("before"))
    daemon = start("--no-leader-elect")
    wait_until(lambda: converged(fake, "before"), timeout=30)
    for mode in ("garbage", "reset", "error"):
        fake.break_watches("inferenceservices", mode)
        time.sleep(0.3)
    fake.put(isvc("after"))
    wait_until(lambda: converged(fake, "after"), timeout=30)
    assert daemon.get("/healthz") == (200, "ok\n") and daemon.get("/readyz") == (200, "ok\n")
    metrics = daemon.get("/metrics")[1]
    for reason in ("decode", "reset", "error"):
        assert f'kserve_compile_watch_restarts_total{{reason="{reason}",resource="inferenceservices"}}' in metrics
    assert daemon.proc.poll() is None


def test_process_renders_nothing_before_the_configmap_and_never_guesses_the_mode(fake, start):
    fake.put(isvc("m"))  # no deploymentMode annotation: the ConfigMap decides
    daemon = start("--no-leader-elect")
    wait_until(lambda: daemon.get("/readyz")[0] == 503 and "ConfigMap" in daemon.get("/readyz")[1], timeout=30)
    assert daemon.get("/readyz")[0] == 503
    reason = daemon.get("/readyz")[1]
    assert reason == (
        "ConfigMap kserve/inferenceservice-config not found: nothing is rendered until it exists (--config-namespace)\n"
    )
    time.sleep(1.0)
    assert fake.writes() == []
    fake.put(shipped_configmap("Standard"))
    wait_until(lambda: converged(fake, "m"), timeout=30)
    assert fake.find(*ISVC, NS, "m")["status"]["deploymentMode"] == "Standard"
    assert fake.names("serving.knative.dev", "services") == []  # KServe's shipped default (Knative) never used
    assert daemon.get("/readyz") == (200, "ok\n")


def test_process_contains_an_unexpected_failure_of_one_object(fake, start):
    fake.put(shipped_configmap("Standard"))
    fake.put(isvc("bad"))
    fake.put(isvc("good"))
    # a broken proxy answers bad's Deployment with a page that is not JSON: not an ApiError, not anticipated
    fake.fail("PATCH", r"/deployments/bad-predictor$", status=200, raw=b"<html>502 Bad Gateway</html>", times=10**6)
    daemon = start("--no-leader-elect")
    wait_until(lambda: converged(fake, "good"), timeout=30)
    wait_until(lambda: ((fake.find(*ISVC, NS, "bad") or {}).get("status") or {}).get("conditions"), timeout=30)
    ready = {c["type"]: c for c in fake.find(*ISVC, NS, "bad")["status"]["conditions"]}["Ready"]
    assert ready["status"] == "False" and ready["reason"] == "ReconcileError"
    events = [r.body for r in fake.writes() if r.path.endswith("/events")]
    assert any(e["reason"] == "ReconcileError" and e["involvedObject"]["name"] == "bad" for e in events)
    wait_until(lambda: "kserve_compile_reconcile_retries_total 2" in daemon.get("/metrics")[1], timeout=30)  # backoff
    assert daemon.proc.poll() is None and daemon.get("/healthz")[0] == 200


def _lease(fake) -> dict:
    return fake.find("coordination.k8s.io", "leases", "kserve", "kserve-compile-daemon") or {}


LEADER_FLAGS = (
    "--leader-elect",
    "--lease-namespace",
    "kserve",
    "--leader-elect-lease-duration",
    "3s",
    "--leader-elect-renew-deadline",
    "1s",
    "--leader-elect-retry-period",
    "200ms",
)


def test_sigterm_releases_the_lease(fake, start):
    fake.put(shipped_configmap("Standard"))
    daemon = start(*LEADER_FLAGS)
    wait_until(lambda: (_lease(fake).get("spec") or {}).get("holderIdentity"), timeout=30)
    assert daemon.stop(signal.SIGTERM) == 0
    spec = _lease(fake)["spec"]
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert "released Lease kserve/kserve-compile-daemon" in daemon.stderr()


def test_losing_the_lease_says_why_before_exiting(fake, start):
    fake.put(shipped_configmap("Standard"))
    daemon = start(*LEADER_FLAGS)
    wait_until(lambda: (_lease(fake).get("spec") or {}).get("holderIdentity"), timeout=30)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    fake.update(
        "coordination.k8s.io",
        "leases",
        "kserve",
        "kserve-compile-daemon",
        lambda o: o["spec"].update(holderIdentity="usurper", renewTime=now, leaseDurationSeconds=3600),
    )
    assert daemon.proc.wait(timeout=30) == 1
    log = daemon.stderr()
    assert "leadership lost: the Lease is held by 'usurper'" in log and "Traceback" not in log


def test_probes_fail_while_an_informer_cannot_recover_and_pass_again(fake, start):
    fake.put(shipped_configmap("Standard"))
    daemon = start("--no-leader-elect", "--informer-not-ready-after", "1s", "--informer-dead-after", "4s")
    wait_until(lambda: daemon.get("/readyz") == (200, "ok\n"), timeout=30)
    outage = fake.fail("GET", r"/inferenceservices$", 503, times=10**6, message="etcd unavailable")
    fake.break_watches("inferenceservices", "close")
    wait_until(lambda: daemon.get("/readyz")[0] == 503, timeout=30)
    assert daemon.get("/readyz")[1].startswith("informer inferenceservices.serving.kserve.io in all namespaces failing")
    wait_until(lambda: daemon.get("/healthz")[0] == 503, timeout=30)  # the kubelet would restart the pod now
    assert "has not recovered" in daemon.get("/healthz")[1] and "etcd unavailable" in daemon.get("/healthz")[1]
    outage.times = 0
    wait_until(lambda: daemon.get("/readyz") == (200, "ok\n") and daemon.get("/healthz") == (200, "ok\n"), timeout=30)


def test_a_busy_health_address_is_a_usage_error_naming_the_flag(fake, tmp_path):
    fake.put(shipped_configmap("Standard"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cmd = [sys.executable, "-m", "kserve_compile.apply.cli", "daemon", "--server", fake.url, "--no-leader-elect"]
        cmd += ["--health-addr", f"127.0.0.1:{port}", "--metrics-addr", f"127.0.0.1:{_free_port()}"]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert f"error: --health-addr 127.0.0.1:{port}: cannot listen: the address is in use" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_tls_verification_off_is_said_once_not_per_request(fake, tmp_path):
    """A kubeconfig with insecure-skip-tls-verify: one line, no InsecureRequestWarning per request."""
    import warnings

    import urllib3

    from kserve_compile.apply import kube

    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = kube.load_api_client(str(kubeconfig))
        assert client.configuration.verify_ssl is False
        warnings.warn("probe", urllib3.exceptions.InsecureRequestWarning, stacklevel=1)
    assert not [w for w in caught if issubclass(w.category, urllib3.exceptions.InsecureRequestWarning)]
