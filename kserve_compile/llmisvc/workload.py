"""Single-node workloads: the main (and prefill) Deployment, the workload Service, the routing sidecar's RBAC.

Mirrors ``pkg/controller/v1alpha2/llmisvc/workload.go`` (``reconcileWorkloadService``, ``GetWorkloadLabelSelector``)
and ``workload_single_node.go`` (``expectedSingleNodeMainDeployment``, ``expectedPrefillMainDeployment``,
``expectedSingleNodeMainServiceAccount``/``Role``/``RoleBinding``). As in KServe at this snapshot, the Deployment's
labels, selector and pod labels are one map, so ``spec.labels`` and propagated labels land in the selector too.
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
from .llm_types import LLMService, Spec, get_path, pool_name
from .storage import attach_model_artifacts
from .tracing import inject_server_tracing

PROMETHEUS_ANNOTATIONS = ("prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path", "prometheus.io/scheme")


def workload_service(svc: LLMService, spec: Spec, enable_tls: bool) -> Obj:
    """``reconcileWorkloadService``: ClusterIP port 8000 selecting every workload pod."""
    protocol = "https" if enable_tls else "http"
    labels = N.base_labels(svc.name, N.WORKLOAD)
    propagate(spec.get("labels"), labels)
    annotations: dict[str, str] = {}
    propagate(spec.get("annotations"), annotations, [N.ANN_MODEL_BASED_ROUTING])
    return finish({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(N.workload_service(svc.name), svc.namespace, labels, annotations),
        "spec": {
            "ports": [{"appProtocol": protocol, "name": protocol, "port": 8000, "protocol": "TCP", "targetPort": 8000}],
            "selector": N.workload_selector(svc.name),
            "type": "ClusterIP",
        },
    })  # fmt: skip


def _rollout(deployment_spec: dict[str, Any], workload: Any) -> None:
    strategy = get_path(workload, "rolloutStrategy")
    if not isinstance(strategy, dict) or (strategy.get("maxUnavailable") is None and strategy.get("maxSurge") is None):
        return
    rolling = {k: strategy[k] for k in ("maxSurge", "maxUnavailable") if strategy.get(k) is not None}
    deployment_spec["strategy"] = {"rollingUpdate": rolling, "type": "RollingUpdate"}


def _propagate_deployment_metadata(svc: LLMService, dep: Obj) -> None:
    meta_ = dep["metadata"]
    template_meta = dep["spec"]["template"]["metadata"]
    for target in (meta_.setdefault("annotations", {}), template_meta.setdefault("annotations", {})):
        propagate_prefixed(svc.annotations, target, ANNOTATION_PREFIXES)
    propagate_prefixed(svc.labels, meta_["labels"], LABEL_PREFIXES)
    propagate_prefixed(svc.labels, template_meta["labels"], LABEL_PREFIXES)


def main_deployment(svc: LLMService, spec: Spec, ctx: Any, notes: list[str]) -> tuple[Obj, bool]:
    """``expectedSingleNodeMainDeployment``; also says whether the pod has the routing sidecar."""
    role_value = N.ROLE_DECODE if spec.get("prefill") is not None else N.ROLE_BOTH
    labels = {
        **N.base_labels(svc.name, N.WORKLOAD),
        N.KSERVE_COMPONENT: N.KSERVE_COMPONENT_WORKLOAD,
        N.ROLE: role_value,
    }
    pod_annotations = {k: svc.annotations[k] for k in PROMETHEUS_ANNOTATIONS if k in svc.annotations}
    dep = _deployment(svc, N.main_deployment(svc.name), labels, spec.get("replicas"), pod_annotations)
    _rollout(dep["spec"], spec)
    sidecar = False
    template = spec.get("template")
    if isinstance(template, dict):
        pod = clone(template)
        dep["spec"]["template"]["spec"] = pod
        router_container = routing_sidecar(pod)
        sidecar = router_container is not None
        account: Obj | str | None = pod.get("serviceAccountName") or None
        if router_container is not None:
            account = _sidecar_account(svc, spec, ctx.cluster)
            pod["serviceAccountName"] = N.child_name(svc.name, "-kserve")
            if spec.get("router") is not None:
                router_container.setdefault("env", []).append(
                    {"name": "INFERENCE_POOL_NAME", "value": pool_name(spec, svc.name)}
                )
        attach_model_artifacts(pod, svc, spec, ctx, service_account=account, notes=notes)
        attach_kv_cache_tiers(pod, get_path(spec, "kvCacheOffloading", "secondary"))
    _propagate_deployment_metadata(svc, dep)
    propagate(spec.get("labels"), dep["spec"]["template"]["metadata"]["labels"])
    propagate(spec.get("annotations"), dep["spec"]["template"]["metadata"]["annotations"], [N.ANN_MODEL_BASED_ROUTING])
    if spec.get("tracing") is not None:
        inject_server_tracing(spec["tracing"], svc, "-decode", dep["spec"]["template"].get("spec") or {})
    return finish(dep), sidecar


def prefill_deployment(svc: LLMService, spec: Spec, ctx: Any, notes: list[str]) -> Obj:
    """``expectedPrefillMainDeployment``."""
    prefill = spec["prefill"]
    labels = {
        **N.base_labels(svc.name, N.WORKLOAD_PREFILL),
        N.KSERVE_COMPONENT: N.KSERVE_COMPONENT_WORKLOAD,
        N.ROLE: N.ROLE_PREFILL,
    }
    dep = _deployment(svc, N.prefill_deployment(svc.name), labels, prefill.get("replicas"), {})
    _rollout(dep["spec"], prefill)
    template = prefill.get("template")
    if isinstance(template, dict):
        pod = clone(template)
        dep["spec"]["template"]["spec"] = pod
        attach_model_artifacts(pod, svc, spec, ctx, service_account=pod.get("serviceAccountName") or None, notes=notes)
        attach_kv_cache_tiers(pod, get_path(prefill, "kvCacheOffloading", "secondary"))
    _propagate_deployment_metadata(svc, dep)
    propagate(prefill.get("labels"), dep["spec"]["template"]["metadata"]["labels"])
    propagate(
        prefill.get("annotations"), dep["spec"]["template"]["metadata"]["annotations"], [N.ANN_MODEL_BASED_ROUTING]
    )
    if spec.get("tracing") is not None:
        inject_server_tracing(spec["tracing"], svc, "-prefill", dep["spec"]["template"].get("spec") or {})
    return finish(dep)


def _deployment(
    svc: LLMService, name: str, labels: dict[str, str], replicas: Any, pod_annotations: dict[str, str]
) -> Obj:
    spec: Obj = {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels, "annotations": pod_annotations}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**meta(name, svc.namespace), "labels": labels},
        "spec": spec,
    }


def _sidecar_account(svc: LLMService, spec: Spec, cluster: Any) -> Obj | str:
    """``expectedSingleNodeMainServiceAccount``: the template's own ServiceAccount if it names another, else the
    ``<name>-kserve`` one the controller creates."""
    expected = N.child_name(svc.name, "-kserve")
    existing = get_path(spec, "template", "serviceAccountName") or ""
    if existing and existing != expected:
        return str(existing)
    return service_account(svc, expected, N.base_labels(svc.name, N.WORKLOAD), cluster)


def sidecar_rbac(svc: LLMService, spec: Spec, cluster: Any) -> list[Obj]:
    """ServiceAccount (unless the template names another), Role and RoleBinding for the routing sidecar."""
    labels = N.base_labels(svc.name, N.WORKLOAD)
    account = _sidecar_account(svc, spec, cluster)
    out: list[Obj] = []
    sa_name = account if isinstance(account, str) else N.child_name(svc.name, "-kserve")
    if not isinstance(account, str):
        out.append(account)
    out.append(role(svc, N.child_name(svc.name, "-kserve-role"), labels, SIDECAR_RULES))
    out.append(
        role_binding(
            svc, N.child_name(svc.name, "-kserve-rb"), labels, sa_name, "Role", N.child_name(svc.name, "-kserve-role")
        )
    )
    return [finish(o) for o in out]


def attach_kv_cache_tiers(pod: dict[str, Any], secondary: Any) -> None:
    """``attachKVCacheSecondaryTiers``: one volume per file-system tier, mounted at ``/mnt/kv-cache-<i>`` in main."""
    from .kvcache import attach_secondary_tiers

    attach_secondary_tiers(pod, secondary, "main")
