"""The isvc's ingress routed through KEDA's HTTP add-on's interceptor (kserve-compile's opt-in, ``plan.scale_to_zero``).

KServe's Ingress or HTTPRoutes are rendered first, unchanged; then each backend that is a component the add-on scales
is pointed at the interceptor, which routes by ``Host``:

- Ingress (backends stay in the isvc's namespace): the backend becomes the component's ``<component>-proxy``
  ExternalName Service on the interceptor's port, and the request keeps the external host, so that host goes into the
  component's HTTPScaledObject (a host's first rule decides, as KServe lists them);
- HTTPRoute: the backend becomes the interceptor Service itself (across namespaces, allowed by a ReferenceGrant in
  the interceptor's namespace, as the add-on's own example does) and a ``URLRewrite`` filter sets the ``Host`` to the
  component's proxy host — so KServe's path rules (``:explain``, ``pathTemplate``) keep choosing the component, and
  the interceptor needs no path rules of its own. ``URLRewrite`` is Gateway API's Extended support.

gRPC rules (a Service with both an HTTP and a gRPC port) keep their backend: the interceptor proxies HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import constants as C
from ...plan.scale_to_zero import ORIGIN, ScaledComponent, ScaleToZero
from ...provenance import is_tracing, stamp


@dataclass
class Rerouted:
    """What rerouting found: the external hosts each scaled Service got (Ingress), and whether an HTTPRoute now
    crosses into the interceptor's namespace."""

    hosts: dict[str, list[str]] = field(default_factory=dict)
    cross_namespace: bool = False


def through_interceptor(routed: Sequence[dict[str, Any]], plan: ScaleToZero, namespace: str) -> Rerouted:
    """Point, in place, the backends of ``routed`` (KServe's Ingress or HTTPRoutes) that are scaled components at the
    interceptor."""
    by_service = {c.name: c for c in plan.components.values()}
    found = Rerouted()
    for obj in routed:
        if obj.get("kind") == C.KIND_INGRESS:
            _ingress(obj, by_service, plan, found)
        elif obj.get("kind") == C.KIND_HTTPROUTE:
            _http_route(obj, by_service, plan, namespace, found)
    return found


def _ingress(
    ingress: dict[str, Any], by_service: Mapping[str, ScaledComponent], plan: ScaleToZero, found: Rerouted
) -> None:
    first_rule: dict[str, str] = {}  # host → the Service its first rule sends it to
    for rule in ingress["spec"].get("rules") or []:
        for path in rule.get("http", {}).get("paths") or []:
            backend = path["backend"]["service"]
            first_rule.setdefault(rule["host"], backend["name"])
            scaled = by_service.get(backend["name"])
            if scaled is not None:
                path["backend"]["service"] = _claimed({"name": scaled.proxy, "port": {"number": plan.interceptor.port}})
    for host, service in first_rule.items():
        if service in by_service:
            found.hosts.setdefault(service, []).append(host)


def _http_route(
    route: dict[str, Any], by_service: Mapping[str, ScaledComponent], plan: ScaleToZero, namespace: str, found: Rerouted
) -> None:
    interceptor = plan.interceptor
    for rule in route["spec"].get("rules") or []:
        refs = rule.get("backendRefs") or []
        scaled = [_scaled_ref(ref, by_service, namespace) for ref in refs]
        if len(refs) != 1 or scaled[0] is None:  # canaries are refused when planned: one backend per rule
            continue
        ref = {"kind": C.KIND_SERVICE, "name": interceptor.name, "namespace": interceptor.namespace}
        rule["backendRefs"] = [_claimed({**ref, "port": interceptor.port})]
        rewrite = {"type": "URLRewrite", "urlRewrite": {"hostname": scaled[0].proxy_hosts[0]}}
        rule.setdefault("filters", []).append(_claimed(rewrite))
        found.cross_namespace = found.cross_namespace or interceptor.namespace != namespace


def _claimed(value: dict[str, Any]) -> dict[str, Any]:
    """What rerouting writes names this feature as its origin in ``explain`` (KServe's values keep theirs)."""
    return stamp(value, ORIGIN) if is_tracing() else value


def _scaled_ref(
    ref: Mapping[str, Any], by_service: Mapping[str, ScaledComponent], namespace: str
) -> ScaledComponent | None:
    scaled = by_service.get(str(ref.get("name")))
    if (
        scaled is None
        or ref.get("kind", C.KIND_SERVICE) != C.KIND_SERVICE
        or ref.get("namespace", namespace) != namespace
    ):
        return None
    return None if ref.get("port") in scaled.grpc_ports else scaled


def reference_grant(isvc_name: str, namespace: str, plan: ScaleToZero) -> dict[str, Any]:
    """Lets the isvc's HTTPRoutes (in ``namespace``) send to the interceptor Service: one per isvc, named
    ``<isvc>.<namespace>`` in the interceptor's namespace."""
    interceptor = plan.interceptor
    return {
        "apiVersion": C.REFERENCE_GRANT_API_VERSION,
        "kind": C.KIND_REFERENCE_GRANT,
        "metadata": {
            "name": f"{isvc_name}.{namespace}",
            "namespace": interceptor.namespace,
            "labels": {C.LABEL_ISVC: isvc_name},
        },
        "spec": {
            "from": [{"group": C.GATEWAY_API_GROUP, "kind": C.KIND_HTTPROUTE, "namespace": namespace}],
            "to": [{"group": "", "kind": C.KIND_SERVICE, "name": interceptor.name}],
        },
    }
