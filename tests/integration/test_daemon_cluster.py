"""The daemon against a real kube-apiserver (and, where named, kube-controller-manager): reconcile, status,
drift, restart, leader election, garbage collection, and an API the server does not serve.

Each daemon runs in this process, watching only its test's namespace (its own shard and Lease).
"""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from apiserver import CRDS, ROOT, ApiServer, free_port, require_assets
from cluster_helpers import (
    ISVC_API,
    conditions,
    converged,
    failed,
    install_config,
    isvc,
    running_daemon,
    status_of,
    wait_until,
    writes,
)


@pytest.fixture
def ns(apiserver: ApiServer, crds: list, kube_namespace: str) -> str:
    install_config(apiserver)
    return kube_namespace


def children(server: ApiServer, namespace: str) -> dict[str, list[str]]:
    out = {}
    for api, kind in (("v1", "Service"), ("apps/v1", "Deployment"), ("networking.k8s.io/v1", "Ingress")):
        _, listing = server.request("GET", server.resource_path(api, kind, namespace))
        out[kind] = sorted(o["metadata"]["name"] for o in listing["items"])
    return out


def test_reconcile_writes_children_and_status_with_observed_generation(apiserver: ApiServer, ns: str) -> None:
    apiserver.apply(isvc("m", ns, minReplicas=2))
    with running_daemon(apiserver, ns) as daemon:
        wait_until(lambda: converged(apiserver, ns, "m"), "the first status")
        assert children(apiserver, ns) == {"Service": ["m-predictor"], "Deployment": ["m-predictor"], "Ingress": ["m"]}
        live = apiserver.get(ISVC_API, "InferenceService", "m", ns)
        dep = apiserver.get("apps/v1", "Deployment", "m-predictor", ns)
        assert dep["metadata"]["ownerReferences"][0]["uid"] == live["metadata"]["uid"]
        assert dep["spec"]["replicas"] == 2
        parent = apiserver.get("v1", "ConfigMap", "m.kserve-compile", ns)
        assert parent["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"] == (
            "Deployment.apps,Ingress.networking.k8s.io,Service"
        )
        conds = conditions(apiserver, ns, "m")
        assert conds["Ready"]["status"] == "False" and conds["Ready"]["observedGeneration"] == 1
        assert conds["IngressReady"]["status"] == "True"
        status = status_of(apiserver, ns, "m")
        assert status["url"] == f"http://m-{ns}.example.com" and status["deploymentMode"] == "Standard"
        status_fields = next(m for m in live["metadata"]["managedFields"] if m["manager"] == "kserve-compile-status")
        assert set(status_fields["fieldsV1"]) == {"f:status"}  # written through the status subresource
        # one reconcile: the watch events of its own writes, which kube-apiserver may send before the
        # responses, did not queue it again; the status write did not either
        time.sleep(1.0)
        assert daemon.metrics.get("reconcile_total", result="success") == 1
        assert daemon.metrics.get("status_writes_total") == 1

        model = {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://bucket/v2"}
        apiserver.apply(isvc("m", ns, minReplicas=2, model=model))
        wait_until(lambda: converged(apiserver, ns, "m", generation=2), "observedGeneration 2")
        dep = apiserver.get("apps/v1", "Deployment", "m-predictor", ns)
        assert "gs://bucket/v2" in dep["spec"]["template"]["spec"]["initContainers"][0]["args"]
        assert all(c["observedGeneration"] == 2 for c in conditions(apiserver, ns, "m").values())


def test_a_users_label_requeues_and_drift_is_repaired(apiserver: ApiServer, ns: str) -> None:
    apiserver.apply(isvc("m", ns, minReplicas=2))
    with running_daemon(apiserver, ns, resync_seconds=2.0) as daemon:
        wait_until(lambda: converged(apiserver, ns, "m"), "the first status")
        scale = apiserver.resource_path("apps/v1", "Deployment", ns, "m-predictor") + "/scale"
        apiserver.request("PATCH", scale, {"spec": {"replicas": 5}}, "application/merge-patch+json")  # kubectl scale
        wait_until(
            lambda: apiserver.get("apps/v1", "Deployment", "m-predictor", ns)["spec"]["replicas"] == 2, "the repair"
        )
        # counted once the reconcile's apply is over, a moment after the repaired Deployment is visible
        wait_until(lambda: daemon.metrics.get("drift_detected_total") == 1, "the drift counted")
        before = daemon.metrics.get("reconcile_total", result="success")
        apiserver.apply(
            {
                "apiVersion": ISVC_API,
                "kind": "InferenceService",
                "metadata": {"name": "m", "namespace": ns, "labels": {"team": "a"}},
            },
            field_manager="kubectl",
        )
        wait_until(lambda: daemon.metrics.get("reconcile_total", result="success") > before, "a reconcile")
        # the label's reconcile done (a resync's may have been the one counted): the children carry the label
        wait_until(
            lambda: apiserver.get("apps/v1", "Deployment", "m-predictor", ns)["metadata"]["labels"].get("team") == "a",
            "the label on the children",
        )
        # a resync with nothing changed sends no request at all
        wait_until(lambda: len(daemon.queue) == 0 and daemon.queue.processing() == 0, "an idle queue")
        sent = dict(daemon.kube.requests)
        resyncs = daemon.metrics.get("resyncs_total")
        wait_until(lambda: daemon.metrics.get("resyncs_total") >= resyncs + 2, "two resyncs", timeout=30)
        assert {k: v - sent.get(k, 0) for k, v in daemon.kube.requests.items() if v != sent.get(k, 0)} == {}


def test_drift_whose_event_was_missed_is_repaired_on_resync(apiserver: ApiServer, ns: str) -> None:
    apiserver.apply(isvc("m", ns, minReplicas=2))
    with running_daemon(apiserver, ns, resync_seconds=3.0) as daemon:
        wait_until(lambda: converged(apiserver, ns, "m"), "the first status")
        daemon.sources.record.needs_owner = lambda event, key, live: False  # as if the watch had missed it
        scale = apiserver.resource_path("apps/v1", "Deployment", ns, "m-predictor") + "/scale"
        apiserver.request("PATCH", scale, {"spec": {"replicas": 5}}, "application/merge-patch+json")
        resyncs = daemon.metrics.get("resyncs_total")
        wait_until(
            lambda: apiserver.get("apps/v1", "Deployment", "m-predictor", ns)["spec"]["replicas"] == 2,
            "the resync's repair",
            timeout=30,
        )
        assert daemon.metrics.get("resyncs_total") > resyncs
        wait_until(lambda: daemon.metrics.get("drift_detected_total") == 1, "the drift counted")


def test_a_restarted_daemon_writes_nothing(apiserver: ApiServer, ns: str) -> None:
    for name in ("a", "b"):
        apiserver.apply(isvc(name, ns))
    with running_daemon(apiserver, ns):
        wait_until(lambda: converged(apiserver, ns, "a") and converged(apiserver, ns, "b"), "both converged")
    before = {n: apiserver.get(ISVC_API, "InferenceService", n, ns)["metadata"]["resourceVersion"] for n in "ab"}
    with running_daemon(apiserver, ns) as daemon:
        wait_until(lambda: daemon.metrics.get("reconcile_total", result="success") >= 2, "both reconciled again")
        time.sleep(0.5)
        assert writes(daemon.kube) == {}  # dry runs only: children, parents and status were all as rendered
        assert daemon.kube.requests["PATCH(dry-run)"] == 6
    after = {n: apiserver.get(ISVC_API, "InferenceService", n, ns)["metadata"]["resourceVersion"] for n in "ab"}
    assert after == before


def test_an_api_the_server_does_not_serve_fails_only_the_isvc_that_needs_it(apiserver: ApiServer, ns: str) -> None:
    apiserver.apply(isvc("scaled", ns, annotations={"serving.kserve.io/deploymentMode": "Standard"}))  # an HPA
    apiserver.apply(isvc("fixed", ns))
    with running_daemon(apiserver, ns) as daemon:
        wait_until(lambda: converged(apiserver, ns, "fixed"), "the isvc without an HPA")
        ready = wait_until(lambda: failed(apiserver, ns, "scaled"), "the failure status")
        assert ready["status"] == "False" and ready["reason"] == "ApplyFailed"
        assert "the server does not serve API version 'autoscaling/v2'" in ready["message"]
        assert children(apiserver, ns)["Deployment"] == ["fixed-predictor"]  # nothing of 'scaled' half-applied
        assert apiserver.get("v1", "ConfigMap", "scaled.kserve-compile", ns) is None
        _, events = apiserver.request("GET", f"/api/v1/namespaces/{ns}/events")
        assert [e["reason"] for e in events["items"] if e["involvedObject"]["name"] == "scaled"] == ["ApplyFailed"]
        assert daemon.liveness().alive and daemon.readiness().ready
        assert daemon.queue.failures(("isvc", ns, "scaled")) >= 1  # retried with backoff


def test_two_daemons_share_one_lease(apiserver: ApiServer, ns: str) -> None:
    apiserver.apply(isvc("m", ns))
    timing = {"leader_elect": True, "lease_seconds": 4.0, "renew_seconds": 3.0, "retry_seconds": 0.3}
    with running_daemon(apiserver, ns, identity="first", **timing) as first:
        wait_until(lambda: converged(apiserver, ns, "m"), "the leader's reconcile")
        lease_name = first.cfg.lease_name
        with running_daemon(apiserver, ns, identity="second", **timing) as second:
            wait_until(lambda: second.readiness().ready, "the follower's caches")
            time.sleep(1.0)
            lease = apiserver.get("coordination.k8s.io/v1", "Lease", lease_name, "kserve")
            assert lease["spec"]["holderIdentity"] == "first"
            assert second.kube.requests["PATCH"] == 0 and second.kube.requests["POST"] == 0  # a follower never writes
            first.stop.set()  # SIGTERM: the leader hands the Lease back
            wait_until(lambda: second.is_leader(), "the follower to take over", timeout=15)
            apiserver.apply(isvc("n", ns))
            wait_until(lambda: converged(apiserver, ns, "n"), "the new leader's reconcile")
            lease = apiserver.get("coordination.k8s.io/v1", "Lease", lease_name, "kserve")
            assert lease["spec"]["holderIdentity"] == "second" and lease["spec"]["leaseTransitions"] >= 1


def test_children_are_garbage_collected_with_their_isvc(
    controllers: ApiServer, crds: list, kube_namespace: str
) -> None:
    install_config(controllers)
    ns = kube_namespace
    controllers.apply(isvc("m", ns))
    with running_daemon(controllers, ns) as daemon:
        wait_until(lambda: converged(controllers, ns, "m"), "the first status")
        assert controllers.delete(ISVC_API, "InferenceService", "m", ns) == 200
        wait_until(
            lambda: (
                children(controllers, ns) == {"Service": [], "Deployment": [], "Ingress": []}
                and controllers.get("v1", "ConfigMap", "m.kserve-compile", ns) is None
            ),
            "the garbage collector",
        )
        assert daemon.metrics.get("reconcile_total", result="success") >= 1
        assert writes(daemon.kube).get("DELETE", 0) == 0  # the garbage collector deleted them, not the daemon


def etcd(server: ApiServer, call: str, body: dict) -> dict:
    """etcd's v3 API through its JSON gateway (what ``etcdctl`` sends over gRPC)."""
    request = urllib.request.Request(f"{server.etcd_url}/v3/{call}", json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as resp:  # noqa: S310 - loopback etcd of this test
        return dict(json.loads(resp.read()))


@pytest.fixture
def uncached() -> Iterator[ApiServer]:
    """A server of its own whose watches go to etcd (--watch-cache=false), so a compaction reaches them."""
    with ApiServer(require_assets(), extra_flags=["--watch-cache=false"]) as server:
        server.apply_file(CRDS)
        install_config(server)
        yield server


def test_a_watch_survives_etcd_compaction(uncached: ApiServer) -> None:
    server, ns = uncached, uncached.create_namespace()
    server.apply(isvc("before", ns))
    with running_daemon(server, ns, watch_timeout=1) as daemon:
        wait_until(lambda: converged(server, ns, "before"), "the first isvc")
        for i in range(5):  # move etcd's revision past every resourceVersion the informers hold
            server.apply(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": "default"}}
            )
        revision = int(etcd(server, "kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])
        etcd(server, "kv/compaction", {"revision": str(revision), "physical": True})  # etcdctl compact
        expired = lambda: daemon.metrics.get("watch_restarts_total", resource="inferenceservices", reason="expired")  # noqa: E731
        wait_until(lambda: expired() >= 1, "410 Gone on the isvc watch", timeout=30)
        server.apply(isvc("after", ns))
        wait_until(lambda: converged(server, ns, "after"), "the isvc created after the relist")
        assert daemon.readiness().ready and daemon.liveness().alive


def test_the_daemon_command_with_a_kubeconfig(apiserver: ApiServer, ns: str) -> None:
    """``kserve-compile daemon`` as a process: TLS and token from the kubeconfig, probes, SIGTERM exits 0."""
    apiserver.apply(isvc("m", ns))
    health, metrics = free_port(), free_port()
    args = ["daemon", "--kubeconfig", apiserver.kubeconfig, "-n", ns, "--lease-namespace", "kserve"]
    args += ["--health-addr", f"127.0.0.1:{health}", "--metrics-addr", f"127.0.0.1:{metrics}"]
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: probe(health, "/readyz") == (200, "ok\n"), "/readyz", timeout=60)
        wait_until(lambda: converged(apiserver, ns, "m"), "the reconcile")
        assert probe(health, "/healthz") == (200, "ok\n")
        assert 'kserve_compile_reconcile_total{result="success"} 1' in probe(metrics, "/metrics")[1]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "acquired Lease" in stderr and "released Lease" in stderr


def probe(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:  # noqa: S310 - loopback
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError:
        return 0, ""
