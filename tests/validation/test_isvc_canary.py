"""InferenceService admission: ``spec.canary`` (``inference_service_validation.go:183-266``), ported from
``inference_service_validation_test.go`` TestValidateCanarySpecs plus the branches it leaves untested."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import STANDARD, admit, assert_rejects

STABLE = {"minReplicas": 4, "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://test/model-v1"}}


def canary(name: str | None, traffic: int = 10, **predictor: Any) -> dict:
    spec: dict[str, Any] = {
        "model": {"modelFormat": {"name": "sklearn"}, "storageUri": f"gs://test/model-{name}"},
        **predictor,
    }
    if name is not None:
        spec["name"] = name
    return {"trafficPercent": traffic, "predictor": spec}


def isvc(*canaries: dict, stable: dict | None = None) -> dict:
    return {"predictor": stable or STABLE, "canary": list(canaries)}


@pytest.mark.parametrize(
    "spec",
    [
        isvc(canary("v2")),
        isvc(canary("v2", 25), canary("v3", 25)),
        isvc(canary("v2", 50), canary("v3", 50)),
        isvc(canary("v2", 0)),
        isvc(canary("v2", minReplicas=4)),
        {"predictor": {"model": STABLE["model"]}, "canary": [canary("v2", minReplicas=1)]},
        {"predictor": {"model": STABLE["model"]}, "canary": [canary("v2")]},
        # a canary's legacy framework field is not converted (KServe does not default canaries) but is one implementation
        isvc({"trafficPercent": 5, "predictor": {"name": "v2", "sklearn": {"storageUri": "gs://test/v2"}}}),
    ],
)
def test_valid_canaries(spec: dict) -> None:
    assert admit(spec, STANDARD) == []


def test_canary_only_in_standard_mode() -> None:
    assert_rejects(isvc(canary("v2")), None, "canary is only supported in Standard deployment mode", "spec.canary")


def test_canary_requires_stable_model() -> None:
    stable = {"containers": [{"name": "kserve-container", "image": "custom-server:latest"}]}
    assert_rejects(
        isvc(canary("v2"), stable=stable),
        STANDARD,
        "canary requires a stable predictor with a model (multi-model serving is not supported with canary)",
        "spec.predictor",
    )


def test_canary_stable_custom_container_with_storage_uri_env_is_enough() -> None:
    stable = {
        "containers": [{"name": "kserve-container", "image": "x", "env": [{"name": "STORAGE_URI", "value": "gs://m"}]}]
    }
    assert admit(isvc(canary("v2"), stable=stable), STANDARD) == []


@pytest.mark.parametrize(
    ("canaries", "stable_name", "message", "path"),
    [
        ([canary("v2"), canary(None)], None, "canary[1] predictor.name is required", "spec.canary[1].predictor"),
        (
            [canary("v2", 10), canary("v2", 20)],
            None,
            'canary predictor.name "v2" is duplicated',
            "spec.canary[1].predictor.name",
        ),
        (
            [canary("stable")],
            "stable",
            'canary predictor.name "stable" conflicts with stable predictor name',
            "spec.canary[0].predictor.name",
        ),
        (
            [canary("v2", 60), canary("v3", 50)],
            None,
            "sum of canary trafficPercent values (110) must be <= 100",
            "spec.canary",
        ),
        (
            [canary("v2", 101)],
            None,
            'canary "v2" trafficPercent must be between 0 and 100, got 101',
            "spec.canary[0].trafficPercent",
        ),
        (
            [canary("v2", -1)],
            None,
            'canary "v2" trafficPercent must be between 0 and 100, got -1',
            "spec.canary[0].trafficPercent",
        ),
        (
            [canary("v2", maxReplicas=5)],
            None,
            'canary "v2" must not set maxReplicas (canary uses fixed replicas)',
            "spec.canary[0].predictor.maxReplicas",
        ),
        (
            [canary("v2", scaleTarget=5)],
            None,
            'canary "v2" must not set scaleTarget (canary uses fixed replicas)',
            "spec.canary[0].predictor.scaleTarget",
        ),
        (
            [canary("v2", scaleMetric="cpu")],
            None,
            'canary "v2" must not set scaleMetric (canary uses fixed replicas)',
            "spec.canary[0].predictor.scaleMetric",
        ),
        (
            [canary("v2", autoScaling={})],
            None,
            'canary "v2" must not set autoScaling (canary uses fixed replicas)',
            "spec.canary[0].predictor.autoScaling",
        ),
        (
            [canary("v2", workerSpec={})],
            None,
            'canary "v2" must not set workerSpec (multi-node is not yet supported for canary)',
            "spec.canary[0].predictor.workerSpec",
        ),
        (
            [canary("v2", minReplicas=5)],
            None,
            'canary "v2" minReplicas (5) must not exceed stable predictor minReplicas (4)',
            "spec.canary[0].predictor.minReplicas",
        ),
    ],
)
def test_invalid_canaries(canaries: list, stable_name: str | None, message: str, path: str) -> None:
    stable = {**STABLE, "name": stable_name} if stable_name else STABLE
    assert_rejects(isvc(*canaries, stable=stable), STANDARD, message, path)


def test_canary_min_replicas_against_default_stable() -> None:
    spec = {"predictor": {"model": STABLE["model"]}, "canary": [canary("v2", minReplicas=2)]}
    assert_rejects(
        spec,
        STANDARD,
        'canary "v2" minReplicas (2) must not exceed stable predictor minReplicas (1)',
        "spec.canary[0].predictor.minReplicas",
    )


def test_canary_predictor_exactly_one() -> None:
    bad = {"trafficPercent": 10, "predictor": {"name": "v2"}}
    message = (
        'canary "v2" predictor: exactly one of [Name, SKLearn, XGBoost, Tensorflow, PyTorch, Triton, ONNX, HuggingFace, '
        "PMML, LightGBM, Paddle, Model, StorageUris, StorageContainerName, WorkerSpec, PodSpec] must be specified in PredictorSpec"
    )
    assert_rejects(isvc(bad), STANDARD, message, "spec.canary[0].predictor")


def test_canary_predictor_extension_errors_are_wrapped() -> None:
    assert_rejects(
        isvc(canary("v2", containerConcurrency=-1)),
        STANDARD,
        'canary "v2" predictor: parallelism cannot be less than 0',
        "spec.canary[0].predictor.containerConcurrency",
    )


def test_canary_custom_predictor_protocol_is_checked() -> None:
    bad = {
        "trafficPercent": 10,
        "predictor": {
            "name": "v2",
            "containers": [{"name": "kserve-container", "image": "x", "env": [{"name": "PROTOCOL", "value": "v3"}]}],
        },
    }
    assert_rejects(
        isvc(bad),
        STANDARD,
        'canary "v2" predictor: invalid protocol v1, v2. Must be one of [v3]',
        "spec.canary[0].predictor.containers[0].env[0].value",
    )


def test_canary_checks_run_after_the_components() -> None:
    """IV:157-178: the component loop runs before validateCanarySpecs."""
    stable = {**STABLE, "containerConcurrency": -1}
    assert_rejects(
        isvc(canary("v2", 200), stable=stable),
        STANDARD,
        "parallelism cannot be less than 0",
        "spec.predictor.containerConcurrency",
    )
