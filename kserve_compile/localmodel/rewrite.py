"""The pipeline's per-isvc hook: KServe's webhook labels for the local model caches (see ``isvc.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import KServeConfig
from ..models import InferenceService
from .isvc import apply_local_cache
from .matching import LOCAL_MODEL_ANNOTATIONS, LOCAL_MODEL_LABELS

if TYPE_CHECKING:
    from .collect import LocalModelInputs


def rewrite_isvc(isvc: InferenceService, inputs: LocalModelInputs | None, config: KServeConfig) -> InferenceService:
    """The pipeline's hook: :func:`apply_local_cache` with this run's caches (none when no local-model input)."""
    if inputs is None and not _has_local_model_keys(isvc):
        return isvc  # fast path: nothing to add, nothing to remove
    caches, namespace_caches = (inputs.caches, inputs.namespace_caches) if inputs is not None else ([], [])
    return apply_local_cache(isvc, caches, namespace_caches, config.local_model)


def _has_local_model_keys(isvc: InferenceService) -> bool:
    meta = isvc.metadata
    return any(k in meta.labels for k in LOCAL_MODEL_LABELS) or any(k in meta.annotations for k in LOCAL_MODEL_ANNOTATIONS)


