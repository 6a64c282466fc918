"""Storage initializer injection, ported from KServe's pod/storage_initializer_injector_test.go.

Each case builds the pod template, runs the inlined webhook and compares the whole pod spec with the expectation
transcribed from the Go test (named in the comment). Go tests run with no ClusterStorageContainer unless stated, and
with the storage initializer config below (storage_initializer_injector_test.go:45-72).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from kserve_compile.errors import InputError
from kserve_compile.inputs.cluster_state import ClusterState
from kserve_compile.inputs.config import parse_config
from kserve_compile.render.pod_webhook.inject import inject_pod
from kserve_compile.render.pod_webhook.storage import (
    apply_storage_uris,
    inject_storage_initializer,
    volume_name_from_path,
)

DATA = Path(__file__).resolve().parents[2] / "kserve_compile" / "data"
SHIPPED = yaml.safe_load((DATA / "inferenceservice-config.yaml").read_text())["data"]
GO_TEST_SI = {
    "cpuRequest": "100m",
    "cpuLimit": "1",
    "memoryRequest": "200Mi",
    "memoryLimit": "1Gi",
    "caBundleVolumeMountPath": "/etc/ssl/custom-certs",
}
SRC = "internal.serving.kserve.io/storage-initializer-sourceuri"
ISVC = "serving.kserve.io/inferenceservice"
IMAGE = "kserve/storage-initializer:latest"
RES = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "200Mi"}}
HF = [
    {"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "1"},
    {"name": "HF_XET_HIGH_PERFORMANCE", "value": "1"},
    {"name": "HF_XET_NUM_CONCURRENT_RANGE_GETS", "value": "8"},
]
PROVISION_USER = {"name": "kserve-provision-location", "mountPath": "/mnt/models", "readOnly": True}
PROVISION_INIT = {"name": "kserve-provision-location", "mountPath": "/mnt/models"}
PROVISION_VOLUME = {"name": "kserve-provision-location", "emptyDir": {}}


def config(**keys: dict) -> object:
    data = dict(SHIPPED)
    data["storageInitializer"] = json.dumps(GO_TEST_SI)
    for key, value in keys.items():
        data[key] = json.dumps(value)
    return parse_config(data)


def default_csc() -> dict:
    return yaml.safe_load((DATA / "storagecontainers.yaml").read_text())


def pod(annotations: dict, spec: dict) -> dict:
    return {"metadata": {"labels": {ISVC: "my-model"}, "annotations": annotations}, "spec": spec}


def run(annotations: dict, spec: dict, *, cfg=None, cluster=None, namespace="default"):
    out, warnings = inject_pod(
        pod(annotations, spec), namespace=namespace, config=cfg or config(), cluster=cluster or ClusterState()
    )
    return out["spec"], warnings


def init(args, *, env=(), mounts=(PROVISION_INIT,), **extra) -> dict:
    container = {
        "name": "storage-initializer",
        "image": IMAGE,
        "args": list(args),
        "resources": RES,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "env": [*env, *HF],
        "volumeMounts": list(mounts),
    }
    container.update(extra)
    return container


def test_missing_annotation_changes_nothing():
    # TestStorageInitializerInjector "MissingAnnotations" (:79-100)
    spec = {"containers": [{"name": "kserve-container"}]}
    assert run({}, spec)[0] == spec


def test_already_injected_is_left_alone():
    # "AlreadyInjected" (:101-145): an existing storage-initializer init container means KServe skips.
    spec = {"containers": [{"name": "kserve-container"}], "initContainers": [{"name": "storage-initializer"}]}
    assert run({SRC: "gs://foo"}, spec)[0] == spec


def test_gs_uri_injects_init_container():
    # "StorageInitializerInjected" (:146-211)
    spec, warnings = run({SRC: "gs://foo"}, {"containers": [{"name": "kserve-container"}]})
    assert spec == {
        "containers": [{"name": "kserve-container", "volumeMounts": [PROVISION_USER]}],
        "initContainers": [init(["gs://foo", "/mnt/models"])],
        "volumes": [PROVISION_VOLUME],
    }
    assert warnings == [
        "ServiceAccount default/default not in the inputs: no storage credentials injected into storage-initializer"
    ]


def test_readonly_false_annotation():
    # "StorageInitializerInjectedReadOnlyFalse" (:278-345): the user mount becomes writable, the init one always is.
    spec, _ = run(
        {SRC: "gs://foo", "storage.kserve.io/readonly": "false"}, {"containers": [{"name": "kserve-container"}]}
    )
    assert spec["containers"] == [{"name": "kserve-container", "volumeMounts": [PROVISION_INIT]}]
    assert spec["initContainers"][0]["volumeMounts"] == [PROVISION_INIT]


def test_readonly_true_annotation():
    # "StorageInitializerInjectedReadOnlyTrue" (:346-411)
    spec, _ = run(
        {SRC: "gs://foo", "storage.kserve.io/readonly": "true"}, {"containers": [{"name": "kserve-container"}]}
    )
    assert spec["containers"] == [{"name": "kserve-container", "volumeMounts": [PROVISION_USER]}]


def test_pvc_uri_mounts_claim_with_subpath():
    # "StorageInitializerNotInjectedForPVC" / TestDirectVolumeMountForPvc (:412-460, :2223-2300)
    spec, warnings = run({SRC: "pvc://mypvcname/some/path/on/pvc"}, {"containers": [{"name": "kserve-container"}]})
    assert spec == {
        "containers": [
            {
                "name": "kserve-container",
                "volumeMounts": [
                    {
                        "name": "kserve-pvc-source",
                        "mountPath": "/mnt/models",
                        "subPath": "some/path/on/pvc",
                        "readOnly": True,
                    }
                ],
            }
        ],
        "volumes": [{"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": "mypvcname"}}],
    }
    assert warnings == []  # no init container, so no credential lookup


def test_pvc_root_has_no_subpath_and_readonly_false():
    # TestDirectVolumeMountForPvc "StorageInitializerNotInjectedForPVCReadOnlyFalse" (:2300-2370)
    spec, _ = run(
        {SRC: "pvc://mypvcname", "storage.kserve.io/readonly": "false"}, {"containers": [{"name": "kserve-container"}]}
    )
    assert spec["containers"][0]["volumeMounts"] == [{"name": "kserve-pvc-source", "mountPath": "/mnt/models"}]


def test_pvc_mounted_on_transformer_too():
    # TestTransformerCollocation "Transformer collocation with pvc" (:2445-2560)
    containers = [{"name": "kserve-container"}, {"name": "transformer-container"}]
    spec, _ = run({SRC: "pvc://mypvc/models"}, {"containers": containers})
    mount = {"name": "kserve-pvc-source", "mountPath": "/mnt/models", "subPath": "models", "readOnly": True}
    assert spec["containers"] == [
        {"name": "kserve-container", "volumeMounts": [mount]},
        {"name": "transformer-container", "volumeMounts": [mount]},
    ]


def test_transformer_collocation_with_s3_uri():
    # TestTransformerCollocation "Transformer collocation with s3" (:2560-2680)
    containers = [{"name": "kserve-container"}, {"name": "transformer-container"}]
    spec, _ = run({SRC: "s3://bucket/model"}, {"containers": containers})
    assert spec == {
        "containers": [
            {"name": "kserve-container", "volumeMounts": [PROVISION_USER]},
            {"name": "transformer-container", "volumeMounts": [PROVISION_USER]},
        ],
        "initContainers": [init(["s3://bucket/model", "/mnt/models"])],
        "volumes": [PROVISION_VOLUME],
    }


def test_storage_uri_env_rewritten():
    # TestCustomSpecStorageUriInjection (:596-700): a non-empty STORAGE_URI env points at the local copy.
    containers = [{"name": "kserve-container", "env": [{"name": "STORAGE_URI", "value": "https://foo.bar/model"}]}]
    spec, _ = run({SRC: "https://foo.bar/model"}, {"containers": containers})
    assert spec["containers"][0]["env"] == [{"name": "STORAGE_URI", "value": "/mnt/models"}]
    # an empty value is kept empty
    containers = [{"name": "kserve-container", "env": [{"name": "STORAGE_URI", "value": ""}]}]
    spec, _ = run({SRC: "https://foo.bar/model"}, {"containers": containers})
    assert spec["containers"][0]["env"] == [{"name": "STORAGE_URI", "value": ""}]


def test_worker_container_is_the_fallback_target():
    # TestStorageInitializerInjector worker-container case (storage_initializer_injector.go:420-428)
    spec, _ = run({SRC: "hf://org/model"}, {"containers": [{"name": "worker-container"}]})
    assert spec["containers"] == [{"name": "worker-container", "volumeMounts": [PROVISION_USER]}]
    assert spec["initContainers"][0]["args"] == ["hf://org/model", "/mnt/models"]


def test_missing_target_container_is_an_error():
    # TestStorageInitializerFailureCases "MissingUserContainer" (:554-595)
    with pytest.raises(InputError, match="Invalid configuration: cannot find container"):
        run({SRC: "gs://foo"}, {"containers": [{"name": "random-container"}]})


def test_agent_annotation_skips_storage_initializer():
    # CommonStorageInitialization skips when the model agent is injected (storage_initializer_injector.go:294-297)
    annotations = {SRC: "gs://foo", "internal.serving.kserve.io/agent": "true"}
    cfg = config()
    template = pod(annotations, {"containers": [{"name": "kserve-container"}]})
    inject_storage_initializer(
        template["metadata"], template["spec"], namespace="default", config=cfg, cluster=ClusterState(), warnings=[]
    )
    assert "initContainers" not in template["spec"]


def test_default_cluster_storage_container_is_merged():
    # TestStorageContainerCRDInjection with the shipped default CSC (:2924-3010): its container is merged over ours.
    cluster = ClusterState.from_manifests([default_csc()])
    spec, _ = run(
        {SRC: "s3://foo"},
        {"containers": [{"name": "kserve-container"}]},
        cluster=cluster,
        cfg=config(storageInitializer=json.loads(SHIPPED["storageInitializer"])),
    )
    assert spec["initContainers"] == [
        {
            "name": "storage-initializer",
            "image": IMAGE,
            "imagePullPolicy": "IfNotPresent",
            "args": ["s3://foo", "/mnt/models"],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "100Mi"}},
            "terminationMessagePolicy": "FallbackToLogsOnError",
            "env": HF,
            "volumeMounts": [PROVISION_INIT],
        }
    ]


def custom_csc(name="custom", *, prefix="custom://", regex=None, disabled=None, workload=None, multi=None) -> dict:
    fmt = {"regex": regex} if regex else {"prefix": prefix}
    spec = {
        "container": {
            "name": "storage-initializer",
            "image": "kserve/custom:latest",
            "env": [{"name": "name", "value": "value"}],
            "resources": {"requests": {"memory": "200Mi"}, "limits": {"memory": "500Mi"}},
        },
        "supportedUriFormats": [fmt],
    }
    if workload:
        spec["workloadType"] = workload
    if multi is not None:
        spec["supportsMultiModelDownload"] = multi
    doc = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "ClusterStorageContainer",
        "metadata": {"name": name},
        "spec": spec,
    }
    if disabled is not None:
        doc["disabled"] = disabled
    return doc


def test_custom_storage_container_by_prefix():
    # TestStorageContainerCRDInjection "Custom CSC by prefix" (:2924-3137): image, env and memory come from the CSC.
    cluster = ClusterState.from_manifests([custom_csc()])
    spec, _ = run({SRC: "custom://foo"}, {"containers": [{"name": "kserve-container"}]}, cluster=cluster)
    assert spec["initContainers"] == [
        init(
            ["custom://foo", "/mnt/models"],
            env=[{"name": "name", "value": "value"}],
            image="kserve/custom:latest",
            resources={"limits": {"cpu": "1", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}},
        )
    ]


def test_custom_storage_container_by_regex_and_disabled_one_skipped():
    # TestGetStorageContainerSpec (:2682-2761): regex search, disabled CSCs never match.
    cluster = ClusterState.from_manifests(
        [
            custom_csc("a-disabled", prefix="https://", disabled=True),
            custom_csc("b-regex", regex=r"https://(.+?)\.blob\.core\.windows\.net/(.+)"),
        ]
    )
    spec, _ = run(
        {SRC: "https://acct.blob.core.windows.net/c/m"}, {"containers": [{"name": "kserve-container"}]}, cluster=cluster
    )
    assert spec["initContainers"][0]["image"] == "kserve/custom:latest"
    spec, _ = run({SRC: "https://example.com/m"}, {"containers": [{"name": "kserve-container"}]}, cluster=cluster)
    assert spec["initContainers"][0]["image"] == IMAGE


@pytest.mark.parametrize(
    ("csc", "uri", "message"),
    [
        (None, "custom://foo", 'ClusterStorageContainer "custom" not found'),
        (custom_csc(disabled=True), "custom://foo", 'ClusterStorageContainer "custom" is disabled'),
        (
            custom_csc(workload="localModelDownloadJob"),
            "custom://foo",
            'has workloadType "localModelDownloadJob"; explicit selection requires "initContainer"',
        ),
        (custom_csc(), "s3://foo", 'ClusterStorageContainer "custom" does not support storageUri "s3://foo"'),
    ],
)
def test_explicit_storage_container_name_errors(csc, uri, message):
    # TestExplicitStorageContainerName (:2762-2923)
    cluster = ClusterState.from_manifests([csc] if csc else [])
    annotations = {SRC: uri, "internal.serving.kserve.io/storage-container-name": "custom"}
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(annotations, {"containers": [{"name": "kserve-container"}]}, cluster=cluster)


def test_ca_bundle_from_config_outside_kserve_namespace():
    # TestCaBundleConfigMapVolumeMountInStorageInitializer "cabundle configmap in user namespace" (:1485-1600)
    cfg = config(storageInitializer={**GO_TEST_SI, "caBundleConfigMapName": "custom-certs"})
    spec, _ = run({SRC: "gs://foo"}, {"containers": [{"name": "kserve-container"}]}, cfg=cfg)
    assert spec["initContainers"] == [
        init(
            ["gs://foo", "/mnt/models"],
            env=[
                {"name": "CA_BUNDLE_CONFIGMAP_NAME", "value": "global-ca-bundle"},
                {"name": "CA_BUNDLE_VOLUME_MOUNT_POINT", "value": "/etc/ssl/custom-certs"},
            ],
            mounts=[PROVISION_INIT, {"name": "cabundle-cert", "mountPath": "/etc/ssl/custom-certs", "readOnly": True}],
        )
    ]
    assert spec["volumes"] == [PROVISION_VOLUME, {"name": "cabundle-cert", "configMap": {"name": "global-ca-bundle"}}]


def test_ca_bundle_name_kept_in_kserve_namespace():
    # same test, KServe namespace case: the configured ConfigMap name is used as is.
    cfg = config(
        storageInitializer={
            **GO_TEST_SI,
            "caBundleConfigMapName": "custom-certs",
            "caBundleVolumeMountPath": "/etc/custom",
        }
    )
    spec, _ = run({SRC: "gs://foo"}, {"containers": [{"name": "kserve-container"}]}, cfg=cfg, namespace="kserve")
    assert spec["initContainers"][0]["env"][:2] == [
        {"name": "CA_BUNDLE_CONFIGMAP_NAME", "value": "custom-certs"},
        {"name": "CA_BUNDLE_VOLUME_MOUNT_POINT", "value": "/etc/custom"},
    ]


def test_user_defined_hf_env_not_duplicated():
    # TestStorageInitializerWithUserDefinedHFEnvVars (:4772-4937): a CSC that sets an HF variable keeps its value.
    csc = custom_csc(prefix="hf://")
    csc["spec"]["container"]["env"] = [{"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "0"}]
    spec, _ = run(
        {SRC: "hf://org/m"}, {"containers": [{"name": "kserve-container"}]}, cluster=ClusterState.from_manifests([csc])
    )
    assert spec["initContainers"][0]["env"] == [
        {"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "0"},
        {"name": "HF_XET_HIGH_PERFORMANCE", "value": "1"},
        {"name": "HF_XET_NUM_CONCURRENT_RANGE_GETS", "value": "8"},
    ]


def test_istio_uid_annotation_sets_run_as_user():
    # TestStorageInitializerUIDForIstioCNI "uid annotation" (:3475-3600)
    spec, _ = run(
        {SRC: "gs://foo", "serving.kserve.io/storage-initializer-uid": "1337"},
        {"containers": [{"name": "kserve-container"}]},
    )
    assert spec["initContainers"][0]["securityContext"] == {"runAsUser": 1337}


def test_istio_redirect_copies_sidecar_uid():
    # TestStorageInitializerUIDForIstioCNI "REDIRECT with sidecar UID" (:3600-3800)
    annotations = {
        SRC: "gs://foo",
        "sidecar.istio.io/interceptionMode": "REDIRECT",
        "sidecar.istio.io/status": json.dumps({"containers": ["istio-proxy"]}),
    }
    containers = [{"name": "kserve-container"}, {"name": "istio-proxy", "securityContext": {"runAsUser": 501}}]
    spec, _ = run(annotations, {"containers": containers})
    assert spec["initContainers"][0]["securityContext"] == {"runAsUser": 501}
    spec, _ = run(annotations, {"containers": [{"name": "kserve-container"}, {"name": "istio-proxy"}]})
    assert spec["initContainers"][0]["securityContext"] == {"runAsUser": 1337}
    # with istio-init present (no CNI) nothing changes
    spec, _ = run(annotations, {"containers": containers, "initContainers": [{"name": "istio-init"}]})
    assert "securityContext" not in spec["initContainers"][-1]


def test_confidential_annotations_add_env():
    # TestApplyConfidentialConfig (:5552-5624)
    annotations = {
        SRC: "gs://foo",
        "internal.serving.kserve.io/confidential-enabled": "true",
        "internal.serving.kserve.io/confidential-resource-id": "kbs:///default/key/1",
    }
    spec, _ = run(annotations, {"containers": [{"name": "kserve-container"}]})
    assert spec["initContainers"][0]["env"][-2:] == [
        {"name": "CONFIDENTIAL_ENABLED", "value": "true"},
        {"name": "CONFIDENTIAL_RESOURCE_ID", "value": "kbs:///default/key/1"},
    ]


def test_local_model_label_rewrites_to_pvc():
    # TestLocalModelPVC (:4286-4403): the source becomes the node-local PVC, keyed by a hash of the cached URI.
    annotations = {
        SRC: "gs://testbucket/testmodel/sub",
        "internal.serving.kserve.io/localmodel-sourceuri": "gs://testbucket/testmodel",
        "internal.serving.kserve.io/localmodel-pvc-name": "model-h100",
    }
    template = pod(annotations, {"containers": [{"name": "kserve-container"}]})
    template["metadata"]["labels"]["internal.serving.kserve.io/localmodel"] = "iris"
    out, _ = inject_pod(template, namespace="default", config=config(), cluster=ClusterState())
    import hashlib

    key = hashlib.sha256(b"gs://testbucket/testmodel").hexdigest()[:16]
    assert out["spec"]["volumes"] == [
        {"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": "model-h100"}}
    ]
    assert out["spec"]["containers"][0]["volumeMounts"][0]["subPath"] == f"models/{key}/sub"


def test_input_template_is_not_mutated():
    template = pod({SRC: "gs://foo"}, {"containers": [{"name": "kserve-container"}]})
    before = copy.deepcopy(template)
    inject_pod(template, namespace="default", config=config(), cluster=ClusterState())
    assert template == before


# --- storageUris (controller path), TestCommonStorageInitialization (:4404-4568) -------------------------------------
def test_storage_uris_share_common_parent_volume():
    # "multiple non-PVC URIs" (:4404-4480): one init container, one volume named from the common parent.
    uris = [
        {"uri": "s3://bucket/base", "mountPath": "/mnt/models/base"},
        {"uri": "s3://bucket/adapter", "mountPath": "/mnt/models/adapter"},
    ]
    spec, _ = apply_storage_uris(
        {"containers": [{"name": "kserve-container"}]},
        uris,
        annotations={},
        namespace="default",
        config=config(),
        cluster=ClusterState(),
    )
    assert spec == {
        "containers": [
            {
                "name": "kserve-container",
                "volumeMounts": [{"name": "mnt-models", "mountPath": "/mnt/models", "readOnly": True}],
            }
        ],
        "initContainers": [
            init(
                ["s3://bucket/base", "/mnt/models/base", "s3://bucket/adapter", "/mnt/models/adapter"],
                mounts=[{"name": "mnt-models", "mountPath": "/mnt/models"}],
            )
        ],
        "volumes": [{"name": "mnt-models", "emptyDir": {}}],
    }


def test_storage_uris_pvc_without_subpath():
    # "PVC URIs" (:4480-4568): volume named from the mount path, the claim's path part is dropped.
    uris = [{"uri": "pvc://claim/some/path", "mountPath": "/mnt/models/model1"}, {"uri": "gs://b/m"}]
    spec, _ = apply_storage_uris(
        {"containers": [{"name": "kserve-container"}, {"name": "transformer-container"}]},
        uris,
        annotations={"storage.kserve.io/readonly": "false"},
        namespace="default",
        config=config(),
        cluster=ClusterState(),
    )
    pvc_mount = {"name": "mnt-models-model1", "mountPath": "/mnt/models/model1"}
    gs_mount = {"name": "mnt-models", "mountPath": "/mnt/models"}
    assert spec["containers"] == [
        {"name": "kserve-container", "volumeMounts": [pvc_mount, gs_mount]},
        {"name": "transformer-container", "volumeMounts": [pvc_mount, gs_mount]},
    ]
    assert spec["volumes"] == [
        {"name": "mnt-models-model1", "persistentVolumeClaim": {"claimName": "claim"}},
        {"name": "mnt-models", "emptyDir": {}},
    ]
    assert spec["initContainers"][0]["args"] == ["gs://b/m", "/mnt/models"]


def test_storage_uris_custom_container_without_multi_download_fails():
    # TestCommonStorageInitializationWithCustomStorageContainer (:4570-4660)
    cluster = ClusterState.from_manifests([custom_csc(multi=False)])
    with pytest.raises(
        InputError, match='storage container "storage-initializer" does not support multi-model download'
    ):
        apply_storage_uris(
            {"containers": [{"name": "kserve-container"}]},
            [{"uri": "custom://a"}],
            annotations={},
            namespace="default",
            config=config(),
            cluster=cluster,
        )


def test_storage_uris_missing_container_fails():
    # TestCommonStorageInitializationErrorCases (:4661-4771)
    with pytest.raises(InputError, match="Invalid configuration: cannot find container"):
        apply_storage_uris(
            {"containers": [{"name": "other"}]},
            [{"uri": "s3://a"}],
            annotations={},
            namespace="default",
            config=config(),
            cluster=ClusterState(),
        )


def test_volume_name_from_path():
    # GetVolumeNameFromPath (pkg/utils/storage.go); FindCommonParentPath is tested in tests/kube/test_paths.py
    assert volume_name_from_path("/mnt/models/model1") == "mnt-models-model1"
