"""Standard-mode routing (HTTPRoutes or a Kubernetes Ingress) and the URLs KServe reports in status.

Sources: ``reconcilers/ingress/httproute_reconciler.go``, ``kube_ingress_reconciler.go`` and
``reconcilers/raw/raw_kube_reconciler.go`` (component URLs). The steady state is assumed: every component is Ready.
"""

from __future__ import annotations

from typing import Any

from ... import constants as C
from ...inputs.config import KServeConfig
from ...plan.domain import generate_domain_name, service_hostname
from ...plan.routes import RouteInput, is_grpc_port, route_host, standard_is_internal
from .httproute import http_routes
from .kube_ingress import kube_ingress


def standard_ingress(route: RouteInput, config: KServeConfig, *, ready_canaries: bool = False) -> list[dict]:
    """The HTTPRoutes (``enableGatewayApi``) or the Ingress KServe's Standard mode creates for ``route``.

    ``ready_canaries`` says whether the canaries in ``route.canaries`` are Ready (only a live daemon knows); KServe
    gives traffic only to Ready canaries, so offline they get no backend.
    """
    route.predictor  # noqa: B018 - a predictor is required; raises a located error otherwise
    if config.ingress.disable_ingress_creation or standard_is_internal(route, config) or route.stopped:
        return []
    if config.ingress.enable_gateway_api:
        return http_routes(route, config, ready_canaries=ready_canaries)
    return [kube_ingress(route, config)]


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
