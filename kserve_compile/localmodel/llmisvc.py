"""The LLMInferenceService side of the local model caches: KServe's LLMInferenceService defaulting webhook labels a
service whose ``spec.model.uri`` a cache covers.

Mirrors ``applyDefaults``, ``SetLocalModelLabel`` and ``DeleteLocalModelMetadata``
(``pkg/webhook/admission/llminferenceservice/defaulter.go:136-265``; a ``v1alpha1`` object is converted to
``v1alpha2`` for it and back). The matching and the four keys are the InferenceService webhook's
(``matching.find_cache`` / ``matching.local_model_metadata``); two rules differ from ``isvc.py``:

* caches off (``localModel.enabled`` false, or the ``serving.kserve.io/disable-localmodel`` annotation): the keys
  are removed whatever the URI (the isvc webhook leaves an isvc without a storage URI alone);
* caches on and ``spec.model.uri`` empty (which the CRD then rejects): the service is left as written.

The URI matched is the service's own, as written: the controller merges its ``baseRefs`` configs later, so a config
that sets another ``model.uri`` does not change which cache (if any) the service is labelled for.

The controller then rewrites the merged model URI to ``pvc://<pvc>/models/<key><subpath>`` for every pod that
attaches the model (``attachModelArtifacts``, ``llmisvc/storage.py``), and counts the service as a consumer of the
cache (``controller.Consumer``, ``ReconcileForIsvcs``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .. import constants as C
from ..inputs.config import LocalModelConfig
from .matching import find_cache, local_model_metadata

if TYPE_CHECKING:
    from .cache_types import LocalModelCache, LocalModelNamespaceCache


def llm_local_model_metadata(
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    model_uri: str,
    caches: Sequence[LocalModelCache],
    namespace_caches: Sequence[LocalModelNamespaceCache],
    config: LocalModelConfig,
) -> tuple[dict[str, str], dict[str, str]]:
    """The service's labels and annotations after the webhook (new mappings; the inputs are not changed)."""
    if not config.enabled or C.ANN_DISABLE_LOCAL_MODEL in annotations:
        return local_model_metadata(labels, annotations, None)
    if not model_uri:
        return dict(labels), dict(annotations)
    node_group = annotations.get(C.ANN_NODE_GROUP)
    match = find_cache(model_uri, namespace, node_group, caches, namespace_caches)
    return local_model_metadata(labels, annotations, match)
