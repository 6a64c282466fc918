"""InferenceService admission: name, autoscaler class, blocked env, collocation, standard-predictor name, exactly one
implementation, implementation checks, replicas / concurrency / logger, MetricQuantity, and first-error order.

Each test names what it ports from KServe's ``pkg/apis/serving/v1beta1`` (``inference_service_validation.go`` = IV,
``inference_service_validation_test.go`` = IVT, ``component.go`` = CO).
"""

from __future__ import annotations

import pytest

from kserve_compile.errors import InputError
from kserve_compile.plan.admission import validate_isvc

from .helpers import (
    AUTOSCALER,
    MODE,
    SHIPPED,
    STANDARD,
    URI,
    admit,
    assert_rejects,
    make,
    reject,
    sklearn,
)

NAME_MESSAGE = (
    'the InferenceService "{}" is invalid: a InferenceService name must consist of lower case alphanumeric characters '
    'or \'-\', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used for validation '
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
PREDICTOR_ONE_OF = (
    "exactly one of [Name, SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, PMML, LightGBM, Paddle, "
    "Model, StorageUris, StorageContainerName, WorkerSpec, PodSpec] must be specified in PredictorSpec"
)
PYTHONPATH = [{"name": "PYTHONPATH", "value": "/evil"}]


def blocked(container: str) -> str:
    return f'the InferenceService "foo" is invalid: setting PYTHONPATH in container "{container}" is not allowed for security reasons'


# --- name (IV:468-474, CO:44; IVT TestGoodName, TestRejectBadNameStartWithNumber, TestRejectBadNameIncludeDot) -------


def test_good_name_is_admitted() -> None:
    assert admit({"predictor": {"model": sklearn()}}, STANDARD, name="abc-123") == []


@pytest.mark.parametrize("name", ["1abcde", "abc.de", "Abc", "abc-"])
def test_bad_name_is_rejected(name: str) -> None:
    assert_rejects({"predictor": {"model": sklearn()}}, STANDARD, NAME_MESSAGE.format(name), "metadata.name", name=name)


# --- autoscaler class (IV:476-491; IVT TestAutoscalerClassHPA "Invalid autoscaler class") -----------------------------


@pytest.mark.parametrize("value", ["hpa", "keda", "external", "none"])
def test_supported_autoscaler_classes(value: str) -> None:
    admit({"predictor": {"model": sklearn()}}, {**STANDARD, AUTOSCALER: value})


@pytest.mark.parametrize("value", ["kpa", "", "HPA"])
def test_unsupported_autoscaler_class(value: str) -> None:
    """KPA is not in AutoscalerAllowedClassList; an empty value is present and so checked too."""
    assert_rejects(
        {"predictor": {"model": sklearn()}},
        {**STANDARD, AUTOSCALER: value},
        f"[{value}] is not a supported autoscaler class type",
        f"metadata.annotations[{AUTOSCALER}]",
    )


# --- blocked env vars (IV:302-354, pkg/validation/env_policy.go; IVT TestValidateBlockedEnvVars) ---------------------


@pytest.mark.parametrize(
    ("spec", "container", "path"),
    [
        ({"predictor": {"model": sklearn(env=PYTHONPATH)}}, "", "spec.predictor.model.env[0]"),
        ({"predictor": {"sklearn": {"storageUri": URI, "env": PYTHONPATH}}}, "", "spec.predictor.sklearn.env[0]"),
        (
            {"predictor": {"containers": [{"name": "kserve-container", "image": "x", "env": PYTHONPATH}]}},
            "kserve-container",
            "spec.predictor.containers[0].env[0]",
        ),
        # defaulting names a lone custom container kserve-container before validation sees it
        (
            {"predictor": {"containers": [{"image": "x", "env": [{"name": "A"}, *PYTHONPATH]}]}},
            "kserve-container",
            "spec.predictor.containers[0].env[1]",
        ),
        (
            {"predictor": {"model": sklearn(), "initContainers": [{"name": "init", "image": "x", "env": PYTHONPATH}]}},
            "init",
            "spec.predictor.initContainers[0].env[0]",
        ),
        (
            {
                "predictor": {
                    "model": sklearn(storageUri="pvc://c/m"),
                    "workerSpec": {"containers": [{"name": "worker", "image": "x", "env": PYTHONPATH}]},
                }
            },
            "worker",
            "spec.predictor.workerSpec.containers[0].env[0]",
        ),
        (
            {
                "predictor": {
                    "model": sklearn(storageUri="pvc://c/m"),
                    "workerSpec": {"initContainers": [{"name": "winit", "image": "x", "env": PYTHONPATH}]},
                }
            },
            "winit",
            "spec.predictor.workerSpec.initContainers[0].env[0]",
        ),
        (
            {
                "predictor": {"model": sklearn()},
                "transformer": {"containers": [{"name": "t", "image": "x", "env": PYTHONPATH}]},
            },
            "kserve-container",
            "spec.transformer.containers[0].env[0]",
        ),
        (
            {
                "predictor": {"model": sklearn()},
                "transformer": {
                    "containers": [{"image": "x"}],
                    "initContainers": [{"name": "tinit", "image": "x", "env": PYTHONPATH}],
                },
            },
            "tinit",
            "spec.transformer.initContainers[0].env[0]",
        ),
        (
            {
                "predictor": {"model": sklearn()},
                "explainer": {"containers": [{"name": "e", "image": "x", "env": PYTHONPATH}]},
            },
            "kserve-container",
            "spec.explainer.containers[0].env[0]",
        ),
        (
            {
                "predictor": {"model": sklearn()},
                "explainer": {
                    "art": {"type": "SquareAttack"},
                    "initContainers": [{"name": "einit", "image": "x", "env": PYTHONPATH}],
                },
            },
            "einit",
            "spec.explainer.initContainers[0].env[0]",
        ),
        # ARTExplainerSpec.Default names the ART container before validation
        (
            {"predictor": {"model": sklearn()}, "explainer": {"art": {"type": "SquareAttack", "env": PYTHONPATH}}},
            "kserve-container",
            "spec.explainer.art.env[0]",
        ),
    ],
)
def test_pythonpath_is_blocked_in_every_container(spec: dict, container: str, path: str) -> None:
    assert_rejects(spec, STANDARD, blocked(container), path)


def test_allowed_env_passes() -> None:
    """IVT TestValidateBlockedEnvVars "allowed env vars should pass"."""
    assert admit({"predictor": {"model": sklearn(env=[{"name": "MODEL_NAME", "value": "m"}])}}, STANDARD) == []


def test_predictor_containers_are_checked_before_the_model_container() -> None:
    """IV:303-315 order: predictor containers, init containers, then the framework/model container."""
    spec = {
        "predictor": {
            "model": sklearn(env=PYTHONPATH),
            "containers": [{"name": "side", "image": "x", "env": PYTHONPATH}],
        }
    }
    assert_rejects(spec, STANDARD, blocked("side"), "spec.predictor.containers[0].env[0]")


# --- collocation (IV:670-683; IVT TestValidateCollocationStorageURI) --------------------------------------------------


def test_transformer_container_must_not_set_storage_uri() -> None:
    spec = {
        "predictor": {
            "containers": [
                {"name": "kserve-container", "image": "p", "env": [{"name": "STORAGE_URI", "value": URI}]},
                {
                    "name": "transformer-container",
                    "image": "t",
                    "env": [{"name": "X"}, {"name": "STORAGE_URI", "value": URI}],
                },
            ]
        }
    }
    assert_rejects(
        spec,
        STANDARD,
        "storage uri should not be specified in transformer container",
        "spec.predictor.containers[1].env[1]",
    )


def test_collocation_without_storage_uri_on_transformer_container_passes() -> None:
    spec = {
        "predictor": {
            "containers": [
                {"name": "kserve-container", "image": "p", "env": [{"name": "STORAGE_URI", "value": URI}]},
                {"name": "transformer-container", "image": "t"},
            ]
        }
    }
    assert admit(spec, STANDARD) == []


# --- name in a standard predictor (IV:268-300; IVT TestInvalidNameInSKLearnPredictor) ---------------------------------


def test_name_not_allowed_in_framework_container() -> None:
    spec = {"predictor": {"sklearn": {"storageUri": URI, "name": "invalid-name", "image": "dummy-image"}}}
    assert_rejects(
        spec, STANDARD, "the 'name' field is not allowed in standard predictor", "spec.predictor.sklearn.name"
    )


def test_name_not_allowed_in_model_container() -> None:
    assert_rejects(
        {"predictor": {"model": sklearn(name="kserve-container")}},
        STANDARD,
        "the 'name' field is not allowed in standard predictor",
        "spec.predictor.model.name",
    )


# --- exactly one implementation (CO:415-452; IVT TestRejectModelSpecMissing, TestRejectBadTransformer,
#     TestRejectBadExplainer, TestValidateTwoPredictorImplementationCollocation, TestCustomOK, TestGoodExplainer) -------


def test_predictor_without_implementation() -> None:
    assert_rejects({"predictor": {}}, STANDARD, PREDICTOR_ONE_OF, "spec.predictor")


def test_predictor_without_implementation_even_without_the_written_isvc() -> None:
    """Validating the written isvc directly (no defaulting) gives the same answer."""
    isvc = make({"predictor": {"minReplicas": 1}}, STANDARD)
    with pytest.raises(InputError) as err:
        validate_isvc(isvc, "Standard", SHIPPED)
    assert (err.value.message, err.value.path) == (PREDICTOR_ONE_OF, "spec.predictor")


def test_model_and_kserve_container_are_two_implementations() -> None:
    spec = {
        "predictor": {
            "model": {"modelFormat": {"name": "huggingface"}, "storageUri": URI},
            "containers": [{"name": "kserve-container", "image": "p"}, {"name": "transformer-container", "image": "t"}],
        }
    }
    assert_rejects(spec, STANDARD, PREDICTOR_ONE_OF, "spec.predictor")


def test_two_frameworks_are_two_implementations() -> None:
    """IVT TestRejectMultipleModelSpecs (defaulting converts only one of them to ``model``)."""
    assert_rejects(
        {"predictor": {"tensorflow": {"storageUri": URI}, "xgboost": {"storageUri": URI}}},
        STANDARD,
        PREDICTOR_ONE_OF,
        "spec.predictor",
    )


def test_model_with_sidecar_containers_is_one_implementation() -> None:
    """A container not named kserve-container does not add a custom predictor (predictor.go GetImplementations)."""
    assert admit({"predictor": {"model": sklearn(), "containers": [{"name": "sidecar", "image": "s"}]}}, STANDARD) == []


@pytest.mark.parametrize("containers", [[{"name": "kserve-container", "image": "x"}], [{"image": "x"}]])
def test_custom_predictor_ok(containers: list) -> None:
    assert admit({"predictor": {"containers": containers}}, STANDARD) == []


def test_transformer_without_containers() -> None:
    spec = {"predictor": {"model": sklearn()}, "transformer": {"minReplicas": 1}}
    assert_rejects(
        spec,
        STANDARD,
        "exactly one of [PodSpec, ComponentExtensionSpec] must be specified in TransformerSpec",
        "spec.transformer",
    )


def test_explainer_without_implementation() -> None:
    spec = {"predictor": {"model": sklearn()}, "explainer": {}}
    assert_rejects(
        spec,
        STANDARD,
        "exactly one of [ART, PodSpec, ComponentExtensionSpec] must be specified in ExplainerSpec",
        "spec.explainer",
    )


def test_explainer_with_art_and_containers() -> None:
    spec = {
        "predictor": {"model": sklearn()},
        "explainer": {"art": {"type": "SquareAttack"}, "containers": [{"image": "e"}]},
    }
    assert_rejects(
        spec,
        STANDARD,
        "exactly one of [ART, PodSpec, ComponentExtensionSpec] must be specified in ExplainerSpec",
        "spec.explainer",
    )


def test_good_explainer() -> None:
    assert (
        admit(
            {"predictor": {"model": sklearn()}, "explainer": {"art": {"type": "SquareAttack", "storageUri": URI}}},
            STANDARD,
        )
        == []
    )


# --- implementation Validate() ---------------------------------------------------------------------------------------


def test_custom_predictor_protocol_env() -> None:
    """predictor_custom.go:45-62: only v1/v2; KServe swaps the format arguments, so the message reads this way."""
    spec = {"predictor": {"containers": [{"image": "x", "env": [{"name": "PROTOCOL", "value": "grpc-v2"}]}]}}
    assert_rejects(
        spec, STANDARD, "invalid protocol v1, v2. Must be one of [grpc-v2]", "spec.predictor.containers[0].env[0].value"
    )


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_custom_predictor_protocol_env_ok(protocol: str) -> None:
    assert (
        admit(
            {"predictor": {"containers": [{"image": "x", "env": [{"name": "PROTOCOL", "value": protocol}]}]}}, STANDARD
        )
        == []
    )


def test_art_storage_spec_needs_a_supported_uri() -> None:
    """explainer.go:65-69 → CO:349-372 validateStorageSpec."""
    spec = {
        "predictor": {"model": sklearn()},
        "explainer": {"art": {"type": "SquareAttack", "storageUri": URI, "storage": {"key": "k"}}},
    }
    message = (
        "storageUri, must be one of: [s3://, hdfs://, webhdfs://] or match https://{}.blob.core.windows.net/{}/{} or be an "
        f"absolute or relative local path. StorageUri [{URI}] is not supported"
    )
    assert_rejects(spec, STANDARD, message, "spec.explainer.art.storageUri")


def test_art_storage_spec_type_parameter() -> None:
    spec = {
        "predictor": {"model": sklearn()},
        "explainer": {"art": {"type": "SquareAttack", "storage": {"parameters": {"type": "gs"}}}},
    }
    message = "storage.spec.type, must be one of: [s3://, hdfs://, webhdfs://]. storage.spec.type [gs] is not supported"
    assert_rejects(spec, STANDARD, message, "spec.explainer.art.storage.parameters[type]")


def test_art_storage_spec_with_s3_passes() -> None:
    spec = {
        "predictor": {"model": sklearn()},
        "explainer": {"art": {"type": "SquareAttack", "storageUri": "s3://b/m", "storage": {"key": "k"}}},
    }
    assert admit(spec, STANDARD) == []


MODELMESH = {MODE: "ModelMesh"}  # frameworks stay unconverted, so their own Validate() runs


@pytest.mark.parametrize(
    ("framework", "version", "limits", "message"),
    [
        (
            "tensorflow",
            "2.6.2",
            {"nvidia.com/gpu": "1"},
            "Tensorflow RuntimeVersion is not GPU enabled but GPU resources are requested",
        ),
        ("tensorflow", "2.6.2-gpu", {}, "Tensorflow RuntimeVersion is GPU enabled but GPU resources are not requested"),
        (
            "pytorch",
            "0.4.1",
            {"nvidia.com/mig-1g.5gb": "1"},
            "PyTorch RuntimeVersion is not GPU enabled but GPU resources are requested. ",
        ),
        (
            "pytorch",
            "0.4.1-gpu",
            {"cpu": "1"},
            "PyTorch RuntimeVersion is GPU enabled but GPU resources are not requested. ",
        ),
    ],
)
def test_framework_gpu_runtime_version(framework: str, version: str, limits: dict, message: str) -> None:
    """predictor_tfserving.go:48-67, predictor_torchserve.go:47-66."""
    spec = {"predictor": {framework: {"storageUri": URI, "runtimeVersion": version, "resources": {"limits": limits}}}}
    assert_rejects(spec, MODELMESH, message, f"spec.predictor.{framework}.runtimeVersion")


def test_framework_gpu_runtime_version_matching_passes() -> None:
    spec = {
        "predictor": {
            "tensorflow": {
                "storageUri": URI,
                "runtimeVersion": "2.6.2-gpu",
                "resources": {"limits": {"nvidia.com/gpu": "1"}},
            }
        }
    }
    assert admit(spec, MODELMESH) == []


def test_onnx_storage_uri_extension() -> None:
    """predictor_onnxruntime.go:41-51 (Go path.Ext of the URI)."""
    spec = {"predictor": {"onnx": {"storageUri": "gs://b/model.pt"}}}
    assert_rejects(
        spec, MODELMESH, "expected storageUri file extension: '.onnx' but got '.pt'", "spec.predictor.onnx.storageUri"
    )
    assert admit({"predictor": {"onnx": {"storageUri": "gs://b/model.onnx"}}}, MODELMESH) == []
    assert admit({"predictor": {"onnx": {"storageUri": "gs://b.x/models"}}}, MODELMESH) == []


# --- component extension (CO:341-413; IVT TestBadReplicaValues, TestBadParallelismValues) ----------------------------


@pytest.mark.parametrize("component", ["predictor", "transformer", "explainer"])
@pytest.mark.parametrize(
    ("fields", "message", "field"),
    [
        ({"minReplicas": -1}, "'MinReplicas' cannot be less than 0", "minReplicas"),
        ({"minReplicas": 1, "maxReplicas": -1}, "'MaxReplicas' cannot be less than 0", "maxReplicas"),
        ({"minReplicas": 2, "maxReplicas": 1}, "'MinReplicas' cannot be greater than MaxReplicas", "minReplicas"),
        ({"containerConcurrency": -1}, "parallelism cannot be less than 0", "containerConcurrency"),
    ],
)
def test_bad_replica_and_parallelism_values(component: str, fields: dict, message: str, field: str) -> None:
    spec: dict = {"predictor": {"model": sklearn()}}
    if component == "transformer":
        spec["transformer"] = {"containers": [{"image": "some-image"}], **fields}
    elif component == "explainer":
        spec["explainer"] = {"art": {"type": "SquareAttack", "storageUri": URI}, **fields}
    else:
        spec["predictor"].update(fields)
    assert_rejects(spec, STANDARD, message, f"spec.{component}.{field}")


def test_min_replicas_defaults_to_one_only_for_the_check() -> None:
    """validateReplicas: maxReplicas 0 means unbounded; min 0 with max 1 is fine."""
    assert admit({"predictor": {"model": sklearn(), "minReplicas": 0, "maxReplicas": 1}}, STANDARD) == []
    assert admit({"predictor": {"model": sklearn(), "minReplicas": 5, "maxReplicas": 0}}, STANDARD) == []


@pytest.mark.parametrize("mode", ["all", "request", "response"])
def test_logger_modes(mode: str) -> None:
    assert admit({"predictor": {"model": sklearn(), "logger": {"mode": mode, "url": "http://sink"}}}, STANDARD) == []


def test_logger_mode_has_no_default() -> None:
    """CO:400-404: an unset mode is "" and fails."""
    assert_rejects(
        {"predictor": {"model": sklearn(), "logger": {"url": "http://sink"}}},
        STANDARD,
        "invalid logger type",
        "spec.predictor.logger.mode",
    )


def test_logger_storage_needs_path_parameters_and_key() -> None:
    """CO:405-409."""
    logger = {"mode": "all", "storage": {"path": "/logs", "parameters": {"type": "s3"}}}
    assert_rejects(
        {"predictor": {"model": sklearn(), "logger": logger}},
        STANDARD,
        "invalid logger storage configuration",
        "spec.predictor.logger.storage",
    )
    logger["storage"]["key"] = "creds"
    assert admit({"predictor": {"model": sklearn(), "logger": logger}}, STANDARD) == []


# --- MetricQuantity (metric_quantity.go:39-63) ------------------------------------------------------------------------


def test_metric_quantity_string_must_parse() -> None:
    metrics = [
        {"type": "External", "external": {"metric": {"query": "q"}, "target": {"type": "Value", "value": "lots"}}}
    ]
    message = "failed to parse quantity \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    spec = {"predictor": {"model": sklearn(), "autoScaling": {"metrics": metrics}}}
    assert_rejects(
        spec, {**STANDARD, AUTOSCALER: "keda"}, message, "spec.predictor.autoScaling.metrics[0].external.target.value"
    )


def test_metric_quantity_integer_and_strings_pass() -> None:
    metrics = [
        {"type": "External", "external": {"metric": {"query": "q"}, "target": {"type": "Value", "value": 10}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "2Gi"}}},
    ]
    assert (
        admit(
            {"predictor": {"model": sklearn(), "autoScaling": {"metrics": metrics}}}, {**STANDARD, AUTOSCALER: "keda"}
        )
        == []
    )


def test_metric_quantity_float_is_rejected_when_read() -> None:
    """A float never reaches validation: the typed model takes strings and integers only."""
    target = {"type": "AverageValue", "averageValue": 1.5}
    with pytest.raises(Exception) as err:
        make(
            {
                "predictor": {
                    "model": sklearn(),
                    "autoScaling": {
                        "metrics": [{"type": "Resource", "resource": {"name": "memory", "target": target}}]
                    },
                }
            }
        )
    assert "averageValue" in str(err.value)


# --- order: the first failing rule wins (IV:119-181) -----------------------------------------------------------------


def test_name_is_checked_before_autoscaler_class() -> None:
    err = reject({"predictor": {"model": sklearn()}}, {**STANDARD, AUTOSCALER: "kpa"}, name="Bad")
    assert err.path == "metadata.name"


def test_autoscaler_class_before_blocked_env() -> None:
    err = reject({"predictor": {"model": sklearn(env=PYTHONPATH)}}, {**STANDARD, AUTOSCALER: "kpa"})
    assert err.path == f"metadata.annotations[{AUTOSCALER}]"


def test_predictor_extension_before_transformer_exactly_one() -> None:
    """Components are checked predictor → transformer → explainer, each completely before the next."""
    err = reject({"predictor": {"model": sklearn(), "minReplicas": -1}, "transformer": {}}, STANDARD)
    assert err.path == "spec.predictor.minReplicas"


def test_exactly_one_before_replicas_of_the_same_component() -> None:
    err = reject({"predictor": {"minReplicas": -1}}, STANDARD)
    assert err.message == PREDICTOR_ONE_OF
