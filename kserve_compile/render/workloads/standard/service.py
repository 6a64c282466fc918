"""The component Service (``reconcilers/service/service_reconciler.go`` createDefaultSvc)."""

from __future__ import annotations

from typing import Any

from .... import constants as C
from ....inputs.config import KServeConfig
from ....plan.components import Component
from ....plan.ports import service_ports


def service(component: Component, config: KServeConfig) -> dict[str, Any]:
    labels = {**component.labels, C.LABEL_APP: component.app_label}
    meta: dict[str, Any] = {"name": component.name, "namespace": component.namespace, "labels": labels}
    if component.annotations:
        meta["annotations"] = dict(component.annotations)
    spec: dict[str, Any] = {"selector": {C.LABEL_APP: component.app_label}, "ports": service_ports(component)}
    if config.service.service_cluster_ip_none:
        spec["clusterIP"] = "None"
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}
