"""TrainedModel admission (``trainedmodel_webhook_test.go`` TestValidateCreate 58-150, TestValidateUpdate 152-270),
``models.json`` (``pkg/modelconfig/configmap_test.go`` TestProcessAddOrUpdate 36-119, TestCreateEmptyModelConfig
248-283) and the controller's conditions (``trainedmodel/controller.go`` updateConditions)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from kserve_compile.errors import InputError
from kserve_compile.graph.graph_types import TrainedModel
from kserve_compile.graph.trained_model import (
    check_trained_models,
    group_by_isvc,
    model_config_json,
    predictor_memory_limit,
    validate_trained_model,
)
from kserve_compile.inputs.serving_types import InferenceService

PREFIXES = "s3://, gs://, https://, http://"


def tm(
    name: str = "bar",
    uri: str = "gs://kfserving/sklearn/iris",
    framework: str = "sklearn",
    memory: Any = "100Mi",
    isvc: str = "Parent",
    namespace: str = "",
) -> TrainedModel:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return TrainedModel.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "TrainedModel",
            "metadata": meta,
            "spec": {"inferenceService": isvc, "model": {"storageUri": uri, "framework": framework, "memory": memory}},
        }
    )


def name_error(name: str) -> str:
    return (
        f"the Trained Model \"{name}\" is invalid: a Trained Model name must consist of alphanumeric characters, '_', "
        f"or '-'. (e.g. \"my-Name\" or \"abc_123\", regex used for validation is '^[a-zA-Z0-9_-]+$')"
    )


@pytest.mark.parametrize(
    ("case", "changes", "message", "path"),
    [
        ("simple", {}, None, None),
        ("alphanumeric model name", {"name": "Abc-123"}, None, None),
        ("name starts with number", {"name": "4abc-3"}, None, None),
        ("name starts with dash", {"name": "-abc-3"}, None, None),
        ("name ends with dash", {"name": "abc-3-"}, None, None),
        ("name includes dot", {"name": "abc.123"}, name_error("abc.123"), "metadata.name"),
        ("name includes spaces", {"name": "abc 123"}, name_error("abc 123"), "metadata.name"),
        (
            "invalid storageURI prefix",
            {"uri": "foo://kfserving/sklearn/iris"},
            f'the Trained Model "bar" storageUri field is invalid. The storage uri must start with one of the prefixes: '
            f'{PREFIXES}. (the storage uri given is "foo://kfserving/sklearn/iris")',
            "spec.model.storageUri",
        ),
        (
            "pvc is not a TrainedModel prefix",
            {"uri": "pvc://claim/model"},
            f'the Trained Model "bar" storageUri field is invalid. The storage uri must start with one of the prefixes: '
            f'{PREFIXES}. (the storage uri given is "pvc://claim/model")',
            "spec.model.storageUri",
        ),
    ],
)
def test_validate_create(case: str, changes: dict, message: str | None, path: str | None) -> None:
    model = tm(**changes)
    if message is None:
        validate_trained_model(model)
        return
    with pytest.raises(InputError) as err:
        validate_trained_model(model)
    assert (err.value.message, err.value.path) == (message, path), case


@pytest.mark.parametrize(
    ("case", "changes", "message"),
    [
        ("no change", {}, None),
        ("inference service", {"isvc": "parent2"}, None),
        ("storageURI", {"uri": "gs://kfserving/sklearn2/iris"}, None),
        ("framework", {"framework": "sklearn2"}, None),
        ("same memory written differently", {"memory": 104857600}, None),
        ("name includes dot", {"name": "abc.123"}, name_error("abc.123")),
        (
            "change immutable memory",
            {"memory": "300Mi"},
            'the Trained Model "bar" memory field is immutable. The memory was "100Mi" but it is updated to "300Mi"',
        ),
    ],
)
def test_validate_update(case: str, changes: dict, message: str | None) -> None:
    old = tm()
    if message is None:
        validate_trained_model(tm(**changes), old)
        return
    with pytest.raises(InputError) as err:
        validate_trained_model(tm(**changes), old)
    assert err.value.message == message, case


def test_bad_memory_quantity() -> None:
    with pytest.raises(InputError) as err:
        validate_trained_model(tm(memory="lots"))
    assert err.value.path == "spec.model.memory"
    assert "quantities must match" in err.value.message


def test_models_json_matches_kserve_bytes() -> None:
    """configmap_test.go:82-83 (two models), with KServe's 'memory' quantity written canonically."""
    models = [tm("model2", "s3//model2", "framework2", "0"), tm("model1", "s3//model1", "framework1", 0)]
    assert model_config_json(models) == (
        '[{"modelName":"model1","modelSpec":{"storageUri":"s3//model1","framework":"framework1","memory":"0"}},'
        '{"modelName":"model2","modelSpec":{"storageUri":"s3//model2","framework":"framework2","memory":"0"}}]'
    )


def test_models_json_empty_and_canonical_memory() -> None:
    """configmap_test.go:248-283: no models → "[]"; quantities as resource.Quantity.String() writes them."""
    assert model_config_json([]) == "[]"
    text = model_config_json([tm("m", memory="1024Mi"), tm("n", memory="0.5Gi"), tm("o", memory="1G")])
    assert [e["modelSpec"]["memory"] for e in json.loads(text)] == ["1Gi", "512Mi", "1G"]


def test_models_json_go_escaping() -> None:
    """json-iterator in standard-library mode: HTML characters escaped, \\b written as \\u0008."""
    text = model_config_json([tm("m", uri="https://h/a?x=1&y=<2>", framework="a\bb")])
    assert '"storageUri":"https://h/a?x=1\\u0026y=\\u003c2\\u003e"' in text
    assert '"framework":"a\\u0008b"' in text
    assert json.loads(text)[0]["modelSpec"]["framework"] == "a\bb"


def test_same_name_last_wins() -> None:
    out = json.loads(model_config_json([tm("m", framework="old"), tm("m", framework="new")]))
    assert [(e["modelName"], e["modelSpec"]["framework"]) for e in out] == [("m", "new")]


def test_schema_requires_model_fields() -> None:
    with pytest.raises(ValidationError):
        TrainedModel.model_validate(
            {
                "apiVersion": "serving.kserve.io/v1alpha1",
                "kind": "TrainedModel",
                "metadata": {"name": "x"},
                "spec": {"inferenceService": "p", "model": {"storageUri": "s3://a", "framework": "f"}},
            }
        )


def test_group_by_isvc_and_missing_parent() -> None:
    a, b = tm("a", isvc="p1", namespace="ns"), tm("b", isvc="p2", namespace="ns")
    groups = group_by_isvc([a, b], [("ns", "p1"), ("ns", "p2"), ("ns", "p3")])
    assert {k: [m.metadata.name for m in v] for k, v in groups.items()} == {
        ("ns", "p1"): ["a"],
        ("ns", "p2"): ["b"],
        ("ns", "p3"): [],
    }
    with pytest.raises(InputError) as err:
        group_by_isvc([tm("c", isvc="gone")], [("default", "p1")])
    assert err.value.path == "spec.inferenceService"
    assert 'TrainedModel "c" names InferenceService "default/gone"' in err.value.message


def test_controller_conditions() -> None:
    """controller.go:40-43 messages: not a multi-model predictor; memory exhausted (models allocated by name)."""
    models = [tm("b", memory="600Mi"), tm("a", memory="500Mi")]
    with pytest.raises(InputError) as err:
        check_trained_models("sk", models, multi_model=False, memory_limit="2Gi")
    assert (
        err.value.message
        == 'Inference Service "sk" predictor is not configured for multi-model serving. Trained Model "a" cannot deploy'
    )
    check_trained_models("sk", models, multi_model=True, memory_limit="1100Mi")
    with pytest.raises(InputError) as err:
        check_trained_models("sk", models, multi_model=True, memory_limit="1Gi")
    assert (
        err.value.message
        == 'Inference Service "sk" memory resources are not available. Trained Model "b" cannot deploy'
    )
    with pytest.raises(InputError, match='Trained Model "a" cannot deploy'):
        check_trained_models("sk", models, multi_model=True, memory_limit=None)
    check_trained_models("sk", [], multi_model=False, memory_limit=None)


def test_predictor_memory_limit() -> None:
    def isvc(predictor: dict) -> InferenceService:
        return InferenceService.model_validate(
            {
                "apiVersion": "serving.kserve.io/v1beta1",
                "kind": "InferenceService",
                "metadata": {"name": "sk"},
                "spec": {"predictor": predictor},
            }
        )

    model = {"model": {"modelFormat": {"name": "sklearn"}, "resources": {"limits": {"memory": "2Gi"}}}}
    assert predictor_memory_limit(isvc(model)) == "2Gi"
    custom = {"containers": [{"name": "kserve-container", "image": "x", "resources": {"limits": {"memory": "1Gi"}}}]}
    assert predictor_memory_limit(isvc(custom)) == "1Gi"
    assert predictor_memory_limit(isvc({"model": {"modelFormat": {"name": "sklearn"}}})) is None
