"""HPA (``reconcilers/hpa``) or KEDA ScaledObject (``reconcilers/keda``), chosen by ``serving.kserve.io/autoscalerClass``."""

from __future__ import annotations

from typing import Any

from .... import constants as C
from ....errors import InputError
from ....inputs.config import KServeConfig
from ....inputs.serving_types import ComponentExtension, MetricQuantityTarget
from ....kube.quantity import canonical_quantity
from ....plan.components import Component


def autoscaler(component: Component, labels: dict[str, str], config: KServeConfig) -> list[dict[str, Any]]:
    cls = component.annotations.get(C.ANN_AUTOSCALER_CLASS, C.AUTOSCALER_HPA)
    builder = _BUILDERS.get(cls)
    if builder is None and cls not in (C.AUTOSCALER_EXTERNAL, C.AUTOSCALER_NONE):
        raise InputError("unknown autoscaler class type", f"metadata.annotations[{C.ANN_AUTOSCALER_CLASS}]")
    return [builder(component, labels, config)] if builder else []


def _meta(component: Component, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": component.name, "namespace": component.namespace, "labels": labels}
    if component.annotations:
        meta["annotations"] = dict(component.annotations)
    return meta


def hpa(component: Component, labels: dict[str, str], config: KServeConfig) -> dict[str, Any]:
    ext = component.spec
    min_replicas = ext.min_replicas if ext.min_replicas is not None and ext.min_replicas >= 1 else 1
    max_replicas = max(ext.max_replicas, min_replicas)
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": component.name},
        "minReplicas": min_replicas,
        "maxReplicas": max_replicas,
        "behavior": {},
    }
    metrics = hpa_metrics(ext, component)
    if metrics:
        spec["metrics"] = metrics
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _meta(component, labels),
        "spec": spec,
    }


def _resource_metric(name: str, target: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": name, "target": target}}


def hpa_metrics(ext: ComponentExtension, component: Component) -> list[dict[str, Any]]:
    if ext.auto_scaling is not None:
        out = []
        for metric in ext.auto_scaling.metrics or []:
            resource = metric.resource
            if resource is None:
                continue
            target = resource.target
            if resource.name == "cpu":
                util = (
                    target.average_utilization if target.average_utilization is not None else C.DEFAULT_CPU_UTILIZATION
                )
                out.append(_resource_metric("cpu", {"type": "Utilization", "averageUtilization": util}))
            elif resource.name == "memory":
                memory_target: dict[str, Any] = {}
                if target.type == "Utilization":
                    memory_target = {"type": "Utilization"}
                    if target.average_utilization is not None:
                        memory_target["averageUtilization"] = target.average_utilization
                elif target.type == "AverageValue":
                    memory_target = {"type": "AverageValue"}
                    if target.average_value is not None:
                        # the HPA carries a resource.Quantity, which serializes canonically ("1024Mi" → "1Gi")
                        try:
                            memory_target["averageValue"] = canonical_quantity(target.average_value)
                        except ValueError as exc:
                            raise InputError(str(exc), f"spec.{component.kind}.autoScaling.metrics") from None
                out.append(_resource_metric("memory", memory_target))
        return out
    scale_metric = ext.scale_metric or "cpu"
    if scale_metric == "cpu":
        util = ext.scale_target if ext.scale_target is not None else C.DEFAULT_CPU_UTILIZATION
        return [_resource_metric("cpu", {"type": "Utilization", "averageUtilization": util})]
    if scale_metric == "memory" and ext.scale_target is not None:
        return [_resource_metric("memory", {"type": "Utilization", "averageUtilization": ext.scale_target})]
    return []


def _quantity_text(value: str | int | None) -> str:
    return "0" if value is None else str(value)


def keda_triggers(component: Component, config: KServeConfig) -> list[dict[str, Any]]:
    ext = component.spec
    triggers: list[dict[str, Any]] = []
    for metric in (ext.auto_scaling.metrics or []) if ext.auto_scaling else []:
        if metric.type == "Resource" and metric.resource is not None:
            triggers.append(_resource_trigger(metric.resource.name, metric.resource.target))
        elif metric.type == "External" and metric.external is not None:
            ext_metric = metric.external.metric
            trigger: dict[str, Any] = {
                "type": ext_metric.backend,
                "metadata": {
                    "serverAddress": ext_metric.server_address,
                    "query": ext_metric.query,
                    "threshold": _quantity_text(metric.external.target.value),
                },
            }
            if ext_metric.backend == "prometheus" and ext_metric.namespace:
                trigger["metadata"]["namespace"] = ext_metric.namespace
            auth = metric.external.authentication_ref
            if auth is not None:
                if auth.auth_modes:
                    trigger["metadata"]["authModes"] = auth.auth_modes
                if auth.authentication_ref.name:
                    trigger["authenticationRef"] = {"name": auth.authentication_ref.name}
            triggers.append(trigger)
        elif metric.type == "PodMetric" and metric.podmetric is not None:
            pod_metric = metric.podmetric.metric
            trigger = {"metadata": {}}
            if pod_metric.backend == "opentelemetry":
                scaler = pod_metric.server_address or config.opentelemetry_collector.metric_scaler_endpoint
                query = f'sum({pod_metric.query}{{namespace="{component.namespace}", deployment="{component.name}"}})'
                trigger = {
                    "type": "external",
                    "metadata": {
                        "metricQuery": query,
                        "targetValue": _quantity_text(metric.podmetric.target.value),
                        "scalerAddress": scaler,
                    },
                }
                if pod_metric.operation_over_time:
                    trigger["metadata"]["operationOverTime"] = pod_metric.operation_over_time
            triggers.append(trigger)
    return triggers


def _resource_trigger(name: str, target: MetricQuantityTarget) -> dict[str, Any]:
    value = "0"
    if target.type == "Utilization":
        util = target.average_utilization
        if name == "cpu" and util is None:
            util = C.DEFAULT_CPU_UTILIZATION
        if util is not None:
            value = str(util)
    elif target.type == "AverageValue":
        value = _quantity_text(target.average_value)
    elif target.type == "Value":
        value = _quantity_text(target.value)
    trigger: dict[str, Any] = {"type": name, "metadata": {"value": value}}
    if target.type:
        trigger["metricType"] = target.type
    return trigger


def _window(value: Any) -> int | None:
    return value.get("stabilizationWindowSeconds") if isinstance(value, dict) else None


def keda(component: Component, labels: dict[str, str], config: KServeConfig) -> dict[str, Any]:
    ext = component.spec
    behavior = (ext.auto_scaling.behavior if ext.auto_scaling else None) or {}
    down = _window(behavior.get("scaleDown"))
    up = _window(behavior.get("scaleUp"))
    defaults = config.autoscaler
    if down is None and defaults.scale_down_stabilization_window_seconds.lstrip("-").isdigit():
        down = int(defaults.scale_down_stabilization_window_seconds)
    if up is None and defaults.scale_up_stabilization_window_seconds.lstrip("-").isdigit():
        up = int(defaults.scale_up_stabilization_window_seconds)
    min_replicas = ext.min_replicas if ext.min_replicas is not None else 1
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": component.name},
        "minReplicaCount": min_replicas,
        "maxReplicaCount": max(ext.max_replicas, min_replicas),
        "triggers": keda_triggers(component, config),
    }
    if down is not None or up is not None:
        hpa_behavior: dict[str, Any] = {}
        if down is not None:
            hpa_behavior["scaleDown"] = {"stabilizationWindowSeconds": down}
        if up is not None:
            hpa_behavior["scaleUp"] = {"stabilizationWindowSeconds": up}
        spec["advanced"] = {"horizontalPodAutoscalerConfig": {"behavior": hpa_behavior}}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": _meta(component, labels),
        "spec": spec,
    }


_BUILDERS = {C.AUTOSCALER_HPA: hpa, C.AUTOSCALER_KEDA: keda}
