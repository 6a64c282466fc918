"""OCI model sources, ported from KServe's TestInjectModelcar (pod/storage_initializer_injector_test.go:3198-3432),
TestInjectModelcarMultiNode (:5102-5266), TestCommonStorageInitializationWithOciURI (:5267-5432), the OCI-native tests
(:5625-5823) and oci_fetch_test.go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kserve_compile.errors import InputError
from kserve_compile.inputs.cluster_state import ClusterState
from kserve_compile.inputs.config import parse_config
from kserve_compile.render.pod_webhook.inject import inject_pod
from kserve_compile.render.pod_webhook.modelcar import parse_oci_scheme
from kserve_compile.render.pod_webhook.storage import apply_storage_uris

DATA = Path(__file__).resolve().parents[2] / "kserve_compile" / "data"
SHIPPED = yaml.safe_load((DATA / "inferenceservice-config.yaml").read_text())["data"]
SHIPPED_SI = json.loads(SHIPPED["storageInitializer"])
SRC = "internal.serving.kserve.io/storage-initializer-sourceuri"
MC_RES = {"limits": {"cpu": "10m", "memory": "15Mi"}, "requests": {"cpu": "10m", "memory": "15Mi"}}


def config(**si):
    return parse_config({**SHIPPED, "storageInitializer": json.dumps({**SHIPPED_SI, **si})})


def inject(uri, containers, cfg=None):
    template = {
        "metadata": {"labels": {"serving.kserve.io/inferenceservice": "m"}, "annotations": {SRC: uri}},
        "spec": {"containers": containers},
    }
    out, _ = inject_pod(template, namespace="default", config=cfg or config(), cluster=ClusterState())
    return out["spec"]


def prefetch(image):
    return (
        f"echo 'Pre-fetching modelcar {image}: ' && [ -d /models ] && [ \"$$(ls -A /models)\" ] && "
        "echo 'OK ... Prefetched and valid (/models exists)' || "
        "(echo 'NOK ... Prefetched but modelcar is invalid (/models does not exist or is empty)' && exit 1)"
    )


def test_modelcar_with_shipped_config():
    # TestInjectModelcar (:3198-3328) with the shipped uidModelcar 1010
    spec = inject("oci://myrepo/mymodelimage", [{"name": "kserve-container"}])
    volume_mount = {"name": "kserve-provision-location", "mountPath": "/mnt"}
    assert spec == {
        "containers": [
            {
                "name": "kserve-container",
                "env": [{"name": "MODEL_INIT_MODE", "value": "async"}],
                "volumeMounts": [volume_mount],
                "securityContext": {"runAsUser": 1010},
            },
            {
                "name": "modelcar",
                "image": "myrepo/mymodelimage",
                "volumeMounts": [volume_mount],
                "args": ["sh", "-c", "ln -sf /proc/$$$$/root/models /mnt/models && sleep infinity"],
                "resources": MC_RES,
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "securityContext": {"runAsUser": 1010},
            },
        ],
        "initContainers": [
            {
                "name": "modelcar-init",
                "image": "myrepo/mymodelimage",
                "args": ["sh", "-c", prefetch("myrepo/mymodelimage")],
                "resources": MC_RES,
                "terminationMessagePolicy": "FallbackToLogsOnError",
            }
        ],
        "volumes": [{"name": "kserve-provision-location", "emptyDir": {}}],
        "shareProcessNamespace": True,
    }


def test_modelcar_idempotent_and_transformer():
    # TestModelcarIdempotency (:3357-3378) and transformer mount
    spec = inject("oci://r/i", [{"name": "kserve-container"}, {"name": "transformer-container"}])
    assert [c["name"] for c in spec["containers"]] == ["kserve-container", "transformer-container", "modelcar"]
    assert [c["name"] for c in spec["initContainers"]] == ["modelcar-init"]
    again = inject_pod(
        {
            "metadata": {"labels": {"serving.kserve.io/inferenceservice": "m"}, "annotations": {SRC: "oci://r/i"}},
            "spec": spec,
        },
        namespace="default",
        config=config(),
        cluster=ClusterState(),
    )[0]["spec"]
    assert again == spec


def test_oci_disabled_falls_back_to_storage_initializer():
    # TestStorageInitializerInjectorWithModelcarConfig (:3379-3432): with OCI support off, oci:// is downloaded.
    spec = inject("oci://r/i", [{"name": "kserve-container"}], cfg=config(enableModelcar=False))
    assert spec["initContainers"][0]["name"] == "storage-initializer"
    assert spec["initContainers"][0]["args"] == ["oci://r/i", "/mnt/models"]
    assert "shareProcessNamespace" not in spec


def test_modelcar_worker_container():
    # TestInjectModelcarMultiNode (:5102-5266)
    spec = inject("oci://r/i", [{"name": "worker-container"}])
    assert spec["containers"][0]["env"] == [{"name": "MODEL_INIT_MODE", "value": "async"}]
    with pytest.raises(InputError, match="Invalid configuration: cannot find container: kserve-container"):
        inject("oci://r/i", [{"name": "other"}])


def test_oci_native_mode():
    # TestInjectModelcarOciNative (:5625-5701)
    spec = inject("oci+native://reg/img:1", [{"name": "kserve-container"}])
    assert spec == {
        "containers": [
            {
                "name": "kserve-container",
                "volumeMounts": [
                    {"name": "mnt-models", "mountPath": "/mnt/models", "subPath": "models", "readOnly": True}
                ],
            }
        ],
        "volumes": [{"name": "mnt-models", "image": {"reference": "reg/img:1", "pullPolicy": "IfNotPresent"}}],
    }


def test_oci_fetch_mode_with_pull_secret():
    # oci_fetch_test.go: storage initializer download with the first imagePullSecret as docker config.
    template = {
        "metadata": {
            "labels": {"serving.kserve.io/inferenceservice": "m"},
            "annotations": {SRC: "oci+fetch://reg/img:1"},
        },
        "spec": {
            "containers": [{"name": "kserve-container"}],
            "imagePullSecrets": [{"name": "regcred"}, {"name": "other"}],
        },
    }
    spec = inject_pod(template, namespace="default", config=config(ociInsecureRegistry=True), cluster=ClusterState())[
        0
    ]["spec"]
    init = spec["initContainers"][0]
    assert init["args"] == ["oci://reg/img:1", "/mnt/models"]
    assert init["env"] == [
        {"name": "KSERVE_OCI_DOCKER_CONFIG", "value": "/mnt/oci-fetch-auth/config.json"},
        {"name": "KSERVE_OCI_INSECURE_REGISTRY", "value": "true"},
    ]
    assert init["volumeMounts"] == [
        {"name": "kserve-oci-fetch-docker-config", "mountPath": "/mnt/oci-fetch-auth", "readOnly": True},
        {"name": "mnt-models", "mountPath": "/mnt/models"},
    ]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "mnt-models", "mountPath": "/mnt/models"}]
    assert spec["volumes"][0] == {
        "name": "kserve-oci-fetch-docker-config",
        "secret": {
            "secretName": "regcred",
            "defaultMode": 256,
            "items": [{"key": ".dockerconfigjson", "path": "config.json"}],
        },
    }


def test_storage_uris_multiple_oci_indexed():
    # TestCommonStorageInitializationWithOciURI (:5267-5432): index-suffixed names, one per URI.
    uris = [
        {"uri": "oci://r/base", "mountPath": "/mnt/base/model"},
        {"uri": "oci://r/adapter", "mountPath": "/mnt/adapter/model"},
    ]
    spec, _ = apply_storage_uris(
        {"containers": [{"name": "kserve-container"}]},
        uris,
        annotations={},
        namespace="default",
        config=config(),
        cluster=ClusterState(),
    )
    assert [c["name"] for c in spec["containers"]] == ["kserve-container", "modelcar", "modelcar-1"]
    assert [c["name"] for c in spec["initContainers"]] == ["modelcar-init", "modelcar-init-1"]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "kserve-provision-location", "mountPath": "/mnt/base"},
        {"name": "kserve-provision-location-1", "mountPath": "/mnt/adapter"},
    ]
    assert (
        spec["containers"][2]["args"][2]
        == "mkdir -p /mnt/adapter && ln -sf /proc/$$$$/root/models /mnt/adapter/model && sleep infinity"
    )


def test_storage_uris_oci_parent_collision():
    # ValidateOCIMountPaths: modelcar paths must not share a parent directory.
    uris = [{"uri": "oci://r/a", "mountPath": "/mnt/models/a"}, {"uri": "oci://r/b", "mountPath": "/mnt/models/b"}]
    with pytest.raises(
        InputError, match='OCI mount paths "/mnt/models/a" and "/mnt/models/b" share parent directory "/mnt/models"'
    ):
        apply_storage_uris(
            {"containers": [{"name": "kserve-container"}]},
            uris,
            annotations={},
            namespace="default",
            config=config(),
            cluster=ClusterState(),
        )
    too_many = [{"uri": f"oci+native://r/{i}", "mountPath": f"/m/{i}"} for i in range(11)]
    with pytest.raises(InputError, match=r"too many OCI sources \(11\); maximum is 10 per pod"):
        apply_storage_uris(
            {"containers": [{"name": "kserve-container"}]},
            too_many,
            annotations={},
            namespace="default",
            config=config(),
            cluster=ClusterState(),
        )


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("oci+native://reg/img:tag", ("native", "oci://reg/img:tag", True)),
        ("oci+fetch://reg/img:tag", ("fetch", "oci://reg/img:tag", True)),
        ("oci://reg/img:tag", ("", "oci://reg/img:tag", True)),
        ("s3://bucket/key", ("", "s3://bucket/key", False)),
    ],
)
def test_parse_oci_scheme(uri, expected):
    # ParseOciScheme doc examples (pkg/utils/storage.go)
    assert parse_oci_scheme(uri) == expected
