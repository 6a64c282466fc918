"""The InferenceService side of the local model caches: KServe's defaulting webhook labels an isvc whose predictor
storage URI a cache covers.

Mirrors ``DefaultInferenceService``'s last steps (``pkg/apis/serving/v1beta1/inference_service_defaults.go:137-150``:
caches are listed only when ``localModel.enabled`` is true and the isvc has no ``serving.kserve.io/disable-localmodel``
annotation) and ``setLocalModelLabel`` (``:518-592``). The storage URI is the predictor implementation's
(``GetImplementations()[0].GetStorageUri()``, ``pkg/apis/serving/v1beta1/predictor.go:168``): a framework or
``model`` spec's ``storageUri``, or a custom container's ``STORAGE_URI`` env, read after the container defaulting
names a lone (or unnamed first) container ``kserve-container``. An isvc without a storage URI is left as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import constants as C
from ..inputs.config import LocalModelConfig
from ..inputs.serving_types import InferenceService, PredictorSpec
from .matching import find_cache, local_model_metadata

if TYPE_CHECKING:  # the typed cache models load only when a run has local-model inputs
    from .cache_types import LocalModelCache, LocalModelNamespaceCache


def predictor_storage_uri(predictor: PredictorSpec) -> str | None:
    """The storage URI the webhook matches against caches, or None when the predictor has none."""
    for field in C.PREDICTOR_IMPLEMENTATIONS:
        impl = getattr(predictor, field)
        if impl is not None:
            return impl.storage_uri
    containers = predictor.k8s.get("containers") or []
    return _custom_storage_uri(containers) if containers else None


def _custom_storage_uri(containers: Sequence[Mapping[str, Any]]) -> str | None:
    for i, container in enumerate(containers):
        name = container.get("name") or ""
        if i == 0 and (len(containers) == 1 or not name):
            name = C.CONTAINER_KSERVE  # CustomPredictor.Default
        if name != C.CONTAINER_KSERVE:
            continue
        for env in container.get("env") or []:
            if env.get("name") == C.ENV_STORAGE_URI:
                return str(env.get("value") or "")
        return None
    return None


def apply_local_cache(
    isvc: InferenceService,
    caches: Sequence[LocalModelCache],
    namespace_caches: Sequence[LocalModelNamespaceCache],
    config: LocalModelConfig,
) -> InferenceService:
    """The isvc as KServe's webhook leaves it: the local-model label(s) and annotations set for the covering cache,
    or removed when none covers it (or caches are off for it). Returns ``isvc`` itself when nothing changes."""
    uri = predictor_storage_uri(isvc.spec.predictor)
    if uri is None:
        return isvc
    meta = isvc.metadata
    match = None
    if config.enabled and C.ANN_DISABLE_LOCAL_MODEL not in meta.annotations:
        match = find_cache(uri, meta.namespace, meta.annotations.get(C.ANN_NODE_GROUP), caches, namespace_caches)
    labels, annotations = local_model_metadata(meta.labels, meta.annotations, match)
    if labels == meta.labels and annotations == meta.annotations:
        return isvc
    return isvc.model_copy(update={"metadata": meta.model_copy(update={"labels": labels, "annotations": annotations})})
