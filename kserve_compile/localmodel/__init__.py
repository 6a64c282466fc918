"""KServe's local model caches: LocalModelCache, LocalModelNamespaceCache, LocalModelNodeGroup, LocalModelNode.

Inputs: the caches, their node groups, ``v1/Node`` objects (the node inventory the controller selects from), and
optionally live ``LocalModelNode`` objects. Rendered: the webhook's labels/annotations on each InferenceService a
cache covers (``rewrite.rewrite_isvc``; the pod webhook then mounts ``pvc://<cache>-<group>/models/<key>`` instead of
adding a download init container), and each cache's own objects (``render.render``): download and serving
PersistentVolumes and PersistentVolumeClaims, ``LocalModelNode`` per selected node, and the node agent's download
Jobs. For an LLMInferenceService, its own webhook's labels (``rewrite.rewrite_llm_metadata``, rules in ``llmisvc``);
the LLM renderer then reads the model from ``matching.cached_model_uri``, and the services count as the caches'
consumers like isvcs. Modules load only when a run needs them: ``rewrite`` for every service, the rest when the
inputs hold local-model kinds (or a service carries local-model keys to remove).
Sources: see each module (``pkg/apis/serving/v1alpha1/local_model_*``, ``pkg/controller/v1alpha1/localmodel*``,
``pkg/webhook/admission/localmodel*``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import constants as C
from ..errors import Problem
from ..inputs.kinds import KindTable
from ..inputs.parse import Document

if TYPE_CHECKING:
    from .collection import LocalModelInputs

FEATURE = "localmodel"
KINDS: KindTable = {
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_CACHE): FEATURE,
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_NAMESPACE_CACHE): FEATURE,
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_NODE_GROUP): FEATURE,
    (C.V1ALPHA1, C.KIND_LOCAL_MODEL_NODE): FEATURE,
    ("v1", C.KIND_NODE): FEATURE,
}


def collect(docs: Sequence[Document], problems: list[Problem]) -> LocalModelInputs:
    """The caches, node groups, Nodes and live LocalModelNodes, typed and admitted; problems appended, located."""
    from .collection import collect_local_models

    return collect_local_models(docs, problems)


__all__ = ["collection", "controller", "render", "rewrite", "FEATURE", "KINDS", "collect"]
