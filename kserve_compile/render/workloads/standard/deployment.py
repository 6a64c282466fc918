"""The component Deployment (``reconcilers/deployment/deployment_reconciler.go`` createRawDefaultDeployment)."""

from __future__ import annotations

from typing import Any

from .... import constants as C
from ....datacopy import clone
from ....inputs.config import KServeConfig
from ....plan.components import Component
from ...skeletons import shared_skeleton, skeleton

PROBED_CONTAINERS = (C.CONTAINER_KSERVE, C.CONTAINER_TRANSFORMER)


def with_pod_defaults(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """``setDefaultPodSpec``: pod and container defaults, and a TCP readiness probe for the serving containers."""
    defaults = shared_skeleton("pod-defaults")
    spec = clone(pod_spec)
    for key, value in defaults["pod"].items():
        if spec.get(key) in (None, ""):
            spec[key] = clone(value)
    for container in spec.get("containers") or []:
        for key, value in defaults["container"].items():
            if not container.get(key):
                container[key] = clone(value)
        if container.get("name") in PROBED_CONTAINERS and container.get("readinessProbe") is None:
            probe = clone(defaults["readinessProbe"])
            ports = container.get("ports") or []
            if ports:
                probe["tcpSocket"]["port"] = ports[0].get("containerPort", 0)
            container["readinessProbe"] = probe
    return spec


def deployment(component: Component, pod_template: dict[str, Any], config: KServeConfig) -> dict[str, Any]:
    """``pod_template`` is the finished ``{metadata, spec}`` (labels include ``app``; webhook mutations inlined)."""
    meta = {
        "name": component.name,
        "namespace": component.namespace,
        "labels": dict(pod_template["metadata"]["labels"]),
        "annotations": dict(component.annotations),
    }
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {C.LABEL_APP: component.app_label}},
        "template": pod_template,
    }
    ext = component.spec
    if ext.deployment_strategy is not None:
        spec["strategy"] = clone(ext.deployment_strategy)
    else:
        spec.update(skeleton("deployment"))
        _apply_configmap_rollout(spec, config)
    if ext.min_replicas is not None and component.annotations.get(C.ANN_AUTOSCALER_CLASS) == C.AUTOSCALER_NONE:
        spec["replicas"] = ext.min_replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _compact(meta), "spec": spec}


def _apply_configmap_rollout(spec: dict[str, Any], config: KServeConfig) -> None:
    """``applyRolloutStrategyFromConfigmap``: only when the ConfigMap's default mode is Standard."""
    deploy = config.deploy
    if deploy.default_deployment_mode != C.MODE_STANDARD or deploy.deployment_rollout_strategy is None:
        return
    rollout = deploy.deployment_rollout_strategy.default_rollout
    if rollout is None:
        return
    strategy = spec["strategy"]
    strategy["type"] = "RollingUpdate"
    rolling = strategy.setdefault("rollingUpdate", {})
    if rollout.max_surge:
        rolling["maxSurge"] = rollout.max_surge
    if rollout.max_unavailable:
        rolling["maxUnavailable"] = rollout.max_unavailable


def pod_template(component: Component) -> dict[str, Any]:
    """The template KServe puts in the Deployment, before the pod webhook: component meta + ``app`` label."""
    labels = {**component.labels, C.LABEL_APP: component.app_label}
    meta = {
        "name": component.name,
        "namespace": component.namespace,
        "labels": labels,
        "annotations": dict(component.annotations),
    }
    return {"metadata": _compact(meta), "spec": with_pod_defaults(component.pod_spec)}


def _compact(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if v not in (None, "", {})}
