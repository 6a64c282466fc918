"""The node agent's download container: ClusterStorageContainer choice and credentials (localmodelnode/controller.go)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from .helpers import by_kind, cache, config, node, node_group, render

CSC = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "ClusterStorageContainer",
    "metadata": {"name": "dl"},
    "spec": {
        "container": {"name": "dl", "image": "example.com/dl:1", "args": ["ignored"]},
        "supportedUriFormats": [{"prefix": "s3://"}],
        "workloadType": "localModelDownloadJob",
    },
}


def _container(tmp_path: Path, *extra: dict[str, Any], uri: str = "s3://b/m", **spec: Any) -> dict[str, Any]:
    result = render(tmp_path, config(), node_group("gpu"), cache("m", uri, ["gpu"], **spec), node("n", "gpu"), *extra)
    return by_kind(result, "Job")[0]["spec"]["template"]["spec"]


def test_download_workload_storage_container_supplies_the_container(tmp_path: Path) -> None:
    pod = _container(tmp_path, CSC)
    container = pod["containers"][0]
    assert (container["name"], container["image"]) == ("dl", "example.com/dl:1")
    assert container["args"] == ["s3://b/m", "/mnt/models"]


def test_other_workload_types_and_disabled_ones_are_skipped(tmp_path: Path) -> None:
    init = {**CSC, "spec": {**CSC["spec"], "workloadType": "initContainer"}}
    assert _container(tmp_path, init)["containers"][0]["name"] == "kserve-localmodel-download"
    disabled = {**CSC, "disabled": True}
    assert _container(tmp_path, disabled)["containers"][0]["image"] == "kserve/storage-initializer:latest"


def test_service_account_credentials_from_the_job_namespace(tmp_path: Path) -> None:
    sa = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "dl-sa", "namespace": "kserve-localmodel-jobs"},
        "secrets": [{"name": "s3"}],
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s3", "namespace": "kserve-localmodel-jobs"},
        "data": {k: base64.b64encode(b"x").decode() for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")},
    }
    env = {e["name"] for e in _container(tmp_path, sa, secret, serviceAccountName="dl-sa")["containers"][0]["env"]}
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= env


def test_no_credentials_unless_the_cache_names_them(tmp_path: Path) -> None:
    sa = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": "kserve-localmodel-jobs"},
        "secrets": [{"name": "s3"}],
    }
    assert "env" not in _container(tmp_path, sa)["containers"][0]


def test_storage_key_credentials(tmp_path: Path) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "storage-config", "namespace": "kserve-localmodel-jobs"},
        "stringData": {"k": '{"type": "s3", "bucket": "b"}'},
    }
    env = _container(tmp_path, secret, storage={"key": "k"})["containers"][0]["env"]
    assert env == [{"name": "STORAGE_CONFIG", "valueFrom": {"secretKeyRef": {"name": "storage-config", "key": "k"}}}]


def test_bad_storage_secret_is_a_warning_and_the_job_is_still_made(tmp_path: Path) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "storage-config", "namespace": "kserve-localmodel-jobs"},
        "stringData": {"other": "{}"},
    }
    result = render(
        tmp_path,
        config(),
        node_group("gpu"),
        cache("m", "s3://b/m", ["gpu"], storage={"key": "k"}),
        node("n", "gpu"),
        secret,
    )
    assert len(by_kind(result, "Job")) == 1
    assert any("credentials not injected: specified storage key k not found" in w.message for w in result.warnings)
