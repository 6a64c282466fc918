"""What KServe's ``localmodel`` controller creates for each cache: PersistentVolumes, PersistentVolumeClaims and
the per-node ``LocalModelNode`` entries.

Mirrors ``pkg/controller/v1alpha1/localmodel/reconcilers/localmodelcache_reconciler.go:59-143`` and
``localmodelnamespacecache_reconciler.go:59-140`` with the helpers in ``reconcilers/utils.go``
(``ReconcileLocalModelNode`` :678, ``GetNodesFromNodeGroup`` :148, ``ReconcileForIsvcs`` :451, ``CreatePV`` /
``CreatePVC``, ``UpdateLocalModelNode``):

* per node group, the download PV (``<cache>-<group>-download``; namespace cache ``<cache>-<group>-<ns>-download``)
  with the group's PV spec, and its PVC in ``localModel.jobNamespace`` (``<cache>-<group>``; namespace cache the
  PV's name) bound to it by ``volumeName``;
* unless ``localModel.disableVolumeManagement``, per namespace of a service labelled for the cache, the serving PV
  ``<cache>-<group>-<ns>`` and PVC ``<cache>-<group>`` (the service's ``serving.kserve.io/nodegroup``, else the
  cache's first group);
* for every Ready Node the group's PV node affinity selects, ``LocalModelNode/<node>`` listing the cache.

An object whose name was already created is not created again (``CreatePV``/``CreatePVC`` skip existing ones), so the
first one wins. Owner references, finalizers and status are the live controller's and are not rendered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..datacopy import clone
from ..errors import InputError
from ..kube.quantity import canonical_quantity
from .cache_types import AnyCache, LocalModelInfo, LocalModelNode, LocalModelNodeGroup, Node
from .node_affinity import matches


@dataclass(frozen=True)
class Consumer:
    """A service as the controller lists it: kind, namespace, name and (webhook-set) labels and annotations."""

    kind: str
    namespace: str
    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


@dataclass
class ControllerOutput:
    """The controller's objects by identity (first one created wins), the LocalModelNodes, and warnings."""

    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    node_models: dict[str, list[LocalModelInfo]] = field(default_factory=dict)
    warnings: list[tuple[AnyCache, str]] = field(default_factory=list)

    def add(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.objects.setdefault((obj["kind"], meta.get("namespace", ""), meta["name"]), obj)


def download_names(cache: AnyCache, group: str) -> tuple[str, str]:
    """(download PV, download PVC) names for one node group of a cache."""
    if cache.namespace:
        name = f"{cache.name}-{group}-{cache.namespace}-download"
        return name, name
    return f"{cache.name}-{group}-download", f"{cache.name}-{group}"


def persistent_volume(name: str, group: LocalModelNodeGroup) -> dict[str, Any]:
    spec = clone(group.spec.persistent_volume_spec)
    _canonical(spec, "capacity")
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def persistent_volume_claim(name: str, namespace: str, volume: str, group: LocalModelNodeGroup) -> dict[str, Any]:
    spec = clone(group.spec.persistent_volume_claim_spec)
    resources = spec.get("resources")
    if isinstance(resources, dict):
        _canonical(resources, "requests")
        _canonical(resources, "limits")
    spec["volumeName"] = volume
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _canonical(parent: dict[str, Any], key: str) -> None:
    """Quantities as the API server writes them back after Go's ``resource.Quantity`` round trip."""
    values = parent.get(key)
    if isinstance(values, dict):
        for k, v in values.items():
            try:
                values[k] = canonical_quantity(v)
            except (ValueError, TypeError):
                pass  # left as written; the schema check reports it


def reconcile_cache(
    cache: AnyCache,
    groups: Mapping[str, LocalModelNodeGroup],
    nodes: Sequence[Node],
    consumers: Sequence[Consumer],
    job_namespace: str,
    disable_volume_management: bool,
    out: ControllerOutput,
) -> None:
    """One cache's reconcile (steps 2-4); ``groups`` holds every group the cache lists (validated beforehand)."""
    names = list(dict.fromkeys(cache.spec.node_groups))
    _local_model_nodes(cache, [groups[n] for n in names], nodes, out)
    for name in names:
        pv_name, pvc_name = download_names(cache, name)
        out.add(persistent_volume(pv_name, groups[name]))
        out.add(persistent_volume_claim(pvc_name, job_namespace, pv_name, groups[name]))
    if not disable_volume_management:
        for namespace, group in _serving_volumes(cache, names, consumers):
            pvc_name = f"{cache.name}-{group}"
            out.add(persistent_volume(f"{pvc_name}-{namespace}", groups[group]))
            out.add(persistent_volume_claim(pvc_name, namespace, f"{pvc_name}-{namespace}", groups[group]))


def uses_cache(cache: AnyCache, consumer: Consumer) -> bool:
    """The controller's field index: the ``localmodel`` label names the cache (a namespace cache also needs the
    ``localmodel-namespace`` label and the service to be in the cache's namespace)."""
    if consumer.labels.get(C.LABEL_LOCAL_MODEL) != cache.name:
        return False
    if not cache.namespace:
        return True
    return consumer.labels.get(C.LABEL_LOCAL_MODEL_NAMESPACE) == cache.namespace == consumer.namespace


def _serving_volumes(cache: AnyCache, groups: Sequence[str], consumers: Sequence[Consumer]) -> list[tuple[str, str]]:
    """(namespace, node group) pairs that get a serving PV and PVC, sorted."""
    pairs: set[tuple[str, str]] = set()
    for consumer in consumers:
        if not uses_cache(cache, consumer):
            continue
        wanted = consumer.annotations.get(C.ANN_NODE_GROUP)
        if wanted is None:
            pairs.add((consumer.namespace, groups[0]))
        elif wanted in groups:
            pairs.add((consumer.namespace, wanted))
    return sorted(pairs)


def _local_model_nodes(
    cache: AnyCache, groups: Sequence[LocalModelNodeGroup], nodes: Sequence[Node], out: ControllerOutput
) -> None:
    """``ReconcileLocalModelNode``: the cache on every Ready node of each group (not-Ready nodes get no entry)."""
    chosen: dict[str, str] = {}
    for group in groups:
        selected = select_nodes(group, nodes)
        if not selected:
            out.warnings.append(
                (
                    cache,
                    f"LocalModelNodeGroup {group.name} selects no Ready Node among the inputs: no LocalModelNode or download Job for it",
                )
            )
        for node in selected:
            if node.name in chosen:
                message = (
                    f"Node {node.name} is in node groups {chosen[node.name]} and {group.name}; KServe records whichever "
                    f"its controller reconciles last (Go map order), rendered: {chosen[node.name]}"
                )
                out.warnings.append((cache, message))
                continue
            chosen[node.name] = group.name
    for node_name, group_name in chosen.items():
        info = LocalModelInfo(
            source_model_uri=cache.spec.source_model_uri,
            model_name=cache.name,
            namespace=cache.namespace,
            node_group=group_name,
            service_account_name=cache.spec.service_account_name,
            storage=cache.spec.storage,
        )
        out.node_models.setdefault(node_name, []).append(info)


def select_nodes(group: LocalModelNodeGroup, nodes: Iterable[Node]) -> list[Node]:
    """``GetNodesFromNodeGroup``'s Ready nodes; ``InputError`` (located in the group) for a bad node selector."""
    spec = group.spec.persistent_volume_spec
    return [n for n in nodes if n.ready and matches(spec, n.name, n.metadata.labels)]


def merged_node_models(
    node_models: Mapping[str, list[LocalModelInfo]], live: Mapping[str, LocalModelNode]
) -> dict[str, list[LocalModelInfo]]:
    """Each touched node's final ``spec.localModels``: a live (input) LocalModelNode's entries kept in their order and
    updated in place (``UpdateLocalModelNode``), new entries appended sorted by (namespace, name)."""
    merged = {}
    for node_name in sorted(node_models):
        existing = list(live[node_name].spec.local_models) if node_name in live else []
        index = {(m.model_name, m.namespace): i for i, m in enumerate(existing)}
        for info in sorted(node_models[node_name], key=lambda m: (m.namespace, m.model_name)):
            at = index.get((info.model_name, info.namespace))
            if at is None:
                existing.append(info)
            else:
                existing[at] = info
        merged[node_name] = existing
    return merged


def local_model_node(name: str, models: Sequence[LocalModelInfo]) -> dict[str, Any]:
    return {
        "apiVersion": C.V1ALPHA1,
        "kind": C.KIND_LOCAL_MODEL_NODE,
        "metadata": {"name": name},
        "spec": {"localModels": [m.to_data() for m in models]},
    }


def check_job_namespace(job_namespace: str) -> None:
    if not job_namespace:
        raise InputError(
            "localModel.jobNamespace is empty: the download PVCs and Jobs need a namespace", "data.localModel"
        )
