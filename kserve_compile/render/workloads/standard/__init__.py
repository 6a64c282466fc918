"""Standard mode (formerly RawDeployment): Service, OpenTelemetryCollector, Deployment and autoscaler per component.

Mirrors ``reconcilers/raw/raw_kube_reconciler.go``, which creates them in this order.
"""

from __future__ import annotations

from typing import Any

from ....inputs.config import KServeConfig
from ....plan.components import Component
from .autoscaler import autoscaler
from .deployment import deployment
from .otel import otel_collector
from .service import service


def standard_workload(
    component: Component, template: dict[str, Any], config: KServeConfig, *, otel: bool = True
) -> list[dict[str, Any]]:
    """The objects of one Standard-mode component; ``template`` is its finished pod template. A canary's raw
    reconciler makes no OpenTelemetryCollector (``otel=False``)."""
    dep = deployment(component, template, config)
    collector = otel_collector(component, config) if otel else []
    return [
        service(component, config),
        *collector,
        dep,
        *autoscaler(component, dict(dep["metadata"]["labels"]), config),
    ]


__all__ = ["autoscaler", "deployment", "otel", "service", "standard_workload"]
