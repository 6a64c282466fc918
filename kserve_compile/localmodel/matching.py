"""Which local model cache covers a storage URI, and the webhook's labels and annotations for it.

Mirrors KServe's mutating webhooks: ``setLocalModelLabel`` / ``deleteLocalModelMetadata``
(``pkg/apis/serving/v1beta1/inference_service_defaults.go:137-150,503-592``) for InferenceServices and
``SetLocalModelLabel`` / ``DeleteLocalModelMetadata`` (``pkg/webhook/admission/llminferenceservice/defaulter.go``)
for LLMInferenceServices, with ``MatchStorageURI`` (``pkg/apis/serving/v1alpha1/storage_uri_utils.go``) and
``GetStorageKey`` (``local_model_cache_types.go``). A LocalModelNamespaceCache in the service's namespace is tried
before any LocalModelCache; each list is walked in the API server's list order (by name). When a service names a
node group (``serving.kserve.io/nodegroup``), a cache must list that group to count.

The pod side (the ``pvc://<pvc>/models/<key><subpath>`` rewrite and the read-only PVC mount in place of a download
init container) is the storage-initializer injector's, in ``render/pod_webhook/storage.py``, whose
:func:`cached_model_uri` (re-exported here) is the one formula for that URI; LLMInferenceService's
``attachModelArtifacts`` (``llmisvc/storage.py``) uses it too. The LLMInferenceService webhook's own rules are in
``llmisvc.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import constants as C
from ..render.pod_webhook.storage import cached_model_uri

if TYPE_CHECKING:  # the typed cache models load only when a run has local-model inputs
    from .cache_types import LocalModelCache, LocalModelNamespaceCache

__all__ = ["CacheMatch", "cached_model_uri", "find_cache", "local_model_metadata", "match_storage_uri"]

LOCAL_MODEL_LABELS = (C.LABEL_LOCAL_MODEL, C.LABEL_LOCAL_MODEL_NAMESPACE)
LOCAL_MODEL_ANNOTATIONS = (C.ANN_LOCAL_MODEL_SOURCE_URI, C.ANN_LOCAL_MODEL_PVC_NAME)


@dataclass(frozen=True)
class CacheMatch:
    """The cache a service uses: its name, namespace ("" for a LocalModelCache), source URI and node group."""

    name: str
    namespace: str
    source_uri: str
    node_group: str

    @property
    def pvc_name(self) -> str:
        """The serving PVC in the service's namespace: ``<cache>-<node group>``."""
        return f"{self.name}-{self.node_group}"


def match_storage_uri(cached_uri: str, storage_uri: str) -> bool:
    """``MatchStorageURI``: equal, or below the cached URI at a ``/`` boundary (trailing slashes ignored)."""
    cached, storage = cached_uri.removesuffix("/"), storage_uri.removesuffix("/")
    if not storage.startswith(cached):
        return False
    return len(storage) == len(cached) or storage[len(cached)] == "/"


def find_cache(
    storage_uri: str,
    namespace: str,
    node_group: str | None,
    caches: Sequence[LocalModelCache],
    namespace_caches: Sequence[LocalModelNamespaceCache],
) -> CacheMatch | None:
    """The cache that covers ``storage_uri`` for a service in ``namespace`` (``node_group``: its
    ``serving.kserve.io/nodegroup`` annotation, or None). Namespace caches of that namespace come first."""
    local = sorted((c for c in namespace_caches if c.namespace == namespace), key=lambda c: c.name)
    candidates: list[LocalModelCache | LocalModelNamespaceCache] = [*local, *sorted(caches, key=lambda c: c.name)]
    for cache in candidates:
        if not match_storage_uri(cache.spec.source_model_uri, storage_uri):
            continue
        groups = cache.spec.node_groups
        if node_group is not None and node_group not in groups:
            continue
        return CacheMatch(
            cache.name,
            cache.namespace,
            cache.spec.source_model_uri,
            node_group if node_group is not None else groups[0],
        )
    return None


def local_model_metadata(
    labels: Mapping[str, str], annotations: Mapping[str, str], match: CacheMatch | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Labels and annotations after the webhook: the four local-model keys set for ``match``, or all removed."""
    new_labels = {k: v for k, v in labels.items() if k not in LOCAL_MODEL_LABELS}
    new_annotations = {k: v for k, v in annotations.items() if k not in LOCAL_MODEL_ANNOTATIONS}
    if match is not None:
        new_labels[C.LABEL_LOCAL_MODEL] = match.name
        if match.namespace:
            new_labels[C.LABEL_LOCAL_MODEL_NAMESPACE] = match.namespace
        new_annotations[C.ANN_LOCAL_MODEL_SOURCE_URI] = match.source_uri
        new_annotations[C.ANN_LOCAL_MODEL_PVC_NAME] = match.pvc_name
    return new_labels, new_annotations
