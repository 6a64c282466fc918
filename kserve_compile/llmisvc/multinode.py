"""Multi-node workloads: LeaderWorkerSets (main and prefill), their ServiceAccounts and the sidecar RBAC.

Mirrors ``pkg/controller/v1alpha2/llmisvc/workload_multi_node.go`` (``expectedMainMultiNodeLWS``,
``expectedPrefillMultiNodeLWS``, ``expectedMultiNode*ServiceAccount``, ``expectedMultiNodeMainRole``/``RoleBinding``,
``propagateTopLevelLeaderWorkerSetMetadata``). As in KServe, the LWS's labels and its worker pod labels are one map.
"""

from __future__ import annotations

from typing import Any

from ..datacopy import clone
from . import names as N
from .common import (
    ANNOTATION_PREFIXES,
    LABEL_PREFIXES,
    SIDECAR_RULES,
    Obj,
    finish,
    meta,
    propagate,
    propagate_prefixed,
    role,
    role_binding,
    routing_sidecar,
    service_account,
)  # fmt: skip
from .llm_types import LLMService, Spec, get_path, group_size, is_data_parallel, pool_name
from .storage import attach_model_artifacts
from .tracing import inject_server_tracing
from .workload import attach_kv_cache_tiers

LWS_API = "leaderworkerset.x-k8s.io/v1"
LWS_ANNOTATION_PREFIXES = ("leaderworkerset.sigs.k8s.io", *ANNOTATION_PREFIXES)


def _rolling_update(workload: Any) -> dict[str, Any] | None:
    strategy = get_path(workload, "rolloutStrategy")
    if not isinstance(strategy, dict) or (strategy.get("maxUnavailable") is None and strategy.get("maxSurge") is None):
        return None
    return {
        "maxSurge": strategy["maxSurge"] if strategy.get("maxSurge") is not None else 0,
        "maxUnavailable": strategy["maxUnavailable"] if strategy.get("maxUnavailable") is not None else 1,
    }


def _lws(svc: LLMService, name: str, labels: dict[str, str], workload: Any) -> Obj:
    rollout: Obj = {"type": "RollingUpdate"}
    update = _rolling_update(workload)
    if update is not None:
        rollout["rollingUpdateConfiguration"] = update
    spec: Obj = {
        "leaderWorkerTemplate": {
            "restartPolicy": "RecreateGroupOnPodRestart",
            "workerTemplate": {"metadata": {"labels": labels}},
        },
        "rolloutStrategy": rollout,
        "startupPolicy": "LeaderCreated",
    }
    return {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": {**meta(name, svc.namespace), "labels": labels},
        "spec": spec,
    }


def _sa_name(workload: Any, expected: str) -> tuple[str, bool]:
    """The pods' ServiceAccount: the template's or worker's own when it names another, else ``expected`` (created)."""
    existing = (
        get_path(workload, "template", "serviceAccountName") or get_path(workload, "worker", "serviceAccountName") or ""
    )
    if existing and existing != expected:
        return existing, False
    return expected, True


def _pod(
    svc: LLMService, spec: Spec, source: Any, sa: Obj | str, kv: Any, ctx: Any, notes: list[str], pool: str | None
) -> dict[str, Any]:
    pod = clone(source)
    pod["serviceAccountName"] = sa if isinstance(sa, str) else sa["metadata"]["name"]
    attach_model_artifacts(pod, svc, spec, ctx, service_account=sa, notes=notes)
    attach_kv_cache_tiers(pod, kv)
    sidecar = routing_sidecar(pod)
    if sidecar is not None and pool is not None:
        sidecar.setdefault("env", []).append({"name": "INFERENCE_POOL_NAME", "value": pool})
    return pod


def _propagate_top(svc: LLMService, lws: Obj) -> None:
    template = lws["spec"]["leaderWorkerTemplate"]
    targets = [lws["metadata"], template["workerTemplate"]["metadata"]]
    if "leaderTemplate" in template:
        targets.insert(1, template["leaderTemplate"]["metadata"])
    for target in targets:
        propagate_prefixed(svc.annotations, target.setdefault("annotations", {}), LWS_ANNOTATION_PREFIXES)
    for target in targets:
        propagate_prefixed(svc.labels, target["labels"], LABEL_PREFIXES)


def main_lws(svc: LLMService, spec: Spec, ctx: Any, notes: list[str]) -> tuple[list[Obj], bool]:
    """``expectedMainMultiNodeLWS`` plus its ServiceAccount; also says whether any pod has the routing sidecar."""
    worker_labels = N.base_labels(svc.name, N.WORKLOAD_WORKER)
    if spec.get("template") is None:
        worker_labels.update({N.KSERVE_COMPONENT: N.KSERVE_COMPONENT_WORKLOAD, N.ROLE: N.ROLE_DECODE})
    role_value = N.ROLE_DECODE if spec.get("prefill") is not None else N.ROLE_BOTH
    leader_labels = {
        **N.base_labels(svc.name, N.WORKLOAD_LEADER),
        N.KSERVE_COMPONENT: N.KSERVE_COMPONENT_WORKLOAD,
        N.ROLE: role_value,
    }
    lws = _lws(svc, N.main_lws(svc.name), worker_labels, spec)
    if spec.get("replicas") is not None:
        lws["spec"]["replicas"] = spec["replicas"]
    size = group_size(spec.get("parallelism"))
    if size is not None:
        lws["spec"]["leaderWorkerTemplate"]["size"] = size
    sa_labels = {N.NAME: svc.name, N.PART_OF: N.PART_OF_VALUE}
    sa, create_sa = _sa_name(spec, N.main_lws(svc.name))
    account: Obj | str = service_account(svc, sa, sa_labels, ctx.cluster) if create_sa else sa
    pool = pool_name(spec, svc.name) if spec.get("router") is not None else None
    kv = get_path(spec, "kvCacheOffloading", "secondary")
    template = lws["spec"]["leaderWorkerTemplate"]
    if spec.get("template") is not None:
        template["leaderTemplate"] = {
            "metadata": {"labels": leader_labels},
            "spec": _pod(svc, spec, spec["template"], account, kv, ctx, notes, pool),
        }
    if spec.get("worker") is not None:
        template["workerTemplate"]["spec"] = _pod(svc, spec, spec["worker"], account, kv, ctx, notes, pool)
    _propagate_top(svc, lws)
    _propagate_workload_metadata(lws, spec)
    if spec.get("tracing") is not None:
        for pod in _pods(lws):
            inject_server_tracing(spec["tracing"], svc, "-decode", pod)
    sidecar = any(routing_sidecar(p) is not None for p in _pods(lws))
    out = [finish(lws)]
    labels = sa_labels
    if not isinstance(account, str):
        out.append(finish(account))
    if sidecar:
        role_name = N.child_name(svc.name, "-kserve-mn-role")
        out.append(finish(role(svc, role_name, labels, SIDECAR_RULES)))
        out.append(finish(role_binding(svc, N.child_name(svc.name, "-kserve-mn-rb"), labels, sa, "Role", role_name)))
    return out, sidecar


def prefill_lws(svc: LLMService, spec: Spec, ctx: Any, notes: list[str]) -> list[Obj]:
    """``expectedPrefillMultiNodeLWS`` plus its ServiceAccount."""
    prefill = spec["prefill"]
    worker_labels = N.base_labels(svc.name, N.WORKLOAD_WORKER_PREFILL)
    if prefill.get("template") is None:
        worker_labels.update({N.KSERVE_COMPONENT: N.KSERVE_COMPONENT_WORKLOAD, N.ROLE: N.ROLE_PREFILL})
    leader_labels = {
        **N.base_labels(svc.name, N.WORKLOAD_LEADER_PREFILL),
        N.KSERVE_COMPONENT: N.KSERVE_COMPONENT_WORKLOAD,
        N.ROLE: N.ROLE_PREFILL,
    }
    lws = _lws(svc, N.prefill_lws(svc.name), worker_labels, prefill)
    if prefill.get("replicas") is not None:
        lws["spec"]["replicas"] = prefill["replicas"]
    size = group_size(prefill.get("parallelism"))
    template = lws["spec"]["leaderWorkerTemplate"]
    if size is not None:
        template["size"] = size
    sa, create_sa = _sa_name(prefill, N.prefill_lws(svc.name))
    account: Obj | str = (
        service_account(svc, sa, {N.NAME: svc.name, N.PART_OF: N.PART_OF_VALUE}, ctx.cluster) if create_sa else sa
    )
    kv = get_path(prefill, "kvCacheOffloading", "secondary")
    if prefill.get("template") is not None:
        template["leaderTemplate"] = {
            "metadata": {"labels": leader_labels},
            "spec": _pod(svc, spec, prefill["template"], account, kv, ctx, notes, None),
        }
    if prefill.get("worker") is not None:
        template["workerTemplate"]["spec"] = _pod(svc, spec, prefill["worker"], account, kv, ctx, notes, None)
    if is_data_parallel(prefill.get("parallelism")) and size is not None:
        template["subGroupPolicy"] = {"subGroupSize": size}
    _propagate_top(svc, lws)
    if spec.get("tracing") is not None:
        for pod in _pods(lws):
            inject_server_tracing(spec["tracing"], svc, "-prefill", pod)
    _propagate_workload_metadata(lws, prefill)
    out = [finish(lws)]
    if not isinstance(account, str):
        out.append(finish(account))
    return out


def _pods(lws: Obj) -> list[dict[str, Any]]:
    template = lws["spec"]["leaderWorkerTemplate"]
    pods = [template["leaderTemplate"]["spec"]] if "leaderTemplate" in template else []
    if "spec" in template["workerTemplate"]:
        pods.append(template["workerTemplate"]["spec"])
    return pods


def _propagate_workload_metadata(lws: Obj, workload: Any) -> None:
    template = lws["spec"]["leaderWorkerTemplate"]
    metas = ([template["leaderTemplate"]["metadata"]] if "leaderTemplate" in template else []) + [
        template["workerTemplate"]["metadata"]
    ]
    for target in metas:
        propagate(workload.get("labels"), target["labels"])
        propagate(workload.get("annotations"), target.setdefault("annotations", {}), [N.ANN_MODEL_BASED_ROUTING])
