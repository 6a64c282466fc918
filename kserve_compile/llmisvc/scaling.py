"""Autoscaling: the WVA HorizontalPodAutoscaler or KEDA ScaledObject, or a direct KEDA ScaledObject.

Mirrors ``pkg/controller/v1alpha2/llmisvc/scaling.go`` (``expectedHPA``, ``expectedScaledObject``,
``expectedDirectScaledObject``, ``validateAutoscalingConfig``, ``wvaLabels``/``wvaAnnotations``, the scale target
and object names) for the main workload and, with its own ``scaling``, for prefill.
"""

from __future__ import annotations

from typing import Any

from ..datacopy import clone
from ..errors import InputError
from . import names as N
from .common import Obj, finish, meta
from .llm_types import LLMService, Spec, get_path
from .options import WVA_KEY, LLMOptions

ACCELERATOR = "inference.optimization/acceleratorName"
KEDA_API = "keda.sh/v1alpha1"
KEDA_FIELDS = (("pollingInterval", "pollingInterval"), ("cooldownPeriod", "cooldownPeriod"), ("idleReplicaCount", "idleReplicaCount"),
               ("fallback", "fallback"), ("advanced", "advanced"), ("initialCooldownPeriod", "initialCooldownPeriod"))  # fmt: skip


def scaling_objects(svc: LLMService, spec: Spec, options: LLMOptions) -> list[Obj]:
    out = _for_workload(svc, spec, spec, options, prefill=False)
    if isinstance(spec.get("prefill"), dict):
        out += _for_workload(svc, spec, spec["prefill"], options, prefill=True)
    return [finish(o) for o in out]


def _target(svc: LLMService, workload: Spec, prefill: bool) -> Obj:
    if workload.get("worker") is not None:
        return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                "name": N.prefill_lws(svc.name) if prefill else N.main_lws(svc.name)}  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": N.prefill_deployment(svc.name) if prefill else N.main_deployment(svc.name),
    }


def _for_workload(svc: LLMService, spec: Spec, workload: Spec, options: LLMOptions, *, prefill: bool) -> list[Obj]:
    scaling = workload.get("scaling")
    if not isinstance(scaling, dict):
        return []
    suffix = "-kserve-prefill" if prefill else "-kserve"
    target = _target(svc, workload, prefill)
    labels = workload.get("labels") or {}
    if scaling.get("keda") is not None:
        return [_scaled_object(svc, scaling, scaling["keda"], target, N.child_name(svc.name, suffix + "-keda"), _labels(svc), None,
                               list(scaling["keda"].get("triggers") or []))]  # fmt: skip
    wva = scaling.get("wva")
    if not isinstance(wva, dict):
        return []
    out: list[Obj] = []
    if wva.get("keda") is not None:
        name = N.child_name(svc.name, suffix + "-keda")
        query = f'wva_desired_replicas{{variant_name="{name}",exported_namespace="{svc.namespace}"}}'
        trigger = _prometheus_trigger(options, query)
        out.append(
            _scaled_object(
                svc,
                scaling,
                wva["keda"],
                target,
                name,
                _wva_labels(svc, labels),
                _wva_annotations(spec, scaling),
                [trigger],
            )
        )
    if wva.get("hpa") is not None:
        out.append(_hpa(svc, spec, scaling, target, N.child_name(svc.name, suffix + "-hpa"), labels))
    return out


def _labels(svc: LLMService) -> dict[str, str]:
    return N.base_labels(svc.name, N.WORKLOAD)


def _wva_labels(svc: LLMService, workload_labels: dict[str, str]) -> dict[str, str]:
    return {**_labels(svc), ACCELERATOR: workload_labels.get(ACCELERATOR) or "unknown"}


def _wva_annotations(spec: Spec, scaling: Spec) -> dict[str, str]:
    model_id = get_path(spec, "model", "name") or get_path(spec, "model", "uri") or ""
    out = {"llm-d.ai/managed": "true", "llm-d.ai/model-id": str(model_id)}
    if get_path(scaling, "wva", "variantCost"):
        out["llm-d.ai/variant-cost"] = str(scaling["wva"]["variantCost"])
    return out


def _hpa(svc: LLMService, spec: Spec, scaling: Spec, target: Obj, name: str, workload_labels: dict[str, str]) -> Obj:
    """``expectedHPA``: one External metric, ``wva_desired_replicas`` for this variant, target value 1."""
    metric = {"external": {"metric": {"name": "wva_desired_replicas", "selector": {"matchLabels": {"variant_name": name}}},
                           "target": {"type": "Value", "value": "1"}}, "type": "External"}  # fmt: skip
    body: Obj = {"maxReplicas": scaling.get("maxReplicas", 0), "metrics": [metric], "minReplicas": scaling.get("minReplicas", 1),
                 "scaleTargetRef": target}  # fmt: skip
    behavior = get_path(scaling, "wva", "hpa", "behavior")
    if behavior is not None:
        body["behavior"] = clone(behavior)
    metadata = meta(name, svc.namespace, _wva_labels(svc, workload_labels), _wva_annotations(spec, scaling))
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": metadata, "spec": body}


def _scaled_object(svc: LLMService, scaling: Spec, keda: Spec, target: Obj, name: str, labels: dict[str, str],
                   annotations: dict[str, str] | None, triggers: list[Any]) -> Obj:  # fmt: skip
    body: Obj = {"maxReplicaCount": scaling.get("maxReplicas", 0), "minReplicaCount": scaling.get("minReplicas", 1),
                 "scaleTargetRef": dict(target), "triggers": clone(triggers)}  # fmt: skip
    for src, dst in KEDA_FIELDS:
        if keda.get(src) is not None:
            body[dst] = clone(keda[src])
    return {
        "apiVersion": KEDA_API,
        "kind": "ScaledObject",
        "metadata": meta(name, svc.namespace, labels, annotations),
        "spec": body,
    }


def _prometheus_trigger(options: LLMOptions, query: str) -> Obj:
    """``prometheusTrigger`` after ``validateAutoscalingConfig``."""
    prom = options.wva_prometheus
    if not prom or not prom.get("url"):
        raise InputError(
            f"{WVA_KEY}.prometheus.url is required in inferenceservice-config when using KEDA", "spec.scaling.wva.keda"
        )
    if bool(prom.get("triggerAuthName")) != bool(prom.get("authModes")):
        raise InputError(f"{WVA_KEY}.prometheus.authModes and {WVA_KEY}.prometheus.triggerAuthName must both be set or both be empty",
                         "spec.scaling.wva.keda")  # fmt: skip
    metadata = {"query": query, "serverAddress": str(prom["url"]), "threshold": "1",
                "unsafeSsl": "true" if prom.get("tlsInsecureSkipVerify") else "false"}  # fmt: skip
    if prom.get("authModes"):
        metadata["authModes"] = str(prom["authModes"])
    trigger: Obj = {"metadata": metadata, "name": "wva-desired-replicas", "type": "prometheus"}
    if prom.get("triggerAuthName"):
        trigger["authenticationRef"] = {
            "kind": str(prom.get("triggerAuthKind") or ""),
            "name": str(prom["triggerAuthName"]),
        }
    return trigger
