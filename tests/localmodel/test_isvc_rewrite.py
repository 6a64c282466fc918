"""The webhook's local-model labels on an InferenceService (inference_service_defaults.go setLocalModelLabel)."""

from __future__ import annotations

from typing import Any

from kserve_compile.inputs.config import LocalModelConfig
from kserve_compile.inputs.serving_types import InferenceService
from kserve_compile.localmodel.cache_types import LocalModelCache, LocalModelNamespaceCache
from kserve_compile.localmodel.isvc import apply_local_cache, predictor_storage_uri

from .helpers import cache, isvc

LM = "internal.serving.kserve.io/localmodel"
LM_NS = "internal.serving.kserve.io/localmodel-namespace"
PVC = "internal.serving.kserve.io/localmodel-pvc-name"
SRC = "internal.serving.kserve.io/localmodel-sourceuri"
ON = LocalModelConfig(enabled=True, jobNamespace="jobs")
CACHES = [LocalModelCache.model_validate(cache("model1", "gs://bucket/model", ["gpu1", "gpu2"]))]


def _isvc(data: dict[str, Any]) -> InferenceService:
    return InferenceService.model_validate(data)


def test_tensorflow_predictor_matches() -> None:
    # TestLocalModelAnnotationWithTensorflow "Match model1"
    data = isvc("foo", "gs://bucket/model")
    data["spec"]["predictor"] = {"tensorflow": {"storageUri": "gs://bucket/model"}}
    out = apply_local_cache(_isvc(data), CACHES, [], ON)
    assert out.metadata.labels[LM] == "model1"
    assert out.metadata.annotations[SRC] == "gs://bucket/model"
    assert out.metadata.annotations[PVC] == "model1-gpu1"


def test_disabled_config_or_annotation_strips_user_labels() -> None:
    data = isvc("foo", "gs://bucket/model", labels={LM: "x", LM_NS: "y"}, annotations={PVC: "x-g"})
    off = apply_local_cache(_isvc(data), CACHES, [], LocalModelConfig(enabled=False))
    assert LM not in off.metadata.labels and LM_NS not in off.metadata.labels and PVC not in off.metadata.annotations
    data = isvc("foo", "gs://bucket/model", annotations={"serving.kserve.io/disable-localmodel": "true"})
    assert LM not in apply_local_cache(_isvc(data), CACHES, [], ON).metadata.labels


def test_no_storage_uri_leaves_the_isvc_as_written() -> None:
    data = isvc("foo", "gs://bucket/model", labels={LM: "stale"})
    data["spec"]["predictor"] = {"containers": [{"name": "kserve-container", "image": "x"}]}
    written = _isvc(data)
    assert apply_local_cache(written, CACHES, [], ON) is written


def test_custom_container_storage_uri_env() -> None:
    data = isvc("foo", "")
    data["spec"]["predictor"] = {
        "containers": [{"image": "x", "env": [{"name": "STORAGE_URI", "value": "gs://bucket/model/v2"}]}]
    }
    written = _isvc(data)
    assert predictor_storage_uri(written.spec.predictor) == "gs://bucket/model/v2"
    assert apply_local_cache(written, CACHES, [], ON).metadata.labels[LM] == "model1"
    # with two containers, only one named kserve-container counts (an unnamed first one is named by defaulting)
    data["spec"]["predictor"]["containers"] = [
        {"name": "side", "image": "y"},
        {"name": "kserve-container", "image": "x"},
    ]
    assert predictor_storage_uri(_isvc(data).spec.predictor) is None


def test_namespace_cache_sets_both_labels_and_cluster_cache_clears_the_namespace_one() -> None:
    ns = [
        LocalModelNamespaceCache.model_validate(
            cache("test-ns-cache", "gs://bucket/model", ["gpu"], namespace="default")
        )
    ]
    out = apply_local_cache(_isvc(isvc("test-isvc", "gs://bucket/model")), [], ns, ON)
    assert out.metadata.labels[LM] == "test-ns-cache" and out.metadata.labels[LM_NS] == "default"
    other = apply_local_cache(
        _isvc(isvc("x", "gs://bucket/model", namespace="other", labels={LM_NS: "default"})), CACHES, ns, ON
    )
    assert other.metadata.labels[LM] == "model1" and LM_NS not in other.metadata.labels
