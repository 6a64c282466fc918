"""The real-API-server fixture itself (start, auth, stop with nothing left behind) and smoke checks against it:
the project's CRDs are accepted (structural schemas) and enforced, and the controller manager collects garbage."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
import yaml
from apiserver import CRDS, ROOT, ApiServer, AssetsError, StartError, alive_pids, binary_version, require_assets

ISVC = ROOT / "examples" / "sklearn-iris.yaml"


def test_server_version_matches_the_binary(apiserver: ApiServer) -> None:
    _, version = apiserver.request("GET", "/version")
    assert (int(version["major"]), int(version["minor"].rstrip("+"))) == apiserver.version
    assert binary_version(apiserver.assets / "kube-apiserver") == apiserver.version


def test_kubeconfig_works_with_the_official_client(apiserver: ApiServer) -> None:
    from kubernetes import client

    with apiserver.api_client() as api:
        names = [ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items]
    assert "default" in names and "kube-system" in names


def test_a_wrong_token_or_none_is_refused(apiserver: ApiServer) -> None:
    right = apiserver.token
    try:
        apiserver.token = "not-the-token"
        assert apiserver.request("GET", "/api/v1/namespaces", check=False)[0] == 401
        apiserver.token = ""
        assert apiserver.request("GET", "/api/v1/namespaces", check=False)[0] == 401
    finally:
        apiserver.token = right
    assert apiserver.request("GET", "/api/v1/namespaces")[0] == 200


def test_stop_leaves_no_process_no_port_and_no_directory() -> None:
    server = ApiServer(require_assets())
    server.start()
    server.start_controller_manager()
    pids, workdir = server.pids(), server.workdir
    ports = [int(url.rsplit(":", 1)[1]) for url in (server.server, server.etcd_url)]
    assert len(alive_pids(pids)) == 3
    server.stop()
    assert alive_pids(pids) == []
    assert not workdir.exists()
    for port in ports:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))  # free again


def test_a_missing_binary_is_named(tmp_path: Path) -> None:
    with pytest.raises(AssetsError, match="no executable 'kube-apiserver'"):
        ApiServer(tmp_path).start()


def test_an_apiserver_that_dies_is_reported_and_etcd_stopped(tmp_path: Path) -> None:
    assets = require_assets()
    (tmp_path / "etcd").symlink_to(assets / "etcd")
    fake = tmp_path / "kube-apiserver"
    fake.write_text(
        '#!/bin/sh\ncase "$*" in *--version*) echo "Kubernetes v1.99.0"; exit 0;; esac\necho "no such storage" >&2\nexit 3\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    server = ApiServer(tmp_path)
    with pytest.raises(StartError, match=r"kube-apiserver exited \(3\):\nno such storage"):
        server.start()
    assert alive_pids(server.pids()) == []


def test_the_project_crds_are_structural_and_established(apiserver: ApiServer, crds: list[dict]) -> None:
    names = {doc["metadata"]["name"] for doc in yaml.safe_load_all(CRDS.read_text()) if doc}
    assert {c["metadata"]["name"] for c in crds} == names
    for name in names:
        crd = apiserver.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
        assert crd is not None
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions.get("Established") == "True", (name, conditions)
        assert conditions.get("NonStructuralSchema") != "True", (name, conditions)


def test_an_isvc_is_stored_and_its_status_schema_enforced(
    apiserver: ApiServer, crds: list[dict], kube_namespace: str
) -> None:
    isvc = yaml.safe_load(ISVC.read_text())
    isvc["metadata"]["namespace"] = kube_namespace
    created = apiserver.apply(isvc)
    assert created["spec"] == isvc["spec"]  # spec is kept as-is (x-kubernetes-preserve-unknown-fields)
    assert created["metadata"]["generation"] == 1
    status_path = apiserver.resource_path(
        "serving.kserve.io/v1beta1", "InferenceService", kube_namespace, "sklearn-iris"
    )
    bad = {"apiVersion": isvc["apiVersion"], "kind": isvc["kind"], "metadata": {"name": "sklearn-iris"}}
    bad["status"] = {"conditions": [{"type": "Ready"}]}  # status is required in a condition
    code, body = apiserver.request(
        "PATCH", f"{status_path}/status?fieldManager=t", bad, "application/merge-patch+json", check=False
    )
    assert code == 422 and "status" in str(body.get("message")), body
    good = {"status": {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]}}
    _, out = apiserver.request("PATCH", f"{status_path}/status", good, "application/merge-patch+json")
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    assert out["metadata"]["generation"] == 1  # a status write is not a spec change


def test_the_garbage_collector_deletes_owned_objects(controllers: ApiServer, kube_namespace: str) -> None:
    owner = controllers.apply(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": kube_namespace}}
    )
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    child = {"name": "child", "namespace": kube_namespace, "ownerReferences": [ref]}
    controllers.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": child})
    assert controllers.delete("v1", "ConfigMap", "owner", kube_namespace) == 200
    controllers.wait_for(
        lambda: controllers.get("v1", "ConfigMap", "child", kube_namespace) is None, 60, "the GC to delete the child"
    )


def test_the_deployment_controller_writes_status(controllers: ApiServer, kube_namespace: str) -> None:
    labels = {"app": "x"}
    container = {"name": "c", "image": "example.invalid/x:1"}
    spec = {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}}}
    spec["template"]["spec"] = {"containers": [container]}
    meta = {"name": "x", "namespace": kube_namespace}
    controllers.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec})

    def observed() -> bool:
        dep = controllers.get("apps/v1", "Deployment", "x", kube_namespace) or {}
        return dep.get("status", {}).get("observedGeneration") == 1

    controllers.wait_for(observed, 60, "the Deployment controller to observe generation 1")
    _, replicasets = controllers.request("GET", f"/apis/apps/v1/namespaces/{kube_namespace}/replicasets")
    assert [rs["metadata"]["ownerReferences"][0]["name"] for rs in replicasets["items"]] == ["x"]


def test_extra_flags_reach_the_apiserver_here_etcd_compaction() -> None:
    # --etcd-compaction-interval=1s: a LIST at a resourceVersion etcd has compacted away answers 410 Expired
    server = ApiServer(require_assets(), extra_flags=["--etcd-compaction-interval=1s"])
    with server:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}
        old = server.apply(cm)["metadata"]["resourceVersion"]
        server.apply({**cm, "data": {"k": "v"}})
        path = f"/api/v1/namespaces/default/configmaps?resourceVersion={old}&resourceVersionMatch=Exact"

        def expired() -> bool:
            return server.request("GET", path, check=False)[0] == 410

        server.wait_for(expired, 30, "etcd to compact the old revision")
        assert server.request("GET", path, check=False)[1]["reason"] == "Expired"
