"""What replaces a component's HPA or ScaledObject when KEDA's HTTP add-on scales it (kserve-compile's opt-in,
``plan.scale_to_zero``): the ``HTTPScaledObject`` and the ``<component>-proxy`` ExternalName Service.

The HTTPScaledObject follows kedacore/http-add-on's API (``operator/apis/http/v1alpha1/httpscaledobject_types.go``,
v0.15.0): the add-on's operator makes a KEDA ScaledObject from it (so none is rendered here), and its interceptor
routes a request whose ``Host`` is one of ``hosts`` to ``scaleTargetRef.service``:``port``, holding it while the
Deployment scales up from zero. The proxy Service resolves to the interceptor (the add-on's own example,
``examples/xkcd/templates/externalservice.yaml``), for the Kubernetes Ingress and for in-cluster callers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .... import constants as C
from ....inputs.isvc_compile import Interceptor
from ....plan.components import Component
from ....plan.scale_to_zero import ScaledComponent, ScaleToZero


def http_scaled_object(
    component: Component, scaled: ScaledComponent, plan: ScaleToZero, ingress_hosts: Sequence[str]
) -> dict[str, Any]:
    """``ingress_hosts``: the external hosts the isvc's Ingress sends to this component through the interceptor."""
    hosts = list(dict.fromkeys([*ingress_hosts, *scaled.proxy_hosts]))
    spec: dict[str, Any] = {
        "hosts": hosts,
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": scaled.name,
            "service": scaled.name,
            "port": scaled.port,
        },
        "replicas": {"min": scaled.min_replicas, "max": scaled.max_replicas},
        "scalingMetric": {scaled.metric: {"targetValue": scaled.target}},
    }
    if plan.scaledown_period is not None:
        spec["scaledownPeriod"] = plan.scaledown_period
    return {
        "apiVersion": C.HTTP_SCALED_OBJECT_API_VERSION,
        "kind": C.KIND_HTTP_SCALED_OBJECT,
        "metadata": _meta(component, scaled.name, {**component.labels, C.LABEL_APP: component.app_label}),
        "spec": spec,
    }


def proxy_service(component: Component, scaled: ScaledComponent, interceptor: Interceptor) -> dict[str, Any]:
    """``<component>-proxy``: an ExternalName Service resolving to the interceptor, on the interceptor's port (an
    ExternalName Service maps no port: callers dial the interceptor's)."""
    return {
        "apiVersion": "v1",
        "kind": C.KIND_SERVICE,
        "metadata": _meta(component, scaled.proxy, dict(component.labels)),
        "spec": {
            "type": "ExternalName",
            "externalName": interceptor.host,
            "ports": [{"name": "http", "port": interceptor.port, "protocol": "TCP"}],
        },
    }


def _meta(component: Component, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """The component's annotations, as KServe puts them on the autoscaler this replaces (labels: the HPA's carry the
    Deployment's, ``app`` included; the proxy Service selects nothing and has the component's)."""
    meta: dict[str, Any] = {"name": name, "namespace": component.namespace, "labels": labels}
    if component.annotations:
        meta["annotations"] = dict(component.annotations)
    return meta
