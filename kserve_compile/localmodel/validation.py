"""KServe's admission and reconcile checks for local model caches, on the whole input set.

Mirrors ``pkg/webhook/admission/localmodelcache/localmodelcache_validator.go`` (``validateUniqueStorageURI``: no two
LocalModelCaches share a ``sourceModelUri``) and
``pkg/webhook/admission/localmodelnamespacecache/local_model_namespace_cache_validation.go`` (``validateNodeGroups``:
every listed LocalModelNodeGroup exists). A LocalModelCache naming a missing node group passes admission but its
reconcile stops at the first ``Get`` (``localmodelcache_reconciler.go:81-91``): reported as an error too, since
nothing would be created. The delete-time checks (a cache still used by a service) concern deletion, which a
render never does. CRD-level rules (required fields, ``nodeGroups`` ``minItems: 1``, quantities) are the typed
models'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import InputError
from .cache_types import LocalModelCache, LocalModelNamespaceCache, LocalModelNodeGroup

NODE_GROUP_RESOURCE = "localmodelnodegroups.serving.kserve.io"


def duplicate_source_uris(caches: Sequence[LocalModelCache]) -> list[tuple[LocalModelCache, InputError]]:
    """Each LocalModelCache whose URI an earlier one (by name, the order the webhook would have admitted them
    in a fresh cluster) already has."""
    first: dict[str, LocalModelCache] = {}
    problems = []
    for cache in sorted(caches, key=lambda c: c.name):
        uri = cache.spec.source_model_uri
        if uri in first:
            other = first[uri]
            problems.append(
                (
                    cache,
                    InputError(f"LocalModelCache {other.name} has the same StorageURI {uri}", "spec.sourceModelUri"),
                )
            )
        else:
            first[uri] = cache
    return problems


def missing_node_groups(
    cache: LocalModelCache | LocalModelNamespaceCache, groups: Mapping[str, LocalModelNodeGroup]
) -> list[InputError]:
    out = []
    for i, name in enumerate(cache.spec.node_groups):
        if name in groups:
            continue
        not_found = f'{NODE_GROUP_RESOURCE} "{name}" not found'
        message = f"NodeGroup {name} not found: {not_found}" if cache.namespace else not_found
        out.append(InputError(message, f"spec.nodeGroups[{i}]"))
    return out
