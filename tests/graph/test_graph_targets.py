"""``GetPredictorEndpoint`` / ``GetModelName`` (``pkg/controller/v1beta1/inferenceservice/utils/utils.go:89-211``):
the serviceUrl KServe derives for a graph step from the isvc it names, and the Go JSON string writer."""

from __future__ import annotations

from typing import Any

import pytest

from kserve_compile.graph.gojson import go_string
from kserve_compile.graph.targets import IsvcTarget, isvc_target, predict_path
from kserve_compile.inputs.serving_types import InferenceService, ServingRuntime

URL = "http://sk.default.svc.cluster.local"


def isvc(spec: dict[str, Any], name: str = "sk") -> InferenceService:
    return InferenceService.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1beta1",
            "kind": "InferenceService",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def runtime(
    name: str, protocols: list[str] | None, kind: str = "ClusterServingRuntime", namespace: str = ""
) -> ServingRuntime:
    spec: dict[str, Any] = {"containers": [{"name": "kserve-container", "image": "x"}]}
    if protocols is not None:
        spec["protocolVersions"] = protocols
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return ServingRuntime.model_validate(
        {"apiVersion": "serving.kserve.io/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}
    )


SKLEARN = {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://bucket/model"}


def test_predict_paths() -> None:
    """constants.PredictPath."""
    assert predict_path("m", "v1") == "/v1/models/m:predict"
    assert predict_path("m", "v2") == "/v2/models/m/infer"
    assert predict_path("m", "grpc-v2") == ""
    assert IsvcTarget(URL, "v2", "m").service_url == URL + "/v2/models/m/infer"


@pytest.mark.parametrize(
    ("spec", "runtimes", "expected"),
    [
        # model predictor, protocol unset → v1, model name = isvc name
        ({"predictor": {"model": SKLEARN}}, [], URL + "/v1/models/sk:predict"),
        ({"predictor": {"model": {**SKLEARN, "protocolVersion": "v2"}}}, [], URL + "/v2/models/sk/infer"),
        # --model_name in the model's args (both spellings), MLSERVER_MODEL_NAME env first
        ({"predictor": {"model": {**SKLEARN, "args": ["--model_name=iris"]}}}, [], URL + "/v1/models/iris:predict"),
        (
            {"predictor": {"model": {**SKLEARN, "args": ["--model_name", "iris2"]}}},
            [],
            URL + "/v1/models/iris2:predict",
        ),
        (
            {
                "predictor": {
                    "model": {
                        **SKLEARN,
                        "env": [{"name": "MLSERVER_MODEL_NAME", "value": "ml"}],
                        "args": ["--model_name=x"],
                    }
                }
            },
            [],
            URL + "/v1/models/ml:predict",
        ),
        # explicit runtime: its first v1/v2 protocol decides
        (
            {"predictor": {"model": {**SKLEARN, "runtime": "rt"}}},
            [runtime("rt", ["grpc-v2", "v2", "v1"])],
            URL + "/v2/models/sk/infer",
        ),
        ({"predictor": {"model": {**SKLEARN, "runtime": "rt"}}}, [runtime("rt", None)], URL + "/v1/models/sk:predict"),
        # the namespaced runtime wins over the cluster one of the same name
        (
            {"predictor": {"model": {**SKLEARN, "runtime": "rt"}}},
            [runtime("rt", ["v1"]), runtime("rt", ["v2"], "ServingRuntime", "default")],
            URL + "/v2/models/sk/infer",
        ),
        # transformer: its PROTOCOL env and its --model_name
        (
            {
                "predictor": {"model": SKLEARN},
                "transformer": {
                    "containers": [
                        {
                            "name": "t",
                            "image": "t",
                            "args": ["--model_name", "tm"],
                            "env": [{"name": "PROTOCOL", "value": "v2"}],
                        }
                    ]
                },
            },
            [],
            URL + "/v2/models/tm/infer",
        ),
        # custom predictor: PROTOCOL env of the first container
        (
            {
                "predictor": {
                    "containers": [
                        {
                            "name": "kserve-container",
                            "image": "c",
                            "env": [{"name": "PROTOCOL", "value": "v2"}],
                            "args": ["--model_name=cm"],
                        }
                    ]
                }
            },
            [],
            URL + "/v2/models/cm/infer",
        ),
        # multi-model predictor (no storage): no path
        ({"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}, [], URL),
    ],
)
def test_service_url(spec: dict, runtimes: list, expected: str) -> None:
    target = isvc_target(isvc(spec), URL, runtimes)
    assert target.error is None
    assert target.service_url == expected


def test_runtime_without_v1_or_v2_is_an_error() -> None:
    target = isvc_target(
        isvc({"predictor": {"model": {**SKLEARN, "runtime": "rt"}}}), URL, [runtime("rt", ["grpc-v2"])]
    )
    assert target.error == "the runtime does not support a protocol compatible with Inference Graphs"
    missing = isvc_target(isvc({"predictor": {"model": {**SKLEARN, "runtime": "nope"}}}), URL, [])
    assert missing.error == "No ServingRuntimes or ClusterServingRuntimes with the name: nope"


def test_go_string_escapes() -> None:
    assert go_string('a"b\\c\n\t<&>\u2028\x01\b\f') == '"a\\"b\\\\c\\n\\t\\u003c\\u0026\\u003e\\u2028\\u0001\\b\\f"'
    assert go_string("\b\f", short_bf=False) == '"\\u0008\\u000c"'
    assert go_string("é✓") == '"é✓"'
