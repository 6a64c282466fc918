"""The URLs KServe writes into an InferenceService's status, computed from its plan alone (no object rendered):
``status.url``, ``status.address`` and each component's URL, Standard mode (``reconcilers/raw/
raw_kube_reconciler.go``, ``reconcilers/ingress/``) and Knative mode (``reconcilers/ingress/ingress_reconciler.go``);
and :func:`route_input`, what the ingress builders read of a plan."""

from __future__ import annotations

from typing import Any

from .. import constants as C
from ..inputs.config import KServeConfig
from .domain import generate_domain_name, generate_path, service_hostname
from .isvc import Plan
from .ports import service_ports
from .routes import (
    RoutedComponent,
    RouteInput,
    component_host,
    external_host,
    is_grpc_port,
    route_host,
    standard_is_internal,
)


def standard_status(route: RouteInput, config: KServeConfig) -> dict:
    """``status.url``, ``status.address`` and ``status.components.<c>.url`` as Standard mode reports them.

    A stopped isvc gets no url/address where KServe returns before setting them (Kube Ingress always; HTTPRoutes
    unless ingress creation is off); component URLs are kept.
    """
    status: dict[str, Any] = {}
    skipped = config.ingress.disable_ingress_creation or standard_is_internal(route, config)
    stop_hides_urls = route.stopped and (not config.ingress.enable_gateway_api or not skipped)
    if not stop_hides_urls:
        host = route_host(route, route.name, config)
        status["url"] = f"{config.ingress.url_scheme}://{host}"
        status["address"] = {"url": "http://" + _address_host(route, config)}
    components: dict[str, Any] = {}
    for name in C.COMPONENTS:
        comp = route.components.get(name)
        if comp is None:
            continue
        labels = route.labels if comp.labels is None else comp.labels
        annotations = route.annotations if comp.annotations is None else comp.annotations
        # Component URLs are always http, whatever urlScheme says.
        host = generate_domain_name(comp.service_name, route.namespace, config.ingress, labels, annotations)
        components[name] = {"url": f"http://{host}"}
    status["components"] = components
    return status


def _address_host(route: RouteInput, config: KServeConfig) -> str:
    entry = route.entry
    host = service_hostname(entry.service_name, route.namespace)
    if config.service.service_cluster_ip_none:
        # A headless Service has no port mapping: callers must reach the container port itself.
        host += ":" + (_http_target_port(entry.service_ports) or str(C.DEFAULT_HTTP_PORT))
    return host


def _http_target_port(ports: tuple[dict, ...]) -> str:
    for port in ports:
        if is_grpc_port(port):
            continue
        target = _int_value(port.get("targetPort"))
        if target > 0:
            return str(target)
    return ""


def _int_value(value: Any) -> int:
    """IntOrString.IntValue(): a number, or a string parsed as one (a port name counts as 0)."""
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return 0


def knative_status(route: RouteInput, config: KServeConfig) -> dict:
    """``status.url``, ``status.address`` and ``status.components`` as KServe's Knative mode reports them.

    Component URLs are Knative's route URLs: the cluster-local host for a cluster-local isvc, else (assumed)
    ``http://`` + ``generate_domain_name(<service>)``. A stopped isvc gets no url/address.
    """
    ingress = config.ingress
    status: dict[str, Any] = {}
    if not route.stopped:
        if ingress.path_template:
            path = generate_path(route.name, route.namespace, ingress)
            url = f"{ingress.url_scheme}://{ingress.ingress_domain}{path}"
        elif ingress.disable_istio_virtual_host:
            url = f"{ingress.url_scheme}://{component_host(route, config, route.entry)}"
        elif route.labels.get(C.LABEL_KNATIVE_VISIBILITY) == C.VISIBILITY_CLUSTER_LOCAL:
            url = f"{ingress.url_scheme}://{service_hostname(route.name, route.namespace)}"
        else:
            url = f"{ingress.url_scheme}://{external_host(route, config)}"
        address_name = route.entry.service_name if ingress.disable_istio_virtual_host else route.name
        status["url"] = url
        status["address"] = {"url": "http://" + service_hostname(address_name, route.namespace)}
    components: dict[str, Any] = {}
    for name in C.COMPONENTS:
        comp = route.components.get(name)
        if comp is None:
            continue
        components[name] = {
            "url": "http://" + component_host(route, config, comp),
            "address": {"url": "http://" + service_hostname(comp.service_name, route.namespace)},
        }
    status["components"] = components
    return status


def route_input(plan: Plan) -> RouteInput:
    """What the ingress builders and status read from a plan."""
    routed = {c.kind: RoutedComponent(c.kind, c.name, c.spec.timeout, tuple(service_ports(c))) for c in plan.components}
    meta = plan.isvc.metadata
    canaries: tuple[tuple[str, int], ...] = ()
    if plan.canaries:
        from .canary import route_canaries

        canaries = route_canaries(plan.canaries)
    return RouteInput(meta.name, meta.namespace, dict(meta.labels), dict(meta.annotations), routed, canaries)


def plan_status(plan: Plan, config: KServeConfig) -> dict:
    """``status.url``, ``status.address`` and component URLs as KServe would report them for this plan; with
    kserve-compile's scale to zero (``plan.scale_to_zero``), the address through the interceptor and a
    ``scaleToZero`` entry (which the daemon does not write: it is not KServe's)."""
    route = route_input(plan)
    status = (knative_status if plan.mode == C.MODE_KNATIVE else standard_status)(route, config)
    if plan.scale_to_zero is not None and not plan.stopped:
        from .scale_to_zero import with_scale_to_zero

        status = with_scale_to_zero(status, plan.scale_to_zero, route.entry.component)
    return status


def isvc_address(plan: Plan, config: KServeConfig) -> str:
    return str((plan_status(plan, config).get("address") or {}).get("url", ""))
