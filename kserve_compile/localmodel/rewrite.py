"""The pipeline's per-isvc hook: KServe's webhook labels for the local model caches (see ``isvc.py``).

Kept light: the matching code loads only for an isvc that has local-model inputs to match or keys to remove.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import constants as C
from ..config import KServeConfig
from ..models import InferenceService

if TYPE_CHECKING:
    from .collect import LocalModelInputs

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


def _has_local_model_keys(isvc: InferenceService) -> bool:
    labels, annotations = _KEYS
    meta = isvc.metadata
    return any(k in meta.labels for k in labels) or any(k in meta.annotations for k in annotations)
