"""Object helpers shared by the LLMInferenceService builders (``pkg/utils`` ``PropagateMap`` /
``PropagatePrefixedMap``, the RBAC objects and ServiceAccounts of ``workload*.go`` and ``scheduler.go``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..datacopy import clone
from ..kube.quantity import quantities_as_strings
from .llm_types import LLMService
from .names import LLMD_GROUP, POOL_GROUP_V1, POOL_GROUP_V1ALPHA2

Obj = dict[str, Any]
LOCAL_MODEL_PREFIX = "internal.serving.kserve.io/localmodel"
KUEUE = "kueue.x-k8s.io"
ANNOTATION_PREFIXES = ("k8s.v1.cni.cncf.io", KUEUE, "prometheus.io", LOCAL_MODEL_PREFIX)
LABEL_PREFIXES = (KUEUE, LOCAL_MODEL_PREFIX)
RBAC_GROUP = "rbac.authorization.k8s.io"
READ = ["get", "list", "watch"]
SIDECAR_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": READ},
    {"apiGroups": [POOL_GROUP_V1ALPHA2, POOL_GROUP_V1], "resources": ["inferencepools"], "verbs": READ},
]
SCHEDULER_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": READ},
    {
        "apiGroups": [POOL_GROUP_V1, POOL_GROUP_V1ALPHA2],
        "resources": ["inferencepools", "inferenceobjectives", "inferencemodels"],
        "verbs": READ,
    },
    {
        "apiGroups": [POOL_GROUP_V1ALPHA2],
        "resources": ["inferencemodelrewrites", "inferencepoolimports"],
        "verbs": READ,
    },
    {"apiGroups": [LLMD_GROUP], "resources": ["inferenceobjectives", "inferencemodelrewrites"], "verbs": READ},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": READ},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "verbs": [*READ, "create", "update", "patch", "delete"],
    },
]


def propagate(source: Mapping[str, str] | None, dest: dict[str, str], skip: Iterable[str] = ()) -> None:
    """``PropagateMap``: every entry of ``source`` but ``skip`` into ``dest``."""
    skipped = set(skip)
    for key, value in (source or {}).items():
        if key not in skipped:
            dest[key] = value


def propagate_prefixed(source: Mapping[str, str] | None, dest: dict[str, str], prefixes: Iterable[str]) -> None:
    """``PropagatePrefixedMap``: entries whose key starts with one of ``prefixes``."""
    wanted = tuple(prefixes)
    for key, value in (source or {}).items():
        if key.startswith(wanted):
            dest[key] = value


def meta(
    name: str,
    namespace: str | None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Obj:
    out: Obj = {"name": name}
    if namespace is not None:
        out["namespace"] = namespace
    if labels:
        out["labels"] = labels
    if annotations:
        out["annotations"] = annotations
    return out


def finish(obj: Obj) -> Obj:
    """``obj`` with its label and annotation maps unshared (KServe shares one label map between the metadata, the
    selector and the pod template) and empty ones dropped, as Go's ``omitempty`` does; resource quantities as the
    strings a ``resource.Quantity`` serialises to."""
    spec = found if isinstance(found := obj.get("spec"), dict) else {}
    holders = [obj.get("metadata"), spec.get("selector"), (spec.get("template") or {}).get("metadata")]
    lws = spec.get("leaderWorkerTemplate") or {}
    for template in (spec.get("template"), lws.get("leaderTemplate"), lws.get("workerTemplate")):
        if template:  # most objects (Services, RBAC, routes) have none
            quantities_as_strings(template.get("spec"))
    holders += [(lws.get("leaderTemplate") or {}).get("metadata"), (lws.get("workerTemplate") or {}).get("metadata")]
    for holder in holders:
        if not isinstance(holder, dict):
            continue
        for key in ("labels", "annotations", "matchLabels"):
            if key in holder:
                if holder[key]:
                    holder[key] = dict(holder[key])
                else:
                    del holder[key]
    return obj


def service_account(
    svc: LLMService, name: str, labels: Mapping[str, str], cluster: Any, *, copy_from: str = "default"
) -> Obj:
    """A ServiceAccount carrying the image pull secrets and secrets of ``copy_from`` (``injectSecretsFromDefaultServiceAccount``)."""
    sa: Obj = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, svc.namespace, dict(labels))}
    source = cluster.service_account(svc.namespace, copy_from) if cluster is not None else None
    if source:
        for key in ("imagePullSecrets", "secrets"):
            if source.get(key):
                sa[key] = clone(source[key])
    return sa


def role(svc: LLMService, name: str, labels: Mapping[str, str], rules: list[Obj]) -> Obj:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "Role",
        "metadata": meta(name, svc.namespace, dict(labels)),
        "rules": clone(rules),
    }


def role_binding(
    svc: LLMService,
    name: str,
    labels: Mapping[str, str],
    sa_name: str,
    role_kind: str,
    role_name: str,
    *,
    cluster_wide: bool = False,
) -> Obj:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding" if cluster_wide else "RoleBinding",
        "metadata": meta(name, None if cluster_wide else svc.namespace, dict(labels)),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": sa_name, "namespace": svc.namespace}],
    }


def routing_sidecar(pod: Mapping[str, Any] | None) -> Obj | None:
    from .names import ROUTING_SIDECAR

    for init in (pod or {}).get("initContainers") or []:
        if isinstance(init, dict) and init.get("name") == ROUTING_SIDECAR:
            return init
    return None


def container(pod: Mapping[str, Any], name: str) -> Obj | None:
    for item in pod.get("containers") or []:
        if isinstance(item, dict) and item.get("name") == name:
            return item
    return None
