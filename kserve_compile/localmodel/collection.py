"""Typing the local-model inputs of a run (caches, node groups, Nodes, live LocalModelNodes) and KServe's admission
checks on them (``validation.py``); see ``cache_types.py`` for the KServe API types they mirror."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..errors import CompileError, Problem
from ..inputs.parse import Document
from ..inputs.typed import typed
from .cache_types import AnyCache, LocalModelCache, LocalModelNamespaceCache, LocalModelNode, LocalModelNodeGroup, Node
from .validation import duplicate_source_uris, missing_node_groups

TYPES: dict[str, type[Any]] = {
    C.KIND_LOCAL_MODEL_CACHE: LocalModelCache,
    C.KIND_LOCAL_MODEL_NAMESPACE_CACHE: LocalModelNamespaceCache,
    C.KIND_LOCAL_MODEL_NODE_GROUP: LocalModelNodeGroup,
    C.KIND_LOCAL_MODEL_NODE: LocalModelNode,
    C.KIND_NODE: Node,
}


@dataclass
class LocalModelInputs:
    """The typed local-model inputs of a run, each with its document (to locate problems)."""

    caches: list[LocalModelCache] = field(default_factory=list)
    namespace_caches: list[LocalModelNamespaceCache] = field(default_factory=list)
    node_groups: dict[str, LocalModelNodeGroup] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=list)
    live_nodes: dict[str, LocalModelNode] = field(default_factory=dict)
    docs: dict[int, Document] = field(default_factory=dict)  # id(typed object) → its document

    def all_caches(self) -> list[AnyCache]:
        """Cluster caches by name, then namespace caches by (namespace, name): the render order."""
        return [
            *sorted(self.caches, key=lambda c: c.name),
            *sorted(self.namespace_caches, key=lambda c: (c.namespace, c.name)),
        ]


def collect_local_models(docs: Sequence[Document], problems: list[Problem]) -> LocalModelInputs:
    """Type the local-model documents and run KServe's admission checks; problems are appended, located."""
    out = LocalModelInputs()
    seen: dict[tuple[str, str, str], Document] = {}
    for doc in docs:
        try:
            obj = typed(doc, TYPES[doc.kind])
        except CompileError as exc:
            problems.extend(exc.problems)
            continue
        if not obj.metadata.name:
            problems.append(doc.problem("metadata.name is required", "metadata.name"))
            continue
        if isinstance(obj, LocalModelNamespaceCache) and not obj.metadata.namespace:
            obj = obj.model_copy(update={"metadata": obj.metadata.model_copy(update={"namespace": "default"})})
        key = (doc.kind, obj.metadata.namespace if isinstance(obj, LocalModelNamespaceCache) else "", obj.metadata.name)
        if key in seen:
            problems.append(
                doc.problem(
                    f"{doc.kind} {'/'.join(filter(None, key[1:]))} is defined twice (also in {seen[key].file})",
                    "metadata.name",
                )
            )
            continue
        seen[key] = doc
        out.docs[id(obj)] = doc
        _add(out, obj)
    _validate(out, problems)
    return out


def _add(out: LocalModelInputs, obj: Any) -> None:
    if isinstance(obj, LocalModelCache):
        out.caches.append(obj)
    elif isinstance(obj, LocalModelNamespaceCache):
        out.namespace_caches.append(obj)
    elif isinstance(obj, LocalModelNodeGroup):
        out.node_groups[obj.name] = obj
    elif isinstance(obj, LocalModelNode):
        out.live_nodes[obj.name] = obj
    else:
        out.nodes.append(obj)


def _validate(inputs: LocalModelInputs, problems: list[Problem]) -> None:
    for duplicate, exc in duplicate_source_uris(inputs.caches):
        problems.append(inputs.docs[id(duplicate)].problem(exc.message, exc.path))
    for cache in inputs.all_caches():
        for exc in missing_node_groups(cache, inputs.node_groups):
            problems.append(inputs.docs[id(cache)].problem(exc.message, exc.path))
