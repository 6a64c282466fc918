"""The ``networking.k8s.io/v1`` Ingress of Standard mode without Gateway API (``kube_ingress_reconciler.go``).

Kept faithful to KServe, oddities included: annotations are the isvc's unfiltered, there are no labels, every rule
is ``/`` Prefix to port 80, and with a transformer the explainer rule uses the *transformer's* host while the
transformer's host routes to the *predictor*. There is no ``:explain`` routing, timeout or additional domain here.
"""

from __future__ import annotations

from typing import Any

from ... import constants as C
from ...inputs.config import KServeConfig
from ...plan.routes import RouteInput, object_meta, route_host


def kube_ingress(route: RouteInput, config: KServeConfig) -> dict:
    predictor = route.predictor.service_name
    transformer, explainer = route.transformer, route.explainer
    top_host = route_host(route, route.name, config)
    rules: list[dict] = []
    if transformer is not None:
        if explainer is not None:
            rules.append(_rule(route_host(route, transformer.service_name, config), explainer.service_name))
        rules.append(_rule(top_host, transformer.service_name))
        rules.append(_rule(route_host(route, transformer.service_name, config), predictor))
    elif explainer is not None:
        rules.append(_rule(top_host, predictor))
        rules.append(_rule(route_host(route, explainer.service_name, config), explainer.service_name))
    else:
        rules.append(_rule(top_host, predictor))
    rules.append(_rule(route_host(route, predictor, config), predictor))
    spec: dict[str, Any] = {}
    if config.ingress.ingress_class_name is not None:
        spec["ingressClassName"] = config.ingress.ingress_class_name
    spec["rules"] = rules
    return {
        "apiVersion": C.INGRESS_API_VERSION,
        "kind": C.KIND_INGRESS,
        "metadata": object_meta(route.name, route.namespace, annotations=route.annotations),
        "spec": spec,
    }


def _rule(host: str, service: str) -> dict:
    return {
        "host": host,
        "http": {
            "paths": [
                {
                    "path": "/",
                    "pathType": "Prefix",
                    "backend": {"service": {"name": service, "port": {"number": C.SERVICE_PORT}}},
                }
            ]
        },
    }
