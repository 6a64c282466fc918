"""InferenceService admission: multi-node (workerSpec), storageUri vs storageUris, storageUris entries, confidential.

Ports ``inference_service_validation.go`` (IV) lines named per test and the matching cases of
``inference_service_validation_test.go`` (IVT).
"""

from __future__ import annotations

import pytest

from .helpers import (
    AUTOSCALER,
    STANDARD,
    URI,
    admit,
    assert_rejects,
    config_with,
    reject,
    sklearn,
)

MULTI = {**STANDARD, AUTOSCALER: "none"}
PVC = "pvc://claim/model"


def hf(**extra: object) -> dict:
    return {"modelFormat": {"name": "huggingface"}, "storageUri": PVC, **extra}


def invalid(message: str) -> str:
    return f'the InferenceService "foo" is invalid: {message}'


# --- multi-node (IV:385-443; IVT TestValidateMultiNodeVariables) -----------------------------------------------------


def test_multinode_valid_with_pvc_and_oci() -> None:
    assert admit({"predictor": {"model": hf(), "workerSpec": {}}}, MULTI) == []
    assert (
        admit(
            {
                "predictor": {
                    "model": hf(storageUri="oci://registry/model:1"),
                    "workerSpec": {"pipelineParallelSize": 2},
                }
            },
            MULTI,
        )
        == []
    )


def test_multinode_multiple_worker_containers() -> None:
    worker = {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}
    assert_rejects(
        {"predictor": {"model": hf(), "workerSpec": worker}},
        MULTI,
        invalid("setting multiple containers in workerSpec is not allowed"),
        "spec.predictor.workerSpec.containers",
    )


@pytest.mark.parametrize("env", ["PIPELINE_PARALLEL_SIZE", "TENSOR_PARALLEL_SIZE"])
def test_multinode_parallel_size_env(env: str) -> None:
    model = hf(env=[{"name": "OTHER", "value": "1"}, {"name": env, "value": "2"}])
    assert_rejects(
        {"predictor": {"model": model, "workerSpec": {}}},
        MULTI,
        invalid(f"setting {env} in environment variables is not allowed"),
        "spec.predictor.model.env[1]",
    )


def test_multinode_pipeline_env_is_looked_up_first() -> None:
    """IV:392-397: PIPELINE_PARALLEL_SIZE is reported even when TENSOR_PARALLEL_SIZE comes first in env."""
    model = hf(env=[{"name": "TENSOR_PARALLEL_SIZE", "value": "2"}, {"name": "PIPELINE_PARALLEL_SIZE", "value": "2"}])
    err = reject({"predictor": {"model": model, "workerSpec": {}}}, MULTI)
    assert (err.message, err.path) == (
        invalid("setting PIPELINE_PARALLEL_SIZE in environment variables is not allowed"),
        "spec.predictor.model.env[1]",
    )


UNKNOWN_GPU = invalid(
    "Unknown GPU resource type. Set 'serving.kserve.io/gpu-resource-types' annotation to use custom gpu resource type"
)


def test_multinode_unknown_gpu_in_model() -> None:
    model = hf(resources={"limits": {"unknownGPU.com/gpu": "1"}, "requests": {"cpu": "1"}})
    assert_rejects(
        {"predictor": {"model": model, "workerSpec": {}}},
        MULTI,
        UNKNOWN_GPU,
        "spec.predictor.model.resources.limits[unknownGPU.com/gpu]",
    )


def test_multinode_unknown_gpu_in_worker() -> None:
    worker = {
        "containers": [
            {"name": "worker-container", "image": "x", "resources": {"requests": {"unknownGPU.com/gpu": "1"}}}
        ]
    }
    assert_rejects(
        {"predictor": {"model": hf(), "workerSpec": worker}},
        MULTI,
        UNKNOWN_GPU,
        "spec.predictor.workerSpec.containers[0].resources.requests[unknownGPU.com/gpu]",
    )


def test_multinode_custom_gpu_types_from_annotation_and_configmap() -> None:
    """IVT "When customGPUResourceTypes set to annotations ..." and the ConfigMap's multiNode list (configmap.go:272)."""
    model = hf(resources={"limits": {"unknownGPU.com/gpu": "1", "nvidia.com/gpu": "1"}})
    spec = {"predictor": {"model": model, "workerSpec": {}}}
    assert admit(spec, {**MULTI, "serving.kserve.io/gpu-resource-types": '["unknownGPU.com/gpu"]'}) == []
    assert admit(spec, MULTI, config=config_with(multiNode={"customGPUResourceTypeList": ["unknownGPU.com/gpu"]})) == []


def test_multinode_bad_gpu_types_annotation() -> None:
    annotations = {**MULTI, "serving.kserve.io/gpu-resource-types": "not-json"}
    message = (
        "invalid GPU format(not-json) for serving.kserve.io/gpu-resource-types annotation: must be a valid JSON array"
    )
    assert_rejects(
        {"predictor": {"model": hf(), "workerSpec": {}}},
        annotations,
        message,
        "metadata.annotations[serving.kserve.io/gpu-resource-types]",
    )


def test_multinode_requires_storage_uri() -> None:
    model = {"modelFormat": {"name": "huggingface"}}
    assert_rejects(
        {"predictor": {"model": model, "workerSpec": {}}},
        MULTI,
        invalid("StorageURI must be set for multinode enabled"),
        "spec.predictor.model",
    )


def test_multinode_storage_protocol() -> None:
    assert_rejects(
        {"predictor": {"model": hf(storageUri="s3://test"), "workerSpec": {}}},
        MULTI,
        invalid("Multinode only supports 'pvc' and 'oci' Storage Protocol(s3)"),
        "spec.predictor.model.storageUri",
    )


@pytest.mark.parametrize(("annotations", "shown"), [({**STANDARD, AUTOSCALER: "hpa"}, "hpa"), (STANDARD, "")])
def test_multinode_requires_none_autoscaler(annotations: dict, shown: str) -> None:
    assert_rejects(
        {"predictor": {"model": hf(), "workerSpec": {}}},
        annotations,
        invalid(f"Multinode only supports 'none' autoscaler({shown})"),
        f"metadata.annotations[{AUTOSCALER}]",
    )


@pytest.mark.parametrize(
    ("field", "label"), [("pipelineParallelSize", "PipelineParallelSize"), ("tensorParallelSize", "TensorParallelSize")]
)
def test_multinode_sizes_at_least_one(field: str, label: str) -> None:
    assert_rejects(
        {"predictor": {"model": hf(), "workerSpec": {field: 0}}},
        MULTI,
        invalid(f"WorkerSpec.{label} cannot be less than 1(0)"),
        f"spec.predictor.workerSpec.{field}",
    )


# --- storageUri and storageUris (IV:806-852) --------------------------------------------------------------------------


BOTH = "Setting both StorageURI and StorageURIs is not supported."


def test_predictor_storage_uri_and_storage_uris() -> None:
    spec = {"predictor": {"model": sklearn(), "storageUris": [{"uri": "s3://b/m", "mountPath": "/mnt/models"}]}}
    assert_rejects(spec, STANDARD, BOTH, "spec.predictor.storageUris")


def test_empty_storage_uris_list_still_counts_as_set() -> None:
    """Go compares the slice with nil: ``storageUris: []`` is set."""
    assert_rejects({"predictor": {"model": sklearn(), "storageUris": []}}, STANDARD, BOTH, "spec.predictor.storageUris")


def test_custom_predictor_storage_uri_env_and_storage_uris() -> None:
    container = {"name": "kserve-container", "image": "x", "env": [{"name": "STORAGE_URI", "value": URI}]}
    spec = {"predictor": {"containers": [container], "storageUris": [{"uri": "s3://b/m"}]}}
    assert_rejects(spec, STANDARD, BOTH, "spec.predictor.storageUris")


def test_transformer_checked_before_predictor() -> None:
    transformer = {
        "containers": [{"image": "t", "env": [{"name": "STORAGE_URI", "value": URI}]}],
        "storageUris": [{"uri": "s3://b/t"}],
    }
    spec = {"predictor": {"model": sklearn(), "storageUris": [{"uri": "s3://b/m"}]}, "transformer": transformer}
    assert_rejects(spec, STANDARD, BOTH, "spec.transformer.storageUris")


def test_storage_uris_alone_pass() -> None:
    spec = {
        "predictor": {
            "model": {"modelFormat": {"name": "sklearn"}},
            "storageUris": [
                {"uri": "s3://b/m1", "mountPath": "/mnt/models/m1"},
                {"uri": "gs://b/m2", "mountPath": "/mnt/models/m2"},
            ],
        }
    }
    assert admit(spec, STANDARD) == []


# --- storageUris entries (IV:727-804; IVT TestValidateStorageUriSpec, TestValidateStorageUri) ------------------------


@pytest.mark.parametrize(
    ("entries", "message", "path"),
    [
        ([{"uri": "", "mountPath": "/mnt/models"}], "storage URI cannot be empty", "[0].uri"),
        (
            [{"uri": "gs://b/m1", "mountPath": "/mnt/models"}, {"uri": "", "mountPath": "/mnt/models/m2"}],
            "storage URI cannot be empty",
            "[1].uri",
        ),
        ([{"uri": "s3://bucket/model", "mountPath": "/"}], "storage path cannot be empty", "[0].mountPath"),
        (
            [{"uri": "gs://bucket/model", "mountPath": "mnt/models"}],
            "storage path must be absolute: mnt/models",
            "[0].mountPath",
        ),
        (
            [{"uri": "gs://b/m", "mountPath": "/mnt/../etc"}],
            "storage path cannot contain '..' for security reasons: /mnt/../etc",
            "[0].mountPath",
        ),
        (
            [
                {"uri": "gs://bucket/model1", "mountPath": "/mnt/models"},
                {"uri": "s3://bucket/model2", "mountPath": "/opt/models"},
            ],
            "storage paths must have a common parent directory. Current paths: [/mnt/models /opt/models] have no common parent beyond root",
            "",
        ),
        (
            [
                {"uri": "gs://b/1", "mountPath": "/mnt/a"},
                {"uri": "gs://b/2", "mountPath": "/mnt/b"},
                {"uri": "pvc://c/x", "mountPath": "/data"},
                {"uri": "pvc://c/y", "mountPath": "/data"},
            ],
            "PVC storage paths must be unique",
            "",
        ),
    ],
)
def test_storage_uris_entries(entries: list, message: str, path: str) -> None:
    spec = {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}, "storageUris": entries}}
    assert_rejects(spec, STANDARD, message, f"spec.predictor.storageUris{path}")


def test_duplicate_pvc_paths_pass_with_at_most_one_other_path() -> None:
    """IV:781-784 return before the PVC uniqueness check when at most one non-PVC path exists."""
    entries = [{"uri": "pvc://c/x", "mountPath": "/data"}, {"uri": "pvc://c/y", "mountPath": "/data"}]
    assert admit({"predictor": {"model": {"modelFormat": {"name": "sklearn"}}, "storageUris": entries}}, STANDARD) == []


def test_storage_uris_default_mount_path() -> None:
    """The CRD defaults mountPath to /mnt/models; two defaulted entries share it."""
    entries = [{"uri": "gs://b/1"}, {"uri": "gs://b/2"}]
    assert admit({"predictor": {"model": {"modelFormat": {"name": "sklearn"}}, "storageUris": entries}}, STANDARD) == []


def test_transformer_storage_uris_entries_checked() -> None:
    spec = {
        "predictor": {"model": sklearn()},
        "transformer": {"containers": [{"image": "t"}], "storageUris": [{"uri": ""}]},
    }
    assert_rejects(spec, STANDARD, "storage URI cannot be empty", "spec.transformer.storageUris[0].uri")


# --- confidential (IV:854-887, pkg/validation/confidential.go; IVT TestValidateConfidential) --------------------------


def test_confidential_absent_or_disabled() -> None:
    assert admit({"predictor": {"model": sklearn(confidential={"enabled": False})}}, STANDARD) == []


def test_confidential_with_storage_uri_and_resource_id() -> None:
    model = sklearn(
        storageUri="s3://bucket/model", confidential={"enabled": True, "resourceId": "kbs:///default/key/model-key"}
    )
    assert admit({"predictor": {"model": model}}, STANDARD) == []


def test_confidential_requires_storage_uri() -> None:
    model = {"modelFormat": {"name": "sklearn"}, "confidential": {"enabled": True}}
    assert_rejects(
        {"predictor": {"model": model}},
        STANDARD,
        "confidential model serving requires storageUri to be set",
        "spec.predictor.model.confidential",
    )


def test_confidential_resource_id_format() -> None:
    model = sklearn(confidential={"enabled": True, "resourceId": "invalid-resource-id"})
    message = 'spec.predictor.confidential.resourceId: Invalid value: "invalid-resource-id": must be in the format kbs:///<repo>/<type>/<tag>'
    assert_rejects({"predictor": {"model": model}}, STANDARD, message, "spec.predictor.model.confidential.resourceId")


@pytest.mark.parametrize(
    ("uri", "warning"),
    [
        (
            "oci://registry/model:latest",
            "confidential has no effect with OCI URIs; OCI image decryption is handled by the container runtime via runtimeClassName",
        ),
        (
            "pvc://my-pvc/model-dir",
            "confidential has no effect with PVC URIs; the storage-initializer is not injected for PVC volumes",
        ),
    ],
)
def test_confidential_warnings(uri: str, warning: str) -> None:
    assert admit({"predictor": {"model": sklearn(storageUri=uri, confidential={"enabled": True})}}, STANDARD) == [
        warning
    ]


def test_confidential_on_legacy_framework_names_the_written_field() -> None:
    spec = {"predictor": {"sklearn": {"confidential": {"enabled": True}}}}
    assert_rejects(
        spec,
        STANDARD,
        "confidential model serving requires storageUri to be set",
        "spec.predictor.sklearn.confidential",
    )
