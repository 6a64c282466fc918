"""The pipeline's per-service hooks: KServe's webhook labels for the local model caches, for an InferenceService
(``isvc.py``) and for an LLMInferenceService (``llmisvc.py``).

Kept light: the matching code loads only for a service that has local-model inputs to match or keys to remove.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import constants as C
from ..inputs.config import KServeConfig
from ..inputs.serving_types import InferenceService

if TYPE_CHECKING:
    from .collection import LocalModelInputs

_KEYS = (
    (C.LABEL_LOCAL_MODEL, C.LABEL_LOCAL_MODEL_NAMESPACE),
    (C.ANN_LOCAL_MODEL_SOURCE_URI, C.ANN_LOCAL_MODEL_PVC_NAME),
)


def rewrite_isvc(isvc: InferenceService, inputs: LocalModelInputs | None, config: KServeConfig) -> InferenceService:
    """:func:`isvc.apply_local_cache` with this run's caches (none when the inputs have no local-model kinds)."""
    if inputs is None and not _has_local_model_keys(isvc):
        return isvc  # nothing to add, nothing to remove
    from .isvc import apply_local_cache

    caches, namespace_caches = (inputs.caches, inputs.namespace_caches) if inputs is not None else ([], [])
    return apply_local_cache(isvc, caches, namespace_caches, config.local_model)


def rewrite_llm_metadata(
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    model_uri: str,
    inputs: LocalModelInputs | None,
    config: KServeConfig,
) -> tuple[dict[str, str], dict[str, str]]:
    """:func:`llmisvc.llm_local_model_metadata` with this run's caches: an LLMInferenceService's labels and
    annotations after its defaulting webhook (copies; unchanged when there is nothing to add or remove)."""
    if inputs is None and not _has_keys(labels, annotations):
        return dict(labels), dict(annotations)
    from .llmisvc import llm_local_model_metadata

    caches, namespace_caches = (inputs.caches, inputs.namespace_caches) if inputs is not None else ([], [])
    return llm_local_model_metadata(
        namespace, labels, annotations, model_uri, caches, namespace_caches, config.local_model
    )


def _has_local_model_keys(isvc: InferenceService) -> bool:
    return _has_keys(isvc.metadata.labels, isvc.metadata.annotations)


def _has_keys(labels: Mapping[str, str], annotations: Mapping[str, str]) -> bool:
    label_keys, annotation_keys = _KEYS
    return any(k in labels for k in label_keys) or any(k in annotations for k in annotation_keys)
