"""Standard mode (formerly RawDeployment): Service, OpenTelemetryCollector, Deployment and autoscaler per component.

Mirrors ``reconcilers/raw/raw_kube_reconciler.go``, which creates them in this order. Beyond KServe, opt-in:
``scale_to_zero`` (the HTTPScaledObject and proxy Service of a component KEDA's HTTP add-on scales).
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
    component: Component, template: dict[str, Any], config: KServeConfig, *, otel: bool = True, autoscale: bool = True
) -> list[dict[str, Any]]:
    """The objects of one Standard-mode component; ``template`` is its finished pod template. A canary's raw
    reconciler makes no OpenTelemetryCollector (``otel=False``); a component KEDA's HTTP add-on scales (kserve-compile's
    opt-in, ``scale_to_zero``) has no HPA or ScaledObject (``autoscale=False``)."""
    dep = deployment(component, template, config)
    collector = otel_collector(component, config) if otel else []
    scaler = autoscaler(component, dict(dep["metadata"]["labels"]), config) if autoscale else []
    return [service(component, config), *collector, dep, *scaler]


__all__ = ["autoscaler", "deployment", "otel", "scale_to_zero", "service", "standard_workload"]
