"""The scheduler (endpoint picker, EPP): ServiceAccount, RBAC, Deployment, Service and the InferencePool(s).

Mirrors ``pkg/controller/v1alpha2/llmisvc/scheduler.go`` (``expectedScheduler{ServiceAccount,AuthDelegatorBinding,
Role,RoleBinding,Deployment,Service,InferencePool,InferencePoolV1Alpha2}``) and the tokenizer objects of
``tokenizer.go``. Built only for a managed scheduler: ``router.scheduler.template`` set and no ``pool.ref``.
"""

from __future__ import annotations

from typing import Any

from ..datacopy import clone
from . import names as N
from .combine import inline_config_text, scheduler_config_flag, tokenizer_enabled
from .common import (
    SCHEDULER_RULES,
    Obj,
    finish,
    meta,
    propagate,
    role,
    role_binding,
    service_account,
)
from .llm_types import LLMService, Spec, epp_service_name, get_path
from .options import LLMOptions
from .scheduler_config import default_config_text, transform
from .storage import attach_model_artifacts
from .tracing import inject_scheduler_tracing

SERVICE_PORTS = ("grpc", "grpc-health", "metrics", "zmq")
LEADER_ELECTION = "--ha-enable-leader-election"
POOL_V1 = f"{N.POOL_GROUP_V1}/v1"
POOL_V1ALPHA2 = f"{N.POOL_GROUP_V1ALPHA2}/v1alpha2"


def scheduler_objects(svc: LLMService, spec: Spec, ctx: Any, options: LLMOptions, notes: list[str]) -> list[Obj]:
    labels = N.base_labels(svc.name, N.ROUTER_SCHEDULER)
    sa_name = get_path(spec, "router", "scheduler", "template", "serviceAccountName") or N.child_name(
        svc.name, "-epp-sa"
    )
    out: list[Obj] = []
    account: Obj | str = sa_name
    if sa_name == N.child_name(svc.name, "-epp-sa"):
        account = _scheduler_sa(svc, spec, sa_name, labels, ctx.cluster)
        out.append(account)
    crb = N.child_name(svc.namespace, f"-{svc.name}-epp-auth-rb")
    out.append(role_binding(svc, crb, labels, sa_name, "ClusterRole", "system:auth-delegator", cluster_wide=True))
    out.append(role(svc, N.child_name(svc.name, "-epp-role"), labels, SCHEDULER_RULES))
    out.append(
        role_binding(
            svc, N.child_name(svc.name, "-epp-rb"), labels, sa_name, "Role", N.child_name(svc.name, "-epp-role")
        )
    )
    if tokenizer_enabled(spec):
        out += tokenizer_objects(svc, spec, ctx, account, notes)
    out.append(scheduler_deployment(svc, spec, options, ctx))
    out.append(scheduler_service(svc, spec, labels))
    out += inference_pools(svc, spec, labels, options)
    return [finish(o) for o in out]


def _scheduler_sa(svc: LLMService, spec: Spec, name: str, labels: dict[str, str], cluster: Any) -> Obj:
    """``expectedSchedulerServiceAccount``: secrets from the workload's own ServiceAccount, else from ``default``."""
    main_sa = get_path(spec, "template", "serviceAccountName")
    if not main_sa:
        return service_account(svc, name, labels, cluster)
    sa = service_account(svc, name, labels, None)
    source = cluster.service_account(svc.namespace, main_sa)
    if source:
        annotations = (source.get("metadata") or {}).get("annotations")
        if annotations:
            sa["metadata"]["annotations"] = dict(annotations)
        for key in ("imagePullSecrets", "secrets"):
            if source.get(key):
                sa[key] = clone(source[key])
    return sa


def scheduler_deployment(svc: LLMService, spec: Spec, options: LLMOptions, ctx: Any = None) -> Obj:
    """``expectedSchedulerDeployment``: the template, leader election, the config text, tracing, migrations."""
    scheduler = spec["router"]["scheduler"]
    labels = N.base_labels(svc.name, N.ROUTER_SCHEDULER)
    template_meta: Obj = {"labels": dict(labels), "annotations": {}}
    propagate(scheduler.get("labels"), template_meta["labels"])
    propagate(scheduler.get("annotations"), template_meta["annotations"])
    pod = clone(scheduler["template"])
    dep_spec: Obj = {
        "selector": {"matchLabels": labels},
        "strategy": {"type": "Recreate"},
        "template": {"metadata": template_meta, "spec": pod},
    }
    replicas = scheduler.get("replicas")
    if replicas is not None:
        dep_spec["replicas"] = replicas
    main = next((c for c in pod.get("containers") or [] if c.get("name") == "main"), None)
    if main is not None:
        args = main.setdefault("args", [])
        if (
            isinstance(replicas, int)
            and replicas > 1
            and LEADER_ELECTION not in args
            and LEADER_ELECTION[1:] not in args
        ):
            args.append(LEADER_ELECTION)
        args += _config_args(spec)
        inject_scheduler_tracing(spec.get("tracing"), svc, main)
        if not args:
            main.pop("args")
    name = N.scheduler_deployment(svc.name)
    tokenizer_url = None
    if tokenizer_enabled(spec):
        scheme = "https" if options.enable_tls else "http"
        tokenizer_url = f"{scheme}://{N.tokenizer(svc.name)}.{svc.namespace}.svc.{options.cluster_domain}:8000"
    transform(
        pod, template_meta["annotations"].get("app.kubernetes.io/version", ""), f"{svc.namespace}/{name}", tokenizer_url
    )
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, svc.namespace, labels),
        "spec": dep_spec,
    }


def _config_args(spec: Spec) -> list[str]:
    """``preserveSchedulerConfig`` offline: inline config, else the template's own flag, else KServe's default."""
    if get_path(spec, "router", "scheduler", "config", "inline") is not None:
        return ["--config-text", inline_config_text(spec) or ""]
    if scheduler_config_flag(get_path(spec, "router", "scheduler", "template", "containers")) is not None:
        return []
    lora = bool(get_path(spec, "model", "lora", "adapters"))
    return ["--config-text", default_config_text(spec.get("prefill") is not None, lora)]


def scheduler_service(svc: LLMService, spec: Spec, labels: dict[str, str]) -> Obj:
    """``expectedSchedulerService``: the template's named ports grpc, grpc-health, metrics, zmq, sorted by name."""
    ports: dict[str, Obj] = {}
    for container in get_path(spec, "router", "scheduler", "template", "containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") in SERVICE_PORTS:
                ports[port["name"]] = port
    service_ports = []
    for name in sorted(ports):
        entry: Obj = {"name": name, "port": ports[name].get("containerPort")}
        if ports[name].get("protocol"):
            entry["protocol"] = ports[name]["protocol"]
        entry["targetPort"] = name
        service_ports.append(entry)
    body: Obj = {"selector": labels}
    if service_ports:
        body["ports"] = service_ports
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(epp_service_name(spec, svc.name), svc.namespace, labels),
        "spec": body,
    }


def inference_pools(svc: LLMService, spec: Spec, labels: dict[str, str], options: LLMOptions) -> list[Obj]:
    """The ``inference.networking.k8s.io/v1`` pool, and the ``x-k8s.io/v1alpha2`` one when that CRD is installed."""
    pool_spec = clone(get_path(spec, "router", "scheduler", "pool", "spec") or {})
    name = N.inference_pool(svc.name)
    pools = [
        {
            "apiVersion": POOL_V1,
            "kind": "InferencePool",
            "metadata": meta(name, svc.namespace, labels),
            "spec": pool_spec,
        }
    ]
    if options.emit_v1alpha2_pool:
        pools.append({"apiVersion": POOL_V1ALPHA2, "kind": "InferencePool", "metadata": meta(name, svc.namespace, labels),
                      "spec": pool_spec_v1alpha2(pool_spec)})  # fmt: skip
    return pools


def pool_spec_v1alpha2(spec: Obj) -> Obj:
    """GIE ``InferencePool.ConvertFrom`` (v1 → v1alpha2): flat selector, one target port, an ``extensionRef``."""
    out: Obj = {}
    match = get_path(spec, "selector", "matchLabels")
    if match:
        out["selector"] = dict(match)
    ports = spec.get("targetPorts") or []
    if ports:
        out["targetPortNumber"] = ports[0].get("number")
    picker = spec.get("endpointPickerRef")
    if isinstance(picker, dict):
        ext: Obj = {}
        for key in ("group", "kind", "name", "failureMode"):
            if picker.get(key) is not None:
                ext[key] = picker[key]
        if get_path(picker, "port", "number") is not None:
            ext["portNumber"] = picker["port"]["number"]
        out["extensionRef"] = ext
    return out


def tokenizer_objects(svc: LLMService, spec: Spec, ctx: Any, account: Obj | str, notes: list[str]) -> list[Obj]:
    """``expectedTokenizerDeployment``/``Service``: one replica serving ``render-http`` on 8000, model at /mnt/models/base."""
    labels = N.base_labels(svc.name, N.TOKENIZER)
    pod = clone(get_path(spec, "router", "scheduler", "tokenizer", "template") or {})
    attach_model_artifacts(
        pod, svc, spec, ctx, model_path="/mnt/models/base", service_account=account, notes=notes, lora=False
    )
    name = N.tokenizer(svc.name)
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, svc.namespace, labels),
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": pod}},
    }  # fmt: skip
    service = {
        "apiVersion": "v1", "kind": "Service", "metadata": meta(name, svc.namespace, labels),
        "spec": {"ports": [{"name": "render-http", "port": 8000, "protocol": "TCP", "targetPort": "render-http"}], "selector": labels},
    }  # fmt: skip
    return [deployment, service]
