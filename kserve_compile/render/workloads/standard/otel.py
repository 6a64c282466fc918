"""The OpenTelemetryCollector for OpenTelemetry pod-metric autoscaling (``reconcilers/otel``), any autoscaler class."""

from __future__ import annotations

from typing import Any

from .... import constants as C
from ....inputs.config import KServeConfig
from ....kube.quantity import canonical_quantity
from ....plan.components import Component
from ...skeletons import skeleton

OTEL_BACKEND = "opentelemetry"
DEFAULT_METRICS_PORT = "8080"


def otel_metric_names(component: Component) -> list[str]:
    names: list[str] = []
    for metric in (component.spec.auto_scaling.metrics or []) if component.spec.auto_scaling else []:
        if (
            metric.type == "PodMetric"
            and metric.podmetric is not None
            and metric.podmetric.metric.backend == OTEL_BACKEND
        ):
            names += metric.podmetric.metric.metric_names or []
    return names


def otel_collector(component: Component, config: KServeConfig) -> list[dict[str, Any]]:
    """``[]`` unless some PodMetric uses the OpenTelemetry backend with metric names."""
    names = otel_metric_names(component)
    if not names:
        return []
    otel = config.opentelemetry_collector
    obj = skeleton("otel-collector")
    meta: dict[str, Any] = {"name": component.name, "namespace": component.namespace}
    if component.annotations:
        meta["annotations"] = dict(component.annotations)
    obj["metadata"] = meta
    spec = obj["spec"]
    cfg = spec["config"]
    scrape = cfg["receivers"]["prometheus"]["config"]["scrape_configs"][0]
    scrape["scrape_interval"] = otel.scrape_interval
    port = component.annotations.get(C.ANN_PROMETHEUS_PORT, DEFAULT_METRICS_PORT)
    scrape["static_configs"][0]["targets"] = [f"localhost:{port}"]
    cfg["exporters"]["otlp"]["endpoint"] = otel.metric_receiver_endpoint
    cfg["processors"]["filter/metrics"] = {"metrics": {"include": {"match_type": "strict", "metric_names": names}}}
    cfg["service"]["pipelines"]["metrics"]["processors"].append("filter/metrics")
    resources = _resources(otel.resource)
    if resources:
        spec["resources"] = resources
    return [obj]


def _resources(resource: Any) -> dict[str, dict[str, str]]:
    """``createResourceRequirements``: the configured values, written as Kubernetes writes quantities."""
    return {
        section: {k: canonical_quantity(v) for k, v in values.items()}
        for section, values in resource.requirements().items()
    }
